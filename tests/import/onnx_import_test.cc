// Tests of the ONNX importer. Small models are built in code with the protobuf API; the zoo test
// imports every models/onnx/*.onnx that exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "import/import.h"
#include "ir/graph.h"
#include "support/strings.h"
#include "test_util.h"

namespace sramplan::import {
namespace {

using onnx::TensorProto;
using ::testing::HasSubstr;

// A dimension of a graph input: a number or a symbolic name.
struct Dim {
  Dim(int64_t v) : value(v) {}      // NOLINT: implicit by design
  Dim(const char* p) : param(p) {}  // NOLINT: implicit by design
  int64_t value = -1;
  std::string param;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("onnx_import_test");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    g()->set_name("test_graph");
  }
  onnx::GraphProto* g() { return model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }

  void Input(const std::string& name, const std::vector<Dim>& dims,
             int32_t type = TensorProto::FLOAT) {
    auto* vi = g()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* sh = tt->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = sh->add_dim();
      if (d.param.empty())
        dim->set_dim_value(d.value);
      else
        dim->set_dim_param(d.param);
    }
  }
  void Output(const std::string& name, int32_t type = TensorProto::FLOAT) {
    auto* vi = g()->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
  // A float initializer; stripped (dims only) when `data` is empty.
  void Init(const std::string& name, const std::vector<int64_t>& dims,
            const std::vector<float>& data = {}) {
    TensorProto* t = g()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : data) t->add_float_data(v);
  }
  void InitInts(const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
    TensorProto* t = g()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  void ConstFloat(const std::string& out, float v) {
    onnx::NodeProto* n = Node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  }
  void ConstInts(const std::string& out, const std::vector<int64_t>& v, bool scalar = false) {
    onnx::NodeProto* n = Node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::INT64);
    if (!scalar) a->mutable_t()->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) a->mutable_t()->add_int64_data(x);
  }
  onnx::NodeProto* Node(const std::string& type, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name = "") {
    onnx::NodeProto* n = g()->add_node();
    n->set_op_type(type);
    n->set_name(name.empty() ? type + "_" + std::to_string(g()->node_size()) : name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  static void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void AttrString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  std::string Bytes() const {
    std::string s;
    model_.SerializeToString(&s);
    return s;
  }

 private:
  onnx::ModelProto model_;
};

StatusOr<ir::Graph> Import(const ModelBuilder& b, int64_t batch = 1, bool allow_unknown = false) {
  ImportOptions o;
  o.batch = batch;
  o.allow_unknown_ops = allow_unknown;
  return ImportOnnx(b.Bytes(), "test.onnx", o);
}

const ir::Tensor& T(const ir::Graph& g, const std::string& name) {
  auto id = g.FindTensor(name);
  EXPECT_TRUE(id.has_value()) << "no tensor " << name;
  return g.tensor(*id);
}

std::map<std::string, int> OpCounts(const ir::Graph& g) {
  std::map<std::string, int> c;
  for (const ir::Op& op : g.ops()) ++c[op.type];
  return c;
}

const ir::Op* FindOp(const ir::Graph& g, const std::string& type) {
  for (const ir::Op& op : g.ops())
    if (op.type == type) return &op;
  return nullptr;
}

std::vector<float> Floats(const ir::Tensor& t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
}

// x[N,3,8,8] -> Conv(w[4,3,3,3], pads 1) -> BN -> Relu -> y.
ModelBuilder ConvBnRelu(bool with_data, bool conv_bias) {
  ModelBuilder b;
  b.Input("x", {"N", 3, 8, 8});
  std::vector<float> w, cb, gamma, beta, mean, var;
  if (with_data) {
    for (int k = 0; k < 4 * 3 * 3 * 3; ++k) w.push_back(0.01f * static_cast<float>(k % 17) - 0.05f);
    cb = {0.1f, -0.2f, 0.3f, 0.0f};
    gamma = {1.0f, 2.0f, 0.5f, 1.5f};
    beta = {0.0f, 0.1f, -0.1f, 0.2f};
    mean = {0.5f, -0.5f, 0.25f, 0.0f};
    var = {1.0f, 4.0f, 0.25f, 2.0f};
  }
  b.Init("conv.w", {4, 3, 3, 3}, w);
  std::vector<std::string> conv_in = {"x", "conv.w"};
  if (conv_bias) {
    b.Init("conv.b", {4}, cb);
    conv_in.push_back("conv.b");
  }
  b.Init("bn.gamma", {4}, gamma);
  b.Init("bn.beta", {4}, beta);
  b.Init("bn.mean", {4}, mean);
  b.Init("bn.var", {4}, var);
  auto* conv = b.Node("Conv", conv_in, {"c"}, "conv1");
  ModelBuilder::AttrInts(conv, "kernel_shape", {3, 3});
  ModelBuilder::AttrInts(conv, "pads", {1, 1, 1, 1});
  auto* bn = b.Node("BatchNormalization", {"c", "bn.gamma", "bn.beta", "bn.mean", "bn.var"},
                    {"bn_out"}, "bn1");
  ModelBuilder::AttrFloat(bn, "epsilon", 1e-3f);
  b.Node("Relu", {"bn_out"}, {"y"}, "relu1");
  b.Output("y");
  return b;
}

TEST(OnnxImportTest, ConvBnReluFoldsBatchNormWhenWeightsAreStripped) {
  auto g = Import(ConvBnRelu(/*with_data=*/false, /*conv_bias=*/false));
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto counts = OpCounts(*g);
  EXPECT_EQ(counts["Conv"], 1);
  EXPECT_EQ(counts["Relu"], 1);
  EXPECT_EQ(counts.count("BatchNormalization"), 0u);
  const ir::Op* conv = FindOp(*g, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->name, "conv1");
  ASSERT_EQ(conv->inputs.size(), 3u);
  const ir::Tensor& bias = g->tensor(conv->inputs[2]);
  EXPECT_EQ(bias.kind, ir::TensorKind::kConstant);
  EXPECT_EQ(bias.shape, (std::vector<int64_t>{4}));
  EXPECT_TRUE(bias.data.empty());
  EXPECT_EQ(g->tensor(conv->outputs[0]).name, "bn_out");
  EXPECT_EQ(g->tensor(conv->outputs[0]).shape, (std::vector<int64_t>{1, 4, 8, 8}));
  // BN parameters are gone from the IR.
  EXPECT_FALSE(g->FindTensor("bn.gamma").has_value());
  EXPECT_FALSE(g->FindTensor("c").has_value());
  EXPECT_TRUE(ir::VerifyGraph(*g).ok());
}

TEST(OnnxImportTest, ConvBnFoldScalesWeightsAndBiasWhenDataIsPresent) {
  auto g = Import(ConvBnRelu(/*with_data=*/true, /*conv_bias=*/true));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(OpCounts(*g).count("BatchNormalization"), 0u);
  const ir::Op* conv = FindOp(*g, "Conv");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->inputs.size(), 3u);
  std::vector<float> w = Floats(g->tensor(conv->inputs[1]));
  std::vector<float> b = Floats(g->tensor(conv->inputs[2]));
  ASSERT_EQ(w.size(), 108u);
  ASSERT_EQ(b.size(), 4u);
  const float gamma[] = {1.0f, 2.0f, 0.5f, 1.5f}, beta[] = {0.0f, 0.1f, -0.1f, 0.2f};
  const float mean[] = {0.5f, -0.5f, 0.25f, 0.0f}, var[] = {1.0f, 4.0f, 0.25f, 2.0f};
  const float cb[] = {0.1f, -0.2f, 0.3f, 0.0f};
  for (int c = 0; c < 4; ++c) {
    double scale = gamma[c] / std::sqrt(static_cast<double>(var[c]) + 1e-3);
    for (int j = 0; j < 27; ++j) {
      int k = c * 27 + j;
      float w0 = 0.01f * static_cast<float>(k % 17) - 0.05f;
      EXPECT_NEAR(w[k], w0 * scale, 1e-5) << "weight " << k;
    }
    EXPECT_NEAR(b[c], (cb[c] - mean[c]) * scale + beta[c], 1e-5) << "bias " << c;
  }
}

