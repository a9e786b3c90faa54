/* sramplan runtime: float32 reference kernels, elementwise part (host; uses math.h). */
#include <math.h>
#include <string.h>

#include "sp_internal.h"
#include "sramplan_rt_f32.h"

/* ---- Unary --------------------------------------------------------------------------------- */

static float unary_apply(sp_unary_op_t op, float x, float alpha, float beta) {
  switch (op) {
    case SP_UNARY_IDENTITY:
      return x;
    case SP_UNARY_RELU:
      return x > 0.0f ? x : 0.0f;
    case SP_UNARY_CLIP:
      return x < alpha ? alpha : (x > beta ? beta : x);
    case SP_UNARY_SIGMOID:
      return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    case SP_UNARY_HARD_SIGMOID: {
      const float y = alpha * x + beta;
      return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
    }
    case SP_UNARY_HARD_SWISH: {
      const float y = x * (1.0f / 6.0f) + 0.5f;
      return x * (y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y));
    }
    case SP_UNARY_TANH:
      return tanhf(x);
    case SP_UNARY_ERF:
      return erff(x);
    case SP_UNARY_SQRT:
      return sqrtf(x);
    case SP_UNARY_EXP:
      return expf(x);
    case SP_UNARY_LOG:
      return logf(x);
    case SP_UNARY_NEG:
      return -x;
    case SP_UNARY_ABS:
      return fabsf(x);
    case SP_UNARY_CEIL:
      return ceilf(x);
    case SP_UNARY_FLOOR:
      return floorf(x);
    case SP_UNARY_RECIPROCAL:
      return 1.0f / x;
    case SP_UNARY_SIGN:
      return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    case SP_UNARY_SOFTPLUS:
      return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case SP_UNARY_ELU:
      return x >= 0.0f ? x : alpha * expm1f(x);
    case SP_UNARY_LEAKY_RELU:
      return x >= 0.0f ? x : alpha * x;
    case SP_UNARY_SELU:
      return beta * (x > 0.0f ? x : alpha * expm1f(x));
    case SP_UNARY_GELU:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  }
  return x;
}

sp_status_t sp_unary_f32(const sp_tensor_t* in_desc, const float* in, sp_unary_op_t op,
                         float alpha, float beta, const sp_tensor_t* out_desc, float* out) {
  int32_t inner, ist[2], i;
  const int32_t* st[2];
  sp_iter_t it;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || !sp_same_dims(in_desc, out_desc) ||
      (int32_t)op < 0 || (int32_t)op > (int32_t)SP_UNARY_GELU)
    return SP_BAD_ARGUMENT;
  st[0] = in_desc->strides;
  st[1] = out_desc->strides;
  if (!sp_iter_init(&it, out_desc->rank, out_desc->dims, 2, st, &inner, ist)) return SP_OK;
  do {
    const float* pi = in + it.off[0];
    float* po = out + it.off[1];
    for (i = 0; i < inner; ++i) po[i * ist[1]] = unary_apply(op, pi[i * ist[0]], alpha, beta);
  } while (sp_iter_next(&it));
  return SP_OK;
}

#define SP_UNARY_WRAPPER(name, op)                                                           \
  sp_status_t name(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc, \
                   float* out) {                                                             \
    return sp_unary_f32(in_desc, in, op, 0.0f, 0.0f, out_desc, out);                         \
  }
SP_UNARY_WRAPPER(sp_relu_f32, SP_UNARY_RELU)
SP_UNARY_WRAPPER(sp_sigmoid_f32, SP_UNARY_SIGMOID)
SP_UNARY_WRAPPER(sp_hard_swish_f32, SP_UNARY_HARD_SWISH)
SP_UNARY_WRAPPER(sp_tanh_f32, SP_UNARY_TANH)
SP_UNARY_WRAPPER(sp_erf_f32, SP_UNARY_ERF)
SP_UNARY_WRAPPER(sp_sqrt_f32, SP_UNARY_SQRT)
SP_UNARY_WRAPPER(sp_exp_f32, SP_UNARY_EXP)
SP_UNARY_WRAPPER(sp_neg_f32, SP_UNARY_NEG)

sp_status_t sp_clip_f32(const sp_tensor_t* in_desc, const float* in, float min_value,
                        float max_value, const sp_tensor_t* out_desc, float* out) {
  return sp_unary_f32(in_desc, in, SP_UNARY_CLIP, min_value, max_value, out_desc, out);
}

