// Halo caching (issue 14, beyond the paper): a fused group's halo rows either recomputed (the
// paper's tile relation: every map holds the rows backwards from the group outputs) or held in line
// buffers (K - S cached rows + the rows a strip adds), chosen per group by the cost model; the
// verifier re-derives the working set under the plan's `halo`, and the executor (which keeps halo
// rows in line buffers) runs line-buffer groups within the counted bytes, bit-exact.
#include <gtest/gtest.h>

#include <string>

#include "analysis/liveness.h"
#include "fusion/optimus_model.h"
#include "plan/plan_json.h"
#include "plan/verifier.h"
#include "test_util.h"
#include "tiled_test_util.h"

namespace sramplan::exec {
namespace {

// x[1,16,16,8] -> c1 (3x3, pad 1, 8->8) -> a -> c2 (3x3, pad 1, 8->8) -> y. int8, NHWC; rows of
// every map 128 B, weights 576 B each.
const char* kTwoConvs = R"({
  "format": "sramplan-graph", "version": 1, "name": "two_convs", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 16, 16, 8], "kind": "input"},
    {"name": "w1", "shape": [8, 3, 3, 8], "kind": "constant"},
    {"name": "w2", "shape": [8, 3, 3, 8], "kind": "constant"},
    {"name": "a"}, {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "c1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "activation": "relu"}},
    {"name": "c2", "type": "Conv", "inputs": ["a", "w2"], "outputs": ["y"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}}
  ]
})";

fusion::FusionGraph Fg(const ir::Graph& g) {
  auto fg = fusion::BuildFusionGraph(g, analysis::ModelOrder(g), 1);
  EXPECT_TRUE(fg.ok()) << fg.status().message();
  return fg.ok() ? *fg : fusion::FusionGraph{};
}

// Two 3x3 stride-1 convs, output strip r = 16 / 4 = 4 rows: recompute holds y r, a r + 2, x r + 4
// rows; line buffers y r, a r + 2 (2 cached + r new), x r + 2.
TEST(Halo, LineBufferHoldsTheNewRowsAndKMinusSCachedRows) {
  const ir::Graph g = testing::LoadNativeGraph(kTwoConvs);
  const fusion::FusionGraph fg = Fg(g);
  ASSERT_EQ(fg.vertices.size(), 2u);
  fusion::AccelModel m;
  m.buffer_bytes = 1 << 20;
  m.t_c = 16;
  const std::vector<char> no_isoa = {0, 0};
  const int64_t row = 16 * 8;
  EXPECT_EQ(fusion::GroupFmapBytes(fg, {0, 1}, 4, no_isoa, m, fusion::Halo::kRecompute), (4 + 6 + 8) * row);
  EXPECT_EQ(fusion::GroupFmapBytes(fg, {0, 1}, 4, no_isoa, m, fusion::Halo::kLineBuffer), (4 + 6 + 6) * row);
  // One strip per image: both hold the whole maps.
  EXPECT_EQ(fusion::GroupFmapBytes(fg, {0, 1}, 1, no_isoa, m, fusion::Halo::kLineBuffer), 3 * 16 * row);
  // One operator: no halo to cache, the counts agree.
  EXPECT_EQ(fusion::GroupFmapBytes(fg, {1}, 4, {0}, m, fusion::Halo::kLineBuffer),
            fusion::GroupFmapBytes(fg, {1}, 4, {0}, m, fusion::Halo::kRecompute));
}

// Rows a strip adds and the first strip's rows of a window: stride 2, 3x3, top padding 1.
TEST(Halo, NewAndFirstRowsOfAWindow) {
  fusion::RowMap w;
  w.rule = fusion::RowRule::kWindow;
  w.stride = 2;
  w.k_eff = 3;
  w.pad_top = 1;
  w.in_rows = 32;
  w.out_rows = 16;
  EXPECT_EQ(w.Apply(4, 4), 9);      // (4 - 1) * 2 + 3
  EXPECT_EQ(w.NewRows(4, 4), 8);    // 4 * 2
  EXPECT_EQ(w.FirstRows(4, 4), 8);  // (4 - 1) * 2 - 1 + 3
  w.pad_top = 0;
  EXPECT_EQ(w.FirstRows(4, 4), 9);
}

// At 2100 B the two convs fuse only with line buffers: 16 strips of one row hold y 1 + a 3 + x 3
// rows (896 B) + the weights (1152 B) = 2048 B, where recompute needs x 5 rows (2304 B); apart, a
// (2048 B) would go to DRAM and back. The plan records "line-buffer", the verifier accepts it and
// rejects it relabelled, and the executor runs the plan's strips bit-exact with the planned DRAM
// bytes.
TEST(Halo, PlanVerifyAndRunALineBufferGroup) {
  for (const char* s : {"optimus", "efficient-s", "fused-layer"}) {
    SCOPED_TRACE(s);
    ir::Graph g = testing::LoadNativeGraph(kTwoConvs);
    ir::ApplyDtype(g, ir::DataType::kInt8);
    const plan::Plan p = tiled_test::Plan(g, tiled_test::Accel(2100), s, "int8");
    ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
    ASSERT_EQ(p.steps.size(), 1u);
    const plan::TiledGroup& tg = p.steps[0].tiled;
    EXPECT_EQ(tg.halo, "line-buffer");
    EXPECT_EQ(tg.tiles, 16);
    EXPECT_TRUE(tg.params_resident);
    EXPECT_EQ(tg.buffer_bytes, 1152 + 7 * 128);
    EXPECT_EQ(tg.dram_read_bytes, 2048 + 1152);  // x and the weights once
    EXPECT_EQ(tg.dram_write_bytes, 2048);
    const tiled_test::RunData rd = tiled_test::MakeRunData(g, true);
    std::vector<std::string> notes;
    EXPECT_EQ(tiled_test::RunBoth(g, p, rd.quant(), rd.data, &notes), "");
    for (const std::string& n : notes) EXPECT_EQ(n.find("instead of the plan"), std::string::npos) << n;
    plan::Plan bad = p;
    bad.steps[0].tiled.halo = "recompute";
    const plan::VerifyResult r1 = plan::VerifyPlan(bad);
    EXPECT_FALSE(r1.ok());
    EXPECT_NE(r1.Summary().find("working set"), std::string::npos) << r1.Summary();
    bad.steps[0].tiled.halo = "cached";
    const plan::VerifyResult r2 = plan::VerifyPlan(bad);
    EXPECT_NE(r2.Summary().find("group.halo 'cached'"), std::string::npos) << r2.Summary();
  }
}

// plan.json round-trips the field; a plan without it reads as "recompute".
TEST(Halo, PlanJsonField) {
  ir::Graph g = testing::LoadNativeGraph(kTwoConvs);
  ir::ApplyDtype(g, ir::DataType::kInt8);
  const plan::Plan p = tiled_test::Plan(g, tiled_test::Accel(2100), "optimus", "int8");
  const std::string j = plan::PlanToJson(p);
  EXPECT_NE(j.find("\"halo\": \"line-buffer\""), std::string::npos);
  auto back = plan::PlanFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->steps[0].tiled.halo, "line-buffer");
}

}  // namespace
}  // namespace sramplan::exec
