#include "exec/executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "exec/kernels.h"
#include "exec/quantize.h"
#include "sramplan_rt_seg.h"

namespace sramplan::exec {
namespace {

Status Mismatch(std::string m) { return Status(StatusCode::kMismatch, std::move(m)); }

ExecResult CollectOutputs(const ir::Graph& g, const std::vector<const uint8_t*>& ptr_of_tensor) {
  ExecResult r;
  for (ir::TensorId id : g.Outputs()) {
    const ir::Tensor& t = g.tensor(id);
    r.output_names.push_back(t.name);
    const uint8_t* p = ptr_of_tensor[id.value()];
    r.outputs.emplace_back(p, p + t.Bytes());
  }
  return r;
}

// The weights and inputs a run copies or reads: one value per tensor, each exactly the tensor's bytes.
Status CheckModelData(const ir::Graph& g, const ModelData& data) {
  if (data.values.size() != static_cast<size_t>(g.num_tensors()))
    return InvalidArgument("the model data has " + std::to_string(data.values.size()) + " values for " +
                           std::to_string(g.num_tensors()) + " tensors");
  for (const ir::Tensor& t : g.tensors())
    if ((t.kind == ir::TensorKind::kConstant || t.kind == ir::TensorKind::kInput) &&
        static_cast<int64_t>(data.values[t.id.value()].size()) != t.Bytes())
      return InvalidArgument("the data of " + std::string(ir::TensorKindName(t.kind)) + " '" + t.name + "' has " +
                             std::to_string(data.values[t.id.value()].size()) + " bytes; the tensor (" +
                             ir::DataTypeName(t.dtype) + ") has " + std::to_string(t.Bytes()));
  return Status::Ok();
}

}  // namespace

StatusOr<ExecResult> RunNaive(const ir::Graph& g, const analysis::Schedule& order, const ModelData& data,
                              const QuantizedModel* quant, const OpObserver* observer) {
  SP_RETURN_IF_ERROR(analysis::ValidateSchedule(g, order));
  SP_RETURN_IF_ERROR(CheckModelData(g, data));
  std::vector<std::vector<uint8_t>> own(g.num_tensors());
  std::vector<const uint8_t*> ptr(g.num_tensors(), nullptr);
  std::vector<int64_t> avail(g.num_tensors(), 0);  // the bytes behind ptr[t]
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind == ir::TensorKind::kConstant || t.kind == ir::TensorKind::kInput) {
      ptr[t.id.value()] = data.values[t.id.value()].data();
      avail[t.id.value()] = static_cast<int64_t>(data.values[t.id.value()].size());
    } else if (g.StorageRoot(t.id) == t.id) {
      own[t.id.value()].assign(static_cast<size_t>(t.Bytes()), 0);
      ptr[t.id.value()] = own[t.id.value()].data();
      avail[t.id.value()] = t.Bytes();
    }
  }
  for (const ir::Tensor& t : g.tensors())
    if (!ptr[t.id.value()]) {
      ptr[t.id.value()] = ptr[g.StorageRoot(t.id).value()];
      avail[t.id.value()] = avail[g.StorageRoot(t.id).value()];
    }
  for (ir::OpId id : order) {
    const ir::Op& op = g.op(id);
    std::vector<const uint8_t*> in;
    std::vector<uint8_t*> out;
    OperandBytes bytes;
    for (ir::TensorId t : op.inputs) {
      in.push_back(ptr[t.value()]);
      bytes.in.push_back(avail[t.value()]);
    }
    for (ir::TensorId t : op.outputs) {
      out.push_back(const_cast<uint8_t*>(ptr[t.value()]));
      bytes.out.push_back(avail[t.value()]);
    }
    SP_RETURN_IF_ERROR(quant ? RunKernelS8(g, op, *quant, in, out, bytes) : RunKernel(g, op, in, out, bytes));
    if (observer) (*observer)(op, out);
  }
  ExecResult r = CollectOutputs(g, ptr);
  r.steps = static_cast<int>(order.size());
  return r;
}

