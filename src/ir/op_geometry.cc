#include "ir/op_geometry.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "ir/shape_inference.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::ir {
namespace {

using Shape = std::vector<int64_t>;

// Errors name the op, as shape inference's.
Status Bad(const Op& op, const std::string& what) {
  return InvalidArgument("op '" + op.name + "' (" + op.type + "): " + what);
}
std::string S(const Shape& s) { return "[" + JoinInts(s) + "]"; }
int64_t Numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

Status NeedInputs(const Op& op, size_t n) {
  if (op.inputs.size() < n)
    return Bad(op,
               "needs " + std::to_string(n) + " inputs, has " + std::to_string(op.inputs.size()));
  return Status::Ok();
}

// Spatial output size of a window op along one axis, ONNX semantics.
StatusOr<int64_t> WindowOut(const Op& op, int64_t in, int64_t k, int64_t stride, int64_t dil,
                            int64_t pad_begin, int64_t pad_total, bool ceil_mode,
                            const std::string& auto_pad) {
  if (stride <= 0 || dil <= 0 || k <= 0) return Bad(op, "kernel, stride and dilation must be >= 1");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return CeilDiv(in, stride);
  int64_t eff = dil * (k - 1) + 1;
  int64_t span = in + pad_total - eff;
  if (span < 0)
    return Bad(op, "window of " + std::to_string(eff) + " does not fit input extent " +
                       std::to_string(in) + " plus padding " + std::to_string(pad_total));
  int64_t out = ceil_mode ? CeilDiv(span, stride) + 1 : span / stride + 1;
  // As PyTorch and ONNX Runtime: with ceil_mode the last window must start inside the input or the
  // leading padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) out -= 1;
  return out;
}

// The input's rank and extents. w->kernel must be set (from the weight or kernel_shape) before the
// attribute part, ParseWindowAttrs.
Status ParseWindowInput(const Graph& g, const Op& op, WindowGeometry* w) {
  const Shape& x = g.tensor(op.inputs[0]).shape;
  const int rank = static_cast<int>(x.size());
  if (rank < 3) return Bad(op, "input " + S(x) + " needs at least 3 dimensions (N, C, spatial...)");
  w->layout = g.layout;
  const bool nhwc = g.layout == Layout::kNHWC;
  w->batch = x[0];
  w->in_channels = x[nhwc ? rank - 1 : 1];
  w->out_channels = w->in_channels;
  w->in_spatial.assign(x.begin() + (nhwc ? 1 : 2), x.begin() + (nhwc ? rank - 1 : rank));
  w->kernel_shape_given = op.attrs.Has("kernel_shape");
  return Status::Ok();
}

// Strides, dilations, pads, ceil_mode, auto_pad and the output extents.
Status ParseWindowAttrs(const Op& op, WindowGeometry* w) {
  const int nsp = static_cast<int>(w->in_spatial.size());
  w->strides = op.attrs.GetInts("strides", Shape(nsp, 1));
  w->dilations = op.attrs.GetInts("dilations", Shape(nsp, 1));
  w->pads = op.attrs.GetInts("pads", Shape(2 * nsp, 0));
  if (static_cast<int>(w->strides.size()) != nsp || static_cast<int>(w->dilations.size()) != nsp ||
      static_cast<int>(w->pads.size()) != 2 * nsp)
    return Bad(op, "strides/dilations/pads have the wrong number of entries for " +
                       std::to_string(nsp) + " spatial dims");
  for (int64_t p : w->pads)
    if (p < 0) return Bad(op, "negative padding is not supported");
  w->ceil_mode = op.attrs.GetInt("ceil_mode", 0) != 0;
  w->auto_pad = op.attrs.GetString("auto_pad", "NOTSET");
  w->out_spatial.resize(nsp);
  for (int i = 0; i < nsp; ++i) {
    SP_ASSIGN_OR_RETURN(
        w->out_spatial[i],
        WindowOut(op, w->in_spatial[i], w->kernel[i], w->strides[i], w->dilations[i], w->pads[i],
                  w->pads[i] + w->pads[i + nsp], w->ceil_mode, w->auto_pad));
  }
  if (w->auto_pad == "SAME_UPPER" || w->auto_pad == "SAME_LOWER") {
    // The padding that gives ceil(in / stride) outputs; the odd one goes at the end (SAME_UPPER) or
    // the beginning (SAME_LOWER).
    for (int i = 0; i < nsp; ++i) {
      // (out - 1) * stride + dilation * (kernel - 1) + 1 - in, in checked arithmetic (the
      // attributes of a native graph are not bounded).
      auto covered = CheckedMul(w->out_spatial[i] - 1, w->strides[i]);
      auto window = CheckedMul(w->dilations[i], w->kernel[i] - 1);
      auto end = covered && window ? CheckedAdd(*covered, *window) : std::nullopt;
      if (!end)
        return Bad(op, "the SAME padding of axis " + std::to_string(i) +
                           " overflows; give smaller strides, " + "dilations or kernel");
      const int64_t total = std::max<int64_t>(0, *end - w->in_spatial[i] + 1);
      const int64_t small = total / 2, big = total - small;
      w->pads[i] = w->auto_pad == "SAME_UPPER" ? small : big;
      w->pads[i + nsp] = w->auto_pad == "SAME_UPPER" ? big : small;
    }
  }
  return Status::Ok();
}

}  // namespace

