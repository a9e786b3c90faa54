// An independent reader for the .tflite files `plan --tflite-out` writes: Arm NN's TfLite parser
// (Debian's libarmnntfliteparser, tools/armnn_check) parses the original and the written file, runs
// both on its reference CPU backend where that backend supports the network, and compares the
// outputs byte for byte. Skipped, with a message, where Arm NN is not installed.
#include <gtest/gtest.h>

#include <string>

#include "import/tflite_test.h"
#include "test_util.h"

namespace sramplan::testing {
namespace {

std::string ArmnnCheck() { return SRAMPLAN_ARMNN_CHECK; }

// SmallTfliteModel as Arm NN 20.08 takes it: a bias on the depthwise convolution (its parser
// refuses an omitted optional input, -1), and bias scales = input scale x weight scale (its
// workload validation checks them; TFLite's converter writes them so), and scales that keep the
// outputs off the int8 limits, so that different weights give different outputs.
tfl::ModelToWrite ArmnnSmallModel() {
  tfl::ModelToWrite m = SmallTfliteModel();
  auto& conv_bias = m.subgraph.tensors[2].quant.scale;
  for (size_t k = 0; k < conv_bias.size(); ++k) conv_bias[k] = 0.05f * m.subgraph.tensors[1].quant.scale[k];
  m.subgraph.tensors[4].quant.scale = {0.002f};  // small depthwise weights: outputs do not saturate
  m.buffers.push_back(Bytes(std::vector<int32_t>(8, 3)));
  m.subgraph.tensors.push_back(TflTensor("dw/b", {8}, tfl::kInt32, static_cast<uint32_t>(m.buffers.size() - 1),
                                         {0.05f * 0.002f}));
  m.subgraph.operators[1].inputs[2] = static_cast<int32_t>(m.subgraph.tensors.size() - 1);
  return m;
}

CliRun Check(const std::string& original, const std::string& written) {
  return Sh("'" + ArmnnCheck() + "' '" + original + "' '" + written + "'");
}

// Writes `model` back with strategy `strategy`'s offline plan and checks it with Arm NN.
CliRun Export(const std::string& model, const std::string& name, const std::string& strategy,
              const std::string& extra = "") {
  const std::string out = WriteTempFile(name + "_" + strategy + ".tflite", "");
  CliRun r = Cli("plan '" + model + "' --target sram:4MiB --strategy " + strategy + " " + extra + " --tflite-out '" +
                 out + "' -q");
  EXPECT_EQ(r.rc, 0) << name << ": " << r.all();
  EXPECT_NE(r.out.find("read back and checked"), std::string::npos) << r.out;
  return Check(model, out);
}

TEST(TfliteArmnn, WrittenSmallModelRunsLikeTheOriginal) {
  if (ArmnnCheck().empty()) GTEST_SKIP() << "Arm NN's TfLite parser is not installed (scripts/install-deps.sh)";
  const std::string model = WriteTempFile("armnn_small.tflite", tfl::WriteModel(ArmnnSmallModel()));
  for (const char* s : {"optimal", "hmcos"}) {
    CliRun r = Export(model, "armnn_small", s);
    EXPECT_EQ(r.rc, 0) << s << ": " << r.all();
    EXPECT_NE(r.out.find("output bytes identical"), std::string::npos) << s << ": " << r.all();
  }
}

// All three reference models parse after the rewrite; ds_cnn_kws also runs on Arm NN 20.08's CpuRef
// (its depthwise convolutions are per tensor), the other two stop at per-channel depthwise, which
// that backend does not support, and say so.
TEST(TfliteArmnn, WrittenReferenceModelsParseAndRunLikeTheOriginals) {
  if (ArmnnCheck().empty()) GTEST_SKIP() << "Arm NN's TfLite parser is not installed (scripts/install-deps.sh)";
  const std::string dir = TfliteReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference .tflite models not found (../shared/reference/tflite)";
  for (const char* m : {"ds_cnn_kws", "person_detect", "mobilenet_v2_035_96"}) {
    CliRun r = Export(dir + "/" + m + ".tflite", m, "optimal");
    EXPECT_EQ(r.rc, 0) << m << ": " << r.all();
    EXPECT_EQ(r.out.find("parse FAILED"), std::string::npos) << m << ": " << r.all();
    if (std::string(m) == "ds_cnn_kws")
      EXPECT_NE(r.out.find("output bytes identical"), std::string::npos) << m << ": " << r.all();
    else
      EXPECT_TRUE(r.out.find("output bytes identical") != std::string::npos ||
                  r.out.find("not run: the CpuRef backend cannot run") != std::string::npos)
          << m << ": " << r.all();
  }
}

// The check can fail: a file whose weights differ from the original's is caught.
TEST(TfliteArmnn, DifferentWeightsAreCaught) {
  if (ArmnnCheck().empty()) GTEST_SKIP() << "Arm NN's TfLite parser is not installed (scripts/install-deps.sh)";
  auto changed = ArmnnSmallModel();
  changed.buffers[1] = std::string(changed.buffers[1].size(), '\xfe');  // conv weights 2 -> -2
  const std::string a = WriteTempFile("armnn_a.tflite", tfl::WriteModel(ArmnnSmallModel()));
  const std::string b = WriteTempFile("armnn_b.tflite", tfl::WriteModel(changed));
  CliRun r = Check(a, b);
  EXPECT_EQ(r.rc, 3) << r.all();
  EXPECT_NE(r.out.find("differs between the two files"), std::string::npos) << r.all();
  const std::string junk = WriteTempFile("armnn_junk.tflite", "not a flatbuffer");
  r = Sh("'" + ArmnnCheck() + "' '" + junk + "'");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.out.find("parse FAILED"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace sramplan::testing
