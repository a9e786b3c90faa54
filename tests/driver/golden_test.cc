// Golden tests: small graphs whose offsets and peaks are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <map>

#include "driver/strategy.h"
#include "plan/verifier.h"
#include "import/import.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

ir::Graph Load(const char* text) { return testing::LoadNativeGraph(text); }

plan::Plan PlanWith(const ir::Graph& g, const std::string& strategy, const std::string& target = "stm32f411re") {
  auto t = target::LoadTarget(target);
  EXPECT_TRUE(t.ok());
  auto p = RunStrategy(g, *t, strategy, {});
  EXPECT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(plan::VerifyPlan(*p).ok());
  return std::move(p).value();
}

std::map<std::string, int64_t> Offsets(const plan::Plan& p) {
  std::map<std::string, int64_t> m;
  for (const auto& b : p.buffers)
    if (b.level == p.arena_level) m[b.tensor] = b.offset;
  return m;
}

// Chain: steps 0 conv1, 1 relu, 2 conv2. Live: x [0,0], a [0,1], b [1,2], y [2,2].
// Live bytes per step: 768, 1024, 768 -> lower bound 1024.
TEST(Golden, ChainNaive) {
  // x@0 (256), a@256 (512), b@768, y@1280 -> 1536.
  plan::Plan p = PlanWith(Load(testing::kChainGraph), "naive");
  EXPECT_EQ(Offsets(p), (std::map<std::string, int64_t>{{"x", 0}, {"a", 256}, {"b", 768}, {"y", 1280}}));
  EXPECT_EQ(p.metrics.arena_bytes, 1536);
  EXPECT_EQ(p.metrics.lower_bound_bytes, 1024);
}

TEST(Golden, ChainLinear) {
  // First-use order x, a, b, y. x@0; a after x @256; b: a [256,768) live -> @768; y: only b live,
  // gap [0,768) fits -> @0. Arena 1280.
  plan::Plan p = PlanWith(Load(testing::kChainGraph), "linear");
  EXPECT_EQ(Offsets(p), (std::map<std::string, int64_t>{{"x", 0}, {"a", 256}, {"b", 768}, {"y", 0}}));
  EXPECT_EQ(p.metrics.arena_bytes, 1280);
}

TEST(Golden, ChainTflm) {
  // Largest first, equal sizes last added first (as TFLM): b@0, a@512 (overlaps b at step 1), y@512
  // (overlaps only b), x@0 (overlaps only a). Arena 1024 = lower bound.
  plan::Plan p = PlanWith(Load(testing::kChainGraph), "tflm");
  EXPECT_EQ(Offsets(p), (std::map<std::string, int64_t>{{"x", 0}, {"a", 512}, {"b", 0}, {"y", 512}}));
  EXPECT_EQ(p.metrics.arena_bytes, 1024);
  EXPECT_EQ(p.metrics.overhead_pct, 0.0);
  EXPECT_TRUE(p.metrics.fits);
}

TEST(Golden, ChainInplace) {
  // relu writes b over a (a dies at step 1): class {a,b} 512 B over [0,2] goes first @0; y and x @512.
  // Live: 768, 512, 768 -> bound 768 = arena.
  plan::Plan p = PlanWith(Load(testing::kChainGraph), "inplace");
  EXPECT_EQ(Offsets(p), (std::map<std::string, int64_t>{{"x", 512}, {"a", 0}, {"b", 0}, {"y", 512}}));
  EXPECT_EQ(p.metrics.arena_bytes, 768);
  EXPECT_EQ(p.metrics.lower_bound_bytes, 768);
  EXPECT_EQ(p.metrics.inplace_saved_bytes, 256);
  bool declared = false;
  for (const auto& b : p.buffers)
    if (b.tensor == "b") declared = b.overlaps.size() == 1 && b.overlaps[0].tensor == "a";
  EXPECT_TRUE(declared);
}

// Bottleneck: steps 0 pw, 1 dw, 2 pj, 3 add. Live: x [0,3] 1600, e [0,1] 3200, d [1,2] 3200,
// p [2,3] 1600, y [3,3] 1600. Live bytes: 4800, 8000, 6400, 4800 -> bound 8000.
TEST(Golden, BottleneckTflm) {
  // Sizes aligned to 16 already. Order (size, then last added first): d, e, y, p, x.
  // d@0; e overlaps d -> @3200; y [3,3] overlaps neither -> @0; p [2,3] overlaps d@0 and y@0 -> @3200;
  // x [0,3] overlaps d@0, e@3200, y@0 and p@3200 -> @6400. Arena 8000.
  plan::Plan p = PlanWith(Load(testing::kBottleneckGraph), "tflm");
  EXPECT_EQ(Offsets(p),
            (std::map<std::string, int64_t>{{"e", 3200}, {"d", 0}, {"x", 6400}, {"p", 3200}, {"y", 0}}));
  EXPECT_EQ(p.metrics.arena_bytes, 8000);
  EXPECT_EQ(p.metrics.lower_bound_bytes, 8000);
}

TEST(Golden, BottleneckInplaceDepthwiseAndAdd) {
  // dw writes d over e (scratch of one channel plane: 10*10 = 100 -> 112 B at step 1); add writes y
  // over p. Classes: {e,d} 3200 [0,2], {p,y} 1600 [2,3], x 1600 [0,3], scratch 112 [1,1].
  // TFLM order: {e,d}@0; {p,y} (1600, added after x, so first) overlaps {e,d} -> @3200; x overlaps
  // {e,d} and {p,y} -> @4800; scratch overlaps {e,d}@0 and x@4800 -> gap [3200, 4800) -> @3200.
  // Arena 6400; bound: step 1: 3200 + 1600 + 112 = 4912; step 2: 3200+1600+1600 = 6400.
  plan::Plan p = PlanWith(Load(testing::kBottleneckGraph), "inplace");
  auto off = Offsets(p);
  EXPECT_EQ(off["e"], 0);
  EXPECT_EQ(off["d"], 0);
  EXPECT_EQ(off["x"], 4800);
  EXPECT_EQ(off["p"], 3200);
  EXPECT_EQ(off["y"], 3200);
  EXPECT_EQ(off["dw.scratch"], 3200);
  EXPECT_EQ(p.metrics.arena_bytes, 6400);
  EXPECT_EQ(p.metrics.lower_bound_bytes, 6400);
}

TEST(Golden, WeightsLiveInFlash) {
  plan::Plan p = PlanWith(Load(testing::kBottleneckGraph), "tflm");
  int64_t flash = 0;
  for (const auto& b : p.buffers)
    if (b.level == "flash") flash += b.bytes;
  // we 32*16 + wd 32*9 + wp 16*32 = 512 + 288 + 512.
  EXPECT_EQ(flash, 1312);
  EXPECT_EQ(p.metrics.offchip_read_bytes, 1312);  // read once each from flash
}

TEST(Golden, DoesNotFitWhenTheArenaIsTooSmall) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  plan::Plan p = PlanWith(g, "tflm", "sram:4KiB");
  EXPECT_FALSE(p.metrics.fits);
  EXPECT_EQ(p.metrics.arena_bytes, 8000);
  EXPECT_FALSE(plan::VerifyPlan(p).fits());
  EXPECT_TRUE(plan::VerifyPlan(p).ok());
}

}  // namespace
}  // namespace sramplan::driver
