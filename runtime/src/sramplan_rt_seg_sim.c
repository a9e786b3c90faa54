/* sramplan runtime, HOST ONLY: minimal safe shifts of the segment-aware kernels.
 *
 * This file compiles the kernels of sramplan_rt_seg_s8.c a second time with access tracing (see
 * that file), runs them once on zero data with the output outside the input, and derives from the
 * trace which shifts are safe. So the result is the kernels' own access order, not a model of it.
 * Uses the heap; never part of the MCU sources. Not thread-safe (one global trace). */
#include <stdlib.h>
#include <string.h>

#include "sramplan_rt_seg.h"

typedef struct {
  int32_t* last_read;  /* per input byte: time of its last read, -1 if never read */
  int32_t* write_time; /* per output byte: time of its write, -1 if not written */
  int32_t in_bytes;
  int32_t out_bytes;
  int32_t now;
  int error; /* out-of-range access, an output byte written twice or time overflow */
} seg_trace_t;

static seg_trace_t* g_seg_trace = 0;

static void seg_trace_read(int32_t off, int32_t n) {
  seg_trace_t* t = g_seg_trace;
  int32_t i;
  if (t == 0) return;
  if (off < 0 || n < 0 || off > t->in_bytes - n || t->now == INT32_MAX) {
    t->error = 1;
    return;
  }
  for (i = 0; i < n; ++i) t->last_read[off + i] = t->now;
  ++t->now;
}

static void seg_trace_write(int32_t off, int32_t n) {
  seg_trace_t* t = g_seg_trace;
  int32_t i;
  if (t == 0) return;
  if (off < 0 || n < 0 || off > t->out_bytes - n || t->now == INT32_MAX) {
    t->error = 1;
    return;
  }
  for (i = 0; i < n; ++i) {
    if (t->write_time[off + i] != -1) t->error = 1;
    t->write_time[off + i] = t->now;
  }
  ++t->now;
}

#define SP_SEG_TRACING 1
#define SP_SEG_TR_READ(off, n) seg_trace_read((off), (n))
#define SP_SEG_TR_WRITE(off, n) seg_trace_write((off), (n))
#define SP_SEG_FN(name) name##_traced
#define SP_SEG_LINKAGE static
#include "sramplan_rt_seg_s8.c"

int32_t sp_seg_shift_segments(int32_t shift_bytes, int32_t segment_bytes) {
  if (segment_bytes < 1 || shift_bytes <= 0) return 0;
  return (shift_bytes + segment_bytes - 1) / segment_bytes;
}

/* Tensor sizes of a layer; 0 on a bad shape. */
static int seg_sim_sizes(const sp_seg_layer_desc_t* l, int32_t* in_bytes, int32_t* out_bytes) {
  switch (l->kind) {
    case SP_SEG_KIND_FC:
      return seg_bytes_ok(l->fc.m, l->fc.k, 1, in_bytes) &&
             seg_bytes_ok(l->fc.m, l->fc.n, 1, out_bytes);
    case SP_SEG_KIND_POINTWISE:
    case SP_SEG_KIND_CONV:
    case SP_SEG_KIND_DEPTHWISE:
      return seg_bytes_ok(l->conv.h, l->conv.w, l->conv.c_in, in_bytes) &&
             seg_bytes_ok(sp_seg_conv_out_h(&l->conv), sp_seg_conv_out_w(&l->conv), l->conv.c_out,
                          out_bytes);
    case SP_SEG_KIND_BOTTLENECK:
      return seg_bytes_ok(l->bottleneck.h, l->bottleneck.w, l->bottleneck.c_in, in_bytes) &&
             seg_bytes_ok(sp_seg_bottleneck_out_h(&l->bottleneck),
                          sp_seg_bottleneck_out_w(&l->bottleneck), l->bottleneck.c_out, out_bytes);
  }
  return 0;
}

