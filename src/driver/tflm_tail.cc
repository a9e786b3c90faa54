// TFLite Micro's persistent tail predicted from a .tflite file (tflm_tail.h). The structs and the
// allocation calls follow tflite-micro's sources (micro_allocator.cc, micro_interpreter.cc,
// micro_interpreter_graph.cc, arena_allocator/single_arena_buffer_allocator.h,
// memory_planner/greedy_memory_planner.h, core/c/common.h with TF_LITE_STATIC_MEMORY,
// core/c/builtin_op_data.h, kernels/{conv,depthwise_conv,fully_connected,pooling,softmax,add,pad,
// reduce}*): only their field lists and allocation sizes are used here.
#include "driver/tflm_tail.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

#include "support/int_math.h"

namespace sramplan::driver {
namespace {

namespace tfl = import::tflite;

constexpr int64_t kArenaAlignment = 16;  // MicroArenaBufferAlignment(): AllocatePersistentBuffer(bytes)

// A C struct's size and alignment from its fields, as the ABI lays them out.
struct Layout {
  int64_t size = 0, align = 1;
};

// Field kinds by pointer size: pointers, size_t and intptr_t are `p` bytes; double is 8 bytes with
// 8-byte alignment on both x86-64 and the Arm EABI.
class Abi {
 public:
  explicit Abi(int p) : p_(p) {}
  Layout Ptr() const { return {p_, p_}; }
  static Layout Int() { return {4, 4}; }
  static Layout Bool() { return {1, 1}; }
  static Layout Double() { return {8, 8}; }
  static Layout Struct(std::initializer_list<Layout> fields) {
    Layout s;
    for (const Layout& f : fields) {
      s.size = AlignUp(s.size, f.align) + f.size;
      s.align = std::max(s.align, f.align);
    }
    s.size = AlignUp(s.size, s.align);
    return s;
  }
  static Layout Repeat(Layout f, int n) {  // n fields of one kind
    Layout s;
    for (int i = 0; i < n; ++i) s = Struct({s, f});
    return s;
  }
  static Layout Ints(int n) { return Repeat(Int(), n); }
  Layout Ptrs(int n) const { return Repeat(Ptr(), n); }

 private:
  int p_;
};

// The tail pointer, counted as bytes used below the arena's (16-byte aligned) end.
class Tail {
 public:
  void Allocate(const std::string& what, int64_t bytes, int64_t align) {
    const int64_t before = used_;
    used_ = AlignUp(used_ + bytes, align);
    requested_[what] += bytes;
    padding_ += used_ - before - bytes;
    if (std::find(order_.begin(), order_.end(), what) == order_.end()) order_.push_back(what);
  }
  void Allocate(const std::string& what, Layout l, int64_t count = 1) { Allocate(what, l.size * count, l.align); }
  int64_t used() const { return used_; }
  std::vector<TflmTailPart> Parts() const {
    std::vector<TflmTailPart> parts;
    for (const auto& w : order_) parts.push_back({w, requested_.at(w)});
    parts.push_back({"alignment padding", padding_});
    return parts;
  }

