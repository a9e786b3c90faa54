// assemble-best: beyond the module-buffering paper: plans the network with module buffering
// (modulebuf-reorder) and with COSMA's tensor replacement (the joint ILP, and the greedy and Belady
// baselines when it has no plan) on the same budget, and keeps the plan with the fewest off-chip
// bytes (ties: module buffering), so it is never worse than either. COSMA needs every op's inputs
// and outputs on chip at once (M_min); below that only module buffering, which streams layers that
// do not fit, has a plan. The choice is per network, not per region.
#include <map>
#include <optional>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/strategy.h"

namespace sramplan::driver::passes {
namespace {

// Weights read from an off-chip level (the feature-map / weight split for plans that lack it).
void SplitDram(plan::Plan* p) {
  if (p->metrics.dram_split) return;
  std::map<std::string, std::string> level_kind;
  for (const auto& l : p->levels) level_kind[l.name] = l.kind;
  std::map<std::string, const plan::Tensor*> tens;
  for (const auto& t : p->tensors) tens[t.name] = &t;
  int64_t weights = 0;
  for (const auto& st : p->steps)
    for (const auto& op : st.ops)
      for (const auto& in : op.inputs) {
        if (!tens.count(in) || tens[in]->kind != "constant") continue;
        bool on_chip = false, off_chip = false;
        for (const auto& b : p->buffers)
          if (b.tensor == in && b.first_step <= st.index && st.index <= b.last_step)
            (level_kind[b.level] == "dram" || level_kind[b.level] == "flash" ? off_chip : on_chip) = true;
        if (off_chip && !on_chip) weights += tens[in]->bytes;
      }
  p->metrics.dram_split = true;
  p->metrics.weight_dram_bytes = weights;
  p->metrics.fm_dram_bytes = p->metrics.offchip_read_bytes + p->metrics.offchip_write_bytes - weights;
}

}  // namespace

MakeResult MakeCombine(std::string_view arg) {
  return NoArgPass("assemble-best", arg, [](PlanningContext& ctx) -> Status {
    std::optional<plan::Plan> best;
    std::string tried;
    auto total = [](const plan::Plan& p) { return p.metrics.offchip_read_bytes + p.metrics.offchip_write_bytes; };
    for (const char* name : {"modulebuf-reorder", "cosma", "greedy", "belady"}) {
      const bool cosma_family = std::string(name) != "modulebuf-reorder";
      if (cosma_family && best && best->strategy != "modulebuf-reorder") break;  // a COSMA plan is in
      PlanOptions o = ctx.options;
      o.report = nullptr;
      StatusOr<plan::Plan> p = RunStrategy(ctx.graph, ctx.target, name, o);
      if (!p.ok()) {
        if (p.status().code() != StatusCode::kOutOfMemory) return p.status();
        const std::string msg = p.status().message();
        tried += std::string(tried.empty() ? "" : "; ") + name + ": no plan (" + msg.substr(0, msg.find(';')) + ")";
        if (cosma_family && msg.find("M_min") != std::string::npos) break;  // the baselines share M_min
        continue;
      }
      SplitDram(&*p);
      tried += std::string(tried.empty() ? "" : "; ") + name + ": " + std::to_string(total(*p)) + " B off chip";
      if (!best || total(*p) < total(*best)) best = std::move(p).value();
      else if (cosma_family) break;  // COSMA planned but lost: its baselines will not do better here
    }
    if (!best) return OutOfMemory("neither module buffering nor COSMA has a plan for this budget: " + tried);
    const std::string chosen = best->strategy;
    ctx.plan = std::move(*best);
    ctx.plan.notes.push_back("combine: kept " + chosen + " (" + tried + ")");
    ctx.plan.strategy = ctx.spec.name;
    ctx.order.clear();
    for (const auto& st : ctx.plan.steps)
      for (const auto& so : st.ops)
        for (const ir::Op& op : ctx.graph.ops())
          if (op.name == so.name) ctx.order.push_back(op.id);
    ctx.assembled = true;
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
