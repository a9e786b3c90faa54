// Hybrid int8 / float32 graphs, as TFLite Micro runs them: an op without an int8 kernel (Div, Pow,
// LayerNormalization, MatMul of two activations, ...) keeps float32, with a Dequantize before it and
// a Quantize after it, rather than refusing the model.
//
// MakeHybridInt8 rewrites an int8 graph (ir::ApplyDtype(int8)) into that form with real ops, so the
// planners see every tensor at its own element size (float32: 4 bytes) and the executors, the
// verifier and the reports see the conversions as steps:
//   - an op is float32 when the int8 kernels cannot run it (Int8KernelMissing) and the float32
//     kernels can (HasKernelF32); views follow their input, and data-movement ops (Transpose, Slice,
//     Split, Gather, Expand, Pad, Concat) whose activation inputs are all float32 stay float32 too
//     (no Quantize / Dequantize pair around a pure byte move);
//   - a float32 op's int8 activation input gets one Dequantize (shared by all its float32 readers),
//     an int8 op's float32 input one Quantize, each added just before its first reader;
//   - constants read only by float32 ops (LayerNormalization's scale, Div's divisor, a float Conv's
//     bias) become float32; a constant read by both kinds stays int8 and is dequantised.
// An int8 graph whose ops all have int8 kernels is left unchanged (byte-identical plans).
//
// Executing (exec/quantize.h's QuantizedModel): int8 ops run their int8 kernels; float32 ops run
// RunKernel on float32 bytes; Quantize is q = clamp(round_half_away(x / scale) + zp, -128, 127) with
// its int8 output's parameters (NaN -> zp), Dequantize x = scale * (q - zp), both in the host C
// runtime's arithmetic (sp_host_quantize_s8 / sp_host_dequantize_s8). The naive and the arena
// executor run the same functions, so their bytes are identical. In the float32 graph calibration
// runs (the same graph with ApplyDtype(float32)) both conversions copy their input.
#pragma once

#include <string>
#include <vector>

#include "exec/kernels.h"
#include "ir/graph.h"
#include "support/status.h"

namespace sramplan::exec {

struct QuantizedModel;  // exec/quantize.h

struct HybridReport {
  int float_ops = 0;       // ops of the original graph that run in float32 (views not counted)
  int quantize_ops = 0;    // Quantize ops added
  int dequantize_ops = 0;  // Dequantize ops added
  int float_constants = 0;  // constants made float32
  // "Div (50)": the float32 op types and how many, by type name.
  std::vector<std::string> float_types;
  bool changed() const { return quantize_ops + dequantize_ops + float_ops > 0; }
  std::string Summary() const;  // one line
};

// What the int8 kernels lack for `op` ("Div", "MatMul of two activations", ...), or "" when an int8
// kernel runs it (kernels_s8.cc).
std::string Int8KernelMissing(const ir::Graph& g, const ir::Op& op);
// Whether RunKernel has a float32 kernel for `op` (kernels.cc's dispatch).
bool HasKernelF32(const ir::Graph& g, const ir::Op& op);

// Rewrites the int8 graph `g` as described above; the result passes ir::VerifyGraph.
StatusOr<HybridReport> MakeHybridInt8(ir::Graph* g);

// Whether an int8 graph's op runs on the host outside the int8 kernels: Quantize, Dequantize and
// the float32 ops of a hybrid graph (a non-view op whose first output is float32).
bool IsHybridHostOp(const ir::Graph& g, const ir::Op& op);
// Whether `g` has any such op.
bool IsHybridGraph(const ir::Graph& g);

// codegen: kUnsupported naming the ops that would run in float32 in the hybrid form of the int8 graph
// `g` (type, count, first op) and why the firmware cannot run them: the C emitter prints the int8
// kernels' call records only (the runtime's float32 kernels run in the host executor, which has no
// call records for them). Ok when every op has an int8 kernel.
Status RefuseHybridCodegen(const ir::Graph& g);

// Runs a host op of a hybrid int8 graph with the parameters of `q`.
Status RunHybridHostOp(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                       const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out,
                       const OperandBytes& bytes);
// Quantize / Dequantize in a float32 graph (calibration): a copy.
Status RunConversionF32(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                        const std::vector<uint8_t*>& out, const OperandBytes& bytes);

}  // namespace sramplan::exec
