#include "fusion/optimus_model.h"
#include "fusion/isoa_rules.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "ir/op_geometry.h"
#include "support/int_math.h"

namespace sramplan::fusion {
namespace {

bool MergeableType(const std::string& type) {
  return ir::IsUnaryElementwise(type) || ir::IsViewOp(type);
}

bool IsSameRowType(const std::string& type) {
  return ir::IsUnaryElementwise(type) || ir::IsBinaryElementwise(type) || type == "Concat" || ir::IsViewOp(type);
}

// Rows (H) and channels of a 4-D feature map; 1 and 1 otherwise.
void RowsAndChannels(const ir::Graph& g, const ir::Tensor& t, int64_t* rows, int64_t* channels) {
  *rows = 1;
  *channels = 1;
  if (t.shape.size() != 4) return;
  *channels = t.shape[ir::ChannelAxis(g, 4)];
  *rows = t.shape[g.layout == ir::Layout::kNHWC ? 1 : 2];
}

// A Slice's start on the H axis, normalised and clipped to [0, in_rows] (0 when H is not sliced).
int64_t SliceStartH(const ir::Graph& g, const ir::Op& op, int64_t in_rows) {
  const std::vector<int64_t> starts = op.attrs.GetInts("starts"), axes = op.attrs.GetInts("axes");
  const int64_t h = g.layout == ir::Layout::kNHWC ? 1 : 2;
  int64_t start = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = k < axes.size() ? (axes[k] < 0 ? axes[k] + 4 : axes[k]) : static_cast<int64_t>(k);
    if (a != h) continue;
    start = starts[k] < 0 ? starts[k] + in_rows : starts[k];
  }
  return std::clamp<int64_t>(start, 0, in_rows);
}

// The row rule of input k of `op` (rows of the op's output `out_rows`).
RowMap OpRowMap(const ir::Graph& g, const ir::Op& op, size_t k, int64_t in_rows, int64_t out_rows) {
  RowMap m;
  m.in_rows = in_rows;
  if (k == 0 && (op.type == "Conv" || op.type == "MaxPool" || op.type == "AveragePool")) {
    std::optional<ir::WindowGeometry> w;
    if (op.type == "Conv") {
      auto cg = ir::ParseConvGeometry(g, op);
      if (cg.ok()) w = static_cast<const ir::WindowGeometry&>(*cg);
    } else {
      auto pg = ir::ParsePoolGeometry(g, op);
      if (pg.ok()) w = static_cast<const ir::WindowGeometry&>(*pg);
    }
    if (w && w->Is2D()) {
      m.rule = RowRule::kWindow;
      m.stride = w->strides[0];
      m.k_eff = w->EffectiveKernel(0);
      m.pad_top = w->pads[0];
      m.out_rows = out_rows;
      return m;
    }
  }
  if (k == 0 && op.type == "Pad" && out_rows > 1) {
    // A constant pad of a feature map: output row r is input row r - pad_top (a window of one row
    // with padding). The shift is held as halo: r output rows take r + max(pad_top, pad_bottom)
    // input rows, so that consumers of the input that do not pad, progressing with the strips,
    // find their rows in the same window.
    const std::vector<int64_t> pads = op.attrs.GetInts("pads");
    const size_t h = g.layout == ir::Layout::kNHWC ? 1 : 2;
    bool ok = op.attrs.GetString("mode", "constant") == "constant" && pads.size() == 8 && pads[0] == 0 &&
              pads[4] == 0;
    for (int64_t v : pads) ok = ok && v >= 0;
    if (ok) {
      m.rule = RowRule::kWindow;
      m.pad_top = pads[h];
      m.k_eff = 1 + std::max(pads[h], pads[h + 4]);
      m.out_rows = out_rows;
      return m;
    }
  }
  if (k == 0 && op.type == "Slice" && op.inputs.size() <= 4) {
    // A slice with unit steps keeps the row count (a shifted window of r rows). Output row r is
    // input row r + start (its start on H); the shift is held as halo, as a Pad's: r output rows
    // take r + start input rows.
    bool unit = true;
    for (int64_t st : op.attrs.GetInts("steps")) unit = unit && st == 1;
    if (unit) {
      m.rule = RowRule::kWindow;
      m.k_eff = 1 + SliceStartH(g, op, in_rows);
      return m;
    }
  }
  if (op.type == "GlobalAveragePool" && out_rows == 1 && in_rows >= 1) {
    // Global average pooling streams its input strip by strip into per-channel 32-bit sums (the
    // int8 executor, exec_tiled); the other reductions run once on their whole input.
    m.rule = RowRule::kReduce;
    return m;
  }
  if (IsSameRowType(op.type) && (in_rows == out_rows || in_rows == 1)) {
    m.rule = RowRule::kSame;
    return m;
  }
  m.rule = RowRule::kWhole;
  return m;
}

}  // namespace

