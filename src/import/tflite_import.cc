// .tflite (subgraph 0) -> ir::Graph in NHWC. Quantised tensors (int8, uint8, int16, and int32 biases)
// become float32 tensors that keep the file's quantisation parameters, with their constant data
// dequantised (scale * (q - zero_point), per channel along quantized_dimension): `--dtype int8` (the
// CLI's default) then plans them at the file's sizes (int8 activations and weights, int32 biases),
// and `verify` runs the model's own weights. Constant int32 operands that are parameters (RESHAPE's
// shape, MEAN's axes, PAD's paddings, TRANSPOSE's perm, STRIDED_SLICE's begin/end/strides) become
// attributes. Fused activations become the Conv `activation` attribute (relu, relu6).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "import/import.h"
#include "import/tflite_model.h"
#include "support/int_math.h"

namespace sramplan::import {
namespace {

namespace tfl = tflite;

constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;
constexpr int kMaxWindow = 1 << 16;  // largest stride, dilation or pooling window accepted

std::string Dims(const std::vector<int64_t>& s) {
  std::string r;
  for (int64_t d : s) r += (r.empty() ? "" : ",") + std::to_string(d);
  return "[" + r + "]";
}

class TfliteImporter {
 public:
  TfliteImporter(const std::string& bytes, const tfl::Model& m, const std::string& name, const ImportOptions& o)
      : bytes_(bytes), m_(m), sg_(m.subgraphs[0]), options_(o), ir_names_(tfl::IrTensorNames(m.subgraphs[0])) {
    g_.name = name;
    g_.layout = ir::Layout::kNHWC;
  }

  StatusOr<ir::Graph> Run() {
    SP_RETURN_IF_ERROR(CheckTensors());
    for (size_t i = 0; i < sg_.operators.size(); ++i) {
      Status s = Convert(static_cast<int>(i), sg_.operators[i]);
      if (!s.ok())
        return s.WithContext("operator " + std::to_string(i) + " (" + tfl::BuiltinName(sg_.operators[i].builtin) + ")");
    }
    for (int t : sg_.inputs)
      if (!ir_.count(t)) SP_RETURN_IF_ERROR(Activation(t).status());
    SP_RETURN_IF_ERROR(ir::VerifyGraph(g_));
    return std::move(g_);
  }

 private:
  const tfl::Tensor& T(int t) const { return sg_.tensors[t]; }
  bool IsConstant(int t) const { return m_.buffers[T(t).buffer].size > 0; }

  std::string Where(int t) const { return "tensor " + std::to_string(t) + " ('" + T(t).name + "')"; }

  // Shapes: every dim >= 1 (a scalar is rank 0), bytes within kMaxTensorBytes, a type sramplan sizes.
  Status CheckTensors() {
    for (size_t i = 0; i < sg_.tensors.size(); ++i) {
      const tfl::Tensor& t = sg_.tensors[i];
      const int esize = tfl::TensorTypeBytes(t.type);
      std::optional<int64_t> bytes = esize;
      if (t.shape.size() > static_cast<size_t>(ir::kMaxRank))
        return InvalidArgument(Where(static_cast<int>(i)) + " has rank " + std::to_string(t.shape.size()) +
                               "; sramplan handles ranks up to " + std::to_string(ir::kMaxRank));
      for (int32_t d : t.shape) {
        if (d < 1)
          return InvalidArgument(Where(static_cast<int>(i)) + " has dimension " + std::to_string(d) +
                                 "; give the model static positive shapes (re-export with a fixed batch)");
        if (bytes) bytes = CheckedMul(*bytes, int64_t{d});
      }
      if (esize > 0 && (!bytes || *bytes > kMaxTensorBytes))
        return InvalidArgument(Where(static_cast<int>(i)) + " would take more than 2^31 bytes; sramplan accepts tensors of at most 2 GiB");
      const auto& q = t.quant;
      if (!q.scale.empty() && q.zero_point.size() > q.scale.size())
        return InvalidArgument(Where(static_cast<int>(i)) + " has " + std::to_string(q.zero_point.size()) +
                               " zero points for " + std::to_string(q.scale.size()) + " scales");
      if (IsConstant(static_cast<int>(i)) && esize > 0 &&
          static_cast<int64_t>(m_.buffers[t.buffer].size) != *bytes)
        return InvalidArgument(Where(static_cast<int>(i)) + " is " + Dims(Shape(t)) + " " + tfl::TensorTypeName(t.type) +
                               " (" + std::to_string(*bytes) + " bytes) but its buffer " + std::to_string(t.buffer) +
                               " holds " + std::to_string(m_.buffers[t.buffer].size) + " bytes; the file is corrupt");
    }
    return Status::Ok();
  }

