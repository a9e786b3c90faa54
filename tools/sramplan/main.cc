// sramplan CLI: flags to options, nothing else. Exit codes: 0 fits / ok, 1 bad usage or input,
// 2 does not fit, 3 verification mismatch.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <optional>

#include "driver/context.h"
#include "driver/pass.h"
#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/hybrid.h"
#include "exec/quantize.h"
#include "exec/quantize_file.h"
#include "import/import.h"
#include "transform/canonicalize.h"
#include "canonical_flag.h"
#include "placement/optimal.h"
#include "placement/problem_csv.h"
#include "plan/groups_csv.h"
#include "plan/plan.h"
#include "plan/plan_json.h"
#include "plan/verifier.h"
#include "report/html.h"
#include "report/report.h"
#include "support/json.h"
#include "support/progress.h"
#include "support/strings.h"
#include "target/target.h"
#include "cli_checks.h"
#include "codegen_cmd.h"
#include "tflite_cmd.h"
#include "modules_cmd.h"
#include "block_cmd.h"

namespace sp = sramplan;

namespace {

int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose

void Log(int level, const std::string& msg) {
  if (verbosity >= level) std::cerr << msg << "\n";
}

int Fail(const sp::Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  if (s.code() == sp::StatusCode::kOutOfMemory) return 2;  // does not fit (e.g. a budget below M_min)
  if (s.code() == sp::StatusCode::kMismatch) return 3;
  if (s.code() == sp::StatusCode::kInternal) {
    std::cerr << "(this is a bug in sramplan; please report it with the command line)\n";
    return 3;
  }
  return 1;
}

bool WriteFile(const std::string& path, const std::string& content, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  out << content;
  if (!out) {
    *error = "error writing '" + path + "'";
    return false;
  }
  return true;
}

struct ModelFlags {
  std::string model;
  int64_t batch = 1;
  std::string dtype = "int8";
  bool allow_unknown = false;
  bool canonicalize = false;     // --canonicalize: for any format
  bool no_canonicalize = false;  // --no-canonicalize: plan the graph as imported
  std::string input_shape;
  bool fold_pad = false;
};

void AddModelFlags(CLI::App* cmd, ModelFlags* f) {
  cmd->add_option("model", f->model, "model: .onnx, .tflite, native .graph.json, or an MCUNet config .json")->required();
  cmd->add_option("--batch", f->batch, "bind the symbolic batch dimension (default 1)");
  cmd->add_option("--dtype", f->dtype, "element type of activations and weights: int8 (default), int16, float32")
      ->check(CLI::IsMember({"int8", "uint8", "int16", "float16", "float32"}));
  cmd->add_flag("--allow-unknown-ops", f->allow_unknown,
                "import ops outside the supported set as opaque ops (inputs and outputs live while they run)");
  cmd->add_option("--input-shape", f->input_shape,
                  "ONNX: the dims of the model's only input in its own layout, e.g. 1x3x96x96 (shapes are "
                  "inferred again from it)");
  cmd->add_flag("--canonicalize", f->canonicalize,
                "canonicalise any model before planning (the default for ONNX): copy shared biases, fold "
                "Relu/Clip(0,6) into their Conv and make an NCHW graph channels-last (NHWC), the form the vmcu "
                "patterns, the int8 Cortex-M kernels and codegen use");
  cmd->add_flag("--no-canonicalize", f->no_canonicalize, "plan an ONNX model as imported (NCHW, ops as exported)");
  cmd->add_flag("--fold-pad", f->fold_pad,
                ".tflite: fold a spatial PAD that only feeds convolutions into their padding (the padded copy is "
                "never made; TFLM itself keeps it)");
}

// Called with the graph after each of the CLI's graph passes: "import", then "canonicalize".
using GraphHook = std::function<sp::Status(const std::string& stage, const sp::ir::Graph& g)>;

sp::StatusOr<sp::ir::Graph> LoadModel(const ModelFlags& f, const GraphHook& hook = nullptr) {
  sp::import::ImportOptions opts;
  opts.batch = f.batch;
  opts.allow_unknown_ops = f.allow_unknown;
  SP_ASSIGN_OR_RETURN(opts.input_shape, sp::cli::ParseDims(f.input_shape, "--input-shape"));
  opts.fold_pad = f.fold_pad;
  auto t0 = std::chrono::steady_clock::now();
  SP_ASSIGN_OR_RETURN(sp::ir::Graph g, sp::import::ImportModel(f.model, opts));
  if (hook) SP_RETURN_IF_ERROR(hook("import", g));
  SP_ASSIGN_OR_RETURN(const bool canonical, sp::cli::WantCanonical(f.model, f.canonicalize, f.no_canonicalize));
  if (canonical) {
    SP_ASSIGN_OR_RETURN(sp::transform::CanonicalizeReport r, sp::transform::Canonicalize(&g, {}));
    Log(1, r.Summary());
    if (hook) SP_RETURN_IF_ERROR(hook("canonicalize", g));
  }
  sp::ir::DataType dt;
  if (!sp::ir::ParseDataType(f.dtype, &dt)) return sp::InvalidArgument("unknown --dtype '" + f.dtype + "'");
  sp::ir::ApplyDtype(g, dt);
  if (dt == sp::ir::DataType::kInt8) {  // ops without an int8 kernel keep float32 (exec/hybrid.h)
    SP_ASSIGN_OR_RETURN(sp::exec::HybridReport hr, sp::exec::MakeHybridInt8(&g));
    if (hr.changed()) Log(1, hr.Summary());
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Log(2, "imported " + f.model + ": " + std::to_string(g.num_ops()) + " ops, " + std::to_string(g.num_tensors()) +
             " tensors in " + std::to_string(static_cast<int>(ms)) + " ms");
  return g;
}

int CmdTargets(const std::string& print) {
  if (!print.empty()) {
    auto t = sp::target::LoadTarget(print);
    if (!t.ok()) return Fail(t.status());
    std::cout << sp::target::TargetToJson(*t) << "\n";
    return 0;
  }
  std::cout << "bundled targets (use --target NAME, a JSON file, or sram:SIZE):\n";
  for (const auto& [name, text] : sp::target::BundledPresets()) {
    auto t = sp::target::LoadTarget(name);
    if (!t.ok()) return Fail(t.status());
    std::string levels;
    for (const auto& l : t->levels)
      levels += (levels.empty() ? "" : ", ") + l.name + " " + sp::HumanBytes(l.capacity);
    std::cout << "  " << name << ": " << levels << "\n      " << t->description << "\n";
  }
  return 0;
}

int CmdInspect(const ModelFlags& f) {
  auto g = LoadModel(f);
  if (!g.ok()) return Fail(g.status());
  std::cout << sp::report::InspectTable(*g);
  return 0;
}

struct BudgetFlags {
  std::string budget;
  bool with_weights = false;
  double time_limit_s = 60;
  CLI::Option* time_limit_option = nullptr;  // given: --time-limit also caps the other searches
  int64_t segment_bytes = 0;   // vmcu
  bool no_circular = false;    // vmcu
};

void AddBudgetFlags(CLI::App* cmd, BudgetFlags* b) {
  cmd->add_option("--budget", b->budget,
                  "on-chip bytes for the budget strategies (belady, greedy, cosma, cosma-fixed, cosma-dc): a size "
                  "(256KiB), min (COSMA's M_min: the largest working set of one op), mpmf (min-peak footprint) or avg "
                  "(their mean); default: the arena level's capacity")
      ->check(sp::cli::kBudget);
  cmd->add_flag("--with-weights", b->with_weights, "weights also compete for the budget (loaded from DRAM)");
  b->time_limit_option =
      cmd->add_option("--time-limit", b->time_limit_s,
                      "seconds for the ILP strategies (default 60); when given, also caps the min-peak order search "
                      "(10 s) and the exact placement (30 s)")
          ->check(sp::cli::kTimeLimit);
  cmd->add_option("--segment-bytes", b->segment_bytes,
                  "vmcu: bytes per segment, the unit of overlap shifts and FC output chunks (default 0: the "
                  "paper's rule, min(C_in, C_out) / min of the FC rows)")
      ->check(sp::cli::kByteCount);
  cmd->add_flag("--no-circular-pool", b->no_circular,
                "vmcu: never let an overlap chain wrap around the arena's end (a linear layout only)");
}

void ApplyBudgetFlags(const BudgetFlags& b, sp::driver::PlanOptions* o) {
  o->budget = b.budget;
  o->with_weights = b.with_weights;
  o->time_limit_s = b.time_limit_s;
  if (b.time_limit_option && b.time_limit_option->count() > 0) o->search_time_limit_s = b.time_limit_s;
  o->segment_bytes = b.segment_bytes;
  o->circular_pool = !b.no_circular;
}

// The strategies 'all' stands for (the strategy table's groups): the tensor-level ones, or with
// --budget the replacement ones.
std::vector<std::string> AllStrategies(const BudgetFlags& b) {
  return sp::driver::StrategyNames(b.budget.empty() ? sp::driver::AllGroup::kTensor : sp::driver::AllGroup::kBudget);
}

// 'all', or one strategy of the table (else the table's error).
sp::StatusOr<std::vector<std::string>> ChooseStrategies(const std::string& strategy, const BudgetFlags& b) {
  if (strategy == "all") return AllStrategies(b);
  if (!sp::driver::IsStrategy(strategy)) return sp::driver::UnknownStrategy(strategy, true, "--strategy");
  return std::vector<std::string>{strategy};
}

struct PlanFlags {
  std::string target;
  std::string strategy = "tflm";
  std::string json;
  std::string csv_dir;
  bool map = false;
  bool no_map = false;
  bool print_target = false;
  std::string schedule = "model";
  std::string dump_after;  // a pass of the strategy's pipeline
  std::string dump_all;    // a directory
  BudgetFlags budget;
  std::string tflite_out;               // .tflite models: write the plan as TFLM's offline plan
  std::string tflm_kernels = "reference";  // .tflite models: whose scratch buffers tflm_arena_bytes counts
  std::string html;                        // issue 19: the HTML report
};

// --dump-after PASS / --dump-all DIR: the planning context after passes, as JSON files.
sp::driver::AfterPass DumpHook(const PlanFlags& pf, bool several, bool* dumped) {
  if (pf.dump_after.empty() && pf.dump_all.empty()) return nullptr;
  return [&pf, several, dumped](const std::string& pass, const sp::driver::PlanningContext& ctx) -> sp::Status {
    const std::string& strategy = ctx.spec.name;
    std::string path;
    if (!pf.dump_all.empty()) {
      int index = 0;
      for (const auto& p : ctx.spec.passes) {
        if (p == pass) break;
        ++index;
      }
      std::string file = pass;
      for (char& c : file)
        if (c == ':') c = '_';
      char num[16];
      std::snprintf(num, sizeof num, "%02d", index);
      path = pf.dump_all + "/" + strategy + "." + num + "." + file + ".json";
    } else {
      const size_t colon = pass.find(':');
      if (pass != pf.dump_after && pass.substr(0, colon) != pf.dump_after) return sp::Status::Ok();
      path = "-";
    }
    *dumped = true;
    std::string text = sp::driver::DumpContext(ctx, pass) + "\n";
    if (path == "-") {
      if (several) std::cout << "[" << strategy << " after " << pass << "]\n";
      std::cout << text;
      return sp::Status::Ok();
    }
    std::string error;
    if (!WriteFile(path, text, &error)) return sp::InvalidArgument(error);
    Log(2, "wrote " + path);
    return sp::Status::Ok();
  };
}

// sramplan strategies: the table, each strategy with its pipeline.
int CmdStrategies(bool passes) {
  std::cout << "strategies (plan/verify --strategy NAME; 'all' runs the tensor-level group, or with --budget the "
               "budget group):\n";
  for (const auto& s : sp::driver::Strategies()) {
    std::string tags;
    auto tag = [&](bool on, const char* t) {
      if (on) tags += std::string(tags.empty() ? " [" : ", ") + t;
    };
    tag(s.all == sp::driver::AllGroup::kTensor, "all");
    tag(s.all == sp::driver::AllGroup::kBudget, "all with --budget");
    tag(s.needs_dram, "needs a DRAM level");
    tag(s.uses_budget, "--budget");
    tag(s.int8_only, "executes in int8 only");
    if (!tags.empty()) tags += "]";
    std::string pipeline;
    for (const auto& p : s.passes) pipeline += (pipeline.empty() ? "" : " -> ") + p;
    std::cout << "  " << s.name << tags << "\n      " << s.description << "\n      " << pipeline << "\n";
  }
  if (passes) {
    std::cout << "\npasses (name[:argument]; plan --dump-after NAME prints the context after it):\n";
    for (const auto& p : sp::driver::Passes()) std::cout << "  " << p.name << ": " << p.description << "\n";
  }
  return 0;
}

int CmdPlan(const ModelFlags& f, const PlanFlags& pf) {
  auto target = sp::target::LoadTarget(pf.target);
  if (!target.ok()) return Fail(target.status());
  if (pf.print_target) std::cout << sp::target::TargetToJson(*target) << "\n";
  auto chosen = ChooseStrategies(pf.strategy, pf.budget);
  if (!chosen.ok()) return Fail(chosen.status());
  const std::vector<std::string>& strategies = *chosen;
  const bool graph_stage = pf.dump_after == "import" || pf.dump_after == "canonicalize";
  if (pf.dump_after == "canonicalize") {
    auto canonical = sp::cli::WantCanonical(f.model, f.canonicalize, f.no_canonicalize);
    if (!canonical.ok()) return Fail(canonical.status());
    if (!*canonical)
      return Fail(sp::InvalidArgument("--dump-after canonicalize: the graph is planned as imported (" +
                                      std::string(f.no_canonicalize ? "--no-canonicalize" : "not an ONNX model") +
                                      "); add --canonicalize (or use --dump-after import)"));
  }
  if (!pf.dump_after.empty() && !graph_stage) {
    bool found = false;
    for (const auto& s : strategies)
      for (const auto& p : sp::driver::FindStrategy(s)->passes)
        found = found || p == pf.dump_after || p.substr(0, p.find(':')) == pf.dump_after;
    if (!found)
      return Fail(sp::InvalidArgument("--dump-after '" + pf.dump_after + "' is not a pass of " +
                                      (strategies.size() == 1 ? "strategy '" + strategies[0] + "'" : "these strategies") +
                                      "; sramplan strategies lists each pipeline"));
  }
  if (!pf.dump_all.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(pf.dump_all, ec);
    if (ec) return Fail(sp::InvalidArgument("cannot create --dump-all directory '" + pf.dump_all + "': " + ec.message()));
  }
  bool dumped = false;
  const sp::driver::AfterPass hook = DumpHook(pf, strategies.size() > 1, &dumped);
  // The graph passes before planning: --dump-after import|canonicalize prints the graph (the native
  // graph format, which `sramplan plan` reads back) and --dump-all writes graph.NN.STAGE.graph.json.
  int graph_stage_index = 0;
  GraphHook graph_hook = [&](const std::string& stage, const sp::ir::Graph& gr) -> sp::Status {
    const int index = graph_stage_index++;
    if (pf.dump_after == stage) {
      std::cout << sp::import::NativeGraphJson(gr) << "\n";
      dumped = true;
    }
    if (!pf.dump_all.empty()) {
      char num[16];
      std::snprintf(num, sizeof num, "%02d", index);
      const std::string path = pf.dump_all + "/graph." + num + "." + stage + ".graph.json";
      std::string error;
      if (!WriteFile(path, sp::import::NativeGraphJson(gr) + "\n", &error)) return sp::InvalidArgument(error);
      Log(2, "wrote " + path);
    }
    return sp::Status::Ok();
  };
  auto g = LoadModel(f, graph_hook);
  if (!g.ok()) return Fail(g.status());
  sp::driver::PlanOptions opts;
  opts.dtype_name = f.dtype;
  opts.batch = f.batch;
  opts.schedule = pf.schedule;
  ApplyBudgetFlags(pf.budget, &opts);
  std::vector<sp::plan::Plan> plans;
  for (const auto& s : strategies) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = sp::driver::RunStrategy(*g, *target, s, opts, hook);
    if (!p.ok()) return Fail(p.status());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Log(2, "strategy " + s + ": planned and verified in " + std::to_string(ms) + " ms");
    plans.push_back(std::move(p).value());
  }
  bool any_fits = false;
  for (const auto& p : plans) any_fits = any_fits || p.metrics.fits;
  if (sp::cli::IsTfliteFile(f.model)) {  // issue 20: what TFLite Micro needs, and the plan handed back to it
    const auto kernels =
        pf.tflm_kernels == "cmsis-nn" ? sp::driver::TflmKernels::kCmsisNn : sp::driver::TflmKernels::kReference;
    auto report = sp::cli::TflmArenaReport(f.model, kernels);
    if (!report.ok()) return Fail(report.status());
    std::cout << *report;
    if (!f.fold_pad && verbosity >= 1) {  // the vmcu patterns and segment kernels see through a folded PAD
      int pads = 0;
      for (const auto& op : g->ops()) {
        if (op.type != "Pad" || op.outputs.empty()) continue;
        const auto& readers = g->tensor(op.outputs[0]).consumers;
        bool convs = !readers.empty();
        for (auto r : readers) convs = convs && g->op(r).type == "Conv" && g->op(r).inputs[0] == op.outputs[0];
        pads += convs ? 1 : 0;
      }
      if (pads > 0)
        std::cout << "hint: " << pads << " PAD op" << (pads == 1 ? "" : "s")
                  << " feed only convolutions; --fold-pad makes them the convolutions' padding (TFLM keeps "
                     "them), so vmcu can fuse across them and the padded copies are never stored\n";
    }
    if (!pf.tflite_out.empty()) {
      if (plans.size() != 1) return Fail(sp::InvalidArgument("--tflite-out needs one --strategy, not 'all'"));
      auto wrote = sp::cli::WriteTfliteWithPlan(f.model, pf.tflite_out, *g, plans[0], kernels);
      if (!wrote.ok()) return Fail(wrote.status());
      std::cout << *wrote;
    }
  } else if (!pf.tflite_out.empty()) {
    return Fail(sp::InvalidArgument("--tflite-out needs a .tflite model; '" + f.model + "' is not one"));
  }
  if (plans.size() == 1) {
    const auto& p = plans[0];
    if (verbosity >= 1) std::cout << sp::report::PlanSummary(p);
    bool show_map = pf.map || (!pf.no_map && verbosity >= 1 && p.steps.size() <= 80);
    if (show_map) std::cout << sp::report::MemoryMap(p);
    else if (verbosity >= 1) std::cout << "  (memory map: " << p.steps.size() << " steps; pass --map to print it)\n";
    if (!p.metrics.fits) std::cout << sp::report::DoesNotFitDetail(p);
  } else {
    std::cout << sp::report::CompareTable(plans);
    if (pf.map)
      for (const auto& p : plans) std::cout << "\n[" << p.strategy << "]\n" << sp::report::MemoryMap(p);
    if (!any_fits) std::cout << "\nno strategy fits; the closest:\n" << sp::report::DoesNotFitDetail(plans.back());
  }
  std::string error;
  if (!pf.html.empty()) {
    if (!WriteFile(pf.html, sp::report::HtmlReport(plans), &error)) return Fail(sp::InvalidArgument(error));
    Log(1, "wrote " + pf.html);
  }
  if (!pf.json.empty()) {
    std::string text;
    if (plans.size() == 1) {
      text = sp::plan::PlanToJson(plans[0]);
    } else {
      text = sp::plan::PlansToJson(plans);
    }
    if (!WriteFile(pf.json, text + "\n", &error)) return Fail(sp::InvalidArgument(error));
    Log(1, "wrote " + pf.json);
  }
  if (!pf.csv_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(pf.csv_dir, ec);
    if (ec) return Fail(sp::InvalidArgument("cannot create --csv directory '" + pf.csv_dir + "': " + ec.message()));
    if (!WriteFile(pf.csv_dir + "/summary.csv", sp::report::SummaryCsv(plans), &error) ||
        !WriteFile(pf.csv_dir + "/per_layer.csv", sp::report::PerLayerCsv(*g, plans), &error))
      return Fail(sp::InvalidArgument(error));
    Log(1, "wrote " + pf.csv_dir + "/summary.csv and per_layer.csv");
    if (sp::plan::HasTiledGroups(plans)) {  // fusion strategies: one row per group
      if (!WriteFile(pf.csv_dir + "/groups.csv", sp::plan::GroupsCsv(plans), &error))
        return Fail(sp::InvalidArgument(error));
      Log(1, "wrote " + pf.csv_dir + "/groups.csv");
    }
  }
  return any_fits ? 0 : 2;
}

struct VerifyFlags {
  std::string target;
  std::string strategy = "all";
  std::string schedule = "model";
  uint64_t seed = sp::exec::kDefaultSeed;
  BudgetFlags budget;
  std::string html;  // issue 19: the HTML report of the verified plans
};

// Plans, runs the naive and the arena executor, compares outputs bit for bit and the off-chip bytes.
int CmdVerify(const ModelFlags& f, const VerifyFlags& vf) {
  auto target = sp::target::LoadTarget(vf.target);
  if (!target.ok()) return Fail(target.status());
  auto chosen = ChooseStrategies(vf.strategy, vf.budget);
  if (!chosen.ok()) return Fail(chosen.status());
  const std::vector<std::string>& strategies = *chosen;
  auto g = LoadModel(f);
  if (!g.ok()) return Fail(g.status());
  if (f.dtype != "float32" && f.dtype != "int8")
    return Fail(sp::Unsupported("verify executes float32 and int8 plans (pass --dtype int8 or --dtype float32), not " +
                                f.dtype));
  // float32: the model's data (or seeded values). int8: post-training quantisation calibrated on a
  // float32 run of the same model and seed (exec/quantize.h).
  sp::exec::ModelData float_data;
  std::optional<sp::exec::QuantizedModel> quant;
  sp::exec::ExecResult reference;
  if (f.dtype == "int8") {
    auto t0 = std::chrono::steady_clock::now();
    std::string how;  // .tflite: the file's own quantisation when it runs as stored (exec/quantize_file.h)
    auto q = sp::exec::QuantizeForVerify(*g, vf.seed, sp::cli::IsTfliteFile(f.model), &reference, &how);
    if (!q.ok()) return Fail(q.status());
    quant = std::move(q).value();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Log(1, "int8: " + how + " (" + std::to_string(static_cast<int>(ms)) + " ms)");
  } else {
    auto data = sp::exec::MakeModelData(*g, vf.seed);
    if (!data.ok()) return Fail(data.status());
    float_data = std::move(data).value();
  }
  const sp::exec::ModelData& data = quant ? quant->data : float_data;
  const sp::exec::QuantizedModel* qp = quant ? &*quant : nullptr;
  sp::driver::PlanOptions opts;
  opts.dtype_name = f.dtype;
  opts.batch = f.batch;
  opts.schedule = vf.schedule;
  ApplyBudgetFlags(vf.budget, &opts);
  int rc = 0;
  // The naive run depends only on the operator order: strategies with the same order share it.
  sp::analysis::Schedule naive_order;
  std::optional<sp::exec::ExecResult> naive;
  std::vector<sp::plan::Plan> verified;  // for --html
  sp::report::HtmlOptions html;
  for (const auto& s : strategies) {
    if (sp::driver::FindStrategy(s)->int8_only && f.dtype != "int8") {
      if (vf.strategy == "all") {
        std::cout << "verify " << s << ": skipped (its segment-aware kernels are int8; pass --dtype int8)\n";
        continue;
      }
      return Fail(sp::Unsupported(s + " plans run in int8 (the segment-aware kernels); pass --dtype int8"));
    }
    auto t0 = std::chrono::steady_clock::now();
    auto p = sp::driver::RunStrategy(*g, *target, s, opts);
    if (!p.ok()) return Fail(p.status());
    sp::analysis::Schedule order;
    for (const auto& st : p->steps)
      for (const auto& so : st.ops)
        for (const auto& op : g->ops())
          if (op.name == so.name) order.push_back(op.id);
    if (!naive || order != naive_order) {
      auto r = sp::exec::RunNaive(*g, order, data, qp);
      if (!r.ok()) return Fail(r.status());
      naive = std::move(r).value();
      naive_order = order;
      if (quant) {
        auto err = sp::exec::CompareWithReference(*g, *quant, *naive, reference);
        if (err.ok()) Log(1, "int8 outputs vs the float32 reference: " + err->Summary());
      }
    }
    auto arena = sp::exec::RunArena(*g, *p, data, qp);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!arena.ok()) {
      if (arena.status().code() != sp::StatusCode::kMismatch) return Fail(arena.status());
      std::cout << "verify " << s << ": MISMATCH: " << arena.status().message() << "\n";
      html.notes.push_back("verify " + s + ": MISMATCH: " + std::string(arena.status().message()));
      verified.push_back(std::move(p).value());
      rc = 3;
      continue;
    }
    std::string diff = sp::exec::Compare(*g, *naive, *arena, *p);
    for (const auto& note : arena->notes) std::cout << "verify " << s << ": " << note << "\n";
    if (!diff.empty()) {
      std::cout << "verify " << s << ": MISMATCH: " << diff << "\n";
      html.notes.push_back("verify " + s + ": MISMATCH: " + diff);
      verified.push_back(std::move(p).value());
      rc = 3;
      continue;
    }
    char line[256];
    std::snprintf(line, sizeof line, "verify %s: OK (%s, %d steps, arena %lld B, outputs bit-identical, off-chip read %lld / write %lld B as planned, %zu transfers) in %.0f ms\n",
                  s.c_str(), f.dtype.c_str(), arena->steps, static_cast<long long>(p->metrics.arena_bytes),
                  static_cast<long long>(arena->offchip_read_bytes), static_cast<long long>(arena->offchip_write_bytes),
                  p->transfers.size(), ms);
    std::cout << line;
    html.notes.push_back(std::string(line, std::strlen(line) - 1));
    verified.push_back(std::move(p).value());
  }
  if (!vf.html.empty()) {
    std::string error;
    if (!WriteFile(vf.html, sp::report::HtmlReport(verified, html), &error)) return Fail(sp::InvalidArgument(error));
    Log(1, "wrote " + vf.html);
  }
  return rc;
}

