// spill-problem: the budget strategies' problem (spill/spill.h): one problem tensor per arena
// buffer of the model order's liveness (plus the weights with --with-weights), graph outputs that
// must reach DRAM, M_min, and the budget (--budget: a size, min, mpmf or avg; default the arena
// level's capacity), refused below M_min.
#include <algorithm>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "driver/plan_build.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::driver::passes {
namespace {

void BuildProblem(const ir::Graph& g, int64_t alignment, bool with_weights, BudgetState& m) {
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
      m.problem.tensors[index[lv.buffers[lv.buffer_of_tensor[t.id.value()]].tensor.value()]]
          .graph_output = true;
  if (with_weights)
    for (const ir::Tensor& t : g.tensors())
      if (t.kind == ir::TensorKind::kConstant && !t.consumers.empty() &&
          lv.buffer_of_tensor[t.id.value()] < 0) {
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
      if (t >= 0 && std::find(so.inputs.begin(), so.inputs.end(), t) == so.inputs.end())
        so.inputs.push_back(t);
    }
    for (ir::TensorId out : op.outputs) {
      int b = lv.buffer_of_tensor[out.value()];
      if (b >= 0 && lv.buffers[b].tensor == out) so.outputs.push_back(index[out.value()]);
    }
    m.problem.ops.push_back(std::move(so));
  }
  m.problem.alignment = alignment;
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

int64_t ComputeMpmf(PlanningContext& ctx) {
  BudgetState& b = *ctx.budget;
  if (b.m_mpmf < 0) {
    schedule::MinPeakResult mp = CachedMinPeakSchedule(
        ctx.graph, ctx.options.search_time_limit_s > 0 ? ctx.options.search_time_limit_s : 10,
        ctx.options.search_time_limit_s > 0);
    b.mpmf_order = ToIndices(mp.order);
    b.m_mpmf =
        std::min(SpillModelPeak(b.problem, b.mpmf_order), SpillModelPeak(b.problem, b.model_order));
    if (SpillModelPeak(b.problem, b.model_order) < SpillModelPeak(b.problem, b.mpmf_order))
      b.mpmf_order = b.model_order;
  }
  return b.m_mpmf;
}

std::vector<int> OrderIndices(const analysis::Schedule& sched) { return ToIndices(sched); }

MakeResult MakeSpillProblem(std::string_view arg) {
  return NoArgPass("spill-problem", arg, [](PlanningContext& ctx) -> Status {
    const target::Target& t = ctx.target;
    const target::MemoryLevel& arena = ctx.arena();
    int dram_index = -1;
    for (size_t i = 0; i < t.levels.size(); ++i)
      if (t.levels[i].kind == target::MemoryKind::kDram) {
        dram_index = static_cast<int>(i);
        break;
      }
    if (dram_index < 0)
      return InvalidArgument(
          "strategy '" + ctx.spec.name + "' spills to DRAM, but target '" + t.name +
          "' has no DRAM level; use a target with one (exynos-npu, optimus-accel, sram:SIZE)");
    ctx.budget = std::make_unique<BudgetState>();
    BudgetState& b = *ctx.budget;
    b.dram_level = dram_index;
    const int64_t align = ctx.alignment();
    BuildProblem(ctx.graph, align, ctx.options.with_weights, b);
    spill::SpillProblem& prob = b.problem;
    b.model_order = ToIndices(analysis::ModelOrder(ctx.graph));
    b.m_min = spill::MinBudget(prob);
    const std::string& opt = ctx.options.budget;
    int64_t budget = arena.capacity;
    b.budget_name = opt.empty() ? "capacity" : opt;
    if (opt == "min") {
      budget = b.m_min;
    } else if (opt == "mpmf") {
      budget = ComputeMpmf(ctx);
    } else if (opt == "avg") {
      budget = (b.m_min + ComputeMpmf(ctx)) / 2;
    } else if (!opt.empty()) {
      if (!ParseByteSize(opt, &budget) || budget <= 0)
        return InvalidArgument(
            "--budget '" + opt +
            "' is not a byte size (e.g. 256KiB, 65536) or one of min, mpmf, avg");
    }
    const int64_t requested = budget;
    budget = budget / align * align;
    prob.budget = budget;
    b.budget = budget;
    ctx.lower_bound = b.m_min;
    if (budget >= b.m_min) return Status::Ok();
    std::string op_name = "?";
    for (const auto& op : prob.ops) {
      int64_t s = 0;
      for (int x : op.inputs) s += prob.tensors[x].bytes;
      for (int x : op.outputs) s += prob.tensors[x].bytes;
      if (s == b.m_min) {
        op_name = "op '" + op.name + "'";
        break;
      }
    }
    return OutOfMemory("the budget of " + std::to_string(requested) + " bytes" +
                       (budget != requested
                            ? " (" + std::to_string(budget) + " after rounding down to the " +
                                  std::to_string(align) + "-byte alignment)"
                            : std::string()) +
                       " is below M_min = " + std::to_string(b.m_min) +
                       " bytes, the largest working set of one op (" + op_name +
                       "); no plan can run the model in it. Give --budget min or more");
  });
}

}  // namespace sramplan::driver::passes
