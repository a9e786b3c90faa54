// The .tflite reader, importer and writer (import/tflite_*.h).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "analysis/liveness.h"
#include "exec/executor.h"
#include "exec/model_data.h"
#include "import/import.h"
#include "import/tflite_model.h"
#include "import/tflite_writer.h"
#include "import/tflite_test.h"

namespace sramplan::import {
namespace {

using testing::SmallTfliteModel;
using testing::TflOp;
using testing::TflTensor;
namespace tfl = tflite;

std::vector<float> FloatData(const ir::Tensor& t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

const ir::Op* FindOp(const ir::Graph& g, const std::string& type, int nth = 0) {
  for (const auto& op : g.ops())
    if (op.type == type && nth-- == 0) return &op;
  return nullptr;
}

TEST(Tflite, WriteThenReadBack) {
  const std::string bytes = tfl::WriteModel(SmallTfliteModel());
  ASSERT_TRUE(tfl::LooksLikeTflite(bytes));
  auto m = tfl::ParseModel(bytes, "small.tflite");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->subgraphs.size(), 1u);
  const auto& sg = m->subgraphs[0];
  ASSERT_EQ(sg.tensors.size(), 9u);
  ASSERT_EQ(sg.operators.size(), 4u);
  EXPECT_EQ(sg.tensors[4].shape, (std::vector<int32_t>{1, 3, 3, 8}));
  EXPECT_EQ(sg.tensors[1].quant.scale.size(), 8u);
  EXPECT_EQ(sg.operators[1].builtin, tfl::kDepthwiseConv2D);
  EXPECT_EQ(sg.operators[1].inputs, (std::vector<int32_t>{3, 4, -1}));
  EXPECT_EQ(sg.operators[1].options.depth_multiplier, 1);
  EXPECT_EQ(sg.operators[0].options.activation, 3);
  EXPECT_EQ(sg.operators[0].options.padding, 1);
  EXPECT_EQ(tfl::BufferData(bytes, *m, 4).size(), 8u);
}

TEST(Tflite, ImportsOpsShapesAndDequantisedWeights) {
  auto g = ImportModelBytes(tfl::WriteModel(SmallTfliteModel()), "small.tflite", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->layout, ir::Layout::kNHWC);
  const ir::Op* conv = FindOp(*g, "Conv", 0);
  const ir::Op* dw = FindOp(*g, "Conv", 1);
  ASSERT_TRUE(conv && dw && FindOp(*g, "Add") && FindOp(*g, "ReduceMean"));
  EXPECT_EQ(conv->attrs.GetString("activation", ""), "relu6");
  EXPECT_EQ(dw->attrs.GetInt("group", 0), 8);  // one group per input channel
  EXPECT_EQ(dw->attrs.GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));  // SAME, 3x3, stride 1
  EXPECT_EQ(FindOp(*g, "ReduceMean")->attrs.GetInts("axes"), (std::vector<int64_t>{1, 2}));
  // Per-channel weights: q = 2 with scale 0.5 * (k + 1) along axis 0 -> k + 1.
  const ir::Tensor& w = g->tensor(conv->inputs[1]);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{8, 1, 1, 2}));
  std::vector<float> wv = FloatData(w);
  ASSERT_EQ(wv.size(), 16u);
  for (int k = 0; k < 8; ++k)
    for (int i = 0; i < 2; ++i) EXPECT_FLOAT_EQ(wv[k * 2 + i], static_cast<float>(k + 1));
  // Depthwise filter [1,3,3,8] becomes [8,3,3,1]: element (h, w, c) at (c, h, w).
  const ir::Tensor& d = g->tensor(dw->inputs[1]);
  EXPECT_EQ(d.shape, (std::vector<int64_t>{8, 3, 3, 1}));
  std::vector<float> dv = FloatData(d);
  for (int c = 0; c < 8; ++c)
    for (int h = 0; h < 3; ++h)
      for (int x = 0; x < 3; ++x) EXPECT_FLOAT_EQ(dv[(c * 3 + h) * 3 + x], static_cast<float>(h * 30 + x * 10 + c));
  // The int8 plan sizes: activations 1 byte, biases int32.
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  EXPECT_EQ(g->tensor(conv->inputs[2]).dtype, ir::DataType::kInt32);
  EXPECT_EQ(g->tensor(conv->outputs[0]).Bytes(), 128);
}