TEST(OnnxImportTest, BatchNormStaysWhenConvOutputHasAnotherConsumer) {
  ModelBuilder b = ConvBnRelu(false, true);
  b.Node("Sigmoid", {"c"}, {"z"}, "side");
  b.Output("z");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(OpCounts(*g)["BatchNormalization"], 1);
  const ir::Op* bn = FindOp(*g, "BatchNormalization");
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->inputs.size(), 5u);
}

TEST(OnnxImportTest, StandaloneBatchNormStays) {
  ModelBuilder b;
  b.Input("x", {1, 4, 5, 5});
  for (const char* n : {"g", "b", "m", "v"}) b.Init(n, {4});
  b.Node("BatchNormalization", {"x", "g", "b", "m", "v"}, {"y"}, "bn");
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(OpCounts(*g)["BatchNormalization"], 1);
  EXPECT_EQ(T(*g, "y").kind, ir::TensorKind::kOutput);
}

TEST(OnnxImportTest, StrippedInitializersImportWithShapesOnly) {
  ModelBuilder b;
  b.Input("x", {2, 64});
  b.Init("w", {10, 64});  // stripped: dims, no data
  b.Init("bias", {10}, std::vector<float>(10, 0.5f));
  auto* gemm = b.Node("Gemm", {"x", "w", "bias"}, {"y"}, "fc");
  ModelBuilder::AttrInt(gemm, "transB", 1);
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "w").kind, ir::TensorKind::kConstant);
  EXPECT_EQ(T(*g, "w").shape, (std::vector<int64_t>{10, 64}));
  EXPECT_TRUE(T(*g, "w").data.empty());
  EXPECT_EQ(T(*g, "bias").data.size(), 40u);
  EXPECT_EQ(Floats(T(*g, "bias"))[3], 0.5f);
  EXPECT_EQ(T(*g, "x").kind, ir::TensorKind::kInput);
  EXPECT_EQ(T(*g, "y").kind, ir::TensorKind::kOutput);
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{2, 10}));
}

TEST(OnnxImportTest, RawDataPayloadsAreCopiedLittleEndian) {
  ModelBuilder b;
  b.Input("x", {1, 3});
  TensorProto* w = b.g()->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(2);
  const float values[6] = {1.5f, -2.0f, 0.25f, 8.0f, -0.5f, 3.0f};
  w->set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(Floats(T(*g, "w")), std::vector<float>(values, values + 6));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{1, 2}));
}

TEST(OnnxImportTest, SymbolicBatchIsBoundByOptions) {
  ModelBuilder b = ConvBnRelu(false, true);
  b.Init("fc.w", {10, 256});
  b.Init("fc.b", {10});
  auto* fl = b.Node("Flatten", {"y"}, {"flat"}, "flatten");
  ModelBuilder::AttrInt(fl, "axis", 1);
  auto* gemm = b.Node("Gemm", {"flat", "fc.w", "fc.b"}, {"logits"}, "fc");
  ModelBuilder::AttrInt(gemm, "transB", 1);
  b.g()->mutable_output()->Clear();
  b.Output("logits");
  // A stale value_info with the symbolic batch must not survive.
  auto* vi = b.g()->add_value_info();
  vi->set_name("c");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("N");
  for (int k = 0; k < 3; ++k)
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(k ? 8 : 4);
  auto g = Import(b, /*batch=*/4);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "x").shape, (std::vector<int64_t>{4, 3, 8, 8}));
  EXPECT_EQ(T(*g, "bn_out").shape, (std::vector<int64_t>{4, 4, 8, 8}));
  EXPECT_EQ(T(*g, "flat").shape, (std::vector<int64_t>{4, 256}));
  EXPECT_EQ(T(*g, "logits").shape, (std::vector<int64_t>{4, 10}));
  const ir::Op* flatten = FindOp(*g, "Flatten");
  ASSERT_NE(flatten, nullptr);
  EXPECT_TRUE(ir::IsViewOp(flatten->type));
}

