#include "schedule/min_peak.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

namespace sramplan::schedule {
namespace {

using Clock = std::chrono::steady_clock;

// The graph reduced to what the memory model needs: per op the root buffers it creates and uses.
struct MemGraph {
  int n = 0;
  std::vector<std::vector<int>> preds;  // ops that must run before
  std::vector<std::vector<int>> uses;   // root buffers read (through views)
  std::vector<std::vector<int>> defs;   // root buffers created
  std::vector<int64_t> bytes;           // per root buffer
  std::vector<std::vector<int>> users;  // per root buffer: ops reading it
  std::vector<bool> pinned;             // graph outputs: never freed
  int64_t initial = 0;                  // graph inputs, live from the start
};

MemGraph Build(const ir::Graph& g) {
  MemGraph m;
  m.n = g.num_ops();
  std::vector<int> root_index(g.num_tensors(), -1);
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
  m.preds.resize(m.n);
  m.uses.resize(m.n);
  m.defs.resize(m.n);
  for (const ir::Op& op : g.ops()) {
    int v = op.id.value();
    for (ir::TensorId in : op.inputs) {
      const ir::Tensor& t = g.tensor(in);
      if (t.producer.valid()) m.preds[v].push_back(t.producer.value());
      int r = root_of(in);
      if (r >= 0 && std::find(m.uses[v].begin(), m.uses[v].end(), r) == m.uses[v].end()) m.uses[v].push_back(r);
    }
    std::sort(m.preds[v].begin(), m.preds[v].end());
    m.preds[v].erase(std::unique(m.preds[v].begin(), m.preds[v].end()), m.preds[v].end());
    for (ir::TensorId out : op.outputs) {
      int r = root_of(out);
      if (r < 0) continue;
      if (g.StorageRoot(out) == out) m.defs[v].push_back(r);
      if (g.tensor(out).kind == ir::TensorKind::kOutput) m.pinned[r] = true;
    }
  }
  for (int v = 0; v < m.n; ++v)
    for (int r : m.uses[v]) m.users[r].push_back(v);
  return m;
}

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
  int64_t peak;  // best peak reaching this set
  int64_t mem;   // live bytes between steps at this set
  int parent;    // index into the previous layer's entries
  int op;        // op added last
};

// Live bytes after running v on top of `set` (which does not contain v yet), and the step's peak.
void Step(const MemGraph& m, const Bits& set, int64_t mem, int v, int64_t* step_peak, int64_t* after) {
  int64_t def = 0;
  for (int r : m.defs[v]) def += m.bytes[r];
  *step_peak = mem + def;
  int64_t freed = 0;
  auto all_done = [&](int r) {
    for (int u : m.users[r])
      if (u != v && !set.Get(u)) return false;
    return true;
  };
  for (int r : m.uses[v])
    if (!m.pinned[r] && all_done(r)) freed += m.bytes[r];
  for (int r : m.defs[v])
    if (!m.pinned[r] && m.users[r].empty()) freed += m.bytes[r];
  *after = mem + def - freed;
}

bool Ready(const MemGraph& m, const Bits& set, int v) {
  if (set.Get(v)) return false;
  for (int p : m.preds[v])
    if (!set.Get(p)) return false;
  return true;
}

// Layered search. exact: keep every state with peak <= bound; beam: keep the best `width` per layer.
bool Search(const MemGraph& m, int64_t bound, bool exact, const MinPeakOptions& o, Clock::time_point start,
            std::vector<int>* order, int64_t* peak, int64_t* states) {
  std::vector<std::vector<Entry>> layers(1);
  layers[0].push_back({Bits(m.n), m.initial, m.initial, -1, -1});
  for (int k = 0; k < m.n; ++k) {
    std::unordered_map<Bits, int, BitsHash> index;
    std::vector<Entry> next;
    for (int e = 0; e < static_cast<int>(layers[k].size()); ++e) {
      const Entry& cur = layers[k][e];
      for (int v = 0; v < m.n; ++v) {
        if (!Ready(m, cur.set, v)) continue;
        int64_t sp, after;
        Step(m, cur.set, cur.mem, v, &sp, &after);
        int64_t p = std::max(cur.peak, sp);
        if (p > bound) continue;
        Bits s = cur.set;
        s.Set(v);
        auto [it, inserted] = index.emplace(s, static_cast<int>(next.size()));
        if (inserted) {
          next.push_back({std::move(s), p, after, e, v});
        } else if (p < next[it->second].peak) {
          next[it->second].peak = p;
          next[it->second].parent = e;
          next[it->second].op = v;
        }
      }
      ++*states;
      if (exact && *states > o.max_states) return false;
      if (exact && (*states & 1023) == 0 &&
          std::chrono::duration<double>(Clock::now() - start).count() > o.time_limit_s)
        return false;
    }
    if (next.empty()) return false;
    if (!exact && static_cast<int>(next.size()) > o.beam_width) {
      std::stable_sort(next.begin(), next.end(), [](const Entry& a, const Entry& b) {
        return a.peak != b.peak ? a.peak < b.peak : a.mem < b.mem;
      });
      next.resize(o.beam_width);
    }
    layers.push_back(std::move(next));
  }
  // The single full set; walk parents back.
  const auto& last = layers[m.n];
  int best = 0;
  for (int i = 1; i < static_cast<int>(last.size()); ++i)
    if (last[i].peak < last[best].peak) best = i;
  *peak = last[best].peak;
  order->assign(m.n, -1);
  for (int k = m.n, e = best; k > 0; --k) {
    (*order)[k - 1] = layers[k][e].op;
    e = layers[k][e].parent;
  }
  return true;
}

}  // namespace

int64_t PeakOfOrder(const ir::Graph& g, const analysis::Schedule& order) {
  MemGraph m = Build(g);
  Bits set(m.n);
  int64_t mem = m.initial, peak = m.initial;
  for (ir::OpId id : order) {
    int64_t sp, after;
    Step(m, set, mem, id.value(), &sp, &after);
    peak = std::max(peak, sp);
    mem = after;
    set.Set(id.value());
  }
  return peak;
}

MinPeakResult MinPeakSchedule(const ir::Graph& g, const MinPeakOptions& options) {
  auto start = Clock::now();
  MinPeakResult r;
  MemGraph m = Build(g);
  analysis::Schedule model = analysis::ModelOrder(g);
  r.model_order_peak = PeakOfOrder(g, model);
  // Every op needs its inputs and outputs at once: a bound no order can beat.
  int64_t op_bound = m.initial;
  for (int v = 0; v < m.n; ++v) {
    int64_t b = 0;
    for (int x : m.uses[v]) b += m.bytes[x];
    for (int x : m.defs[v]) b += m.bytes[x];
    op_bound = std::max(op_bound, b);
  }
  std::vector<int> order;
  int64_t peak = 0;
  if (Search(m, r.model_order_peak, /*exact=*/true, options, start, &order, &peak, &r.states)) {
    r.method = "exact-dp";
    r.proved_optimal = true;
    r.lower_bound = peak;
  } else {
    r.method = "beam";
    r.lower_bound = op_bound;
    int64_t beam_states = 0;
    if (!Search(m, r.model_order_peak, /*exact=*/false, options, start, &order, &peak, &beam_states)) {
      order.clear();
      for (int v = 0; v < m.n; ++v) order.push_back(v);
      peak = r.model_order_peak;
    }
    r.states += beam_states;
  }
  for (int v : order) r.order.push_back(ir::OpId(v));
  r.peak_bytes = peak;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace sramplan::schedule