TEST(Tflite, FullyConnectedFlattensAndReshapeIsAView) {
  tfl::ModelToWrite m;
  std::vector<int8_t> w(3 * 8, 1);
  std::vector<int32_t> shape = {1, 8};
  m.buffers = {"", testing::Bytes(w), testing::Bytes(shape)};
  m.subgraph.tensors = {TflTensor("x", {1, 2, 2, 2}, tfl::kInt8), TflTensor("flat", {1, 8}, tfl::kInt8),
                        TflTensor("shape", {2}, tfl::kInt32, 2, {}, {}), TflTensor("w", {3, 8}, tfl::kInt8, 1),
                        TflTensor("y", {1, 3}, tfl::kInt8), TflTensor("z", {1, 3}, tfl::kInt8)};
  m.subgraph.operators = {TflOp(tfl::kReshape, {0, 2}, {1}), TflOp(tfl::kFullyConnected, {1, 3, -1}, {4}),
                          TflOp(tfl::kSoftmax, {4}, {5})};
  m.subgraph.inputs = {0};
  m.subgraph.outputs = {5};
  auto g = ImportModelBytes(tfl::WriteModel(m), "fc.tflite", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(FindOp(*g, "Reshape") && FindOp(*g, "Gemm") && FindOp(*g, "Softmax"));
  EXPECT_EQ(FindOp(*g, "Gemm")->attrs.GetInt("transB", 0), 1);
  // FC on a 4-D input: a flattening view in front of the Gemm.
  m.subgraph.operators = {TflOp(tfl::kFullyConnected, {0, 3, -1}, {4}), TflOp(tfl::kSoftmax, {4}, {5})};
  auto g2 = ImportModelBytes(tfl::WriteModel(m), "fc4d.tflite", {});
  ASSERT_TRUE(g2.ok()) << g2.status().message();
  const ir::Op* flat = FindOp(*g2, "Reshape");
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(g2->tensor(flat->outputs[0]).shape, (std::vector<int64_t>{1, 8}));
}

// x [1,5,5,4] -> PAD H and W by (0, 1) -> [1,6,6,4] -> DEPTHWISE 3x3 stride 2 VALID -> [1,2,2,4].
tfl::ModelToWrite PadThenDepthwise() {
  tfl::ModelToWrite m;
  std::vector<int32_t> paddings = {0, 0, 0, 1, 0, 1, 0, 0};
  std::vector<int8_t> w(36, 1);
  m.buffers = {"", testing::Bytes(paddings), testing::Bytes(w)};
  m.subgraph.tensors = {TflTensor("x", {1, 5, 5, 4}, tfl::kInt8), TflTensor("paddings", {4, 2}, tfl::kInt32, 1, {}, {}),
                        TflTensor("padded", {1, 6, 6, 4}, tfl::kInt8), TflTensor("w", {1, 3, 3, 4}, tfl::kInt8, 2),
                        TflTensor("y", {1, 2, 2, 4}, tfl::kInt8)};
  tfl::Options dw;
  dw.padding = 1;
  dw.stride_h = dw.stride_w = 2;
  m.subgraph.operators = {TflOp(tfl::kPad, {0, 1}, {2}), TflOp(tfl::kDepthwiseConv2D, {2, 3, -1}, {4}, dw)};
  m.subgraph.inputs = {0};
  m.subgraph.outputs = {4};
  return m;
}

TEST(Tflite, FoldPadMakesThePaddingTheConvolutions) {
  const std::string bytes = tfl::WriteModel(PadThenDepthwise());
  auto plain = ImportModelBytes(bytes, "pad.tflite", {});
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_NE(FindOp(*plain, "Pad"), nullptr);
  EXPECT_EQ(FindOp(*plain, "Pad")->attrs.GetInts("pads"), (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 0}));
  ImportOptions fold;
  fold.fold_pad = true;
  auto g = ImportModelBytes(bytes, "pad.tflite", fold);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FindOp(*g, "Pad"), nullptr);
  const ir::Op* dw = FindOp(*g, "Conv");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(g->tensor(dw->inputs[0]).name, "x");
  EXPECT_EQ(dw->attrs.GetInts("pads"), (std::vector<int64_t>{0, 0, 1, 1}));  // top, left, bottom, right
  EXPECT_EQ(g->tensor(dw->outputs[0]).shape, (std::vector<int64_t>{1, 2, 2, 4}));
  // Both graphs compute the same float32 outputs (the convolution pads with zeros as PAD does).
  ir::Graph gp = *plain, gf = *g;
  auto dp = exec::MakeModelData(gp, 7), df = exec::MakeModelData(gf, 7);
  ASSERT_TRUE(dp.ok() && df.ok());
  const auto xp = *gp.FindTensor("x"), xf = *gf.FindTensor("x");
  df->values[xf.value()] = dp->values[xp.value()];
  auto rp = exec::RunNaive(gp, analysis::ModelOrder(gp), *dp, nullptr);
  auto rf = exec::RunNaive(gf, analysis::ModelOrder(gf), *df, nullptr);
  ASSERT_TRUE(rp.ok() && rf.ok());
  EXPECT_EQ(rp->outputs, rf->outputs);
  // A PAD that something else also reads stays.
  auto m = PadThenDepthwise();
  m.subgraph.tensors.push_back(TflTensor("z", {1, 6, 6, 4}, tfl::kInt8));
  m.subgraph.operators.push_back(TflOp(tfl::kRelu, {2}, {5}));
  m.subgraph.outputs = {4, 5};
  auto kept = ImportModelBytes(tfl::WriteModel(m), "pad2.tflite", fold);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_NE(FindOp(*kept, "Pad"), nullptr);
}

