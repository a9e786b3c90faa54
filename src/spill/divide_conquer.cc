#include "spill/divide_conquer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/regions.h"
#include "spill/cosma.h"
#include "spill/spill_bound.h"

namespace sramplan::spill {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

bool IsPreloaded(const SpillTensor& t) { return t.graph_input || t.weight; }

// Bytes paid at most for keeping tensor t across a cut by storing/spilling it and reloading it.
int64_t CrossingCost(const SpillTensor& t) {
  if (IsPreloaded(t) || t.graph_output) return t.bytes;  // reload only
  return 2 * t.bytes;                                       // spill + reload
}


// The base order cut into contiguous parts, with the access steps of every tensor.
struct Partition {
  std::vector<int> order;                  // base order: step -> op
  int n = 0, nt = 0, np = 0;               // steps, tensors, parts
  std::vector<int> first, last;            // per tensor: first / last access step (max int / -1: none)
  std::vector<int64_t> cut_cost;           // per cut position 0..n: bytes carried across it
  std::vector<std::pair<int, int>> parts;  // [begin, end) steps
  std::vector<int> first_part, last_part;  // per tensor: parts of its first / last access (-1: none)
};

// Cuts where the tensors live across them cost the fewest bytes (at most max_ops_per_part steps per
// part), and records which parts every tensor is accessed in.
Partition CutIntoParts(const SpillProblem& p, std::vector<int> order, int k_max) {
  Partition d;
  d.order = std::move(order);
  d.n = static_cast<int>(p.ops.size());
  d.nt = static_cast<int>(p.tensors.size());
  const int n = d.n, nt = d.nt;
  // Access steps of every tensor in the base order.
  d.first.assign(nt, std::numeric_limits<int>::max());
  d.last.assign(nt, -1);
  for (int st = 0; st < n; ++st) {
    const SpillOp& op = p.ops[d.order[st]];
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (int t : *list) {
        d.first[t] = std::min(d.first[t], st);
        d.last[t] = std::max(d.last[t], st);
      }
    }
  }
  // cut_cost[c]: bytes to carry every tensor accessed both before step c and from step c on; the
  // parts minimise (crossing bytes, number of parts).
  std::vector<analysis::AccessSpan> spans;
  for (int t = 0; t < nt; ++t) spans.push_back({d.first[t], d.last[t], CrossingCost(p.tensors[t])});
  d.cut_cost = analysis::CrossingCosts(n, spans);
  d.parts = analysis::MinCostPartition(d.cut_cost, k_max);
  // part_of[st]: the part running step st.
  d.np = static_cast<int>(d.parts.size());
  std::vector<int> part_of(n, 0);
  for (int k = 0; k < d.np; ++k) {
    for (int st = d.parts[k].first; st < d.parts[k].second; ++st) part_of[st] = k;
  }
  d.first_part.assign(nt, -1);
  d.last_part.assign(nt, -1);
  for (int t = 0; t < nt; ++t) {
    if (d.last[t] < 0) continue;
    d.first_part[t] = part_of[d.first[t]];
    d.last_part[t] = part_of[d.last[t]];
  }
  return d;
}

// Tensors accessed in more than one part can be pinned: kept resident from their first to their last
// part at a fixed offset at the top of the budget, out of the parts' problems, which get the budget
// minus the pinned bytes over them.
struct Pins {
  std::vector<bool> pinned;       // per tensor
  std::vector<int64_t> top;       // per pinned tensor: bytes between its end and the budget's end
  std::vector<int64_t> reserved;  // per part: pinned bytes reserved at the top of the budget
};

Pins NoPins(const Partition& d) {
  Pins pins;
  pins.pinned.assign(d.nt, false);
  pins.top.assign(d.nt, 0);
  pins.reserved.assign(d.np, 0);
  return pins;
}

struct Stitched {
  SpillSolution sol;
  int64_t lower_bound = 0;  // sum of the parts' bounds (valid only without pins)
  int proved_parts = 0;
  bool hit_limit = false;
  std::string part_details;
};

