// Throughput (MAC/s) of the int8 runtime kernels (runtime/include/sramplan_rt_int8.h) at MCUNet
// (vMCU paper Table 2, models/mcunet_blocks/README.md) and ResNet-18 layer shapes, NHWC
// activations and TFLite weight layouts, measured with Google Benchmark.
// Writes bench/results/kernels.json and kernels.md (or --out DIR). Google Benchmark flags pass
// through (e.g. --benchmark_filter=dw, --benchmark_min_time=1); the defaults (min time 0.1 s, 3
// repetitions, the fastest by real time reported) keep the whole run well under a minute.
// GMAC/s is the MAC/s counter (Google Benchmark divides by CPU time); on a busy shared machine the
// real time can be longer than the CPU time, so the table shows both times.
#include "bench_util.h"
#include <benchmark/benchmark.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"

#ifndef SRAMPLAN_BUILD_TYPE
#define SRAMPLAN_BUILD_TYPE "unknown"
#endif
#ifndef SRAMPLAN_BENCHMARK_VERSION
#define SRAMPLAN_BENCHMARK_VERSION "(unknown version)"
#endif

namespace fs = std::filesystem;

namespace {

using sramplan::bench::Cores;
using sramplan::bench::CpuModel;
using sramplan::bench::LoadAverage;
using sramplan::bench::Machine;




enum class Kind { kConvGeneric, kDepthwise, kPointwise, kFullyConnected };

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kConvGeneric: return "sp_conv_s8_generic";
    case Kind::kDepthwise: return "sp_conv_s8_depthwise";
    case Kind::kPointwise: return "sp_conv_s8_pointwise";
    case Kind::kFullyConnected: return "sp_fully_connected_s8";
  }
  return "?";
}

// One benchmarked layer. Convolutions: input H x W x C (NHWC, batch 1), K output channels, an
// R x R kernel with the given stride and symmetric padding; groups == C for depthwise. Fully
// connected: C inputs, K outputs (H = W = 1).
struct Case {
  std::string name;   // benchmark name (unique)
  std::string model;  // where the shape comes from
  Kind kind;
  int32_t h, w, c, k, r, stride, pad, groups;

  int32_t OutH() const { return (h + 2 * pad - r) / stride + 1; }
  int32_t OutW() const { return (w + 2 * pad - r) / stride + 1; }
  // Multiply-accumulates of the layer as defined (padding taps included, as MAC counts usually are).
  int64_t Macs() const {
    if (kind == Kind::kFullyConnected) return int64_t{c} * k;
    return int64_t{OutH()} * OutW() * k * (c / groups) * r * r;
  }
  std::string Shape() const {
    std::ostringstream s;
    if (kind == Kind::kFullyConnected) {
      s << c << " -> " << k;
    } else {
      s << h << "x" << w << "x" << c << " -> " << OutH() << "x" << OutW() << "x" << k << ", " << r << "x" << r;
      if (groups > 1) s << " dw";
      s << ", s" << stride << ", p" << pad;
    }
    return s.str();
  }
};

