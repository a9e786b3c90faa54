// Issue 12 (scale): wall time and peak memory of the CLI on random Relu/Add DAGs of 1k to 100k ops
// (bench/random_dag.h). Each run is a child process `sramplan plan GRAPH --target stm32f411re
// --strategy S [--schedule minpeak] --json PLAN -q`; its peak RSS comes from wait4's rusage, its
// wall time from the parent's clock. Writes bench/results/scale.json and scale.md (or --out DIR).
//
//   bench_scale [--out DIR] [--sizes 1000,10000] [--timeout S] [--memory-limit MiB]
//   bench_scale --write-graph N SEED FILE      (only write one graph)
//
// Goals (issue 12): 50,000 ops with tflm in < 10 s and < 1 GB; 10,000 ops with optimal --schedule
// minpeak in < 60 s; bytes per op roughly constant up to 100k ops.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "random_dag.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kSeed = 12;

struct Case {
  int ops;
  std::string strategy;
  std::string schedule;  // "model" or "minpeak"
};

struct Run {
  double seconds = 0;
  double cpu_seconds = 0;  // user + system time of the child (what load on the machine does not inflate)
  int64_t peak_rss_bytes = 0;
  int exit_code = -1;  // -1: killed (see signal)
  int signal = 0;
  bool timed_out = false;
};

