#include "schedule/min_peak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "analysis/liveness.h"
#include "import/import.h"
#include "random_graphs.h"
#include "test_graphs.h"

namespace sramplan::schedule {
namespace {

TEST(MinPeak, FinishesOneBranchFirst) {
  auto g = import::ImportNativeJson(sramplan::testing::kTwoBranchesGraph, "b", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  MinPeakResult r = MinPeakSchedule(*g);
  EXPECT_TRUE(r.proved_optimal);
  EXPECT_EQ(r.method, "exact-dp");
  EXPECT_EQ(r.model_order_peak, 201);
  EXPECT_EQ(r.peak_bytes, 102);
  EXPECT_TRUE(analysis::ValidateSchedule(*g, r.order).ok());
  // The liveness analysis of the returned order agrees with the DP's memory model.
  EXPECT_EQ(analysis::ComputeLiveness(*g, r.order).lower_bound, 102);
  EXPECT_EQ(PeakOfOrder(*g, r.order), 102);
}

// Brute force over every topological order of small random DAGs.
TEST(MinPeak, MatchesBruteForceOnSmallRandomDags) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    ir::Graph g = testing::OpaqueDag(rng, 2, 7);
    const int n = g.num_ops();
    ASSERT_TRUE(ir::VerifyGraph(g).ok());
    // Enumerate all topological orders.
    int64_t best = INT64_MAX;
    analysis::Schedule cur;
    std::vector<bool> done(n, false);
    std::function<void()> rec = [&] {
      if (static_cast<int>(cur.size()) == n) {
        best = std::min(best, PeakOfOrder(g, cur));
        return;
      }
      for (int v = 0; v < n; ++v) {
        if (done[v]) continue;
        bool ready = true;
        for (ir::TensorId in : g.op(ir::OpId(v)).inputs)
          if (g.tensor(in).producer.valid() && !done[g.tensor(in).producer.value()]) ready = false;
        if (!ready) continue;
        done[v] = true;
        cur.push_back(ir::OpId(v));
        rec();
        cur.pop_back();
        done[v] = false;
      }
    };
    rec();
    MinPeakResult r = MinPeakSchedule(g);
    ASSERT_TRUE(r.proved_optimal);
    EXPECT_EQ(r.peak_bytes, best) << "trial " << trial;
    EXPECT_EQ(PeakOfOrder(g, r.order), r.peak_bytes);
    EXPECT_EQ(analysis::ComputeLiveness(g, r.order).lower_bound, r.peak_bytes) << "trial " << trial;
  }
}

TEST(MinPeak, BeamFallbackStillValid) {
  auto g = import::ImportNativeJson(sramplan::testing::kTwoBranchesGraph, "b", {});
  MinPeakOptions o;
  o.max_states = 1;  // force the fallback
  o.hierarchical_fallback = false;
  MinPeakResult r = MinPeakSchedule(*g, o);
  EXPECT_FALSE(r.proved_optimal);
  EXPECT_EQ(r.method, "beam");
  EXPECT_TRUE(analysis::ValidateSchedule(*g, r.order).ok());
  EXPECT_LE(r.peak_bytes, r.model_order_peak);
  EXPECT_GE(r.peak_bytes, r.lower_bound);
}

}  // namespace
}  // namespace sramplan::schedule
