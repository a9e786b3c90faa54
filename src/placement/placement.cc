#include "placement/placement.h"

#include <algorithm>
#include <numeric>

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

std::vector<Placed> BusyAmong(const std::vector<BufferRequest>& r, const std::vector<int64_t>& offsets,
                              const std::vector<bool>& placed, int i) {
  std::vector<Placed> busy;
  for (size_t j = 0; j < r.size(); ++j)
    if (placed[j] && OverlapInTime(r[i], r[j]))
      busy.push_back({static_cast<int>(j), offsets[j], offsets[j] + r[j].bytes});
  std::sort(busy.begin(), busy.end(), [](const Placed& a, const Placed& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.index < b.index;
  });
  return busy;
}

Placement Finish(const std::vector<BufferRequest>& r, std::vector<int64_t> offsets) {
  Placement p;
  p.offsets = std::move(offsets);
  for (size_t i = 0; i < r.size(); ++i) p.arena_bytes = std::max(p.arena_bytes, p.offsets[i] + r[i].bytes);
  return p;
}

// Places requests in `order`, each by FindOffset among already-placed time-overlapping buffers.
Placement PlaceInOrder(const std::vector<BufferRequest>& r, const std::vector<int>& order, bool best_fit) {
  std::vector<int64_t> offsets(r.size(), 0);
  std::vector<bool> placed(r.size(), false);
  // Fixed offsets first.
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i].fixed_offset) {
      offsets[i] = *r[i].fixed_offset;
      placed[i] = true;
    }
  for (int i : order) {
    if (placed[i]) continue;
    offsets[i] = FindOffset(BusyAmong(r, offsets, placed, i), r[i].bytes, r[i].alignment, best_fit);
    placed[i] = true;
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
  return PlaceInOrder(r, order, /*best_fit=*/true);
}

Placement PlaceTflmGreedy(const std::vector<BufferRequest>& r) {
  // Largest first; equal sizes keep their order of addition (TFLM's ReverseSortInPlace is a stable
  // bubble sort that swaps only strictly smaller neighbours).
  std::vector<int> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (r[a].bytes != r[b].bytes) return r[a].bytes > r[b].bytes;
    return a < b;
  });
  return PlaceInOrder(r, order, /*best_fit=*/false);
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
