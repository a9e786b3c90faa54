// Single-tensor boundaries, region sub-graphs and stitched plans (region_stitch.h).
#include "driver/region_stitch.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "driver/plan_build.h"
#include "support/int_math.h"

namespace sramplan::driver {

std::vector<int> BoundaryCuts(const ir::Graph& g, const analysis::Schedule& order, int max_tensors) {
  const int n = static_cast<int>(order.size());
  std::vector<int> pos(g.num_ops(), -1);
  for (int i = 0; i < n; ++i) pos[order[i].value()] = i;
  // Tensor t crosses every cut k with start < k <= end: it enters the sweep at start + 1 and
  // leaves it at end + 1.
  std::vector<std::vector<int32_t>> enter(n + 2), leave(n + 2);
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind == ir::TensorKind::kConstant) continue;
    const int start = t.producer.valid() ? pos[t.producer.value()] : -1;
    if (t.producer.valid() && start < 0) continue;
    int end = -1;
    for (ir::OpId c : t.consumers) end = std::max(end, pos[c.value()]);
    if (end <= start) continue;
    enter[start + 1].push_back(t.id.value());
    leave[end + 1].push_back(t.id.value());
  }
  // Candidates: (cut, crossing tensors, crossing bytes) where every crossing tensor is an
  // activation that owns its bytes.
  struct Candidate {
    int k, tensors;
    int64_t bytes;
  };
  std::vector<Candidate> cand;
  std::set<int32_t> live;
  for (int k = 0; k < n; ++k) {
    for (int32_t id : leave[k]) live.erase(id);
    for (int32_t id : enter[k]) live.insert(id);
    if (k == 0 || live.empty() || static_cast<int>(live.size()) > max_tensors) continue;
    bool ok = true;
    int64_t bytes = 0;
    for (int32_t id : live) {
      const ir::TensorId t(id);
      ok = ok && g.tensor(t).kind == ir::TensorKind::kActivation && g.StorageRoot(t) == t;
      bytes += g.tensor(t).Bytes();
    }
    if (ok) cand.push_back({k, static_cast<int>(live.size()), bytes});
  }
  // Every single-tensor cut; of each run of adjacent cuts with more tensors, the one with the fewest
  // crossing bytes (a NAS cell's two inputs cross at every step of its preprocessing).
  std::vector<int> cuts;
  for (size_t i = 0; i < cand.size();) {
    if (cand[i].tensors == 1) {
      cuts.push_back(cand[i++].k);
      continue;
    }
    size_t j = i, best = i;
    while (j < cand.size() && cand[j].tensors > 1 && cand[j].k - cand[i].k == static_cast<int>(j - i)) {
      if (cand[j].bytes < cand[best].bytes) best = j;
      ++j;
    }
    cuts.push_back(cand[best].k);
    i = j;
  }
  return cuts;
}

StatusOr<ir::Graph> RegionGraph(const ir::Graph& g, const std::vector<ir::OpId>& ops) {
  std::vector<char> inside(g.num_ops(), 0);
  for (ir::OpId o : ops) inside[o.value()] = 1;
  ir::Graph sub;
  sub.name = g.name;
  sub.layout = g.layout;
  std::vector<int32_t> map(g.num_tensors(), -1);
  auto add = [&](ir::TensorId id) {
    if (map[id.value()] >= 0) return ir::TensorId(map[id.value()]);
    const ir::Tensor& t = g.tensor(id);
    ir::Tensor c;
    c.name = t.name;
    c.shape = t.shape;
    c.dtype = t.dtype;
    c.quant = t.quant;
    c.data = t.data;
    if (t.kind == ir::TensorKind::kConstant) {
      c.kind = ir::TensorKind::kConstant;
    } else if (t.producer.valid() && inside[t.producer.value()]) {
      bool read_outside = t.kind == ir::TensorKind::kOutput;
      for (ir::OpId o : t.consumers) read_outside = read_outside || !inside[o.value()];
      c.kind = read_outside ? ir::TensorKind::kOutput : ir::TensorKind::kActivation;
    } else {
      c.kind = ir::TensorKind::kInput;
    }
    const ir::TensorId nid = sub.AddTensor(std::move(c));
    map[id.value()] = nid.value();
    return nid;
  };
  for (ir::OpId o : ops) {
    const ir::Op& op = g.op(o);
    ir::Op c;
    c.name = op.name;
    c.type = op.type;
    c.attrs = op.attrs;
    c.original_type = op.original_type;
    for (ir::TensorId t : op.inputs) c.inputs.push_back(add(t));
    for (ir::TensorId t : op.outputs) c.outputs.push_back(add(t));
    sub.AddOp(std::move(c));
  }
  Status s = ir::VerifyGraph(sub);
  if (!s.ok()) return InvalidArgument("region of " + std::to_string(ops.size()) + " ops: " + s.message());
  return sub;
}

namespace {

bool OffChipKind(const std::string& kind) { return kind == "dram" || kind == "flash"; }

}  // namespace

