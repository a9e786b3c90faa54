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

/* Fast requantisation for one output channel whose shift is negative and multiplier non-negative
 * (every channel a real quantizer gives, scale < 1): sp_mbqm(x, m, shift) = RoundingDivideByPOT(h, r)
 * with h = floor((x*m + 2^30) / 2^31) and r = min(-shift, 31) >= 1. Rounding half away from zero
 * is floor((h + 2^(r-1) - [h < 0]) / 2^r); folding h's floor in gives
 *   floor((x*m + 2^30 + (2^(r-1) - [h < 0]) * 2^31) / 2^(31 + r)),
 * and [h < 0] may be replaced by [x < 0]: they differ only for x*m in [-2^30, 0), where h = 0 and
 * both give 0 (r >= 1). The constant 2^30 + 2^(r-1) * 2^31 is precomputed per channel (klo, khi),
 * the [x < 0] term is one add with carry and the division is the high word of one SMLAL shifted by
 * r - 1: 5 instructions instead of about 20. |result| <= 2^30, so sp_mbqm_zp's clamp is a no-op. */
typedef struct {
  int32_t m;    /* multiplier */
  uint32_t klo; /* 2^30 + 2^(r-1) * 2^31, low word */
  int32_t khi;  /* ... high word */
  int32_t sh;   /* r - 1 */
} sp_rqc_t;

/* 1 (and c filled) if rq takes the fast path with output zero point out_zp; 0 otherwise. */
static SP_ALWAYS_INLINE int sp_rqc_init(const sp_requant_t* rq, int32_t out_zp, sp_rqc_t* c) {
  const int32_t right = rq->shift < -31 ? 31 : -rq->shift;
  uint32_t half;
  c->m = 0;
  c->klo = 0;
  c->khi = 0;
  c->sh = 0;
  if (rq->multiplier < 0 || right < 1 || out_zp < -65536 || out_zp > 65536) return 0;
  half = 1u << (right - 1);
  c->m = rq->multiplier;
  c->sh = right - 1;
  c->klo = (1u << 30) | (half << 31);
  c->khi = (int32_t)(half >> 1);
  return 1;
}

/* = sp_mbqm(x, rq->multiplier, rq->shift) for a channel sp_rqc_init accepted. */
static SP_ALWAYS_INLINE int32_t sp_rqc_apply(int32_t x, const sp_rqc_t* c) {
#if SP_DSP
  uint32_t lo, t;
  int32_t hi;
  __asm__("asr %[t], %[x], #31\n\t"
          "adds %[lo], %[klo], %[t], lsl #31\n\t"
          "adc %[hi], %[khi], %[t]\n\t"
          "smlal %[lo], %[hi], %[x], %[m]\n\t"
          : [lo] "=&r"(lo), [hi] "=&r"(hi), [t] "=&r"(t)
          : [x] "r"(x), [m] "r"(c->m), [klo] "r"(c->klo), [khi] "r"(c->khi)
          : "cc");
  return hi >> c->sh;
#else
  const int64_t k = (int64_t)(((uint64_t)(uint32_t)c->khi << 32) | c->klo);
  const int64_t q = k + (x < 0 ? -((int64_t)1 << 31) : 0) + (int64_t)x * c->m;
  return sp_floor_shift_i32((int32_t)(uint32_t)((uint64_t)q >> 32), c->sh);
#endif
}

/* sp_rqc_out for the full int8 activation range [-128, 127]: one saturation. */
static SP_ALWAYS_INLINE int8_t sp_rqc_out_full(int32_t acc, const sp_rqc_t* c, int32_t out_zp) {
#if SP_DSP
  return (int8_t)__ssat(sp_rqc_apply(acc, c) + out_zp, 8);
#else
  const int32_t v = sp_rqc_apply(acc, c) + out_zp;
  return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
#endif
}

/* sp_fq_out through the fast path. */
static SP_ALWAYS_INLINE int8_t sp_rqc_out(int32_t acc, const sp_rqc_t* c, int32_t out_zp,
                                          int32_t act_min, int32_t act_max) {
  int32_t v = sp_rqc_apply(acc, c) + out_zp;
  v = v < act_min ? act_min : v;
  return (int8_t)(v > act_max ? act_max : v);
}

