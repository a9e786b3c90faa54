// int8 execution: post-training quantisation from a float32 reference run, the int8 kernel
// dispatch, and naive == arena bit for bit on every strategy's int8 plan.
#include <gtest/gtest.h>

#include "test_util.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/kernels.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "random_graphs.h"
#include "sramplan_rt_host.h"
#include "test_graphs.h"

namespace sramplan::exec {
namespace {

ir::Graph Int8(ir::Graph g) {
  ir::ApplyDtype(g, ir::DataType::kInt8);
  return g;
}

ir::Graph Load(const char* text) {
  auto g = import::ImportNativeJson(text, "t", {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return Int8(std::move(g).value());
}

analysis::Schedule OrderOf(const ir::Graph& g, const plan::Plan& p) { return testing::PlanOrder(g, p); }

plan::Plan MakePlan(const ir::Graph& g, const std::string& strategy) { return testing::PlanInt8(g, strategy); }

// Both executors on the int8 plan; Compare's verdict ("" = identical) or the arena run's error.
std::string Verify(const ir::Graph& g, const plan::Plan& p, const QuantizedModel& q) {
  auto naive = RunNaive(g, OrderOf(g, p), q.data, &q);
  EXPECT_TRUE(naive.ok()) << naive.status().message();
  if (!naive.ok()) return "naive: " + naive.status().message();
  auto arena = RunArena(g, p, q.data, &q);
  if (!arena.ok()) return "error: " + arena.status().message();
  return Compare(g, *naive, *arena, p);
}

QuantizedModel Quantized(const ir::Graph& g, ExecResult* reference = nullptr) {
  auto q = QuantizeModel(g, kDefaultSeed, reference);
  EXPECT_TRUE(q.ok()) << q.status().message();
  return std::move(q).value();
}

TEST(Int8Exec, EveryStrategyMatchesOnSmallGraphs) {
  for (const char* text : {testing::kChainGraph, testing::kBottleneckGraph}) {
    ir::Graph g = Load(text);
    QuantizedModel q = Quantized(g);
    for (const auto& s : driver::StrategiesOf(driver::Family::kTensor))
      EXPECT_EQ(Verify(g, MakePlan(g, s.name), q), "") << g.name << " " << s.name;
  }
}

TEST(Int8Exec, RandomDagsAllStrategies) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    ir::Graph g = Int8(seed % 3 == 0   ? testing::Chain(seed, 30)
                       : seed % 3 == 1 ? testing::Diamonds(seed, 40)
                                       : testing::Cells(seed, 60));
    QuantizedModel q = Quantized(g);
    for (const auto& s : driver::StrategiesOf(driver::Family::kTensor))
      EXPECT_EQ(Verify(g, MakePlan(g, s.name), q), "") << g.name << " " << s.name;
  }
}

TEST(Int8Exec, InplaceStrategyReallyRunsInPlace) {
  // The bottleneck's depthwise conv writes over its input under "inplace": the arena run goes
  // through the int8 scratch path and still matches.
  ir::Graph g = Load(testing::kBottleneckGraph);
  plan::Plan p = MakePlan(g, "inplace");
  bool scratch = false;
  for (const auto& b : p.buffers) scratch = scratch || b.tensor == "dw.scratch";
  EXPECT_TRUE(scratch);
  EXPECT_EQ(Verify(g, p, Quantized(g)), "");
}

TEST(Int8Exec, QuantisedOutputsTrackTheFloatReference) {
  for (const char* text : {testing::kChainGraph, testing::kBottleneckGraph}) {
    ir::Graph g = Load(text);
    ExecResult reference;
    QuantizedModel q = Quantized(g, &reference);
    auto r = RunNaive(g, analysis::ModelOrder(g), q.data, &q);
    ASSERT_TRUE(r.ok()) << r.status().message();
    auto e = CompareWithReference(g, q, *r, reference);
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_LT(e->max_error_in_scales, 4.0) << g.name << ": " << e->Summary();
    EXPECT_LT(e->saturated_fraction, 0.05) << g.name << ": " << e->Summary();
    // Not collapsed onto a few codes.
    std::set<int8_t> codes;
    for (uint8_t b : r->outputs[0]) codes.insert(static_cast<int8_t>(b));
    EXPECT_GT(codes.size(), 40u) << g.name;
  }
}

TEST(Int8Exec, ParametersFollowTFLiteConventions) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  QuantizedModel q = Quantized(g);
  auto P = [&](const char* name) { return q.params[g.FindTensor(name)->value()]; };
  // Weights: per output channel, symmetric, and the largest |w| of each channel is +-127.
  const ir::QuantParams& we = P("we");
  ASSERT_EQ(we.scale.size(), 32u);
  for (int32_t z : we.zero_point) EXPECT_EQ(z, 0);
  const auto& wbytes = q.data.values[g.FindTensor("we")->value()];
  for (int k = 0; k < 32; ++k) {
    int mx = 0;
    for (int i = 0; i < 16; ++i)
      mx = std::max(mx, std::abs(static_cast<int>(static_cast<int8_t>(wbytes[k * 16 + i]))));
    EXPECT_EQ(mx, 127) << k;
  }
  // A relu6 activation range starts at 0: zero point -128.
  EXPECT_EQ(P("e").zero_point[0], -128);
  EXPECT_EQ(P("d").zero_point[0], -128);
  // Deterministic.
  QuantizedModel q2 = Quantized(g);
  EXPECT_EQ(q.data.values, q2.data.values);
  EXPECT_EQ(q.tables, q2.tables);
}

TEST(Int8Exec, ShiftedBufferIsCaught) {
  ir::Graph g = Load(testing::kChainGraph);
  QuantizedModel q = Quantized(g);
  plan::Plan p = MakePlan(g, "tflm");
  // Move a onto b: both live at step 1 (relu reads a, writes b).
  int64_t b_offset = 0;
  for (const auto& b : p.buffers)
    if (b.tensor == "b") b_offset = b.offset;
  for (auto& b : p.buffers)
    if (b.tensor == "a") b.offset = b_offset;
  EXPECT_NE(Verify(g, p, q), "");
}

TEST(Int8Exec, ShiftedBufferInTheBottleneckIsCaught) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  QuantizedModel q = Quantized(g);
  plan::Plan p = MakePlan(g, "tflm");
  // x lives through the whole block (the residual add reads it); put it on top of e.
  int64_t e_offset = 0;
  for (const auto& b : p.buffers)
    if (b.tensor == "e") e_offset = b.offset;
  for (auto& b : p.buffers)
    if (b.tensor == "x") b.offset = e_offset;
  EXPECT_NE(Verify(g, p, q), "");
}

