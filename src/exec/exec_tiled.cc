#include "exec/exec_tiled.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "exec/exec_tiled_isoa.h"
#include "exec/executor.h"
#include "exec/hybrid.h"
#include "exec/kernels.h"
#include "exec/quantize.h"
#include "ir/op_geometry.h"
#include "support/int_math.h"

namespace sramplan::exec {
namespace {

Status Mismatch(const std::string& m) { return Status(StatusCode::kMismatch, m); }

using Rule = TiledRule;
using InputRule = TiledInput;
using OpInfo = TiledOp;

bool FeatureMap(const ir::Graph& g, const ir::Tensor& t) {
  return g.layout == ir::Layout::kNHWC && t.shape.size() == 4;
}

bool Windowed(const std::string& type) { return type == "Conv" || type == "MaxPool" || type == "AveragePool"; }

// A constant Pad of a channels-last feature map with non-negative pads and none on the batch
// axis: output row r is input row r - pads[1] (a window of one row with padding).
bool RowPad(const ir::Graph& g, const ir::Op& op) {
  if (op.type != "Pad" || op.inputs.empty() || op.outputs.size() != 1) return false;
  if (!FeatureMap(g, g.tensor(op.inputs[0])) || !FeatureMap(g, g.tensor(op.outputs[0]))) return false;
  const std::vector<int64_t> pads = op.attrs.GetInts("pads");
  if (op.attrs.GetString("mode", "constant") != "constant" || pads.size() != 8 || pads[0] != 0 || pads[4] != 0)
    return false;
  return std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v >= 0; });
}

// A one-input Slice with unit steps of a channels-last feature map that keeps its rows from
// `start` to the last (output row r is input row r + start): `*start` and the index of its H entry
// in `starts` (-1: H is not sliced).
bool RowSlice(const ir::Graph& g, const ir::Op& op, int64_t* start = nullptr, int* entry = nullptr) {
  if (op.type != "Slice" || op.inputs.size() != 1 || op.outputs.size() != 1) return false;
  const ir::Tensor& x = g.tensor(op.inputs[0]);
  const ir::Tensor& y = g.tensor(op.outputs[0]);
  if (!FeatureMap(g, x) || !FeatureMap(g, y)) return false;
  std::vector<int32_t> starts, steps;
  SliceStartsSteps(op, x.shape, &starts, &steps);
  if (std::any_of(steps.begin(), steps.end(), [](int32_t v) { return v != 1; })) return false;
  if (y.shape[1] != x.shape[1] - starts[1]) return false;
  if (start) *start = starts[1];
  if (entry) {
    *entry = -1;
    const std::vector<int64_t> axes = op.attrs.GetInts("axes");
    const size_t n = op.attrs.GetInts("starts").size();
    for (size_t k = 0; k < n; ++k) {
      const int64_t a = k < axes.size() ? (axes[k] < 0 ? axes[k] + 4 : axes[k]) : static_cast<int64_t>(k);
      if (a == 1) *entry = static_cast<int>(k);
    }
  }
  return true;
}

// The row rule of input k of `op`; kWhole for ops that run once on whole operands.
InputRule RuleOf(const ir::Graph& g, const ir::Op& op, size_t k, bool rowwise) {
  InputRule r;
  if (!rowwise) return r;
  const ir::Tensor& x = g.tensor(op.inputs[k]);
  const ir::Tensor& y = g.tensor(op.outputs[0]);
  if (!FeatureMap(g, x)) return r;
  if (k == 0 && Windowed(op.type)) {
    ir::WindowGeometry w;
    if (op.type == "Conv") {
      auto cg = ir::ParseConvGeometry(g, op);
      if (!cg.ok()) return r;
      w = *cg;
    } else {
      auto pg = ir::ParsePoolGeometry(g, op);
      if (!pg.ok()) return r;
      w = *pg;
    }
    r.rule = Rule::kWindow;
    r.stride = w.strides[0];
    r.pad_top = w.pads[0];
    r.k_eff = w.EffectiveKernel(0);
    r.pads = w.pads;
    return r;
  }
  int64_t slice_start = 0;
  if (k == 0 && RowSlice(g, op, &slice_start)) {  // output row r is input row r + start
    r.rule = Rule::kWindow;
    r.pad_top = -slice_start;
    return r;
  }
  if (k == 0 && op.type == "Pad") {
    r.rule = Rule::kWindow;
    r.pads = op.attrs.GetInts("pads");
    r.pad_top = r.pads[1];
    return r;
  }
  if (x.shape[1] == y.shape[1] && x.shape[1] > 1) r.rule = Rule::kSame;
  return r;  // a broadcast operand of one row: whole
}

// Whether `op` runs strip by strip (its output rows follow its inputs' rows).
bool RowWise(const ir::Graph& g, const ir::Op& op) {
  if (op.outputs.size() != 1 || !FeatureMap(g, g.tensor(op.outputs[0]))) return false;
  const ir::Tensor& y = g.tensor(op.outputs[0]);
  if (Windowed(op.type)) {
    if (op.inputs.empty() || !FeatureMap(g, g.tensor(op.inputs[0]))) return false;
    if (op.type == "Conv") {
      auto cg = ir::ParseConvGeometry(g, op);
      return cg.ok() && cg->Is2D();
    }
    auto pg = ir::ParsePoolGeometry(g, op);
    return pg.ok() && pg->Is2D();
  }
  if (op.type == "Pad") return RowPad(g, op);
  if (op.type == "Slice") return RowSlice(g, op);
  const bool elementwise = ir::IsUnaryElementwise(op.type) || ir::IsBinaryElementwise(op.type);
  const bool concat = op.type == "Concat" && (op.attrs.GetInt("axis", 0) == 3 || op.attrs.GetInt("axis", 0) == -1);
  if (!elementwise && !concat) return false;
  for (ir::TensorId in : op.inputs) {
    const ir::Tensor& x = g.tensor(in);
    if (x.kind == ir::TensorKind::kConstant) continue;
    if (!FeatureMap(g, x) || (x.shape[1] != y.shape[1] && x.shape[1] != 1)) return false;
    if (concat && x.shape[1] != y.shape[1]) return false;
  }
  return true;
}

