// Regions of an operator order cut where few feature maps cross, their sub-graphs, and one plan
// stitched from plans of consecutive regions (modulebuf-cosma, driver/passes/combine.cc).
//
// A cut k of an order (between steps k-1 and k) is a boundary when at most a few non-constant
// tensors are made before it (or are graph inputs) and read at or after it, each an activation that
// owns its bytes (not a view). The ops of a region (the steps between two cuts) form a sub-graph with
// every name kept: a crossing tensor is a graph output of the region that makes it and a graph input
// of the regions that read it. A plan of each region, in order, stitched: steps and on-chip buffers
// shifted by the region's first step, each region's off-chip buffers moved into a DRAM range of its
// own (so the regions' DRAM never overlaps), a tensor's first off-chip buffer kept for the whole run
// (graph inputs and weights from step 0) and the later regions' copies of it dropped, so a crossing
// tensor is written to DRAM by the region that makes it ("store" becomes "spill") and read back by
// the regions that read it ("load" becomes "reload"). The stitched plan moves exactly the sum of
// the regions' off-chip bytes.
#pragma once

#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "driver/strategy.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "target/target.h"

namespace sramplan::driver {

// The boundaries of `order` (a topological order of every op of g), ascending, in 1 .. size - 1:
// every cut where one tensor crosses, and where 2 .. max_tensors cross (each an activation that owns
// its bytes), of each run of such adjacent cuts the one with the fewest crossing bytes.
std::vector<int> BoundaryCuts(const ir::Graph& g, const analysis::Schedule& order, int max_tensors = 1);

// The sub-graph of `ops` (in the order given, which must be topological): their operands with
// names, shapes, types, quantisation and constant data kept; a tensor made outside is an input, one
// read outside (or a graph output) an output. InvalidArgument when it fails VerifyGraph.
StatusOr<ir::Graph> RegionGraph(const ir::Graph& g, const std::vector<ir::OpId>& ops);

// One plan of g from plans of consecutive regions (each planned on RegionGraph of its ops): the
// skeleton in the regions' concatenated step order (returned in *order), buffers, transfers and
// modules. Metrics are left to the metrics passes. InternalError when a part is not of the expected
// form (ops of g in order, one off-chip buffer per tensor, one step per op).
StatusOr<plan::Plan> StitchPlans(const ir::Graph& g, const target::Target& t,
                                 const std::vector<const plan::Plan*>& parts, const std::string& strategy,
                                 const PlanOptions& options, int64_t alignment, analysis::Schedule* order);

}  // namespace sramplan::driver
