// assemble: the plan of a tensor-level strategy: the skeleton (header, levels, one step per op,
// tensors), its notes, and a buffer per arena tensor at its class's offset, plus the scratch
// buffers.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"

namespace sramplan::driver::passes {

MakeResult MakeAssemble(std::string_view arg) {
  return NoArgPass("assemble", arg, [](PlanningContext& ctx) -> Status {
    const ir::Graph& g = ctx.graph;
    const analysis::Liveness& lv = ctx.liveness;
    const TensorState& ts = ctx.tensors;
    const std::string& arena = ctx.arena().name;
    plan::Plan& p = ctx.plan;
    p = PlanSkeleton(g, ctx.target, ctx.order, ctx.spec.name, ctx.options);
    if (!ctx.schedule_note.empty()) p.notes.push_back(ctx.schedule_note);
    if (!ctx.placement_note.empty()) p.notes.push_back(ctx.placement_note);
    for (const Scratch& sc : ts.scratch)
      p.tensors.push_back(
          {sc.name, sc.bytes, "scratch", "int8", {sc.bytes}, sc.producer, {sc.producer}, ""});
    std::vector<std::vector<plan::Overlap>> overlaps(lv.buffers.size());
    for (const auto& ip : ts.inplace)
      overlaps[ip.out_buffer].push_back(
          {g.tensor(lv.buffers[ip.in_buffer].tensor).name, ip.reason, 0});
    for (size_t i = 0; i < lv.buffers.size(); ++i) {
      const auto& b = lv.buffers[i];
      const int req = ts.request_of_class[ts.class_of[i]];
      p.buffers.push_back({g.tensor(b.tensor).name, arena, ctx.placed.offsets[req],
                           ts.placed_bytes[i], b.first_step, b.last_step, overlaps[i]});
    }
    // TinyEngine's in-place depthwise ops run channel by channel through their scratch buffer.
    for (const Scratch& sc : ts.scratch) {
      p.steps[sc.step].kind = plan::StepKind::kInPlaceDepthwise;
      p.steps[sc.step].workspace = sc.name;
    }
    for (size_t k = 0; k < ts.scratch.size(); ++k) {
      const size_t req = ctx.requests.size() - ts.scratch.size() + k;
      p.buffers.push_back({ts.scratch[k].name,
                           arena,
                           ctx.placed.offsets[req],
                           ts.scratch[k].bytes,
                           ts.scratch[k].step,
                           ts.scratch[k].step,
                           {}});
    }
    ctx.assembled = true;
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
