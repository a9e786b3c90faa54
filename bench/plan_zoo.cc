// Plans every bundled model with every tensor-level strategy on stm32f411re and exynos-npu.
// Writes bench/results/plan_zoo.json and plan_zoo.md: per model ops, tensors, lower bound and used
// bytes per strategy, and the total planning time (target: all of it under one second, release).
#include "bench_util.h"
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "driver/strategy.h"
#include "import/import.h"

namespace fs = std::filesystem;
namespace sp = sramplan;
using Clock = std::chrono::steady_clock;

using sramplan::bench::Machine;

int main(int argc, char** argv) {
  std::string root = SRAMPLAN_SOURCE_DIR;
  std::string out_dir = root + "/bench/results";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--out") out_dir = argv[i + 1];
  std::vector<std::string> models;
  for (const char* dir : {"models/onnx", "models/mcunet_blocks"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root + "/" + dir, ec)) {
      std::string p = e.path().string();
      if (p.size() > 5 && (p.ends_with(".onnx") || p.ends_with(".graph.json"))) models.push_back(p);
    }
  }
  std::sort(models.begin(), models.end());
  const std::vector<std::string> targets = {"stm32f411re", "exynos-npu"};
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  double import_ms = 0, plan_ms = 0;
  std::ostringstream md;
  md << "# Tensor-level planning of the bundled zoo\n\nMachine: " << Machine()
     << ". Build: release. dtype int8, batch 1. Bytes; `lb` = lower bound (max live bytes at a step).\n\n"
     << "| model | ops | tensors | target | lb (tflm) | naive | linear | tflm | lb (inplace) | inplace | fits (best) |\n"
     << "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& path : models) {
    auto t0 = Clock::now();
    auto g = sp::import::ImportModel(path, {});
    import_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!g.ok()) {
      std::cerr << "skip " << path << ": " << g.status().message() << "\n";
      continue;
    }
    sp::ir::ApplyDtype(*g, sp::ir::DataType::kInt8);
    std::string name = fs::path(path).filename().string();
    for (const auto& tname : targets) {
      auto target = sp::target::LoadTarget(tname);
      if (!target.ok()) return 1;
      std::map<std::string, sp::plan::Plan> plans;
      for (const auto& s : sp::driver::StrategiesOf(sp::driver::Family::kTensor)) {
        auto t1 = Clock::now();
        auto p = sp::driver::RunStrategy(*g, *target, s.name, {});
        plan_ms += std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
        if (!p.ok()) {
          std::cerr << name << " " << s.name << ": " << p.status().message() << "\n";
          return 1;
        }
        plans.emplace(s.name, std::move(p).value());
      }
      nlohmann::ordered_json row = {{"model", name}, {"ops", g->num_ops()}, {"tensors", g->num_tensors()},
                                    {"target", tname}};
      bool any_fit = false;
      std::string best;
      int64_t best_bytes = -1;
      for (const auto& [sname, p] : plans) {
        row["strategies"][sname] = {{"arena_bytes", p.metrics.arena_bytes},
                                    {"lower_bound_bytes", p.metrics.lower_bound_bytes},
                                    {"overhead_pct", p.metrics.overhead_pct},
                                    {"fits", p.metrics.fits}};
        any_fit = any_fit || p.metrics.fits;
        if (best_bytes < 0 || p.metrics.arena_bytes < best_bytes) {
          best_bytes = p.metrics.arena_bytes;
          best = sname;
        }
      }
      results.push_back(row);
      md << "| " << name << " | " << g->num_ops() << " | " << g->num_tensors() << " | " << tname << " | "
         << plans["tflm"].metrics.lower_bound_bytes << " | " << plans["naive"].metrics.arena_bytes << " | "
         << plans["linear"].metrics.arena_bytes << " | " << plans["tflm"].metrics.arena_bytes << " | "
         << plans["inplace"].metrics.lower_bound_bytes << " | " << plans["inplace"].metrics.arena_bytes << " | "
         << (plans[best].metrics.fits ? "yes (" + best + ")" : "no") << " |\n";
    }
  }
  md << "\nTotal planning time (" << models.size() << " models x " << targets.size() << " targets x "
     << sp::driver::StrategiesOf(sp::driver::Family::kTensor).size() << " strategies, including verification): " << plan_ms
     << " ms; import: " << import_ms << " ms.\n";
  nlohmann::ordered_json doc = {{"benchmark", "plan_zoo"}, {"machine", Machine()}, {"build", "release"},
                                {"plan_ms_total", plan_ms}, {"import_ms_total", import_ms}, {"results", results}};
  fs::create_directories(out_dir);
  std::ofstream(out_dir + "/plan_zoo.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/plan_zoo.md") << md.str();
  std::cout << md.str();
  return 0;
}
