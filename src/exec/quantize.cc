#include "exec/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>

#include "exec/hybrid.h"
#include "sramplan_rt_host.h"

namespace sramplan::exec {
namespace {

// Smallest activation scale: keeps requantisation multipliers of all-zero tensors finite.
constexpr double kMinScale = 1e-7;

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  // The smaller id becomes the root (deterministic).
  void Unite(int a, int b) {
    a = Find(a), b = Find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent[b] = a;
  }
};

enum class Role { kNone, kActivation, kWeight, kBias, kBnParam };

// Ops whose output parameters are free (the kernel requantises into them).
bool Requantises(const std::string& t) {
  static const char* kOps[] = {"Conv",
                               "Gemm",
                               "MatMul",
                               "Add",
                               "Sub",
                               "Mul",
                               "BatchNormalization",
                               "GlobalAveragePool",
                               "ReduceMean",
                               "Sigmoid",
                               "Tanh",
                               "HardSigmoid",
                               "HardSwish",
                               "LeakyRelu",
                               "Elu",
                               "Gelu",
                               "Erf",
                               "Exp",
                               "Neg",
                               "Abs",
                               "Sqrt"};
  for (const char* k : kOps)
    if (t == k) return true;
  return false;
}

// Ops that move bytes unchanged: output and (first) input share parameters.
bool CopiesBytes(const std::string& t) {
  static const char* kOps[] = {"MaxPool", "AveragePool", "Pad",          "Transpose",
                               "Slice",   "Split",       "Gather",       "Expand",
                               "Resize",  "Upsample",    "GlobalMaxPool"};
  for (const char* k : kOps)
    if (t == k) return true;
  return false;
}

double RoundHalfAway(double x) { return x >= 0 ? std::floor(x + 0.5) : -std::floor(-x + 0.5); }

void Params(double lo, double hi, double* scale, int32_t* zp) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  *scale = std::max((hi - lo) / 255.0, kMinScale);
  *scale = static_cast<float>(*scale);  // what QuantParams stores
  double z = RoundHalfAway(-128.0 - lo / *scale);
  *zp = std::isnan(z) ? 0 : static_cast<int32_t>(std::clamp(z, -128.0, 127.0));
}

ir::QuantParams PerTensor(double scale, int32_t zp) {
  ir::QuantParams p;
  p.scale = {static_cast<float>(scale)};
  p.zero_point = {zp};
  return p;
}

const float* FloatData(const ModelData& d, ir::TensorId id) {
  return reinterpret_cast<const float*>(d.values[id.value()].data());
}

struct LutFn {
  std::string type;
  double alpha = 0, beta = 0;
  double lo = -std::numeric_limits<double>::infinity(),
         hi = std::numeric_limits<double>::infinity();
  // BatchNormalization: y = a * x + b.
  double a = 1, b = 0;
};

double EvalLut(double x, void* user) {
  const LutFn& f = *static_cast<const LutFn*>(user);
  double y = x;
  const std::string& t = f.type;
  if (t == "Relu")
    y = x > 0 ? x : 0;
  else if (t == "Clip")
    y = std::min(std::max(x, f.lo), f.hi);
  else if (t == "Sigmoid")
    y = 1.0 / (1.0 + std::exp(-x));
  else if (t == "Tanh")
    y = std::tanh(x);
  else if (t == "HardSigmoid")
    y = std::clamp(f.alpha * x + f.beta, 0.0, 1.0);
  else if (t == "HardSwish")
    y = x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
  else if (t == "LeakyRelu")
    y = x >= 0 ? x : f.alpha * x;
  else if (t == "Elu")
    y = x >= 0 ? x : f.alpha * (std::exp(x) - 1.0);
  else if (t == "Gelu")
    y = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  else if (t == "Erf")
    y = std::erf(x);
  else if (t == "Exp")
    y = std::exp(x);
  else if (t == "Neg")
    y = -x;
  else if (t == "Abs")
    y = std::fabs(x);
  else if (t == "Sqrt")
    y = x > 0 ? std::sqrt(x) : 0.0;
  else if (t == "BatchNormalization")
    y = f.a * x + f.b;
  if (std::isnan(y)) y = 0;
  return std::clamp(y, -1e30, 1e30);
}

// The stages of Quantize, in order.

