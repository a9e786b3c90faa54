// Mutation tests: the verifier must reject plans broken in each way it claims to check.
#include "plan/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "driver/strategy.h"
#include "import/import.h"
#include "plan/plan.h"
#include "test_graphs.h"

namespace sramplan::plan {
namespace {

Plan MakePlan(const char* graph, const std::string& strategy) {
  auto g = import::ImportNativeJson(graph, "test", {});
  EXPECT_TRUE(g.ok());
  auto t = target::LoadTarget("stm32f411re");
  auto p = driver::RunStrategy(*g, *t, strategy, {});
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

Buffer& BufferOf(Plan& p, const std::string& tensor) {
  for (auto& b : p.buffers)
    if (b.tensor == tensor) return b;
  ADD_FAILURE() << "no buffer " << tensor;
  return p.buffers[0];
}

bool HasError(const VerifyResult& r, const std::string& needle) {
  for (const auto& e : r.errors)
    if (e.find(needle) != std::string::npos) return true;
  return false;
}

TEST(Verifier, AcceptsEveryStrategysPlan) {
  for (const char* graph : {testing::kChainGraph, testing::kBottleneckGraph})
    for (const auto& s : driver::StrategiesOf(driver::Family::kTensor)) {
      VerifyResult r = VerifyPlan(MakePlan(graph, s.name));
      EXPECT_TRUE(r.fits()) << s.name << "\n" << r.Summary();
    }
}

TEST(Verifier, RejectsOffsetMovedOntoLiveNeighbour) {
  Plan p = MakePlan(testing::kChainGraph, "tflm");
  // a and b are both live at step 1 (relu); put a where b is.
  BufferOf(p, "a").offset = BufferOf(p, "b").offset;
  VerifyResult r = VerifyPlan(p);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(HasError(r, "overlap while both are live at step 1")) << r.Summary();
}

TEST(Verifier, RejectsStepReorderedBeforeItsProducer) {
  Plan p = MakePlan(testing::kChainGraph, "tflm");
  std::swap(p.steps[0].ops, p.steps[1].ops);  // relu now runs before conv1 produces a
  VerifyResult r = VerifyPlan(p);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(HasError(r, "dependency violated")) << r.Summary();
}

TEST(Verifier, ReportsCapacityExceeded) {
  Plan p = MakePlan(testing::kChainGraph, "tflm");
  for (auto& l : p.levels)
    if (l.name == "sram") l.capacity = 1000;  // arena is 1024
  VerifyResult r = VerifyPlan(p);
  EXPECT_FALSE(r.capacity.empty());
  EXPECT_TRUE(HasError(r, "metrics.fits says true")) << r.Summary();  // the plan claimed to fit
  p.metrics.fits = false;
  r = VerifyPlan(p);
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.fits());
}

TEST(Verifier, RejectsNonResidentInput) {
  Plan p = MakePlan(testing::kChainGraph, "tflm");
  BufferOf(p, "b").last_step = 1;  // conv2 reads b at step 2
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "input 'b' of step 2 op 'conv2' is not resident")) << r.Summary();
}

TEST(Verifier, RejectsUndeclaredInplace) {
  Plan p = MakePlan(testing::kChainGraph, "inplace");
  BufferOf(p, "b").overlaps.clear();
  EXPECT_FALSE(VerifyPlan(p).ok());
}

TEST(Verifier, RejectsInplaceOnAnOpThatCannotDoIt) {
  Plan p = MakePlan(testing::kChainGraph, "inplace");
  p.steps[1].ops[0].type = "Softmax";  // not element-wise: reads all inputs before writing
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "no element-wise op")) << r.Summary();
}

TEST(Verifier, RejectsInplaceWhenInputStillLive) {
  Plan p = MakePlan(testing::kChainGraph, "inplace");
  BufferOf(p, "a").last_step = 2;
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "in-place needs 'a' to die at step 1")) << r.Summary();
}

TEST(Verifier, RejectsWrongUsedBytesAndUnknownNames) {
  Plan p = MakePlan(testing::kChainGraph, "tflm");
  p.levels[0].used_bytes += 1;
  p.steps[2].ops[0].inputs.push_back("ghost");
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "reports used_bytes"));
  EXPECT_TRUE(HasError(r, "unknown tensor 'ghost'"));
}

// The segment kernels keep part of a step's output in a workspace; the executor refuses an
// overlapped step without one, so the verifier does too.
TEST(Verifier, RejectsSegmentStepWithoutWorkspace) {
  Plan p = MakePlan(testing::kBottleneckGraph, "vmcu");
  ASSERT_TRUE(VerifyPlan(p).ok()) << VerifyPlan(p).Summary();
  auto ws = std::find_if(p.buffers.begin(), p.buffers.end(), [](const Buffer& b) { return b.tensor == "pw.workspace"; });
  ASSERT_NE(ws, p.buffers.end());
  p.buffers.erase(ws);
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "step 0 runs the segment kernels, which need a workspace, but no on-chip buffer of "
                          "'pw.workspace' is live at that step"))
      << r.Summary();
}

