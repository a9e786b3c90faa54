#include "spill/spill.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>

#include "support/int_math.h"

namespace sramplan::spill {

const char* MoveKindName(MoveKind k) {
  switch (k) {
    case MoveKind::kLoad: return "load";
    case MoveKind::kReload: return "reload";
    case MoveKind::kSpill: return "spill";
    case MoveKind::kStore: return "store";
  }
  return "?";
}

int64_t MinBudget(const SpillProblem& p) {
  int64_t best = 0;
  for (const SpillOp& op : p.ops) {
    int64_t sum = 0;
    for (int t : op.inputs) sum += p.tensors[t].bytes;
    for (int t : op.outputs) sum += p.tensors[t].bytes;
    best = std::max(best, sum);
  }
  return best;
}

void CountBytes(const SpillProblem& p, SpillSolution* s) {
  s->noncompulsory_bytes = s->compulsory_bytes = 0;
  for (const Move& m : s->moves) {
    const int64_t b = p.tensors[m.tensor].bytes;
    if (m.kind == MoveKind::kSpill || m.kind == MoveKind::kReload)
      s->noncompulsory_bytes += b;
    else
      s->compulsory_bytes += b;
  }
}

namespace {

std::string TName(const SpillProblem& p, int t) { return "tensor '" + p.tensors[t].name + "'"; }

// Producer op of each tensor (-1: graph input or weight), after checking the problem itself.
Status ProducersOf(const SpillProblem& p, std::vector<int>* producer) {
  const int nt = static_cast<int>(p.tensors.size());
  producer->assign(nt, -1);
  for (int o = 0; o < static_cast<int>(p.ops.size()); ++o) {
    for (int t : p.ops[o].outputs) {
      if (t < 0 || t >= nt) return InvalidArgument("op '" + p.ops[o].name + "' writes tensor index " + std::to_string(t) + " out of range");
      if ((*producer)[t] >= 0) return InvalidArgument(TName(p, t) + " is produced twice");
      (*producer)[t] = o;
    }
    for (int t : p.ops[o].inputs)
      if (t < 0 || t >= nt) return InvalidArgument("op '" + p.ops[o].name + "' reads tensor index " + std::to_string(t) + " out of range");
  }
  for (int t = 0; t < nt; ++t) {
    const SpillTensor& st = p.tensors[t];
    if (st.bytes < 0) return InvalidArgument(TName(p, t) + " has negative bytes");
    if ((*producer)[t] < 0 && !st.graph_input && !st.weight)
      return InvalidArgument(TName(p, t) + " is neither produced nor a graph input or weight");
    if ((*producer)[t] >= 0 && (st.graph_input || st.weight))
      return InvalidArgument(TName(p, t) + " is a graph input or weight but op '" + p.ops[(*producer)[t]].name + "' produces it");
  }
  return Status::Ok();
}

}  // namespace

Status CheckSolution(const SpillProblem& p, const SpillSolution& s) {
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::vector<int> producer;
  SP_RETURN_IF_ERROR(ProducersOf(p, &producer));
  // Order: a topological permutation.
  if (static_cast<int>(s.order.size()) != n)
    return InvalidArgument("order has " + std::to_string(s.order.size()) + " steps for " + std::to_string(n) + " ops");
  std::vector<int> step_of(n, -1);
  for (int st = 0; st < n; ++st) {
    int o = s.order[st];
    if (o < 0 || o >= n || step_of[o] >= 0) return InvalidArgument("order is not a permutation of the ops (step " + std::to_string(st) + ")");
    step_of[o] = st;
  }
  for (int o = 0; o < n; ++o)
    for (int t : p.ops[o].inputs)
      if (producer[t] >= 0 && step_of[producer[t]] >= step_of[o])
        return InvalidArgument("op '" + p.ops[o].name + "' runs at step " + std::to_string(step_of[o]) + " before " +
                               TName(p, t) + " is produced");
  // Residencies.
  std::vector<std::vector<const Residency*>> res_of(nt);
  for (const Residency& r : s.residencies) {
    if (r.tensor < 0 || r.tensor >= nt) return InvalidArgument("residency names tensor index " + std::to_string(r.tensor));
    const std::string what = "residency of " + TName(p, r.tensor) + " [" + std::to_string(r.first_step) + ", " +
                             std::to_string(r.last_step) + "]";
    if (r.first_step < 0 || r.last_step >= n || r.first_step > r.last_step) return InvalidArgument(what + " is not inside the steps");
    if (r.offset < 0 || r.offset % std::max<int64_t>(p.alignment, 1) != 0)
      return InvalidArgument(what + " has offset " + std::to_string(r.offset) + " (negative or not aligned)");
    if (r.offset + p.tensors[r.tensor].bytes > p.budget)
      return InvalidArgument(what + " ends at byte " + std::to_string(r.offset + p.tensors[r.tensor].bytes) +
                             ", beyond the budget of " + std::to_string(p.budget));
    res_of[r.tensor].push_back(&r);
  }
  for (auto& list : res_of) {
    std::sort(list.begin(), list.end(), [](const Residency* a, const Residency* b) { return a->first_step < b->first_step; });
    for (size_t i = 1; i < list.size(); ++i)
      if (list[i]->first_step <= list[i - 1]->last_step)
        return InvalidArgument("two residencies of " + TName(p, list[i]->tensor) + " overlap in time");
  }
  auto resident = [&](int t, int st) -> const Residency* {
    for (const Residency* r : res_of[t])
      if (r->first_step <= st && st <= r->last_step) return r;
    return nullptr;
  };
  // Moves.
  std::map<std::pair<int, int>, MoveKind> in_moves;   // (step, tensor) -> load/reload
  std::vector<int> to_dram_step(nt, std::numeric_limits<int>::max());  // first spill/store step
  std::vector<int> writes(nt, 0);
  std::vector<int> loads(nt, 0);
  for (const Move& m : s.moves) {
    if (m.tensor < 0 || m.tensor >= nt || m.step < 0 || m.step >= n) return InvalidArgument("a move names a tensor or step out of range");
    const std::string what = std::string(MoveKindName(m.kind)) + " of " + TName(p, m.tensor) + " at step " + std::to_string(m.step);
    const SpillTensor& t = p.tensors[m.tensor];
    if (m.kind == MoveKind::kLoad || m.kind == MoveKind::kReload) {
      if (!in_moves.emplace(std::make_pair(m.step, m.tensor), m.kind).second) return InvalidArgument(what + " is listed twice");
      if (m.kind == MoveKind::kLoad && !t.graph_input && !t.weight) return InvalidArgument(what + ": only graph inputs and weights are loaded; activations are reloaded");
      if (m.kind == MoveKind::kLoad && loads[m.tensor]++ > 0) return InvalidArgument(what + ": a tensor is loaded once; later copies are reloads");
    } else {
      if (!resident(m.tensor, m.step)) return InvalidArgument(what + ": the tensor is not resident at that step");
      if (t.graph_input || t.weight) return InvalidArgument(what + ": graph inputs and weights are already in DRAM");
      if (producer[m.tensor] >= 0 && step_of[producer[m.tensor]] > m.step) return InvalidArgument(what + ": before it is produced");
      if (m.kind == MoveKind::kStore && !t.graph_output) return InvalidArgument(what + ": only graph outputs are stored; activations are spilled");
      if (m.kind == MoveKind::kSpill && t.graph_output) return InvalidArgument(what + ": a graph output is stored, not spilled");
      if (writes[m.tensor]++ > 0) return InvalidArgument(what + ": a tensor goes to DRAM once and stays there");
      to_dram_step[m.tensor] = std::min(to_dram_step[m.tensor], m.step);
    }
  }
  for (int t = 0; t < nt; ++t) {
    if (p.tensors[t].graph_input || p.tensors[t].weight) to_dram_step[t] = -1;
    if (p.tensors[t].graph_output && writes[t] == 0) return InvalidArgument(TName(p, t) + " is a graph output but is never stored");
    // How each residency starts.
    bool first = true;
    for (const Residency* r : res_of[t]) {
      const bool produced = producer[t] >= 0 && first && step_of[producer[t]] == r->first_step;
      auto mv = in_moves.find({r->first_step, t});
      if (!produced) {
        if (mv == in_moves.end())
          return InvalidArgument("residency of " + TName(p, t) + " from step " + std::to_string(r->first_step) +
                                 " starts with neither its production nor a load/reload");
        if (to_dram_step[t] >= r->first_step)
          return InvalidArgument(TName(p, t) + " is reloaded at step " + std::to_string(r->first_step) + " before it is in DRAM");
        if (mv->second == MoveKind::kLoad && !(first && loads[t] == 1))
          return InvalidArgument(TName(p, t) + " is loaded at step " + std::to_string(r->first_step) + " but it is not its first copy");
        if (mv->second == MoveKind::kReload && (p.tensors[t].graph_input || p.tensors[t].weight) && first)
          return InvalidArgument("the first copy of " + TName(p, t) + " is a load (compulsory), not a reload");
        in_moves.erase(mv);
      } else if (mv != in_moves.end()) {
        return InvalidArgument(TName(p, t) + " is reloaded at the step that produces it");
      }
      if (producer[t] >= 0 && r->first_step < step_of[producer[t]])
        return InvalidArgument("residency of " + TName(p, t) + " starts before the tensor is produced");
      first = false;
    }
  }
  if (!in_moves.empty())
    return InvalidArgument("load/reload of " + TName(p, in_moves.begin()->first.second) + " at step " +
                           std::to_string(in_moves.begin()->first.first) + " fills no residency");
  // Every op finds its inputs and outputs resident; outputs start at their production step.
  for (int st = 0; st < n; ++st) {
    const SpillOp& op = p.ops[s.order[st]];
    for (int t : op.inputs)
      if (!resident(t, st)) return InvalidArgument("step " + std::to_string(st) + " op '" + op.name + "': input " + TName(p, t) + " is not resident");
    for (int t : op.outputs) {
      const Residency* r = resident(t, st);
      if (!r || r->first_step != st) return InvalidArgument("step " + std::to_string(st) + " op '" + op.name + "': output " + TName(p, t) + " has no residency starting here");
    }
  }
  // No two residencies share a byte at a step.
  std::vector<const Residency*> all;
  for (const Residency& r : s.residencies) all.push_back(&r);
  std::sort(all.begin(), all.end(), [](const Residency* a, const Residency* b) {
    return a->first_step != b->first_step ? a->first_step < b->first_step : a->offset < b->offset;
  });
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size() && all[j]->first_step <= all[i]->last_step; ++j) {
      const Residency& a = *all[i];
      const Residency& b = *all[j];
      const int64_t ab = p.tensors[a.tensor].bytes, bb = p.tensors[b.tensor].bytes;
      if (ab == 0 || bb == 0) continue;
      if (a.offset < b.offset + bb && b.offset < a.offset + ab)
        return InvalidArgument("residencies of " + TName(p, a.tensor) + " and " + TName(p, b.tensor) +
                               " share bytes at step " + std::to_string(b.first_step));
    }
  // Totals.
  SpillSolution copy;
  copy.moves = s.moves;
  CountBytes(p, &copy);
  if (copy.noncompulsory_bytes != s.noncompulsory_bytes || copy.compulsory_bytes != s.compulsory_bytes)
    return InvalidArgument("the solution reports " + std::to_string(s.noncompulsory_bytes) + " non-compulsory / " +
                           std::to_string(s.compulsory_bytes) + " compulsory bytes, its moves add up to " +
                           std::to_string(copy.noncompulsory_bytes) + " / " + std::to_string(copy.compulsory_bytes));
  return Status::Ok();
}

