/* sramplan runtime: C99 kernels that run on the host (executors) and on Cortex-M (firmware).
 * No heap, no libc beyond string.h/stdint.h, no floating point in the int8 path.
 * Kernels take pointers and shapes; they never allocate and never know about plans.
 *
 * Tensors are described by sp_tensor_t: up to 6 logical dims and element strides, so one kernel
 * serves NCHW (ONNX) and NHWC (TFLite/MCUNet) layouts. 4-D feature-map kernels take logical
 * (N, C, H, W) dims with the strides of the actual layout; 5-D (N, C, D, H, W) for 3-D ops.
 *
 * Headers:
 *   sramplan_rt.h       this file: tensor descriptors, status codes, requant parameters, and the
 *                       type-generic data-movement kernels (copy/expand, tile, concat, slice,
 *                       gather, transpose, pad, nearest resize, where). Integer-only, MCU-safe.
 *   sramplan_rt_int8.h  int8 kernels with TensorFlow Lite Micro quantisation semantics. MCU-safe.
 *   sramplan_rt_f32.h   float32 reference kernels (host; may use math.h).
 *   sramplan_rt_host.h  HOST-ONLY helpers that use floating point to build int8 parameters
 *                       (QuantizeMultiplier, lookup tables, Add/Mul parameters).
 *
 * MCU-safe sources (no float, no heap, only string.h/stdint.h): sramplan_rt_common.c,
 * sramplan_rt_move.c, sramplan_rt_requant.c, sramplan_rt_conv_s8.c, sramplan_rt_pool_s8.c,
 * sramplan_rt_elementwise_s8.c. Host-only: sramplan_rt_f32*.c, sramplan_rt_host.c.
 *
 * Conventions shared by every kernel:
 *   - All strides are >= 0 (a reversed view is expressed with a kernel parameter, e.g. slice steps).
 *     A stride of 0 means "broadcast": every index along that axis reads the same element.
 *   - A kernel reads an input element only at offsets sum(i_k * stride_k) with 0 <= i_k < dims_k of
 *     that input's descriptor and writes only such offsets of the output descriptor, so the arena
 *     executor can check every access against [ptr, ptr + sp_tensor_span(desc) * elem_size).
 *   - Kernels validate shapes and return SP_BAD_ARGUMENT (writing nothing) when they are
 *     inconsistent. Dims of 0 are allowed and mean "empty": the kernel returns SP_OK and does nothing.
 *   - Elementwise kernels (unary, binary, LUT, requantize, clamp) may run in place (out == an input)
 *     when the output descriptor equals that input's descriptor. No other kernel may alias.
 *   - Broadcasting (binary ops, where, expand): inputs are right-aligned to the output rank (missing
 *     leading dims count as 1); an input dim must equal the output dim or be 1 (then it broadcasts).
 *   - No global state except const tables. */
#ifndef SRAMPLAN_RT_H_
#define SRAMPLAN_RT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SP_MAX_DIMS 6

typedef struct {
  int32_t rank;
  int32_t dims[SP_MAX_DIMS];
  int32_t strides[SP_MAX_DIMS]; /* in elements */
} sp_tensor_t;

/* Status codes returned by kernels that validate their arguments. */
typedef enum { SP_OK = 0, SP_BAD_ARGUMENT = 1 } sp_status_t;

/* Fixed-point requantisation, TFLite semantics: real multiplier M = multiplier * 2^(shift - 31),
 * multiplier in [2^30, 2^31) (or 0 for M == 0), shift in [-31, 30]. shift > 0 is a left shift
 * applied before the doubling high multiply, shift < 0 a rounding right shift after it. */
typedef struct {
  int32_t multiplier;
  int32_t shift;
} sp_requant_t;

/* Element types (sp_cast; bool is one byte holding 0 or 1). */
typedef enum {
  SP_DTYPE_F32 = 0,
  SP_DTYPE_S8 = 1,
  SP_DTYPE_U8 = 2,
  SP_DTYPE_S16 = 3,
  SP_DTYPE_S32 = 4,
  SP_DTYPE_S64 = 5,
  SP_DTYPE_BOOL = 6
} sp_dtype_t;

/* ---- Tensor descriptor helpers ------------------------------------------------------------ */

/* Row-major contiguous descriptor of the given logical dims (rank 0..6). */
void sp_tensor_init_contiguous(sp_tensor_t* t, int32_t rank, const int32_t* dims);
/* Logical (N, C, H, W) dims; NCHW (contiguous) or NHWC (channels-last) strides. */
void sp_tensor_init_nchw(sp_tensor_t* t, int32_t n, int32_t c, int32_t h, int32_t w);
void sp_tensor_init_nhwc(sp_tensor_t* t, int32_t n, int32_t c, int32_t h, int32_t w);
/* Number of logical elements (product of dims; 1 for rank 0). */
int32_t sp_tensor_numel(const sp_tensor_t* t);
/* Elements spanned in memory: 1 + max offset (0 if empty). Every access is below this. */
int32_t sp_tensor_span(const sp_tensor_t* t);
/* 1 if rank in [0, 6], dims >= 0 and strides >= 0, else 0. */
int sp_tensor_valid(const sp_tensor_t* t);

/* ---- Type-generic data movement (integer-only; elem_size is 1, 2, 4 or 8 bytes) ------------- */

/* Strided copy with broadcasting (ONNX Expand, Identity, Cast float->float, layout conversion). */
sp_status_t sp_copy(const sp_tensor_t* in_desc, const void* in, int32_t elem_size,
                    const sp_tensor_t* out_desc, void* out);
