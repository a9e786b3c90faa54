// step-liveness: the liveness pass's buffers mapped onto the fused steps; a tensor produced and
// consumed inside one fused step lives in the group's workspace and owns no buffer.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {

MakeResult MakeStepLiveness(std::string_view arg) {
  return NoArgPass("step-liveness", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.vmcu) return InternalError("pass 'step-liveness' needs a fuse pass first");
    VmcuState& st = *ctx.vmcu;
    const ir::Graph& g = ctx.graph;
    const analysis::Liveness& lv = ctx.liveness;
    const int n = st.num_steps();
    const int nops = static_cast<int>(ctx.order.size());
    st.step_of_op.assign(g.num_ops(), 0);
    for (int s = 0; s < n; ++s)
      for (ir::OpId id : st.steps[s].ops) st.step_of_op[id.value()] = s;
    std::vector<int> plan_step(nops);
    for (int i = 0; i < nops; ++i) plan_step[i] = st.step_of_op[ctx.order[i].value()];
    st.bufs.clear();
    st.buf_of.assign(lv.buffers.size(), -1);
    for (size_t b = 0; b < lv.buffers.size(); ++b) {
      const auto& lb = lv.buffers[b];
      const int first = plan_step[lb.first_step], last = plan_step[lb.last_step];
      const ir::Tensor& ten = g.tensor(lb.tensor);
      if (first == last && st.steps[first].ops.size() > 1 &&
          ten.kind == ir::TensorKind::kActivation && ten.producer.valid() &&
          st.step_of_op[ten.producer.value()] == first) {
        bool inside = true;
        for (ir::OpId c : ten.consumers) inside = inside && st.step_of_op[c.value()] == first;
        if (inside) continue;
      }
      st.buf_of[b] = static_cast<int>(st.bufs.size());
      st.bufs.push_back({lb.tensor, AlignUp(lb.bytes, ctx.alignment()), first, last});
    }
    st.intrinsic_ws.resize(n);
    for (int s = 0; s < n; ++s) st.intrinsic_ws[s] = st.steps[s].workspace;
    st.row_cache.assign(n, false);
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
