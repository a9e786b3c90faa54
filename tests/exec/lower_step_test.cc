// exec::LowerStep, the one lowering of a plan step: the records it gives a fused bottleneck, a
// segment step and an in-place depthwise step, and what it refuses.
#include "exec/lower_step.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <string>

#include "driver/strategy.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "test_graphs.h"

namespace sramplan::exec {
namespace {

ir::Graph Load(const std::string& text) {
  auto g = import::ImportNativeJson(text, "t", {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  ir::Graph out = std::move(g).value();
  ir::ApplyDtype(out, ir::DataType::kInt8);
  return out;
}

plan::Plan MakePlan(const ir::Graph& g, const std::string& strategy) { return testing::PlanInt8(g, strategy); }

QuantizedModel Quantized(const ir::Graph& g) {
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  EXPECT_TRUE(q.ok()) << q.status().message();
  return std::move(q).value();
}

const plan::Buffer* BufferOf(const plan::Plan& p, const std::string& tensor) {
  for (const auto& b : p.buffers)
    if (b.tensor == tensor) return &b;
  return nullptr;
}

// The common arguments of a segment-kernel call: the pool, the starts and the workspace.
void ExpectSegmentCall(const plan::Plan& p, const StepCalls& sc) {
  ASSERT_TRUE(sc.segment.has_value());
  EXPECT_TRUE(sc.op_calls.empty());
  const KernelCall& k = *sc.segment;
  ASSERT_EQ(k.args.size(), Signature(k.fn).params.size());
  const plan::Step& st = p.steps[sc.step];
  ASSERT_NE(sc.workspace, nullptr);
  EXPECT_EQ(sc.workspace->tensor, st.workspace);
  const auto& pool = std::get<SegPoolArg>(k.args[0]);
  int64_t used = 0;
  for (const auto& l : p.levels)
    if (l.name == sc.input->level) used = l.used_bytes;
  EXPECT_EQ(int64_t{pool.pool_segments} * pool.segment_bytes, used);
  EXPECT_EQ(std::get<int64_t>(k.args[1]), sc.input->offset);
  EXPECT_EQ(std::get<int64_t>(k.args[2]), sc.output->offset);
  const auto& ws = std::get<CallRef>(k.args[5]);
  EXPECT_EQ(ws.base, CallRef::Base::kScratch);
  EXPECT_EQ(std::get<int64_t>(k.args[6]), sc.workspace->bytes);
}

TEST(LowerStep, FusedBottleneckIsOneSegmentKernelCall) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  const QuantizedModel q = Quantized(g);
  plan::Plan p = MakePlan(g, "vmcu");
  ASSERT_EQ(p.steps[0].kind, plan::StepKind::kFusedBottleneck);
  const StepLowering l(g, p, &q);
  auto sc = LowerStep(l, 0);
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_EQ(sc->ops.size(), 4u);
  ExpectSegmentCall(p, *sc);
  const KernelCall& k = *sc->segment;
  EXPECT_EQ(k.fn, KernelFn::kSegBottleneckS8);
  EXPECT_EQ(std::string(Signature(k.fn).name), "sp_seg_bottleneck_s8");
  const auto& shape = std::get<sp_seg_bottleneck_shape_t>(k.args[3]);
  EXPECT_EQ(shape.c_in, 16);
  EXPECT_EQ(shape.c_mid, 32);
  EXPECT_EQ(shape.has_residual, 1);
  EXPECT_EQ(shape.row_cache, 0);
  EXPECT_TRUE(std::get<SegBottleneckS8>(k.args[4]).residual);
  EXPECT_GE(sc->workspace->bytes, sp_seg_bottleneck_workspace_bytes(&shape));
  // The step's row_cache parameter picks the row-cache kernel, which needs a larger workspace.
  p.steps[0].row_cache = true;
  auto rows = LowerStep(StepLowering(g, p, &q), 0);
  if (rows.ok()) {
    EXPECT_EQ(std::get<sp_seg_bottleneck_shape_t>(rows->segment->args[3]).row_cache, 1);
  } else {
    EXPECT_EQ(rows.status().code(), StatusCode::kMismatch) << rows.status().message();
    EXPECT_NE(rows.status().message().find("bytes of workspace"), std::string::npos) << rows.status().message();
  }
}

TEST(LowerStep, SegmentStepRunsTheSegmentConvKernel) {
  ir::Graph g = Load(testing::ConvChainGraph(4));
  const QuantizedModel q = Quantized(g);
  const plan::Plan p = MakePlan(g, "vmcu");
  const StepLowering l(g, p, &q);
  int segment = 0;
  for (int s = 0; s < static_cast<int>(p.steps.size()); ++s) {
    if (p.steps[s].kind != plan::StepKind::kSegment) continue;
    ++segment;
    auto sc = LowerStep(l, s);
    ASSERT_TRUE(sc.ok()) << sc.status().message();
    ExpectSegmentCall(p, *sc);
    EXPECT_TRUE(sc->segment->fn == KernelFn::kSegConvS8 || sc->segment->fn == KernelFn::kSegDepthwiseS8);
    const SegLayerS8& layer = std::get<SegLayerS8>(sc->segment->args[4]);
    EXPECT_FALSE(layer.fc);
    EXPECT_EQ(std::get<sp_seg_conv_shape_t>(sc->segment->args[3]).c_out, layer.c_out);
  }
  EXPECT_GT(segment, 0);
  // Without its workspace the step does not run.
  for (int s = 0; s < static_cast<int>(p.steps.size()); ++s) {
    if (p.steps[s].kind != plan::StepKind::kSegment) continue;
    plan::Plan bad = p;
    bad.steps[s].workspace.clear();
    auto sc = LowerStep(StepLowering(g, bad, &q), s);
    ASSERT_FALSE(sc.ok());
    EXPECT_EQ(sc.status().code(), StatusCode::kMismatch);
    EXPECT_NE(sc.status().message().find("no workspace (params.workspace)"), std::string::npos)
        << sc.status().message();
    break;
  }
}

TEST(LowerStep, InPlaceDepthwiseRunsThroughItsScratch) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  const QuantizedModel q = Quantized(g);
  const plan::Plan p = MakePlan(g, "inplace");
  const StepLowering l(g, p, &q);
  int s = -1;
  for (int i = 0; i < static_cast<int>(p.steps.size()); ++i)
    if (p.steps[i].kind == plan::StepKind::kInPlaceDepthwise) s = i;
  ASSERT_GE(s, 0);
  auto sc = LowerStep(l, s);
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_FALSE(sc->segment.has_value());
  ASSERT_EQ(sc->op_calls.size(), 1u);
  const LoweredOp& lo = sc->op_calls[0];
  EXPECT_TRUE(lo.in_place);
  ASSERT_NE(sc->workspace, nullptr);
  EXPECT_EQ(sc->workspace, BufferOf(p, "dw.scratch"));
  // One block over the 32 channels: a convolution into the scratch, then a copy over the input.
  ASSERT_EQ(lo.calls.blocks.size(), 1u);
  EXPECT_EQ(lo.calls.blocks[0].count, 32);
  ASSERT_EQ(lo.calls.blocks[0].calls.size(), 2u);
  EXPECT_EQ(lo.calls.blocks[0].calls[0].fn, KernelFn::kConvS8);
  EXPECT_EQ(std::get<CallRef>(lo.calls.blocks[0].calls[0].args.back()).base, CallRef::Base::kScratch);
  EXPECT_EQ(lo.calls.blocks[0].calls[1].fn, KernelFn::kCopy);
  // The same step as a plain op: the depthwise convolution still writes over its input, and without
  // the in-place kind it has no scratch.
  plan::Plan plain = p;
  plain.steps[s].kind = plan::StepKind::kOp;
  auto refused = LowerStep(StepLowering(g, plain, &q), s);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("writes over its input but the plan gives it no scratch buffer"),
            std::string::npos)
      << refused.status().message();
  // float32: the same decision, no records (RunDepthwiseInPlace runs it).
  auto f32 = LowerStep(StepLowering(g, p, nullptr), s);
  ASSERT_TRUE(f32.ok()) << f32.status().message();
  EXPECT_TRUE(f32->op_calls[0].in_place);
  EXPECT_TRUE(f32->op_calls[0].calls.blocks.empty());
}

TEST(LowerStep, RefusesReservedKindsAndFloatSegmentSteps) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  const QuantizedModel q = Quantized(g);
  plan::Plan p = MakePlan(g, "vmcu");
  auto f32 = LowerStep(StepLowering(g, p, nullptr), 0);
  ASSERT_FALSE(f32.ok());
  EXPECT_EQ(f32.status().code(), StatusCode::kUnsupported);
  p.steps[0].kind = plan::StepKind::kModule;
  auto sc = LowerStep(StepLowering(g, p, &q), 0);
  ASSERT_FALSE(sc.ok());
  EXPECT_EQ(sc.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(sc.status().message().find("not supported yet"), std::string::npos) << sc.status().message();
  // A fused-tiled step without its group parameters (exec_tiled_test.cc runs real ones).
  p.steps[0].kind = plan::StepKind::kFusedTiled;
  auto tiled = LowerStep(StepLowering(g, p, &q), 0);
  ASSERT_FALSE(tiled.ok());
  EXPECT_EQ(tiled.status().code(), StatusCode::kMismatch) << tiled.status().message();
}

}  // namespace
}  // namespace sramplan::exec
