// Liveness over plan steps: a step runs a group of ops together (one op, or a fused group such as
// vMCU's inverted bottleneck). A tensor produced and read only inside one multi-op step (a fused
// group's intermediate) lives in the group's own workspace and owns no arena buffer; every other
// arena buffer of the op-level liveness (liveness.h) lives from the step that produces it to the
// last step that reads it.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"

namespace sramplan::analysis {

// The ops of each step, in execution order; the concatenation is the schedule.
using StepGroups = std::vector<std::vector<ir::OpId>>;

// Tensor `id` is an intermediate of the group of ops for which `in_group` holds: an activation
// (not a graph input, output or constant) whose producer and every consumer are in the group.
bool IsGroupIntermediate(const ir::Graph& g, const std::function<bool(ir::OpId)>& in_group,
                         ir::TensorId id);
bool IsGroupIntermediate(const ir::Graph& g, std::span<const ir::OpId> group, ir::TensorId id);

// One arena buffer at step granularity.
struct StepBuffer {
  ir::TensorId tensor;  // the storage root (as LiveTensor::tensor)
  int64_t bytes = 0;    // unaligned, as LiveTensor::bytes
  int first_step = 0;   // inclusive, step index
  int last_step = 0;    // inclusive, step index
  int op_buffer = 0;    // index of the buffer in StepLiveness::ops.buffers
};

struct StepLiveness {
  Liveness ops;                     // op-level liveness of the concatenated schedule
  std::vector<int> step_of_op;      // op id -> step index
  std::vector<StepBuffer> buffers;  // in the order of ops.buffers, fused intermediates left out
  std::vector<int>
      buffer_of_op_buffer;  // index in ops.buffers -> index in buffers, -1: intermediate
  // Index in `buffers` of the buffer holding tensor `id` (or the root it views); -1 for constants,
  // tensors without bytes in the arena and fused intermediates.
  int BufferOfTensor(ir::TensorId id) const;
};

// Concatenates `steps` into a schedule (which must be valid, ValidateSchedule) and maps its
// op-level liveness onto the steps. A buffer is a fused intermediate, and left out, when it is
// produced and last read in the same step, that step has more than one op, and the tensor is an
// intermediate of that step's group (IsGroupIntermediate).
StepLiveness ComputeStepLiveness(const ir::Graph& g, const StepGroups& steps);

// Every op in its own step (the schedule as StepGroups).
StepGroups SingleOpSteps(const Schedule& schedule);

}  // namespace sramplan::analysis
