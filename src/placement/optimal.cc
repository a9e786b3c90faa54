#include "placement/optimal.h"

#include <pthread.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "placement/internal.h"
#include "support/int_math.h"
#include "support/progress.h"

namespace sramplan::placement {
namespace {

using internal::ArenaOf;
using internal::GreedyUntil;
using internal::Occupies;
using Clock = std::chrono::steady_clock;
constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

Clock::time_point DeadlineAfter(Clock::time_point start, double seconds) {
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(seconds, 1e7)));
}

// ---------------------------------------------------------------------------------------------
// Exact search (see optimal.h for the idea).
//
// Vocabulary: time is cut into sections at every live-range endpoint; an "item" is a buffer of
// non-zero size with its first and last section. The search state is a floor per section (every
// unplaced item goes at or above the floors of its sections) and the set of unplaced items. The
// lowest offset an unplaced item can take is its release: the max floor over its sections.

// How one (re)start of the search orders its choices.
struct SearchConfig {
  bool tight_branching = true;  // in a valley with a zero-slack section, branch on who covers it
  bool flush_order = false;     // candidates ending flush with a neighbour first
  uint64_t seed = 0;            // 0: heuristic order as is; otherwise randomly perturbed
};

// Limits shared by the searches of one call.
struct SearchBudget {
  Clock::time_point deadline;
  int64_t node_limit = 0;  // 0: none
  int64_t nodes = 0;       // explored so far
  // Progress on stderr (support/progress.h): the best arena and the proved bound so far.
  Progress* progress = nullptr;
  int64_t best = -1, bound = -1;
};

class ExactSearch {
 public:
  enum class Outcome {
    kFound,      // a placement with arena <= bound was found
    kExhausted,  // proved: no placement with arena <= bound exists
    kStopped,    // node budget, node limit or deadline
  };

  // `r` must have no fixed offsets. Requests that occupy nothing stay at offset 0.
  ExactSearch(const std::vector<BufferRequest>& r, SearchBudget* budget) : r_(r), budget_(*budget) {
    std::vector<int64_t> cuts;
    for (const auto& b : r)
      if (Occupies(b)) {
        cuts.push_back(b.first_step);
        cuts.push_back(int64_t{b.last_step} + 1);
      }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    num_sections_ = cuts.empty() ? 0 : static_cast<int>(cuts.size()) - 1;
    auto section = [&](int64_t v) {
      return static_cast<int>(std::lower_bound(cuts.begin(), cuts.end(), v) - cuts.begin());
    };
    for (size_t i = 0; i < r.size(); ++i) {
      if (!Occupies(r[i])) continue;
      Item it;
      it.request = static_cast<int>(i);
      it.s = section(r[i].first_step);
      it.e = section(int64_t{r[i].last_step} + 1) - 1;
      it.size = r[i].bytes;
      it.align = std::max<int64_t>(1, r[i].alignment);
      items_.push_back(it);
    }
    const int m = static_cast<int>(items_.size());
    const int S = num_sections_;
    // Identical items (same sections, size and alignment) are interchangeable: the one with the
    // lower index goes below.
    std::vector<int> by_shape(m);
    std::iota(by_shape.begin(), by_shape.end(), 0);
    auto shape = [&](int i) {
      return std::make_tuple(items_[i].s, items_[i].e, items_[i].size, items_[i].align, i);
    };
    std::sort(by_shape.begin(), by_shape.end(), [&](int p, int q) { return shape(p) < shape(q); });
    for (int k = 1; k < m; ++k) {
      const Item& p = items_[by_shape[k - 1]];
      Item& q = items_[by_shape[k]];
      if (p.s == q.s && p.e == q.e && p.size == q.size && p.align == q.align)
        q.twin_prev = by_shape[k - 1];
    }
    starts_at_.assign(S, {});
    for (int i = 0; i < m; ++i) starts_at_[items_[i].s].push_back(i);
    floor_.assign(S, 0);
    rem_.assign(S, 0);
    cross_.assign(std::max(S, 1), 0);
    // Per section, by difference arrays (linear, however long the items live).
    {
      std::vector<int64_t> d_rem(S + 1, 0), d_cross(S + 1, 0);
      for (const Item& it : items_) {
        d_rem[it.s] += it.size;
        d_rem[it.e + 1] -= it.size;
        if (it.s < it.e) {
          ++d_cross[it.s];
          --d_cross[it.e];
        }
      }
      int64_t rem = 0, cross = 0;
      for (int t = 0; t < S; ++t) {
        rem_[t] = rem += d_rem[t];
        cross_[t] = static_cast<int>(cross += d_cross[t]);
      }
    }
    placed_.assign(m, 0);
    offset_.assign(m, 0);
    solution_.assign(m, 0);
    release_.assign(m, 0);
    acc_.assign(S, 0);
    item_key_.resize(m);
    for (int i = 0; i < m; ++i) item_key_[i] = Mix(0x5A17u + static_cast<uint64_t>(i));
    // Every offset of a compacted placement, and every floor, is a multiple of this.
    for (const Item& it : items_) {
      granularity_ = std::gcd(granularity_, it.size);
      if (it.align > 1) granularity_ = std::gcd(granularity_, it.align);
    }
    granularity_ = std::max<int64_t>(1, granularity_);
  }

