/* sramplan runtime: int8 elementwise kernels and softmax (integer-only, MCU-safe).
 * TFLite (Micro) reference semantics for Add/Sub/Mul; see sramplan_rt_int8.h for softmax. */
#include "sp_fast_s8.h"
#include "sp_internal.h"
#include "sramplan_rt_int8.h"

static int act_ok(int32_t act_min, int32_t act_max) {
  return act_min >= -128 && act_max <= 127 && act_min <= act_max;
}

/* Sets up a broadcasting binary iteration (a, b, out). Returns SP_OK with *empty set if there is
 * nothing to do. */
static sp_status_t binary_setup(const sp_tensor_t* a_desc, const sp_tensor_t* b_desc,
                                const sp_tensor_t* out_desc, int32_t as[SP_MAX_DIMS],
                                int32_t bs[SP_MAX_DIMS], sp_iter_t* it, int32_t* inner,
                                int32_t inner_st[3], int* empty) {
  const int32_t* st[3];
  if (!sp_tensor_valid(a_desc) || !sp_tensor_valid(b_desc) || !sp_tensor_valid(out_desc))
    return SP_BAD_ARGUMENT;
  if (!sp_broadcast_strides(a_desc, out_desc->rank, out_desc->dims, as) ||
      !sp_broadcast_strides(b_desc, out_desc->rank, out_desc->dims, bs))
    return SP_BAD_ARGUMENT;
  st[0] = as;
  st[1] = bs;
  st[2] = out_desc->strides;
  *empty = !sp_iter_init(it, out_desc->rank, out_desc->dims, 3, st, inner, inner_st);
  return SP_OK;
}

/* 1 if a, b and out have the same dims and strides and their elements fill [0, numel) exactly
 * (strides a permutation of a dense layout). */
static int same_dense_layout(const sp_tensor_t* a, const sp_tensor_t* b, const sp_tensor_t* o) {
  int32_t d, n = 1;
  if (!sp_same_dims(a, o) || !sp_same_dims(b, o)) return 0;
  for (d = 0; d < o->rank; ++d) {
    if (a->strides[d] != o->strides[d] || b->strides[d] != o->strides[d]) return 0;
    if (o->dims[d] > 1 && o->strides[d] < 1) return 0;
    n *= o->dims[d];
  }
  /* Every stride >= 1 where dims > 1 and span == numel: the map index -> offset is a bijection
   * onto [0, numel) only if no two elements collide; span == numel with positive strides of a
   * mixed-radix layout is exactly that when each stride is the product of the dims inside it. */
  for (d = 0; d < o->rank; ++d) {
    int32_t e, inner = 1;
    if (o->dims[d] <= 1) continue;
    for (e = 0; e < o->rank; ++e)
      if (e != d && o->dims[e] > 1 && o->strides[e] < o->strides[d]) inner *= o->dims[e];
    if (o->strides[d] != inner) return 0;
  }
  return n > 0 && sp_tensor_span(o) == n;
}

