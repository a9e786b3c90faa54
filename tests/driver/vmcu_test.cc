// The vmcu strategy: every MCUNet block plans, passes the verifier, never needs more RAM than the
// TinyEngine baseline; the verifier's byte-level check of a segment overlap agrees with the ISL shift
// and rejects a shift one step too small.
#include <gtest/gtest.h>

#include "driver/strategy.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

ir::Graph LoadBlock(const std::string& name) {
  auto g = import::ImportModel(testing::SourcePath("models/mcunet_blocks/" + name + ".graph.json"), {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  return std::move(g).value();
}

plan::Plan Plan(const ir::Graph& g, const std::string& strategy) {
  auto t = target::LoadTarget("stm32f411re");
  PlanOptions o;
  auto p = RunStrategy(g, *t, strategy, o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

TEST(Vmcu, EveryBlockPlansVerifiesAndNeverLosesToTinyEngine) {
  int fused = 0, overlaps = 0;
  std::vector<std::string> blocks = {"mcunet-320kb-imagenet"};
  for (int i = 1; i <= 8; ++i) blocks.push_back("S" + std::to_string(i));
  for (int i = 1; i <= 17; ++i) blocks.push_back("B" + std::to_string(i));
  for (const auto& b : blocks) {
    ir::Graph g = LoadBlock(b);
    plan::Plan v = Plan(g, "vmcu");
    plan::Plan te = Plan(g, "tinyengine");
    EXPECT_TRUE(plan::VerifyPlan(v).ok()) << b << "\n" << plan::VerifyPlan(v).Summary();
    if (b != "mcunet-320kb-imagenet") {
      EXPECT_LE(v.metrics.arena_bytes, te.metrics.arena_bytes) << b;
    }
    for (const auto& st : v.steps) fused += st.ops.size() > 1;
    for (const auto& buf : v.buffers)
      for (const auto& o : buf.overlaps) overlaps += o.reason == "segment-overlap";
  }
  EXPECT_GT(fused, 15);
  EXPECT_GT(overlaps, 20);
}

// B2 (vMCU's TinyEngine bottleneck, 247808 B): the fused block needs about a quarter of it.
// The whole MCUNet-320KB-ImageNet: the stem is fused with the first block (its 123904-byte output
// never exists), the arena reaches the strategy's lower bound, below the vMCU paper's 102.7 KB,
// (vmcu-small: a circular pool at the lower bound, row caches inside it where it still places), and vmcu takes the faster
// row-cache kernel on the fused steps where the target has room (see vmcu_fast_test.cc).
TEST(Vmcu, WholeMcunetBelowThePaperWithRowCachesWhereTheyFit) {
  ir::Graph g = LoadBlock("mcunet-320kb-imagenet");
  EXPECT_LE(Plan(g, "vmcu").metrics.arena_bytes, 102700);
  const plan::Plan p = Plan(g, "vmcu-small");
  EXPECT_EQ(p.metrics.arena_bytes, p.metrics.lower_bound_bytes);
  EXPECT_LE(p.metrics.arena_bytes, 102700);  // the vMCU paper: 102.7 KB
  ASSERT_FALSE(p.steps.empty());
  EXPECT_EQ(p.steps[0].ops.size(), 3u);
  EXPECT_EQ(p.steps[0].ops[0].name, "b1_stem");
  const plan::Plan fast = Plan(g, "vmcu");
  EXPECT_GT(fast.metrics.arena_bytes, p.metrics.arena_bytes);
  int rows = 0, fused = 0;
  for (const auto& st : fast.steps) {
    fused += st.ops.size() > 1;
    rows += st.row_cache ? 1 : 0;
  }
  EXPECT_GT(rows, 0);
  EXPECT_LE(rows, fused);
}

TEST(Vmcu, B2FallsFarBelowTinyEngine) {
  ir::Graph g = LoadBlock("B2");
  EXPECT_EQ(Plan(g, "tinyengine").metrics.arena_bytes, 247808);
  EXPECT_LT(Plan(g, "vmcu").metrics.arena_bytes, 247808 / 3);
}

// One 3x3 convolution, 20x20x16 -> 20x20x16, pad 1: output pixel (p, q) is written after reading
// the window whose first pixel is (p-1, q-1); the pixel written next-to-last before the window of
// (p, q+1) starts at (p-1, q) needs the output to start 16 * (W + 1) = 336 bytes below the input
// (ISL: 21 segments of 16 bytes). The verifier accepts 336 and rejects 320.
TEST(Vmcu, VerifierRecomputesTheConvShift) {
  const char* text = R"({"format": "sramplan-graph", "version": 1, "name": "conv", "layout": "NHWC", "dtype": "int8",
    "tensors": [{"name": "x", "shape": [1, 20, 20, 16], "kind": "input"},
                {"name": "w", "shape": [16, 3, 3, 16], "kind": "constant"},
                {"name": "a", "shape": [1, 20, 20, 16], "kind": "activation"},
                {"name": "w2", "shape": [16, 3, 3, 16], "kind": "constant"},
                {"name": "y", "shape": [1, 20, 20, 16], "kind": "output"}],
    "ops": [{"name": "c1", "type": "Conv", "inputs": ["x", "w"], "outputs": ["a"],
             "attrs": {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "group": 1}},
            {"name": "c2", "type": "Conv", "inputs": ["a", "w2"], "outputs": ["y"],
             "attrs": {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "group": 1}}]})";
  auto g = import::ImportNativeJson(text, "conv", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  plan::Plan p = Plan(*g, "vmcu");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  int checked = 0;
  for (auto& b : p.buffers)
    for (auto& o : b.overlaps) {
      if (o.reason != "segment-overlap") continue;
      EXPECT_EQ(o.shift, -336) << b.tensor;
      ++checked;
      // Move the output 16 bytes up (shift 320): the verifier must refuse.
      plan::Plan bad = p;
      for (auto& bb : bad.buffers)
        if (bb.tensor == b.tensor) {
          bb.offset += 16;
          for (auto& oo : bb.overlaps) oo.shift += 16;
        }
      for (auto& l : bad.levels)
        for (const auto& bb : bad.buffers)
          if (bb.level == l.name) l.used_bytes = std::max(l.used_bytes, bb.offset + bb.bytes);
      auto r = plan::VerifyPlan(bad);
      EXPECT_FALSE(r.ok());
      EXPECT_NE(r.Summary().find("needs 336"), std::string::npos) << r.Summary();
    }
  EXPECT_GE(checked, 1);
}

// Eight tight 3x3 convolutions: the chain is laid out modulo a circular pool at the strategy's lower
// bound (6736 B: input + the 336-byte shift), where a linear arena drifts by 336 bytes per layer.
// The verifier checks the wrapped buffers and the modular shifts, and rejects the same plan
// without its pool or with a wrapped output one segment too close.
TEST(Vmcu, CircularPoolForATightChain) {
  auto g = import::ImportNativeJson(testing::ConvChainGraph(8), "conv_chain", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  plan::Plan p = Plan(*g, "vmcu");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  ASSERT_EQ(p.pools.size(), 1u);
  EXPECT_EQ(p.pools[0].bytes, p.metrics.arena_bytes);
  EXPECT_EQ(p.metrics.arena_bytes, p.metrics.lower_bound_bytes);
  EXPECT_EQ(p.metrics.arena_bytes, 6400 + 336 + 16);  // + the one-pixel workspace
  int wrapped = 0;
  for (const auto& b : p.buffers) wrapped += plan::Wraps(p, b);
  EXPECT_GT(wrapped, 0);
  // Without the pool, the wrapped buffers run past the arena.
  plan::Plan no_pool = p;
  no_pool.pools.clear();
  EXPECT_FALSE(plan::VerifyPlan(no_pool).ok());
  // A wrapped output 16 bytes closer to its input (modulo the pool) is refused.
  int refused = 0;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    if (b.overlaps.empty() || b.overlaps[0].reason != "segment-overlap") continue;
    plan::Plan bad = p;
    auto& bb = bad.buffers[i];
    bb.offset = (bb.offset + 16) % p.pools[0].bytes;
    bb.overlaps[0].shift += 16;
    auto r = plan::VerifyPlan(bad);
    EXPECT_FALSE(r.ok()) << b.tensor;
    refused += r.Summary().find("needs 336") != std::string::npos;
  }
  EXPECT_GT(refused, 0);
}

// A Conv whose window has more taps than the segment kernels hold (AlexNet's 11x11 stem: 121 > 64)
// runs as a plain step; the verifier refuses it as a segment step. A residual Add and a Relu left
// outside any fused group take TinyEngine's in-place rule (output over the dying input), so vmcu
// never needs more than tinyengine for them.
TEST(Vmcu, WideWindowsRunPlainAndElementwiseOpsInPlace) {
  const std::string text = R"({
    "format": "sramplan-graph", "version": 1, "name": "wide", "layout": "NHWC", "dtype": "int8",
    "tensors": [
      {"name": "x", "shape": [1, 23, 23, 3], "kind": "input"},
      {"name": "w", "shape": [8, 11, 11, 3], "kind": "constant"},
      {"name": "c", "shape": [1, 5, 5, 8]},
      {"name": "w2", "shape": [8, 3, 3, 8], "kind": "constant"},
      {"name": "d", "shape": [1, 5, 5, 8]},
      {"name": "a", "shape": [1, 5, 5, 8]},
      {"name": "y", "shape": [1, 5, 5, 8], "kind": "output"}
    ],
    "ops": [
      {"name": "stem", "type": "Conv", "inputs": ["x", "w"], "outputs": ["c"],
       "attrs": {"kernel_shape": [11, 11], "strides": [4, 4], "pads": [2, 2, 2, 2]}},
      {"name": "conv", "type": "Conv", "inputs": ["c", "w2"], "outputs": ["d"],
       "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
      {"name": "add", "type": "Add", "inputs": ["d", "c"], "outputs": ["a"]},
      {"name": "relu", "type": "Relu", "inputs": ["a"], "outputs": ["y"]}
    ]
  })";
  ir::Graph g = testing::LoadNativeGraph(text);
  plan::Plan v = Plan(g, "vmcu");
  ASSERT_EQ(v.steps.size(), 4u);
  EXPECT_EQ(v.steps[0].kind, plan::StepKind::kOp);
  EXPECT_TRUE(plan::VerifyPlan(v).ok()) << plan::VerifyPlan(v).Summary();
  int inplace = 0;
  for (const auto& b : v.buffers)
    for (const auto& o : b.overlaps) inplace += o.reason == "inplace-elementwise";
  EXPECT_EQ(inplace, 2);  // the Add over its dying input, the Relu over the Add's output
  EXPECT_LE(v.metrics.arena_bytes, Plan(g, "tinyengine").metrics.arena_bytes);
  // It runs in its arena bit-exact (the in-place ops through their plain kernels).
  auto run = testing::Cli("verify " + testing::WriteTempFile("wide.graph.json", text) +
                          " --target stm32f411re --strategy vmcu");
  EXPECT_EQ(run.rc, 0) << run.all();
  // The same step declared as a segment step is refused for its window.
  plan::Plan bad = v;
  bad.steps[0].kind = plan::StepKind::kSegment;
  auto r = plan::VerifyPlan(bad);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.Summary().find("121 taps"), std::string::npos) << r.Summary();
}

// MobileNet-V1's chain (stem conv, dw, pw, dw stride 2 with TFLite's SAME padding at the bottom and
// right only, pw): the stem + dw + pw and the pw + dw + pw patterns overlap. The grouping with the
// smallest largest step fuses pw + dw + pw, so the 24x24x16 map of the first pw never exists; the
// strided depthwise with asymmetric padding is a segment kernel too. Runs bit-exact in its arena.
TEST(Vmcu, MobilenetV1ChainFusesTheBetterAlignment) {
  const std::string text = R"({
    "format": "sramplan-graph", "version": 1, "name": "mnv1", "layout": "NHWC", "dtype": "int8",
    "tensors": [
      {"name": "x", "shape": [1, 48, 48, 1], "kind": "input"},
      {"name": "w0", "shape": [8, 3, 3, 1], "kind": "constant"},
      {"name": "a", "shape": [1, 24, 24, 8]},
      {"name": "w1", "shape": [8, 3, 3, 1], "kind": "constant"},
      {"name": "b", "shape": [1, 24, 24, 8]},
      {"name": "w2", "shape": [16, 1, 1, 8], "kind": "constant"},
      {"name": "c", "shape": [1, 24, 24, 16]},
      {"name": "w3", "shape": [16, 3, 3, 1], "kind": "constant"},
      {"name": "d", "shape": [1, 12, 12, 16]},
      {"name": "w4", "shape": [32, 1, 1, 16], "kind": "constant"},
      {"name": "y", "shape": [1, 12, 12, 32], "kind": "output"}
    ],
    "ops": [
      {"name": "stem", "type": "Conv", "inputs": ["x", "w0"], "outputs": ["a"],
       "attrs": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 0, 1, 1]}},
      {"name": "dw1", "type": "Conv", "inputs": ["a", "w1"], "outputs": ["b"],
       "attrs": {"kernel_shape": [3, 3], "group": 8, "pads": [1, 1, 1, 1]}},
      {"name": "pw1", "type": "Conv", "inputs": ["b", "w2"], "outputs": ["c"], "attrs": {"kernel_shape": [1, 1]}},
      {"name": "dw2", "type": "Conv", "inputs": ["c", "w3"], "outputs": ["d"],
       "attrs": {"kernel_shape": [3, 3], "group": 16, "strides": [2, 2], "pads": [0, 0, 1, 1]}},
      {"name": "pw2", "type": "Conv", "inputs": ["d", "w4"], "outputs": ["y"], "attrs": {"kernel_shape": [1, 1]}}
    ]
  })";
  ir::Graph g = testing::LoadNativeGraph(text);
  plan::Plan v = Plan(g, "vmcu");
  EXPECT_TRUE(plan::VerifyPlan(v).ok()) << plan::VerifyPlan(v).Summary();
  ASSERT_EQ(v.steps.size(), 3u);  // stem, dw1, then pw1 + dw2 + pw2 fused
  EXPECT_EQ(v.steps[0].ops.size(), 1u);
  EXPECT_EQ(v.steps[1].ops.size(), 1u);
  EXPECT_EQ(v.steps[2].ops.size(), 3u);
  EXPECT_EQ(v.steps[2].ops[0].name, "pw1");
  for (const auto& b : v.buffers) EXPECT_NE(b.tensor, "c") << "the 24x24x16 map must never be stored";
  // Below the largest single layer (pw1: 4,608 + 9,216 B) and below TinyEngine.
  EXPECT_LT(v.metrics.arena_bytes, 24 * 24 * 8 + 24 * 24 * 16);
  EXPECT_LT(v.metrics.arena_bytes, Plan(g, "tinyengine").metrics.arena_bytes);
  auto run = testing::Cli("verify " + testing::WriteTempFile("mnv1.graph.json", text) +
                          " --target stm32f411re --strategy vmcu");
  EXPECT_EQ(run.rc, 0) << run.all();
  EXPECT_NE(run.out.find("outputs bit-identical"), std::string::npos) << run.all();
}

}  // namespace
}  // namespace sramplan::driver
