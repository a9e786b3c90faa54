// assemble-modules:paper|reorder|layerwise: module buffering (fusion/module_buffer.h; Kim et al. Alg. 1-6) or the
// paper's layer-wise baseline, on --budget bytes of the arena level (default its capacity) in front
// of the target's DRAM. The plan is ordinary steps (one op each, branches re-ordered), on-chip
// buffers at the planned offsets, DRAM buffers for what is streamed or copied out, transfers
// (spill / store after the producing step, reload / load before a module) and a "modules" section.
// module-metrics: the off-chip bytes of such a plan (copies plus operands read or written in DRAM,
// as the verifier and the executor count them), split into feature maps and weights, per module.
#include <map>
#include <set>

#include "cost/energy.h"
#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"
#include "fusion/module_buffer.h"
#include "fusion/modules.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::driver::passes {
namespace {

StatusOr<int> DramLevel(const PlanningContext& ctx) {
  for (size_t i = 0; i < ctx.target.levels.size(); ++i)
    if (ctx.target.levels[i].kind == target::MemoryKind::kDram) return static_cast<int>(i);
  return InvalidArgument("strategy '" + ctx.spec.name + "' streams feature maps to DRAM, but target '" +
                         ctx.target.name + "' has no DRAM level; use a target with one (exynos-npu, sram:SIZE)");
}

StatusOr<int64_t> Budget(const PlanningContext& ctx) {
  const std::string& opt = ctx.options.budget;
  int64_t budget = ctx.arena().capacity;
  if (!opt.empty() && (!ParseByteSize(opt, &budget) || budget <= 0))
    return InvalidArgument("--budget '" + opt + "': strategy '" + ctx.spec.name +
                           "' takes a byte size (e.g. 1MiB, 262144), not min / mpmf / avg");
  if (budget > ctx.arena().capacity)
    return InvalidArgument("--budget " + std::to_string(budget) + " is larger than the " +
                           std::to_string(ctx.arena().capacity) + " bytes of level '" + ctx.arena().name +
                           "'; give at most its capacity");
  return budget / ctx.alignment() * ctx.alignment();
}

// The plan's "modules" section: names, processing order, branch order, MIFM/MOFM regions.
std::vector<plan::Module> ModuleSection(const ir::Graph& g, const fusion::ModuleReport& rep,
                                        const fusion::ModuleBufferPlan& mp) {
  std::vector<int> step_of(g.num_ops(), -1);
  for (size_t s = 0; s < mp.order.size(); ++s) step_of[mp.order[s].value()] = static_cast<int>(s);
  std::map<int, const fusion::TensorHome*> home_of;
  for (const auto& h : mp.homes) home_of[h.tensor.value()] = &h;
  auto region = [&](ir::TensorId t, int step, int depth) {
    plan::ModuleRegion r{g.tensor(t).name, -1, g.tensor(t).Bytes(), depth};
    auto it = home_of.find(g.StorageRoot(t).value());
    if (it != home_of.end())
      for (const auto& y : it->second->stays)
        if (y.first <= step && step <= y.last) r.offset = y.offset;
    return r;
  };
  std::vector<plan::Module> out;
  for (size_t m = 0; m < rep.modules.size(); ++m) {
    const fusion::Module& mod = rep.modules[m];
    const fusion::ModuleDecision& d = mp.modules[m];
    plan::Module pm;
    pm.name = mod.name;
    pm.depth = mod.depth;
    pm.merge = g.op(mod.merge).name;
    pm.processing = d.processing;
    std::vector<ir::OpId> ops = mod.ops;
    std::sort(ops.begin(), ops.end(), [&](ir::OpId a, ir::OpId b) { return step_of[a.value()] < step_of[b.value()]; });
    for (ir::OpId op : ops) pm.ops.push_back(g.op(op).name);
    int first = static_cast<int>(mp.order.size());
    for (ir::OpId op : ops) first = std::min(first, step_of[op.value()]);
    for (int b : d.branch_order) {
      std::vector<std::string> names;
      for (ir::OpId op : mod.branches[b].ops) names.push_back(g.op(op).name);
      pm.branches.push_back(std::move(names));
      pm.branch_req_bytes.push_back(d.branch_req[b]);
    }
    for (int p = static_cast<int>(m); p >= 0; p = rep.modules[p].parent)
      pm.mifm.insert(pm.mifm.begin(), region(rep.modules[p].mifm, first, rep.modules[p].depth));
    const int merge_step = step_of[mod.merge.value()];
    for (ir::TensorId t : mod.sub_inputs) {
      const ir::Tensor& ten = g.tensor(t);
      int at = static_cast<int>(mp.order.size());
      for (ir::OpId c : ten.consumers) at = std::min(at, step_of[c.value()]);
      pm.mifm.push_back(region(t, at, mod.depth + 1));
    }
    for (int b : d.branch_order)
      for (ir::OpId o : mod.branches[b].outputs) pm.mofm.push_back(region(g.op(o).outputs[0], merge_step, mod.depth));
    pm.mofm.push_back(region(g.op(mod.merge).outputs[0], merge_step, mod.depth));
    out.push_back(std::move(pm));
  }
  return out;
}

Status Assemble(PlanningContext& ctx, const fusion::ModuleReport& rep, const fusion::ModuleBufferPlan& mp,
                int dram_level) {
  const std::string& arena = ctx.arena().name;
  const std::string& dram = ctx.target.levels[dram_level].name;
  plan::Plan& p = ctx.plan;
  p = PlanSkeleton(ctx.graph, ctx.target, mp.order, ctx.spec.name, ctx.options);
  const int last = std::max(0, static_cast<int>(mp.order.size()) - 1);
  int64_t dcursor = 0;
  for (const fusion::TensorHome& h : mp.homes) {
    const ir::Tensor& t = ctx.graph.tensor(h.tensor);
    const bool output = t.kind == ir::TensorKind::kOutput;
    for (const auto& y : h.stays) {
      p.buffers.push_back({t.name, arena, y.offset, h.chip_bytes, y.first, y.last, {}});
      if (y.loaded)
        p.transfers.push_back({y.first, t.kind == ir::TensorKind::kInput ? "load" : "reload", t.name, h.bytes, dram,
                               arena});
    }
    if (h.dram_from >= 0) {
      dcursor = AlignUp(dcursor, ctx.alignment());
      p.buffers.push_back({t.name, dram, dcursor, h.bytes, h.dram_from, last, {}});
      dcursor += h.bytes;
      if (h.stored) p.transfers.push_back({h.dram_from, output ? "store" : "spill", t.name, h.bytes, arena, dram});
    }
  }
  std::stable_sort(p.transfers.begin(), p.transfers.end(),
                   [](const plan::Transfer& a, const plan::Transfer& b) { return a.step < b.step; });
  p.modules = ModuleSection(ctx.graph, rep, mp);
  p.metrics.budget_bytes = ctx.budget ? ctx.budget->budget : 0;
  for (const std::string& n : mp.notes) p.notes.push_back(n);
  return Status::Ok();
}

}  // namespace

