// The per-group CSV of plans with fused-tiled steps (Optimus groups): one row per group.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace sramplan::plan {

// Whether any step of any plan is fused-tiled.
bool HasTiledGroups(const std::vector<Plan>& plans);
// strategy,step,ops,first_op,last_op,tiles,tile_rows,tile_cols,tile_channels,isoa_ops,params_resident,
// buffer_bytes,dram_read_bytes,dram_write_bytes: one row per fused-tiled step, ops joined by '|'.
std::string GroupsCsv(const std::vector<Plan>& plans);

}  // namespace sramplan::plan
