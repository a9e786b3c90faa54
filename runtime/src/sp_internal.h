/* sramplan runtime: private helpers shared by the kernel sources (integer-only). */
#ifndef SRAMPLAN_RT_SP_INTERNAL_H_
#define SRAMPLAN_RT_SP_INTERNAL_H_

#include <stdint.h>

#include "sramplan_rt.h"

#define SP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SP_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline int32_t sp_clamp_i32(int32_t x, int32_t lo, int32_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* floor(x / 2^e) for 0 <= e <= 31 without relying on the implementation-defined right shift of
 * negative values (compilers turn it into an arithmetic shift). */
static inline int32_t sp_floor_shift_i32(int32_t x, int32_t e) {
  return x >= 0 ? (int32_t)((uint32_t)x >> e) : (int32_t)~((uint32_t)~x >> e);
}

/* Floor division for b > 0. */
static inline int32_t sp_floor_div_i32(int32_t a, int32_t b) {
  int32_t q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}
/* Ceil division for b > 0. */
static inline int32_t sp_ceil_div_i32(int32_t a, int32_t b) { return -sp_floor_div_i32(-a, b); }

/* gemmlowp SaturatingRoundingDoublingHighMul. */
static inline int32_t sp_srdhm(int32_t a, int32_t b) {
  int64_t ab, v;
  if (a == b && a == INT32_MIN) return INT32_MAX;
  ab = (int64_t)a * (int64_t)b;
  /* (ab + nudge) / 2^31 truncated toward zero; |v| < 2^62 so -v cannot overflow. */
  if (ab >= 0) {
    v = ab + ((int64_t)1 << 30);
    return (int32_t)(v >> 31);
  }
  v = ab + (1 - ((int64_t)1 << 30));
  return (int32_t)-((-v) >> 31);
}

/* gemmlowp RoundingDivideByPOT: round half away from zero. */
static inline int32_t sp_rdbpot(int32_t x, int32_t exponent) {
  int32_t mask, remainder, threshold;
  if (exponent <= 0) return x;
  mask = (int32_t)(((uint32_t)1 << exponent) - 1u);
  remainder = x & mask;
  threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return sp_floor_shift_i32(x, exponent) + (remainder > threshold ? 1 : 0);
}

/* Inlined even where the compiler's size heuristics would not (the requantisation of every output
 * element; a call costs as much as the arithmetic). */
#if defined(__GNUC__)
#define SP_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define SP_ALWAYS_INLINE inline
#endif

/* TFLite MultiplyByQuantizedMultiplier (double rounding). */
static SP_ALWAYS_INLINE int32_t sp_mbqm(int32_t x, int32_t multiplier, int32_t shift) {
  int32_t left = shift > 0 ? (shift > 31 ? 31 : shift) : 0;
  int32_t right = shift > 0 ? 0 : (shift < -31 ? 31 : -shift);
  int32_t shifted = (int32_t)((uint32_t)x << left); /* wraps like the int32 reference */
  return sp_rdbpot(sp_srdhm(shifted, multiplier), right);
}

/* sp_mbqm(x, multiplier, shift) + zero_point without signed overflow: the product is first clamped to
 * +-2^30 (any value that large saturates every int8/int16 output anyway, and |zero_point| < 2^16), so
 * the result equals the plain sum whenever that does not overflow. */
static SP_ALWAYS_INLINE int32_t sp_mbqm_zp(int32_t x, int32_t multiplier, int32_t shift, int32_t zero_point) {
  int32_t v = sp_mbqm(x, multiplier, shift);
  v = v > (1 << 30) ? (1 << 30) : (v < -(1 << 30) ? -(1 << 30) : v);
  return v + zero_point;
}

/* ---- N-D iteration --------------------------------------------------------------------------
 * Iterates the multi-index over dims[0..rank-1) of a shape (all but the innermost axis; the caller
 * loops the innermost axis itself) and keeps the element offset of up to SP_ITER_OPS operands. */
#define SP_ITER_OPS 4

typedef struct {
  int32_t rank; /* outer rank = full rank - 1 (>= 0) */
  int32_t nops;
  int32_t dims[SP_MAX_DIMS];
  int32_t idx[SP_MAX_DIMS];
  int32_t strides[SP_ITER_OPS][SP_MAX_DIMS];
  int32_t off[SP_ITER_OPS];
} sp_iter_t;

/* Prepares iteration over the outer axes of (rank, dims); strides[k] is operand k's stride array
 * (length rank). inner_* receive the innermost dim and each operand's innermost stride (dim 1,
 * strides 0 for rank 0). Returns 0 if any dim is 0 (nothing to iterate). */
int sp_iter_init(sp_iter_t* it, int32_t rank, const int32_t* dims, int32_t nops,
                 const int32_t* const* strides, int32_t* inner_dim, int32_t* inner_strides);
/* Advances to the next outer index; returns 0 after the last one. */
static inline int sp_iter_next(sp_iter_t* it) {
  int32_t d, k;
  for (d = it->rank - 1; d >= 0; --d) {
    ++it->idx[d];
    if (it->idx[d] < it->dims[d]) {
      for (k = 0; k < it->nops; ++k) it->off[k] += it->strides[k][d];
      return 1;
    }
    for (k = 0; k < it->nops; ++k) it->off[k] -= it->strides[k][d] * (it->dims[d] - 1);
    it->idx[d] = 0;
  }
  return 0;
}

/* Right-aligns t to the output rank `rank` / dims `out_dims` with broadcasting: writes `rank`
 * strides (0 for missing leading dims and for dims of 1 that broadcast). Returns 0 if t is not
 * broadcastable to out_dims. */
int sp_broadcast_strides(const sp_tensor_t* t, int32_t rank, const int32_t* out_dims,
                         int32_t* strides);

/* 1 if two descriptors have the same rank and dims. */
int sp_same_dims(const sp_tensor_t* a, const sp_tensor_t* b);

/* Source index along one resized axis (nearest), exact rational arithmetic. */
int32_t sp_nearest_source_index(int32_t x, int32_t in, int32_t out, sp_coord_mode_t coord,
                                sp_nearest_mode_t nearest);

#endif /* SRAMPLAN_RT_SP_INTERNAL_H_ */
