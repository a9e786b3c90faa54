// Issue 16, part 7: a blocked direct convolution on x86 whose blocking comes from the blocking
// optimiser run on this host's cache hierarchy (L1d/L2/L3 sizes from
// /sys/devices/system/cpu/cpu0/cache), against im2col + OpenBLAS SGEMM and oneDNN's convolution, on
// the blocking paper's Table 4 conv layers (Conv1..Conv5; Conv1, 2, 4, 5 scaled down so the cache
// simulation finishes, see kLayers). float32, one thread and AVX2 (no AVX-512) for every implementation.
//
// Modes:
//   bench_blocking_x86 [--out DIR] [--reps N] [--no-valgrind]
//       native runs (wall time best of N, max |error| against a double-accumulated reference), then,
//       unless --no-valgrind or valgrind is missing, re-runs itself under valgrind's cache simulator
//       for each (layer, impl) twice (LL = the host L2, then LL = the host L3) and writes
//       DIR/blocking_x86.{json,md}.
//   bench_blocking_x86 --one LAYER IMPL   one run of one implementation (what valgrind runs).
//
// The blocked kernel: the string's loops outside the L1 cut (the largest cut whose three tiles fit
// in half of L1d) run in the string's order with its sizes; the tile inside runs a fixed micro-kernel
// (output rows, columns, window, input channels, kernels innermost and vectorised by the compiler).
// Layouts: input [y][x][c], weights [fh][fw][c][k], output [y][x][k] (batch 1, stride 1, no padding).
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

namespace bl = sramplan::blocking;
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

// --- the host hierarchy and the optimiser's string ---
int64_t ReadCache(int index, std::string* type, int* level) {
  std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
  std::ifstream fs(base + "size"), ft(base + "type"), fl(base + "level");
  std::string size;
  if (!(fs >> size) || !(ft >> *type) || !(fl >> *level)) return -1;
  int64_t v = std::atoll(size.c_str());
  if (size.back() == 'K') v <<= 10;
  if (size.back() == 'M') v <<= 20;
  return v;
}

struct HostCaches {
  int64_t l1 = 32 << 10, l2 = 1 << 20, l3 = 32 << 20;
  bool from_sysfs = false;
};

HostCaches ReadHostCaches() {
  HostCaches c;
  for (int i = 0; i < 8; ++i) {
    std::string type;
    int level = 0;
    int64_t size = ReadCache(i, &type, &level);
    if (size < 0) break;
    if (type == "Instruction") continue;
    c.from_sysfs = true;
    if (level == 1) c.l1 = size;
    if (level == 2) c.l2 = size;
    if (level == 3) c.l3 = size;
  }
  return c;
}

// Caches as shared levels holding all three operands (32-bit words); access energies from Table 3 at
// 64-bit width by size (the L3 at min(size, 16 MB)), DRAM 320 pJ / 16 bit: a relative cost per
// access for the optimiser, not a CPU energy claim.
bl::Hierarchy HostHierarchy(const HostCaches& c) {
  bl::Hierarchy h;
  h.name = "host";
  h.word_bits = 32;
  h.mac_pj = 1;
  auto add = [&](const char* name, int64_t bytes) {
    bl::Level l;
    l.name = name;
    l.capacity_bytes = bytes;
    double pj = *bl::Table3PjPer16b(std::min<int64_t>(bytes, 16 << 20), 64) * 2;
    l.read_pj = l.write_pj = pj;
    h.levels.push_back(l);
  };
  add("L1d", c.l1);
  add("L2", c.l2);
  add("L3", c.l3);
  bl::Level dram;
  dram.name = "dram";
  dram.capacity_bytes = int64_t{1} << 40;
  dram.off_chip = true;
  dram.read_pj = dram.write_pj = bl::kDramPjPer16b * 2;
  h.levels.push_back(dram);
  return h;
}

bl::Layer ToLayer(const Shape& s) { return bl::ConvLayer(s.name, s.x, s.y, s.c, s.k, s.fw, s.fh); }

