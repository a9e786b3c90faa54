// The PlanningContext: everything a strategy's passes read and write, from the schedule to the
// verified plan. Passes of one family share a sub-state (tensor-level placement, budget, vmcu).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "cost/hardware_model.h"
#include "driver/optimus_state.h"
#include "driver/strategy.h"
#include "driver/vmcu_layout.h"
#include "ir/graph.h"
#include "placement/placement.h"
#include "plan/plan.h"
#include "spill/spill.h"
#include "target/target.h"

namespace sramplan::driver {

// Tensor-level strategies (naive ... hmcos): in-place classes and their requests.
struct InplacePair {
  int out_buffer;
  int in_buffer;
  std::string reason;
};
struct Scratch {
  std::string name, producer;
  int64_t bytes;
  int step;
};
struct TensorState {
  bool tflm_sizes = false;            // requests:tflm: sizes rounded up to 16 bytes, alignment 1
  std::vector<int64_t> placed_bytes;  // per liveness buffer: its bytes as placed
  std::vector<InplacePair> inplace;   // inplace: output buffer over a dying input
  std::vector<Scratch> scratch;       // inplace: one channel plane per in-place depthwise op
  std::vector<int> class_of;          // per liveness buffer: its in-place class (root buffer)
  std::vector<int> request_of_class;  // class root -> request
};

// Budget strategies (belady ... cosma): the spill problem and its solution.
struct BudgetState {
  spill::SpillProblem problem;
  std::vector<ir::TensorId> owner;  // problem tensor -> the IR tensor that owns the bytes
  int dram_level = -1;              // index in target.levels
  int64_t budget = 0;
  std::string budget_name;
  int64_t m_min = 0;
  int64_t m_mpmf = -1;
  std::vector<int> model_order, mpmf_order;
  spill::SpillSolution solution;
};

struct PlanningContext {
  PlanningContext(const ir::Graph& graph, const target::Target& target, cost::HardwareModel hw,
                  const StrategySpec& spec, const PlanOptions& options)
      : graph(graph), target(target), hw(std::move(hw)), spec(spec), options(options) {}

  const ir::Graph& graph;
  const target::Target& target;
  const cost::HardwareModel hw;  // the target's levels and compute array, for the cost functions
  const StrategySpec& spec;
  PlanOptions options;  // a pass may refine them (schedule:minpeak records the order it forced)

  analysis::Schedule order;                        // schedule: the operator order
  std::string schedule_note;                       // schedule: how it was chosen (a plan note)
  analysis::Liveness liveness;                     // liveness: arena buffers over `order`
  std::vector<placement::BufferRequest> requests;  // what the placer places
  placement::Placement placed;                     // place: one offset per request
  std::string placement_note;
  int64_t lower_bound = 0;   // the arena's lower bound for this strategy (plan metrics)
  int64_t weight_bytes = 0;  // weights: bytes laid out in the weight level

  bool assembled = false;  // plan filled in (assemble*)
  plan::Plan plan;

  TensorState tensors;
  std::unique_ptr<BudgetState> budget;
  std::unique_ptr<VmcuState> vmcu;
  std::unique_ptr<OptimusState> optimus;  // fuse-tiled: the Optimus groups (assemble-tiled reads them)

  const target::MemoryLevel& arena() const { return target.levels[target.arena_level]; }
  const target::MemoryLevel& weight_level() const { return target.levels[target.weight_level]; }
  int64_t alignment() const { return std::max<int64_t>(target.alignment, 1); }
};

// The context after a pass, as JSON (plan --dump-after / --dump-all): order, steps, liveness,
// requests, placement, spill solution and the plan as far as it is assembled.
std::string DumpContext(const PlanningContext& ctx, const std::string& after_pass);

}  // namespace sramplan::driver
