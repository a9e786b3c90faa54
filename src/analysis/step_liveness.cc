#include "analysis/step_liveness.h"

#include <algorithm>

namespace sramplan::analysis {

bool IsGroupIntermediate(const ir::Graph& g, const std::function<bool(ir::OpId)>& in_group,
                         ir::TensorId id) {
  const ir::Tensor& t = g.tensor(id);
  if (t.kind != ir::TensorKind::kActivation || !t.producer.valid()) return false;
  if (!in_group(t.producer)) return false;
  for (ir::OpId c : t.consumers)
    if (!in_group(c)) return false;
  return true;
}

bool IsGroupIntermediate(const ir::Graph& g, std::span<const ir::OpId> group, ir::TensorId id) {
  return IsGroupIntermediate(
      g, [&](ir::OpId op) { return std::find(group.begin(), group.end(), op) != group.end(); }, id);
}

int StepLiveness::BufferOfTensor(ir::TensorId id) const {
  const int b = ops.buffer_of_tensor[id.value()];
  return b < 0 ? -1 : buffer_of_op_buffer[b];
}

StepGroups SingleOpSteps(const Schedule& schedule) {
  StepGroups steps;
  steps.reserve(schedule.size());
  for (ir::OpId id : schedule) steps.push_back({id});
  return steps;
}

StepLiveness ComputeStepLiveness(const ir::Graph& g, const StepGroups& steps) {
  StepLiveness r;
  Schedule sched;
  for (const auto& s : steps) sched.insert(sched.end(), s.begin(), s.end());
  r.ops = ComputeLiveness(g, sched);
  r.step_of_op.assign(g.num_ops(), 0);
  for (int s = 0; s < static_cast<int>(steps.size()); ++s)
    for (ir::OpId id : steps[s]) r.step_of_op[id.value()] = s;
  // Schedule position -> step.
  std::vector<int> step_at(sched.size());
  for (size_t i = 0; i < sched.size(); ++i) step_at[i] = r.step_of_op[sched[i].value()];
  r.buffer_of_op_buffer.assign(r.ops.buffers.size(), -1);
  for (size_t b = 0; b < r.ops.buffers.size(); ++b) {
    const LiveTensor& lb = r.ops.buffers[b];
    const int first = step_at[lb.first_step], last = step_at[lb.last_step];
    if (first == last && steps[first].size() > 1 &&
        IsGroupIntermediate(
            g, [&](ir::OpId op) { return r.step_of_op[op.value()] == first; }, lb.tensor))
      continue;  // lives in the group's workspace
    r.buffer_of_op_buffer[b] = static_cast<int>(r.buffers.size());
    r.buffers.push_back({lb.tensor, lb.bytes, first, last, static_cast<int>(b)});
  }
  return r;
}

}  // namespace sramplan::analysis