  static std::vector<int64_t> Shape(const tfl::Tensor& t) { return std::vector<int64_t>(t.shape.begin(), t.shape.end()); }

  StatusOr<ir::DataType> IrType(int t) const {
    switch (T(t).type) {
      case tfl::kFloat32: case tfl::kInt8: case tfl::kUInt8: case tfl::kInt16: return ir::DataType::kFloat32;
      case tfl::kFloat16: return ir::DataType::kFloat16;
      case tfl::kInt32: return T(t).quant.scale.empty() ? ir::DataType::kInt32 : ir::DataType::kFloat32;
      case tfl::kInt64: return ir::DataType::kInt64;
      case tfl::kBool: return ir::DataType::kBool;
      default:
        return Unsupported(Where(t) + " has type " + tfl::TensorTypeName(T(t).type) + ", which sramplan does not plan");
    }
  }

  std::string UniqueName(int t) {
    names_.insert(ir_names_[t]);
    return ir_names_[t];
  }

  ir::Tensor Base(int t) {
    ir::Tensor x;
    x.name = UniqueName(t);
    x.shape = Shape(T(t));
    const auto& q = T(t).quant;
    if (!q.scale.empty()) {
      x.quant.scale = q.scale;
      for (size_t k = 0; k < q.scale.size(); ++k)
        x.quant.zero_point.push_back(k < q.zero_point.size() ? static_cast<int32_t>(q.zero_point[k]) : 0);
      x.quant.axis = x.shape.size() == 1 ? 0 : q.quantized_dimension;
    }
    return x;
  }

  // The IR tensor of a non-constant tflite tensor (graph input, output or activation).
  StatusOr<ir::TensorId> Activation(int t) {
    if (auto it = ir_.find(t); it != ir_.end()) return it->second;
    ir::Tensor x = Base(t);
    SP_ASSIGN_OR_RETURN(x.dtype, IrType(t));
    const bool in = std::find(sg_.inputs.begin(), sg_.inputs.end(), t) != sg_.inputs.end();
    const bool out = std::find(sg_.outputs.begin(), sg_.outputs.end(), t) != sg_.outputs.end();
    if (in && out) return Unsupported(Where(t) + " is both a model input and a model output");
    x.kind = in ? ir::TensorKind::kInput : out ? ir::TensorKind::kOutput : ir::TensorKind::kActivation;
    ir::TensorId id = g_.AddTensor(std::move(x));
    ir_[t] = id;
    return id;
  }

  // The values of constant tensor t as doubles (dequantised when it has a scale), in file order.
  std::vector<double> Values(int t, bool dequantise) const {
    const tfl::Tensor& x = T(t);
    std::string_view d = tfl::BufferData(bytes_, m_, x.buffer);
    const int es = tfl::TensorTypeBytes(x.type);
    const size_t n = es > 0 ? d.size() / es : 0;
    std::vector<double> v(n);
    // Elements per step of the quantised dimension (per-channel scales).
    int64_t inner = 1, channels = 1;
    // A rank-1 tensor (a bias) is quantised along its only dimension, whatever quantized_dimension says
    // (converters write 3 for some biases; TFLM ignores it).
    const int qd = x.shape.size() == 1 ? 0 : x.quant.quantized_dimension;
    if (x.quant.scale.size() > 1 && qd >= 0 && qd < static_cast<int>(x.shape.size())) {
      channels = x.shape[qd];
      for (size_t k = qd + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
    }
    for (size_t i = 0; i < n; ++i) {
      const char* p = d.data() + i * es;
      double q = 0;
      switch (x.type) {
        case tfl::kInt8: q = static_cast<int8_t>(*p); break;
        case tfl::kUInt8: q = static_cast<uint8_t>(*p); break;
        case tfl::kInt16: { int16_t s; std::memcpy(&s, p, 2); q = s; break; }
        case tfl::kInt32: { int32_t s; std::memcpy(&s, p, 4); q = s; break; }
        case tfl::kInt64: { int64_t s; std::memcpy(&s, p, 8); q = static_cast<double>(s); break; }
        case tfl::kFloat32: { float s; std::memcpy(&s, p, 4); q = s; break; }
        default: break;
      }
      if (dequantise && !x.quant.scale.empty() && x.type != tfl::kFloat32) {
        size_t c = x.quant.scale.size() > 1 ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels) : 0;
        if (c >= x.quant.scale.size()) c = 0;
        const double zp = c < x.quant.zero_point.size() ? static_cast<double>(x.quant.zero_point[c]) : 0.0;
        q = x.quant.scale[c] * (q - zp);
      }
      v[i] = q;
    }
    return v;
  }

