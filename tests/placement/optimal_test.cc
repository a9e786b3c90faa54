#include "placement/optimal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "placement/problem_csv.h"

namespace sramplan::placement {
namespace {

// (bytes, first_step, last_step), alignment 1.
std::vector<BufferRequest> Requests(std::initializer_list<std::tuple<int64_t, int, int>> list) {
  std::vector<BufferRequest> r;
  for (auto [bytes, first, last] : list)
    r.push_back({static_cast<int>(r.size()), bytes, 1, first, last, {}});
  return r;
}

// Independent check: offsets aligned and non-negative, fixed offsets kept, no two requests live at
// the same step share a byte, arena = max end.
void ExpectValid(const std::vector<BufferRequest>& r, const Placement& p) {
  ASSERT_EQ(p.offsets.size(), r.size());
  int64_t arena = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_GE(p.offsets[i], 0) << i;
    EXPECT_EQ(p.offsets[i] % r[i].alignment, 0) << i;
    if (r[i].fixed_offset) {
      EXPECT_EQ(p.offsets[i], *r[i].fixed_offset) << i;
    }
    arena = std::max(arena, p.offsets[i] + r[i].bytes);
    for (size_t j = i + 1; j < r.size(); ++j) {
      bool time = r[i].first_step <= r[j].last_step && r[j].first_step <= r[i].last_step;
      bool space =
          p.offsets[i] < p.offsets[j] + r[j].bytes && p.offsets[j] < p.offsets[i] + r[i].bytes;
      EXPECT_FALSE(time && space && r[i].bytes > 0 && r[j].bytes > 0)
          << "requests " << i << " and " << j << " overlap";
    }
  }
  EXPECT_EQ(arena, p.arena_bytes);
}

// ExpectValid for large instances: requests by first step, each compared with the later-starting
// ones it overlaps in time (no fixed offsets).
void ExpectValidFast(const std::vector<BufferRequest>& r, const Placement& p) {
  ASSERT_EQ(p.offsets.size(), r.size());
  std::vector<int> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return r[a].first_step < r[b].first_step; });
  int64_t arena = 0;
  for (size_t x = 0; x < order.size(); ++x) {
    const int i = order[x];
    ASSERT_GE(p.offsets[i], 0);
    ASSERT_EQ(p.offsets[i] % r[i].alignment, 0);
    arena = std::max(arena, p.offsets[i] + r[i].bytes);
    for (size_t y = x + 1; y < order.size() && r[order[y]].first_step <= r[i].last_step; ++y) {
      const int j = order[y];
      ASSERT_FALSE(p.offsets[i] < p.offsets[j] + r[j].bytes && p.offsets[j] < p.offsets[i] + r[i].bytes)
          << "requests " << i << " and " << j << " overlap";
    }
  }
  EXPECT_EQ(arena, p.arena_bytes);
}

// Independent exact optimum for tiny instances. Any placement can be rebuilt by taking its buffers
// in increasing offset order and putting each at the lowest aligned offset where it fits (no
// buffer moves up), so the best first-fit placement over all orders is optimal. Depth-first over
// orders, pruned by the best arena found so far.
class BruteForce {
 public:
  explicit BruteForce(const std::vector<BufferRequest>& r) : r_(r), offsets_(r.size(), -1) {}
  int64_t Optimum() {
    best_ = std::numeric_limits<int64_t>::max();
    Dfs(0, 0);
    return best_;
  }

 private:
  void Dfs(size_t placed, int64_t arena) {
    if (arena >= best_) return;
    if (placed == r_.size()) {
      best_ = arena;
      return;
    }
    for (size_t i = 0; i < r_.size(); ++i) {
      if (offsets_[i] >= 0) continue;
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (size_t j = 0; j < r_.size(); ++j)
        if (offsets_[j] >= 0 && r_[i].first_step <= r_[j].last_step &&
            r_[j].first_step <= r_[i].last_step)
          busy.push_back({offsets_[j], offsets_[j] + r_[j].bytes});
      std::sort(busy.begin(), busy.end());
      int64_t at = 0;
      auto align = [&](int64_t v) {
        return (v + r_[i].alignment - 1) / r_[i].alignment * r_[i].alignment;
      };
      for (auto [b, e] : busy) {
        if (align(at) + r_[i].bytes <= b) break;
        at = std::max(at, e);
      }
      offsets_[i] = align(at);
      Dfs(placed + 1, std::max(arena, offsets_[i] + r_[i].bytes));
      offsets_[i] = -1;
    }
  }
  const std::vector<BufferRequest>& r_;
  std::vector<int64_t> offsets_;
  int64_t best_ = 0;
};

