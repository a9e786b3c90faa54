// Tile-by-tile execution of Optimus groups (exec/exec_tiled.h): the strips cover every output row
// once, the windows hold what the consumers need, and the arena run inside the global buffer equals
// the naive run bit for bit (float32 and int8) with the DRAM bytes the plan predicts, on a small
// DAG (window, stride, dilation, pooling, residual Add, Concat, global pooling, Gemm) and on a
// bundled CNN.
#include <gtest/gtest.h>

#include <string>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/lower_step.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_util.h"
#include "tiled_test_util.h"
#include "transform/canonicalize.h"

namespace sramplan::exec {
namespace {

const char* kFused[] = {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"};

// x -> c1 (3x3) -> a; a -> c2 (3x3 stride 2) -> b; a -> mp (3x3 stride 2) -> m; add(b, m) -> s;
// s -> c3 (1x1) -> c; concat(s, c) -> k; k -> dw (3x3 depthwise, dilation 2) -> d; gap -> flatten
// -> fc -> y.
const char* kDagGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "tiled_dag", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 24, 24, 8], "kind": "input"},
    {"name": "w1", "shape": [16, 3, 3, 8], "kind": "constant"},
    {"name": "w2", "shape": [16, 3, 3, 16], "kind": "constant"},
    {"name": "w3", "shape": [8, 1, 1, 16], "kind": "constant"},
    {"name": "wd", "shape": [24, 3, 3, 1], "kind": "constant"},
    {"name": "wf", "shape": [10, 24], "kind": "constant"},
    {"name": "a"}, {"name": "b"}, {"name": "m"}, {"name": "s"}, {"name": "c"}, {"name": "k"}, {"name": "d"},
    {"name": "g", "shape": [1, 1, 1, 24]}, {"name": "f", "shape": [1, 24]},
    {"name": "y", "shape": [1, 10], "kind": "output"}
  ],
  "ops": [
    {"name": "c1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "activation": "relu"}},
    {"name": "c2", "type": "Conv", "inputs": ["a", "w2"], "outputs": ["b"],
     "attrs": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}},
    {"name": "mp", "type": "MaxPool", "inputs": ["a"], "outputs": ["m"],
     "attrs": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}},
    {"name": "add", "type": "Add", "inputs": ["b", "m"], "outputs": ["s"]},
    {"name": "c3", "type": "Conv", "inputs": ["s", "w3"], "outputs": ["c"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "cat", "type": "Concat", "inputs": ["s", "c"], "outputs": ["k"], "attrs": {"axis": 3}},
    {"name": "dw", "type": "Conv", "inputs": ["k", "wd"], "outputs": ["d"],
     "attrs": {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2], "dilations": [2, 2], "group": 24}},
    {"name": "gap", "type": "GlobalAveragePool", "inputs": ["d"], "outputs": ["g"]},
    {"name": "flat", "type": "Flatten", "inputs": ["g"], "outputs": ["f"]},
    {"name": "fc", "type": "Gemm", "inputs": ["f", "wf"], "outputs": ["y"], "attrs": {"transB": 1}}
  ]
})";

using tiled_test::Accel;
using tiled_test::Plan;

using tiled_test::RunBoth;

int64_t MaxTiles(const plan::Plan& p) {
  int64_t m = 0;
  for (const auto& st : p.steps) m = std::max(m, st.tiled.tiles);
  return m;
}

// Every op's rows are computed exactly once, in order, strip by strip; windows never exceed the
// tensor; the group's DRAM bytes equal the plan's when its parameters are resident or it runs the
// plan's strips with every op in every strip.
TEST(ExecTiled, ScheduleCoversEveryRowOnce) {
  ir::Graph g = testing::LoadNativeGraph(kDagGraph);
  const target::Target t = Accel(8 << 10);
  const plan::Plan p = Plan(g, t, "optimus", "int8");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  ASSERT_GT(MaxTiles(p), 1);  // the 8 KiB buffer forces strips
  const StepLowering l(g, p, nullptr);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    auto sc = LowerStep(l, static_cast<int>(s));
    ASSERT_TRUE(sc.ok()) << sc.status().message();
    ASSERT_TRUE(sc->tiled);
    const TiledSchedule& ts = *sc->tiled;
    EXPECT_LE(ts.working_bytes, 8 << 10);
    EXPECT_GE(ts.tiles, p.steps[s].tiled.tiles);
    EXPECT_EQ(ts.strips.size(), static_cast<size_t>(ts.tiles));
    std::vector<int64_t> next(ts.ops.size(), 0);
    for (const TiledStrip& st : ts.strips)
      for (const TiledRun& r : st.runs) {
        EXPECT_EQ(r.out_begin, next[r.op]) << ts.ops[r.op]->name;
        EXPECT_GT(r.out_end, r.out_begin);
        next[r.op] = r.out_end;
      }
    for (size_t i = 0; i < ts.ops.size(); ++i) EXPECT_EQ(next[i], ts.tensors[ts.op_info[i].out[0]].rows);
    for (const TiledTensor& x : ts.tensors) {
      EXPECT_GE(x.window_rows, 1);
      EXPECT_LE(x.window_rows, x.rows);
    }
  }
}