  // An integer parameter vector from constant input k of op (RESHAPE's shape, MEAN's axes, ...).
  StatusOr<std::vector<int64_t>> Param(const tfl::Operator& op, size_t k, const std::string& what) const {
    if (k >= op.inputs.size() || op.inputs[k] < 0)
      return InvalidArgument("needs its " + what + " as input " + std::to_string(k));
    const int t = op.inputs[k];
    if (!IsConstant(t) || (T(t).type != tfl::kInt32 && T(t).type != tfl::kInt64))
      return Unsupported("its " + what + " (" + Where(t) + ") must be a constant int32 tensor");
    std::vector<int64_t> v;
    for (double d : Values(t, false)) v.push_back(static_cast<int64_t>(d));
    return v;
  }

  // A constant tflite tensor as a float32 IR constant (dequantised), optionally re-laid out by
  // `permute` (destination index for each file index) into `shape`.
  StatusOr<ir::TensorId> Constant(int t, std::vector<int64_t> shape = {}, const std::vector<size_t>* permute = nullptr) {
    if (!permute && shape.empty())
      if (auto it = ir_.find(t); it != ir_.end()) return it->second;
    ir::Tensor x = Base(t);
    x.kind = ir::TensorKind::kConstant;
    if (!shape.empty()) x.shape = std::move(shape);
    SP_ASSIGN_OR_RETURN(x.dtype, IrType(t));
    const std::vector<double> v = Values(t, true);
    if (x.dtype == ir::DataType::kFloat32) {
      std::vector<float> f(v.size());
      for (size_t i = 0; i < v.size(); ++i) f[permute ? (*permute)[i] : i] = static_cast<float>(v[i]);
      x.data.resize(f.size() * 4);
      std::memcpy(x.data.data(), f.data(), x.data.size());
    } else {
      std::string_view d = tfl::BufferData(bytes_, m_, T(t).buffer);
      x.data.assign(d.begin(), d.end());
    }
    ir::TensorId id = g_.AddTensor(std::move(x));
    if (!permute) ir_[t] = id;
    return id;
  }

  StatusOr<ir::TensorId> Input(const tfl::Operator& op, size_t k) {
    if (k >= op.inputs.size() || op.inputs[k] < 0) return InvalidArgument("lacks input " + std::to_string(k));
    const int t = op.inputs[k];
    return IsConstant(t) ? Constant(t) : Activation(t);
  }

  StatusOr<std::string> FusedActivation(int code) {
    switch (code) {
      case 0: return std::string("none");
      case 1: return std::string("relu");
      case 3: return std::string("relu6");
      default:
        return Unsupported("fused activation " + std::to_string(code) +
                           " (RELU_N1_TO_1, TANH or SIGN_BIT) is not supported; sramplan maps NONE, RELU and RELU6");
    }
  }

  // ONNX-style pads [top, left, bottom, right] for TFLite's SAME (0) or VALID (1) padding.
  static std::vector<int64_t> Pads(int padding, int64_t ih, int64_t iw, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                   int64_t dh, int64_t dw) {
    if (padding != 0) return {0, 0, 0, 0};
    auto total = [](int64_t in, int64_t k, int64_t s, int64_t d) {
      const int64_t out = (in + s - 1) / s, eff = (k - 1) * d + 1;
      return std::max<int64_t>(0, (out - 1) * s + eff - in);
    };
    const int64_t th = total(ih, kh, sh, dh), tw = total(iw, kw, sw, dw);
    return {th / 2, tw / 2, th - th / 2, tw - tw / 2};
  }