// NCHW graphs of the ONNX zoo: convolutions (staged through channels-last copies), grouped
// convolutions, pools, concat with requantisation, BatchNormalization tables, linear resize.
const char* kNchwGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "nchw", "layout": "NCHW", "dtype": "float32",
  "tensors": [
    {"name": "x", "shape": [1, 8, 9, 9], "kind": "input"},
    {"name": "w1", "shape": [16, 8, 3, 3], "kind": "constant"}, {"name": "b1", "shape": [16], "kind": "constant"},
    {"name": "c1", "shape": [1, 16, 9, 9]}, {"name": "r1", "shape": [1, 16, 9, 9]},
    {"name": "wg", "shape": [16, 4, 3, 3], "kind": "constant"}, {"name": "g1", "shape": [1, 16, 5, 5]},
    {"name": "p1", "shape": [1, 16, 5, 5]},
    {"name": "cat", "shape": [1, 32, 5, 5]},
    {"name": "s", "shape": [32], "kind": "constant"}, {"name": "bb", "shape": [32], "kind": "constant"},
    {"name": "m", "shape": [32], "kind": "constant"}, {"name": "v", "shape": [32], "kind": "constant"},
    {"name": "bn", "shape": [1, 32, 5, 5]},
    {"name": "up", "shape": [1, 32, 10, 10]},
    {"name": "gap", "shape": [1, 32, 1, 1]},
    {"name": "y", "shape": [1, 32, 10, 10], "kind": "output"}
  ],
  "ops": [
    {"name": "conv1", "type": "Conv", "inputs": ["x", "w1", "b1"], "outputs": ["c1"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
    {"name": "relu1", "type": "Relu", "inputs": ["c1"], "outputs": ["r1"]},
    {"name": "gconv", "type": "Conv", "inputs": ["r1", "wg"], "outputs": ["g1"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "group": 4}},
    {"name": "pool", "type": "MaxPool", "inputs": ["r1"], "outputs": ["p1"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}},
    {"name": "concat", "type": "Concat", "inputs": ["g1", "p1"], "outputs": ["cat"], "attrs": {"axis": 1}},
    {"name": "bnorm", "type": "BatchNormalization", "inputs": ["cat", "s", "bb", "m", "v"], "outputs": ["bn"]},
    {"name": "resize", "type": "Resize", "inputs": ["bn"], "outputs": ["up"],
     "attrs": {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}},
    {"name": "gap_op", "type": "GlobalAveragePool", "inputs": ["bn"], "outputs": ["gap"]},
    {"name": "mul", "type": "Mul", "inputs": ["up", "gap"], "outputs": ["y"]}
  ]
})";