int64_t NeedLo(const InputRule& r, int64_t out_row) {
  switch (r.rule) {
    case Rule::kWindow: return std::max<int64_t>(0, out_row * r.stride - r.pad_top);
    case Rule::kSame: return out_row;
    case Rule::kWhole: break;
  }
  return 0;
}

int64_t NeedHi(const InputRule& r, int64_t out_end, int64_t in_rows) {
  if (out_end <= 0) return 0;
  switch (r.rule) {
    case Rule::kWindow: return std::min(in_rows, (out_end - 1) * r.stride - r.pad_top + r.k_eff);
    case Rule::kSame: return std::min(in_rows, out_end);
    case Rule::kWhole: break;
  }
  return in_rows;
}

struct Builder {
  const ir::Graph& g;
  TiledSchedule& ts;
  std::vector<OpInfo> info;
  std::map<int, int> index;  // ir tensor id -> ts.tensors index
  std::vector<std::vector<std::pair<int, size_t>>> consumers;  // per tensor: (op, input k) in the group
  std::vector<int> slot;  // per tensor: the tensor owning its window (itself unless in situ)

  int Tensor(ir::TensorId id) {
    auto it = index.find(id.value());
    if (it != index.end()) return it->second;
    const ir::Tensor& t = g.tensor(id);
    TiledTensor tt;
    tt.id = id;
    tt.rows = FeatureMap(g, t) ? t.shape[1] : 1;
    tt.row_bytes = t.Bytes() / (ts.images * tt.rows);
    ts.tensors.push_back(tt);
    consumers.emplace_back();
    return index[id.value()] = static_cast<int>(ts.tensors.size()) - 1;
  }
};

}  // namespace

ir::Graph ScratchGraph(const ir::Graph& g) {
  ir::Graph s;
  s.name = g.name;
  s.layout = g.layout;
  for (const ir::Tensor& t : g.tensors()) {
    ir::Tensor c;
    c.name = t.name;
    c.shape = t.shape;
    c.dtype = t.dtype;
    c.kind = t.kind;
    c.quant = t.quant;
    if (t.data.size() <= 4096) c.data = t.data;
    s.AddTensor(std::move(c));
  }
  for (const ir::Op& op : g.ops()) s.AddOp(op);
  return s;
}

