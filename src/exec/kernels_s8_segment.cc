// The segment-aware kernels' parameters, derived from the plain int8 call records, and the
// workspace rule of a segment step (kernels.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "exec/kernels_s8_internal.h"

namespace sramplan::exec {

// ---- Segment-kernel parameters from the plain call records -----------------------------------

int64_t SegLayerWorkspaceBytes(const SegLayerS8& l, int64_t segment_bytes) {
  if (l.fc) {
    const sp_seg_fc_shape_t fs{l.m, l.k, l.n, static_cast<int32_t>(std::clamp<int64_t>(segment_bytes, 0, INT32_MAX))};
    return sp_seg_fc_workspace_bytes(&fs);
  }
  const sp_seg_conv_shape_t cs{l.h, l.w, l.c_in, l.c_out, l.r, l.s, l.stride_h, l.stride_w,
                               l.pad[0], l.pad[1], l.pad[2], l.pad[3], l.dilation_h, l.dilation_w};
  return l.depthwise ? sp_seg_depthwise_workspace_bytes(&cs) : sp_seg_conv_workspace_bytes(&cs);
}

StatusOr<const plan::Buffer*> SegmentStepWorkspace(const plan::Plan& p, int s, int64_t need) {
  const std::string where = "step " + std::to_string(s);
  if (s < 0 || s >= static_cast<int>(p.steps.size()) || p.steps[s].ops.empty())
    return Status(StatusCode::kMismatch, where + " does not exist");
  const std::string& name = p.steps[s].workspace;
  const plan::Buffer* ws = nullptr;
  for (const plan::Buffer& b : p.buffers)
    if (b.tensor == name && b.first_step <= s && s <= b.last_step) ws = &b;
  if (!ws)
    return Status(StatusCode::kMismatch, where + " op '" + p.steps[s].ops[0].name +
                                             "' runs the segment-aware kernels but the plan gives the step no " +
                                             (name.empty() ? std::string("workspace (params.workspace)")
                                                           : "'" + name + "' buffer"));
  if (need < 1 || ws->bytes < need)
    return Status(StatusCode::kMismatch, where + " op '" + p.steps[s].ops[0].name + "': the kernel needs " +
                                             std::to_string(need) + " bytes of workspace but '" + name + "' has " +
                                             std::to_string(ws->bytes));
  return ws;
}

namespace {

bool DenseNhwc(const sp_tensor_t& t) {
  return t.rank == 4 && t.dims[0] == 1 && t.strides[1] == 1 && t.strides[3] == t.dims[1] &&
         t.strides[2] == t.dims[3] * t.dims[1];
}

bool DenseRows(const sp_tensor_t& t) {
  return t.rank == 2 && t.strides[1] == 1 && t.strides[0] == t.dims[1];
}

}  // namespace

StatusOr<SegLayerS8> SegLayerParamsS8(const ir::Graph& g, const ir::Op& op, const QuantizedModel& q,
                                      const std::vector<const uint8_t*>& in) {
  auto unsupported = [&](const std::string& why) {
    return Unsupported("op '" + op.name + "' (" + op.type + "): no segment-aware kernel: " + why);
  };
  SP_ASSIGN_OR_RETURN(OpCalls c, BuildCallsS8(g, op, q));
  // The weights and bias are read below (their buffers hold the tensors' bytes).
  SP_RETURN_IF_ERROR(CheckKernelOperandTypes(g, op, true));
  if (in.size() != op.inputs.size()) return unsupported("one operand pointer per input is needed");
  if (c.host_loop || c.blocks.size() != 1 || c.blocks[0].count != 1 ||
      c.blocks[0].calls.size() != 1)
    return unsupported("its int8 record is not one kernel call");
  const KernelCall& k = c.blocks[0].calls[0];
  const bool fc = k.fn == KernelFn::kFullyConnectedS8;
  if (k.fn != KernelFn::kConvS8 && !fc) return unsupported("not a convolution or a fully connected layer");
  const auto& v = k.args;
  auto input_ptr = [&](const CallArg& a, const uint8_t** p) -> bool {
    const auto* r = std::get_if<CallRef>(&a);
    if (!r || r->base != CallRef::Base::kInput || r->index < 0 ||
        r->index >= static_cast<int>(in.size()) || r->step != 0 || !in[r->index])
      return false;
    *p = in[r->index] + r->offset;
    return true;
  };
  auto i64 = [&](size_t i) { return static_cast<int32_t>(std::get<int64_t>(v[i])); };
  SegLayerS8 l;
  l.fc = fc;
  const sp_tensor_t& x = std::get<sp_tensor_t>(v[0]);
  const sp_tensor_t& w = std::get<sp_tensor_t>(v[3]);
  const sp_tensor_t& y = std::get<sp_tensor_t>(fc ? v[10] : v[14]);
  const uint8_t *wp = nullptr, *bp = nullptr;
  const auto* xr = std::get_if<CallRef>(&v[1]);
  // The data input itself may be absent (a fused intermediate): only its descriptor is used.
  if (!xr || xr->base != CallRef::Base::kInput || xr->index != 0 || xr->offset != 0 ||
      xr->step != 0 || !input_ptr(v[4], &wp))
    return unsupported("its operands are not the op's input and weights");
  if (!std::holds_alternative<std::nullptr_t>(v[5]) && !input_ptr(v[5], &bp))
    return unsupported("its bias is not an operand");
  const auto* rqr = std::get_if<CallRef>(&v[6]);
  if (!rqr || rqr->base != CallRef::Base::kConst || rqr->index < 0 ||
      rqr->index >= static_cast<int>(c.consts.size()))
    return unsupported("no requantisation array");
  l.in_zp = i64(2);
  l.out_zp = i64(7);
  l.act_min = i64(8);
  l.act_max = i64(9);
  const int8_t* wv = reinterpret_cast<const int8_t*>(wp);
  int32_t nch = 0;
  if (fc) {
    if (!DenseRows(x) || !DenseRows(y) || w.rank != 2 || w.dims[0] != y.dims[1] ||
        w.dims[1] != x.dims[1])
      return unsupported("the operands are not dense [M, K] / [M, N] rows");
    l.m = x.dims[0];
    l.k = x.dims[1];
    l.n = y.dims[1];
    nch = l.n;
    l.weights.resize(static_cast<size_t>(l.n) * l.k);
    for (int32_t n = 0; n < l.n; ++n)
      for (int32_t kk = 0; kk < l.k; ++kk)
        l.weights[static_cast<size_t>(n) * l.k + kk] =
            wv[static_cast<int64_t>(n) * w.strides[0] + static_cast<int64_t>(kk) * w.strides[1]];
  } else {
    if (!DenseNhwc(x) || !DenseNhwc(y) || w.rank != 4)
      return unsupported("the feature maps are not dense NHWC with batch 1");
    const auto& st = std::get<std::vector<int32_t>>(v[10]);
    const auto& pd = std::get<std::vector<int32_t>>(v[11]);
    const auto& dl = std::get<std::vector<int32_t>>(v[12]);
    const int32_t groups = i64(13);
    l.h = x.dims[2];
    l.w = x.dims[3];
    l.c_in = x.dims[1];
    l.oh = y.dims[2];
    l.ow = y.dims[3];
    l.c_out = y.dims[1];
    l.r = w.dims[2];
    l.s = w.dims[3];
    l.stride_h = st[0];
    l.stride_w = st[1];
    for (int i = 0; i < 4; ++i) l.pad[i] = pd[i];
    l.dilation_h = dl[0];
    l.dilation_w = dl[1];
    l.depthwise = groups > 1;
    if (l.depthwise && (groups != l.c_in || l.c_out != l.c_in || w.dims[1] != 1))
      return unsupported("grouped convolutions other than depthwise (multiplier 1)");
    if (!l.depthwise && (groups != 1 || w.dims[1] != l.c_in || w.dims[0] != l.c_out))
      return unsupported("weights do not match the channels");
    nch = l.c_out;
    l.weights.resize(static_cast<size_t>(l.c_out) * l.r * l.s * (l.depthwise ? 1 : l.c_in));
    for (int32_t kk = 0; kk < l.c_out; ++kk)
      for (int32_t ci = 0; ci < w.dims[1]; ++ci)
        for (int32_t r = 0; r < l.r; ++r)
          for (int32_t s = 0; s < l.s; ++s) {
            const int8_t val = wv[static_cast<int64_t>(kk) * w.strides[0] +
                                  static_cast<int64_t>(ci) * w.strides[1] +
                                  static_cast<int64_t>(r) * w.strides[2] +
                                  static_cast<int64_t>(s) * w.strides[3]];
            const size_t dst = l.depthwise
                                   ? (static_cast<size_t>(r) * l.s + s) * l.c_in + kk
                                   : ((static_cast<size_t>(kk) * l.r + r) * l.s + s) * l.c_in + ci;
            l.weights[dst] = val;
          }
  }
  const ConstArray& rqa = c.consts[rqr->index];
  if (rqa.bytes.size() < static_cast<size_t>(nch) * sizeof(sp_requant_t))
    return unsupported("short requantisation array");
  l.rq.resize(nch);
  std::memcpy(l.rq.data(), rqa.bytes.data() + rqr->offset, static_cast<size_t>(nch) * sizeof(sp_requant_t));
  if (bp) {
    l.bias.resize(nch);
    std::memcpy(l.bias.data(), bp, static_cast<size_t>(nch) * sizeof(int32_t));
  }
  return l;
}

StatusOr<sp_add_s8_params_t> AddParamsS8(const ir::Graph& g, const ir::Op& op,
                                         const QuantizedModel& q) {
  SP_ASSIGN_OR_RETURN(OpCalls c, BuildCallsS8(g, op, q));
  if (c.host_loop || c.blocks.size() != 1 || c.blocks[0].count != 1 ||
      c.blocks[0].calls.size() != 1 || c.blocks[0].calls[0].fn != KernelFn::kAddS8)
    return Unsupported("op '" + op.name + "': its int8 record is not one sp_add_s8 call");
  const auto& v = c.blocks[0].calls[0].args;
  const auto* a = std::get_if<CallRef>(&v[1]);
  const auto* b = std::get_if<CallRef>(&v[3]);
  if (!a || !b || a->base != CallRef::Base::kInput || b->base != CallRef::Base::kInput ||
      a->index != 0 || b->index != 1 || a->offset != 0 || b->offset != 0)
    return Unsupported("op '" + op.name + "': its int8 Add does not read inputs 0 and 1 directly");
  return std::get<sp_add_s8_params_t>(v[4]);
}

namespace {

// The fields of a bottleneck shape that hold one layer's window: kernel, stride and padding.
struct WindowFields {
  int32_t &r, &s, &stride_h, &stride_w, &pad_top, &pad_left, &pad_bottom, &pad_right;
};

// Copies layer l's window into the fields f (the depthwise's and the expansion's use the same
// code).
void SetWindow(const SegLayerS8& l, WindowFields f) {
  f.r = l.r;
  f.s = l.s;
  f.stride_h = l.stride_h;
  f.stride_w = l.stride_w;
  f.pad_top = l.pad[0];
  f.pad_left = l.pad[1];
  f.pad_bottom = l.pad[2];
  f.pad_right = l.pad[3];
}

}  // namespace

StatusOr<SegBottleneckS8> SegBottleneckParamsS8(const ir::Graph& g, const std::vector<const ir::Op*>& sops,
                                                const QuantizedModel& q,
                                                const std::vector<std::vector<const uint8_t*>>& ins,
                                                const std::string& where) {
  const bool residual = sops.size() == 4;
  if (sops.size() < 3 || sops.size() > 4 || ins.size() != sops.size() || sops[0]->inputs.empty() ||
      sops[0]->outputs.empty() || sops[1]->inputs.empty() || sops[2]->inputs.empty() ||
      sops[1]->inputs[0] != sops[0]->outputs[0] || sops[2]->inputs[0] != sops[1]->outputs[0] ||
      sops[2]->outputs.empty() || (residual && (sops[3]->type != "Add" || sops[3]->inputs.size() != 2)))
    return InvalidArgument(where + ": a fused step must be Conv, DepthwiseConv, Conv 1x1 and an optional Add");
  SegBottleneckS8 b;
  SP_ASSIGN_OR_RETURN(b.expand, SegLayerParamsS8(g, *sops[0], q, ins[0]));
  SP_ASSIGN_OR_RETURN(b.depthwise, SegLayerParamsS8(g, *sops[1], q, ins[1]));
  SP_ASSIGN_OR_RETURN(b.project, SegLayerParamsS8(g, *sops[2], q, ins[2]));
  const SegLayerS8 &e = b.expand, &d = b.depthwise, &j = b.project;
  auto pointwise = [](const SegLayerS8& l) {
    return !l.fc && !l.depthwise && l.r == 1 && l.s == 1 && l.stride_h == 1 && l.stride_w == 1 && l.pad[0] == 0 &&
           l.pad[1] == 0 && l.pad[2] == 0 && l.pad[3] == 0;
  };
  if (e.fc || e.depthwise || e.dilation_h != 1 || e.dilation_w != 1 || !pointwise(j) || !d.depthwise ||
      d.dilation_h != 1 || d.dilation_w != 1 || (residual && !pointwise(e)))
    return InvalidArgument(where + ": a fused step must be Conv (no dilation; 1x1 with a residual), "
                           "DepthwiseConv (no dilation), Conv 1x1");
  sp_seg_bottleneck_shape_t& bs = b.shape;
  bs.h = e.h;
  bs.w = e.w;
  bs.c_in = e.c_in;
  bs.c_mid = e.c_out;
  bs.c_out = j.c_out;
  SetWindow(d, {bs.r, bs.s, bs.stride_h, bs.stride_w, bs.pad_top, bs.pad_left, bs.pad_bottom,
                bs.pad_right});
  bs.has_expand = 1;
  bs.has_residual = residual ? 1 : 0;
  SetWindow(e, {bs.e_r, bs.e_s, bs.e_stride_h, bs.e_stride_w, bs.e_pad_top, bs.e_pad_left,
                bs.e_pad_bottom, bs.e_pad_right});
  if (residual) {
    const ir::Op& a = *sops[3];
    const ir::Op& first = *sops[0];
    const bool in1_is_x = a.inputs[0] == first.inputs[0] && a.inputs[1] == sops[2]->outputs[0];
    const bool in2_is_x = a.inputs[1] == first.inputs[0] && a.inputs[0] == sops[2]->outputs[0];
    if ((!in1_is_x && !in2_is_x) || a.outputs.empty())
      return InvalidArgument(where + ": the fused Add must add the group input to the projection");
    SP_ASSIGN_OR_RETURN(b.add, AddParamsS8(g, a, q));
    if (!in1_is_x) {  // the kernel's in1 is the group input (the sum is symmetric)
      std::swap(b.add.in1_zp, b.add.in2_zp);
      std::swap(b.add.in1_rq, b.add.in2_rq);
    }
    b.residual = true;
  }
  return b;
}

bool IsFusedIntermediate(const ir::Graph& g, const std::vector<const ir::Op*>& step_ops, ir::TensorId id) {
  const ir::Tensor& t = g.tensor(id);
  if (t.kind != ir::TensorKind::kActivation || !t.producer.valid()) return false;
  auto in_step = [&](ir::OpId op) {
    for (const ir::Op* o : step_ops)
      if (o->id == op) return true;
    return false;
  };
  if (!in_step(t.producer)) return false;
  for (ir::OpId c : t.consumers)
    if (!in_step(c)) return false;
  return true;
}

}  // namespace sramplan::exec
