#include <gtest/gtest.h>

#include "import/import.h"

namespace sramplan::import {
namespace {

// A two-block ProxylessNAS-format config in the shape of mcunet's JSON files.
const char* kConfig = R"({
  "name": "ProxylessNASNets", "resolution": 32,
  "first_conv": {"name": "ConvLayer", "kernel_size": 3, "stride": 2, "groups": 1, "in_channels": 3,
                 "out_channels": 8, "act_func": "relu6"},
  "blocks": [
    {"name": "MobileInvertedResidualBlock",
     "mobile_inverted_conv": {"name": "MBInvertedConvLayer", "in_channels": 8, "out_channels": 8,
        "kernel_size": 3, "stride": 1, "expand_ratio": 1, "mid_channels": null, "act_func": "relu6"},
     "shortcut": null},
    {"name": "MobileInvertedResidualBlock",
     "mobile_inverted_conv": {"name": "MBInvertedConvLayer", "in_channels": 8, "out_channels": 8,
        "kernel_size": 5, "stride": 1, "expand_ratio": 3, "mid_channels": 24, "act_func": "relu6"},
     "shortcut": {"name": "IdentityLayer", "in_channels": [8], "out_channels": [8]}},
    {"name": "MobileInvertedResidualBlock",
     "mobile_inverted_conv": {"name": "MBInvertedConvLayer", "in_channels": 8, "out_channels": 16,
        "kernel_size": 7, "stride": 2, "expand_ratio": 4, "mid_channels": null, "act_func": "relu6"},
     "shortcut": null}
  ],
  "feature_mix_layer": null,
  "classifier": {"name": "LinearLayer", "in_features": 16, "out_features": 10, "bias": true}
})";

