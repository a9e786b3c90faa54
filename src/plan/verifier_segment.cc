// The verifier's checks of step kinds and declared overlaps, and the segment-level re-checks
// (access order and workspace of the segment-aware kernels).
#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {

// Along one axis of a window op run on the output of a fused expansion (or directly on the input:
// es = ek = 1, ep = 0, plane = n): the window of one output pixel covers plane positions
// start + [0, k), clipped to [0, plane); plane position h reads input positions h*es - ep + [0,
// ek), clipped to [0, n). Returns the first input position any of them reads, or -1 when none reads
// one. Closed form of the byte-by-byte scan (every term grows with h, so the first valid h gives
// the minimum); all arguments are range-checked by the caller, so nothing overflows.
int64_t FirstInputTap(int64_t start, int64_t k, int64_t plane, int64_t es, int64_t ep, int64_t ek,
                      int64_t n) {
  if (n < 1) return -1;
  const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(start + k, plane) - 1;
  // h*es - ep + ek - 1 >= 0 (the expansion window reaches row 0) and h*es - ep < n (it starts
  // inside).
  const int64_t need = ep - ek + 1;
  const int64_t ha = need <= 0 ? 0 : CeilDiv(need, es);
  const int64_t hb = (n + ep - 1) / es;
  const int64_t first = std::max(lo, ha);
  if (first > std::min(hi, hb)) return -1;
  return std::max<int64_t>(0, first * es - ep);
}

constexpr int64_t kMaxSegmentTaps = 64;

