// weights: every weight (a constant some op reads) that has no buffer yet is laid out in the weight
// level for the whole run, one after another from the end of what that level already holds (a
// budget strategy's DRAM buffers when DRAM is also the weight level).
#include <set>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {

MakeResult MakeWeights(std::string_view arg) {
  return NoArgPass("weights", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.assembled)
      return InternalError("pass 'weights' needs an assembled plan (run an assemble pass first)");
    plan::Plan& p = ctx.plan;
    const std::string& wlevel = ctx.weight_level().name;
    std::set<std::string> placed;
    int64_t wcursor = 0;
    for (const auto& b : p.buffers) {
      placed.insert(b.tensor);
      if (b.level == wlevel) wcursor = std::max(wcursor, b.offset + b.bytes);
    }
    const int last = std::max(0, static_cast<int>(p.steps.size()) - 1);
    ctx.weight_bytes = 0;
    for (const ir::Tensor& ten : ctx.graph.tensors()) {
      if (ten.kind != ir::TensorKind::kConstant || ten.consumers.empty() || placed.count(ten.name))
        continue;
      wcursor = AlignUp(wcursor, ctx.alignment());
      p.buffers.push_back({ten.name, wlevel, wcursor, ten.Bytes(), 0, last, {}});
      wcursor += ten.Bytes();
      ctx.weight_bytes += ten.Bytes();
    }
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