// Roles of constants: weights (with their channel axis), biases, BatchNormalization params.
Status AssignRoles(const ir::Graph& g8, std::vector<Role>* role_out,
                   std::vector<int>* weight_axis_out) {
  const int nt = g8.num_tensors();
  std::vector<Role>& role = *role_out;
  std::vector<int>& weight_axis = *weight_axis_out;
  role.assign(nt, Role::kNone);
  weight_axis.assign(nt, -1);
  for (const ir::Tensor& t : g8.tensors())
    if (t.dtype == ir::DataType::kInt8) role[t.id.value()] = Role::kActivation;
  auto set_role = [&](ir::TensorId id, Role r, int axis, const ir::Op& op) -> Status {
    const ir::Tensor& t = g8.tensor(id);
    if (t.kind != ir::TensorKind::kConstant) return Status::Ok();
    Role& cur = role[id.value()];
    if ((cur == Role::kWeight || cur == Role::kBias || cur == Role::kBnParam) &&
        (cur != r || weight_axis[id.value()] != axis))
      return Unsupported("constant '" + t.name + "' is used in two different roles (op '" +
                         op.name + "'); int8 execution quantises each constant once");
    cur = r;
    weight_axis[id.value()] = axis;
    return Status::Ok();
  };
  for (const ir::Op& op : g8.ops()) {
    if (IsHybridHostOp(g8, op)) continue;  // float32 in a hybrid graph: its constants stay float32
    if (op.type == "Conv" && op.inputs.size() >= 2) {
      SP_RETURN_IF_ERROR(set_role(op.inputs[1], Role::kWeight, 0, op));
      if (op.inputs.size() >= 3) SP_RETURN_IF_ERROR(set_role(op.inputs[2], Role::kBias, 0, op));
    } else if (op.type == "Gemm" && op.inputs.size() >= 2 &&
               g8.tensor(op.inputs[1]).shape.size() == 2) {
      SP_RETURN_IF_ERROR(
          set_role(op.inputs[1], Role::kWeight, op.attrs.GetInt("transB", 0) ? 0 : 1, op));
      if (op.inputs.size() >= 3) SP_RETURN_IF_ERROR(set_role(op.inputs[2], Role::kBias, 0, op));
    } else if (op.type == "MatMul" && op.inputs.size() >= 2 &&
               g8.tensor(op.inputs[1]).shape.size() == 2) {
      SP_RETURN_IF_ERROR(set_role(op.inputs[1], Role::kWeight, 1, op));
    } else if (op.type == "BatchNormalization") {
      for (size_t i = 1; i < op.inputs.size(); ++i)
        SP_RETURN_IF_ERROR(set_role(op.inputs[i], Role::kBnParam, 0, op));
    }
  }
  return Status::Ok();
}

// Classes of int8 tensors that share parameters. `contributes`: whether a tensor's range counts
// for its class; `fixed`: per class root, parameters fixed at scale 1/256, zero point -128.
void ShareClasses(const ir::Graph& g8, const std::vector<Role>& role, UnionFind* uf_ptr,
                  std::vector<bool>* contributes_ptr, std::vector<bool>* fixed_ptr) {
  UnionFind& uf = *uf_ptr;
  std::vector<bool>& contributes = *contributes_ptr;
  std::vector<bool>& fixed = *fixed_ptr;
  auto activation = [&](ir::TensorId id) { return role[id.value()] == Role::kActivation; };
  auto consumers = [&](ir::TensorId id) { return g8.tensor(id).consumers.size(); };
  auto fixed_class = [&](ir::TensorId id) { return fixed[uf.Find(id.value())]; };
  for (const ir::Op& op : g8.ops()) {
    if (op.inputs.empty() || op.outputs.empty()) continue;
    const ir::TensorId x = op.inputs[0];
    if (op.type == "Softmax") {
      for (ir::TensorId o : op.outputs)
        if (activation(o)) fixed[uf.Find(o.value())] = true;
      continue;
    }
    if (ir::IsViewOp(op.type) || CopiesBytes(op.type)) {
      for (ir::TensorId o : op.outputs)
        if (activation(x) && activation(o)) {
          bool f = fixed_class(x) || fixed_class(o);
          uf.Unite(x.value(), o.value());
          fixed[uf.Find(x.value())] = f;
        }
      continue;
    }
    if (op.type == "Relu" || op.type == "Clip") {
      const ir::TensorId o = op.outputs[0];
      if (!activation(x) || !activation(o)) continue;
      const ir::Tensor& xt = g8.tensor(x);
      const bool fused = xt.kind == ir::TensorKind::kActivation && consumers(x) == 1 &&
                         xt.producer.valid() && Requantises(g8.op(xt.producer).type) &&
                         !fixed_class(x);
      if (fused)
        contributes[x.value()] = false;  // the producer saturates into the activation's range
      bool f = fixed_class(x) || fixed_class(o);
      uf.Unite(x.value(), o.value());
      fixed[uf.Find(x.value())] = f;
      continue;
    }
    if (op.type == "Concat") {
      const ir::TensorId o = op.outputs[0];
      if (!activation(o) || fixed_class(o)) continue;
      for (ir::TensorId in : op.inputs) {
        const ir::Tensor& it = g8.tensor(in);
        if (!activation(in) || it.kind != ir::TensorKind::kActivation || consumers(in) != 1 ||
            fixed_class(in))
          continue;
        uf.Unite(in.value(), o.value());
      }
    }
  }
}

