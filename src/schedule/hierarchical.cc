#include "schedule/hierarchical.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "analysis/regions.h"

namespace sramplan::schedule {
namespace {

using internal::Clock;
using internal::MemProblem;

struct BufferInfo {
  int def = -1;        // defining op, -1 for graph inputs
  int last_user = -1;  // -1 if none
};

class Solver {
 public:
  Solver(const ir::Graph& g, const HierarchicalOptions& o)
      : o_(o), m_(internal::BuildMemProblem(g)), n_(m_.num_micro), start_(Clock::now()) {}

  MinPeakResult Run() {
    MinPeakResult r;
    std::vector<int> model(n_);
    for (int v = 0; v < n_; ++v) model[v] = v;
    r.model_order_peak = internal::PeakOfNodeOrder(m_, model);
    SetOrder(model);
    const bool relations = n_ <= kMaxRelationOps;
    std::vector<bool> forced(n_ + 1, false);  // forced[i]: the boundary before op i
    forced[0] = forced[n_] = true;
    if (relations) {
      reach_ = std::make_unique<analysis::Reachability>(m_.preds);
      forced = analysis::ForcedCuts(*reach_);
      lower_bound_ = ForcedLiveBound();
    } else {
      lower_bound_ = OpBound();
    }
    // Forced segments, each solved (and split further when needed) on its own.
    int lo = 0;
    for (int i = 1; i <= n_; ++i) {
      if (!forced[i]) continue;
      Solve(lo, i, /*whole_segment=*/true);
      lo = i;
    }
    std::vector<int> order;
    order.reserve(n_);
    for (auto& [begin, region_order] : regions_)
      order.insert(order.end(), region_order.begin(), region_order.end());
    int64_t peak = internal::PeakOfNodeOrder(m_, order);
    if (peak > lower_bound_) peak = Refine(&order);
    r.order.reserve(n_);
    for (int v : order) r.order.push_back(ir::OpId(v));
    r.peak_bytes = peak;
    r.lower_bound = std::min(lower_bound_, r.peak_bytes);
    r.proved_optimal = r.peak_bytes == lower_bound_;
    r.states = states_;
    r.regions = static_cast<int>(regions_.size());
    r.method = "hierarchical";
    r.seconds = Elapsed();
    return r;
  }

 private:
  static constexpr int kMaxRelationOps = 12000;

  // Makes `order` the current order: positions, buffer lifetimes and live bytes between steps.
  void SetOrder(const std::vector<int>& order) {
    ord_ = order;
    pos_.assign(n_, 0);
    for (int i = 0; i < n_; ++i) pos_[ord_[i]] = i;
    mem_after_ = internal::MemAfterNodes(m_, ord_);
    buffers_.assign(m_.bytes.size(), {});
    for (int i = 0; i < n_; ++i) {
      int v = ord_[i];
      for (int b : m_.defs[v]) buffers_[b].def = i;
      for (int b : m_.uses[v]) buffers_[b].last_user = std::max(buffers_[b].last_user, i);
    }
  }

  // Local improvement of the peak: re-solves windows of the current order around a step where the
  // peak is reached, exactly and with the bound "strictly below the current peak", until no window
  // around a peak step can be improved or time runs out. Returns the final peak.
  int64_t Refine(std::vector<int>* order) {
    SetOrder(*order);
    for (;;) {
      std::vector<int64_t> step_peaks = StepPeaks();
      int64_t peak = *std::max_element(step_peaks.begin(), step_peaks.end());
      if (peak <= lower_bound_ || Elapsed() > o_.time_limit_s) break;
      int s = static_cast<int>(std::find(step_peaks.begin(), step_peaks.end(), peak) -
                               step_peaks.begin());
      bool improved = false;
      for (int w : {24, 48, 96, 192}) {
        if (Elapsed() > o_.time_limit_s) break;
        int lo = std::max(0, s - w / 2), hi = std::min(n_, lo + w);
        lo = std::max(0, hi - w);
        MemProblem r = Region(lo, hi);
        std::vector<int> ops;
        if (SolveWindow(&r, lo, peak - 1, &ops)) {
          std::copy(ops.begin(), ops.end(), ord_.begin() + lo);
          SetOrder(std::vector<int>(ord_));
          improved = true;
          break;
        }
        if (hi - lo == n_) break;
      }
      if (!improved) break;
      ++refinements_;
    }
    *order = ord_;
    return internal::PeakOfNodeOrder(m_, ord_);
  }

  // Peak of each step of the current order (live bytes before it plus what it creates).
  std::vector<int64_t> StepPeaks() const {
    std::vector<int64_t> res(n_ + 1);
    res[0] = m_.initial;
    for (int i = 0; i < n_; ++i) {
      int64_t before = i == 0 ? m_.initial : mem_after_[i - 1], def = 0;
      for (int b : m_.defs[ord_[i]]) def += m_.bytes[b];
      res[i + 1] = before + def;
    }
    return res;
  }

