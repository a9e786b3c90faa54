// Places every CSV instance of a directory (default: MiniMalloc's "challenging" instances A..K in
// ../shared/reference/placement-challenging/, each named NAME.CAPACITY.csv) with TFLM's greedy, the
// greedy portfolio and the exact search, and reports per instance: buffers, live-bytes lower bound,
// arenas, whether it fits the capacity, whether the arena is proved optimal, time and search nodes.
// Writes bench/results/place_corpus.json and place_corpus.md (or into --out DIR).
//
//   bench_place_corpus [--dir DIR] [--out DIR] [--time-limit S] [--capacity BYTES] [--only NAME]
#include "bench_util.h"
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "placement/optimal.h"
#include "placement/problem_csv.h"

namespace fs = std::filesystem;
namespace pl = sramplan::placement;
using Clock = std::chrono::steady_clock;

using sramplan::bench::Machine;

// "A.1048576.csv" -> 1048576; otherwise `fallback`.
static int64_t CapacityFromName(const std::string& file, int64_t fallback) {
  std::string stem = fs::path(file).stem().string();  // "A.1048576"
  size_t dot = stem.rfind('.');
  if (dot == std::string::npos) return fallback;
  try {
    size_t used = 0;
    long long v = std::stoll(stem.substr(dot + 1), &used);
    if (used == stem.size() - dot - 1 && v > 0) return v;
  } catch (...) {
  }
  return fallback;
}

static bool ValidPlacement(const std::vector<pl::BufferRequest>& r, const pl::Placement& p) {
  if (p.offsets.size() != r.size()) return false;
  int64_t arena = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    arena = std::max(arena, p.offsets[i] + r[i].bytes);
    for (size_t j = i + 1; j < r.size(); ++j)
      if (pl::OverlapInTime(r[i], r[j]) && p.offsets[i] < p.offsets[j] + r[j].bytes &&
          p.offsets[j] < p.offsets[i] + r[i].bytes)
        return false;
  }
  return arena == p.arena_bytes;
}