TEST(McunetConfig, BuildsTheNetwork) {
  auto g = ImportMcunetConfig(kConfig, "tiny.json", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->layout, ir::Layout::kNHWC);
  // stem + (dw, project) + (expand, dw, project, add) + (expand, dw, project) + gap + flatten + fc.
  EXPECT_EQ(g->num_ops(), 1 + 2 + 4 + 3 + 3);
  EXPECT_EQ(g->tensor(g->Inputs()[0]).shape, (std::vector<int64_t>{1, 32, 32, 3}));
  EXPECT_EQ(g->tensor(*g->FindTensor("first_conv.out")).shape, (std::vector<int64_t>{1, 16, 16, 8}));
  // expand_ratio 4 with no mid_channels: 8 * 4 = 32.
  EXPECT_EQ(g->tensor(*g->FindTensor("blocks.2.expand.out")).shape, (std::vector<int64_t>{1, 16, 16, 32}));
  EXPECT_EQ(g->tensor(*g->FindTensor("blocks.2.depthwise.out")).shape, (std::vector<int64_t>{1, 8, 8, 32}));
  EXPECT_EQ(g->tensor(g->Outputs()[0]).shape, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(g->tensor(g->Inputs()[0]).dtype, ir::DataType::kInt8);
  int depthwise = 0;
  for (const auto& op : g->ops()) depthwise += ir::IsDepthwiseConv(*g, op) ? 1 : 0;
  EXPECT_EQ(depthwise, 3);
}

TEST(McunetConfig, ChannelMismatchIsAnError) {
  std::string bad = kConfig;
  bad.replace(bad.find("\"in_channels\": 8, \"out_channels\": 16"), 16, "\"in_channels\": 9");
  auto g = ImportMcunetConfig(bad, "bad.json", {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("blocks[2].mobile_inverted_conv.in_channels"), std::string::npos) << g.status().message();
}

TEST(McunetConfig, WrongTypesAreErrorsNotCrashes) {
  EXPECT_FALSE(ImportMcunetConfig(R"({"resolution": "big", "first_conv": {}, "blocks": []})", "x", {}).ok());
  EXPECT_FALSE(ImportMcunetConfig(R"({"resolution": 32, "first_conv": 3, "blocks": []})", "x", {}).ok());
  EXPECT_FALSE(ImportMcunetConfig(R"({"resolution": 32, "first_conv": {"out_channels": 8, "kernel_size": 3},
      "blocks": [{"mobile_inverted_conv": [1]}], "classifier": {}})", "x", {}).ok());
}

// Issue 12: sizes read from the config are checked before anything is allocated.
std::string Replaced(const std::string& from, const std::string& to) {
  std::string text = kConfig;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

std::string ErrorOf(const std::string& text) {
  auto g = ImportMcunetConfig(text, "m.json", {});
  EXPECT_FALSE(g.ok());
  return g.ok() ? "" : g.status().message();
}

bool Has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(McunetConfig, HugeChannelCountsAreErrorsBeforeAllocating) {
  // 2^40 output channels threw std::bad_alloc.
  std::string m = ErrorOf(Replaced("\"out_channels\": 8, \"act_func\"", "\"out_channels\": 1099511627776, \"act_func\""));
  EXPECT_TRUE(Has(m, "MCUNet config 'm.json': first_conv.out_channels: must be an integer in [1, 2^16], got 1099511627776"))
      << m;
  // mid_channels = INT64_MAX threw std::length_error.
  m = ErrorOf(Replaced("\"mid_channels\": 24", "\"mid_channels\": 9223372036854775807"));
  EXPECT_TRUE(Has(m, "blocks[1].mobile_inverted_conv.mid_channels: must be an integer in [0, 2^16], got 9223372036854775807"))
      << m;
  // 1e9 channels took 24 s and 7.8 GB.
  m = ErrorOf(Replaced("\"mid_channels\": 24", "\"mid_channels\": 1000000000"));
  EXPECT_TRUE(Has(m, "got 1000000000")) << m;
  // Unsigned values beyond int64 and doubles are not converted.
  m = ErrorOf(Replaced("\"resolution\": 32", "\"resolution\": 18446744073709551615"));
  EXPECT_TRUE(Has(m, "resolution: must be an integer in [1, 4096], got 18446744073709551615")) << m;
  m = ErrorOf(Replaced("\"resolution\": 32", "\"resolution\": 32.0"));
  EXPECT_TRUE(Has(m, "resolution: must be an integer in [1, 4096], got 32.0")) << m;
  m = ErrorOf(Replaced("\"expand_ratio\": 3,", "\"expand_ratio\": 1e300,"));
  EXPECT_TRUE(Has(m, "blocks[1].mobile_inverted_conv.expand_ratio: must be a number in [0, 1024], got 1e+300")) << m;
}

TEST(McunetConfig, TensorsLargerThan2GiBAreRefused) {
  // Every value is within its own limit, but the activation [1, 2048, 2048, 65536] is 256 GiB.
  std::string text = Replaced("\"resolution\": 32", "\"resolution\": 4096");
  const std::string from = "\"out_channels\": 8, \"act_func\"";
  text.replace(text.find(from), from.size(), "\"out_channels\": 65536, \"act_func\"");
  std::string m = ErrorOf(text);
  EXPECT_TRUE(Has(m, "layer 'first_conv': tensor 'first_conv.out' [1, 2048, 2048, 65536] would take 274877906944 bytes; "
                     "sramplan accepts tensors of at most 2^31 bytes (2 GiB)"))
      << m;
  // The input itself, with a large batch.
  ImportOptions big_batch;
  big_batch.batch = 65536;
  auto g = ImportMcunetConfig(Replaced("\"resolution\": 32", "\"resolution\": 4096"), "m.json", big_batch);
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(Has(g.status().message(), "tensor 'input' [65536, 4096, 4096, 3]")) << g.status().message();
}

TEST(McunetConfig, HugeNumbersAndDeepNestingAreErrors) {
  std::string m = ErrorOf(Replaced("\"resolution\": 32", "\"resolution\": 1e999"));
  EXPECT_TRUE(Has(m, "is not valid JSON at line 2, column")) << m;
  std::string deep = R"({"resolution": 32, "first_conv": )" + std::string(100000, '[') + std::string(100000, ']') +
                     R"(, "blocks": []})";
  m = ErrorOf(deep);
  EXPECT_TRUE(Has(m, "nests lists and objects more than 512 levels deep")) << m;
  // A wrong type deep inside names its path, and a huge value is cut in the message.
  std::string big_list = "[";
  for (int i = 0; i < 10000; ++i) big_list += "1,";
  big_list += "1]";
  m = ErrorOf(Replaced("\"stride\": 2,", "\"stride\": " + big_list + ","));
  EXPECT_TRUE(Has(m, "first_conv.stride: must be an integer in [1, 4096], got a list [")) << m;
  EXPECT_LT(m.size(), 300u) << m;
  // A number too long for a double: the message gives its position and cuts the digits.
  m = ErrorOf(Replaced("\"stride\": 2,", "\"stride\": " + std::string(400, '9') + "e999,"));
  EXPECT_TRUE(Has(m, "is not valid JSON at line 3, column")) << m;
  EXPECT_LT(m.size(), 400u) << m;
}

}  // namespace
}  // namespace sramplan::import
