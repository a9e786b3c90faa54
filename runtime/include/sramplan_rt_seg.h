/* sramplan runtime: segment-aware int8 kernels (vMCU, "segment-level memory management").
 *
 * Input and output activations live in ONE circular pool. The kernels read the input and write the
 * output in a fixed, documented order, so the output may be placed `shift` bytes before the input
 * and overwrite input bytes that are no longer needed. The order is the contract with the overlap
 * analysis (src/segment); sp_seg_sim_min_shift below replays the kernels' own order on the host
 * and returns the smallest safe shift (the ground truth the analysis is checked against).
 *
 * ---- The pool ---------------------------------------------------------------------------------
 * pool_bytes = pool_segments * segment_bytes. A tensor occupies `bytes` consecutive bytes of the
 * circular byte space starting at byte offset `start` (0 <= start < pool_bytes): its logical byte k
 * is at base[(start + k) mod pool_bytes]. Activations are row-major NHWC with N = 1 (channels
 * innermost); FC tensors are row-major (M, K) / (M, N).
 * Starts are given in BYTES, so the kernels are correct for any start and any pool size; segments
 * are only the planner's unit of allocation and shift (a tensor starting at segment g has
 * start = g * segment_bytes, see sp_seg_start). The planner's segment size (vMCU: FC
 * min(K, N); Conv2D / bottleneck min(C_in, C_out)) need not divide rows or pixels: nothing in the
 * kernels depends on it. Wrap-around is handled once per contiguous run (an input pixel / row, an
 * output pixel / row / chunk): the run is split at the pool end into two plain loops, so the inner
 * loops contain no modulo and no per-byte test.
 *
 * ---- Placement contract -------------------------------------------------------------------------
 * out_start = (in_start - shift) mod pool_bytes with 0 <= shift, and
 *     shift + in_bytes <= pool_bytes   (the output's head must not wrap onto the input's tail)
 *     out_bytes <= pool_bytes.
 * The kernels check these two inequalities (derived from in_start/out_start) and return
 * SP_BAD_ARGUMENT otherwise. They do NOT check that `shift` is safe: every shift >= the value
 * returned by sp_seg_sim_min_shift is safe (no output byte is written over an input byte that is
 * still to be read); smaller shifts corrupt the result silently. Footprint of the layer in the
 * pool: max(shift + in_bytes, out_bytes). Bytes of the pool outside the input and output ranges are
 * never touched. With a non-overlapping output (e.g. a pool large enough and out_start far from the
 * input) the kernels give exactly the bytes of the plain kernels of sramplan_rt_int8.h.
 *
 * ---- Access order (the contract; "read X" = every byte of X is read, "write" = stored) ----------
 * The order is the one of the overlap analysis (src/segment/overlap.h, the kernel builders): the
 * kernels run in STEPS, and every step performs ALL of its pool reads before ANY of its pool
 * writes (the result of a step is computed into a caller-provided workspace and then copied to
 * the pool). Steps run in the order below.
 * Output pixels p = (oh, ow) are always visited in row-major order; "taps" are the (r, s) of the
 * RxS window in row-major order, skipping taps outside the input (padding contributes nothing).
 * Input pixel of tap (r, s): ih = oh*stride_h - pad_top + r*dilation_h, iw likewise.
 *   FC (M x K -> M x N, output chunks of CH = shape->chunk bytes, the plan's segment size):
 *       for m: for n0 = 0, CH, 2CH, ...: { read in[m, 0..K); write out[m, n0..min(n0+CH, N)) }
 *       (FullyConnectedKernel(M, K, N, CH)).
 *   Pointwise (1x1, no padding, any stride; C_in -> C_out):
 *       for p: { read in[oh*sh, ow*sw, 0..C_in); write out[p, 0..C_out) }  (PointwiseConvKernel).
 *   Conv2D (any R, S, stride, padding, dilation; C_in -> C_out; sp_seg_conv_s8 uses the pointwise
 *       loop when R = S = 1 with no padding, which is the same order):
 *       for p: { for tap: read in[ih, iw, 0..C_in); write out[p, 0..C_out) }  (Conv2DKernel).
 *   Depthwise (C_out = C_in = C, depth multiplier 1): the Conv2D order (DepthwiseConvKernel);
 *       inside a step the taps are read in channel chunks of SP_SEG_DW_CHUNK (registers), the
 *       results collected in the workspace, and the pixel stored after the last chunk.
 *   Fused inverted bottleneck (expand C_in -> C_mid, depthwise RxS on C_mid, project 1x1
 *       C_mid -> C_out, optional residual add of the block input). The expansion is a pointwise
 *       conv (the usual block) or any Conv2D e_r x e_s with stride and padding (a network's stem
 *       fused as the expansion, e.g. MCUNet's 3x3 stride-2 stem + its first block); it maps the
 *       H x W input to the MH x MW plane the depthwise runs on (MH = H, MW = W when pointwise):
 *       for oh: { column cache emptied;
 *         for ow: { 1. for each window column iw = iw0 .. iw0+S-1 (ascending) that is inside the
 *                      plane and NOT already cached from the previous ow of this row:
 *                        for r = 0..R-1 with ih inside: for every expansion tap (a, b) in
 *                        row-major order whose input pixel (ih*e_stride_h - e_pad_top + a,
 *                        iw*e_stride_w - e_pad_left + b) is inside the input: read that pixel's
 *                        C_in bytes; then expand (ih, iw) into the workspace (pointwise: the
 *                        single tap is in[ih, iw, 0..C_in));
 *                   2. depthwise + 3. project (workspace only, no pool access);
 *                   4. no residual: for k: write out[p, k];
 *                      residual:    for k: { read in[oh, ow, k]; write out[p, k] } } }.
 *       The cache holds the window's S columns (R expanded pixels each, slot = iw mod S), so moving
 *       one output pixel right expands only the min(stride_w, S) new columns: per output row every
 *       input pixel of the window rows is expanded once; across output rows an expanded pixel is
 *       recomputed for each output row whose window covers it (about R / stride_h times; 3x for a
 *       3x3 stride-1 block, 1.5x for stride 2) -- the price of keeping R*S + 2 slots.
 *       Against InvertedBottleneckKernel's contract (every step reads its whole window) this
 *       reads each pixel no later and writes no earlier, so its minimal shift is <= the ISL one.
 *       Row cache (row_cache = 1): at the start of output row oh, before its first write, every
 *       plane row of its window not expanded yet (rows up to oh*stride_h - pad_top + R - 1) is
 *       expanded in full, row-major (its input pixels read as above); step 1 then reads nothing.
 *       Reads move earlier still, so the same shift is safe; each plane pixel is expanded once.
 *   Within one "{ read ...; write ... }" all reads precede the write. No kernel reads its output.
 *
 * ---- Workspaces (caller-provided, outside the input and output ranges; checked for size) -------
 *   FC: min(chunk, N) bytes (one output chunk). Conv2D, depthwise: C_out bytes (one output
 *   pixel; a 1x1 unpadded Conv2D runs the pointwise loop and needs what it needs). Pointwise:
 *   min(C_in, C_out) bytes (the output pixel when C_out <= C_in, else the input pixel, copied
 *   before the outputs are computed straight into the pool). A workspace may lie in the same
 *   memory as the pool (e.g. another buffer of the same arena) as long as it overlaps neither
 *   the input nor the output bytes.
 * ---- Workspace of the bottleneck ----------------------------------------------------------------
 *   R*S slots of C_mid bytes (the expanded window, tensor B), one slot of C_mid bytes (the
 *   depthwise result, tensor C) and, with a residual, one slot of C_out bytes (the projected pixel,
 *   tensor D, before the add):
 *       workspace_bytes = (R*S + 1) * C_mid + (residual ? C_out : 0)
 *   i.e. the paper's R*S + 2 "segments" (11 for 3x3) when a slot is one pixel's channel vector.
 *   The row cache replaces the R*S window slots by R*MW slots (R rows of the expanded plane):
 *       workspace_bytes = (R*MW + 1) * C_mid + (residual ? C_out : 0)
 *   still far below the MH*MW*C_mid of the expanded tensor, and no pixel is expanded twice.
 *   Both are followed by the kernel's scratch (part of the workspace, so a plan counts it in the
 *   arena and the verifier checks it): 3 bytes to word-align, the depthwise tap table (8 bytes per
 *   tap: R*S*8), then the expansion's columns: a Conv2D expansion whose window R_e*S_e*C_in is at
 *   most 64 bytes, 2 * R_e*S_e*C_in (two gathered windows); a 1x1 expansion under the column cache
 *   with R >= 4 and C_in a multiple of 4 up to 32, min(R, 128 / C_in) * C_in (pixels copied next to
 *   each other); else nothing. sp_seg_bottleneck_workspace_bytes is this rule.
 *   It does not depend on the pool's segment size. The bottleneck keeps no array on the stack (its
 *   accumulators are four registers); the single-layer conv / depthwise kernels below still use
 *   at most SP_SEG_MAX_TAPS tap descriptors and SP_SEG_DW_CHUNK int32 accumulators of stack; no
 *   heap, no VLA, no floating point.
 *
 * Quantisation and rounding are exactly those of the plain kernels (sramplan_rt_int8.h):
 * acc = bias[k] + sum (x - in_zp) * w, out = clamp(MBQM(acc, rq[k]) + out_zp, act_min, act_max);
 * the residual add is sp_add_s8 with in1 = the block input, in2 = the projected output. */