StatusOr<AccelModel> AccelModel::From(const target::Target& t, int64_t batch) {
  if (t.arena_level < 0 || t.arena_level >= static_cast<int>(t.levels.size()))
    return InvalidArgument("target '" + t.name + "' has no arena level (the global buffer)");
  AccelModel m;
  m.buffer_bytes = t.levels[t.arena_level].capacity;
  // The Ow|Cout dataflow (the paper's footnote 4): PE rows take output columns, PE columns output
  // channels. A strip's t_w is the full width, so T_w is met; T_h is one row.
  m.t_c = std::max<int64_t>(1, t.compute.pe_cols);
  m.t_w = std::max<int64_t>(1, t.compute.pe_rows);
  m.t_h = 1;
  m.batch = std::max<int64_t>(1, batch);
  return m;
}

int64_t RowMap::RowsRead() const {
  if (rule != RowRule::kWindow || out_rows <= 0 || fixed_out > 0) return in_rows;
  return std::max<int64_t>(1, std::min(in_rows, (out_rows - 1) * stride - pad_top + k_eff));
}

int64_t RowMap::Apply(int64_t r, int64_t tiles) const {
  if (fixed_out > 0) r = fixed_out;
  switch (rule) {
    case RowRule::kWindow:
      // A stride longer than the window skips rows between windows, but the line buffer still
      // receives them (inputs load, producers compute, contiguous rows): r windows span
      // (r - 1) * stride + max(k_eff, stride) rows.
      return std::min(in_rows, (std::max<int64_t>(r, 1) - 1) * stride + std::max(k_eff, stride));
    case RowRule::kSame:
      return std::min(in_rows, std::max<int64_t>(r, 1));
    case RowRule::kReduce:
      return CeilDiv(in_rows, std::max<int64_t>(tiles, 1));
    case RowRule::kWhole:
      break;
  }
  return in_rows;
}

int64_t RowMap::NewRows(int64_t d, int64_t tiles) const {
  if (fixed_out > 0 || rule != RowRule::kWindow) return Apply(d, tiles);
  return std::min(in_rows, std::max<int64_t>(d, 1) * stride);
}

int64_t RowMap::FirstRows(int64_t f, int64_t tiles) const {
  if (fixed_out > 0 || rule != RowRule::kWindow) return Apply(f, tiles);
  return std::max<int64_t>(1, std::min(in_rows, (std::max<int64_t>(f, 1) - 1) * stride - pad_top + k_eff));
}

const char* HaloName(Halo h) { return h == Halo::kLineBuffer ? "line-buffer" : "recompute"; }

