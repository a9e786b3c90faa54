// Runs int8 call records on the host (kernels.h: ExecuteCalls, ExecuteSegmentCall).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/kernels_s8_internal.h"

namespace sramplan::exec {

namespace {

// ---- Running call records on the host
// -------------------------------------------------------------

class Runner {
 public:
  Runner(const OpCalls& c, const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out,
         uint8_t* scratch, std::vector<std::vector<uint8_t>>* temps, uint8_t* pool = nullptr)
      : c_(c), in_(in), out_(out), scratch_(scratch), temps_(temps), pool_(pool) {}

  void set_iteration(int64_t i) { i_ = i; }

  StatusOr<sp_status_t> Run(const KernelCall& k) {
    const KernelSignature& s = Signature(k.fn);
    if (k.args.size() != s.params.size())
      return InternalError(std::string("call of ") + s.name + " has the wrong number of arguments");
    for (size_t a = 0; a < k.args.size(); ++a) {
      if (!ArgFits(s.params[a], k.args[a]))
        return InternalError(std::string("call of ") + s.name + ": argument " + std::to_string(a) +
                             " does not fit its parameter type " + s.params[a]);
      if (const auto* r = std::get_if<CallRef>(&k.args[a])) {
        if (!Ptr(*r))
          return InternalError(std::string("call of ") + s.name + ": argument " +
                               std::to_string(a) + " refers to a missing operand");
      }
    }
    const auto& v = k.args;
    switch (k.fn) {
      case KernelFn::kConvS8:
        return sp_conv_s8(D(v[0]), CS8(v[1]), I(v[2]), D(v[3]), CS8(v[4]), CI32(v[5]), CRq(v[6]),
                          I(v[7]), I(v[8]), I(v[9]), CI32(v[10]), CI32(v[11]), CI32(v[12]),
                          I(v[13]), D(v[14]), S8(v[15]));
      case KernelFn::kFullyConnectedS8:
        return sp_fully_connected_s8(D(v[0]), CS8(v[1]), I(v[2]), D(v[3]), CS8(v[4]), CI32(v[5]),
                                     CRq(v[6]), I(v[7]), I(v[8]), I(v[9]), D(v[10]), S8(v[11]));
      case KernelFn::kMaxPoolS8:
        return sp_max_pool_s8(D(v[0]), CS8(v[1]), CI32(v[2]), CI32(v[3]), CI32(v[4]), I(v[5]),
                              I(v[6]), D(v[7]), S8(v[8]));
      case KernelFn::kAvgPoolS8:
        return sp_avg_pool_s8(D(v[0]), CS8(v[1]), CI32(v[2]), CI32(v[3]), CI32(v[4]), I(v[5]),
                              I(v[6]), I(v[7]), D(v[8]), S8(v[9]));
      case KernelFn::kGlobalAvgPoolS8:
        return sp_global_avg_pool_s8(D(v[0]), CS8(v[1]), I(v[2]), I(v[3]), D(v[4]), S8(v[5]));
      case KernelFn::kGlobalAvgPoolRequantS8:
        return sp_global_avg_pool_requant_s8(D(v[0]), CS8(v[1]), I(v[2]), Rq(v[3]), I(v[4]),
                                             I(v[5]), I(v[6]), D(v[7]), S8(v[8]));
      case KernelFn::kAddS8:
        return sp_add_s8(D(v[0]), CS8(v[1]), D(v[2]), CS8(v[3]),
                         &std::get<sp_add_s8_params_t>(v[4]), D(v[5]), S8(v[6]));
      case KernelFn::kSubS8:
        return sp_sub_s8(D(v[0]), CS8(v[1]), D(v[2]), CS8(v[3]),
                         &std::get<sp_add_s8_params_t>(v[4]), D(v[5]), S8(v[6]));
      case KernelFn::kMulS8:
        return sp_mul_s8(D(v[0]), CS8(v[1]), D(v[2]), CS8(v[3]),
                         &std::get<sp_mul_s8_params_t>(v[4]), D(v[5]), S8(v[6]));
      case KernelFn::kLutS8:
        return sp_lut_s8(D(v[0]), CS8(v[1]), CS8(v[2]), D(v[3]), S8(v[4]));
      case KernelFn::kRequantizeS8:
        return sp_requantize_s8(D(v[0]), CS8(v[1]), I(v[2]), Rq(v[3]), I(v[4]), D(v[5]), S8(v[6]));
      case KernelFn::kClampS8:
        return sp_clamp_s8(D(v[0]), CS8(v[1]), I(v[2]), I(v[3]), D(v[4]), S8(v[5]));
      case KernelFn::kSoftmaxS8:
        return sp_softmax_s8(D(v[0]), CS8(v[1]), I(v[2]), CI32(v[3]), D(v[4]), S8(v[5]));
      case KernelFn::kCopy:
        return sp_copy(D(v[0]), P(v[1]), I(v[2]), D(v[3]), P(v[4]));
      case KernelFn::kExpand:
        return sp_expand(D(v[0]), P(v[1]), I(v[2]), D(v[3]), P(v[4]));
      case KernelFn::kSlice:
        return sp_slice(D(v[0]), P(v[1]), CI32(v[2]), CI32(v[3]), I(v[4]), D(v[5]), P(v[6]));
      case KernelFn::kGather:
        return sp_gather(D(v[0]), P(v[1]), I(v[2]), D(v[3]),
                         reinterpret_cast<const int64_t*>(P(v[4])), I(v[5]), D(v[6]), P(v[7]));
      case KernelFn::kTranspose:
        return sp_transpose(D(v[0]), P(v[1]), CI32(v[2]), I(v[3]), D(v[4]), P(v[5]));
      case KernelFn::kPad:
        return sp_pad(D(v[0]), P(v[1]), CI32(v[2]), static_cast<sp_pad_mode_t>(I(v[3])), P(v[4]),
                      I(v[5]), D(v[6]), P(v[7]));
      case KernelFn::kResizeNearest:
        return sp_resize_nearest(D(v[0]), P(v[1]), static_cast<sp_coord_mode_t>(I(v[2])),
                                 static_cast<sp_nearest_mode_t>(I(v[3])), I(v[4]), D(v[5]),
                                 P(v[6]));
      case KernelFn::kSegConvS8:
      case KernelFn::kSegDepthwiseS8:
      case KernelFn::kSegFullyConnectedS8:
      case KernelFn::kSegBottleneckS8:
        return RunSegment(k);
    }
    return InternalError(std::string("no host dispatch for ") + s.name);
  }

