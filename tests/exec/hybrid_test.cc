// Hybrid int8 / float32 graphs (exec/hybrid.h): ops without an int8 kernel keep float32 between a
// Dequantize and a Quantize, the plan sizes every tensor by its own dtype, and the arena run of the
// hybrid graph equals its naive run bit for bit with the planned off-chip bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/hybrid.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_util.h"

namespace sramplan::exec {
namespace {

// x[1,8,8,4] -> conv1 (1x1, 4->8) -> a -> LayerNormalization (float32) -> l -> Div by a constant
// (float32) -> m -> conv2 (1x1, 8->8) -> b; add(b, a) -> y. 'a' feeds an int8 op (add) and a float32
// op (ln): one Dequantize; 'm' feeds conv2: one Quantize.
constexpr const char* kLayerNormGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "ln_div", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 8, 8, 4], "kind": "input"},
    {"name": "w1", "shape": [8, 1, 1, 4], "kind": "constant"},
    {"name": "a"},
    {"name": "ln.scale", "shape": [8], "kind": "constant"},
    {"name": "ln.bias", "shape": [8], "kind": "constant"},
    {"name": "l"},
    {"name": "d", "shape": [1], "kind": "constant"},
    {"name": "m"},
    {"name": "w2", "shape": [8, 1, 1, 8], "kind": "constant"},
    {"name": "b"},
    {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "conv1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "ln", "type": "LayerNormalization", "inputs": ["a", "ln.scale", "ln.bias"], "outputs": ["l"],
     "attrs": {"axis": -1}},
    {"name": "div", "type": "Div", "inputs": ["l", "d"], "outputs": ["m"]},
    {"name": "conv2", "type": "Conv", "inputs": ["m", "w2"], "outputs": ["b"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "add", "type": "Add", "inputs": ["b", "a"], "outputs": ["y"]}
  ]
})";

ir::Graph HybridGraph(HybridReport* report) {
  ir::Graph g = testing::LoadNativeGraph(kLayerNormGraph);
  ir::ApplyDtype(g, ir::DataType::kInt8);
  auto r = MakeHybridInt8(&g);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok() && report) *report = *r;
  return g;
}

const ir::Op* FindOp(const ir::Graph& g, const std::string& name) {
  for (const ir::Op& op : g.ops())
    if (op.name == name) return &op;
  return nullptr;
}

const ir::Tensor& T(const ir::Graph& g, const std::string& name) {
  auto id = g.FindTensor(name);
  EXPECT_TRUE(id.has_value()) << name;
  return g.tensor(*id);
}

TEST(Hybrid, LayerNormAndDivKeepFloat32BetweenConversions) {
  HybridReport r;
  const ir::Graph g = HybridGraph(&r);
  EXPECT_EQ(r.float_ops, 2);
  EXPECT_EQ(r.dequantize_ops, 1);
  EXPECT_EQ(r.quantize_ops, 1);
  EXPECT_EQ(r.float_constants, 3);  // ln.scale, ln.bias, d
  // Model order: conv1, a/Dequantize, ln, div, m/Quantize, conv2, add.
  std::vector<std::string> order;
  for (const ir::Op& op : g.ops()) order.push_back(op.name + ":" + op.type);
  EXPECT_EQ(order, (std::vector<std::string>{"conv1:Conv", "a/Dequantize:Dequantize", "ln:LayerNormalization",
                                             "div:Div", "m/Quantize:Quantize", "conv2:Conv", "add:Add"}));
  EXPECT_EQ(T(g, "a").dtype, ir::DataType::kInt8);
  EXPECT_EQ(T(g, "a.dequantized").dtype, ir::DataType::kFloat32);
  EXPECT_EQ(T(g, "l").dtype, ir::DataType::kFloat32);
  EXPECT_EQ(T(g, "m").dtype, ir::DataType::kFloat32);
  EXPECT_EQ(T(g, "m.quantized").dtype, ir::DataType::kInt8);
  EXPECT_EQ(T(g, "ln.scale").dtype, ir::DataType::kFloat32);
  EXPECT_EQ(T(g, "d").dtype, ir::DataType::kFloat32);
  EXPECT_EQ(T(g, "w2").dtype, ir::DataType::kInt8);
  EXPECT_EQ(T(g, "y").dtype, ir::DataType::kInt8);
  EXPECT_EQ(FindOp(g, "ln")->inputs[0], *g.FindTensor("a.dequantized"));
  EXPECT_EQ(FindOp(g, "add")->inputs[1], *g.FindTensor("a"));  // the int8 reader keeps the int8 tensor
  EXPECT_EQ(FindOp(g, "conv2")->inputs[0], *g.FindTensor("m.quantized"));
  EXPECT_TRUE(IsHybridHostOp(g, *FindOp(g, "div")));
  EXPECT_FALSE(IsHybridHostOp(g, *FindOp(g, "conv2")));
  EXPECT_TRUE(ir::VerifyGraph(g).ok());
}

