// Issue 20: the int8 .tflite reference models (../shared/reference/tflite) under every tensor-level
// strategy, beside what real TFLite Micro's planner and Arm Vela need for them (tflm_arena.json).
// For each model: TFLM's planned head predicted from the file (driver::PredictTflmArena), then every
// strategy of the table's tensor-level group planned on sram:4MiB in int8 and verified by execution
// (NaiveExecutor in the plan's order vs ArenaExecutor inside the plan: outputs bit for bit and the
// off-chip bytes the plan predicted), with the model's own int8 quantisation (exec/quantize_file.h:
// the file's scales and zero points, weights and biases as stored; sramplan's calibration when the
// file's cannot run as stored, as the `quantisation` column says). TFLM's persistent tail is
// predicted too (driver/tflm_tail.h): 64-bit host beside real TFLM's arena_used_bytes - planned_bytes,
// and the 32-bit Cortex-M estimate.
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
#include "driver/tflm_tail.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "exec/quantize_file.h"
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
        "Performance). `TFLM (predicted)` is sramplan's prediction of TFLM's head from the file. TFLM tail: the "
        "persistent section on a 64-bit host, measured (`arena_used_bytes - planned_bytes`) and predicted "
        "(driver/tflm_tail.h), and the predicted 32-bit Cortex-M tail (not measured). Every plan is verified by "
        "execution (naive vs arena run, outputs bit for bit, off-chip bytes as planned) with the model's own "
        "weights; `quantisation`: `file` = the file's own int8 parameters, weights and biases as stored; "
        "`calibrated` = sramplan's calibration (the JSON says why).\n\n";
  md += "| model | TFLM planned_bytes | TFLM (predicted) | TFLM tail 64-bit | tail 64-bit (predicted) | "
        "tail 32-bit (predicted) | Vela Size | Vela Perf |";
  for (const auto& s : strategies) md += " " + s + " |";
  md += " all verified | quantisation |\n|---|---:|---:|---:|---:|---:|---:|---:|";
  for (size_t k = 0; k < strategies.size(); ++k) md += "---:|";
  md += "---|---|\n";
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
    const int64_t tail_measured = row["arena_used_bytes"].get<int64_t>() - row["planned_bytes"].get<int64_t>();
    m["tflm_tail_bytes_host64"] = tail_measured;
    int64_t tail64 = -1, tail32 = -1;
    if (predicted.ok()) {
      auto t64 = sp::driver::PredictTflmTail(*parsed, *predicted, 8);
      auto t32 = sp::driver::PredictTflmTail(*parsed, *predicted, 4);
      if (t64.ok() && t32.ok()) {
        tail64 = t64->bytes;
        tail32 = t32->bytes;
        m["tflm_predicted_persistent_bytes_host64_recording"] = t64->recording_bytes;
        m["tflm_predicted_arena_size_cortex_m"] = predicted->planned_bytes + tail32;
      }
    }
    m["tflm_predicted_tail_bytes_host64"] = tail64;
    m["tflm_predicted_tail_bytes_cortex_m"] = tail32;
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
      std::string how;
      auto q = sp::exec::QuantizeForVerify(*g, sp::exec::kDefaultSeed, true, nullptr, &how);
      const bool file_quant = how.rfind("the model's own", 0) == 0;
      m[fold ? "quantisation_fold_pad" : "quantisation"] = how;
      if (!q.ok()) {
        std::cerr << name << ": " << q.status().message() << "\n";
        return 1;
      }
      md += "| " + name + (fold ? " (--fold-pad)" : "") + " | " + std::to_string(row["planned_bytes"].get<int64_t>()) +
            " | " + std::to_string(m["tflm_predicted_planned_bytes"].get<int64_t>()) + " | " +
            std::to_string(tail_measured) + " | " + std::to_string(tail64) + " | " + std::to_string(tail32) + " | " +
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
      md += std::string(all ? " yes" : " NO") + " | " + (file_quant ? "file" : "calibrated") + " |\n";
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
