// import::NativeGraphJson writes what ImportNativeJson reads back: the same tensors (shape, kind,
// dtype, quantisation), ops (type, operands, attributes of every kind) and layout; and the CLI's
// --dump-after import|canonicalize / --dump-all print and write it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/strategy.h"
#include "import/import.h"
#include "target/target.h"
#include "test_util.h"
#include "transform/canonicalize.h"

namespace sramplan::import {
namespace {

void ExpectSameGraph(const ir::Graph& a, const ir::Graph& b) {
  ASSERT_EQ(a.num_tensors(), b.num_tensors());
  ASSERT_EQ(a.num_ops(), b.num_ops());
  EXPECT_EQ(a.layout, b.layout);
  for (int i = 0; i < a.num_tensors(); ++i) {
    const ir::Tensor& x = a.tensors()[i];
    const ir::Tensor& y = b.tensors()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.shape, y.shape) << x.name;
    EXPECT_EQ(x.kind, y.kind) << x.name;
    EXPECT_EQ(x.dtype, y.dtype) << x.name;
    EXPECT_EQ(x.quant.scale, y.quant.scale) << x.name;
    EXPECT_EQ(x.quant.zero_point, y.quant.zero_point) << x.name;
    EXPECT_EQ(x.quant.axis, y.quant.axis) << x.name;
  }
  for (int i = 0; i < a.num_ops(); ++i) {
    const ir::Op& x = a.ops()[i];
    const ir::Op& y = b.ops()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type) << x.name;
    EXPECT_EQ(x.inputs, y.inputs) << x.name;
    EXPECT_EQ(x.outputs, y.outputs) << x.name;
    EXPECT_EQ(x.attrs.values(), y.attrs.values()) << x.name;
  }
}

TEST(NativeGraphJson, RoundTripsEveryKindOfAttributeAndQuantisation) {
  ir::Graph g = testing::LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "rt", "layout": "NHWC", "dtype": "int8",
    "tensors": [
      {"name": "x", "shape": [1, 8, 8, 4], "kind": "input", "quant": {"scale": [0.5], "zero_point": [-3]}},
      {"name": "w", "shape": [4, 3, 3, 1], "kind": "constant",
       "quant": {"scale": [0.1, 0.2, 0.3, 0.4], "zero_point": [0, 0, 0, 0], "axis": 0}},
      {"name": "c", "shape": [1, 8, 8, 4]},
      {"name": "y", "shape": [1, 8, 8, 4], "kind": "output", "quant": {"scale": [0.25], "zero_point": [7]}}
    ],
    "ops": [
      {"name": "dw", "type": "Conv", "inputs": ["x", "w"], "outputs": ["c"],
       "attrs": {"kernel_shape": [3, 3], "group": 4, "pads": [1, 1, 1, 1], "activation": "relu6"}},
      {"name": "clip", "type": "Clip", "inputs": ["c"], "outputs": ["y"],
       "attrs": {"min": 0.0, "max": 6.0, "ratios": [0.5, 1.5]}}
    ]
  })");
  const std::string text = NativeGraphJson(g);
  auto back = ImportNativeJson(text, "rt.graph.json", {});
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  ExpectSameGraph(g, *back);
  EXPECT_EQ(NativeGraphJson(*back), text);  // a fixed point
}

// A canonicalised ONNX model written and read back plans to the same arena.
TEST(NativeGraphJson, CanonicalMobileNetV2PlansTheSameAfterTheRoundTrip) {
  auto g = ImportModel(testing::SourcePath("models/onnx/mobilenet_v2.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(transform::Canonicalize(&*g, {}).ok());
  auto back = ImportNativeJson(NativeGraphJson(*g), "mnv2.graph.json", {});
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSameGraph(*g, *back);
  auto t = target::LoadTarget("sram:64MiB");
  ASSERT_TRUE(t.ok());
  for (ir::Graph* x : {&*g, &*back}) ir::ApplyDtype(*x, ir::DataType::kInt8);
  driver::PlanOptions o;
  auto p1 = driver::RunStrategy(*g, *t, "tinyengine", o);
  auto p2 = driver::RunStrategy(*back, *t, "tinyengine", o);
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(p1->metrics.arena_bytes, p2->metrics.arena_bytes);
}

TEST(NativeGraphJson, CliDumpsTheGraphAfterImportAndCanonicalize) {
  const std::string model = testing::SourcePath("models/onnx/squeezenet1_0.onnx");
  auto r = testing::Cli("plan " + model +
                        " --no-canonicalize --target sram:64MiB --strategy tflm --dump-after canonicalize -q");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.all().find("add --canonicalize"), std::string::npos) << r.all();
  // ONNX models are canonicalised by default.
  r = testing::Cli("plan " + model + " --target sram:64MiB --strategy tflm --dump-after canonicalize -q");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(r.out.rfind("{\n \"format\": \"sramplan-graph\"", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("\"layout\": \"NHWC\""), std::string::npos);
  const std::string dir = ::testing::TempDir() + "/sramplan_dump_graphs";
  std::filesystem::remove_all(dir);
  r = testing::Cli("plan " + model + " --canonicalize --target sram:64MiB --strategy tflm --dump-all " + dir + " -q");
  ASSERT_EQ(r.rc, 0) << r.all();
  for (const char* f : {"/graph.00.import.graph.json", "/graph.01.canonicalize.graph.json"}) {
    std::ifstream in(dir + f);
    ASSERT_TRUE(in.good()) << dir + f;
    std::stringstream ss;
    ss << in.rdbuf();
    auto back = ImportNativeJson(ss.str(), f, {});
    EXPECT_TRUE(back.ok()) << f << ": " << back.status().message();
    if (back.ok()) EXPECT_EQ(back->layout, std::string(f).find("canonicalize") != std::string::npos ? ir::Layout::kNHWC : ir::Layout::kNCHW);
  }
}

}  // namespace
}  // namespace sramplan::import
