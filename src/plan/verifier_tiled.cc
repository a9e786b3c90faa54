// The verifier's check of fused-tiled steps (Optimus groups): from the plan alone it re-derives
// the rows every tensor of the group holds per strip (the tile relation backwards from the
// group's outputs), the working set in the step's workspace, and the group's DRAM bytes (Eq. 3),
// and compares them with the step's `tiled` parameters. Shares no code with src/fusion.
#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {
namespace {

bool InSituType(const std::string& t) {
  return IsViewType(t) || (ElementwiseTypes().count(t) && t != "Add" && t != "Sub" && t != "Mul" && t != "Div" &&
                           t != "Pow" && t != "Max" && t != "Min");
}
bool SameRowType(const std::string& t) { return ElementwiseTypes().count(t) || t == "Concat" || IsViewType(t); }
// Global average pooling streams its input into 32-bit sums per channel; every other reduction
// reads its whole input at once.
bool StreamedReduce(const StepOp& op) { return op.type == "GlobalAveragePool"; }

bool UnitSteps(const StepOp& op) {
  const std::vector<int64_t> steps = Attr(op, "steps", {});
  return std::all_of(steps.begin(), steps.end(), [](int64_t v) { return v == 1; });
}

// A Slice's start on axis `h` (from its recorded `starts` and `axes`), normalised and clipped to
// [0, rows]; 0 when it does not slice that axis.
int64_t SliceStartH(const StepOp& op, int64_t h, int64_t rows) {
  const std::vector<int64_t> starts = Attr(op, "starts", {}), axes = Attr(op, "axes", {});
  int64_t start = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = k < axes.size() ? (axes[k] < 0 ? axes[k] + 4 : axes[k]) : static_cast<int64_t>(k);
    if (a == h) start = starts[k] < 0 ? starts[k] + rows : starts[k];
  }
  return std::clamp<int64_t>(start, 0, rows);
}

// A constant Pad of a 4-D feature map with non-negative pads and none on the batch axis: its
// output rows follow its input rows one to one (a window of one row with padding).
bool RowPad(const StepOp& op) {
  if (op.type != "Pad" || Attr(op, "pad_mode", {0}) != std::vector<int64_t>{0}) return false;
  const std::vector<int64_t> pads = Attr(op, "pads", {});
  if (pads.size() != 8 || pads[0] != 0 || pads[4] != 0) return false;
  return std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v >= 0; });
}

}  // namespace

// The layout of the plan's feature maps: NHWC when more convolutions agree with it only than with
// NCHW only (their weights fix the channel axis).
bool Checker::DetectNhwc() const {
  int nhwc = 0, nchw = 0;
  for (const auto& st : p_.steps)
    for (const auto& op : st.ops) {
      if (!IsConvType(op.type) || op.inputs.empty() || op.outputs.empty()) continue;
      const std::vector<int64_t>* x = GoodShape(op.inputs[0]);
      const std::vector<int64_t>* y = GoodShape(op.outputs[0]);
      if (!x || !y || x->size() < 3 || x->size() > 8) continue;
      const bool a = WindowOutput(op, *x, true) == *y, b = WindowOutput(op, *x, false) == *y;
      nhwc += a && !b;
      nchw += b && !a;
    }
  return nhwc > nchw;
}

// Rows (H) of a tensor: its height when it is a 4-D feature map, else 1; channels likewise.
std::pair<int64_t, int64_t> Checker::RowsChannels(const Tensor& t) const {
  if (t.shape.size() != 4) return {1, 1};
  return plan_nhwc_ ? std::make_pair(t.shape[1], t.shape[3]) : std::make_pair(t.shape[2], t.shape[1]);
}

