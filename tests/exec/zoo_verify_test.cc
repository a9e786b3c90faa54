// `sramplan verify` end to end on the bundled models small enough for CI: every strategy's plan runs
// in its arena and matches the naive run bit for bit (int8 CNNs; the Transformer in float32 and as a hybrid int8 graph).
// Excluded from the asan preset (CMakePresets.json): sanitized kernels make it minutes long; the
// executor's own tests run there.
#include <gtest/gtest.h>

#include "test_util.h"

namespace sramplan::testing {
namespace {

void ExpectVerifies(const std::string& model, const std::string& extra = "") {
  std::string out, err;
  int rc = RunCli("verify '" + SourcePath(model) + "' --target stm32f411re --strategy all " + extra, &out, &err);
  EXPECT_EQ(rc, 0) << model << "\n" << out << err;
  for (const char* s : {"naive", "linear", "tflm", "inplace"})
    EXPECT_NE(out.find(std::string("verify ") + s + ": OK"), std::string::npos) << model << "\n" << out;
}

TEST(ZooVerify, McunetBlocksInt8) {
  for (const char* b : {"S1", "S5", "S8", "B1", "B2", "B4", "B9", "B12", "B16", "B17"})
    ExpectVerifies(std::string("models/mcunet_blocks/") + b + ".graph.json");
}

TEST(ZooVerify, WholeMcunetInt8) { ExpectVerifies("models/mcunet_blocks/mcunet-320kb-imagenet.graph.json"); }
TEST(ZooVerify, MobileNetV2Int8) { ExpectVerifies("models/onnx/mobilenet_v2.onnx"); }
TEST(ZooVerify, SqueezeNetInt8) { ExpectVerifies("models/onnx/squeezenet1_0.onnx"); }
TEST(ZooVerify, GoogLeNetInt8) { ExpectVerifies("models/onnx/googlenet.onnx"); }
TEST(ZooVerify, ResNet18Int8) { ExpectVerifies("models/onnx/resnet18.onnx"); }
TEST(ZooVerify, TransformerFloat32) { ExpectVerifies("models/onnx/transformer.onnx", "--dtype float32"); }

// int8: a hybrid graph (exec/hybrid.h): Div, Pow and the attention MatMuls keep float32 between a
// Dequantize and a Quantize; every strategy's plan still matches the naive run bit for bit.
TEST(ZooVerify, TransformerInt8Hybrid) { ExpectVerifies("models/onnx/transformer.onnx"); }

}  // namespace
}  // namespace sramplan::testing
