// step-liveness: the buffers over the fused steps (analysis::ComputeStepLiveness): a tensor produced
// and consumed inside one fused step lives in the group's workspace and owns no buffer; sizes are
// aligned to the target.
#include "analysis/step_liveness.h"
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {

MakeResult MakeStepLiveness(std::string_view arg) {
  return NoArgPass("step-liveness", arg, [](PlanningContext& ctx) -> Status {
    SP_ASSIGN_OR_RETURN(VmcuState * state, VmcuOf(ctx, "step-liveness"));
    VmcuState& st = *state;
    analysis::StepGroups groups;
    for (const auto& si : st.steps) groups.push_back(si.ops);
    const analysis::StepLiveness sl = analysis::ComputeStepLiveness(ctx.graph, groups);
    if (sl.ops.buffers.size() != ctx.liveness.buffers.size())
      return InternalError("pass 'step-liveness': the fused steps do not run the liveness pass's order");
    st.step_of_op = sl.step_of_op;
    st.buf_of = sl.buffer_of_op_buffer;
    st.bufs.clear();
    for (const analysis::StepBuffer& b : sl.buffers)
      st.bufs.push_back({b.tensor, AlignUp(b.bytes, ctx.alignment()), b.first_step, b.last_step});
    const int n = st.num_steps();
    st.intrinsic_ws.resize(n);
    for (int s = 0; s < n; ++s) st.intrinsic_ws[s] = st.steps[s].workspace;
    st.row_cache.assign(n, false);
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
