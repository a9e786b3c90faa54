// Pad inside Optimus groups (issue 14): a constant Pad of a feature map follows the strips like a
// window of one row with padding (fusion/optimus_model.cc), the plan records its pads, the verifier
// re-derives its rows from them, and the executor runs it strip by strip (a strip entirely in the
// padding reads no input row) bit for bit against the naive run, with the DRAM bytes the plan
// predicts. A one-input Slice that drops leading rows (NASNet's factorised reduction) runs strip by
// strip too. A reflect Pad stays a whole-input op (the executor runs such an op once on its whole
// operands, so it is not run here).
#include <gtest/gtest.h>

#include <string>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "fusion/optimus_dp.h"
#include "fusion/optimus_model.h"
#include "plan/verifier.h"
#include "test_util.h"
#include "tiled_test_util.h"

namespace sramplan::exec {
namespace {

// x -> c1 (3x3) -> a; pad1 (1 row / column each side) -> p; avg (3x3, no padding) -> v;
// pad2 (3 rows on top, 1 below) -> q; c2 (5x1) -> y1; c3 (1x1 of v) -> y2.
std::string PadGraph(const std::string& mode2) {
  return R"({
  "format": "sramplan-graph", "version": 1, "name": "tiled_pad", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 20, 20, 8], "kind": "input"},
    {"name": "w1", "shape": [16, 3, 3, 8], "kind": "constant"},
    {"name": "w2", "shape": [8, 5, 1, 16], "kind": "constant"},
    {"name": "w3", "shape": [8, 1, 1, 16], "kind": "constant"},
    {"name": "a"}, {"name": "p"}, {"name": "v"}, {"name": "q"},
    {"name": "y1", "kind": "output"}, {"name": "y2", "kind": "output"}
  ],
  "ops": [
    {"name": "c1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "activation": "relu"}},
    {"name": "pad1", "type": "Pad", "inputs": ["a"], "outputs": ["p"],
     "attrs": {"pads": [0, 1, 1, 0, 0, 1, 1, 0], "mode": "constant"}},
    {"name": "avg", "type": "AveragePool", "inputs": ["p"], "outputs": ["v"], "attrs": {"kernel_shape": [3, 3]}},
    {"name": "pad2", "type": "Pad", "inputs": ["v"], "outputs": ["q"],
     "attrs": {"pads": [0, 3, 0, 0, 0, 1, 0, 0], "mode": ")" + mode2 + R"("}},
    {"name": "c2", "type": "Conv", "inputs": ["q", "w2"], "outputs": ["y1"], "attrs": {"kernel_shape": [5, 1]}},
    {"name": "c3", "type": "Conv", "inputs": ["v", "w3"], "outputs": ["y2"], "attrs": {"kernel_shape": [1, 1]}}
  ]
})";
}

using tiled_test::Accel;
using tiled_test::Plan;

// The step running op `name` (-1 when none).
int StepOf(const plan::Plan& p, const std::string& name) {
  for (const auto& st : p.steps)
    for (const auto& op : st.ops)
      if (op.name == name) return st.index;
  return -1;
}

// The fusion model: a constant Pad maps r output rows to r input rows shifted by its top padding
// (a window of one row, the shift held as halo: r + max(top, bottom) rows), so a
// group of Pad and its pooling needs rows, not the whole input; a reflect Pad reads its whole input.
TEST(OptimusPad, ConstantPadIsAWindowOfOneRow) {
  for (const char* mode : {"constant", "reflect"}) {
    SCOPED_TRACE(mode);
    ir::Graph g = testing::LoadNativeGraph(PadGraph(mode));
    analysis::Schedule order;
    for (const ir::Op& op : g.ops()) order.push_back(op.id);
    auto fg = fusion::BuildFusionGraph(g, order, 1);
    ASSERT_TRUE(fg.ok()) << fg.status().message();
    for (const fusion::Vertex& v : fg->vertices) {
      if (g.op(v.ops.front()).type != "Pad") continue;
      ASSERT_EQ(v.in_maps.size(), 1u);
      const fusion::RowMap& m = v.in_maps[0];
      if (v.name == "pad1") {
        EXPECT_EQ(m.rule, fusion::RowRule::kWindow);
        EXPECT_EQ(m.pad_top, 1);
        EXPECT_EQ(m.Apply(4, 5), 5);  // the shift of one row held as halo
        EXPECT_EQ(m.RowsRead(), 20);  // every input row is copied
      } else if (std::string(mode) == "constant") {
        EXPECT_EQ(m.rule, fusion::RowRule::kWindow);
        EXPECT_EQ(m.pad_top, 3);
        EXPECT_EQ(m.Apply(2, 12), 5);
      } else {
        EXPECT_EQ(m.rule, fusion::RowRule::kWhole);
        EXPECT_EQ(m.Apply(2, 12), 20);  // all of v
      }
    }
  }
}

