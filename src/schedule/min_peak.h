// Min-peak-memory operator orders (MPMF): an exact dynamic programme over the sets of scheduled ops
// (Serenity's formulation); when the exact search exceeds its limits, the hierarchical mode
// (schedule/hierarchical.h: regions scheduled exactly, recombined; plus a beam search on small
// graphs).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"
#include "support/progress.h"

namespace sramplan::schedule {

struct MinPeakOptions {
  int64_t max_states = 300'000;  // exact search gives up (and falls back) above this
  int beam_width = 1000;         // states kept per layer by the beam fallback
  double time_limit_s =
      10;  // for the exact search (the fallbacks get their own budget of the same size)
  bool hierarchical_fallback = true;  // try HierarchicalMinPeak when the exact search gives up
  // Issue 19 (--time-limit): time_limit_s bounds the whole search: the exact search gets half of
  // it and the fallbacks what remains (at least 0.05 s), instead of a budget of their own each.
  bool total_time_limit = false;
};

struct MinPeakResult {
  analysis::Schedule order;
  int64_t peak_bytes = 0;  // max over steps of live bytes of `order` (views alias, outputs stay)
  int64_t model_order_peak = 0;  // the same measure for the model's own order
  int64_t lower_bound = 0;  // proven lower bound: the exact optimum, or a bound no order can beat
  bool proved_optimal = false;
  int64_t states = 0;  // DP states expanded
  double seconds = 0;
  std::string method;  // "exact-dp", "hierarchical" or "beam"
  int regions = 0;     // hierarchical: regions scheduled separately (0 otherwise)
};

// The peak live bytes of running `order` (same liveness model as analysis::ComputeLiveness).
int64_t PeakOfOrder(const ir::Graph& g, const analysis::Schedule& order);

MinPeakResult MinPeakSchedule(const ir::Graph& g, const MinPeakOptions& options = {});

// The machinery shared by the exact search and the hierarchical mode. Not a stable API.
namespace internal {

using Clock = std::chrono::steady_clock;

// The memory model of a (sub)problem. Ops ("micro ops") create and read root buffers (views alias
// their root; constants own nothing). The search schedules nodes; a node runs a fixed sequence of
// micro ops (one op, or a collapsed chain).
struct MemProblem {
  int num_micro = 0;
  std::vector<std::vector<int>> uses;   // per micro op: root buffers read (through views), unique
  std::vector<std::vector<int>> defs;   // per micro op: root buffers created
  std::vector<int64_t> bytes;           // per buffer
  std::vector<std::vector<int>> users;  // per buffer: micro ops of this problem reading it
  std::vector<bool> pinned;             // per buffer: never freed in this problem
  int64_t initial = 0;                  // bytes live before the first op
  std::vector<std::vector<int>> nodes;  // per node: its micro ops in execution order
  std::vector<std::vector<int>> preds;  // per node: nodes that must run before, unique
  std::vector<int> node_of;             // per micro op
  std::vector<int> pos_in_node;         // per micro op
};

// The whole graph, one node per op (node = micro op = op id). Buffers defined by no op are the
// graph inputs; they are live from the start.
MemProblem BuildMemProblem(const ir::Graph& g);
// One node per micro op, predecessors from `micro_preds`.
void SetSingletonNodes(MemProblem* m, const std::vector<std::vector<int>>& micro_preds);
// Peak of running the nodes in `order` (a valid node order).
int64_t PeakOfNodeOrder(const MemProblem& m, const std::vector<int>& order);
// Live bytes after each node of `order` (mem_after[i] after order[i]).
std::vector<int64_t> MemAfterNodes(const MemProblem& m, const std::vector<int>& order);

struct SearchLimits {
  int64_t max_states = 300'000;
  double time_limit_s = 10;
  int beam_width = 1000;
  Clock::time_point start = Clock::now();
  // Progress on stderr (support/progress.h) with the best peak known and the bound; null: none.
  Progress* progress = nullptr;
  int64_t best = -1, bound = -1;
};
// Layered search over node sets. exact: every state with peak <= bound, optimal if it returns true
// (false: limits exceeded, or no order has peak <= bound); beam: the best `beam_width` per layer.
// `states` is incremented by the states expanded (max_states limits this call's own count).
bool SearchOrder(const MemProblem& m, int64_t bound, bool exact, const SearchLimits& limits,
                 std::vector<int>* order, int64_t* peak, int64_t* states);

}  // namespace internal
}  // namespace sramplan::schedule