  ir::OpId Add(const std::string& type, const std::string& name, std::vector<ir::TensorId> in,
               std::vector<ir::TensorId> out, ir::Attributes attrs = {}) {
    ir::Op op;
    op.type = type;
    op.name = name;
    op.inputs = std::move(in);
    op.outputs = std::move(out);
    op.attrs = std::move(attrs);
    return g_.AddOp(std::move(op));
  }

  // A view tensor (Reshape output) named after `base`, for FULLY_CONNECTED's flattening and the like.
  ir::TensorId ViewTensor(ir::TensorId like, const std::string& base, std::vector<int64_t> shape) {
    ir::Tensor x;
    x.name = base;
    const std::set<std::string> file_names(ir_names_.begin(), ir_names_.end());
    while (names_.count(x.name) || file_names.count(x.name)) x.name += "'";
    names_.insert(x.name);
    x.shape = std::move(shape);
    x.dtype = g_.tensor(like).dtype;
    x.quant = g_.tensor(like).quant;
    return g_.AddTensor(std::move(x));
  }

  // --fold-pad: a PAD of H and W only (NHWC, rank 4) whose output is no model output and is read only
  // by CONV_2D / DEPTHWISE_CONV_2D as their input 0, with the same zero point on both sides (TFLite
  // pads int8 with the zero point, as a convolution's own padding does).
  bool FoldablePad(const tfl::Operator& pad, const std::vector<int64_t>& pads) const {
    const int out = pad.outputs[0], in = pad.inputs[0];
    if (T(in).shape.size() != 4 || pads[0] != 0 || pads[3] != 0 || pads[4] != 0 || pads[7] != 0) return false;
    if (std::find(sg_.outputs.begin(), sg_.outputs.end(), out) != sg_.outputs.end()) return false;
    if (T(in).quant.zero_point != T(out).quant.zero_point || T(in).quant.scale != T(out).quant.scale) return false;
    int readers = 0;
    for (const auto& op : sg_.operators)
      for (size_t k = 0; k < op.inputs.size(); ++k)
        if (op.inputs[k] == out) {
          if ((op.builtin != tfl::kConv2D && op.builtin != tfl::kDepthwiseConv2D) || k != 0) return false;
          ++readers;
        }
    return readers > 0;
  }

  Status Convert(int index, const tfl::Operator& op);
  Status ConvertConv(const std::string& name, const tfl::Operator& op, bool depthwise);
  Status ConvertFullyConnected(const std::string& name, const tfl::Operator& op);
  Status ConvertStridedSlice(const std::string& name, const tfl::Operator& op);

