/* sramplan runtime: type-generic data movement (integer-only, MCU-safe). */
#include <string.h>

#include "sp_internal.h"
#include "sramplan_rt.h"

static int valid_elem_size(int32_t es) { return es == 1 || es == 2 || es == 4 || es == 8; }

/* Copies n elements of es bytes: dst[i * dst_st] = src[i * src_st] (strides in elements). */
static void copy_run(char* dst, int32_t dst_st, const char* src, int32_t src_st, int32_t n,
                     int32_t es) {
  int32_t i;
  const int32_t db = dst_st * es, sb = src_st * es;
  switch (es) {
    case 1: { /* four bytes per iteration (TinyEngine's in-place depthwise copies planes this way) */
      const char* sp = src;
      char* dp = dst;
      for (i = 0; i + 4 <= n; i += 4, sp += 4 * sb, dp += 4 * db) {
        const char b0 = sp[0], b1 = sp[sb], b2 = sp[2 * sb], b3 = sp[3 * sb];
        dp[0] = b0;
        dp[db] = b1;
        dp[2 * db] = b2;
        dp[3 * db] = b3;
      }
      for (; i < n; ++i, sp += sb, dp += db) *dp = *sp;
      break;
    }
    case 2:
      for (i = 0; i < n; ++i) memcpy(dst + i * db, src + i * sb, 2);
      break;
    case 4:
      for (i = 0; i < n; ++i) memcpy(dst + i * db, src + i * sb, 4);
      break;
    default:
      for (i = 0; i < n; ++i) memcpy(dst + i * db, src + i * sb, 8);
      break;
  }
}

/* Copies a strided block of `rank` dims (src strides may be 0 or negative; offsets in elements). */
static void copy_block(int32_t rank, const int32_t* dims, const char* src, const int32_t* src_st,
                       char* dst, const int32_t* dst_st, int32_t es) {
  sp_iter_t it;
  int32_t inner, inner_st[2];
  const int32_t* st[2];
  st[0] = src_st;
  st[1] = dst_st;
  if (!sp_iter_init(&it, rank, dims, 2, st, &inner, inner_st)) return;
  do {
    copy_run(dst + it.off[1] * es, inner_st[1], src + it.off[0] * es, inner_st[0], inner, es);
  } while (sp_iter_next(&it));
}

sp_status_t sp_copy(const sp_tensor_t* in_desc, const void* in, int32_t elem_size,
                    const sp_tensor_t* out_desc, void* out) {
  int32_t st[SP_MAX_DIMS];
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc))
    return SP_BAD_ARGUMENT;
  if (!sp_broadcast_strides(in_desc, out_desc->rank, out_desc->dims, st)) return SP_BAD_ARGUMENT;
  if (sp_tensor_numel(in_desc) == 0 && sp_tensor_numel(out_desc) != 0) return SP_BAD_ARGUMENT;
  copy_block(out_desc->rank, out_desc->dims, (const char*)in, st, (char*)out, out_desc->strides,
             elem_size);
  return SP_OK;
}

sp_status_t sp_expand(const sp_tensor_t* in_desc, const void* in, int32_t elem_size,
                      const sp_tensor_t* out_desc, void* out) {
  return sp_copy(in_desc, in, elem_size, out_desc, out);
}

sp_status_t sp_tile(const sp_tensor_t* in_desc, const void* in, int32_t elem_size,
                    const sp_tensor_t* out_desc, void* out) {
  int32_t d, rank = in_desc->rank, reps[SP_MAX_DIMS], t[SP_MAX_DIMS];
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      out_desc->rank != rank)
    return SP_BAD_ARGUMENT;
  for (d = 0; d < rank; ++d) {
    if (in_desc->dims[d] == 0) {
      if (out_desc->dims[d] != 0) return SP_BAD_ARGUMENT;
      reps[d] = 0;
    } else {
      if (out_desc->dims[d] % in_desc->dims[d] != 0) return SP_BAD_ARGUMENT;
      reps[d] = out_desc->dims[d] / in_desc->dims[d];
    }
    t[d] = 0;
  }
  for (d = 0; d < rank; ++d) {
    if (reps[d] == 0) return SP_OK;
  }
  for (;;) {
    int32_t off = 0;
    for (d = 0; d < rank; ++d) off += t[d] * in_desc->dims[d] * out_desc->strides[d];
    copy_block(rank, in_desc->dims, (const char*)in, in_desc->strides,
               (char*)out + (int32_t)off * elem_size, out_desc->strides, elem_size);
    for (d = rank - 1; d >= 0; --d) {
      if (++t[d] < reps[d]) break;
      t[d] = 0;
    }
    if (d < 0) break;
  }
  return SP_OK;
}

