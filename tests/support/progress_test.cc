// support/progress.h: the verdict wording, and progress lines from the CLI's long searches
// (SRAMPLAN_PROGRESS=1 forces them, as a terminal would; without it, in ctest, stderr is no terminal
// and nothing is printed; -q silences them).
#include "support/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>

#include "test_util.h"

namespace sramplan {
namespace {

using testing::Cli;

TEST(Progress, ProofText) {
  EXPECT_EQ(ProofText(100, 100), "proved optimal");
  EXPECT_EQ(ProofText(100, 120), "proved optimal");  // a bound at or above the best closes the gap
  EXPECT_EQ(ProofText(1000, 900), "not proved: best 1000 B, bound 900 B, gap 100 B (10.00%)");
  EXPECT_EQ(ProofText(2.5, 2, ""), "not proved: best 2.5, bound 2, gap 0.5 (20.00%)");
}

TEST(Progress, SilentWhenStderrIsNoTerminal) {
  // ctest's stderr is a pipe or file: a Progress made now prints nothing, however long it runs.
  if (ProgressEnabled()) GTEST_SKIP() << "stderr is a terminal or SRAMPLAN_PROGRESS is set";
  Progress p("test", 1);
  EXPECT_FALSE(p.enabled());
  p.Update(10, 5, 1);
  p.Finish(10, 5);
}

// Runs the CLI with SRAMPLAN_PROGRESS=1 in its environment (as if stderr were a terminal).
testing::CliRun ForcedCli(const std::string& args) {
  setenv("SRAMPLAN_PROGRESS", "1", 1);
  testing::CliRun r = Cli(args);
  unsetenv("SRAMPLAN_PROGRESS");
  return r;
}

// The exact blocking search of the blocking paper's Conv2 runs far beyond 1.5 s (its proof takes
// minutes; Conv1's can finish in about 1 s on an idle machine, which made this test timing-bound):
// it prints progress with the best found so far, stops at the time limit and returns its best string, saying "NOT
// proved"; the final progress line says so too. Without a terminal nothing is printed; -q silences
// even the forced progress.
TEST(ProgressCli, BlockingSearchShowsProgressAndHonoursTheTimeLimit) {
  const std::string args = "block --target diannao --table4 Conv2 --time-limit 1.5";
  auto r = Cli(args);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(r.err.find("[blocking search"), std::string::npos) << "progress on a stderr that is no terminal";
  EXPECT_NE(r.out.find("NOT proved: time limit"), std::string::npos) << r.out;

  r = ForcedCli(args);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\[blocking search of Conv2\] 1\.[0-9] s of 1\.5 s: best [0-9.e+]+ pJ, [0-9]+ nodes)")))
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\[blocking search of Conv2\] done in [0-9.]+ s: best [0-9.e+]+ pJ; not proved \(no bound known\))")))
      << r.err;
  EXPECT_NE(r.out.find("NOT proved: time limit"), std::string::npos) << r.out;

  r = ForcedCli(args + " -q");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(r.err.find("[blocking search"), std::string::npos) << r.err;
}

// Exact placement of a 3000-buffer instance (a generated chain with long-lived outputs, like the
// placement tests' large instances): progress lines carry best, bound and gap; the result line says
// "not proved" with the gap when the limit stops the search.
TEST(ProgressCli, ExactPlacementShowsBestBoundAndGap) {
  std::string csv = "id,lower,upper,size\n";
  uint64_t x = 8;
  auto next = [&]() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    const int last = next() % 8 == 0 ? n - 1 : std::min(n - 1, i + 1 + static_cast<int>(next() % 8));
    csv += std::to_string(i) + "," + std::to_string(i) + "," + std::to_string(last + 1) + "," +
           std::to_string(16 * (1 + next() % 128) + next() % 16) + "\n";
  }
  const std::string path = testing::WriteTempFile("progress_place.csv", csv);
  auto r = ForcedCli("place '" + path + "' --capacity 1TiB --time-limit 2");
  ASSERT_EQ(r.rc, 0) << r.all();
  if (r.out.find("proved optimal") != std::string::npos)
    GTEST_SKIP() << "the search proved this instance optimal within the limit here: " << r.out;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\[exact placement\] [0-9.]+ s of 2 s: best [0-9]+ B, bound [0-9]+ B, gap [0-9.]+%, [0-9]+ nodes)")))
      << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(not proved: best [0-9]+ B, bound [0-9]+ B, gap [0-9]+ B \([0-9.]+%\) \(search stopped at the limit\))")))
      << r.out;
}

// Optimus's fusion search on AmoebaNet-A (ImageNet) runs for about 0.8 s within its state limits
// (measured on the shared 2-core machine; over 11 min before the down-set count skipped the full
// DP, so it no longer runs long enough for a progress line, which starts after 1 s; the other
// searches above test those); --time-limit 0.02 cuts it: a note saying the time limit cut the
// search, and a plan the verifier accepted (the strategy verifies every plan it returns).
TEST(ProgressCli, FusionSearchHonoursTheTimeLimit) {
  auto r = ForcedCli("plan '" + testing::SourcePath("models/nas/amoebanet-a-imagenet.graph.json") +
                     "' --target optimus-accel --strategy optimus --time-limit 0.02 --no-map");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("the time limit cut the search"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not proved optimal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: FITS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sramplan
