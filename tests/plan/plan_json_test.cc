// Reading plan files (issue 12): exact typed fields with their path in every message, and the
// several-plans file that `plan --strategy all --json` writes.
#include "plan/plan_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "driver/strategy.h"
#include "import/import.h"
#include "test_graphs.h"

namespace sramplan::plan {
namespace {

using nlohmann::json;

Plan MakePlan(const std::string& strategy) {
  auto g = import::ImportNativeJson(testing::kBottleneckGraph, "test", {});
  EXPECT_TRUE(g.ok());
  auto t = target::LoadTarget("stm32f411re");
  auto p = driver::RunStrategy(*g, *t, strategy, {});
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

// The several-plans file of three strategies, as JSON to mutate.
json ThreePlans() {
  return json::parse(PlansToJson({MakePlan("naive"), MakePlan("tflm"), MakePlan("inplace")}));
}

std::string ErrorOf(const json& j) {
  auto r = PlansFromJson(j.dump());
  EXPECT_FALSE(r.ok()) << j.dump().substr(0, 200);
  return r.ok() ? "" : r.status().message();
}

TEST(PlanJsonRead, SeveralPlansRoundTrip) {
  std::vector<Plan> plans = {MakePlan("naive"), MakePlan("tflm"), MakePlan("inplace")};
  std::string text = PlansToJson(plans);
  bool multi = false;
  auto back = PlansFromJson(text, &multi);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(multi);
  ASSERT_EQ(back->size(), 3u);
  for (size_t i = 0; i < plans.size(); ++i) EXPECT_EQ(PlanToJson((*back)[i]), PlanToJson(plans[i]));
  EXPECT_EQ(PlansToJson(*back), text);
  // One plan reads as a list of one.
  auto one = PlansFromJson(PlanToJson(plans[1]), &multi);
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(multi);
  EXPECT_EQ((*one)[0].strategy, "tflm");
  // PlanFromJson wants exactly one plan.
  auto single = PlanFromJson(text);
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.status().message().find("holds 3 plans"), std::string::npos) << single.status().message();
}

TEST(PlanJsonRead, StepIndicesAndSizesAreExact) {
  json j = ThreePlans();
  j["plans"][2]["buffers"][1]["first_step"] = int64_t{1} << 53;
  EXPECT_EQ(ErrorOf(j), "plans[2].buffers[1].first_step: must be an integer in [0, 2^31), got 9007199254740992");

  j = ThreePlans();
  j["plans"][0]["buffers"][0]["bytes"] = INT64_MAX;
  EXPECT_EQ(ErrorOf(j), "plans[0].buffers[0].bytes: must be an integer in [0, 2^50], got 9223372036854775807");

  j = ThreePlans();
  j["plans"][1]["buffers"][0]["offset"] = 1e20;
  EXPECT_EQ(ErrorOf(j), "plans[1].buffers[0].offset: must be an integer in [0, 2^50], got 1e+20");

  j = ThreePlans();
  j["plans"][1]["buffers"][0]["last_step"] = 2.0;  // a whole double is still not an integer
  EXPECT_EQ(ErrorOf(j), "plans[1].buffers[0].last_step: must be an integer in [0, 2^31), got 2.0");

  j = ThreePlans();
  j["plans"][0]["steps"][1]["index"] = -1;
  EXPECT_EQ(ErrorOf(j), "plans[0].steps[1].index: must be an integer in [0, 2^31), got -1");

  j = ThreePlans();
  j["plans"][0]["levels"][0]["capacity"] = uint64_t{18446744073709551615u};
  EXPECT_EQ(ErrorOf(j), "plans[0].levels[0].capacity: must be an integer in [0, 2^50], got 18446744073709551615");

  j = ThreePlans();
  j["plans"][0]["steps"][0]["ops"][0]["attrs"] = json::object({{"pads", json::array({0, INT64_MIN, 0, 0})}});
  EXPECT_EQ(ErrorOf(j), "plans[0].steps[0].ops[0].attrs.pads[1]: must be an integer in [-2^50, 2^50], got "
                        "-9223372036854775808");

  j = ThreePlans();
  j["plans"][2]["metrics"]["peak_bytes"]["sram"] = "lots";
  EXPECT_EQ(ErrorOf(j), "plans[2].metrics.peak_bytes.sram: must be an integer in [0, 2^50], got \"lots\"");
}

TEST(PlanJsonRead, MissingAndMistypedFieldsNameTheirPath) {
  json j = ThreePlans();
  j["plans"][1].erase("model");
  EXPECT_EQ(ErrorOf(j), "plans[1].model: missing (required: a string)");

  j = ThreePlans();
  j["plans"][1]["tensors"][0]["consumers"] = json::array({"a", 3});
  EXPECT_EQ(ErrorOf(j), "plans[1].tensors[0].consumers[1]: must be a string, got 3");

  j = ThreePlans();
  j["plans"][0]["buffers"] = json::object();
  EXPECT_EQ(ErrorOf(j), "plans[0].buffers: must be a list, got an object {}");

  j = ThreePlans();
  j["plans"] = json::array();
  EXPECT_EQ(ErrorOf(j), "plans: holds no plans");

  j = ThreePlans();
  j["schema_version"] = 3;
  EXPECT_EQ(ErrorOf(j), "schema_version: version 3 is not supported (this sramplan reads 1 and 2)");

  // A single plan: paths start at the root.
  json one = json::parse(PlanToJson(MakePlan("tflm")));
  one["transfers"] = json::array(
      {json{{"step", 0}, {"kind", "load"}, {"tensor", "x"}, {"bytes", -5}, {"from", "a"}, {"to", "b"}}});
  EXPECT_EQ(ErrorOf(one), "transfers[0].bytes: must be an integer in [0, 2^50], got -5");
}

// The plan as a version-1 file wrote it: no step kinds, step parameters as op attrs (segment_bytes
// on every op of a segment step, row_cache = [1] on the first op of a fused group).
json AsVersion1(const Plan& p) {
  json j = json::parse(PlanToJson(p));
  j["schema_version"] = 1;
  for (json& st : j["steps"]) {
    const json params = st["params"];
    st.erase("kind");
    st.erase("params");
    for (size_t k = 0; k < st["ops"].size(); ++k) {
      json& op = st["ops"][k];
      if (params.contains("segment_bytes")) op["attrs"]["segment_bytes"] = {params["segment_bytes"]};
      if (params.value("row_cache", false) && k == 0) op["attrs"]["row_cache"] = {1};
    }
  }
  return j;
}

TEST(PlanJsonRead, Version1PlansGetTheirStepKinds) {
  for (const char* strategy : {"vmcu", "tinyengine", "tflm"}) {
    Plan p = MakePlan(strategy);
    p.steps.front().row_cache = p.steps.front().kind == StepKind::kFusedBottleneck;  // cover row_cache too
    const json v1 = AsVersion1(p);
    auto back = PlanFromJson(v1.dump());
    ASSERT_TRUE(back.ok()) << strategy << ": " << back.status().message();
    EXPECT_EQ(back->schema_version, kSchemaVersion);
    ASSERT_EQ(back->steps.size(), p.steps.size());
    for (size_t s = 0; s < p.steps.size(); ++s) {
      EXPECT_EQ(back->steps[s].kind, p.steps[s].kind) << strategy << " step " << s;
      EXPECT_EQ(back->steps[s].workspace, p.steps[s].workspace) << strategy << " step " << s;
      EXPECT_EQ(back->steps[s].segment_bytes, p.steps[s].segment_bytes) << strategy << " step " << s;
      EXPECT_EQ(back->steps[s].row_cache, p.steps[s].row_cache) << strategy << " step " << s;
      for (const StepOp& op : back->steps[s].ops) {
        EXPECT_FALSE(op.attrs.count("segment_bytes")) << op.name;
        EXPECT_FALSE(op.attrs.count("row_cache")) << op.name;
      }
    }
    EXPECT_EQ(PlanToJson(*back), PlanToJson(p)) << strategy;
    // Converting again changes nothing.
    Plan again = *back;
    InferStepKinds(&again);
    EXPECT_EQ(PlanToJson(again), PlanToJson(p)) << strategy;
  }
  // What the conversion found: a fused bottleneck with its workspace, and an in-place depthwise
  // convolution with its scratch.
  const Plan vmcu = MakePlan("vmcu");
  EXPECT_EQ(vmcu.steps[0].kind, StepKind::kFusedBottleneck);
  EXPECT_EQ(vmcu.steps[0].workspace, "pw.workspace");
  bool in_place = false;
  for (const Step& st : MakePlan("tinyengine").steps)
    in_place = in_place || (st.kind == StepKind::kInPlaceDepthwise && st.workspace == "dw.scratch");
  EXPECT_TRUE(in_place);
}

TEST(PlanJsonRead, Version2RoundTripKeepsKindsAndParams) {
  Plan p = MakePlan("vmcu");
  p.steps[0].segment_bytes = 16;
  p.steps[0].row_cache = true;
  const std::string text = PlanToJson(p);
  const json j = json::parse(text);
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["steps"][0]["kind"].get<std::string>(), "fused-bottleneck");
  EXPECT_EQ(j["steps"][0]["params"], (json{{"workspace", "pw.workspace"}, {"segment_bytes", 16}, {"row_cache", true}}));
  auto back = PlanFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(PlanToJson(*back), text);
  // Reserved kinds are read and written (the verifier and the lowering refuse them).
  Plan m = p;
  m.steps[0].kind = StepKind::kModule;
  auto module = PlanFromJson(PlanToJson(m));
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(module->steps[0].kind, StepKind::kModule);
  // Unknown kinds and mistyped parameters name their path.
  json bad = j;
  bad["steps"][0]["kind"] = "tiled";
  EXPECT_EQ(ErrorOf(bad), "steps[0].kind: unknown step kind 'tiled' (op, inplace-depthwise, segment, "
                          "fused-bottleneck, fused-tiled, module)");
  bad = j;
  bad["steps"][0]["params"]["row_cache"] = 1;
  EXPECT_NE(ErrorOf(bad).find("steps[0].params.row_cache"), std::string::npos) << ErrorOf(bad);
  for (StepKind k : {StepKind::kOp, StepKind::kInPlaceDepthwise, StepKind::kSegment, StepKind::kFusedBottleneck,
                     StepKind::kFusedTiled, StepKind::kModule}) {
    StepKind parsed = StepKind::kOp;
    EXPECT_TRUE(ParseStepKind(StepKindName(k), &parsed));
    EXPECT_EQ(parsed, k);
  }
}

TEST(PlanJsonRead, HostileTextIsAnError) {
  EXPECT_FALSE(PlansFromJson("").ok());
  EXPECT_FALSE(PlansFromJson("[1, 2, 3]").ok());
  auto big = PlansFromJson(R"({"schema_version": 1e999})");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("not valid JSON at line 1"), std::string::npos) << big.status().message();
  std::string deep = R"({"schema_version": 1, "model": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto d = PlansFromJson(deep);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("more than 512 levels deep"), std::string::npos) << d.status().message();
  // Invalid UTF-8 in a name is written with replacement characters, not thrown.
  Plan p = MakePlan("tflm");
  p.model = "m\xff.json";
  EXPECT_NO_THROW(PlanToJson(p));
  EXPECT_TRUE(PlansFromJson(PlanToJson(p)).ok());
}

}  // namespace
}  // namespace sramplan::plan
