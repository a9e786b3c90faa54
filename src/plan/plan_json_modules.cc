#include "plan/plan_json_modules.h"

namespace sramplan::plan {
namespace {

using ordered = nlohmann::ordered_json;
constexpr int64_t kMaxBytes = int64_t{1} << 50;

ordered Regions(const std::vector<ModuleRegion>& rs) {
  ordered a = ordered::array();
  for (const auto& r : rs)
    a.push_back({{"tensor", r.tensor}, {"offset", r.offset}, {"bytes", r.bytes}, {"depth", r.depth}});
  return a;
}

Status ReadRegions(const JsonRef& m, std::string_view key, std::vector<ModuleRegion>* out) {
  if (!m.Has(key)) return Status::Ok();
  SP_ASSIGN_OR_RETURN(JsonRef a, m.Array(key));
  for (size_t i = 0; i < a.size(); ++i) {
    const JsonRef r = a[i];
    SP_RETURN_IF_ERROR(r.ExpectObject());
    ModuleRegion x;
    SP_ASSIGN_OR_RETURN(x.tensor, r.String("tensor"));
    SP_ASSIGN_OR_RETURN(x.offset, r.IntOr("offset", -1, -1, kMaxBytes));
    SP_ASSIGN_OR_RETURN(x.bytes, r.IntOr("bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(int64_t depth, r.IntOr("depth", 1, 1, 1000));
    x.depth = static_cast<int>(depth);
    out->push_back(std::move(x));
  }
  return Status::Ok();
}

}  // namespace

void ModulesToJson(const Plan& p, ordered* j) {
  if (p.modules.empty()) return;
  ordered a = ordered::array();
  for (const Module& m : p.modules) {
    ordered br = ordered::array();
    for (size_t b = 0; b < m.branches.size(); ++b)
      br.push_back({{"ops", m.branches[b]},
                    {"req_bytes", b < m.branch_req_bytes.size() ? m.branch_req_bytes[b] : 0}});
    a.push_back({{"name", m.name},
                 {"depth", m.depth},
                 {"merge", m.merge},
                 {"processing", m.processing},
                 {"ops", m.ops},
                 {"branches", br},
                 {"mifm", Regions(m.mifm)},
                 {"mofm", Regions(m.mofm)},
                 {"fm_read_bytes", m.fm_read_bytes},
                 {"fm_write_bytes", m.fm_write_bytes},
                 {"weight_bytes", m.weight_bytes},
                 {"fm_reads", m.fm_reads},
                 {"fm_writes", m.fm_writes}});
  }
  (*j)["modules"] = a;
}

void DramSplitToJson(const Metrics& m, ordered* metrics) {
  if (!m.dram_split) return;
  (*metrics)["dram_read_bytes"] = m.offchip_read_bytes;
  (*metrics)["dram_write_bytes"] = m.offchip_write_bytes;
  (*metrics)["fm_dram_bytes"] = m.fm_dram_bytes;
  (*metrics)["weight_dram_bytes"] = m.weight_dram_bytes;
}

Status ModulesFromJson(const JsonRef& j, Plan* p) {
  if (!j.Has("modules")) return Status::Ok();
  SP_ASSIGN_OR_RETURN(JsonRef a, j.Array("modules"));
  for (size_t i = 0; i < a.size(); ++i) {
    const JsonRef m = a[i];
    SP_RETURN_IF_ERROR(m.ExpectObject());
    Module x;
    SP_ASSIGN_OR_RETURN(x.name, m.String("name"));
    SP_ASSIGN_OR_RETURN(int64_t depth, m.IntOr("depth", 1, 1, 1000));
    x.depth = static_cast<int>(depth);
    SP_ASSIGN_OR_RETURN(x.merge, m.StringOr("merge", ""));
    SP_ASSIGN_OR_RETURN(x.processing, m.StringOr("processing", ""));
    SP_ASSIGN_OR_RETURN(x.ops, m.StringListOr("ops"));
    if (m.Has("branches")) {
      SP_ASSIGN_OR_RETURN(JsonRef br, m.Array("branches"));
      for (size_t b = 0; b < br.size(); ++b) {
        SP_RETURN_IF_ERROR(br[b].ExpectObject());
        SP_ASSIGN_OR_RETURN(std::vector<std::string> ops, br[b].StringListOr("ops"));
        SP_ASSIGN_OR_RETURN(int64_t req, br[b].IntOr("req_bytes", 0, 0, kMaxBytes));
        x.branches.push_back(std::move(ops));
        x.branch_req_bytes.push_back(req);
      }
    }
    SP_RETURN_IF_ERROR(ReadRegions(m, "mifm", &x.mifm));
    SP_RETURN_IF_ERROR(ReadRegions(m, "mofm", &x.mofm));
    SP_ASSIGN_OR_RETURN(x.fm_read_bytes, m.IntOr("fm_read_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(x.fm_write_bytes, m.IntOr("fm_write_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(x.weight_bytes, m.IntOr("weight_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(int64_t r, m.IntOr("fm_reads", 0, 0, 1 << 30));
    SP_ASSIGN_OR_RETURN(int64_t w, m.IntOr("fm_writes", 0, 0, 1 << 30));
    x.fm_reads = static_cast<int>(r);
    x.fm_writes = static_cast<int>(w);
    p->modules.push_back(std::move(x));
  }
  return Status::Ok();
}

Status DramSplitFromJson(const JsonRef& metrics, Metrics* m) {
  if (!metrics.Has("fm_dram_bytes") && !metrics.Has("weight_dram_bytes")) return Status::Ok();
  m->dram_split = true;
  SP_ASSIGN_OR_RETURN(m->fm_dram_bytes, metrics.IntOr("fm_dram_bytes", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(m->weight_dram_bytes, metrics.IntOr("weight_dram_bytes", 0, 0, kMaxBytes));
  return Status::Ok();
}

}  // namespace sramplan::plan
