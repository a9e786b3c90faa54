/* sramplan runtime: float32 reference kernels (host; uses math.h) for every op the importer
 * supports, so that every bundled model can be executed, not only the int8 CNNs. ONNX semantics.
 *
 * Signatures are uniform: (const sp_tensor_t* in_desc, const float* in, ..., parameters ...,
 * const sp_tensor_t* out_desc, float* out). Shape-only questions (ceil_mode, keepdims, auto_pad,
 * negative axes, Reshape/Flatten/Squeeze/Unsqueeze views) are resolved by the caller through the
 * descriptors it passes. Data movement (Concat, Split/Slice, Gather, Transpose, Pad, Expand, Tile,
 * Where, nearest Resize, Identity) is type-generic and lives in sramplan_rt.h.
 *
 * Accumulation order is fixed (ascending input channel, then kernel taps in row-major order; for
 * matrix products ascending k), so results are deterministic for a given build. */
#ifndef SRAMPLAN_RT_F32_H_
#define SRAMPLAN_RT_F32_H_

#include "sramplan_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Convolution and matrix products ------------------------------------------------------- */

/* N-D convolution (ONNX Conv), 1, 2 or 3 spatial dims: in (N, C, D1..Dk), w (K, C/groups,
 * k1..kk), bias (K) or NULL, out (N, K, O1..Ok) with Oi = (Di + pb_i + pe_i - di*(ki-1) - 1)/si + 1
 * (checked). stride/dilation have k entries (NULL = all 1), pad has 2k entries in ONNX order
 * (begins then ends; NULL = all 0). */
sp_status_t sp_conv_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* w_desc,
                        const float* w, const float* bias, const int32_t* stride,
                        const int32_t* pad, const int32_t* dilation, int32_t groups,
                        const sp_tensor_t* out_desc, float* out);
/* ONNX Gemm: out = alpha * op(A) op(B) + beta * C, op = transpose if trans_x != 0. A, B rank 2;
 * out (M, N); C may be NULL, else unidirectionally broadcast to (M, N) (rank 0..2). */
sp_status_t sp_gemm_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                        const float* b, const sp_tensor_t* c_desc, const float* c, float alpha,
                        float beta, int32_t trans_a, int32_t trans_b, const sp_tensor_t* out_desc,
                        float* out);
/* ONNX MatMul (numpy matmul): A (..., M, K), B (..., K, N), batch dims broadcast, out (..., M, N).
 * Rank-1 A is (K) -> treated as (1, K) and the M axis is absent from out; rank-1 B is (K) ->
 * (K, 1) and the N axis is absent from out. */
sp_status_t sp_matmul_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                          const float* b, const sp_tensor_t* out_desc, float* out);

/* ---- Normalisation ------------------------------------------------------------------------- */

/* BatchNormalization (inference): out = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c],
 * channel axis 1 (rank >= 2). */
sp_status_t sp_batch_norm_f32(const sp_tensor_t* in_desc, const float* in, const float* scale,
                              const float* bias, const float* mean, const float* var,
                              float epsilon, const sp_tensor_t* out_desc, float* out);
/* LayerNormalization over dims [axis, rank): mean, var = mean((x - mean)^2),
 * out = (x - mean) / sqrt(var + eps) * scale + bias. scale/bias are contiguous with the normalised
 * dims' shape (bias may be NULL; scale may be NULL = 1). */
sp_status_t sp_layer_norm_f32(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                              const float* scale, const float* bias, float epsilon,
                              const sp_tensor_t* out_desc, float* out);
/* InstanceNormalization: per (n, c) over the spatial dims, scale/bias per channel. */
sp_status_t sp_instance_norm_f32(const sp_tensor_t* in_desc, const float* in, const float* scale,
                                 const float* bias, float epsilon, const sp_tensor_t* out_desc,
                                 float* out);

/* ---- Elementwise --------------------------------------------------------------------------- */

