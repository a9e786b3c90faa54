// assemble-spill: the plan of a spill solution: the skeleton in the solution's order, an on-chip
// buffer per residency, and DRAM buffers for inputs and (competing) weights from the start and for
// activations from their spill or store on.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {

MakeResult MakeAssembleSpill(std::string_view arg) {
  return NoArgPass("assemble-spill", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.budget)
      return InternalError("pass 'assemble-spill' needs the spill-problem and spill passes first");
    const BudgetState& b = *ctx.budget;
    const spill::SpillProblem& prob = b.problem;
    const spill::SpillSolution& sol = b.solution;
    const std::string& arena = ctx.arena().name;
    const std::string& dram = ctx.target.levels[b.dram_level].name;
    plan::Plan& p = ctx.plan;
    p = PlanSkeleton(ctx.graph, ctx.target, ctx.order, ctx.spec.name, ctx.options);
    if (!ctx.schedule_note.empty()) p.notes.push_back(ctx.schedule_note);
    const int last = std::max(0, static_cast<int>(ctx.order.size()) - 1);
    for (const spill::Residency& r : sol.residencies)
      p.buffers.push_back({prob.tensors[r.tensor].name,
                           arena,
                           r.offset,
                           prob.tensors[r.tensor].bytes,
                           r.first_step,
                           r.last_step,
                           {}});
    std::vector<int> dram_from(prob.tensors.size(), -1);
    for (size_t i = 0; i < prob.tensors.size(); ++i)
      if (prob.tensors[i].graph_input || prob.tensors[i].weight) dram_from[i] = 0;
    for (const spill::Move& mv : sol.moves)
      if ((mv.kind == spill::MoveKind::kSpill || mv.kind == spill::MoveKind::kStore) &&
          dram_from[mv.tensor] < 0)
        dram_from[mv.tensor] = mv.step;
    int64_t dcursor = 0;
    for (size_t i = 0; i < prob.tensors.size(); ++i) {
      if (dram_from[i] < 0) continue;
      dcursor = AlignUp(dcursor, ctx.alignment());
      const int64_t bytes = ctx.graph.tensor(b.owner[i]).Bytes();
      p.buffers.push_back({prob.tensors[i].name, dram, dcursor, bytes, dram_from[i], last, {}});
      dcursor += bytes;
    }
    ctx.assembled = true;
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
