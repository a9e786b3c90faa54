// Graphs whose operand dtypes the import-time check (ir/op_dtypes.h) rejects, built directly so that
// the executor's own defence can be tested (issue 12): it must refuse them before any kernel runs.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace sramplan::testing {

// x [1,3,8,8] float32 -> `type`(x, w [4,3,3,3] float32) -> y [1,4,6,6] of dtype `y_dtype`; the Conv
// has a 3x3 kernel (a Slice given the same inputs reads the weights as its starts).
inline ir::Graph BadDtypeGraph(const std::string& type, ir::DataType y_dtype) {
  ir::Graph g;
  g.name = "bad_" + type;
  auto add = [&](const std::string& n, std::vector<int64_t> s, ir::TensorKind k, ir::DataType dt) {
    ir::Tensor t;
    t.name = n;
    t.shape = std::move(s);
    t.kind = k;
    t.dtype = dt;
    return g.AddTensor(std::move(t));
  };
  ir::TensorId x = add("x", {1, 3, 8, 8}, ir::TensorKind::kInput, ir::DataType::kFloat32);
  ir::TensorId w = add("w", {4, 3, 3, 3}, ir::TensorKind::kConstant, ir::DataType::kFloat32);
  ir::TensorId y = add("y", {1, 4, 6, 6}, ir::TensorKind::kOutput, y_dtype);
  ir::Op op;
  op.name = "c";
  op.type = type;
  op.inputs = {x, w};
  op.outputs = {y};
  op.attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  g.AddOp(std::move(op));
  return g;
}

}  // namespace sramplan::testing
