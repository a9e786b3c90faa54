#include "blocking/optimizer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <thread>

#include "blocking/pack_step.h"
#include "blocking/search_memo.h"
#include "support/progress.h"

namespace sramplan::blocking {

namespace {

using Clock = std::chrono::steady_clock;
int Idx(Dim d) { return static_cast<int>(d); }
bool XyClass(Dim d) { return d == Dim::kX || d == Dim::kY || d == Dim::kN; }

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Energy of moving a fill stream of `fills` tiles of `elems` words between a buffer in level
// `child` and its parent holder in level `parent` (model.h's accounting).
double StreamPj(const Hierarchy& h, Operand t, double fills, double elems, double tiles, int child, int parent) {
  const Level& c = h.levels[child];
  const Level& p = h.levels[parent];
  double moved = fills * elems;
  if (t != Operand::kOutput) return moved * (p.read_pj + c.write_pj);
  double back_in = (fills - tiles) * elems;
  return back_in * (p.read_pj + c.write_pj) + moved * (c.read_pj + p.write_pj);
}

// Where a search stands: the current prefix and the per-dimension state that the child rules need.
struct Prefix {
  BlockingString loops;
  Extents cur = {1, 1, 1, 1, 1, 1, 1};
  std::array<int, kNumDims> count{};
};

// The loops that may extend `p` (the space in optimizer.h).
// Whether transposing (X <-> Y, Fw <-> Fh) maps the layer onto itself: then every string has a
// transposed twin of equal energy (footprints, reuse rule and packing are symmetric).
bool Transposable(const Layer& l) {
  return l.extent(Dim::kX) == l.extent(Dim::kY) && l.extent(Dim::kFw) == l.extent(Dim::kFh) && l.stride_x == l.stride_y;
}

// `transpose_sym` (exact search, Transposable layers): the first X, Y, Fw or Fh loop must be X or Fw
// (a string whose first one is Y or Fh has a transposed twin, its adjacent X/Y/N loops re-sorted,
// that is in the space and starts with X or Fw).
using DivisorTable = std::array<std::vector<int64_t>, kNumDims>;
DivisorTable AllDivisors(const Layer& layer) {
  DivisorTable t;
  for (Dim d : kAllDims) t[Idx(d)] = Divisors(layer.extent(d));
  return t;
}

void Children(const Layer& layer, const DivisorTable& divs, const Prefix& p, int max_per_dim, bool transpose_sym,
              std::vector<Loop>* children) {
  std::vector<Loop>& out = *children;
  out.clear();
  const Loop* last = p.loops.empty() ? nullptr : &p.loops.back();
  const bool first_spatial = transpose_sym && p.count[Idx(Dim::kX)] + p.count[Idx(Dim::kY)] + p.count[Idx(Dim::kFw)] +
                                                      p.count[Idx(Dim::kFh)] == 0;
  for (Dim d : kAllDims) {
    int64_t e = layer.extent(d), b = p.cur[Idx(d)];
    if (b == e || p.count[Idx(d)] >= max_per_dim) continue;
    if (first_spatial && (d == Dim::kY || d == Dim::kFh)) continue;
    if (last && last->dim == d) continue;
    if (last && XyClass(last->dim) && XyClass(d) && Idx(d) < Idx(last->dim)) continue;
    bool must_finish = p.count[Idx(d)] + 1 >= max_per_dim;
    for (int64_t s : divs[Idx(d)]) {
      if (s <= b || s % b != 0) continue;
      if (must_finish && s != e) continue;
      out.push_back({d, s});
    }
  }
}

std::vector<Loop> Children(const Layer& layer, const Prefix& p, int max_per_dim, bool transpose_sym = false) {
  std::vector<Loop> out;
  Children(layer, AllDivisors(layer), p, max_per_dim, transpose_sym, &out);
  return out;
}

void Push(Prefix* p, const Loop& l) {
  p->loops.push_back(l);
  p->cur[Idx(l.dim)] = l.size;
  ++p->count[Idx(l.dim)];
}

bool Complete(const Layer& layer, const Prefix& p) {
  for (Dim d : kAllDims)
    if (p.cur[Idx(d)] != layer.extent(d)) return false;
  return true;
}

// The best full string so far, shared by the workers; ties are broken by the string's text.
struct Incumbent {
  std::mutex mu;
  std::atomic<double> energy{std::numeric_limits<double>::infinity()};
  BlockingString best;
  std::string text;
  Evaluation eval;
  // Whether every string starting with the prefix `t` sorts after the best string's text.
  bool Beyond(const std::string& t) {
    std::lock_guard<std::mutex> lock(mu);
    return !text.empty() && t > text && text.compare(0, t.size(), t) != 0;
  }
  void Offer(const BlockingString& s, const Evaluation& ev) {
    if (ev.total_pj > energy.load()) return;
    std::string t = ToString(s);
    std::lock_guard<std::mutex> lock(mu);
    if (ev.total_pj < energy.load() || (ev.total_pj == energy.load() && (text.empty() || t < text))) {
      energy.store(ev.total_pj);
      best = s;
      text = t;
      eval = ev;
    }
  }
};

Status CheckBackingFits(const Layer& layer, const Hierarchy& h) {
  std::vector<int64_t> used(h.levels.size(), 0);
  for (int t = 0; t < kNumOperands; ++t) used[h.Backing(static_cast<Operand>(t))] += layer.Size(static_cast<Operand>(t)) * h.word_bytes();
  for (size_t i = 0; i < used.size(); ++i)
    if (used[i] > h.levels[i].capacity_bytes)
      return OutOfMemory("layer '" + layer.name + "': its tensors need " + std::to_string(used[i]) + " B in level '" +
                         h.levels[i].name + "' (the last level holding them) but it has " +
                         std::to_string(h.levels[i].capacity_bytes) + " B; add a larger backing level (e.g. DRAM)");
  return Status::Ok();
}

// The prefix's lower bound (PrefixLowerBound); *closed: no operand can get another buffer below
// its backing store in any completion (every later tile is at least the prefix's and fits no level).
// opt_max_loops: the most loops a dimension may have in a completion.
// `cutoff`: once the bound's cheaper terms exceed it, the outermost-dimensions term is skipped.
class OuterPassCache;
// `cache`: a worker's OuterPassCache (the bound is the same without it, only slower).
double Bound(const Layer& layer, const Hierarchy& h, const BlockingString& prefix, bool* closed, const Packing& pk,
             int opt_max_loops, double cutoff = std::numeric_limits<double>::infinity(), OuterPassCache* cache = nullptr);

// The order of the remaining dimensions (one full loop each) that minimises
//   sum over operands t of w[t] * (product of the remaining trips from t's first indexing loop),
// i.e. w[t] * rprod / (product of the trips placed before that loop): a DP over the subsets of the
// remaining dimensions (an operand is "open" while no placed loop indexes it; the set of open
// operands depends only on the placed set). `forbid_first`: a dimension that may not come first (the
// prefix's last loop), or null. Returns the minimum (infinity when no order is allowed) and, if
// `order` is given, the order.
double OrderDp(const Layer& layer, const Extents& cur, const double w[kNumOperands], const Dim* forbid_first,
               std::vector<Dim>* order) {
  std::array<Dim, kNumDims> rest{};
  std::array<double, kNumDims> trip{};
  int r = 0;
  double rprod = 1;
  for (Dim d : kAllDims)
    if (cur[Idx(d)] != layer.extent(d)) {
      rest[r] = d;
      trip[r] = static_cast<double>(layer.extent(d) / cur[Idx(d)]);
      rprod *= trip[r++];
    }
  std::array<unsigned, kNumDims> mask{};  // operands each remaining dimension indexes
  for (int i = 0; i < r; ++i)
    for (int ti = 0; ti < kNumOperands; ++ti)
      if (w[ti] > 0 && layer.Indexes(rest[i], static_cast<Operand>(ti))) mask[i] |= 1u << ti;
  const int full = (1 << r) - 1;
  std::array<double, 1 << kNumDims> g{}, prod{};
  std::array<unsigned, 1 << kNumDims> closed{};
  std::array<int, 1 << kNumDims> pick{};
  prod[0] = 1;
  for (int S = 1; S <= full; ++S) {
    int i = __builtin_ctz(static_cast<unsigned>(S));
    prod[S] = prod[S & (S - 1)] * trip[i];
    closed[S] = closed[S & (S - 1)] | mask[i];
  }
  g[full] = 0;
  for (int ti = 0; ti < kNumOperands; ++ti)
    if (w[ti] > 0 && !(closed[full] >> ti & 1u)) g[full] += w[ti];
  for (int S = full - 1; S >= 0; --S) {
    g[S] = std::numeric_limits<double>::infinity();
    pick[S] = -1;
    for (int i = 0; i < r; ++i) {
      if (S >> i & 1) continue;
      if (S == 0 && forbid_first && rest[i] == *forbid_first) continue;
      double c = g[S | (1 << i)];
      unsigned now = mask[i] & ~closed[S];  // operands this loop closes
      for (int ti = 0; ti < kNumOperands; ++ti)
        if (now >> ti & 1u) c += w[ti] * rprod / prod[S];
      if (c < g[S]) {
        g[S] = c;
        pick[S] = i;
      }
    }
  }
  if (order && std::isfinite(g[0]))
    for (int S = 0; S != full; S |= 1 << pick[S]) order->push_back(rest[pick[S]]);
  return g[0];
}

// The best completion of a closed prefix (every operand closed: the completion adds no buffer, so
// only the fill counts of the buffers whose operand has no indexing loop after them change; model.h).
// Splitting a remaining dimension into two loops never lowers a fill count (the inner part placed
// where the first part was does at least as well), so the completion is one full loop per remaining
// dimension, ordered by OrderDp with w[t] = the per-fill energy (StreamPj's slope) of t's last
// buffer when no prefix loop after it indexes t. Empty when the prefix has no completion in the space.
BlockingString ClosedCompletion(const Layer& layer, const Hierarchy& h, const Prefix& p, const Packing& pk) {
  const int n = static_cast<int>(p.loops.size());
  double w[kNumOperands] = {0, 0, 0};
  for (int ti = 0; ti < kNumOperands; ++ti) {
    Operand t = static_cast<Operand>(ti);
    if (t == Operand::kKernel && !layer.HasKernel()) continue;
    int last_idx = -1;
    for (int j = 0; j < n; ++j)
      if (layer.Indexes(p.loops[j].dim, t)) last_idx = j;
    const std::vector<BufferUse>& ch = pk.chains[ti];
    for (size_t i = 0; i + 1 < ch.size(); ++i) {
      if (ch[i].cut <= last_idx) continue;  // an indexing loop after it in the prefix: all trips count
      const Level& c = h.levels[ch[i].level];
      const Level& par = h.levels[ch[i + 1].level];
      double e = static_cast<double>(ch[i].elems);
      w[ti] += e * (par.read_pj + c.write_pj) + (t == Operand::kOutput ? e * (c.read_pj + par.write_pj) : 0.0);
    }
  }
  std::vector<Dim> order;
  Dim last = p.loops.back().dim;
  if (!std::isfinite(OrderDp(layer, p.cur, w, &last, &order))) return {};
  BlockingString out = p.loops;
  for (Dim d : order) out.push_back({d, layer.extent(d)});
  return out;
}

struct ExactWorker {
  const Layer& layer;
  const Hierarchy& h;
  const SearchOptions& opt;
  Incumbent& inc;
  Clock::time_point deadline;
  std::atomic<bool>& timed_out;
  std::atomic<int64_t>& nodes;
  std::atomic<int64_t>& leaves;
  std::atomic<int64_t>& completions;
  Progress& progress;
  PrefixMemo* memo;  // null: no transposition table
  OuterPassCache* pass_cache;
  bool transpose_sym = Transposable(layer);
  DivisorTable divs = AllDivisors(layer);
  int64_t local_nodes = 0;
  std::string key = {}, rank = {};  // PrefixMemo scratch
  // By prefix length: the packing of the current prefix's first loops and the children lists.
  std::vector<Packing> packs = {};
  std::vector<std::vector<Loop>> kids = {};
  // Sets the stacks for the prefix `p` (the root of a task).
  void Start(const Prefix& p) {
    const size_t most = static_cast<size_t>(kNumDims) * std::max(1, opt.max_loops_per_dim) + 2;
    packs.resize(std::max(most, p.loops.size() + 2));
    kids.resize(packs.size());
    packs[0] = Pack(layer, h, {});
    BlockingString s;
    Extents inner = {1, 1, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < p.loops.size(); ++i) {
      s.push_back(p.loops[i]);
      PackStep(layer, h, s, inner, packs[i], &packs[i + 1]);
      inner[Idx(p.loops[i].dim)] = p.loops[i].size;
    }
  }
  void Dfs(Prefix& p) {
    if (timed_out.load(std::memory_order_relaxed)) return;
    if ((++local_nodes & 1023) == 0) {
      nodes.fetch_add(1024, std::memory_order_relaxed);
      if (progress.enabled()) {
        const double best = inc.energy.load();
        progress.Update(std::isfinite(best) ? best : -1, -1, nodes.load(std::memory_order_relaxed));
      }
      if (Clock::now() > deadline) {
        timed_out.store(true);
        return;
      }
    }
    if (Complete(layer, p)) {
      leaves.fetch_add(1, std::memory_order_relaxed);
      Evaluation ev = Evaluate(layer, h, p.loops);
      if (ev.fits) inc.Offer(p.loops, ev);
      return;
    }
    if (!p.loops.empty()) {
      bool closed = false;
      const Packing& pk = packs[p.loops.size()];
      double best = inc.energy.load();
      double lb = Bound(layer, h, p.loops, &closed, pk, opt.max_loops_per_dim, best * (1 + 1e-12), pass_cache);
      if (lb > best * (1 + 1e-12)) return;
      // A bound equal to the best can only tie, and ties go to the smaller text: drop the prefix
      // when every completion's text is larger than the best's.
      if (lb >= best * (1 - 1e-12) && inc.Beyond(ToString(p.loops))) return;
      if (closed) {  // dominance: the one best completion stands for the whole subtree
        BlockingString s = ClosedCompletion(layer, h, p, pk);
        if (s.empty()) return;
        leaves.fetch_add(1, std::memory_order_relaxed);
        completions.fetch_add(1, std::memory_order_relaxed);
        Evaluation ev = Evaluate(layer, h, s);
        if (ev.fits) inc.Offer(s, ev);
        return;
      }
      // Transposition: a prefix in the same state with a smaller text stands for this one. Checked
      // only for the prefixes the bound keeps (equal states have equal bounds, so a dropped one's
      // twin is dropped by the bound too).
      if (memo) {
        memo->Key(p.cur, p.count, p.loops.back().dim, pk, &key);
        memo->Rank(p.loops, &rank);
        if (memo->SeenSmaller(key, rank)) return;
      }
    }
    const size_t depth = p.loops.size();
    Children(layer, divs, p, opt.max_loops_per_dim, transpose_sym, &kids[depth]);
    for (size_t ci = 0; ci < kids[depth].size(); ++ci) {
      const Loop l = kids[depth][ci];
      const int64_t cur = p.cur[Idx(l.dim)];
      const Extents inner = p.cur;
      Push(&p, l);
      PackStep(layer, h, p.loops, inner, packs[depth], &packs[depth + 1]);
      Dfs(p);
      p.loops.pop_back();  // undo Push
      p.cur[Idx(l.dim)] = cur;
      --p.count[Idx(l.dim)];
    }
  }
};

}  // namespace

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> lo, hi;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      lo.push_back(i);
      if (i != n / i) hi.push_back(n / i);
    }
  lo.insert(lo.end(), hi.rbegin(), hi.rend());
  return lo;
}

