// verify: the independent plan verifier (plan/verifier.h). A plan that fails it is a bug in the
// strategy, reported as an internal error with the verifier's findings.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "plan/verifier.h"

namespace sramplan::driver::passes {

MakeResult MakeVerify(std::string_view arg) {
  return NoArgPass("verify", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.assembled)
      return InternalError("pass 'verify' needs an assembled plan (run an assemble pass first)");
    plan::VerifyResult vr = plan::VerifyPlan(ctx.plan);
    if (!vr.ok())
      return InternalError("strategy '" + ctx.spec.name +
                           "' produced a plan that fails verification:\n" + vr.Summary());
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
