// Issue 17: a target whose CPU lacks the DSP extension (Cortex-M0/M0+/M3) gets the portable C
// kernels, and the plan says so in a note; codegen builds its firmware for that CPU (Cortex-M3: the
// portable loops, QEMU mps2-an385) or, for a CPU the firmware flow cannot run, refuses naming the
// fix. A target's "cpu" must be a known CPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "target/target.h"
#include "test_util.h"

namespace sramplan {
namespace {

using testing::Cli;
using testing::SourcePath;
using testing::WriteTempFile;

const char* kS1 = "models/mcunet_blocks/S1.graph.json";

bool HasPortableNote(const plan::Plan& p) {
  for (const auto& n : p.notes)
    if (n.find("kernels: portable C") != std::string::npos && n.find("no DSP extension") != std::string::npos)
      return true;
  return false;
}

TEST(CpuKernels, PresetsDeclareTheirCpu) {
  EXPECT_EQ(target::LoadTarget("stm32f411re")->cpu, "cortex-m4");
  EXPECT_EQ(target::LoadTarget("mps2-an386")->cpu, "cortex-m4");  // inherits the F411RE's
  EXPECT_EQ(target::LoadTarget("stm32f767zi")->cpu, "cortex-m7");
  EXPECT_TRUE(target::CpuHasDsp("cortex-m4"));
  EXPECT_TRUE(target::CpuHasDsp("cortex-m7"));
  for (const char* c : {"cortex-m0", "cortex-m0plus", "cortex-m3"}) EXPECT_FALSE(target::CpuHasDsp(c)) << c;
}

TEST(CpuKernels, PlanForACpuWithoutDspSaysPortableKernels) {
  const std::string m3 = WriteTempFile("cpu_m3.json", R"({"name": "m3-board", "inherit": "stm32f405rg", "cpu": "cortex-m3"})");
  const std::string m0 = WriteTempFile("cpu_m0.json", R"({"name": "m0-board", "inherit": "stm32f405rg", "cpu": "cortex-m0"})");
  auto g = testing::LoadNativeGraph([] {
    std::ifstream in(SourcePath(kS1));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }());
  for (const char* s : {"vmcu", "tflm", "tinyengine"}) {
    EXPECT_TRUE(HasPortableNote(testing::PlanInt8(g, s, m3))) << s;
    EXPECT_TRUE(HasPortableNote(testing::PlanInt8(g, s, m0))) << s;
    EXPECT_FALSE(HasPortableNote(testing::PlanInt8(g, s, "stm32f405rg"))) << s;  // Cortex-M4: SIMD
    EXPECT_FALSE(HasPortableNote(testing::PlanInt8(g, s, "sram:256KiB"))) << s;  // no CPU declared
  }
  // In plan.json too.
  const std::string out = testing::FreshDir("cpu_plan") + "/plan.json";
  const auto r = Cli("plan '" + SourcePath(kS1) + "' --target '" + m3 + "' --strategy vmcu --json '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.all();
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("kernels: portable C: the target's CPU cortex-m3 has no DSP extension"), std::string::npos);
}

TEST(CpuKernels, CodegenFollowsTheTargetsCpu) {
  const std::string m3 = WriteTempFile("cpu_m3b.json", R"({"name": "m3-board", "inherit": "stm32f405rg", "cpu": "cortex-m3"})");
  const std::string dir = testing::FreshDir("cpu_fw_m3");
  auto r = Cli("codegen '" + SourcePath(kS1) + "' --target '" + m3 + "' --strategy vmcu --out '" + dir + "'");
  ASSERT_EQ(r.rc, 0) << r.all();
  std::ifstream mc(dir + "/model.c"), mk(dir + "/Makefile");
  std::stringstream c, m;
  c << mc.rdbuf();
  m << mk.rdbuf();
  EXPECT_NE(c.str().find("int8 kernels: portable C"), std::string::npos);
  EXPECT_NE(m.str().find("CPU ?= cortex-m3"), std::string::npos);
  EXPECT_NE(m.str().find("mps2-an385"), std::string::npos);
  std::filesystem::remove_all(dir);

  const std::string m0 = WriteTempFile("cpu_m0b.json", R"({"name": "m0-board", "inherit": "stm32f405rg", "cpu": "cortex-m0"})");
  r = Cli("codegen '" + SourcePath(kS1) + "' --target '" + m0 + "' --strategy vmcu --out '" +
          testing::FreshDir("cpu_fw_m0") + "'");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("has cpu cortex-m0"), std::string::npos) << r.all();
  EXPECT_NE(r.err.find("--cpu cortex-m3"), std::string::npos) << r.all();
}

TEST(CpuKernels, UnknownCpuIsRefusedNamingTheChoices) {
  auto t = target::ParseTarget(R"({"name": "x", "cpu": "cortex-m9", "levels": [{"name": "sram", "capacity": "64KiB"}]})",
                               "x", ".");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("cpu: unknown CPU 'cortex-m9'"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("cortex-m3"), std::string::npos);
  const auto r = Cli("plan '" + SourcePath(kS1) + "' --target '" +
                     WriteTempFile("cpu_bad.json", R"({"name": "b", "inherit": "stm32f405rg", "cpu": 3})") + "'");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("cpu"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace sramplan
