/* One int8 layer run once, plain or segment-aware, for instruction counting under
 * valgrind --tool=callgrind --toggle-collect=sp_bench_run_* (bench/seg_kernels_callgrind.sh).
 *
 * Usage: bench_seg_kernels_driver CASE plain|seg
 * Cases (vMCU's evaluation shapes, NHWC int8, batch 1):
 *   pw      pointwise 80x80, 16 -> 16            (the paper's named layer)
 *   pw2     pointwise 44x44, 16 -> 80            (MCUNet-320KB b3_expand)
 *   fc      fully connected 1 x 1024 -> 1000
 *   conv    3x3 conv 20x20, 16 -> 16, pad 1
 *   dw      3x3 depthwise 20x20x48, pad 1
 *   bn      inverted bottleneck 20x20, 16/48/16, 3x3 stride 1, residual (plain: expand, dw, project, add)
 *   bn2     inverted bottleneck 40x40, 16/48/24, 3x3 stride 2 (plain: expand, dw, project)
 * The segment-aware run places its output at the kernel's own minimal safe shift below its input
 * (sp_seg_sim_min_shift) in a pool, as a vmcu plan does. Data is deterministic. Exit 0 on success. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sramplan_rt.h"
#include "sramplan_rt_int8.h"
#include "sramplan_rt_seg.h"

static uint32_t rng = 12345u;
static int8_t next_s8(void) {
  rng = rng * 1664525u + 1013904223u;
  return (int8_t)((int32_t)(rng >> 24) - 128);
}
static int8_t* bytes(int32_t n) {
  int8_t* p = (int8_t*)malloc((size_t)n + 1);
  for (int32_t i = 0; i < n; ++i) p[i] = next_s8();
  return p;
}
static int32_t* biases(int32_t n) {
  int32_t* b = (int32_t*)malloc(sizeof(int32_t) * (size_t)n);
  for (int32_t i = 0; i < n; ++i) b[i] = (int32_t)next_s8() * 8;
  return b;
}
static sp_requant_t* requants(int32_t n) {
  sp_requant_t* r = (sp_requant_t*)malloc(sizeof(sp_requant_t) * (size_t)n);
  for (int32_t i = 0; i < n; ++i) {
    r[i].multiplier = 1200000000 + i * 1000;
    r[i].shift = -9;
  }
  return r;
}
static sp_tensor_t nhwc(int32_t c, int32_t h, int32_t w) {
  sp_tensor_t t;
  sp_tensor_init_nhwc(&t, 1, c, h, w);
  return t;
}
/* Weights [K][R][S][C] (dense) or [R][S][C] seen as (K=C, 1, R, S) (depthwise). */
static sp_tensor_t weights(int32_t k, int32_t c, int32_t r, int32_t s, int dw) {
  sp_tensor_t t;
  memset(&t, 0, sizeof t);
  t.rank = 4;
  t.dims[0] = k;
  t.dims[1] = dw ? 1 : c;
  t.dims[2] = r;
  t.dims[3] = s;
  t.strides[0] = dw ? 1 : r * s * c;
  t.strides[1] = dw ? 0 : 1;
  t.strides[2] = s * c;
  t.strides[3] = c;
  return t;
}

enum { kPool = 1 << 20, kIn = 600000 };
static int8_t* pool;
static int8_t workspace[8192];

typedef struct {
  sp_seg_layer_desc_t desc;
  sp_seg_conv_shape_t conv;
  sp_seg_layer_s8_t layer;
  sp_seg_bottleneck_shape_t bshape;
  sp_seg_bottleneck_s8_t bparams;
  sp_add_s8_params_t add;
  sp_seg_fc_shape_t fc;
  int32_t out_start;
} seg_case_t;

