// COSMA's order search for the joint mode. See cosma.h for the method.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "spill/cosma_internal.h"
#include "support/progress.h"

namespace sramplan::spill::cosma_internal {
namespace {

// ---------------------------------------------------------------------------------------------
// Order search for the joint mode on graphs too large for the time-indexed ILP (and as a warm start
// for it otherwise): randomised memory-pressure list schedules and a local search over the operator
// order, scored by a capacity-only replacement simulation (cheap, an upper bound on the fixed-order
// capacity optimum of the order), the best few orders then solved exactly by SolveFixed.

// Replacement on byte capacity only (no addresses) for an order: every op's inputs and outputs are
// made resident; when they do not fit, resident tensors not used by the op are dropped, the one whose
// next access is furthest first (Belady), a plain activation paying its spill once, every later
// reload paying its bytes. The result is a feasible solution of the fixed-order capacity model, so its
// cost bounds that model's optimum from above; addresses (fragmentation) are ignored.
class CapacitySim {
 public:
  CapacitySim(const SpillProblem& p, const Structure& s) : p_(p), s_(s) {
    const size_t nt = p.tensors.size();
    acc_.assign(nt, {});
    ptr_.assign(nt, 0);
    res_.assign(nt, 0);
    dram_.assign(nt, 0);
    loaded_.assign(nt, 0);
    mark_.assign(nt, -1);
    step_of_.assign(p.ops.size(), 0);
  }

  // Non-compulsory bytes; `hot` (optional) receives the steps at which data moved (spills, reloads).
  int64_t Cost(const std::vector<int>& order, std::vector<int>* hot = nullptr) {
    const int n = static_cast<int>(order.size());
    const int nt = static_cast<int>(p_.tensors.size());
    for (int i = 0; i < n; ++i) step_of_[order[i]] = i;
    for (int t = 0; t < nt; ++t) {
      auto& a = acc_[t];
      a.clear();
      if (s_.producer[t] >= 0) a.push_back(step_of_[s_.producer[t]]);
      for (int c : s_.consumers[t]) a.push_back(step_of_[c]);
      std::sort(a.begin(), a.end());
      ptr_[t] = 0;
      res_[t] = 0;
      dram_[t] = IsPreloaded(p_.tensors[t]) ? 1 : 0;
      loaded_[t] = 0;
      mark_[t] = -1;
    }
    if (hot != nullptr) hot->clear();
    resident_.clear();
    int64_t live = 0, cost = 0;
    for (int st = 0; st < n; ++st) {
      const SpillOp& op = p_.ops[order[st]];
      int64_t need = 0;
      for (int t : op.inputs) {
        mark_[t] = st;
        if (!res_[t]) need += p_.tensors[t].bytes;
      }
      for (int t : op.outputs) {
        mark_[t] = st;
        need += p_.tensors[t].bytes;
      }
      while (live + need > p_.budget) {
        int victim = -1, victim_next = -1;
        size_t victim_pos = 0;
        for (size_t k = 0; k < resident_.size(); ++k) {
          int t = resident_[k];
          if (mark_[t] == st) continue;
          int next = acc_[t][ptr_[t]];
          if (next > victim_next || (next == victim_next && t < victim)) {
            victim = t;
            victim_next = next;
            victim_pos = k;
          }
        }
        if (victim < 0) return std::numeric_limits<int64_t>::max() / 4;  // cannot happen: budget >= M_min
        const int64_t b = p_.tensors[victim].bytes;
        if (!dram_[victim]) {
          dram_[victim] = 1;
          cost += b;
          if (hot != nullptr) hot->push_back(st);
        }
        res_[victim] = 0;
        live -= b;
        resident_[victim_pos] = resident_.back();
        resident_.pop_back();
      }
      for (int t : op.inputs) {
        if (res_[t]) continue;
        if (IsPreloaded(p_.tensors[t]) && !loaded_[t]) {
          loaded_[t] = 1;
        } else {
          cost += p_.tensors[t].bytes;
          if (hot != nullptr) hot->push_back(st);
        }
        res_[t] = 1;
        live += p_.tensors[t].bytes;
        resident_.push_back(t);
      }
      for (int t : op.outputs) {
        res_[t] = 1;
        live += p_.tensors[t].bytes;
        resident_.push_back(t);
        if (p_.tensors[t].graph_output) dram_[t] = 1;
      }
      // Advance the access pointers; tensors without a further access leave.
      auto advance = [&](int t) {
        if (++ptr_[t] < static_cast<int>(acc_[t].size())) return;
        res_[t] = 0;
        live -= p_.tensors[t].bytes;
        for (size_t k = 0; k < resident_.size(); ++k) {
          if (resident_[k] == t) {
            resident_[k] = resident_.back();
            resident_.pop_back();
            break;
          }
        }
      };
      for (int t : op.inputs) advance(t);
      for (int t : op.outputs) advance(t);
    }
    return cost;
  }