// Plans with Pad inside multi-strip groups verify, record the pads, and run bit-exact (float32 and
// int8) with the predicted DRAM bytes, in every fusion strategy and at several buffer sizes.
TEST(OptimusPad, PadInsideGroupsBitExactWithPlannedDramBytes) {
  const char* fused[] = {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"};
  int pad_in_multi_strip_group = 0;
  const char* mode = "constant";
  {
    for (const char* dtype : {"int8", "float32"}) {
      ir::Graph g = testing::LoadNativeGraph(PadGraph(mode));
      const bool int8 = std::string(dtype) == "int8";
      ir::ApplyDtype(g, int8 ? ir::DataType::kInt8 : ir::DataType::kFloat32);
      const tiled_test::RunData rd = tiled_test::MakeRunData(g, int8);
      for (int64_t kib : {8, 16, 64}) {
        for (const char* s : fused) {
          SCOPED_TRACE(std::string(mode) + " " + dtype + " " + s + " " + std::to_string(kib) + " KiB");
          const plan::Plan p = Plan(g, Accel(kib << 10), s, dtype);
          if (p.steps.empty()) continue;
          const auto v = plan::VerifyPlan(p);
          ASSERT_TRUE(v.ok()) << v.Summary();
          for (const auto& st : p.steps)
            for (const auto& op : st.ops)
              if (op.type == "Pad") {
                EXPECT_EQ(op.attrs.at("pad_mode"), std::vector<int64_t>{0});
                EXPECT_EQ(op.attrs.at("pads").size(), 8u);
                if (st.ops.size() > 1 && st.tiled.tiles > 1)
                  ++pad_in_multi_strip_group;
              }
          std::vector<std::string> notes;
          const std::string diff = tiled_test::RunBoth(g, p, rd.quant(), rd.data, &notes);
          std::string said;
          for (const auto& n : notes) said += n + "\n";
          EXPECT_EQ(diff, "") << said;
        }
      }
    }
  }
  EXPECT_GT(pad_in_multi_strip_group, 0);  // the Pads ran strip by strip inside groups
}

// NASNet's factorised reduction: a Slice that drops the first row and column (output row r is
// input row r + 1) beside a strided 1x1 convolution of the same input, concatenated. The Slice runs
// strip by strip (the NAS graphs' only Slices; whole, its 32x32x144 input alone exceeds 128 KB).
const char* kShiftGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "tiled_shift", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 20, 20, 8], "kind": "input"},
    {"name": "w1", "shape": [16, 3, 3, 8], "kind": "constant"},
    {"name": "w2", "shape": [8, 1, 1, 16], "kind": "constant"},
    {"name": "w3", "shape": [8, 1, 1, 16], "kind": "constant"},
    {"name": "a"}, {"name": "s"}, {"name": "b"}, {"name": "c"}, {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "c1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "activation": "relu"}},
    {"name": "shift", "type": "Slice", "inputs": ["a"], "outputs": ["s"],
     "attrs": {"starts": [1, 1], "ends": [20, 20], "axes": [1, 2]}},
    {"name": "c2", "type": "Conv", "inputs": ["s", "w2"], "outputs": ["b"],
     "attrs": {"kernel_shape": [1, 1], "strides": [2, 2], "pads": [0, 0, 1, 1]}},
    {"name": "c3", "type": "Conv", "inputs": ["a", "w3"], "outputs": ["c"],
     "attrs": {"kernel_shape": [1, 1], "strides": [2, 2]}},
    {"name": "cat", "type": "Concat", "inputs": ["c", "b"], "outputs": ["y"], "attrs": {"axis": 3}}
  ]
})";

