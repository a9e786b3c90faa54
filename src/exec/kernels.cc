#include "exec/kernels.h"
#include "exec/hybrid.h"
#include "exec/window_args.h"

#include <algorithm>
#include <cstring>

#include "sramplan_rt_f32.h"

namespace sramplan::exec {
namespace {

const float* F(const uint8_t* p) { return reinterpret_cast<const float*>(p); }
float* F(uint8_t* p) { return reinterpret_cast<float*>(p); }

Status Check(sp_status_t s, const ir::Op& op) {
  if (s == SP_OK) return Status::Ok();
  return InternalError("kernel for op '" + op.name + "' (" + op.type + ") rejected its arguments");
}

int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace

sp_tensor_t Contig(const std::vector<int64_t>& shape) {
  sp_tensor_t t;
  int32_t dims[SP_MAX_DIMS];
  int r = static_cast<int>(shape.size());
  for (int i = 0; i < r; ++i) dims[i] = static_cast<int32_t>(shape[i]);
  sp_tensor_init_contiguous(&t, r, dims);
  return t;
}

std::vector<int32_t> I32(const std::vector<int64_t>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

sp_tensor_t Describe(const ir::Graph& g, const std::vector<int64_t>& shape, bool feature_map) {
  if (!feature_map || g.layout != ir::Layout::kNHWC || shape.size() < 3) return Contig(shape);
  // NHWC storage, logical (N, C, D1..Dk).
  sp_tensor_t c = Contig(shape);
  sp_tensor_t t = c;
  int r = static_cast<int>(shape.size());
  t.dims[0] = c.dims[0];
  t.strides[0] = c.strides[0];
  t.dims[1] = c.dims[r - 1];
  t.strides[1] = c.strides[r - 1];
  for (int i = 1; i < r - 1; ++i) {
    t.dims[i + 1] = c.dims[i];
    t.strides[i + 1] = c.strides[i];
  }
  return t;
}

int64_t SpanElements(const sp_tensor_t& t) { return sp_tensor_span(&t); }

KernelOperandTypes KernelTypes(const ir::Graph& g, const ir::Op& op, bool int8) {
  KernelOperandTypes k;
  k.in.assign(op.inputs.size(), std::nullopt);
  k.out.assign(op.outputs.size(), std::nullopt);
  const std::string& t = op.type;
  if (ir::IsViewOp(t) || op.inputs.empty() || op.outputs.empty()) return k;
  auto dt = [&](ir::TensorId id) { return g.tensor(id).dtype; };
  const ir::DataType in0 = dt(op.inputs[0]);
  // Data movement: the kernels move elements of the (first) input's size into every output.
  auto moves = [&](ir::DataType elem, size_t data_inputs) {
    for (size_t i = 0; i < data_inputs && i < k.in.size(); ++i) k.in[i] = elem;
    for (auto& o : k.out) o = elem;
  };
  const bool linear_resize = (t == "Resize" || t == "Upsample") &&
                             (op.attrs.GetString("mode", "nearest") == "linear" ||
                              op.attrs.GetString("mode", "nearest") == "bilinear");
  if (t == "Concat") {
    moves(dt(op.outputs[0]), op.inputs.size());
    return k;
  }
  if (t == "Split" || t == "Slice" || t == "Transpose" || t == "Pad" || t == "Expand" ||
      ((t == "Resize" || t == "Upsample") && !linear_resize)) {
    moves(in0, 1);
    return k;
  }
  if (t == "Gather") {
    moves(in0, 1);
    if (k.in.size() >= 2) k.in[1] = ir::DataType::kInt64;
    return k;
  }
  if (t == "Where") {
    moves(dt(op.outputs[0]), 3);
    k.in[0] = ir::DataType::kBool;
    return k;
  }
  if (t == "Cast" || t == "Quantize" || t == "Dequantize") {
    k.in[0] = in0;
    k.out[0] = dt(op.outputs[0]);
    return k;
  }
  // Compute: one element type (float32, or int8 with int32 biases); the kernels write output 0 only.
  const ir::DataType e = int8 ? ir::DataType::kInt8 : ir::DataType::kFloat32;
  k.in[0] = e;
  k.out[0] = e;
  const bool weighted = t == "Conv" || t == "ConvTranspose" || t == "Gemm";
  if ((weighted || t == "MatMul" || ir::IsBinaryElementwise(t) || t == "PRelu") && k.in.size() >= 2)
    k.in[1] = e;
  if (weighted && k.in.size() >= 3) k.in[2] = int8 ? ir::DataType::kInt32 : ir::DataType::kFloat32;
  if (!int8 && (t == "BatchNormalization" || t == "LayerNormalization"))
    for (auto& i : k.in) i = e;
  return k;
}

namespace {

Status CheckOperands(const ir::Graph& g, const ir::Op& op, bool int8, const OperandBytes* bytes) {
  const KernelOperandTypes k = KernelTypes(g, op, int8);
  const char* path = int8 ? "int8" : "float32";
  auto check = [&](const std::vector<ir::TensorId>& ids, const std::vector<std::optional<ir::DataType>>& types,
                   const std::vector<int64_t>* have, const char* side) -> Status {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!types[i]) continue;
      const ir::Tensor& t = g.tensor(ids[i]);
      const int64_t need = t.NumElements() * ir::DataTypeSize(*types[i]);
      const std::string what = "op '" + op.name + "' (" + op.type + "): the " + path + " kernel ";
      const std::string which = std::string(side) + " '" + t.name + "'";
      // Same-size types are reinterpreted only where the kernel moves bytes (data movement); a
      // compute kernel needs its own type.
      const bool moves = ir::DataTypeSize(*types[i]) == ir::DataTypeSize(t.dtype) &&
                         (op.type == "Concat" || op.type == "Split" || op.type == "Slice" ||
                          op.type == "Transpose" || op.type == "Pad" || op.type == "Expand" ||
                          op.type == "Gather" || op.type == "Where" || op.type == "Resize" ||
                          op.type == "Upsample");
      if (t.dtype != *types[i] && !moves)
        return InvalidArgument(what + "uses " + ir::DataTypeName(*types[i]) + " at " + which + ", which is " +
                               ir::DataTypeName(t.dtype) + " (" + std::to_string(t.Bytes()) + " bytes, the kernel would touch " +
                               std::to_string(need) + "); refusing to run it");
      if (!have) continue;
      if (i >= have->size() || (*have)[i] != need)
        return InvalidArgument(what + "touches " + std::to_string(need) + " bytes of " + which + " (" +
                               ir::DataTypeName(*types[i]) + ") but its buffer holds " +
                               (i < have->size() ? std::to_string((*have)[i]) : std::string("no")) +
                               " bytes; refusing to run it");
    }
    return Status::Ok();
  };
  SP_RETURN_IF_ERROR(check(op.inputs, k.in, bytes ? &bytes->in : nullptr, "input"));
  return check(op.outputs, k.out, bytes ? &bytes->out : nullptr, "output");
}

}  // namespace

Status CheckKernelOperandTypes(const ir::Graph& g, const ir::Op& op, bool int8) {
  return CheckOperands(g, op, int8, nullptr);
}

Status CheckKernelOperands(const ir::Graph& g, const ir::Op& op, bool int8, const OperandBytes& bytes) {
  return CheckOperands(g, op, int8, &bytes);
}

namespace {

// The op RunKernel runs, with what every family's kernels read.
struct F32Op {
  const ir::Graph& g;
  const ir::Op& op;
  const std::vector<const uint8_t*>& in;
  const std::vector<uint8_t*>& out;
  sp_tensor_t o0;  // row-major descriptor of output 0
  const std::vector<int64_t>& shape(size_t i) const { return g.tensor(op.inputs[i]).shape; }
  const std::vector<int64_t>& oshape(size_t i) const { return g.tensor(op.outputs[i]).shape; }
  int elem(ir::TensorId id) const { return ir::DataTypeSize(g.tensor(id).dtype); }
};

// Conv.
Status RunConvF32(const F32Op& ko) {
  const ir::Graph& g = ko.g;
  const ir::Op& op = ko.op;
  const std::string& t = op.type;
  if (t == "Conv") {
    sp_tensor_t x = Describe(g, ko.shape(0), true), y = Describe(g, ko.oshape(0), true);
    sp_tensor_t w = Describe(g, ko.shape(1), true);
    SP_ASSIGN_OR_RETURN(WindowArgs wa, ConvWindow(g, op));
    const float* bias = op.inputs.size() >= 3 ? F(ko.in[2]) : nullptr;
    SP_RETURN_IF_ERROR(Check(sp_conv_f32(&x, F(ko.in[0]), &w, F(ko.in[1]), bias, wa.strides.data(), wa.pads.data(),
                                         wa.dilations.data(), wa.group, &y, F(ko.out[0])),
                             op));
    std::string act = op.attrs.GetString("activation", "none");
    if (act == "relu") return Check(sp_relu_f32(&y, F(ko.out[0]), &y, F(ko.out[0])), op);
    if (act == "relu6") return Check(sp_clip_f32(&y, F(ko.out[0]), 0.0f, 6.0f, &y, F(ko.out[0])), op);
    return Status::Ok();
  }
  return InternalError("op '" + ko.op.name + "': no float32 kernel of this family for " + ko.op.type);
}

// Gemm and MatMul.
Status RunFullyConnectedF32(const F32Op& ko) {
  const ir::Op& op = ko.op;
  const std::string& t = op.type;
  if (t == "Gemm") {
    sp_tensor_t a = Contig(ko.shape(0)), b = Contig(ko.shape(1));
    sp_tensor_t c = op.inputs.size() >= 3 ? Contig(ko.shape(2)) : sp_tensor_t{};
    return Check(sp_gemm_f32(&a, F(ko.in[0]), &b, F(ko.in[1]), op.inputs.size() >= 3 ? &c : nullptr,
                             op.inputs.size() >= 3 ? F(ko.in[2]) : nullptr,
                             static_cast<float>(op.attrs.GetFloat("alpha", 1.0)),
                             static_cast<float>(op.attrs.GetFloat("beta", 1.0)),
                             static_cast<int32_t>(op.attrs.GetInt("transA", 0)),
                             static_cast<int32_t>(op.attrs.GetInt("transB", 0)), &ko.o0, F(ko.out[0])),
                 op);
  }
  if (t == "MatMul") {
    sp_tensor_t a = Contig(ko.shape(0)), b = Contig(ko.shape(1));
    return Check(sp_matmul_f32(&a, F(ko.in[0]), &b, F(ko.in[1]), &ko.o0, F(ko.out[0])), op);
  }
  return InternalError("op '" + ko.op.name + "': no float32 kernel of this family for " + ko.op.type);
}

// BatchNormalization and LayerNormalization.
Status RunNormF32(const F32Op& ko) {
  const ir::Graph& g = ko.g;
  const ir::Op& op = ko.op;
  const std::string& t = op.type;
  if (t == "BatchNormalization") {
    sp_tensor_t x = Describe(g, ko.shape(0), true), y = Describe(g, ko.oshape(0), true);
    if (op.inputs.size() < 5) return InvalidArgument("op '" + op.name + "': BatchNormalization needs 5 inputs");
    return Check(sp_batch_norm_f32(&x, F(ko.in[0]), F(ko.in[1]), F(ko.in[2]), F(ko.in[3]), F(ko.in[4]),
                                   static_cast<float>(op.attrs.GetFloat("epsilon", 1e-5)), &y, F(ko.out[0])),
                 op);
  }
  if (t == "LayerNormalization") {
    sp_tensor_t x = Contig(ko.shape(0));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", -1), ko.shape(0).size()));
    return Check(sp_layer_norm_f32(&x, F(ko.in[0]), axis, op.inputs.size() >= 2 ? F(ko.in[1]) : nullptr,
                                   op.inputs.size() >= 3 ? F(ko.in[2]) : nullptr,
                                   static_cast<float>(op.attrs.GetFloat("epsilon", 1e-5)), &ko.o0, F(ko.out[0])),
                 op);
  }
  return InternalError("op '" + ko.op.name + "': no float32 kernel of this family for " + ko.op.type);
}

// MaxPool / AveragePool, GlobalAveragePool / GlobalMaxPool, ReduceMean.
Status RunPoolF32(const F32Op& ko) {
  const ir::Graph& g = ko.g;
  const ir::Op& op = ko.op;
  const std::string& t = op.type;
  if (t == "MaxPool" || t == "AveragePool") {
    sp_tensor_t x = Describe(g, ko.shape(0), true), y = Describe(g, ko.oshape(0), true);
    SP_ASSIGN_OR_RETURN(WindowArgs wa, PoolWindow(g, op));
    if (t == "MaxPool")
      return Check(sp_max_pool_f32(&x, F(ko.in[0]), wa.kernel.data(), wa.strides.data(), wa.pads.data(),
                                   wa.dilations.data(), &y, F(ko.out[0])),
                   op);
    return Check(sp_avg_pool_f32(&x, F(ko.in[0]), wa.kernel.data(), wa.strides.data(), wa.pads.data(),
                                 static_cast<int32_t>(op.attrs.GetInt("count_include_pad", 0)), &y, F(ko.out[0])),
                 op);
  }
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
    sp_tensor_t x = Describe(g, ko.shape(0), true), y = Describe(g, ko.oshape(0), true);
    return Check(t == "GlobalAveragePool" ? sp_global_avg_pool_f32(&x, F(ko.in[0]), &y, F(ko.out[0]))
                                          : sp_global_max_pool_f32(&x, F(ko.in[0]), &y, F(ko.out[0])),
                 op);
  }
  if (t == "ReduceMean") {
    sp_tensor_t x = Contig(ko.shape(0));
    std::vector<int32_t> axes;
    for (int64_t a : op.attrs.GetInts("axes")) axes.push_back(static_cast<int32_t>(NormAxis(a, ko.shape(0).size())));
    if (axes.empty())
      for (size_t a = 0; a < ko.shape(0).size(); ++a) axes.push_back(static_cast<int32_t>(a));
    return Check(sp_reduce_mean_f32(&x, F(ko.in[0]), axes.data(), static_cast<int32_t>(axes.size()), &ko.o0, F(ko.out[0])), op);
  }
  return InternalError("op '" + ko.op.name + "': no float32 kernel of this family for " + ko.op.type);
}

// Data movement: Concat, Split, Slice, Gather, Transpose, Pad, Expand, Where, Resize / Upsample.
Status RunMoveF32(const F32Op& ko) {
  const ir::Graph& g = ko.g;
  const ir::Op& op = ko.op;
  const std::string& t = op.type;
  if (t == "Concat") {
    std::vector<sp_tensor_t> d;
    std::vector<const sp_tensor_t*> dp;
    std::vector<const void*> ptrs;
    d.reserve(op.inputs.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      d.push_back(Contig(ko.shape(i)));
      ptrs.push_back(ko.in[i]);
    }
    for (auto& x : d) dp.push_back(&x);
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 1), ko.oshape(0).size()));
    return Check(sp_concat(static_cast<int32_t>(d.size()), dp.data(), ptrs.data(), axis, ko.elem(op.outputs[0]), &ko.o0, ko.out[0]),
                 op);
  }
  if (t == "Split") {
    int64_t rank = static_cast<int64_t>(ko.shape(0).size());
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), rank));
    sp_tensor_t x = Contig(ko.shape(0));
    int64_t start = 0;
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      std::vector<int32_t> starts(rank, 0);
      starts[axis] = static_cast<int32_t>(start);
      sp_tensor_t y = Contig(ko.oshape(k));
      SP_RETURN_IF_ERROR(Check(sp_slice(&x, ko.in[0], starts.data(), nullptr, ko.elem(op.inputs[0]), &y, ko.out[k]), op));
      start += ko.oshape(k)[axis];
    }
    return Status::Ok();
  }
  if (t == "Slice") {
    const auto& xs = ko.shape(0);
    std::vector<int32_t> starts, steps;
    SliceStartsSteps(op, xs, &starts, &steps);
    sp_tensor_t x = Contig(xs);
    return Check(sp_slice(&x, ko.in[0], starts.data(), steps.data(), ko.elem(op.inputs[0]), &ko.o0, ko.out[0]), op);
  }
  if (t == "Gather") {
    sp_tensor_t x = Contig(ko.shape(0)), idx = Contig(ko.shape(1));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), ko.shape(0).size()));
    if (g.tensor(op.inputs[1]).dtype != ir::DataType::kInt64)
      return Unsupported("op '" + op.name + "': Gather indices must be int64");
    return Check(sp_gather(&x, ko.in[0], axis, &idx, reinterpret_cast<const int64_t*>(ko.in[1]), ko.elem(op.inputs[0]), &ko.o0, ko.out[0]),
                 op);
  }
  if (t == "Transpose") {
    sp_tensor_t x = Contig(ko.shape(0));
    std::vector<int64_t> perm = op.attrs.GetInts("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(ko.shape(0).size()) - 1; i >= 0; --i) perm.push_back(i);
    auto p = I32(perm);
    return Check(sp_transpose(&x, ko.in[0], p.data(), ko.elem(op.inputs[0]), &ko.o0, ko.out[0]), op);
  }
  if (t == "Pad") {
    sp_tensor_t x = Contig(ko.shape(0));
    auto pads = I32(op.attrs.GetInts("pads"));
    std::string mode = op.attrs.GetString("mode", "constant");
    sp_pad_mode_t m = mode == "reflect" ? SP_PAD_REFLECT : mode == "edge" ? SP_PAD_EDGE : SP_PAD_CONSTANT;
    // The pad value is one element of the input's type.
    const double v = op.attrs.GetFloat("value", 0.0);
    uint8_t value[8] = {0};
    switch (g.tensor(op.inputs[0]).dtype) {
      case ir::DataType::kFloat32: { float f = static_cast<float>(v); std::memcpy(value, &f, 4); break; }
      case ir::DataType::kInt64: { int64_t i = static_cast<int64_t>(v); std::memcpy(value, &i, 8); break; }
      case ir::DataType::kInt32: { int32_t i = static_cast<int32_t>(v); std::memcpy(value, &i, 4); break; }
      case ir::DataType::kInt16: { int16_t i = static_cast<int16_t>(v); std::memcpy(value, &i, 2); break; }
      case ir::DataType::kInt8: { int8_t i = static_cast<int8_t>(v); std::memcpy(value, &i, 1); break; }
      default: value[0] = static_cast<uint8_t>(v); break;
    }
    return Check(sp_pad(&x, ko.in[0], pads.data(), m, value, ko.elem(op.inputs[0]), &ko.o0, ko.out[0]), op);
  }
  if (t == "Expand") {
    sp_tensor_t x = Contig(ko.shape(0));
    return Check(sp_expand(&x, ko.in[0], ko.elem(op.inputs[0]), &ko.o0, ko.out[0]), op);
  }
  if (t == "Where") {
    sp_tensor_t c = Contig(ko.shape(0)), x = Contig(ko.shape(1)), y = Contig(ko.shape(2));
    return Check(sp_where(&c, ko.in[0], &x, ko.in[1], &y, ko.in[2], ko.elem(op.outputs[0]), &ko.o0, ko.out[0]), op);
  }
  if (t == "Resize" || t == "Upsample") {
    sp_tensor_t x = Contig(ko.shape(0));
    std::string mode = op.attrs.GetString("mode", "nearest");
    std::string ct = op.attrs.GetString("coordinate_transformation_mode", t == "Upsample" ? "asymmetric" : "half_pixel");
    sp_coord_mode_t coord = ct == "asymmetric"           ? SP_COORD_ASYMMETRIC
                            : ct == "align_corners"      ? SP_COORD_ALIGN_CORNERS
                            : ct == "pytorch_half_pixel" ? SP_COORD_PYTORCH_HALF_PIXEL
                                                         : SP_COORD_HALF_PIXEL;
    if (mode == "linear" || mode == "bilinear") {
      // The kernel resizes the last two axes: an NHWC feature map is viewed as (N, C, H, W).
      sp_tensor_t xl = Describe(g, ko.shape(0), true), yl = Describe(g, ko.oshape(0), true);
      return Check(sp_resize_linear_f32(&xl, F(ko.in[0]), coord, &yl, F(ko.out[0])), op);
    }
    std::string nm = op.attrs.GetString("nearest_mode", t == "Upsample" ? "floor" : "round_prefer_floor");
    sp_nearest_mode_t n = nm == "floor" ? SP_NEAREST_FLOOR
                          : nm == "ceil" ? SP_NEAREST_CEIL
                          : nm == "round_prefer_ceil" ? SP_NEAREST_ROUND_PREFER_CEIL
                                                      : SP_NEAREST_ROUND_PREFER_FLOOR;
    return Check(sp_resize_nearest(&x, ko.in[0], coord, n, ko.elem(op.inputs[0]), &ko.o0, ko.out[0]), op);
  }
  return InternalError("op '" + ko.op.name + "': no float32 kernel of this family for " + ko.op.type);
}

