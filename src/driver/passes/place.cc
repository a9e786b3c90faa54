// place:naive|linear|tflm|optimal: places the requests (placement/). optimal is the exact search
// (best of the greedy portfolio, then branch and bound with a node limit, so plans are
// reproducible).
#include <algorithm>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "placement/optimal.h"

namespace sramplan::driver::passes {

MakeResult MakePlace(std::string_view arg) {
  return ChoicePass(
      "place", arg, {"naive", "linear", "tflm", "optimal"},
      [](PlanningContext& ctx, const std::string& a) -> Status {
        if (a != "optimal") {
          SP_ASSIGN_OR_RETURN(ctx.placed, placement::PlaceByName(a, ctx.requests));
          return Status::Ok();
        }
        placement::OptimalOptions po;
        // A safety net (capped by --time-limit); the node limit keeps plans reproducible.
        po.time_limit_s = ctx.options.search_time_limit_s > 0 ? std::min(30.0, ctx.options.search_time_limit_s) : 30;
        po.node_limit = 20000;
        placement::OptimalResult r = placement::PlaceBestOf(ctx.requests, po);
        ctx.placed = r.placement;
        // Stopped by the time limit: "not proved" with the gap (such plans are clock-dependent; a
        // stop at the node limit is reproducible and keeps its wording).
        const std::string unproved =
            r.hit_limit ? ", not proved optimal (time limit): gap " +
                              std::to_string(ctx.placed.arena_bytes - r.proved_lower_bound) + " B to the proved bound " +
                              std::to_string(r.proved_lower_bound) + " B"
                        : ", best proved bound " + std::to_string(r.proved_lower_bound) + " B";
        ctx.placement_note = "placement " + r.method + ": " + std::to_string(ctx.placed.arena_bytes) +
                             " B, live-bytes bound " + std::to_string(r.lower_bound) + " B" +
                             (r.proved_optimal ? ", proved optimal" : unproved);
        return Status::Ok();
      });
}

}  // namespace sramplan::driver::passes