// A fused-tiled step: tiles >= 1, a workspace on chip at least as large as the working set the
// verifier derives, which must equal params.group.buffer_bytes, and DRAM bytes equal to the ones
// derived (inputs once, parameters once when resident else per strip and image, outputs once).
void Checker::CheckFusedTiled(int s) {
  const Step& st = p_.steps[s];
  const TiledGroup& tg = st.tiled;
  const std::string where = "steps[" + Str(s) + "] (kind 'fused-tiled')";
  if (tg.tiles < 1 || tg.tiles > kInt32Max || tg.tile_channels < 1 || tg.tile_channels > kInt32Max) {
    Err(where + ": group.tiles " + Str(tg.tiles) + " and group.tile_channels " + Str(tg.tile_channels) +
        " must be in [1, " + Str(kInt32Max) + "]");
    return;
  }
  if (st.segment_bytes != 0 || st.row_cache) Err(where + ": segment_bytes and row_cache are for segment steps");
  if (tg.halo != "recompute" && tg.halo != "line-buffer")
    Err(where + ": group.halo '" + tg.halo + "' must be \"recompute\" or \"line-buffer\"");
  std::map<std::string, size_t> op_at;  // op name -> position in the step
  for (size_t k = 0; k < st.ops.size(); ++k) op_at[st.ops[k].name] = k;
  std::set<std::string> isoa(tg.isoa.begin(), tg.isoa.end());
  for (const auto& name : tg.isoa)
    if (!op_at.count(name)) Err(where + ": group.isoa names op '" + name + "', which the step does not run");
  // Every tensor the ops touch, well-formed, or the step is not checked further.
  for (const auto& op : st.ops)
    for (const auto* list : {&op.inputs, &op.outputs})
      for (const auto& name : *list)
        if (!GoodShape(name)) return;
  auto inside = [&](const std::string& op) { return op_at.count(op) > 0; };
  auto step_output = [&](const Tensor& t) {
    if (t.kind == "output") return true;
    for (const auto& c : t.consumers)
      if (!inside(c)) return true;
    return false;
  };
  // Rows per tensor, backwards through the ops.
  std::map<std::string, int64_t> rows;
  std::map<std::string, int64_t> rows_read;  // group inputs: rows read from DRAM (a strided window may skip the last)
  std::set<std::string> in_situ;  // outputs an element-wise or view op of the step rewrites in place
  int64_t sums = 0;  // int32 sums of streamed global average pooling
  const int64_t tiles = tg.tiles;
  int64_t ref_rows = 1;
  // (A view's output that stays inside the group is no feature map of its own: a view merges into
  // the operator it follows.)
  for (const auto& op : st.ops)
    for (const auto* list : {&op.inputs, &op.outputs})
      for (const auto& name : *list) {
        const Tensor& t = *FindTensor(name);
        const bool view_inside = !t.producer.empty() && inside(t.producer) && !step_output(t) &&
                                 IsViewType(st.ops[op_at[t.producer]].type);
        if (t.kind == "constant" || view_inside) continue;
        ref_rows = std::max(ref_rows, RowsChannels(t).first);
      }
  // Line buffers (group.halo "line-buffer"): per tensor the rows a strip adds (new_rows) and the
  // window its one driver needs for them (win); drivers: the step's ops reading it, + 1 when the
  // step writes it out. A tensor with several drivers keeps the recompute rows.
  const bool line = tg.halo == "line-buffer";
  std::map<std::string, int64_t> new_rows, win, first;  // first: rows the first strip needs
  std::map<std::string, int> drivers;
  for (const auto& op : st.ops) {
    std::set<std::string> read(op.inputs.begin(), op.inputs.end());
    for (const auto& in : read) ++drivers[in];
    for (const auto& o : op.outputs) drivers[o] += step_output(*FindTensor(o));
  }
  for (size_t k = st.ops.size(); k-- > 0;) {
    const StepOp& op = st.ops[k];
    int64_t out_r = 0, out_h = 1, out_d = 0, out_f = 0;
    for (const auto& o : op.outputs) {
      const Tensor& t = *FindTensor(o);
      const int64_t h = RowsChannels(t).first;
      int64_t& r = rows[o];
      if (step_output(t)) r = std::max(r, CeilDiv(h, tiles));
      r = std::min(std::max<int64_t>(r, 1), h);
      out_r = std::max(out_r, r);
      out_h = h;
      int64_t& d = new_rows[o];
      if (step_output(t)) d = std::max(d, CeilDiv(h, tiles));
      d = std::min(std::max<int64_t>(d, 1), h);
      int64_t& f = first[o];
      if (step_output(t)) f = std::max(f, CeilDiv(h, tiles));
      f = std::min(std::max<int64_t>(f, 1), h);
      if (drivers[o] >= 2) d = f = r;
      out_d = std::max(out_d, d);
      out_f = std::max(out_f, f);
    }
    int data_inputs = 0;
    for (const auto& in : op.inputs) data_inputs += FindTensor(in)->kind != "constant";
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Tensor& t = *FindTensor(op.inputs[i]);
      if (t.kind == "constant") continue;
      const int64_t h = RowsChannels(t).first;
      const bool window = (IsConvType(op.type) || IsPoolType(op.type)) && op.attrs.count("kernel_shape") &&
                          Attr(op, "kernel_shape", {}).size() == 2 && t.shape.size() == 4;
      int64_t read = h;  // rows of it the op reads over all strips
      // Rows of the input for r output rows (add: the rows r more output rows add to a line buffer;
      // top: the rows the first r output rows need, from the top padding).
      auto need = [&](int64_t r, bool add, bool top = false) -> int64_t {
        if (i == 0 && window && out_h == RowsChannels(*FindTensor(op.outputs[0])).first) {
          const int64_t stride = Attr(op, "strides", {1, 1})[0], dil = Attr(op, "dilations", {1, 1})[0];
          const int64_t k_eff = dil * (Attr(op, "kernel_shape", {1, 1})[0] - 1) + 1;
          const std::vector<int64_t> pads = Attr(op, "pads", {0, 0, 0, 0});
          if (top) return std::max<int64_t>(1, std::min(h, (r - 1) * stride - (pads.empty() ? 0 : pads[0]) + k_eff));
          // Rows between windows of a stride longer than the window still pass through the line buffer.
          return std::min(h, add ? r * stride : (r - 1) * stride + std::max(k_eff, stride));
        }
        if (i == 0 && RowPad(op) && t.shape.size() == 4 && out_h > 1) {
          // Output row r is input row r - pad_top: a window of one row, its shift held as halo.
          const std::vector<int64_t> pads = Attr(op, "pads", {});
          const size_t hx = plan_nhwc_ ? 1 : 2;
          const int64_t lead = std::max(pads[hx], pads[hx + 4]);
          if (top) return std::max<int64_t>(1, std::min(h, r + lead - pads[hx]));
          return std::min(h, add ? r : r + lead);
        }
        if (i == 0 && op.type == "Slice" && op.inputs.size() <= 4 && UnitSteps(op))
          // Unit steps: a window of as many rows shifted by its start on H, the shift held as halo.
          return std::min(h, add ? r : r + SliceStartH(op, plan_nhwc_ ? 1 : 2, h));
        if (StreamedReduce(op) && out_h == 1) return CeilDiv(h, tiles);
        if (SameRowType(op.type) && (h == out_h || h == 1)) return std::min(h, r);
        return h;  // the whole input
      };
      if (i == 0 && window && out_h == RowsChannels(*FindTensor(op.outputs[0])).first) {
        const int64_t stride = Attr(op, "strides", {1, 1})[0], dil = Attr(op, "dilations", {1, 1})[0];
        const int64_t k_eff = dil * (Attr(op, "kernel_shape", {1, 1})[0] - 1) + 1;
        const std::vector<int64_t> pads = Attr(op, "pads", {0, 0, 0, 0});
        read = std::max<int64_t>(1, std::min(h, (out_h - 1) * stride - (pads.empty() ? 0 : pads[0]) + k_eff));
      } else if (StreamedReduce(op) && out_h == 1 && h > 1) {
        sums = SaturatingAdd(sums, 4 * RowsChannels(t).second);
      }
      rows[op.inputs[i]] = std::max(rows[op.inputs[i]], need(out_r, false));
      new_rows[op.inputs[i]] = std::max(new_rows[op.inputs[i]], need(out_d, true));
      win[op.inputs[i]] = std::max(win[op.inputs[i]], need(out_d, false));
      first[op.inputs[i]] = std::max(first[op.inputs[i]], need(out_f, false, true));
      rows_read[op.inputs[i]] = std::max(rows_read[op.inputs[i]], read);
      const auto pr = produced_at_.find(op.inputs[i]);
      if (InSituType(op.type) && data_inputs == 1 && t.consumers.size() == 1 && t.kind == "activation" &&
          pr != produced_at_.end() && pr->second == s)
        in_situ.insert(op.inputs[i]);
    }
  }
  // int32 partial sums of the ops that read an ISOA output of the step (one input-channel slice
  // after the other): 4 bytes per element of the rows their outputs hold. (An op listed in
  // group.isoa itself is merged into the ISOA operator, e.g. its activation: no reader.)
  int64_t partial = 0;
  for (const auto& op : st.ops) {
    if (isoa.count(op.name)) continue;
    bool reads_isoa = false;
    for (const auto& in : op.inputs) {
      const Tensor& t = *FindTensor(in);
      reads_isoa = reads_isoa || (t.kind != "constant" && isoa.count(t.producer) && inside(t.producer));
    }
    if (!reads_isoa) continue;
    for (const auto& o : op.outputs) {
      const Tensor& t = *FindTensor(o);
      int64_t elems = 1;
      for (int64_t d : t.shape) elems = CheckedMul(elems, std::max<int64_t>(d, 0)).value_or(kInt64Max);
      const int64_t images = t.shape.size() >= 2 && t.shape[0] == p_.batch ? p_.batch : 1;
      const int64_t row_elems = CeilDiv(elems, std::max<int64_t>(1, images * RowsChannels(t).first));
      partial = SaturatingAdd(partial, CheckedMul(4 * rows[o], row_elems).value_or(kInt64Max));
    }
  }
  // Working set, and DRAM bytes.
  int64_t fmap = SaturatingAdd(sums, partial), params = 0, rd = 0, wr = 0;
  std::set<std::string> seen_const, seen_in;
  for (const auto& [name, r] : rows) {
    if (in_situ.count(name)) continue;
    const Tensor& t = *FindTensor(name);
    const auto [h, c] = RowsChannels(t);
    const int64_t images = t.shape.size() >= 2 && t.shape[0] == p_.batch ? p_.batch : 1;
    const int64_t row_bytes = CeilDiv(t.bytes, std::max<int64_t>(1, images * h));
    const bool phi = !t.producer.empty() && isoa.count(t.producer) && c > tg.tile_channels;
    const int64_t tc_bytes = phi ? CeilDiv(row_bytes, c) * tg.tile_channels : row_bytes;
    if (line && drivers[name] < 2) {
      // One driver: its window of the rows a strip adds; an ISOA output's cached rows hold every channel.
      const int64_t d = new_rows[name];
      const int64_t w = std::max({win[name], d, first[name]});
      fmap = SaturatingAdd(fmap, SaturatingAdd(d * tc_bytes, (w - d) * row_bytes));
      continue;
    }
    fmap = SaturatingAdd(fmap, r * tc_bytes);
  }
  for (const auto& op : st.ops) {
    for (const auto& in : op.inputs) {
      const Tensor& t = *FindTensor(in);
      if (t.kind == "constant") {
        if (seen_const.insert(in).second) params = SaturatingAdd(params, t.bytes);
      } else if (!(t.producer.size() && inside(t.producer)) && seen_in.insert(in).second && !KeptOnChip(in, s)) {
        const int64_t h = RowsChannels(t).first, read = rows_read[in];
        rd = SaturatingAdd(rd, read >= h || h <= 0 ? t.bytes : t.bytes / h * read);
      }
    }
    for (const auto& o : op.outputs)
      if (step_output(*FindTensor(o)) && !KeptOnChip(o, s)) wr = SaturatingAdd(wr, FindTensor(o)->bytes);
  }
  const int64_t work = tg.params_resident ? SaturatingAdd(fmap, params) : fmap;
  const std::optional<int64_t> streamed = CheckedMul(params, tiles * std::max<int64_t>(p_.batch, 1));
  rd = SaturatingAdd(rd, tg.params_resident ? params : streamed.value_or(kInt64Max));
  if (work != tg.buffer_bytes)
    Err(where + ": the group's working set is " + Str(work) + " bytes (" + Str(tiles) +
        " strips of its outputs, the tile relation backwards" +
        (partial > 0 ? ", with " + Str(partial) + " bytes of int32 partial sums of ISOA readers" : std::string()) +
        "), but group.buffer_bytes says " + Str(tg.buffer_bytes));
  const Buffer* ws = LiveWorkspace(s);
  if (!ws)
    Err(where + ": the group needs its workspace '" + st.workspace + "' on chip at this step");
  else if (ws->bytes < work)
    Err(where + ": workspace '" + ws->tensor + "' has " + Str(ws->bytes) + " bytes; the group's tiles need " +
        Str(work));
  if (rd != tg.dram_read_bytes || wr != tg.dram_write_bytes)
    Err(where + ": the group moves " + Str(rd) + " bytes from DRAM and " + Str(wr) +
        " to it (inputs and outputs once, parameters " + (tg.params_resident ? "once" : "per strip and image") +
        "), but group says " + Str(tg.dram_read_bytes) + " and " + Str(tg.dram_write_bytes));
  tiled_rd_ = SaturatingAdd(tiled_rd_, rd);
  tiled_wr_ = SaturatingAdd(tiled_wr_, wr);
  if (ref_rows > 0 && tg.tile_rows != CeilDiv(ref_rows, tiles))
    Err(where + ": group.tile_rows " + Str(tg.tile_rows) + " is not ceil(" + Str(ref_rows) + " / " + Str(tiles) + ")");
}

}  // namespace sramplan::plan::verifier_internal
