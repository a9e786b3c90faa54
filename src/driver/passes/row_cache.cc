// row-cache[:N]: Faster fused kernels where memory allows: the row cache (R rows of the expanded
// plane, every plane pixel expanded once) instead of the R*S-slot column cache (pixels re-expanded
// for each output row), on the fused steps whose larger workspace keeps the arena as it is
// (`row-cache`: the vmcu-small strategy), or lets it grow by at most N percent (`row-cache:N`, faster
// but bigger: the vmcu-fast strategy), or by at most 10% while the arena still fits the target's
// arena level (`row-cache:fit`: the vmcu strategy, the fastest plan that fits). Where the circular
// pool was chosen, row caches go inside it on the steps where it still places at its size, and a
// growth allowance lets a linear layout that runs more row caches replace it. Afterwards
// every step's workspace is the one it runs with (row cache or its own).
#include <algorithm>
#include <charconv>
#include <limits>

#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {
namespace {

// Row caches on the fused steps whose live bytes plus row-cache workspace stay under slack_pct of
// `limit` (an estimate: the layout search may overlap more), for each slack in turn; the first
// layout whose arena is at most `limit` is kept. True if one was kept.
bool TryRowCaches(VmcuState& st, const VmcuInputs& in, const std::vector<int64_t>& live,
                  const std::vector<int64_t>& column_ws, int64_t limit,
                  const std::vector<int64_t>& slacks_pct) {
  const int n = st.num_steps();
  for (int64_t slack_pct : slacks_pct) {
    std::vector<bool> rc(n, false);
    bool any = false;
    for (int s = 0; s < n; ++s) {
      st.steps[s].workspace = column_ws[s];
      if (st.steps[s].kind != "bottleneck" || st.steps[s].workspace_rows <= 0 ||
          st.steps[s].workspace_rows <= st.steps[s].workspace)
        continue;
      if ((live[s] + st.steps[s].workspace_rows) * 100 > limit * slack_pct) continue;
      st.steps[s].workspace = st.steps[s].workspace_rows;
      rc[s] = any = true;
    }
    if (!any) break;
    Layout l = SearchLayout(in);
    if (l.placed.placement.arena_bytes <= limit) {
      st.best = std::move(l);
      st.row_cache = rc;
      return true;
    }
  }
  return false;
}

// The growth `row-cache:fit` allows, in percent of the smallest arena.
constexpr int kFitGrowPct = 10;

// Bytes of the target's arena level (where the plan puts activations); no limit if it has none.
int64_t ArenaCapacity(const target::Target& t) {
  if (t.arena_level >= 0 && t.arena_level < static_cast<int>(t.levels.size()) &&
      t.levels[t.arena_level].capacity > 0)
    return t.levels[t.arena_level].capacity;
  return std::numeric_limits<int64_t>::max();
}

}  // namespace

MakeResult MakeRowCache(std::string_view arg) {
  int grow_pct = 0;
  // `row-cache:fit` (the vmcu strategy's): up to kFitGrowPct growth, only while the grown arena still
  // fits the target's arena level ("fastest that still fits the target").
  const bool fit = arg == "fit";
  if (fit) {
    grow_pct = kFitGrowPct;
  } else if (!arg.empty()) {
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), grow_pct);
    if (ec != std::errc() || end != arg.data() + arg.size() || grow_pct < 1 || grow_pct > 50)
      return InvalidArgument("pass 'row-cache:" + std::string(arg) +
                             "': the argument is the arena growth the row caches may cost, in percent, "
                             "1 to 50 (e.g. row-cache:10), or 'fit' (up to 10% where the arena still fits "
                             "the target); write 'row-cache' for none");
  }
  std::string name = arg.empty() ? "row-cache" : "row-cache:" + std::string(arg);
  return std::unique_ptr<Pass>(new FunctionPass(name, [name, grow_pct, fit](PlanningContext& ctx) -> Status {
    SP_ASSIGN_OR_RETURN(VmcuState * st, VmcuOf(ctx, name));
    const VmcuInputs in{ctx.graph, ctx.target, ctx.liveness, *st};
    const int n = st->num_steps();
    if (st->pool_bytes == 0) {
      const int64_t arena = st->best.placed.placement.arena_bytes;
      const std::vector<int64_t> live = LiveOf(in, st->best);
      // The steps' own (column-cache) workspaces: not best.workspace, which is 0 where that layout
      // runs a depthwise step in place; a new layout may run it as a segment step again and then
      // needs its workspace (issue 12: such plans had segment steps without a workspace buffer).
      const std::vector<int64_t> column_ws = st->intrinsic_ws;
      // Faster but bigger first (more steps fit under the larger limit), then the arena as it is.
      // With a growth allowance the candidates are also tried above the limit (the estimate is
      // pessimistic; MCUNet's 7x7 stride-2 step fits in the layout though not in the estimate).
      int64_t grown = arena + arena * grow_pct / 100;
      if (fit) grown = std::min(grown, ArenaCapacity(ctx.target));
      if (grown <= arena ||
          !TryRowCaches(*st, in, live, column_ws, grown, {150, 125, 100, 80}))
        TryRowCaches(*st, in, live, column_ws, arena, {100, 80});
    } else {
      // The circular pool won over the linear layout. The fused kernel reads its input and writes
      // its output through the pool's wrap in both cache modes, so row caches go inside the pool on
      // the fused steps whose larger workspace still lets it place at the same size P (MCUNet under
      // vmcu-small: 15 of 16 fused steps). With a growth allowance, a linear layout with row caches
      // then replaces the pool where its arena is within that allowance and it runs more of them.
      const int64_t P = st->pool_bytes, arena = st->best.placed.placement.arena_bytes;
      const std::vector<int64_t> live = LiveOf(in, st->best);
      for (int64_t slack_pct : {100, 80}) {
        std::vector<bool> rc(n, false);
        bool any = false;
        for (int s = 0; s < n; ++s) {
          st->steps[s].workspace = st->intrinsic_ws[s];
          if (st->steps[s].kind != "bottleneck" || st->steps[s].workspace_rows <= st->steps[s].workspace ||
              (live[s] + st->steps[s].workspace_rows) * 100 > P * slack_pct)
            continue;
          st->steps[s].workspace = st->steps[s].workspace_rows;
          rc[s] = any = true;
        }
        if (!any) break;
        if (PlaceCircularPool(ctx, *st, in, P, P + 1, ctx.alignment())) {
          st->row_cache = rc;
          break;
        }
      }
      int64_t grown = arena + arena * grow_pct / 100;
      if (fit) grown = std::min(grown, ArenaCapacity(ctx.target));
      if (grown > arena) {
        const Layout pool_best = st->best;
        const std::vector<bool> pool_rc = st->row_cache;
        if (TryRowCaches(*st, in, live, st->intrinsic_ws, grown, {150, 125, 100, 80}) &&
            std::count(st->row_cache.begin(), st->row_cache.end(), true) >
                std::count(pool_rc.begin(), pool_rc.end(), true)) {
          st->pool_bytes = 0;
        } else {
          st->best = pool_best;
          st->row_cache = pool_rc;
        }
      }
    }
    for (int s = 0; s < n; ++s)
      st->steps[s].workspace = st->row_cache[s] ? st->steps[s].workspace_rows : st->intrinsic_ws[s];
    return Status::Ok();
  }));
}

}  // namespace sramplan::driver::passes
