// COSMA's min-peak ILP (Eq. 13-15) against the exact DP on hand-made and random small DAGs.
#include "schedule/min_peak_ilp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "analysis/liveness.h"
#include "import/import.h"
#include "test_graphs.h"
#include "random_graphs.h"
#include "schedule/min_peak.h"

namespace sramplan::schedule {
namespace {

TEST(MinPeakIlp, FinishesOneBranchFirst) {
  auto g = import::ImportNativeJson(sramplan::testing::kTwoBranchesGraph, "b", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  MinPeakResult r = MinPeakIlp(*g, 20);
  EXPECT_EQ(r.method, "ilp");
  EXPECT_TRUE(r.proved_optimal);
  EXPECT_EQ(r.model_order_peak, 201);
  EXPECT_EQ(r.peak_bytes, 102);
  EXPECT_EQ(r.lower_bound, 102);
  EXPECT_TRUE(analysis::ValidateSchedule(*g, r.order).ok());
  EXPECT_EQ(analysis::ComputeLiveness(*g, r.order).lower_bound, 102);
}

void ExpectMatchesDp(const ir::Graph& g, const std::string& what) {
  MinPeakResult dp = MinPeakSchedule(g);
  MinPeakResult ilp = MinPeakIlp(g, 20);
  ASSERT_TRUE(analysis::ValidateSchedule(g, ilp.order).ok()) << what;
  EXPECT_EQ(PeakOfOrder(g, ilp.order), ilp.peak_bytes) << what;
  EXPECT_EQ(analysis::ComputeLiveness(g, ilp.order).lower_bound, ilp.peak_bytes) << what;
  EXPECT_LE(ilp.peak_bytes, ilp.model_order_peak) << what;
  EXPECT_LE(ilp.lower_bound, ilp.peak_bytes) << what;
  if (dp.proved_optimal) {
    EXPECT_LE(ilp.lower_bound, dp.peak_bytes) << what;  // the ILP's bound holds for the DP's order too
    if (ilp.proved_optimal) {
      EXPECT_EQ(ilp.peak_bytes, dp.peak_bytes) << what;
    }
  }
  EXPECT_TRUE(ilp.proved_optimal) << what << ": " << ilp.seconds << " s";
}

// Random DAGs with views (Flatten) and weights from tests/random_graphs.h.
TEST(MinPeakIlp, MatchesDpOnRandomSmallDags) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    ExpectMatchesDp(testing::Chain(seed, 5 + seed % 4), "chain " + std::to_string(seed));
    ExpectMatchesDp(testing::Diamonds(seed, 7 + seed % 4), "diamonds " + std::to_string(seed));
    ExpectMatchesDp(testing::Cells(seed, 10), "cells " + std::to_string(seed));
  }
}

// Random opaque DAGs with several outputs and unread tensors.
TEST(MinPeakIlp, MatchesDpOnRandomOpaqueDags) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    ir::Graph g = testing::OpaqueDag(rng, 3, 6);
    ASSERT_TRUE(ir::VerifyGraph(g).ok());
    ExpectMatchesDp(g, "trial " + std::to_string(trial));
  }
}

}  // namespace
}  // namespace sramplan::schedule