struct PlaceFlags {
  std::string file;
  std::string capacity;
  double time_limit_s = 10;
  std::string out;
  std::string html;  // issue 19: the placement as an HTML report
};

// A placed CSV problem as a plan of one level ("arena") for the HTML report: one step per time
// step of the problem (the compressed lower/upper values), one buffer per request (named by its id).
sp::plan::Plan PlacementAsPlan(const std::string& file, const sp::placement::PlacementProblem& problem,
                               const sp::placement::OptimalResult& r, int64_t capacity) {
  sp::plan::Plan p;
  p.model = file;
  p.target = "arena of " + std::to_string(capacity) + " B";
  p.strategy = r.method;
  p.arena_level = "arena";
  int steps = 0;
  for (const auto& q : problem.requests) steps = std::max(steps, q.last_step + 1);
  p.steps.resize(steps);
  for (int s = 0; s < steps; ++s) p.steps[s].index = s;
  for (size_t i = 0; i < problem.requests.size(); ++i) {
    const auto& q = problem.requests[i];
    sp::plan::Buffer b;
    b.tensor = "id " + std::to_string(problem.ids[i]);
    b.level = "arena";
    b.offset = r.placement.offsets[i];
    b.bytes = q.bytes;
    b.first_step = q.first_step;
    b.last_step = q.last_step;
    p.buffers.push_back(b);
  }
  sp::plan::Level level{.name = "arena", .kind = "sram", .capacity = capacity,
                        .used_bytes = r.placement.arena_bytes, .lower_bound_bytes = r.lower_bound,
                        .holds_activations = true};
  p.levels.push_back(level);
  p.metrics.arena_bytes = r.placement.arena_bytes;
  p.metrics.lower_bound_bytes = r.lower_bound;
  p.metrics.fits = r.fits_capacity;
  return p;
}

