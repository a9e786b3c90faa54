/* sramplan runtime: int8 pooling (integer-only, MCU-safe). TFLite (Micro) reference semantics:
 * MaxPool, AveragePool (round half away from zero), Mean. */
#include <stddef.h>

#include "sp_internal.h"
#include "sramplan_rt_int8.h"

typedef struct {
  int32_t n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr;
} pool_geom_t;

/* Every window must hold at least one input tap: window o covers [o*s - pb, o*s - pb + k). */
static int windows_nonempty(int32_t in, int32_t out, int32_t k, int32_t s, int32_t pb) {
  if (out == 0) return 1;
  if (in == 0) return 0;
  if (k - pb <= 0) return 0;               /* first window ends before the input */
  if ((out - 1) * s - pb >= in) return 0;  /* last window starts after the input */
  return 1;
}

static sp_status_t pool_check(const sp_tensor_t* in_desc, const sp_tensor_t* out_desc,
                              const int32_t kernel[2], const int32_t stride[2],
                              const int32_t pad[4], int32_t act_min, int32_t act_max,
                              pool_geom_t* g) {
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || in_desc->rank != 4 ||
      out_desc->rank != 4)
    return SP_BAD_ARGUMENT;
  if (act_min < -128 || act_max > 127 || act_min > act_max) return SP_BAD_ARGUMENT;
  if (kernel[0] < 1 || kernel[1] < 1 || stride[0] < 1 || stride[1] < 1 || pad[0] < 0 ||
      pad[1] < 0 || pad[2] < 0 || pad[3] < 0)
    return SP_BAD_ARGUMENT;
  g->n = in_desc->dims[0];
  g->c = in_desc->dims[1];
  g->h = in_desc->dims[2];
  g->w = in_desc->dims[3];
  g->oh = out_desc->dims[2];
  g->ow = out_desc->dims[3];
  g->kh = kernel[0];
  g->kw = kernel[1];
  g->sh = stride[0];
  g->sw = stride[1];
  g->pt = pad[0];
  g->pl = pad[1];
  g->pb = pad[2];
  g->pr = pad[3];
  if (out_desc->dims[0] != g->n || out_desc->dims[1] != g->c) return SP_BAD_ARGUMENT;
  if (!windows_nonempty(g->h, g->oh, g->kh, g->sh, g->pt) ||
      !windows_nonempty(g->w, g->ow, g->kw, g->sw, g->pl))
    return SP_BAD_ARGUMENT;
  return SP_OK;
}

sp_status_t sp_max_pool_s8(const sp_tensor_t* in_desc, const int8_t* in, const int32_t kernel[2],
                           const int32_t stride[2], const int32_t pad[4], int32_t act_min,
                           int32_t act_max, const sp_tensor_t* out_desc, int8_t* out) {
  pool_geom_t g;
  int32_t n, c, oh, ow, ih, iw;
  const int32_t isn = in_desc->strides[0], isc = in_desc->strides[1], ish = in_desc->strides[2],
                isw = in_desc->strides[3];
  const int32_t osn = out_desc->strides[0], osc = out_desc->strides[1],
                osh = out_desc->strides[2], osw = out_desc->strides[3];
  sp_status_t st = pool_check(in_desc, out_desc, kernel, stride, pad, act_min, act_max, &g);
  if (st != SP_OK) return st;
  for (n = 0; n < g.n; ++n) {
    for (oh = 0; oh < g.oh; ++oh) {
      const int32_t h0 = SP_MAX(oh * g.sh - g.pt, 0);
      const int32_t h1 = SP_MIN(oh * g.sh - g.pt + g.kh, g.h);
      for (ow = 0; ow < g.ow; ++ow) {
        const int32_t w0 = SP_MAX(ow * g.sw - g.pl, 0);
        const int32_t w1 = SP_MIN(ow * g.sw - g.pl + g.kw, g.w);
        for (c = 0; c < g.c; ++c) {
          const int8_t* p = in + n * isn + c * isc;
          int32_t mx = -128;
          for (ih = h0; ih < h1; ++ih) {
            for (iw = w0; iw < w1; ++iw) {
              const int32_t v = p[ih * ish + iw * isw];
              if (v > mx) mx = v;
            }
          }
          out[n * osn + c * osc + oh * osh + ow * osw] = (int8_t)sp_clamp_i32(mx, act_min, act_max);
        }
      }
    }
  }
  return SP_OK;
}