/* a + b modulo 2^32 (two's complement), without C's undefined signed overflow: TFLite's Add cannot
 * overflow with the parameters its Prepare derives, so this only defines what adversarial
 * parameters (the host tests') give. */
static SP_ALWAYS_INLINE int32_t sp_wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* TFLite int8 Add of one element pair (= sp_add_s8 / the segment kernels' residual add). */
static SP_ALWAYS_INLINE int8_t sp_fq_add(int32_t a, int32_t b, const sp_add_s8_params_t* p) {
  const int32_t x1 = (a - p->in1_zp) * (1 << p->left_shift);
  const int32_t x2 = (b - p->in2_zp) * (1 << p->left_shift);
  const int32_t s1 = sp_fq_mbqm(x1, p->in1_rq.multiplier, p->in1_rq.shift);
  const int32_t s2 = sp_fq_mbqm(x2, p->in2_rq.multiplier, p->in2_rq.shift);
  int32_t v = sp_fq_mbqm(sp_wrap_add(s1, s2), p->out_rq.multiplier, p->out_rq.shift);
  v = v > (1 << 30) ? (1 << 30) : (v < -(1 << 30) ? -(1 << 30) : v);
  v += p->out_zp;
  v = v < p->act_min ? p->act_min : v;
  return (int8_t)(v > p->act_max ? p->act_max : v);
}

/* ---- One tensor-wide requantisation (the Add's three) -------------------------------------
 * Prepared once per call: mode 1 the fast path (shift < 0), mode 2 shift >= 0 (left shift, then
 * the doubling high multiply, no rounding division), mode 0 sp_fq_mbqm. All equal sp_mbqm. */
typedef struct {
  sp_rqc_t c;
  int32_t multiplier, shift, left, mode;
} sp_rqt_t;

static SP_ALWAYS_INLINE void sp_rqt_init(const sp_requant_t* rq, sp_rqt_t* t) {
  t->multiplier = rq->multiplier;
  t->shift = rq->shift;
  t->left = rq->shift > 31 ? 31 : rq->shift;
  if (sp_rqc_init(rq, 0, &t->c))
    t->mode = 1;
  else
    t->mode = rq->shift >= 0 && rq->multiplier != INT32_MIN ? 2 : 0;
}

static SP_ALWAYS_INLINE int32_t sp_rqt_apply(int32_t x, const sp_rqt_t* t) {
  if (t->mode == 1) return sp_rqc_apply(x, &t->c);
  if (t->mode == 2) return sp_fq_srdhm((int32_t)((uint32_t)x << t->left), t->multiplier);
  return sp_fq_mbqm(x, t->multiplier, t->shift);
}

/* sp_fq_add with its three requantisations prepared once (sp_addc_init). */
typedef struct {
  sp_rqt_t r1, r2, ro;
  int32_t in1_zp, in2_zp, out_zp, left_shift, act_min, act_max;
} sp_addc_t;

static SP_ALWAYS_INLINE void sp_addc_init(const sp_add_s8_params_t* p, sp_addc_t* c) {
  sp_rqt_init(&p->in1_rq, &c->r1);
  sp_rqt_init(&p->in2_rq, &c->r2);
  sp_rqt_init(&p->out_rq, &c->ro);
  c->in1_zp = p->in1_zp;
  c->in2_zp = p->in2_zp;
  c->out_zp = p->out_zp;
  c->left_shift = p->left_shift;
  c->act_min = p->act_min;
  c->act_max = p->act_max;
}

/* = sp_fq_add(a, b, p) for the p sp_addc_init prepared c from. */
static SP_ALWAYS_INLINE int8_t sp_addc(int32_t a, int32_t b, const sp_addc_t* c) {
  const int32_t x1 = (a - c->in1_zp) * (1 << c->left_shift);
  const int32_t x2 = (b - c->in2_zp) * (1 << c->left_shift);
  int32_t v = sp_rqt_apply(sp_wrap_add(sp_rqt_apply(x1, &c->r1), sp_rqt_apply(x2, &c->r2)), &c->ro);
  v = v > (1 << 30) ? (1 << 30) : (v < -(1 << 30) ? -(1 << 30) : v);
  v += c->out_zp;
  v = v < c->act_min ? c->act_min : v;
  return (int8_t)(v > c->act_max ? c->act_max : v);
}

/* 1 if every channel of rq[0..n) has a shift in [-31, -1] and a non-negative multiplier and
 * |out_zp| <= 2^16: sp_rqf_out_full may then requantise any of them (checked once per call). */
static inline int sp_rq_all_fast(const sp_requant_t* rq, int32_t n, int32_t out_zp) {
  int32_t i;
  if (out_zp < -65536 || out_zp > 65536) return 0;
  for (i = 0; i < n; ++i)
    if (rq[i].multiplier < 0 || rq[i].shift < -31 || rq[i].shift > -1) return 0;
  return 1;
}

/* sp_rqc_out_full with the channel constants derived inline from rq (no checks, no branch): only
 * for channels sp_rq_all_fast accepted. */
static SP_ALWAYS_INLINE int8_t sp_rqf_out_full(int32_t acc, const sp_requant_t* rq, int32_t out_zp) {
  sp_rqc_t c;
  const uint32_t half = 1u << (uint32_t)~rq->shift; /* 2^(r - 1), r = -shift */
  c.m = rq->multiplier;
  c.sh = ~rq->shift;
  c.klo = (1u << 30) | (half << 31);
  c.khi = (int32_t)(half >> 1);
  return sp_rqc_out_full(acc, &c, out_zp);
}

/* dst[i] = requant(acc[i], rq[i]) for i < 4 (four channels of one pixel: depthwise), each through
 * the fast path where its channel allows. */
static SP_ALWAYS_INLINE void sp_rq4_store(const int32_t acc[4], const sp_requant_t* rq, int32_t out_zp,
                                          int32_t act_min, int32_t act_max, int8_t* dst) {
  const int full = act_min == -128 && act_max == 127;
  int i;
  for (i = 0; i < 4; ++i) {
    sp_rqc_t c;
    if (!sp_rqc_init(&rq[i], out_zp, &c))
      dst[i] = sp_fq_out(acc[i], &rq[i], out_zp, act_min, act_max);
    else if (full)
      dst[i] = sp_rqc_out_full(acc[i], &c, out_zp);
    else
      dst[i] = sp_rqc_out(acc[i], &c, out_zp, act_min, act_max);
  }
}

/* A 4-byte word at any alignment (one LDR / STR on ARMv7-M; memcpy elsewhere). */
static SP_ALWAYS_INLINE uint32_t sp_ld32u(const int8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static SP_ALWAYS_INLINE void sp_st32(int8_t* p, uint32_t v) { memcpy(p, &v, 4); }

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

/* ---- 2x2 block on the DSP path: two pixels x, x + st by two weight rows w, w + st ------------
 * (the common case of dense NHWC input and dense [K][C] weights: both strides are C). One 4-byte
 * step: 4 loads, 4 + 4 sign extensions (the input offset added in SXTAB16), 8 SMLAD. The loop is
 * written in assembly so that all 14 values stay in registers (the compiler spilled pointers and the
 * counter); the trip count lives on the stack and costs 3 instructions per 16 bytes. */
#if SP_DSP
#define SP_MAC2X2_STEP                                  \
  "ldr %[t0], [%[w], %[st]]\n\t"                        \
  "ldr %[t2], [%[w]], #4\n\t"                           \
  "sxtb16 %[t1], %[t0]\n\t"                             \
  "sxtb16 %[t0], %[t0], ror #8\n\t"                     \
  "sxtb16 %[t3], %[t2]\n\t"                             \
  "sxtb16 %[t2], %[t2], ror #8\n\t"                     \
  "ldr %[t4], [%[x], %[st]]\n\t"                        \
  "sxtab16 %[t5], %[off], %[t4], ror #8\n\t"            \
  "sxtab16 %[t4], %[off], %[t4]\n\t"                    \
  "smlad %[a2], %[t4], %[t3], %[a2]\n\t"                \
  "smlad %[a3], %[t4], %[t1], %[a3]\n\t"                \
  "smlad %[a2], %[t5], %[t2], %[a2]\n\t"                \
  "smlad %[a3], %[t5], %[t0], %[a3]\n\t"                \
  "ldr %[t4], [%[x]], #4\n\t"                           \
  "sxtab16 %[t5], %[off], %[t4], ror #8\n\t"            \
  "sxtab16 %[t4], %[off], %[t4]\n\t"                    \
  "smlad %[a0], %[t4], %[t3], %[a0]\n\t"                \
  "smlad %[a1], %[t4], %[t1], %[a1]\n\t"                \
  "smlad %[a0], %[t5], %[t2], %[a0]\n\t"                \
  "smlad %[a1], %[t5], %[t0], %[a1]\n\t"

/* acc += {x.w, x.(w + st), (x + st).w, (x + st).(w + st)} over n bytes, n a multiple of 4. */
static SP_ALWAYS_INLINE void sp_mac2x2_eq(const int8_t* x, const int8_t* w, int32_t st, int32_t n,
                                          uint32_t off2, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  uint32_t t0, t1, t2, t3, t4, t5;
  int32_t cnt = n >> 4;
  if (cnt > 0) {
    __asm__ volatile("1:\n\t" SP_MAC2X2_STEP SP_MAC2X2_STEP SP_MAC2X2_STEP SP_MAC2X2_STEP
                     "ldr %[t0], %[cnt]\n\t"
                     "subs %[t0], %[t0], #1\n\t"
                     "str %[t0], %[cnt]\n\t"
                     "bne 1b\n\t"
                     : [x] "+r"(x), [w] "+r"(w), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2),
                       [a3] "+r"(a3), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2),
                       [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5), [cnt] "+m"(cnt)
                     : [st] "r"(st), [off] "r"(off2)
                     : "cc", "memory");
  }
  for (n &= 12; n > 0; n -= 4) {
    __asm__(SP_MAC2X2_STEP
            : [x] "+r"(x), [w] "+r"(w), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),
              [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
              [t5] "=&r"(t5)
            : [st] "r"(st), [off] "r"(off2)
            : "memory");
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#endif

#if SP_DSP
/* acc[j] += x . (w + j * st) for j < 4 over n bytes, n a multiple of 4 (> 0): one pixel by four
 * weight rows; 25 instructions per 16 multiply-accumulates, every value in a register. */
#define SP_MAC1X4_ROWS(wp, ra, rb)                       \
  "ldr %[t], [" wp ", %[st]]\n\t"                       \
  "sxtb16 %[u], %[t]\n\t"                               \
  "sxtb16 %[t], %[t], ror #8\n\t"                       \
  "smlad " rb ", %[xe], %[u], " rb "\n\t"               \
  "smlad " rb ", %[xo], %[t], " rb "\n\t"               \
  "ldr %[t], [" wp "], #4\n\t"                          \
  "sxtb16 %[u], %[t]\n\t"                               \
  "sxtb16 %[t], %[t], ror #8\n\t"                       \
  "smlad " ra ", %[xe], %[u], " ra "\n\t"               \
  "smlad " ra ", %[xo], %[t], " ra "\n\t"
static SP_ALWAYS_INLINE void sp_mac1x4(const int8_t* x, const int8_t* w, int32_t st, int32_t n,
                                       uint32_t off2, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int8_t* w2 = w + 2 * st;
  const int8_t* const end = x + n;
  uint32_t t, u, xe, xo;
  __asm__ volatile("1:\n\t"
                   "ldr %[t], [%[x]], #4\n\t"
                   "sxtab16 %[xe], %[off], %[t]\n\t"
                   "sxtab16 %[xo], %[off], %[t], ror #8\n\t"
                   SP_MAC1X4_ROWS("%[w]", "%[a0]", "%[a1]")
                   SP_MAC1X4_ROWS("%[w2]", "%[a2]", "%[a3]")
                   "cmp %[x], %[end]\n\t"
                   "bne 1b\n\t"
                   : [x] "+r"(x), [w] "+r"(w), [w2] "+r"(w2), [a0] "+r"(a0), [a1] "+r"(a1),
                     [a2] "+r"(a2), [a3] "+r"(a3), [t] "=&r"(t), [u] "=&r"(u), [xe] "=&r"(xe),
                     [xo] "=&r"(xo)
                   : [st] "r"(st), [off] "r"(off2), [end] "r"(end)
                   : "cc", "memory");
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#endif

#if defined(__GNUC__)
#define SP_NOINLINE __attribute__((noinline, unused))
#else
#define SP_NOINLINE
#endif

/* One requantised output through the fast path when the channel allows it (sp_rqc_t), else
 * sp_fq_out: both equal sp_mbqm_zp + clamp. */
#define SP_RQ_OUT(acc, fast, c, rqp, out_zp, act_min, act_max)           \
  ((fast) ? sp_rqc_out((acc), (c), (out_zp), (act_min), (act_max))       \
          : sp_fq_out((acc), (rqp), (out_zp), (act_min), (act_max)))

/* ---- Dense outputs (pointwise conv, FC, the bottleneck's expansion and projection) -----------
 * `count` outputs of one contiguous x of n bytes into dst[k * ds]:
 *   dst[k * ds] = requant_k(bias[k] + sum_i (x[i] + in_off) * w[k * ws + i]),
 * four output channels at a time (each loaded word of x feeds four rows). */
static SP_NOINLINE void sp_dense_out(const int8_t* x, int32_t n, const int8_t* w, int32_t ws,
                                            const int32_t* bias, const sp_requant_t* rq,
                                            int32_t in_off, int32_t out_zp, int32_t act_min,
                                            int32_t act_max, int8_t* dst, int32_t ds,
                                            int32_t count) {
  int32_t k = 0, j;
  /* Every channel on the fast requantisation and the full int8 range (checked once). */
  const int ff = act_min == -128 && act_max == 127 && sp_rq_all_fast(rq, count, out_zp);
#if SP_DSP
  const int32_t n4 = SP_OFF_OK(in_off) ? (n & ~3) : 0;
  const uint32_t off2 = sp_off2(in_off);
#endif
  for (; k + 4 <= count; k += 4) {
    int32_t acc[4] = {0, 0, 0, 0};
    if (bias) {
      for (j = 0; j < 4; ++j) acc[j] = bias[k + j];
    }
#if SP_DSP
    if (n4 > 0) {
      sp_mac1x4(x, w + k * ws, ws, n4, off2, acc);
      if (n4 < n) sp_dot4_s8(x + n4, w + k * ws + n4, ws, n - n4, in_off, acc);
    } else
#endif
      sp_dot4_s8(x, w + k * ws, ws, n, in_off, acc);
    if (ff) {
      for (j = 0; j < 4; ++j) dst[(k + j) * ds] = sp_rqf_out_full(acc[j], &rq[k + j], out_zp);
      continue;
    }
    for (j = 0; j < 4; ++j) {
      sp_rqc_t c;
      const int f = sp_rqc_init(&rq[k + j], out_zp, &c);
      dst[(k + j) * ds] = SP_RQ_OUT(acc[j], f, &c, &rq[k + j], out_zp, act_min, act_max);
    }
  }
  for (; k < count; ++k) {
    const int32_t acc = sp_dot_s8(x, w + k * ws, n, in_off) + (bias ? bias[k] : 0);
    dst[k * ds] = sp_fq_out(acc, &rq[k], out_zp, act_min, act_max);
  }
}

/* sp_dense_out for two pixels x0, x1 into dst0, dst1 (2x2 output blocking: two pixels by two
 * output channels, every loaded word feeds two multiply-accumulates). */
static SP_NOINLINE void sp_dense_out2(const int8_t* x0, const int8_t* x1, int32_t n,
                                             const int8_t* w, int32_t ws, const int32_t* bias,
                                             const sp_requant_t* rq, int32_t in_off,
                                             int32_t out_zp, int32_t act_min, int32_t act_max,
                                             int8_t* dst0, int8_t* dst1, int32_t ds,
                                             int32_t count) {
  int32_t k = 0;
#if SP_DSP
  const int eq = x1 - x0 == ws && n >= 4 && SP_OFF_OK(in_off);
  const uint32_t off2 = sp_off2(in_off);
#endif
  for (; k + 2 <= count; k += 2) {
    int32_t acc[4] = {0, 0, 0, 0};
    sp_rqc_t c0, c1;
    int f0, f1;
    if (bias) {
      acc[0] = acc[2] = bias[k];
      acc[1] = acc[3] = bias[k + 1];
    }
#if SP_DSP
    if (eq) {
      const int32_t n4 = n & ~3;
      sp_mac2x2_eq(x0, w + k * ws, ws, n4, off2, acc);
      if (n4 < n) sp_dot2x2_s8(x0 + n4, x1 + n4, w + k * ws + n4, ws, n - n4, in_off, acc);
    } else
#endif
      sp_dot2x2_s8(x0, x1, w + k * ws, ws, n, in_off, acc);
    f0 = sp_rqc_init(&rq[k], out_zp, &c0);
    f1 = sp_rqc_init(&rq[k + 1], out_zp, &c1);
    dst0[k * ds] = SP_RQ_OUT(acc[0], f0, &c0, &rq[k], out_zp, act_min, act_max);
    dst1[k * ds] = SP_RQ_OUT(acc[2], f0, &c0, &rq[k], out_zp, act_min, act_max);
    dst0[(k + 1) * ds] = SP_RQ_OUT(acc[1], f1, &c1, &rq[k + 1], out_zp, act_min, act_max);
    dst1[(k + 1) * ds] = SP_RQ_OUT(acc[3], f1, &c1, &rq[k + 1], out_zp, act_min, act_max);
  }
  if (k < count) {
    sp_dense_out(x0, n, w + k * ws, ws, bias ? bias + k : 0, rq + k, in_off, out_zp, act_min,
                 act_max, dst0 + k * ds, ds, count - k);
    sp_dense_out(x1, n, w + k * ws, ws, bias ? bias + k : 0, rq + k, in_off, out_zp, act_min,
                 act_max, dst1 + k * ds, ds, count - k);
  }
}

/* ---- Dense outputs of many pixels, output channels outer -------------------------------------
 * npix pixels x + p * xs (n bytes each) times `count` weight rows w + k * ws:
 *   dst[p * dps + k * dcs] = requant_k(bias[k] + sum_i (x[p * xs + i] + in_off) * w[k * ws + i]).
 * Two output channels at a time over all pixels two at a time (2x2 blocking): the two channels'
 * bias and requantisation constants are set up once per channel pair, not once per pixel. An odd
 * last pixel runs on its own through sp_dense_out (four channels at a time). */
static SP_NOINLINE void sp_dense_pixels(const int8_t* x, int32_t xs, int32_t npix, int32_t n,
                                        const int8_t* w, int32_t ws, const int32_t* bias,
                                        const sp_requant_t* rq, int32_t in_off, int32_t out_zp,
                                        int32_t act_min, int32_t act_max, int8_t* dst, int32_t dps,
                                        int32_t dcs, int32_t count) {
  int32_t k = 0, p;
#if SP_DSP
  const int eq = xs == ws && n >= 4 && SP_OFF_OK(in_off);
  const uint32_t off2 = sp_off2(in_off);
#endif
  if (npix & 1) { /* the odd last pixel: four output channels at a time (sp_dense_out) */
    --npix;
    sp_dense_out(x + npix * xs, n, w, ws, bias, rq, in_off, out_zp, act_min, act_max,
                 dst + npix * dps, dcs, count);
    if (npix == 0) return;
  }
  for (; k + 2 <= count; k += 2) {
    const int8_t* const wk = w + k * ws;
    const int32_t b0 = bias ? bias[k] : 0, b1 = bias ? bias[k + 1] : 0;
    const sp_requant_t* const rq0 = &rq[k];
    const sp_requant_t* const rq1 = &rq[k + 1];
    sp_rqc_t c0, c1;
    /* 2: fast requantisation and the full int8 range, 1: fast, 0: sp_fq_out. */
    const int fast = (sp_rqc_init(rq0, out_zp, &c0) & sp_rqc_init(rq1, out_zp, &c1)) *
                     (act_min == -128 && act_max == 127 ? 2 : 1);
    const int8_t* xp = x;
    int8_t* dp = dst + k * dcs;
    for (p = 0; p + 2 <= npix; p += 2, xp += 2 * xs, dp += 2 * dps) {
      int32_t acc[4];
      acc[0] = acc[2] = b0;
      acc[1] = acc[3] = b1;
#if SP_DSP
      if (eq) {
        const int32_t n4 = n & ~3;
        sp_mac2x2_eq(xp, wk, ws, n4, off2, acc);
        if (n4 < n) sp_dot2x2_s8(xp + n4, xp + xs + n4, wk + n4, ws, n - n4, in_off, acc);
      } else
#endif
        sp_dot2x2_s8(xp, xp + xs, wk, ws, n, in_off, acc);
      if (fast == 2) {
        dp[0] = sp_rqc_out_full(acc[0], &c0, out_zp);
        dp[dcs] = sp_rqc_out_full(acc[1], &c1, out_zp);
        dp[dps] = sp_rqc_out_full(acc[2], &c0, out_zp);
        dp[dps + dcs] = sp_rqc_out_full(acc[3], &c1, out_zp);
      } else if (fast) {
        dp[0] = sp_rqc_out(acc[0], &c0, out_zp, act_min, act_max);
        dp[dcs] = sp_rqc_out(acc[1], &c1, out_zp, act_min, act_max);
        dp[dps] = sp_rqc_out(acc[2], &c0, out_zp, act_min, act_max);
        dp[dps + dcs] = sp_rqc_out(acc[3], &c1, out_zp, act_min, act_max);
      } else {
        dp[0] = sp_fq_out(acc[0], rq0, out_zp, act_min, act_max);
        dp[dcs] = sp_fq_out(acc[1], rq1, out_zp, act_min, act_max);
        dp[dps] = sp_fq_out(acc[2], rq0, out_zp, act_min, act_max);
        dp[dps + dcs] = sp_fq_out(acc[3], rq1, out_zp, act_min, act_max);
      }
    }
  }
  if (k < count) { /* the last, odd channel */
    const int32_t b0 = bias ? bias[k] : 0;
    for (p = 0; p < npix; ++p)
      dst[p * dps + k * dcs] =
          sp_fq_out(b0 + sp_dot_s8(x + p * xs, w + k * ws, n, in_off), &rq[k], out_zp, act_min,
                    act_max);
  }
}

/* sp_dw4_s8 with the taps as pairs tp[2t] (input offset), tp[2t + 1] (weight offset): on the DSP
 * path one LDRD per tap and a loop in assembly with every value in a register (13 instructions per
 * tap for four channels; the compiler's loop spilled to the stack, 19). */
static SP_ALWAYS_INLINE void sp_dw4p_s8(const int8_t* xb, const int8_t* wb, const int32_t* tp,
                                        int32_t ntap, int32_t in_off, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], t = 0;
#if SP_DSP
  if (ntap > 0 && SP_OFF_OK(in_off)) {
    const uint32_t off2 = sp_off2(in_off);
    const int32_t* const end = tp + 2 * ntap;
    uint32_t t0, t1, t2, t3;
    __asm__ volatile("1:\n\t"
                     "ldrd %[t0], %[t1], [%[tp]], #8\n\t"
                     "ldr %[t0], [%[xb], %[t0]]\n\t"
                     "ldr %[t1], [%[wb], %[t1]]\n\t"
                     "sxtab16 %[t2], %[off], %[t0]\n\t"
                     "sxtab16 %[t0], %[off], %[t0], ror #8\n\t"
                     "sxtb16 %[t3], %[t1]\n\t"
                     "sxtb16 %[t1], %[t1], ror #8\n\t"
                     "smlabb %[a0], %[t2], %[t3], %[a0]\n\t"
                     "smlatt %[a2], %[t2], %[t3], %[a2]\n\t"
                     "smlabb %[a1], %[t0], %[t1], %[a1]\n\t"
                     "smlatt %[a3], %[t0], %[t1], %[a3]\n\t"
                     "cmp %[tp], %[end]\n\t"
                     "bne 1b\n\t"
                     : [tp] "+r"(tp), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),
                       [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
                     : [xb] "r"(xb), [wb] "r"(wb), [off] "r"(off2), [end] "r"(end)
                     : "cc", "memory");
    t = ntap;
    tp -= 2 * ntap;
  }
#endif
  for (; t < ntap; ++t) {
    const int8_t* x = xb + tp[2 * t];
    const int8_t* w = wb + tp[2 * t + 1];
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
