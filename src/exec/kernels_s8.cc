// int8 dispatch of IR ops onto the C runtime's int8 kernels (TFLite Micro semantics), with the
// quantisation parameters and lookup tables of a QuantizedModel (exec/quantize.h).
//
// The dispatch is in two halves (kernels.h): BuildCallsS8 translates an op into a record of runtime
// kernel calls (function, argument values, pointers as operand references, constant arrays), and
// ExecuteCalls runs such a record on the host. The C emitter (src/codegen) prints the same records
// as firmware, so the host executors and the firmware share one translation.
//
// Host-side details that do not change any result:
//   - NCHW convolutions (other than depthwise) stage their input, weights and output through
//     channels-last copies (temporary buffers of the record) so the kernel's inner loop runs over
//     contiguous channels; the integer sums are the same, so the bytes are too.
//   - 3-D convolutions with a (1, kh, kw) kernel run as one 2-D convolution per output depth slice;
//     (kd, 1, 1) kernels run as a 2-D convolution over (D, H*W). Other 3-D convolutions and 3-D
//     pools use the same integer arithmetic in plain loops here (host loops: no firmware kernel).
//   - Linear Resize (input and output share parameters) interpolates with exact rational weights
//     and rounds half away from zero (a host loop too).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "exec/hybrid.h"
#include "exec/kernels_s8_internal.h"

