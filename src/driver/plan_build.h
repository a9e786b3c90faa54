// Shared by the passes: the operator order the options ask for, the plan skeleton (header, levels,
// one step per op, tensor table) and the plan's record of an op.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "driver/strategy.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "schedule/min_peak.h"
#include "target/target.h"

namespace sramplan::driver {

// The operator order `options.schedule` asks for, with a note for the plan.
StatusOr<analysis::Schedule> ChooseSchedule(const ir::Graph& g, const PlanOptions& options,
                                            std::string* note);
// schedule::MinPeakSchedule(g), remembered for the last few graphs (keyed by a fingerprint of what
// it reads; thread-safe): repeated strategies and budgets on one graph compute it once.
// `time_limit_s` (PlanOptions::search_time_limit_s when set) caps the exact search's own 10 s.
// `total`: time_limit_s is what remains of --time-limit, a budget for the whole search
// (MinPeakOptions::total_time_limit).
schedule::MinPeakResult CachedMinPeakSchedule(const ir::Graph& g, double time_limit_s = 10, bool total = false);
// A plan with its header, levels, steps (one op each) and tensor table filled in.
plan::Plan PlanSkeleton(const ir::Graph& g, const target::Target& t,
                        const analysis::Schedule& sched, const std::string& strategy,
                        const PlanOptions& options);

// The plan's record of one op (name, type, operands, geometry).
plan::StepOp PlanStepOp(const ir::Graph& g, const ir::Op& op);
// The geometry a plan step records for an op (Conv: kernel_shape, strides, pads, dilations, group).
std::map<std::string, std::vector<int64_t>> PlanOpAttrs(const ir::Graph& g, const ir::Op& op);
// The type the plan records for an op: the ONNX type, or "DepthwiseConv" for depthwise
// convolutions.
std::string PlanOpType(const ir::Graph& g, const ir::Op& op);

}  // namespace sramplan::driver
