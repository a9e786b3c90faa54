// assemble-segments: the plan of a vmcu layout: one step per fused group with its kind and parameters
// (kFusedBottleneck, kSegment, kInPlaceDepthwise; segment_bytes, row_cache), "segment-overlap" and
// "inplace-depthwise" overlaps, each segment step's '<first op>.workspace' buffer (or an in-place
// depthwise op's '<op>.scratch'), and the circular pool when a buffer wraps. Checks the rule the
// executor, the code generator and the verifier apply: every step that runs the segment-aware
// kernels has a workspace buffer of at least the kernel's workspace bytes.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"

namespace sramplan::driver::passes {

MakeResult MakeAssembleSegments(std::string_view arg) {
  return VmcuPass("assemble-segments", arg, [](PlanningContext& ctx, VmcuState& st, const VmcuInputs& in) -> Status {
    const ir::Graph& g = ctx.graph;
    const int n = st.num_steps();
    const std::vector<VmcuBuf>& bufs = st.bufs;
    const std::vector<fusion::StepInfo>& steps = st.steps;
    const std::vector<bool>& row_cache = st.row_cache;
    const target::MemoryLevel& arena = ctx.arena();
    Layout& best = st.best;
    std::vector<int>& cls = best.cls;
    std::vector<int64_t>& rel = best.rel;
    std::vector<Declared>& declared = best.declared;
    std::vector<int64_t>& dw_scratch = best.dw_scratch;
    std::vector<bool>& step_overlaps = best.step_overlaps;
    std::map<int, int>& req_of_class = best.req_of_class;
    std::vector<placement::BufferRequest>& requests = best.requests;
    std::vector<int>& ws_req = best.ws_req;
    placement::OptimalResult& placed = best.placed;
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
          return InternalError("strategy '" + ctx.spec.name + "': step " + std::to_string(s) +
                               " runs the segment-aware kernels but its "
                               "workspace (" +
                               std::to_string(ws_req[s] < 0 ? 0 : requests[ws_req[s]].bytes) +
                               " bytes) is smaller than the kernel's " +
                               std::to_string(steps[s].workspace));
      }
    }

    plan::Plan& p = ctx.plan;
    p = PlanSkeleton(g, ctx.target, ctx.order, ctx.spec.name, ctx.options);
    p.steps.clear();
    for (int s = 0; s < n; ++s) {
      plan::Step step;
      step.index = s;
      for (ir::OpId id : steps[s].ops) step.ops.push_back(PlanStepOp(g, g.op(id)));
      // The step's kind and parameters: a fused group runs the bottleneck kernel, an output over
      // its input by a segment shift the segment kernels, a depthwise op over its input in place
      // channel by channel through its scratch.
      const bool segment_overlap = step_overlaps[s] && dw_scratch[s] == 0;
      if (steps[s].ops.size() > 1)
        step.kind = plan::StepKind::kFusedBottleneck;
      else if (segment_overlap)
        step.kind = plan::StepKind::kSegment;
      else if (dw_scratch[s] > 0)
        step.kind = plan::StepKind::kInPlaceDepthwise;
      if (segment_overlap) step.segment_bytes = steps[s].kernel.segment_bytes;
      step.row_cache = row_cache[s];
      if (ws_req[s] >= 0)
        step.workspace = g.op(steps[s].ops[0]).name + (dw_scratch[s] > 0 ? ".scratch" : ".workspace");
      p.steps.push_back(std::move(step));
    }
    if (!ctx.schedule_note.empty()) p.notes.push_back(ctx.schedule_note);
    std::vector<std::vector<plan::Overlap>> overlaps(bufs.size());
    for (const auto& d : declared)
      overlaps[d.out].push_back({g.tensor(bufs[d.in].tensor).name, d.reason, -d.shift_bytes});
    for (size_t k = 0; k < bufs.size(); ++k) {
      const int64_t off = best.member_req[k] >= 0
                              ? placed.placement.offsets[best.member_req[k]]
                              : placed.placement.offsets[req_of_class[cls[k]]] + rel[k];
      p.buffers.push_back({g.tensor(bufs[k].tensor).name, arena.name, off, bufs[k].bytes,
                           bufs[k].first, bufs[k].last, overlaps[k]});
    }
    for (int s = 0; s < n; ++s)
      if (ws_req[s] >= 0) {
        const std::string& name = p.steps[s].workspace;
        p.tensors.push_back({name,
                             requests[ws_req[s]].bytes,
                             "scratch",
                             "int8",
                             {requests[ws_req[s]].bytes},
                             g.op(steps[s].ops[0]).name,
                             {g.op(steps[s].ops[0]).name},
                             ""});
        p.buffers.push_back({name,
                             arena.name,
                             placed.placement.offsets[ws_req[s]],
                             requests[ws_req[s]].bytes,
                             s,
                             s,
                             {}});
      }
    // The pool is the whole arena; declared only when a buffer actually wraps.
    if (st.pool_bytes > 0) {
      p.pools.push_back(
          {arena.name, st.pool_bytes, std::max<int64_t>(steps[0].kernel.segment_bytes, 1)});
      bool wraps = false;
      for (const auto& b : p.buffers) wraps = wraps || plan::Wraps(p, b);
      if (!wraps) p.pools.clear();
    }
    ctx.lower_bound = LowerBoundOf(in, best);
    int groups = 0;
    for (const auto& s : steps) groups += s.kind == "bottleneck";
    p.notes.push_back(std::to_string(groups) + " fused inverted bottlenecks, " +
                      std::to_string(declared.size()) +
                      " segment overlaps (output shift bytes below its input; ISL analysis)");
    ctx.assembled = true;
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