// Step kinds: each step's kind agrees with its ops, its parameters are in range and set only for
// the kinds that use them, and a step that needs a workspace (segment, fused-bottleneck,
// inplace-depthwise) names one whose buffer is live on chip at the step.
void Checker::CheckStepKinds() {
  for (int s = 0; s < n_; ++s) {
    const Step& st = p_.steps[s];
    const auto& ops = st.ops;
    const std::string where = "steps[" + Str(s) + "] (kind '" + StepKindName(st.kind) + "')";
    if (st.kind == StepKind::kFusedTiled) {
      if (!tiled_layout_known_) plan_nhwc_ = DetectNhwc();
      tiled_layout_known_ = true;
      CheckFusedTiled(s);
      continue;
    }
    if (st.kind == StepKind::kModule) {
      Err(where + ": this step kind is not supported yet (reserved for module buffering); plan the "
                  "model with another strategy");
      continue;
    }
    std::string types;
    for (size_t k = 0; k < ops.size(); ++k) types += (k ? ", " : "") + ops[k].type;
    const bool bottleneck = (ops.size() == 3 || ops.size() == 4) && ops[0].type == "Conv" &&
                            ops[1].type == "DepthwiseConv" && ops[2].type == "Conv" &&
                            (ops.size() == 3 || ops[3].type == "Add");
    const bool one = ops.size() == 1;
    if (st.segment_bytes < 0 || st.segment_bytes > kInt32Max)
      Err(where + ": segment_bytes " + Str(st.segment_bytes) + " is outside [1, " + Str(kInt32Max) + "]");
    else if (st.segment_bytes != 0 && !IsSegmentKind(st.kind))
      Err(where + ": segment_bytes is set, but only segment and fused-bottleneck steps run on segments");
    if (st.row_cache && st.kind != StepKind::kFusedBottleneck)
      Err(where + ": row_cache is set, but only a fused-bottleneck step has the row-cache kernel");
    if (st.kind == StepKind::kOp && bottleneck)
      Err(where + " runs a fused inverted bottleneck (" + types +
          "), which only the segment-aware kernel runs: its kind must be 'fused-bottleneck'");
    if (st.kind == StepKind::kFusedBottleneck && !bottleneck)
      Err(where + " must run Conv, DepthwiseConv, Conv [, Add], but runs " + types);
    if (st.kind == StepKind::kInPlaceDepthwise && !(one && ops[0].type == "DepthwiseConv"))
      Err(where + " must run one DepthwiseConv, but runs " + types);
    if (IsSegmentKind(st.kind))
      for (const StepOp& op : ops) {
        if (!IsConvType(op.type)) continue;
        int64_t taps = 1;
        for (int64_t k : Attr(op, "kernel_shape", {})) taps = k > 0 && taps <= kInt32Max / k ? taps * k : kInt32Max;
        // The segment-aware kernels hold one window's taps on the stack (SP_SEG_MAX_TAPS in
        // runtime/include/sramplan_rt_seg.h).
        if (taps > kMaxSegmentTaps)
          Err(where + ": op '" + op.name + "' has a window of " + Str(taps) + " taps; the segment-aware kernels take at most " +
              Str(kMaxSegmentTaps) + ", so it must run as a plain step");
      }
    if (st.kind == StepKind::kSegment) {
      const bool op_ok = one && (IsConvType(ops[0].type) || ops[0].type == "Gemm" || ops[0].type == "MatMul");
      bool declared = false;
      for (const Buffer* b : one && !ops[0].outputs.empty() ? BuffersOf(ops[0].outputs[0])
                                                            : std::vector<const Buffer*>{})
        for (const Overlap& o : b->overlaps) declared = declared || o.reason == "segment-overlap";
      if (!op_ok)
        Err(where + " must run one Conv, DepthwiseConv, Gemm or MatMul, but runs " + types);
      else if (!declared)
        Err(where + ": its output '" + ops[0].outputs[0] +
            "' declares no segment-overlap with its input; a plain op is kind 'op'");
    }
    const bool needs_ws = IsSegmentKind(st.kind) || st.kind == StepKind::kInPlaceDepthwise;
    if (needs_ws && st.workspace.empty())
      Err(where + " names no workspace (params.workspace): " +
          (st.kind == StepKind::kInPlaceDepthwise
               ? "the in-place depthwise convolution computes each channel in a scratch buffer"
               : "the segment-aware kernels keep part of the output in a workspace buffer"));
    else if (!st.workspace.empty() && FindTensor(st.workspace) && FindTensor(st.workspace)->kind != "scratch")
      Err(where + ": its workspace '" + st.workspace + "' is a tensor of kind '" +
          FindTensor(st.workspace)->kind + "', not a scratch buffer");
    else if (needs_ws && !LiveWorkspace(s))
      Err(where + ": its workspace '" + st.workspace + "' has no on-chip buffer live at step " + Str(s));
    else if (!st.workspace.empty() && BuffersOf(st.workspace).empty())
      Err(where + ": its workspace '" + st.workspace + "' has no buffer");
  }
}