sp_status_t sp_hard_sigmoid_f32(const sp_tensor_t* in_desc, const float* in, float alpha,
                                float beta, const sp_tensor_t* out_desc, float* out) {
  return sp_unary_f32(in_desc, in, SP_UNARY_HARD_SIGMOID, alpha, beta, out_desc, out);
}

/* ---- Binary -------------------------------------------------------------------------------- */

static float binary_apply(sp_binary_op_t op, float a, float b) {
  switch (op) {
    case SP_BINARY_ADD:
      return a + b;
    case SP_BINARY_SUB:
      return a - b;
    case SP_BINARY_MUL:
      return a * b;
    case SP_BINARY_DIV:
      return a / b;
    case SP_BINARY_POW:
      if (b == 2.0f) return a * a;
      return powf(a, b);
    case SP_BINARY_MAX:
      return (a != a || a > b) ? a : b;
    case SP_BINARY_MIN:
      return (a != a || a < b) ? a : b;
    case SP_BINARY_MOD:
      return fmodf(a, b);
    case SP_BINARY_PRELU:
      return a >= 0.0f ? a : a * b;
  }
  return a;
}

typedef struct {
  int32_t as[SP_MAX_DIMS], bs[SP_MAX_DIMS], inner, ist[3];
  sp_iter_t it;
} binary_loop_t;

/* Returns SP_OK and *empty when there is nothing to do. */
static sp_status_t binary_setup(const sp_tensor_t* a_desc, const sp_tensor_t* b_desc,
                                const sp_tensor_t* out_desc, binary_loop_t* l, int* empty) {
  const int32_t* st[3];
  if (!sp_tensor_valid(a_desc) || !sp_tensor_valid(b_desc) || !sp_tensor_valid(out_desc))
    return SP_BAD_ARGUMENT;
  if (!sp_broadcast_strides(a_desc, out_desc->rank, out_desc->dims, l->as) ||
      !sp_broadcast_strides(b_desc, out_desc->rank, out_desc->dims, l->bs))
    return SP_BAD_ARGUMENT;
  st[0] = l->as;
  st[1] = l->bs;
  st[2] = out_desc->strides;
  *empty = !sp_iter_init(&l->it, out_desc->rank, out_desc->dims, 3, st, &l->inner, l->ist);
  return SP_OK;
}

sp_status_t sp_binary_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                          const float* b, sp_binary_op_t op, const sp_tensor_t* out_desc,
                          float* out) {
  binary_loop_t l;
  int empty;
  int32_t i;
  sp_status_t st;
  if ((int32_t)op < 0 || (int32_t)op > (int32_t)SP_BINARY_PRELU) return SP_BAD_ARGUMENT;
  st = binary_setup(a_desc, b_desc, out_desc, &l, &empty);
  if (st != SP_OK || empty) return st;
  do {
    const float* pa = a + l.it.off[0];
    const float* pb = b + l.it.off[1];
    float* po = out + l.it.off[2];
    switch (op) { /* the common ops get their own loops so the compiler can vectorise them */
      case SP_BINARY_ADD:
        for (i = 0; i < l.inner; ++i) po[i * l.ist[2]] = pa[i * l.ist[0]] + pb[i * l.ist[1]];
        break;
      case SP_BINARY_MUL:
        for (i = 0; i < l.inner; ++i) po[i * l.ist[2]] = pa[i * l.ist[0]] * pb[i * l.ist[1]];
        break;
      default:
        for (i = 0; i < l.inner; ++i)
          po[i * l.ist[2]] = binary_apply(op, pa[i * l.ist[0]], pb[i * l.ist[1]]);
        break;
    }
  } while (sp_iter_next(&l.it));
  return SP_OK;
}

#define SP_BINARY_WRAPPER(name, op)                                                             \
  sp_status_t name(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,        \
                   const float* b, const sp_tensor_t* out_desc, float* out) {                   \
    return sp_binary_f32(a_desc, a, b_desc, b, op, out_desc, out);                             \
  }
SP_BINARY_WRAPPER(sp_add_f32, SP_BINARY_ADD)
SP_BINARY_WRAPPER(sp_sub_f32, SP_BINARY_SUB)
SP_BINARY_WRAPPER(sp_mul_f32, SP_BINARY_MUL)
SP_BINARY_WRAPPER(sp_div_f32, SP_BINARY_DIV)
SP_BINARY_WRAPPER(sp_pow_f32, SP_BINARY_POW)
SP_BINARY_WRAPPER(sp_max_f32, SP_BINARY_MAX)
SP_BINARY_WRAPPER(sp_min_f32, SP_BINARY_MIN)

