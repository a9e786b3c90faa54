// COSMA's fixed-schedule ILP (Eq. 16-17): per tensor, kept/dropped gaps between accesses; the
// capacity model (a bound), then placement of its residencies (first-fit, the exact placer), then the
// address model. See cosma.h for the method and cosma_internal.h for the files.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "placement/optimal.h"
#include "spill/cosma_internal.h"

namespace sramplan::spill::cosma_internal {
namespace {

// ---------------------------------------------------------------------------------------------
// Solutions.

void SortMoves(std::vector<Move>* moves) {
  auto rank = [](MoveKind k) {
    return (k == MoveKind::kLoad || k == MoveKind::kReload) ? 0 : 1;
  };
  std::sort(moves->begin(), moves->end(), [&](const Move& a, const Move& b) {
    return std::make_tuple(a.step, rank(a.kind), a.tensor, static_cast<int>(a.kind)) <
           std::make_tuple(b.step, rank(b.kind), b.tensor, static_cast<int>(b.kind));
  });
}

// Per tensor, for a fixed order: the steps at which it is accessed (production first, then uses).
struct Access {
  std::vector<std::vector<int>> points;  // tensor -> ascending distinct steps
};

Access AccessesFor(const SpillProblem& p, const Structure& s, const std::vector<int>& order) {
  std::vector<int> step_of(p.ops.size());
  for (size_t i = 0; i < order.size(); ++i) step_of[order[i]] = static_cast<int>(i);
  Access a;
  a.points.assign(p.tensors.size(), {});
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    auto& pts = a.points[t];
    if (s.producer[t] >= 0) pts.push_back(step_of[s.producer[t]]);
    for (int c : s.consumers[t]) pts.push_back(step_of[c]);
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
  }
  return a;
}

// A residency piece of a solution under construction (times are steps, sizes in alignment units).
struct Piece {
  int tensor, first, last;
  int64_t size;
  double x;  // the ILP's address, when known
};

// First-fit placement of pieces in `ordering` order: each goes to the lowest address where it meets no
// placed piece that overlaps it in time. False if one does not fit under `cap`.
bool FirstFit(const std::vector<Piece>& pieces, const std::vector<int>& ordering, int64_t cap,
              std::vector<int64_t>* off) {
  off->assign(pieces.size(), 0);
  std::vector<int> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (int k : ordering) {
    const Piece& pk = pieces[k];
    if (pk.size == 0) continue;
    busy.clear();
    for (int q : placed) {
      const Piece& pq = pieces[q];
      if (pq.last < pk.first || pk.last < pq.first) continue;
      busy.emplace_back((*off)[q], (*off)[q] + pq.size);
    }
    std::sort(busy.begin(), busy.end());
    int64_t o = 0;
    for (const auto& [b, e] : busy) {
      if (o + pk.size <= b) break;
      o = std::max(o, e);
    }
    if (o + pk.size > cap) return false;
    (*off)[k] = o;
    placed.push_back(k);
  }
  return true;
}

// Tries a few classic orderings of dynamic storage allocation (by size, by start, by area, and the
// ILP's own address order when known).
bool PlacePieces(const std::vector<Piece>& pieces, int64_t cap, bool use_x, std::vector<int64_t>* off) {
  const int n = static_cast<int>(pieces.size());
  std::vector<int> idx(n);
  auto attempt = [&](auto less) {
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), less);
    return FirstFit(pieces, idx, cap, off);
  };
  auto key = [&](int a) { return std::make_tuple(pieces[a].tensor, pieces[a].first); };
  if (use_x && attempt([&](int a, int b) {
        return std::make_tuple(pieces[a].x, key(a)) < std::make_tuple(pieces[b].x, key(b));
      })) {
    return true;
  }
  if (attempt([&](int a, int b) {
        return std::make_tuple(-pieces[a].size, pieces[a].first, key(a)) <
               std::make_tuple(-pieces[b].size, pieces[b].first, key(b));
      })) {
    return true;
  }
  if (attempt([&](int a, int b) {
        int64_t aa = pieces[a].size * (pieces[a].last - pieces[a].first + 1);
        int64_t ab = pieces[b].size * (pieces[b].last - pieces[b].first + 1);
        return std::make_tuple(-aa, key(a)) < std::make_tuple(-ab, key(b));
      })) {
    return true;
  }
  if (attempt([&](int a, int b) {
        return std::make_tuple(pieces[a].first, -pieces[a].size, key(a)) <
               std::make_tuple(pieces[b].first, -pieces[b].size, key(b));
      })) {
    return true;
  }
  return attempt([&](int a, int b) {
    return std::make_tuple(-(pieces[a].last - pieces[a].first), -pieces[a].size, key(a)) <
           std::make_tuple(-(pieces[b].last - pieces[b].first), -pieces[b].size, key(b));
  });
}