  // Deepest recursion Solve can reach, in levels (each placement or raise is one level; raises
  // merge runs of equal floors, of which there are at most sections + 2 x items).
  int64_t MaxDepth() const { return 3 * static_cast<int64_t>(items_.size()) + num_sections_ + 8; }

  // Decision: is there a placement with arena <= bound? Stops after `budget` nodes (0: none).
  // Failures remembered from earlier calls with a bound >= this one stay valid.
  Outcome Solve(int64_t bound, int64_t budget, const SearchConfig& config) {
    if (cache_.empty()) cache_.resize(size_t{1} << 18);
    if (bound > cache_bound_) std::fill(cache_.begin(), cache_.end(), CacheEntry{});
    cache_bound_ = bound;
    bound_ = bound;
    config_ = config;
    rng_ = Mix(config.seed * 7919 + 1);
    budget_end_ = budget > 0 ? budget_.nodes + budget : 0;
    stopped_ = false;
    // The independent parts of the whole problem; one solved by an earlier call within this bound
    // is not solved again.
    parts_.clear();
    for (int t = 0; t < num_sections_; ++t) {
      if (rem_[t] == 0) continue;
      const int l = t;
      while (t + 1 < num_sections_ && cross_[t] > 0) ++t;
      parts_.push_back({l, t});
    }
    const std::vector<std::pair<int, int>> parts = parts_;
    parts_.clear();
    for (const auto& [a, b] : parts) {
      auto memo = solved_parts_.find(a);
      if (memo != solved_parts_.end() && memo->second.first <= bound) {
        for (const auto& [i, offset] : memo->second.second) solution_[i] = offset;
        continue;
      }
      if (!Branch(a, b)) return stopped_ ? Outcome::kStopped : Outcome::kExhausted;
      std::vector<std::pair<int, int64_t>> offsets;
      int64_t top = 0;
      for (int t = a; t <= b; ++t)
        for (int i : starts_at_[t]) {
          offsets.push_back({i, solution_[i]});
          top = std::max(top, solution_[i] + items_[i].size);
        }
      solved_parts_[a] = {top, std::move(offsets)};
    }
    return Outcome::kFound;
  }

  bool LimitReached() const {
    return (budget_.node_limit > 0 && budget_.nodes >= budget_.node_limit) ||
           Clock::now() >= budget_.deadline;
  }
  // Offsets per request of the last placement found (zero-byte requests at 0).
  std::vector<int64_t> Offsets() const {
    std::vector<int64_t> offsets(r_.size(), 0);
    for (size_t i = 0; i < items_.size(); ++i) offsets[items_[i].request] = solution_[i];
    return offsets;
  }

 private:
  struct Item {
    int request = 0;
    int s = 0, e = 0;  // first and last section (inclusive)
    int64_t size = 0;
    int64_t align = 1;
    int twin_prev = -1;  // identical item that goes below this one
  };
  struct CacheEntry {
    uint64_t h1 = 0, h2 = 0;
  };

