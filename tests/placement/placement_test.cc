#include "placement/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace sramplan::placement {
namespace {

std::vector<BufferRequest> Requests(std::initializer_list<std::tuple<int64_t, int, int>> list) {
  std::vector<BufferRequest> r;
  for (auto [bytes, first, last] : list) r.push_back({static_cast<int>(r.size()), bytes, 1, first, last, {}});
  return r;
}

// Independent check: no two time-overlapping requests share a byte; offsets aligned.
void ExpectValid(const std::vector<BufferRequest>& r, const Placement& p) {
  ASSERT_EQ(p.offsets.size(), r.size());
  int64_t arena = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % r[i].alignment, 0) << i;
    arena = std::max(arena, p.offsets[i] + r[i].bytes);
    for (size_t j = i + 1; j < r.size(); ++j) {
      if (!OverlapInTime(r[i], r[j])) continue;
      bool space = p.offsets[i] < p.offsets[j] + r[j].bytes && p.offsets[j] < p.offsets[i] + r[i].bytes;
      EXPECT_FALSE(space) << "requests " << i << " and " << j << " overlap";
    }
  }
  EXPECT_EQ(arena, p.arena_bytes);
}

TEST(TflmGreedy, GoldenCaseFromTflm) {
  // TFLM's GreedyMemoryPlanner on (bytes, first, last) = (10,0,1), (20,1,2), (30,2,3), (40,3,4),
  // (50,0,1): largest first -> 50@0, 40@0 (no time overlap with 50), 30: overlaps 40 -> @40,
  // 20 [1,2]: overlaps 50 [0,50) and 30 [40,70) -> @70, 10 [0,1]: overlaps 50 and 20@70 -> gap
  // [50,70) fits -> @50. Arena 90.
  auto r = Requests({{10, 0, 1}, {20, 1, 2}, {30, 2, 3}, {40, 3, 4}, {50, 0, 1}});
  Placement p = PlaceTflmGreedy(r);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{50, 70, 40, 0, 0}));
  EXPECT_EQ(p.arena_bytes, 90);
  ExpectValid(r, p);
}

TEST(TflmGreedy, EqualSizesLastAddedGoesFirst) {
  // TFLM fills its sort array from the tail, so of two equal buffers alive together the one added
  // last goes to offset 0.
  auto r = Requests({{16, 0, 1}, {16, 0, 1}});
  Placement p = PlaceTflmGreedy(r);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{16, 0}));
}

TEST(TflmGreedy, IssueTwentySmallestCases) {
  // Issue 20, lines `bytes first last` in order of addition, as real TFLM places them.
  // `16 1 2`, `16 0 3`: TFLM places them at 16, 0.
  auto a = Requests({{16, 1, 2}, {16, 0, 3}});
  Placement pa = PlaceTflmGreedy(a);
  EXPECT_EQ(pa.offsets, (std::vector<int64_t>{16, 0}));
  EXPECT_EQ(pa.arena_bytes, 32);
  // `32 0 0`, `48 0 0`, `64 1 1`, `32 0 1`: 64@0, 48@0, then the later 32 [0,1] above both at 64,
  // then the first 32 [0,0] finds [48,64) too small and goes to 96: arena 128 (the old tie order,
  // first added first, gave 112).
  auto b = Requests({{32, 0, 0}, {48, 0, 0}, {64, 1, 1}, {32, 0, 1}});
  Placement pb = PlaceTflmGreedy(b);
  EXPECT_EQ(pb.offsets, (std::vector<int64_t>{96, 0, 0, 64}));
  EXPECT_EQ(pb.arena_bytes, 128);
  ExpectValid(b, pb);
}

TEST(TflmGreedy, MoreCasesFromTflmsTests) {
  // TFLM's TestGreedyBasics: (10,0,1), (20,2,3) -> both at 0, arena 20.
  auto basics = Requests({{10, 0, 1}, {20, 2, 3}});
  EXPECT_EQ(PlaceTflmGreedy(basics).offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(PlaceTflmGreedy(basics).arena_bytes, 20);
  // TFLM's TestOverlapCase: (100,0,1), (50,2,3), (20,1,2) -> arena 120.
  auto overlap = Requests({{100, 0, 1}, {50, 2, 3}, {20, 1, 2}});
  Placement p = PlaceTflmGreedy(overlap);
  EXPECT_EQ(p.arena_bytes, 120);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 0, 100}));
  ExpectValid(overlap, p);
}

TEST(Naive, EveryBufferItsOwnRegion) {
  auto r = Requests({{10, 0, 0}, {7, 1, 1}, {5, 2, 2}});
  for (auto& x : r) x.alignment = 8;
  Placement p = PlaceNaive(r);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 16, 24}));
  EXPECT_EQ(p.arena_bytes, 29);
}

