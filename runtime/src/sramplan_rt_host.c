/* sramplan runtime: HOST-ONLY helpers (floating point, math.h). Never compiled into firmware. */
#include "sramplan_rt_host.h"

#include <math.h>

static double round_half_away(double x) { return x >= 0.0 ? floor(x + 0.5) : -floor(-x + 0.5); }

sp_requant_t sp_host_quantize_multiplier(double real) {
  sp_requant_t rq;
  int shift = 0;
  double q;
  long long q_fixed;
  rq.multiplier = 0;
  rq.shift = 0;
  if (!(real > 0.0)) return rq;
  q = frexp(real, &shift); /* real = q * 2^shift, q in [0.5, 1) */
  q_fixed = (long long)round_half_away(q * 2147483648.0);
  if (q_fixed == 2147483648LL) {
    q_fixed /= 2;
    ++shift;
  }
  if (shift < -31) return rq;
  if (shift > 30) {
    rq.multiplier = INT32_MAX;
    rq.shift = 30;
    return rq;
  }
  rq.multiplier = (int32_t)q_fixed;
  rq.shift = shift;
  return rq;
}

void sp_host_conv_requant(double in_scale, const float* w_scales, int32_t n, double out_scale,
                          sp_requant_t* rq) {
  int32_t i;
  for (i = 0; i < n; ++i) rq[i] = sp_host_quantize_multiplier(in_scale * w_scales[i] / out_scale);
}

static int32_t quantize_i32(double x, double scale, int32_t zp) {
  const double q = round_half_away(x / scale) + zp;
  if (q < -2147483648.0) return INT32_MIN;
  if (q > 2147483647.0) return INT32_MAX;
  return (int32_t)q;
}

static int32_t clamp_s8(int32_t v) { return v < -128 ? -128 : (v > 127 ? 127 : v); }

void sp_host_act_range_s8(int32_t kind, double out_scale, int32_t out_zp, int32_t* act_min,
                          int32_t* act_max) {
  int32_t lo = -128, hi = 127;
  switch (kind) {
    case 1:
      lo = clamp_s8(out_zp);
      break;
    case 2:
      lo = clamp_s8(out_zp);
      hi = clamp_s8(quantize_i32(6.0, out_scale, out_zp));
      break;
    case 3:
      lo = clamp_s8(quantize_i32(-1.0, out_scale, out_zp));
      hi = clamp_s8(quantize_i32(1.0, out_scale, out_zp));
      break;
    default:
      break;
  }
  *act_min = lo;
  *act_max = hi;
}

sp_add_s8_params_t sp_host_add_s8_params(double s1, int32_t zp1, double s2, int32_t zp2,
                                         double out_scale, int32_t out_zp, int32_t act_min,
                                         int32_t act_max) {
  sp_add_s8_params_t p;
  const double twice_max = 2.0 * (s1 > s2 ? s1 : s2);
  p.in1_zp = zp1;
  p.in2_zp = zp2;
  p.out_zp = out_zp;
  p.left_shift = 20;
  p.in1_rq = sp_host_quantize_multiplier(s1 / twice_max);
  p.in2_rq = sp_host_quantize_multiplier(s2 / twice_max);
  p.out_rq = sp_host_quantize_multiplier(twice_max / ((double)(1 << 20) * out_scale));
  p.act_min = act_min;
  p.act_max = act_max;
  return p;
}

sp_mul_s8_params_t sp_host_mul_s8_params(double s1, int32_t zp1, double s2, int32_t zp2,
                                         double out_scale, int32_t out_zp, int32_t act_min,
                                         int32_t act_max) {
  sp_mul_s8_params_t p;
  p.in1_zp = zp1;
  p.in2_zp = zp2;
  p.out_zp = out_zp;
  p.rq = sp_host_quantize_multiplier(s1 * s2 / out_scale);
  p.act_min = act_min;
  p.act_max = act_max;
  return p;
}

typedef struct {
  sp_lut_kind_t kind;
  double alpha, beta;
} lut_fn_t;

static double lut_eval(double x, void* user) {
  const lut_fn_t* f = (const lut_fn_t*)user;
  switch (f->kind) {
    case SP_LUT_SIGMOID:
      return 1.0 / (1.0 + exp(-x));
    case SP_LUT_TANH:
      return tanh(x);
    case SP_LUT_HARD_SWISH: {
      const double r6 = x + 3.0 < 0.0 ? 0.0 : (x + 3.0 > 6.0 ? 6.0 : x + 3.0);
      return x * r6 / 6.0;
    }
    case SP_LUT_HARD_SIGMOID: {
      const double y = f->alpha * x + f->beta;
      return y < 0.0 ? 0.0 : (y > 1.0 ? 1.0 : y);
    }
    case SP_LUT_RELU:
      return x > 0.0 ? x : 0.0;
    case SP_LUT_RELU6:
      return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x);
    case SP_LUT_GELU:
      return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case SP_LUT_ELU:
      return x >= 0.0 ? x : f->alpha * (exp(x) - 1.0);
    case SP_LUT_LEAKY_RELU:
      return x >= 0.0 ? x : f->alpha * x;
    case SP_LUT_EXP:
      return exp(x);
    case SP_LUT_IDENTITY:
    default:
      return x;
  }
}

void sp_host_build_lut_s8_fn(sp_host_fn_t fn, void* user, double in_scale, int32_t in_zp,
                             double out_scale, int32_t out_zp, int8_t table[256]) {
  int32_t i;
  for (i = 0; i < 256; ++i) {
    const double x = (double)((i - 128) - in_zp) * in_scale;
    table[i] = (int8_t)clamp_s8(quantize_i32(fn(x, user), out_scale, out_zp));
  }
}

void sp_host_build_lut_s8(sp_lut_kind_t kind, double alpha, double beta, double in_scale,
                          int32_t in_zp, double out_scale, int32_t out_zp, int8_t table[256]) {
  lut_fn_t f;
  f.kind = kind;
  f.alpha = alpha;
  f.beta = beta;
  sp_host_build_lut_s8_fn(lut_eval, &f, in_scale, in_zp, out_scale, out_zp, table);
}

void sp_host_build_softmax_exp_table(double in_scale, double beta, int32_t table[256]) {
  int32_t d;
  for (d = 0; d < 256; ++d) {
    table[d] = (int32_t)round_half_away(65536.0 * exp(-beta * in_scale * (double)d));
  }
}

int8_t sp_host_quantize_s8(float x, double scale, int32_t zp) {
  return (int8_t)clamp_s8(quantize_i32((double)x, scale, zp));
}

float sp_host_dequantize_s8(int8_t q, double scale, int32_t zp) {
  return (float)(scale * (double)((int32_t)q - zp));
}
