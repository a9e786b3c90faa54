// Issue 16, part 7: a blocked direct convolution on x86 whose blocking comes from the blocking
// optimiser run on this host's cache hierarchy (L1d/L2/L3 sizes from
// /sys/devices/system/cpu/cpu0/cache), against im2col + OpenBLAS SGEMM and oneDNN's convolution, on
// the blocking paper's Table 4 conv layers (Conv1..Conv5; Conv1, 2, 4, 5 scaled down so the cache
// simulation finishes, see kLayers). float32, one thread and AVX2 (no AVX-512) for every implementation.
//
// Modes:
//   bench_blocking_x86 [--out DIR] [--reps N] [--no-valgrind] [--layers Conv1,Conv3] [--min-depth D]
//       (the search runs with x86::KernelSearchOptions: whole SIMD K chunks in the L1 tile and at
//       least D (c, fw, fh) accumulation steps, default x86::kDefaultMinAccumDepth; 0 = K chunks only)
//       native runs (wall time: N interleaved repetitions, best and median; max |error| against a
//       double-accumulated reference), then, unless --no-valgrind or valgrind is missing, re-runs
//       itself under valgrind's cache simulator for each (layer, impl) twice (LL = the host L2, then
//       LL = the host L3), caches cold at the measured call, and writes DIR/blocking_x86.{json,md}.
//   bench_blocking_x86 --one LAYER IMPL STRING EVICT_BYTES   one cold run (what valgrind runs).
//
// The blocked kernel is src/blocking/x86_conv.h: the string's loops outside the L1 cut in the
// string's order and sizes, a register-blocked AVX2/FMA micro-kernel (6 pixels x 16 kernels in 12
// ymm accumulators) inside. Layouts: input [y][x][c], weights [fh][fw][c][k] (packed once per plan,
// outside the measured call), output [y][x][k] (batch 1, stride 1, no padding); the blocked kernel
// reads/writes the tile-blocked layouts of x86_conv.h, converted outside the measured call like
// oneDNN's reorders.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_util.h"
#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "blocking/x86_conv.h"

namespace bl = sramplan::blocking;
namespace x86 = sramplan::blocking::x86;
using nlohmann::ordered_json;

