// int8 dispatch of IR ops onto the C runtime's int8 kernels (TFLite Micro semantics), with the
// quantisation parameters and lookup tables of a QuantizedModel (exec/quantize.h).
//
// Host-side details that do not change any result:
//   - NCHW convolutions (other than depthwise) stage their input, weights and output through
//     channels-last copies so the kernel's inner loop runs over contiguous channels; the integer
//     sums are the same, so the bytes are too.
//   - 3-D convolutions with a (1, kh, kw) kernel run as one 2-D convolution per output depth slice;
//     (kd, 1, 1) kernels run as a 2-D convolution over (D, H*W). Other 3-D convolutions and 3-D
//     pools use the same integer arithmetic in plain loops here.
//   - Linear Resize (input and output share parameters) interpolates with exact rational weights
//     and rounds half away from zero.
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
namespace {

const int8_t* S8(const uint8_t* p) { return reinterpret_cast<const int8_t*>(p); }
int8_t* S8(uint8_t* p) { return reinterpret_cast<int8_t*>(p); }

Status Check(sp_status_t s, const ir::Op& op) {
  if (s == SP_OK) return Status::Ok();
  return InternalError("int8 kernel for op '" + op.name + "' (" + op.type +
                       ") rejected its arguments");
}

int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

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
  const int32_t* bias = nullptr;
  const sp_requant_t* rq = nullptr;
};

// One 2-D convolution through sp_conv_s8; channel-strided (NCHW) operands of non-depthwise
// convolutions go through channels-last copies.
Status Conv2D(const ir::Op& op, const sp_tensor_t& x, const int8_t* xp, const sp_tensor_t& w,
              const int8_t* wp, const ConvArgs& a, const sp_tensor_t& y, int8_t* yp) {
  const bool depthwise = a.groups > 1 && a.groups == x.dims[1];
  const bool stage = !depthwise && x.dims[1] > 1 && x.strides[1] != 1;
  if (!stage)
    return Check(sp_conv_s8(&x, xp, a.in_zp, &w, wp, a.bias, a.rq, a.out_zp, a.act_min, a.act_max,
                            a.stride, a.pad, a.dil, a.groups, &y, yp),
                 op);
  thread_local std::vector<int8_t> xs, ws, ys;
  const sp_tensor_t xn = ChannelsLast(x), wn = ChannelsLast(w), yn = ChannelsLast(y);
  xs.resize(static_cast<size_t>(std::max(sp_tensor_numel(&xn), 1)));
  ws.resize(static_cast<size_t>(std::max(sp_tensor_numel(&wn), 1)));
  ys.resize(static_cast<size_t>(std::max(sp_tensor_numel(&yn), 1)));
  SP_RETURN_IF_ERROR(Check(sp_copy(&x, xp, 1, &xn, xs.data()), op));
  SP_RETURN_IF_ERROR(Check(sp_copy(&w, wp, 1, &wn, ws.data()), op));
  SP_RETURN_IF_ERROR(
      Check(sp_conv_s8(&xn, xs.data(), a.in_zp, &wn, ws.data(), a.bias, a.rq, a.out_zp, a.act_min,
                       a.act_max, a.stride, a.pad, a.dil, a.groups, &yn, ys.data()),
            op));
  return Check(sp_copy(&yn, ys.data(), 1, &y, yp), op);
}

// 3-D convolution in plain loops (TFLite ConvPerChannel arithmetic extended to a depth axis).
// x (N, C, D, H, W), w (K, C/g, KD, KH, KW), y (N, K, OD, OH, OW); stride/dil 3 entries, pad 6
// (ONNX order).
void Conv3DLoops(const sp_tensor_t& x, const int8_t* xp, const sp_tensor_t& w, const int8_t* wp,
                 const int32_t* stride, const int32_t* pad, const int32_t* dil, const ConvArgs& a,
                 const sp_tensor_t& y, int8_t* yp) {
  const int32_t N = x.dims[0], C = x.dims[1], K = w.dims[0], cg = w.dims[1], kg = K / a.groups;
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
                    acc += static_cast<uint32_t>((xv - a.in_zp) * wv);
                  }
                }
              }
            if (a.bias) acc += static_cast<uint32_t>(a.bias[k]);
            int32_t v = sp_multiply_by_quantized_multiplier(static_cast<int32_t>(acc),
                                                            a.rq[k].multiplier, a.rq[k].shift) +
                        a.out_zp;
            v = std::clamp(v, a.act_min, a.act_max);
            yp[n * y.strides[0] + k * y.strides[1] + od * y.strides[2] + oh * y.strides[3] +
               ow * y.strides[4]] = static_cast<int8_t>(v);
          }
    }
  (void)C;
}

