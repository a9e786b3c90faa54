// metrics: per-level lower bounds (the arena's from the strategy, the weight level's: its weights),
// used bytes, peak, fits; then every op's accesses: it reads its inputs and writes its outputs
// once, weights from the weight level (off-chip reads when that level is off chip) unless the plan
// holds them on chip.
#include <set>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"

namespace sramplan::driver::passes {

MakeResult MakeMetrics(std::string_view arg) {
  return NoArgPass("metrics", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.assembled)
      return InternalError("pass 'metrics' needs an assembled plan (run an assemble pass first)");
    plan::Plan& p = ctx.plan;
    const target::MemoryLevel& arena = ctx.arena();
    const target::MemoryLevel& wlevel = ctx.weight_level();
    for (auto& l : p.levels) {
      if (l.name == arena.name) l.lower_bound_bytes = ctx.lower_bound;
      if (l.name == wlevel.name && wlevel.name != arena.name)
        l.lower_bound_bytes = ctx.weight_bytes;
    }
    FinishLevelMetrics(arena.name, ctx.lower_bound, &p);
    std::set<std::string> on_chip;
    for (const auto& b : p.buffers)
      if (b.level == arena.name) on_chip.insert(b.tensor);
    AddOpAccesses(
        ctx.graph, ctx.order, arena, wlevel,
        [&](const ir::Tensor& ten) {
          return ten.kind == ir::TensorKind::kConstant && !on_chip.count(ten.name);
        },
        &p.metrics);
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
