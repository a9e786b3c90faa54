// int8 execution with the model file's own quantisation (quantize_file.h).
#include "exec/quantize_file.h"

#include <cmath>
#include <cstring>

#include "sramplan_rt_host.h"

namespace sramplan::exec {
namespace {

double RoundHalfAway(double x) { return x >= 0 ? std::floor(x + 0.5) : -std::floor(-x + 0.5); }

bool ValidScale(float s) { return std::isfinite(s) && s > 0; }

// Weights (with their channel axis) and biases of the ops the int8 kernels requantise.
struct Roles {
  std::vector<int> weight_axis;  // -1: not a weight
  std::vector<bool> bias;
};

Roles FindRoles(const ir::Graph& g8) {
  Roles r;
  r.weight_axis.assign(g8.num_tensors(), -1);
  r.bias.assign(g8.num_tensors(), false);
  auto constant = [&](ir::TensorId id) { return g8.tensor(id).kind == ir::TensorKind::kConstant; };
  for (const ir::Op& op : g8.ops()) {
    if (op.inputs.size() < 2 || !constant(op.inputs[1])) continue;
    int axis = -1;
    if (op.type == "Conv") axis = 0;
    if (op.type == "Gemm" && g8.tensor(op.inputs[1]).shape.size() == 2) axis = op.attrs.GetInt("transB", 0) ? 0 : 1;
    if (op.type == "MatMul" && g8.tensor(op.inputs[1]).shape.size() == 2) axis = 1;
    if (axis < 0) continue;
    r.weight_axis[op.inputs[1].value()] = axis;
    if (op.type != "MatMul" && op.inputs.size() >= 3 && constant(op.inputs[2])) r.bias[op.inputs[2].value()] = true;
  }
  return r;
}

// Per-channel parameters of `t` along `axis` with `channels` entries (a per-tensor scale repeated).
StatusOr<ir::QuantParams> ChannelParams(const ir::Tensor& t, int axis, int64_t channels) {
  const ir::QuantParams& f = t.quant;
  const size_t n = f.scale.size();
  if (n != 1 && static_cast<int64_t>(n) != channels)
    return Unsupported("'" + t.name + "' has " + std::to_string(n) + " scales for " + std::to_string(channels) +
                       " channels");
  // A rank-1 tensor (a bias) has only its channels to be quantised along, whatever the file's
  // quantized_dimension says (converters write 3 for some biases; TFLM ignores it too).
  if (n > 1 && f.axis != axis && t.shape.size() > 1)
    return Unsupported("'" + t.name + "' is quantised along dimension " + std::to_string(f.axis) +
                       ", not its output channels (" + std::to_string(axis) + ")");
  ir::QuantParams p;
  p.axis = axis;
  for (int64_t c = 0; c < channels; ++c) {
    const size_t k = n == 1 ? 0 : static_cast<size_t>(c);
    if (!ValidScale(f.scale[k])) return Unsupported("'" + t.name + "' has a scale that is not positive");
    if (k < f.zero_point.size() && f.zero_point[k] != 0)
      return Unsupported("'" + t.name + "' has a non-zero zero point (sramplan's int8 kernels take symmetric weights)");
    p.scale.push_back(f.scale[k]);
    p.zero_point.push_back(0);
  }
  return p;
}

// The stored integers of constant `t` from its dequantised float values (the importer's
// float(scale[c] * (q - zp[c]))), checked to round-trip exactly; int8 (bytes 1) or int32 (4).
Status Requantise(const ir::Tensor& t, const float* f, const ir::QuantParams& p, int bytes, std::vector<uint8_t>* out) {
  const int64_t n = t.NumElements();
  const int64_t channels = static_cast<int64_t>(p.scale.size());
  int64_t inner = 1;
  if (channels > 1)
    for (size_t d = static_cast<size_t>(p.axis) + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  const double lo = bytes == 1 ? -128.0 : -2147483648.0, hi = bytes == 1 ? 127.0 : 2147483647.0;
  out->assign(static_cast<size_t>(n * bytes), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = channels > 1 ? (i / inner) % channels : 0;
    const double scale = p.scale[c], zp = p.zero_point[c];
    const double q = RoundHalfAway(static_cast<double>(f[i]) / scale + zp);
    // Unique only while neighbouring integers dequantise to different floats (|q| < 2^24).
    if (!(q >= lo && q <= hi) || std::fabs(q - zp) >= 16777216.0 ||
        static_cast<float>(scale * (q - zp)) != f[i])
      return Unsupported("'" + t.name + "' element " + std::to_string(i) +
                         " does not round-trip to a stored integer through its scale");
    if (bytes == 1) {
      (*out)[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
    } else {
      const int32_t v = static_cast<int32_t>(q);
      std::memcpy(out->data() + 4 * i, &v, 4);
    }
  }
  return Status::Ok();
}

bool SameParams(const ir::QuantParams& a, const ir::QuantParams& b) {
  return a.scale.size() == 1 && b.scale.size() == 1 && a.scale[0] == b.scale[0] && a.zero_point[0] == b.zero_point[0];
}

// Parameters of every tensor; kUnsupported when a tensor lacks int8 quantisation.
Status FileParams(const ir::Graph& g8, const Roles& roles, QuantizedModel* q) {
  for (const ir::Tensor& t : g8.tensors()) {
    const int id = t.id.value();
    const bool weight = roles.weight_axis[id] >= 0;
    if (t.dtype == ir::DataType::kInt8) {
      if (t.quant.empty() || t.quant.zero_point.size() != t.quant.scale.size())
        return Unsupported("tensor '" + t.name + "' has no int8 quantisation in the file");
      if (weight) {
        const int axis = roles.weight_axis[id];
        const int64_t channels = axis < static_cast<int>(t.shape.size()) ? t.shape[axis] : 1;
        SP_ASSIGN_OR_RETURN(q->params[id], ChannelParams(t, axis, channels));
        continue;
      }
      if (t.quant.scale.size() != 1 || !ValidScale(t.quant.scale[0]) || t.quant.zero_point[0] < -128 ||
          t.quant.zero_point[0] > 127)
        return Unsupported("tensor '" + t.name + "' needs one positive scale and an int8 zero point");
      q->params[id] = t.quant;
      q->params[id].axis = 0;
    } else if (roles.bias[id]) {
      if (t.dtype != ir::DataType::kInt32 || t.quant.empty())
        return Unsupported("bias '" + t.name + "' has no int32 quantisation in the file");
      SP_ASSIGN_OR_RETURN(q->params[id], ChannelParams(t, 0, t.NumElements()));
    } else if (t.dtype == ir::DataType::kFloat32) {
      return Unsupported("tensor '" + t.name + "' is float32 in the file");
    }
  }
  for (const ir::Op& op : g8.ops()) {
    if (op.inputs.empty() || op.outputs.empty()) continue;
    const ir::QuantParams& in = q->params[op.inputs[0].value()];
    const ir::QuantParams& out = q->params[op.outputs[0].value()];
    if (op.type == "Softmax" && !out.empty() && !SameParams(out, ir::QuantParams{{1.0f / 256}, {-128}, 0}))
      return Unsupported("op '" + op.name + "': its int8 output needs scale 1/256 and zero point -128");
    if (SharesInputQuantParams(op.type) && !in.empty() && !out.empty() && !SameParams(in, out))
      return Unsupported("op '" + op.name + "' (" + op.type +
                         ") has other output parameters than its input; sramplan's kernel moves the bytes unchanged");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<QuantizedModel> QuantizeWithFileParams(const ir::Graph& g8, uint64_t seed, ExecResult* reference) {
  SP_RETURN_IF_ERROR(CheckInt8Support(g8));
  const int nt = g8.num_tensors();
  const Roles roles = FindRoles(g8);
  QuantizedModel q;
  q.params.resize(nt);
  q.range_min.assign(nt, 0.0f);
  q.range_max.assign(nt, 0.0f);
  SP_RETURN_IF_ERROR(FileParams(g8, roles, &q));
  ir::Graph gf = g8;
  ir::ApplyDtype(gf, ir::DataType::kFloat32);
  SP_ASSIGN_OR_RETURN(ModelData fdata, MakeModelData(gf, seed));
  q.data.values.resize(nt);
  for (const ir::Tensor& t : g8.tensors()) {
    const int id = t.id.value();
    if (t.kind != ir::TensorKind::kConstant && t.kind != ir::TensorKind::kInput) continue;
    const auto& src = fdata.values[id];
    const float* f = reinterpret_cast<const float*>(src.data());
    const bool from_float = gf.tensor(t.id).dtype == ir::DataType::kFloat32 &&
                            static_cast<int64_t>(src.size()) == t.NumElements() * 4;
    if (t.kind == ir::TensorKind::kInput && t.dtype == ir::DataType::kInt8 && from_float) {
      auto& out = q.data.values[id];
      out.resize(static_cast<size_t>(t.NumElements()));
      for (int64_t i = 0; i < t.NumElements(); ++i)
        out[i] = static_cast<uint8_t>(sp_host_quantize_s8(std::isfinite(f[i]) ? f[i] : 0.0f, q.params[id].scale[0],
                                                          q.params[id].zero_point[0]));
    } else if ((t.dtype == ir::DataType::kInt8 || roles.bias[id]) && from_float) {
      SP_RETURN_IF_ERROR(Requantise(t, f, q.params[id], t.dtype == ir::DataType::kInt8 ? 1 : 4, &q.data.values[id]));
    } else if (t.dtype == gf.tensor(t.id).dtype && static_cast<int64_t>(src.size()) == t.Bytes()) {
      q.data.values[id] = src;
    } else {
      return Unsupported("tensor '" + t.name + "' of type " + ir::DataTypeName(t.dtype) + " has no int8 execution data");
    }
  }
  SP_RETURN_IF_ERROR(BuildLookupTables(g8, fdata, &q));
  if (reference) {
    SP_ASSIGN_OR_RETURN(Calibration cal, Calibrate(gf, fdata, reference));
    q.range_min = cal.min;
    q.range_max = cal.max;
  }
  return q;
}

StatusOr<QuantizedModel> QuantizeForVerify(const ir::Graph& g8, uint64_t seed, bool use_file_params,
                                           ExecResult* reference, std::string* how) {
  if (use_file_params) {
    StatusOr<QuantizedModel> q = QuantizeWithFileParams(g8, seed, reference);
    if (q.ok()) {
      *how = "the model's own quantisation (the file's scales and zero points; weights and biases as stored)";
      return q;
    }
    if (q.status().code() != StatusCode::kUnsupported) return q.status();
    *how = "quantised with ranges from a float32 reference run, not the file's quantisation (" + q.status().message() +
           ")";
  } else {
    *how = "quantised with ranges from a float32 reference run";
  }
  return QuantizeModel(g8, seed, reference);
}

}  // namespace sramplan::exec