double PrefixLowerBound(const Layer& layer, const Hierarchy& h, const BlockingString& prefix) {
  bool closed = false;
  return Bound(layer, h, prefix, &closed, Pack(layer, h, prefix), 1 << 20);
}

namespace {


// Bound's last term: the outermost dimensions of any completion. The outermost loop L1 (dimension
// d1) has at least the remaining trips of d1 when d1 has one loop left, else at least its smallest
// factor above 1 (the same holds for the outermost loop of any dimension). Let L2 be the
// outermost loop of another dimension d2 (only loops of d1 lie outside it). An operand t bounded by
// its compulsory traffic has its fills counted over every loop that does not index t and lies
// outside f_t, the first loop indexing t outside its outermost on-chip buffer (model.h: traffic =
// footprint at f_t x the trips from f_t out). L1 is such a loop for the operand d1 does not index.
// L2 is one for the operand u that d2 does not index when no loop outside L2 indexes u (d1 does
// not index u) or when u's footprint of everything inside L2 (every dimension but d1 and d2 full,
// d1 at least the prefix's block) exceeds u's largest on-chip level: then f_t cannot be outside L2,
// since the buffer's tile would be at least that footprint. Each counted loop multiplies the
// operand's passes over the off-chip link; the minimum over the pairs (d1, d2) bounds every
// completion. cap_bytes: by operand, its largest on-chip level.
constexpr int kOuterDims = 4;  // OutermostDimsExtra: how many outer dimensions it enumerates

using Passes = std::array<double, kNumOperands>;

// The passes vectors of OutermostDimsExtra's sequences that no other one undercuts in every operand
// (its cost only grows with each operand's passes, so its minimum is over these). They depend only
// on the layer, the operands' on-chip capacities and, per dimension, the prefix's block and whether
// two more loops may follow: a search worker keeps them by that key (OuterPassCache).
void OuterPasses(const Layer& layer, const Hierarchy& h, const Extents& end, const std::array<int, kNumDims>& count,
                 int opt_max_loops, const int64_t cap_bytes[kNumOperands], std::vector<Passes>* out) {
  out->clear();
  std::array<Dim, kNumDims> rest{};
  std::array<double, kNumDims> trips{};
  std::array<int, kNumDims> un{};  // the one operand the dimension does not index, or -1
  int r = 0;
  for (Dim d : kAllDims) {
    const int64_t rem = layer.extent(d) / end[Idx(d)];
    if (rem == 1) continue;
    int64_t t = rem;
    if (opt_max_loops - count[Idx(d)] >= 2)
      for (int64_t f = 2; f <= rem; ++f)
        if (rem % f == 0) {
          t = f;
          break;
        }
    rest[r] = d;
    trips[r] = static_cast<double>(t);
    un[r] = -1;
    int unindexed = 0;
    for (int ti = 0; ti < kNumOperands; ++ti) {
      Operand op = static_cast<Operand>(ti);
      if (op == Operand::kKernel && !layer.HasKernel()) continue;
      if (!layer.Indexes(d, op)) {
        ++unindexed;
        un[r] = ti;
      }
    }
    if (unindexed != 1) un[r] = -1;
    ++r;
  }
  auto add = [&](const Passes& p) {  // keeps the minimal vectors
    for (const Passes& q : *out)
      if (q[0] <= p[0] && q[1] <= p[1] && q[2] <= p[2]) return;
    std::erase_if(*out, [&](const Passes& q) { return p[0] <= q[0] && p[1] <= q[1] && p[2] <= q[2]; });
    out->push_back(p);
  };
  // Sequences of distinct dimensions from the outside (the first `depth` of every completion; all of
  // them when fewer remain); passes[u] multiplies the counted trips.
  const int depth = std::min(r, kOuterDims);
  std::array<int, kNumDims> seq{};
  auto rec = [&](auto&& self, int k, unsigned used, const Passes& passes) -> void {
    if (k == depth) {
      add(passes);
      return;
    }
    for (int j = 0; j < r; ++j) {
      if (used >> j & 1u) continue;
      Passes next = passes;
      const int u = un[j];
      if (u >= 0) {
        // Counted when no loop outside (the sequence so far) indexes u, or u's footprint of
        // everything inside this loop (the outer dimensions at the prefix's block) is too big.
        bool outside_indexes = false;
        Extents inside = layer.ext;
        for (int q = 0; q < k; ++q) {
          outside_indexes = outside_indexes || layer.Indexes(rest[seq[q]], static_cast<Operand>(u));
          inside[Idx(rest[seq[q]])] = end[Idx(rest[seq[q]])];
        }
        if (!outside_indexes || layer.Footprint(static_cast<Operand>(u), inside) * h.word_bytes() > cap_bytes[u])
          next[u] *= trips[j];
      }
      seq[k] = j;
      self(self, k + 1, used | 1u << j, next);
    }
  };
  rec(rec, 0, 0u, Passes{1, 1, 1});
}

// A worker's OuterPasses by (block sizes, which dimensions may take two more loops).
class OuterPassCache {
 public:
  explicit OuterPassCache(const Layer& layer) {
    int64_t slots = 1;
    for (int d = 0; d < kNumDims; ++d) {
      divs_[d] = Divisors(layer.ext[d]);
      radix_[d] = static_cast<int64_t>(divs_[d].size()) * 2;
      if (slots <= kMaxSlots) slots *= radix_[d];
    }
    if (slots <= kMaxSlots) slot_.assign(static_cast<size_t>(slots), -1);
  }
  const std::vector<Passes>& Get(const Layer& layer, const Hierarchy& h, const Extents& end,
                                 const std::array<int, kNumDims>& count, int opt_max_loops,
                                 const int64_t cap_bytes[kNumOperands]) {
    if (slot_.empty() || pool_.size() >= kMaxEntries) {  // a huge space: computed each time
      OuterPasses(layer, h, end, count, opt_max_loops, cap_bytes, &scratch_);
      return scratch_;
    }
    int64_t at = 0;
    for (int d = 0; d < kNumDims; ++d) {
      const std::vector<int64_t>& v = divs_[d];
      const int64_t i = std::lower_bound(v.begin(), v.end(), end[d]) - v.begin();
      at = at * radix_[d] + i * 2 + (opt_max_loops - count[d] >= 2 ? 1 : 0);
    }
    int32_t& s = slot_[static_cast<size_t>(at)];
    if (s < 0) {
      s = static_cast<int32_t>(pool_.size());
      pool_.emplace_back();
      OuterPasses(layer, h, end, count, opt_max_loops, cap_bytes, &pool_.back());
    }
    return pool_[static_cast<size_t>(s)];
  }

