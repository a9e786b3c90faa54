#include <limits>
#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "plan/plan_json.h"
#include "plan/plan_json_modules.h"
#include "support/int_math.h"
#include "support/json.h"

namespace sramplan::plan {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

}  // namespace

std::string PlanToJson(const Plan& p) {
  ordered j;
  j["schema_version"] = p.schema_version;
  j["model"] = p.model;
  j["target"] = p.target;
  j["strategy"] = p.strategy;
  j["schedule"] = p.schedule;
  j["dtype"] = p.dtype;
  j["batch"] = p.batch;
  j["arena_level"] = p.arena_level;
  j["levels"] = ordered::array();
  for (const auto& l : p.levels) {
    j["levels"].push_back({{"name", l.name},
                           {"kind", l.kind},
                           {"capacity", l.capacity},
                           {"used_bytes", l.used_bytes},
                           {"lower_bound_bytes", l.lower_bound_bytes},
                           {"holds_activations", l.holds_activations}});
    if (!l.pool_of.empty()) {  // a memory pool of the target level `pool_of` (written only then)
      j["levels"].back()["pool_of"] = l.pool_of;
      j["levels"].back()["base"] = l.base;
    }
  }
  j["steps"] = ordered::array();
  for (const auto& s : p.steps) {
    ordered ops = ordered::array();
    for (const auto& o : s.ops) {
      ordered e = {{"name", o.name}, {"type", o.type}, {"inputs", o.inputs}, {"outputs", o.outputs}};
      if (!o.attrs.empty()) {
        ordered a = ordered::object();
        for (const auto& [k, v] : o.attrs) a[k] = v;
        e["attrs"] = a;
      }
      ops.push_back(e);
    }
    ordered params = ordered::object();
    if (!s.workspace.empty()) params["workspace"] = s.workspace;
    if (s.segment_bytes != 0) params["segment_bytes"] = s.segment_bytes;
    if (s.row_cache) params["row_cache"] = true;
    if (s.kind == StepKind::kFusedTiled) {
      const TiledGroup& t = s.tiled;
      params["group"] = {{"tiles", t.tiles}, {"tile_rows", t.tile_rows}, {"tile_cols", t.tile_cols},
                         {"tile_channels", t.tile_channels}, {"isoa", t.isoa},
                         {"params_resident", t.params_resident}, {"buffer_bytes", t.buffer_bytes},
                         {"dram_read_bytes", t.dram_read_bytes}, {"dram_write_bytes", t.dram_write_bytes},
                         {"halo", t.halo}};
    }
    j["steps"].push_back({{"index", s.index}, {"kind", StepKindName(s.kind)}, {"params", params}, {"ops", ops}});
  }
  j["tensors"] = ordered::array();
  for (const auto& t : p.tensors) {
    ordered e = {{"name", t.name}, {"bytes", t.bytes}, {"kind", t.kind}, {"dtype", t.dtype},
                 {"shape", t.shape}, {"producer", t.producer.empty() ? ordered() : ordered(t.producer)},
                 {"consumers", t.consumers}};
    if (!t.alias_of.empty()) e["alias_of"] = t.alias_of;
    j["tensors"].push_back(e);
  }
  j["buffers"] = ordered::array();
  for (const auto& b : p.buffers) {
    ordered ov = ordered::array();
    for (const auto& o : b.overlaps) ov.push_back({{"tensor", o.tensor}, {"reason", o.reason}, {"shift", o.shift}});
    j["buffers"].push_back({{"tensor", b.tensor}, {"level", b.level}, {"offset", b.offset},
                            {"bytes", b.bytes}, {"first_step", b.first_step},
                            {"last_step", b.last_step}, {"overlaps", ov}});
  }
  j["transfers"] = ordered::array();
  for (const auto& t : p.transfers)
    j["transfers"].push_back({{"step", t.step}, {"kind", t.kind}, {"tensor", t.tensor},
                              {"bytes", t.bytes}, {"from", t.from}, {"to", t.to}});
  if (!p.pools.empty()) {
    j["pools"] = ordered::array();
    for (const auto& pool : p.pools)
      j["pools"].push_back({{"level", pool.level}, {"bytes", pool.bytes}, {"segment_bytes", pool.segment_bytes}});
  }
  const Metrics& m = p.metrics;
  ordered peaks = ordered::object();
  for (const auto& [k, v] : m.peak_bytes) peaks[k] = v;
  j["metrics"] = {{"fits", m.fits},
                  {"peak_bytes", peaks},
                  {"arena_bytes", m.arena_bytes},
                  {"lower_bound_bytes", m.lower_bound_bytes},
                  {"overhead_pct", m.overhead_pct},
                  {"offchip_read_bytes", m.offchip_read_bytes},
                  {"offchip_write_bytes", m.offchip_write_bytes},
                  {"noncompulsory_read_bytes", m.noncompulsory_read_bytes},
                  {"noncompulsory_write_bytes", m.noncompulsory_write_bytes},
                  {"budget_bytes", m.budget_bytes},
                  {"inplace_saved_bytes", m.inplace_saved_bytes},
                  {"energy_pj", m.energy_pj}};
  DramSplitToJson(m, &j["metrics"]);
  if (m.noncompulsory_lower_bound_bytes >= 0) {
    j["metrics"]["noncompulsory_lower_bound_bytes"] = m.noncompulsory_lower_bound_bytes;
    j["metrics"]["noncompulsory_gap_pct"] = m.noncompulsory_gap_pct;
  }
  bool tiled = false;
  for (const auto& s : p.steps) tiled = tiled || s.kind == StepKind::kFusedTiled;
  if (tiled) {
    j["metrics"]["dram_read_bytes"] = m.dram_read_bytes;
    j["metrics"]["dram_write_bytes"] = m.dram_write_bytes;
  }
  j["notes"] = p.notes;
  ModulesToJson(p, &j);
  return j.dump(1, ' ', false, ordered::error_handler_t::replace);
}

