#include "fusion/module_buffer.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/op_geometry.h"
#include "support/int_math.h"

namespace sramplan::fusion {
namespace {

constexpr int64_t kMaas = 16;          // MAAs: 16 output channels at a time (paper Sec. 4)
constexpr int64_t kPatchAccBytes = 64;  // one 4x4 output patch of int32 accumulators

bool IsComputeType(const std::string& t) {
  return t == "Conv" || t == "ConvTranspose" || t == "Gemm" || t == "MatMul";
}

// Rows of a 4-D feature map a window of `rows` rows covers, as bytes (the whole map when not 4-D).
int64_t RowsBytes(const ir::Graph& g, const ir::Tensor& t, int64_t rows) {
  if (t.shape.size() != 4) return t.Bytes();
  const int64_t h = g.layout == ir::Layout::kNCHW ? t.shape[2] : t.shape[1];
  if (h <= 0) return t.Bytes();
  return std::min(t.Bytes(), t.Bytes() / h * std::max<int64_t>(rows, 1));
}

// Input rows one output row needs: the window's height for Conv and pooling, else one.
int64_t WindowRows(const ir::Graph& g, const ir::Op& op) {
  if (op.type == "Conv") {
    if (auto cg = ir::ParseConvGeometry(g, op); cg.ok() && !cg->kernel.empty()) return cg->EffectiveKernel(0);
  } else if (op.type == "MaxPool" || op.type == "AveragePool") {
    if (auto pg = ir::ParsePoolGeometry(g, op); pg.ok() && !pg->kernel.empty()) return pg->EffectiveKernel(0);
  }
  return 1;
}

}  // namespace

int64_t InputPartialBytes(const ir::Graph& g, const ir::Op& op, ir::TensorId in) {
  return RowsBytes(g, g.tensor(in), WindowRows(g, op));
}

LayerSizes ComputeLayerSizes(const ir::Graph& g, const ir::Op& op) {
  LayerSizes s;
  const int64_t rows = WindowRows(g, op);
  std::set<ir::TensorId> seen;
  for (ir::TensorId in : op.inputs) {
    const ir::Tensor& t = g.tensor(in);
    if (t.kind == ir::TensorKind::kConstant) {
      const int64_t dim0 = t.shape.empty() ? 1 : std::max<int64_t>(t.shape[0], 1);
      s.w_partial += 2 * std::min(t.Bytes(), kMaas * (t.Bytes() / dim0));
      continue;
    }
    if (!seen.insert(g.StorageRoot(in)).second) continue;
    s.ifm_full += t.Bytes();
    s.ifm_partial += RowsBytes(g, t, rows);
  }
  if (!ir::IsViewOp(op.type))
    for (ir::TensorId out : op.outputs) {
      s.ofm_full += g.tensor(out).Bytes();
      s.ofm_partial += RowsBytes(g, g.tensor(out), 1);
    }
  if (IsComputeType(op.type)) s.wm = kMaas * kPatchAccBytes;
  return s;
}

namespace {

struct Residency {
  int64_t offset, bytes;
  int first, last;
};

// The planner's state: the on-chip residencies decided so far and every tensor's home.
struct State {
  std::vector<Residency> chip;
  std::vector<TensorHome> homes;  // indexed by home id
  std::vector<LayerDecision> layers;
  std::vector<int64_t> occu;  // per module: Alg. 5's occupied MOFM of the current branch
};

class Planner {
 public:
  Planner(const ir::Graph& g, const ModuleReport& rep, const ModuleBufferOptions& opt)
      : g_(g), rep_(rep), opt_(opt) {}
  StatusOr<ModuleBufferPlan> Run();

 private:
  void BuildSchedule();
  void EmitModule(int m, std::vector<char>* done, const std::vector<int>* top_order = nullptr);
  void Prepare();
  void Reindex();
  void Reorder(int m, int first, int last, const std::vector<int>& branch_order);
  void Step(int s);
  void RunModule(int m, int first, int last);
  State WithMifmStay(const State& start, int m, int first, int last) const;
  int64_t FmTraffic(const State& st, int first, int last) const;
  bool Fits(const State& st, int64_t bytes, int first, int last, int64_t first_staging) const;
  bool Place(State& st, int home, int first, int last, int64_t lo, int64_t hi, bool top, bool loaded,
             int64_t first_staging);
  int64_t StagingNow(const State& st, int s, bool output_on) const;
  bool OnChip(const State& st, int home, int s) const {
    for (const TensorHome::Stay& y : st.homes[home].stays)
      if (y.first <= s && s <= y.last) return true;
    return false;
  }
  int64_t Ceiling(const State& st, int s, int64_t* mifm_sum) const;

