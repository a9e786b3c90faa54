// int8 convolutions and fully connected layers as call records (kernels_s8_internal.h), and
// TinyEngine's in-place depthwise convolution.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/kernels_s8_internal.h"
#include "exec/window_args.h"

namespace sramplan::exec {

namespace {

struct ConvArgs {
  int32_t stride[2] = {1, 1};
  int32_t pad[4] = {0, 0, 0, 0};  // top, left, bottom, right
  int32_t dil[2] = {1, 1};
  int32_t groups = 1;
  int32_t in_zp = 0, out_zp = 0, act_min = -128, act_max = 127;
  CallArg bias = nullptr;  // a reference to the int32 bias, or NULL
  CallRef rq;              // the requantisation array
};

KernelCall ConvCall(const sp_tensor_t& x, CallRef xr, const sp_tensor_t& w, CallRef wr,
                    const ConvArgs& a, const sp_tensor_t& y, CallRef yr) {
  return Call(KernelFn::kConvS8, {x, xr, Int(a.in_zp), w, wr, a.bias, a.rq, Int(a.out_zp),
                                  Int(a.act_min), Int(a.act_max), Ints(a.stride, 2), Ints(a.pad, 4),
                                  Ints(a.dil, 2), Int(a.groups), y, yr});
}

// One 2-D convolution through sp_conv_s8 appended to `body`; channel-strided (NCHW) operands of
// non-depthwise convolutions go through channels-last staging copies.
void AddConv2D(OpCalls* c, std::vector<KernelCall>* body, const sp_tensor_t& x, CallRef xr,
               const sp_tensor_t& w, CallRef wr, const ConvArgs& a, const sp_tensor_t& y,
               CallRef yr) {
  const bool depthwise = a.groups > 1 && a.groups == x.dims[1];
  const bool stage = !depthwise && x.dims[1] > 1 && x.strides[1] != 1;
  if (!stage) {
    body->push_back(ConvCall(x, xr, w, wr, a, y, yr));
    return;
  }
  const sp_tensor_t xn = ChannelsLast(x), wn = ChannelsLast(w), yn = ChannelsLast(y);
  const int t0 = static_cast<int>(c->temp_bytes.size());
  for (const sp_tensor_t* t : {&xn, &wn, &yn})
    c->temp_bytes.push_back(std::max<int64_t>(sp_tensor_numel(t), 1));
  body->push_back(Call(KernelFn::kCopy, {x, xr, Int(1), xn, Temp(t0)}));
  body->push_back(Call(KernelFn::kCopy, {w, wr, Int(1), wn, Temp(t0 + 1)}));
  body->push_back(ConvCall(xn, Temp(t0), wn, Temp(t0 + 1), a, yn, Temp(t0 + 2)));
  body->push_back(Call(KernelFn::kCopy, {yn, Temp(t0 + 2), Int(1), y, yr}));
}

// 3-D convolution in plain loops (TFLite ConvPerChannel arithmetic extended to a depth axis).
// x (N, C, D, H, W), w (K, C/g, KD, KH, KW), y (N, K, OD, OH, OW); stride/dil 3 entries, pad 6
// (ONNX order).
void Conv3DLoops(const sp_tensor_t& x, const int8_t* xp, const sp_tensor_t& w, const int8_t* wp,
                 const int32_t* stride, const int32_t* pad, const int32_t* dil, int32_t groups,
                 int32_t in_zp, const int32_t* bias, const sp_requant_t* rq, int32_t out_zp,
                 int32_t act_min, int32_t act_max, const sp_tensor_t& y, int8_t* yp) {
  const int32_t N = x.dims[0], K = w.dims[0], cg = w.dims[1], kg = K / groups;
  for (int32_t n = 0; n < N; ++n)
    for (int32_t k = 0; k < K; ++k) {
      const int32_t c0 = (k / kg) * cg;
      for (int32_t od = 0; od < y.dims[2]; ++od)
        for (int32_t oh = 0; oh < y.dims[3]; ++oh)
          for (int32_t ow = 0; ow < y.dims[4]; ++ow) {
            uint32_t acc = 0;  // wraps like the int32 reference
            for (int32_t c = 0; c < cg; ++c)
              for (int32_t td = 0; td < w.dims[2]; ++td) {
                const int32_t id = od * stride[0] - pad[0] + td * dil[0];
                if (id < 0 || id >= x.dims[2]) continue;
                for (int32_t th = 0; th < w.dims[3]; ++th) {
                  const int32_t ih = oh * stride[1] - pad[1] + th * dil[1];
                  if (ih < 0 || ih >= x.dims[3]) continue;
                  for (int32_t tw = 0; tw < w.dims[4]; ++tw) {
                    const int32_t iw = ow * stride[2] - pad[2] + tw * dil[2];
                    if (iw < 0 || iw >= x.dims[4]) continue;
                    const int32_t xv =
                        xp[n * x.strides[0] + (c0 + c) * x.strides[1] + id * x.strides[2] +
                           ih * x.strides[3] + iw * x.strides[4]];
                    const int32_t wv = wp[k * w.strides[0] + c * w.strides[1] + td * w.strides[2] +
                                          th * w.strides[3] + tw * w.strides[4]];
                    acc += static_cast<uint32_t>((xv - in_zp) * wv);
                  }
                }
              }
            if (bias) acc += static_cast<uint32_t>(bias[k]);
            int32_t v = sp_multiply_by_quantized_multiplier(static_cast<int32_t>(acc),
                                                            rq[k].multiplier, rq[k].shift) +
                        out_zp;
            v = std::clamp(v, act_min, act_max);
            yp[n * y.strides[0] + k * y.strides[1] + od * y.strides[2] + oh * y.strides[3] +
               ow * y.strides[4]] = static_cast<int8_t>(v);
          }
    }
}

}  // namespace

StatusOr<OpCalls> BuildConv(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q) {
  if (op.inputs.size() < 2 || g.tensor(op.inputs[1]).kind != ir::TensorKind::kConstant)
    return Unsupported("op '" + op.name + "': int8 Conv needs constant weights");
  const auto& xs = g.tensor(op.inputs[0]).shape;
  const auto& ys = g.tensor(op.outputs[0]).shape;
  const int rank = static_cast<int>(xs.size());
  const int nsp = rank - 2;
  if (nsp < 1 || nsp > 3)
    return Unsupported("op '" + op.name + "': int8 Conv supports 1-D, 2-D and 3-D convolutions");
  QP qi, qo;
  SP_RETURN_IF_ERROR(ActParams(g, q, op.inputs[0], op, &qi));
  SP_RETURN_IF_ERROR(ActParams(g, q, op.outputs[0], op, &qo));
  const ir::QuantParams& wq = q.params.at(op.inputs[1].value());
  sp_tensor_t x = Describe(g, xs, true), y = Describe(g, ys, true),
              w = Describe(g, g.tensor(op.inputs[1]).shape, true);
  const int32_t K = y.dims[1];
  if (static_cast<int32_t>(wq.scale.size()) != K)
    return InternalError("op '" + op.name + "': weights have " + std::to_string(wq.scale.size()) +
                         " scales for " + std::to_string(K) + " output channels");
  OpCalls c;
  std::vector<sp_requant_t> rq(K);
  sp_host_conv_requant(qi.scale, wq.scale.data(), K, qo.scale, rq.data());
  ConvArgs a;
  SP_ASSIGN_OR_RETURN(WindowArgs wa, ConvWindow(g, op));
  a.groups = wa.group;
  a.in_zp = qi.zp;
  a.out_zp = qo.zp;
  sp_host_act_range_s8(ActivationKind(op), qo.scale, qo.zp, &a.act_min, &a.act_max);
  if (op.inputs.size() >= 3) a.bias = In(2);
  a.rq = ConstRef(AddRequants(&c, rq));
  std::vector<int32_t> st = wa.strides, pd = wa.pads, dl = wa.dilations;
  st.resize(nsp, 1);
  dl.resize(nsp, 1);
  if (pd.empty()) pd.assign(2 * nsp, 0);
  if (static_cast<int>(pd.size()) != 2 * nsp)
    return InvalidArgument("op '" + op.name + "': pads need 2 entries per spatial dim");
  CallBlock b;
  if (nsp == 2) {
    a.stride[0] = st[0], a.stride[1] = st[1];
    a.dil[0] = dl[0], a.dil[1] = dl[1];
    a.pad[0] = pd[0], a.pad[1] = pd[1], a.pad[2] = pd[2], a.pad[3] = pd[3];
    AddConv2D(&c, &b.calls, x, In(0), w, In(1), a, y, Out(0));
    c.blocks.push_back(std::move(b));
    return c;
  }
  if (nsp == 1) {  // (N, C, L) as (N, C, 1, L)
    a.stride[1] = st[0];
    a.dil[1] = dl[0];
    a.pad[1] = pd[0], a.pad[3] = pd[1];
    AddConv2D(&c, &b.calls, InsertUnitDim(x, 2), In(0), InsertUnitDim(w, 2), In(1), a,
              InsertUnitDim(y, 2), Out(0));
    c.blocks.push_back(std::move(b));
    return c;
  }
  // 3-D.
  const int32_t kd = w.dims[2], kh = w.dims[3], kw = w.dims[4];
  if (kd == 1 && pd[0] == 0 && pd[3] == 0) {
    // One 2-D convolution per output depth slice: input slice od * stride_d.
    a.stride[0] = st[1], a.stride[1] = st[2];
    a.dil[0] = dl[1], a.dil[1] = dl[2];
    a.pad[0] = pd[1], a.pad[1] = pd[2], a.pad[2] = pd[4], a.pad[3] = pd[5];
    const sp_tensor_t x4 = DropDim(x, 2), w4 = DropDim(w, 2), y4 = DropDim(y, 2);
    if (y.dims[2] > 0 && static_cast<int64_t>(y.dims[2] - 1) * st[0] >= x.dims[2])
      return InvalidArgument("op '" + op.name + "': output depth exceeds the input");
    b.count = y.dims[2];
    AddConv2D(&c, &b.calls, x4, In(0, 0, static_cast<int64_t>(st[0]) * x.strides[2]), w4, In(1), a,
              y4, Out(0, 0, y.strides[2]));
    c.blocks.push_back(std::move(b));
    return c;
  }
  const bool hw_merge_x = x.strides[3] == x.dims[4] * x.strides[4];
  const bool hw_merge_y = y.strides[3] == y.dims[4] * y.strides[4];
  if (kh == 1 && kw == 1 && st[1] == 1 && st[2] == 1 && pd[1] == 0 && pd[2] == 0 && pd[4] == 0 &&
      pd[5] == 0 && hw_merge_x && hw_merge_y && x.dims[3] == y.dims[3] && x.dims[4] == y.dims[4]) {
    // A temporal (kd, 1, 1) convolution: 2-D over (D, H*W).
    auto merge = [](const sp_tensor_t& t) {
      sp_tensor_t r = DropDim(t, 3);
      r.dims[3] = t.dims[3] * t.dims[4];
      r.strides[3] = t.strides[4];
      return r;
    };
    sp_tensor_t w4 = DropDim(w, 4);  // (K, C/g, kd, 1)
    a.stride[0] = st[0];
    a.dil[0] = dl[0];
    a.pad[0] = pd[0], a.pad[2] = pd[3];
    AddConv2D(&c, &b.calls, merge(x), In(0), w4, In(1), a, merge(y), Out(0));
    c.blocks.push_back(std::move(b));
    return c;
  }
  const bool has_bias = op.inputs.size() >= 3;
  c.host_loop_what = "3-D convolution with a " + std::to_string(kd) + "x" + std::to_string(kh) +
                     "x" + std::to_string(kw) + " kernel";
  c.host_loop = [x, w, y, st, pd, dl, a, rq, has_bias](const std::vector<const uint8_t*>& in,
                                                       const std::vector<uint8_t*>& out) {
    Conv3DLoops(x, reinterpret_cast<const int8_t*>(in[0]), w,
                reinterpret_cast<const int8_t*>(in[1]), st.data(), pd.data(), dl.data(), a.groups,
                a.in_zp, has_bias ? reinterpret_cast<const int32_t*>(in[2]) : nullptr, rq.data(),
                a.out_zp, a.act_min, a.act_max, y, reinterpret_cast<int8_t*>(out[0]));
    return Status::Ok();
  };
  return c;
}

// Gemm / MatMul with a constant B as TFLite FullyConnected.
StatusOr<OpCalls> BuildFullyConnected(const ir::Graph& g, const ir::Op& op,
                                      const QuantizedModel& q) {
  if (op.inputs.size() < 2 || g.tensor(op.inputs[1]).kind != ir::TensorKind::kConstant ||
      g.tensor(op.inputs[0]).kind == ir::TensorKind::kConstant)
    return Unsupported(
        "op '" + op.name + "' (" + op.type +
        "): int8 execution supports only a matrix product of an activation with constant weights "
        "(fully connected), not of two activations");
  const auto& as = g.tensor(op.inputs[0]).shape;
  const auto& bs = g.tensor(op.inputs[1]).shape;
  const auto& os = g.tensor(op.outputs[0]).shape;
  QP qi, qo;
  SP_RETURN_IF_ERROR(ActParams(g, q, op.inputs[0], op, &qi));
  SP_RETURN_IF_ERROR(ActParams(g, q, op.outputs[0], op, &qo));
  const ir::QuantParams& wq = q.params.at(op.inputs[1].value());
  sp_tensor_t a, w, o;
  if (bs.size() != 2)
    return Unsupported("op '" + op.name + "': int8 " + op.type + " needs a 2-D constant B");
  const bool gemm = op.type == "Gemm";
  const bool trans_b = gemm && op.attrs.GetInt("transB", 0) != 0;
  const int32_t N = static_cast<int32_t>(trans_b ? bs[0] : bs[1]);
  const int32_t K = static_cast<int32_t>(trans_b ? bs[1] : bs[0]);
  if (gemm) {
    if (as.size() != 2) return InvalidArgument("op '" + op.name + "': Gemm needs a 2-D A");
    a = Contig(as);
    if (op.attrs.GetInt("transA", 0)) {
      std::swap(a.dims[0], a.dims[1]);
      std::swap(a.strides[0], a.strides[1]);
    }
  } else {
    int64_t m = 1;
    for (size_t i = 0; i + 1 < as.size(); ++i) m *= as[i];
    a = Contig({m, as.back()});
  }
  w = Contig(bs);
  if (!trans_b) {  // B is (K, N): logical (N, K)
    std::swap(w.dims[0], w.dims[1]);
    std::swap(w.strides[0], w.strides[1]);
  }
  o = Contig({a.dims[0], N});
  if (a.dims[1] != K || sp_tensor_numel(&o) != g.tensor(op.outputs[0]).NumElements() || os.empty())
    return InvalidArgument("op '" + op.name + "': " + op.type +
                           " shapes do not form a matrix product");
  if (static_cast<int32_t>(wq.scale.size()) != N)
    return InternalError("op '" + op.name + "': weights have " + std::to_string(wq.scale.size()) +
                         " scales for " + std::to_string(N) + " outputs");
  const double alpha = gemm ? op.attrs.GetFloat("alpha", 1.0) : 1.0;
  std::vector<sp_requant_t> rq(N);
  sp_host_conv_requant(qi.scale * alpha, wq.scale.data(), N, qo.scale, rq.data());
  CallArg bias = nullptr;
  if (gemm && op.inputs.size() >= 3) {
    if (g.tensor(op.inputs[2]).NumElements() != N ||
        g.tensor(op.inputs[2]).dtype != ir::DataType::kInt32)
      return Unsupported("op '" + op.name +
                         "': int8 Gemm needs C to be a constant bias of N elements");
    bias = In(2);
  }
  OpCalls c;
  const int rqi = AddRequants(&c, rq);
  c.blocks.push_back(
      {1,
       {Call(KernelFn::kFullyConnectedS8, {a, In(0), Int(qi.zp), w, In(1), bias, ConstRef(rqi),
                                           Int(qo.zp), Int(-128), Int(127), o, Out(0)})}});
  return c;
}

StatusOr<OpCalls> BuildDepthwiseInPlaceCallsS8(const ir::Graph& g, const ir::Op& op,
                                               const QuantizedModel& q, int64_t scratch_bytes) {
  SP_RETURN_IF_ERROR(Matches(g, q));
  if (!ir::IsDepthwiseConv(g, op) || g.tensor(op.inputs[0]).dtype != ir::DataType::kInt8 ||
      g.tensor(op.inputs[0]).shape.size() != 4)
    return Unsupported("op '" + op.name +
                       "': int8 in-place execution is only for 2-D int8 depthwise convolutions");
  const auto& xs = g.tensor(op.inputs[0]).shape;
  const auto& ys = g.tensor(op.outputs[0]).shape;
  sp_tensor_t x = Describe(g, xs, true), y = Describe(g, ys, true),
              w = Describe(g, g.tensor(op.inputs[1]).shape, true);
  const int32_t channels = x.dims[1];
  sp_tensor_t sc;
  sp_tensor_init_nchw(&sc, y.dims[0], 1, y.dims[2], y.dims[3]);
  if (sp_tensor_span(&sc) > scratch_bytes)
    return Status(StatusCode::kMismatch, "op '" + op.name + "': the scratch buffer holds " +
                                             std::to_string(scratch_bytes) +
                                             " bytes but one channel needs " +
                                             std::to_string(sp_tensor_span(&sc)));
  QP qi, qo;
  SP_RETURN_IF_ERROR(ActParams(g, q, op.inputs[0], op, &qi));
  SP_RETURN_IF_ERROR(ActParams(g, q, op.outputs[0], op, &qo));
  const ir::QuantParams& wq = q.params.at(op.inputs[1].value());
  if (static_cast<int32_t>(wq.scale.size()) != y.dims[1])
    return InternalError("op '" + op.name + "': weight scales do not match the output channels");
  std::vector<sp_requant_t> rq(y.dims[1]);
  sp_host_conv_requant(qi.scale, wq.scale.data(), y.dims[1], qo.scale, rq.data());
  SP_ASSIGN_OR_RETURN(WindowArgs wa, ConvWindow(g, op));
  std::vector<int32_t> st = wa.strides, pd = wa.pads, dl = wa.dilations;
  st.resize(2, 1);
  dl.resize(2, 1);
  pd.resize(4, 0);
  OpCalls c;
  ConvArgs a;
  a.in_zp = qi.zp;
  a.out_zp = qo.zp;
  sp_host_act_range_s8(ActivationKind(op), qo.scale, qo.zp, &a.act_min, &a.act_max);
  if (op.inputs.size() >= 3) a.bias = In(2, 0, sizeof(int32_t));
  a.rq = ConstRef(AddRequants(&c, rq), 0, sizeof(sp_requant_t));
  std::copy(st.begin(), st.begin() + 2, a.stride);
  std::copy(pd.begin(), pd.begin() + 4, a.pad);
  std::copy(dl.begin(), dl.begin() + 2, a.dil);
  a.groups = 1;
  sp_tensor_t xc = x, yc = y, wc = w;
  xc.dims[1] = yc.dims[1] = 1;
  wc.dims[0] = 1;
  const CallRef scratch{CallRef::Base::kScratch, 0, 0, 0};
  // Channel c: convolve input channel c into the scratch, then copy it over output channel c (the
  // input channel c, which no later channel reads).
  CallBlock b;
  b.count = channels;
  b.calls.push_back(
      ConvCall(xc, In(0, 0, x.strides[1]), wc, In(1, 0, w.strides[0]), a, sc, scratch));
  b.calls.push_back(Call(KernelFn::kCopy, {sc, scratch, Int(1), yc, Out(0, 0, y.strides[1])}));
  c.blocks.push_back(std::move(b));
  return c;
}

Status RunDepthwiseInPlaceS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                             const std::vector<const uint8_t*>& in, uint8_t* out, uint8_t* scratch,
                             int64_t scratch_bytes, const OperandBytes& bytes) {
  if (in.size() != op.inputs.size() || op.outputs.size() != 1)
    return InvalidArgument("op '" + op.name + "': the executor needs one pointer per operand");
  SP_ASSIGN_OR_RETURN(OpCalls calls, BuildDepthwiseInPlaceCallsS8(g, op, q, scratch_bytes));
  SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, true, bytes));
  return ExecuteCalls(op, calls, in, {out}, scratch);
}

}  // namespace sramplan::exec