  static uint64_t Mix(uint64_t z) {  // splitmix64 finaliser
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t Rand() {  // xorshift64
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }

  bool OutOfBudget() {
    const int64_t n = ++budget_.nodes;
    if (budget_.node_limit > 0 && n >= budget_.node_limit) return true;
    if (budget_end_ > 0 && n >= budget_end_) return true;
    if ((n & 255) != 0) return false;
    if (budget_.progress) budget_.progress->Update(budget_.best, budget_.bound, n);
    return Clock::now() >= budget_.deadline;
  }

  // Places every unplaced item inside sections [a, b] (none crosses a or b). The range falls apart
  // into independent parts wherever no unplaced item crosses a section boundary; each part is
  // solved on its own, so a failure in one never re-opens the choices made in another.
  bool SolveRange(int a, int b) {
    if (stopped_) return false;
    const size_t first_part = parts_.size();
    for (int t = a; t <= b; ++t) {
      if (rem_[t] == 0) continue;
      const int l = t;
      while (t < b && cross_[t] > 0) ++t;
      parts_.push_back({l, t});
    }
    const size_t end_part = parts_.size();
    // Most constrained part first (ties: leftmost).
    std::sort(parts_.begin() + first_part, parts_.begin() + end_part, [&](auto p, auto q) {
      const int64_t sp = Slack(p.first, p.second), sq = Slack(q.first, q.second);
      return sp != sq ? sp < sq : p.first < q.first;
    });
    bool ok = true;
    for (size_t k = first_part; k < end_part && ok; ++k)
      ok = Branch(parts_[k].first, parts_[k].second);
    parts_.resize(first_part);
    if (!ok) return false;
    // Record the items placed in this range (the parts recorded theirs).
    for (int t = a; t <= b; ++t)
      for (int i : starts_at_[t])
        if (placed_[i]) solution_[i] = offset_[i];
    return true;
  }

  int64_t Slack(int a, int b) const {
    int64_t slack = kInf;
    for (int t = a; t <= b; ++t)
      if (rem_[t] > 0) slack = std::min(slack, bound_ - floor_[t] - rem_[t]);
    return slack;
  }

  // One connected range [a, b]: every section live, every inner boundary crossed by an item.
  bool Branch(int a, int b) {
    if (stopped_) return false;
    if (OutOfBudget()) {
      stopped_ = true;
      return false;
    }
    // Inference 1: per section, the floor plus the unplaced bytes must fit under the bound.
    for (int t = a; t <= b; ++t)
      if (floor_[t] + rem_[t] > bound_) return false;
    // Releases, with a sparse table of range maxima over the floors.
    const int levels = std::bit_width(static_cast<unsigned>(b - a + 1));
    if (static_cast<int>(range_max_.size()) < levels) range_max_.resize(levels);
    for (int k = 0; k < levels; ++k)
      if (static_cast<int>(range_max_[k].size()) < num_sections_)
        range_max_[k].resize(num_sections_);
    for (int t = a; t <= b; ++t) range_max_[0][t] = floor_[t];
    for (int k = 1; k < levels; ++k)
      for (int t = a, half = 1 << (k - 1); t + 2 * half - 1 <= b; ++t)
        range_max_[k][t] = std::max(range_max_[k - 1][t], range_max_[k - 1][t + half]);
    unplaced_.clear();
    for (int t = a; t <= b; ++t)
      for (int i : starts_at_[t])
        if (!placed_[i]) {
          const Item& it = items_[i];
          const int k = std::bit_width(static_cast<unsigned>(it.e - it.s + 1)) - 1;
          release_[i] =
              AlignUp(std::max(range_max_[k][it.s], range_max_[k][it.e - (1 << k) + 1]), it.align);
          unplaced_.push_back(i);
        }
    // A single item goes on its release.
    if (unplaced_.size() == 1) {
      const int i = unplaced_[0];
      if (release_[i] + items_[i].size > bound_) return false;
      solution_[i] = release_[i];
      return true;
    }
    // Inference 2 (one machine with release dates, per section): sorted by decreasing release,
    // every item plus the items above it in its sections must fit between its release and the
    // bound. acc_[t] = bytes of the items seen so far that are live in section t.
    by_release_.clear();
    for (int i : unplaced_) by_release_.push_back({-release_[i], i});
    std::sort(by_release_.begin(), by_release_.end());
    for (int t = a; t <= b; ++t) acc_[t] = 0;
    for (const auto& [minus_release, i] : by_release_) {
      const Item& it = items_[i];
      const int64_t limit = bound_ - release_[i] - it.size;
      for (int t = it.s; t <= it.e; ++t) {
        if (acc_[t] > limit) return false;
        acc_[t] += it.size;
      }
    }
    // Failures already proved for this very sub-problem. Whether the unplaced items can be placed
    // depends only on their releases, not on the floors as such.
    uint64_t h1 = 0x1234567u, h2 = 0x89ABCDEFu;
    for (int i : unplaced_) {
      const uint64_t k = item_key_[i] ^ Mix(static_cast<uint64_t>(release_[i]) + 0x51ED27u);
      h1 ^= Mix(k);
      h2 += k * 0x2545F4914F6CDD1Dull;
    }
    if (CacheHas(h1, h2)) return false;
    const bool ok = Expand(a, b);
    if (!ok && !stopped_) CacheAdd(h1, h2);
    return ok;
  }

  bool Expand(int a, int b) {
    auto live_floor = [&](int t) { return (t >= a && t <= b) ? floor_[t] : kInf; };
    // The valley to fill: a maximal run of sections at one height whose neighbours are higher;
    // the one with the least slack (ties: lowest, then leftmost; a seeded start breaks ties
    // randomly).
    int left = -1, right = -1;
    int64_t x = kInf;
    std::pair<int64_t, uint64_t> best_score = {std::numeric_limits<int64_t>::max(), 0};
    for (int t = a; t <= b;) {
      const int l = t;
      const int64_t h = floor_[t];
      while (t + 1 <= b && floor_[t + 1] == h) ++t;
      const int rr = t++;
      if (live_floor(l - 1) < h || live_floor(rr + 1) < h) continue;
      int64_t slack = kInf;
      for (int s = l; s <= rr; ++s) slack = std::min(slack, bound_ - floor_[s] - rem_[s]);
      const std::pair<int64_t, uint64_t> score = {slack, config_.seed != 0 ? Rand() % 1024 : 0};
      if (score < best_score || (score == best_score && h < x)) {
        best_score = score;
        x = h;
        left = l;
        right = rr;
      }
    }
    const int64_t left_floor = live_floor(left - 1), right_floor = live_floor(right + 1);
    const int64_t raise_to = std::min(left_floor, right_floor);

    // Candidates: the unplaced items inside the valley.
    bool raise_ok = raise_to < kInf;
    const size_t first = candidates_.size();
    for (int t = left; t <= right; ++t)
      for (int i : starts_at_[t]) {
        const Item& it = items_[i];
        if (placed_[i] || it.e > right) continue;
        // Dominance: leaving [x, raise_to) empty is pointless if this item fits there.
        if (AlignUp(x, it.align) + it.size <= raise_to) raise_ok = false;
        candidates_.push_back(i);
      }
    const size_t end = candidates_.size();
    OrderCandidates(first, end, left, right, x, left_floor, right_floor);
    auto fits = [&](int i) {
      const Item& it = items_[i];
      return AlignUp(x, it.align) + it.size <= bound_ &&
             (it.twin_prev < 0 || placed_[it.twin_prev]);
    };

    bool ok = false;
    // A section of the valley with less slack than the granularity cannot hold any waste, so some
    // item covers it at height x: branch on which (the section with fewest such items).
    int tight = -1;
    if (config_.tight_branching) {
      size_t tight_count = std::numeric_limits<size_t>::max();
      for (int t = left; t <= right; ++t) {
        if (bound_ - floor_[t] - rem_[t] >= granularity_) continue;
        size_t count = 0;
        for (size_t k = first; k < end; ++k) {
          const Item& it = items_[candidates_[k]];
          if (it.s <= t && t <= it.e && fits(candidates_[k])) ++count;
        }
        if (count < tight_count) {
          tight_count = count;
          tight = t;
        }
      }
    }
    if (tight >= 0) {
      for (size_t k = first; k < end && !ok && !stopped_; ++k) {
        const int i = candidates_[k];
        const Item& it = items_[i];
        if (it.s > tight || it.e < tight || !fits(i)) continue;
        Place(i, AlignUp(x, it.align));
        ok = SolveRange(a, b);
        Unplace(i, x);
      }
      candidates_.resize(first);
      return ok;
    }

    // Otherwise branch on the leftmost item at height x in the valley, or on none.
    for (size_t k = first; k < end && !ok && !stopped_; ++k) {
      const int i = candidates_[k];
      const Item& it = items_[i];
      if (!fits(i)) continue;
      const int64_t off = AlignUp(x, it.align);
      // The sections left of it get nothing at x: they rise to the lower of their left neighbour
      // and the top of the item, unless some item fits in the space that would be wasted.
      const int64_t left_to = std::min(left_floor, off + it.size);
      bool dominated = false;
      for (size_t q = first; q < end && !dominated; ++q) {
        const Item& w = items_[candidates_[q]];
        dominated = w.e < it.s && AlignUp(x, w.align) + w.size <= left_to;
      }
      if (dominated) continue;
      Place(i, off);
      for (int t = left; t < it.s; ++t) floor_[t] = left_to;
      ok = SolveRange(a, b);
      for (int t = left; t < it.s; ++t) floor_[t] = x;
      Unplace(i, x);
    }
    candidates_.resize(first);
    if (ok || stopped_) return ok;
    if (raise_ok && raise_to <= bound_) {
      for (int t = left; t <= right; ++t) floor_[t] = raise_to;
      ok = SolveRange(a, b);
      for (int t = left; t <= right; ++t) floor_[t] = x;
    }
    return ok;
  }

  void OrderCandidates(size_t first, size_t end, int left, int right, int64_t x, int64_t left_floor,
                       int64_t right_floor) {
    auto b = candidates_.begin() + first, e = candidates_.begin() + end;
    if (!config_.flush_order) {
      // Leftmost (wastes nothing on the left), then longest, then largest.
      std::stable_sort(b, e, [&](int p, int q) {
        const Item &u = items_[p], &v = items_[q];
        if (u.s != v.s) return u.s < v.s;
        if (u.e != v.e) return u.e > v.e;
        return u.size > v.size;
      });
    } else {
      // Starting at the valley's left end, then longest, then ending flush with a neighbour.
      auto key = [&](int p) {
        const Item& u = items_[p];
        const int64_t top = AlignUp(x, u.align) + u.size;
        const bool flush =
            (u.s == left && top == left_floor) || (u.e == right && top == right_floor);
        return std::make_tuple(u.s != left, u.s - u.e, !flush, -u.size);
      };
      std::stable_sort(b, e, [&](int p, int q) { return key(p) < key(q); });
    }
    if (config_.seed == 0) return;
    const size_t n = end - first;
    for (size_t k = 0; k + 1 < n; ++k)
      if (Rand() % 4 == 0)
        std::swap(candidates_[first + k], candidates_[first + k + 1 + Rand() % (n - k - 1)]);
  }

  void Place(int i, int64_t off) {
    const Item& it = items_[i];
    placed_[i] = 1;
    offset_[i] = off;
    for (int t = it.s; t <= it.e; ++t) {
      floor_[t] = off + it.size;
      rem_[t] -= it.size;
    }
    for (int t = it.s; t < it.e; ++t) --cross_[t];
  }
  void Unplace(int i, int64_t old_floor) {
    const Item& it = items_[i];
    placed_[i] = 0;
    for (int t = it.s; t <= it.e; ++t) {
      floor_[t] = old_floor;
      rem_[t] += it.size;
    }
    for (int t = it.s; t < it.e; ++t) ++cross_[t];
  }

  // A lossy table of proved failures, keyed by two independent 64-bit hashes.
  bool CacheHas(uint64_t h1, uint64_t h2) const {
    const size_t mask = cache_.size() - 1;
    for (size_t k = 0; k < 4; ++k) {
      const CacheEntry& e = cache_[(h1 + k) & mask];
      if (e.h1 == h1 && e.h2 == h2) return true;
    }
    return false;
  }
  void CacheAdd(uint64_t h1, uint64_t h2) {
    const size_t mask = cache_.size() - 1;
    for (size_t k = 0; k < 4; ++k) {
      CacheEntry& e = cache_[(h1 + k) & mask];
      if (e.h1 == 0 && e.h2 == 0) {
        e = {h1, h2};
        return;
      }
    }
    cache_[h1 & mask] = {h1, h2};
  }

  const std::vector<BufferRequest>& r_;
  SearchBudget& budget_;
  int num_sections_ = 0;
  std::vector<Item> items_;
  std::vector<std::vector<int>> starts_at_;  // per section: the items starting there
  std::vector<int64_t> floor_;               // per section: every unplaced item goes at or above it
  std::vector<int64_t> rem_;                 // per section: bytes of the unplaced items live there
  std::vector<int> cross_;  // per boundary t|t+1: unplaced items live on both sides
  std::vector<char> placed_;
  std::vector<int64_t> offset_;    // of placed items
  std::vector<int64_t> solution_;  // of the last placement found
  std::vector<int64_t> release_;
  std::vector<int64_t> acc_;
  std::vector<std::vector<int64_t>> range_max_;
  std::vector<int> unplaced_;
  std::vector<std::pair<int64_t, int>> by_release_;
  std::vector<int> candidates_;             // a stack: each level uses the tail
  std::vector<std::pair<int, int>> parts_;  // a stack as well
  std::vector<uint64_t> item_key_;
  std::vector<CacheEntry> cache_;
  // Parts of the whole problem solved so far, by first section: (top, offsets per item).
  std::map<int, std::pair<int64_t, std::vector<std::pair<int, int64_t>>>> solved_parts_;
  int64_t cache_bound_ = 0;
  int64_t granularity_ = 0;
  SearchConfig config_;
  uint64_t rng_ = 1;
  int64_t bound_ = 0;
  int64_t budget_end_ = 0;
  bool stopped_ = false;
};

// 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, ... (Luby et al.'s universal restart sequence).
int64_t Luby(int64_t i) {
  int64_t size = 1, level = 0;
  while (size < i + 1) {
    ++level;
    size = 2 * size + 1;
  }
  while (size - 1 != i) {
    size = (size - 1) / 2;
    --level;
    i %= size;
  }
  return int64_t{1} << level;
}

// Decision query with restarts over a portfolio of eight searches: the instance and its mirror
// image in time (the search fills valleys left to right, so the two behave differently), each with
// four search configurations. They take turns; the j-th run of each gets Luby(j) x kRestartBase
// nodes, and every other run is randomly perturbed (the others repeat the plain heuristic order
// with a larger budget). Proved failures and solved parts carry over between runs.
// Deterministic: budgets count nodes, not time. Returns the outcome and the search that decided.
std::pair<ExactSearch::Outcome, ExactSearch*> SolveWithRestarts(ExactSearch* forward,
                                                                ExactSearch* backward,
                                                                int64_t bound) {
  constexpr int64_t kRestartBase = 1000;
  static constexpr SearchConfig kPortfolio[] = {
      {true, false, 0}, {false, false, 0}, {true, true, 0}, {false, true, 0}};
  for (int64_t r = 0;; ++r) {
    ExactSearch* search = r % 2 == 0 ? forward : backward;
    SearchConfig config = kPortfolio[(r / 2) % 4];
    const int64_t j = r / 8;  // run number of this search and configuration
    config.seed = j % 2 == 0 ? 0 : static_cast<uint64_t>(r);
    ExactSearch::Outcome o = search->Solve(bound, kRestartBase * Luby(j), config);
    if (o != ExactSearch::Outcome::kStopped || search->LimitReached()) return {o, search};
  }
}

template <typename F>
void* CallOnThread(void* f) {
  (*static_cast<F*>(f))();
  return nullptr;
}

// Runs `f` on a thread whose stack holds `bytes` (the exact search recurses once per decision);
// on the calling thread if no such thread can be made.
template <typename F>
void RunWithStack(size_t bytes, F& f) {
  pthread_attr_t attr;
  pthread_t thread;
  bool ran = false;
  if (pthread_attr_init(&attr) == 0) {
    if (pthread_attr_setstacksize(&attr, bytes) == 0 &&
        pthread_create(&thread, &attr, &CallOnThread<F>, &f) == 0) {
      pthread_join(thread, nullptr);
      ran = true;
    }
    pthread_attr_destroy(&attr);
  }
  if (!ran) f();
}

// Independent of the search: aborts if a placement is invalid (internal invariant). A sweep over
// time keeps the live buffers without a fixed offset in a set ordered by offset: they must be
// disjoint, so each newcomer need only be compared with its neighbours there. Buffers with a fixed
// offset (which may overlap each other) are compared with every live buffer.
void CheckPlacement(const std::vector<BufferRequest>& r, const Placement& p) {
  SP_CHECK(p.offsets.size() == r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].fixed_offset) {
      SP_CHECK(p.offsets[i] == *r[i].fixed_offset);  // the caller's offset, whatever it is
    } else {
      SP_CHECK(p.offsets[i] >= 0);
      SP_CHECK(p.offsets[i] % std::max<int64_t>(1, r[i].alignment) == 0);
    }
  }
  // Events: (step, 0 = leaves after the previous step / 1 = arrives, request).
  std::vector<std::tuple<int64_t, int, int>> events;
  for (size_t i = 0; i < r.size(); ++i)
    if (Occupies(r[i])) {
      events.emplace_back(r[i].first_step, 1, static_cast<int>(i));
      events.emplace_back(int64_t{r[i].last_step} + 1, 0, static_cast<int>(i));
    }
  std::sort(events.begin(), events.end());
  auto disjoint = [&](int a, int b) {
    return p.offsets[a] + r[a].bytes <= p.offsets[b] || p.offsets[b] + r[b].bytes <= p.offsets[a];
  };
  std::set<std::pair<int64_t, int>> live;  // (offset, request) of live buffers without a fixed offset
  std::set<int> live_fixed;
  for (const auto& [step, arrives, i] : events) {
    const bool fixed = r[i].fixed_offset.has_value();
    if (!arrives) {
      if (fixed) live_fixed.erase(i);
      else live.erase({p.offsets[i], i});
      continue;
    }
    if (fixed) {
      for (const auto& [offset, j] : live)
        SP_CHECK_MSG(disjoint(i, j), "placement search produced overlapping buffers");
      live_fixed.insert(i);
      continue;
    }
    for (int j : live_fixed) SP_CHECK_MSG(disjoint(i, j), "placement search produced overlapping buffers");
    auto [it, inserted] = live.insert({p.offsets[i], i});
    if (it != live.begin()) SP_CHECK_MSG(disjoint(i, std::prev(it)->second), "placement search produced overlapping buffers");
    if (std::next(it) != live.end())
      SP_CHECK_MSG(disjoint(i, std::next(it)->second), "placement search produced overlapping buffers");
  }
  SP_CHECK(p.arena_bytes == ArenaOf(r, p.offsets));
}

