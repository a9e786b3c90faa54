#include "ir/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/op_geometry.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::ir {
namespace {

using Shape = std::vector<int64_t>;
using Shapes = std::vector<Shape>;

Status Bad(const Op& op, const std::string& what) {
  return InvalidArgument("op '" + op.name + "' (" + op.type + "): " + what);
}

std::string S(const Shape& s) {
  std::string r = "[";
  r += JoinInts(s);
  return r += "]";
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The output of a Conv or pooling op: the input with the channel and spatial extents replaced.
Shapes WindowOutput(const Graph& g, const Op& op, const WindowGeometry& w) {
  Shape out = g.tensor(op.inputs[0]).shape;
  const int rank = static_cast<int>(out.size());
  const bool nhwc = g.layout == Layout::kNHWC;
  out[nhwc ? rank - 1 : 1] = w.out_channels;
  for (int i = 0; i < w.spatial_rank(); ++i) out[nhwc ? 1 + i : 2 + i] = w.out_spatial[i];
  return Shapes{out};
}

}  // namespace

std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// ONNX Slice with static starts/ends/axes/steps: indices clamp to the dimension (negative ones count
// from its end); the output holds ceil((end - start) / step) elements per sliced axis.
StatusOr<Shapes> StaticSliceShape(const Graph& g, const Op& op) {
  Shape out = g.tensor(op.inputs[0]).shape;
  const int64_t r = static_cast<int64_t>(out.size());
  const auto starts = op.attrs.GetInts("starts"), ends = op.attrs.GetInts("ends");
  std::vector<int64_t> axes = op.attrs.GetInts("axes"), steps = op.attrs.GetInts("steps");
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return Bad(op, "starts, ends, axes and steps must have the same length");
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes[k];
    if (axis < -r || axis >= r) return Bad(op, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    if (seen[axis]) return Bad(op, "axis " + std::to_string(axis) + " is sliced twice");
    seen[axis] = true;
    const int64_t dim = out[axis], step = steps[k];
    if (step == 0 || step == std::numeric_limits<int64_t>::min()) return Bad(op, "a step of " + std::to_string(step));
    // Negative indices count from the end (below -dim: before the start); then clamp.
    auto norm = [dim](int64_t v) { return v >= 0 ? v : (v < -dim ? -1 : v + dim); };
    const int64_t b = std::clamp<int64_t>(norm(starts[k]), 0, step > 0 ? dim : dim - 1);
    const int64_t e = std::clamp<int64_t>(norm(ends[k]), step > 0 ? 0 : -1, step > 0 ? dim : dim - 1);
    const int64_t n = step > 0 ? (e > b ? (e - b - 1) / step + 1 : 0) : (b > e ? (b - e - 1) / -step + 1 : 0);
    if (n < 1) return Bad(op, "slices an empty range of axis " + std::to_string(axis));
    out[axis] = n;
  }
  return Shapes{out};
}

StatusOr<Shapes> InferOutputShapes(const Graph& g, const Op& op) {
  const std::string& t = op.type;
  auto in = [&](size_t i) -> const Shape& { return g.tensor(op.inputs[i]).shape; };
  auto need = [&](size_t n) -> Status {
    if (op.inputs.size() < n)
      return Bad(op, "needs " + std::to_string(n) + " inputs, has " + std::to_string(op.inputs.size()));
    return Status::Ok();
  };
  if (t == "Conv") {
    SP_RETURN_IF_ERROR(need(2));
    SP_ASSIGN_OR_RETURN(ConvGeometry c, ParseConvGeometry(g, op));
    return WindowOutput(g, op, c);
  }
  if (t == "MaxPool" || t == "AveragePool") {
    SP_RETURN_IF_ERROR(need(1));
    SP_ASSIGN_OR_RETURN(PoolGeometry p, ParsePoolGeometry(g, op));
    return WindowOutput(g, op, p);
  }
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
    SP_RETURN_IF_ERROR(need(1));
    Shape out = in(0);
    if (out.size() < 3) return Bad(op, "input " + S(out) + " needs at least 3 dimensions");
    int ca = ChannelAxis(g, static_cast<int>(out.size()));
    for (size_t i = 1; i < out.size(); ++i)
      if (static_cast<int>(i) != ca) out[i] = 1;
    return Shapes{out};
  }
  if (IsUnaryElementwise(t) || t == "Softmax" || t == "LogSoftmax" || t == "LRN" ||
      t == "LayerNormalization" || t == "Identity" || t == "Dropout" || t == "Quantize" || t == "Dequantize") {
    SP_RETURN_IF_ERROR(need(1));
    if (t == "Clip")
      for (const char* bound : {"min", "max"})
        if (op.attrs.Has(bound) && std::isnan(op.attrs.GetFloat(bound, 0)))
          return Bad(op, std::string("its '") + bound + "' is NaN; give a number or leave it out");
    if (t == "Softmax" || t == "LogSoftmax" || t == "LayerNormalization") {
      const int64_t r = static_cast<int64_t>(in(0).size());
      const int64_t axis = op.attrs.GetInt("axis", -1);
      if (axis < -r || axis >= r)
        return Bad(op, "axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(r) +
                           " (give an axis in [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "])");
    }
    return Shapes{in(0)};
  }
  if (IsBinaryElementwise(t)) {
    SP_RETURN_IF_ERROR(need(2));
    auto b = BroadcastShapes(in(0), in(1));
    if (!b) return Bad(op, "shapes " + S(in(0)) + " and " + S(in(1)) + " do not broadcast");
    return Shapes{*b};
  }
  if (t == "Slice" && op.inputs.size() == 1) {
    // The attribute form (ONNX opset 1-9, .tflite's import): without both index lists the output
    // shape would be taken on trust, and a kernel would later find it does not fit the input.
    if (!op.attrs.Has("starts") || !op.attrs.Has("ends"))
      return Bad(op, std::string("has one input but no '") + (op.attrs.Has("starts") ? "ends" : "starts") +
                         "' attribute; give 'starts' and 'ends' (and optionally 'axes', 'steps') as attributes, "
                         "or pass them as constant inputs");
    return StaticSliceShape(g, op);
  }
  if (t == "Concat") {
    SP_RETURN_IF_ERROR(need(1));
    Shape out = in(0);
    int64_t axis = op.attrs.GetInt("axis", 1);
    int64_t r = static_cast<int64_t>(out.size());
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) return Bad(op, "axis out of range for rank " + std::to_string(r));
    for (size_t i = 1; i < op.inputs.size(); ++i) {
      const Shape& s = in(i);
      if (s.size() != out.size()) return Bad(op, "inputs have different ranks");
      for (int64_t d = 0; d < r; ++d)
        if (d != axis && s[d] != out[d])
          return Bad(op, "input " + S(s) + " does not match " + S(in(0)) + " off the concat axis");
      out[axis] += s[axis];
    }
    return Shapes{out};
  }
  if (t == "Gemm" || t == "MatMul") {
    SP_RETURN_IF_ERROR(need(2));
    SP_ASSIGN_OR_RETURN(GemmGeometry m, ParseGemmGeometry(g, op));
    Shape out = m.batch;
    if (!m.a_vector) out.push_back(m.m);
    if (!m.b_vector) out.push_back(m.n);
    return Shapes{out};
  }
  if (t == "Transpose") {
    SP_RETURN_IF_ERROR(need(1));
    const Shape& x = in(0);
    Shape perm = op.attrs.GetInts("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(x.size()) - 1; i >= 0; --i) perm.push_back(i);
    if (perm.size() != x.size()) return Bad(op, "perm has the wrong length");
    Shape out;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(x.size())) return Bad(op, "perm entry out of range");
      out.push_back(x[p]);
    }
    return Shapes{out};
  }
  if (t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze") {
    SP_RETURN_IF_ERROR(need(1));
    if (op.outputs.empty()) return Bad(op, "has no output");
    const Shape& out = g.tensor(op.outputs[0]).shape;
    if (Numel(out) != Numel(in(0)))
      return Bad(op, "view changes the element count: " + S(in(0)) + " -> " + S(out));
    return Shapes{out};
  }
  if (t == "Pad") {
    SP_RETURN_IF_ERROR(need(1));
    Shape pads = op.attrs.GetInts("pads");
    Shape out = in(0);
    if (pads.size() != 2 * out.size()) return Unsupported("Pad without static pads");
    for (size_t i = 0; i < out.size(); ++i) out[i] += pads[i] + pads[i + out.size()];
    return Shapes{out};
  }
  if (t == "ReduceMean") {
    SP_RETURN_IF_ERROR(need(1));
    if (!op.attrs.Has("axes")) return Unsupported("ReduceMean without static axes");
    Shape axes = op.attrs.GetInts("axes");
    bool keep = op.attrs.GetInt("keepdims", 1) != 0;
    Shape x = in(0);
    int64_t r = static_cast<int64_t>(x.size());
    std::vector<bool> red(x.size(), false);
    for (int64_t a : axes) {
      if (a < 0) a += r;
      if (a < 0 || a >= r) return Bad(op, "axis out of range");
      red[a] = true;
    }
    Shape out;
    for (int64_t i = 0; i < r; ++i) {
      if (!red[i]) out.push_back(x[i]);
      else if (keep) out.push_back(1);
    }
    return Shapes{out};
  }
  return Unsupported("no shape rule for " + t);
}

}  // namespace sramplan::ir
