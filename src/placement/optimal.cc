#include "placement/optimal.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <tuple>

#include "support/int_math.h"

namespace sramplan::placement {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

int64_t ArenaOf(const std::vector<BufferRequest>& r, const std::vector<int64_t>& offsets) {
  int64_t arena = 0;
  for (size_t i = 0; i < r.size(); ++i) arena = std::max(arena, offsets[i] + r[i].bytes);
  return arena;
}

// ---------------------------------------------------------------------------------------------
// Greedy placement in a given order: each buffer at the lowest aligned offset that fits among the
// already placed buffers overlapping it in time (buffers with a fixed offset are placed first).

Placement PlaceFirstFit(const std::vector<BufferRequest>& r, const std::vector<int>& order) {
  const size_t n = r.size();
  std::vector<int64_t> offsets(n, 0);
  std::vector<char> placed(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (r[i].fixed_offset) {
      offsets[i] = *r[i].fixed_offset;
      placed[i] = 1;
    }
  std::vector<std::pair<int64_t, int64_t>> busy;  // (offset, end)
  for (int i : order) {
    if (placed[i]) continue;
    busy.clear();
    for (size_t j = 0; j < n; ++j)
      if (placed[j] && r[j].bytes > 0 && OverlapInTime(r[i], r[j]))
        busy.emplace_back(offsets[j], offsets[j] + r[j].bytes);
    std::sort(busy.begin(), busy.end());
    const int64_t align = std::max<int64_t>(1, r[i].alignment);
    int64_t cursor = 0;
    int64_t offset = -1;
    for (const auto& [begin, end] : busy) {
      int64_t candidate = AlignUp(cursor, align);
      if (candidate + r[i].bytes <= begin) {
        offset = candidate;
        break;
      }
      cursor = std::max(cursor, end);
    }
    offsets[i] = offset >= 0 ? offset : AlignUp(cursor, align);
    placed[i] = 1;
  }
  Placement p;
  p.arena_bytes = ArenaOf(r, offsets);
  p.offsets = std::move(offsets);
  return p;
}

// Number of other buffers each buffer overlaps in time.
std::vector<int64_t> ConflictDegrees(const std::vector<BufferRequest>& r) {
  std::vector<int64_t> degree(r.size(), 0);
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = i + 1; j < r.size(); ++j)
      if (OverlapInTime(r[i], r[j])) {
        ++degree[i];
        ++degree[j];
      }
  return degree;
}

int64_t Steps(const BufferRequest& b) { return int64_t{b.last_step} - b.first_step + 1; }

// Sorts request indices by `key` descending (keys compared lexicographically), ties by index.
template <typename Key>
std::vector<int> OrderBy(const std::vector<BufferRequest>& r, Key key) {
  std::vector<int> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    auto ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return a < b;
  });
  return order;
}

// ---------------------------------------------------------------------------------------------
// Exact search (see optimal.h for the idea).

class ExactSearch {
 public:
  enum class Outcome {
    kFound,      // a placement with arena <= bound was found
    kExhausted,  // proved: no placement with arena <= bound exists
    kStopped,    // time or node limit
  };

