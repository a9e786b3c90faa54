// COSMA (Sec. III of the paper): optimal operator order, memory allocation and tensor replacement with
// an ILP solved by CBC.
//
// Two modes:
//   * fixed-schedule (Eq. 16-17): `fixed_order` is given. Per tensor, a binary per gap between its
//     consecutive accesses (production, uses) says whether it stays resident over the gap or is dropped
//     (paying a reload, plus one spill for a plain activation). This is exact for spill.h's timing model:
//     any valid solution shrinks to residencies that start and end at accesses without changing its
//     moves, and a spill can always be issued right after production. Solved in stages:
//       1. capacity model (bytes resident per step <= budget): its optimum is a lower bound; if a
//          first-fit placement of the chosen residencies succeeds, or else the exact placer of
//          placement/optimal.h (PlaceBestOf, up to min(10 s, 40% of what is left)) places them inside
//          the budget, that is the optimum;
//       2. otherwise the capacity model with 0.5%..45% room left for fragmentation, placed by first-fit
//          or the exact placer (up to 2 s), as a heuristic incumbent;
//       3. COSMA's address model (one address per residency, above/below binaries only for pieces that
//          can be resident in the same step = tensor-overlap analysis for a fixed order, big-M = budget,
//          the stage-1 bound as a row), warm-started from the incumbent, when it has <= 6000 variables.
//   * joint (Eq. 1-12): no fixed order. First the model order and `warm_orders` are placed as above
//     (a zero-traffic result ends the search). Then a time-indexed scheduling ILP (operator-at-step
//     variables inside ASAP/ALAP windows from DAG reachability, cumulative precedence, per tensor and
//     step resident/reload variables and one spill variable, liveness rows "produced and still needed
//     => resident or reloaded later", byte capacity per step) gives a lower bound valid for every order
//     and placement, and an order, which is placed with the fixed-schedule stages. proved_optimal when
//     the best placed solution meets that bound. Addresses are not in the joint ILP (they would only
//     weaken it); graphs with more than 20000 operator-step pairs skip it (no joint bound then).
//     Between the two, an order search (the only order optimisation on graphs that skip the joint ILP,
//     a warm start for it otherwise): randomised memory-pressure list schedules and an iterated local
//     search that moves one op or a block of up to 16 consecutive ops inside its dependency window,
//     scored by a capacity-only Belady simulation (a feasible point of the fixed-order capacity model,
//     so an upper bound on its optimum; under 20 us per order on a 678-op NAS graph); the 8 best distinct
//     orders are then solved exactly by the fixed-order path (the best simulated order gets half of that
//     time, the others share the rest) and the best placed solution is kept, counting each order's
//     address-aware baselines (Belady, greedy: always placed and valid) besides its exact solve. It
//     never returns more than the fixed-order result of any warm order it placed (the min-peak order
//     from the driver). The lower bound is the larger of the joint ILP's and LowerBoundAllOrders'
//     (spill_bound.h, computed first, with BoundTimeLimit of the time); every stage stops once the
//     winner meets it. A fixed-order bound holds for that order only, not over orders (the detail
//     gives it). Ops without outputs (views) are kept before every later reader of their inputs.
// Both modes also report all_orders_lower_bound_bytes (LowerBoundAllOrders; 0 when a warm start has no
// traffic).
// Warm starts: Belady and greedy replacement on every candidate order; the best one is CBC's first
// incumbent, and if it already has zero non-compulsory bytes it is returned without any ILP.
#pragma once

#include <vector>

#include "spill/spill.h"
#include "support/status.h"

namespace sramplan::spill {

struct CosmaOptions {
  std::vector<int> fixed_order;               // empty: joint mode; else COSMA's fixed-schedule mode
  std::vector<std::vector<int>> warm_orders;  // extra orders to build warm starts from (joint mode)
  double time_limit_s = 60;                   // wall clock for all stages: each CBC run and placement gets
                                              // only what is left, stages are skipped once it is spent,
                                              // and CBC is stopped at its next event after the deadline
                                              // (overrun: one cut pass or heuristic call). A solution cut
                                              // short says so in hit_time_limit and its detail.
  bool verbose = false;                       // CBC's log to stdout
  // Joint mode only. Order search: randomised memory-pressure list schedules and a local search over
  // the order (move one op inside its dependency window), scored by a capacity-only Belady simulation,
  // the best few orders then solved exactly by the fixed-order path. It is what searches orders on
  // graphs too large for the time-indexed ILP and a warm start for that ILP otherwise.
  bool order_search = true;
  int64_t order_search_evals = 0;             // cap on simulated orders (0: max(20000, 600 x ops))
  uint32_t seed = 1;                          // of the search's random choices (results are deterministic
                                              // unless the time limit cuts the search)
  bool joint_ilp = true;                      // false: never build the time-indexed ILP (no joint bound)
  // Joint mode on graphs too large for the time-indexed ILP: after the order search (which then ends at
  // 55% of the time limit), a large-neighbourhood search re-solves windows of the winner's order exactly
  // (divide_conquer.h's ReorderRound) with the rest fixed; every incumbent is checked.
  bool lns = true;
  // Compute LowerBoundAllOrders (reported, and the joint search's stop). Off in the solves divide and
  // conquer and the large-neighbourhood search run inside (parts, windows, re-placements), whose caller
  // has the bound already.
  bool all_orders_bound = true;
};

// Returns a solution that passes CheckSolution. method = "cosma" (joint) or "cosma-fixed".
// kOutOfMemory when an op's own inputs and outputs exceed the budget; kInvalidArgument for a
// malformed problem or an order that is not a topological permutation of the ops.
StatusOr<SpillSolution> SolveCosma(const SpillProblem& p, const CosmaOptions& o);

struct SpillBound;
// The share of a solver's time limit given to LowerBoundAllOrders (10%, within 0.2..5 s).
double BoundTimeLimit(double time_limit_s);
// Sets sol->all_orders_lower_bound_bytes (at most the solution's bytes) and appends the bound's detail.
void AttachAllOrdersBound(const SpillBound& bound, SpillSolution* sol);

// Checks the problem's structure (indices, one producer per activation, topological op list) and that
// every op fits the budget on its own (kOutOfMemory naming the op otherwise).
Status ValidateSpillProblem(const SpillProblem& p);
// kInvalidArgument unless `order` is a permutation of the ops that respects every dependency.
Status ValidateSpillOrder(const SpillProblem& p, const std::vector<int>& order);

}  // namespace sramplan::spill
