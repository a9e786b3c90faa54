// Min-peak-memory operator orders (MPMF): an exact dynamic programme over the sets of scheduled ops
// (Serenity's formulation), with a beam fallback for graphs whose state space is too large.
#pragma once

#include <string>

#include "analysis/liveness.h"
#include "ir/graph.h"

namespace sramplan::schedule {

struct MinPeakOptions {
  int64_t max_states = 300'000;  // exact search gives up (and falls back to beam) above this
  int beam_width = 1000;         // states kept per layer by the fallback
  double time_limit_s = 10;      // for the exact search
};

struct MinPeakResult {
  analysis::Schedule order;
  int64_t peak_bytes = 0;         // max over steps of live bytes of `order` (views alias, outputs stay)
  int64_t model_order_peak = 0;   // the same measure for the model's own order
  int64_t lower_bound = 0;        // proven lower bound: the exact optimum, or max over ops of its own working set
  bool proved_optimal = false;
  int64_t states = 0;             // DP states expanded
  double seconds = 0;
  std::string method;             // "exact-dp" or "beam"
};

// The peak live bytes of running `order` (same liveness model as analysis::ComputeLiveness).
int64_t PeakOfOrder(const ir::Graph& g, const analysis::Schedule& order);

MinPeakResult MinPeakSchedule(const ir::Graph& g, const MinPeakOptions& options = {});

}  // namespace sramplan::schedule
