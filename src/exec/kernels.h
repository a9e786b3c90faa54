// Runs one IR op through the C runtime kernels on raw pointers (float32 graphs; int8 graphs with
// their quantisation parameters: kernels_s8.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/graph.h"
#include "plan/plan.h"
#include "sramplan_rt.h"
#include "sramplan_rt_int8.h"
#include "sramplan_rt_seg.h"

namespace sramplan::exec {

struct QuantizedModel;  // exec/quantize.h

// Logical descriptor of a tensor: contiguous row-major, or for feature maps of an NHWC graph the
// (N, C, spatial...) view with NHWC strides (`feature_map`).
sp_tensor_t Describe(const ir::Graph& g, const std::vector<int64_t>& shape, bool feature_map);
// Row-major contiguous descriptor of `shape`.
sp_tensor_t Contig(const std::vector<int64_t>& shape);
// Attribute lists narrowed to the runtime's int32.
std::vector<int32_t> I32(const std::vector<int64_t>& v);
// Elements a descriptor spans (what a kernel may touch), for range checks.
int64_t SpanElements(const sp_tensor_t& t);

// ---- Operand checks (defence in depth) ----------------------------------------------------------
//
// The bytes the executor's buffer holds from each operand pointer on (in[i] for op.inputs[i], out[k]
// for op.outputs[k]).
struct OperandBytes {
  std::vector<int64_t> in, out;
};

// The element type a kernel of `op` reads or writes at each operand (the float32 kernels, or the
// int8 ones when `int8`); nullopt where the kernel touches no bytes (view ops, operands only read
// at import time such as Clip's min/max or ReduceMean's axes).
struct KernelOperandTypes {
  std::vector<std::optional<ir::DataType>> in, out;
};
KernelOperandTypes KernelTypes(const ir::Graph& g, const ir::Op& op, bool int8);

// Before any kernel touches an operand: every operand it touches must hold exactly its elements at
// the element size of the type the kernel uses (so the tensor's dtype is that type's size) and its
// buffer must hold that many bytes. An InvalidArgument naming the op, the tensor, its dtype and the
// kernel's type otherwise; the kernels never run out of bounds.
Status CheckKernelOperands(const ir::Graph& g, const ir::Op& op, bool int8, const OperandBytes& bytes);
// The type half of CheckKernelOperands, for callers that hold buffers of exactly the tensors' bytes.
Status CheckKernelOperandTypes(const ir::Graph& g, const ir::Op& op, bool int8);

// Executes `op`; `in[i]` points to op.inputs[i], `out[i]` to op.outputs[i], with `bytes` behind
// each pointer (checked by CheckKernelOperands first). View ops are no-ops.
Status RunKernel(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                 const std::vector<uint8_t*>& out, const OperandBytes& bytes);

// TinyEngine's in-place depthwise convolution: the output overwrites the input. Each channel is
// computed into `scratch` (N x H_out x W_out elements) and then copied over its own input channel,
// which no later channel reads.
Status RunDepthwiseInPlace(const ir::Graph& g, const ir::Op& op, const std::vector<const uint8_t*>& in,
                           uint8_t* out, uint8_t* scratch, int64_t scratch_bytes, const OperandBytes& bytes);

// The int8 versions: TFLite Micro semantics through the runtime's int8 kernels, with the
// parameters and lookup tables of `q`. Ops without an int8 implementation are kUnsupported.
Status RunKernelS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                   const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out,
                   const OperandBytes& bytes);
Status RunDepthwiseInPlaceS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                             const std::vector<const uint8_t*>& in, uint8_t* out, uint8_t* scratch,
                             int64_t scratch_bytes, const OperandBytes& bytes);

