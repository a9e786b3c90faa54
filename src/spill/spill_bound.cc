#include "spill/spill_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "milp/milp.h"
#include "spill/cosma.h"

namespace sramplan::spill {
namespace {

using Clock = std::chrono::steady_clock;

// The reachability rows take n^2 / 8 bytes and every forced op a max flow over the graph.
constexpr int kMaxBoundOps = 20000;

// Ancestor sets of the data-dependence DAG as bit rows (the op list is topological).
class Reach {
 public:
  explicit Reach(const SpillProblem& p) : n_(static_cast<int>(p.ops.size())), words_((n_ + 63) / 64) {
    bits_.assign(static_cast<size_t>(n_) * words_, 0);
    std::vector<int> producer(p.tensors.size(), -1);
    for (int o = 0; o < n_; ++o)
      for (int t : p.ops[o].outputs) producer[t] = o;
    for (int o = 0; o < n_; ++o) {
      uint64_t* row = Row(o);
      for (int t : p.ops[o].inputs) {
        const int q = producer[t];
        if (q < 0) continue;
        const uint64_t* src = Row(q);
        for (int w = 0; w < words_; ++w) row[w] |= src[w];
        row[q / 64] |= uint64_t{1} << (q % 64);
      }
    }
  }
  // a is a strict ancestor of b.
  bool Anc(int a, int b) const { return (Row(b)[a / 64] >> (a % 64)) & 1; }

 private:
  uint64_t* Row(int o) { return bits_.data() + static_cast<size_t>(o) * words_; }
  const uint64_t* Row(int o) const { return bits_.data() + static_cast<size_t>(o) * words_; }
  int n_, words_;
  std::vector<uint64_t> bits_;
};

// Max flow (Dinic) on a small graph with int64 capacities; the min cut's value bounds the bytes live at
// an op over every order.
class MaxFlow {
 public:
  static constexpr int64_t kInf = int64_t{1} << 60;
  explicit MaxFlow(int n) : head_(n, -1), level_(n), it_(n) {}
  void Add(int u, int v, int64_t cap) {
    to_.push_back(v), cap_.push_back(cap), next_.push_back(head_[u]), head_[u] = static_cast<int>(to_.size()) - 1;
    to_.push_back(u), cap_.push_back(0), next_.push_back(head_[v]), head_[v] = static_cast<int>(to_.size()) - 1;
  }
  int64_t Run(int s, int t) {
    int64_t flow = 0;
    while (Bfs(s, t)) {
      it_ = head_;
      while (int64_t f = Dfs(s, t, kInf)) flow += f;
    }
    return flow;
  }

 private:
  bool Bfs(int s, int t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<int> q = {s};
    level_[s] = 0;
    for (size_t i = 0; i < q.size(); ++i)
      for (int e = head_[q[i]]; e >= 0; e = next_[e])
        if (cap_[e] > 0 && level_[to_[e]] < 0) {
          level_[to_[e]] = level_[q[i]] + 1;
          q.push_back(to_[e]);
        }
    return level_[t] >= 0;
  }
  int64_t Dfs(int u, int t, int64_t f) {
    if (u == t) return f;
    for (int& e = it_[u]; e >= 0; e = next_[e]) {
      const int v = to_[e];
      if (cap_[e] <= 0 || level_[v] != level_[u] + 1) continue;
      if (int64_t got = Dfs(v, t, std::min(f, cap_[e]))) {
        cap_[e] -= got;
        cap_[e ^ 1] += got;
        return got;
      }
    }
    return 0;
  }
  std::vector<int> head_, level_, it_, to_, next_;
  std::vector<int64_t> cap_;
};

bool PlainActivation(const SpillTensor& t) { return !t.graph_input && !t.weight && !t.graph_output; }

// One tensor's accesses and the chain of them that defines its gaps.
struct TensorLife {
  std::vector<int> accesses;  // ascending op index (a topological order)
  std::vector<int> chain;     // a longest chain of accesses under the ancestor relation
};

TensorLife LifeOf(const SpillProblem& p, const Reach& r, int t, int producer,
                  const std::vector<std::vector<int>>& consumers) {
  TensorLife life;
  if (producer >= 0) life.accesses.push_back(producer);
  for (int c : consumers[t]) life.accesses.push_back(c);
  std::sort(life.accesses.begin(), life.accesses.end());
  life.accesses.erase(std::unique(life.accesses.begin(), life.accesses.end()), life.accesses.end());
  const int k = static_cast<int>(life.accesses.size());
  std::vector<int> len(k, 1), prev(k, -1);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < i; ++j) {
      if (r.Anc(life.accesses[j], life.accesses[i]) && len[j] + 1 > len[i]) {
        len[i] = len[j] + 1;
        prev[i] = j;
      }
    }
  }
  int best = 0;
  for (int i = 1; i < k; ++i)
    if (len[i] > len[best]) best = i;
  for (int i = k > 0 ? best : -1; i >= 0; i = prev[i]) life.chain.push_back(life.accesses[i]);
  std::reverse(life.chain.begin(), life.chain.end());
  (void)p;
  return life;
}