// Improves `incumbent` with the exact search, within the options' limits.
OptimalResult Solve(const std::vector<BufferRequest>& r, const OptimalOptions& options,
                    Placement incumbent, std::string incumbent_method, Clock::time_point start) {
  OptimalResult res;
  res.lower_bound = LiveBytesLowerBound(r);
  res.proved_lower_bound = res.lower_bound;
  res.placement = std::move(incumbent);
  res.method = std::move(incumbent_method);
  auto elapsed = [&]() { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto fits = [&]() { return !options.capacity || res.placement.arena_bytes <= *options.capacity; };
  auto done = [&]() {
    return res.placement.arena_bytes <= res.proved_lower_bound || (!options.minimize && fits());
  };
  if (fits()) res.seconds_to_fit = elapsed();
  const bool any_fixed = std::any_of(
      r.begin(), r.end(), [](const BufferRequest& b) { return b.fixed_offset.has_value(); });
  // The search adds up bytes per section: keep far from overflow.
  __int128 total = 0;
  for (const BufferRequest& b : r) total += std::max<int64_t>(0, b.bytes);
  const bool huge = total > (__int128{1} << 61);
  const auto deadline = DeadlineAfter(start, std::max(0.0, options.time_limit_s));
  // A portfolio that used up the whole time limit leaves nothing for the search.
  if (!any_fixed && !huge && !done() && options.time_limit_s > 0 && Clock::now() >= deadline) res.hit_limit = true;
  if (!any_fixed && !huge && !done() && options.time_limit_s > 0 && Clock::now() < deadline) {
    Progress progress("exact placement", options.time_limit_s, start);
    SearchBudget budget{deadline, options.node_limit, 0, &progress, res.placement.arena_bytes,
                        res.proved_lower_bound};
    ExactSearch forward(r, &budget);
    // The mirror image in time has the same placements.
    std::vector<BufferRequest> mirrored = r;
    int last = 0;
    for (const BufferRequest& b : r) last = std::max(last, b.last_step);
    for (BufferRequest& b : mirrored) {
      const int first = last - b.last_step;
      b.last_step = last - b.first_step;
      b.first_step = first;
    }
    ExactSearch backward(mirrored, &budget);
    // One decision query: is there a placement with arena <= bound?
    auto probe = [&](int64_t bound) {
      budget.best = res.placement.arena_bytes;
      budget.bound = res.proved_lower_bound;
      auto [outcome, search] = SolveWithRestarts(&forward, &backward, bound);
      switch (outcome) {
        case ExactSearch::Outcome::kFound: {
          std::vector<int64_t> offsets = search->Offsets();
          const int64_t arena = ArenaOf(r, offsets);
          SP_CHECK(arena <= bound);
          if (arena < res.placement.arena_bytes) {
            res.placement.offsets = std::move(offsets);
            res.placement.arena_bytes = arena;
            res.method = "exact";
            if (res.seconds_to_fit < 0 && fits()) res.seconds_to_fit = elapsed();
          }
          break;
        }
        case ExactSearch::Outcome::kExhausted:
          res.proved_lower_bound = std::max(res.proved_lower_bound, bound + 1);
          break;
        case ExactSearch::Outcome::kStopped:
          res.hit_limit = true;
          break;
      }
    };
    auto run = [&]() {
      // 1. The capacity, when the incumbent does not fit it.
      if (!fits() && *options.capacity >= res.proved_lower_bound) probe(*options.capacity);
      // 2. The live-bytes bound (often reachable: then the placement is optimal).
      if (!res.hit_limit && !done()) probe(res.proved_lower_bound);
      // 3. Bisection between the proved bound and the best arena.
      while (!res.hit_limit && !done())
        probe(res.proved_lower_bound +
              (res.placement.arena_bytes - 1 - res.proved_lower_bound) / 2);
    };
    RunWithStack(static_cast<size_t>(forward.MaxDepth()) * 2048 + (size_t{8} << 20), run);
    res.nodes = budget.nodes;
    progress.Finish(static_cast<double>(res.placement.arena_bytes), static_cast<double>(res.proved_lower_bound));
  }
  CheckPlacement(r, res.placement);
  res.proved_optimal = res.placement.arena_bytes <= res.proved_lower_bound;
  if (res.proved_optimal) res.proved_lower_bound = res.placement.arena_bytes;
  res.fits_capacity = fits();
  res.seconds = elapsed();
  return res;
}

}  // namespace