 private:
  static constexpr int64_t kMaxSlots = int64_t{1} << 23;  // 32 MB of slots per worker at most
  static constexpr size_t kMaxEntries = size_t{1} << 20;
  std::array<std::vector<int64_t>, kNumDims> divs_;
  std::array<int64_t, kNumDims> radix_{};
  std::vector<int32_t> slot_;          // by (block, two-more-loops flag) of every dimension: index into pool_
  std::deque<std::vector<Passes>> pool_;  // stable addresses
  std::vector<Passes> scratch_;
};

double OutermostDimsExtra(const Layer& layer, const Hierarchy& h, const Extents& end,
                          const std::array<int, kNumDims>& count, int opt_max_loops,
                          const double refetch_pj[kNumOperands], const double onchip_pj[kNumOperands],
                          const double backing_pj[kNumOperands], const int64_t cap_bytes[kNumOperands],
                          OuterPassCache* cache) {
  std::vector<Passes> local;
  const std::vector<Passes>* vs = &local;
  if (cache)
    vs = &cache->Get(layer, h, end, count, opt_max_loops, cap_bytes);
  else
    OuterPasses(layer, h, end, count, opt_max_loops, cap_bytes, &local);
  auto extra = [&](int t, double passes) {
    if (t < 0 || refetch_pj[t] <= 0) return 0.0;
    const double was = std::min(backing_pj[t], onchip_pj[t]);
    return std::min(backing_pj[t], onchip_pj[t] + refetch_pj[t] * (passes - 1)) - was;
  };
  double best = std::numeric_limits<double>::infinity();
  for (const Passes& p : *vs) best = std::min(best, extra(0, p[0]) + extra(1, p[1]) + extra(2, p[2]));
  return std::isfinite(best) ? best : 0.0;
}

double Bound(const Layer& layer, const Hierarchy& h, const BlockingString& prefix, bool* all_closed, const Packing& pk,
             int opt_max_loops, double cutoff, OuterPassCache* cache) {
  *all_closed = true;
  Extents end = {1, 1, 1, 1, 1, 1, 1};
  for (const Loop& l : prefix) end[Idx(l.dim)] = l.size;
  double rprod = 1;
  // (exact in doubles: the block divides the extent; no integer division on this hot path)
  for (Dim d : kAllDims) rprod *= static_cast<double>(layer.extent(d)) / static_cast<double>(end[Idx(d)]);
  const double m = static_cast<double>(layer.Macs());
  const int64_t wb = h.word_bytes();
  double lb = m * h.mac_pj;
  const int n = static_cast<int>(prefix.size());
  double dp_w[kNumOperands] = {0, 0, 0}, dp_alone = 0;
  // Per operand bounded by its compulsory traffic: energy of one more pass over the off-chip link,
  // its term with an on-chip buffer, and (no buffer yet) with the MACs reading the backing store.
  double refetch_pj[kNumOperands] = {0, 0, 0}, onchip_pj[kNumOperands] = {0, 0, 0};
  double backing_pj[kNumOperands];
  std::fill(backing_pj, backing_pj + kNumOperands, std::numeric_limits<double>::infinity());
  std::array<int, kNumDims> count{};
  for (const Loop& l : prefix) ++count[Idx(l.dim)];
  // By level: a later buffer of the operand could go there (no allocation for up to 16 levels).
  std::array<char, 16> fits_small{};
  std::vector<char> fits_large;
  if (h.levels.size() > fits_small.size()) fits_large.resize(h.levels.size());
  const std::span<char> fits = fits_large.empty() ? std::span<char>(fits_small.data(), h.levels.size())
                                                  : std::span<char>(fits_large);
  int64_t cap_bytes[kNumOperands] = {0, 0, 0};
  int dp_count = 0;
  for (int ti = 0; ti < kNumOperands; ++ti) {
    Operand t = static_cast<Operand>(ti);
    if (t == Operand::kKernel && !layer.HasKernel()) continue;
    bool out = t == Operand::kOutput;
    const std::vector<BufferUse>& ch = pk.chains[ti];
    const int k = static_cast<int>(ch.size()) - 1;  // placed buffers before the backing store
    const int back = h.Backing(t);
    double size = static_cast<double>(layer.Size(t));
    bool dense = t != Operand::kInput || (layer.stride_x == 1 && layer.stride_y == 1);
    double compulsory = out ? size * h.levels[back].write_pj : dense ? size * h.levels[back].read_pj : 0;
    // When data pass through an on-chip holder at level >= lo, the outermost one takes in every
    // word once (input, kernel) or gives every word back once (output).
    auto through = [&](int lo) {
      if (!dense) return 0.0;
      double e = std::numeric_limits<double>::infinity();
      for (int l = lo; l < back; ++l)
        if (h.levels[l].Holds(t)) e = std::min(e, out ? h.levels[l].read_pj : h.levels[l].write_pj);
      return std::isfinite(e) ? size * e : 0.0;
    };
    // Levels below the backing store where a later buffer of t could still go: any later buffer
    // holds at least the tile of the loops placed so far.
    int64_t need = layer.Footprint(t, end) * wb;
    for (char& f : fits) f = 0;
    bool none_fits = true;
    if (!pk.exhausted[ti])
      for (int l = pk.ptr[ti]; l < back; ++l) {
        if (!h.levels[l].Holds(t)) continue;
        int64_t avail = pk.free_bytes[l] + (k > 0 && ch[k - 1].level == l ? ch[k - 1].elems * wb : 0);
        fits[l] = avail >= need;
        none_fits = none_fits && !fits[l];
      }
    if (!none_fits) *all_closed = false;
    auto mac_pj = [&](int l) { return m * (h.levels[l].read_pj + (out ? h.levels[l].write_pj : 0)); };
    // Eligible for the outermost-loop bound below: t's on-chip buffers are too small for all of t.
    int64_t cap = 0;
    for (int l = 0; l < back; ++l)
      if (h.levels[l].Holds(t)) cap = std::max(cap, h.levels[l].capacity_bytes);
    cap_bytes[ti] = cap;
    const bool refetchable = dense && layer.Size(t) * wb > cap;
    const double pass_pj = size * (h.levels[back].read_pj + (out ? h.levels[back].write_pj : 0.0));
    if (k == 0) {
      double onchip = std::numeric_limits<double>::infinity();
      for (int l = 0; l < back; ++l)
        if (fits[l]) onchip = std::min(onchip, mac_pj(l) + compulsory + through(l));
      lb += std::min(mac_pj(back), onchip);
      if (refetchable) {
        refetch_pj[ti] = pass_pj;
        onchip_pj[ti] = onchip;
        backing_pj[ti] = mac_pj(back);
      }
      continue;
    }
    lb += mac_pj(ch[0].level);
    auto tiles = [&](const BufferUse& b) { return size / static_cast<double>(b.elems); };
    for (int i = 0; i + 1 < k; ++i)
      lb += StreamPj(h, t, static_cast<double>(ch[i].fills) * rprod, static_cast<double>(ch[i].elems), tiles(ch[i]),
                     ch[i].level, ch[i + 1].level);
    // The outermost placed buffer: if a later buffer may replace it in its own level, only the
    // compulsory traffic is certain; otherwise its fills come from a level above it.
    const BufferUse& last = ch[k - 1];
    if (fits[last.level]) {
      lb += compulsory + through(last.level);
      if (refetchable) {
        refetch_pj[ti] = pass_pj;
        onchip_pj[ti] = compulsory + through(last.level);
      }
      continue;
    }
    bool closed = false;
    for (int j = last.cut; j < n && !closed; ++j) closed = layer.Indexes(prefix[j].dim, t);
    double fills = static_cast<double>(last.fills) * rprod;
    if (!closed) {
      fills = 1;
      for (Dim d : kAllDims)
        if (layer.Indexes(d, t)) fills *= static_cast<double>(layer.extent(d)) / static_cast<double>(end[Idx(d)]);
    }
    double best = StreamPj(h, t, fills, static_cast<double>(last.elems), tiles(last), last.level, back);
    const bool operand_closed = none_fits;
    if (!closed && operand_closed) {  // its fills depend on the order of the remaining loops only
      dp_w[ti] = StreamPj(h, t, 1, static_cast<double>(last.elems), tiles(last), last.level, back) -
                 StreamPj(h, t, 0, static_cast<double>(last.elems), tiles(last), last.level, back);
      dp_alone += dp_w[ti] * fills;
      ++dp_count;
    }
    for (int l = last.level + 1; l < back; ++l)
      if (fits[l])
        best = std::min(best, StreamPj(h, t, fills, static_cast<double>(last.elems), tiles(last), last.level, l) +
                                  compulsory + through(l));
    lb += best;
  }
  // Operands whose last buffer is final but whose fill count waits for an indexing loop: each was
  // bounded as if its non-indexing loops came first; jointly, the best order of the remaining
  // dimensions (OrderDp, without the adjacency rule: a relaxation) bounds them together.
  if (dp_count >= 2) lb += OrderDp(layer, end, dp_w, nullptr, nullptr) - dp_alone;
  const bool any_refetch = refetch_pj[0] > 0 || refetch_pj[1] > 0 || refetch_pj[2] > 0;
  if (n > 0 && any_refetch && lb <= cutoff)
    lb += OutermostDimsExtra(layer, h, end, count, opt_max_loops, refetch_pj, onchip_pj, backing_pj, cap_bytes, cache);
  return lb;
}

}  // namespace

