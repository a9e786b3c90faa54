// --time-limit is one budget for the whole plan (issue 19): RunStrategy gives each pass what remains
// of it, so a strategy whose pipeline runs several searches (min-peak order, then exact placement)
// cannot take a multiple of the limit. Checked on the limits the passes see, which never grow, never
// exceed the budget and stay positive; without --time-limit every pass keeps the defaults. (How long
// the searches really take under a limit is measured by bench/time_limit.py, not here: tests do not
// depend on timing.)
#include <gtest/gtest.h>

#include <vector>

#include "driver/context.h"
#include "driver/strategy.h"
#include "import/import.h"
#include "target/target.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

struct Seen {
  std::string pass;
  double search_s, ilp_s;
};

std::vector<Seen> Limits(const std::string& model, const std::string& strategy, const PlanOptions& o,
                         const std::string& target = "sram:2MiB") {
  const std::string path = testing::SourcePath(model);
  auto g = import::ImportModel(path, {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  auto t = target::LoadTarget(target);
  EXPECT_TRUE(t.ok());
  std::vector<Seen> seen;
  auto p = RunStrategy(*g, *t, strategy, o, [&](const std::string& pass, const PlanningContext& ctx) {
    seen.push_back({pass, ctx.options.search_time_limit_s, ctx.options.time_limit_s});
    return Status::Ok();
  });
  EXPECT_TRUE(p.ok()) << p.status().message();
  return seen;
}

TEST(TimeBudget, PassesGetWhatRemainsOfTheLimit) {
  PlanOptions o;
  o.schedule = "minpeak";
  o.search_time_limit_s = o.time_limit_s = 100;
  for (const char* strategy : {"hmcos", "greedy"}) {
    SCOPED_TRACE(strategy);
    if (std::string(strategy) == "greedy") o.budget = "mpmf";
    const std::vector<Seen> seen = Limits("models/mcunet_blocks/S3.graph.json", strategy, o);
    ASSERT_GE(seen.size(), 5u);
    double last = 100;
    for (const Seen& s : seen) {
      EXPECT_GE(s.search_s, kMinStageSeconds) << s.pass;
      EXPECT_LE(s.search_s, last) << s.pass << ": a later pass got more time than an earlier one";
      EXPECT_EQ(s.search_s, s.ilp_s) << s.pass;
      last = s.search_s;
    }
  }
}

TEST(TimeBudget, AnExhaustedBudgetLeavesTheMinimumAndStillPlans) {
  PlanOptions o;
  o.schedule = "minpeak";
  o.search_time_limit_s = o.time_limit_s = 1e-9;  // used up before the first pass
  const std::vector<Seen> seen = Limits("models/mcunet_blocks/S3.graph.json", "hmcos", o);
  ASSERT_FALSE(seen.empty());
  for (const Seen& s : seen) EXPECT_EQ(s.search_s, kMinStageSeconds) << s.pass;
  EXPECT_EQ(seen.back().pass, "verify");  // the plan was verified
}

TEST(TimeBudget, WithoutALimitPassesKeepTheDefaults) {
  PlanOptions o;
  const std::vector<Seen> seen = Limits("models/mcunet_blocks/S3.graph.json", "optimal", o);
  ASSERT_FALSE(seen.empty());
  for (const Seen& s : seen) {
    EXPECT_EQ(s.search_s, 0) << s.pass;
    EXPECT_EQ(s.ilp_s, 60) << s.pass;
  }
}

}  // namespace
}  // namespace sramplan::driver