/* Same as sp_copy; named after ONNX Expand. */
sp_status_t sp_expand(const sp_tensor_t* in_desc, const void* in, int32_t elem_size,
                      const sp_tensor_t* out_desc, void* out);
/* ONNX Tile: same rank, out[i] = in[i mod in_dims] per axis. */
sp_status_t sp_tile(const sp_tensor_t* in_desc, const void* in, int32_t elem_size,
                    const sp_tensor_t* out_desc, void* out);
/* Concatenation of n inputs along axis (same rank, other dims equal). int8: a plain copy, so all
 * inputs must share the output's scale and zero point (TFLite Micro's requirement); requantise
 * first with sp_requantize_s8 otherwise. */
sp_status_t sp_concat(int32_t n, const sp_tensor_t* const* in_descs, const void* const* ins,
                      int32_t axis, int32_t elem_size, const sp_tensor_t* out_desc, void* out);
/* ONNX Slice (and Split, as several slices): out[i] = in[starts + i * steps] per axis. starts are
 * already normalised by the caller (0 <= start < dim); steps are non-zero and may be negative;
 * every index read must lie in the input (else SP_BAD_ARGUMENT). NULL steps = all 1. */
sp_status_t sp_slice(const sp_tensor_t* in_desc, const void* in, const int32_t* starts,
                     const int32_t* steps, int32_t elem_size, const sp_tensor_t* out_desc, void* out);
/* ONNX Gather: out dims = in[:axis] ++ idx dims ++ in[axis+1:]; negative indices count from the
 * end; an index out of range gives SP_BAD_ARGUMENT. */
sp_status_t sp_gather(const sp_tensor_t* in_desc, const void* in, int32_t axis,
                      const sp_tensor_t* idx_desc, const int64_t* indices, int32_t elem_size,
                      const sp_tensor_t* out_desc, void* out);
/* ONNX Transpose: out dims[i] = in dims[perm[i]]. */
sp_status_t sp_transpose(const sp_tensor_t* in_desc, const void* in, const int32_t* perm,
                         int32_t elem_size, const sp_tensor_t* out_desc, void* out);

typedef enum { SP_PAD_CONSTANT = 0, SP_PAD_REFLECT = 1, SP_PAD_EDGE = 2 } sp_pad_mode_t;
/* ONNX Pad: pads has 2*rank entries, ONNX order (begin_0..begin_{r-1}, end_0..end_{r-1}); negative
 * pads crop. out dims[i] must be in dims[i] + begin + end. value points to one element (the
 * constant; for int8 use the zero point); reflect needs pads < dim (mirror without the edge),
 * edge repeats the border element. */
sp_status_t sp_pad(const sp_tensor_t* in_desc, const void* in, const int32_t* pads,
                   sp_pad_mode_t mode, const void* value, int32_t elem_size,
                   const sp_tensor_t* out_desc, void* out);

/* Coordinate transforms of ONNX Resize (x_out -> x_in, with in/out the axis lengths). */
typedef enum {
  SP_COORD_HALF_PIXEL = 0,         /* (x + 0.5) * in / out - 0.5 */
  SP_COORD_ASYMMETRIC = 1,         /* x * in / out */
  SP_COORD_ALIGN_CORNERS = 2,      /* x * (in - 1) / (out - 1), 0 if out == 1 */
  SP_COORD_PYTORCH_HALF_PIXEL = 3, /* half_pixel if out > 1, else 0 */
  SP_COORD_TF_HALF_PIXEL_FOR_NN = 4 /* (x + 0.5) * in / out  (TFLite half_pixel_centers, nearest) */
} sp_coord_mode_t;
typedef enum {
  SP_NEAREST_ROUND_PREFER_FLOOR = 0, /* ONNX default */
  SP_NEAREST_ROUND_PREFER_CEIL = 1,
  SP_NEAREST_FLOOR = 2,
  SP_NEAREST_CEIL = 3
} sp_nearest_mode_t;
/* Nearest-neighbour resize over every axis (axes whose size is unchanged map identically). The
 * source coordinate is computed exactly in rational integer arithmetic from the axis sizes (scale
 * = out / in), then rounded by the nearest mode and clamped to [0, in - 1]. TFLite
 * ResizeNearestNeighbor: align_corners=false, half_pixel_centers=false -> ASYMMETRIC + FLOOR;
 * half_pixel_centers=true -> TF_HALF_PIXEL_FOR_NN + FLOOR; align_corners=true -> ALIGN_CORNERS +
 * ROUND_PREFER_CEIL. ONNX Resize(mode=nearest) defaults: HALF_PIXEL + ROUND_PREFER_FLOOR.
 * Exact rationals mean ties are real ties (no float noise); when an ONNX model gives `scales` that
 * are not exactly out/in (non-integral in * scale), the scale used here is still out/in. Axis
 * lengths above 16384 must be unchanged by the resize. */
sp_status_t sp_resize_nearest(const sp_tensor_t* in_desc, const void* in, sp_coord_mode_t coord,
                              sp_nearest_mode_t nearest, int32_t elem_size,
                              const sp_tensor_t* out_desc, void* out);
/* ONNX Where with broadcasting: out = cond ? x : y; cond is bool (one byte, non-zero = true). */
sp_status_t sp_where(const sp_tensor_t* cond_desc, const uint8_t* cond, const sp_tensor_t* x_desc,
                     const void* x, const sp_tensor_t* y_desc, const void* y, int32_t elem_size,
                     const sp_tensor_t* out_desc, void* out);

#ifdef __cplusplus
}
#endif

#endif /* SRAMPLAN_RT_H_ */