StatusOr<SearchResult> ExactSearch(const Layer& layer, const Hierarchy& h, const SearchOptions& opt,
                                   const BlockingString* incumbent) {
  if (opt.k_multiple > 0 || opt.min_accum_depth > 0)
    return InvalidArgument("layer '" + layer.name + "': the micro-kernel constraints (k_multiple, min_accum_depth) "
                           "are honoured by the heuristic search only; use it, or set them to 0");
  SP_RETURN_IF_ERROR(ValidateLayer(layer));
  SP_RETURN_IF_ERROR(ValidateHierarchy(h));
  SP_RETURN_IF_ERROR(CheckBackingFits(layer, h));
  auto t0 = Clock::now();
  Incumbent inc;
  if (incumbent) {
    Evaluation ev = Evaluate(layer, h, *incumbent);
    if (ev.fits) inc.Offer(*incumbent, ev);
  }
  std::atomic<bool> timed_out{false};
  std::atomic<int64_t> nodes{0}, leaves{0}, completions{0};
  auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.time_limit_s));
  Progress progress("blocking search of " + layer.name, opt.time_limit_s, "pJ");
  std::unique_ptr<PrefixMemo> memo;
  if (opt.memo_limit > 0) memo = std::make_unique<PrefixMemo>(layer, opt.memo_limit);
  PrefixMemo* const memo_ptr = memo.get();
  Prefix root;
  std::vector<Loop> first = Children(layer, root, opt.max_loops_per_dim, Transposable(layer));
  // The workers share the prefixes of two loops (one when it is complete): enough tasks to keep
  // both threads busy until the end (the subtrees under one first loop differ by 100x).
  std::vector<Prefix> tasks;
  for (const Loop& f : first) {
    Prefix p;
    Push(&p, f);
    std::vector<Loop> second = Children(layer, p, opt.max_loops_per_dim, Transposable(layer));
    if (second.empty()) tasks.push_back(p);
    for (const Loop& l : second) {
      Prefix q = p;
      Push(&q, l);
      tasks.push_back(std::move(q));
    }
  }
  nodes.fetch_add(static_cast<int64_t>(first.size()));
  std::atomic<size_t> next{0};
  auto work = [&]() {
    OuterPassCache cache(layer);
    ExactWorker w{layer, h, opt, inc, deadline, timed_out, nodes, leaves, completions, progress, memo_ptr, &cache};
    for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
      Prefix p = tasks[i];
      w.Start(p);
      w.Dfs(p);
    }
    nodes.fetch_add(w.local_nodes & 1023);
  };
  if (first.empty()) {  // a layer of one MAC: the empty string
    Prefix p;
    OuterPassCache cache(layer);
    ExactWorker w{layer, h, opt, inc, deadline, timed_out, nodes, leaves, completions, progress, memo_ptr, &cache};
    w.Start(p);
    w.Dfs(p);
  } else {
    std::vector<std::thread> pool;
    for (int i = 1; i < std::max(1, opt.threads); ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
  }
  SearchResult r;
  r.search_s = Seconds(t0);
  r.nodes = nodes.load();
  r.leaves = leaves.load();
  r.completions = completions.load();
  if (memo) {
    r.memo_hits = memo->hits();
    r.memo_states = memo->size();
  }
  if (!std::isfinite(inc.energy.load()))
    return OutOfMemory("layer '" + layer.name + "': no blocking string fits hierarchy '" + h.name + "'");
  r.found = true;
  r.best = inc.best;
  r.eval = inc.eval;
  r.proved_optimal = !timed_out.load();
  progress.Finish(inc.energy.load(), r.proved_optimal ? inc.energy.load() : -1);
  return r;
}

