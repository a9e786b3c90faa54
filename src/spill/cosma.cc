#include "spill/cosma.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

#include "milp/milp.h"
#include "placement/optimal.h"

namespace sramplan::spill {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The CBC model builder (shared with the min-peak ILP).
using Mip = milp::Model;

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Problem structure.

bool IsPreloaded(const SpillTensor& t) { return t.graph_input || t.weight; }

struct Structure {
  std::vector<int> producer;                // tensor -> op, -1 for inputs/weights
  std::vector<std::vector<int>> consumers;  // tensor -> ops (ascending)
  std::vector<std::vector<int>> preds;      // op -> ops it depends on (distinct, ascending)
};

Structure Analyze(const SpillProblem& p) {
  Structure s;
  size_t nt = p.tensors.size();
  s.producer.assign(nt, -1);
  s.consumers.assign(nt, {});
  s.preds.assign(p.ops.size(), {});
  for (size_t o = 0; o < p.ops.size(); ++o) {
    for (int t : p.ops[o].outputs) s.producer[t] = static_cast<int>(o);
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    for (int t : p.ops[o].inputs) {
      s.consumers[t].push_back(static_cast<int>(o));
      if (s.producer[t] >= 0) s.preds[o].push_back(s.producer[t]);
    }
  }
  // View ops have no outputs here (their readers read the root tensor), so the problem does not say
  // that a view's readers come after it. Keep that order conservatively: an op without outputs
  // precedes every later op (in the problem's op list, a topological order of the model) that reads
  // one of its inputs. The order search and the joint ILP only move ops along these edges.
  for (size_t v = 0; v < p.ops.size(); ++v) {
    if (!p.ops[v].outputs.empty()) continue;
    for (int t : p.ops[v].inputs) {
      for (int c : s.consumers[t]) {
        if (c > static_cast<int>(v)) s.preds[c].push_back(static_cast<int>(v));
      }
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    std::sort(s.preds[o].begin(), s.preds[o].end());
    s.preds[o].erase(std::unique(s.preds[o].begin(), s.preds[o].end()), s.preds[o].end());
  }
  return s;
}

std::string OpLabel(const SpillProblem& p, int o) {
  return "op " + std::to_string(o) + (p.ops[o].name.empty() ? "" : " '" + p.ops[o].name + "'");
}

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

struct FixedResult {
  SpillSolution solution;
  int64_t lower_bound = 0;  // bytes
  bool optimal = false;
  bool hit_limit = false;   // a time limit stopped a stage (CBC or the exact placer) or skipped one
  int vars = 0, rows = 0;
  double seconds = 0;
  std::string status;
};

milp::Result RunMip(const Mip& mip, double time_limit_s, const std::vector<double>* start, bool verbose) {
  milp::SolveOptions so;
  so.time_limit_s = time_limit_s;
  so.start = start;
  so.verbose = verbose;
  return mip.Solve(so);
}

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

// ---------------------------------------------------------------------------------------------
// The joint scheduling ILP (byte capacity instead of addresses): a lower bound and an order.

constexpr int64_t kMaxJointOpSteps = 20000;
// Orders the search hands to the exact fixed-order solver.
constexpr size_t kEliteOrders = 8;


struct JointResult {
  std::string skipped;  // non-empty when the model was too large to build
  bool has_order = false;
  std::vector<int> order;
  int64_t lower_bound = 0;  // bytes, valid for every order and placement
  bool optimal = false;     // the relaxation was solved to optimality
  bool hit_limit = false;   // the time limit stopped CBC
  int vars = 0, rows = 0;
  double seconds = 0;
};

// ASAP/ALAP step of every op from ancestor/descendant counts (the op list is topological); returns
// the number of op-step pairs inside the windows (the size of the time-indexed model).
int64_t OpWindows(const SpillProblem& p, const Structure& s, std::vector<int>* asap_out,
                  std::vector<int>* alap_out) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<std::vector<uint64_t>> anc(n, std::vector<uint64_t>((n + 63) / 64, 0));
  for (int o = 0; o < n; ++o) {
    for (int q : s.preds[o]) {
      for (size_t w = 0; w < anc[o].size(); ++w) anc[o][w] |= anc[q][w];
      anc[o][q / 64] |= uint64_t{1} << (q % 64);
    }
  }
  std::vector<int>& asap = *asap_out;
  std::vector<int>& alap = *alap_out;
  asap.assign(n, 0);
  alap.assign(n, n - 1);
  std::vector<int> desc(n, 0);
  for (int o = 0; o < n; ++o) {
    int c = 0;
    for (uint64_t w : anc[o]) c += __builtin_popcountll(w);
    asap[o] = c;
    for (int q = 0; q < o; ++q) {
      if (anc[o][q / 64] >> (q % 64) & 1) ++desc[q];
    }
  }
  int64_t op_steps = 0;
  for (int o = 0; o < n; ++o) {
    alap[o] = n - 1 - desc[o];
    op_steps += alap[o] - asap[o] + 1;
  }
  return op_steps;
}

JointResult SolveJointRelaxation(const SpillProblem& p, const Structure& s, const SpillSolution* warm,
                                 double time_limit_s, bool verbose) {
  Clock::time_point t0 = Clock::now();
  JointResult jr;
  const int64_t unit = std::max<int64_t>(1, p.alignment);
  const double cap = static_cast<double>(p.budget / unit);
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::vector<int> asap, alap;
  // Size guard: the time-indexed model grows with the ASAP/ALAP windows (wide on graphs with long
  // parallel branches); past this CBC's root LP alone takes longer than the fixed-order path.
  {
    int64_t op_steps = OpWindows(p, s, &asap, &alap);
    if (op_steps > kMaxJointOpSteps) {
      jr.skipped = "joint ILP skipped: " + std::to_string(op_steps) + " op-step pairs (limit " +
                   std::to_string(kMaxJointOpSteps) + ")";
      return jr;
    }
  }

  Mip mip;
  std::vector<std::vector<int>> e(n);  // e[o][t - asap[o]]
  for (int o = 0; o < n; ++o) {
    for (int t = asap[o]; t <= alap[o]; ++t) e[o].push_back(mip.AddCol(0, 1, 0, true));
  }
  auto evar = [&](int o, int t) { return (t < asap[o] || t > alap[o]) ? -1 : e[o][t - asap[o]]; };
  for (int o = 0; o < n; ++o) {
    std::vector<std::pair<int, double>> terms;
    for (int v : e[o]) terms.push_back({v, 1});
    mip.AddRow(terms, 1, 1);
  }
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<int, double>> terms;
    for (int o = 0; o < n; ++o) {
      int v = evar(o, t);
      if (v >= 0) terms.push_back({v, 1});
    }
    mip.AddRow(terms, 1, 1);
  }
  // Cumulative E[o][t] = sum_{u <= t} e[o][u] (continuous; 0 before asap, 1 from alap on).
  std::vector<std::vector<int>> cum(n);
  for (int o = 0; o < n; ++o) {
    for (int t = asap[o]; t < alap[o]; ++t) {
      int v = mip.AddCol(0, 1, 0, false);
      cum[o].push_back(v);
      std::vector<std::pair<int, double>> terms = {{v, 1}, {evar(o, t), -1}};
      if (t > asap[o]) terms.push_back({cum[o][t - 1 - asap[o]], -1});
      mip.AddRow(terms, 0, 0);
    }
  }
  // A term list plus a constant for E[o][t].
  auto add_cum = [&](int o, int t, double coef, std::vector<std::pair<int, double>>* terms) -> double {
    if (t < asap[o]) return 0;
    if (t >= alap[o]) return coef;
    terms->push_back({cum[o][t - asap[o]], coef});
    return 0;
  };
  // Precedence: by step t, q may have run only if p ran before t.
  for (int q = 0; q < n; ++q) {
    for (int pr : s.preds[q]) {
      for (int t = asap[q]; t <= std::min(alap[q], alap[pr]); ++t) {
        std::vector<std::pair<int, double>> terms;
        double c = add_cum(q, t, 1, &terms) + add_cum(pr, t - 1, -1, &terms);
        if (!terms.empty()) mip.AddRow(terms, -Mip::Inf(), -c);
      }
    }
  }
  // Tensors.
  std::vector<int> lo(nt, 0), hi(nt, -1);
  std::vector<std::vector<int>> rv(nt), lv(nt);
  std::vector<int> sp(nt, -1);
  double constant = 0;
  std::vector<std::vector<std::pair<int, double>>> cap_terms(n);
  for (int a = 0; a < nt; ++a) {
    const SpillTensor& ta = p.tensors[a];
    double sz = static_cast<double>(ta.bytes / unit);
    int prod = s.producer[a];
    if (prod < 0 && s.consumers[a].empty()) continue;
    if (prod >= 0) {
      lo[a] = asap[prod];
      hi[a] = alap[prod];
    } else {
      lo[a] = n;
      hi[a] = -1;
      for (int c : s.consumers[a]) lo[a] = std::min(lo[a], asap[c]);
    }
    for (int c : s.consumers[a]) hi[a] = std::max(hi[a], alap[c]);
    bool plain = prod >= 0 && !ta.graph_output;
    bool reloadable = !s.consumers[a].empty() || prod < 0;
    if (plain && !s.consumers[a].empty() && sz > 0) sp[a] = mip.AddCol(0, 1, sz, true);
    if (prod < 0) constant -= sz;
    for (int t = lo[a]; t <= hi[a]; ++t) {
      rv[a].push_back(mip.AddCol(0, 1, 0, true));
      bool can_load = reloadable && (prod < 0 || t > lo[a]) && (prod < 0 || sp[a] >= 0 || ta.graph_output);
      lv[a].push_back(can_load ? mip.AddCol(0, 1, sz, true) : -1);
    }
    for (int t = lo[a]; t <= hi[a]; ++t) {
      int k = t - lo[a];
      std::vector<std::pair<int, double>> terms = {{rv[a][k], 1}};
      if (k > 0) terms.push_back({rv[a][k - 1], -1});
      if (prod >= 0 && evar(prod, t) >= 0) terms.push_back({evar(prod, t), -1});
      if (lv[a][k] >= 0) terms.push_back({lv[a][k], -1});
      mip.AddRow(terms, -Mip::Inf(), 0);
      if (lv[a][k] >= 0 && sp[a] >= 0) mip.AddRow({{lv[a][k], 1}, {sp[a], -1}}, -Mip::Inf(), 0);
      std::vector<int> users = s.consumers[a];
      if (prod >= 0) users.push_back(prod);
      for (int u : users) {
        int v = evar(u, t);
        if (v >= 0) mip.AddRow({{rv[a][k], 1}, {v, -1}}, 0, Mip::Inf());
      }
      if (sz > 0) cap_terms[t].push_back({rv[a][k], sz});
    }
  }
  // Liveness: once the producer ran and while a consumer has not, the tensor is resident or will be
  // reloaded later: r[a][t] + F[a][t] >= E[p][t] - E[c][t], F[a][t] = sum of reloads after t.
  for (int a = 0; a < nt; ++a) {
    int prod = s.producer[a];
    if (prod < 0 || hi[a] < lo[a] || s.consumers[a].empty()) continue;
    std::vector<int> fv(hi[a] - lo[a] + 1, -1);
    for (int t = hi[a] - 1; t >= lo[a]; --t) {
      int k = t - lo[a];
      int next_l = lv[a][k + 1];
      int next_f = fv[k + 1];
      if (next_l < 0 && next_f < 0) continue;
      fv[k] = mip.AddCol(0, Mip::Inf(), 0, false);
      std::vector<std::pair<int, double>> terms = {{fv[k], 1}};
      if (next_l >= 0) terms.push_back({next_l, -1});
      if (next_f >= 0) terms.push_back({next_f, -1});
      mip.AddRow(terms, 0, 0);
    }
    for (int c : s.consumers[a]) {
      for (int t = asap[prod]; t < alap[c]; ++t) {
        if (t < lo[a] || t > hi[a]) continue;
        int k = t - lo[a];
        std::vector<std::pair<int, double>> terms = {{rv[a][k], 1}};
        if (fv[k] >= 0) terms.push_back({fv[k], 1});
        double c0 = add_cum(prod, t, -1, &terms) + add_cum(c, t, 1, &terms);
        mip.AddRow(terms, -c0, Mip::Inf());
      }
    }
  }
  for (int t = 0; t < n; ++t) {
    double total = 0;
    for (const auto& [v, c] : cap_terms[t]) total += c;
    if (total > cap) mip.AddRow(cap_terms[t], -Mip::Inf(), cap);
  }

