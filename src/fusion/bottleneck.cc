#include "fusion/bottleneck.h"

#include <algorithm>

#include "ir/op_geometry.h"
#include "sramplan_rt_seg.h"

namespace sramplan::fusion {
namespace {

// A Conv's geometry attribute as the segment kernels take it (2-D: kernel_shape, strides, pads as
// top, left, bottom, right, dilations), from ir::ParseConvGeometry: defaults applied, and the
// kernel taken from the weight when the op has no kernel_shape. `d` when the op is not a Conv whose
// geometry parses (VerifyGraph makes every Conv parse).
std::vector<int64_t> Ints(const ir::Graph& g, const ir::Op& op, const std::string& name, std::vector<int64_t> d) {
  if (op.type == "Conv") {
    auto cg = ir::ParseConvGeometry(g, op);
    if (cg.ok()) {
      if (name == "kernel_shape") return cg->kernel;
      if (name == "strides") return cg->strides;
      if (name == "pads") return cg->pads;
      if (name == "dilations") return cg->dilations;
    }
  }
  auto v = op.attrs.GetInts(name);
  return v.empty() ? d : v;
}

int64_t Group(const ir::Graph& g, const ir::Op& op) {
  auto cg = ir::ParseConvGeometry(g, op);
  return cg.ok() ? cg->group : op.attrs.GetInt("group", 1);
}

bool IsPointwise(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Conv" || Group(g, op) != 1) return false;
  auto k = Ints(g, op, "kernel_shape", {});
  auto st = Ints(g, op, "strides", {1, 1});
  auto pads = Ints(g, op, "pads", {0, 0, 0, 0});
  bool zero_pads = std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
  // Dilation does not change a 1x1 kernel, but the verifier recognises fused groups only with
  // dilations 1 (found by fuzzing: a dilated 1x1 projection was fused and its plan rejected).
  return k == std::vector<int64_t>{1, 1} && st == std::vector<int64_t>{1, 1} && zero_pads &&
         Ints(g, op, "dilations", {1, 1}) == std::vector<int64_t>{1, 1} &&
         g.tensor(op.inputs[0]).shape.size() == 4;
}

// An expansion the fused bottleneck kernel can run: a pointwise conv, or any Conv2D (groups 1,
// dilation 1, equal strides, padding smaller than the kernel) such as a network's stem.
bool IsExpansion(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Conv" || Group(g, op) != 1 ||
      g.tensor(op.inputs[0]).shape.size() != 4)
    return false;
  auto k = Ints(g, op, "kernel_shape", {});
  auto st = Ints(g, op, "strides", {1, 1});
  auto pads = Ints(g, op, "pads", {0, 0, 0, 0});
  auto dil = Ints(g, op, "dilations", {1, 1});
  if (k.size() != 2 || st.size() != 2 || pads.size() != 4 || st[0] != st[1] || st[0] < 1 ||
      dil != std::vector<int64_t>{1, 1})
    return false;
  return pads[0] >= 0 && pads[1] >= 0 && pads[2] >= 0 && pads[3] >= 0 && pads[0] < k[0] &&
         pads[2] < k[0] && pads[1] < k[1] && pads[3] < k[1];
}

bool SingleConsumer(const ir::Graph& g, ir::TensorId t) {
  return g.tensor(t).consumers.size() == 1 && g.tensor(t).kind == ir::TensorKind::kActivation;
}

bool Fits32(std::initializer_list<int64_t> v) {
  for (int64_t x : v)
    if (x < 0 || x > (int64_t{1} << 30)) return false;
  return true;
}

// The runtime's workspace rule for a single Conv (group 1 or depthwise) in NHWC; 0 if out of range.
int64_t ConvWorkspace(const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                      const std::vector<int64_t>& k, const std::vector<int64_t>& st,
                      const std::vector<int64_t>& pads, bool depthwise) {
  if (!Fits32(
          {x[1], x[2], x[3], y[3], k[0], k[1], st[0], st[1], pads[0], pads[1], pads[2], pads[3]}))
    return 0;
  // The segment kernels keep one window's taps on the stack: at most SP_SEG_MAX_TAPS (an AlexNet
  // 11x11 stem has 121 and runs as a plain op).
  if (k[0] * k[1] > SP_SEG_MAX_TAPS) return 0;
  sp_seg_conv_shape_t cs{static_cast<int32_t>(x[1]),
                         static_cast<int32_t>(x[2]),
                         static_cast<int32_t>(x[3]),
                         static_cast<int32_t>(y[3]),
                         static_cast<int32_t>(k[0]),
                         static_cast<int32_t>(k[1]),
                         static_cast<int32_t>(st[0]),
                         static_cast<int32_t>(st[1]),
                         static_cast<int32_t>(pads[0]),
                         static_cast<int32_t>(pads[1]),
                         static_cast<int32_t>(pads[2]),
                         static_cast<int32_t>(pads[3]),
                         1,
                         1};
  return depthwise ? sp_seg_depthwise_workspace_bytes(&cs) : sp_seg_conv_workspace_bytes(&cs);
}


// Kernel of a single Conv (NHWC, dilation 1) or FC at segment granularity; false if unsupported.
bool SingleOpKernel(const ir::Graph& g, const ir::Op& op, int64_t seg, StepInfo* si) {
  if (g.layout != ir::Layout::kNHWC) return false;
  if (op.type == "Conv") {
    const auto& x = g.tensor(op.inputs[0]).shape;
    const auto& y = g.tensor(op.outputs[0]).shape;
    if (x.size() != 4 || y.size() != 4 || x[0] != 1) return false;
    const int64_t group = Group(g, op);
    auto k = Ints(g, op, "kernel_shape", {1, 1});
    auto st = Ints(g, op, "strides", {1, 1});
    auto pads = Ints(g, op, "pads", {0, 0, 0, 0});
    auto dil = Ints(g, op, "dilations", {1, 1});
    if (k.size() != 2 || st.size() != 2 || pads.size() != 4 || dil != std::vector<int64_t>{1, 1})
      return false;
    StatusOr<segment::AffineKernel> kern = InvalidArgument("");
    if (group == 1 && k == std::vector<int64_t>{1, 1} && st == std::vector<int64_t>{1, 1} &&
        pads == std::vector<int64_t>{0, 0, 0, 0}) {
      kern = segment::PointwiseConvKernel(x[1], x[2], x[3], y[3], seg);
      si->workspace =
          ConvWorkspace(x, y, k, st, pads, false);  // one pixel (input or output) buffered
    } else if (group == 1 || (group == x[3] && y[3] == x[3])) {
      const segment::Conv2DParams cp{.h = x[1], .w = x[2], .c_in = x[3], .c_out = y[3], .r = k[0], .s = k[1],
                                     .stride_h = st[0], .stride_w = st[1], .pad_top = pads[0], .pad_left = pads[1],
                                     .pad_bottom = pads[2], .pad_right = pads[3], .segment_bytes = seg};
      const bool square = k[0] == k[1] && st[0] == st[1] && pads[0] == pads[1] && pads[0] == pads[2] &&
                          pads[0] == pads[3];
      if (group == 1) {
        kern = segment::Conv2DKernel(cp);
      } else if (square) {
        kern = segment::DepthwiseConvKernel(x[1], x[2], x[3], k[0], k[1], st[0], pads[0], seg);
      } else {  // e.g. TFLite's SAME at stride 2: padding at the bottom and right only
        kern = segment::Conv2DKernel(cp);
        if (kern.ok())
          kern->name = "depthwise_" + std::to_string(k[0]) + "x" + std::to_string(k[1]) + "_s" +
                       std::to_string(st[0]) + "x" + std::to_string(st[1]) + "_p" + std::to_string(pads[0]) +
                       std::to_string(pads[1]) + std::to_string(pads[2]) + std::to_string(pads[3]);
      }
      si->workspace = ConvWorkspace(x, y, k, st, pads, group != 1);  // one output pixel buffered
    } else {
      return false;
    }
    if (!kern.ok() || si->workspace <= 0) return false;
    si->kernel = *kern;
    si->kind = "conv";
    return true;
  }
  if (op.type == "Gemm" || op.type == "MatMul") {
    const auto& x = g.tensor(op.inputs[0]).shape;
    const auto& y = g.tensor(op.outputs[0]).shape;
    if (x.size() != 2 || y.size() != 2 || op.attrs.GetInt("transA", 0) != 0) return false;
    auto kern = segment::FullyConnectedKernel(x[0], x[1], y[1], seg);
    if (!kern.ok() || !Fits32({x[0], x[1], y[1], kern->segment_bytes})) return false;
    si->kernel = *kern;
    si->kind = "fc";
    // One output chunk accumulated before it is stored.
    const sp_seg_fc_shape_t fs{static_cast<int32_t>(x[0]), static_cast<int32_t>(x[1]),
                               static_cast<int32_t>(y[1]),
                               static_cast<int32_t>(kern->segment_bytes)};
    si->workspace = sp_seg_fc_workspace_bytes(&fs);
    return si->workspace > 0;
  }
  return false;
}

}  // namespace