// Part k's own problem: tensors from earlier parts are its graph inputs (in DRAM), tensors needed by
// later parts its graph outputs; pinned tensors leave it. global[local tensor] = tensor of p.
SpillProblem PartProblem(const SpillProblem& p, const Partition& d, const Pins& pins, int k,
                         std::vector<int>* global) {
  auto [b, e] = d.parts[k];
  SpillProblem sub;
  sub.budget = p.budget - pins.reserved[k];
  sub.alignment = p.alignment;
  std::vector<int> local(d.nt, -1);
  global->clear();
  auto map = [&](int t) {
    if (local[t] < 0) {
      local[t] = static_cast<int>(global->size());
      global->push_back(t);
    }
    return local[t];
  };
  std::vector<bool> produced_here(d.nt, false);
  for (int st = b; st < e; ++st) {
    for (int t : p.ops[d.order[st]].outputs) produced_here[t] = true;
  }
  for (int st = b; st < e; ++st) {
    const SpillOp& op = p.ops[d.order[st]];
    SpillOp sop;
    sop.name = op.name;
    for (int t : op.inputs) {
      if (!pins.pinned[t]) sop.inputs.push_back(map(t));
    }
    for (int t : op.outputs) {
      if (!pins.pinned[t]) sop.outputs.push_back(map(t));
    }
    sub.ops.push_back(std::move(sop));
  }
  for (int t : *global) {
    SpillTensor st = p.tensors[t];
    if (produced_here[t]) {
      st.graph_input = st.weight = false;
      st.graph_output = st.graph_output || d.last[t] >= e;
    } else {
      // Comes from DRAM: a graph input or weight, or an activation of an earlier part.
      st.graph_input = !st.weight;
      st.graph_output = false;
    }
    sub.tensors.push_back(std::move(st));
  }
  return sub;
}

// Appends part k's solution to the stitched one: a boundary activation's store becomes a spill and
// its load in a later part a reload; a preloaded tensor is loaded once, then reloaded.
void StitchPart(const SpillProblem& p, const Partition& d, int k, const SpillSolution& part,
                const std::vector<int>& global, std::vector<bool>* loaded_before, std::vector<int>* stitched_step,
                SpillSolution* sol) {
  const int b = d.parts[k].first;
  for (int so : part.order) {
    (*stitched_step)[d.order[b + so]] = static_cast<int>(sol->order.size());
    sol->order.push_back(d.order[b + so]);
  }
  for (const Residency& r : part.residencies) {
    sol->residencies.push_back({global[r.tensor], r.first_step + b, r.last_step + b, r.offset});
  }
  for (const Move& m : part.moves) {
    int t = global[m.tensor];
    Move g{m.step + b, t, m.kind};
    switch (m.kind) {
      case MoveKind::kLoad:
        g.kind = (IsPreloaded(p.tensors[t]) && !(*loaded_before)[t]) ? MoveKind::kLoad : MoveKind::kReload;
        if (IsPreloaded(p.tensors[t])) (*loaded_before)[t] = true;
        break;
      case MoveKind::kStore:
        g.kind = p.tensors[t].graph_output ? MoveKind::kStore : MoveKind::kSpill;
        break;
      default:
        break;
    }
    sol->moves.push_back(g);
  }
}

// Pinned tensors: resident from their production (or a load at the start of their first part) to
// the end of their last part, at the top of the budget; graph outputs stored when produced.
void AddPinned(const SpillProblem& p, const Partition& d, const Pins& pins, const std::vector<int>& stitched_step,
               SpillSolution* sol) {
  for (int t = 0; t < d.nt; ++t) {
    if (!pins.pinned[t]) continue;
    const int end = d.parts[d.last_part[t]].second - 1;
    int begin = d.parts[d.first_part[t]].first;
    int producer_step = -1;
    for (int st = d.first[t]; st <= d.last[t] && producer_step < 0; ++st) {
      for (int x : p.ops[d.order[st]].outputs) {
        if (x == t) producer_step = stitched_step[d.order[st]];
      }
    }
    if (producer_step >= 0) begin = producer_step;
    sol->residencies.push_back({t, begin, end, p.budget - pins.top[t] - p.tensors[t].bytes});
    if (IsPreloaded(p.tensors[t])) sol->moves.push_back({begin, t, MoveKind::kLoad});
    if (producer_step >= 0 && p.tensors[t].graph_output) sol->moves.push_back({begin, t, MoveKind::kStore});
  }
}

