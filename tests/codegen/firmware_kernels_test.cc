// The firmware's int8 kernel paths (runtime/src/sp_fast_s8.h): codegen says which path a CPU gets
// (SIMD on Cortex-M4/M7 with the DSP extension, portable C on Cortex-M3), and the firmware of every
// strategy that produces one prints the host executor's checksum on both paths in QEMU (mps2-an386
// Cortex-M4, mps2-an385 Cortex-M3): the SIMD loops, the 2x2 blocking and the 32-bit requantisation
// are bit-identical to the host.
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
using testing::HaveArmTools;
using testing::Sh;

TEST(FirmwareKernels, CodegenSaysWhichKernelPathTheCpuGets) {
  const std::string model = SourcePath("models/mcunet_blocks/S1.graph.json");
  const std::string m3 = FreshDir("say_m3"), m4 = FreshDir("say_m4");
  CliRun r = Cli("codegen '" + model + "' --target mps2-an386 --strategy tflm --cpu cortex-m3 --out '" + m3 + "'");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("kernels: portable C (cortex-m3 has no DSP extension"), std::string::npos) << r.out;
  r = Cli("codegen '" + model + "' --target mps2-an386 --strategy tflm --out '" + m4 + "'");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("kernels: SIMD (SXTB16/SXTAB16 + SMLAD, cortex-m4 DSP extension)"), std::string::npos)
      << r.out;
}

// S1 (first conv, depthwise 3x3, pointwise; a fused bottleneck under vmcu) under
// every firmware strategy, on the SIMD path (Cortex-M4) and the portable path (Cortex-M3).
TEST(FirmwareKernels, EveryStrategyMatchesTheHostOnBothKernelPaths) {
  std::string missing;
  if (!HaveArmTools(&missing)) GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  for (const char* block : {"S1"}) {
    for (const char* strategy : {"vmcu", "tinyengine", "tflm"}) {
      for (const char* cpu : {"cortex-m4", "cortex-m3"}) {
        const std::string name = std::string(block) + "_" + strategy + "_" + cpu;
        const std::string dir = FreshDir(name);
        const CliRun r = Cli("codegen '" + SourcePath(std::string("models/mcunet_blocks/") + block + ".graph.json") +
                             "' --target mps2-an386 --strategy " + strategy + " --cpu " + cpu + " --out '" + dir + "'");
        ASSERT_EQ(r.rc, 0) << name << ": " << r.all();
        std::string out;
        EXPECT_EQ(Sh("timeout 120 make -s -C '" + dir + "' check", &out), 0) << name << ": " << out;
        EXPECT_NE(out.find("matches the host executor"), std::string::npos) << name << ": " << out;
      }
    }
  }
}

}  // namespace
}  // namespace sramplan