  const std::string& bytes_;
  const tfl::Model& m_;
  const tfl::Subgraph& sg_;
  const ImportOptions& options_;
  ir::Graph g_;
  std::map<int, ir::TensorId> ir_;
  std::vector<std::string> ir_names_;  // per file tensor (tfl::IrTensorNames)
  struct FoldedPad {
    int source = 0;                // the PAD's input tensor
    std::vector<int64_t> pads;     // [top, left, bottom, right]
  };
  std::map<int, FoldedPad> folded_;  // --fold-pad: PAD output tensor -> what the convolution reads instead
  std::set<std::string> names_;
};


Status TfliteImporter::ConvertConv(const std::string& name, const tfl::Operator& op, bool depthwise) {
  if (op.inputs.size() < 2 || op.outputs.size() != 1) return InvalidArgument("needs input, filter [and bias] and one output");
  std::vector<int64_t> extra = {0, 0, 0, 0};
  ir::TensorId x;
  std::vector<int64_t> xs;  // the input as the filter sees it (after a folded PAD)
  if (auto f = folded_.find(op.inputs[0]); f != folded_.end()) {
    SP_ASSIGN_OR_RETURN(x, Activation(f->second.source));
    extra = f->second.pads;
    xs = Shape(T(op.inputs[0]));
  } else {
    SP_ASSIGN_OR_RETURN(x, Input(op, 0));
    xs = g_.tensor(x).shape;
  }
  const int wt = op.inputs[1];
  if (wt < 0 || !IsConstant(wt)) return Unsupported("its filter must be a constant tensor");
  const std::vector<int32_t> ws = T(wt).shape;
  if (ws.size() != 4 || xs.size() != 4)
    return InvalidArgument("input " + Dims(xs) + " and filter " + Dims(Shape(T(wt))) + " must both have rank 4 (NHWC, OHWI)");
  const auto& o = op.options;
  if (o.stride_h < 1 || o.stride_w < 1 || o.dilation_h < 1 || o.dilation_w < 1 || o.stride_h > kMaxWindow ||
      o.stride_w > kMaxWindow || o.dilation_h > kMaxWindow || o.dilation_w > kMaxWindow)
    return InvalidArgument("strides and dilations must be in [1, 65536] (got stride " + std::to_string(o.stride_h) + "x" +
                           std::to_string(o.stride_w) + ", dilation " + std::to_string(o.dilation_h) + "x" +
                           std::to_string(o.dilation_w) + ")");
  const int64_t kh = ws[1], kw = ws[2], c_in = xs[3];
  int64_t group = 1;
  ir::TensorId w;
  if (depthwise) {
    // File [1, H, W, C*m] -> IR [C*m, H, W, 1]: element (h, w, c) moves to (c, h, w).
    const int64_t c_out = ws[3];
    if (ws[0] != 1 || c_out % c_in != 0)
      return InvalidArgument("depthwise filter " + Dims(Shape(T(wt))) + " does not fit an input with " +
                             std::to_string(c_in) + " channels");
    std::vector<size_t> perm(static_cast<size_t>(kh * kw * c_out));
    for (int64_t h = 0; h < kh; ++h)
      for (int64_t v = 0; v < kw; ++v)
        for (int64_t c = 0; c < c_out; ++c) perm[(h * kw + v) * c_out + c] = static_cast<size_t>((c * kh + h) * kw + v);
    SP_ASSIGN_OR_RETURN(w, Constant(wt, {c_out, kh, kw, 1}, &perm));
    g_.tensor(w).quant.axis = 0;
    group = c_in;
  } else {
    if (ws[3] < 1 || c_in % ws[3] != 0)
      return InvalidArgument("filter " + Dims(Shape(T(wt))) + " does not fit an input with " + std::to_string(c_in) + " channels");
    group = c_in / ws[3];
    SP_ASSIGN_OR_RETURN(w, Constant(wt));
  }
  std::vector<ir::TensorId> in = {x, w};
  if (op.inputs.size() >= 3 && op.inputs[2] >= 0) {
    SP_ASSIGN_OR_RETURN(ir::TensorId b, Input(op, 2));
    in.push_back(b);
  }
  SP_ASSIGN_OR_RETURN(ir::TensorId y, Activation(op.outputs[0]));
  ir::Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{kh, kw});
  a.Set("strides", std::vector<int64_t>{o.stride_h, o.stride_w});
  a.Set("dilations", std::vector<int64_t>{o.dilation_h, o.dilation_w});
  std::vector<int64_t> pads = Pads(o.padding, xs[1], xs[2], kh, kw, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w);
  for (int k = 0; k < 4; ++k) pads[k] += extra[k];
  a.Set("pads", pads);
  a.Set("group", group);
  SP_ASSIGN_OR_RETURN(std::string act, FusedActivation(o.activation));
  a.Set("activation", act);
  Add("Conv", name, std::move(in), {y}, std::move(a));
  return Status::Ok();
}

Status TfliteImporter::ConvertFullyConnected(const std::string& name, const tfl::Operator& op) {
  if (op.inputs.size() < 2 || op.outputs.size() != 1) return InvalidArgument("needs input, weights [and bias] and one output");
  SP_ASSIGN_OR_RETURN(ir::TensorId x, Input(op, 0));
  SP_ASSIGN_OR_RETURN(ir::TensorId w, Input(op, 1));
  const std::vector<int64_t> ws = g_.tensor(w).shape;
  if (ws.size() != 2) return InvalidArgument("weights must be [units, depth], not " + Dims(ws));
  const int64_t k = ws[1], n = ws[0];
  const int64_t elems = g_.tensor(x).NumElements();
  if (k < 1 || elems % k != 0)
    return InvalidArgument("input " + Dims(g_.tensor(x).shape) + " does not split into rows of " + std::to_string(k));
  if (g_.tensor(x).shape != std::vector<int64_t>{elems / k, k}) {
    ir::TensorId flat = ViewTensor(x, name + "/flatten", {elems / k, k});
    Add("Reshape", name + "/flatten", {x}, {flat});
    x = flat;
  }
  std::vector<ir::TensorId> in = {x, w};
  if (op.inputs.size() >= 3 && op.inputs[2] >= 0) {
    SP_ASSIGN_OR_RETURN(ir::TensorId b, Input(op, 2));
    in.push_back(b);
  }
  SP_ASSIGN_OR_RETURN(ir::TensorId y, Activation(op.outputs[0]));
  ir::Attributes a;
  a.Set("transB", int64_t{1});
  SP_ASSIGN_OR_RETURN(std::string act, FusedActivation(op.options.activation));
  a.Set("activation", act);
  if (g_.tensor(y).shape == std::vector<int64_t>{elems / k, n}) {
    Add("Gemm", name, std::move(in), {y}, std::move(a));
  } else {
    ir::TensorId mid = ViewTensor(y, name + "/matrix", {elems / k, n});
    Add("Gemm", name, std::move(in), {mid}, std::move(a));
    Add("Reshape", name + "/reshape", {mid}, {y});
  }
  return Status::Ok();
}

Status TfliteImporter::ConvertStridedSlice(const std::string& name, const tfl::Operator& op) {
  const auto& o = op.options;
  if (o.ellipsis_mask != 0 || o.new_axis_mask != 0)
    return Unsupported("ellipsis_mask and new_axis_mask are not supported");
  SP_ASSIGN_OR_RETURN(ir::TensorId x, Input(op, 0));
  SP_ASSIGN_OR_RETURN(std::vector<int64_t> begin, Param(op, 1, "begin"));
  SP_ASSIGN_OR_RETURN(std::vector<int64_t> end, Param(op, 2, "end"));
  SP_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Param(op, 3, "strides"));
  const auto xs = g_.tensor(x).shape;
  if (begin.size() != xs.size() || end.size() != xs.size() || strides.size() != xs.size())
    return InvalidArgument("begin, end and strides need one entry per dimension of " + Dims(xs));
  std::vector<int64_t> axes, kept;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t big = strides[i] > 0 ? xs[i] : -xs[i] - 1;
    if (o.begin_mask >> i & 1) begin[i] = strides[i] > 0 ? 0 : xs[i] - 1;
    if (o.end_mask >> i & 1) end[i] = big;
    if (o.shrink_axis_mask >> i & 1) {
      end[i] = begin[i] + 1;
      if (begin[i] == -1) end[i] = xs[i];
      strides[i] = 1;
    }
    axes.push_back(static_cast<int64_t>(i));
    int64_t n = 0;  // elements kept along axis i (as the shape rule computes it)
    {
      auto norm = [&](int64_t v) { return v >= 0 ? v : (v < -xs[i] ? -1 : v + xs[i]); };
      const int64_t s = strides[i];
      if (s == 0) return InvalidArgument("stride 0 on axis " + std::to_string(i));
      const int64_t b = std::clamp<int64_t>(norm(begin[i]), 0, s > 0 ? xs[i] : xs[i] - 1);
      const int64_t e = std::clamp<int64_t>(norm(end[i]), s > 0 ? 0 : -1, s > 0 ? xs[i] : xs[i] - 1);
      n = s > 0 ? (e > b ? (e - b - 1) / s + 1 : 0) : (b > e ? (b - e - 1) / -s + 1 : 0);
    }
    kept.push_back(n);
  }
  SP_ASSIGN_OR_RETURN(ir::TensorId y, Activation(op.outputs[0]));
  ir::Attributes a;
  a.Set("starts", begin);
  a.Set("ends", end);
  a.Set("axes", axes);
  a.Set("steps", strides);
  if (g_.tensor(y).shape == kept) {
    Add("Slice", name, {x}, {y}, std::move(a));
  } else {
    ir::TensorId mid = ViewTensor(y, name + "/slice", kept);
    Add("Slice", name, {x}, {mid}, std::move(a));
    Add("Reshape", name + "/shrink", {mid}, {y});
  }
  return Status::Ok();
}

