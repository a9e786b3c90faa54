// fuse-tiled:METHOD and assemble-tiled: Optimus's operator fusion for an accelerator with a
// global buffer in front of DRAM (fusion/optimus_dp.h), and the plan of its groups: one
// fused-tiled step per group with its tile, ISOA decisions, working set and DRAM bytes; the
// group's working set as the step's workspace in the global buffer; every tensor that crosses a
// group boundary, every input and every weight in DRAM.
#include <algorithm>
#include <map>
#include <set>

#include "cost/cost_model.h"
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {
namespace {

// Pooling windows, Slice steps and Pad's pads recorded for the verifier's tile relation (Conv's are recorded
// for every plan).
// The fusion search's limits: its state limits, and the CLI's --time-limit when given (issue 19).
fusion::FusionLimits FusionLimitsOf(const PlanOptions& o) {
  fusion::FusionLimits l;
  l.time_limit_s = o.search_time_limit_s;
  return l;
}

plan::StepOp TiledStepOp(const ir::Graph& g, const ir::Op& op) {
  plan::StepOp so = PlanStepOp(g, op);
  if (op.type == "MaxPool" || op.type == "AveragePool")
    for (const char* k : {"kernel_shape", "strides", "pads", "dilations"}) {
      std::vector<int64_t> v = op.attrs.GetInts(k);
      if (!v.empty()) so.attrs[k] = v;
    }
  if (op.type == "Slice" && op.attrs.Has("steps")) so.attrs["steps"] = op.attrs.GetInts("steps");
  if (op.type == "Slice")  // its starts and axes: the shift of its rows
    for (const char* k : {"starts", "axes"})
      if (op.attrs.Has(k)) so.attrs[k] = op.attrs.GetInts(k);
  if (op.type == "Pad") {  // its pads, and its mode: 0 constant, 1 reflect, 2 edge
    so.attrs["pads"] = op.attrs.GetInts("pads");
    const std::string mode = op.attrs.GetString("mode", "constant");
    so.attrs["pad_mode"] = {mode == "constant" ? 0 : mode == "reflect" ? 1 : 2};
  }
  return so;
}

// Width of the group output with the most rows (the strip's t_w).
int64_t TileCols(const ir::Graph& g, const fusion::FusionGraph& fg, const std::vector<int>& group) {
  int64_t best_rows = -1, cols = 1;
  for (int v : group)
    for (int f : fg.vertices[v].outputs) {
      const ir::Tensor& t = g.tensor(fg.tensors[f].id);
      if (t.shape.size() != 4 || fg.tensors[f].rows <= best_rows) continue;
      best_rows = fg.tensors[f].rows;
      cols = t.shape[g.layout == ir::Layout::kNHWC ? 2 : 3];
    }
  return cols;
}

// Per group whose ISOA decisions feed operators inside the group: why `verify` cannot run it as
// planned (the executor holds every channel of such an output: it has no path that accumulates a
// consumer over input-channel tiles in int32 partial sums), so the run may take more strips than the
// plan (other DRAM bytes when parameters stream) or not fit the buffer at all.
void AddIsoaNotes(const ir::Graph& g, const OptimusState& st, plan::Plan* p) {
  const fusion::FusionResult& r = st.result;
  for (size_t k = 0; k < r.groups.size(); ++k) {
    const std::vector<int>& group = r.groups[k];
    std::string ops;
    for (size_t i = 0; i < group.size(); ++i) {
      if (!r.evals[k].isoa[i]) continue;
      bool inside = false;
      for (int f : st.graph.vertices[group[i]].outputs)
        for (int c : st.graph.tensors[f].consumers)
          inside = inside || std::binary_search(group.begin(), group.end(), c);
      if (inside) ops += std::string(ops.empty() ? "" : ", ") + "'" + st.graph.vertices[group[i]].name + "'";
    }
    if (ops.empty()) continue;
    p->notes.push_back("group " + std::to_string(k) + " ('" + g.op(st.graph.vertices[group.front()].ops.front()).name +
                       "'): ISOA on " + ops +
                       " feeds operators inside the group, which would run channel tile by channel tile (in int32 "
                       "partial sums where they reduce over channels); the executor has no int32 partial-sum path "
                       "yet and holds every channel, so verify may run more strips than planned or not fit");
  }
}

Status AssembleTiled(PlanningContext& ctx) {
  if (!ctx.optimus) return InternalError("pass 'assemble-tiled' needs the fuse-tiled pass first");
  const OptimusState& st = *ctx.optimus;
  const ir::Graph& g = ctx.graph;
  if (ctx.hw.dram() < 0)
    return InvalidArgument("target '" + ctx.target.name + "' has no DRAM level; strategy '" + ctx.spec.name +
                           "' keeps feature maps and weights in DRAM (use optimus-accel or add a dram level)");
  const std::string& dram = ctx.target.levels[ctx.hw.dram()].name;
  const std::string& gb = ctx.arena().name;
  plan::Plan& p = ctx.plan;
  p = PlanSkeleton(g, ctx.target, ctx.order, ctx.spec.name, ctx.options);
  if (!ctx.schedule_note.empty()) p.notes.push_back(ctx.schedule_note);
  p.steps.clear();
  const fusion::FusionResult& r = st.result;
  std::vector<int> step_of_op(g.num_ops(), -1);
  for (size_t k = 0; k < r.groups.size(); ++k) {
    const std::vector<int>& group = r.groups[k];
    const fusion::GroupEval& e = r.evals[k];
    plan::Step step;
    step.index = static_cast<int>(k);
    step.kind = plan::StepKind::kFusedTiled;
    for (size_t i = 0; i < group.size(); ++i)
      for (ir::OpId id : st.graph.vertices[group[i]].ops) {
        step.ops.push_back(TiledStepOp(g, g.op(id)));
        step_of_op[id.value()] = static_cast<int>(k);
        if (e.isoa[i]) step.tiled.isoa.push_back(g.op(id).name);
      }
    step.tiled.tiles = e.tiles;
    step.tiled.tile_rows = e.tile_rows;
    step.tiled.tile_cols = TileCols(g, st.graph, group);
    step.tiled.tile_channels = st.model.t_c;
    step.tiled.params_resident = e.params_resident;
    step.tiled.buffer_bytes = e.buffer_bytes;
    step.tiled.dram_read_bytes = e.read_bytes;
    step.tiled.dram_write_bytes = e.write_bytes;
    step.tiled.halo = fusion::HaloName(e.halo);
    step.workspace = step.ops.front().name + ".tiles";
    p.tensors.push_back({step.workspace, e.buffer_bytes, "scratch", "int8", {e.buffer_bytes},
                         step.ops.front().name, {step.ops.front().name}, ""});
    p.buffers.push_back({step.workspace, gb, 0, e.buffer_bytes, step.index, step.index, {}});
    p.steps.push_back(std::move(step));
  }
  // DRAM: the storage of every tensor that is not produced and consumed inside one group.
  const int last = std::max(0, static_cast<int>(p.steps.size()) - 1);
  std::set<int> roots;
  for (const ir::Tensor& t : g.tensors()) {
    int step = -2;
    bool inside = t.kind == ir::TensorKind::kActivation && t.producer.valid() && !t.consumers.empty();
    if (inside) step = step_of_op[t.producer.value()];
    for (ir::OpId c : t.consumers) inside = inside && step_of_op[c.value()] == step;
    const bool used = !t.consumers.empty() || t.producer.valid();
    if (!inside && used) roots.insert(g.StorageRoot(t.id).value());
  }
  int64_t cursor = 0;
  for (int id : roots) {
    const ir::Tensor& t = g.tensor(ir::TensorId(id));
    cursor = AlignUp(cursor, ctx.alignment());
    p.buffers.push_back({t.name, dram, cursor, t.Bytes(), 0, last, {}});
    cursor += t.Bytes();
  }
  // Metrics: levels, DRAM bytes (Eq. 3 per group), energy of the DRAM traffic.
  SetTiledPlanMetrics(ctx, r.read_bytes, r.write_bytes, &p);
  p.notes.push_back(std::string(fusion::FusionMethodName(st.method)) + ": " + std::to_string(r.groups.size()) +
                    " groups of " + std::to_string(st.graph.vertices.size()) + " operators (Conv+BN+activation merged), " +
                    std::to_string(r.dram_bytes) + " DRAM bytes (Eq. 3); global buffer " +
                    std::to_string(st.model.buffer_bytes) + " B, T_c " + std::to_string(st.model.t_c) + ", T_h " +
                    std::to_string(st.model.t_h) + ", batch " + std::to_string(st.model.batch) +
                    (r.proved_optimal ? "; search complete" : "; " + r.note));
  if (st.method == fusion::FusionMethod::kOnline)
    p.notes.push_back("optimus-online: look-up table allows groups of up to " + std::to_string(r.online_max_group) +
                      " operators at this buffer size");
  AddIsoaNotes(g, st, &p);
  for (const fusion::Vertex& v : st.graph.vertices)
    if (!v.known)
      p.notes.push_back("operator '" + v.name + "' is not known to the tile model: it reads its whole input per strip");
  ctx.assembled = true;
  return Status::Ok();
}

}  // namespace

void SetTiledPlanMetrics(PlanningContext& ctx, int64_t dram_read_bytes, int64_t dram_write_bytes, plan::Plan* p) {
  plan::Metrics& m = p->metrics;
  m.fits = true;
  for (plan::Level& lv : p->levels) {
    int64_t used = 0;
    for (const plan::Buffer& b : p->buffers)
      if (b.level == lv.name) used = std::max(used, b.offset + b.bytes);
    lv.used_bytes = used;
    m.peak_bytes[lv.name] = used;
    m.fits = m.fits && used <= lv.capacity;
  }
  m.arena_bytes = m.peak_bytes[ctx.arena().name];
  m.dram_read_bytes = m.offchip_read_bytes = dram_read_bytes;
  m.dram_write_bytes = m.offchip_write_bytes = dram_write_bytes;
  cost::Traffic traffic(ctx.hw);
  traffic.read[ctx.hw.dram()] = dram_read_bytes;
  traffic.write[ctx.hw.dram()] = dram_write_bytes;
  m.energy_pj = cost::Evaluate(ctx.hw, traffic).energy_pj;
}

MakeResult MakeFuseTiled(std::string_view arg) {
  return ChoicePass("fuse-tiled", arg, {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"},
                    [](PlanningContext& ctx, const std::string& a) -> Status {
                      if (ctx.hw.dram() < 0)
                        return InvalidArgument("target '" + ctx.target.name + "' has no DRAM level; strategy '" +
                                               ctx.spec.name +
                                               "' keeps feature maps and weights in DRAM (use optimus-accel or "
                                               "add a dram level)");
                      auto st = std::make_unique<OptimusState>();
                      fusion::ParseFusionMethod(a, &st->method);
                      SP_ASSIGN_OR_RETURN(st->model, fusion::AccelModel::From(ctx.target, ctx.options.batch));
                      SP_ASSIGN_OR_RETURN(st->graph, fusion::BuildFusionGraph(ctx.graph, ctx.order, ctx.options.batch));
                      SP_ASSIGN_OR_RETURN(st->result, fusion::RunFusion(st->graph, st->model, st->method, FusionLimitsOf(ctx.options)));
                      ctx.optimus = std::move(st);
                      return Status::Ok();
                    });
}

MakeResult MakeAssembleTiled(std::string_view arg) { return NoArgPass("assemble-tiled", arg, AssembleTiled); }

}  // namespace sramplan::driver::passes