// Class ranges and parameters.
void ActivationParams(const ir::Graph& g8, const ir::Graph& gf, const ModelData& float_data,
                      const Calibration& cal, const std::vector<Role>& role, UnionFind* uf_ptr,
                      const std::vector<bool>& contributes, const std::vector<bool>& fixed,
                      QuantizedModel* q_out) {
  UnionFind& uf = *uf_ptr;
  const int nt = g8.num_tensors();
  QuantizedModel& q = *q_out;
  auto activation = [&](ir::TensorId id) { return role[id.value()] == Role::kActivation; };
  std::vector<double> lo(nt, std::numeric_limits<double>::infinity()),
      hi(nt, -std::numeric_limits<double>::infinity());
  for (const ir::Tensor& t : g8.tensors()) {
    const int id = t.id.value();
    if (!activation(t.id) || !contributes[id]) continue;
    float mn = 0, mx = 0;
    if (t.kind == ir::TensorKind::kConstant) {
      if (gf.tensor(t.id).dtype != ir::DataType::kFloat32) continue;
      const float* f = FloatData(float_data, t.id);
      for (int64_t i = 0, e = t.NumElements(); i < e; ++i) {
        if (!std::isfinite(f[i])) continue;
        mn = std::min(mn, f[i]);
        mx = std::max(mx, f[i]);
      }
    } else if (cal.seen[id]) {
      mn = cal.min[id];
      mx = cal.max[id];
    } else {
      continue;
    }
    const int c = uf.Find(id);
    lo[c] = std::min(lo[c], static_cast<double>(mn));
    hi[c] = std::max(hi[c], static_cast<double>(mx));
  }
  for (const ir::Tensor& t : g8.tensors()) {
    if (!activation(t.id)) continue;
    const int c = uf.Find(t.id.value());
    if (fixed[c]) {
      q.params[t.id.value()] = PerTensor(1.0 / 256.0, -128);
      continue;
    }
    double s;
    int32_t z;
    Params(lo[c] <= hi[c] ? lo[c] : 0.0, lo[c] <= hi[c] ? hi[c] : 0.0, &s, &z);
    q.params[t.id.value()] = PerTensor(s, z);
  }
}