namespace {

// Why the plan's strips of a group do not fit the global buffer in the executor: ISOA outputs
// that operators of the group read are held with every channel (the executor does not run ISOA
// inside a group, the plan counts T_c channels of them), or else the windows differ from the
// model's working set (group.buffer_bytes).
std::string TiledOverflowWhy(const ir::Graph& g, const TiledSchedule& base, const plan::TiledGroup& tg,
                             int64_t need, int64_t capacity) {
  std::string isoa_inside;
  for (const TiledTensor& t : base.tensors) {
    if (t.producer < 0 || t.direct || t.sliced) continue;
    const std::string& producer = base.ops[t.producer]->name;
    if (std::find(tg.isoa.begin(), tg.isoa.end(), producer) == tg.isoa.end()) continue;
    isoa_inside += (isoa_inside.empty() ? "'" : ", '") + g.tensor(t.id).name + "'";
  }
  const std::string holds = std::string("its windows") + (base.params_resident ? " and resident parameters" : "") +
                            " need " + std::to_string(need) + " bytes of the global buffer, which has " +
                            std::to_string(capacity);
  if (!isoa_inside.empty())
    return holds + ": the executor holds every channel of the ISOA output(s) " + isoa_inside +
           " that operators of the group read (ISOA read inside a group runs sliced only in int8, from a one-op Conv or Concat to group-1 Conv readers with a one-row window), where the plan counts " +
           std::to_string(tg.tile_channels) + " channels (group.buffer_bytes " + std::to_string(tg.buffer_bytes) + ")";
  return holds + "; the plan's working set (group.buffer_bytes) is " + std::to_string(tg.buffer_bytes) +
         " bytes: the executor's windows hold more rows than the tile model counts";
}

// The strips of a group for `tiles`: targets backwards from the group outputs, runs forwards,
// windows from what the consumers still need; then the layout in the buffer and the DRAM bytes.
// `ceil_split`: strip j ends at row ceil((j + 1) * H / tiles) of a group output of H rows (else
// floor): group outputs of different heights then stay aligned at the top (see BuildTiledSchedule).
StatusOr<TiledSchedule> ScheduleStrips(const ir::Graph& g, const Builder& b, const TiledSchedule& base,
                                       int64_t tiles, const std::string& where, bool ceil_split = false) {
  const std::vector<const ir::Op*>& ops = base.ops;
  TiledSchedule ts = base;
  ts.tiles = tiles;
  // The strips: targets backwards from the group outputs, runs forwards, windows from what the
  // consumers still need.
  const size_t nt = ts.tensors.size();
  std::vector<int64_t> hi(nt, 0);            // rows of each tensor computed / loaded so far
  std::vector<int64_t> done(ops.size(), 0);  // rows of each op's output computed so far
  std::vector<int64_t> added(ops.size(), 0);  // streaming ops: input rows added so far
  std::vector<int64_t> window(nt, 0);        // per slot owner: rows it must hold at most
  auto split = [&](int64_t j, int64_t rows) {
    return ceil_split ? CeilDiv((j + 1) * rows, ts.tiles) : (j + 1) * rows / ts.tiles;
  };
  for (int64_t j = 0; j < ts.tiles; ++j) {
    std::vector<int64_t> target = hi;
    for (size_t t = 0; t < nt; ++t)
      if (ts.tensors[t].to_dram)
        target[t] = std::max(target[t], split(j, ts.tensors[t].rows));
    for (size_t i = ops.size(); i-- > 0;) {
      const OpInfo& oi = b.info[i];
      RaiseIsoaReaders(ts, static_cast<int>(i), &target);
      int64_t out_t = 0;
      for (int o : oi.out) out_t = std::max(out_t, target[o]);
      if (!oi.rowwise && out_t > 0)
        for (int o : oi.out) out_t = std::max(out_t, ts.tensors[o].rows);
      for (int o : oi.out) target[o] = std::max(target[o], std::min(out_t, ts.tensors[o].rows));
      for (size_t k = 0; k < oi.in.size(); ++k) {
        if (oi.in[k] < 0) continue;
        const int64_t rows = ts.tensors[oi.in[k]].rows;
        int64_t need = NeedHi(oi.rules[k], out_t, rows);
        // An op on whole operands (global pooling, Gemm) runs once its inputs are complete; until
        // then its inputs fill in step with the strips, so what feeds them stays tiled.
        const int pr = ts.tensors[oi.in[k]].producer;
        if (!oi.rowwise && out_t == 0 && (pr < 0 || b.info[pr].rowwise || oi.stream))
          need = split(j, rows);
        target[oi.in[k]] = std::max(target[oi.in[k]], need);
      }
    }
    // Rows each tensor must keep from: what its unfinished consumers read next, and its own new rows.
    std::vector<int64_t> keep(nt, 0);
    for (size_t t = 0; t < nt; ++t) {
      int64_t lo = hi[t];
      for (const auto& [o, k] : b.consumers[t]) {
        const TiledTensor& y = ts.tensors[b.info[o].out[0]];
        if (b.info[o].stream) {
          if (added[o] < ts.tensors[t].rows) lo = std::min(lo, added[o]);  // only rows not yet added
        } else if (done[o] < y.rows) {
          lo = std::min(lo, NeedLo(b.info[o].rules[k], done[o]));
        }
      }
      keep[t] = lo;
    }
    std::vector<int64_t> slot_lo(nt, INT64_MAX), slot_hi(nt, 0);
    for (size_t t = 0; t < nt; ++t) {
      // In the owner's rows (an in-situ view may have other rows over the same bytes).
      const int64_t rb = ts.tensors[t].row_bytes, orb = ts.tensors[b.slot[t]].row_bytes;
      slot_lo[b.slot[t]] = std::min(slot_lo[b.slot[t]], keep[t] * rb / orb);
      slot_hi[b.slot[t]] = std::max(slot_hi[b.slot[t]], CeilDiv(target[t] * rb, orb));
    }
    for (size_t t = 0; t < nt; ++t)
      if (b.slot[t] == static_cast<int>(t)) window[t] = std::max(window[t], slot_hi[t] - slot_lo[t]);
    TiledStrip strip;
    strip.keep = slot_lo;
    strip.target = target;
    std::vector<TiledRun>& runs = strip.runs;
    for (size_t i = 0; i < ops.size(); ++i) {
      const OpInfo& oi = b.info[i];
      if (oi.stream) {
        const int64_t in_rows = ts.tensors[oi.in[0]].rows, in_t = target[oi.in[0]];
        if (in_t > added[i]) runs.push_back({static_cast<int>(i), added[i], in_t, in_t == in_rows});
        added[i] = std::max(added[i], in_t);
        if (in_t == in_rows) target[oi.out[0]] = done[i] = ts.tensors[oi.out[0]].rows;
        continue;
      }
      const int64_t t_out = target[oi.out[0]];
      if (t_out > done[i]) runs.push_back({static_cast<int>(i), done[i], t_out});
      done[i] = std::max(done[i], t_out);
    }
    ts.strips.push_back(std::move(strip));
    hi = target;
  }
  SP_RETURN_IF_ERROR(CheckIsoaStrips(ts, where));
  // Every op computed all its rows, every group output was written whole.
  for (size_t i = 0; i < ops.size(); ++i)
    if (done[i] != ts.tensors[b.info[i].out[0]].rows)
      return Mismatch(where + ": op '" + ops[i]->name + "' computes " + std::to_string(done[i]) + " of " +
                      std::to_string(ts.tensors[b.info[i].out[0]].rows) + " rows in " + std::to_string(ts.tiles) +
                      " strips");
  // Layout: streaming global pooling's int32 sums per channel, resident parameters, then the
  // windows (no alignment padding between them for int8 and float32 groups).
  int64_t cursor = 0;
  for (TiledOp& oi : ts.op_info)
    if (oi.stream) {
      oi.sums_offset = cursor;
      cursor += 4 * g.tensor(ts.tensors[oi.out[0]].id).shape.back();
    }
  cursor = LayoutIsoaSums(g, &ts, cursor);
  if (ts.params_resident) {
    ts.param_offset = cursor;
    cursor += ts.param_bytes;
  }
  for (size_t t = 0; t < nt; ++t) {
    TiledTensor& x = ts.tensors[t];
    if (b.slot[t] != static_cast<int>(t)) continue;
    const int64_t es = ir::DataTypeSize(g.tensor(x.id).dtype);
    cursor = AlignUp(cursor, std::max<int64_t>(es, 1));
    x.offset = cursor;
    x.window_rows = std::max<int64_t>(window[t], 1);
    window[t] = x.window_rows;
    cursor += window[t] * (x.direct ? x.staging_bytes : x.sliced ? x.slice_bytes : x.row_bytes);
  }
  for (size_t t = 0; t < nt; ++t)
    if (b.slot[t] != static_cast<int>(t)) {
      ts.tensors[t].offset = ts.tensors[b.slot[t]].offset;
      ts.tensors[t].window_rows = ts.tensors[b.slot[t]].window_rows;
    }
  ts.working_bytes = cursor;
  // DRAM bytes: the group inputs' and outputs' rows once, parameters once or per strip that runs an op.
  for (const TiledTensor& t : ts.tensors) {
    if (t.producer < 0) ts.read_bytes += g.tensor(t.id).Bytes();
    if (t.to_dram) ts.write_bytes += g.tensor(t.id).Bytes();
  }
  if (ts.params_resident) {
    ts.read_bytes += ts.param_bytes;
  } else {
    for (const TiledStrip& st : ts.strips)
      for (const TiledRun& r : st.runs) ts.read_bytes += b.info[r.op].param_bytes * ts.images;
  }
return ts;
}

}  // namespace

