/* sramplan runtime: int8 convolution and fully connected (integer-only, MCU-safe).
 * TFLite (Micro) reference semantics: ConvPerChannel, DepthwiseConvPerChannel, FullyConnected. */
#include <string.h>

#include "sp_fast_s8.h"
#include "sp_internal.h"
#include "sramplan_rt_int8.h"

typedef struct {
  int32_t n, c, h, w;   /* input */
  int32_t k, cg, kg;    /* output channels, input channels per group, output channels per group */
  int32_t r, s;         /* kernel */
  int32_t oh, ow;       /* output */
  int32_t sh, sw, dh, dw, pt, pl;
} conv_geom_t;

static int32_t conv_out_dim(int32_t in, int32_t pb, int32_t pe, int32_t k, int32_t d, int32_t s) {
  int32_t span = in + pb + pe - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

static sp_status_t conv_check(const sp_tensor_t* in_desc, const sp_tensor_t* w_desc,
                              const sp_tensor_t* out_desc, const sp_requant_t* rq,
                              int32_t act_min, int32_t act_max, const int32_t stride[2],
                              const int32_t pad[4], const int32_t dilation[2], int32_t groups,
                              conv_geom_t* g) {
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(w_desc) || !sp_tensor_valid(out_desc) ||
      in_desc->rank != 4 || w_desc->rank != 4 || out_desc->rank != 4 || rq == 0)
    return SP_BAD_ARGUMENT;
  if (act_min < -128 || act_max > 127 || act_min > act_max || groups < 1) return SP_BAD_ARGUMENT;
  if (stride[0] < 1 || stride[1] < 1 || dilation[0] < 1 || dilation[1] < 1 || pad[0] < 0 ||
      pad[1] < 0 || pad[2] < 0 || pad[3] < 0)
    return SP_BAD_ARGUMENT;
  g->n = in_desc->dims[0];
  g->c = in_desc->dims[1];
  g->h = in_desc->dims[2];
  g->w = in_desc->dims[3];
  g->k = w_desc->dims[0];
  g->r = w_desc->dims[2];
  g->s = w_desc->dims[3];
  if (g->c % groups != 0 || g->k % groups != 0 || w_desc->dims[1] * groups != g->c) {
    return SP_BAD_ARGUMENT;
  }
  g->cg = g->c / groups;
  g->kg = g->k / groups;
  g->sh = stride[0];
  g->sw = stride[1];
  g->dh = dilation[0];
  g->dw = dilation[1];
  g->pt = pad[0];
  g->pl = pad[1];
  g->oh = conv_out_dim(g->h, pad[0], pad[2], g->r, g->dh, g->sh);
  g->ow = conv_out_dim(g->w, pad[1], pad[3], g->s, g->dw, g->sw);
  if (out_desc->dims[0] != g->n || out_desc->dims[1] != g->k || out_desc->dims[2] != g->oh ||
      out_desc->dims[3] != g->ow)
    return SP_BAD_ARGUMENT;
  return SP_OK;
}

/* Window taps inside the input along one axis: 0 <= i0 + t*d < n for t in [*lo, *hi). */
static inline void tap_range(int32_t i0, int32_t k, int32_t d, int32_t n, int32_t* lo, int32_t* hi) {
  *lo = i0 < 0 ? sp_ceil_div_i32(-i0, d) : 0;
  *hi = SP_MIN(k, sp_ceil_div_i32(n - i0, d));
}

#define requant_out sp_fq_out

/* The dense loops (pointwise, FC, the small-window column) are sp_fast_s8.h's. */
#define dense_out sp_dense_out
#define dense_out2 sp_dense_out2

/* Largest R*S*C window the generic convolution gathers into a stack column (the 3x3x3 stem). */
#define CONV_COL_MAX 64