#ifndef SRAMPLAN_RT_SEG_H_
#define SRAMPLAN_RT_SEG_H_

#include "sramplan_rt_int8.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Channels accumulated at once by the depthwise kernel (part of the access order above). */
#define SP_SEG_DW_CHUNK 64
/* Largest R*S accepted by the conv, depthwise and bottleneck kernels. */
#define SP_SEG_MAX_TAPS 64

typedef struct {
  int8_t* base;          /* pool_segments * segment_bytes bytes */
  int32_t pool_segments; /* >= 1 */
  int32_t segment_bytes; /* >= 1; pool_bytes must stay below 2^30 */
} sp_seg_pool_t;

/* Byte offset of segment g (any integer; reduced modulo the pool). */
int32_t sp_seg_start(const sp_seg_pool_t* pool, int32_t segment);

/* One quantised layer. Weight layouts (row-major, int8, symmetric per output channel):
 *   FC [N][K]; pointwise [C_out][C_in]; Conv2D [C_out][R][S][C_in] (TFLite OHWI);
 *   depthwise [R][S][C] (TFLite [1, R, S, C]). bias (int32, may be NULL) and rq have one entry
 *   per output channel. */
typedef struct {
  const int8_t* weights;
  const int32_t* bias;
  const sp_requant_t* rq;
  int32_t in_zp;
  int32_t out_zp;
  int32_t act_min;
  int32_t act_max;
} sp_seg_layer_s8_t;

