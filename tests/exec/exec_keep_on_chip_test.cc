// optimus-cosma (keep-on-chip): fused groups' output maps kept in the global buffer between groups.
// End to end on bundled models through the CLI: the plan keeps maps on chip, moves fewer DRAM bytes
// than optimus, the verifier accepts it and rejects it once a kept map overlaps a group's workspace
// or is claimed on chip without a buffer there, and `verify` runs it strip by strip bit for bit
// with the DRAM bytes the plan predicts.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "plan/plan_json.h"
#include "plan/verifier.h"
#include "test_util.h"

namespace sramplan {
namespace {

std::string AccelTarget(int kb) {
  return testing::WriteTempFile("keep-accel-" + std::to_string(kb) + ".json",
                                R"({"inherit": "optimus-accel", "levels": [{"name": "buffer", "capacity": ")" +
                                    std::to_string(kb) + R"(KiB"}]})");
}

// Plans `model` with `strategy` (int8, batch 1) and reads the plan back.
plan::Plan PlanOf(const std::string& model, int kb, const std::string& strategy) {
  const std::string out = testing::WriteTempFile("keep-" + strategy + "-" + std::to_string(kb) + ".json", "");
  const testing::CliRun r = testing::Cli("plan " + testing::SourcePath("models/onnx/" + model + ".onnx") +
                                         " --target " + AccelTarget(kb) + " --strategy " + strategy + " -q --json " + out);
  EXPECT_EQ(r.rc, 0) << r.all();
  std::ifstream f(out);
  std::stringstream text;
  text << f.rdbuf();
  auto plans = plan::PlansFromJson(text.str());
  EXPECT_TRUE(plans.ok() && plans->size() == 1);
  return plans.ok() && !plans->empty() ? plans->front() : plan::Plan{};
}

int64_t Dram(const plan::Plan& p) { return p.metrics.dram_read_bytes + p.metrics.dram_write_bytes; }

// The activations the plan holds in the global buffer (the kept maps).
std::vector<size_t> KeptBuffers(const plan::Plan& p) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    for (const plan::Tensor& t : p.tensors)
      if (t.name == p.buffers[i].tensor && t.kind == "activation" && p.buffers[i].level == "buffer") kept.push_back(i);
  return kept;
}

TEST(KeepOnChip, KeepsMapsAndVerifies) {
  const plan::Plan fused = PlanOf("squeezenet1_0", 1024, "optimus");
  const plan::Plan kept = PlanOf("squeezenet1_0", 1024, "optimus-cosma");
  ASSERT_FALSE(KeptBuffers(kept).empty());
  EXPECT_LT(Dram(kept), Dram(fused));
  EXPECT_TRUE(plan::VerifyPlan(kept).ok()) << plan::VerifyPlan(kept).Summary();
  // Every kept map lies above the workspaces of the groups it spans and inside the buffer.
  for (size_t i : KeptBuffers(kept)) {
    const plan::Buffer& b = kept.buffers[i];
    EXPECT_LE(b.offset + b.bytes, 1024 << 10);
    for (const plan::Buffer& w : kept.buffers)
      if (w.level == "buffer" && w.tensor.find(".tiles") != std::string::npos && w.first_step >= b.first_step &&
          w.first_step <= b.last_step) {
        EXPECT_LE(w.offset + w.bytes, b.offset) << b.tensor << " over " << w.tensor;
      }
  }
}

TEST(KeepOnChip, VerifierRejectsOverlapAndMissingBuffer) {
  const plan::Plan kept = PlanOf("squeezenet1_0", 1024, "optimus-cosma");
  const std::vector<size_t> maps = KeptBuffers(kept);
  ASSERT_FALSE(maps.empty());
  plan::Plan overlap = kept;
  overlap.buffers[maps[0]].offset = 0;  // over the producing group's workspace
  EXPECT_FALSE(plan::VerifyPlan(overlap).ok());
  plan::Plan dram = kept;  // back in DRAM, but the groups still claim the saved bytes
  dram.buffers[maps[0]].level = "dram";
  dram.buffers[maps[0]].offset = int64_t{1} << 30;
  const plan::VerifyResult v = plan::VerifyPlan(dram);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.Summary().find("moves"), std::string::npos) << v.Summary();
}

// Never more DRAM bytes than optimus (its scheme without kept maps is a candidate).
TEST(KeepOnChip, NeverWorseThanOptimus) {
  for (const char* model : {"mobilenet_v2", "resnet18"})
    for (int kb : {128, 256}) EXPECT_LE(Dram(PlanOf(model, kb, "optimus-cosma")), Dram(PlanOf(model, kb, "optimus")));
}

// The executor runs the kept maps in the global buffer: bit-identical, DRAM bytes as planned.
TEST(KeepOnChip, RunsBitExactWithPlannedBytes) {
  for (const auto& [model, kb] : {std::pair<const char*, int>{"squeezenet1_0", 1024}, {"alexnet", 256}}) {
    const testing::CliRun r = testing::Cli("verify " + testing::SourcePath(std::string("models/onnx/") + model + ".onnx") +
                                           " --target " + AccelTarget(kb) + " --strategy optimus-cosma");
    EXPECT_EQ(r.rc, 0) << r.all();
    EXPECT_NE(r.all().find("outputs bit-identical"), std::string::npos) << r.all();
    EXPECT_NE(r.all().find("as planned"), std::string::npos) << r.all();
  }
}

}  // namespace
}  // namespace sramplan

namespace sramplan {
namespace {

// ResNet-18 at 512 KiB (int8, batch 1): efficient-s's groups with their kept maps (all of its
// candidates fit: no ILP, so no time limit decides) move fewer bytes than optimus's; the plan is
// re-assembled with them and still runs bit for bit with the planned bytes. (MobileNet-V2 was the
// case until ISOA inside a group became what the executor runs and halo caching came: optimus's
// own groups with kept maps win there now.)
TEST(KeepOnChip, OtherGroupingReassembledAndRunsExact) {
  const plan::Plan fused = PlanOf("resnet18", 512, "optimus");
  const plan::Plan kept = PlanOf("resnet18", 512, "optimus-cosma");
  EXPECT_LT(Dram(kept), Dram(fused));
  bool other = false;
  for (const std::string& n : kept.notes) other = other || n.find("against efficient-s's") != std::string::npos;
  EXPECT_TRUE(other);
  EXPECT_NE(kept.steps.size(), fused.steps.size());
  EXPECT_TRUE(plan::VerifyPlan(kept).ok()) << plan::VerifyPlan(kept).Summary();
  const testing::CliRun r = testing::Cli("verify " + testing::SourcePath("models/onnx/resnet18.onnx") +
                                         " --target " + AccelTarget(512) + " --strategy optimus-cosma");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.all().find("outputs bit-identical"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("as planned"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace sramplan