StatusOr<TiledSchedule> BuildTiledSchedule(const ir::Graph& g, const plan::Plan& p, int s,
                                           const std::vector<const ir::Op*>& ops, int64_t capacity, bool int8) {
  const plan::TiledGroup& tg = p.steps[s].tiled;
  const std::string where = "step " + std::to_string(s) + " (fused-tiled group of '" +
                            (ops.empty() ? std::string("?") : ops.front()->name) + "')";
  if (ops.empty()) return Mismatch(where + " runs no op");
  if (tg.tiles < 1) return Mismatch(where + ": group.tiles must be at least 1");
  TiledSchedule base;
  base.tiles = tg.tiles;
  base.ops = ops;
  base.params_resident = tg.params_resident;
  base.buffer_capacity = capacity;
  base.images = std::max<int64_t>(p.batch, 1);
  Builder b{g, base, {}, {}, {}, {}};
  std::map<int, int> op_pos;
  for (size_t i = 0; i < ops.size(); ++i) op_pos[ops[i]->id.value()] = static_cast<int>(i);
  std::map<int, bool> seen_param;
  for (size_t i = 0; i < ops.size(); ++i) {
    const ir::Op& op = *ops[i];
    if (op.type == "Opaque")
      return Unsupported(where + ": op '" + op.name + "' (" + op.original_type + ") has no kernel");
    OpInfo oi;
    oi.rowwise = RowWise(g, op);
    oi.stream = int8 && op.type == "GlobalAveragePool" && op.inputs.size() == 1 && op.outputs.size() == 1 &&
                FeatureMap(g, g.tensor(op.inputs[0])) && g.tensor(op.inputs[0]).shape[1] > 1;
    std::map<int, bool> own;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const ir::Tensor& t = g.tensor(op.inputs[k]);
      oi.rules.push_back(RuleOf(g, op, k, oi.rowwise && t.kind != ir::TensorKind::kConstant));
      if (t.kind == ir::TensorKind::kConstant) {
        oi.in.push_back(-1);
        if (!own[t.id.value()]) oi.param_bytes += t.Bytes();
        own[t.id.value()] = true;
        if (!seen_param[t.id.value()]) {
          base.params.push_back(t.id);
          base.param_bytes += t.Bytes();
        }
        seen_param[t.id.value()] = true;
        continue;
      }
      const int ti = b.Tensor(t.id);
      oi.in.push_back(ti);
      b.consumers[ti].push_back({static_cast<int>(i), k});
    }
    for (ir::TensorId out : op.outputs) {
      const int ti = b.Tensor(out);
      base.tensors[ti].producer = static_cast<int>(i);
      oi.out.push_back(ti);
    }
    b.info.push_back(std::move(oi));
  }
  // Batch: every feature map's first axis is the image.
  for (TiledTensor& t : base.tensors) {
    const ir::Tensor& it = g.tensor(t.id);
    if (base.images > 1 && (it.shape.empty() || it.shape[0] != base.images))
      return Unsupported(where + ": tensor '" + it.name + "' has no batch axis of " + std::to_string(base.images) +
                         " images; tiled execution runs one image at a time");
    if (it.shape.size() == 4 && g.layout != ir::Layout::kNHWC)
      return Unsupported(where + ": tile-by-tile execution needs channels-last feature maps (pass --canonicalize)");
    if (t.producer < 0) continue;
    t.to_dram = it.kind == ir::TensorKind::kOutput;
    bool inside = false;
    for (ir::OpId c : it.consumers) {
      t.to_dram = t.to_dram || !op_pos.count(c.value());
      inside = inside || op_pos.count(c.value());
    }
    // ISOA on an output no op of the group reads: it streams to DRAM T_c channels at a time.
    const std::string& producer = ops[t.producer]->name;
    if (t.to_dram && !inside && std::find(tg.isoa.begin(), tg.isoa.end(), producer) != tg.isoa.end()) {
      t.direct = true;
      const int64_t channels = t.rows > 1 ? it.shape[3] : 1;
      t.staging_bytes = channels > tg.tile_channels ? t.row_bytes / channels * tg.tile_channels : t.row_bytes;
    }
  }
  // In situ: a unary element-wise op over the only use of a tensor the group produced.
  b.slot.resize(base.tensors.size());
  for (size_t t = 0; t < base.tensors.size(); ++t) b.slot[t] = static_cast<int>(t);
  for (size_t i = 0; i < ops.size(); ++i) {
    const ir::Op& op = *ops[i];
    const OpInfo& oi = b.info[i];
    if (oi.in.empty() || oi.in[0] < 0 || oi.out.size() != 1) continue;
    const TiledTensor& x = base.tensors[oi.in[0]];
    const TiledTensor& y = base.tensors[oi.out[0]];
    if (x.producer < 0 || x.to_dram || y.direct || g.tensor(x.id).consumers.size() != 1) continue;
    // A unary element-wise op rewrites its input's rows; a view on whole operands is its input's
    // bytes (the fusion model merges both into the op they follow: one feature map).
    const bool unary = oi.rowwise && ir::IsUnaryElementwise(op.type) && x.rows == y.rows && x.row_bytes == y.row_bytes;
    const bool view = !oi.rowwise && ir::IsViewOp(op.type) && x.rows * x.row_bytes == y.rows * y.row_bytes;
    if (!unary && !view) continue;
    base.tensors[oi.out[0]].in_situ = true;
    b.slot[oi.out[0]] = b.slot[oi.in[0]];
    base.tensors[oi.out[0]].share = b.slot[oi.in[0]];
  }
  base.op_info = b.info;
  if (int8) MarkIsoaSlices(g, tg, &base);
  // The strips for `tiles`: targets backwards from the group outputs, runs forwards, windows from
  // what the consumers still need.
  auto schedule = [&](int64_t tiles) { return ScheduleStrips(g, b, base, tiles, where); };
  SP_ASSIGN_OR_RETURN(TiledSchedule planned, schedule(tg.tiles));
  if (planned.working_bytes > tg.buffer_bytes) {
    // Group outputs of different heights split by floor((j + 1) * H / tiles) drift apart (one
    // ahead by a row, the other behind), and a map two of them read holds the rows between them:
    // more than the tile model's rows (pnasnet-5-cifar10, efficient-s at 128 KB: a 1x1 stride-2
    // conv's 8 rows and a Slice's 15 rows of one 16-row map). Rounding up keeps them aligned at
    // the top; that split is taken when it needs less and moves the same DRAM bytes.
    SP_ASSIGN_OR_RETURN(TiledSchedule up, ScheduleStrips(g, b, base, tg.tiles, where, true));
    if (up.working_bytes < planned.working_bytes && up.read_bytes == planned.read_bytes &&
        up.write_bytes == planned.write_bytes)
      planned = std::move(up);
  }
  if (planned.working_bytes <= capacity) return planned;
  // The plan's strips do not fit: the fewest strips that fit, if any, and why.
  const std::string why = TiledOverflowWhy(g, base, tg, planned.working_bytes, capacity);
  int64_t max_tiles = 1;
  for (const TiledTensor& t : base.tensors) max_tiles = std::max(max_tiles, t.rows);
  for (int64_t tiles = tg.tiles + 1; tiles <= max_tiles; ++tiles) {
    SP_ASSIGN_OR_RETURN(TiledSchedule ts, schedule(tiles));
    if (ts.working_bytes > capacity) continue;
    ts.note = "runs " + std::to_string(tiles) + " strips instead of the plan's " + std::to_string(tg.tiles) + ": " + why;
    return ts;
  }
  return Mismatch(where + ": " + why + "; no strip count up to " + std::to_string(max_tiles) + " fits");
}

}  // namespace sramplan::exec