// What placed a set of residencies (for the solver's detail string).
struct PlaceInfo {
  std::string how;         // "first-fit", "exact placer", or empty when nothing placed them
  bool proved_infeasible = false;  // the exact placer proved that no placement fits the budget
  bool hit_limit = false;  // the exact placer stopped at its time limit
  double seconds = 0;
};

// The exact placer of placement/optimal.h (greedy portfolio, then the MiniMalloc-style search) on the
// pieces, in alignment units, looking for any placement inside `cap` units within `time_limit_s`.
bool PlaceExact(const std::vector<Piece>& pieces, int64_t cap, double time_limit_s, std::vector<int64_t>* off,
                PlaceInfo* info) {
  std::vector<placement::BufferRequest> req;
  std::vector<int> which;
  for (size_t k = 0; k < pieces.size(); ++k) {
    if (pieces[k].size == 0) continue;
    placement::BufferRequest r;
    r.id = static_cast<int>(k);
    r.bytes = pieces[k].size;
    r.alignment = 1;
    r.first_step = pieces[k].first;
    r.last_step = pieces[k].last;
    req.push_back(r);
    which.push_back(static_cast<int>(k));
  }
  placement::OptimalOptions po;
  po.time_limit_s = time_limit_s;
  po.capacity = cap;
  po.minimize = false;
  placement::OptimalResult pr = placement::PlaceBestOf(req, po);
  if (info != nullptr) {
    info->seconds += pr.seconds;
    info->hit_limit = pr.hit_limit;
    info->proved_infeasible = pr.proved_lower_bound > cap;
  }
  if (!pr.fits_capacity || pr.placement.arena_bytes > cap || pr.placement.offsets.size() != req.size()) return false;
  off->assign(pieces.size(), 0);
  for (size_t i = 0; i < req.size(); ++i) (*off)[which[i]] = pr.placement.offsets[i];
  if (info != nullptr) info->how = "exact placer";
  return true;
}

// Builds a solution for `order` from per-tensor kept gaps: keep[t][i] says whether tensor t stays
// resident between its access points i and i+1. With `address` (the ILP's unit address of the residency
// containing each point) the pieces are recompacted in that address order, which always succeeds for a
// feasible ILP solution and gives integral offsets never above the ILP's; without it (capacity model)
// a first-fit placement is tried. kOutOfMemory if no placement is found.
StatusOr<SpillSolution> BuildSolution(const SpillProblem& p, const Structure& s, const Access& acc,
                                      const std::vector<int>& order,
                                      const std::vector<std::vector<bool>>& keep,
                                      const std::vector<std::vector<double>>* address,
                                      double exact_place_s = 0, PlaceInfo* info = nullptr) {
  SpillSolution sol;
  sol.order = order;
  const int64_t unit = std::max<int64_t>(1, p.alignment);
  std::vector<Piece> pieces;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& pts = acc.points[t];
    if (pts.empty()) continue;
    bool reloaded = false;
    size_t i = 0;
    while (i < pts.size()) {
      size_t j = i;
      while (j + 1 < pts.size() && keep[t][j]) ++j;
      pieces.push_back({static_cast<int>(t), pts[i], pts[j], p.tensors[t].bytes / unit,
                        address != nullptr ? (*address)[t][i] : 0.0});
      bool produced_here = (i == 0 && s.producer[t] >= 0);
      if (!produced_here) {
        bool first_load = (i == 0 && IsPreloaded(p.tensors[t]));
        sol.moves.push_back({pts[i], static_cast<int>(t), first_load ? MoveKind::kLoad : MoveKind::kReload});
        if (!first_load) reloaded = true;
      }
      i = j + 1;
    }
    const SpillTensor& tt = p.tensors[t];
    if (s.producer[t] >= 0) {
      if (tt.graph_output) {
        sol.moves.push_back({pts[0], static_cast<int>(t), MoveKind::kStore});
      } else if (reloaded) {
        sol.moves.push_back({pts[0], static_cast<int>(t), MoveKind::kSpill});
      }
    }
  }
  std::vector<int64_t> off;
  bool placed = PlacePieces(pieces, p.budget / unit, address != nullptr, &off);
  if (info != nullptr) info->how = placed ? "first-fit" : "";
  if (!placed && exact_place_s > 0) {
    placed = PlaceExact(pieces, p.budget / unit, exact_place_s, &off, info);
  }
  if (!placed) {
    return Status(StatusCode::kOutOfMemory, "cosma: no placement found for the chosen residencies");
  }
  for (size_t k = 0; k < pieces.size(); ++k) {
    sol.residencies.push_back({pieces[k].tensor, pieces[k].first, pieces[k].last, off[k] * unit});
  }
  std::sort(sol.residencies.begin(), sol.residencies.end(), [](const Residency& a, const Residency& b) {
    return std::make_tuple(a.first_step, a.tensor) < std::make_tuple(b.first_step, b.tensor);
  });
  SortMoves(&sol.moves);
  CountBytes(p, &sol);
  return sol;
}