sp_status_t sp_conv_s8_generic(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                               const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                               const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                               int32_t act_max, const int32_t stride[2], const int32_t pad[4],
                               const int32_t dilation[2], int32_t groups,
                               const sp_tensor_t* out_desc, int8_t* out) {
  conv_geom_t g;
  int32_t n, oh, ow, k, r, s, c;
  const int32_t in_off = -in_zp;
  const int32_t isn = in_desc->strides[0], isc = in_desc->strides[1], ish = in_desc->strides[2],
                isw = in_desc->strides[3];
  const int32_t wsk = w_desc->strides[0], wsc = w_desc->strides[1], wsr = w_desc->strides[2],
                wss = w_desc->strides[3];
  const int32_t osn = out_desc->strides[0], osc = out_desc->strides[1],
                osh = out_desc->strides[2], osw = out_desc->strides[3];
  sp_status_t st = conv_check(in_desc, w_desc, out_desc, rq, act_min,
                              act_max, stride, pad, dilation, groups, &g);
  if (st != SP_OK) return st;
  if (groups == 1 && isc == 1 && isw == g.c && wsc == 1 && wss == g.c && wsr == g.s * g.c &&
      g.r * g.s * g.c <= CONV_COL_MAX && in_zp >= -128 && in_zp <= 127) {
    /* NHWC input, [K][R][S][C] weights, a small window: each output pixel's window is gathered
     * into one contiguous column (padding taps as the input zero point, which add 0), then four
     * output channels at a time over the column. */
    /* With dense filters (row stride = window length) the second window follows the first at
     * that stride, so both pixels and both filter rows are one stride apart and the 2x2 block
     * takes the assembly loop (sp_dense_out2); otherwise each window has its own padded slot. */
    int8_t colbuf[2 * CONV_COL_MAX];
    const int32_t ncol = g.r * g.s * g.c, ncol4 = (ncol + 3) & ~3;
    const int adjacent = wsk == ncol && SP_DSP;
    int8_t* const col[2] = {colbuf, colbuf + (adjacent ? ncol : CONV_COL_MAX)};
    const int pad4 = !adjacent && ncol4 != ncol && ncol4 <= CONV_COL_MAX && wsk == ncol;
    for (c = ncol; c < ncol4 && c < CONV_COL_MAX && !adjacent; ++c) col[0][c] = col[1][c] = (int8_t)in_zp;
    for (n = 0; n < g.n; ++n) {
      for (oh = 0; oh < g.oh; ++oh) {
        const int32_t ih0 = oh * g.sh - g.pt;
        for (ow = 0; ow < g.ow; ow += 2) {
          const int32_t npix = SP_MIN(2, g.ow - ow);
          int32_t p;
          for (p = 0; p < npix; ++p) { /* the windows of pixels ow and ow + 1 */
            const int32_t iw0 = (ow + p) * g.sw - g.pl;
            const int row_inside = g.dw == 1 && iw0 >= 0 && iw0 + g.s <= g.w;
            for (r = 0; r < g.r; ++r) {
              const int32_t ih = ih0 + r * g.dh;
              if (row_inside && ih >= 0 && ih < g.h) { /* the window row: S*C contiguous bytes */
                const int8_t* src = in + n * isn + ih * ish + iw0 * isw;
                int8_t* dst = col[p] + r * g.s * g.c;
                for (c = 0; c < g.s * g.c; ++c) dst[c] = src[c];
                continue;
              }
              for (s = 0; s < g.s; ++s) {
                const int32_t iw = iw0 + s * g.dw;
                int8_t* dst = col[p] + (r * g.s + s) * g.c;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) {
                  for (c = 0; c < g.c; ++c) dst[c] = (int8_t)in_zp;
                } else {
                  const int8_t* src = in + n * isn + ih * ish + iw * isw;
                  for (c = 0; c < g.c; ++c) dst[c] = src[c];
                }
              }
            }
          }
          if (npix == 2 && pad4 && g.k > 1) {
            /* Columns padded to a multiple of 4 bytes with the input zero point (x + in_off = 0):
             * the SIMD loop has no scalar tail; the padding meets the first bytes of the next
             * filter row, which it multiplies by 0. The last row keeps its exact length. */
            int8_t* const o0 = out + n * osn + oh * osh + ow * osw;
            int8_t* const o1 = o0 + osw;
            dense_out2(col[0], col[1], ncol4, w, wsk, bias, rq, in_off, out_zp, act_min, act_max,
                       o0, o1, osc, g.k - 1);
            dense_out2(col[0], col[1], ncol, w + (g.k - 1) * wsk, wsk, bias ? bias + g.k - 1 : 0,
                       rq + g.k - 1, in_off, out_zp, act_min, act_max, o0 + (g.k - 1) * osc,
                       o1 + (g.k - 1) * osc, osc, 1);
          } else if (npix == 2)
            dense_out2(col[0], col[1], ncol, w, wsk, bias, rq, in_off, out_zp, act_min, act_max,
                       out + n * osn + oh * osh + ow * osw, out + n * osn + oh * osh + (ow + 1) * osw,
                       osc, g.k);
          else
            dense_out(col[0], ncol, w, wsk, bias, rq, in_off, out_zp, act_min, act_max,
                      out + n * osn + oh * osh + ow * osw, osc, g.k);
        }
      }
    }
    return SP_OK;
  }
  for (n = 0; n < g.n; ++n) {
    for (oh = 0; oh < g.oh; ++oh) {
      const int32_t ih0 = oh * g.sh - g.pt;
      for (ow = 0; ow < g.ow; ++ow) {
        const int32_t iw0 = ow * g.sw - g.pl;
        for (k = 0; k < g.k; ++k) {
          const int32_t c0 = (k / g.kg) * g.cg;
          const int8_t* wk = w + k * wsk;
          int32_t acc = 0;
          for (r = 0; r < g.r; ++r) {
            const int32_t ih = ih0 + r * g.dh;
            if (ih < 0 || ih >= g.h) continue;
            for (s = 0; s < g.s; ++s) {
              const int32_t iw = iw0 + s * g.dw;
              const int8_t* px;
              const int8_t* wp;
              if (iw < 0 || iw >= g.w) continue;
              px = in + n * isn + c0 * isc + ih * ish + iw * isw;
              wp = wk + r * wsr + s * wss;
              for (c = 0; c < g.cg; ++c) {
                acc += ((int32_t)px[c * isc] + in_off) * (int32_t)wp[c * wsc];
              }
            }
          }
          if (bias) acc += bias[k];
          out[n * osn + k * osc + oh * osh + ow * osw] =
              requant_out(acc, &rq[k], out_zp, act_min, act_max);
        }
      }
    }
  }
  return SP_OK;
}

