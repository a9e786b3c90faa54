// The .tflite parts of `sramplan plan`: TFLite Micro's arena (tflm_arena_bytes and its parts) and
// --tflite-out (the plan written back as TFLM's OfflineMemoryAllocation metadata).
#pragma once

#include <string>

#include "driver/tflm_arena.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "support/status.h"

namespace sramplan::cli {

// True when `path` holds a .tflite flatbuffer (its "TFL3" identifier).
bool IsTfliteFile(const std::string& path);

// TFLM's arena for the model at `path` (driver::PredictTflmArena), as the lines `plan` prints.
StatusOr<std::string> TflmArenaReport(const std::string& path, driver::TflmKernels kernels);

// Writes the model at `in_path` to `out_path` with `p`'s offsets as TFLM's offline plan. `p` must run
// the file's operators in the file's order, and TFLM's kernels must be able to run it: no two tensors
// TFLM keeps live together may share bytes, except a RESHAPE/SQUEEZE output over its own input
// (TFLM's reshape skips the copy when they coincide). Tensors without a buffer in the plan's arena
// level are left to TFLM (-1). The file is read back and checked. Returns a summary line.
StatusOr<std::string> WriteTfliteWithPlan(const std::string& in_path, const std::string& out_path, const ir::Graph& g,
                                          const plan::Plan& p, driver::TflmKernels kernels);

}  // namespace sramplan::cli
