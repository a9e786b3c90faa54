#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/op_cost.h"
#include "support/strings.h"

namespace sramplan::report {
namespace {

std::string Shape(const std::vector<int64_t>& s) {
  std::string r = "[";
  r += JoinInts(s, "x");
  return r += "]";
}

std::string Truncate(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "~";
}

const plan::Level* ArenaLevel(const plan::Plan& p) {
  for (const auto& l : p.levels)
    if (l.name == p.arena_level) return &l;
  return nullptr;
}

// Length of the union of a changing set of address ranges: a segment tree over the distinct
// range ends, counting per node how many ranges cover it whole.
class UnionLength {
 public:
  explicit UnionLength(std::vector<int64_t> xs) : xs_(std::move(xs)) {
    std::sort(xs_.begin(), xs_.end());
    xs_.erase(std::unique(xs_.begin(), xs_.end()), xs_.end());
    const size_t leaves = std::max<size_t>(xs_.size(), 2) - 1;
    count_.assign(4 * leaves, 0);
    length_.assign(4 * leaves, 0);
  }
  // Adds (delta 1) or removes (delta -1) [lo, hi), both among the constructor's values.
  void Update(int64_t lo, int64_t hi, int delta) {
    const int a = Index(lo), b = Index(hi);
    if (a < b) Update(1, 0, static_cast<int>(xs_.size()) - 1, a, b, delta);
  }
  int64_t Length() const { return length_.empty() ? 0 : length_[1]; }

