#include "blocking/x86_conv.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace sramplan::blocking::x86 {

namespace {

int Idx(Dim d) { return static_cast<int>(d); }

int64_t ReadCache(const std::string& dir, int index, std::string* type, int* level) {
  std::string base = dir + "/index" + std::to_string(index) + "/";
  std::ifstream fs(base + "size"), ft(base + "type"), fl(base + "level");
  std::string size;
  if (!(fs >> size) || !(ft >> *type) || !(fl >> *level) || size.empty()) return -1;
  int64_t v = std::atoll(size.c_str());
  if (size.back() == 'K') v <<= 10;
  if (size.back() == 'M') v <<= 20;
  return v;
}

}  // namespace

HostCaches ReadHostCaches(const std::string& sysfs_cache_dir) {
  HostCaches c;
  bool seen[4] = {false, false, false, false};
  for (int i = 0; i < 8; ++i) {
    std::string type;
    int level = 0;
    int64_t size = ReadCache(sysfs_cache_dir, i, &type, &level);
    if (size < 0) break;
    if (type == "Instruction" || size <= 0 || level < 1 || level > 3) continue;
    seen[level] = true;
    if (level == 1) c.l1d = size;
    if (level == 2) c.l2 = size;
    if (level == 3) c.l3 = size;
  }
  c.from_sysfs = seen[1] && seen[2] && seen[3];
  return c;
}

Hierarchy HostHierarchy(const HostCaches& c) {
  Hierarchy h;
  h.name = "host";
  h.word_bits = 32;
  h.mac_pj = 1;
  auto add = [&](const char* name, int64_t bytes) {
    Level l;
    l.name = name;
    l.capacity_bytes = bytes;
    double pj = *Table3PjPer16b(std::min<int64_t>(bytes, 16 << 20), 64) * 2;
    l.read_pj = l.write_pj = pj;
    h.levels.push_back(l);
  };
  add("L1d", c.l1d);
  add("L2", c.l2);
  add("L3", c.l3);
  Level dram;
  dram.name = "dram";
  dram.capacity_bytes = int64_t{1} << 40;
  dram.off_chip = true;
  dram.read_pj = dram.write_pj = kDramPjPer16b * 2;
  h.levels.push_back(dram);
  return h;
}

SearchOptions KernelSearchOptions(const Layer& layer, int64_t min_accum_depth) {
  SearchOptions o;
  // Whole 16-kernel chunks; when 16 does not divide K, the smallest multiple of 8 of at least 16
  // that divides K (chunks of 16 and one of 8: K = 200 gives 40), else 8 (K = 8 x odd <= 8 x 1).
  const int64_t K = layer.extent(Dim::kK);
  o.k_multiple = 8;
  for (int64_t m = 16; m <= K; m += 8)
    if (K % m == 0 && (m % 16 == 0 || K % 16 != 0)) {
      o.k_multiple = static_cast<int>(m);
      break;
    }
  if (K % 16 == 0) o.k_multiple = 16;
  o.min_accum_depth = min_accum_depth;
  return o;
}

