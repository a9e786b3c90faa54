// Private to the int8 dispatch (kernels_s8*.cc): the helpers that build call records and the op
// builders by family. BuildCallsS8 (kernels_s8.cc) picks the builder: convolutions and fully
// connected layers (kernels_s8_conv.cc), element-wise ops (kernels_s8_elementwise.cc), pools and
// means (kernels_s8_pool.cc), data movement (kernels_s8_move.cc); kernels_s8_run.cc runs records on
// the host and kernels_s8_segment.cc derives the segment-aware kernels' parameters.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "exec/kernels.h"
#include "exec/quantize.h"
#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"

namespace sramplan::exec {


inline int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// ---- Building call records ----------------------------------------------------------------------

inline CallRef In(int i, int64_t offset = 0, int64_t step = 0) {
  return {CallRef::Base::kInput, i, offset, step};
}
inline CallRef Out(int i, int64_t offset = 0, int64_t step = 0) {
  return {CallRef::Base::kOutput, i, offset, step};
}
inline CallRef Temp(int i) { return {CallRef::Base::kTemp, i, 0, 0}; }
inline CallRef ConstRef(int i, int64_t offset = 0, int64_t step = 0) {
  return {CallRef::Base::kConst, i, offset, step};
}
inline CallArg Int(int64_t v) { return CallArg(std::in_place_type<int64_t>, v); }
inline CallArg Ints(const int32_t* v, int n) { return CallArg(std::vector<int32_t>(v, v + n)); }
inline CallArg Null() { return CallArg(nullptr); }

// Whether `a` can be passed as a parameter of C type `ctype`.
inline bool ArgFits(const char* ctype, const CallArg& a) {
  const std::string t = ctype;
  if (t == "const sp_tensor_t*") return std::holds_alternative<sp_tensor_t>(a);
  if (t == "sp_requant_t") return std::holds_alternative<sp_requant_t>(a);
  if (t == "const sp_add_s8_params_t*") return std::holds_alternative<sp_add_s8_params_t>(a);
  if (t == "const sp_mul_s8_params_t*") return std::holds_alternative<sp_mul_s8_params_t>(a);
  if (t == "const sp_seg_pool_t*") return std::holds_alternative<SegPoolArg>(a);
  if (t == "const sp_seg_conv_shape_t*") return std::holds_alternative<sp_seg_conv_shape_t>(a);
  if (t == "const sp_seg_fc_shape_t*") return std::holds_alternative<sp_seg_fc_shape_t>(a);
  if (t == "const sp_seg_bottleneck_shape_t*") return std::holds_alternative<sp_seg_bottleneck_shape_t>(a);
  if (t == "const sp_seg_layer_s8_t*") return std::holds_alternative<SegLayerS8>(a);
  if (t == "const sp_seg_bottleneck_s8_t*") return std::holds_alternative<SegBottleneckS8>(a);
  if (t == "const int32_t*")
    return std::holds_alternative<CallRef>(a) || std::holds_alternative<std::nullptr_t>(a) ||
           std::holds_alternative<std::vector<int32_t>>(a);
  if (t.back() == '*')
    return std::holds_alternative<CallRef>(a) || std::holds_alternative<std::nullptr_t>(a);
  return std::holds_alternative<int64_t>(a);  // int32_t and enums
}

inline KernelCall Call(KernelFn fn, std::vector<CallArg> args) {
  const KernelSignature& s = Signature(fn);
  SP_CHECK(args.size() == s.params.size());
  for (size_t i = 0; i < args.size(); ++i) SP_CHECK(ArgFits(s.params[i], args[i]));
  return {fn, std::move(args)};
}

// A record of one block that runs once.
inline OpCalls Single(KernelCall c) {
  OpCalls r;
  r.blocks.push_back({1, {std::move(c)}});
  return r;
}

inline int AddConst(OpCalls* c, const char* ctype, const char* role, const void* data, size_t bytes) {
  ConstArray a;
  a.ctype = ctype;
  a.role = role;
  a.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  c->consts.push_back(std::move(a));
  return static_cast<int>(c->consts.size()) - 1;
}

inline int AddRequants(OpCalls* c, const std::vector<sp_requant_t>& rq) {
  return AddConst(c, "sp_requant_t", "requant", rq.data(), rq.size() * sizeof(sp_requant_t));
}

// Per-tensor activation parameters.
struct QP {
  double scale = 1;
  int32_t zp = 0;
  bool operator==(const QP& o) const { return scale == o.scale && zp == o.zp; }
};

inline Status ActParams(const ir::Graph& g, const QuantizedModel& q, ir::TensorId id, const ir::Op& op,
                 QP* out) {
  const ir::QuantParams& p = q.params.at(id.value());
  if (p.scale.size() != 1 || p.zero_point.size() != 1)
    return InternalError("op '" + op.name + "': tensor '" + g.tensor(id).name +
                         "' has no per-tensor int8 quantisation parameters");
  out->scale = p.scale[0];
  out->zp = p.zero_point[0];
  return Status::Ok();
}

inline Status Matches(const ir::Graph& g, const QuantizedModel& q) {
  if (static_cast<int>(q.params.size()) != g.num_tensors() ||
      static_cast<int>(q.tables.size()) != g.num_ops())
    return InvalidArgument("the quantised model does not belong to graph '" + g.name + "'");
  return Status::Ok();
}

inline bool IsInt8(const ir::Graph& g, ir::TensorId id) {
  return g.tensor(id).dtype == ir::DataType::kInt8;
}

// Drops logical dim `d` of a descriptor.
inline sp_tensor_t DropDim(const sp_tensor_t& t, int d) {
  sp_tensor_t r = t;
  r.rank = t.rank - 1;
  for (int i = d; i < r.rank; ++i) {
    r.dims[i] = t.dims[i + 1];
    r.strides[i] = t.strides[i + 1];
  }
  r.dims[r.rank] = 0;
  r.strides[r.rank] = 0;
  return r;
}

// Inserts a dim of size 1 at `d`.
inline sp_tensor_t InsertUnitDim(const sp_tensor_t& t, int d) {
  sp_tensor_t r = t;
  r.rank = t.rank + 1;
  for (int i = r.rank - 1; i > d; --i) {
    r.dims[i] = t.dims[i - 1];
    r.strides[i] = t.strides[i - 1];
  }
  r.dims[d] = 1;
  r.strides[d] = 0;
  return r;
}

// Channels-last contiguous descriptor with the logical dims (N, C, H, W) of `t`.
inline sp_tensor_t ChannelsLast(const sp_tensor_t& t) {
  sp_tensor_t r;
  sp_tensor_init_nhwc(&r, t.dims[0], t.dims[1], t.dims[2], t.dims[3]);
  return r;
}

inline int32_t ActivationKind(const ir::Op& op) {
  std::string act = op.attrs.GetString("activation", "none");
  return act == "relu" ? 1 : act == "relu6" ? 2 : 0;
}

inline bool IsLutOp(const std::string& t) {
  static const char* kLut[] = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu",
                               "Gelu",    "Erf",  "Exp",         "Neg",       "Abs",       "Sqrt"};
  for (const char* k : kLut)
    if (t == k) return true;
  return false;
}

