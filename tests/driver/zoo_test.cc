// Every bundled model imports, and every tensor-level strategy plans it on stm32f411re and
// exynos-npu with a verified plan.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/strategy.h"
#include "plan/verifier.h"
#include "import/import.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

std::vector<std::string> BundledModels() {
  std::vector<std::string> out;
  for (const char* dir : {"models/onnx", "models/mcunet_blocks"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(testing::SourcePath(dir), ec)) {
      std::string p = e.path().string();
      if (p.ends_with(".onnx") || p.ends_with(".graph.json")) out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Zoo, EveryModelEveryStrategyBothTargets) {
  auto models = BundledModels();
  ASSERT_GE(models.size(), 20u) << "the bundled zoo is missing";
  auto mcu = target::LoadTarget("stm32f411re");
  auto npu = target::LoadTarget("exynos-npu");
  ASSERT_TRUE(mcu.ok() && npu.ok());
  for (const auto& path : models) {
    auto g = import::ImportModel(path, {});
    ASSERT_TRUE(g.ok()) << path << ": " << g.status().message();
    ir::ApplyDtype(*g, ir::DataType::kInt8);
    for (const target::Target* t : {&*mcu, &*npu})
      for (const auto& s : StrategiesOf(Family::kTensor)) {
        auto p = RunStrategy(*g, *t, s.name, {});
        ASSERT_TRUE(p.ok()) << path << " " << s.name << ": " << p.status().message();
        EXPECT_TRUE(plan::VerifyPlan(*p).ok());
        if (s.name != "naive") {
          EXPECT_GE(p->metrics.arena_bytes, p->metrics.lower_bound_bytes) << path;
        }
      }
  }
}

TEST(Zoo, McunetBlockFacts) {
  // B1 of MCUNet-320KB-ImageNet (vMCU Table 2): 176x176x3 input, 3x3 stride-2 stem.
  auto g = import::ImportModel(testing::SourcePath("models/mcunet_blocks/B1.graph.json"), {});
  if (!g.ok()) GTEST_SKIP() << g.status().message();
  EXPECT_EQ(g->tensor(g->Inputs()[0]).shape, (std::vector<int64_t>{1, 176, 176, 3}));
}

TEST(Zoo, BatchBindsTheSymbolicAxis) {
  import::ImportOptions o;
  o.batch = 4;
  auto g = import::ImportModel(testing::SourcePath("models/onnx/resnet18.onnx"), o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(g->Inputs()[0]).shape[0], 4);
  EXPECT_EQ(g->tensor(g->Outputs()[0]).shape, (std::vector<int64_t>{4, 1000}));
}

}  // namespace
}  // namespace sramplan::driver