namespace {

struct Shape {
  const char* name;
  int x, y, c, k, fw, fh;
  const char* note;
};
// Table 4: Conv1 256x256x256->384 11x11, Conv2 500x375x32->48 9x9, Conv3 32x32x108->200 4x4,
// Conv4 56x56x128->256 3x3, Conv5 28x28x256->512 3x3. The cache simulation runs ~100x slower than
// native, so the layers are cut to 0.06-0.35 G MACs each (window and the channel ratio kept).
const Shape kLayers[] = {
    {"Conv1", 16, 16, 64, 96, 11, 11, "scaled: X,Y 256->16, C 256->64, K 384->96"},
    {"Conv2", 25, 20, 32, 48, 9, 9, "scaled: X 500->25, Y 375->20"},
    {"Conv3", 32, 32, 108, 200, 4, 4, "full size"},
    {"Conv4", 28, 28, 128, 256, 3, 3, "scaled: X,Y 56->28"},
    {"Conv5", 14, 14, 256, 512, 3, 3, "scaled: X,Y 28->14"},
};

struct Data {
  Shape s;
  int xi, yi;
  std::vector<float> in, w, out;
};

Data MakeData(const Shape& s) {
  Data d{s, s.x + s.fw - 1, s.y + s.fh - 1, {}, {}, {}};
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  d.in.resize(static_cast<size_t>(d.xi) * d.yi * s.c);
  d.w.resize(static_cast<size_t>(s.fh) * s.fw * s.c * s.k);
  d.out.assign(static_cast<size_t>(s.x) * s.y * s.k, 0.f);
  for (float& v : d.in) v = u(rng);
  for (float& v : d.w) v = u(rng);
  return d;
}

bl::Layer ToLayer(const Shape& s) { return bl::ConvLayer(s.name, s.x, s.y, s.c, s.k, s.fw, s.fh); }

struct Plan {
  x86::ConvPlan conv;  // the string, the L1 cut and the packed weights (packing not timed)
  std::vector<float> in_blk;           // the input in the plan's blocked layout (packing not timed)
  mutable std::vector<float> out_blk;  // the output in the blocked layout (unpacked after the call)
  double energy_pj = 0;
  bool avx2 = false;
};

Plan PlanFromString(const Data& d, const x86::HostCaches& c, const bl::BlockingString& str) {
  auto p = x86::MakeConvPlan(ToLayer(d.s), str, c.l1d, d.w);
  if (!p.ok()) {
    std::cerr << p.status().message() << "\n";
    std::exit(1);
  }
  Plan plan{std::move(*p), std::vector<float>(d.in.size()), std::vector<float>(d.out.size()), 0, x86::HasAvx2Fma()};
  x86::PackInput(plan.conv, d.in.data(), plan.in_blk.data());
  return plan;
}

Plan MakePlan(const Data& d, const x86::HostCaches& c, const bl::Hierarchy& h, int64_t min_depth) {
  bl::SearchOptions opt = x86::KernelSearchOptions(ToLayer(d.s), min_depth);
  opt.threads = 1;
  opt.time_limit_s = 5;
  auto r = bl::HeuristicSearch(ToLayer(d.s), h, opt);
  if (!r.ok()) {
    std::cerr << r.status().message() << "\n";
    std::exit(1);
  }
  Plan p = PlanFromString(d, c, r->best);
  p.energy_pj = r->eval.total_pj;
  return p;
}

// --- the three implementations ---
void RunBlocked(const Plan& p) { x86::RunBlockedConvUnchecked(p.conv, p.in_blk.data(), p.out_blk.data(), p.avx2); }

void RunOpenblas(Data& d, std::vector<float>* col) {
  const Shape& s = d.s;
  const int r = s.fh * s.fw * s.c, np = s.x * s.y;
  col->resize(static_cast<size_t>(np) * r);
  for (int y = 0; y < s.y; ++y)
    for (int x = 0; x < s.x; ++x) {
      float* dst = col->data() + (static_cast<size_t>(y) * s.x + x) * r;
      for (int fh = 0; fh < s.fh; ++fh)
        for (int fw = 0; fw < s.fw; ++fw, dst += s.c)
          std::memcpy(dst, d.in.data() + (static_cast<size_t>(y + fh) * d.xi + x + fw) * s.c, sizeof(float) * s.c);
    }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, np, s.k, r, 1.f, col->data(), r, d.w.data(), s.k, 0.f,
              d.out.data(), s.k);
}

struct Onednn {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  dnnl::memory src, wei, dst, user_dst;
  explicit Onednn(Data& d) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const Shape& s = d.s;
    dnnl::memory::desc us({1, s.c, d.yi, d.xi}, dt::f32, tag::nhwc), uw({s.k, s.c, s.fh, s.fw}, dt::f32, tag::hwio),
        ud({1, s.k, s.y, s.x}, dt::f32, tag::nhwc);
    dnnl::memory::desc as({1, s.c, d.yi, d.xi}, dt::f32, tag::any), aw({s.k, s.c, s.fh, s.fw}, dt::f32, tag::any),
        ad({1, s.k, s.y, s.x}, dt::f32, tag::any);
    dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, as, aw,
                                       ad, {1, 1}, {0, 0}, {0, 0});
    dnnl::convolution_forward::primitive_desc pd(cd, eng);
    conv = dnnl::convolution_forward(pd);
    dnnl::memory usrc(us, eng, d.in.data()), uwei(uw, eng, d.w.data());
    user_dst = dnnl::memory(ud, eng, d.out.data());
    src = dnnl::memory(pd.src_desc(), eng);
    wei = dnnl::memory(pd.weights_desc(), eng);
    dst = dnnl::memory(pd.dst_desc(), eng);
    dnnl::reorder(usrc, src).execute(strm, usrc, src);  // layout conversions outside the measured region
    dnnl::reorder(uwei, wei).execute(strm, uwei, wei);
    strm.wait();
  }
  void Run() {
    conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
  void Fetch() {
    dnnl::reorder(dst, user_dst).execute(strm, dst, user_dst);
    strm.wait();
  }
};

