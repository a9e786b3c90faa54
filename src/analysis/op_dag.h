// The dependency DAG of a graph's ops in a given order, as analysis/regions.h takes it.
#pragma once

#include "analysis/liveness.h"
#include "analysis/regions.h"
#include "ir/graph.h"

namespace sramplan::analysis {

// preds[i]: the positions in `order` of the ops producing an input of order[i], ascending and
// unique. `order` must be a valid schedule (ValidateSchedule), so every predecessor is < i.
DagPreds OpPredecessors(const ir::Graph& g, const Schedule& order);

}  // namespace sramplan::analysis
