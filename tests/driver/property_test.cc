// Property tests: random DAGs (chains, diamonds, NAS-like cells; 1 to 500 ops) planned with every
// strategy; every plan must pass the independent verifier and respect the lower bound.
#include <gtest/gtest.h>

#include <random>

#include "driver/strategy.h"
#include "plan/verifier.h"
#include "ir/graph.h"
#include "random_graphs.h"

namespace sramplan::driver {
namespace {

using ir::Graph;
using testing::Cells;
using testing::Chain;
using testing::Diamonds;

void CheckAllStrategies(const Graph& g) {
  ASSERT_TRUE(ir::VerifyGraph(g).ok()) << ir::VerifyGraph(g).message();
  for (const char* tname : {"stm32f411re", "sram:4KiB"}) {
    auto t = target::LoadTarget(tname);
    ASSERT_TRUE(t.ok());
    int64_t naive = -1, tflm = -1;
    for (const auto& s : StrategiesOf(Family::kTensor)) {
      auto p = RunStrategy(g, *t, s.name, {});
      ASSERT_TRUE(p.ok()) << g.name << " " << s.name << ": " << p.status().message();
      plan::VerifyResult r = plan::VerifyPlan(*p);
      ASSERT_TRUE(r.ok()) << g.name << " " << s.name << "\n" << r.Summary();
      EXPECT_EQ(r.fits(), p->metrics.fits);
      EXPECT_GE(p->metrics.arena_bytes, p->metrics.lower_bound_bytes) << g.name << " " << s.name;
      if (s.name == "naive") naive = p->metrics.arena_bytes;
      if (s.name == "tflm") tflm = p->metrics.arena_bytes;
    }
    EXPECT_LE(tflm, naive) << g.name;
  }
}

TEST(Property, Chains) {
  for (uint32_t seed = 1; seed <= 40; ++seed) CheckAllStrategies(Chain(seed, 1 + static_cast<int>(seed * 13 % 120)));
}

TEST(Property, Diamonds) {
  for (uint32_t seed = 1; seed <= 30; ++seed) CheckAllStrategies(Diamonds(seed, 3 + static_cast<int>(seed * 7 % 150)));
}

TEST(Property, NasCells) {
  for (uint32_t seed = 1; seed <= 20; ++seed) CheckAllStrategies(Cells(seed, 10 + static_cast<int>(seed * 23 % 200)));
}

TEST(Property, LargeGraphs) {
  CheckAllStrategies(Chain(1001, 500));
  CheckAllStrategies(Cells(1002, 500));
  CheckAllStrategies(Diamonds(1003, 500));
}

TEST(Property, SingleOp) { CheckAllStrategies(Chain(77, 1)); }

}  // namespace
}  // namespace sramplan::driver
