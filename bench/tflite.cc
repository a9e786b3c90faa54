// Issue 20: the int8 .tflite reference models (../shared/reference/tflite) under every tensor-level
// strategy, beside what real TFLite Micro's planner and Arm Vela need for them (tflm_arena.json).
// For each model: TFLM's planned head predicted from the file (driver::PredictTflmArena), then every
// strategy of the table's tensor-level group planned on sram:4MiB in int8 and verified by execution
// (NaiveExecutor in the plan's order vs ArenaExecutor inside the plan: outputs bit for bit and the
// off-chip bytes the plan predicted), with the model's own (dequantised) weights and sramplan's
// int8 quantisation calibrated on them.
// Writes bench/results/tflite.json and tflite.md (or --out DIR).
//
//   bench_tflite [--reference DIR] [--out DIR]
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_util.h"
#include "driver/strategy.h"
#include "driver/tflm_arena.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "import/tflite_model.h"
#include "target/target.h"

namespace fs = std::filesystem;
namespace sp = sramplan;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Reference(const std::string& given) {
  if (!given.empty()) return given;
  for (const std::string& c : {std::string(SRAMPLAN_SOURCE_DIR) + "/../shared/reference/tflite",
                               std::string(SRAMPLAN_SOURCE_DIR) + "/../../shared/reference/tflite"})
    if (fs::exists(c + "/tflm_arena.json")) return c;
  return "";
}

