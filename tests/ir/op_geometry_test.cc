#include "ir/op_geometry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "import/import.h"
#include "ir/shape_inference.h"
#include "test_util.h"

namespace sramplan::ir {
namespace {

using V = std::vector<int64_t>;

// One op over tensors of the given shapes: inputs x (and w, b when given), output y.
struct OneOp {
  Graph g;
  OpId id;
  const Op& op() const { return g.op(id); }
};

OneOp Make(const std::string& type, V x, V w, V b, V y, Layout layout = Layout::kNCHW) {
  OneOp r;
  r.g.layout = layout;
  Op op;
  op.name = "op1";
  op.type = type;
  auto add = [&](const std::string& name, const V& shape, TensorKind kind) {
    Tensor t;
    t.name = name;
    t.shape = shape;
    t.kind = kind;
    return r.g.AddTensor(std::move(t));
  };
  op.inputs.push_back(add("x", x, TensorKind::kInput));
  if (!w.empty()) op.inputs.push_back(add("w", w, TensorKind::kConstant));
  if (!b.empty()) op.inputs.push_back(add("b", b, TensorKind::kConstant));
  op.outputs.push_back(add("y", y, TensorKind::kOutput));
  r.id = r.g.AddOp(op);
  return r;
}

TEST(OpGeometry, ConvDefaultsAndOutput) {
  OneOp c = Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {4}, {1, 4, 8, 8});
  c.g.op(c.id).attrs.Set("pads", V{1, 1, 1, 1});
  auto geo = ParseConvGeometry(c.g, c.op());
  ASSERT_TRUE(geo.ok()) << geo.status().message();
  EXPECT_EQ(geo->batch, 1);
  EXPECT_EQ(geo->in_channels, 3);
  EXPECT_EQ(geo->out_channels, 4);
  EXPECT_EQ(geo->in_spatial, (V{8, 8}));
  EXPECT_EQ(geo->out_spatial, (V{8, 8}));
  EXPECT_EQ(geo->kernel, (V{3, 3}));
  EXPECT_EQ(geo->strides, (V{1, 1}));
  EXPECT_EQ(geo->dilations, (V{1, 1}));
  EXPECT_EQ(geo->pads, (V{1, 1, 1, 1}));
  EXPECT_EQ(geo->group, 1);
  EXPECT_TRUE(geo->has_bias);
  EXPECT_FALSE(geo->depthwise);
  EXPECT_FALSE(geo->kernel_shape_given);
  EXPECT_FALSE(geo->IsPointwise());
  EXPECT_TRUE(geo->Is2D());
  EXPECT_EQ(geo->pad_begin(0), 1);
  EXPECT_EQ(geo->pad_end(1), 1);
  EXPECT_EQ(geo->Macs(), 1 * 4 * 8 * 8 * 3 * 9);
}

TEST(OpGeometry, ConvStridedDilatedAsymmetricPads) {
  OneOp c = Make("Conv", {1, 2, 9, 10}, {6, 2, 3, 2}, {}, {1, 6, 3, 5});
  Op& op = c.g.op(c.id);
  op.attrs.Set("kernel_shape", V{3, 2});
  op.attrs.Set("strides", V{3, 2});
  op.attrs.Set("dilations", V{2, 1});
  op.attrs.Set("pads", V{0, 1, 1, 0});
  auto geo = ParseConvGeometry(c.g, c.op());
  ASSERT_TRUE(geo.ok()) << geo.status().message();
  // H: (9 + 1 - 5) / 3 + 1 = 2; W: (10 + 1 - 2) / 2 + 1 = 5.
  EXPECT_EQ(geo->out_spatial, (V{2, 5}));
  EXPECT_EQ(geo->EffectiveKernel(0), 5);
  EXPECT_EQ(geo->pad_begin(1), 1);
  EXPECT_EQ(geo->pad_end(0), 1);
  EXPECT_TRUE(geo->kernel_shape_given);
  EXPECT_FALSE(geo->UnitStrides());
  EXPECT_FALSE(geo->UnitDilations());
  EXPECT_FALSE(geo->ZeroPads());
}

TEST(OpGeometry, PointwiseAndDepthwise) {
  OneOp pw = Make("Conv", {1, 8, 4, 4}, {16, 8, 1, 1}, {}, {1, 16, 4, 4});
  auto p = ParseConvGeometry(pw.g, pw.op());
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->IsPointwise());
  EXPECT_EQ(p->Macs(), 16 * 16 * 8);
  // A dilated 1x1 conv is not pointwise (the verifier's fused-group rule).
  pw.g.op(pw.id).attrs.Set("dilations", V{2, 2});
  EXPECT_FALSE(ParseConvGeometry(pw.g, pw.op())->IsPointwise());