 private:
  uint8_t* Ptr(const CallRef& r) const {
    uint8_t* base = nullptr;
    switch (r.base) {
      case CallRef::Base::kInput:
        if (r.index >= 0 && r.index < static_cast<int>(in_.size()))
          base = const_cast<uint8_t*>(in_[r.index]);
        break;
      case CallRef::Base::kOutput:
        if (r.index >= 0 && r.index < static_cast<int>(out_.size())) base = out_[r.index];
        break;
      case CallRef::Base::kScratch:
        base = scratch_;
        break;
      case CallRef::Base::kTemp:
        if (r.index >= 0 && r.index < static_cast<int>(temps_->size()))
          base = (*temps_)[r.index].data();
        break;
      case CallRef::Base::kConst:
        if (r.index >= 0 && r.index < static_cast<int>(c_.consts.size()))
          base = const_cast<uint8_t*>(c_.consts[r.index].bytes.data());
        break;
    }
    return base ? base + r.offset + i_ * r.step : nullptr;
  }
  // A segment-aware kernel on the pool at pool_ (its layer structs point into the record's arrays).
  sp_status_t RunSegment(const KernelCall& k) const {
    const auto& v = k.args;
    const SegPoolArg& pa = std::get<SegPoolArg>(v[0]);
    const sp_seg_pool_t pool{reinterpret_cast<int8_t*>(pool_), pa.pool_segments, pa.segment_bytes};
    auto layer = [](const SegLayerS8& l) {
      return sp_seg_layer_s8_t{l.weights.data(), l.bias.empty() ? nullptr : l.bias.data(), l.rq.data(),
                               l.in_zp,          l.out_zp,                               l.act_min,
                               l.act_max};
    };
    int8_t* ws = S8(v[5]);
    if (k.fn == KernelFn::kSegBottleneckS8) {
      const SegBottleneckS8& b = std::get<SegBottleneckS8>(v[4]);
      sp_seg_bottleneck_s8_t bp;
      bp.expand = layer(b.expand);
      bp.depthwise = layer(b.depthwise);
      bp.project = layer(b.project);
      bp.residual = b.residual ? &b.add : nullptr;
      return sp_seg_bottleneck_s8(&pool, I(v[1]), I(v[2]), &std::get<sp_seg_bottleneck_shape_t>(v[3]), &bp, ws,
                                  I(v[6]));
    }
    const sp_seg_layer_s8_t l = layer(std::get<SegLayerS8>(v[4]));
    if (k.fn == KernelFn::kSegFullyConnectedS8)
      return sp_seg_fully_connected_s8(&pool, I(v[1]), I(v[2]), &std::get<sp_seg_fc_shape_t>(v[3]), &l, ws, I(v[6]));
    const sp_seg_conv_shape_t* cs = &std::get<sp_seg_conv_shape_t>(v[3]);
    return k.fn == KernelFn::kSegDepthwiseS8 ? sp_seg_depthwise_s8(&pool, I(v[1]), I(v[2]), cs, &l, ws, I(v[6]))
                                             : sp_seg_conv_s8(&pool, I(v[1]), I(v[2]), cs, &l, ws, I(v[6]));
  }

