#include "analysis/op_cost.h"

namespace sramplan::analysis {

OpCost ComputeOpCost(const ir::Graph& g, const ir::Op& op) {
  OpCost c;
  for (ir::TensorId in : op.inputs)
    if (g.tensor(in).kind == ir::TensorKind::kConstant) c.weight_bytes += g.tensor(in).Bytes();
  for (ir::TensorId out : op.outputs) c.output_bytes += g.tensor(out).Bytes();
  if (op.outputs.empty()) return c;
  const ir::Tensor& y = g.tensor(op.outputs[0]);
  if (op.type == "Conv" && op.inputs.size() >= 2) {
    // Each output element accumulates over C_in/group x kernel volume.
    const auto& w = g.tensor(op.inputs[1]).shape;
    int64_t per_out = 1;
    for (size_t i = 1; i < w.size(); ++i) per_out *= w[i];
    c.macs = y.NumElements() * per_out;
  } else if ((op.type == "Gemm" || op.type == "MatMul") && op.inputs.size() >= 2) {
    const auto& a = g.tensor(op.inputs[0]).shape;
    int64_t k = a.empty() ? 1 : a.back();
    if (op.type == "Gemm" && op.attrs.GetInt("transA", 0) && a.size() == 2) k = a[0];
    c.macs = y.NumElements() * k;
  }
  return c;
}

}  // namespace sramplan::analysis