namespace sramplan::exec {
namespace {

// One image's run of a schedule: the windows' first and last rows, and the scratch graph's
// shapes and attributes set per strip.
class TileRunner {
 public:
  TileRunner(const TiledSchedule& ts, ir::Graph& sg, const QuantizedModel* q, std::vector<uint8_t>& buf,
             const std::vector<uint8_t*>& home, const std::map<int, const uint8_t*>& param_ptr, TiledCounts* c)
      : ts_(ts), sg_(sg), q_(q), buf_(buf), home_(home), param_ptr_(param_ptr), c_(c) {}

  Status RunImage(int64_t image) {
    image_ = image;
    const size_t nt = ts_.tensors.size();
    lo_.assign(nt, 0);
    hi_.assign(nt, 0);
    rows_.assign(nt, 0);
    for (const TiledStrip& st : ts_.strips) {
      for (size_t t = 0; t < nt; ++t)
        if (Owner(static_cast<int>(t)) == static_cast<int>(t)) Shift(static_cast<int>(t), st.keep[t]);
      for (size_t t = 0; t < nt; ++t)
        if (ts_.tensors[t].producer < 0) SP_RETURN_IF_ERROR(Load(static_cast<int>(t), st.target[t]));
      for (size_t k = 0; k < st.runs.size(); ++k) {
        const TiledOp& oi = ts_.op_info[st.runs[k].op];
        if (oi.isoa_reader) continue;  // run with its source's slices
        SP_RETURN_IF_ERROR(oi.isoa_source ? RunIsoa(st, k) : Run(st.runs[k]));
      }
    }
    return Status::Ok();
  }

 private:
  int Owner(int t) const { return ts_.tensors[t].share >= 0 ? ts_.tensors[t].share : t; }
  // The first byte its window holds, from the start of the image's tensor (the owner's rows).
  int64_t LoBytes(int t) const { return lo_[Owner(t)] * ts_.tensors[Owner(t)].row_bytes; }
  // The first row of t its window holds.
  int64_t Lo(int t) const { return CeilDiv(LoBytes(t), ts_.tensors[t].row_bytes); }
  int64_t ImageBytes(int t) const { return ts_.tensors[t].rows * ts_.tensors[t].row_bytes; }
  uint8_t* Row(int t, int64_t r) {
    if (ts_.tensors[t].sliced) return buf_.data() + ts_.tensors[t].offset + (r - lo_[t]) * ts_.tensors[t].slice_bytes;
    return buf_.data() + ts_.tensors[t].offset + r * ts_.tensors[t].row_bytes - LoBytes(t);
  }

  uint8_t* Dram(int t, int64_t r) { return home_[t] + image_ * ImageBytes(t) + r * ts_.tensors[t].row_bytes; }

  // Drops the rows of window t below `keep` (the line buffer moves on).
  void Shift(int t, int64_t keep) {
    const TiledTensor& x = ts_.tensors[t];
    keep = std::min(keep, hi_[t]);
    if (keep <= lo_[t]) return;
    if (x.direct || x.sliced) {  // its rows went to DRAM / every slice rewrites its rows
      lo_[t] = keep;
      return;
    }
    uint8_t* base = buf_.data() + x.offset;
    std::memmove(base, base + (keep - lo_[t]) * x.row_bytes, static_cast<size_t>((hi_[t] - keep) * x.row_bytes));
    std::memset(base + (hi_[t] - keep) * x.row_bytes, kPoison, static_cast<size_t>((keep - lo_[t]) * x.row_bytes));
    lo_[t] = keep;
  }

  Status Fits(int t, int64_t end) {
    const int o = Owner(t);
    const int64_t end_o = CeilDiv(end * ts_.tensors[t].row_bytes, ts_.tensors[o].row_bytes);  // in the owner's rows
    if (end_o - lo_[o] > ts_.tensors[o].window_rows)
      return InternalError("tiled run: window of '" + sg_.tensor(ts_.tensors[t].id).name + "' overflows (" +
                           std::to_string(end_o - lo_[o]) + " of " + std::to_string(ts_.tensors[o].window_rows) +
                           " rows)");
    hi_[o] = std::max(hi_[o], end_o);
    return Status::Ok();
  }