  // Warm start from a full solution.
  std::vector<double> start;
  bool have_start = false;
  if (warm != nullptr) {
    have_start = true;
    start.assign(mip.num_cols(), 0);
    std::vector<int> step_of(n);
    for (int i = 0; i < n; ++i) step_of[warm->order[i]] = i;
    for (int o = 0; o < n; ++o) {
      int v = evar(o, step_of[o]);
      if (v < 0) {
        have_start = false;
        break;
      }
      start[v] = 1;
    }
    std::vector<bool> spilled(nt, false);
    for (const Move& m : warm->moves) {
      if (m.kind == MoveKind::kSpill) spilled[m.tensor] = true;
    }
    for (const Residency& r : warm->residencies) {
      if (!have_start) break;
      int a = r.tensor;
      if (hi[a] < lo[a]) continue;
      int first = std::max(r.first_step, lo[a]), last = std::min(r.last_step, hi[a]);
      for (int t = first; t <= last; ++t) start[rv[a][t - lo[a]]] = 1;
      if (first > last) continue;
      bool produced = s.producer[a] >= 0 && step_of[s.producer[a]] == first;
      if (!produced) {
        int v = lv[a][first - lo[a]];
        if (v < 0) {
          have_start = false;
          break;
        }
        start[v] = 1;
      }
    }
    for (int a = 0; a < nt && have_start; ++a) {
      if (sp[a] >= 0) {
        bool any = false;
        for (int v : lv[a]) any |= (v >= 0 && start[v] > 0.5);
        start[sp[a]] = any ? 1 : 0;
      }
    }
  }

