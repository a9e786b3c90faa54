// The HTML report rendered by a real browser: Debian's headless Chromium loads the report of a bundled
// model under every strategy of the table (--dump-dom, the DOM after the page's script ran) and the
// test checks what the browser built: one buffer rect per plan buffer with the plan's numbers, no
// two rendered rects overlapping that the plan says are disjoint, addresses and steps laid out in
// order, the page's script run to the end, and no console message. Skipped (with the reason) only
// where /usr/bin/chromium is not installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "driver/strategy.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "report/html.h"
#include "target/target.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kModel[] = "models/mcunet_blocks/mcunet-320kb-imagenet.graph.json";
constexpr char kTarget[] = "exynos-npu";

struct Rendered {
  int rc = -1;
  std::string dom;  // stdout of --dump-dom
  std::string log;  // stderr (with --enable-logging=stderr: console messages as "CONSOLE")
};

Rendered RenderInChromium(const std::string& html) {
  Rendered r;
  const std::string log = html + ".log";
  const std::string cmd = std::string("timeout 120 ") + kChromium +
                          " --headless --no-sandbox --disable-gpu --no-first-run --enable-logging=stderr --v=0 "
                          "--window-size=1400,1000 --dump-dom 'file://" + html + "' 2>'" + log + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.dom.append(buf, n);
  r.rc = pclose(pipe);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.log = ss.str();
  return r;
}

// The attributes of every <rect ...> whose class starts with "buf" (buf or buf-wrap).
std::vector<std::map<std::string, std::string>> BufferRects(const std::string& dom) {
  std::vector<std::map<std::string, std::string>> out;
  static const std::regex tag("<rect ([^>]*)>");
  static const std::regex attr("([a-zA-Z-]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string body = (*it)[1];
    std::map<std::string, std::string> a;
    for (auto jt = std::sregex_iterator(body.begin(), body.end(), attr); jt != std::sregex_iterator(); ++jt)
      a[(*jt)[1]] = (*jt)[2];
    const std::string cls = a["class"];
    if (cls.rfind("buf ", 0) == 0 || cls.rfind("buf-wrap ", 0) == 0) out.push_back(std::move(a));
  }
  return out;
}

struct Box {
  double x = 0, y = 0, w = 0, h = 0;
};

bool ParseBox(const std::string& s, Box* b) {
  std::istringstream in(s);
  return static_cast<bool>(in >> b->x >> b->y >> b->w >> b->h);
}

// Plans `strategy` on the bundled model; budget strategies get the 'avg' budget (between M_min and
// the min-peak footprint: spills happen), or 256 KiB where the strategy takes only a byte size.
StatusOr<plan::Plan> PlanFor(const ir::Graph& g, const target::Target& t, const std::string& strategy) {
  driver::PlanOptions o;
  o.time_limit_s = 5;
  if (driver::FindStrategy(strategy)->uses_budget) o.budget = "avg";
  StatusOr<plan::Plan> p = driver::RunStrategy(g, t, strategy, o);
  if (!p.ok() && o.budget == "avg" && p.status().message().find("byte size") != std::string::npos) {
    o.budget = "256KiB";
    p = driver::RunStrategy(g, t, strategy, o);
  }
  return p;
}

