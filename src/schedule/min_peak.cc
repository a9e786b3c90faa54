#include "schedule/min_peak.h"

#include <algorithm>
#include <unordered_map>

#include "schedule/hierarchical.h"

namespace sramplan::schedule {
namespace internal {
namespace {

class Bits {
 public:
  explicit Bits(int n = 0) : w_((n + 63) / 64, 0) {}
  bool Get(int i) const { return (w_[i >> 6] >> (i & 63)) & 1; }
  void Set(int i) { w_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool operator==(const Bits& o) const { return w_ == o.w_; }
  size_t Hash() const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t x : w_) h = (h ^ x) * 1099511628211ull;
    return static_cast<size_t>(h);
  }

 private:
  std::vector<uint64_t> w_;
};
struct BitsHash {
  size_t operator()(const Bits& b) const { return b.Hash(); }
};

struct Entry {
  Bits set;
  std::vector<int> ready;  // nodes not in `set` whose predecessors all are, ascending
  int64_t peak;            // best peak reaching this set
  int64_t mem;             // live bytes between steps at this set
  int parent;              // index into the previous layer's entries
  int node;                // node added last
};

// Live bytes after running node v on top of `set` (which does not contain v yet), and the step
// peak.
void Step(const MemProblem& m, const Bits& set, int64_t mem, int v, int64_t* step_peak,
          int64_t* after) {
  int64_t cur = mem, peak = 0;
  const std::vector<int>& seq = m.nodes[v];
  for (int idx = 0; idx < static_cast<int>(seq.size()); ++idx) {
    int u = seq[idx];
    int64_t def = 0;
    for (int r : m.defs[u]) def += m.bytes[r];
    peak = std::max(peak, cur + def);
    int64_t freed = 0;
    auto all_done = [&](int r) {
      for (int w : m.users[r]) {
        if (w == u) continue;
        int nw = m.node_of[w];
        if (nw == v ? m.pos_in_node[w] > idx : !set.Get(nw)) return false;
      }
      return true;
    };
    for (int r : m.uses[u])
      if (!m.pinned[r] && all_done(r)) freed += m.bytes[r];
    for (int r : m.defs[u])
      if (!m.pinned[r] && m.users[r].empty()) freed += m.bytes[r];
    cur += def - freed;
  }
  *step_peak = peak;
  *after = cur;
}

std::vector<std::vector<int>> Successors(const MemProblem& m) {
  std::vector<std::vector<int>> succ(m.nodes.size());
  for (int v = 0; v < static_cast<int>(m.nodes.size()); ++v)
    for (int p : m.preds[v]) succ[p].push_back(v);
  return succ;
}

}  // namespace

MemProblem BuildMemProblem(const ir::Graph& g) {
  MemProblem m;
  m.num_micro = g.num_ops();
  std::vector<int> root_index(g.num_tensors(), -1);
  std::vector<bool> defined;
  auto root_of = [&](ir::TensorId t) {
    ir::TensorId r = g.StorageRoot(t);
    if (g.tensor(r).kind == ir::TensorKind::kConstant) return -1;
    int& idx = root_index[r.value()];
    if (idx < 0) {
      idx = static_cast<int>(m.bytes.size());
      m.bytes.push_back(g.tensor(r).Bytes());
      m.users.emplace_back();
      m.pinned.push_back(false);
      if (g.tensor(r).kind == ir::TensorKind::kInput) m.initial += g.tensor(r).Bytes();
    }
    return idx;
  };
  std::vector<std::vector<int>> preds(m.num_micro);
  m.uses.resize(m.num_micro);
  m.defs.resize(m.num_micro);
  for (const ir::Op& op : g.ops()) {
    int v = op.id.value();
    for (ir::TensorId in : op.inputs) {
      const ir::Tensor& t = g.tensor(in);
      if (t.producer.valid()) preds[v].push_back(t.producer.value());
      int r = root_of(in);
      if (r >= 0 && std::find(m.uses[v].begin(), m.uses[v].end(), r) == m.uses[v].end())
        m.uses[v].push_back(r);
    }
    std::sort(preds[v].begin(), preds[v].end());
    preds[v].erase(std::unique(preds[v].begin(), preds[v].end()), preds[v].end());
    for (ir::TensorId out : op.outputs) {
      int r = root_of(out);
      if (r < 0) continue;
      if (g.StorageRoot(out) == out) m.defs[v].push_back(r);
      if (g.tensor(out).kind == ir::TensorKind::kOutput) m.pinned[r] = true;
    }
  }
  for (int v = 0; v < m.num_micro; ++v)
    for (int r : m.uses[v]) m.users[r].push_back(v);
  SetSingletonNodes(&m, preds);
  return m;
}

void SetSingletonNodes(MemProblem* m, const std::vector<std::vector<int>>& micro_preds) {
  m->nodes.assign(m->num_micro, {});
  m->node_of.assign(m->num_micro, 0);
  m->pos_in_node.assign(m->num_micro, 0);
  for (int v = 0; v < m->num_micro; ++v) {
    m->nodes[v] = {v};
    m->node_of[v] = v;
  }
  m->preds = micro_preds;
}

int64_t PeakOfNodeOrder(const MemProblem& m, const std::vector<int>& order) {
  Bits set(static_cast<int>(m.nodes.size()));
  int64_t mem = m.initial, peak = m.initial;
  for (int v : order) {
    int64_t sp, after;
    Step(m, set, mem, v, &sp, &after);
    peak = std::max(peak, sp);
    mem = after;
    set.Set(v);
  }
  return peak;
}

std::vector<int64_t> MemAfterNodes(const MemProblem& m, const std::vector<int>& order) {
  Bits set(static_cast<int>(m.nodes.size()));
  int64_t mem = m.initial;
  std::vector<int64_t> res;
  res.reserve(order.size());
  for (int v : order) {
    int64_t sp, after;
    Step(m, set, mem, v, &sp, &after);
    mem = after;
    set.Set(v);
    res.push_back(mem);
  }
  return res;
}

bool SearchOrder(const MemProblem& m, int64_t bound, bool exact, const SearchLimits& o,
                 std::vector<int>* order, int64_t* peak, int64_t* states) {
  const int n = static_cast<int>(m.nodes.size());
  std::vector<std::vector<int>> succ = Successors(m);
  std::vector<int> npreds(n);
  for (int v = 0; v < n; ++v) npreds[v] = static_cast<int>(m.preds[v].size());
  std::vector<std::vector<Entry>> layers(1);
  {
    Entry e{Bits(n), {}, m.initial, m.initial, -1, -1};
    for (int v = 0; v < n; ++v)
      if (npreds[v] == 0) e.ready.push_back(v);
    layers[0].push_back(std::move(e));
  }
  int64_t checked = 0, expanded = 0;
  for (int k = 0; k < n; ++k) {
    std::unordered_map<Bits, int, BitsHash> index;
    std::vector<Entry> next;
    for (int e = 0; e < static_cast<int>(layers[k].size()); ++e) {
      const Entry& cur = layers[k][e];
      for (int v : cur.ready) {
        int64_t sp, after;
        Step(m, cur.set, cur.mem, v, &sp, &after);
        int64_t p = std::max(cur.peak, sp);
        if (p > bound) continue;
        Bits s = cur.set;
        s.Set(v);
        auto [it, inserted] = index.emplace(s, static_cast<int>(next.size()));
        if (inserted) {
          std::vector<int> ready;
          ready.reserve(cur.ready.size() + succ[v].size());
          for (int w : cur.ready)
            if (w != v) ready.push_back(w);
          for (int w : succ[v]) {
            bool ok = true;
            for (int q : m.preds[w])
              if (!s.Get(q)) {
                ok = false;
                break;
              }
            if (ok) ready.push_back(w);
          }
          std::sort(ready.begin(), ready.end());
          next.push_back({std::move(s), std::move(ready), p, after, e, v});
        } else if (p < next[it->second].peak) {
          next[it->second].peak = p;
          next[it->second].parent = e;
          next[it->second].node = v;
        }
      }
      ++*states;
      if (exact && ++expanded > o.max_states) return false;
      if ((++checked & 255) == 0) {
        if (o.progress) o.progress->Update(o.best, o.bound, *states);
        if (std::chrono::duration<double>(Clock::now() - o.start).count() > o.time_limit_s) return false;
      }
    }
    if (next.empty()) return false;
    if (!exact && static_cast<int>(next.size()) > o.beam_width) {
      std::stable_sort(next.begin(), next.end(), [](const Entry& a, const Entry& b) {
        return a.peak != b.peak ? a.peak < b.peak : a.mem < b.mem;
      });
      next.resize(o.beam_width);
    }
    // The previous layer's ready lists and sets are no longer needed (parents are walked by
    // index): keeping an n-bit set per state of every layer made memory quadratic in the ops.
    for (Entry& pe : layers[k]) {
      std::vector<int>().swap(pe.ready);
      pe.set = Bits();
    }
    layers.push_back(std::move(next));
  }
  const auto& last = layers[n];
  int best = 0;
  for (int i = 1; i < static_cast<int>(last.size()); ++i)
    if (last[i].peak < last[best].peak) best = i;
  *peak = last[best].peak;
  order->assign(n, -1);
  for (int k = n, e = best; k > 0; --k) {
    (*order)[k - 1] = layers[k][e].node;
    e = layers[k][e].parent;
  }
  return true;
}

}  // namespace internal