std::vector<BufferRequest> RandomInstance(std::mt19937& rng, int n, int steps, int max_bytes,
                                          bool aligned) {
  std::vector<BufferRequest> r;
  for (int i = 0; i < n; ++i) {
    int first = static_cast<int>(rng() % steps);
    int last = first + static_cast<int>(rng() % (steps - first));
    int64_t bytes = 1 + static_cast<int64_t>(rng() % max_bytes);
    int64_t alignment = aligned ? int64_t{1} << (rng() % 4) : 1;
    r.push_back({i, bytes, alignment, first, last, {}});
  }
  return r;
}

OptimalOptions Limits(double seconds) {
  OptimalOptions o;
  o.time_limit_s = seconds;
  return o;
}

TEST(LiveBytesLowerBound, MaxOverStepsOfLiveBytes) {
  // Step 1 holds 10 + 20, step 2 holds 20 + 30 + 5, step 3 holds 30.
  auto r = Requests({{10, 0, 1}, {20, 1, 2}, {30, 2, 3}, {5, 2, 2}});
  EXPECT_EQ(LiveBytesLowerBound(r), 55);
  EXPECT_EQ(LiveBytesLowerBound({}), 0);
}

TEST(PlaceOptimal, ReachesTheBoundWhereGreedyBySizeDoesNot) {
  // Steps 1..5. Load: step 3 = 3 + 4 + 3 = 10, step 4 = 4 + 1 + 5 = 10: bound 10.
  // TFLM (largest first): 5@0, 4@5, first 3@0, second 3 finds no 3-byte gap below 9 -> @9: 12.
  // Optimal: 4@0, 5@4, 1@9, the two 3s @4 and @7: arena 10.
  auto r = Requests({{3, 1, 3}, {4, 3, 5}, {1, 4, 4}, {3, 1, 3}, {5, 4, 5}});
  EXPECT_EQ(PlaceTflmGreedy(r).arena_bytes, 12);
  OptimalResult res = PlaceOptimal(r, Limits(10));
  ExpectValid(r, res.placement);
  EXPECT_EQ(res.lower_bound, 10);
  EXPECT_EQ(res.placement.arena_bytes, 10);
  EXPECT_TRUE(res.proved_optimal);
  EXPECT_FALSE(res.hit_limit);
}

TEST(PlaceOptimal, ProvesAnOptimumAboveTheLowerBound) {
  // Load 17 at steps 1 (8 + 8 + 1), 5 (5 + 9 + 3) and 6 (8 + 9), but no placement of arena 17
  // exists: at steps 5-6 the 9-byte buffer #6 is at 0 or 8; at 0, #3 and #7 fill [9, 17) at step 5,
  // leaving #5 (4 bytes, steps 3-4) no room next to #0 (8 bytes, at 0, 1, 8 or 9 because of step
  // 1); at 8, #3 and #7 fill [0, 8), #0 must go to 8 or 9 and #5 again has no room. The brute
  // force below confirms the optimum: 19.
  auto r = Requests(
      {{8, 1, 3}, {8, 0, 2}, {1, 0, 1}, {5, 4, 5}, {8, 6, 6}, {4, 3, 4}, {9, 5, 6}, {3, 3, 5}});
  EXPECT_EQ(LiveBytesLowerBound(r), 17);
  EXPECT_EQ(BruteForce(r).Optimum(), 19);
  OptimalResult res = PlaceOptimal(r, Limits(10));
  ExpectValid(r, res.placement);
  EXPECT_EQ(res.placement.arena_bytes, 19);
  EXPECT_TRUE(res.proved_optimal);
  EXPECT_EQ(res.proved_lower_bound, 19);
  EXPECT_EQ(res.lower_bound, 17);
}

