/* sramplan runtime: int8 kernels with TensorFlow Lite (Micro) quantisation semantics.
 *
 * Quantisation: real = scale * (q - zero_point).
 *   - activations: asymmetric, per tensor (scale, zero point in [-128, 127]);
 *   - weights: symmetric (zero point 0), per output channel;
 *   - bias: int32 with scale input_scale * weight_scale[c] and zero point 0;
 *   - requantisation: acc -> MultiplyByQuantizedMultiplier(acc, multiplier, shift) + out_zp, then
 *     clamped to [act_min, act_max] (the fused activation range, itself inside [-128, 127]).
 * Integer-only: this header and its sources use no floating point, no heap, no 64-bit division;
 * they compile for Cortex-M (C99). Parameters that need floating point to compute (multipliers,
 * lookup tables) are built on the host with sramplan_rt_host.h.
 *
 * Feature maps are 4-D with logical dims (N, C, H, W); their strides give the real layout, so NCHW
 * and NHWC (and anything else) use the same kernels. Conv weights are logical (K, C/groups, R, S)
 * with strides (ONNX [K,C,R,S] and TFLite [K,R,S,C] both work; a TFLite depthwise filter
 * [1,R,S,K] is logical (K, 1, R, S) with strides (1, 0, S*K, K)). */
#ifndef SRAMPLAN_RT_INT8_H_
#define SRAMPLAN_RT_INT8_H_

#include "sramplan_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Requantisation primitives (gemmlowp / TFLite reference semantics, bit-exact) ------------ */

/* (a * b * 2) / 2^32 rounded to nearest: the 64-bit product ab plus a nudge (2^30 if ab >= 0, else
 * 1 - 2^30) divided by 2^31 with truncation toward zero. So a tie rounds up: +0.5 -> 1 and
 * -0.5 -> 0, -1.5 -> -1 (away from zero for positive products, toward zero for negative ones,
 * exactly as TFLite). Saturates the only overflow, INT32_MIN * INT32_MIN, to INT32_MAX. */
int32_t sp_saturating_rounding_doubling_high_mul(int32_t a, int32_t b);
/* x / 2^exponent, exponent in [0, 31], rounded to nearest with ties away from zero
 * (-1.5 -> -2, 1.5 -> 2, -2.5 -> -3). */
int32_t sp_rounding_divide_by_pot(int32_t x, int32_t exponent);
/* TFLite MultiplyByQuantizedMultiplier (double rounding):
 * RoundingDivideByPOT(SRDHM(x * 2^max(shift,0), multiplier), max(-shift, 0)). The left shift wraps
 * on int32 overflow like the reference (callers keep |x| * 2^shift below 2^31). */
int32_t sp_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift);

/* ---- Convolution ---------------------------------------------------------------------------- */

/* 2-D convolution, TFLite ConvPerChannel / DepthwiseConvPerChannel semantics:
 *   acc = bias[k] + sum_{c,r,s} (in[n, g*C/G + c, oh*sh + r*dh - pt, ow*sw + s*dw - pl] - in_zp)
 *                               * w[k, c, r, s]
 * where taps outside the input are padding (they contribute 0, i.e. the input zero point), then
 *   out = clamp(MBQM(acc, rq[k].multiplier, rq[k].shift) + out_zp, act_min, act_max).
 * in: (N, C, H, W); w: (K, C/groups, R, S); out: (N, K, OH, OW) with
 *   OH = (H + pt + pb - dh*(R-1) - 1) / sh + 1 (floor), OW likewise (checked).
 * stride = {sh, sw}, pad = {top, left, bottom, right}, dilation = {dh, dw}; K % groups == 0.
 * bias may be NULL (zero). rq has K entries (per-tensor weights: K copies).
 * Chooses the pointwise (1x1, stride 1, no padding, groups 1) or depthwise (groups == C) fast path
 * automatically; all paths compute the same integer sums, so results are identical. */
sp_status_t sp_conv_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                       const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                       const sp_requant_t* rq, int32_t out_zp, int32_t act_min, int32_t act_max,
                       const int32_t stride[2], const int32_t pad[4], const int32_t dilation[2],
                       int32_t groups, const sp_tensor_t* out_desc, int8_t* out);
/* The generic path, always available (same arguments and results as sp_conv_s8). */
sp_status_t sp_conv_s8_generic(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                               const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                               const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                               int32_t act_max, const int32_t stride[2], const int32_t pad[4],
                               const int32_t dilation[2], int32_t groups,
                               const sp_tensor_t* out_desc, int8_t* out);
/* Depthwise: groups == C, K = C * depth_multiplier (output channel k reads input channel
 * k / depth_multiplier, as TFLite). SP_BAD_ARGUMENT if groups != C. */
