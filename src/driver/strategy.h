// Strategies: named planning pipelines (schedule -> [in-place] -> place -> plan -> verify).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "plan/verifier.h"
#include "schedule/min_peak.h"
#include "target/target.h"

namespace sramplan::driver {

struct StrategyInfo {
  std::string name;
  std::string description;
};
// The tensor-level strategies: naive, linear, tflm, inplace.
const std::vector<StrategyInfo>& Strategies();
bool IsStrategy(const std::string& name);

// What a budget strategy's solver reported (for benchmarks and logs).
struct SolverReport {
  std::string method;
  bool proved_optimal = false;
  int64_t lower_bound_bytes = 0;  // proved lower bound on non-compulsory bytes
  double seconds = 0;             // solver time
  std::string detail;
  int64_t budget_bytes = 0;
  int64_t m_min = 0;              // COSMA's M_min of the problem
  int64_t m_mpmf = -1;            // min-peak footprint, when it was computed
};

struct PlanOptions {
  std::string dtype_name = "int8";  // recorded in the plan; the graph must already carry it
  int64_t batch = 1;
  std::string schedule = "model";   // "model" (the model's order) or "minpeak" (min-peak DP order)
  // Budget strategies (belady, greedy, cosma, ...): on-chip bytes for activations: a byte size, or
  // "min" (COSMA's M_min), "mpmf" (min-peak footprint), "avg" (their mean); empty: the arena level's
  // capacity.
  std::string budget;
  bool with_weights = false;  // weights also compete for the budget (loaded from DRAM, COSMA's second setting)
  double time_limit_s = 60;   // for the ILP strategies
  SolverReport* report = nullptr;  // filled in by budget strategies when set
  // vmcu: bytes per segment (the unit of every overlap shift and FC output chunk); 0: the paper's
  // rule (FC min of input and output row; Conv2D and bottleneck min(C_in, C_out)).
  int64_t segment_bytes = 0;
  // vmcu: allow a circular segment pool (tensors of an overlap chain wrap around the arena's end).
  bool circular_pool = true;
};

// Plans `g` (already converted to the planning dtype) on target `t` with `strategy`. The returned
// plan has passed PlanVerifier (VerifyPlan(...).ok()); it may still not fit (metrics.fits false).
StatusOr<plan::Plan> RunStrategy(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                                 const PlanOptions& options);

// Strategies that plan tensor replacement under a budget (spill to DRAM and reload): belady,
// greedy (each with the schedule option's order), cosma (joint ILP), cosma-fixed, cosma-dc.
const std::vector<StrategyInfo>& BudgetStrategies();
bool IsBudgetStrategy(const std::string& name);
StatusOr<plan::Plan> RunBudgetStrategy(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                                       const PlanOptions& options);

// vMCU's segment-level strategy ("vmcu"): fused inverted bottlenecks and outputs overlapping their
// dying input by the minimal safe shift. Planning only: the executor does not run its plans yet.
StatusOr<plan::Plan> RunVmcuStrategy(const ir::Graph& g, const target::Target& t, const PlanOptions& options);

// Shared by the strategies: the operator order the options ask for (with a note for the plan), and
// a plan with its header, levels, steps (one op each) and tensor table filled in.
StatusOr<analysis::Schedule> ChooseSchedule(const ir::Graph& g, const PlanOptions& options, std::string* note);
// schedule::MinPeakSchedule(g), remembered for the last few graphs (keyed by a fingerprint of what
// it reads; thread-safe): repeated strategies and budgets on one graph compute it once.
schedule::MinPeakResult CachedMinPeakSchedule(const ir::Graph& g);
plan::Plan PlanSkeleton(const ir::Graph& g, const target::Target& t, const analysis::Schedule& sched,
                        const std::string& strategy, const PlanOptions& options);

// The plan's record of one op (name, type, operands, geometry).
plan::StepOp PlanStepOp(const ir::Graph& g, const ir::Op& op);
// Fills each level's used_bytes from the buffers, then peak_bytes, arena_bytes, lower_bound_bytes,
// overhead_pct and fits of the plan's metrics.
void FinishLevelMetrics(const std::string& arena_level, int64_t lower_bound, plan::Plan* p);

// Each op reads its inputs and writes its outputs once: energy at the arena's or the weight level's
// cost, and off-chip bytes for operands read from an off-chip weight level (`in_weight_level`).
void AddOpAccesses(const ir::Graph& g, const analysis::Schedule& sched, const target::MemoryLevel& arena,
                   const target::MemoryLevel& wlevel, const std::function<bool(const ir::Tensor&)>& in_weight_level,
                   plan::Metrics* m);

// The geometry a plan step records for an op (Conv: kernel_shape, strides, pads, dilations, group).
std::map<std::string, std::vector<int64_t>> PlanOpAttrs(const ir::Op& op);

// The type the plan records for an op: the ONNX type, or "DepthwiseConv" for depthwise convolutions.
std::string PlanOpType(const ir::Graph& g, const ir::Op& op);

}  // namespace sramplan::driver
