// pools:tflm|optimal (issue 19): splits the arena of an assembled single-arena plan into the arena
// level's memory pools (target::MemoryPool: STM32F767ZI's DTCM / SRAM1 / SRAM2, ESP32-S3's SRAM /
// PSRAM). The order and the lifetimes stay the single-arena strategy's; the pass decides which pool
// holds each buffer and where, so each pool is one more placement problem for placement/.
//
// Why this two-stage form and not a joint formulation: a buffer's cost depends only on its pool
// (accesses x the pool's pJ per byte), not on its offset, so the assignment is a knapsack-like
// choice and the offsets within a pool are exactly the existing placement problem. Stage 1 assigns
// buffers greedily, each to the cheapest pool where it still fits next to what that pool holds (first
// fit at the lowest free offset, which also places it), trying three orders: accesses per byte
// (hot, small buffers to the cheap pool first), size, and size into the largest pool first (closest
// to the single arena when the pools are tight). The cheapest assignment that fits wins. Stage 2
// re-places each pool's buffers with the chosen placer (TFLM's greedy planner or the exact search)
// and keeps whichever layout of the pool is lower. Buffers that declare an overlap (in-place
// classes) move together as one unit with their relative offsets.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "placement/optimal.h"

namespace sramplan::driver::passes {
namespace {

struct Unit {
  std::vector<int> members;  // plan buffer indices
  std::vector<int64_t> rel;  // member offset - unit offset
  int64_t span = 0;
  int first = 0, last = 0;
  double reads = 0, writes = 0;  // bytes, as the metrics pass charges them (cost::AddOpAccesses)
  double rank_accesses = 0;      // reads + writes, a scratch buffer counted as written and read once
};

struct Assignment {
  std::vector<int> pool;         // per unit
  std::vector<int64_t> offset;   // per unit, within its pool
  bool fits = true;
  double energy = 0;
  std::string order;
};

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// The arena buffers grouped into units (buffers that declare an overlap share one unit).
std::vector<Unit> BuildUnits(const PlanningContext& ctx, const plan::Plan& p) {
  const std::string& arena = ctx.arena().name;
  std::unordered_map<std::string, int> of_tensor;
  std::vector<int> idx;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].level == arena) {
      of_tensor[p.buffers[i].tensor] = static_cast<int>(i);
      idx.push_back(static_cast<int>(i));
    }
  std::vector<int> parent(p.buffers.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (int i : idx)
    for (const auto& o : p.buffers[i].overlaps)
      if (auto it = of_tensor.find(o.tensor); it != of_tensor.end()) parent[Find(parent, i)] = Find(parent, it->second);
  std::vector<Unit> units;
  std::unordered_map<int, int> unit_of_root;
  for (int i : idx) {
    const int root = Find(parent, i);
    auto [it, added] = unit_of_root.emplace(root, static_cast<int>(units.size()));
    if (added) units.emplace_back();
    units[it->second].members.push_back(i);
  }
  // Accesses, exactly as cost::AddOpAccesses charges the arena: every non-constant op input read,
  // every output of a non-view op written, each at its storage root.
  std::unordered_map<int, int> unit_of_buffer;
  for (size_t u = 0; u < units.size(); ++u)
    for (int b : units[u].members) unit_of_buffer[b] = static_cast<int>(u);
  const ir::Graph& g = ctx.graph;
  auto unit_of = [&](ir::TensorId t) -> Unit* {
    auto it = of_tensor.find(g.tensor(g.StorageRoot(t)).name);
    return it == of_tensor.end() ? nullptr : &units[unit_of_buffer[it->second]];
  };
  for (const ir::OpId id : ctx.order) {
    const ir::Op& op = g.op(id);
    for (ir::TensorId in : op.inputs)
      if (g.tensor(in).kind != ir::TensorKind::kConstant)
        if (Unit* u = unit_of(in)) u->reads += static_cast<double>(g.tensor(in).Bytes());
    if (ir::IsViewOp(op.type)) continue;
    for (ir::TensorId out : op.outputs)
      if (Unit* u = unit_of(out)) u->writes += static_cast<double>(g.tensor(out).Bytes());
  }
  for (Unit& u : units) {
    int64_t lo = INT64_MAX, hi = 0;
    u.first = INT32_MAX;
    u.last = -1;
    double scratch = 0;
    for (int b : u.members) {
      const plan::Buffer& pb = p.buffers[b];
      lo = std::min(lo, pb.offset);
      hi = std::max(hi, pb.offset + pb.bytes);
      u.first = std::min(u.first, pb.first_step);
      u.last = std::max(u.last, pb.last_step);
      if (!g.FindTensor(pb.tensor)) scratch += 2.0 * static_cast<double>(pb.bytes);
    }
    for (int b : u.members) u.rel.push_back(p.buffers[b].offset - lo);
    u.span = hi - lo;
    u.rank_accesses = u.reads + u.writes + scratch;
  }
  return units;
}

struct Slot {
  int64_t offset, bytes;
  int first, last;
};

// The lowest offset (a multiple of `align`) where `u` fits next to the slots live with it.
int64_t FirstFit(const std::vector<Slot>& slots, const Unit& u, int64_t align) {
  std::vector<const Slot*> live;
  for (const Slot& s : slots)
    if (s.first <= u.last && u.first <= s.last) live.push_back(&s);
  std::sort(live.begin(), live.end(), [](const Slot* a, const Slot* b) { return a->offset < b->offset; });
  int64_t at = 0;
  for (const Slot* s : live) {
    if (at + u.span <= s->offset) break;
    at = std::max(at, (s->offset + s->bytes + align - 1) / align * align);
  }
  return at;
}

Assignment Assign(const std::vector<Unit>& units, const std::vector<target::MemoryPool>& pools,
                  const std::vector<int>& unit_order, const std::vector<int>& pool_order, int64_t align,
                  std::string name) {
  Assignment a;
  a.order = std::move(name);
  a.pool.assign(units.size(), -1);
  a.offset.assign(units.size(), 0);
  std::vector<std::vector<Slot>> slots(pools.size());
  for (int u : unit_order) {
    int best = -1;
    int64_t best_off = 0;
    for (int q : pool_order) {
      const int64_t off = FirstFit(slots[q], units[u], align);
      if (off + units[u].span <= pools[q].capacity) {
        best = q;
        best_off = off;
        break;
      }
    }
    if (best < 0) {  // fits nowhere: the largest pool, over its capacity (the plan does not fit)
      a.fits = false;
      best = static_cast<int>(std::max_element(pools.begin(), pools.end(),
                                               [](const auto& x, const auto& y) { return x.capacity < y.capacity; }) -
                              pools.begin());
      best_off = FirstFit(slots[best], units[u], align);
    }
    a.pool[u] = best;
    a.offset[u] = best_off;
    slots[best].push_back({best_off, units[u].span, units[u].first, units[u].last});
    a.energy += units[u].reads * pools[best].read_pj_per_byte + units[u].writes * pools[best].write_pj_per_byte;
  }
  return a;
}

// Stage 2: each pool re-placed by `placer`; the lower of that and the first-fit layout is kept.
void Replace(const std::vector<Unit>& units, size_t num_pools, const std::string& placer, int64_t align,
             double time_limit_s, Assignment* a, std::vector<std::string>* notes) {
  for (size_t q = 0; q < num_pools; ++q) {
    std::vector<placement::BufferRequest> req;
    std::vector<int> which;
    int64_t first_fit_peak = 0;
    for (size_t u = 0; u < units.size(); ++u) {
      if (a->pool[u] != static_cast<int>(q)) continue;
      placement::BufferRequest r;
      r.id = static_cast<int>(req.size());
      r.bytes = (units[u].span + align - 1) / align * align;
      r.alignment = align;
      r.first_step = units[u].first;
      r.last_step = units[u].last;
      req.push_back(r);
      which.push_back(static_cast<int>(u));
      first_fit_peak = std::max(first_fit_peak, a->offset[u] + units[u].span);
    }
    if (req.empty()) continue;
    placement::Placement pl;
    if (placer == "optimal") {
      placement::OptimalOptions po;
      po.time_limit_s = time_limit_s;
      po.node_limit = 20000;
      pl = placement::PlaceBestOf(req, po).placement;
    } else {
      StatusOr<placement::Placement> r = placement::PlaceByName(placer, req);
      if (!r.ok()) continue;
      pl = *r;
    }
    int64_t peak = 0;
    for (size_t k = 0; k < which.size(); ++k) peak = std::max(peak, pl.offsets[k] + units[which[k]].span);
    if (peak < first_fit_peak) {
      for (size_t k = 0; k < which.size(); ++k) a->offset[which[k]] = pl.offsets[k];
      notes->push_back(std::to_string(q));
    }
  }
}

std::string Kib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  return buf;
}