namespace {

// Cheapest of a few completions of `p` (each missing dimension as one full loop, in a handful of
// orders); fills `best` with it. Returns infinity when none fits. With micro-kernel constraints
// (SearchOptions) `best` is the cheapest completion that meets them (*valid false when none does)
// while the return value, which ranks the prefix, still counts every completion that fits: a
// prefix's few one-full-loop completions rarely meet a minimum accumulation depth, but its longer
// completions may.
double QuickComplete(const Layer& layer, const Hierarchy& h, const SearchOptions& opt, const Prefix& p,
                     BlockingString* best, Evaluation* ev, bool* valid) {
  *valid = false;
  double rank = std::numeric_limits<double>::infinity();
  std::vector<Dim> rest;
  for (Dim d : kAllDims)
    if (p.cur[Idx(d)] != layer.extent(d)) rest.push_back(d);
  double e = std::numeric_limits<double>::infinity();
  size_t variants = std::max<size_t>(1, rest.size());
  for (size_t v = 0; v < variants * 2; ++v) {
    std::vector<Dim> order = rest;
    if (!order.empty()) std::rotate(order.begin(), order.begin() + (v % variants), order.end());
    if (v >= variants) std::reverse(order.begin(), order.end());
    if (!order.empty() && !p.loops.empty() && p.loops.back().dim == order.front()) continue;
    BlockingString s = p.loops;
    for (Dim d : order) s.push_back({d, layer.extent(d)});
    Evaluation x = Evaluate(layer, h, s);
    if (x.fits) rank = std::min(rank, x.total_pj);
    if (x.fits && x.total_pj < e && MeetsKernelConstraints(layer, h, opt, s)) {
      e = x.total_pj;
      *best = s;
      *ev = x;
      *valid = true;
    }
  }
  return rank;
}

// A random neighbour of `p` (a size moved to a neighbouring divisor, or two adjacent loops
// exchanged) that is still a valid prefix; false when the move failed.
bool Perturb(const Layer& layer, const Prefix& p, int max_per_dim, std::mt19937_64& rng, Prefix* out) {
  if (p.loops.empty()) return false;
  BlockingString s = p.loops;
  size_t i = rng() % s.size();
  if (rng() % 2 == 0 && i + 1 < s.size()) {
    std::swap(s[i], s[i + 1]);
  } else {
    std::vector<int64_t> dv = Divisors(layer.extent(s[i].dim));
    size_t at = std::find(dv.begin(), dv.end(), s[i].size) - dv.begin();
    size_t to = (rng() % 2 == 0) ? at + 1 : (at == 0 ? at : at - 1);
    if (to >= dv.size() || to == at) return false;
    s[i].size = dv[to];
  }
  Prefix q;
  for (size_t j = 0; j < s.size(); ++j) {
    const Loop& l = s[j];
    if (l.size <= q.cur[Idx(l.dim)] || l.size % q.cur[Idx(l.dim)] != 0) return false;
    if (j > 0 && s[j - 1].dim == l.dim) return false;
    Push(&q, l);
  }
  for (Dim d : kAllDims)
    if (q.count[Idx(d)] >= max_per_dim && q.cur[Idx(d)] != layer.extent(d)) return false;
  *out = q;
  return true;
}

}  // namespace