// Runs argv as a child with an address-space limit; kills it after `timeout_s`.
Run Spawn(const std::vector<std::string>& args, double timeout_s, int64_t memory_limit_bytes) {
  Run run;
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return run;
  }
  if (pid == 0) {
    if (memory_limit_bytes > 0) {
      struct rlimit lim = {static_cast<rlim_t>(memory_limit_bytes), static_cast<rlim_t>(memory_limit_bytes)};
      setrlimit(RLIMIT_AS, &lim);
    }
    const int null_fd = open("/dev/null", O_WRONLY);  // the verdict text is not the measurement
    if (null_fd >= 0) {
      dup2(null_fd, 1);
      dup2(null_fd, 2);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror("execv");
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  while (true) {
    const pid_t r = wait4(pid, &status, WNOHANG, &usage);
    if (r == pid) break;
    if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_s && !run.timed_out) {
      kill(pid, SIGKILL);
      run.timed_out = true;
    }
    usleep(2000);
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  run.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  return run;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string WithCommas(int64_t v) {
  std::string s = std::to_string(v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
  std::vector<int> only_sizes;
  double timeout_s = 300;
  int64_t memory_limit = int64_t{3} << 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--write-graph" && i + 3 < argc) {
      std::ofstream(argv[i + 3]) << sramplan::bench::RandomReluAddGraphJson(std::atoi(argv[i + 1]),
                                                                             std::strtoull(argv[i + 2], nullptr, 10));
      return 0;
    }
    if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (a == "--timeout" && i + 1 < argc) timeout_s = std::atof(argv[++i]);
    else if (a == "--memory-limit" && i + 1 < argc) memory_limit = std::atoll(argv[++i]) << 20;
    else if (a == "--sizes" && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ',')) only_sizes.push_back(std::atoi(item.c_str()));
    } else {
      std::cerr << "usage: bench_scale [--out DIR] [--sizes N,N...] [--timeout S] [--memory-limit MiB]\n"
                   "       bench_scale --write-graph N SEED FILE\n";
      return 1;
    }
  }
  const std::vector<Case> cases = {
      {1000, "tflm", "model"},      {10000, "tflm", "model"},     {50000, "tflm", "model"},
      {100000, "tflm", "model"},    {1000, "optimal", "minpeak"}, {10000, "optimal", "minpeak"},
  };
  const fs::path work = fs::temp_directory_path() / ("sramplan_scale_" + std::to_string(getpid()));
  fs::create_directories(work);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::ostringstream md;
  md << "# Scale: random Relu/Add DAGs\n\nMachine: " << sramplan::bench::Machine()
     << ". Load average at start: " << sramplan::bench::LoadAverage() << ". Build: release.\n\n"
     << "Each row is one run of `sramplan plan GRAPH --target stm32f411re --strategy S [--schedule minpeak] "
        "--json PLAN -q` as a child process (graphs: `bench/random_dag.h`, seed "
     << kSeed << "; int8, two inputs of 1 and 2 KiB, each op a Relu or an Add of tensors made by the last 8 "
        "ops). Time: wall clock of the child; CPU: its user + system time (the machine is shared: with a load "
        "average above the core count, wall time is inflated and CPU time is the better measure). Peak RSS: `ru_maxrss` of the child (wait4), address space limited "
        "to "
     << (memory_limit >> 20) << " MiB. Goals: 50,000 ops with tflm < 10 s and < 1 GB; 10,000 ops with optimal "
        "--schedule minpeak < 60 s; bytes per op roughly constant.\n\n"
     << "| ops | strategy | schedule | graph file | time (s) | CPU (s) | peak RSS (MiB) | RSS bytes per op | plan.json | exit |\n"
     << "|---:|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Case& c : cases) {
    if (!only_sizes.empty() && std::find(only_sizes.begin(), only_sizes.end(), c.ops) == only_sizes.end()) continue;
    const fs::path graph = work / ("relu_add_" + std::to_string(c.ops) + ".graph.json");
    if (!fs::exists(graph)) std::ofstream(graph) << sramplan::bench::RandomReluAddGraphJson(c.ops, kSeed);
    const fs::path plan = work / "plan.json";
    std::error_code ec;
    fs::remove(plan, ec);
    std::vector<std::string> args = {SRAMPLAN_CLI, "plan", graph.string(), "--target", "stm32f411re",
                                     "--strategy", c.strategy, "--schedule", c.schedule,
                                     "--json", plan.string(), "-q"};
    std::cerr << "scale: " << c.ops << " ops, " << c.strategy << " / " << c.schedule << " ..." << std::flush;
    const Run run = Spawn(args, timeout_s, memory_limit);
    const int64_t graph_bytes = static_cast<int64_t>(fs::file_size(graph));
    const int64_t plan_bytes = fs::exists(plan) ? static_cast<int64_t>(fs::file_size(plan)) : 0;
    std::string exit = run.timed_out ? "timeout (" + Fixed(timeout_s, 0) + " s)"
                       : run.signal    ? "signal " + std::to_string(run.signal)
                                       : std::to_string(run.exit_code);
    std::cerr << " " << Fixed(run.seconds, 2) << " s (CPU " << Fixed(run.cpu_seconds, 2) << " s), " << (run.peak_rss_bytes >> 20) << " MiB, exit " << exit
              << "\n";
    const double per_op = static_cast<double>(run.peak_rss_bytes) / c.ops;
    rows.push_back({{"ops", c.ops},
                    {"strategy", c.strategy},
                    {"schedule", c.schedule},
                    {"graph_file_bytes", graph_bytes},
                    {"seconds", run.seconds},
                    {"cpu_seconds", run.cpu_seconds},
                    {"peak_rss_bytes", run.peak_rss_bytes},
                    {"rss_bytes_per_op", per_op},
                    {"plan_json_bytes", plan_bytes},
                    {"exit_code", run.exit_code},
                    {"signal", run.signal},
                    {"timed_out", run.timed_out}});
    md << "| " << WithCommas(c.ops) << " | " << c.strategy << " | " << c.schedule << " | "
       << Fixed(graph_bytes / 1048576.0, 1) << " MiB | " << Fixed(run.seconds, 2) << " | "
       << Fixed(run.cpu_seconds, 2) << " | "
       << Fixed(run.peak_rss_bytes / 1048576.0, 1) << " | " << WithCommas(static_cast<int64_t>(per_op)) << " | "
       << Fixed(plan_bytes / 1048576.0, 1) << " MiB | " << exit << " |\n";
  }
  fs::remove_all(work);
  nlohmann::ordered_json doc = {{"benchmark", "scale"},
                                {"machine", sramplan::bench::Machine()},
                                {"cpu", sramplan::bench::CpuModel()},
                                {"cores", sramplan::bench::Cores()},
                                {"load_average", sramplan::bench::LoadAverage()},
                                {"build", "release"},
                                {"seed", kSeed},
                                {"memory_limit_bytes", memory_limit},
                                {"results", rows}};
  fs::create_directories(out_dir);
  std::ofstream(out_dir + "/scale.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/scale.md") << md.str();
  std::cout << md.str();
  return 0;
}
