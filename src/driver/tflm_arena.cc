// TFLite Micro's head section predicted from a .tflite file (tflm_arena.h). The rules follow
// tflite-micro's MicroAllocator (CommitStaticMemoryPlan), AllocationInfoBuilder and the kernels'
// Prepare functions; the planner is placement::PlaceTflmGreedy, which follows GreedyMemoryPlanner.
#include "driver/tflm_arena.h"

#include <algorithm>
#include <cstdio>

#include "placement/placement.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::driver {
namespace {

namespace tfl = import::tflite;

constexpr int64_t kBufferAlignment = 16;  // MicroArenaBufferAlignment()

// Elements of a tensor's shape (a scalar has one), or nullopt when it overflows or a dim is negative.
std::optional<int64_t> Elements(const tfl::Tensor& t) {
  int64_t n = 1;
  for (int32_t d : t.shape) {
    if (d < 0) return std::nullopt;
    auto m = CheckedMul(n, int64_t{d});
    if (!m || *m > (int64_t{1} << 40)) return std::nullopt;
    n = *m;
  }
  return n;
}

int64_t Dim(const tfl::Tensor& t, size_t k) { return k < t.shape.size() ? t.shape[k] : 1; }

// The scratch buffer (bytes) op `op` requests in Prepare with the chosen kernels, 0 for none.
int64_t ScratchBytes(const tfl::Subgraph& sg, const tfl::Operator& op, TflmKernels kernels) {
  auto in = [&](size_t k) -> const tfl::Tensor* {
    return k < op.inputs.size() && op.inputs[k] >= 0 ? &sg.tensors[op.inputs[k]] : nullptr;
  };
  const tfl::Tensor* out = op.outputs.empty() ? nullptr : &sg.tensors[op.outputs[0]];
  const tfl::Tensor* x = in(0);
  if (x == nullptr || out == nullptr) return 0;
  const bool quantized = x->type == tfl::kInt8 || x->type == tfl::kInt16;
  // Reference kernels (tensorflow/lite/micro/kernels/reduce_common.cc): MEAN on int8/int16 asks for
  // one int32 accumulator per output element.
  if (op.builtin == tfl::kMean && quantized) return Elements(*out).value_or(0) * 4;
  if (kernels != TflmKernels::kCmsisNn || x->type != tfl::kInt8) return 0;
  // CMSIS-NN (DSP extension, no MVE), the *_get_buffer_size functions its TFLM wrappers call.
  const tfl::Tensor* w = in(1);
  const auto& o = op.options;
  if (op.builtin == tfl::kConv2D && w != nullptr) {
    const int64_t c_in = Dim(*x, 3), kh = Dim(*w, 1), kw = Dim(*w, 2);
    const bool fast_1x1 = kh == 1 && kw == 1 && o.stride_h == 1 && o.stride_w == 1 && o.dilation_h == 1 &&
                          o.dilation_w == 1 && c_in % 4 == 0;
    return fast_1x1 ? 0 : 2 * c_in * kh * kw * 2;  // im2col of two columns in int16
  }
  if (op.builtin == tfl::kDepthwiseConv2D && w != nullptr) {
    const int64_t c_in = Dim(*x, 3), kh = Dim(*w, 1), kw = Dim(*w, 2);
    if (o.depth_multiplier != 1) return 0;
    const bool three_by_three = kh == 3 && kw == 3 && o.dilation_h == 1 && o.dilation_w == 1;
    return three_by_three ? 0 : c_in * kh * kw * 2;
  }
  if (op.builtin == tfl::kAveragePool2D) return Dim(*x, 3) * 4;
  return 0;
}

std::string Commas(int64_t v) {
  std::string d = std::to_string(v), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0 && d[i - 1] != '-') out += ',';
    out += d[i];
  }
  return out;
}

}  // namespace

