#include "exec/exec_tiled_isoa.h"

#include <algorithm>
#include <cstring>

#include "exec/kernels_s8_internal.h"
#include "support/int_math.h"

namespace sramplan::exec {
namespace {

bool PlainConv(const ir::Graph& g, const ir::Op& op, const TiledOp& oi) {
  return op.type == "Conv" && oi.rowwise && op.attrs.GetInt("group", 1) == 1 && op.outputs.size() == 1 &&
         !oi.rules.empty() && g.tensor(op.inputs[0]).shape.size() == 4;
}

bool ChannelConcat(const ir::Op& op, const TiledOp& oi) {
  const int64_t axis = op.attrs.GetInt("axis", 0);
  return op.type == "Concat" && oi.rowwise && (axis == 3 || axis == -1);
}

// A reader: its first input's window is one row high (fusion/isoa_rules.cc).
bool Reader(const ir::Graph& g, const ir::Op& op, const TiledOp& oi) {
  if (!PlainConv(g, op, oi) || oi.rules[0].rule != TiledRule::kWindow) return false;
  return oi.rules[0].k_eff == 1;
}

const uint8_t* Resolve(const CallArg& a, const OpCalls& calls, const std::vector<const uint8_t*>& in) {
  const CallRef* r = std::get_if<CallRef>(&a);
  if (!r) return nullptr;
  if (r->base == CallRef::Base::kInput && r->index >= 0 && r->index < static_cast<int>(in.size()))
    return in[r->index] ? in[r->index] + r->offset : nullptr;
  if (r->base == CallRef::Base::kConst && r->index >= 0 && r->index < static_cast<int>(calls.consts.size()))
    return calls.consts[r->index].bytes.data() + r->offset;
  return nullptr;
}

// The op's one convolution call (kConvS8 with group 1 on unit-batch channels-last operands).
StatusOr<const KernelCall*> ConvCallOf(const ir::Op& op, const OpCalls& calls) {
  if (calls.blocks.size() != 1 || calls.blocks[0].count != 1 || calls.blocks[0].calls.size() != 1 ||
      calls.blocks[0].calls[0].fn != KernelFn::kConvS8)
    return Unsupported("ISOA op '" + op.name + "': not one int8 convolution call");
  const KernelCall& c = calls.blocks[0].calls[0];
  const sp_tensor_t& x = std::get<sp_tensor_t>(c.args[0]);
  if (x.rank != 4 || x.dims[0] != 1 || x.strides[1] != 1 || std::get<int64_t>(c.args[13]) != 1)
    return Unsupported("ISOA op '" + op.name + "': not a group-1 convolution on one channels-last image");
  return &c;
}

int64_t I(const CallArg& a) { return std::get<int64_t>(a); }
const std::vector<int32_t>& V(const CallArg& a) { return std::get<std::vector<int32_t>>(a); }

}  // namespace

void MarkIsoaSlices(const ir::Graph& g, const plan::TiledGroup& tg, TiledSchedule* ts) {
  for (size_t t = 0; t < ts->tensors.size(); ++t) {
    TiledTensor& x = ts->tensors[t];
    if (x.producer < 0 || x.direct || x.in_situ || x.rows <= 1) continue;
    const ir::Op& src = *ts->ops[x.producer];
    if (std::find(tg.isoa.begin(), tg.isoa.end(), src.name) == tg.isoa.end()) continue;
    const TiledOp& so = ts->op_info[x.producer];
    if (!PlainConv(g, src, so) && !ChannelConcat(src, so)) continue;
    const int64_t channels = g.tensor(x.id).shape[3];
    if (channels <= tg.tile_channels || x.row_bytes % channels != 0) continue;
    std::vector<int> readers;
    bool ok = true;
    for (size_t i = 0; i < ts->ops.size(); ++i)
      for (size_t k = 0; k < ts->op_info[i].in.size(); ++k)
        if (ts->op_info[i].in[k] == static_cast<int>(t)) {
          ok = ok && k == 0 && Reader(g, *ts->ops[i], ts->op_info[i]);
          readers.push_back(static_cast<int>(i));
        }
    if (!ok || readers.empty()) continue;
    x.sliced = true;
    x.slice_channels = tg.tile_channels;
    x.slice_bytes = x.row_bytes / channels * tg.tile_channels;
    ts->op_info[x.producer].isoa_source = true;
    for (int i : readers) ts->op_info[i].isoa_reader = true;
  }
}

void RaiseIsoaReaders(const TiledSchedule& ts, int source, std::vector<int64_t>* target) {
  if (!ts.op_info[source].isoa_source) return;
  const int x = ts.op_info[source].out[0];
  const int64_t tx = (*target)[x];
  if (tx <= 0) return;
  for (size_t i = 0; i < ts.ops.size(); ++i) {
    const TiledOp& oi = ts.op_info[i];
    if (!oi.isoa_reader || oi.in[0] != x) continue;
    // The most output rows whose one-row windows lie in the first tx rows: every row of x up to tx
    // the reader will ever read (a stride skips the others).
    const TiledInput& ru = oi.rules[0];
    const int64_t rows = ts.tensors[oi.out[0]].rows;
    const int64_t out = tx >= ts.tensors[x].rows ? rows : std::min(rows, FloorDiv(tx - 1 + ru.pad_top, ru.stride) + 1);
    (*target)[oi.out[0]] = std::max((*target)[oi.out[0]], out);
  }
}

Status CheckIsoaStrips(const TiledSchedule& ts, const std::string& where) {
  for (size_t j = 0; j < ts.strips.size(); ++j) {
    std::vector<const TiledRun*> run(ts.ops.size(), nullptr);
    for (const TiledRun& r : ts.strips[j].runs) run[r.op] = &r;
    for (size_t i = 0; i < ts.ops.size(); ++i) {
      const TiledOp& oi = ts.op_info[i];
      if (!oi.isoa_reader || !run[i]) continue;
      const TiledTensor& x = ts.tensors[oi.in[0]];
      const TiledInput& ru = oi.rules[0];
      const int64_t lo = std::max<int64_t>(0, run[i]->out_begin * ru.stride - ru.pad_top);
      const int64_t hi = std::min(x.rows, (run[i]->out_end - 1) * ru.stride - ru.pad_top + ru.k_eff);
      const TiledRun* s = run[x.producer];
      if (!s || lo < s->out_begin || hi > s->out_end)
        return Status(StatusCode::kMismatch,
                      where + ": strip " + std::to_string(j) + ": op '" + ts.ops[i]->name + "' reads rows [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + ") of the ISOA output of '" +
                          ts.ops[x.producer]->name + "', which that strip does not compute (its slices do not "
                          "stay for a later strip)");
    }
  }
  return Status::Ok();
}

