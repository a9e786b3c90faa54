// The HTML report's text (no browser; tests/report/html_browser_test.cc renders it in Chromium) and
// the CLI's --html on plan, verify and place.
#include "report/html.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "driver/strategy.h"
#include "import/import.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::report {
namespace {

using testing::Cli;
using testing::SourcePath;
using testing::WriteTempFile;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ir::Graph Int8(const std::string& text) {
  ir::Graph g = testing::LoadNativeGraph(text);
  ir::ApplyDtype(g, ir::DataType::kInt8);
  return g;
}

// Nothing is fetched: no URL, no external script, style sheet or image.
void ExpectSelfContained(const std::string& html) {
  for (const char* bad : {"http:", "https:", "src=", "<link", "@import", "url(http"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  EXPECT_EQ(Count(html, "<script>"), 1u);
}

TEST(Html, OneRectPerBufferWithItsNumbersAndTheComparison) {
  ir::Graph g = Int8(testing::kBottleneckGraph);
  std::vector<plan::Plan> plans = {testing::PlanInt8(g, "naive"), testing::PlanInt8(g, "tinyengine"),
                                   testing::PlanInt8(g, "vmcu")};
  const std::string html = HtmlReport(plans);
  ExpectSelfContained(html);
  size_t buffers = 0;
  for (const auto& p : plans) buffers += p.buffers.size();
  EXPECT_EQ(Count(html, "<rect class=\"buf "), buffers);
  // Every buffer's numbers, as data attributes.
  const plan::Buffer& b = plans[1].buffers[0];
  EXPECT_NE(html.find("data-plan=\"1\" data-index=\"0\" data-level=\"" + b.level + "\" data-buffer=\"" + b.tensor +
                      "\" data-offset=\"" + std::to_string(b.offset) + "\" data-bytes=\"" +
                      std::to_string(b.bytes) + "\" data-first=\"" + std::to_string(b.first_step) +
                      "\" data-last=\"" + std::to_string(b.last_step) + "\""),
            std::string::npos);
  // The comparison: savings against naive, one row per plan.
  EXPECT_NE(html.find("savings against naive (" + std::to_string(plans[0].metrics.arena_bytes) + " B)"),
            std::string::npos);
  const int64_t saved = plans[1].metrics.arena_bytes - plans[0].metrics.arena_bytes;
  EXPECT_NE(html.find("<td class=\"l\">tinyengine</td><td class=\"l\">"), std::string::npos);
  EXPECT_LT(saved, 0);
  EXPECT_NE(html.find("<td>" + std::to_string(-saved) + "</td>"), std::string::npos);
  // The peak of each level with the tensors live there, and one RAM bar and one off-chip bar per step.
  EXPECT_GE(Count(html, "class=\"peak-list\""), plans.size());
  size_t steps = 0;
  for (const auto& p : plans) steps += p.steps.size();
  EXPECT_EQ(Count(html, "<rect class=\"bar-ram\""), steps);
  EXPECT_EQ(Count(html, "<rect class=\"bar-offchip\""), steps);
  // vmcu's fused bottleneck and its declared segment overlap are marked.
  EXPECT_NE(html.find("<rect class=\"fused\""), std::string::npos);
  EXPECT_NE(html.find(" ovl\""), std::string::npos);
  EXPECT_EQ(HtmlReport(plans), html);  // deterministic
}

TEST(Html, SpillsAndReloadsAreArrows) {
  ir::Graph g = testing::LoadNativeGraph(ReadAll(SourcePath("models/mcunet_blocks/mcunet-320kb-imagenet.graph.json")));
  ir::ApplyDtype(g, ir::DataType::kInt8);
  driver::PlanOptions o;
  o.budget = "avg";
  auto p = driver::RunStrategy(g, *target::LoadTarget("exynos-npu"), "belady", o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  size_t out = 0, in = 0;
  for (const auto& t : p->transfers) {
    out += t.from == p->arena_level;
    in += t.to == p->arena_level;
  }
  ASSERT_GT(out + in, 0u);
  const std::string html = HtmlReport({*p});
  EXPECT_EQ(Count(html, "<line class=\"spill\""), out);
  EXPECT_EQ(Count(html, "<line class=\"reload\""), in);
  EXPECT_NE(html.find(">off-chip</text>"), std::string::npos);
}

TEST(Html, NamesAreEscaped) {
  plan::Plan p;
  p.model = "m<script>alert(1)</script>";
  p.target = "t&\"x\"";
  p.strategy = "s";
  p.arena_level = "sram";
  p.levels.push_back({"sram", "sram", 100, 10, 10, true});
  p.steps.resize(1);
  p.steps[0].ops.push_back({"op<1>", "Relu", {}, {}, {}});
  p.buffers.push_back({"a<b>&'c'", "sram", 0, 10, 0, 0, {}});
  const std::string html = HtmlReport({p});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("m&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("data-buffer=\"a&lt;b&gt;&amp;&#39;c&#39;\""), std::string::npos);
  EXPECT_NE(html.find("t&amp;&quot;x&quot;"), std::string::npos);
}

TEST(HtmlCli, PlanVerifyAndPlaceWriteTheReport) {
  const std::string model = SourcePath("models/mcunet_blocks/B1.graph.json");
  const std::string plan_html = WriteTempFile("cli_plan.html", "");
  auto r = Cli("plan '" + model + "' --target stm32f767zi --strategy all --html '" + plan_html + "' -q");
  EXPECT_EQ(r.rc, 0) << r.all();
  std::string html = ReadAll(plan_html);
  ExpectSelfContained(html);
  EXPECT_NE(html.find("strategies compared"), std::string::npos);
  EXPECT_EQ(Count(html, "<section class=\"plan\""), driver::StrategyNames(driver::AllGroup::kTensor).size());

  const std::string verify_html = WriteTempFile("cli_verify.html", "");
  r = Cli("verify '" + model + "' --target stm32f767zi --strategy vmcu --html '" + verify_html + "' -q");
  EXPECT_EQ(r.rc, 0) << r.all();
  html = ReadAll(verify_html);
  EXPECT_NE(html.find("verify vmcu: OK"), std::string::npos);
  EXPECT_EQ(Count(html, "<section class=\"plan\""), 1u);

  const std::string csv = WriteTempFile("cli_place.csv", "id,lower,upper,size\n7,0,2,10\n8,1,3,20\n9,2,4,30\n");
  const std::string place_html = WriteTempFile("cli_place.html", "");
  r = Cli("place '" + csv + "' --capacity 64 --html '" + place_html + "' -q");
  EXPECT_EQ(r.rc, 0) << r.all();
  html = ReadAll(place_html);
  EXPECT_EQ(Count(html, "<rect class=\"buf "), 3u);
  EXPECT_NE(html.find("data-buffer=\"id 9\""), std::string::npos);

  // A report that cannot be written is bad input naming the file.
  r = Cli("plan '" + model + "' --target stm32f767zi --html /nonexistent-dir/r.html -q");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cannot write '/nonexistent-dir/r.html'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sramplan::report
