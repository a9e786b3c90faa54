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

}  // namespace
}  // namespace sramplan::import