/* Runs the traced kernel on zeros; fills t (caller frees). */
static sp_status_t seg_sim_trace(const sp_seg_layer_desc_t* l, seg_trace_t* t) {
  int32_t in_bytes, out_bytes, i, wbytes = 0, nch = 0, ws = 0;
  int8_t *pool_mem = 0, *weights = 0, *work = 0;
  sp_requant_t* rq = 0;
  sp_seg_pool_t pool;
  sp_seg_layer_s8_t layer;
  sp_status_t st = SP_BAD_ARGUMENT;
  memset(t, 0, sizeof(*t));
  if (l == 0 || !seg_sim_sizes(l, &in_bytes, &out_bytes)) return SP_BAD_ARGUMENT;
  if (in_bytes > ((int32_t)1 << 29) || out_bytes > ((int32_t)1 << 29)) return SP_BAD_ARGUMENT;
  switch (l->kind) {
    case SP_SEG_KIND_FC:
      wbytes = l->fc.n * l->fc.k;
      nch = l->fc.n;
      ws = l->fc.chunk < 0 ? 0 : sp_seg_fc_workspace_bytes(&l->fc);
      break;
    case SP_SEG_KIND_POINTWISE:
    case SP_SEG_KIND_CONV:
    case SP_SEG_KIND_DEPTHWISE:
      if (l->conv.r < 1 || l->conv.s < 1 || l->conv.r * l->conv.s > SP_SEG_MAX_TAPS)
        return SP_BAD_ARGUMENT;
      wbytes = l->conv.c_out * l->conv.r * l->conv.s * l->conv.c_in;
      nch = l->conv.c_out;
      ws = l->conv.c_out > 0 ? l->conv.c_out : 0;
      break;
    case SP_SEG_KIND_BOTTLENECK: {
      const sp_seg_bottleneck_shape_t* b = &l->bottleneck;
      const int32_t cm = b->has_expand ? b->c_mid : b->c_in;
      if (b->r < 1 || b->s < 1 || b->r * b->s > SP_SEG_MAX_TAPS || cm < 1) return SP_BAD_ARGUMENT;
      const int32_t etaps = b->has_expand && b->e_r > 0 ? b->e_r * SP_MAX(b->e_s, 1) : 1;
      if (etaps > SP_SEG_MAX_TAPS) return SP_BAD_ARGUMENT;
      wbytes = SP_MAX(cm * etaps * b->c_in, SP_MAX(b->r * b->s * cm, b->c_out * cm));
      nch = SP_MAX(cm, b->c_out);
      ws = sp_seg_bottleneck_workspace_bytes(b);
      break;
    }
  }
  pool_mem = (int8_t*)calloc((size_t)in_bytes + (size_t)out_bytes, 1);
  weights = (int8_t*)calloc((size_t)wbytes + 1, 1);
  rq = (sp_requant_t*)calloc((size_t)nch + 1, sizeof(sp_requant_t));
  work = (int8_t*)calloc((size_t)ws + 1, 1);
  t->last_read = (int32_t*)malloc(sizeof(int32_t) * ((size_t)in_bytes + 1));
  t->write_time = (int32_t*)malloc(sizeof(int32_t) * ((size_t)out_bytes + 1));
  if (!pool_mem || !weights || !rq || !work || !t->last_read || !t->write_time) goto done;
  for (i = 0; i < in_bytes; ++i) t->last_read[i] = -1;
  for (i = 0; i < out_bytes; ++i) t->write_time[i] = -1;
  t->in_bytes = in_bytes;
  t->out_bytes = out_bytes;
  pool.base = pool_mem;
  pool.pool_segments = in_bytes + out_bytes;
  pool.segment_bytes = 1;
  layer.weights = weights;
  layer.bias = 0;
  layer.rq = rq;
  layer.in_zp = 0;
  layer.out_zp = 0;
  layer.act_min = -128;
  layer.act_max = 127;
  g_seg_trace = t;
  switch (l->kind) {
    case SP_SEG_KIND_FC:
      st = sp_seg_fully_connected_s8_traced(&pool, 0, in_bytes, &l->fc, &layer, work, ws);
      break;
    case SP_SEG_KIND_POINTWISE:
      st = sp_seg_pointwise_s8_traced(&pool, 0, in_bytes, &l->conv, &layer, work, ws);
      break;
    case SP_SEG_KIND_CONV:
      st = sp_seg_conv_s8_traced(&pool, 0, in_bytes, &l->conv, &layer, work, ws);
      break;
    case SP_SEG_KIND_DEPTHWISE:
      st = sp_seg_depthwise_s8_traced(&pool, 0, in_bytes, &l->conv, &layer, work, ws);
      break;
    case SP_SEG_KIND_BOTTLENECK: {
      sp_seg_bottleneck_s8_t bp;
      sp_add_s8_params_t add;
      memset(&add, 0, sizeof(add));
      add.act_min = -128;
      add.act_max = 127;
      bp.expand = layer;
      bp.depthwise = layer;
      bp.project = layer;
      bp.residual = l->bottleneck.has_residual ? &add : 0;
      st = sp_seg_bottleneck_s8_traced(&pool, 0, in_bytes, &l->bottleneck, &bp, work, ws);
      break;
    }
  }
  g_seg_trace = 0;
  if (st == SP_OK) {
    for (i = 0; i < out_bytes; ++i) {
      if (t->write_time[i] < 0) t->error = 1;
    }
    if (t->error) st = SP_BAD_ARGUMENT;
  }
done:
  free(pool_mem);
  free(weights);
  free(rq);
  free(work);
  if (st != SP_OK) {
    free(t->last_read);
    free(t->write_time);
    t->last_read = t->write_time = 0;
  }
  return st;
}