MakeResult MakeModuleBuffer(std::string_view arg) {
  return ChoicePass("assemble-modules", arg, {"paper", "layerwise", "reorder"}, [](PlanningContext& ctx, const std::string& a) -> Status {
    SP_ASSIGN_OR_RETURN(int dram_level, DramLevel(ctx));
    SP_ASSIGN_OR_RETURN(int64_t budget, Budget(ctx));
    const analysis::Schedule model = analysis::ModelOrder(ctx.graph);
    fusion::ModuleOptions mo;
    const fusion::ModuleReport rep = fusion::DetectModules(ctx.graph, model, mo);
    fusion::ModuleBufferOptions bo;
    bo.memory = budget;
    bo.alignment = ctx.alignment();
    bo.layerwise = a == "layerwise";
    bo.search_branch_orders = a == "reorder";
    bo.long_skip_ops = mo.long_skip_ops;
    SP_ASSIGN_OR_RETURN(fusion::ModuleBufferPlan mp, fusion::PlanModuleBuffering(ctx.graph, rep, bo));
    ctx.order = mp.order;
    ctx.lower_bound = 0;
    SP_RETURN_IF_ERROR(Assemble(ctx, rep, mp, dram_level));
    plan::Plan& p = ctx.plan;
    p.metrics.budget_bytes = budget;
    p.schedule = bo.layerwise ? "model" : "modules";
    std::string summary = std::to_string(rep.modules.size()) + " modules detected (" +
                          std::to_string(rep.top_level()) + " top level)";
    if (rep.modules.empty()) summary += "; no qualifying module: every op runs as its own step";
    int i = 0, ii = 0;
    for (const auto& d : mp.modules) {
      i += d.processing == "I";
      ii += d.processing == "II";
    }
    if (!bo.layerwise) summary += "; processing I for " + std::to_string(i) + ", II for " + std::to_string(ii);
    p.notes.push_back(summary + "; budget " + std::to_string(budget) + " B of '" + ctx.arena().name + "'" +
                      (bo.layerwise ? "; layer-wise: every feature map to and from DRAM" : ""));
    for (size_t m = 0; m < mp.modules.size(); ++m)
      if (!mp.modules[m].note.empty())
        p.notes.push_back("module " + rep.modules[m].name + ": processing " + mp.modules[m].processing + "; " +
                          mp.modules[m].note);
    for (const auto& x : rep.rejected)
      p.notes.push_back("not a module: " + x.entry + (x.exit.empty() ? "" : " .. " + x.exit) + ": " + x.reason);
    ctx.assembled = true;
    return Status::Ok();
  });
}