/* ---- the measured functions ---- */
__attribute__((noinline)) int sp_bench_run_plain_conv(const sp_tensor_t* id, const int8_t* in, const sp_tensor_t* wd,
                                                      const sp_seg_layer_s8_t* l, const int32_t st[2],
                                                      const int32_t pad[4], int32_t groups, const sp_tensor_t* od,
                                                      int8_t* out) {
  const int32_t dil[2] = {1, 1};
  return sp_conv_s8(id, in, l->in_zp, wd, l->weights, l->bias, l->rq, l->out_zp, l->act_min, l->act_max, st, pad, dil,
                    groups, od, out);
}
__attribute__((noinline)) int sp_bench_run_plain_fc(const sp_tensor_t* id, const int8_t* in, const sp_tensor_t* wd,
                                                    const sp_seg_layer_s8_t* l, const sp_tensor_t* od, int8_t* out) {
  return sp_fully_connected_s8(id, in, l->in_zp, wd, l->weights, l->bias, l->rq, l->out_zp, l->act_min, l->act_max, od,
                               out);
}
__attribute__((noinline)) int sp_bench_run_plain_bottleneck(const seg_case_t* c, const int8_t* in, int8_t* b, int8_t* cc,
                                                            int8_t* d, int8_t* e) {
  const sp_seg_bottleneck_shape_t* s = &c->bshape;
  const int32_t oh = sp_seg_bottleneck_out_h(s), ow = sp_seg_bottleneck_out_w(s);
  /* The expansion: pointwise, or a Conv2D (a stem) e_r x e_s with stride and padding. */
  const int conv = s->e_r > 0;
  const int32_t er = conv ? s->e_r : 1, es = conv ? s->e_s : 1;
  const int32_t est[2] = {conv ? s->e_stride_h : 1, conv ? s->e_stride_w : 1};
  const int32_t ep[4] = {conv ? s->e_pad_top : 0, conv ? s->e_pad_left : 0, conv ? s->e_pad_bottom : 0,
                         conv ? s->e_pad_right : 0};
  const int32_t mh = (s->h + ep[0] + ep[2] - er) / est[0] + 1, mw = (s->w + ep[1] + ep[3] - es) / est[1] + 1;
  sp_tensor_t id = nhwc(s->c_in, s->h, s->w), bd = nhwc(s->c_mid, mh, mw), cd = nhwc(s->c_mid, oh, ow),
              dd = nhwc(s->c_out, oh, ow);
  sp_tensor_t we = weights(s->c_mid, s->c_in, er, es, 0), wdw = weights(s->c_mid, s->c_mid, s->r, s->s, 1),
              wp = weights(s->c_out, s->c_mid, 1, 1, 0);
  const int32_t one[2] = {1, 1}, st[2] = {s->stride_h, s->stride_w}, p0[4] = {0, 0, 0, 0},
                p1[4] = {s->pad_top, s->pad_left, s->pad_bottom, s->pad_right};
  const sp_seg_layer_s8_t *x = &c->bparams.expand, *y = &c->bparams.depthwise, *z = &c->bparams.project;
  int r = sp_conv_s8(&id, in, x->in_zp, &we, x->weights, x->bias, x->rq, x->out_zp, x->act_min, x->act_max, est, ep, one,
                     1, &bd, b);
  r |= sp_conv_s8(&bd, b, y->in_zp, &wdw, y->weights, y->bias, y->rq, y->out_zp, y->act_min, y->act_max, st, p1, one,
                  s->c_mid, &cd, cc);
  r |= sp_conv_s8(&cd, cc, z->in_zp, &wp, z->weights, z->bias, z->rq, z->out_zp, z->act_min, z->act_max, one, p0, one, 1,
                  &dd, d);
  if (s->has_residual) r |= sp_add_s8(&id, in, &dd, d, &c->add, &dd, e);
  return r;
}
__attribute__((noinline)) int sp_bench_run_seg(const char* what, const sp_seg_pool_t* p, seg_case_t* c) {
  if (!strcmp(what, "fc"))
    return sp_seg_fully_connected_s8(p, kIn, c->out_start, &c->fc, &c->layer, workspace, (int32_t)sizeof workspace);
  if (!strcmp(what, "pw") || !strcmp(what, "pw2"))
    return sp_seg_pointwise_s8(p, kIn, c->out_start, &c->conv, &c->layer, workspace, (int32_t)sizeof workspace);
  if (!strcmp(what, "dw"))
    return sp_seg_depthwise_s8(p, kIn, c->out_start, &c->conv, &c->layer, workspace, (int32_t)sizeof workspace);
  if (!strcmp(what, "conv"))
    return sp_seg_conv_s8(p, kIn, c->out_start, &c->conv, &c->layer, workspace, (int32_t)sizeof workspace);
  return sp_seg_bottleneck_s8(p, kIn, c->out_start, &c->bshape, &c->bparams, workspace,
                              sp_seg_bottleneck_workspace_bytes(&c->bshape));
}