int64_t LayoutIsoaSums(const ir::Graph& g, TiledSchedule* ts, int64_t cursor) {
  for (size_t i = 0; i < ts->ops.size(); ++i) {
    TiledOp& oi = ts->op_info[i];
    if (!oi.isoa_reader) continue;
    int64_t rows = 0;
    for (const TiledStrip& st : ts->strips)
      for (const TiledRun& r : st.runs)
        if (r.op == static_cast<int>(i)) rows = std::max(rows, r.out_end - r.out_begin);
    const std::vector<int64_t>& y = g.tensor(ts->tensors[oi.out[0]].id).shape;
    cursor = AlignUp(cursor, 4);
    oi.sums_offset = cursor;
    cursor += 4 * rows * y[2] * y[3];
  }
  return cursor;
}

Status IsoaSourceSlice(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                       uint8_t* window, int64_t c0, int64_t n, int64_t tc) {
  const std::string where = "ISOA slice [" + std::to_string(c0) + ", " + std::to_string(c0 + n) + ") of '" +
                            op.name + "'";
  if (op.type == "Concat") {
    for (const CallBlock& b : calls.blocks)
      for (const KernelCall& c : b.calls) {
        if (c.fn != KernelFn::kCopy && c.fn != KernelFn::kRequantizeS8)
          return Unsupported(where + ": a Concat call that is neither a copy nor a requantisation");
        const sp_tensor_t& x = std::get<sp_tensor_t>(c.args[0]);
        const CallRef& dst = std::get<CallRef>(c.args.back());
        const int64_t ci = x.dims[3], oi = dst.offset;  // int8: the offset is the first channel
        const int64_t lo = std::max(c0, oi), hi = std::min(c0 + n, oi + ci);
        if (x.rank != 4 || x.strides[3] != 1 || b.count != 1) return Unsupported(where + ": not a channel concat");
        if (lo >= hi) continue;
        sp_tensor_t xs = x, ys;
        xs.dims[3] = static_cast<int32_t>(hi - lo);
        ys = xs;
        ys.strides[3] = 1;
        ys.strides[2] = static_cast<int32_t>(tc);
        ys.strides[1] = static_cast<int32_t>(x.dims[2] * tc);
        ys.strides[0] = static_cast<int32_t>(x.dims[1] * x.dims[2] * tc);
        const uint8_t* xp = Resolve(c.args[1], calls, in);
        if (!xp) return InternalError(where + ": an input is missing");
        xp += lo - oi;
        uint8_t* yp = window + (lo - c0);
        sp_status_t st;
        if (c.fn == KernelFn::kCopy) {
          st = sp_copy(&xs, xp, static_cast<int32_t>(I(c.args[2])), &ys, yp);
        } else {
          st = sp_requantize_s8(&xs, reinterpret_cast<const int8_t*>(xp), static_cast<int32_t>(I(c.args[2])),
                                std::get<sp_requant_t>(c.args[3]), static_cast<int32_t>(I(c.args[4])), &ys,
                                reinterpret_cast<int8_t*>(yp));
        }
        if (st != SP_OK) return InternalError(where + ": the kernel refused its operands");
      }
    return Status::Ok();
  }
  SP_ASSIGN_OR_RETURN(const KernelCall* c, ConvCallOf(op, calls));
  const auto& v = c->args;
  sp_tensor_t w = std::get<sp_tensor_t>(v[3]), y = std::get<sp_tensor_t>(v[14]);
  const uint8_t* xp = Resolve(v[1], calls, in);
  const uint8_t* wp = Resolve(v[4], calls, in);
  const uint8_t* bp = Resolve(v[5], calls, in);
  const uint8_t* rq = Resolve(v[6], calls, in);
  if (!xp || !wp || !rq) return InternalError(where + ": an operand is missing");
  wp += c0 * w.strides[0];
  w.dims[0] = static_cast<int32_t>(n);
  y.dims[1] = static_cast<int32_t>(n);
  y.strides[1] = 1;
  y.strides[3] = static_cast<int32_t>(tc);
  y.strides[2] = static_cast<int32_t>(y.dims[3] * tc);
  y.strides[0] = static_cast<int32_t>(y.dims[2] * y.dims[3] * tc);
  const sp_status_t st = sp_conv_s8(
      &std::get<sp_tensor_t>(v[0]), reinterpret_cast<const int8_t*>(xp), static_cast<int32_t>(I(v[2])), &w,
      reinterpret_cast<const int8_t*>(wp), bp ? reinterpret_cast<const int32_t*>(bp) + c0 : nullptr,
      reinterpret_cast<const sp_requant_t*>(rq) + c0, static_cast<int32_t>(I(v[7])), static_cast<int32_t>(I(v[8])),
      static_cast<int32_t>(I(v[9])), V(v[10]).data(), V(v[11]).data(), V(v[12]).data(), 1, &y,
      reinterpret_cast<int8_t*>(window));
  if (st != SP_OK) return InternalError(where + ": the convolution kernel refused its operands");
  return Status::Ok();
}

