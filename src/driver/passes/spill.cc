// spill:belady|greedy|cosma|cosma-fixed|cosma-dc: solves the spill problem in the budget. belady
// and greedy run a linear allocator in the schedule pass's order; cosma is COSMA's joint ILP
// (order, addresses and transfers together, warm-started from the model and min-peak orders);
// cosma-fixed the ILP for the schedule's order; cosma-dc divide and conquer. The solution is
// checked (spill::CheckSolution) before anything uses it.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "spill/cosma.h"
#include "spill/divide_conquer.h"

namespace sramplan::driver::passes {

MakeResult MakeSpill(std::string_view arg) {
  return ChoicePass("spill", arg, {"belady", "greedy", "cosma", "cosma-fixed", "cosma-dc"},
                    [](PlanningContext& ctx, const std::string& a) -> Status {
                      if (!ctx.budget)
                        return InternalError("pass 'spill' needs the spill-problem pass first");
                      BudgetState& b = *ctx.budget;
                      const std::vector<int> order = OrderIndices(ctx.order);
                      spill::SpillSolution& sol = b.solution;
                      if (a == "belady") {
                        SP_ASSIGN_OR_RETURN(sol, spill::SolveBelady(b.problem, order));
                      } else if (a == "greedy") {
                        SP_ASSIGN_OR_RETURN(sol, spill::SolveGreedy(b.problem, order));
                      } else if (a == "cosma" || a == "cosma-fixed") {
                        spill::CosmaOptions co;
                        if (a == "cosma-fixed") co.fixed_order = order;
                        ComputeMpmf(ctx);
                        co.warm_orders = {b.model_order, b.mpmf_order};
                        if (a == "cosma-fixed") co.warm_orders = {order};
                        co.time_limit_s = ctx.options.time_limit_s;
                        SP_ASSIGN_OR_RETURN(sol, spill::SolveCosma(b.problem, co));
                      } else {
                        spill::DcOptions dc;
                        dc.order = order;
                        dc.time_limit_s = ctx.options.time_limit_s;
                        SP_ASSIGN_OR_RETURN(sol, spill::SolveDivideAndConquer(b.problem, dc));
                      }
                      Status st = spill::CheckSolution(b.problem, sol);
                      if (!st.ok())
                        return InternalError("strategy '" + ctx.spec.name +
                                             "' returned an invalid solution: " + st.message());
                      if (ctx.options.report)
                        *ctx.options.report = SolverReport{sol.method, sol.proved_optimal, sol.lower_bound_bytes,
                                                           sol.seconds, sol.detail, b.budget, b.m_min, b.m_mpmf,
                                                           sol.all_orders_lower_bound_bytes};
                      // The plan runs the solution's order; the joint ILP chose it itself.
                      ctx.order.clear();
                      for (int o : sol.order) ctx.order.push_back(ir::OpId(o));
                      if (a == "cosma") {
                        ctx.options.schedule = "cosma";
                        ctx.schedule_note.clear();
                      }
                      // cosma-dc's reorder rounds may return another order than the schedule's.
                      if (a == "cosma-dc" && sol.order != order) {
                        ctx.options.schedule = "cosma-dc";
                        ctx.schedule_note.clear();
                      }
                      return Status::Ok();
                    });
}

}  // namespace sramplan::driver::passes