// Element-wise ops, Softmax and Cast; any other type has no kernel.
Status RunElementwiseF32(const F32Op& ko) {
  const ir::Graph& g = ko.g;
  const ir::Op& op = ko.op;
  const std::string& t = op.type;
  struct UnaryMap {
    const char* name;
    sp_unary_op_t op;
  };
  static const UnaryMap kUnary[] = {
      {"Relu", SP_UNARY_RELU},       {"Sigmoid", SP_UNARY_SIGMOID}, {"HardSwish", SP_UNARY_HARD_SWISH},
      {"Tanh", SP_UNARY_TANH},       {"Erf", SP_UNARY_ERF},         {"Sqrt", SP_UNARY_SQRT},
      {"Exp", SP_UNARY_EXP},         {"Neg", SP_UNARY_NEG},         {"Log", SP_UNARY_LOG},
      {"Abs", SP_UNARY_ABS},         {"Reciprocal", SP_UNARY_RECIPROCAL}, {"Gelu", SP_UNARY_GELU}};
  for (const auto& u : kUnary)
    if (t == u.name) {
      sp_tensor_t x = Contig(ko.shape(0));
      return Check(sp_unary_f32(&x, F(ko.in[0]), u.op, 0, 0, &ko.o0, F(ko.out[0])), op);
    }
  if (t == "Clip") {
    sp_tensor_t x = Contig(ko.shape(0));
    float lo = static_cast<float>(op.attrs.GetFloat("min", -3.4e38)), hi = static_cast<float>(op.attrs.GetFloat("max", 3.4e38));
    return Check(sp_clip_f32(&x, F(ko.in[0]), lo, hi, &ko.o0, F(ko.out[0])), op);
  }
  if (t == "HardSigmoid") {
    sp_tensor_t x = Contig(ko.shape(0));
    return Check(sp_hard_sigmoid_f32(&x, F(ko.in[0]), static_cast<float>(op.attrs.GetFloat("alpha", 0.2)),
                                     static_cast<float>(op.attrs.GetFloat("beta", 0.5)), &ko.o0, F(ko.out[0])),
                 op);
  }
  if (t == "LeakyRelu" || t == "Elu") {
    sp_tensor_t x = Contig(ko.shape(0));
    return Check(sp_unary_f32(&x, F(ko.in[0]), t == "Elu" ? SP_UNARY_ELU : SP_UNARY_LEAKY_RELU,
                              static_cast<float>(op.attrs.GetFloat("alpha", t == "Elu" ? 1.0 : 0.01)), 0, &ko.o0, F(ko.out[0])),
                 op);
  }
  struct BinaryMap {
    const char* name;
    sp_binary_op_t op;
  };
  static const BinaryMap kBinary[] = {{"Add", SP_BINARY_ADD}, {"Sub", SP_BINARY_SUB}, {"Mul", SP_BINARY_MUL},
                                      {"Div", SP_BINARY_DIV}, {"Pow", SP_BINARY_POW}, {"Max", SP_BINARY_MAX},
                                      {"Min", SP_BINARY_MIN}};
  for (const auto& b : kBinary)
    if (t == b.name) {
      sp_tensor_t x = Contig(ko.shape(0)), y = Contig(ko.shape(1));
      return Check(sp_binary_f32(&x, F(ko.in[0]), &y, F(ko.in[1]), b.op, &ko.o0, F(ko.out[0])), op);
    }
  if (t == "Softmax") {
    sp_tensor_t x = Contig(ko.shape(0));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", -1), ko.shape(0).size()));
    return Check(sp_softmax_f32(&x, F(ko.in[0]), axis, &ko.o0, F(ko.out[0])), op);
  }
  if (t == "Cast") {
    sp_tensor_t x = Contig(ko.shape(0));
    auto rt = [](ir::DataType d, sp_dtype_t* o) {
      switch (d) {
        case ir::DataType::kFloat32: *o = SP_DTYPE_F32; return true;
        case ir::DataType::kInt8: *o = SP_DTYPE_S8; return true;
        case ir::DataType::kUInt8: *o = SP_DTYPE_U8; return true;
        case ir::DataType::kInt16: *o = SP_DTYPE_S16; return true;
        case ir::DataType::kInt32: *o = SP_DTYPE_S32; return true;
        case ir::DataType::kInt64: *o = SP_DTYPE_S64; return true;
        case ir::DataType::kBool: *o = SP_DTYPE_BOOL; return true;
        default: return false;
      }
    };
    sp_dtype_t from, to;
    if (!rt(g.tensor(op.inputs[0]).dtype, &from) || !rt(g.tensor(op.outputs[0]).dtype, &to))
      return Unsupported("op '" + op.name + "': Cast from or to float16 is not executed");
    return Check(sp_cast(&x, ko.in[0], from, &ko.o0, ko.out[0], to), op);
  }
  return Unsupported("the executor has no kernel for op '" + op.name + "' of type " +
                     (t == "Opaque" ? "Opaque:" + op.original_type : t));
}

}  // namespace