sp_status_t sp_conv_s8_depthwise(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                                 const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                                 const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                 int32_t act_max, const int32_t stride[2], const int32_t pad[4],
                                 const int32_t dilation[2], int32_t groups,
                                 const sp_tensor_t* out_desc, int8_t* out);
/* Pointwise: R == S == 1, groups == 1, zero padding (any stride). SP_BAD_ARGUMENT otherwise. */
sp_status_t sp_conv_s8_pointwise(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                                 const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                                 const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                 int32_t act_max, const int32_t stride[2], const int32_t pad[4],
                                 const int32_t dilation[2], int32_t groups,
                                 const sp_tensor_t* out_desc, int8_t* out);

/* Fully connected, TFLite FullyConnected (per-channel): in (M, K), w (N, K) (strides: a [K, N]
 * matrix works too), out (M, N):
 *   out[m, n] = clamp(MBQM(bias[n] + sum_k (in[m,k] - in_zp) * w[n,k], rq[n]) + out_zp, min, max).
 * bias may be NULL; rq has N entries. */
sp_status_t sp_fully_connected_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                                  const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                                  const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                  int32_t act_max, const sp_tensor_t* out_desc, int8_t* out);

/* ---- Pooling (input and output share scale and zero point, as TFLite requires) ---------------- */

/* Max pool 2-D: max over the window taps inside the input (padding never wins), then clamped to
 * [act_min, act_max]. kernel = {kh, kw}, stride = {sh, sw}, pad = {top, left, bottom, right}.
 * Output dims are the caller's (floor or ONNX ceil_mode); each window must hold >= 1 input tap. */
sp_status_t sp_max_pool_s8(const sp_tensor_t* in_desc, const int8_t* in, const int32_t kernel[2],
                           const int32_t stride[2], const int32_t pad[4], int32_t act_min,
                           int32_t act_max, const sp_tensor_t* out_desc, int8_t* out);
/* Average pool 2-D, TFLite rounding: sum of the taps inside the input, divided by count with
 * round-half-away-from-zero: sum > 0 ? (sum + count/2) / count : (sum - count/2) / count (C
 * division truncates). count = number of taps inside the input (TFLite, ONNX
 * count_include_pad=0) or, with count_include_pad != 0, the number of taps inside the padded input
 * [-pad_begin, dim + pad_end) (ONNX count_include_pad=1; a ceil_mode window hanging past the end
 * padding counts only its part inside). Then clamped to [act_min, act_max]. */
sp_status_t sp_avg_pool_s8(const sp_tensor_t* in_desc, const int8_t* in, const int32_t kernel[2],
                           const int32_t stride[2], const int32_t pad[4],
                           int32_t count_include_pad, int32_t act_min, int32_t act_max,
                           const sp_tensor_t* out_desc, int8_t* out);
/* Global average pool (N, C, H, W) -> (N, C, 1, 1) with the same rounding as sp_avg_pool_s8
 * (count = H*W); same scale and zero point in and out. */
sp_status_t sp_global_avg_pool_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t act_min,
                                  int32_t act_max, const sp_tensor_t* out_desc, int8_t* out);
/* Global average pool with requantisation (TFLite Mean over H, W when scales differ):
 *   out = clamp(MBQM(sum_{h,w} (in - in_zp), rq) + out_zp, act_min, act_max)
 * where rq encodes in_scale / (out_scale * H * W) (see sp_host_quantize_multiplier). */
sp_status_t sp_global_avg_pool_requant_s8(const sp_tensor_t* in_desc, const int8_t* in,
                                          int32_t in_zp, sp_requant_t rq, int32_t out_zp,
                                          int32_t act_min, int32_t act_max,
                                          const sp_tensor_t* out_desc, int8_t* out);
/* The same two kernels streamed over strips of rows (tile-by-tile execution): sp_global_pool_sum_s8
 * adds each (n, c) plane of `in` (N, C, h, w) to sums[n * C + c] (int32, zeroed by the caller before
 * the first strip); sp_global_avg_pool_finish_s8 then writes the outputs from the sums of `count`
 * pixels exactly as sp_global_avg_pool_s8 (rq NULL) or sp_global_avg_pool_requant_s8 (rq, in_zp,
 * out_zp) would from the whole input. */
sp_status_t sp_global_pool_sum_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t* sums);
sp_status_t sp_global_avg_pool_finish_s8(const int32_t* sums, int32_t count, const sp_requant_t* rq,
                                         int32_t in_zp, int32_t out_zp, int32_t act_min, int32_t act_max,
                                         const sp_tensor_t* out_desc, int8_t* out);

/* ---- Elementwise (any rank <= 6, broadcasting as in sramplan_rt.h) --------------------------- */