StatusOr<TflmArena> PredictTflmArena(const std::string& bytes, const tfl::Model& m, const TflmArenaOptions& options) {
  (void)bytes;
  if (m.subgraphs.size() != 1)
    return Unsupported("the model has " + std::to_string(m.subgraphs.size()) +
                       " subgraphs; the TFLM arena prediction covers single-subgraph models (no IF/WHILE)");
  const tfl::Subgraph& sg = m.subgraphs[0];
  const int nt = static_cast<int>(sg.tensors.size());
  std::vector<int32_t> offline = options.offline_offsets;
  if (offline.empty() && options.use_offline_plan) {
    SP_ASSIGN_OR_RETURN(offline, tfl::OfflineOffsets(bytes, m));
  }
  if (!offline.empty() && static_cast<int>(offline.size()) != nt)
    return InvalidArgument("the offline plan has " + std::to_string(offline.size()) + " offsets but subgraph 0 has " +
                           std::to_string(nt) + " tensors (TFLM refuses it)");
  // Lifetimes (AllocationInfoBuilder::MarkAllocationLifetimes): -1 = not yet seen.
  std::vector<int> first(nt, -1), last(nt, -1);
  auto created = [&](int t, int scope) {
    if (first[t] == -1) first[t] = scope;
  };
  int scope = 0;
  for (int t : sg.inputs) {
    created(t, scope);
    last[t] = scope;
  }
  std::vector<int> op_scope(sg.operators.size());
  for (size_t i = 0; i < sg.operators.size(); ++i) {
    const tfl::Operator& op = sg.operators[i];
    ++scope;
    op_scope[i] = scope;
    for (int t : op.outputs) created(t, scope);
    for (int t : op.inputs)
      if (t >= 0) last[t] = scope;
    for (int t : op.outputs) last[t] = scope;
  }
  for (int t : sg.outputs) {
    created(t, scope);
    last[t] = scope;
  }
  TflmArena a;
  std::vector<placement::BufferRequest> requests;
  for (int t = 0; t < nt; ++t) {
    const tfl::Tensor& x = sg.tensors[t];
    const bool has_data = m.buffers[x.buffer].size > 0;
    const bool planned_offline = !offline.empty() && offline[t] != -1;
    if (has_data || (x.is_variable && !planned_offline)) continue;
    auto n = Elements(x);
    if (!n) return InvalidArgument("tensor " + std::to_string(t) + " ('" + x.name + "') has a negative or overflowing shape");
    const int64_t size = *n * tfl::TensorTypeBytes(x.type);
    if (size == 0) continue;
    if (first[t] == -1 || last[t] == -1)
      return InvalidArgument("tensor " + std::to_string(t) + " ('" + x.name +
                             "') needs memory but no op produces it and it is not a model input "
                             "(TFLM fails AllocateTensors on it)");
    TflmBuffer b;
    b.tensor = t;
    b.name = x.name;
    b.bytes = size;
    b.planned = AlignUp(size, kBufferAlignment);
    b.first = first[t];
    b.last = last[t];
    b.offline = planned_offline;
    a.buffers.push_back(b);
    ++a.tensor_buffers;
  }
  for (size_t i = 0; i < sg.operators.size(); ++i) {
    const int64_t s = ScratchBytes(sg, sg.operators[i], options.kernels);
    if (s <= 0) continue;
    TflmBuffer b;
    b.op = static_cast<int>(i);
    b.name = "scratch of op " + std::to_string(i) + " (" + tfl::BuiltinName(sg.operators[i].builtin) + ")";
    b.bytes = s;
    b.planned = AlignUp(s, kBufferAlignment);
    b.first = b.last = op_scope[i];
    a.buffers.push_back(b);
    ++a.scratch_buffers;
    a.scratch_bytes += b.planned;
  }
  for (size_t k = 0; k < a.buffers.size(); ++k) {
    placement::BufferRequest r;
    r.id = static_cast<int>(k);
    r.bytes = a.buffers[k].planned;
    r.first_step = a.buffers[k].first;
    r.last_step = a.buffers[k].last;
    if (a.buffers[k].offline) r.fixed_offset = offline[a.buffers[k].tensor];
    requests.push_back(r);
  }
  const placement::Placement p = placement::PlaceTflmGreedy(requests);
  a.planned_bytes = p.arena_bytes;
  for (size_t k = 0; k < a.buffers.size(); ++k) {
    a.buffers[k].offset = p.offsets[k];
    if (a.buffers[k].tensor >= 0) a.peak_tensor_bytes = std::max(a.peak_tensor_bytes, p.offsets[k] + requests[k].bytes);
  }
  return a;
}

std::string TflmArenaSummary(const TflmArena& a) {
  char line[640];
  std::snprintf(line, sizeof line,
                "tflm_arena_bytes: planned head %s B (TFLM's GreedyMemoryPlanner over %lld tensor buffers and %lld "
                "kernel scratch buffers of %s B; tensors alone reach %s B)\n",
                Commas(a.planned_bytes).c_str(), static_cast<long long>(a.tensor_buffers),
                static_cast<long long>(a.scratch_buffers), Commas(a.scratch_bytes).c_str(),
                Commas(a.peak_tensor_bytes).c_str());
  return line;
}

}  // namespace sramplan::driver