namespace {

// The fused bottleneck starting at order[i] (expansion, depthwise, projection [, residual Add]),
// or a StepInfo without ops when the pattern does not start there or does not pay.
StepInfo TryFuse(const ir::Graph& g, const analysis::Schedule& order, int i, int64_t segment_bytes) {
  const int nops = static_cast<int>(order.size());
  const ir::Op& a = g.op(order[i]);
  StepInfo si;
  bool fused = false;
  if (g.layout == ir::Layout::kNHWC && i + 2 < nops && IsExpansion(g, a) &&
      SingleConsumer(g, a.outputs[0])) {
    const ir::Op& b = g.op(order[i + 1]);
    const ir::Op& c = g.op(order[i + 2]);
    if (ir::IsDepthwiseConv(g, b) && b.inputs[0] == a.outputs[0] &&
        SingleConsumer(g, b.outputs[0]) && IsPointwise(g, c) && c.inputs[0] == b.outputs[0]) {
      auto k = Ints(g, b, "kernel_shape", {1, 1});
      auto st = Ints(g, b, "strides", {1, 1});
      auto pads = Ints(g, b, "pads", {0, 0, 0, 0});
      const auto& x = g.tensor(a.inputs[0]).shape;
      const auto& mid = g.tensor(a.outputs[0]).shape;
      const auto& y = g.tensor(c.outputs[0]).shape;
      // Square odd kernels with equal strides; any padding below the kernel, so TFLite's SAME
      // at stride 2 (bottom/right only) and folded PADs fuse too.
      const bool window_ok =
          k.size() == 2 && k[0] == k[1] && k[0] % 2 == 1 && pads.size() == 4 &&
          std::all_of(pads.begin(), pads.end(), [&](int64_t v) { return v >= 0 && v < k[0]; }) &&
          st.size() == 2 && st[0] == st[1];
      if (window_ok && x.size() == 4 && x[0] == 1) {
        segment::BottleneckParams bp;
        bp.h = x[1];
        bp.w = x[2];
        bp.c_in = x[3];
        bp.c_mid = mid[3];
        bp.c_out = y[3];
        bp.r = bp.s = k[0];
        bp.stride2 = st[0];
        bp.pad_top = pads[0];
        bp.pad_left = pads[1];
        bp.pad_bottom = pads[2];
        bp.pad_right = pads[3];
        bp.residual = false;
        bp.segment_bytes = segment_bytes;
        {
          auto ek = Ints(g, a, "kernel_shape", {1, 1});
          auto ep = Ints(g, a, "pads", {0, 0, 0, 0});
          bp.stride1 = Ints(g, a, "strides", {1, 1})[0];
          bp.er = ek[0];
          bp.es = ek[1];
          bp.e_pad_top = ep[0];
          bp.e_pad_left = ep[1];
          bp.e_pad_bottom = ep[2];
          bp.e_pad_right = ep[3];
        }
        si.ops = {a.id, b.id, c.id};
        si.out = c.outputs[0];
        // The residual add, when it follows and adds the block input.
        if (i + 3 < nops && SingleConsumer(g, c.outputs[0])) {
          const ir::Op& d = g.op(order[i + 3]);
          if (d.type == "Add" && d.inputs.size() == 2 && st[0] == 1 && x[3] == y[3] &&
              IsPointwise(g, a) &&
              ((d.inputs[0] == a.inputs[0] && d.inputs[1] == c.outputs[0]) ||
               (d.inputs[1] == a.inputs[0] && d.inputs[0] == c.outputs[0])) &&
              g.tensor(d.outputs[0]).shape == y) {
            bp.residual = true;
            si.ops.push_back(d.id);
            si.out = d.outputs[0];
          }
        }
        auto kern = segment::InvertedBottleneckKernel(bp);
        // The workspace of sp_seg_bottleneck_s8 with the column cache and with the row cache.
        int64_t ws_column = 0, ws_rows = 0;
        if (Fits32({bp.h, bp.w, bp.c_in, bp.c_mid, bp.c_out, bp.r, bp.stride2, bp.stride1, bp.er,
                    bp.es, bp.e_pad_top, bp.e_pad_left, bp.e_pad_bottom, bp.e_pad_right, pads[0],
                    pads[1], pads[2], pads[3]})) {
          sp_seg_bottleneck_shape_t bs{};
          bs.h = static_cast<int32_t>(bp.h);
          bs.w = static_cast<int32_t>(bp.w);
          bs.c_in = static_cast<int32_t>(bp.c_in);
          bs.c_mid = static_cast<int32_t>(bp.c_mid);
          bs.c_out = static_cast<int32_t>(bp.c_out);
          bs.r = bs.s = static_cast<int32_t>(bp.r);
          bs.stride_h = bs.stride_w = static_cast<int32_t>(bp.stride2);
          bs.pad_top = static_cast<int32_t>(pads[0]);
          bs.pad_left = static_cast<int32_t>(pads[1]);
          bs.pad_bottom = static_cast<int32_t>(pads[2]);
          bs.pad_right = static_cast<int32_t>(pads[3]);
          bs.has_expand = 1;
          bs.has_residual = bp.residual ? 1 : 0;
          bs.e_r = static_cast<int32_t>(bp.er);
          bs.e_s = static_cast<int32_t>(bp.es);
          bs.e_stride_h = bs.e_stride_w = static_cast<int32_t>(bp.stride1);
          bs.e_pad_top = static_cast<int32_t>(bp.e_pad_top);
          bs.e_pad_left = static_cast<int32_t>(bp.e_pad_left);
          bs.e_pad_bottom = static_cast<int32_t>(bp.e_pad_bottom);
          bs.e_pad_right = static_cast<int32_t>(bp.e_pad_right);
          ws_column = sp_seg_bottleneck_workspace_bytes(&bs);
          bs.row_cache = 1;
          ws_rows = sp_seg_bottleneck_workspace_bytes(&bs);
        }
        // Fuse only when the workspace is smaller than the wide intermediate it replaces (a 7x7
        // window over 480 channels on a 6x6 image is not).
        if (kern.ok() && ws_column > 0 && ws_column < g.tensor(a.outputs[0]).Bytes()) {
          si.kernel = *kern;
          si.kind = "bottleneck";
          si.in = a.inputs[0];
          si.workspace = ws_column;
          si.workspace_rows = ws_rows;  // 0: the row cache does not apply
          fused = true;
        }
      }
    }
  }
  if (!fused) si = StepInfo{};
  return si;
}

StepInfo SingleStep(const ir::Graph& g, const ir::Op& a, int64_t segment_bytes) {
  StepInfo si;
  si.ops = {a.id};
  if (!a.outputs.empty()) si.out = a.outputs[0];
  if (!a.inputs.empty() && SingleOpKernel(g, a, segment_bytes, &si)) si.in = a.inputs[0];
  return si;
}

}  // namespace

