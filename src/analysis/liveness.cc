#include "analysis/liveness.h"

#include <algorithm>

namespace sramplan::analysis {

Schedule ModelOrder(const ir::Graph& g) {
  Schedule s;
  for (const ir::Op& op : g.ops()) s.push_back(op.id);
  return s;
}

Status ValidateSchedule(const ir::Graph& g, const Schedule& schedule) {
  if (static_cast<int>(schedule.size()) != g.num_ops())
    return InvalidArgument("schedule has " + std::to_string(schedule.size()) + " steps but the graph has " +
                           std::to_string(g.num_ops()) + " ops");
  std::vector<int> step(g.num_ops(), -1);
  for (size_t i = 0; i < schedule.size(); ++i) {
    int id = schedule[i].value();
    if (id < 0 || id >= g.num_ops()) return InvalidArgument("schedule names an op that does not exist");
    if (step[id] >= 0) return InvalidArgument("op '" + g.op(schedule[i]).name + "' is scheduled twice");
    step[id] = static_cast<int>(i);
  }
  for (const ir::Op& op : g.ops())
    for (ir::TensorId in : op.inputs) {
      const ir::Tensor& t = g.tensor(in);
      if (t.producer.valid() && step[t.producer.value()] >= step[op.id.value()])
        return InvalidArgument("schedule runs '" + op.name + "' before '" + g.op(t.producer).name +
                               "', which produces its input '" + t.name + "'");
    }
  return Status::Ok();
}

Liveness ComputeLiveness(const ir::Graph& g, const Schedule& schedule) {
  Liveness lv;
  const int n = static_cast<int>(schedule.size());
  lv.step_of_op.assign(g.num_ops(), -1);
  for (int i = 0; i < n; ++i) lv.step_of_op[schedule[i].value()] = i;
  lv.buffer_of_tensor.assign(g.num_tensors(), -1);
  std::vector<int> first(g.num_tensors(), -1), last(g.num_tensors(), -1);
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind == ir::TensorKind::kConstant) continue;
    ir::TensorId root = g.StorageRoot(t.id);
    if (g.tensor(root).kind == ir::TensorKind::kConstant) continue;
    int r = root.value();
    int produced = t.producer.valid() ? lv.step_of_op[t.producer.value()] : 0;
    if (root == t.id) first[r] = produced;
    int end = produced;
    for (ir::OpId c : t.consumers) end = std::max(end, lv.step_of_op[c.value()]);
    if (t.kind == ir::TensorKind::kOutput) end = n - 1;
    last[r] = std::max(last[r], end);
  }
  for (const ir::Tensor& t : g.tensors()) {
    int r = t.id.value();
    if (first[r] < 0 || g.StorageRoot(t.id) != t.id) continue;
    lv.buffers.push_back({t.id, t.Bytes(), first[r], std::max(first[r], last[r])});
  }
  std::stable_sort(lv.buffers.begin(), lv.buffers.end(), [](const LiveTensor& a, const LiveTensor& b) {
    return a.first_step < b.first_step;
  });
  for (size_t i = 0; i < lv.buffers.size(); ++i) lv.buffer_of_tensor[lv.buffers[i].tensor.value()] = static_cast<int>(i);
  for (const ir::Tensor& t : g.tensors()) {
    ir::TensorId root = g.StorageRoot(t.id);
    if (lv.buffer_of_tensor[root.value()] >= 0) lv.buffer_of_tensor[t.id.value()] = lv.buffer_of_tensor[root.value()];
  }
  // Bytes live per step, from a difference array (linear however long the buffers live).
  lv.live_bytes_per_step.assign(std::max(n, 1), 0);
  {
    std::vector<int64_t> diff(lv.live_bytes_per_step.size() + 1, 0);
    for (const auto& b : lv.buffers) {
      diff[b.first_step] += b.bytes;
      diff[b.last_step + 1] -= b.bytes;
    }
    int64_t live = 0;
    for (size_t s = 0; s < lv.live_bytes_per_step.size(); ++s) lv.live_bytes_per_step[s] = live += diff[s];
  }
  for (int s = 0; s < static_cast<int>(lv.live_bytes_per_step.size()); ++s)
    if (lv.live_bytes_per_step[s] > lv.lower_bound) {
      lv.lower_bound = lv.live_bytes_per_step[s];
      lv.peak_step = s;
    }
  return lv;
}

}  // namespace sramplan::analysis