bool HasAvx2Fma() {
#if defined(__x86_64__) && defined(SRAMPLAN_HAVE_AVX2_KERNEL)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#if !defined(SRAMPLAN_HAVE_AVX2_KERNEL)
void TileKernelAvx2(const TileArgs& t) { TileKernelPortable(t); }
#endif

void TileKernelPortable(const TileArgs& t) {
  const int64_t npix = t.tx * t.ty;
  int64_t px = 0, py = 0;
  for (int64_t g = 0; g < npix; ++g) {
    const float* in = t.in + py * t.in_y + px * t.in_x;
    float* out = t.out + py * t.out_y + px * t.out_x;
    float acc[16];
    for (int k = 0; k < t.kvalid; ++k) acc[k] = out[k];
    for (int fh = 0; fh < t.tfh; ++fh) {
      const float* ip = in + fh * t.in_fh;
      const float* wp = t.w + fh * t.w_fh;
      for (int s = 0; s < t.run; ++s)
        for (int k = 0; k < t.kvalid; ++k) acc[k] += ip[s] * wp[s * t.kvalid + k];
    }
    for (int k = 0; k < t.kvalid; ++k) out[k] = acc[k];
    if (++px == t.tx) px = 0, ++py;
  }
}

StatusOr<ConvPlan> MakeConvPlan(const Layer& layer, const BlockingString& str, int64_t l1d_bytes,
                                const std::vector<float>& weights) {
  SP_RETURN_IF_ERROR(ValidateLayer(layer));
  if (layer.kind != LayerKind::kConv)
    return InvalidArgument("layer '" + layer.name + "': the x86 blocked convolution runs conv/FC layers only, not " +
                           KindName(layer.kind));
  if (layer.extent(Dim::kN) != 1)
    return InvalidArgument("layer '" + layer.name + "': batch N = " + std::to_string(layer.extent(Dim::kN)) +
                           "; the x86 blocked convolution runs batch 1 (run each image separately)");
  for (Dim d : kAllDims)
    if (layer.extent(d) > (int64_t{1} << 24))
      return InvalidArgument("layer '" + layer.name + "': dimension " + DimName(d) + " = " +
                             std::to_string(layer.extent(d)) + " is above 2^24; split the layer");
  SP_RETURN_IF_ERROR(ValidateString(layer, str));
  if (l1d_bytes <= 0) return InvalidArgument("L1d size " + std::to_string(l1d_bytes) + " bytes: give a positive size");
  ConvPlan p;
  p.layer = layer;
  p.str = str;
  const int64_t X = layer.extent(Dim::kX), Y = layer.extent(Dim::kY), C = layer.extent(Dim::kC),
                K = layer.extent(Dim::kK), Fw = layer.extent(Dim::kFw), Fh = layer.extent(Dim::kFh);
  if (static_cast<int64_t>(weights.size()) != Fh * Fw * C * K)
    return InvalidArgument("weights of layer '" + layer.name + "': " + std::to_string(weights.size()) +
                           " floats, expected Fh*Fw*C*K = " + std::to_string(Fh * Fw * C * K) +
                           " in [fh][fw][c][k] order");
  p.xi = (X - 1) * layer.stride_x + Fw;
  p.yi = (Y - 1) * layer.stride_y + Fh;
  std::vector<Extents> blocks = CutBlocks(str);
  for (size_t c = 0; c < blocks.size(); ++c) {
    int64_t bytes = 0;
    for (int t = 0; t < kNumOperands; ++t) bytes += layer.Footprint(static_cast<Operand>(t), blocks[c]) * 4;
    if (bytes <= l1d_bytes) p.cut = static_cast<int>(c);
  }
  p.tile = blocks[p.cut];
  const int64_t tk = p.tile[Idx(Dim::kK)];
  p.k_chunks = (tk + 15) / 16;
  const int64_t rows = Fh * Fw * C, tc = p.tile[Idx(Dim::kC)];
  p.packed.assign(static_cast<size_t>(rows * K), 0.f);
  for (int64_t kt = 0; kt < K / tk; ++kt)
    for (int64_t ch = 0; ch < p.k_chunks; ++ch) {
      const int64_t k0 = kt * tk + ch * 16, kn = std::min<int64_t>(16, tk - ch * 16);
      float* dst = p.packed.data() + k0 * rows;  // [C/tc][fh][fw][tc][kn]
      for (int64_t cb = 0; cb < C / tc; ++cb)
        for (int64_t f = 0; f < Fh * Fw; ++f)
          for (int64_t c = 0; c < tc; ++c)
            for (int64_t k = 0; k < kn; ++k)
              dst[((cb * Fh * Fw + f) * tc + c) * kn + k] = weights[(f * C + cb * tc + c) * K + k0 + k];
    }
  return p;
}

namespace {

// The L1 tile at origin o (by Dim), one K chunk after another; `in` and `out` in the plan's blocked
// layouts (PackInput, UnpackOutput).
void RunTile(const ConvPlan& p, const float* in, float* out, const int64_t o[kNumDims], bool avx2) {
  const Layer& l = p.layer;
  const int64_t C = l.extent(Dim::kC), X = l.extent(Dim::kX), Y = l.extent(Dim::kY), Fw = l.extent(Dim::kFw),
                Fh = l.extent(Dim::kFh);
  const int64_t tk = p.tile[Idx(Dim::kK)], tc = p.tile[Idx(Dim::kC)];
  const int64_t x0 = o[Idx(Dim::kX)], y0 = o[Idx(Dim::kY)], c0 = o[Idx(Dim::kC)], k0 = o[Idx(Dim::kK)],
                fw0 = o[Idx(Dim::kFw)], fh0 = o[Idx(Dim::kFh)];
  TileArgs t;
  t.tx = p.tile[Idx(Dim::kX)];
  t.ty = p.tile[Idx(Dim::kY)];
  t.tfh = static_cast<int>(p.tile[Idx(Dim::kFh)]);
  t.run = static_cast<int>(p.tile[Idx(Dim::kFw)] * tc);
  t.in_x = l.stride_x * tc;
  t.in_y = l.stride_y * p.xi * tc;
  t.in_fh = p.xi * tc;
  t.out_x = tk;
  t.out_y = X * tk;
  // [C/tc][yi][xi][tc] at (y0 sy + fh0, x0 sx + fw0) of C block c0 / tc.
  t.in = in + (c0 / tc) * p.yi * p.xi * tc + ((y0 * l.stride_y + fh0) * p.xi + x0 * l.stride_x + fw0) * tc;
  const int64_t rows = Fh * Fw * C;
  for (int64_t ch = 0; ch < p.k_chunks; ++ch) {
    const int64_t kn = std::min<int64_t>(16, tk - ch * 16);
    t.kvalid = static_cast<int>(kn);
    t.w_fh = Fw * tc * kn;
    t.w = p.packed.data() + (k0 + ch * 16) * rows + ((c0 / tc) * Fh * Fw + fh0 * Fw + fw0) * tc * kn;
    t.out = out + (k0 / tk) * Y * X * tk + (y0 * X + x0) * tk + ch * 16;  // [K/tk][y][x][tk]
    if (avx2)
      TileKernelAvx2(t);
    else
      TileKernelPortable(t);
  }
}

}  // namespace

void RunBlockedConvUnchecked(const ConvPlan& p, const float* in, float* out, bool avx2) {
  const Layer& l = p.layer;
  std::fill(out, out + l.extent(Dim::kX) * l.extent(Dim::kY) * l.extent(Dim::kK), 0.f);
  const int n = static_cast<int>(p.str.size());
  std::vector<Extents> blocks = CutBlocks(p.str);
  std::vector<int64_t> trips = Trips(p.str);
  // Serpentine: each loop outside the cut runs in the opposite direction on every other pass
  // (rev[i]), so a pass starts on the tiles the previous pass used last, which an LRU cache still
  // holds (in the string's order a cache just large enough for a loop's working set evicts exactly
  // the tile needed next). Same tiles, same loop nest; only the visiting order within a loop changes.
  std::vector<int64_t> idx(n, 0);
  std::vector<char> rev(n, 0);
  int64_t o[kNumDims];
  while (true) {
    std::fill(o, o + kNumDims, 0);
    for (int i = p.cut; i < n; ++i) {
      const int d = Idx(p.str[i].dim);
      o[d] += (rev[i] ? trips[i] - 1 - idx[i] : idx[i]) * blocks[i][d];
    }
    RunTile(p, in, out, o, avx2);
    int i = p.cut;
    while (i < n && ++idx[i] == trips[i]) {
      idx[i] = 0;
      rev[i] = !rev[i];
      ++i;
    }
    if (i == n) break;
  }
}

void PackInput(const ConvPlan& p, const float* in, float* blocked) {
  const int64_t C = p.layer.extent(Dim::kC), tc = p.tile[Idx(Dim::kC)], pix = p.yi * p.xi;
  for (int64_t cb = 0; cb < C / tc; ++cb)
    for (int64_t i = 0; i < pix; ++i)
      for (int64_t c = 0; c < tc; ++c) blocked[(cb * pix + i) * tc + c] = in[i * C + cb * tc + c];
}

void UnpackOutput(const ConvPlan& p, const float* blocked, float* out) {
  const int64_t K = p.layer.extent(Dim::kK), tk = p.tile[Idx(Dim::kK)],
                pix = p.layer.extent(Dim::kX) * p.layer.extent(Dim::kY);
  for (int64_t kb = 0; kb < K / tk; ++kb)
    for (int64_t i = 0; i < pix; ++i)
      for (int64_t k = 0; k < tk; ++k) out[i * K + kb * tk + k] = blocked[(kb * pix + i) * tk + k];
}

Status RunBlockedConv(const ConvPlan& p, const std::vector<float>& in, std::vector<float>* out, KernelPath path) {
  const Layer& l = p.layer;
  const int64_t need_in = p.yi * p.xi * l.extent(Dim::kC);
  const int64_t need_out = l.extent(Dim::kY) * l.extent(Dim::kX) * l.extent(Dim::kK);
  if (static_cast<int64_t>(in.size()) != need_in)
    return InvalidArgument("input of layer '" + l.name + "': " + std::to_string(in.size()) + " floats, expected " +
                           std::to_string(need_in) + " ([yi][xi][c] with padding applied)");
  if (out == nullptr) return InvalidArgument("output of layer '" + l.name + "': no buffer given");
  out->resize(static_cast<size_t>(need_out));
  bool avx2 = HasAvx2Fma();
  if (path == KernelPath::kAvx2 && !avx2)
    return Unsupported("the AVX2/FMA kernel does not run on this CPU (or build); use the portable path");
  if (path == KernelPath::kPortable) avx2 = false;
  std::vector<float> in_blk(in.size()), out_blk(out->size());
  PackInput(p, in.data(), in_blk.data());
  RunBlockedConvUnchecked(p, in_blk.data(), out_blk.data(), avx2);
  UnpackOutput(p, out_blk.data(), out->data());
  return Status::Ok();
}

}  // namespace sramplan::blocking::x86
