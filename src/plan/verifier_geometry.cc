// The verifier's geometry check: attribute ranges and the output shapes of window ops.
#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {

// Geometry: every attr in its sane range, and the output shape of every window op (Conv,
// DepthwiseConv, MaxPool/AveragePool with a kernel_shape) what its geometry gives from its input
// shape, in NHWC or NCHW. Runs before anything that loops over the geometry.
void Checker::CheckGeometry() {
  geometry_ok_.assign(n_, true);
  for (int s = 0; s < n_; ++s)
    for (size_t k = 0; k < p_.steps[s].ops.size(); ++k) {
      const StepOp& op = p_.steps[s].ops[k];
      const std::string where = OpWhere(s, k);
      bool ok = CheckAttrRanges(op, where);
      bool nhwc = false;
      if (ok && (IsConvType(op.type) || (IsPoolType(op.type) && op.attrs.count("kernel_shape"))))
        ok = CheckWindowShapes(op, where, &nhwc);
      if (!ok) geometry_ok_[s] = false;
      if (nhwc) nhwc_ops_.insert(&op);
    }
}

bool Checker::CheckAttrRanges(const StepOp& op, const std::string& where) {
  bool ok = true;
  auto range = [&](const std::string& key, const std::vector<int64_t>& v, int64_t lo,
                   int64_t hi) {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < lo || v[i] > hi) {
        Err(where + ": " + key + "[" + Str(static_cast<int64_t>(i)) + "] " + Str(v[i]) +
            " is outside [" + Str(lo) + ", " + Str(hi) + "]");
        ok = false;
        return;
      }
  };
  for (const auto& [key, v] : op.attrs) {
    if (v.size() > 8) {
      Err(where + ": " + key + " has " + Str(static_cast<int64_t>(v.size())) + " entries");
      ok = false;
      continue;
    }
    if (key == "kernel_shape" || key == "strides" || key == "dilations") {
      range(key, v, 1, kMaxWindow);
    } else if (key == "pads") {
      range(key, v, 0, kMaxWindow);
    } else if (key == "group" || key == "segment_bytes" || key == "row_cache") {
      if (v.size() != 1) {
        Err(where + ": " + key + " must have one entry, has " +
            Str(static_cast<int64_t>(v.size())));
        ok = false;
        continue;
      }
      if (key == "row_cache")
        range(key, v, 0, 1);
      else
        range(key, v, 1, kInt32Max);
    }
  }
  return ok;
}

// The output of `op` (a Conv, DepthwiseConv or pool) as its geometry gives it, in one layout.
// Returns the expected output shape, empty when the weights, channels or group disagree.
std::vector<int64_t> Checker::WindowOutput(const StepOp& op, const std::vector<int64_t>& x, bool nhwc) const {
  const int rank = static_cast<int>(x.size());
  const int nsp = rank - 2;
  const int caxis = nhwc ? rank - 1 : 1;
  auto sp = [&](int i) { return nhwc ? 1 + i : 2 + i; };
  const int64_t c_in = x[caxis];
  int64_t c_out = c_in;
  std::vector<int64_t> kernel = Attr(op, "kernel_shape", {});
  const int64_t group = Attr(op, "group", {1})[0];
  if (IsConvType(op.type)) {
    const std::vector<int64_t>* w = op.inputs.size() >= 2 ? GoodShape(op.inputs[1]) : nullptr;
    if (!w || static_cast<int>(w->size()) != rank) return {};
    c_out = (*w)[0];
    const int64_t w_cin = nhwc ? (*w)[rank - 1] : (*w)[1];
    std::vector<int64_t> wk;
    for (int i = 0; i < nsp; ++i) wk.push_back(nhwc ? (*w)[1 + i] : (*w)[2 + i]);
    if (kernel.empty()) kernel = wk;
    auto cin = CheckedMul(w_cin, group);
    if (kernel != wk || !cin || *cin != c_in || c_out % group != 0) return {};
    if (op.type == "DepthwiseConv" && (group != c_in || c_out != c_in)) return {};
  }
  const std::vector<int64_t> strides = Attr(op, "strides", std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> dil = Attr(op, "dilations", std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> pads = Attr(op, "pads", std::vector<int64_t>(2 * nsp, 0));
  if (static_cast<int>(kernel.size()) != nsp || static_cast<int>(strides.size()) != nsp ||
      static_cast<int>(dil.size()) != nsp || static_cast<int>(pads.size()) != 2 * nsp)
    return {};
  std::vector<int64_t> y = x;
  y[caxis] = c_out;
  for (int i = 0; i < nsp; ++i) {
    // All geometry is within kMaxWindow (CheckAttrRanges); a dimension is at most 2^63 - 1.
    const int64_t eff = dil[i] * (kernel[i] - 1) + 1;
    auto total = CheckedAdd(x[sp(i)], pads[i] + pads[i + nsp]);
    if (!total || *total < eff) return {};
    y[sp(i)] = (*total - eff) / strides[i] + 1;
  }
  return y;
}

bool Checker::CheckWindowShapes(const StepOp& op, const std::string& where, bool* nhwc_ok) {
  const std::vector<int64_t>* x = op.inputs.empty() ? nullptr : GoodShape(op.inputs[0]);
  const std::vector<int64_t>* y = op.outputs.empty() ? nullptr : GoodShape(op.outputs[0]);
  if (!x || !y) {
    Err(where + ": a " + op.type + " needs an input and an output tensor with valid shapes");
    return false;
  }
  if (IsConvType(op.type) && op.inputs.size() < 2) {
    Err(where + ": a " + op.type + " needs a weight input");
    return false;
  }
  if (x->size() < 3 || x->size() > 8 || y->size() != x->size()) {
    Err(where + ": input " + List(*x) + " and output " + List(*y) +
        " must have one rank of at least 3 (batch, channels, spatial axes)");
    return false;
  }
  bool any = false;
  std::vector<int64_t> first;
  for (bool nhwc : {true, false}) {
    std::vector<int64_t> want = WindowOutput(op, *x, nhwc);
    // Pools may round up (ceil_mode, which the plan does not record): accept one more per axis.
    bool match = want == *y;
    if (!match && IsPoolType(op.type) && !want.empty()) {
      match = true;
      for (size_t i = 0; i < want.size(); ++i)
        match = match && ((*y)[i] == want[i] || (*y)[i] == want[i] + 1);
    }
    if (match) {
      any = true;
      if (nhwc) *nhwc_ok = true;
    }
    if (first.empty()) first = want;
  }
  if (any) return true;
  Err(where + ": output shape " + List(*y) + " is not what input " + List(*x) +
      " and the geometry (kernel_shape " + List(Attr(op, "kernel_shape", {})) + ", strides " +
      List(Attr(op, "strides", {})) + ", pads " + List(Attr(op, "pads", {})) + ", dilations " +
      List(Attr(op, "dilations", {})) + ", group " + List(Attr(op, "group", {1})) + ") give" +
      (first.empty() ? std::string(" (the weights, channels or group disagree)")
                     : ": " + List(first) + " in NHWC"));
  return false;
}

}  // namespace sramplan::plan::verifier_internal