// The fused kernel's scratch (its depthwise tap table, its expansion's columns) is the tail of the
// step's workspace buffer: a workspace one byte short of it is refused, naming the bytes it needs.
TEST(Verifier, RejectsAWorkspaceWithoutTheKernelsScratch) {
  Plan p = MakePlan(testing::kBottleneckGraph, "vmcu");
  ASSERT_TRUE(VerifyPlan(p).ok()) << VerifyPlan(p).Summary();
  // x [1,10,10,16] -> 32 -> 3x3 depthwise -> 16 + x: caches (R*S + 1) * 32 + 16 (column cache) or
  // (R*W + 1) * 32 + 16 (row cache); scratch 3 + 8 * 9.
  const int64_t need = (p.steps[0].row_cache ? (3 * 10 + 1) * 32 : 10 * 32) + 16 + 75;
  Buffer& ws = BufferOf(p, "pw.workspace");
  ASSERT_GE(ws.bytes, need);
  ws.bytes = need - 1;
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "its workspace 'pw.workspace' has " + std::to_string(need - 1) +
                              " bytes but the segment-aware kernel needs " + std::to_string(need)))
      << r.Summary();
}

// A step's kind must agree with its ops; a fused-tiled step needs its group parameters.
TEST(Verifier, RejectsAKindThatDoesNotMatchItsOps) {
  Plan fused = MakePlan(testing::kBottleneckGraph, "vmcu");
  ASSERT_EQ(fused.steps[0].kind, StepKind::kFusedBottleneck);
  fused.steps[0].kind = StepKind::kSegment;
  EXPECT_TRUE(HasError(VerifyPlan(fused), "steps[0] (kind 'segment') must run one Conv, DepthwiseConv, Gemm or MatMul"))
      << VerifyPlan(fused).Summary();
  fused.steps[0].kind = StepKind::kOp;
  EXPECT_TRUE(HasError(VerifyPlan(fused), "its kind must be 'fused-bottleneck'")) << VerifyPlan(fused).Summary();

  Plan plain = MakePlan(testing::kChainGraph, "tflm");
  ASSERT_TRUE(VerifyPlan(plain).ok());
  plain.steps[0].kind = StepKind::kFusedBottleneck;
  EXPECT_TRUE(HasError(VerifyPlan(plain), "steps[0] (kind 'fused-bottleneck') must run Conv, DepthwiseConv, Conv [, Add]"))
      << VerifyPlan(plain).Summary();
  plain.steps[0].kind = StepKind::kOp;
  plain.steps[0].row_cache = true;
  EXPECT_TRUE(HasError(VerifyPlan(plain), "row_cache is set, but only a fused-bottleneck step")) << VerifyPlan(plain).Summary();
  plain.steps[0].row_cache = false;
  plain.steps[0].kind = StepKind::kFusedTiled;
  EXPECT_TRUE(HasError(VerifyPlan(plain), "steps[0] (kind 'fused-tiled'): group.tiles 0 and group.tile_channels 0"))
      << VerifyPlan(plain).Summary();

  // An in-place depthwise overlap on a step that is not an in-place depthwise step.
  Plan te = MakePlan(testing::kBottleneckGraph, "inplace");
  ASSERT_TRUE(VerifyPlan(te).ok());
  bool changed = false;
  for (Step& st : te.steps)
    if (st.kind == StepKind::kInPlaceDepthwise) {
      st.kind = StepKind::kOp;
      changed = true;
    }
  ASSERT_TRUE(changed);
  EXPECT_TRUE(HasError(VerifyPlan(te), "an in-place depthwise convolution is a step of kind 'inplace-depthwise'"))
      << VerifyPlan(te).Summary();
}

// Segment, fused and in-place steps name their workspace (params.workspace); it must be live on chip.
TEST(Verifier, RejectsAStepWithoutItsWorkspace) {
  Plan p = MakePlan(testing::kBottleneckGraph, "vmcu");
  p.steps[0].workspace.clear();
  VerifyResult r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "steps[0] (kind 'fused-bottleneck') names no workspace (params.workspace)")) << r.Summary();
  p.steps[0].workspace = "x";  // a live buffer, but the graph input's
  r = VerifyPlan(p);
  EXPECT_TRUE(HasError(r, "its workspace 'x' is a tensor of kind 'input', not a scratch buffer")) << r.Summary();

  Plan te = MakePlan(testing::kBottleneckGraph, "inplace");
  for (Step& st : te.steps)
    if (st.kind == StepKind::kInPlaceDepthwise) st.workspace = "dw.nothing";
  r = VerifyPlan(te);
  EXPECT_TRUE(HasError(r, "its workspace 'dw.nothing' has no on-chip buffer live at step")) << r.Summary();
}

TEST(PlanJson, RoundTripsAndStillVerifies) {
  Plan p = MakePlan(testing::kBottleneckGraph, "inplace");
  std::string text = PlanToJson(p);
  auto back = PlanFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(PlanToJson(*back), text);
  EXPECT_TRUE(VerifyPlan(*back).fits());
}

TEST(PlanJson, MalformedIsAnErrorNotACrash) {
  EXPECT_FALSE(PlanFromJson("").ok());
  EXPECT_FALSE(PlanFromJson("{\"schema_version\": 1}").ok());
  EXPECT_FALSE(PlanFromJson("{\"schema_version\": \"x\"}").ok());
  EXPECT_FALSE(PlanFromJson("[1,2,3]").ok());
}

}  // namespace
}  // namespace sramplan::plan
