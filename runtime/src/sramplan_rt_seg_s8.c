/* sramplan runtime: segment-aware int8 kernels on a circular pool (integer-only, MCU-safe).
 * See sramplan_rt_seg.h for the pool, the placement contract and the access order.
 *
 * sramplan_rt_seg_sim.c (host only) #includes this file with SP_SEG_TRACING defined: the
 * SP_SEG_TR_* hooks then record every pool access (logical byte offsets in the input / output
 * tensor) and the kernels are renamed by SP_SEG_FN, so the shift simulation replays exactly the
 * loops below. In the MCU build the hooks expand to nothing. */
#include <string.h>

#include "sp_fast_s8.h"
#include "sp_internal.h"
#include "sramplan_rt_seg.h"

#ifndef SP_SEG_TRACING
#define SP_SEG_TR_READ(off, n) ((void)0)
#define SP_SEG_TR_WRITE(off, n) ((void)0)
#define SP_SEG_FN(name) name
#define SP_SEG_LINKAGE
#endif

/* ---- Small helpers --------------------------------------------------------------------------- */

/* (start + off) mod size for 0 <= start < size, 0 <= off < size. */
static inline int32_t seg_pos(int32_t start, int32_t off, int32_t size) {
  const int32_t a = start + off;
  return a >= size ? a - size : a;
}

/* The inner loops are sp_fast_s8.h's (SIMD on Cortex-M with DSP, portable C elsewhere). */
#define seg_dot sp_dot_s8
#define seg_requant sp_fq_out

/* Dense outputs with weight rows of n bytes and contiguous outputs: sp_fast_s8.h's dense loops. */
#define seg_dense_out(x, n, w, bias, rq, in_off, out_zp, act_min, act_max, dst, count) \
  sp_dense_out((x), (n), (w), (n), (bias), (rq), (in_off), (out_zp), (act_min), (act_max), (dst), 1, (count))

