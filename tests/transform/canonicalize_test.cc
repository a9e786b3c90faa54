// Canonicalisation (src/transform): folded activations and channels-last graphs compute what the
// original graph computes, on the float32 naive executor, with the same weights and inputs.
#include "transform/canonicalize.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "exec/executor.h"
#include "exec/model_data.h"
#include "import/import.h"
#include "test_util.h"

namespace sramplan::transform {
namespace {

using sramplan::testing::Cli;
using sramplan::testing::LoadNativeGraph;
using sramplan::testing::SourcePath;

TEST(PermuteDataTest, MovesChannelsLast) {
  // [1, 2, 2, 3] channels-first (C = 2, H = 2, W = 3) with values 0..11.
  std::vector<uint8_t> d(12);
  for (int i = 0; i < 12; ++i) d[i] = static_cast<uint8_t>(i);
  auto out = PermuteData(d, {1, 2, 2, 3}, ChannelsLastPerm(4), 1);
  // NHWC element (h, w, c) = NCHW element (c, h, w) = c*6 + h*3 + w.
  std::vector<uint8_t> want;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 2; ++c) want.push_back(static_cast<uint8_t>(c * 6 + h * 3 + w));
  EXPECT_EQ(out, want);
  EXPECT_EQ(ChannelsLastPerm(4), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(ChannelsLastPerm(5), (std::vector<int64_t>{0, 2, 3, 4, 1}));
}

// Fills every constant of `g` with the data MakeModelData would generate, so that a rewritten graph
// carries the same weights.
void MaterialiseConstants(ir::Graph* g) {
  auto data = exec::MakeModelData(*g, exec::kDefaultSeed);
  ASSERT_TRUE(data.ok()) << data.status().message();
  for (auto& t : g->mutable_tensors())
    if (t.kind == ir::TensorKind::kConstant && t.data.empty()) t.data = data->values[t.id.value()];
}

// Runs `g` on the naive float32 executor with `input` for its only input.
std::vector<std::vector<uint8_t>> Run(const ir::Graph& g, const std::vector<uint8_t>& input) {
  auto data = exec::MakeModelData(g, exec::kDefaultSeed);
  EXPECT_TRUE(data.ok());
  data->values[g.Inputs()[0].value()] = input;
  analysis::Schedule order;
  for (const auto& op : g.ops()) order.push_back(op.id);
  auto r = exec::RunNaive(g, order, *data);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->outputs : std::vector<std::vector<uint8_t>>{};
}

// Checks that the canonical form of `g` computes the same outputs (permuted where they are feature
// maps) within float rounding, and returns the canonical graph.
ir::Graph ExpectSameFunction(ir::Graph g, CanonicalizeReport* report = nullptr) {
  MaterialiseConstants(&g);
  const ir::Tensor& in = g.tensor(g.Inputs()[0]);
  auto seeded = exec::MakeModelData(g, 99);
  EXPECT_TRUE(seeded.ok());
  const std::vector<uint8_t> x = seeded->values[in.id.value()];
  const auto want = Run(g, x);
  ir::Graph c = g;
  auto r = Canonicalize(&c, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (report && r.ok()) *report = *r;
  EXPECT_EQ(c.layout, ir::Layout::kNHWC);
  const auto got =
      Run(c, in.shape.size() >= 3 ? PermuteData(x, in.shape, ChannelsLastPerm(in.shape.size()), 4) : x);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const ir::Tensor& o = g.tensor(g.Outputs()[i]);
    auto w = o.shape.size() >= 3 ? PermuteData(want[i], o.shape, ChannelsLastPerm(o.shape.size()), 4) : want[i];
    EXPECT_EQ(w.size(), got[i].size());
    if (w.size() != got[i].size()) continue;
    for (size_t k = 0; k < w.size() / 4; ++k) {
      float a, b;
      std::memcpy(&a, w.data() + 4 * k, 4);
      std::memcpy(&b, got[i].data() + 4 * k, 4);
      EXPECT_NEAR(a, b, 1e-4f * (1 + std::abs(a))) << "output " << o.name << " element " << k;
    }
  }
  return c;
}

// A small NCHW CNN with everything ToChannelsLast rewrites: Conv + Clip(0,6) and Conv + Relu
// (folded), a per-channel [C,1,1] constant in a Mul, Pad, MaxPool, Concat on channels, a depthwise
// Conv, a Flatten of a 2x2 map and a MatMul (the Flatten reads the channels-last map; the MatMul's
// weights get K in (h, w, c) order).
const char* kSmallCnn = R"({
  "format": "sramplan-graph", "version": 1, "name": "small_cnn", "layout": "NCHW",
  "tensors": [
    {"name": "x", "shape": [1, 3, 8, 8], "kind": "input"},
    {"name": "w1", "shape": [4, 3, 3, 3], "kind": "constant"}, {"name": "b1", "shape": [4], "kind": "constant"},
    {"name": "c1", "shape": [1, 4, 8, 8]}, {"name": "a1", "shape": [1, 4, 8, 8]},
    {"name": "s", "shape": [4, 1, 1], "kind": "constant"}, {"name": "m", "shape": [1, 4, 8, 8]},
    {"name": "wd", "shape": [4, 1, 3, 3], "kind": "constant"}, {"name": "d", "shape": [1, 4, 8, 8]},
    {"name": "r", "shape": [1, 4, 8, 8]},
    {"name": "cat", "shape": [1, 8, 8, 8]},
    {"name": "p", "shape": [1, 8, 10, 10]},
    {"name": "pool", "shape": [1, 8, 5, 5]},
    {"name": "w2", "shape": [6, 8, 2, 2], "kind": "constant"},
    {"name": "c2", "shape": [1, 6, 2, 2]},
    {"name": "f", "shape": [1, 24]},
    {"name": "wf", "shape": [24, 5], "kind": "constant"},
    {"name": "y", "shape": [1, 5], "kind": "output"}
  ],
  "ops": [
    {"name": "conv1", "type": "Conv", "inputs": ["x", "w1", "b1"], "outputs": ["c1"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
    {"name": "clip1", "type": "Clip", "inputs": ["c1"], "outputs": ["a1"], "attrs": {"min": 0.0, "max": 6.0}},
    {"name": "scale", "type": "Mul", "inputs": ["a1", "s"], "outputs": ["m"]},
    {"name": "dw", "type": "Conv", "inputs": ["m", "wd"], "outputs": ["d"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "group": 4}},
    {"name": "relu", "type": "Relu", "inputs": ["d"], "outputs": ["r"]},
    {"name": "concat", "type": "Concat", "inputs": ["m", "r"], "outputs": ["cat"], "attrs": {"axis": 1}},
    {"name": "pad", "type": "Pad", "inputs": ["cat"], "outputs": ["p"], "attrs": {"pads": [0, 0, 1, 1, 0, 0, 1, 1]}},
    {"name": "pool", "type": "MaxPool", "inputs": ["p"], "outputs": ["pool"],
     "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
    {"name": "conv2", "type": "Conv", "inputs": ["pool", "w2"], "outputs": ["c2"],
     "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
    {"name": "flatten", "type": "Flatten", "inputs": ["c2"], "outputs": ["f"]},
    {"name": "fc", "type": "MatMul", "inputs": ["f", "wf"], "outputs": ["y"]}
  ]
})";

TEST(CanonicalizeTest, SmallCnnComputesTheSameFunction) {
  CanonicalizeReport rep;
  ir::Graph c = ExpectSameFunction(LoadNativeGraph(kSmallCnn), &rep);
  EXPECT_EQ(rep.folded_activations, 2) << rep.Summary();  // clip1 into conv1, relu into dw
  EXPECT_EQ(rep.inserted_transposes, 0) << rep.Summary();  // the Flatten reads channels-last
  EXPECT_EQ(rep.folded_flattens, 1) << rep.Summary();
  EXPECT_EQ(rep.inserted_views, 0);
  // Weights w1, wd, w2, the [4,1,1] scale and the FC weights wf are permuted; the originals are gone.
  EXPECT_EQ(rep.transposed_weights, 5);
  EXPECT_FALSE(c.FindTensor("wf").has_value());
  ASSERT_TRUE(c.FindTensor("wf.nhwc_k").has_value());
  EXPECT_FALSE(c.FindTensor("w1").has_value());
  ASSERT_TRUE(c.FindTensor("w1.nhwc").has_value());
  EXPECT_EQ(c.tensor(*c.FindTensor("w1.nhwc")).shape, (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_EQ(c.tensor(*c.FindTensor("s.nhwc")).shape, (std::vector<int64_t>{1, 1, 1, 4}));
  EXPECT_EQ(c.tensor(*c.FindTensor("cat")).shape, (std::vector<int64_t>{1, 8, 8, 8}));
  EXPECT_EQ(c.tensor(*c.FindTensor("p")).shape, (std::vector<int64_t>{1, 10, 10, 8}));
  int convs_with_act = 0;
  for (const auto& op : c.ops()) {
    EXPECT_NE(op.type, "Clip");
    EXPECT_NE(op.type, "Relu");
    if (op.type == "Conv" && op.attrs.GetString("activation", "none") != "none") ++convs_with_act;
    if (op.type == "Concat") {
      EXPECT_EQ(op.attrs.GetInt("axis", 0), 3);
    }
  }
  EXPECT_EQ(convs_with_act, 2);
}

// A Flatten whose output another op reads in its element order (here a second, non-FC reader: a
// Softmax output of the model) keeps the Transpose back to channels-first; the function is the same.
TEST(CanonicalizeTest, FlattenWithANonFcReaderKeepsTheTranspose) {
  std::string text = kSmallCnn;
  const std::string y = R"({"name": "y", "shape": [1, 5], "kind": "output"})";
  text.replace(text.find(y), y.size(), y + R"(, {"name": "sm", "shape": [1, 24], "kind": "output"})");
  const std::string fc = R"({"name": "fc", "type": "MatMul", "inputs": ["f", "wf"], "outputs": ["y"]})";
  text.replace(text.find(fc), fc.size(),
               fc + R"(, {"name": "softmax", "type": "Softmax", "inputs": ["f"], "outputs": ["sm"], "attrs": {"axis": 1}})");
  CanonicalizeReport rep;
  ir::Graph c = ExpectSameFunction(LoadNativeGraph(text), &rep);
  EXPECT_EQ(rep.inserted_transposes, 1) << rep.Summary();
  EXPECT_EQ(rep.folded_flattens, 0) << rep.Summary();
  EXPECT_TRUE(c.FindTensor("wf").has_value());
}

// Real exports: every bundled ONNX CNN whose rewrite touches a different feature (Resize, squeeze-
// excite Mul, HardSwish and a segmentation output in LR-ASPP; Concat of branches and a pooled Flatten
// in GoogLeNet; a Flatten of a 6x6 map into FC layers in AlexNet) computes the same outputs after
// canonicalisation.
class CanonicalRealModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CanonicalRealModelTest, ComputesTheSameFunction) {
  import::ImportOptions io;
  if (GetParam() == "googlenet") io.input_shape = {1, 3, 96, 96};  // the same graph, a quarter of the work
  auto g = import::ImportModel(SourcePath("models/onnx/" + GetParam() + ".onnx"), io);
  ASSERT_TRUE(g.ok()) << g.status().message();
  CanonicalizeReport rep;
  ExpectSameFunction(*g, &rep);
  EXPECT_GT(rep.permuted_tensors, 0);
}

INSTANTIATE_TEST_SUITE_P(Bundled, CanonicalRealModelTest,
                         ::testing::Values("lraspp_mobilenet_v3_large", "googlenet", "alexnet"));

// A Clip that is not (0, 6), a Relu whose Conv output has a second reader, and a Conv that already
// has an activation stay as they are.
TEST(CanonicalizeTest, FoldsOnlyWhatAConvCanFuse) {
  ir::Graph g = LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "nofold", "layout": "NCHW",
    "tensors": [
      {"name": "x", "shape": [1, 2, 4, 4], "kind": "input"},
      {"name": "w", "shape": [2, 2, 1, 1], "kind": "constant"},
      {"name": "c", "shape": [1, 2, 4, 4]}, {"name": "k", "shape": [1, 2, 4, 4]},
      {"name": "c2", "shape": [1, 2, 4, 4]}, {"name": "r2", "shape": [1, 2, 4, 4]},
      {"name": "y", "shape": [1, 2, 4, 4], "kind": "output"}
    ],
    "ops": [
      {"name": "conv", "type": "Conv", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"kernel_shape": [1, 1]}},
      {"name": "clip", "type": "Clip", "inputs": ["c"], "outputs": ["k"], "attrs": {"min": -1.0, "max": 1.0}},
      {"name": "conv2", "type": "Conv", "inputs": ["k", "w"], "outputs": ["c2"], "attrs": {"kernel_shape": [1, 1]}},
      {"name": "relu", "type": "Relu", "inputs": ["c2"], "outputs": ["r2"]},
      {"name": "add", "type": "Add", "inputs": ["r2", "c2"], "outputs": ["y"]}
    ]
  })");
  CanonicalizeReport rep;
  ir::Graph c = ExpectSameFunction(g, &rep);
  EXPECT_EQ(rep.folded_activations, 0);
  EXPECT_EQ(c.num_ops(), 5);
  // The output is a feature map: channels-last too.
  EXPECT_EQ(c.tensor(*c.FindTensor("y")).shape, (std::vector<int64_t>{1, 4, 4, 2}));
}

// A graph without layout-bound ops (a transformer block) is left as it is.
TEST(CanonicalizeTest, LeavesGraphsWithoutConvAlone) {
  ir::Graph g = LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "mlp",
    "tensors": [
      {"name": "x", "shape": [1, 3, 8, 8], "kind": "input"},
      {"name": "y", "shape": [1, 3, 8, 8], "kind": "output"}
    ],
    "ops": [{"name": "s", "type": "Softmax", "inputs": ["x"], "outputs": ["y"], "attrs": {"axis": 1}}]
  })");
  auto r = Canonicalize(&g, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(g.layout, ir::Layout::kNCHW);
  EXPECT_EQ(r->permuted_tensors, 0);
}

// The bundled MobileNetV2 from ONNX: vmcu's fused bottlenecks match once the graph is canonical
// (issue 13's goal: vmcu <= 1/3 of tinyengine's arena at 224x224), and the plan runs bit-exact.
TEST(CanonicalizeTest, VmcuFusesMobileNetV2FromOnnx) {
  const std::string m = SourcePath("models/onnx/mobilenet_v2.onnx");
  auto arena = [&](const std::string& strategy) -> int64_t {
    const std::string path = sramplan::testing::WriteTempFile(strategy + ".plan.json", "");
    auto r = Cli("plan " + m + " --canonicalize --target sram:64MiB --no-map --strategy " + strategy + " --json " + path);
    EXPECT_EQ(r.rc, 0) << r.all();
    std::ifstream f(path);
    std::stringstream text;
    text << f.rdbuf();
    auto p = plan::PlanFromJson(text.str());
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? p->metrics.arena_bytes : -1;
  };
  const int64_t te = arena("tinyengine"), vm = arena("vmcu");
  ASSERT_GT(te, 0);
  ASSERT_GT(vm, 0);
  EXPECT_LE(vm * 3, te) << "vmcu " << vm << " tinyengine " << te;
}

// --input-shape re-infers an ONNX export at another resolution, and names what is wrong with a bad one.
TEST(CanonicalizeTest, InputShapeOverride) {
  const std::string m = SourcePath("models/onnx/mobilenet_v2.onnx");
  auto r = Cli("inspect " + m + " --input-shape 1x3x96x96");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("input 27648 B"), std::string::npos) << r.out;  // 3 x 96 x 96 int8
  EXPECT_NE(r.out.find("[1x3x3x1280]"), std::string::npos) << r.out;   // the last feature map (NHWC)
  r = Cli("inspect " + m + " --input-shape 1x3x96x96 --no-canonicalize");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("[1x1280x3x3]"), std::string::npos) << r.out;   // as imported (NCHW)
  r = Cli("inspect " + m + " --input-shape 1x3x96");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("gives 3 dimensions but graph input 'input' has 4"), std::string::npos) << r.err;
  r = Cli("inspect " + m + " --input-shape 1x3x0x96");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("'0' is not a dimension"), std::string::npos) << r.err;
  r = Cli("inspect " + SourcePath("models/mcunet_blocks/B1.graph.json") + " --input-shape 1x96x96x3");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("applies to ONNX models"), std::string::npos) << r.err;
}