MakeResult MakeModuleMetrics(std::string_view arg) {
  return NoArgPass("module-metrics", arg, [](PlanningContext& ctx) -> Status {
    if (!ctx.assembled) return InternalError("pass 'module-metrics' needs the assemble-modules pass first");
    plan::Plan& p = ctx.plan;
    std::set<std::string> offchip;
    for (const auto& l : p.levels)
      if (l.kind == "dram" || l.kind == "flash") offchip.insert(l.name);
    std::map<std::string, std::string> root;
    for (const auto& t : p.tensors) root[t.name] = t.alias_of.empty() ? t.name : t.alias_of;
    std::map<std::string, std::vector<const plan::Buffer*>> bufs;
    for (const auto& b : p.buffers) bufs[b.tensor].push_back(&b);
    std::map<std::string, const plan::Tensor*> tens;
    for (const auto& t : p.tensors) tens[t.name] = &t;
    // Off-chip operand at step s: the buffer an op uses is the on-chip one when there is one.
    auto off = [&](const std::string& name, int s) {
      const plan::Buffer* hit = nullptr;
      std::string r = name;
      while (root.count(r) && root[r] != r) r = root[r];
      for (const plan::Buffer* b : bufs[r])
        if (b->first_step <= s && s <= b->last_step && (!hit || (offchip.count(hit->level) && !offchip.count(b->level))))
          hit = b;
      return hit && offchip.count(hit->level);
    };
    std::map<std::string, plan::Module*> module_of_op;
    for (auto& m : p.modules)
      if (m.depth == 1)
        for (const auto& o : m.ops) module_of_op[o] = &m;
    plan::Metrics& mt = p.metrics;
    cost::Ledger ledger = LedgerOf(ctx.hw, mt);
    ledger.offchip_read_bytes = ledger.offchip_write_bytes = 0;
    const int arena = ctx.target.arena_level, dram = ctx.hw.dram();
    for (const auto& tr : p.transfers) {
      const bool in = tr.kind == "load" || tr.kind == "reload";
      cost::AddTransfer(ctx.hw, arena, dram,
                        tr.kind == "load"     ? cost::TransferKind::kLoad
                        : tr.kind == "reload" ? cost::TransferKind::kReload
                        : tr.kind == "store"  ? cost::TransferKind::kStore
                                              : cost::TransferKind::kSpill,
                        tr.bytes, &ledger);
      const std::string& op = p.steps[tr.step].ops[0].name;
      if (plan::Module* m = module_of_op.count(op) ? module_of_op[op] : nullptr) {
        (in ? m->fm_read_bytes : m->fm_write_bytes) += tr.bytes;
        ++(in ? m->fm_reads : m->fm_writes);
      }
    }
    int64_t weights = 0, fm_stream = 0;
    const auto& dl = ctx.hw.level(dram);
    const auto& al = ctx.hw.level(arena);
    for (int s = 0; s < static_cast<int>(p.steps.size()); ++s)
      for (const auto& op : p.steps[s].ops) {
        plan::Module* m = module_of_op.count(op.name) ? module_of_op[op.name] : nullptr;
        for (int io = 0; io < 2; ++io) {
          if (io == 1 && ir::IsViewOp(op.type)) continue;
          for (const auto& name : io == 0 ? op.inputs : op.outputs) {
            if (!tens.count(name) || !off(name, s)) continue;
            const int64_t bytes = tens[name]->bytes;
            (io == 0 ? ledger.offchip_read_bytes : ledger.offchip_write_bytes) += bytes;
            if (tens[name]->kind == "constant") {
              weights += bytes;
              if (m) m->weight_bytes += bytes;
              continue;
            }
            fm_stream += bytes;
            // The metrics pass counted this access in the arena; it goes to DRAM instead.
            ledger.energy_pj += static_cast<double>(bytes) * (io == 0 ? dl.read_pj_per_byte - al.read_pj_per_byte
                                                                      : dl.write_pj_per_byte - al.write_pj_per_byte);
            if (m) {
              (io == 0 ? m->fm_read_bytes : m->fm_write_bytes) += bytes;
              ++(io == 0 ? m->fm_reads : m->fm_writes);
            }
          }
        }
      }
    StoreLedger(ledger, &mt);
    mt.dram_split = true;
    mt.weight_dram_bytes = weights;
    mt.fm_dram_bytes = mt.offchip_read_bytes + mt.offchip_write_bytes - weights;
    (void)fm_stream;
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
