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

// Issue 12: values that overflowed, got the wrong message, or crashed.
std::string Message(const std::string& spec) {
  auto t = LoadTarget(spec);
  EXPECT_FALSE(t.ok()) << spec;
  return t.ok() ? "" : t.status().message();
}

std::string TargetFile(const std::string& name, const std::string& text) { return testing::WriteTempFile(name, text); }

bool Has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(TargetInputs, ComputeValuesAreReadExactly) {
  // 2^31 PE columns overflowed an int.
  std::string m = Message(TargetFile("t_pe.json", R"({"name": "pe", "levels": [{"name": "s", "capacity": 1024}],
      "compute": {"pe_cols": 2147483648}})"));
  EXPECT_TRUE(Has(m, "target 'pe': compute.pe_cols: must be an integer in [1, 2^31), got 2147483648")) << m;
  // Two valid values of 65536: their product is the MACs per cycle, not "compute values must be positive".
  auto t = LoadTarget(TargetFile("t_pe2.json", R"({"name": "pe2", "levels": [{"name": "s", "capacity": 1024,
      "holds": ["activations"]}, {"name": "f", "kind": "flash", "capacity": 4096, "holds": ["weights"]}],
      "compute": {"pe_rows": 65536, "pe_cols": 65536}})"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->compute.macs_per_cycle, int64_t{1} << 32);
  m = Message(TargetFile("t_pe3.json", R"({"name": "pe3", "levels": [{"name": "s", "capacity": 1024}],
      "compute": {"pe_rows": 0}})"));
  EXPECT_TRUE(Has(m, "compute.pe_rows: must be an integer in [1, 2^31), got 0")) << m;
  m = Message(TargetFile("t_pe4.json", R"({"name": "pe4", "levels": [{"name": "s", "capacity": 1024}],
      "compute": {"clock_mhz": "fast"}})"));
  EXPECT_TRUE(Has(m, "compute.clock_mhz: must be a number, got \"fast\"")) << m;
}

TEST(TargetInputs, ShorthandSizesSayWhatIsWrong) {
  auto t = LoadTarget("sram:1.5KiB");  // a whole number of bytes: accepted exactly
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->levels[t->arena_level].capacity, 1536);
  EXPECT_TRUE(Has(Message("sram:1.3B"), "'1.3B' is not a whole number of bytes"));
  EXPECT_TRUE(Has(Message("sram:99999999999TiB"), "is too large: sramplan handles sizes up to 2^50 bytes"));
  EXPECT_TRUE(Has(Message("sram:0"), "the size must be positive"));
  EXPECT_TRUE(Has(Message("sram:12XB"), "unknown unit 'XB'"));
}

TEST(TargetInputs, LevelFieldsNameTheirPath) {
  std::string m = Message(TargetFile("t_cap.json", R"({"name": "cap", "levels": [{"name": "a", "capacity": 1024},
      {"name": "b", "capacity": 9007199254740992}]})"));
  EXPECT_TRUE(Has(m, "target 'cap': levels[1].capacity: must be an integer in [1, 2^50], got 9007199254740992")) << m;
  m = Message(TargetFile("t_cap2.json", R"({"name": "cap2", "levels": [{"name": "a", "capacity": "1.5B"}]})"));
  EXPECT_TRUE(Has(m, "levels[0].capacity: '1.5B' is not a whole number of bytes")) << m;
  m = Message(TargetFile("t_inst.json", R"({"name": "inst", "levels": [{"name": "a", "capacity": "1TiB",
      "instances": 2048}]})"));
  EXPECT_TRUE(Has(m, "levels[0]: capacity x instances = 1099511627776 x 2048 bytes is more than 2^50")) << m;
  m = Message(TargetFile("t_bw.json", R"({"name": "bw", "levels": [{"name": "a", "capacity": 64,
      "bandwidth_bytes_per_cycle": -1}]})"));
  EXPECT_TRUE(Has(m, "levels[0].bandwidth_bytes_per_cycle: must be a number in [0, 1e+12], got -1")) << m;
  m = Message(TargetFile("t_holds.json", R"({"name": "h", "levels": [{"name": "a", "capacity": 64,
      "holds": ["activations", "bias"]}]})"));
  EXPECT_TRUE(Has(m, "levels[0].holds[1]: must be \"activations\" or \"weights\", got \"bias\"")) << m;
  m = Message(TargetFile("t_align.json", R"({"name": "al", "alignment": 1e3, "levels": [{"name": "a", "capacity": 64}]})"));
  EXPECT_TRUE(Has(m, "alignment: must be an integer in [1, 4096], got 1000.0")) << m;
}

TEST(TargetInputs, HugeNumbersAndDeepNestingAreErrors) {
  std::string m = Message(TargetFile("t_big.json", R"({"name": "big", "levels": [{"name": "a", "capacity": 1e999}]})"));
  EXPECT_TRUE(Has(m, "is not valid JSON at line 1, column")) << m;
  // 100,000 deep under an `inherit` (the merge and the message dumps recursed): a clean error.
  std::string deep = R"({"name": "deep", "inherit": "stm32f411re", "x": )" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  m = Message(TargetFile("t_deep.json", deep));
  EXPECT_TRUE(Has(m, "nests lists and objects more than 512 levels deep")) << m;
  // 500 deep is parsed, merged over the preset and ignored (an unknown key).
  std::string ok = R"({"name": "deepok", "inherit": "stm32f411re", "x": )" + std::string(500, '[') +
                   std::string(500, ']') + "}";
  EXPECT_TRUE(LoadTarget(TargetFile("t_deepok.json", ok)).ok());
}

TEST(TargetInputs, EndlessFilesAreRefusedAtOnce) {
  std::string m = Message("/dev/zero");
  EXPECT_TRUE(Has(m, "target '/dev/zero': the file is not a JSON object: it starts with 0x00")) << m;
}

// Found by fuzzing: one level as both the arena and the weight level made every planner lay weights and
// activations over each other from offset 0 (a plan the verifier rejected as an internal error).
TEST(TargetInputs, ArenaAndWeightLevelMustDiffer) {
  const std::string m = Message(TargetFile("t_one.json", R"({"name": "one", "levels": [{"name": "s", "capacity": 1024,
      "holds": ["activations", "weights"]}]})"));
  EXPECT_TRUE(Has(m, "target 'one': level 's' is both the arena level and the weight level")) << m;
}

}  // namespace
}  // namespace sramplan::target