// Weights (per output channel, symmetric) and BatchNormalization params (per tensor; the
// kernel uses the per-channel tables instead).
Status QuantizeWeights(const ir::Graph& g8, const ir::Graph& gf, const ModelData& float_data,
                       const std::vector<Role>& role, const std::vector<int>& weight_axis,
                       QuantizedModel* q_out) {
  const int nt = g8.num_tensors();
  QuantizedModel& q = *q_out;
  q.data.values.resize(nt);
  for (const ir::Tensor& t : g8.tensors()) {
    const int id = t.id.value();
    if (role[id] != Role::kWeight && role[id] != Role::kBnParam) continue;
    if (t.dtype != ir::DataType::kInt8 || gf.tensor(t.id).dtype != ir::DataType::kFloat32)
      return Unsupported("weights '" + t.name + "' are not int8 in the int8 graph");
    const float* f = FloatData(float_data, t.id);
    const int64_t n = t.NumElements();
    auto& out = q.data.values[id];
    out.assign(static_cast<size_t>(n), 0);
    if (role[id] == Role::kBnParam) {
      float mn = 0, mx = 0;
      for (int64_t i = 0; i < n; ++i) mn = std::min(mn, f[i]), mx = std::max(mx, f[i]);
      double s;
      int32_t z;
      Params(mn, mx, &s, &z);
      q.params[id] = PerTensor(s, z);
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<uint8_t>(sp_host_quantize_s8(f[i], s, z));
      continue;
    }
    const int axis = weight_axis[id];
    const int64_t channels = t.shape.empty() ? 1 : t.shape[axis];
    int64_t inner = 1;
    for (size_t d = axis + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
    // Element i belongs to channel (i / inner) % channels.
    std::vector<float> absmax(channels, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      int64_t c = (i / inner) % channels;
      if (std::isfinite(f[i])) absmax[c] = std::max(absmax[c], std::fabs(f[i]));
    }
    ir::QuantParams p;
    p.axis = axis;
    for (int64_t c = 0; c < channels; ++c) {
      const float scale = absmax[c] / 127.0f;  // 0 when absmax is a denormal: then as for all zeros
      p.scale.push_back(scale > 0 && std::isfinite(scale) ? scale : 1.0f);
      p.zero_point.push_back(0);
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t c = (i / inner) % channels;
      double v = std::isfinite(f[i]) ? RoundHalfAway(f[i] / static_cast<double>(p.scale[c])) : 0.0;
      if (std::isnan(v)) v = 0.0;
      out[i] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(v, -127.0, 127.0)));
    }
    q.params[id] = std::move(p);
  }
  return Status::Ok();
}

// Biases: int32 with scale in_scale * alpha * w_scale[k]; value beta * b.
Status QuantizeBiases(const ir::Graph& g8, const ir::Graph& gf, const ModelData& float_data,
                      QuantizedModel* q_out) {
  QuantizedModel& q = *q_out;
  for (const ir::Op& op : g8.ops()) {
    if ((op.type != "Conv" && op.type != "Gemm") || op.inputs.size() < 3 || IsHybridHostOp(g8, op)) continue;
    const ir::Tensor& b = g8.tensor(op.inputs[2]);
    if (b.kind != ir::TensorKind::kConstant)
      return Unsupported("op '" + op.name + "': int8 execution needs a constant bias");
    if (b.dtype != ir::DataType::kInt32 || gf.tensor(b.id).dtype != ir::DataType::kFloat32)
      return Unsupported("op '" + op.name + "': bias '" + b.name +
                         "' is not int32 in the int8 graph");
    const ir::QuantParams& in = q.params[op.inputs[0].value()];
    const ir::QuantParams& w = q.params[op.inputs[1].value()];
    if (in.scale.size() != 1 || w.scale.empty())
      return Unsupported("op '" + op.name +
                         "': int8 execution needs an int8 input and constant weights");
    const double alpha = op.type == "Gemm" ? op.attrs.GetFloat("alpha", 1.0) : 1.0;
    const double beta = op.type == "Gemm" ? op.attrs.GetFloat("beta", 1.0) : 1.0;
    if (!(alpha > 0)) return Unsupported("op '" + op.name + "': int8 Gemm needs alpha > 0");
    const int64_t n = b.NumElements();
    if (n != static_cast<int64_t>(w.scale.size()))
      return Unsupported("op '" + op.name + "': int8 execution needs one bias per output channel");
    ir::QuantParams p;
    p.axis = 0;
    for (int64_t k = 0; k < n; ++k) {
      p.scale.push_back(static_cast<float>(static_cast<double>(in.scale[0]) * alpha * w.scale[k]));
      p.zero_point.push_back(0);
    }
    if (!q.params[b.id.value()].empty() && q.params[b.id.value()].scale != p.scale)
      return Unsupported("bias '" + b.name + "' is shared by ops with different input scales (op '" + op.name +
                         "' is one); pass --canonicalize, which gives every op its own copy, or --dtype float32");
    const float* f = FloatData(float_data, b.id);
    auto& out = q.data.values[b.id.value()];
    out.assign(static_cast<size_t>(n) * 4, 0);
    for (int64_t k = 0; k < n; ++k) {
      double v =
          std::isfinite(f[k])
              ? RoundHalfAway(beta * f[k] / (static_cast<double>(in.scale[0]) * alpha * w.scale[k]))
              : 0.0;
      // Within +-2^30, so the kernels' int32 accumulator plus the bias cannot overflow (a bias that
      // large only comes from a degenerate scale; the requantised output saturates either way).
      int32_t i = std::isnan(v) ? 0 : static_cast<int32_t>(std::clamp(v, -1073741824.0, 1073741824.0));
      std::memcpy(out.data() + 4 * k, &i, 4);
    }
    q.params[b.id.value()] = std::move(p);
  }
  return Status::Ok();
}

