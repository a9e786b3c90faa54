// Op geometry parsed once from an ir::Op's string attributes: convolutions (including depthwise),
// pooling windows and matrix products (Gemm, MatMul). Every consumer of kernel_shape / strides /
// pads / dilations / group / transA / transB reads these structs instead of the attributes.
//
// The parsers apply ONNX defaults (strides and dilations 1, pads 0, group 1, transA/transB 0,
// alpha/beta 1), check the attributes against the operands (counts, signs, channel and group
// consistency, the window fitting the padded input) and compute the output extents with ONNX
// semantics, so a geometry that parses is one the kernels can run. Errors name the op:
// "op 'conv1' (Conv): ...". ir::InferOutputShapes is built on them, so a graph that passed
// VerifyGraph parses without error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace sramplan::ir {

// The sliding window of a Conv or a pooling op over the spatial axes of its input.
struct WindowGeometry {
  Layout layout = Layout::kNCHW;     // of the graph: where the channel axis is
  int64_t batch = 1;                 // N
  int64_t in_channels = 0;           // C of the input
  int64_t out_channels = 0;          // C of the output (pooling: in_channels)
  std::vector<int64_t> in_spatial;   // input extents, spatial axes in order (H, W for 2-D)
  std::vector<int64_t> out_spatial;  // output extents, ONNX rules (ceil_mode, auto_pad)
  std::vector<int64_t> kernel;       // per spatial axis
  std::vector<int64_t> strides;      // per spatial axis, default 1
  std::vector<int64_t> dilations;    // per spatial axis, default 1
  // ONNX order: the begin of every axis, then the end of every axis (2-D: top, left, bottom,
  // right). With auto_pad SAME_UPPER / SAME_LOWER these are the pads the ONNX rule implies (the
  // extra one at the end / the beginning), as the ONNX importer writes them; otherwise the `pads`
  // attribute.
  std::vector<int64_t> pads;
  std::string auto_pad = "NOTSET";  // as given
  bool ceil_mode = false;
  bool kernel_shape_given =
      false;  // the op carries a kernel_shape attribute (Conv: else the weight's)

  int spatial_rank() const { return static_cast<int>(kernel.size()); }
  bool Is2D() const { return spatial_rank() == 2; }
  int64_t pad_begin(int axis) const { return pads[axis]; }
  int64_t pad_end(int axis) const { return pads[axis + spatial_rank()]; }
  bool UnitStrides() const;    // every stride 1
  bool UnitDilations() const;  // every dilation 1
  bool ZeroPads() const;       // no padding
  bool UnitKernel() const;     // every kernel extent 1
  // Extent of the window along `axis` with dilation: dilation * (kernel - 1) + 1.
  int64_t EffectiveKernel(int axis) const { return dilations[axis] * (kernel[axis] - 1) + 1; }
};

struct ConvGeometry : WindowGeometry {
  int64_t group = 1;
  bool depthwise = false;  // as ir::IsDepthwiseConv: group > 1, group == C_in == C_out
  bool has_bias = false;   // a third input
  // Weight extents: [C_out, C_in / group, k...] (NCHW) or [C_out, k..., C_in / group] (NHWC).
  std::vector<int64_t> weight_shape;
  int64_t in_channels_per_group() const { return in_channels / group; }
  // 1x1 kernel, stride 1, no padding, dilation 1, group 1 (a per-pixel matrix product).
  bool IsPointwise() const;
  // Multiply-accumulates of one run: N * C_out * prod(out_spatial) * (C_in / group) * prod(kernel).
  int64_t Macs() const;
};

struct PoolGeometry : WindowGeometry {
  bool max = false;                // MaxPool (else AveragePool)
  bool count_include_pad = false;  // AveragePool: padded cells count in the divisor
};

// Gemm (Y = alpha * op(A) * op(B) + beta * C, 2-D) and MatMul (numpy semantics, batch broadcast).
struct GemmGeometry {
  bool trans_a = false, trans_b = false;  // Gemm only
  double alpha = 1.0, beta = 1.0;         // Gemm only
  bool has_bias = false;                  // Gemm with a C input
  // MatMul: the broadcast batch dimensions of the output (empty for Gemm and 2-D MatMul); a 1-D
  // operand counts as a matrix with m = 1 (A) or n = 1 (B), as ONNX promotes it.
  std::vector<int64_t> batch;
  bool a_vector = false, b_vector = false;  // MatMul: A / B is 1-D (its row / column is dropped)
  int64_t m = 0, k = 0, n = 0;              // op(A) is m x k, op(B) is k x n, the product m x n
  int64_t Macs() const;                     // prod(batch) * m * k * n
};

// Conv only ("Conv"). Checks the input rank (>= 3), the weight (rank, channels, group), the
// kernel_shape attribute against the weight, the bias length, the attribute counts and signs, and
// that the window fits the padded input on every axis.
StatusOr<ConvGeometry> ParseConvGeometry(const Graph& g, const Op& op);
// MaxPool and AveragePool: kernel_shape is required and gives the window.
StatusOr<PoolGeometry> ParsePoolGeometry(const Graph& g, const Op& op);
// Gemm and MatMul: operand ranks, inner dimensions, Gemm's bias broadcasting, MatMul's batch.
StatusOr<GemmGeometry> ParseGemmGeometry(const Graph& g, const Op& op);

}  // namespace sramplan::ir