Status RunPools(PlanningContext& ctx, const std::string& placer) {
  if (!ctx.assembled) return InternalError("pass 'pools' needs an assembled plan (run an assemble pass first)");
  const target::MemoryLevel& arena = ctx.arena();
  const std::vector<target::MemoryPool>& pools = arena.pools;
  if (pools.empty())
    return InvalidArgument("strategy '" + ctx.spec.name + "' places buffers in memory pools, but level '" + arena.name +
                           "' of target '" + ctx.target.name +
                           "' has none; give the level \"pools\" (see the presets stm32f767zi and esp32s3) or "
                           "use a single-arena strategy such as tflm");
  plan::Plan& p = ctx.plan;
  if (!p.pools.empty()) return InternalError("pass 'pools' cannot split a plan with a circular segment pool");
  const std::vector<Unit> units = BuildUnits(ctx, p);
  const int64_t align = std::max<int64_t>(ctx.alignment(), 16);
  // Unit and pool orders of the three attempts.
  std::vector<int> by_density(units.size()), by_size(units.size());
  std::iota(by_density.begin(), by_density.end(), 0);
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_density.begin(), by_density.end(), [&](int x, int y) {
    const double dx = units[x].rank_accesses / std::max<double>(1, units[x].span);
    const double dy = units[y].rank_accesses / std::max<double>(1, units[y].span);
    return dx != dy ? dx > dy : units[x].span < units[y].span;
  });
  std::stable_sort(by_size.begin(), by_size.end(), [&](int x, int y) { return units[x].span > units[y].span; });
  std::vector<int> by_cost(pools.size()), by_capacity(pools.size());
  std::iota(by_cost.begin(), by_cost.end(), 0);
  std::iota(by_capacity.begin(), by_capacity.end(), 0);
  auto cost = [&](int q) { return pools[q].read_pj_per_byte + pools[q].write_pj_per_byte; };
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](int x, int y) {
    return cost(x) != cost(y) ? cost(x) < cost(y) : pools[x].stall_cycles_per_byte < pools[y].stall_cycles_per_byte;
  });
  std::stable_sort(by_capacity.begin(), by_capacity.end(),
                   [&](int x, int y) { return pools[x].capacity > pools[y].capacity; });
  std::vector<Assignment> tries = {
      Assign(units, pools, by_density, by_cost, align, "accesses per byte, cheapest pool first"),
      Assign(units, pools, by_size, by_cost, align, "size, cheapest pool first"),
      Assign(units, pools, by_size, by_capacity, align, "size, largest pool first")};
  Assignment best = tries[0];
  for (const Assignment& a : tries)
    if ((a.fits && !best.fits) || (a.fits == best.fits && a.energy < best.energy)) best = a;
  std::vector<std::string> replaced;
  const double limit = ctx.options.search_time_limit_s > 0 ? std::min(30.0, ctx.options.search_time_limit_s) : 30;
  Replace(units, pools.size(), placer, align, limit, &best, &replaced);

  // The plan: buffers into their pools, the arena level replaced by one level per pool.
  for (size_t u = 0; u < units.size(); ++u)
    for (size_t k = 0; k < units[u].members.size(); ++k) {
      plan::Buffer& b = p.buffers[units[u].members[k]];
      b.level = pools[best.pool[u]].name;
      b.offset = best.offset[u] + units[u].rel[k];
    }
  auto at = std::find_if(p.levels.begin(), p.levels.end(), [&](const plan::Level& l) { return l.name == arena.name; });
  if (at == p.levels.end()) return InternalError("pass 'pools': the plan has no level '" + arena.name + "'");
  const plan::Level old = *at;
  at = p.levels.erase(at);
  std::vector<plan::Level> pool_levels;
  double before = 0, after = 0, stalls = 0;
  for (size_t q = 0; q < pools.size(); ++q) {
    plan::Level l;
    l.name = pools[q].name;
    l.kind = old.kind;
    l.capacity = pools[q].capacity;
    l.holds_activations = old.holds_activations;
    l.pool_of = arena.name;
    l.base = pools[q].base;
    std::vector<int64_t> live(p.steps.size() + 1, 0);
    for (size_t u = 0; u < units.size(); ++u) {
      if (best.pool[u] != static_cast<int>(q)) continue;
      l.used_bytes = std::max(l.used_bytes, best.offset[u] + units[u].span);
      live[units[u].first] += units[u].span;
      live[units[u].last + 1] -= units[u].span;
      before += units[u].reads * arena.read_pj_per_byte + units[u].writes * arena.write_pj_per_byte;
      after += units[u].reads * pools[q].read_pj_per_byte + units[u].writes * pools[q].write_pj_per_byte;
      stalls += (units[u].reads + units[u].writes) * pools[q].stall_cycles_per_byte;
    }
    for (size_t s = 0, sum = 0; s < p.steps.size(); ++s) {
      sum += live[s];
      l.lower_bound_bytes = std::max<int64_t>(l.lower_bound_bytes, static_cast<int64_t>(sum));
    }
    pool_levels.push_back(l);
  }
  p.levels.insert(at, pool_levels.begin(), pool_levels.end());
  p.arena_level = pools[0].name;
  plan::Metrics& m = p.metrics;
  m.peak_bytes.erase(arena.name);
  m.arena_bytes = 0;
  m.fits = true;
  for (const plan::Level& l : p.levels) {
    if (l.used_bytes > l.capacity) m.fits = false;
    if (l.pool_of == arena.name) {
      m.peak_bytes[l.name] = l.used_bytes;
      m.arena_bytes += l.used_bytes;
    }
  }
  m.overhead_pct = m.lower_bound_bytes > 0 ? 100.0 * static_cast<double>(m.arena_bytes - m.lower_bound_bytes) /
                                                 static_cast<double>(m.lower_bound_bytes)
                                           : 0.0;
  m.energy_pj += after - before;  // the arena's accesses re-charged at their pools' cost
  std::string note = "pools (" + best.order + (best.fits ? "" : "; does not fit") + "):";
  for (const plan::Level& l : pool_levels)
    note += " " + l.name + " " + Kib(static_cast<double>(l.used_bytes)) + " of " +
            Kib(static_cast<double>(l.capacity)) + ";";
  char buf[200];
  std::snprintf(buf, sizeof buf, " activation access energy %.0f pJ (%.0f pJ at level '%s''s cost), %.0f stall cycles",
                after, before, arena.name.c_str(), stalls);
  note += buf;
  if (!replaced.empty()) note += "; re-placed by " + placer + " where lower";
  p.notes.push_back(note);
  return Status::Ok();
}

}  // namespace

MakeResult MakePools(std::string_view arg) {
  return ChoicePass("pools", arg, {"tflm", "optimal"},
                    [](PlanningContext& ctx, const std::string& a) -> Status { return RunPools(ctx, a); });
}

}  // namespace sramplan::driver::passes