// Solves every part with `pins` and stitches; kOutOfMemory when a part does not fit its budget.
StatusOr<Stitched> SolveParts(const SpillProblem& p, const Partition& d, const DcOptions& o, const Pins& pins,
                              double time_limit_s) {
  Clock::time_point ts = Clock::now();
  Stitched out;
  SpillSolution& sol = out.sol;
  sol.method = "cosma-dc";
  std::vector<bool> loaded_before(d.nt, false);  // preloaded tensor already copied in by an earlier part
  std::vector<int> stitched_step(d.n, -1);        // op -> step in the stitched order
  std::vector<int> global;
  for (int k = 0; k < d.np; ++k) {
    auto [b, e] = d.parts[k];
    SpillProblem sub = PartProblem(p, d, pins, k, &global);
    CosmaOptions co;
    co.all_orders_bound = false;
    if (!o.joint_parts) {
      co.fixed_order.resize(e - b);
      std::iota(co.fixed_order.begin(), co.fixed_order.end(), 0);
    }
    double left = time_limit_s - SecondsSince(ts);
    int ops_left = d.n - b;
    co.time_limit_s = std::max(0.05, left * (e - b) / std::max(1, ops_left));
    co.verbose = o.verbose;
    auto part = SolveCosma(sub, co);
    if (!part.ok()) {
      return part.status().WithContext("divide and conquer part " + std::to_string(k) + " (steps " +
                                       std::to_string(b) + ".." + std::to_string(e - 1) + ")");
    }
    out.lower_bound += part->lower_bound_bytes;
    out.proved_parts += part->proved_optimal ? 1 : 0;
    out.hit_limit |= part->hit_time_limit;
    StitchPart(p, d, k, *part, global, &loaded_before, &stitched_step, &sol);
    if (!out.part_details.empty()) out.part_details += "; ";
    char buf[200];
    std::snprintf(buf, sizeof(buf), "part %d steps %d..%d: %lld B%s%s", k, b, e - 1,
                  static_cast<long long>(part->noncompulsory_bytes), part->proved_optimal ? " (optimal)" : "",
                  pins.reserved[k] > 0 ? (" (" + std::to_string(pins.reserved[k]) + " B pinned)").c_str() : "");
    out.part_details += buf;
  }
  AddPinned(p, d, pins, stitched_step, &sol);
  auto rank = [](MoveKind kind) { return (kind == MoveKind::kLoad || kind == MoveKind::kReload) ? 0 : 1; };
  std::sort(sol.moves.begin(), sol.moves.end(), [&](const Move& a, const Move& c) {
    return std::make_tuple(a.step, rank(a.kind), a.tensor) < std::make_tuple(c.step, rank(c.kind), c.tensor);
  });
  std::sort(sol.residencies.begin(), sol.residencies.end(), [](const Residency& a, const Residency& c) {
    return std::make_tuple(a.first_step, a.tensor) < std::make_tuple(c.first_step, c.tensor);
  });
  CountBytes(p, &sol);
  Status check = CheckSolution(p, sol);
  if (!check.ok()) return InternalError("divide and conquer stitched an invalid solution: " + check.message());
  return out;
}

// Chooses pin sets: what each part needs with a set of pins, and the greedy choice.
class PinChooser {
 public:
  PinChooser(const SpillProblem& p, const Partition& d) : p_(p), d_(d), part_tensors_(d.np) {
    for (int t = 0; t < d.nt; ++t) {
      if (d.last[t] < 0) continue;
      for (int k = d.first_part[t]; k <= d.last_part[t]; ++k) part_tensors_[k].push_back(t);
    }
    // Candidates by bytes saved per byte-part reserved.
    for (int t = 0; t < d.nt; ++t) {
      if (d.last[t] >= 0 && d.first_part[t] < d.last_part[t] && p.tensors[t].bytes > 0) candidates_.push_back(t);
    }
    auto saved = [&](int t) {
      return static_cast<double>(CrossingCost(p.tensors[t])) * (d.last_part[t] - d.first_part[t]);
    };
    auto cost = [&](int t) { return static_cast<double>(p.tensors[t].bytes) * (d.last_part[t] - d.first_part[t] + 1); };
    std::stable_sort(candidates_.begin(), candidates_.end(),
                     [&](int a, int c) { return saved(a) / cost(a) > saved(c) / cost(c); });
  }

