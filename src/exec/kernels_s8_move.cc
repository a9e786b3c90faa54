// int8 data movement as call records (kernels_s8_internal.h): Concat, Resize / Upsample, Pad,
// Transpose, Split, Slice, Gather, Expand.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/kernels_s8_internal.h"

namespace sramplan::exec {

namespace {

// Source coordinate of output index `o` along an axis (in -> out), as num / den, clamped to [0,
// in-1].
void LinearSource(int64_t o, int64_t in, int64_t out, sp_coord_mode_t mode, int64_t* num,
                  int64_t* den) {
  switch (mode) {
    case SP_COORD_ASYMMETRIC:
      *num = o * in, *den = out;
      break;
    case SP_COORD_ALIGN_CORNERS:
      if (out > 1) {
        *num = o * (in - 1), *den = out - 1;
      } else {
        *num = 0, *den = 1;
      }
      break;
    case SP_COORD_PYTORCH_HALF_PIXEL:
      if (out > 1) {
        *num = (2 * o + 1) * in - out, *den = 2 * out;
      } else {
        *num = 0, *den = 1;
      }
      break;
    default:  // half_pixel
      *num = (2 * o + 1) * in - out, *den = 2 * out;
      break;
  }
  if (*num < 0) *num = 0;
  if (*num > (in - 1) * *den) *num = (in - 1) * *den;
}

// Bilinear resize of the last two axes, or with `channels_last` of axes 1 and 2 of an NHWC feature
// map (channels innermost), input and output sharing parameters: exact rational weights, the
// weighted sum of the int8 values rounded half away from zero.
Status ResizeLinearS8(const std::string& op_name, const std::vector<int64_t>& xs, const int8_t* xp,
                      const std::vector<int64_t>& ys, int8_t* yp, sp_coord_mode_t mode, bool channels_last) {
  const size_t r = xs.size();
  if (r < 2 || ys.size() != r) return InvalidArgument("op '" + op_name + "': Resize ranks differ");
  channels_last = channels_last && r >= 3;
  // The resized axes are [first, first + 2); the others must keep their extents.
  const size_t first = channels_last ? r - 3 : r - 2;
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < r; ++i) {
    if (i == first || i == first + 1) continue;
    if (xs[i] != ys[i])
      return Unsupported("op '" + op_name + "': int8 linear Resize of axis " + std::to_string(i) +
                         " is not implemented (only the two spatial axes)");
    (i < first ? outer : inner) *= xs[i];
  }
  const int64_t H = xs[first], W = xs[first + 1], OH = ys[first], OW = ys[first + 1];
  struct Tap {
    int64_t i0, i1, w0, w1, den;
  };
  auto taps = [&](int64_t in, int64_t outn) {
    std::vector<Tap> t(static_cast<size_t>(outn));
    for (int64_t o = 0; o < outn; ++o) {
      int64_t num, den;
      LinearSource(o, in, outn, mode, &num, &den);
      const int64_t i0 = num / den, f = num - i0 * den;
      t[o] = {i0, std::min(i0 + 1, in - 1), den - f, f, den};
    }
    return t;
  };
  const std::vector<Tap> ty = taps(H, OH), tx = taps(W, OW);
  for (int64_t b = 0; b < outer; ++b) {
    const int8_t* ib = xp + b * H * W * inner;
    int8_t* ob = yp + b * OH * OW * inner;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const Tap& a = ty[oh];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Tap& c = tx[ow];
        for (int64_t k = 0; k < inner; ++k) {
          auto at = [&](int64_t y, int64_t x) { return static_cast<int64_t>(ib[(y * W + x) * inner + k]); };
          const int64_t sum = a.w0 * (c.w0 * at(a.i0, c.i0) + c.w1 * at(a.i0, c.i1)) +
                              a.w1 * (c.w0 * at(a.i1, c.i0) + c.w1 * at(a.i1, c.i1));
          const int64_t d = a.den * c.den;
          const int64_t v = sum >= 0 ? (2 * sum + d) / (2 * d) : -((-2 * sum + d) / (2 * d));
          ob[(oh * OW + ow) * inner + k] = static_cast<int8_t>(std::clamp<int64_t>(v, -128, 127));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<OpCalls> BuildConcatS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  const int32_t axis =
      static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 1), o.oshape(0).size()));
  const bool int8 = IsInt8(g, op.outputs[0]);
  QP qo;
  if (int8) SP_RETURN_IF_ERROR(o.params(op.outputs[0], &qo));
  OpCalls c;
  CallBlock b;
  int64_t offset = 0;
  const int64_t out_elem = ir::DataTypeSize(g.tensor(op.outputs[0]).dtype);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    sp_tensor_t x = Contig(o.shape(i));
    sp_tensor_t slice = o.o0;
    slice.dims[axis] = x.dims[axis];
    const CallRef dst = Out(0, offset * o.o0.strides[axis] * out_elem);
    offset += x.dims[axis];
    QP qi;
    if (int8) SP_RETURN_IF_ERROR(o.params(op.inputs[i], &qi));
    const int idx = static_cast<int>(i);
    if (!int8 || qi == qo) {
      b.calls.push_back(Call(KernelFn::kCopy, {x, In(idx), o.elem(op.inputs[i]), slice, dst}));
    } else {
      sp_requant_t rq = sp_host_quantize_multiplier(qi.scale / qo.scale);
      b.calls.push_back(
          Call(KernelFn::kRequantizeS8, {x, In(idx), Int(qi.zp), rq, Int(qo.zp), slice, dst}));
    }
  }
  c.blocks.push_back(std::move(b));
  return c;
}

