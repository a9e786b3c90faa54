#include <gtest/gtest.h>

#include "import/import.h"
#include "test_graphs.h"

namespace sramplan::import {
namespace {

TEST(NativeJson, InfersMissingShapesAndKeepsQuant) {
  auto g = ImportNativeJson(testing::kBottleneckGraph, "b", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(*g->FindTensor("d")).shape, (std::vector<int64_t>{1, 10, 10, 32}));
  EXPECT_EQ(g->tensor(*g->FindTensor("y")).kind, ir::TensorKind::kOutput);
  auto q = ImportNativeJson(R"({"format": "sramplan-graph", "dtype": "int8", "tensors": [
      {"name": "x", "shape": [2, 3], "kind": "input", "quant": {"scale": [0.5], "zero_point": [-1]}},
      {"name": "y", "kind": "output"}], "ops": [{"type": "Relu", "inputs": ["x"], "outputs": ["y"]}]})",
                            "q", {});
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_FLOAT_EQ(q->tensor(ir::TensorId(0)).quant.scale[0], 0.5f);
  EXPECT_EQ(q->tensor(ir::TensorId(0)).quant.zero_point[0], -1);
}

TEST(NativeJson, ErrorsNameTheElement) {
  struct Case {
    const char* text;
    const char* needle;
  } cases[] = {
      {R"({"format": "other"})", "sramplan-graph"},
      {R"({"format": "sramplan-graph", "version": 7, "tensors": [], "ops": []})", "version 7"},
      {R"({"format": "sramplan-graph", "tensors": [], "ops": []})", "'ops' must be a non-empty list"},
      {R"({"format": "sramplan-graph", "tensors": [{"name": "x", "shape": [2], "kind": "input"}],
          "ops": [{"name": "r", "type": "Relu", "inputs": ["q"], "outputs": ["x"]}]})", "tensor 'q'"},
      {R"({"format": "sramplan-graph", "tensors": [{"name": "x", "shape": [2], "kind": "sideways"}],
          "ops": [{"type": "Relu", "inputs": [], "outputs": []}]})", "kind 'sideways'"},
      {R"({"format": "sramplan-graph", "tensors": [{"name": "x", "shape": "big", "kind": "input"}],
          "ops": [{"type": "Relu", "inputs": [], "outputs": []}]})", "'shape'"},
      {R"({"format": "sramplan-graph", "tensors": [{"name": "x", "shape": [2], "kind": "input"},
          {"name": "y", "kind": "output"}],
          "ops": [{"name": "mystery", "type": "Warp", "inputs": ["x"], "outputs": ["y"]}]})", "'Warp'"},
      {R"({"format": "sramplan-graph", "tensors": [{"name": "x", "shape": [2], "kind": "input", "quant": {"scale": [-1]}}],
          "ops": [{"type": "Relu", "inputs": [], "outputs": []}]})", "positive"},
      {R"([1, 2])", "JSON object"},
  };
  for (const auto& c : cases) {
    auto g = ImportNativeJson(c.text, "t", {});
    ASSERT_FALSE(g.ok()) << c.text;
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos) << g.status().message();
  }
}

// Issue 12: per-tensor dtypes are checked against what each op accepts at import (the float Conv
// kernel used to write a bool or int64 output into a buffer of the wrong size).
TEST(NativeJson, OperandDtypesAreChecked) {
  auto graph = [](const std::string& y_dtype, const std::string& type) {
    return R"({"format": "sramplan-graph", "version": 1, "name": "cb", "dtype": "float32",
      "tensors": [{"name": "x", "shape": [1, 3, 8, 8], "kind": "input"},
                  {"name": "w", "shape": [4, 3, 3, 3], "kind": "constant"},
                  {"name": "y", "shape": [1, 4, 6, 6], "kind": "output", "dtype": ")" +
           y_dtype + R"("}],
      "ops": [{"name": "c", "type": ")" +
           type + R"(", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"kernel_shape": [3, 3]}}]})";
  };
  struct Case {
    std::string text, needle;
  } cases[] = {
      {graph("bool", "Conv"), "op 'c' (Conv): output 'y' (Y) has dtype bool; Conv accepts int8, uint8, int16, float16 or float32 there"},
      {graph("int64", "Conv"), "output 'y' (Y) has dtype int64"},
      {graph("float32", "Slice"), "op 'c' (Slice): input 'w' (starts) has dtype float32; Slice accepts int32 or int64 there"},
  };
  for (const auto& c : cases) {
    auto g = ImportNativeJson(c.text, "cb", {});
    ASSERT_FALSE(g.ok()) << c.needle;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos) << g.status().message();
  }
  auto ok = ImportNativeJson(graph("float32", "Conv"), "cb", {});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

}  // namespace
}  // namespace sramplan::import
