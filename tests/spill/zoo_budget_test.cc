// `sramplan verify --budget ... --strategy all` end to end on bundled models on the exynos-npu target:
// Belady, greedy, COSMA fixed-schedule and joint plans (with spill and reload transfers) run in their
// arena and DRAM and match the naive run bit for bit, moving exactly the planned off-chip bytes.
// Named ZooVerify so the asan preset skips it like the other zoo runs (CMakePresets.json).
#include <gtest/gtest.h>

#include "test_util.h"

namespace sramplan::testing {
namespace {

void ExpectBudgetVerifies(const std::string& model, const std::string& budget, const std::string& extra = "") {
  std::string out, err;
  int rc = RunCli("verify '" + SourcePath(model) + "' --target exynos-npu --budget " + budget +
                      " --strategy all --time-limit 20 " + extra,
                  &out, &err);
  EXPECT_EQ(rc, 0) << model << "\n" << out << err;
  for (const char* s : {"belady", "greedy", "cosma-fixed", "cosma"})
    EXPECT_NE(out.find(std::string("verify ") + s + ": OK"), std::string::npos) << model << " " << s << "\n" << out;
}

TEST(ZooVerify, DenseNetBudgetMinInt8) { ExpectBudgetVerifies("models/onnx/densenet121.onnx", "min"); }
TEST(ZooVerify, GoogLeNetBudgetAvgWithWeightsInt8) {
  ExpectBudgetVerifies("models/onnx/googlenet.onnx", "avg", "--with-weights");
}
TEST(ZooVerify, McunetBudgetMinInt8) {
  ExpectBudgetVerifies("models/mcunet_blocks/mcunet-320kb-imagenet.graph.json", "min");
}

}  // namespace
}  // namespace sramplan::testing
