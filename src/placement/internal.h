// Internal to src/placement.
//
// PlacedTimeIndex finds, among the requests placed so far, those that overlap a given
// live range in time, in O((k + 1) log n) for k answers instead of a scan of all n requests (the
// greedy placements ask this once per buffer; a scan made them quadratic in the number of buffers).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "placement/placement.h"
#include "support/int_math.h"

namespace sramplan::placement::internal {

// A wall-clock deadline; nullopt: none.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// PlaceTflmGreedy (placement.h) that gives up (nullopt) once `deadline` has passed.
std::optional<Placement> PlaceTflmGreedyUntil(const std::vector<BufferRequest>& requests, Deadline deadline);

// The greedy order `name` of GreedyOrderNames() (optimal.h; checked), given up (nullopt) at
// `deadline` (greedy_orders.cc).
std::optional<Placement> GreedyUntil(const std::string& name, const std::vector<BufferRequest>& r,
                                     Deadline deadline);

// A request occupies space only with bytes > 0 and first_step <= last_step.
inline bool Occupies(const BufferRequest& b) { return b.bytes > 0 && b.first_step <= b.last_step; }

inline int64_t ArenaOf(const std::vector<BufferRequest>& r, const std::vector<int64_t>& offsets) {
  int64_t arena = 0;
  for (size_t i = 0; i < r.size(); ++i) arena = std::max(arena, offsets[i] + r[i].bytes);
  return arena;
}

class PlacedTimeIndex {
 public:
  // The requests are sorted by first_step once; none is placed yet.
  explicit PlacedTimeIndex(const std::vector<BufferRequest>& r) {
    const int n = static_cast<int>(r.size());
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return r[a].first_step < r[b].first_step; });
    firsts_.resize(n);
    lasts_.resize(n);
    request_.resize(n);
    position_.resize(n);
    for (int k = 0; k < n; ++k) {
      firsts_[k] = r[order[k]].first_step;
      lasts_[k] = r[order[k]].last_step;
      request_[k] = order[k];
      position_[order[k]] = k;
    }
    size_ = 1;
    while (size_ < n) size_ *= 2;
    max_last_.assign(2 * static_cast<size_t>(size_), kNone);
  }

  void MarkPlaced(int request) {
    int node = size_ + position_[request];
    max_last_[node] = lasts_[position_[request]];
    for (node /= 2; node >= 1; node /= 2) max_last_[node] = std::max(max_last_[2 * node], max_last_[2 * node + 1]);
  }

  // Calls f(j) for every placed request j with first_step <= last and last_step >= first (that is,
  // OverlapInTime with a request live over [first, last]), in no particular order.
  template <typename F>
  void ForEachPlacedOverlapping(int first, int last, F&& f) const {
    // Candidates are the prefix of requests starting at or before `last`.
    const int prefix = static_cast<int>(std::upper_bound(firsts_.begin(), firsts_.end(), last) - firsts_.begin());
    if (prefix == 0) return;
    stack_.clear();
    stack_.push_back({1, 0, size_});
    while (!stack_.empty()) {
      const Node nd = stack_.back();
      stack_.pop_back();
      if (nd.lo >= prefix || max_last_[nd.node] < first) continue;
      if (nd.hi - nd.lo == 1) {
        f(request_[nd.lo]);
        continue;
      }
      const int mid = (nd.lo + nd.hi) / 2;
      stack_.push_back({2 * nd.node + 1, mid, nd.hi});
      stack_.push_back({2 * nd.node, nd.lo, mid});
    }
  }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();  // below every int step
  struct Node {
    int node, lo, hi;
  };
  int size_ = 1;
  std::vector<int> firsts_, request_, position_;
  std::vector<int64_t> lasts_;
  std::vector<int64_t> max_last_;  // per tree node: max last_step of the placed requests below it
  mutable std::vector<Node> stack_;
};

