// Plan is a plain value; its serialisation lives in plan_json.cc and its checks in verifier.cc.
// The helpers here answer the questions every consumer of a plan asks the same way (the verifier,
// the executor and the code generator).
#include "plan/plan.h"

#include <limits>
#include <optional>

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

bool IsSegmentStep(const Plan& p, int s) {
  if (s < 0 || s >= static_cast<int>(p.steps.size())) return false;
  const auto& sops = p.steps[s].ops;
  if (sops.size() == 3 || sops.size() == 4)
    return sops[0].type == "Conv" && sops[1].type == "DepthwiseConv" && sops[2].type == "Conv" &&
           (sops.size() == 3 || sops[3].type == "Add");
  if (sops.size() != 1 || sops[0].outputs.empty()) return false;
  for (const Buffer& b : p.buffers)
    if (b.tensor == sops[0].outputs[0] && b.first_step <= s && s <= b.last_step)
      for (const Overlap& o : b.overlaps)
        if (o.reason == "segment-overlap") return true;
  return false;
}

}  // namespace sramplan::plan
