// Wall time of `sramplan verify` on every bundled model: for each model, dtype and tensor-level
// strategy on a target (default stm32f411re), plan (RunStrategy, which includes PlanVerifier), run
// the NaiveExecutor in the plan's step order and the ArenaExecutor inside the plan, and compare
// (outputs bit for bit, off-chip bytes equal to the plan's).
// Writes bench/results/verify_zoo.json and verify_zoo.md (or --out DIR).
//
//   bench_verify_zoo [--models SUBSTR[,SUBSTR...]] [--dtype float32|int8|both] [--target T]
//                    [--rerun-naive] [--out DIR]
//
// The NaiveExecutor is deterministic, so when a strategy's step order equals one already run for
// the same model and dtype, its naive result is reused (the row says so and shows the time of the
// run it reuses); --rerun-naive runs it for every strategy, as `sramplan verify` does.
// dtypes the executors do not run yet (StatusCode::kUnsupported) are recorded as "unsupported".
#include "bench_util.h"
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "import/import.h"

#ifndef SRAMPLAN_BUILD_TYPE
#define SRAMPLAN_BUILD_TYPE "unknown"
#endif

namespace fs = std::filesystem;
namespace sp = sramplan;
using Clock = std::chrono::steady_clock;

namespace {

using sramplan::bench::Cores;
using sramplan::bench::CpuModel;
using sramplan::bench::LoadAverage;
using sramplan::bench::Machine;





double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string Fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

// "unsupported" for kUnsupported, "mismatch" for kMismatch, "error" otherwise.
std::string StatusWord(const sp::Status& s) {
  switch (s.code()) {
    case sp::StatusCode::kUnsupported: return "unsupported";
    case sp::StatusCode::kMismatch: return "mismatch";
    default: return "error";
  }
}

std::string MdEscape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  if (out.size() > 160) out = out.substr(0, 157) + "...";
  return out;
}

struct Row {
  std::string model, dtype, strategy;
  int ops = 0;
  std::string status = "ok";  // ok, mismatch, unsupported, error
  std::string stage;          // where a failure happened: import, data, plan, naive, arena, compare
  std::string message;
  double plan_ms = 0, naive_ms = 0, arena_ms = 0;
  bool naive_reused = false;
  int steps = 0;
  int64_t arena_bytes = 0;
  bool fits = false;
  int64_t plan_offchip_read = 0, plan_offchip_write = 0;
  int64_t exec_offchip_read = 0, exec_offchip_write = 0;
  bool bit_exact = false;

  double VerifyMs() const { return plan_ms + naive_ms + arena_ms; }

  nlohmann::ordered_json Json() const {
    nlohmann::ordered_json j = {{"model", model}, {"dtype", dtype}, {"strategy", strategy}, {"ops", ops},
                                {"status", status}};
    if (!stage.empty()) j["failed_at"] = stage;
    if (!message.empty()) j["message"] = message;
    j["plan_ms"] = plan_ms;
    j["naive_ms"] = naive_ms;
    j["naive_reused"] = naive_reused;
    j["arena_ms"] = arena_ms;
    j["verify_ms"] = VerifyMs();
    j["steps"] = steps;
    j["arena_bytes"] = arena_bytes;
    j["fits"] = fits;
    j["bit_exact"] = bit_exact;
    j["plan_offchip_read_bytes"] = plan_offchip_read;
    j["plan_offchip_write_bytes"] = plan_offchip_write;
    j["exec_offchip_read_bytes"] = exec_offchip_read;
    j["exec_offchip_write_bytes"] = exec_offchip_write;
    return j;
  }
};

struct Options {
  std::vector<std::string> model_filters;
  std::vector<std::string> dtypes = {"float32"};
  std::string target = "stm32f411re";
  std::string out_dir;
  bool rerun_naive = false;
};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--models") {
      if (!value(&v)) return false;
      std::stringstream ss(v);
      std::string part;
      while (std::getline(ss, part, ','))
        if (!part.empty()) o->model_filters.push_back(part);
    } else if (a == "--dtype") {
      if (!value(&v)) return false;
      if (v == "both") o->dtypes = {"float32", "int8"};
      else if (v == "float32" || v == "int8") o->dtypes = {v};
      else return false;
    } else if (a == "--target") {
      if (!value(&o->target)) return false;
    } else if (a == "--out") {
      if (!value(&o->out_dir)) return false;
    } else if (a == "--rerun-naive") {
      o->rerun_naive = true;
    } else {
      return false;
    }
  }
  return true;
}