Status RunKernel(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                 const std::vector<uint8_t*>& out, const OperandBytes& bytes) {
  const std::string& t = op.type;
  if (ir::IsViewOp(t)) return Status::Ok();
  if (in.size() != op.inputs.size() || out.size() != op.outputs.size() || op.inputs.empty() || op.outputs.empty())
    return InvalidArgument("op '" + op.name + "' (" + t + "): the executor needs one pointer per operand");
  for (ir::TensorId id : op.inputs)
    if (g.tensor(id).dtype == ir::DataType::kFloat16 || g.tensor(id).dtype == ir::DataType::kInt8)
      return Unsupported("op '" + op.name + "': the executor runs float32 graphs (use --dtype float32)");
  SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, false, bytes));
  const sp_tensor_t o0 = Contig(g.tensor(op.outputs[0]).shape);
  const F32Op ko{g, op, in, out, o0};
  if (t == "Quantize" || t == "Dequantize") return RunConversionF32(g, op, in, out, bytes);  // exec/hybrid.h
  if (t == "Conv") return RunConvF32(ko);
  if (t == "Gemm" || t == "MatMul") return RunFullyConnectedF32(ko);
  if (t == "BatchNormalization" || t == "LayerNormalization") return RunNormF32(ko);
  if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool" || t == "GlobalMaxPool" ||
      t == "ReduceMean")
    return RunPoolF32(ko);
  if (t == "Concat" || t == "Split" || t == "Slice" || t == "Gather" || t == "Transpose" || t == "Pad" ||
      t == "Expand" || t == "Where" || t == "Resize" || t == "Upsample")
    return RunMoveF32(ko);
  return RunElementwiseF32(ko);
}

