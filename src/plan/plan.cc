// Plan is a plain value; its serialisation lives in plan_json.cc and its checks in verifier.cc.
// The helpers here answer the questions every consumer of a plan asks the same way (the verifier,
// the executor and the code generator).
#include "plan/plan.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "support/int_math.h"

namespace sramplan::plan {

const Pool* FindPool(const Plan& p, const std::string& level) {
  for (const Pool& pool : p.pools)
    if (pool.level == level) return &pool;
  return nullptr;
}

std::vector<std::pair<int64_t, int64_t>> BufferPieces(const Plan& p, const Buffer& b) {
  // The end is computed without overflow: a malformed buffer (offset or bytes near INT64_MAX, which
  // the verifier rejects) ends at INT64_MAX.
  const std::optional<int64_t> end = CheckedAdd(b.offset, b.bytes);
  const Pool* pool = FindPool(p, b.level);
  if (pool && pool->bytes > 0 && b.offset >= 0 && b.offset < pool->bytes && b.bytes >= 0 &&
      b.bytes <= pool->bytes && end && *end > pool->bytes)
    return {{b.offset, pool->bytes}, {0, *end - pool->bytes}};
  return {{b.offset, end ? *end : std::numeric_limits<int64_t>::max()}};
}

bool Wraps(const Plan& p, const Buffer& b) { return BufferPieces(p, b).size() == 2; }

namespace {

// Every step kind with its name in the plan JSON (StepKindName and ParseStepKind both read it).
constexpr std::pair<StepKind, const char*> kStepKindNames[] = {
    {StepKind::kOp, "op"},
    {StepKind::kInPlaceDepthwise, "inplace-depthwise"},
    {StepKind::kSegment, "segment"},
    {StepKind::kFusedBottleneck, "fused-bottleneck"},
    {StepKind::kFusedTiled, "fused-tiled"},
    {StepKind::kModule, "module"},
};

}  // namespace

const char* StepKindName(StepKind k) {
  for (const auto& [kind, name] : kStepKindNames)
    if (kind == k) return name;
  return "op";
}

bool ParseStepKind(const std::string& name, StepKind* k) {
  for (const auto& [kind, kind_name] : kStepKindNames)
    if (name == kind_name) {
      *k = kind;
      return true;
    }
  return false;
}

bool IsSegmentKind(StepKind k) { return k == StepKind::kSegment || k == StepKind::kFusedBottleneck; }

bool IsSegmentStep(const Plan& p, int s) {
  return s >= 0 && s < static_cast<int>(p.steps.size()) && IsSegmentKind(p.steps[s].kind);
}

namespace {

bool HasBuffer(const Plan& p, const std::string& tensor) {
  for (const Buffer& b : p.buffers)
    if (b.tensor == tensor) return true;
  return false;
}

// The version-1 rule (before steps had kinds): which steps ran the segment-aware kernels.
StepKind Version1Kind(const Plan& p, int s) {
  const auto& sops = p.steps[s].ops;
  if (sops.size() == 3 || sops.size() == 4)
    return sops[0].type == "Conv" && sops[1].type == "DepthwiseConv" && sops[2].type == "Conv" &&
                   (sops.size() == 3 || sops[3].type == "Add")
               ? StepKind::kFusedBottleneck
               : StepKind::kOp;
  if (sops.size() != 1 || sops[0].outputs.empty()) return StepKind::kOp;
  for (const Buffer& b : p.buffers)
    if (b.tensor == sops[0].outputs[0] && b.first_step <= s && s <= b.last_step)
      for (const Overlap& o : b.overlaps)
        if (o.reason == "segment-overlap") return StepKind::kSegment;
  return sops[0].type == "DepthwiseConv" && HasBuffer(p, sops[0].name + ".scratch")
             ? StepKind::kInPlaceDepthwise
             : StepKind::kOp;
}

}  // namespace

void InferStepKinds(Plan* p) {
  for (int s = 0; s < static_cast<int>(p->steps.size()); ++s) {
    Step& st = p->steps[s];
    if (st.kind != StepKind::kOp || !st.workspace.empty() || st.ops.empty()) continue;
    st.kind = Version1Kind(*p, s);
    // Step parameters travelled as op attrs: one well-formed value each (a malformed one stays an
    // attr, for the verifier to report).
    for (StepOp& op : st.ops) {
      auto seg = op.attrs.find("segment_bytes");
      if (seg != op.attrs.end() && seg->second.size() == 1 && seg->second[0] >= 1 &&
          seg->second[0] <= std::numeric_limits<int32_t>::max()) {
        st.segment_bytes = seg->second[0];
        op.attrs.erase(seg);
      }
      auto rows = op.attrs.find("row_cache");
      if (rows != op.attrs.end() && rows->second.size() == 1 &&
          (rows->second[0] == 0 || rows->second[0] == 1)) {
        st.row_cache = st.row_cache || rows->second[0] != 0;
        op.attrs.erase(rows);
      }
    }
    const std::string& first = st.ops.front().name;
    if (HasBuffer(*p, first + ".workspace"))
      st.workspace = first + ".workspace";
    else if (HasBuffer(*p, first + ".scratch"))
      st.workspace = first + ".scratch";
  }
}

}  // namespace sramplan::plan
