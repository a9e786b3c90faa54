// COSMA's joint scheduling ILP (Eq. 1-12 without addresses): operator-at-step variables inside
// ASAP/ALAP windows, resident/reload/spill variables per tensor and step, byte capacity per step. Its
// bound holds for every order and placement. See cosma.h for the method.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "spill/cosma_internal.h"

namespace sramplan::spill::cosma_internal {

// ASAP/ALAP step of every op from ancestor/descendant counts (the op list is topological); returns
// the number of op-step pairs inside the windows (the size of the time-indexed model).
int64_t OpWindows(const SpillProblem& p, const Structure& s, std::vector<int>* asap_out,
                  std::vector<int>* alap_out) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<std::vector<uint64_t>> anc(n, std::vector<uint64_t>((n + 63) / 64, 0));
  for (int o = 0; o < n; ++o) {
    for (int q : s.preds[o]) {
      for (size_t w = 0; w < anc[o].size(); ++w) anc[o][w] |= anc[q][w];
      anc[o][q / 64] |= uint64_t{1} << (q % 64);
    }
  }
  std::vector<int>& asap = *asap_out;
  std::vector<int>& alap = *alap_out;
  asap.assign(n, 0);
  alap.assign(n, n - 1);
  std::vector<int> desc(n, 0);
  for (int o = 0; o < n; ++o) {
    int c = 0;
    for (uint64_t w : anc[o]) c += __builtin_popcountll(w);
    asap[o] = c;
    for (int q = 0; q < o; ++q) {
      if (anc[o][q / 64] >> (q % 64) & 1) ++desc[q];
    }
  }
  int64_t op_steps = 0;
  for (int o = 0; o < n; ++o) {
    alap[o] = n - 1 - desc[o];
    op_steps += alap[o] - asap[o] + 1;
  }
  return op_steps;
}

namespace {

// The time-indexed model and the column indices its builders share.
struct JointModel {
  Mip mip;
  std::vector<int> asap, alap;
  std::vector<std::vector<int>> e;    // op at step: e[o][t - asap[o]]
  std::vector<std::vector<int>> cum;  // E[o][t] = sum_{u <= t} e[o][u], for asap[o] <= t < alap[o]
  // Per tensor: the steps [lo, hi] it can be resident in, resident and reload variables per step
  // (-1: no reload possible), and its spill variable (-1: none).
  std::vector<int> lo, hi;
  std::vector<std::vector<int>> rv, lv;
  std::vector<int> sp;
  double constant = 0;  // units of the objective not in the model (preloaded tensors' first loads)

  int Evar(int o, int t) const { return (t < asap[o] || t > alap[o]) ? -1 : e[o][t - asap[o]]; }
  // A term list plus a constant for E[o][t].
  double AddCum(int o, int t, double coef, std::vector<std::pair<int, double>>* terms) const {
    if (t < asap[o]) return 0;
    if (t >= alap[o]) return coef;
    terms->push_back({cum[o][t - asap[o]], coef});
    return 0;
  }
};

// Operator-at-step variables: every op runs at one step, every step runs one op, and an op runs
// only after the ops it depends on.
void AddScheduleRows(const Structure& s, int n, JointModel* m) {
  Mip& mip = m->mip;
  const std::vector<int>& asap = m->asap;
  const std::vector<int>& alap = m->alap;
  m->e.assign(n, {});
  for (int o = 0; o < n; ++o) {
    for (int t = asap[o]; t <= alap[o]; ++t) m->e[o].push_back(mip.AddCol(0, 1, 0, true));
  }
  for (int o = 0; o < n; ++o) {
    std::vector<std::pair<int, double>> terms;
    for (int v : m->e[o]) terms.push_back({v, 1});
    mip.AddRow(terms, 1, 1);
  }
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<int, double>> terms;
    for (int o = 0; o < n; ++o) {
      int v = m->Evar(o, t);
      if (v >= 0) terms.push_back({v, 1});
    }
    mip.AddRow(terms, 1, 1);
  }
  // Cumulative E[o][t] = sum_{u <= t} e[o][u] (continuous; 0 before asap, 1 from alap on).
  m->cum.assign(n, {});
  for (int o = 0; o < n; ++o) {
    for (int t = asap[o]; t < alap[o]; ++t) {
      int v = mip.AddCol(0, 1, 0, false);
      m->cum[o].push_back(v);
      std::vector<std::pair<int, double>> terms = {{v, 1}, {m->Evar(o, t), -1}};
      if (t > asap[o]) terms.push_back({m->cum[o][t - 1 - asap[o]], -1});
      mip.AddRow(terms, 0, 0);
    }
  }
  // Precedence: by step t, q may have run only if p ran before t.
  for (int q = 0; q < n; ++q) {
    for (int pr : s.preds[q]) {
      for (int t = asap[q]; t <= std::min(alap[q], alap[pr]); ++t) {
        std::vector<std::pair<int, double>> terms;
        double c = m->AddCum(q, t, 1, &terms) + m->AddCum(pr, t - 1, -1, &terms);
        if (!terms.empty()) mip.AddRow(terms, -Mip::Inf(), -c);
      }
    }
  }
}

