#include "exec/model_data.h"

#include <cmath>
#include <cstring>

namespace sramplan::exec {
namespace {

uint64_t SplitMix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Uniform in [lo, hi), from 24 random bits so the value is exact in float.
float Uniform(uint64_t& s, float lo, float hi) {
  float u = static_cast<float>(SplitMix(s) >> 40) / static_cast<float>(1 << 24);
  return lo + (hi - lo) * u;
}

// How a constant is used decides a sensible distribution for it.
enum class Role { kWeight, kBias, kBnScale, kBnShift, kBnVar, kNormScale, kOther };

Role RoleOf(const ir::Graph& g, const ir::Tensor& t, int64_t* fan_in) {
  *fan_in = 1;
  for (ir::OpId c : t.consumers) {
    const ir::Op& op = g.op(c);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i] != t.id) continue;
      if ((op.type == "Conv" || op.type == "Gemm") && i == 1) {
        int64_t f = 1;
        if (op.type == "Conv") {
          for (size_t k = 1; k < t.shape.size(); ++k) f *= t.shape[k];
        } else if (t.shape.size() == 2) {
          f = op.attrs.GetInt("transB", 0) ? t.shape[1] : t.shape[0];
        }
        *fan_in = f;
        return Role::kWeight;
      }
      if (op.type == "MatMul" && i == 1 && t.shape.size() >= 2) {
        *fan_in = t.shape[t.shape.size() - 2];
        return Role::kWeight;
      }
      if ((op.type == "Conv" || op.type == "Gemm") && i == 2) return Role::kBias;
      if (op.type == "BatchNormalization") return i == 1 ? Role::kBnScale : i == 4 ? Role::kBnVar : Role::kBnShift;
      if (op.type == "LayerNormalization") return i == 1 ? Role::kNormScale : Role::kBias;
    }
  }
  return Role::kOther;
}

}  // namespace

StatusOr<ModelData> MakeModelData(const ir::Graph& g, uint64_t seed) {
  ModelData d;
  d.values.resize(g.num_tensors());
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind != ir::TensorKind::kConstant && t.kind != ir::TensorKind::kInput) continue;
    const int64_t bytes = t.Bytes();
    auto& v = d.values[t.id.value()];
    if (t.kind == ir::TensorKind::kConstant && !t.data.empty()) {
      if (static_cast<int64_t>(t.data.size()) != bytes)
        return InvalidArgument("constant '" + t.name + "' carries " + std::to_string(t.data.size()) +
                               " bytes of data but its shape and type need " + std::to_string(bytes));
      v = t.data;
      continue;
    }
    v.assign(static_cast<size_t>(bytes), 0);
    uint64_t s = seed ^ Fnv(t.name);
    const int64_t n = t.NumElements();
    if (t.dtype == ir::DataType::kFloat32) {
      float lo = -1, hi = 1;
      if (t.kind == ir::TensorKind::kConstant) {
        int64_t fan_in = 1;
        switch (RoleOf(g, t, &fan_in)) {
          case Role::kWeight: {
            float b = std::sqrt(3.0f / static_cast<float>(std::max<int64_t>(fan_in, 1)));
            lo = -b;
            hi = b;
            break;
          }
          case Role::kBias: case Role::kBnShift: lo = -0.1f; hi = 0.1f; break;
          case Role::kBnScale: case Role::kNormScale: lo = 0.5f; hi = 1.5f; break;
          case Role::kBnVar: lo = 0.5f; hi = 1.5f; break;
          case Role::kOther: lo = -0.5f; hi = 0.5f; break;
        }
      }
      float* f = reinterpret_cast<float*>(v.data());
      for (int64_t i = 0; i < n; ++i) f[i] = Uniform(s, lo, hi);
    } else if (t.dtype == ir::DataType::kInt64 || t.dtype == ir::DataType::kInt32 || t.dtype == ir::DataType::kBool) {
      // Index-like tensors without data (e.g. a stripped Gather index): zeros are always in range.
    } else {
      for (int64_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(SplitMix(s));
    }
    if (t.kind == ir::TensorKind::kConstant) ++d.generated_constants;
  }
  return d;
}

}  // namespace sramplan::exec
