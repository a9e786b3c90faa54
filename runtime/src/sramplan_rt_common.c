/* sramplan runtime: tensor descriptor helpers and shared iteration (integer-only, MCU-safe). */
#include <string.h>

#include "sp_internal.h"
#include "sramplan_rt.h"

void sp_tensor_init_contiguous(sp_tensor_t* t, int32_t rank, const int32_t* dims) {
  int32_t i, s = 1;
  memset(t, 0, sizeof(*t));
  if (rank < 0) rank = 0;
  if (rank > SP_MAX_DIMS) rank = SP_MAX_DIMS;
  t->rank = rank;
  for (i = rank - 1; i >= 0; --i) {
    t->dims[i] = dims[i];
    t->strides[i] = s;
    s *= dims[i];
  }
}

void sp_tensor_init_nchw(sp_tensor_t* t, int32_t n, int32_t c, int32_t h, int32_t w) {
  int32_t dims[4];
  dims[0] = n;
  dims[1] = c;
  dims[2] = h;
  dims[3] = w;
  sp_tensor_init_contiguous(t, 4, dims);
}

void sp_tensor_init_nhwc(sp_tensor_t* t, int32_t n, int32_t c, int32_t h, int32_t w) {
  memset(t, 0, sizeof(*t));
  t->rank = 4;
  t->dims[0] = n;
  t->dims[1] = c;
  t->dims[2] = h;
  t->dims[3] = w;
  t->strides[0] = h * w * c;
  t->strides[1] = 1;
  t->strides[2] = w * c;
  t->strides[3] = c;
}

int32_t sp_tensor_numel(const sp_tensor_t* t) {
  int32_t i, n = 1;
  for (i = 0; i < t->rank; ++i) n *= t->dims[i];
  return n;
}

int32_t sp_tensor_span(const sp_tensor_t* t) {
  int32_t i, span = 1;
  for (i = 0; i < t->rank; ++i) {
    if (t->dims[i] == 0) return 0;
    span += (t->dims[i] - 1) * t->strides[i];
  }
  return span;
}

int sp_tensor_valid(const sp_tensor_t* t) {
  int32_t i;
  if (t == 0 || t->rank < 0 || t->rank > SP_MAX_DIMS) return 0;
  for (i = 0; i < t->rank; ++i) {
    if (t->dims[i] < 0 || t->strides[i] < 0) return 0;
  }
  return 1;
}

int sp_same_dims(const sp_tensor_t* a, const sp_tensor_t* b) {
  int32_t i;
  if (a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

int sp_iter_init(sp_iter_t* it, int32_t rank, const int32_t* dims, int32_t nops,
                 const int32_t* const* strides, int32_t* inner_dim, int32_t* inner_strides) {
  int32_t d, k;
  memset(it, 0, sizeof(*it));
  it->rank = rank > 0 ? rank - 1 : 0;
  it->nops = nops;
  for (d = 0; d < rank; ++d) {
    if (dims[d] == 0) return 0;
  }
  for (d = 0; d < it->rank; ++d) {
    it->dims[d] = dims[d];
    for (k = 0; k < nops; ++k) it->strides[k][d] = strides[k][d];
  }
  *inner_dim = rank > 0 ? dims[rank - 1] : 1;
  for (k = 0; k < nops; ++k) inner_strides[k] = rank > 0 ? strides[k][rank - 1] : 0;
  return 1;
}

int sp_broadcast_strides(const sp_tensor_t* t, int32_t rank, const int32_t* out_dims,
                         int32_t* strides) {
  int32_t d, lead = rank - t->rank;
  if (lead < 0) return 0;
  for (d = 0; d < rank; ++d) {
    int32_t td = d - lead;
    if (td < 0) {
      strides[d] = 0;
      continue;
    }
    if (t->dims[td] == out_dims[d]) {
      strides[d] = t->strides[td];
    } else if (t->dims[td] == 1) {
      strides[d] = 0;
    } else {
      return 0;
    }
  }
  return 1;
}

int32_t sp_nearest_source_index(int32_t x, int32_t in, int32_t out, sp_coord_mode_t coord,
                                sp_nearest_mode_t nearest) {
  int32_t num = 0, den = 1, fl, rem, r;
  if (in == out && coord != SP_COORD_TF_HALF_PIXEL_FOR_NN) return x;
  switch (coord) {
    case SP_COORD_ASYMMETRIC:
      num = x * in;
      den = out;
      break;
    case SP_COORD_HALF_PIXEL:
      num = (2 * x + 1) * in - out;
      den = 2 * out;
      break;
    case SP_COORD_PYTORCH_HALF_PIXEL:
      if (out > 1) {
        num = (2 * x + 1) * in - out;
        den = 2 * out;
      }
      break;
    case SP_COORD_ALIGN_CORNERS:
      if (out > 1) {
        num = x * (in - 1);
        den = out - 1;
      }
      break;
    case SP_COORD_TF_HALF_PIXEL_FOR_NN:
      num = (2 * x + 1) * in;
      den = 2 * out;
      break;
  }
  fl = sp_floor_div_i32(num, den);
  rem = num - fl * den;
  switch (nearest) {
    case SP_NEAREST_FLOOR:
      r = fl;
      break;
    case SP_NEAREST_CEIL:
      r = rem != 0 ? fl + 1 : fl;
      break;
    case SP_NEAREST_ROUND_PREFER_CEIL:
      r = 2 * rem >= den ? fl + 1 : fl;
      break;
    case SP_NEAREST_ROUND_PREFER_FLOOR:
    default:
      r = 2 * rem > den ? fl + 1 : fl;
      break;
  }
  return sp_clamp_i32(r, 0, in - 1);
}
