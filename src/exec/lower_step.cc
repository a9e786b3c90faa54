#include "exec/lower_step.h"

#include <utility>

#include "exec/hybrid.h"
#include "exec/quantize.h"
#include "sramplan_rt_seg.h"

namespace sramplan::exec {
namespace {

Status Mismatch(const std::string& m) { return Status(StatusCode::kMismatch, m); }

std::string Where(int s) { return "step " + std::to_string(s); }

// ---- kOp and kInPlaceDepthwise: the ops one after another -----------------------------------------

// Whether an output of `op` shares bytes with one of its inputs at step s (their buffers in one
// level, as the tensors' bytes lie from the buffers' offsets).
bool Aliased(const StepLowering& l, const ir::Op& op, int s) {
  const ir::Graph& g = l.graph();
  for (ir::TensorId i : op.inputs)
    for (ir::TensorId o : op.outputs) {
      const plan::Buffer* bi = l.LiveBuffer(g.tensor(i).name, s);
      const plan::Buffer* bo = l.LiveBuffer(g.tensor(o).name, s);
      if (!bi || !bo || bi->level != bo->level) continue;
      const int64_t ilo = bi->offset, ihi = ilo + g.tensor(i).Bytes();
      const int64_t olo = bo->offset, ohi = olo + g.tensor(o).Bytes();
      if (ilo < ohi && olo < ihi) return true;
    }
  return false;
}

// An output that shares bytes with an input: element-wise kernels may run in place; a depthwise
// convolution of an in-place step runs TinyEngine's way through the step's scratch; nothing else may.
StatusOr<StepCalls> LowerPlain(const StepLowering& l, int s, StepCalls sc) {
  const ir::Graph& g = l.graph();
  const plan::Step& st = l.plan().steps[s];
  for (const ir::Op* op : sc.ops) {
    LoweredOp lo;
    lo.op = op;
    // Only the segment-aware kernels address a buffer that wraps around a circular pool.
    for (int io = 0; io < 2; ++io)
      for (ir::TensorId id : io == 0 ? op->inputs : op->outputs) {
        const plan::Buffer* b = l.LiveBuffer(g.tensor(id).name, s);
        if (b && plan::Wraps(l.plan(), *b))
          return Mismatch(Where(s) + " op '" + op->name + "': tensor '" + g.tensor(id).name +
                          "' wraps around the circular pool of level '" + b->level +
                          "'; only the segment-aware kernels address it modulo the pool");
      }
    const bool aliased = !ir::IsViewOp(op->type) && Aliased(l, *op, s);
    if (aliased && ir::IsDepthwiseConv(g, *op)) {
      const plan::Buffer* scratch = nullptr;
      if (st.kind == plan::StepKind::kInPlaceDepthwise && !st.workspace.empty())
        scratch = l.LiveBuffer(st.workspace, s);
      if (!scratch)
        return Mismatch(Where(s) + " op '" + op->name +
                        "': a depthwise convolution writes over its input but the plan gives it no scratch buffer");
      lo.in_place = true;
      sc.workspace = scratch;
      if (l.quant()) {
        auto calls = BuildDepthwiseInPlaceCallsS8(g, *op, *l.quant(), scratch->bytes);
        if (!calls.ok()) return calls.status().WithContext(Where(s));
        lo.calls = std::move(calls).value();
      }
    } else {
      if (aliased && !ir::IsUnaryElementwise(op->type) && !ir::IsBinaryElementwise(op->type))
        return Mismatch(Where(s) + " op '" + op->name + "' (" + op->type +
                        "): an output overlaps an input, which this kernel cannot do in place");
      if (l.quant() && !ir::IsViewOp(op->type) && !IsHybridHostOp(g, *op)) {  // exec/hybrid.h
        auto calls = BuildCallsS8(g, *op, *l.quant());
        if (!calls.ok()) return calls.status().WithContext(Where(s));
        lo.calls = std::move(calls).value();
      }
    }
    sc.op_calls.push_back(std::move(lo));
  }
  return sc;
}

// ---- kSegment and kFusedBottleneck: one segment-aware kernel on the circular pool ---------------

// The pool operands, the pool and the operand pointers the parameter helpers read (constants: their
// quantised data; the weights and biases they repack), shared by both segment kinds.
struct SegmentOperands {
  SegPoolArg pool;
  std::vector<std::vector<const uint8_t*>> ins;
  int64_t segment_bytes = 1;
};

StatusOr<SegmentOperands> SegmentSetup(const StepLowering& l, int s, StepCalls* sc) {
  const ir::Graph& g = l.graph();
  const std::string where = Where(s);
  if (!l.quant())
    return Unsupported(where + " is a vmcu segment step: vmcu plans run in int8 (pass --dtype int8)");
  SegmentOperands so;
  so.ins.resize(sc->ops.size());
  for (size_t i = 0; i < sc->ops.size(); ++i)
    for (ir::TensorId id : sc->ops[i]->inputs) {
      const ir::Tensor& t = g.tensor(id);
      const bool constant = t.kind == ir::TensorKind::kConstant && !IsFusedIntermediate(g, sc->ops, id);
      so.ins[i].push_back(constant ? l.quant()->data.values[id.value()].data() : nullptr);
    }
  const ir::Op& first = *sc->ops.front();
  const ir::Op& last = *sc->ops.back();
  if (first.inputs.empty() || last.outputs.empty())
    return Mismatch(where + ": a segment step needs an input and an output");
  const ir::Tensor& xt = g.tensor(first.inputs[0]);
  const ir::Tensor& yt = g.tensor(last.outputs[0]);
  sc->input = l.LiveBuffer(xt.name, s);
  sc->output = l.LiveBuffer(yt.name, s);
  if (!sc->input || !sc->output || sc->input->level != sc->output->level || l.Offchip(sc->input->level))
    return Mismatch(where + " op '" + first.name + "': the input '" + xt.name + "' and output '" + yt.name +
                    "' of a segment step must be in one on-chip level");
  int64_t size = 0;
  for (const plan::Level& lv : l.plan().levels)
    if (lv.name == sc->input->level) size = lv.used_bytes;
  if (size >= (int64_t{1} << 30))
    return Mismatch(where + ": level '" + sc->input->level + "' is too large for the segment kernels");
  const int64_t seg = std::max<int64_t>(l.plan().steps[s].segment_bytes, 1);
  so.segment_bytes = seg;
  so.pool.segment_bytes = static_cast<int32_t>(size % seg == 0 ? seg : 1);  // starts are bytes anyway
  so.pool.pool_segments = static_cast<int32_t>(size / so.pool.segment_bytes);
  return so;
}

// The call: pool, starts, shape, parameters, then the workspace of at least `need` bytes.
template <typename Shape, typename Params>
Status SegmentCall(const StepLowering& l, int s, KernelFn fn, const SegPoolArg& pool, Shape shape,
                   Params params, int64_t need, StepCalls* sc) {
  SP_ASSIGN_OR_RETURN(sc->workspace, SegmentStepWorkspace(l.plan(), s, need));
  KernelCall k;
  k.fn = fn;
  k.args = {CallArg(pool),
            CallArg(std::in_place_type<int64_t>, sc->input->offset),
            CallArg(std::in_place_type<int64_t>, sc->output->offset),
            CallArg(std::move(shape)),
            CallArg(std::move(params)),
            CallArg(CallRef{CallRef::Base::kScratch, 0, 0, 0}),
            CallArg(std::in_place_type<int64_t>, sc->workspace->bytes)};
  sc->segment = std::move(k);
  return Status::Ok();
}

StatusOr<StepCalls> LowerSegmentLayer(const StepLowering& l, int s, StepCalls sc) {
  if (sc.ops.size() != 1) return Mismatch(Where(s) + ": a segment step runs one op");
  SP_ASSIGN_OR_RETURN(SegmentOperands so, SegmentSetup(l, s, &sc));
  SP_ASSIGN_OR_RETURN(SegLayerS8 layer, SegLayerParamsS8(l.graph(), *sc.ops[0], *l.quant(), so.ins[0]));
  const int64_t need = SegLayerWorkspaceBytes(layer, so.segment_bytes);
  if (layer.fc) {
    const sp_seg_fc_shape_t fs{layer.m, layer.k, layer.n, static_cast<int32_t>(so.segment_bytes)};
    SP_RETURN_IF_ERROR(SegmentCall(l, s, KernelFn::kSegFullyConnectedS8, so.pool, fs, std::move(layer), need, &sc));
    return sc;
  }
  const sp_seg_conv_shape_t cs{layer.h,        layer.w,        layer.c_in,   layer.c_out,  layer.r,
                               layer.s,        layer.stride_h, layer.stride_w, layer.pad[0], layer.pad[1],
                               layer.pad[2],   layer.pad[3],   layer.dilation_h, layer.dilation_w};
  const KernelFn fn = layer.depthwise ? KernelFn::kSegDepthwiseS8 : KernelFn::kSegConvS8;
  SP_RETURN_IF_ERROR(SegmentCall(l, s, fn, so.pool, cs, std::move(layer), need, &sc));
  return sc;
}

// Fused inverted bottleneck: Conv -> DepthwiseConv -> Conv 1x1 [-> Add of the group input].
StatusOr<StepCalls> LowerBottleneck(const StepLowering& l, int s, StepCalls sc) {
  SP_ASSIGN_OR_RETURN(SegmentOperands so, SegmentSetup(l, s, &sc));
  SP_ASSIGN_OR_RETURN(SegBottleneckS8 fb, SegBottleneckParamsS8(l.graph(), sc.ops, *l.quant(), so.ins, Where(s)));
  if (fb.residual && sc.ops[3]->outputs[0] != sc.ops.back()->outputs[0])
    return Mismatch(Where(s) + ": the fused Add must write the step's output");
  sp_seg_bottleneck_shape_t bs = fb.shape;
  if (l.plan().steps[s].row_cache) bs.row_cache = 1;  // the workspace variant the plan chose
  fb.shape = bs;
  const int64_t need = sp_seg_bottleneck_workspace_bytes(&bs);
  SP_RETURN_IF_ERROR(SegmentCall(l, s, KernelFn::kSegBottleneckS8, so.pool, bs, std::move(fb), need, &sc));
  return sc;
}

// kFusedTiled: an Optimus group, run strip by strip in the global buffer (the level of the step's
// workspace, at its capacity B_c).
StatusOr<StepCalls> LowerTiled(const StepLowering& l, int s, StepCalls sc) {
  const plan::Step& st = l.plan().steps[s];
  const plan::Buffer* ws = st.workspace.empty() ? nullptr : l.LiveBuffer(st.workspace, s);
  if (!ws || l.Offchip(ws->level))
    return Mismatch(Where(s) + ": a fused-tiled group needs its workspace '" + st.workspace + "' on chip");
  int64_t capacity = 0;
  for (const plan::Level& lv : l.plan().levels)
    if (lv.name == ws->level) capacity = lv.capacity;
  // Maps kept in the global buffer between groups (keep-on-chip) take their bytes from the group's.
  for (const plan::Buffer& b : l.plan().buffers)
    if (&b != ws && b.level == ws->level && b.first_step <= s && s <= b.last_step) capacity -= b.bytes;
  SP_ASSIGN_OR_RETURN(TiledSchedule ts, BuildTiledSchedule(l.graph(), l.plan(), s, sc.ops, capacity, l.quant() != nullptr));
  // A group input or output on chip at this step moves no DRAM bytes.
  for (TiledTensor& t : ts.tensors) {
    if (t.producer >= 0 && !t.to_dram) continue;
    const plan::Buffer* b = l.LiveBuffer(l.graph().tensor(t.id).name, s);
    if (!b || l.Offchip(b->level)) continue;
    t.on_chip = true;
    (t.producer < 0 ? ts.read_bytes : ts.write_bytes) -= l.graph().tensor(t.id).Bytes();
  }
  sc.workspace = ws;
  sc.tiled = std::make_shared<const TiledSchedule>(std::move(ts));
  return sc;
}

}  // namespace

StepLowering::StepLowering(const ir::Graph& g, const plan::Plan& p, const QuantizedModel* q)
    : g_(g), p_(p), q_(q) {
  for (const ir::Op& op : g.ops()) ops_[op.name] = &op;
  for (const plan::Buffer& b : p.buffers) buffers_[b.tensor].push_back(&b);
  for (const plan::Tensor& t : p.tensors) tensors_[t.name] = &t;
  for (const plan::Level& lv : p.levels) offchip_[lv.name] = lv.kind == "flash" || lv.kind == "dram";
}

const ir::Op* StepLowering::FindOp(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second;
}

bool StepLowering::Offchip(const std::string& level) const {
  auto it = offchip_.find(level);
  return it != offchip_.end() && it->second;
}

std::string AliasRoot(const std::unordered_map<std::string, const plan::Tensor*>& tensors, const std::string& name) {
  std::string cur = name;
  for (int guard = 0; guard < 64; ++guard) {
    auto it = tensors.find(cur);
    if (it == tensors.end() || it->second->alias_of.empty()) break;
    cur = it->second->alias_of;
  }
  return cur;
}

std::string StepLowering::RootOf(const std::string& name) const { return AliasRoot(tensors_, name); }

const plan::Buffer* StepLowering::LiveBuffer(const std::string& tensor, int s) const {
  auto it = buffers_.find(RootOf(tensor));
  const plan::Buffer* hit = nullptr;
  if (it != buffers_.end())
    for (const plan::Buffer* b : it->second)
      if (b->first_step <= s && s <= b->last_step && (!hit || (Offchip(hit->level) && !Offchip(b->level)))) hit = b;
  return hit;
}

StatusOr<StepCalls> LowerStep(const StepLowering& l, int s) {
  const plan::Plan& p = l.plan();
  if (s < 0 || s >= static_cast<int>(p.steps.size())) return Mismatch(Where(s) + " does not exist");
  const plan::Step& st = p.steps[s];
  StepCalls sc;
  sc.step = s;
  sc.kind = st.kind;
  for (const plan::StepOp& so : st.ops) {
    const ir::Op* op = l.FindOp(so.name);
    if (!op) return Mismatch(Where(s) + " runs op '" + so.name + "', which the model does not have");
    sc.ops.push_back(op);
    if (l.quant() && (st.kind == plan::StepKind::kSegment || st.kind == plan::StepKind::kFusedBottleneck) &&
        IsHybridHostOp(l.graph(), *op))
      return Unsupported(Where(s) + " (" + plan::StepKindName(st.kind) + ") runs op '" + op->name + "' (" + op->type +
                         "), which runs in float32 in this hybrid int8 graph; the segment-aware kernels are int8");
  }
  switch (st.kind) {
    case plan::StepKind::kOp:
    case plan::StepKind::kInPlaceDepthwise:
      return LowerPlain(l, s, std::move(sc));
    case plan::StepKind::kSegment:
      return LowerSegmentLayer(l, s, std::move(sc));
    case plan::StepKind::kFusedBottleneck:
      if (sc.ops.empty()) return Mismatch(Where(s) + " runs no op");
      return LowerBottleneck(l, s, std::move(sc));
    case plan::StepKind::kFusedTiled:
      return LowerTiled(l, s, std::move(sc));
    case plan::StepKind::kModule:
      break;
  }
  return Unsupported(Where(s) + " is of kind '" + plan::StepKindName(st.kind) +
                     "', which is not supported yet (reserved for module buffering)");
}

}  // namespace sramplan::exec