StatusOr<FusionGraph> BuildFusionGraph(const ir::Graph& g, const analysis::Schedule& order, int64_t batch) {
  FusionGraph fg;
  fg.batch = std::max<int64_t>(batch, 1);
  std::vector<int> vertex_of_op(g.num_ops(), -1);
  for (ir::OpId id : order) {
    const ir::Op& op = g.op(id);
    int merge_into = -1;
    if (MergeableType(op.type)) {
      std::vector<ir::TensorId> data;
      for (ir::TensorId in : op.inputs)
        if (g.tensor(in).kind != ir::TensorKind::kConstant) data.push_back(in);
      if (data.size() == 1) {
        const ir::Tensor& x = g.tensor(data[0]);
        if (x.producer.valid() && x.consumers.size() == 1 && x.kind != ir::TensorKind::kOutput)
          merge_into = vertex_of_op[x.producer.value()];
      }
    }
    if (merge_into >= 0) {
      fg.vertices[merge_into].ops.push_back(id);
      vertex_of_op[id.value()] = merge_into;
      continue;
    }
    Vertex v;
    v.ops = {id};
    v.name = op.name;
    v.known = op.type != "Opaque";
    vertex_of_op[id.value()] = static_cast<int>(fg.vertices.size());
    fg.vertices.push_back(std::move(v));
  }
  // Feature maps between vertices, and every vertex's inputs, outputs and parameters.
  std::map<int, int> ftensor_of;  // ir tensor -> FTensor
  auto ftensor = [&](const ir::Tensor& t, int producer) {
    auto it = ftensor_of.find(t.id.value());
    if (it != ftensor_of.end()) return it->second;
    FTensor f;
    f.id = t.id;
    f.bytes = t.Bytes();
    RowsAndChannels(g, t, &f.rows, &f.channels);
    const int64_t images = t.shape.size() >= 2 && t.shape[0] == fg.batch ? fg.batch : 1;
    f.row_bytes = CeilDiv(f.bytes, images * f.rows);
    f.row_elems = CeilDiv(t.NumElements(), images * f.rows);
    f.producer = producer;
    f.graph_output = t.kind == ir::TensorKind::kOutput;
    fg.tensors.push_back(f);
    return ftensor_of[t.id.value()] = static_cast<int>(fg.tensors.size()) - 1;
  };
  for (size_t vi = 0; vi < fg.vertices.size(); ++vi) {
    Vertex& v = fg.vertices[vi];
    const ir::Op& main = g.op(v.ops.front());
    const ir::Op& last = g.op(v.ops.back());
    // The vertex's output rows: of its last op's first output.
    int64_t out_rows = 1, out_c = 1;
    if (!last.outputs.empty()) RowsAndChannels(g, g.tensor(last.outputs[0]), &out_rows, &out_c);
    int64_t main_rows = 1, main_c = 1;
    if (!main.outputs.empty()) RowsAndChannels(g, g.tensor(main.outputs[0]), &main_rows, &main_c);
    const bool rows_kept = main_rows == out_rows;
    v.channel_tiled = !last.outputs.empty() && g.tensor(last.outputs[0]).shape.size() == 4 && v.known;
    for (ir::OpId oid : v.ops) {
      const ir::Op& op = g.op(oid);
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const ir::Tensor& t = g.tensor(op.inputs[k]);
        if (t.kind == ir::TensorKind::kConstant) {
          v.param_bytes += t.Bytes();
          continue;
        }
        if (t.producer.valid() && vertex_of_op[t.producer.value()] == static_cast<int>(vi)) continue;
        const int f = ftensor(t, t.producer.valid() ? vertex_of_op[t.producer.value()] : -1);
        if (std::find(v.inputs.begin(), v.inputs.end(), f) != v.inputs.end()) continue;
        RowMap m;
        m.in_rows = fg.tensors[f].rows;
        if (oid == v.ops.front() && v.known) {
          m = OpRowMap(g, op, k, fg.tensors[f].rows, main_rows);
          if (m.rule == RowRule::kReduce && m.in_rows > 1) v.accum_bytes += 4 * fg.tensors[f].channels;
          // A merged view that changes the rows needs the main op's whole output.
          if (!rows_kept) m.fixed_out = main_rows;
        }
        v.inputs.push_back(f);
        v.in_maps.push_back(m);
      }
      for (ir::TensorId out : op.outputs) {
        const ir::Tensor& t = g.tensor(out);
        bool outside = t.kind == ir::TensorKind::kOutput;
        for (ir::OpId c : t.consumers) outside = outside || vertex_of_op[c.value()] != static_cast<int>(vi);
        if (outside) v.outputs.push_back(ftensor(t, static_cast<int>(vi)));
      }
    }
  }
  for (size_t vi = 0; vi < fg.vertices.size(); ++vi)
    for (int f : fg.vertices[vi].inputs) {
      FTensor& t = fg.tensors[f];
      t.consumers.push_back(static_cast<int>(vi));
      if (t.producer >= 0) {
        fg.vertices[vi].preds.push_back(t.producer);
        fg.vertices[t.producer].succs.push_back(static_cast<int>(vi));
      }
    }
  auto uniq = [](std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  for (Vertex& v : fg.vertices) {
    uniq(v.preds);
    uniq(v.succs);
  }
  for (FTensor& t : fg.tensors) uniq(t.consumers);
  MarkIsoaRoles(g, &fg);
  return fg;
}

namespace {

bool InGroup(const std::vector<int>& group, int v) { return std::binary_search(group.begin(), group.end(), v); }

bool IsGroupOutput(const FusionGraph& fg, const std::vector<int>& group, const FTensor& t) {
  if (t.graph_output) return true;
  for (int c : t.consumers)
    if (!InGroup(group, c)) return true;
  return false;
}

// Bytes of R rows of tensor t, t_c channels when its producer applies ISOA.
int64_t RowsBytes(const FTensor& t, int64_t rows, bool isoa, const AccelModel& m) {
  if (!isoa || t.channels <= m.t_c) return rows * t.row_bytes;
  return rows * CeilDiv(t.row_bytes, t.channels) * m.t_c;
}

}  // namespace

