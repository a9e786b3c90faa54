// Budget strategies: tensor replacement (spill to DRAM and reload) inside an on-chip budget.
// The graph becomes a spill::SpillProblem (one problem tensor per arena buffer of the liveness model,
// plus the weights when they compete for the budget), a solver fills in residencies and moves, and
// the solution becomes a plan with on-chip buffers, DRAM buffers and transfers.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "driver/strategy.h"
#include "schedule/min_peak.h"
#ifndef SRAMPLAN_WITH_COSMA
#define SRAMPLAN_WITH_COSMA 1
#endif
#if SRAMPLAN_WITH_COSMA
#include "spill/cosma.h"
#include "spill/divide_conquer.h"
#endif
#include "spill/spill.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::driver {
namespace {

struct BudgetModel {
  spill::SpillProblem problem;
  std::vector<ir::TensorId> owner;  // problem tensor -> the IR tensor that owns the bytes
};

BudgetModel BuildProblem(const ir::Graph& g, int64_t alignment, bool with_weights) {
  BudgetModel m;
  const analysis::Liveness lv = analysis::ComputeLiveness(g, analysis::ModelOrder(g));
  std::vector<int> index(g.num_tensors(), -1);
  for (size_t b = 0; b < lv.buffers.size(); ++b) {
    const ir::Tensor& t = g.tensor(lv.buffers[b].tensor);
    spill::SpillTensor st;
    st.name = t.name;
    st.bytes = AlignUp(lv.buffers[b].bytes, alignment);
    st.graph_input = t.kind == ir::TensorKind::kInput;
    index[t.id.value()] = static_cast<int>(m.problem.tensors.size());
    m.problem.tensors.push_back(st);
    m.owner.push_back(t.id);
  }
  // Graph outputs (possibly views of an arena buffer) must reach DRAM.
  for (const ir::Tensor& t : g.tensors())
    if (t.kind == ir::TensorKind::kOutput && lv.buffer_of_tensor[t.id.value()] >= 0)
      m.problem.tensors[index[lv.buffers[lv.buffer_of_tensor[t.id.value()]].tensor.value()]].graph_output = true;
  if (with_weights)
    for (const ir::Tensor& t : g.tensors())
      if (t.kind == ir::TensorKind::kConstant && !t.consumers.empty() && lv.buffer_of_tensor[t.id.value()] < 0) {
        spill::SpillTensor st;
        st.name = t.name;
        st.bytes = AlignUp(t.Bytes(), alignment);
        st.weight = true;
        index[t.id.value()] = static_cast<int>(m.problem.tensors.size());
        m.problem.tensors.push_back(st);
        m.owner.push_back(t.id);
      }
  auto problem_tensor = [&](ir::TensorId id) {
    int b = lv.buffer_of_tensor[id.value()];
    if (b >= 0) return index[lv.buffers[b].tensor.value()];
    return index[id.value()];  // a weight (with_weights) or -1
  };
  for (const ir::Op& op : g.ops()) {
    spill::SpillOp so;
    so.name = op.name;
    for (ir::TensorId in : op.inputs) {
      int t = problem_tensor(in);
      if (t >= 0 && std::find(so.inputs.begin(), so.inputs.end(), t) == so.inputs.end()) so.inputs.push_back(t);
    }
    for (ir::TensorId out : op.outputs) {
      int b = lv.buffer_of_tensor[out.value()];
      if (b >= 0 && lv.buffers[b].tensor == out) so.outputs.push_back(index[out.value()]);
    }
    m.problem.ops.push_back(std::move(so));
  }
  m.problem.alignment = alignment;
  return m;
}

// Peak bytes of running `order` when tensors live from production (inputs and weights: first use)
// to last use (graph outputs: at least their production step): the footprint the spill model needs
// without any transfer beyond the compulsory ones.
int64_t SpillModelPeak(const spill::SpillProblem& p, const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  std::vector<int> first(p.tensors.size(), n), last(p.tensors.size(), -1);
  for (int s = 0; s < n; ++s) {
    const spill::SpillOp& op = p.ops[order[s]];
    for (int t : op.inputs) {
      first[t] = std::min(first[t], s);
      last[t] = std::max(last[t], s);
    }
    for (int t : op.outputs) {
      first[t] = std::min(first[t], s);
      last[t] = std::max(last[t], s);
    }
  }
  std::vector<int64_t> live(std::max(n, 1), 0);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    for (int s = first[t]; s <= last[t]; ++s) live[s] += p.tensors[t].bytes;
  return *std::max_element(live.begin(), live.end());
}

std::vector<int> ToIndices(const analysis::Schedule& sched) {
  std::vector<int> order;
  for (ir::OpId id : sched) order.push_back(id.value());
  return order;
}

}  // namespace