static int32_t seg_out_dim(int32_t in, int32_t pb, int32_t pe, int32_t k, int32_t d, int32_t s) {
  const int32_t span = in + pb + pe - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

/* Pool sizes and the placement contract; *size = pool bytes. */
static sp_status_t seg_pool_check(const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start,
                                  int32_t in_bytes, int32_t out_bytes, int32_t* size) {
  int32_t shift;
  if (pool == 0 || pool->base == 0 || pool->pool_segments < 1 || pool->segment_bytes < 1 ||
      pool->pool_segments > ((int32_t)1 << 30) / pool->segment_bytes)
    return SP_BAD_ARGUMENT;
  *size = pool->pool_segments * pool->segment_bytes;
  if (in_start < 0 || in_start >= *size || out_start < 0 || out_start >= *size)
    return SP_BAD_ARGUMENT;
  shift = in_start - out_start;
  if (shift < 0) shift += *size;
  if (in_bytes > *size || out_bytes > *size || shift > *size - in_bytes) return SP_BAD_ARGUMENT;
  return SP_OK;
}

static int seg_layer_ok(const sp_seg_layer_s8_t* l) {
  return l != 0 && l->weights != 0 && l->rq != 0 && l->act_min >= -128 && l->act_max <= 127 &&
         l->act_min <= l->act_max;
}

/* Positive dims, product below 2^30. */
static int seg_bytes_ok(int32_t a, int32_t b, int32_t c, int32_t* bytes) {
  if (a < 1 || b < 1 || c < 1) return 0;
  if (a > ((int32_t)1 << 30) / b) return 0;
  if (a * b > ((int32_t)1 << 30) / c) return 0;
  *bytes = a * b * c;
  return 1;
}

/* The expansion layer of a bottleneck: kernel, stride, padding and the MH x MW plane it gives. */
typedef struct {
  int32_t er, es, sh, sw, pt, pl, pb, pr;
  int32_t mh, mw;
  int pointwise; /* 1x1, stride 1, no padding */
} seg_bn_geom_t;

/* 0 on a bad expansion geometry. */
static int seg_bn_geom(const sp_seg_bottleneck_shape_t* s, seg_bn_geom_t* g) {
  if (s->e_r == 0 || !s->has_expand) {
    if (s->has_expand == 0 && s->e_r != 0 &&
        (s->e_r != 1 || s->e_s != 1 || s->e_stride_h != 1 || s->e_stride_w != 1 || s->e_pad_top ||
         s->e_pad_left || s->e_pad_bottom || s->e_pad_right))
      return 0; /* no expansion layer, but an expansion geometry */
    g->er = g->es = g->sh = g->sw = 1;
    g->pt = g->pl = g->pb = g->pr = 0;
  } else {
    g->er = s->e_r;
    g->es = s->e_s;
    g->sh = s->e_stride_h;
    g->sw = s->e_stride_w;
    g->pt = s->e_pad_top;
    g->pl = s->e_pad_left;
    g->pb = s->e_pad_bottom;
    g->pr = s->e_pad_right;
  }
  if (g->er < 1 || g->es < 1 || g->er * g->es > SP_SEG_MAX_TAPS || g->sh < 1 || g->sw < 1 ||
      g->pt < 0 || g->pl < 0 || g->pb < 0 || g->pr < 0 || g->pt >= g->er || g->pb >= g->er ||
      g->pl >= g->es || g->pr >= g->es)
    return 0;
  g->pointwise = g->er == 1 && g->es == 1 && g->sh == 1 && g->sw == 1;
  g->mh = seg_out_dim(s->h, g->pt, g->pb, g->er, 1, g->sh);
  g->mw = seg_out_dim(s->w, g->pl, g->pr, g->es, 1, g->sw);
  return g->mh >= 1 && g->mw >= 1;
}

/* Largest window (R*S*C_in bytes) the Conv2D expansion gathers into a column. */
#define SEG_COL_MAX 64
/* Pixels of the column cache's batched pointwise expansion copied next to each other (bytes). */
#define SEG_COL2_MAX (2 * SEG_COL_MAX)

/* The scratch of sp_seg_bottleneck_s8, the tail of its workspace (a buffer of the plan, so it is
 * counted in the arena and checked by the verifier): 3 bytes to word-align, the depthwise tap table
 * (R*S pairs of int32: workspace offset, weight offset), then the expansion's columns: a Conv2D
 * expansion whose window (R_e*S_e*C_in bytes) is at most SEG_COL_MAX gathers two windows; the
 * column cache's pointwise expansion (R >= 4, C_in a multiple of 4, at most 32) copies up to
 * min(R, 128 / C_in) input pixels next to each other. */
static int32_t seg_bn_col_bytes(const sp_seg_bottleneck_shape_t* s, const seg_bn_geom_t* g) {
  const int32_t win = g->er * g->es * s->c_in;
  if (!s->has_expand) return 0;
  if (!g->pointwise) return win <= SEG_COL_MAX ? 2 * win : 0;
  if (!s->row_cache && (s->c_in & 3) == 0 && s->r >= 4 && 4 * s->c_in <= SEG_COL2_MAX)
    return SP_MIN(s->r, SEG_COL2_MAX / s->c_in) * s->c_in;
  return 0;
}
static int32_t seg_bn_scratch_bytes(const sp_seg_bottleneck_shape_t* s, const seg_bn_geom_t* g) {
  return 3 + 8 * s->r * s->s + seg_bn_col_bytes(s, g);
}

/* The caches and results of sp_seg_bottleneck_s8 (the workspace before its scratch); 0 on a bad shape. */
static int32_t seg_bn_cache_bytes(const sp_seg_bottleneck_shape_t* s) {
  const int32_t cmid = s->has_expand ? s->c_mid : s->c_in;
  seg_bn_geom_t g;
  if (!s->row_cache) return (s->r * s->s + 1) * cmid + (s->has_residual ? s->c_out : 0);
  if (!seg_bn_geom(s, &g) || s->r < 1 || cmid < 1 || g.mw > ((int32_t)1 << 26) / s->r ||
      s->r * g.mw > ((int32_t)1 << 28) / cmid)
    return 0;
  return (s->r * g.mw + 1) * cmid + (s->has_residual ? s->c_out : 0);
}

#ifndef SP_SEG_TRACING
int32_t sp_seg_start(const sp_seg_pool_t* pool, int32_t segment) {
  int32_t g;
  if (pool == 0 || pool->pool_segments < 1) return 0;
  g = segment % pool->pool_segments;
  if (g < 0) g += pool->pool_segments;
  return g * pool->segment_bytes;
}

int32_t sp_seg_conv_out_h(const sp_seg_conv_shape_t* s) {
  if (s->stride_h < 1 || s->dilation_h < 1) return 0;
  return seg_out_dim(s->h, s->pad_top, s->pad_bottom, s->r, s->dilation_h, s->stride_h);
}
int32_t sp_seg_conv_out_w(const sp_seg_conv_shape_t* s) {
  if (s->stride_w < 1 || s->dilation_w < 1) return 0;
  return seg_out_dim(s->w, s->pad_left, s->pad_right, s->s, s->dilation_w, s->stride_w);
}
int32_t sp_seg_bottleneck_out_h(const sp_seg_bottleneck_shape_t* s) {
  seg_bn_geom_t g;
  if (s->stride_h < 1 || !seg_bn_geom(s, &g)) return 0;
  return seg_out_dim(g.mh, s->pad_top, s->pad_bottom, s->r, 1, s->stride_h);
}
int32_t sp_seg_bottleneck_out_w(const sp_seg_bottleneck_shape_t* s) {
  seg_bn_geom_t g;
  if (s->stride_w < 1 || !seg_bn_geom(s, &g)) return 0;
  return seg_out_dim(g.mw, s->pad_left, s->pad_right, s->s, 1, s->stride_w);
}
int32_t sp_seg_bottleneck_workspace_bytes(const sp_seg_bottleneck_shape_t* s) {
  const int32_t cache = seg_bn_cache_bytes(s);
  seg_bn_geom_t g;
  if (cache < 1 || s->r < 1 || s->s < 1 || s->r * s->s > SP_SEG_MAX_TAPS || !seg_bn_geom(s, &g))
    return 0;
  return cache + seg_bn_scratch_bytes(s, &g);
}
#endif

/* ---- Stores and rows ------------------------------------------------------------------------ */

/* Copies n (<= size) bytes from src (the workspace) to pool position pos, split at the pool end. */
static inline void seg_store(int8_t* base, int32_t size, int32_t pos, const int8_t* src,
                             int32_t n) {
  const int32_t n1 = SP_MIN(n, size - pos);
  memcpy(base + pos, src, (size_t)n1);
  if (n1 < n) memcpy(base, src + n1, (size_t)(n - n1));
}

/* A caller-provided workspace of at least `need` bytes. */
static int seg_ws_ok(const int8_t* workspace, int32_t workspace_bytes, int32_t need) {
  return workspace != 0 && need >= 0 && workspace_bytes >= need;
}

/* `count` outputs of one input row x1[0..n1) ++ x2[0..n2) into dst[0..count) (the workspace);
 * weights w (kin per output), bias, rq already offset to the first of them. */
static inline void seg_row_part(const int8_t* x1, int32_t n1, const int8_t* x2, int32_t n2,
                                const int8_t* w, int32_t kin, const int32_t* bias,
                                const sp_requant_t* rq, int32_t in_off, int32_t out_zp,
                                int32_t act_min, int32_t act_max, int8_t* dst, int32_t count) {
  int32_t k;
  if (n2 == 0) {
    seg_dense_out(x1, n1, w, bias, rq, in_off, out_zp, act_min, act_max, dst, count);
    return;
  }
  for (k = 0; k < count; ++k) {
    int32_t acc = seg_dot(x1, w, n1, in_off);
    if (n2) acc += seg_dot(x2, w + n1, n2, in_off);
    if (bias) acc += bias[k];
    dst[k] = seg_requant(acc, &rq[k], out_zp, act_min, act_max);
    w += kin;
  }
}

/* Outputs [k0, k0 + count) of one row (the input row of kin bytes at pool position in_pos) into
 * ws[0..count). Reads the pool only. */
static inline void seg_row_s8(const int8_t* base, int32_t size, int32_t in_pos, int32_t kin,
                              int32_t k0, int32_t count, const sp_seg_layer_s8_t* l, int8_t* ws) {
  /* Layer fields in locals: a store through ws (int8_t) could alias *l otherwise. */
  const int32_t n1 = SP_MIN(kin, size - in_pos);
  const int32_t in_off = -l->in_zp;
  const int8_t* const w = l->weights + k0 * kin;
  const int32_t* const bias = l->bias ? l->bias + k0 : 0;
  const sp_requant_t* const rq = l->rq + k0;
  const int32_t out_zp = l->out_zp, act_min = l->act_min, act_max = l->act_max;
  if (n1 == kin) /* the common case: the row does not wrap (n2 = 0 is a constant) */
    seg_row_part(base + in_pos, kin, base, 0, w, kin, bias, rq, in_off, out_zp, act_min, act_max,
                 ws, count);
  else
    seg_row_part(base + in_pos, n1, base, kin - n1, w, kin, bias, rq, in_off, out_zp, act_min,
                 act_max, ws, count);
}

/* Output bytes per FC step: shape->chunk, 0 = min(K, N); at most N. -1 if negative. */
static int32_t seg_fc_chunk(const sp_seg_fc_shape_t* s) {
  int32_t c = s->chunk;
  if (c < 0) return -1;
  if (c == 0) c = SP_MIN(s->k, s->n);
  return SP_MIN(c, s->n);
}

#ifndef SP_SEG_TRACING
int32_t sp_seg_fc_workspace_bytes(const sp_seg_fc_shape_t* shape) {
  int32_t c;
  if (shape == 0 || shape->k < 1 || shape->n < 1) return 0;
  c = seg_fc_chunk(shape);
  return c < 1 ? 0 : c;
}
#endif

SP_SEG_LINKAGE sp_status_t SP_SEG_FN(sp_seg_fully_connected_s8)(
    const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start, const sp_seg_fc_shape_t* shape,
    const sp_seg_layer_s8_t* layer, int8_t* workspace, int32_t workspace_bytes) {
  int32_t size, in_bytes, out_bytes, m, n0, chunk;
  sp_status_t st;
  if (shape == 0 || !seg_layer_ok(layer) || !seg_bytes_ok(shape->m, shape->k, 1, &in_bytes) ||
      !seg_bytes_ok(shape->m, shape->n, 1, &out_bytes))
    return SP_BAD_ARGUMENT;
  chunk = seg_fc_chunk(shape);
  if (chunk < 1 || !seg_ws_ok(workspace, workspace_bytes, chunk)) return SP_BAD_ARGUMENT;
  st = seg_pool_check(pool, in_start, out_start, in_bytes, out_bytes, &size);
  if (st != SP_OK) return st;
  {
    int8_t* const base = pool->base;
    const int32_t K = shape->k, N = shape->n;
    for (m = 0; m < shape->m; ++m) {
      const int32_t in_pos = seg_pos(in_start, m * K, size);
      for (n0 = 0; n0 < N; n0 += chunk) {
        const int32_t cnt = SP_MIN(chunk, N - n0);
        SP_SEG_TR_READ(m * K, K);
        seg_row_s8(base, size, in_pos, K, n0, cnt, layer, workspace);
        seg_store(base, size, seg_pos(out_start, m * N + n0, size), workspace, cnt);
        SP_SEG_TR_WRITE(m * N + n0, cnt);
      }
    }
  }
  return SP_OK;
}

/* Conv-family shape check; fills the output dims and byte counts. */
static sp_status_t seg_conv_check(const sp_seg_pool_t* pool, int32_t in_start, int32_t out_start,
                                  const sp_seg_conv_shape_t* s, const sp_seg_layer_s8_t* layer,
                                  const int8_t* workspace, int32_t workspace_bytes, int32_t ws_need,
                                  int32_t* oh, int32_t* ow, int32_t* size) {
  int32_t in_bytes, out_bytes;
  if (s == 0 || !seg_layer_ok(layer) || s->r < 1 || s->s < 1 || s->r * s->s > SP_SEG_MAX_TAPS ||
      s->stride_h < 1 || s->stride_w < 1 || s->dilation_h < 1 || s->dilation_w < 1 ||
      s->pad_top < 0 || s->pad_left < 0 || s->pad_bottom < 0 || s->pad_right < 0)
    return SP_BAD_ARGUMENT;
  *oh = seg_out_dim(s->h, s->pad_top, s->pad_bottom, s->r, s->dilation_h, s->stride_h);
  *ow = seg_out_dim(s->w, s->pad_left, s->pad_right, s->s, s->dilation_w, s->stride_w);
  if (!seg_bytes_ok(s->h, s->w, s->c_in, &in_bytes) ||
      !seg_bytes_ok(*oh, *ow, s->c_out, &out_bytes) ||
      !seg_ws_ok(workspace, workspace_bytes, ws_need))
    return SP_BAD_ARGUMENT;
  return seg_pool_check(pool, in_start, out_start, in_bytes, out_bytes, size);
}

SP_SEG_LINKAGE sp_status_t SP_SEG_FN(sp_seg_pointwise_s8)(const sp_seg_pool_t* pool,
                                                          int32_t in_start, int32_t out_start,
                                                          const sp_seg_conv_shape_t* shape,
                                                          const sp_seg_layer_s8_t* layer,
                                                          int8_t* workspace,
                                                          int32_t workspace_bytes) {
  int32_t oh, ow, OH, OW, size;
  const sp_status_t st =
      seg_conv_check(pool, in_start, out_start, shape, layer, workspace, workspace_bytes,
                     shape ? SP_MIN(shape->c_in, shape->c_out) : 0, &OH, &OW, &size);
  if (st != SP_OK) return st;
  if (shape->r != 1 || shape->s != 1 || shape->pad_top || shape->pad_left || shape->pad_bottom ||
      shape->pad_right)
    return SP_BAD_ARGUMENT;
  {
    int8_t* const base = pool->base;
    const int32_t CI = shape->c_in, CO = shape->c_out;
    /* C_out <= C_in: the output pixel is computed into the workspace, then stored. C_in < C_out:
     * the input pixel is copied into the workspace, then the outputs go straight to the pool.
     * Either way every pool read of the pixel precedes its first pool write. */
    const int buffer_output = CO <= CI;
    const int32_t in_off = -layer->in_zp;
    const int8_t* const w = layer->weights;
    const int32_t* const bias = layer->bias;
    const sp_requant_t* const rq = layer->rq;
    const int32_t out_zp = layer->out_zp, act_min = layer->act_min, act_max = layer->act_max;
    for (oh = 0; oh < OH; ++oh) {
      const int32_t in_row = oh * shape->stride_h * shape->w;
      for (ow = 0; ow < OW; ++ow) {
        const int32_t ioff = (in_row + ow * shape->stride_w) * CI;
        const int32_t ooff = (oh * OW + ow) * CO;
        const int32_t ipos = seg_pos(in_start, ioff, size);
        const int32_t opos = seg_pos(out_start, ooff, size);
        SP_SEG_TR_READ(ioff, CI);
        if (buffer_output) {
          seg_row_s8(base, size, ipos, CI, 0, CO, layer, workspace);
          seg_store(base, size, opos, workspace, CO);
        } else {
          const int32_t n1 = SP_MIN(CI, size - ipos);
          const int32_t o1 = SP_MIN(CO, size - opos);
          memcpy(workspace, base + ipos, (size_t)n1);
          if (n1 < CI) memcpy(workspace + n1, base, (size_t)(CI - n1));
          seg_row_part(workspace, CI, workspace, 0, w, CI, bias, rq, in_off, out_zp, act_min,
                       act_max, base + opos, o1);
          if (o1 < CO) /* the output pixel wraps: the rest starts at the pool's beginning */
            seg_row_part(workspace, CI, workspace, 0, w + o1 * CI, CI, bias ? bias + o1 : 0,
                         rq + o1, in_off, out_zp, act_min, act_max, base, CO - o1);
        }
        SP_SEG_TR_WRITE(ooff, CO);
      }
    }
  }
  return SP_OK;
}

typedef struct {
  int32_t pos;  /* pool position of the tap's input pixel (or of its channel c0) */
  int32_t n1;   /* bytes before the pool end (the rest continues at the pool's beginning) */
  int32_t woff; /* weight offset of the tap */
  int32_t tr;   /* logical input offset (tracing) */
} seg_tap_t;

/* The taps of the window of output pixel (oh, ow) that fall inside the H x W input (padding skipped),
 * in row-major (r, s) order: logical input offset `tr` of the tap's pixel (C bytes per pixel) and
 * weight offset `woff` = (r*S + s)*C. Returns their number. */
static int32_t seg_window_taps(const sp_seg_conv_shape_t* shape, int32_t oh, int32_t ow, int32_t C,
                               seg_tap_t* taps) {
  const int32_t ih0 = oh * shape->stride_h - shape->pad_top;
  const int32_t iw0 = ow * shape->stride_w - shape->pad_left;
  int32_t r, s, ntap = 0;
  for (r = 0; r < shape->r; ++r) {
    const int32_t ih = ih0 + r * shape->dilation_h;
    if (ih < 0 || ih >= shape->h) continue;
    for (s = 0; s < shape->s; ++s) {
      const int32_t iw = iw0 + s * shape->dilation_w;
      if (iw < 0 || iw >= shape->w) continue;
      taps[ntap].tr = (ih * shape->w + iw) * C;
      taps[ntap].woff = (r * shape->s + s) * C;
      ++ntap;
    }
  }
  return ntap;
}

/* Workspace of sp_seg_conv_s8: C_out, or min(C_in, C_out) when it runs the pointwise loop. */
static int32_t seg_conv_ws_need(const sp_seg_conv_shape_t* s) {
  if (s == 0) return 0;
  if (s->r == 1 && s->s == 1 && !s->pad_top && !s->pad_left && !s->pad_bottom && !s->pad_right)
    return SP_MIN(s->c_in, s->c_out);
  return s->c_out;
}

#ifndef SP_SEG_TRACING
int32_t sp_seg_conv_workspace_bytes(const sp_seg_conv_shape_t* shape) {
  const int32_t need = seg_conv_ws_need(shape);
  return need < 1 ? 0 : need;
}

int32_t sp_seg_depthwise_workspace_bytes(const sp_seg_conv_shape_t* shape) {
  return shape == 0 || shape->c_out < 1 ? 0 : shape->c_out;
}
#endif

SP_SEG_LINKAGE sp_status_t SP_SEG_FN(sp_seg_conv_s8)(const sp_seg_pool_t* pool, int32_t in_start,
                                                     int32_t out_start,
                                                     const sp_seg_conv_shape_t* shape,
                                                     const sp_seg_layer_s8_t* layer,
                                                     int8_t* workspace, int32_t workspace_bytes) {
  seg_tap_t taps[SP_SEG_MAX_TAPS];
  int32_t oh, ow, OH, OW, size, t, k, ntap;
  int8_t* const base = pool ? pool->base : 0;
  const sp_status_t st = seg_conv_check(pool, in_start, out_start, shape, layer, workspace,
                                        workspace_bytes, seg_conv_ws_need(shape), &OH, &OW, &size);
  if (st != SP_OK) return st;
  if (shape->r == 1 && shape->s == 1 && !shape->pad_top && !shape->pad_left && !shape->pad_bottom &&
      !shape->pad_right)
    return SP_SEG_FN(sp_seg_pointwise_s8)(pool, in_start, out_start, shape, layer, workspace,
                                          workspace_bytes);
  {
    const int32_t C = shape->c_in, K = shape->c_out;
    const int32_t wk_stride = shape->r * shape->s * C;
    const int32_t in_off = -layer->in_zp;
    const int8_t* const w = layer->weights;
    const int32_t* const bias = layer->bias;
    const sp_requant_t* const rq = layer->rq;
    const int32_t out_zp = layer->out_zp, act_min = layer->act_min, act_max = layer->act_max;
    for (oh = 0; oh < OH; ++oh) {
      for (ow = 0; ow < OW; ++ow) {
        const int32_t out_off = (oh * OW + ow) * K;
        ntap = seg_window_taps(shape, oh, ow, C, taps);
        for (t = 0; t < ntap; ++t) {
          taps[t].pos = seg_pos(in_start, taps[t].tr, size);
          taps[t].n1 = SP_MIN(C, size - taps[t].pos);
          SP_SEG_TR_READ(taps[t].tr, C);
        }
        /* The whole output pixel into the workspace, then one store. */
        for (k = 0; k < K; ++k) {
          const int8_t* wk = w + k * wk_stride;
          int32_t acc = 0;
          for (t = 0; t < ntap; ++t) {
            const int8_t* wt = wk + taps[t].woff;
            const int32_t n1 = taps[t].n1;
            acc += seg_dot(base + taps[t].pos, wt, n1, in_off);
            if (n1 < C) acc += seg_dot(base, wt + n1, C - n1, in_off);
          }
          if (bias) acc += bias[k];
          workspace[k] = seg_requant(acc, &rq[k], out_zp, act_min, act_max);
        }
        seg_store(base, size, seg_pos(out_start, out_off, size), workspace, K);
        SP_SEG_TR_WRITE(out_off, K);
      }
    }
  }
  return SP_OK;
}

SP_SEG_LINKAGE sp_status_t SP_SEG_FN(sp_seg_depthwise_s8)(const sp_seg_pool_t* pool,
                                                          int32_t in_start, int32_t out_start,
                                                          const sp_seg_conv_shape_t* shape,
                                                          const sp_seg_layer_s8_t* layer,
                                                          int8_t* workspace,
                                                          int32_t workspace_bytes) {
  seg_tap_t taps[SP_SEG_MAX_TAPS];
  int32_t acc[SP_SEG_DW_CHUNK];
  int32_t oh, ow, OH, OW, size, t, i, c0, ntap;
  int8_t* const base = pool ? pool->base : 0;
  const sp_status_t st = seg_conv_check(pool, in_start, out_start, shape, layer, workspace,
                                        workspace_bytes, shape ? shape->c_out : 0, &OH, &OW,
                                        &size);
  if (st != SP_OK) return st;
  if (shape->c_out != shape->c_in) return SP_BAD_ARGUMENT;
  {
    const int32_t C = shape->c_in;
    const int32_t in_off = -layer->in_zp;
    const int8_t* const w = layer->weights;
    const int32_t* const bias = layer->bias;
    const sp_requant_t* const rq = layer->rq;
    const int32_t out_zp = layer->out_zp, act_min = layer->act_min, act_max = layer->act_max;
    for (oh = 0; oh < OH; ++oh) {
      for (ow = 0; ow < OW; ++ow) {
        const int32_t out_off = (oh * OW + ow) * C;
        ntap = seg_window_taps(shape, oh, ow, C, taps);
        /* Channel chunks accumulate in registers / stack; results go to the workspace; the
         * pixel is stored once, after every read of its window. */
        for (c0 = 0; c0 < C; c0 += SP_SEG_DW_CHUNK) {
          const int32_t n = SP_MIN(SP_SEG_DW_CHUNK, C - c0);
          for (i = 0; i < n; ++i) acc[i] = 0;
          for (t = 0; t < ntap; ++t) {
            const int8_t* wt = w + taps[t].woff + c0;
            const int32_t pos = seg_pos(in_start, taps[t].tr + c0, size);
            const int32_t n1 = SP_MIN(n, size - pos);
            const int8_t* x = base + pos;
            SP_SEG_TR_READ(taps[t].tr + c0, n);
            for (i = 0; i < n1; ++i) acc[i] += ((int32_t)x[i] + in_off) * (int32_t)wt[i];
            for (; i < n; ++i) acc[i] += ((int32_t)base[i - n1] + in_off) * (int32_t)wt[i];
          }
          if (bias) {
            for (i = 0; i < n; ++i) acc[i] += bias[c0 + i];
          }
          for (i = 0; i < n; ++i)
            workspace[c0 + i] = seg_requant(acc[i], &rq[c0 + i], out_zp, act_min, act_max);
        }
        seg_store(base, size, seg_pos(out_start, out_off, size), workspace, C);
        SP_SEG_TR_WRITE(out_off, C);
      }
    }
  }
  return SP_OK;
}

/* ---- Fused inverted bottleneck ------------------------------------------------------------ */

/* Expands one input pixel (C_in bytes at pool position pos) into slot (C_mid bytes). */
static void seg_expand_pixel(const int8_t* base, int32_t size, int32_t pos, int32_t cin,
                             const sp_seg_layer_s8_t* ex, int32_t cmid, int8_t* slot) {
  const int8_t* x1 = base + pos;
  const int32_t n1 = SP_MIN(cin, size - pos);
  const int32_t n2 = cin - n1;
  int32_t m;
  if (ex == 0) { /* no expansion: the pixel itself */
    memcpy(slot, x1, (size_t)n1);
    if (n2) memcpy(slot + n1, base, (size_t)n2);
    return;
  }
  {
    const int32_t in_off = -ex->in_zp;
    const int8_t* const w = ex->weights;
    const int32_t* const bias = ex->bias;
    const sp_requant_t* const rq = ex->rq;
    const int32_t out_zp = ex->out_zp, act_min = ex->act_min, act_max = ex->act_max;
    if (n2 == 0) {
      seg_dense_out(x1, cin, w, bias, rq, in_off, out_zp, act_min, act_max, slot, cmid);
      return;
    }
    for (m = 0; m < cmid; ++m) {
      const int8_t* wm = w + m * cin;
      int32_t acc = seg_dot(x1, wm, n1, in_off);
      if (n2) acc += seg_dot(base, wm + n1, n2, in_off);
      if (bias) acc += bias[m];
      slot[m] = seg_requant(acc, &rq[m], out_zp, act_min, act_max);
    }
  }
}

/* 1 if the Conv2D expansion's window (R*S*C_in bytes) is gathered into a stack column. */
static int seg_col_ok(const seg_bn_geom_t* g, int32_t cin, const sp_seg_layer_s8_t* ex) {
  return g->er * g->es * cin <= SEG_COL_MAX && ex->in_zp >= -128 && ex->in_zp <= 127;
}

/* The window of plane pixel (mh, mw) as one contiguous column of R*S*C_in bytes, padding taps as
 * the input zero point (they add 0); reads its input pixels from the pool. */
static void seg_gather_col(const int8_t* base, int32_t size, int32_t in_start, int32_t H, int32_t W,
                           int32_t cin, const seg_bn_geom_t* g, int32_t mh, int32_t mw,
                           const sp_seg_layer_s8_t* ex, int8_t* col) {
  const int32_t ih0 = mh * g->sh - g->pt, iw0 = mw * g->sw - g->pl;
  int32_t a, b, m;
  for (a = 0; a < g->er; ++a) {
    const int32_t ih = ih0 + a;
    for (b = 0; b < g->es; ++b) {
      const int32_t iw = iw0 + b;
      int8_t* dst = col + (a * g->es + b) * cin;
      int32_t off, pos, n1;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
        for (m = 0; m < cin; ++m) dst[m] = (int8_t)ex->in_zp;
        continue;
      }
      off = (ih * W + iw) * cin;
      SP_SEG_TR_READ(off, cin);
      pos = seg_pos(in_start, off, size);
      n1 = SP_MIN(cin, size - pos);
      for (m = 0; m < n1; ++m) dst[m] = base[pos + m];
      for (; m < cin; ++m) dst[m] = base[m - n1];
    }
  }
}

