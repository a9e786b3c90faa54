// int8 execution with the quantisation the model file carries (a .tflite file's own scales and
// zero points), instead of sramplan's calibration (quantize.h).
//
// The importer keeps each tensor's file quantisation in ir::Tensor::quant and dequantises the
// constants (scale * (q - zero_point)); this recovers the stored integers from those values and
// checks that they round-trip exactly, so weights and biases run as stored. It applies when every
// int8 tensor of the int8 graph has int8 quantisation (activations per tensor; weights per tensor or
// per output channel with zero point 0) and every int32 bias has its scales, and when the
// parameters fit sramplan's kernels: views and byte-moving ops (Reshape, MaxPool, AveragePool, Pad,
// ...) keep their input's parameters, a Softmax output has scale 1/256 and zero point -128 (as
// TFLite's int8 kernels require). Otherwise it returns kUnsupported naming the first tensor or op
// that does not fit.
#pragma once

#include <cstdint>
#include <string>

#include "exec/quantize.h"

namespace sramplan::exec {

// The quantised model with the file's parameters. Graph inputs get seeded values (MakeModelData's
// float values, quantised with the inputs' parameters). `reference`, if given, receives the float32
// run's outputs (dequantised weights) for CompareWithReference.
StatusOr<QuantizedModel> QuantizeWithFileParams(const ir::Graph& g8, uint64_t seed, ExecResult* reference = nullptr);

// What `verify` runs: the file's quantisation when `use_file_params` (a .tflite model) and it
// applies, else QuantizeModel's calibration. `how` says which ran, and why the file's did not.
StatusOr<QuantizedModel> QuantizeForVerify(const ir::Graph& g8, uint64_t seed, bool use_file_params,
                                           ExecResult* reference, std::string* how);

}  // namespace sramplan::exec