int32_t ActivationKind(const ir::Op& op) {
  std::string act = op.attrs.GetString("activation", "none");
  return act == "relu" ? 1 : act == "relu6" ? 2 : 0;
}

Status RunConv(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
               const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out) {
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
  std::vector<sp_requant_t> rq(K);
  sp_host_conv_requant(qi.scale, wq.scale.data(), K, qo.scale, rq.data());
  ConvArgs a;
  a.groups = static_cast<int32_t>(op.attrs.GetInt("group", 1));
  a.in_zp = qi.zp;
  a.out_zp = qo.zp;
  sp_host_act_range_s8(ActivationKind(op), qo.scale, qo.zp, &a.act_min, &a.act_max);
  a.bias = op.inputs.size() >= 3 ? reinterpret_cast<const int32_t*>(in[2]) : nullptr;
  a.rq = rq.data();
  std::vector<int32_t> st = I32(op.attrs.GetInts("strides")), pd = I32(op.attrs.GetInts("pads")),
                       dl = I32(op.attrs.GetInts("dilations"));
  st.resize(nsp, 1);
  dl.resize(nsp, 1);
  if (pd.empty()) pd.assign(2 * nsp, 0);
  if (static_cast<int>(pd.size()) != 2 * nsp)
    return InvalidArgument("op '" + op.name + "': pads need 2 entries per spatial dim");
  const int8_t* xp = S8(in[0]);
  const int8_t* wp = S8(in[1]);
  int8_t* yp = S8(out[0]);
  if (nsp == 2) {
    a.stride[0] = st[0], a.stride[1] = st[1];
    a.dil[0] = dl[0], a.dil[1] = dl[1];
    a.pad[0] = pd[0], a.pad[1] = pd[1], a.pad[2] = pd[2], a.pad[3] = pd[3];
    return Conv2D(op, x, xp, w, wp, a, y, yp);
  }
  if (nsp == 1) {  // (N, C, L) as (N, C, 1, L)
    a.stride[1] = st[0];
    a.dil[1] = dl[0];
    a.pad[1] = pd[0], a.pad[3] = pd[1];
    return Conv2D(op, InsertUnitDim(x, 2), xp, InsertUnitDim(w, 2), wp, a, InsertUnitDim(y, 2), yp);
  }
  // 3-D.
  const int32_t kd = w.dims[2], kh = w.dims[3], kw = w.dims[4];
  if (kd == 1 && pd[0] == 0 && pd[3] == 0) {
    // One 2-D convolution per output depth slice.
    a.stride[0] = st[1], a.stride[1] = st[2];
    a.dil[0] = dl[1], a.dil[1] = dl[2];
    a.pad[0] = pd[1], a.pad[1] = pd[2], a.pad[2] = pd[4], a.pad[3] = pd[5];
    const sp_tensor_t x4 = DropDim(x, 2), w4 = DropDim(w, 2), y4 = DropDim(y, 2);
    for (int32_t od = 0; od < y.dims[2]; ++od) {
      const int32_t id = od * st[0];
      if (id >= x.dims[2])
        return InvalidArgument("op '" + op.name + "': output depth exceeds the input");
      SP_RETURN_IF_ERROR(Conv2D(op, x4, xp + static_cast<int64_t>(id) * x.strides[2], w4, wp, a, y4,
                                yp + static_cast<int64_t>(od) * y.strides[2]));
    }
    return Status::Ok();
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
    return Conv2D(op, merge(x), xp, w4, wp, a, merge(y), yp);
  }
  Conv3DLoops(x, xp, w, wp, st.data(), pd.data(), dl.data(), a, y, yp);
  return Status::Ok();
}