// A necessarily-live tensor at an op and which drop variable frees it there.
struct LiveEntry {
  int tensor = 0;
  int gap = -1;  // index into the tensor's chain gaps, -1: in no gap of the chain
};

struct OpRow {
  int op = 0;
  int64_t excess = 0;  // E_o
  std::vector<LiveEntry> live;
};

double Fractional(const SpillProblem& p, const OpRow& row) {
  int64_t cheap = 0;  // reload-only bytes
  for (const LiveEntry& e : row.live)
    if (!PlainActivation(p.tensors[e.tensor])) cheap += p.tensors[e.tensor].bytes;
  if (cheap >= row.excess) return static_cast<double>(row.excess);
  return static_cast<double>(cheap) + 2.0 * static_cast<double>(row.excess - cheap);
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

// The tensors (not accessed by op o) that are live during o's step in at least one order, with the
// gap of their access chain that o lies in for every order (-1: none). An activation: its producer can
// run before o (it is not o or a descendant) and one of its readers after o (not o or an ancestor). A
// graph input or weight: one reader can run before o and another after it, the latter not an ancestor
// of the former.
std::vector<LiveEntry> PossiblyLive(const SpillProblem& p, const Reach& r, const std::vector<TensorLife>& life,
                                    const std::vector<int>& producer, const std::vector<std::vector<int>>& consumers,
                                    int o) {
  std::vector<LiveEntry> out;
  const int nt = static_cast<int>(p.tensors.size());
  auto accessed = [&](int t) {
    const auto& acc = life[t].accesses;
    return std::binary_search(acc.begin(), acc.end(), o);
  };
  auto can_before = [&](int a) { return a != o && !r.Anc(o, a); };
  auto can_after = [&](int c) { return c != o && !r.Anc(c, o); };
  for (int t = 0; t < nt; ++t) {
    if (life[t].accesses.size() < 2 || accessed(t)) continue;
    bool possible = false;
    if (producer[t] >= 0) {
      if (can_before(producer[t]))
        for (int c : consumers[t]) possible = possible || can_after(c);
    } else {
      for (int a : consumers[t])
        for (int c : consumers[t])
          possible = possible || (a != c && can_before(a) && can_after(c) && !r.Anc(c, a));
    }
    if (!possible) continue;
    LiveEntry e{t, -1};
    const auto& ch = life[t].chain;
    for (size_t j = 0; j + 1 < ch.size(); ++j) {
      if (r.Anc(ch[j], o) && r.Anc(o, ch[j + 1])) {
        e.gap = static_cast<int>(j);
        break;
      }
    }
    out.push_back(e);
  }
  return out;
}

// The fewest bytes of `live` tensors live during op o's step over all orders: a minimum cut over the
// down-sets S (the ops run before o) with ancestors(o) in S and o and its descendants outside. An
// activation costs its bytes when its producer is in S and a reader is not; a graph input or weight
// when one reader is in S and another is not (auxiliary nodes v -> u of capacity bytes; readers in S
// force v into S, readers outside force u out).
int64_t LeastLiveBytes(const SpillProblem& p, const Reach& r, const std::vector<std::vector<int>>& preds,
                       const std::vector<int>& producer, const std::vector<std::vector<int>>& consumers, int o,
                       const std::vector<LiveEntry>& live) {
  const int n = static_cast<int>(p.ops.size());
  const int src = n, sink = n + 1;
  MaxFlow f(n + 2 + 2 * static_cast<int>(live.size()));
  const int64_t inf = MaxFlow::kInf;
  for (int c = 0; c < n; ++c)
    for (int q : preds[c]) f.Add(c, q, inf);  // c in S => q in S
  for (int a = 0; a < n; ++a) {
    if (a == o || r.Anc(o, a)) f.Add(a, sink, inf);
    else if (r.Anc(a, o)) f.Add(src, a, inf);
  }
  int next = n + 2;
  for (const LiveEntry& e : live) {
    const int t = e.tensor;
    const int v = producer[t] >= 0 ? producer[t] : next++;
    const int u = next++;
    if (producer[t] < 0)
      for (int c : consumers[t]) f.Add(c, v, inf);
    f.Add(v, u, p.tensors[t].bytes);
    for (int c : consumers[t]) f.Add(u, c, inf);
  }
  return f.Run(src, sink);
}

}  // namespace

