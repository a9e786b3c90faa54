#include "cost/energy.h"

#include "analysis/op_cost.h"

namespace sramplan::cost {

void AddTransfer(const HardwareModel& hw, int arena, int dram, TransferKind kind, int64_t bytes,
                 Ledger* ledger) {
  const LevelModel& a = hw.level(arena);
  const LevelModel& d = hw.level(dram);
  const bool in = kind == TransferKind::kLoad || kind == TransferKind::kReload;
  Traffic& tr = ledger->traffic;
  if (tr.read.size() < static_cast<size_t>(hw.num_levels())) tr += Traffic(hw);
  if (in) {
    ledger->offchip_read_bytes += bytes;
    if (kind == TransferKind::kReload) ledger->noncompulsory_read_bytes += bytes;
    ledger->energy_pj += static_cast<double>(bytes) * (d.read_pj_per_byte + a.write_pj_per_byte);
    tr.read[dram] += bytes;
    tr.write[arena] += bytes;
  } else {
    ledger->offchip_write_bytes += bytes;
    if (kind == TransferKind::kSpill) ledger->noncompulsory_write_bytes += bytes;
    ledger->energy_pj += static_cast<double>(bytes) * (a.read_pj_per_byte + d.write_pj_per_byte);
    tr.read[arena] += bytes;
    tr.write[dram] += bytes;
  }
}

void AddOpAccesses(const ir::Graph& g, const analysis::Schedule& sched, const HardwareModel& hw,
                   int arena, int wlevel,
                   const std::function<bool(const ir::Tensor&)>& in_weight_level, Ledger* ledger) {
  const LevelModel& a = hw.level(arena);
  const LevelModel& w = hw.level(wlevel);
  Traffic& tr = ledger->traffic;
  if (tr.read.size() < static_cast<size_t>(hw.num_levels())) tr += Traffic(hw);
  for (const ir::OpId id : sched) {
    const ir::Op& op = g.op(id);
    tr.macs += analysis::ComputeOpCost(g, op).macs;
    for (ir::TensorId in : op.inputs) {
      const ir::Tensor& ten = g.tensor(in);
      if (in_weight_level(ten)) {
        ledger->energy_pj += static_cast<double>(ten.Bytes()) * w.read_pj_per_byte;
        if (w.off_chip) ledger->offchip_read_bytes += ten.Bytes();
        tr.read[wlevel] += ten.Bytes();
      } else {
        ledger->energy_pj += static_cast<double>(ten.Bytes()) * a.read_pj_per_byte;
        tr.read[arena] += ten.Bytes();
      }
    }
    if (ir::IsViewOp(op.type)) continue;
    for (ir::TensorId out : op.outputs) {
      ledger->energy_pj += static_cast<double>(g.tensor(out).Bytes()) * a.write_pj_per_byte;
      tr.write[arena] += g.tensor(out).Bytes();
    }
  }
}

Occupancy SummarizeLevels(std::span<const LevelFill> levels, int arena, int64_t lower_bound) {
  Occupancy o;
  for (int l = 0; l < static_cast<int>(levels.size()); ++l) {
    if (l == arena) o.arena_bytes = levels[l].used_bytes;
    if (levels[l].used_bytes > levels[l].capacity) o.fits = false;
  }
  o.lower_bound_bytes = lower_bound;
  o.overhead_pct = lower_bound > 0 ? 100.0 * static_cast<double>(o.arena_bytes - lower_bound) /
                                         static_cast<double>(lower_bound)
                                   : 0.0;
  return o;
}

}  // namespace sramplan::cost