TEST(Tflite, UnknownOpsFollowAllowUnknownOps) {
  tfl::ModelToWrite m;
  m.subgraph.tensors = {TflTensor("x", {1, 4}, tfl::kInt8), TflTensor("y", {1, 4}, tfl::kInt8)};
  tfl::Operator op = TflOp(tfl::kCustom, {0}, {1});
  op.custom_code = "MyMagicOp";
  m.subgraph.operators = {op};
  m.subgraph.inputs = {0};
  m.subgraph.outputs = {1};
  const std::string bytes = tfl::WriteModel(m);
  auto g = ImportModelBytes(bytes, "custom.tflite", {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("MyMagicOp"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("--allow-unknown-ops"), std::string::npos);
  ImportOptions allow;
  allow.allow_unknown_ops = true;
  auto g2 = ImportModelBytes(bytes, "custom.tflite", allow);
  ASSERT_TRUE(g2.ok()) << g2.status().message();
  EXPECT_EQ(g2->ops()[0].type, "Opaque");
  EXPECT_NE(g2->ops()[0].original_type.find("MyMagicOp"), std::string::npos);
  // A builtin sramplan does not map is named too.
  m.subgraph.operators[0] = TflOp(60 /* PADV2 */, {0}, {1});
  auto g3 = ImportModelBytes(tfl::WriteModel(m), "padv2.tflite", {});
  ASSERT_FALSE(g3.ok());
  EXPECT_NE(g3.status().message().find("BUILTIN_60"), std::string::npos) << g3.status().message();
}

// Every prefix of a valid file, and every single-byte corruption of its first 512 bytes, is an
// error or a model, never a crash.
TEST(Tflite, TruncatedAndCorruptFilesAreErrors) {
  const std::string bytes = tfl::WriteModel(SmallTfliteModel());
  for (size_t n = 0; n < bytes.size(); n += 3) {
    auto g = ImportModelBytes(bytes.substr(0, n), "cut.tflite", {});
    EXPECT_FALSE(g.ok()) << "prefix of " << n << " bytes";
  }
  int errors = 0;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 512); ++i) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0x5a);
    auto m = tfl::ParseModel(b, "flip.tflite");
    if (!m.ok()) {
      ++errors;
      continue;
    }
    (void)ImportTflite(b, "flip.tflite", {});
  }
  EXPECT_GT(errors, 0);
}