StatusOr<ExecResult> RunArena(const ir::Graph& g, const plan::Plan& p, const ModelData& data,
                              const QuantizedModel* quant) {
  SP_RETURN_IF_ERROR(CheckModelData(g, data));
  // Memories: one array per level, exactly as large as the plan uses.
  std::map<std::string, std::vector<uint8_t>> mem;
  std::map<std::string, bool> offchip;
  for (const auto& l : p.levels) {
    mem[l.name].assign(static_cast<size_t>(l.used_bytes), kPoison);
    offchip[l.name] = l.kind == "flash" || l.kind == "dram";
  }
  std::unordered_map<std::string, std::vector<const plan::Buffer*>> buffers;
  for (const auto& b : p.buffers) {
    auto it = mem.find(b.level);
    if (it == mem.end()) return Mismatch("buffer of '" + b.tensor + "' names unknown level '" + b.level + "'");
    int64_t end = 0;  // a buffer that wraps around the level's circular pool ends at the pool's end
    for (const auto& [lo, hi] : plan::BufferPieces(p, b)) end = std::max(end, hi);
    if (b.offset < 0 || b.bytes < 0 || end > static_cast<int64_t>(it->second.size()))
      return Mismatch("buffer of '" + b.tensor + "' [" + std::to_string(b.offset) + ", " +
                      std::to_string(b.offset + b.bytes) + ") lies outside level '" + b.level + "' of " +
                      std::to_string(it->second.size()) + " bytes");
    buffers[b.tensor].push_back(&b);
  }
  std::unordered_map<std::string, const plan::Tensor*> ptensors;
  for (const auto& t : p.tensors) ptensors[t.name] = &t;
  auto root_of = [&](const std::string& name) {
    std::string cur = name;
    for (int guard = 0; guard < 64; ++guard) {
      auto it = ptensors.find(cur);
      if (it == ptensors.end() || it->second->alias_of.empty()) break;
      cur = it->second->alias_of;
    }
    return cur;
  };
  // The buffer holding `tensor` at step s, checked to cover the tensor's bytes. A buffer that wraps
  // around its level's circular pool is contiguous only to the segment kernels (allow_wrap: the
  // caller addresses it modulo the pool; the returned pointer is then only its start).
  auto locate_buffer = [&](const ir::Tensor& t, int s, const std::string& opname, bool allow_wrap,
                           bool* off) -> StatusOr<const plan::Buffer*> {
    std::string root = root_of(t.name);
    auto it = buffers.find(root);
    // An op reads the on-chip copy when there is one (a reloaded tensor also has its DRAM copy).
    const plan::Buffer* hit = nullptr;
    if (it != buffers.end())
      for (const plan::Buffer* b : it->second)
        if (b->first_step <= s && s <= b->last_step && (!hit || (offchip[hit->level] && !offchip[b->level]))) hit = b;
    if (!hit)
      return Mismatch("step " + std::to_string(s) + " op '" + opname + "': tensor '" + t.name + "'" +
                      (root != t.name ? " (stored in '" + root + "')" : "") + " has no buffer live at this step");
    if (t.Bytes() > hit->bytes)
      return Mismatch("step " + std::to_string(s) + " op '" + opname + "': tensor '" + t.name + "' needs " +
                      std::to_string(t.Bytes()) + " bytes but its buffer has " + std::to_string(hit->bytes));
    if (!allow_wrap && plan::Wraps(p, *hit))
      return Mismatch("step " + std::to_string(s) + " op '" + opname + "': tensor '" + t.name +
                      "' wraps around the circular pool of level '" + hit->level +
                      "'; only the segment-aware kernels address it modulo the pool");
    *off = offchip[hit->level];
    return hit;
  };
  auto locate = [&](const ir::Tensor& t, int s, const std::string& opname, bool* off,
                    bool allow_wrap = false, int64_t* bytes = nullptr) -> StatusOr<uint8_t*> {
    SP_ASSIGN_OR_RETURN(const plan::Buffer* hit, locate_buffer(t, s, opname, allow_wrap, off));
    if (bytes) *bytes = hit->bytes;  // checked above to lie inside the level
    return mem[hit->level].data() + hit->offset;
  };
  std::unordered_map<std::string, const ir::Op*> ops;
  for (const ir::Op& op : g.ops()) ops[op.name] = &op;
  ExecResult r;
  const int n = static_cast<int>(p.steps.size());
  // Weights go to their planned place before the run (flash programming / DRAM preload); inputs are
  // written by the application before step 0. Neither is counted as traffic.
  for (const ir::Tensor& t : g.tensors()) {
    if (t.kind != ir::TensorKind::kConstant && t.kind != ir::TensorKind::kInput) continue;
    if (t.consumers.empty()) continue;
    bool off = false;
    int first_use = n;
    for (ir::OpId c : t.consumers)
      for (int s = 0; s < n; ++s)
        for (const auto& so : p.steps[s].ops)
          if (so.name == g.op(c).name) first_use = std::min(first_use, s);
    if (first_use == n) continue;
    // The data starts in its off-chip copy when the plan has one (budget plans load it from DRAM).
    const plan::Buffer* home = nullptr;
    auto bit = buffers.find(t.name);
    if (bit != buffers.end())
      for (const plan::Buffer* b : bit->second)
        if (offchip[b->level] && b->first_step <= first_use && (!home || b->first_step < home->first_step)) home = b;
    if (home) {
      if (t.Bytes() > home->bytes) return Mismatch("buffer of '" + t.name + "' is smaller than the tensor");
      std::memcpy(mem[home->level].data() + home->offset, data.values[t.id.value()].data(), static_cast<size_t>(t.Bytes()));
      continue;
    }
    SP_ASSIGN_OR_RETURN(const plan::Buffer* dst, locate_buffer(t, first_use, "(initial data)", true, &off));
    // An input may wrap around a circular pool (the first segment step reads it modulo the pool).
    const uint8_t* src = data.values[t.id.value()].data();
    int64_t done = 0;
    for (const auto& [lo, hi] : plan::BufferPieces(p, *dst)) {
      const int64_t len = std::min(hi - lo, t.Bytes() - done);
      if (len <= 0) break;
      std::memcpy(mem[dst->level].data() + lo, src + done, static_cast<size_t>(len));
      done += len;
    }
  }
  std::map<int, std::vector<const plan::Transfer*>> transfers;
  for (const auto& tr : p.transfers) transfers[tr.step].push_back(&tr);
  // Loads and reloads run before the step's ops, spills and stores after them (plan-format.md).
  auto run_transfers = [&](int s, bool before) -> Status {
    for (const plan::Transfer* tr : transfers[s]) {
      const bool is_before = tr->kind == "load" || tr->kind == "reload";
      if (is_before != before) continue;
      const plan::Buffer *from = nullptr, *to = nullptr;
      for (const plan::Buffer* b : buffers[tr->tensor]) {
        if (b->level == tr->from && b->first_step <= s && s <= b->last_step) from = b;
        if (b->level == tr->to && b->first_step <= s && s <= b->last_step) to = b;
      }
      if (!from || !to || from == to || tr->bytes < 0 || tr->bytes > from->bytes || tr->bytes > to->bytes)
        return Mismatch("transfer of '" + tr->tensor + "' at step " + std::to_string(s) + " from '" + tr->from +
                        "' to '" + tr->to + "' has no live buffer at one end or moves more bytes than it holds");
      std::memmove(mem[to->level].data() + to->offset, mem[from->level].data() + from->offset,
                   static_cast<size_t>(tr->bytes));
      if (offchip[from->level]) r.offchip_read_bytes += tr->bytes;
      if (offchip[to->level]) r.offchip_write_bytes += tr->bytes;
    }
    return Status::Ok();
  };
  // vMCU steps: an output placed over its dying input ("segment-overlap") or a fused group of
  // ops run the segment-aware kernels (sramplan_rt_seg.h) on the arena level as a circular pool.
  auto live_buffer = [&](const std::string& tensor, int s) -> const plan::Buffer* {
    auto it = buffers.find(root_of(tensor));
    const plan::Buffer* hit = nullptr;
    if (it != buffers.end())
      for (const plan::Buffer* b : it->second)
        if (b->first_step <= s && s <= b->last_step && (!hit || (offchip[hit->level] && !offchip[b->level]))) hit = b;
    return hit;
  };
  auto is_segment_step = [&](int s) { return plan::IsSegmentStep(p, s); };
  auto run_segment_step = [&](int s) -> Status {
    const std::string where = "step " + std::to_string(s);
    if (!quant)
      return Unsupported(where + " is a vmcu segment step: vmcu plans run in int8 (pass --dtype int8)");
    std::vector<const ir::Op*> sops;
    for (const auto& so : p.steps[s].ops) {
      auto it = ops.find(so.name);
      if (it == ops.end()) return Mismatch(where + " runs op '" + so.name + "', which the model does not have");
      sops.push_back(it->second);
    }
    // Operand pointers of every op; tensors produced and consumed inside the step (the fused
    // intermediates) have no buffer and stay null. Off-chip bytes count as on the plain path.
    auto inside = [&](ir::TensorId id) { return IsFusedIntermediate(g, sops, id); };
    std::vector<std::vector<const uint8_t*>> ins(sops.size());
    for (size_t i = 0; i < sops.size(); ++i) {
      const ir::Op& op = *sops[i];
      for (ir::TensorId id : op.inputs) {
        if (inside(id)) {
          ins[i].push_back(nullptr);
          continue;
        }
        bool off = false;  // the pool operands may wrap (the kernels address them modulo the pool)
        SP_ASSIGN_OR_RETURN(uint8_t* ptr, locate(g.tensor(id), s, op.name, &off, true));
        if (off) r.offchip_read_bytes += g.tensor(id).Bytes();
        ins[i].push_back(ptr);
      }
      for (ir::TensorId id : op.outputs) {
        if (inside(id)) continue;
        bool off = false;
        SP_ASSIGN_OR_RETURN(uint8_t* ptr, locate(g.tensor(id), s, op.name, &off, true));
        (void)ptr;
        if (off) r.offchip_write_bytes += g.tensor(id).Bytes();
      }
    }
    const ir::Op& first = *sops.front();
    const ir::Op& last = *sops.back();
    if (first.inputs.empty() || last.outputs.empty()) return Mismatch(where + ": a segment step needs an input and an output");
    const ir::Tensor& xt = g.tensor(first.inputs[0]);
    const ir::Tensor& yt = g.tensor(last.outputs[0]);
    const plan::Buffer* bx = live_buffer(xt.name, s);
    const plan::Buffer* by = live_buffer(yt.name, s);
    if (!bx || !by || bx->level != by->level || offchip[bx->level])
      return Mismatch(where + " op '" + first.name + "': the input '" + xt.name + "' and output '" + yt.name +
                      "' of a segment step must be in one on-chip level");
    std::vector<uint8_t>& level = mem[bx->level];
    const int64_t size = static_cast<int64_t>(level.size());
    if (size >= (int64_t{1} << 30)) return Mismatch(where + ": level '" + bx->level + "' is too large for the segment kernels");
    int64_t seg = 1;
    for (const auto& so : p.steps[s].ops) {
      auto it = so.attrs.find("segment_bytes");
      if (it != so.attrs.end() && !it->second.empty()) seg = it->second[0];
    }
    if (seg < 1) seg = 1;
    sp_seg_pool_t pool;
    pool.base = reinterpret_cast<int8_t*>(level.data());
    pool.segment_bytes = static_cast<int32_t>(size % seg == 0 ? seg : 1);  // starts are bytes anyway
    pool.pool_segments = static_cast<int32_t>(size / pool.segment_bytes);
    const int32_t in_start = static_cast<int32_t>(bx->offset), out_start = static_cast<int32_t>(by->offset);
    auto layer_view = [](const SegLayerS8& l) {
      return sp_seg_layer_s8_t{l.weights.data(), l.bias.empty() ? nullptr : l.bias.data(), l.rq.data(),
                               l.in_zp, l.out_zp, l.act_min, l.act_max};
    };
    // The workspace: the plan's `<first op>.workspace` buffer, as large as the kernel needs (kernels.h).
    int8_t* ws = nullptr;
    int64_t ws_bytes = 0;
    auto use_ws = [&](int64_t need) -> Status {
      SP_ASSIGN_OR_RETURN(const plan::Buffer* b, SegmentStepWorkspace(p, s, need));
      if (b->offset < 0 || b->offset + b->bytes > static_cast<int64_t>(mem[b->level].size()) || plan::Wraps(p, *b))
        return Mismatch(where + ": the workspace '" + b->tensor + "' lies outside level '" + b->level + "'");
      ws = reinterpret_cast<int8_t*>(mem[b->level].data() + b->offset);
      ws_bytes = b->bytes;
      return Status::Ok();
    };
    sp_status_t st = SP_BAD_ARGUMENT;
    std::string kernel;
    if (sops.size() == 1) {
      SP_ASSIGN_OR_RETURN(SegLayerS8 l, SegLayerParamsS8(g, first, *quant, ins[0]));
      const sp_seg_layer_s8_t v = layer_view(l);
      SP_RETURN_IF_ERROR(use_ws(SegLayerWorkspaceBytes(l, seg)));
      if (l.fc) {
        sp_seg_fc_shape_t fs{l.m, l.k, l.n, static_cast<int32_t>(seg)};
        kernel = "sp_seg_fully_connected_s8";
        st = sp_seg_fully_connected_s8(&pool, in_start, out_start, &fs, &v, ws, static_cast<int32_t>(ws_bytes));
      } else {
        sp_seg_conv_shape_t cs{l.h,      l.w,      l.c_in,   l.c_out,  l.r,          l.s,
                               l.stride_h, l.stride_w, l.pad[0], l.pad[1], l.pad[2], l.pad[3],
                               l.dilation_h, l.dilation_w};
        kernel = l.depthwise ? "sp_seg_depthwise_s8" : "sp_seg_conv_s8";
        st = l.depthwise ? sp_seg_depthwise_s8(&pool, in_start, out_start, &cs, &v, ws, static_cast<int32_t>(ws_bytes))
                         : sp_seg_conv_s8(&pool, in_start, out_start, &cs, &v, ws, static_cast<int32_t>(ws_bytes));
      }
    } else {
      // Fused inverted bottleneck: Conv -> DepthwiseConv -> Conv 1x1 [-> Add of the group input].
      SP_ASSIGN_OR_RETURN(SegBottleneckS8 fb, SegBottleneckParamsS8(g, sops, *quant, ins, where));
      if (fb.residual && sops[3]->outputs[0] != last.outputs[0])
        return Mismatch(where + ": the fused Add must write the step's output");
      const SegLayerS8 &e = fb.expand, &d = fb.depthwise, &j = fb.project;
      sp_seg_bottleneck_shape_t bs = fb.shape;
      for (const auto& so : p.steps[s].ops) {  // the workspace variant the plan chose
        auto it = so.attrs.find("row_cache");
        if (it != so.attrs.end() && !it->second.empty() && it->second[0] != 0) bs.row_cache = 1;
      }
      sp_add_s8_params_t add = fb.add;
      const bool residual = fb.residual;
      sp_seg_bottleneck_s8_t bp;
      bp.expand = layer_view(e);
      bp.depthwise = layer_view(d);
      bp.project = layer_view(j);
      bp.residual = residual ? &add : nullptr;
      SP_RETURN_IF_ERROR(use_ws(sp_seg_bottleneck_workspace_bytes(&bs)));
      kernel = "sp_seg_bottleneck_s8";
      st = sp_seg_bottleneck_s8(&pool, in_start, out_start, &bs, &bp, ws, static_cast<int32_t>(ws_bytes));
    }
    if (st != SP_OK)
      return Mismatch(where + " op '" + first.name + "': the segment-aware kernel " + kernel +
                      " refused the placement (input at " + std::to_string(in_start) + ", output at " +
                      std::to_string(out_start) + ", workspace " + std::to_string(ws_bytes) + " bytes)");
    return Status::Ok();
  };
  const std::vector<plan::StepOp> no_ops;
  for (int s = 0; s < n; ++s) {
    SP_RETURN_IF_ERROR(run_transfers(s, true));
    const bool segment_step = is_segment_step(s);
    if (segment_step) SP_RETURN_IF_ERROR(run_segment_step(s));
    for (const auto& so : segment_step ? no_ops : p.steps[s].ops) {
      auto it = ops.find(so.name);
      if (it == ops.end()) return Mismatch("step " + std::to_string(s) + " runs op '" + so.name + "', which the model does not have");
      const ir::Op& op = *it->second;
      std::vector<const uint8_t*> in;
      std::vector<uint8_t*> out;
      // The kernels see each operand as exactly its tensor's bytes (the buffer holds at least that).
      OperandBytes bytes;
      for (ir::TensorId id : op.inputs) {
        bool off = false;
        int64_t have = 0;
        SP_ASSIGN_OR_RETURN(uint8_t* ptr, locate(g.tensor(id), s, op.name, &off, false, &have));
        if (off) r.offchip_read_bytes += g.tensor(id).Bytes();
        in.push_back(ptr);
        bytes.in.push_back(std::min(have, g.tensor(id).Bytes()));
      }
      for (ir::TensorId id : op.outputs) {
        bool off = false;
        int64_t have = 0;
        SP_ASSIGN_OR_RETURN(uint8_t* ptr, locate(g.tensor(id), s, op.name, &off, false, &have));
        if (off && !ir::IsViewOp(op.type)) r.offchip_write_bytes += g.tensor(id).Bytes();
        out.push_back(ptr);
        bytes.out.push_back(std::min(have, g.tensor(id).Bytes()));
      }
      // An output that shares bytes with an input: element-wise kernels may run in place; a
      // depthwise convolution runs TinyEngine's way through its scratch buffer; nothing else may.
      bool aliased = false;
      if (!ir::IsViewOp(op.type))
        for (size_t i = 0; i < op.inputs.size(); ++i)
          for (size_t k = 0; k < op.outputs.size(); ++k) {
            const uint8_t* ilo = in[i];
            const uint8_t* ihi = ilo + g.tensor(op.inputs[i]).Bytes();
            const uint8_t* olo = out[k];
            const uint8_t* ohi = olo + g.tensor(op.outputs[k]).Bytes();
            if (ilo < ohi && olo < ihi) aliased = true;
          }
      if (aliased && ir::IsDepthwiseConv(g, op)) {
        const plan::Buffer* scratch = nullptr;
        for (const plan::Buffer* b : buffers[op.name + ".scratch"])
          if (b->first_step <= s && s <= b->last_step) scratch = b;
        if (!scratch)
          return Mismatch("step " + std::to_string(s) + " op '" + op.name +
                          "': a depthwise convolution writes over its input but the plan gives it no scratch buffer");
        uint8_t* sp = mem[scratch->level].data() + scratch->offset;
        SP_RETURN_IF_ERROR((quant ? RunDepthwiseInPlaceS8(g, op, *quant, in, out[0], sp, scratch->bytes, bytes)
                                  : RunDepthwiseInPlace(g, op, in, out[0], sp, scratch->bytes, bytes))
                               .WithContext("step " + std::to_string(s)));
        continue;
      }
      if (aliased && !ir::IsUnaryElementwise(op.type) && !ir::IsBinaryElementwise(op.type))
        return Mismatch("step " + std::to_string(s) + " op '" + op.name + "' (" + op.type +
                        "): an output overlaps an input, which this kernel cannot do in place");
      SP_RETURN_IF_ERROR((quant ? RunKernelS8(g, op, *quant, in, out, bytes) : RunKernel(g, op, in, out, bytes))
                             .WithContext("step " + std::to_string(s)));
    }
    SP_RETURN_IF_ERROR(run_transfers(s, false));
    // Poison the bytes of buffers that die here, except bytes a buffer still live at s+1 holds
    // (an in-place output shares its dying input's bytes). After the last step the outputs are read.
    if (s == n - 1) break;
    for (auto& [level, bytes] : mem) {
      std::vector<std::pair<int64_t, int64_t>> keep;
      for (const auto& b : p.buffers)
        if (b.level == level && b.first_step <= s && b.last_step > s)
          for (const auto& piece : plan::BufferPieces(p, b)) keep.push_back(piece);
      std::sort(keep.begin(), keep.end());
      for (const auto& b : p.buffers) {
        if (b.level != level || b.last_step != s) continue;
        auto pt = ptensors.find(b.tensor);
        if (pt != ptensors.end() && (pt->second->kind == "constant" || pt->second->kind == "output")) continue;
        for (auto [lo, hi] : plan::BufferPieces(p, b)) {
          for (const auto& [klo, khi] : keep) {
            if (khi <= lo || klo >= hi) continue;
            if (klo > lo) std::memset(bytes.data() + lo, kPoison, static_cast<size_t>(klo - lo));
            lo = std::max(lo, khi);
          }
          if (lo < hi) std::memset(bytes.data() + lo, kPoison, static_cast<size_t>(hi - lo));
        }
      }
    }
  }
  for (ir::TensorId id : g.Outputs()) {
    const ir::Tensor& t = g.tensor(id);
    bool off = false;
    SP_ASSIGN_OR_RETURN(uint8_t* ptr, locate(t, n - 1, "(graph output)", &off));
    r.output_names.push_back(t.name);
    r.outputs.emplace_back(ptr, ptr + t.Bytes());
  }
  r.steps = n;
  return r;
}