static sp_seg_layer_s8_t layer(int32_t k, int32_t wbytes, int32_t in_zp, int32_t out_zp) {
  sp_seg_layer_s8_t l;
  l.weights = bytes(wbytes);
  l.bias = biases(k);
  l.rq = requants(k);
  l.in_zp = in_zp;
  l.out_zp = out_zp;
  l.act_min = -128;
  l.act_max = 127;
  return l;
}

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[2], "plain") && strcmp(argv[2], "seg"))) {
    fprintf(stderr, "usage: %s pw|pw2|fc|conv|dw|bn|bn2|bnr|bn2r|stem|stemr plain|seg\n", argv[0]);
    return 2;
  }
  const char* what = argv[1];
  const int seg = !strcmp(argv[2], "seg");
  pool = (int8_t*)calloc(kPool, 1);
  seg_case_t c;
  memset(&c, 0, sizeof c);
  int32_t in_bytes = 0;
  int rc = 0;
  if (!strcmp(what, "fc")) {
    const int32_t k = 1024, n = 1000;
    c.fc.m = 1;
    c.fc.k = k;
    c.fc.n = n;
    c.fc.chunk = 0;
    c.layer = layer(n, n * k, 3, -2);
    c.desc.kind = SP_SEG_KIND_FC;
    c.desc.fc = c.fc;
    in_bytes = k;
  } else if (!strcmp(what, "bn") || !strcmp(what, "bn2") || !strcmp(what, "bnr") || !strcmp(what, "bn2r")) {
    const int two = !strcmp(what, "bn2") || !strcmp(what, "bn2r");
    const int rows = !strcmp(what, "bnr") || !strcmp(what, "bn2r"); /* row cache */
    sp_seg_bottleneck_shape_t s = {two ? 40 : 20, two ? 40 : 20, 16, 48, two ? 24 : 16, 3, 3, two ? 2 : 1, two ? 2 : 1,
                                   1, 1, 1, 1, 1, !two, 0, 0, 0, 0, 0, 0, 0, 0, rows};
    c.bshape = s;
    c.bparams.expand = layer(48, 48 * 16, 3, -5);
    c.bparams.depthwise = layer(48, 9 * 48, -5, 1);
    c.bparams.project = layer(s.c_out, s.c_out * 48, 1, -2);
    c.bparams.expand.act_min = -5;
    c.bparams.depthwise.act_min = 1;
    sp_add_s8_params_t add = {3, -2, 0, 20, {1500000000, -1}, {1300000000, -1}, {1100000000, -19}, -128, 127};
    c.add = add;
    c.bparams.residual = two ? NULL : &c.add;
    c.desc.kind = SP_SEG_KIND_BOTTLENECK;
    c.desc.bottleneck = s;
    in_bytes = s.h * s.w * s.c_in;
  } else if (!strcmp(what, "stem") || !strcmp(what, "stemr")) {
    /* MCUNet-320KB B1 on a 64x64 input: 3x3 stride-2 stem 3 -> 16 fused as the expansion,
     * depthwise 3x3 on 32x32x16, project 16 -> 8. */
    sp_seg_bottleneck_shape_t s = {64, 64, 3, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0,
                                   3,  3,  2, 2, 1,  1, 1, 1, !strcmp(what, "stemr")};
    c.bshape = s;
    c.bparams.expand = layer(16, 16 * 9 * 3, 3, -5);
    c.bparams.depthwise = layer(16, 9 * 16, -5, 1);
    c.bparams.project = layer(8, 8 * 16, 1, -2);
    c.bparams.expand.act_min = -5;
    c.bparams.depthwise.act_min = 1;
    c.bparams.residual = NULL;
    c.desc.kind = SP_SEG_KIND_BOTTLENECK;
    c.desc.bottleneck = s;
    in_bytes = s.h * s.w * s.c_in;
  } else {
    const int pw = !strcmp(what, "pw") || !strcmp(what, "pw2"), dw = !strcmp(what, "dw");
    const int32_t h = !strcmp(what, "pw") ? 80 : !strcmp(what, "pw2") ? 44 : 20;
    const int32_t ci = dw ? 48 : 16, co = !strcmp(what, "pw2") ? 80 : ci, r = pw ? 1 : 3, pad = r / 2;
    sp_seg_conv_shape_t s = {h, h, ci, co, r, r, 1, 1, pad, pad, pad, pad, 1, 1};
    c.conv = s;
    c.layer = layer(co, dw ? 9 * ci : co * r * r * ci, 3, -2);
    c.desc.kind = pw ? SP_SEG_KIND_POINTWISE : dw ? SP_SEG_KIND_DEPTHWISE : SP_SEG_KIND_CONV;
    c.desc.conv = s;
    in_bytes = h * h * ci;
    if (!seg) {
      sp_tensor_t id = nhwc(ci, h, h), od = nhwc(co, h, h), wd = weights(co, ci, r, r, dw);
      const int32_t st[2] = {1, 1}, pd[4] = {pad, pad, pad, pad};
      memcpy(pool + kIn, bytes(in_bytes), (size_t)in_bytes);
      return sp_bench_run_plain_conv(&id, pool + kIn, &wd, &c.layer, st, pd, dw ? ci : 1, &od, pool) ? 1 : 0;
    }
  }
  memcpy(pool + kIn, bytes(in_bytes), (size_t)in_bytes);
  if (!seg) {
    if (!strcmp(what, "fc")) {
      const int32_t a[2] = {1, c.fc.k}, b[2] = {c.fc.n, c.fc.k}, o[2] = {1, c.fc.n};
      sp_tensor_t id, wd, od;
      sp_tensor_init_contiguous(&id, 2, a);
      sp_tensor_init_contiguous(&wd, 2, b);
      sp_tensor_init_contiguous(&od, 2, o);
      rc = sp_bench_run_plain_fc(&id, pool + kIn, &wd, &c.layer, &od, pool);
    } else {
      rc = sp_bench_run_plain_bottleneck(&c, pool + kIn, pool, pool + 200000, pool + 300000, pool + 400000);
    }
    return rc ? 1 : 0;
  }
  sp_seg_shift_t shift;
  if (sp_seg_sim_min_shift(&c.desc, &shift) != SP_OK) return 1;
  c.out_start = kIn - shift.shift_bytes;
  sp_seg_pool_t p = {pool, kPool, 1};
  return sp_bench_run_seg(what, &p, &c) ? 1 : 0;
}