/* One channel of a depthwise convolution over strided planes (TinyEngine's in-place depthwise runs
 * the layer plane by plane): the interior window is walked in place (no tap table, no stack
 * buffer), and the input offset's contribution in_off * sum(w)
 * is part of the interior accumulator's start value; border windows are clipped per pixel. Every
 * output is still computed from its whole window, so the result is the generic loop's. */
static SP_ALWAYS_INLINE int8_t dw_plane_rq(int32_t acc, int fast, int full, const sp_rqc_t* c,
                                           const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                           int32_t act_max) {
  return !fast ? requant_out(acc, rq, out_zp, act_min, act_max)
               : full ? sp_rqc_out_full(acc, c, out_zp) : sp_rqc_out(acc, c, out_zp, act_min, act_max);
}
/* n outputs of a one-channel 3x3 depthwise (dilation 1) whose windows lie inside the plane: the
 * window of output j starts at x + j * step; each output is acc0 (bias + in_off * sum(w)) plus the
 * nine taps. On the DSP path the weights are held as 16-bit pairs (SMLABB / SMLABT: five registers
 * for nine weights). */
#define DW3_TAPS(MAC0, MAC1)                                              \
  do {                                                                    \
    const int8_t* const x1 = x + ish;                                     \
    const int8_t* const x2 = x1 + ish;                                    \
    acc = MAC0(x[0], w01, acc0);                                          \
    acc = MAC1(x[isw], w01, acc);                                         \
    acc = MAC0(x[isw2], w23, acc);                                        \
    acc = MAC1(x1[0], w23, acc);                                          \
    acc = MAC0(x1[isw], w45, acc);                                        \
    acc = MAC1(x1[isw2], w45, acc);                                       \
    acc = MAC0(x2[0], w67, acc);                                          \
    acc = MAC1(x2[isw], w67, acc);                                        \
    acc = MAC0(x2[isw2], w8, acc);                                        \
  } while (0)
/* Stride 1: two neighbouring outputs (acc, acc1) from four input columns per row, each loaded once. */
#define DW3_ROW2(xr, wa, wb, wc)                                                 \
  do {                                                                           \
    const int32_t a_ = (xr)[0], b_ = (xr)[isw], c_ = (xr)[isw2], d_ = (xr)[isw3]; \
    acc = wa(a_, acc);                                                           \
    acc1 = wa(b_, acc1);                                                         \
    acc = wb(b_, acc);                                                           \
    acc1 = wb(c_, acc1);                                                         \
    acc = wc(c_, acc);                                                           \
    acc1 = wc(d_, acc1);                                                         \
  } while (0)
#define DW3_W0(v, a) __smlabb((v), (int32_t)w01, (a))
#define DW3_W1(v, a) __smlabt((v), (int32_t)w01, (a))
#define DW3_W2(v, a) __smlabb((v), (int32_t)w23, (a))
#define DW3_W3(v, a) __smlabt((v), (int32_t)w23, (a))
#define DW3_W4(v, a) __smlabb((v), (int32_t)w45, (a))
#define DW3_W5(v, a) __smlabt((v), (int32_t)w45, (a))
#define DW3_W6(v, a) __smlabb((v), (int32_t)w67, (a))
#define DW3_W7(v, a) __smlabt((v), (int32_t)w67, (a))
#define DW3_W8(v, a) __smlabb((v), (int32_t)w8, (a))
#define DW3_TAPS2()                                 \
  do {                                              \
    acc = acc1 = acc0;                              \
    DW3_ROW2(x, DW3_W0, DW3_W1, DW3_W2);            \
    DW3_ROW2(x + ish, DW3_W3, DW3_W4, DW3_W5);      \
    DW3_ROW2(x + 2 * ish, DW3_W6, DW3_W7, DW3_W8);  \
  } while (0)
