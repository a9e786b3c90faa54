// What TensorFlow Lite Micro's MicroAllocator lays out for a .tflite model, predicted from the file:
// the tensors it plans (no data in the file, not variable, non-empty), their lifetimes as its
// AllocationInfoBuilder marks them (subgraph inputs at scope 0, op i at scope i + 1, outputs to the
// end), sizes rounded up to 16 bytes, kernel scratch buffers (the sizes TFLM's reference kernels
// request, or CMSIS-NN's as an option) added after the tensors, and the GreedyMemoryPlanner
// (placement::PlaceTflmGreedy, offline offsets as fixed offsets) over them. planned_bytes is the
// non-persistent head section, what real TFLM reports as the planner's arena.
#pragma once

#include <string>
#include <vector>

#include "import/tflite_model.h"
#include "support/status.h"

namespace sramplan::driver {

enum class TflmKernels { kReference, kCmsisNn };

struct TflmArenaOptions {
  TflmKernels kernels = TflmKernels::kReference;
  bool use_offline_plan = true;  // honour the model's OfflineMemoryAllocation metadata, as TFLM does
  // Offsets to impose instead (one per tensor of subgraph 0, -1: let TFLM plan it); used to check an
  // exported plan. Empty: none.
  std::vector<int32_t> offline_offsets;
};

struct TflmBuffer {
  int tensor = -1;  // tensor index in subgraph 0, or -1 for a kernel scratch buffer
  int op = -1;      // for scratch buffers: the op that requests it
  std::string name;
  int64_t bytes = 0;    // as the tensor needs it
  int64_t planned = 0;  // rounded up to 16, as TFLM adds it to the planner
  int first = 0, last = 0;
  int64_t offset = 0;
  bool offline = false;  // placed at an offset from the offline plan
};

struct TflmArena {
  int64_t planned_bytes = 0;           // head section: the GreedyMemoryPlanner's arena
  int64_t tensor_buffers = 0;          // how many of the buffers are tensors
  int64_t scratch_buffers = 0;         // ... and kernel scratch buffers
  int64_t scratch_bytes = 0;           // sum of the scratch buffers' planned sizes
  int64_t peak_tensor_bytes = 0;       // highest end of a tensor buffer (scratch buffers left out)
  // The persistent tail is predicted apart (driver/tflm_tail.h). arena_size = head + tail + up to
  // 15 bytes when the arena's start is not 16-byte aligned.
  std::vector<TflmBuffer> buffers;     // in the order TFLM adds them to the planner
};

// `bytes` is the whole file, `m` its parse (import::tflite::ParseModel).
StatusOr<TflmArena> PredictTflmArena(const std::string& bytes, const import::tflite::Model& m,
                                     const TflmArenaOptions& options = {});

// The CLI's line for the planned head and its parts.
std::string TflmArenaSummary(const TflmArena& a);

}  // namespace sramplan::driver
