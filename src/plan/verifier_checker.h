// The verifier's Checker (verifier.cc): its named checks are defined in verifier.cc (tensors,
// levels, steps, dependencies, reported sizes), verifier_geometry.cc, verifier_buffers.cc (buffers,
// pools, residency, transfers, off-chip bytes, overlaps) and verifier_segment.cc (step kinds,
// declared overlaps, the segment re-checks). Private to src/plan: it shares no code with the
// planners.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "plan/verifier.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::plan::verifier_internal {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// Sane range of a window's kernel size, stride, dilation and padding: no real layer comes near it,
// and it keeps every product of geometry and a tensor dimension far from overflow.
constexpr int64_t kMaxWindow = int64_t{1} << 20;
// The segment-overlap re-check walks the step's output pixels (or FC output chunks) once, in O(1)
// each; beyond this many it refuses instead of running for minutes (a segment step that large would
// need far more SRAM than any microcontroller has).
constexpr int64_t kMaxSegmentSteps = int64_t{1} << 24;

inline std::string Str(int64_t v) { return std::to_string(v); }
std::string List(const std::vector<int64_t>& v);  // "[1, 2]"
// A sum of plan values that sticks at the int64 limits instead of overflowing (reported metrics).
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (auto s = CheckedAdd(a, b)) return *s;
  return b < 0 ? std::numeric_limits<int64_t>::min() : kInt64Max;
}

inline const std::set<std::string>& ElementwiseTypes() {
  static const std::set<std::string> k = {
      "Relu",      "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
      "Erf",       "Sqrt", "Neg",     "Exp",         "Log",       "Abs",
      "LeakyRelu", "Elu",  "Gelu",    "Reciprocal",  "Cast",      "BatchNormalization",
      "Add",       "Sub",  "Mul",     "Div",         "Pow",       "Max",
      "Min"};
  return k;
}

inline bool IsViewType(const std::string& t) {
  return t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" ||
         t == "Identity" || t == "Dropout";
}
inline bool IsConvType(const std::string& t) { return t == "Conv" || t == "DepthwiseConv"; }
inline bool IsPoolType(const std::string& t) { return t == "MaxPool" || t == "AveragePool"; }

// Bytes per element of a plan dtype; 0 when the name is unknown (then bytes are not checked).
inline int64_t ElementBytes(const std::string& dtype) {
  if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
  if (dtype == "int16" || dtype == "float16") return 2;
  if (dtype == "int32" || dtype == "float32") return 4;
  if (dtype == "int64") return 8;
  return 0;
}

inline std::vector<int64_t> Attr(const StepOp& op, const char* key, std::vector<int64_t> dflt) {
  auto it = op.attrs.find(key);
  return it == op.attrs.end() ? dflt : it->second;
}

// Along one axis of a window over a fused expansion's output: the first input position any tap
// reads, or -1 (verifier_segment.cc).
int64_t FirstInputTap(int64_t start, int64_t k, int64_t plane, int64_t es, int64_t ep, int64_t ek,
                      int64_t n);
// How many workspace bytes a segment step needs, re-derived from the kernels' contract; "" when
// the plan gives the step a large enough workspace buffer (verifier_segment.cc).
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
    CheckMemoryPools();
    CheckResidency();
    CheckTransfers();
    CheckOffchipBytes();
    CheckDeclaredOverlaps();
    CheckOverlaps();
    CheckReportedSizes();
    CheckModules();
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

  // The named checks, in the order Run calls them (each documented at its definition).
  void CheckTensors();
  void CheckLevels();
  void CheckSteps();
  void CheckDependencies();
  void CheckGeometry();
  bool CheckAttrRanges(const StepOp& op, const std::string& where);
  std::vector<int64_t> WindowOutput(const StepOp& op, const std::vector<int64_t>& x, bool nhwc) const;
  bool CheckWindowShapes(const StepOp& op, const std::string& where, bool* nhwc_ok);
  void CheckBuffers();

  // The step's workspace buffer (params.workspace), live at step s on chip, or nullptr.
  const Buffer* LiveWorkspace(int s) const {
    const std::string& ws = p_.steps[s].workspace;
    if (ws.empty()) return nullptr;
    for (const Buffer* w : BuffersOf(ws))
      if (w->first_step <= s && s <= w->last_step && !Offchip(w->level)) return w;
    return nullptr;
  }

  void CheckStepKinds();
  // Fused-tiled steps (verifier_tiled.cc): rows and channels of a tensor, and the group check.
  std::pair<int64_t, int64_t> RowsChannels(const Tensor& t) const;
  bool DetectNhwc() const;
  void CheckFusedTiled(int s);
  // A fused-tiled group's input or output held whole on chip at step s, in one buffer since its
  // production (kept between groups): it moves no DRAM bytes (verifier_kept.cc).
  bool KeptOnChip(const std::string& name, int s) const;
  void CheckPools();
  void CheckMemoryPools();  // verifier_pools.cc
  void CheckResidency();
  void CheckTransfers();
  void CheckOffchipBytes();
  void CheckDeclaredOverlaps();
  std::string SegmentOverlapProblem(const Buffer& in, const Buffer& out) const;
  std::string WorkspaceProblem(const Buffer& out) const;
  void CheckOverlaps();
  void CheckReportedSizes();
  void CheckModules();  // verifier_modules.cc

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
  bool tiled_layout_known_ = false;
  bool plan_nhwc_ = false;              // feature maps are NHWC (DetectNhwc)
  int64_t tiled_rd_ = 0, tiled_wr_ = 0;  // DRAM bytes of the fused-tiled steps (CheckFusedTiled)
};

}  // namespace sramplan::plan::verifier_internal