static sp_status_t add_sub_s8(const sp_tensor_t* a_desc, const int8_t* a,
                              const sp_tensor_t* b_desc, const int8_t* b,
                              const sp_add_s8_params_t* p, const sp_tensor_t* out_desc,
                              int8_t* out, int32_t sign) {
  int32_t as[SP_MAX_DIMS], bs[SP_MAX_DIMS], inner, ist[3], i;
  int empty;
  sp_iter_t it;
  sp_status_t st;
  if (p == 0 || !act_ok(p->act_min, p->act_max) || p->left_shift < 0 || p->left_shift > 22)
    return SP_BAD_ARGUMENT;
  st = binary_setup(a_desc, b_desc, out_desc, as, bs, &it, &inner, ist, &empty);
  if (st != SP_OK || empty) return st;
  if (sign > 0 && same_dense_layout(a_desc, b_desc, out_desc)) {
    /* The three tensors have one layout without gaps: element i of each is byte i. */
    const int32_t n = sp_tensor_numel(out_desc);
    sp_addc_t q; /* a local copy: stores through out cannot alias it */
    sp_addc_init(p, &q);
    for (i = 0; i < n; ++i) out[i] = sp_addc(a[i], b[i], &q);
    return SP_OK;
  }
  do {
    const int8_t* pa = a + it.off[0];
    const int8_t* pb = b + it.off[1];
    int8_t* po = out + it.off[2];
    for (i = 0; i < inner; ++i) {
      const int32_t x1 = ((int32_t)pa[i * ist[0]] - p->in1_zp) * (1 << p->left_shift);
      const int32_t x2 = ((int32_t)pb[i * ist[1]] - p->in2_zp) * (1 << p->left_shift);
      const int32_t s1 = sp_fq_mbqm(x1, p->in1_rq.multiplier, p->in1_rq.shift);
      const int32_t s2 = sp_fq_mbqm(x2, p->in2_rq.multiplier, p->in2_rq.shift);
      const int32_t raw = sign > 0 ? s1 + s2 : s1 - s2;
      int32_t v = sp_fq_mbqm(raw, p->out_rq.multiplier, p->out_rq.shift);
      v = v > (1 << 30) ? (1 << 30) : (v < -(1 << 30) ? -(1 << 30) : v); /* as sp_mbqm_zp */
      po[i * ist[2]] = (int8_t)sp_clamp_i32(v + p->out_zp, p->act_min, p->act_max);
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_add_s8(const sp_tensor_t* a_desc, const int8_t* a, const sp_tensor_t* b_desc,
                      const int8_t* b, const sp_add_s8_params_t* p, const sp_tensor_t* out_desc,
                      int8_t* out) {
  return add_sub_s8(a_desc, a, b_desc, b, p, out_desc, out, 1);
}

sp_status_t sp_sub_s8(const sp_tensor_t* a_desc, const int8_t* a, const sp_tensor_t* b_desc,
                      const int8_t* b, const sp_add_s8_params_t* p, const sp_tensor_t* out_desc,
                      int8_t* out) {
  return add_sub_s8(a_desc, a, b_desc, b, p, out_desc, out, -1);
}

sp_status_t sp_mul_s8(const sp_tensor_t* a_desc, const int8_t* a, const sp_tensor_t* b_desc,
                      const int8_t* b, const sp_mul_s8_params_t* p, const sp_tensor_t* out_desc,
                      int8_t* out) {
  int32_t as[SP_MAX_DIMS], bs[SP_MAX_DIMS], inner, ist[3], i;
  int empty;
  sp_iter_t it;
  sp_status_t st;
  if (p == 0 || !act_ok(p->act_min, p->act_max)) return SP_BAD_ARGUMENT;
  st = binary_setup(a_desc, b_desc, out_desc, as, bs, &it, &inner, ist, &empty);
  if (st != SP_OK || empty) return st;
  do {
    const int8_t* pa = a + it.off[0];
    const int8_t* pb = b + it.off[1];
    int8_t* po = out + it.off[2];
    for (i = 0; i < inner; ++i) {
      const int32_t x1 = (int32_t)pa[i * ist[0]] - p->in1_zp;
      const int32_t x2 = (int32_t)pb[i * ist[1]] - p->in2_zp;
      const int32_t v = sp_mbqm_zp(x1 * x2, p->rq.multiplier, p->rq.shift, p->out_zp);
      po[i * ist[2]] = (int8_t)sp_clamp_i32(v, p->act_min, p->act_max);
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

/* Unary setup: in and out have the same dims. */
static sp_status_t unary_setup(const sp_tensor_t* in_desc, const sp_tensor_t* out_desc,
                               sp_iter_t* it, int32_t* inner, int32_t inner_st[2], int* empty) {
  const int32_t* st[2];
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || !sp_same_dims(in_desc, out_desc))
    return SP_BAD_ARGUMENT;
  st[0] = in_desc->strides;
  st[1] = out_desc->strides;
  *empty = !sp_iter_init(it, out_desc->rank, out_desc->dims, 2, st, inner, inner_st);
  return SP_OK;
}

sp_status_t sp_lut_s8(const sp_tensor_t* in_desc, const int8_t* in, const int8_t table[256],
                      const sp_tensor_t* out_desc, int8_t* out) {
  int32_t inner, ist[2], i;
  int empty;
  sp_iter_t it;
  sp_status_t st;
  if (table == 0) return SP_BAD_ARGUMENT;
  st = unary_setup(in_desc, out_desc, &it, &inner, ist, &empty);
  if (st != SP_OK || empty) return st;
  do {
    const int8_t* pi = in + it.off[0];
    int8_t* po = out + it.off[1];
    for (i = 0; i < inner; ++i) po[i * ist[1]] = table[(int32_t)pi[i * ist[0]] + 128];
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_requantize_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                             sp_requant_t rq, int32_t out_zp, const sp_tensor_t* out_desc,
                             int8_t* out) {
  int32_t inner, ist[2], i;
  int empty;
  sp_iter_t it;
  sp_status_t st = unary_setup(in_desc, out_desc, &it, &inner, ist, &empty);
  if (st != SP_OK || empty) return st;
  do {
    const int8_t* pi = in + it.off[0];
    int8_t* po = out + it.off[1];
    for (i = 0; i < inner; ++i) {
      const int32_t v = sp_mbqm_zp((int32_t)pi[i * ist[0]] - in_zp, rq.multiplier, rq.shift, out_zp);
      po[i * ist[1]] = (int8_t)sp_clamp_i32(v, -128, 127);
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_clamp_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t act_min,
                        int32_t act_max, const sp_tensor_t* out_desc, int8_t* out) {
  int32_t inner, ist[2], i;
  int empty;
  sp_iter_t it;
  sp_status_t st;
  if (!act_ok(act_min, act_max)) return SP_BAD_ARGUMENT;
  st = unary_setup(in_desc, out_desc, &it, &inner, ist, &empty);
  if (st != SP_OK || empty) return st;
  do {
    const int8_t* pi = in + it.off[0];
    int8_t* po = out + it.off[1];
    for (i = 0; i < inner; ++i) po[i * ist[1]] = (int8_t)sp_clamp_i32(pi[i * ist[0]], act_min, act_max);
  } while (sp_iter_next(&it));
  return SP_OK;
}

/* ---- Softmax ------------------------------------------------------------------------------- */

/* Reciprocal of s > 0: returns r (Q30) and z = leading zeros of s, with 1/s ~= r * 2^(z - 62). */
static uint32_t reciprocal_q30(uint32_t s, int32_t* z_out) {
  int32_t z = 0, iter;
  uint32_t d, r;
  while ((s & 0x80000000u) == 0) {
    s <<= 1;
    ++z;
  }
  d = s; /* Q32 value in [0.5, 1) */
  /* r0 = 48/17 - 32/17 * d (Q30): 48/17 * 2^30 = 3031741621, 32/17 * 2^30 = 2021161080. */
  r = 3031741621u - (uint32_t)(((uint64_t)2021161080u * d) >> 32);
  for (iter = 0; iter < 4; ++iter) {
    const uint32_t dr = (uint32_t)(((uint64_t)d * r) >> 32); /* Q30, <= 2^30 * (1 + 1/17) */
    const uint32_t two_minus = 0x80000000u - dr;              /* Q30 of 2 - d*r */
    r = (uint32_t)(((uint64_t)r * two_minus) >> 30);
  }
  *z_out = z;
  return r;
}

sp_status_t sp_softmax_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t axis,
                          const int32_t exp_table[256], const sp_tensor_t* out_desc, int8_t* out) {
  int32_t outer_dims[SP_MAX_DIMS], inner, ist[2], i, j, len, ias, oas;
  const int32_t* st[2];
  sp_iter_t it;
  if (exp_table == 0 || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      !sp_same_dims(in_desc, out_desc) || axis < 0 || axis >= in_desc->rank)
    return SP_BAD_ARGUMENT;
  len = in_desc->dims[axis];
  if (len >= 65536) return SP_BAD_ARGUMENT;
  if (exp_table[0] <= 0 || exp_table[0] > 65536) return SP_BAD_ARGUMENT;
  for (i = 0; i < in_desc->rank; ++i) outer_dims[i] = in_desc->dims[i];
  outer_dims[axis] = 1;
  ias = in_desc->strides[axis];
  oas = out_desc->strides[axis];
  st[0] = in_desc->strides;
  st[1] = out_desc->strides;
  if (len == 0 || !sp_iter_init(&it, in_desc->rank, outer_dims, 2, st, &inner, ist)) return SP_OK;
  do {
    for (i = 0; i < inner; ++i) {
      const int8_t* row = in + it.off[0] + i * ist[0];
      int8_t* orow = out + it.off[1] + i * ist[1];
      int32_t mx = -128, z, shift;
      uint32_t sum = 0, r;
      uint64_t round;
      for (j = 0; j < len; ++j) {
        if (row[j * ias] > mx) mx = row[j * ias];
      }
      for (j = 0; j < len; ++j) {
        const int32_t e = exp_table[mx - row[j * ias]];
        sum += (uint32_t)(e < 0 ? 0 : (e > 65536 ? 65536 : e));
      }
      r = reciprocal_q30(sum, &z);
      shift = 54 - z;
      round = (uint64_t)1 << (shift - 1);
      for (j = 0; j < len; ++j) {
        const int32_t e0 = exp_table[mx - row[j * ias]];
        const uint32_t e = (uint32_t)(e0 < 0 ? 0 : (e0 > 65536 ? 65536 : e0));
        const uint32_t q = (uint32_t)(((uint64_t)e * r + round) >> shift);
        orow[j * oas] = (int8_t)((int32_t)(q > 255u ? 255u : q) - 128);
      }
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}
