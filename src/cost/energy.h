// The plan metrics' energy and traffic arithmetic (what plan.json reports as energy_pj, offchip_*
// and noncompulsory_*, and the per-level peaks), as the driver computes it. energy_pj is a
// floating-point sum, so the order of the additions is part of the result: a Ledger is filled in
// the order the plan is built (transfers, then op accesses), exactly as the strategies do today.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>

#include "analysis/liveness.h"
#include "cost/cost_model.h"
#include "cost/hardware_model.h"
#include "ir/graph.h"

namespace sramplan::cost {

// Running totals of a plan's traffic metrics (plan::Metrics' fields of the same names), and the
// same accesses per level as a Traffic for Evaluate (its macs: the MACs of the ops accessed).
struct Ledger {
  Ledger() = default;
  explicit Ledger(const HardwareModel& hw) : traffic(hw) {}
  double energy_pj = 0;
  int64_t offchip_read_bytes = 0;
  int64_t offchip_write_bytes = 0;
  int64_t noncompulsory_read_bytes = 0;
  int64_t noncompulsory_write_bytes = 0;
  Traffic traffic;
};

// A move between the arena and DRAM (spill::MoveKind): load / reload copy in, store / spill copy
// out. Reloads and spills are non-compulsory.
enum class TransferKind { kLoad, kReload, kStore, kSpill };

// One transfer of `bytes` between level `arena` and level `dram`: the bytes are read from one and
// written to the other (energy bytes * (source read + destination write)), and count as off-chip
// read (in) or write (out) bytes.
void AddTransfer(const HardwareModel& hw, int arena, int dram, TransferKind kind, int64_t bytes,
                 Ledger* ledger);

// Each op of `sched` reads its inputs and writes its outputs once: an input for which
// `in_weight_level` holds is read from level `wlevel` (off-chip bytes when that level is off chip),
// every other input from `arena`; outputs are written to `arena`, except by view ops, which write
// nothing. (driver::AddOpAccesses.)
void AddOpAccesses(const ir::Graph& g, const analysis::Schedule& sched, const HardwareModel& hw,
                   int arena, int wlevel,
                   const std::function<bool(const ir::Tensor&)>& in_weight_level, Ledger* ledger);

// How full one level is: used_bytes is the end of the highest piece placed in it.
struct LevelFill {
  int64_t capacity = 0;
  int64_t used_bytes = 0;
  void AddPiece(int64_t begin, int64_t end) { used_bytes = std::max(used_bytes, end); }
};

// The plan's occupancy metrics (driver::FinishLevelMetrics): fits when no level is used past its
// capacity; the arena's used bytes and the overhead over the lower bound in percent.
struct Occupancy {
  bool fits = true;
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;
  double overhead_pct = 0;
};
Occupancy SummarizeLevels(std::span<const LevelFill> levels, int arena, int64_t lower_bound);

}  // namespace sramplan::cost