// The model holds the Slice's shift as halo (r output rows take r + 1 input rows), and the
// verifier re-derives it from the recorded starts and axes: a plan whose Slice says it starts at
// row 0 no longer matches the group's working set.
TEST(OptimusPad, ShiftSliceHaloInModelAndVerifier) {
  ir::Graph g = testing::LoadNativeGraph(kShiftGraph);
  analysis::Schedule order;
  for (const ir::Op& op : g.ops()) order.push_back(op.id);
  auto fg = fusion::BuildFusionGraph(g, order, 1);
  ASSERT_TRUE(fg.ok());
  bool seen = false;
  for (const fusion::Vertex& v : fg->vertices)
    if (v.name == "shift") {
      seen = true;
      EXPECT_EQ(v.in_maps[0].rule, fusion::RowRule::kWindow);
      EXPECT_EQ(v.in_maps[0].Apply(3, 4), 4);
      EXPECT_EQ(v.in_maps[0].RowsRead(), 20);
    }
  EXPECT_TRUE(seen);
  const plan::Plan p = Plan(g, Accel(4 << 10), "optimus", "int8");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  const int s = StepOf(p, "shift");
  ASSERT_GE(s, 0);
  ASSERT_GT(p.steps[s].tiled.tiles, 1);
  plan::Plan bad = p;
  for (auto& op : bad.steps[s].ops)
    if (op.name == "shift") {
      EXPECT_EQ(op.attrs.at("starts"), (std::vector<int64_t>{1, 1}));
      op.attrs["starts"] = {0, 0};
    }
  const auto v = plan::VerifyPlan(bad);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.Summary().find("working set"), std::string::npos) << v.Summary();
}

TEST(OptimusPad, ShiftSliceRunsStripByStripBitExact) {
  const char* fused[] = {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"};
  ir::Graph g = testing::LoadNativeGraph(kShiftGraph);
  ir::ApplyDtype(g, ir::DataType::kInt8);
  const tiled_test::RunData rd = tiled_test::MakeRunData(g, /*int8=*/true);
  ASSERT_TRUE(rd.q.has_value());
  int slice_strips = 0;
  for (int64_t kib : {4, 8, 16}) {
    for (const char* s : fused) {
      SCOPED_TRACE(std::string(s) + " " + std::to_string(kib) + " KiB");
      const plan::Plan p = Plan(g, Accel(kib << 10), s, "int8");
      ASSERT_FALSE(p.steps.empty());
      ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
      const int st = StepOf(p, "shift");
      ASSERT_GE(st, 0);
      slice_strips += p.steps[st].tiled.tiles > 1;
      EXPECT_EQ(tiled_test::RunBoth(g, p, rd.quant(), rd.data), "");
    }
  }
  EXPECT_GT(slice_strips, 0);
}

// The verifier derives a Pad's rows from its recorded pads and mode: a plan that says the Pad
// reflects (so it reads its whole input) no longer matches the group's working set.
TEST(OptimusPad, VerifierChecksPadRows) {
  ir::Graph g = testing::LoadNativeGraph(PadGraph("constant"));
  const plan::Plan p = Plan(g, Accel(8 << 10), "optimus", "int8");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  const int s = StepOf(p, "pad2");
  ASSERT_GE(s, 0);
  ASSERT_GT(p.steps[s].tiled.tiles, 1);
  plan::Plan bad = p;
  for (auto& op : bad.steps[s].ops)
    if (op.name == "pad2") op.attrs["pad_mode"] = {1};
  const auto v = plan::VerifyPlan(bad);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.Summary().find("working set"), std::string::npos) << v.Summary();
}

}  // namespace
}  // namespace sramplan::exec
