// LowerStep: the one place that turns a plan step into kernel calls by its kind (plan::StepKind).
// The arena executor runs the records it produces and the C emitter prints them, so the host run
// and the firmware cannot decode a step differently.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/exec_tiled.h"
#include "exec/kernels.h"
#include "ir/graph.h"
#include "plan/plan.h"

namespace sramplan::exec {

// One op of a plain or in-place step.
struct LoweredOp {
  const ir::Op* op = nullptr;
  // TinyEngine's in-place depthwise convolution: the output overwrites the input, channel by
  // channel through the step's workspace (its scratch buffer).
  bool in_place = false;
  // int8: the op's call record (BuildCallsS8, or BuildDepthwiseInPlaceCallsS8 when in_place; no
  // blocks for a view). float32 plans carry no records: the executor runs RunKernel /
  // RunDepthwiseInPlace on the same decisions.
  OpCalls calls;
};

// What a step runs.
struct StepCalls {
  int step = 0;
  plan::StepKind kind = plan::StepKind::kOp;
  std::vector<const ir::Op*> ops;  // the model's ops, in the step's order
  // kOp and kInPlaceDepthwise: one entry per op, run in order.
  std::vector<LoweredOp> op_calls;
  // kSegment and kFusedBottleneck: one call of a segment-aware kernel (KernelFn::kSeg*) on the pool
  // level: args pool, input start, output start, shape, layer parameters, workspace (a kScratch
  // reference), workspace bytes.
  std::optional<KernelCall> segment;
  const plan::Buffer* input = nullptr;   // segment: the pool input's and output's buffers
  const plan::Buffer* output = nullptr;
  // The step's workspace (segment kinds) or scratch (an in-place op), live at the step.
  const plan::Buffer* workspace = nullptr;
  // kFusedTiled: the group's strips, windows and DRAM traffic (exec/exec_tiled.h).
  std::shared_ptr<const TiledSchedule> tiled;
};

// The indexes LowerStep reads; built once per plan. `q` is null for float32 plans.
class StepLowering {
 public:
  StepLowering(const ir::Graph& g, const plan::Plan& p, const QuantizedModel* q);

  const ir::Graph& graph() const { return g_; }
  const plan::Plan& plan() const { return p_; }
  const QuantizedModel* quant() const { return q_; }
  // The model op named `name`, or nullptr.
  const ir::Op* FindOp(const std::string& name) const;
  // The buffer holding `tensor` (through alias_of) at step s, an on-chip one when there is one.
  const plan::Buffer* LiveBuffer(const std::string& tensor, int s) const;
  bool Offchip(const std::string& level) const;

 private:
  std::string RootOf(const std::string& name) const;

  const ir::Graph& g_;
  const plan::Plan& p_;
  const QuantizedModel* q_;
  std::unordered_map<std::string, const ir::Op*> ops_;
  std::unordered_map<std::string, std::vector<const plan::Buffer*>> buffers_;
  std::unordered_map<std::string, const plan::Tensor*> tensors_;
  std::unordered_map<std::string, bool> offchip_;
};

// Step s as kernel calls. Errors are kMismatch when the plan disagrees with the model or the
// kernels' needs (an unknown op, a missing or small workspace, an overlap a kernel cannot do in
// place), kUnsupported for what no kernel runs (segment steps of float32 plans, the reserved kinds),
// and the record builders' errors otherwise.
StatusOr<StepCalls> LowerStep(const StepLowering& l, int s);

// The tensor whose bytes `name` shares: its alias_of chain followed to the end (at most 64 links),
// in a plan's tensors by name.
std::string AliasRoot(const std::unordered_map<std::string, const plan::Tensor*>& tensors, const std::string& name);

}  // namespace sramplan::exec
