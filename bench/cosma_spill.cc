// COSMA's Figures 3 and 4 on the bundled models: non-compulsory off-chip bytes under the budgets
// M_min, M_mpmf and their mean, activations only and activations + weights, int8, for the four
// baselines ({model order, min-peak order} x {Belady, greedy} on a linear allocator) and for COSMA's
// ILP (joint for the ten human-designed models; fixed-schedule, divide-and-conquer and the joint mode (order
// search over the operator order, each candidate solved by the fixed-order path) for NAS).
// Also: min-peak schedule vs model order (peak bytes, proof, time) on every bundled model and NAS graph.
// Writes bench/results/cosma_spill.{json,md} and bench/results/min_peak.{json,md}.
// The min-peak order of a model is computed once (driver/budget.cc caches MinPeakSchedule per graph)
// and shared by every baseline, budget and setting.
//
// Per row, the bound over all orders (spill/spill_bound.h's LowerBoundAllOrders) is also computed here on
// the row's own spill problem with its own time limit (--bound-time, default 20 s; 0: off), independent of
// the share of the solver's limit the strategies give it, so the `bound` column is reproducible.
// CPU seconds (this process, one thread) are given beside wall seconds: the machine may be shared.
//
// Usage: bench_cosma_spill [--out DIR] [--time-limit S] [--nas-time-limit S] [--only NAME]
//                          [--skip-human] [--skip-nas] [--skip-minpeak] [--nas-match SUBSTR]
//                          [--activations-only] [--bound-time S] [--budgets min,avg,mpmf]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/resource.h>

#include "bench_util.h"
#include "driver/context.h"
#include "driver/strategy.h"
#include "import/import.h"
#include "schedule/hierarchical.h"
#include "schedule/min_peak.h"
#include "spill/spill_bound.h"
#include "target/target.h"

namespace fs = std::filesystem;
namespace sp = sramplan;
using Clock = std::chrono::steady_clock;

namespace {

struct Model {
  std::string name;
  std::string path;
  int64_t batch = 1;
};

// COSMA's ten human-designed models (its Sec. IV): the Transformer with batch 32 (inputs S x 32 x 512).
std::vector<Model> HumanModels(const std::string& root) {
  std::vector<Model> m;
  for (const char* n : {"resnet50", "densenet121", "resnext50_32x4d", "r2plus1d_18", "s3d", "fcn_resnet50",
                        "lraspp_mobilenet_v3_large", "deeplabv3_resnet50", "transformer", "vit_b_16"})
    m.push_back({n, root + "/models/onnx/" + n + ".onnx", std::string(n) == "transformer" ? 32 : 1});
  return m;
}

std::vector<Model> NasModels(const std::string& root) {
  std::vector<Model> m;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root + "/models/nas", ec)) {
    std::string p = e.path().string();
    if (p.ends_with(".graph.json")) m.push_back({e.path().filename().string().substr(0, e.path().filename().string().size() - 11), p, 1});
  }
  std::sort(m.begin(), m.end(), [](const Model& a, const Model& b) { return a.name < b.name; });
  return m;
}

sp::StatusOr<sp::ir::Graph> Load(const Model& m) {
  sp::import::ImportOptions o;
  o.batch = m.batch;
  SP_ASSIGN_OR_RETURN(sp::ir::Graph g, sp::import::ImportModel(m.path, o));
  sp::ir::ApplyDtype(g, sp::ir::DataType::kInt8);
  return g;
}

struct Run {
  bool ok = false;
  std::string error;
  int64_t noncompulsory = 0;
  sp::driver::SolverReport report;
  double ms = 0;
  double cpu_s = 0;  // CPU seconds of the whole RunStrategy call
};

// CPU seconds of this process so far (user + system).
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// When `problem` is set, it receives the spill problem (ops, tensors, budget) the strategy solved.
Run Plan(const sp::ir::Graph& g, const sp::target::Target& t, const std::string& strategy, const std::string& schedule,
         const std::string& budget, bool weights, double time_limit, sp::spill::SpillProblem* problem = nullptr) {
  Run r;
  sp::driver::PlanOptions o;
  o.dtype_name = "int8";
  o.schedule = schedule;
  o.budget = budget;
  o.with_weights = weights;
  o.time_limit_s = time_limit;
  o.report = &r.report;
  auto t0 = Clock::now();
  const double c0 = CpuSeconds();
  sp::driver::AfterPass grab = nullptr;
  if (problem)
    grab = [problem](const std::string& pass, const sp::driver::PlanningContext& ctx) {
      if (pass == "spill-problem" && ctx.budget) *problem = ctx.budget->problem;
      return sp::Status::Ok();
    };
  auto p = sp::driver::RunStrategy(g, t, strategy, o, grab);
  r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  r.cpu_s = CpuSeconds() - c0;
  if (!p.ok()) {
    r.error = p.status().message();
    return r;
  }
  r.ok = true;
  r.noncompulsory = p->metrics.noncompulsory_read_bytes + p->metrics.noncompulsory_write_bytes;
  return r;
}