#if SP_DSP
#define DW3_PACK(a, b) (((uint32_t)(a) & 0xFFFFu) | ((uint32_t)(b) << 16))
#define DW3_MAC0(xv, wv, a) __smlabb((int32_t)(xv), (int32_t)(wv), (a))
#define DW3_MAC1(xv, wv, a) __smlabt((int32_t)(xv), (int32_t)(wv), (a))
#endif
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void dw_plane_3x3_run(const int8_t* x, int32_t ish, int32_t isw, int32_t step,
                             const int32_t w9[9], int32_t acc0, int32_t n, int fast, int full,
                             const sp_rqc_t* c, const sp_requant_t* rq, int32_t out_zp,
                             int32_t act_min, int32_t act_max, int8_t* out, int32_t osw) {
  const int32_t isw2 = 2 * isw;
  int8_t* const end = out + n * osw;
  int32_t acc;
#if SP_DSP
  /* int8 weights fit the 16-bit lanes; the ldrsb'd inputs are sign-extended 32-bit values whose
   * bottom halves are the same int8 values. */
  const uint32_t w01 = DW3_PACK(w9[0], w9[1]), w23 = DW3_PACK(w9[2], w9[3]),
                 w45 = DW3_PACK(w9[4], w9[5]), w67 = DW3_PACK(w9[6], w9[7]),
                 w8 = DW3_PACK(w9[8], 0);
  if (fast && step == isw && n >= 2) {
    /* Stride 1: output pairs (four loads per row for two outputs), then the odd last one. */
    const sp_rqc_t cc = *c;
    const int32_t isw3 = 3 * isw;
    int8_t* const end2 = out + (n & ~1) * osw;
    int32_t acc1;
    for (; out != end2; x += 2 * isw, out += 2 * osw) {
      DW3_TAPS2();
      out[0] = full ? sp_rqc_out_full(acc, &cc, out_zp) : sp_rqc_out(acc, &cc, out_zp, act_min, act_max);
      out[osw] = full ? sp_rqc_out_full(acc1, &cc, out_zp) : sp_rqc_out(acc1, &cc, out_zp, act_min, act_max);
    }
    if (out == end) return;
  }
  if (fast) {
    const sp_rqc_t cc = *c;
    if (full) {
      for (; out != end; x += step, out += osw) {
        DW3_TAPS(DW3_MAC0, DW3_MAC1);
        *out = sp_rqc_out_full(acc, &cc, out_zp);
      }
    } else {
      for (; out != end; x += step, out += osw) {
        DW3_TAPS(DW3_MAC0, DW3_MAC1);
        *out = sp_rqc_out(acc, &cc, out_zp, act_min, act_max);
      }
    }
    return;
  }
  for (; out != end; x += step, out += osw) {
    DW3_TAPS(DW3_MAC0, DW3_MAC1);
    *out = dw_plane_rq(acc, fast, full, c, rq, out_zp, act_min, act_max);
  }
#else
  const int32_t w0 = w9[0], w1 = w9[1], w2 = w9[2], w3 = w9[3], w4 = w9[4], w5 = w9[5],
                w6 = w9[6], w7 = w9[7], w8 = w9[8];
  for (; out != end; x += step, out += osw) {
    const int8_t* const x1 = x + ish;
    const int8_t* const x2 = x1 + ish;
    acc = acc0 + (int32_t)x[0] * w0 + (int32_t)x[isw] * w1 + (int32_t)x[isw2] * w2 +
          (int32_t)x1[0] * w3 + (int32_t)x1[isw] * w4 + (int32_t)x1[isw2] * w5 +
          (int32_t)x2[0] * w6 + (int32_t)x2[isw] * w7 + (int32_t)x2[isw2] * w8;
    *out = dw_plane_rq(acc, fast, full, c, rq, out_zp, act_min, act_max);
  }
#endif
}

/* The interior window of one output (acc) and, if pair, of the next one d1 bytes to the right
 * (acc1), walked in place: rows xr / wsr apart, taps xs / wss apart; R and S are constants where
 * the caller specialises them (5x5, 7x7), so the window unrolls with no loop overhead. */