TEST(Tflite, BadInputNamesTheElement) {
  std::string bytes = tfl::WriteModel(SmallTfliteModel());
  std::string wrong_id = bytes;
  std::memcpy(wrong_id.data() + 4, "ABCD", 4);
  auto a = ImportModelBytes(wrong_id, "x.tflite", {});
  ASSERT_FALSE(a.ok());  // neither JSON, nor ONNX, nor .tflite
  auto p = tfl::ParseModel(wrong_id, "x.tflite");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("TFL3"), std::string::npos);

  auto model = SmallTfliteModel();
  model.subgraph.operators[2].inputs = {3, 42};  // tensor index out of range
  auto b = ImportModelBytes(tfl::WriteModel(model), "x.tflite", {});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("reads tensor 42"), std::string::npos) << b.status().message();

  model = SmallTfliteModel();
  model.subgraph.tensors[1].buffer = 99;  // buffer index out of range
  auto c = ImportModelBytes(tfl::WriteModel(model), "x.tflite", {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("buffer 99"), std::string::npos) << c.status().message();

  model = SmallTfliteModel();
  model.subgraph.tensors[6].shape = {65536, 65536, 65536, 65536};  // the product overflows int64
  auto d = ImportModelBytes(tfl::WriteModel(model), "x.tflite", {});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("add/out"), std::string::npos) << d.status().message();

  model = SmallTfliteModel();
  model.subgraph.tensors[3].shape = {1, 4, 4, 7};  // conv output inconsistent with its filter
  auto e = ImportModelBytes(tfl::WriteModel(model), "x.tflite", {});
  ASSERT_FALSE(e.ok());

  model = SmallTfliteModel();
  model.buffers[3].resize(5);  // filter data shorter than its shape
  auto f = ImportModelBytes(tfl::WriteModel(model), "x.tflite", {});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("dw/w"), std::string::npos) << f.status().message();
}

TEST(Tflite, OfflinePlanIsWrittenAndReadBack) {
  const std::string bytes = tfl::WriteModel(SmallTfliteModel());
  auto m = tfl::ParseModel(bytes, "small.tflite");
  ASSERT_TRUE(m.ok());
  std::vector<int32_t> offsets = {0, -1, -1, 32, -1, 160, 288, -1, 0};
  auto out = tfl::WithOfflinePlan(bytes, *m, offsets);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->size() % 16, 0u);
  EXPECT_NE(out->find(bytes), std::string::npos);  // the original, byte for byte
  ASSERT_TRUE(tfl::CheckOfflinePlanFile(bytes, *out, offsets).ok());
  auto back = tfl::ParseModel(*out, "planned.tflite");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*tfl::OfflineOffsets(*out, *back), offsets);
  // Written again over an existing plan: the old entry is replaced, not duplicated.
  offsets[3] = 48;
  auto again = tfl::WithOfflinePlan(*out, *back, offsets);
  ASSERT_TRUE(again.ok());
  auto back2 = tfl::ParseModel(*again, "planned2.tflite");
  ASSERT_TRUE(back2.ok());
  int entries = 0;
  for (const auto& md : back2->metadata) entries += md.name == tfl::kOfflineMemoryAllocation;
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(*tfl::OfflineOffsets(*again, *back2), offsets);
  // The wrong number of offsets is refused.
  EXPECT_FALSE(tfl::WithOfflinePlan(bytes, *m, {0, 1}).ok());
  // Imports like the original.
  auto g = ImportModelBytes(*again, "planned2.tflite", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
}

TEST(Tflite, ReferenceModelsImport) {
  const std::string dir = testing::TfliteReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference .tflite models not found";
  for (const char* name : {"person_detect", "ds_cnn_kws", "mobilenet_v2_035_96"}) {
    auto g = ImportModel(dir + "/" + name + ".tflite", {});
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    EXPECT_GT(g->num_ops(), 10) << name;
  }
}

}  // namespace
}  // namespace sramplan::import