namespace sramplan::exec {

const KernelSignature& Signature(KernelFn fn) {
  static const char* kD = "const sp_tensor_t*";
  static const char* kCS8 = "const int8_t*";
  static const char* kS8 = "int8_t*";
  static const char* kCV = "const void*";
  static const char* kV = "void*";
  static const char* kI = "int32_t";
  static const char* kCI32 = "const int32_t*";
  static const char* kCRq = "const sp_requant_t*";
  static const char* kRq = "sp_requant_t";
  static const char* kPool = "const sp_seg_pool_t*";
  static const char* kLayer = "const sp_seg_layer_s8_t*";
  static const std::map<KernelFn, KernelSignature> kSignatures = {
      {KernelFn::kConvS8,
       {"sp_conv_s8",
        {kD, kCS8, kI, kD, kCS8, kCI32, kCRq, kI, kI, kI, kCI32, kCI32, kCI32, kI, kD, kS8}}},
      {KernelFn::kFullyConnectedS8,
       {"sp_fully_connected_s8", {kD, kCS8, kI, kD, kCS8, kCI32, kCRq, kI, kI, kI, kD, kS8}}},
      {KernelFn::kMaxPoolS8, {"sp_max_pool_s8", {kD, kCS8, kCI32, kCI32, kCI32, kI, kI, kD, kS8}}},
      {KernelFn::kAvgPoolS8,
       {"sp_avg_pool_s8", {kD, kCS8, kCI32, kCI32, kCI32, kI, kI, kI, kD, kS8}}},
      {KernelFn::kGlobalAvgPoolS8, {"sp_global_avg_pool_s8", {kD, kCS8, kI, kI, kD, kS8}}},
      {KernelFn::kGlobalAvgPoolRequantS8,
       {"sp_global_avg_pool_requant_s8", {kD, kCS8, kI, kRq, kI, kI, kI, kD, kS8}}},
      {KernelFn::kAddS8, {"sp_add_s8", {kD, kCS8, kD, kCS8, "const sp_add_s8_params_t*", kD, kS8}}},
      {KernelFn::kSubS8, {"sp_sub_s8", {kD, kCS8, kD, kCS8, "const sp_add_s8_params_t*", kD, kS8}}},
      {KernelFn::kMulS8, {"sp_mul_s8", {kD, kCS8, kD, kCS8, "const sp_mul_s8_params_t*", kD, kS8}}},
      {KernelFn::kLutS8, {"sp_lut_s8", {kD, kCS8, kCS8, kD, kS8}}},
      {KernelFn::kRequantizeS8, {"sp_requantize_s8", {kD, kCS8, kI, kRq, kI, kD, kS8}}},
      {KernelFn::kClampS8, {"sp_clamp_s8", {kD, kCS8, kI, kI, kD, kS8}}},
      {KernelFn::kSoftmaxS8, {"sp_softmax_s8", {kD, kCS8, kI, kCI32, kD, kS8}}},
      {KernelFn::kCopy, {"sp_copy", {kD, kCV, kI, kD, kV}}},
      {KernelFn::kExpand, {"sp_expand", {kD, kCV, kI, kD, kV}}},
      {KernelFn::kSlice, {"sp_slice", {kD, kCV, kCI32, kCI32, kI, kD, kV}}},
      {KernelFn::kGather, {"sp_gather", {kD, kCV, kI, kD, "const int64_t*", kI, kD, kV}}},
      {KernelFn::kTranspose, {"sp_transpose", {kD, kCV, kCI32, kI, kD, kV}}},
      {KernelFn::kPad, {"sp_pad", {kD, kCV, kCI32, "sp_pad_mode_t", kCV, kI, kD, kV}}},
      {KernelFn::kResizeNearest,
       {"sp_resize_nearest", {kD, kCV, "sp_coord_mode_t", "sp_nearest_mode_t", kI, kD, kV}}},
      {KernelFn::kSegConvS8,
       {"sp_seg_conv_s8", {kPool, kI, kI, "const sp_seg_conv_shape_t*", kLayer, kS8, kI}}},
      {KernelFn::kSegDepthwiseS8,
       {"sp_seg_depthwise_s8", {kPool, kI, kI, "const sp_seg_conv_shape_t*", kLayer, kS8, kI}}},
      {KernelFn::kSegFullyConnectedS8,
       {"sp_seg_fully_connected_s8", {kPool, kI, kI, "const sp_seg_fc_shape_t*", kLayer, kS8, kI}}},
      {KernelFn::kSegBottleneckS8,
       {"sp_seg_bottleneck_s8",
        {kPool, kI, kI, "const sp_seg_bottleneck_shape_t*", "const sp_seg_bottleneck_s8_t*", kS8, kI}}},
  };
  auto it = kSignatures.find(fn);
  SP_CHECK(it != kSignatures.end());
  return it->second;
}

// The int8 builders of the ops that take an S8Op, by op type (BuildCallsS8 dispatches through it;
// CheckInt8Support lists it with Conv, Gemm / MatMul and the activations as the supported ops).
namespace {

const std::map<std::string, S8Builder*>& S8Builders() {
  static const std::map<std::string, S8Builder*> kBuilders = {
      {"BatchNormalization", BuildBatchNormS8},
      {"Add", BuildBinaryS8},
      {"Sub", BuildBinaryS8},
      {"Mul", BuildBinaryS8},
      {"Softmax", BuildSoftmaxS8},
      {"MaxPool", BuildPoolOpS8},
      {"AveragePool", BuildPoolOpS8},
      {"GlobalAveragePool", BuildGlobalAvgPoolS8},
      {"ReduceMean", BuildReduceMeanS8},
      {"Concat", BuildConcatS8},
      {"Resize", BuildResizeS8},
      {"Upsample", BuildResizeS8},
      {"Pad", BuildPadS8},
      {"Transpose", BuildTransposeS8},
      {"Split", BuildSplitS8},
      {"Slice", BuildSliceS8},
      {"Gather", BuildGatherS8},
      {"Expand", BuildExpandS8},
  };
  return kBuilders;
}

}  // namespace

StatusOr<OpCalls> BuildCallsS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q) {
  const std::string& t = op.type;
  if (ir::IsViewOp(t)) return OpCalls{};
  if (IsHybridHostOp(g, op))
    return Unsupported("op '" + op.name + "' (" + t + ") runs on the host in float32 arithmetic in this hybrid int8 " +
                       "graph (exec/hybrid.h); it has no int8 kernel call");
  SP_RETURN_IF_ERROR(Matches(g, q));
  const std::vector<int8_t>& table = q.tables.at(op.id.value());
  if (op.outputs.empty() || op.inputs.empty())
    return InvalidArgument("op '" + op.name + "' has no inputs or outputs");
  const S8Op o{g, op, q, table, Contig(g.tensor(op.outputs[0]).shape)};
  if (t == "Conv") return BuildConv(g, op, q);
  if (t == "Gemm" || t == "MatMul") return BuildFullyConnected(g, op, q);
  if (t == "Relu" || t == "Clip" || IsLutOp(t)) return BuildActivationS8(o);
  // Data movement: the output shares the input's parameters (quantize.h), so bytes move unchanged.
  if (t == "Resize" || t == "Upsample" || t == "Pad" || t == "Transpose" || t == "Slice" || t == "Split" || t == "Gather" || t == "Expand")
    SP_RETURN_IF_ERROR(CheckMoveParamsS8(o));
  auto it = S8Builders().find(t);
  if (it != S8Builders().end()) return it->second(o);
  return Unsupported("int8 execution has no kernel for op '" + op.name + "' of type " +
                     (t == "Opaque" ? "Opaque:" + op.original_type : t) +
                     " (verify this model with --dtype float32)");
}