/* Expands plane pixel (mh, mw) with a Conv2D expansion into slot (C_mid bytes): reads the input
 * pixels of its window (taps in row-major order, padding skipped), then computes the C_mid outputs.
 * col: the workspace's column scratch (seg_bn_col_bytes), used when seg_col_ok. */
static void seg_expand_conv(const int8_t* base, int32_t size, int32_t in_start, int32_t H, int32_t W,
                            int32_t cin, const seg_bn_geom_t* g, int32_t mh, int32_t mw,
                            const sp_seg_layer_s8_t* ex, int32_t cmid, int8_t* slot, int8_t* col) {
  const int32_t ih0 = mh * g->sh - g->pt, iw0 = mw * g->sw - g->pl;
  const int32_t in_off = -ex->in_zp, wstride = g->er * g->es * cin;
  const int8_t* const w = ex->weights;
  const int32_t* const bias = ex->bias;
  const sp_requant_t* const rq = ex->rq;
  const int32_t out_zp = ex->out_zp, act_min = ex->act_min, act_max = ex->act_max;
  const int32_t a_lo = SP_MAX(0, -ih0), a_hi = SP_MIN(g->er, H - ih0);
  const int32_t b_lo = SP_MAX(0, -iw0), b_hi = SP_MIN(g->es, W - iw0);
  int32_t a, b, m;
  if (seg_col_ok(g, cin, ex)) {
    /* Small window (the stem's 3x3x3): gathered into one contiguous column, padding taps as the
     * input zero point (they add 0), then four outputs at a time over the whole column. */
    seg_gather_col(base, size, in_start, H, W, cin, g, mh, mw, ex, col);
    seg_dense_out(col, wstride, w, bias, rq, in_off, out_zp, act_min, act_max, slot, cmid);
    return;
  }
  /* A larger window: per output channel, the taps inside the input (no tap table: the window
   * geometry is recomputed per channel, which the dot product of C_in bytes dominates). */
  for (a = a_lo; a < a_hi; ++a)
    for (b = b_lo; b < b_hi; ++b) SP_SEG_TR_READ(((ih0 + a) * W + iw0 + b) * cin, cin);
  for (m = 0; m < cmid; ++m) {
    const int8_t* wm = w + m * wstride;
    int32_t acc = bias ? bias[m] : 0;
    for (a = a_lo; a < a_hi; ++a)
      for (b = b_lo; b < b_hi; ++b) {
        const int32_t pos = seg_pos(in_start, ((ih0 + a) * W + iw0 + b) * cin, size);
        const int32_t n1 = SP_MIN(cin, size - pos);
        const int8_t* const wt = wm + (a * g->es + b) * cin;
        acc += seg_dot(base + pos, wt, n1, in_off);
        if (n1 < cin) acc += seg_dot(base, wt + n1, cin - n1, in_off);
      }
    slot[m] = seg_requant(acc, &rq[m], out_zp, act_min, act_max);
  }
}