// A placement problem from CSV (id,lower,upper,size; half-open lifetimes): best-of portfolio plus the
// exact search. Exit 0 when the arena fits the capacity, 2 when it does not, 1 on bad input.
int CmdPlace(const PlaceFlags& f) {
  // The validators on --capacity and --time-limit have checked both.
  sp::StatusOr<int64_t> parsed = sp::ParseSize(f.capacity);
  if (!parsed.ok()) return Fail(parsed.status());
  const int64_t capacity = *parsed;
  // Placement CSVs are text of at most 256 MiB (MiniMalloc's largest instances are a few MB); a NUL
  // byte in the first 4 KiB (a binary, /dev/zero) refuses the file at once.
  std::string text;
  sp::Status read = sp::ReadFileBounded(f.file, int64_t{256} << 20, &text, [&](std::string_view head, int64_t*) {
    size_t nul = head.find('\0');
    if (nul == std::string_view::npos) return sp::Status::Ok();
    return sp::InvalidArgument("'" + f.file + "' is not a CSV text file: byte " + std::to_string(nul) + " is NUL");
  });
  if (!read.ok()) return Fail(read);
  auto problem = sp::placement::ParseProblemCsv(text, f.file);
  if (!problem.ok()) return Fail(problem.status());
  sp::placement::OptimalOptions o;
  o.time_limit_s = f.time_limit_s;
  o.capacity = capacity;
  Log(1, "placing " + std::to_string(problem->requests.size()) + " buffers from " + f.file + " (time limit " +
             std::to_string(f.time_limit_s) + " s)");
  sp::placement::OptimalResult r = sp::placement::PlaceBestOf(problem->requests, o);
  char line[1024];
  std::snprintf(line, sizeof line,
                "%s: %zu buffers, lower bound %lld B, arena %lld B (%s), capacity %lld B: %s; %s; %.3f s, %lld nodes\n",
                f.file.c_str(), problem->requests.size(), static_cast<long long>(r.lower_bound),
                static_cast<long long>(r.placement.arena_bytes), r.method.c_str(), static_cast<long long>(capacity),
                r.fits_capacity ? "FITS" : "DOES NOT FIT",
                (sp::ProofText(static_cast<double>(r.placement.arena_bytes), static_cast<double>(r.proved_lower_bound)) +
                 (r.hit_limit ? " (search stopped at the limit)" : ""))
                    .c_str(),
                r.seconds, static_cast<long long>(r.nodes));
  std::cout << line;
  if (!f.out.empty()) {
    sp::Status st = sp::placement::WriteSolutionCsvFile(f.out, *problem, r.placement);
    if (!st.ok()) return Fail(st);
    Log(1, "wrote " + f.out);
  }
  if (!f.html.empty()) {
    sp::report::HtmlOptions o;
    o.title = f.file + " placed in " + std::to_string(capacity) + " B";
    o.notes.push_back(line);
    std::string error;
    if (!WriteFile(f.html, sp::report::HtmlReport({PlacementAsPlan(f.file, *problem, r, capacity)}, o), &error))
      return Fail(sp::InvalidArgument(error));
    Log(1, "wrote " + f.html);
  }
  return r.fits_capacity ? 0 : 2;
}

