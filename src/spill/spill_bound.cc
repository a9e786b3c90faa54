#include "spill/spill_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

#include "milp/milp.h"
#include "spill/cosma.h"

namespace sramplan::spill {
namespace {

using Clock = std::chrono::steady_clock;

// The reachability rows take n^2 / 8 bytes and every forced op a max flow over the graph.
constexpr int kMaxBoundOps = 20000;
// Heavy ops paired in the order-pair disjunctions (each pair two max flows).
constexpr size_t kMaxHeavyOps = 120;

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

// A lower bound on the cost of covering one row with whole tensors (each dropped tensor costs a reload,
// plus a spill for a plain activation): a cover either drops one tensor of at least the excess (the
// cheapest such) or only smaller ones (at least their fractional cover; none when they do not reach it).
double IntegralCover(const SpillProblem& p, const OpRow& row) {
  double big = std::numeric_limits<double>::infinity();
  OpRow small{row.op, row.excess, {}};
  int64_t small_bytes = 0;
  for (const LiveEntry& e : row.live) {
    const SpillTensor& t = p.tensors[e.tensor];
    const double cost = static_cast<double>(t.bytes) * (PlainActivation(t) ? 2 : 1);
    if (t.bytes >= row.excess) {
      big = std::min(big, cost);
    } else {
      small.live.push_back(e);
      small_bytes += t.bytes;
    }
  }
  return small_bytes >= row.excess ? std::min(big, Fractional(p, small)) : big;
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
                                    int o, const std::vector<int>& before = {},
                                    const std::vector<int>& after = {}) {
  std::vector<LiveEntry> out;
  const int nt = static_cast<int>(p.tensors.size());
  auto accessed = [&](int t) {
    const auto& acc = life[t].accesses;
    return std::binary_search(acc.begin(), acc.end(), o);
  };
  // Under a scenario, `before` (and their ancestors) run before o and `after` (and descendants) after.
  auto forced_before = [&](int a) {
    if (r.Anc(a, o)) return true;
    for (int x : before)
      if (a == x || r.Anc(a, x)) return true;
    return false;
  };
  auto forced_after = [&](int c) {
    if (r.Anc(o, c)) return true;
    for (int x : after)
      if (c == x || r.Anc(x, c)) return true;
    return false;
  };
  auto can_before = [&](int a) { return a != o && !forced_after(a); };
  auto can_after = [&](int c) { return c != o && !forced_before(c); };
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
      if (forced_before(ch[j]) && forced_after(ch[j + 1])) {
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
                       const std::vector<LiveEntry>& live, const std::vector<int>& before = {},
                       const std::vector<int>& after = {}) {
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
  for (int a : before) f.Add(src, a, inf);  // a scenario: these ops (and their ancestors) run before o,
  for (int a : after) f.Add(a, sink, inf);   // these (and their descendants) after it
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

// Disjunctions of rows. Every order runs the ops of a small set C (a cluster) in some relative order
// pi that respects the dependencies; under pi, at each op o of C the ops of C before o (and their
// ancestors) are in the down-set of o and those after it (and their descendants) are not, so the least
// live bytes at o are those of the min cut with these extra constraints (infinite: no order realises
// pi). The rows of pi (the ops of C with excess under pi) all hold for every order that realises pi, and
// one pi is realised by every order: in the cover ILP a binary per pi, at least one chosen, switches its
// rows on; the working-set bound takes the cheapest pi's largest fractional cover. A disjunction where
// some realisable pi has no row is vacuous and dropped.
// Clusters: (1) the producers of an op J's inputs none of which is an ancestor of another (one runs
// last; only its row is used); (2) two heavy ops (W above half the budget) that no dependency orders,
// each with its heaviest heavy reader, up to four ops: whichever runs first leaves tensors live at the
// other's step or at its reader's (e.g. a cell output read by two heavy ops: after the first, either
// the output or the first's result is live at a heavy op).
struct Scenario {
  std::vector<OpRow> rows;
};
struct Disjunction {
  std::vector<Scenario> alts;
};

struct BoundGraph {
  const SpillProblem& p;
  const Reach& r;
  const std::vector<std::vector<int>>& preds;
  const std::vector<int>& producer;
  const std::vector<std::vector<int>>& consumers;
  const std::vector<int64_t>& own;
  const std::vector<TensorLife>& life;
};

// Row a implies row b for binary drops: same op, at least b's excess, and only tensors (and gaps) of b.
bool Implies(const OpRow& a, const OpRow& b) {
  if (a.op != b.op || a.excess < b.excess) return false;
  size_t k = 0;
  for (const LiveEntry& e : a.live) {
    while (k < b.live.size() && b.live[k].tensor < e.tensor) ++k;
    if (k == b.live.size() || b.live[k].tensor != e.tensor || b.live[k].gap != e.gap) return false;
  }
  return true;
}

// Every row of b is implied by a row of a (a's rows allow fewer drop choices).
bool Stronger(const Scenario& a, const Scenario& b) {
  for (const OpRow& rb : b.rows) {
    bool implied = false;
    for (const OpRow& ra : a.rows) implied = implied || Implies(ra, rb);
    if (!implied) return false;
  }
  return true;
}

// The rows of one relative order `pi` of a cluster; false when no order realises it.
bool ScenarioRows(const BoundGraph& g, const std::vector<int>& pi, bool last_only, Scenario* out) {
  for (size_t i = last_only ? pi.size() - 1 : 0; i < pi.size(); ++i) {
    std::vector<int> before(pi.begin(), pi.begin() + static_cast<long>(i)), after(pi.begin() + static_cast<long>(i) + 1, pi.end());
    const int o = pi[i];
    std::vector<LiveEntry> live = PossiblyLive(g.p, g.r, g.life, g.producer, g.consumers, o, before, after);
    const int64_t least = LeastLiveBytes(g.p, g.r, g.preds, g.producer, g.consumers, o, live, before, after);
    if (least >= MaxFlow::kInf / 2) return false;
    if (g.own[o] + least > g.p.budget) out->rows.push_back(OpRow{o, g.own[o] + least - g.p.budget, std::move(live)});
  }
  return true;
}

// All relative orders of `cluster` that respect the ancestor relation; empty when the disjunction is
// vacuous.
Disjunction ClusterDisjunction(const BoundGraph& g, std::vector<int> cluster, bool last_only) {
  Disjunction d;
  std::sort(cluster.begin(), cluster.end());
  do {
    bool ok = true;
    for (size_t i = 0; i < cluster.size() && ok; ++i)
      for (size_t k = i + 1; k < cluster.size() && ok; ++k) ok = !g.r.Anc(cluster[k], cluster[i]);
    if (!ok) continue;
    Scenario sc;
    if (!ScenarioRows(g, cluster, last_only, &sc)) continue;
    if (sc.rows.empty()) return Disjunction{};
    d.alts.push_back(std::move(sc));
  } while (std::next_permutation(cluster.begin(), cluster.end()));
  // A relative order whose rows imply all of another's is dropped (the other allows more), so the ILP
  // keeps only the weakest ones (one left: its rows hold in every order).
  std::vector<bool> dominated(d.alts.size(), false);
  for (size_t i = 0; i < d.alts.size(); ++i) {
    for (size_t k = 0; k < d.alts.size() && !dominated[i]; ++k) {
      if (k == i || !Stronger(d.alts[i], d.alts[k])) continue;
      // Equivalent scenarios: keep the first.
      dominated[i] = !Stronger(d.alts[k], d.alts[i]) || k < i;
    }
  }
  std::vector<Scenario> kept;
  for (size_t i = 0; i < d.alts.size(); ++i)
    if (!dominated[i]) kept.push_back(std::move(d.alts[i]));
  d.alts = std::move(kept);
  return d;
}

std::vector<Disjunction> Disjunctions(const BoundGraph& g, Clock::time_point deadline, bool* cut) {
  std::vector<Disjunction> out;
  auto late = [&]() { return *cut = *cut || Clock::now() > deadline; };
  const int n = static_cast<int>(g.p.ops.size());
  const Reach& r = g.r;
  for (int j = 0; j < n; ++j) {  // (1) the last producer of a join
    std::vector<int> cand;
    for (int q : g.preds[j]) {
      bool dominated = false;
      for (int q2 : g.preds[j]) dominated = dominated || (q2 != q && r.Anc(q, q2));
      if (!dominated) cand.push_back(q);
    }
    if (cand.size() < 2 || cand.size() > 5) continue;
    if (late()) return out;
    Disjunction d = ClusterDisjunction(g, cand, true);
    if (!d.alts.empty()) out.push_back(std::move(d));
  }
  // (2) heavy pairs with their heaviest heavy readers.
  std::vector<int> heavy;
  for (int o = 0; o < n; ++o)
    if (2 * g.own[o] > g.p.budget) heavy.push_back(o);
  if (heavy.size() > kMaxHeavyOps) {
    std::stable_sort(heavy.begin(), heavy.end(), [&](int a, int b) { return g.own[a] > g.own[b]; });
    heavy.resize(kMaxHeavyOps);
    std::sort(heavy.begin(), heavy.end());
  }
  auto heavy_reader = [&](int o) {
    int best = -1;
    for (int t : g.p.ops[o].outputs)
      for (int c : g.consumers[t])
        if (2 * g.own[c] > g.p.budget && (best < 0 || g.own[c] > g.own[best])) best = c;
    return best;
  };
  std::vector<std::vector<int>> seen;
  for (size_t i = 0; i < heavy.size(); ++i) {
    for (size_t k = i + 1; k < heavy.size(); ++k) {
      const int a = heavy[i], c = heavy[k];
      if (r.Anc(a, c) || r.Anc(c, a)) continue;
      if (late()) return out;
      std::vector<int> cluster = {a, c};
      for (int x : {heavy_reader(a), heavy_reader(c)})
        if (x >= 0 && std::find(cluster.begin(), cluster.end(), x) == cluster.end()) cluster.push_back(x);
      std::sort(cluster.begin(), cluster.end());
      if (std::find(seen.begin(), seen.end(), cluster) != seen.end()) continue;
      seen.push_back(cluster);
      Disjunction d = ClusterDisjunction(g, cluster, false);
      if (!d.alts.empty()) out.push_back(std::move(d));
    }
  }
  return out;
}

struct CoverPart {
  int64_t units = 0;  // the component's optimum or CBC's proved bound, rounded up
  bool optimal = false, hit_limit = false;
  int vars = 0, rows = 0;
};

// The cover ILP of one component (rows and disjunctions over tensors no other component uses). Without
// `with_choices` the disjunctions enter only through their cost cuts (a relaxation CBC solves fast).
CoverPart SolveCoverComponent(const SpillProblem& p, const std::vector<TensorLife>& life,
                              const std::vector<OpRow>& rows, const std::vector<Disjunction>& groups, int64_t g,
                              bool with_choices, double time_limit_s, bool verbose) {
  const int nt = static_cast<int>(p.tensors.size());
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
    if (e.gap == -2) return -1;  // only the tensor's spill and reload columns
    int& v = e.gap >= 0 ? gap_var[t][e.gap] : out_var[t];
    if (v < 0) {
      v = mip.AddCol(0, 1, 0, true);
      if (spill_var[t] >= 0) mip.AddRow({{spill_var[t], 1}, {v, -1}}, 0, milp::Model::Inf());
    }
    return v;
  };
  // A row's cover: sum of the live tensors' drop binaries times their bytes >= the excess, each
  // coefficient capped at the excess (equivalent for binaries, and a tighter LP relaxation).
  auto cover = [&](const OpRow& row, double* rhs) {
    *rhs = std::ceil(static_cast<double>(row.excess) / static_cast<double>(g) - 1e-9);
    std::vector<std::pair<int, double>> terms;
    for (const LiveEntry& e : row.live) terms.push_back({drop_var(e), std::min(unit(e.tensor), *rhs)});
    return terms;
  };
  // Cost cuts: the spill and reload bytes of a row's tensors are at least its integral cover's cost (for
  // a disjunction: of the tensors of all its rows, at least the cheapest relative order's largest).
  auto cost_cut = [&](const std::vector<int>& tensors, double least_bytes) {
    std::vector<std::pair<int, double>> terms;
    for (int t : tensors) {
      drop_var(LiveEntry{t, -2});
      terms.push_back({reload_var[t], unit(t)});
      if (spill_var[t] >= 0) terms.push_back({spill_var[t], unit(t)});
    }
    const double rhs = std::ceil(least_bytes / static_cast<double>(g) - 1e-9);
    if (!with_choices && rhs > 0 && std::isfinite(rhs)) mip.AddRow(terms, rhs, milp::Model::Inf());
  };
  auto tensors_of = [](const OpRow& row, std::vector<int>* out) {
    for (const LiveEntry& e : row.live) out->push_back(e.tensor);
  };
  for (const OpRow& row : rows) {
    double rhs = 0;
    std::vector<std::pair<int, double>> terms = cover(row, &rhs);
    mip.AddRow(terms, rhs, milp::Model::Inf());
    std::vector<int> ts;
    tensors_of(row, &ts);
    cost_cut(ts, IntegralCover(p, row));
  }
  for (const Disjunction& d : groups) {
    std::vector<int> ts;
    double least = std::numeric_limits<double>::infinity();
    for (const Scenario& sc : d.alts) {
      double most = 0;
      for (const OpRow& row : sc.rows) {
        tensors_of(row, &ts);
        most = std::max(most, IntegralCover(p, row));
      }
      least = std::min(least, most);
    }
    std::sort(ts.begin(), ts.end());
    ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
    cost_cut(ts, least);
  }
  for (const Disjunction& d : groups) {  // one relative order's rows hold: sum_pi y_pi >= 1
    if (!with_choices) break;
    std::vector<std::pair<int, double>> pick;
    for (const Scenario& sc : d.alts) {
      const int y = mip.AddCol(0, 1, 0, true);
      pick.push_back({y, 1});
      for (const OpRow& row : sc.rows) {
        double rhs = 0;
        std::vector<std::pair<int, double>> terms = cover(row, &rhs);
        terms.push_back({y, -rhs});
        mip.AddRow(terms, 0, milp::Model::Inf());
      }
    }
    mip.AddRow(pick, 1, milp::Model::Inf());
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
  so.time_limit_s = time_limit_s;
  so.verbose = verbose;
  milp::Result r = mip.Solve(so);
  CoverPart part;
  part.vars = mip.num_cols();
  part.rows = mip.num_rows();
  part.optimal = r.optimal;
  part.hit_limit = r.hit_limit && !r.optimal;
  // Every integer solution's objective is a whole number of units.
  part.units = static_cast<int64_t>(std::max(0.0, std::ceil((r.optimal ? r.objective : r.bound) - 1e-6)));
  return part;
}

// The joint cover ILP (spill_bound.h), split into the components of the tensors its rows share (each
// solved alone, in order of size, with what is left of the time; their optima add up): the sum of the
// components' optima or proved bounds into *b (a component the time limit skips adds 0).
void SolveCoverIlp(const SpillProblem& p, const std::vector<TensorLife>& life, const std::vector<OpRow>& rows,
                   const std::vector<Disjunction>& groups, double time_limit_s, bool verbose, SpillBound* b) {
  const Clock::time_point t0 = Clock::now();
  const int nt = static_cast<int>(p.tensors.size());
  // Units: the gcd of the tensors' bytes (every left-hand side is a multiple of it).
  int64_t g = 0;
  for (const SpillTensor& t : p.tensors) g = std::gcd(g, t.bytes);
  g = std::max<int64_t>(g, 1);
  std::vector<int> root(nt);
  std::iota(root.begin(), root.end(), 0);
  std::function<int(int)> find = [&](int t) { return root[t] == t ? t : root[t] = find(root[t]); };
  int anchor = -1;
  auto join = [&](const OpRow& row) {
    for (const LiveEntry& e : row.live) {
      if (anchor >= 0) root[find(e.tensor)] = find(anchor);
      anchor = e.tensor;
    }
  };
  for (const OpRow& row : rows) {
    anchor = -1;
    join(row);
  }
  for (const Disjunction& d : groups) {
    anchor = -1;
    for (const Scenario& sc : d.alts)
      for (const OpRow& row : sc.rows) join(row);
  }
  auto first_tensor = [](const OpRow& row) { return row.live.empty() ? -1 : row.live[0].tensor; };
  std::map<int, std::pair<std::vector<OpRow>, std::vector<Disjunction>>> comps;
  for (const OpRow& row : rows)
    if (first_tensor(row) >= 0) comps[find(first_tensor(row))].first.push_back(row);
  for (const Disjunction& d : groups) {
    int t = -1;
    for (const Scenario& sc : d.alts)
      for (const OpRow& row : sc.rows) t = t >= 0 ? t : first_tensor(row);
    if (t >= 0) comps[find(t)].second.push_back(d);
  }
  std::vector<const std::pair<std::vector<OpRow>, std::vector<Disjunction>>*> order;
  for (const auto& [key, c] : comps) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* c) {
    return a->first.size() + 4 * a->second.size() < c->first.size() + 4 * c->second.size();
  });
  // Per component: the relaxation without the choice binaries first (fast), then the full model with
  // what is left, which replaces it when CBC proves its optimum (the first relaxes the second).
  int64_t units = 0;
  int solved = 0, skipped = 0;
  bool optimal = true, hit = false;
  std::vector<int64_t> best(order.size(), 0);
  std::vector<bool> done(order.size(), false);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < order.size(); ++i) {
      const auto* c = order[i];
      if (done[i] || (pass == 1 && c->second.empty())) continue;
      const double left = time_limit_s - std::chrono::duration<double>(Clock::now() - t0).count();
      if (left <= 0.02) continue;
      const CoverPart part = SolveCoverComponent(p, life, c->first, c->second, g, pass == 1, left, verbose);
      // The full model counts only when proved (its bound at a time limit would vary run to run).
      if (pass == 0 || part.optimal) best[i] = std::max(best[i], part.units);
      done[i] = part.optimal && (pass == 1 || c->second.empty());
      b->vars = std::max(b->vars, part.vars);
      b->rows = std::max(b->rows, part.rows);
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    units += best[i];
    solved += best[i] > 0 || done[i];
    skipped += !done[i] && best[i] == 0;
    optimal = optimal && done[i];
  }
  hit = !optimal;
  b->ilp_run = true;
  b->ilp_optimal = optimal;
  b->ilp_hit_limit = hit;
  b->ilp_bytes = units * g;
  b->detail += "; cover ILP " + std::to_string(b->vars) + " vars, " + std::to_string(b->rows) + " rows" +
               (order.size() > 1 ? " in " + std::to_string(solved) + " components" : std::string()) +
               (skipped ? " (" + std::to_string(skipped) + " not solved within the time limit)" : "") + ": " +
               (optimal ? "optimal " : hit ? "time limit, bound " : "bound ") + std::to_string(b->ilp_bytes) + " B";
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
  std::vector<int64_t> own(n, 0);  // W_o
  for (int op = 0; op < n; ++op) {
    int64_t& w = own[op];
    for (int t : p.ops[op].inputs) w += p.tensors[t].bytes;
    for (int t : p.ops[op].outputs) w += p.tensors[t].bytes;
    std::vector<LiveEntry> live = PossiblyLive(p, reach, life, producer, consumers, op);
    int64_t most = w;
    for (const LiveEntry& e : live) most += p.tensors[e.tensor].bytes;
    if (most <= p.budget) continue;
    const int64_t least_live = LeastLiveBytes(p, reach, preds, producer, consumers, op, live);
    if (w + least_live > p.budget) rows.push_back(OpRow{op, w + least_live - p.budget, std::move(live)});
  }
  // The disjunctions get at most half of the time limit (the ILP the rest).
  bool disjunctions_cut = false;
  const std::vector<Disjunction> groups =
      Disjunctions(BoundGraph{p, reach, preds, producer, consumers, own, life},
                   t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.time_limit_s / 2)),
                   &disjunctions_cut);
  SpillBound b;
  b.forced_ops = static_cast<int>(rows.size());
  b.disjunctions = static_cast<int>(groups.size());
  int worst_op = -1;
  for (const OpRow& row : rows) {
    const int64_t f = static_cast<int64_t>(std::ceil(IntegralCover(p, row) - 1e-9));
    if (f > b.working_set_bytes) {
      b.working_set_bytes = f;
      worst_op = row.op;
    }
  }
  int worst_group = -1;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    double least = -1;
    for (const Scenario& sc : groups[gi].alts) {
      double most = 0;
      for (const OpRow& row : sc.rows) most = std::max(most, IntegralCover(p, row));
      least = least < 0 ? most : std::min(least, most);
    }
    const int64_t f = static_cast<int64_t>(std::ceil(least - 1e-9));
    if (f > b.working_set_bytes) {
      b.working_set_bytes = f;
      worst_op = -1;
      worst_group = static_cast<int>(gi);
    }
  }
  b.detail = std::to_string(rows.size()) + " of " + std::to_string(n) + " ops forced to drop live tensors; working-set bound " +
             std::to_string(b.working_set_bytes) + " B" +
             (worst_op >= 0 ? " (op '" + p.ops[worst_op].name + "')" : "") +
             (worst_group >= 0 ? " (a disjunction over relative orders)" : "") +
             (groups.empty() && !disjunctions_cut
                  ? std::string()
                  : "; " + std::to_string(groups.size()) + " order disjunctions" +
                        (disjunctions_cut ? " (the time limit stopped their search)" : ""));

  if (o.use_ilp && (!rows.empty() || !groups.empty()))
    SolveCoverIlp(p, life, rows, groups,
                  std::max(0.05, o.time_limit_s - std::chrono::duration<double>(Clock::now() - t0).count()), o.verbose,
                  &b);
  b.bytes = std::max(b.working_set_bytes, b.ilp_bytes);
  b.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  b.detail += Fmt(", %.3f s", b.seconds);
  return b;
}

}  // namespace sramplan::spill
