// PlanVerifier: checks a plan on its own terms, sharing no code with the planners (it depends only
// on src/support and src/plan). VerifyPlan runs a fixed sequence of named checks over one Checker
// that indexes the plan as it goes. Every value read from the plan is range-checked before anything
// loops over it or does arithmetic with it: a check that finds an element malformed (a buffer whose
// offset, size or live range is out of range, a step whose geometry disagrees with its tensors'
// shapes) reports it and marks it, and the later checks leave it alone instead of overflowing or
// running for hours.
#include "plan/verifier.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::plan {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// Sane range of a window's kernel size, stride, dilation and padding: no real layer comes near it,
// and it keeps every product of geometry and a tensor dimension far from overflow.
constexpr int64_t kMaxWindow = int64_t{1} << 20;
// The segment-overlap re-check walks the step's output pixels (or FC output chunks) once, in O(1)
// each; beyond this many it refuses instead of running for minutes (a segment step that large would
// need far more SRAM than any microcontroller has).
constexpr int64_t kMaxSegmentSteps = int64_t{1} << 24;

std::string Str(int64_t v) { return std::to_string(v); }
std::string List(const std::vector<int64_t>& v) { return "[" + JoinInts(v, ", ") + "]"; }
// A sum of plan values that sticks at the int64 limits instead of overflowing (reported metrics).
int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (auto s = CheckedAdd(a, b)) return *s;
  return b < 0 ? std::numeric_limits<int64_t>::min() : kInt64Max;
}

const std::set<std::string>& ElementwiseTypes() {
  static const std::set<std::string> k = {
      "Relu",      "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
      "Erf",       "Sqrt", "Neg",     "Exp",         "Log",       "Abs",
      "LeakyRelu", "Elu",  "Gelu",    "Reciprocal",  "Cast",      "BatchNormalization",
      "Add",       "Sub",  "Mul",     "Div",         "Pow",       "Max",
      "Min"};
  return k;
}

bool IsViewType(const std::string& t) {
  return t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" ||
         t == "Identity" || t == "Dropout";
}
bool IsConvType(const std::string& t) { return t == "Conv" || t == "DepthwiseConv"; }
bool IsPoolType(const std::string& t) { return t == "MaxPool" || t == "AveragePool"; }

// Bytes per element of a plan dtype; 0 when the name is unknown (then bytes are not checked).
int64_t ElementBytes(const std::string& dtype) {
  if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
  if (dtype == "int16" || dtype == "float16") return 2;
  if (dtype == "int32" || dtype == "float32") return 4;
  if (dtype == "int64") return 8;
  return 0;
}

std::vector<int64_t> Attr(const StepOp& op, const char* key, std::vector<int64_t> dflt) {
  auto it = op.attrs.find(key);
  return it == op.attrs.end() ? dflt : it->second;
}

// Along one axis of a window op run on the output of a fused expansion (or directly on the input:
// es = ek = 1, ep = 0, plane = n): the window of one output pixel covers plane positions
// start + [0, k), clipped to [0, plane); plane position h reads input positions h*es - ep + [0,
// ek), clipped to [0, n). Returns the first input position any of them reads, or -1 when none reads
// one. Closed form of the byte-by-byte scan (every term grows with h, so the first valid h gives
// the minimum); all arguments are range-checked by the caller, so nothing overflows.
int64_t FirstInputTap(int64_t start, int64_t k, int64_t plane, int64_t es, int64_t ep, int64_t ek,
                      int64_t n) {
  if (n < 1) return -1;
  const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(start + k, plane) - 1;
  // h*es - ep + ek - 1 >= 0 (the expansion window reaches row 0) and h*es - ep < n (it starts
  // inside).
  const int64_t need = ep - ek + 1;
  const int64_t ha = need <= 0 ? 0 : CeilDiv(need, es);
  const int64_t hb = (n + ep - 1) / es;
  const int64_t first = std::max(lo, ha);
  if (first > std::min(hi, hb)) return -1;
  return std::max<int64_t>(0, first * es - ep);
}

// How many workspace bytes a segment step needs, re-derived from the kernels' contract; "" when
// the plan gives the step a large enough workspace buffer (defined below).
std::string CheckSegmentWorkspace(const Plan& p, const std::unordered_map<std::string, const Tensor*>& tensors, int s);

class Checker {
 public:
  explicit Checker(const Plan& p) : p_(p), n_(static_cast<int>(p.steps.size())) {}

  VerifyResult Run() {
    CheckTensors();
    CheckLevels();
    CheckSteps();
    CheckDependencies();
    CheckGeometry();
    CheckBuffers();
    CheckStepKinds();
    CheckPools();
    CheckResidency();
    CheckTransfers();
    CheckOffchipBytes();
    CheckDeclaredOverlaps();
    CheckOverlaps();
    CheckReportedSizes();
    return std::move(r_);
  }

 private:
  void Err(std::string m) {
    if (r_.errors.size() < 1000) r_.errors.push_back(std::move(m));
  }
  std::string OpWhere(int s, size_t k) const {
    return "steps[" + Str(s) + "].ops[" + Str(static_cast<int64_t>(k)) + "] '" +
           p_.steps[s].ops[k].name + "'";
  }
  static std::string BufferWhere(size_t i, const Buffer& b) {
    return "buffers[" + Str(static_cast<int64_t>(i)) + "] '" + b.tensor + "'";
  }
  const Tensor* FindTensor(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : it->second;
  }
  // The shape of a tensor whose shape and bytes passed CheckTensors, or nullptr.
  const std::vector<int64_t>* GoodShape(const std::string& name) const {
    const Tensor* t = FindTensor(name);
    return t && !bad_shape_.count(name) ? &t->shape : nullptr;
  }
  std::string RootOf(const std::string& name) const {
    std::string cur = name;
    for (int guard = 0; guard < 64; ++guard) {
      const Tensor* t = FindTensor(cur);
      if (!t || t->alias_of.empty()) return cur;
      cur = t->alias_of;
    }
    return cur;
  }
  bool Offchip(const std::string& level) const {
    auto it = offchip_.find(level);
    return it != offchip_.end() && it->second;
  }
  const std::vector<const Buffer*>& BuffersOf(const std::string& tensor) const {
    static const std::vector<const Buffer*> kNone;
    auto it = buffers_of_.find(tensor);
    return it == buffers_of_.end() ? kNone : it->second;
  }

