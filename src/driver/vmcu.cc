// The vmcu strategy (vMCU, issue 5): segment-level overlap of an op's output with its own input,
// and fused inverted bottlenecks whose wide intermediates never exist in full.
//
// Pipeline: model order -> fused groups (expand -> dw -> pw project [-> + block input]; the expansion
// is a pointwise conv or any Conv2D, e.g. a stem fused with the first block) -> for
// each step whose single data input dies there, the minimal safe shift from the ISL analysis
// (segment/overlap.h) -> tensors that overlap chain into classes with fixed relative offsets (the
// output `shift` bytes below its input) -> classes placed as one request each with the exact
// placer -> plan with declared "segment-overlap" overlaps and a workspace buffer per fused group.
// Everything else (skip connections still live, branches, pools, adds) is placed whole.
//
// Classes are placed as one request spanning the class's life, which is conservative for long
// chains (the circular pool of segment/overlap.h avoids the drift; see bench/vmcu).
#include <algorithm>
#include <map>
#include <limits>
#include <numeric>

#include "driver/strategy.h"
#include "placement/optimal.h"
#include "segment/overlap.h"
#include "sramplan_rt_seg.h"
#include "support/int_math.h"

namespace sramplan::driver {
namespace {

bool IsPointwise(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Conv" || op.attrs.GetInt("group", 1) != 1) return false;
  auto k = op.attrs.GetInts("kernel_shape");
  auto st = op.attrs.GetInts("strides", {1, 1});
  auto pads = op.attrs.GetInts("pads", {0, 0, 0, 0});
  bool zero_pads = std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
  // Dilation does not change a 1x1 kernel, but the verifier recognises fused groups only with
  // dilations 1 (found by fuzzing: a dilated 1x1 projection was fused and its plan rejected).
  return k == std::vector<int64_t>{1, 1} && st == std::vector<int64_t>{1, 1} && zero_pads &&
         op.attrs.GetInts("dilations", {1, 1}) == std::vector<int64_t>{1, 1} &&
         g.tensor(op.inputs[0]).shape.size() == 4;
}

// An expansion the fused bottleneck kernel can run: a pointwise conv, or any Conv2D (groups 1,
// dilation 1, equal strides, padding smaller than the kernel) such as a network's stem.
bool IsExpansion(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Conv" || op.attrs.GetInt("group", 1) != 1 || g.tensor(op.inputs[0]).shape.size() != 4) return false;
  auto k = op.attrs.GetInts("kernel_shape");
  auto st = op.attrs.GetInts("strides", {1, 1});
  auto pads = op.attrs.GetInts("pads", {0, 0, 0, 0});
  auto dil = op.attrs.GetInts("dilations", {1, 1});
  if (k.size() != 2 || st.size() != 2 || pads.size() != 4 || st[0] != st[1] || st[0] < 1 ||
      dil != std::vector<int64_t>{1, 1})
    return false;
  return pads[0] >= 0 && pads[1] >= 0 && pads[2] >= 0 && pads[3] >= 0 && pads[0] < k[0] && pads[2] < k[0] &&
         pads[1] < k[1] && pads[3] < k[1];
}

bool SingleConsumer(const ir::Graph& g, ir::TensorId t) {
  return g.tensor(t).consumers.size() == 1 && g.tensor(t).kind == ir::TensorKind::kActivation;
}

// What one plan step computes, for the overlap analysis.
struct StepInfo {
  std::vector<ir::OpId> ops;
  ir::TensorId in;         // the data input that may be overwritten (invalid: none)
  ir::TensorId out;        // the step's output
  std::string kind;        // "bottleneck", "conv", "fc", "" (no overlap)
  segment::AffineKernel kernel;
  // Bytes of private scratch the segment kernel needs (bottleneck: with the column cache), and for a
  // bottleneck with the row cache (R rows of the plane). Both come from the runtime's
  // sp_seg_*_workspace_bytes, the kernels' own rule, and are properties of the step: a layout that
  // runs the step another way (in-place depthwise) keeps them.
  int64_t workspace = 0;
  int64_t workspace_rows = 0;
};

bool Fits32(std::initializer_list<int64_t> v) {
  for (int64_t x : v)
    if (x < 0 || x > (int64_t{1} << 30)) return false;
  return true;
}

// The runtime's workspace rule for a single Conv (group 1 or depthwise) in NHWC; 0 if out of range.
int64_t ConvWorkspace(const std::vector<int64_t>& x, const std::vector<int64_t>& y, const std::vector<int64_t>& k,
                      const std::vector<int64_t>& st, const std::vector<int64_t>& pads, bool depthwise) {
  if (!Fits32({x[1], x[2], x[3], y[3], k[0], k[1], st[0], st[1], pads[0], pads[1], pads[2], pads[3]})) return 0;
  sp_seg_conv_shape_t cs{static_cast<int32_t>(x[1]),    static_cast<int32_t>(x[2]),    static_cast<int32_t>(x[3]),
                         static_cast<int32_t>(y[3]),    static_cast<int32_t>(k[0]),    static_cast<int32_t>(k[1]),
                         static_cast<int32_t>(st[0]),   static_cast<int32_t>(st[1]),   static_cast<int32_t>(pads[0]),
                         static_cast<int32_t>(pads[1]), static_cast<int32_t>(pads[2]), static_cast<int32_t>(pads[3]),
                         1,
                         1};
  return depthwise ? sp_seg_depthwise_workspace_bytes(&cs) : sp_seg_conv_workspace_bytes(&cs);
}

std::vector<int64_t> Ints(const ir::Op& op, const char* name, std::vector<int64_t> d) {
  auto v = op.attrs.GetInts(name);
  return v.empty() ? d : v;
}

// Kernel of a single Conv (NHWC, dilation 1) or FC at segment granularity; false if unsupported.
bool SingleOpKernel(const ir::Graph& g, const ir::Op& op, int64_t seg, StepInfo* si) {
  if (g.layout != ir::Layout::kNHWC) return false;
  if (op.type == "Conv") {
    const auto& x = g.tensor(op.inputs[0]).shape;
    const auto& y = g.tensor(op.outputs[0]).shape;
    if (x.size() != 4 || y.size() != 4 || x[0] != 1) return false;
    const int64_t group = op.attrs.GetInt("group", 1);
    auto k = Ints(op, "kernel_shape", {1, 1});
    auto st = Ints(op, "strides", {1, 1});
    auto pads = Ints(op, "pads", {0, 0, 0, 0});
    auto dil = Ints(op, "dilations", {1, 1});
    if (k.size() != 2 || st.size() != 2 || pads.size() != 4 || dil != std::vector<int64_t>{1, 1}) return false;
    StatusOr<segment::AffineKernel> kern = InvalidArgument("");
    if (group == 1 && k == std::vector<int64_t>{1, 1} && st == std::vector<int64_t>{1, 1} && pads == std::vector<int64_t>{0, 0, 0, 0}) {
      kern = segment::PointwiseConvKernel(x[1], x[2], x[3], y[3], seg);
      si->workspace = ConvWorkspace(x, y, k, st, pads, false);  // one pixel (input or output) buffered
    } else if (group == 1 || (group == x[3] && y[3] == x[3])) {
      segment::Conv2DParams cp;
      cp.h = x[1];
      cp.w = x[2];
      cp.c_in = x[3];
      cp.c_out = y[3];
      cp.r = k[0];
      cp.s = k[1];
      cp.stride_h = st[0];
      cp.stride_w = st[1];
      cp.pad_top = pads[0];
      cp.pad_left = pads[1];
      cp.pad_bottom = pads[2];
      cp.pad_right = pads[3];
      cp.segment_bytes = seg;
      kern = group == 1 ? segment::Conv2DKernel(cp) : segment::DepthwiseConvKernel(x[1], x[2], x[3], k[0], k[1], st[0], pads[0], seg);
      if (group != 1 && (k[0] != k[1] || st[0] != st[1] || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3]))
        return false;
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
    const sp_seg_fc_shape_t fs{static_cast<int32_t>(x[0]), static_cast<int32_t>(x[1]), static_cast<int32_t>(y[1]),
                               static_cast<int32_t>(kern->segment_bytes)};
    si->workspace = sp_seg_fc_workspace_bytes(&fs);
    return si->workspace > 0;
  }
  return false;
}

}  // namespace

StatusOr<plan::Plan> RunVmcuStrategy(const ir::Graph& g, const target::Target& t, const PlanOptions& options) {
  if (options.segment_bytes < 0 || options.segment_bytes > (int64_t{1} << 24))
    return InvalidArgument("--segment-bytes " + std::to_string(options.segment_bytes) +
                           " is out of range; give 1 to 16777216 bytes, or 0 for the paper's rule");
  std::string schedule_note;
  SP_ASSIGN_OR_RETURN(analysis::Schedule sched, ChooseSchedule(g, options, &schedule_note));
  const int nops = static_cast<int>(sched.size());
  // 1. Steps: fused bottlenecks where the pattern appears consecutively in the order.
  std::vector<StepInfo> steps;
  for (int i = 0; i < nops;) {
    const ir::Op& a = g.op(sched[i]);
    StepInfo si;
    bool fused = false;
    if (g.layout == ir::Layout::kNHWC && i + 2 < nops && IsExpansion(g, a) && SingleConsumer(g, a.outputs[0])) {
      const ir::Op& b = g.op(sched[i + 1]);
      const ir::Op& c = g.op(sched[i + 2]);
      if (ir::IsDepthwiseConv(g, b) && b.inputs[0] == a.outputs[0] && SingleConsumer(g, b.outputs[0]) &&
          IsPointwise(g, c) && c.inputs[0] == b.outputs[0]) {
        auto k = Ints(b, "kernel_shape", {1, 1});
        auto st = Ints(b, "strides", {1, 1});
        auto pads = Ints(b, "pads", {0, 0, 0, 0});
        const auto& x = g.tensor(a.inputs[0]).shape;
        const auto& mid = g.tensor(a.outputs[0]).shape;
        const auto& y = g.tensor(c.outputs[0]).shape;
        const bool same_pad = k.size() == 2 && k[0] == k[1] && k[0] % 2 == 1 && pads.size() == 4 &&
                              std::all_of(pads.begin(), pads.end(), [&](int64_t v) { return v == (k[0] - 1) / 2; }) &&
                              st.size() == 2 && st[0] == st[1];
        if (same_pad && x.size() == 4 && x[0] == 1) {
          segment::BottleneckParams bp;
          bp.h = x[1];
          bp.w = x[2];
          bp.c_in = x[3];
          bp.c_mid = mid[3];
          bp.c_out = y[3];
          bp.r = bp.s = k[0];
          bp.stride2 = st[0];
          bp.residual = false;
          bp.segment_bytes = options.segment_bytes;
          {
            auto ek = Ints(a, "kernel_shape", {1, 1});
            auto ep = Ints(a, "pads", {0, 0, 0, 0});
            bp.stride1 = Ints(a, "strides", {1, 1})[0];
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
            const ir::Op& d = g.op(sched[i + 3]);
            if (d.type == "Add" && d.inputs.size() == 2 && st[0] == 1 && x[3] == y[3] && IsPointwise(g, a) &&
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
          if (Fits32({bp.h, bp.w, bp.c_in, bp.c_mid, bp.c_out, bp.r, bp.stride2, bp.stride1, bp.er, bp.es,
                      bp.e_pad_top, bp.e_pad_left, bp.e_pad_bottom, bp.e_pad_right, pads[0], pads[1], pads[2],
                      pads[3]})) {
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
    if (!fused) {
      si = StepInfo{};
      si.ops = {a.id};
      if (!a.outputs.empty()) si.out = a.outputs[0];
      if (!a.inputs.empty() && SingleOpKernel(g, a, options.segment_bytes, &si)) si.in = a.inputs[0];
    }
    i += static_cast<int>(si.ops.size());
    steps.push_back(std::move(si));
  }
  const int n = static_cast<int>(steps.size());
  // 2. Liveness per plan step (fused intermediates own no buffer).
  const analysis::Liveness lv = analysis::ComputeLiveness(g, sched);
  std::vector<int> step_of_op(g.num_ops(), 0);
  for (int s = 0; s < n; ++s)
    for (ir::OpId id : steps[s].ops) step_of_op[id.value()] = s;
  std::vector<int> plan_step(nops);
  for (int i = 0; i < nops; ++i) plan_step[i] = step_of_op[sched[i].value()];
  struct Buf {
    ir::TensorId tensor;
    int64_t bytes;
    int first, last;
  };
  std::vector<Buf> bufs;
  std::vector<int> buf_of(lv.buffers.size(), -1);
  for (size_t b = 0; b < lv.buffers.size(); ++b) {
    const auto& lb = lv.buffers[b];
    int first = plan_step[lb.first_step], last = plan_step[lb.last_step];
    const ir::Tensor& ten = g.tensor(lb.tensor);
    // Produced and consumed inside one fused step: lives in the group's workspace.
    if (first == last && steps[first].ops.size() > 1 && ten.kind == ir::TensorKind::kActivation &&
        ten.producer.valid() && step_of_op[ten.producer.value()] == first) {
      bool inside = true;
      for (ir::OpId c : ten.consumers) inside = inside && step_of_op[c.value()] == first;
      if (inside) continue;
    }
    buf_of[b] = static_cast<int>(bufs.size());
    bufs.push_back({lb.tensor, AlignUp(lb.bytes, std::max<int64_t>(t.alignment, 1)), first, last});
  }
  auto buffer_index = [&](ir::TensorId id) {
    int b = lv.buffer_of_tensor[id.value()];
    return b < 0 ? -1 : buf_of[b];
  };
  // 3. Overlap classes: tensors that overlap get fixed relative offsets (the output `shift` bytes
  // below its input). A long chain drifts downwards by the sum of its shifts, so chains are also
  // broken at steps that fit a target without their overlap (cap); the smallest arena wins.
  struct Declared {
    int out, in;
    int64_t shift_bytes;
    std::string reason = "segment-overlap";
  };
  struct Layout {
    std::vector<int> cls;
    std::vector<int64_t> rel;
    std::vector<Declared> declared;
    std::vector<int64_t> dw_scratch;
    std::vector<int64_t> workspace;
    std::vector<bool> step_overlaps;
    std::map<int, int> req_of_class;
    std::vector<placement::BufferRequest> requests;
    std::vector<int> ws_req;
    std::vector<int> member_req;  // fixed-offset request of a member of the largest class, else -1
    placement::OptimalResult placed;
  };
  auto build = [&](int64_t extent_cap, int64_t cap) {
    Layout L;
    L.cls.resize(bufs.size());
    std::iota(L.cls.begin(), L.cls.end(), 0);
    L.rel.assign(bufs.size(), 0);
    L.dw_scratch.assign(n, 0);
    for (int s = 0; s < n; ++s) L.workspace.push_back(steps[s].workspace);
    std::vector<int64_t> extent(bufs.size());
    for (size_t k = 0; k < bufs.size(); ++k) extent[k] = bufs[k].bytes;
    for (int s = 0; s < n; ++s) {
      const StepInfo& si = steps[s];
      if (si.kind.empty() || !si.in.valid()) continue;
      int xi = buffer_index(si.in), yi = buffer_index(si.out);
      if (xi < 0 || yi < 0 || xi == yi) continue;
      const ir::Tensor& xt = g.tensor(bufs[xi].tensor);
      if (bufs[xi].last != s || bufs[yi].first != s || xt.kind == ir::TensorKind::kOutput ||
          g.StorageRoot(si.in) != si.in || L.cls[yi] != yi)
        continue;
      auto an = segment::AnalyzeShift(si.kernel);
      if (!an.ok()) continue;
      int64_t shift_bytes = AlignUp(an->shift * si.kernel.segment_bytes, std::max<int64_t>(t.alignment, 1));
      std::string reason = "segment-overlap";
      int64_t scratch = 0;
      // Depthwise: TinyEngine's in-place rule (output over the input, one channel plane of scratch)
      // when it costs less than the segment shift plus its pixel buffer (vMCU: "the same results").
      const ir::Op& op0 = g.op(si.ops[0]);
      if (si.ops.size() == 1 && ir::IsDepthwiseConv(g, op0) && bufs[yi].bytes <= bufs[xi].bytes) {
        const auto& ys = g.tensor(si.out).shape;
        const int64_t plane = AlignUp(g.tensor(si.out).Bytes() / std::max<int64_t>(ys.back(), 1), 16);
        if (plane <= shift_bytes + si.workspace) {
          shift_bytes = 0;
          reason = "inplace-depthwise";
          scratch = plane;
        }
      }
      if (shift_bytes >= bufs[yi].bytes) continue;  // no overlap would remain
      // Y joins X's class, shift_bytes below X (the class moves up when Y would start below 0).
      const int c = L.cls[xi];
      const int64_t ry = L.rel[xi] - shift_bytes;
      const int64_t up = ry < 0 ? -ry : 0;
      const int64_t new_extent = std::max(extent[c] + up, ry + up + bufs[yi].bytes);
      // Where the step fits `cap` even without the overlap, do not take it: the chain breaks there
      // and stops drifting (cheap where tensors are small).
      int64_t live_other = 0;
      for (size_t k = 0; k < bufs.size(); ++k)
        if (bufs[k].first <= s && s <= bufs[k].last && static_cast<int>(k) != xi && static_cast<int>(k) != yi)
          live_other += bufs[k].bytes;
      if (live_other + bufs[xi].bytes + bufs[yi].bytes + si.workspace <= cap) continue;
      if (new_extent > extent_cap) continue;
      if (up > 0)
        for (size_t k = 0; k < bufs.size(); ++k)
          if (L.cls[k] == c) L.rel[k] += up;
      extent[c] = new_extent;
      L.cls[yi] = c;
      L.rel[yi] = ry + up;
      L.declared.push_back({yi, xi, shift_bytes, reason});
      if (scratch > 0) {
        L.dw_scratch[s] = scratch;
        L.workspace[s] = 0;
      }
    }
    // 4. Requests: one per class (+ workspaces). The class with the largest extent keeps its members
    // as separate requests at fixed offsets (class base 0), so that the space its chain frees as it
    // drifts down is available to workspaces and other tensors.
    int big = -1;
    for (size_t k = 0; k < bufs.size(); ++k)
      if (L.cls[k] != static_cast<int>(k) && (big < 0 || extent[L.cls[k]] > extent[big])) big = L.cls[k];
    std::vector<int> member_req(bufs.size(), -1);
    for (size_t k = 0; k < bufs.size(); ++k) {
      if (L.cls[k] != big || big < 0) continue;
      placement::BufferRequest r;
      r.id = static_cast<int>(L.requests.size());
      r.bytes = bufs[k].bytes;
      r.alignment = std::max<int64_t>(t.alignment, 1);
      r.first_step = bufs[k].first;
      r.last_step = bufs[k].last;
      r.fixed_offset = L.rel[k];
      member_req[k] = r.id;
      L.requests.push_back(r);
    }
    L.member_req = member_req;
    for (size_t k = 0; k < bufs.size(); ++k) {
      if (member_req[k] >= 0) continue;
      auto it = L.req_of_class.find(L.cls[k]);
      if (it == L.req_of_class.end()) {
        placement::BufferRequest r;
        r.id = static_cast<int>(L.requests.size());
        r.bytes = L.rel[k] + bufs[k].bytes;
        r.alignment = std::max<int64_t>(t.alignment, 1);
        r.first_step = bufs[k].first;
        r.last_step = bufs[k].last;
        L.req_of_class[L.cls[k]] = r.id;
        L.requests.push_back(r);
      } else {
        placement::BufferRequest& r = L.requests[it->second];
        r.bytes = std::max(r.bytes, L.rel[k] + bufs[k].bytes);
        r.first_step = std::min(r.first_step, bufs[k].first);
        r.last_step = std::max(r.last_step, bufs[k].last);
      }
    }
    L.ws_req.assign(n, -1);
    L.step_overlaps.assign(n, false);
    for (const auto& d : L.declared) L.step_overlaps[bufs[d.out].first] = true;
    for (int s = 0; s < n; ++s)
      if ((L.step_overlaps[s] || steps[s].ops.size() > 1) && (L.workspace[s] > 0 || L.dw_scratch[s] > 0)) {
        placement::BufferRequest r;
        r.id = static_cast<int>(L.requests.size());
        r.bytes = AlignUp(L.dw_scratch[s] > 0 ? L.dw_scratch[s] : L.workspace[s], std::max<int64_t>(t.alignment, 1));
        r.alignment = std::max<int64_t>(t.alignment, 1);
        r.first_step = r.last_step = s;
        L.ws_req[s] = r.id;
        L.requests.push_back(r);
      }
    placement::OptimalOptions po;
    po.time_limit_s = 30;  // a safety net; the node limit keeps plans reproducible
    po.node_limit = 20000;
    L.placed = placement::PlaceBestOf(L.requests, po);
    return L;
  };
  // Per step: live bytes of a layout, each declared overlap pair counted as max(shift + in, out)
  // instead of in + out (workspaces not included).
  auto live_of = [&](const Layout& L) {
    std::vector<int64_t> live(std::max(n, 1), 0);
    for (size_t k = 0; k < bufs.size(); ++k)
      for (int s = bufs[k].first; s <= bufs[k].last; ++s) live[s] += bufs[k].bytes;
    for (const auto& d : L.declared) {
      const int s = bufs[d.out].first;
      live[s] -= bufs[d.in].bytes + bufs[d.out].bytes;
      live[s] += std::max(d.shift_bytes + bufs[d.in].bytes, bufs[d.out].bytes);
    }
    return live;
  };
  // Lower bound of a layout: the live bytes plus the step's workspace, at the worst step.
  auto lower_bound_of = [&](const Layout& L) {
    std::vector<int64_t> live = live_of(L);
    for (int s = 0; s < n; ++s)
      if (L.ws_req[s] >= 0) live[s] += L.requests[L.ws_req[s]].bytes;
    return *std::max_element(live.begin(), live.end());
  };
  const int64_t kNoCap = std::numeric_limits<int64_t>::max();
  // The smallest layout for the current workspaces (steps[s].workspace).
  auto search = [&]() {
    Layout best = build(kNoCap, 0);  // every overlap taken
    // Then variants: a cap on a class's extent (relative to the largest request), and chains broken
    // at steps that fit a target without their overlap (relative to the strategy's lower bound with
    // every overlap taken: a step that fits it whole needs no overlap, and breaking the chain there
    // stops the drift).
    int64_t step_max = 0;
    for (const auto& r : best.requests) step_max = std::max(step_max, r.bytes);
    const int64_t lb = lower_bound_of(best);
    for (int64_t ecap : {kNoCap, step_max, step_max * 11 / 10, step_max * 5 / 4, step_max * 3 / 2})
      for (int64_t fcap : {int64_t{0}, lb, lb * 51 / 50, lb * 21 / 20, lb * 11 / 10}) {
        if (best.placed.placement.arena_bytes <= lb) return best;  // cannot do better
        if (ecap == kNoCap && fcap == 0) continue;
        Layout l = build(ecap, fcap);
        if (l.placed.placement.arena_bytes < best.placed.placement.arena_bytes) best = std::move(l);
      }
    return best;
  };
  std::vector<int64_t> intrinsic_ws(n);
  for (int s = 0; s < n; ++s) intrinsic_ws[s] = steps[s].workspace;
  Layout best = search();
  // 3a. Circular segment pool (vMCU Sec. 5): a chain of overlaps drifts down by the sum of its
  // shifts; when every step of the chain is tight, breaking it does not help and the linear layout
  // stays above the lower bound. Then the chain (the largest overlap class, every overlap taken) is
  // laid out modulo a pool of P bytes, the whole arena: member k at (c + rel_k) mod P, a member
  // running past P continuing at 0 (split into two fixed pieces for the placer), and the other
  // buffers placed around it. Only members touched by segment steps alone (as their pool input or
  // output) may wrap; the smallest P from the lower bound up that places wins.
  int64_t pool_bytes = 0;
  const int64_t align = std::max<int64_t>(t.alignment, 1);
  {
    const int64_t linear = best.placed.placement.arena_bytes;
    Layout L0 = build(kNoCap, 0);
    const int64_t lb = AlignUp(lower_bound_of(L0), align);
    std::vector<bool> seg_step(n, false);
    for (const auto& d : L0.declared)
      if (d.reason == "segment-overlap") seg_step[bufs[d.out].first] = true;
    for (int s = 0; s < n; ++s)
      if (steps[s].kind == "bottleneck") seg_step[s] = true;
    auto may_wrap = [&](size_t k) {
      const ir::Tensor& ten = g.tensor(bufs[k].tensor);
      if (ten.kind != ir::TensorKind::kActivation && ten.kind != ir::TensorKind::kInput) return false;
      if (ten.producer.valid()) {
        const int s = step_of_op[ten.producer.value()];
        if (!seg_step[s] || steps[s].out != ten.id) return false;
      }
      for (ir::OpId c : ten.consumers) {
        const int s = step_of_op[c.value()];
        if (!seg_step[s] || steps[s].in != ten.id) return false;
      }
      return true;
    };
    bool any_member = false;
    for (size_t k = 0; k < bufs.size(); ++k) any_member = any_member || L0.member_req[k] >= 0;
    const int64_t stride = std::max(align, AlignUp(std::max<int64_t>((linear - lb) / 8, 1), align));
    bool done = false;
    for (int64_t P = lb; options.circular_pool && any_member && !done && P < linear; P += stride)
      for (int64_t quarter = 0; quarter < 4 && !done; ++quarter) {
        const int64_t c = AlignUp(P * quarter / 4, align) % P;
        std::vector<placement::BufferRequest> req = L0.requests, tails;
        bool ok = true;
        for (size_t k = 0; k < bufs.size() && ok; ++k) {
          if (L0.member_req[k] < 0) continue;
          placement::BufferRequest& r = req[L0.member_req[k]];
          const int64_t off = (c + L0.rel[k]) % P;
          r.fixed_offset = off;
          if (off + r.bytes <= P) continue;
          if (!may_wrap(k) || r.bytes > P) {
            ok = false;
            break;
          }
          placement::BufferRequest tail = r;
          tail.fixed_offset = 0;
          tail.bytes = off + r.bytes - P;
          r.bytes = P - off;
          tails.push_back(tail);
        }
        if (!ok) continue;
        for (auto& tail : tails) {
          tail.id = static_cast<int>(req.size());
          req.push_back(tail);
        }
        placement::OptimalOptions po;
        po.time_limit_s = 30;
        po.node_limit = 20000;
        placement::OptimalResult placed = placement::PlaceBestOf(req, po);
        if (placed.placement.arena_bytes > P) continue;
        L0.requests = std::move(req);
        L0.placed = std::move(placed);
        best = std::move(L0);
        pool_bytes = P;
        done = true;
      }
  }
  // 3b. Faster fused kernels where memory allows: the row cache (R rows of the expanded plane,
  // every plane pixel expanded once) instead of the R*S-slot column cache (pixels re-expanded for
  // each output row), on the fused steps whose larger workspace keeps the arena as it is.
  std::vector<bool> row_cache(n, false);
  if (pool_bytes == 0) {
    const int64_t arena = best.placed.placement.arena_bytes;
    const std::vector<int64_t> live = live_of(best);
    // The steps' own (column-cache) workspaces: not best.workspace, which is 0 where that layout
    // runs a depthwise step in place; a new layout may run it as a segment step again and then
    // needs its workspace (issue 12: such plans had segment steps without a workspace buffer).
    const std::vector<int64_t> column_ws = intrinsic_ws;
    for (int64_t slack_pct : {100, 80}) {
      std::vector<bool> rc(n, false);
      bool any = false;
      for (int s = 0; s < n; ++s) {
        steps[s].workspace = column_ws[s];
        if (steps[s].kind != "bottleneck" || steps[s].workspace_rows <= 0 ||
            steps[s].workspace_rows <= steps[s].workspace)
          continue;
        if ((live[s] + steps[s].workspace_rows) * 100 > arena * slack_pct) continue;
        steps[s].workspace = steps[s].workspace_rows;
        rc[s] = any = true;
      }
      if (!any) break;
      Layout l = search();
      if (l.placed.placement.arena_bytes <= arena) {
        best = std::move(l);
        row_cache = rc;
        break;
      }
    }
  }
  std::vector<int>& cls = best.cls;
  std::vector<int64_t>& rel = best.rel;
  std::vector<Declared>& declared = best.declared;
  std::vector<int64_t>& dw_scratch = best.dw_scratch;
  std::vector<bool>& step_overlaps = best.step_overlaps;
  std::map<int, int>& req_of_class = best.req_of_class;
  std::vector<placement::BufferRequest>& requests = best.requests;
  std::vector<int>& ws_req = best.ws_req;
  placement::OptimalResult& placed = best.placed;
  for (int s = 0; s < n; ++s) steps[s].workspace = row_cache[s] ? steps[s].workspace_rows : intrinsic_ws[s];
  // The rule the executor, the code generator and the verifier apply: every step that runs the
  // segment-aware kernels (a fused group, or an output with a "segment-overlap") has a
  // '<first op>.workspace' buffer of at least the kernel's workspace bytes.
  {
    std::vector<bool> segment_overlap(n, false);
    for (const auto& d : declared)
      if (d.reason == "segment-overlap") segment_overlap[bufs[d.out].first] = true;
    for (int s = 0; s < n; ++s) {
      const bool segment_step = steps[s].ops.size() > 1 || segment_overlap[s];
      if (!segment_step) continue;
      if (dw_scratch[s] > 0 || ws_req[s] < 0 || requests[ws_req[s]].bytes < steps[s].workspace)
        return InternalError("strategy 'vmcu': step " + std::to_string(s) + " runs the segment-aware kernels but its "
                             "workspace (" + std::to_string(ws_req[s] < 0 ? 0 : requests[ws_req[s]].bytes) +
                             " bytes) is smaller than the kernel's " + std::to_string(steps[s].workspace));
    }
  }

  // 5. The plan.
  plan::Plan p = PlanSkeleton(g, t, sched, "vmcu", options);
  p.steps.clear();
  for (int s = 0; s < n; ++s) {
    plan::Step st;
    st.index = s;
    for (ir::OpId id : steps[s].ops) {
      plan::StepOp so = PlanStepOp(g, g.op(id));
      if (step_overlaps[s] && dw_scratch[s] == 0) so.attrs["segment_bytes"] = {steps[s].kernel.segment_bytes};
      if (row_cache[s] && id == steps[s].ops[0]) so.attrs["row_cache"] = {1};
      st.ops.push_back(std::move(so));
    }
    p.steps.push_back(std::move(st));
  }
  if (!schedule_note.empty()) p.notes.push_back(schedule_note);
  const target::MemoryLevel& arena = t.levels[t.arena_level];
  const target::MemoryLevel& wlevel = t.levels[t.weight_level];
  std::vector<std::vector<plan::Overlap>> overlaps(bufs.size());
  for (const auto& d : declared)
    overlaps[d.out].push_back({g.tensor(bufs[d.in].tensor).name, d.reason, -d.shift_bytes});
  for (size_t k = 0; k < bufs.size(); ++k) {
    const int64_t off = best.member_req[k] >= 0 ? placed.placement.offsets[best.member_req[k]]
                                                : placed.placement.offsets[req_of_class[cls[k]]] + rel[k];
    p.buffers.push_back({g.tensor(bufs[k].tensor).name, arena.name, off, bufs[k].bytes, bufs[k].first, bufs[k].last,
                         overlaps[k]});
  }
  for (int s = 0; s < n; ++s)
    if (ws_req[s] >= 0) {
      const std::string name = g.op(steps[s].ops[0]).name + (dw_scratch[s] > 0 ? ".scratch" : ".workspace");
      p.tensors.push_back({name, requests[ws_req[s]].bytes, "scratch", "int8", {requests[ws_req[s]].bytes},
                           g.op(steps[s].ops[0]).name, {g.op(steps[s].ops[0]).name}, ""});
      p.buffers.push_back({name, arena.name, placed.placement.offsets[ws_req[s]], requests[ws_req[s]].bytes, s, s, {}});
    }
  const int last = std::max(0, n - 1);
  int64_t wcursor = 0, weight_bytes = 0;
  for (const ir::Tensor& ten : g.tensors()) {
    if (ten.kind != ir::TensorKind::kConstant || ten.consumers.empty() || lv.buffer_of_tensor[ten.id.value()] >= 0) continue;
    wcursor = AlignUp(wcursor, std::max<int64_t>(t.alignment, 1));
    p.buffers.push_back({ten.name, wlevel.name, wcursor, ten.Bytes(), 0, last, {}});
    wcursor += ten.Bytes();
    weight_bytes += ten.Bytes();
  }
  // Metrics.
  plan::Metrics& m = p.metrics;
  const int64_t lower_bound = lower_bound_of(best);
  for (auto& l : p.levels) {
    if (l.name == arena.name) l.lower_bound_bytes = lower_bound;
    if (l.name == wlevel.name && wlevel.name != arena.name) l.lower_bound_bytes = weight_bytes;
  }
  if (pool_bytes > 0) {
    // The pool is the whole arena; declared only when a buffer actually wraps.
    p.pools.push_back({arena.name, pool_bytes, std::max<int64_t>(steps[0].kernel.segment_bytes, 1)});
    bool wraps = false;
    for (const auto& b : p.buffers) wraps = wraps || plan::Wraps(p, b);
    if (!wraps) p.pools.clear();
  }
  FinishLevelMetrics(arena.name, lower_bound, &p);
  AddOpAccesses(g, sched, arena, wlevel,
                [&](const ir::Tensor& ten) {
                  return ten.kind == ir::TensorKind::kConstant && lv.buffer_of_tensor[ten.id.value()] < 0;
                },
                &m);
  int groups = 0;
  for (const auto& s : steps) groups += s.kind == "bottleneck";
  p.notes.push_back(std::to_string(groups) + " fused inverted bottlenecks, " + std::to_string(declared.size()) +
                    " segment overlaps (output shift bytes below its input; ISL analysis)");
  plan::InferStepKinds(&p);
  plan::VerifyResult vr = plan::VerifyPlan(p);
  if (!vr.ok()) return InternalError("strategy 'vmcu' produced a plan that fails verification:\n" + vr.Summary());
  return p;
}

}  // namespace sramplan::driver