  // `r` must have no fixed offsets. Buffers of zero bytes are placed at offset 0 and ignored.
  ExactSearch(const std::vector<BufferRequest>& r, Clock::time_point deadline, int64_t node_limit)
      : r_(r), deadline_(deadline), node_limit_(node_limit) {
    std::vector<int64_t> bounds;
    for (const auto& b : r)
      if (b.bytes > 0) {
        bounds.push_back(b.first_step);
        bounds.push_back(int64_t{b.last_step} + 1);
      }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    num_sections_ = bounds.empty() ? 0 : static_cast<int>(bounds.size()) - 1;
    auto section = [&](int64_t v) {
      return static_cast<int>(std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin());
    };
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i].bytes <= 0) continue;
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
    // Identical items (same sections, size, alignment) are interchangeable: the lower index goes below.
    for (int i = 0; i < m; ++i)
      for (int j = i - 1; j >= 0; --j)
        if (items_[j].s == items_[i].s && items_[j].e == items_[i].e &&
            items_[j].size == items_[i].size && items_[j].align == items_[i].align) {
          items_[i].twin_prev = j;
          break;
        }
    starts_at_.assign(S, {});
    for (int i = 0; i < m; ++i) starts_at_[items_[i].s].push_back(i);
    covers_.assign(S, {});
    for (int i = 0; i < m; ++i)
      for (int t = items_[i].s; t <= items_[i].e; ++t) covers_[t].push_back(i);
    floor_.assign(S, 0);
    rem_.assign(S, 0);
    cross_.assign(std::max(S, 1), 0);
    for (const Item& it : items_) {
      for (int t = it.s; t <= it.e; ++t) rem_[t] += it.size;
      for (int t = it.s; t < it.e; ++t) ++cross_[t];
    }
    placed_.assign(m, 0);
    offset_.assign(m, 0);
    solution_.assign(m, 0);
    release_.assign(m, 0);
    acc_.assign(S, 0);
    item_key_.resize(m);
    for (int i = 0; i < m; ++i) item_key_[i] = Mix(0x5A17u + static_cast<uint64_t>(i));
    valley_mode_ = getenv("SP_VALLEY") ? atoi(getenv("SP_VALLEY")) : 1;
    order_mode_ = getenv("SP_ORDER") ? atoi(getenv("SP_ORDER")) : 0;
    use_tight_ = getenv("SP_NOTIGHT") == nullptr;
    // Every offset of a compacted placement and every floor is a multiple of this.
    granularity_ = 0;
    for (const Item& it : items_) {
      granularity_ = std::gcd(granularity_, it.size);
      if (it.align > 1) granularity_ = std::gcd(granularity_, it.align);
    }
    granularity_ = std::max<int64_t>(1, granularity_);
    rand_mode_ = getenv("SP_RAND") ? atoi(getenv("SP_RAND")) : 0;
    use_cache_ = getenv("SP_NOCACHE") == nullptr;
  }

  // Decision: is there a placement with arena <= bound? Failures remembered from an earlier call
  // with a bound >= this one stay valid; a larger bound clears them.
  Outcome Solve(int64_t bound, int64_t budget = 0, uint64_t seed = 0, int valley = -1, int order = -1) {
    if (valley >= 0) valley_mode_ = valley;
    if (order >= 0) order_mode_ = order;
    seed_ = seed;
    rng_ = Mix(seed * 7919 + 1);
    budget_end_ = budget > 0 ? nodes_ + budget : 0;
    if (use_cache_ && (cache_.empty() || bound > cache_bound_)) {
      if (cache_.empty()) cache_.resize(size_t{1} << 20);
      std::fill(cache_.begin(), cache_.end(), CacheEntry{});
    }
    cache_bound_ = bound;
    bound_ = bound;
    stopped_ = false;
    if (items_.empty()) return Outcome::kFound;
    bool found = SolveRange(0, num_sections_ - 1);
    if (found) return Outcome::kFound;
    return stopped_ ? Outcome::kStopped : Outcome::kExhausted;
  }

  int64_t nodes() const { return nodes_; }
  bool limit_hit() const {
    return (node_limit_ > 0 && nodes_ >= node_limit_) || Clock::now() >= deadline_;
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
    int twin_prev = -1;  // previous identical item: it goes below this one
  };
  struct CacheEntry {
    uint64_t h1 = 0, h2 = 0;
  };

  static uint64_t Mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  bool OutOfBudget() {
    ++nodes_;
    if (node_limit_ > 0 && nodes_ >= node_limit_) return true;
    if (budget_end_ > 0 && nodes_ >= budget_end_) return true;
    if ((nodes_ & 255) == 0 && Clock::now() >= deadline_) return true;
    return false;
  }

  bool Live(int t, int a, int b) const { return t >= a && t <= b && rem_[t] > 0; }

  // Places every unplaced item inside sections [a, b] (no unplaced item crosses a or b). The range
  // falls apart into independent parts wherever no unplaced item crosses a section boundary; each
  // part is solved on its own, so a failure in one never re-opens the choices made in another.
  bool SolveRange(int a, int b) {
    if (stopped_) return false;
    size_t first_part = parts_.size();
    for (int t = a; t <= b; ++t) {
      if (rem_[t] == 0) continue;
      int l = t;
      while (t < b && cross_[t] > 0) ++t;
      parts_.push_back({l, t});
    }
    size_t end_part = parts_.size();
    bool ok = true;
    if (end_part - first_part == 1) {
      ok = Branch(parts_[first_part].first, parts_[first_part].second);
    } else {
      // Most constrained part first.
      std::sort(parts_.begin() + first_part, parts_.begin() + end_part, [&](auto p, auto q) {
        int64_t sp = Slack(p.first, p.second), sq = Slack(q.first, q.second);
        if (sp != sq) return sp < sq;
        return p.first < q.first;
      });
      for (size_t k = first_part; k < end_part && ok; ++k)
        ok = Branch(parts_[k].first, parts_[k].second);
    }
    parts_.resize(first_part);
    if (!ok) return false;
    for (int t = a; t <= b; ++t)
      for (int i : starts_at_[t])
        if (placed_[i] && items_[i].e <= b) solution_[i] = offset_[i];
    return true;
  }

  int64_t Slack(int a, int b) const {
    int64_t slack = kInf;
    for (int t = a; t <= b; ++t)
      if (rem_[t] > 0) slack = std::min(slack, bound_ - floor_[t] - rem_[t]);
    return slack;
  }

  // Lowest offset of unplaced item i: max floor over its sections.
  int64_t Release(int i) const {
    int64_t r = 0;
    for (int t = items_[i].s; t <= items_[i].e; ++t) r = std::max(r, floor_[t]);
    return AlignUp(r, items_[i].align);
  }

  // One connected range [a, b]: every section live, every boundary crossed by an unplaced item.
  bool Branch(int a, int b) {
    if (stopped_) return false;
    if (OutOfBudget()) {
      stopped_ = true;
      return false;
    }
    // A single item: it goes on its floor.
    if (cross_[a] == 0 || a == b) {
      int single = -1, count = 0;
      for (int i : covers_[a])
        if (!placed_[i]) {
          single = i;
          ++count;
        }
      if (count == 1 && items_[single].s == a && items_[single].e == b) {
        const int64_t off = Release(single);
        if (off + items_[single].size > bound_) return false;
        solution_[single] = off;
        return true;
      }
    }
    // Inference: per section, the unplaced items must stack between the floor and the bound,
    // each no lower than its own release (the max floor over its sections).
    for (int t = a; t <= b; ++t)
      if (floor_[t] + rem_[t] > bound_) return false;
    order_.clear();
    for (int t = a; t <= b; ++t)
      for (int i : starts_at_[t])
        if (!placed_[i]) {
          release_[i] = Release(i);
          order_.push_back(i);
        }
    // Items by decreasing release; acc_[t] = bytes of the items seen so far that are live in t.
    std::sort(order_.begin(), order_.end(), [&](int p, int q) { return release_[p] > release_[q]; });
    for (int t = a; t <= b; ++t) acc_[t] = 0;
    for (int i : order_) {
      const Item& it = items_[i];
      const int64_t limit = bound_ - release_[i] - it.size;
      for (int t = it.s; t <= it.e; ++t) {
        if (acc_[t] > limit) return false;
        acc_[t] += it.size;
      }
    }
    // Failures already proved for this very sub-problem (same unplaced items, same floors).
    uint64_t h1 = Mix(static_cast<uint64_t>(a) << 32 | static_cast<uint64_t>(b)), h2 = ~h1;
    if (use_cache_) {
      for (int t = a; t <= b; ++t) {
        h1 ^= Mix(static_cast<uint64_t>(t) * 0x100000001B3ull + static_cast<uint64_t>(floor_[t]));
        h2 += Mix(static_cast<uint64_t>(floor_[t]) * 0xC2B2AE3D27D4EB4Full + t + 1);
        for (int i : starts_at_[t])
          if (!placed_[i]) {
            h1 ^= item_key_[i];
            h2 += item_key_[i] * 0x2545F4914F6CDD1Dull;
          }
      }
      if (CacheHas(h1, h2)) return false;
    }
    bool ok = Expand(a, b);
    if (use_cache_ && !ok && !stopped_) CacheAdd(h1, h2);
    return ok;
  }

  bool Expand(int a, int b) {
    auto live_floor = [&](int t) { return Live(t, a, b) ? floor_[t] : kInf; };
    // Pick a valley: a maximal run of sections at one height whose neighbours are higher.
    int left = -1, right = -1;
    int64_t x = kInf;
    {
      int64_t best_score = std::numeric_limits<int64_t>::max();
      for (int t = a; t <= b;) {
        int l = t, rr = t;
        const int64_t h = floor_[t];
        while (rr + 1 <= b && floor_[rr + 1] == h) ++rr;
        t = rr + 1;
        if (live_floor(l - 1) < h || live_floor(rr + 1) < h) continue;
        int64_t score = 0;
        if (valley_mode_ == 1) {
          // First fail: fewest items that fit inside the valley.
          for (int s = l; s <= rr; ++s)
            for (int i : starts_at_[s])
              if (!placed_[i] && items_[i].e <= rr) ++score;
        } else if (valley_mode_ == 2) {
          score = -1;
          for (int s = l; s <= rr; ++s) score = std::min(score, -(floor_[s] + rem_[s]));
        }
        if (seed_ != 0) score = score * 1024 + static_cast<int64_t>(Rand() % 1024);
        if (score < best_score || (score == best_score && h < x)) {
          best_score = score;
          x = h;
          left = l;
          right = rr;
        }
      }
    }
    const int64_t raise_to = std::min(live_floor(left - 1), live_floor(right + 1));

    // Unplaced items inside the valley.
    bool raise_ok = raise_to < kInf;
    const size_t first = candidates_.size();
    for (int t = left; t <= right; ++t)
      for (int i : starts_at_[t]) {
        const Item& it = items_[i];
        if (placed_[i] || it.e > right) continue;
        // Dominance: leaving [x, raise_to) empty is pointless if `it` fits there.
        if (AlignUp(x, it.align) + it.size <= raise_to) raise_ok = false;
        candidates_.push_back(i);
      }
    const size_t end = candidates_.size();
    valley_left_ = left;
    valley_right_ = right;
    left_floor_ = live_floor(left - 1);
    right_floor_ = live_floor(right + 1);
    valley_x_ = x;
    SortCandidates(first, end);

    // A section of the valley that cannot take any waste (slack below the granularity) must be
    // covered at height x: branch on which item covers it (no other choice partitions better).
    if (use_tight_) {
      int tight = -1, tight_count = std::numeric_limits<int>::max();
      for (int t = left; t <= right; ++t) {
        if (bound_ - floor_[t] - rem_[t] >= granularity_) continue;
        int count = 0;
        for (size_t k = first; k < end; ++k) {
          const Item& it = items_[candidates_[k]];
          if (it.s <= t && t <= it.e && AlignUp(x, it.align) + it.size <= bound_ &&
              (it.twin_prev < 0 || placed_[it.twin_prev]))
            ++count;
        }
        if (count < tight_count) {
          tight_count = count;
          tight = t;
        }
      }
      if (tight >= 0) {
        bool ok = false;
        for (size_t k = first; k < end && !ok && !stopped_; ++k) {
          const int i = candidates_[k];
          const Item& it = items_[i];
          const int64_t off = AlignUp(x, it.align);
          if (it.s > tight || it.e < tight || off + it.size > bound_) continue;
          if (it.twin_prev >= 0 && !placed_[it.twin_prev]) continue;
          Place(i, off);
          ok = SolveRange(a, b);
          Unplace(i, x);
        }
        candidates_.resize(first);
        return ok;
      }
    }

    bool ok = false;
    for (size_t k = first; k < end && !ok && !stopped_; ++k) {
      const int i = candidates_[k];
      const Item& it = items_[i];
      const int64_t off = AlignUp(x, it.align);
      if (off + it.size > bound_) continue;
      if (it.twin_prev >= 0 && !placed_[it.twin_prev]) continue;
      // `it` is the leftmost item at height x in the valley: the sections left of it get nothing
      // at x and rise to the lower of their left neighbour and the top of `it`.
      const int64_t left_to = std::min(live_floor(left - 1), off + it.size);
      bool dominated = false;
      for (size_t q = first; q < end && !dominated; ++q) {
        const Item& w = items_[candidates_[q]];
        if (w.e < it.s && AlignUp(x, w.align) + w.size <= left_to) dominated = true;
      }
      if (dominated) continue;
      Place(i, off);
      for (int t = left; t < it.s; ++t) floor_[t] = left_to;
      ok = SolveRange(a, b);
      for (int t = left; t < it.s; ++t) floor_[t] = x;
      Unplace(i, x);
    }
    candidates_.resize(first);
    if (ok) return true;
    if (stopped_) return false;

    if (raise_ok && raise_to <= bound_) {
      for (int t = left; t <= right; ++t) floor_[t] = raise_to;
      ok = SolveRange(a, b);
      for (int t = left; t <= right; ++t) floor_[t] = x;
    }
    return ok;
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

  uint64_t Rand() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }

  void SortCandidates(size_t first, size_t end) {
    SortCandidatesByKey(first, end);
    if (seed_ == 0) return;
    const size_t n = end - first;
    if (rand_mode_ == 0) {
      for (size_t k = n; k > 1; --k) std::swap(candidates_[first + k - 1], candidates_[first + Rand() % k]);
    } else {
      for (size_t k = 0; k + 1 < n; ++k)
        if (Rand() % 4 == 0) std::swap(candidates_[first + k], candidates_[first + k + 1 + Rand() % (n - k - 1)]);
    }
  }

  void SortCandidatesByKey(size_t first, size_t end) {
    auto b = candidates_.begin() + first, e = candidates_.begin() + end;
    auto len = [&](int a) { return int64_t{items_[a].e} - items_[a].s + 1; };
    if (order_mode_ == 0) {
      std::stable_sort(b, e, [&](int a, int c) {
        if (items_[a].s != items_[c].s) return items_[a].s < items_[c].s;
        if (items_[a].e != items_[c].e) return items_[a].e > items_[c].e;
        return items_[a].size > items_[c].size;
      });
    } else if (order_mode_ == 1) {
      std::stable_sort(b, e, [&](int a, int c) {
        if (len(a) != len(c)) return len(a) > len(c);
        return items_[a].size > items_[c].size;
      });
    } else if (order_mode_ == 2) {
      std::stable_sort(b, e, [&](int a, int c) { return items_[a].size > items_[c].size; });
    } else if (order_mode_ == 4) {
      auto key = [&](int a) {
        const Item& it = items_[a];
        int64_t top = AlignUp(valley_x_, it.align) + it.size;
        bool flush = (it.s == valley_left_ && top == left_floor_) ||
                     (it.e == valley_right_ && top == right_floor_);
        return std::make_tuple(it.s != valley_left_, !flush, -len(a), -it.size);
      };
      std::stable_sort(b, e, [&](int a, int c) { return key(a) < key(c); });
    } else if (order_mode_ == 5) {
      auto key = [&](int a) {
        const Item& it = items_[a];
        int64_t top = AlignUp(valley_x_, it.align) + it.size;
        bool flush = (it.s == valley_left_ && top == left_floor_) ||
                     (it.e == valley_right_ && top == right_floor_);
        return std::make_tuple(it.s != valley_left_, -len(a), !flush, -it.size);
      };
      std::stable_sort(b, e, [&](int a, int c) { return key(a) < key(c); });
    } else if (order_mode_ == 3) {
      std::stable_sort(b, e, [&](int a, int c) {
        return items_[a].size * len(a) > items_[c].size * len(c);
      });
    }
  }

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
  Clock::time_point deadline_;
  int64_t node_limit_;
  int num_sections_ = 0;
  std::vector<Item> items_;
  std::vector<std::vector<int>> starts_at_;  // per section: items starting there
  std::vector<std::vector<int>> covers_;     // per section: items live there
  std::vector<int64_t> floor_;  // per section: every unplaced item goes at or above it
  std::vector<int64_t> rem_;    // per section: bytes of the unplaced items live there
  std::vector<int> cross_;      // per boundary t|t+1: unplaced items live on both sides
  std::vector<char> placed_;
  std::vector<int64_t> offset_;
  std::vector<int64_t> solution_;
  std::vector<int64_t> release_;
  std::vector<int64_t> acc_;
  std::vector<int> order_;
  std::vector<int> candidates_;
  std::vector<std::pair<int, int>> parts_;
  std::vector<std::pair<int64_t, int64_t>> jobs_;
  std::vector<uint64_t> item_key_;
  std::vector<CacheEntry> cache_;
  int64_t cache_bound_ = 0;
  bool use_cache_ = true;
  int valley_mode_ = 1;
  int order_mode_ = 0;
  bool use_tight_ = true;
  int64_t granularity_ = 1;
  int valley_left_ = 0, valley_right_ = 0;
  int64_t left_floor_ = 0, right_floor_ = 0, valley_x_ = 0;
  int rand_mode_ = 0;
  uint64_t seed_ = 0, rng_ = 1;
  int64_t budget_end_ = 0;
  int64_t bound_ = 0;
  bool stopped_ = false;
  int64_t nodes_ = 0;
};

