// Strategies: named pipelines of passes over a PlanningContext (driver/pass.h, driver/context.h).
// The one table of strategies (driver/strategies.cc) is what the CLI's help, `--strategy all`, the
// error for an unknown name, `codegen`, `verify` and `sramplan strategies` read.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "plan/plan.h"
#include "target/target.h"

namespace sramplan::driver {

// What a budget strategy's solver reported (for benchmarks and logs).
struct SolverReport {
  std::string method;
  bool proved_optimal = false;
  int64_t lower_bound_bytes = 0;  // proved lower bound on non-compulsory bytes
  double seconds = 0;             // solver time
  std::string detail;
  int64_t budget_bytes = 0;
  int64_t m_min = 0;    // COSMA's M_min of the problem
  int64_t m_mpmf = -1;  // min-peak footprint, when it was computed
  int64_t all_orders_lower_bound_bytes = -1;  // COSMA strategies: bound over every order (-1: none)
};

// The least time a pass gets once a plan's --time-limit is used up: its searches then return the best
// solution they start from (greedy orders and placements, the first feasible ILP solution).
inline constexpr double kMinStageSeconds = 0.05;

struct PlanOptions {
  std::string dtype_name = "int8";  // recorded in the plan; the graph must already carry it
  int64_t batch = 1;
  std::string schedule = "model";  // "model" (the model's order) or "minpeak" (min-peak DP order)
  // Budget strategies (belady, greedy, cosma, ...): on-chip bytes for activations: a byte size, or
  // "min" (COSMA's M_min), "mpmf" (min-peak footprint), "avg" (their mean); empty: the arena
  // level's capacity.
  std::string budget;
  bool with_weights =
      false;  // weights also compete for the budget (loaded from DRAM, COSMA's second setting)
  double time_limit_s = 60;        // for the ILP strategies
  // Issue 19: > 0 (the CLI's --time-limit when given): also caps the other searches' own limits
  // (min-peak DP 10 s, exact placement's 30 s safety net); 0: their defaults.
  // It is a budget for the whole plan: RunStrategy gives each pass the time that remains of it (in
  // both this field and time_limit_s, never below kMinStageSeconds), so the stages of one plan
  // together take about the limit, not a multiple of it.
  double search_time_limit_s = 0;
  SolverReport* report = nullptr;  // filled in by budget strategies when set
  // vmcu: bytes per segment (the unit of every overlap shift and FC output chunk); 0: the paper's
  // rule (FC min of input and output row; Conv2D and bottleneck min(C_in, C_out)).
  int64_t segment_bytes = 0;
  // vmcu: allow a circular segment pool (tensors of an overlap chain wrap around the arena's end).
  bool circular_pool = true;
};

// Which strategies `--strategy all` stands for.
enum class AllGroup {
  kTensor,  // without --budget: the strategies that place the whole model on chip
  kBudget,  // with --budget: the replacement strategies compared in the COSMA benchmarks
  kNone,    // never in 'all' (run by name)
};

// What a strategy plans with: whole tensors in one arena, segments (vMCU), or a budget with spills.
// kFused: Optimus groups executed tile by tile in a global buffer in front of DRAM.
// kPools: whole tensors split over the memory pools of the arena level (targets with "pools" only).
enum class Family { kTensor, kSegment, kBudget, kFused, kPools };

// One row of the strategy table.
struct StrategySpec {
  std::string name;
  std::string description;
  AllGroup all = AllGroup::kTensor;
  bool needs_dram = false;   // spills to a DRAM level of the target
  bool int8_only = false;    // its plans execute only with the int8 kernels (verify, codegen)
  bool uses_budget = false;  // reads --budget, --with-weights, --time-limit
  std::vector<std::string> passes;  // the pipeline, "name[:arg]" each (driver/pass.h)
  Family family = Family::kTensor;
};

// The strategy table, in the order help and `all` list them.
const std::vector<StrategySpec>& Strategies();
// The rows of one family, in table order.
std::vector<StrategySpec> StrategiesOf(Family family);
// The row named `name`, or nullptr.
const StrategySpec* FindStrategy(const std::string& name);
bool IsStrategy(const std::string& name);
// The names of the rows `all` stands for in `group`.
std::vector<std::string> StrategyNames(AllGroup group);
// The error for a name that is not in the table: "unknown <what> 'name'; choose one of ..." listing
// every strategy (and 'all' when allowed).
Status UnknownStrategy(const std::string& name, bool all_allowed, const std::string& what = "strategy");

struct PlanningContext;
// Called after each pass with the pass's name (plan --dump-after / --dump-all).
using AfterPass = std::function<Status(const std::string& pass, const PlanningContext& ctx)>;

// Plans `g` (already converted to the planning dtype) on target `t` with `strategy` by running its
// pipeline. The returned plan has passed PlanVerifier (VerifyPlan(...).ok()); it may still not fit
// (metrics.fits false).
StatusOr<plan::Plan> RunStrategy(const ir::Graph& g, const target::Target& t,
                                 const std::string& strategy, const PlanOptions& options,
                                 const AfterPass& after_pass = nullptr);

}  // namespace sramplan::driver