static SP_ALWAYS_INLINE void dw_plane_win(const int8_t* x, const int8_t* w, int32_t R, int32_t S,
                                          int32_t xs, int32_t xr, int32_t wss, int32_t wsr,
                                          int32_t d1, int pair, int32_t* acc, int32_t* acc1) {
  int32_t a = *acc, a1 = *acc1, r, s;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 8
#endif
  for (r = 0; r < R; ++r, x += xr, w += wsr) {
    const int8_t* xp = x;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 8
#endif
    for (s = 0; s < S; ++s, xp += xs) {
      const int32_t wv = w[s * wss];
      a += (int32_t)xp[0] * wv;
      if (pair) a1 += (int32_t)xp[d1] * wv;
    }
  }
  *acc = a;
  *acc1 = a1;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void dw_plane_s8(const conv_geom_t* g, const int8_t* in, int32_t ish, int32_t isw,
                        const int8_t* w, int32_t wsr, int32_t wss, int32_t bias,
                        const sp_requant_t* rq, int32_t in_off, int32_t out_zp, int32_t act_min,
                        int32_t act_max, int8_t* out, int32_t osh, int32_t osw) {
  int32_t oh, ow, r, s, wsum = 0;
  sp_rqc_t c;
  const int fast = sp_rqc_init(rq, out_zp, &c);
  const int full = act_min == -128 && act_max == 127;
  /* The interior window is walked in place (no tap table): the input steps by dw * isw between
   * taps and by dh * ish between rows, the weights by wss and wsr. */
  const int32_t xs = g->dw * isw, xr = g->dh * ish, R = g->r, S = g->s, d1 = g->sw * isw;
  for (r = 0; r < R; ++r)
    for (s = 0; s < S; ++s) wsum += w[r * wsr + s * wss];
  for (oh = 0; oh < g->oh; ++oh) {
    const int32_t ih0 = oh * g->sh - g->pt;
    int32_t r_lo, r_hi;
    tap_range(ih0, g->r, g->dh, g->h, &r_lo, &r_hi);
    for (ow = 0; ow < g->ow; ++ow) {
      const int32_t iw0 = ow * g->sw - g->pl;
      int32_t s_lo, s_hi, acc;
      tap_range(iw0, g->s, g->dw, g->w, &s_lo, &s_hi);
      if (r_lo == 0 && r_hi == R && s_lo == 0 && s_hi == S) {
        const int8_t* const base = in + ih0 * ish + iw0 * isw;
        const int32_t iw1 = iw0 + g->sw;
        int32_t acc1;
        acc = acc1 = bias + in_off * wsum;
        if (ow + 1 < g->ow && iw1 + (S - 1) * g->dw < g->w) {
          /* The next output's window is inside too: both at once, each weight read once. */
          if (S == 5 && R == 5)
            dw_plane_win(base, w, 5, 5, xs, xr, wss, wsr, d1, 1, &acc, &acc1);
          else if (S == 7 && R == 7)
            dw_plane_win(base, w, 7, 7, xs, xr, wss, wsr, d1, 1, &acc, &acc1);
          else
            dw_plane_win(base, w, R, S, xs, xr, wss, wsr, d1, 1, &acc, &acc1);
          out[oh * osh + ow * osw] = dw_plane_rq(acc, fast, full, &c, rq, out_zp, act_min, act_max);
          ++ow;
          out[oh * osh + ow * osw] = dw_plane_rq(acc1, fast, full, &c, rq, out_zp, act_min, act_max);
          continue;
        }
        if (S == 5 && R == 5)
          dw_plane_win(base, w, 5, 5, xs, xr, wss, wsr, d1, 0, &acc, &acc1);
        else if (S == 7 && R == 7)
          dw_plane_win(base, w, 7, 7, xs, xr, wss, wsr, d1, 0, &acc, &acc1);
        else
          dw_plane_win(base, w, R, S, xs, xr, wss, wsr, d1, 0, &acc, &acc1);
      } else {
        acc = bias;
        for (r = r_lo; r < r_hi; ++r)
          for (s = s_lo; s < s_hi; ++s)
            acc += ((int32_t)in[(ih0 + r * g->dh) * ish + (iw0 + s * g->dw) * isw] + in_off) *
                   (int32_t)w[r * wsr + s * wss];
      }
      out[oh * osh + ow * osw] = dw_plane_rq(acc, fast, full, &c, rq, out_zp, act_min, act_max);
    }
  }
}

/* dw_plane_s8 for 3x3 with dilation 1: the interior runs through dw_plane_3x3_run, border windows
 * clipped per pixel (a function of its own, so that dw_plane_s8's loop keeps its registers). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void dw_plane_3x3(const conv_geom_t* g, const int8_t* in, int32_t ish, int32_t isw,
                         const int8_t* w, int32_t wsr, int32_t wss, int32_t bias,
                         const sp_requant_t* rq, int32_t in_off, int32_t out_zp, int32_t act_min,
                         int32_t act_max, int8_t* out, int32_t osh, int32_t osw) {
  int32_t w9[9], oh, ow, r, s, wsum = 0;
  sp_rqc_t c;
  const int fast = sp_rqc_init(rq, out_zp, &c);
  const int full = act_min == -128 && act_max == 127;
  /* Outputs [ow_lo, ow_hi) have their three columns inside the plane. */
  const int32_t ow_lo = (g->pl + g->sw - 1) / g->sw;
  const int32_t ow_hi = SP_MAX(ow_lo, SP_MIN(g->ow, (g->w - 3 + g->pl) / g->sw + 1));
  for (r = 0; r < 3; ++r)
    for (s = 0; s < 3; ++s) wsum += w9[3 * r + s] = w[r * wsr + s * wss];
  for (oh = 0; oh < g->oh; ++oh) {
    const int32_t ih0 = oh * g->sh - g->pt;
    const int32_t r_lo = SP_MAX(0, -ih0), r_hi = SP_MIN(3, g->h - ih0);
    int8_t* const orow = out + oh * osh;
    for (ow = 0; ow < g->ow; ++ow) {
      const int32_t iw0 = ow * g->sw - g->pl;
      int32_t acc;
      if (r_lo == 0 && r_hi == 3 && ow == ow_lo && ow_hi > ow_lo) {
        dw_plane_3x3_run(in + ih0 * ish + iw0 * isw, ish, isw, g->sw * isw, w9, bias + in_off * wsum,
                         ow_hi - ow_lo, fast, full, &c, rq, out_zp, act_min, act_max, orow + ow * osw,
                         osw);
        ow = ow_hi - 1;
        continue;
      }
      {
        const int32_t s_lo = SP_MAX(0, -iw0), s_hi = SP_MIN(3, g->w - iw0);
        acc = bias;
        for (r = r_lo; r < r_hi; ++r) {
          const int8_t* const xr = in + (ih0 + r) * ish + iw0 * isw;
          for (s = s_lo; s < s_hi; ++s) acc += ((int32_t)xr[s * isw] + in_off) * w9[3 * r + s];
        }
      }
      orow[ow * osw] = dw_plane_rq(acc, fast, full, &c, rq, out_zp, act_min, act_max);
    }
  }
}

