#include "analysis/op_dag.h"

#include <algorithm>

namespace sramplan::analysis {

DagPreds OpPredecessors(const ir::Graph& g, const Schedule& order) {
  std::vector<int> pos(g.num_ops(), -1);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i].value()] = static_cast<int>(i);
  DagPreds preds(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    std::vector<int>& p = preds[i];
    for (ir::TensorId in : g.op(order[i]).inputs) {
      const ir::OpId producer = g.tensor(in).producer;
      if (producer.valid()) p.push_back(pos[producer.value()]);
    }
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  return preds;
}

}  // namespace sramplan::analysis