typedef enum {
  SP_UNARY_IDENTITY = 0,  /* Identity, Dropout (inference), Cast float->float */
  SP_UNARY_RELU,
  SP_UNARY_CLIP,          /* min(max(x, alpha), beta) */
  SP_UNARY_SIGMOID,
  SP_UNARY_HARD_SIGMOID,  /* max(0, min(1, alpha * x + beta)) */
  SP_UNARY_HARD_SWISH,    /* x * max(0, min(1, x / 6 + 0.5)) */
  SP_UNARY_TANH,
  SP_UNARY_ERF,
  SP_UNARY_SQRT,
  SP_UNARY_EXP,
  SP_UNARY_LOG,
  SP_UNARY_NEG,
  SP_UNARY_ABS,
  SP_UNARY_CEIL,
  SP_UNARY_FLOOR,
  SP_UNARY_RECIPROCAL,
  SP_UNARY_SIGN,
  SP_UNARY_SOFTPLUS,      /* log(1 + exp(x)) */
  SP_UNARY_ELU,           /* x >= 0 ? x : alpha * (exp(x) - 1) */
  SP_UNARY_LEAKY_RELU,    /* x >= 0 ? x : alpha * x */
  SP_UNARY_SELU,          /* beta * (x > 0 ? x : alpha * (exp(x) - 1)); beta is gamma */
  SP_UNARY_GELU           /* 0.5 x (1 + erf(x / sqrt 2)) */
} sp_unary_op_t;

/* out = f(in) elementwise; in and out have the same dims (strides may differ). */
sp_status_t sp_unary_f32(const sp_tensor_t* in_desc, const float* in, sp_unary_op_t op,
                         float alpha, float beta, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_relu_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc,
                        float* out);
sp_status_t sp_clip_f32(const sp_tensor_t* in_desc, const float* in, float min_value,
                        float max_value, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_sigmoid_f32(const sp_tensor_t* in_desc, const float* in,
                           const sp_tensor_t* out_desc, float* out);
sp_status_t sp_hard_sigmoid_f32(const sp_tensor_t* in_desc, const float* in, float alpha,
                                float beta, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_hard_swish_f32(const sp_tensor_t* in_desc, const float* in,
                              const sp_tensor_t* out_desc, float* out);
sp_status_t sp_tanh_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc,
                        float* out);
sp_status_t sp_erf_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc,
                       float* out);
sp_status_t sp_sqrt_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc,
                        float* out);
sp_status_t sp_exp_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc,
                       float* out);
sp_status_t sp_neg_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* out_desc,
                       float* out);

typedef enum {
  SP_BINARY_ADD = 0,
  SP_BINARY_SUB,
  SP_BINARY_MUL,
  SP_BINARY_DIV,
  SP_BINARY_POW,
  SP_BINARY_MAX,
  SP_BINARY_MIN,
  SP_BINARY_MOD,    /* fmod (ONNX Mod with fmod=1) */
  SP_BINARY_PRELU   /* a >= 0 ? a : a * b (b is the slope) */
} sp_binary_op_t;

/* out = a op b with broadcasting. */
sp_status_t sp_binary_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                          const float* b, sp_binary_op_t op, const sp_tensor_t* out_desc,
                          float* out);
sp_status_t sp_add_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_sub_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_mul_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_div_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_pow_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_max_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);
sp_status_t sp_min_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                       const float* b, const sp_tensor_t* out_desc, float* out);

typedef enum {
  SP_COMPARE_EQUAL = 0,
  SP_COMPARE_GREATER,
  SP_COMPARE_GREATER_OR_EQUAL,
  SP_COMPARE_LESS,
  SP_COMPARE_LESS_OR_EQUAL
} sp_compare_op_t;
/* out (bool, one byte 0/1) = a op b with broadcasting. */
sp_status_t sp_compare_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                           const float* b, sp_compare_op_t op, const sp_tensor_t* out_desc,
                           uint8_t* out);

/* Integer arithmetic on int64 tensors (shape subgraphs: Add/Sub/Mul/Div/Max/Min; Div truncates
 * toward zero; division by zero gives 0). op is one of ADD, SUB, MUL, DIV, MAX, MIN, MOD (C %). */
sp_status_t sp_binary_s64(const sp_tensor_t* a_desc, const int64_t* a, const sp_tensor_t* b_desc,
                          const int64_t* b, sp_binary_op_t op, const sp_tensor_t* out_desc,
                          int64_t* out);