Status IsoaAccumulate(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                      const uint8_t* slice, int64_t c0, int64_t n, int64_t tc, int32_t* sums) {
  SP_ASSIGN_OR_RETURN(const KernelCall* c, ConvCallOf(op, calls));
  const auto& v = c->args;
  const sp_tensor_t& x = std::get<sp_tensor_t>(v[0]);
  const sp_tensor_t& w = std::get<sp_tensor_t>(v[3]);
  const sp_tensor_t& y = std::get<sp_tensor_t>(v[14]);
  const int8_t* wp = reinterpret_cast<const int8_t*>(Resolve(v[4], calls, in));
  if (!wp) return InternalError("ISOA reader '" + op.name + "': its weights are missing");
  const int8_t* xs = reinterpret_cast<const int8_t*>(slice);
  const int32_t in_zp = static_cast<int32_t>(I(v[2]));
  const std::vector<int32_t>&stride = V(v[10]), &pad = V(v[11]), &dil = V(v[12]);
  const int32_t H = x.dims[2], W = x.dims[3], K = y.dims[1], OH = y.dims[2], OW = y.dims[3];
  for (int32_t oh = 0; oh < OH; ++oh)
    for (int32_t ow = 0; ow < OW; ++ow)
      for (int32_t k = 0; k < K; ++k) {
        uint32_t acc = static_cast<uint32_t>(sums[(static_cast<int64_t>(oh) * OW + ow) * K + k]);  // wraps as int32
        for (int32_t r = 0; r < w.dims[2]; ++r) {
          const int32_t ih = oh * stride[0] - pad[0] + r * dil[0];
          if (ih < 0 || ih >= H) continue;
          for (int32_t s = 0; s < w.dims[3]; ++s) {
            const int32_t iw = ow * stride[1] - pad[1] + s * dil[1];
            if (iw < 0 || iw >= W) continue;
            const int8_t* px = xs + (static_cast<int64_t>(ih) * W + iw) * tc;
            const int8_t* wk = wp + static_cast<int64_t>(k) * w.strides[0] + r * w.strides[2] + s * w.strides[3] +
                               c0 * w.strides[1];
            for (int64_t ch = 0; ch < n; ++ch)
              acc += static_cast<uint32_t>((static_cast<int32_t>(px[ch]) - in_zp) * static_cast<int32_t>(wk[ch * w.strides[1]]));
          }
        }
        sums[(static_cast<int64_t>(oh) * OW + ow) * K + k] = static_cast<int32_t>(acc);
      }
  return Status::Ok();
}