// ---- Layer parameters of the segment-aware kernels (runtime/include/sramplan_rt_seg.h) ------
//
// The values the plain int8 call record of a 2-D NHWC Conv (group 1 or depthwise) or of a
// Gemm / MatMul passes to its kernel (zero points, activation range, requantisation, bias), with
// the weights repacked into the segment kernels' layouts, so a segment kernel computes the same
// bytes as the plain path. `in` are the op's operand pointers (weights in[1], bias in[2]).
struct SegLayerS8 {
  bool fc = false;
  bool depthwise = false;
  // Conv: input h x w x c_in, output oh x ow x c_out, kernel r x s; pads top, left, bottom, right.
  int32_t h = 0, w = 0, c_in = 0, c_out = 0, oh = 0, ow = 0, r = 1, s = 1;
  int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int32_t pad[4] = {0, 0, 0, 0};
  // FC: [m, k] x -> [m, n].
  int32_t m = 0, k = 0, n = 0;
  std::vector<int8_t> weights;  // FC [N][K]; conv [C_out][R][S][C_in]; depthwise [R][S][C]
  std::vector<int32_t> bias;    // empty: no bias
  std::vector<sp_requant_t> rq;
  int32_t in_zp = 0, out_zp = 0, act_min = -128, act_max = 127;
};
// A fused vMCU step (expansion Conv, pointwise or any kernel/stride/padding -> DepthwiseConv ->
// Conv 1x1 [-> Add of the group input]) as sp_seg_bottleneck_s8 takes it; shared by the executor
// and the code generator. ins[i] are the inputs of sops[i] (as for SegLayerParamsS8).
struct SegBottleneckS8 {
  SegLayerS8 expand, depthwise, project;
  sp_seg_bottleneck_shape_t shape{};
  bool residual = false;
  sp_add_s8_params_t add{};  // in1 = the group input, in2 = the projection (valid iff residual)
};
// ---- int8 kernel call records ------------------------------------------------------------------
//
// The int8 dispatch does not call the runtime directly: BuildCallsS8 translates an op into a
// serialisable record of runtime kernel calls (function + argument values, pointers as operand
// references), which ExecuteCalls runs on the host (RunKernelS8, the executors) and the C emitter
// (src/codegen) prints as firmware C. So the executor and the firmware cannot drift apart: there is
// one translation of IR ops to kernel calls. A new kernel (segment-aware, fused bottleneck) is a
// new KernelFn with its KernelSignature and one case in ExecuteCalls.

// The runtime kernels a call can name.
enum class KernelFn {
  kConvS8,
  kFullyConnectedS8,
  kMaxPoolS8,
  kAvgPoolS8,
  kGlobalAvgPoolS8,
  kGlobalAvgPoolRequantS8,
  kAddS8,
  kSubS8,
  kMulS8,
  kLutS8,
  kRequantizeS8,
  kClampS8,
  kSoftmaxS8,
  kCopy,
  kExpand,
  kSlice,
  kGather,
  kTranspose,
  kPad,
  kResizeNearest,
  // The segment-aware kernels (sramplan_rt_seg.h): one call runs a whole segment step on the
  // circular pool (exec/lower_step.h).
  kSegConvS8,
  kSegDepthwiseS8,
  kSegFullyConnectedS8,
  kSegBottleneckS8,
};

// The C function a KernelFn names and the C type of each parameter, in order (pointer parameters
// say what the emitter casts a reference to, e.g. "const int8_t*").
struct KernelSignature {
  const char* name;
  std::vector<const char*> params;
};
const KernelSignature& Signature(KernelFn fn);

// Where a pointer argument points at run time: `offset + i * step` bytes into an operand of the op
// (input/output index as in op.inputs/op.outputs), its scratch buffer (in-place depthwise; the
// workspace of a segment step), a host
// staging buffer (`temp_bytes[index]`) or a constant array of the record (`consts[index]`); `i` is
// the iteration of the enclosing CallBlock.
struct CallRef {
  enum class Base { kInput, kOutput, kScratch, kTemp, kConst };
  Base base = Base::kInput;
  int index = 0;
  int64_t offset = 0;
  int64_t step = 0;
};

// The circular pool a segment-aware kernel addresses: the level of the step's pool operands (its
// base is where that level's bytes are at run time: the executor's array, the firmware's arena).
struct SegPoolArg {
  int32_t pool_segments = 1;
  int32_t segment_bytes = 1;
};

// One argument value: a tensor descriptor (passed by pointer), a pointer reference, NULL, an
// integer scalar (also enums), an int32 array (passed as a pointer), a requantisation multiplier by
// value, Add/Mul parameter structs (passed by pointer), or the segment kernels' pool, shapes and
// layer parameters (passed by pointer).
using CallArg = std::variant<sp_tensor_t, CallRef, std::nullptr_t, int64_t, std::vector<int32_t>,
                             sp_requant_t, sp_add_s8_params_t, sp_mul_s8_params_t, SegPoolArg,
                             sp_seg_conv_shape_t, sp_seg_fc_shape_t, sp_seg_bottleneck_shape_t,
                             SegLayerS8, SegBottleneckS8>;

struct KernelCall {
  KernelFn fn = KernelFn::kCopy;
  std::vector<CallArg> args;  // one per Signature(fn).params
};

// `calls` run in order, the whole body `count` times (iteration i = 0..count-1).
struct CallBlock {
  int32_t count = 1;
  std::vector<KernelCall> calls;
};

