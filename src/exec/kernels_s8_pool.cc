// int8 pools and means as call records (kernels_s8_internal.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/kernels_s8_internal.h"
#include "exec/window_args.h"

namespace sramplan::exec {

namespace {

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
  SP_ASSIGN_OR_RETURN(WindowArgs wa, PoolWindow(g, op));
  std::vector<int32_t> k = wa.kernel, st = wa.strides, pd = wa.pads;
  for (int32_t d : wa.dilations)
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

}  // namespace

// The quantisation of a pooling op's input and output.
Status InOutParams(const S8Op& o, QP* qi, QP* qo) {
  SP_RETURN_IF_ERROR(o.params(o.op.inputs[0], qi));
  return o.params(o.op.outputs[0], qo);
}

StatusOr<OpCalls> BuildPoolOpS8(const S8Op& o) {
  const ir::Op& op = o.op;
  QP qi, qo;
  SP_RETURN_IF_ERROR(InOutParams(o, &qi, &qo));
  if (!(qi == qo))
    return InternalError("op '" + op.name +
                         "': int8 pooling needs equal input and output parameters");
  return BuildPool(o.g, op);
}

StatusOr<OpCalls> BuildGlobalAvgPoolS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  QP qi, qo;
  SP_RETURN_IF_ERROR(InOutParams(o, &qi, &qo));
  sp_tensor_t x, y;
  if (!MergeSpatial(Describe(g, o.shape(0), true), &x) ||
      !MergeSpatial(Describe(g, o.oshape(0), true), &y))
    return Unsupported("op '" + op.name +
                       "': int8 GlobalAveragePool needs mergeable spatial dims");
  y.dims[2] = 1;
  return Single(MeanS8(x, qi, y, qo));
}

StatusOr<OpCalls> BuildReduceMeanS8(const S8Op& o) {
  const ir::Op& op = o.op;
  QP qi, qo;
  SP_RETURN_IF_ERROR(o.params(op.inputs[0], &qi));
  SP_RETURN_IF_ERROR(o.params(op.outputs[0], &qo));
  const auto& xs = o.shape(0);
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

}  // namespace sramplan::exec
