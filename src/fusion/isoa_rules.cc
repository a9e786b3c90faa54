#include "fusion/isoa_rules.h"

#include "ir/op_geometry.h"

namespace sramplan::fusion {
namespace {

// A 2-D convolution with group 1 on channels-last feature maps.
bool PlainConv(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Conv" || op.outputs.size() != 1 || g.layout != ir::Layout::kNHWC) return false;
  auto cg = ir::ParseConvGeometry(g, op);
  return cg.ok() && cg->Is2D() && cg->group == 1 && g.tensor(op.inputs[0]).shape.size() == 4;
}

bool ChannelConcat(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Concat" || op.outputs.size() != 1 || g.layout != ir::Layout::kNHWC) return false;
  const int64_t axis = op.attrs.GetInt("axis", 0);
  if (axis != 3 && axis != -1) return false;
  for (ir::TensorId in : op.inputs)
    if (g.tensor(in).shape.size() != 4 || g.tensor(in).kind == ir::TensorKind::kConstant) return false;
  return g.tensor(op.outputs[0]).shape.size() == 4;
}

}  // namespace

void MarkIsoaRoles(const ir::Graph& g, FusionGraph* fg) {
  for (Vertex& v : fg->vertices) {
    v.isoa_source = v.isoa_reader = false;
    if (v.ops.size() != 1 || !v.known) continue;
    const ir::Op& op = g.op(v.ops[0]);
    v.isoa_source = PlainConv(g, op) || ChannelConcat(g, op);
    // A reader sums one input slice after the other into the rows a strip computes: its window
    // is one row high (any stride, any width), so no row of a slice is needed by a later strip
    // and the executor can let every reader consume all rows its source computes in a strip.
    // Integer sums only: float sums would depend on the slice order (not bit-exact), so a float
    // plan keeps ISOA to outputs that leave the group (the executor holds every channel otherwise).
    const ir::DataType dt = g.tensor(op.inputs[0]).dtype;
    const bool integer = dt != ir::DataType::kFloat32 && dt != ir::DataType::kFloat16;
    if (integer && PlainConv(g, op) && v.inputs.size() == 1 && v.in_maps.size() == 1) {
      const RowMap& m = v.in_maps[0];
      v.isoa_reader = m.rule == RowRule::kWindow && m.fixed_out == 0 && m.k_eff == 1;
    }
  }
}

}  // namespace sramplan::fusion