// Independent of the search: aborts if the placement is invalid (internal invariant).
void CheckPlacement(const std::vector<BufferRequest>& r, const Placement& p) {
  SP_CHECK(p.offsets.size() == r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    SP_CHECK(p.offsets[i] >= 0);
    SP_CHECK(p.offsets[i] % std::max<int64_t>(1, r[i].alignment) == 0);
    if (r[i].fixed_offset) SP_CHECK(p.offsets[i] == *r[i].fixed_offset);
    for (size_t j = i + 1; j < r.size(); ++j)
      if (r[i].bytes > 0 && r[j].bytes > 0 && OverlapInTime(r[i], r[j]))
        SP_CHECK_MSG(p.offsets[i] + r[i].bytes <= p.offsets[j] ||
                         p.offsets[j] + r[j].bytes <= p.offsets[i],
                     "placement search produced overlapping buffers");
  }
  SP_CHECK(p.arena_bytes == ArenaOf(r, p.offsets));
}

// Runs the exact search from `incumbent`, within the options' limits.
OptimalResult Solve(const std::vector<BufferRequest>& r, const OptimalOptions& options,
                    Placement incumbent, std::string incumbent_method, Clock::time_point start) {
  OptimalResult res;
  res.lower_bound = LiveBytesLowerBound(r);
  res.proved_lower_bound = res.lower_bound;
  res.placement = std::move(incumbent);
  res.method = std::move(incumbent_method);
  auto elapsed = [&]() { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto note_fit = [&]() {
    if (res.seconds_to_fit < 0 && (!options.capacity || res.placement.arena_bytes <= *options.capacity))
      res.seconds_to_fit = elapsed();
  };
  auto satisfied = [&]() {
    return !options.minimize && options.capacity && res.placement.arena_bytes <= *options.capacity;
  };
  note_fit();
  auto finish = [&]() {
    CheckPlacement(r, res.placement);
    res.proved_optimal = res.placement.arena_bytes <= res.proved_lower_bound;
    if (res.proved_optimal) res.proved_lower_bound = res.placement.arena_bytes;
    res.fits_capacity = !options.capacity || res.placement.arena_bytes <= *options.capacity;
    res.seconds = elapsed();
    return res;
  };
  const bool any_fixed = std::any_of(r.begin(), r.end(), [](const BufferRequest& b) {
    return b.fixed_offset.has_value();
  });
  if (any_fixed || res.placement.arena_bytes <= res.lower_bound || options.time_limit_s <= 0 ||
      satisfied())
    return finish();

  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::min(options.time_limit_s, 1e7)));
  ExactSearch search(r, deadline, options.node_limit);
  // One decision query: a placement with arena <= bound?
  auto luby = [](int64_t i) {  // 1 1 2 1 1 2 4 1 1 2 ...
    int64_t size = 1, seq = 0;
    while (size < i + 1) { ++seq; size = 2 * size + 1; }
    while (size - 1 != i) { size = (size - 1) >> 1; --seq; i = i % size; }
    return int64_t{1} << seq;
  };
  const int64_t base = getenv("SP_BASE") ? atoll(getenv("SP_BASE")) : 0;
  auto solve = [&](int64_t bound) {
    if (base == 0) return search.Solve(bound);
    for (int64_t k = 0;; ++k) {
      static const int kConfigs[][2] = {{2, 0}, {2, 5}, {1, 0}, {2, 2}, {1, 5}, {2, 4}};
      const char* rot = getenv("SP_ROT");
      int nrot = rot ? atoi(rot) : 0;
      int valley = nrot ? kConfigs[k % nrot][0] : -1, order = nrot ? kConfigs[k % nrot][1] : -1;
      auto o = search.Solve(bound, base * luby(k), k, valley, order);
      if (o != ExactSearch::Outcome::kStopped || search.limit_hit()) return o;
    }
  };
  auto probe = [&](int64_t bound) {
    switch (solve(bound)) {
      case ExactSearch::Outcome::kFound: {
        std::vector<int64_t> offsets = search.Offsets();
        int64_t arena = ArenaOf(r, offsets);
        SP_CHECK(arena <= bound);
        if (arena < res.placement.arena_bytes) {
          res.placement.offsets = std::move(offsets);
          res.placement.arena_bytes = arena;
          res.method = "exact";
          note_fit();
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
  // 1. Fit the capacity first when the incumbent does not.
  if (options.capacity && res.placement.arena_bytes > *options.capacity &&
      *options.capacity >= res.proved_lower_bound)
    probe(*options.capacity);
  // 2. The live-bytes bound itself (usually reachable).
  if (!res.hit_limit && !satisfied() && res.placement.arena_bytes > res.proved_lower_bound)
    probe(res.proved_lower_bound);
  // 3. Bisection between the proved bound and the best arena.
  while (!res.hit_limit && !satisfied() && res.placement.arena_bytes > res.proved_lower_bound)
    probe(res.proved_lower_bound + (res.placement.arena_bytes - 1 - res.proved_lower_bound) / 2);
  res.nodes = search.nodes();
  return finish();
}

}  // namespace

int64_t LiveBytesLowerBound(const std::vector<BufferRequest>& r) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, +bytes at first / -bytes after last)
  int64_t bound = 0;
  for (const auto& b : r) {
    if (b.bytes <= 0) continue;
    events.emplace_back(b.first_step, b.bytes);
    events.emplace_back(int64_t{b.last_step} + 1, -b.bytes);
    if (b.fixed_offset) bound = std::max(bound, *b.fixed_offset + b.bytes);
  }
  std::sort(events.begin(), events.end());  // at equal steps, frees (negative) come first
  int64_t live = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    bound = std::max(bound, live);
  }
  return bound;
}

