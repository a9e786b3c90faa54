// Liveness of arena buffers for a schedule: which tensors own bytes and in which steps they live.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace sramplan::analysis {

// A schedule is a permutation of the graph's ops; step i runs schedule[i].
using Schedule = std::vector<ir::OpId>;

// One tensor that owns bytes in the activation arena (views alias their root and own nothing).
struct LiveTensor {
  ir::TensorId tensor;
  int64_t bytes = 0;
  int first_step = 0;  // inclusive: the producing step (0 for graph inputs)
  int last_step = 0;   // inclusive: the last step reading it or any view of it (end for outputs)
};

struct Liveness {
  std::vector<LiveTensor> buffers;           // arena tensors, in order of first_step then id
  std::vector<int> step_of_op;               // op id -> step
  std::vector<int> buffer_of_tensor;         // tensor id -> index in buffers, -1 if none
  std::vector<int64_t> live_bytes_per_step;  // sum of bytes live at each step
  int64_t lower_bound = 0;                   // max over steps of live bytes
  int peak_step = 0;
};

// Checks that `schedule` is a permutation of the ops that respects every dependency.
Status ValidateSchedule(const ir::Graph& g, const Schedule& schedule);
// The model's own order (the op list).
Schedule ModelOrder(const ir::Graph& g);
// Requires a valid schedule.
Liveness ComputeLiveness(const ir::Graph& g, const Schedule& schedule);

}  // namespace sramplan::analysis