// Gemm / MatMul with a constant B as TFLite FullyConnected.
Status RunFullyConnected(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                         const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out) {
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
  const int32_t* bias = nullptr;
  if (gemm && op.inputs.size() >= 3) {
    if (g.tensor(op.inputs[2]).NumElements() != N ||
        g.tensor(op.inputs[2]).dtype != ir::DataType::kInt32)
      return Unsupported("op '" + op.name +
                         "': int8 Gemm needs C to be a constant bias of N elements");
    bias = reinterpret_cast<const int32_t*>(in[2]);
  }
  return Check(sp_fully_connected_s8(&a, S8(in[0]), qi.zp, &w, S8(in[1]), bias, rq.data(), qo.zp,
                                     -128, 127, &o, S8(out[0])),
               op);
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
  return true;
}

// Mean over a (N, C, S, 1) view, TFLite Mean semantics (shared or requantised parameters).
Status MeanS8(const ir::Op& op, const sp_tensor_t& x, const int8_t* xp, const QP& qi,
              const sp_tensor_t& y, int8_t* yp, const QP& qo) {
  if (qi == qo) return Check(sp_global_avg_pool_s8(&x, xp, -128, 127, &y, yp), op);
  const double count = static_cast<double>(x.dims[2]) * x.dims[3];
  sp_requant_t rq = sp_host_quantize_multiplier(qi.scale / (qo.scale * std::max(count, 1.0)));
  return Check(sp_global_avg_pool_requant_s8(&x, xp, qi.zp, rq, qo.zp, -128, 127, &y, yp), op);
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

Status RunPool(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
               const std::vector<uint8_t*>& out) {
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
    Pool3DLoops(max, x, S8(in[0]), k.data(), st.data(), pd.data(), cip != 0, y, S8(out[0]));
    return Status::Ok();
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
  if (max) return Check(sp_max_pool_s8(&x, S8(in[0]), kk, ss, pp, -128, 127, &y, S8(out[0])), op);
  return Check(sp_avg_pool_s8(&x, S8(in[0]), kk, ss, pp, cip, -128, 127, &y, S8(out[0])), op);
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
Status ResizeLinearS8(const ir::Op& op, const std::vector<int64_t>& xs, const int8_t* xp,
                      const std::vector<int64_t>& ys, int8_t* yp, sp_coord_mode_t mode) {
  const size_t r = xs.size();
  if (r < 2 || ys.size() != r) return InvalidArgument("op '" + op.name + "': Resize ranks differ");
  int64_t outer = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (xs[i] != ys[i])
      return Unsupported("op '" + op.name +
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

}  // namespace

Status RunKernelS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                   const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out) {
  const std::string& t = op.type;
  if (ir::IsViewOp(t)) return Status::Ok();
  SP_RETURN_IF_ERROR(Matches(g, q));
  auto shape = [&](size_t i) -> const std::vector<int64_t>& {
    return g.tensor(op.inputs[i]).shape;
  };
  auto oshape = [&](size_t i) -> const std::vector<int64_t>& {
    return g.tensor(op.outputs[i]).shape;
  };
  auto elem = [&](ir::TensorId id) { return ir::DataTypeSize(g.tensor(id).dtype); };
  const std::vector<int8_t>& table = q.tables.at(op.id.value());
  if (op.outputs.empty() || op.inputs.empty())
    return InvalidArgument("op '" + op.name + "' has no inputs or outputs");
  const sp_tensor_t o0 = Contig(oshape(0));
  auto params = [&](ir::TensorId id, QP* p) { return ActParams(g, q, id, op, p); };

  if (t == "Conv") return RunConv(g, op, q, in, out);
  if (t == "Gemm" || t == "MatMul") return RunFullyConnected(g, op, q, in, out);

  if (t == "Relu" || t == "Clip" || IsLutOp(t)) {
    if (!IsInt8(g, op.inputs[0]))
      return Unsupported("op '" + op.name + "': int8 " + t + " needs an int8 input");
    sp_tensor_t x = Contig(shape(0));
    if (table.size() == 256)
      return Check(sp_lut_s8(&x, S8(in[0]), table.data(), &o0, S8(out[0])), op);
    if (t != "Relu" && t != "Clip")
      return InternalError("op '" + op.name + "': no lookup table was built");
    QP qi;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    int32_t lo = -128, hi = 127;
    auto q8 = [&](double v) {
      double r = std::round(v / qi.scale) + qi.zp;
      return static_cast<int32_t>(std::clamp(r, -128.0, 127.0));
    };
    if (t == "Relu") {
      lo = std::max(-128, qi.zp);
    } else {
      const double mn = op.attrs.GetFloat("min", -3.4e38), mx = op.attrs.GetFloat("max", 3.4e38);
      lo = q8(mn);
      hi = q8(mx);
    }
    return Check(sp_clamp_s8(&x, S8(in[0]), lo, hi, &o0, S8(out[0])), op);
  }
  if (t == "BatchNormalization") {
    sp_tensor_t x = Describe(g, shape(0), true), y = Describe(g, oshape(0), true);
    const int32_t C = x.rank >= 2 ? x.dims[1] : 1;
    if (x.rank < 2 || table.size() != static_cast<size_t>(C) * 256)
      return InternalError("op '" + op.name + "': no per-channel tables were built");
    sp_tensor_t xc = x, yc = y;
    xc.dims[1] = yc.dims[1] = 1;
    for (int32_t c = 0; c < C; ++c)
      SP_RETURN_IF_ERROR(Check(
          sp_lut_s8(&xc, S8(in[0]) + static_cast<int64_t>(c) * x.strides[1], table.data() + 256 * c,
                    &yc, S8(out[0]) + static_cast<int64_t>(c) * y.strides[1]),
          op));
    return Status::Ok();
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
      return Check(sp_mul_s8(&a, S8(in[0]), &b, S8(in[1]), &p, &o0, S8(out[0])), op);
    }
    sp_add_s8_params_t p =
        sp_host_add_s8_params(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp, -128, 127);
    return Check(t == "Add" ? sp_add_s8(&a, S8(in[0]), &b, S8(in[1]), &p, &o0, S8(out[0]))
                            : sp_sub_s8(&a, S8(in[0]), &b, S8(in[1]), &p, &o0, S8(out[0])),
                 op);
  }
  if (t == "Softmax") {
    QP qi;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    sp_tensor_t x = Contig(shape(0));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", -1), shape(0).size()));
    int32_t exp_table[256];
    sp_host_build_softmax_exp_table(qi.scale, 1.0, exp_table);
    return Check(sp_softmax_s8(&x, S8(in[0]), axis, exp_table, &o0, S8(out[0])), op);
  }
  if (t == "MaxPool" || t == "AveragePool") {
    QP qi, qo;
    SP_RETURN_IF_ERROR(params(op.inputs[0], &qi));
    SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    if (!(qi == qo))
      return InternalError("op '" + op.name +
                           "': int8 pooling needs equal input and output parameters");
    return RunPool(g, op, in, out);
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
    return MeanS8(op, x, S8(in[0]), qi, y, S8(out[0]), qo);
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
    return MeanS8(op, x, S8(in[0]), qi, y, S8(out[0]), qo);
  }
  if (t == "Concat") {
    const int32_t axis =
        static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 1), oshape(0).size()));
    const bool int8 = IsInt8(g, op.outputs[0]);
    QP qo;
    if (int8) SP_RETURN_IF_ERROR(params(op.outputs[0], &qo));
    int64_t offset = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      sp_tensor_t x = Contig(shape(i));
      sp_tensor_t slice = o0;
      slice.dims[axis] = x.dims[axis];
      uint8_t* dst = out[0] + offset * o0.strides[axis] * elem(op.outputs[0]);
      offset += x.dims[axis];
      QP qi;
      if (int8) SP_RETURN_IF_ERROR(params(op.inputs[i], &qi));
      if (!int8 || qi == qo) {
        SP_RETURN_IF_ERROR(Check(sp_copy(&x, in[i], elem(op.inputs[i]), &slice, dst), op));
      } else {
        sp_requant_t rq = sp_host_quantize_multiplier(qi.scale / qo.scale);
        SP_RETURN_IF_ERROR(
            Check(sp_requantize_s8(&x, S8(in[i]), qi.zp, rq, qo.zp, &slice, S8(dst)), op));
      }
    }
    return Status::Ok();
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
      return ResizeLinearS8(op, shape(0), S8(in[0]), oshape(0), S8(out[0]), coord);
    }
    if (mode != "nearest")
      return Unsupported("op '" + op.name + "': int8 Resize supports nearest and linear modes");
    std::string nm =
        op.attrs.GetString("nearest_mode", t == "Upsample" ? "floor" : "round_prefer_floor");
    sp_nearest_mode_t n = nm == "floor"               ? SP_NEAREST_FLOOR
                          : nm == "ceil"              ? SP_NEAREST_CEIL
                          : nm == "round_prefer_ceil" ? SP_NEAREST_ROUND_PREFER_CEIL
                                                      : SP_NEAREST_ROUND_PREFER_FLOOR;
    return Check(sp_resize_nearest(&x, in[0], coord, n, elem(op.inputs[0]), &o0, out[0]), op);
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
    return Check(sp_pad(&x, in[0], pads.data(), m, value, elem(op.inputs[0]), &o0, out[0]), op);
  }
  if (t == "Transpose") {
    sp_tensor_t x = Contig(shape(0));
    std::vector<int64_t> perm = op.attrs.GetInts("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(shape(0).size()) - 1; i >= 0; --i) perm.push_back(i);
    auto p = I32(perm);
    return Check(sp_transpose(&x, in[0], p.data(), elem(op.inputs[0]), &o0, out[0]), op);
  }
  if (t == "Split") {
    int64_t rank = static_cast<int64_t>(shape(0).size());
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), rank));
    sp_tensor_t x = Contig(shape(0));
    int64_t start = 0;
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      std::vector<int32_t> starts(rank, 0);
      starts[axis] = static_cast<int32_t>(start);
      sp_tensor_t y = Contig(oshape(k));
      SP_RETURN_IF_ERROR(
          Check(sp_slice(&x, in[0], starts.data(), nullptr, elem(op.inputs[0]), &y, out[k]), op));
      start += oshape(k)[axis];
    }
    return Status::Ok();
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
    return Check(sp_slice(&x, in[0], starts.data(), steps.data(), elem(op.inputs[0]), &o0, out[0]),
                 op);
  }
  if (t == "Gather") {
    sp_tensor_t x = Contig(shape(0)), idx = Contig(shape(1));
    int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), shape(0).size()));
    if (g.tensor(op.inputs[1]).dtype != ir::DataType::kInt64)
      return Unsupported("op '" + op.name + "': Gather indices must be int64");
    return Check(sp_gather(&x, in[0], axis, &idx, reinterpret_cast<const int64_t*>(in[1]),
                           elem(op.inputs[0]), &o0, out[0]),
                 op);
  }
  if (t == "Expand") {
    sp_tensor_t x = Contig(shape(0));
    return Check(sp_expand(&x, in[0], elem(op.inputs[0]), &o0, out[0]), op);
  }
  return Unsupported("int8 execution has no kernel for op '" + op.name + "' of type " +
                     (t == "Opaque" ? "Opaque:" + op.original_type : t) +
                     " (verify this model with --dtype float32)");
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

