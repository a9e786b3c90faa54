#include "schedule/min_peak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "analysis/liveness.h"
#include "import/import.h"
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
    ir::Graph g;
    g.name = "r";
    int n = 2 + static_cast<int>(rng() % 7);
    std::vector<ir::TensorId> avail = {g.AddTensor({.name = "x", .shape = {1 + static_cast<int64_t>(rng() % 50)},
                                                    .dtype = ir::DataType::kInt8, .kind = ir::TensorKind::kInput})};
    std::vector<ir::TensorId> outs;
    for (int i = 0; i < n; ++i) {
      ir::Op op;
      op.name = "op" + std::to_string(i);
      op.type = "Opaque";
      int k = 1 + static_cast<int>(rng() % 2);
      for (int j = 0; j < k; ++j) {
        ir::TensorId in = avail[rng() % avail.size()];
        if (std::find(op.inputs.begin(), op.inputs.end(), in) == op.inputs.end()) op.inputs.push_back(in);
      }
      ir::TensorId out = g.AddTensor({.name = "t" + std::to_string(i), .shape = {1 + static_cast<int64_t>(rng() % 100)},
                                      .dtype = ir::DataType::kInt8});
      op.outputs = {out};
      g.AddOp(op);
      avail.push_back(out);
    }
    for (auto& t : g.mutable_tensors())
      if (t.kind == ir::TensorKind::kActivation && t.consumers.empty()) t.kind = ir::TensorKind::kOutput;
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