  jr.vars = mip.num_cols();
  jr.rows = mip.num_rows();
  milp::Result r = RunMip(mip, time_limit_s - SecondsSince(t0), have_start ? &start : nullptr, verbose);
  jr.hit_limit = r.hit_limit;
  double bound_units = r.bound + constant;
  jr.lower_bound = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(bound_units - 1e-6))) * unit;
  jr.optimal = r.optimal;
  if (r.has_solution) {
    std::vector<int> order(n, -1);
    bool ok = true;
    for (int o = 0; o < n && ok; ++o) {
      for (int t = asap[o]; t <= alap[o]; ++t) {
        if (r.x[evar(o, t)] > 0.5) {
          if (order[t] >= 0) ok = false;
          order[t] = o;
        }
      }
    }
    for (int v : order) ok &= v >= 0;
    if (ok && ValidateSpillOrder(p, order).ok()) {
      jr.has_order = true;
      jr.order = std::move(order);
    }
  }
  jr.seconds = SecondsSince(t0);
  return jr;
}


// ---------------------------------------------------------------------------------------------
// Order search for the joint mode on graphs too large for the time-indexed ILP (and as a warm start
// for it otherwise): randomised memory-pressure list schedules and a local search over the operator
// order, scored by a capacity-only replacement simulation (cheap, an upper bound on the fixed-order
// capacity optimum of the order), the best few orders then solved exactly by SolveFixed.

// Replacement on byte capacity only (no addresses) for an order: every op's inputs and outputs are
// made resident; when they do not fit, resident tensors not used by the op are dropped, the one whose
// next access is furthest first (Belady), a plain activation paying its spill once, every later
// reload paying its bytes. The result is a feasible solution of the fixed-order capacity model, so its
// cost bounds that model's optimum from above; addresses (fragmentation) are ignored.
class CapacitySim {
 public:
  CapacitySim(const SpillProblem& p, const Structure& s) : p_(p), s_(s) {
    const size_t nt = p.tensors.size();
    acc_.assign(nt, {});
    ptr_.assign(nt, 0);
    res_.assign(nt, 0);
    dram_.assign(nt, 0);
    loaded_.assign(nt, 0);
    mark_.assign(nt, -1);
    step_of_.assign(p.ops.size(), 0);
  }