/* TFLite int8 Add/Sub parameters. With s1, s2, so the scales, twice_max = 2 * max(s1, s2):
 *   in1_rq = Q(s1 / twice_max), in2_rq = Q(s2 / twice_max), out_rq = Q(twice_max / (2^left_shift
 *   * so)), left_shift = 20 (sp_host_add_s8_params builds this). Per element:
 *   a = MBQM((x1 - in1_zp) << left_shift, in1_rq); b = MBQM((x2 - in2_zp) << left_shift, in2_rq);
 *   out = clamp(MBQM(a + b, out_rq) + out_zp, act_min, act_max)   (a - b for sp_sub_s8). */
typedef struct {
  int32_t in1_zp;
  int32_t in2_zp;
  int32_t out_zp;
  int32_t left_shift;
  sp_requant_t in1_rq;
  sp_requant_t in2_rq;
  sp_requant_t out_rq;
  int32_t act_min;
  int32_t act_max;
} sp_add_s8_params_t;

sp_status_t sp_add_s8(const sp_tensor_t* a_desc, const int8_t* a, const sp_tensor_t* b_desc,
                      const int8_t* b, const sp_add_s8_params_t* p, const sp_tensor_t* out_desc,
                      int8_t* out);
sp_status_t sp_sub_s8(const sp_tensor_t* a_desc, const int8_t* a, const sp_tensor_t* b_desc,
                      const int8_t* b, const sp_add_s8_params_t* p, const sp_tensor_t* out_desc,
                      int8_t* out);

/* TFLite int8 Mul: rq = Q(s1 * s2 / so);
 *   out = clamp(MBQM((x1 - in1_zp) * (x2 - in2_zp), rq) + out_zp, act_min, act_max). */
typedef struct {
  int32_t in1_zp;
  int32_t in2_zp;
  int32_t out_zp;
  sp_requant_t rq;
  int32_t act_min;
  int32_t act_max;
} sp_mul_s8_params_t;

sp_status_t sp_mul_s8(const sp_tensor_t* a_desc, const int8_t* a, const sp_tensor_t* b_desc,
                      const int8_t* b, const sp_mul_s8_params_t* p, const sp_tensor_t* out_desc,
                      int8_t* out);

/* Lookup table: out = table[in + 128] (table index 0 is input -128). Used for sigmoid, tanh,
 * hard-swish, hard-sigmoid, ... (build the table with sp_host_build_lut_s8). */
sp_status_t sp_lut_s8(const sp_tensor_t* in_desc, const int8_t* in, const int8_t table[256],
                      const sp_tensor_t* out_desc, int8_t* out);
/* Requantise (change of scale/zero point, TFLite Quantize int8->int8):
 *   out = clamp(MBQM(in - in_zp, rq) + out_zp, -128, 127). */
sp_status_t sp_requantize_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                             sp_requant_t rq, int32_t out_zp, const sp_tensor_t* out_desc,
                             int8_t* out);
/* Clamp (standalone ReLU / ReLU6 / Clip when in and out share quantisation):
 * out = clamp(in, act_min, act_max). */
sp_status_t sp_clamp_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t act_min,
                        int32_t act_max, const sp_tensor_t* out_desc, int8_t* out);

/* Softmax along `axis`, integer-only (deterministic; not bit-equal to TFLite Micro's, which uses
 * gemmlowp fixed-point exp). Output quantisation is TFLite's: scale 1/256, zero point -128.
 * exp_table[d] = round(2^16 * exp(-beta * in_scale * d)) for d = 0..255, so exp_table[0] = 65536
 * (sp_host_build_softmax_exp_table). For each row along axis:
 *   1. mx = max_i x_i; e_i = exp_table[mx - x_i]; S = sum_i e_i (uint32; row length < 65536).
 *   2. Reciprocal of S: z = clz(S) (S << z in [2^31, 2^32)); d = (S << z) read as Q32 in [0.5, 1);
 *      r = 1/d in Q30 by Newton-Raphson: r0 = 48/17 - 32/17 d, then 4 steps r <- r * (2 - d*r),
 *      each product truncated (uint64 multiply, shift right). So 1/S ~= r * 2^(z - 62).
 *   3. q_i = (e_i * r + 2^(53 - z)) >> (54 - z)   (= round(256 * e_i / S));
 *      out_i = min(q_i - 128, 127).
 * The probabilities sum to ~1 (within the per-element rounding of 1/256 each). */
sp_status_t sp_softmax_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t axis,
                          const int32_t exp_table[256], const sp_tensor_t* out_desc, int8_t* out);

#ifdef __cplusplus
}
#endif

#endif /* SRAMPLAN_RT_INT8_H_ */
