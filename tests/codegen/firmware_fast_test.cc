// Issue 17's second pass, in QEMU: the whole MCUNet-320KB-ImageNet firmware runs every new kernel
// path (the assembly 2x2 and 1x4 dense blocks, the depthwise tap-pair loop, the per-channel fast
// requantisation, the prepared residual Add, the row-cache expansion of the stem and of the 7x7
// stride-2 step under vmcu-fast, their column-cache expansion in batches under vmcu-small,
// TinyEngine's one-channel depthwise planes) and prints the host
// executor's checksum, on the SIMD path (Cortex-M4) and the portable one (Cortex-M3).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "test_util.h"

namespace sramplan {
namespace {

using testing::Cli;
using testing::CliRun;
using testing::SourcePath;
using testing::FreshDir;
using testing::Sh;

TEST(FirmwareFast, WholeMcunetMatchesTheHostUnderEveryFastPath) {
  std::string out;
  for (const char* t : {"arm-none-eabi-gcc", "qemu-system-arm", "make"})
    if (Sh(std::string("command -v ") + t, &out) != 0) GTEST_SKIP() << t << " is not installed (scripts/install-deps.sh)";
  const std::string model = SourcePath("models/mcunet_blocks/mcunet-320kb-imagenet.graph.json");
  const std::pair<const char*, const char*> runs[] = {
      {"vmcu-fast", "cortex-m4"}, {"vmcu-fast", "cortex-m3"}, {"tinyengine", "cortex-m4"}, {"vmcu-small", "cortex-m4"}};
  for (const auto& [strategy, cpu] : runs) {
    const std::string name = std::string(strategy) + "_" + cpu;
    const std::string dir = FreshDir("fwfast_" + name);
    const CliRun r = Cli("codegen '" + model + "' --target mps2-an386 --strategy " + strategy + " --cpu " + cpu +
                         " --out '" + dir + "'");
    ASSERT_EQ(r.rc, 0) << name << ": " << r.all();
    EXPECT_EQ(Sh("timeout 300 make -s -C '" + dir + "' check", &out), 0) << name << ": " << out;
    EXPECT_NE(out.find("matches the host executor"), std::string::npos) << name << ": " << out;
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace sramplan