namespace {

enum class Policy { kBelady, kGreedy };

// Simulation of a linear (best-fit) allocator inside the budget with eviction.
class Simulator {
 public:
  Simulator(const SpillProblem& p, const std::vector<int>& order, Policy policy)
      : p_(p), order_(order), policy_(policy), nt_(static_cast<int>(p.tensors.size())) {}

  StatusOr<SpillSolution> Run() {
    auto t0 = std::chrono::steady_clock::now();
    const int n = static_cast<int>(p_.ops.size());
    std::vector<int> producer;
    SP_RETURN_IF_ERROR(ProducersOf(p_, &producer));
    if (static_cast<int>(order_.size()) != n) return InvalidArgument("the order does not list every op once");
    uses_.assign(nt_, {});
    for (int st = 0; st < n; ++st) {
      int o = order_[st];
      if (o < 0 || o >= n) return InvalidArgument("the order names op index " + std::to_string(o));
      for (int t : p_.ops[o].inputs) uses_[t].push_back(st);
    }
    in_dram_.assign(nt_, false);
    loaded_.assign(nt_, false);
    for (int t = 0; t < nt_; ++t) in_dram_[t] = p_.tensors[t].graph_input || p_.tensors[t].weight;
    open_.assign(nt_, -1);
    const int64_t need = MinBudget(p_);
    if (need > p_.budget)
      return OutOfMemory("the budget of " + std::to_string(p_.budget) + " bytes is below M_min = " + std::to_string(need) +
                         " bytes (the largest working set of one op); no replacement policy can run this model in it");
    for (int st = 0; st < n; ++st) {
      const SpillOp& op = p_.ops[order_[st]];
      std::set<int> needed(op.inputs.begin(), op.inputs.end());
      needed.insert(op.outputs.begin(), op.outputs.end());
      std::vector<int> want;  // tensors to place at this step, inputs first
      for (int t : op.inputs)
        if (open_[t] < 0) want.push_back(t);
      for (int t : op.outputs) want.push_back(t);
      bool ok = true;
      for (int t : want)
        if (!Place(t, st, needed)) {
          ok = false;
          break;
        }
      if (!ok) {
        // Fragmentation: the working set does not fit around what stays. Undo this step's
        // placements, drop every residency (spilling what is needed later, the op's resident inputs
        // included), and lay the working set out from address 0: always possible within M_min.
        for (int t : want)
          if (open_[t] >= 0 && res_[open_[t]].first_step == st) Cancel(t, st);
        for (int t = 0; t < nt_; ++t)
          if (open_[t] >= 0) Evict(t, st);
        int64_t cursor = 0;
        for (int io = 0; io < 2; ++io)
          for (int t : io == 0 ? op.inputs : op.outputs)
            if (open_[t] < 0) {
              Open(t, st, cursor);
              cursor += Bytes(t);
            }
        if (cursor > p_.budget) return InternalError("working set exceeds the budget after compaction");
      }
      // After the op: store graph outputs; free what is dead.
      for (int t : op.outputs)
        if (p_.tensors[t].graph_output && !in_dram_[t]) {
          sol_.moves.push_back({st, t, MoveKind::kStore});
          in_dram_[t] = true;
        }
      for (int t = 0; t < nt_; ++t)
        if (open_[t] >= 0 && NextUse(t, st + 1) < 0) Close(t, st);
    }
    for (int t = 0; t < nt_; ++t)
      if (open_[t] >= 0) Close(t, n - 1);
    sol_.order = order_;
    for (const Residency& r : res_)
      if (r.first_step <= r.last_step) sol_.residencies.push_back(r);
    std::stable_sort(sol_.moves.begin(), sol_.moves.end(), [](const Move& a, const Move& b) {
      auto rank = [](MoveKind k) { return k == MoveKind::kLoad || k == MoveKind::kReload ? 0 : 1; };
      return a.step != b.step ? a.step < b.step : rank(a.kind) < rank(b.kind);
    });
    CountBytes(p_, &sol_);
    sol_.method = policy_ == Policy::kBelady ? "belady" : "greedy";
    sol_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sol_.detail = std::to_string(sol_.moves.size()) + " moves";
    return sol_;
  }