TEST(OnnxImportTest, UnknownBatchDimAtAxisZeroIsBound) {
  ModelBuilder b;
  b.Input("x", {int64_t{0}, 5});
  b.g()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->clear_dim_value();
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  auto g = Import(b, 3);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{3, 5}));
}

TEST(OnnxImportTest, SequenceFirstInputsBindTheBatchAtAxisOne) {
  // Transformer style (S, N, E) inputs.
  ModelBuilder b;
  b.Input("src", {10, "N", 16});
  b.Input("tgt", {7, "N", 16});
  b.Init("w", {16, 16});
  b.Node("MatMul", {"src", "w"}, {"a"});
  ModelBuilder::AttrInts(b.Node("ReduceMean", {"a"}, {"m"}), "axes", {0});
  b.Node("Add", {"tgt", "m"}, {"y"});
  b.Output("y");
  auto g = Import(b, 2);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "src").shape, (std::vector<int64_t>{10, 2, 16}));
  EXPECT_EQ(T(*g, "tgt").shape, (std::vector<int64_t>{7, 2, 16}));
  EXPECT_EQ(T(*g, "m").shape, (std::vector<int64_t>{1, 2, 16}));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{7, 2, 16}));
}

TEST(OnnxImportTest, OtherSymbolicDimIsAnErrorNamingTensorAndParam) {
  ModelBuilder b;
  b.Input("tokens", {"batch", "seq_len", 32});
  b.Node("Relu", {"tokens"}, {"y"});
  b.Output("y");
  auto g = Import(b, 2);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("tokens"));
  EXPECT_THAT(g.status().message(), HasSubstr("seq_len"));
}

TEST(OnnxImportTest, ShapeArithmeticIsFoldedIntoStaticAttributes) {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) : the PyTorch x.view(x.size(0),
  // -1).
  ModelBuilder b;
  b.Input("x", {"N", 4, 6});
  b.Node("Shape", {"x"}, {"shape"});
  b.ConstInts("zero", {0}, /*scalar=*/true);
  auto* gather = b.Node("Gather", {"shape", "zero"}, {"n"});
  ModelBuilder::AttrInt(gather, "axis", 0);
  b.ConstInts("axes0", {0});
  b.Node("Unsqueeze", {"n", "axes0"}, {"n1"});
  b.ConstInts("minus1", {-1});
  auto* cat = b.Node("Concat", {"n1", "minus1"}, {"target"});
  ModelBuilder::AttrInt(cat, "axis", 0);
  b.Node("Cast", {"target"}, {"target64"});
  ModelBuilder::AttrInt(b.g()->mutable_node(b.g()->node_size() - 1), "to", TensorProto::INT64);
  b.Node("Reshape", {"x", "target64"}, {"flat"}, "reshape");
  b.Node("Relu", {"flat"}, {"y"});
  b.Output("y");
  auto g = Import(b, 4);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->num_ops(), 2);
  const ir::Op* reshape = FindOp(*g, "Reshape");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->inputs.size(), 1u);
  EXPECT_EQ(reshape->attrs.GetInts("shape"), (std::vector<int64_t>{4, 24}));
  EXPECT_EQ(T(*g, "flat").shape, (std::vector<int64_t>{4, 24}));
  // No integer constants of the shape arithmetic survive.
  for (const ir::Tensor& t : g->tensors()) EXPECT_NE(t.kind, ir::TensorKind::kConstant) << t.name;
}