sp_status_t sp_conv_s8_depthwise(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                                 const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                                 const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                 int32_t act_max, const int32_t stride[2], const int32_t pad[4],
                                 const int32_t dilation[2], int32_t groups,
                                 const sp_tensor_t* out_desc, int8_t* out) {
  conv_geom_t g;
  int32_t n, oh, ow, c, m, r, s;
  const int32_t in_off = -in_zp;
  const int32_t isn = in_desc->strides[0], isc = in_desc->strides[1], ish = in_desc->strides[2],
                isw = in_desc->strides[3];
  const int32_t wsk = w_desc->strides[0], wsr = w_desc->strides[2], wss = w_desc->strides[3];
  const int32_t osn = out_desc->strides[0], osc = out_desc->strides[1],
                osh = out_desc->strides[2], osw = out_desc->strides[3];
  sp_status_t st = conv_check(in_desc, w_desc, out_desc, rq, act_min,
                              act_max, stride, pad, dilation, groups, &g);
  if (st != SP_OK) return st;
  if (groups != g.c) return SP_BAD_ARGUMENT;
  if (g.c == 1 && g.kg == 1 && g.r == 3 && g.s == 3 && g.dh == 1 && g.dw == 1) {
    for (n = 0; n < g.n; ++n)
      dw_plane_3x3(&g, in + n * isn, ish, isw, w, wsr, wss, bias ? bias[0] : 0, rq, in_off, out_zp,
                   act_min, act_max, out + n * osn, osh, osw);
    return SP_OK;
  }
  if (g.c == 1 && g.kg == 1) {
    for (n = 0; n < g.n; ++n)
      dw_plane_s8(&g, in + n * isn, ish, isw, w, wsr, wss, bias ? bias[0] : 0, rq, in_off, out_zp,
                  act_min, act_max, out + n * osn, osh, osw);
    return SP_OK;
  }
  if (isc == 1 && osc == 1 && wsk == 1 && g.kg == 1) {
    /* Channels contiguous in the input, the output and the weights (NHWC, TFLite [1, R, S, C]
     * weights): per output pixel, four channels at a time over the window's taps (a tap table of
     * at most kTaps entries on the stack), larger windows one channel at a time. Every output pixel
     * is still computed from its whole window before it is stored, so the result is the generic
     * loop's bit for bit. */
    enum { kTaps = 64 };
    int32_t tp[2 * kTaps]; /* per tap: the offset in the input, then in the weights */
    /* Every channel on the fast requantisation and the full int8 range (checked once). */
    const int fast_full = act_min == -128 && act_max == 127 && sp_rq_all_fast(rq, g.c, out_zp);
    if (g.r * g.s <= kTaps) {
      /* Per output pixel: the window's tap offsets once, then four channels at a time over all
       * taps with the accumulators in registers, requantised at once. */
      for (n = 0; n < g.n; ++n) {
        for (oh = 0; oh < g.oh; ++oh) {
          const int32_t ih0 = oh * g.sh - g.pt;
          int32_t r_lo, r_hi;
          tap_range(ih0, g.r, g.dh, g.h, &r_lo, &r_hi);
          for (ow = 0; ow < g.ow; ++ow) {
            const int32_t iw0 = ow * g.sw - g.pl;
            int32_t s_lo, s_hi, ntap = 0, t;
            int8_t* const po = out + n * osn + oh * osh + ow * osw;
            const int8_t* const pin = in + n * isn;
            tap_range(iw0, g.s, g.dw, g.w, &s_lo, &s_hi);
            for (r = r_lo; r < r_hi; ++r)
              for (s = s_lo; s < s_hi; ++s) {
                tp[2 * ntap] = (ih0 + r * g.dh) * ish + (iw0 + s * g.dw) * isw;
                tp[2 * ntap + 1] = r * wsr + s * wss;
                ++ntap;
              }
            for (c = 0; c + 4 <= g.c; c += 4) {
              int32_t a4[4] = {0, 0, 0, 0};
              if (bias) {
                a4[0] = bias[c];
                a4[1] = bias[c + 1];
                a4[2] = bias[c + 2];
                a4[3] = bias[c + 3];
              }
              sp_dw4p_s8(pin + c, w + c, tp, ntap, in_off, a4);
              if (fast_full) {
                po[c] = sp_rqf_out_full(a4[0], &rq[c], out_zp);
                po[c + 1] = sp_rqf_out_full(a4[1], &rq[c + 1], out_zp);
                po[c + 2] = sp_rqf_out_full(a4[2], &rq[c + 2], out_zp);
                po[c + 3] = sp_rqf_out_full(a4[3], &rq[c + 3], out_zp);
              } else {
                sp_rq4_store(a4, &rq[c], out_zp, act_min, act_max, po + c);
              }
            }
            for (; c < g.c; ++c) {
              int32_t a = bias ? bias[c] : 0;
              for (t = 0; t < ntap; ++t)
                a += ((int32_t)pin[c + tp[2 * t]] + in_off) * (int32_t)w[c + tp[2 * t + 1]];
              po[c] = requant_out(a, &rq[c], out_zp, act_min, act_max);
            }
          }
        }
      }
      return SP_OK;
    }
    for (n = 0; n < g.n; ++n) {
      for (oh = 0; oh < g.oh; ++oh) {
        const int32_t ih0 = oh * g.sh - g.pt;
        int32_t r_lo, r_hi;
        tap_range(ih0, g.r, g.dh, g.h, &r_lo, &r_hi);
        for (ow = 0; ow < g.ow; ++ow) {
          const int32_t iw0 = ow * g.sw - g.pl;
          int32_t s_lo, s_hi;
          tap_range(iw0, g.s, g.dw, g.w, &s_lo, &s_hi);
          int8_t* const po = out + n * osn + oh * osh + ow * osw;
          /* A window of more than kTaps taps: one channel at a time, its accumulator in a register. */
          for (c = 0; c < g.c; ++c) {
            int32_t a = bias ? bias[c] : 0;
            for (r = r_lo; r < r_hi; ++r) {
              const int8_t* prow = in + n * isn + (ih0 + r * g.dh) * ish + c;
              const int8_t* wrow = w + r * wsr + c;
              for (s = s_lo; s < s_hi; ++s)
                a += ((int32_t)prow[(iw0 + s * g.dw) * isw] + in_off) * (int32_t)wrow[s * wss];
            }
            po[c] = requant_out(a, &rq[c], out_zp, act_min, act_max);
          }
        }
      }
    }
    return SP_OK;
  }
  for (n = 0; n < g.n; ++n) {
    for (oh = 0; oh < g.oh; ++oh) {
      const int32_t ih0 = oh * g.sh - g.pt;
      int32_t r_lo, r_hi;  /* valid kernel rows: 0 <= ih0 + r*dh < H */
      tap_range(ih0, g.r, g.dh, g.h, &r_lo, &r_hi);
      for (ow = 0; ow < g.ow; ++ow) {
        const int32_t iw0 = ow * g.sw - g.pl;
        int32_t s_lo, s_hi;
        tap_range(iw0, g.s, g.dw, g.w, &s_lo, &s_hi);
        for (c = 0; c < g.c; ++c) {
          const int8_t* pc = in + n * isn + c * isc;
          for (m = 0; m < g.kg; ++m) {
            const int32_t k = c * g.kg + m;
            const int8_t* wk = w + k * wsk;
            int32_t acc = 0;
            for (r = r_lo; r < r_hi; ++r) {
              const int8_t* prow = pc + (ih0 + r * g.dh) * ish;
              const int8_t* wrow = wk + r * wsr;
              for (s = s_lo; s < s_hi; ++s) {
                acc += ((int32_t)prow[(iw0 + s * g.dw) * isw] + in_off) * (int32_t)wrow[s * wss];
              }
            }
            if (bias) acc += bias[k];
            out[n * osn + k * osc + oh * osh + ow * osw] =
                requant_out(acc, &rq[k], out_zp, act_min, act_max);
          }
        }
      }
    }
  }
  return SP_OK;
}

