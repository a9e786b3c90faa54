// Post-training int8 quantisation for execution: calibrates activation ranges on a float32
// reference run of the model and derives TFLite-style int8 parameters and data for the int8 graph
// the planner sees (ApplyDtype(int8): activations and weights int8, Conv/Gemm biases int32).
//
//   - activations: per tensor, asymmetric; scale = (max - min) / 255 over the calibrated range
//     widened to include 0, zero point = round(-128 - min / scale). Tensors that must share bytes
//     or parameters share them: views and their root; copy-like ops (MaxPool, AveragePool, Pad,
//     Transpose, Slice, Split, Gather, Expand, Resize) and their input; a Relu/Clip and its input.
//     A Relu/Clip whose input is only produced for it by a requantising op (Conv, Gemm, Add, BN,
//     ...) takes the Relu's range for that input too, so the producer saturates exactly like a
//     fused TFLite activation. A Concat input used by nothing else shares the Concat's parameters;
//     other Concat inputs are requantised into the output by the kernel. Softmax output: 1/256,
//     -128.
//   - weights of Conv, Gemm and MatMul with a constant B: per output channel, symmetric,
//     scale = max|w| / 127; biases: int32 round(b / (in_scale * w_scale[k])).
//   - standalone BatchNormalization: one 256-entry table per channel (exact per-channel affine).
//   - element-wise functions (Sigmoid, Tanh, HardSigmoid, HardSwish, ..., and Relu/Clip between
//     different parameters): 256-entry lookup tables built on the host.
// Everything is deterministic: the same graph and seed give the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/model_data.h"
#include "ir/graph.h"

namespace sramplan::exec {

struct QuantizedModel {
  // Indexed by tensor id. int8 activations, inputs and other int8 constants: one scale and zero
  // point; weights: one scale per output channel (zero points 0, `axis` = the channel axis);
  // int32 biases: scale in_scale * w_scale[k] per channel. Empty for tensors that stay unquantised
  // (int64 indices, bools).
  std::vector<ir::QuantParams> params;
  // The int8 graph's constants and inputs (int8 weights, int32 biases, int8 inputs, int64 indices).
  ModelData data;
  // Indexed by op id: lookup tables the op's kernel uses (256 entries each; BatchNormalization has
  // one per channel). Empty for ops without tables.
  std::vector<std::vector<int8_t>> tables;
  // Calibrated float range per tensor (min, max), before widening to include 0; for reports.
  std::vector<float> range_min, range_max;
};

// Min/max of every tensor over a float32 run (graph inputs from `data`, everything else as
// produced). `seen[t]` is false for tensors the run never produced (and constants).
struct Calibration {
  std::vector<float> min, max;
  std::vector<bool> seen;
};

// Runs the float32 graph `gf` once in model order (NaiveExecutor) and records every tensor's range.
// `reference`, if given, receives the float run's outputs.
StatusOr<Calibration> Calibrate(const ir::Graph& gf, const ModelData& float_data,
                                ExecResult* reference = nullptr);

// Builds the quantised model for the int8 graph `g8` from the float32 graph `gf` (the same graph
// with float types: identical tensor and op ids), its data and calibration.
StatusOr<QuantizedModel> Quantize(const ir::Graph& g8, const ir::Graph& gf,
                                  const ModelData& float_data, const Calibration& cal);

// kUnsupported listing every op (type, count, first op name) the int8 kernels cannot run, before
// any time is spent on calibration (kernels_s8.cc).
Status CheckInt8Support(const ir::Graph& g8);

// The whole pipeline: CheckInt8Support, `g8` converted to float32, MakeModelData(seed), Calibrate,
// Quantize. `reference` receives the float32 run's outputs (for CompareWithReference).
StatusOr<QuantizedModel> QuantizeModel(const ir::Graph& g8, uint64_t seed,
                                       ExecResult* reference = nullptr);

// For quantisation taken from the model file (quantize_file.h): whether an op's output must carry
// its input's parameters (views and byte-moving ops such as MaxPool, AveragePool, Pad), and the
// lookup tables of `g8`'s ops for the parameters already in `q` (as Quantize builds them).
bool SharesInputQuantParams(const std::string& op_type);
Status BuildLookupTables(const ir::Graph& g8, const ModelData& float_data, QuantizedModel* q);

// How close the int8 outputs, dequantised, are to the float32 reference.
struct QuantError {
  double max_abs_error = 0;        // over all outputs
  double max_error_in_scales = 0;  // max over outputs of (max abs error / output scale)
  double saturated_fraction =
      0;  // elements at -128 or 127 (other than the zero point), over all outputs
  double reference_max_abs = 0;  // max |float reference| over all outputs
  std::string Summary() const;
};
StatusOr<QuantError> CompareWithReference(const ir::Graph& g8, const QuantizedModel& q,
                                          const ExecResult& int8_run,
                                          const ExecResult& float_reference);

}  // namespace sramplan::exec