// Resident, reload and spill variables of every tensor: resident only once produced or loaded, and
// resident while an op that reads or writes it runs. Returns the resident terms of every step (sizes
// in units), for the capacity rows.
std::vector<std::vector<std::pair<int, double>>> AddTensorRows(const SpillProblem& p, const Structure& s,
                                                                int64_t unit, JointModel* m) {
  Mip& mip = m->mip;
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  const std::vector<int>& asap = m->asap;
  const std::vector<int>& alap = m->alap;
  std::vector<int>& lo = m->lo;
  std::vector<int>& hi = m->hi;
  lo.assign(nt, 0);
  hi.assign(nt, -1);
  m->rv.assign(nt, {});
  m->lv.assign(nt, {});
  m->sp.assign(nt, -1);
  std::vector<std::vector<std::pair<int, double>>> cap_terms(n);
  for (int a = 0; a < nt; ++a) {
    const SpillTensor& ta = p.tensors[a];
    double sz = static_cast<double>(ta.bytes / unit);
    int prod = s.producer[a];
    if (prod < 0 && s.consumers[a].empty()) continue;
    if (prod >= 0) {
      lo[a] = asap[prod];
      hi[a] = alap[prod];
    } else {
      lo[a] = n;
      hi[a] = -1;
      for (int c : s.consumers[a]) lo[a] = std::min(lo[a], asap[c]);
    }
    for (int c : s.consumers[a]) hi[a] = std::max(hi[a], alap[c]);
    bool plain = prod >= 0 && !ta.graph_output;
    bool reloadable = !s.consumers[a].empty() || prod < 0;
    std::vector<int>& rv = m->rv[a];
    std::vector<int>& lv = m->lv[a];
    int& sp = m->sp[a];
    if (plain && !s.consumers[a].empty() && sz > 0) sp = mip.AddCol(0, 1, sz, true);
    if (prod < 0) m->constant -= sz;
    for (int t = lo[a]; t <= hi[a]; ++t) {
      rv.push_back(mip.AddCol(0, 1, 0, true));
      bool can_load = reloadable && (prod < 0 || t > lo[a]) && (prod < 0 || sp >= 0 || ta.graph_output);
      lv.push_back(can_load ? mip.AddCol(0, 1, sz, true) : -1);
    }
    for (int t = lo[a]; t <= hi[a]; ++t) {
      int k = t - lo[a];
      std::vector<std::pair<int, double>> terms = {{rv[k], 1}};
      if (k > 0) terms.push_back({rv[k - 1], -1});
      if (prod >= 0 && m->Evar(prod, t) >= 0) terms.push_back({m->Evar(prod, t), -1});
      if (lv[k] >= 0) terms.push_back({lv[k], -1});
      mip.AddRow(terms, -Mip::Inf(), 0);
      if (lv[k] >= 0 && sp >= 0) mip.AddRow({{lv[k], 1}, {sp, -1}}, -Mip::Inf(), 0);
      std::vector<int> users = s.consumers[a];
      if (prod >= 0) users.push_back(prod);
      for (int u : users) {
        int v = m->Evar(u, t);
        if (v >= 0) mip.AddRow({{rv[k], 1}, {v, -1}}, 0, Mip::Inf());
      }
      if (sz > 0) cap_terms[t].push_back({rv[k], sz});
    }
  }
  return cap_terms;
}

// Liveness: once the producer ran and while a consumer has not, the tensor is resident or will be
// reloaded later: r[a][t] + F[a][t] >= E[p][t] - E[c][t], F[a][t] = sum of reloads after t.
void AddLivenessRows(const SpillProblem& p, const Structure& s, JointModel* m) {
  Mip& mip = m->mip;
  const int nt = static_cast<int>(p.tensors.size());
  const std::vector<int>& lo = m->lo;
  const std::vector<int>& hi = m->hi;
  for (int a = 0; a < nt; ++a) {
    int prod = s.producer[a];
    if (prod < 0 || hi[a] < lo[a] || s.consumers[a].empty()) continue;
    std::vector<int> fv(hi[a] - lo[a] + 1, -1);
    for (int t = hi[a] - 1; t >= lo[a]; --t) {
      int k = t - lo[a];
      int next_l = m->lv[a][k + 1];
      int next_f = fv[k + 1];
      if (next_l < 0 && next_f < 0) continue;
      fv[k] = mip.AddCol(0, Mip::Inf(), 0, false);
      std::vector<std::pair<int, double>> terms = {{fv[k], 1}};
      if (next_l >= 0) terms.push_back({next_l, -1});
      if (next_f >= 0) terms.push_back({next_f, -1});
      mip.AddRow(terms, 0, 0);
    }
    for (int c : s.consumers[a]) {
      for (int t = m->asap[prod]; t < m->alap[c]; ++t) {
        if (t < lo[a] || t > hi[a]) continue;
        int k = t - lo[a];
        std::vector<std::pair<int, double>> terms = {{m->rv[a][k], 1}};
        if (fv[k] >= 0) terms.push_back({fv[k], 1});
        double c0 = m->AddCum(prod, t, -1, &terms) + m->AddCum(c, t, 1, &terms);
        mip.AddRow(terms, -c0, Mip::Inf());
      }
    }
  }
}

