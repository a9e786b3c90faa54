#include "ir/graph.h"

#include <gtest/gtest.h>

#include "import/import.h"
#include "ir/shape_inference.h"
#include "test_graphs.h"

namespace sramplan::ir {
namespace {

Graph Tiny() {
  Graph g;
  g.name = "tiny";
  TensorId x = g.AddTensor({.name = "x", .shape = {1, 3, 8, 8}, .kind = TensorKind::kInput});
  TensorId w = g.AddTensor({.name = "w", .shape = {4, 3, 3, 3}, .kind = TensorKind::kConstant});
  TensorId y = g.AddTensor({.name = "y", .shape = {1, 4, 4, 4}, .kind = TensorKind::kOutput});
  Op op;
  op.name = "conv";
  op.type = "Conv";
  op.inputs = {x, w};
  op.outputs = {y};
  op.attrs.Set("strides", std::vector<int64_t>{2, 2});
  op.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.AddOp(op);
  return g;
}

TEST(Graph, VerifiesAWellFormedGraph) {
  Graph g = Tiny();
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g).message();
  EXPECT_EQ(g.tensor(TensorId(2)).Bytes(), 1 * 4 * 4 * 4 * 4);
  EXPECT_EQ(g.Inputs().size(), 1u);
  EXPECT_EQ(g.tensor(TensorId(0)).consumers.size(), 1u);
}

TEST(Graph, ShapeMismatchNamesTheOp) {
  Graph g = Tiny();
  g.tensor(TensorId(2)).shape = {1, 4, 8, 8};
  Status s = VerifyGraph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("op 'conv'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[1,4,4,4]"), std::string::npos) << s.message();
}

TEST(Graph, ZeroNegativeOverflowAndRank) {
  for (std::vector<int64_t> bad : {std::vector<int64_t>{1, 0, 8, 8}, std::vector<int64_t>{1, -3, 8, 8},
                                   std::vector<int64_t>{1 << 30, 1 << 30, 1 << 30, 8},
                                   std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1}}) {
    Graph g = Tiny();
    g.tensor(TensorId(0)).shape = bad;
    Status s = VerifyGraph(g);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("tensor 'x'"), std::string::npos) << s.message();
  }
}

TEST(Graph, CycleOrOutOfOrderIsAnError) {
  Graph g;
  g.name = "cycle";
  TensorId a = g.AddTensor({.name = "a", .shape = {4}});
  TensorId b = g.AddTensor({.name = "b", .shape = {4}, .kind = TensorKind::kOutput});
  Op r1{.name = "r1", .type = "Relu", .inputs = {b}, .outputs = {a}};
  Op r2{.name = "r2", .type = "Relu", .inputs = {a}, .outputs = {b}};
  g.AddOp(r1);
  g.AddOp(r2);
  Status s = VerifyGraph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
}

TEST(Graph, ProducedTwiceIsAnError) {
  Graph g;
  g.name = "twice";
  TensorId x = g.AddTensor({.name = "x", .shape = {4}, .kind = TensorKind::kInput});
  TensorId y = g.AddTensor({.name = "y", .shape = {4}, .kind = TensorKind::kOutput});
  g.AddOp({.name = "r1", .type = "Relu", .inputs = {x}, .outputs = {y}});
  g.AddOp({.name = "r2", .type = "Relu", .inputs = {x}, .outputs = {y}});
  Status s = VerifyGraph(g);
  EXPECT_NE(s.message().find("produced twice"), std::string::npos) << s.message();
}

TEST(ShapeInference, PoolingCeilModeDropsWindowStartingInPadding) {
  // PyTorch: MaxPool2d(3, stride 2, ceil_mode) on 112 -> 56 (not 57); on 55 -> 27.
  Graph g;
  TensorId x = g.AddTensor({.name = "x", .shape = {1, 8, 112, 112}, .kind = TensorKind::kInput});
  TensorId y = g.AddTensor({.name = "y", .shape = {1, 8, 56, 56}, .kind = TensorKind::kOutput});
  Op op{.name = "pool", .type = "MaxPool", .inputs = {x}, .outputs = {y}};
  op.attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  op.attrs.Set("strides", std::vector<int64_t>{2, 2});
  op.attrs.Set("ceil_mode", int64_t{1});
  g.AddOp(op);
  auto s = InferOutputShapes(g, g.op(OpId(0)));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], (std::vector<int64_t>{1, 8, 56, 56}));
  g.tensor(x).shape = {1, 8, 55, 55};
  s = InferOutputShapes(g, g.op(OpId(0)));
  EXPECT_EQ((*s)[0], (std::vector<int64_t>{1, 8, 27, 27}));
}

TEST(ShapeInference, BroadcastMatMulConcat) {
  EXPECT_EQ(*BroadcastShapes({8, 1, 6, 1}, {7, 1, 5}), (std::vector<int64_t>{8, 7, 6, 5}));
  EXPECT_FALSE(BroadcastShapes({3}, {4}).has_value());
}

TEST(Graph, ViewsAliasTheirInput) {
  auto g = import::ImportNativeJson(R"({"format": "sramplan-graph", "name": "v", "dtype": "int8",
    "tensors": [{"name": "x", "shape": [1, 4, 2, 2], "kind": "input"}, {"name": "r"}, {"name": "f"},
                {"name": "y", "kind": "output"}],
    "ops": [{"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["r"]},
            {"name": "flat", "type": "Flatten", "inputs": ["r"], "outputs": ["f"], "attrs": {"shape": [1, 16]}},
            {"name": "sm", "type": "Softmax", "inputs": ["f"], "outputs": ["y"]}]})",
                                      "v", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(*g->FindTensor("f")).shape, (std::vector<int64_t>{1, 16}));
  EXPECT_EQ(g->StorageRoot(*g->FindTensor("f")), *g->FindTensor("r"));
  EXPECT_EQ(g->StorageRoot(*g->FindTensor("y")), *g->FindTensor("y"));
}

TEST(Graph, ApplyDtypeMakesBiasInt32) {
  Graph g = Tiny();
  TensorId b = g.AddTensor({.name = "b", .shape = {4}, .kind = TensorKind::kConstant});
  g.op(OpId(0)).inputs.push_back(b);
  ApplyDtype(g, DataType::kInt8);
  EXPECT_EQ(g.tensor(TensorId(0)).dtype, DataType::kInt8);
  EXPECT_EQ(g.tensor(b).dtype, DataType::kInt32);
}

}  // namespace
}  // namespace sramplan::ir
