// Graph canonicalisation: rewrites an imported graph into the form the planners' patterns, the int8
// kernels and codegen expect, before any strategy runs.
//
// - UnshareBiases: a Conv/Gemm bias constant that several ops read gets one copy per reader, so that
//   int8 can give each its own scale (input scale x weight scale), as TFLite files carry them.
// - FoldActivations: a Relu or Clip(0, 6) whose input is a Conv's only use becomes the Conv's fused
//   `activation` (relu / relu6), as the native and MCUNet graphs and TFLite's fused activations write it.
// - ToChannelsLast: an NCHW graph becomes NHWC (channels last), the layout of the Cortex-M kernels,
//   the segment-aware kernels and codegen. Feature maps (the tensors that Conv, pooling and
//   BatchNormalization see, and everything joined to them through elementwise, Concat, Pad, Resize,
//   Slice, Split, Softmax and keepdims reductions) are permuted; Conv weights are transposed once
//   from [C_out, C_in/g, R, S] to [C_out, R, S, C_in/g] with their data; axis attributes and
//   broadcast constants follow. Where a feature map meets an op that reads element order (Reshape,
//   Flatten, Gemm, MatMul, Transpose, ...), a Transpose back to NCHW is inserted, or a Reshape view
//   when the order is the same (1x1 spatial or one channel); a Flatten that only feeds FC layers
//   (Gemm / MatMul with constant weights) instead reads the channels-last map, and the FC weights'
//   input axis is permuted to (h, w, c) once. The graph's inputs and outputs that are feature maps
//   become NHWC.
//
// Both leave a graph that VerifyGraph accepts, or fail naming the op they cannot rewrite.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace sramplan::transform {

struct CanonicalizeOptions {
  bool unshare_biases = true;
  bool fold_activations = true;
  bool channels_last = true;
};

struct CanonicalizeReport {
  int unshared_biases = 0;       // bias constants read by several ops, copied once per extra reader
  int folded_activations = 0;   // Relu / Clip ops merged into their Conv
  int permuted_tensors = 0;     // feature maps (activations, inputs, outputs) made channels-last
  int transposed_weights = 0;   // Conv weights (and broadcast constants) whose data was permuted
  int inserted_transposes = 0;  // Transpose ops added where a feature map meets an order-reading op
  int inserted_views = 0;       // Reshape views added instead, where the order does not change
  int folded_flattens = 0;      // Flattens before FC layers that read the channels-last map (FC weights permuted)
  std::vector<std::string> notes;
  std::string Summary() const;  // one line
};

Status UnshareBiases(ir::Graph* g, CanonicalizeReport* report);
// The importers' counterpart of FoldActivations, run on every imported model: an op other than Conv
// with an `activation` attribute (TFLite's fused activation on ADD, MUL, SUB, pooling and
// FULLY_CONNECTED; a native graph's) gets it as an explicit Relu / Clip(0, 6) op after it, since only
// the Conv kernels apply the attribute. `count` (may be null) gets the number of ops split.
Status UnfuseActivations(ir::Graph* g, int* count);
Status FoldActivations(ir::Graph* g, CanonicalizeReport* report);
Status ToChannelsLast(ir::Graph* g, CanonicalizeReport* report);
// The passes above in that order, each as the options ask.
StatusOr<CanonicalizeReport> Canonicalize(ir::Graph* g, const CanonicalizeOptions& options);

// The permutation that takes rank-r channels-first axes to channels-last: new axis i holds old axis
// perm[i] ([0, 2, ..., r-1, 1]); exposed for tests and the importers.
std::vector<int64_t> ChannelsLastPerm(int rank);
// Moves the elements of a dense row-major tensor (elem_bytes each) of `shape` so that new axis i is
// old axis perm[i].
std::vector<uint8_t> PermuteData(const std::vector<uint8_t>& data, const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& perm, int elem_bytes);

}  // namespace sramplan::transform
