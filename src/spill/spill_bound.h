// Lower bounds on the non-compulsory off-chip bytes of a spill problem under its budget that hold for
// EVERY topological order of the ops (and every placement), not only for one schedule.
//
// Both bounds rest on "necessarily live" tensors: tensor t is necessarily live at op o (which does not
// access t itself) when some access of t is an ancestor of o in the data-dependence DAG and another is a
// descendant (for an activation the first access is its producer; for a graph input or weight only its
// readers count, its first load being compulsory). In every order such a t has been produced or loaded
// before o runs and is read again after, so during o's step it is either resident or dropped, and a
// dropped t costs at least its bytes once more (a reload) plus, for a plain activation (not a graph
// output, whose store is compulsory), one spill. With W_o the bytes of o's own inputs and outputs and
// N_o its necessarily-live tensors, at least E_o = W_o + bytes(N_o) - budget bytes of N_o are dropped
// around o.
//
//  * working-set bound: max over ops of the integral cover bound of E_o (below; at least the fractional
//    knapsack cover: reload-only tensors first at cost 1 per byte, then plain activations at 2 per byte).
//  * joint cover bound (an ILP over all ops at once, solved by CBC): per tensor, a longest chain of its
//    accesses under the ancestor relation splits its life into gaps; an op that lies between chain
//    accesses j and j+1 in every order lies in gap j, and drops in different gaps need different
//    reloads (their time windows are disjoint). Variables: r[t][j] (dropped somewhere in gap j), z[t]
//    (dropped at an op that is in no gap of the chain), one spill per plain activation (>= every drop),
//    reloads R[t] >= sum_j r[t][j] and >= z[t]. Rows: for every op with E_o > 0, the bytes of its
//    necessarily-live tensors marked dropped there cover E_o. Objective: spill + reload bytes. Its
//    optimum, or CBC's proved bound when the time limit stops it, bounds every order's optimum.
//  * order disjunctions (both bounds): every order runs the ops of a small cluster C in some relative
//    order pi that respects the dependencies. Under pi, at an op o of C the cluster ops before o (and
//    their ancestors) are in o's down-set and those after it (and their descendants) are not: the min
//    cut with these constraints gives the least live bytes at o, and the possibly-live tensors and the
//    chain gaps are those of the orders realising pi. A realisable pi whose ops all fit makes the
//    cluster vacuous; otherwise the cover ILP gets a binary per pi (at least one chosen) switching its
//    rows on, and the working-set bound the cheapest pi's largest integral cover bound. Clusters: the input
//    producers of a join (one runs last), and two heavy ops (W above half the budget) that no
//    dependency orders, each with its heaviest heavy reader (e.g. a NAS cell output read by two ReLUs,
//    each followed by a 1x1 conv: whichever runs first leaves a map live at a heavy op). Built within
//    half the time limit (the detail says when it stopped them).
//  Cover coefficients are capped at the row's excess (the same integer rows, a tighter LP).
//  Integral covers: a row is covered by whole tensors, so its cost is at least min(the cheapest tensor
//  of at least the excess, the fractional cover by the smaller ones); this is the working-set bound's
//  per-row value, and a cost cut (the spill + reload bytes of the row's tensors, or of a disjunction's,
//  at least that value) in a first relaxation of the cover ILP without the choice binaries, which CBC
//  solves fast. The ILP is split into components of shared tensors; per component the larger of the
//  relaxation's bound and the full model's optimum (with what is left of the time; only when
//  CBC proves it, so that a time limit does not make the bound vary run to run) counts.
//
// Graphs of more than 20000 ops get bound 0 (the detail says so).
// Only data dependencies order the ops here (the solvers' extra conservative edges behind view ops only
// shrink the set of orders, so the bound stays valid for them). Deterministic unless the time limit stops
// the ILP (then `ilp_hit_limit`).
#pragma once

#include <cstdint>
#include <string>

#include "spill/spill.h"
#include "support/status.h"

namespace sramplan::spill {

struct SpillBoundOptions {
  double time_limit_s = 5;  // for the ILP (CBC); the working-set bound is always computed
  bool use_ilp = true;
  bool verbose = false;
};

struct SpillBound {
  int64_t bytes = 0;              // the best valid bound: max of the two below
  int64_t working_set_bytes = 0;  // max over ops of one op's fractional cover
  int64_t ilp_bytes = 0;          // the joint cover ILP's optimum or proved bound (0 when not run)
  bool ilp_run = false;
  bool ilp_optimal = false;       // CBC proved the joint cover ILP's optimum
  bool ilp_hit_limit = false;
  int forced_ops = 0;             // ops with E_o > 0 (rows of the ILP)
  int disjunctions = 0;           // order disjunctions with rows (see above)
  int vars = 0, rows = 0;
  double seconds = 0;
  std::string detail;
};

// kInvalidArgument for a malformed problem (ValidateSpillProblem), kOutOfMemory when an op alone does
// not fit the budget.
StatusOr<SpillBound> LowerBoundAllOrders(const SpillProblem& p, const SpillBoundOptions& o);

// The gap of a solution to a bound, in percent of the solution's bytes (0 when both are 0).
double GapPercent(int64_t bytes, int64_t bound);

}  // namespace sramplan::spill