/* Column cache: expands the window column iw of plane rows [ih0, ih0 + R) (those inside the
 * plane) into the slots col0 + r * S * C_mid. Pointwise expansion: the pixels that do not wrap the
 * pool, output channel pairs outer and pixel pairs inner (2x2 blocking, each channel pair's
 * constants set up once per column); small pixels are first copied next to each other into the
 * workspace's column scratch `col` (pixel stride = weight row stride: the register-blocked loop). The Conv2D expansion with a
 * small window (the stem): pixel pairs, their windows gathered one window length apart, 2x2
 * blocking. The rest one pixel at a time. Reads the input pixels from the pool only. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void seg_bn_expand_column(const int8_t* base, int32_t size, int32_t in_start,
                                 const sp_seg_bottleneck_shape_t* shape, const seg_bn_geom_t* eg,
                                 const sp_seg_layer_s8_t* ex, int32_t cmid, int32_t ih0,
                                 int32_t iw, int8_t* col0, int8_t* col) {
  const int32_t H = eg->mh, W = eg->mw, R = shape->r, CI = shape->c_in;
  const int32_t dps = shape->s * cmid; /* slot stride between window rows */
  int32_t r = ih0 < 0 ? -ih0 : 0;
  const int32_t r_end = SP_MIN(R, H - ih0);
  while (r < r_end) {
    const int32_t ih = ih0 + r;
    int8_t* const slot = col0 + r * dps;
    if (eg->pointwise && ex != 0) {
      const int32_t xs = W * CI, off0 = (ih * W + iw) * CI;
      const int32_t p0 = seg_pos(in_start, off0, size);
      const int32_t fit = size - p0 - CI; /* >= 0: the first pixel does not wrap */
      const int32_t run = fit < 0 ? 0 : SP_MIN(r_end - r, fit / xs + 1);
      int32_t j, i;
      /* Fewer than four pixels (a 3x3 window's column): one at a time, which measured faster than
       * a pixel pair (the pair's per-channel-pair set-up is not paid back; B3 51.5 vs 53.3 M). */
      if (run < 4) {
        SP_SEG_TR_READ(off0, CI);
        seg_expand_pixel(base, size, p0, CI, ex, cmid, slot);
        ++r;
        continue;
      }
      for (j = 0; j < run; ++j) SP_SEG_TR_READ(off0 + j * xs, CI);
      {
        const int8_t* px = base + p0;
        int32_t pxs = xs;
        if ((CI & 3) == 0 && run * CI <= SEG_COL2_MAX) {
          for (j = 0; j < run; ++j)
            for (i = 0; i < CI; i += 4) sp_st32(col + j * CI + i, sp_ld32u(base + p0 + j * xs + i));
          px = col;
          pxs = CI;
        }
        sp_dense_pixels(px, pxs, run, CI, ex->weights, CI, ex->bias, ex->rq, -ex->in_zp, ex->out_zp,
                        ex->act_min, ex->act_max, slot, dps, 1, cmid);
      }
      r += run;
      continue;
    }
    if (!eg->pointwise && r + 2 <= r_end && seg_col_ok(eg, CI, ex)) {
      const int32_t wstride = eg->er * eg->es * CI;
      seg_gather_col(base, size, in_start, shape->h, shape->w, CI, eg, ih, iw, ex, col);
      seg_gather_col(base, size, in_start, shape->h, shape->w, CI, eg, ih + 1, iw, ex,
                     col + wstride);
      sp_dense_out2(col, col + wstride, wstride, ex->weights, wstride, ex->bias, ex->rq,
                    -ex->in_zp, ex->out_zp, ex->act_min, ex->act_max, slot, slot + dps, 1, cmid);
      r += 2;
      continue;
    }
    if (!eg->pointwise) {
      seg_expand_conv(base, size, in_start, shape->h, shape->w, CI, eg, ih, iw, ex, cmid, slot, col);
    } else {
      const int32_t off = (ih * W + iw) * CI;
      SP_SEG_TR_READ(off, CI);
      seg_expand_pixel(base, size, seg_pos(in_start, off, size), CI, ex, cmid, slot);
    }
    ++r;
  }
}