bool WindowGeometry::UnitStrides() const {
  return std::all_of(strides.begin(), strides.end(), [](int64_t v) { return v == 1; });
}
bool WindowGeometry::UnitDilations() const {
  return std::all_of(dilations.begin(), dilations.end(), [](int64_t v) { return v == 1; });
}
bool WindowGeometry::ZeroPads() const {
  return std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
}
bool WindowGeometry::UnitKernel() const {
  return std::all_of(kernel.begin(), kernel.end(), [](int64_t v) { return v == 1; });
}

bool ConvGeometry::IsPointwise() const {
  return group == 1 && UnitKernel() && UnitStrides() && ZeroPads() && UnitDilations();
}

int64_t ConvGeometry::Macs() const {
  return batch * out_channels * Numel(out_spatial) * in_channels_per_group() * Numel(kernel);
}

int64_t GemmGeometry::Macs() const { return Numel(batch) * m * k * n; }

StatusOr<ConvGeometry> ParseConvGeometry(const Graph& g, const Op& op) {
  if (op.type != "Conv") return Bad(op, "is not a Conv");
  SP_RETURN_IF_ERROR(NeedInputs(op, 1));
  ConvGeometry c;
  SP_RETURN_IF_ERROR(ParseWindowInput(g, op, &c));
  const Shape& x = g.tensor(op.inputs[0]).shape;
  const int rank = static_cast<int>(x.size());
  const int nsp = rank - 2;
  const bool nhwc = g.layout == Layout::kNHWC;
  if (op.inputs.size() < 2) return Bad(op, "needs a weight input");
  const Shape& w = g.tensor(op.inputs[1]).shape;
  if (static_cast<int>(w.size()) != rank)
    return Bad(op, "weight " + S(w) + " must have the rank of the input " + S(x));
  c.group = op.attrs.GetInt("group", 1);
  if (c.group <= 0) return Bad(op, "group must be >= 1");
  c.out_channels = w[0];
  const int64_t w_cin = nhwc ? w[rank - 1] : w[1];
  if (c.in_channels % c.group != 0 || c.out_channels % c.group != 0 ||
      w_cin * c.group != c.in_channels)
    return Bad(op, "input channels " + std::to_string(c.in_channels) + ", weight " + S(w) +
                       " and group " + std::to_string(c.group) + " are inconsistent");
  for (int i = 0; i < nsp; ++i) c.kernel.push_back(nhwc ? w[1 + i] : w[2 + i]);
  const Shape ks = op.attrs.GetInts("kernel_shape");
  if (!ks.empty() && ks != c.kernel)
    return Bad(op, "kernel_shape " + S(ks) + " disagrees with weight " + S(w));
  if (op.inputs.size() >= 3) {
    const Shape& b = g.tensor(op.inputs[2]).shape;
    if (Numel(b) != c.out_channels)
      return Bad(op, "bias " + S(b) + " must have " + std::to_string(c.out_channels) + " elements");
    c.has_bias = true;
  }
  c.weight_shape = w;
  SP_RETURN_IF_ERROR(ParseWindowAttrs(op, &c));
  c.depthwise = IsDepthwiseConv(g, op);
  return c;
}