namespace {

// Ranges of the integer fields: byte counts and offsets within kMaxBytes (2^50); step indices are
// ints; batch and schema_version are positive ints.
constexpr int64_t kStepMax = kInt32Max;

// schema_version: 1 (steps without kinds; converted by InferStepKinds) or 2.
StatusOr<int64_t> ReadVersion(const JsonRef& j) {
  SP_ASSIGN_OR_RETURN(int64_t version, j.Int("schema_version", 0, kInt32Max));
  if (version != 1 && version != kSchemaVersion)
    return j.Child("schema_version").Error("version " + std::to_string(version) +
                                           " is not supported (this sramplan reads 1 and " +
                                           std::to_string(kSchemaVersion) + ")");
  return version;
}

// A version-2 step's "kind" and "params" (workspace, segment_bytes, row_cache; each optional).
Status ReadStepKind(const JsonRef& s, Step* st) {
  SP_ASSIGN_OR_RETURN(std::string kind, s.StringOr("kind", "op"));
  if (!ParseStepKind(kind, &st->kind))
    return s.Child("kind").Error("unknown step kind '" + kind +
                                 "' (op, inplace-depthwise, segment, fused-bottleneck, fused-tiled, module)");
  if (!s.Has("params")) return Status::Ok();
  SP_ASSIGN_OR_RETURN(JsonRef params, s.Object("params"));
  SP_ASSIGN_OR_RETURN(st->workspace, params.StringOr("workspace", ""));
  SP_ASSIGN_OR_RETURN(st->segment_bytes, params.IntOr("segment_bytes", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(st->row_cache, params.BoolOr("row_cache", false));
  if (!params.Has("group")) return Status::Ok();
  SP_ASSIGN_OR_RETURN(JsonRef g, params.Object("group"));
  TiledGroup& t = st->tiled;
  SP_ASSIGN_OR_RETURN(t.tiles, g.IntOr("tiles", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.tile_rows, g.IntOr("tile_rows", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.tile_cols, g.IntOr("tile_cols", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.tile_channels, g.IntOr("tile_channels", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.isoa, g.StringListOr("isoa"));
  SP_ASSIGN_OR_RETURN(t.params_resident, g.BoolOr("params_resident", false));
  SP_ASSIGN_OR_RETURN(t.buffer_bytes, g.IntOr("buffer_bytes", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.dram_read_bytes, g.IntOr("dram_read_bytes", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.dram_write_bytes, g.IntOr("dram_write_bytes", 0, 0, kMaxBytes));
  SP_ASSIGN_OR_RETURN(t.halo, g.StringOr("halo", "recompute"));
  return Status::Ok();
}

// steps[]: each step's index, kind and params (version 2) and its ops.
Status ReadSteps(const JsonRef& j, int64_t version, Plan* plan) {
  Plan& p = *plan;
  SP_ASSIGN_OR_RETURN(JsonRef steps, j.Array("steps"));
  p.steps.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const JsonRef s = steps[i];
    SP_RETURN_IF_ERROR(s.ExpectObject());
    Step st;
    SP_ASSIGN_OR_RETURN(int64_t index, s.Int("index", 0, kStepMax));
    st.index = static_cast<int>(index);
    if (version >= 2) SP_RETURN_IF_ERROR(ReadStepKind(s, &st));
    SP_ASSIGN_OR_RETURN(JsonRef ops, s.Array("ops"));
    for (size_t k = 0; k < ops.size(); ++k) {
      const JsonRef o = ops[k];
      SP_RETURN_IF_ERROR(o.ExpectObject());
      StepOp so;
      SP_ASSIGN_OR_RETURN(so.name, o.String("name"));
      SP_ASSIGN_OR_RETURN(so.type, o.String("type"));
      SP_ASSIGN_OR_RETURN(so.inputs, o.StringList("inputs"));
      SP_ASSIGN_OR_RETURN(so.outputs, o.StringList("outputs"));
      if (o.Has("attrs")) {
        SP_ASSIGN_OR_RETURN(JsonRef attrs, o.Object("attrs"));
        for (const auto& [key, value] : attrs.Items()) {
          SP_ASSIGN_OR_RETURN(so.attrs[key], value.AsIntList(-kMaxBytes, kMaxBytes));
        }
      }
      st.ops.push_back(std::move(so));
    }
    p.steps.push_back(std::move(st));
  }
  return Status::Ok();
}

StatusOr<Plan> ReadPlan(const JsonRef& j) {
  SP_RETURN_IF_ERROR(j.ExpectObject());
  Plan p;
  SP_ASSIGN_OR_RETURN(int64_t version, ReadVersion(j));
  p.schema_version = kSchemaVersion;  // a version-1 plan is converted below
  SP_ASSIGN_OR_RETURN(p.model, j.String("model"));
  SP_ASSIGN_OR_RETURN(p.target, j.String("target"));
  SP_ASSIGN_OR_RETURN(p.strategy, j.String("strategy"));
  SP_ASSIGN_OR_RETURN(p.schedule, j.StringOr("schedule", "model"));
  SP_ASSIGN_OR_RETURN(p.dtype, j.StringOr("dtype", ""));
  SP_ASSIGN_OR_RETURN(p.batch, j.IntOr("batch", 1, 1, kInt32Max));
  SP_ASSIGN_OR_RETURN(p.arena_level, j.StringOr("arena_level", ""));

  SP_ASSIGN_OR_RETURN(JsonRef levels, j.Array("levels"));
  for (size_t i = 0; i < levels.size(); ++i) {
    const JsonRef l = levels[i];
    SP_RETURN_IF_ERROR(l.ExpectObject());
    Level lv;
    SP_ASSIGN_OR_RETURN(lv.name, l.String("name"));
    SP_ASSIGN_OR_RETURN(lv.kind, l.String("kind"));
    SP_ASSIGN_OR_RETURN(lv.capacity, l.Int("capacity", 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(lv.used_bytes, l.IntOr("used_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(lv.lower_bound_bytes, l.IntOr("lower_bound_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(lv.holds_activations, l.BoolOr("holds_activations", false));
    SP_ASSIGN_OR_RETURN(lv.pool_of, l.StringOr("pool_of", ""));
    if (!lv.pool_of.empty()) {
      SP_ASSIGN_OR_RETURN(lv.base, l.Int("base", 0, kMaxBytes));
    }
    p.levels.push_back(std::move(lv));
  }

  SP_RETURN_IF_ERROR(ReadSteps(j, version, &p));

  SP_ASSIGN_OR_RETURN(JsonRef tensors, j.Array("tensors"));
  p.tensors.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const JsonRef t = tensors[i];
    SP_RETURN_IF_ERROR(t.ExpectObject());
    Tensor te;
    SP_ASSIGN_OR_RETURN(te.name, t.String("name"));
    SP_ASSIGN_OR_RETURN(te.bytes, t.Int("bytes", 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(te.kind, t.String("kind"));
    SP_ASSIGN_OR_RETURN(te.dtype, t.StringOr("dtype", ""));
    SP_ASSIGN_OR_RETURN(te.shape, t.IntListOr("shape", 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(te.producer, t.StringOr("producer", ""));  // null: a graph input or constant
    SP_ASSIGN_OR_RETURN(te.consumers, t.StringListOr("consumers"));
    SP_ASSIGN_OR_RETURN(te.alias_of, t.StringOr("alias_of", ""));
    p.tensors.push_back(std::move(te));
  }

  SP_ASSIGN_OR_RETURN(JsonRef buffers, j.Array("buffers"));
  p.buffers.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const JsonRef b = buffers[i];
    SP_RETURN_IF_ERROR(b.ExpectObject());
    Buffer bu;
    SP_ASSIGN_OR_RETURN(bu.tensor, b.String("tensor"));
    SP_ASSIGN_OR_RETURN(bu.level, b.String("level"));
    SP_ASSIGN_OR_RETURN(bu.offset, b.Int("offset", 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(bu.bytes, b.Int("bytes", 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(int64_t first, b.Int("first_step", 0, kStepMax));
    SP_ASSIGN_OR_RETURN(int64_t last, b.Int("last_step", 0, kStepMax));
    bu.first_step = static_cast<int>(first);
    bu.last_step = static_cast<int>(last);
    if (b.Has("overlaps")) {
      SP_ASSIGN_OR_RETURN(JsonRef overlaps, b.Array("overlaps"));
      for (size_t k = 0; k < overlaps.size(); ++k) {
        const JsonRef o = overlaps[k];
        SP_RETURN_IF_ERROR(o.ExpectObject());
        Overlap ov;
        SP_ASSIGN_OR_RETURN(ov.tensor, o.String("tensor"));
        SP_ASSIGN_OR_RETURN(ov.reason, o.String("reason"));
        SP_ASSIGN_OR_RETURN(ov.shift, o.IntOr("shift", 0, -kMaxBytes, kMaxBytes));
        bu.overlaps.push_back(std::move(ov));
      }
    }
    p.buffers.push_back(std::move(bu));
  }

  if (j.Has("transfers")) {
    SP_ASSIGN_OR_RETURN(JsonRef transfers, j.Array("transfers"));
    for (size_t i = 0; i < transfers.size(); ++i) {
      const JsonRef t = transfers[i];
      SP_RETURN_IF_ERROR(t.ExpectObject());
      Transfer tr;
      SP_ASSIGN_OR_RETURN(int64_t step, t.Int("step", 0, kStepMax));
      tr.step = static_cast<int>(step);
      SP_ASSIGN_OR_RETURN(tr.kind, t.String("kind"));
      SP_ASSIGN_OR_RETURN(tr.tensor, t.String("tensor"));
      SP_ASSIGN_OR_RETURN(tr.bytes, t.Int("bytes", 0, kMaxBytes));
      SP_ASSIGN_OR_RETURN(tr.from, t.String("from"));
      SP_ASSIGN_OR_RETURN(tr.to, t.String("to"));
      p.transfers.push_back(std::move(tr));
    }
  }
  if (j.Has("pools")) {
    SP_ASSIGN_OR_RETURN(JsonRef pools, j.Array("pools"));
    for (size_t i = 0; i < pools.size(); ++i) {
      const JsonRef q = pools[i];
      SP_RETURN_IF_ERROR(q.ExpectObject());
      Pool pool;
      SP_ASSIGN_OR_RETURN(pool.level, q.String("level"));
      SP_ASSIGN_OR_RETURN(pool.bytes, q.Int("bytes", 0, kMaxBytes));
      SP_ASSIGN_OR_RETURN(pool.segment_bytes, q.IntOr("segment_bytes", 1, 0, kMaxBytes));
      p.pools.push_back(std::move(pool));
    }
  }
  if (j.Has("metrics")) {
    SP_ASSIGN_OR_RETURN(JsonRef m, j.Object("metrics"));
    Metrics& mt = p.metrics;
    const double kAny = std::numeric_limits<double>::max();
    SP_ASSIGN_OR_RETURN(mt.fits, m.BoolOr("fits", false));
    if (m.Has("peak_bytes")) {
      SP_ASSIGN_OR_RETURN(JsonRef peaks, m.Object("peak_bytes"));
      for (const auto& [key, value] : peaks.Items()) {
        SP_ASSIGN_OR_RETURN(mt.peak_bytes[key], value.AsInt(0, kMaxBytes));
      }
    }
    SP_ASSIGN_OR_RETURN(mt.arena_bytes, m.IntOr("arena_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.lower_bound_bytes, m.IntOr("lower_bound_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.overhead_pct, m.NumberOr("overhead_pct", 0.0, -kAny, kAny));
    SP_ASSIGN_OR_RETURN(mt.offchip_read_bytes, m.IntOr("offchip_read_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.offchip_write_bytes, m.IntOr("offchip_write_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.noncompulsory_read_bytes, m.IntOr("noncompulsory_read_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.noncompulsory_write_bytes, m.IntOr("noncompulsory_write_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.inplace_saved_bytes, m.IntOr("inplace_saved_bytes", 0, -kMaxBytes, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.budget_bytes, m.IntOr("budget_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.energy_pj, m.NumberOr("energy_pj", 0.0, -kAny, kAny));
    SP_RETURN_IF_ERROR(DramSplitFromJson(m, &mt));
    SP_ASSIGN_OR_RETURN(mt.noncompulsory_lower_bound_bytes, m.IntOr("noncompulsory_lower_bound_bytes", -1, -1, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.noncompulsory_gap_pct, m.NumberOr("noncompulsory_gap_pct", 0.0, 0.0, 100.0));
    SP_ASSIGN_OR_RETURN(mt.dram_read_bytes, m.IntOr("dram_read_bytes", 0, 0, kMaxBytes));
    SP_ASSIGN_OR_RETURN(mt.dram_write_bytes, m.IntOr("dram_write_bytes", 0, 0, kMaxBytes));
  }
  SP_ASSIGN_OR_RETURN(p.notes, j.StringListOr("notes"));
  SP_RETURN_IF_ERROR(ModulesFromJson(j, &p));
  if (version == 1) InferStepKinds(&p);
  return p;
}

}  // namespace

std::string PlansToJson(const std::vector<Plan>& plans) {
  std::string text = "{\"schema_version\": " + std::to_string(kSchemaVersion) + ", \"plans\": [\n";
  for (size_t i = 0; i < plans.size(); ++i) text += (i ? ",\n" : "") + PlanToJson(plans[i]);
  text += "\n]}";
  return text;
}

StatusOr<std::vector<Plan>> PlansFromJson(const std::string& text, bool* multi) {
  return GuardJson<std::vector<Plan>>("plan", [&]() -> StatusOr<std::vector<Plan>> {
    SP_ASSIGN_OR_RETURN(json doc, ParseJson(text, "the plan file"));
    const JsonRef j(doc);
    SP_RETURN_IF_ERROR(j.ExpectObject());
    std::vector<Plan> plans;
    if (multi) *multi = j.Has("plans");
    if (!j.Has("plans")) {
      SP_ASSIGN_OR_RETURN(Plan p, ReadPlan(j));
      plans.push_back(std::move(p));
      return plans;
    }
    // Several plans (plan --strategy all --json).
    SP_RETURN_IF_ERROR(ReadVersion(j).status());
    SP_ASSIGN_OR_RETURN(JsonRef list, j.Array("plans"));
    if (list.size() == 0) return list.Error("holds no plans");
    for (size_t i = 0; i < list.size(); ++i) {
      SP_ASSIGN_OR_RETURN(Plan p, ReadPlan(list[i]));
      plans.push_back(std::move(p));
    }
    return plans;
  });
}

StatusOr<Plan> PlanFromJson(const std::string& text) {
  bool multi = false;
  SP_ASSIGN_OR_RETURN(std::vector<Plan> plans, PlansFromJson(text, &multi));
  if (multi && plans.size() != 1)
    return InvalidArgument("the plan file holds " + std::to_string(plans.size()) +
                           " plans (written by plan --strategy all); read one plan at a time");
  return std::move(plans[0]);
}

}  // namespace sramplan::plan
