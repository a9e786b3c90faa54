#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "report/report.h"
#include "support/strings.h"

namespace sramplan::report {
namespace {

std::string Esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string Num(double v) { return fmt::format("{:.3f}", v); }

bool OffChip(const plan::Plan& p, const std::string& level) {
  for (const auto& l : p.levels)
    if (l.name == level) return l.kind == "dram" || l.kind == "flash";
  return false;
}

// Geometry of one address-by-step chart: step s spans [X(s), X(s + 1)), byte a sits at Y(a).
struct Chart {
  double left = 84, top = 28, height = 300, lane = 0;
  double sx = 1, sy = 1;
  int steps = 1;
  int64_t extent = 1;
  double X(double s) const { return left + s * sx; }
  double Y(double a) const { return top + a * sy; }
  double Width() const { return steps * sx; }
};

Chart MakeChart(int steps, int64_t extent, bool lane) {
  Chart c;
  c.steps = std::max(steps, 1);
  c.extent = std::max<int64_t>(extent, 1);
  c.sx = std::clamp(960.0 / c.steps, 3.0, 48.0);
  c.sy = c.height / static_cast<double>(c.extent);
  c.lane = lane ? 44 : 0;
  return c;
}

std::string StepName(const plan::Plan& p, int s) {
  if (s < 0 || s >= static_cast<int>(p.steps.size()) || p.steps[s].ops.empty()) return "";
  const auto& ops = p.steps[s].ops;
  std::string n = ops[0].name;
  if (ops.size() > 1) n += fmt::format(" + {} more", ops.size() - 1);
  return n;
}

int ArgMax(const std::vector<int64_t>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

const char* kCss = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}tr.best td{background:#eaf7ea}
.chart{overflow-x:auto}svg{font:11px sans-serif}
rect.bg{fill:#fafafa;stroke:#999}rect.peak-outline{fill:none;stroke:#e00;stroke-width:2;pointer-events:none}rect.fused{fill:#fff4c2}rect.peak{fill:#ffd9d9}
rect.buf,rect.buf-wrap{stroke:#223;stroke-width:.4;fill-opacity:.85}
.k-activation{fill:#6ea8e0}.k-input{fill:#79c57a}.k-output{fill:#f0a35e}.k-constant{fill:#b9b9b9}
.k-scratch{fill:#b48ed8}.k-other{fill:#d8c36e}
rect.ovl{stroke:#c00;stroke-dasharray:3 2;stroke-width:1}rect.buf-wrap{stroke:#c0c;stroke-dasharray:2 2}
rect.hl{stroke:#000;stroke-width:2;fill-opacity:1}
line.pool{stroke:#c0c;stroke-dasharray:6 3}line.cap{stroke:#c00}line.tile{stroke:#b08900;stroke-dasharray:1 2}
rect.lane{fill:#eee;stroke:#999}line.spill{stroke:#d33;marker-end:url(#arrow-red)}
line.reload{stroke:#283;marker-end:url(#arrow-green)}
rect.bar-ram{fill:#6ea8e0}rect.bar-offchip{fill:#e07a6e}
#tip{position:absolute;display:none;background:#ffe;border:1px solid #888;padding:3px 6px;pointer-events:none}
.legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px}
)";

// Hover: a tooltip and every piece of the buffer highlighted. Then each buffer rect records the box
// the browser laid it out in (data-bbox: x y width height in page pixels), so a test can check the
// rendered geometry, and the body records that the script ran to the end (data-ready).
const char* kJs = R"(
(function () {
  var tip = document.getElementById('tip');
  var rects = document.querySelectorAll('rect.buf, rect.buf-wrap');
  function same(t) {
    return document.querySelectorAll('rect[data-plan="' + t.getAttribute('data-plan') + '"][data-index="' +
                                     t.getAttribute('data-index') + '"]');
  }
  function enter(e) {
    var t = e.target;
    tip.textContent = t.getAttribute('data-buffer') + ': ' + t.getAttribute('data-bytes') + ' B at offset ' +
        t.getAttribute('data-offset') + ' in ' + t.getAttribute('data-level') + ', steps ' +
        t.getAttribute('data-first') + '..' + t.getAttribute('data-last');
    tip.style.display = 'block';
    tip.style.left = (e.pageX + 12) + 'px';
    tip.style.top = (e.pageY + 12) + 'px';
    same(t).forEach(function (r) { r.classList.add('hl'); });
  }
  function leave(e) {
    tip.style.display = 'none';
    same(e.target).forEach(function (r) { r.classList.remove('hl'); });
  }
  for (var i = 0; i < rects.length; i++) {
    var r = rects[i], b = r.getBoundingClientRect();
    r.setAttribute('data-bbox', [b.left + window.scrollX, b.top + window.scrollY, b.width, b.height]
                                    .map(function (v) { return v.toFixed(3); }).join(' '));
    r.addEventListener('mouseenter', enter);
    r.addEventListener('mouseleave', leave);
  }
  document.body.setAttribute('data-ready', String(rects.length));
})();
)";

const char* kDefs =
    "<defs><marker id=\"arrow-red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" "
    "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#d33\"/></marker>"
    "<marker id=\"arrow-green\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" "
    "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#283\"/></marker></defs>";

std::string KindClass(const plan::Plan& p, const std::string& tensor,
                      const std::map<std::string, const plan::Tensor*>& tensors) {
  auto it = tensors.find(tensor);
  const std::string kind = it == tensors.end() ? "" : it->second->kind;
  for (const char* k : {"activation", "input", "output", "constant", "scratch"})
    if (kind == k) return std::string("k-") + k;
  (void)p;
  return "k-other";
}

// Backgrounds: fused-group columns (with their tiles as dotted strips) and the peak column.
std::string StepBackgrounds(const plan::Plan& p, const Chart& c, int peak) {
  std::string s;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const plan::Step& st = p.steps[i];
    const bool fused = st.ops.size() > 1 || st.kind == plan::StepKind::kFusedTiled ||
                       st.kind == plan::StepKind::kFusedBottleneck || st.kind == plan::StepKind::kModule;
    if (!fused) continue;
    std::string ops;
    for (const auto& o : st.ops) ops += (ops.empty() ? "" : ", ") + o.name;
    std::string what = fmt::format("step {}: {} ({} ops: {})", i, plan::StepKindName(st.kind), st.ops.size(), ops);
    if (st.kind == plan::StepKind::kFusedTiled)
      what += fmt::format("; {} tiles of {}x{} rows x cols, working set {} B", st.tiled.tiles, st.tiled.tile_rows,
                          st.tiled.tile_cols, st.tiled.buffer_bytes);
    s += fmt::format("<rect class=\"fused\" data-step=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
                     i, Num(c.X(i)), Num(c.top), Num(c.sx), Num(c.height), Esc(what));
    const int64_t tiles = std::min<int64_t>(st.tiled.tiles, 32);
    for (int64_t t = 1; st.kind == plan::StepKind::kFusedTiled && t < tiles; ++t) {
      const double x = c.X(static_cast<double>(i) + static_cast<double>(t) / static_cast<double>(tiles));
      s += fmt::format("<line class=\"tile\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n", Num(x), Num(c.top),
                       Num(c.top + c.height));
    }
  }
  if (peak >= 0)
    s += fmt::format("<rect class=\"peak\" data-step=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>peak: "
                     "step {} ({})</title></rect>\n",
                     peak, Num(c.X(peak)), Num(c.top), Num(c.sx), Num(c.height), peak, Esc(StepName(p, peak)));
  return s;
}

std::string Axes(const plan::Plan& p, const Chart& c, const plan::Level& level) {
  std::string s;
  for (int k = 0; k <= 4; ++k) {
    const int64_t a = c.extent * k / 4;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Num(c.left - 4), Num(c.Y(a) + 4),
                     Esc(HumanBytes(a)));
  }
  const int every = std::max(1, static_cast<int>(40 / c.sx + 0.999));
  const double base = c.top + c.height + c.lane + 14;
  for (int st = 0; st < c.steps; st += every)
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", Num(c.X(st)), Num(base), st);
  s += fmt::format("<text x=\"{}\" y=\"{}\">step</text>\n", Num(c.X(0)), Num(base + 14));
  if (level.capacity > 0 && level.capacity <= c.extent)
    s += fmt::format("<line class=\"cap\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"><title>capacity {3} B</title></line>\n",
                     Num(c.X(0)), Num(c.X(c.steps)), Num(c.Y(level.capacity)), level.capacity);
  if (const plan::Pool* pool = plan::FindPool(p, level.name))
    s += fmt::format("<line class=\"pool\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"><title>circular pool: bytes "
                     "[0, {3}) addressed modulo {3}, segment {4} B</title></line>\n"
                     "<text x=\"{1}\" y=\"{5}\" text-anchor=\"end\" fill=\"#c0c\">circular pool {3} B</text>\n",
                     Num(c.X(0)), Num(c.X(c.steps)), Num(c.Y(pool->bytes)), pool->bytes, pool->segment_bytes,
                     Num(c.Y(pool->bytes) - 3));
  return s;
}

std::string BufferRects(const plan::Plan& p, const Chart& c, const std::string& level, int plan_index) {
  std::map<std::string, const plan::Tensor*> tensors;
  for (const auto& t : p.tensors) tensors[t.name] = &t;
  std::string s;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const plan::Buffer& b = p.buffers[i];
    if (b.level != level) continue;
    std::string cls = KindClass(p, b.tensor, tensors);
    std::string title = fmt::format("{}: {} B at offset {} in {}, steps {}..{} ({} .. {})", b.tensor, b.bytes,
                                    b.offset, b.level, b.first_step, b.last_step, StepName(p, b.first_step),
                                    StepName(p, b.last_step));
    if (!b.overlaps.empty()) {
      cls += " ovl";
      for (const auto& o : b.overlaps)
        title += fmt::format("; may share bytes with {} ({}, shift {})", o.tensor, o.reason, o.shift);
    }
    const auto pieces = plan::BufferPieces(p, b);
    for (size_t k = 0; k < std::max<size_t>(pieces.size(), 1); ++k) {
      const int64_t lo = pieces.empty() ? b.offset : pieces[k].first;
      const int64_t hi = pieces.empty() ? b.offset + b.bytes : pieces[k].second;
      const double x = c.X(std::max(b.first_step, 0));
      const double w = std::max(0, std::min(b.last_step, c.steps - 1) - std::max(b.first_step, 0) + 1) * c.sx;
      s += fmt::format(
          "<rect class=\"{} {}\" data-plan=\"{}\" data-index=\"{}\" data-level=\"{}\" data-buffer=\"{}\" "
          "data-offset=\"{}\" data-bytes=\"{}\" data-first=\"{}\" data-last=\"{}\" data-lo=\"{}\" data-hi=\"{}\" "
          "x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
          k == 0 ? "buf" : "buf-wrap", cls, plan_index, i, Esc(b.level), Esc(b.tensor), b.offset, b.bytes,
          b.first_step, b.last_step, lo, hi, Num(x), Num(c.Y(std::max<int64_t>(lo, 0))), Num(w),
          Num(std::max<int64_t>(hi - std::max<int64_t>(lo, 0), 0) * c.sy), Esc(title));
    }
  }
  return s;
}

// Transfers between this (on-chip) level and an off-chip one, as arrows to and from the lane under
// the chart: spills and stores go down (red), loads and reloads come up (green).
std::string TransferArrows(const plan::Plan& p, const Chart& c, const std::string& level) {
  std::string s;
  const double lane_y = c.top + c.height + 10;
  s += fmt::format("<rect class=\"lane\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"24\"/>\n"
                   "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">off-chip</text>\n",
                   Num(c.X(0)), Num(lane_y), Num(c.Width()), Num(c.left - 4), Num(lane_y + 16));
  std::multimap<std::string, const plan::Buffer*> by_tensor;
  for (const auto& b : p.buffers)
    if (b.level == level) by_tensor.emplace(b.tensor, &b);
  for (const auto& t : p.transfers) {
    const bool out = t.from == level, in = t.to == level;
    if (!out && !in) continue;
    const plan::Buffer* buf = nullptr;
    auto [lo, hi] = by_tensor.equal_range(t.tensor);
    for (auto it = lo; it != hi; ++it)
      if (!buf || (it->second->first_step <= t.step && t.step <= it->second->last_step)) buf = it->second;
    const double y = buf ? c.Y(buf->offset + buf->bytes / 2.0) : c.top + c.height;
    const double x = c.X(t.step + 0.5);
    const std::string title =
        fmt::format("step {}: {} {} B of {} from {} to {}", t.step, t.kind, t.bytes, t.tensor, t.from, t.to);
    if (out)
      s += fmt::format("<line class=\"spill\" data-kind=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>{}</title></line>\n",
                       Esc(t.kind), Num(x), Num(y), Num(x), Num(lane_y), Esc(title));
    else
      s += fmt::format("<line class=\"reload\" data-kind=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>{}</title></line>\n",
                       Esc(t.kind), Num(x), Num(lane_y + 24), Num(x), Num(y), Esc(title));
  }
  return s;
}

// The tensors live at `step` in `level`, largest first.
std::string LiveList(const plan::Plan& p, const std::string& level, int step, int64_t live) {
  std::vector<const plan::Buffer*> at;
  for (const auto& b : p.buffers)
    if (b.level == level && b.first_step <= step && step <= b.last_step) at.push_back(&b);
  std::sort(at.begin(), at.end(), [](auto* a, auto* b) { return a->bytes != b->bytes ? a->bytes > b->bytes : a->tensor < b->tensor; });
  std::string s = fmt::format("<p class=\"peak-list\" data-step=\"{}\">peak at step {} ({}): {} B live ({}) in {} "
                              "buffers: ",
                              step, step, Esc(StepName(p, step)), live, Esc(HumanBytes(live)), at.size());
  for (size_t i = 0; i < at.size(); ++i) {
    if (i == 24) {
      s += fmt::format(" ... {} more", at.size() - 24);
      break;
    }
    s += fmt::format("{}<b>{}</b> {} B", i ? ", " : "", Esc(at[i]->tensor), at[i]->bytes);
  }
  return s + "</p>\n";
}

std::string LevelChart(const plan::Plan& p, const plan::Level& level, int plan_index) {
  int64_t extent = 0;
  size_t count = 0;
  for (const auto& b : p.buffers)
    if (b.level == level.name) {
      extent = std::max(extent, b.offset + b.bytes);
      ++count;
    }
  if (count == 0) return "";
  if (const plan::Pool* pool = plan::FindPool(p, level.name)) extent = std::max(extent, pool->bytes);
  if (level.capacity > extent && level.capacity <= extent + extent / 4) extent = level.capacity;
  bool transfers = false;
  const bool off_chip = OffChip(p, level.name);
  for (const auto& t : p.transfers) transfers = transfers || (!off_chip && (t.from == level.name || t.to == level.name));
  const Chart c = MakeChart(static_cast<int>(p.steps.size()), extent, transfers);
  const std::vector<int64_t> live = LiveBytesPerStep(p, level.name);
  const int peak = p.steps.empty() ? -1 : ArgMax(live);
  std::string s = fmt::format("<h3>level {} ({}): {} buffers, used {} B of {} B, lower bound {} B</h3>\n",
                              Esc(level.name), Esc(level.kind), count, level.used_bytes, level.capacity,
                              level.lower_bound_bytes);
  if (!level.pool_of.empty())  // a memory pool: its own chart, at its own address
    s += fmt::format("<p class=\"pool\">memory pool of level {} at address 0x{:08x}</p>\n", Esc(level.pool_of),
                     level.base);
  const double w = c.left + c.Width() + 20, h = c.top + c.height + c.lane + 36;
  s += fmt::format("<div class=\"chart\"><svg class=\"level\" data-level=\"{}\" width=\"{}\" height=\"{}\" "
                   "viewBox=\"0 0 {} {}\">\n",
                   Esc(level.name), Num(w), Num(h), Num(w), Num(h));
  s += fmt::format("<text x=\"{}\" y=\"14\">address (0 at the top) by step; {} B per pixel</text>\n",
                   Num(c.left), Num(1.0 / c.sy));
  s += fmt::format("<rect class=\"bg\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", Num(c.X(0)), Num(c.top),
                   Num(c.Width()), Num(c.height));
  s += StepBackgrounds(p, c, peak);
  s += BufferRects(p, c, level.name, plan_index);
  if (peak >= 0)
    s += fmt::format("<rect class=\"peak-outline\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", Num(c.X(peak)),
                     Num(c.top), Num(c.sx), Num(c.height));
  if (transfers) s += TransferArrows(p, c, level.name);
  s += Axes(p, c, level);
  s += "</svg></div>\n";
  if (peak >= 0) s += LiveList(p, level.name, peak, live[peak]);
  return s;
}

// One bar per step: `values` scaled to the largest.
std::string BarChart(const std::vector<int64_t>& values, const char* cls, const std::string& label) {
  const int n = static_cast<int>(std::max<size_t>(values.size(), 1));
  const int64_t top = std::max<int64_t>(1, values.empty() ? 1 : *std::max_element(values.begin(), values.end()));
  const double left = 84, sx = std::clamp(960.0 / n, 3.0, 48.0), height = 120;
  const double w = left + n * sx + 20;
  std::string s = fmt::format("<div class=\"chart\"><svg class=\"bars\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
                              Num(w), Num(height + 40));
  s += fmt::format("<text x=\"{}\" y=\"14\">{} (max {} B)</text>\n", Num(left), Esc(label), top);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Num(left - 4), Num(24), Esc(HumanBytes(top)));
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>\n", Num(left - 4), Num(20 + height));
  for (size_t i = 0; i < values.size(); ++i) {
    const double bh = height * static_cast<double>(values[i]) / static_cast<double>(top);
    s += fmt::format("<rect class=\"{}\" data-step=\"{}\" data-bytes=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\">"
                     "<title>step {}: {} B</title></rect>\n",
                     cls, i, values[i], Num(left + i * sx + sx * 0.1), Num(20 + height - bh), Num(sx * 0.8), Num(bh), i,
                     values[i]);
  }
  return s + "</svg></div>\n";
}

// Off-chip bytes moved at each step: the transfers to or from an off-chip level and the DRAM
// traffic of fused-tiled groups.
std::vector<int64_t> OffChipPerStep(const plan::Plan& p) {
  std::vector<int64_t> v(p.steps.size(), 0);
  for (const auto& t : p.transfers)
    if (t.step >= 0 && t.step < static_cast<int>(v.size()) && (OffChip(p, t.from) || OffChip(p, t.to))) v[t.step] += t.bytes;
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].kind == plan::StepKind::kFusedTiled)
      v[i] += p.steps[i].tiled.dram_read_bytes + p.steps[i].tiled.dram_write_bytes;
  return v;
}

std::string LevelTable(const plan::Plan& p) {
  std::string s = "<table class=\"levels\"><tr><th class=\"l\">level</th><th class=\"l\">kind</th><th>used B</th>"
                  "<th>lower bound B</th><th>capacity B</th><th>use %</th></tr>\n";
  for (const auto& l : p.levels) {
    if (l.used_bytes == 0 && l.lower_bound_bytes == 0) continue;
    s += fmt::format("<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td></tr>\n",
                     l.used_bytes > l.capacity ? " class=\"over\"" : "", Esc(l.name), Esc(l.kind), l.used_bytes,
                     l.lower_bound_bytes, l.capacity,
                     l.capacity > 0 ? 100.0 * static_cast<double>(l.used_bytes) / static_cast<double>(l.capacity) : 0.0);
  }
  return s + "</table>\n";
}

std::string PlanSection(const plan::Plan& p, int index) {
  const auto& m = p.metrics;
  std::string s = fmt::format("<section class=\"plan\" data-strategy=\"{}\" data-buffers=\"{}\" data-steps=\"{}\">\n"
                              "<h2>strategy {}: {}</h2>\n",
                              Esc(p.strategy), p.buffers.size(), p.steps.size(), Esc(p.strategy),
                              m.fits ? "fits" : "DOES NOT FIT");
  s += fmt::format("<p>{} steps, {} buffers, {} transfers; arena {} B (lower bound {} B, overhead {:.1f}%); in-place "
                   "saved {} B; off-chip read {} B, write {} B (non-compulsory {} B); memory energy {:.3f} uJ</p>\n",
                   p.steps.size(), p.buffers.size(), p.transfers.size(), m.arena_bytes, m.lower_bound_bytes,
                   m.overhead_pct, m.inplace_saved_bytes, m.offchip_read_bytes, m.offchip_write_bytes,
                   m.noncompulsory_read_bytes + m.noncompulsory_write_bytes, m.energy_pj * 1e-6);
  s += LevelTable(p);
  for (const auto& n : p.notes) s += "<p class=\"note\">note: " + Esc(n) + "</p>\n";
  for (const auto& l : p.levels) s += LevelChart(p, l, index);
  if (!p.steps.empty()) {
    s += "<h3>per step</h3>\n";
    const std::string arena = p.arena_level.empty() && !p.levels.empty() ? p.levels[0].name : p.arena_level;
    s += BarChart(LiveBytesPerStep(p, arena), "bar-ram", "bytes live in " + arena);
    s += BarChart(OffChipPerStep(p), "bar-offchip", "off-chip bytes moved");
  }
  return s + "</section>\n";
}

// Several plans side by side; savings against 'naive' when it ran, else against the largest arena.
std::string CompareSection(const std::vector<plan::Plan>& plans) {
  const plan::Plan* base = &plans[0];
  for (const auto& p : plans)
    if (p.strategy == "naive" || (base->strategy != "naive" && p.metrics.arena_bytes > base->metrics.arena_bytes)) base = &p;
  int64_t best = plans[0].metrics.arena_bytes;
  for (const auto& p : plans) best = std::min(best, p.metrics.arena_bytes);
  std::string s = fmt::format("<h2>strategies compared</h2>\n<p>savings against {} ({} B)</p>\n"
                              "<table class=\"compare\"><tr><th class=\"l\">strategy</th><th class=\"l\">verdict</th>"
                              "<th>arena B</th><th>lower bound B</th><th>overhead %</th><th>saved B</th><th>saved %</th>"
                              "<th>in-place saved B</th><th>off-chip B</th><th>non-compulsory B</th><th>energy uJ</th></tr>\n",
                              Esc(base->strategy), base->metrics.arena_bytes);
  for (const auto& p : plans) {
    const auto& m = p.metrics;
    const int64_t saved = base->metrics.arena_bytes - m.arena_bytes;
    const double pct = base->metrics.arena_bytes > 0
                           ? 100.0 * static_cast<double>(saved) / static_cast<double>(base->metrics.arena_bytes) : 0.0;
    s += fmt::format("<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{}</td>"
                     "<td>{:.1f}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td></tr>\n",
                     m.arena_bytes == best ? " class=\"best\"" : "", Esc(p.strategy), m.fits ? "fits" : "does not fit",
                     m.arena_bytes, m.lower_bound_bytes, m.overhead_pct, saved, pct, m.inplace_saved_bytes,
                     m.offchip_read_bytes + m.offchip_write_bytes,
                     m.noncompulsory_read_bytes + m.noncompulsory_write_bytes, m.energy_pj * 1e-6);
  }
  return s + "</table>\n";
}

}  // namespace

std::string HtmlReport(const std::vector<plan::Plan>& plans, const HtmlOptions& options) {
  std::string title = options.title;
  if (title.empty() && !plans.empty()) title = plans[0].model + " on " + plans[0].target;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + Esc(title) +
                  "</title>\n<style>" + kCss + "</style></head>\n<body>\n<div id=\"tip\"></div>\n" +
                  "<svg width=\"0\" height=\"0\" style=\"position:absolute\">" + kDefs + "</svg>\n";
  s += "<h1>sramplan: " + Esc(title) + "</h1>\n";
  if (!plans.empty())
    s += fmt::format("<p>{} | {} | batch {} | schedule {} | {} plan{}</p>\n", Esc(plans[0].model), Esc(plans[0].dtype),
                     plans[0].batch, Esc(plans[0].schedule), plans.size(), plans.size() == 1 ? "" : "s");
  for (const auto& n : options.notes) s += "<p class=\"note\">" + Esc(n) + "</p>\n";
  s += "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#6ea8e0\"></i>activation</span>"
       "<span><i class=\"sw\" style=\"background:#79c57a\"></i>input</span>"
       "<span><i class=\"sw\" style=\"background:#f0a35e\"></i>output</span>"
       "<span><i class=\"sw\" style=\"background:#b9b9b9\"></i>constant</span>"
       "<span><i class=\"sw\" style=\"background:#b48ed8\"></i>scratch/workspace</span>"
       "<span><i class=\"sw\" style=\"background:#fff4c2\"></i>fused group (dotted: tiles)</span>"
       "<span><i class=\"sw\" style=\"background:#ffd9d9\"></i>peak step</span>"
       "<span style=\"color:#c00\">dashed red outline: declared overlap</span>"
       "<span style=\"color:#c0c\">dashed magenta: circular pool / wrapped piece</span>"
       "<span style=\"color:#d33\">red arrow: spill/store</span><span style=\"color:#283\">green arrow: load/reload</span></p>\n";
  if (plans.size() > 1) s += CompareSection(plans);
  for (size_t i = 0; i < plans.size(); ++i) s += PlanSection(plans[i], static_cast<int>(i));
  s += "<script>" + std::string(kJs) + "</script>\n</body></html>\n";
  return s;
}

}  // namespace sramplan::report
