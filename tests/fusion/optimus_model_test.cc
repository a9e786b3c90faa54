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
  // Alg. 2 at a 1-row tile: {conv1, relu} is two ops, which the executor cannot slice, so only
  // conv2 applies ISOA (y 32 -> 16 B a row; y is read by no op of the group).
  EXPECT_EQ(IsoaDecisions(fg, {0, 1}, Accel(200)), (std::vector<char>{0, 1}));
  // Working set per row: x 32 + b 64 + y 16 = 112 B. B_c = 200: params (64 B) stay: 112 + 64 fits
  // at one row (8 strips); Eq. 3: 256 + 256 + 64.
  GroupEval e = EvaluateGroup(fg, {0, 1}, Accel(200), CostRule::kOptimus);
  ASSERT_TRUE(e.feasible);
  EXPECT_TRUE(e.params_resident);
  EXPECT_EQ(e.tiles, 8);
  EXPECT_EQ(e.buffer_bytes, 176);
  EXPECT_EQ(e.dram_bytes(), 576);
  // B_c = 120: params stream once per strip: 256 + 256 + 8 x 64.
  e = EvaluateGroup(fg, {0, 1}, Accel(120), CostRule::kOptimus);
  ASSERT_TRUE(e.feasible);
  EXPECT_FALSE(e.params_resident);
  EXPECT_EQ(e.dram_bytes(), 1024);
  // The prior works' rule (no ISOA, params on chip): 128 B a row + 64 fits 200, not 120.
  EXPECT_TRUE(EvaluateGroup(fg, {0, 1}, Accel(200), CostRule::kPriorWork).feasible);
  EXPECT_FALSE(EvaluateGroup(fg, {0, 1}, Accel(120), CostRule::kPriorWork).feasible);
  // conv1 alone at 200: 96 B a row + 32: 1 row (8 strips); 256 + 512 + 32.
  e = EvaluateGroup(fg, {0}, Accel(200), CostRule::kOptimus);
  EXPECT_EQ(e.tiles, 8);
  EXPECT_EQ(e.dram_bytes(), 800);
}

// ISOA read inside a group only where the executor runs it: a one-op Conv whose readers are
// group-1 Convs with a one-row window, which hold int32 partial sums (4 B an element of their
// output rows). x[1,8,8,4] -> c1 (1x1, 32 channels, relu fused) -> b -> c2 -> y[1,8,8,4].
TEST(OptimusModel, IsoaInsideOnlyForOneRowReadersWithPartialSums) {
  auto graph = [](const char* kernel, const char* pads) {
    return LoadNativeGraph(std::string(R"({
      "format": "sramplan-graph", "version": 1, "name": "isoa_pair", "layout": "NHWC", "dtype": "int8",
      "tensors": [
        {"name": "x", "shape": [1, 8, 8, 4], "kind": "input"},
        {"name": "w1", "shape": [32, 1, 1, 4], "kind": "constant"},
        {"name": "w2", "shape": [4, )") + kernel + R"(, 32], "kind": "constant"},
        {"name": "b"}, {"name": "y", "kind": "output"}
      ],
      "ops": [
        {"name": "c1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["b"],
         "attrs": {"kernel_shape": [1, 1], "activation": "relu"}},
        {"name": "c2", "type": "Conv", "inputs": ["b", "w2"], "outputs": ["y"],
         "attrs": {"kernel_shape": [)" + kernel + R"(], "pads": [)" + pads + R"(]}}
      ]
    })");
  };
  // c2 1x1: c1 with ISOA holds b as 16 B a row (2 channels) + c2's sums 8 x 4 x 4 = 128 B, less
  // than b's 256 B: ISOA. Working set per row: x 32 + b 16 + sums 128 + y 32 = 208 B.
  const ir::Graph one = graph("1, 1", "0, 0, 0, 0");
  auto fg = BuildFusionGraph(one, analysis::ModelOrder(one), 1);
  ASSERT_TRUE(fg.ok());
  EXPECT_TRUE(fg->vertices[0].isoa_source);
  EXPECT_TRUE(fg->vertices[1].isoa_reader);
  EXPECT_EQ(IsoaDecisions(*fg, {0, 1}, Accel(1 << 20)), (std::vector<char>{1, 0}));
  EXPECT_EQ(GroupFmapBytesIsoa(*fg, {0, 1}, 8, Accel(1 << 20)), 208);
  // c2 3x3: its window is three rows high (halo), the slices would not stay: no ISOA for c1.
  const ir::Graph three = graph("3, 3", "1, 1, 1, 1");
  fg = BuildFusionGraph(three, analysis::ModelOrder(three), 1);
  ASSERT_TRUE(fg.ok());
  EXPECT_FALSE(fg->vertices[1].isoa_reader);
  EXPECT_EQ(IsoaDecisions(*fg, {0, 1}, Accel(1 << 20))[0], 0);
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
  // 120 B: conv1 alone (96 B a row + 32: streamed, 8 strips) 1024, conv2 alone (b 64 + y 16 with
  // ISOA + 32 resident) 800; fused (112 B a row, streamed) 1024.
  EXPECT_EQ(run(FusionMethod::kNoFuse, 120), 1824);
  EXPECT_EQ(run(FusionMethod::kDnnvm, 120), 1824);
  EXPECT_EQ(run(FusionMethod::kEfficientS, 120), 1824);
  EXPECT_EQ(run(FusionMethod::kOptimus, 120), 1024);
}

TEST(OptimusSearch, TooSmallBufferNamesTheOperator) {
  const ir::Graph g = LoadNativeGraph(testing::kChainGraph);
  auto r = RunFusion(ChainFg(g), Accel(40), FusionMethod::kOptimus);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(r.status().message().find("'conv1'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("96 bytes"), std::string::npos) << r.status().message();
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
