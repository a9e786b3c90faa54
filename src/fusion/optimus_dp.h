// Optimus's fusion search (paper 002, Alg. 1 and Alg. 3) and its baselines over a FusionGraph:
//   optimus         the DAG DP: over down-sets D of the DAG (what already ran), the next group is
//                   any connected set G whose predecessors are in D or G (so no cycle between
//                   groups); f(D) = min_G Eq3(G) + f(D + G), tabulated by D, bottom-up from the
//                   full set. Every partition into connected groups with an acyclic quotient is a
//                   path of this DP, so the result is the optimum of that space when the search
//                   finished within its state limit (proved_optimal). When the DAG has too many
//                   down-sets (NASNet), the canonical DP: the next group always holds the first
//                   operator (schedule order) not yet run, bounded, and the DP over the schedule's
//                   contiguous segments; the better of the two (not proved optimal then).
//   optimus-online  the same DP with Alg. 3's look-up table: groups larger than the table's size
//                   for B_c are rejected (memo[n]: the least working set of an n-operator group at a
//                   tile of O/4 rows). Alg. 3's fan-out rule (an operator fused with all of its
//                   fan-out successors or none) is left out: it cost GoogLeNet 3.3% (see Allowed).
//   dnnvm           groups never contain an operator with several producers or consumers (unless
//                   alone); prior-work cost (no ISOA, all parameters on chip).
//   efficient-s     the model's topological order as a linear proxy; DP over its contiguous,
//                   connected segments; prior-work cost.
//   fused-layer     groups are chains (Alwani et al.), exhaustive (DP) over them; prior-work cost.
//   nofuse          one group per operator (Conv+BN+activation merged).
// Single-operator groups cost the same under every method (Optimus's rule: the layer-by-layer run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusion/optimus_model.h"

namespace sramplan::fusion {

enum class FusionMethod { kOptimus, kOnline, kDnnvm, kEfficientS, kFusedLayer, kNoFuse };
// "optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse".
const char* FusionMethodName(FusionMethod m);
bool ParseFusionMethod(const std::string& name, FusionMethod* m);

struct FusionLimits {
  int64_t full_dp_states = 10000;     // the full down-set DP gives up beyond this many states
  int64_t canonical_states = 5000;    // then the canonical DP's states and groups per state
  int64_t canonical_groups_per_state = 128;
  int64_t max_states = 400000;        // DP states before the search stops proving
  int64_t max_groups_per_state = 4096;  // candidate groups enumerated from one state
  // Past the state limit a state follows its best group (the one saving most against its
  // operators alone) among the first this many it enumerates.
  int64_t greedy_groups_per_state = 32;
  int max_group_vertices = 64;
  // > 0: wall-clock seconds for the DP phases; past it every remaining state follows its greedy
  // choice (as past max_states) and the result is not proved optimal. 0: no time limit (results
  // depend only on the state limits).
  double time_limit_s = 0;
};

struct FusionResult {
  std::vector<std::vector<int>> groups;  // in execution order; vertices ascending in each
  std::vector<GroupEval> evals;
  int64_t dram_bytes = 0;
  int64_t read_bytes = 0, write_bytes = 0;
  bool proved_optimal = true;  // the search covered its whole space
  int64_t states = 0;          // DP states tabulated
  int64_t groups_evaluated = 0;
  double search_ms = 0;
  int online_max_group = 0;  // optimus-online: the look-up table's group size for B_c
  std::string note;
};

// Alg. 3's look-up table: memo[n] (n = 1..) the least working set of an n-vertex group (ISOA by
// Alg. 2, tile of ceil(O/4) rows), made non-decreasing; groups grown from every vertex.
std::vector<int64_t> OnlineLookupTable(const FusionGraph& fg, const AccelModel& m, int max_n);

// Runs `method`. OutOfMemory naming the operator and the bytes its smallest tile needs when some
// single operator does not fit the buffer.
StatusOr<FusionResult> RunFusion(const FusionGraph& fg, const AccelModel& m, FusionMethod method,
                                 const FusionLimits& limits = {});

}  // namespace sramplan::fusion
