// The per-region combination of module buffering and COSMA (region_combine.h).
#include "driver/region_combine.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <set>
#include <tuple>

#include "driver/pass.h"
#include "driver/region_stitch.h"

namespace sramplan::driver {
namespace {

constexpr int64_t kNone = INT64_MAX;
constexpr const char* kModuleMethod = "modulebuf-reorder";
constexpr int kMaxCrossing = 2;  // feature maps crossing a boundary

int64_t Total(const plan::Plan& p) { return p.metrics.offchip_read_bytes + p.metrics.offchip_write_bytes; }

// One segment of consecutive regions [from, to) planned with one method.
struct Segment {
  int from = 0, to = 0;
  bool cosma = false;   // COSMA's family, else module buffering
  std::string method;   // the strategy that made the plan
  int64_t total = kNone;
  plan::Plan plan;
  std::string why;  // no plan: the reason
};

class Planner {
 public:
  Planner(const PlanningContext& ctx, const analysis::Schedule& order, std::vector<int> bounds)
      : ctx_(ctx), order_(order), bounds_(std::move(bounds)) {}

  // Plans regions [from, to) with module buffering or COSMA (cosma, else greedy) in `time_s`.
  Segment Plan(int from, int to, bool cosma, double time_s) {
    Segment s;
    s.from = from, s.to = to, s.cosma = cosma;
    std::vector<ir::OpId> ops(order_.begin() + bounds_[from], order_.begin() + bounds_[to]);
    StatusOr<ir::Graph> sub = RegionGraph(ctx_.graph, ops);
    if (!sub.ok()) {
      s.why = sub.status().message();
      return s;
    }
    PlanOptions o = ctx_.options;
    o.report = nullptr;
    // The region's share caps every search of its plan (the min-peak order's and the exact
    // placement's too), not only the ILP: a region plan must not take a whole plan's time.
    o.time_limit_s = o.search_time_limit_s = std::max(kMinStageSeconds, time_s);
    for (const char* name : cosma ? std::vector<const char*>{"cosma", "greedy"} : std::vector<const char*>{kModuleMethod}) {
      StatusOr<plan::Plan> p = RunStrategy(*sub, ctx_.target, name, o);
      if (p.ok()) {
        s.method = name;
        s.total = Total(*p);
        s.plan = std::move(p).value();
        return s;
      }
      const std::string msg = p.status().message();
      s.why = std::string(name) + ": " + msg.substr(0, msg.find(';'));
      if (msg.find("M_min") != std::string::npos) break;  // greedy shares M_min
    }
    return s;
  }

 private:
  const PlanningContext& ctx_;
  const analysis::Schedule& order_;
  std::vector<int> bounds_;
};

// Maximal runs [from, to) of at least two regions where `member` holds.
template <typename F>
std::vector<std::pair<int, int>> Runs(int m, F member) {
  std::vector<std::pair<int, int>> runs;
  for (int i = 0; i < m;) {
    if (!member(i)) {
      ++i;
      continue;
    }
    int j = i;
    while (j < m && member(j)) ++j;
    if (j - i >= 2) runs.push_back({i, j});
    i = j;
  }
  return runs;
}

}  // namespace

Status FinishStitchedPlan(const PlanningContext& ctx, const analysis::Schedule& order, plan::Plan* p) {
  PlanningContext sc(ctx.graph, ctx.target, ctx.hw, ctx.spec, ctx.options);
  sc.plan = std::move(*p);
  sc.order = order;
  sc.assembled = true;
  sc.lower_bound = 0;
  for (const char* name : {"weights", "metrics", "module-metrics"}) {
    SP_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, MakePass(name));
    SP_RETURN_IF_ERROR(pass->Run(sc));
  }
  *p = std::move(sc.plan);
  return Status::Ok();
}

