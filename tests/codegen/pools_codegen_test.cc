// Firmware of a plan with memory pools (issue 19): one arena array per pool in a section of its
// own, and one linker region per pool at the pool's address. STM32F767ZI's DTCM, SRAM1 and SRAM2
// (0x20000000..0x20080000) lie inside the data SSRAM of QEMU's mps2 boards, so the firmware links
// at the F767ZI's real pool addresses and runs in QEMU (mps2-an500, Cortex-M7), printing the host
// arena executor's checksum.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace sramplan {
namespace {

using testing::Cli;
using testing::SourcePath;
using testing::FreshDir;
using testing::Sh;

bool HaveTool(const std::string& t) { return Sh("command -v " + t).rc == 0; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// SqueezeNet 1.0 at 128x128 needs 450 KiB in one arena, more than SRAM1; across the pools it fits.
TEST(PoolsCodegen, F767PoolsLinkAtTheirAddressesAndRunInQemu) {
  const std::string dir = FreshDir("squeezenet_f767");
  testing::CliRun gen = Cli("codegen '" + SourcePath("models/onnx/squeezenet1_0.onnx") +
                            "' --input-shape 1x3x128x128 --canonicalize --target stm32f767zi --strategy pools --out '" +
                            dir + "'");
  ASSERT_EQ(gen.rc, 0) << gen.all();
  EXPECT_NE(gen.out.find("pool dtcm @ 0x20000000"), std::string::npos) << gen.out;
  const std::string ld = ReadAll(dir + "/link.ld");
  EXPECT_NE(ld.find("POOL_DTCM (rwx) : ORIGIN = 0x20000000, LENGTH = 131072"), std::string::npos) << ld;
  EXPECT_NE(ld.find("ORIGIN = 0x20020000, LENGTH = 376832"), std::string::npos) << ld;
  EXPECT_NE(ld.find("POOL_SRAM2 (rwx) : ORIGIN = 0x2007c000, LENGTH = 16384"), std::string::npos) << ld;
  const std::string model = ReadAll(dir + "/model.c");
  EXPECT_NE(model.find("section(\".sramplan_pool_dtcm\")"), std::string::npos);
  EXPECT_EQ(model.find("static uint8_t sramplan_arena["), std::string::npos);
  for (const char* t : {"arm-none-eabi-gcc", "qemu-system-arm", "make"})
    if (!HaveTool(t)) GTEST_SKIP() << t << " is not installed (scripts/install-deps.sh)";
  std::string out;
  ASSERT_EQ(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  // The linker placed each pool's arena at the pool's base.
  ASSERT_EQ(Sh("arm-none-eabi-nm '" + dir + "/model.elf' | grep sramplan_pool_", &out), 0) << out;
  EXPECT_NE(out.find("20000000 b sramplan_pool_dtcm"), std::string::npos) << out;
  EXPECT_NE(out.find("20020000 b sramplan_pool_sram1"), std::string::npos) << out;
  ASSERT_EQ(Sh("timeout 300 make -s -C '" + dir + "' check", &out), 0) << out;
  EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
}

TEST(PoolsCodegen, PoolsOutsideQemuRamAreRefused) {
  testing::CliRun gen = Cli("codegen '" + SourcePath("models/mcunet_blocks/S1.graph.json") +
                            "' --target esp32s3 --strategy pools --out '" + FreshDir("esp32s3") + "'");
  EXPECT_EQ(gen.rc, 1) << gen.all();
  EXPECT_NE(gen.all().find("memory pool 'sram' [0x3fc88000"), std::string::npos) << gen.all();
  EXPECT_NE(gen.all().find("give the target's pools addresses inside it"), std::string::npos) << gen.all();
}

}  // namespace
}  // namespace sramplan