Status TfliteImporter::Convert(int index, const tfl::Operator& op) {
  const std::string name =
      op.outputs.empty() ? "op" + std::to_string(index) : "op" + std::to_string(index) + ":" + T(op.outputs[0]).name;
  if (op.outputs.empty()) return InvalidArgument("has no output");
  for (int t : op.outputs)
    if (IsConstant(t)) return InvalidArgument("writes " + Where(t) + ", which holds constant data");
  auto simple = [&](const std::string& type, size_t n_in, ir::Attributes a = {}) -> Status {
    if (op.inputs.size() < n_in || op.outputs.size() != 1)
      return InvalidArgument("needs " + std::to_string(n_in) + " input(s) and one output");
    std::vector<ir::TensorId> in;
    for (size_t k = 0; k < n_in; ++k) {
      SP_ASSIGN_OR_RETURN(ir::TensorId t, Input(op, k));
      in.push_back(t);
    }
    SP_ASSIGN_OR_RETURN(ir::TensorId y, Activation(op.outputs[0]));
    Add(type, name, std::move(in), {y}, std::move(a));
    return Status::Ok();
  };
  const auto& o = op.options;
  switch (op.builtin) {
    case tfl::kConv2D: return ConvertConv(name, op, false);
    case tfl::kDepthwiseConv2D: return ConvertConv(name, op, true);
    case tfl::kFullyConnected: return ConvertFullyConnected(name, op);
    case tfl::kStridedSlice: return ConvertStridedSlice(name, op);
    case tfl::kAdd: case tfl::kMul: case tfl::kSub: {
      ir::Attributes a;
      SP_ASSIGN_OR_RETURN(std::string act, FusedActivation(o.activation));
      a.Set("activation", act);
      return simple(op.builtin == tfl::kAdd ? "Add" : op.builtin == tfl::kMul ? "Mul" : "Sub", 2, std::move(a));
    }
    case tfl::kAveragePool2D: case tfl::kMaxPool2D: {
      if (op.inputs.empty()) return InvalidArgument("lacks its input");
      SP_ASSIGN_OR_RETURN(ir::TensorId x, Input(op, 0));
      const std::vector<int64_t> xs = g_.tensor(x).shape;
      if (xs.size() != 4) return InvalidArgument("input " + Dims(xs) + " must be NHWC");
      if (o.stride_h < 1 || o.stride_w < 1 || o.filter_h < 1 || o.filter_w < 1 || o.stride_h > kMaxWindow ||
          o.stride_w > kMaxWindow || o.filter_h > kMaxWindow || o.filter_w > kMaxWindow)
        return InvalidArgument("filter and strides must be in [1, 65536] (got filter " + std::to_string(o.filter_h) +
                               "x" + std::to_string(o.filter_w) + ", stride " + std::to_string(o.stride_h) + "x" +
                               std::to_string(o.stride_w) + ")");
      ir::Attributes a;
      a.Set("kernel_shape", std::vector<int64_t>{o.filter_h, o.filter_w});
      a.Set("strides", std::vector<int64_t>{o.stride_h, o.stride_w});
      a.Set("pads", Pads(o.padding, xs[1], xs[2], o.filter_h, o.filter_w, o.stride_h, o.stride_w, 1, 1));
      SP_ASSIGN_OR_RETURN(std::string act, FusedActivation(o.activation));
      a.Set("activation", act);
      return simple(op.builtin == tfl::kAveragePool2D ? "AveragePool" : "MaxPool", 1, std::move(a));
    }
    case tfl::kMean: {
      SP_ASSIGN_OR_RETURN(std::vector<int64_t> axes, Param(op, 1, "axes"));
      ir::Attributes a;
      a.Set("axes", axes);
      a.Set("keepdims", int64_t{o.keep_dims ? 1 : 0});
      return simple("ReduceMean", 1, std::move(a));
    }
    case tfl::kReshape: return simple("Reshape", 1);
    case tfl::kSqueeze: return simple("Squeeze", 1);
    case tfl::kSoftmax: {
      ir::Attributes a;
      a.Set("axis", int64_t{-1});
      return simple("Softmax", 1, std::move(a));
    }
    case tfl::kConcatenation: {
      if (o.activation != 0) return Unsupported("a fused activation on CONCATENATION is not supported");
      ir::Attributes a;
      a.Set("axis", int64_t{o.axis});
      return simple("Concat", op.inputs.size(), std::move(a));
    }
    case tfl::kPad: {
      SP_ASSIGN_OR_RETURN(std::vector<int64_t> p, Param(op, 1, "paddings"));
      const size_t r = T(op.inputs[0]).shape.size();
      if (p.size() != 2 * r) return InvalidArgument("paddings must be [" + std::to_string(r) + ", 2]");
      std::vector<int64_t> pads(2 * r);
      for (size_t i = 0; i < r; ++i) {
        if (p[2 * i] < 0 || p[2 * i + 1] < 0) return InvalidArgument("negative padding");
        pads[i] = p[2 * i];
        pads[i + r] = p[2 * i + 1];
      }
      if (options_.fold_pad && FoldablePad(op, pads)) {
        folded_[op.outputs[0]] = FoldedPad{op.inputs[0], {pads[1], pads[2], pads[1 + r], pads[2 + r]}};
        return Status::Ok();
      }
      ir::Attributes a;
      a.Set("pads", pads);
      return simple("Pad", 1, std::move(a));
    }
    case tfl::kTranspose: {
      SP_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Param(op, 1, "perm"));
      ir::Attributes a;
      a.Set("perm", perm);
      return simple("Transpose", 1, std::move(a));
    }
    case tfl::kQuantize: case tfl::kDequantize: {
      ir::Attributes a;
      a.Set("to", std::string(tfl::TensorTypeName(T(op.outputs[0]).type)));
      return simple("Cast", 1, std::move(a));
    }
    case tfl::kLogistic: return simple("Sigmoid", 1);
    case tfl::kHardSwish: return simple("HardSwish", 1);
    case tfl::kRelu: return simple("Relu", 1);
    case tfl::kRelu6: {
      ir::Attributes a;
      a.Set("min", 0.0);
      a.Set("max", 6.0);
      return simple("Clip", 1, std::move(a));
    }
    case tfl::kBatchMatMul:
      if (o.adj_x || o.adj_y) return Unsupported("adj_x / adj_y are not supported; transpose the operands in the model");
      return simple("MatMul", 2);
    default: break;
  }
  const std::string type = op.builtin == tfl::kCustom ? "CUSTOM '" + op.custom_code + "'" : tfl::BuiltinName(op.builtin);
  if (!options_.allow_unknown_ops)
    return Unsupported("operator " + type + " is not supported by the .tflite importer; pass --allow-unknown-ops to "
                       "import it as an opaque op (its inputs and outputs stay live while it runs) or replace it in "
                       "the model");
  std::vector<ir::TensorId> in, out;
  for (size_t k = 0; k < op.inputs.size(); ++k)
    if (op.inputs[k] >= 0) {
      SP_ASSIGN_OR_RETURN(ir::TensorId t, Input(op, k));
      in.push_back(t);
    }
  for (int t : op.outputs) {
    SP_ASSIGN_OR_RETURN(ir::TensorId y, Activation(t));
    out.push_back(y);
  }
  ir::OpId id = Add("Opaque", name, std::move(in), std::move(out));
  g_.op(id).original_type = type;
  return Status::Ok();
}

}  // namespace

StatusOr<ir::Graph> ImportTflite(const std::string& bytes, const std::string& name, const ImportOptions& options) {
  SP_ASSIGN_OR_RETURN(tfl::Model m, tfl::ParseModel(bytes, name));
  TfliteImporter imp(bytes, m, name, options);
  auto g = imp.Run();
  if (!g.ok()) return g.status().WithContext(".tflite model '" + name + "' (subgraph 0)");
  return g;
}

}  // namespace sramplan::import