// Plan files are at most 1 GiB (a plan of 100,000 ops is a few tens of MB).
constexpr int64_t kMaxPlanFileBytes = int64_t{1} << 30;

// Verifies every plan of a plan file (one plan, or the several that plan --strategy all writes).
// Exit: the worst verdict over the plans (3 invalid > 2 does not fit > 0 valid and fits).
int CmdCheckPlan(const std::string& path) {
  std::string text;
  sp::Status read = sp::ReadFileBounded(path, kMaxPlanFileBytes, &text, [&](std::string_view head, int64_t*) {
    return sp::CheckJsonObjectHead(head, "plan '" + path + "'");
  });
  if (!read.ok()) return Fail(read);
  bool multi = false;
  auto plans = sp::plan::PlansFromJson(text, &multi);
  if (!plans.ok()) return Fail(plans.status().WithContext("reading plan '" + path + "'"));
  int worst = 0;
  for (size_t i = 0; i < plans->size(); ++i) {
    const sp::plan::Plan& p = (*plans)[i];
    const std::string name =
        multi ? "plan '" + path + "' plans[" + std::to_string(i) + "] (strategy " + p.strategy + ")"
              : "plan '" + path + "'";
    sp::plan::VerifyResult r = sp::plan::VerifyPlan(p);
    if (!r.ok()) {
      std::cout << name << " is INVALID (" << r.errors.size() << " errors):\n" << r.Summary(20);
      worst = 3;
    } else if (!r.fits()) {
      std::cout << name << " is valid but DOES NOT FIT:\n" << r.Summary(20);
      worst = std::max(worst, 2);
    } else {
      std::cout << name << " is valid and fits (" << p.steps.size() << " steps, " << p.buffers.size()
                << " buffers)\n";
    }
  }
  if (multi) {
    const char* verdict = worst == 3 ? "at least one plan is INVALID" : worst == 2 ? "at least one plan does not fit"
                                                                               : "every plan is valid and fits";
    std::cout << "plan '" << path << "': " << plans->size() << " plans; " << verdict << "\n";
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sramplan: fit DNNs into small on-chip memories, and prove it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sramplan 0.1.0");
  bool quiet = false, verbose = false;
  app.add_flag("-q,--quiet", quiet, "print only results (no summary, no progress)");
  app.add_flag("-v,--verbose", verbose, "print progress and timings to stderr");

  std::string print_target;
  auto* targets = app.add_subcommand("targets", "list the bundled targets, or print one resolved");
  targets->add_option("--print", print_target, "print the resolved target (preset, file or sram:SIZE) as JSON");

  ModelFlags inspect_flags;
  auto* inspect = app.add_subcommand("inspect", "per-op table: type, output shape, bytes, MACs, weights");
  AddModelFlags(inspect, &inspect_flags);

  ModelFlags plan_flags;
  PlanFlags pf;
  auto* plan = app.add_subcommand("plan", "plan where every tensor lives; exit 0 fits, 2 does not fit");
  AddModelFlags(plan, &plan_flags);
  plan->add_option("--target", pf.target, "preset name (sramplan targets), target JSON file, or sram:SIZE")->required();
  std::string strategies_help = "strategy, or 'all' to compare them (sramplan strategies shows each pipeline):";
  for (const auto& s : sp::driver::Strategies()) strategies_help += "\n  " + s.name + ": " + s.description;
  plan->add_option("--strategy", pf.strategy, strategies_help);
  plan->add_option("--dump-after", pf.dump_after,
                   "print the planning context (order, liveness, requests, placement, plan so far) as JSON after "
                   "this pass of the pipeline (sramplan strategies lists them); 'import' and 'canonicalize' print "
                   "the graph after those graph passes, in the native graph format `plan` reads back");
  plan->add_option("--dump-all", pf.dump_all,
                   "write the planning context after every pass into this directory "
                   "(<strategy>.<NN>.<pass>.json), and the graph after import and --canonicalize "
                   "(graph.<NN>.<stage>.graph.json)");
  plan->add_option("--schedule", pf.schedule,
                   "operator order: model (as given, default) or minpeak (min-peak-memory order, exact DP)")
      ->check(CLI::IsMember({"model", "minpeak"}));
  plan->add_option("--json", pf.json, "write the plan (docs/plan-format.md) to this file");
  plan->add_option("--csv", pf.csv_dir,
                   "write summary.csv and per_layer.csv (and groups.csv for fusion strategies) into this directory");
  plan->add_flag("--map", pf.map, "always print the ASCII memory map");
  plan->add_flag("--no-map", pf.no_map, "never print the ASCII memory map");
  plan->add_flag("--print-target", pf.print_target, "print the resolved target as JSON first");
  plan->add_option("--tflite-out", pf.tflite_out,
                   ".tflite models: write the model with this plan as TFLite Micro's offline memory plan "
                   "(OfflineMemoryAllocation metadata) to this file");
  plan->add_option("--tflm-kernels", pf.tflm_kernels,
                   ".tflite models: kernels whose scratch buffers tflm_arena_bytes counts: reference (default) "
                   "or cmsis-nn")
      ->check(CLI::IsMember({"reference", "cmsis-nn"}));
  AddBudgetFlags(plan, &pf.budget);
  plan->add_option("--html", pf.html,
                   "write a self-contained HTML report (SVG memory maps, peak, spills, strategy comparison) to this file");

  ModelFlags verify_flags;
  verify_flags.dtype = "int8";
  VerifyFlags vf;
  auto* verify = app.add_subcommand("verify", "plan, then run the model naively and inside the plan's arena; "
                                              "exit 0 when outputs match bit for bit, 3 on any mismatch");
  AddModelFlags(verify, &verify_flags);
  verify->add_option("--target", vf.target, "preset name, target JSON file, or sram:SIZE")->required();
  verify->add_option("--strategy", vf.strategy, "strategy or all (default all; sramplan strategies lists them)");
  verify->add_option("--schedule", vf.schedule, "model or minpeak")->check(CLI::IsMember({"model", "minpeak"}));
  verify->add_option("--seed", vf.seed, "seed of the generated weights and inputs");
  AddBudgetFlags(verify, &vf.budget);
  verify->add_option("--html", vf.html, "write the HTML report of the verified plans to this file");

  PlaceFlags place_flags;
  auto* place = app.add_subcommand("place", "place buffers of a CSV problem (id,lower,upper,size; half-open "
                                            "lifetimes) in an arena: exit 0 fits, 2 does not");
  place->add_option("file", place_flags.file, "problem CSV")->required();
  place->add_option("--capacity", place_flags.capacity, "arena capacity in bytes (e.g. 1048576 or 1MiB)")
      ->required()
      ->check(sp::cli::kPositiveSize);
  place->add_option("--time-limit", place_flags.time_limit_s, "seconds for the exact search (default 10)")
      ->check(sp::cli::kTimeLimit);
  place->add_option("--out", place_flags.out, "write the solution CSV (id,lower,upper,size,offset)");
  place->add_option("--html", place_flags.html, "write the placement as an HTML report (address-by-step chart)");

  bool list_passes = false;
  auto* strategies = app.add_subcommand("strategies", "list the strategies, each with its pipeline of passes");
  strategies->add_flag("--passes", list_passes, "also list every pass with what it does");

  std::string plan_file;
  auto* check = app.add_subcommand("check-plan", "run the independent verifier on a plan JSON file");
  auto* codegen = sp::cli::AddCodegenCommand(&app);
  auto* modules = sp::cli::AddModulesCommand(&app);
  auto* block = sp::cli::AddBlockCommand(&app);
  check->add_option("plan", plan_file,
                    "plan.json written by sramplan plan --json (one plan, or the several of --strategy all: "
                    "each is checked; exit 3 if any is invalid, else 2 if any does not fit)")
      ->required();

  for (auto* sub : {targets, inspect, plan, verify, place, check, codegen, strategies, modules, block}) {
    sub->add_flag("-q,--quiet", quiet, "print only results");
    sub->add_flag("-v,--verbose", verbose, "print progress and timings to stderr");
  }

  if (argc >= 2 && argv[1][0] != '-') {
    std::string cmd = argv[1];
    bool known = false;
    for (auto* sub : {targets, inspect, plan, verify, place, check, codegen, strategies, modules, block})
      known = known || sub->get_name() == cmd;
    if (!known) {
      std::cerr << "error: unknown command '" << cmd << "'; commands: targets, strategies, inspect, plan, verify, place, check-plan, "
                << "codegen, modules, block "
                << "(sramplan --help)\n";
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  verbosity = quiet ? 0 : verbose ? 2 : 1;
  if (quiet) sp::SetProgressEnabled(false);  // -q: results only
  if (*targets) return CmdTargets(print_target);
  if (*strategies) return CmdStrategies(list_passes);
  if (*inspect) return CmdInspect(inspect_flags);
  if (*plan) return CmdPlan(plan_flags, pf);
  if (*verify) return CmdVerify(verify_flags, vf);
  if (*place) return CmdPlace(place_flags);
  if (*check) return CmdCheckPlan(plan_file);
  if (*codegen) return sp::cli::RunCodegenCommand(verbosity);
  if (*modules) return sp::cli::RunModulesCommand();
  if (*block) return sp::cli::RunBlockCommand(verbosity);
  return 1;
}
