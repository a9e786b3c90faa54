/* sramplan runtime: float32 reference kernels: convolution, matrix products, normalisation,
 * pooling, reductions, linear resize (host; uses math.h). */
#include <math.h>
#include <string.h>

#include "sp_internal.h"
#include "sramplan_rt_f32.h"

/* ---- Spatial geometry (1, 2 or 3 spatial dims, normalised to 3 with leading unit dims) ------- */

typedef struct {
  int32_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  int32_t in_st[3], out_st[3], w_st[3];
} spatial_t;

/* Fills g from an (N, C, spatial...) input/output pair. w may be NULL (pools; k from kernel). */
static int spatial_init(spatial_t* g, const sp_tensor_t* in_desc, const sp_tensor_t* out_desc,
                        const sp_tensor_t* w_desc, const int32_t* kernel, const int32_t* stride,
                        const int32_t* pad, const int32_t* dilation) {
  int32_t sd = in_desc->rank - 2, i;
  if (sd < 1 || sd > 3 || out_desc->rank != in_desc->rank) return 0;
  if (w_desc && w_desc->rank != in_desc->rank) return 0;
  for (i = 0; i < 3; ++i) {
    int32_t j = i - (3 - sd); /* index into the real spatial dims */
    if (j < 0) {
      g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
      g->pb[i] = g->pe[i] = 0;
      g->in_st[i] = g->out_st[i] = g->w_st[i] = 0;
      continue;
    }
    g->in[i] = in_desc->dims[2 + j];
    g->out[i] = out_desc->dims[2 + j];
    g->in_st[i] = in_desc->strides[2 + j];
    g->out_st[i] = out_desc->strides[2 + j];
    g->k[i] = w_desc ? w_desc->dims[2 + j] : kernel[j];
    g->w_st[i] = w_desc ? w_desc->strides[2 + j] : 0;
    g->s[i] = stride ? stride[j] : 1;
    g->d[i] = dilation ? dilation[j] : 1;
    g->pb[i] = pad ? pad[j] : 0;
    g->pe[i] = pad ? pad[sd + j] : 0;
    if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || g->pb[i] < 0 || g->pe[i] < 0) return 0;
  }
  return 1;
}

/* Output positions o in [*lo, *hi) whose tap o*s - pb + t lands inside [0, in). */
static void valid_range(int32_t in, int32_t out, int32_t s, int32_t pb, int32_t t, int32_t* lo,
                        int32_t* hi) {
  /* 0 <= o*s - pb + t <= in - 1 */
  int32_t a = sp_ceil_div_i32(pb - t, s);
  int32_t b = sp_floor_div_i32(in - 1 + pb - t, s) + 1;
  *lo = SP_MAX(a, 0);
  *hi = SP_MIN(b, out);
  if (*hi < *lo) *hi = *lo;
}

/* ---- Convolution --------------------------------------------------------------------------- */