// Inputs and the remaining constants: int8 ones quantised with their parameters, others
// (indices, bools, int32 shape data) copied.
Status QuantizeRemaining(const ir::Graph& g8, const ir::Graph& gf, const ModelData& float_data,
                         const std::vector<Role>& role, QuantizedModel* q_out) {
  QuantizedModel& q = *q_out;
  for (const ir::Tensor& t : g8.tensors()) {
    const int id = t.id.value();
    if (t.kind != ir::TensorKind::kConstant && t.kind != ir::TensorKind::kInput) continue;
    if (role[id] == Role::kWeight || role[id] == Role::kBias || role[id] == Role::kBnParam)
      continue;
    auto& out = q.data.values[id];
    const auto& src = float_data.values[id];
    if (t.dtype == ir::DataType::kInt8) {
      if (gf.tensor(t.id).dtype != ir::DataType::kFloat32)
        return Unsupported("tensor '" + t.name + "' has no float32 values to quantise");
      const ir::QuantParams& p = q.params[id];
      const float* f = FloatData(float_data, t.id);
      out.assign(static_cast<size_t>(t.NumElements()), 0);
      for (int64_t i = 0, e = t.NumElements(); i < e; ++i)
        out[i] = static_cast<uint8_t>(
            sp_host_quantize_s8(std::isfinite(f[i]) ? f[i] : 0.0f, p.scale[0], p.zero_point[0]));
    } else if (t.dtype == gf.tensor(t.id).dtype && static_cast<int64_t>(src.size()) == t.Bytes()) {
      out = src;
    } else {
      return Unsupported("tensor '" + t.name + "' of type " + ir::DataTypeName(t.dtype) +
                         " has no int8 execution data");
    }
  }
  return Status::Ok();
}

// The per-channel tables of an int8 BatchNormalization: y = a x + b with a = scale / sqrt(var +
// eps), b = bias - mean a, one 256-entry table per channel.
Status BuildBatchNormTables(const ir::Graph& g8, const ModelData& float_data, const ir::Op& op,
                            const ir::QuantParams& pi, const ir::QuantParams& po,
                            std::vector<int8_t>* table_out) {
  std::vector<int8_t>& table = *table_out;
  LutFn fn;
  fn.type = op.type;
  if (op.inputs.size() < 5)
    return InvalidArgument("op '" + op.name + "': BatchNormalization needs 5 inputs");
  const int rank = static_cast<int>(g8.tensor(op.inputs[0]).shape.size());
  const int64_t C = rank >= 2 ? g8.tensor(op.inputs[0]).shape[ir::ChannelAxis(g8, rank)] : 1;
  for (size_t i = 1; i < 5; ++i)
    if (g8.tensor(op.inputs[i]).kind != ir::TensorKind::kConstant ||
        g8.tensor(op.inputs[i]).NumElements() != C)
      return Unsupported("op '" + op.name +
                         "': int8 BatchNormalization needs constant per-channel parameters");
  const float *scale = FloatData(float_data, op.inputs[1]),
              *bias = FloatData(float_data, op.inputs[2]),
              *mean = FloatData(float_data, op.inputs[3]),
              *var = FloatData(float_data, op.inputs[4]);
  const double eps = op.attrs.GetFloat("epsilon", 1e-5);
  table.resize(static_cast<size_t>(C) * 256);
  for (int64_t c = 0; c < C; ++c) {
    fn.a = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    fn.b = bias[c] - mean[c] * fn.a;
    sp_host_build_lut_s8_fn(EvalLut, &fn, pi.scale[0], pi.zero_point[0], po.scale[0],
                            po.zero_point[0], table.data() + 256 * c);
  }
  return Status::Ok();
}