sp_status_t sp_concat(int32_t n, const sp_tensor_t* const* in_descs, const void* const* ins,
                      int32_t axis, int32_t elem_size, const sp_tensor_t* out_desc, void* out) {
  int32_t i, d, pos = 0;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(out_desc) || n < 0 || axis < 0 ||
      axis >= out_desc->rank)
    return SP_BAD_ARGUMENT;
  for (i = 0; i < n; ++i) {
    const sp_tensor_t* t = in_descs[i];
    if (!sp_tensor_valid(t) || t->rank != out_desc->rank) return SP_BAD_ARGUMENT;
    for (d = 0; d < t->rank; ++d) {
      if (d != axis && t->dims[d] != out_desc->dims[d]) return SP_BAD_ARGUMENT;
    }
    pos += t->dims[axis];
  }
  if (pos != out_desc->dims[axis]) return SP_BAD_ARGUMENT;
  pos = 0;
  for (i = 0; i < n; ++i) {
    const sp_tensor_t* t = in_descs[i];
    copy_block(t->rank, t->dims, (const char*)ins[i], t->strides,
               (char*)out + pos * out_desc->strides[axis] * elem_size, out_desc->strides,
               elem_size);
    pos += t->dims[axis];
  }
  return SP_OK;
}

sp_status_t sp_slice(const sp_tensor_t* in_desc, const void* in, const int32_t* starts,
                     const int32_t* steps, int32_t elem_size, const sp_tensor_t* out_desc,
                     void* out) {
  int32_t d, st[SP_MAX_DIMS], base = 0;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      in_desc->rank != out_desc->rank)
    return SP_BAD_ARGUMENT;
  if (sp_tensor_numel(out_desc) == 0) return SP_OK;
  for (d = 0; d < in_desc->rank; ++d) {
    int32_t step = steps ? steps[d] : 1;
    int32_t last = starts[d] + (out_desc->dims[d] - 1) * step;
    if (step == 0 || starts[d] < 0 || starts[d] >= in_desc->dims[d] || last < 0 ||
        last >= in_desc->dims[d])
      return SP_BAD_ARGUMENT;
    st[d] = step * in_desc->strides[d];
    base += starts[d] * in_desc->strides[d];
  }
  copy_block(out_desc->rank, out_desc->dims, (const char*)in + base * elem_size, st, (char*)out,
             out_desc->strides, elem_size);
  return SP_OK;
}

