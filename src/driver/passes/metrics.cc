// metrics: per-level lower bounds (the arena's from the strategy, the weight level's: its weights),
// used bytes, peak, fits; then every op's accesses: it reads its inputs and writes its outputs
// once, weights from the weight level (off-chip reads when that level is off chip) unless the plan
// holds them on chip.
#include <set>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "cost/energy.h"
#include "driver/plan_build.h"
#include "spill/spill_bound.h"

namespace sramplan::driver::passes {

cost::Ledger LedgerOf(const cost::HardwareModel& hw, const plan::Metrics& m) {
  cost::Ledger l(hw);
  l.energy_pj = m.energy_pj;
  l.offchip_read_bytes = m.offchip_read_bytes;
  l.offchip_write_bytes = m.offchip_write_bytes;
  l.noncompulsory_read_bytes = m.noncompulsory_read_bytes;
  l.noncompulsory_write_bytes = m.noncompulsory_write_bytes;
  return l;
}

void StoreLedger(const cost::Ledger& l, plan::Metrics* m) {
  m->energy_pj = l.energy_pj;
  m->offchip_read_bytes = l.offchip_read_bytes;
  m->offchip_write_bytes = l.offchip_write_bytes;
  m->noncompulsory_read_bytes = l.noncompulsory_read_bytes;
  m->noncompulsory_write_bytes = l.noncompulsory_write_bytes;
}

MakeResult MakeMetrics(std::string_view arg) {
  return NoArgPass("metrics", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.assembled) return InternalError("pass 'metrics' needs an assembled plan (run an assemble pass first)");
    plan::Plan& p = ctx.plan;
    plan::Metrics& m = p.metrics;
    const int arena = ctx.target.arena_level, wlevel = ctx.target.weight_level;
    for (size_t i = 0; i < p.levels.size(); ++i) {
      if (static_cast<int>(i) == arena) p.levels[i].lower_bound_bytes = ctx.lower_bound;
      if (static_cast<int>(i) == wlevel && wlevel != arena) p.levels[i].lower_bound_bytes = ctx.weight_bytes;
    }
    // Levels: used bytes, peaks, fits (cost::SummarizeLevels).
    std::vector<cost::LevelFill> fills(p.levels.size());
    for (size_t i = 0; i < p.levels.size(); ++i) {
      fills[i].capacity = p.levels[i].capacity;
      for (const auto& b : p.buffers)
        if (b.level == p.levels[i].name)
          for (const auto& [lo, hi] : plan::BufferPieces(p, b)) fills[i].AddPiece(lo, hi);
      p.levels[i].used_bytes = fills[i].used_bytes;
      m.peak_bytes[p.levels[i].name] = fills[i].used_bytes;
    }
    const cost::Occupancy occ = cost::SummarizeLevels(fills, arena, ctx.lower_bound);
    m.fits = occ.fits;
    m.arena_bytes = occ.arena_bytes;
    m.lower_bound_bytes = occ.lower_bound_bytes;
    m.overhead_pct = occ.overhead_pct;
    // Op accesses, after whatever transfers added (the energy sum's order is part of the result).
    std::set<std::string> on_chip;
    for (const auto& b : p.buffers)
      if (b.level == p.levels[arena].name) on_chip.insert(b.tensor);
    cost::Ledger ledger = LedgerOf(ctx.hw, m);
    cost::AddOpAccesses(
        ctx.graph, ctx.order, ctx.hw, ctx.hw.arena(), ctx.hw.weights(),
        [&](const ir::Tensor& ten) { return ten.kind == ir::TensorKind::kConstant && !on_chip.count(ten.name); },
        &ledger);
    StoreLedger(ledger, &m);
    // COSMA strategies: the bound over every order and the gap to it.
    if (ctx.budget && ctx.budget->solution.all_orders_lower_bound_bytes >= 0) {
      const spill::SpillSolution& sol = ctx.budget->solution;
      m.noncompulsory_lower_bound_bytes = sol.all_orders_lower_bound_bytes;
      m.noncompulsory_gap_pct = spill::GapPercent(sol.noncompulsory_bytes, sol.all_orders_lower_bound_bytes);
    }
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
