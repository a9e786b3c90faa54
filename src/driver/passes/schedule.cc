// schedule[:minpeak]: the operator order. Without an argument the options' --schedule (model or
// minpeak); schedule:minpeak forces the min-peak order (HMCOS is a min-peak scheduler).
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"

namespace sramplan::driver::passes {

MakeResult MakeSchedule(std::string_view arg) {
  return ChoicePass(
      "schedule", arg, {"", "minpeak"}, [](PlanningContext& ctx, const std::string& a) -> Status {
        if (a == "minpeak") ctx.options.schedule = "minpeak";
        SP_ASSIGN_OR_RETURN(ctx.order, ChooseSchedule(ctx.graph, ctx.options, &ctx.schedule_note));
        return Status::Ok();
      });
}

}  // namespace sramplan::driver::passes