 private:
  const SpillProblem& p_;
  const Structure& s_;
  std::vector<std::vector<int>> acc_;
  std::vector<int> ptr_, mark_, step_of_, resident_;
  std::vector<char> res_, dram_, loaded_;
};

// A randomised list schedule: among the ready ops, the one with the lowest score, where the score
// weighs (with per-schedule random weights) the bytes the op adds to the live set (outputs minus the
// inputs it is the last reader of), how recently its inputs were produced (consume soon after
// producing), and, when the live bytes plus its outputs exceed the budget, the bytes it frees.
std::vector<int> ListSchedule(const SpillProblem& p, const Structure& s, const std::vector<std::vector<int>>& succs,
                              std::mt19937& rng) {
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double w_delta = u(rng), w_recent = u(rng), w_pressure = 2 * u(rng), noise = 0.3 * u(rng);
  const double budget = static_cast<double>(std::max<int64_t>(1, p.budget));
  std::vector<int> rem(nt, 0), indeg(n, 0), produced(nt, -1);
  for (int t = 0; t < nt; ++t) rem[t] = static_cast<int>(s.consumers[t].size());
  for (int o = 0; o < n; ++o) indeg[o] = static_cast<int>(s.preds[o].size());
  std::vector<int> ready;
  for (int o = 0; o < n; ++o)
    if (indeg[o] == 0) ready.push_back(o);
  std::vector<int> order;
  order.reserve(n);
  double live = 0;
  for (int st = 0; st < n; ++st) {
    int pick = -1;
    double best = 0;
    for (size_t k = 0; k < ready.size(); ++k) {
      const int o = ready[k];
      double alloc = 0, freed = 0, recent = 0;
      for (int t : p.ops[o].outputs)
        if (rem[t] > 0) alloc += static_cast<double>(p.tensors[t].bytes);
      for (int t : p.ops[o].inputs) {
        if (p.tensors[t].weight) continue;
        if (rem[t] == 1) freed += static_cast<double>(p.tensors[t].bytes);
        if (produced[t] >= 0) recent = std::max(recent, 1.0 / (1.0 + st - produced[t]));
      }
      double score = w_delta * (alloc - freed) / budget - w_recent * recent + noise * u(rng);
      if (live + alloc > budget) score -= w_pressure * freed / budget;
      if (pick < 0 || score < best) {
        pick = static_cast<int>(k);
        best = score;
      }
    }
    const int o = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    order.push_back(o);
    for (int t : p.ops[o].outputs) {
      produced[t] = st;
      if (rem[t] > 0) live += static_cast<double>(p.tensors[t].bytes);
    }
    for (int t : p.ops[o].inputs) {
      if (--rem[t] == 0 && !p.tensors[t].weight && produced[t] >= 0) live -= static_cast<double>(p.tensors[t].bytes);
    }
    for (int q : succs[o])
      if (--indeg[q] == 0) ready.push_back(q);
  }
  return order;
}

constexpr int kMaxKicksWithoutGain = 8;

// Adds `ord` (simulated cost `c`) to the search's elite: the `elite_size` best distinct orders, cheapest
// first (among equal costs, the earlier found first). `seen` holds the elite's orders.
void OfferElite(const std::vector<int>& ord, int64_t c, size_t elite_size, std::map<std::vector<int>, int64_t>* seen,
                SearchResult* sr) {
  std::map<std::vector<int>, int64_t>& seen_elite = *seen;
  if (seen_elite.count(ord)) return;
  if (sr->elite.size() >= elite_size && c >= sr->elite_cost.back()) return;
  seen_elite[ord] = c;
  size_t k = 0;
  while (k < sr->elite.size() && sr->elite_cost[k] <= c) ++k;
  sr->elite.insert(sr->elite.begin() + static_cast<long>(k), ord);
  sr->elite_cost.insert(sr->elite_cost.begin() + static_cast<long>(k), c);
  if (sr->elite.size() > elite_size) {
    seen_elite.erase(sr->elite.back());
    sr->elite.pop_back();
    sr->elite_cost.pop_back();
  }
}

// The local search's kick: 3 + n / 50 random ops of `cur` each move to a random step inside their
// dependency window. `pos` is the step of every op in `cur` (kept up to date).
void Kick(const Structure& s, const std::vector<std::vector<int>>& succs, std::mt19937* rng_ptr,
          std::vector<int>* cur_ptr, std::vector<int>* pos_ptr) {
  std::mt19937& rng = *rng_ptr;
  std::vector<int>& cur = *cur_ptr;
  std::vector<int>& pos = *pos_ptr;
  const int n = static_cast<int>(cur.size());
  auto rotate_to = [&](int i, int j) {  // move the op at step i to step j
    if (i < j) {
      std::rotate(cur.begin() + i, cur.begin() + i + 1, cur.begin() + j + 1);
    } else {
      std::rotate(cur.begin() + j, cur.begin() + i, cur.begin() + i + 1);
    }
    for (int k = std::min(i, j); k <= std::max(i, j); ++k) pos[cur[k]] = k;
  };
  for (int k = 0; k < n; ++k) pos[cur[k]] = k;
  for (int kick = 0; kick < 3 + n / 50; ++kick) {
    int a = static_cast<int>(rng() % n);
    int ol = 0, oh = n - 1;
    for (int q : s.preds[cur[a]]) ol = std::max(ol, pos[q] + 1);
    for (int q : succs[cur[a]]) oh = std::min(oh, pos[q] - 1);
    if (oh > ol) rotate_to(a, ol + static_cast<int>(rng() % (oh - ol + 1)));
  }
}

}  // namespace

// Iterated local search over orders. Starts from the given orders and `list_schedules` randomised
// list schedules; moves one op to another step inside its dependency window (biased towards the steps
// where the simulation moved data), accepts moves that do not increase the simulated cost, and kicks
// the best order after a stall. Stops after `max_evals` simulations or at `deadline`.
SearchResult SearchOrders(const SpillProblem& p, const Structure& s, const std::vector<std::vector<int>>& starts,
                          int64_t max_evals, Clock::time_point deadline, uint32_t seed, size_t elite_size) {
  const int n = static_cast<int>(p.ops.size());
  SearchResult sr;
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> succs(n);
  for (int o = 0; o < n; ++o)
    for (int q : s.preds[o]) succs[q].push_back(o);
  CapacitySim sim(p, s);
  std::vector<int> best;
  int64_t best_cost = std::numeric_limits<int64_t>::max();
  // Progress: the best simulated cost (no bound over orders is known here).
  Progress progress("COSMA order search", std::chrono::duration<double>(deadline - Clock::now()).count(), "B",
                    "orders");
  auto out_of_time = [&]() {
    if (sr.evals >= max_evals) return true;
    if ((sr.evals & 15) == 0 && progress.enabled())
      progress.Update(static_cast<double>(best_cost), -1, sr.evals);
    if ((sr.evals & 15) == 0 && Clock::now() >= deadline) {
      sr.hit_deadline = true;
      return true;
    }
    return sr.hit_deadline;
  };
  std::map<std::vector<int>, int64_t> seen_elite;
  auto offer = [&](const std::vector<int>& ord, int64_t c) { OfferElite(ord, c, elite_size, &seen_elite, &sr); };
  // Seeds: the given orders, then list schedules.
  for (const auto& ord : starts) {
    int64_t c = sim.Cost(ord);
    ++sr.evals;
    offer(ord, c);
    if (c < best_cost) {
      best_cost = c;
      best = ord;
    }
  }
  sr.start_cost = best_cost;
  if (best_cost == 0 || n < 2) return sr;
  const int n_lists = std::max(16, std::min(200, 40000 / std::max(1, n)));
  for (int k = 0; k < n_lists && !out_of_time(); ++k) {
    std::vector<int> ord = ListSchedule(p, s, succs, rng);
    int64_t c = sim.Cost(ord);
    ++sr.evals;
    ++sr.list_schedules;
    offer(ord, c);
    if (c < best_cost) {
      best_cost = c;
      best = ord;
    }
  }
  // Local search.
  std::vector<int> cur = best, pos(n), hot, saved;
  int64_t cur_cost = sim.Cost(cur, &hot);
  ++sr.evals;
  for (int i = 0; i < n; ++i) pos[cur[i]] = i;
  int64_t since_improve = 0, kick_best = best_cost;
  int kicks_without_gain = 0;
  const int64_t stall = std::max<int64_t>(2000, 20LL * n);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int64_t idle = 0;  // consecutive draws without a legal move (a chain has none)
  while (!out_of_time() && cur_cost > 0 && idle < 1000) {
    int i;
    if (!hot.empty() && u(rng) < 0.8) {
      int h = hot[rng() % hot.size()];
      int span = 1 + static_cast<int>(rng() % 16);
      i = std::clamp(h - span + static_cast<int>(rng() % (2 * span + 1)), 0, n - 1);
    } else {
      i = static_cast<int>(rng() % n);
    }
    // A segment of 1 to 16 consecutive ops (half of the moves: one op) moves as a block to another
    // place inside the window its outside predecessors and successors leave.
    int len = u(rng) < 0.5 ? 1 : 2 + static_cast<int>(rng() % 15);
    len = std::min(len, n - i);
    int lo = 0, hi = n - 1;
    for (int k = i; k < i + len; ++k) {
      for (int q : s.preds[cur[k]])
        if (pos[q] < i || pos[q] >= i + len) lo = std::max(lo, pos[q] + 1);
      for (int q : succs[cur[k]])
        if (pos[q] < i || pos[q] >= i + len) hi = std::min(hi, pos[q] - 1);
    }
    // New first step of the block: in [lo, i) (left) or its last step in [i + len, hi] (right).
    const int left_moves = std::max(0, i - lo), right_moves = std::max(0, hi - (i + len) + 1);
    if (left_moves + right_moves == 0) {
      ++idle;
      continue;
    }
    idle = 0;
    int pick = static_cast<int>(rng() % (left_moves + right_moves));
    int a, b;  // affected range
    if (pick < left_moves) {
      int j = lo + pick;
      a = j;
      b = i + len - 1;
      saved.assign(cur.begin() + a, cur.begin() + b + 1);
      std::rotate(cur.begin() + j, cur.begin() + i, cur.begin() + i + len);
    } else {
      int j = i + len + (pick - left_moves);  // new last step
      a = i;
      b = j;
      saved.assign(cur.begin() + a, cur.begin() + b + 1);
      std::rotate(cur.begin() + i, cur.begin() + i + len, cur.begin() + j + 1);
    }
    for (int k = a; k <= b; ++k) pos[cur[k]] = k;
    std::vector<int> new_hot;
    int64_t c = sim.Cost(cur, &new_hot);
    ++sr.evals;
    if (c <= cur_cost) {
      if (c < cur_cost) since_improve = 0;
      cur_cost = c;
      hot.swap(new_hot);
      if (c < best_cost) {
        best_cost = c;
        best = cur;
      }
      if (c <= sr.elite_cost.back() || sr.elite.size() < elite_size) offer(cur, c);
    } else {
      std::copy(saved.begin(), saved.end(), cur.begin() + a);
      for (int k = a; k <= b; ++k) pos[cur[k]] = k;
      ++since_improve;
    }
    if (since_improve > stall) {
      // Kick: restart from the best order with a few random moves; stop after kicks that bring nothing.
      if (best_cost < kick_best) {
        kick_best = best_cost;
        kicks_without_gain = 0;
      } else if (++kicks_without_gain > kMaxKicksWithoutGain) {
        break;
      }
      cur = best;
      Kick(s, succs, &rng, &cur, &pos);
      cur_cost = sim.Cost(cur, &hot);
      ++sr.evals;
      since_improve = 0;
    }
  }
  return sr;
}

}  // namespace sramplan::spill::cosma_internal