int main(int argc, char** argv) {
  std::string root = SRAMPLAN_SOURCE_DIR;
  std::string dir = root + "/../shared/reference/placement-challenging";
  std::string out_dir = root + "/bench/results";
  std::string only;
  double time_limit = 30;
  int64_t default_capacity = 1048576;
  bool capacity_override = false;
  bool fit_only = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--dir") {
      dir = value;
    } else if (flag == "--out") {
      out_dir = value;
    } else if (flag == "--time-limit") {
      time_limit = std::stod(value);
    } else if (flag == "--capacity") {
      default_capacity = std::stoll(value);
      capacity_override = true;
    } else if (flag == "--fit-only") {
      fit_only = value == "1";
    } else if (flag == "--only") {
      only = value;
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 1;
    }
  }
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  if (ec || files.empty()) {
    std::cerr << "no .csv instances in " << dir << "\n";
    return 1;
  }
  std::sort(files.begin(), files.end());

  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::ostringstream md;
  md << "# Exact placement of MiniMalloc's challenging instances\n\n"
     << "Machine: " << Machine() << ". Build: release. Time limit " << time_limit
     << " s per instance (exact search). Bytes; `lb` = live-bytes lower bound (max over time of "
        "the bytes live). `best greedy` = best of "
     << pl::GreedyOrderNames().size()
     << " greedy orders; `exact` = PlaceBestOf (greedy portfolio, then the exact search: first the "
        "capacity, then the lower bound, then bisection). `fit` = time until a placement within "
        "the "
        "capacity was known; `total` = the whole call (it goes on minimising until the arena is "
        "proved optimal or the time limit)."
     << " `fit, mirrored` = time to fit the same instance reversed in time (an equivalent problem "
        "that the search explores differently: a robustness check).\n\n"
     << "| instance | buffers | capacity | lb | tflm | best greedy | exact | fits | proved optimal "
        "| fit (ms) | total (ms) | nodes | fit, mirrored (ms) |\n"
     << "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n";
  std::vector<double> times, mirror_times;
  int fit_count = 0, total = 0;
  for (const auto& file : files) {
    std::string name = fs::path(file).filename().string();
    if (!only.empty() && name.rfind(only, 0) != 0) continue;
    auto problem = pl::ReadProblemCsvFile(file);
    if (!problem.ok()) {
      std::cerr << problem.status().message() << "\n";
      return 1;
    }
    const auto& r = problem->requests;
    int64_t capacity =
        capacity_override ? default_capacity : CapacityFromName(file, default_capacity);
    pl::Placement tflm = pl::PlaceTflmGreedy(r);
    int64_t best_greedy = -1;
    std::string best_greedy_name;
    for (const auto& g : pl::GreedyOrderNames()) {
      auto p = pl::PlaceGreedyByName(g, r);
      if (best_greedy < 0 || p->arena_bytes < best_greedy) {
        best_greedy = p->arena_bytes;
        best_greedy_name = g;
      }
    }
    pl::OptimalOptions options;
    options.time_limit_s = time_limit;
    options.capacity = capacity;
    options.minimize = !fit_only;
    pl::OptimalResult res = pl::PlaceBestOf(r, options);
    if (!ValidPlacement(r, res.placement)) {
      std::cerr << name << ": INVALID placement\n";
      return 1;
    }
    // The same instance reversed in time, only to the first placement within the capacity.
    std::vector<pl::BufferRequest> mirrored = r;
    int last = 0;
    for (const auto& b : r) last = std::max(last, b.last_step);
    for (auto& b : mirrored) {
      const int first = last - b.last_step;
      b.last_step = last - b.first_step;
      b.first_step = first;
    }
    pl::OptimalOptions fit_options = options;
    fit_options.minimize = false;
    pl::OptimalResult mirror = pl::PlaceBestOf(mirrored, fit_options);
    if (!ValidPlacement(mirrored, mirror.placement)) {
      std::cerr << name << ": INVALID mirrored placement\n";
      return 1;
    }
    const double mirror_ms = mirror.fits_capacity ? mirror.seconds_to_fit * 1000.0 : -1;
    mirror_times.push_back(mirror.fits_capacity ? mirror_ms
                                                : std::numeric_limits<double>::infinity());
    double ms = res.seconds * 1000.0;
    double fit_ms = res.seconds_to_fit * 1000.0;
    times.push_back(res.fits_capacity ? fit_ms : std::numeric_limits<double>::infinity());
    ++total;
    if (res.fits_capacity) ++fit_count;
    std::string stem = fs::path(file).stem().string();
    stem = stem.substr(0, stem.find('.'));
    rows.push_back(
        {{"instance", stem},
         {"file", name},
         {"buffers", r.size()},
         {"capacity", capacity},
         {"lower_bound", res.lower_bound},
         {"proved_lower_bound", res.proved_lower_bound},
         {"tflm_arena", tflm.arena_bytes},
         {"best_greedy_arena", best_greedy},
         {"best_greedy", best_greedy_name},
         {"exact_arena", res.placement.arena_bytes},
         {"method", res.method},
         {"fits", res.fits_capacity},
         {"proved_optimal", res.proved_optimal},
         {"hit_limit", res.hit_limit},
         {"fit_ms", res.fits_capacity ? nlohmann::ordered_json(fit_ms) : nullptr},
         {"total_ms", ms},
         {"mirrored_fit_ms", mirror.fits_capacity ? nlohmann::ordered_json(mirror_ms) : nullptr},
         {"nodes", res.nodes}});
    std::ostringstream t, f, mf;
    t << std::fixed << std::setprecision(1) << ms;
    f << std::fixed << std::setprecision(1) << fit_ms;
    mf << std::fixed << std::setprecision(1) << mirror_ms;
    md << "| " << stem << " | " << r.size() << " | " << capacity << " | " << res.lower_bound
       << " | " << tflm.arena_bytes << " | " << best_greedy << " | " << res.placement.arena_bytes
       << " | " << (res.fits_capacity ? "yes" : "**no**") << " | "
       << (res.proved_optimal ? "yes" : (res.hit_limit ? "no (time limit)" : "no")) << " | "
       << (res.fits_capacity ? f.str() : "-") << " | " << t.str() << " | " << res.nodes << " | "
       << (mirror.fits_capacity ? mf.str() : "**no fit**") << " |\n";
    std::cerr << name << ": arena " << res.placement.arena_bytes << " lb " << res.lower_bound
              << (res.fits_capacity ? " fits" : " DOES NOT FIT")
              << (res.proved_optimal ? " optimal" : "") << " " << t.str() << " ms, " << res.nodes
              << " nodes, fit " << f.str() << " ms, mirrored fit " << mf.str() << " ms\n";
  }
  auto median_of = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  auto max_of = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  const double median = median_of(times);
  std::ostringstream summary;
  summary << std::fixed << std::setprecision(1) << "\n"
          << fit_count << " of " << total << " instances fit their capacity; time to fit: median "
          << median << " ms, max " << max_of(times) << " ms; mirrored: median "
          << median_of(mirror_times) << " ms, max " << max_of(mirror_times)
          << " ms (an instance that does not fit counts as infinite).\n";
  md << summary.str();
  nlohmann::ordered_json doc = {{"benchmark", "place_corpus"},
                                {"machine", Machine()},
                                {"build", "release"},
                                {"time_limit_s", time_limit},
                                {"fit_count", fit_count},
                                {"instances", total},
                                {"median_fit_ms", median},
                                {"median_mirrored_fit_ms", median_of(mirror_times)},
                                {"results", rows}};
  fs::create_directories(out_dir);
  std::ofstream(out_dir + "/place_corpus.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/place_corpus.md") << md.str();
  std::cout << md.str();
  return 0;
}