sp_status_t sp_conv_s8_pointwise(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                                 const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                                 const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                 int32_t act_max, const int32_t stride[2], const int32_t pad[4],
                                 const int32_t dilation[2], int32_t groups,
                                 const sp_tensor_t* out_desc, int8_t* out) {
  conv_geom_t g;
  int32_t n, oh, ow, k, c;
  const int32_t in_off = -in_zp;
  const int32_t isn = in_desc->strides[0], isc = in_desc->strides[1], ish = in_desc->strides[2],
                isw = in_desc->strides[3];
  const int32_t wsk = w_desc->strides[0], wsc = w_desc->strides[1];
  const int32_t osn = out_desc->strides[0], osc = out_desc->strides[1],
                osh = out_desc->strides[2], osw = out_desc->strides[3];
  sp_status_t st = conv_check(in_desc, w_desc, out_desc, rq, act_min,
                              act_max, stride, pad, dilation, groups, &g);
  if (st != SP_OK) return st;
  if (g.r != 1 || g.s != 1 || groups != 1 || pad[0] || pad[1] || pad[2] || pad[3])
    return SP_BAD_ARGUMENT;
  if (isc == 1 && wsc == 1 && osc == 1 && osw == g.k && g.sw == 1 && isw == g.c &&
      ish == g.w * g.c && osh == g.ow * g.k && g.sh == 1) {
    /* Dense NHWC input and output, stride 1: the image is one run of pixels; channel pairs outer,
     * pixel pairs inner (sp_dense_pixels). */
    for (n = 0; n < g.n; ++n)
      sp_dense_pixels(in + n * isn, g.c, g.oh * g.ow, g.c, w, wsk, bias, rq, in_off, out_zp,
                      act_min, act_max, out + n * osn, g.k, 1, g.k);
    return SP_OK;
  }
  if (isc == 1 && wsc == 1) { /* dense NHWC input, [K][C] weights: SIMD, two pixels at a time */
    for (n = 0; n < g.n; ++n)
      for (oh = 0; oh < g.oh; ++oh) {
        const int8_t* const xrow = in + n * isn + oh * g.sh * ish;
        int8_t* const orow = out + n * osn + oh * osh;
        for (ow = 0; ow + 2 <= g.ow; ow += 2)
          dense_out2(xrow + ow * g.sw * isw, xrow + (ow + 1) * g.sw * isw, g.c, w, wsk, bias, rq,
                     in_off, out_zp, act_min, act_max, orow + ow * osw, orow + (ow + 1) * osw, osc,
                     g.k);
        if (ow < g.ow)
          dense_out(xrow + ow * g.sw * isw, g.c, w, wsk, bias, rq, in_off, out_zp, act_min, act_max,
                    orow + ow * osw, osc, g.k);
      }
    return SP_OK;
  }
  for (n = 0; n < g.n; ++n) {
    for (oh = 0; oh < g.oh; ++oh) {
      for (ow = 0; ow < g.ow; ++ow) {
        const int8_t* px = in + n * isn + oh * g.sh * ish + ow * g.sw * isw;
        int8_t* po = out + n * osn + oh * osh + ow * osw;
        for (k = 0; k < g.k; ++k) {
          const int8_t* wk = w + k * wsk;
          int32_t acc = 0;
          for (c = 0; c < g.c; ++c) acc += ((int32_t)px[c * isc] + in_off) * (int32_t)wk[c * wsc];
          if (bias) acc += bias[k];
          po[k * osc] = requant_out(acc, &rq[k], out_zp, act_min, act_max);
        }
      }
    }
  }
  return SP_OK;
}