// Declared overlaps: legal only as the in-place rules allow, or (segment-overlap) when the step's
// access order, recomputed here, allows the declared distance.
void Checker::CheckDeclaredOverlaps() {
  std::unordered_map<std::string, const Buffer*> first_buffer;
  for (size_t i = 0; i < p_.buffers.size(); ++i)
    if (sound_[i]) first_buffer.emplace(p_.buffers[i].tensor, &p_.buffers[i]);
  for (size_t i = 0; i < p_.buffers.size(); ++i) {
    if (!sound_[i]) continue;
    const Buffer& b = p_.buffers[i];
    for (const auto& o : b.overlaps) {
      const std::string what = "declared overlap of '" + b.tensor + "' with '" + o.tensor + "'";
      auto ob = first_buffer.find(o.tensor);
      if (ob == first_buffer.end()) {
        Err(what + ": no buffer for '" + o.tensor + "'");
        continue;
      }
      const Buffer& a = *ob->second;
      if (o.reason == "segment-overlap") {
        // In a circular pool the output sits (in - out) mod pool bytes below the input.
        int64_t diff = b.offset - a.offset;
        if (const Pool* pool = FindPool(p_, b.level);
            pool && pool->bytes > 0 && a.level == b.level)
          diff = -((((a.offset - b.offset) % pool->bytes) + pool->bytes) % pool->bytes);
        std::string why = o.shift != diff ? "declared shift " + Str(o.shift) +
                                                " is not the offsets' difference " + Str(diff)
                                          : SegmentOverlapProblem(a, b);
        if (why.empty()) why = WorkspaceProblem(b);
        if (!why.empty()) {
          Err(what + ": " + why);
          continue;
        }
        allowed_.insert({b.tensor, o.tensor});
        allowed_.insert({o.tensor, b.tensor});
        continue;
      }
      if (o.reason != "inplace-elementwise" && o.reason != "inplace-depthwise") {
        Err(what + ": unknown reason '" + o.reason + "'");
        continue;
      }
      const int s = b.first_step;
      if (o.reason == "inplace-depthwise" && s < n_ && p_.steps[s].kind != StepKind::kInPlaceDepthwise) {
        Err(what + ": step " + Str(s) + " is of kind '" + StepKindName(p_.steps[s].kind) +
            "'; an in-place depthwise convolution is a step of kind 'inplace-depthwise'");
        continue;
      }
      if (a.last_step != s || a.level != b.level) {
        Err(what + ": in-place needs '" + o.tensor + "' to die at step " + Str(s) + " where '" +
            b.tensor + "' is born (it dies at " + Str(a.last_step) + ")");
        continue;
      }
      if (o.shift != 0 || b.offset != a.offset || b.bytes > a.bytes) {
        Err(what + ": in-place output must sit at the input's offset and be no larger");
        continue;
      }
      bool legal = false;
      for (const auto& op : s < n_ ? p_.steps[s].ops : std::vector<StepOp>{}) {
        const bool writes =
            std::find(op.outputs.begin(), op.outputs.end(), b.tensor) != op.outputs.end();
        bool reads = false;
        for (const auto& in : op.inputs) reads = reads || RootOf(in) == o.tensor;
        const bool kind_ok = o.reason == "inplace-depthwise"
                                 ? op.type == "DepthwiseConv"
                                 : ElementwiseTypes().count(op.type) > 0;
        legal = legal || (writes && reads && kind_ok);
      }
      if (!legal) {
        Err(what + ": step " + Str(s) + " has no " +
            (o.reason == "inplace-depthwise" ? "depthwise convolution" : "element-wise op") +
            " that reads '" + o.tensor + "' and writes '" + b.tensor + "'");
        continue;
      }
      allowed_.insert({b.tensor, o.tensor});
      allowed_.insert({o.tensor, b.tensor});
    }
  }
}

