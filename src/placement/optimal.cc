#include "placement/optimal.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

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
    kFound,      // a placement with arena <= target was found
    kExhausted,  // no placement with arena <= the final bound exists
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
    // Identical items (same sections, size, alignment) are interchangeable: place them in index order.
    for (int i = 0; i < m; ++i)
      for (int j = i - 1; j >= 0; --j)
        if (items_[j].s == items_[i].s && items_[j].e == items_[i].e &&
            items_[j].size == items_[i].size && items_[j].align == items_[i].align) {
          items_[i].twin_prev = j;
          break;
        }
    starts_at_.assign(num_sections_, {});
    for (int i = 0; i < m; ++i) starts_at_[items_[i].s].push_back(i);
    // Within a start section, longer then larger items first: the candidate order of the search.
    for (auto& list : starts_at_)
      std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
        if (items_[a].e != items_[b].e) return items_[a].e > items_[b].e;
        return items_[a].size > items_[b].size;
      });
    floor_.assign(num_sections_, 0);
    rem_.assign(num_sections_, 0);
    for (const Item& it : items_)
      for (int t = it.s; t <= it.e; ++t) rem_[t] += it.size;
    placed_.assign(m, 0);
    offset_.assign(m, 0);
    nat_.assign(m, 0);
    covers_.assign(num_sections_, {});
    for (int i = 0; i < m; ++i)
      for (int t = items_[i].s; t <= items_[i].e; ++t) covers_[t].push_back(i);
    use_release_bound_ = getenv("SP_RB") != nullptr;
    order_mode_ = getenv("SP_ORDER") ? atoi(getenv("SP_ORDER")) : 0;
  }

  Outcome Run(int64_t bound, int64_t target) {
    bound_ = bound;
    target_ = target;
    stopped_ = false;
    last_level_ = -1;
    last_start_ = -1;
    placed_count_ = 0;
    if (items_.empty()) {
      Record();
      return Outcome::kFound;
    }
    bool found = Dfs();
    if (found) return Outcome::kFound;
    if (stopped_) return Outcome::kStopped;
    return Outcome::kExhausted;
  }

  bool has_solution() const { return has_solution_; }
  int64_t best_arena() const { return best_arena_; }
  int64_t bound() const { return bound_; }
  int64_t nodes() const { return nodes_; }
  // Offsets per request (zero-byte requests at 0).
  std::vector<int64_t> BestOffsets() const {
    std::vector<int64_t> offsets(r_.size(), 0);
    for (size_t i = 0; i < items_.size(); ++i) offsets[items_[i].request] = best_item_offsets_[i];
    return offsets;
  }

 private:
  struct Item {
    int request = 0;
    int s = 0, e = 0;  // first and last section (inclusive)
    int64_t size = 0;
    int64_t align = 1;
    int twin_prev = -1;  // previous identical item, placed before this one
  };

  void Record() {
    int64_t arena = 0;
    for (size_t i = 0; i < items_.size(); ++i) arena = std::max(arena, offset_[i] + items_[i].size);
    if (!has_solution_ || arena < best_arena_) {
      has_solution_ = true;
      best_arena_ = arena;
      best_item_offsets_ = offset_;
    }
  }

  bool OutOfBudget() {
    ++nodes_;
    if (node_limit_ > 0 && nodes_ >= node_limit_) return true;
    if ((nodes_ & 255) == 0 && Clock::now() >= deadline_) return true;
    return false;
  }

  // Returns true when a placement with arena <= target_ has been found (the search stops).
  bool Dfs() {
    if (stopped_) return false;
    if (OutOfBudget()) {
      stopped_ = true;
      return false;
    }
    const int m = static_cast<int>(items_.size());
    if (placed_count_ == m) {
      Record();
      if (best_arena_ <= target_) return true;
      bound_ = best_arena_ - 1;
      return false;
    }
    // Lowest live section (leftmost on ties) and the inference check on every section.
    const int S = num_sections_;
    int64_t x = kInf;
    int left = -1;
    for (int t = 0; t < S; ++t) {
      if (rem_[t] == 0) continue;
      if (floor_[t] + rem_[t] > bound_) return false;
      if (floor_[t] < x) {
        x = floor_[t];
        left = t;
      }
    }
    if (use_release_bound_ && !ReleaseBoundOk()) return false;
    int right = left;
    while (right + 1 < S && rem_[right + 1] > 0 && floor_[right + 1] == x) ++right;
    int64_t raise_to = kInf;
    if (left > 0 && rem_[left - 1] > 0) raise_to = std::min(raise_to, floor_[left - 1]);
    if (right + 1 < S && rem_[right + 1] > 0) raise_to = std::min(raise_to, floor_[right + 1]);

    // Candidates: unplaced items inside the valley [left, right].
    bool raise_ok = raise_to < kInf;
    const size_t first_candidate = candidates_.size();
    for (int t = left; t <= right; ++t)
      for (int i : starts_at_[t]) {
        const Item& it = items_[i];
        if (placed_[i] || it.e > right) continue;
        const int64_t off = AlignUp(x, it.align);
        // Dominance: leaving [x, raise_to) empty is pointless if `it` fits there.
        if (off + it.size <= raise_to) raise_ok = false;
        if (off + it.size > bound_) continue;
        if (x == last_level_ && t <= last_start_) continue;  // placements in (level, start) order
        if (it.twin_prev >= 0 && !placed_[it.twin_prev]) continue;
        candidates_.push_back(i);
      }
    const size_t end_candidate = candidates_.size();
    if (order_mode_ == 1) {
      std::stable_sort(candidates_.begin() + first_candidate, candidates_.begin() + end_candidate,
                       [&](int a, int b) {
                         int la = items_[a].e - items_[a].s, lb = items_[b].e - items_[b].s;
                         if (la != lb) return la > lb;
                         return items_[a].size * (la + 1) > items_[b].size * (lb + 1);
                       });
    } else if (order_mode_ == 2) {
      std::stable_sort(candidates_.begin() + first_candidate, candidates_.begin() + end_candidate,
                       [&](int a, int b) { return items_[a].size > items_[b].size; });
    } else if (order_mode_ == 3) {
      std::stable_sort(candidates_.begin() + first_candidate, candidates_.begin() + end_candidate,
                       [&](int a, int b) {
                         int la = items_[a].e - items_[a].s, lb = items_[b].e - items_[b].s;
                         return items_[a].size * (la + 1) > items_[b].size * (lb + 1);
                       });
    }
    if (placed_count_ > max_placed_) max_placed_ = placed_count_;

    const int64_t saved_level = last_level_;
    const int saved_start = last_start_;
    for (size_t k = first_candidate; k < end_candidate; ++k) {
      const int i = candidates_[k];
      const Item& it = items_[i];
      const int64_t off = AlignUp(x, it.align);
      placed_[i] = 1;
      offset_[i] = off;
      ++placed_count_;
      for (int t = it.s; t <= it.e; ++t) {
        floor_[t] = off + it.size;
        rem_[t] -= it.size;
      }
      last_level_ = x;
      last_start_ = it.s;
      bool done = Dfs();
      for (int t = it.s; t <= it.e; ++t) {
        floor_[t] = x;
        rem_[t] += it.size;
      }
      --placed_count_;
      placed_[i] = 0;
      last_level_ = saved_level;
      last_start_ = saved_start;
      if (done || stopped_) {
        candidates_.resize(first_candidate);
        return done;
      }
    }
    candidates_.resize(first_candidate);

    if (raise_ok && raise_to <= bound_) {
      for (int t = left; t <= right; ++t) floor_[t] = raise_to;
      bool done = Dfs();
      for (int t = left; t <= right; ++t) floor_[t] = x;
      if (done) return true;
    }
    return false;
  }

  // One-machine relaxation per section: the unplaced buffers live in section t must stack above
  // their own floors (max floor over their sections); sorted by that floor, the top of the stack is
  // at least max_j (floor_j + bytes of the buffers whose floor is >= floor_j).
  bool ReleaseBoundOk() {
    const int m = static_cast<int>(items_.size());
    for (int i = 0; i < m; ++i) {
      if (placed_[i]) continue;
      int64_t r = 0;
      for (int t = items_[i].s; t <= items_[i].e; ++t) r = std::max(r, floor_[t]);
      nat_[i] = r;
    }
    for (int t = 0; t < num_sections_; ++t) {
      if (rem_[t] == 0) continue;
      jobs_.clear();
      for (int i : covers_[t])
        if (!placed_[i]) jobs_.emplace_back(nat_[i], items_[i].size);
      std::sort(jobs_.begin(), jobs_.end());
      int64_t sum = 0;
      for (size_t k = jobs_.size(); k-- > 0;) {
        sum += jobs_[k].second;
        if (jobs_[k].first + sum > bound_) return false;
      }
    }
    return true;
  }

  const std::vector<BufferRequest>& r_;
  Clock::time_point deadline_;
  int64_t node_limit_;
  int num_sections_ = 0;
  std::vector<Item> items_;
  std::vector<std::vector<int>> starts_at_;
  std::vector<int64_t> floor_;  // per section: every buffer still to place goes at or above it
  std::vector<int64_t> rem_;    // per section: bytes of the unplaced buffers live there
  std::vector<char> placed_;
  std::vector<int64_t> offset_;
  std::vector<int> candidates_;
  std::vector<int64_t> nat_;
  std::vector<std::vector<int>> covers_;
  std::vector<std::pair<int64_t, int64_t>> jobs_;
  bool use_release_bound_ = false;
  int order_mode_ = 0;
 public:
  int max_placed_ = 0;
 private:
  int placed_count_ = 0;
  int64_t last_level_ = -1;
  int last_start_ = -1;
  int64_t bound_ = 0;
  int64_t target_ = 0;
  bool stopped_ = false;
  int64_t nodes_ = 0;
  bool has_solution_ = false;
  int64_t best_arena_ = 0;
  std::vector<int64_t> best_item_offsets_;
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
  auto finish = [&]() {
    CheckPlacement(r, res.placement);
    res.proved_optimal = res.placement.arena_bytes <= res.proved_lower_bound;
    if (res.proved_optimal) res.proved_lower_bound = res.placement.arena_bytes;
    res.fits_capacity = !options.capacity || res.placement.arena_bytes <= *options.capacity;
    res.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return res;
  };
  const bool any_fixed = std::any_of(r.begin(), r.end(), [](const BufferRequest& b) {
    return b.fixed_offset.has_value();
  });
  if (any_fixed || res.placement.arena_bytes <= res.lower_bound || options.time_limit_s <= 0)
    return finish();

  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                  std::min(options.time_limit_s, 1e7)));
  ExactSearch search(r, deadline, options.node_limit);
  auto adopt = [&]() {
    if (search.has_solution() && search.best_arena() < res.placement.arena_bytes) {
      res.placement.offsets = search.BestOffsets();
      res.placement.arena_bytes = search.best_arena();
      res.method = "exact";
    }
  };
  using Outcome = ExactSearch::Outcome;
  // 1. Fit the capacity first when the incumbent does not.
  if (options.capacity && res.placement.arena_bytes > *options.capacity &&
      *options.capacity >= res.proved_lower_bound) {
    Outcome o = search.Run(*options.capacity, *options.capacity);
    adopt();
    if (o == Outcome::kExhausted) res.proved_lower_bound = *options.capacity + 1;
    if (o == Outcome::kStopped) res.hit_limit = true;
  }
  // 2. The live-bytes bound itself.
  if (!res.hit_limit && res.placement.arena_bytes > res.proved_lower_bound) {
    const int64_t goal = res.proved_lower_bound;
    Outcome o = search.Run(goal, goal);
    adopt();
    if (o == Outcome::kExhausted) res.proved_lower_bound = goal + 1;
    if (o == Outcome::kStopped) res.hit_limit = true;
  }
  // 3. Branch and bound downward from the best arena.
  if (!res.hit_limit && res.placement.arena_bytes > res.proved_lower_bound) {
    Outcome o = search.Run(res.placement.arena_bytes - 1, res.proved_lower_bound);
    adopt();
    if (o == Outcome::kExhausted) res.proved_lower_bound = res.placement.arena_bytes;
    if (o == Outcome::kStopped) res.hit_limit = true;
  }
  res.nodes = search.nodes();
  if (getenv("SP_DEBUG")) fprintf(stderr, "max placed %d of %zu\n", search.max_placed_, r.size());
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