  // Non-compulsory bytes; `hot` (optional) receives the steps at which data moved (spills, reloads).
  int64_t Cost(const std::vector<int>& order, std::vector<int>* hot = nullptr) {
    const int n = static_cast<int>(order.size());
    const int nt = static_cast<int>(p_.tensors.size());
    for (int i = 0; i < n; ++i) step_of_[order[i]] = i;
    for (int t = 0; t < nt; ++t) {
      auto& a = acc_[t];
      a.clear();
      if (s_.producer[t] >= 0) a.push_back(step_of_[s_.producer[t]]);
      for (int c : s_.consumers[t]) a.push_back(step_of_[c]);
      std::sort(a.begin(), a.end());
      ptr_[t] = 0;
      res_[t] = 0;
      dram_[t] = IsPreloaded(p_.tensors[t]) ? 1 : 0;
      loaded_[t] = 0;
      mark_[t] = -1;
    }
    if (hot != nullptr) hot->clear();
    resident_.clear();
    int64_t live = 0, cost = 0;
    for (int st = 0; st < n; ++st) {
      const SpillOp& op = p_.ops[order[st]];
      int64_t need = 0;
      for (int t : op.inputs) {
        mark_[t] = st;
        if (!res_[t]) need += p_.tensors[t].bytes;
      }
      for (int t : op.outputs) {
        mark_[t] = st;
        need += p_.tensors[t].bytes;
      }
      while (live + need > p_.budget) {
        int victim = -1, victim_next = -1;
        size_t victim_pos = 0;
        for (size_t k = 0; k < resident_.size(); ++k) {
          int t = resident_[k];
          if (mark_[t] == st) continue;
          int next = acc_[t][ptr_[t]];
          if (next > victim_next || (next == victim_next && t < victim)) {
            victim = t;
            victim_next = next;
            victim_pos = k;
          }
        }
        if (victim < 0) return std::numeric_limits<int64_t>::max() / 4;  // cannot happen: budget >= M_min
        const int64_t b = p_.tensors[victim].bytes;
        if (!dram_[victim]) {
          dram_[victim] = 1;
          cost += b;
          if (hot != nullptr) hot->push_back(st);
        }
        res_[victim] = 0;
        live -= b;
        resident_[victim_pos] = resident_.back();
        resident_.pop_back();
      }
      for (int t : op.inputs) {
        if (res_[t]) continue;
        if (IsPreloaded(p_.tensors[t]) && !loaded_[t]) {
          loaded_[t] = 1;
        } else {
          cost += p_.tensors[t].bytes;
          if (hot != nullptr) hot->push_back(st);
        }
        res_[t] = 1;
        live += p_.tensors[t].bytes;
        resident_.push_back(t);
      }
      for (int t : op.outputs) {
        res_[t] = 1;
        live += p_.tensors[t].bytes;
        resident_.push_back(t);
        if (p_.tensors[t].graph_output) dram_[t] = 1;
      }
      // Advance the access pointers; tensors without a further access leave.
      auto advance = [&](int t) {
        if (++ptr_[t] < static_cast<int>(acc_[t].size())) return;
        res_[t] = 0;
        live -= p_.tensors[t].bytes;
        for (size_t k = 0; k < resident_.size(); ++k) {
          if (resident_[k] == t) {
            resident_[k] = resident_.back();
            resident_.pop_back();
            break;
          }
        }
      };
      for (int t : op.inputs) advance(t);
      for (int t : op.outputs) advance(t);
    }
    return cost;
  }

 private:
  const SpillProblem& p_;
  const Structure& s_;
  std::vector<std::vector<int>> acc_;
  std::vector<int> ptr_, mark_, step_of_, resident_;
  std::vector<char> res_, dram_, loaded_;
};

// A randomised list schedule: among the ready ops, the one with the lowest score, where the score
// weighs (with per-schedule random weights) the bytes the op adds to the live set (outputs minus the
// inputs it is the last reader of), how recently its inputs were produced (consume soon after
// producing), and, when the live bytes plus its outputs exceed the budget, the bytes it frees.
std::vector<int> ListSchedule(const SpillProblem& p, const Structure& s, const std::vector<std::vector<int>>& succs,
                              std::mt19937& rng) {
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double w_delta = u(rng), w_recent = u(rng), w_pressure = 2 * u(rng), noise = 0.3 * u(rng);
  const double budget = static_cast<double>(std::max<int64_t>(1, p.budget));
  std::vector<int> rem(nt, 0), indeg(n, 0), produced(nt, -1);
  for (int t = 0; t < nt; ++t) rem[t] = static_cast<int>(s.consumers[t].size());
  for (int o = 0; o < n; ++o) indeg[o] = static_cast<int>(s.preds[o].size());
  std::vector<int> ready;
  for (int o = 0; o < n; ++o)
    if (indeg[o] == 0) ready.push_back(o);
  std::vector<int> order;
  order.reserve(n);
  double live = 0;
  for (int st = 0; st < n; ++st) {
    int pick = -1;
    double best = 0;
    for (size_t k = 0; k < ready.size(); ++k) {
      const int o = ready[k];
      double alloc = 0, freed = 0, recent = 0;
      for (int t : p.ops[o].outputs)
        if (rem[t] > 0) alloc += static_cast<double>(p.tensors[t].bytes);
      for (int t : p.ops[o].inputs) {
        if (p.tensors[t].weight) continue;
        if (rem[t] == 1) freed += static_cast<double>(p.tensors[t].bytes);
        if (produced[t] >= 0) recent = std::max(recent, 1.0 / (1.0 + st - produced[t]));
      }
      double score = w_delta * (alloc - freed) / budget - w_recent * recent + noise * u(rng);
      if (live + alloc > budget) score -= w_pressure * freed / budget;
      if (pick < 0 || score < best) {
        pick = static_cast<int>(k);
        best = score;
      }
    }
    const int o = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    order.push_back(o);
    for (int t : p.ops[o].outputs) {
      produced[t] = st;
      if (rem[t] > 0) live += static_cast<double>(p.tensors[t].bytes);
    }
    for (int t : p.ops[o].inputs) {
      if (--rem[t] == 0 && !p.tensors[t].weight && produced[t] >= 0) live -= static_cast<double>(p.tensors[t].bytes);
    }
    for (int q : succs[o])
      if (--indeg[q] == 0) ready.push_back(q);
  }
  return order;
}

constexpr int kMaxKicksWithoutGain = 8;

struct SearchResult {
  std::vector<std::vector<int>> elite;  // distinct orders, best simulated cost first
  std::vector<int64_t> elite_cost;
  int64_t evals = 0;
  int list_schedules = 0;
  int64_t start_cost = 0;  // best simulated cost among the given orders
  bool hit_deadline = false;
};

