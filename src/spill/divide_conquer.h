// COSMA's divide-and-conquer heuristic (Sec. III-F) with automatically chosen break points.
//
// The (ordered) problem is cut between steps into contiguous parts of at most max_ops_per_part ops,
// choosing the cuts (dynamic programming over cut positions) that minimise the bytes of the tensors
// live across them. Each part is an independent SpillProblem: tensors that come from earlier parts are
// its graph inputs (in DRAM), tensors needed by later parts are its graph outputs (stored). Each part is
// solved with SolveCosma (fixed order, or joint inside the part), and the parts are stitched: a
// boundary activation's store becomes a spill and its load in a later part a reload, so the stitched
// solution passes CheckSolution and pays for every boundary crossing.
//
// Pinning: a tensor accessed in several parts may instead stay resident from its production (or a
// load at the start of its first part) to the end of its last part, at a fixed offset at the top of
// the budget; it leaves the parts' problems, and every part it spans gets the budget minus the pinned
// bytes above it. Pins are chosen greedily (bytes of boundary traffic saved per byte and part
// reserved), first so that every spanned part still runs without traffic (its live peak fits), then
// so that it stays solvable (its largest op fits). Plain stitching is solved first (with half the time
// limit when pins are possible) and the pinned variants replace it only when they are cheaper, so
// pinning is never worse than plain stitching; the lower bound is plain stitching's.
//
// That stitched solution is one candidate. The others: COSMA's fixed-schedule solve of the base order
// (so the result is never worse than it), and up to three reorder rounds: the current best order is cut
// again (parts of k, 1.5k, k/2 + 2 ops, so the cuts move between rounds), every part is reordered by
// COSMA's joint mode inside the part (schedule free; exact by its joint ILP when that finishes) with the
// budget less the bytes the current solution keeps resident across the part without using them there,
// and the stitched order is placed by one exact fixed-order solve of the whole problem, which carries
// every boundary tensor's on-chip/off-chip state across the cuts (the stitching pass). The best checked
// candidate is returned; lower_bound_bytes and all_orders_lower_bound_bytes are LowerBoundAllOrders'
// (valid for every order), proved_optimal when the result meets it.
//
// The stitched candidate's own bound (in its detail): the sum of the parts' lower bounds. Restricting any solution that runs the parts as the
// same contiguous blocks of steps (for a fixed base order: any solution for that order) to one part
// gives a feasible solution of that part's problem costing at most what it pays in the part's steps,
// so the sum bounds them all; the gap (boundary traffic and time limits) is reported in detail.
#pragma once

#include <string>
#include <vector>

#include "spill/spill.h"
#include "support/status.h"

namespace sramplan::spill {

struct DcOptions {
  std::vector<int> order;     // the base order; empty: the problem's op order
  int max_ops_per_part = 40;  // at least 2
  bool joint_parts = false;   // let each part reorder its own ops (COSMA's joint ILP inside the part)
  double time_limit_s = 120;  // for everything: the stitched parts get 20%, the fixed-order solve of the
                              // base order up to 25%, the reorder rounds the rest
  int reorder_rounds = 3;     // 0..3 rounds of part reordering (parts of k, 1.5k, k/2+2 ops)
  bool verbose = false;
};

// One reorder round (cosma-dc's rounds, and the joint mode's large-neighbourhood search): cuts
// incumbent.order into windows of at most k ops where the fewest bytes cross, reorders every window in
// which the incumbent spills or reloads (the others keep their order; the time goes to the busy windows by
// their op counts) by COSMA's joint mode inside it (60% of the time; the rest of the order fixed; the window's budget less
// the bytes the incumbent keeps resident across it unused), and places the stitched order with COSMA's
// exact fixed-order solve (the rest of the time). Returns the incumbent itself when no window changed,
// else the placed solution (checked with CheckSolution; it may be worse than the incumbent: the caller
// keeps the better). `label` describes the windows.
StatusOr<SpillSolution> ReorderRound(const SpillProblem& p, const SpillSolution& incumbent, int k, double time_limit_s,
                                     bool verbose, std::string* label);

// method = "cosma-dc". kOutOfMemory when an op alone does not fit the budget; kInvalidArgument for a
// malformed problem or order.
StatusOr<SpillSolution> SolveDivideAndConquer(const SpillProblem& p, const DcOptions& o);

}  // namespace sramplan::spill
