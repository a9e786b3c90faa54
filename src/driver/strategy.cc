#include "driver/strategy.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string_view>
#include <utility>
#include <map>
#include <numeric>
#include <set>

#include "placement/optimal.h"
#include "placement/placement.h"
#include "schedule/min_peak.h"
#include "support/int_math.h"

namespace sramplan::driver {
namespace {

using placement::BufferRequest;

// Union-find over arena buffers for in-place sharing.
struct Classes {
  std::vector<int> parent;
  explicit Classes(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
};

struct InplacePair {
  int out_buffer;
  int in_buffer;
  std::string reason;
};

// TinyEngine's rule: a depthwise convolution or an element-wise op writes its output over an input
// that dies at this step, when the output is no larger and the elements have the same size.
std::vector<InplacePair> FindInplace(const ir::Graph& g, const analysis::Schedule& sched,
                                     const analysis::Liveness& lv) {
  std::vector<InplacePair> pairs;
  std::vector<bool> taken(lv.buffers.size(), false);  // an input can host one output
  for (size_t s = 0; s < sched.size(); ++s) {
    const ir::Op& op = g.op(sched[s]);
    bool dw = ir::IsDepthwiseConv(g, op);
    bool ew = ir::IsUnaryElementwise(op.type) || ir::IsBinaryElementwise(op.type);
    if ((!dw && !ew) || op.outputs.size() != 1) continue;
    const ir::Tensor& out = g.tensor(op.outputs[0]);
    int ob = lv.buffer_of_tensor[out.id.value()];
    if (ob < 0 || lv.buffers[ob].tensor != out.id) continue;
    size_t candidates = dw ? 1 : op.inputs.size();
    for (size_t k = 0; k < candidates && k < op.inputs.size(); ++k) {
      const ir::Tensor& in = g.tensor(op.inputs[k]);
      if (in.kind == ir::TensorKind::kConstant) continue;
      int ib = lv.buffer_of_tensor[in.id.value()];
      if (ib < 0 || taken[ib]) continue;
      const ir::Tensor& root = g.tensor(lv.buffers[ib].tensor);
      if (root.kind == ir::TensorKind::kOutput) continue;
      if (lv.buffers[ib].last_step != static_cast<int>(s)) continue;
      if (ir::DataTypeSize(root.dtype) != ir::DataTypeSize(out.dtype)) continue;
      if (lv.buffers[ob].bytes > lv.buffers[ib].bytes) continue;
      if (ew && in.shape != out.shape) continue;  // broadcast inputs cannot host the output
      taken[ib] = true;
      pairs.push_back({ob, ib, dw ? "inplace-depthwise" : "inplace-elementwise"});
      break;
    }
  }
  return pairs;
}

struct StepBytes {
  int step;
  int64_t bytes;
};

// Max over steps of the bytes that must be live there: per in-place class (classes[i] for buffer i)
// its largest member live at that step, plus the scratch buffer of the step (the last one listed,
// if several). Linear in buffers and steps (up to sorting): each class adds its piecewise-constant
// profile to a difference array, never a value per (buffer, step).
int64_t ClassLowerBound(const analysis::Liveness& lv, const std::vector<int>& classes,
                        const std::vector<StepBytes>& scratch, size_t num_steps) {
  const size_t steps = std::max<size_t>(num_steps, 1);
  std::vector<int64_t> diff(steps + 1, 0);
  std::vector<int> order(lv.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return classes[a] < classes[b]; });
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, bytes): arrives at step / leaves before it (-1 - bytes)
  std::multiset<int64_t> live;
  for (size_t k = 0; k < order.size();) {
    size_t end = k;
    while (end < order.size() && classes[order[end]] == classes[order[k]]) ++end;
    if (end - k == 1) {
      const analysis::LiveTensor& b = lv.buffers[order[k]];
      diff[b.first_step] += std::max<int64_t>(b.bytes, 0);
      diff[b.last_step + 1] -= std::max<int64_t>(b.bytes, 0);
    } else {
      events.clear();
      for (size_t q = k; q < end; ++q) {
        const analysis::LiveTensor& b = lv.buffers[order[q]];
        events.push_back({b.first_step, b.bytes});
        events.push_back({int64_t{b.last_step} + 1, -1 - b.bytes});
      }
      std::sort(events.begin(), events.end());
      live.clear();
      for (size_t e = 0; e < events.size();) {
        const int64_t step = events[e].first;
        for (; e < events.size() && events[e].first == step; ++e) {
          if (events[e].second >= 0) live.insert(events[e].second);
          else live.erase(live.find(-1 - events[e].second));
        }
        if (live.empty()) continue;
        const int64_t value = std::max<int64_t>(*live.rbegin(), 0);  // the class's bytes until the next event
        const int64_t next = e < events.size() ? events[e].first : static_cast<int64_t>(steps);
        diff[step] += value;
        diff[next] -= value;
      }
    }
    k = end;
  }
  std::vector<int64_t> scratch_at(steps, 0);
  for (const StepBytes& sc : scratch) scratch_at[sc.step] = sc.bytes;
  int64_t lower_bound = 0, sum = 0;
  for (size_t s = 0; s < steps; ++s) {
    sum += diff[s];
    lower_bound = std::max(lower_bound, sum + scratch_at[s]);
  }
  return lower_bound;
}

}  // namespace

