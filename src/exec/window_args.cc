#include "exec/window_args.h"

#include <limits>
#include <string>

#include "ir/op_geometry.h"

namespace sramplan::exec {
namespace {

Status ToI32(const ir::Op& op, const char* what, const std::vector<int64_t>& v, std::vector<int32_t>* out) {
  out->clear();
  for (int64_t x : v) {
    if (x < 0 || x > std::numeric_limits<int32_t>::max())
      return InvalidArgument("op '" + op.name + "': " + what + " value " + std::to_string(x) +
                             " is out of the kernels' range [0, 2^31)");
    out->push_back(static_cast<int32_t>(x));
  }
  return Status::Ok();
}

Status FromWindow(const ir::Op& op, const ir::WindowGeometry& w, WindowArgs* a) {
  SP_RETURN_IF_ERROR(ToI32(op, "kernel_shape", w.kernel, &a->kernel));
  SP_RETURN_IF_ERROR(ToI32(op, "strides", w.strides, &a->strides));
  SP_RETURN_IF_ERROR(ToI32(op, "pads", w.pads, &a->pads));
  return ToI32(op, "dilations", w.dilations, &a->dilations);
}

}  // namespace

StatusOr<WindowArgs> ConvWindow(const ir::Graph& g, const ir::Op& op) {
  SP_ASSIGN_OR_RETURN(ir::ConvGeometry cg, ir::ParseConvGeometry(g, op));
  WindowArgs a;
  SP_RETURN_IF_ERROR(FromWindow(op, cg, &a));
  std::vector<int32_t> group;
  SP_RETURN_IF_ERROR(ToI32(op, "group", {cg.group}, &group));
  a.group = group[0];
  return a;
}

StatusOr<WindowArgs> PoolWindow(const ir::Graph& g, const ir::Op& op) {
  SP_ASSIGN_OR_RETURN(ir::PoolGeometry pg, ir::ParsePoolGeometry(g, op));
  WindowArgs a;
  SP_RETURN_IF_ERROR(FromWindow(op, pg, &a));
  return a;
}

}  // namespace sramplan::exec
