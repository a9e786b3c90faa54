// `sramplan plan/verify` on .tflite files: tflm_arena_bytes, --tflite-out, bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "import/tflite_model.h"
#include "import/tflite_test.h"
#include "import/tflite_writer.h"
#include "test_util.h"

namespace sramplan::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(TfliteCli, PlanPrintsTflmArenaAndExportsAnOfflinePlan) {
  const std::string model = WriteTempFile("cli_small.tflite", tfl::WriteModel(SmallTfliteModel()));
  CliRun r = Cli("plan " + model + " --target sram:64KiB --strategy tflm");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("tflm_arena_bytes: planned head 384 B"), std::string::npos) << r.out;
  // The persistent tail (tests/driver/tflm_tail_test.cc has it by hand) and the arena_size to pass.
  EXPECT_NE(r.out.find("arena_size 1,324 B on a 32-bit Cortex-M = planned head 384 B + persistent tail 940 B"),
            std::string::npos)
      << r.out;

  const std::string out = WriteTempFile("cli_small_planned.tflite", "");
  r = Cli("plan " + model + " --target sram:64KiB --strategy optimal --tflite-out " + out + " -q");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("read back and checked"), std::string::npos) << r.out;
  const std::string original = ReadAll(model), written = ReadAll(out);
  auto m = tfl::ParseModel(written, out);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto offsets = tfl::OfflineOffsets(written, *m);
  ASSERT_TRUE(offsets.ok());
  ASSERT_EQ(offsets->size(), 9u);
  // The five activations have offsets; the four constants are left to TFLM (-1).
  int planned = 0;
  for (int32_t o : *offsets) planned += o >= 0;
  EXPECT_EQ(planned, 5);
  for (int t : {1, 2, 4, 7}) EXPECT_EQ((*offsets)[t], -1) << t;
  EXPECT_TRUE(tfl::CheckOfflinePlanFile(original, written, *offsets).ok());
  // The planned file plans like the original.
  r = Cli("plan " + out + " --target sram:64KiB --strategy optimal -q");
  EXPECT_EQ(r.rc, 0) << r.all();
}

TEST(TfliteCli, ExportRefusesPlansTflmCannotRun) {
  const std::string model = WriteTempFile("cli_small2.tflite", tfl::WriteModel(SmallTfliteModel()));
  const std::string out = WriteTempFile("cli_refused.tflite", "");
  CliRun r = Cli("plan " + model + " --target sram:64KiB --strategy inplace --tflite-out " + out + " -q");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("--tflite-out"), std::string::npos) << r.err;
  r = Cli("plan " + model + " --target sram:64KiB --strategy all --tflite-out " + out + " -q");
  EXPECT_EQ(r.rc, 1) << r.all();
  r = Cli("plan " + SourcePath("models/mcunet_blocks/B1.graph.json") + " --target sram:1MiB --tflite-out " + out);
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("needs a .tflite model"), std::string::npos) << r.err;
}

TEST(TfliteCli, VerifyRunsTheModelsWeights) {
  const std::string model = WriteTempFile("cli_small3.tflite", tfl::WriteModel(SmallTfliteModel()));
  CliRun r = Cli("verify " + model + " --target sram:64KiB --strategy all");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("verify tflm: OK"), std::string::npos) << r.out;
  // The file's own int8 parameters ran, and the CLI says so.
  EXPECT_NE(r.err.find("int8: the model's own quantisation"), std::string::npos) << r.err;
  // A tensor without quantisation: sramplan's calibration runs instead, with the reason.
  auto no_quant = SmallTfliteModel();
  no_quant.subgraph.tensors[6].quant = {};
  const std::string fallback = WriteTempFile("cli_noquant.tflite", tfl::WriteModel(no_quant));
  r = Cli("verify " + fallback + " --target sram:64KiB --strategy tflm");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.err.find("not the file's quantisation (tensor 'add/out' has no int8 quantisation"), std::string::npos)
      << r.err;
}

TEST(TfliteCli, CorruptFilesExitOne) {
  std::string bytes = tfl::WriteModel(SmallTfliteModel());
  const std::string cut = WriteTempFile("cli_cut.tflite", bytes.substr(0, bytes.size() / 2));
  CliRun r = Cli("plan " + cut + " --target sram:64KiB");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("cli_cut.tflite"), std::string::npos) << r.err;
  auto model = SmallTfliteModel();
  model.subgraph.operators[0].inputs[1] = 1000;
  const std::string bad = WriteTempFile("cli_bad_index.tflite", tfl::WriteModel(model));
  r = Cli("inspect " + bad);
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("tensor 1000"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sramplan::testing
