// Optimus's model and search on hand-computed examples (fusion/optimus_model.h, optimus_dp.h).
#include <gtest/gtest.h>

#include "analysis/liveness.h"
#include "fusion/optimus_dp.h"
#include "fusion/optimus_model.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::fusion {
namespace {

using testing::LoadNativeGraph;

// kChainGraph: x[1,8,8,4] -> conv1 (1x1, w1 32 B) -> a -> relu -> b[1,8,8,8] -> conv2 (1x1, w2 32 B)
// -> y[1,8,8,4]; int8. Vertices {conv1, relu} and {conv2}. Rows: x 32 B, b 64 B, y 32 B each.
FusionGraph ChainFg(const ir::Graph& g) {
  auto fg = BuildFusionGraph(g, analysis::ModelOrder(g), 1);
  EXPECT_TRUE(fg.ok()) << fg.status().message();
  return *fg;
}

AccelModel Accel(int64_t buffer) {
  AccelModel m;
  m.buffer_bytes = buffer;
  m.t_c = 2;
  m.t_h = 1;
  m.batch = 1;
  return m;
}

TEST(OptimusModel, FusionGraphMergesActivations) {
  const ir::Graph g = LoadNativeGraph(testing::kChainGraph);
  const FusionGraph fg = ChainFg(g);
  ASSERT_EQ(fg.vertices.size(), 2u);
  EXPECT_EQ(fg.vertices[0].ops.size(), 2u);  // conv1 + relu
  EXPECT_EQ(fg.vertices[0].param_bytes, 32);
  EXPECT_EQ(fg.vertices[1].preds, std::vector<int>{0});
  ASSERT_EQ(fg.tensors.size(), 3u);  // x, b, y
  EXPECT_EQ(fg.tensors[fg.vertices[1].inputs[0]].row_bytes, 64);
}

TEST(OptimusModel, TileRelationWithStrideKernelAndDilation) {
  RowMap m;
  m.rule = RowRule::kWindow;
  m.stride = 2;
  m.k_eff = 5;  // a 3x3 kernel with dilation 2
  m.in_rows = 100;
  EXPECT_EQ(m.Apply(3, 1), (3 - 1) * 2 + 5);  // t(l-1) = t(l) * S + K - S
  EXPECT_EQ(m.Apply(60, 1), 100);             // clipped to the input
  m.rule = RowRule::kReduce;
  EXPECT_EQ(m.Apply(1, 7), 15);  // ceil(100 / 7) rows stream per strip
  m.rule = RowRule::kWhole;
  EXPECT_EQ(m.Apply(1, 7), 100);
}

TEST(OptimusModel, IsoaAndEq3OnTheChain) {
  const ir::Graph g = LoadNativeGraph(testing::kChainGraph);
  const FusionGraph fg = ChainFg(g);
  // Alg. 2 at a 1-row tile: conv1 with ISOA (b: 64 -> 16 B) + conv2 without (y 32 B) = 48 beats
  // conv1 without (64) + conv2 with (16) = 80.
  EXPECT_EQ(IsoaDecisions(fg, {0, 1}, Accel(200)), (std::vector<char>{1, 0}));
  // Working set per row: x 32 + b 16 + y 32 = 80 B. B_c = 200: params (64 B) stay: 80 + 64 fits at
  // one row (8 strips); Eq. 3: 256 + 256 + 64.
  GroupEval e = EvaluateGroup(fg, {0, 1}, Accel(200), CostRule::kOptimus);
  ASSERT_TRUE(e.feasible);
  EXPECT_TRUE(e.params_resident);
  EXPECT_EQ(e.tiles, 8);
  EXPECT_EQ(e.buffer_bytes, 144);
  EXPECT_EQ(e.dram_bytes(), 576);
  // B_c = 100: params stream once per strip: 256 + 256 + 8 x 64.
  e = EvaluateGroup(fg, {0, 1}, Accel(100), CostRule::kOptimus);
  ASSERT_TRUE(e.feasible);
  EXPECT_FALSE(e.params_resident);
  EXPECT_EQ(e.dram_bytes(), 1024);
  // The prior works' rule (no ISOA, params on chip): 128 B a row + 64 fits 200, not 100.
  EXPECT_TRUE(EvaluateGroup(fg, {0, 1}, Accel(200), CostRule::kPriorWork).feasible);
  EXPECT_FALSE(EvaluateGroup(fg, {0, 1}, Accel(100), CostRule::kPriorWork).feasible);
  // conv1 alone at 200: 48 B a row + 32: 3 rows (3 strips); 256 + 512 + 32.
  e = EvaluateGroup(fg, {0}, Accel(200), CostRule::kOptimus);
  EXPECT_EQ(e.tiles, 3);
  EXPECT_EQ(e.dram_bytes(), 800);
}

TEST(OptimusSearch, MethodsOnTheChain) {
  const ir::Graph g = LoadNativeGraph(testing::kChainGraph);
  const FusionGraph fg = ChainFg(g);
  auto run = [&](FusionMethod m, int64_t b) {
    auto r = RunFusion(fg, Accel(b), m);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->dram_bytes : -1;
  };
  EXPECT_EQ(run(FusionMethod::kNoFuse, 200), 1600);
  EXPECT_EQ(run(FusionMethod::kOptimus, 200), 576);
  EXPECT_EQ(run(FusionMethod::kDnnvm, 200), 576);
  // 100 B: conv1 alone 800, conv2 alone (streamed, 8 strips) 1024; fused (streamed) 1024.
  EXPECT_EQ(run(FusionMethod::kNoFuse, 100), 1824);
  EXPECT_EQ(run(FusionMethod::kDnnvm, 100), 1824);
  EXPECT_EQ(run(FusionMethod::kEfficientS, 100), 1824);
  EXPECT_EQ(run(FusionMethod::kOptimus, 100), 1024);
}

TEST(OptimusSearch, TooSmallBufferNamesTheOperator) {
  const ir::Graph g = LoadNativeGraph(testing::kChainGraph);
  auto r = RunFusion(ChainFg(g), Accel(40), FusionMethod::kOptimus);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(r.status().message().find("'conv1'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("48 bytes"), std::string::npos) << r.status().message();
}

// A diamond with a skip: every group the DP returns runs after the groups it reads from, and
// optimus is never worse than a baseline.
TEST(OptimusSearch, DagGroupsAreAcyclicAndOptimusIsBest) {
  const ir::Graph g = LoadNativeGraph(testing::kBottleneckGraph);
  auto fg = BuildFusionGraph(g, analysis::ModelOrder(g), 1);
  ASSERT_TRUE(fg.ok());
  for (int64_t b : {1200, 2000, 4000, 9000}) {
    AccelModel m = Accel(b);
    m.t_c = 8;
    auto opt = RunFusion(*fg, m, FusionMethod::kOptimus);
    ASSERT_TRUE(opt.ok()) << opt.status().message();
    EXPECT_TRUE(opt->proved_optimal);
    std::vector<int> group_of(fg->vertices.size(), -1);
    for (size_t k = 0; k < opt->groups.size(); ++k)
      for (int v : opt->groups[k]) group_of[v] = static_cast<int>(k);
    for (size_t v = 0; v < fg->vertices.size(); ++v)
      for (int p : fg->vertices[v].preds) EXPECT_LE(group_of[p], group_of[v]);
    for (FusionMethod x : {FusionMethod::kOnline, FusionMethod::kDnnvm, FusionMethod::kEfficientS,
                           FusionMethod::kFusedLayer, FusionMethod::kNoFuse}) {
      auto r = RunFusion(*fg, m, x);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_LE(opt->dram_bytes, r->dram_bytes) << FusionMethodName(x) << " at " << b;
    }
  }
}

}  // namespace
}  // namespace sramplan::fusion