std::string Fixed(double v, int d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", d, v);
  return buf;
}

struct RowBound {
  int64_t bytes = 0;
  bool ilp_optimal = false, hit_limit = false;
  double seconds = 0, cpu_s = 0;
  std::string detail;
};

RowBound StrongBound(const sp::spill::SpillProblem& p, double time_limit) {
  RowBound rb;
  sp::spill::SpillBoundOptions o;
  o.time_limit_s = time_limit;
  const double c0 = CpuSeconds();
  auto t0 = Clock::now();
  auto b = sp::spill::LowerBoundAllOrders(p, o);
  rb.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rb.cpu_s = CpuSeconds() - c0;
  if (!b.ok()) {
    rb.detail = b.status().message();
    return rb;
  }
  rb.bytes = b->bytes;
  rb.ilp_optimal = b->ilp_optimal;
  rb.hit_limit = b->ilp_hit_limit;
  rb.detail = b->detail;
  return rb;
}

std::string Bytes(const Run& r) { return r.ok ? std::to_string(r.noncompulsory) : "err"; }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = SRAMPLAN_SOURCE_DIR;
  std::string out_dir = root + "/bench/results";
  double time_limit = 60, nas_time_limit = 120, bound_time = 20;
  std::vector<std::string> budgets = {"min", "avg", "mpmf"};
  std::string only;
  bool skip_human = false, skip_nas = false, skip_minpeak = false, activations_only = false;
  std::string nas_match;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value after " << a << "\n";
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--out") out_dir = next();
    else if (a == "--time-limit") time_limit = std::stod(next());
    else if (a == "--nas-time-limit") nas_time_limit = std::stod(next());
    else if (a == "--only") only = next();
    else if (a == "--skip-human") skip_human = true;
    else if (a == "--skip-nas") skip_nas = true;
    else if (a == "--skip-minpeak") skip_minpeak = true;
    else if (a == "--nas-match") nas_match = next();
    else if (a == "--activations-only") activations_only = true;
    else if (a == "--bound-time") bound_time = std::stod(next());
    else if (a == "--budgets") {
      budgets.clear();
      std::stringstream ss(next());
      for (std::string b; std::getline(ss, b, ',');) {
        if (b != "min" && b != "avg" && b != "mpmf") {
          std::cerr << "--budgets: '" << b << "' is not one of min, avg, mpmf\n";
          return 1;
        }
        budgets.push_back(b);
      }
    }
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 1;
    }
  }
  fs::create_directories(out_dir);
  const auto bench_t0 = Clock::now();
  auto target = sp::target::LoadTarget("exynos-npu");
  if (!target.ok()) {
    std::cerr << target.status().message() << "\n";
    return 1;
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::ostringstream md;
  md << "# COSMA Figures 3 and 4: non-compulsory off-chip bytes under a budget\n\n"
     << "Machine: " << sp::bench::Machine() << " (load average at start " << sp::bench::LoadAverage()
     << "). Build: release. int8, target exynos-npu (alignment 16), CBC through its C++ API, one thread.\n"
     << "Budgets: `min` = M_min (largest working set of one op), `mpmf` = min-peak footprint, `avg` = their mean.\n"
     << "Baselines: linear (best-fit) allocator with Belady or greedy replacement, in model order (m) or min-peak order (p).\n"
     << "`reduction` = 1 - cosma / best baseline. `proved` = CBC proved the optimum (`no (limit)`: the time limit stopped a "
     << "stage). The min-peak order is computed once per model. Times in seconds (solver only).\n"
     << "`bound` = a lower bound on the non-compulsory bytes valid for EVERY operator order and placement (the largest "
     << "of the strategies' reports: spill/spill_bound.h's working-set and cover-ILP bound over possibly-live tensors, "
     << "and the joint time-indexed ILP's where it runs); `gap` = (best cosma column - bound) / best cosma column; "
     << "`max red.` = 1 - bound / best baseline, the most any plan could reduce (a row is proved when gap = 0); `85%?` = "
     << "whether the bound allows the paper's 85% reduction.\n"
     << "The bound includes LowerBoundAllOrders run by this benchmark on the row's spill problem with --bound-time "
     << Fixed(bound_time, 0) << " s (`bound s`: its wall seconds; `(limit)`: its cover ILP stopped on that limit, the "
     << "bound is then CBC's proved bound or the first relaxation's); `cpu s` = CPU seconds of the whole row (all "
     << "strategies and the bound), beside the wall seconds, as the machine is shared.\n\n";
  std::vector<double> reductions_min, solve_times, nas_reductions_min;
  // Per setting (0 = activations, 1 = act+weights): reductions at the min budget.
  std::vector<double> human_red_min[2], nas_red_min[2];
  int human_runs = 0, human_cosma_proved = 0, human_limit = 0, nas_runs = 0, nas_proved = 0, nas_dc_proved = 0,
      nas_limit = 0;
  double nas_worst = 0, nas_joint_worst = 0;
  std::vector<double> nas_best_red_min, nas_joint_red_min_all, nas_joint_red_min[2];
  int nas_joint_limit = 0, nas_joint_better = 0, nas_joint_worse = 0;
  int nas_mpmf_rows = 0, nas_mpmf_zero = 0;
  // Gaps to the bound over all orders at the min budget (rows with traffic), rows proved by it, and rows
  // where the bound shows that 85% (the paper's NAS figure) cannot be reached.
  std::vector<double> human_gap_min, nas_gap_min, human_gap_all, nas_gap_all;
  int nas_85_impossible = 0, nas_85_reached = 0, nas_rows_min = 0, human_bound_proved = 0, nas_bound_proved = 0;
  int human_over_20s = 0;
  std::string human_slow;
  double worst_time = 0;
  bool mpmf_zero = true;
  auto run_group = [&](const std::vector<Model>& models, bool nas) {
    md << (nas ? "\n## NAS graphs (fixed schedule = min-peak order, divide and conquer, and the joint mode's order search)\n\n"
               : "\n## Human-designed models (joint ILP)\n\n");
    md << "| model | setting | budget | budget B | belady m | belady p | greedy m | greedy p | "
       << (nas ? "cosma-fixed | proved | s | cosma-dc | s | cosma | s | bound | gap | max red. | 85%? | bound s | cpu s | reduction |"
               : "cosma | proved | s | bound | gap | max red. | 85%? | bound s | cpu s | reduction |") << "\n"
       << (nas ? "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n"
               : "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|\n");
    for (const Model& m : models) {
      if (!only.empty() && m.name != only) continue;
      if (nas && !nas_match.empty() && m.name.find(nas_match) == std::string::npos) continue;
      auto g = Load(m);
      if (!g.ok()) {
        std::cerr << m.name << ": " << g.status().message() << "\n";
        continue;
      }
      for (bool weights : {false, true})
        for (const auto& b : budgets) {
          if (weights && activations_only) continue;
          std::cerr << m.name << " " << (weights ? "act+weights" : "activations") << " " << b << "..." << std::flush;
          Run bm = Plan(*g, *target, "belady", "model", b, weights, time_limit);
          Run bp = Plan(*g, *target, "belady", "minpeak", b, weights, time_limit);
          Run gm = Plan(*g, *target, "greedy", "model", b, weights, time_limit);
          Run gp = Plan(*g, *target, "greedy", "minpeak", b, weights, time_limit);
          int64_t best = -1;
          for (const Run* r : {&bm, &bp, &gm, &gp})
            if (r->ok && (best < 0 || r->noncompulsory < best)) best = r->noncompulsory;
          const double row_cpu0 = CpuSeconds();
          sp::spill::SpillProblem problem;
          Run c = nas ? Plan(*g, *target, "cosma-fixed", "minpeak", b, weights, nas_time_limit, &problem)
                      : Plan(*g, *target, "cosma", "model", b, weights, time_limit, &problem);
          Run dc, joint;
          if (nas) dc = Plan(*g, *target, "cosma-dc", "minpeak", b, weights, nas_time_limit);
          if (nas) joint = Plan(*g, *target, "cosma", "model", b, weights, nas_time_limit);
          int64_t ours = c.ok ? c.noncompulsory : -1;
          if (nas && dc.ok && (ours < 0 || dc.noncompulsory < ours)) ours = dc.noncompulsory;
          // The reduction of the NAS rows' previous columns (better of cosma-fixed and cosma-dc) is kept
          // for comparison; the row's `reduction` is the best of all three.
          double fixed_dc_reduction = 0;
          if (best > 0 && ours >= 0) fixed_dc_reduction = 1.0 - static_cast<double>(ours) / static_cast<double>(best);
          double joint_reduction = 0;
          if (best > 0 && joint.ok) joint_reduction = 1.0 - static_cast<double>(joint.noncompulsory) / static_cast<double>(best);
          if (nas && joint.ok && (ours < 0 || joint.noncompulsory < ours)) ours = joint.noncompulsory;
          // The bound over all orders: the largest any strategy reported (cosma-fixed's own lower_bound_bytes
          // holds for its order only and is not used).
          int64_t bound = 0;
          for (const Run* r : {&c, &dc, &joint}) {
            if (!r->ok) continue;
            bound = std::max(bound, r->report.all_orders_lower_bound_bytes);
            if (r->report.method == "cosma") bound = std::max(bound, r->report.lower_bound_bytes);
          }
          // The bound with the bench's own time limit, on the row's problem (skipped when a plan has no
          // traffic: then 0 is the optimum).
          RowBound rb;
          if (c.ok && bound_time > 0 && ours > 0) rb = StrongBound(problem, bound_time);
          bound = std::max(bound, rb.bytes);
          const double row_cpu = CpuSeconds() - row_cpu0;
          const double gap = ours > 0 ? static_cast<double>(ours - std::min(ours, bound)) / static_cast<double>(ours) : 0.0;
          const double max_red = best > 0 ? 1.0 - static_cast<double>(bound) / static_cast<double>(best) : 0.0;
          const std::string gap_s = ours >= 0 ? Fixed(100.0 * gap, 1) + "%" : "-";
          const std::string max_red_s = best > 0 ? Fixed(100.0 * max_red, 1) + "%" : "n/a";
          if (ours > 0 && b == "min") (nas ? nas_gap_min : human_gap_min).push_back(gap);
          if (ours > 0) (nas ? nas_gap_all : human_gap_all).push_back(gap);
          if (ours >= 0 && ours <= bound) ++(nas ? nas_bound_proved : human_bound_proved);
          if (nas && b == "min" && best > 0 && ours >= 0) {
            ++nas_rows_min;
            nas_85_impossible += max_red < 0.85;
          }
          if (!nas && c.ok && c.report.seconds > 20) {
            ++human_over_20s;
            human_slow += (human_slow.empty() ? "" : ", ") + m.name + " " + (weights ? "act+weights" : "activations") +
                          " " + b + " (" + Fixed(c.report.seconds, 1) + " s)";
          }
          std::string red = "n/a";
          double reduction = 0;
          if (best > 0 && ours >= 0) {
            reduction = 1.0 - static_cast<double>(ours) / static_cast<double>(best);
            red = Fixed(100.0 * reduction, 1) + "%";
            if (nas && b == "min") nas_85_reached += reduction >= 0.85;
          } else if (best == 0 && ours == 0) {
            red = "0 = 0";
          }
          if (!nas && b == "min" && best > 0 && ours >= 0) {
            reductions_min.push_back(reduction);
            human_red_min[weights].push_back(reduction);
          }
          if (nas && b == "min" && best > 0 && ours >= 0) {
            nas_reductions_min.push_back(fixed_dc_reduction);
            nas_red_min[weights].push_back(fixed_dc_reduction);
            nas_best_red_min.push_back(reduction);
            if (joint.ok) {
              nas_joint_red_min[weights].push_back(joint_reduction);
              nas_joint_red_min_all.push_back(joint_reduction);
            }
          }
          const bool c_limit = c.ok && c.report.detail.find("time limit hit") != std::string::npos;
          const bool dc_limit = nas && dc.ok && dc.report.detail.find("time limit hit") != std::string::npos;
          const bool joint_limit = nas && joint.ok && joint.report.detail.find("time limit hit") != std::string::npos;
          if (!nas) {
            ++human_runs;
            human_cosma_proved += c.ok && c.report.proved_optimal;
            human_limit += c_limit;
          } else {
            ++nas_runs;
            nas_proved += c.ok && c.report.proved_optimal;
            nas_dc_proved += dc.ok && dc.report.proved_optimal;
            nas_limit += c_limit + dc_limit;
            nas_joint_limit += joint_limit;
            if (joint.ok && c.ok && joint.noncompulsory < c.noncompulsory) ++nas_joint_better;
            if (joint.ok && c.ok && joint.noncompulsory > c.noncompulsory) ++nas_joint_worse;
            nas_joint_worst = std::max(nas_joint_worst, joint.report.seconds);
          }
          if (!nas && b == "mpmf" && ours != 0) mpmf_zero = false;
          if (nas && b == "mpmf") {
            ++nas_mpmf_rows;
            nas_mpmf_zero += ours == 0;
          }
          if (nas) nas_worst = std::max({nas_worst, c.report.seconds, dc.report.seconds});
          if (!nas && c.ok) {
            solve_times.push_back(c.report.seconds);
            worst_time = std::max(worst_time, c.report.seconds);
          }
          std::cerr << " best baseline " << best << ", cosma " << Bytes(c) << (c.ok && c.report.proved_optimal ? " (proved)" : "")
                    << " in " << Fixed(c.report.seconds, 2) << " s" << (c.ok ? "" : " [" + c.error + "]") << "\n";
          md << "| " << m.name << " | " << (weights ? "act+weights" : "activations") << " | " << b << " | "
             << (c.ok ? std::to_string(c.report.budget_bytes) : bm.ok ? "" : "-") << " | " << Bytes(bm) << " | "
             << Bytes(bp) << " | " << Bytes(gm) << " | " << Bytes(gp) << " | " << Bytes(c) << " | "
             << (c.ok ? (c.report.proved_optimal ? "yes" : c_limit ? "no (limit)" : "no") : "-") << " | "
             << Fixed(c.report.seconds, 2) << " | ";
          if (nas)
            md << Bytes(dc) << (dc.ok && dc.report.proved_optimal ? " (proved)" : dc_limit ? " (limit)" : "") << " | "
               << Fixed(dc.report.seconds, 2) << " | " << Bytes(joint)
               << (joint.ok && joint.report.proved_optimal ? " (proved)" : joint_limit ? " (limit)" : "") << " | "
               << Fixed(joint.report.seconds, 2) << " | ";
          // "85%?": whether the bound leaves room for the paper's 85% reduction vs the best baseline.
          const std::string p85 = best > 0 ? (max_red >= 0.85 ? "possible" : "impossible") : "n/a";
          md << bound << (rb.hit_limit ? " (limit)" : "") << " | " << gap_s << " | " << max_red_s << " | " << p85 << " | "
             << Fixed(rb.seconds, 1) << " | " << Fixed(row_cpu, 1) << " | " << red << " |\n";
          nlohmann::ordered_json row = {{"model", m.name}, {"nas", nas}, {"with_weights", weights}, {"budget", b},
                                        {"budget_bytes", c.report.budget_bytes}, {"m_min", c.report.m_min},
                                        {"m_mpmf", c.report.m_mpmf},
                                        {"belady_model", bm.ok ? nlohmann::json(bm.noncompulsory) : nlohmann::json(bm.error)},
                                        {"belady_minpeak", bp.ok ? nlohmann::json(bp.noncompulsory) : nlohmann::json(bp.error)},
                                        {"greedy_model", gm.ok ? nlohmann::json(gm.noncompulsory) : nlohmann::json(gm.error)},
                                        {"greedy_minpeak", gp.ok ? nlohmann::json(gp.noncompulsory) : nlohmann::json(gp.error)},
                                        {"best_baseline", best},
                                        {nas ? "cosma_fixed" : "cosma", c.ok ? nlohmann::json(c.noncompulsory) : nlohmann::json(c.error)},
                                        {"proved_optimal", c.report.proved_optimal},
                                        {"lower_bound", c.report.lower_bound_bytes},
                                        {"solve_seconds", c.report.seconds},
                                        {"hit_time_limit", c_limit},
                                        {"detail", c.report.detail}};
          if (nas) {
            row["cosma_dc"] = dc.ok ? nlohmann::json(dc.noncompulsory) : nlohmann::json(dc.error);
            row["dc_seconds"] = dc.report.seconds;
            row["dc_proved_optimal"] = dc.report.proved_optimal;
            row["dc_hit_time_limit"] = dc_limit;
            row["dc_detail"] = dc.report.detail;
            row["cosma_joint"] = joint.ok ? nlohmann::json(joint.noncompulsory) : nlohmann::json(joint.error);
            row["joint_seconds"] = joint.report.seconds;
            row["joint_proved_optimal"] = joint.report.proved_optimal;
            row["joint_lower_bound"] = joint.report.lower_bound_bytes;
            row["joint_hit_time_limit"] = joint_limit;
            row["joint_detail"] = joint.report.detail;
            row["fixed_dc_reduction"] = fixed_dc_reduction;
            row["joint_reduction"] = joint_reduction;
          }
          row["reduction"] = reduction;
          row["bound_all_orders"] = bound;
          row["gap"] = gap;
          row["max_reduction"] = max_red;
          row["reduction_85_possible"] = best > 0 ? nlohmann::json(max_red >= 0.85) : nlohmann::json(nullptr);
          row["bench_bound"] = {{"bytes", rb.bytes}, {"ilp_optimal", rb.ilp_optimal}, {"hit_time_limit", rb.hit_limit},
                                {"seconds", rb.seconds}, {"cpu_seconds", rb.cpu_s}, {"detail", rb.detail}};
          row["row_cpu_seconds"] = row_cpu;
          row["cpu_seconds"] = {{"cosma", c.cpu_s}, {"cosma_dc", dc.cpu_s}, {"cosma_joint", joint.cpu_s}};
          row["all_orders_lower_bound_reports"] = {c.report.all_orders_lower_bound_bytes, dc.report.all_orders_lower_bound_bytes,
                                                   joint.report.all_orders_lower_bound_bytes};
          rows.push_back(row);
        }
    }
  };
  if (!skip_human) run_group(HumanModels(root), false);
  if (!skip_nas) run_group(NasModels(root), true);
  double mean_red = 0;
  for (double r : reductions_min) mean_red += r;
  if (!reductions_min.empty()) mean_red /= static_cast<double>(reductions_min.size());
  auto mean = [](const std::vector<double>& v) {
    double m = 0;
    for (double r : v) m += r;
    return v.empty() ? 0.0 : m / static_cast<double>(v.size());
  };
  md << "\n## Against the targets\n\n"
     << "- This run: " << Fixed(CpuSeconds(), 0) << " CPU s, " << Fixed(std::chrono::duration<double>(Clock::now() - bench_t0).count(), 0)
     << " wall s (load average at the end " << sp::bench::LoadAverage() << "); budgets";
  for (const auto& b : budgets) md << " " << b;
  md << ".\n";
  if (!skip_human)
    md << "- Human models, `mpmf` budget: COSMA zero non-compulsory bytes everywhere: " << (mpmf_zero ? "yes" : "no") << ".\n"
       << "- Human models, `min` budget: mean reduction vs the best baseline " << Fixed(100 * mean_red, 1)
       << "% over " << reductions_min.size() << " rows with baseline traffic (COSMA reports 84%): activations only "
       << Fixed(100 * mean(human_red_min[0]), 1) << "% over " << human_red_min[0].size() << " rows, with weights "
       << Fixed(100 * mean(human_red_min[1]), 1) << "% over " << human_red_min[1].size() << " rows.\n"
       << "- Human models: proved optimal " << human_cosma_proved << " of " << human_runs << " runs; time limit hit in "
       << human_limit << ".\n"
       << "- Solve time (joint ILP, human models): median " << Fixed(Median(solve_times), 2) << " s, worst "
       << Fixed(worst_time, 2) << " s over " << solve_times.size() << " runs (limit " << Fixed(time_limit, 0)
       << " s); over 20 s: " << human_over_20s << (human_slow.empty() ? "" : " (" + human_slow + ")") << ".\n"
       << "- Human models: plan bytes equal to the bound over all orders (gap 0) in " << human_bound_proved << " of "
       << human_runs << " runs; mean gap to the bound " << Fixed(100 * mean(human_gap_all), 1) << "% over "
       << human_gap_all.size() << " runs with traffic (`min` budget: " << Fixed(100 * mean(human_gap_min), 1) << "% over "
       << human_gap_min.size() << ").\n";
  if (!skip_nas) {
    double nas_mean = 0;
    for (double r : nas_reductions_min) nas_mean += r;
    if (!nas_reductions_min.empty()) nas_mean /= static_cast<double>(nas_reductions_min.size());
    md << "- NAS graphs, `min` budget: mean reduction of the better of cosma-fixed and cosma-dc vs the best baseline "
       << Fixed(100 * nas_mean, 1) << "% over " << nas_reductions_min.size() << " rows (COSMA reports 85%): activations only "
       << Fixed(100 * mean(nas_red_min[0]), 1) << "% over " << nas_red_min[0].size() << " rows, with weights "
       << Fixed(100 * mean(nas_red_min[1]), 1) << "% over " << nas_red_min[1].size() << " rows.\n"
       << "- NAS graphs: cosma-fixed proved optimal (for the min-peak order) in " << nas_proved << " of " << nas_runs
       << " runs, cosma-dc proved in " << nas_dc_proved << "; time limit hit in " << nas_limit << " solver runs.\n"
       << "- NAS graphs, `mpmf` budget: zero non-compulsory bytes on " << nas_mpmf_zero << " of " << nas_mpmf_rows
       << " rows.\n- NAS solve time (each of cosma-fixed, cosma-dc): worst " << Fixed(nas_worst, 2)
       << " s (target: 2 minutes per graph).\n"
       << "- NAS graphs, `min` budget: mean reduction of cosma (joint: order search + exact fixed-order solves) vs the "
       << "best baseline " << Fixed(100 * mean(nas_joint_red_min_all), 1) << "% over " << nas_joint_red_min_all.size()
       << " rows: activations only " << Fixed(100 * mean(nas_joint_red_min[0]), 1) << "% over "
       << nas_joint_red_min[0].size() << " rows, with weights " << Fixed(100 * mean(nas_joint_red_min[1]), 1) << "% over "
       << nas_joint_red_min[1].size() << " rows; best of the three columns " << Fixed(100 * mean(nas_best_red_min), 1)
       << "% (the `reduction` column).\n"
       << "- NAS graphs: cosma (joint) below cosma-fixed (min-peak order) in " << nas_joint_better << " of " << nas_runs
       << " runs, above it in " << nas_joint_worse << "; the search stopped by the time limit in " << nas_joint_limit
       << " runs; worst solve time " << Fixed(nas_joint_worst, 2) << " s (limit " << Fixed(nas_time_limit, 0)
       << " s).\n"
       << "- NAS graphs, `min` budget: mean gap of the best column to the bound over all orders "
       << Fixed(100 * mean(nas_gap_min), 1) << "% over " << nas_gap_min.size() << " rows (target 5%); all budgets "
       << Fixed(100 * mean(nas_gap_all), 1) << "% over " << nas_gap_all.size() << " rows with traffic; gap 0 (proved) in "
       << nas_bound_proved << " of " << nas_runs << " rows.\n"
       << "- NAS graphs, `min` budget: reduction >= 85% reached in " << nas_85_reached << " of " << nas_rows_min
       << " rows; the bound proves 85% impossible (max red. < 85%) in " << nas_85_impossible << " of them; the "
       << "remaining rows are open (neither reached nor ruled out by this bound).\n";
  }
  nlohmann::ordered_json doc = {{"benchmark", "cosma_spill"}, {"machine", sp::bench::Machine()}, {"build", "release"},
                                {"target", "exynos-npu"}, {"time_limit_s", time_limit}, {"nas_time_limit_s", nas_time_limit},
                                {"bound_time_s", bound_time}, {"cpu_seconds", CpuSeconds()},
                                {"mean_reduction_min_budget", mean_red}, {"median_solve_s", Median(solve_times)},
                                {"worst_solve_s", worst_time}, {"mpmf_zero", mpmf_zero},
                                {"mean_reduction_min_activations", mean(human_red_min[0])},
                                {"mean_reduction_min_weights", mean(human_red_min[1])},
                                {"human_proved", human_cosma_proved}, {"human_runs", human_runs}, {"human_time_limit_hit", human_limit},
                                {"nas_mean_reduction_min", mean(nas_reductions_min)},
                                {"nas_mean_reduction_min_activations", mean(nas_red_min[0])},
                                {"nas_mean_reduction_min_weights", mean(nas_red_min[1])},
                                {"nas_mpmf_zero", nas_mpmf_zero}, {"nas_mpmf_rows", nas_mpmf_rows},
                                {"nas_fixed_proved", nas_proved}, {"nas_dc_proved", nas_dc_proved}, {"nas_runs", nas_runs},
                                {"nas_time_limit_hit", nas_limit}, {"nas_worst_solve_s", nas_worst},
                                {"nas_joint_mean_reduction_min", mean(nas_joint_red_min_all)},
                                {"nas_joint_mean_reduction_min_activations", mean(nas_joint_red_min[0])},
                                {"nas_joint_mean_reduction_min_weights", mean(nas_joint_red_min[1])},
                                {"nas_best_mean_reduction_min", mean(nas_best_red_min)},
                                {"nas_joint_below_fixed", nas_joint_better}, {"nas_joint_above_fixed", nas_joint_worse},
                                {"nas_joint_time_limit_hit", nas_joint_limit}, {"nas_joint_worst_solve_s", nas_joint_worst},
                                {"human_mean_gap_min", mean(human_gap_min)}, {"human_mean_gap", mean(human_gap_all)},
                                {"human_gap_zero", human_bound_proved}, {"human_over_20s", human_over_20s},
                                {"nas_mean_gap_min", mean(nas_gap_min)}, {"nas_mean_gap", mean(nas_gap_all)},
                                {"nas_gap_zero", nas_bound_proved}, {"nas_85_reached_min", nas_85_reached},
                                {"nas_85_impossible_min", nas_85_impossible}, {"nas_rows_min", nas_rows_min},
                                {"rows", rows}};
  if (!skip_human || !skip_nas) {
    std::ofstream(out_dir + "/cosma_spill.json") << doc.dump(1) << "\n";
    std::ofstream(out_dir + "/cosma_spill.md") << md.str();
    std::cerr << "wrote " << out_dir << "/cosma_spill.{json,md}\n";
  }

  if (skip_minpeak) return 0;
  // Min-peak schedules vs model order.
  std::vector<Model> all;
  {
    std::error_code ec;
    for (const char* dir : {"models/onnx", "models/mcunet_blocks"})
      for (const auto& e : fs::directory_iterator(root + "/" + dir, ec)) {
        std::string p = e.path().string();
        if (p.ends_with(".onnx") || p.ends_with(".graph.json")) {
          std::string name = e.path().filename().string();
          name = name.substr(0, name.find('.'));
          all.push_back({name, p, name == "transformer" ? 32 : 1});
        }
      }
    std::sort(all.begin(), all.end(), [](const Model& a, const Model& b) { return a.path < b.path; });
    for (const Model& m : NasModels(root)) all.push_back(m);
  }
  std::ostringstream mp;
  mp << "# Min-peak schedules vs the model's order\n\nMachine: " << sp::bench::Machine()
     << ". Build: release. int8, live bytes (views alias, inputs live from step 0, outputs to the end).\n"
     << "`exact`: the DP over op sets (proved optimal when it finishes); `hierarchical`: HMCOS-style regions.\n\n"
     << "| model | ops | model order B | min-peak B | saved | method | proved | bound B | time ms | hierarchical B | h. proved | h. ms |\n"
     << "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---|---:|\n";
  nlohmann::ordered_json mrows = nlohmann::ordered_json::array();
  int human_proved = 0, human_total = 0;
  double human_worst_ms = 0;
  for (const Model& m : all) {
    if (!only.empty() && m.name != only) continue;
    auto g = Load(m);
    if (!g.ok()) continue;
    auto t0 = Clock::now();
    sp::schedule::MinPeakResult r = sp::schedule::MinPeakSchedule(*g);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    t0 = Clock::now();
    sp::schedule::MinPeakResult h = sp::schedule::HierarchicalMinPeak(*g, {});
    double hms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const bool is_nas = m.path.find("/nas/") != std::string::npos;
    const bool is_onnx = m.path.ends_with(".onnx");
    if (is_onnx) {
      ++human_total;
      if (r.proved_optimal) ++human_proved;
      human_worst_ms = std::max(human_worst_ms, ms);
    }
    mp << "| " << m.name << " | " << g->num_ops() << " | " << r.model_order_peak << " | " << r.peak_bytes << " | "
       << Fixed(r.model_order_peak > 0 ? 100.0 * static_cast<double>(r.model_order_peak - r.peak_bytes) / static_cast<double>(r.model_order_peak) : 0, 1)
       << "% | " << r.method << " | " << (r.proved_optimal ? "yes" : "no") << " | " << r.lower_bound << " | "
       << Fixed(ms, 1) << " | " << h.peak_bytes << " | " << (h.proved_optimal ? "yes" : "no") << " | " << Fixed(hms, 1) << " |\n";
    mrows.push_back({{"model", m.name}, {"nas", is_nas}, {"ops", g->num_ops()}, {"model_order_peak", r.model_order_peak},
                     {"min_peak", r.peak_bytes}, {"method", r.method}, {"proved_optimal", r.proved_optimal},
                     {"lower_bound", r.lower_bound}, {"ms", ms}, {"hierarchical_peak", h.peak_bytes},
                     {"hierarchical_proved", h.proved_optimal}, {"hierarchical_ms", hms}});
    std::cerr << "min-peak " << m.name << ": " << r.model_order_peak << " -> " << r.peak_bytes << " (" << r.method << ", "
              << Fixed(ms, 0) << " ms)\n";
  }
  mp << "\nBundled ONNX models (human-designed): optimum proved on " << human_proved << " of " << human_total
     << "; slowest " << Fixed(human_worst_ms, 0) << " ms.\n";
  nlohmann::ordered_json mdoc = {{"benchmark", "min_peak"}, {"machine", sp::bench::Machine()}, {"build", "release"},
                                 {"rows", mrows}};
  std::ofstream(out_dir + "/min_peak.json") << mdoc.dump(1) << "\n";
  std::ofstream(out_dir + "/min_peak.md") << mp.str();
  std::cerr << "wrote " << out_dir << "/min_peak.{json,md}\n";
  return 0;
}