std::vector<double> Reference(const Data& d) {
  const Shape& s = d.s;
  std::vector<double> ref(d.out.size(), 0.0);
  for (int y = 0; y < s.y; ++y)
    for (int x = 0; x < s.x; ++x)
      for (int fh = 0; fh < s.fh; ++fh)
        for (int fw = 0; fw < s.fw; ++fw)
          for (int c = 0; c < s.c; ++c) {
            double a = d.in[(static_cast<size_t>(y + fh) * d.xi + x + fw) * s.c + c];
            const float* wk = d.w.data() + ((static_cast<size_t>(fh) * s.fw + fw) * s.c + c) * s.k;
            double* o = ref.data() + (static_cast<size_t>(y) * s.x + x) * s.k;
            for (int k = 0; k < s.k; ++k) o[k] += a * wk[k];
          }
  return ref;
}

void Dispatch(int impl, void* d, const void* p, void* col, void* dn) {
  if (impl == 0) RunBlocked(*static_cast<const Plan*>(p));
  else if (impl == 1) static_cast<Onednn*>(dn)->Run();
  else RunOpenblas(*static_cast<Data*>(d), static_cast<std::vector<float>*>(col));
}

void WriteHeader(std::ostream& md, const x86::HostCaches& caches, int reps, bool valgrind, const std::string& load0,
                 const std::string& load1) {
  md << "# Blocked direct convolution vs oneDNN vs im2col + OpenBLAS (issue 16)\n\n"
     << "Machine: " << sramplan::bench::Machine() << "; load average " << load0 << " before, " << load1
     << " after (other processes share the 2 cores). Caches "
     << (caches.from_sysfs ? "from /sys/devices/system/cpu/cpu0/cache" : "(sysfs unreadable: defaults)") << ": L1d "
     << caches.l1d / 1024 << " KiB, L2 " << caches.l2 / 1024 << " KiB, L3 " << caches.l3 / 1024
     << " KiB. float32, batch 1, one thread each, AVX2 kernels everywhere (blocked: the register-blocked AVX2/FMA "
     << "micro-kernel of src/blocking/x86_conv_avx2.cc; ONEDNN_MAX_CPU_ISA=AVX2, OPENBLAS_CORETYPE=Haswell, since "
     << "valgrind cannot run AVX-512) (OpenBLAS " << OPENBLAS_VERSION << ", oneDNN " << dnnl::version()->major << "."
     << dnnl::version()->minor << "." << dnnl::version()->patch << ").\n\n"
     << "Wall time: " << reps << " interleaved repetitions (each repetition runs the three in a rotating order, "
     << "after one warm-up run each), warm caches; **wall ms** = best, **median ms** = median, **x oneDNN** = best / "
     << "oneDNN's best. Measured call: blocked = the whole blocked loop nest (its weight packing, done once per "
     << "plan, and the input/output conversions to/from its tile-blocked layouts excluded); onednn = the convolution primitive (its src/weights reorders to its chosen layout "
     << "excluded); openblas = im2col + sgemm. max_abs_err against a double-accumulated direct convolution.\n\n"
     << "Misses: valgrind " << (valgrind ? "3.19 callgrind --cache-sim=yes (cachegrind's two-level simulator), "
                                           "counted only inside the measured call; "
                                         : "not run; ")
     << "it simulates I1/D1 and one last level (LL), so each case runs twice with D1 = the host L1d (8-way): "
     << "**l2_misses** = LL misses (instr. + data reads + data writes) with LL = the host L2 (" << caches.l2 / 1024
     << " KiB, 8-way); **l3_misses** = LL misses with LL = the host L3 (" << caches.l3 / 1024
     << " KiB, 16-way) directly behind D1 (no L2 in between, inclusive, LRU). **Cold start**: just before the "
     << "measured call the process writes and reads a buffer of twice the simulated LL, so every operand (and "
     << "oneDNN's reordered copies, the packed weights, OpenBLAS's im2col buffer) starts in memory, as after other "
     << "layers ran; the misses are then compulsory (operand sizes) plus capacity/conflict refetches. Not hardware "
     << "counters.\n\n"
     << "| layer | shape (X Y C K Fw Fh) | impl | wall ms | median ms | x oneDNN | GMAC/s | l2_misses | l3_misses | D1 misses | max_abs_err |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
}

}  // namespace