  // A group input: rows up to `target` from DRAM, each once.
  Status Load(int t, int64_t target) {
    const TiledTensor& x = ts_.tensors[t];
    if (target <= rows_[t]) return Status::Ok();
    SP_RETURN_IF_ERROR(Fits(t, target));
    const int64_t n = (target - rows_[t]) * x.row_bytes;
    std::memcpy(Row(t, rows_[t]), home_[t] + image_ * ImageBytes(t) + rows_[t] * x.row_bytes, static_cast<size_t>(n));
    if (!x.on_chip) c_->read_bytes += n;
    rows_[t] = target;
    return Status::Ok();
  }

  // The strip's shape of tensor `id`: one image, `rows` rows (< 0: all).
  void SetShape(ir::TensorId id, int64_t rows) {
    std::vector<int64_t>& sh = sg_.tensor(id).shape;
    saved_.push_back({id, sh});
    if (ts_.images > 1 && !sh.empty()) sh[0] = 1;
    if (rows >= 0) sh[1] = rows;
  }

  Status Run(const TiledRun& r);
  Status Stream(const TiledRun& r);
  // An ISOA source's run (st.runs[k]) slice by slice with its readers' runs of the strip.
  Status RunIsoa(const TiledStrip& st, size_t k);
  // After a run: parameters counted, rows recorded, new rows of group outputs written to DRAM.
  void Done(const TiledRun& r);
  // Run() records the op's calls and operands here instead of running them (ISOA runs).
  struct Captured {
    OpCalls calls;
    std::vector<const uint8_t*> in;
    std::vector<uint8_t*> out;
  };
  Captured* capture_ = nullptr;

