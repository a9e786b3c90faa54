// ISOA read inside an Optimus group (exec/exec_tiled_isoa.h): a Conv or Concat source computes
// its output T_c channels at a time, its group-1 Conv readers sum int32 partial sums per
// input-channel slice in the global buffer; the int8 run equals the naive run bit for bit with the
// DRAM bytes the plan predicts. The model and the verifier count the partial sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "exec/exec_tiled.h"
#include "exec/lower_step.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_util.h"
#include "tiled_test_util.h"
#include "transform/canonicalize.h"

namespace sramplan::exec {
namespace {

using tiled_test::Accel;
using tiled_test::Plan;
using tiled_test::RunBoth;

// x -> c1 (3x3, 64 channels) -> a; a -> r1 (1x1) -> b and a -> r2 (1x1, stride 2) -> d (two
// readers of a); x -> c4 (3x3, 40) -> e; cat(b, e) -> k; k -> r3 (1x3) -> y (a Concat source).
const char* kIsoaGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "isoa_dag", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 20, 20, 24], "kind": "input"},
    {"name": "w1", "shape": [64, 3, 3, 24], "kind": "constant"},
    {"name": "wr1", "shape": [24, 1, 1, 64], "kind": "constant"},
    {"name": "wr2", "shape": [16, 1, 1, 64], "kind": "constant"},
    {"name": "w4", "shape": [40, 3, 3, 24], "kind": "constant"},
    {"name": "wr3", "shape": [8, 1, 3, 64], "kind": "constant"},
    {"name": "a"}, {"name": "b"}, {"name": "e"}, {"name": "k"},
    {"name": "d", "kind": "output"}, {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "c1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "activation": "relu"}},
    {"name": "r1", "type": "Conv", "inputs": ["a", "wr1"], "outputs": ["b"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "r2", "type": "Conv", "inputs": ["a", "wr2"], "outputs": ["d"],
     "attrs": {"kernel_shape": [1, 1], "strides": [2, 2]}},
    {"name": "c4", "type": "Conv", "inputs": ["x", "w4"], "outputs": ["e"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
    {"name": "cat", "type": "Concat", "inputs": ["b", "e"], "outputs": ["k"], "attrs": {"axis": 3}},
    {"name": "r3", "type": "Conv", "inputs": ["k", "wr3"], "outputs": ["y"],
     "attrs": {"kernel_shape": [1, 3], "pads": [0, 1, 0, 1], "activation": "relu"}}
  ]
})";

// Sliced tensors (ISOA outputs read inside the group) in the int8 schedules of `p`.
int SlicedTensors(const ir::Graph& g, const plan::Plan& p, const QuantizedModel* q) {
  int n = 0;
  const StepLowering l(g, p, q);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    if (p.steps[s].kind != plan::StepKind::kFusedTiled) continue;
    auto sc = LowerStep(l, static_cast<int>(s));
    EXPECT_TRUE(sc.ok()) << sc.status().message();
    if (!sc.ok() || !sc->tiled) continue;
    for (const TiledTensor& t : sc->tiled->tensors) n += t.sliced;
  }
  return n;
}

std::string Join(const std::vector<std::string>& v) {
  std::string all;
  for (const auto& n : v) all += n + "\n";
  return all;
}

// The small DAG over a range of buffers: wherever the plan applies ISOA inside a group the int8
// run slices it, bit-exact with the planned DRAM bytes, at the plan's strips (no note).
TEST(ExecTiledIsoa, SmallDagSlicedBitExactWithPlannedBytes) {
  ir::Graph g = testing::LoadNativeGraph(kIsoaGraph);
  const tiled_test::RunData rd = tiled_test::MakeRunData(g, true);
  int sliced = 0;
  for (int64_t kib : {6, 8, 10, 12, 16, 24, 32}) {
    for (const char* s : {"optimus", "optimus-online"}) {
      SCOPED_TRACE(std::string(s) + " " + std::to_string(kib) + " KiB");
      const plan::Plan p = Plan(g, Accel(kib << 10), s, "int8");
      ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
      sliced += SlicedTensors(g, p, rd.quant());
      std::vector<std::string> notes;
      EXPECT_EQ(RunBoth(g, p, rd.quant(), rd.data, &notes), "");
      EXPECT_TRUE(notes.empty()) << Join(notes);
    }
  }
  EXPECT_GT(sliced, 0) << "no plan read an ISOA output inside a group";
}