/* ONNX Cast between the sp_dtype_t types (float -> integer truncates toward zero like C, then
 * wraps like a C conversion via int64; bool out is x != 0). */
sp_status_t sp_cast(const sp_tensor_t* in_desc, const void* in, sp_dtype_t in_type,
                    const sp_tensor_t* out_desc, void* out, sp_dtype_t out_type);

/* ---- Softmax ------------------------------------------------------------------------------- */

/* Softmax (opset 13) along one axis: exp(x - max) / sum. */
sp_status_t sp_softmax_f32(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                           const sp_tensor_t* out_desc, float* out);
/* LogSoftmax along one axis: x - max - log(sum exp(x - max)). */
sp_status_t sp_log_softmax_f32(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                               const sp_tensor_t* out_desc, float* out);

/* ---- Pooling and reductions ---------------------------------------------------------------- */

/* Max pool over 1, 2 or 3 spatial dims: in (N, C, D1..Dk), kernel/stride/dilation k entries
 * (stride/dilation NULL = 1), pad 2k (ONNX order; NULL = 0). Output dims are the caller's (floor or
 * ceil_mode); padding never wins; a window with no input tap gives -inf. */
sp_status_t sp_max_pool_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* kernel,
                            const int32_t* stride, const int32_t* pad, const int32_t* dilation,
                            const sp_tensor_t* out_desc, float* out);
/* Average pool, same geometry (no dilation). count_include_pad = 0: divide by the taps inside the
 * input; != 0: by the taps inside the padded input [-pad_begin, dim + pad_end) (a ceil_mode window
 * hanging past the end padding counts only its part inside). A window with no tap gives 0. */
sp_status_t sp_avg_pool_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* kernel,
                            const int32_t* stride, const int32_t* pad, int32_t count_include_pad,
                            const sp_tensor_t* out_desc, float* out);
/* (N, C, spatial...) -> (N, C, 1...) mean / max over all spatial dims. */
sp_status_t sp_global_avg_pool_f32(const sp_tensor_t* in_desc, const float* in,
                                   const sp_tensor_t* out_desc, float* out);
sp_status_t sp_global_max_pool_f32(const sp_tensor_t* in_desc, const float* in,
                                   const sp_tensor_t* out_desc, float* out);

typedef enum {
  SP_REDUCE_MEAN = 0,
  SP_REDUCE_SUM,
  SP_REDUCE_MAX,
  SP_REDUCE_MIN,
  SP_REDUCE_PROD,
  SP_REDUCE_SUM_SQUARE,
  SP_REDUCE_L1,
  SP_REDUCE_L2,
  SP_REDUCE_LOG_SUM,
  SP_REDUCE_LOG_SUM_EXP
} sp_reduce_op_t;
/* Reduce over axes[0..n_axes) (distinct, in [0, rank); n_axes == 0 reduces nothing: a copy).
 * keepdims is the caller's: out has either the input's rank with the reduced dims 1, or the
 * input's rank minus n_axes with the reduced dims removed. */
sp_status_t sp_reduce_f32(const sp_tensor_t* in_desc, const float* in, sp_reduce_op_t op,
                          const int32_t* axes, int32_t n_axes, const sp_tensor_t* out_desc,
                          float* out);
/* ReduceMean (same rules as sp_reduce_f32). */
sp_status_t sp_reduce_mean_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* axes,
                               int32_t n_axes, const sp_tensor_t* out_desc, float* out);

/* ---- Resize -------------------------------------------------------------------------------- */

/* Linear resize (ONNX Resize mode=linear) over the last two logical dims (bilinear on H, W of
 * (N, C, H, W); rank >= 2, the other dims equal). Source coordinates as sp_coord_mode_t (from the
 * axis sizes, scale = out / in), clamped to [0, in - 1] per ONNX. TF_HALF_PIXEL_FOR_NN is not
 * accepted. Nearest resize: sp_resize_nearest (type-generic). */
sp_status_t sp_resize_linear_f32(const sp_tensor_t* in_desc, const float* in,
                                 sp_coord_mode_t coord, const sp_tensor_t* out_desc, float* out);

#ifdef __cplusplus
}
#endif

#endif /* SRAMPLAN_RT_F32_H_ */