SP_SEG_LINKAGE sp_status_t SP_SEG_FN(sp_seg_bottleneck_s8)(const sp_seg_pool_t* pool,
                                                           int32_t in_start, int32_t out_start,
                                                           const sp_seg_bottleneck_shape_t* shape,
                                                           const sp_seg_bottleneck_s8_t* params,
                                                           int8_t* workspace,
                                                           int32_t workspace_bytes) {
  seg_bn_geom_t eg;
  int32_t OH, OW, size, in_bytes, out_bytes, cmid, ws, oh, ow, r, s, t, c, k;
  const sp_seg_layer_s8_t* ex;
  sp_status_t st;
  if (shape == 0 || params == 0 || workspace == 0) return SP_BAD_ARGUMENT;
  if (!seg_bn_geom(shape, &eg)) return SP_BAD_ARGUMENT;
  if (shape->r < 1 || shape->s < 1 || shape->r * shape->s > SP_SEG_MAX_TAPS ||
      shape->stride_h < 1 || shape->stride_w < 1 || shape->pad_top < 0 || shape->pad_left < 0 ||
      shape->pad_bottom < 0 || shape->pad_right < 0)
    return SP_BAD_ARGUMENT;
  if (!seg_layer_ok(&params->depthwise) || !seg_layer_ok(&params->project) ||
      (shape->has_expand && !seg_layer_ok(&params->expand)))
    return SP_BAD_ARGUMENT;
  cmid = shape->has_expand ? shape->c_mid : shape->c_in;
  if (!shape->has_expand && shape->c_mid != shape->c_in) return SP_BAD_ARGUMENT;
  OH = seg_out_dim(eg.mh, shape->pad_top, shape->pad_bottom, shape->r, 1, shape->stride_h);
  OW = seg_out_dim(eg.mw, shape->pad_left, shape->pad_right, shape->s, 1, shape->stride_w);
  if (!seg_bytes_ok(shape->h, shape->w, shape->c_in, &in_bytes) ||
      !seg_bytes_ok(OH, OW, shape->c_out, &out_bytes) || cmid < 1 ||
      cmid > ((int32_t)1 << 24) / (shape->r * shape->s + 1))
    return SP_BAD_ARGUMENT;
  if ((params->residual != 0) != (shape->has_residual != 0)) return SP_BAD_ARGUMENT;
  if (shape->has_residual) {
    const sp_add_s8_params_t* p = params->residual;
    if (!eg.pointwise || shape->c_in != shape->c_out || OH != shape->h || OW != shape->w ||
        p->left_shift < 0 ||
        p->left_shift > 22 || p->act_min < -128 || p->act_max > 127 || p->act_min > p->act_max)
      return SP_BAD_ARGUMENT;
  }
  if (shape->row_cache && (eg.mw > ((int32_t)1 << 26) / shape->r ||
                           shape->r * eg.mw > ((int32_t)1 << 28) / cmid))
    return SP_BAD_ARGUMENT;
  ws = seg_bn_cache_bytes(shape); /* the caches; the scratch follows them */
  if (ws < 1 || workspace_bytes < ws || workspace_bytes - ws < seg_bn_scratch_bytes(shape, &eg))
    return SP_BAD_ARGUMENT;
  st = seg_pool_check(pool, in_start, out_start, in_bytes, out_bytes, &size);
  if (st != SP_OK) return st;
  ex = shape->has_expand ? &params->expand : 0;
  {
    int8_t* const base = pool->base;
    const int32_t H = eg.mh, W = eg.mw, R = shape->r, S = shape->s; /* the expanded plane */
    const int32_t CI = shape->c_in, CO = shape->c_out;
    /* Column cache: R*S slots of C_mid, slot r*S + iw%S. Row cache: R rows of W slots, slot
     * (ih%R)*W + iw. */
    const int rows = shape->row_cache != 0;
    int8_t* const wsB = workspace;
    int8_t* const wsC = workspace + (rows ? R * W : R * S) * cmid; /* depthwise result, C_mid */
    int8_t* const wsD = wsC + cmid;               /* projected pixel, C_out (residual only) */
    /* The scratch (seg_bn_scratch_bytes): the word-aligned depthwise tap table (per tap: workspace
     * offset, weight offset), then the expansion's columns. */
    int32_t* const tp = (int32_t*)(void*)(workspace + ws + ((0u - (uint32_t)(uintptr_t)(workspace + ws)) & 3u));
    int8_t* const col = (int8_t*)(tp + 2 * R * S);
    /* Layer fields in locals (stores through int8_t pointers could alias *params). */
    const int8_t* const dw_w = params->depthwise.weights;
    const int32_t* const dw_bias = params->depthwise.bias;
    const sp_requant_t* const dw_rq = params->depthwise.rq;
    const int32_t dw_in_off = -params->depthwise.in_zp, dw_zp = params->depthwise.out_zp;
    const int32_t dw_min = params->depthwise.act_min, dw_max = params->depthwise.act_max;
    const int dw_fast_full = dw_min == -128 && dw_max == 127 && sp_rq_all_fast(dw_rq, cmid, dw_zp);
    const int8_t* const pj_w = params->project.weights;
    const int32_t* const pj_bias = params->project.bias;
    const sp_requant_t* const pj_rq = params->project.rq;
    const int32_t pj_in_off = -params->project.in_zp, pj_zp = params->project.out_zp;
    const int32_t pj_min = params->project.act_min, pj_max = params->project.act_max;
    sp_addc_t ap; /* the residual Add, its requantisations prepared once */
    if (shape->has_residual)
      sp_addc_init(params->residual, &ap);
    else
      memset(&ap, 0, sizeof(ap));
    int32_t next_row = 0; /* row cache: the first plane row not expanded yet */
/* Expands plane pixel (ih, iw) into slot (reads its input pixels from the pool). */
#define SEG_BN_EXPAND(ih, iw, slot)                                                              \
  do {                                                                                           \
    if (!eg.pointwise) {                                                                         \
      seg_expand_conv(base, size, in_start, shape->h, shape->w, CI, &eg, (ih), (iw), ex, cmid,  \
                      (slot), col);                                                              \
    } else {                                                                                     \
      const int32_t off_ = ((ih) * W + (iw)) * CI;                                               \
      SP_SEG_TR_READ(off_, CI);                                                                  \
      seg_expand_pixel(base, size, seg_pos(in_start, off_, size), CI, ex, cmid, (slot));         \
    }                                                                                            \
  } while (0)
    for (oh = 0; oh < OH; ++oh) {
      const int32_t ih0 = oh * shape->stride_h - shape->pad_top;
      int32_t cached_lo = 0, cached_hi = 0; /* columns [lo, hi) of the cache are valid */
      if (rows) {
        /* 0. Row cache: expand the window rows not expanded yet, each plane pixel exactly once
         * (row ih replaces row ih - R, which no later output row needs). */
        const int32_t last = SP_MIN(ih0 + R - 1, H - 1);
        int32_t ih = SP_MAX(next_row, SP_MAX(ih0, 0)), iw;
        for (; ih <= last; ++ih) {
          int8_t* const slots = wsB + (ih % R) * W * cmid;
          iw = 0;
          while (iw < W) {
            /* Pointwise expansion: the run of pixels that does not wrap the pool at once (output
             * channel pairs outer, pixel pairs inner); a pixel that wraps, or a Conv2D expansion,
             * one by one. */
            const int32_t off0 = (ih * W + iw) * CI;
            const int32_t p0 = seg_pos(in_start, off0, size);
            const int32_t run = eg.pointwise && ex != 0 ? SP_MIN(W - iw, (size - p0) / CI) : 0;
            int32_t j;
            if (run < 2) {
              if (!eg.pointwise && iw + 2 <= W && seg_col_ok(&eg, CI, ex)) {
                /* Conv2D expansion (the stem): two pixels' windows in one buffer, the second one
                 * window length after the first (the weight row stride), 2x2 blocking. */
                const int32_t wstride = eg.er * eg.es * CI;
                seg_gather_col(base, size, in_start, shape->h, shape->w, CI, &eg, ih, iw, ex, col);
                seg_gather_col(base, size, in_start, shape->h, shape->w, CI, &eg, ih, iw + 1, ex,
                               col + wstride);
                sp_dense_out2(col, col + wstride, wstride, ex->weights, wstride, ex->bias, ex->rq,
                              -ex->in_zp, ex->out_zp, ex->act_min, ex->act_max, slots + iw * cmid,
                              slots + (iw + 1) * cmid, 1, cmid);
                iw += 2;
                continue;
              }
              SEG_BN_EXPAND(ih, iw, slots + iw * cmid);
              ++iw;
              continue;
            }
            for (j = 0; j < run; ++j) SP_SEG_TR_READ(off0 + j * CI, CI);
            sp_dense_pixels(base + p0, CI, run, CI, ex->weights, CI, ex->bias, ex->rq, -ex->in_zp,
                            ex->out_zp, ex->act_min, ex->act_max, slots + iw * cmid, cmid, 1, cmid);
            iw += run;
          }
        }
        if (last + 1 > next_row) next_row = last + 1;
      }
      for (ow = 0; ow < OW; ++ow) {
        const int32_t iw0 = ow * shape->stride_w - shape->pad_left;
        const int32_t out_off = (oh * OW + ow) * CO;
        int32_t ntap = 0;
        /* 1. Column cache: load + expand the window columns that are not cached yet. */
        for (s = 0; s < S && !rows; ++s) {
          const int32_t iw = iw0 + s;
          if (iw < 0 || iw >= W || (iw >= cached_lo && iw < cached_hi)) continue;
          seg_bn_expand_column(base, size, in_start, shape, &eg, ex, cmid, ih0, iw,
                               wsB + (iw % S) * cmid, col);
        }
        cached_lo = iw0;
        cached_hi = iw0 + S;
        /* 2. Depthwise on the workspace (padding taps skipped). */
        {
          const int32_t s_lo = iw0 < 0 ? -iw0 : 0, s_hi = SP_MIN(S, W - iw0);
          const int32_t cm = rows ? 0 : (iw0 + s_lo) % S; /* column cache: (iw0 + s_lo) % S */
          for (r = 0; r < R; ++r) {
            const int32_t ih = ih0 + r;
            int32_t slot0; /* slot of tap s = 0 (row cache) / of the window row (column cache) */
            if (ih < 0 || ih >= H) continue;
            slot0 = rows ? (ih % R) * W + iw0 : r * S;
            for (s = s_lo; s < s_hi; ++s) {
              int32_t cs = cm + (s - s_lo); /* column cache: slot r*S + (iw0 + s) % S */
              if (cs >= S) cs -= S;
              tp[2 * ntap] = (rows ? slot0 + s : slot0 + cs) * cmid;
              tp[2 * ntap + 1] = (r * S + s) * cmid;
              ++ntap;
            }
          }
        }
        /* Four channels at a time over all taps (accumulators in registers). */
        for (c = 0; c + 4 <= cmid; c += 4) {
          int32_t a4[4] = {0, 0, 0, 0};
          if (dw_bias) {
            a4[0] = dw_bias[c];
            a4[1] = dw_bias[c + 1];
            a4[2] = dw_bias[c + 2];
            a4[3] = dw_bias[c + 3];
          }
          sp_dw4p_s8(wsB + c, dw_w + c, tp, ntap, dw_in_off, a4);
          if (dw_fast_full) {
            wsC[c] = sp_rqf_out_full(a4[0], &dw_rq[c], dw_zp);
            wsC[c + 1] = sp_rqf_out_full(a4[1], &dw_rq[c + 1], dw_zp);
            wsC[c + 2] = sp_rqf_out_full(a4[2], &dw_rq[c + 2], dw_zp);
            wsC[c + 3] = sp_rqf_out_full(a4[3], &dw_rq[c + 3], dw_zp);
          } else {
            sp_rq4_store(a4, &dw_rq[c], dw_zp, dw_min, dw_max, wsC + c);
          }
        }
        for (; c < cmid; ++c) {
          int32_t a = dw_bias ? dw_bias[c] : 0;
          for (t = 0; t < ntap; ++t)
            a += ((int32_t)wsB[tp[2 * t] + c] + dw_in_off) * (int32_t)dw_w[tp[2 * t + 1] + c];
          wsC[c] = seg_requant(a, &dw_rq[c], dw_zp, dw_min, dw_max);
        }
        /* 3. Project; 4. store (with the residual add). */
        {
          const int32_t opos = seg_pos(out_start, out_off, size);
          const int32_t on1 = SP_MIN(CO, size - opos);
          if (!shape->has_residual) {
            int8_t* dst = base + opos;
            int32_t kb = 0, kend = on1;
            k = 0;
            if (on1 == CO) { /* the output pixel does not wrap */
              seg_dense_out(wsC, cmid, pj_w, pj_bias, pj_rq, pj_in_off, pj_zp, pj_min, pj_max, dst, CO);
              SP_SEG_TR_WRITE(out_off, CO);
              k = CO;
            }
            while (k < CO) {
              for (; k < kend; ++k) {
                int32_t acc = seg_dot(wsC, pj_w + k * cmid, cmid, pj_in_off);
                if (pj_bias) acc += pj_bias[k];
                dst[k - kb] = seg_requant(acc, &pj_rq[k], pj_zp, pj_min, pj_max);
                SP_SEG_TR_WRITE(out_off + k, 1);
              }
              if (k >= CO) break;
              dst = base;
              kb = k;
              kend = CO;
            }
          } else {
            const int32_t in_off = (oh * W + ow) * CI; /* the residual pixel (stride 1) */
            int32_t ipos = seg_pos(in_start, in_off, size);
            int32_t o = opos;
            seg_dense_out(wsC, cmid, pj_w, pj_bias, pj_rq, pj_in_off, pj_zp, pj_min, pj_max, wsD, CO);
            /* Runs that wrap neither in the input nor in the output pixel (at most 3). */
            k = 0;
            while (k < CO) {
              const int32_t len = SP_MIN(CO - k, SP_MIN(size - ipos, size - o));
              const int8_t* a = base + ipos;
              int8_t* e = base + o;
              int32_t i;
              for (i = 0; i < len; ++i) {
                SP_SEG_TR_READ(in_off + k + i, 1);
                e[i] = sp_addc(a[i], wsD[k + i], &ap);
                SP_SEG_TR_WRITE(out_off + k + i, 1);
              }
              k += len;
              ipos += len;
              if (ipos >= size) ipos -= size;
              o += len;
              if (o >= size) o -= size;
            }
          }
        }
      }
    }
  }
  return SP_OK;
}
