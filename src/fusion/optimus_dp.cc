#include "fusion/optimus_dp.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "support/progress.h"

namespace sramplan::fusion {
namespace {

using Bits = std::vector<uint64_t>;
constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

struct VecHash {
  size_t operator()(const std::vector<uint64_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t x : v) {
      h ^= x;
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
  size_t operator()(const std::vector<int>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (int x : v) {
      h ^= static_cast<uint64_t>(x) + 0x9e3779b97f4a7c15ull;
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

bool Has(const Bits& b, int v) { return (b[v >> 6] >> (v & 63)) & 1; }
void Set(Bits& b, int v) { b[v >> 6] |= uint64_t{1} << (v & 63); }

// A vertex's 64-bit code (splitmix64): a group's hash is the XOR of its vertices' codes, updated
// in O(1) when a vertex joins. Only a hash: keys compare their vertex lists too.
uint64_t VertexCode(int v) {
  uint64_t z = static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A group (vertices ascending) with its hash.
struct GroupKey {
  uint64_t hash = 0;
  std::vector<int> g;
  bool operator==(const GroupKey& o) const { return hash == o.hash && g == o.g; }
};
// A group not built yet: `parent` (a key that stays put) plus vertex `u` (not in it); nullptr: {u}.
struct GrownKey {
  uint64_t hash = 0;
  const GroupKey* parent = nullptr;
  int u = 0;
  std::vector<int> Build() const {
    if (!parent) return {u};
    std::vector<int> g;
    g.reserve(parent->g.size() + 1);
    g = parent->g;
    g.insert(std::upper_bound(g.begin(), g.end(), u), u);
    return g;
  }
};
struct GroupKeyHash {
  using is_transparent = void;
  size_t operator()(const GroupKey& k) const { return static_cast<size_t>(k.hash); }
  size_t operator()(const GrownKey& k) const { return static_cast<size_t>(k.hash); }
};
struct GroupKeyEq {
  using is_transparent = void;
  bool operator()(const GroupKey& a, const GroupKey& b) const { return a == b; }
  // Whether `a` is parent + u, without building it.
  bool operator()(const GroupKey& a, const GrownKey& b) const {
    if (a.hash != b.hash) return false;
    if (!b.parent) return a.g.size() == 1 && a.g[0] == b.u;
    const std::vector<int>& p = b.parent->g;
    if (a.g.size() != p.size() + 1) return false;
    size_t i = 0, j = 0;
    bool used = false;
    for (; i < a.g.size(); ++i) {
      if (j < p.size() && a.g[i] == p[j]) {
        ++j;
      } else if (!used && a.g[i] == b.u) {
        used = true;
      } else {
        return false;
      }
    }
    return used && j == p.size();
  }
  bool operator()(const GrownKey& b, const GroupKey& a) const { return (*this)(a, b); }
};
GroupKey MakeKey(const std::vector<int>& g) {
  GroupKey k{0, g};
  for (int v : g) k.hash ^= VertexCode(v);
  return k;
}
using GroupSet = std::unordered_set<GroupKey, GroupKeyHash, GroupKeyEq>;

// Growth neighbours of a vertex: successors, vertices reading one of its inputs, vertices feeding
// one of its successors.
std::vector<std::vector<int>> Neighbours(const FusionGraph& fg, bool chains_only) {
  std::vector<std::vector<int>> adj(fg.vertices.size());
  for (size_t v = 0; v < fg.vertices.size(); ++v) {
    const Vertex& vx = fg.vertices[v];
    auto& a = adj[v];
    a.insert(a.end(), vx.succs.begin(), vx.succs.end());
    if (!chains_only) {
      for (int f : vx.inputs)
        for (int c : fg.tensors[f].consumers) a.push_back(c);
      for (int s : vx.succs)
        for (int p : fg.vertices[s].preds) a.push_back(p);
    }
    a.erase(std::remove(a.begin(), a.end(), static_cast<int>(v)), a.end());
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  return adj;
}

// Group evaluations (EvaluateGroup depends only on the graph, the model, the group and the rule):
// shared by the searchers of one RunFusion call (full DP, canonical DP, linear proxy).
struct EvalCache {
  std::unordered_map<GroupKey, GroupEval, GroupKeyHash> opt, prior;
};

class Searcher {
 public:
  Searcher(const FusionGraph& fg, const AccelModel& m, FusionMethod method, const FusionLimits& lim,
           std::shared_ptr<EvalCache> cache = nullptr)
      : fg_(fg), m_(m), method_(method), lim_(lim), n_(static_cast<int>(fg.vertices.size())),
        words_((n_ + 63) / 64), adj_(Neighbours(fg, method == FusionMethod::kFusedLayer)), single_cost_(n_, -1),
        cache_(cache ? std::move(cache) : std::make_shared<EvalCache>()) {
    if (method_ == FusionMethod::kNoFuse) lim_.max_group_vertices = 1;
  }
  // The wall-clock deadline (time_limit_s) and the progress display shared by the DP phases.
  void set_clock(std::chrono::steady_clock::time_point deadline, bool has_deadline, Progress* progress) {
    deadline_ = deadline;
    has_deadline_ = has_deadline;
    progress_ = progress;
  }
  bool timed_out() const { return timed_out_; }

  void set_online_max(int n) { online_max_ = n; }
  // Restart the DP in the canonical space: the next group always holds the first operator (in
  // the schedule) not yet run, so groups run in the order of their first operators.
  void Canonical(int64_t max_states) {
    canonical_ = true;
    memo_.clear();
    r_.states = 0;
    lim_.max_states = max_states;
    r_.proved_optimal = false;
  }
  FusionResult& result() { return r_; }

  // The evaluation under `rule` (cached).
  const GroupEval& Eval(const GroupKey& k, CostRule rule) {
    auto& cache = rule == CostRule::kOptimus ? cache_->opt : cache_->prior;
    auto it = cache.find(k);
    if (it != cache.end()) return it->second;
    ++r_.groups_evaluated;
    return cache.emplace(k, EvaluateGroup(fg_, k.g, m_, rule)).first->second;
  }
  const GroupEval& Eval(const std::vector<int>& g, CostRule rule) { return Eval(MakeKey(g), rule); }

  // The cost of `g` as a group of this method, or nullptr when the method does not allow it.
  const GroupEval* MethodEval(const std::vector<int>& g) { return MethodEval(MakeKey(g), Eval(g, CostRule::kOptimus)); }
  // The same given g's evaluation under Optimus's rule.
  const GroupEval* MethodEval(const GroupKey& k, const GroupEval& opt) {
    const std::vector<int>& g = k.g;
    if (g.size() == 1) return opt.feasible ? &opt : nullptr;
    if (!Allowed(g)) return nullptr;
    const bool prior = method_ == FusionMethod::kDnnvm || method_ == FusionMethod::kEfficientS ||
                       method_ == FusionMethod::kFusedLayer;
    const GroupEval& e = prior ? Eval(k, CostRule::kPriorWork) : opt;
    return e.feasible ? &e : nullptr;
  }

  // Every vertex alone must fit.
  Status CheckSingles(std::vector<int64_t>* single_cost) {
    single_cost->assign(n_, 0);
    for (int v = 0; v < n_; ++v) {
      const GroupEval& e = Eval(std::vector<int>{v}, CostRule::kOptimus);
      if (!e.feasible)
        return OutOfMemory("operator '" + fg_.vertices[v].name + "' does not fit the " +
                           std::to_string(m_.buffer_bytes) + "-byte global buffer: its smallest tile (" +
                           std::to_string(std::min(m_.t_h, e.ref_rows)) + " rows of its output) needs " +
                           std::to_string(e.min_buffer_bytes) + " bytes; give a larger buffer");
      (*single_cost)[v] = e.dram_bytes();
    }
    return Status::Ok();
  }

  int64_t Solve(const Bits& done, int count);
  void EfficientS();
  void Reconstruct();

 private:
  bool Allowed(const std::vector<int>& g) const;
  // Connected groups valid at `done` (all predecessors ran or are in the group), grown from the
  // ready vertices; each is passed to `visit` (it stays in `seen`). Returns false when the
  // enumeration was cut.
  template <typename Visit>
  bool Enumerate(const Bits& done, GroupSet& seen, Visit visit);

  const FusionGraph& fg_;
  const AccelModel& m_;
  FusionMethod method_;
  FusionLimits lim_;
  int n_, words_;
  std::vector<std::vector<int>> adj_;
  std::vector<int64_t> single_cost_;  // each vertex alone, -1 until evaluated
  int64_t SingleCost(int v) {
    if (single_cost_[v] < 0) single_cost_[v] = Eval(std::vector<int>{v}, CostRule::kOptimus).dram_bytes();
    return single_cost_[v];
  }
  int online_max_ = 1 << 30;
  bool canonical_ = false;
  bool greedy_ = false;  // the state being enumerated is past the state limit
  std::chrono::steady_clock::time_point deadline_{};
  bool has_deadline_ = false, timed_out_ = false;
  Progress* progress_ = nullptr;
  // Past the deadline (sticky). A state enumerates up to max_groups_per_state groups: the clock is
  // read once per state and every 64 groups.
  bool OutOfTime() {
    if (timed_out_) return true;
    if (progress_) progress_->Update(-1, -1, r_.states);
    if (has_deadline_ && std::chrono::steady_clock::now() >= deadline_) timed_out_ = true;
    return timed_out_;
  }
  std::shared_ptr<EvalCache> cache_;
  struct Entry {
    int64_t cost = kInf;
    std::vector<int> group;
  };
  std::unordered_map<Bits, Entry, VecHash> memo_;
  FusionResult r_;
};

bool Searcher::Allowed(const std::vector<int>& g) const {
  switch (method_) {
    case FusionMethod::kNoFuse:
      return false;
    case FusionMethod::kOptimus:
    case FusionMethod::kEfficientS:
      return true;
    case FusionMethod::kOnline:
      // Alg. 3's size limit. Its other rule (an operator fused with all of its fan-out successors
      // or none) is not applied: under Eq. 3 a group holding some of an operator's consumers still
      // saves their reads, and the rule alone cost GoogLeNet 3.3% at 128 KB (optimum 115.09 MB,
      // with the rule 118.86 MB; bench_optimus).
      return static_cast<int>(g.size()) <= online_max_;
    case FusionMethod::kDnnvm:
      for (int v : g) {
        const Vertex& vx = fg_.vertices[v];
        int consumers = 0;
        for (int f : vx.outputs) consumers += static_cast<int>(fg_.tensors[f].consumers.size());
        if (vx.inputs.size() > 1 || consumers > 1) return false;
      }
      return true;
    case FusionMethod::kFusedLayer:
      for (int v : g) {
        int ip = 0, is = 0;
        for (int p : fg_.vertices[v].preds) ip += std::binary_search(g.begin(), g.end(), p);
        for (int s : fg_.vertices[v].succs) is += std::binary_search(g.begin(), g.end(), s);
        if (ip > 1 || is > 1) return false;
      }
      return true;
  }
  return false;
}

template <typename Visit>
bool Searcher::Enumerate(const Bits& done, GroupSet& seen, Visit visit) {
  auto ready_in = [&](int u, const std::vector<int>& g) {
    for (int p : fg_.vertices[u].preds)
      if (!Has(done, p) && !std::binary_search(g.begin(), g.end(), p)) return false;
    return true;
  };
  // Groups to visit, built when popped (most pushed groups are never reached when a state's
  // enumeration is cut).
  std::vector<GrownKey> stack;
  for (int v = 0; v < n_; ++v)
    if (!Has(done, v) && ready_in(v, {})) {
      stack.push_back(GrownKey{VertexCode(v), nullptr, v});
      if (canonical_) break;  // only groups with the first operator not yet run
    }
  bool complete = true;
  int64_t visited = 0;
  std::vector<int> cand;
  while (!stack.empty()) {
    const GrownKey top = stack.back();
    stack.pop_back();
    if (seen.count(top)) continue;
    const auto it = seen.insert(GroupKey{top.hash, top.Build()}).first;
    const GroupKey& key = *it;
    const std::vector<int>& g = key.g;
    if (visited > 0 && (visited & 63) == 0) OutOfTime();
    if (timed_out_ && visited > 0) {  // past the time limit: the groups found so far
      complete = false;
      break;
    }
    if (static_cast<int64_t>(seen.size()) >
        (greedy_ ? std::min(lim_.max_groups_per_state, lim_.greedy_groups_per_state) : lim_.max_groups_per_state)) {
      complete = false;
      break;
    }
    // A group whose smallest tile does not fit is neither used nor grown.
    const GroupEval& opt = Eval(key, CostRule::kOptimus);
    if (!opt.feasible) continue;
    visit(key, opt);
    ++visited;
    if (static_cast<int>(g.size()) >= lim_.max_group_vertices) continue;
    if (method_ == FusionMethod::kOnline && static_cast<int>(g.size()) >= online_max_) continue;
    cand.clear();
    for (int v : g)
      for (int u : adj_[v])
        if (!Has(done, u) && !std::binary_search(g.begin(), g.end(), u) && ready_in(u, g)) cand.push_back(u);
    std::sort(cand.begin(), cand.end());
    cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
    for (int u : cand) {
      if (method_ == FusionMethod::kDnnvm && !Allowed({u})) continue;  // a barrier joins no group
      const GrownKey h{key.hash ^ VertexCode(u), &key, u};
      if (!seen.count(h)) stack.push_back(h);
    }
  }
  return complete;
}

int64_t Searcher::Solve(const Bits& done, int count) {
  if (count == n_) return 0;
  auto it = memo_.find(done);
  if (it != memo_.end()) return it->second.cost;
  ++r_.states;
  const bool exhausted = r_.states > lim_.max_states || OutOfTime();
  if (exhausted) r_.proved_optimal = false;
  greedy_ = exhausted;
  // Groups stay in `seen` while this state recurses into them.
  GroupSet seen;
  std::vector<std::pair<const std::vector<int>*, int64_t>> options;
  const bool complete = Enumerate(done, seen, [&](const GroupKey& k, const GroupEval& opt) {
    if (const GroupEval* e = MethodEval(k, opt)) options.emplace_back(&k.g, e->dram_bytes());
  });
  if (!complete) r_.proved_optimal = false;
  if (exhausted && !options.empty()) {
    // Past the state limit: follow the option that saves most against running its operators alone.
    // (The first option with the largest saving.)
    size_t best = 0;
    int64_t best_saving = std::numeric_limits<int64_t>::min();
    for (size_t k = 0; k < options.size(); ++k) {
      int64_t alone = 0;
      for (int v : *options[k].first) alone += SingleCost(v);
      if (alone - options[k].second > best_saving) {
        best_saving = alone - options[k].second;
        best = k;
      }
    }
    const auto keep = options[best];
    options.assign(1, keep);
  }
  Entry e;
  for (const auto& [g, cost] : options) {
    Bits next = done;
    for (int v : *g) Set(next, v);
    const int64_t rest = Solve(next, count + static_cast<int>(g->size()));
    if (rest >= kInf) continue;
    if (cost + rest < e.cost) {
      e.cost = cost + rest;
      e.group = *g;
    }
  }
  const int64_t c = e.cost;
  memo_[done] = std::move(e);
  return c;
}

void Searcher::Reconstruct() {
  Bits done(words_, 0);
  int count = 0;
  while (count < n_) {
    auto it = memo_.find(done);
    if (it == memo_.end() || it->second.group.empty()) break;
    const std::vector<int> g = it->second.group;
    r_.groups.push_back(g);
    for (int v : g) Set(done, v);
    count += static_cast<int>(g.size());
  }
}

// Efficient-S: the schedule order as a linear proxy; DP over contiguous connected segments.
void Searcher::EfficientS() {
  std::vector<int64_t> f(n_ + 1, kInf);
  std::vector<int> next(n_ + 1, n_);
  f[n_] = 0;
  auto connected = [&](const std::vector<int>& g) {
    std::vector<int> comp = {g[0]}, frontier = {g[0]};
    while (!frontier.empty()) {
      const int v = frontier.back();
      frontier.pop_back();
      for (int u : adj_[v])
        if (std::binary_search(g.begin(), g.end(), u) && std::find(comp.begin(), comp.end(), u) == comp.end()) {
          comp.push_back(u);
          frontier.push_back(u);
        }
      for (int u : fg_.vertices[v].preds)
        if (std::binary_search(g.begin(), g.end(), u) && std::find(comp.begin(), comp.end(), u) == comp.end()) {
          comp.push_back(u);
          frontier.push_back(u);
        }
    }
    return comp.size() == g.size();
  };
  for (int i = n_ - 1; i >= 0; --i) {
    std::vector<int> g;
    for (int j = i; j < n_ && j - i < lim_.max_group_vertices; ++j) {
      g.push_back(j);
      ++r_.states;
      if (!Eval(g, CostRule::kOptimus).feasible) break;
      if (!connected(g)) continue;
      const GroupEval* e = MethodEval(g);
      if (!e || f[j + 1] >= kInf) continue;
      if (e->dram_bytes() + f[j + 1] < f[i]) {
        f[i] = e->dram_bytes() + f[j + 1];
        next[i] = j + 1;
      }
    }
  }
  for (int i = 0; i < n_ && f[i] < kInf;) {
    std::vector<int> g;
    for (int j = i; j < next[i]; ++j) g.push_back(j);
    r_.groups.push_back(g);
    i = next[i];
  }
}

// Whether the DAG has more than `limit` down-sets other than the whole graph (the states the full
// DP tabulates: every down-set is reached, since every single operator is a valid group). A
// breadth-first walk over the down-sets that stops past `limit`.
bool MoreDownSetsThan(const FusionGraph& fg, int64_t limit) {
  const int n = static_cast<int>(fg.vertices.size());
  const int words = (n + 63) / 64;
  std::unordered_set<Bits, VecHash> seen;
  std::vector<Bits> frontier = {Bits(words, 0)};
  seen.insert(frontier[0]);
  int64_t proper = 0;
  while (!frontier.empty()) {
    std::vector<Bits> next;
    for (const Bits& d : frontier) {
      int count = 0;
      for (uint64_t w : d) count += __builtin_popcountll(w);
      if (count == n) continue;
      if (++proper > limit) return true;
      for (int v = 0; v < n; ++v) {
        if (Has(d, v)) continue;
        bool ready = true;
        for (int p : fg.vertices[v].preds) ready = ready && Has(d, p);
        if (!ready) continue;
        Bits e = d;
        Set(e, v);
        if (seen.insert(e).second) next.push_back(std::move(e));
      }
    }
    frontier = std::move(next);
  }
  return false;
}

}  // namespace

const char* FusionMethodName(FusionMethod m) {
  switch (m) {
    case FusionMethod::kOptimus: return "optimus";
    case FusionMethod::kOnline: return "optimus-online";
    case FusionMethod::kDnnvm: return "dnnvm";
    case FusionMethod::kEfficientS: return "efficient-s";
    case FusionMethod::kFusedLayer: return "fused-layer";
    case FusionMethod::kNoFuse: return "nofuse";
  }
  return "?";
}

bool ParseFusionMethod(const std::string& name, FusionMethod* m) {
  for (FusionMethod x : {FusionMethod::kOptimus, FusionMethod::kOnline, FusionMethod::kDnnvm, FusionMethod::kEfficientS,
                         FusionMethod::kFusedLayer, FusionMethod::kNoFuse})
    if (name == FusionMethodName(x)) {
      *m = x;
      return true;
    }
  return false;
}

std::vector<int64_t> OnlineLookupTable(const FusionGraph& fg, const AccelModel& m, int max_n) {
  const int n = static_cast<int>(fg.vertices.size());
  std::vector<int64_t> memo(max_n + 1, kInf);
  const auto adj = Neighbours(fg, false);
  for (int seed = 0; seed < n; ++seed) {
    // Groups grown from `seed` over later vertices whose producers ran before `seed` or are in the group.
    std::unordered_set<std::vector<int>, VecHash> seen;
    std::vector<std::vector<int>> stack = {{seed}};
    while (!stack.empty() && seen.size() < 512) {
      std::vector<int> g = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(g).second) continue;
      const int64_t tiles = 4;
      const int64_t bytes = GroupFmapBytesIsoa(fg, g, tiles, m);
      const size_t sz = g.size();
      memo[sz] = std::min(memo[sz], bytes);
      if (static_cast<int>(sz) >= max_n || bytes > 4 * m.buffer_bytes) continue;
      for (int v : g)
        for (int u : adj[v]) {
          if (u <= seed || std::binary_search(g.begin(), g.end(), u)) continue;
          bool ok = true;
          for (int p : fg.vertices[u].preds) ok = ok && (p < seed || std::binary_search(g.begin(), g.end(), p));
          if (!ok) continue;
          std::vector<int> h = g;
          h.insert(std::upper_bound(h.begin(), h.end(), u), u);
          stack.push_back(std::move(h));
        }
    }
  }
  for (int k = 2; k <= max_n; ++k) memo[k] = std::max(memo[k], memo[k - 1]);
  return memo;
}

StatusOr<FusionResult> RunFusion(const FusionGraph& fg, const AccelModel& m, FusionMethod method,
                                 const FusionLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool has_deadline = limits.time_limit_s > 0;
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(has_deadline ? std::min(limits.time_limit_s, 1e7) : 0));
  Progress progress(std::string("fusion search (") + FusionMethodName(method) + ")", limits.time_limit_s, "B",
                    "states");
  bool timed_out = false;
  auto cache = std::make_shared<EvalCache>();
  auto s = std::make_unique<Searcher>(fg, m, method, limits, cache);
  std::vector<int64_t> single;
  SP_RETURN_IF_ERROR(s->CheckSingles(&single));
  const int n = static_cast<int>(fg.vertices.size());
  int online_max = 0;
  if (method == FusionMethod::kOnline) {
    const std::vector<int64_t> lut = OnlineLookupTable(fg, m, limits.max_group_vertices);
    online_max = 1;
    for (int k = 1; k < static_cast<int>(lut.size()); ++k)
      if (lut[k] <= m.buffer_bytes) online_max = k;
    s->set_online_max(online_max);
  }
  if (method == FusionMethod::kEfficientS) {
    s->EfficientS();
  } else if (n > 0) {
    // The full DP over down-sets first; on graphs too wide for it (its state count explodes with
    // the number of parallel branches), the canonical DP.
    // A DAG with more down-sets than the full DP may tabulate cannot be proved by it (it would
    // stop past its state limit and its scheme would be discarded): counted first, skipped then.
    FusionLimits full = limits;
    full.max_states = std::min(limits.max_states, limits.full_dp_states);
    const bool too_wide = MoreDownSetsThan(fg, full.max_states);
    s = std::make_unique<Searcher>(fg, m, method, full, cache);
    if (online_max > 0) s->set_online_max(online_max);
    s->set_clock(deadline, has_deadline, &progress);
    const std::vector<uint64_t> done((n + 63) / 64, 0);
    const int64_t full_cost = too_wide ? kInf : s->Solve(done, 0);
    timed_out = s->timed_out();
    if (full_cost < kInf && s->result().proved_optimal) {
      s->Reconstruct();
    } else {
      const std::string tried = too_wide ? std::to_string(full.max_states) + " down-sets"
                                         : std::to_string(s->result().states) + " states";
      FusionLimits canon = limits;
      canon.max_groups_per_state = std::min(limits.max_groups_per_state, limits.canonical_groups_per_state);
      s = std::make_unique<Searcher>(fg, m, method, canon, cache);
      if (online_max > 0) s->set_online_max(online_max);
      s->Canonical(std::min(limits.max_states, limits.canonical_states));
      s->set_clock(deadline, has_deadline, &progress);
      if (s->Solve(done, 0) >= kInf) return InternalError("the fusion search found no scheme");
      timed_out = timed_out || s->timed_out();
      s->Reconstruct();
      // The linear proxy's DP under the same rules as an incumbent (its groups are canonical too).
      auto lin = std::make_unique<Searcher>(fg, m, method, limits, cache);
      if (online_max > 0) lin->set_online_max(online_max);
      lin->EfficientS();
      auto total = [&](Searcher& x) {
        int64_t t = 0;
        for (const auto& g : x.result().groups) t += x.MethodEval(g)->dram_bytes();
        return t;
      };
      const bool linear_better = total(*lin) < total(*s);
      const int64_t states = s->result().states;
      if (linear_better) s = std::move(lin);
      s->result().proved_optimal = false;
      s->result().states = states;
      s->result().note = "the DAG has too many down-sets for the full DP (over " + tried +
                         "); searched groups in order of their first operator (bounded) and the " +
                         "model order's segments, kept the " + (linear_better ? "segments" : "first") +
                         (timed_out ? "; the time limit cut the search" : "");
    }
  }
  FusionResult r = std::move(s->result());
  r.online_max_group = online_max;
  for (const auto& g : r.groups) {
    const GroupEval* e = s->MethodEval(g);
    if (!e) return InternalError("the fusion search chose a group its method does not allow");
    r.evals.push_back(*e);
    r.read_bytes += e->read_bytes;
    r.write_bytes += e->write_bytes;
  }
  r.dram_bytes = r.read_bytes + r.write_bytes;
  progress.Finish(static_cast<double>(r.dram_bytes), r.proved_optimal ? static_cast<double>(r.dram_bytes) : -1);
  int covered = 0;
  for (const auto& g : r.groups) covered += static_cast<int>(g.size());
  if (covered != n) return InternalError("the fusion scheme covers " + std::to_string(covered) + " of " +
                                         std::to_string(n) + " operators");
  r.search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.proved_optimal)
    r.note += std::string(r.note.empty() ? "" : "; ") + std::to_string(r.states) + " states; not proved optimal";
  return r;
}

}  // namespace sramplan::fusion