Status RunDepthwiseInPlaceS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                             const std::vector<const uint8_t*>& in, uint8_t* out, uint8_t* scratch,
                             int64_t scratch_bytes) {
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
  int32_t act_min, act_max;
  sp_host_act_range_s8(ActivationKind(op), qo.scale, qo.zp, &act_min, &act_max);
  const int32_t* bias = op.inputs.size() >= 3 ? reinterpret_cast<const int32_t*>(in[2]) : nullptr;
  sp_tensor_t xc = x, yc = y, wc = w;
  xc.dims[1] = yc.dims[1] = 1;
  wc.dims[0] = 1;
  int8_t* s = S8(scratch);
  for (int32_t c = 0; c < channels; ++c) {
    const int8_t* xp = S8(in[0]) + static_cast<int64_t>(c) * x.strides[1];
    const int8_t* wp = S8(in[1]) + static_cast<int64_t>(c) * w.strides[0];
    SP_RETURN_IF_ERROR(
        Check(sp_conv_s8(&xc, xp, qi.zp, &wc, wp, bias ? bias + c : nullptr, &rq[c], qo.zp, act_min,
                         act_max, st.data(), pd.data(), dl.data(), 1, &sc, s),
              op));
    int8_t* yp = S8(out) + static_cast<int64_t>(c) * y.strides[1];
    SP_RETURN_IF_ERROR(Check(sp_copy(&sc, s, 1, &yc, yp), op));
  }
  return Status::Ok();
}

}  // namespace sramplan::exec