Status RunKernelS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                   const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out,
                   const OperandBytes& bytes) {
  if (ir::IsViewOp(op.type)) return Status::Ok();
  if (IsHybridHostOp(g, op)) return RunHybridHostOp(g, op, q, in, out, bytes);
  if (in.size() != op.inputs.size() || out.size() != op.outputs.size())
    return InvalidArgument("op '" + op.name + "' (" + op.type + "): the executor needs one pointer per operand");
  SP_ASSIGN_OR_RETURN(OpCalls calls, BuildCallsS8(g, op, q));
  SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, true, bytes));
  return ExecuteCalls(op, calls, in, out, nullptr);
}

std::string Int8KernelMissing(const ir::Graph& g, const ir::Op& op) {
  if (ir::IsViewOp(op.type) || IsLutOp(op.type)) return "";
  if (op.type == "Gemm" || op.type == "MatMul") {
    if (op.inputs.size() < 2 || g.tensor(op.inputs[1]).kind != ir::TensorKind::kConstant ||
        g.tensor(op.inputs[0]).kind == ir::TensorKind::kConstant)
      return op.type + " of two activations";
    if (g.tensor(op.inputs[1]).shape.size() != 2)
      return op.type + " with a constant B of rank " + std::to_string(g.tensor(op.inputs[1]).shape.size());
    return "";
  }
  if (op.type == "Conv")
    return op.inputs.size() < 2 || g.tensor(op.inputs[1]).kind != ir::TensorKind::kConstant
               ? "Conv with non-constant weights"
               : "";
  if (op.type != "Relu" && op.type != "Clip" && !S8Builders().count(op.type))
    return op.type == "Opaque" ? "Opaque:" + op.original_type : op.type;
  return "";
}

Status CheckInt8Support(const ir::Graph& g) {
  std::map<std::string, std::pair<int, std::string>> missing;  // what -> (count, first op)
  for (const ir::Op& op : g.ops()) {
    // A hybrid graph's float32 ops and its conversions run on the host (exec/hybrid.h).
    if (IsHybridHostOp(g, op)) continue;
    const std::string what = Int8KernelMissing(g, op);
    if (what.empty()) continue;
    auto& m = missing[what];
    if (m.first++ == 0) m.second = op.name;
  }
  if (missing.empty()) return Status::Ok();
  std::string msg;
  bool float_kernel = false;  // some could run in float32 in a hybrid graph
  for (const auto& [what, m] : missing) {
    msg += (msg.empty() ? "" : ", ") + what + " (" + std::to_string(m.first) +
           (m.first == 1 ? " op" : " ops") + ", first '" + m.second + "')";
    for (const ir::Op& op : g.ops())
      if (op.name == m.second) float_kernel |= HasKernelF32(g, op);
  }
  return Unsupported("int8 execution of '" + g.name + "' is not implemented for " + msg +
                     (float_kernel ? " (an op with a float32 kernel runs in float32 once the graph is made hybrid: "
                                     "exec::MakeHybridInt8, which the CLI runs for --dtype int8); verify this model "
                                     "with --dtype float32"
                                   : ": they have no int8 kernel and no float32 kernel either, so the executor cannot "
                                     "run this model in any dtype; `sramplan plan` still plans it (plans need no "
                                     "kernels), but `verify` cannot check the plan by execution"));
}

}  // namespace sramplan::exec