sp_status_t sp_gather(const sp_tensor_t* in_desc, const void* in, int32_t axis,
                      const sp_tensor_t* idx_desc, const int64_t* indices, int32_t elem_size,
                      const sp_tensor_t* out_desc, void* out) {
  int32_t d, r = in_desc->rank, q, rest_rank = 0;
  int32_t rest_dims[SP_MAX_DIMS], rest_in_st[SP_MAX_DIMS], rest_out_st[SP_MAX_DIMS];
  int32_t idx_out_st[SP_MAX_DIMS];
  const int32_t* st[2];
  int32_t inner, inner_st[2], i;
  sp_iter_t it;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(idx_desc) ||
      !sp_tensor_valid(out_desc) || axis < 0 || axis >= r)
    return SP_BAD_ARGUMENT;
  q = idx_desc->rank;
  if (out_desc->rank != r - 1 + q) return SP_BAD_ARGUMENT;
  for (d = 0; d < axis; ++d) {
    if (out_desc->dims[d] != in_desc->dims[d]) return SP_BAD_ARGUMENT;
    rest_dims[rest_rank] = in_desc->dims[d];
    rest_in_st[rest_rank] = in_desc->strides[d];
    rest_out_st[rest_rank++] = out_desc->strides[d];
  }
  for (d = 0; d < q; ++d) {
    if (out_desc->dims[axis + d] != idx_desc->dims[d]) return SP_BAD_ARGUMENT;
    idx_out_st[d] = out_desc->strides[axis + d];
  }
  for (d = axis + 1; d < r; ++d) {
    if (out_desc->dims[d - 1 + q] != in_desc->dims[d]) return SP_BAD_ARGUMENT;
    rest_dims[rest_rank] = in_desc->dims[d];
    rest_in_st[rest_rank] = in_desc->strides[d];
    rest_out_st[rest_rank++] = out_desc->strides[d - 1 + q];
  }
  st[0] = idx_desc->strides;
  st[1] = idx_out_st;
  /* Validate every index first so that nothing is written on error. */
  if (!sp_iter_init(&it, q, idx_desc->dims, 2, st, &inner, inner_st)) return SP_OK;
  do {
    for (i = 0; i < inner; ++i) {
      int64_t v = indices[it.off[0] + i * inner_st[0]];
      if (v < -(int64_t)in_desc->dims[axis] || v >= (int64_t)in_desc->dims[axis])
        return SP_BAD_ARGUMENT;
    }
  } while (sp_iter_next(&it));
  sp_iter_init(&it, q, idx_desc->dims, 2, st, &inner, inner_st);
  do {
    for (i = 0; i < inner; ++i) {
      int64_t v = indices[it.off[0] + i * inner_st[0]];
      int32_t src;
      if (v < 0) v += in_desc->dims[axis];
      src = (int32_t)v * in_desc->strides[axis];
      copy_block(rest_rank, rest_dims, (const char*)in + src * elem_size, rest_in_st,
                 (char*)out + (it.off[1] + i * inner_st[1]) * elem_size, rest_out_st, elem_size);
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_transpose(const sp_tensor_t* in_desc, const void* in, const int32_t* perm,
                         int32_t elem_size, const sp_tensor_t* out_desc, void* out) {
  int32_t d, r = in_desc->rank, st[SP_MAX_DIMS], seen = 0;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      out_desc->rank != r)
    return SP_BAD_ARGUMENT;
  for (d = 0; d < r; ++d) {
    if (perm[d] < 0 || perm[d] >= r || (seen & (1 << perm[d]))) return SP_BAD_ARGUMENT;
    seen |= 1 << perm[d];
    if (out_desc->dims[d] != in_desc->dims[perm[d]]) return SP_BAD_ARGUMENT;
    st[d] = in_desc->strides[perm[d]];
  }
  copy_block(r, out_desc->dims, (const char*)in, st, (char*)out, out_desc->strides, elem_size);
  return SP_OK;
}

/* Source index of output index o along an axis padded by `begin`; -1 = constant padding. */
static int32_t pad_source(int32_t o, int32_t begin, int32_t n, sp_pad_mode_t mode) {
  int32_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case SP_PAD_REFLECT:
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
      return i;
    case SP_PAD_EDGE:
      return i < 0 ? 0 : n - 1;
    case SP_PAD_CONSTANT:
    default:
      return -1;
  }
}