 private:
  int64_t Align() const { return std::max<int64_t>(p_.alignment, 1); }
  int64_t Bytes(int t) const { return AlignUp(p_.tensors[t].bytes, Align()); }

  // First use of t at or after step st, -1 if none.
  int NextUse(int t, int st) const {
    auto it = std::lower_bound(uses_[t].begin(), uses_[t].end(), st);
    return it == uses_[t].end() ? -1 : *it;
  }

  // Opens a residency of t at step st: its production, or a load (first copy of a graph input or
  // weight) / reload before the op.
  void Open(int t, int st, int64_t offset) {
    const bool produced_here = [&] {
      for (int o : p_.ops[order_[st]].outputs)
        if (o == t) return true;
      return false;
    }();
    if (!produced_here) {
      MoveKind k = (p_.tensors[t].graph_input || p_.tensors[t].weight) && !loaded_[t] ? MoveKind::kLoad : MoveKind::kReload;
      loaded_[t] = true;
      sol_.moves.push_back({st, t, k});
    }
    open_[t] = static_cast<int>(res_.size());
    res_.push_back({t, st, st, offset});
  }

  // Ends t's open residency at `last` (the residency covers up to `last`).
  void Close(int t, int last) {
    res_[open_[t]].last_step = last;
    open_[t] = -1;
  }

