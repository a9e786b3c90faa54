#include "fuzz_entries.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analysis/op_cost.h"
#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/model_data.h"
#include "exec/quantize.h"
#include "driver/tflm_arena.h"
#include "driver/tflm_tail.h"
#include "import/import.h"
#include "import/tflite_writer.h"
#include "placement/optimal.h"
#include "placement/problem_csv.h"
#include "plan/plan.h"
#include "plan/verifier.h"
#include "target/target.h"
#include "transform/canonicalize.h"
#include "test_graphs.h"

namespace sramplan::fuzz {
namespace {

// Bounds that keep one execution fast (milliseconds): larger inputs are parsed and imported but not
// planned or executed.
constexpr int64_t kMaxPlanTensorBytes = 4 << 20;  // sum of all tensor bytes of a graph to plan
constexpr int kMaxPlanOps = 400;
constexpr int kMaxVmcuOps = 6;  // vmcu's overlap analysis takes ~0.8 s CPU on a 13-op MCUNet config
constexpr int64_t kMaxRunTensorBytes = 256 << 10;  // ... to execute (naive + arena runs)
constexpr int kMaxRunOps = 24;
constexpr int64_t kMaxRunMacs = 2'000'000;
constexpr size_t kMaxPlaceRequests = 400;

void DefaultBugHandler(const std::string& message) {
  std::fprintf(stderr, "sramplan fuzz: BUG: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

BugHandler bug_handler = DefaultBugHandler;

// Reports a bug and returns 0 (the handler aborts unless a test installed its own).
int Bug(const std::string& message) {
  bug_handler(message);
  return 0;
}

std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A status the caller may legitimately get for bad input; false for internal errors (bugs).
bool IsInputError(const Status& s) { return s.code() != StatusCode::kInternal; }

// One SRAM arena large enough for any graph the bounds above let through (what `--target sram:16MiB`
// resolves to).
const target::Target& LargeTarget() {
  static const target::Target* t = [] {
    StatusOr<target::Target> r = target::LoadTarget("sram:16MiB");
    if (!r.ok()) {
      DefaultBugHandler("the shorthand target sram:16MiB does not load: " + r.status().message());
    }
    return new target::Target(std::move(r).value());
  }();
  return *t;
}

// The operator order a plan runs, as op ids of `g` (what `sramplan verify` derives).
analysis::Schedule PlanOrder(const ir::Graph& g, const plan::Plan& p) {
  std::map<std::string, ir::OpId> by_name;
  for (const auto& op : g.ops()) by_name.emplace(op.name, op.id);
  analysis::Schedule order;
  for (const auto& st : p.steps)
    for (const auto& so : st.ops) {
      auto it = by_name.find(so.name);
      if (it != by_name.end()) order.push_back(it->second);
    }
  return order;
}

// A strategy's plan must pass the verifier (RunStrategy's contract) and survive PlanToJson ->
// PlanFromJson (what `plan --json` then `check-plan` do) with the same verdict and the same text.
int CheckPlanConsistency(const plan::Plan& p, const std::string& what) {
  plan::VerifyResult v = plan::VerifyPlan(p);
  if (!v.ok()) return Bug(what + ": the strategy's plan fails the verifier:\n" + v.Summary(5));
  std::string json = plan::PlanToJson(p);
  StatusOr<plan::Plan> back = plan::PlanFromJson(json);
  if (!back.ok()) return Bug(what + ": PlanFromJson rejects PlanToJson's output: " + back.status().message());
  plan::VerifyResult v2 = plan::VerifyPlan(*back);
  if (!v2.ok()) return Bug(what + ": the plan read back from JSON fails the verifier:\n" + v2.Summary(5));
  if (v2.fits() != v.fits()) return Bug(what + ": the plan read back from JSON changes the fits verdict");
  if (plan::PlanToJson(*back) != json) return Bug(what + ": PlanToJson(PlanFromJson(json)) != json");
  return 0;
}

// Runs `p` naively and in its arena (what `sramplan verify` does for one strategy); any difference
// is a bug. `quant` is set for int8 graphs.
int CheckExecution(const ir::Graph& g, const plan::Plan& p, const exec::ModelData& data,
                   const exec::QuantizedModel* quant, const std::string& what) {
  StatusOr<exec::ExecResult> naive = exec::RunNaive(g, PlanOrder(g, p), data, quant);
  if (!naive.ok()) {
    if (!IsInputError(naive.status())) return Bug(what + ": naive run: " + naive.status().message());
    return 0;
  }
  StatusOr<exec::ExecResult> arena = exec::RunArena(g, p, data, quant);
  if (!arena.ok()) {
    StatusCode c = arena.status().code();
    if (c == StatusCode::kMismatch || c == StatusCode::kInternal)
      return Bug(what + ": arena run of a verified plan fails: " + arena.status().message());
    return 0;
  }
  std::string diff = exec::Compare(g, *naive, *arena, p);
  if (!diff.empty()) return Bug(what + ": arena run differs from the naive run: " + diff);
  return 0;
}

bool SmallEnoughToRun(const ir::Graph& g, int64_t tensor_bytes) {
  if (tensor_bytes > kMaxRunTensorBytes || g.num_ops() > kMaxRunOps) return false;
  int64_t macs = 0;
  for (const auto& op : g.ops()) {
    int64_t m = analysis::ComputeOpCost(g, op).macs;
    if (m < 0 || m > kMaxRunMacs - macs) return false;
    macs += m;
  }
  return true;
}

// What the CLI does with a model that imported: plan it (int8, tflm; vmcu for small graphs) on a
// large SRAM and, for tiny graphs, verify int8 and float32 execution against the naive executor.
int CheckGraph(const ir::Graph& imported) {
  if (imported.num_ops() > kMaxPlanOps) return 0;
  int64_t tensor_bytes = 0;
  for (const auto& t : imported.tensors()) {
    int64_t b = t.Bytes();
    if (b < 0 || b > kMaxPlanTensorBytes - tensor_bytes) return 0;
    tensor_bytes += b;
  }
  const target::Target& target = LargeTarget();
  const bool run = SmallEnoughToRun(imported, tensor_bytes);

  ir::Graph g8 = imported;
  ir::ApplyDtype(g8, ir::DataType::kInt8);
  driver::PlanOptions opts;
  opts.dtype_name = "int8";
  std::vector<std::string> strategies = {"tflm"};
  if (imported.num_ops() <= kMaxVmcuOps) strategies.push_back("vmcu");
  std::optional<exec::QuantizedModel> quant;
  bool quant_tried = false;
  for (const std::string& s : strategies) {
    StatusOr<plan::Plan> p = driver::RunStrategy(g8, target, s, opts);
    if (!p.ok()) {
      if (!IsInputError(p.status())) return Bug("plan --strategy " + s + ": " + p.status().message());
      continue;
    }
    if (CheckPlanConsistency(*p, "int8 " + s) != 0) return 0;
    if (!run) continue;
    if (!quant_tried) {
      quant_tried = true;
      StatusOr<exec::QuantizedModel> q = exec::QuantizeModel(g8, exec::kDefaultSeed);
      if (!q.ok() && !IsInputError(q.status())) return Bug("int8 quantisation: " + q.status().message());
      if (q.ok()) quant = std::move(q).value();
    }
    if (quant) CheckExecution(g8, *p, quant->data, &*quant, "verify int8 " + s);
  }
  if (!run) return 0;

  ir::Graph gf = imported;
  ir::ApplyDtype(gf, ir::DataType::kFloat32);
  opts.dtype_name = "float32";
  StatusOr<plan::Plan> p = driver::RunStrategy(gf, target, "tflm", opts);
  if (!p.ok()) {
    if (!IsInputError(p.status())) return Bug("float32 plan: " + p.status().message());
    return 0;
  }
  if (CheckPlanConsistency(*p, "float32 tflm") != 0) return 0;
  StatusOr<exec::ModelData> data = exec::MakeModelData(gf, exec::kDefaultSeed);
  if (!data.ok()) {
    if (!IsInputError(data.status())) return Bug("float32 model data: " + data.status().message());
    return 0;
  }
  return CheckExecution(gf, *p, *data, nullptr, "verify float32 tflm");
}

int CheckImported(const StatusOr<ir::Graph>& g, const std::string& what) {
  if (!g.ok()) {
    if (!IsInputError(g.status())) return Bug(what + ": " + g.status().message());
    return 0;
  }
  return CheckGraph(*g);
}

// The CLI canonicalises ONNX models by default (and any model with --canonicalize): the canonical
// graph, when Canonicalize accepts the input, must pass the same checks.
int CheckCanonical(const StatusOr<ir::Graph>& g, const std::string& what) {
  if (!g.ok()) return 0;
  ir::Graph c = *g;
  StatusOr<transform::CanonicalizeReport> r = transform::Canonicalize(&c, {});
  if (!r.ok()) {
    if (!IsInputError(r.status())) return Bug(what + " Canonicalize: " + r.status().message());
    return 0;
  }
  return CheckGraph(c);
}

// The bottleneck graph of tests/test_graphs.h (kBottleneckGraph): a small int8 NHWC graph the target
// entry plans on every target it loads (tflm and vmcu), so the target's fields reach the planners.
const ir::Graph& ProbeGraph() {
  static const ir::Graph* g = [] {
    StatusOr<ir::Graph> r = import::ImportNativeJson(testing::kBottleneckGraph, "probe.graph.json", import::ImportOptions());
    if (!r.ok()) DefaultBugHandler("the probe graph does not import: " + r.status().message());
    return new ir::Graph(std::move(r).value());
  }();
  return *g;
}

// The placement is complete, aligned, inside its reported arena and free of overlaps between
// buffers live at the same time (checked here without the placement code).
int CheckPlacement(const std::vector<placement::BufferRequest>& rs, const placement::Placement& pl) {
  if (pl.offsets.size() != rs.size()) return Bug("placement has the wrong number of offsets");
  for (size_t i = 0; i < rs.size(); ++i) {
    int64_t off = pl.offsets[i];
    if (off < 0 || off % rs[i].alignment != 0 || off > pl.arena_bytes - rs[i].bytes)
      return Bug("buffer " + std::to_string(i) + " at offset " + std::to_string(off) +
                 " is misaligned or outside the arena of " + std::to_string(pl.arena_bytes) + " bytes");
    for (size_t j = 0; j < i; ++j) {
      if (rs[i].last_step < rs[j].first_step || rs[j].last_step < rs[i].first_step) continue;
      if (rs[i].bytes == 0 || rs[j].bytes == 0) continue;
      int64_t oj = pl.offsets[j];
      if (off < oj + rs[j].bytes && oj < off + rs[i].bytes)
        return Bug("buffers " + std::to_string(j) + " and " + std::to_string(i) +
                   " are live together and overlap in the arena");
    }
  }
  return 0;
}

}  // namespace

void SetBugHandler(BugHandler handler) { bug_handler = handler ? handler : DefaultBugHandler; }

int RunOnnx(const uint8_t* data, size_t size) {
  const StatusOr<ir::Graph> g = import::ImportOnnx(Text(data, size), "fuzz.onnx", import::ImportOptions());
  if (const int rc = CheckImported(g, "ImportOnnx"); rc != 0) return rc;
  return CheckCanonical(g, "ImportOnnx");
}

int RunNativeGraph(const uint8_t* data, size_t size) {
  const StatusOr<ir::Graph> g = import::ImportNativeJson(Text(data, size), "fuzz.graph.json", import::ImportOptions());
  if (const int rc = CheckImported(g, "ImportNativeJson"); rc != 0) return rc;
  return CheckCanonical(g, "ImportNativeJson");
}

int RunMcunetConfig(const uint8_t* data, size_t size) {
  return CheckImported(import::ImportMcunetConfig(Text(data, size), "fuzz.json", import::ImportOptions()),
                       "ImportMcunetConfig");
}

int RunModelFile(const uint8_t* data, size_t size) {
  import::ImportOptions o;
  o.allow_unknown_ops = true;  // --allow-unknown-ops: opaque ops reach the planner too
  return CheckImported(import::ImportModelBytes(Text(data, size), "fuzz.model", o), "ImportModelBytes");
}

int RunTflite(const uint8_t* data, size_t size) {
  const std::string bytes = Text(data, size);
  namespace tfl = import::tflite;
  StatusOr<tfl::Model> m = tfl::ParseModel(bytes, "fuzz.tflite");
  if (m.ok()) {
    // TFLM's arena prediction, and the offline-plan writer read back, on every model that parses.
    StatusOr<driver::TflmArena> a = driver::PredictTflmArena(bytes, *m);
    if (!a.ok() && !IsInputError(a.status())) return Bug("PredictTflmArena: " + a.status().message());
    if (a.ok())
      for (int pointer_bytes : {4, 8}) {
        StatusOr<driver::TflmTail> t = driver::PredictTflmTail(*m, *a, pointer_bytes);
        if (!t.ok() && !IsInputError(t.status())) return Bug("PredictTflmTail: " + t.status().message());
      }
    size_t n = 0;
    for (const auto& sg : m->subgraphs) n += sg.tensors.size();
    std::vector<int32_t> offsets(n, -1);
    for (size_t i = 0; i < n; i += 2) offsets[i] = static_cast<int32_t>(16 * i);
    StatusOr<std::string> w = tfl::WithOfflinePlan(bytes, *m, offsets);
    if (w.ok()) {
      Status back = tfl::CheckOfflinePlanFile(bytes, *w, offsets);
      if (!back.ok()) return Bug("WithOfflinePlan: " + back.message());
    } else if (!IsInputError(w.status())) {
      return Bug("WithOfflinePlan: " + w.status().message());
    }
  }
  import::ImportOptions o;
  o.allow_unknown_ops = true;
  return CheckImported(import::ImportTflite(bytes, "fuzz.tflite", o), "ImportTflite");
}

int RunTarget(const uint8_t* data, size_t size) {
  std::string text = Text(data, size);
  // `--target sram:SIZE` specs go through LoadTarget; everything else is target JSON text.
  StatusOr<target::Target> t = text.rfind("sram:", 0) == 0 && text.size() <= 64
                                   ? target::LoadTarget(text)
                                   : target::ParseTarget(text, "fuzz.target.json", "");
  if (!t.ok()) {
    if (!IsInputError(t.status())) return Bug("target: " + t.status().message());
    return 0;
  }
  // --print-target's JSON is a target file itself: it must load to the same target.
  std::string json = target::TargetToJson(*t);
  StatusOr<target::Target> back = target::ParseTarget(json, "printed.target.json", "");
  if (!back.ok()) return Bug("TargetToJson's output does not load: " + back.status().message() + "\n" + json);
  if (target::TargetToJson(*back) != json) return Bug("TargetToJson(ParseTarget(json)) != json");

  ir::Graph g8 = ProbeGraph();
  driver::PlanOptions opts;
  for (const char* s : {"tflm", "vmcu"}) {
    StatusOr<plan::Plan> p = driver::RunStrategy(g8, *t, s, opts);
    if (!p.ok()) {
      if (!IsInputError(p.status())) return Bug(std::string("plan --strategy ") + s + ": " + p.status().message());
      continue;
    }
    if (CheckPlanConsistency(*p, std::string("probe graph, ") + s) != 0) return 0;
  }
  return 0;
}

int RunPlacementCsv(const uint8_t* data, size_t size) {
  StatusOr<placement::PlacementProblem> problem = placement::ParseProblemCsv(Text(data, size), "fuzz.csv");
  if (!problem.ok()) {
    if (!IsInputError(problem.status())) return Bug("ParseProblemCsv: " + problem.status().message());
    return 0;
  }
  const auto& rs = problem->requests;
  if (rs.size() > kMaxPlaceRequests) return 0;
  // `sramplan place --capacity C`: with C the live-bytes lower bound, the search has to work; a
  // node limit keeps the run short and reproducible.
  placement::OptimalOptions o;
  o.capacity = placement::LiveBytesLowerBound(rs);
  o.node_limit = 2000;
  o.time_limit_s = 1;
  placement::OptimalResult r = placement::PlaceBestOf(rs, o);
  if (CheckPlacement(rs, r.placement) != 0) return 0;
  if (r.placement.arena_bytes < r.lower_bound) return Bug("arena below the live-bytes lower bound");
  if (r.fits_capacity != (r.placement.arena_bytes <= *o.capacity)) return Bug("fits_capacity is wrong");
  // The solution CSV (--out) reads back as the same problem with the same offsets.
  std::string solution = placement::FormatSolutionCsv(*problem, r.placement);
  StatusOr<placement::PlacementProblem> back = placement::ParseProblemCsv(solution, "solution.csv");
  if (!back.ok()) return Bug("the solution CSV does not read back: " + back.status().message());
  if (back->offsets != r.placement.offsets || back->ids != problem->ids || back->lowers != problem->lowers ||
      back->uppers != problem->uppers)
    return Bug("the solution CSV reads back different values");
  return 0;
}

int RunPlanJson(const uint8_t* data, size_t size) {
  // sramplan check-plan: parse, then the independent verifier and its summary.
  StatusOr<plan::Plan> p = plan::PlanFromJson(Text(data, size));
  if (!p.ok()) {
    if (!IsInputError(p.status())) return Bug("PlanFromJson: " + p.status().message());
    return 0;
  }
  plan::VerifyResult r = plan::VerifyPlan(*p);
  std::string summary = r.Summary(20);
  if (!r.ok() && summary.empty()) return Bug("an invalid plan with an empty summary");
  if (!r.ok()) return 0;
  // A plan the verifier accepts survives the JSON round trip with the same verdict.
  StatusOr<plan::Plan> back = plan::PlanFromJson(plan::PlanToJson(*p));
  if (!back.ok()) return Bug("an accepted plan does not read back from PlanToJson: " + back.status().message());
  plan::VerifyResult r2 = plan::VerifyPlan(*back);
  if (!r2.ok() || r2.fits() != r.fits()) return Bug("an accepted plan changes its verdict after a JSON round trip");
  return 0;
}

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> kEntries = {
      {"onnx", RunOnnx},         {"graph", RunNativeGraph}, {"mcunet", RunMcunetConfig},
      {"model", RunModelFile},   {"target", RunTarget},     {"placement_csv", RunPlacementCsv},
      {"plan", RunPlanJson},      {"tflite", RunTflite},
  };
  return kEntries;
}

}  // namespace sramplan::fuzz