 private:
  int Index(int64_t x) const { return static_cast<int>(std::lower_bound(xs_.begin(), xs_.end(), x) - xs_.begin()); }
  // Node covers [xs_[l], xs_[r]); update the elementary ranges [a, b).
  void Update(int node, int l, int r, int a, int b, int delta) {
    if (b <= l || r <= a) return;
    if (a <= l && r <= b) {
      count_[node] += delta;
    } else {
      const int mid = (l + r) / 2;
      Update(2 * node, l, mid, a, b, delta);
      Update(2 * node + 1, mid, r, a, b, delta);
    }
    if (count_[node] > 0) length_[node] = xs_[r] - xs_[l];
    else length_[node] = r - l > 1 ? length_[2 * node] + length_[2 * node + 1] : 0;
  }
  std::vector<int64_t> xs_;
  std::vector<int> count_;
  std::vector<int64_t> length_;
};

// Bytes occupied in `level` at each step: the union of the live buffers' address ranges, so bytes
// shared by a declared overlap count once (from byte -1 up, as a sweep starting there counts). A
// sweep over the steps that adds and removes each buffer once: n log n, not steps x buffers.
std::vector<int64_t> LivePerStep(const plan::Plan& p, const std::string& level) {
  const int steps = static_cast<int>(std::max<size_t>(p.steps.size(), 1));
  struct Range {
    int first, last;
    int64_t lo, hi;
  };
  std::vector<Range> ranges;
  std::vector<int64_t> xs;
  for (const auto& b : p.buffers) {
    if (b.level != level || b.bytes <= 0) continue;
    const int first = std::max(b.first_step, 0), last = std::min(b.last_step, steps - 1);
    const int64_t lo = std::max<int64_t>(b.offset, -1), hi = b.offset + b.bytes;
    if (first > last || hi <= lo) continue;
    ranges.push_back({first, last, lo, hi});
    xs.push_back(lo);
    xs.push_back(hi);
  }
  std::vector<std::vector<int>> starts(steps), ends(steps);
  for (size_t k = 0; k < ranges.size(); ++k) {
    starts[ranges[k].first].push_back(static_cast<int>(k));
    ends[ranges[k].last].push_back(static_cast<int>(k));
  }
  UnionLength u(std::move(xs));
  std::vector<int64_t> live(steps, 0);
  for (int s = 0; s < steps; ++s) {
    for (int k : starts[s]) u.Update(ranges[k].lo, ranges[k].hi, 1);
    live[s] = u.Length();
    for (int k : ends[s]) u.Update(ranges[k].lo, ranges[k].hi, -1);
  }
  return live;
}

// Per step, the highest end (offset + bytes, at least 0) of the arena buffers live there: a sweep
// with the live ends in a multiset.
std::vector<int64_t> HighWaterPerStep(const plan::Plan& p, int steps) {
  std::vector<std::vector<int64_t>> starts(steps), ends(steps);
  for (const auto& b : p.buffers) {
    if (b.level != p.arena_level) continue;
    const int first = std::max(b.first_step, 0), last = std::min(b.last_step, steps - 1);
    if (first > last) continue;
    starts[first].push_back(b.offset + b.bytes);
    ends[last].push_back(b.offset + b.bytes);
  }
  std::vector<int64_t> high(steps, 0);
  std::multiset<int64_t> live;
  for (int s = 0; s < steps; ++s) {
    live.insert(starts[s].begin(), starts[s].end());
    if (!live.empty()) high[s] = std::max<int64_t>(0, *live.rbegin());
    for (int64_t e : ends[s]) live.erase(live.find(e));
  }
  return high;
}

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

std::string InspectTable(const ir::Graph& g) {
  std::string s = fmt::format("model {}: {} ops, {} tensors, layout {}\n", g.name, g.num_ops(), g.num_tensors(),
                              g.layout == ir::Layout::kNHWC ? "NHWC" : "NCHW");
  s += fmt::format("{:>5}  {:<36} {:<20} {:<22} {:>12} {:>14} {:>12}\n", "#", "op", "type", "output shape",
                   "out bytes", "MACs", "weights B");
  int64_t total_macs = 0, total_w = 0;
  for (const ir::Op& op : g.ops()) {
    analysis::OpCost c = analysis::ComputeOpCost(g, op);
    total_macs += c.macs;
    total_w += c.weight_bytes;
    std::string type = op.type == "Opaque" ? "Opaque:" + op.original_type : op.type;
    if (ir::IsDepthwiseConv(g, op)) type = "Conv(depthwise)";
    std::string shape = op.outputs.empty() ? "-" : Shape(g.tensor(op.outputs[0]).shape);
    s += fmt::format("{:>5}  {:<36} {:<20} {:<22} {:>12} {:>14} {:>12}\n", op.id.value(), Truncate(op.name, 36),
                     Truncate(type, 20), Truncate(shape, 22), c.output_bytes, c.macs, c.weight_bytes);
  }
  int64_t in_b = 0, out_b = 0;
  for (auto t : g.Inputs()) in_b += g.tensor(t).Bytes();
  for (auto t : g.Outputs()) out_b += g.tensor(t).Bytes();
  s += fmt::format("total: {} MACs, {} weight bytes ({}), input {} B, output {} B\n", total_macs, total_w,
                   HumanBytes(total_w), in_b, out_b);
  return s;
}

std::string PlanSummary(const plan::Plan& p) {
  std::string s;
  s += fmt::format("{} on {} | strategy {} | {} | batch {} | {} steps\n", p.model, p.target, p.strategy, p.dtype,
                   p.batch, p.steps.size());
  s += fmt::format("verdict: {}\n", p.metrics.fits ? "FITS" : "DOES NOT FIT");
  s += fmt::format("  {:<10} {:<13} {:>14} {:>14} {:>14} {:>9} {:>8}\n", "level", "kind", "used", "lower bound",
                   "capacity", "overhead", "use %");
  for (const auto& l : p.levels) {
    if (l.used_bytes == 0 && l.lower_bound_bytes == 0) continue;
    std::string over = l.lower_bound_bytes > 0
                           ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(l.used_bytes - l.lower_bound_bytes) /
                                                        static_cast<double>(l.lower_bound_bytes))
                           : "-";
    s += fmt::format("  {:<10} {:<13} {:>14} {:>14} {:>14} {:>9} {:>7.1f}%{}\n", l.name, l.kind, l.used_bytes,
                     l.lower_bound_bytes, l.capacity, over,
                     100.0 * static_cast<double>(l.used_bytes) / static_cast<double>(l.capacity),
                     l.used_bytes > l.capacity ? "  OVER" : "");
  }
  s += fmt::format("  arena {} = {} (lower bound {}, overhead {:.1f}%)", p.metrics.arena_bytes,
                   HumanBytes(p.metrics.arena_bytes), HumanBytes(p.metrics.lower_bound_bytes), p.metrics.overhead_pct);
  if (p.metrics.inplace_saved_bytes) s += fmt::format("; in-place saved {}", HumanBytes(p.metrics.inplace_saved_bytes));
  s += "\n";
  s += fmt::format("  off-chip: read {} B, write {} B (non-compulsory {} B); memory energy {:.3f} uJ\n",
                   p.metrics.offchip_read_bytes, p.metrics.offchip_write_bytes,
                   p.metrics.noncompulsory_read_bytes + p.metrics.noncompulsory_write_bytes, p.metrics.energy_pj * 1e-6);
  for (const auto& n : p.notes) s += "  note: " + n + "\n";
  return s;
}

std::string DoesNotFitDetail(const plan::Plan& p) {
  std::string s;
  for (const auto& l : p.levels) {
    if (l.used_bytes <= l.capacity) continue;
    s += fmt::format("level '{}' ({}): required {} B ({}), available {} B ({}), excess {} B ({})\n", l.name, l.kind,
                     l.used_bytes, HumanBytes(l.used_bytes), l.capacity, HumanBytes(l.capacity),
                     l.used_bytes - l.capacity, HumanBytes(l.used_bytes - l.capacity));
    std::vector<int64_t> live = LivePerStep(p, l.name);
    int peak = static_cast<int>(std::max_element(live.begin(), live.end()) - live.begin());
    std::string opname = peak < static_cast<int>(p.steps.size()) && !p.steps[peak].ops.empty() ? p.steps[peak].ops[0].name : "";
    s += fmt::format("  peak at step {} ({}): {} B live", peak, opname, live[peak]);
    if (live[peak] > l.capacity) s += " - more than the capacity even with perfect placement";
    s += "\n  tensors live there:\n";
    std::vector<const plan::Buffer*> at;
    for (const auto& b : p.buffers)
      if (b.level == l.name && b.first_step <= peak && peak <= b.last_step) at.push_back(&b);
    std::sort(at.begin(), at.end(), [](auto* a, auto* b) { return a->bytes != b->bytes ? a->bytes > b->bytes : a->tensor < b->tensor; });
    size_t shown = 0;
    for (const auto* b : at) {
      if (shown++ == 12) {
        s += fmt::format("    ... {} more\n", at.size() - 12);
        break;
      }
      s += fmt::format("    {:<40} {:>12} B  steps {}..{}\n", Truncate(b->tensor, 40), b->bytes, b->first_step, b->last_step);
    }
  }
  return s;
}

static std::string MemoryMapOf(const plan::Plan& p, const plan::Level* arena, int width);

// One map per memory pool (plans of the pool strategies), else the arena level's.
std::string MemoryMap(const plan::Plan& p, int width) {
  std::string s;
  for (const auto& l : p.levels)
    if (!l.pool_of.empty())
      s += l.used_bytes == 0 ? fmt::format("memory pool '{}' is empty\n", l.name)
                             : fmt::format("memory pool '{}' of level '{}' at 0x{:08x} ({} of {} B):\n", l.name,
                                           l.pool_of, l.base, l.used_bytes, l.capacity) +
                                   MemoryMapOf(p, &l, width);
  return s.empty() ? MemoryMapOf(p, ArenaLevel(p), width) : s;
}

static std::string MemoryMapOf(const plan::Plan& p, const plan::Level* arena, int width) {
  if (!arena || arena->used_bytes == 0 || p.steps.empty()) return "(empty arena)\n";
  const int64_t size = arena->used_bytes;
  std::vector<const plan::Buffer*> bufs;
  for (const auto& b : p.buffers)
    if (b.level == arena->name) bufs.push_back(&b);
  static const char kSyms[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string s = fmt::format("memory map of '{}' ({} B, {} B per column; '.' free, '*' shared)\n", arena->name,
                              size, (size + width - 1) / width);
  s += fmt::format("{:>5} {:<24} |{}| {:>10}\n", "step", "op", std::string(width, '-'), "live B");
  std::vector<int64_t> live = LivePerStep(p, arena->name);
  // A column shows '.' when no live buffer covers it, the buffer's symbol when one does, '*' when
  // more do. Per column: how many live buffers cover it and the xor of their indices (the index
  // itself when there is one). Each buffer is added and removed once, not looked at every step.
  const int num_steps = static_cast<int>(p.steps.size());
  std::vector<std::vector<int>> starts(num_steps), ends(num_steps);
  for (size_t i = 0; i < bufs.size(); ++i) {
    const plan::Buffer* b = bufs[i];
    if (b->bytes == 0 || b->first_step > b->last_step || b->last_step < 0 || b->first_step >= num_steps) continue;
    starts[std::max(b->first_step, 0)].push_back(static_cast<int>(i));
    ends[std::min(b->last_step, num_steps - 1)].push_back(static_cast<int>(i));
  }
  std::vector<int> cover(width, 0);
  std::vector<size_t> xor_index(width, 0);
  auto paint = [&](int i, int delta) {
    const plan::Buffer* b = bufs[i];
    int c0 = static_cast<int>(b->offset * width / size);
    int c1 = static_cast<int>((b->offset + b->bytes - 1) * width / size);
    for (int c = std::max(c0, 0); c <= c1 && c < width; ++c) {
      cover[c] += delta;
      xor_index[c] ^= static_cast<size_t>(i);
    }
  };
  for (int st = 0; st < num_steps; ++st) {
    for (int i : starts[st]) paint(i, 1);
    std::string row(width, '.');
    for (int c = 0; c < width; ++c)
      if (cover[c] == 1) row[c] = kSyms[xor_index[c] % (sizeof(kSyms) - 1)];
      else if (cover[c] > 1) row[c] = '*';
    s += fmt::format("{:>5} {:<24} |{}| {:>10}\n", st, Truncate(p.steps[st].ops[0].name, 24), row, live[st]);
    for (int i : ends[st]) paint(i, -1);
  }
  return s;
}

std::string CompareTable(const std::vector<plan::Plan>& plans) {
  if (plans.empty()) return "";
  const plan::Plan& f = plans[0];
  const plan::Level* arena = ArenaLevel(f);
  std::string s = fmt::format("{} on {} ({}, arena level '{}' of {} B):\n", f.model, f.target, f.dtype,
                              arena ? arena->name : "?", arena ? arena->capacity : 0);
  s += fmt::format("  {:<10} {:>14} {:>14} {:>10} {:>14}  {}\n", "strategy", "arena B", "lower bound", "overhead",
                   "in-place saved", "verdict");
  for (const auto& p : plans) {
    std::string verdict = p.metrics.fits ? "fits" : "DOES NOT FIT";
    if (!p.metrics.fits) {
      for (const auto& l : p.levels)
        if (l.used_bytes > l.capacity) verdict += fmt::format(" ({} +{} B)", l.name, l.used_bytes - l.capacity);
    }
    s += fmt::format("  {:<10} {:>14} {:>14} {:>9.1f}% {:>14}  {}\n", p.strategy, p.metrics.arena_bytes,
                     p.metrics.lower_bound_bytes, p.metrics.overhead_pct, p.metrics.inplace_saved_bytes, verdict);
  }
  return s;
}

std::string SummaryCsv(const std::vector<plan::Plan>& plans) {
  std::string s =
      "model,target,strategy,dtype,batch,steps,fits,arena_level,arena_bytes,lower_bound_bytes,arena_capacity,"
      "overhead_pct,inplace_saved_bytes,weight_level,weight_bytes,weight_capacity,offchip_read_bytes,"
      "offchip_write_bytes,noncompulsory_bytes,energy_pj\n";
  for (const auto& p : plans) {
    const plan::Level* arena = ArenaLevel(p);
    const plan::Level* wl = nullptr;
    for (const auto& l : p.levels)
      if (l.name != p.arena_level && l.used_bytes > 0) wl = &l;
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{},{:.1f}\n", Csv(p.model), Csv(p.target),
                     p.strategy, p.dtype, p.batch, p.steps.size(), p.metrics.fits ? 1 : 0, arena ? arena->name : "",
                     p.metrics.arena_bytes, p.metrics.lower_bound_bytes, arena ? arena->capacity : 0,
                     p.metrics.overhead_pct, p.metrics.inplace_saved_bytes, wl ? wl->name : "", wl ? wl->used_bytes : 0,
                     wl ? wl->capacity : 0, p.metrics.offchip_read_bytes, p.metrics.offchip_write_bytes,
                     p.metrics.noncompulsory_read_bytes + p.metrics.noncompulsory_write_bytes, p.metrics.energy_pj);
  }
  return s;
}

std::string PerLayerCsv(const ir::Graph& g, const std::vector<plan::Plan>& plans) {
  std::string s = "strategy,step,op,type,output_shape,output_bytes,macs,weight_bytes,live_bytes,arena_high_water\n";
  std::unordered_map<std::string, const ir::Op*> ops;
  for (const auto& op : g.ops()) ops[op.name] = &op;
  for (const auto& p : plans) {
    std::vector<int64_t> live = LivePerStep(p, p.arena_level);
    std::vector<int64_t> high = HighWaterPerStep(p, static_cast<int>(live.size()));
    for (const auto& st : p.steps)
      for (const auto& so : st.ops) {
        auto it = ops.find(so.name);
        analysis::OpCost c;
        std::string shape;
        if (it != ops.end()) {
          c = analysis::ComputeOpCost(g, *it->second);
          if (!it->second->outputs.empty()) shape = JoinInts(g.tensor(it->second->outputs[0]).shape, "x");
        }
        s += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", p.strategy, st.index, Csv(so.name), so.type, shape,
                         c.output_bytes, c.macs, c.weight_bytes, live[st.index], high[st.index]);
      }
  }
  return s;
}

std::vector<int64_t> LiveBytesPerStep(const plan::Plan& p, const std::string& level) { return LivePerStep(p, level); }

}  // namespace sramplan::report
