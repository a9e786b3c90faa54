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
#include <set>

#include "exec/kernels.h"
#include "exec/quantize.h"
#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"

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

namespace {

int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// ---- Building call records ----------------------------------------------------------------------

CallRef In(int i, int64_t offset = 0, int64_t step = 0) {
  return {CallRef::Base::kInput, i, offset, step};
}
CallRef Out(int i, int64_t offset = 0, int64_t step = 0) {
  return {CallRef::Base::kOutput, i, offset, step};
}
CallRef Temp(int i) { return {CallRef::Base::kTemp, i, 0, 0}; }
CallRef ConstRef(int i, int64_t offset = 0, int64_t step = 0) {
  return {CallRef::Base::kConst, i, offset, step};
}
CallArg Int(int64_t v) { return CallArg(std::in_place_type<int64_t>, v); }
CallArg Ints(const int32_t* v, int n) { return CallArg(std::vector<int32_t>(v, v + n)); }
CallArg Null() { return CallArg(nullptr); }

// Whether `a` can be passed as a parameter of C type `ctype`.
bool ArgFits(const char* ctype, const CallArg& a) {
  const std::string t = ctype;
  if (t == "const sp_tensor_t*") return std::holds_alternative<sp_tensor_t>(a);
  if (t == "sp_requant_t") return std::holds_alternative<sp_requant_t>(a);
  if (t == "const sp_add_s8_params_t*") return std::holds_alternative<sp_add_s8_params_t>(a);
  if (t == "const sp_mul_s8_params_t*") return std::holds_alternative<sp_mul_s8_params_t>(a);
  if (t == "const sp_seg_pool_t*") return std::holds_alternative<SegPoolArg>(a);
  if (t == "const sp_seg_conv_shape_t*") return std::holds_alternative<sp_seg_conv_shape_t>(a);
  if (t == "const sp_seg_fc_shape_t*") return std::holds_alternative<sp_seg_fc_shape_t>(a);
  if (t == "const sp_seg_bottleneck_shape_t*") return std::holds_alternative<sp_seg_bottleneck_shape_t>(a);
  if (t == "const sp_seg_layer_s8_t*") return std::holds_alternative<SegLayerS8>(a);
  if (t == "const sp_seg_bottleneck_s8_t*") return std::holds_alternative<SegBottleneckS8>(a);
  if (t == "const int32_t*")
    return std::holds_alternative<CallRef>(a) || std::holds_alternative<std::nullptr_t>(a) ||
           std::holds_alternative<std::vector<int32_t>>(a);
  if (t.back() == '*')
    return std::holds_alternative<CallRef>(a) || std::holds_alternative<std::nullptr_t>(a);
  return std::holds_alternative<int64_t>(a);  // int32_t and enums
}

KernelCall Call(KernelFn fn, std::vector<CallArg> args) {
  const KernelSignature& s = Signature(fn);
  SP_CHECK(args.size() == s.params.size());
  for (size_t i = 0; i < args.size(); ++i) SP_CHECK(ArgFits(s.params[i], args[i]));
  return {fn, std::move(args)};
}

// A record of one block that runs once.
OpCalls Single(KernelCall c) {
  OpCalls r;
  r.blocks.push_back({1, {std::move(c)}});
  return r;
}

int AddConst(OpCalls* c, const char* ctype, const char* role, const void* data, size_t bytes) {
  ConstArray a;
  a.ctype = ctype;
  a.role = role;
  a.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  c->consts.push_back(std::move(a));
  return static_cast<int>(c->consts.size()) - 1;
}

int AddRequants(OpCalls* c, const std::vector<sp_requant_t>& rq) {
  return AddConst(c, "sp_requant_t", "requant", rq.data(), rq.size() * sizeof(sp_requant_t));
}

// Per-tensor activation parameters.
struct QP {
  double scale = 1;
  int32_t zp = 0;
  bool operator==(const QP& o) const { return scale == o.scale && zp == o.zp; }
};

Status ActParams(const ir::Graph& g, const QuantizedModel& q, ir::TensorId id, const ir::Op& op,
                 QP* out) {
  const ir::QuantParams& p = q.params.at(id.value());
  if (p.scale.size() != 1 || p.zero_point.size() != 1)
    return InternalError("op '" + op.name + "': tensor '" + g.tensor(id).name +
                         "' has no per-tensor int8 quantisation parameters");
  out->scale = p.scale[0];
  out->zp = p.zero_point[0];
  return Status::Ok();
}

Status Matches(const ir::Graph& g, const QuantizedModel& q) {
  if (static_cast<int>(q.params.size()) != g.num_tensors() ||
      static_cast<int>(q.tables.size()) != g.num_ops())
    return InvalidArgument("the quantised model does not belong to graph '" + g.name + "'");
  return Status::Ok();
}

bool IsInt8(const ir::Graph& g, ir::TensorId id) {
  return g.tensor(id).dtype == ir::DataType::kInt8;
}

// Drops logical dim `d` of a descriptor.
sp_tensor_t DropDim(const sp_tensor_t& t, int d) {
  sp_tensor_t r = t;
  r.rank = t.rank - 1;
  for (int i = d; i < r.rank; ++i) {
    r.dims[i] = t.dims[i + 1];
    r.strides[i] = t.strides[i + 1];
  }
  r.dims[r.rank] = 0;
  r.strides[r.rank] = 0;
  return r;
}

// Inserts a dim of size 1 at `d`.
sp_tensor_t InsertUnitDim(const sp_tensor_t& t, int d) {
  sp_tensor_t r = t;
  r.rank = t.rank + 1;
  for (int i = r.rank - 1; i > d; --i) {
    r.dims[i] = t.dims[i - 1];
    r.strides[i] = t.strides[i - 1];
  }
  r.dims[d] = 1;
  r.strides[d] = 0;
  return r;
}

// Channels-last contiguous descriptor with the logical dims (N, C, H, W) of `t`.
sp_tensor_t ChannelsLast(const sp_tensor_t& t) {
  sp_tensor_t r;
  sp_tensor_init_nhwc(&r, t.dims[0], t.dims[1], t.dims[2], t.dims[3]);
  return r;
}

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

int32_t ActivationKind(const ir::Op& op) {
  std::string act = op.attrs.GetString("activation", "none");
  return act == "relu" ? 1 : act == "relu6" ? 2 : 0;
}

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
  a.groups = static_cast<int32_t>(op.attrs.GetInt("group", 1));
  a.in_zp = qi.zp;
  a.out_zp = qo.zp;
  sp_host_act_range_s8(ActivationKind(op), qo.scale, qo.zp, &a.act_min, &a.act_max);
  if (op.inputs.size() >= 3) a.bias = In(2);
  a.rq = ConstRef(AddRequants(&c, rq));
  std::vector<int32_t> st = I32(op.attrs.GetInts("strides")), pd = I32(op.attrs.GetInts("pads")),
                       dl = I32(op.attrs.GetInts("dilations"));
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

// Reduces a feature-map descriptor (N, C, spatial...) to (N, C, S, 1) when the spatial dims
// merge into one strided axis.
bool MergeSpatial(const sp_tensor_t& t, sp_tensor_t* r) {
  *r = t;
  if (t.rank == 4) return true;
  if (t.rank < 3) return false;
  int32_t count = 1;
  for (int i = 2; i < t.rank; ++i) count *= t.dims[i];
  for (int i = 2; i + 1 < t.rank; ++i)
    if (t.dims[i] > 1 && t.strides[i] != t.dims[i + 1] * t.strides[i + 1]) return false;
  r->rank = 4;
  r->dims[2] = count;
  r->strides[2] = t.strides[t.rank - 1];
  r->dims[3] = 1;
  r->strides[3] = 0;
  for (int i = 4; i < SP_MAX_DIMS; ++i) r->dims[i] = r->strides[i] = 0;
  return true;
}

// Mean over a (N, C, S, 1) view, TFLite Mean semantics (shared or requantised parameters).
KernelCall MeanS8(const sp_tensor_t& x, const QP& qi, const sp_tensor_t& y, const QP& qo) {
  if (qi == qo) return Call(KernelFn::kGlobalAvgPoolS8, {x, In(0), Int(-128), Int(127), y, Out(0)});
  const double count = static_cast<double>(x.dims[2]) * x.dims[3];
  sp_requant_t rq = sp_host_quantize_multiplier(qi.scale / (qo.scale * std::max(count, 1.0)));
  return Call(KernelFn::kGlobalAvgPoolRequantS8,
              {x, In(0), Int(qi.zp), rq, Int(qo.zp), Int(-128), Int(127), y, Out(0)});
}

// 3-D max / average pooling in plain loops, same arithmetic as the 2-D kernels.
void Pool3DLoops(bool max, const sp_tensor_t& x, const int8_t* xp, const int32_t* k,
                 const int32_t* s, const int32_t* pad, bool count_include_pad, const sp_tensor_t& y,
                 int8_t* yp) {
  for (int32_t n = 0; n < y.dims[0]; ++n)
    for (int32_t c = 0; c < y.dims[1]; ++c)
      for (int32_t od = 0; od < y.dims[2]; ++od)
        for (int32_t oh = 0; oh < y.dims[3]; ++oh)
          for (int32_t ow = 0; ow < y.dims[4]; ++ow) {
            const int32_t o[3] = {od, oh, ow};
            int32_t lo[3], hi[3], padded = 1;
            for (int i = 0; i < 3; ++i) {
              const int32_t start = o[i] * s[i] - pad[i];
              lo[i] = std::max(start, 0);
              hi[i] = std::min(start + k[i], x.dims[2 + i]);
              padded *= std::min(start + k[i], x.dims[2 + i] + pad[3 + i]) - start;
            }
            int32_t acc = max ? -128 : 0, count = 0;
            const int8_t* base = xp + n * x.strides[0] + c * x.strides[1];
            for (int32_t d = lo[0]; d < hi[0]; ++d)
              for (int32_t h = lo[1]; h < hi[1]; ++h)
                for (int32_t w = lo[2]; w < hi[2]; ++w) {
                  const int32_t v = base[d * x.strides[2] + h * x.strides[3] + w * x.strides[4]];
                  if (max) {
                    acc = std::max(acc, v);
                  } else {
                    acc += v;
                  }
                  ++count;
                }
            if (!max) {
              const int32_t cnt = count_include_pad ? padded : count;
              acc = cnt <= 0 ? 0 : acc > 0 ? (acc + cnt / 2) / cnt : (acc - cnt / 2) / cnt;
            }
            yp[n * y.strides[0] + c * y.strides[1] + od * y.strides[2] + oh * y.strides[3] +
               ow * y.strides[4]] = static_cast<int8_t>(std::clamp(acc, -128, 127));
          }
}

StatusOr<OpCalls> BuildPool(const ir::Graph& g, const ir::Op& op) {
  const auto& xs = g.tensor(op.inputs[0]).shape;
  const int nsp = static_cast<int>(xs.size()) - 2;
  if (nsp < 1 || nsp > 3)
    return Unsupported("op '" + op.name + "': int8 pooling supports 1-D, 2-D and 3-D windows");
  sp_tensor_t x = Describe(g, xs, true), y = Describe(g, g.tensor(op.outputs[0]).shape, true);
  std::vector<int32_t> k = I32(op.attrs.GetInts("kernel_shape")),
                       st = I32(op.attrs.GetInts("strides")), pd = I32(op.attrs.GetInts("pads"));
  for (int64_t d : op.attrs.GetInts("dilations"))
    if (d != 1)
      return Unsupported("op '" + op.name + "': int8 pooling with dilations is not implemented");
  if (static_cast<int>(k.size()) != nsp)
    return InvalidArgument("op '" + op.name + "': kernel_shape does not match the input rank");
  st.resize(nsp, 1);
  if (pd.empty()) pd.assign(2 * nsp, 0);
  const bool max = op.type == "MaxPool";
  const int32_t cip = static_cast<int32_t>(op.attrs.GetInt("count_include_pad", 0));
  if (nsp == 3) {
    OpCalls c;
    c.host_loop_what = std::string("3-D ") + (max ? "max" : "average") + " pooling";
    c.host_loop = [max, x, y, k, st, pd, cip](const std::vector<const uint8_t*>& in,
                                              const std::vector<uint8_t*>& out) {
      Pool3DLoops(max, x, reinterpret_cast<const int8_t*>(in[0]), k.data(), st.data(), pd.data(),
                  cip != 0, y, reinterpret_cast<int8_t*>(out[0]));
      return Status::Ok();
    };
    return c;
  }
  int32_t kk[2] = {1, 1}, ss[2] = {1, 1}, pp[4] = {0, 0, 0, 0};
  if (nsp == 1) {
    x = InsertUnitDim(x, 2);
    y = InsertUnitDim(y, 2);
    kk[1] = k[0], ss[1] = st[0], pp[1] = pd[0], pp[3] = pd[1];
  } else {
    kk[0] = k[0], kk[1] = k[1], ss[0] = st[0], ss[1] = st[1];
    pp[0] = pd[0], pp[1] = pd[1], pp[2] = pd[2], pp[3] = pd[3];
  }
  if (max)
    return Single(Call(KernelFn::kMaxPoolS8, {x, In(0), Ints(kk, 2), Ints(ss, 2), Ints(pp, 4),
                                              Int(-128), Int(127), y, Out(0)}));
  return Single(Call(KernelFn::kAvgPoolS8, {x, In(0), Ints(kk, 2), Ints(ss, 2), Ints(pp, 4),
                                            Int(cip), Int(-128), Int(127), y, Out(0)}));
}

// Source coordinate of output index `o` along an axis (in -> out), as num / den, clamped to [0,
// in-1].
void LinearSource(int64_t o, int64_t in, int64_t out, sp_coord_mode_t mode, int64_t* num,
                  int64_t* den) {
  switch (mode) {
    case SP_COORD_ASYMMETRIC:
      *num = o * in, *den = out;
      break;
    case SP_COORD_ALIGN_CORNERS:
      if (out > 1) {
        *num = o * (in - 1), *den = out - 1;
      } else {
        *num = 0, *den = 1;
      }
      break;
    case SP_COORD_PYTORCH_HALF_PIXEL:
      if (out > 1) {
        *num = (2 * o + 1) * in - out, *den = 2 * out;
      } else {
        *num = 0, *den = 1;
      }
      break;
    default:  // half_pixel
      *num = (2 * o + 1) * in - out, *den = 2 * out;
      break;
  }
  if (*num < 0) *num = 0;
  if (*num > (in - 1) * *den) *num = (in - 1) * *den;
}

// Bilinear resize of the last two axes, input and output sharing parameters: exact rational
// weights, the weighted sum of the int8 values rounded half away from zero.
Status ResizeLinearS8(const std::string& op_name, const std::vector<int64_t>& xs, const int8_t* xp,
                      const std::vector<int64_t>& ys, int8_t* yp, sp_coord_mode_t mode) {
  const size_t r = xs.size();
  if (r < 2 || ys.size() != r) return InvalidArgument("op '" + op_name + "': Resize ranks differ");
  int64_t outer = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (xs[i] != ys[i])
      return Unsupported("op '" + op_name +
                         "': int8 linear Resize of leading axes is not implemented");
    outer *= xs[i];
  }
  const int64_t H = xs[r - 2], W = xs[r - 1], OH = ys[r - 2], OW = ys[r - 1];
  struct Tap {
    int64_t i0, i1, w0, w1, den;
  };
  auto taps = [&](int64_t in, int64_t outn) {
    std::vector<Tap> t(static_cast<size_t>(outn));
    for (int64_t o = 0; o < outn; ++o) {
      int64_t num, den;
      LinearSource(o, in, outn, mode, &num, &den);
      const int64_t i0 = num / den, f = num - i0 * den;
      t[o] = {i0, std::min(i0 + 1, in - 1), den - f, f, den};
    }
    return t;
  };
  const std::vector<Tap> ty = taps(H, OH), tx = taps(W, OW);
  for (int64_t b = 0; b < outer; ++b) {
    const int8_t* ib = xp + b * H * W;
    int8_t* ob = yp + b * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const Tap& a = ty[oh];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Tap& c = tx[ow];
        const int64_t sum = a.w0 * (c.w0 * ib[a.i0 * W + c.i0] + c.w1 * ib[a.i0 * W + c.i1]) +
                            a.w1 * (c.w0 * ib[a.i1 * W + c.i0] + c.w1 * ib[a.i1 * W + c.i1]);
        const int64_t d = a.den * c.den;
        const int64_t v = sum >= 0 ? (2 * sum + d) / (2 * d) : -((-2 * sum + d) / (2 * d));
        ob[oh * OW + ow] = static_cast<int8_t>(std::clamp<int64_t>(v, -128, 127));
      }
    }
  }
  return Status::Ok();
}