std::vector<StepInfo> FuseBottlenecks(const ir::Graph& g, const analysis::Schedule& order,
                                      int64_t segment_bytes) {
  const int nops = static_cast<int>(order.size());
  std::vector<StepInfo> fused(nops);
  for (int i = 0; i < nops; ++i) fused[i] = TryFuse(g, order, i, segment_bytes);
  // Where matches overlap (MobileNet-V1's conv, dw, pw, dw, pw, ...: the stem + dw + pw, or
  // pw + dw + pw one op later), choose the grouping whose largest step is smallest. A step's bytes:
  // the activations (storage roots) live into it plus its outputs read after it; a fused group's
  // intermediates never exist. Ties keep the match (the greedy grouping, first match wins).
  std::vector<int> produced(g.num_tensors(), -1), last_use(g.num_tensors(), -1);
  for (int i = 0; i < nops; ++i) {
    const ir::Op& op = g.op(order[i]);
    for (ir::TensorId t : op.outputs)
      if (g.StorageRoot(t) == t) produced[t.value()] = i;
    for (ir::TensorId t : op.inputs) {
      const int r = g.StorageRoot(t).value();
      last_use[r] = std::max(last_use[r], i);
    }
  }
  for (const ir::Tensor& t : g.tensors())
    if (t.kind == ir::TensorKind::kOutput) last_use[g.StorageRoot(t.id).value()] = nops;
  auto step_bytes = [&](int i, int j) {  // ops [i, j)
    int64_t bytes = 0;
    for (const ir::Tensor& t : g.tensors()) {
      const int id = t.id.value();
      if (t.kind == ir::TensorKind::kConstant || g.StorageRoot(t.id) != t.id || last_use[id] < i) continue;
      if (produced[id] < i || (produced[id] < j && last_use[id] >= j)) bytes += t.Bytes();
    }
    return bytes;
  };
  std::vector<int64_t> best(nops + 1, 0);
  std::vector<bool> take(nops, false);
  for (int i = nops - 1; i >= 0; --i) {
    best[i] = std::max(step_bytes(i, i + 1), best[i + 1]);
    const int len = static_cast<int>(fused[i].ops.size());
    if (len > 0 && i + len <= nops) {
      const int64_t f = std::max(step_bytes(i, i + len), best[i + len]);
      if (f <= best[i]) {
        best[i] = f;
        take[i] = true;
      }
    }
  }
  std::vector<StepInfo> steps;
  for (int i = 0; i < nops;) {
    StepInfo si = take[i] ? std::move(fused[i]) : SingleStep(g, g.op(order[i]), segment_bytes);
    i += static_cast<int>(si.ops.size());
    steps.push_back(std::move(si));
  }
  return steps;
}

}  // namespace sramplan::fusion