  OneOp dw = Make("Conv", {1, 8, 6, 6}, {8, 1, 3, 3}, {}, {1, 8, 3, 3});
  dw.g.op(dw.id).attrs.Set("group", int64_t{8});
  dw.g.op(dw.id).attrs.Set("strides", V{2, 2});
  dw.g.op(dw.id).attrs.Set("pads", V{1, 1, 1, 1});
  auto d = ParseConvGeometry(dw.g, dw.op());
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->depthwise);
  EXPECT_EQ(d->depthwise, IsDepthwiseConv(dw.g, dw.op()));
  EXPECT_EQ(d->in_channels_per_group(), 1);
  EXPECT_EQ(d->out_spatial, (V{3, 3}));
  EXPECT_EQ(d->Macs(), 8 * 9 * 1 * 9);
}

TEST(OpGeometry, ConvNhwcReadsTheLastAxisAsChannels) {
  // NHWC weight: [C_out, kh, kw, C_in / group].
  OneOp c = Make("Conv", {1, 10, 12, 3}, {5, 3, 1, 3}, {}, {1, 8, 12, 5}, Layout::kNHWC);
  auto geo = ParseConvGeometry(c.g, c.op());
  ASSERT_TRUE(geo.ok()) << geo.status().message();
  EXPECT_EQ(geo->layout, Layout::kNHWC);
  EXPECT_EQ(geo->in_channels, 3);
  EXPECT_EQ(geo->out_channels, 5);
  EXPECT_EQ(geo->in_spatial, (V{10, 12}));
  EXPECT_EQ(geo->kernel, (V{3, 1}));
  EXPECT_EQ(geo->out_spatial, (V{8, 12}));
  EXPECT_EQ(geo->weight_shape, (V{5, 3, 1, 3}));
}

TEST(OpGeometry, AutoPadSameGivesTheImpliedPads) {
  OneOp c = Make("Conv", {1, 1, 7, 8}, {1, 1, 4, 3}, {}, {1, 1, 4, 4});
  c.g.op(c.id).attrs.Set("strides", V{2, 2});
  c.g.op(c.id).attrs.Set("auto_pad", std::string("SAME_UPPER"));
  auto up = ParseConvGeometry(c.g, c.op());
  ASSERT_TRUE(up.ok()) << up.status().message();
  EXPECT_EQ(up->out_spatial, (V{4, 4}));
  // H: total (4 - 1) * 2 + 4 - 7 = 3 -> 1 before, 2 after; W: (4 - 1) * 2 + 3 - 8 = 1 -> 0, 1.
  EXPECT_EQ(up->pads, (V{1, 0, 2, 1}));
  c.g.op(c.id).attrs.Set("auto_pad", std::string("SAME_LOWER"));
  auto low = ParseConvGeometry(c.g, c.op());
  ASSERT_TRUE(low.ok());
  EXPECT_EQ(low->pads, (V{2, 1, 1, 0}));
  EXPECT_EQ(low->auto_pad, "SAME_LOWER");
}

TEST(OpGeometry, PoolCeilModeAndCountIncludePad) {
  OneOp p = Make("MaxPool", {1, 4, 7, 7}, {}, {}, {1, 4, 4, 4});
  p.g.op(p.id).attrs.Set("kernel_shape", V{2, 2});
  p.g.op(p.id).attrs.Set("strides", V{2, 2});
  p.g.op(p.id).attrs.Set("ceil_mode", int64_t{1});
  auto geo = ParsePoolGeometry(p.g, p.op());
  ASSERT_TRUE(geo.ok()) << geo.status().message();
  EXPECT_TRUE(geo->max);
  EXPECT_TRUE(geo->ceil_mode);
  EXPECT_EQ(geo->out_spatial, (V{4, 4}));
  EXPECT_EQ(geo->out_channels, 4);
  p.g.op(p.id).attrs.Set("ceil_mode", int64_t{0});
  EXPECT_EQ(ParsePoolGeometry(p.g, p.op())->out_spatial, (V{3, 3}));

  OneOp a = Make("AveragePool", {1, 2, 5}, {}, {}, {1, 2, 5});
  a.g.op(a.id).attrs.Set("kernel_shape", V{3});
  a.g.op(a.id).attrs.Set("pads", V{1, 1});
  a.g.op(a.id).attrs.Set("count_include_pad", int64_t{1});
  auto avg = ParsePoolGeometry(a.g, a.op());
  ASSERT_TRUE(avg.ok()) << avg.status().message();
  EXPECT_FALSE(avg->max);
  EXPECT_TRUE(avg->count_include_pad);
  EXPECT_EQ(avg->spatial_rank(), 1);
  EXPECT_EQ(avg->out_spatial, (V{5}));
}