Status RunDepthwiseInPlace(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                           uint8_t* out, uint8_t* scratch, int64_t scratch_bytes, const OperandBytes& bytes) {
  if (!ir::IsDepthwiseConv(g, op) || g.tensor(op.inputs[0]).dtype != ir::DataType::kFloat32)
    return Unsupported("op '" + op.name + "': in-place execution is only for float32 depthwise convolutions");
  if (in.size() != op.inputs.size() || op.inputs.size() < 2)
    return InvalidArgument("op '" + op.name + "': the executor needs one pointer per operand");
  SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, false, bytes));
  const auto& xs = g.tensor(op.inputs[0]).shape;
  const auto& ys = g.tensor(op.outputs[0]).shape;
  sp_tensor_t x = Describe(g, xs, true), y = Describe(g, ys, true), w = Describe(g, g.tensor(op.inputs[1]).shape, true);
  const int32_t channels = x.dims[1];
  // Scratch: (N, 1, O1..Ok) contiguous.
  std::vector<int64_t> sshape(ys.size());
  sshape[0] = y.dims[0];
  sshape[1] = 1;
  for (size_t i = 2; i < ys.size(); ++i) sshape[i] = y.dims[i];
  sp_tensor_t sc = Contig(sshape);
  if (SpanElements(sc) * 4 > scratch_bytes)
    return Status(StatusCode::kMismatch, "op '" + op.name + "': the scratch buffer holds " + std::to_string(scratch_bytes) +
                                             " bytes but one channel needs " + std::to_string(SpanElements(sc) * 4));
  SP_ASSIGN_OR_RETURN(WindowArgs wa, ConvWindow(g, op));
  const float* bias = op.inputs.size() >= 3 ? F(in[2]) : nullptr;
  std::string act = op.attrs.GetString("activation", "none");
  sp_tensor_t xc = x, yc = y, wc = w;
  xc.dims[1] = yc.dims[1] = 1;
  wc.dims[0] = 1;
  float* s = F(scratch);
  for (int32_t c = 0; c < channels; ++c) {
    const float* xp = F(in[0]) + static_cast<int64_t>(c) * x.strides[1];
    const float* wp = F(in[1]) + static_cast<int64_t>(c) * w.strides[0];
    SP_RETURN_IF_ERROR(Check(sp_conv_f32(&xc, xp, &wc, wp, bias ? bias + c : nullptr, wa.strides.data(), wa.pads.data(),
                                         wa.dilations.data(), 1, &sc, s),
                             op));
    if (act == "relu") SP_RETURN_IF_ERROR(Check(sp_relu_f32(&sc, s, &sc, s), op));
    if (act == "relu6") SP_RETURN_IF_ERROR(Check(sp_clip_f32(&sc, s, 0.0f, 6.0f, &sc, s), op));
    float* yp = F(out) + static_cast<int64_t>(c) * y.strides[1];
    SP_RETURN_IF_ERROR(Check(sp_copy(&sc, s, 4, &yc, yp), op));
  }
  return Status::Ok();
}

void SliceStartsSteps(const ir::Op& op, const std::vector<int64_t>& xs, std::vector<int32_t>* starts,
                      std::vector<int32_t>* steps) {
  const int64_t rank = static_cast<int64_t>(xs.size());
  starts->assign(rank, 0);
  steps->assign(rank, 1);
  auto st = op.attrs.GetInts("starts"), axes = op.attrs.GetInts("axes"), sp = op.attrs.GetInts("steps");
  for (size_t k = 0; k < st.size(); ++k) {
    int64_t a = k < axes.size() ? NormAxis(axes[k], rank) : static_cast<int64_t>(k);
    int64_t step = k < sp.size() ? sp[k] : 1;
    int64_t s = st[k];
    if (s < 0) s += xs[a];
    s = step > 0 ? std::clamp<int64_t>(s, 0, xs[a]) : std::clamp<int64_t>(s, 0, xs[a] - 1);
    (*starts)[a] = static_cast<int32_t>(s);
    (*steps)[a] = static_cast<int32_t>(step);
  }
}

}  // namespace sramplan::exec
