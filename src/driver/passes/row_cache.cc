// row-cache: Faster fused kernels where memory allows: the row cache (R rows of the expanded plane,
// every plane pixel expanded once) instead of the R*S-slot column cache (pixels re-expanded for
// each output row), on the fused steps whose larger workspace keeps the arena as it is.
// Afterwards every step's workspace is the one it runs with (row cache or its own).
#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {

MakeResult MakeRowCache(std::string_view arg) {
  return VmcuPass("row-cache", arg, [](PlanningContext& ctx, VmcuState& st, const VmcuInputs& in) -> Status {
    const int n = st.num_steps();
    if (st.pool_bytes == 0) {
      const int64_t arena = st.best.placed.placement.arena_bytes;
      const std::vector<int64_t> live = LiveOf(in, st.best);
      // The steps' own (column-cache) workspaces: not best.workspace, which is 0 where that layout
      // runs a depthwise step in place; a new layout may run it as a segment step again and then
      // needs its workspace (issue 12: such plans had segment steps without a workspace buffer).
      const std::vector<int64_t> column_ws = st.intrinsic_ws;
      for (int64_t slack_pct : {100, 80}) {
        std::vector<bool> rc(n, false);
        bool any = false;
        for (int s = 0; s < n; ++s) {
          st.steps[s].workspace = column_ws[s];
          if (st.steps[s].kind != "bottleneck" || st.steps[s].workspace_rows <= 0 ||
              st.steps[s].workspace_rows <= st.steps[s].workspace)
            continue;
          if ((live[s] + st.steps[s].workspace_rows) * 100 > arena * slack_pct) continue;
          st.steps[s].workspace = st.steps[s].workspace_rows;
          rc[s] = any = true;
        }
        if (!any) break;
        Layout l = SearchLayout(in);
        if (l.placed.placement.arena_bytes <= arena) {
          st.best = std::move(l);
          st.row_cache = rc;
          break;
        }
      }
    }
    for (int s = 0; s < n; ++s)
      st.steps[s].workspace = st.row_cache[s] ? st.steps[s].workspace_rows : st.intrinsic_ws[s];
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
