// circular-pool: vMCU Sec. 5, the circular segment pool.
// 3a. Circular segment pool (vMCU Sec. 5): a chain of overlaps drifts down by the sum of its
// shifts; when every step of the chain is tight, breaking it does not help and the linear layout
// stays above the lower bound. Then the chain (the largest overlap class, every overlap taken) is
// laid out modulo a pool of P bytes, the whole arena: member k at (c + rel_k) mod P, a member
// running past P continuing at 0 (split into two fixed pieces for the placer), and the other
// buffers placed around it. Only members touched by segment steps alone (as their pool input or
// output) may wrap; the smallest P from the lower bound up that places wins.
#include <algorithm>
#include <limits>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {

bool PlaceCircularPool(PlanningContext& ctx, VmcuState& st, const VmcuInputs& in, int64_t p_lo,
                       int64_t p_hi, int64_t stride) {
  const int64_t align = ctx.alignment();
  Layout L0 = BuildLayout(in, std::numeric_limits<int64_t>::max(), 0);
  std::vector<bool> seg_step(st.num_steps(), false);
  for (const auto& d : L0.declared)
    if (d.reason == "segment-overlap") seg_step[st.bufs[d.out].first] = true;
  for (int s = 0; s < st.num_steps(); ++s)
    if (st.steps[s].kind == "bottleneck") seg_step[s] = true;
  auto may_wrap = [&](size_t k) {
    const ir::Tensor& ten = ctx.graph.tensor(st.bufs[k].tensor);
    if (ten.kind != ir::TensorKind::kActivation && ten.kind != ir::TensorKind::kInput)
      return false;
    if (ten.producer.valid()) {
      const int s = st.step_of_op[ten.producer.value()];
      if (!seg_step[s] || st.steps[s].out != ten.id) return false;
    }
    for (ir::OpId c : ten.consumers) {
      const int s = st.step_of_op[c.value()];
      if (!seg_step[s] || st.steps[s].in != ten.id) return false;
    }
    return true;
  };
  bool any_member = false;
  for (size_t k = 0; k < st.bufs.size(); ++k) any_member = any_member || L0.member_req[k] >= 0;
  for (int64_t P = p_lo; ctx.options.circular_pool && any_member && P < p_hi; P += stride)
    for (int64_t quarter = 0; quarter < 4; ++quarter) {
      const int64_t c = AlignUp(P * quarter / 4, align) % P;
      std::vector<placement::BufferRequest> req = L0.requests, tails;
      bool ok = true;
      for (size_t k = 0; k < st.bufs.size() && ok; ++k) {
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
      po.time_limit_s = ctx.options.search_time_limit_s > 0 ? std::min(30.0, ctx.options.search_time_limit_s) : 30;
      po.node_limit = 20000;
      placement::OptimalResult placed = placement::PlaceBestOf(req, po);
      if (placed.placement.arena_bytes > P) continue;
      L0.requests = std::move(req);
      L0.placed = std::move(placed);
      st.best = std::move(L0);
      st.pool_bytes = P;
      return true;
    }
  return false;
}

MakeResult MakeCircularPool(std::string_view arg) {
  return VmcuPass("circular-pool", arg, [](PlanningContext& ctx, VmcuState& st, const VmcuInputs& in) -> Status {
    constexpr int64_t kNoCap = std::numeric_limits<int64_t>::max();
    const int64_t align = ctx.alignment();
    const int64_t linear = st.best.placed.placement.arena_bytes;
    const int64_t lb = AlignUp(LowerBoundOf(in, BuildLayout(in, kNoCap, 0)), align);
    const int64_t stride = std::max(align, AlignUp(std::max<int64_t>((linear - lb) / 8, 1), align));
    PlaceCircularPool(ctx, st, in, lb, linear, stride);
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