TEST(PlaceOptimal, TrivialInputs) {
  OptimalResult empty = PlaceOptimal({}, Limits(1));
  EXPECT_EQ(empty.placement.arena_bytes, 0);
  EXPECT_TRUE(empty.proved_optimal);

  auto one = Requests({{7, 0, 3}});
  OptimalResult res = PlaceOptimal(one, Limits(1));
  EXPECT_EQ(res.placement.offsets, (std::vector<int64_t>{0}));
  EXPECT_TRUE(res.proved_optimal);

  // Zero-byte buffers take no space.
  auto zeros = Requests({{0, 0, 5}, {4, 0, 5}, {0, 2, 2}, {4, 1, 1}});
  res = PlaceOptimal(zeros, Limits(1));
  ExpectValid(zeros, res.placement);
  EXPECT_EQ(res.placement.arena_bytes, 8);
  EXPECT_TRUE(res.proved_optimal);
}

TEST(PlaceOptimal, MatchesBruteForceOnRandomTinyInstances) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    auto r = RandomInstance(rng, 1 + trial % 7, 2 + trial % 6, 9, /*aligned=*/false);
    OptimalResult res = PlaceOptimal(r, Limits(10));
    ExpectValid(r, res.placement);
    ASSERT_TRUE(res.proved_optimal) << "trial " << trial;
    ASSERT_EQ(res.placement.arena_bytes, BruteForce(r).Optimum()) << "trial " << trial;
    ASSERT_GE(res.placement.arena_bytes, res.lower_bound);
  }
}

TEST(PlaceOptimal, MatchesBruteForceWithAlignment) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 150; ++trial) {
    auto r = RandomInstance(rng, 2 + trial % 6, 2 + trial % 5, 12, /*aligned=*/true);
    OptimalResult res = PlaceOptimal(r, Limits(10));
    ExpectValid(r, res.placement);
    ASSERT_TRUE(res.proved_optimal) << "trial " << trial;
    ASSERT_EQ(res.placement.arena_bytes, BruteForce(r).Optimum()) << "trial " << trial;
  }
}

TEST(PlaceBestOf, RandomMediumInstances) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 10 + trial % 21;  // 10..30 buffers
    auto r = RandomInstance(rng, n, 4 + trial % 12, 64, /*aligned=*/false);
    OptimalResult best = PlaceBestOf(r, Limits(2));
    ExpectValid(r, best.placement);
    EXPECT_GE(best.placement.arena_bytes, best.lower_bound);
    EXPECT_LE(best.proved_lower_bound, best.placement.arena_bytes);
    for (const auto& name : GreedyOrderNames()) {
      auto greedy = PlaceGreedyByName(name, r);
      ASSERT_TRUE(greedy.ok());
      ExpectValid(r, *greedy);
      EXPECT_LE(best.placement.arena_bytes, greedy->arena_bytes) << name;
    }
    OptimalResult exact = PlaceOptimal(r, Limits(2));
    ExpectValid(r, exact.placement);
    if (best.proved_optimal && exact.proved_optimal) {
      EXPECT_EQ(best.placement.arena_bytes, exact.placement.arena_bytes) << "trial " << trial;
    }
    EXPECT_TRUE(best.proved_optimal || best.hit_limit);
  }
}

TEST(PlaceOptimal, Deterministic) {
  std::mt19937 rng(7);
  auto r = RandomInstance(rng, 30, 12, 100, false);
  OptimalResult a = PlaceBestOf(r, Limits(10));
  OptimalResult b = PlaceBestOf(r, Limits(10));
  EXPECT_EQ(a.placement.offsets, b.placement.offsets);
  EXPECT_EQ(a.nodes, b.nodes);
}