int64_t PeakOfOrder(const ir::Graph& g, const analysis::Schedule& order) {
  internal::MemProblem m = internal::BuildMemProblem(g);
  std::vector<int> o;
  o.reserve(order.size());
  for (ir::OpId id : order) o.push_back(id.value());
  return internal::PeakOfNodeOrder(m, o);
}

namespace {
constexpr int kBeamWithHierarchicalMaxOps = 200;
}  // namespace

MinPeakResult MinPeakSchedule(const ir::Graph& g, const MinPeakOptions& options) {
  using internal::Clock;
  auto start = Clock::now();
  MinPeakResult r;
  internal::MemProblem m = internal::BuildMemProblem(g);
  analysis::Schedule model = analysis::ModelOrder(g);
  r.model_order_peak = PeakOfOrder(g, model);
  // Every op needs its inputs and outputs at once: a bound no order can beat.
  int64_t op_bound = m.initial;
  for (int v = 0; v < m.num_micro; ++v) {
    int64_t b = 0;
    for (int x : m.uses[v]) b += m.bytes[x];
    for (int x : m.defs[v]) b += m.bytes[x];
    op_bound = std::max(op_bound, b);
  }
  Progress progress("min-peak order", options.time_limit_s, "B", "states");
  const double exact_limit_s = options.total_time_limit ? options.time_limit_s / 2 : options.time_limit_s;
  // The fallbacks' budget: their own time_limit_s, or what remains of a total one.
  auto fallback_limit_s = [&] {
    if (!options.total_time_limit) return options.time_limit_s;
    return std::max(0.05, options.time_limit_s - std::chrono::duration<double>(Clock::now() - start).count());
  };
  internal::SearchLimits limits{options.max_states, exact_limit_s, options.beam_width,
                                start, &progress, r.model_order_peak, op_bound};
  std::vector<int> order;
  int64_t peak = 0;
  if (internal::SearchOrder(m, r.model_order_peak, /*exact=*/true, limits, &order, &peak,
                            &r.states)) {
    r.method = "exact-dp";
    r.proved_optimal = true;
    r.lower_bound = peak;
  } else {
    r.lower_bound = op_bound;
    MinPeakResult h;
    bool have_h = false;
    if (options.hierarchical_fallback) {
      HierarchicalOptions ho;
      ho.region_max_states = options.max_states;
      ho.time_limit_s = fallback_limit_s();
      h = HierarchicalMinPeak(g, ho);
      have_h = true;
      r.states += h.states;
      r.lower_bound = std::max(r.lower_bound, h.lower_bound);
    }
    // The beam expands beam_width states per layer over the ready ops (about n^2 * width steps): on
    // the NAS graphs and bundled models it never beat the hierarchical mode and took up to 15 s, so
    // with the hierarchical fallback it only runs on small graphs, where it is cheap.
    std::vector<int> beam_order;
    int64_t beam_peak = r.model_order_peak;
    bool beam_ok = false;
    if (!have_h || (!h.proved_optimal && m.num_micro <= kBeamWithHierarchicalMaxOps)) {
      int64_t beam_states = 0;
      internal::SearchLimits bl = limits;
      bl.start = Clock::now();
      bl.time_limit_s = fallback_limit_s();
      beam_ok = internal::SearchOrder(m, r.model_order_peak, /*exact=*/false, bl, &beam_order,
                                      &beam_peak, &beam_states);
      r.states += beam_states;
    }
    if (have_h && (!beam_ok || h.peak_bytes <= beam_peak)) {
      r.method = "hierarchical";
      r.regions = h.regions;
      for (ir::OpId id : h.order) order.push_back(id.value());
      peak = h.peak_bytes;
    } else if (beam_ok) {
      r.method = "beam";
      order = beam_order;
      peak = beam_peak;
    } else {
      r.method = "beam";
      order.clear();
      for (int v = 0; v < m.num_micro; ++v) order.push_back(v);
      peak = r.model_order_peak;
    }
    r.proved_optimal = peak == r.lower_bound;
  }
  for (int v : order) r.order.push_back(ir::OpId(v));
  r.peak_bytes = peak;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  progress.Finish(static_cast<double>(peak), static_cast<double>(r.lower_bound));
  return r;
}

}  // namespace sramplan::schedule