/* Every output byte j landing on input byte j - d is written after that byte's last read. */
static int seg_sim_safe(const seg_trace_t* t, int32_t d) {
  int32_t j;
  const int32_t j_end = (int32_t)SP_MIN((int64_t)t->out_bytes, (int64_t)t->in_bytes + d);
  for (j = SP_MAX(d, 0); j < j_end; ++j) {
    if (t->last_read[j - d] > t->write_time[j]) return 0;
  }
  return 1;
}

sp_status_t sp_seg_sim_min_shift(const sp_seg_layer_desc_t* layer, sp_seg_shift_t* result) {
  seg_trace_t t;
  int32_t *pm, i, j, max_unsafe = -1, d;
  sp_status_t st;
  if (result == 0) return SP_BAD_ARGUMENT;
  st = seg_sim_trace(layer, &t);
  if (st != SP_OK) return st;
  /* pm[i] = max(last_read[0..i]) is non-decreasing: for output byte j the smallest input byte
   * i <= j read after j is written gives the largest unsafe shift j - i. */
  pm = (int32_t*)malloc(sizeof(int32_t) * ((size_t)t.in_bytes + 1));
  if (pm == 0) {
    free(t.last_read);
    free(t.write_time);
    return SP_BAD_ARGUMENT;
  }
  for (i = 0; i < t.in_bytes; ++i) pm[i] = i ? SP_MAX(pm[i - 1], t.last_read[i]) : t.last_read[i];
  for (j = 0; j < t.out_bytes; ++j) {
    const int32_t w = t.write_time[j];
    int32_t lo = 0, hi = SP_MIN(j, t.in_bytes - 1); /* search i in [0, hi] */
    if (hi < 0 || pm[hi] <= w) continue;
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo) / 2;
      if (pm[mid] > w)
        hi = mid;
      else
        lo = mid + 1;
    }
    if (j - lo > max_unsafe) max_unsafe = j - lo;
  }
  result->in_bytes = t.in_bytes;
  result->out_bytes = t.out_bytes;
  result->shift_bytes = max_unsafe + 1;
  result->first_safe_bytes = result->shift_bytes;
  for (d = 0; d < result->shift_bytes; ++d) {
    if (seg_sim_safe(&t, d)) {
      result->first_safe_bytes = d;
      break;
    }
  }
  result->footprint_bytes = SP_MAX(result->shift_bytes + t.in_bytes, t.out_bytes);
  free(pm);
  free(t.last_read);
  free(t.write_time);
  return SP_OK;
}

int sp_seg_sim_is_safe(const sp_seg_layer_desc_t* layer, int32_t shift_bytes) {
  seg_trace_t t;
  int safe;
  if (shift_bytes < 0 || seg_sim_trace(layer, &t) != SP_OK) return -1;
  safe = seg_sim_safe(&t, shift_bytes);
  free(t.last_read);
  free(t.write_time);
  return safe;
}
