/* sramplan runtime: the inner loops of the int8 kernels (integer-only, MCU-safe).
 *
 * Two implementations of each primitive, with identical results for every input:
 *   - SP_DSP (Cortex-M4/M7/M33/M55: __ARM_FEATURE_DSP with GCC/Clang): 4 int8 lanes per 32-bit load,
 *     sign-extended in pairs with SXTB16 / SXTAB16 (the input offset is added in the same instruction)
 *     and multiplied-accumulated with SMLAD / SMLABB / SMLATT (<arm_acle.h>);
 *   - the portable C loops (host, Cortex-M0/M3), the reference.
 * Integer sums are exact (int32 wrap-around arithmetic is associative), so the order of the
 * multiply-accumulates does not matter and both paths equal the plain loops bit for bit.
 *
 * Requantisation (sp_fq_*) is TFLite's MultiplyByQuantizedMultiplier computed with one 32x32->64
 * multiply-accumulate and no branch; it equals sp_mbqm / sp_mbqm_zp (sp_internal.h) for every input. */
#ifndef SRAMPLAN_RT_SP_FAST_S8_H_
#define SRAMPLAN_RT_SP_FAST_S8_H_

#include <stdint.h>
#include <string.h>

#include "sp_internal.h"
#include "sramplan_rt_int8.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__GNUC__) && !defined(SP_NO_DSP)
#define SP_DSP 1
#include <arm_acle.h>
#else
#define SP_DSP 0
#endif

/* 1 when the kernels of this build use the DSP (SIMD) path. */
#define SP_KERNELS_DSP SP_DSP

/* ---- Requantisation ---------------------------------------------------------------------------
 * gemmlowp SaturatingRoundingDoublingHighMul(a, b) outside its one saturating case
 * (a == b == INT32_MIN) is floor((a*b + 2^30) / 2^31): for a*b >= 0 the nudge is 2^30 and the
 * division truncates = floors; for a*b < 0 gemmlowp truncates (ab + 1 - 2^30) / 2^31 toward zero,
 * i.e. ceil((ab + 1 - 2^30) / 2^31) = floor((ab + 1 - 2^30 + 2^31 - 1) / 2^31) = floor((ab + 2^30) / 2^31).
 * The 64-bit value is one SMLAL; bits [31, 63) are the result. */
static SP_ALWAYS_INLINE int32_t sp_fq_srdhm(int32_t a, int32_t b) {
  const int64_t p = (int64_t)a * (int64_t)b + ((int64_t)1 << 30);
  return (int32_t)(uint32_t)((uint64_t)p >> 31);
}

/* Arithmetic shift right (floor division by 2^e). GCC and Clang define >> of a negative int32 as
 * arithmetic; elsewhere the portable helper. */
#if defined(__GNUC__)
#define SP_ASR(x, e) ((x) >> (e))
#else
#define SP_ASR(x, e) sp_floor_shift_i32((x), (e))
#endif

/* TFLite MultiplyByQuantizedMultiplier, branch-free: = sp_mbqm(x, multiplier, shift) for all inputs.
 * RoundingDivideByPOT with exponent 0 needs no special case (mask 0, remainder 0 never exceeds the
 * threshold). */
static SP_ALWAYS_INLINE int32_t sp_fq_mbqm(int32_t x, int32_t multiplier, int32_t shift) {
#if SP_DSP
  const int32_t left = (int32_t)__usat(shift, 5), right = (int32_t)__usat(-shift, 5); /* [0, 31] */
#else
  const int32_t left = shift > 0 ? (shift > 31 ? 31 : shift) : 0;
  const int32_t right = shift > 0 ? 0 : (shift < -31 ? 31 : -shift);
#endif
  const int32_t a = (int32_t)((uint32_t)x << left);
  int32_t h, mask, rem, thr;
  if (multiplier == INT32_MIN) return sp_mbqm(x, multiplier, shift); /* never for real multipliers */
  h = sp_fq_srdhm(a, multiplier);
  mask = (int32_t)(((uint32_t)1 << right) - 1u);
  rem = h & mask;
  thr = SP_ASR(mask, 1) + (h < 0);
  return SP_ASR(h, right) + (rem > thr);
}

/* sp_mbqm_zp + clamp to [act_min, act_max], as int8: the conv / FC output requantisation. */
static SP_ALWAYS_INLINE int8_t sp_fq_out(int32_t acc, const sp_requant_t* rq, int32_t out_zp,
                                         int32_t act_min, int32_t act_max) {
  int32_t v = sp_fq_mbqm(acc, rq->multiplier, rq->shift);
#if SP_DSP
  v = __ssat(v, 31); /* [-2^30, 2^30 - 1]: as sp_mbqm_zp, any such value saturates int8 anyway */
#else
  v = v > (1 << 30) ? (1 << 30) : (v < -(1 << 30) ? -(1 << 30) : v);
#endif
  v += out_zp;
  v = v < act_min ? act_min : v;
  return (int8_t)(v > act_max ? act_max : v);
}