bool MeetsKernelConstraints(const Layer& layer, const Hierarchy& h, const SearchOptions& opt, const BlockingString& s) {
  if (opt.k_multiple <= 0 && opt.min_accum_depth <= 0) return true;
  const std::vector<Extents> blocks = CutBlocks(s);  // blocks[c]: the extents of loops [0, c)
  auto fits = [&](const Extents& b) {
    int64_t words = 0;
    for (int t = 0; t < kNumOperands; ++t) words += layer.Footprint(static_cast<Operand>(t), b);
    return words * h.word_bytes() <= h.levels[0].capacity_bytes;
  };
  size_t cut = 0;
  while (cut + 1 < blocks.size() && fits(blocks[cut + 1])) ++cut;
  if (cut + 1 == blocks.size()) return true;  // the whole prefix fits: the tile is not decided yet
  const Extents& t = blocks[cut];
  const int64_t tk = t[Idx(Dim::kK)], K = layer.extent(Dim::kK);
  if (opt.k_multiple > 0 && tk % opt.k_multiple != 0 && tk != K) return false;
  const int64_t full = layer.extent(Dim::kC) * layer.extent(Dim::kFw) * layer.extent(Dim::kFh);
  const int64_t depth = t[Idx(Dim::kC)] * t[Idx(Dim::kFw)] * t[Idx(Dim::kFh)];
  return depth >= std::min(opt.min_accum_depth, full);
}

