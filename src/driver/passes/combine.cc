// assemble-best: beyond the module-buffering paper: module buffering where it wins and COSMA's
// spilling elsewhere, never worse than either. Candidates on the same budget: the whole network
// planned with module buffering (modulebuf-reorder) and with COSMA's tensor replacement (the joint
// ILP, and the greedy and Belady baselines when it has no plan), and the per-region combination
// (driver/region_combine.h: regions between single-tensor boundaries, each planned both ways, the
// cheapest segments stitched). The plan with the fewest off-chip bytes wins (ties: the whole-network
// plan, module buffering first). COSMA needs every op's inputs and outputs on chip at once (M_min);
// below that only module buffering, which streams layers that do not fit, plans the whole network,
// while COSMA may still plan the regions whose own M_min fits.
#include <chrono>
#include <climits>
#include <map>
#include <optional>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/region_combine.h"
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
    // --time-limit (a budget for the whole plan): half for the whole network, half for the regions;
    // without it each gets the ILP's time limit.
    const bool shared = ctx.options.search_time_limit_s > 0;
    const double whole_s = shared ? ctx.options.time_limit_s / 2 : ctx.options.time_limit_s;
    const auto start = std::chrono::steady_clock::now();
    for (const char* name : {"modulebuf-reorder", "cosma", "greedy", "belady"}) {
      const bool cosma_family = std::string(name) != "modulebuf-reorder";
      if (cosma_family && best && best->strategy != "modulebuf-reorder") break;  // a COSMA plan is in
      PlanOptions o = ctx.options;
      o.report = nullptr;
      o.time_limit_s = whole_s;
      if (shared) o.search_time_limit_s = whole_s;
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
    const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double region_s = shared ? std::max(kMinStageSeconds, ctx.options.time_limit_s - used) : ctx.options.time_limit_s;
    SP_ASSIGN_OR_RETURN(RegionCombination regions,
                        CombineRegions(ctx, best ? total(*best) : INT64_MAX, region_s));
    if (regions.plan) best = std::move(regions.plan);
    if (!best)
      return OutOfMemory("neither module buffering nor COSMA has a plan for this budget: " + tried + "; " +
                         regions.note);
    const std::string chosen = best->schedule == "regions" ? "the per-region combination" : best->strategy;
    ctx.plan = std::move(*best);
    ctx.plan.notes.push_back("combine: kept " + chosen + " (" + tried + "; " + regions.note + ")");
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