sp_status_t sp_conv_f32(const sp_tensor_t* in_desc, const float* in, const sp_tensor_t* w_desc,
                        const float* w, const float* bias, const int32_t* stride,
                        const int32_t* pad, const int32_t* dilation, int32_t groups,
                        const sp_tensor_t* out_desc, float* out) {
  spatial_t g;
  int32_t i, n, k, c, N, C, K, cg, kg;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(w_desc) || !sp_tensor_valid(out_desc) ||
      groups < 1)
    return SP_BAD_ARGUMENT;
  if (!spatial_init(&g, in_desc, out_desc, w_desc, 0, stride, pad, dilation)) return SP_BAD_ARGUMENT;
  N = in_desc->dims[0];
  C = in_desc->dims[1];
  K = w_desc->dims[0];
  if (C % groups || K % groups || w_desc->dims[1] * groups != C || out_desc->dims[0] != N ||
      out_desc->dims[1] != K)
    return SP_BAD_ARGUMENT;
  for (i = 0; i < 3; ++i) {
    int32_t span = g.in[i] + g.pb[i] + g.pe[i] - g.d[i] * (g.k[i] - 1) - 1;
    int32_t o = span < 0 ? 0 : span / g.s[i] + 1;
    if (o != g.out[i]) return SP_BAD_ARGUMENT;
  }
  cg = C / groups;
  kg = K / groups;
  for (n = 0; n < N; ++n) {
    for (k = 0; k < K; ++k) {
      float* ob = out + n * out_desc->strides[0] + k * out_desc->strides[1];
      const int32_t c0 = (k / kg) * cg;
      int32_t o0, o1, o2, t0, t1, t2;
      const float b0 = bias ? bias[k] : 0.0f;
      for (o0 = 0; o0 < g.out[0]; ++o0)
        for (o1 = 0; o1 < g.out[1]; ++o1)
          for (o2 = 0; o2 < g.out[2]; ++o2)
            ob[o0 * g.out_st[0] + o1 * g.out_st[1] + o2 * g.out_st[2]] = b0;
      for (c = 0; c < cg; ++c) {
        const float* ib = in + n * in_desc->strides[0] + (c0 + c) * in_desc->strides[1];
        const float* wb = w + k * w_desc->strides[0] + c * w_desc->strides[1];
        for (t0 = 0; t0 < g.k[0]; ++t0) {
          int32_t lo0, hi0;
          valid_range(g.in[0], g.out[0], g.s[0], g.pb[0], t0 * g.d[0], &lo0, &hi0);
          for (t1 = 0; t1 < g.k[1]; ++t1) {
            int32_t lo1, hi1;
            valid_range(g.in[1], g.out[1], g.s[1], g.pb[1], t1 * g.d[1], &lo1, &hi1);
            for (t2 = 0; t2 < g.k[2]; ++t2) {
              int32_t lo2, hi2;
              const float wv = wb[t0 * g.w_st[0] + t1 * g.w_st[1] + t2 * g.w_st[2]];
              const int32_t ist2 = g.s[2] * g.in_st[2], ost2 = g.out_st[2];
              valid_range(g.in[2], g.out[2], g.s[2], g.pb[2], t2 * g.d[2], &lo2, &hi2);
              for (o0 = lo0; o0 < hi0; ++o0) {
                const int32_t i0 = o0 * g.s[0] - g.pb[0] + t0 * g.d[0];
                for (o1 = lo1; o1 < hi1; ++o1) {
                  const int32_t i1 = o1 * g.s[1] - g.pb[1] + t1 * g.d[1];
                  const float* irow = ib + i0 * g.in_st[0] + i1 * g.in_st[1] +
                                      (lo2 * g.s[2] - g.pb[2] + t2 * g.d[2]) * g.in_st[2];
                  float* orow = ob + o0 * g.out_st[0] + o1 * g.out_st[1] + lo2 * ost2;
                  const int32_t cnt = hi2 - lo2;
                  int32_t j;
                  if (ost2 == 1 && ist2 == 1) {
                    for (j = 0; j < cnt; ++j) orow[j] += wv * irow[j];
                  } else {
                    for (j = 0; j < cnt; ++j) orow[j * ost2] += wv * irow[j * ist2];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return SP_OK;
}

/* ---- Matrix products ----------------------------------------------------------------------- */

/* out[m, :] = sum_k a[m, k] * b[k, :] for one matrix pair (strides in elements). */
static void matmul_2d(int32_t M, int32_t N, int32_t K, const float* a, int32_t asm_, int32_t ask,
                      const float* b, int32_t bsk, int32_t bsn, float* o, int32_t osm,
                      int32_t osn) {
  int32_t m, n, k;
  for (m = 0; m < M; ++m) {
    float* orow = o + m * osm;
    for (n = 0; n < N; ++n) orow[n * osn] = 0.0f;
    for (k = 0; k < K; ++k) {
      const float av = a[m * asm_ + k * ask];
      const float* brow = b + k * bsk;
      if (osn == 1 && bsn == 1) {
        for (n = 0; n < N; ++n) orow[n] += av * brow[n];
      } else {
        for (n = 0; n < N; ++n) orow[n * osn] += av * brow[n * bsn];
      }
    }
  }
}

sp_status_t sp_gemm_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                        const float* b, const sp_tensor_t* c_desc, const float* c, float alpha,
                        float beta, int32_t trans_a, int32_t trans_b, const sp_tensor_t* out_desc,
                        float* out) {
  int32_t M, N, K, asm_, ask, bsk, bsn, cs[SP_MAX_DIMS], m, n;
  if (!sp_tensor_valid(a_desc) || !sp_tensor_valid(b_desc) || !sp_tensor_valid(out_desc) ||
      a_desc->rank != 2 || b_desc->rank != 2 || out_desc->rank != 2)
    return SP_BAD_ARGUMENT;
  M = trans_a ? a_desc->dims[1] : a_desc->dims[0];
  K = trans_a ? a_desc->dims[0] : a_desc->dims[1];
  asm_ = trans_a ? a_desc->strides[1] : a_desc->strides[0];
  ask = trans_a ? a_desc->strides[0] : a_desc->strides[1];
  if ((trans_b ? b_desc->dims[1] : b_desc->dims[0]) != K) return SP_BAD_ARGUMENT;
  N = trans_b ? b_desc->dims[0] : b_desc->dims[1];
  bsk = trans_b ? b_desc->strides[1] : b_desc->strides[0];
  bsn = trans_b ? b_desc->strides[0] : b_desc->strides[1];
  if (out_desc->dims[0] != M || out_desc->dims[1] != N) return SP_BAD_ARGUMENT;
  if (c) {
    if (!sp_tensor_valid(c_desc) || !sp_broadcast_strides(c_desc, 2, out_desc->dims, cs))
      return SP_BAD_ARGUMENT;
  }
  matmul_2d(M, N, K, a, asm_, ask, b, bsk, bsn, out, out_desc->strides[0], out_desc->strides[1]);
  for (m = 0; m < M; ++m) {
    for (n = 0; n < N; ++n) {
      float* o = out + m * out_desc->strides[0] + n * out_desc->strides[1];
      float v = alpha * *o;
      if (c) v += beta * c[m * cs[0] + n * cs[1]];
      *o = v;
    }
  }
  return SP_OK;
}

sp_status_t sp_matmul_f32(const sp_tensor_t* a_desc, const float* a, const sp_tensor_t* b_desc,
                          const float* b, const sp_tensor_t* out_desc, float* out) {
  sp_tensor_t av, bv, ov;
  int32_t d, br, M, N, K, inner, ist[3];
  int32_t bdims[SP_MAX_DIMS + 1], as[SP_MAX_DIMS + 1], bs[SP_MAX_DIMS + 1], os[SP_MAX_DIMS + 1];
  sp_tensor_t abatch, bbatch;
  const int32_t* st[3];
  sp_iter_t it;
  if (!sp_tensor_valid(a_desc) || !sp_tensor_valid(b_desc) || !sp_tensor_valid(out_desc) ||
      a_desc->rank < 1 || b_desc->rank < 1)
    return SP_BAD_ARGUMENT;
  /* Virtual rank >= 2 views: a (K) -> (1, K); b (K) -> (K, 1); out gets the missing axes back. */
  av = *a_desc;
  bv = *b_desc;
  ov = *out_desc;
  if (a_desc->rank == 1) {
    av.rank = 2;
    av.dims[0] = 1;
    av.strides[0] = 0;
    av.dims[1] = a_desc->dims[0];
    av.strides[1] = a_desc->strides[0];
  }
  if (b_desc->rank == 1) {
    bv.rank = 2;
    bv.dims[0] = b_desc->dims[0];
    bv.strides[0] = b_desc->strides[0];
    bv.dims[1] = 1;
    bv.strides[1] = 0;
  }
  if (a_desc->rank == 1) { /* insert M = 1 before the last out axis (or at the end if b is 1-D) */
    int32_t pos = b_desc->rank == 1 ? ov.rank : ov.rank - 1;
    if (pos < 0 || ov.rank >= SP_MAX_DIMS) return SP_BAD_ARGUMENT;
    for (d = ov.rank; d > pos; --d) {
      ov.dims[d] = ov.dims[d - 1];
      ov.strides[d] = ov.strides[d - 1];
    }
    ov.dims[pos] = 1;
    ov.strides[pos] = 0;
    ++ov.rank;
  }
  if (b_desc->rank == 1) {
    if (ov.rank >= SP_MAX_DIMS) return SP_BAD_ARGUMENT;
    ov.dims[ov.rank] = 1;
    ov.strides[ov.rank] = 0;
    ++ov.rank;
  }
  if (ov.rank < 2) return SP_BAD_ARGUMENT;
  M = av.dims[av.rank - 2];
  K = av.dims[av.rank - 1];
  N = bv.dims[bv.rank - 1];
  if (bv.dims[bv.rank - 2] != K || ov.dims[ov.rank - 2] != M || ov.dims[ov.rank - 1] != N)
    return SP_BAD_ARGUMENT;
  /* Batch dims: broadcast a's and b's to out's. */
  br = ov.rank - 2;
  abatch = av;
  abatch.rank = av.rank - 2;
  bbatch = bv;
  bbatch.rank = bv.rank - 2;
  if (!sp_broadcast_strides(&abatch, br, ov.dims, as) ||
      !sp_broadcast_strides(&bbatch, br, ov.dims, bs))
    return SP_BAD_ARGUMENT;
  for (d = 0; d < br; ++d) {
    bdims[d] = ov.dims[d];
    os[d] = ov.strides[d];
  }
  bdims[br] = 1; /* dummy innermost axis for the iterator */
  as[br] = bs[br] = os[br] = 0;
  st[0] = as;
  st[1] = bs;
  st[2] = os;
  if (!sp_iter_init(&it, br + 1, bdims, 3, st, &inner, ist)) return SP_OK;
  do {
    matmul_2d(M, N, K, a + it.off[0], av.strides[av.rank - 2], av.strides[av.rank - 1],
              b + it.off[1], bv.strides[bv.rank - 2], bv.strides[bv.rank - 1], out + it.off[2],
              ov.strides[ov.rank - 2], ov.strides[ov.rank - 1]);
  } while (sp_iter_next(&it));
  return SP_OK;
}

/* ---- Normalisation ------------------------------------------------------------------------- */

sp_status_t sp_batch_norm_f32(const sp_tensor_t* in_desc, const float* in, const float* scale,
                              const float* bias, const float* mean, const float* var,
                              float epsilon, const sp_tensor_t* out_desc, float* out) {
  int32_t c, C, inner, ist[2], i;
  sp_tensor_t iv, ov;
  const int32_t* st[2];
  sp_iter_t it;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || in_desc->rank < 2 ||
      !sp_same_dims(in_desc, out_desc))
    return SP_BAD_ARGUMENT;
  C = in_desc->dims[1];
  /* Per channel: iterate the (N, spatial...) block of channel c. */
  iv = *in_desc;
  ov = *out_desc;
  iv.dims[1] = ov.dims[1] = 1;
  st[0] = iv.strides;
  st[1] = ov.strides;
  for (c = 0; c < C; ++c) {
    const float inv_std = 1.0f / sqrtf(var[c] + epsilon);
    const float sc = scale[c], bi = bias[c], mu = mean[c];
    const float* ib = in + c * in_desc->strides[1];
    float* ob = out + c * out_desc->strides[1];
    if (!sp_iter_init(&it, iv.rank, iv.dims, 2, st, &inner, ist)) return SP_OK;
    do {
      for (i = 0; i < inner; ++i)
        ob[it.off[1] + i * ist[1]] = (ib[it.off[0] + i * ist[0]] - mu) * inv_std * sc + bi;
    } while (sp_iter_next(&it));
  }
  return SP_OK;
}

/* Normalises `rows` blocks: block b of the input starts at in + in_off(b); each block has the
 * dims/strides of `blk` (rank blk_rank). Scale/bias indexed by the running element index within
 * the block (contiguous, row-major) when per_elem, else by the channel ch(b). */
typedef struct {
  int32_t rank;
  int32_t dims[SP_MAX_DIMS + 1];
  int32_t in_st[SP_MAX_DIMS + 1];
  int32_t out_st[SP_MAX_DIMS + 1];
} block_t;

static void normalize_block(const block_t* blk, const float* in, float* out, const float* scale,
                            const float* bias, int per_elem, float ch_scale, float ch_bias,
                            float epsilon) {
  sp_iter_t it;
  int32_t inner, ist[2], i, idx;
  const int32_t* st[2];
  double sum = 0.0, sq = 0.0, cnt = 0.0;
  float mean, inv_std;
  st[0] = blk->in_st;
  st[1] = blk->out_st;
  if (!sp_iter_init(&it, blk->rank, blk->dims, 2, st, &inner, ist)) return;
  do {
    for (i = 0; i < inner; ++i) sum += in[it.off[0] + i * ist[0]];
    cnt += inner;
  } while (sp_iter_next(&it));
  mean = (float)(sum / cnt);
  sp_iter_init(&it, blk->rank, blk->dims, 2, st, &inner, ist);
  do {
    for (i = 0; i < inner; ++i) {
      const double dlt = (double)(in[it.off[0] + i * ist[0]] - mean);
      sq += dlt * dlt;
    }
  } while (sp_iter_next(&it));
  inv_std = (float)(1.0 / sqrt(sq / cnt + (double)epsilon));
  sp_iter_init(&it, blk->rank, blk->dims, 2, st, &inner, ist);
  idx = 0;
  do {
    for (i = 0; i < inner; ++i, ++idx) {
      float y = (in[it.off[0] + i * ist[0]] - mean) * inv_std;
      if (per_elem) {
        if (scale) y *= scale[idx];
        if (bias) y += bias[idx];
      } else {
        y = y * ch_scale + ch_bias;
      }
      out[it.off[1] + i * ist[1]] = y;
    }
  } while (sp_iter_next(&it));
}

sp_status_t sp_layer_norm_f32(const sp_tensor_t* in_desc, const float* in, int32_t axis,
                              const float* scale, const float* bias, float epsilon,
                              const sp_tensor_t* out_desc, float* out) {
  block_t blk;
  int32_t d, r, odims[SP_MAX_DIMS + 1], ois[SP_MAX_DIMS + 1], oos[SP_MAX_DIMS + 1], inner, ist[2];
  const int32_t* st[2];
  sp_iter_t it;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      !sp_same_dims(in_desc, out_desc) || axis < 0 || axis >= in_desc->rank)
    return SP_BAD_ARGUMENT;
  r = in_desc->rank;
  blk.rank = r - axis;
  for (d = axis; d < r; ++d) {
    blk.dims[d - axis] = in_desc->dims[d];
    blk.in_st[d - axis] = in_desc->strides[d];
    blk.out_st[d - axis] = out_desc->strides[d];
  }
  for (d = 0; d < axis; ++d) {
    odims[d] = in_desc->dims[d];
    ois[d] = in_desc->strides[d];
    oos[d] = out_desc->strides[d];
  }
  odims[axis] = 1;
  ois[axis] = oos[axis] = 0;
  st[0] = ois;
  st[1] = oos;
  if (!sp_iter_init(&it, axis + 1, odims, 2, st, &inner, ist)) return SP_OK;
  do {
    normalize_block(&blk, in + it.off[0], out + it.off[1], scale, bias, 1, 1.0f, 0.0f, epsilon);
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_instance_norm_f32(const sp_tensor_t* in_desc, const float* in, const float* scale,
                                 const float* bias, float epsilon, const sp_tensor_t* out_desc,
                                 float* out) {
  block_t blk;
  int32_t d, n, c, r;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || in_desc->rank < 3 ||
      !sp_same_dims(in_desc, out_desc))
    return SP_BAD_ARGUMENT;
  r = in_desc->rank;
  blk.rank = r - 2;
  for (d = 2; d < r; ++d) {
    blk.dims[d - 2] = in_desc->dims[d];
    blk.in_st[d - 2] = in_desc->strides[d];
    blk.out_st[d - 2] = out_desc->strides[d];
  }
  for (n = 0; n < in_desc->dims[0]; ++n) {
    for (c = 0; c < in_desc->dims[1]; ++c) {
      normalize_block(&blk, in + n * in_desc->strides[0] + c * in_desc->strides[1],
                      out + n * out_desc->strides[0] + c * out_desc->strides[1], 0, 0, 0,
                      scale ? scale[c] : 1.0f, bias ? bias[c] : 0.0f, epsilon);
    }
  }
  return SP_OK;
}

/* ---- Pooling ------------------------------------------------------------------------------- */

static int pool_windows_ok(const spatial_t* g) {
  int32_t i;
  for (i = 0; i < 3; ++i) {
    if (g->out[i] == 0) continue;
    if (g->in[i] == 0) return 0;
  }
  return 1;
}

static sp_status_t pool_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* kernel,
                            const int32_t* stride, const int32_t* pad, const int32_t* dilation,
                            int is_max, int32_t count_include_pad, const sp_tensor_t* out_desc,
                            float* out) {
  spatial_t g;
  int32_t n, c, o0, o1, o2, t0, t1, t2;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || kernel == 0) return SP_BAD_ARGUMENT;
  if (!spatial_init(&g, in_desc, out_desc, 0, kernel, stride, pad, dilation)) return SP_BAD_ARGUMENT;
  if (out_desc->dims[0] != in_desc->dims[0] || out_desc->dims[1] != in_desc->dims[1] ||
      !pool_windows_ok(&g))
    return SP_BAD_ARGUMENT;
  for (n = 0; n < in_desc->dims[0]; ++n) {
    for (c = 0; c < in_desc->dims[1]; ++c) {
      const float* ib = in + n * in_desc->strides[0] + c * in_desc->strides[1];
      float* ob = out + n * out_desc->strides[0] + c * out_desc->strides[1];
      for (o0 = 0; o0 < g.out[0]; ++o0) {
        for (o1 = 0; o1 < g.out[1]; ++o1) {
          for (o2 = 0; o2 < g.out[2]; ++o2) {
            const int32_t s0 = o0 * g.s[0] - g.pb[0], s1 = o1 * g.s[1] - g.pb[1],
                          s2 = o2 * g.s[2] - g.pb[2];
            float mx = -INFINITY, sum = 0.0f;
            int32_t count = 0;
            for (t0 = 0; t0 < g.k[0]; ++t0) {
              const int32_t i0 = s0 + t0 * g.d[0];
              if (i0 < 0 || i0 >= g.in[0]) continue;
              for (t1 = 0; t1 < g.k[1]; ++t1) {
                const int32_t i1 = s1 + t1 * g.d[1];
                if (i1 < 0 || i1 >= g.in[1]) continue;
                for (t2 = 0; t2 < g.k[2]; ++t2) {
                  const int32_t i2 = s2 + t2 * g.d[2];
                  float v;
                  if (i2 < 0 || i2 >= g.in[2]) continue;
                  v = ib[i0 * g.in_st[0] + i1 * g.in_st[1] + i2 * g.in_st[2]];
                  if (is_max) {
                    if (v > mx || v != v) mx = v;
                  } else {
                    sum += v;
                  }
                  ++count;
                }
              }
            }
            if (!is_max && count_include_pad) {
              count = (SP_MIN(s0 + g.k[0], g.in[0] + g.pe[0]) - s0) *
                      (SP_MIN(s1 + g.k[1], g.in[1] + g.pe[1]) - s1) *
                      (SP_MIN(s2 + g.k[2], g.in[2] + g.pe[2]) - s2);
            }
            ob[o0 * g.out_st[0] + o1 * g.out_st[1] + o2 * g.out_st[2]] =
                is_max ? mx : (count > 0 ? sum / (float)count : 0.0f);
          }
        }
      }
    }
  }
  return SP_OK;
}

sp_status_t sp_max_pool_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* kernel,
                            const int32_t* stride, const int32_t* pad, const int32_t* dilation,
                            const sp_tensor_t* out_desc, float* out) {
  return pool_f32(in_desc, in, kernel, stride, pad, dilation, 1, 0, out_desc, out);
}

sp_status_t sp_avg_pool_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* kernel,
                            const int32_t* stride, const int32_t* pad, int32_t count_include_pad,
                            const sp_tensor_t* out_desc, float* out) {
  return pool_f32(in_desc, in, kernel, stride, pad, 0, 0, count_include_pad, out_desc, out);
}

/* ---- Reductions ---------------------------------------------------------------------------- */

sp_status_t sp_reduce_f32(const sp_tensor_t* in_desc, const float* in, sp_reduce_op_t op,
                          const int32_t* axes, int32_t n_axes, const sp_tensor_t* out_desc,
                          float* out) {
  int32_t d, r, mask = 0, kr = 0, rr = 0, od = 0, keep;
  int32_t kdims[SP_MAX_DIMS + 1], kin[SP_MAX_DIMS + 1], kout[SP_MAX_DIMS + 1];
  block_t red;
  int32_t inner, ist[2];
  const int32_t* st[2];
  sp_iter_t it;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || n_axes < 0 ||
      (int32_t)op < 0 || (int32_t)op > (int32_t)SP_REDUCE_LOG_SUM_EXP)
    return SP_BAD_ARGUMENT;
  r = in_desc->rank;
  for (d = 0; d < n_axes; ++d) {
    if (axes[d] < 0 || axes[d] >= r || (mask & (1 << axes[d]))) return SP_BAD_ARGUMENT;
    mask |= 1 << axes[d];
  }
  if (out_desc->rank == r) {
    keep = 1;
  } else if (out_desc->rank == r - n_axes) {
    keep = 0;
  } else {
    return SP_BAD_ARGUMENT;
  }
  red.rank = 0;
  for (d = 0; d < r; ++d) {
    if (mask & (1 << d)) {
      if (keep && out_desc->dims[d] != 1) return SP_BAD_ARGUMENT;
      red.dims[rr] = in_desc->dims[d];
      red.in_st[rr] = in_desc->strides[d];
      red.out_st[rr++] = 0;
      if (keep) ++od;
    } else {
      if (out_desc->dims[od] != in_desc->dims[d]) return SP_BAD_ARGUMENT;
      kdims[kr] = in_desc->dims[d];
      kin[kr] = in_desc->strides[d];
      kout[kr++] = out_desc->strides[od++];
    }
  }
  red.rank = rr;
  kdims[kr] = 1;
  kin[kr] = kout[kr] = 0;
  st[0] = kin;
  st[1] = kout;
  if (!sp_iter_init(&it, kr + 1, kdims, 2, st, &inner, ist)) return SP_OK;
  do {
    const float* ib = in + it.off[0];
    sp_iter_t rit;
    int32_t rinner, rist[2], i;
    const int32_t* rst[2];
    double acc = 0.0, cnt = 0.0;
    float fm = 0.0f, res;
    int first = 1;
    if (op == SP_REDUCE_PROD) acc = 1.0;
    if (op == SP_REDUCE_LOG_SUM_EXP) { /* max first, for stability */
      rst[0] = red.in_st;
      rst[1] = red.out_st;
      fm = -INFINITY;
      if (sp_iter_init(&rit, rr, red.dims, 2, rst, &rinner, rist)) {
        do {
          for (i = 0; i < rinner; ++i) {
            const float v = ib[rit.off[0] + i * rist[0]];
            if (v > fm) fm = v;
          }
        } while (sp_iter_next(&rit));
      }
      if (fm == -INFINITY || fm != fm) fm = 0.0f;
    }
    rst[0] = red.in_st;
    rst[1] = red.out_st;
    if (sp_iter_init(&rit, rr, red.dims, 2, rst, &rinner, rist)) {
      do {
        for (i = 0; i < rinner; ++i) {
          const float v = ib[rit.off[0] + i * rist[0]];
          switch (op) {
            case SP_REDUCE_MEAN:
            case SP_REDUCE_SUM:
            case SP_REDUCE_LOG_SUM:
              acc += v;
              break;
            case SP_REDUCE_MAX:
              if (first || v > (float)acc || v != v) acc = v;
              break;
            case SP_REDUCE_MIN:
              if (first || v < (float)acc || v != v) acc = v;
              break;
            case SP_REDUCE_PROD:
              acc *= v;
              break;
            case SP_REDUCE_SUM_SQUARE:
            case SP_REDUCE_L2:
              acc += (double)v * (double)v;
              break;
            case SP_REDUCE_L1:
              acc += fabs((double)v);
              break;
            case SP_REDUCE_LOG_SUM_EXP:
              acc += exp((double)(v - fm));
              break;
          }
          first = 0;
        }
        cnt += rinner;
      } while (sp_iter_next(&rit));
    }
    switch (op) {
      case SP_REDUCE_MEAN:
        res = cnt > 0 ? (float)(acc / cnt) : NAN;
        break;
      case SP_REDUCE_MAX:
        res = first ? -INFINITY : (float)acc;
        break;
      case SP_REDUCE_MIN:
        res = first ? INFINITY : (float)acc;
        break;
      case SP_REDUCE_L2:
        res = (float)sqrt(acc);
        break;
      case SP_REDUCE_LOG_SUM:
        res = (float)log(acc);
        break;
      case SP_REDUCE_LOG_SUM_EXP:
        res = (float)(log(acc) + (double)fm);
        break;
      default:
        res = (float)acc;
        break;
    }
    out[it.off[1]] = res;
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_reduce_mean_f32(const sp_tensor_t* in_desc, const float* in, const int32_t* axes,
                               int32_t n_axes, const sp_tensor_t* out_desc, float* out) {
  return sp_reduce_f32(in_desc, in, SP_REDUCE_MEAN, axes, n_axes, out_desc, out);
}

static sp_status_t global_pool(const sp_tensor_t* in_desc, const float* in,
                               const sp_tensor_t* out_desc, float* out, sp_reduce_op_t op) {
  int32_t axes[SP_MAX_DIMS], d;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || in_desc->rank < 3 ||
      out_desc->rank != in_desc->rank)
    return SP_BAD_ARGUMENT;
  for (d = 2; d < in_desc->rank; ++d) axes[d - 2] = d;
  return sp_reduce_f32(in_desc, in, op, axes, in_desc->rank - 2, out_desc, out);
}

sp_status_t sp_global_avg_pool_f32(const sp_tensor_t* in_desc, const float* in,
                                   const sp_tensor_t* out_desc, float* out) {
  return global_pool(in_desc, in, out_desc, out, SP_REDUCE_MEAN);
}

sp_status_t sp_global_max_pool_f32(const sp_tensor_t* in_desc, const float* in,
                                   const sp_tensor_t* out_desc, float* out) {
  return global_pool(in_desc, in, out_desc, out, SP_REDUCE_MAX);
}

/* ---- Linear resize ------------------------------------------------------------------------- */

/* Source coordinate of x (float), clamped to [0, in - 1]. */
static float linear_source(int32_t x, int32_t in, int32_t out, sp_coord_mode_t coord) {
  float src = 0.0f;
  const float scale = (float)in / (float)out;
  switch (coord) {
    case SP_COORD_HALF_PIXEL:
      src = ((float)x + 0.5f) * scale - 0.5f;
      break;
    case SP_COORD_PYTORCH_HALF_PIXEL:
      src = out > 1 ? ((float)x + 0.5f) * scale - 0.5f : 0.0f;
      break;
    case SP_COORD_ASYMMETRIC:
      src = (float)x * scale;
      break;
    case SP_COORD_ALIGN_CORNERS:
      src = out > 1 ? (float)x * (float)(in - 1) / (float)(out - 1) : 0.0f;
      break;
    default:
      break;
  }
  if (src < 0.0f) src = 0.0f;
  if (src > (float)(in - 1)) src = (float)(in - 1);
  return src;
}

sp_status_t sp_resize_linear_f32(const sp_tensor_t* in_desc, const float* in,
                                 sp_coord_mode_t coord, const sp_tensor_t* out_desc, float* out) {
  int32_t d, r, H, W, OH, OW, oh, ow, odims[SP_MAX_DIMS], inner, ist[2];
  const int32_t* st[2];
  sp_iter_t it;
  if (!sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) || in_desc->rank < 2 ||
      out_desc->rank != in_desc->rank || (int32_t)coord < 0 || (int32_t)coord > 3)
    return SP_BAD_ARGUMENT;
  r = in_desc->rank;
  for (d = 0; d < r - 2; ++d) {
    if (in_desc->dims[d] != out_desc->dims[d]) return SP_BAD_ARGUMENT;
    odims[d] = in_desc->dims[d];
  }
  H = in_desc->dims[r - 2];
  W = in_desc->dims[r - 1];
  OH = out_desc->dims[r - 2];
  OW = out_desc->dims[r - 1];
  if ((OH > 0 && H == 0) || (OW > 0 && W == 0)) return SP_BAD_ARGUMENT;
  /* Iterate the leading dims with a dummy innermost axis. */
  odims[r - 2] = 1;
  {
    int32_t is_[SP_MAX_DIMS], os_[SP_MAX_DIMS];
    for (d = 0; d < r - 2; ++d) {
      is_[d] = in_desc->strides[d];
      os_[d] = out_desc->strides[d];
    }
    is_[r - 2] = os_[r - 2] = 0;
    st[0] = is_;
    st[1] = os_;
    if (!sp_iter_init(&it, r - 1, odims, 2, st, &inner, ist)) return SP_OK;
    do {
      const float* ib = in + it.off[0];
      float* ob = out + it.off[1];
      const int32_t hs = in_desc->strides[r - 2], wsd = in_desc->strides[r - 1];
      for (oh = 0; oh < OH; ++oh) {
        const float sy = linear_source(oh, H, OH, coord);
        const int32_t y0 = (int32_t)sy, y1 = SP_MIN(y0 + 1, H - 1);
        const float ly = sy - (float)y0;
        for (ow = 0; ow < OW; ++ow) {
          const float sx = linear_source(ow, W, OW, coord);
          const int32_t x0 = (int32_t)sx, x1 = SP_MIN(x0 + 1, W - 1);
          const float lx = sx - (float)x0;
          const float v00 = ib[y0 * hs + x0 * wsd], v01 = ib[y0 * hs + x1 * wsd];
          const float v10 = ib[y1 * hs + x0 * wsd], v11 = ib[y1 * hs + x1 * wsd];
          const float top = v00 + (v01 - v00) * lx;
          const float bot = v10 + (v11 - v10) * lx;
          ob[oh * out_desc->strides[r - 2] + ow * out_desc->strides[r - 1]] = top + (bot - top) * ly;
        }
      }
    } while (sp_iter_next(&it));
  }
  return SP_OK;
}