struct Plan {
  bl::BlockingString str;
  int cut = 0;       // loops [0, cut) form the tile
  bl::Extents tile;  // block sizes inside the cut
  double energy_pj = 0;
};

Plan PlanFromString(const bl::Layer& l, const bl::Hierarchy& h, const bl::BlockingString& str);

Plan MakePlan(const Shape& s, const bl::Hierarchy& h) {
  bl::Layer l = ToLayer(s);
  bl::SearchOptions opt;
  opt.threads = 1;
  opt.time_limit_s = 5;
  auto r = bl::HeuristicSearch(l, h, opt);
  if (!r.ok()) {
    std::cerr << r.status().message() << "\n";
    std::exit(1);
  }
  Plan p = PlanFromString(l, h, r->best);
  p.energy_pj = r->eval.total_pj;
  return p;
}

Plan PlanFromString(const bl::Layer& l, const bl::Hierarchy& h, const bl::BlockingString& str) {
  Plan p;
  p.str = str;
  std::vector<bl::Extents> blocks = bl::CutBlocks(p.str);
  for (size_t c = 0; c < blocks.size(); ++c) {
    int64_t bytes = 0;
    for (int t = 0; t < bl::kNumOperands; ++t) bytes += l.Footprint(static_cast<bl::Operand>(t), blocks[c]) * 4;
    if (bytes <= h.levels[0].capacity_bytes / 2) p.cut = static_cast<int>(c);
  }
  p.tile = blocks[p.cut];
  return p;
}

// --- the three implementations ---
int E(const bl::Extents& e, bl::Dim d) { return static_cast<int>(e[static_cast<int>(d)]); }

void Tile(const Data& d, float* out, const int o[7], const bl::Extents& t) {
  const Shape& s = d.s;
  using D = bl::Dim;
  const int y0 = o[1], x0 = o[0], c0 = o[2], k0 = o[3], fw0 = o[4], fh0 = o[5];
  const int ty = E(t, D::kY), tx = E(t, D::kX), tc = E(t, D::kC), tk = E(t, D::kK), tfw = E(t, D::kFw), tfh = E(t, D::kFh);
  for (int y = y0; y < y0 + ty; ++y)
    for (int x = x0; x < x0 + tx; ++x) {
      float* __restrict acc = out + (static_cast<size_t>(y) * s.x + x) * s.k + k0;
      for (int fh = fh0; fh < fh0 + tfh; ++fh)
        for (int fw = fw0; fw < fw0 + tfw; ++fw) {
          const float* irow = d.in.data() + (static_cast<size_t>(y + fh) * d.xi + (x + fw)) * s.c;
          const float* wrow = d.w.data() + (static_cast<size_t>(fh) * s.fw + fw) * s.c * s.k + k0;
          for (int c = c0; c < c0 + tc; ++c) {
            const float a = irow[c];
            const float* __restrict wk = wrow + static_cast<size_t>(c) * s.k;
            for (int k = 0; k < tk; ++k) acc[k] += a * wk[k];
          }
        }
    }
}

void RunBlocked(Data& d, const Plan& p) {
  std::fill(d.out.begin(), d.out.end(), 0.f);
  const int n = static_cast<int>(p.str.size());
  std::vector<bl::Extents> blocks = bl::CutBlocks(p.str);
  std::vector<int64_t> trips = bl::Trips(p.str);
  std::vector<int64_t> idx(n, 0);
  int o[7];
  while (true) {
    std::fill(o, o + 7, 0);
    for (int i = p.cut; i < n; ++i) o[static_cast<int>(p.str[i].dim)] += static_cast<int>(idx[i] * blocks[i][static_cast<int>(p.str[i].dim)]);
    Tile(d, d.out.data(), o, p.tile);
    int i = p.cut;
    while (i < n && ++idx[i] == trips[i]) idx[i++] = 0;
    if (i == n) break;
  }
}

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
  if (impl == 0) RunBlocked(*static_cast<Data*>(d), *static_cast<const Plan*>(p));
  else if (impl == 1) static_cast<Onednn*>(dn)->Run();
  else RunOpenblas(*static_cast<Data*>(d), static_cast<std::vector<float>*>(col));
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

