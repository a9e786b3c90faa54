#include <nlohmann/json.hpp>

#include "plan/plan.h"

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
  for (const auto& l : p.levels)
    j["levels"].push_back({{"name", l.name},
                           {"kind", l.kind},
                           {"capacity", l.capacity},
                           {"used_bytes", l.used_bytes},
                           {"lower_bound_bytes", l.lower_bound_bytes},
                           {"holds_activations", l.holds_activations}});
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
    j["steps"].push_back({{"index", s.index}, {"ops", ops}});
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
  j["notes"] = p.notes;
  return j.dump(1);
}

static StatusOr<Plan> PlanFromJsonImpl(const std::string& text) {
  json j = json::parse(text);
  Plan p;
  p.schema_version = j.at("schema_version").get<int>();
  if (p.schema_version != kSchemaVersion)
    return InvalidArgument("plan schema_version " + std::to_string(p.schema_version) +
                           " is not supported (this sramplan reads " + std::to_string(kSchemaVersion) + ")");
  p.model = j.at("model").get<std::string>();
  p.target = j.at("target").get<std::string>();
  p.strategy = j.at("strategy").get<std::string>();
  p.schedule = j.value("schedule", "model");
  p.dtype = j.value("dtype", "");
  p.batch = j.value("batch", int64_t{1});
  p.arena_level = j.value("arena_level", "");
  for (const auto& l : j.at("levels"))
    p.levels.push_back({l.at("name"), l.at("kind"), l.at("capacity"), l.value("used_bytes", int64_t{0}),
                        l.value("lower_bound_bytes", int64_t{0}), l.value("holds_activations", false)});
  for (const auto& s : j.at("steps")) {
    Step st;
    st.index = s.at("index");
    for (const auto& o : s.at("ops")) {
      StepOp so{o.at("name"), o.at("type"), o.at("inputs").get<std::vector<std::string>>(),
                o.at("outputs").get<std::vector<std::string>>(), {}};
      if (o.contains("attrs"))
        for (const auto& [k, v] : o.at("attrs").items()) so.attrs[k] = v.get<std::vector<int64_t>>();
      st.ops.push_back(std::move(so));
    }
    p.steps.push_back(std::move(st));
  }
  for (const auto& t : j.at("tensors")) {
    Tensor te;
    te.name = t.at("name");
    te.bytes = t.at("bytes");
    te.kind = t.at("kind");
    te.dtype = t.value("dtype", "");
    te.shape = t.value("shape", std::vector<int64_t>{});
    if (t.contains("producer") && t["producer"].is_string()) te.producer = t["producer"];
    te.consumers = t.value("consumers", std::vector<std::string>{});
    te.alias_of = t.value("alias_of", "");
    p.tensors.push_back(std::move(te));
  }
  for (const auto& b : j.at("buffers")) {
    Buffer bu;
    bu.tensor = b.at("tensor");
    bu.level = b.at("level");
    bu.offset = b.at("offset");
    bu.bytes = b.at("bytes");
    bu.first_step = b.at("first_step");
    bu.last_step = b.at("last_step");
    if (b.contains("overlaps"))
      for (const auto& o : b["overlaps"]) bu.overlaps.push_back({o.at("tensor"), o.at("reason"), o.value("shift", int64_t{0})});
    p.buffers.push_back(std::move(bu));
  }
  if (j.contains("transfers"))
    for (const auto& t : j["transfers"])
      p.transfers.push_back({t.at("step"), t.at("kind"), t.at("tensor"), t.at("bytes"), t.at("from"), t.at("to")});
  if (j.contains("pools"))
    for (const auto& q : j["pools"]) p.pools.push_back({q.at("level"), q.at("bytes"), q.value("segment_bytes", int64_t{1})});
  if (j.contains("metrics")) {
    const auto& m = j["metrics"];
    p.metrics.fits = m.value("fits", false);
    if (m.contains("peak_bytes"))
      for (auto it = m["peak_bytes"].begin(); it != m["peak_bytes"].end(); ++it)
        p.metrics.peak_bytes[it.key()] = it.value().get<int64_t>();
    p.metrics.arena_bytes = m.value("arena_bytes", int64_t{0});
    p.metrics.lower_bound_bytes = m.value("lower_bound_bytes", int64_t{0});
    p.metrics.overhead_pct = m.value("overhead_pct", 0.0);
    p.metrics.offchip_read_bytes = m.value("offchip_read_bytes", int64_t{0});
    p.metrics.offchip_write_bytes = m.value("offchip_write_bytes", int64_t{0});
    p.metrics.noncompulsory_read_bytes = m.value("noncompulsory_read_bytes", int64_t{0});
    p.metrics.noncompulsory_write_bytes = m.value("noncompulsory_write_bytes", int64_t{0});
    p.metrics.inplace_saved_bytes = m.value("inplace_saved_bytes", int64_t{0});
    p.metrics.budget_bytes = m.value("budget_bytes", int64_t{0});
    p.metrics.energy_pj = m.value("energy_pj", 0.0);
  }
  if (j.contains("notes")) p.notes = j["notes"].get<std::vector<std::string>>();
  return p;
}

StatusOr<Plan> PlanFromJson(const std::string& text) {
  try {
    return PlanFromJsonImpl(text);
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("plan JSON is malformed: ") + e.what());
  }
}

}  // namespace sramplan::plan
