// Private to the COSMA solver (src/spill/cosma*.cc); the method is described in cosma.h. Files:
//   cosma.cc        problem validation and SolveCosma (fixed mode, and the joint mode's stages)
//   cosma_fixed.cc  the fixed-order ILP: capacity and address models, building a solution, placing it
//   cosma_joint.cc  the time-indexed joint scheduling ILP (a lower bound over orders, and an order)
//   cosma_order.cc  the order search (list schedules and local search scored by a capacity simulation)
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "milp/milp.h"
#include "spill/cosma.h"
#include "spill/spill.h"
#include "support/status.h"

namespace sramplan::spill::cosma_internal {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The CBC model builder (shared with the min-peak ILP).
using Mip = milp::Model;

inline std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

inline bool IsPreloaded(const SpillTensor& t) { return t.graph_input || t.weight; }

struct Structure {
  std::vector<int> producer;                // tensor -> op, -1 for inputs/weights
  std::vector<std::vector<int>> consumers;  // tensor -> ops (ascending)
  std::vector<std::vector<int>> preds;      // op -> ops it depends on (distinct, ascending)
};

// ---------------------------------------------------------------------------------------------
// The fixed-schedule ILP (cosma_fixed.cc).

struct FixedResult {
  SpillSolution solution;
  int64_t lower_bound = 0;  // bytes
  bool optimal = false;
  bool hit_limit = false;   // a time limit stopped a stage (CBC or the exact placer) or skipped one
  int vars = 0, rows = 0;
  double seconds = 0;
  std::string status;
};

milp::Result RunMip(const Mip& mip, double time_limit_s, const std::vector<double>* start, bool verbose);

// Exact for the fixed order: (1) the capacity model gives a bound and a choice of residencies; if
// first-fit or the exact placer places them inside the budget, that is optimal. (2) Otherwise the
// capacity model with room left for fragmentation (a heuristic incumbent), then the address model with
// the bound as a row. Every stage gets only what is left of `time_limit_s`; a spent budget skips the
// remaining stages (reported as hit_limit).
StatusOr<FixedResult> SolveFixed(const SpillProblem& p, const Structure& s, const std::vector<int>& order,
                                 const SpillSolution* warm, double time_limit_s, bool verbose);

// ---------------------------------------------------------------------------------------------
// The joint scheduling ILP (cosma_joint.cc).

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
                  std::vector<int>* alap_out);

JointResult SolveJointRelaxation(const SpillProblem& p, const Structure& s, const SpillSolution* warm,
                                 double time_limit_s, bool verbose);

// ---------------------------------------------------------------------------------------------
// The order search (cosma_order.cc).

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
                          int64_t max_evals, Clock::time_point deadline, uint32_t seed, size_t elite_size);

}  // namespace sramplan::spill::cosma_internal
