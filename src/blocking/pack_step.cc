#include "blocking/pack_step.h"

#include <utility>

namespace sramplan::blocking {

void PackStep(const Layer& layer, const Hierarchy& h, const BlockingString& s, const Extents& inner, const Packing& prev,
              Packing* next) {
  *next = prev;  // reuses next's capacity
  Packing& pk = *next;
  const int n = static_cast<int>(s.size()) - 1;  // the new loop's position = the new cut
  const Loop& loop = s[n];
  const int64_t trip = loop.size / inner[static_cast<int>(loop.dim)];
  const int64_t wb = h.word_bytes();
  // The candidates at cut n (ImpliedCuts), larger tile first, ties in operand order (Pack's order).
  struct Cand {
    int ti;
    int64_t elems;
  };
  Cand cands[kNumOperands];
  int nc = 0;
  if (n >= 1)
    for (int ti = 0; ti < kNumOperands; ++ti) {
      Operand t = static_cast<Operand>(ti);
      if (t == Operand::kKernel && !layer.HasKernel()) continue;
      bool run_start = !layer.Indexes(loop.dim, t) && layer.Indexes(s[n - 1].dim, t);
      bool window = t == Operand::kInput && layer.IsWindow(s[n - 1].dim);
      if (!run_start && !window) continue;
      Cand c{ti, layer.Footprint(t, inner)};
      int at = nc++;
      while (at > 0 && cands[at - 1].elems < c.elems) {
        cands[at] = cands[at - 1];
        --at;
      }
      cands[at] = c;
    }
  for (int i = 0; i < nc; ++i) {
    const int ti = cands[i].ti;
    const Operand t = static_cast<Operand>(ti);
    std::vector<BufferUse>& ch = pk.chains[ti];
    const int back = h.Backing(t);
    const int64_t bytes = cands[i].elems * wb;
    // ch ends with the backing store; its last buffer (if any) is ch[ch.size() - 2].
    BufferUse* top = ch.size() >= 2 ? &ch[ch.size() - 2] : nullptr;
    int chosen = -1;
    for (int l = pk.ptr[ti]; l < back && chosen < 0; ++l) {
      if (!h.levels[l].Holds(t)) continue;
      int64_t avail = pk.free_bytes[l] + (top && top->level == l ? top->elems * wb : 0);
      if (avail >= bytes) chosen = l;
    }
    if (chosen < 0) {
      pk.ptr[ti] = back;
      pk.exhausted[ti] = true;
      continue;
    }
    BufferUse backing = ch.back();
    ch.pop_back();
    if (top && top->level == chosen) {
      pk.free_bytes[chosen] += top->elems * wb;
      ch.pop_back();
    }
    pk.free_bytes[chosen] -= bytes;
    pk.ptr[ti] = chosen;
    BufferUse u;
    u.operand = t;
    u.cut = n;
    u.level = chosen;
    u.elems = cands[i].elems;
    u.fills = 1;
    ch.push_back(u);
    ch.push_back(backing);
  }
  // The new loop's trip multiplies the fills of every buffer whose operand it indexes or that
  // already has an indexing loop outside it (fills > 1: every trip is at least 2).
  for (int ti = 0; ti < kNumOperands; ++ti) {
    const bool idx = layer.Indexes(loop.dim, static_cast<Operand>(ti));
    std::vector<BufferUse>& ch = pk.chains[ti];
    for (size_t i = 0; i + 1 < ch.size(); ++i)
      if (ch[i].fills > 1 || idx) ch[i].fills *= trip;
    ch.back().cut = n + 1;  // the backing store's cut is the string's length
  }
}

}  // namespace sramplan::blocking