/* TFLite int8 Add of one element pair (= sp_add_s8 / the segment kernels' residual add). */
static SP_ALWAYS_INLINE int8_t sp_fq_add(int32_t a, int32_t b, const sp_add_s8_params_t* p) {
  const int32_t x1 = (a - p->in1_zp) * (1 << p->left_shift);
  const int32_t x2 = (b - p->in2_zp) * (1 << p->left_shift);
  const int32_t s1 = sp_fq_mbqm(x1, p->in1_rq.multiplier, p->in1_rq.shift);
  const int32_t s2 = sp_fq_mbqm(x2, p->in2_rq.multiplier, p->in2_rq.shift);
  int32_t v = sp_fq_mbqm(s1 + s2, p->out_rq.multiplier, p->out_rq.shift);
  v = v > (1 << 30) ? (1 << 30) : (v < -(1 << 30) ? -(1 << 30) : v);
  v += p->out_zp;
  v = v < p->act_min ? p->act_min : v;
  return (int8_t)(v > p->act_max ? p->act_max : v);
}

/* ---- Dot products: sum_i (x[i] + in_off) * w[i] ---------------------------------------------- */

#if SP_DSP
static SP_ALWAYS_INLINE uint32_t sp_ld32(const int8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4); /* one LDR (unaligned access is allowed on ARMv7-M data memory) */
  return v;
}
static SP_ALWAYS_INLINE uint32_t sp_sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
static SP_ALWAYS_INLINE uint32_t sp_sxtab16_ror8(uint32_t a, uint32_t x) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}
/* in_off in both 16-bit lanes. */
static SP_ALWAYS_INLINE uint32_t sp_off2(int32_t in_off) {
  return ((uint32_t)in_off & 0xFFFFu) | ((uint32_t)in_off << 16);
}
#endif
/* x + in_off fits a signed 16-bit lane for every int8 x (always so for int8 zero points); the SIMD
 * loops run only then, the scalar loops otherwise. */
#define SP_OFF_OK(in_off) ((in_off) >= -32640 && (in_off) <= 32639)

static SP_ALWAYS_INLINE int32_t sp_dot_s8(const int8_t* x, const int8_t* w, int32_t n, int32_t in_off) {
  int32_t acc = 0, i = 0;
#if SP_DSP
  const uint32_t off2 = sp_off2(in_off);
  const int32_t n4 = SP_OFF_OK(in_off) ? (n & ~3) : 0;
  for (; i < n4; i += 4) {
    const uint32_t xv = sp_ld32(x + i), wv = sp_ld32(w + i);
    acc = __smlad(__sxtab16(off2, xv), __sxtb16(wv), acc);
    acc = __smlad(sp_sxtab16_ror8(off2, xv), sp_sxtb16_ror8(wv), acc);
  }
#endif
  for (; i < n; ++i) acc += ((int32_t)x[i] + in_off) * (int32_t)w[i];
  return acc;
}

/* Four dot products of one x with the rows w, w + ws, w + 2*ws, w + 3*ws, added to acc[0..4). */
static SP_ALWAYS_INLINE void sp_dot4_s8(const int8_t* x, const int8_t* w, int32_t ws, int32_t n,
                                        int32_t in_off, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], i = 0;
  const int8_t* w0 = w;
  const int8_t* w1 = w + ws;
  const int8_t* w2 = w + 2 * ws;
  const int8_t* w3 = w + 3 * ws;
#if SP_DSP
  const uint32_t off2 = sp_off2(in_off);
  const int32_t n4 = SP_OFF_OK(in_off) ? (n & ~3) : 0;
  for (; i < n4; i += 4) {
    const uint32_t xv = sp_ld32(x + i);
    const uint32_t xe = __sxtab16(off2, xv), xo = sp_sxtab16_ror8(off2, xv);
    uint32_t wv = sp_ld32(w0 + i);
    a0 = __smlad(xe, __sxtb16(wv), a0);
    a0 = __smlad(xo, sp_sxtb16_ror8(wv), a0);
    wv = sp_ld32(w1 + i);
    a1 = __smlad(xe, __sxtb16(wv), a1);
    a1 = __smlad(xo, sp_sxtb16_ror8(wv), a1);
    wv = sp_ld32(w2 + i);
    a2 = __smlad(xe, __sxtb16(wv), a2);
    a2 = __smlad(xo, sp_sxtb16_ror8(wv), a2);
    wv = sp_ld32(w3 + i);
    a3 = __smlad(xe, __sxtb16(wv), a3);
    a3 = __smlad(xo, sp_sxtb16_ror8(wv), a3);
  }