sp_status_t sp_conv_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                       const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                       const sp_requant_t* rq, int32_t out_zp, int32_t act_min, int32_t act_max,
                       const int32_t stride[2], const int32_t pad[4], const int32_t dilation[2],
                       int32_t groups, const sp_tensor_t* out_desc, int8_t* out) {
  if (in_desc && w_desc && in_desc->rank == 4 && w_desc->rank == 4) {
    if (groups == 1 && w_desc->dims[2] == 1 && w_desc->dims[3] == 1 && !pad[0] && !pad[1] &&
        !pad[2] && !pad[3])
      return sp_conv_s8_pointwise(in_desc, in, in_zp, w_desc, w, bias, rq, out_zp, act_min,
                                  act_max, stride, pad, dilation, groups, out_desc, out);
    /* Depthwise; also one channel to one channel (TinyEngine's in-place depthwise runs plane by
     * plane), which is the depthwise loop with C = 1 and its hoisted window bounds. */
    if ((groups > 1 && groups == in_desc->dims[1]) ||
        (groups == 1 && in_desc->dims[1] == 1 && w_desc->dims[0] == 1 && w_desc->dims[1] == 1))
      return sp_conv_s8_depthwise(in_desc, in, in_zp, w_desc, w, bias, rq, out_zp, act_min,
                                  act_max, stride, pad, dilation, groups, out_desc, out);
  }
  return sp_conv_s8_generic(in_desc, in, in_zp, w_desc, w, bias, rq, out_zp, act_min, act_max,
                            stride, pad, dilation, groups, out_desc, out);
}

sp_status_t sp_fully_connected_s8(const sp_tensor_t* in_desc, const int8_t* in, int32_t in_zp,
                                  const sp_tensor_t* w_desc, const int8_t* w, const int32_t* bias,
                                  const sp_requant_t* rq, int32_t out_zp, int32_t act_min,
                                  int32_t act_max, const sp_tensor_t* out_desc, int8_t* out) {
  int32_t m, n, k, M, N, K;
  const int32_t in_off = -in_zp;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(w_desc) || !sp_tensor_valid(out_desc) ||
      in_desc->rank != 2 || w_desc->rank != 2 || out_desc->rank != 2 || rq == 0)
    return SP_BAD_ARGUMENT;
  if (act_min < -128 || act_max > 127 || act_min > act_max) return SP_BAD_ARGUMENT;
  M = in_desc->dims[0];
  K = in_desc->dims[1];
  N = w_desc->dims[0];
  if (w_desc->dims[1] != K || out_desc->dims[0] != M || out_desc->dims[1] != N)
    return SP_BAD_ARGUMENT;
  if (in_desc->strides[1] == 1 && w_desc->strides[1] == 1) {
    for (m = 0; m < M; ++m)
      dense_out(in + m * in_desc->strides[0], K, w, w_desc->strides[0], bias, rq, in_off, out_zp,
                act_min, act_max, out + m * out_desc->strides[0], out_desc->strides[1], N);
    return SP_OK;
  }
  for (m = 0; m < M; ++m) {
    const int8_t* row = in + m * in_desc->strides[0];
    for (n = 0; n < N; ++n) {
      const int8_t* wn = w + n * w_desc->strides[0];
      int32_t acc = 0;
      for (k = 0; k < K; ++k) {
        acc += ((int32_t)row[k * in_desc->strides[1]] + in_off) *
               (int32_t)wn[k * w_desc->strides[1]];
      }
      if (bias) acc += bias[n];
      out[m * out_desc->strides[0] + n * out_desc->strides[1]] =
          requant_out(acc, &rq[n], out_zp, act_min, act_max);
    }
  }
  return SP_OK;
}