// Constant data a call record carries (lookup tables, requantisation arrays, softmax exp tables,
// pad values). `ctype` is the element's C type: int8_t, uint8_t, int32_t or sp_requant_t.
struct ConstArray {
  std::string ctype;
  std::string role;  // "lut", "requant", "exp_table", "pad_value"
  std::vector<uint8_t> bytes;
};

struct OpCalls {
  std::vector<CallBlock> blocks;
  std::vector<ConstArray> consts;
  std::vector<int64_t> temp_bytes;  // host staging buffers (NCHW convolutions); firmware has none
  // Ops without a runtime kernel (3-D convolutions and pools in general, linear Resize) run as a
  // host loop instead of blocks; `host_loop_what` says what (the C emitter rejects them).
  std::function<Status(const std::vector<const uint8_t*>& in, const std::vector<uint8_t*>& out)>
      host_loop;
  std::string host_loop_what;
};

// The kernel calls of `op` (no blocks for view ops). kUnsupported for ops without an int8 kernel.
StatusOr<OpCalls> BuildCallsS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q);
// TinyEngine's in-place depthwise convolution (see RunDepthwiseInPlace) through a scratch buffer of
// `scratch_bytes`: one block over the channels, a convolution into the scratch and a copy back.
StatusOr<OpCalls> BuildDepthwiseInPlaceCallsS8(const ir::Graph& g, const ir::Op& op,
                                               const QuantizedModel& q, int64_t scratch_bytes);
// Runs a record on the host: `in`/`out` are the op's operands, `scratch` its scratch buffer.
Status ExecuteCalls(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                    const std::vector<uint8_t*>& out, uint8_t* scratch);
// Runs one call of a segment-aware kernel (KernelFn::kSeg*) on the host: `pool` is where the pool
// level's bytes are, `workspace` the step's workspace (the call's kScratch reference). Returns the
// kernel's status (SP_BAD_ARGUMENT: it refused the placement).
StatusOr<sp_status_t> ExecuteSegmentCall(const KernelCall& call, uint8_t* pool, uint8_t* workspace);

// ---- Layer parameters for the segment-aware kernels (runtime/include/sramplan_rt_seg.h) -------
//
// kUnsupported when the op's record is not one plain sp_conv_s8 / sp_fully_connected_s8 call on
// dense NHWC (conv) or row-major (FC) operands.
StatusOr<SegLayerS8> SegLayerParamsS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                                      const std::vector<const uint8_t*>& in);
// The parameters of an int8 Add (in1 = op.inputs[0], in2 = op.inputs[1]) as its record passes them.
StatusOr<sp_add_s8_params_t> AddParamsS8(const ir::Graph& g, const ir::Op& op,
                                         const QuantizedModel& q);

// InvalidArgument naming `where` when the ops are not such a group.
StatusOr<SegBottleneckS8> SegBottleneckParamsS8(const ir::Graph& g, const std::vector<const ir::Op*>& sops,
                                                const QuantizedModel& q,
                                                const std::vector<std::vector<const uint8_t*>>& ins,
                                                const std::string& where);

// ---- The workspace of a segment step ------------------------------------------------------------
//
// One rule for the planner, the executor and the code generator (the verifier re-derives it): a
// plan step that runs the segment-aware kernels (plan::IsSegmentStep: kind segment or
// fused-bottleneck) gets its workspace from the plan, the buffer its params.workspace names, live
// at the step, of at least the bytes the runtime's sp_seg_*_workspace_bytes give for the kernel;
// without one the step does not run.

// The workspace bytes of the single-layer segment kernel of `l` with `segment_bytes` per FC chunk.
int64_t SegLayerWorkspaceBytes(const SegLayerS8& l, int64_t segment_bytes);
// The workspace buffer of segment step `s` of `p`, checked to hold `need` bytes; a kMismatch naming
// the step and op otherwise.
StatusOr<const plan::Buffer*> SegmentStepWorkspace(const plan::Plan& p, int s, int64_t need);

// A tensor produced and entirely consumed by the ops of one fused plan step (it lives only in the
// step's workspace and has no buffer).
bool IsFusedIntermediate(const ir::Graph& g, const std::vector<const ir::Op*>& step_ops, ir::TensorId id);

// Slice's per-axis start and step for an input of extents `xs` (static starts / axes / steps attrs,
// ONNX clamping), as the float32 and int8 slice kernels take them.
void SliceStartsSteps(const ir::Op& op, const std::vector<int64_t>& xs, std::vector<int32_t>* starts,
                      std::vector<int32_t>* steps);

}  // namespace sramplan::exec