  bool has_candidates() const { return !candidates_.empty(); }

  // Greedy pins: a pin is kept when every part it spans still meets its need (peak: no traffic inside
  // the part; otherwise: the part stays solvable).
  Pins Choose(bool peak) const {
    Pins pins = NoPins(d_);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(d_.np);  // per part: occupied [top, top + bytes)
    for (int t : candidates_) {
      const int64_t bytes = p_.tensors[t].bytes;
      // Lowest distance from the top free in every part the tensor spans.
      std::vector<std::pair<int64_t, int64_t>> all;
      for (int k = d_.first_part[t]; k <= d_.last_part[t]; ++k) all.insert(all.end(), busy[k].begin(), busy[k].end());
      std::sort(all.begin(), all.end());
      int64_t top = 0;
      for (const auto& [lo, hi] : all) {
        if (top + bytes <= lo) break;
        top = std::max(top, hi);
      }
      bool ok = true;
      pins.pinned[t] = true;
      for (int k = d_.first_part[t]; k <= d_.last_part[t] && ok; ++k) {
        int64_t reserved = std::max(pins.reserved[k], top + bytes);
        ok = p_.budget - reserved >= PartNeed(k, pins.pinned, peak);
      }
      if (!ok) {
        pins.pinned[t] = false;
        continue;
      }
      pins.top[t] = top;
      for (int k = d_.first_part[t]; k <= d_.last_part[t]; ++k) {
        busy[k].emplace_back(top, top + bytes);
        pins.reserved[k] = std::max(pins.reserved[k], top + bytes);
      }
    }
    return pins;
  }

 private:
  // What part k needs with a set of pins: `peak` = bytes live at once when every unpinned tensor stays
  // from its first to its last access in the part (no traffic inside the part), else the largest
  // working set of one op (the least any budget must give).
  int64_t PartNeed(int k, const std::vector<bool>& pinned, bool peak) const {
    auto [b, e] = d_.parts[k];
    int64_t need = 0;
    if (!peak) {
      for (int st = b; st < e; ++st) {
        int64_t w = 0;
        const SpillOp& op = p_.ops[d_.order[st]];
        for (int t : op.inputs) w += pinned[t] ? 0 : p_.tensors[t].bytes;
        for (int t : op.outputs) w += pinned[t] ? 0 : p_.tensors[t].bytes;
        need = std::max(need, w);
      }
      return need;
    }
    std::vector<int> lo(d_.nt, -1), hi(d_.nt, -1);
    for (int st = b; st < e; ++st) {
      const SpillOp& op = p_.ops[d_.order[st]];
      for (const auto* list : {&op.inputs, &op.outputs}) {
        for (int t : *list) {
          if (lo[t] < 0) lo[t] = st;
          hi[t] = st;
        }
      }
    }
    std::vector<int64_t> live(e - b, 0);
    for (int t : part_tensors_[k]) {
      if (pinned[t] || lo[t] < 0) continue;
      for (int st = lo[t]; st <= hi[t]; ++st) live[st - b] += p_.tensors[t].bytes;
    }
    for (int64_t v : live) need = std::max(need, v);
    return need;
  }

  const SpillProblem& p_;
  const Partition& d_;
  std::vector<std::vector<int>> part_tensors_;  // tensors accessed in each part
  std::vector<int> candidates_;
};