TEST(OpGeometry, GemmTransposesAndBias) {
  OneOp g = Make("Gemm", {8, 3}, {5, 8}, {5}, {3, 5});
  g.g.op(g.id).attrs.Set("transA", int64_t{1});
  g.g.op(g.id).attrs.Set("transB", int64_t{1});
  g.g.op(g.id).attrs.Set("alpha", 0.5);
  auto geo = ParseGemmGeometry(g.g, g.op());
  // op(A) = A^T is 3 x 8; op(B) = B^T is 8 x 5.
  ASSERT_TRUE(geo.ok()) << geo.status().message();
  EXPECT_TRUE(geo->trans_a);
  EXPECT_TRUE(geo->trans_b);
  EXPECT_EQ(geo->alpha, 0.5);
  EXPECT_EQ(geo->beta, 1.0);
  EXPECT_TRUE(geo->has_bias);
  EXPECT_EQ(geo->m, 3);
  EXPECT_EQ(geo->k, 8);
  EXPECT_EQ(geo->n, 5);
  EXPECT_TRUE(geo->batch.empty());
  EXPECT_EQ(geo->Macs(), 3 * 8 * 5);
}

TEST(OpGeometry, MatMulBatchAndVectors) {
  OneOp m = Make("MatMul", {2, 1, 4, 6}, {3, 6, 7}, {}, {2, 3, 4, 7});
  auto geo = ParseGemmGeometry(m.g, m.op());
  ASSERT_TRUE(geo.ok()) << geo.status().message();
  EXPECT_EQ(geo->batch, (V{2, 3}));
  EXPECT_EQ(geo->m, 4);
  EXPECT_EQ(geo->k, 6);
  EXPECT_EQ(geo->n, 7);
  EXPECT_EQ(geo->Macs(), 2 * 3 * 4 * 6 * 7);
  OneOp v = Make("MatMul", {6}, {6, 7}, {}, {7});
  auto vg = ParseGemmGeometry(v.g, v.op());
  ASSERT_TRUE(vg.ok());
  EXPECT_TRUE(vg->a_vector);
  EXPECT_FALSE(vg->b_vector);
  EXPECT_EQ(vg->m, 1);
  EXPECT_EQ(vg->n, 7);
}