namespace {

// A group's vertices and the feature maps they touch, indexed once so that the tile relation and
// the working set cost O(edges of the group) per tile count (not O(tensors of the graph)).
// The vectors of a GroupIndex, reused across the groups one thread evaluates (the search evaluates
// thousands of groups: no allocation per group once they have grown).
struct GroupBuffers {
  std::vector<int> tensors, producer_pos, outs, ins, out_at, in_at, drivers;
  std::vector<char> group_output, is_input, allowed;
  std::vector<int64_t> scratch, rec, win, nw, first, isoa_rows, dp0, dp1;
  bool busy = false;  // a GroupIndex of this thread uses them
};
GroupBuffers& ThreadBuffers() {
  thread_local GroupBuffers b;
  return b;
}

class GroupIndex {
 public:
  GroupIndex(const FusionGraph& fg, const std::vector<int>& group)
      : fg_(fg), group_(group), own_(ThreadBuffers().busy ? std::make_unique<GroupBuffers>() : nullptr),
        b_(own_ ? *own_ : ThreadBuffers()) {
    b_.busy = true;
    tensors_.clear();
    outs_.clear();
    ins_.clear();
    out_at_.clear();
    in_at_.clear();
    for (int v : group) {
      const Vertex& vx = fg.vertices[v];
      accum_ += vx.accum_bytes;
      tensors_.insert(tensors_.end(), vx.inputs.begin(), vx.inputs.end());
      tensors_.insert(tensors_.end(), vx.outputs.begin(), vx.outputs.end());
    }
    std::sort(tensors_.begin(), tensors_.end());
    tensors_.erase(std::unique(tensors_.begin(), tensors_.end()), tensors_.end());
    producer_pos_.assign(tensors_.size(), -1);
    group_output_.assign(tensors_.size(), 0);
    for (size_t k = 0; k < tensors_.size(); ++k) {
      const FTensor& t = fg.tensors[tensors_[k]];
      if (t.producer >= 0 && InGroup(group, t.producer)) {
        producer_pos_[k] = static_cast<int>(std::lower_bound(group.begin(), group.end(), t.producer) - group.begin());
        group_output_[k] = IsGroupOutput(fg, group, t);
      }
      ref_ = std::max(ref_, t.rows);
    }
    // Per group vertex its outputs' and inputs' local indices (flat, with offsets).
    out_at_.reserve(group.size() + 1);
    in_at_.reserve(group.size() + 1);
    for (int v : group) {
      const Vertex& vx = fg.vertices[v];
      out_at_.push_back(static_cast<int>(outs_.size()));
      in_at_.push_back(static_cast<int>(ins_.size()));
      for (int f : vx.outputs) outs_.push_back(Local(f));
      for (int f : vx.inputs) ins_.push_back(Local(f));
    }
    out_at_.push_back(static_cast<int>(outs_.size()));
    in_at_.push_back(static_cast<int>(ins_.size()));
    InitHalo();
  }
  ~GroupIndex() {
    if (!own_) b_.busy = false;
  }
  GroupIndex(const GroupIndex&) = delete;
  GroupIndex& operator=(const GroupIndex&) = delete;
  int64_t ref_rows() const { return ref_; }
  size_t size() const { return tensors_.size(); }
  int tensor(size_t k) const { return tensors_[k]; }
  int producer_pos(size_t k) const { return producer_pos_[k]; }