  // Exact search of a window with peak <= bound: plain, then with chains collapsed.
  bool SolveWindow(MemProblem* r, int lo, int64_t bound, std::vector<int>* ops) {
    internal::SearchLimits lim;
    lim.max_states = o_.region_max_states;
    lim.time_limit_s = std::max(0.0, o_.time_limit_s - Elapsed());
    lim.start = Clock::now();
    std::vector<int> node_order;
    int64_t peak = 0;
    bool ok = internal::SearchOrder(*r, bound, true, lim, &node_order, &peak, &states_);
    if (!ok && o_.collapse_chains && CollapseChains(r)) {
      lim.start = Clock::now();
      lim.time_limit_s = std::max(0.0, o_.time_limit_s - Elapsed());
      ok = internal::SearchOrder(*r, bound, true, lim, &node_order, &peak, &states_);
    }
    if (!ok) return false;
    ops->clear();
    for (int node : node_order)
      for (int u : r->nodes[node]) ops->push_back(ord_[u + lo]);
    return true;
  }

  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  int64_t OpBound() const {
    int64_t bound = m_.initial;
    for (int v = 0; v < n_; ++v) {
      int64_t b = 0;
      for (int x : m_.uses[v]) b += m_.bytes[x];
      for (int x : m_.defs[v]) b += m_.bytes[x];
      bound = std::max(bound, b);
    }
    return bound;
  }

  // For each op: its inputs, outputs and every buffer live across it in every order.
  int64_t ForcedLiveBound() const {
    int64_t bound = m_.initial;
    const int nb = static_cast<int>(m_.bytes.size());
    std::vector<int> mark(nb, -1);
    for (int v = 0; v < n_; ++v) {
      int64_t b = 0;
      for (int x : m_.uses[v])
        if (mark[x] != v) mark[x] = v, b += m_.bytes[x];
      for (int x : m_.defs[v])
        if (mark[x] != v) mark[x] = v, b += m_.bytes[x];
      for (int x = 0; x < nb; ++x) {
        if (mark[x] == v) continue;
        const BufferInfo& bi = buffers_[x];
        if (bi.def >= 0 && !reach_->IsAncestor(bi.def, v)) continue;
        bool live = m_.pinned[x] || (bi.def < 0 && m_.users[x].empty());
        if (!live && bi.last_user > v)
          for (int u : m_.users[x])
            if (reach_->IsDescendant(u, v)) {
              live = true;
              break;
            }
        if (live) b += m_.bytes[x];
      }
      bound = std::max(bound, b);
    }
    return bound;
  }

  // The problem of running ops [lo, hi) after [0, lo) and before [hi, n).
  MemProblem Region(int lo, int hi) const {
    MemProblem r;
    r.num_micro = hi - lo;
    r.bytes = m_.bytes;
    const int nb = static_cast<int>(m_.bytes.size());
    r.users.assign(nb, {});
    r.pinned.assign(nb, false);
    for (int b = 0; b < nb; ++b) {
      const BufferInfo& bi = buffers_[b];
      bool never_freed = m_.pinned[b] || (bi.def < 0 && m_.users[b].empty());
      r.pinned[b] = never_freed || bi.last_user >= hi;
      if (bi.def < lo && (never_freed || bi.last_user >= lo)) r.initial += m_.bytes[b];
      for (int u : m_.users[b])
        if (pos_[u] >= lo && pos_[u] < hi) r.users[b].push_back(pos_[u] - lo);
    }
    r.uses.resize(r.num_micro);
    r.defs.resize(r.num_micro);
    std::vector<std::vector<int>> preds(r.num_micro);
    for (int i = lo; i < hi; ++i) {
      int v = ord_[i];
      r.uses[i - lo] = m_.uses[v];
      r.defs[i - lo] = m_.defs[v];
      for (int p : m_.preds[v])
        if (pos_[p] >= lo) preds[i - lo].push_back(pos_[p] - lo);
      std::sort(preds[i - lo].begin(), preds[i - lo].end());
    }
    internal::SetSingletonNodes(&r, preds);
    return r;
  }

