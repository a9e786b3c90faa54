#include "placement/placement.h"

#include <algorithm>
#include <numeric>

#include "placement/internal.h"
#include "support/int_math.h"

namespace sramplan::placement {
namespace {

struct Placed {
  int index;
  int64_t offset;
  int64_t end;
};

// First offset >= lo, aligned, such that [offset, offset+bytes) avoids every interval in `busy`
// (sorted by offset). If `best_fit`, picks the smallest gap that fits instead of the first.
int64_t FindOffset(const std::vector<Placed>& busy, int64_t bytes, int64_t alignment, bool best_fit) {
  int64_t cursor = 0;
  int64_t best = -1, best_gap = 0;
  for (const Placed& p : busy) {
    int64_t candidate = AlignUp(cursor, alignment);
    if (p.offset >= candidate + bytes) {
      if (!best_fit) return candidate;
      int64_t gap = p.offset - candidate;
      if (best < 0 || gap < best_gap) {
        best = candidate;
        best_gap = gap;
      }
    }
    cursor = std::max(cursor, p.end);
  }
  if (best >= 0) return best;
  return AlignUp(cursor, alignment);
}

Placement Finish(const std::vector<BufferRequest>& r, std::vector<int64_t> offsets) {
  Placement p;
  p.offsets = std::move(offsets);
  for (size_t i = 0; i < r.size(); ++i) p.arena_bytes = std::max(p.arena_bytes, p.offsets[i] + r[i].bytes);
  return p;
}

// Places requests in `order`, each by FindOffset among already-placed time-overlapping buffers.
// Gives up (nullopt) once `deadline` has passed (checked every 64 buffers).
std::optional<Placement> PlaceInOrder(const std::vector<BufferRequest>& r, const std::vector<int>& order,
                                      bool best_fit, internal::Deadline deadline = std::nullopt) {
  std::vector<int64_t> offsets(r.size(), 0);
  std::vector<bool> placed(r.size(), false);
  internal::PlacedTimeIndex index(r);
  // Fixed offsets first.
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i].fixed_offset) {
      offsets[i] = *r[i].fixed_offset;
      placed[i] = true;
      index.MarkPlaced(static_cast<int>(i));
    }
  // First fit (the lowest offset that fits) does not depend on the order of the scan, so the
  // index of free space answers it when every request has bytes and a proper live range.
  const bool fast = !best_fit && std::all_of(r.begin(), r.end(), [](const BufferRequest& b) {
    return b.bytes > 0 && b.first_step <= b.last_step;
  });
  std::optional<internal::FirstFitIndex> free_space;
  if (fast) {
    free_space.emplace(r);
    for (size_t i = 0; i < r.size(); ++i)
      if (placed[i]) free_space->Insert(r[i].first_step, r[i].last_step, offsets[i], offsets[i] + r[i].bytes);
  }
  std::vector<Placed> busy;
  size_t count = 0;
  for (int i : order) {
    if (deadline && (++count & 63) == 0 && std::chrono::steady_clock::now() >= *deadline) return std::nullopt;
    if (placed[i]) continue;
    if (fast) {
      offsets[i] = free_space->LowestFit(r[i].first_step, r[i].last_step, r[i].bytes, r[i].alignment);
      free_space->Insert(r[i].first_step, r[i].last_step, offsets[i], offsets[i] + r[i].bytes);
      placed[i] = true;
      continue;
    }
    // The placed buffers overlapping i in time, by offset (ties: index).
    busy.clear();
    index.ForEachPlacedOverlapping(r[i].first_step, r[i].last_step,
                                   [&](int j) { busy.push_back({j, offsets[j], offsets[j] + r[j].bytes}); });
    std::sort(busy.begin(), busy.end(), [](const Placed& a, const Placed& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.index < b.index;
    });
    offsets[i] = FindOffset(busy, r[i].bytes, r[i].alignment, best_fit);
    placed[i] = true;
    index.MarkPlaced(i);
  }
  return Finish(r, std::move(offsets));
}

}  // namespace

Placement PlaceNaive(const std::vector<BufferRequest>& r) {
  std::vector<int64_t> offsets(r.size(), 0);
  int64_t cursor = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].fixed_offset) {
      offsets[i] = *r[i].fixed_offset;
      continue;
    }
    cursor = AlignUp(cursor, r[i].alignment);
    offsets[i] = cursor;
    cursor += r[i].bytes;
  }
  return Finish(r, std::move(offsets));
}

Placement PlaceLinear(const std::vector<BufferRequest>& r) {
  std::vector<int> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return r[a].first_step < r[b].first_step; });
  return *PlaceInOrder(r, order, /*best_fit=*/true);
}

Placement PlaceTflmGreedy(const std::vector<BufferRequest>& r) { return *internal::PlaceTflmGreedyUntil(r, std::nullopt); }

std::optional<Placement> internal::PlaceTflmGreedyUntil(const std::vector<BufferRequest>& r, Deadline deadline) {
  // Largest first; among equal sizes the buffer added LAST comes first. TFLM fills its sort array
  // from the tail (buffer 0 ends up last) and its ReverseSortInPlace is a stable bubble sort that
  // swaps only strictly smaller neighbours, so equal sizes stay in reverse order of addition.
  std::vector<int> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (r[a].bytes != r[b].bytes) return r[a].bytes > r[b].bytes;
    return a > b;
  });
  return PlaceInOrder(r, order, /*best_fit=*/false, deadline);
}

const std::vector<std::string>& PlacementNames() {
  static const std::vector<std::string> kNames = {"naive", "linear", "tflm"};
  return kNames;
}

StatusOr<Placement> PlaceByName(const std::string& name, const std::vector<BufferRequest>& requests) {
  if (name == "naive") return PlaceNaive(requests);
  if (name == "linear") return PlaceLinear(requests);
  if (name == "tflm") return PlaceTflmGreedy(requests);
  return InvalidArgument("unknown placement algorithm '" + name + "'");
}

}  // namespace sramplan::placement