// Iterated local search over orders. Starts from the given orders and `list_schedules` randomised
// list schedules; moves one op to another step inside its dependency window (biased towards the steps
// where the simulation moved data), accepts moves that do not increase the simulated cost, and kicks
// the best order after a stall. Stops after `max_evals` simulations or at `deadline`.
SearchResult SearchOrders(const SpillProblem& p, const Structure& s, const std::vector<std::vector<int>>& starts,
                          int64_t max_evals, Clock::time_point deadline, uint32_t seed, size_t elite_size) {
  const int n = static_cast<int>(p.ops.size());
  SearchResult sr;
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> succs(n);
  for (int o = 0; o < n; ++o)
    for (int q : s.preds[o]) succs[q].push_back(o);
  CapacitySim sim(p, s);
  auto out_of_time = [&]() {
    if (sr.evals >= max_evals) return true;
    if ((sr.evals & 15) == 0 && Clock::now() >= deadline) {
      sr.hit_deadline = true;
      return true;
    }
    return sr.hit_deadline;
  };
  std::map<std::vector<int>, int64_t> seen_elite;
  auto offer = [&](const std::vector<int>& ord, int64_t c) {
    if (seen_elite.count(ord)) return;
    if (sr.elite.size() >= elite_size && c >= sr.elite_cost.back()) return;
    seen_elite[ord] = c;
    size_t k = 0;
    while (k < sr.elite.size() && sr.elite_cost[k] <= c) ++k;
    sr.elite.insert(sr.elite.begin() + static_cast<long>(k), ord);
    sr.elite_cost.insert(sr.elite_cost.begin() + static_cast<long>(k), c);
    if (sr.elite.size() > elite_size) {
      seen_elite.erase(sr.elite.back());
      sr.elite.pop_back();
      sr.elite_cost.pop_back();
    }
  };
  // Seeds: the given orders, then list schedules.
  std::vector<int> best;
  int64_t best_cost = std::numeric_limits<int64_t>::max();
  for (const auto& ord : starts) {
    int64_t c = sim.Cost(ord);
    ++sr.evals;
    offer(ord, c);
    if (c < best_cost) {
      best_cost = c;
      best = ord;
    }
  }
  sr.start_cost = best_cost;
  if (best_cost == 0 || n < 2) return sr;
  const int n_lists = std::max(16, std::min(200, 40000 / std::max(1, n)));
  for (int k = 0; k < n_lists && !out_of_time(); ++k) {
    std::vector<int> ord = ListSchedule(p, s, succs, rng);
    int64_t c = sim.Cost(ord);
    ++sr.evals;
    ++sr.list_schedules;
    offer(ord, c);
    if (c < best_cost) {
      best_cost = c;
      best = ord;
    }
  }
  // Local search.
  std::vector<int> cur = best, pos(n), hot, saved;
  int64_t cur_cost = sim.Cost(cur, &hot);
  ++sr.evals;
  for (int i = 0; i < n; ++i) pos[cur[i]] = i;
  int64_t since_improve = 0, kick_best = best_cost;
  int kicks_without_gain = 0;
  const int64_t stall = std::max<int64_t>(2000, 20LL * n);
  auto rotate_to = [&](int i, int j) {  // move the op at step i to step j
    if (i < j) {
      std::rotate(cur.begin() + i, cur.begin() + i + 1, cur.begin() + j + 1);
    } else {
      std::rotate(cur.begin() + j, cur.begin() + i, cur.begin() + i + 1);
    }
    for (int k = std::min(i, j); k <= std::max(i, j); ++k) pos[cur[k]] = k;
  };
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int64_t idle = 0;  // consecutive draws without a legal move (a chain has none)
  while (!out_of_time() && cur_cost > 0 && idle < 1000) {
    int i;
    if (!hot.empty() && u(rng) < 0.8) {
      int h = hot[rng() % hot.size()];
      int span = 1 + static_cast<int>(rng() % 16);
      i = std::clamp(h - span + static_cast<int>(rng() % (2 * span + 1)), 0, n - 1);
    } else {
      i = static_cast<int>(rng() % n);
    }
    // A segment of 1 to 16 consecutive ops (half of the moves: one op) moves as a block to another
    // place inside the window its outside predecessors and successors leave.
    int len = u(rng) < 0.5 ? 1 : 2 + static_cast<int>(rng() % 15);
    len = std::min(len, n - i);
    int lo = 0, hi = n - 1;
    for (int k = i; k < i + len; ++k) {
      for (int q : s.preds[cur[k]])
        if (pos[q] < i || pos[q] >= i + len) lo = std::max(lo, pos[q] + 1);
      for (int q : succs[cur[k]])
        if (pos[q] < i || pos[q] >= i + len) hi = std::min(hi, pos[q] - 1);
    }
    // New first step of the block: in [lo, i) (left) or its last step in [i + len, hi] (right).
    const int left_moves = std::max(0, i - lo), right_moves = std::max(0, hi - (i + len) + 1);
    if (left_moves + right_moves == 0) {
      ++idle;
      continue;
    }
    idle = 0;
    int pick = static_cast<int>(rng() % (left_moves + right_moves));
    int a, b;  // affected range
    if (pick < left_moves) {
      int j = lo + pick;
      a = j;
      b = i + len - 1;
      saved.assign(cur.begin() + a, cur.begin() + b + 1);
      std::rotate(cur.begin() + j, cur.begin() + i, cur.begin() + i + len);
    } else {
      int j = i + len + (pick - left_moves);  // new last step
      a = i;
      b = j;
      saved.assign(cur.begin() + a, cur.begin() + b + 1);
      std::rotate(cur.begin() + i, cur.begin() + i + len, cur.begin() + j + 1);
    }
    for (int k = a; k <= b; ++k) pos[cur[k]] = k;
    std::vector<int> new_hot;
    int64_t c = sim.Cost(cur, &new_hot);
    ++sr.evals;
    if (c <= cur_cost) {
      if (c < cur_cost) since_improve = 0;
      cur_cost = c;
      hot.swap(new_hot);
      if (c < best_cost) {
        best_cost = c;
        best = cur;
      }
      if (c <= sr.elite_cost.back() || sr.elite.size() < elite_size) offer(cur, c);
    } else {
      std::copy(saved.begin(), saved.end(), cur.begin() + a);
      for (int k = a; k <= b; ++k) pos[cur[k]] = k;
      ++since_improve;
    }
    if (since_improve > stall) {
      // Kick: restart from the best order with a few random moves; stop after kicks that bring nothing.
      if (best_cost < kick_best) {
        kick_best = best_cost;
        kicks_without_gain = 0;
      } else if (++kicks_without_gain > kMaxKicksWithoutGain) {
        break;
      }
      cur = best;
      for (int k = 0; k < n; ++k) pos[cur[k]] = k;
      for (int kick = 0; kick < 3 + n / 50; ++kick) {
        int a = static_cast<int>(rng() % n);
        int ol = 0, oh = n - 1;
        for (int q : s.preds[cur[a]]) ol = std::max(ol, pos[q] + 1);
        for (int q : succs[cur[a]]) oh = std::min(oh, pos[q] - 1);
        if (oh > ol) rotate_to(a, ol + static_cast<int>(rng() % (oh - ol + 1)));
      }
      cur_cost = sim.Cost(cur, &hot);
      ++sr.evals;
      since_improve = 0;
    }
  }
  return sr;
}

}  // namespace

