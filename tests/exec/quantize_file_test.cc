// int8 execution with a .tflite file's own quantisation (exec/quantize_file.h).
#include "exec/quantize_file.h"

#include <gtest/gtest.h>

#include <cstring>

#include "analysis/liveness.h"
#include "driver/strategy.h"
#include "exec/executor.h"
#include "import/import.h"
#include "import/tflite_test.h"
#include "target/target.h"

namespace sramplan::exec {
namespace {

namespace tfl = import::tflite;

ir::Graph ImportInt8(const tfl::ModelToWrite& model, const std::string& file) {
  auto g = import::ImportModel(testing::WriteTempFile(file, tfl::WriteModel(model)), {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  return std::move(g).value();
}

const ir::Tensor& Named(const ir::Graph& g, const std::string& name) {
  for (const auto& t : g.tensors())
    if (t.name == name) return t;
  ADD_FAILURE() << "no tensor " << name;
  return g.tensors().front();
}

// The stored integers, not a re-quantisation: tflite_test.h's small model has conv/w all 2 with
// scales 0.5 (k + 1) per channel, dw/w (h, w, c) = 30 h + 10 w + c, zero biases.
TEST(QuantizeFile, RunsTheFilesIntegers) {
  const ir::Graph g = ImportInt8(testing::SmallTfliteModel(), "qfile_small.tflite");
  ExecResult reference;
  auto q = QuantizeWithFileParams(g, kDefaultSeed, &reference);
  ASSERT_TRUE(q.ok()) << q.status().message();
  const ir::Tensor& w = Named(g, "conv/w");
  EXPECT_EQ(q->data.values[w.id.value()], std::vector<uint8_t>(16, 2));
  ASSERT_EQ(q->params[w.id.value()].scale.size(), 8u);
  for (int k = 0; k < 8; ++k) EXPECT_FLOAT_EQ(q->params[w.id.value()].scale[k], 0.5f * (k + 1));
  const ir::Tensor& dw = Named(g, "dw/w");  // IR [C, H, W, 1]
  ASSERT_EQ(dw.shape, (std::vector<int64_t>{8, 3, 3, 1}));
  for (int c = 0; c < 8; ++c)
    for (int h = 0; h < 3; ++h)
      for (int v = 0; v < 3; ++v)
        EXPECT_EQ(static_cast<int8_t>(q->data.values[dw.id.value()][(c * 3 + h) * 3 + v]), 30 * h + 10 * v + c);
  // Per-tensor weights get their scale per channel for the kernels.
  EXPECT_EQ(q->params[dw.id.value()].scale, std::vector<float>(8, 1.0f));
  EXPECT_EQ(q->data.values[Named(g, "conv/b").id.value()], std::vector<uint8_t>(32, 0));
  const ir::QuantParams& in = q->params[Named(g, "input").id.value()];
  EXPECT_EQ(in.scale, std::vector<float>{0.05f});
  EXPECT_FALSE(reference.outputs.empty());

  // Planned and run: the arena run equals the naive run.
  auto target = target::LoadTarget("sram:64KiB");
  ASSERT_TRUE(target.ok());
  auto p = driver::RunStrategy(g, *target, "tflm", {});
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto naive = RunNaive(g, analysis::ModelOrder(g), q->data, &*q);
  auto arena = RunArena(g, *p, q->data, &*q);
  ASSERT_TRUE(naive.ok()) << naive.status().message();
  ASSERT_TRUE(arena.ok()) << arena.status().message();
  EXPECT_EQ(Compare(g, *naive, *arena, *p), "");
}

TEST(QuantizeFile, FallsBackWithTheReason) {
  auto model = testing::SmallTfliteModel();
  model.subgraph.tensors[6].quant = {};  // add/out without quantisation
  const ir::Graph g = ImportInt8(model, "qfile_noquant.tflite");
  auto q = QuantizeWithFileParams(g, kDefaultSeed);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(q.status().message().find("add/out"), std::string::npos) << q.status().message();
  std::string how;
  auto fallback = QuantizeForVerify(g, kDefaultSeed, true, nullptr, &how);
  ASSERT_TRUE(fallback.ok()) << fallback.status().message();
  EXPECT_NE(how.find("float32 reference run, not the file's quantisation ("), std::string::npos) << how;
  EXPECT_NE(how.find("add/out"), std::string::npos) << how;
  // Non-.tflite models never take the file's parameters.
  const ir::Graph good = ImportInt8(testing::SmallTfliteModel(), "qfile_small2.tflite");
  ASSERT_TRUE(QuantizeForVerify(good, kDefaultSeed, false, nullptr, &how).ok());
  EXPECT_EQ(how, "quantised with ranges from a float32 reference run");
}

TEST(QuantizeFile, ByteMovingOpsMustKeepTheirInputsParameters) {
  auto model = testing::SmallTfliteModel();
  // MEAN -> RESHAPE [1,8] -> [8] with another scale on the reshape's output.
  model.subgraph.tensors.push_back(testing::TflTensor("flat", {8}, tfl::kInt8, 0, {0.5f}));
  model.buffers.push_back(testing::Bytes(std::vector<int32_t>{8}));
  model.subgraph.tensors.push_back(testing::TflTensor("flat/shape", {1}, tfl::kInt32,
                                                      static_cast<uint32_t>(model.buffers.size() - 1), {}, {}));
  model.subgraph.operators.push_back(testing::TflOp(tfl::kReshape, {8, 10}, {9}));
  model.subgraph.outputs = {9};
  const ir::Graph g = ImportInt8(model, "qfile_reshape.tflite");
  auto q = QuantizeWithFileParams(g, kDefaultSeed);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("other output parameters than its input"), std::string::npos)
      << q.status().message();
}

TEST(QuantizeFile, ReferenceModelsRunTheirOwnQuantisation) {
  const std::string dir = testing::TfliteReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference .tflite models not found";
  for (const char* name : {"person_detect", "ds_cnn_kws", "mobilenet_v2_035_96"}) {
    auto g = import::ImportModel(dir + "/" + name + ".tflite", {});
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    ir::ApplyDtype(*g, ir::DataType::kInt8);
    auto q = QuantizeWithFileParams(*g, kDefaultSeed);
    EXPECT_TRUE(q.ok()) << name << ": " << q.status().message();
  }
}

}  // namespace
}  // namespace sramplan::exec