bool IsLutOp(const std::string& t) {
  static const char* kLut[] = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu",
                               "Gelu",    "Erf",  "Exp",         "Neg",       "Abs",       "Sqrt"};
  for (const char* k : kLut)
    if (t == k) return true;
  return false;
}

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

StatusOr<OpCalls> BuildCallsS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q) {
  const std::string& t = op.type;
  if (ir::IsViewOp(t)) return OpCalls{};
  SP_RETURN_IF_ERROR(Matches(g, q));
  auto shape = [&](size_t i) -> const std::vector<int64_t>& {
    return g.tensor(op.inputs[i]).shape;
  };
  auto oshape = [&](size_t i) -> const std::vector<int64_t>& {
    return g.tensor(op.outputs[i]).shape;
  };
  auto elem = [&](ir::TensorId id) { return Int(ir::DataTypeSize(g.tensor(id).dtype)); };
  const std::vector<int8_t>& table = q.tables.at(op.id.value());
  if (op.outputs.empty() || op.inputs.empty())
    return InvalidArgument("op '" + op.name + "' has no inputs or outputs");
  const sp_tensor_t o0 = Contig(oshape(0));
  auto params = [&](ir::TensorId id, QP* p) { return ActParams(g, q, id, op, p); };

  if (t == "Conv") return BuildConv(g, op, q);
  if (t == "Gemm" || t == "MatMul") return BuildFullyConnected(g, op, q);

  if (t == "Relu" || t == "Clip" || IsLutOp(t)) {
    if (!IsInt8(g, op.inputs[0]))
      return Unsupported("op '" + op.name + "': int8 " + t + " needs an int8 input");
    sp_tensor_t x = Contig(shape(0));
    if (table.size() == 256) {
      OpCalls c;
      const int lut = AddConst(&c, "int8_t", "lut", table.data(), 256);
      c.blocks.push_back({1, {Call(KernelFn::kLutS8, {x, In(0), ConstRef(lut), o0, Out(0)})}});
      return c;
    }
    if (t != "Relu" && t != "Clip")
      return InternalError("op '" + op.name + "': no lookup table was built");
    QP qi;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    int32_t lo = -128, hi = 127;
    auto q8 = [&](double v) {
      double r = std::round(v / qi.scale) + qi.zp;
      return std::isnan(r) ? qi.zp : static_cast<int32_t>(std::clamp(r, -128.0, 127.0));  // NaN (no usable scale): the zero point
    };
    if (t == "Relu") {
      lo = std::max(-128, qi.zp);
    } else {
      const double mn = op.attrs.GetFloat("min", -3.4e38), mx = op.attrs.GetFloat("max", 3.4e38);
      lo = q8(mn);
      hi = q8(mx);
    }
    return Single(Call(KernelFn::kClampS8, {x, In(0), Int(lo), Int(hi), o0, Out(0)}));
  }
  if (t == "BatchNormalization") {
    sp_tensor_t x = Describe(g, shape(0), true), y = Describe(g, oshape(0), true);
    const int32_t C = x.rank >= 2 ? x.dims[1] : 1;
    if (x.rank < 2 || table.size() != static_cast<size_t>(C) * 256)
      return InternalError("op '" + op.name + "': no per-channel tables were built");
    sp_tensor_t xc = x, yc = y;
    xc.dims[1] = yc.dims[1] = 1;
    OpCalls c;
    const int luts = AddConst(&c, "int8_t", "lut", table.data(), table.size());
    c.blocks.push_back({C,
                        {Call(KernelFn::kLutS8, {xc, In(0, 0, x.strides[1]), ConstRef(luts, 0, 256),
                                                 yc, Out(0, 0, y.strides[1])})}});
    return c;
  }
  if (t == "Add" || t == "Sub" || t == "Mul") {
    QP qa, qb, qo;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qa));
    SP_RETURN_IF_ERROR(params(op.inputs[1], &qb));
    SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    sp_tensor_t a = Contig(shape(0)), b = Contig(shape(1));
    if (t == "Mul") {
      sp_mul_s8_params_t p =
          sp_host_mul_s8_params(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp, -128, 127);
      return Single(Call(KernelFn::kMulS8, {a, In(0), b, In(1), p, o0, Out(0)}));
    }
    sp_add_s8_params_t p =
        sp_host_add_s8_params(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp, -128, 127);
    return Single(Call(t == "Add" ? KernelFn::kAddS8 : KernelFn::kSubS8,
                       {a, In(0), b, In(1), p, o0, Out(0)}));
  }
  if (t == "Softmax") {
    QP qi;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    sp_tensor_t x = Contig(shape(0));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", -1), shape(0).size()));
    int32_t exp_table[256];
    sp_host_build_softmax_exp_table(qi.scale, 1.0, exp_table);
    OpCalls c;
    const int et = AddConst(&c, "int32_t", "exp_table", exp_table, sizeof exp_table);
    c.blocks.push_back(
        {1, {Call(KernelFn::kSoftmaxS8, {x, In(0), Int(axis), ConstRef(et), o0, Out(0)})}});
    return c;
  }
  if (t == "MaxPool" || t == "AveragePool") {
    QP qi, qo;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    if (!(qi == qo))
      return InternalError("op '" + op.name +
                           "': int8 pooling needs equal input and output parameters");
    return BuildPool(g, op);
  }
  if (t == "GlobalAveragePool") {
    QP qi, qo;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    sp_tensor_t x, y;
    if (!MergeSpatial(Describe(g, shape(0), true), &x) ||
        !MergeSpatial(Describe(g, oshape(0), true), &y))
      return Unsupported("op '" + op.name +
                         "': int8 GlobalAveragePool needs mergeable spatial dims");
    y.dims[2] = 1;
    return Single(MeanS8(x, qi, y, qo));
  }
  if (t == "ReduceMean") {
    QP qi, qo;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    const auto& xs = shape(0);
    const int64_t rank = static_cast<int64_t>(xs.size());
    std::vector<int64_t> axes;
    for (int64_t a : op.attrs.GetInts("axes")) axes.push_back(NormAxis(a, rank));
    if (axes.empty())
      for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1)
        return Unsupported("op '" + op.name + "': int8 ReduceMean needs consecutive axes");
    int64_t A = 1, R = 1, B = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axes.front() ? A : i <= axes.back() ? R : B) *= xs[i];
    sp_tensor_t x, y;
    int32_t xd[4] = {static_cast<int32_t>(A), static_cast<int32_t>(B), static_cast<int32_t>(R), 1};
    sp_tensor_init_contiguous(&x, 4, xd);
    x.strides[0] = static_cast<int32_t>(R * B), x.strides[1] = 1,
    x.strides[2] = static_cast<int32_t>(B), x.strides[3] = 0;
    int32_t yd[4] = {static_cast<int32_t>(A), static_cast<int32_t>(B), 1, 1};
    sp_tensor_init_contiguous(&y, 4, yd);
    return Single(MeanS8(x, qi, y, qo));
  }
  if (t == "Concat") {
    const int32_t axis =
        static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 1), oshape(0).size()));
    const bool int8 = IsInt8(g, op.outputs[0]);
    QP qo;
    if (int8) SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    OpCalls c;
    CallBlock b;
    int64_t offset = 0;
    const int64_t out_elem = ir::DataTypeSize(g.tensor(op.outputs[0]).dtype);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      sp_tensor_t x = Contig(shape(i));
      sp_tensor_t slice = o0;
      slice.dims[axis] = x.dims[axis];
      const CallRef dst = Out(0, offset * o0.strides[axis] * out_elem);
      offset += x.dims[axis];
      QP qi;
      if (int8) SP_RETURN_IF_ERROR(params(op.inputs[i], &qi));
      const int idx = static_cast<int>(i);
      if (!int8 || qi == qo) {
        b.calls.push_back(Call(KernelFn::kCopy, {x, In(idx), elem(op.inputs[i]), slice, dst}));
      } else {
        sp_requant_t rq = sp_host_quantize_multiplier(qi.scale / qo.scale);
        b.calls.push_back(
            Call(KernelFn::kRequantizeS8, {x, In(idx), Int(qi.zp), rq, Int(qo.zp), slice, dst}));
      }
    }
    c.blocks.push_back(std::move(b));
    return c;
  }
  // Data movement: the output shares the input's parameters (quantize.h), so bytes move unchanged.
  if (t == "Resize" || t == "Upsample" || t == "Pad" || t == "Transpose" || t == "Slice" ||
      t == "Split" || t == "Gather" || t == "Expand") {
    if (IsInt8(g, op.inputs[0])) {
      QP qi, qo;
      SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
      for (ir::TensorId o : op.outputs) {
        SP_RETURN_IF_ERROR(params(o, &qo));
        if (!(qi == qo))
          return InternalError("op '" + op.name + "': input and output parameters differ");
      }
    }
  }
  if (t == "Resize" || t == "Upsample") {
    sp_tensor_t x = Contig(shape(0));
    std::string mode = op.attrs.GetString("mode", "nearest");
    std::string ct = op.attrs.GetString("coordinate_transformation_mode",
                                        t == "Upsample" ? "asymmetric" : "half_pixel");
    sp_coord_mode_t coord = ct == "asymmetric"           ? SP_COORD_ASYMMETRIC
                            : ct == "align_corners"      ? SP_COORD_ALIGN_CORNERS
                            : ct == "pytorch_half_pixel" ? SP_COORD_PYTORCH_HALF_PIXEL
                                                         : SP_COORD_HALF_PIXEL;
    if (mode == "linear" || mode == "bilinear") {
      if (!IsInt8(g, op.inputs[0]))
        return Unsupported("op '" + op.name + "': linear Resize of a non-int8 tensor");
      OpCalls c;
      c.host_loop_what = "linear Resize";
      c.host_loop = [name = op.name, xs = shape(0), ys = oshape(0), coord](
                        const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out) {
        return ResizeLinearS8(name, xs, reinterpret_cast<const int8_t*>(in[0]), ys,
                              reinterpret_cast<int8_t*>(out[0]), coord);
      };
      return c;
    }
    if (mode != "nearest")
      return Unsupported("op '" + op.name + "': int8 Resize supports nearest and linear modes");
    std::string nm =
        op.attrs.GetString("nearest_mode", t == "Upsample" ? "floor" : "round_prefer_floor");
    sp_nearest_mode_t n = nm == "floor"               ? SP_NEAREST_FLOOR
                          : nm == "ceil"              ? SP_NEAREST_CEIL
                          : nm == "round_prefer_ceil" ? SP_NEAREST_ROUND_PREFER_CEIL
                                                      : SP_NEAREST_ROUND_PREFER_FLOOR;
    return Single(Call(KernelFn::kResizeNearest,
                       {x, In(0), Int(coord), Int(n), elem(op.inputs[0]), o0, Out(0)}));
  }
  if (t == "Pad") {
    sp_tensor_t x = Contig(shape(0));
    auto pads = I32(op.attrs.GetInts("pads"));
    std::string mode = op.attrs.GetString("mode", "constant");
    sp_pad_mode_t m = mode == "reflect" ? SP_PAD_REFLECT
                      : mode == "edge"  ? SP_PAD_EDGE
                                        : SP_PAD_CONSTANT;
    const double v = op.attrs.GetFloat("value", 0.0);
    uint8_t value[8] = {0};
    switch (g.tensor(op.inputs[0]).dtype) {
      case ir::DataType::kInt8: {
        QP qi;
        SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
        value[0] =
            static_cast<uint8_t>(sp_host_quantize_s8(static_cast<float>(v), qi.scale, qi.zp));
        break;
      }
      case ir::DataType::kInt64: {
        int64_t i = static_cast<int64_t>(v);
        std::memcpy(value, &i, 8);
        break;
      }
      case ir::DataType::kInt32: {
        int32_t i = static_cast<int32_t>(v);
        std::memcpy(value, &i, 4);
        break;
      }
      default:
        value[0] = static_cast<uint8_t>(v);
        break;
    }
    OpCalls c;
    const int val = AddConst(&c, "uint8_t", "pad_value", value, sizeof value);
    c.blocks.push_back({1,
                        {Call(KernelFn::kPad, {x, In(0), CallArg(pads), Int(m), ConstRef(val),
                                               elem(op.inputs[0]), o0, Out(0)})}});
    return c;
  }
  if (t == "Transpose") {
    sp_tensor_t x = Contig(shape(0));
    std::vector<int64_t> perm = op.attrs.GetInts("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(shape(0).size()) - 1; i >= 0; --i) perm.push_back(i);
    return Single(
        Call(KernelFn::kTranspose, {x, In(0), CallArg(I32(perm)), elem(op.inputs[0]), o0, Out(0)}));
  }
  if (t == "Split") {
    int64_t rank = static_cast<int64_t>(shape(0).size());
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), rank));
    sp_tensor_t x = Contig(shape(0));
    int64_t start = 0;
    CallBlock b;
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      std::vector<int32_t> starts(rank, 0);
      starts[axis] = static_cast<int32_t>(start);
      sp_tensor_t y = Contig(oshape(k));
      b.calls.push_back(Call(KernelFn::kSlice, {x, In(0), CallArg(std::move(starts)), Null(),
                                                elem(op.inputs[0]), y, Out(static_cast<int>(k))}));
      start += oshape(k)[axis];
    }
    OpCalls c;
    c.blocks.push_back(std::move(b));
    return c;
  }
  if (t == "Slice") {
    const auto& xs = shape(0);
    int64_t rank = static_cast<int64_t>(xs.size());
    std::vector<int32_t> starts(rank, 0), steps(rank, 1);
    auto st = op.attrs.GetInts("starts"), axes = op.attrs.GetInts("axes"),
         sp = op.attrs.GetInts("steps");
    for (size_t k = 0; k < st.size(); ++k) {
      int64_t a = k < axes.size() ? NormAxis(axes[k], rank) : static_cast<int64_t>(k);
      int64_t step = k < sp.size() ? sp[k] : 1;
      int64_t s = st[k];
      if (s < 0) s += xs[a];
      s = step > 0 ? std::clamp<int64_t>(s, 0, xs[a]) : std::clamp<int64_t>(s, 0, xs[a] - 1);
      starts[a] = static_cast<int32_t>(s);
      steps[a] = static_cast<int32_t>(step);
    }
    sp_tensor_t x = Contig(xs);
    return Single(
        Call(KernelFn::kSlice, {x, In(0), CallArg(std::move(starts)), CallArg(std::move(steps)),
                                elem(op.inputs[0]), o0, Out(0)}));
  }
  if (t == "Gather") {
    sp_tensor_t x = Contig(shape(0)), idx = Contig(shape(1));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), shape(0).size()));
    if (g.tensor(op.inputs[1]).dtype != ir::DataType::kInt64)
      return Unsupported("op '" + op.name + "': Gather indices must be int64");
    return Single(
        Call(KernelFn::kGather, {x, In(0), Int(axis), idx, In(1), elem(op.inputs[0]), o0, Out(0)}));
  }
  if (t == "Expand") {
    sp_tensor_t x = Contig(shape(0));
    return Single(Call(KernelFn::kExpand, {x, In(0), elem(op.inputs[0]), o0, Out(0)}));
  }
  return Unsupported("int8 execution has no kernel for op '" + op.name + "' of type " +
                     (t == "Opaque" ? "Opaque:" + op.original_type : t) +
                     " (verify this model with --dtype float32)");
}

