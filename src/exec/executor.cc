#include "exec/executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "exec/hybrid.h"
#include "exec/kernels.h"
#include "exec/lower_step.h"
#include "exec/quantize.h"
#include "sramplan_rt_seg.h"

namespace sramplan::exec {
namespace {

Status Mismatch(std::string m) { return Status(StatusCode::kMismatch, std::move(m)); }

ExecResult CollectOutputs(const ir::Graph& g, const std::vector<const uint8_t*>& ptr_of_tensor) {
  ExecResult r{};
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

// One arena run (RunArena): the level arrays, the plan's indexes and the traffic counted so far.
struct ArenaRun {
  const ir::Graph& g;
  const plan::Plan& p;
  const ModelData& data;
  const QuantizedModel* quant;
  std::map<std::string, std::vector<uint8_t>> mem{};  // one array per level, as large as the plan uses
  std::map<std::string, bool> offchip{};
  std::unordered_map<std::string, std::vector<const plan::Buffer*>> buffers{};
  std::unordered_map<std::string, const plan::Tensor*> ptensors{};
  std::map<int, std::vector<const plan::Transfer*>> transfers{};
  ExecResult r{};
  int n = 0;
  std::optional<ir::Graph> scratch_graph{};  // fused-tiled steps rewrite its shapes per strip
  std::vector<uint8_t> global_buffer{};      // fused-tiled steps: the accelerator's B_c bytes
  // Operand pointers of one op at a step.
  struct Operands {
    std::vector<const uint8_t*> in;
    std::vector<uint8_t*> out;
    OperandBytes bytes;  // the kernels see each operand as exactly its tensor's bytes
  };

  Status Init();
  std::string RootOf(const std::string& name) const;
  StatusOr<const plan::Buffer*> LocateBuffer(const ir::Tensor& t, int s, const std::string& opname, bool allow_wrap,
                                             bool* off);
  StatusOr<uint8_t*> Locate(const ir::Tensor& t, int s, const std::string& opname, bool* off,
                            bool allow_wrap = false, int64_t* bytes = nullptr);
  Status LoadInitialData();
  Status RunTransfers(int s, bool before);
  StatusOr<Operands> OperandsOf(const ir::Op& op, int s, const std::vector<const ir::Op*>* pool_step);
  Status RunSegment(const StepCalls& sc);
  Status RunOp(const LoweredOp& lo, int s, const plan::Buffer* scratch);
  Status RunTiled(const StepCalls& sc);
  void Poison(int s);
  StatusOr<ExecResult> Run();
};

// Memories: one array per level, exactly as large as the plan uses; every buffer inside its level.
Status ArenaRun::Init() {
  for (const auto& l : p.levels) {
    mem[l.name].assign(static_cast<size_t>(l.used_bytes), kPoison);
    offchip[l.name] = l.kind == "flash" || l.kind == "dram";
  }
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
  for (const auto& t : p.tensors) ptensors[t.name] = &t;
  n = static_cast<int>(p.steps.size());
  for (const auto& tr : p.transfers) transfers[tr.step].push_back(&tr);
  return Status::Ok();
}

std::string ArenaRun::RootOf(const std::string& name) const { return AliasRoot(ptensors, name); }

// The buffer holding `tensor` at step s, checked to cover the tensor's bytes. A buffer that wraps
// around its level's circular pool is contiguous only to the segment kernels (allow_wrap: the
// caller addresses it modulo the pool; the returned pointer is then only its start).
StatusOr<const plan::Buffer*> ArenaRun::LocateBuffer(const ir::Tensor& t, int s, const std::string& opname,
                                                     bool allow_wrap, bool* off) {
  std::string root = RootOf(t.name);
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
}

StatusOr<uint8_t*> ArenaRun::Locate(const ir::Tensor& t, int s, const std::string& opname, bool* off, bool allow_wrap,
                                     int64_t* bytes) {
  SP_ASSIGN_OR_RETURN(const plan::Buffer* hit, LocateBuffer(t, s, opname, allow_wrap, off));
  if (bytes) *bytes = hit->bytes;  // checked above to lie inside the level
  return mem[hit->level].data() + hit->offset;
}

// Weights go to their planned place before the run (flash programming / DRAM preload); inputs are
// written by the application before step 0. Neither is counted as traffic.
Status ArenaRun::LoadInitialData() {
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
    SP_ASSIGN_OR_RETURN(const plan::Buffer* dst, LocateBuffer(t, first_use, "(initial data)", true, &off));
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
  return Status::Ok();
}

// Loads and reloads run before the step's ops, spills and stores after them (plan-format.md).
Status ArenaRun::RunTransfers(int s, bool before) {
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
}

// Operand pointers of one op at step s; off-chip operands count as traffic. `pool_operands`: a
// segment step, whose pool operands may wrap (the kernels address them modulo the pool) and whose
// fused intermediates have no buffer.
StatusOr<ArenaRun::Operands> ArenaRun::OperandsOf(const ir::Op& op, int s,
                                                  const std::vector<const ir::Op*>* pool_step) {
  Operands o;
  for (int io = 0; io < 2; ++io)
    for (ir::TensorId id : io == 0 ? op.inputs : op.outputs) {
      if (pool_step && IsFusedIntermediate(g, *pool_step, id)) {
        if (io == 0) o.in.push_back(nullptr);
        continue;
      }
      bool off = false;
      int64_t have = 0;
      SP_ASSIGN_OR_RETURN(uint8_t* ptr, Locate(g.tensor(id), s, op.name, &off, pool_step != nullptr, &have));
      const int64_t bytes = std::min(have, g.tensor(id).Bytes());
      if (io == 0) {
        if (off) r.offchip_read_bytes += g.tensor(id).Bytes();
        o.in.push_back(ptr);
        o.bytes.in.push_back(bytes);
      } else {
        if (off && (pool_step || !ir::IsViewOp(op.type))) r.offchip_write_bytes += g.tensor(id).Bytes();
        o.out.push_back(ptr);
        o.bytes.out.push_back(bytes);
      }
    }
  return o;
}

// A segment step (exec/lower_step.h): one segment-aware kernel on the pool level as a circular
// pool, with the step's workspace.
Status ArenaRun::RunSegment(const StepCalls& sc) {
  const int s = sc.step;
  const std::string where = "step " + std::to_string(s);
  for (const ir::Op* op : sc.ops) SP_RETURN_IF_ERROR(OperandsOf(*op, s, &sc.ops).status());
  const plan::Buffer* b = sc.workspace;
  if (b->offset < 0 || b->offset + b->bytes > static_cast<int64_t>(mem[b->level].size()) || plan::Wraps(p, *b))
    return Mismatch(where + ": the workspace '" + b->tensor + "' lies outside level '" + b->level + "'");
  const KernelCall& k = *sc.segment;
  SP_ASSIGN_OR_RETURN(sp_status_t st, ExecuteSegmentCall(k, mem[sc.input->level].data(),
                                                         mem[b->level].data() + b->offset));
  if (st != SP_OK)
    return Mismatch(where + " op '" + sc.ops.front()->name + "': the segment-aware kernel " +
                    Signature(k.fn).name + " refused the placement (input at " +
                    std::to_string(sc.input->offset) + ", output at " + std::to_string(sc.output->offset) +
                    ", workspace " + std::to_string(b->bytes) + " bytes)");
  return Status::Ok();
}

// Plain and in-place ops: their int8 records, or the float32 kernels on the same decisions.
Status ArenaRun::RunOp(const LoweredOp& lo, int s, const plan::Buffer* scratch) {
  const ir::Op& op = *lo.op;
  SP_ASSIGN_OR_RETURN(Operands o, OperandsOf(op, s, nullptr));
  if (ir::IsViewOp(op.type)) return Status::Ok();
  const std::string ctx = "step " + std::to_string(s);
  if (lo.in_place) {
    uint8_t* sp = mem[scratch->level].data() + scratch->offset;
    if (!quant) return RunDepthwiseInPlace(g, op, o.in, o.out[0], sp, scratch->bytes, o.bytes).WithContext(ctx);
    if (o.in.size() != op.inputs.size() || op.outputs.size() != 1)
      return InvalidArgument("op '" + op.name + "': the executor needs one pointer per operand").WithContext(ctx);
    SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, true, o.bytes).WithContext(ctx));
    return ExecuteCalls(op, lo.calls, o.in, {o.out[0]}, sp).WithContext(ctx);
  }
  if (!quant) return RunKernel(g, op, o.in, o.out, o.bytes).WithContext(ctx);
  if (IsHybridHostOp(g, op)) return RunHybridHostOp(g, op, *quant, o.in, o.out, o.bytes).WithContext(ctx);
  SP_RETURN_IF_ERROR(CheckKernelOperands(g, op, true, o.bytes).WithContext(ctx));
  return ExecuteCalls(op, lo.calls, o.in, o.out, nullptr).WithContext(ctx);
}

// A fused-tiled step (exec/exec_tiled.h): strip by strip in a byte array of the global buffer's
// capacity; its group inputs, outputs and streamed parameters come from and go to DRAM.
Status ArenaRun::RunTiled(const StepCalls& sc) {
  const int s = sc.step;
  if (!scratch_graph) scratch_graph = ScratchGraph(g);
  DramLocator dram = [&](const ir::Tensor& t) -> StatusOr<uint8_t*> {
    bool off = false;
    int64_t have = 0;
    SP_ASSIGN_OR_RETURN(uint8_t* ptr, Locate(g.tensor(t.id), s, sc.ops.front()->name, &off, false, &have));
    bool kept = false;  // kept in the global buffer between groups (exec/lower_step.cc marks it)
    for (const TiledTensor& x : sc.tiled->tensors) kept = kept || (x.id == t.id && x.on_chip);
    if (!off && !kept)
      return Mismatch("step " + std::to_string(s) + ": tensor '" + t.name +
                      "' crosses the fused-tiled group's boundary but is not in DRAM");
    return ptr;
  };
  SP_ASSIGN_OR_RETURN(TiledCounts c, RunTiledSchedule(*sc.tiled, *scratch_graph, quant, dram, global_buffer));
  r.offchip_read_bytes += c.read_bytes;
  r.offchip_write_bytes += c.write_bytes;
  const plan::TiledGroup& tg = p.steps[s].tiled;
  if (c.read_bytes != tg.dram_read_bytes || c.write_bytes != tg.dram_write_bytes || !sc.tiled->note.empty())
    r.notes.push_back("step " + std::to_string(s) + " (group of '" + sc.ops.front()->name + "'): moved read " +
                      std::to_string(c.read_bytes) + " / write " + std::to_string(c.write_bytes) + " B, the group says " +
                      std::to_string(tg.dram_read_bytes) + " / " + std::to_string(tg.dram_write_bytes) +
                      (sc.tiled->note.empty() ? "" : "; " + sc.tiled->note) + "; " + TiledTrafficWhy(*sc.tiled));
  return Status::Ok();
}

// Poisons the bytes of buffers that die at step s, except bytes a buffer still live at s+1 holds
// (an in-place output shares its dying input's bytes).
void ArenaRun::Poison(int s) {
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

StatusOr<ExecResult> ArenaRun::Run() {
  SP_RETURN_IF_ERROR(Init());
  SP_RETURN_IF_ERROR(LoadInitialData());
  const StepLowering lowering(g, p, quant);
  for (int s = 0; s < n; ++s) {
    SP_RETURN_IF_ERROR(RunTransfers(s, true));
    SP_ASSIGN_OR_RETURN(StepCalls sc, LowerStep(lowering, s));
    if (sc.segment) SP_RETURN_IF_ERROR(RunSegment(sc));
    if (sc.tiled) SP_RETURN_IF_ERROR(RunTiled(sc));
    for (const LoweredOp& lo : sc.op_calls) SP_RETURN_IF_ERROR(RunOp(lo, s, sc.workspace));
    SP_RETURN_IF_ERROR(RunTransfers(s, false));
    if (s < n - 1) Poison(s);  // after the last step the outputs are read
  }
  for (ir::TensorId id : g.Outputs()) {
    const ir::Tensor& t = g.tensor(id);
    bool off = false;
    SP_ASSIGN_OR_RETURN(uint8_t* ptr, Locate(t, n - 1, "(graph output)", &off));
    r.output_names.push_back(t.name);
    r.outputs.emplace_back(ptr, ptr + t.Bytes());
  }
  r.steps = n;
  return r;
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
  return ArenaRun{g, p, data, quant}.Run();
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