const std::vector<StrategyInfo>& Strategies() {
  static const std::vector<StrategyInfo> kList = {
      {"naive", "model order; every tensor its own region (no reuse)"},
      {"linear", "model order; TFLite's simple arena: first-use order, best fit into freed gaps"},
      {"tflm", "model order; TFLite Micro GreedyMemoryPlanner (16-byte sizes, largest first, first fit)"},
      {"inplace", "tflm placement plus TinyEngine's in-place depthwise and element-wise ops"},
      {"optimal", "--schedule order; exact placement (best-of greedy portfolio + branch and bound, 20000 nodes)"},
      {"tinyengine", "vMCU's TinyEngine baseline: in-place depthwise, first fit by size, no partial overlap"},
      {"hmcos", "vMCU's HMCOS baseline: min-peak order, no in-place, exact placement"},
  };
  return kList;
}

bool IsStrategy(const std::string& name) {
  if (IsBudgetStrategy(name) || name == "vmcu") return true;
  for (const auto& s : Strategies())
    if (s.name == name) return true;
  return false;
}

std::map<std::string, std::vector<int64_t>> PlanOpAttrs(const ir::Op& op) {
  std::map<std::string, std::vector<int64_t>> a;
  if (op.type != "Conv") return a;
  for (const char* k : {"kernel_shape", "strides", "pads", "dilations"}) {
    std::vector<int64_t> v = op.attrs.GetInts(k);
    if (!v.empty()) a[k] = v;
  }
  a["group"] = {op.attrs.GetInt("group", 1)};
  return a;
}

std::string PlanOpType(const ir::Graph& g, const ir::Op& op) {
  if (ir::IsDepthwiseConv(g, op)) return "DepthwiseConv";
  if (op.type == "Opaque") return "Opaque:" + op.original_type;
  return op.type;
}