sp_status_t sp_compare_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                           const float* b, sp_compare_op_t op, const sp_tensor_t* out_desc,
                           uint8_t* out) {
  binary_loop_t l;
  int empty;
  int32_t i;
  sp_status_t st;
  if ((int32_t)op < 0 || (int32_t)op > (int32_t)SP_COMPARE_LESS_OR_EQUAL) return SP_BAD_ARGUMENT;
  st = binary_setup(a_desc, b_desc, out_desc, &l, &empty);
  if (st != SP_OK || empty) return st;
  do {
    for (i = 0; i < l.inner; ++i) {
      const float x = a[l.it.off[0] + i * l.ist[0]], y = b[l.it.off[1] + i * l.ist[1]];
      int r = 0;
      switch (op) {
        case SP_COMPARE_EQUAL:
          r = x == y;
          break;
        case SP_COMPARE_GREATER:
          r = x > y;
          break;
        case SP_COMPARE_GREATER_OR_EQUAL:
          r = x >= y;
          break;
        case SP_COMPARE_LESS:
          r = x < y;
          break;
        case SP_COMPARE_LESS_OR_EQUAL:
          r = x <= y;
          break;
      }
      out[l.it.off[2] + i * l.ist[2]] = (uint8_t)r;
    }
  } while (sp_iter_next(&l.it));
  return SP_OK;
}

sp_status_t sp_binary_s64(const sp_tensor_t* a_desc, const int64_t* a, const sp_tensor_t* b_desc,
                          const int64_t* b, sp_binary_op_t op, const sp_tensor_t* out_desc,
                          int64_t* out) {
  binary_loop_t l;
  int empty;
  int32_t i;
  sp_status_t st;
  if (op != SP_BINARY_ADD && op != SP_BINARY_SUB && op != SP_BINARY_MUL && op != SP_BINARY_DIV &&
      op != SP_BINARY_MAX && op != SP_BINARY_MIN && op != SP_BINARY_MOD)
    return SP_BAD_ARGUMENT;
  st = binary_setup(a_desc, b_desc, out_desc, &l, &empty);
  if (st != SP_OK || empty) return st;
  do {
    for (i = 0; i < l.inner; ++i) {
      const int64_t x = a[l.it.off[0] + i * l.ist[0]], y = b[l.it.off[1] + i * l.ist[1]];
      int64_t r = 0;
      switch (op) {
        case SP_BINARY_ADD:
          r = (int64_t)((uint64_t)x + (uint64_t)y);
          break;
        case SP_BINARY_SUB:
          r = (int64_t)((uint64_t)x - (uint64_t)y);
          break;
        case SP_BINARY_MUL:
          r = (int64_t)((uint64_t)x * (uint64_t)y);
          break;
        case SP_BINARY_DIV:
          r = (y == 0 || (y == -1 && x == INT64_MIN)) ? 0 : x / y;
          break;
        case SP_BINARY_MOD:
          r = (y == 0 || y == -1) ? 0 : x % y;
          break;
        case SP_BINARY_MAX:
          r = x > y ? x : y;
          break;
        case SP_BINARY_MIN:
          r = x < y ? x : y;
          break;
        default:
          break;
      }
      out[l.it.off[2] + i * l.ist[2]] = r;
    }
  } while (sp_iter_next(&l.it));
  return SP_OK;
}

/* ---- Cast ---------------------------------------------------------------------------------- */

static int dtype_size(sp_dtype_t t) {
  switch (t) {
    case SP_DTYPE_F32:
    case SP_DTYPE_S32:
      return 4;
    case SP_DTYPE_S8:
    case SP_DTYPE_U8:
    case SP_DTYPE_BOOL:
      return 1;
    case SP_DTYPE_S16:
      return 2;
    case SP_DTYPE_S64:
      return 8;
  }
  return 0;
}

static int64_t f32_to_i64(float f) {
  if (!(f == f)) return 0;
  if (f >= 9.2233720368547758e18f) return INT64_MAX;
  if (f <= -9.2233720368547758e18f) return INT64_MIN;
  return (int64_t)f;
}