TEST(Hybrid, PlanSizesFloatTensorsAtFourBytes) {
  const ir::Graph g = HybridGraph(nullptr);
  const plan::Plan p = testing::PlanInt8(g, "tflm", "sram:1MiB");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  std::map<std::string, int64_t> bytes;
  for (const auto& t : p.tensors) bytes[t.name] = t.bytes;
  EXPECT_EQ(bytes["a"], 512);
  EXPECT_EQ(bytes["a.dequantized"], 2048);
  EXPECT_EQ(bytes["l"], 2048);
  EXPECT_EQ(bytes["m"], 2048);
  EXPECT_EQ(bytes["m.quantized"], 512);
  // At 'div' a.dequantized has died; l (2048), m (2048) and a (512, read by add) are live.
  EXPECT_GE(p.metrics.arena_bytes, 2048 + 2048 + 512);
}

// The conversions' arithmetic, by hand: q = clamp(round_half_away(x / s) + zp), x = s (q - zp).
TEST(Hybrid, ConversionsAreExact) {
  const ir::Graph g = HybridGraph(nullptr);
  QuantizedModel q;
  q.params.resize(g.num_tensors());
  q.params[g.FindTensor("m.quantized")->value()] = ir::QuantParams{{0.5f}, {-3}, 0};
  q.params[g.FindTensor("a")->value()] = ir::QuantParams{{0.25f}, {10}, 0};
  const ir::Op& quant = *FindOp(g, "m/Quantize");
  const int64_t n = T(g, "m").NumElements();
  std::vector<float> x(n, 0.0f);
  x[0] = 1.25f;   // 2.5 -> 3 (half away from zero) -> 0
  x[1] = -1.25f;  // -2.5 -> -3 -> -6
  x[2] = 1000.f;  // saturates at 127
  x[3] = -1000.f;
  x[4] = std::nanf("");  // NaN -> the zero point
  std::vector<uint8_t> xin(n * 4), yout(n);
  std::memcpy(xin.data(), x.data(), xin.size());
  OperandBytes b{{n * 4}, {n}};
  ASSERT_TRUE(RunHybridHostOp(g, quant, q, {xin.data()}, {yout.data()}, b).ok());
  const int8_t* y = reinterpret_cast<const int8_t*>(yout.data());
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], -6);
  EXPECT_EQ(y[2], 127);
  EXPECT_EQ(y[3], -128);
  EXPECT_EQ(y[4], -3);
  const ir::Op& deq = *FindOp(g, "a/Dequantize");
  std::vector<uint8_t> qin(n, 0), fout(n * 4);
  qin[0] = static_cast<uint8_t>(int8_t{-128});
  qin[1] = 14;
  OperandBytes db{{n}, {n * 4}};
  ASSERT_TRUE(RunHybridHostOp(g, deq, q, {qin.data()}, {fout.data()}, db).ok());
  float f[3];
  std::memcpy(f, fout.data(), sizeof f);
  EXPECT_EQ(f[0], 0.25f * (-128 - 10));
  EXPECT_EQ(f[1], 1.0f);
  EXPECT_EQ(f[2], -2.5f);
  // A buffer of the wrong size is refused, not overrun.
  OperandBytes small{{n * 4}, {n - 1}};
  EXPECT_FALSE(RunHybridHostOp(g, quant, q, {xin.data()}, {yout.data()}, small).ok());
}

// Every tensor-level strategy: naive == arena bit for bit with the planned off-chip bytes, and the
// float32 ops' outputs are real float32 values (not int8 bytes reinterpreted).
TEST(Hybrid, EveryStrategyMatchesNaiveBitForBit) {
  const ir::Graph g = HybridGraph(nullptr);
  ExecResult reference;
  auto q = QuantizeModel(g, kDefaultSeed, &reference);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_TRUE(q->params[g.FindTensor("l")->value()].empty());  // float32: no int8 parameters
  for (const auto& s : driver::StrategiesOf(driver::Family::kTensor)) {
    if (s.int8_only) continue;  // segment-aware kernels: the vmcu test below
    SCOPED_TRACE(s.name);
    const plan::Plan p = testing::PlanInt8(g, s.name, "sram:1MiB");
    ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
    auto naive = RunNaive(g, testing::PlanOrder(g, p), q->data, &*q);
    ASSERT_TRUE(naive.ok()) << naive.status().message();
    auto arena = RunArena(g, p, q->data, &*q);
    ASSERT_TRUE(arena.ok()) << arena.status().message();
    EXPECT_EQ(Compare(g, *naive, *arena, p), "");
  }
  // The int8 output against the float32 model: close, not equal (quantisation error is bounded by a
  // few output scales on this small graph).
  auto naive = RunNaive(g, analysis::ModelOrder(g), q->data, &*q);
  ASSERT_TRUE(naive.ok());
  auto e = CompareWithReference(g, *q, *naive, reference);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_LT(e->max_error_in_scales, 8.0) << e->Summary();
}

