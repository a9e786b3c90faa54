#include "spill/divide_conquer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "spill/cosma.h"

namespace sramplan::spill {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool IsPreloaded(const SpillTensor& t) { return t.graph_input || t.weight; }

// Bytes paid at most for keeping tensor t across a cut by storing/spilling it and reloading it.
int64_t CrossingCost(const SpillTensor& t) {
  if (IsPreloaded(t) || t.graph_output) return t.bytes;  // reload only
  return 2 * t.bytes;                                       // spill + reload
}

}  // namespace

StatusOr<SpillSolution> SolveDivideAndConquer(const SpillProblem& p, const DcOptions& o) {
  Clock::time_point t0 = Clock::now();
  SP_RETURN_IF_ERROR(ValidateSpillProblem(p));
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::vector<int> order = o.order;
  if (order.empty()) {
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
  }
  SP_RETURN_IF_ERROR(ValidateSpillOrder(p, order).WithContext("divide and conquer order"));
  if (o.max_ops_per_part < 2) return InvalidArgument("divide and conquer: max_ops_per_part must be >= 2");
  const int k_max = o.max_ops_per_part;

  // Access steps of every tensor in the base order.
  std::vector<int> first(nt, std::numeric_limits<int>::max()), last(nt, -1);
  for (int st = 0; st < n; ++st) {
    const SpillOp& op = p.ops[order[st]];
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (int t : *list) {
        first[t] = std::min(first[t], st);
        last[t] = std::max(last[t], st);
      }
    }
  }
  // cut_cost[c]: bytes to carry every tensor accessed both before step c and from step c on.
  std::vector<int64_t> cut_cost(n + 1, 0);
  {
    std::vector<int64_t> delta(n + 2, 0);
    for (int t = 0; t < nt; ++t) {
      if (last[t] <= first[t]) continue;
      // Cuts c in (first, last] separate accesses.
      delta[first[t] + 1] += CrossingCost(p.tensors[t]);
      delta[last[t] + 1] -= CrossingCost(p.tensors[t]);
    }
    int64_t run = 0;
    for (int c = 0; c <= n; ++c) {
      run += delta[c];
      cut_cost[c] = run;
    }
    cut_cost[0] = cut_cost[n] = 0;
  }
  // DP over cut positions: parts of at most k_max steps, minimum (crossing bytes, number of parts).
  std::vector<std::pair<int64_t, int>> best(n + 1, {std::numeric_limits<int64_t>::max(), 0});
  std::vector<int> prev(n + 1, -1);
  best[0] = {0, 0};
  for (int e = 1; e <= n; ++e) {
    for (int b = std::max(0, e - k_max); b < e; ++b) {
      if (best[b].first == std::numeric_limits<int64_t>::max()) continue;
      std::pair<int64_t, int> cand = {best[b].first + cut_cost[b], best[b].second + 1};
      if (cand < best[e]) {
        best[e] = cand;
        prev[e] = b;
      }
    }
  }
  std::vector<std::pair<int, int>> parts;  // [begin, end) steps
  for (int e = n; e > 0; e = prev[e]) parts.emplace_back(prev[e], e);
  std::reverse(parts.begin(), parts.end());

  // Tensors accessed in more than one part can be pinned: kept resident from their first to their last
  // part at a fixed offset at the top of the budget, out of the parts' problems, which get the budget
  // minus the pinned bytes over them. part_of[st]: the part running step st.
  const int np = static_cast<int>(parts.size());
  std::vector<int> part_of(n, 0);
  for (int k = 0; k < np; ++k) {
    for (int st = parts[k].first; st < parts[k].second; ++st) part_of[st] = k;
  }
  std::vector<int> first_part(nt, -1), last_part(nt, -1);
  for (int t = 0; t < nt; ++t) {
    if (last[t] < 0) continue;
    first_part[t] = part_of[first[t]];
    last_part[t] = part_of[last[t]];
  }

  struct Pins {
    std::vector<bool> pinned;      // per tensor
    std::vector<int64_t> top;      // per pinned tensor: bytes between its end and the budget's end
    std::vector<int64_t> reserved; // per part: pinned bytes reserved at the top of the budget
  };
  struct Stitched {
    SpillSolution sol;
    int64_t lower_bound = 0;  // sum of the parts' bounds (valid only without pins)
    int proved_parts = 0;
    bool hit_limit = false;
    std::string part_details;
  };

  // Solves every part with `pins` and stitches; kOutOfMemory when a part does not fit its budget.
  auto solve_parts = [&](const Pins& pins, double time_limit_s) -> StatusOr<Stitched> {
    Clock::time_point ts = Clock::now();
    Stitched out;
    SpillSolution& sol = out.sol;
    sol.method = "cosma-dc";
    std::vector<bool> loaded_before(nt, false);  // preloaded tensor already copied in by an earlier part
    std::vector<int> stitched_step(n, -1);        // op -> step in the stitched order
    for (int k = 0; k < np; ++k) {
      auto [b, e] = parts[k];
      // The part's own problem.
      SpillProblem sub;
      sub.budget = p.budget - pins.reserved[k];
      sub.alignment = p.alignment;
      std::vector<int> local(nt, -1), global;
      auto map = [&](int t) {
        if (local[t] < 0) {
          local[t] = static_cast<int>(global.size());
          global.push_back(t);
        }
        return local[t];
      };
      std::vector<bool> produced_here(nt, false);
      for (int st = b; st < e; ++st) {
        for (int t : p.ops[order[st]].outputs) produced_here[t] = true;
      }
      for (int st = b; st < e; ++st) {
        const SpillOp& op = p.ops[order[st]];
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
      for (int t : global) {
        SpillTensor st = p.tensors[t];
        if (produced_here[t]) {
          st.graph_input = st.weight = false;
          st.graph_output = st.graph_output || last[t] >= e;
        } else {
          // Comes from DRAM: a graph input or weight, or an activation of an earlier part.
          st.graph_input = !st.weight;
          st.graph_output = false;
        }
        sub.tensors.push_back(std::move(st));
      }
      CosmaOptions co;
      if (!o.joint_parts) {
        co.fixed_order.resize(e - b);
        std::iota(co.fixed_order.begin(), co.fixed_order.end(), 0);
      }
      double left = time_limit_s - SecondsSince(ts);
      int ops_left = n - b;
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
      // Stitch.
      for (int so : part->order) {
        stitched_step[order[b + so]] = static_cast<int>(sol.order.size());
        sol.order.push_back(order[b + so]);
      }
      for (const Residency& r : part->residencies) {
        sol.residencies.push_back({global[r.tensor], r.first_step + b, r.last_step + b, r.offset});
      }
      for (const Move& m : part->moves) {
        int t = global[m.tensor];
        Move g{m.step + b, t, m.kind};
        switch (m.kind) {
          case MoveKind::kLoad:
            g.kind = (IsPreloaded(p.tensors[t]) && !loaded_before[t]) ? MoveKind::kLoad : MoveKind::kReload;
            if (IsPreloaded(p.tensors[t])) loaded_before[t] = true;
            break;
          case MoveKind::kStore:
            g.kind = p.tensors[t].graph_output ? MoveKind::kStore : MoveKind::kSpill;
            break;
          default:
            break;
        }
        sol.moves.push_back(g);
      }
      if (!out.part_details.empty()) out.part_details += "; ";
      char buf[200];
      std::snprintf(buf, sizeof(buf), "part %d steps %d..%d: %lld B%s%s", k, b, e - 1,
                    static_cast<long long>(part->noncompulsory_bytes), part->proved_optimal ? " (optimal)" : "",
                    pins.reserved[k] > 0 ? (" (" + std::to_string(pins.reserved[k]) + " B pinned)").c_str() : "");
      out.part_details += buf;
    }
    // Pinned tensors: resident from their production (or a load at the start of their first part) to
    // the end of their last part, at the top of the budget; graph outputs stored when produced.
    for (int t = 0; t < nt; ++t) {
      if (!pins.pinned[t]) continue;
      const int end = parts[last_part[t]].second - 1;
      int begin = parts[first_part[t]].first;
      int producer_step = -1;
      for (int st = first[t]; st <= last[t] && producer_step < 0; ++st) {
        for (int x : p.ops[order[st]].outputs) {
          if (x == t) producer_step = stitched_step[order[st]];
        }
      }
      if (producer_step >= 0) begin = producer_step;
      sol.residencies.push_back({t, begin, end, p.budget - pins.top[t] - p.tensors[t].bytes});
      if (IsPreloaded(p.tensors[t])) sol.moves.push_back({begin, t, MoveKind::kLoad});
      if (producer_step >= 0 && p.tensors[t].graph_output) sol.moves.push_back({begin, t, MoveKind::kStore});
    }
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
  };

  // Per part, what it needs with a set of pins: `peak` = bytes live at once when every unpinned tensor
  // stays from its first to its last access in the part (no traffic inside the part), else the largest
  // working set of one op (the least any budget must give).
  std::vector<std::vector<int>> part_tensors(np);  // tensors accessed in each part
  for (int t = 0; t < nt; ++t) {
    if (last[t] < 0) continue;
    for (int k = first_part[t]; k <= last_part[t]; ++k) part_tensors[k].push_back(t);
  }
  auto part_need = [&](int k, const std::vector<bool>& pinned, bool peak) {
    auto [b, e] = parts[k];
    int64_t need = 0;
    if (!peak) {
      for (int st = b; st < e; ++st) {
        int64_t w = 0;
        const SpillOp& op = p.ops[order[st]];
        for (int t : op.inputs) w += pinned[t] ? 0 : p.tensors[t].bytes;
        for (int t : op.outputs) w += pinned[t] ? 0 : p.tensors[t].bytes;
        need = std::max(need, w);
      }
      return need;
    }
    std::vector<int> lo(nt, -1), hi(nt, -1);
    for (int st = b; st < e; ++st) {
      const SpillOp& op = p.ops[order[st]];
      for (const auto* list : {&op.inputs, &op.outputs}) {
        for (int t : *list) {
          if (lo[t] < 0) lo[t] = st;
          hi[t] = st;
        }
      }
    }
    std::vector<int64_t> live(e - b, 0);
    for (int t : part_tensors[k]) {
      if (pinned[t] || lo[t] < 0) continue;
      for (int st = lo[t]; st <= hi[t]; ++st) live[st - b] += p.tensors[t].bytes;
    }
    for (int64_t v : live) need = std::max(need, v);
    return need;
  };
  // Greedy pin sets: candidates by bytes saved per byte-part reserved; a pin is kept when every part it
  // spans still meets its need (peak: no traffic inside the part; otherwise: the part stays solvable).
  std::vector<int> candidates;
  for (int t = 0; t < nt; ++t) {
    if (last[t] >= 0 && first_part[t] < last_part[t] && p.tensors[t].bytes > 0) candidates.push_back(t);
  }
  auto saved = [&](int t) { return static_cast<double>(CrossingCost(p.tensors[t])) * (last_part[t] - first_part[t]); };
  auto cost = [&](int t) { return static_cast<double>(p.tensors[t].bytes) * (last_part[t] - first_part[t] + 1); };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int a, int c) { return saved(a) / cost(a) > saved(c) / cost(c); });
  auto choose_pins = [&](bool peak) {
    Pins pins;
    pins.pinned.assign(nt, false);
    pins.top.assign(nt, 0);
    pins.reserved.assign(np, 0);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(np);  // per part: occupied [top, top + bytes)
    for (int t : candidates) {
      const int64_t bytes = p.tensors[t].bytes;
      // Lowest distance from the top free in every part the tensor spans.
      std::vector<std::pair<int64_t, int64_t>> all;
      for (int k = first_part[t]; k <= last_part[t]; ++k) all.insert(all.end(), busy[k].begin(), busy[k].end());
      std::sort(all.begin(), all.end());
      int64_t top = 0;
      for (const auto& [lo, hi] : all) {
        if (top + bytes <= lo) break;
        top = std::max(top, hi);
      }
      bool ok = true;
      pins.pinned[t] = true;
      for (int k = first_part[t]; k <= last_part[t] && ok; ++k) {
        int64_t reserved = std::max(pins.reserved[k], top + bytes);
        ok = p.budget - reserved >= part_need(k, pins.pinned, peak);
      }
      if (!ok) {
        pins.pinned[t] = false;
        continue;
      }
      pins.top[t] = top;
      for (int k = first_part[t]; k <= last_part[t]; ++k) {
        busy[k].emplace_back(top, top + bytes);
        pins.reserved[k] = std::max(pins.reserved[k], top + bytes);
      }
    }
    return pins;
  };

  // (1) Every boundary tensor spilled and reloaded (always feasible; its bound is the result's bound).
  Pins none;
  none.pinned.assign(nt, false);
  none.top.assign(nt, 0);
  none.reserved.assign(np, 0);
  const bool try_pins = !candidates.empty() && np > 1;
  SP_ASSIGN_OR_RETURN(Stitched plain, solve_parts(none, try_pins ? 0.5 * o.time_limit_s : o.time_limit_s));
  const int64_t lower_bound = plain.lower_bound;
  Stitched chosen = std::move(plain);
  std::string how = "boundary tensors spilled and reloaded";
  // (2) Pins that keep every part free of traffic, then pins that only keep every part solvable.
  if (try_pins && chosen.sol.noncompulsory_bytes > lower_bound) {
    std::vector<std::vector<bool>> tried;
    for (bool peak : {true, false}) {
      Pins pins = choose_pins(peak);
      int count = static_cast<int>(std::count(pins.pinned.begin(), pins.pinned.end(), true));
      if (count == 0 || std::find(tried.begin(), tried.end(), pins.pinned) != tried.end()) continue;
      tried.push_back(pins.pinned);
      double left = o.time_limit_s - SecondsSince(t0);
      if (left <= 0.05) {
        chosen.hit_limit = true;
        break;
      }
      auto cand = solve_parts(pins, peak ? 0.5 * left : left);
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
  const int proved_parts = chosen.proved_parts;
  const std::string part_details = chosen.part_details;
  sol.lower_bound_bytes = std::min(lower_bound, sol.noncompulsory_bytes);
  sol.proved_optimal = sol.noncompulsory_bytes <= lower_bound;
  sol.hit_time_limit = chosen.hit_limit && !sol.proved_optimal;
  sol.seconds = SecondsSince(t0);
  int64_t boundary = 0;
  for (size_t k = 1; k < parts.size(); ++k) boundary += cut_cost[parts[k].first];
  char head[256];
  std::snprintf(head, sizeof(head),
                "%zu parts (max %d ops), %d proved optimal, cut bytes <= %lld, bound %lld B, gap %lld B, %.3f s%s; ",
                parts.size(), k_max, proved_parts, static_cast<long long>(boundary),
                static_cast<long long>(sol.lower_bound_bytes),
                static_cast<long long>(sol.noncompulsory_bytes - sol.lower_bound_bytes), sol.seconds,
                sol.hit_time_limit ? ", time limit hit" : "");
  sol.detail = head + how + ": " + part_details;
  return sol;
}

}  // namespace sramplan::spill
