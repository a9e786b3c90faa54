// Issue 20's second goal on the reference .tflite models: the vmcu plan (segment overlap and fused
// blocks, with PADs folded into the convolutions) needs no more SRAM than Arm Vela with --optimise
// Size (tflm_arena.json), and runs bit-exact in its arena.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "driver/strategy.h"
#include "import/import.h"
#include "import/tflite_test.h"
#include "target/target.h"

namespace sramplan::driver {
namespace {

TEST(VmcuTflite, NeedsNoMoreThanVelaAndVerifies) {
  const std::string dir = testing::TfliteReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference .tflite models not found (../shared/reference/tflite)";
  std::ifstream in(dir + "/tflm_arena.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto ref = nlohmann::json::parse(ss.str());
  auto target = target::LoadTarget("sram:4MiB");
  ASSERT_TRUE(target.ok());
  int checked = 0;
  for (const auto& [name, row] : ref["models"].items()) {
    const std::string path = dir + "/" + name + ".tflite";
    import::ImportOptions io;
    io.fold_pad = true;
    auto g = import::ImportModel(path, io);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    ir::ApplyDtype(*g, ir::DataType::kInt8);
    auto p = RunStrategy(*g, *target, "vmcu", {});
    ASSERT_TRUE(p.ok()) << name << ": " << p.status().message();
    const int64_t vela = row["vela_u55_sram_bytes_size"].get<int64_t>();
    EXPECT_LE(p->metrics.arena_bytes, vela) << name;
    EXPECT_LT(p->metrics.arena_bytes, row["planned_bytes"].get<int64_t>()) << name << " (TFLM)";
    auto run = testing::Cli("verify " + path + " --fold-pad --target sram:4MiB --strategy vmcu");
    EXPECT_EQ(run.rc, 0) << name << ": " << run.all();
    EXPECT_NE(run.out.find("outputs bit-identical"), std::string::npos) << run.all();
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace sramplan::driver
