// The verifier's checks of buffers, circular pools, residency, transfers, off-chip bytes and
// byte overlaps.
#include "plan/verifier_checker.h"

#include <queue>

namespace sramplan::plan::verifier_internal {

// Buffers: known tensor and level, offset and bytes in [0, kMaxBytes], 0 <= first_step <=
// last_step < steps, at least the tensor's bytes, no buffer for a view. Only sound buffers (in
// range) take part in the later checks; their end is their capacity check.
void Checker::CheckBuffers() {
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

// Circular pools: one per on-chip level, covering the level's used bytes; a buffer that wraps is
// touched only by the segment kernels, as the data input or output of a segment step, never by a
// transfer, and is not a graph output (the application reads outputs as plain arrays).
void Checker::CheckPools() {
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
void Checker::CheckResidency() {
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
void Checker::CheckTransfers() {
  // Earliest step at which each tensor's data exists in each level.
  std::map<std::pair<std::string, std::string>, int> valid_from;  // (tensor, level) -> step
  for (const auto& t : p_.tensors)
    if (t.kind == "input" || t.kind == "constant")
      for (const Buffer* b : BuffersOf(t.name))
        if (Offchip(b->level) && b->first_step == 0) valid_from[{t.name, b->level}] = -1;
  // An op whose output has only an off-chip buffer at its step writes it there (streamed out): the
  // data exists in that level from the producing step on.
  for (const auto& [name, s] : produced_at_) {
    const Buffer* hit = nullptr;
    for (const Buffer* b : BuffersOf(name))
      if (b->first_step <= s && s <= b->last_step && (!hit || (Offchip(hit->level) && !Offchip(b->level)))) hit = b;
    if (hit && Offchip(hit->level)) valid_from.emplace(std::make_pair(name, hit->level), s);
  }
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
void Checker::CheckOffchipBytes() {
  int64_t rd = 0, wr = 0, nc_rd = 0, nc_wr = 0;
  for (const auto& tr : p_.transfers) {
    const bool in = tr.kind == "load" || tr.kind == "reload";
    (in ? rd : wr) = SaturatingAdd(in ? rd : wr, tr.bytes);
    if (tr.kind == "reload") nc_rd = SaturatingAdd(nc_rd, tr.bytes);
    if (tr.kind == "spill") nc_wr = SaturatingAdd(nc_wr, tr.bytes);
  }
  // A fused-tiled step moves what CheckFusedTiled derived (tiled_rd_, tiled_wr_).
  rd = SaturatingAdd(rd, tiled_rd_);
  wr = SaturatingAdd(wr, tiled_wr_);
  for (int s = 0; s < n_; ++s)
    for (const auto& op : p_.steps[s].ops)
      for (int io = 0; io < 2; ++io) {
        if (p_.steps[s].kind == StepKind::kFusedTiled) break;
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

// No two sound buffers of a level live at the same step share a byte unless a legal declared
// overlap allows it. A sweep over steps: buffers enter in order of (first_step, offset) and leave
// after their last_step; the pieces of the live buffers sit in a map by start address, so a new
// buffer is compared only with live pieces that can reach its addresses (those starting below its
// end and no further below its start than the longest piece seen), not with every live buffer.
void Checker::CheckOverlaps() {
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

}  // namespace sramplan::plan::verifier_internal