// A perfect packing cut out of a full arena: at every step a run of 1-3 adjacent pieces of
// [0, capacity) ends and its address range is cut again into 1-3 new pieces. The live bytes are
// `capacity` at every step, so the lower bound is reachable; greedy orders mostly miss it.
std::vector<BufferRequest> TiledInstance(std::mt19937& rng, int steps, int64_t capacity,
                                         int pieces) {
  struct Piece {
    int64_t lo, hi;
    int first;
  };
  std::vector<BufferRequest> r;
  auto emit = [&](const Piece& p, int last) {
    r.push_back({static_cast<int>(r.size()), p.hi - p.lo, 1, p.first, last, {}});
  };
  std::vector<Piece> live;
  for (int k = 0; k < pieces; ++k)
    live.push_back({capacity * k / pieces, capacity * (k + 1) / pieces, 0});
  for (int step = 1; step < steps; ++step) {
    size_t k = rng() % live.size();
    size_t len = std::min<size_t>(1 + rng() % 3, live.size() - k);
    if (rng() % 2 == 0) {
      // End a whole group of pieces cut at the same step: buffers with identical lifetimes.
      while (k > 0 && live[k - 1].first == live[k].first) --k;
      for (len = 1; k + len < live.size() && live[k + len].first == live[k].first;) ++len;
    }
    const int64_t lo = live[k].lo, hi = live[k + len - 1].hi;
    for (size_t j = k; j < k + len; ++j) emit(live[j], step - 1);
    live.erase(live.begin() + k, live.begin() + k + len);
    std::vector<int64_t> cuts = {lo, hi};
    for (int p = static_cast<int>(rng() % 3); p > 0; --p)
      cuts.push_back(lo + 1 + static_cast<int64_t>(rng() % std::max<int64_t>(1, hi - lo - 1)));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t p = cuts.size() - 1; p > 0; --p)
      live.insert(live.begin() + k, {cuts[p - 1], cuts[p], step});
  }
  for (const Piece& p : live) emit(p, steps - 1);
  std::shuffle(r.begin(), r.end(), rng);
  for (size_t i = 0; i < r.size(); ++i) r[i].id = static_cast<int>(i);
  return r;
}

TEST(PlaceOptimal, PerfectPackingsAreFound) {
  // Every instance here has a placement at its lower bound (it was cut out of a full arena).
  std::mt19937 rng(5);
  int greedy_misses = 0;
  for (int trial = 0; trial < 20; ++trial) {
    auto r = TiledInstance(rng, 8 + trial, 1000, 4 + trial % 5);
    OptimalResult res = PlaceBestOf(r, Limits(5));
    greedy_misses += res.method != "greedy-by-size" && res.method != "greedy-by-area" &&
                     res.method != "greedy-by-lifetime" && res.method != "greedy-by-conflicts" &&
                     res.method != "greedy-by-start" && res.method != "tflm";
    ExpectValid(r, res.placement);
    EXPECT_EQ(res.lower_bound, 1000);
    EXPECT_EQ(res.placement.arena_bytes, 1000)
        << "trial " << trial << ", " << r.size() << " buffers";
    EXPECT_TRUE(res.proved_optimal);
  }
  EXPECT_GE(greedy_misses, 10);  // the instances are not trivial
}

TEST(PlaceOptimal, LargerPerfectPackingsAreFound) {
  // Capacity = lower bound: any wrongly pruned branch shows up as a failure to find the packing.
  std::mt19937 rng(8);
  for (int trial = 0; trial < 30; ++trial) {
    auto r = TiledInstance(rng, 30 + 2 * trial, 1 << 16, 10 + trial % 8);
    OptimalOptions o = Limits(20);
    o.capacity = 1 << 16;
    OptimalResult res = PlaceOptimal(r, o);
    ExpectValid(r, res.placement);
    EXPECT_TRUE(res.fits_capacity) << "trial " << trial << ", " << r.size() << " buffers";
    EXPECT_TRUE(res.proved_optimal);
    EXPECT_EQ(res.proved_lower_bound, 1 << 16);  // no false proof of infeasibility
  }
}

TEST(PlaceOptimal, NodeLimitReturnsBestSoFar) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    auto r = TiledInstance(rng, 20, 1 << 20, 6);
    Placement greedy = PlaceGreedyByConflicts(r);
    if (greedy.arena_bytes == LiveBytesLowerBound(r)) continue;  // nothing to search
    OptimalOptions o = Limits(10);
    o.node_limit = 1;
    OptimalResult res = PlaceOptimal(r, o);
    ExpectValid(r, res.placement);
    EXPECT_TRUE(res.hit_limit);
    EXPECT_FALSE(res.proved_optimal);
    EXPECT_EQ(res.method, "greedy-by-conflicts");
    EXPECT_EQ(res.placement.arena_bytes, greedy.arena_bytes);
    EXPECT_LE(res.nodes, 1);
    return;
  }
  FAIL() << "no instance where greedy misses the bound";
}

