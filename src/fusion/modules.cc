#include "fusion/modules.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/op_dag.h"
#include "analysis/regions.h"

namespace sramplan::fusion {
namespace {

bool IsMergeType(const std::string& t) { return t == "Concat" || t == "Add" || t == "Sum"; }

// The longest common prefix of the names up to its last '/', without the surrounding slashes.
std::string CommonName(const ir::Graph& g, const std::vector<ir::OpId>& ops) {
  if (ops.empty()) return "";
  std::string prefix = g.op(ops[0]).name;
  for (ir::OpId id : ops) {
    const std::string& n = g.op(id).name;
    size_t k = 0;
    while (k < prefix.size() && k < n.size() && prefix[k] == n[k]) ++k;
    prefix.resize(k);
  }
  const size_t slash = prefix.rfind('/');
  prefix = slash == std::string::npos ? std::string() : prefix.substr(0, slash);
  while (!prefix.empty() && prefix.front() == '/') prefix.erase(prefix.begin());
  return prefix;
}

struct Candidate {
  analysis::ForkJoinRegion region;
  Module module;
  std::vector<int> branch_of;  // position -> branch index inside this region, -1 outside / boundary
};

// Checks the paper's conditions 1-4 on one region and splits it into branches; an empty string
// when it qualifies, else the reason.
std::string BuildCandidate(const ir::Graph& g, const analysis::Schedule& order,
                           const std::vector<std::vector<int>>& succs, const ModuleOptions& opt,
                           Candidate* c) {
  const analysis::ForkJoinRegion& r = c->region;
  const ir::Op& entry = g.op(order[r.entry]);
  const ir::Op& merge = g.op(order[r.exit]);
  const int ops = static_cast<int>(r.nodes.size()) - 1;
  if (!IsMergeType(merge.type))
    return "its join '" + merge.name + "' is a " + merge.type + ", not a Concat or element-wise Add (condition 3)";
  if (ops > opt.max_ops)
    return std::to_string(ops) + " ops, more than " + std::to_string(opt.max_ops) +
           " (condition 4: a large module is not kept on chip)";
  std::set<int> in(r.nodes.begin(), r.nodes.end());
  std::set<ir::TensorId> mifm;
  for (int v : r.nodes)
    if (v != r.entry)
      for (ir::TensorId t : g.op(order[v]).inputs)
        if (g.tensor(t).producer == entry.id) mifm.insert(t);
  if (mifm.size() != 1)
    return "its fork '" + entry.name + "' feeds the region with " + std::to_string(mifm.size()) +
           " tensors, not one module input";
  Module& m = c->module;
  m.entry = entry.id;
  m.mifm = *mifm.begin();
  m.merge = merge.id;
  m.merge_type = merge.type;
  c->branch_of.assign(order.size(), -1);
  std::vector<int> starts = succs[r.entry];
  std::sort(starts.begin(), starts.end());
  for (int s : starts) {
    if (!in.count(s)) continue;
    ModuleBranch b;
    const int bi = static_cast<int>(m.branches.size());
    if (s != r.exit) {
      std::vector<int> stack = {s};
      std::set<int> seen = {s};
      while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        if (c->branch_of[v] >= 0 && c->branch_of[v] != bi)
          return "branches from '" + g.op(order[s]).name + "' and another meet at '" + g.op(order[v]).name +
                 "' before the merge (condition 1: separate branches)";
        c->branch_of[v] = bi;
        for (int w : succs[v])
          if (in.count(w) && w != r.exit && seen.insert(w).second) stack.push_back(w);
      }
      std::vector<int> pos(seen.begin(), seen.end());
      std::sort(pos.begin(), pos.end());
      for (int v : pos) {
        b.ops.push_back(order[v]);
        int inside = 0;  // successors in the branch or the merge
        for (int w : succs[v]) {
          if (w == r.exit) b.outputs.push_back(order[v]);
          inside += in.count(w) > 0;
        }
        // A fork inside the branch opens a sub-module; when it ends at this merge, its input is
        // a MIFM of the next depth (Alg. 4).
        if (inside >= 2) {
          std::set<int> reach = {v};
          bool to_merge = false;
          std::vector<int> st = {v};
          while (!st.empty() && !to_merge) {
            const int x = st.back();
            st.pop_back();
            for (int w : succs[x]) {
              if (w == r.exit && x != v) to_merge = true;
              if (in.count(w) && w != r.exit && reach.insert(w).second) st.push_back(w);
            }
          }
          if (to_merge)
            for (ir::TensorId t : g.op(order[v]).outputs) m.sub_inputs.push_back(t);
        }
      }
    }
    m.branches.push_back(std::move(b));
  }
  if (m.branches.size() < 2) return "fewer than two branches (condition 1)";
  for (int v : r.nodes)
    if (v != r.entry) m.ops.push_back(order[v]);
  return "";
}

}  // namespace

int ModuleReport::top_level() const {
  int n = 0;
  for (const auto& m : modules) n += m.depth == 1;
  return n;
}