  const TiledSchedule& ts_;
  ir::Graph& sg_;
  const QuantizedModel* q_;
  std::vector<uint8_t>& buf_;
  const std::vector<uint8_t*>& home_;
  const std::map<int, const uint8_t*>& param_ptr_;
  TiledCounts* c_;
  int64_t image_ = 0;
  std::vector<int64_t> lo_, hi_;  // per window owner: rows [lo, hi) held
  std::vector<int64_t> rows_;     // per tensor: rows computed / loaded
  std::vector<std::pair<ir::TensorId, std::vector<int64_t>>> saved_;
};

// Streaming global average pooling: the strip's rows added to the sums; once the input is
// complete, the outputs from them (the kernels' own arithmetic, sramplan_rt_int8.h).
Status TileRunner::Stream(const TiledRun& r) {
  const ir::Op& op0 = *ts_.ops[r.op];
  ir::Op& op = sg_.op(op0.id);
  const TiledOp& oi = ts_.op_info[r.op];
  const std::string where = "tiled run of op '" + op0.name + "' input rows [" + std::to_string(r.out_begin) + ", " +
                            std::to_string(r.out_end) + ")";
  const int t = oi.in[0], o = oi.out[0];
  const TiledTensor& x = ts_.tensors[t];
  if (r.out_begin < Lo(t) || r.out_end > rows_[t]) return InternalError(where + ": rows not in the window");
  int32_t* sums = reinterpret_cast<int32_t*>(buf_.data() + oi.sums_offset);
  const int64_t channels = sg_.tensor(ts_.tensors[o].id).shape.back();
  if (r.out_begin == 0) std::memset(sums, 0, static_cast<size_t>(4 * channels));
  auto record = [&](int64_t rows) -> StatusOr<KernelCall> {
    saved_.clear();
    SetShape(x.id, rows);
    SetShape(ts_.tensors[o].id, -1);
    auto calls = BuildCallsS8(sg_, op, *q_);
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) sg_.tensor(it->first).shape = it->second;
    if (!calls.ok()) return calls.status();
    if (calls->blocks.size() != 1 || calls->blocks[0].calls.size() != 1)
      return Unsupported(where + ": not one global pooling call");
    return calls->blocks[0].calls[0];
  };
  SP_ASSIGN_OR_RETURN(KernelCall strip, record(r.out_end - r.out_begin));
  if (strip.fn != KernelFn::kGlobalAvgPoolS8 && strip.fn != KernelFn::kGlobalAvgPoolRequantS8)
    return Unsupported(where + ": not a global average pooling call");
  const sp_tensor_t xd = std::get<sp_tensor_t>(strip.args[0]);
  if (sp_global_pool_sum_s8(&xd, reinterpret_cast<const int8_t*>(Row(t, r.out_begin)), sums) != SP_OK)
    return InternalError(where + ": the sum kernel refused its operands");
  if (!r.finish) return Status::Ok();
  SP_ASSIGN_OR_RETURN(KernelCall whole, record(-1));
  const auto& v = whole.args;
  const sp_tensor_t xw = std::get<sp_tensor_t>(v[0]);
  const int32_t count = xw.dims[2] * xw.dims[3];
  auto I = [&](size_t k) { return static_cast<int32_t>(std::get<int64_t>(v[k])); };
  SP_RETURN_IF_ERROR(Fits(o, 1));
  int8_t* out = reinterpret_cast<int8_t*>(Row(o, 0));
  sp_status_t st;
  if (whole.fn == KernelFn::kGlobalAvgPoolS8) {
    const sp_tensor_t yd = std::get<sp_tensor_t>(v[4]);
    st = sp_global_avg_pool_finish_s8(sums, count, nullptr, 0, 0, I(2), I(3), &yd, out);
  } else {
    const sp_requant_t rq = std::get<sp_requant_t>(v[3]);
    const sp_tensor_t yd = std::get<sp_tensor_t>(v[7]);
    st = sp_global_avg_pool_finish_s8(sums, count, &rq, I(2), I(4), I(5), I(6), &yd, out);
  }
  if (st != SP_OK) return InternalError(where + ": the finish kernel refused its operands");
  rows_[o] = ts_.tensors[o].rows;
  if (ts_.tensors[o].to_dram) {
    std::memcpy(Dram(o, 0), Row(o, 0), static_cast<size_t>(ImageBytes(o)));
    if (!ts_.tensors[o].on_chip) c_->write_bytes += ImageBytes(o);
  }
  return Status::Ok();
}

Status TileRunner::Run(const TiledRun& r) {
  if (ts_.op_info[r.op].stream) return Stream(r);
  const ir::Op& op0 = *ts_.ops[r.op];
  ir::Op& op = sg_.op(op0.id);
  const TiledOp& oi = ts_.op_info[r.op];
  const int64_t a = r.out_begin, b = r.out_end;
  const std::string where = "tiled run of op '" + op0.name + "' rows [" + std::to_string(a) + ", " +
                            std::to_string(b) + ")";
  saved_.clear();
  const ir::Attributes attrs = op.attrs;
  std::vector<const uint8_t*> in;
  std::vector<uint8_t*> out;
  Status st = Status::Ok();
  for (size_t k = 0; k < op.inputs.size() && st.ok(); ++k) {
    const int t = oi.in[k];
    if (t < 0) {
      in.push_back(param_ptr_.at(op.inputs[k].value()));
      continue;
    }
    const TiledTensor& x = ts_.tensors[t];
    const TiledInput& ru = oi.rules[k];
    int64_t ia = 0, ib = x.rows;
    if (oi.rowwise && ru.rule == TiledRule::kSame) {
      ia = a;
      ib = b;
    } else if (oi.rowwise && ru.rule == TiledRule::kWindow && op.type == "Pad") {
      // Output rows [a, b) are input rows [a - top, b - top) clipped, the rest padding; a strip
      // entirely in the padding reads no input row.
      ia = std::min(NeedLo(ru, a), x.rows);
      ib = NeedHi(ru, b, x.rows);
      std::vector<int64_t> pads = ru.pads;
      if (ib <= ia) {
        ia = ib = std::clamp(ia, Lo(t), rows_[t]);
        pads[1] = b - a;
        pads[5] = 0;
      } else {
        pads[1] = ia - (a - ru.pad_top);
        pads[5] = (b - a) - (ib - ia) - pads[1];
      }
      op.attrs.Set("pads", pads);
    } else if (oi.rowwise && ru.rule == TiledRule::kWindow && op.type == "Slice") {
      // Output rows [a, b) are input rows [a + start, b + start): the strip's slice starts at its
      // first row.
      ia = NeedLo(ru, a);
      ib = NeedHi(ru, b, x.rows);
      int entry = -1;
      RowSlice(sg_, op, nullptr, &entry);
      if (entry >= 0) {
        std::vector<int64_t> starts = op.attrs.GetInts("starts");
        starts[entry] = 0;
        op.attrs.Set("starts", starts);
      }
    } else if (oi.rowwise && ru.rule == TiledRule::kWindow) {
      ia = NeedLo(ru, a);
      ib = NeedHi(ru, b, x.rows);
      std::vector<int64_t> pads = ru.pads;
      pads[0] = ia - (a * ru.stride - ru.pad_top);
      pads[2] = (b - 1) * ru.stride - ru.pad_top + ru.k_eff - ib;
      op.attrs.Set("pads", pads);
      op.attrs.Set("auto_pad", std::string("NOTSET"));
      if (op.type != "Conv") op.attrs.Set("ceil_mode", int64_t{0});
    }
    if (ia < Lo(t) || ib > rows_[t])
      st = InternalError(where + ": rows [" + std::to_string(ia) + ", " + std::to_string(ib) + ") of '" +
                         sg_.tensor(x.id).name + "' are not in its window [" + std::to_string(Lo(t)) + ", " +
                         std::to_string(rows_[t]) + ")");
    in.push_back(Row(t, ia));
    SetShape(x.id, x.rows > 1 ? ib - ia : -1);
  }
  for (size_t k = 0; k < op.outputs.size() && st.ok(); ++k) {
    const int t = oi.out[k];
    const int64_t oa = oi.rowwise ? a : 0, ob = oi.rowwise ? b : ts_.tensors[t].rows;
    st = Fits(t, ob);
    // A streamed ISOA output goes to DRAM as the PE array produces it (its T_c-channel staging rows
    // are counted in the working set).
    out.push_back(ts_.tensors[t].direct ? Dram(t, oa) : Row(t, oa));
    SetShape(ts_.tensors[t].id, ts_.tensors[t].rows > 1 ? ob - oa : -1);
  }
  OperandBytes bytes;
  for (ir::TensorId id : op.inputs) bytes.in.push_back(sg_.tensor(id).Bytes());
  for (ir::TensorId id : op.outputs) bytes.out.push_back(sg_.tensor(id).Bytes());
  if (st.ok()) {
    if (ir::IsViewOp(op.type)) {
      // The view's bytes in its own window, or already there (in situ).
      if (out[0] != in[0]) std::memmove(out[0], in[0], static_cast<size_t>(bytes.out[0]));
    } else if (!q_) {
      st = RunKernel(sg_, op, in, out, bytes);
    } else if (IsHybridHostOp(sg_, op)) {  // a hybrid graph's float32 op or conversion (exec/hybrid.h)
      st = RunHybridHostOp(sg_, op, *q_, in, out, bytes);
    } else {
      st = CheckKernelOperands(sg_, op, true, bytes);
      if (st.ok()) {
        auto calls = BuildCallsS8(sg_, op, *q_);
        if (calls.ok() && capture_) {
          *capture_ = {std::move(*calls), in, out};
        } else {
          st = calls.ok() ? ExecuteCalls(op, *calls, in, out, nullptr) : calls.status();
        }
      }
    }
  }
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) sg_.tensor(it->first).shape = it->second;
  op.attrs = attrs;
  if (!st.ok()) return st.WithContext(where);
  if (capture_) {
    if (capture_->out.empty()) return InternalError(where + ": no int8 kernel calls to run by channel slices");
    return Status::Ok();
  }
  Done(r);
  return Status::Ok();
}

void TileRunner::Done(const TiledRun& r) {
  const TiledOp& oi = ts_.op_info[r.op];
  if (!ts_.params_resident) c_->read_bytes += oi.param_bytes;
  // New rows: recorded, and written to DRAM once when the group outputs them (a sliced output:
  // slice by slice, RunIsoa).
  for (const int t : oi.out) {
    const TiledTensor& x = ts_.tensors[t];
    const int64_t oa = oi.rowwise ? r.out_begin : 0, ob = oi.rowwise ? r.out_end : x.rows;
    rows_[t] = ob;
    if (!x.to_dram || x.sliced) continue;
    const int64_t n = (ob - oa) * x.row_bytes;
    if (!x.direct) std::memcpy(Dram(t, oa), Row(t, oa), static_cast<size_t>(n));
    if (!x.on_chip) c_->write_bytes += n;
  }
}

