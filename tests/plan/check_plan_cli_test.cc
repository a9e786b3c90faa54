// Regression tests through the CLI for the plans `check-plan` used to accept (issue 12, item 3):
// each broken plan must be refused with a message that names the field. Values that do not fit the
// plan format's integer ranges may be refused by the plan reader (exit 1, with the field path)
// before the verifier sees them; everything in range that is wrong is refused by the verifier (exit
// 3).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::testing {
namespace {

using nlohmann::json;

std::string Q(const std::string& s) { return "'" + s + "'"; }

// Plans `model` with the CLI and returns the plan JSON.
json PlanJson(const std::string& name, const std::string& model, const std::string& flags) {
  const std::string path = WriteTempFile(name + ".plan.json", "");
  const CliRun r = Cli("plan " + Q(model) + " " + flags + " -q --no-map --json " + Q(path));
  EXPECT_EQ(r.rc, 0) << r.all();
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

json ChainPlan() {
  static const json k = PlanJson("chain", WriteTempFile("chain.graph.json", kChainGraph),
                                 "--target stm32f411re --strategy tflm");
  return k;
}
json VmcuPlan() {  // B1: one fused step (3x3 stride-2 stem, depthwise, projection) overlapping its
                   // input
  static const json k = PlanJson("b1", SourcePath("models/mcunet_blocks/B1.graph.json"),
                                 "--target stm32f411re --strategy vmcu");
  return k;
}
json BeladyPlan() {  // loads, a spill, reloads and a store
  static const json k =
      PlanJson("bottleneck", WriteTempFile("bottleneck.graph.json", kBottleneckGraph),
               "--target sram:64KiB --strategy belady --budget min");
  return k;
}

json& BufferOf(json& plan, const std::string& tensor) {
  for (auto& b : plan["buffers"])
    if (b["tensor"] == tensor) return b;
  ADD_FAILURE() << "no buffer of " << tensor;
  return plan["buffers"][0];
}

CliRun Check(const std::string& name, const json& plan) {
  return Cli("check-plan " + Q(WriteTempFile(name + ".json", plan.dump(1))));
}

// The verifier refuses it: exit 3, the message names the field.
void ExpectInvalid(const std::string& name, const json& plan, const std::string& needle) {
  const CliRun r = Check(name, plan);
  EXPECT_EQ(r.rc, 3) << name << "\n" << r.all();
  EXPECT_NE(r.all().find(needle), std::string::npos) << name << ": no '" << needle << "' in\n"
                                                     << r.all();
}
// Refused by the reader (exit 1) or the verifier (exit 3), naming the field either way.
void ExpectRefused(const std::string& name, const json& plan, const std::string& needle) {
  const CliRun r = Check(name, plan);
  EXPECT_TRUE(r.rc == 1 || r.rc == 3) << name << ": exit " << r.rc << "\n" << r.all();
  EXPECT_NE(r.all().find(needle), std::string::npos) << name << ": no '" << needle << "' in\n"
                                                     << r.all();
}

TEST(CheckPlanCli, BasePlansAreValid) {
  for (const auto& [name, plan] : {std::pair<const char*, json>{"chain", ChainPlan()},
                                   {"b1", VmcuPlan()},
                                   {"belady", BeladyPlan()}}) {
    const CliRun r = Check(std::string(name) + ".ok", plan);
    EXPECT_EQ(r.rc, 0) << name << "\n" << r.all();
  }
}

TEST(CheckPlanCli, FirstStepAfterLastStep) {
  json p = ChainPlan();
  json& x = BufferOf(p, "x");  // the graph input
  x["first_step"] = 2;
  x["last_step"] = 1;
  ExpectInvalid("x_range", p, "buffers[0] 'x': first_step 2 is after last_step 1");
  p = BeladyPlan();
  BufferOf(p, "x")["first_step"] = 3;
  ExpectInvalid("belady_x_range", p, "first_step 3 is after last_step 0");
}

TEST(CheckPlanCli, StepIndicesOutOfRange) {
  const int64_t k2p53 = int64_t{1} << 53;
  json p = ChainPlan();
  BufferOf(p, "b")["last_step"] = k2p53;
  ExpectRefused("last_step_2p53", p, "last_step");
  p = ChainPlan();
  p["steps"][1]["index"] = k2p53;
  ExpectRefused("index_2p53", p, "index");
  p = ChainPlan();
  BufferOf(p, "b")["last_step"] = std::numeric_limits<int32_t>::max();
  ExpectInvalid("last_step_int_max", p, "last_step 2147483647 is outside [0, 2]");
  p = BeladyPlan();
  p["transfers"][0]["step"] = std::numeric_limits<int32_t>::max();
  ExpectInvalid("transfer_step", p,
                "transfers[0] (load of 'x' at step 2147483647): step 2147483647 is outside [0, 3]");
}

TEST(CheckPlanCli, BytesAndOffsetOfInt64Max) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (const char* field : {"bytes", "offset"}) {
    json p = ChainPlan();
    BufferOf(p, "a")[field] = max;
    ExpectRefused(std::string("a_") + field, p, field);
  }
  json p = BeladyPlan();
  p["transfers"][1]["bytes"] = max;
  ExpectRefused("transfer_bytes", p, "bytes");
  // In the reader's range but past the verifier's: still refused, not "valid and fits".
  p = ChainPlan();
  BufferOf(p, "a")["offset"] = (int64_t{1} << 50) - 1;
  const CliRun r = Check("a_offset_2p50", p);
  EXPECT_NE(r.rc, 0) << r.all();
}

TEST(CheckPlanCli, SegmentStepGeometry) {
  // pads of INT64_MIN on the fused step's depthwise convolution.
  json p = VmcuPlan();
  p["steps"][0]["ops"][1]["attrs"]["pads"] = {std::numeric_limits<int64_t>::min(), 0, 0, 0};
  ExpectRefused("pads_min", p, "pads");
  // A kernel of 2^31 x 2^31: refused at once (the overlap re-check used to run for hours).
  p = VmcuPlan();
  p["steps"][0]["ops"][1]["attrs"]["kernel_shape"] = {int64_t{1} << 31, int64_t{1} << 31};
  ExpectInvalid("kernel_2p31", p,
                "steps[0].ops[1] 'b1_dw': kernel_shape[0] 2147483648 is outside [1, 1048576]");
  // Geometry in range that does not give the output shape.
  p = VmcuPlan();
  p["steps"][0]["ops"][0]["attrs"]["strides"] = {1, 1};
  ExpectInvalid("stem_stride", p,
                "steps[0].ops[0] 'b1_stem': output shape [1, 88, 88, 16] is not what input");
  p = VmcuPlan();
  p["steps"][0]["ops"][1]["attrs"]["segment_bytes"] = {0};
  ExpectInvalid("segment_bytes", p, "segment_bytes[0] 0 is outside");
  // A tensor whose bytes disagree with its shape.
  p = VmcuPlan();
  for (auto& t : p["tensors"])
    if (t["name"] == "b1_in") t["shape"] = {1, 176, 176, 4};
  ExpectInvalid("shape", p,
                "'b1_in': shape [1, 176, 176, 4] of int8 needs 123904 bytes, but bytes is 92928");
}

}  // namespace
}  // namespace sramplan::testing