/* TFLite's average rounding: round half away from zero (C division truncates). */
static inline int32_t rounded_average(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

sp_status_t sp_avg_pool_s8(const sp_tensor_t* in_desc, const int8_t* in, const int32_t kernel[2],
                           const int32_t stride[2], const int32_t pad[4],
                           int32_t count_include_pad, int32_t act_min, int32_t act_max,
                           const sp_tensor_t* out_desc, int8_t* out) {
  pool_geom_t g;
  int32_t n, c, oh, ow, ih, iw;
  const int32_t isn = in_desc->strides[0], isc = in_desc->strides[1], ish = in_desc->strides[2],
                isw = in_desc->strides[3];
  const int32_t osn = out_desc->strides[0], osc = out_desc->strides[1],
                osh = out_desc->strides[2], osw = out_desc->strides[3];
  sp_status_t st = pool_check(in_desc, out_desc, kernel, stride, pad, act_min, act_max, &g);
  if (st != SP_OK) return st;
  for (n = 0; n < g.n; ++n) {
    for (oh = 0; oh < g.oh; ++oh) {
      const int32_t hs = oh * g.sh - g.pt;
      const int32_t h0 = SP_MAX(hs, 0), h1 = SP_MIN(hs + g.kh, g.h);
      const int32_t ph = SP_MIN(hs + g.kh, g.h + g.pb) - hs; /* rows inside the padded input */
      for (ow = 0; ow < g.ow; ++ow) {
        const int32_t ws = ow * g.sw - g.pl;
        const int32_t w0 = SP_MAX(ws, 0), w1 = SP_MIN(ws + g.kw, g.w);
        const int32_t pw = SP_MIN(ws + g.kw, g.w + g.pr) - ws;
        const int32_t count = count_include_pad ? ph * pw : (h1 - h0) * (w1 - w0);
        for (c = 0; c < g.c; ++c) {
          const int8_t* p = in + n * isn + c * isc;
          int32_t sum = 0;
          for (ih = h0; ih < h1; ++ih) {
            for (iw = w0; iw < w1; ++iw) sum += p[ih * ish + iw * isw];
          }
          out[n * osn + c * osc + oh * osh + ow * osw] =
              (int8_t)sp_clamp_i32(rounded_average(sum, count), act_min, act_max);
        }
      }
    }
  }
  return SP_OK;
}

static sp_status_t gap_check(const sp_tensor_t* in_desc, const sp_tensor_t* out_desc,
                             int32_t act_min, int32_t act_max) {
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || in_desc->rank != 4 ||
      out_desc->rank != 4)
    return SP_BAD_ARGUMENT;
  if (act_min < -128 || act_max > 127 || act_min > act_max) return SP_BAD_ARGUMENT;
  if (out_desc->dims[0] != in_desc->dims[0] || out_desc->dims[1] != in_desc->dims[1] ||
      out_desc->dims[2] != 1 || out_desc->dims[3] != 1)
    return SP_BAD_ARGUMENT;
  if (in_desc->dims[2] * in_desc->dims[3] == 0 && in_desc->dims[0] * in_desc->dims[1] != 0)
    return SP_BAD_ARGUMENT;
  return SP_OK;
}

static int32_t plane_sum(const int8_t* p, const sp_tensor_t* d) {
  int32_t h, w, sum = 0;
  for (h = 0; h < d->dims[2]; ++h) {
    for (w = 0; w < d->dims[3]; ++w) sum += p[h * d->strides[2] + w * d->strides[3]];
  }
  return sum;
}

/* The outputs from per-(n, c) sums of `count` pixels: shared by the one-call kernels and the
 * streaming finish, so both round alike. */
