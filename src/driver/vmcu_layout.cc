#include "driver/vmcu_layout.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include "support/int_math.h"

namespace sramplan::driver {

int VmcuBufferIndex(const VmcuInputs& in, ir::TensorId id) {
  int b = in.lv.buffer_of_tensor[id.value()];
  return b < 0 ? -1 : in.st.buf_of[b];
}

namespace {

// TinyEngine's in-place rule for an element-wise step outside any fused group (a residual Add, a
// BatchNormalization or activation left unfused): the output takes the offset of a same-shaped data
// input that dies at the step (shift 0, "inplace-elementwise"; the kernels read each element before
// they write it).
// As for segment overlaps, a step that fits `cap` without it keeps its own buffer (one of the
// variants SearchLayout compares; joining classes can constrain the placement elsewhere).
void JoinInPlaceElementwise(const VmcuInputs& in, int s, int64_t cap, Layout* L) {
  const ir::Graph& g = in.g;
  const std::vector<VmcuBuf>& bufs = in.st.bufs;
  const ir::Op& op = g.op(in.st.steps[s].ops[0]);
  if (!(ir::IsBinaryElementwise(op.type) || ir::IsUnaryElementwise(op.type)) || op.outputs.size() != 1) return;
  const ir::Tensor& out = g.tensor(op.outputs[0]);
  const int yi = VmcuBufferIndex(in, out.id);
  if (yi < 0 || bufs[yi].tensor != out.id || bufs[yi].first != s || L->cls[yi] != yi) return;
  for (ir::TensorId id : op.inputs) {
    const ir::Tensor& x = g.tensor(id);
    if (x.kind == ir::TensorKind::kConstant || x.kind == ir::TensorKind::kOutput || g.StorageRoot(id) != id) continue;
    const int xi = VmcuBufferIndex(in, id);
    if (xi < 0 || xi == yi || bufs[xi].tensor != id || bufs[xi].last != s) continue;
    if (x.shape != out.shape || ir::DataTypeSize(x.dtype) != ir::DataTypeSize(out.dtype) ||
        bufs[yi].bytes > bufs[xi].bytes)
      continue;
    int64_t live = 0;
    for (const VmcuBuf& b : bufs) live += b.first <= s && s <= b.last ? b.bytes : 0;
    if (live <= cap) return;
    L->cls[yi] = L->cls[xi];
    L->rel[yi] = L->rel[xi];
    L->declared.push_back({yi, xi, 0, "inplace-elementwise"});
    return;
  }
}

}  // namespace

Layout BuildLayout(const VmcuInputs& in, int64_t extent_cap, int64_t cap) {
  const ir::Graph& g = in.g;
  const target::Target& t = in.t;
  const std::vector<VmcuBuf>& bufs = in.st.bufs;
  const std::vector<fusion::StepInfo>& steps = in.st.steps;
  const int n = in.st.num_steps();

  Layout L;
  L.cls.resize(bufs.size());
  std::iota(L.cls.begin(), L.cls.end(), 0);
  L.rel.assign(bufs.size(), 0);
  L.dw_scratch.assign(n, 0);
  for (int s = 0; s < n; ++s) L.workspace.push_back(steps[s].workspace);
  std::vector<int64_t> extent(bufs.size());
  for (size_t k = 0; k < bufs.size(); ++k) extent[k] = bufs[k].bytes;
  for (int s = 0; s < n; ++s) {
    const fusion::StepInfo& si = steps[s];
    if (si.kind.empty() && si.ops.size() == 1) {
      JoinInPlaceElementwise(in, s, cap, &L);
      continue;
    }
    if (si.kind.empty() || !si.in.valid()) continue;
    int xi = VmcuBufferIndex(in, si.in), yi = VmcuBufferIndex(in, si.out);
    if (xi < 0 || yi < 0 || xi == yi) continue;
    const ir::Tensor& xt = g.tensor(bufs[xi].tensor);
    if (bufs[xi].last != s || bufs[yi].first != s || xt.kind == ir::TensorKind::kOutput ||
        g.StorageRoot(si.in) != si.in || L.cls[yi] != yi)
      continue;
    auto an = segment::AnalyzeShift(si.kernel);
    if (!an.ok()) continue;
    int64_t shift_bytes =
        AlignUp(an->shift * si.kernel.segment_bytes, std::max<int64_t>(t.alignment, 1));
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
      if (bufs[k].first <= s && s <= bufs[k].last && static_cast<int>(k) != xi &&
          static_cast<int>(k) != yi)
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
    if (L.cls[k] != static_cast<int>(k) && (big < 0 || extent[L.cls[k]] > extent[big]))
      big = L.cls[k];
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
  // Steps whose kernel overlaps (segment shift or in-place depthwise); an in-place element-wise op
  // runs its plain kernel.
  for (const auto& d : L.declared)
    if (d.reason != "inplace-elementwise") L.step_overlaps[bufs[d.out].first] = true;
  for (int s = 0; s < n; ++s)
    if ((L.step_overlaps[s] || steps[s].ops.size() > 1) &&
        (L.workspace[s] > 0 || L.dw_scratch[s] > 0)) {
      placement::BufferRequest r;
      r.id = static_cast<int>(L.requests.size());
      r.bytes = AlignUp(L.dw_scratch[s] > 0 ? L.dw_scratch[s] : L.workspace[s],
                        std::max<int64_t>(t.alignment, 1));
      r.alignment = std::max<int64_t>(t.alignment, 1);
      r.first_step = r.last_step = s;
      L.ws_req[s] = r.id;
      L.requests.push_back(r);
    }
  placement::OptimalOptions po;
  // A safety net (capped by --time-limit); the node limit keeps plans reproducible.
  po.time_limit_s = in.time_limit_s > 0 ? std::min(30.0, in.time_limit_s) : 30;
  po.node_limit = 20000;
  L.placed = placement::PlaceBestOf(L.requests, po);
  return L;
}

std::vector<int64_t> LiveOf(const VmcuInputs& in, const Layout& L) {
  const std::vector<VmcuBuf>& bufs = in.st.bufs;
  const int n = in.st.num_steps();
  std::vector<int64_t> live(std::max(n, 1), 0);
  for (size_t k = 0; k < bufs.size(); ++k)
    for (int s = bufs[k].first; s <= bufs[k].last; ++s) live[s] += bufs[k].bytes;
  for (const auto& d : L.declared) {
    const int s = bufs[d.out].first;
    live[s] -= bufs[d.in].bytes + bufs[d.out].bytes;
    live[s] += std::max(d.shift_bytes + bufs[d.in].bytes, bufs[d.out].bytes);
  }
  return live;
}

int64_t LowerBoundOf(const VmcuInputs& in, const Layout& L) {
  const int n = in.st.num_steps();
  std::vector<int64_t> live = LiveOf(in, L);
  for (int s = 0; s < n; ++s)
    if (L.ws_req[s] >= 0) live[s] += L.requests[L.ws_req[s]].bytes;
  return *std::max_element(live.begin(), live.end());
}

Layout SearchLayout(const VmcuInputs& in) {
  constexpr int64_t kNoCap = std::numeric_limits<int64_t>::max();
  const auto t0 = std::chrono::steady_clock::now();
  // With --time-limit, each placement gets what remains of it, and the variants stop when it is spent.
  auto left = [&] {
    return in.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  VmcuInputs timed = in;
  Layout best = BuildLayout(in, kNoCap, 0);  // every overlap taken
  // Then variants: a cap on a class's extent (relative to the largest request), and chains broken
  // at steps that fit a target without their overlap (relative to the strategy's lower bound with
  // every overlap taken: a step that fits it whole needs no overlap, and breaking the chain there
  // stops the drift).
  int64_t step_max = 0;
  for (const auto& r : best.requests) step_max = std::max(step_max, r.bytes);
  const int64_t lb = LowerBoundOf(in, best);
  for (int64_t ecap : {kNoCap, step_max, step_max * 11 / 10, step_max * 5 / 4, step_max * 3 / 2})
    for (int64_t fcap : {int64_t{0}, lb, lb * 51 / 50, lb * 21 / 20, lb * 11 / 10}) {
      if (best.placed.placement.arena_bytes <= lb) return best;  // cannot do better
      if (ecap == kNoCap && fcap == 0) continue;
      if (in.time_limit_s > 0) {
        if (left() <= 0.05) return best;  // the budget is spent: the best layout so far
        timed.time_limit_s = left();
      }
      Layout l = BuildLayout(timed, ecap, fcap);
      if (l.placed.placement.arena_bytes < best.placed.placement.arena_bytes) best = std::move(l);
    }
  return best;
}

}  // namespace sramplan::driver
