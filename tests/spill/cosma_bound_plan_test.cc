// The bound over all orders in COSMA plans (plan.json metrics noncompulsory_lower_bound_bytes and
// noncompulsory_gap_pct) end to end through the CLI, and cosma-dc plans executed in their arena and DRAM
// (bit-exact against the naive run, with the planned off-chip bytes).
// Named ZooVerify so the asan preset skips it like the other zoo runs (CMakePresets.json).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace sramplan::testing {
namespace {

nlohmann::json PlanJson(const std::string& model, const std::string& strategy, const std::string& budget) {
  const std::string path = WriteTempFile(strategy + "_plan.json", "");
  CliRun r = Cli("plan '" + SourcePath(model) + "' --target exynos-npu --budget " + budget + " --strategy " + strategy +
                 " --schedule minpeak --time-limit 4 --json '" + path + "' -q");
  EXPECT_EQ(r.rc, 0) << r.all();
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

TEST(ZooVerify, CosmaPlansReportTheBoundOverAllOrders) {
  const std::string model = "models/nas/darts-cifar10.graph.json";
  int64_t bound = -1;
  for (const char* s : {"cosma-fixed", "cosma-dc", "cosma"}) {
    SCOPED_TRACE(s);
    nlohmann::json j = PlanJson(model, s, "min");
    ASSERT_FALSE(j.is_discarded());
    const auto& m = j["metrics"];
    ASSERT_TRUE(m.contains("noncompulsory_lower_bound_bytes")) << m.dump();
    const int64_t bytes = m["noncompulsory_read_bytes"].get<int64_t>() + m["noncompulsory_write_bytes"].get<int64_t>();
    const int64_t lb = m["noncompulsory_lower_bound_bytes"].get<int64_t>();
    EXPECT_GT(bytes, 0);
    // Darts at M_min: some op is forced to drop tensors in every order (the bound is positive), and it
    // is the same bound whichever strategy computed it (it does not depend on the order).
    EXPECT_GT(lb, 0);
    EXPECT_LE(lb, bytes);
    // Unless a time limit cut the bound's own search (its detail in the notes says so; the machine's
    // load decides), it is the same bound.
    bool bound_cut = false;
    for (const auto& n : j["notes"]) {
      const std::string note = n.get<std::string>();
      bound_cut = bound_cut || note.find("stopped their search") != std::string::npos ||
                  note.find("time limit, bound") != std::string::npos;
    }
    if (bound >= 0 && !bound_cut) {
      EXPECT_EQ(lb, bound);
    }
    if (!bound_cut) bound = lb;
    EXPECT_NEAR(m["noncompulsory_gap_pct"].get<double>(), 100.0 * static_cast<double>(bytes - lb) / bytes, 1e-9);
  }
  // Baselines carry no bound.
  nlohmann::json b = PlanJson(model, "belady", "min");
  EXPECT_FALSE(b["metrics"].contains("noncompulsory_lower_bound_bytes"));
}

TEST(ZooVerify, CosmaDcPlansExecuteBitExact) {
  CliRun r = Cli("verify '" + SourcePath("models/mcunet_blocks/mcunet-320kb-imagenet.graph.json") +
                 "' --target exynos-npu --budget min --strategy cosma-dc --time-limit 10");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("verify cosma-dc: OK"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace sramplan::testing
