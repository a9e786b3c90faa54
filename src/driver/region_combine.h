// modulebuf-cosma's per-region combination: module buffering where it wins, COSMA's spilling
// elsewhere (driver/passes/combine.cc runs it beside the whole-network plans).
//
// The model order is cut at its boundaries (region_stitch.h: one feature map crossing, or two, e.g.
// between NAS cells, which read the two previous cells' outputs) into elementary regions. Each is
// planned on its own sub-graph with modulebuf-reorder and with COSMA's joint ILP (greedy when
// the ILP has no plan for a reason other than M_min; below a region's M_min COSMA has none). Then
// longer segments are planned with one method: module buffering (fast) on every prefix and suffix of
// the regions and every maximal run it won; COSMA on every maximal run of regions it can plan at all
// and on the parts of such a run before and after each point where the elementary winner changes.
// A shortest path over the cuts picks the segments (each costs its plan's off-chip bytes, the
// crossing feature maps' stores and reloads included), and the chosen plans are stitched into one plan of the whole graph, whose
// metrics the weights, metrics and module-metrics passes compute as for a modulebuf plan.
#pragma once

#include <optional>
#include <string>

#include "driver/context.h"

namespace sramplan::driver {

struct RegionCombination {
  std::optional<plan::Plan> plan;  // set only when it moves fewer off-chip bytes than `to_beat`
  std::string note;                // what was planned and chosen (or why nothing)
};

// `to_beat`: the off-chip bytes of the best whole-network plan (INT64_MAX: none). `time_s`: the
// time the regions' COSMA runs may take together.
StatusOr<RegionCombination> CombineRegions(const PlanningContext& ctx, int64_t to_beat, double time_s);

// The metrics of a stitched plan (StitchPlans; `order` its step order), as a modulebuf plan's: the
// weights pass lays out the weights no region holds on chip, then the metrics and module-metrics
// passes (off-chip bytes: transfers plus operands in DRAM, feature maps vs weights).
Status FinishStitchedPlan(const PlanningContext& ctx, const analysis::Schedule& order, plan::Plan* p);

}  // namespace sramplan::driver
