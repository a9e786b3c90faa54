/* sramplan runtime: HOST-ONLY helpers. They use floating point (double, math.h) to turn real
 * scales into the integer parameters of the int8 kernels. They run in the planner / executor /
 * code generator on the host; never compile sramplan_rt_host.c into firmware (the generated C
 * carries the integer parameters these helpers computed). */
#ifndef SRAMPLAN_RT_HOST_H_
#define SRAMPLAN_RT_HOST_H_

#include "sramplan_rt_int8.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TFLite QuantizeMultiplier: real = q * 2^(shift - 31) with q in [2^30, 2^31) by frexp and
 * round-half-away-from-zero of the mantissa * 2^31 (a mantissa rounding to 2^31 becomes 2^30 with
 * shift + 1); 0 -> {0, 0}; shift < -31 -> {0, 0}; shift > 30 saturates to {INT32_MAX, 30}.
 * real must be >= 0. */
sp_requant_t sp_host_quantize_multiplier(double real);

/* Per-output-channel conv/FC multipliers: rq[k] = Q(in_scale * w_scales[k] / out_scale). */
void sp_host_conv_requant(double in_scale, const float* w_scales, int32_t n, double out_scale,
                          sp_requant_t* rq);

/* TFLite CalculateActivationRangeQuantized for int8: kind 0 = none [-128, 127], 1 = ReLU
 * [max(-128, zp), 127], 2 = ReLU6 [max(-128, zp), min(127, zp + round(6 / scale))], 3 = ReLU_N1_1
 * [max(-128, zp + round(-1/scale)), min(127, zp + round(1/scale))]. */
void sp_host_act_range_s8(int32_t kind, double out_scale, int32_t out_zp, int32_t* act_min,
                          int32_t* act_max);

/* sp_add_s8_params_t for TFLite int8 Add/Sub (left_shift 20). */
sp_add_s8_params_t sp_host_add_s8_params(double s1, int32_t zp1, double s2, int32_t zp2,
                                         double out_scale, int32_t out_zp, int32_t act_min,
                                         int32_t act_max);
/* sp_mul_s8_params_t for TFLite int8 Mul. */
sp_mul_s8_params_t sp_host_mul_s8_params(double s1, int32_t zp1, double s2, int32_t zp2,
                                         double out_scale, int32_t out_zp, int32_t act_min,
                                         int32_t act_max);

/* Functions the LUT builder knows. */
typedef enum {
  SP_LUT_SIGMOID = 0,
  SP_LUT_TANH,
  SP_LUT_HARD_SWISH,   /* x * relu6(x + 3) / 6 */
  SP_LUT_HARD_SIGMOID, /* max(0, min(1, alpha * x + beta)); alpha, beta from the call */
  SP_LUT_RELU,
  SP_LUT_RELU6,
  SP_LUT_GELU,         /* 0.5 x (1 + erf(x / sqrt 2)) */
  SP_LUT_ELU,          /* x >= 0 ? x : alpha (e^x - 1) */
  SP_LUT_LEAKY_RELU,   /* x >= 0 ? x : alpha x */
  SP_LUT_EXP,
  SP_LUT_IDENTITY      /* pure requantisation */
} sp_lut_kind_t;

/* table[i] for input q = i - 128: y = f((q - in_zp) * in_scale);
 * table[i] = clamp(round_half_away(y / out_scale) + out_zp, -128, 127). alpha/beta feed the
 * parametrised kinds (HARD_SIGMOID, ELU, LEAKY_RELU) and are ignored otherwise. */
void sp_host_build_lut_s8(sp_lut_kind_t kind, double alpha, double beta, double in_scale,
                          int32_t in_zp, double out_scale, int32_t out_zp, int8_t table[256]);
/* Same with any function. */
typedef double (*sp_host_fn_t)(double x, void* user);
void sp_host_build_lut_s8_fn(sp_host_fn_t fn, void* user, double in_scale, int32_t in_zp,
                             double out_scale, int32_t out_zp, int8_t table[256]);

/* Exp table for sp_softmax_s8: table[d] = round(65536 * exp(-beta * in_scale * d)), d = 0..255. */
void sp_host_build_softmax_exp_table(double in_scale, double beta, int32_t table[256]);

/* q = clamp(round_half_away(x / scale) + zp, -128, 127) and back. */
int8_t sp_host_quantize_s8(float x, double scale, int32_t zp);
float sp_host_dequantize_s8(int8_t q, double scale, int32_t zp);

#ifdef __cplusplus
}
#endif

#endif /* SRAMPLAN_RT_HOST_H_ */