// First fit without looking at every placed buffer: the lowest aligned offset x >= 0 such that
// [x, x + bytes) meets none of the placed buffers that overlap [first, last] in time -- the offset
// the classic scan (placed buffers by offset, first gap that fits) finds, in O(log^2 n) per query
// when free space is not fragmented instead of O(k log k) for k buffers live alongside.
//
// A segment tree over the (compressed) steps keeps, per node, the union of the address ranges of
// the buffers whose live range covers the node's span ("full") and of those covering part of it
// ("part"), each as disjoint blocks (touching ranges merged). A query consults `full` on the
// path to its span and `full` + `part` of the nodes covering it, and raises x past the blocking
// block of each until none blocks. Needs bytes > 0 and first_step <= last_step for every query and
// every inserted buffer (a zero-byte buffer, a point, is allowed as an insert).
class FirstFitIndex {
 public:
  explicit FirstFitIndex(const std::vector<BufferRequest>& r) {
    for (const BufferRequest& b : r) {
      steps_.push_back(b.first_step);
      steps_.push_back(b.last_step);
    }
    std::sort(steps_.begin(), steps_.end());
    steps_.erase(std::unique(steps_.begin(), steps_.end()), steps_.end());
    size_ = 1;
    while (size_ < static_cast<int>(steps_.size())) size_ *= 2;
    full_.resize(2 * static_cast<size_t>(size_));
    part_.resize(2 * static_cast<size_t>(size_));
  }

  void Insert(int first, int last, int64_t offset, int64_t end) {
    Insert(1, 0, size_, Rank(first), Rank(last) + 1, offset, end);
  }

  int64_t LowestFit(int first, int last, int64_t bytes, int64_t alignment) {
    sets_.clear();
    Collect(1, 0, size_, Rank(first), Rank(last) + 1);
    int64_t x = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Blocks* blocks : sets_) {
        const int64_t y = NextFree(*blocks, x, bytes, alignment);
        if (y != x) {
          x = y;
          moved = true;
        }
      }
    }
    return x;
  }

 private:
  using Blocks = std::map<int64_t, int64_t>;  // disjoint, non-touching [lo, hi) by lo

  int Rank(int step) const {
    return static_cast<int>(std::lower_bound(steps_.begin(), steps_.end(), step) - steps_.begin());
  }
  static void Add(std::unique_ptr<Blocks>& set, int64_t lo, int64_t hi) {
    if (!set) set = std::make_unique<Blocks>();
    Blocks& m = *set;
    auto it = m.upper_bound(lo);
    if (it != m.begin() && std::prev(it)->second >= lo) --it;
    while (it != m.end() && it->first <= hi) {
      lo = std::min(lo, it->first);
      hi = std::max(hi, it->second);
      it = m.erase(it);
    }
    m.emplace(lo, hi);
  }
  // Node `node` spans ranks [l, r); the buffer spans [a, b).
  void Insert(int node, int l, int r, int a, int b, int64_t lo, int64_t hi) {
    if (b <= l || r <= a) return;
    if (a <= l && r <= b) {
      Add(full_[node], lo, hi);
      return;
    }
    Add(part_[node], lo, hi);
    const int mid = (l + r) / 2;
    Insert(2 * node, l, mid, a, b, lo, hi);
    Insert(2 * node + 1, mid, r, a, b, lo, hi);
  }
  void Collect(int node, int l, int r, int a, int b) {
    if (b <= l || r <= a) return;
    if (full_[node]) sets_.push_back(full_[node].get());
    if (a <= l && r <= b) {
      if (part_[node]) sets_.push_back(part_[node].get());
      return;
    }
    const int mid = (l + r) / 2;
    Collect(2 * node, l, mid, a, b);
    Collect(2 * node + 1, mid, r, a, b);
  }
  // Lowest aligned y >= x with [y, y + bytes) meeting no block (a block [lo, hi) meets it when
  // lo < y + bytes and hi > y; so does a point lo == hi strictly inside).
  static int64_t NextFree(const Blocks& m, int64_t x, int64_t bytes, int64_t alignment) {
    int64_t y = AlignUp(x, alignment);
    while (true) {
      auto it = m.lower_bound(y + bytes);
      if (it == m.begin()) return y;
      --it;  // the highest block starting below y + bytes; those below it end below its start
      if (it->second <= y) return y;
      y = AlignUp(it->second, alignment);
    }
  }

  std::vector<int> steps_;  // distinct first/last steps: time compressed to ranks
  int size_ = 1;
  std::vector<std::unique_ptr<Blocks>> full_, part_;
  std::vector<const Blocks*> sets_;
};

}  // namespace sramplan::placement::internal
