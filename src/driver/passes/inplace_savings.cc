// inplace-savings: what in-place sharing saved: the same buffers placed by TFLM's planner without
// sharing, minus the plan's arena.
#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {

MakeResult MakeInplaceSavings(std::string_view arg) {
  return NoArgPass("inplace-savings", arg, [](PlanningContext& ctx) -> Status {
    const analysis::Liveness& lv = ctx.liveness;
    std::vector<placement::BufferRequest> plain;
    for (size_t i = 0; i < lv.buffers.size(); ++i)
      plain.push_back({static_cast<int>(i),
                       ctx.tensors.placed_bytes[i],
                       1,
                       lv.buffers[i].first_step,
                       lv.buffers[i].last_step,
                       {}});
    plan::Metrics& m = ctx.plan.metrics;
    m.inplace_saved_bytes = placement::PlaceTflmGreedy(plain).arena_bytes - m.arena_bytes;
    ctx.plan.notes.push_back(std::to_string(ctx.tensors.inplace.size()) + " in-place ops (" +
                             std::to_string(ctx.tensors.scratch.size()) +
                             " depthwise with a one-channel scratch buffer)");
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
