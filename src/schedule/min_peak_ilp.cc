#include "schedule/min_peak_ilp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/liveness.h"
#include "milp/milp.h"

namespace sramplan::schedule {
namespace {

using Clock = std::chrono::steady_clock;

using Lp = milp::Model;

// The time-indexed model and the column indices its builders share.
struct IlpModel {
  Lp lp;
  std::vector<int> asap, alap;
  std::vector<std::vector<int>> e;    // op at step: e[o][t - asap[o]]
  std::vector<std::vector<int>> cum;  // E[o][t] = sum_{u <= t} e[o][u], for asap[o] <= t < alap[o]
  int peak = -1;
  std::vector<std::vector<int>> live;  // per arena buffer and step (-1: none; empty: not a buffer)

  int Evar(int o, int t) const { return e[o][t - asap[o]]; }
  // E[o][t] as terms + constant.
  double AddCum(int o, int t, double coef, std::vector<std::pair<int, double>>* terms) const {
    if (t < asap[o]) return 0;
    if (t >= alap[o]) return coef;
    terms->push_back({cum[o][t - asap[o]], coef});
    return 0;
  }
};

// Op dependencies (distinct producers of each op's inputs, ascending).
std::vector<std::vector<int>> OpPreds(const ir::Graph& g) {
  std::vector<std::vector<int>> preds(g.num_ops());
  for (const ir::Op& op : g.ops()) {
    for (ir::TensorId in : op.inputs) {
      const ir::Tensor& t = g.tensor(in);
      if (t.producer.valid()) preds[op.id.value()].push_back(t.producer.value());
    }
    auto& p = preds[op.id.value()];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  return preds;
}

// ASAP/ALAP windows from ancestor/descendant counts.
void OpWindows(int n, const analysis::Schedule& model, const std::vector<std::vector<int>>& preds,
               std::vector<int>* asap_out, std::vector<int>* alap_out) {
  // The op list may not be topological in general: use the model order's positions for reachability.
  std::vector<std::vector<uint64_t>> anc(n, std::vector<uint64_t>((n + 63) / 64, 0));
  for (ir::OpId id : model) {
    int o = id.value();
    for (int q : preds[o]) {
      for (size_t w = 0; w < anc[o].size(); ++w) anc[o][w] |= anc[q][w];
      anc[o][q / 64] |= uint64_t{1} << (q % 64);
    }
  }
  std::vector<int>& asap = *asap_out;
  std::vector<int>& alap = *alap_out;
  asap.assign(n, 0);
  alap.assign(n, 0);
  std::vector<int> desc(n, 0);
  for (int o = 0; o < n; ++o) {
    int c = 0;
    for (size_t w = 0; w < anc[o].size(); ++w) c += __builtin_popcountll(anc[o][w]);
    asap[o] = c;
    for (int q = 0; q < n; ++q) {
      if ((anc[o][q / 64] >> (q % 64)) & 1) ++desc[q];
    }
  }
  for (int o = 0; o < n; ++o) alap[o] = n - 1 - desc[o];
}

// Operator-at-step and cumulative variables: every op runs at one step, every step runs one op,
// and an op runs only after the ops it depends on.
void AddScheduleRows(int n, const std::vector<std::vector<int>>& preds, IlpModel* m) {
  Lp& lp = m->lp;
  const std::vector<int>& asap = m->asap;
  const std::vector<int>& alap = m->alap;
  m->e.assign(n, {});
  m->cum.assign(n, {});
  for (int o = 0; o < n; ++o) {
    for (int t = asap[o]; t <= alap[o]; ++t) m->e[o].push_back(lp.AddCol(0, 1, 0, true));
  }
  for (int o = 0; o < n; ++o) {
    std::vector<std::pair<int, double>> terms;
    for (int v : m->e[o]) terms.push_back({v, 1});
    lp.AddRow(terms, 1, 1);
    for (int t = asap[o]; t < alap[o]; ++t) {
      int v = lp.AddCol(0, 1, 0, false);
      m->cum[o].push_back(v);
      std::vector<std::pair<int, double>> def = {{v, 1}, {m->Evar(o, t), -1}};
      if (t > asap[o]) def.push_back({m->cum[o][t - 1 - asap[o]], -1});
      lp.AddRow(def, 0, 0);
    }
  }
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<int, double>> terms;
    for (int o = 0; o < n; ++o) {
      if (asap[o] <= t && t <= alap[o]) terms.push_back({m->Evar(o, t), 1});
    }
    lp.AddRow(terms, 1, 1);
  }
  for (int q = 0; q < n; ++q) {
    for (int p : preds[q]) {
      for (int t = asap[q]; t <= std::min(alap[q], alap[p]); ++t) {
        std::vector<std::pair<int, double>> terms;
        double c = m->AddCum(q, t, 1, &terms) + m->AddCum(p, t - 1, -1, &terms);
        if (!terms.empty()) lp.AddRow(terms, -milp::Model::Inf(), -c);
      }
    }
  }
}

// Liveness of the arena buffers and the peak: live[b][t] >= E[producer][t] - E[user][t-1], and
// peak >= the live bytes of every step.
void AddPeakRows(const ir::Graph& g, int n, IlpModel* m) {
  Lp& lp = m->lp;
  const std::vector<int>& asap = m->asap;
  const std::vector<int>& alap = m->alap;
  // Arena buffers: roots of non-constant tensors; users = ops reading the root or any view of it, and
  // the ops producing its views.
  const int nt = g.num_tensors();
  std::vector<int> producer(nt, -1);
  std::vector<std::vector<int>> users(nt);
  std::vector<bool> is_buffer(nt, false), to_end(nt, false);
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind == ir::TensorKind::kConstant) continue;
    ir::TensorId root = g.StorageRoot(t.id);
    if (g.tensor(root).kind == ir::TensorKind::kConstant) continue;
    int r = root.value();
    is_buffer[r] = true;
    if (root == t.id) {
      producer[r] = t.producer.valid() ? t.producer.value() : -1;
    } else if (t.producer.valid()) {
      users[r].push_back(t.producer.value());
    }
    for (ir::OpId c : t.consumers) users[r].push_back(c.value());
    if (t.kind == ir::TensorKind::kOutput) to_end[r] = true;
  }
  m->peak = lp.AddCol(0, milp::Model::Inf(), 1, false);
  std::vector<std::vector<std::pair<int, double>>> step_terms(n);
  std::vector<double> step_const(n, 0);
  m->live.assign(nt, {});
  for (int b = 0; b < nt; ++b) {
    if (!is_buffer[b]) continue;
    const double bytes = static_cast<double>(g.tensor(ir::TensorId(b)).Bytes());
    auto& u = users[b];
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    int p = producer[b];
    int lo = p < 0 ? 0 : asap[p];
    int hi = to_end[b] ? n - 1 : (p < 0 ? 0 : alap[p]);
    for (int c : u) hi = std::max(hi, alap[c]);
    m->live[b].assign(n, -1);
    for (int t = lo; t <= hi; ++t) {
      int v = lp.AddCol(0, 1, 0, false);
      m->live[b][t] = v;
      step_terms[t].push_back({v, -bytes});
      // Produced by t (E[p][t]) and a user not before t (1 - E[c][t-1]).
      std::vector<std::pair<int, double>> produced;
      double pc = p < 0 ? 1 : m->AddCum(p, t, -1, &produced);  // -E[p][t] as terms, constant in pc
      if (p < 0) pc = -1;
      if (to_end[b] || u.empty()) {
        std::vector<std::pair<int, double>> terms = {{v, 1}};
        terms.insert(terms.end(), produced.begin(), produced.end());
        if (!to_end[b] && p >= 0) {
          // No users: live only at the producing step: live >= e[p][t].
          terms = {{v, 1}, {m->Evar(p, t), -1}};
          if (t >= asap[p] && t <= alap[p]) lp.AddRow(terms, 0, milp::Model::Inf());
          continue;
        }
        lp.AddRow(terms, -pc, milp::Model::Inf());
      }
      for (int c : u) {
        std::vector<std::pair<int, double>> terms = {{v, 1}};
        terms.insert(terms.end(), produced.begin(), produced.end());
        double cc = m->AddCum(c, t - 1, 1, &terms);  // + E[c][t-1]
        lp.AddRow(terms, -(pc + cc), milp::Model::Inf());
      }
    }
  }
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<int, double>> terms = step_terms[t];
    terms.push_back({m->peak, 1});
    lp.AddRow(terms, step_const[t], milp::Model::Inf());
  }
}

