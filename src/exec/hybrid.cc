#include "exec/hybrid.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/quantize.h"
#include "sramplan_rt_host.h"

namespace sramplan::exec {
namespace {

// Ops that only move elements: in a float32 region they stay float32 (no conversion pair around a
// byte move). Their data inputs are the non-constant ones of a numeric type.
bool MovesData(const std::string& t) {
  return t == "Transpose" || t == "Slice" || t == "Split" || t == "Gather" || t == "Expand" || t == "Pad" ||
         t == "Concat";
}

bool Numeric8(ir::DataType t) { return t == ir::DataType::kInt8; }

std::string Unique(const ir::Graph& out, const std::set<std::string>& op_names, const std::string& base,
                   bool op) {
  std::string n = base;
  for (int k = 2; op ? op_names.count(n) > 0 : out.FindTensor(n).has_value(); ++k) n = base + "." + std::to_string(k);
  return n;
}

// Which ops of the int8 graph run in float32 (views follow their input; byte moves follow theirs).
std::vector<bool> FloatOps(const ir::Graph& g, std::vector<bool>* tensor_float) {
  std::vector<bool> is_float(g.num_ops(), false);
  std::vector<bool>& tf = *tensor_float;
  for (const ir::Op& op : g.ops()) {
    bool f = false;
    if (op.inputs.empty() || op.outputs.empty()) {
      f = false;
    } else if (ir::IsViewOp(op.type)) {
      f = tf[op.inputs[0].value()];
    } else if (MovesData(op.type)) {
      int data = 0, floats = 0;
      for (ir::TensorId in : op.inputs) {
        const ir::Tensor& t = g.tensor(in);
        if (t.kind == ir::TensorKind::kConstant || !(Numeric8(t.dtype) || tf[in.value()])) continue;
        ++data;
        floats += tf[in.value()];
      }
      f = data > 0 && floats == data;
    } else {
      f = !Int8KernelMissing(g, op).empty() && HasKernelF32(g, op);
    }
    is_float[op.id.value()] = f;
    if (f)
      for (ir::TensorId o : op.outputs)
        if (Numeric8(g.tensor(o).dtype)) tf[o.value()] = true;
  }
  return is_float;
}

// Constants read only by float32 ops become float32: int8 data, and the int32 bias of a float Conv /
// Gemm. A constant that int8 ops also read stays int8 (its float32 readers get a Dequantize).
Status FloatConstants(const ir::Graph& g, const std::vector<bool>& is_float, std::vector<bool>* tensor_float,
                      HybridReport* r) {
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind != ir::TensorKind::kConstant || t.consumers.empty()) continue;
    bool all_float = true, any_float = false;
    for (ir::OpId c : t.consumers) {
      all_float &= is_float[c.value()];
      any_float |= is_float[c.value()];
    }
    if (!any_float) continue;
    if (t.dtype == ir::DataType::kInt32 && !all_float)
      return Unsupported("int32 bias '" + t.name + "' is read by int8 and float32 ops of the hybrid graph; give each " +
                         "op its own copy (--canonicalize) or verify this model with --dtype float32");
    if (all_float && (Numeric8(t.dtype) || t.dtype == ir::DataType::kInt32)) {
      (*tensor_float)[t.id.value()] = true;
      ++r->float_constants;
    }
  }
  return Status::Ok();
}

}  // namespace

std::string HybridReport::Summary() const {
  if (!changed()) return "hybrid int8: every op has an int8 kernel";
  std::string types;
  for (const auto& t : float_types) types += (types.empty() ? "" : ", ") + t;
  return "hybrid int8: " + std::to_string(float_ops) + " ops run in float32 (" + types + "), " +
         std::to_string(dequantize_ops) + " Dequantize and " + std::to_string(quantize_ops) + " Quantize ops added, " +
         std::to_string(float_constants) + " constants float32";
}

bool HasKernelF32(const ir::Graph& g, const ir::Op& op) {
  // RunKernel's dispatch (kernels.cc): these types have a float32 kernel.
  static const std::set<std::string> kTypes = {
      "Conv", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization", "MaxPool", "AveragePool",
      "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "Concat", "Split", "Slice", "Gather", "Transpose",
      "Pad", "Expand", "Where", "Resize", "Upsample", "Relu", "Sigmoid", "HardSwish", "Tanh", "Erf", "Sqrt",
      "Exp", "Neg", "Log", "Abs", "Reciprocal", "Gelu", "Clip", "HardSigmoid", "LeakyRelu", "Elu", "Add",
      "Sub", "Mul", "Div", "Pow", "Max", "Min", "Softmax"};
  if (!kTypes.count(op.type)) return false;
  // The float32 kernels read float32 data; an op with an int64 / bool data output (none of the above
  // in practice) is not a float op.
  for (ir::TensorId o : op.outputs)
    if (!Numeric8(g.tensor(o).dtype) && !ir::IsFloat(g.tensor(o).dtype)) return false;
  return true;
}