TEST(CanonicalizeTest, CliSaysWhatItDid) {
  auto r = Cli("inspect " + SourcePath("models/onnx/mobilenet_v2.onnx") + " --canonicalize");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.err.find("35 activations folded"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("layout NHWC"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sramplan::transform

namespace sramplan::transform {
namespace {

// Two Convs reading one bias with different input scales: int8 needs a copy per reader. Without
// canonicalisation verify says how to fix it; with it the plan runs bit-exact.
TEST(CanonicalizeTest, SharedBiasGetsACopyPerReader) {
  const std::string path = sramplan::testing::WriteTempFile("shared_bias.graph.json", R"({
    "format": "sramplan-graph", "version": 1, "name": "shared_bias", "layout": "NCHW",
    "tensors": [
      {"name": "x", "shape": [1, 4, 6, 6], "kind": "input"},
      {"name": "w1", "shape": [4, 4, 3, 3], "kind": "constant"},
      {"name": "w2", "shape": [4, 4, 1, 1], "kind": "constant"},
      {"name": "b", "shape": [4], "kind": "constant"},
      {"name": "y1", "shape": [1, 4, 6, 6]},
      {"name": "y", "shape": [1, 4, 6, 6], "kind": "output"}
    ],
    "ops": [
      {"name": "conv1", "type": "Conv", "inputs": ["x", "w1", "b"], "outputs": ["y1"],
       "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
      {"name": "conv2", "type": "Conv", "inputs": ["y1", "w2", "b"], "outputs": ["y"], "attrs": {"kernel_shape": [1, 1]}}
    ]
  })");
  auto raw = Cli("verify " + path + " --target sram:1MiB --strategy tflm");
  EXPECT_EQ(raw.rc, 1) << raw.all();
  EXPECT_NE(raw.err.find("bias 'b' is shared"), std::string::npos) << raw.err;
  EXPECT_NE(raw.err.find("--canonicalize"), std::string::npos) << raw.err;
  auto fixed = Cli("verify " + path + " --canonicalize --target sram:1MiB --strategy tflm");
  EXPECT_EQ(fixed.rc, 0) << fixed.all();
  EXPECT_NE(fixed.err.find("1 shared biases copied"), std::string::npos) << fixed.err;

  ir::Graph g = LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "g",
    "tensors": [
      {"name": "x", "shape": [1, 2], "kind": "input"}, {"name": "w", "shape": [2, 2], "kind": "constant"},
      {"name": "b", "shape": [2], "kind": "constant"}, {"name": "h", "shape": [1, 2]},
      {"name": "y", "shape": [1, 2], "kind": "output"}
    ],
    "ops": [
      {"name": "fc1", "type": "Gemm", "inputs": ["x", "w", "b"], "outputs": ["h"]},
      {"name": "fc2", "type": "Gemm", "inputs": ["h", "w", "b"], "outputs": ["y"]}
    ]
  })");
  CanonicalizeReport rep;
  ASSERT_TRUE(UnshareBiases(&g, &rep).ok());
  EXPECT_EQ(rep.unshared_biases, 1);
  ASSERT_TRUE(g.FindTensor("b.fc2").has_value());
  EXPECT_EQ(g.op(ir::OpId(1)).inputs[2], *g.FindTensor("b.fc2"));
  EXPECT_EQ(g.op(ir::OpId(1)).inputs[1], g.op(ir::OpId(0)).inputs[1]);  // weights stay shared
}

}  // namespace
}  // namespace sramplan::transform

namespace sramplan::transform {
namespace {

// A fused activation on an op whose kernels do not apply it (here an Add, as TFLite writes ADD with
// RELU6) becomes its own Clip op at import, so every executor computes it.
TEST(CanonicalizeTest, ImportUnfusesActivationsTheKernelsDoNotApply) {
  ir::Graph g = LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "add_relu6",
    "tensors": [
      {"name": "a", "shape": [1, 8], "kind": "input"}, {"name": "b", "shape": [1, 8], "kind": "constant"},
      {"name": "y", "shape": [1, 8], "kind": "output"}
    ],
    "ops": [{"name": "add", "type": "Add", "inputs": ["a", "b"], "outputs": ["y"], "attrs": {"activation": "relu6"}}]
  })");
  ASSERT_EQ(g.num_ops(), 2);
  EXPECT_EQ(g.op(ir::OpId(0)).type, "Add");
  EXPECT_FALSE(g.op(ir::OpId(0)).attrs.Has("activation"));
  EXPECT_EQ(g.op(ir::OpId(1)).type, "Clip");
  EXPECT_EQ(g.op(ir::OpId(1)).attrs.GetFloat("max", 0), 6.0);
  EXPECT_EQ(g.tensor(g.op(ir::OpId(1)).outputs[0]).name, "y");
  // Every output is within [0, 6] on the float executor.
  std::vector<uint8_t> x(32);
  for (int i = 0; i < 8; ++i) {
    const float v = static_cast<float>(i * 3 - 10);
    std::memcpy(x.data() + 4 * i, &v, 4);
  }
  const auto out = sramplan::transform::Run(g, x);
  ASSERT_EQ(out.size(), 1u);
  for (int i = 0; i < 8; ++i) {
    float v;
    std::memcpy(&v, out[0].data() + 4 * i, 4);
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 6.0f);
  }
  int n = -1;
  ir::Graph bad = g;
  bad.op(ir::OpId(0)).attrs.Set("activation", std::string("tanh"));
  EXPECT_FALSE(UnfuseActivations(&bad, &n).ok());
}

}  // namespace
}  // namespace sramplan::transform