// Lookup tables.
Status BuildTables(const ir::Graph& g8, const ModelData& float_data, const std::vector<Role>& role,
                   QuantizedModel* q_out) {
  QuantizedModel& q = *q_out;
  auto activation = [&](ir::TensorId id) { return role[id.value()] == Role::kActivation; };
  for (const ir::Op& op : g8.ops()) {
    if (op.inputs.empty() || op.outputs.empty() || !activation(op.inputs[0]) ||
        !activation(op.outputs[0]))
      continue;
    const ir::QuantParams& pi = q.params[op.inputs[0].value()];
    const ir::QuantParams& po = q.params[op.outputs[0].value()];
    LutFn fn;
    fn.type = op.type;
    auto& table = q.tables[op.id.value()];
    if (op.type == "BatchNormalization") {
      SP_RETURN_IF_ERROR(BuildBatchNormTables(g8, float_data, op, pi, po, &table));
      continue;
    }
    const bool clamp_op = op.type == "Relu" || op.type == "Clip";
    const bool lut_op = op.type == "Sigmoid" || op.type == "Tanh" || op.type == "HardSigmoid" ||
                        op.type == "HardSwish" || op.type == "LeakyRelu" || op.type == "Elu" ||
                        op.type == "Gelu" || op.type == "Erf" || op.type == "Exp" ||
                        op.type == "Neg" || op.type == "Abs" || op.type == "Sqrt";
    if (!lut_op && !(clamp_op && pi.scale != po.scale) &&
        !(clamp_op && pi.zero_point != po.zero_point))
      continue;
    if (op.type == "HardSigmoid") {
      fn.alpha = op.attrs.GetFloat("alpha", 0.2);
      fn.beta = op.attrs.GetFloat("beta", 0.5);
    } else if (op.type == "LeakyRelu") {
      fn.alpha = op.attrs.GetFloat("alpha", 0.01);
    } else if (op.type == "Elu") {
      fn.alpha = op.attrs.GetFloat("alpha", 1.0);
    } else if (op.type == "Clip") {
      fn.lo = op.attrs.GetFloat("min", -3.4e38);
      fn.hi = op.attrs.GetFloat("max", 3.4e38);
    }
    table.resize(256);
    sp_host_build_lut_s8_fn(EvalLut, &fn, pi.scale[0], pi.zero_point[0], po.scale[0],
                            po.zero_point[0], table.data());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Calibration> Calibrate(const ir::Graph& gf, const ModelData& float_data,
                                ExecResult* reference) {
  Calibration cal;
  const size_t n = static_cast<size_t>(gf.num_tensors());
  cal.min.assign(n, 0.0f);
  cal.max.assign(n, 0.0f);
  cal.seen.assign(n, false);
  auto record = [&](ir::TensorId id, const uint8_t* bytes) {
    const ir::Tensor& t = gf.tensor(id);
    if (t.dtype != ir::DataType::kFloat32 || !bytes) return;
    const float* f = reinterpret_cast<const float*>(bytes);
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int64_t i = 0, e = t.NumElements(); i < e; ++i) {
      if (!std::isfinite(f[i])) continue;
      lo = std::min(lo, f[i]);
      hi = std::max(hi, f[i]);
    }
    if (lo > hi) lo = hi = 0;
    cal.min[id.value()] = lo;
    cal.max[id.value()] = hi;
    cal.seen[id.value()] = true;
  };
  for (ir::TensorId id : gf.Inputs()) record(id, float_data.values[id.value()].data());
  OpObserver observer = [&](const ir::Op& op, const std::vector<uint8_t*>& outs) {
    if (ir::IsViewOp(op.type)) return;
    for (size_t k = 0; k < op.outputs.size(); ++k) record(op.outputs[k], outs[k]);
  };
  SP_ASSIGN_OR_RETURN(ExecResult r,
                      RunNaive(gf, analysis::ModelOrder(gf), float_data, nullptr, &observer));
  if (reference) *reference = std::move(r);
  return cal;
}

StatusOr<QuantizedModel> Quantize(const ir::Graph& g8, const ir::Graph& gf,
                                  const ModelData& float_data, const Calibration& cal) {
  const int nt = g8.num_tensors();
  if (gf.num_tensors() != nt || gf.num_ops() != g8.num_ops())
    return InvalidArgument("the float32 and int8 graphs of '" + g8.name + "' differ");
  QuantizedModel q;
  q.params.resize(nt);
  q.tables.resize(g8.num_ops());
  q.range_min = cal.min;
  q.range_max = cal.max;
  std::vector<Role> role;
  std::vector<int> weight_axis;
  SP_RETURN_IF_ERROR(AssignRoles(g8, &role, &weight_axis));
  UnionFind uf(static_cast<size_t>(nt));
  std::vector<bool> contributes(nt, true), fixed(nt, false);
  ShareClasses(g8, role, &uf, &contributes, &fixed);
  ActivationParams(g8, gf, float_data, cal, role, &uf, contributes, fixed, &q);
  SP_RETURN_IF_ERROR(QuantizeWeights(g8, gf, float_data, role, weight_axis, &q));
  SP_RETURN_IF_ERROR(QuantizeBiases(g8, gf, float_data, &q));
  SP_RETURN_IF_ERROR(QuantizeRemaining(g8, gf, float_data, role, &q));
  SP_RETURN_IF_ERROR(BuildTables(g8, float_data, role, &q));
  return q;
}

bool SharesInputQuantParams(const std::string& op_type) {
  return ir::IsViewOp(op_type) || CopiesBytes(op_type);
}

Status BuildLookupTables(const ir::Graph& g8, const ModelData& float_data, QuantizedModel* q) {
  std::vector<Role> role;
  std::vector<int> weight_axis;
  SP_RETURN_IF_ERROR(AssignRoles(g8, &role, &weight_axis));
  q->tables.assign(g8.num_ops(), {});
  return BuildTables(g8, float_data, role, q);
}

StatusOr<QuantizedModel> QuantizeModel(const ir::Graph& g8, uint64_t seed, ExecResult* reference) {
  SP_RETURN_IF_ERROR(CheckInt8Support(g8));
  ir::Graph gf = g8;
  ir::ApplyDtype(gf, ir::DataType::kFloat32);
  SP_ASSIGN_OR_RETURN(ModelData fdata, MakeModelData(gf, seed));
  SP_ASSIGN_OR_RETURN(Calibration cal, Calibrate(gf, fdata, reference));
  return Quantize(g8, gf, fdata, cal);
}

std::string QuantError::Summary() const {
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "max abs error %.4g (%.2f output scales; float outputs up to %.4g), %.1f%% saturated",
      max_abs_error, max_error_in_scales, reference_max_abs, 100.0 * saturated_fraction);
  return buf;
}