Status IsoaFinish(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                  const int32_t* sums, uint8_t* out) {
  SP_ASSIGN_OR_RETURN(const KernelCall* c, ConvCallOf(op, calls));
  const auto& v = c->args;
  const sp_tensor_t& y = std::get<sp_tensor_t>(v[14]);
  const int32_t* bias = reinterpret_cast<const int32_t*>(Resolve(v[5], calls, in));
  const sp_requant_t* rq = reinterpret_cast<const sp_requant_t*>(Resolve(v[6], calls, in));
  if (!rq) return InternalError("ISOA reader '" + op.name + "': its requantisation is missing");
  const int32_t out_zp = static_cast<int32_t>(I(v[7])), lo = static_cast<int32_t>(I(v[8])),
                hi = static_cast<int32_t>(I(v[9]));
  const int32_t K = y.dims[1], OH = y.dims[2], OW = y.dims[3];
  int8_t* yp = reinterpret_cast<int8_t*>(out);
  for (int32_t oh = 0; oh < OH; ++oh)
    for (int32_t ow = 0; ow < OW; ++ow)
      for (int32_t k = 0; k < K; ++k) {
        uint32_t acc = static_cast<uint32_t>(sums[(static_cast<int64_t>(oh) * OW + ow) * K + k]);
        if (bias) acc += static_cast<uint32_t>(bias[k]);
        // The kernels' requantisation (sramplan_rt_int8.h): MBQM, limited to +-2^30, zero point, range.
        int32_t q = sp_multiply_by_quantized_multiplier(static_cast<int32_t>(acc), rq[k].multiplier, rq[k].shift);
        q = std::clamp(q, -(1 << 30), 1 << 30) + out_zp;
        yp[k * y.strides[1] + oh * y.strides[2] + ow * y.strides[3]] = static_cast<int8_t>(std::clamp(q, lo, hi));
      }
  return Status::Ok();
}

}  // namespace sramplan::exec