// What the browser built for the report of `p`, against the plan; an empty list when it is right.
std::vector<std::string> CheckRendered(const plan::Plan& p, const Rendered& r) {
  std::vector<std::string> bad;
  auto fail = [&](const std::string& what) {
    if (bad.size() < 40) bad.push_back(what);
  };
  if (r.rc != 0) return {"chromium failed (status " + std::to_string(r.rc) + "):\n" + r.log.substr(0, 4000)};
  if (r.dom.find("</html>") == std::string::npos) return {"no DOM dumped"};
  if (r.log.find("CONSOLE") != std::string::npos) fail("console messages:\n" + r.log);
  const auto rects = BufferRects(r.dom);
  // The page's script ran to the end and saw every rect.
  std::smatch ready;
  if (!std::regex_search(r.dom, ready, std::regex("<body data-ready=\"([0-9]+)\"")))
    fail("the page's script did not finish");
  else if (std::stoul(ready[1]) != rects.size())
    fail("the script saw " + std::string(ready[1]) + " rects, the DOM has " + std::to_string(rects.size()));
  // One "buf" rect per plan buffer, carrying the plan's numbers; wrapped pieces only for wrapping buffers.
  std::vector<int> seen(p.buffers.size(), 0);
  struct Piece {
    size_t index;
    int64_t lo, hi;
    Box box;
  };
  std::map<std::string, std::vector<Piece>> by_level;
  for (const auto& a : rects) {
    const size_t i = std::stoul(a.at("data-index"));
    if (i >= p.buffers.size()) {
      fail("rect of buffer " + std::to_string(i) + " the plan does not have");
      continue;
    }
    const plan::Buffer& b = p.buffers[i];
    const bool wrap = a.at("class").rfind("buf-wrap", 0) == 0;
    if (!wrap) ++seen[i];
    else if (!plan::Wraps(p, b)) fail(b.tensor + " drawn wrapped but does not wrap its pool");
    if (a.at("data-buffer") != b.tensor || a.at("data-level") != b.level ||
        std::stoll(a.at("data-offset")) != b.offset || std::stoll(a.at("data-bytes")) != b.bytes ||
        std::stoi(a.at("data-first")) != b.first_step || std::stoi(a.at("data-last")) != b.last_step)
      fail("rect " + std::to_string(i) + " (" + a.at("data-buffer") + ") does not carry its buffer's numbers");
    Box box;
    if (!a.count("data-bbox") || !ParseBox(a.at("data-bbox"), &box)) {
      fail(b.tensor + ": no rendered box");
      continue;
    }
    by_level[b.level].push_back({i, std::stoll(a.at("data-lo")), std::stoll(a.at("data-hi")), box});
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1) fail(p.buffers[i].tensor + " has " + std::to_string(seen[i]) + " buffer rects, not 1");
  // Declared overlaps (both directions): the only buffers that may share bytes while both are live.
  std::set<std::pair<std::string, std::string>> allowed;
  for (const auto& b : p.buffers)
    for (const auto& o : b.overlaps) {
      allowed.insert({b.tensor, o.tensor});
      allowed.insert({o.tensor, b.tensor});
    }
  constexpr double kEps = 0.05;  // pixels: adjacent rects share an edge
  int compared = 0;
  for (auto& [level, pieces] : by_level) {
    for (size_t u = 0; u < pieces.size(); ++u) {
      for (size_t v = u + 1; v < pieces.size(); ++v) {
        const Piece &a = pieces[u], &c = pieces[v];
        const plan::Buffer &ba = p.buffers[a.index], &bc = p.buffers[c.index];
        const std::string pair = "'" + ba.tensor + "' and '" + bc.tensor + "'";
        // Rendered order follows the plan: lower addresses higher up, earlier steps further left.
        if ((a.lo < c.lo && a.box.y > c.box.y + kEps) || (c.lo < a.lo && c.box.y > a.box.y + kEps))
          fail(level + ": " + pair + " are drawn out of address order");
        if ((ba.first_step < bc.first_step && a.box.x > c.box.x + kEps) ||
            (bc.first_step < ba.first_step && c.box.x > a.box.x + kEps))
          fail(level + ": " + pair + " are drawn out of step order");
        if (a.index == c.index || a.hi <= a.lo || c.hi <= c.lo) continue;
        const bool live_together = ba.first_step <= bc.last_step && bc.first_step <= ba.last_step;
        if (!live_together || allowed.count({ba.tensor, bc.tensor})) continue;
        ++compared;
        const double ox = std::min(a.box.x + a.box.w, c.box.x + c.box.w) - std::max(a.box.x, c.box.x);
        const double oy = std::min(a.box.y + a.box.h, c.box.y + c.box.h) - std::max(a.box.y, c.box.y);
        if (ox > kEps && oy > kEps)
          fail(level + ": " + pair + " are disjoint in the plan but their rendered rects overlap by " +
               std::to_string(ox) + " x " + std::to_string(oy) + " px");
      }
    }
  }
  if (compared == 0) fail("no pair of buffers live together was compared");
  return bad;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

#define SKIP_WITHOUT_CHROMIUM()                                                                              \
  if (!std::filesystem::exists(kChromium))                                                                   \
  GTEST_SKIP() << kChromium << " is not installed (scripts/install-deps.sh installs Debian's chromium); the " \
               << "report is not rendered in a browser here"

ir::Graph LoadInt8(StatusOr<ir::Graph> g) {
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return ir::Graph();
  ir::ApplyDtype(*g, ir::DataType::kInt8);  // as the CLI does for --dtype int8
  return std::move(g).value();
}

class HtmlInBrowser : public ::testing::TestWithParam<std::string> {};

TEST_P(HtmlInBrowser, RendersEveryBufferWithoutOverlapsOrConsoleErrors) {
  SKIP_WITHOUT_CHROMIUM();
  const std::string strategy = GetParam();
  ir::Graph g = LoadInt8(import::ImportModel(testing::SourcePath(kModel), {}));
  // The pool strategies need a target with memory pools: one chart per pool (DTCM, SRAM1).
  const driver::StrategySpec* spec = driver::FindStrategy(strategy);
  ASSERT_NE(spec, nullptr);
  auto t = target::LoadTarget(spec->family == driver::Family::kPools ? "stm32f767zi" : kTarget);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto p = PlanFor(g, *t, strategy);
  ASSERT_TRUE(p.ok()) << strategy << ": " << p.status().message();
  ASSERT_TRUE(plan::VerifyPlan(*p).ok()) << plan::VerifyPlan(*p).Summary(10);
  const std::string path = testing::WriteTempFile("report_" + strategy + ".html", report::HtmlReport({*p}));
  const auto problems = CheckRendered(*p, RenderInChromium(path));
  EXPECT_TRUE(problems.empty()) << Join(problems);
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".log");
}