StatusOr<SearchResult> HeuristicSearch(const Layer& layer, const Hierarchy& h, const SearchOptions& opt) {
  SP_RETURN_IF_ERROR(ValidateLayer(layer));
  SP_RETURN_IF_ERROR(ValidateHierarchy(h));
  SP_RETURN_IF_ERROR(CheckBackingFits(layer, h));
  auto t0 = Clock::now();
  std::mt19937_64 rng(0x5eed);
  SearchResult r;
  double best_e = std::numeric_limits<double>::infinity();
  std::string best_text;
  auto offer = [&](const BlockingString& s, const Evaluation& ev) {
    std::string t = ToString(s);
    if (ev.total_pj < best_e || (ev.total_pj == best_e && t < best_text)) {
      best_e = ev.total_pj;
      best_text = t;
      r.best = s;
      r.eval = ev;
      r.found = true;
    }
  };
  std::vector<Prefix> beam(1);
  while (!beam.empty()) {
    struct Scored {
      double e;
      std::string text;
      Prefix p;
    };
    std::vector<Scored> next;
    std::vector<Prefix> cands;
    for (const Prefix& p : beam) {
      // The kept prefix and its random perturbations seed this step; each is extended by one loop.
      std::vector<Prefix> seeds = {p};
      for (int k = 0; k < opt.perturbations; ++k) {
        Prefix q;
        if (Perturb(layer, p, opt.max_loops_per_dim, rng, &q)) seeds.push_back(std::move(q));
      }
      for (const Prefix& sd : seeds)
        for (const Loop& l : Children(layer, sd, opt.max_loops_per_dim)) {
          Prefix q = sd;
          Push(&q, l);
          if (MeetsKernelConstraints(layer, h, opt, q.loops)) cands.push_back(std::move(q));
        }
    }
    for (Prefix& q : cands) {
      ++r.nodes;
      BlockingString s;
      Evaluation ev;
      bool valid = false;
      double e = QuickComplete(layer, h, opt, q, &s, &ev, &valid);
      r.leaves += 1;
      if (!std::isfinite(e)) continue;
      if (valid) offer(s, ev);
      if (!Complete(layer, q)) next.push_back({e, ToString(q.loops), std::move(q)});
    }
    std::sort(next.begin(), next.end(), [](const Scored& a, const Scored& b) {
      return a.e != b.e ? a.e < b.e : a.text < b.text;
    });
    next.erase(std::unique(next.begin(), next.end(), [](const Scored& a, const Scored& b) { return a.text == b.text; }),
               next.end());
    if (static_cast<int>(next.size()) > opt.beam) next.resize(opt.beam);
    beam.clear();
    for (Scored& s : next) beam.push_back(std::move(s.p));
  }
  r.search_s = Seconds(t0);
  if (!r.found) return OutOfMemory("layer '" + layer.name + "': no blocking string fits hierarchy '" + h.name + "'");
  return r;
}

}  // namespace sramplan::blocking