namespace {

// MinPeakSchedule takes seconds on the NAS graphs and is needed by every strategy run with the
// minpeak order, and twice by a budget strategy (the mpmf budget and the order). The
// last few results are kept, keyed by a fingerprint of everything MinPeakSchedule reads (op list,
// operands, tensor names, kinds and bytes), so that repeated runs on one graph compute it once.
uint64_t GraphFingerprint(const ir::Graph& g) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  auto mix_str = [&](std::string_view s) {
    mix(s.size());
    for (char c : s) mix(static_cast<unsigned char>(c));
  };
  mix(static_cast<uint64_t>(g.num_ops()));
  mix(static_cast<uint64_t>(g.num_tensors()));
  for (const ir::Tensor& t : g.tensors()) {
    mix_str(t.name);
    mix(static_cast<uint64_t>(t.kind));
    mix(static_cast<uint64_t>(t.Bytes()));
    mix(static_cast<uint64_t>(g.StorageRoot(t.id).value()));
  }
  for (const ir::Op& op : g.ops()) {
    mix_str(op.name);
    mix_str(op.type);
    for (ir::TensorId id : op.inputs) mix(static_cast<uint64_t>(id.value()) + 1);
    mix(0);
    for (ir::TensorId id : op.outputs) mix(static_cast<uint64_t>(id.value()) + 1);
    mix(0);
  }
  return h;
}

}  // namespace

schedule::MinPeakResult CachedMinPeakSchedule(const ir::Graph& g) {
  static std::mutex mu;
  static std::deque<std::pair<uint64_t, schedule::MinPeakResult>> cache;
  const uint64_t key = GraphFingerprint(g);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [k, r] : cache)  // a hash collision could only return another valid order
      if (k == key && static_cast<int>(r.order.size()) == g.num_ops() && analysis::ValidateSchedule(g, r.order).ok())
        return r;
  }
  schedule::MinPeakResult r = schedule::MinPeakSchedule(g);
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace_front(key, r);
  if (cache.size() > 4) cache.pop_back();
  return r;
}

StatusOr<analysis::Schedule> ChooseSchedule(const ir::Graph& g, const PlanOptions& options, std::string* note) {
  analysis::Schedule sched;
  if (options.schedule == "model") {
    sched = analysis::ModelOrder(g);
  } else if (options.schedule == "minpeak") {
    schedule::MinPeakResult mp = CachedMinPeakSchedule(g);
    sched = mp.order;
    *note = "min-peak schedule (" + mp.method + "): live peak " + std::to_string(mp.peak_bytes) + " B vs " +
            std::to_string(mp.model_order_peak) + " B in model order" +
            (mp.proved_optimal ? ", proved optimal" : ", not proved; bound " + std::to_string(mp.lower_bound) + " B");
  } else {
    return InvalidArgument("unknown schedule '" + options.schedule + "'; choose model or minpeak");
  }
  SP_RETURN_IF_ERROR(analysis::ValidateSchedule(g, sched));
  return sched;
}

plan::StepOp PlanStepOp(const ir::Graph& g, const ir::Op& op) {
  plan::StepOp so;
  so.name = op.name;
  so.type = PlanOpType(g, op);
  for (ir::TensorId in : op.inputs) so.inputs.push_back(g.tensor(in).name);
  for (ir::TensorId out : op.outputs) so.outputs.push_back(g.tensor(out).name);
  so.attrs = PlanOpAttrs(op);
  return so;
}

void FinishLevelMetrics(const std::string& arena_level, int64_t lower_bound, plan::Plan* p) {
  plan::Metrics& m = p->metrics;
  for (auto& l : p->levels)
    for (const auto& b : p->buffers)
      if (b.level == l.name)
        for (const auto& [lo, hi] : plan::BufferPieces(*p, b)) l.used_bytes = std::max(l.used_bytes, hi);
  m.fits = true;
  for (const auto& l : p->levels) {
    m.peak_bytes[l.name] = l.used_bytes;
    if (l.name == arena_level) m.arena_bytes = l.used_bytes;
    if (l.used_bytes > l.capacity) m.fits = false;
  }
  m.lower_bound_bytes = lower_bound;
  m.overhead_pct = lower_bound > 0
                       ? 100.0 * static_cast<double>(m.arena_bytes - lower_bound) / static_cast<double>(lower_bound)
                       : 0.0;
}