TEST(PlaceOptimal, TimeLimitIsHonoured) {
  std::mt19937 rng(3);
  auto r = TiledInstance(rng, 200, 1 << 20, 20);
  OptimalResult res = PlaceBestOf(r, Limits(0.05));
  ExpectValid(r, res.placement);
  EXPECT_TRUE(res.proved_optimal || res.hit_limit);
  EXPECT_LT(res.seconds, 2.0);
  // No search at all with a zero budget: the best greedy placement comes back unproved.
  OptimalResult none = PlaceBestOf(r, Limits(0));
  ExpectValid(r, none.placement);
  EXPECT_EQ(none.nodes, 0);
  EXPECT_NE(none.method, "exact");
}

// Issue 12: the greedy portfolio honours the time limit too. 20,000 buffers (many live to the end,
// as graph outputs are) with a limit far below what the portfolio and the search need: the call
// returns a complete, valid placement and says whether it is proved optimal (never wall times).
TEST(PlaceBestOf, TimeLimitCutsThePortfolioOnLargeInstances) {
  std::mt19937 rng(8);
  const int n = 20000;
  std::vector<BufferRequest> r;
  for (int i = 0; i < n; ++i) {
    const int first = i;
    const int last = rng() % 8 == 0 ? n - 1 : std::min(n - 1, i + 1 + static_cast<int>(rng() % 8));
    r.push_back({i, 16 * (1 + static_cast<int64_t>(rng() % 128)), 16, first, last, {}});
  }
  OptimalOptions o = Limits(0.001);
  o.capacity = int64_t{1} << 40;
  OptimalResult res = PlaceBestOf(r, o);
  ExpectValidFast(r, res.placement);
  EXPECT_FALSE(res.method.empty());
  EXPECT_GE(res.placement.arena_bytes, res.lower_bound);
  EXPECT_TRUE(res.fits_capacity);
  if (res.proved_optimal) {
    EXPECT_EQ(res.placement.arena_bytes, res.proved_lower_bound);
  } else {
    EXPECT_TRUE(res.hit_limit);  // cut by the limit: not proved, and it says so
    EXPECT_LT(res.proved_lower_bound, res.placement.arena_bytes);
  }
  // Without a time limit the same portfolio runs every order: never worse than the cut one.
  OptimalResult full = PlaceBestOf(r, Limits(0));
  ExpectValidFast(r, full.placement);
  EXPECT_LE(full.placement.arena_bytes, res.placement.arena_bytes);
}

TEST(PlaceOptimal, Capacity) {
  auto r = Requests({{3, 1, 3}, {4, 3, 5}, {1, 4, 4}, {3, 1, 3}, {5, 4, 5}});
  OptimalOptions o = Limits(10);
  o.capacity = 10;
  OptimalResult res = PlaceOptimal(r, o);
  EXPECT_TRUE(res.fits_capacity);
  EXPECT_GE(res.seconds_to_fit, 0);
  EXPECT_EQ(res.placement.arena_bytes, 10);
  // Below the lower bound nothing fits; the optimum still comes back.
  o.capacity = 9;
  res = PlaceOptimal(r, o);
  EXPECT_FALSE(res.fits_capacity);
  EXPECT_LT(res.seconds_to_fit, 0);
  EXPECT_EQ(res.placement.arena_bytes, 10);
  EXPECT_TRUE(res.proved_optimal);
  // minimize = false stops at the first placement within the capacity.
  o.capacity = 12;
  o.minimize = false;
  res = PlaceOptimal(r, o);
  EXPECT_TRUE(res.fits_capacity);
  EXPECT_LE(res.placement.arena_bytes, 12);
}

TEST(PlaceOptimal, FixedOffsetsAreKept) {
  auto r = Requests({{4, 0, 2}, {4, 1, 3}, {2, 0, 3}});
  r[0].fixed_offset = 6;
  OptimalResult res = PlaceOptimal(r, Limits(1));
  ExpectValid(r, res.placement);
  EXPECT_EQ(res.placement.offsets[0], 6);
  EXPECT_EQ(res.nodes, 0);
}