// Warm start from a full solution; false when it does not map onto the model's variables.
bool JointWarmStart(const SpillProblem& p, const Structure& s, const SpillSolution& warm, const JointModel& m,
                    std::vector<double>* start_out) {
  const int n = static_cast<int>(p.ops.size());
  const int nt = static_cast<int>(p.tensors.size());
  std::vector<double>& start = *start_out;
  bool have_start = true;
  start.assign(m.mip.num_cols(), 0);
  std::vector<int> step_of(n);
  for (int i = 0; i < n; ++i) step_of[warm.order[i]] = i;
  for (int o = 0; o < n; ++o) {
    int v = m.Evar(o, step_of[o]);
    if (v < 0) {
      have_start = false;
      break;
    }
    start[v] = 1;
  }
  std::vector<bool> spilled(nt, false);
  for (const Move& mv : warm.moves) {
    if (mv.kind == MoveKind::kSpill) spilled[mv.tensor] = true;
  }
  for (const Residency& r : warm.residencies) {
    if (!have_start) break;
    int a = r.tensor;
    if (m.hi[a] < m.lo[a]) continue;
    int first = std::max(r.first_step, m.lo[a]), last = std::min(r.last_step, m.hi[a]);
    for (int t = first; t <= last; ++t) start[m.rv[a][t - m.lo[a]]] = 1;
    if (first > last) continue;
    bool produced = s.producer[a] >= 0 && step_of[s.producer[a]] == first;
    if (!produced) {
      int v = m.lv[a][first - m.lo[a]];
      if (v < 0) {
        have_start = false;
        break;
      }
      start[v] = 1;
    }
  }
  for (int a = 0; a < nt && have_start; ++a) {
    if (m.sp[a] >= 0) {
      bool any = false;
      for (int v : m.lv[a]) any |= (v >= 0 && start[v] > 0.5);
      start[m.sp[a]] = any ? 1 : 0;
    }
  }
  return have_start;
}

// The order of a solution of the model, when it is a valid order of the problem.
std::optional<std::vector<int>> ReadJointOrder(const SpillProblem& p, const JointModel& m, const milp::Result& r) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<int> order(n, -1);
  bool ok = true;
  for (int o = 0; o < n && ok; ++o) {
    for (int t = m.asap[o]; t <= m.alap[o]; ++t) {
      if (r.x[m.Evar(o, t)] > 0.5) {
        if (order[t] >= 0) ok = false;
        order[t] = o;
      }
    }
  }
  for (int v : order) ok &= v >= 0;
  if (ok && ValidateSpillOrder(p, order).ok()) return order;
  return std::nullopt;
}

}  // namespace

JointResult SolveJointRelaxation(const SpillProblem& p, const Structure& s, const SpillSolution* warm,
                                 double time_limit_s, bool verbose) {
  Clock::time_point t0 = Clock::now();
  JointResult jr;
  const int64_t unit = std::max<int64_t>(1, p.alignment);
  const double cap = static_cast<double>(p.budget / unit);
  const int n = static_cast<int>(p.ops.size());
  JointModel m;
  // Size guard: the time-indexed model grows with the ASAP/ALAP windows (wide on graphs with long
  // parallel branches); past this CBC's root LP alone takes longer than the fixed-order path.
  {
    int64_t op_steps = OpWindows(p, s, &m.asap, &m.alap);
    if (op_steps > kMaxJointOpSteps) {
      jr.skipped = "joint ILP skipped: " + std::to_string(op_steps) + " op-step pairs (limit " +
                   std::to_string(kMaxJointOpSteps) + ")";
      return jr;
    }
  }

  AddScheduleRows(s, n, &m);
  std::vector<std::vector<std::pair<int, double>>> cap_terms = AddTensorRows(p, s, unit, &m);
  AddLivenessRows(p, s, &m);
  for (int t = 0; t < n; ++t) {
    double total = 0;
    for (const auto& [v, c] : cap_terms[t]) total += c;
    if (total > cap) m.mip.AddRow(cap_terms[t], -Mip::Inf(), cap);
  }

  std::vector<double> start;
  bool have_start = warm != nullptr && JointWarmStart(p, s, *warm, m, &start);

  jr.vars = m.mip.num_cols();
  jr.rows = m.mip.num_rows();
  milp::Result r = RunMip(m.mip, time_limit_s - SecondsSince(t0), have_start ? &start : nullptr, verbose);
  jr.hit_limit = r.hit_limit;
  double bound_units = r.bound + m.constant;
  jr.lower_bound = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(bound_units - 1e-6))) * unit;
  jr.optimal = r.optimal;
  if (r.has_solution) {
    if (std::optional<std::vector<int>> order = ReadJointOrder(p, m, r)) {
      jr.has_order = true;
      jr.order = std::move(*order);
    }
  }
  jr.seconds = SecondsSince(t0);
  return jr;
}


}  // namespace sramplan::spill::cosma_internal
