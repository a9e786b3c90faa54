// The verifier's check of memory pools (issue 19): levels that are pools of one target level
// (plan::Level::pool_of). Per pool, buffers within capacity and never overlapping while both live
// are the per-level checks every level gets (CheckBuffers, CheckOverlaps); this adds what makes a
// set of levels a set of pools: each on chip at a real address, the pools of one level at disjoint
// addresses, no circular segment pool inside one, no buffer in the level the pools replace, and no
// declared byte sharing between two pools (different address ranges cannot share bytes).
#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {

void Checker::CheckMemoryPools() {
  constexpr int64_t kMaxAddress = int64_t{1} << 48;
  std::map<std::string, std::vector<const Level*>> pools_of;
  for (const Level& l : p_.levels) {
    if (l.pool_of.empty()) continue;
    const std::string what = "memory pool '" + l.name + "' (of level '" + l.pool_of + "')";
    if (Offchip(l.name)) Err(what + " is off chip (" + l.kind + "); pools are on-chip RAM regions");
    if (!l.holds_activations) Err(what + " does not hold activations");
    if (l.base < 0 || l.capacity > kMaxAddress || l.base > kMaxAddress - std::max<int64_t>(l.capacity, 0))
      Err(what + " has base " + Str(l.base) + " and capacity " + Str(l.capacity) +
          ": its addresses must lie in [0, 2^48)");
    if (FindPool(p_, l.name)) Err(what + " also has a circular segment pool; the two are not combined");
    if (levels_.count(l.pool_of))
      Err(what + ": level '" + l.pool_of + "' is still listed; a plan lists a split level's pools instead of it");
    pools_of[l.pool_of].push_back(&l);
  }
  for (const auto& [level, pools] : pools_of)
    for (size_t a = 0; a < pools.size(); ++a)
      for (size_t b = a + 1; b < pools.size(); ++b) {
        const Level& x = *pools[a];
        const Level& y = *pools[b];
        // Saturating: a bad base or capacity was reported above and must not overflow here.
        const int64_t x_end = SaturatingAdd(x.base, x.capacity), y_end = SaturatingAdd(y.base, y.capacity);
        if (x.base < y_end && y.base < x_end)
          Err("memory pools '" + x.name + "' [" + Str(x.base) + ", " + Str(x_end) + ") and '" + y.name + "' [" +
              Str(y.base) + ", " + Str(y_end) + ") of level '" + level + "' overlap in the address space");
      }
  if (pools_of.empty()) return;
  for (size_t i = 0; i < p_.buffers.size(); ++i) {
    const Buffer& b = p_.buffers[i];
    auto lb = levels_.find(b.level);
    if (lb == levels_.end()) continue;
    for (const Overlap& o : b.overlaps)
      for (const Buffer* other : BuffersOf(o.tensor)) {
        auto lo = levels_.find(other->level);
        if (lo == levels_.end() || other->level == b.level) continue;
        if (!lb->second->pool_of.empty() || !lo->second->pool_of.empty())
          Err(BufferWhere(i, b) + " in '" + b.level + "' declares an overlap with '" + o.tensor + "' in '" +
              other->level + "': buffers in different memory pools cannot share bytes");
      }
  }
}

}  // namespace sramplan::plan::verifier_internal
