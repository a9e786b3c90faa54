#include "cost/cost_model.h"

#include <gtest/gtest.h>

#include "cost/hardware_model.h"
#include "target/target.h"

namespace sramplan::cost {
namespace {

HardwareModel Load(const std::string& spec) {
  auto t = target::LoadTarget(spec);
  EXPECT_TRUE(t.ok()) << t.status().message();
  auto hw = HardwareModel::From(*t);
  EXPECT_TRUE(hw.ok()) << hw.status().message();
  return std::move(hw).value();
}

TEST(HardwareModel, FromEveryBundledTargetMirrorsTheTarget) {
  for (const auto& [name, json] : target::BundledPresets()) {
    auto t = target::LoadTarget(name);
    ASSERT_TRUE(t.ok()) << name << ": " << t.status().message();
    auto hw = HardwareModel::From(*t);
    ASSERT_TRUE(hw.ok()) << name << ": " << hw.status().message();
    EXPECT_EQ(hw->name(), t->name);
    ASSERT_EQ(hw->num_levels(), static_cast<int>(t->levels.size()));
    EXPECT_EQ(hw->arena(), t->arena_level);
    EXPECT_EQ(hw->weights(), t->weight_level);
    int first_dram = -1;
    for (int i = 0; i < hw->num_levels(); ++i) {
      const LevelModel& l = hw->level(i);
      if (t->levels[i].kind == target::MemoryKind::kDram && first_dram < 0) first_dram = i;
      const target::MemoryLevel& m = t->levels[i];
      EXPECT_EQ(l.name, m.name);
      EXPECT_EQ(l.capacity, m.capacity);
      EXPECT_EQ(l.instances, m.instances);
      EXPECT_EQ(l.read_pj_per_byte, m.read_pj_per_byte);
      EXPECT_EQ(l.write_pj_per_byte, m.write_pj_per_byte);
      EXPECT_EQ(l.bytes_per_cycle, m.bandwidth_bytes_per_cycle);
      EXPECT_EQ(l.off_chip, target::IsOffChip(m.kind));
      EXPECT_EQ(hw->FindLevel(m.name), i);
    }
    EXPECT_EQ(hw->dram(), first_dram);
    EXPECT_EQ(hw->compute().pe_rows, t->compute.pe_rows);
    EXPECT_EQ(hw->compute().pe_cols, t->compute.pe_cols);
    EXPECT_EQ(hw->compute().macs_per_cycle, t->compute.macs_per_cycle);
    EXPECT_EQ(hw->compute().mac_pj, t->compute.mac_pj);
    EXPECT_EQ(hw->compute().clock_mhz, t->compute.clock_mhz);
  }
}

TEST(HardwareModel, DramIsTheFirstDramLevel) {
  HardwareModel exynos = Load("exynos-npu");
  ASSERT_GE(exynos.dram(), 0);
  EXPECT_EQ(exynos.level(exynos.dram()).kind, target::MemoryKind::kDram);
  EXPECT_TRUE(exynos.level(exynos.dram()).off_chip);
  HardwareModel stm = Load("stm32f767zi");
  EXPECT_EQ(stm.dram(), -1);  // flash is off chip but not DRAM
  EXPECT_TRUE(stm.level(stm.weights()).off_chip);
  EXPECT_EQ(stm.FindLevel("no-such-level"), -1);
}

TEST(HardwareModel, WithLevelsForCoDesign) {
  HardwareModel hw = Load("exynos-npu");
  std::vector<LevelModel> levels = hw.levels();
  levels[hw.arena()].capacity = 256 * 1024;
  levels[hw.arena()].read_pj_per_byte = 0.5;
  auto smaller = hw.WithLevels(levels);
  ASSERT_TRUE(smaller.ok()) << smaller.status().message();
  EXPECT_EQ(smaller->level(smaller->arena()).capacity, 256 * 1024);
  EXPECT_EQ(smaller->level(smaller->arena()).read_pj_per_byte, 0.5);
  EXPECT_EQ(hw.level(hw.arena()).capacity, 1024 * 1024);  // the original is unchanged
  // A level in front: arena and weights are found again by name.
  LevelModel rf;
  rf.name = "regfile";
  rf.capacity = 64;
  levels.insert(levels.begin(), rf);
  auto deeper = hw.WithLevels(levels);
  ASSERT_TRUE(deeper.ok());
  EXPECT_EQ(deeper->arena(), hw.arena() + 1);
  EXPECT_EQ(deeper->level(deeper->arena()).name, hw.level(hw.arena()).name);
  EXPECT_EQ(deeper->dram(), hw.dram() + 1);
  // Dropping the arena level names it.
  std::vector<LevelModel> no_arena = hw.levels();
  const std::string arena_name = no_arena[hw.arena()].name;
  no_arena.erase(no_arena.begin() + hw.arena());
  auto bad = hw.WithLevels(no_arena);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'" + arena_name + "'"), std::string::npos)
      << bad.status().message();
  std::vector<LevelModel> negative = hw.levels();
  negative[0].write_pj_per_byte = -1;
  auto neg = hw.WithLevels(negative);
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("level '" + negative[0].name + "'"), std::string::npos);
  ComputeModel pe = hw.compute();
  pe.mac_pj = 2.5;
  EXPECT_EQ(hw.WithCompute(pe).compute().mac_pj, 2.5);
}

HardwareModel TwoLevels() {
  target::Target t;
  t.name = "toy";
  target::MemoryLevel sram, dram;
  sram.name = "sram";
  sram.capacity = 1024;
  sram.read_pj_per_byte = 1.0;
  sram.write_pj_per_byte = 2.0;
  sram.bandwidth_bytes_per_cycle = 8;
  sram.holds_activations = true;
  dram.name = "dram";
  dram.kind = target::MemoryKind::kDram;
  dram.capacity = 1 << 30;
  dram.read_pj_per_byte = 100.0;
  dram.write_pj_per_byte = 120.0;
  dram.bandwidth_bytes_per_cycle = 2;
  dram.holds_weights = true;
  t.levels = {sram, dram};
  t.arena_level = 0;
  t.weight_level = 1;
  t.compute.macs_per_cycle = 16;
  t.compute.mac_pj = 0.25;
  auto hw = HardwareModel::From(t);
  EXPECT_TRUE(hw.ok()) << hw.status().message();
  return std::move(hw).value();
}

TEST(CostModel, EvaluateEnergyCyclesAndOffChipBytes) {
  HardwareModel hw = TwoLevels();
  Traffic tr(hw);
  tr.read = {400, 30};
  tr.write = {200, 10};
  tr.macs = 1000;
  Cost c = Evaluate(hw, tr);
  EXPECT_DOUBLE_EQ(c.energy_pj, 400 * 1.0 + 200 * 2.0 + 30 * 100.0 + 10 * 120.0 + 1000 * 0.25);
  EXPECT_EQ(c.dram_read, 30);
  EXPECT_EQ(c.dram_write, 10);
  // Compute: ceil(1000 / 16) = 63; SRAM: 600 / 8 = 75; DRAM: 40 / 2 = 20.
  EXPECT_EQ(c.cycles, 75);
  tr.macs = 2000;  // 125 cycles of compute
  EXPECT_EQ(Evaluate(hw, tr).cycles, 125);
  Cost none = Evaluate(hw, Traffic());
  EXPECT_EQ(none.energy_pj, 0);
  EXPECT_EQ(none.cycles, 0);
}

TEST(CostModel, TrafficAdds) {
  Traffic a(2), b(3);
  a.read = {1, 2};
  b.read = {10, 20, 30};
  b.write = {0, 0, 5};
  b.macs = 7;
  a += b;
  EXPECT_EQ(a.read, (std::vector<int64_t>{11, 22, 30}));
  EXPECT_EQ(a.write, (std::vector<int64_t>{0, 0, 5}));
  EXPECT_EQ(a.macs, 7);
}

}  // namespace
}  // namespace sramplan::cost