sp_status_t sp_cast(const sp_tensor_t* in_desc, const void* in, sp_dtype_t in_type,
                    const sp_tensor_t* out_desc, void* out, sp_dtype_t out_type) {
  int32_t inner, ist[2], i;
  const int32_t* st[2];
  const int ies = dtype_size(in_type), oes = dtype_size(out_type);
  sp_iter_t it;
  if (ies == 0 || oes == 0 || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      !sp_same_dims(in_desc, out_desc))
    return SP_BAD_ARGUMENT;
  st[0] = in_desc->strides;
  st[1] = out_desc->strides;
  if (!sp_iter_init(&it, out_desc->rank, out_desc->dims, 2, st, &inner, ist)) return SP_OK;
  do {
    for (i = 0; i < inner; ++i) {
      const char* s = (const char*)in + (it.off[0] + i * ist[0]) * ies;
      char* d = (char*)out + (it.off[1] + i * ist[1]) * oes;
      float fv = 0.0f;
      int64_t iv = 0;
      int is_float = 0;
      switch (in_type) {
        case SP_DTYPE_F32:
          memcpy(&fv, s, 4);
          is_float = 1;
          break;
        case SP_DTYPE_S8:
          iv = *(const int8_t*)s;
          break;
        case SP_DTYPE_U8:
          iv = *(const uint8_t*)s;
          break;
        case SP_DTYPE_BOOL:
          iv = *(const uint8_t*)s != 0;
          break;
        case SP_DTYPE_S16: {
          int16_t v;
          memcpy(&v, s, 2);
          iv = v;
          break;
        }
        case SP_DTYPE_S32: {
          int32_t v;
          memcpy(&v, s, 4);
          iv = v;
          break;
        }
        case SP_DTYPE_S64:
          memcpy(&iv, s, 8);
          break;
      }
      if (out_type == SP_DTYPE_F32) {
        const float v = is_float ? fv : (float)iv;
        memcpy(d, &v, 4);
        continue;
      }
      if (out_type == SP_DTYPE_BOOL) {
        *(uint8_t*)d = (uint8_t)(is_float ? fv != 0.0f : iv != 0);
        continue;
      }
      if (is_float) iv = f32_to_i64(fv);
      switch (out_type) {
        case SP_DTYPE_S8:
          *(int8_t*)d = (int8_t)(uint8_t)(uint64_t)iv;
          break;
        case SP_DTYPE_U8:
          *(uint8_t*)d = (uint8_t)(uint64_t)iv;
          break;
        case SP_DTYPE_S16: {
          const int16_t v = (int16_t)(uint16_t)(uint64_t)iv;
          memcpy(d, &v, 2);
          break;
        }
        case SP_DTYPE_S32: {
          const int32_t v = (int32_t)(uint32_t)(uint64_t)iv;
          memcpy(d, &v, 4);
          break;
        }
        case SP_DTYPE_S64:
          memcpy(d, &iv, 8);
          break;
        default:
          break;
      }
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

/* ---- Softmax ------------------------------------------------------------------------------- */

static sp_status_t softmax_impl(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                                const sp_tensor_t* out_desc, float* out, int log_mode) {
  int32_t outer_dims[SP_MAX_DIMS], inner, ist[2], i, j, len, ias, oas;
  const int32_t* st[2];
  sp_iter_t it;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      !sp_same_dims(in_desc, out_desc) || axis < 0 || axis >= in_desc->rank)
    return SP_BAD_ARGUMENT;
  len = in_desc->dims[axis];
  for (i = 0; i < in_desc->rank; ++i) outer_dims[i] = in_desc->dims[i];
  outer_dims[axis] = 1;
  ias = in_desc->strides[axis];
  oas = out_desc->strides[axis];
  st[0] = in_desc->strides;
  st[1] = out_desc->strides;
  if (len == 0 || !sp_iter_init(&it, in_desc->rank, outer_dims, 2, st, &inner, ist)) return SP_OK;
  do {
    for (i = 0; i < inner; ++i) {
      const float* row = in + it.off[0] + i * ist[0];
      float* orow = out + it.off[1] + i * ist[1];
      float mx = row[0];
      double sum = 0.0;
      for (j = 1; j < len; ++j) {
        if (row[j * ias] > mx) mx = row[j * ias];
      }
      if (log_mode) {
        float lse;
        for (j = 0; j < len; ++j) sum += (double)expf(row[j * ias] - mx);
        lse = (float)log(sum);
        for (j = 0; j < len; ++j) orow[j * oas] = row[j * ias] - mx - lse;
      } else {
        float inv;
        for (j = 0; j < len; ++j) {
          const float e = expf(row[j * ias] - mx);
          orow[j * oas] = e;
          sum += (double)e;
        }
        inv = (float)(1.0 / sum);
        for (j = 0; j < len; ++j) orow[j * oas] *= inv;
      }
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_softmax_f32(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                           const sp_tensor_t* out_desc, float* out) {
  return softmax_impl(in_desc, in, axis, out_desc, out, 0);
}

sp_status_t sp_log_softmax_f32(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                               const sp_tensor_t* out_desc, float* out) {
  return softmax_impl(in_desc, in, axis, out_desc, out, 1);
}
