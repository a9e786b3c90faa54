#include "target/target.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sramplan::target {
namespace {

TEST(Target, EveryPresetLoads) {
  ASSERT_GE(BundledPresets().size(), 5u);
  for (const auto& [name, text] : BundledPresets()) {
    auto t = LoadTarget(name);
    ASSERT_TRUE(t.ok()) << name << ": " << t.status().message();
    EXPECT_GE(t->arena_level, 0);
    EXPECT_GE(t->weight_level, 0);
  }
}

TEST(Target, Stm32f411re) {
  auto t = LoadTarget("stm32f411re");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->levels[t->arena_level].capacity, 128 * 1024);
  EXPECT_EQ(t->levels[t->weight_level].name, "flash");
  EXPECT_EQ(t->levels[t->weight_level].capacity, 512 * 1024);
  // Default energy from the blocking paper's Table 3: 128 KB SRAM, 64-bit words: 11.66 pJ / 16 bit.
  EXPECT_DOUBLE_EQ(t->levels[t->arena_level].read_pj_per_byte, 11.66 / 2);
}

TEST(Target, InheritOverridesByLevelName) {
  auto t = LoadTarget("stm32f767zi");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->levels.size(), 2u);
  EXPECT_EQ(t->levels[t->arena_level].capacity, 512 * 1024);
  EXPECT_EQ(t->levels[t->weight_level].capacity, 2 * 1024 * 1024);
  EXPECT_EQ(t->levels[t->arena_level].kind, MemoryKind::kSram);  // inherited
}

TEST(Target, Shorthand) {
  auto t = LoadTarget("sram:256KiB");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->levels[t->arena_level].capacity, 256 * 1024);
  EXPECT_FALSE(LoadTarget("sram:0").ok());
  EXPECT_FALSE(LoadTarget("sram:12XB").ok());
  EXPECT_FALSE(LoadTarget("sram:99999999999999999999").ok());
}

TEST(Target, FileWithInheritAndBadValues) {
  std::string ok = testing::WriteTempFile("t_ok.json",
                                          R"({"name": "mine", "inherit": "stm32f411re",
                                              "levels": [{"name": "sram", "capacity": "96KiB"}]})");
  auto t = LoadTarget(ok);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "mine");
  EXPECT_EQ(t->levels[t->arena_level].capacity, 96 * 1024);

  std::string zero = testing::WriteTempFile("t_zero.json",
                                            R"({"name": "z", "levels": [{"name": "sram", "capacity": 0}]})");
  auto z = LoadTarget(zero);
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("capacity must be positive"), std::string::npos) << z.status().message();

  std::string wrong_type = testing::WriteTempFile(
      "t_type.json", R"({"name": "w", "levels": [{"name": "sram", "capacity": "1KiB", "instances": "many"}]})");
  EXPECT_FALSE(LoadTarget(wrong_type).ok());

  std::string cycle = testing::WriteTempFile("t_cycle.json", R"({"name": "c", "inherit": "t_cycle.json"})");
  EXPECT_FALSE(LoadTarget(cycle).ok());
  EXPECT_FALSE(LoadTarget("no-such-target").ok());
  EXPECT_FALSE(LoadTarget("").ok());
}

TEST(Target, DefaultEnergyTable) {
  EXPECT_DOUBLE_EQ(DefaultEnergyPjPerByte(MemoryKind::kSram, 1024, 64), 1.20 / 2);
  EXPECT_DOUBLE_EQ(DefaultEnergyPjPerByte(MemoryKind::kSram, 1024 * 1024, 512), 25.22 / 2);
  EXPECT_DOUBLE_EQ(DefaultEnergyPjPerByte(MemoryKind::kDram, 1, 8), 160.0);
}

}  // namespace
}  // namespace sramplan::target
