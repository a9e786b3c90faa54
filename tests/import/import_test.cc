// ImportModel: reading model files (bounded, sniffing the format) and the JSON importers' handling of
// hostile input (issue 12).
#include "import/import.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace sramplan::import {
namespace {

bool Has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

std::string ImportError(const std::string& path) {
  auto g = ImportModel(path, {});
  EXPECT_FALSE(g.ok()) << path;
  return g.ok() ? "" : g.status().message();
}

TEST(ImportModel, EndlessDeviceIsRefusedAtOnce) {
  // Read 6.9 GB in 10 s before: now the first byte (0x00 cannot start a protobuf message) decides.
  std::string m = ImportError("/dev/zero");
  EXPECT_TRUE(Has(m, "model file '/dev/zero' is neither JSON nor an ONNX model: it starts with byte 0x00")) << m;
}

TEST(ImportModel, NativeGraphWithHugeNumberOrDeepNesting) {
  std::string m = ImportError(testing::WriteTempFile("big.graph.json", R"({"format": "sramplan-graph", "version": 1e999})"));
  EXPECT_TRUE(Has(m, "big.graph.json' is not valid JSON at line 1, column 41: number overflow parsing '1e999'")) << m;
  std::string deep = R"({"format": "sramplan-graph", "tensors": )" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  m = ImportError(testing::WriteTempFile("deep.graph.json", deep));
  EXPECT_TRUE(Has(m, "nests lists and objects more than 512 levels deep")) << m;
}

TEST(ImportModel, NativeGraphValuesAreReadExactly) {
  const std::string head = R"({"format": "sramplan-graph", "tensors": [)";
  // An attribute beyond int64 was wrapped silently.
  std::string m = ImportError(testing::WriteTempFile("attr.graph.json", head + R"(
      {"name": "x", "kind": "input", "shape": [1, 4]}, {"name": "y", "kind": "output"}],
      "ops": [{"type": "Relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"k": 18446744073709551615}}]})"));
  EXPECT_TRUE(Has(m, "attr 'k': 18446744073709551615 does not fit a 64-bit integer")) << m;
  // A zero point beyond int32 was truncated; a scale beyond float became inf.
  m = ImportError(testing::WriteTempFile("zp.graph.json", head + R"(
      {"name": "x", "kind": "input", "shape": [1, 4], "quant": {"scale": [0.5], "zero_point": [5000000000]}},
      {"name": "y", "kind": "output"}], "ops": [{"type": "Relu", "inputs": ["x"], "outputs": ["y"]}]})"));
  EXPECT_TRUE(Has(m, "zero points must be 32-bit integers, got 5000000000")) << m;
  m = ImportError(testing::WriteTempFile("scale.graph.json", head + R"(
      {"name": "x", "kind": "input", "shape": [1, 4], "quant": {"scale": [1e300]}},
      {"name": "y", "kind": "output"}], "ops": [{"type": "Relu", "inputs": ["x"], "outputs": ["y"]}]})"));
  EXPECT_TRUE(Has(m, "every scale must be a positive number that fits a float, got 1e+300")) << m;
  // A reshape of a tensor whose element count overflows int64 (signed overflow before).
  m = ImportError(testing::WriteTempFile("numel.graph.json", head + R"(
      {"name": "x", "kind": "input", "shape": [4611686018427387904, 4]}, {"name": "y", "kind": "output"}],
      "ops": [{"type": "Reshape", "inputs": ["x"], "outputs": ["y"], "attrs": {"shape": [-1]}}]})"));
  EXPECT_TRUE(Has(m, "too many elements")) << m;
  // A deep attribute value is reported without dumping it whole.
  m = ImportError(testing::WriteTempFile("obj.graph.json", head + R"(
      {"name": "x", "kind": "input", "shape": [1, 4]}, {"name": "y", "kind": "output"}],
      "ops": [{"type": "Relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"k": )" +
                                         std::string(500, '[') + std::string(500, ']') + "}}]}"));
  EXPECT_TRUE(Has(m, "attr 'k'")) << m;
  EXPECT_LT(m.size(), 300u) << m;
}

TEST(ImportModel, McunetConfigFileWithHugeChannels) {
  std::string m = ImportError(testing::WriteTempFile("huge.mcunet.json", R"({"resolution": 32,
      "first_conv": {"kernel_size": 3, "out_channels": 1099511627776}, "blocks": [], "classifier": {}})"));
  EXPECT_TRUE(Has(m, "importing '")) << m;
  EXPECT_TRUE(Has(m, "first_conv.out_channels: must be an integer in [1, 2^16], got 1099511627776")) << m;
}

}  // namespace
}  // namespace sramplan::import