Placement PlaceGreedyByConflicts(const std::vector<BufferRequest>& r) {
  std::vector<int64_t> degree = ConflictDegrees(r);
  return PlaceFirstFit(r, OrderBy(r, [&](int i) {
                         return std::make_pair(static_cast<__int128>(r[i].bytes) * (degree[i] + 1), r[i].bytes);
                       }));
}

const std::vector<std::string>& GreedyOrderNames() {
  static const std::vector<std::string> kNames = {"greedy-by-size",      "greedy-by-area",
                                                  "greedy-by-lifetime",  "greedy-by-conflicts",
                                                  "greedy-by-start",     "tflm"};
  return kNames;
}

StatusOr<Placement> PlaceGreedyByName(const std::string& name, const std::vector<BufferRequest>& r) {
  if (name == "greedy-by-size")
    return PlaceFirstFit(r, OrderBy(r, [&](int i) { return std::make_pair(r[i].bytes, Steps(r[i])); }));
  if (name == "greedy-by-area")
    return PlaceFirstFit(
        r, OrderBy(r, [&](int i) { return std::make_pair(static_cast<__int128>(r[i].bytes) * Steps(r[i]), r[i].bytes); }));
  if (name == "greedy-by-lifetime")
    return PlaceFirstFit(r, OrderBy(r, [&](int i) { return std::make_pair(Steps(r[i]), r[i].bytes); }));
  if (name == "greedy-by-conflicts") return PlaceGreedyByConflicts(r);
  if (name == "greedy-by-start")
    return PlaceFirstFit(r, OrderBy(r, [&](int i) {
                           return std::make_pair(-int64_t{r[i].first_step}, r[i].bytes);
                         }));
  if (name == "tflm") return PlaceTflmGreedy(r);
  return InvalidArgument("unknown greedy placement '" + name + "'");
}

OptimalResult PlaceOptimal(const std::vector<BufferRequest>& r, const OptimalOptions& options) {
  const auto start = Clock::now();
  return Solve(r, options, PlaceGreedyByConflicts(r), "greedy-by-conflicts", start);
}

OptimalResult PlaceBestOf(const std::vector<BufferRequest>& r, const OptimalOptions& options) {
  const auto start = Clock::now();
  Placement best;
  std::string best_name;
  for (const std::string& name : GreedyOrderNames()) {
    StatusOr<Placement> p = PlaceGreedyByName(name, r);
    SP_CHECK(p.ok());
    if (best_name.empty() || p->arena_bytes < best.arena_bytes) {
      best = std::move(p).value();
      best_name = name;
    }
  }
  return Solve(r, options, std::move(best), best_name, start);
}

}  // namespace sramplan::placement