TEST(Greedy, ByConflictsAndByName) {
  auto r = Requests({{10, 0, 1}, {20, 1, 2}, {30, 2, 3}, {40, 3, 4}, {50, 0, 1}});
  Placement p = PlaceGreedyByConflicts(r);
  ExpectValid(r, p);
  for (const auto& name : GreedyOrderNames()) {
    auto q = PlaceGreedyByName(name, r);
    ASSERT_TRUE(q.ok()) << name;
    ExpectValid(r, *q);
  }
  EXPECT_EQ(PlaceGreedyByName("tflm", r)->offsets, PlaceTflmGreedy(r).offsets);
  EXPECT_FALSE(PlaceGreedyByName("nope", r).ok());
}

// ------------------------------------------------------------------------------------------------
// CSV

TEST(ProblemCsv, ParsesAndCompressesTime) {
  auto p = ParseProblemCsv(
      "id,lower,upper,size\r\n"
      "7,0,5,100\r\n"
      "\n"
      "-3, 5, 10, 200\n"
      "12,4,6,50\n",
      "t.csv");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->requests.size(), 3u);
  EXPECT_EQ(p->ids, (std::vector<int64_t>{7, -3, 12}));
  EXPECT_EQ(p->requests[1].bytes, 200);
  // Points 0, 4, 5, 6, 10 -> 0..4; [0,5) -> steps 0..1, [5,10) -> 2..3, [4,6) -> 1..2.
  EXPECT_EQ(p->requests[0].first_step, 0);
  EXPECT_EQ(p->requests[0].last_step, 1);
  EXPECT_EQ(p->requests[1].first_step, 2);
  EXPECT_EQ(p->requests[1].last_step, 3);
  EXPECT_FALSE(OverlapInTime(p->requests[0], p->requests[1]));  // [0,5) and [5,10) only touch
  EXPECT_TRUE(OverlapInTime(p->requests[0], p->requests[2]));
  EXPECT_TRUE(OverlapInTime(p->requests[1], p->requests[2]));
  EXPECT_TRUE(p->offsets.empty());
}

TEST(ProblemCsv, SolutionRoundTrip) {
  auto p = ParseProblemCsv("id,lower,upper,size\n7,0,5,100\n8,3,9,20\n", "t.csv");
  ASSERT_TRUE(p.ok());
  OptimalResult res = PlaceBestOf(p->requests, Limits(1));
  std::string csv = FormatSolutionCsv(*p, res.placement);
  EXPECT_EQ(csv, "id,lower,upper,size,offset\n7,0,5,100,0\n8,3,9,20,100\n");
  auto back = ParseProblemCsv(csv, "solution.csv");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->offsets, res.placement.offsets);
  EXPECT_EQ(back->ids, p->ids);
}

void ExpectError(const std::string& text, const std::string& fragment) {
  auto p = ParseProblemCsv(text, "bad.csv");
  ASSERT_FALSE(p.ok()) << text;
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find(fragment), std::string::npos) << p.status().message();
}

TEST(ProblemCsv, Errors) {
  const std::string h = "id,lower,upper,size\n";
  ExpectError(h + "1,0,5,abc\n", "bad.csv:2: column 'size' is not an integer: 'abc'");
  ExpectError(h + "1,0,5,1.5\n", "bad.csv:2: column 'size' is not an integer");
  ExpectError(h + "x,0,5,1\n", "column 'id' is not an integer");
  ExpectError(h + "1,0,5,\n", "column 'size' is not an integer: ''");
  ExpectError(h + "1,0,5,-4\n", "bad.csv:2: negative size -4");
  ExpectError(h + "1,5,5,4\n", "bad.csv:2: upper (5) must be greater than lower (5)");
  ExpectError(h + "1,6,5,4\n", "upper (5) must be greater than lower (6)");
  ExpectError(h + "1,0,5,4\n\n1,2,3,4\n", "bad.csv:4: duplicate id 1 (first used on line 2)");
  ExpectError(h + "1,0,5,4,9\n", "bad.csv:2: too many columns: expected 4");
  ExpectError(h + "1,0,5\n", "bad.csv:2: too few columns");
  ExpectError("id,start,end,size\n1,0,5,4\n", "bad.csv:1: expected the header");
  ExpectError("", "empty file");
  ExpectError(h + "1,0,99999999999999999999,4\n", "column 'upper' is not an integer");
}

}  // namespace
}  // namespace sramplan::placement