TEST(Linear, BestFitIntoFreedGap) {
  // A [0,1] 100 B at 0, B [0,3] 20 B at 100, C [2,3] 60 B: A is dead by step 2, so C reuses [0,100);
  // D [2,3] 30 B: the gap [60,100) (40 B) is the best fit.
  auto r = Requests({{100, 0, 1}, {20, 0, 3}, {60, 2, 3}, {30, 2, 3}});
  Placement p = PlaceLinear(r);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 100, 0, 60}));
  EXPECT_EQ(p.arena_bytes, 120);
  ExpectValid(r, p);
}

TEST(Placement, RandomRequestsAlwaysValid) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> r;
    int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      int a = static_cast<int>(rng() % 40), b = a + static_cast<int>(rng() % 10);
      r.push_back({i, 1 + static_cast<int64_t>(rng() % 5000), int64_t{1} << (rng() % 5), a, b, {}});
    }
    for (const auto& name : PlacementNames()) {
      auto p = PlaceByName(name, r);
      ASSERT_TRUE(p.ok());
      ExpectValid(r, *p);
      // Never below the lower bound (max live bytes).
      int64_t lb = 0;
      for (int s = 0; s < 50; ++s) {
        int64_t live = 0;
        for (const auto& x : r)
          if (x.first_step <= s && s <= x.last_step) live += x.bytes;
        lb = std::max(lb, live);
      }
      EXPECT_GE(p->arena_bytes, lb) << name;
    }
  }
}

TEST(Placement, UnknownNameIsAnError) {
  EXPECT_FALSE(PlaceByName("magic", {}).ok());
}


// The TFLM rule written as the plain scan (every placed buffer looked at, sorted by offset), to
// check that the placement's free-space index gives the same offsets on random instances: sizes
// with and without alignment, zero-byte buffers, fixed offsets and live ranges from one step to
// most of the run.
std::vector<int64_t> ReferenceTflm(const std::vector<BufferRequest>& r) {
  // As TFLM's CalculateOffsetsIfNeeded: the sort array filled from the tail, then its bubble sort
  // (ReverseSortInPlace: swap neighbours while the left one is strictly smaller).
  const int n = static_cast<int>(r.size());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[n - 1 - i] = i;
  for (bool swapped = true; swapped;) {
    swapped = false;
    for (int i = 1; i < n; ++i)
      if (r[order[i - 1]].bytes < r[order[i]].bytes) {
        std::swap(order[i - 1], order[i]);
        swapped = true;
      }
  }
  std::vector<int64_t> offsets(r.size(), 0);
  std::vector<bool> placed(r.size(), false);
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i].fixed_offset) {
      offsets[i] = *r[i].fixed_offset;
      placed[i] = true;
    }
  for (int i : order) {
    if (placed[i]) continue;
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j = 0; j < r.size(); ++j)
      if (placed[j] && OverlapInTime(r[i], r[j])) busy.push_back({offsets[j], offsets[j] + r[j].bytes});
    std::sort(busy.begin(), busy.end());
    const int64_t a = std::max<int64_t>(1, r[i].alignment);
    auto align = [&](int64_t v) { return (v + a - 1) / a * a; };
    int64_t cursor = 0, offset = -1;
    for (auto [lo, hi] : busy) {
      if (align(cursor) + r[i].bytes <= lo) {
        offset = align(cursor);
        break;
      }
      cursor = std::max(cursor, hi);
    }
    offsets[i] = offset >= 0 ? offset : align(cursor);
    placed[i] = true;
  }
  return offsets;
}

TEST(TflmGreedy, SameOffsetsAsThePlainScan) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 120), steps = 1 + static_cast<int>(rng() % 60);
    std::vector<BufferRequest> r;
    for (int i = 0; i < n; ++i) {
      BufferRequest b;
      b.id = i;
      b.bytes = trial % 7 == 0 && rng() % 10 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 6) * 16 + (trial % 2 ? rng() % 16 : 0);
      b.alignment = trial % 3 == 0 ? 8 : 1;
      b.first_step = static_cast<int>(rng() % steps);
      b.last_step = rng() % 4 == 0 ? steps - 1 : std::min(steps - 1, b.first_step + static_cast<int>(rng() % 5));
      if (trial % 5 == 0 && rng() % 8 == 0) b.fixed_offset = static_cast<int64_t>(rng() % 8) * 32;
      r.push_back(b);
    }
    Placement p = PlaceTflmGreedy(r);
    ASSERT_EQ(p.offsets, ReferenceTflm(r)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace sramplan::placement