  // Tensors: unique names, bytes in [0, kMaxBytes], dimensions >= 0, and bytes equal to the shape's
  // elements times the dtype's size (when the dtype is known).
  void CheckTensors() {
    for (size_t i = 0; i < p_.tensors.size(); ++i) {
      const Tensor& t = p_.tensors[i];
      const std::string where = "tensors[" + Str(static_cast<int64_t>(i)) + "] '" + t.name + "'";
      if (!tensors_.emplace(t.name, &t).second) Err("tensor '" + t.name + "' is listed twice");
      bool ok = true;
      if (t.bytes < 0 || t.bytes > kMaxBytes) {
        Err(where + ": bytes " + Str(t.bytes) + " is outside [0, " + Str(kMaxBytes) + "]");
        ok = false;
      }
      std::optional<int64_t> elements = 1;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] < 0) {
          Err(where + ": shape[" + Str(static_cast<int64_t>(d)) + "] is negative (" +
              Str(t.shape[d]) + ")");
          ok = false;
          elements.reset();
          break;
        }
        elements = CheckedMul(*elements, t.shape[d]);
        if (!elements) break;
      }
      // An empty shape is unknown (hand-written plans) or a scalar: bytes are not checked against
      // it.
      const int64_t size = ElementBytes(t.dtype);
      if (ok && size > 0 && !t.shape.empty()) {
        std::optional<int64_t> need = elements ? CheckedMul(*elements, size) : std::nullopt;
        if (!need || *need != t.bytes) {
          Err(where + ": shape " + List(t.shape) + " of " + t.dtype + " needs " +
              (need ? Str(*need) : std::string("more than 2^63")) + " bytes, but bytes is " +
              Str(t.bytes));
          ok = false;
        }
      }
      if (!ok) bad_shape_.insert(t.name);
    }
  }

  // Levels: unique names, positive capacity; which are off chip.
  void CheckLevels() {
    for (size_t i = 0; i < p_.levels.size(); ++i) {
      const Level& l = p_.levels[i];
      if (!levels_.emplace(l.name, &l).second)
        Err("levels[" + Str(static_cast<int64_t>(i)) + "] '" + l.name + "' is listed twice");
      offchip_[l.name] = l.kind == "dram" || l.kind == "flash";
      if (l.capacity <= 0) Err("level '" + l.name + "' has no capacity");
    }
  }

  // Steps numbered 0..n-1, each runs an op, op names unique, every tensor written exists and is
  // produced once.
  void CheckSteps() {
    std::set<std::string> op_names;
    for (int s = 0; s < n_; ++s) {
      const Step& st = p_.steps[s];
      if (st.index != s)
        Err("steps[" + Str(s) + "]: index " + Str(st.index) + ", expected " + Str(s));
      if (st.ops.empty()) Err("steps[" + Str(s) + "] runs no op");
      for (size_t k = 0; k < st.ops.size(); ++k) {
        const StepOp& op = st.ops[k];
        if (!op_names.insert(op.name).second) Err("op '" + op.name + "' appears in two steps");
        for (const auto& out : op.outputs) {
          if (!tensors_.count(out))
            Err("step " + Str(s) + " op '" + op.name + "' writes unknown tensor '" + out + "'");
          if (produced_at_.count(out)) Err("tensor '" + out + "' is produced twice");
          produced_at_[out] = s;
          position_in_step_[out] = k;
        }
      }
    }
    for (const auto& t : p_.tensors)
      if ((t.kind == "activation" || t.kind == "output") && !produced_at_.count(t.name))
        Err("tensor '" + t.name + "' (" + t.kind + ") is never produced");
  }

  // Dependencies: every input is a graph input, a constant, or produced earlier (inside a fused
  // step, ops run in their listed order).
  void CheckDependencies() {
    for (int s = 0; s < n_; ++s)
      for (size_t k = 0; k < p_.steps[s].ops.size(); ++k) {
        const StepOp& op = p_.steps[s].ops[k];
        for (const auto& in : op.inputs) {
          const Tensor* t = FindTensor(in);
          if (!t) {
            Err("step " + Str(s) + " op '" + op.name + "' reads unknown tensor '" + in + "'");
            continue;
          }
          if (t->kind == "input" || t->kind == "constant") continue;
          auto pr = produced_at_.find(in);
          if (pr == produced_at_.end())
            Err("op '" + op.name + "' reads '" + in + "', which no step produces");
          else if (pr->second > s || (pr->second == s && position_in_step_[in] >= k))
            Err("dependency violated: step " + Str(s) + " op '" + op.name + "' reads '" + in +
                "', produced at step " + Str(pr->second));
        }
      }
  }

  // Geometry: every attr in its sane range, and the output shape of every window op (Conv,
  // DepthwiseConv, MaxPool/AveragePool with a kernel_shape) what its geometry gives from its input
  // shape, in NHWC or NCHW. Runs before anything that loops over the geometry.
  void CheckGeometry() {
    geometry_ok_.assign(n_, true);
    for (int s = 0; s < n_; ++s)
      for (size_t k = 0; k < p_.steps[s].ops.size(); ++k) {
        const StepOp& op = p_.steps[s].ops[k];
        const std::string where = OpWhere(s, k);
        bool ok = CheckAttrRanges(op, where);
        bool nhwc = false;
        if (ok && (IsConvType(op.type) || (IsPoolType(op.type) && op.attrs.count("kernel_shape"))))
          ok = CheckWindowShapes(op, where, &nhwc);
        if (!ok) geometry_ok_[s] = false;
        if (nhwc) nhwc_ops_.insert(&op);
      }
  }

  bool CheckAttrRanges(const StepOp& op, const std::string& where) {
    bool ok = true;
    auto range = [&](const std::string& key, const std::vector<int64_t>& v, int64_t lo,
                     int64_t hi) {
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i] < lo || v[i] > hi) {
          Err(where + ": " + key + "[" + Str(static_cast<int64_t>(i)) + "] " + Str(v[i]) +
              " is outside [" + Str(lo) + ", " + Str(hi) + "]");
          ok = false;
          return;
        }
    };
    for (const auto& [key, v] : op.attrs) {
      if (v.size() > 8) {
        Err(where + ": " + key + " has " + Str(static_cast<int64_t>(v.size())) + " entries");
        ok = false;
        continue;
      }
      if (key == "kernel_shape" || key == "strides" || key == "dilations") {
        range(key, v, 1, kMaxWindow);
      } else if (key == "pads") {
        range(key, v, 0, kMaxWindow);
      } else if (key == "group" || key == "segment_bytes" || key == "row_cache") {
        if (v.size() != 1) {
          Err(where + ": " + key + " must have one entry, has " +
              Str(static_cast<int64_t>(v.size())));
          ok = false;
          continue;
        }
        if (key == "row_cache")
          range(key, v, 0, 1);
        else
          range(key, v, 1, kInt32Max);
      }
    }
    return ok;
  }

  // The output of `op` (a Conv, DepthwiseConv or pool) as its geometry gives it, in one layout.
  // Returns the expected output shape, empty when the weights, channels or group disagree.
  std::vector<int64_t> WindowOutput(const StepOp& op, const std::vector<int64_t>& x,
                                    bool nhwc) const {
    const int rank = static_cast<int>(x.size());
    const int nsp = rank - 2;
    const int caxis = nhwc ? rank - 1 : 1;
    auto sp = [&](int i) { return nhwc ? 1 + i : 2 + i; };
    const int64_t c_in = x[caxis];
    int64_t c_out = c_in;
    std::vector<int64_t> kernel = Attr(op, "kernel_shape", {});
    const int64_t group = Attr(op, "group", {1})[0];
    if (IsConvType(op.type)) {
      const std::vector<int64_t>* w = op.inputs.size() >= 2 ? GoodShape(op.inputs[1]) : nullptr;
      if (!w || static_cast<int>(w->size()) != rank) return {};
      c_out = (*w)[0];
      const int64_t w_cin = nhwc ? (*w)[rank - 1] : (*w)[1];
      std::vector<int64_t> wk;
      for (int i = 0; i < nsp; ++i) wk.push_back(nhwc ? (*w)[1 + i] : (*w)[2 + i]);
      if (kernel.empty()) kernel = wk;
      auto cin = CheckedMul(w_cin, group);
      if (kernel != wk || !cin || *cin != c_in || c_out % group != 0) return {};
      if (op.type == "DepthwiseConv" && (group != c_in || c_out != c_in)) return {};
    }
    const std::vector<int64_t> strides = Attr(op, "strides", std::vector<int64_t>(nsp, 1));
    const std::vector<int64_t> dil = Attr(op, "dilations", std::vector<int64_t>(nsp, 1));
    const std::vector<int64_t> pads = Attr(op, "pads", std::vector<int64_t>(2 * nsp, 0));
    if (static_cast<int>(kernel.size()) != nsp || static_cast<int>(strides.size()) != nsp ||
        static_cast<int>(dil.size()) != nsp || static_cast<int>(pads.size()) != 2 * nsp)
      return {};
    std::vector<int64_t> y = x;
    y[caxis] = c_out;
    for (int i = 0; i < nsp; ++i) {
      // All geometry is within kMaxWindow (CheckAttrRanges); a dimension is at most 2^63 - 1.
      const int64_t eff = dil[i] * (kernel[i] - 1) + 1;
      auto total = CheckedAdd(x[sp(i)], pads[i] + pads[i + nsp]);
      if (!total || *total < eff) return {};
      y[sp(i)] = (*total - eff) / strides[i] + 1;
    }
    return y;
  }

  bool CheckWindowShapes(const StepOp& op, const std::string& where, bool* nhwc_ok) {
    const std::vector<int64_t>* x = op.inputs.empty() ? nullptr : GoodShape(op.inputs[0]);
    const std::vector<int64_t>* y = op.outputs.empty() ? nullptr : GoodShape(op.outputs[0]);
    if (!x || !y) {
      Err(where + ": a " + op.type + " needs an input and an output tensor with valid shapes");
      return false;
    }
    if (IsConvType(op.type) && op.inputs.size() < 2) {
      Err(where + ": a " + op.type + " needs a weight input");
      return false;
    }
    if (x->size() < 3 || x->size() > 8 || y->size() != x->size()) {
      Err(where + ": input " + List(*x) + " and output " + List(*y) +
          " must have one rank of at least 3 (batch, channels, spatial axes)");
      return false;
    }
    bool any = false;
    std::vector<int64_t> first;
    for (bool nhwc : {true, false}) {
      std::vector<int64_t> want = WindowOutput(op, *x, nhwc);
      // Pools may round up (ceil_mode, which the plan does not record): accept one more per axis.
      bool match = want == *y;
      if (!match && IsPoolType(op.type) && !want.empty()) {
        match = true;
        for (size_t i = 0; i < want.size(); ++i)
          match = match && ((*y)[i] == want[i] || (*y)[i] == want[i] + 1);
      }
      if (match) {
        any = true;
        if (nhwc) *nhwc_ok = true;
      }
      if (first.empty()) first = want;
    }
    if (any) return true;
    Err(where + ": output shape " + List(*y) + " is not what input " + List(*x) +
        " and the geometry (kernel_shape " + List(Attr(op, "kernel_shape", {})) + ", strides " +
        List(Attr(op, "strides", {})) + ", pads " + List(Attr(op, "pads", {})) + ", dilations " +
        List(Attr(op, "dilations", {})) + ", group " + List(Attr(op, "group", {1})) + ") give" +
        (first.empty() ? std::string(" (the weights, channels or group disagree)")
                       : ": " + List(first) + " in NHWC"));
    return false;
  }

  // Buffers: known tensor and level, offset and bytes in [0, kMaxBytes], 0 <= first_step <=
  // last_step < steps, at least the tensor's bytes, no buffer for a view. Only sound buffers (in
  // range) take part in the later checks; their end is their capacity check.
  void CheckBuffers() {
    sound_.assign(p_.buffers.size(), false);
    const int64_t steps = std::max(n_, 1);
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      const Buffer& b = p_.buffers[i];
      const std::string where = BufferWhere(i, b);
      const Tensor* t = FindTensor(b.tensor);
      if (!t) {
        Err(where + " names an unknown tensor");
        continue;
      }
      auto l = levels_.find(b.level);
      if (l == levels_.end()) {
        Err(where + " is in unknown level '" + b.level + "'");
        continue;
      }
      bool ok = true;
      if (b.offset < 0 || b.offset > kMaxBytes) {
        Err(where + ": offset " + Str(b.offset) + " is outside [0, " + Str(kMaxBytes) + "]");
        ok = false;
      }
      if (b.bytes < 0 || b.bytes > kMaxBytes) {
        Err(where + ": bytes " + Str(b.bytes) + " is outside [0, " + Str(kMaxBytes) + "]");
        ok = false;
      } else if (b.bytes < t->bytes) {
        Err(where + " has " + Str(b.bytes) + " bytes but the tensor needs " + Str(t->bytes));
      }
      for (const auto& [name, v] :
           {std::pair<const char*, int>{"first_step", b.first_step}, {"last_step", b.last_step}})
        if (v < 0 || v >= steps) {
          Err(where + ": " + name + " " + Str(v) + " is outside [0, " + Str(steps - 1) + "]");
          ok = false;
        }
      if (ok && b.first_step > b.last_step) {
        Err(where + ": first_step " + Str(b.first_step) + " is after last_step " +
            Str(b.last_step));
        ok = false;
      }
      if (!t->alias_of.empty())
        Err(where + ": '" + b.tensor + "' is a view and must not own a buffer");
      if (!ok) continue;
      const Pool* pool = FindPool(p_, b.level);
      if (pool && (b.offset >= pool->bytes || b.bytes > pool->bytes))
        Err(where + " [" + Str(b.offset) + ", +" + Str(b.bytes) +
            ") does not start inside the circular pool of level '" + b.level + "' (" +
            Str(pool->bytes) + " bytes), or is larger than the pool");
      int64_t end = 0;
      for (const auto& [lo, hi] : BufferPieces(p_, b)) end = std::max(end, hi);
      if (b.offset > l->second->capacity || end > l->second->capacity)
        r_.capacity.push_back(where + " ends at byte " + Str(end) + " of level '" + b.level +
                              "', which has " + Str(l->second->capacity) + " bytes");
      used_[b.level] = std::max(used_[b.level], end);
      buffers_of_[b.tensor].push_back(&b);
      sound_[i] = true;
    }
  }

  // The step's workspace buffer (params.workspace), live at step s on chip, or nullptr.
  const Buffer* LiveWorkspace(int s) const {
    const std::string& ws = p_.steps[s].workspace;
    if (ws.empty()) return nullptr;
    for (const Buffer* w : BuffersOf(ws))
      if (w->first_step <= s && s <= w->last_step && !Offchip(w->level)) return w;
    return nullptr;
  }

  // Step kinds: each step's kind agrees with its ops, its parameters are in range and set only for
  // the kinds that use them, and a step that needs a workspace (segment, fused-bottleneck,
  // inplace-depthwise) names one whose buffer is live on chip at the step.
  void CheckStepKinds() {
    for (int s = 0; s < n_; ++s) {
      const Step& st = p_.steps[s];
      const auto& ops = st.ops;
      const std::string where = "steps[" + Str(s) + "] (kind '" + StepKindName(st.kind) + "')";
      if (st.kind == StepKind::kFusedTiled || st.kind == StepKind::kModule) {
        Err(where + ": this step kind is not supported yet (reserved for fusion and module "
                    "buffering); plan the model with another strategy");
        continue;
      }
      std::string types;
      for (size_t k = 0; k < ops.size(); ++k) types += (k ? ", " : "") + ops[k].type;
      const bool bottleneck = (ops.size() == 3 || ops.size() == 4) && ops[0].type == "Conv" &&
                              ops[1].type == "DepthwiseConv" && ops[2].type == "Conv" &&
                              (ops.size() == 3 || ops[3].type == "Add");
      const bool one = ops.size() == 1;
      if (st.segment_bytes < 0 || st.segment_bytes > kInt32Max)
        Err(where + ": segment_bytes " + Str(st.segment_bytes) + " is outside [1, " + Str(kInt32Max) + "]");
      else if (st.segment_bytes != 0 && !IsSegmentKind(st.kind))
        Err(where + ": segment_bytes is set, but only segment and fused-bottleneck steps run on segments");
      if (st.row_cache && st.kind != StepKind::kFusedBottleneck)
        Err(where + ": row_cache is set, but only a fused-bottleneck step has the row-cache kernel");
      if (st.kind == StepKind::kOp && bottleneck)
        Err(where + " runs a fused inverted bottleneck (" + types +
            "), which only the segment-aware kernel runs: its kind must be 'fused-bottleneck'");
      if (st.kind == StepKind::kFusedBottleneck && !bottleneck)
        Err(where + " must run Conv, DepthwiseConv, Conv [, Add], but runs " + types);
      if (st.kind == StepKind::kInPlaceDepthwise && !(one && ops[0].type == "DepthwiseConv"))
        Err(where + " must run one DepthwiseConv, but runs " + types);
      if (st.kind == StepKind::kSegment) {
        const bool op_ok = one && (IsConvType(ops[0].type) || ops[0].type == "Gemm" || ops[0].type == "MatMul");
        bool declared = false;
        for (const Buffer* b : one && !ops[0].outputs.empty() ? BuffersOf(ops[0].outputs[0])
                                                              : std::vector<const Buffer*>{})
          for (const Overlap& o : b->overlaps) declared = declared || o.reason == "segment-overlap";
        if (!op_ok)
          Err(where + " must run one Conv, DepthwiseConv, Gemm or MatMul, but runs " + types);
        else if (!declared)
          Err(where + ": its output '" + ops[0].outputs[0] +
              "' declares no segment-overlap with its input; a plain op is kind 'op'");
      }
      const bool needs_ws = IsSegmentKind(st.kind) || st.kind == StepKind::kInPlaceDepthwise;
      if (needs_ws && st.workspace.empty())
        Err(where + " names no workspace (params.workspace): " +
            (st.kind == StepKind::kInPlaceDepthwise
                 ? "the in-place depthwise convolution computes each channel in a scratch buffer"
                 : "the segment-aware kernels keep part of the output in a workspace buffer"));
      else if (!st.workspace.empty() && FindTensor(st.workspace) && FindTensor(st.workspace)->kind != "scratch")
        Err(where + ": its workspace '" + st.workspace + "' is a tensor of kind '" +
            FindTensor(st.workspace)->kind + "', not a scratch buffer");
      else if (needs_ws && !LiveWorkspace(s))
        Err(where + ": its workspace '" + st.workspace + "' has no on-chip buffer live at step " + Str(s));
      else if (!st.workspace.empty() && BuffersOf(st.workspace).empty())
        Err(where + ": its workspace '" + st.workspace + "' has no buffer");
    }
  }

  // Circular pools: one per on-chip level, covering the level's used bytes; a buffer that wraps is
  // touched only by the segment kernels, as the data input or output of a segment step, never by a
  // transfer, and is not a graph output (the application reads outputs as plain arrays).
  void CheckPools() {
    std::set<std::string> pool_levels;
    for (const Pool& pool : p_.pools) {
      const std::string what = "circular pool of level '" + pool.level + "'";
      auto l = levels_.find(pool.level);
      if (l == levels_.end()) {
        Err(what + ": no such level");
        continue;
      }
      if (!pool_levels.insert(pool.level).second) Err(what + " is declared twice");
      if (Offchip(pool.level)) Err(what + ": the level is off-chip");
      if (pool.bytes <= 0 || pool.bytes > kMaxBytes || pool.segment_bytes < 1 ||
          pool.segment_bytes > kInt32Max)
        Err(what + " has " + Str(pool.bytes) + " bytes and segments of " + Str(pool.segment_bytes));
      else if (pool.bytes != used_[pool.level])
        Err(what + " has " + Str(pool.bytes) + " bytes but must cover the level's used " +
            Str(used_[pool.level]) +
            " bytes (the kernels address the whole level modulo its size)");
    }
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      const Buffer& b = p_.buffers[i];
      if (!sound_[i] || !Wraps(p_, b)) continue;
      const std::string what =
          BufferWhere(i, b) + " wraps around the circular pool of level '" + b.level + "'";
      const Tensor* t = FindTensor(b.tensor);
      if (t && (t->kind == "output" || t->kind == "constant"))
        Err(what + " but is a graph " + t->kind + "; place it without wrapping");
      for (const auto& tr : p_.transfers)
        if (tr.tensor == b.tensor && tr.step >= b.first_step && tr.step <= b.last_step)
          Err(what + " but is moved by a " + tr.kind + " at step " + Str(tr.step) +
              "; transfers copy plain ranges");
      for (int s = b.first_step; s <= b.last_step && s < n_; ++s) {
        const auto& ops = p_.steps[s].ops;
        bool touched = false;
        for (const auto& op : ops) {
          for (const auto& in : op.inputs) touched = touched || RootOf(in) == b.tensor;
          for (const auto& out : op.outputs) touched = touched || out == b.tensor;
        }
        if (!touched) continue;
        const bool pool_operand =
            !ops.empty() &&
            ((!ops.front().inputs.empty() && RootOf(ops.front().inputs[0]) == b.tensor) ||
             (!ops.back().outputs.empty() && ops.back().outputs[0] == b.tensor));
        bool other_use =
            false;  // read or written by an op of the step other than as the pool operand
        for (size_t k = 0; k < ops.size(); ++k) {
          for (size_t j = 0; j < ops[k].inputs.size(); ++j)
            if (RootOf(ops[k].inputs[j]) == b.tensor && !(k == 0 && j == 0) &&
                !(ops.size() == 4 && k == 3))  // the fused residual Add reads the group input
              other_use = true;
          for (size_t j = 0; j < ops[k].outputs.size(); ++j)
            if (ops[k].outputs[j] == b.tensor && !(k + 1 == ops.size() && j == 0)) other_use = true;
        }
        if (!IsSegmentKind(p_.steps[s].kind) || !pool_operand || other_use)
          Err(what + " but step " + Str(s) + " ('" +
              (ops.empty() ? std::string() : ops.front().name) +
              "') is not a segment step using it as its pool input or output; only the segment "
              "kernels address "
              "the pool modulo");
      }
    }
  }

  // Residency: every input and output of a step is covered by a buffer of its storage tensor,
  // except fused intermediates (produced and entirely consumed inside one multi-op step, computed
  // tile by tile in its workspace); every graph output is still resident after the last step.
  void CheckResidency() {
    std::set<std::string> fused;
    for (int s = 0; s < n_; ++s) {
      if (p_.steps[s].ops.size() < 2) continue;
      std::set<std::string> names;
      for (const auto& op : p_.steps[s].ops) names.insert(op.name);
      for (const auto& op : p_.steps[s].ops)
        for (const auto& out : op.outputs) {
          const Tensor* t = FindTensor(out);
          if (!t || t->kind != "activation" || t->consumers.empty()) continue;
          bool inside = true;
          for (const auto& c : t->consumers) inside = inside && names.count(c);
          if (inside) fused.insert(out);
        }
    }
    auto covered = [&](const std::string& root, int s) {
      for (const Buffer* b : BuffersOf(root))
        if (b->first_step <= s && s <= b->last_step) return true;
      return false;
    };
    for (int s = 0; s < n_; ++s)
      for (const auto& op : p_.steps[s].ops)
        for (int io = 0; io < 2; ++io)
          for (const auto& name : io == 0 ? op.inputs : op.outputs) {
            if (!tensors_.count(name) || fused.count(name)) continue;
            const std::string root = RootOf(name);
            if (!covered(root, s))
              Err(std::string(io == 0 ? "input" : "output") + " '" + name + "'" +
                  (root != name ? " (view of '" + root + "')" : "") + " of step " + Str(s) +
                  " op '" + op.name + "' is not resident: no buffer covers step " + Str(s));
          }
    if (n_ == 0) return;
    for (const auto& t : p_.tensors)
      if (t.kind == "output" && produced_at_.count(t.name) && !covered(RootOf(t.name), n_ - 1))
        Err("graph output '" + t.name +
            "' is not resident after the last step: no buffer of it covers step " + Str(n_ - 1));
  }

  // Transfers (plan-format.md): loads/reloads copy off chip -> on chip before the step's ops, into
  // a buffer that starts at that step; spills/stores copy on chip -> off chip after them, from a
  // buffer live at that step into one live from that step on. Data must exist where it is copied
  // from, and every buffer must hold data when it starts: at its tensor's production, filled by a
  // load, or (a graph input or weight) from before step 0.
  void CheckTransfers() {
    // Earliest step at which each tensor's data exists in each level.
    std::map<std::pair<std::string, std::string>, int> valid_from;  // (tensor, level) -> step
    for (const auto& t : p_.tensors)
      if (t.kind == "input" || t.kind == "constant")
        for (const Buffer* b : BuffersOf(t.name))
          if (Offchip(b->level) && b->first_step == 0) valid_from[{t.name, b->level}] = -1;
    std::vector<size_t> order;
    for (size_t i = 0; i < p_.transfers.size(); ++i) order.push_back(i);
    auto after = [](const Transfer& t) { return t.kind == "spill" || t.kind == "store"; };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Transfer &ta = p_.transfers[a], &tb = p_.transfers[b];
      return ta.step != tb.step ? ta.step < tb.step : after(ta) < after(tb);
    });
    std::set<std::pair<std::string, int>> filled;  // (tensor, step) buffers filled by a transfer
    for (size_t i : order) {
      const Transfer* tr = &p_.transfers[i];
      const std::string what = "transfers[" + Str(static_cast<int64_t>(i)) + "] (" + tr->kind +
                               " of '" + tr->tensor + "' at step " + Str(tr->step) + ")";
      const Tensor* t = FindTensor(tr->tensor);
      if (!t) {
        Err(what + " names an unknown tensor");
        continue;
      }
      if (tr->kind != "load" && tr->kind != "reload" && tr->kind != "spill" &&
          tr->kind != "store") {
        Err(what + ": unknown kind (load, reload, spill, store)");
        continue;
      }
      if (!levels_.count(tr->from) || !levels_.count(tr->to) || tr->from == tr->to) {
        Err(what + ": from '" + tr->from + "' to '" + tr->to + "' must name two different levels");
        continue;
      }
      if (tr->step < 0 || tr->step >= n_) {
        Err(what + ": step " + Str(tr->step) + " is outside [0, " + Str(n_ - 1) + "]");
        continue;
      }
      if (tr->bytes != t->bytes)
        Err(what + " moves " + Str(tr->bytes) + " bytes, the tensor has " + Str(t->bytes));
      const bool in = tr->kind == "load" || tr->kind == "reload";
      if (in && (!Offchip(tr->from) || Offchip(tr->to)))
        Err(what + " must copy from an off-chip level to an on-chip one");
      if (!in && (Offchip(tr->from) || !Offchip(tr->to)))
        Err(what + " must copy from an on-chip level to an off-chip one");
      const Buffer *src = nullptr, *dst = nullptr;
      for (const Buffer* b : BuffersOf(tr->tensor)) {
        if (b->level == tr->from && b->first_step <= tr->step && tr->step <= b->last_step) src = b;
        if (b->level == tr->to && b->first_step <= tr->step && tr->step <= b->last_step) dst = b;
      }
      if (!src || !dst) {
        Err(what + ": no buffer of the tensor in '" + (src ? tr->to : tr->from) +
            "' is live at that step");
        continue;
      }
      auto v = valid_from.find({tr->tensor, tr->from});
      const bool src_valid =
          v != valid_from.end() && (in ? v->second < tr->step : v->second <= tr->step);
      // On chip, the data is valid from its production step in the buffer that covers it.
      auto pr = produced_at_.find(tr->tensor);
      const bool produced_here = !in && pr != produced_at_.end() && pr->second <= tr->step &&
                                 src->first_step <= pr->second;
      const bool filled_here = !in && filled.count({tr->tensor, src->first_step}) > 0;
      if (!src_valid && !produced_here && !filled_here)
        Err(what + ": the tensor's data is not in '" + tr->from + "' at that step");
      if (in) {
        if (dst->first_step != tr->step)
          Err(what + ": the on-chip buffer must start at the step of the load");
        filled.insert({tr->tensor, tr->step});
      } else {
        // The copy exists off chip from after this step (a later reload may read it).
        valid_from.emplace(std::make_pair(tr->tensor, tr->to), tr->step);
      }
    }
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      const Buffer& b = p_.buffers[i];
      if (!sound_[i]) continue;
      const Tensor* t = FindTensor(b.tensor);
      if (t->kind == "scratch" || !t->alias_of.empty()) continue;
      const bool initial_kind = t->kind == "input" || t->kind == "constant";
      if (Offchip(b.level)) {
        // A graph input or weight is off chip before the run; a later copy comes from a spill or
        // store.
        if (initial_kind && b.first_step != 0)
          Err(BufferWhere(i, b) + " in '" + b.level + "' from step " + Str(b.first_step) +
              " holds no data: a graph " + t->kind +
              " is in memory before step 0, so its buffer must start at step 0");
        continue;
      }
      bool has_offchip = false;
      for (const Buffer* o : BuffersOf(b.tensor)) has_offchip = has_offchip || Offchip(o->level);
      const bool initial = initial_kind && !has_offchip && b.first_step == 0;
      auto pr = produced_at_.find(b.tensor);
      const bool produced = pr != produced_at_.end() && pr->second == b.first_step;
      if (!initial && !produced && !filled.count({b.tensor, b.first_step}))
        Err(BufferWhere(i, b) + " in '" + b.level + "' from step " + Str(b.first_step) +
            " holds no data: it starts neither at the tensor's production nor with a load" +
            (initial_kind && !has_offchip
                 ? " (a graph " + t->kind + " is written before step 0: start it at step 0)"
                 : ""));
    }
  }

  // Off-chip bytes: transfers plus ops reading (writing) tensors that only have an off-chip buffer.
  void CheckOffchipBytes() {
    int64_t rd = 0, wr = 0, nc_rd = 0, nc_wr = 0;
    for (const auto& tr : p_.transfers) {
      const bool in = tr.kind == "load" || tr.kind == "reload";
      (in ? rd : wr) = SaturatingAdd(in ? rd : wr, tr.bytes);
      if (tr.kind == "reload") nc_rd = SaturatingAdd(nc_rd, tr.bytes);
      if (tr.kind == "spill") nc_wr = SaturatingAdd(nc_wr, tr.bytes);
    }
    for (int s = 0; s < n_; ++s)
      for (const auto& op : p_.steps[s].ops)
        for (int io = 0; io < 2; ++io) {
          if (io == 1 && IsViewType(op.type)) continue;
          for (const auto& name : io == 0 ? op.inputs : op.outputs) {
            const Tensor* t = FindTensor(name);
            if (!t) continue;
            const Buffer* hit = nullptr;
            for (const Buffer* b : BuffersOf(RootOf(name)))
              if (b->first_step <= s && s <= b->last_step &&
                  (!hit || (Offchip(hit->level) && !Offchip(b->level))))
                hit = b;
            if (hit && Offchip(hit->level))
              (io == 0 ? rd : wr) = SaturatingAdd(io == 0 ? rd : wr, t->bytes);
          }
        }
    const Metrics& m = p_.metrics;
    if (rd != m.offchip_read_bytes || wr != m.offchip_write_bytes)
      Err("metrics report " + Str(m.offchip_read_bytes) + " off-chip bytes read and " +
          Str(m.offchip_write_bytes) +
          " written; the plan's transfers and off-chip operands add up to " + Str(rd) + " and " +
          Str(wr));
    if (nc_rd != m.noncompulsory_read_bytes || nc_wr != m.noncompulsory_write_bytes)
      Err("metrics report " + Str(m.noncompulsory_read_bytes) + "/" +
          Str(m.noncompulsory_write_bytes) +
          " non-compulsory bytes read/written; reloads and spills add up to " + Str(nc_rd) + "/" +
          Str(nc_wr));
  }

  // Declared overlaps: legal only as the in-place rules allow, or (segment-overlap) when the step's
  // access order, recomputed here, allows the declared distance.
  void CheckDeclaredOverlaps() {
    std::unordered_map<std::string, const Buffer*> first_buffer;
    for (size_t i = 0; i < p_.buffers.size(); ++i)
      if (sound_[i]) first_buffer.emplace(p_.buffers[i].tensor, &p_.buffers[i]);
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      if (!sound_[i]) continue;
      const Buffer& b = p_.buffers[i];
      for (const auto& o : b.overlaps) {
        const std::string what = "declared overlap of '" + b.tensor + "' with '" + o.tensor + "'";
        auto ob = first_buffer.find(o.tensor);
        if (ob == first_buffer.end()) {
          Err(what + ": no buffer for '" + o.tensor + "'");
          continue;
        }
        const Buffer& a = *ob->second;
        if (o.reason == "segment-overlap") {
          // In a circular pool the output sits (in - out) mod pool bytes below the input.
          int64_t diff = b.offset - a.offset;
          if (const Pool* pool = FindPool(p_, b.level);
              pool && pool->bytes > 0 && a.level == b.level)
            diff = -((((a.offset - b.offset) % pool->bytes) + pool->bytes) % pool->bytes);
          std::string why = o.shift != diff ? "declared shift " + Str(o.shift) +
                                                  " is not the offsets' difference " + Str(diff)
                                            : SegmentOverlapProblem(a, b);
          if (why.empty()) why = WorkspaceProblem(b);
          if (!why.empty()) {
            Err(what + ": " + why);
            continue;
          }
          allowed_.insert({b.tensor, o.tensor});
          allowed_.insert({o.tensor, b.tensor});
          continue;
        }
        if (o.reason != "inplace-elementwise" && o.reason != "inplace-depthwise") {
          Err(what + ": unknown reason '" + o.reason + "'");
          continue;
        }
        const int s = b.first_step;
        if (o.reason == "inplace-depthwise" && s < n_ && p_.steps[s].kind != StepKind::kInPlaceDepthwise) {
          Err(what + ": step " + Str(s) + " is of kind '" + StepKindName(p_.steps[s].kind) +
              "'; an in-place depthwise convolution is a step of kind 'inplace-depthwise'");
          continue;
        }
        if (a.last_step != s || a.level != b.level) {
          Err(what + ": in-place needs '" + o.tensor + "' to die at step " + Str(s) + " where '" +
              b.tensor + "' is born (it dies at " + Str(a.last_step) + ")");
          continue;
        }
        if (o.shift != 0 || b.offset != a.offset || b.bytes > a.bytes) {
          Err(what + ": in-place output must sit at the input's offset and be no larger");
          continue;
        }
        bool legal = false;
        for (const auto& op : s < n_ ? p_.steps[s].ops : std::vector<StepOp>{}) {
          const bool writes =
              std::find(op.outputs.begin(), op.outputs.end(), b.tensor) != op.outputs.end();
          bool reads = false;
          for (const auto& in : op.inputs) reads = reads || RootOf(in) == o.tensor;
          const bool kind_ok = o.reason == "inplace-depthwise"
                                   ? op.type == "DepthwiseConv"
                                   : ElementwiseTypes().count(op.type) > 0;
          legal = legal || (writes && reads && kind_ok);
        }
        if (!legal) {
          Err(what + ": step " + Str(s) + " has no " +
              (o.reason == "inplace-depthwise" ? "depthwise convolution" : "element-wise op") +
              " that reads '" + o.tensor + "' and writes '" + b.tensor + "'");
          continue;
        }
        allowed_.insert({b.tensor, o.tensor});
        allowed_.insert({o.tensor, b.tensor});
      }
    }
  }

  // vMCU segment overlap: output buffer `out` starts below input buffer `in` of the same step. The
  // distance in bytes must cover the step's access order, recomputed here (no code shared with the
  // planner's ISL analysis): the kernel runs steps j in order, each reading its input bytes before
  // writing its output bytes, so for every j < i the last byte j writes must lie below the first
  // byte i reads:  off(in) - off(out) >= max_{j<i} (last_write(j) - first_read(i)) + 1.
  //   - Conv / DepthwiseConv (NHWC, batch 1): steps = output pixels in row-major order; a step
  //   reads
  //     the input pixels of its window inside the image and writes its output pixel.
  //   - a fused group Conv (1x1, or any kernel/stride/padding: a stem) -> DepthwiseConv -> Conv 1x1
  //     [-> Add of the group input]: the same, with the depthwise window mapped through the
  //     expansion (a 1x1 stride-1 expansion keeps pixel positions) and the residual pixel.
  //   - Gemm / MatMul [M, K] x -> [M, N]: steps (m, chunk) with chunks of the step's segment_bytes
  //   output
  //     bytes; every step of row m reads all of input row m.
  // Returns "" when the distance is safe, else why not. Runs only on geometry CheckGeometry
  // accepted, in O(1) per step, and refuses steps with more than kMaxSegmentSteps steps.
  std::string SegmentOverlapProblem(const Buffer& in, const Buffer& out) const {
    const int s = out.first_step;
    if (in.level != out.level) return "the two buffers are in different levels";
    if (in.last_step != s)
      return "the input must die at the step that writes the output (step " + Str(s) + ")";
    if (s >= n_) return "no such step";
    if (!geometry_ok_[s]) return "the geometry of step " + Str(s) + " is invalid (see above)";
    const auto& ops = p_.steps[s].ops;
    const std::string& xin = in.tensor;
    auto shape = [&](const std::string& name) -> std::vector<int64_t> {
      const std::vector<int64_t>* v = GoodShape(name);
      return v ? *v : std::vector<int64_t>{};
    };
    auto out0 = [](const StepOp& op) { return op.outputs.empty() ? std::string() : op.outputs[0]; };
    auto in0 = [](const StepOp& op) { return op.inputs.empty() ? std::string() : op.inputs[0]; };
    // Describe the access pattern.
    std::vector<int64_t> x, y;
    const StepOp* window_op = nullptr;
    const StepOp* expand_op =
        nullptr;  // fused group: its expansion (any Conv; the window runs on its output)
    std::vector<int64_t> mid;
    bool residual = false;
    bool fc = false;
    int64_t chunk = 0;
    const StepKind kind = p_.steps[s].kind;
    if (kind == StepKind::kSegment && ops.size() == 1) {
      const StepOp& op = ops[0];
      if (in0(op) != xin || out0(op) != out.tensor)
        return "step " + Str(s) + " does not read the input and write the output directly";
      if (IsConvType(op.type)) {
        window_op = &op;
      } else if (op.type == "Gemm" || op.type == "MatMul") {
        fc = true;
        chunk = p_.steps[s].segment_bytes;
      } else {
        return "op type '" + op.type + "' has no segment-level access model";
      }
      x = shape(op.inputs[0]);
      y = shape(op.outputs[0]);
    } else if (kind == StepKind::kFusedBottleneck && (ops.size() == 3 || ops.size() == 4)) {
      if (ops[0].type != "Conv" || ops[1].type != "DepthwiseConv" || ops[2].type != "Conv" ||
          in0(ops[0]) != xin || out0(ops[0]).empty() || in0(ops[1]) != out0(ops[0]) ||
          in0(ops[2]) != out0(ops[1]) ||
          Attr(ops[2], "kernel_shape", {}) != std::vector<int64_t>{1, 1} ||
          Attr(ops[2], "strides", {1, 1}) != std::vector<int64_t>{1, 1} ||
          Attr(ops[2], "pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0} ||
          Attr(ops[2], "dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
          Attr(ops[0], "group", {1}) != std::vector<int64_t>{1})
        return "step " + Str(s) + " is not a fused inverted bottleneck reading '" + xin + "'";
      window_op = &ops[1];
      expand_op = &ops[0];
      mid = shape(out0(ops[0]));
      if (ops.size() == 4) {
        const auto& add_in = ops[3].inputs;
        if (ops[3].type != "Add" || out0(ops[3]) != out.tensor || add_in.size() != 2 ||
            std::find(add_in.begin(), add_in.end(), xin) == add_in.end() ||
            std::find(add_in.begin(), add_in.end(), out0(ops[2])) == add_in.end())
          return "the fourth op of the fused group must add the group input and write the output";
        residual = true;
      } else if (out0(ops[2]) != out.tensor) {
        return "the fused group does not write '" + out.tensor + "'";
      }
      x = shape(xin);
      y = shape(out.tensor);
    } else {
      return "step " + Str(s) + " (kind '" + StepKindName(kind) +
             "') is not a segment step; only segment and fused-bottleneck steps may declare a segment-overlap";
    }
    for (const auto* v : {&x, &y, &mid})
      for (int64_t d : *v)
        if (d > kInt32Max)
          return "a tensor dimension of the step exceeds the segment kernels' 32-bit range";
    int64_t need = 0;
    int64_t max_write = -1;  // the last byte written by the steps run so far
    auto step = [&](int64_t first_read, int64_t last_write) {
      if (max_write >= 0 && first_read != kInt64Max)
        need = std::max(need, max_write - first_read + 1);
      max_write = std::max(max_write, last_write);
    };
    if (window_op) {
      if (x.size() != 4 || y.size() != 4 || x[0] != 1 || y[0] != 1 || !nhwc_ops_.count(window_op))
        return "segment overlap needs NHWC batch-1 tensors";
      const auto k = Attr(*window_op, "kernel_shape", {1, 1});
      const auto st = Attr(*window_op, "strides", {1, 1});
      const auto pads = Attr(*window_op, "pads", {0, 0, 0, 0});
      if (k.size() != 2 || st.size() != 2 || pads.size() != 4 ||
          Attr(*window_op, "dilations", {1, 1}) != std::vector<int64_t>{1, 1})
        return "unsupported convolution geometry";
      const int64_t H = x[1], W = x[2], C = x[3], P = y[1], Q = y[2], K = y[3];
      auto pixels = CheckedMul(P, Q);
      if (!pixels || *pixels > kMaxSegmentSteps)
        return "the output has more than " + Str(kMaxSegmentSteps) +
               " pixels; the verifier cannot re-check the overlap";
      // The expansion of a fused group maps input pixels to the plane the window runs on (identity
      // for a 1x1 stride-1 expansion): plane pixel (h, w) reads input rows h*es0 - ep0 + [0, ek0)
      // and columns w*es1 - ep1 + [0, ek1), clipped to the image.
      std::vector<int64_t> ek{1, 1}, es{1, 1}, ep{0, 0, 0, 0};
      int64_t MH = H, MW = W;
      if (expand_op) {
        ek = Attr(*expand_op, "kernel_shape", {1, 1});
        es = Attr(*expand_op, "strides", {1, 1});
        ep = Attr(*expand_op, "pads", {0, 0, 0, 0});
        if (ek.size() != 2 || es.size() != 2 || ep.size() != 4 ||
            Attr(*expand_op, "dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
            mid.size() != 4 || !nhwc_ops_.count(expand_op))
          return "unsupported expansion geometry";
        MH = mid[1];
        MW = mid[2];
        if (residual && (ek != std::vector<int64_t>{1, 1} || es != std::vector<int64_t>{1, 1}))
          return "a fused group with a residual add needs a 1x1 stride-1 expansion";
      }
      // Every value here is below 2^31 (dimensions) or 2^20 (geometry), and H*W*C, P*Q*K are the
      // element counts of tensors whose bytes CheckTensors bounded, so no product overflows.
      for (int64_t pp = 0; pp < P; ++pp) {
        const int64_t h0 = FirstInputTap(pp * st[0] - pads[0], k[0], MH, es[0], ep[0], ek[0], H);
        for (int64_t q = 0; q < Q; ++q) {
          const int64_t w0 = FirstInputTap(q * st[1] - pads[1], k[1], MW, es[1], ep[1], ek[1], W);
          int64_t lo = h0 >= 0 && w0 >= 0 ? (h0 * W + w0) * C : kInt64Max;
          if (residual && pp < H && q < W) lo = std::min(lo, (pp * W + q) * C);
          step(lo, (pp * Q + q + 1) * K - 1);
        }
      }
    } else if (fc) {
      if (x.size() != 2 || y.size() != 2 || chunk <= 0 || x[0] != y[0])
        return "fully connected overlap needs [M, K] -> [M, N] tensors and segment_bytes";
      const int64_t M = x[0], Kx = x[1], N = y[1];
      auto steps = CheckedMul(M, CeilDiv(N, chunk));
      if (!steps || *steps > kMaxSegmentSteps)
        return "the output has more than " + Str(kMaxSegmentSteps) +
               " chunks; the verifier cannot re-check the overlap";
      for (int64_t m = 0; m < M; ++m)
        for (int64_t c0 = 0; c0 < N; c0 += chunk) step(m * Kx, m * N + std::min(c0 + chunk, N) - 1);
    }
    int64_t have = in.offset - out.offset;
    if (const Pool* pool = FindPool(p_, in.level); pool && pool->bytes > 0) {
      // Modulo the pool; the kernels also need the output's head not to wrap onto the input's tail.
      have = ((have % pool->bytes) + pool->bytes) % pool->bytes;
      if (have + in.bytes > pool->bytes || out.bytes > pool->bytes)
        return "in the circular pool of " + Str(pool->bytes) + " bytes the output starts " +
               Str(have) + " bytes below the input, so the " + Str(in.bytes) +
               "-byte input would wrap onto the output's head";
    }
    if (have < need)
      return "the output starts " + Str(have) +
             " bytes below the input, but the step's access order needs " + Str(need);
    return "";
  }

  // A step whose output overlaps its input runs the segment kernels, which keep part of the output
  // in a private workspace until the input bytes under it are read: the plan must give the step an
  // on-chip workspace buffer (params.workspace; the executor and the generated firmware use it).
  std::string WorkspaceProblem(const Buffer& out) const {
    const int s = out.first_step;
    if (s >= n_ || p_.steps[s].ops.empty()) return "no such step";
    const std::string& ws = p_.steps[s].workspace;
    if (LiveWorkspace(s)) return CheckSegmentWorkspace(p_, tensors_, s);  // and large enough for the kernel
    return "step " + Str(s) +
           " runs the segment kernels, which need a workspace, but " +
           (ws.empty() ? std::string("the step names none (params.workspace)")
                       : "no on-chip buffer of '" + ws + "' is live at that step");
  }

  // No two sound buffers of a level live at the same step share a byte unless a legal declared
  // overlap allows it. A sweep over steps: buffers enter in order of (first_step, offset) and leave
  // after their last_step; the pieces of the live buffers sit in a map by start address, so a new
  // buffer is compared only with live pieces that can reach its addresses (those starting below its
  // end and no further below its start than the longest piece seen), not with every live buffer.
  void CheckOverlaps() {
    std::map<std::string, std::vector<const Buffer*>> by_level;
    for (size_t i = 0; i < p_.buffers.size(); ++i)
      if (sound_[i] && p_.buffers[i].bytes > 0) by_level[p_.buffers[i].level].push_back(&p_.buffers[i]);
    struct Piece {
      int64_t hi;
      size_t owner;  // index into the level's sorted list
    };
    for (auto& [level, list] : by_level) {
      std::sort(list.begin(), list.end(), [](const Buffer* a, const Buffer* b) {
        return a->first_step != b->first_step ? a->first_step < b->first_step
                                              : a->offset < b->offset;
      });
      std::multimap<int64_t, Piece> live;  // start address -> piece
      std::vector<std::vector<std::multimap<int64_t, Piece>::iterator>> handles(list.size());
      using Leave = std::pair<int, size_t>;  // (last_step, owner)
      std::priority_queue<Leave, std::vector<Leave>, std::greater<Leave>> leaving;
      int64_t longest = 0;
      for (size_t j = 0; j < list.size(); ++j) {
        if (r_.errors.size() >= 1000) return;
        const Buffer& b = *list[j];
        while (!leaving.empty() && leaving.top().first < b.first_step) {
          for (auto it : handles[leaving.top().second]) live.erase(it);
          handles[leaving.top().second].clear();
          leaving.pop();
        }
        const auto pieces = BufferPieces(p_, b);
        std::set<size_t> hit;  // live buffers sharing a byte with b
        for (const auto& [blo, bhi] : pieces) {
          auto it = live.lower_bound(blo > std::numeric_limits<int64_t>::min() + longest ? blo - longest
                                                                                       : std::numeric_limits<int64_t>::min());
          for (; it != live.end() && it->first < bhi; ++it)
            if (it->second.hi > blo) hit.insert(it->second.owner);
        }
        for (size_t i : hit) {
          const Buffer& a = *list[i];
          if (allowed_.count({a.tensor, b.tensor})) continue;
          Err("buffers of '" + a.tensor + "' [" + Str(a.offset) + ", " + Str(a.offset + a.bytes) +
              ") and '" + b.tensor + "' [" + Str(b.offset) + ", " + Str(b.offset + b.bytes) +
              ") in level '" + level + "' overlap while both are live at step " +
              Str(std::max(a.first_step, b.first_step)));
        }
        for (const auto& [blo, bhi] : pieces) {
          longest = std::max(longest, bhi - blo);
          handles[j].push_back(live.emplace(blo, Piece{bhi, j}));
        }
        leaving.emplace(b.last_step, j);
      }
    }
  }

  // levels[].used_bytes equals the highest byte its buffers reach; metrics.fits agrees with
  // capacity.
  void CheckReportedSizes() {
    for (const auto& l : p_.levels) {
      const int64_t used = used_.count(l.name) ? used_.at(l.name) : 0;
      if (l.used_bytes != used)
        Err("level '" + l.name + "' reports used_bytes " + Str(l.used_bytes) +
            " but its buffers reach " + Str(used));
    }
    if (p_.metrics.fits != r_.capacity.empty())
      Err(std::string("metrics.fits says ") + (p_.metrics.fits ? "true" : "false") +
          " but the buffers " + (r_.capacity.empty() ? "fit" : "overflow a level"));
  }

  const Plan& p_;
  const int n_;
  VerifyResult r_;
  std::unordered_map<std::string, const Tensor*> tensors_;
  std::set<std::string> bad_shape_;  // tensors whose bytes or shape are out of range or disagree
  std::unordered_map<std::string, const Level*> levels_;
  std::unordered_map<std::string, bool> offchip_;
  std::unordered_map<std::string, int> produced_at_;
  std::unordered_map<std::string, size_t> position_in_step_;
  std::vector<bool> geometry_ok_;     // per step: every op's geometry passed CheckGeometry
  std::set<const StepOp*> nhwc_ops_;  // window ops whose shapes agree with their geometry in NHWC
  std::vector<bool> sound_;           // per buffer: in range (CheckBuffers); the only ones indexed
  std::unordered_map<std::string, std::vector<const Buffer*>> buffers_of_;
  std::map<std::string, int64_t> used_;  // per level: the highest byte a sound buffer reaches
  std::set<std::pair<std::string, std::string>>
      allowed_;  // legal declared overlaps, both directions
};

// ---- the workspace of a segment step ------------------------------------------------------------
// Re-derived from the segment kernels' contract (runtime/include/sramplan_rt_seg.h), sharing no
// code with the planner: a step that runs the segment-aware kernels (a fused group, or a single op
// whose output declares a "segment-overlap") needs a workspace buffer (params.workspace) live at the step
// of at least: Conv C_out, or min(C_in, C_out) for 1x1 without padding; DepthwiseConv C; Gemm /
// MatMul the output chunk (segment_bytes, 0 = min(K, N), at most N); fused group
// (R*S + 1) * C_mid, or (R*MW + 1) * C_mid with the row cache, + C_out with the residual Add.
// Returns "" when the plan gives it one.
std::string CheckSegmentWorkspace(const Plan& p, const std::unordered_map<std::string, const Tensor*>& tensors, int s) {
  const auto& ops = p.steps[s].ops;
  auto shape = [&](const std::vector<std::string>& names, size_t i) -> std::vector<int64_t> {
    if (i >= names.size()) return {};
    auto t = tensors.find(names[i]);
    return t == tensors.end() ? std::vector<int64_t>{} : t->second->shape;
  };
  auto attr = [](const StepOp& op, const char* k, std::vector<int64_t> d) {
    auto it = op.attrs.find(k);
    return it == op.attrs.end() || it->second.empty() ? d : it->second;
  };
  auto positive = [](const std::vector<int64_t>& v, size_t rank) {
    if (v.size() != rank) return false;
    for (int64_t d : v)
      if (d < 1 || d > (int64_t{1} << 30)) return false;
    return true;
  };
  int64_t need = -1;
  if (ops.size() == 1) {
    const StepOp& op = ops[0];
    const auto x = shape(op.inputs, 0), y = shape(op.outputs, 0);
    if (op.type == "Conv" && positive(x, 4) && positive(y, 4)) {
      const auto pads = attr(op, "pads", {0, 0, 0, 0});
      const bool pointwise = attr(op, "kernel_shape", {1, 1}) == std::vector<int64_t>{1, 1} &&
                             std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
      need = pointwise ? std::min(x[3], y[3]) : y[3];
    } else if (op.type == "DepthwiseConv" && positive(y, 4)) {
      need = y[3];
    } else if ((op.type == "Gemm" || op.type == "MatMul") && positive(x, 2) && positive(y, 2)) {
      int64_t chunk = p.steps[s].segment_bytes;
      if (chunk == 0) chunk = std::min(x[1], y[1]);
      need = chunk < 0 ? -1 : std::min(chunk, y[1]);
    }
  } else if (ops.size() == 3 || ops.size() == 4) {
    const auto mid = shape(ops[0].outputs, 0), y = shape(ops.back().outputs, 0);
    const auto k = attr(ops[1], "kernel_shape", {1, 1});
    const bool rows = p.steps[s].row_cache;
    if (positive(mid, 4) && positive(y, 4) && positive(k, 2)) {
      // Dimensions are at most 2^30 each, so the products fit in 128 bits; larger needs are refused.
      const __int128 slots = (rows ? __int128{k[0]} * mid[2] : __int128{k[0]} * k[1]) + 1;
      const __int128 bytes = slots * mid[3] + (ops.size() == 4 ? y[3] : 0);
      need = bytes > (__int128{1} << 62) ? -1 : static_cast<int64_t>(bytes);
    }
  }
  if (need < 1) return "cannot tell the workspace its segment-aware kernel needs (unsupported op or tensor shapes)";
  const std::string& name = p.steps[s].workspace;
  for (const auto& b : p.buffers)
    if (b.tensor == name && b.first_step <= s && s <= b.last_step) {
      if (b.bytes >= need) return "";
      return "its workspace '" + name + "' has " + std::to_string(b.bytes) + " bytes but the segment-aware kernel needs " +
             std::to_string(need);
    }
  return "it runs the segment-aware kernels but the plan gives it no '" + name + "' buffer (the kernel needs " +
         std::to_string(need) + " bytes of workspace)";
}

}  // namespace

std::string VerifyResult::Summary(size_t max_lines) const {
  std::string s;
  size_t n = 0;
  for (const auto* list : {&errors, &capacity})
    for (const auto& e : *list) {
      if (n++ == max_lines) {
        s += "  ... (" + std::to_string(errors.size() + capacity.size() - max_lines) + " more)\n";
        return s;
      }
      s += "  " + e + "\n";
    }
  return s;
}

VerifyResult VerifyPlan(const Plan& p) { return Checker(p).Run(); }

}  // namespace sramplan::plan
