// Strategies: named planning pipelines (schedule -> [in-place] -> place -> plan -> verify).
#pragma once

#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "plan/verifier.h"
#include "target/target.h"

namespace sramplan::driver {

struct StrategyInfo {
  std::string name;
  std::string description;
};
// The tensor-level strategies: naive, linear, tflm, inplace.
const std::vector<StrategyInfo>& Strategies();
bool IsStrategy(const std::string& name);

struct PlanOptions {
  std::string dtype_name = "int8";  // recorded in the plan; the graph must already carry it
  int64_t batch = 1;
  std::string schedule = "model";   // "model" (the model's order) or "minpeak" (min-peak DP order)
};

// Plans `g` (already converted to the planning dtype) on target `t` with `strategy`. The returned
// plan has passed PlanVerifier (VerifyPlan(...).ok()); it may still not fit (metrics.fits false).
StatusOr<plan::Plan> RunStrategy(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                                 const PlanOptions& options);

// The type the plan records for an op: the ONNX type, or "DepthwiseConv" for depthwise convolutions.
std::string PlanOpType(const ir::Graph& g, const ir::Op& op);

}  // namespace sramplan::driver