// float32: integer partial sums are the exact path, so a float plan reads no ISOA output inside a
// group (its sums would depend on the slice order) and runs bit-exact with the planned bytes.
TEST(ExecTiledIsoa, Float32PlansReadNoIsoaInsideAGroup) {
  ir::Graph g = testing::LoadNativeGraph(kIsoaGraph);
  ir::ApplyDtype(g, ir::DataType::kFloat32);
  const tiled_test::RunData rd = tiled_test::MakeRunData(g, false);
  for (int64_t kib : {24, 32, 48, 64}) {
    SCOPED_TRACE(std::to_string(kib) + " KiB");
    const plan::Plan p = Plan(g, Accel(kib << 10), "optimus", "float32");
    ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
    for (const auto& st : p.steps)
      for (const auto& op : st.ops)
        for (const auto& in : op.inputs)
          for (const auto& src : st.ops)
            if (std::count(src.outputs.begin(), src.outputs.end(), in))
              EXPECT_EQ(std::count(st.tiled.isoa.begin(), st.tiled.isoa.end(), src.name), 0) << src.name;
    std::vector<std::string> notes;
    EXPECT_EQ(RunBoth(g, p, nullptr, rd.data, &notes), "");
  }
}

// Real models (int8, optimus): SqueezeNet at 128 KB (4 groups) and GoogLeNet at 64 KB (3 groups)
// read ISOA outputs (Concat sources feeding 1x1 convolutions) and run them sliced, bit-exact, with
// the DRAM bytes of the plan at its strips.
TEST(ExecTiledIsoa, RealModelsSlicedBitExactWithPlannedBytes) {
  const std::pair<const char*, int64_t> cases[] = {{"squeezenet1_0", 128}, {"googlenet", 64}};
  for (const auto& [model, kib] : cases) {
    SCOPED_TRACE(model);
    auto gi = import::ImportModel(testing::SourcePath(std::string("models/onnx/") + model + ".onnx"), {});
    ASSERT_TRUE(gi.ok()) << gi.status().message();
    ir::Graph g = std::move(gi).value();
    ASSERT_TRUE(transform::Canonicalize(&g, {}).ok());
    ir::ApplyDtype(g, ir::DataType::kInt8);
    auto q = QuantizeModel(g, kDefaultSeed, nullptr);
    ASSERT_TRUE(q.ok()) << q.status().message();
    const plan::Plan p = Plan(g, Accel(kib << 10), "optimus", "int8");
    ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
    EXPECT_GT(SlicedTensors(g, p, &*q), 0);
    std::vector<std::string> notes;
    EXPECT_EQ(RunBoth(g, p, &*q, q->data, &notes), "");
    EXPECT_TRUE(notes.empty()) << Join(notes);
  }
}

// The verifier derives the readers' int32 partial sums itself: a plan whose group leaves them out
// of its working set, or whose workspace is too small for them, is rejected.
TEST(ExecTiledIsoa, VerifierCountsPartialSums) {
  ir::Graph g = testing::LoadNativeGraph(kIsoaGraph);
  for (int64_t kib : {6, 8, 10, 12, 16, 24, 32}) {
    const plan::Plan p = Plan(g, Accel(kib << 10), "optimus", "int8");
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const plan::TiledGroup& tg = p.steps[s].tiled;
      bool reads_isoa = false;
      for (const auto& op : p.steps[s].ops)
        for (const auto& in : op.inputs)
          for (const auto& src : p.steps[s].ops)
            for (const auto& out : src.outputs)
              reads_isoa = reads_isoa || (out == in && std::count(tg.isoa.begin(), tg.isoa.end(), src.name));
      if (!reads_isoa) continue;
      // Without the sums (4 B an element of the reader's rows: at least one row of 4 channels).
      plan::Plan bad = p;
      bad.steps[s].tiled.buffer_bytes -= 16;
      const plan::VerifyResult r = plan::VerifyPlan(bad);
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.Summary().find("int32 partial sums of ISOA readers"), std::string::npos) << r.Summary();
      // A workspace that holds the group's windows but not all of its sums.
      plan::Plan small = p;
      for (auto& b : small.buffers)
        if (b.tensor == small.steps[s].workspace) b.bytes = tg.buffer_bytes - 16;
      const plan::VerifyResult r2 = plan::VerifyPlan(small);
      ASSERT_FALSE(r2.ok());
      EXPECT_NE(r2.Summary().find("the group's tiles need " + std::to_string(tg.buffer_bytes)), std::string::npos)
          << r2.Summary();
      return;
    }
  }
  FAIL() << "no plan read an ISOA output inside a group";
}

}  // namespace
}  // namespace sramplan::exec