TEST(ExecTiled, SmallDagBitExactInEveryFusionStrategy) {
  for (const char* dtype : {"float32", "int8"}) {
    ir::Graph g = testing::LoadNativeGraph(kDagGraph);
    ir::ApplyDtype(g, std::string(dtype) == "int8" ? ir::DataType::kInt8 : ir::DataType::kFloat32);
    const tiled_test::RunData rd = tiled_test::MakeRunData(g, std::string(dtype) == "int8");
    const std::optional<QuantizedModel>& q = rd.q;
    const ModelData& data = rd.data;
    // (float32 at 16 KiB: the global pooling's whole input does not fit; RefusesNchwAndBadGroups.)
    for (int64_t kib : {16, 32, 64}) {
      if (kib == 16 && std::string(dtype) == "float32") continue;
      const target::Target t = Accel(kib << 10);
      for (const char* s : kFused) {
        SCOPED_TRACE(std::string(dtype) + " " + s + " " + std::to_string(kib) + " KiB");
        const plan::Plan p = Plan(g, t, s, dtype);
        ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
        std::vector<std::string> notes;
        const std::string diff = RunBoth(g, p, q ? &*q : nullptr, data, &notes);
        std::string all;
        for (const auto& n : notes) all += n + "\n";
        EXPECT_EQ(diff, "") << all;
      }
    }
  }
}

// A bundled CNN (MobileNet-V2, channels-last) in the baselines' plans at 128 KB: every group runs
// strip by strip in the buffer, the outputs equal the naive run, and the counted DRAM bytes equal
// the plan's exactly.
TEST(ExecTiled, MobileNetV2BaselinesBitExactWithPlannedDramBytes) {
  auto gi = import::ImportModel(testing::SourcePath("models/onnx/mobilenet_v2.onnx"), {});
  ASSERT_TRUE(gi.ok()) << gi.status().message();
  ir::Graph g = std::move(gi).value();
  ASSERT_TRUE(transform::Canonicalize(&g, {}).ok());
  ir::ApplyDtype(g, ir::DataType::kInt8);
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_TRUE(q.ok()) << q.status().message();
  const target::Target t = Accel(128 << 10);
  for (const char* s : {"dnnvm", "efficient-s", "fused-layer", "nofuse"}) {
    SCOPED_TRACE(s);
    const plan::Plan p = Plan(g, t, s, "int8");
    ASSERT_TRUE(plan::VerifyPlan(p).ok());
    ASSERT_GT(MaxTiles(p), 1);
    std::vector<std::string> notes;
    EXPECT_EQ(RunBoth(g, p, &*q, q->data, &notes), "");
    EXPECT_TRUE(notes.empty()) << notes.front();
  }
}

// SqueezeNet (channels-last, int8) in the nofuse and dnnvm plans at 128 KB: the int8
// global average pooling streams (its 13x13x1000 input would not fit whole), strided windows that
// never read an input's last row read only the rows they use (as the plan counts), and every group
// runs bit-exact with the plan's DRAM bytes.
TEST(ExecTiled, SqueezeNetBitExactWithPlannedDramBytes) {
  for (const char* model : {"squeezenet1_0"}) {
    auto gi = import::ImportModel(testing::SourcePath(std::string("models/onnx/") + model + ".onnx"), {});
    ASSERT_TRUE(gi.ok()) << gi.status().message();
    ir::Graph g = std::move(gi).value();
    ASSERT_TRUE(transform::Canonicalize(&g, {}).ok());
    ir::ApplyDtype(g, ir::DataType::kInt8);
    auto q = QuantizeModel(g, kDefaultSeed, nullptr);
    ASSERT_TRUE(q.ok()) << q.status().message();
    for (const char* s : {"nofuse", "dnnvm"}) {
      SCOPED_TRACE(std::string(model) + " " + s);
      const plan::Plan p = Plan(g, Accel(128 << 10), s, "int8");
      ASSERT_TRUE(plan::VerifyPlan(p).ok());
      std::vector<std::string> notes;
      EXPECT_EQ(RunBoth(g, p, &*q, q->data, &notes), "");
    }
  }
}

// The schedule refuses what it cannot run: an NCHW graph's feature maps (rows are not contiguous),
// a plan whose group has no strips, and a group whose windows fit the buffer at no strip count
// (float32 at 16 KiB: GlobalAveragePool runs on its whole 13824-byte input, which the cost model
// streams).
TEST(ExecTiled, RefusesNchwAndBadGroups) {
  ir::Graph g = testing::LoadNativeGraph(kDagGraph);
  {
    ir::Graph f = g;
    ir::ApplyDtype(f, ir::DataType::kFloat32);
    const plan::Plan p = Plan(f, Accel(16 << 10), "dnnvm", "float32");
    auto d = MakeModelData(f, kDefaultSeed);
    ASSERT_TRUE(d.ok());
    auto run = RunArena(f, p, *d, nullptr);
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.status().code(), StatusCode::kMismatch);
    EXPECT_NE(run.status().message().find("no strip count up to 12 fits"), std::string::npos)
        << run.status().message();
  }
  const plan::Plan p = Plan(g, Accel(16 << 10), "nofuse", "int8");
  plan::Plan bad = p;
  bad.steps[0].tiled.tiles = 0;
  auto sc = LowerStep(StepLowering(g, bad, nullptr), 0);
  ASSERT_FALSE(sc.ok());
  EXPECT_EQ(sc.status().code(), StatusCode::kMismatch);
  ir::Graph nchw = g;
  nchw.layout = ir::Layout::kNCHW;
  auto refused = BuildTiledSchedule(nchw, p, 0, {&nchw.op(ir::OpId(0))}, 16 << 10);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("--canonicalize"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace sramplan::exec
