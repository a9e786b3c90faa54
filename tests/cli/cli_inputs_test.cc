// The CLI on hostile files and values (issue 12): exit codes and messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::testing {
namespace {

std::string Q(const std::string& s) { return "'" + s + "'"; }


void Expect(const std::string& args, int rc, const std::string& needle) {
  CliRun r = Cli(args);
  EXPECT_EQ(r.rc, rc) << args << "\nstdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE((r.out + r.err).find(needle), std::string::npos) << args << "\nstdout: " << r.out << "\nstderr: " << r.err;
}

std::string Chain() { return Q(WriteTempFile("inputs_chain.graph.json", kChainGraph)); }

TEST(CliInputs, TimeLimitIsValidatedTheSameForEveryVerb) {
  const std::string msg = "is not a time limit: give a number of seconds greater than 0 and at most 1000000";
  std::string csv = Q(WriteTempFile("inputs_place.csv", "id,lower,upper,size\n1,0,2,10\n"));
  for (const char* bad : {"-1", "nan", "inf", "0", "1e9", "soon"}) {
    const std::string v = std::string("--time-limit ") + bad;
    std::string quoted_msg = "'";
    quoted_msg += bad;
    quoted_msg += "' ";
    quoted_msg += msg;
    Expect("plan " + Chain() + " --target sram:64KiB --strategy cosma --budget min " + v, 1, quoted_msg);
    Expect("verify " + Chain() + " --target sram:64KiB --strategy cosma --budget min " + v, 1, msg);
    Expect("place " + csv + " --capacity 64 " + v, 1, msg);
  }
  EXPECT_EQ(Cli("place " + csv + " --capacity 64 --time-limit 0.5").rc, 0);
}

TEST(CliInputs, SizesSayWhatIsWrong) {
  // 1 byte is a real budget below M_min: "does not fit" (2), and the message keeps the byte the user gave.
  Expect("plan " + Chain() + " --target sram:64KiB --strategy belady --budget 1B -q", 2,
         "the budget of 1 bytes (0 after rounding down to the 16-byte alignment) is below M_min");
  Expect("plan " + Chain() + " --target sram:64KiB --strategy belady --budget 1.5B", 1,
         "--budget: '1.5B' is not a whole number of bytes");
  Expect("plan " + Chain() + " --target sram:64KiB --strategy belady --budget 99999999999TiB", 1, "is too large");
  Expect("plan " + Chain() + " --target sram:64KiB --strategy belady --budget 0", 1, "must be a positive size");
  std::string csv = Q(WriteTempFile("inputs_place2.csv", "id,lower,upper,size\n1,0,2,10\n"));
  Expect("place " + csv + " --capacity 1.3B", 1, "--capacity: '1.3B' is not a whole number of bytes");
  Expect("place " + csv + " --capacity 99999999999TiB", 1, "is too large: sramplan handles sizes up to 2^50 bytes");
  Expect("targets --print sram:1.5KiB", 0, "\"capacity\": 1536");  // a whole number of bytes: accepted
  Expect("plan " + Chain() + " --target sram:1.3B", 1, "'1.3B' is not a whole number of bytes");
  Expect("plan " + Chain() + " --target sram:99999999999TiB", 1, "is too large");
  Expect("plan " + Chain() + " --target stm32f411re --segment-bytes -4", 1, "must be a whole number of bytes");
}

TEST(CliInputs, EndlessAndHostileFiles) {
  Expect("inspect /dev/zero", 1, "model file '/dev/zero' is neither JSON nor an ONNX model");
  Expect("place /dev/zero --capacity 1KiB", 1, "'/dev/zero' is not a CSV text file: byte 0 is NUL");
  Expect("check-plan /dev/zero", 1, "plan '/dev/zero' is not a JSON object: it starts with 0x00");
  Expect("plan " + Chain() + " --target /dev/zero", 1, "target '/dev/zero': the file is not a JSON object");
  std::string deep = R"({"format": "sramplan-graph", "ops": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  Expect("inspect " + Q(WriteTempFile("inputs_deep.graph.json", deep)), 1, "more than 512 levels deep");
  Expect("inspect " + Q(WriteTempFile("inputs_big.graph.json", R"({"format": "sramplan-graph", "version": 1e999})")), 1,
         "number overflow parsing '1e999'");
}

TEST(CliInputs, CheckPlanReadsTheSeveralPlansFile) {
  std::string all = WriteTempFile("inputs_all.plan.json", "");
  CliRun r = Cli("plan " + Chain() + " --target stm32f411re --strategy all -q --json " + Q(all));
  ASSERT_EQ(r.rc, 0) << r.err;
  r = Cli("check-plan " + Q(all));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("plans[0] (strategy naive) is valid and fits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(strategy vmcu)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every plan is valid and fits"), std::string::npos) << r.out;

  std::ifstream in(all);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str());
  ASSERT_GE(j["plans"].size(), 3u);
  // Plan 1 no longer fits (exit 2); plan 2 is invalid (exit 3): the worst wins, each is named.
  for (auto& l : j["plans"][1]["levels"]) l["capacity"] = 1;
  j["plans"][1]["metrics"]["fits"] = false;
  auto& buffers = j["plans"][2]["buffers"];
  for (auto& b : buffers) b["offset"] = 0;
  std::string broken = WriteTempFile("inputs_broken_all.plan.json", j.dump(1));
  r = Cli("check-plan " + Q(broken));
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("plans[1] (strategy " + j["plans"][1]["strategy"].get<std::string>() +
                       ") is valid but DOES NOT FIT"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plans[2] (strategy " + j["plans"][2]["strategy"].get<std::string>() + ") is INVALID"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("at least one plan is INVALID"), std::string::npos) << r.out;

  // A bad field names the plan and the field.
  j["plans"][2]["buffers"][0]["first_step"] = int64_t{1} << 53;
  Expect("check-plan " + Q(WriteTempFile("inputs_field.plan.json", j.dump())), 1,
         "plans[2].buffers[0].first_step: must be an integer in [0, 2^31), got 9007199254740992");
}

}  // namespace
}  // namespace sramplan::testing
