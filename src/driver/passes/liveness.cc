// liveness: the arena buffers of the order (analysis::ComputeLiveness).
#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {

MakeResult MakeLiveness(std::string_view arg) {
  return NoArgPass("liveness", arg, [](PlanningContext& ctx) -> Status {
    SP_RETURN_IF_ERROR(analysis::ValidateSchedule(ctx.graph, ctx.order));
    ctx.liveness = analysis::ComputeLiveness(ctx.graph, ctx.order);
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
