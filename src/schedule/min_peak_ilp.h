// COSMA's minimum-peak-memory ILP (Sec. III-E1, Eq. 13-15) solved with CBC (through milp/milp.h): an operator order whose
// peak live bytes (analysis::ComputeLiveness's model: views alias their root, graph inputs live from
// step 0, graph outputs to the end, constants excluded) is minimal. A cross-check of the exact DP in
// min_peak.h on small graphs; the DP is the production path.
//
// Formulation: e[o][t] = op o runs at step t (only inside its ASAP/ALAP window from DAG reachability),
// cumulative E[o][t] = sum_{u<=t} e[o][u] with precedence E[q][t] <= E[p][t-1]; per arena buffer b and
// step t, live[b][t] >= E[producer][t] - E[user][t-1] for every op using b or a view of it (graph
// outputs: live[b][t] >= E[producer][t]); peak >= sum_b bytes_b live[b][t]; minimise peak. Without
// spills (Eq. 13) COSMA's create/preserve variables reduce to exactly this liveness.
#pragma once

#include "ir/graph.h"
#include "schedule/min_peak.h"

namespace sramplan::schedule {

// method = "ilp"; proved_optimal when CBC closes the gap within time_limit_s; lower_bound = CBC's bound
// (rounded up); states = branch-and-bound nodes. The model order is CBC's first incumbent, so the
// result is never worse than it.
MinPeakResult MinPeakIlp(const ir::Graph& g, double time_limit_s);

}  // namespace sramplan::schedule