  // Merges chains u -> v where v is u's only successor and u is v's only predecessor (within the
  // region).
  static bool CollapseChains(MemProblem* r) {
    const int k = r->num_micro;
    std::vector<std::vector<int>> micro_preds = r->preds;  // singleton nodes: node == micro op
    std::vector<int> nsucc(k, 0), only_succ(k, -1);
    for (int v = 0; v < k; ++v)
      for (int p : micro_preds[v]) ++nsucc[p], only_succ[p] = v;
    auto merges_into_pred = [&](int v) {
      return micro_preds[v].size() == 1 && nsucc[micro_preds[v][0]] == 1;
    };
    r->nodes.clear();
    r->node_of.assign(k, -1);
    r->pos_in_node.assign(k, 0);
    for (int v = 0; v < k; ++v) {
      if (merges_into_pred(v)) continue;
      int id = static_cast<int>(r->nodes.size());
      std::vector<int> chain = {v};
      int cur = v;
      while (nsucc[cur] == 1 && merges_into_pred(only_succ[cur])) {
        cur = only_succ[cur];
        chain.push_back(cur);
      }
      for (int i = 0; i < static_cast<int>(chain.size()); ++i) {
        r->node_of[chain[i]] = id;
        r->pos_in_node[chain[i]] = i;
      }
      r->nodes.push_back(std::move(chain));
    }
    if (static_cast<int>(r->nodes.size()) == k) return false;
    r->preds.assign(r->nodes.size(), {});
    for (int id = 0; id < static_cast<int>(r->nodes.size()); ++id) {
      for (int p : micro_preds[r->nodes[id][0]]) r->preds[id].push_back(r->node_of[p]);
      std::sort(r->preds[id].begin(), r->preds[id].end());
      r->preds[id].erase(std::unique(r->preds[id].begin(), r->preds[id].end()), r->preds[id].end());
    }
    return true;
  }

  // Tries the exact search on r; on success appends the region's op order.
  bool TryExact(const MemProblem& r, int lo, int64_t bound, int64_t max_states, int64_t* peak) {
    internal::SearchLimits lim;
    lim.max_states = max_states;
    lim.time_limit_s = std::max(0.0, o_.time_limit_s - Elapsed());
    lim.start = Clock::now();
    std::vector<int> node_order;
    if (!internal::SearchOrder(r, bound, /*exact=*/true, lim, &node_order, peak, &states_))
      return false;
    std::vector<int> ops;
    for (int node : node_order)
      for (int u : r.nodes[node]) ops.push_back(ord_[u + lo]);
    regions_.emplace_back(lo, std::move(ops));
    return true;
  }

  void Solve(int lo, int hi, bool whole_segment) {
    const int len = hi - lo;
    if (Elapsed() > o_.time_limit_s) {  // out of time: the model order
      std::vector<int> ops;
      for (int v = lo; v < hi; ++v) ops.push_back(v);
      regions_.emplace_back(lo, std::move(ops));
      return;
    }
    if (len <= o_.max_region_ops || len == 1) {
      MemProblem r = Region(lo, hi);
      std::vector<int> model(len);
      for (int i = 0; i < len; ++i) model[i] = i;
      int64_t bound = internal::PeakOfNodeOrder(r, model);  // the model order is always feasible
      int64_t peak = 0;
      // Plain first with a quarter of the budget (wide regions of long chains rarely fit), then
      // collapsed.
      if (TryExact(r, lo, bound, std::max<int64_t>(1, o_.region_max_states / 4), &peak)) {
        if (whole_segment) lower_bound_ = std::max(lower_bound_, peak);
        return;
      }
      if (o_.collapse_chains && CollapseChains(&r) &&
          TryExact(r, lo, bound, o_.region_max_states, &peak))
        return;
      if (len == 1) {  // cannot happen: one op always fits its own bound
        regions_.emplace_back(lo, std::vector<int>{lo});
        return;
      }
    }
    // Split in the middle half where the model order has the fewest live bytes between steps.
    int a = lo + std::max(1, len / 4), b = hi - std::max(1, len / 4);
    if (a > b) a = b = lo + len / 2;
    int best = -1;
    int64_t best_bytes = 0;
    int mid = lo + len / 2;
    for (int i = a; i <= b; ++i) {
      int64_t bytes = mem_after_[i - 1];
      if (best < 0 || bytes < best_bytes ||
          (bytes == best_bytes && std::abs(i - mid) < std::abs(best - mid))) {
        best = i;
        best_bytes = bytes;
      }
    }
    Solve(lo, best, false);
    Solve(best, hi, false);
  }

  const HierarchicalOptions& o_;
  MemProblem m_;
  int n_;
  Clock::time_point start_;
  std::vector<int> ord_, pos_;       // current order and op -> position
  std::vector<int64_t> mem_after_;   // live bytes after each step of ord_
  std::vector<BufferInfo> buffers_;  // lifetimes as positions in ord_
  int refinements_ = 0;
  std::unique_ptr<analysis::Reachability> reach_;  // ancestors / descendants (up to kMaxRelationOps)
  int64_t lower_bound_ = 0;
  int64_t states_ = 0;
  std::vector<std::pair<int, std::vector<int>>> regions_;  // (first op, order), in execution order
};

}  // namespace

MinPeakResult HierarchicalMinPeak(const ir::Graph& g, const HierarchicalOptions& options) {
  Solver s(g, options);
  return s.Run();
}

}  // namespace sramplan::schedule