// Every error names the op and says what is wrong.
TEST(OpGeometry, ErrorsNameTheOp) {
  struct Case {
    std::string what;
    OneOp op;
    std::string expect;
  };
  std::vector<Case> cases;
  cases.push_back({"rank", Make("Conv", {3, 8}, {4, 3}, {}, {1}), "needs at least 3 dimensions"});
  cases.push_back({"group", Make("Conv", {1, 3, 8, 8}, {4, 2, 3, 3}, {}, {1}), "are inconsistent"});
  {
    OneOp c = Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {}, {1});
    c.g.op(c.id).attrs.Set("kernel_shape", V{5, 5});
    cases.push_back(
        {"kernel_shape", std::move(c), "kernel_shape [5,5] disagrees with weight [4,3,3,3]"});
  }
  cases.push_back({"bias", Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {3}, {1}),
                   "bias [3] must have 4 elements"});
  {
    OneOp c = Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {}, {1});
    c.g.op(c.id).attrs.Set("strides", V{1});
    cases.push_back({"counts", std::move(c), "wrong number of entries for 2 spatial dims"});
  }
  {
    OneOp c = Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {}, {1});
    c.g.op(c.id).attrs.Set("pads", V{0, -1, 0, 0});
    cases.push_back({"negative pads", std::move(c), "negative padding"});
  }
  {
    OneOp c = Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {}, {1});
    c.g.op(c.id).attrs.Set("strides", V{0, 1});
    cases.push_back({"stride 0", std::move(c), "kernel, stride and dilation must be >= 1"});
  }
  {
    OneOp c = Make("Conv", {1, 3, 8, 8}, {4, 3, 3, 3}, {}, {1});
    c.g.op(c.id).attrs.Set("auto_pad", std::string("SAME_UPPER"));
    c.g.op(c.id).attrs.Set("dilations", V{int64_t{1} << 62, 1});
    cases.push_back({"SAME overflow", std::move(c), "the SAME padding of axis 0 overflows"});
  }
  cases.push_back({"window", Make("Conv", {1, 3, 2, 8}, {4, 3, 3, 3}, {}, {1}),
                   "window of 3 does not fit input extent 2 plus padding 0"});
  cases.push_back({"pool kernel", Make("MaxPool", {1, 3, 8, 8}, {}, {}, {1}),
                   "kernel_shape must have 2 entries"});
  cases.push_back({"gemm rank", Make("Gemm", {1, 3, 8}, {3, 4}, {}, {1}), "Gemm needs 2-D inputs"});
  cases.push_back({"gemm inner", Make("Gemm", {2, 3}, {4, 5}, {}, {1}), "inner dimensions differ"});
  cases.push_back({"gemm bias", Make("Gemm", {2, 3}, {3, 5}, {4}, {1}),
                   "bias [4] does not broadcast to the output [2,5]"});
  cases.push_back({"matmul batch", Make("MatMul", {2, 4, 6}, {3, 6, 7}, {}, {1}),
                   "batch dimensions do not broadcast"});
  cases.push_back(
      {"matmul arity", Make("MatMul", {2, 4, 6}, {}, {}, {1}), "needs 2 inputs, has 1"});
  cases.push_back({"wrong type", Make("Relu", {2, 4, 6}, {}, {}, {1}), "is not a Conv"});
  for (const Case& c : cases) {
    const Op& op = c.op.op();
    Status s = op.type == "Conv" || op.type == "Relu" ? ParseConvGeometry(c.op.g, op).status()
               : op.type == "MaxPool"                 ? ParsePoolGeometry(c.op.g, op).status()
                                                      : ParseGemmGeometry(c.op.g, op).status();
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_NE(s.message().find("op 'op1' (" + op.type + "): "), std::string::npos)
        << c.what << ": " << s.message();
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.what << ": " << s.message();
  }
}

// On real models: every Conv, pool and Gemm/MatMul parses, and the geometry's output extents are
// the output tensor's (the graph was verified, so they are shape inference's).
TEST(OpGeometry, BundledModelsParseAndMatchOutputShapes) {
  int convs = 0, pools = 0, gemms = 0;
  for (const char* model :
       {"models/onnx/mobilenet_v2.onnx", "models/onnx/googlenet.onnx",
        "models/nas/darts-cifar10.graph.json", "models/mcunet_blocks/B1.graph.json"}) {
    auto g = import::ImportModel(testing::SourcePath(model), {});
    ASSERT_TRUE(g.ok()) << model << ": " << g.status().message();
    for (const Op& op : g->ops()) {
      const auto& y = g->tensor(op.outputs[0]).shape;
      const int rank = static_cast<int>(y.size());
      const bool nhwc = g->layout == Layout::kNHWC;
      auto check_window = [&](const WindowGeometry& w) {
        for (int i = 0; i < w.spatial_rank(); ++i)
          EXPECT_EQ(w.out_spatial[i], y[nhwc ? 1 + i : 2 + i]) << op.name;
        EXPECT_EQ(w.out_channels, y[nhwc ? rank - 1 : 1]) << op.name;
      };
      if (op.type == "Conv") {
        auto c = ParseConvGeometry(*g, op);
        ASSERT_TRUE(c.ok()) << c.status().message();
        check_window(*c);
        EXPECT_EQ(c->depthwise, IsDepthwiseConv(*g, op));
        EXPECT_EQ(c->kernel, op.attrs.GetInts("kernel_shape", c->kernel)) << op.name;
        ++convs;
      } else if (op.type == "MaxPool" || op.type == "AveragePool") {
        auto p = ParsePoolGeometry(*g, op);
        ASSERT_TRUE(p.ok()) << p.status().message();
        check_window(*p);
        ++pools;
      } else if (op.type == "Gemm" || op.type == "MatMul") {
        auto m = ParseGemmGeometry(*g, op);
        ASSERT_TRUE(m.ok()) << m.status().message();
        EXPECT_EQ(y.back(), m->n) << op.name;
        ++gemms;
      }
    }
  }
  EXPECT_GT(convs, 100);
  EXPECT_GT(pools, 5);
  EXPECT_GT(gemms, 1);
}

}  // namespace
}  // namespace sramplan::ir
