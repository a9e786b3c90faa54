// NaiveExecutor (every tensor its own buffer) and ArenaExecutor (the network inside the byte arrays
// a plan describes, at the planned offsets, with freed bytes poisoned), and their comparison.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "exec/model_data.h"
#include "ir/graph.h"
#include "plan/plan.h"

namespace sramplan::exec {

struct ExecResult {
  std::vector<std::string> output_names;         // graph outputs, in tensor id order
  std::vector<std::vector<uint8_t>> outputs;     // their bytes
  int64_t offchip_read_bytes = 0;                // counted by direction as the run moved them
  int64_t offchip_write_bytes = 0;
  int steps = 0;
  // Fused-tiled steps run differently from their plan (more strips, other DRAM bytes): why, per step.
  std::vector<std::string> notes;
};

// The byte pattern freed arena bytes are overwritten with.
inline constexpr uint8_t kPoison = 0xA5;

struct QuantizedModel;  // exec/quantize.h

// Called by RunNaive after each op with the op's output bytes (e.g. to calibrate quantisation).
using OpObserver = std::function<void(const ir::Op& op, const std::vector<uint8_t*>& outputs)>;

// Float32 graphs run RunKernel; int8 graphs need `quant` (their quantisation parameters and lookup
// tables; `data` is then quant->data) and run RunKernelS8.
StatusOr<ExecResult> RunNaive(const ir::Graph& g, const analysis::Schedule& order, const ModelData& data,
                              const QuantizedModel* quant = nullptr, const OpObserver* observer = nullptr);

// Runs `p` (which must describe `g`) in one byte array per memory level, sized by the plan's
// used_bytes. Address-range and liveness violations are StatusCode::kMismatch errors naming the op
// and tensor.
// Each step runs as exec::LowerStep lowers it by its kind (plan::StepKind): plain ops through their
// kernels (int8: their call records), an in-place depthwise step through its scratch buffer, and
// segment / fused-bottleneck steps (vmcu) as one segment-aware int8 kernel
// (runtime/include/sramplan_rt_seg.h) with their level as the circular pool, the buffers' offsets as
// starts and the step's params.workspace buffer as workspace (required, of at least the kernel's
// bytes: exec::SegmentStepWorkspace); a fused step's intermediates have no buffers. Their
// parameters come from the plain ops' int8 call records, so the bytes equal RunNaive's. float32
// plans with segment steps are kUnsupported; a placement the kernel refuses is a kMismatch.
StatusOr<ExecResult> RunArena(const ir::Graph& g, const plan::Plan& p, const ModelData& data,
                              const QuantizedModel* quant = nullptr);

// Empty when both runs produced identical bytes and the arena run's off-chip counts equal the
// plan's metrics; otherwise a description of the first difference.
std::string Compare(const ir::Graph& g, const ExecResult& naive, const ExecResult& arena, const plan::Plan& p);

}  // namespace sramplan::exec