StatusOr<QuantError> CompareWithReference(const ir::Graph& g8, const QuantizedModel& q,
                                          const ExecResult& int8_run,
                                          const ExecResult& float_reference) {
  QuantError e;
  if (int8_run.outputs.size() != float_reference.outputs.size())
    return InvalidArgument("the int8 and float32 runs have different outputs");
  int64_t total = 0, saturated = 0;
  for (size_t k = 0; k < int8_run.outputs.size(); ++k) {
    auto id = g8.FindTensor(int8_run.output_names[k]);
    if (!id) return InvalidArgument("unknown output '" + int8_run.output_names[k] + "'");
    const ir::Tensor& t = g8.tensor(*id);
    if (t.dtype != ir::DataType::kInt8) continue;
    const ir::QuantParams& p = q.params[id->value()];
    const auto& a = int8_run.outputs[k];
    const auto& f = float_reference.outputs[k];
    if (p.scale.size() != 1 || f.size() != a.size() * 4)
      return InvalidArgument("output '" + t.name + "' does not match its float32 reference");
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const int8_t v = static_cast<int8_t>(a[i]);
      float r;
      std::memcpy(&r, f.data() + 4 * i, 4);
      const double err =
          std::fabs(static_cast<double>(sp_host_dequantize_s8(v, p.scale[0], p.zero_point[0])) - r);
      worst = std::max(worst, err);
      e.reference_max_abs = std::max(e.reference_max_abs, std::fabs(static_cast<double>(r)));
      // The zero point is a real 0 (a ReLU output at -128 is not saturated).
      saturated += (v == -128 && p.zero_point[0] != -128) || (v == 127 && p.zero_point[0] != 127);
      ++total;
    }
    e.max_abs_error = std::max(e.max_abs_error, worst);
    e.max_error_in_scales = std::max(e.max_error_in_scales, worst / p.scale[0]);
  }
  e.saturated_fraction = total ? static_cast<double>(saturated) / static_cast<double>(total) : 0.0;
  return e;
}

}  // namespace sramplan::exec