void AddOpAccesses(const ir::Graph& g, const analysis::Schedule& sched, const target::MemoryLevel& arena,
                   const target::MemoryLevel& wlevel, const std::function<bool(const ir::Tensor&)>& in_weight_level,
                   plan::Metrics* m) {
  for (const ir::OpId id : sched) {
    const ir::Op& op = g.op(id);
    for (ir::TensorId in : op.inputs) {
      const ir::Tensor& ten = g.tensor(in);
      if (in_weight_level(ten)) {
        m->energy_pj += static_cast<double>(ten.Bytes()) * wlevel.read_pj_per_byte;
        if (target::IsOffChip(wlevel.kind)) m->offchip_read_bytes += ten.Bytes();
      } else {
        m->energy_pj += static_cast<double>(ten.Bytes()) * arena.read_pj_per_byte;
      }
    }
    if (ir::IsViewOp(op.type)) continue;
    for (ir::TensorId out : op.outputs) m->energy_pj += static_cast<double>(g.tensor(out).Bytes()) * arena.write_pj_per_byte;
  }
}

plan::Plan PlanSkeleton(const ir::Graph& g, const target::Target& t, const analysis::Schedule& sched,
                        const std::string& strategy, const PlanOptions& options) {
  plan::Plan p;
  p.model = g.name;
  p.target = t.name;
  p.strategy = strategy;
  p.schedule = options.schedule;
  p.dtype = options.dtype_name;
  p.batch = options.batch;
  p.arena_level = t.levels[t.arena_level].name;
  for (const auto& l : t.levels)
    p.levels.push_back({l.name, target::MemoryKindName(l.kind), l.capacity, 0, 0, l.holds_activations});
  for (size_t s = 0; s < sched.size(); ++s) p.steps.push_back({static_cast<int>(s), {PlanStepOp(g, g.op(sched[s]))}});
  for (const ir::Tensor& ten : g.tensors()) {
    plan::Tensor pt;
    pt.name = ten.name;
    pt.bytes = ten.Bytes();
    pt.kind = ir::TensorKindName(ten.kind);
    pt.dtype = ir::DataTypeName(ten.dtype);
    pt.shape = ten.shape;
    if (ten.producer.valid()) pt.producer = g.op(ten.producer).name;
    for (ir::OpId c : ten.consumers) pt.consumers.push_back(g.op(c).name);
    ir::TensorId root = g.StorageRoot(ten.id);
    if (root != ten.id) pt.alias_of = g.tensor(g.op(ten.producer).inputs[0]).name;
    p.tensors.push_back(std::move(pt));
  }
  return p;
}