// vmcu lays a tight chain of convolutions out modulo a circular pool: wrapped buffers are drawn as
// two pieces, each checked like any other rect.
TEST(HtmlInBrowserPool, WrappedBuffersOfACircularPool) {
  SKIP_WITHOUT_CHROMIUM();
  ir::Graph g = LoadInt8(import::ImportNativeJson(testing::ConvChainGraph(8), "conv_chain", {}));
  plan::Plan p = testing::PlanInt8(g, "vmcu");
  ASSERT_EQ(p.pools.size(), 1u);
  int wrapped = 0;
  for (const auto& b : p.buffers) wrapped += plan::Wraps(p, b);
  ASSERT_GT(wrapped, 0);
  const std::string path = testing::WriteTempFile("report_pool.html", report::HtmlReport({p}));
  const Rendered r = RenderInChromium(path);
  const auto problems = CheckRendered(p, r);
  EXPECT_TRUE(problems.empty()) << Join(problems);
  EXPECT_EQ(BufferRects(r.dom).size(), p.buffers.size() + wrapped);
}

// The checks can fail: a plan with one buffer moved onto another that is live at the same time
// renders overlapping rects, and a page that logs to the console is caught.
TEST(HtmlInBrowserChecks, CatchOverlapsAndConsoleMessages) {
  SKIP_WITHOUT_CHROMIUM();
  ir::Graph g = LoadInt8(import::ImportModel(testing::SourcePath(kModel), {}));
  plan::Plan p = testing::PlanInt8(g, "tflm", kTarget);
  ASSERT_FALSE(p.buffers.empty());
  bool moved = false;
  for (size_t i = 0; i < p.buffers.size() && !moved; ++i)
    for (size_t j = 0; j < p.buffers.size() && !moved; ++j) {
      auto &a = p.buffers[i], &b = p.buffers[j];
      if (i == j || a.level != b.level || a.bytes == 0 || b.bytes == 0 || a.first_step > b.last_step ||
          b.first_step > a.last_step || a.offset == b.offset || !a.overlaps.empty() || !b.overlaps.empty())
        continue;
      b.offset = a.offset;
      moved = true;
    }
  ASSERT_TRUE(moved);
  ASSERT_FALSE(plan::VerifyPlan(p).ok());
  const std::string path = testing::WriteTempFile("report_bad.html", report::HtmlReport({p}));
  const std::string problems = Join(CheckRendered(p, RenderInChromium(path)));
  EXPECT_NE(problems.find("rendered rects overlap"), std::string::npos) << problems;

  const std::string noisy = testing::WriteTempFile(
      "noisy.html", "<!DOCTYPE html><html><body><script>console.error('broken page');</script></body></html>");
  const Rendered r = RenderInChromium(noisy);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.log.find("CONSOLE"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("broken page"), std::string::npos) << r.log;
}

std::vector<std::string> AllStrategyNames() {
  std::vector<std::string> names;
  for (const auto& s : driver::Strategies()) names.push_back(s.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, HtmlInBrowser, ::testing::ValuesIn(AllStrategyNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace sramplan