/* FC: input M x K, output M x N; `chunk` output bytes per step (the plan's segment size,
 * clamped to N; 0 = min(K, N), the paper's rule). */
typedef struct {
  int32_t m, k, n;
  int32_t chunk;
} sp_seg_fc_shape_t;

/* Conv2D / pointwise / depthwise on an H x W x C_in NHWC input (N = 1). Output
 * OH = (H + pad_top + pad_bottom - dilation_h*(R-1) - 1) / stride_h + 1, OW likewise (>= 1). */
typedef struct {
  int32_t h, w, c_in, c_out;
  int32_t r, s;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t dilation_h, dilation_w; /* >= 1 */
} sp_seg_conv_shape_t;

/* Inverted bottleneck on an H x W x C_in input; depthwise RxS with stride and padding (no
 * dilation) on the expanded MH x MW plane. has_expand = 0: no expansion layer (C_mid must equal C_in; MobileNetV2's first
 * block). has_residual != 0 requires C_in == C_out, OH == H and OW == W. */
typedef struct {
  int32_t h, w, c_in, c_mid, c_out;
  int32_t r, s;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t has_expand, has_residual;
  /* Geometry of the expansion layer (has_expand): a Conv2D e_r x e_s (groups 1, weights
   * [C_mid][e_r][e_s][C_in]) with stride and zero padding on the H x W input, giving the MH x MW
   * plane the depthwise runs on (h, w, r, s, stride and pads above are then the depthwise's on
   * that plane). e_r = 0 (e.g. an initializer that omits these fields) means pointwise: 1x1,
   * stride 1, no padding, MH = H, MW = W. A residual needs a pointwise expansion. */
  int32_t e_r, e_s, e_stride_h, e_stride_w, e_pad_top, e_pad_left, e_pad_bottom, e_pad_right;
  /* 0: column cache (R*S + 1 slots of workspace; plane pixels re-expanded for each output row
   * whose window covers them). 1: row cache (R full plane rows: every plane pixel is expanded
   * exactly once, as in the plain kernels; more workspace, see below). */
  int32_t row_cache;
} sp_seg_bottleneck_shape_t;

typedef struct {
  sp_seg_layer_s8_t expand;    /* weights [C_mid][e_r][e_s][C_in]; ignored if !has_expand */
  sp_seg_layer_s8_t depthwise; /* weights [R][S][C_mid] */
  sp_seg_layer_s8_t project;   /* weights [C_out][C_mid] */
  /* in1 = the block input, in2 = the projected output; NULL iff !has_residual. */
  const sp_add_s8_params_t* residual;
} sp_seg_bottleneck_s8_t;

int32_t sp_seg_conv_out_h(const sp_seg_conv_shape_t* shape);
int32_t sp_seg_conv_out_w(const sp_seg_conv_shape_t* shape);
int32_t sp_seg_bottleneck_out_h(const sp_seg_bottleneck_shape_t* shape);
int32_t sp_seg_bottleneck_out_w(const sp_seg_bottleneck_shape_t* shape);
/* Column cache: (R*S + 1) * C_mid + (has_residual ? C_out : 0); row cache: (R*MW + 1) * C_mid
 * + (has_residual ? C_out : 0); C_mid is C_in without expansion. 0 on a bad shape. */
int32_t sp_seg_bottleneck_workspace_bytes(const sp_seg_bottleneck_shape_t* shape);

