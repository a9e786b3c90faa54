#include "plan/groups_csv.h"

namespace sramplan::plan {
namespace {

// A CSV field: quoted when it holds a comma, quote or newline.
std::string Field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

bool HasTiledGroups(const std::vector<Plan>& plans) {
  for (const Plan& p : plans)
    for (const Step& s : p.steps)
      if (s.kind == StepKind::kFusedTiled) return true;
  return false;
}

std::string GroupsCsv(const std::vector<Plan>& plans) {
  std::string out =
      "strategy,step,ops,first_op,last_op,tiles,tile_rows,tile_cols,tile_channels,isoa_ops,params_resident,"
      "buffer_bytes,dram_read_bytes,dram_write_bytes,halo\n";
  for (const Plan& p : plans)
    for (const Step& s : p.steps) {
      if (s.kind != StepKind::kFusedTiled || s.ops.empty()) continue;
      const TiledGroup& t = s.tiled;
      std::string isoa;
      for (size_t i = 0; i < t.isoa.size(); ++i) isoa += (i ? "|" : "") + t.isoa[i];
      out += Field(p.strategy) + "," + std::to_string(s.index) + "," + std::to_string(s.ops.size()) + "," +
             Field(s.ops.front().name) + "," + Field(s.ops.back().name) + "," + std::to_string(t.tiles) + "," +
             std::to_string(t.tile_rows) + "," + std::to_string(t.tile_cols) + "," + std::to_string(t.tile_channels) +
             "," + Field(isoa) + "," + (t.params_resident ? "1" : "0") + "," + std::to_string(t.buffer_bytes) + "," +
             std::to_string(t.dram_read_bytes) + "," + std::to_string(t.dram_write_bytes) + "," + Field(t.halo) + "\n";
    }
  return out;
}

}  // namespace sramplan::plan