// The op a builder translates, with what every builder reads.
struct S8Op {
  const ir::Graph& g;
  const ir::Op& op;
  const QuantizedModel& q;
  const std::vector<int8_t>& table;  // the op's lookup tables (quantize.h)
  sp_tensor_t o0;                    // row-major descriptor of output 0
  const std::vector<int64_t>& shape(size_t i) const { return g.tensor(op.inputs[i]).shape; }
  const std::vector<int64_t>& oshape(size_t i) const { return g.tensor(op.outputs[i]).shape; }
  CallArg elem(ir::TensorId id) const { return Int(ir::DataTypeSize(g.tensor(id).dtype)); }
  Status params(ir::TensorId id, QP* p) const { return ActParams(g, q, id, op, p); }
};

// kernels_s8_conv.cc
StatusOr<OpCalls> BuildConv(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q);
StatusOr<OpCalls> BuildFullyConnected(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q);
// The builders of the ops that take an S8Op all have this type (BuildCallsS8 dispatches on it).
using S8Builder = StatusOr<OpCalls>(const S8Op& o);
// kernels_s8_elementwise.cc: Relu, Clip and the lookup-table ops; BatchNormalization; Add, Sub,
// Mul; Softmax.
S8Builder BuildActivationS8, BuildBatchNormS8, BuildBinaryS8, BuildSoftmaxS8;
// kernels_s8_pool.cc: MaxPool / AveragePool, GlobalAveragePool, ReduceMean.
S8Builder BuildPoolOpS8, BuildGlobalAvgPoolS8, BuildReduceMeanS8;
// kernels_s8_move.cc: Concat and the data-movement ops (whose output shares the input's
// parameters: CheckMoveParamsS8).
S8Builder BuildConcatS8, BuildResizeS8, BuildPadS8, BuildTransposeS8, BuildSplitS8, BuildSliceS8,
    BuildGatherS8, BuildExpandS8;
Status CheckMoveParamsS8(const S8Op& o);

}  // namespace sramplan::exec