Status RunKernelS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                   const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out,
                   const OperandBytes& bytes) {
  if (ir::IsViewOp(op.type)) return Status::Ok();
  if (in.size() != op.inputs.size() || out.size() != op.outputs.size())
    return InvalidArgument("op '" + op.name + "' (" + op.type + "): the executor needs one pointer per operand");
  SP_ASSIGN_OR_RETURN(OpCalls calls, BuildCallsS8(g, op, q));
  SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, true, bytes));
  return ExecuteCalls(op, calls, in, out, nullptr);
}

Status CheckInt8Support(const ir::Graph& g) {
  static const std::set<std::string> kOps = {"Conv",
                                             "Relu",
                                             "Clip",
                                             "BatchNormalization",
                                             "Add",
                                             "Sub",
                                             "Mul",
                                             "Softmax",
                                             "MaxPool",
                                             "AveragePool",
                                             "GlobalAveragePool",
                                             "ReduceMean",
                                             "Concat",
                                             "Resize",
                                             "Upsample",
                                             "Pad",
                                             "Transpose",
                                             "Split",
                                             "Slice",
                                             "Gather",
                                             "Expand"};
  std::map<std::string, std::pair<int, std::string>> missing;  // what -> (count, first op)
  for (const ir::Op& op : g.ops()) {
    std::string what;
    if (ir::IsViewOp(op.type) || IsLutOp(op.type)) continue;
    if (op.type == "Gemm" || op.type == "MatMul") {
      if (op.inputs.size() < 2 || g.tensor(op.inputs[1]).kind != ir::TensorKind::kConstant ||
          g.tensor(op.inputs[0]).kind == ir::TensorKind::kConstant)
        what = op.type + " of two activations";
      else if (g.tensor(op.inputs[1]).shape.size() != 2)
        what = op.type + " with a constant B of rank " +
               std::to_string(g.tensor(op.inputs[1]).shape.size());
    } else if (op.type == "Conv") {
      if (op.inputs.size() < 2 || g.tensor(op.inputs[1]).kind != ir::TensorKind::kConstant)
        what = "Conv with non-constant weights";
    } else if (!kOps.count(op.type)) {
      what = op.type == "Opaque" ? "Opaque:" + op.original_type : op.type;
    }
    if (what.empty()) continue;
    auto& m = missing[what];
    if (m.first++ == 0) m.second = op.name;
  }
  if (missing.empty()) return Status::Ok();
  std::string msg;
  for (const auto& [what, m] : missing)
    msg += (msg.empty() ? "" : ", ") + what + " (" + std::to_string(m.first) +
           (m.first == 1 ? " op" : " ops") + ", first '" + m.second + "')";
  return Unsupported("int8 execution of '" + g.name + "' is not implemented for " + msg +
                     "; verify this model with --dtype float32");
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
  std::vector<int32_t> st = I32(op.attrs.GetInts("strides")), pd = I32(op.attrs.GetInts("pads")),
                       dl = I32(op.attrs.GetInts("dilations"));
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

// ---- Segment-kernel parameters from the plain call records -----------------------------------

int64_t SegLayerWorkspaceBytes(const SegLayerS8& l, int64_t segment_bytes) {
  if (l.fc) {
    const sp_seg_fc_shape_t fs{l.m, l.k, l.n, static_cast<int32_t>(std::clamp<int64_t>(segment_bytes, 0, INT32_MAX))};
    return sp_seg_fc_workspace_bytes(&fs);
  }
  const sp_seg_conv_shape_t cs{l.h, l.w, l.c_in, l.c_out, l.r, l.s, l.stride_h, l.stride_w,
                               l.pad[0], l.pad[1], l.pad[2], l.pad[3], l.dilation_h, l.dilation_w};
  return l.depthwise ? sp_seg_depthwise_workspace_bytes(&cs) : sp_seg_conv_workspace_bytes(&cs);
}

StatusOr<const plan::Buffer*> SegmentStepWorkspace(const plan::Plan& p, int s, int64_t need) {
  const std::string where = "step " + std::to_string(s);
  if (s < 0 || s >= static_cast<int>(p.steps.size()) || p.steps[s].ops.empty())
    return Status(StatusCode::kMismatch, where + " does not exist");
  const std::string& name = p.steps[s].workspace;
  const plan::Buffer* ws = nullptr;
  for (const plan::Buffer& b : p.buffers)
    if (b.tensor == name && b.first_step <= s && s <= b.last_step) ws = &b;
  if (!ws)
    return Status(StatusCode::kMismatch, where + " op '" + p.steps[s].ops[0].name +
                                             "' runs the segment-aware kernels but the plan gives the step no " +
                                             (name.empty() ? std::string("workspace (params.workspace)")
                                                           : "'" + name + "' buffer"));
  if (need < 1 || ws->bytes < need)
    return Status(StatusCode::kMismatch, where + " op '" + p.steps[s].ops[0].name + "': the kernel needs " +
                                             std::to_string(need) + " bytes of workspace but '" + name + "' has " +
                                             std::to_string(ws->bytes));
  return ws;
}

namespace {

bool DenseNhwc(const sp_tensor_t& t) {
  return t.rank == 4 && t.dims[0] == 1 && t.strides[1] == 1 && t.strides[3] == t.dims[1] &&
         t.strides[2] == t.dims[3] * t.dims[1];
}

bool DenseRows(const sp_tensor_t& t) {
  return t.rank == 2 && t.strides[1] == 1 && t.strides[0] == t.dims[1];
}

}  // namespace

StatusOr<SegLayerS8> SegLayerParamsS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                                      const std::vector<const uint8_t*>& in) {
  auto unsupported = [&](const std::string& why) {
    return Unsupported("op '" + op.name + "' (" + op.type + "): no segment-aware kernel: " + why);
  };
  SP_ASSIGN_OR_RETURN(OpCalls c, BuildCallsS8(g, op, q));
  // The weights and bias are read below (their buffers hold the tensors' bytes).
  SP_RETURN_IF_ERROR(CheckKernelOperandTypes(g, op, true));
  if (in.size() != op.inputs.size()) return unsupported("one operand pointer per input is needed");
  if (c.host_loop || c.blocks.size() != 1 || c.blocks[0].count != 1 ||
      c.blocks[0].calls.size() != 1)
    return unsupported("its int8 record is not one kernel call");
  const KernelCall& k = c.blocks[0].calls[0];
  const bool fc = k.fn == KernelFn::kFullyConnectedS8;
  if (k.fn != KernelFn::kConvS8 && !fc) return unsupported("not a convolution or a fully connected layer");
  const auto& v = k.args;
  auto input_ptr = [&](const CallArg& a, const uint8_t** p) -> bool {
    const auto* r = std::get_if<CallRef>(&a);
    if (!r || r->base != CallRef::Base::kInput || r->index < 0 ||
        r->index >= static_cast<int>(in.size()) || r->step != 0 || !in[r->index])
      return false;
    *p = in[r->index] + r->offset;
    return true;
  };
  auto i64 = [&](size_t i) { return static_cast<int32_t>(std::get<int64_t>(v[i])); };
  SegLayerS8 l;
  l.fc = fc;
  const sp_tensor_t& x = std::get<sp_tensor_t>(v[0]);
  const sp_tensor_t& w = std::get<sp_tensor_t>(v[3]);
  const sp_tensor_t& y = std::get<sp_tensor_t>(fc ? v[10] : v[14]);
  const uint8_t *wp = nullptr, *bp = nullptr;
  const auto* xr = std::get_if<CallRef>(&v[1]);
  // The data input itself may be absent (a fused intermediate): only its descriptor is used.
  if (!xr || xr->base != CallRef::Base::kInput || xr->index != 0 || xr->offset != 0 ||
      xr->step != 0 || !input_ptr(v[4], &wp))
    return unsupported("its operands are not the op's input and weights");
  if (!std::holds_alternative<std::nullptr_t>(v[5]) && !input_ptr(v[5], &bp))
    return unsupported("its bias is not an operand");
  const auto* rqr = std::get_if<CallRef>(&v[6]);
  if (!rqr || rqr->base != CallRef::Base::kConst || rqr->index < 0 ||
      rqr->index >= static_cast<int>(c.consts.size()))
    return unsupported("no requantisation array");
  l.in_zp = i64(2);
  l.out_zp = i64(7);
  l.act_min = i64(8);
  l.act_max = i64(9);
  const int8_t* wv = reinterpret_cast<const int8_t*>(wp);
  int32_t nch = 0;
  if (fc) {
    if (!DenseRows(x) || !DenseRows(y) || w.rank != 2 || w.dims[0] != y.dims[1] ||
        w.dims[1] != x.dims[1])
      return unsupported("the operands are not dense [M, K] / [M, N] rows");
    l.m = x.dims[0];
    l.k = x.dims[1];
    l.n = y.dims[1];
    nch = l.n;
    l.weights.resize(static_cast<size_t>(l.n) * l.k);
    for (int32_t n = 0; n < l.n; ++n)
      for (int32_t kk = 0; kk < l.k; ++kk)
        l.weights[static_cast<size_t>(n) * l.k + kk] =
            wv[static_cast<int64_t>(n) * w.strides[0] + static_cast<int64_t>(kk) * w.strides[1]];
  } else {
    if (!DenseNhwc(x) || !DenseNhwc(y) || w.rank != 4)
      return unsupported("the feature maps are not dense NHWC with batch 1");
    const auto& st = std::get<std::vector<int32_t>>(v[10]);
    const auto& pd = std::get<std::vector<int32_t>>(v[11]);
    const auto& dl = std::get<std::vector<int32_t>>(v[12]);
    const int32_t groups = i64(13);
    l.h = x.dims[2];
    l.w = x.dims[3];
    l.c_in = x.dims[1];
    l.oh = y.dims[2];
    l.ow = y.dims[3];
    l.c_out = y.dims[1];
    l.r = w.dims[2];
    l.s = w.dims[3];
    l.stride_h = st[0];
    l.stride_w = st[1];
    for (int i = 0; i < 4; ++i) l.pad[i] = pd[i];
    l.dilation_h = dl[0];
    l.dilation_w = dl[1];
    l.depthwise = groups > 1;
    if (l.depthwise && (groups != l.c_in || l.c_out != l.c_in || w.dims[1] != 1))
      return unsupported("grouped convolutions other than depthwise (multiplier 1)");
    if (!l.depthwise && (groups != 1 || w.dims[1] != l.c_in || w.dims[0] != l.c_out))
      return unsupported("weights do not match the channels");
    nch = l.c_out;
    l.weights.resize(static_cast<size_t>(l.c_out) * l.r * l.s * (l.depthwise ? 1 : l.c_in));
    for (int32_t kk = 0; kk < l.c_out; ++kk)
      for (int32_t ci = 0; ci < w.dims[1]; ++ci)
        for (int32_t r = 0; r < l.r; ++r)
          for (int32_t s = 0; s < l.s; ++s) {
            const int8_t val = wv[static_cast<int64_t>(kk) * w.strides[0] +
                                  static_cast<int64_t>(ci) * w.strides[1] +
                                  static_cast<int64_t>(r) * w.strides[2] +
                                  static_cast<int64_t>(s) * w.strides[3]];
            const size_t dst = l.depthwise
                                   ? (static_cast<size_t>(r) * l.s + s) * l.c_in + kk
                                   : ((static_cast<size_t>(kk) * l.r + r) * l.s + s) * l.c_in + ci;
            l.weights[dst] = val;
          }
  }
  const ConstArray& rqa = c.consts[rqr->index];
  if (rqa.bytes.size() < static_cast<size_t>(nch) * sizeof(sp_requant_t))
    return unsupported("short requantisation array");
  l.rq.resize(nch);
  std::memcpy(l.rq.data(), rqa.bytes.data() + rqr->offset, static_cast<size_t>(nch) * sizeof(sp_requant_t));
  if (bp) {
    l.bias.resize(nch);
    std::memcpy(l.bias.data(), bp, static_cast<size_t>(nch) * sizeof(int32_t));
  }
  return l;
}