StatusOr<PoolGeometry> ParsePoolGeometry(const Graph& g, const Op& op) {
  if (op.type != "MaxPool" && op.type != "AveragePool")
    return Bad(op, "is not a MaxPool or AveragePool");
  SP_RETURN_IF_ERROR(NeedInputs(op, 1));
  PoolGeometry p;
  SP_RETURN_IF_ERROR(ParseWindowInput(g, op, &p));
  const int nsp = static_cast<int>(p.in_spatial.size());
  p.kernel = op.attrs.GetInts("kernel_shape");
  if (static_cast<int>(p.kernel.size()) != nsp)
    return Bad(op, "kernel_shape must have " + std::to_string(nsp) + " entries");
  SP_RETURN_IF_ERROR(ParseWindowAttrs(op, &p));
  p.max = op.type == "MaxPool";
  p.count_include_pad = op.attrs.GetInt("count_include_pad", 0) != 0;
  return p;
}

StatusOr<GemmGeometry> ParseGemmGeometry(const Graph& g, const Op& op) {
  if (op.type != "Gemm" && op.type != "MatMul") return Bad(op, "is not a Gemm or MatMul");
  SP_RETURN_IF_ERROR(NeedInputs(op, 2));
  GemmGeometry r;
  const Shape& in_a = g.tensor(op.inputs[0]).shape;
  const Shape& in_b = g.tensor(op.inputs[1]).shape;
  Shape a = in_a, b = in_b;
  if (op.type == "Gemm") {
    if (a.size() != 2 || b.size() != 2)
      return Bad(op, "Gemm needs 2-D inputs, got " + S(a) + " and " + S(b));
    r.trans_a = op.attrs.GetInt("transA", 0) != 0;
    r.trans_b = op.attrs.GetInt("transB", 0) != 0;
    r.alpha = op.attrs.GetFloat("alpha", 1.0);
    r.beta = op.attrs.GetFloat("beta", 1.0);
    if (r.trans_a) std::swap(a[0], a[1]);
    if (r.trans_b) std::swap(b[0], b[1]);
    if (a[1] != b[0]) return Bad(op, "inner dimensions differ: " + S(a) + " x " + S(b));
    r.m = a[0];
    r.k = a[1];
    r.n = b[1];
    if (op.inputs.size() >= 3) {
      // The bias C must broadcast to the output [M, N] (ONNX: unidirectional broadcasting).
      const Shape& c = g.tensor(op.inputs[2]).shape;
      const Shape y = {a[0], b[1]};
      auto bc = BroadcastShapes(c, y);
      if (c.size() > 2 || !bc || *bc != y)
        return Bad(op, "bias " + S(c) + " does not broadcast to the output " + S(y));
      r.has_bias = true;
    }
    return r;
  }
  if (a.empty() || b.empty()) return Bad(op, "scalar operands are not allowed");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return Bad(op, "inner dimensions differ: " + S(in_a) + " x " + S(in_b));
  const Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  auto batch = BroadcastShapes(ba, bb);
  if (!batch) return Bad(op, "batch dimensions do not broadcast");
  r.batch = *batch;
  r.a_vector = a1;
  r.b_vector = b1;
  r.m = a[a.size() - 2];
  r.k = a.back();
  r.n = b.back();
  return r;
}

}  // namespace sramplan::ir
