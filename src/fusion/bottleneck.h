// vMCU's step formation: fused inverted bottlenecks (expand -> depthwise -> pointwise project
// [-> + block input]) and the single ops that run on segments (Conv2D, depthwise, FC), each with
// the affine kernel the overlap analysis (segment/overlap.h) needs and the workspace the runtime's
// segment kernels ask for (sp_seg_*_workspace_bytes). IR in, step groups out; no plan.
#pragma once

#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"
#include "segment/overlap.h"

namespace sramplan::fusion {

// What one plan step computes, for the overlap analysis.
struct StepInfo {
  std::vector<ir::OpId> ops;
  ir::TensorId in;   // the data input that may be overwritten (invalid: none)
  ir::TensorId out;  // the step's output
  std::string kind;  // "bottleneck", "conv", "fc", "" (no overlap)
  segment::AffineKernel kernel;
  // Bytes of private scratch the segment kernel needs (bottleneck: with the column cache), and for
  // a bottleneck with the row cache (R rows of the plane). Both come from the runtime's
  // sp_seg_*_workspace_bytes, the kernels' own rule, and are properties of the step: a layout that
  // runs the step another way (in-place depthwise) keeps them.
  int64_t workspace = 0;
  int64_t workspace_rows = 0;
};

// Groups `order` into steps: a fused bottleneck where the pattern appears consecutively in the
// order (and its workspace is smaller than the wide intermediate it replaces), else one op per step
// with its segment kernel when it has one. `segment_bytes` 0: the paper's rule.
std::vector<StepInfo> FuseBottlenecks(const ir::Graph& g, const analysis::Schedule& order,
                                      int64_t segment_bytes);

}  // namespace sramplan::fusion
