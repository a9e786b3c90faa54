#include "spill/spill_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "milp/milp.h"
#include "spill/cosma.h"

namespace sramplan::spill {
namespace {

using Clock = std::chrono::steady_clock;

// Ancestor sets of the data-dependence DAG as bit rows (the op list is topological).
class Reach {
 public:
  explicit Reach(const SpillProblem& p) : n_(static_cast<int>(p.ops.size())), words_((n_ + 63) / 64) {
    bits_.assign(static_cast<size_t>(n_) * words_, 0);
    std::vector<int> producer(p.tensors.size(), -1);
    for (int o = 0; o < n_; ++o)
      for (int t : p.ops[o].outputs) producer[t] = o;
    for (int o = 0; o < n_; ++o) {
      uint64_t* row = Row(o);
      for (int t : p.ops[o].inputs) {
        const int q = producer[t];
        if (q < 0) continue;
        const uint64_t* src = Row(q);
        for (int w = 0; w < words_; ++w) row[w] |= src[w];
        row[q / 64] |= uint64_t{1} << (q % 64);
      }
    }
  }
  // a is a strict ancestor of b.
  bool Anc(int a, int b) const { return (Row(b)[a / 64] >> (a % 64)) & 1; }

 private:
  uint64_t* Row(int o) { return bits_.data() + static_cast<size_t>(o) * words_; }
  const uint64_t* Row(int o) const { return bits_.data() + static_cast<size_t>(o) * words_; }
  int n_, words_;
  std::vector<uint64_t> bits_;
};

bool PlainActivation(const SpillTensor& t) { return !t.graph_input && !t.weight && !t.graph_output; }

// One tensor's accesses and the chain of them that defines its gaps.
struct TensorLife {
  std::vector<int> accesses;  // ascending op index (a topological order)
  std::vector<int> chain;     // a longest chain of accesses under the ancestor relation
};

TensorLife LifeOf(const SpillProblem& p, const Reach& r, int t, int producer,
                  const std::vector<std::vector<int>>& consumers) {
  TensorLife life;
  if (producer >= 0) life.accesses.push_back(producer);
  for (int c : consumers[t]) life.accesses.push_back(c);
  std::sort(life.accesses.begin(), life.accesses.end());
  life.accesses.erase(std::unique(life.accesses.begin(), life.accesses.end()), life.accesses.end());
  const int k = static_cast<int>(life.accesses.size());
  std::vector<int> len(k, 1), prev(k, -1);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < i; ++j) {
      if (r.Anc(life.accesses[j], life.accesses[i]) && len[j] + 1 > len[i]) {
        len[i] = len[j] + 1;
        prev[i] = j;
      }
    }
  }
  int best = 0;
  for (int i = 1; i < k; ++i)
    if (len[i] > len[best]) best = i;
  for (int i = k > 0 ? best : -1; i >= 0; i = prev[i]) life.chain.push_back(life.accesses[i]);
  std::reverse(life.chain.begin(), life.chain.end());
  (void)p;
  return life;
}

// A necessarily-live tensor at an op and which drop variable frees it there.
struct LiveEntry {
  int tensor = 0;
  int gap = -1;  // index into the tensor's chain gaps, -1: in no gap of the chain
};

struct OpRow {
  int op = 0;
  int64_t excess = 0;  // E_o
  std::vector<LiveEntry> live;
};

double Fractional(const SpillProblem& p, const OpRow& row) {
  int64_t cheap = 0;  // reload-only bytes
  for (const LiveEntry& e : row.live)
    if (!PlainActivation(p.tensors[e.tensor])) cheap += p.tensors[e.tensor].bytes;
  if (cheap >= row.excess) return static_cast<double>(row.excess);
  return static_cast<double>(cheap) + 2.0 * static_cast<double>(row.excess - cheap);
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

}  // namespace

double GapPercent(int64_t bytes, int64_t bound) {
  if (bytes <= 0) return 0;
  return 100.0 * static_cast<double>(bytes - std::min(bytes, bound)) / static_cast<double>(bytes);
}

