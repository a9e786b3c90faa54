// int8 element-wise ops as call records (kernels_s8_internal.h): clamps and lookup tables,
// per-channel tables (BatchNormalization), Add / Sub / Mul, Softmax.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/kernels_s8_internal.h"

namespace sramplan::exec {

StatusOr<OpCalls> BuildActivationS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  const std::string& t = op.type;
  if (!IsInt8(g, op.inputs[0]))
    return Unsupported("op '" + op.name + "': int8 " + t + " needs an int8 input");
  sp_tensor_t x = Contig(o.shape(0));
  if (o.table.size() == 256) {
    OpCalls c;
    const int lut = AddConst(&c, "int8_t", "lut", o.table.data(), 256);
    c.blocks.push_back({1, {Call(KernelFn::kLutS8, {x, In(0), ConstRef(lut), o.o0, Out(0)})}});
    return c;
  }
  if (t != "Relu" && t != "Clip")
    return InternalError("op '" + op.name + "': no lookup o.table was built");
  QP qi;
  SP_RETURN_IF_ERROR(o.params(op.inputs[0], &qi));
  int32_t lo = -128, hi = 127;
  auto q8 = [&](double v) {
    double r = std::round(v / qi.scale) + qi.zp;
    return std::isnan(r) ? qi.zp : static_cast<int32_t>(std::clamp(r, -128.0, 127.0));  // NaN (no usable scale): the zero point
  };
  if (t == "Relu") {
    lo = std::max(-128, qi.zp);
  } else {
    const double mn = op.attrs.GetFloat("min", -3.4e38), mx = op.attrs.GetFloat("max", 3.4e38);
    lo = q8(mn);
    hi = q8(mx);
  }
  return Single(Call(KernelFn::kClampS8, {x, In(0), Int(lo), Int(hi), o.o0, Out(0)}));
}

StatusOr<OpCalls> BuildBatchNormS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  sp_tensor_t x = Describe(g, o.shape(0), true), y = Describe(g, o.oshape(0), true);
  const int32_t C = x.rank >= 2 ? x.dims[1] : 1;
  if (x.rank < 2 || o.table.size() != static_cast<size_t>(C) * 256)
    return InternalError("op '" + op.name + "': no per-channel tables were built");
  sp_tensor_t xc = x, yc = y;
  xc.dims[1] = yc.dims[1] = 1;
  OpCalls c;
  const int luts = AddConst(&c, "int8_t", "lut", o.table.data(), o.table.size());
  c.blocks.push_back({C,
                      {Call(KernelFn::kLutS8, {xc, In(0, 0, x.strides[1]), ConstRef(luts, 0, 256),
                                               yc, Out(0, 0, y.strides[1])})}});
  return c;
}

StatusOr<OpCalls> BuildBinaryS8(const S8Op& o) {
  const ir::Op& op = o.op;
  const std::string& t = op.type;
  QP qa, qb, qo;
  SP_RETURN_IF_ERROR(o.params(op.inputs[0], &qa));
  SP_RETURN_IF_ERROR(o.params(op.inputs[1], &qb));
  SP_RETURN_IF_ERROR(o.params(op.outputs[0], &qo));
  sp_tensor_t a = Contig(o.shape(0)), b = Contig(o.shape(1));
  if (t == "Mul") {
    sp_mul_s8_params_t p =
        sp_host_mul_s8_params(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp, -128, 127);
    return Single(Call(KernelFn::kMulS8, {a, In(0), b, In(1), p, o.o0, Out(0)}));
  }
  sp_add_s8_params_t p =
      sp_host_add_s8_params(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp, -128, 127);
  return Single(Call(t == "Add" ? KernelFn::kAddS8 : KernelFn::kSubS8,
                     {a, In(0), b, In(1), p, o.o0, Out(0)}));
}

StatusOr<OpCalls> BuildSoftmaxS8(const S8Op& o) {
  const ir::Op& op = o.op;
  QP qi;
  SP_RETURN_IF_ERROR(o.params(op.inputs[0], &qi));
  sp_tensor_t x = Contig(o.shape(0));
  int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", -1), o.shape(0).size()));
  int32_t exp_table[256];
  sp_host_build_softmax_exp_table(qi.scale, 1.0, exp_table);
  OpCalls c;
  const int et = AddConst(&c, "int32_t", "exp_table", exp_table, sizeof exp_table);
  c.blocks.push_back(
      {1, {Call(KernelFn::kSoftmaxS8, {x, In(0), Int(axis), ConstRef(et), o.o0, Out(0)})}});
  return c;
}

}  // namespace sramplan::exec
