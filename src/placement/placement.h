// Arena placement algorithms. They see buffer requests only, never the graph (as TFLM's
// MicroMemoryPlanner and XLA's HeapAlgorithm).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace sramplan::placement {

struct BufferRequest {
  int id = 0;             // caller's id; results are indexed like the request vector
  int64_t bytes = 0;
  int64_t alignment = 1;  // offset must be a multiple of this
  int first_step = 0;     // inclusive
  int last_step = 0;      // inclusive
  std::optional<int64_t> fixed_offset;
};

struct Placement {
  std::vector<int64_t> offsets;  // one per request, same order
  int64_t arena_bytes = 0;       // max over requests of offset + bytes
};

inline bool OverlapInTime(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Every buffer in its own region, in request order.
Placement PlaceNaive(const std::vector<BufferRequest>& requests);

// A simple arena (not TFLite's ArenaPlanner, which takes the largest tensors first): buffers
// allocated in order of first use (ties: request order); each goes to
// the smallest gap between buffers live at the same time that fits it (best fit), else after the
// highest such buffer.
Placement PlaceLinear(const std::vector<BufferRequest>& requests);

// TensorFlow Lite Micro's GreedyMemoryPlanner, rule for rule:
//  1. order buffers by size, largest first; among equal sizes the buffer added last goes first
//     (TFLM fills its sort array from the tail, then sorts it with a stable bubble sort,
//     ReverseSortInPlace, that swaps only strictly smaller neighbours);
//  2. the first buffer goes at offset 0;
//  3. each next buffer scans the already-placed buffers that overlap it in time, in increasing offset
//     order, and takes the first gap (starting at 0) at least as large as itself; else it goes right
//     after the last of them.
// Sizes are used as given: the 16-byte rounding happens before (in TFLM, in the allocator). Given
// the same buffers in the same order, the offsets are TFLM's (checked on the issue-20 cases in
// tests/placement/placement_test.cc); which buffers and lifetimes TFLM plans for a .tflite model is
// driver/tflm_arena.h's job.
Placement PlaceTflmGreedy(const std::vector<BufferRequest>& requests);

const std::vector<std::string>& PlacementNames();
StatusOr<Placement> PlaceByName(const std::string& name, const std::vector<BufferRequest>& requests);

}  // namespace sramplan::placement