TEST(Int8Exec, NchwOpsMatchAcrossStrategiesAndTrackFloat) {
  ir::Graph g = Load(kNchwGraph);
  ExecResult reference;
  QuantizedModel q = Quantized(g, &reference);
  for (const auto& s : driver::StrategiesOf(driver::Family::kTensor))
    EXPECT_EQ(Verify(g, MakePlan(g, s.name), q), "") << s.name;
  auto r = RunNaive(g, analysis::ModelOrder(g), q.data, &q);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto e = CompareWithReference(g, q, *r, reference);
  ASSERT_TRUE(e.ok());
  EXPECT_LT(e->max_error_in_scales, 6.0) << e->Summary();
  // p1 (MaxPool output) shares r1's parameters; the concat requantises g1 or shares its params.
  EXPECT_EQ(q.params[g.FindTensor("p1")->value()].scale,
            q.params[g.FindTensor("r1")->value()].scale);
  EXPECT_EQ(q.tables[g.op(g.tensor(*g.FindTensor("bn")).producer).id.value()].size(), 32u * 256u);
}

// Reference int8 convolution in plain loops (N = 1), any spatial rank up to 3: the semantics
// sp_conv_s8 documents, extended to a depth axis.
std::vector<int8_t> ReferenceConv(const std::vector<int64_t>& xs, const int8_t* x, int32_t in_zp,
                                  const std::vector<int64_t>& ws, const int8_t* w,
                                  const int32_t* bias, const std::vector<sp_requant_t>& rq,
                                  int32_t out_zp, const std::vector<int64_t>& ys,
                                  const std::vector<int64_t>& stride,
                                  const std::vector<int64_t>& pad) {
  const int nsp = static_cast<int>(xs.size()) - 2;
  std::vector<int64_t> X(3, 1), O(3, 1), Kk(3, 1), S(3, 1), P(3, 0);
  for (int i = 0; i < nsp; ++i) {
    X[3 - nsp + i] = xs[2 + i], O[3 - nsp + i] = ys[2 + i], Kk[3 - nsp + i] = ws[2 + i];
    S[3 - nsp + i] = stride[i], P[3 - nsp + i] = pad[i];
  }
  const int64_t C = xs[1], K = ys[1];
  std::vector<int8_t> y(static_cast<size_t>(K * O[0] * O[1] * O[2]));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t a = 0; a < O[0]; ++a)
      for (int64_t b = 0; b < O[1]; ++b)
        for (int64_t c = 0; c < O[2]; ++c) {
          int64_t acc = bias ? bias[k] : 0;
          for (int64_t ci = 0; ci < C; ++ci)
            for (int64_t i = 0; i < Kk[0]; ++i)
              for (int64_t j = 0; j < Kk[1]; ++j)
                for (int64_t l = 0; l < Kk[2]; ++l) {
                  int64_t p = a * S[0] - P[0] + i, q = b * S[1] - P[1] + j, r = c * S[2] - P[2] + l;
                  if (p < 0 || p >= X[0] || q < 0 || q >= X[1] || r < 0 || r >= X[2]) continue;
                  acc += (x[((ci * X[0] + p) * X[1] + q) * X[2] + r] - in_zp) *
                         w[(((k * C + ci) * Kk[0] + i) * Kk[1] + j) * Kk[2] + l];
                }
          int32_t v = sp_multiply_by_quantized_multiplier(static_cast<int32_t>(acc),
                                                          rq[k].multiplier, rq[k].shift) +
                      out_zp;
          y[((k * O[0] + a) * O[1] + b) * O[2] + c] = static_cast<int8_t>(std::clamp(v, -128, 127));
        }
  return y;
}

