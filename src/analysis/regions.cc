#include "analysis/regions.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace sramplan::analysis {

Reachability::Reachability(const DagPreds& preds)
    : n_(static_cast<int>(preds.size())),
      words_((preds.size() + 63) / 64),
      anc_(static_cast<size_t>(n_) * words_, 0),
      desc_(static_cast<size_t>(n_) * words_, 0),
      succs_(n_),
      max_pred_(n_, -1) {
  auto or_row = [&](std::vector<uint64_t>& m, int dst, int src) {
    for (size_t w = 0; w < words_; ++w) m[dst * words_ + w] |= m[src * words_ + w];
  };
  auto set = [&](std::vector<uint64_t>& m, int r, int c) {
    m[static_cast<size_t>(r) * words_ + (c >> 6)] |= uint64_t{1} << (c & 63);
  };
  for (int v = 0; v < n_; ++v)
    for (int p : preds[v]) {
      or_row(anc_, v, p);
      set(anc_, v, p);
      succs_[p].push_back(v);
      max_pred_[v] = std::max(max_pred_[v], p);
    }
  for (int v = n_ - 1; v >= 0; --v)
    for (int s : succs_[v]) {
      or_row(desc_, v, s);
      set(desc_, v, s);
    }
}

int Reachability::CountAncestorsBelow(int v, int c) const {
  int n = 0;
  const size_t row = static_cast<size_t>(v) * words_;
  const size_t full = static_cast<size_t>(c) >> 6;
  for (size_t w = 0; w < full; ++w) n += std::popcount(anc_[row + w]);
  if (c & 63) n += std::popcount(anc_[row + full] & ((uint64_t{1} << (c & 63)) - 1));
  return n;
}

std::vector<bool> ForcedCuts(const Reachability& r) {
  const int n = r.size();
  std::vector<bool> forced(n + 1, false);
  forced[0] = forced[n] = true;
  // Every node before i is an ancestor of every node from i on. It suffices to check the nodes from
  // i on whose predecessors all lie before i (every later node descends from one of them).
  for (int i = 1; i < n; ++i) {
    bool ok = true;
    for (int b = i; b < n && ok; ++b) {
      if (r.max_pred(b) >= i) continue;
      ok = r.CountAncestorsBelow(b, i) == i;
    }
    forced[i] = ok;
  }
  return forced;
}

std::vector<int64_t> CrossingCosts(int n, std::span<const AccessSpan> spans) {
  std::vector<int64_t> cost(n + 1, 0);
  std::vector<int64_t> delta(n + 2, 0);
  for (const AccessSpan& s : spans) {
    if (s.last <= s.first) continue;
    // Cuts c in (first, last] separate accesses.
    delta[s.first + 1] += s.weight;
    delta[s.last + 1] -= s.weight;
  }
  int64_t run = 0;
  for (int c = 0; c <= n; ++c) {
    run += delta[c];
    cost[c] = run;
  }
  cost[0] = cost[n] = 0;
  return cost;
}

std::vector<std::pair<int, int>> MinCostPartition(std::span<const int64_t> cut_cost, int max_len) {
  const int n = static_cast<int>(cut_cost.size()) - 1;
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<std::pair<int64_t, int>> best(n + 1, {kNone, 0});
  std::vector<int> prev(n + 1, -1);
  best[0] = {0, 0};
  for (int e = 1; e <= n; ++e) {
    for (int b = std::max(0, e - max_len); b < e; ++b) {
      if (best[b].first == kNone) continue;
      std::pair<int64_t, int> cand = {best[b].first + cut_cost[b], best[b].second + 1};
      if (cand < best[e]) {
        best[e] = cand;
        prev[e] = b;
      }
    }
  }
  std::vector<std::pair<int, int>> parts;  // [begin, end)
  for (int e = n; e > 0; e = prev[e]) parts.emplace_back(prev[e], e);
  std::reverse(parts.begin(), parts.end());
  return parts;
}

namespace {

// Immediate post-dominators with a virtual sink n (the successor of every node without successors).
std::vector<int> PostDominators(const std::vector<std::vector<int>>& succs) {
  const int n = static_cast<int>(succs.size());
  std::vector<int> ipdom(n, n);
  for (int v = n - 1; v >= 0; --v) {
    if (succs[v].empty()) continue;
    int d = succs[v][0];
    for (int s : succs[v]) {
      int a = d, b = s;
      while (a != b) {  // post-dominators have larger indices, the sink the largest
        if (a < b)
          a = ipdom[a];
        else
          b = ipdom[b];
      }
      d = a;
    }
    ipdom[v] = d;
  }
  return ipdom;
}

// The nodes on paths entry -> exit, ascending, if they form a single-entry / single-exit region.
bool SeseNodes(const DagPreds& preds, const std::vector<std::vector<int>>& succs, int entry,
               int exit, std::vector<char>* in, std::vector<int>* nodes) {
  const int n = static_cast<int>(preds.size());
  std::vector<char> fwd(n, 0), bwd(n, 0);
  fwd[entry] = 1;
  for (int v = entry; v <= exit; ++v)
    if (fwd[v])
      for (int s : succs[v])
        if (s <= exit) fwd[s] = 1;
  bwd[exit] = 1;
  for (int v = exit; v >= entry; --v)
    if (bwd[v])
      for (int p : preds[v])
        if (p >= entry) bwd[p] = 1;
  nodes->clear();
  in->assign(n, 0);
  for (int v = entry; v <= exit; ++v)
    if (fwd[v] && bwd[v]) {
      (*in)[v] = 1;
      nodes->push_back(v);
    }
  for (int v : *nodes) {
    if (v != entry)
      for (int p : preds[v])
        if (!(*in)[p]) return false;
    if (v != exit)
      for (int s : succs[v])
        if (!(*in)[s]) return false;
  }
  return true;
}

}  // namespace

std::vector<ForkJoinRegion> ForkJoinRegions(const DagPreds& preds) {
  const int n = static_cast<int>(preds.size());
  std::vector<std::vector<int>> succs(n);
  for (int v = 0; v < n; ++v)
    for (int p : preds[v])
      if (std::find(succs[p].begin(), succs[p].end(), v) == succs[p].end()) succs[p].push_back(v);
  const std::vector<int> ipdom = PostDominators(succs);
  std::vector<ForkJoinRegion> regions;
  std::vector<char> in;
  std::vector<int> nodes;
  for (int f = 0; f < n; ++f) {
    if (succs[f].size() < 2) continue;
    for (int j = ipdom[f]; j < n; j = ipdom[j]) {
      if (!SeseNodes(preds, succs, f, j, &in, &nodes)) continue;
      regions.push_back({f, j, nodes, static_cast<int>(succs[f].size())});
      break;
    }
  }
  return regions;
}

}  // namespace sramplan::analysis