// ---------------------------------------------------------------------------------------------
// The fixed-schedule ILP.

// Beyond this the big-M address model rarely closes within the benchmark's limits.
constexpr int kMaxAddressModelVars = 6000;

// The fixed-order model. With `addresses` false only the byte capacity per step is enforced (a
// relaxation whose optimum is a lower bound); with it, one address per residency and above/below
// binaries for pieces that can meet in time. `min_objective` (units) is a known lower bound added as a
// row so that CBC stops as soon as an incumbent reaches it.
struct FixedModel {
  Mip mip;
  std::vector<std::vector<int>> gap, addr;
  std::vector<int> spill;
  std::vector<std::tuple<int, int, int, int, int, int>> pair_vars;  // ta, pa, tb, pb, below, above
  std::vector<double> size;
};

StatusOr<FixedModel> BuildFixedModel(const SpillProblem& p, const Structure& s, const Access& acc, int steps,
                                     bool addresses, double min_objective, double cap_scale = 1.0) {
  const int64_t unit = std::max<int64_t>(1, p.alignment);
  const double cap = static_cast<double>(p.budget / unit);
  const int nt = static_cast<int>(p.tensors.size());
  FixedModel m;
  Mip& mip = m.mip;
  m.size.resize(nt);
  for (int t = 0; t < nt; ++t) m.size[t] = static_cast<double>(p.tensors[t].bytes / unit);
  const auto& size = m.size;
  m.gap.assign(nt, {});
  m.addr.assign(nt, {});
  m.spill.assign(nt, -1);
  std::vector<std::pair<int, double>> objective_row;
  for (int t = 0; t < nt; ++t) {
    const auto& pts = acc.points[t];
    if (pts.empty()) continue;
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      m.gap[t].push_back(mip.AddCol(0, 1, size[t], true));
      objective_row.push_back({m.gap[t].back(), size[t]});
    }
    const SpillTensor& tt = p.tensors[t];
    bool plain_activation = s.producer[t] >= 0 && !tt.graph_output;
    if (plain_activation && !m.gap[t].empty() && size[t] > 0) {
      m.spill[t] = mip.AddCol(0, 1, size[t], true);
      objective_row.push_back({m.spill[t], size[t]});
      for (int g : m.gap[t]) mip.AddRow({{m.spill[t], 1}, {g, -1}}, 0, Mip::Inf());
    }
    if (addresses && size[t] > 0) {
      double hi = cap - size[t];
      for (size_t i = 0; i < pts.size(); ++i) m.addr[t].push_back(mip.AddCol(0, hi, 0, false));
      for (size_t i = 0; i + 1 < pts.size(); ++i) {
        // A kept gap: both access points are in one residency, hence at one address.
        mip.AddRow({{m.addr[t][i], 1}, {m.addr[t][i + 1], -1}, {m.gap[t][i], -hi}}, -Mip::Inf(), 0);
        mip.AddRow({{m.addr[t][i + 1], 1}, {m.addr[t][i], -1}, {m.gap[t][i], -hi}}, -Mip::Inf(), 0);
      }
    } else {
      m.addr[t].assign(pts.size(), -1);
    }
  }
  if (min_objective > 0) mip.AddRow(objective_row, min_objective, Mip::Inf());
  // Items present at each step: (tensor, point index, gap var or -1 when accessed at that step).
  struct Item {
    int tensor, point, gap;
  };
  std::vector<std::vector<Item>> at(steps);
  for (int t = 0; t < nt; ++t) {
    const auto& pts = acc.points[t];
    for (size_t i = 0; i < pts.size(); ++i) {
      at[pts[i]].push_back({t, static_cast<int>(i), -1});
      if (i + 1 < pts.size()) {
        for (int st = pts[i] + 1; st < pts[i + 1]; ++st) at[st].push_back({t, static_cast<int>(i), m.gap[t][i]});
      }
    }
  }
  // Capacity per step (implied by the addresses; it makes the LP relaxation much tighter).
  for (int st = 0; st < steps; ++st) {
    double all = 0, optional = 0;
    std::vector<std::pair<int, double>> terms;
    for (const Item& it : at[st]) {
      all += size[it.tensor];
      if (it.gap >= 0) {
        optional += size[it.tensor];
        terms.push_back({it.gap, -size[it.tensor]});
      }
    }
    if (all - optional > cap + 1e-9) {
      return InternalError("cosma: the accesses of step " + std::to_string(st) + " exceed the budget");
    }
    // cap_scale < 1 leaves room for fragmentation (a heuristic; never below what the step must hold).
    double step_cap = std::max(all - optional, std::floor(cap * cap_scale));
    if (all > step_cap && !terms.empty()) mip.AddRow(terms, -Mip::Inf(), step_cap - all);
  }
  if (!addresses) return m;
  // Pairwise non-overlap of pieces that can be resident in the same step (tensor-overlap analysis).
  std::map<std::tuple<int, int, int, int>, std::set<std::pair<int, int>>> pairs;
  for (int st = 0; st < steps; ++st) {
    const auto& items = at[st];
    for (size_t i = 0; i < items.size(); ++i) {
      if (size[items[i].tensor] == 0) continue;
      for (size_t j = i + 1; j < items.size(); ++j) {
        if (size[items[j].tensor] == 0) continue;
        Item a = items[i], b = items[j];
        if (a.tensor > b.tensor) std::swap(a, b);
        pairs[{a.tensor, a.point, b.tensor, b.point}].insert({a.gap, b.gap});
      }
    }
  }
  for (const auto& [key, conditions] : pairs) {
    auto [ta, pa, tb, pb] = key;
    int below = mip.AddCol(0, 1, 0, true);
    int above = mip.AddCol(0, 1, 0, true);
    int xa = m.addr[ta][pa], xb = m.addr[tb][pb];
    mip.AddRow({{below, 1}, {above, 1}}, -Mip::Inf(), 1);
    for (const auto& [ga, gb] : conditions) {
      std::vector<std::pair<int, double>> terms = {{below, 1}, {above, 1}};
      if (ga >= 0) terms.push_back({ga, 1});
      if (gb >= 0) terms.push_back({gb, 1});
      mip.AddRow(terms, 1, Mip::Inf());
    }
    // below: xa + sa <= xb, relaxed by cap when below = 0; above symmetric.
    mip.AddRow({{xa, 1}, {xb, -1}, {below, cap}}, -Mip::Inf(), cap - size[ta]);
    mip.AddRow({{xb, 1}, {xa, -1}, {above, cap}}, -Mip::Inf(), cap - size[tb]);
    m.pair_vars.emplace_back(ta, pa, tb, pb, below, above);
  }
  return m;
}