TEST(OnnxImportTest, Opset13InputsBecomeAttributes) {
  ModelBuilder b;
  b.Input("x", {1, 8, 6, 6});
  b.ConstFloat("lo", 0.0f);
  b.ConstFloat("hi", 6.0f);
  b.Node("Clip", {"x", "lo", "hi"}, {"c"}, "relu6");
  b.InitInts("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  auto* pad = b.Node("Pad", {"c", "pads"}, {"p"}, "pad");
  ModelBuilder::AttrString(pad, "mode", "constant");
  b.InitInts("starts", {1});
  b.InitInts("ends", {7});
  b.InitInts("axes", {1});
  b.InitInts("steps", {2});
  b.Node("Slice", {"p", "starts", "ends", "axes", "steps"}, {"s"}, "slice");
  b.InitInts("split", {1, 2});
  auto* split = b.Node("Split", {"s", "split"}, {"s1", "s2"}, "split");
  ModelBuilder::AttrInt(split, "axis", 1);
  b.InitInts("sq_axes", {0});
  b.Node("Squeeze", {"s1", "sq_axes"}, {"sq"}, "squeeze");
  b.InitInts("unsq_axes", {0});
  b.Node("Unsqueeze", {"sq", "unsq_axes"}, {"u"}, "unsqueeze");
  b.Init("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  auto* resize = b.Node("Resize", {"s2", "", "scales"}, {"r"}, "resize");
  ModelBuilder::AttrString(resize, "mode", "nearest");
  b.InitInts("rs_axes", {2, 3});
  b.Node("ReduceSum", {"r", "rs_axes"}, {"rs"}, "reduce");
  b.Output("u");
  b.Output("rs");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (const ir::Op& op : g->ops()) {
    EXPECT_EQ(op.inputs.size(), 1u) << op.name << " should only read its data input";
    for (ir::TensorId in : op.inputs)
      EXPECT_NE(g->tensor(in).kind, ir::TensorKind::kConstant) << op.name;
  }
  const ir::Op* clip = FindOp(*g, "Clip");
  EXPECT_EQ(clip->attrs.GetFloat("min", -1), 0.0);
  EXPECT_EQ(clip->attrs.GetFloat("max", -1), 6.0);
  EXPECT_EQ(FindOp(*g, "Pad")->attrs.GetInts("pads"),
            (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(T(*g, "p").shape, (std::vector<int64_t>{1, 8, 8, 8}));
  const ir::Op* slice = FindOp(*g, "Slice");
  EXPECT_EQ(slice->attrs.GetInts("starts"), (std::vector<int64_t>{1}));
  EXPECT_EQ(slice->attrs.GetInts("ends"), (std::vector<int64_t>{7}));
  EXPECT_EQ(slice->attrs.GetInts("axes"), (std::vector<int64_t>{1}));
  EXPECT_EQ(slice->attrs.GetInts("steps"), (std::vector<int64_t>{2}));
  EXPECT_EQ(T(*g, "s").shape, (std::vector<int64_t>{1, 3, 8, 8}));
  EXPECT_EQ(FindOp(*g, "Split")->attrs.GetInts("split"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(FindOp(*g, "Squeeze")->attrs.GetInts("axes"), (std::vector<int64_t>{0}));
  EXPECT_EQ(FindOp(*g, "Unsqueeze")->attrs.GetInts("axes"), (std::vector<int64_t>{0}));
  EXPECT_EQ(T(*g, "u").shape, (std::vector<int64_t>{1, 1, 8, 8}));
  const ir::Op* rz = FindOp(*g, "Resize");
  EXPECT_EQ(rz->attrs.GetFloats("scales"), (std::vector<double>{1, 1, 2, 2}));
  EXPECT_EQ(rz->attrs.GetInts("sizes"), (std::vector<int64_t>{1, 2, 16, 16}));
  EXPECT_EQ(FindOp(*g, "ReduceSum")->attrs.GetInts("axes"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(T(*g, "rs").shape, (std::vector<int64_t>{1, 2, 1, 1}));
}

TEST(OnnxImportTest, Opset17OpsImport) {
  ModelBuilder b(17);
  b.Input("x", {"batch", 6, 16});
  b.Init("ln.scale", {16});
  b.Init("ln.bias", {16});
  auto* ln = b.Node("LayerNormalization", {"x", "ln.scale", "ln.bias"}, {"n"}, "ln");
  ModelBuilder::AttrInt(ln, "axis", -1);
  b.Node("HardSwish", {"n"}, {"h"}, "hswish");
  b.Node("Erf", {"h"}, {"e"}, "erf");
  b.InitInts("exp_shape", {1, 6, 1});
  b.Node("Expand", {"e", "exp_shape"}, {"xe"}, "expand");
  b.InitInts("reps", {1, 1, 2});
  b.Node("Tile", {"xe", "reps"}, {"y"}, "tile");
  b.Output("y");
  auto g = Import(b, 2);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const ir::Op* op = FindOp(*g, "LayerNormalization");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->inputs.size(), 3u);  // scale and bias are real weights
  EXPECT_EQ(FindOp(*g, "Expand")->attrs.GetInts("shape"), (std::vector<int64_t>{1, 6, 1}));
  EXPECT_EQ(FindOp(*g, "Expand")->inputs.size(), 1u);
  EXPECT_EQ(FindOp(*g, "Tile")->attrs.GetInts("repeats"), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{2, 6, 32}));
}

TEST(OnnxImportTest, UpsampleOpset9ScalesBecomeAttribute) {
  ModelBuilder b(9);
  b.Input("x", {1, 3, 4, 4});
  b.Init("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  auto* up = b.Node("Upsample", {"x", "scales"}, {"y"}, "up");
  ModelBuilder::AttrString(up, "mode", "nearest");
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const ir::Op* op = FindOp(*g, "Upsample");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->inputs.size(), 1u);
  EXPECT_EQ(op->attrs.GetFloats("scales"), (std::vector<double>{1, 1, 2, 2}));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{1, 3, 8, 8}));
}

TEST(OnnxImportTest, RuntimeShapeIsAnErrorNamingTheTensor) {
  ModelBuilder b;
  b.Input("x", {2, 12});
  b.Input("target_shape", {2}, TensorProto::INT64);
  b.Node("Reshape", {"x", "target_shape"}, {"reshaped"}, "dyn_reshape");
  b.Node("Relu", {"reshaped"}, {"y"});
  b.Output("y");
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'reshaped'"));
  EXPECT_THAT(g.status().message(), HasSubstr("dyn_reshape"));
}

TEST(OnnxImportTest, BadAttributesAreErrorsNotCrashes) {
  {  // a zero stride would make libonnx divide by zero
    ModelBuilder b;
    b.Input("x", {1, 2, 8, 8});
    auto* mp = b.Node("MaxPool", {"x"}, {"y"}, "pool0");
    ModelBuilder::AttrInts(mp, "kernel_shape", {2, 2});
    ModelBuilder::AttrInts(mp, "strides", {0, 1});
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("pool0"));
    EXPECT_THAT(g.status().message(), HasSubstr("strides"));
  }
  {  // a weight of the wrong rank would be indexed out of bounds
    ModelBuilder b;
    b.Input("x", {1, 4, 5, 5});
    b.Init("w", {4});
    b.Node("ConvTranspose", {"x", "w"}, {"y"}, "deconv");
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("deconv"));
  }
  {  // pads producing an empty output
    ModelBuilder b;
    b.Input("x", {1, 4});
    b.InitInts("pads", {0, -4, 0, 0});
    b.Node("Pad", {"x", "pads"}, {"y"}, "crop_all");
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("'y'"));
  }
}

TEST(OnnxImportTest, DeclaredOutputShapeMustAgree) {
  ModelBuilder b;
  b.Input("x", {1, 4});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  auto* sh = b.g()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  sh->add_dim()->set_dim_value(1);
  sh->add_dim()->set_dim_value(5);
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'y'"));
}

TEST(OnnxImportTest, IdentityAndDropoutAreDropped) {
  ModelBuilder b;
  b.Input("x", {1, 16});
  b.Node("Relu", {"x"}, {"a"}, "relu_a");
  b.Node("Identity", {"a"}, {"b"}, "id");
  b.Node("Dropout", {"b"}, {"c"}, "drop");
  b.Node("Sigmoid", {"c"}, {"y"}, "sig");
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_ops(), 2);
  EXPECT_EQ(g->ops()[0].type, "Relu");
  EXPECT_EQ(g->ops()[1].type, "Sigmoid");
  EXPECT_EQ(g->tensor(g->ops()[1].inputs[0]).name, "a");
  EXPECT_FALSE(g->FindTensor("b").has_value());
  EXPECT_FALSE(g->FindTensor("c").has_value());
}