  // Rows of each touched tensor (local order) for `tiles` strips: GroupRows's rule.
  void Rows(int64_t tiles, std::vector<int64_t>* r) const {
    r->assign(tensors_.size(), 0);
    for (size_t i = group_.size(); i-- > 0;) {
      const Vertex& v = fg_.vertices[group_[i]];
      int64_t out_r = 0;
      for (int o = out_at_[i]; o < out_at_[i + 1]; ++o) {
        const int k = outs_[o];
        const FTensor& t = fg_.tensors[tensors_[k]];
        int64_t& x = (*r)[k];
        if (group_output_[k]) x = std::max(x, CeilDiv(t.rows, tiles));
        x = std::min(std::max<int64_t>(x, 1), t.rows);
        out_r = std::max(out_r, x);
      }
      for (int j = in_at_[i]; j < in_at_[i + 1]; ++j) {
        int64_t& x = (*r)[ins_[j]];
        x = std::max(x, v.in_maps[j - in_at_[i]].Apply(out_r, tiles));
      }
    }
  }
  // Whether a line buffer can hold less than the recompute rows: some map made in the group is read
  // through a window taller than its stride (else both counts are equal).
  bool has_halo() const { return has_halo_; }
  // The working set for `tiles` strips and decisions `isoa` (GroupFmapBytes's rule).
  int64_t FmapBytes(int64_t tiles, const std::vector<char>& isoa, const AccelModel& m,
                    Halo halo = Halo::kRecompute) const {
    if (halo == Halo::kLineBuffer && has_halo_) return LineBytes(tiles, isoa, m);
    std::vector<int64_t>& r = scratch_;
    Rows(tiles, &r);
    int64_t bytes = accum_ + IsoaSums(r, isoa);
    for (size_t k = 0; k < r.size(); ++k) {
      if (r[k] == 0) continue;
      const bool phi = producer_pos_[k] >= 0 && isoa[producer_pos_[k]] != 0;
      bytes += RowsBytes(fg_.tensors[tensors_[k]], r[k], phi, m);
    }
    return bytes;
  }
  std::vector<char> Isoa(const AccelModel& m) const;
  // int32 partial sums of ISOA readers (rows r of their outputs, 4 B an element): of the group
  // vertices whose in-group producer applies ISOA (`isoa`), or with isoa empty, of vertex i's
  // in-group readers (the cost of i applying ISOA, Alg. 2).
  int64_t IsoaSums(const std::vector<int64_t>& r, const std::vector<char>& isoa) const {
    int64_t bytes = 0;
    for (size_t i = 0; i < group_.size(); ++i) {
      bool reads = false;
      for (int j = in_at_[i]; j < in_at_[i + 1]; ++j)
        reads = reads || (producer_pos_[ins_[j]] >= 0 && isoa[producer_pos_[ins_[j]]]);
      if (reads) bytes += ReaderSums(i, r);
    }
    return bytes;
  }
  int64_t ReaderSums(size_t i, const std::vector<int64_t>& r) const {
    int64_t bytes = 0;
    for (int o = out_at_[i]; o < out_at_[i + 1]; ++o) bytes += 4 * r[outs_[o]] * fg_.tensors[tensors_[outs_[o]]].row_elems;
    return bytes;
  }
  // Eq. 3's feature-map terms: every group input once (an input several operators read is read
  // once, as far as their windows reach), every group output once.
  void DramBytes(int64_t* read, int64_t* write) const {
    std::vector<int64_t>& rows_read = scratch_;
    rows_read.assign(tensors_.size(), 1);
    std::vector<char>& is_input = b_.is_input;
    is_input.assign(tensors_.size(), 0);
    for (size_t i = 0; i < group_.size(); ++i) {
      const Vertex& v = fg_.vertices[group_[i]];
      for (int j = in_at_[i]; j < in_at_[i + 1]; ++j) {
        const int k = ins_[j];
        if (producer_pos_[k] >= 0) continue;
        is_input[k] = 1;
        rows_read[k] = std::max(rows_read[k], v.in_maps[j - in_at_[i]].RowsRead());
      }
    }
    *read = *write = 0;
    for (size_t k = 0; k < tensors_.size(); ++k) {
      const FTensor& t = fg_.tensors[tensors_[k]];
      if (is_input[k]) *read += rows_read[k] >= t.rows ? t.bytes : t.bytes / t.rows * rows_read[k];
      if (producer_pos_[k] >= 0 && group_output_[k]) *write += t.bytes;
    }
  }