// Data movement: the output shares the input's parameters (quantize.h), so bytes move unchanged.
Status CheckMoveParamsS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  if (IsInt8(g, op.inputs[0])) {
    QP qi, qo;
    SP_RETURN_IF_ERROR(o.params(op.inputs[0], &qi));
    for (ir::TensorId out : op.outputs) {
      SP_RETURN_IF_ERROR(o.params(out, &qo));
      if (!(qi == qo))
        return InternalError("op '" + op.name + "': input and output parameters differ");
    }
  }
  return Status::Ok();
}

StatusOr<OpCalls> BuildResizeS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  const std::string& t = op.type;
  sp_tensor_t x = Contig(o.shape(0));
  std::string mode = op.attrs.GetString("mode", "nearest");
  std::string ct = op.attrs.GetString("coordinate_transformation_mode",
                                      t == "Upsample" ? "asymmetric" : "half_pixel");
  sp_coord_mode_t coord = ct == "asymmetric"           ? SP_COORD_ASYMMETRIC
                          : ct == "align_corners"      ? SP_COORD_ALIGN_CORNERS
                          : ct == "pytorch_half_pixel" ? SP_COORD_PYTORCH_HALF_PIXEL
                                                       : SP_COORD_HALF_PIXEL;
  if (mode == "linear" || mode == "bilinear") {
    if (!IsInt8(g, op.inputs[0]))
      return Unsupported("op '" + op.name + "': linear Resize of a non-int8 tensor");
    OpCalls c;
    c.host_loop_what = "linear Resize";
    c.host_loop = [name = op.name, xs = o.shape(0), ys = o.oshape(0), coord,
                   nhwc = g.layout == ir::Layout::kNHWC](const std::vector<const uint8_t*>& in,
                                                         const std::vector<uint8_t*>& out) {
      return ResizeLinearS8(name, xs, reinterpret_cast<const int8_t*>(in[0]), ys,
                            reinterpret_cast<int8_t*>(out[0]), coord, nhwc);
    };
    return c;
  }
  if (mode != "nearest")
    return Unsupported("op '" + op.name + "': int8 Resize supports nearest and linear modes");
  std::string nm =
      op.attrs.GetString("nearest_mode", t == "Upsample" ? "floor" : "round_prefer_floor");
  sp_nearest_mode_t n = nm == "floor"               ? SP_NEAREST_FLOOR
                        : nm == "ceil"              ? SP_NEAREST_CEIL
                        : nm == "round_prefer_ceil" ? SP_NEAREST_ROUND_PREFER_CEIL
                                                    : SP_NEAREST_ROUND_PREFER_FLOOR;
  return Single(Call(KernelFn::kResizeNearest,
                     {x, In(0), Int(coord), Int(n), o.elem(op.inputs[0]), o.o0, Out(0)}));
}

