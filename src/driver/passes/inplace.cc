// inplace: TinyEngine's rule. A depthwise convolution or an element-wise op writes its output over
// an input that dies at this step, when the output is no larger and the elements have the same
// size; an in-place depthwise op needs one output channel plane of scratch at its step.
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {
namespace {

std::vector<InplacePair> FindInplace(const ir::Graph& g, const analysis::Schedule& sched,
                                     const analysis::Liveness& lv) {
  std::vector<InplacePair> pairs;
  std::vector<bool> taken(lv.buffers.size(), false);  // an input can host one output
  for (size_t s = 0; s < sched.size(); ++s) {
    const ir::Op& op = g.op(sched[s]);
    bool dw = ir::IsDepthwiseConv(g, op);
    bool ew = ir::IsUnaryElementwise(op.type) || ir::IsBinaryElementwise(op.type);
    if ((!dw && !ew) || op.outputs.size() != 1) continue;
    const ir::Tensor& out = g.tensor(op.outputs[0]);
    int ob = lv.buffer_of_tensor[out.id.value()];
    if (ob < 0 || lv.buffers[ob].tensor != out.id) continue;
    size_t candidates = dw ? 1 : op.inputs.size();
    for (size_t k = 0; k < candidates && k < op.inputs.size(); ++k) {
      const ir::Tensor& in = g.tensor(op.inputs[k]);
      if (in.kind == ir::TensorKind::kConstant) continue;
      int ib = lv.buffer_of_tensor[in.id.value()];
      if (ib < 0 || taken[ib]) continue;
      const ir::Tensor& root = g.tensor(lv.buffers[ib].tensor);
      if (root.kind == ir::TensorKind::kOutput) continue;
      if (lv.buffers[ib].last_step != static_cast<int>(s)) continue;
      if (ir::DataTypeSize(root.dtype) != ir::DataTypeSize(out.dtype)) continue;
      if (lv.buffers[ob].bytes > lv.buffers[ib].bytes) continue;
      if (ew && in.shape != out.shape) continue;  // broadcast inputs cannot host the output
      taken[ib] = true;
      pairs.push_back({ob, ib, dw ? "inplace-depthwise" : "inplace-elementwise"});
      break;
    }
  }
  return pairs;
}

}  // namespace

MakeResult MakeInplace(std::string_view arg) {
  return NoArgPass("inplace", arg, [](PlanningContext& ctx) -> Status {
    const ir::Graph& g = ctx.graph;
    const analysis::Liveness& lv = ctx.liveness;
    ctx.tensors.inplace = FindInplace(g, ctx.order, lv);
    ctx.tensors.scratch.clear();
    for (const auto& p : ctx.tensors.inplace) {
      if (p.reason != "inplace-depthwise") continue;
      const ir::Tensor& out = g.tensor(lv.buffers[p.out_buffer].tensor);
      int ca = ir::ChannelAxis(g, static_cast<int>(out.shape.size()));
      int64_t plane = out.Bytes() / std::max<int64_t>(out.shape[ca], 1);
      const ir::Op& op = g.op(out.producer);
      ctx.tensors.scratch.push_back(Scratch{op.name + ".scratch", op.name, AlignUp(plane, 16),
                                            lv.buffers[p.out_buffer].first_step});
    }
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