// The solution's detail line: parts, bounds, the gap, and how boundary tensors were handled.
std::string Detail(const Partition& d, int k_max, const SpillSolution& sol, int proved_parts, const std::string& how,
                   const std::string& part_details) {
  int64_t boundary = 0;
  for (size_t k = 1; k < d.parts.size(); ++k) boundary += d.cut_cost[d.parts[k].first];
  char head[256];
  std::snprintf(head, sizeof(head),
                "%zu parts (max %d ops), %d proved optimal, cut bytes <= %lld, bound %lld B, gap %lld B, %.3f s%s; ",
                d.parts.size(), k_max, proved_parts, static_cast<long long>(boundary),
                static_cast<long long>(sol.lower_bound_bytes),
                static_cast<long long>(sol.noncompulsory_bytes - sol.lower_bound_bytes), sol.seconds,
                sol.hit_time_limit ? ", time limit hit" : "");
  return head + how + ": " + part_details;
}

// Reorders every part of `cur.order` (cut where the fewest bytes cross, at most k_max ops per part) by
// COSMA's joint mode inside the part: the part's own problem (boundary tensors from DRAM / to DRAM), its
// budget less the bytes of tensors the current solution keeps resident across the whole part without
// accessing them there (their on-chip state is carried, not reset). Returns the stitched order.
// Only the parts where the current solution spills or reloads are reordered (the time is shared among
// them by their op counts); a part without traffic keeps its order: its own problem (which only relaxes
// the current solution's steps there) has no traffic to remove, so its solve would only spend time.
std::vector<int> ReorderParts(const SpillProblem& p, const SpillSolution& cur, int k_max, double time_limit_s,
                              bool verbose, int* proved_parts, int* parts, bool* hit_limit) {
  Clock::time_point ts = Clock::now();
  const Partition d = CutIntoParts(p, cur.order, k_max);
  std::vector<int> out;
  out.reserve(d.n);
  std::vector<int> global;
  std::vector<char> busy(d.np, 0);  // the current solution moves non-compulsory bytes in the part
  std::vector<int> part_of_step(d.n, 0);
  for (int k = 0; k < d.np; ++k)
    for (int st = d.parts[k].first; st < d.parts[k].second; ++st) part_of_step[st] = k;
  for (const Move& m : cur.moves)
    if ((m.kind == MoveKind::kSpill || m.kind == MoveKind::kReload) && m.step >= 0 && m.step < d.n)
      busy[part_of_step[m.step]] = 1;
  int busy_ops_left = 0;
  for (int k = 0; k < d.np; ++k)
    if (busy[k]) busy_ops_left += d.parts[k].second - d.parts[k].first;
  *parts = static_cast<int>(std::count(busy.begin(), busy.end(), 1));
  for (int k = 0; k < d.np; ++k) {
    const int b = d.parts[k].first, e = d.parts[k].second;  // not a structured binding: clang 14 lambdas cannot capture one
    if (!busy[k]) {
      for (int st = b; st < e; ++st) out.push_back(d.order[st]);
      continue;
    }
    Pins pins = NoPins(d);
    for (const Residency& r : cur.residencies) {
      const int t = r.tensor;
      const bool accessed_here = d.last[t] >= 0 && !(d.last[t] < b || d.first[t] >= e) &&
                                 [&] {
                                   for (int st = std::max(b, d.first[t]); st < std::min(e, d.last[t] + 1); ++st) {
                                     const SpillOp& op = p.ops[d.order[st]];
                                     if (std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end() ||
                                         std::find(op.outputs.begin(), op.outputs.end(), t) != op.outputs.end())
                                       return true;
                                   }
                                   return false;
                                 }();
      if (!accessed_here && r.first_step <= b && r.last_step >= e - 1) pins.reserved[k] += p.tensors[t].bytes;
    }
    CosmaOptions co;
    co.all_orders_bound = false;
    const double left = time_limit_s - SecondsSince(ts);
    co.time_limit_s = std::max(0.05, left * (e - b) / std::max(1, busy_ops_left));
    busy_ops_left -= e - b;
    co.verbose = verbose;
    if (left <= 0.05) {  // time spent: the remaining parts keep their order
      *hit_limit = true;
      for (int st = b; st < e; ++st) out.push_back(d.order[st]);
      continue;
    }
    SpillProblem sub = PartProblem(p, d, pins, k, &global);
    if (MinBudget(sub) > sub.budget) {
      pins.reserved[k] = 0;
      sub = PartProblem(p, d, pins, k, &global);
    }
    auto part = SolveCosma(sub, co);
    if (part.ok() && part->hit_time_limit) *hit_limit = true;  // more time could give another order
    if (part.ok() && CheckSolution(sub, *part).ok()) {
      *proved_parts += part->proved_optimal ? 1 : 0;
      for (int so : part->order) out.push_back(d.order[b + so]);
    } else {
      for (int st = b; st < e; ++st) out.push_back(d.order[st]);
    }
  }
  return out;
}

}  // namespace