// The measured region: valgrind's cache simulation is switched on only inside this function
// (callgrind --toggle-collect=sp_x86_measured).
extern "C" __attribute__((noinline)) void sp_x86_measured(int impl, void* d, const void* p, void* col, void* dn) {
  Dispatch(impl, d, p, col, dn);
  asm volatile("" ::: "memory");  // no tail call: callgrind would see the jump as leaving the function
}

namespace {

const char* kImpl[] = {"blocked", "onednn", "openblas"};

// Everything one layer's three implementations need, built before any measured call: the data, the
// blocked plan (packed weights), oneDNN's primitive with its reordered src/weights, OpenBLAS's
// im2col buffer (allocated by its first run).
struct Runner {
  Data d;
  Plan p;
  std::vector<float> col;
  std::unique_ptr<Onednn> dn;
  Runner(Data data, Plan plan) : d(std::move(data)), p(std::move(plan)) { dn = std::make_unique<Onednn>(d); }
  double Time(int impl) {
    auto t0 = std::chrono::steady_clock::now();
    sp_x86_measured(impl, &d, &p, &col, dn.get());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  // One more run of `impl`, its output in d.out.
  void Output(int impl) {
    std::fill(d.out.begin(), d.out.end(), 0.f);
    Time(impl);
    if (impl == 0) x86::UnpackOutput(p.conv, p.out_blk.data(), d.out.data());
    if (impl == 1) dn->Fetch();
  }
};

// Evicts every cache level: writes then reads a buffer of `bytes` (twice the LL), so the measured
// call starts cold (its operands come from memory, as after other layers ran).
void EvictCaches(int64_t bytes) {
  std::vector<char> junk(static_cast<size_t>(bytes), 1);
  volatile char sink = 0;
  for (size_t i = 0; i < junk.size(); i += 64) sink = sink + junk[i];
}

// LL misses (instruction + data reads + data writes) inside sp_x86_measured, from callgrind's
// cache simulation with D1 = the host L1d and LL = `ll` (bytes, `ways`), caches cold at the call.
int64_t Simulate(const std::string& self, const Shape& s, int impl, const std::string& str, const x86::HostCaches& c,
                 int64_t ll, int ways, int64_t* d1_misses) {
  std::string out = "/tmp/sp_x86_cg." + std::to_string(getpid());
  std::string cmd = "valgrind --tool=callgrind --cache-sim=yes "
                    "--toggle-collect=sp_x86_measured --I1=32768,8,64 --D1=" + std::to_string(c.l1d) + ",8,64 --LL=" +
                    std::to_string(ll) + "," + std::to_string(ways) + ",64 --callgrind-out-file=" + out + " " + self +
                    " --one " + s.name + " " + kImpl[impl] + " '" + str + "' " + std::to_string(2 * ll) + " > " + out +
                    ".log 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "valgrind failed: " << cmd << "\n";
    return -1;
  }
  std::ifstream f(out);
  std::string line, events;
  std::vector<int64_t> vals;
  while (std::getline(f, line)) {
    if (line.rfind("events:", 0) == 0) events = line.substr(7);
    if (line.rfind("totals:", 0) == 0 || line.rfind("summary:", 0) == 0) {
      std::istringstream is(line.substr(line.find(':') + 1));
      vals.clear();
      int64_t v;
      while (is >> v) vals.push_back(v);
    }
  }
  std::remove(out.c_str());
  std::remove((out + ".log").c_str());
  std::istringstream es(events);
  std::string e;
  int64_t ll_miss = 0, d1 = 0;
  for (size_t i = 0; es >> e; ++i) {
    if (i >= vals.size()) break;
    if (e == "ILmr" || e == "DLmr" || e == "DLmw") ll_miss += vals[i];
    if (e == "D1mr" || e == "D1mw") d1 += vals[i];
  }
  *d1_misses = d1;
  return ll_miss;
}

// --one LAYER IMPL STRING EVICT_BYTES: one cold run of one implementation (what valgrind runs).
int RunOneUnderSimulator(char** argv, const x86::HostCaches& caches) {
  for (const Shape& s : kLayers)
    if (s.name == std::string(argv[2]))
      for (int i = 0; i < 3; ++i)
        if (kImpl[i] == std::string(argv[3])) {
          Data d = MakeData(s);
          auto str = bl::ParseBlockingString(argv[4], ToLayer(s));
          if (!str.ok()) {
            std::cerr << str.status().message() << "\n";
            return 1;
          }
          Plan p = PlanFromString(d, caches, *str);  // the parent's string (no search under the simulator)
          Runner r(std::move(d), std::move(p));
          if (i == 2) r.Time(2);  // OpenBLAS: its im2col buffer allocated, as in the timed runs
          EvictCaches(std::atoll(argv[5]));
          r.Time(i);
          return 0;
        }
  std::cerr << "--one LAYER IMPL STRING EVICT_BYTES: unknown layer or impl\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);
  setenv("OMP_NUM_THREADS", "1", 0);
  x86::HostCaches caches = x86::ReadHostCaches();
  bl::Hierarchy h = x86::HostHierarchy(caches);
  // oneDNN's OpenMP and OpenBLAS read these when loaded: re-exec with one thread and AVX2 kernels
  // everywhere (valgrind 3.19 cannot run AVX-512, and its virtual CPU hides it, so native and
  // simulated runs must use the same ISA).
  if (!getenv("OMP_NUM_THREADS") || !getenv("ONEDNN_MAX_CPU_ISA")) {
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
    setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    execv("/proc/self/exe", argv);
  }
  if (argc == 6 && std::string(argv[1]) == "--one") return RunOneUnderSimulator(argv, caches);
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
  int reps = 9;
  int64_t min_depth = x86::kDefaultMinAccumDepth;
  std::string only;
  bool valgrind = std::system("valgrind --version > /dev/null 2>&1") == 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-valgrind") valgrind = false;
    else if (a == "--min-depth" && i + 1 < argc) min_depth = std::max(0, std::atoi(argv[++i]));
    else if (a == "--layers" && i + 1 < argc) only = std::string(",") + argv[++i] + ",";
    else {
      std::cerr << "unknown flag " << a << "\n";
      return 1;
    }
  }
  std::string self = "/proc/self/exe";
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) self.assign(buf, n);
  const std::string load_before = sramplan::bench::LoadAverage();
  ordered_json records = ordered_json::array();
  std::ostringstream rows;
  for (const Shape& s : kLayers) {
    if (!only.empty() && only.find(std::string(",") + s.name + ",") == std::string::npos) continue;
    std::cerr << s.name << "...\n";
    Data d = MakeData(s);
    std::vector<double> ref = Reference(d);
    Plan p = MakePlan(d, caches, h, min_depth);
    Runner run(std::move(d), std::move(p));
    const double macs = 1.0 * s.x * s.y * s.c * s.k * s.fw * s.fh;
    for (int i = 0; i < 3; ++i) run.Time(i);  // warm-up (OpenBLAS allocates its im2col buffer)
    // Interleaved: rep r runs the three in a rotating order, so load from other processes hits all alike.
    std::vector<double> best(3, 1e30);
    std::vector<std::vector<double>> all(3);
    for (int r = 0; r < reps; ++r)
      for (int j = 0; j < 3; ++j) {
        const int i = (r + j) % 3;
        const double ms = run.Time(i);
        all[i].push_back(ms);
        best[i] = std::min(best[i], ms);
      }
    for (int i = 0; i < 3; ++i) {
      run.Output(i);
      double err = 0;
      for (size_t j = 0; j < ref.size(); ++j) err = std::max(err, std::fabs(ref[j] - run.d.out[j]));
      std::vector<double> sorted = all[i];
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sorted.size() / 2];
      int64_t l2 = -1, l3 = -1, d1 = -1;
      const std::string str = bl::ToString(run.p.conv.str);
      if (valgrind) {
        l2 = Simulate(self, s, i, str, caches, caches.l2, 8, &d1);
        l3 = Simulate(self, s, i, str, caches, caches.l3, 16, &d1);
      }
      ordered_json rec = {{"layer", s.name}, {"impl", kImpl[i]}, {"wall_ms", best[i]}, {"wall_ms_median", median},
                          {"wall_vs_onednn", best[i] / best[1]}, {"l2_misses", l2}, {"l3_misses", l3},
                          {"max_abs_err", err}, {"d1_misses", d1}, {"macs", macs},
                          {"shape", {{"X", s.x}, {"Y", s.y}, {"C", s.c}, {"K", s.k}, {"Fw", s.fw}, {"Fh", s.fh}}},
                          {"shape_note", s.note}};
      if (i == 0) {
        rec["string"] = str;
        rec["tile_cut"] = run.p.conv.cut;
        rec["k_multiple"] = x86::KernelSearchOptions(ToLayer(s)).k_multiple;
        rec["model_energy_pj"] = run.p.energy_pj;
        rec["kernel"] = run.p.avx2 ? "avx2-fma" : "portable";
      }
      records.push_back(rec);
      char row[512];
      std::snprintf(row, sizeof row, "| %s | %d %d %d %d %d %d | %s | %.2f | %.2f | %.2f | %.2f | %lld | %lld | %lld | %.2e |\n",
                    s.name, s.x, s.y, s.c, s.k, s.fw, s.fh, kImpl[i], best[i], median, best[i] / best[1],
                    macs / best[i] / 1e6, static_cast<long long>(l2), static_cast<long long>(l3),
                    static_cast<long long>(d1), err);
      rows << row;
      std::cerr << row;
    }
  }
  const std::string load_after = sramplan::bench::LoadAverage();
  std::ostringstream md;
  WriteHeader(md, caches, reps, valgrind, load_before, load_after);
  md << rows.str() << "\nShapes: ";
  for (const Shape& s : kLayers) md << s.name << " " << s.note << "; ";
  md << "(Table 4 sizes would take hours under the simulator). Blocked strings (optimiser on the host hierarchy, "
        "heuristic search; loops outside the L1 tile follow it) are in blocking_x86.json.\n";
  ordered_json doc = {{"benchmark", "blocking_x86"}, {"machine", sramplan::bench::Machine()},
                      {"load_before", load_before}, {"load_after", load_after},
                      {"caches", {{"l1d", caches.l1d}, {"l2", caches.l2}, {"l3", caches.l3}}},
                      {"reps", reps}, {"min_accum_depth", min_depth}, {"records", records}};
  std::ofstream(out_dir + "/blocking_x86.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/blocking_x86.md") << md.str();
  std::cout << md.str();
  return 0;
}