// 1-D, 2-D and 3-D convolutions (the 3-D ones through each decomposition and the plain loops)
// agree with the reference loops.
TEST(Int8Exec, ConvolutionPathsMatchReferenceLoops) {
  struct Case {
    std::vector<int64_t> x, w, y, stride, pad;  // pad: begins (ends equal)
  };
  const std::vector<Case> cases = {
      {{1, 5, 11}, {6, 5, 3}, {1, 6, 6}, {2}, {1}},
      {{1, 6, 7, 8}, {5, 6, 3, 3}, {1, 5, 7, 8}, {1, 1}, {1, 1}},
      {{1, 4, 5, 6, 7}, {6, 4, 1, 3, 3}, {1, 6, 3, 3, 4}, {2, 2, 2}, {0, 1, 1}},  // per depth slice
      {{1, 4, 5, 6, 7}, {6, 4, 3, 1, 1}, {1, 6, 3, 6, 7}, {2, 1, 1}, {1, 0, 0}},  // over (D, H*W)
      {{1, 3, 4, 5, 5}, {4, 3, 3, 3, 3}, {1, 4, 4, 5, 5}, {1, 1, 1}, {1, 1, 1}},  // plain loops
  };
  for (const Case& c : cases) {
    ir::Graph g;
    g.name = "conv";
    g.layout = ir::Layout::kNCHW;
    auto T = [&](const char* name, std::vector<int64_t> shape, ir::TensorKind kind,
                 ir::DataType dt) {
      ir::Tensor t;
      t.name = name;
      t.shape = std::move(shape);
      t.kind = kind;
      t.dtype = dt;
      return g.AddTensor(std::move(t));
    };
    ir::TensorId x = T("x", c.x, ir::TensorKind::kInput, ir::DataType::kInt8);
    ir::TensorId w = T("w", c.w, ir::TensorKind::kConstant, ir::DataType::kInt8);
    ir::TensorId b = T("b", {c.w[0]}, ir::TensorKind::kConstant, ir::DataType::kInt32);
    ir::TensorId y = T("y", c.y, ir::TensorKind::kOutput, ir::DataType::kInt8);
    ir::Op op;
    op.name = "conv";
    op.type = "Conv";
    op.inputs = {x, w, b};
    op.outputs = {y};
    std::vector<int64_t> pads = c.pad;
    pads.insert(pads.end(), c.pad.begin(), c.pad.end());
    op.attrs.Set("strides", c.stride);
    op.attrs.Set("pads", pads);
    op.attrs.Set("kernel_shape", std::vector<int64_t>(c.w.begin() + 2, c.w.end()));
    g.AddOp(std::move(op));
    ASSERT_TRUE(ir::VerifyGraph(g).ok()) << ir::VerifyGraph(g).message();
    QuantizedModel q = Quantized(g);
    auto r = RunNaive(g, analysis::ModelOrder(g), q.data, &q);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const auto& qi = q.params[x.value()];
    const auto& qw = q.params[w.value()];
    const auto& qo = q.params[y.value()];
    std::vector<sp_requant_t> rq(c.w[0]);
    for (int64_t k = 0; k < c.w[0]; ++k)
      rq[k] =
          sp_host_quantize_multiplier(static_cast<double>(qi.scale[0]) * qw.scale[k] / qo.scale[0]);
    std::vector<int8_t> want = ReferenceConv(
        c.x, reinterpret_cast<const int8_t*>(q.data.values[x.value()].data()), qi.zero_point[0],
        c.w, reinterpret_cast<const int8_t*>(q.data.values[w.value()].data()),
        reinterpret_cast<const int32_t*>(q.data.values[b.value()].data()), rq, qo.zero_point[0],
        c.y, c.stride, c.pad);
    ASSERT_EQ(r->outputs[0].size(), want.size());
    EXPECT_EQ(std::memcmp(r->outputs[0].data(), want.data(), want.size()), 0)
        << "x rank " << c.x.size();
  }
}

TEST(Int8Exec, MatMulOfTwoActivationsIsUnsupportedNamingTheOp) {
  const char* text = R"({
    "format": "sramplan-graph", "version": 1, "name": "mm", "layout": "NCHW", "dtype": "int8",
    "tensors": [
      {"name": "a", "shape": [4, 8], "kind": "input"}, {"name": "b", "shape": [8, 4], "kind": "input"},
      {"name": "y", "shape": [4, 4], "kind": "output"}
    ],
    "ops": [{"name": "attn_scores", "type": "MatMul", "inputs": ["a", "b"], "outputs": ["y"]}]
  })";
  ir::Graph g = Load(text);
  // Refused up front, before the float32 calibration run.
  auto q = QuantizeModel(g, kDefaultSeed);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(q.status().message().find("MatMul of two activations"), std::string::npos)
      << q.status().message();
  EXPECT_NE(q.status().message().find("attn_scores"), std::string::npos) << q.status().message();
  // The kernel itself refuses too, naming the op.
  ir::Graph gf = g;
  ir::ApplyDtype(gf, ir::DataType::kFloat32);
  auto fdata = MakeModelData(gf, kDefaultSeed);
  auto cal = Calibrate(gf, *fdata);
  ASSERT_TRUE(cal.ok());
  auto qm = Quantize(g, gf, *fdata, *cal);
  ASSERT_TRUE(qm.ok()) << qm.status().message();
  auto r = RunNaive(g, analysis::ModelOrder(g), qm->data, &*qm);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("attn_scores"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace sramplan::exec