TEST(Hybrid, VmcuPlanOfAHybridGraphVerifies) {
  const ir::Graph g = HybridGraph(nullptr);
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_TRUE(q.ok()) << q.status().message();
  const plan::Plan p = testing::PlanInt8(g, "vmcu", "sram:1MiB");
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  auto naive = RunNaive(g, testing::PlanOrder(g, p), q->data, &*q);
  ASSERT_TRUE(naive.ok()) << naive.status().message();
  auto arena = RunArena(g, p, q->data, &*q);
  ASSERT_TRUE(arena.ok()) << arena.status().message();
  EXPECT_EQ(Compare(g, *naive, *arena, p), "");
}

// Optimus' fused-tiled groups run their float32 ops and conversions strip by strip on the host too.
TEST(Hybrid, FusedTiledStrategiesMatchNaive) {
  const ir::Graph g = HybridGraph(nullptr);
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_TRUE(q.ok()) << q.status().message();
  for (const char* s : {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"}) {
    SCOPED_TRACE(s);
    const plan::Plan p = testing::PlanInt8(g, s, "optimus-accel");
    ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
    auto naive = RunNaive(g, testing::PlanOrder(g, p), q->data, &*q);
    ASSERT_TRUE(naive.ok()) << naive.status().message();
    auto arena = RunArena(g, p, q->data, &*q);
    ASSERT_TRUE(arena.ok()) << arena.status().message();
    EXPECT_EQ(Compare(g, *naive, *arena, p), "");
    EXPECT_TRUE(arena->notes.empty()) << arena->notes.front();
  }
}

// A graph whose ops all have int8 kernels is not touched (so its plans stay byte-identical).
TEST(Hybrid, AllInt8GraphUnchanged) {
  for (const char* model : {"models/onnx/mobilenet_v2.onnx", "models/onnx/resnet18.onnx"}) {
    auto gi = import::ImportModel(testing::SourcePath(model), {});
    ASSERT_TRUE(gi.ok()) << gi.status().message();
    ir::ApplyDtype(*gi, ir::DataType::kInt8);
    const ir::Graph before = *gi;
    auto r = MakeHybridInt8(&*gi);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->changed()) << model << ": " << r->Summary();
    ASSERT_EQ(gi->num_ops(), before.num_ops());
    ASSERT_EQ(gi->num_tensors(), before.num_tensors());
    for (const ir::Tensor& t : before.tensors()) EXPECT_EQ(gi->tensor(t.id).dtype, t.dtype) << t.name;
  }
}

// An op with neither an int8 nor a float32 kernel: the int8 run names it and suggests float32.
TEST(Hybrid, OpWithoutAnyKernelIsNamed) {
  ir::Graph g = testing::LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "opaque", "layout": "NHWC", "dtype": "int8",
    "tensors": [
      {"name": "x", "shape": [1, 6, 6, 4], "kind": "input"},
      {"name": "y", "shape": [1, 6, 6, 4], "kind": "output"}
    ],
    "ops": [{"name": "fl", "type": "Opaque", "inputs": ["x"], "outputs": ["y"]}]
  })");
  ir::ApplyDtype(g, ir::DataType::kInt8);
  auto r = MakeHybridInt8(&g);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed());
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("(1 op, first 'fl')"), std::string::npos)
      << q.status().message();
  // No kernel in any dtype: the message must not send the user to --dtype float32, which fails too.
  EXPECT_NE(q.status().message().find("cannot run this model in any dtype"), std::string::npos)
      << q.status().message();
  EXPECT_EQ(q.status().message().find("--dtype float32"), std::string::npos) << q.status().message();
}

// The bundled transformer (LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div, attention MatMuls of two
// activations) verifies in int8 as a hybrid graph, and codegen refuses it by name.
TEST(Hybrid, BundledTransformerVerifiesInInt8) {
  const std::string model = testing::SourcePath("models/onnx/transformer.onnx");
  auto run = testing::Cli("verify " + model + " --target sram:64MiB --strategy tflm");
  EXPECT_EQ(run.rc, 0) << run.all();
  EXPECT_NE(run.out.find("verify tflm: OK (int8"), std::string::npos) << run.all();
  EXPECT_NE(run.out.find("outputs bit-identical"), std::string::npos) << run.all();
  EXPECT_NE(run.err.find("hybrid int8: 136 ops run in float32"), std::string::npos) << run.all();
  auto cg = testing::Cli("codegen " + model + " --target stm32f767zi --strategy tflm --out " +
                         testing::WriteTempFile("hybrid_fw_unused", "") + ".d");
  EXPECT_EQ(cg.rc, 1) << cg.all();
  EXPECT_NE(cg.err.find("Div (50 ops, first '/encoder/layers.0/self_attn/Div_2')"), std::string::npos) << cg.all();
  EXPECT_NE(cg.err.find("the firmware cannot run this model"), std::string::npos) << cg.all();
}

}  // namespace
}  // namespace sramplan::exec