StatusOr<SpillBound> LowerBoundAllOrders(const SpillProblem& p, const SpillBoundOptions& o) {
  const Clock::time_point t0 = Clock::now();
  SP_RETURN_IF_ERROR(ValidateSpillProblem(p));
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::vector<int> producer(nt, -1);
  std::vector<std::vector<int>> consumers(nt);
  for (int op = 0; op < n; ++op) {
    for (int t : p.ops[op].outputs) producer[t] = op;
    for (int t : p.ops[op].inputs) consumers[t].push_back(op);
  }
  Reach reach(p);
  std::vector<TensorLife> life(nt);
  for (int t = 0; t < nt; ++t) life[t] = LifeOf(p, reach, t, producer[t], consumers);

  // Necessarily-live tensors of every op; rows for the ops that are forced to drop some.
  std::vector<OpRow> rows;
  {
    std::vector<std::vector<LiveEntry>> live(n);
    for (int t = 0; t < nt; ++t) {
      const auto& acc = life[t].accesses;
      if (acc.size() < 2) continue;
      const auto& ch = life[t].chain;
      for (int op = acc.front() + 1; op < acc.back(); ++op) {
        if (std::binary_search(acc.begin(), acc.end(), op)) continue;
        bool before = false, after = false;
        for (int a : acc) {
          if (a < op && !before) before = reach.Anc(a, op);
          if (a > op && !after) after = reach.Anc(op, a);
        }
        if (!before || !after) continue;
        LiveEntry e{t, -1};
        for (size_t j = 0; j + 1 < ch.size(); ++j) {
          if (ch[j] < op && ch[j + 1] > op && reach.Anc(ch[j], op) && reach.Anc(op, ch[j + 1])) {
            e.gap = static_cast<int>(j);
            break;
          }
        }
        live[op].push_back(e);
      }
    }
    for (int op = 0; op < n; ++op) {
      int64_t w = 0;
      for (int t : p.ops[op].inputs) w += p.tensors[t].bytes;
      for (int t : p.ops[op].outputs) w += p.tensors[t].bytes;
      int64_t sum = w;
      for (const LiveEntry& e : live[op]) sum += p.tensors[e.tensor].bytes;
      if (sum > p.budget) rows.push_back(OpRow{op, sum - p.budget, std::move(live[op])});
    }
  }
  SpillBound b;
  b.forced_ops = static_cast<int>(rows.size());
  int worst_op = -1;
  for (const OpRow& row : rows) {
    const int64_t f = static_cast<int64_t>(std::ceil(Fractional(p, row) - 1e-9));
    if (f > b.working_set_bytes) {
      b.working_set_bytes = f;
      worst_op = row.op;
    }
  }
  b.detail = std::to_string(rows.size()) + " of " + std::to_string(n) + " ops forced to drop live tensors; working-set bound " +
             std::to_string(b.working_set_bytes) + " B" +
             (worst_op >= 0 ? " (op '" + p.ops[worst_op].name + "')" : "");

  if (o.use_ilp && !rows.empty()) {
    // Units: the gcd of the tensors' bytes (every left-hand side is a multiple of it).
    int64_t g = 0;
    for (const SpillTensor& t : p.tensors) g = std::gcd(g, t.bytes);
    g = std::max<int64_t>(g, 1);
    milp::Model mip;
    std::vector<std::vector<int>> gap_var(nt);
    std::vector<int> out_var(nt, -1), spill_var(nt, -1), reload_var(nt, -1);
    auto unit = [&](int t) { return static_cast<double>(p.tensors[t].bytes / g); };
    auto drop_var = [&](const LiveEntry& e) {
      const int t = e.tensor;
      if (reload_var[t] < 0) {
        reload_var[t] = mip.AddCol(0, milp::Model::Inf(), unit(t), false);
        if (PlainActivation(p.tensors[t])) spill_var[t] = mip.AddCol(0, 1, unit(t), false);
        gap_var[t].assign(life[t].chain.empty() ? 0 : life[t].chain.size() - 1, -1);
      }
      int& v = e.gap >= 0 ? gap_var[t][e.gap] : out_var[t];
      if (v < 0) {
        v = mip.AddCol(0, 1, 0, true);
        if (spill_var[t] >= 0) mip.AddRow({{spill_var[t], 1}, {v, -1}}, 0, milp::Model::Inf());
      }
      return v;
    };
    for (const OpRow& row : rows) {
      std::vector<std::pair<int, double>> terms;
      for (const LiveEntry& e : row.live) terms.push_back({drop_var(e), unit(e.tensor)});
      const double rhs = std::ceil(static_cast<double>(row.excess) / static_cast<double>(g) - 1e-9);
      mip.AddRow(terms, rhs, milp::Model::Inf());
    }
    for (int t = 0; t < nt; ++t) {
      if (reload_var[t] < 0) continue;
      std::vector<std::pair<int, double>> sum = {{reload_var[t], 1}};
      for (int v : gap_var[t])
        if (v >= 0) sum.push_back({v, -1});
      mip.AddRow(sum, 0, milp::Model::Inf());
      if (out_var[t] >= 0) mip.AddRow({{reload_var[t], 1}, {out_var[t], -1}}, 0, milp::Model::Inf());
    }
    milp::SolveOptions so;
    so.time_limit_s = std::max(0.05, o.time_limit_s - std::chrono::duration<double>(Clock::now() - t0).count());
    so.verbose = o.verbose;
    milp::Result r = mip.Solve(so);
    b.ilp_run = true;
    b.vars = mip.num_cols();
    b.rows = mip.num_rows();
    b.ilp_optimal = r.optimal;
    b.ilp_hit_limit = r.hit_limit && !r.optimal;
    const double units = r.optimal ? r.objective : r.bound;
    b.ilp_bytes = static_cast<int64_t>(std::max(0.0, std::ceil(units - 1e-6))) * g;
    b.detail += "; cover ILP " + std::to_string(b.vars) + " vars, " + std::to_string(b.rows) + " rows: " +
                (r.optimal ? "optimal " : b.ilp_hit_limit ? "time limit, bound " : "bound ") +
                std::to_string(b.ilp_bytes) + " B";
  }
  b.bytes = std::max(b.working_set_bytes, b.ilp_bytes);
  b.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  b.detail += Fmt(", %.3f s", b.seconds);
  return b;
}

}  // namespace sramplan::spill
