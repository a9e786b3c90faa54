#include "analysis/step_liveness.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "driver/strategy.h"
#include "exec/kernels.h"
#include "import/import.h"
#include "support/int_math.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::analysis {
namespace {

ir::Graph Bottleneck() {
  auto g = import::ImportNativeJson(testing::kBottleneckGraph, "bottleneck", {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

ir::OpId OpNamed(const ir::Graph& g, const std::string& name) {
  for (const ir::Op& op : g.ops())
    if (op.name == name) return op.id;
  ADD_FAILURE() << "no op " << name;
  return ir::OpId();
}

ir::TensorId TensorNamed(const ir::Graph& g, const std::string& name) {
  return *g.FindTensor(name);
}

TEST(StepLiveness, SingleOpStepsAreTheOpLevelLiveness) {
  ir::Graph g = Bottleneck();
  const Schedule sched = ModelOrder(g);
  StepLiveness s = ComputeStepLiveness(g, SingleOpSteps(sched));
  Liveness lv = ComputeLiveness(g, sched);
  ASSERT_EQ(s.buffers.size(), lv.buffers.size());
  for (size_t i = 0; i < lv.buffers.size(); ++i) {
    EXPECT_EQ(s.buffers[i].tensor, lv.buffers[i].tensor);
    EXPECT_EQ(s.buffers[i].bytes, lv.buffers[i].bytes);
    EXPECT_EQ(s.buffers[i].first_step, lv.buffers[i].first_step);
    EXPECT_EQ(s.buffers[i].last_step, lv.buffers[i].last_step);
    EXPECT_EQ(s.buffers[i].op_buffer, static_cast<int>(i));
  }
}

TEST(StepLiveness, FusedIntermediatesOwnNoBuffer) {
  ir::Graph g = Bottleneck();
  // Step 0: pw, dw, pj (fused); step 1: add.
  StepGroups steps = {{OpNamed(g, "pw"), OpNamed(g, "dw"), OpNamed(g, "pj")}, {OpNamed(g, "add")}};
  StepLiveness s = ComputeStepLiveness(g, steps);
  std::map<std::string, StepBuffer> by_name;
  for (const StepBuffer& b : s.buffers) by_name[g.tensor(b.tensor).name] = b;
  EXPECT_EQ(by_name.count("e"), 0u);
  EXPECT_EQ(by_name.count("d"), 0u);
  EXPECT_EQ(s.BufferOfTensor(TensorNamed(g, "e")), -1);
  ASSERT_EQ(by_name.count("x"), 1u);
  ASSERT_EQ(by_name.count("p"), 1u);  // read by the next step
  ASSERT_EQ(by_name.count("y"), 1u);
  EXPECT_EQ(by_name["x"].first_step, 0);
  EXPECT_EQ(by_name["x"].last_step, 1);  // the residual add reads it
  EXPECT_EQ(by_name["p"].first_step, 0);
  EXPECT_EQ(by_name["p"].last_step, 1);
  EXPECT_EQ(by_name["y"].first_step, 1);
  EXPECT_EQ(by_name["p"].bytes, 1600);
  EXPECT_EQ(s.step_of_op[OpNamed(g, "dw").value()], 0);
  EXPECT_EQ(s.step_of_op[OpNamed(g, "add").value()], 1);
  EXPECT_EQ(s.buffers[s.BufferOfTensor(TensorNamed(g, "p"))].tensor, TensorNamed(g, "p"));
  // The whole block as one step: p is an intermediate too; x (a graph input) and y are not.
  StepLiveness all = ComputeStepLiveness(
      g, {{OpNamed(g, "pw"), OpNamed(g, "dw"), OpNamed(g, "pj"), OpNamed(g, "add")}});
  ASSERT_EQ(all.buffers.size(), 2u);
  EXPECT_EQ(g.tensor(all.buffers[0].tensor).name, "x");
  EXPECT_EQ(g.tensor(all.buffers[1].tensor).name, "y");
}

TEST(StepLiveness, GroupIntermediateAgreesWithTheExecutorsRule) {
  ir::Graph g = Bottleneck();
  std::vector<std::vector<ir::OpId>> groups = {
      {OpNamed(g, "pw"), OpNamed(g, "dw")},
      {OpNamed(g, "pw"), OpNamed(g, "dw"), OpNamed(g, "pj")},
      {OpNamed(g, "dw"), OpNamed(g, "pj"), OpNamed(g, "add")},
      {OpNamed(g, "pw"), OpNamed(g, "dw"), OpNamed(g, "pj"), OpNamed(g, "add")}};
  int intermediates = 0;
  for (const auto& group : groups) {
    std::vector<const ir::Op*> ops;
    for (ir::OpId id : group) ops.push_back(&g.op(id));
    for (const ir::Tensor& t : g.tensors()) {
      const bool ours = IsGroupIntermediate(g, group, t.id);
      EXPECT_EQ(ours, exec::IsFusedIntermediate(g, ops, t.id)) << t.name;
      intermediates += ours;
    }
  }
  EXPECT_EQ(intermediates, 1 + 2 + 2 + 3);  // e; e, d; d, p; e, d, p
}

// The vmcu strategy's plan has exactly the step-level buffers (aligned) plus its workspaces.
TEST(StepLiveness, MatchesTheVmcuPlansBuffers) {
  auto t = target::LoadTarget("stm32f411re");
  ASSERT_TRUE(t.ok());
  int fused_steps = 0;
  for (const char* block : {"B1", "B5", "S3", "mcunet-320kb-imagenet"}) {
    auto gi = import::ImportModel(
        testing::SourcePath(std::string("models/mcunet_blocks/") + block + ".graph.json"), {});
    ASSERT_TRUE(gi.ok()) << gi.status().message();
    ir::Graph g = std::move(gi).value();
    ir::ApplyDtype(g, ir::DataType::kInt8);
    auto p = driver::RunStrategy(g, *t, "vmcu", {});
    ASSERT_TRUE(p.ok()) << p.status().message();
    std::map<std::string, ir::OpId> op_named;
    for (const ir::Op& op : g.ops()) op_named[op.name] = op.id;
    StepGroups steps;
    for (const plan::Step& st : p->steps) {
      steps.emplace_back();
      for (const plan::StepOp& so : st.ops) steps.back().push_back(op_named.at(so.name));
      fused_steps += st.ops.size() > 1;
    }
    StepLiveness s = ComputeStepLiveness(g, steps);
    std::map<std::string, const plan::Buffer*> plan_buffers;
    for (const plan::Buffer& b : p->buffers)
      if (b.level == p->arena_level && g.FindTensor(b.tensor)) plan_buffers[b.tensor] = &b;
    EXPECT_EQ(plan_buffers.size(), s.buffers.size()) << block;
    for (const StepBuffer& b : s.buffers) {
      const std::string& name = g.tensor(b.tensor).name;
      ASSERT_EQ(plan_buffers.count(name), 1u) << block << ": " << name;
      EXPECT_EQ(plan_buffers[name]->first_step, b.first_step) << block << ": " << name;
      EXPECT_EQ(plan_buffers[name]->last_step, b.last_step) << block << ": " << name;
      EXPECT_EQ(plan_buffers[name]->bytes, AlignUp(b.bytes, t->alignment)) << block << ": " << name;
    }
  }
  EXPECT_GT(fused_steps, 0);
}

}  // namespace
}  // namespace sramplan::analysis
