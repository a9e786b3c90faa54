// The pass registry, the strategy table and the pipeline runner: every row resolves to registered
// passes, the runner calls them in order on one context, and the CLI's strategies / --dump-after /
// --dump-all read the same table.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "driver/context.h"
#include "driver/pass.h"
#include "driver/strategy.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

ir::Graph Load(const char* text) { return testing::LoadNativeGraph(text); }

TEST(Pipeline, EveryRowResolvesToRegisteredPasses) {
  std::set<std::string> names;
  for (const StrategySpec& s : Strategies()) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate strategy " << s.name;
    ASSERT_FALSE(s.passes.empty()) << s.name;
    EXPECT_EQ(s.passes.back(), "verify") << s.name << ": every pipeline ends with the verifier";
    int assembles = 0;
    for (const std::string& p : s.passes) {
      auto pass = MakePass(p);
      ASSERT_TRUE(pass.ok()) << s.name << ": " << pass.status().message();
      EXPECT_EQ((*pass)->name(), p);
      assembles += p.rfind("assemble", 0) == 0;
    }
    EXPECT_EQ(assembles, 1) << s.name;
    EXPECT_EQ(s.needs_dram, s.family == Family::kBudget || s.family == Family::kFused) << s.name;
  }
  // The strategies of the issues before this one, all in the table.
  for (const char* n : {"naive", "linear", "tflm", "inplace", "optimal", "tinyengine", "hmcos", "vmcu", "belady",
                        "greedy", "cosma-fixed", "cosma-dc", "cosma"})
    EXPECT_TRUE(IsStrategy(n)) << n;
}

TEST(Pipeline, AllGroupsAsBefore) {
  EXPECT_EQ(StrategyNames(AllGroup::kTensor), (std::vector<std::string>{"naive", "linear", "tflm", "inplace", "optimal",
                                                                         "tinyengine", "hmcos", "vmcu"}));
  EXPECT_EQ(StrategyNames(AllGroup::kBudget), (std::vector<std::string>{"belady", "greedy", "cosma-fixed", "cosma"}));
  EXPECT_EQ(StrategiesOf(Family::kTensor).size(), 7u);
}

TEST(Pipeline, BadPassesAndNamesAreClearErrors) {
  auto p = MakePass("frobnicate");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("unknown pass 'frobnicate'"), std::string::npos);
  EXPECT_NE(p.status().message().find("place"), std::string::npos) << "lists the passes";
  p = MakePass("place:best");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("naive, linear, tflm, optimal"), std::string::npos) << p.status().message();
  p = MakePass("liveness:x");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("takes no argument"), std::string::npos);
  Status s = UnknownStrategy("magic", true);
  for (const StrategySpec& row : Strategies()) EXPECT_NE(s.message().find(row.name), std::string::npos) << row.name;
  EXPECT_NE(s.message().find("or all"), std::string::npos);
  auto g = Load(testing::kChainGraph);
  auto t = target::LoadTarget("stm32f411re");
  ASSERT_TRUE(t.ok());
  auto r = RunStrategy(g, *t, "magic", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(Pipeline, RunnerCallsPassesInOrderOnOneContext) {
  auto g = Load(testing::kBottleneckGraph);
  auto t = target::LoadTarget("stm32f411re");
  ASSERT_TRUE(t.ok());
  for (const char* name : {"inplace", "vmcu", "hmcos"}) {
    std::vector<std::string> seen;
    auto p = RunStrategy(g, *t, name, {}, [&](const std::string& pass, const PlanningContext& ctx) {
      seen.push_back(pass);
      if (pass.rfind("schedule", 0) == 0) { EXPECT_EQ(ctx.order.size(), static_cast<size_t>(g.num_ops())); }
      if (pass == "liveness") { EXPECT_FALSE(ctx.liveness.buffers.empty()); }
      if (pass.rfind("assemble", 0) == 0) { EXPECT_TRUE(ctx.assembled); }
      if (pass == "verify") { EXPECT_TRUE(plan::VerifyPlan(ctx.plan).ok()); }
      auto j = nlohmann::json::parse(DumpContext(ctx, pass));
      EXPECT_EQ(j["after_pass"], pass);
      EXPECT_EQ(j["strategy"], name);
      return Status::Ok();
    });
    ASSERT_TRUE(p.ok()) << name << ": " << p.status().message();
    EXPECT_EQ(seen, FindStrategy(name)->passes) << name;
    EXPECT_EQ(p->strategy, name);
  }
  // A hook's error stops the pipeline there.
  int calls = 0;
  auto p = RunStrategy(g, *t, "tflm", {}, [&](const std::string&, const PlanningContext&) {
    ++calls;
    return InvalidArgument("stop");
  });
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(calls, 1);
}

TEST(Pipeline, CliListsTheTableAndDumpsPasses) {
  using testing::Cli;
  auto r = Cli("strategies --passes");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const StrategySpec& s : Strategies()) {
    EXPECT_NE(r.out.find("  " + s.name), std::string::npos) << s.name;
    std::string pipeline;
    for (const auto& p : s.passes) pipeline += (pipeline.empty() ? "" : " -> ") + p;
    EXPECT_NE(r.out.find(pipeline), std::string::npos) << s.name;
  }
  for (const PassInfo& p : Passes()) EXPECT_NE(r.out.find("  " + p.name + ": "), std::string::npos) << p.name;
  const std::string model = testing::WriteTempFile("bneck.graph.json", testing::kBottleneckGraph);
  r = Cli("plan '" + model + "' --target stm32f411re --strategy vmcu --dump-after step-liveness -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["after_pass"], "step-liveness");
  EXPECT_TRUE(j["vmcu"]["steps"].is_array());
  EXPECT_FALSE(j.contains("plan")) << "not assembled yet";
  r = Cli("plan '" + model + "' --target stm32f411re --strategy tflm --dump-after place -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["after_pass"], "place:tflm");
  EXPECT_TRUE(j["requests"][0].contains("offset"));
  r = Cli("plan '" + model + "' --target stm32f411re --strategy tflm --dump-after fuse");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not a pass of strategy 'tflm'"), std::string::npos) << r.err;
  const std::string dir = testing::WriteTempFile("dumpdir.placeholder", "") + ".d";
  r = Cli("plan '" + model + "' --target stm32f411re --strategy inplace --dump-all '" + dir + "' -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  size_t files = 0, graphs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("graph.", 0) == 0) {  // the graph after import (no --canonicalize: no second stage)
      ++graphs;
      EXPECT_EQ(f, "graph.00.import.graph.json");
      continue;
    }
    ++files;
    EXPECT_EQ(f.rfind("inplace.", 0), 0u) << e.path();
  }
  EXPECT_EQ(graphs, 1u);
  EXPECT_EQ(files, FindStrategy("inplace")->passes.size());
  EXPECT_TRUE(std::filesystem::exists(dir + "/inplace.04.place_tflm.json"));
}

}  // namespace
}  // namespace sramplan::driver