TEST(OnnxImportTest, DropoutProducingAGraphOutputStaysAsIdentityView) {
  ModelBuilder b;
  b.Input("x", {1, 16});
  b.Node("Relu", {"x"}, {"a"}, "relu_a");
  b.Node("Dropout", {"a"}, {"y"}, "drop");
  b.Init("w", {16, 16});
  b.Node("Identity", {"w"}, {"w2"}, "weight_alias");  // a shared weight: consumers use "w"
  b.Node("MatMul", {"a", "w2"}, {"z"}, "mm");
  b.Output("y");
  b.Output("z");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto counts = OpCounts(*g);
  EXPECT_EQ(counts["Identity"], 1);
  EXPECT_EQ(counts.count("Dropout"), 0u);
  const ir::Op* id = FindOp(*g, "Identity");
  EXPECT_EQ(id->name, "drop");
  EXPECT_EQ(g->tensor(id->inputs[0]).name, "a");
  EXPECT_EQ(g->tensor(id->outputs[0]).name, "y");
  EXPECT_EQ(T(*g, "y").kind, ir::TensorKind::kOutput);
  const ir::Op* mm = FindOp(*g, "MatMul");
  EXPECT_EQ(g->tensor(mm->inputs[1]).name, "w");
  EXPECT_FALSE(g->FindTensor("w2").has_value());
}

TEST(OnnxImportTest, UnknownOpIsUnsupportedUnlessAllowed) {
  ModelBuilder b;
  b.Input("x", {1, 8, 4, 4});
  b.Node("Relu", {"x"}, {"a"});
  auto* lp = b.Node("LpNormalization", {"a"}, {"b"}, "my_lpnorm");
  ModelBuilder::AttrInt(lp, "axis", 1);
  b.Node("Relu", {"b"}, {"y"});
  b.Output("y");
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(g.status().message(), HasSubstr("LpNormalization"));
  EXPECT_THAT(g.status().message(), HasSubstr("my_lpnorm"));
  EXPECT_THAT(g.status().message(), HasSubstr("--allow-unknown-ops"));

  auto g2 = Import(b, 1, /*allow_unknown=*/true);
  ASSERT_TRUE(g2.ok()) << g2.status().message();
  const ir::Op* op = FindOp(*g2, "Opaque");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->original_type, "LpNormalization");
  EXPECT_EQ(op->name, "my_lpnorm");
  ASSERT_EQ(op->inputs.size(), 1u);
  ASSERT_EQ(op->outputs.size(), 1u);
  EXPECT_EQ(g2->tensor(op->outputs[0]).shape, (std::vector<int64_t>{1, 8, 4, 4}));
  EXPECT_EQ(op->attrs.GetInt("axis", 0), 1);
}

TEST(OnnxImportTest, CustomDomainOpUsesTheFilesValueInfoWhenAllowed) {
  ModelBuilder b;
  b.Input("x", {"N", 8});
  auto* n = b.Node("FancyOp", {"x"}, {"f"}, "fancy");
  n->set_domain("com.example");
  auto* op = b.model().add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  b.Node("Relu", {"f"}, {"y"});
  b.Output("y");
  auto* vi = b.g()->add_value_info();
  vi->set_name("f");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  auto strict = Import(b, 2);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(strict.status().message(), HasSubstr("FancyOp"));
  EXPECT_THAT(strict.status().message(), HasSubstr("fancy"));
  auto g = Import(b, 2, true);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "f").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(FindOp(*g, "Opaque")->original_type, "com.example.FancyOp");
}

TEST(OnnxImportTest, CycleIsAnErrorNamingANodeOnIt) {
  ModelBuilder b;
  b.Input("x", {1, 4});
  b.Node("Add", {"x", "q"}, {"p"}, "node_p");
  b.Node("Relu", {"p"}, {"q"}, "node_q");
  b.Node("Sigmoid", {"q"}, {"y"}, "node_y");
  b.Output("y");
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("cycle"));
  std::string m = g.status().message();
  EXPECT_TRUE(m.find("'node_p' -> 'node_q' -> 'node_p'") != std::string::npos ||
              m.find("'node_q' -> 'node_p' -> 'node_q'") != std::string::npos)
      << m;
  EXPECT_EQ(m.find("node_y"), std::string::npos) << m;  // downstream of the cycle, not on it
}

