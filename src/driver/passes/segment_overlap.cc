// segment-overlap: vMCU's overlap classes (an output `shift` bytes below the input it overwrites,
// the minimal safe shift from the ISL analysis) placed with the exact placer; the smallest of the
// layout variants (driver/vmcu_layout.h).
#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {

MakeResult MakeSegmentOverlap(std::string_view arg) {
  return NoArgPass("segment-overlap", arg, [](PlanningContext& ctx) -> Status {
    SP_ASSIGN_OR_RETURN(VmcuState * st, VmcuOf(ctx, "segment-overlap"));
    st->best = SearchLayout({ctx.graph, ctx.target, ctx.liveness, *st});
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