Status ValidateSpillProblem(const SpillProblem& p) {
  const int nt = static_cast<int>(p.tensors.size());
  if (p.alignment < 1) return InvalidArgument("spill problem: alignment must be >= 1");
  if (p.budget < 0) return InvalidArgument("spill problem: negative budget");
  std::vector<int> producer(nt, -1);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const SpillTensor& tt = p.tensors[t];
    if (tt.bytes < 0 || tt.bytes % p.alignment != 0) {
      return InvalidArgument("spill problem: tensor '" + tt.name + "' has " + std::to_string(tt.bytes) +
                             " bytes, not a non-negative multiple of the alignment " +
                             std::to_string(p.alignment));
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    const SpillOp& op = p.ops[o];
    std::set<int> seen;
    for (int t : op.inputs) {
      if (t < 0 || t >= nt) return InvalidArgument("spill problem: " + OpLabel(p, o) + " reads a bad tensor index");
      if (!seen.insert(t).second) return InvalidArgument("spill problem: " + OpLabel(p, o) + " lists an input twice");
    }
    for (int t : op.outputs) {
      if (t < 0 || t >= nt) return InvalidArgument("spill problem: " + OpLabel(p, o) + " writes a bad tensor index");
      if (!seen.insert(t).second) return InvalidArgument("spill problem: " + OpLabel(p, o) + " lists a tensor twice");
      if (producer[t] >= 0 || IsPreloaded(p.tensors[t])) {
        return InvalidArgument("spill problem: tensor '" + p.tensors[t].name + "' has more than one producer");
      }
      producer[t] = static_cast<int>(o);
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    for (int t : p.ops[o].inputs) {
      if (!IsPreloaded(p.tensors[t]) && (producer[t] < 0 || producer[t] >= static_cast<int>(o))) {
        return InvalidArgument("spill problem: " + OpLabel(p, o) + " reads tensor '" + p.tensors[t].name +
                               "' which is not produced before it (ops must be topologically ordered)");
      }
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    int64_t need = 0;
    for (int t : p.ops[o].inputs) need += p.tensors[t].bytes;
    for (int t : p.ops[o].outputs) need += p.tensors[t].bytes;
    if (need > p.budget) {
      return Status(StatusCode::kOutOfMemory,
                    OpLabel(p, o) + " needs " + std::to_string(need) +
                        " bytes for its own inputs and outputs but the budget is " + std::to_string(p.budget) +
                        " bytes (M_min = " + std::to_string(MinBudget(p)) +
                        "); raise the budget or tile the op");
    }
  }
  return Status::Ok();
}

Status ValidateSpillOrder(const SpillProblem& p, const std::vector<int>& order) {
  const int n = static_cast<int>(p.ops.size());
  if (static_cast<int>(order.size()) != n) {
    return InvalidArgument("order has " + std::to_string(order.size()) + " steps but the problem has " +
                           std::to_string(n) + " ops");
  }
  std::vector<int> step(n, -1);
  for (int i = 0; i < n; ++i) {
    if (order[i] < 0 || order[i] >= n || step[order[i]] >= 0) {
      return InvalidArgument("order is not a permutation of the ops (bad or repeated entry at step " +
                             std::to_string(i) + ")");
    }
    step[order[i]] = i;
  }
  std::vector<int> producer(p.tensors.size(), -1);
  for (int o = 0; o < n; ++o) {
    for (int t : p.ops[o].outputs) producer[t] = o;
  }
  for (int o = 0; o < n; ++o) {
    for (int t : p.ops[o].inputs) {
      if (producer[t] >= 0 && step[producer[t]] >= step[o]) {
        return InvalidArgument("order runs " + OpLabel(p, o) + " before " + OpLabel(p, producer[t]) +
                               " which produces its input '" + p.tensors[t].name + "'");
      }
    }
  }
  return Status::Ok();
}

StatusOr<SpillSolution> SolveCosma(const SpillProblem& p, const CosmaOptions& o) {
  Clock::time_point t0 = Clock::now();
  SP_RETURN_IF_ERROR(ValidateSpillProblem(p));
  const bool fixed = !o.fixed_order.empty();
  if (fixed) SP_RETURN_IF_ERROR(ValidateSpillOrder(p, o.fixed_order).WithContext("cosma fixed_order"));
  for (const auto& w : o.warm_orders) SP_RETURN_IF_ERROR(ValidateSpillOrder(p, w).WithContext("cosma warm order"));
  Structure s = Analyze(p);
  const std::string method = fixed ? "cosma-fixed" : "cosma";

  // Warm starts.
  std::vector<std::vector<int>> orders;
  if (fixed) {
    orders.push_back(o.fixed_order);
  } else {
    std::vector<int> model(p.ops.size());
    std::iota(model.begin(), model.end(), 0);
    orders.push_back(model);
    for (const auto& w : o.warm_orders) {
      if (std::find(orders.begin(), orders.end(), w) == orders.end()) orders.push_back(w);
    }
  }
  std::optional<SpillSolution> best;
  auto consider = [&](StatusOr<SpillSolution> cand) {
    if (!cand.ok() || !CheckSolution(p, *cand).ok()) return;
    if (!best || cand->noncompulsory_bytes < best->noncompulsory_bytes) best = std::move(cand).value();
  };
  for (const auto& ord : orders) {
    consider(SolveBelady(p, ord));
    consider(SolveGreedy(p, ord));
  }
  bool hit_limit = false;
  auto finish = [&](SpillSolution sol, bool optimal, int64_t lb, std::string detail) {
    sol.method = method;
    sol.proved_optimal = optimal;
    sol.lower_bound_bytes = optimal ? sol.noncompulsory_bytes : std::min(lb, sol.noncompulsory_bytes);
    sol.seconds = SecondsSince(t0);
    sol.hit_time_limit = hit_limit && !optimal;
    sol.detail = std::move(detail) + ", " + Fmt("%.3f s", sol.seconds) +
                 (sol.hit_time_limit ? Fmt(", time limit hit (%.1f s)", o.time_limit_s) : "");
    return sol;
  };
  if (best && best->noncompulsory_bytes == 0) {
    return finish(*best, true, 0, "warm start (" + best->method + ") has no non-compulsory traffic");
  }

  if (fixed) {
    auto fr = SolveFixed(p, s, o.fixed_order, best ? &*best : nullptr, o.time_limit_s, o.verbose);
    if (!fr.ok()) {
      if (!best) return fr.status();
      return finish(*best, false, 0, "cbc failed (" + fr.status().message() + "); warm start " + best->method);
    }
    hit_limit = fr->hit_limit;
    SpillSolution sol = fr->solution;
    if (best && best->noncompulsory_bytes < sol.noncompulsory_bytes) sol = *best;  // cannot happen when optimal
    std::string detail = "cbc " + fr->status + ", " + std::to_string(fr->vars) + " vars, " +
                         std::to_string(fr->rows) + " rows";
    if (!fr->optimal) {
      detail += ", bound " + std::to_string(fr->lower_bound) + " B, gap " +
                std::to_string(sol.noncompulsory_bytes - fr->lower_bound) + " B";
    }
    return finish(sol, fr->optimal && sol.noncompulsory_bytes <= fr->lower_bound, fr->lower_bound, detail);
  }

  // Joint mode. (1) Place the candidate orders exactly with the fast fixed-order path (a quick 0 ends
  // here). (2) Search orders (list schedules + local search scored by the capacity simulation) and
  // place the best few exactly. (3) The scheduling relaxation, when small enough, gives a bound for
  // every order, and an order; place that too.
  std::optional<SpillSolution> winner = best;
  int64_t winner_fixed_bound = -1;  // the fixed-order bound of the winner's order (not a bound over orders)
  std::string detail;
  int placed = 0;
  // Per searched order: "fallback/exact" bytes (the address-aware baselines' best, then the exact
  // fixed-order solve's, '-' when it was skipped or failed), for the detail.
  std::string order_log;
  auto place = [&](const std::vector<int>& ord, double limit, bool quiet) {
    // The address-aware baselines (Belady, greedy) always give a placed, valid solution for the order:
    // the exact solve's warm start, and a candidate of their own, so that an order whose exact solve is
    // skipped, fails or runs out of time still counts with its best placed solution.
    std::optional<SpillSolution> warm;
    auto b = SolveBelady(p, ord);
    auto g = SolveGreedy(p, ord);
    if (b.ok() && CheckSolution(p, *b).ok()) warm = *b;
    if (g.ok() && CheckSolution(p, *g).ok() && (!warm || g->noncompulsory_bytes < warm->noncompulsory_bytes)) {
      warm = *g;
    }
    bool improved = false;
    auto offer = [&](const SpillSolution& cand, int64_t fixed_bound) {
      if (!winner || cand.noncompulsory_bytes < winner->noncompulsory_bytes ||
          (cand.noncompulsory_bytes == winner->noncompulsory_bytes && winner->order == ord &&
           fixed_bound > winner_fixed_bound)) {
        const bool better = !winner || cand.noncompulsory_bytes < winner->noncompulsory_bytes;
        winner = cand;
        winner_fixed_bound = fixed_bound;
        improved |= better;
      }
    };
    if (quiet) {
      order_log += (order_log.empty() ? "" : ", ") +
                   (warm ? std::to_string(warm->noncompulsory_bytes) : std::string("-")) + "/";
    }
    if (warm) offer(*warm, -1);
    if (winner && winner->order == ord && (!warm || winner->noncompulsory_bytes < warm->noncompulsory_bytes)) {
      warm = *winner;
    }
    if (limit <= 0.05) {
      hit_limit = true;
      if (!quiet) detail += "; placement skipped (time limit)";
      if (quiet) order_log += "-";
      return improved;
    }
    auto fr = SolveFixed(p, s, ord, warm ? &*warm : nullptr, limit, o.verbose);
    ++placed;
    if (!fr.ok() || !CheckSolution(p, fr->solution).ok()) {
      if (quiet) order_log += "-";
      return improved;
    }
    hit_limit |= fr->hit_limit;
    if (quiet) order_log += std::to_string(fr->solution.noncompulsory_bytes);
    if (!quiet) {
      detail += "; placement " + std::to_string(placed) + ": cbc " + fr->status + ", " + std::to_string(fr->vars) +
                " vars, " + std::to_string(fr->rows) + " rows, " + Fmt("%.2f s", fr->seconds);
    }
    offer(fr->solution, fr->lower_bound);
    return improved;
  };
  const double T = o.time_limit_s;
  auto left = [&]() { return T - SecondsSince(t0); };
  for (const auto& ord : orders) {
    if (winner && winner->noncompulsory_bytes == 0) break;
    place(ord, std::min(0.25 * T, left()), false);
  }
  std::vector<int> asap, alap;
  const bool joint_fits = o.joint_ilp && OpWindows(p, s, &asap, &alap) <= kMaxJointOpSteps;
  std::string search_detail;
  if (o.order_search && winner && winner->noncompulsory_bytes > 0 && left() > 0.1) {
    // Time shares: with the joint ILP to come the search is a warm start for it; without, it is the
    // only thing left, so it gets the time up to 90% of the limit, half simulating, half placing.
    const double end_share = joint_fits ? 0.3 : 0.9;
    const double search_s = std::max(0.0, end_share * T - (T - left()));
    const Clock::time_point sim_deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(0.5 * search_s));
    const int n = static_cast<int>(p.ops.size());
    const int64_t max_evals = o.order_search_evals > 0 ? o.order_search_evals
                                                       : std::max<int64_t>(20000, 600LL * n);
    std::vector<std::vector<int>> starts = orders;
    if (std::find(starts.begin(), starts.end(), winner->order) == starts.end()) starts.push_back(winner->order);
    SearchResult sr = SearchOrders(p, s, starts, max_evals, sim_deadline, o.seed, kEliteOrders);
    hit_limit |= sr.hit_deadline;
    const int64_t before = winner->noncompulsory_bytes;
    int exact = 0, improved = 0;
    for (size_t k = 0; k < sr.elite.size(); ++k) {
      if (winner->noncompulsory_bytes == 0) break;
      const auto& ord = sr.elite[k];
      if (std::find(orders.begin(), orders.end(), ord) != orders.end()) continue;
      // Simulated costs bound the fixed-order capacity optimum from above only; an order whose
      // simulation is far above the winner is still worth placing (fragmentation, the simulation's
      // own choices), but not once the time is spent.
      const double remaining = end_share * T - (T - left());
      if (remaining <= 0.05) {
        hit_limit = true;
        break;
      }
      // The best simulated order gets half of the placement time: its capacity optimum is the lowest,
      // and on fragmenting graphs (NAS cells) the exact placer needs seconds to place it; the other
      // orders share the rest (time an easy order leaves unused passes to the next ones).
      double share = remaining / static_cast<double>(sr.elite.size() - k);
      if (k == 0) share = std::max(share, 0.5 * remaining);
      ++exact;
      improved += place(ord, std::max(std::min(remaining, 0.05 * T), share), true);
    }
    search_detail = "; order search: " + std::to_string(sr.evals) + " simulated orders (" +
                    std::to_string(sr.list_schedules) + " list schedules), simulated cost " +
                    std::to_string(sr.start_cost) + " -> " +
                    (sr.elite_cost.empty() ? std::string("?") : std::to_string(sr.elite_cost.front())) + " B, " +
                    std::to_string(exact) + " orders solved exactly (baselines/exact B: " + order_log + "), " +
                    std::to_string(before) + " -> " +
                    std::to_string(winner->noncompulsory_bytes) + " B" +
                    (sr.hit_deadline ? " (search stopped by the time limit)" : "");
  }
  JointResult jr;
  if (winner && winner->noncompulsory_bytes == 0) {
    jr.skipped = "no joint bound needed";
  } else {
    const double jl = std::min(o.time_limit_s - SecondsSince(t0),
                               std::max(0.1 * o.time_limit_s, 0.6 * o.time_limit_s - SecondsSince(t0)));
    if (!o.joint_ilp) {
      jr.skipped = "joint ILP off";
    } else if (jl > 0.05) {
      jr = SolveJointRelaxation(p, s, winner ? &*winner : nullptr, jl, o.verbose);
      hit_limit |= jr.hit_limit;
    } else {
      jr.skipped = "joint ILP skipped: time limit";
      hit_limit = true;
    }
  }
  detail = (!jr.skipped.empty() ? jr.skipped
                                : "joint bound: cbc " + std::string(jr.optimal ? "optimal" : "time limit") + ", " +
                                      std::to_string(jr.vars) + " vars, " + std::to_string(jr.rows) + " rows, " +
                                      Fmt("%.2f s", jr.seconds)) +
           detail;
  if (jr.has_order && std::find(orders.begin(), orders.end(), jr.order) == orders.end() &&
      (!winner || winner->noncompulsory_bytes > jr.lower_bound)) {
    place(jr.order, o.time_limit_s - SecondsSince(t0), false);
  }
  detail += search_detail;
  if (!winner) return InternalError("cosma: no solution found (no warm start and CBC failed)");
  bool optimal = winner->noncompulsory_bytes <= jr.lower_bound;
  if (!optimal) {
    detail += jr.skipped.empty()
                  ? "; gap " + std::to_string(winner->noncompulsory_bytes - jr.lower_bound) + " B to the joint bound"
                  : std::string("; no bound over orders (lower bound 0 B)");
    if (winner_fixed_bound >= 0) {
      detail += "; fixed-order bound of the chosen order " + std::to_string(winner_fixed_bound) +
                " B (valid for that order only, not over orders)";
    }
  }
  return finish(*winner, optimal, jr.lower_bound, detail);
}

}  // namespace sramplan::spill