StatusOr<plan::Plan> RunStrategy(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                                 const PlanOptions& options) {
  if (!IsStrategy(strategy)) {
    std::string names;
    for (const auto& s : Strategies()) names += (names.empty() ? "" : ", ") + s.name;
    for (const auto& s : BudgetStrategies()) names += ", " + s.name;
    names += ", vmcu";
    return InvalidArgument("unknown strategy '" + strategy + "'; choose one of " + names + " or all");
  }
  if (IsBudgetStrategy(strategy)) return RunBudgetStrategy(g, t, strategy, options);
  if (strategy == "vmcu") return RunVmcuStrategy(g, t, options);
  std::string schedule_note;
  PlanOptions sched_options = options;
  if (strategy == "hmcos") sched_options.schedule = "minpeak";  // HMCOS is a min-peak scheduler
  SP_ASSIGN_OR_RETURN(analysis::Schedule sched, ChooseSchedule(g, sched_options, &schedule_note));
  SP_RETURN_IF_ERROR(analysis::ValidateSchedule(g, sched));
  const analysis::Liveness lv = analysis::ComputeLiveness(g, sched);
  const target::MemoryLevel& arena = t.levels[t.arena_level];
  const target::MemoryLevel& wlevel = t.levels[t.weight_level];
  const int64_t align = t.alignment;
  const bool inplace_rules = strategy == "inplace" || strategy == "tinyengine";
  const bool tflm_sizes = strategy == "tflm" || inplace_rules;

  // Buffer bytes as placed: TFLM rounds sizes up to 16 bytes before its planner sees them.
  std::vector<int64_t> placed_bytes(lv.buffers.size());
  for (size_t i = 0; i < lv.buffers.size(); ++i)
    placed_bytes[i] = tflm_sizes ? AlignUp(lv.buffers[i].bytes, 16) : lv.buffers[i].bytes;

  std::vector<InplacePair> inplace;
  if (inplace_rules) inplace = FindInplace(g, sched, lv);
  Classes cls(lv.buffers.size());
  for (const auto& p : inplace) cls.parent[cls.Find(p.out_buffer)] = cls.Find(p.in_buffer);

  // One request per class (the class root is the earliest buffer: inputs host outputs).
  std::vector<int> request_of_class(lv.buffers.size(), -1);
  std::vector<BufferRequest> requests;
  for (size_t i = 0; i < lv.buffers.size(); ++i) {
    int c = cls.Find(static_cast<int>(i));
    if (request_of_class[c] < 0) {
      request_of_class[c] = static_cast<int>(requests.size());
      BufferRequest r;
      r.id = static_cast<int>(requests.size());
      r.bytes = placed_bytes[i];
      r.alignment = tflm_sizes ? 1 : align;
      r.first_step = lv.buffers[i].first_step;
      r.last_step = lv.buffers[i].last_step;
      requests.push_back(r);
    } else {
      BufferRequest& r = requests[request_of_class[c]];
      r.bytes = std::max(r.bytes, placed_bytes[i]);
      r.first_step = std::min(r.first_step, lv.buffers[i].first_step);
      r.last_step = std::max(r.last_step, lv.buffers[i].last_step);
    }
  }
  // TinyEngine's in-place depthwise needs one output channel plane of scratch at its step.
  struct Scratch {
    std::string name, producer;
    int64_t bytes;
    int step;
  };
  std::vector<Scratch> scratch;
  for (const auto& p : inplace) {
    if (p.reason != "inplace-depthwise") continue;
    const ir::Tensor& out = g.tensor(lv.buffers[p.out_buffer].tensor);
    int ca = ir::ChannelAxis(g, static_cast<int>(out.shape.size()));
    int64_t plane = out.Bytes() / std::max<int64_t>(out.shape[ca], 1);
    const ir::Op& op = g.op(out.producer);
    Scratch sc{op.name + ".scratch", op.name, AlignUp(plane, 16), lv.buffers[p.out_buffer].first_step};
    BufferRequest r;
    r.id = static_cast<int>(requests.size());
    r.bytes = sc.bytes;
    r.alignment = 1;
    r.first_step = r.last_step = sc.step;
    requests.push_back(r);
    scratch.push_back(sc);
  }

  placement::Placement placed;
  std::string placement_note;
  if (strategy == "optimal" || strategy == "hmcos") {
    placement::OptimalOptions po;
    po.time_limit_s = 30;  // a safety net; the node limit keeps plans reproducible
    po.node_limit = 20000;
    placement::OptimalResult r = placement::PlaceBestOf(requests, po);
    placed = r.placement;
    placement_note = "placement " + r.method + ": " + std::to_string(placed.arena_bytes) + " B, live-bytes bound " +
                     std::to_string(r.lower_bound) + " B" +
                     (r.proved_optimal ? ", proved optimal" : ", best proved bound " + std::to_string(r.proved_lower_bound) + " B") +
                     (r.hit_limit ? " (time limit)" : "");
  } else {
    SP_ASSIGN_OR_RETURN(placed, placement::PlaceByName(inplace_rules ? "tflm" : strategy, requests));
  }

  plan::Plan p = PlanSkeleton(g, t, sched, strategy, sched_options);
  if (!schedule_note.empty()) p.notes.push_back(schedule_note);
  if (!placement_note.empty()) p.notes.push_back(placement_note);
  for (const auto& sc : scratch)
    p.tensors.push_back({sc.name, sc.bytes, "scratch", "int8", {sc.bytes}, sc.producer, {sc.producer}, ""});

  // Activation buffers.
  std::vector<std::vector<plan::Overlap>> overlaps(lv.buffers.size());
  for (const auto& ip : inplace)
    overlaps[ip.out_buffer].push_back({g.tensor(lv.buffers[ip.in_buffer].tensor).name, ip.reason, 0});
  for (size_t i = 0; i < lv.buffers.size(); ++i) {
    const auto& b = lv.buffers[i];
    int req = request_of_class[cls.Find(static_cast<int>(i))];
    p.buffers.push_back({g.tensor(b.tensor).name, arena.name, placed.offsets[req], placed_bytes[i],
                         b.first_step, b.last_step, overlaps[i]});
  }
  for (size_t k = 0; k < scratch.size(); ++k) {
    size_t req = requests.size() - scratch.size() + k;
    p.buffers.push_back({scratch[k].name, arena.name, placed.offsets[req], scratch[k].bytes, scratch[k].step,
                         scratch[k].step, {}});
  }
  // Weights: laid out one after another in the weight level for the whole run.
  const int last = std::max(0, static_cast<int>(sched.size()) - 1);
  int64_t wcursor = 0;
  int64_t weight_bytes = 0;
  for (const ir::Tensor& ten : g.tensors()) {
    if (ten.kind != ir::TensorKind::kConstant || ten.consumers.empty()) continue;
    wcursor = AlignUp(wcursor, align);
    p.buffers.push_back({ten.name, wlevel.name, wcursor, ten.Bytes(), 0, last, {}});
    wcursor += ten.Bytes();
    weight_bytes += ten.Bytes();
  }
  // View outputs that are constants-derived own their bytes in the arena already (see liveness).

  // Levels and metrics.
  // Lower bound of this strategy's arena: at each step, the bytes that must be live, counting an
  // in-place class once (its largest member live at that step) and unaligned sizes.
  int64_t lower_bound = 0;
  {
    std::vector<int> classes(lv.buffers.size());
    for (size_t i = 0; i < lv.buffers.size(); ++i) classes[i] = cls.Find(static_cast<int>(i));
    std::vector<StepBytes> scratch_steps;
    for (const auto& sc : scratch) scratch_steps.push_back({sc.step, sc.bytes});
    lower_bound = ClassLowerBound(lv, classes, scratch_steps, sched.size());
  }
  for (auto& l : p.levels) {
    if (l.name == arena.name) l.lower_bound_bytes = lower_bound;
    if (l.name == wlevel.name && wlevel.name != arena.name) l.lower_bound_bytes = weight_bytes;
  }
  FinishLevelMetrics(arena.name, lower_bound, &p);
  plan::Metrics& m = p.metrics;
  // Traffic and energy: each op reads its inputs and writes its outputs once; weights come from the
  // weight level (compulsory off-chip reads when that level is off chip).
  AddOpAccesses(g, sched, arena, wlevel, [](const ir::Tensor& ten) { return ten.kind == ir::TensorKind::kConstant; }, &m);
  if (inplace_rules) {
    // What in-place saved: the same placement without sharing.
    std::vector<BufferRequest> plain;
    for (size_t i = 0; i < lv.buffers.size(); ++i)
      plain.push_back({static_cast<int>(i), placed_bytes[i], 1, lv.buffers[i].first_step, lv.buffers[i].last_step, {}});
    m.inplace_saved_bytes = placement::PlaceTflmGreedy(plain).arena_bytes - m.arena_bytes;
    p.notes.push_back(std::to_string(inplace.size()) + " in-place ops (" + std::to_string(scratch.size()) +
                      " depthwise with a one-channel scratch buffer)");
  }
  plan::InferStepKinds(&p);
  plan::VerifyResult vr = plan::VerifyPlan(p);
  if (!vr.ok())
    return InternalError("strategy '" + strategy + "' produced a plan that fails verification:\n" + vr.Summary());
  return p;
}

}  // namespace sramplan::driver