std::string Compare(const ir::Graph& g, const ExecResult& naive, const ExecResult& arena, const plan::Plan& p) {
  if (naive.outputs.size() != arena.outputs.size()) return "the runs produced different numbers of outputs";
  for (size_t k = 0; k < naive.outputs.size(); ++k) {
    const auto& a = naive.outputs[k];
    const auto& b = arena.outputs[k];
    if (a == b) continue;
    const ir::Tensor& t = g.tensor(*g.FindTensor(naive.output_names[k]));
    int es = ir::DataTypeSize(t.dtype);
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    size_t elem = i / es;
    std::string va, vb;
    if (t.dtype == ir::DataType::kFloat32 && (elem + 1) * 4 <= a.size()) {
      float fa, fb;
      std::memcpy(&fa, a.data() + elem * 4, 4);
      std::memcpy(&fb, b.data() + elem * 4, 4);
      va = std::to_string(fa);
      vb = std::to_string(fb);
    } else {
      va = std::to_string(static_cast<int>(static_cast<int8_t>(a[i])));
      vb = std::to_string(static_cast<int>(static_cast<int8_t>(b[i])));
    }
    return "output '" + naive.output_names[k] + "' differs at element " + std::to_string(elem) + ": naive " + va +
           ", arena " + vb;
  }
  if (arena.offchip_read_bytes != p.metrics.offchip_read_bytes || arena.offchip_write_bytes != p.metrics.offchip_write_bytes)
    return "off-chip bytes differ: the run moved read " + std::to_string(arena.offchip_read_bytes) + " / write " +
           std::to_string(arena.offchip_write_bytes) + ", the plan says read " +
           std::to_string(p.metrics.offchip_read_bytes) + " / write " + std::to_string(p.metrics.offchip_write_bytes);
  return "";
}

}  // namespace sramplan::exec