int64_t LiveBytesLowerBound(const std::vector<BufferRequest>& r) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, +bytes at first / -bytes after last)
  int64_t bound = 0;
  for (const auto& b : r) {
    bound = std::max(bound, b.bytes);  // counted in the arena even if it is never live
    if (!Occupies(b)) continue;
    events.emplace_back(b.first_step, b.bytes);
    events.emplace_back(int64_t{b.last_step} + 1, -b.bytes);
    if (b.fixed_offset) bound = std::max(bound, *b.fixed_offset + b.bytes);
  }
  std::sort(events.begin(), events.end());  // at equal steps, frees (negative) come first
  __int128 live = 0, most = bound;
  for (const auto& [step, delta] : events) {
    live += delta;
    most = std::max(most, live);
  }
  return static_cast<int64_t>(std::min<__int128>(most, std::numeric_limits<int64_t>::max()));
}

OptimalResult PlaceOptimal(const std::vector<BufferRequest>& r, const OptimalOptions& options) {
  const auto start = Clock::now();
  return Solve(r, options, PlaceGreedyByConflicts(r), "greedy-by-conflicts", start);
}

OptimalResult PlaceBestOf(const std::vector<BufferRequest>& r, const OptimalOptions& options) {
  const auto start = Clock::now();
  // With a time limit the portfolio stops at the deadline too; the first order always runs to the
  // end, so that a complete placement comes back.
  internal::Deadline deadline;
  if (options.time_limit_s > 0) deadline = DeadlineAfter(start, options.time_limit_s);
  Placement best;
  std::string best_name;
  bool cut = false;
  for (const std::string& name : GreedyOrderNames()) {
    if (!best_name.empty() && deadline && Clock::now() >= *deadline) {
      cut = true;
      break;
    }
    std::optional<Placement> p = GreedyUntil(name, r, best_name.empty() ? std::nullopt : deadline);
    if (!p) {
      cut = true;
      break;
    }
    if (best_name.empty() || p->arena_bytes < best.arena_bytes) {
      best = std::move(*p);
      best_name = name;
    }
  }
  OptimalResult res = Solve(r, options, std::move(best), best_name, start);
  if (cut) res.hit_limit = true;
  return res;
}

}  // namespace sramplan::placement