  // Undoes the residency t opened at step st (and its load/reload).
  void Cancel(int t, int st) {
    Residency& r = res_[open_[t]];
    r.last_step = r.first_step - 1;  // empty: dropped from the solution
    open_[t] = -1;
    for (size_t i = sol_.moves.size(); i-- > 0;) {
      const Move& m = sol_.moves[i];
      if (m.step == st && m.tensor == t && (m.kind == MoveKind::kLoad || m.kind == MoveKind::kReload)) {
        if (m.kind == MoveKind::kLoad) loaded_[t] = false;
        sol_.moves.erase(sol_.moves.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }

  // Evicts t before step st: its residency ends at st - 1; spilled after st - 1 if needed later.
  void Evict(int t, int st) {
    if (!in_dram_[t] && NextUse(t, st) >= 0) {
      sol_.moves.push_back({st - 1, t, p_.tensors[t].graph_output ? MoveKind::kStore : MoveKind::kSpill});
      in_dram_[t] = true;
    }
    Close(t, st - 1);
  }

  // Occupied intervals at step st (open residencies), sorted by offset.
  std::vector<std::pair<int64_t, int64_t>> Occupied() const {
    std::vector<std::pair<int64_t, int64_t>> occ;
    for (int t = 0; t < nt_; ++t)
      if (open_[t] >= 0) occ.push_back({res_[open_[t]].offset, res_[open_[t]].offset + Bytes(t)});
    std::sort(occ.begin(), occ.end());
    return occ;
  }

  // Best-fit gap for `bytes`, or -1.
  int64_t BestFit(int64_t bytes) const {
    auto occ = Occupied();
    int64_t best = -1, best_size = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    auto consider = [&](int64_t lo, int64_t hi) {
      if (hi - lo >= bytes && hi - lo < best_size) {
        best = lo;
        best_size = hi - lo;
      }
    };
    for (const auto& [lo, hi] : occ) {
      consider(cursor, lo);
      cursor = std::max(cursor, hi);
    }
    consider(cursor, p_.budget);
    return best;
  }

  // Whether evicting `victims` (plus what is already free) opens a gap of `bytes`.
  bool FitsWithout(const std::set<int>& victims, int64_t bytes) const {
    std::vector<std::pair<int64_t, int64_t>> occ;
    for (int t = 0; t < nt_; ++t)
      if (open_[t] >= 0 && !victims.count(t)) occ.push_back({res_[open_[t]].offset, res_[open_[t]].offset + Bytes(t)});
    std::sort(occ.begin(), occ.end());
    int64_t cursor = 0;
    for (const auto& [lo, hi] : occ) {
      if (lo - cursor >= bytes) return true;
      cursor = std::max(cursor, hi);
    }
    return p_.budget - cursor >= bytes;
  }

  int64_t EvictionCost(int t, int st) const {
    if (NextUse(t, st) < 0) return 0;
    return (in_dram_[t] ? 1 : 2) * p_.tensors[t].bytes;
  }

  bool Place(int t, int st, const std::set<int>& needed) {
    const int64_t bytes = Bytes(t);
    for (;;) {
      int64_t off = BestFit(bytes);
      if (off >= 0) {
        Open(t, st, off);
        return true;
      }
      std::vector<int> cands;
      for (int v = 0; v < nt_; ++v)
        if (open_[v] >= 0 && !needed.count(v) && res_[open_[v]].first_step < st) cands.push_back(v);
      if (cands.empty()) return false;
      int victim = -1;
      if (policy_ == Policy::kBelady) {
        // Furthest next use (never used again counts as infinitely far); ties: larger, then lower id.
        auto key = [&](int v) {
          int nu = NextUse(v, st);
          return std::make_tuple(nu < 0 ? std::numeric_limits<int>::max() : nu, p_.tensors[v].bytes, -v);
        };
        victim = *std::max_element(cands.begin(), cands.end(), [&](int a, int b) { return key(a) < key(b); });
      } else {
        // The single eviction that makes room with the least off-chip bytes; else the cheapest per
        // byte freed. Ties: furthest next use, then lower id.
        auto far = [&](int v) {
          int nu = NextUse(v, st);
          return nu < 0 ? std::numeric_limits<int>::max() : nu;
        };
        int best = -1;
        for (int v : cands)
          if (FitsWithout({v}, bytes)) {
            if (best < 0 || EvictionCost(v, st) < EvictionCost(best, st) ||
                (EvictionCost(v, st) == EvictionCost(best, st) && far(v) > far(best)))
              best = v;
          }
        if (best < 0)
          for (int v : cands) {
            // The lowest cost per byte freed: cost(v) / bytes(v) < cost(best) / bytes(best).
            if (best < 0) {
              best = v;
              continue;
            }
            const __int128 lhs = static_cast<__int128>(EvictionCost(v, st)) * std::max<int64_t>(Bytes(best), 1);
            const __int128 rhs = static_cast<__int128>(EvictionCost(best, st)) * std::max<int64_t>(Bytes(v), 1);
            if (lhs < rhs || (lhs == rhs && far(v) > far(best))) best = v;
          }
        victim = best;
      }
      Evict(victim, st);
    }
  }

  const SpillProblem& p_;
  const std::vector<int>& order_;
  Policy policy_;
  int nt_;
  std::vector<std::vector<int>> uses_;
  std::vector<bool> in_dram_, loaded_;
  std::vector<int> open_;  // index into res_ of the tensor's open residency, -1
  std::vector<Residency> res_;
  SpillSolution sol_;
};

}  // namespace

StatusOr<SpillSolution> SolveBelady(const SpillProblem& p, const std::vector<int>& order) {
  return Simulator(p, order, Policy::kBelady).Run();
}

StatusOr<SpillSolution> SolveGreedy(const SpillProblem& p, const std::vector<int>& order) {
  return Simulator(p, order, Policy::kGreedy).Run();
}

}  // namespace sramplan::spill
