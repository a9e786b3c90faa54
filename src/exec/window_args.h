// The window of a Conv or pooling op (ir/op_geometry.h: defaults applied, SAME padding resolved, the
// kernel from the weight when kernel_shape is absent) as the runtime's int32 arrays. The float32
// and int8 kernels and the in-place depthwise lowering read their geometry here, never from attrs.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace sramplan::exec {

struct WindowArgs {
  std::vector<int32_t> kernel;     // per spatial axis
  std::vector<int32_t> strides;    // per spatial axis
  std::vector<int32_t> pads;       // the begin of every axis, then the end of every axis
  std::vector<int32_t> dilations;  // per spatial axis
  int32_t group = 1;               // Conv only
};

// Conv. InvalidArgument naming the op when a value does not fit the runtime's int32.
StatusOr<WindowArgs> ConvWindow(const ir::Graph& g, const ir::Op& op);
// MaxPool and AveragePool.
StatusOr<WindowArgs> PoolWindow(const ir::Graph& g, const ir::Op& op);

}  // namespace sramplan::exec