sp_status_t sp_pad(const sp_tensor_t* in_desc, const void* in, const int32_t* pads,
                   sp_pad_mode_t mode, const void* value, int32_t elem_size,
                   const sp_tensor_t* out_desc, void* out) {
  int32_t d, r = in_desc->rank, inner, inner_st, i;
  const int32_t* st[1];
  sp_iter_t it;
  const char* src = (const char*)in;
  char* dst = (char*)out;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      out_desc->rank != r || (mode != SP_PAD_CONSTANT && mode != SP_PAD_REFLECT &&
                              mode != SP_PAD_EDGE))
    return SP_BAD_ARGUMENT;
  for (d = 0; d < r; ++d) {
    int32_t b = pads[d], e = pads[r + d], n = in_desc->dims[d];
    if (out_desc->dims[d] != n + b + e || out_desc->dims[d] < 0) return SP_BAD_ARGUMENT;
    if (mode == SP_PAD_REFLECT && (b > 0 || e > 0) && (b >= n || e >= n)) return SP_BAD_ARGUMENT;
    if (mode == SP_PAD_EDGE && n == 0 && out_desc->dims[d] > 0) return SP_BAD_ARGUMENT;
  }
  if (mode == SP_PAD_CONSTANT && value == 0) return SP_BAD_ARGUMENT;
  st[0] = out_desc->strides;
  if (!sp_iter_init(&it, r, out_desc->dims, 1, st, &inner, &inner_st)) return SP_OK;
  do {
    int32_t src_off = 0, outside = 0;
    for (d = 0; d < it.rank; ++d) {
      int32_t s = pad_source(it.idx[d], pads[d], in_desc->dims[d], mode);
      if (s < 0) {
        outside = 1;
        break;
      }
      src_off += s * in_desc->strides[d];
    }
    for (i = 0; i < inner; ++i) {
      char* o = dst + (it.off[0] + i * inner_st) * elem_size;
      int32_t s = -1;
      if (!outside) {
        if (r == 0) {
          s = 0;
        } else {
          s = pad_source(i, pads[r - 1], in_desc->dims[r - 1], mode);
        }
      }
      if (s < 0) {
        memcpy(o, value, (size_t)elem_size);
      } else {
        int32_t off = src_off + (r > 0 ? s * in_desc->strides[r - 1] : 0);
        memcpy(o, src + off * elem_size, (size_t)elem_size);
      }
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_resize_nearest(const sp_tensor_t* in_desc, const void* in, sp_coord_mode_t coord,
                              sp_nearest_mode_t nearest, int32_t elem_size,
                              const sp_tensor_t* out_desc, void* out) {
  int32_t d, r = in_desc->rank, inner, inner_st, i;
  const int32_t* st[1];
  sp_iter_t it;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(in_desc) || !sp_tensor_valid(out_desc) ||
      out_desc->rank != r || (int32_t)coord < 0 || (int32_t)coord > 4 || (int32_t)nearest < 0 ||
      (int32_t)nearest > 3)
    return SP_BAD_ARGUMENT;
  for (d = 0; d < r; ++d) {
    if (out_desc->dims[d] > 0 && in_desc->dims[d] == 0) return SP_BAD_ARGUMENT;
    /* Exact integer coordinates need (2 * out + 1) * in < 2^31. */
    if (in_desc->dims[d] > 16384 || out_desc->dims[d] > 16384) {
      if (in_desc->dims[d] != out_desc->dims[d]) return SP_BAD_ARGUMENT;
    }
  }
  st[0] = out_desc->strides;
  if (!sp_iter_init(&it, r, out_desc->dims, 1, st, &inner, &inner_st)) return SP_OK;
  do {
    int32_t src_off = 0;
    for (d = 0; d < it.rank; ++d) {
      src_off += sp_nearest_source_index(it.idx[d], in_desc->dims[d], out_desc->dims[d], coord,
                                         nearest) *
                 in_desc->strides[d];
    }
    for (i = 0; i < inner; ++i) {
      int32_t off = src_off;
      if (r > 0) {
        off += sp_nearest_source_index(i, in_desc->dims[r - 1], out_desc->dims[r - 1], coord,
                                       nearest) *
               in_desc->strides[r - 1];
      }
      memcpy((char*)out + (it.off[0] + i * inner_st) * elem_size,
             (const char*)in + off * elem_size, (size_t)elem_size);
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}

sp_status_t sp_where(const sp_tensor_t* cond_desc, const uint8_t* cond, const sp_tensor_t* x_desc,
                     const void* x, const sp_tensor_t* y_desc, const void* y, int32_t elem_size,
                     const sp_tensor_t* out_desc, void* out) {
  int32_t r, cs[SP_MAX_DIMS], xs[SP_MAX_DIMS], ys[SP_MAX_DIMS], inner, inner_st[4], i;
  const int32_t* st[4];
  sp_iter_t it;
  if (!valid_elem_size(elem_size) || !sp_tensor_valid(cond_desc) || !sp_tensor_valid(x_desc) ||
      !sp_tensor_valid(y_desc) || !sp_tensor_valid(out_desc))
    return SP_BAD_ARGUMENT;
  r = out_desc->rank;
  if (!sp_broadcast_strides(cond_desc, r, out_desc->dims, cs) ||
      !sp_broadcast_strides(x_desc, r, out_desc->dims, xs) ||
      !sp_broadcast_strides(y_desc, r, out_desc->dims, ys))
    return SP_BAD_ARGUMENT;
  st[0] = cs;
  st[1] = xs;
  st[2] = ys;
  st[3] = out_desc->strides;
  if (!sp_iter_init(&it, r, out_desc->dims, 4, st, &inner, inner_st)) return SP_OK;
  do {
    for (i = 0; i < inner; ++i) {
      const char* src = cond[it.off[0] + i * inner_st[0]]
                            ? (const char*)x + (it.off[1] + i * inner_st[1]) * elem_size
                            : (const char*)y + (it.off[2] + i * inner_st[2]) * elem_size;
      memcpy((char*)out + (it.off[3] + i * inner_st[3]) * elem_size, src, (size_t)elem_size);
    }
  } while (sp_iter_next(&it));
  return SP_OK;
}