// Plans `strategy` and verifies it by execution; "ok" or why not.
nlohmann::json RunOne(const sp::ir::Graph& g, const sp::target::Target& t, const std::string& strategy,
                      const sp::exec::QuantizedModel& q) {
  nlohmann::json row = {{"strategy", strategy}};
  auto t0 = std::chrono::steady_clock::now();
  auto p = sp::driver::RunStrategy(g, t, strategy, {});
  if (!p.ok()) {
    row["status"] = "plan failed: " + p.status().message();
    return row;
  }
  row["arena_bytes"] = p->metrics.arena_bytes;
  row["lower_bound_bytes"] = p->metrics.lower_bound_bytes;
  sp::analysis::Schedule order;
  for (const auto& st : p->steps)
    for (const auto& so : st.ops)
      for (const auto& op : g.ops())
        if (op.name == so.name) order.push_back(op.id);
  auto naive = sp::exec::RunNaive(g, order, q.data, &q);
  auto arena = sp::exec::RunArena(g, *p, q.data, &q);
  if (!naive.ok() || !arena.ok()) {
    row["status"] = "execution failed: " + (naive.ok() ? arena.status().message() : naive.status().message());
    return row;
  }
  const std::string diff = sp::exec::Compare(g, *naive, *arena, *p);
  row["verified"] = diff.empty();
  row["status"] = diff.empty() ? "ok" : "MISMATCH: " + diff;
  row["ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results", ref_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--out") out_dir = argv[i + 1];
    else if (a == "--reference") ref_dir = argv[i + 1];
  }
  ref_dir = Reference(ref_dir);
  if (ref_dir.empty()) {
    std::cerr << "reference models not found (pass --reference DIR holding tflm_arena.json)\n";
    return 1;
  }
  const nlohmann::json ref = nlohmann::json::parse(ReadAll(ref_dir + "/tflm_arena.json"));
  auto target = sp::target::LoadTarget("sram:4MiB");
  if (!target.ok()) return 1;
  const std::vector<std::string> strategies = sp::driver::StrategyNames(sp::driver::AllGroup::kTensor);
  nlohmann::json doc = {{"machine", sp::bench::Machine()}, {"target", "sram:4MiB"}, {"dtype", "int8"},
                        {"reference", "tflm_arena.json (" + ref["_about"].get<std::string>() + ")"}};
  std::string md = "# .tflite models: sramplan's strategies beside TFLite Micro and Arm Vela\n\n";
  md += "Machine: " + sp::bench::Machine() + ". `bench_tflite` (bench/tflite.cc) on the reference models of "
        "`../shared/reference/tflite/`; target sram:4MiB, int8, batch 1. Peers' figures from `tflm_arena.json` "
        "(real TFLM's planner head `planned_bytes`; Vela 3.10.0 SRAM on an Ethos-U55 with --optimise Size / "
        "Performance). `TFLM (predicted)` is sramplan's prediction of TFLM's head from the file. Every plan is "
        "verified by execution (naive vs arena run, outputs bit for bit, off-chip bytes as planned) with the "
        "model's own weights (dequantised, then sramplan's int8 calibration).\n\n";
  md += "| model | TFLM planned_bytes | TFLM (predicted) | Vela Size | Vela Perf |";
  for (const auto& s : strategies) md += " " + s + " |";
  md += " all verified |\n|---|---:|---:|---:|---:|";
  for (size_t k = 0; k < strategies.size(); ++k) md += "---:|";
  md += "---|\n";
  int failures = 0;
  for (const auto& [name, row] : ref["models"].items()) {
    const std::string path = ref_dir + "/" + name + ".tflite";
    const std::string bytes = ReadAll(path);
    nlohmann::json m = {{"model", name}, {"tflm_planned_bytes", row["planned_bytes"]},
                        {"tflm_persistent_bytes_host64", row["persistent_bytes_host64"]},
                        {"vela_u55_sram_bytes_size", row["vela_u55_sram_bytes_size"]},
                        {"vela_u55_sram_bytes_performance", row["vela_u55_sram_bytes_performance"]}};
    auto parsed = sp::import::tflite::ParseModel(bytes, name);
    auto predicted = parsed.ok() ? sp::driver::PredictTflmArena(bytes, *parsed) : sp::StatusOr<sp::driver::TflmArena>(parsed.status());
    m["tflm_predicted_planned_bytes"] = predicted.ok() ? predicted->planned_bytes : -1;
    int plain_ops = -1;
    for (bool fold : {false, true}) {
      sp::import::ImportOptions io;
      io.fold_pad = fold;
      auto g = sp::import::ImportModel(path, io);
      if (!g.ok()) {
        std::cerr << name << ": " << g.status().message() << "\n";
        return 1;
      }
      if (fold && g->num_ops() == plain_ops) continue;  // no PAD to fold
      plain_ops = g->num_ops();
      sp::ir::ApplyDtype(*g, sp::ir::DataType::kInt8);
      auto q = sp::exec::QuantizeModel(*g, sp::exec::kDefaultSeed, nullptr);
      if (!q.ok()) {
        std::cerr << name << ": " << q.status().message() << "\n";
        return 1;
      }
      md += "| " + name + (fold ? " (--fold-pad)" : "") + " | " + std::to_string(row["planned_bytes"].get<int64_t>()) +
            " | " + std::to_string(m["tflm_predicted_planned_bytes"].get<int64_t>()) + " | " +
            std::to_string(row["vela_u55_sram_bytes_size"].get<int64_t>()) + " | " +
            std::to_string(row["vela_u55_sram_bytes_performance"].get<int64_t>()) + " |";
      bool all = true;
      nlohmann::json rows;
      for (const auto& s : strategies) {
        nlohmann::json r = RunOne(*g, *target, s, *q);
        std::cerr << name << (fold ? " fold-pad " : " ") << s << ": " << r.dump() << "\n";
        const bool ok = r.value("verified", false);
        all = all && ok;
        md += " " + (r.contains("arena_bytes") ? std::to_string(r["arena_bytes"].get<int64_t>()) : "-") +
              (ok ? "" : " (!)") + " |";
        rows.push_back(r);
      }
      m[fold ? "strategies_fold_pad" : "strategies"] = rows;
      failures += !all;
      md += std::string(all ? " yes" : " NO") + " |\n";
    }
    doc["models"].push_back(m);
  }
  md += "\nBytes of the activation arena (int8); (!) marks a plan that failed verification. `(--fold-pad)` rows: "
        "the model imported with `--fold-pad` (a PAD feeding only convolutions becomes their padding; TFLM and "
        "the TFLM columns keep the PAD). Lower bounds (max live bytes at a step over sramplan's buffers) are in "
        "the JSON.\n";
  fs::create_directories(out_dir);
  std::ofstream(out_dir + "/tflite.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/tflite.md") << md;
  std::cout << md;
  return failures == 0 ? 0 : 1;
}
