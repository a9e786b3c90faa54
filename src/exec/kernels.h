// Runs one IR op through the C runtime kernels on raw pointers (float32 graphs; int8 graphs with
// their quantisation parameters: kernels_s8.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "sramplan_rt.h"

namespace sramplan::exec {

struct QuantizedModel;  // exec/quantize.h

// Logical descriptor of a tensor: contiguous row-major, or for feature maps of an NHWC graph the
// (N, C, spatial...) view with NHWC strides (`feature_map`).
sp_tensor_t Describe(const ir::Graph& g, const std::vector<int64_t>& shape, bool feature_map);
// Row-major contiguous descriptor of `shape`.
sp_tensor_t Contig(const std::vector<int64_t>& shape);
// Attribute lists narrowed to the runtime's int32.
std::vector<int32_t> I32(const std::vector<int64_t>& v);
// Elements a descriptor spans (what a kernel may touch), for range checks.
int64_t SpanElements(const sp_tensor_t& t);

// Executes `op`; `in[i]` points to op.inputs[i], `out[i]` to op.outputs[i]. View ops are no-ops.
Status RunKernel(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                 const std::vector<uint8_t*>& out);

// TinyEngine's in-place depthwise convolution: the output overwrites the input. Each channel is
// computed into `scratch` (N x H_out x W_out elements) and then copied over its own input channel,
// which no later channel reads.
Status RunDepthwiseInPlace(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                           uint8_t* out, uint8_t* scratch, int64_t scratch_bytes);

// The int8 versions: TFLite Micro semantics through the runtime's int8 kernels, with the
// parameters and lookup tables of `q`. Ops without an int8 implementation are kUnsupported.
Status RunKernelS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                   const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out);
Status RunDepthwiseInPlaceS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                             const std::vector<const uint8_t*>& in, uint8_t* out, uint8_t* scratch,
                             int64_t scratch_bytes);

}  // namespace sramplan::exec
