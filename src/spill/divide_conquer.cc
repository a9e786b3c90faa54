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

  SpillSolution sol;
  sol.method = "cosma-dc";
  std::vector<bool> loaded_before(nt, false);  // preloaded tensor already copied in by an earlier part
  int64_t lower_bound = 0;
  int proved_parts = 0;
  std::string part_details;
  for (size_t k = 0; k < parts.size(); ++k) {
    auto [b, e] = parts[k];
    // The part's own problem.
    SpillProblem sub;
    sub.budget = p.budget;
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
      for (int t : op.inputs) sop.inputs.push_back(map(t));
      for (int t : op.outputs) sop.outputs.push_back(map(t));
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
    double left = o.time_limit_s - SecondsSince(t0);
    int ops_left = n - b;
    co.time_limit_s = std::max(0.5, left * (e - b) / std::max(1, ops_left));
    co.verbose = o.verbose;
    auto part = SolveCosma(sub, co);
    if (!part.ok()) {
      return part.status().WithContext("divide and conquer part " + std::to_string(k) + " (steps " +
                                       std::to_string(b) + ".." + std::to_string(e - 1) + ")");
    }
    lower_bound += part->lower_bound_bytes;
    proved_parts += part->proved_optimal ? 1 : 0;
    // Stitch.
    for (int so : part->order) {
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
    if (!part_details.empty()) part_details += "; ";
    char buf[160];
    std::snprintf(buf, sizeof(buf), "part %zu steps %d..%d: %lld B%s", k, b, e - 1,
                  static_cast<long long>(part->noncompulsory_bytes), part->proved_optimal ? " (optimal)" : "");
    part_details += buf;
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
  sol.lower_bound_bytes = std::min(lower_bound, sol.noncompulsory_bytes);
  sol.proved_optimal = sol.noncompulsory_bytes <= lower_bound;
  sol.seconds = SecondsSince(t0);
  int64_t boundary = 0;
  for (size_t k = 1; k < parts.size(); ++k) boundary += cut_cost[parts[k].first];
  char head[256];
  std::snprintf(head, sizeof(head),
                "%zu parts (max %d ops), %d proved optimal, cut bytes <= %lld, bound %lld B, gap %lld B, %.3f s: ",
                parts.size(), k_max, proved_parts, static_cast<long long>(boundary),
                static_cast<long long>(sol.lower_bound_bytes),
                static_cast<long long>(sol.noncompulsory_bytes - sol.lower_bound_bytes), sol.seconds);
  sol.detail = head + part_details;
  return sol;
}

}  // namespace sramplan::spill
