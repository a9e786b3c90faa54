// The greedy orders of the placement portfolio (optimal.h): first-fit in an order by size, area,
// lifetime, conflicts or start, or TFLite Micro's greedy planner.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "placement/internal.h"
#include "placement/optimal.h"

namespace sramplan::placement {
namespace {

using internal::GreedyUntil;
using internal::Occupies;

// ---------------------------------------------------------------------------------------------
// Greedy placement in a given order: each buffer at the lowest aligned offset that fits among the
// already placed buffers overlapping it in time (buffers with a fixed offset are placed first).

// Stops early (nullopt) when `deadline` passes (checked every 64 buffers).
std::optional<Placement> PlaceFirstFit(const std::vector<BufferRequest>& r, const std::vector<int>& order,
                                       internal::Deadline deadline) {
  const size_t n = r.size();
  std::vector<int64_t> offsets(n, 0);
  std::vector<char> placed(n, 0);
  internal::FirstFitIndex free_space(r);  // holds the placed buffers that occupy space
  for (size_t i = 0; i < n; ++i)
    if (r[i].fixed_offset) {
      offsets[i] = *r[i].fixed_offset;
      placed[i] = 1;
      if (Occupies(r[i])) free_space.Insert(r[i].first_step, r[i].last_step, offsets[i], offsets[i] + r[i].bytes);
    }
  size_t count = 0;
  for (int i : order) {
    if (deadline && (++count & 63) == 0 && std::chrono::steady_clock::now() >= *deadline) return std::nullopt;
    if (placed[i]) continue;
    placed[i] = 1;
    if (!Occupies(r[i])) continue;  // offset 0
    // The lowest offset where it fits among the placed buffers live alongside (the first gap of a
    // scan of them by offset).
    offsets[i] = free_space.LowestFit(r[i].first_step, r[i].last_step, r[i].bytes, std::max<int64_t>(1, r[i].alignment));
    free_space.Insert(r[i].first_step, r[i].last_step, offsets[i], offsets[i] + r[i].bytes);
  }
  Placement p;
  p.arena_bytes = internal::ArenaOf(r, offsets);
  p.offsets = std::move(offsets);
  return p;
}

// Number of other buffers each buffer overlaps in time (OverlapInTime), counted in O(n log n):
// j overlaps i iff first_j <= last_i and last_j >= first_i. Requests are added by first_step to a
// Fenwick tree over last_step values, and each i counts, when the requests with first <= last_i
// are in, those with last >= first_i.
std::vector<int64_t> ConflictDegrees(const std::vector<BufferRequest>& r) {
  const int n = static_cast<int>(r.size());
  std::vector<int64_t> degree(n, 0);
  std::vector<int> lasts(n);
  for (int i = 0; i < n; ++i) lasts[i] = r[i].last_step;
  std::sort(lasts.begin(), lasts.end());
  lasts.erase(std::unique(lasts.begin(), lasts.end()), lasts.end());
  const int m = static_cast<int>(lasts.size());
  std::vector<int64_t> tree(m + 1, 0);  // Fenwick tree: count per last_step rank
  auto add = [&](int rank) {
    for (int k = rank + 1; k <= m; k += k & -k) ++tree[k];
  };
  auto count_below = [&](int rank) {  // added requests with last_step rank < `rank`
    int64_t c = 0;
    for (int k = rank; k > 0; k -= k & -k) c += tree[k];
    return c;
  };
  std::vector<int> by_first(n), by_last(n);
  std::iota(by_first.begin(), by_first.end(), 0);
  std::iota(by_last.begin(), by_last.end(), 0);
  std::sort(by_first.begin(), by_first.end(), [&](int a, int b) { return r[a].first_step < r[b].first_step; });
  std::sort(by_last.begin(), by_last.end(), [&](int a, int b) { return r[a].last_step < r[b].last_step; });
  int added = 0;
  for (int i : by_last) {
    while (added < n && r[by_first[added]].first_step <= r[i].last_step) {
      add(static_cast<int>(std::lower_bound(lasts.begin(), lasts.end(), r[by_first[added]].last_step) -
                           lasts.begin()));
      ++added;
    }
    const int rank = static_cast<int>(std::lower_bound(lasts.begin(), lasts.end(), r[i].first_step) - lasts.begin());
    degree[i] = added - count_below(rank);
    if (r[i].first_step <= r[i].last_step) --degree[i];  // i itself
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

}  // namespace

// The greedy order `name` of GreedyOrderNames() (checked), given up (nullopt) at `deadline`.
std::optional<Placement> internal::GreedyUntil(const std::string& name, const std::vector<BufferRequest>& r,
                                               Deadline deadline) {
  if (name == "greedy-by-size")
    return PlaceFirstFit(
        r, OrderBy(r, [&](int i) { return std::make_pair(r[i].bytes, Steps(r[i])); }), deadline);
  if (name == "greedy-by-area")
    return PlaceFirstFit(r, OrderBy(r, [&](int i) {
                           return std::make_pair(static_cast<__int128>(r[i].bytes) * Steps(r[i]),
                                                 r[i].bytes);
                         }), deadline);
  if (name == "greedy-by-lifetime")
    return PlaceFirstFit(
        r, OrderBy(r, [&](int i) { return std::make_pair(Steps(r[i]), r[i].bytes); }), deadline);
  if (name == "greedy-by-conflicts") {
    std::vector<int64_t> degree = ConflictDegrees(r);
    return PlaceFirstFit(r, OrderBy(r, [&](int i) {
                           return std::make_pair(static_cast<__int128>(r[i].bytes) * (degree[i] + 1),
                                                 r[i].bytes);
                         }), deadline);
  }
  if (name == "greedy-by-start")
    return PlaceFirstFit(r, OrderBy(r, [&](int i) {
                           return std::make_pair(-int64_t{r[i].first_step}, r[i].bytes);
                         }), deadline);
  SP_CHECK_MSG(name == "tflm", "unknown greedy order");
  return PlaceTflmGreedyUntil(r, deadline);
}

Placement PlaceGreedyByConflicts(const std::vector<BufferRequest>& r) {
  return *GreedyUntil("greedy-by-conflicts", r, std::nullopt);
}

const std::vector<std::string>& GreedyOrderNames() {
  static const std::vector<std::string> kNames = {"greedy-by-size",     "greedy-by-area",
                                                  "greedy-by-lifetime", "greedy-by-conflicts",
                                                  "greedy-by-start",    "tflm"};
  return kNames;
}

StatusOr<Placement> PlaceGreedyByName(const std::string& name,
                                      const std::vector<BufferRequest>& r) {
  const auto& names = GreedyOrderNames();
  if (std::find(names.begin(), names.end(), name) == names.end())
    return InvalidArgument("unknown greedy placement '" + name + "'");
  return *GreedyUntil(name, r, std::nullopt);
}

}  // namespace sramplan::placement
