// The AVX2/FMA micro-kernel of the x86 blocked convolution (x86_conv.h). This file alone is compiled
// with -mavx2 -mfma; callers check HasAvx2Fma() first.
#include <immintrin.h>

#include "blocking/x86_conv.h"

namespace sramplan::blocking::x86 {

namespace {

// Lanes [0, n) of an 8-wide mask (n may be <= 0 or >= 8).
__m256i Mask(int n) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

// RP pixels x NV ymm (8 kernels each) accumulators; FULL: all NV*8 lanes valid (else masked
// weight loads and output loads/stores). The 12 accumulators are named variables (an array of
// __m256 indexed in loops is kept on the stack by g++ 12, every FMA then spilling its result).
#define SP_ACC_ROW(J)                         \
  __m256 a##J##0 = _mm256_setzero_ps();       \
  __m256 a##J##1 = _mm256_setzero_ps();       \
  if constexpr (RP > J) {                     \
    a##J##0 = Load(out[J], m0);               \
    if constexpr (NV == 2) a##J##1 = Load(out[J] + 8, m1); \
  }
#define SP_FMA_ROW(J)                                              \
  if constexpr (RP > J) {                                          \
    const __m256 b = _mm256_broadcast_ss(ip##J + off);              \
    a##J##0 = _mm256_fmadd_ps(b, w0, a##J##0);                      \
    if constexpr (NV == 2) a##J##1 = _mm256_fmadd_ps(b, w1, a##J##1); \
  }
#define SP_STORE_ROW(J)                                   \
  if constexpr (RP > J) {                                 \
    Store(out[J], m0, a##J##0);                           \
    if constexpr (NV == 2) Store(out[J] + 8, m1, a##J##1); \
  }

template <int RP, int NV, bool FULL>
inline void Kernel(const float* const* in, float* const* out, const float* w, int tfh, int run, int64_t in_fh,
                   int64_t w_fh, __m256i m0, __m256i m1, int kstep) {
  auto Load = [](const float* p, __m256i m) { return FULL ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m); };
  auto Store = [](float* p, __m256i m, __m256 v) {
    if (FULL)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, m, v);
  };
  SP_ACC_ROW(0) SP_ACC_ROW(1) SP_ACC_ROW(2) SP_ACC_ROW(3) SP_ACC_ROW(4) SP_ACC_ROW(5)
  SP_ACC_ROW(6) SP_ACC_ROW(7) SP_ACC_ROW(8) SP_ACC_ROW(9) SP_ACC_ROW(10) SP_ACC_ROW(11)
  for (int fh = 0; fh < tfh; ++fh) {
    const float* ip0 = in[0] + fh * in_fh;
    const float* ip1 = RP > 1 ? in[1] + fh * in_fh : ip0;
    const float* ip2 = RP > 2 ? in[2] + fh * in_fh : ip0;
    const float* ip3 = RP > 3 ? in[3] + fh * in_fh : ip0;
    const float* ip4 = RP > 4 ? in[4] + fh * in_fh : ip0;
    const float* ip5 = RP > 5 ? in[5] + fh * in_fh : ip0;
    const float* ip6 = RP > 6 ? in[6] + fh * in_fh : ip0;
    const float* ip7 = RP > 7 ? in[7] + fh * in_fh : ip0;
    const float* ip8 = RP > 8 ? in[8] + fh * in_fh : ip0;
    const float* ip9 = RP > 9 ? in[9] + fh * in_fh : ip0;
    const float* ip10 = RP > 10 ? in[10] + fh * in_fh : ip0;
    const float* ip11 = RP > 11 ? in[11] + fh * in_fh : ip0;
    const float* wp = w + fh * w_fh;
    for (int off = 0; off < run; ++off, wp += kstep) {
      const __m256 w0 = Load(wp, m0);
      const __m256 w1 = NV == 1 ? w0 : Load(wp + 8, m1);
      SP_FMA_ROW(0) SP_FMA_ROW(1) SP_FMA_ROW(2) SP_FMA_ROW(3) SP_FMA_ROW(4) SP_FMA_ROW(5)
      SP_FMA_ROW(6) SP_FMA_ROW(7) SP_FMA_ROW(8) SP_FMA_ROW(9) SP_FMA_ROW(10) SP_FMA_ROW(11)
    }
  }
  SP_STORE_ROW(0) SP_STORE_ROW(1) SP_STORE_ROW(2) SP_STORE_ROW(3) SP_STORE_ROW(4) SP_STORE_ROW(5)
  SP_STORE_ROW(6) SP_STORE_ROW(7) SP_STORE_ROW(8) SP_STORE_ROW(9) SP_STORE_ROW(10) SP_STORE_ROW(11)
}
#undef SP_ACC_ROW
#undef SP_FMA_ROW
#undef SP_STORE_ROW

// Dispatches a group of rp (1..RP) pixels to the kernel with that many accumulator rows.
template <int RP, int NV, bool FULL>
inline void Group(int rp, const float* const* in, float* const* out, const TileArgs& t, __m256i m0, __m256i m1) {
  if constexpr (RP >= 1) {
    if (rp == RP) return Kernel<RP, NV, FULL>(in, out, t.w, t.tfh, t.run, t.in_fh, t.w_fh, m0, m1, t.kvalid);
    if constexpr (RP > 1) Group<RP - 1, NV, FULL>(rp, in, out, t, m0, m1);
  }
}

// The tile's pixels in groups of at most 12 / NV (12 accumulators: 6 pixels x 16 kernels or 12
// pixels x 8), pointers stepped without divisions. The groups are balanced (sizes differ by at most
// one: 32 pixels in 6, 6, 5, 5, 5, 5, not 6 x 5 + 2), since a small group has too few independent
// FMA chains to hide the FMA latency and costs nearly as much as a full one.
template <int NV, bool FULL>
void Tile(const TileArgs& t) {
  constexpr int kGroup = 12 / NV;
  const __m256i m0 = Mask(t.kvalid), m1 = Mask(t.kvalid - 8);
  const int64_t npix = t.tx * t.ty;
  const int64_t groups = (npix + kGroup - 1) / kGroup, base = npix / groups, extra = npix % groups;
  int64_t px = 0, py = 0;
  const float* in[kGroup];
  float* out[kGroup];
  for (int64_t g = 0; g < groups; ++g) {
    const int rp = static_cast<int>(base + (g < extra ? 1 : 0));
    for (int j = 0; j < rp; ++j) {
      in[j] = t.in + py * t.in_y + px * t.in_x;
      out[j] = t.out + py * t.out_y + px * t.out_x;
      if (++px == t.tx) px = 0, ++py;
    }
    Group<kGroup, NV, FULL>(rp, in, out, t, m0, m1);
  }
}

}  // namespace

void TileKernelAvx2(const TileArgs& t) {
  if (t.kvalid == 16) return Tile<2, true>(t);
  if (t.kvalid == 8) return Tile<1, true>(t);
  if (t.kvalid > 8) return Tile<2, false>(t);
  return Tile<1, false>(t);
}

}  // namespace sramplan::blocking::x86