TEST(OnnxImportTest, UnsortedNodesAreSorted) {
  ModelBuilder b;
  b.Input("x", {1, 4});
  b.Node("Sigmoid", {"b"}, {"y"}, "last");
  b.Node("Relu", {"a"}, {"b"}, "middle");
  b.Node("Neg", {"x"}, {"a"}, "first");
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_ops(), 3);
  EXPECT_EQ(g->ops()[0].name, "first");
  EXPECT_EQ(g->ops()[1].name, "middle");
  EXPECT_EQ(g->ops()[2].name, "last");
}

TEST(OnnxImportTest, MissingProducerIsAnErrorNamingTheTensor) {
  ModelBuilder b;
  b.Input("x", {1, 4});
  b.Node("Add", {"x", "ghost"}, {"y"}, "adder");
  b.Output("y");
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("ghost"));
  EXPECT_THAT(g.status().message(), HasSubstr("adder"));
}

TEST(OnnxImportTest, ZeroAndNegativeDimsAreErrorsNamingTheTensor) {
  {
    ModelBuilder b;
    b.Input("image", {1, int64_t{0}, 8});
    b.Node("Relu", {"image"}, {"y"});
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(g.status().message(), HasSubstr("image"));
  }
  {
    ModelBuilder b;
    b.Input("image", {1, -3, 8});
    b.Node("Relu", {"image"}, {"y"});
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("image"));
  }
  {
    ModelBuilder b;
    b.Input("x", {1, 4});
    b.Init("bad_weight", {4, -2});
    b.Node("MatMul", {"x", "bad_weight"}, {"y"});
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(g.status().message(), HasSubstr("bad_weight"));
  }
  {
    ModelBuilder b;  // a product of dims that overflows int64
    b.Input("x", {1, 4});
    b.Init("huge", {int64_t{1} << 40, int64_t{1} << 40});
    b.Node("Add", {"x", "huge"}, {"y"});
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("huge"));
  }
  {
    ModelBuilder b;  // an activation of 2^52 elements: too large (named by VerifyGraph)
    b.Input("x", {1 << 26, 1 << 26});
    b.Node("Relu", {"x"}, {"y"});
    b.Output("y");
    auto g = Import(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("'x'"));
  }
}

TEST(OnnxImportTest, InitializerWithWrongValueCountIsAnError) {
  ModelBuilder b;
  b.Input("x", {1, 4});
  b.Init("w", {4, 4}, {1.0f, 2.0f, 3.0f});
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y");
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'w'"));
}

TEST(OnnxImportTest, UnsupportedElementTypeIsAClearError) {
  ModelBuilder b;
  b.Input("x", {1, 4}, TensorProto::DOUBLE);
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", TensorProto::DOUBLE);
  auto g = Import(b);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("DOUBLE"));
  EXPECT_THAT(g.status().message(), HasSubstr("'x'"));
}

TEST(OnnxImportTest, DtypesScalarsAndKindsAreMapped) {
  ModelBuilder b;
  b.Input("x", {2, 3}, TensorProto::INT8);
  b.Node("Cast", {"x"}, {"xf"});
  ModelBuilder::AttrInt(b.g()->mutable_node(0), "to", TensorProto::FLOAT16);
  b.ConstFloat("two", 2.0f);
  b.Node("Cast", {"two"}, {"two16"});  // folded: a constant float16 scalar
  ModelBuilder::AttrInt(b.g()->mutable_node(2), "to", TensorProto::FLOAT16);
  b.Node("Mul", {"xf", "two16"}, {"y"});
  b.Output("y", TensorProto::FLOAT16);
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "x").dtype, ir::DataType::kInt8);
  EXPECT_EQ(T(*g, "xf").dtype, ir::DataType::kFloat16);
  const ir::Tensor& two = T(*g, "two16");
  EXPECT_EQ(two.kind, ir::TensorKind::kConstant);
  EXPECT_EQ(two.dtype, ir::DataType::kFloat16);
  EXPECT_TRUE(two.shape.empty());
  ASSERT_EQ(two.data.size(), 2u);
  EXPECT_EQ(two.data[0] | two.data[1] << 8, 0x4000);  // 2.0 in IEEE half
  EXPECT_EQ(T(*g, "y").kind, ir::TensorKind::kOutput);
  EXPECT_EQ(T(*g, "y").dtype, ir::DataType::kFloat16);
}