 private:
  void InitHalo();
  void LineRows(int64_t tiles) const;
  int64_t LineBytes(int64_t tiles, const std::vector<char>& isoa, const AccelModel& m) const;
  int Local(int f) const {
    return static_cast<int>(std::lower_bound(tensors_.begin(), tensors_.end(), f) - tensors_.begin());
  }
  const FusionGraph& fg_;
  const std::vector<int>& group_;
  std::unique_ptr<GroupBuffers> own_;  // when the thread's buffers are in use (an index inside another)
  GroupBuffers& b_;
  std::vector<int>& tensors_ = b_.tensors;              // FTensors touched, ascending
  std::vector<int>& producer_pos_ = b_.producer_pos;    // per touched tensor: its producer's position in the group, or -1
  std::vector<char>& group_output_ = b_.group_output;   // per touched tensor made in the group: read outside it or a graph output
  std::vector<int>& outs_ = b_.outs;                    // local tensor indices of the group vertices' outputs
  std::vector<int>& ins_ = b_.ins;                      // ... and inputs
  std::vector<int>& out_at_ = b_.out_at;                // where each group vertex's start (and the end)
  std::vector<int>& in_at_ = b_.in_at;
  int64_t ref_ = 1;
  int64_t accum_ = 0;  // streamed reductions' int32 sums
  std::vector<int64_t>& scratch_ = b_.scratch;
  std::vector<int>& drivers_ = b_.drivers;  // per touched tensor: group vertices reading it, + 1 when the group writes it out
  bool has_halo_ = false;
  // LineRows: recompute rows, window rows, rows a later strip adds, rows the first strip needs.
  std::vector<int64_t>& rec_ = b_.rec;
  std::vector<int64_t>& win_ = b_.win;
  std::vector<int64_t>& new_ = b_.nw;
  std::vector<int64_t>& first_ = b_.first;
};

void GroupIndex::InitHalo() {
  drivers_.assign(tensors_.size(), 0);
  for (int k : ins_) ++drivers_[k];
  for (size_t k = 0; k < tensors_.size(); ++k) drivers_[k] += group_output_[k];
  for (size_t i = 0; i < group_.size(); ++i) {
    const Vertex& v = fg_.vertices[group_[i]];
    for (int j = in_at_[i]; j < in_at_[i + 1]; ++j) {
      const RowMap& map = v.in_maps[j - in_at_[i]];
      if (producer_pos_[ins_[j]] >= 0 && map.rule == RowRule::kWindow && map.k_eff > map.stride) has_halo_ = true;
    }
  }
}

// Line buffers for `tiles` strips: per touched tensor the rows its window holds (win_) and the rows
// a strip adds (new_), backwards from the group outputs. The rows a strip adds propagate (an
// operator's input advances by its output's new rows times the stride), and a map with one driver
// holds its reader's window of them; a map with several drivers keeps the recompute rows (rec_).
void GroupIndex::LineRows(int64_t tiles) const {
  Rows(tiles, &rec_);
  win_.assign(tensors_.size(), 0);
  new_.assign(tensors_.size(), 0);
  first_.assign(tensors_.size(), 0);
  for (size_t i = group_.size(); i-- > 0;) {
    const Vertex& v = fg_.vertices[group_[i]];
    int64_t out_d = 0, out_f = 0;
    for (int o = out_at_[i]; o < out_at_[i + 1]; ++o) {
      const int k = outs_[o];
      const FTensor& t = fg_.tensors[tensors_[k]];
      int64_t& x = new_[k];
      int64_t& f = first_[k];
      if (group_output_[k]) {
        x = std::max(x, CeilDiv(t.rows, tiles));
        f = std::max(f, CeilDiv(t.rows, tiles));
      }
      x = std::min(std::max<int64_t>(x, 1), t.rows);
      f = std::min(std::max<int64_t>(f, 1), t.rows);
      if (drivers_[k] >= 2) x = f = rec_[k];
      out_d = std::max(out_d, x);
      out_f = std::max(out_f, f);
    }
    for (int j = in_at_[i]; j < in_at_[i + 1]; ++j) {
      const RowMap& map = v.in_maps[j - in_at_[i]];
      const int k = ins_[j];
      new_[k] = std::max(new_[k], map.NewRows(out_d, tiles));
      win_[k] = std::max(win_[k], map.Apply(out_d, tiles));
      first_[k] = std::max(first_[k], map.FirstRows(out_f, tiles));
    }
  }
  for (size_t k = 0; k < tensors_.size(); ++k) {
    if (drivers_[k] >= 2) win_[k] = new_[k] = first_[k] = rec_[k];
    win_[k] = std::max({win_[k], new_[k], first_[k]});
  }
}

int64_t GroupIndex::LineBytes(int64_t tiles, const std::vector<char>& isoa, const AccelModel& m) const {
  LineRows(tiles);
  int64_t bytes = accum_;
  for (size_t k = 0; k < tensors_.size(); ++k) {
    const FTensor& t = fg_.tensors[tensors_[k]];
    const bool phi = producer_pos_[k] >= 0 && isoa[producer_pos_[k]] != 0;
    // An ISOA output's cached rows hold every channel (the next strip reads them in every channel group).
    bytes += phi ? RowsBytes(t, new_[k], true, m) + (win_[k] - new_[k]) * t.row_bytes : win_[k] * t.row_bytes;
  }
  return bytes;
}

std::vector<char> GroupIndex::Isoa(const AccelModel& m) const {
  const size_t n = group_.size();
  std::vector<int64_t>& r = b_.isoa_rows;
  Rows(ref_, &r);  // the 1-row tile
  std::vector<int64_t>& dp0 = b_.dp0;
  std::vector<int64_t>& dp1 = b_.dp1;
  std::vector<char>& allowed = b_.allowed;
  dp0.assign(n, 0);
  dp1.assign(n, 0);
  allowed.assign(n, 0);
  for (size_t i = n; i-- > 0;) {
    const Vertex& v = fg_.vertices[group_[i]];
    int64_t c0 = 0, c1 = 0;
    for (int o = out_at_[i]; o < out_at_[i + 1]; ++o) {
      const int k = outs_[o];
      c0 += RowsBytes(fg_.tensors[tensors_[k]], r[k], false, m);
      c1 += RowsBytes(fg_.tensors[tensors_[k]], r[k], true, m);
    }
    // Read inside the group: only where the executor runs it (a source with readers that sum
    // int32 partial sums per input-channel slice, counted with the slice).
    bool executable = true, read_inside = false;
    for (int s : v.succs) {
      if (!InGroup(group_, s)) continue;
      read_inside = true;
      const size_t j = std::lower_bound(group_.begin(), group_.end(), s) - group_.begin();
      executable = executable && fg_.vertices[s].isoa_reader;
      c1 += ReaderSums(j, r);
    }
    // A vertex of several ops (e.g. Add with its Relu) would need every op sliced: not executed,
    // so not allowed (one op: its output streams to DRAM through a T_c-channel staging window).
    allowed[i] = v.channel_tiled && c1 < c0 && v.ops.size() == 1 && (!read_inside || (v.isoa_source && executable));
    int64_t s0 = 0, s1 = 0;
    for (int s : v.succs) {
      if (!InGroup(group_, s)) continue;
      const size_t j = std::lower_bound(group_.begin(), group_.end(), s) - group_.begin();
      s1 += dp0[j];
      s0 += std::min(dp0[j], dp1[j]);
    }
    dp0[i] = c0 + s0;
    dp1[i] = allowed[i] ? c1 + s1 : dp0[i];
  }
  // Decisions in topological order: an operator whose in-group producer applies ISOA may not.
  std::vector<char> phi(n, 0);
  for (size_t i = 0; i < n; ++i) {
    bool blocked = false;
    for (int p : fg_.vertices[group_[i]].preds)
      if (InGroup(group_, p)) {
        const size_t j = std::lower_bound(group_.begin(), group_.end(), p) - group_.begin();
        blocked = blocked || phi[j];
      }
    phi[i] = !blocked && allowed[i] && dp1[i] < dp0[i];
  }
  return phi;
}

}  // namespace

