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
// weight loads and output loads/stores).
template <int RP, int NV, bool FULL>
void Kernel(const MicroArgs& a) {
  __m256 acc[RP][NV];
  constexpr bool full = FULL;
  const __m256i m0 = Mask(a.kvalid), m1 = Mask(a.kvalid - 8);
  for (int j = 0; j < RP; ++j) {
    if (full) {
      acc[j][0] = _mm256_loadu_ps(a.out[j]);
      if (NV == 2) acc[j][NV - 1] = _mm256_loadu_ps(a.out[j] + 8);
    } else {
      acc[j][0] = _mm256_maskload_ps(a.out[j], m0);
      if (NV == 2) acc[j][NV - 1] = _mm256_maskload_ps(a.out[j] + 8, m1);
    }
  }
  const int tc = a.tc;
  const int64_t wc = a.w_c_stride;
  for (int fh = 0; fh < a.tfh; ++fh)
    for (int fw = 0; fw < a.tfw; ++fw) {
      const int64_t ioff = fh * a.in_fh_stride + fw * a.in_fw_stride;
      const float* ip[RP];
      for (int j = 0; j < RP; ++j) ip[j] = a.in[j] + ioff;
      const float* wp = a.w + fh * a.w_fh_stride + fw * a.w_fw_stride;
      for (int c = 0; c < tc; ++c, wp += wc) {
        const __m256 w0 = full ? _mm256_loadu_ps(wp) : _mm256_maskload_ps(wp, m0);
        const __m256 w1 = NV == 1 ? w0 : full ? _mm256_loadu_ps(wp + 8) : _mm256_maskload_ps(wp + 8, m1);
#pragma GCC unroll 6
        for (int j = 0; j < RP; ++j) {
          const __m256 b = _mm256_broadcast_ss(ip[j] + c);
          acc[j][0] = _mm256_fmadd_ps(b, w0, acc[j][0]);
          if (NV == 2) acc[j][NV - 1] = _mm256_fmadd_ps(b, w1, acc[j][NV - 1]);
        }
      }
    }
  for (int j = 0; j < RP; ++j) {
    if (full) {
      _mm256_storeu_ps(a.out[j], acc[j][0]);
      if (NV == 2) _mm256_storeu_ps(a.out[j] + 8, acc[j][NV - 1]);
    } else {
      _mm256_maskstore_ps(a.out[j], m0, acc[j][0]);
      if (NV == 2) _mm256_maskstore_ps(a.out[j] + 8, m1, acc[j][NV - 1]);
    }
  }
}

template <int NV, bool FULL>
void ByPixels(const MicroArgs& a) {
  switch (a.rp) {
    case 1: return Kernel<1, NV, FULL>(a);
    case 2: return Kernel<2, NV, FULL>(a);
    case 3: return Kernel<3, NV, FULL>(a);
    case 4: return Kernel<4, NV, FULL>(a);
    case 5: return Kernel<5, NV, FULL>(a);
    default: return Kernel<6, NV, FULL>(a);
  }
}

}  // namespace

void MicroKernelAvx2(const MicroArgs& a) {
  if (a.kvalid == 16) return ByPixels<2, true>(a);
  if (a.kvalid == 8) return ByPixels<1, true>(a);
  if (a.kvalid > 8) return ByPixels<2, false>(a);
  return ByPixels<1, false>(a);
}

}  // namespace sramplan::blocking::x86