double GapPercent(int64_t bytes, int64_t bound) {
  if (bytes <= 0) return 0;
  return 100.0 * static_cast<double>(bytes - std::min(bytes, bound)) / static_cast<double>(bytes);
}

StatusOr<SpillBound> LowerBoundAllOrders(const SpillProblem& p, const SpillBoundOptions& o) {
  const Clock::time_point t0 = Clock::now();
  SP_RETURN_IF_ERROR(ValidateSpillProblem(p));
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  if (n > kMaxBoundOps) {
    SpillBound b;
    b.detail = "bound skipped: " + std::to_string(n) + " ops (limit " + std::to_string(kMaxBoundOps) + ")";
    return b;
  }
  std::vector<int> producer(nt, -1);
  std::vector<std::vector<int>> consumers(nt);
  for (int op = 0; op < n; ++op) {
    for (int t : p.ops[op].outputs) producer[t] = op;
    for (int t : p.ops[op].inputs) consumers[t].push_back(op);
  }
  Reach reach(p);
  std::vector<TensorLife> life(nt);
  for (int t = 0; t < nt; ++t) life[t] = LifeOf(p, reach, t, producer[t], consumers);

  // Tensors that are live at some op in some order, and the bytes live there in the best order.
  std::vector<std::vector<int>> preds(n);  // data dependences
  for (int op = 0; op < n; ++op) {
    for (int t : p.ops[op].inputs)
      if (producer[t] >= 0) preds[op].push_back(producer[t]);
    std::sort(preds[op].begin(), preds[op].end());
    preds[op].erase(std::unique(preds[op].begin(), preds[op].end()), preds[op].end());
  }
  std::vector<OpRow> rows;
  for (int op = 0; op < n; ++op) {
    int64_t w = 0;
    for (int t : p.ops[op].inputs) w += p.tensors[t].bytes;
    for (int t : p.ops[op].outputs) w += p.tensors[t].bytes;
    std::vector<LiveEntry> live = PossiblyLive(p, reach, life, producer, consumers, op);
    int64_t most = w;
    for (const LiveEntry& e : live) most += p.tensors[e.tensor].bytes;
    if (most <= p.budget) continue;
    const int64_t least_live = LeastLiveBytes(p, reach, preds, producer, consumers, op, live);
    if (w + least_live > p.budget) rows.push_back(OpRow{op, w + least_live - p.budget, std::move(live)});
  }
  SpillBound b;
  b.forced_ops = static_cast<int>(rows.size());
  int worst_op = -1;
  for (const OpRow& row : rows) {
    const int64_t f = static_cast<int64_t>(std::ceil(Fractional(p, row) - 1e-9));
    if (f > b.working_set_bytes) {
      b.working_set_bytes = f;
      worst_op = row.op;
    }
  }
  b.detail = std::to_string(rows.size()) + " of " + std::to_string(n) + " ops forced to drop live tensors; working-set bound " +
             std::to_string(b.working_set_bytes) + " B" +
             (worst_op >= 0 ? " (op '" + p.ops[worst_op].name + "')" : "");

  if (o.use_ilp && !rows.empty()) {
    // Units: the gcd of the tensors' bytes (every left-hand side is a multiple of it).
    int64_t g = 0;
    for (const SpillTensor& t : p.tensors) g = std::gcd(g, t.bytes);
    g = std::max<int64_t>(g, 1);
    milp::Model mip;
    std::vector<std::vector<int>> gap_var(nt);
    std::vector<int> out_var(nt, -1), spill_var(nt, -1), reload_var(nt, -1);
    auto unit = [&](int t) { return static_cast<double>(p.tensors[t].bytes / g); };
    auto drop_var = [&](const LiveEntry& e) {
      const int t = e.tensor;
      if (reload_var[t] < 0) {
        reload_var[t] = mip.AddCol(0, milp::Model::Inf(), unit(t), false);
        if (PlainActivation(p.tensors[t])) spill_var[t] = mip.AddCol(0, 1, unit(t), false);
        gap_var[t].assign(life[t].chain.empty() ? 0 : life[t].chain.size() - 1, -1);
      }
      int& v = e.gap >= 0 ? gap_var[t][e.gap] : out_var[t];
      if (v < 0) {
        v = mip.AddCol(0, 1, 0, true);
        if (spill_var[t] >= 0) mip.AddRow({{spill_var[t], 1}, {v, -1}}, 0, milp::Model::Inf());
      }
      return v;
    };
    for (const OpRow& row : rows) {
      std::vector<std::pair<int, double>> terms;
      for (const LiveEntry& e : row.live) terms.push_back({drop_var(e), unit(e.tensor)});
      const double rhs = std::ceil(static_cast<double>(row.excess) / static_cast<double>(g) - 1e-9);
      mip.AddRow(terms, rhs, milp::Model::Inf());
    }
    for (int t = 0; t < nt; ++t) {
      if (reload_var[t] < 0) continue;
      std::vector<std::pair<int, double>> sum = {{reload_var[t], 1}};
      for (int v : gap_var[t])
        if (v >= 0) sum.push_back({v, -1});
      mip.AddRow(sum, 0, milp::Model::Inf());
      if (out_var[t] >= 0) mip.AddRow({{reload_var[t], 1}, {out_var[t], -1}}, 0, milp::Model::Inf());
    }
    milp::SolveOptions so;
    so.time_limit_s = std::max(0.05, o.time_limit_s - std::chrono::duration<double>(Clock::now() - t0).count());
    so.verbose = o.verbose;
    milp::Result r = mip.Solve(so);
    b.ilp_run = true;
    b.vars = mip.num_cols();
    b.rows = mip.num_rows();
    b.ilp_optimal = r.optimal;
    b.ilp_hit_limit = r.hit_limit && !r.optimal;
    const double units = r.optimal ? r.objective : r.bound;
    b.ilp_bytes = static_cast<int64_t>(std::max(0.0, std::ceil(units - 1e-6))) * g;
    b.detail += "; cover ILP " + std::to_string(b.vars) + " vars, " + std::to_string(b.rows) + " rows: " +
                (r.optimal ? "optimal " : b.ilp_hit_limit ? "time limit, bound " : "bound ") +
                std::to_string(b.ilp_bytes) + " B";
  }
  b.bytes = std::max(b.working_set_bytes, b.ilp_bytes);
  b.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  b.detail += Fmt(", %.3f s", b.seconds);
  return b;
}

}  // namespace sramplan::spill