  const ir::Graph& g_;
  const ModuleReport& rep_;
  const ModuleBufferOptions& opt_;
  ModuleBufferPlan out_;
  State st_;
  std::vector<int> step_of_op_;
  std::vector<int> home_of_tensor_;      // storage root tensor id -> home
  std::vector<std::vector<int>> uses_;   // home -> steps reading it (ascending)
  std::vector<LayerSizes> sizes_;        // per step
  std::vector<int> branch_mod_, branch_idx_;  // per op: innermost module whose branch holds it
  std::vector<int> merge_of_;                 // per op: the module it merges, -1
  std::vector<char> option_ii_;               // per module: processing II
};

void Planner::EmitModule(int m, std::vector<char>* done, const std::vector<int>* top_order) {
  const Module& mod = rep_.modules[m];
  ModuleDecision& d = out_.modules[m];
  d.branch_req.assign(mod.branches.size(), 0);
  // Alg. 3: size_req(b, k) = IFM + OFM + WM + W without the MIFM and the MOFM; a branch needs the
  // largest of its layers; branches run largest first (ties: detection order).
  for (size_t b = 0; b < mod.branches.size(); ++b)
    for (ir::OpId op : mod.branches[b].ops) {
      LayerSizes s = ComputeLayerSizes(g_, g_.op(op));
      const auto& outs = mod.branches[b].outputs;
      int64_t ifm = 0, ofm = std::find(outs.begin(), outs.end(), op) != outs.end() ? 0 : s.ofm_full;
      for (ir::TensorId in : g_.op(op).inputs)
        if (g_.tensor(in).kind != ir::TensorKind::kConstant && g_.StorageRoot(in) != g_.StorageRoot(mod.mifm))
          ifm += g_.tensor(in).Bytes();
      d.branch_req[b] = std::max(d.branch_req[b], ifm + ofm + s.wm + s.w_partial);
    }
  d.branch_order.resize(mod.branches.size());
  for (size_t b = 0; b < d.branch_order.size(); ++b) d.branch_order[b] = static_cast<int>(b);
  std::stable_sort(d.branch_order.begin(), d.branch_order.end(),
                   [&](int a, int b) { return d.branch_req[a] > d.branch_req[b]; });
  if (top_order) d.branch_order = *top_order;
  for (int b : d.branch_order)
    for (ir::OpId op : mod.branches[b].ops) {
      if ((*done)[op.value()]) continue;
      int sub = -1;
      for (size_t n = 0; n < rep_.modules.size() && sub < 0; ++n)
        if (rep_.modules[n].parent == m &&
            std::find(rep_.modules[n].ops.begin(), rep_.modules[n].ops.end(), op) != rep_.modules[n].ops.end())
          sub = static_cast<int>(n);
      if (sub >= 0) {
        EmitModule(sub, done);
        continue;
      }
      (*done)[op.value()] = 1;
      out_.order.push_back(op);
    }
  (*done)[mod.merge.value()] = 1;
  out_.order.push_back(mod.merge);
}

void Planner::BuildSchedule() {
  const int nops = g_.num_ops();
  std::vector<int> top_of_op(nops, -1);
  for (size_t m = 0; m < rep_.modules.size(); ++m)
    if (rep_.modules[m].depth == 1)
      for (ir::OpId op : rep_.modules[m].ops) top_of_op[op.value()] = static_cast<int>(m);
  std::vector<char> done(nops, 0);
  if (!opt_.layerwise)
    for (const ir::Op& op : g_.ops()) {
      if (done[op.id.value()]) continue;
      if (top_of_op[op.id.value()] >= 0) {
        EmitModule(top_of_op[op.id.value()], &done);
        continue;
      }
      done[op.id.value()] = 1;
      out_.order.push_back(op.id);
    }
  if (opt_.layerwise || !analysis::ValidateSchedule(g_, out_.order).ok()) {
    if (!opt_.layerwise) out_.notes.push_back("branch re-ordering broke a dependency; the model order is kept");
    out_.order = analysis::ModelOrder(g_);
  }
}

void Planner::Prepare() {
  const int n = static_cast<int>(out_.order.size());
  step_of_op_.assign(g_.num_ops(), -1);
  for (int s = 0; s < n; ++s) step_of_op_[out_.order[s].value()] = s;
  home_of_tensor_.assign(g_.num_tensors(), -1);
  for (const ir::Tensor& t : g_.tensors()) {
    if (t.kind == ir::TensorKind::kConstant || g_.StorageRoot(t.id) != t.id) continue;
    if (!t.producer.valid() && t.consumers.empty()) continue;
    TensorHome h;
    h.tensor = t.id;
    h.bytes = t.Bytes();
    h.chip_bytes = AlignUp(std::max<int64_t>(t.Bytes(), 1), opt_.alignment);
    h.produced = t.producer.valid() ? step_of_op_[t.producer.value()] : -1;
    if (t.kind == ir::TensorKind::kInput) h.dram_from = 0;
    home_of_tensor_[t.id.value()] = static_cast<int>(st_.homes.size());
    st_.homes.push_back(h);
  }
  Reindex();
  for (const LayerSizes& z : sizes_) out_.max_staging = std::max(out_.max_staging, z.Staging());
  branch_mod_.assign(g_.num_ops(), -1);
  branch_idx_.assign(g_.num_ops(), -1);
  merge_of_.assign(g_.num_ops(), -1);
  for (size_t m = 0; m < rep_.modules.size(); ++m) {  // parents first, so the innermost wins
    const Module& mod = rep_.modules[m];
    for (size_t b = 0; b < mod.branches.size(); ++b)
      for (ir::OpId op : mod.branches[b].ops) {
        branch_mod_[op.value()] = static_cast<int>(m);
        branch_idx_[op.value()] = static_cast<int>(b);
      }
    merge_of_[mod.merge.value()] = static_cast<int>(m);
  }
  st_.occu.assign(rep_.modules.size(), 0);
  option_ii_.assign(rep_.modules.size(), 0);
}

// Steps of the ops, their sizes and the steps reading each tensor, for the current order.
void Planner::Reindex() {
  const int n = static_cast<int>(out_.order.size());
  step_of_op_.assign(g_.num_ops(), -1);
  for (int s = 0; s < n; ++s) step_of_op_[out_.order[s].value()] = s;
  uses_.assign(st_.homes.size(), {});
  sizes_.resize(n);
  for (int s = 0; s < n; ++s) {
    const ir::Op& op = g_.op(out_.order[s]);
    sizes_[s] = ComputeLayerSizes(g_, op);
    for (ir::TensorId in : op.inputs) {
      const int h = home_of_tensor_[g_.StorageRoot(in).value()];
      if (h >= 0 && (uses_[h].empty() || uses_[h].back() != s)) uses_[h].push_back(s);
    }
  }
}

// Steps [first, last] run top-level module m with its branches in `branch_order`.
void Planner::Reorder(int m, int first, int last, const std::vector<int>& branch_order) {
  std::vector<ir::OpId> suffix(out_.order.begin() + last + 1, out_.order.end());
  out_.order.resize(first);
  std::vector<char> done(g_.num_ops(), 0);
  EmitModule(m, &done, &branch_order);
  out_.order.insert(out_.order.end(), suffix.begin(), suffix.end());
  Reindex();
}

// The staging of the first step is exact (the caller knows which inputs stream from DRAM; the
// output is the one being placed); later steps may stream any input and their output.
bool Planner::Fits(const State& st, int64_t bytes, int first, int last, int64_t first_staging) const {
  for (int t = first; t <= last; ++t) {
    int64_t live = bytes + (t == first ? first_staging : sizes_[t].Staging());
    for (const Residency& r : st.chip)
      if (r.first <= t && t <= r.last) live += r.bytes;
    if (live > opt_.memory) return false;
  }
  return true;
}

// First fit from the bottom (or, top: the highest gap) of [lo, hi) among the residencies live
// during [first, last]; the staging of every step must still fit beside it.
bool Planner::Place(State& st, int home, int first, int last, int64_t lo, int64_t hi, bool top, bool loaded,
                    int64_t first_staging) {
  TensorHome& h = st.homes[home];
  const int64_t bytes = h.chip_bytes;
  if (!Fits(st, bytes, first, last, first_staging)) return false;
  std::vector<std::pair<int64_t, int64_t>> used;
  for (const Residency& r : st.chip)
    if (r.first <= last && first <= r.last) used.push_back({r.offset, r.offset + r.bytes});
  std::sort(used.begin(), used.end());
  std::vector<std::pair<int64_t, int64_t>> gaps;
  int64_t cursor = lo;
  for (const auto& [a, b] : used) {
    if (a > cursor) gaps.push_back({cursor, std::min(a, hi)});
    cursor = std::max(cursor, b);
  }
  if (cursor < hi) gaps.push_back({cursor, hi});
  int64_t at = -1;
  for (const auto& [a, b] : gaps) {
    const int64_t start = AlignUp(a, opt_.alignment);
    if (b - start < bytes) continue;
    if (!top) {
      at = start;
      break;
    }
    at = (b - bytes) / opt_.alignment * opt_.alignment;
  }
  if (at < 0) return false;
  st.chip.push_back({at, bytes, first, last});
  h.stays.push_back({first, last, at, loaded});
  return true;
}

// Step s's staging as decided so far: weights, working memory, the partial rows of the inputs not
// on chip, and the output's row when it is streamed out.
int64_t Planner::StagingNow(const State& st, int s, bool output_on) const {
  const ir::Op& op = g_.op(out_.order[s]);
  const LayerSizes& sz = sizes_[s];
  int64_t stage = sz.w_partial + sz.wm + (output_on ? 0 : sz.ofm_partial);
  std::set<int> seen;
  for (ir::TensorId in : op.inputs) {
    const int h = home_of_tensor_[g_.StorageRoot(in).value()];
    if (h < 0 || !seen.insert(h).second || OnChip(st, h, s)) continue;
    stage += RowsBytes(g_, g_.tensor(st.homes[h].tensor), WindowRows(g_, op));
  }
  return stage;
}

// Alg. 6's ceiling for step s: the memory minus the occupied MOFM of every module whose branch
// holds the op (processing I), and the MIFMs on chip at s of those modules (*mifm_sum).
int64_t Planner::Ceiling(const State& st, int s, int64_t* mifm_sum) const {
  int64_t ceil = opt_.memory;
  *mifm_sum = 0;
  for (int m = branch_mod_[out_.order[s].value()]; m >= 0; m = rep_.modules[m].parent) {
    ceil -= st.occu[m];
    const int h = home_of_tensor_[g_.StorageRoot(rep_.modules[m].mifm).value()];
    if (h >= 0 && OnChip(st, h, s)) *mifm_sum += st.homes[h].chip_bytes;
    for (ir::TensorId t : rep_.modules[m].sub_inputs) {  // MIFMs of depth + 1 (Alg. 4)
      const int sh = home_of_tensor_[g_.StorageRoot(t).value()];
      if (sh >= 0 && OnChip(st, sh, s)) *mifm_sum += st.homes[sh].chip_bytes;
    }
  }
  return ceil;
}

void Planner::Step(int s) {
  State& st = st_;
  const ir::Op& op = g_.op(out_.order[s]);
  LayerDecision d;
  d.op = op.id;
  d.module = branch_mod_[op.id.value()] >= 0 ? branch_mod_[op.id.value()] : merge_of_[op.id.value()];
  d.branch = branch_idx_[op.id.value()];
  const LayerSizes& sz = sizes_[s];
  // A module's first step: its MIFM comes on chip (Alg. 4) if it is in DRAM only.
  for (size_t m = 0; m < rep_.modules.size() && !opt_.layerwise; ++m) {
    const Module& mod = rep_.modules[m];
    int first = static_cast<int>(out_.order.size());
    for (ir::OpId o : mod.ops) first = std::min(first, step_of_op_[o.value()]);
    if (first != s) continue;
    st.occu[m] = 0;
    const int h = home_of_tensor_[g_.StorageRoot(mod.mifm).value()];
    if (h < 0 || OnChip(st, h, s) || st.homes[h].dram_from < 0 || st.homes[h].dram_from > s) continue;
    int last = s;
    for (int u : uses_[h])
      if (u >= s && std::find(mod.ops.begin(), mod.ops.end(), out_.order[u]) != mod.ops.end()) last = std::max(last, u);
    int64_t sum = 0;
    const int64_t ceil = Ceiling(st, s, &sum);
    Place(st, h, s, last, 0, std::min(ceil, opt_.memory), false, true, sizes_[s].Staging());
  }
  // Alg. 6: an input forwarded on chip counts in full, one streamed from DRAM or a MIFM (already
  // outside size_avail; fwd(0) = false) by its partial rows.
  std::set<int> mifms;
  for (int m = branch_mod_[op.id.value()]; m >= 0; m = rep_.modules[m].parent) {
    mifms.insert(home_of_tensor_[g_.StorageRoot(rep_.modules[m].mifm).value()]);
    for (ir::TensorId t : rep_.modules[m].sub_inputs) mifms.insert(home_of_tensor_[g_.StorageRoot(t).value()]);
  }
  int64_t ifm = 0;
  std::set<int> seen_in;
  for (ir::TensorId in : op.inputs) {
    const int h = home_of_tensor_[g_.StorageRoot(in).value()];
    if (h < 0 || !seen_in.insert(h).second) continue;
    ifm += OnChip(st, h, s) && !mifms.count(h) ? st.homes[h].bytes : InputPartialBytes(g_, op, in);
  }
  int64_t mifm_sum = 0;
  const int64_t ceil = Ceiling(st, s, &mifm_sum);
  d.avail = ceil - mifm_sum;
  d.req = ifm + sz.ofm_full + sz.wm + sz.w_partial;
  d.fwd = !opt_.layerwise && d.req <= d.avail;
  const int bm = branch_mod_[op.id.value()];
  bool last_of_branch = false;
  if (bm >= 0) {
    const auto& outs = rep_.modules[bm].branches[branch_idx_[op.id.value()]].outputs;
    last_of_branch = std::find(outs.begin(), outs.end(), op.id) != outs.end();
  }
  int top = bm;
  while (top >= 0 && rep_.modules[top].parent >= 0) top = rep_.modules[top].parent;
  if (last_of_branch && top >= 0 && option_ii_[top]) d.fwd = false;  // processing II
  if (!ir::IsViewOp(op.type))
    for (ir::TensorId out : op.outputs) {
      const int h = home_of_tensor_[out.value()];
      if (h < 0) continue;
      TensorHome& home = st.homes[h];
      // On chip until the last use that is not a long skip; later uses read the DRAM copy.
      int last = s;
      bool far = g_.tensor(out).kind == ir::TensorKind::kOutput;
      for (int u : uses_[h]) {
        if (u - s > opt_.long_skip_ops)
          far = true;
        else
          last = std::max(last, u);
      }
      bool on = false;
      if (d.fwd) {
        // A branch output goes to the top (the occupied MOFM, Alg. 5), a module output and the
        // branches' intermediates from the bottom (above the MIFMs); an op outside modules to the
        // end away from its forwarded input, so IFM and OFM alternate ends (Fig. 8) and the next
        // layer finds its room in one piece.
        bool top = last_of_branch;
        bool entry = false;  // a module's fork: its output is a MIFM, at the bottom (Alg. 4)
        for (const Module& mod : rep_.modules) entry = entry || mod.entry == op.id;
        if (bm < 0 && merge_of_[op.id.value()] < 0 && !entry)
          for (ir::TensorId in : op.inputs) {
            const int ih = home_of_tensor_[g_.StorageRoot(in).value()];
            if (ih < 0 || !OnChip(st, ih, s)) continue;
            for (const TensorHome::Stay& y : st.homes[ih].stays)
              if (y.first <= s && s <= y.last) top = 2 * y.offset + st.homes[ih].chip_bytes < ceil;
            break;
          }
        const int64_t stage = StagingNow(st, s, true);
        on = Place(st, h, s, last, 0, ceil, top, false, stage) ||
             (!last_of_branch && Place(st, h, s, last, 0, ceil, !top, false, stage));
      }
      if (on && last_of_branch) st.occu[bm] += home.chip_bytes;
      if (!on) {
        home.dram_from = s;
      } else if (far) {
        home.dram_from = s;
        home.stored = true;
      }
      d.on_chip = d.on_chip || on;
    }
  st.layers.push_back(d);
}

// Feature-map bytes steps [first, last] move off chip as planned so far.
int64_t Planner::FmTraffic(const State& st, int first, int last) const {
  int64_t bytes = 0;
  for (int s = first; s <= last; ++s) {
    const ir::Op& op = g_.op(out_.order[s]);
    std::set<int> seen;
    for (ir::TensorId in : op.inputs) {
      const int h = home_of_tensor_[g_.StorageRoot(in).value()];
      if (h < 0 || !seen.insert(h).second) continue;
      const TensorHome& t = st.homes[h];
      bool loaded_here = false;
      for (const TensorHome::Stay& y : t.stays) loaded_here = loaded_here || (y.loaded && y.first == s);
      if (!OnChip(st, h, s) || loaded_here) bytes += t.bytes;
    }
    if (!ir::IsViewOp(op.type))
      for (ir::TensorId out : op.outputs) {
        const int h = home_of_tensor_[out.value()];
        if (h >= 0 && st.homes[h].dram_from == s) bytes += st.homes[h].bytes;
      }
  }
  return bytes;
}

// The MIFM of top-level module m came on chip before the module, its stay ending at its last use
// in the order the module had then; in this order it must reach its last use in steps
// [first, last]. If the longer stay does not fit, the MIFM is copied to DRAM where it is produced
// and the later uses read it there.
State Planner::WithMifmStay(const State& start, int m, int first, int last) const {
  State st = start;
  const int h = home_of_tensor_[g_.StorageRoot(rep_.modules[m].mifm).value()];
  if (h < 0) return st;
  TensorHome& home = st.homes[h];
  int need = first;
  for (int u : uses_[h])
    if (u >= first && u <= last) need = std::max(need, u);
  for (TensorHome::Stay& y : home.stays) {
    if (y.first > first || y.last < first || y.last > last) continue;
    Residency* r = nullptr;
    for (Residency& c : st.chip)
      if (c.offset == y.offset && c.first == y.first && c.last == y.last) r = &c;
    if (!r) continue;
    r->last = y.first;  // re-check the whole stay beside what else lives then
    if (need <= y.last || Fits(st, home.chip_bytes, y.last + 1, need, sizes_[y.last + 1].Staging())) {
      y.last = need;
    } else if (home.dram_from < 0) {
      home.dram_from = home.produced < 0 ? 0 : step_of_op_[g_.tensor(home.tensor).producer.value()];
      home.stored = g_.tensor(home.tensor).producer.valid();
    }
    r->last = y.last;
  }
  return st;
}

// A top-level module: processing I and II from the same state; the one with fewer feature-map
// bytes off chip is kept (I on ties). With search_branch_orders, also Alg. 3's order with each
// branch moved last (a branch that needs the MIFM's room runs best after the MIFM dies).
void Planner::RunModule(int m, int first, int last) {
  const State start = st_;
  const std::vector<int> alg3 = out_.modules[m].branch_order;
  std::vector<std::vector<int>> orders = {alg3};
  if (opt_.search_branch_orders)
    for (size_t i = 0; i + 1 < alg3.size(); ++i) {
      std::vector<int> o = alg3;
      std::rotate(o.begin() + i, o.begin() + i + 1, o.end());
      orders.push_back(o);
    }
  int64_t best = -1, traffic_i = -1, traffic_ii = -1;
  size_t best_order = 0;
  bool best_ii = false;
  State best_state;
  for (size_t k = 0; k < orders.size(); ++k) {
    if (k > 0 || orders.size() > 1) Reorder(m, first, last, orders[k]);
    const State base = WithMifmStay(start, m, first, last);
    for (int ii = 0; ii < 2; ++ii) {
      st_ = base;
      option_ii_[m] = static_cast<char>(ii);
      for (int s = first; s <= last; ++s) Step(s);
      const int64_t t = FmTraffic(st_, first, last);
      if (k == 0) (ii ? traffic_ii : traffic_i) = t;
      if (best < 0 || t < best) {
        best = t;
        best_order = k;
        best_ii = ii;
        best_state = st_;
      }
    }
  }
  if (orders.size() > 1) Reorder(m, first, last, orders[best_order]);
  st_ = std::move(best_state);
  option_ii_[m] = best_ii;
  ModuleDecision& d = out_.modules[m];
  d.processing = best_ii ? "II" : "I";
  d.note = "feature-map bytes off chip in Alg. 3's order: processing I " + std::to_string(traffic_i) + ", II " +
           std::to_string(traffic_ii);
  if (best_order > 0)
    d.note += "; branch order with branch " + std::to_string(alg3[best_order - 1] + 1) + " last: " +
              std::to_string(best);
  int streamed = 0;
  for (int s = first; s <= last && s < static_cast<int>(st_.layers.size()); ++s)
    streamed += !st_.layers[s].on_chip && !ir::IsViewOp(g_.op(out_.order[s]).type);
  if (streamed > 0)
    d.note += "; " + std::to_string(streamed) + " of " + std::to_string(last - first + 1) +
              " layers write their output to DRAM (size_req > size_avail, or no room left)";
}

StatusOr<ModuleBufferPlan> Planner::Run() {
  out_.modules.resize(rep_.modules.size());
  for (size_t m = 0; m < rep_.modules.size(); ++m) out_.modules[m].module = static_cast<int>(m);
  BuildSchedule();
  Prepare();
  const int n = static_cast<int>(out_.order.size());
  for (int s = 0; s < n; ++s)
    if (sizes_[s].Staging() > opt_.memory)
      return OutOfMemory("layer '" + g_.op(out_.order[s]).name + "' alone needs " +
                         std::to_string(sizes_[s].Staging()) +
                         " bytes on chip even streamed (IFM.Partial + OFM.Partial + W.Partial + WM.Partial), more "
                         "than the " + std::to_string(opt_.memory) + " bytes given; give --budget " +
                         std::to_string(out_.max_staging) + " or more");
  // Steps of each top-level module (contiguous in the schedule).
  out_.module_of_step.assign(n, -1);
  std::vector<std::pair<int, int>> span(rep_.modules.size(), {n, -1});
  for (size_t m = 0; m < rep_.modules.size(); ++m) {
    if (rep_.modules[m].depth != 1) continue;
    for (ir::OpId op : rep_.modules[m].ops) {
      const int s = step_of_op_[op.value()];
      span[m] = {std::min(span[m].first, s), std::max(span[m].second, s)};
    }
    if (opt_.layerwise) continue;
    for (int s = span[m].first; s <= span[m].second; ++s) out_.module_of_step[s] = static_cast<int>(m);
  }
  for (int s = 0; s < n;) {
    const int m = out_.module_of_step[s];
    if (m < 0 || span[m].second - span[m].first + 1 != static_cast<int>(rep_.modules[m].ops.size())) {
      Step(s++);
      continue;
    }
    RunModule(m, span[m].first, span[m].second);
    s = span[m].second + 1;
  }
  for (size_t m = 0; m < rep_.modules.size(); ++m) {
    ModuleDecision& d = out_.modules[m];
    if (opt_.layerwise) d.processing = "layerwise";
    int top = static_cast<int>(m);
    while (rep_.modules[top].parent >= 0) top = rep_.modules[top].parent;
    if (!opt_.layerwise && top != static_cast<int>(m)) d.processing = out_.modules[top].processing;
    if (d.branch_order.empty()) {  // not re-ordered (layer-wise, or the model order kept)
      for (size_t b = 0; b < rep_.modules[m].branches.size(); ++b) d.branch_order.push_back(static_cast<int>(b));
      d.branch_req.assign(rep_.modules[m].branches.size(), 0);
    }
  }
  for (TensorHome& h : st_.homes) {
    const ir::OpId producer = g_.tensor(h.tensor).producer;
    h.produced = producer.valid() ? step_of_op_[producer.value()] : -1;
  }
  out_.homes = std::move(st_.homes);
  out_.layers = std::move(st_.layers);
  return std::move(out_);
}

}  // namespace

StatusOr<ModuleBufferPlan> PlanModuleBuffering(const ir::Graph& g, const ModuleReport& report,
                                               const ModuleBufferOptions& options) {
  if (options.memory <= 0) return InvalidArgument("module buffering needs a positive on-chip memory size");
  Planner p(g, report, options);
  return p.Run();
}

}  // namespace sramplan::fusion
