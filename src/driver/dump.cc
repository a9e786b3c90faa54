// The PlanningContext as JSON after a pass (plan --dump-after PASS / --dump-all DIR), the way MLIR
// prints the IR after a pass: what the passes so far have decided, in the graph's names.
#include <nlohmann/json.hpp>

#include "driver/context.h"
#include "plan/plan_json.h"

namespace sramplan::driver {
namespace {

nlohmann::json OpNames(const ir::Graph& g, const std::vector<ir::OpId>& ops) {
  nlohmann::json a = nlohmann::json::array();
  for (ir::OpId id : ops) a.push_back(g.op(id).name);
  return a;
}

nlohmann::json Requests(const std::vector<placement::BufferRequest>& reqs, const placement::Placement* placed) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < reqs.size(); ++i) {
    const auto& r = reqs[i];
    nlohmann::json j = {{"id", r.id},
                        {"bytes", r.bytes},
                        {"alignment", r.alignment},
                        {"first_step", r.first_step},
                        {"last_step", r.last_step}};
    if (r.fixed_offset) j["fixed_offset"] = *r.fixed_offset;
    if (placed && i < placed->offsets.size()) j["offset"] = placed->offsets[i];
    a.push_back(std::move(j));
  }
  return a;
}

nlohmann::json Vmcu(const ir::Graph& g, const VmcuState& st) {
  nlohmann::json steps = nlohmann::json::array();
  for (size_t s = 0; s < st.steps.size(); ++s) {
    const auto& si = st.steps[s];
    nlohmann::json j = {{"ops", OpNames(g, si.ops)}, {"kind", si.kind}, {"workspace", si.workspace}};
    if (si.workspace_rows > 0) j["workspace_rows"] = si.workspace_rows;
    if (s < st.row_cache.size() && st.row_cache[s]) j["row_cache"] = true;
    steps.push_back(std::move(j));
  }
  nlohmann::json bufs = nlohmann::json::array();
  for (const auto& b : st.bufs)
    bufs.push_back({{"tensor", g.tensor(b.tensor).name}, {"bytes", b.bytes}, {"first_step", b.first}, {"last_step", b.last}});
  nlohmann::json j = {{"steps", steps}, {"buffers", bufs}};
  const Layout& L = st.best;
  if (!L.requests.empty()) {
    nlohmann::json declared = nlohmann::json::array();
    for (const auto& d : L.declared)
      declared.push_back({{"out", g.tensor(st.bufs[d.out].tensor).name},
                          {"in", g.tensor(st.bufs[d.in].tensor).name},
                          {"shift_bytes", d.shift_bytes},
                          {"reason", d.reason}});
    j["layout"] = {{"overlaps", declared},
                   {"requests", Requests(L.requests, &L.placed.placement)},
                   {"arena_bytes", L.placed.placement.arena_bytes}};
  }
  if (st.pool_bytes > 0) j["pool_bytes"] = st.pool_bytes;
  return j;
}

nlohmann::json Budget(const ir::Graph& g, const BudgetState& b) {
  nlohmann::json j = {{"budget_bytes", b.budget},
                      {"budget", b.budget_name},
                      {"m_min", b.m_min},
                      {"problem_tensors", b.problem.tensors.size()},
                      {"problem_ops", b.problem.ops.size()}};
  if (b.m_mpmf >= 0) j["m_mpmf"] = b.m_mpmf;
  const spill::SpillSolution& sol = b.solution;
  if (!sol.method.empty()) {
    nlohmann::json moves = nlohmann::json::array();
    for (const auto& mv : sol.moves)
      moves.push_back(
          {{"step", mv.step}, {"kind", spill::MoveKindName(mv.kind)}, {"tensor", b.problem.tensors[mv.tensor].name}});
    nlohmann::json res = nlohmann::json::array();
    for (const auto& r : sol.residencies)
      res.push_back({{"tensor", b.problem.tensors[r.tensor].name},
                     {"offset", r.offset},
                     {"first_step", r.first_step},
                     {"last_step", r.last_step}});
    j["solution"] = {{"method", sol.method}, {"proved_optimal", sol.proved_optimal}, {"residencies", res},
                     {"moves", moves}};
  }
  (void)g;
  return j;
}

}  // namespace

std::string DumpContext(const PlanningContext& ctx, const std::string& after_pass) {
  const ir::Graph& g = ctx.graph;
  nlohmann::json j;
  j["after_pass"] = after_pass;
  j["strategy"] = ctx.spec.name;
  j["pipeline"] = ctx.spec.passes;
  j["model"] = g.name;
  j["target"] = ctx.target.name;
  j["schedule"] = ctx.options.schedule;
  j["order"] = OpNames(g, ctx.order);
  if (!ctx.schedule_note.empty()) j["schedule_note"] = ctx.schedule_note;
  if (!ctx.liveness.buffers.empty()) {
    nlohmann::json lv = nlohmann::json::array();
    for (const auto& b : ctx.liveness.buffers)
      lv.push_back({{"tensor", g.tensor(b.tensor).name},
                    {"bytes", b.bytes},
                    {"first_step", b.first_step},
                    {"last_step", b.last_step}});
    j["liveness"] = {{"buffers", lv}, {"lower_bound", ctx.liveness.lower_bound}};
  }
  if (!ctx.tensors.inplace.empty()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : ctx.tensors.inplace)
      a.push_back({{"output", g.tensor(ctx.liveness.buffers[p.out_buffer].tensor).name},
                   {"over", g.tensor(ctx.liveness.buffers[p.in_buffer].tensor).name},
                   {"reason", p.reason}});
    j["inplace"] = a;
  }
  if (!ctx.requests.empty())
    j["requests"] = Requests(ctx.requests, ctx.placed.offsets.size() == ctx.requests.size() ? &ctx.placed : nullptr);
  if (!ctx.placed.offsets.empty()) j["placement"] = {{"arena_bytes", ctx.placed.arena_bytes}};
  if (!ctx.placement_note.empty()) j["placement_note"] = ctx.placement_note;
  if (ctx.vmcu) j["vmcu"] = Vmcu(g, *ctx.vmcu);
  if (ctx.budget) j["budget"] = Budget(g, *ctx.budget);
  j["lower_bound_bytes"] = ctx.lower_bound;
  if (ctx.assembled) j["plan"] = nlohmann::json::parse(plan::PlanToJson(ctx.plan));
  return j.dump(1);
}

}  // namespace sramplan::driver