// vMCU segment overlap: output buffer `out` starts below input buffer `in` of the same step. The
// distance in bytes must cover the step's access order, recomputed here (no code shared with the
// planner's ISL analysis): the kernel runs steps j in order, each reading its input bytes before
// writing its output bytes, so for every j < i the last byte j writes must lie below the first
// byte i reads:  off(in) - off(out) >= max_{j<i} (last_write(j) - first_read(i)) + 1.
//   - Conv / DepthwiseConv (NHWC, batch 1): steps = output pixels in row-major order; a step
//   reads
//     the input pixels of its window inside the image and writes its output pixel.
//   - a fused group Conv (1x1, or any kernel/stride/padding: a stem) -> DepthwiseConv -> Conv 1x1
//     [-> Add of the group input]: the same, with the depthwise window mapped through the
//     expansion (a 1x1 stride-1 expansion keeps pixel positions) and the residual pixel.
//   - Gemm / MatMul [M, K] x -> [M, N]: steps (m, chunk) with chunks of the step's segment_bytes
//   output
//     bytes; every step of row m reads all of input row m.
// Returns "" when the distance is safe, else why not. Runs only on geometry CheckGeometry
// accepted, in O(1) per step, and refuses steps with more than kMaxSegmentSteps steps.
std::string Checker::SegmentOverlapProblem(const Buffer& in, const Buffer& out) const {
  const int s = out.first_step;
  if (in.level != out.level) return "the two buffers are in different levels";
  if (in.last_step != s)
    return "the input must die at the step that writes the output (step " + Str(s) + ")";
  if (s >= n_) return "no such step";
  if (!geometry_ok_[s]) return "the geometry of step " + Str(s) + " is invalid (see above)";
  const auto& ops = p_.steps[s].ops;
  const std::string& xin = in.tensor;
  auto shape = [&](const std::string& name) -> std::vector<int64_t> {
    const std::vector<int64_t>* v = GoodShape(name);
    return v ? *v : std::vector<int64_t>{};
  };
  auto out0 = [](const StepOp& op) { return op.outputs.empty() ? std::string() : op.outputs[0]; };
  auto in0 = [](const StepOp& op) { return op.inputs.empty() ? std::string() : op.inputs[0]; };
  // Describe the access pattern.
  std::vector<int64_t> x, y;
  const StepOp* window_op = nullptr;
  const StepOp* expand_op =
      nullptr;  // fused group: its expansion (any Conv; the window runs on its output)
  std::vector<int64_t> mid;
  bool residual = false;
  bool fc = false;
  int64_t chunk = 0;
  const StepKind kind = p_.steps[s].kind;
  if (kind == StepKind::kSegment && ops.size() == 1) {
    const StepOp& op = ops[0];
    if (in0(op) != xin || out0(op) != out.tensor)
      return "step " + Str(s) + " does not read the input and write the output directly";
    if (IsConvType(op.type)) {
      window_op = &op;
    } else if (op.type == "Gemm" || op.type == "MatMul") {
      fc = true;
      chunk = p_.steps[s].segment_bytes;
    } else {
      return "op type '" + op.type + "' has no segment-level access model";
    }
    x = shape(op.inputs[0]);
    y = shape(op.outputs[0]);
  } else if (kind == StepKind::kFusedBottleneck && (ops.size() == 3 || ops.size() == 4)) {
    if (ops[0].type != "Conv" || ops[1].type != "DepthwiseConv" || ops[2].type != "Conv" ||
        in0(ops[0]) != xin || out0(ops[0]).empty() || in0(ops[1]) != out0(ops[0]) ||
        in0(ops[2]) != out0(ops[1]) ||
        Attr(ops[2], "kernel_shape", {}) != std::vector<int64_t>{1, 1} ||
        Attr(ops[2], "strides", {1, 1}) != std::vector<int64_t>{1, 1} ||
        Attr(ops[2], "pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0} ||
        Attr(ops[2], "dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
        Attr(ops[0], "group", {1}) != std::vector<int64_t>{1})
      return "step " + Str(s) + " is not a fused inverted bottleneck reading '" + xin + "'";
    window_op = &ops[1];
    expand_op = &ops[0];
    mid = shape(out0(ops[0]));
    if (ops.size() == 4) {
      const auto& add_in = ops[3].inputs;
      if (ops[3].type != "Add" || out0(ops[3]) != out.tensor || add_in.size() != 2 ||
          std::find(add_in.begin(), add_in.end(), xin) == add_in.end() ||
          std::find(add_in.begin(), add_in.end(), out0(ops[2])) == add_in.end())
        return "the fourth op of the fused group must add the group input and write the output";
      residual = true;
    } else if (out0(ops[2]) != out.tensor) {
      return "the fused group does not write '" + out.tensor + "'";
    }
    x = shape(xin);
    y = shape(out.tensor);
  } else {
    return "step " + Str(s) + " (kind '" + StepKindName(kind) +
           "') is not a segment step; only segment and fused-bottleneck steps may declare a segment-overlap";
  }
  for (const auto* v : {&x, &y, &mid})
    for (int64_t d : *v)
      if (d > kInt32Max)
        return "a tensor dimension of the step exceeds the segment kernels' 32-bit range";
  int64_t need = 0;
  int64_t max_write = -1;  // the last byte written by the steps run so far
  auto step = [&](int64_t first_read, int64_t last_write) {
    if (max_write >= 0 && first_read != kInt64Max)
      need = std::max(need, max_write - first_read + 1);
    max_write = std::max(max_write, last_write);
  };
  if (window_op) {
    if (x.size() != 4 || y.size() != 4 || x[0] != 1 || y[0] != 1 || !nhwc_ops_.count(window_op))
      return "segment overlap needs NHWC batch-1 tensors";
    const auto k = Attr(*window_op, "kernel_shape", {1, 1});
    const auto st = Attr(*window_op, "strides", {1, 1});
    const auto pads = Attr(*window_op, "pads", {0, 0, 0, 0});
    if (k.size() != 2 || st.size() != 2 || pads.size() != 4 ||
        Attr(*window_op, "dilations", {1, 1}) != std::vector<int64_t>{1, 1})
      return "unsupported convolution geometry";
    const int64_t H = x[1], W = x[2], C = x[3], P = y[1], Q = y[2], K = y[3];
    auto pixels = CheckedMul(P, Q);
    if (!pixels || *pixels > kMaxSegmentSteps)
      return "the output has more than " + Str(kMaxSegmentSteps) +
             " pixels; the verifier cannot re-check the overlap";
    // The expansion of a fused group maps input pixels to the plane the window runs on (identity
    // for a 1x1 stride-1 expansion): plane pixel (h, w) reads input rows h*es0 - ep0 + [0, ek0)
    // and columns w*es1 - ep1 + [0, ek1), clipped to the image.
    std::vector<int64_t> ek{1, 1}, es{1, 1}, ep{0, 0, 0, 0};
    int64_t MH = H, MW = W;
    if (expand_op) {
      ek = Attr(*expand_op, "kernel_shape", {1, 1});
      es = Attr(*expand_op, "strides", {1, 1});
      ep = Attr(*expand_op, "pads", {0, 0, 0, 0});
      if (ek.size() != 2 || es.size() != 2 || ep.size() != 4 ||
          Attr(*expand_op, "dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
          mid.size() != 4 || !nhwc_ops_.count(expand_op))
        return "unsupported expansion geometry";
      MH = mid[1];
      MW = mid[2];
      if (residual && (ek != std::vector<int64_t>{1, 1} || es != std::vector<int64_t>{1, 1}))
        return "a fused group with a residual add needs a 1x1 stride-1 expansion";
    }
    // Every value here is below 2^31 (dimensions) or 2^20 (geometry), and H*W*C, P*Q*K are the
    // element counts of tensors whose bytes CheckTensors bounded, so no product overflows.
    for (int64_t pp = 0; pp < P; ++pp) {
      const int64_t h0 = FirstInputTap(pp * st[0] - pads[0], k[0], MH, es[0], ep[0], ek[0], H);
      for (int64_t q = 0; q < Q; ++q) {
        const int64_t w0 = FirstInputTap(q * st[1] - pads[1], k[1], MW, es[1], ep[1], ek[1], W);
        int64_t lo = h0 >= 0 && w0 >= 0 ? (h0 * W + w0) * C : kInt64Max;
        if (residual && pp < H && q < W) lo = std::min(lo, (pp * W + q) * C);
        step(lo, (pp * Q + q + 1) * K - 1);
      }
    }
  } else if (fc) {
    if (x.size() != 2 || y.size() != 2 || chunk <= 0 || x[0] != y[0])
      return "fully connected overlap needs [M, K] -> [M, N] tensors and segment_bytes";
    const int64_t M = x[0], Kx = x[1], N = y[1];
    auto steps = CheckedMul(M, CeilDiv(N, chunk));
    if (!steps || *steps > kMaxSegmentSteps)
      return "the output has more than " + Str(kMaxSegmentSteps) +
             " chunks; the verifier cannot re-check the overlap";
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c0 = 0; c0 < N; c0 += chunk) step(m * Kx, m * N + std::min(c0 + chunk, N) - 1);
  }
  int64_t have = in.offset - out.offset;
  if (const Pool* pool = FindPool(p_, in.level); pool && pool->bytes > 0) {
    // Modulo the pool; the kernels also need the output's head not to wrap onto the input's tail.
    have = ((have % pool->bytes) + pool->bytes) % pool->bytes;
    if (have + in.bytes > pool->bytes || out.bytes > pool->bytes)
      return "in the circular pool of " + Str(pool->bytes) + " bytes the output starts " +
             Str(have) + " bytes below the input, so the " + Str(in.bytes) +
             "-byte input would wrap onto the output's head";
  }
  if (have < need)
    return "the output starts " + Str(have) +
           " bytes below the input, but the step's access order needs " + Str(need);
  return "";
}

// A step whose output overlaps its input runs the segment kernels, which keep part of the output
// in a private workspace until the input bytes under it are read: the plan must give the step an
// on-chip workspace buffer (params.workspace; the executor and the generated firmware use it).
std::string Checker::WorkspaceProblem(const Buffer& out) const {
  const int s = out.first_step;
  if (s >= n_ || p_.steps[s].ops.empty()) return "no such step";
  const std::string& ws = p_.steps[s].workspace;
  if (LiveWorkspace(s)) return CheckSegmentWorkspace(p_, tensors_, s);  // and large enough for the kernel
  return "step " + Str(s) +
         " runs the segment kernels, which need a workspace, but " +
         (ws.empty() ? std::string("the step names none (params.workspace)")
                     : "no on-chip buffer of '" + ws + "' is live at that step");
}

// ---- the workspace of a segment step ------------------------------------------------------------
// Re-derived from the segment kernels' contract (runtime/include/sramplan_rt_seg.h), sharing no
// code with the planner: a step that runs the segment-aware kernels (a fused group, or a single op
// whose output declares a "segment-overlap") needs a workspace buffer (params.workspace) live at the step
// of at least: Conv C_out, or min(C_in, C_out) for 1x1 without padding; DepthwiseConv C; Gemm /
// MatMul the output chunk (segment_bytes, 0 = min(K, N), at most N); fused group
// (R*S + 1) * C_mid, or (R*MW + 1) * C_mid with the row cache, + C_out with the residual Add,
// + the kernel's scratch (BottleneckScratch). Returns "" when the plan gives it one.
// The fused kernel's scratch after its caches (runtime/include/sramplan_rt_seg.h): 3 bytes of
// alignment and 8 bytes per depthwise tap, then the expansion's columns: a Conv expansion whose
// window K_h*K_w*C_in is at most 64 bytes gathers two windows; a 1x1 stride-1 expansion under the
// column cache with R >= 4 and C_in a multiple of 4 (at most 32) copies min(R, 128 / C_in) pixels.
// -1 when the expansion's shapes are unknown.
namespace {
int64_t BottleneckScratch(const StepOp& expand, const std::vector<int64_t>& x, const std::vector<int64_t>& k,
                          bool rows) {
  auto attr = [&](const char* key) {
    auto it = expand.attrs.find(key);
    return it == expand.attrs.end() || it->second.empty() ? std::vector<int64_t>{1, 1} : it->second;
  };
  const std::vector<int64_t> ke = attr("kernel_shape"), st = attr("strides");
  if (x.size() != 4 || ke.size() != 2 || st.size() != 2 || x[3] < 1 || ke[0] < 1 || ke[1] < 1 ||
      k[0] * k[1] > 64 || ke[0] * ke[1] > 64)
    return -1;
  const int64_t cin = x[3], taps = 3 + 8 * k[0] * k[1];
  if (ke[0] != 1 || ke[1] != 1 || st[0] != 1 || st[1] != 1) {
    const int64_t window = ke[0] * ke[1] * cin;
    return taps + (window <= 64 ? 2 * window : 0);
  }
  if (!rows && cin % 4 == 0 && k[0] >= 4 && 4 * cin <= 128) return taps + std::min(k[0], 128 / cin) * cin;
  return taps;
}
}  // namespace

std::string CheckSegmentWorkspace(const Plan& p, const std::unordered_map<std::string, const Tensor*>& tensors, int s) {
  const auto& ops = p.steps[s].ops;
  auto shape = [&](const std::vector<std::string>& names, size_t i) -> std::vector<int64_t> {
    if (i >= names.size()) return {};
    auto t = tensors.find(names[i]);
    return t == tensors.end() ? std::vector<int64_t>{} : t->second->shape;
  };
  auto attr = [](const StepOp& op, const char* k, std::vector<int64_t> d) {
    auto it = op.attrs.find(k);
    return it == op.attrs.end() || it->second.empty() ? d : it->second;
  };
  auto positive = [](const std::vector<int64_t>& v, size_t rank) {
    if (v.size() != rank) return false;
    for (int64_t d : v)
      if (d < 1 || d > (int64_t{1} << 30)) return false;
    return true;
  };
  int64_t need = -1;
  if (ops.size() == 1) {
    const StepOp& op = ops[0];
    const auto x = shape(op.inputs, 0), y = shape(op.outputs, 0);
    if (op.type == "Conv" && positive(x, 4) && positive(y, 4)) {
      const auto pads = attr(op, "pads", {0, 0, 0, 0});
      const bool pointwise = attr(op, "kernel_shape", {1, 1}) == std::vector<int64_t>{1, 1} &&
                             std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
      need = pointwise ? std::min(x[3], y[3]) : y[3];
    } else if (op.type == "DepthwiseConv" && positive(y, 4)) {
      need = y[3];
    } else if ((op.type == "Gemm" || op.type == "MatMul") && positive(x, 2) && positive(y, 2)) {
      int64_t chunk = p.steps[s].segment_bytes;
      if (chunk == 0) chunk = std::min(x[1], y[1]);
      need = chunk < 0 ? -1 : std::min(chunk, y[1]);
    }
  } else if (ops.size() == 3 || ops.size() == 4) {
    const auto mid = shape(ops[0].outputs, 0), y = shape(ops.back().outputs, 0);
    const auto k = attr(ops[1], "kernel_shape", {1, 1});
    const bool rows = p.steps[s].row_cache;
    if (positive(mid, 4) && positive(y, 4) && positive(k, 2)) {
      // Dimensions are at most 2^30 each, so the products fit in 128 bits; larger needs are refused.
      const __int128 slots = (rows ? __int128{k[0]} * mid[2] : __int128{k[0]} * k[1]) + 1;
      const __int128 bytes = slots * mid[3] + (ops.size() == 4 ? y[3] : 0);
      const int64_t scratch = BottleneckScratch(ops[0], shape(ops[0].inputs, 0), k, rows);
      need = bytes > (__int128{1} << 62) || scratch < 0 ? -1 : static_cast<int64_t>(bytes) + scratch;
    }
  }
  if (need < 1) return "cannot tell the workspace its segment-aware kernel needs (unsupported op or tensor shapes)";
  const std::string& name = p.steps[s].workspace;
  for (const auto& b : p.buffers)
    if (b.tensor == name && b.first_step <= s && s <= b.last_step) {
      if (b.bytes >= need) return "";
      return "its workspace '" + name + "' has " + std::to_string(b.bytes) + " bytes but the segment-aware kernel needs " +
             std::to_string(need);
    }
  return "it runs the segment-aware kernels but the plan gives it no '" + name + "' buffer (the kernel needs " +
         std::to_string(need) + " bytes of workspace)";
}

}  // namespace sramplan::plan::verifier_internal
