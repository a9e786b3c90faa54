// keep-on-chip: fusion and COSMA-style spilling under one budget (fusion/fusion_spill.h). After
// assemble-tiled, the group output maps chosen to stay in the global buffer move from DRAM to the
// arena level (offset above the working sets of the groups they span, live from their producer's
// group through their last reader's), the groups' DRAM bytes drop by the stores and loads they save,
// and the metrics follow. The verifier re-derives every group's DRAM bytes (a group input or output
// with an on-chip buffer at the step moves none) and checks the buffer level's capacity and overlaps.
#include <algorithm>
#include <map>

#include "cost/cost_model.h"
#include "driver/context.h"
#include "driver/pass.h"
#include "driver/passes/passes.h"
#include "fusion/fusion_spill.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {
namespace {

// Per group in which ISOA feeds an operator of the same group: the executor holds every channel
// there (no int32 partial-sum path yet, see assemble-tiled's note), so the maps kept beside it leave
// the room of its strips with every channel held (and its resident parameters); 0 elsewhere.
std::vector<int64_t> AllChannelBytes(const OptimusState& st, const fusion::FusionResult& r, int64_t* groups) {
  std::vector<int64_t> need(r.groups.size(), 0);
  *groups = 0;
  for (size_t k = 0; k < r.groups.size(); ++k) {
    const std::vector<int>& group = r.groups[k];
    bool inside = false;
    for (size_t i = 0; i < group.size(); ++i) {
      if (i >= r.evals[k].isoa.size() || !r.evals[k].isoa[i]) continue;
      for (int f : st.graph.vertices[group[i]].outputs)
        for (int c : st.graph.tensors[f].consumers) inside = inside || std::binary_search(group.begin(), group.end(), c);
    }
    if (!inside) continue;
    ++*groups;
    const fusion::GroupEval& e = r.evals[k];
    const int64_t tiles = e.params_resident ? fusion::MostStrips(e, st.model) : e.tiles;
    need[k] = fusion::GroupFmapBytes(st.graph, group, tiles, std::vector<char>(group.size(), 0), st.model) +
              (e.params_resident ? e.param_bytes : 0);
  }
  return need;
}

// Maps whose storage is their own (no view of another tensor, none viewed by another).
std::vector<char> EligibleMaps(const ir::Graph& g, const fusion::FusionGraph& fg) {
  std::map<int, int> users;  // storage root -> tensors stored there
  for (const ir::Tensor& t : g.tensors()) ++users[g.StorageRoot(t.id).value()];
  std::vector<char> ok(fg.tensors.size(), 0);
  for (size_t f = 0; f < fg.tensors.size(); ++f) {
    const ir::Tensor& t = g.tensor(fg.tensors[f].id);
    ok[f] = t.kind == ir::TensorKind::kActivation && g.StorageRoot(t.id) == t.id && users[t.id.value()] == 1;
  }
  return ok;
}

// Levels' used bytes, fits, DRAM bytes (the steps' sums) and their energy, as assemble-tiled sets them.
void Remeasure(PlanningContext& ctx, plan::Plan& p) {
  int64_t rd = 0, wr = 0;
  for (const plan::Step& s : p.steps) {
    rd += s.tiled.dram_read_bytes;
    wr += s.tiled.dram_write_bytes;
  }
  SetTiledPlanMetrics(ctx, rd, wr, &p);
}

// The kept maps of scheme `r` (its groups' working sets, the maps' eligibility) and the groups with
// ISOA inside.
StatusOr<fusion::ResidencyResult> Choose(PlanningContext& ctx, const fusion::FusionResult& r, int64_t* isoa_groups) {
  const OptimusState& st = *ctx.optimus;
  fusion::ResidencyOptions o;
  o.alignment = ctx.alignment();
  // --time-limit: the pass's share split over its three schemes' ILPs and the two searches.
  if (ctx.options.search_time_limit_s > 0) o.time_limit_s = ctx.options.search_time_limit_s / 5;
  o.eligible = EligibleMaps(ctx.graph, st.graph);
  o.group_min_bytes = AllChannelBytes(st, r, isoa_groups);
  return fusion::ChooseKeptMaps(st.graph, st.model, r, o);
}

Status KeepOnChip(PlanningContext& ctx) {
  if (!ctx.optimus || !ctx.assembled)
    return InternalError("pass 'keep-on-chip' needs fuse-tiled and assemble-tiled first");
  OptimusState& st = *ctx.optimus;
  const ir::Graph& g = ctx.graph;
  int64_t isoa_groups = 0;
  SP_ASSIGN_OR_RETURN(fusion::ResidencyResult res, Choose(ctx, st.result, &isoa_groups));
  // The same on the schemes without fusion and of the model order's segments (their groups leave
  // more of the buffer free): one of them when it moves strictly fewer bytes with its kept maps.
  const int64_t fused_bytes = st.result.dram_bytes;
  const fusion::FusionMethod fused_method = st.method;
  std::string tried;
  for (fusion::FusionMethod alt : {fusion::FusionMethod::kNoFuse, fusion::FusionMethod::kEfficientS}) {
    fusion::FusionLimits lim;
    lim.time_limit_s = ctx.options.search_time_limit_s / 5;
    auto r = fusion::RunFusion(st.graph, st.model, alt, lim);
    if (!r.ok()) continue;
    int64_t alt_isoa = 0;
    SP_ASSIGN_OR_RETURN(fusion::ResidencyResult alt_res, Choose(ctx, *r, &alt_isoa));
    tried += std::string("; ") + fusion::FusionMethodName(alt) + "'s groups with kept maps: " +
             std::to_string(r->dram_bytes - alt_res.saved_bytes);
    if (r->dram_bytes - alt_res.saved_bytes >= st.result.dram_bytes - res.saved_bytes) continue;
    st.result = std::move(r).value();
    st.method = alt;
    res = std::move(alt_res);
    isoa_groups = alt_isoa;
  }
  if (st.method != fused_method) {
    SP_ASSIGN_OR_RETURN(std::unique_ptr<Pass> assemble, MakePass("assemble-tiled"));
    SP_RETURN_IF_ERROR(assemble->Run(ctx));
  }
  plan::Plan& p = ctx.plan;
  if (p.steps.size() != st.result.groups.size())
    return InternalError("pass 'keep-on-chip': the plan has " + std::to_string(p.steps.size()) + " steps for " +
                         std::to_string(st.result.groups.size()) + " groups");
  const std::string& gb = ctx.arena().name;
  // Groups that run more strips below the kept maps: their tiles, working set and workspace.
  for (size_t k = 0; k < p.steps.size(); ++k) {
    plan::Step& step = p.steps[k];
    if (res.group_tiles[k] == step.tiled.tiles) continue;
    step.tiled.tiles = res.group_tiles[k];
    step.tiled.tile_rows = CeilDiv(st.result.evals[k].ref_rows, res.group_tiles[k]);
    step.tiled.buffer_bytes = res.group_buffer_bytes[k];
    for (plan::Tensor& t : p.tensors)
      if (t.name == step.workspace) {
        t.bytes = res.group_buffer_bytes[k];
        t.shape = {res.group_buffer_bytes[k]};
      }
    for (plan::Buffer& b : p.buffers)
      if (b.tensor == step.workspace) b.bytes = res.group_buffer_bytes[k];
  }
  std::string names;
  for (const fusion::KeptMap& km : res.maps) {
    const std::string& name = g.tensor(st.graph.tensors[km.tensor].id).name;
    plan::Buffer* buf = nullptr;
    for (plan::Buffer& b : p.buffers)
      if (b.tensor == name) buf = &b;
    if (!buf) return InternalError("pass 'keep-on-chip': tensor '" + name + "' has no buffer in the plan");
    buf->level = gb;
    buf->offset = km.offset;
    buf->first_step = km.first_group;
    buf->last_step = km.last_group;
    p.steps[km.first_group].tiled.dram_write_bytes -= km.saved_write;
    for (const auto& [grp, bytes] : km.saved_reads) p.steps[grp].tiled.dram_read_bytes -= bytes;
    if (names.size() < 600)
      names += std::string(names.empty() ? "" : ", ") + "'" + name + "' (" + std::to_string(km.bytes) + " B, groups " +
               std::to_string(km.first_group) + ".." + std::to_string(km.last_group) + ")";
  }
  Remeasure(ctx, p);
  p.notes.push_back("keep-on-chip: " + std::to_string(res.maps.size()) + " of " + std::to_string(res.candidates) +
                    " candidate group outputs stay in the global buffer for later groups (" + res.method +
                    (res.note.empty() ? "" : "; " + res.note) + "), saving " + std::to_string(res.saved_read_bytes) +
                    " DRAM bytes read and " + std::to_string(res.saved_write_bytes) + " written against " +
                    std::string(fusion::FusionMethodName(st.method)) + "'s " + std::to_string(st.result.dram_bytes) +
                    " (" + fusion::FusionMethodName(fused_method) + "'s groups: " + std::to_string(fused_bytes) + tried +
                    ")" +
                    (res.retiled_groups ? "; " + std::to_string(res.retiled_groups) +
                                               " groups with resident parameters run more strips (same DRAM bytes)"
                                         : "") +
                    (isoa_groups ? "; beside the " + std::to_string(isoa_groups) +
                                       " groups with ISOA inside, room for their strips with every channel held"
                                 : "") +
                    (names.empty() ? "" : ": " + names + (names.size() >= 600 ? ", ..." : "")));
  return Status::Ok();
}

}  // namespace

MakeResult MakeKeepOnChip(std::string_view arg) { return NoArgPass("keep-on-chip", arg, KeepOnChip); }

}  // namespace sramplan::driver::passes