TEST(OnnxImportTest, ConvAttributesAreMadeExplicit) {
  ModelBuilder b;
  b.Input("x", {1, 8, 7, 7});
  b.Init("w", {8, 1, 3, 3});
  auto* conv = b.Node("Conv", {"x", "w"}, {"a"}, "dw");
  ModelBuilder::AttrInt(conv, "group", 8);
  ModelBuilder::AttrInts(conv, "strides", {2, 2});
  ModelBuilder::AttrString(conv, "auto_pad", "SAME_UPPER");
  b.Init("w3", {4, 8, 3, 3, 3});
  b.Node("Unsqueeze", {"a", "ax"}, {"a5"});
  b.InitInts("ax", {2});
  auto* c3 = b.Node("Conv", {"a5", "w3"}, {"y"}, "conv3d");
  ModelBuilder::AttrInts(c3, "pads", {1, 1, 1, 1, 1, 1});
  ModelBuilder::AttrInts(c3, "dilations", {1, 2, 2});
  b.Init("w1", {2, 4, 3});
  b.Node("Squeeze", {"y", "ax"}, {"y4"});
  b.Node("Reshape", {"y4", "shp"}, {"y3"});
  b.InitInts("shp", {1, 4, -1});
  b.Node("Conv", {"y3", "w1"}, {"z"}, "conv1d");
  b.Output("z");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const ir::Op& dw = g->op(g->tensor(*g->FindTensor("a")).producer);
  EXPECT_EQ(dw.attrs.GetString("auto_pad", ""), "NOTSET");
  EXPECT_EQ(dw.attrs.GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(dw.attrs.GetInts("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(dw.attrs.GetInts("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(ir::IsDepthwiseConv(*g, dw));
  EXPECT_EQ(T(*g, "a").shape, (std::vector<int64_t>{1, 8, 4, 4}));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{1, 4, 1, 2, 2}));
  EXPECT_EQ(T(*g, "z").shape, (std::vector<int64_t>{1, 2, 2}));
}

TEST(OnnxImportTest, CeilModePoolingFollowsPyTorch) {
  // Input 5, kernel 2, stride 2, pad 1, ceil_mode: PyTorch gives 3 (the 4th window would start in
  // the trailing padding); ONNX 1.12 shape inference alone would say 4.
  ModelBuilder b;
  b.Input("x", {1, 2, 5, 5});
  auto* mp = b.Node("MaxPool", {"x"}, {"y"}, "pool");
  ModelBuilder::AttrInts(mp, "kernel_shape", {2, 2});
  ModelBuilder::AttrInts(mp, "strides", {2, 2});
  ModelBuilder::AttrInts(mp, "pads", {1, 1, 1, 1});
  ModelBuilder::AttrInt(mp, "ceil_mode", 1);
  auto* ap = b.Node("AveragePool", {"x"}, {"z"}, "avg");
  ModelBuilder::AttrInts(ap, "kernel_shape", {3, 3});
  ModelBuilder::AttrInts(ap, "strides", {2, 2});
  ModelBuilder::AttrInt(ap, "ceil_mode", 1);
  b.Output("y");
  b.Output("z");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{1, 2, 3, 3}));
  EXPECT_EQ(T(*g, "z").shape, (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_TRUE(ir::VerifyGraph(*g).ok());
}

TEST(OnnxImportTest, TransformerStyleAttentionShapesResolve) {
  // q = x W; q.view(S, N*H, D).transpose(0, 1); scores = q k^T; softmax; batch bound at axis 1.
  ModelBuilder b;
  b.Input("x", {5, "N", 8});
  b.Init("w", {8, 24});
  b.Node("MatMul", {"x", "w"}, {"qkv"});
  b.Node("Shape", {"qkv"}, {"s"});
  b.ConstInts("minus1", {-1});
  auto* ga = b.Node("Gather", {"s", "minus1"}, {"last"});
  ModelBuilder::AttrInt(ga, "axis", 0);
  b.ConstInts("three", {3});
  b.Node("Div", {"last", "three"}, {"third"});
  b.ConstInts("zero", {0});
  b.Node("Slice", {"qkv", "zero", "third", "minus1"}, {"q"});
  b.Node("Shape", {"x"}, {"sx"});
  b.ConstInts("one", {1}, true);
  auto* gn = b.Node("Gather", {"sx", "one"}, {"n"});
  ModelBuilder::AttrInt(gn, "axis", 0);
  b.ConstInts("two", {2}, true);
  b.Node("Mul", {"n", "two"}, {"nh"});
  b.ConstInts("ax0", {0});
  b.Node("Unsqueeze", {"nh", "ax0"}, {"nh1"});
  b.ConstInts("five", {5});
  b.ConstInts("four", {4});
  auto* cat = b.Node("Concat", {"five", "nh1", "four"}, {"shape"});
  ModelBuilder::AttrInt(cat, "axis", 0);
  b.Node("Reshape", {"q", "shape"}, {"qh"});
  auto* tr = b.Node("Transpose", {"qh"}, {"qt"});
  ModelBuilder::AttrInts(tr, "perm", {1, 0, 2});
  auto* tr2 = b.Node("Transpose", {"qh"}, {"kt"});
  ModelBuilder::AttrInts(tr2, "perm", {1, 2, 0});
  b.Node("MatMul", {"qt", "kt"}, {"scores"});
  auto* sm = b.Node("Softmax", {"scores"}, {"y"});
  ModelBuilder::AttrInt(sm, "axis", -1);
  b.Output("y");
  auto g = Import(b, 3);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(T(*g, "q").shape, (std::vector<int64_t>{5, 3, 8}));
  EXPECT_EQ(T(*g, "qh").shape, (std::vector<int64_t>{5, 6, 4}));
  EXPECT_EQ(T(*g, "y").shape, (std::vector<int64_t>{6, 5, 5}));
  const ir::Op* slice = FindOp(*g, "Slice");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->attrs.GetInts("ends"), (std::vector<int64_t>{8}));
  EXPECT_EQ(OpCounts(*g).count("Shape"), 0u);
  EXPECT_EQ(OpCounts(*g).count("Gather"), 0u);
}

TEST(OnnxImportTest, EmptyTruncatedAndRandomBytesAreInvalidArgument) {
  ImportOptions o;
  auto empty = ImportOnnx("", "empty.onnx", o);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("empty.onnx"));

  std::string good = ConvBnRelu(true, true).Bytes();
  for (size_t len : {good.size() / 2, good.size() - 1, size_t{7}, size_t{1}}) {
    auto g = ImportOnnx(good.substr(0, len), "cut.onnx", o);
    ASSERT_FALSE(g.ok()) << "length " << len;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  }
  auto bad = ImportOnnx(std::string(good.size(), '\xff'), "junk.onnx", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("not a valid ONNX model"));

  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::string junk(1 + rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    auto g = ImportOnnx(junk, "random.onnx", o);
    EXPECT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << g.status().message();
  }
}

TEST(OnnxImportTest, CorruptedModelsNeverCrash) {
  // Flip bytes of valid models: the importer must return (ok or an error), never abort.
  std::vector<std::string> seeds = {ConvBnRelu(true, true).Bytes(),
                                    ConvBnRelu(false, false).Bytes()};
  std::mt19937 rng(42);
  ImportOptions o;
  int ok = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = seeds[trial % seeds.size()];
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    auto g = ImportOnnx(bytes, "mutated.onnx", o);
    if (g.ok()) {
      ++ok;
      EXPECT_TRUE(ir::VerifyGraph(*g).ok());
    } else {
      EXPECT_FALSE(g.status().message().empty());
    }
  }
  SUCCEED() << ok << " of 300 mutated models still imported";
}