/* workspace_bytes >= min(chunk, N) (see sp_seg_fc_shape_t), else SP_BAD_ARGUMENT. */
sp_status_t sp_seg_fully_connected_s8(const sp_seg_pool_t* pool, int32_t in_start,
                                      int32_t out_start, const sp_seg_fc_shape_t* shape,
                                      const sp_seg_layer_s8_t* layer, int8_t* workspace,
                                      int32_t workspace_bytes);
/* R = S = 1, zero padding, any stride. workspace_bytes >= min(C_in, C_out). */
sp_status_t sp_seg_pointwise_s8(const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start,
                                const sp_seg_conv_shape_t* shape, const sp_seg_layer_s8_t* layer,
                                int8_t* workspace, int32_t workspace_bytes);
/* Any R, S (R*S <= SP_SEG_MAX_TAPS), stride, padding, dilation; groups = 1.
 * workspace_bytes >= C_out, or min(C_in, C_out) when R = S = 1 without padding (it then runs
 * sp_seg_pointwise_s8). Depthwise: workspace_bytes >= C. */
sp_status_t sp_seg_conv_s8(const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start,
                           const sp_seg_conv_shape_t* shape, const sp_seg_layer_s8_t* layer,
                           int8_t* workspace, int32_t workspace_bytes);
/* c_out == c_in, depth multiplier 1. */
sp_status_t sp_seg_depthwise_s8(const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start,
                                const sp_seg_conv_shape_t* shape, const sp_seg_layer_s8_t* layer,
                                int8_t* workspace, int32_t workspace_bytes);
/* Workspace bytes of the FC kernel: min(chunk, N); 0 on a bad shape. */
int32_t sp_seg_fc_workspace_bytes(const sp_seg_fc_shape_t* shape);
/* Workspace bytes of sp_seg_conv_s8 (C_out, or min(C_in, C_out) for R = S = 1 without padding)
 * and of sp_seg_depthwise_s8 (C); 0 on a bad shape. With sp_seg_fc_workspace_bytes and
 * sp_seg_bottleneck_workspace_bytes these are the one rule of how large the workspace of a
 * segment step must be (planner, executor and code generator all ask them). */
int32_t sp_seg_conv_workspace_bytes(const sp_seg_conv_shape_t* shape);
int32_t sp_seg_depthwise_workspace_bytes(const sp_seg_conv_shape_t* shape);
/* workspace_bytes must be >= sp_seg_bottleneck_workspace_bytes(shape); only that many are used. */
sp_status_t sp_seg_bottleneck_s8(const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start,
                                 const sp_seg_bottleneck_shape_t* shape,
                                 const sp_seg_bottleneck_s8_t* params, int8_t* workspace,
                                 int32_t workspace_bytes);

/* ---- HOST-ONLY (sramplan_rt_seg_sim.c; uses the heap): minimal safe shifts ---------------------
 * Runs the kernel above (the same source, compiled with access tracing) on dummy data and records,
 * for every input byte, when it is read for the last time and, for every output byte, when it is
 * written. A shift d is safe iff every output byte j with 0 <= j - d < in_bytes is written after
 * the last read of input byte j - d. Not thread-safe (one global trace). */
typedef enum {
  SP_SEG_KIND_FC = 0,
  SP_SEG_KIND_POINTWISE = 1,
  SP_SEG_KIND_CONV = 2,
  SP_SEG_KIND_DEPTHWISE = 3,
  SP_SEG_KIND_BOTTLENECK = 4
} sp_seg_kind_t;

typedef struct {
  sp_seg_kind_t kind;
  sp_seg_fc_shape_t fc;                 /* SP_SEG_KIND_FC */
  sp_seg_conv_shape_t conv;             /* POINTWISE, CONV, DEPTHWISE */
  sp_seg_bottleneck_shape_t bottleneck; /* BOTTLENECK */
} sp_seg_layer_desc_t;

typedef struct {
  int32_t in_bytes;
  int32_t out_bytes;
  int32_t shift_bytes;      /* smallest d >= 0 such that every d' >= d is safe */
  int32_t first_safe_bytes; /* smallest safe d >= 0 (< shift_bytes iff the unsafe set has gaps) */
  int32_t footprint_bytes;  /* max(shift_bytes + in_bytes, out_bytes) */
} sp_seg_shift_t;

sp_status_t sp_seg_sim_min_shift(const sp_seg_layer_desc_t* layer, sp_seg_shift_t* result);
/* 1 if shift_bytes (>= 0) is safe, 0 if not, -1 on a bad layer. */
int sp_seg_sim_is_safe(const sp_seg_layer_desc_t* layer, int32_t shift_bytes);
/* Shift in whole segments when both tensors start on segment boundaries:
 * ceil(shift_bytes / segment_bytes). */
int32_t sp_seg_shift_segments(int32_t shift_bytes, int32_t segment_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SRAMPLAN_RT_SEG_H_ */