StatusOr<sp_add_s8_params_t> AddParamsS8(const ir::Graph& g, const ir::Op& op,
                                         const QuantizedModel& q) {
  SP_ASSIGN_OR_RETURN(OpCalls c, BuildCallsS8(g, op, q));
  if (c.host_loop || c.blocks.size() != 1 || c.blocks[0].count != 1 ||
      c.blocks[0].calls.size() != 1 || c.blocks[0].calls[0].fn != KernelFn::kAddS8)
    return Unsupported("op '" + op.name + "': its int8 record is not one sp_add_s8 call");
  const auto& v = c.blocks[0].calls[0].args;
  const auto* a = std::get_if<CallRef>(&v[1]);
  const auto* b = std::get_if<CallRef>(&v[3]);
  if (!a || !b || a->base != CallRef::Base::kInput || b->base != CallRef::Base::kInput ||
      a->index != 0 || b->index != 1 || a->offset != 0 || b->offset != 0)
    return Unsupported("op '" + op.name + "': its int8 Add does not read inputs 0 and 1 directly");
  return std::get<sp_add_s8_params_t>(v[4]);
}

StatusOr<SegBottleneckS8> SegBottleneckParamsS8(const ir::Graph& g, const std::vector<const ir::Op*>& sops,
                                                const QuantizedModel& q,
                                                const std::vector<std::vector<const uint8_t*>>& ins,
                                                const std::string& where) {
  const bool residual = sops.size() == 4;
  if (sops.size() < 3 || sops.size() > 4 || ins.size() != sops.size() || sops[0]->inputs.empty() ||
      sops[0]->outputs.empty() || sops[1]->inputs.empty() || sops[2]->inputs.empty() ||
      sops[1]->inputs[0] != sops[0]->outputs[0] || sops[2]->inputs[0] != sops[1]->outputs[0] ||
      sops[2]->outputs.empty() || (residual && (sops[3]->type != "Add" || sops[3]->inputs.size() != 2)))
    return InvalidArgument(where + ": a fused step must be Conv, DepthwiseConv, Conv 1x1 and an optional Add");
  SegBottleneckS8 b;
  SP_ASSIGN_OR_RETURN(b.expand, SegLayerParamsS8(g, *sops[0], q, ins[0]));
  SP_ASSIGN_OR_RETURN(b.depthwise, SegLayerParamsS8(g, *sops[1], q, ins[1]));
  SP_ASSIGN_OR_RETURN(b.project, SegLayerParamsS8(g, *sops[2], q, ins[2]));
  const SegLayerS8 &e = b.expand, &d = b.depthwise, &j = b.project;
  auto pointwise = [](const SegLayerS8& l) {
    return !l.fc && !l.depthwise && l.r == 1 && l.s == 1 && l.stride_h == 1 && l.stride_w == 1 && l.pad[0] == 0 &&
           l.pad[1] == 0 && l.pad[2] == 0 && l.pad[3] == 0;
  };
  if (e.fc || e.depthwise || e.dilation_h != 1 || e.dilation_w != 1 || !pointwise(j) || !d.depthwise ||
      d.dilation_h != 1 || d.dilation_w != 1 || (residual && !pointwise(e)))
    return InvalidArgument(where + ": a fused step must be Conv (no dilation; 1x1 with a residual), "
                           "DepthwiseConv (no dilation), Conv 1x1");
  sp_seg_bottleneck_shape_t& bs = b.shape;
  bs.h = e.h;
  bs.w = e.w;
  bs.c_in = e.c_in;
  bs.c_mid = e.c_out;
  bs.c_out = j.c_out;
  bs.r = d.r;
  bs.s = d.s;
  bs.stride_h = d.stride_h;
  bs.stride_w = d.stride_w;
  bs.pad_top = d.pad[0];
  bs.pad_left = d.pad[1];
  bs.pad_bottom = d.pad[2];
  bs.pad_right = d.pad[3];
  bs.has_expand = 1;
  bs.has_residual = residual ? 1 : 0;
  bs.e_r = e.r;
  bs.e_s = e.s;
  bs.e_stride_h = e.stride_h;
  bs.e_stride_w = e.stride_w;
  bs.e_pad_top = e.pad[0];
  bs.e_pad_left = e.pad[1];
  bs.e_pad_bottom = e.pad[2];
  bs.e_pad_right = e.pad[3];
  if (residual) {
    const ir::Op& a = *sops[3];
    const ir::Op& first = *sops[0];
    const bool in1_is_x = a.inputs[0] == first.inputs[0] && a.inputs[1] == sops[2]->outputs[0];
    const bool in2_is_x = a.inputs[1] == first.inputs[0] && a.inputs[0] == sops[2]->outputs[0];
    if ((!in1_is_x && !in2_is_x) || a.outputs.empty())
      return InvalidArgument(where + ": the fused Add must add the group input to the projection");
    SP_ASSIGN_OR_RETURN(b.add, AddParamsS8(g, a, q));
    if (!in1_is_x) {  // the kernel's in1 is the group input (the sum is symmetric)
      std::swap(b.add.in1_zp, b.add.in2_zp);
      std::swap(b.add.in1_rq, b.add.in2_rq);
    }
    b.residual = true;
  }
  return b;
}

bool IsFusedIntermediate(const ir::Graph& g, const std::vector<const ir::Op*>& step_ops, ir::TensorId id) {
  const ir::Tensor& t = g.tensor(id);
  if (t.kind != ir::TensorKind::kActivation || !t.producer.valid()) return false;
  auto in_step = [&](ir::OpId op) {
    for (const ir::Op* o : step_ops)
      if (o->id == op) return true;
    return false;
  };
  if (!in_step(t.producer)) return false;
  for (ir::OpId c : t.consumers)
    if (!in_step(c)) return false;
  return true;
}

}  // namespace sramplan::exec