std::vector<Case> Cases() {
  const Kind G = Kind::kConvGeneric, D = Kind::kDepthwise, P = Kind::kPointwise, F = Kind::kFullyConnected;
  // name, model, kind, h, w, c, k, r, stride, pad, groups
  return {
      {"mcunet_b1_stem_conv3x3", "MCUNet-320KB B1 stem", G, 176, 176, 3, 16, 3, 2, 1, 1},
      {"mcunet_b1_dw3x3", "MCUNet-320KB B1", D, 88, 88, 16, 16, 3, 1, 1, 16},
      {"mcunet_b3_dw3x3", "MCUNet-320KB B3", D, 44, 44, 80, 80, 3, 1, 1, 80},
      {"mcunet_b4_expand_pw", "MCUNet-320KB B4", P, 44, 44, 16, 80, 1, 1, 0, 1},
      {"mcunet_b4_dw7x7", "MCUNet-320KB B4", D, 44, 44, 80, 80, 7, 1, 3, 80},
      {"mcunet_b4_project_pw", "MCUNet-320KB B4", P, 44, 44, 80, 16, 1, 1, 0, 1},
      {"mcunet_b16_expand_pw", "MCUNet-320KB B16", P, 6, 6, 96, 480, 1, 1, 0, 1},
      {"mcunet_b16_dw7x7", "MCUNet-320KB B16", D, 6, 6, 480, 480, 7, 1, 3, 480},
      {"mcunet_fc", "MCUNet-320KB classifier", F, 1, 1, 160, 1000, 1, 1, 0, 1},
      // The generic path on shapes that have a fast path, to show what the fast paths buy.
      {"mcunet_b4_dw7x7_via_generic", "MCUNet-320KB B4", G, 44, 44, 80, 80, 7, 1, 3, 80},
      {"mcunet_b4_expand_pw_via_generic", "MCUNet-320KB B4", G, 44, 44, 16, 80, 1, 1, 0, 1},
      {"resnet18_conv3x3_56", "ResNet-18 layer1", G, 56, 56, 64, 64, 3, 1, 1, 1},
      {"resnet18_conv3x3_28", "ResNet-18 layer2", G, 28, 28, 128, 128, 3, 1, 1, 1},
      {"resnet18_downsample_pw", "ResNet-18 layer2 downsample", P, 56, 56, 64, 128, 1, 2, 0, 1},
      {"resnet18_fc", "ResNet-18 fc", F, 1, 1, 512, 1000, 1, 1, 0, 1},
  };
}

uint64_t Next(uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 33;
}

// Buffers and parameters of one layer, built once outside the timed loop.
struct Layer {
  sp_tensor_t in_desc, w_desc, out_desc;
  std::vector<int8_t> in, w, out;
  std::vector<int32_t> bias;
  std::vector<sp_requant_t> rq;
  int32_t in_zp = -3, out_zp = 5, act_min = -128, act_max = 127;
  int32_t stride[2], pad[4], dilation[2] = {1, 1}, groups = 1;
  Kind kind;

  explicit Layer(const Case& c) : kind(c.kind) {
    uint64_t seed = 0x5EED0000u + c.name.size() * 131u + static_cast<uint64_t>(c.c) * 7u + c.k;
    auto fill = [&](std::vector<int8_t>& v) {
      for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(Next(seed) & 0xFF) - 128);
    };
    const int32_t cg = c.c / c.groups;
    if (c.kind == Kind::kFullyConnected) {
      int32_t idims[2] = {1, c.c}, wdims[2] = {c.k, c.c}, odims[2] = {1, c.k};
      sp_tensor_init_contiguous(&in_desc, 2, idims);
      sp_tensor_init_contiguous(&w_desc, 2, wdims);  // TFLite FullyConnected weights [N, K]
      sp_tensor_init_contiguous(&out_desc, 2, odims);
    } else {
      sp_tensor_init_nhwc(&in_desc, 1, c.c, c.h, c.w);
      sp_tensor_init_nhwc(&out_desc, 1, c.k, c.OutH(), c.OutW());
      w_desc.rank = 4;
      w_desc.dims[0] = c.k;
      w_desc.dims[1] = cg;
      w_desc.dims[2] = c.r;
      w_desc.dims[3] = c.r;
      if (c.groups > 1 && c.groups == c.c) {
        // TFLite depthwise filter [1, R, S, K]: logical (K, 1, R, S), strides (1, 0, S*K, K).
        w_desc.strides[0] = 1;
        w_desc.strides[1] = 0;
        w_desc.strides[2] = c.r * c.k;
        w_desc.strides[3] = c.k;
      } else {
        // TFLite conv filter [K, R, S, C/groups]: logical (K, C/groups, R, S).
        w_desc.strides[0] = c.r * c.r * cg;
        w_desc.strides[1] = 1;
        w_desc.strides[2] = c.r * cg;
        w_desc.strides[3] = cg;
      }
    }
    in.resize(sp_tensor_span(&in_desc));
    w.resize(sp_tensor_span(&w_desc));
    out.assign(sp_tensor_span(&out_desc), 0);
    fill(in);
    fill(w);
    bias.resize(c.k);
    rq.resize(c.k);
    for (int32_t i = 0; i < c.k; ++i) {
      bias[i] = static_cast<int32_t>(Next(seed) % 2001) - 1000;
      // in_scale * w_scale[k] / out_scale, per channel, typical magnitudes.
      double w_scale = 0.002 + 0.00001 * static_cast<double>(Next(seed) % 200);
      rq[i] = sp_host_quantize_multiplier(0.02 * w_scale / 0.05);
    }
    stride[0] = stride[1] = c.stride;
    pad[0] = pad[1] = pad[2] = pad[3] = c.pad;
    groups = c.groups;
  }

  sp_status_t Run() {
    switch (kind) {
      case Kind::kConvGeneric:
        return sp_conv_s8_generic(&in_desc, in.data(), in_zp, &w_desc, w.data(), bias.data(), rq.data(), out_zp,
                                  act_min, act_max, stride, pad, dilation, groups, &out_desc, out.data());
      case Kind::kDepthwise:
        return sp_conv_s8_depthwise(&in_desc, in.data(), in_zp, &w_desc, w.data(), bias.data(), rq.data(), out_zp,
                                    act_min, act_max, stride, pad, dilation, groups, &out_desc, out.data());
      case Kind::kPointwise:
        return sp_conv_s8_pointwise(&in_desc, in.data(), in_zp, &w_desc, w.data(), bias.data(), rq.data(), out_zp,
                                    act_min, act_max, stride, pad, dilation, groups, &out_desc, out.data());
      case Kind::kFullyConnected:
        return sp_fully_connected_s8(&in_desc, in.data(), in_zp, &w_desc, w.data(), bias.data(), rq.data(), out_zp,
                                     act_min, act_max, &out_desc, out.data());
    }
    return SP_BAD_ARGUMENT;
  }
};