  void* P(const CallArg& a) const {
    if (const auto* r = std::get_if<CallRef>(&a)) return Ptr(*r);
    if (const auto* v = std::get_if<std::vector<int32_t>>(&a))
      return const_cast<int32_t*>(v->data());
    return nullptr;
  }
  static const sp_tensor_t* D(const CallArg& a) { return &std::get<sp_tensor_t>(a); }
  static int32_t I(const CallArg& a) { return static_cast<int32_t>(std::get<int64_t>(a)); }
  static sp_requant_t Rq(const CallArg& a) { return std::get<sp_requant_t>(a); }
  const int8_t* CS8(const CallArg& a) const { return static_cast<const int8_t*>(P(a)); }
  int8_t* S8(const CallArg& a) const { return static_cast<int8_t*>(P(a)); }
  const int32_t* CI32(const CallArg& a) const { return static_cast<const int32_t*>(P(a)); }
  const sp_requant_t* CRq(const CallArg& a) const { return static_cast<const sp_requant_t*>(P(a)); }

  const OpCalls& c_;
  const std::vector<const uint8_t*>& in_;
  const std::vector<uint8_t*>& out_;
  uint8_t* scratch_;
  std::vector<std::vector<uint8_t>>* temps_;
  uint8_t* pool_;
  int64_t i_ = 0;
};

}  // namespace

Status ExecuteCalls(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                    const std::vector<uint8_t*>& out, uint8_t* scratch) {
  if (calls.host_loop) return calls.host_loop(in, out);
  thread_local std::vector<std::vector<uint8_t>> temps;
  if (temps.size() < calls.temp_bytes.size()) temps.resize(calls.temp_bytes.size());
  for (size_t t = 0; t < calls.temp_bytes.size(); ++t)
    temps[t].resize(static_cast<size_t>(calls.temp_bytes[t]));
  Runner runner(calls, in, out, scratch, &temps);
  for (const CallBlock& b : calls.blocks)
    for (int32_t i = 0; i < b.count; ++i) {
      runner.set_iteration(i);
      for (const KernelCall& k : b.calls) {
        SP_ASSIGN_OR_RETURN(sp_status_t s, runner.Run(k));
        if (s != SP_OK)
          return InternalError("int8 kernel " + std::string(Signature(k.fn).name) + " for op '" +
                               op.name + "' (" + op.type + ") rejected its arguments");
      }
    }
  return Status::Ok();
}

StatusOr<sp_status_t> ExecuteSegmentCall(const KernelCall& call, uint8_t* pool, uint8_t* workspace) {
  if (call.fn != KernelFn::kSegConvS8 && call.fn != KernelFn::kSegDepthwiseS8 &&
      call.fn != KernelFn::kSegFullyConnectedS8 && call.fn != KernelFn::kSegBottleneckS8)
    return InternalError(std::string(Signature(call.fn).name) + " is not a segment-aware kernel");
  if (!pool || !workspace) return InternalError("a segment-aware kernel needs its pool and workspace");
  const OpCalls none;
  const std::vector<const uint8_t*> in;
  const std::vector<uint8_t*> out;
  std::vector<std::vector<uint8_t>> temps;
  Runner runner(none, in, out, workspace, &temps, pool);
  return runner.Run(call);
}

}  // namespace sramplan::exec