// Maps a solution for the same order onto the model's variables (residencies shrink to access points).
bool WarmStart(const SpillProblem& p, const Access& acc, const FixedModel& m, const SpillSolution& warm,
               std::vector<double>* start) {
  const int64_t unit = std::max<int64_t>(1, p.alignment);
  const int nt = static_cast<int>(p.tensors.size());
  start->assign(m.mip.num_cols(), 0);
  std::vector<std::vector<const Residency*>> res_of(nt);
  for (const Residency& r : warm.residencies) res_of[r.tensor].push_back(&r);
  for (int t = 0; t < nt; ++t) {
    const auto& pts = acc.points[t];
    std::vector<const Residency*> cover;
    for (int st : pts) {
      const Residency* found = nullptr;
      for (const Residency* r : res_of[t]) {
        if (r->first_step <= st && st <= r->last_step) found = r;
      }
      if (found == nullptr) return false;
      cover.push_back(found);
    }
    bool any_drop = false;
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      bool drop = cover[i] != cover[i + 1];
      (*start)[m.gap[t][i]] = drop ? 1 : 0;
      any_drop |= drop;
    }
    if (m.spill[t] >= 0) (*start)[m.spill[t]] = any_drop ? 1 : 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      if (m.addr[t][i] >= 0) (*start)[m.addr[t][i]] = static_cast<double>(cover[i]->offset / unit);
    }
  }
  for (const auto& [ta, pa, tb, pb, below, above] : m.pair_vars) {
    double xa = (*start)[m.addr[ta][pa]], xb = (*start)[m.addr[tb][pb]];
    if (xa + m.size[ta] <= xb) {
      (*start)[below] = 1;
    } else if (xb + m.size[tb] <= xa) {
      (*start)[above] = 1;
    }
    // Otherwise the two pieces are never resident together in the warm solution.
  }
  return true;
}

