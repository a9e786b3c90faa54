// Depthwise weights in the layout the fast kernel path wants: a depthwise convolution's ONNX-layout
// [K][1][R][S] constant filter is emitted as TFLite's [1][R][S][K] (channels contiguous), with the
// descriptor's strides saying so, so sp_conv_s8_depthwise takes its channel-contiguous SIMD path.
// Same bytes, another order: the kernel reads the same weight for every (k, r, s), so the results
// are the host executor's bit for bit.
#include "codegen/emitter.h"

namespace sramplan::codegen {

bool Emitter::DepthwiseRepack(const exec::KernelCall& k, const std::vector<Loc>& in, std::string* desc,
                              std::string* weights) {
  const std::string& fn = exec::Signature(k.fn).name;
  if ((fn != "sp_conv_s8" && fn != "sp_conv_s8_depthwise") || k.args.size() != 16) return false;
  const auto* xd = std::get_if<sp_tensor_t>(&k.args[0]);
  const auto* wd = std::get_if<sp_tensor_t>(&k.args[3]);
  const auto* wr = std::get_if<exec::CallRef>(&k.args[4]);
  const auto* groups = std::get_if<int64_t>(&k.args[13]);
  const auto* od = std::get_if<sp_tensor_t>(&k.args[14]);
  if (!xd || !wd || !wr || !groups || !od || xd->rank != 4 || wd->rank != 4 || od->rank != 4) return false;
  const int64_t K = wd->dims[0], R = wd->dims[2], S = wd->dims[3];
  // Depth multiplier 1, channels contiguous in and out, a dense [K][1][R][S] filter.
  if (*groups < 2 || *groups != xd->dims[1] || K != *groups || wd->dims[1] != 1 || xd->strides[1] != 1 ||
      od->strides[1] != 1 || wd->strides[0] != R * S || wd->strides[2] != S || wd->strides[3] != 1)
    return false;
  if (wr->base != exec::CallRef::Base::kInput || wr->index >= static_cast<int>(in.size()) || wr->offset != 0 ||
      wr->step != 0 || in[wr->index].arena)
    return false;
  const ir::Tensor& t = g_.tensor(in[wr->index].tensor);
  const std::vector<uint8_t>& src = q_.data.values[t.id.value()];
  if (static_cast<int64_t>(src.size()) != K * R * S) return false;
  exec::ConstArray a{"int8_t", "dww", std::vector<uint8_t>(src.size())};
  for (int64_t c = 0; c < K; ++c)
    for (int64_t i = 0; i < R * S; ++i) a.bytes[i * K + c] = src[c * R * S + i];
  sp_tensor_t d = *wd;
  d.strides[0] = 1;
  d.strides[1] = 0;
  d.strides[2] = static_cast<int32_t>(S * K);
  d.strides[3] = static_cast<int32_t>(K);
  *desc = "&" + DescName(d);
  *weights = ConstName(a);
  return true;
}

}  // namespace sramplan::codegen
