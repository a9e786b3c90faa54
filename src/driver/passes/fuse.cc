// fuse:bottleneck: vMCU's step groups (fusion/bottleneck.h): fused inverted bottlenecks where the
// pattern appears consecutively in the order, single ops with their segment kernels elsewhere.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "fusion/bottleneck.h"

namespace sramplan::driver::passes {

StatusOr<VmcuState*> VmcuOf(PlanningContext& ctx, std::string_view pass) {
  if (!ctx.vmcu)
    return InternalError("pass '" + std::string(pass) + "' needs the vmcu state: run fuse:bottleneck first");
  return ctx.vmcu.get();
}

MakeResult VmcuPass(std::string_view name, std::string_view arg,
                    std::function<Status(PlanningContext&, VmcuState&, const VmcuInputs&)> run) {
  return NoArgPass(name, arg, [name = std::string(name), run = std::move(run)](PlanningContext& ctx) -> Status {
    SP_ASSIGN_OR_RETURN(VmcuState * st, VmcuOf(ctx, name));
    const VmcuInputs in{ctx.graph, ctx.target, ctx.liveness, *st, ctx.options.search_time_limit_s};
    return run(ctx, *st, in);
  });
}

MakeResult MakeFuse(std::string_view arg) {
  return ChoicePass(
      "fuse", arg, {"bottleneck"}, [](PlanningContext& ctx, const std::string&) -> Status {
        const int64_t seg = ctx.options.segment_bytes;
        if (seg < 0 || seg > (int64_t{1} << 24))
          return InvalidArgument(
              "--segment-bytes " + std::to_string(seg) +
              " is out of range; give 1 to 16777216 bytes, or 0 for the paper's rule");
        ctx.vmcu = std::make_unique<VmcuState>();
        ctx.vmcu->steps = fusion::FuseBottlenecks(ctx.graph, ctx.order, seg);
        return Status::Ok();
      });
}

}  // namespace sramplan::driver::passes