void ReadKeep(const FixedModel& m, const std::vector<double>& x, std::vector<std::vector<bool>>* keep,
              std::vector<std::vector<double>>* address) {
  size_t nt = m.gap.size();
  keep->assign(nt, {});
  address->assign(nt, {});
  for (size_t t = 0; t < nt; ++t) {
    for (int g : m.gap[t]) (*keep)[t].push_back(x[g] < 0.5);
    for (int a : m.addr[t]) (*address)[t].push_back(a >= 0 ? x[a] : 0.0);
  }
}

}  // namespace

milp::Result RunMip(const Mip& mip, double time_limit_s, const std::vector<double>* start, bool verbose) {
  milp::SolveOptions so;
  so.time_limit_s = time_limit_s;
  so.start = start;
  so.verbose = verbose;
  so.progress_what = "COSMA ILP (CBC)";
  return mip.Solve(so);
}

// Exact for the fixed order: (1) the capacity model gives a bound and a choice of residencies; if
// first-fit or the exact placer places them inside the budget, that is optimal. (2) Otherwise the
// capacity model with room left for fragmentation (a heuristic incumbent), then the address model with
// the bound as a row. Every stage gets only what is left of `time_limit_s`; a spent budget skips the
// remaining stages (reported as hit_limit).
StatusOr<FixedResult> SolveFixed(const SpillProblem& p, const Structure& s, const std::vector<int>& order,
                                 const SpillSolution* warm, double time_limit_s, bool verbose) {
  Clock::time_point t0 = Clock::now();
  const int64_t unit = std::max<int64_t>(1, p.alignment);
  const int steps = static_cast<int>(order.size());
  Access acc = AccessesFor(p, s, order);
  if (warm != nullptr && warm->order != order) warm = nullptr;
  FixedResult fr;
  auto left = [&]() { return time_limit_s - SecondsSince(t0); };

  SP_ASSIGN_OR_RETURN(FixedModel cm, BuildFixedModel(p, s, acc, steps, /*addresses=*/false, 0));
  std::vector<double> start;
  bool have_start = warm != nullptr && WarmStart(p, acc, cm, *warm, &start);
  // The capacity model is the bound: it gets most of the budget, but leaves some for placement.
  milp::Result r1 = RunMip(cm.mip, 0.7 * left(), have_start ? &start : nullptr, verbose);
  fr.hit_limit |= r1.hit_limit;
  fr.vars = cm.mip.num_cols();
  fr.rows = cm.mip.num_rows();
  double bound_units = std::max(0.0, std::ceil(r1.bound - 1e-6));
  std::vector<std::vector<bool>> keep;
  std::vector<std::vector<double>> address;
  std::string place_note;
  if (r1.has_solution) {
    ReadKeep(cm, r1.x, &keep, &address);
    PlaceInfo pi;
    // The exact placer gets a bounded share of what is left; the repair stages need the rest.
    const double exact_s = std::min(10.0, 0.4 * left());
    auto placed = BuildSolution(p, s, acc, order, keep, nullptr, exact_s, &pi);
    if (placed.ok()) {
      fr.solution = std::move(placed).value();
      fr.optimal = r1.optimal;
      fr.hit_limit |= r1.hit_limit;
      fr.lower_bound = r1.optimal ? fr.solution.noncompulsory_bytes
                                  : std::min<int64_t>(static_cast<int64_t>(bound_units) * unit,
                                                      fr.solution.noncompulsory_bytes);
      fr.seconds = SecondsSince(t0);
      fr.status = std::string(r1.optimal ? "optimal" : "time limit") + " (capacity model placed by " + pi.how +
                  (pi.how == "exact placer" ? Fmt(" in %.2f s", pi.seconds) : "") + ")";
      return fr;
    }
    if (exact_s > 0) {
      place_note = std::string("; exact placer ") +
                   (pi.proved_infeasible ? "proved the capacity optimum unplaceable"
                                         : pi.hit_limit ? "hit its time limit" : "found no placement") +
                   Fmt(" (%.2f s)", pi.seconds);
      fr.hit_limit |= pi.hit_limit;
    }
  }

  // The capacity optimum does not place: leave growing room for fragmentation until a placement of the
  // residencies is found (each success is a valid solution; the bound stays the capacity model's).
  std::optional<SpillSolution> incumbent;
  if (warm != nullptr) incumbent = *warm;
  std::string how = "warm start";
  for (double slack : {0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.45}) {
    if (left() <= 0.05) {
      fr.hit_limit = true;
      break;
    }
    SP_ASSIGN_OR_RETURN(FixedModel sm, BuildFixedModel(p, s, acc, steps, false, 0, 1.0 - slack));
    milp::Result rs = RunMip(sm.mip, std::min(left(), std::max(1.0, 0.1 * time_limit_s)), nullptr, verbose);
    if (!rs.has_solution) continue;
    ReadKeep(sm, rs.x, &keep, &address);
    PlaceInfo pi;
    auto placed = BuildSolution(p, s, acc, order, keep, nullptr, std::min(2.0, 0.1 * std::max(0.0, left())), &pi);
    if (!placed.ok()) continue;
    if (!incumbent || placed->noncompulsory_bytes < incumbent->noncompulsory_bytes) {
      incumbent = std::move(placed).value();
      how = "capacity model with " + Fmt("%.1f%%", 100 * slack) + " fragmentation room, " + pi.how;
    }
    break;
  }
  const double incumbent_units =
      incumbent ? static_cast<double>(incumbent->noncompulsory_bytes / unit) : Mip::Inf();
  // The exact address model, when small enough and not already closed by the incumbent.
  if (incumbent_units > bound_units) {
    if (left() <= 0.05) {
      fr.hit_limit = true;
      how += " (no time left for the address model)";
    } else {
      SP_ASSIGN_OR_RETURN(FixedModel am, BuildFixedModel(p, s, acc, steps, /*addresses=*/true, bound_units));
      if (am.mip.num_cols() <= kMaxAddressModelVars) {
        have_start = incumbent && WarmStart(p, acc, am, *incumbent, &start);
        fr.vars = am.mip.num_cols();
        fr.rows = am.mip.num_rows();
        milp::Result r = RunMip(am.mip, left(), have_start ? &start : nullptr, verbose);
        fr.hit_limit |= r.hit_limit;
        if (r.has_solution) {
          ReadKeep(am, r.x, &keep, &address);
          auto sol = BuildSolution(p, s, acc, order, keep, &address);
          if (sol.ok() && (!incumbent || sol->noncompulsory_bytes <= incumbent->noncompulsory_bytes)) {
            incumbent = std::move(sol).value();
            how = "address model";
          }
        }
        bound_units = std::max(bound_units, std::ceil(r.bound - 1e-6));
        if (r.optimal && incumbent && incumbent->noncompulsory_bytes / unit <= r.objective + 0.5) {
          bound_units = std::max(bound_units, static_cast<double>(incumbent->noncompulsory_bytes / unit));
        }
      } else {
        how += " (address model too large: " + std::to_string(am.mip.num_cols()) + " vars)";
      }
    }
  }
  if (!incumbent) {
    return Status(StatusCode::kInternal, "cosma: no placed solution for the fixed order within " +
                                             Fmt("%.1f", time_limit_s) + " s");
  }
  fr.solution = *incumbent;
  fr.lower_bound = std::min(static_cast<int64_t>(bound_units) * unit, fr.solution.noncompulsory_bytes);
  fr.optimal = fr.solution.noncompulsory_bytes <= fr.lower_bound;
  fr.seconds = SecondsSince(t0);
  fr.status = std::string(fr.optimal ? "optimal" : "gap") + " (" + how + ")" + place_note;
  return fr;
}

}  // namespace sramplan::spill::cosma_internal