// One timed or simulated run; returns the wall time in ms of the best of `reps`.
double RunOne(Data& d, int impl, const Plan& p, int reps) {
  std::vector<float> col;
  std::unique_ptr<Onednn> dn;
  if (impl == 1) dn = std::make_unique<Onednn>(d);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    sp_x86_measured(impl, &d, &p, &col, dn.get());
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (dn) dn->Fetch();
  return best;
}

// LL misses (instruction + data reads + data writes) inside sp_x86_measured, from callgrind's
// cache simulation with D1 = the host L1d and LL = `ll` (bytes, `ways`).
int64_t Simulate(const std::string& self, const Shape& s, int impl, const std::string& str, const HostCaches& c,
                 int64_t ll, int ways, int64_t* d1_misses) {
  std::string out = "/tmp/sp_x86_cg." + std::to_string(getpid());
  std::string cmd = "valgrind --tool=callgrind --cache-sim=yes "
                    "--toggle-collect=sp_x86_measured --I1=32768,8,64 --D1=" + std::to_string(c.l1) + ",8,64 --LL=" +
                    std::to_string(ll) + "," + std::to_string(ways) + ",64 --callgrind-out-file=" + out + " " + self +
                    " --one " + s.name + " " + kImpl[impl] + " '" + str + "' > " + out + ".log 2>&1";
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

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);
  setenv("OMP_NUM_THREADS", "1", 0);
  HostCaches caches = ReadHostCaches();
  bl::Hierarchy h = HostHierarchy(caches);
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
  if (argc == 5 && std::string(argv[1]) == "--one") {
    for (const Shape& s : kLayers)
      if (s.name == std::string(argv[2]))
        for (int i = 0; i < 3; ++i)
          if (kImpl[i] == std::string(argv[3])) {
            Data d = MakeData(s);
            Plan p;  // the parent's string (no search under the simulator)
            if (i == 0) {
              auto str = bl::ParseBlockingString(argv[4], ToLayer(s));
              if (!str.ok()) {
                std::cerr << str.status().message() << "\n";
                return 1;
              }
              p = PlanFromString(ToLayer(s), h, *str);
            }
            RunOne(d, i, p, 1);
            return 0;
          }
    std::cerr << "--one LAYER IMPL STRING: unknown layer or impl\n";
    return 1;
  }
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
  int reps = 3;
  std::string only;
  bool valgrind = std::system("valgrind --version > /dev/null 2>&1") == 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--no-valgrind") valgrind = false;
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
  ordered_json records = ordered_json::array();
  std::ostringstream md;
  md << "# Blocked direct convolution vs oneDNN vs im2col + OpenBLAS (issue 16)\n\n"
     << "Machine: " << sramplan::bench::Machine() << "; load " << sramplan::bench::LoadAverage() << ". Caches "
     << (caches.from_sysfs ? "from /sys/devices/system/cpu/cpu0/cache" : "(sysfs unreadable: defaults)") << ": L1d "
     << caches.l1 / 1024 << " KiB, L2 " << caches.l2 / 1024 << " KiB, L3 " << caches.l3 / 1024
     << " KiB. float32, batch 1, one thread each, AVX2 kernels everywhere (blocked: -O3 -mavx2 -mfma "
     << "auto-vectorised; ONEDNN_MAX_CPU_ISA=AVX2, OPENBLAS_CORETYPE=Haswell, since valgrind cannot run AVX-512) (OpenBLAS " << OPENBLAS_VERSION << ", oneDNN "
     << dnnl::version()->major << "." << dnnl::version()->minor << "." << dnnl::version()->patch
     << "). wall_ms: best of " << reps << " runs of the measured call (blocked: the whole blocked loop nest; onednn: "
     << "the convolution primitive, its src/weights reorders to its chosen layout excluded; openblas: im2col + "
     << "sgemm). max_abs_err against a double-accumulated direct convolution.\n\n"
     << "Misses: valgrind " << (valgrind ? "3.19 callgrind --cache-sim=yes (cachegrind's two-level simulator), "
                                           "counted only inside the measured call; "
                                         : "not run; ")
     << "it simulates I1/D1 and one last level (LL), so each case runs twice with D1 = the host L1d (8-way): "
     << "**l2_misses** = LL misses (instr. + data reads + data writes) with LL = the host L2 (" << caches.l2 / 1024
     << " KiB, 8-way); **l3_misses** = LL misses with LL = the host L3 (" << caches.l3 / 1024
     << " KiB, 16-way) directly behind D1 (no L2 in between, inclusive, LRU). Not hardware counters.\n\n"
     << "| layer | shape (X Y C K Fw Fh) | impl | wall ms | GMAC/s | l2_misses | l3_misses | D1 misses | max_abs_err |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (const Shape& s : kLayers) {
    if (!only.empty() && only.find(std::string(",") + s.name + ",") == std::string::npos) continue;
    std::cerr << s.name << "...\n";
    Data d = MakeData(s);
    std::vector<double> ref = Reference(d);
    Plan p = MakePlan(s, h);
    double macs = 1.0 * s.x * s.y * s.c * s.k * s.fw * s.fh;
    for (int i = 0; i < 3; ++i) {
      std::fill(d.out.begin(), d.out.end(), 0.f);
      double ms = RunOne(d, i, p, reps);
      double err = 0;
      for (size_t j = 0; j < ref.size(); ++j) err = std::max(err, std::fabs(ref[j] - d.out[j]));
      int64_t l2 = -1, l3 = -1, d1 = -1;
      if (valgrind) {
        l2 = Simulate(self, s, i, bl::ToString(p.str), caches, caches.l2, 8, &d1);
        l3 = Simulate(self, s, i, bl::ToString(p.str), caches, caches.l3, 16, &d1);
      }
      ordered_json rec = {{"layer", s.name}, {"impl", kImpl[i]}, {"wall_ms", ms}, {"l2_misses", l2},
                          {"l3_misses", l3}, {"max_abs_err", err}, {"d1_misses", d1}, {"macs", macs},
                          {"shape", {{"X", s.x}, {"Y", s.y}, {"C", s.c}, {"K", s.k}, {"Fw", s.fw}, {"Fh", s.fh}}},
                          {"shape_note", s.note}};
      if (i == 0) {
        rec["string"] = bl::ToString(p.str);
        rec["tile_cut"] = p.cut;
        rec["model_energy_pj"] = p.energy_pj;
      }
      records.push_back(rec);
      char row[512];
      std::snprintf(row, sizeof row, "| %s | %d %d %d %d %d %d | %s | %.2f | %.2f | %lld | %lld | %lld | %.2e |\n", s.name,
                    s.x, s.y, s.c, s.k, s.fw, s.fh, kImpl[i], ms, macs / ms / 1e6, static_cast<long long>(l2),
                    static_cast<long long>(l3), static_cast<long long>(d1), err);
      md << row;
      std::cerr << row;
    }
  }
  md << "\nShapes: ";
  for (const Shape& s : kLayers) md << s.name << " " << s.note << "; ";
  md << "(Table 4 sizes would take hours under the simulator). Blocked strings (optimiser on the host hierarchy, "
        "heuristic search; loops outside the L1 tile follow it) are in blocking_x86.json.\n";
  ordered_json doc = {{"benchmark", "blocking_x86"}, {"machine", sramplan::bench::Machine()},
                      {"caches", {{"l1d", caches.l1}, {"l2", caches.l2}, {"l3", caches.l3}}},
                      {"reps", reps}, {"records", records}};
  std::ofstream(out_dir + "/blocking_x86.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/blocking_x86.md") << md.str();
  std::cout << md.str();
  return 0;
}