StatusOr<OpCalls> BuildPadS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  sp_tensor_t x = Contig(o.shape(0));
  auto pads = I32(op.attrs.GetInts("pads"));
  std::string mode = op.attrs.GetString("mode", "constant");
  sp_pad_mode_t m = mode == "reflect" ? SP_PAD_REFLECT
                    : mode == "edge"  ? SP_PAD_EDGE
                                      : SP_PAD_CONSTANT;
  const double v = op.attrs.GetFloat("value", 0.0);
  uint8_t value[8] = {0};
  switch (g.tensor(op.inputs[0]).dtype) {
    case ir::DataType::kInt8: {
      QP qi;
      SP_RETURN_IF_ERROR(o.params(op.inputs[0], &qi));
      value[0] =
          static_cast<uint8_t>(sp_host_quantize_s8(static_cast<float>(v), qi.scale, qi.zp));
      break;
    }
    case ir::DataType::kInt64: {
      int64_t i = static_cast<int64_t>(v);
      std::memcpy(value, &i, 8);
      break;
    }
    case ir::DataType::kInt32: {
      int32_t i = static_cast<int32_t>(v);
      std::memcpy(value, &i, 4);
      break;
    }
    default:
      value[0] = static_cast<uint8_t>(v);
      break;
  }
  OpCalls c;
  const int val = AddConst(&c, "uint8_t", "pad_value", value, sizeof value);
  c.blocks.push_back({1,
                      {Call(KernelFn::kPad, {x, In(0), CallArg(pads), Int(m), ConstRef(val),
                                             o.elem(op.inputs[0]), o.o0, Out(0)})}});
  return c;
}

StatusOr<OpCalls> BuildTransposeS8(const S8Op& o) {
  const ir::Op& op = o.op;
  sp_tensor_t x = Contig(o.shape(0));
  std::vector<int64_t> perm = op.attrs.GetInts("perm");
  if (perm.empty())
    for (int64_t i = static_cast<int64_t>(o.shape(0).size()) - 1; i >= 0; --i) perm.push_back(i);
  return Single(
      Call(KernelFn::kTranspose, {x, In(0), CallArg(I32(perm)), o.elem(op.inputs[0]), o.o0, Out(0)}));
}

StatusOr<OpCalls> BuildSplitS8(const S8Op& o) {
  const ir::Op& op = o.op;
  int64_t rank = static_cast<int64_t>(o.shape(0).size());
  int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), rank));
  sp_tensor_t x = Contig(o.shape(0));
  int64_t start = 0;
  CallBlock b;
  for (size_t k = 0; k < op.outputs.size(); ++k) {
    std::vector<int32_t> starts(rank, 0);
    starts[axis] = static_cast<int32_t>(start);
    sp_tensor_t y = Contig(o.oshape(k));
    b.calls.push_back(Call(KernelFn::kSlice, {x, In(0), CallArg(std::move(starts)), Null(),
                                              o.elem(op.inputs[0]), y, Out(static_cast<int>(k))}));
    start += o.oshape(k)[axis];
  }
  OpCalls c;
  c.blocks.push_back(std::move(b));
  return c;
}

StatusOr<OpCalls> BuildSliceS8(const S8Op& o) {
  const ir::Op& op = o.op;
  const auto& xs = o.shape(0);
  std::vector<int32_t> starts, steps;
  SliceStartsSteps(op, xs, &starts, &steps);
  sp_tensor_t x = Contig(xs);
  return Single(
      Call(KernelFn::kSlice, {x, In(0), CallArg(std::move(starts)), CallArg(std::move(steps)),
                              o.elem(op.inputs[0]), o.o0, Out(0)}));
}

StatusOr<OpCalls> BuildGatherS8(const S8Op& o) {
  const ir::Graph& g = o.g;
  const ir::Op& op = o.op;
  sp_tensor_t x = Contig(o.shape(0)), idx = Contig(o.shape(1));
  int32_t axis = static_cast<int32_t>(NormAxis(op.attrs.GetInt("axis", 0), o.shape(0).size()));
  if (g.tensor(op.inputs[1]).dtype != ir::DataType::kInt64)
    return Unsupported("op '" + op.name + "': Gather indices must be int64");
  return Single(
      Call(KernelFn::kGather, {x, In(0), Int(axis), idx, In(1), o.elem(op.inputs[0]), o.o0, Out(0)}));
}

StatusOr<OpCalls> BuildExpandS8(const S8Op& o) {
  const ir::Op& op = o.op;
  sp_tensor_t x = Contig(o.shape(0));
  return Single(Call(KernelFn::kExpand, {x, In(0), o.elem(op.inputs[0]), o.o0, Out(0)}));
}

}  // namespace sramplan::exec