ModuleReport DetectModules(const ir::Graph& g, const analysis::Schedule& order, const ModuleOptions& opt) {
  ModuleReport rep;
  const int n = static_cast<int>(order.size());
  const analysis::DagPreds preds = analysis::OpPredecessors(g, order);
  analysis::DagPreds eff(n);
  for (int v = 0; v < n; ++v)
    for (int p : preds[v]) {
      if (v - p > opt.long_skip_ops)
        rep.erased_skips.push_back(g.op(order[p]).name + " -> " + g.op(order[v]).name);
      else
        eff[v].push_back(p);
    }
  std::vector<std::vector<int>> succs(n);
  for (int v = 0; v < n; ++v)
    for (int p : eff[v]) succs[p].push_back(v);
  std::vector<analysis::ForkJoinRegion> regions = analysis::ForkJoinRegions(eff);
  std::set<int> entries;
  for (const auto& r : regions) entries.insert(r.entry);
  for (int f = 0; f < n; ++f)
    if (succs[f].size() >= 2 && !entries.count(f))
      rep.rejected.push_back({g.op(order[f]).name, "", 0,
                              "no single-entry / single-exit region opens at this fork: edges from outside join its branches "
                              "(a cell with two inputs, a dense block) or they never meet"});
  // Largest regions first, so an enclosing module is accepted before what lies inside it.
  std::vector<Candidate> cands;
  for (const auto& r : regions) cands.push_back({r, {}, {}});
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate& a, const Candidate& b) { return a.region.nodes.size() > b.region.nodes.size(); });
  std::vector<Candidate> accepted;
  for (Candidate& c : cands) {
    std::string why = BuildCandidate(g, order, succs, opt, &c);
    const analysis::ForkJoinRegion& r = c.region;
    if (why.empty()) {
      // Nested in an accepted module: inside one of its branches (the smallest enclosing one).
      for (size_t a = 0; a < accepted.size() && why.empty(); ++a) {
        const Candidate& o = accepted[a];
        const std::set<int> onodes(o.region.nodes.begin(), o.region.nodes.end());
        const bool has_entry = onodes.count(r.entry) && r.entry != o.region.exit;
        const bool has_exit = onodes.count(r.exit) && r.exit != o.region.entry;
        if (!has_entry && !has_exit) continue;
        const int be = r.entry == o.region.entry ? -1 : o.branch_of[r.entry];
        if (!has_entry || !has_exit || be < 0 || o.branch_of[r.exit] != be) {
          why = "it overlaps module '" + o.module.name + "' without lying inside one of its branches";
          break;
        }
        if (c.module.depth <= o.module.depth) {  // the innermost enclosing module is the parent
          c.module.depth = o.module.depth + 1;
          c.module.parent = static_cast<int>(a);
          c.module.parent_branch = be;
        }
      }
    }
    if (!why.empty()) {
      rep.rejected.push_back({g.op(order[r.entry]).name, g.op(order[r.exit]).name,
                              static_cast<int>(r.nodes.size()) - 1, why});
      continue;
    }
    accepted.push_back(std::move(c));
  }
  // A fork inside an accepted module is a sub-module's input, not a rejected region.
  std::set<std::string> inside;
  for (const Candidate& c : accepted)
    for (ir::OpId op : c.module.ops) inside.insert(g.op(op).name);
  std::erase_if(rep.rejected, [&](const RejectedRegion& x) { return x.exit.empty() && inside.count(x.entry); });
  // Order by entry position (parents come first: a sub-module's fork lies inside its parent).
  std::vector<int> idx(accepted.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return accepted[a].region.entry < accepted[b].region.entry; });
  std::vector<int> new_index(accepted.size());
  for (size_t i = 0; i < idx.size(); ++i) new_index[idx[i]] = static_cast<int>(i);
  std::set<std::string> names;
  for (int i : idx) {
    Module m = accepted[i].module;
    if (m.parent >= 0) m.parent = new_index[m.parent];
    std::string name = CommonName(g, m.ops);
    if (name.empty()) name = "module" + std::to_string(rep.modules.size());
    std::string unique = name;
    for (int k = 2; !names.insert(unique).second; ++k) unique = name + "#" + std::to_string(k);
    m.name = unique;
    rep.modules.push_back(std::move(m));
  }
  return rep;
}

std::string ModuleReportText(const ir::Graph& g, const ModuleReport& r) {
  std::string s = std::to_string(r.modules.size()) + " modules (" + std::to_string(r.top_level()) +
                  " top level) in " + g.name + "\n";
  for (const Module& m : r.modules) {
    s += std::string(2 * m.depth, ' ') + m.name + ": depth " + std::to_string(m.depth) + ", " + m.merge_type +
         " of " + std::to_string(m.branches.size()) + " branches, " + std::to_string(m.ops.size()) +
         " ops; input '" + g.tensor(m.mifm).name + "' from '" + g.op(m.entry).name + "'\n";
    for (size_t b = 0; b < m.branches.size(); ++b) {
      s += std::string(2 * m.depth + 4, ' ') + "branch " + std::to_string(b + 1) + ":";
      if (m.branches[b].ops.empty()) s += " (identity)";
      if (m.branches[b].outputs.size() > 1)
        s += " [" + std::to_string(m.branches[b].outputs.size()) + " outputs: a sub-module ending at the merge]";
      for (ir::OpId op : m.branches[b].ops) s += " " + g.op(op).name;
      s += "\n";
    }
  }
  if (!r.rejected.empty()) s += "not modules:\n";
  for (const RejectedRegion& x : r.rejected)
    s += "  " + x.entry + (x.exit.empty() ? "" : " .. " + x.exit + " (" + std::to_string(x.ops) + " ops)") + ": " +
         x.reason + "\n";
  if (!r.erased_skips.empty())
    s += std::to_string(r.erased_skips.size()) + " long skip connections erased (read from off-chip memory)\n";
  for (const std::string& e : r.erased_skips) s += "  " + e + "\n";
  return s;
}

}  // namespace sramplan::fusion
