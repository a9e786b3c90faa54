// The verifier's checks of a module-buffering plan (plan-format.md "modules[]"): every module names
// steps of the plan, its branches are its own ops, the MIFM / MOFM regions it reports on chip are
// buffers of those tensors at those offsets during the module, and the DRAM split of the metrics
// adds up (the weights recounted from the plan's off-chip operands).
#include <set>

#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {

void Checker::CheckModules() {
  std::map<std::string, int> step_of;
  for (int s = 0; s < n_; ++s)
    for (const auto& op : p_.steps[s].ops) step_of[op.name] = s;
  for (size_t i = 0; i < p_.modules.size(); ++i) {
    const Module& m = p_.modules[i];
    const std::string what = "modules[" + Str(static_cast<int64_t>(i)) + "] '" + m.name + "'";
    if (m.processing != "I" && m.processing != "II" && m.processing != "layerwise")
      Err(what + ": unknown processing '" + m.processing + "' (I, II, layerwise)");
    int first = n_, last = -1;
    std::set<std::string> ops(m.ops.begin(), m.ops.end());
    for (const auto& o : m.ops) {
      auto it = step_of.find(o);
      if (it == step_of.end()) {
        Err(what + ": op '" + o + "' is not a step of the plan");
        continue;
      }
      first = std::min(first, it->second);
      last = std::max(last, it->second);
    }
    if (!ops.count(m.merge)) Err(what + ": its merge '" + m.merge + "' is not one of its ops");
    for (const auto& b : m.branches)
      for (const auto& o : b)
        if (!ops.count(o)) Err(what + ": branch op '" + o + "' is not one of the module's ops");
    if (last < 0) continue;
    for (const auto* list : {&m.mifm, &m.mofm})
      for (const ModuleRegion& r : *list) {
        if (r.offset < 0) continue;
        if (!FindTensor(r.tensor)) {
          Err(what + ": region of unknown tensor '" + r.tensor + "'");
          continue;
        }
        bool found = false;
        for (const Buffer* b : BuffersOf(RootOf(r.tensor)))
          found = found || (!Offchip(b->level) && b->offset == r.offset && b->first_step <= last && first <= b->last_step);
        if (!found)
          Err(what + ": region of '" + r.tensor + "' at offset " + Str(r.offset) +
              " is no on-chip buffer of that tensor during the module (steps " + Str(first) + ".." + Str(last) + ")");
      }
  }
  const Metrics& mt = p_.metrics;
  if (!mt.dram_split) return;
  int64_t weights = 0;
  for (int s = 0; s < n_; ++s)
    for (const auto& op : p_.steps[s].ops)
      for (const auto& in : op.inputs) {
        const Tensor* t = FindTensor(in);
        if (!t || t->kind != "constant") continue;
        const Buffer* hit = nullptr;
        for (const Buffer* b : BuffersOf(in))
          if (b->first_step <= s && s <= b->last_step && (!hit || (Offchip(hit->level) && !Offchip(b->level)))) hit = b;
        if (hit && Offchip(hit->level)) weights = SaturatingAdd(weights, t->bytes);
      }
  if (weights != mt.weight_dram_bytes)
    Err("metrics report " + Str(mt.weight_dram_bytes) + " weight bytes read from DRAM; the ops' off-chip weight "
        "operands add up to " + Str(weights));
  if (mt.fm_dram_bytes + mt.weight_dram_bytes != mt.offchip_read_bytes + mt.offchip_write_bytes)
    Err("metrics report " + Str(mt.fm_dram_bytes) + " feature-map + " + Str(mt.weight_dram_bytes) +
        " weight bytes off chip, but " + Str(mt.offchip_read_bytes + mt.offchip_write_bytes) + " off-chip bytes in all");
}

}  // namespace sramplan::plan::verifier_internal
