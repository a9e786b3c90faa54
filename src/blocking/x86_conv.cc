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

bool HasAvx2Fma() {
#if defined(__x86_64__) && defined(SRAMPLAN_HAVE_AVX2_KERNEL)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#if !defined(SRAMPLAN_HAVE_AVX2_KERNEL)
void MicroKernelAvx2(const MicroArgs& a) { MicroKernelPortable(a); }
#endif

void MicroKernelPortable(const MicroArgs& a) {
  for (int j = 0; j < a.rp; ++j) {
    float acc[16];
    for (int k = 0; k < a.kvalid; ++k) acc[k] = a.out[j][k];
    for (int fh = 0; fh < a.tfh; ++fh)
      for (int fw = 0; fw < a.tfw; ++fw) {
        const float* ip = a.in[j] + fh * a.in_fh_stride + fw * a.in_fw_stride;
        const float* wp = a.w + fh * a.w_fh_stride + fw * a.w_fw_stride;
        for (int c = 0; c < a.tc; ++c)
          for (int k = 0; k < a.kvalid; ++k) acc[k] += ip[c] * wp[c * a.w_c_stride + k];
      }
    for (int k = 0; k < a.kvalid; ++k) a.out[j][k] = acc[k];
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
    if (bytes <= l1d_bytes / 2) p.cut = static_cast<int>(c);
  }
  p.tile = blocks[p.cut];
  const int64_t tk = p.tile[Idx(Dim::kK)];
  p.k_chunks = (tk + 15) / 16;
  const int64_t rows = Fh * Fw * C;
  p.packed.assign(static_cast<size_t>(rows * K), 0.f);
  for (int64_t kt = 0; kt < K / tk; ++kt)
    for (int64_t ch = 0; ch < p.k_chunks; ++ch) {
      float* dst = p.packed.data() + (kt * tk + ch * 16) * rows;
      const int64_t k0 = kt * tk + ch * 16, kn = std::min<int64_t>(16, tk - ch * 16);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < kn; ++k) dst[r * kn + k] = weights[r * K + k0 + k];
    }
  return p;
}

namespace {

// The L1 tile at origin o (by Dim): chunks of 16 kernels outside, groups of 6 pixels inside.
void RunTile(const ConvPlan& p, const float* in, float* out, const int64_t o[kNumDims], bool avx2) {
  const Layer& l = p.layer;
  const int64_t C = l.extent(Dim::kC), K = l.extent(Dim::kK), X = l.extent(Dim::kX), Fw = l.extent(Dim::kFw),
                Fh = l.extent(Dim::kFh);
  const int64_t tx = p.tile[Idx(Dim::kX)], ty = p.tile[Idx(Dim::kY)], tk = p.tile[Idx(Dim::kK)];
  const int64_t x0 = o[Idx(Dim::kX)], y0 = o[Idx(Dim::kY)], c0 = o[Idx(Dim::kC)], k0 = o[Idx(Dim::kK)],
                fw0 = o[Idx(Dim::kFw)], fh0 = o[Idx(Dim::kFh)];
  MicroArgs a;
  a.tc = static_cast<int>(p.tile[Idx(Dim::kC)]);
  a.tfh = static_cast<int>(p.tile[Idx(Dim::kFh)]);
  a.tfw = static_cast<int>(p.tile[Idx(Dim::kFw)]);
  a.in_fh_stride = p.xi * C;
  a.in_fw_stride = C;
  const int64_t rows = Fh * Fw * C;
  const int64_t npix = tx * ty;
  for (int64_t ch = 0; ch < p.k_chunks; ++ch) {
    const int64_t kn = std::min<int64_t>(16, tk - ch * 16);
    a.kvalid = static_cast<int>(kn);
    a.w_c_stride = kn;
    a.w_fw_stride = C * kn;
    a.w_fh_stride = Fw * C * kn;
    a.w = p.packed.data() + (k0 + ch * 16) * rows + ((fh0 * Fw + fw0) * C + c0) * kn;
    for (int64_t g = 0; g < npix; g += 6) {
      a.rp = static_cast<int>(std::min<int64_t>(6, npix - g));
      for (int j = 0; j < a.rp; ++j) {
        const int64_t y = y0 + (g + j) / tx, x = x0 + (g + j) % tx;
        a.in[j] = in + ((y * l.stride_y + fh0) * p.xi + x * l.stride_x + fw0) * C + c0;
        a.out[j] = out + (y * X + x) * K + k0 + ch * 16;
      }
      if (avx2)
        MicroKernelAvx2(a);
      else
        MicroKernelPortable(a);
    }
  }
}

}  // namespace

void RunBlockedConvUnchecked(const ConvPlan& p, const float* in, float* out, bool avx2) {
  const Layer& l = p.layer;
  std::fill(out, out + l.extent(Dim::kX) * l.extent(Dim::kY) * l.extent(Dim::kK), 0.f);
  const int n = static_cast<int>(p.str.size());
  std::vector<Extents> blocks = CutBlocks(p.str);
  std::vector<int64_t> trips = Trips(p.str);
  std::vector<int64_t> idx(n, 0);
  int64_t o[kNumDims];
  while (true) {
    std::fill(o, o + kNumDims, 0);
    for (int i = p.cut; i < n; ++i) {
      const int d = Idx(p.str[i].dim);
      o[d] += idx[i] * blocks[i][d];
    }
    RunTile(p, in, out, o, avx2);
    int i = p.cut;
    while (i < n && ++idx[i] == trips[i]) idx[i++] = 0;
    if (i == n) break;
  }
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
  RunBlockedConvUnchecked(p, in.data(), out->data(), avx2);
  return Status::Ok();
}

}  // namespace sramplan::blocking::x86
