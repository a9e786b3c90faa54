// Feature maps kept in the global buffer between fused-tiled groups (keep-on-chip): a group input
// or output whose storage has an on-chip buffer at the step, at least the tensor's bytes, that has
// held it since the step producing it (no transfer brings it on chip in a tiled plan). Such a map
// moves no DRAM bytes; the level's capacity and the overlaps with the groups' workspaces are the
// buffer checks' (CheckBuffers, CheckOverlaps).
#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {

bool Checker::KeptOnChip(const std::string& name, int s) const {
  const Tensor* t = FindTensor(name);
  if (!t || t->kind != "activation") return false;
  const std::string root = RootOf(name);
  const auto made = produced_at_.find(root);
  if (made == produced_at_.end() || made->second > s) return false;
  for (const Buffer* b : BuffersOf(root))
    if (!Offchip(b->level) && b->first_step <= made->second && s <= b->last_step && b->bytes >= t->bytes) return true;
  return false;
}

}  // namespace sramplan::plan::verifier_internal