const std::vector<StrategyInfo>& BudgetStrategies() {
  static const std::vector<StrategyInfo> kList = {
      {"belady", "linear allocator in the budget; evict the tensor used furthest in the future (--schedule model|minpeak)"},
      {"greedy", "linear allocator in the budget; evict what costs the fewest off-chip bytes (--schedule model|minpeak)"},
      {"cosma", "COSMA's joint ILP (CBC): operator order, addresses and spill/reload together"},
      {"cosma-fixed", "COSMA's ILP for the --schedule order (Eq. 16-17): addresses and spill/reload"},
      {"cosma-dc", "COSMA divide and conquer: automatic break nodes, parts solved exactly, stitched"},
  };
  return kList;
}

bool IsBudgetStrategy(const std::string& name) {
  for (const auto& s : BudgetStrategies())
    if (s.name == name) return true;
  return false;
}

StatusOr<plan::Plan> RunBudgetStrategy(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                                       const PlanOptions& options) {
  const target::MemoryLevel& arena = t.levels[t.arena_level];
  const target::MemoryLevel& wlevel = t.levels[t.weight_level];
  int dram_index = -1;
  for (size_t i = 0; i < t.levels.size(); ++i)
    if (t.levels[i].kind == target::MemoryKind::kDram) {
      dram_index = static_cast<int>(i);
      break;
    }
  if (dram_index < 0)
    return InvalidArgument("strategy '" + strategy + "' spills to DRAM, but target '" + t.name +
                           "' has no DRAM level; use a target with one (exynos-npu, optimus-accel, sram:SIZE)");
  const target::MemoryLevel& dram = t.levels[dram_index];
  const int64_t align = std::max<int64_t>(t.alignment, 1);
  BudgetModel bm = BuildProblem(g, align, options.with_weights);
  spill::SpillProblem& prob = bm.problem;

  // Budget.
  const std::vector<int> model_order = ToIndices(analysis::ModelOrder(g));
  const int64_t m_min = spill::MinBudget(prob);
  std::vector<int> mpmf_order;
  int64_t m_mpmf = -1;
  auto mpmf = [&]() {
    if (m_mpmf < 0) {
      schedule::MinPeakResult mp = CachedMinPeakSchedule(g);
      mpmf_order = ToIndices(mp.order);
      m_mpmf = std::min(SpillModelPeak(prob, mpmf_order), SpillModelPeak(prob, model_order));
      if (SpillModelPeak(prob, model_order) < SpillModelPeak(prob, mpmf_order)) mpmf_order = model_order;
    }
    return m_mpmf;
  };
  int64_t budget = arena.capacity;
  std::string budget_name = options.budget.empty() ? "capacity" : options.budget;
  if (options.budget == "min") {
    budget = m_min;
  } else if (options.budget == "mpmf") {
    budget = mpmf();
  } else if (options.budget == "avg") {
    budget = (m_min + mpmf()) / 2;
  } else if (!options.budget.empty()) {
    if (!ParseByteSize(options.budget, &budget) || budget <= 0)
      return InvalidArgument("--budget '" + options.budget + "' is not a byte size (e.g. 256KiB, 65536) or one of min, mpmf, avg");
  }
  const int64_t requested = budget;
  budget = budget / align * align;
  prob.budget = budget;
  if (budget < m_min)
    return OutOfMemory("the budget of " + std::to_string(requested) + " bytes" +
                       (budget != requested ? " (" + std::to_string(budget) + " after rounding down to the " +
                                                  std::to_string(align) + "-byte alignment)"
                                            : std::string()) +
                       " is below M_min = " + std::to_string(m_min) +
                       " bytes, the largest working set of one op (" +
                       [&] {
                         for (const auto& op : prob.ops) {
                           int64_t s = 0;
                           for (int x : op.inputs) s += prob.tensors[x].bytes;
                           for (int x : op.outputs) s += prob.tensors[x].bytes;
                           if (s == m_min) return "op '" + op.name + "'";
                         }
                         return std::string("?");
                       }() +
                       "); no plan can run the model in it. Give --budget min or more");

  // Order and solver.
  std::string schedule_note;
  SP_ASSIGN_OR_RETURN(analysis::Schedule chosen, ChooseSchedule(g, options, &schedule_note));
  const std::vector<int> order = ToIndices(chosen);
  spill::SpillSolution sol;
  if (strategy == "belady") {
    SP_ASSIGN_OR_RETURN(sol, spill::SolveBelady(prob, order));
  } else if (strategy == "greedy") {
    SP_ASSIGN_OR_RETURN(sol, spill::SolveGreedy(prob, order));
#if SRAMPLAN_WITH_COSMA
  } else if (strategy == "cosma" || strategy == "cosma-fixed") {
    spill::CosmaOptions co;
    if (strategy == "cosma-fixed") co.fixed_order = order;
    mpmf();
    co.warm_orders = {model_order, mpmf_order};
    if (strategy == "cosma-fixed") co.warm_orders = {order};
    co.time_limit_s = options.time_limit_s;
    SP_ASSIGN_OR_RETURN(sol, spill::SolveCosma(prob, co));
  } else if (strategy == "cosma-dc") {
    spill::DcOptions dc;
    dc.order = order;
    dc.time_limit_s = options.time_limit_s;
    SP_ASSIGN_OR_RETURN(sol, spill::SolveDivideAndConquer(prob, dc));
#endif
  } else {
    return InvalidArgument("unknown budget strategy '" + strategy + "'");
  }
  {
    Status st = spill::CheckSolution(prob, sol);
    if (!st.ok()) return InternalError("strategy '" + strategy + "' returned an invalid solution: " + st.message());
  }

  if (options.report) {
    SolverReport& r = *options.report;
    r.method = sol.method;
    r.proved_optimal = sol.proved_optimal;
    r.lower_bound_bytes = sol.lower_bound_bytes;
    r.seconds = sol.seconds;
    r.detail = sol.detail;
    r.budget_bytes = budget;
    r.m_min = m_min;
    r.m_mpmf = m_mpmf;
  }
  // The plan.
  analysis::Schedule sched;
  for (int o : sol.order) sched.push_back(ir::OpId(o));
  PlanOptions popts = options;
  if (strategy == "cosma") popts.schedule = "cosma";
  plan::Plan p = PlanSkeleton(g, t, sched, strategy, popts);
  if (!schedule_note.empty() && strategy != "cosma") p.notes.push_back(schedule_note);
  const int n = static_cast<int>(sched.size());
  const int last = std::max(0, n - 1);
  for (const spill::Residency& r : sol.residencies)
    p.buffers.push_back({prob.tensors[r.tensor].name, arena.name, r.offset, prob.tensors[r.tensor].bytes, r.first_step,
                         r.last_step, {}});
  // DRAM: inputs and (competing) weights from the start; activations from their spill/store on.
  std::vector<int> dram_from(prob.tensors.size(), -1);
  for (size_t i = 0; i < prob.tensors.size(); ++i)
    if (prob.tensors[i].graph_input || prob.tensors[i].weight) dram_from[i] = 0;
  for (const spill::Move& mv : sol.moves)
    if ((mv.kind == spill::MoveKind::kSpill || mv.kind == spill::MoveKind::kStore) && dram_from[mv.tensor] < 0)
      dram_from[mv.tensor] = mv.step;
  int64_t dcursor = 0;
  for (size_t i = 0; i < prob.tensors.size(); ++i) {
    if (dram_from[i] < 0) continue;
    dcursor = AlignUp(dcursor, align);
    const int64_t bytes = g.tensor(bm.owner[i]).Bytes();
    p.buffers.push_back({prob.tensors[i].name, dram.name, dcursor, bytes, dram_from[i], last, {}});
    dcursor += bytes;
  }
  std::vector<bool> bm_owned(g.num_tensors(), false);
  for (ir::TensorId id : bm.owner) bm_owned[id.value()] = true;
  // Weights that do not compete for the budget stay in the weight level for the whole run.
  int64_t weight_bytes = 0;
  if (!options.with_weights) {
    int64_t wcursor = 0;
    // In the DRAM level, weights go after the spill area.
    if (wlevel.name == dram.name) wcursor = dcursor;
    for (const ir::Tensor& ten : g.tensors()) {
      if (ten.kind != ir::TensorKind::kConstant || ten.consumers.empty()) continue;
      if (ten.id.value() < static_cast<int>(bm_owned.size()) && bm_owned[ten.id.value()]) continue;
      wcursor = AlignUp(wcursor, align);
      p.buffers.push_back({ten.name, wlevel.name, wcursor, ten.Bytes(), 0, last, {}});
      wcursor += ten.Bytes();
      weight_bytes += ten.Bytes();
    }
  }
  // Transfers.
  plan::Metrics& m = p.metrics;
  for (const spill::Move& mv : sol.moves) {
    const int64_t bytes = g.tensor(bm.owner[mv.tensor]).Bytes();
    const bool in = mv.kind == spill::MoveKind::kLoad || mv.kind == spill::MoveKind::kReload;
    p.transfers.push_back({mv.step, spill::MoveKindName(mv.kind), prob.tensors[mv.tensor].name, bytes,
                           in ? dram.name : arena.name, in ? arena.name : dram.name});
    if (in) {
      m.offchip_read_bytes += bytes;
      if (mv.kind == spill::MoveKind::kReload) m.noncompulsory_read_bytes += bytes;
      m.energy_pj += static_cast<double>(bytes) * (dram.read_pj_per_byte + arena.write_pj_per_byte);
    } else {
      m.offchip_write_bytes += bytes;
      if (mv.kind == spill::MoveKind::kSpill) m.noncompulsory_write_bytes += bytes;
      m.energy_pj += static_cast<double>(bytes) * (arena.read_pj_per_byte + dram.write_pj_per_byte);
    }
  }
  std::set<std::string> on_chip;
  for (const auto& b : p.buffers)
    if (b.level == arena.name) on_chip.insert(b.tensor);
  // Op accesses: activations on chip; weights from their level when they do not compete.
  AddOpAccesses(g, sched, arena, wlevel,
                [&](const ir::Tensor& ten) { return ten.kind == ir::TensorKind::kConstant && !on_chip.count(ten.name); }, &m);
  // Levels and metrics. The arena level's capacity is the budget when the budget is smaller.
  for (auto& l : p.levels) {
    if (l.name == arena.name) l.lower_bound_bytes = m_min;
    if (l.name == wlevel.name && wlevel.name != arena.name && !options.with_weights) l.lower_bound_bytes = weight_bytes;
  }
  FinishLevelMetrics(arena.name, m_min, &p);
  m.budget_bytes = budget;
  p.notes.push_back("budget " + budget_name + " = " + std::to_string(budget) + " B of " + std::to_string(arena.capacity) +
                    " B in '" + arena.name + "' (M_min " + std::to_string(m_min) + " B" +
                    (m_mpmf >= 0 ? ", M_mpmf " + std::to_string(m_mpmf) + " B" : std::string()) + "); " +
                    (options.with_weights ? "activations and weights" : "activations only"));
  p.notes.push_back(sol.method + ": " + std::to_string(m.noncompulsory_read_bytes + m.noncompulsory_write_bytes) +
                    " non-compulsory off-chip bytes (" + std::to_string(m.noncompulsory_write_bytes) + " spilled, " +
                    std::to_string(m.noncompulsory_read_bytes) + " reloaded)" +
                    (sol.proved_optimal ? ", proved optimal" : "") +
                    (sol.detail.empty() ? std::string() : "; " + sol.detail));
  plan::InferStepKinds(&p);
  plan::VerifyResult vr = plan::VerifyPlan(p);
  if (!vr.ok())
    return InternalError("strategy '" + strategy + "' produced a plan that fails verification:\n" + vr.Summary());
  return p;
}

}  // namespace sramplan::driver