StatusOr<HybridReport> MakeHybridInt8(ir::Graph* g) {
  HybridReport r;
  const int nt = g->num_tensors();
  std::vector<bool> tensor_float(nt, false);
  const std::vector<bool> is_float = FloatOps(*g, &tensor_float);
  std::map<std::string, int> types;
  for (const ir::Op& op : g->ops())
    if (is_float[op.id.value()] && !ir::IsViewOp(op.type)) {
      ++r.float_ops;
      ++types[op.type == "MatMul" || op.type == "Gemm" || op.type == "Conv" ? Int8KernelMissing(*g, op) : op.type];
    }
  if (r.float_ops == 0) return r;  // unchanged: every op has an int8 kernel (or none has a float one)
  for (const auto& [t, n] : types) r.float_types.push_back(t + " (" + std::to_string(n) + ")");
  SP_RETURN_IF_ERROR(FloatConstants(*g, is_float, &tensor_float, &r));

  ir::Graph out;
  out.name = g->name;
  out.layout = g->layout;
  for (const ir::Tensor& t : g->tensors()) {  // same ids
    ir::Tensor c = t;
    if (tensor_float[t.id.value()]) c.dtype = ir::DataType::kFloat32;
    out.AddTensor(std::move(c));
  }
  std::set<std::string> op_names;
  for (const ir::Op& op : g->ops()) op_names.insert(op.name);
  std::vector<ir::TensorId> converted(nt);  // the tensor's Quantize / Dequantize output, once made
  for (const ir::Op& op : g->ops()) {
    ir::Op n = op;
    const bool f = is_float[op.id.value()];
    if (!ir::IsViewOp(op.type)) {
      for (ir::TensorId& in : n.inputs) {
        const ir::DataType dt = out.tensor(in).dtype;
        const bool dequantize = f && Numeric8(dt);
        const bool quantize = !f && dt == ir::DataType::kFloat32;
        if (!dequantize && !quantize) continue;
        if (!converted[in.value()].valid()) {
          // Copies: AddTensor below may reallocate out's tensors (a reference would dangle).
          const std::string src_name = out.tensor(in).name;
          const std::vector<int64_t> src_shape = out.tensor(in).shape;
          ir::Tensor c;
          c.name = Unique(out, op_names, src_name + (quantize ? ".quantized" : ".dequantized"), false);
          c.shape = src_shape;
          c.dtype = quantize ? ir::DataType::kInt8 : ir::DataType::kFloat32;
          c.kind = ir::TensorKind::kActivation;
          const ir::TensorId cid = out.AddTensor(std::move(c));
          ir::Op conv;
          conv.name = Unique(out, op_names, src_name + (quantize ? "/Quantize" : "/Dequantize"), true);
          op_names.insert(conv.name);
          conv.type = quantize ? "Quantize" : "Dequantize";
          conv.inputs = {in};
          conv.outputs = {cid};
          out.AddOp(std::move(conv));
          ++(quantize ? r.quantize_ops : r.dequantize_ops);
          converted[in.value()] = cid;
        }
        in = converted[in.value()];
      }
    }
    out.AddOp(std::move(n));
  }
  SP_RETURN_IF_ERROR(ir::VerifyGraph(out));
  *g = std::move(out);
  return r;
}

Status RefuseHybridCodegen(const ir::Graph& g) {
  std::map<std::string, std::pair<int, std::string>> missing;  // what -> (count, first op)
  for (const ir::Op& op : g.ops()) {
    const std::string what = Int8KernelMissing(g, op);
    if (what.empty() || !HasKernelF32(g, op)) continue;
    auto& m = missing[what];
    if (m.first++ == 0) m.second = op.name;
  }
  if (missing.empty()) return Status::Ok();
  std::string ops;
  for (const auto& [what, m] : missing)
    ops += (ops.empty() ? "" : ", ") + what + " (" + std::to_string(m.first) + (m.first == 1 ? " op" : " ops") +
           ", first '" + m.second + "')";
  return Unsupported("codegen: '" + g.name + "' has ops without an int8 kernel: " + ops +
                     ". verify runs them in float32 between a Dequantize and a Quantize (a hybrid graph), but the C " +
                     "emitter prints int8 kernel calls only (the runtime's float32 kernels have no call records), so " +
                     "the firmware cannot run this model; plan and verify it instead");
}