// Runs the strategies of one model in one dtype; appends one row per strategy.
void VerifyModel(const std::string& path, const std::string& dtype, const sp::target::Target& target,
                 bool rerun_naive, std::vector<Row>* rows) {
  const std::string name = fs::path(path).filename().string();
  Row base;
  base.model = name;
  base.dtype = dtype;
  auto fail_all = [&](const std::string& stage, const sp::Status& s) {
    for (const auto& st : sp::driver::StrategiesOf(sp::driver::Family::kTensor)) {
      Row r = base;
      r.strategy = st.name;
      r.status = StatusWord(s);
      r.stage = stage;
      r.message = s.message();
      rows->push_back(r);
    }
  };
  auto g = sp::import::ImportModel(path, {});
  if (!g.ok()) return fail_all("import", g.status());
  sp::ir::DataType dt;
  if (!sp::ir::ParseDataType(dtype, &dt)) return fail_all("import", sp::InvalidArgument("unknown dtype " + dtype));
  sp::ir::ApplyDtype(*g, dt);
  base.ops = g->num_ops();
  auto data = sp::exec::MakeModelData(*g, sp::exec::kDefaultSeed);
  if (!data.ok()) return fail_all("data", data.status());
  std::unordered_map<std::string, sp::ir::OpId> op_by_name;
  for (const auto& op : g->ops()) op_by_name.emplace(op.name, op.id);

  sp::driver::PlanOptions opts;
  opts.dtype_name = dtype;
  // Naive runs already done for this model and dtype, by schedule.
  struct NaiveRun {
    sp::analysis::Schedule order;
    sp::exec::ExecResult result;
    double ms;
  };
  std::vector<NaiveRun> naive_runs;
  for (const auto& st : sp::driver::StrategiesOf(sp::driver::Family::kTensor)) {
    Row r = base;
    r.strategy = st.name;
    std::cerr << "  " << name << " " << dtype << " " << st.name << ": " << std::flush;
    auto t0 = Clock::now();
    auto p = sp::driver::RunStrategy(*g, target, st.name, opts);
    r.plan_ms = MsSince(t0);
    if (!p.ok()) {
      r.status = StatusWord(p.status());
      r.stage = "plan";
      r.message = p.status().message();
      std::cerr << r.status << " (plan): " << r.message << "\n";
      rows->push_back(r);
      continue;
    }
    r.steps = static_cast<int>(p->steps.size());
    r.arena_bytes = p->metrics.arena_bytes;
    r.fits = p->metrics.fits;
    r.plan_offchip_read = p->metrics.offchip_read_bytes;
    r.plan_offchip_write = p->metrics.offchip_write_bytes;
    sp::analysis::Schedule order;
    for (const auto& step : p->steps)
      for (const auto& so : step.ops) {
        auto it = op_by_name.find(so.name);
        if (it != op_by_name.end()) order.push_back(it->second);
      }
    const sp::exec::ExecResult* naive = nullptr;
    if (!rerun_naive)
      for (const auto& nr : naive_runs)
        if (nr.order == order) {
          naive = &nr.result;
          r.naive_ms = nr.ms;
          r.naive_reused = true;
        }
    if (naive == nullptr) {
      auto t1 = Clock::now();
      auto n = sp::exec::RunNaive(*g, order, *data);
      r.naive_ms = MsSince(t1);
      if (!n.ok()) {
        r.status = StatusWord(n.status());
        r.stage = "naive";
        r.message = n.status().message();
        std::cerr << r.status << " (naive): " << r.message << "\n";
        rows->push_back(r);
        continue;
      }
      naive_runs.push_back({order, std::move(n).value(), r.naive_ms});
      naive = &naive_runs.back().result;
    }
    auto t2 = Clock::now();
    auto arena = sp::exec::RunArena(*g, *p, *data);
    r.arena_ms = MsSince(t2);
    if (!arena.ok()) {
      r.status = StatusWord(arena.status());
      r.stage = "arena";
      r.message = arena.status().message();
      std::cerr << r.status << " (arena): " << r.message << "\n";
      rows->push_back(r);
      continue;
    }
    r.exec_offchip_read = arena->offchip_read_bytes;
    r.exec_offchip_write = arena->offchip_write_bytes;
    std::string diff = sp::exec::Compare(*g, *naive, *arena, *p);
    if (!diff.empty()) {
      r.status = "mismatch";
      r.stage = "compare";
      r.message = diff;
    } else {
      r.bit_exact = true;
    }
    std::cerr << r.status << " (plan " << Fixed(r.plan_ms, 1) << " ms, naive " << Fixed(r.naive_ms, 1)
              << (r.naive_reused ? " ms reused" : " ms") << ", arena " << Fixed(r.arena_ms, 1) << " ms)"
              << (diff.empty() ? "" : ": " + diff) << "\n";
    rows->push_back(r);
  }
}