 private:
  int64_t used_ = 0, padding_ = 0;
  std::map<std::string, int64_t> requested_;
  std::vector<std::string> order_;
};

// A dim of the shape (1 past its rank; 0 for a negative dim, which TFLM refuses elsewhere).
int64_t Dim(const tfl::Tensor& t, size_t k) { return k < t.shape.size() ? std::max<int32_t>(t.shape[k], 0) : 1; }

// The builtin data struct the op's parser allocates (size 0: the parser allocates none).
Layout BuiltinData(int builtin, const Abi& abi) {
  switch (builtin) {
    case tfl::kConv2D:  // padding, strides, activation, dilations, quantized_bias_type
      return Abi::Ints(7);
    case tfl::kDepthwiseConv2D:  // padding, strides, depth_multiplier, activation, dilations
      return Abi::Ints(7);
    case tfl::kAveragePool2D:
    case tfl::kMaxPool2D:  // padding, strides, filter, activation, computed TfLitePaddingValues
      return Abi::Ints(10);
    case tfl::kFullyConnected:  // activation, weights_format, 2 bools, quantized_bias_type
      return Abi::Struct({Abi::Int(), Abi::Int(), Abi::Bool(), Abi::Bool(), Abi::Int()});
    case tfl::kSoftmax:  // beta
      return Abi::Ints(1);
    case tfl::kAdd:
    case tfl::kSub:  // activation, pot_scale_int16
      return Abi::Struct({Abi::Int(), Abi::Bool()});
    case tfl::kMul:  // activation
      return Abi::Ints(1);
    case tfl::kReshape:
    case tfl::kSqueeze:  // int32 shape[8], count
      return Abi::Ints(9);
    case tfl::kMean:  // TfLiteReducerParams: keep_dims
      return Abi::Struct({Abi::Bool()});
    case tfl::kConcatenation:  // axis, activation
      return Abi::Ints(2);
    case tfl::kStridedSlice:  // five masks, offset
      return Abi::Struct({Abi::Ints(5), Abi::Bool()});
    case tfl::kBatchMatMul:  // adj_x, adj_y, asymmetric_quantize_inputs
      return Abi::Struct({Abi::Bool(), Abi::Bool(), Abi::Bool()});
    default:  // PAD, QUANTIZE, DEQUANTIZE, LOGISTIC, HARD_SWISH, TRANSPOSE, RELU, RELU6: none
      (void)abi;
      return {};
  }
}

// The OpData a reference kernel's Init allocates (size 0: no Init allocation); `modelled` is false
// for ops whose kernel is not modelled.
Layout KernelOpData(int builtin, const Abi& abi, bool* modelled) {
  *modelled = true;
  switch (builtin) {
    case tfl::kConv2D:
    case tfl::kDepthwiseConv2D:  // OpDataConv: padding, 3 zero points, multiplier, shift,
                                 // 2 per-channel pointers, activation range, filter_buffer_index
      return Abi::Struct({Abi::Ints(4), Abi::Ints(5), abi.Ptrs(2), Abi::Ints(3)});
    case tfl::kFullyConnected:  // OpDataFullyConnected: 8 ints, filter_buffer_index, 2 pointers, bool
      return Abi::Struct({Abi::Ints(9), abi.Ptrs(2), Abi::Bool()});
    case tfl::kAveragePool2D:
    case tfl::kMaxPool2D:  // OpDataPooling: padding, activation range (int32 and float)
      return Abi::Ints(8);
    case tfl::kSoftmax:  // SoftmaxParams: beta, 7 ints, 5 pointers
      return Abi::Struct({Abi::Double(), Abi::Ints(7), abi.Ptrs(5)});
    case tfl::kAdd:  // OpDataAdd: requires_broadcast, 14 ints/floats
      return Abi::Struct({Abi::Bool(), Abi::Ints(14)});
    case tfl::kPad:  // OpData: PadParams (int8 count, int32[5], int8 count, int32[5], category), zero point
      return Abi::Struct({Abi::Bool(), Abi::Ints(5), Abi::Bool(), Abi::Ints(5), Abi::Int(), Abi::Int()});
    case tfl::kMean:  // OpDataReduce: 10 ints/floats (multiplier ... num_axis)
      return Abi::Ints(10);
    case tfl::kReshape:
    case tfl::kSqueeze:  // no Init
      return {};
    default:
      *modelled = false;
      return {};
  }
}

// Prepare's persistent allocations of op `op` (per-channel arrays, int16 tables).
void KernelPrepare(const tfl::Subgraph& sg, const tfl::Operator& op, Tail* tail) {
  auto in = [&](size_t k) -> const tfl::Tensor* {
    return k < op.inputs.size() && op.inputs[k] >= 0 ? &sg.tensors[op.inputs[k]] : nullptr;
  };
  const tfl::Tensor* x = in(0);
  const tfl::Tensor* w = in(1);
  if (x == nullptr) return;
  if ((op.builtin == tfl::kConv2D || op.builtin == tfl::kDepthwiseConv2D) && w != nullptr) {
    // num_channels = filter dim kConvQuantizedDimension (0) / kDepthwiseConvQuantizedDimension (3).
    const int64_t channels = Dim(*w, op.builtin == tfl::kConv2D ? 0 : 3);
    tail->Allocate("per-channel output multipliers and shifts", channels * 4, kArenaAlignment);
    tail->Allocate("per-channel output multipliers and shifts", channels * 4, kArenaAlignment);
  } else if (op.builtin == tfl::kFullyConnected && w != nullptr && x->type != tfl::kFloat32 &&
             w->quant.scale.size() > 1) {
    const int64_t channels = static_cast<int64_t>(w->quant.scale.size());
    tail->Allocate("per-channel output multipliers and shifts", channels * 4, kArenaAlignment);
    tail->Allocate("per-channel output multipliers and shifts", channels * 4, kArenaAlignment);
  } else if (op.builtin == tfl::kSoftmax && x->type == tfl::kInt16) {
    tail->Allocate("softmax int16 tables", 513 * 2, kArenaAlignment);  // exp and 1/(1+x), 513 entries each
    tail->Allocate("softmax int16 tables", 513 * 2, kArenaAlignment);
  }
}

// Elements of a shape, or nullopt when a dim is negative or the product exceeds 2^40.
std::optional<int64_t> Elements(const tfl::Tensor& t) {
  int64_t n = 1;
  for (int32_t d : t.shape) {
    auto m = CheckedMul(n, int64_t{d});
    if (d < 0 || !m || *m > (int64_t{1} << 40)) return std::nullopt;
    n = *m;
  }
  return n;
}

}  // namespace

StatusOr<TflmTail> PredictTflmTail(const tfl::Model& m, const TflmArena& head, int pointer_bytes) {
  if (pointer_bytes != 4 && pointer_bytes != 8)
    return InvalidArgument("TFLM tail: pointer size must be 4 or 8 bytes, not " + std::to_string(pointer_bytes));
  if (m.subgraphs.size() != 1)
    return Unsupported("the model has " + std::to_string(m.subgraphs.size()) +
                       " subgraphs; the TFLM tail prediction covers single-subgraph models (no IF/WHILE)");
  const Abi abi(pointer_bytes);
  const Layout ptr = abi.Ptr(), i = Abi::Int(), b = Abi::Bool();
  const tfl::Subgraph& sg = m.subgraphs[0];
  Tail tail;
  // 1. MicroAllocator::Create: the arena allocator (two vtables, 5 pointers, intptr, int), the
  // GreedyMemoryPlanner (vtable, 2 ints, 4 pointers, 2 ints, pointer, bool), the MicroAllocator
  // (vtable, 4 pointers, bool, size_t, pointer, size_t).
  tail.Allocate("allocator objects", Abi::Struct({abi.Ptrs(7), ptr, i}));
  tail.Allocate("allocator objects", Abi::Struct({ptr, i, i, abi.Ptrs(4), i, i, ptr, b}));
  tail.Allocate("allocator objects", Abi::Struct({abi.Ptrs(5), b, ptr, ptr, ptr}));
  // 2. StartModelAllocation.
  tail.Allocate("allocator objects", abi.Ptrs(2));  // MicroBuiltinDataAllocator: vtable, allocator
  tail.Allocate("subgraph allocations", abi.Ptrs(2), static_cast<int64_t>(m.subgraphs.size()));
  const Layout eval_tensor = Abi::Struct({ptr, ptr, i});  // data, dims, type
  tail.Allocate("TfLiteEvalTensor per tensor", eval_tensor, static_cast<int64_t>(sg.tensors.size()));
  // NodeAndRegistration: TfLiteNode (inputs, outputs, intermediates, user_data, builtin_data,
  // custom_initial_data, custom_initial_data_size) and the registration pointer.
  const Layout node = Abi::Struct({abi.Ptrs(6), i});
  tail.Allocate("NodeAndRegistration per operator", Abi::Struct({node, ptr}), static_cast<int64_t>(sg.operators.size()));
  // 3. PrepareNodeAndRegistrationDataFromFlatbuffer: builtin data, alignof the struct.
  for (const auto& op : sg.operators) {
    const Layout d = BuiltinData(op.builtin, abi);
    if (d.size > 0) tail.Allocate("operators' builtin data", d);
  }
  // 4. InitSubgraphs: each kernel's Init.
  TflmTail out;
  std::set<std::string> unmodelled;
  for (const auto& op : sg.operators) {
    bool modelled = true;
    const Layout d = KernelOpData(op.builtin, abi, &modelled);
    if (!modelled) unmodelled.insert(tfl::BuiltinName(op.builtin));
    if (d.size > 0) tail.Allocate("kernels' OpData", d.size, kArenaAlignment);
  }
  // 5. PrepareSubgraphs.
  for (const auto& op : sg.operators) KernelPrepare(sg, op, &tail);
  // 6. FinishModelAllocation: scratch buffer handles ({uint8_t* data} each), then variables.
  if (head.scratch_buffers > 0) tail.Allocate("scratch buffer handles", ptr, head.scratch_buffers);
  for (const auto& t : sg.tensors) {
    if (!t.is_variable) continue;
    auto n = Elements(t);
    if (!n) return InvalidArgument("variable tensor '" + t.name + "' has a negative or overflowing shape");
    tail.Allocate("variable tensors", *n * tfl::TensorTypeBytes(t.type), kArenaAlignment);
  }
  // 7. AllocateTensors: TfLiteTensor* arrays and one persistent TfLiteTensor per input/output:
  // quantization {type, params*}, params {scale, zero_point}, data, dims, bytes, type,
  // allocation_type, is_variable; with quantization a TfLiteAffineQuantization (scale*, zero_point*,
  // quantized_dimension) and a TfLiteIntArray of the zero points (size + one int per channel).
  const Layout tensor = Abi::Struct({Abi::Struct({i, ptr}), i, i, ptr, ptr, ptr, i, i, b});
  const Layout affine = Abi::Struct({ptr, ptr, i});
  for (const auto* list : {&sg.inputs, &sg.outputs}) {
    tail.Allocate("input/output TfLiteTensors", ptr.size * static_cast<int64_t>(list->size()), kArenaAlignment);
    for (int32_t t : *list) {
      tail.Allocate("input/output TfLiteTensors", tensor);
      const auto& q = sg.tensors[t].quant;
      if (q.scale.empty() || q.zero_point.empty()) continue;
      tail.Allocate("input/output TfLiteTensors", affine);
      tail.Allocate("input/output TfLiteTensors", 4 + 4 * static_cast<int64_t>(q.scale.size()), 4);
    }
  }
  out.pointer_bytes = pointer_bytes;
  out.bytes = tail.used();
  out.parts = tail.Parts();
  out.unmodelled_ops.assign(unmodelled.begin(), unmodelled.end());
  // RecordingMicroAllocator adds 7 RecordedAllocation {3 size_t} and a pointer;
  // RecordingSingleArenaBufferAllocator adds 4 size_t. Both are multiples of 16 on x86-64.
  out.recording_bytes = out.bytes + AlignUp(7 * 3 * pointer_bytes + pointer_bytes, ptr.align) + 4 * pointer_bytes;
  return out;
}

std::string TflmTailSummary(const TflmArena& head, const TflmTail& tail64, const TflmTail& tail32) {
  auto commas = [](int64_t v) {
    std::string d = std::to_string(v), out;
    for (size_t k = 0; k < d.size(); ++k) {
      if (k > 0 && (d.size() - k) % 3 == 0 && d[k - 1] != '-') out += ',';
      out += d[k];
    }
    return out;
  };
  std::string s = "tflm_arena_bytes: arena_size " + commas(head.planned_bytes + tail32.bytes) +
                  " B on a 32-bit Cortex-M = planned head " + commas(head.planned_bytes) + " B + persistent tail " +
                  commas(tail32.bytes) + " B (64-bit host: tail " + commas(tail64.bytes) + " B, arena_size " +
                  commas(head.planned_bytes + tail64.bytes) + " B; " + commas(tail64.recording_bytes) +
                  " B as RecordingMicroInterpreter reports the tail); up to 15 B more when the arena does not start "
                  "16-byte aligned\n";
  s += "  persistent tail, 32-bit:";
  for (size_t k = 0; k < tail32.parts.size(); ++k)
    s += std::string(k ? "," : "") + " " + tail32.parts[k].what + " " + commas(tail32.parts[k].bytes);
  s += " B\n";
  if (!tail32.unmodelled_ops.empty()) {
    s += "  persistent tail: the kernels of";
    for (const auto& op : tail32.unmodelled_ops) s += " " + op;
    s += " are not modelled (their OpData is missing, so the tail is a lower bound)\n";
  }
  return s;
}

}  // namespace sramplan::driver