Status TileRunner::RunIsoa(const TiledStrip& st, size_t k) {
  const TiledRun& r = st.runs[k];
  const int x = ts_.op_info[r.op].out[0];
  const TiledTensor& xt = ts_.tensors[x];
  Captured src;
  capture_ = &src;
  Status s = Run(r);
  capture_ = nullptr;
  SP_RETURN_IF_ERROR(s);
  rows_[x] = r.out_end;  // the readers' operands point into the slice window
  std::vector<std::pair<const TiledRun*, Captured>> readers;
  for (size_t j = k + 1; j < st.runs.size(); ++j) {
    const TiledOp& oj = ts_.op_info[st.runs[j].op];
    if (!oj.isoa_reader || oj.in[0] != x) continue;
    readers.push_back({&st.runs[j], {}});
    capture_ = &readers.back().second;
    s = Run(st.runs[j]);
    capture_ = nullptr;
    SP_RETURN_IF_ERROR(s);
    const std::vector<int64_t>& y = sg_.tensor(ts_.tensors[oj.out[0]].id).shape;
    std::memset(buf_.data() + oj.sums_offset, 0,
                static_cast<size_t>(4 * (st.runs[j].out_end - st.runs[j].out_begin) * y[2] * y[3]));
  }
  const ir::Op& op = *ts_.ops[r.op];
  const int64_t channels = sg_.tensor(xt.id).shape[3], tc = xt.slice_channels;
  const int64_t es = ir::DataTypeSize(sg_.tensor(xt.id).dtype), width = xt.row_bytes / (channels * es);
  for (int64_t c0 = 0; c0 < channels; c0 += tc) {
    const int64_t n = std::min(tc, channels - c0);
    SP_RETURN_IF_ERROR(IsoaSourceSlice(op, src.calls, src.in, Row(x, r.out_begin), c0, n, tc));
    if (xt.to_dram) {  // the slice's rows to DRAM, T_c channels at a time
      for (int64_t row = r.out_begin; row < r.out_end; ++row)
        for (int64_t w = 0; w < width; ++w)
          std::memcpy(Dram(x, row) + (w * channels + c0) * es, Row(x, row) + w * tc * es, static_cast<size_t>(n * es));
      if (!xt.on_chip) c_->write_bytes += (r.out_end - r.out_begin) * width * n * es;
    }
    for (auto& [run, cap] : readers) {
      const ir::Op& rop = *ts_.ops[run->op];
      SP_RETURN_IF_ERROR(IsoaAccumulate(rop, cap.calls, cap.in, cap.in[0], c0, n, tc,
                                        reinterpret_cast<int32_t*>(buf_.data() + ts_.op_info[run->op].sums_offset)));
    }
  }
  for (auto& [run, cap] : readers) {
    const ir::Op& rop = *ts_.ops[run->op];
    SP_RETURN_IF_ERROR(IsoaFinish(rop, cap.calls, cap.in,
                                  reinterpret_cast<const int32_t*>(buf_.data() + ts_.op_info[run->op].sums_offset),
                                  cap.out[0]));
    Done(*run);
  }
  Done(r);
  return Status::Ok();
}

}  // namespace

std::string TiledTrafficWhy(const TiledSchedule& ts) {
  int64_t runs = 0, inputs = 0, outputs = 0;
  for (const TiledStrip& st : ts.strips)
    for (const TiledRun& r : st.runs) runs += ts.op_info[r.op].param_bytes > 0;
  for (const TiledTensor& t : ts.tensors) {
    inputs += t.producer < 0 ? t.rows * t.row_bytes * ts.images : 0;
    outputs += t.to_dram ? t.rows * t.row_bytes * ts.images : 0;
  }
  std::string why = "inputs " + std::to_string(inputs) + " B and outputs " + std::to_string(outputs) + " B once, " +
                    std::to_string(ts.param_bytes) + " B of parameters ";
  if (ts.params_resident) return why + "loaded once";
  return why + "streamed by " + std::to_string(runs) + " op runs with parameters per image (" +
         std::to_string(ts.tiles) + " strips; an op whose rows are done or not yet needed skips a strip, " +
         "an op on whole operands runs once)";
}

StatusOr<TiledCounts> RunTiledSchedule(const TiledSchedule& ts, ir::Graph& scratch, const QuantizedModel* q,
                                       const DramLocator& dram, std::vector<uint8_t>& buffer) {
  TiledCounts c;
  buffer.assign(static_cast<size_t>(ts.buffer_capacity), kPoison);
  std::vector<uint8_t*> home(ts.tensors.size(), nullptr);
  for (size_t t = 0; t < ts.tensors.size(); ++t)
    if (ts.tensors[t].producer < 0 || ts.tensors[t].to_dram) {
      SP_ASSIGN_OR_RETURN(home[t], dram(scratch.tensor(ts.tensors[t].id)));
    }
  std::map<int, const uint8_t*> param_ptr;
  int64_t at = ts.param_offset;
  for (ir::TensorId id : ts.params) {
    SP_ASSIGN_OR_RETURN(uint8_t* d, dram(scratch.tensor(id)));
    const int64_t n = scratch.tensor(id).Bytes();
    if (ts.params_resident) {  // loaded into the global buffer once for the group
      std::memcpy(buffer.data() + at, d, static_cast<size_t>(n));
      param_ptr[id.value()] = buffer.data() + at;
      at += n;
      c.read_bytes += n;
    } else {
      param_ptr[id.value()] = d;  // streamed from DRAM by every strip that runs the op
    }
  }
  TileRunner runner(ts, scratch, q, buffer, home, param_ptr, &c);
  for (int64_t i = 0; i < ts.images; ++i) SP_RETURN_IF_ERROR(runner.RunImage(i));
  return c;
}

}  // namespace sramplan::exec