TEST(OnnxImportTest, SupportedOpsListCoversTheRequiredOps) {
  const auto& ops = SupportedOnnxOps();
  for (const char* op : {"Conv",        "Gemm",
                         "MatMul",      "BatchNormalization",
                         "Relu",        "Clip",
                         "Sigmoid",     "HardSigmoid",
                         "HardSwish",   "Tanh",
                         "Erf",         "Softmax",
                         "Add",         "Sub",
                         "Mul",         "Div",
                         "Pow",         "MaxPool",
                         "AveragePool", "GlobalAveragePool",
                         "ReduceMean",  "Concat",
                         "Split",       "Slice",
                         "Gather",      "Transpose",
                         "Pad",         "Resize",
                         "Upsample",    "LayerNormalization",
                         "Reshape",     "Flatten",
                         "Squeeze",     "Unsqueeze",
                         "Identity",    "Dropout",
                         "Where",       "Equal",
                         "Expand",      "Sqrt",
                         "Cast",        "ConstantOfShape",
                         "Range",       "Shape",
                         "Constant"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

std::vector<std::filesystem::path> ZooModels() {
  std::vector<std::filesystem::path> files;
  std::filesystem::path dir = testing::SourcePath("models/onnx");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".onnx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(OnnxImportZooTest, EveryBundledModelImports) {
  auto files = ZooModels();
  if (files.empty()) GTEST_SKIP() << "no models in models/onnx";
  for (const auto& path : files) {
    std::string bytes, error;
    ASSERT_TRUE(ReadFileToString(path.string(), &bytes, &error)) << error;
    ImportOptions o;
    auto t0 = std::chrono::steady_clock::now();
    auto g = ImportOnnx(bytes, path.filename().string(), o);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(g.ok()) << path << ": " << g.status().message();
    EXPECT_GT(g->num_ops(), 0) << path;
    Status v = ir::VerifyGraph(*g);
    EXPECT_TRUE(v.ok()) << path << ": " << v.message();
    EXPECT_FALSE(g->Inputs().empty()) << path;
    EXPECT_FALSE(g->Outputs().empty()) << path;
    for (const ir::Op& op : g->ops()) {
      EXPECT_NE(op.type, "Opaque") << path << " " << op.name;
      EXPECT_NE(op.type, "Dropout") << path << " " << op.name;
      EXPECT_NE(op.type, "Shape") << path << " " << op.name;
      EXPECT_NE(op.type, "Constant") << path << " " << op.name;
    }
    std::printf("[ zoo ] %-32s %5d ops %5d tensors %8.1f ms\n", path.filename().c_str(),
                g->num_ops(), g->num_tensors(), ms);
    // Batch 2: the same ops; inputs twice as large when the export has a symbolic batch.
    o.batch = 2;
    auto g2 = ImportOnnx(bytes, path.filename().string(), o);
    ASSERT_TRUE(g2.ok()) << path << " (batch 2): " << g2.status().message();
    EXPECT_EQ(g2->num_ops(), g->num_ops()) << path;
    int64_t in1 = 0, in2 = 0;
    for (ir::TensorId id : g->Inputs()) in1 += g->tensor(id).NumElements();
    for (ir::TensorId id : g2->Inputs()) in2 += g2->tensor(id).NumElements();
    EXPECT_TRUE(in2 == 2 * in1 || in2 == in1) << path << ": " << in1 << " -> " << in2;
  }
}

TEST(OnnxImportZooTest, ResNet18KnownFacts) {
  std::string path = testing::SourcePath("models/onnx/resnet18.onnx");
  std::string bytes, error;
  if (!ReadFileToString(path, &bytes, &error)) GTEST_SKIP() << "resnet18.onnx not exported";
  ImportOptions o;
  auto g = ImportOnnx(bytes, "resnet18.onnx", o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->Inputs().size(), 1u);
  EXPECT_EQ(g->tensor(g->Inputs()[0]).shape, (std::vector<int64_t>{1, 3, 224, 224}));
  ASSERT_EQ(g->Outputs().size(), 1u);
  EXPECT_EQ(g->tensor(g->Outputs()[0]).shape, (std::vector<int64_t>{1, 1000}));
  auto counts = OpCounts(*g);
  EXPECT_EQ(counts["Conv"], 20);
  EXPECT_EQ(counts.count("BatchNormalization"), 0u);
  EXPECT_EQ(counts.count("Identity"), 0u);
  EXPECT_EQ(counts["Gemm"], 1);
  // Every Conv has a [C_out] bias; weights are stripped constants.
  for (const ir::Op& op : g->ops()) {
    if (op.type != "Conv") continue;
    ASSERT_EQ(op.inputs.size(), 3u) << op.name;
    EXPECT_EQ(g->tensor(op.inputs[1]).kind, ir::TensorKind::kConstant);
    EXPECT_EQ(g->tensor(op.inputs[2]).shape,
              (std::vector<int64_t>{g->tensor(op.inputs[1]).shape[0]}));
  }
  // The symbolic batch follows --batch.
  o.batch = 4;
  auto g4 = ImportOnnx(bytes, "resnet18.onnx", o);
  ASSERT_TRUE(g4.ok()) << g4.status().message();
  EXPECT_EQ(g4->tensor(g4->Inputs()[0]).shape, (std::vector<int64_t>{4, 3, 224, 224}));
  EXPECT_EQ(g4->tensor(g4->Outputs()[0]).shape, (std::vector<int64_t>{4, 1000}));
}

}  // namespace
}  // namespace sramplan::import