#endif
  for (; i < n; ++i) {
    const int32_t xi = (int32_t)x[i] + in_off;
    a0 += xi * (int32_t)w0[i];
    a1 += xi * (int32_t)w1[i];
    a2 += xi * (int32_t)w2[i];
    a3 += xi * (int32_t)w3[i];
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* Two x vectors (x0, x1) times two weight rows (w, w + ws): acc = {x0.w0, x0.w1, x1.w0, x1.w1}
 * added to (2x2 output blocking: each loaded word is used twice). */
static SP_ALWAYS_INLINE void sp_dot2x2_s8(const int8_t* x0, const int8_t* x1, const int8_t* w,
                                          int32_t ws, int32_t n, int32_t in_off, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], i = 0;
  const int8_t* w0 = w;
  const int8_t* w1 = w + ws;
#if SP_DSP
  const uint32_t off2 = sp_off2(in_off);
  const int32_t n4 = SP_OFF_OK(in_off) ? (n & ~3) : 0;
  for (; i < n4; i += 4) {
    const uint32_t xv0 = sp_ld32(x0 + i), xv1 = sp_ld32(x1 + i);
    const uint32_t wv0 = sp_ld32(w0 + i), wv1 = sp_ld32(w1 + i);
    const uint32_t we0 = __sxtb16(wv0), wo0 = sp_sxtb16_ror8(wv0);
    const uint32_t we1 = __sxtb16(wv1), wo1 = sp_sxtb16_ror8(wv1);
    uint32_t xe = __sxtab16(off2, xv0), xo = sp_sxtab16_ror8(off2, xv0);
    a0 = __smlad(xe, we0, a0);
    a0 = __smlad(xo, wo0, a0);
    a1 = __smlad(xe, we1, a1);
    a1 = __smlad(xo, wo1, a1);
    xe = __sxtab16(off2, xv1);
    xo = sp_sxtab16_ror8(off2, xv1);
    a2 = __smlad(xe, we0, a2);
    a2 = __smlad(xo, wo0, a2);
    a3 = __smlad(xe, we1, a3);
    a3 = __smlad(xo, wo1, a3);
  }
#endif
  for (; i < n; ++i) {
    const int32_t p = (int32_t)x0[i] + in_off, q = (int32_t)x1[i] + in_off;
    a0 += p * (int32_t)w0[i];
    a1 += p * (int32_t)w1[i];
    a2 += q * (int32_t)w0[i];
    a3 += q * (int32_t)w1[i];
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* Per-channel multiply-accumulate over taps (depthwise): for channels [c, c + 4) of taps t < ntap
 * (x at xb + xoff[t], w at wb + woff[t]), acc[j] += (x[j] + in_off) * w[j]. */
static SP_ALWAYS_INLINE void sp_dw4_s8(const int8_t* xb, const int32_t* xoff, const int8_t* wb,
                                       const int32_t* woff, int32_t ntap, int32_t in_off,
                                       int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], t;
#if SP_DSP
  const uint32_t off2 = sp_off2(in_off);
  if (!SP_OFF_OK(in_off)) ntap = -ntap; /* the scalar loop below */
  for (t = 0; t < ntap; ++t) {
    const uint32_t xv = sp_ld32(xb + xoff[t]), wv = sp_ld32(wb + woff[t]);
    const uint32_t xe = __sxtab16(off2, xv), xo = sp_sxtab16_ror8(off2, xv);
    const uint32_t we = __sxtb16(wv), wo = sp_sxtb16_ror8(wv);
    a0 = __smlabb(xe, we, a0);
    a2 = __smlatt(xe, we, a2);
    a1 = __smlabb(xo, wo, a1);
    a3 = __smlatt(xo, wo, a3);
  }
  if (ntap < 0) ntap = -ntap; else ntap = 0;
#endif
  for (t = 0; t < ntap; ++t) {
    const int8_t* x = xb + xoff[t];
    const int8_t* w = wb + woff[t];
    a0 += ((int32_t)x[0] + in_off) * (int32_t)w[0];
    a1 += ((int32_t)x[1] + in_off) * (int32_t)w[1];
    a2 += ((int32_t)x[2] + in_off) * (int32_t)w[2];
    a3 += ((int32_t)x[3] + in_off) * (int32_t)w[3];
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

#endif /* SRAMPLAN_RT_SP_FAST_S8_H_ */
