// Firmware from .tflite models runs the file's own int8 quantisation (its scales, zero points,
// weights and biases as stored), like `verify`, and prints the host executor's checksum in QEMU
// (mps2-an386, Cortex-M4): a small model written with the project's writer, and the reference
// models of ../shared/reference/tflite when they are there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "import/tflite_test.h"
#include "test_util.h"

namespace sramplan {
namespace {

using testing::Cli;
using testing::CliRun;
using testing::FreshDir;
using testing::HaveArmTools;

// Codegen with the file's quantisation, then `make check` (the firmware's checksum = the host's).
void CodegenAndCheck(const std::string& model, const std::string& strategy, const std::string& extra,
                     const std::string& name, bool run) {
  const std::string dir = FreshDir("tflite_fw_" + name);
  const CliRun r = Cli("codegen '" + model + "' --target mps2-an386 --strategy " + strategy + " " + extra +
                       " --out '" + dir + "'");
  ASSERT_EQ(r.rc, 0) << name << ": " << r.all();
  EXPECT_NE(r.all().find("int8: the model's own quantisation"), std::string::npos) << name << ": " << r.all();
  if (!run) return;
  const CliRun out = testing::Sh("timeout 300 make -s -C '" + dir + "' check");
  EXPECT_EQ(out.rc, 0) << name << ": " << out.all();
  EXPECT_NE(out.all().find("matches the host executor"), std::string::npos) << name << ": " << out.all();
}

TEST(TfliteFirmware, SmallModelRunsItsOwnQuantisation) {
  const std::string model = testing::WriteTempFile(
      "fw_small.tflite", import::tflite::WriteModel(testing::SmallTfliteModel()));
  std::string missing;
  const bool run = HaveArmTools(&missing);
  for (const char* s : {"tflm", "vmcu"}) CodegenAndCheck(model, s, "", std::string("small_") + s, run);
  if (!run) GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh); codegen only";
}

TEST(TfliteFirmware, ReferenceModelsRunTheirOwnQuantisation) {
  const std::string dir = testing::TfliteReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference .tflite models not found (../shared/reference/tflite)";
  std::string missing;
  const bool run = HaveArmTools(&missing);
  for (const char* m : {"person_detect", "ds_cnn_kws", "mobilenet_v2_035_96"})
    CodegenAndCheck(dir + "/" + m + ".tflite", "vmcu", "--fold-pad", std::string(m) + "_vmcu", run);
  CodegenAndCheck(dir + "/ds_cnn_kws.tflite", "tflm", "", "ds_cnn_kws_tflm", run);
  if (!run) GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh); codegen only";
}

}  // namespace
}  // namespace sramplan