StatusOr<RegionCombination> CombineRegions(const PlanningContext& ctx, int64_t to_beat, double time_s) {
  RegionCombination out;
  const analysis::Schedule order = analysis::ModelOrder(ctx.graph);
  const std::vector<int> cuts = BoundaryCuts(ctx.graph, order, kMaxCrossing);
  if (cuts.empty()) {
    out.note = "regions: the model order has no boundary (at most " + std::to_string(kMaxCrossing) +
               " feature maps crossing), nothing to combine per region";
    return out;
  }
  std::vector<int> bounds = {0};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(static_cast<int>(order.size()));
  const int m = static_cast<int>(bounds.size()) - 1;
  Planner planner(ctx, order, bounds);
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return time_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Elementary regions with both methods; half the time for their COSMA runs.
  std::vector<Segment> segs;
  std::set<std::tuple<int, int, bool>> planned;
  auto plan = [&](int from, int to, bool cosma, double t) {
    if (!planned.insert({from, to, cosma}).second || (from == 0 && to == m)) return;  // whole: the caller's
    segs.push_back(planner.Plan(from, to, cosma, t));
  };
  std::vector<int64_t> mb(m), co(m);
  for (int i = 0; i < m; ++i) {
    plan(i, i + 1, false, 0);
    mb[i] = segs.back().total;
    plan(i, i + 1, true, time_s / 2 / m);
    co[i] = segs.back().total;
  }
  // Longer segments. Module buffering is fast: every prefix and suffix, and the runs it won.
  for (int j = 2; j < m; ++j) plan(0, j, false, 0);
  for (int i = 1; i + 1 < m; ++i) plan(i, m, false, 0);
  for (const auto& [a, b] : Runs(m, [&](int i) { return mb[i] != kNone && mb[i] <= co[i]; })) plan(a, b, false, 0);
  // COSMA (time-limited ILPs): each maximal run of regions it can plan, and its parts before and
  // after every point where the elementary winner changes.
  std::vector<std::pair<int, int>> longer;
  for (const auto& [a, b] : Runs(m, [&](int i) { return co[i] != kNone; })) {
    longer.push_back({a, b});
    for (int c = a + 1; c < b; ++c)
      if ((co[c - 1] < mb[c - 1]) != (co[c] < mb[c])) {
        if (c - a >= 2) longer.push_back({a, c});
        if (b - c >= 2) longer.push_back({c, b});
      }
  }
  for (size_t k = 0; k < longer.size(); ++k)
    plan(longer[k].first, longer[k].second, true, std::max(0.0, left()) / static_cast<double>(longer.size() - k));
  // Shortest path over the cuts.
  std::vector<int64_t> best(m + 1, kNone);
  std::vector<int> via(m + 1, -1);
  best[0] = 0;
  for (int j = 1; j <= m; ++j)
    for (size_t k = 0; k < segs.size(); ++k) {
      const Segment& s = segs[k];
      if (s.to != j || s.total == kNone || best[s.from] == kNone) continue;
      if (best[s.from] + s.total < best[j]) best[j] = best[s.from] + s.total, via[j] = static_cast<int>(k);
    }
  std::string summary = "regions: " + std::to_string(cuts.size()) + " boundaries, " +
                        std::to_string(m) + " regions, " + std::to_string(segs.size()) + " region plans";
  if (best[m] == kNone) {
    out.note = summary + "; some region has no plan with either method";
    return out;
  }
  std::vector<int> path;
  for (int j = m; j > 0; j = segs[via[j]].from) path.insert(path.begin(), via[j]);
  summary += "; kept";
  std::vector<const plan::Plan*> parts;
  for (int k : path) {
    const Segment& s = segs[k];
    parts.push_back(&s.plan);
    summary += " steps " + std::to_string(bounds[s.from]) + ".." + std::to_string(bounds[s.to] - 1) + " " + s.method +
               " (" + std::to_string(s.total) + " B)";
  }
  summary += " = " + std::to_string(best[m]) + " B off chip";
  if (best[m] >= to_beat) {
    out.note = summary + ", not fewer than the whole-network plan's " + std::to_string(to_beat) + " B";
    return out;
  }
  analysis::Schedule stitched_order;
  SP_ASSIGN_OR_RETURN(plan::Plan p, StitchPlans(ctx.graph, ctx.target, parts, ctx.spec.name, ctx.options,
                                                ctx.alignment(), &stitched_order));
  SP_RETURN_IF_ERROR(FinishStitchedPlan(ctx, stitched_order, &p));
  if (Total(p) != best[m])
    return InternalError("the stitched plan moves " + std::to_string(Total(p)) + " B off chip, its regions " +
                         std::to_string(best[m]) + " B");
  p.metrics.budget_bytes = parts[0]->metrics.budget_bytes;
  out.note = summary;
  out.plan = std::move(p);
  return out;
}

}  // namespace sramplan::driver