bool IsHybridHostOp(const ir::Graph& g, const ir::Op& op) {
  if (op.type == "Quantize" || op.type == "Dequantize") return true;
  if (ir::IsViewOp(op.type) || op.outputs.empty()) return false;
  return g.tensor(op.outputs[0]).dtype == ir::DataType::kFloat32;
}

bool IsHybridGraph(const ir::Graph& g) {
  for (const ir::Op& op : g.ops())
    if (IsHybridHostOp(g, op)) return true;
  return false;
}

namespace {

// One conversion's operands: float32 on one side, int8 with per-tensor parameters on the other.
Status ConversionOperands(const ir::Graph& g, const ir::Op& op, const QuantizedModel* q, const OperandBytes& bytes,
                          const ir::QuantParams** params) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1 || bytes.in.size() != 1 || bytes.out.size() != 1)
    return InvalidArgument("op '" + op.name + "' (" + op.type + ") needs one input and one output");
  const ir::Tensor& x = g.tensor(op.inputs[0]);
  const ir::Tensor& y = g.tensor(op.outputs[0]);
  if (x.NumElements() != y.NumElements() || bytes.in[0] != x.Bytes() || bytes.out[0] != y.Bytes())
    return InvalidArgument("op '" + op.name + "' (" + op.type + "): its operands' buffers do not hold '" + x.name +
                           "' and '" + y.name + "'; refusing to run it");
  if (!q) {
    if (x.dtype != ir::DataType::kFloat32 || y.dtype != ir::DataType::kFloat32)
      return InvalidArgument("op '" + op.name + "' (" + op.type + ") in a float32 run needs float32 operands");
    return Status::Ok();
  }
  const bool quantize = op.type == "Quantize";
  const ir::Tensor& f = quantize ? x : y;
  const ir::Tensor& i8 = quantize ? y : x;
  if (f.dtype != ir::DataType::kFloat32 || i8.dtype != ir::DataType::kInt8)
    return InvalidArgument("op '" + op.name + "' (" + op.type + ") converts between float32 '" + f.name +
                           "' and int8 '" + i8.name + "', which are " + ir::DataTypeName(f.dtype) + " and " +
                           ir::DataTypeName(i8.dtype));
  const ir::QuantParams& p = q->params.at(i8.id.value());
  if (p.scale.size() != 1 || p.zero_point.size() != 1)
    return InvalidArgument("op '" + op.name + "' (" + op.type + "): int8 tensor '" + i8.name +
                           "' has no per-tensor scale and zero point");
  *params = &p;
  return Status::Ok();
}

}  // namespace

Status RunHybridHostOp(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                       const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out,
                       const OperandBytes& bytes) {
  if (op.type != "Quantize" && op.type != "Dequantize") return RunKernel(g, op, in, out, bytes);
  const ir::QuantParams* p = nullptr;
  SP_RETURN_IF_ERROR(ConversionOperands(g, op, &q, bytes, &p));
  const int64_t n = g.tensor(op.inputs[0]).NumElements();
  const double scale = p->scale[0];
  const int32_t zp = p->zero_point[0];
  if (op.type == "Quantize") {
    auto* y = reinterpret_cast<int8_t*>(out[0]);
    for (int64_t i = 0; i < n; ++i) {
      float x;
      std::memcpy(&x, in[0] + 4 * i, 4);
      y[i] = sp_host_quantize_s8(std::isnan(x) ? 0.0f : x, scale, zp);
    }
  } else {
    const auto* x = reinterpret_cast<const int8_t*>(in[0]);
    for (int64_t i = 0; i < n; ++i) {
      const float y = sp_host_dequantize_s8(x[i], scale, zp);
      std::memcpy(out[0] + 4 * i, &y, 4);
    }
  }
  return Status::Ok();
}

Status RunConversionF32(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                        const std::vector<uint8_t*>& out, const OperandBytes& bytes) {
  const ir::QuantParams* p = nullptr;
  SP_RETURN_IF_ERROR(ConversionOperands(g, op, nullptr, bytes, &p));
  if (in[0] != out[0]) std::memmove(out[0], in[0], static_cast<size_t>(bytes.out[0]));
  return Status::Ok();
}

}  // namespace sramplan::exec