static void gap_finish(const int32_t* sums, int32_t sum_stride_n, int32_t count, const sp_requant_t* rq,
                       int32_t in_zp, int32_t out_zp, int32_t act_min, int32_t act_max,
                       const sp_tensor_t* out_desc, int8_t* out) {
  int32_t n, c;
  for (n = 0; n < out_desc->dims[0]; ++n) {
    for (c = 0; c < out_desc->dims[1]; ++c) {
      const int32_t sum = sums[n * sum_stride_n + c];
      int32_t v;
      if (rq) {
        v = sp_mbqm_zp(sum - count * in_zp, rq->multiplier, rq->shift, out_zp);
      } else {
        v = rounded_average(sum, count);
      }
      out[n * out_desc->strides[0] + c * out_desc->strides[1]] = (int8_t)sp_clamp_i32(v, act_min, act_max);
    }
  }
}

static sp_status_t gap_one_call(const sp_tensor_t* in_desc, const int8_t* in, const sp_requant_t* rq,
                                int32_t in_zp, int32_t out_zp, int32_t act_min, int32_t act_max,
                                const sp_tensor_t* out_desc, int8_t* out) {
  int32_t n, c;
  sp_status_t st = gap_check(in_desc, out_desc, act_min, act_max);
  if (st != SP_OK) return st;
  for (n = 0; n < in_desc->dims[0]; ++n) {
    for (c = 0; c < in_desc->dims[1]; ++c) {
      /* one (n, c) at a time: the sum, then its output (no buffer of sums) */
      const int32_t sum = plane_sum(in + n * in_desc->strides[0] + c * in_desc->strides[1], in_desc);
      sp_tensor_t one = *out_desc;
      one.dims[0] = 1;
      one.dims[1] = 1;
      gap_finish(&sum, 0, in_desc->dims[2] * in_desc->dims[3], rq, in_zp, out_zp, act_min, act_max, &one,
                 out + n * out_desc->strides[0] + c * out_desc->strides[1]);
    }
  }
  return SP_OK;
}

sp_status_t sp_global_avg_pool_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t act_min,
                                  int32_t act_max, const sp_tensor_t* out_desc, int8_t* out) {
  return gap_one_call(in_desc, in, NULL, 0, 0, act_min, act_max, out_desc, out);
}

sp_status_t sp_global_avg_pool_requant_s8(const sp_tensor_t* in_desc, const int8_t* in,
                                          int32_t in_zp, sp_requant_t rq, int32_t out_zp,
                                          int32_t act_min, int32_t act_max,
                                          const sp_tensor_t* out_desc, int8_t* out) {
  return gap_one_call(in_desc, in, &rq, in_zp, out_zp, act_min, act_max, out_desc, out);
}

sp_status_t sp_global_pool_sum_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t* sums) {
  int32_t n, c;
  if (!sp_tensor_valid(in_desc) || in_desc->rank != 4 || !sums) return SP_BAD_ARGUMENT;
  for (n = 0; n < in_desc->dims[0]; ++n) {
    for (c = 0; c < in_desc->dims[1]; ++c)
      sums[n * in_desc->dims[1] + c] += plane_sum(in + n * in_desc->strides[0] + c * in_desc->strides[1], in_desc);
  }
  return SP_OK;
}

sp_status_t sp_global_avg_pool_finish_s8(const int32_t* sums, int32_t count, const sp_requant_t* rq,
                                         int32_t in_zp, int32_t out_zp, int32_t act_min, int32_t act_max,
                                         const sp_tensor_t* out_desc, int8_t* out) {
  if (!sums || count <= 0 || !sp_tensor_valid(out_desc) || out_desc->rank != 4 || act_min < -128 ||
      act_max > 127 || act_min > act_max || out_desc->dims[2] != 1 || out_desc->dims[3] != 1)
    return SP_BAD_ARGUMENT;
  gap_finish(sums, out_desc->dims[1], count, rq, in_zp, out_zp, act_min, act_max, out_desc, out);
  return SP_OK;
}