std::vector<int64_t> GroupRows(const FusionGraph& fg, const std::vector<int>& group, int64_t tiles,
                               int64_t* ref_rows) {
  const GroupIndex gi(fg, group);
  std::vector<int64_t> local, r(fg.tensors.size(), 0);
  gi.Rows(tiles, &local);
  for (size_t k = 0; k < gi.size(); ++k) r[gi.tensor(k)] = local[k];
  if (ref_rows) *ref_rows = gi.ref_rows();
  return r;
}

int64_t GroupFmapBytes(const FusionGraph& fg, const std::vector<int>& group, int64_t tiles,
                       const std::vector<char>& isoa, const AccelModel& m, Halo halo) {
  return GroupIndex(fg, group).FmapBytes(tiles, isoa, m, halo);
}

std::vector<char> IsoaDecisions(const FusionGraph& fg, const std::vector<int>& group, const AccelModel& m) {
  return GroupIndex(fg, group).Isoa(m);
}

int64_t GroupFmapBytesIsoa(const FusionGraph& fg, const std::vector<int>& group, int64_t tiles, const AccelModel& m) {
  const GroupIndex gi(fg, group);
  return gi.FmapBytes(tiles, gi.Isoa(m), m);
}

namespace {

// One group under decisions `isoa`: Eq. 4's tile maximisation for each halo mode the group may use
// (line buffers only without ISOA decisions: the executor's int32 partial sums are laid out for the
// recompute rows), keeping the fewer DRAM bytes, ties the smaller working set.
GroupEval EvaluateWith(const FusionGraph& fg, const std::vector<int>& group, const GroupIndex& gi,
                       const AccelModel& m, CostRule rule, std::vector<char> isoa) {
  GroupEval base;
  for (int v : group) base.param_bytes += fg.vertices[v].param_bytes;
  gi.DramBytes(&base.read_bytes, &base.write_bytes);
  const bool any_isoa = std::find(isoa.begin(), isoa.end(), 1) != isoa.end();
  base.isoa = std::move(isoa);
  base.ref_rows = gi.ref_rows();
  const int64_t min_t = std::min(m.t_h, base.ref_rows);
  // The most strips whose tile still has min(T_h, O_h) rows.
  int64_t lo = 1, hi = base.ref_rows;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (CeilDiv(base.ref_rows, mid) >= min_t) lo = mid; else hi = mid - 1;
  }
  const int64_t max_tiles = lo;
  auto evaluate = [&](Halo halo) {
    GroupEval e = base;
    e.halo = halo;
    auto fmap = [&](int64_t tiles) { return gi.FmapBytes(tiles, e.isoa, m, halo); };
    e.min_buffer_bytes = fmap(max_tiles);
    // Eq. 4: the fewest strips (largest t_h) whose working set fits; parameters resident when they fit too.
    auto fewest = [&](int64_t extra) -> int64_t {
      if (e.min_buffer_bytes + extra > m.buffer_bytes) return -1;
      int64_t a = 1, b = max_tiles;
      while (a < b) {
        const int64_t mid = (a + b) / 2;
        if (fmap(mid) + extra <= m.buffer_bytes) b = mid; else a = mid + 1;
      }
      return a;
    };
    const int64_t resident = fewest(e.param_bytes);
    if (resident > 0) {
      e.feasible = true;
      e.params_resident = true;
      e.tiles = resident;
      e.buffer_bytes = fmap(resident) + e.param_bytes;
      e.read_bytes += e.param_bytes;
    } else if (rule == CostRule::kOptimus) {
      const int64_t streamed = fewest(0);
      if (streamed > 0) {
        e.feasible = true;
        e.tiles = streamed;
        e.buffer_bytes = fmap(streamed);
        e.read_bytes += e.param_bytes * streamed * m.batch;
      }
    }
    e.tile_rows = CeilDiv(e.ref_rows, e.tiles);
    return e;
  };
  GroupEval rec = evaluate(Halo::kRecompute);
  if (!m.halo_choice || !gi.has_halo() || any_isoa) return rec;
  // Halo caching: line buffers when they move fewer DRAM bytes, or as many in a smaller working set.
  GroupEval line = evaluate(Halo::kLineBuffer);
  if (!rec.feasible) return line.feasible || line.min_buffer_bytes < rec.min_buffer_bytes ? line : rec;
  if (line.feasible && (line.dram_bytes() < rec.dram_bytes() ||
                        (line.dram_bytes() == rec.dram_bytes() && line.buffer_bytes < rec.buffer_bytes)))
    return line;
  return rec;
}

}  // namespace

GroupEval EvaluateGroup(const FusionGraph& fg, const std::vector<int>& group, const AccelModel& m,
                        CostRule rule) {
  const GroupIndex gi(fg, group);
  const std::vector<char> none(group.size(), 0);
  if (rule != CostRule::kOptimus) return EvaluateWith(fg, group, gi, m, rule, none);
  std::vector<char> isoa = gi.Isoa(m);
  const bool any = std::find(isoa.begin(), isoa.end(), 1) != isoa.end();
  GroupEval e = EvaluateWith(fg, group, gi, m, rule, std::move(isoa));
  if (!any) return e;
  // Alg. 2 decides on the one-row tile; with the readers' int32 partial sums (which grow with the
  // rows of their outputs) its decisions can cost more at the tile Eq. 4 picks than none: the
  // group takes the better of the two (so Optimus never loses to the rule without ISOA).
  GroupEval plain = EvaluateWith(fg, group, gi, m, rule, none);
  auto key = [](const GroupEval& x) {
    return std::make_tuple(!x.feasible, x.feasible ? x.dram_bytes() : 0, x.feasible ? x.buffer_bytes : x.min_buffer_bytes);
  };
  return key(plain) < key(e) ? plain : e;
}

}  // namespace sramplan::fusion