StatusOr<SpillSolution> ReorderRound(const SpillProblem& p, const SpillSolution& incumbent, int k, double time_limit_s,
                                     bool verbose, std::string* label) {
  const Clock::time_point t0 = Clock::now();
  int proved = 0, parts = 0;
  bool hit = false;
  std::vector<int> ord =
      ReorderParts(p, incumbent, std::max(2, k), 0.6 * time_limit_s, verbose, &proved, &parts, &hit);
  *label = std::to_string(parts) + " windows of <= " + std::to_string(k) + " ops reordered, " + std::to_string(proved) +
           " proved" + (hit ? ", time limit hit" : "");
  if (ord == incumbent.order) {
    // The same order back; when a window's solve stopped on time, more time could have changed it.
    SpillSolution same = incumbent;
    same.hit_time_limit = same.hit_time_limit || hit;
    return same;
  }
  CosmaOptions co;
  co.all_orders_bound = false;
  co.fixed_order = ord;
  co.time_limit_s = std::max(0.05, time_limit_s - SecondsSince(t0));
  co.verbose = verbose;
  SP_ASSIGN_OR_RETURN(SpillSolution sol, SolveCosma(p, co));
  SP_RETURN_IF_ERROR(CheckSolution(p, sol));
  sol.hit_time_limit = sol.hit_time_limit || hit;
  return sol;
}

