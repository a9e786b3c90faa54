// Hierarchical min-peak scheduling (in the spirit of HMCOS): split the graph into regions that run
// one after the other, schedule every region exactly with the dynamic programme of min_peak.h
// (collapsing chains of single-predecessor/single-successor ops into super-nodes when a region is
// too wide), and concatenate the region orders.
//
// Regions are contiguous ranges of the model order. The graph is first cut at the "forced"
// boundaries: positions where every op before is an ancestor of every op after, so every valid
// order runs the two sides one after the other and the cut loses nothing. A segment between forced
// boundaries that is still too large for the exact search is split again at the boundary (in its
// middle half) where the model order has the fewest live bytes; such a split, like a chain
// collapse, restricts the orders considered, so the result is then a heuristic. Finally, while time
// remains and the peak is above the lower bound, windows of 24..192 consecutive steps around a step
// reaching the peak are re-solved exactly with the bound "strictly below the current peak" (ops
// move across region borders this way).
//
// Lower bound (valid for every order): the maximum of
//  - the optimum of every region that is a whole forced segment solved without collapsing chains;
//  - for every op v: the bytes of its inputs and outputs plus every buffer that must be live
//    while v runs (created by an ancestor of v, or a graph input, and read by a descendant of v, or
//    a graph output).
// proved_optimal is set when the peak reached equals that bound.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "schedule/min_peak.h"

namespace sramplan::schedule {

struct HierarchicalOptions {
  int64_t region_max_states = 300'000;  // exact search of one region (per attempt)
  int max_region_ops = 160;             // larger segments are split without trying the exact search
  // For the whole run; regions left when it expires keep the model order. MinPeakSchedule gives its
  // hierarchical fallback the same budget as its exact search.
  double time_limit_s = 10;
  bool collapse_chains = true;  // retry a region with chains collapsed before splitting it
};

// method "hierarchical"; regions = number of regions scheduled separately.
MinPeakResult HierarchicalMinPeak(const ir::Graph& g, const HierarchicalOptions& options = {});

}  // namespace sramplan::schedule