void BenchLayer(benchmark::State& state, const Case& c) {
  Layer layer(c);
  if (layer.Run() != SP_OK) {
    state.SkipWithError(("kernel rejected the arguments of " + c.name).c_str());
    return;
  }
  for (auto _ : state) {
    sp_status_t st = layer.Run();
    benchmark::DoNotOptimize(st);
    benchmark::DoNotOptimize(layer.out.data());
    benchmark::ClobberMemory();
  }
  state.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(c.Macs()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["MACs"] = static_cast<double>(c.Macs());
}

struct Result {
  double seconds_per_iter = 0;  // real time
  double cpu_seconds_per_iter = 0;
  double macs_per_s = 0;
  int64_t iterations = 0;
  int runs = 0;
  std::string error;
};

// Prints the usual console output and keeps, per benchmark, the fastest repetition.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, Result> results;

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      Result& r = results[run.run_name.function_name];
      ++r.runs;
      if (run.error_occurred) {
        r.error = run.error_message;
        continue;
      }
      const double mult = benchmark::GetTimeUnitMultiplier(run.time_unit);
      const double real_s = run.GetAdjustedRealTime() / mult;
      if (r.iterations == 0 || real_s < r.seconds_per_iter) {
        r.seconds_per_iter = real_s;
        r.cpu_seconds_per_iter = run.GetAdjustedCPUTime() / mult;
        r.iterations = run.iterations;
        auto it = run.counters.find("MAC/s");
        r.macs_per_s = it != run.counters.end() ? static_cast<double>(it->second.value) : 0.0;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

std::string FormatTime(double s) {
  std::ostringstream o;
  o << std::fixed;
  if (s >= 1) o << std::setprecision(3) << s << " s";
  else if (s >= 1e-3) o << std::setprecision(3) << s * 1e3 << " ms";
  else o << std::setprecision(2) << s * 1e6 << " us";
  return o.str();
}

std::string Fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
  // Our own flags out, a short default min time in (unless the caller set one).
  std::vector<char*> args;
  bool has_min_time = false, has_repetitions = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
      continue;
    }
    if (a.rfind("--out=", 0) == 0) {
      out_dir = a.substr(6);
      continue;
    }
    if (a.rfind("--benchmark_min_time", 0) == 0) has_min_time = true;
    if (a.rfind("--benchmark_repetitions", 0) == 0) has_repetitions = true;
    args.push_back(argv[i]);
  }
  static char default_min_time[] = "--benchmark_min_time=0.1";
  static char default_repetitions[] = "--benchmark_repetitions=3";
  if (!has_min_time) args.insert(args.begin() + 1, default_min_time);
  if (!has_repetitions) args.insert(args.begin() + 1, default_repetitions);
  int bargc = static_cast<int>(args.size());
  args.push_back(nullptr);

  const std::vector<Case> cases = Cases();
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark(c.name.c_str(), [c](benchmark::State& s) { BenchLayer(s, c); })
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&bargc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, args.data())) return 1;

  CollectingReporter reporter;
  const auto t0 = std::chrono::steady_clock::now();
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  benchmark::Shutdown();

  const std::string machine = Machine();
  const std::string build = SRAMPLAN_BUILD_TYPE;
  std::ostringstream md;
  md << "# int8 kernel throughput\n\n"
     << "Machine: " << machine << ". Build: " << build << " (" << __VERSION__
     << "). Single thread, batch 1, NHWC activations, TFLite weight layouts, per-channel requantisation. "
     << "Google Benchmark " << SRAMPLAN_BENCHMARK_VERSION << ", the fastest of the repetitions by real time. "
     << "GMAC/s = MACs / CPU time per iteration (the `MAC/s` counter); `GMAC/s (real)` uses the real time. "
     << "MACs count every tap of the window, padding included.\n\n"
     << "| kernel | benchmark | shape | MACs | time/iter (real) | CPU time/iter | GMAC/s | GMAC/s (real) |\n"
     << "|---|---|---|---:|---:|---:|---:|---:|\n";
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Case& c : cases) {
    auto it = reporter.results.find(c.name);
    if (it == reporter.results.end()) continue;  // filtered out
    const Result& r = it->second;
    nlohmann::ordered_json row = {{"name", c.name}, {"kernel", KindName(c.kind)}, {"model", c.model},
                                  {"shape", c.Shape()}, {"macs", c.Macs()}};
    if (!r.error.empty()) {
      row["error"] = r.error;
      md << "| " << KindName(c.kind) << " | " << c.name << " | " << c.Shape() << " | " << c.Macs()
         << " | error: " << r.error << " | | | |\n";
    } else {
      row["real_time_per_iter_s"] = r.seconds_per_iter;
      row["cpu_time_per_iter_s"] = r.cpu_seconds_per_iter;
      row["iterations"] = r.iterations;
      row["repetitions"] = r.runs;
      row["macs_per_s"] = r.macs_per_s;
      row["gmacs_per_s"] = r.macs_per_s / 1e9;
      row["gmacs_per_s_real_time"] = static_cast<double>(c.Macs()) / r.seconds_per_iter / 1e9;
      md << "| " << KindName(c.kind) << " | " << c.name << " | " << c.Shape() << " | " << c.Macs() << " | "
         << FormatTime(r.seconds_per_iter) << " | " << FormatTime(r.cpu_seconds_per_iter) << " | "
         << Fixed(r.macs_per_s / 1e9, 3) << " | " << Fixed(static_cast<double>(c.Macs()) / r.seconds_per_iter / 1e9, 3)
         << " |\n";
    }
    rows.push_back(row);
  }
  md << "\nTotal benchmark time: " << Fixed(total_s, 1) << " s. Load average at the end: " << LoadAverage()
     << " (shared machine).\n";
  nlohmann::ordered_json doc = {{"benchmark", "kernels"}, {"machine", machine}, {"cpu", CpuModel()},
                                {"cores", std::max(1u, std::thread::hardware_concurrency())},
                                {"build", build}, {"compiler", __VERSION__}, {"benchmark_library", SRAMPLAN_BENCHMARK_VERSION},
                                {"load_average_end", LoadAverage()}, {"total_s", total_s},
                                {"results", rows}};
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  std::ofstream(out_dir + "/kernels.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/kernels.md") << md.str();
  std::cout << "\n" << md.str();
  std::cerr << "wrote " << out_dir << "/kernels.json and kernels.md\n";
  return 0;
}