StatusOr<SpillSolution> SolveDivideAndConquer(const SpillProblem& p, const DcOptions& o) {
  Clock::time_point t0 = Clock::now();
  SP_RETURN_IF_ERROR(ValidateSpillProblem(p));
  const int n = static_cast<int>(p.ops.size());
  std::vector<int> order = o.order;
  if (order.empty()) {
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
  }
  SP_RETURN_IF_ERROR(ValidateSpillOrder(p, order).WithContext("divide and conquer order"));
  if (o.max_ops_per_part < 2) return InvalidArgument("divide and conquer: max_ops_per_part must be >= 2");
  const int k_max = o.max_ops_per_part;
  const Partition d = CutIntoParts(p, std::move(order), k_max);
  const PinChooser chooser(p, d);

  // (1) Every boundary tensor spilled and reloaded (always feasible; its bound is the result's bound).
  const bool try_pins = chooser.has_candidates() && d.np > 1;
  const double stitch_s = 0.2 * o.time_limit_s;
  SP_ASSIGN_OR_RETURN(Stitched plain, SolveParts(p, d, o, NoPins(d), try_pins ? 0.5 * stitch_s : stitch_s));
  const int64_t lower_bound = plain.lower_bound;
  Stitched chosen = std::move(plain);
  std::string how = "boundary tensors spilled and reloaded";
  // (2) Pins that keep every part free of traffic, then pins that only keep every part solvable.
  if (try_pins && chosen.sol.noncompulsory_bytes > lower_bound) {
    std::vector<std::vector<bool>> tried;
    for (bool peak : {true, false}) {
      Pins pins = chooser.Choose(peak);
      int count = static_cast<int>(std::count(pins.pinned.begin(), pins.pinned.end(), true));
      if (count == 0 || std::find(tried.begin(), tried.end(), pins.pinned) != tried.end()) continue;
      tried.push_back(pins.pinned);
      double left = stitch_s - SecondsSince(t0);
      if (left <= 0.05) {
        chosen.hit_limit = true;
        break;
      }
      auto cand = SolveParts(p, d, o, pins, peak ? 0.5 * left : left);
      if (!cand.ok()) continue;  // a part did not fit its reduced budget
      if (cand->sol.noncompulsory_bytes < chosen.sol.noncompulsory_bytes) {
        chosen = std::move(cand).value();
        how = std::to_string(count) + " boundary tensors pinned (" + (peak ? "parts kept traffic-free" : "parts kept solvable") +
              ")";
      }
      if (chosen.sol.noncompulsory_bytes <= lower_bound) break;
    }
  }
  SpillSolution sol = std::move(chosen.sol);
  sol.lower_bound_bytes = std::min(lower_bound, sol.noncompulsory_bytes);
  sol.seconds = SecondsSince(t0);
  const std::string stitched_detail = Detail(d, k_max, sol, chosen.proved_parts, how, chosen.part_details);
  bool hit_limit = chosen.hit_limit;

  // (3) The fixed-schedule solve of the base order (so never worse than it), then rounds that reorder
  // every part exactly (joint mode inside the part) and re-place the whole stitched order with one
  // exact fixed-order solve: boundary tensors keep their on-chip/off-chip state across parts there.
  SpillBoundOptions bo;
  bo.time_limit_s = BoundTimeLimit(o.time_limit_s);
  SP_ASSIGN_OR_RETURN(SpillBound bound, LowerBoundAllOrders(p, bo));
  std::string chosen_how = "stitched parts";
  std::string log;
  // The bound decides below whether to keep searching: a bound cut short by its time limit makes
  // the result depend on the clock.
  if (bound.ilp_run && bound.ilp_hit_limit) hit_limit = true;
  auto consider = [&](StatusOr<SpillSolution> cand, const std::string& label) {
    if (!cand.ok() || !CheckSolution(p, *cand).ok()) {
      log += "; " + label + ": failed";
      return;
    }
    hit_limit |= cand->hit_time_limit;
    log += "; " + label + ": " + std::to_string(cand->noncompulsory_bytes) + " B";
    if (cand->noncompulsory_bytes < sol.noncompulsory_bytes) {
      sol = std::move(cand).value();
      chosen_how = label;
    }
  };
  const double T = o.time_limit_s;
  auto left = [&] { return T - SecondsSince(t0); };
  if (sol.noncompulsory_bytes > bound.bytes && left() > 0.05) {
    CosmaOptions co;
    co.all_orders_bound = false;
    co.fixed_order = d.order;
    co.time_limit_s = std::min(left(), 0.25 * T);
    co.verbose = o.verbose;
    consider(SolveCosma(p, co), "fixed-schedule solve of the base order");
  }
  const std::vector<int> ks = {k_max, k_max + k_max / 2, std::max(2, k_max / 2 + 2)};
  for (int r = 0; r < std::min<int>(o.reorder_rounds, static_cast<int>(ks.size())); ++r) {
    if (sol.noncompulsory_bytes <= bound.bytes) break;
    const double round_s = left() / (std::min<int>(o.reorder_rounds, static_cast<int>(ks.size())) - r);
    if (round_s <= 0.1) {
      hit_limit = true;
      break;
    }
    std::string label;
    auto cand = ReorderRound(p, sol, ks[r], round_s, o.verbose, &label);
    label = "round " + std::to_string(r + 1) + " (" + label + ")";
    if (cand.ok() && cand->order == sol.order) {
      hit_limit |= cand->hit_time_limit;
      log += "; " + label + ": order unchanged";
      continue;
    }
    consider(std::move(cand), label);
  }

  sol.method = "cosma-dc";
  sol.lower_bound_bytes = std::min(bound.bytes, sol.noncompulsory_bytes);
  sol.proved_optimal = sol.noncompulsory_bytes <= bound.bytes;
  sol.hit_time_limit = hit_limit && !sol.proved_optimal;
  sol.seconds = SecondsSince(t0);
  sol.detail = "chosen: " + chosen_how + Fmt(", %.3f s", sol.seconds) +
               (sol.hit_time_limit ? ", time limit hit" : "") + "; stitched parts: " + stitched_detail + log;
  AttachAllOrdersBound(bound, &sol);
  return sol;
}

}  // namespace sramplan::spill