// The model order as a solution of the model (CBC's first incumbent).
std::vector<double> ModelOrderStart(const ir::Graph& g, const analysis::Schedule& model, int64_t model_peak,
                                    const IlpModel& m) {
  const int n = g.num_ops();
  std::vector<double> start(m.lp.num_cols(), 0);
  std::vector<int> step_of(n);
  for (int i = 0; i < n; ++i) step_of[model[i].value()] = i;
  for (int o = 0; o < n; ++o) {
    start[m.Evar(o, step_of[o])] = 1;
    for (int t = m.asap[o]; t < m.alap[o]; ++t) start[m.cum[o][t - m.asap[o]]] = step_of[o] <= t ? 1 : 0;
  }
  analysis::Liveness lv = analysis::ComputeLiveness(g, model);
  for (const analysis::LiveTensor& b : lv.buffers) {
    for (int t = b.first_step; t <= b.last_step; ++t) {
      int v = m.live[b.tensor.value()].empty() ? -1 : m.live[b.tensor.value()][t];
      if (v >= 0) start[v] = 1;
    }
  }
  start[m.peak] = static_cast<double>(model_peak);
  return start;
}

// The order of a solution `x` of the model, when it is a valid schedule of `g`.
std::optional<analysis::Schedule> ReadOrder(const ir::Graph& g, const IlpModel& m, const double* x) {
  const int n = g.num_ops();
  analysis::Schedule order(n);
  std::vector<bool> filled(n, false);
  bool ok = true;
  for (int o = 0; o < n && ok; ++o) {
    for (int t = m.asap[o]; t <= m.alap[o]; ++t) {
      if (x[m.Evar(o, t)] > 0.5) {
        if (filled[t]) ok = false;
        filled[t] = true;
        order[t] = ir::OpId(o);
      }
    }
  }
  for (bool f : filled) ok &= f;
  if (ok && analysis::ValidateSchedule(g, order).ok()) return order;
  return std::nullopt;
}

}  // namespace

