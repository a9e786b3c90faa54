// The searches: the prefix bound never exceeds a completion's energy, the exact search equals a
// brute-force enumeration on small layers and proves it, the heuristic is never better than it.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>

#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "blocking/schedules.h"
#include "target/target.h"
#include "blocking/blocking_strings.h"

namespace sramplan::blocking {
namespace {

Hierarchy Small(int64_t l0, int64_t l1) {
  Hierarchy h;
  h.name = "small";
  h.levels = {Level{"rf", l0, {true, true, true}, 0.4, 0.4, false},
              Level{"sram", l1, {true, true, true}, 2.5, 2.5, false},
              Level{"dram", int64_t{1} << 40, {true, true, true}, 320.0, 320.0, true}};
  return h;
}

Hierarchy SplitBuffers() {
  auto t = target::LoadTarget("diannao");
  auto h = HierarchyFromTarget(*t);
  h->levels[0].capacity_bytes = 32;
  h->levels[1].capacity_bytes = 96;
  h->levels[2].capacity_bytes = 32;
  return *h;
}

TEST(BlockingSearch, ExactEqualsBruteForce) {
  std::vector<Layer> layers = {ConvLayer("a", 4, 2, 2, 4, 2, 1), ConvLayer("b", 2, 2, 4, 2, 1, 3),
                               FcLayer("fc", 8, 4, 2), ConvLayer("square", 4, 4, 2, 2, 2, 2),  // transposable
                               PoolLayer("maxpool", LayerKind::kMaxPool, 2, 2, 4, 3, 1, 1, 2, 1),
                               LrnLayer("lrn", 4, 2, 4, 3)};
  std::vector<Hierarchy> hs = {Small(24, 256), Small(64, 64), SplitBuffers()};
  for (const Layer& l : layers)
    for (const Hierarchy& h : hs) {
      SCOPED_TRACE(l.name + " on " + h.name);
      double best = std::numeric_limits<double>::infinity();
      int64_t count = 0;
      testing::EnumerateStrings(l, [&](const BlockingString& s) {
        ASSERT_TRUE(ValidateString(l, s).ok()) << ToString(s);
        Evaluation ev = Evaluate(l, h, s);
        if (ev.fits) best = std::min(best, ev.total_pj);
        ++count;
      });
      EXPECT_GT(count, 10);
      SearchOptions opt;
      opt.time_limit_s = 120;
      auto ex = ExactSearch(l, h, opt);
      ASSERT_TRUE(ex.ok()) << ex.status().message();
      EXPECT_TRUE(ex->proved_optimal);
      EXPECT_DOUBLE_EQ(ex->eval.total_pj, best) << ToString(ex->best);
      EXPECT_DOUBLE_EQ(Evaluate(l, h, ex->best).total_pj, ex->eval.total_pj);
      auto heur = HeuristicSearch(l, h, opt);
      ASSERT_TRUE(heur.ok());
      EXPECT_GE(heur->eval.total_pj, ex->eval.total_pj * (1 - 1e-12));
    }
}

// Buffers far smaller than the layer: most prefixes close (no operand can get another on-chip
// buffer) and are completed by the DP; the result must still equal the brute force.
TEST(BlockingSearch, ClosedPrefixCompletionEqualsBruteForce) {
  Hierarchy tiny = SplitBuffers();
  tiny.levels[0].capacity_bytes = 8;
  tiny.levels[1].capacity_bytes = 16;
  tiny.levels[2].capacity_bytes = 8;
  std::vector<Layer> layers = {ConvLayer("big", 4, 2, 4, 4, 2, 1), ConvLayer("square", 4, 4, 2, 2, 2, 2), PoolLayer("pool", LayerKind::kMaxPool, 4, 2, 4, 2, 2),
                               LrnLayer("lrn", 4, 2, 4, 3)};
  std::vector<Hierarchy> hs = {tiny, Small(6, 24)};
  for (const Layer& l : layers)
    for (const Hierarchy& h : hs) {
      SCOPED_TRACE(l.name + " on " + h.name);
      const double best = testing::BruteForceBest(l, h);
      SearchOptions opt;
      opt.time_limit_s = 120;
      auto ex = ExactSearch(l, h, opt);
      ASSERT_TRUE(ex.ok()) << ex.status().message();
      EXPECT_TRUE(ex->proved_optimal);
      EXPECT_GT(ex->completions, 0);
      EXPECT_DOUBLE_EQ(ex->eval.total_pj, best) << ToString(ex->best);
      EXPECT_DOUBLE_EQ(Evaluate(l, h, ex->best).total_pj, ex->eval.total_pj);
    }
}

// Buffers that hold a few tiles of each operand and none of it whole: every operand is refetched, so
// the bound's outermost-dimensions term (optimizer.cc) prunes; the result must still equal the brute
// force, also with strides, a 4-level shared hierarchy and LRN.
TEST(BlockingSearch, RefetchBoundStaysExact) {
  Hierarchy split = SplitBuffers();
  split.levels[0].capacity_bytes = 24;
  split.levels[1].capacity_bytes = 64;
  split.levels[2].capacity_bytes = 24;
  Hierarchy shared;
  shared.name = "shared3";
  shared.levels = {Level{"l0", 12, {true, true, true}, 0.3, 0.35, false}, Level{"l1", 48, {true, true, true}, 1.2, 1.3, false},
                   Level{"l2", 160, {true, true, true}, 5.0, 5.5, false},
                   Level{"dram", int64_t{1} << 40, {true, true, true}, 320.0, 320.0, true}};
  std::vector<Layer> layers = {ConvLayer("c", 4, 4, 4, 6, 2, 2), ConvLayer("s2", 3, 2, 4, 4, 3, 2, 1, 2, 2),
                               LrnLayer("lrn", 4, 4, 8, 3)};
  for (const Layer& l : layers)
    for (const Hierarchy& h : {split, shared}) {
      SCOPED_TRACE(l.name + " on " + h.name);
      const double best = testing::BruteForceBest(l, h);
      SearchOptions opt;
      opt.time_limit_s = 120;
      auto ex = ExactSearch(l, h, opt);
      ASSERT_TRUE(ex.ok()) << ex.status().message();
      EXPECT_TRUE(ex->proved_optimal);
      EXPECT_DOUBLE_EQ(ex->eval.total_pj, best) << ToString(ex->best);
    }
}

TEST(BlockingSearch, PrefixBoundNeverExceedsACompletion) {
  std::vector<Layer> layers = {ConvLayer("conv", 6, 4, 4, 6, 3, 3), ConvLayer("s2", 4, 4, 2, 4, 3, 3, 2, 2, 2),
                               FcLayer("fc", 12, 8, 4),
                               PoolLayer("avgpool", LayerKind::kAvgPool, 4, 4, 6, 3, 3, 2, 2, 2),
                               LrnLayer("lrn", 4, 6, 8, 5)};
  std::vector<Hierarchy> hs = {Small(48, 512), Small(16, 96), SplitBuffers()};
  std::mt19937_64 rng(11);
  int checked = 0;
  for (const Layer& l : layers)
    for (const Hierarchy& h : hs)
      for (int k = 0; k < 300; ++k) {
        const BlockingString s = testing::RandomInterleavedString(l, rng);
        Evaluation ev = Evaluate(l, h, s);
        if (!ev.fits) continue;
        for (size_t p = 1; p <= s.size(); ++p) {
          BlockingString prefix(s.begin(), s.begin() + p);
          ASSERT_LE(PrefixLowerBound(l, h, prefix), ev.total_pj * (1 + 1e-9))
              << l.name << " on " << h.name << ": " << ToString(s) << " prefix " << p;
          ++checked;
        }
      }
  EXPECT_GT(checked, 1000);
}

TEST(BlockingSearch, DianNaoConvLayerIsProvedAndBeatsTheDefault) {
  auto t = target::LoadTarget("diannao");
  auto h = HierarchyFromTarget(*t);
  ASSERT_TRUE(h.ok());
  Layer l = ConvLayer("small-conv", 4, 4, 8, 8, 3, 3);
  SearchOptions opt;
  opt.time_limit_s = 300;
  auto heur = HeuristicSearch(l, *h, opt);
  ASSERT_TRUE(heur.ok());
  auto ex = ExactSearch(l, *h, opt, &heur->best);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  EXPECT_TRUE(ex->proved_optimal);
  EXPECT_LE(ex->eval.total_pj, heur->eval.total_pj);
  Evaluation def = Evaluate(l, *h, DianNaoDefault(l, 2048, 2));
  EXPECT_LT(ex->eval.total_pj, def.total_pj);
  // Deterministic: the same answer on one thread.
  opt.threads = 1;
  auto one = ExactSearch(l, *h, opt, &heur->best);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(ToString(one->best), ToString(ex->best));
}

TEST(BlockingSearch, BackingLevelTooSmallIsAnError) {
  Hierarchy h = Small(64, 512);
  h.levels.pop_back();  // the 512 B SRAM is now the backing store of everything
  auto r = ExactSearch(ConvLayer("big", 16, 16, 8, 8, 3, 3), h, SearchOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(r.status().message().find("level 'sram'"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace sramplan::blocking