StatusOr<plan::Plan> StitchPlans(const ir::Graph& g, const target::Target& t,
                                 const std::vector<const plan::Plan*>& parts, const std::string& strategy,
                                 const PlanOptions& options, int64_t alignment, analysis::Schedule* order) {
  std::unordered_map<std::string, ir::OpId> op_of;
  for (const ir::Op& op : g.ops()) op_of.emplace(op.name, op.id);
  std::set<std::string> offchip;
  for (const auto& l : t.levels)
    if (OffChipKind(target::MemoryKindName(l.kind))) offchip.insert(l.name);
  order->clear();
  std::set<std::string> held_on_chip;  // constants some part holds on chip (their DRAM copy stays)
  for (size_t r = 0; r < parts.size(); ++r) {
    for (const plan::Step& st : parts[r]->steps) {
      if (st.ops.size() != 1 || st.kind != plan::StepKind::kOp || !op_of.count(st.ops[0].name))
        return InternalError("region " + std::to_string(r) + ": step " + std::to_string(st.index) +
                             " is not one op of the graph");
      order->push_back(op_of[st.ops[0].name]);
    }
    for (const plan::Buffer& b : parts[r]->buffers)
      if (!offchip.count(b.level)) held_on_chip.insert(b.tensor);
  }
  if (static_cast<int>(order->size()) != g.num_ops())
    return InternalError("the regions plan " + std::to_string(order->size()) + " steps, the graph has " +
                         std::to_string(g.num_ops()) + " ops");
  plan::Plan p = PlanSkeleton(g, t, *order, strategy, options);
  p.schedule = "regions";
  std::map<std::string, const plan::Tensor*> full;
  for (const auto& x : p.tensors) full[x.name] = &x;
  const int last = std::max(0, g.num_ops() - 1);
  std::map<std::string, int64_t> cursor;  // per off-chip level: end of the regions placed so far
  std::set<std::string> kept;             // tensors whose off-chip buffer is already in the plan
  std::set<std::string> module_names;
  int s0 = 0;
  for (size_t r = 0; r < parts.size(); ++r) {
    const plan::Plan& part = *parts[r];
    std::map<std::string, int64_t> base, end;
    for (const auto& [level, c] : cursor) base[level] = AlignUp(c, alignment);
    std::set<std::string> seen;  // this part's off-chip buffers, by tensor
    for (const plan::Buffer& b : part.buffers) {
      plan::Buffer nb = b;
      if (!full.count(b.tensor)) return InternalError("region " + std::to_string(r) + ": unknown tensor " + b.tensor);
      if (!offchip.count(b.level)) {
        nb.first_step += s0;
        nb.last_step += s0;
        p.buffers.push_back(std::move(nb));
        continue;
      }
      if (!seen.insert(b.tensor).second)
        return InternalError("region " + std::to_string(r) + " has two off-chip buffers of '" + b.tensor + "'");
      const std::string& kind = full[b.tensor]->kind;
      end[b.level] = std::max(end[b.level], b.offset + b.bytes);
      // Weights no part holds on chip are laid out again by the weights pass, once for the run.
      if (kind == "constant" && !held_on_chip.count(b.tensor)) continue;
      if (kept.count(b.tensor)) continue;  // read from the copy an earlier region wrote
      if (kind == "activation" && r > 0 && b.first_step == 0 && !full[b.tensor]->producer.empty()) {
        // A region input made by an earlier region must have been written to DRAM there.
        bool made_before = false;
        for (int i = 0; i < s0; ++i) made_before = made_before || p.steps[i].ops[0].name == full[b.tensor]->producer;
        if (made_before)
          return InternalError("region " + std::to_string(r) + " reads '" + b.tensor +
                               "' from DRAM, but the region that makes it left no copy there");
      }
      kept.insert(b.tensor);
      nb.offset += base[b.level];
      nb.first_step = kind == "input" || kind == "constant" ? 0 : b.first_step + s0;
      nb.last_step = last;
      p.buffers.push_back(std::move(nb));
    }
    for (const auto& [level, e] : end) cursor[level] = std::max(cursor[level], base[level] + e);
    for (const plan::Transfer& tr : part.transfers) {
      plan::Transfer nt = tr;
      nt.step += s0;
      const std::string& kind = full[tr.tensor]->kind;
      if (tr.kind == "load" && kind != "input" && kind != "constant") nt.kind = "reload";
      if (tr.kind == "store" && kind != "output") nt.kind = "spill";
      p.transfers.push_back(std::move(nt));
    }
    for (plan::Module m : part.modules) {
      if (!module_names.insert(m.name).second) {
        m.name = "r" + std::to_string(r) + "." + m.name;
        module_names.insert(m.name);
      }
      p.modules.push_back(std::move(m));
    }
    s0 += static_cast<int>(part.steps.size());
  }
  std::stable_sort(p.transfers.begin(), p.transfers.end(),
                   [](const plan::Transfer& a, const plan::Transfer& b) { return a.step < b.step; });
  return p;
}

}  // namespace sramplan::driver