MinPeakResult MinPeakIlp(const ir::Graph& g, double time_limit_s) {
  Clock::time_point t0 = Clock::now();
  MinPeakResult res;
  res.method = "ilp";
  const int n = g.num_ops();
  analysis::Schedule model = analysis::ModelOrder(g);
  res.model_order_peak = PeakOfOrder(g, model);
  res.order = model;
  res.peak_bytes = res.model_order_peak;
  if (n == 0) {
    res.proved_optimal = true;
    res.lower_bound = res.peak_bytes;
    return res;
  }
  const std::vector<std::vector<int>> preds = OpPreds(g);
  IlpModel m;
  OpWindows(n, model, preds, &m.asap, &m.alap);
  AddScheduleRows(n, preds, &m);
  AddPeakRows(g, n, &m);

  // Solve, with the model order as the first incumbent.
  std::vector<double> start = ModelOrderStart(g, model, res.model_order_peak, m);
  milp::SolveOptions so;
  so.time_limit_s = time_limit_s - std::chrono::duration<double>(Clock::now() - t0).count();
  so.start = &start;
  so.allowable_gap = 0.99;  // peaks are integral
  so.progress_what = "min-peak ILP (CBC)";
  so.progress_unit = "B";
  milp::Result r = m.lp.Solve(so);
  const double* x = r.has_solution ? r.x.data() : nullptr;
  if (x != nullptr) {
    if (std::optional<analysis::Schedule> order = ReadOrder(g, m, x)) {
      int64_t p = PeakOfOrder(g, *order);
      if (p < res.peak_bytes) {
        res.peak_bytes = p;
        res.order = *order;
      }
    }
  }
  double bound = r.optimal ? static_cast<double>(res.peak_bytes) : r.bound;
  if (!std::isfinite(bound)) bound = 0;
  res.lower_bound = std::min(res.peak_bytes, static_cast<int64_t>(std::ceil(bound - 1e-6)));
  res.proved_optimal = r.optimal && res.lower_bound >= res.peak_bytes;
  if (r.optimal) res.lower_bound = res.peak_bytes;
  res.states = r.nodes;
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace sramplan::schedule
