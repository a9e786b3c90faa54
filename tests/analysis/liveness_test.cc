#include "analysis/liveness.h"

#include <gtest/gtest.h>

#include "analysis/op_cost.h"
#include "import/import.h"
#include "test_graphs.h"

namespace sramplan::analysis {
namespace {

ir::Graph Load(const char* text) {
  auto g = import::ImportNativeJson(text, "t", {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

TEST(Liveness, BottleneckRangesAndBound) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  Liveness lv = ComputeLiveness(g, ModelOrder(g));
  auto range = [&](const char* name) {
    const LiveTensor& b = lv.buffers[lv.buffer_of_tensor[g.FindTensor(name)->value()]];
    return std::make_pair(b.first_step, b.last_step);
  };
  EXPECT_EQ(range("x"), std::make_pair(0, 3));  // the residual add reads x at step 3
  EXPECT_EQ(range("e"), std::make_pair(0, 1));
  EXPECT_EQ(range("d"), std::make_pair(1, 2));
  EXPECT_EQ(range("p"), std::make_pair(2, 3));
  EXPECT_EQ(range("y"), std::make_pair(3, 3));
  EXPECT_EQ(lv.live_bytes_per_step, (std::vector<int64_t>{4800, 8000, 6400, 4800}));
  EXPECT_EQ(lv.lower_bound, 8000);
  EXPECT_EQ(lv.peak_step, 1);
  EXPECT_EQ(lv.buffers.size(), 5u);  // weights are not arena buffers
}

TEST(Liveness, ViewsExtendTheirRoot) {
  ir::Graph g = Load(R"({"format": "sramplan-graph", "dtype": "int8", "tensors": [
      {"name": "x", "shape": [1, 16], "kind": "input"}, {"name": "r"}, {"name": "v"}, {"name": "s"},
      {"name": "y", "kind": "output"}],
    "ops": [{"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["r"]},
            {"name": "view", "type": "Reshape", "inputs": ["r"], "outputs": ["v"], "attrs": {"shape": [4, 4]}},
            {"name": "sig", "type": "Sigmoid", "inputs": ["x"], "outputs": ["s"]},
            {"name": "add", "type": "Add", "inputs": ["v", "v"], "outputs": ["y"]}]})");
  Liveness lv = ComputeLiveness(g, ModelOrder(g));
  // r is born at step 0 and read through its view v at step 3.
  const LiveTensor& r = lv.buffers[lv.buffer_of_tensor[g.FindTensor("r")->value()]];
  EXPECT_EQ(r.tensor, *g.FindTensor("r"));
  EXPECT_EQ(r.first_step, 0);
  EXPECT_EQ(r.last_step, 3);
  EXPECT_EQ(lv.buffer_of_tensor[g.FindTensor("v")->value()], lv.buffer_of_tensor[g.FindTensor("r")->value()]);
  // s is never read: it lives only at its producing step.
  const LiveTensor& s = lv.buffers[lv.buffer_of_tensor[g.FindTensor("s")->value()]];
  EXPECT_EQ(s.first_step, 2);
  EXPECT_EQ(s.last_step, 2);
}

TEST(Liveness, ScheduleValidation) {
  ir::Graph g = Load(testing::kChainGraph);
  Schedule s = ModelOrder(g);
  EXPECT_TRUE(ValidateSchedule(g, s).ok());
  std::swap(s[0], s[1]);
  Status st = ValidateSchedule(g, s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("runs 'relu' before 'conv1'"), std::string::npos) << st.message();
  EXPECT_FALSE(ValidateSchedule(g, {s[0]}).ok());
  EXPECT_FALSE(ValidateSchedule(g, {s[0], s[0], s[2]}).ok());
}

TEST(OpCost, ConvAndGemmMacs) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  EXPECT_EQ(ComputeOpCost(g, g.op(ir::OpId(0))).macs, 100 * 32 * 16);  // pointwise
  EXPECT_EQ(ComputeOpCost(g, g.op(ir::OpId(1))).macs, 100 * 32 * 9);   // depthwise 3x3
  EXPECT_EQ(ComputeOpCost(g, g.op(ir::OpId(1))).weight_bytes, 288);
}

}  // namespace
}  // namespace sramplan::analysis