void WriteResults(const Options& o, const std::vector<Row>& rows, const std::vector<std::string>& models,
                  double total_s, bool complete, const std::string& load_start) {
  const std::string machine = Machine();
  std::ostringstream md;
  md << "# `verify` on the bundled zoo\n\n"
     << "Machine: " << machine << ". Build: " << SRAMPLAN_BUILD_TYPE << ". Target " << o.target
     << ", batch 1, seed " << sp::exec::kDefaultSeed << ", schedule = model order. Load average at start: "
     << load_start << " (shared machine: times are wall clock and noisy).\n\n"
     << "Per strategy: `plan` = RunStrategy (planning + PlanVerifier), `naive` = NaiveExecutor in the plan's "
     << "step order, `arena` = ArenaExecutor inside the plan; `verify` = their sum (what `sramplan verify "
     << "--strategy S` spends after import). "
     << (o.rerun_naive ? "The naive run was repeated for every strategy."
                       : "A naive run whose step order equals an earlier strategy's is reused (marked *; its "
                         "time is the reused run's and is counted in `verify`).")
     << " `bit-exact` = outputs identical and the arena run's off-chip bytes equal the plan's.\n\n";
  // Summary: one line per model and dtype.
  md << "## Summary\n\n| model | dtype | ops | strategies bit-exact | naive run (ms) | arena runs (ms, min-max) | "
        "verify all strategies (ms) | status |\n|---|---|---:|---|---:|---|---:|---|\n";
  std::map<std::pair<std::string, std::string>, std::vector<const Row*>> groups;
  std::vector<std::pair<std::string, std::string>> group_order;
  for (const Row& r : rows) {
    auto key = std::make_pair(r.model, r.dtype);
    if (!groups.count(key)) group_order.push_back(key);
    groups[key].push_back(&r);
  }
  int n_ok = 0, n_mismatch = 0, n_unsupported = 0, n_error = 0;
  for (const auto& key : group_order) {
    const auto& g = groups[key];
    int exact = 0;
    double naive_ms = 0, amin = -1, amax = 0, verify = 0;
    std::string status = "ok";
    for (const Row* r : g) {
      if (r->bit_exact) ++exact;
      if (!r->naive_reused && r->naive_ms > 0 && naive_ms == 0) naive_ms = r->naive_ms;
      if (r->status == "ok") {
        amin = amin < 0 ? r->arena_ms : std::min(amin, r->arena_ms);
        amax = std::max(amax, r->arena_ms);
      }
      verify += r->VerifyMs();
      if (r->status != "ok" && status == "ok") status = r->status + " (" + r->stage + "): " + r->message;
      if (r->status == "ok") ++n_ok;
      else if (r->status == "mismatch") ++n_mismatch;
      else if (r->status == "unsupported") ++n_unsupported;
      else ++n_error;
    }
    md << "| " << key.first << " | " << key.second << " | " << g.front()->ops << " | " << exact << "/" << g.size()
       << " | " << (naive_ms > 0 ? Fixed(naive_ms, 1) : "-") << " | "
       << (amin >= 0 ? Fixed(amin, 1) + " - " + Fixed(amax, 1) : "-") << " | " << Fixed(verify, 1) << " | "
       << MdEscape(status) << " |\n";
  }
  md << "\n## Per strategy\n\n| model | dtype | strategy | steps | arena bytes | fits | plan (ms) | naive (ms) | "
        "arena (ms) | verify (ms) | off-chip read / write (B) | bit-exact |\n"
        "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|\n";
  for (const Row& r : rows) {
    md << "| " << r.model << " | " << r.dtype << " | " << r.strategy << " | " << r.steps << " | " << r.arena_bytes
       << " | " << (r.fits ? "yes" : "no") << " | " << Fixed(r.plan_ms, 1) << " | " << Fixed(r.naive_ms, 1)
       << (r.naive_reused ? "*" : "") << " | " << Fixed(r.arena_ms, 1) << " | " << Fixed(r.VerifyMs(), 1) << " | "
       << (r.stage.empty() || r.stage == "compare"
               ? std::to_string(r.exec_offchip_read) + " / " + std::to_string(r.exec_offchip_write)
               : std::string("-"))
       << " | "
       << (r.bit_exact ? "yes" : r.status + " (" + r.stage + ")") << " |\n";
  }
  std::ostringstream tail;
  tail << "\n" << (complete ? "" : "PARTIAL (run still in progress or interrupted). ") << rows.size()
       << " runs over " << models.size() << " models: " << n_ok << " bit-exact, " << n_mismatch << " mismatch, "
       << n_unsupported << " unsupported, " << n_error << " error. Total wall time " << Fixed(total_s, 1)
       << " s (including import and model data).\n";
  md << tail.str();
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const Row& r : rows) results.push_back(r.Json());
  nlohmann::ordered_json doc = {{"benchmark", "verify_zoo"},
                                {"machine", machine},
                                {"cpu", CpuModel()},
                                {"cores", Cores()},
                                {"build", SRAMPLAN_BUILD_TYPE},
                                {"target", o.target},
                                {"dtypes", o.dtypes},
                                {"rerun_naive", o.rerun_naive},
                                {"seed", sp::exec::kDefaultSeed},
                                {"load_average_start", load_start},
                                {"load_average_end", LoadAverage()},
                                {"complete", complete},
                                {"total_s", total_s},
                                {"counts", {{"ok", n_ok}, {"mismatch", n_mismatch}, {"unsupported", n_unsupported},
                                            {"error", n_error}}},
                                {"results", results}};
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  std::ofstream(o.out_dir + "/verify_zoo.json") << doc.dump(1) << "\n";
  std::ofstream(o.out_dir + "/verify_zoo.md") << md.str();
  if (complete) std::cout << md.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = SRAMPLAN_SOURCE_DIR;
  Options o;
  o.out_dir = root + "/bench/results";
  if (!ParseArgs(argc, argv, &o)) {
    std::cerr << "usage: bench_verify_zoo [--models SUBSTR[,SUBSTR...]] [--dtype float32|int8|both] "
                 "[--target T] [--rerun-naive] [--out DIR]\n";
    return 1;
  }
  auto target = sp::target::LoadTarget(o.target);
  if (!target.ok()) {
    std::cerr << "error: " << target.status().message() << "\n";
    return 1;
  }
  std::vector<std::string> models;
  for (const char* dir : {"models/onnx", "models/mcunet_blocks"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root + "/" + dir, ec)) {
      std::string p = e.path().string();
      if (!p.ends_with(".onnx") && !p.ends_with(".graph.json")) continue;
      std::string file = e.path().filename().string();
      bool keep = o.model_filters.empty();
      for (const auto& f : o.model_filters) keep = keep || file.find(f) != std::string::npos;
      if (keep) models.push_back(p);
    }
  }
  std::sort(models.begin(), models.end());
  if (models.empty()) {
    std::cerr << "no model matches --models\n";
    return 1;
  }
  const std::string load_start = LoadAverage();
  std::vector<Row> rows;
  auto t0 = Clock::now();
  for (const auto& path : models) {
    for (const auto& dtype : o.dtypes) {
      std::cerr << fs::path(path).filename().string() << " (" << dtype << ")\n";
      VerifyModel(path, dtype, *target, o.rerun_naive, &rows);
    }
    WriteResults(o, rows, models, MsSince(t0) / 1000.0, false, load_start);  // partial results survive a kill
  }
  WriteResults(o, rows, models, MsSince(t0) / 1000.0, true, load_start);
  std::cerr << "wrote " << o.out_dir << "/verify_zoo.json and verify_zoo.md\n";
  bool any_mismatch = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.status == "mismatch"; });
  return any_mismatch ? 3 : 0;
}
