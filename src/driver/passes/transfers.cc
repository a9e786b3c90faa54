// transfers: the spill solution's moves as plan transfers (load, store, spill, reload between the
// arena and DRAM), their off-chip and non-compulsory bytes and energy (DRAM read + arena write in,
// arena read + DRAM write out), and the budget's notes.
#include "cost/energy.h"
#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {

MakeResult MakeTransfers(std::string_view arg) {
  return NoArgPass("transfers", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.budget || !ctx.assembled)
      return InternalError("pass 'transfers' needs the assemble-spill pass first");
    const BudgetState& b = *ctx.budget;
    const target::MemoryLevel& arena = ctx.arena();
    const target::MemoryLevel& dram = ctx.target.levels[b.dram_level];
    plan::Plan& p = ctx.plan;
    plan::Metrics& m = p.metrics;
    cost::Ledger ledger = LedgerOf(ctx.hw, m);
    for (const spill::Move& mv : b.solution.moves) {
      const int64_t bytes = ctx.graph.tensor(b.owner[mv.tensor]).Bytes();
      const bool in = mv.kind == spill::MoveKind::kLoad || mv.kind == spill::MoveKind::kReload;
      p.transfers.push_back({mv.step, spill::MoveKindName(mv.kind), b.problem.tensors[mv.tensor].name, bytes,
                             in ? dram.name : arena.name, in ? arena.name : dram.name});
      const cost::TransferKind kind = mv.kind == spill::MoveKind::kLoad     ? cost::TransferKind::kLoad
                                      : mv.kind == spill::MoveKind::kReload ? cost::TransferKind::kReload
                                      : mv.kind == spill::MoveKind::kStore  ? cost::TransferKind::kStore
                                                                            : cost::TransferKind::kSpill;
      cost::AddTransfer(ctx.hw, ctx.target.arena_level, b.dram_level, kind, bytes, &ledger);
    }
    StoreLedger(ledger, &m);
    m.budget_bytes = b.budget;
    p.notes.push_back(
        "budget " + b.budget_name + " = " + std::to_string(b.budget) + " B of " +
        std::to_string(arena.capacity) + " B in '" + arena.name + "' (M_min " +
        std::to_string(b.m_min) + " B" +
        (b.m_mpmf >= 0 ? ", M_mpmf " + std::to_string(b.m_mpmf) + " B" : std::string()) + "); " +
        (ctx.options.with_weights ? "activations and weights" : "activations only"));
    const spill::SpillSolution& sol = b.solution;
    p.notes.push_back(sol.method + ": " +
                      std::to_string(m.noncompulsory_read_bytes + m.noncompulsory_write_bytes) +
                      " non-compulsory off-chip bytes (" +
                      std::to_string(m.noncompulsory_write_bytes) + " spilled, " +
                      std::to_string(m.noncompulsory_read_bytes) + " reloaded)" +
                      (sol.proved_optimal ? ", proved optimal" : "") +
                      (sol.detail.empty() ? std::string() : "; " + sol.detail));
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
