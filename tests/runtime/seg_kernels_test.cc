// Segment-aware int8 kernels (runtime/src/sramplan_rt_seg_s8.c) against the plain kernels:
//   1. output outside the input: byte-identical to the plain kernel;
//   2. circular pool, output at input - (simulated minimal safe shift), starts that make the input
//      and/or the output wrap around the pool end, byte- and segment-granular placements: still
//      byte-identical, and no byte of the pool outside the two tensors is touched;
//   3. shift - 1: the simulation says unsafe, and running there corrupts the result (counted; a
//      one-byte clobber is not always visible after requantisation);
//   4. every kernel stays inside its documented workspace (guard bytes around it);
//   5. the simulated minimal shift equals the one the overlap analysis (src/segment, ISL) computes
//      for the loop-order contract (single-layer kernels; the bottleneck's is at most the ISL one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "segment/overlap.h"

extern "C" {
#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"
#include "sramplan_rt_seg.h"
}

namespace {

using Rng = std::mt19937;

int Uniform(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

std::vector<int8_t> RandomBytes(Rng& rng, size_t n) {
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(Uniform(rng, -128, 127));
  return v;
}

struct LayerData {
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
  std::vector<sp_requant_t> rq;
  int32_t in_zp = 0, out_zp = 0, act_min = -128, act_max = 127;
  sp_seg_layer_s8_t View() const {
    return sp_seg_layer_s8_t{
        w.data(), bias.empty() ? nullptr : bias.data(), rq.data(), in_zp, out_zp, act_min, act_max};
  }
};

// Random per-channel layer: nch output channels, wbytes weights, fan_in MACs per output.
LayerData MakeLayer(Rng& rng, int nch, int wbytes, int fan_in, int32_t in_zp) {
  LayerData l;
  l.w.resize(wbytes);
  for (auto& x : l.w) x = static_cast<int8_t>(Uniform(rng, -127, 127));
  if (Uniform(rng, 0, 3) != 0) {
    l.bias.resize(nch);
    for (auto& b : l.bias) b = Uniform(rng, -3000, 3000);
  }
  for (int k = 0; k < nch; ++k) {
    const double real = std::uniform_real_distribution<double>(0.5, 2.0)(rng) /
                        (std::sqrt(static_cast<double>(std::max(fan_in, 1))) * 48.0);
    l.rq.push_back(sp_host_quantize_multiplier(real));
  }
  l.in_zp = in_zp;
  l.out_zp = Uniform(rng, -20, 20);
  if (Uniform(rng, 0, 2) == 0) {
    l.act_min = -128;
    l.act_max = 127;
  } else {
    l.act_min = Uniform(rng, -128, l.out_zp);
    l.act_max = Uniform(rng, std::max<int>(l.act_min, l.out_zp), 127);
  }
  return l;
}

sp_tensor_t Nhwc(int c, int h, int w) {
  sp_tensor_t t;
  sp_tensor_init_nhwc(&t, 1, c, h, w);
  return t;
}

// ---- Plain references (sramplan_rt_int8.h kernels on NHWC buffers) ----------------------------

std::vector<int8_t> PlainFc(const sp_seg_fc_shape_t& s, const LayerData& l,
                            const std::vector<int8_t>& in) {
  int32_t in_dims[2] = {s.m, s.k}, w_dims[2] = {s.n, s.k}, out_dims[2] = {s.m, s.n};
  sp_tensor_t in_d, w_d, out_d;
  sp_tensor_init_contiguous(&in_d, 2, in_dims);
  sp_tensor_init_contiguous(&w_d, 2, w_dims);
  sp_tensor_init_contiguous(&out_d, 2, out_dims);
  std::vector<int8_t> out(static_cast<size_t>(s.m) * s.n);
  EXPECT_EQ(sp_fully_connected_s8(&in_d, in.data(), l.in_zp, &w_d, l.w.data(),
                                  l.bias.empty() ? nullptr : l.bias.data(), l.rq.data(), l.out_zp,
                                  l.act_min, l.act_max, &out_d, out.data()),
            SP_OK);
  return out;
}

std::vector<int8_t> PlainConv(const sp_seg_conv_shape_t& s, const LayerData& l,
                              const std::vector<int8_t>& in, bool depthwise) {
  const int oh = sp_seg_conv_out_h(&s), ow = sp_seg_conv_out_w(&s);
  const sp_tensor_t in_d = Nhwc(s.c_in, s.h, s.w), out_d = Nhwc(s.c_out, oh, ow);
  sp_tensor_t w_d;
  std::memset(&w_d, 0, sizeof(w_d));
  w_d.rank = 4;
  w_d.dims[0] = s.c_out;
  w_d.dims[1] = depthwise ? 1 : s.c_in;
  w_d.dims[2] = s.r;
  w_d.dims[3] = s.s;
  if (depthwise) {  // [R][S][C]
    w_d.strides[0] = 1;
    w_d.strides[1] = 0;
    w_d.strides[2] = s.s * s.c_in;
    w_d.strides[3] = s.c_in;
  } else {  // [K][R][S][C]
    w_d.strides[0] = s.r * s.s * s.c_in;
    w_d.strides[1] = 1;
    w_d.strides[2] = s.s * s.c_in;
    w_d.strides[3] = s.c_in;
  }
  const int32_t stride[2] = {s.stride_h, s.stride_w};
  const int32_t pad[4] = {s.pad_top, s.pad_left, s.pad_bottom, s.pad_right};
  const int32_t dil[2] = {s.dilation_h, s.dilation_w};
  std::vector<int8_t> out(static_cast<size_t>(oh) * ow * s.c_out);
  EXPECT_EQ(sp_conv_s8(&in_d, in.data(), l.in_zp, &w_d, l.w.data(),
                       l.bias.empty() ? nullptr : l.bias.data(), l.rq.data(), l.out_zp, l.act_min,
                       l.act_max, stride, pad, dil, depthwise ? s.c_in : 1, &out_d, out.data()),
            SP_OK);
  return out;
}

sp_seg_conv_shape_t ConvShape(int h, int w, int cin, int cout, int r, int s, int sh, int sw, int pt,
                              int pl, int pb, int pr, int dh = 1, int dw = 1) {
  return sp_seg_conv_shape_t{h, w, cin, cout, r, s, sh, sw, pt, pl, pb, pr, dh, dw};
}

struct BottleneckData {
  sp_seg_bottleneck_shape_t shape;
  LayerData expand, depthwise, project;
  sp_add_s8_params_t add;
  sp_seg_bottleneck_s8_t Params() const {
    sp_seg_bottleneck_s8_t p;
    p.expand = expand.View();
    p.depthwise = depthwise.View();
    p.project = project.View();
    p.residual = shape.has_residual ? &add : nullptr;
    return p;
  }
};

std::vector<int8_t> PlainBottleneck(const BottleneckData& b, const std::vector<int8_t>& in) {
  const auto& s = b.shape;
  const int cm = s.has_expand ? s.c_mid : s.c_in;
  std::vector<int8_t> mid = in;
  int mh = s.h, mw = s.w;
  if (s.has_expand) {
    const sp_seg_conv_shape_t es =
        s.e_r == 0 ? ConvShape(s.h, s.w, s.c_in, cm, 1, 1, 1, 1, 0, 0, 0, 0)
                   : ConvShape(s.h, s.w, s.c_in, cm, s.e_r, s.e_s, s.e_stride_h, s.e_stride_w,
                               s.e_pad_top, s.e_pad_left, s.e_pad_bottom, s.e_pad_right);
    mid = PlainConv(es, b.expand, in, false);
    mh = sp_seg_conv_out_h(&es);
    mw = sp_seg_conv_out_w(&es);
  }
  const sp_seg_conv_shape_t dws = ConvShape(mh, mw, cm, cm, s.r, s.s, s.stride_h, s.stride_w,
                                            s.pad_top, s.pad_left, s.pad_bottom, s.pad_right);
  const std::vector<int8_t> dw = PlainConv(dws, b.depthwise, mid, true);
  const int oh = sp_seg_conv_out_h(&dws), ow = sp_seg_conv_out_w(&dws);
  std::vector<int8_t> proj =
      PlainConv(ConvShape(oh, ow, cm, s.c_out, 1, 1, 1, 1, 0, 0, 0, 0), b.project, dw, false);
  if (!s.has_residual) return proj;
  const sp_tensor_t a_d = Nhwc(s.c_in, s.h, s.w), d_d = Nhwc(s.c_out, oh, ow);
  std::vector<int8_t> out(proj.size());
  EXPECT_EQ(sp_add_s8(&a_d, in.data(), &d_d, proj.data(), &b.add, &d_d, out.data()), SP_OK);
  return out;
}

BottleneckData MakeBottleneck(Rng& rng, const sp_seg_bottleneck_shape_t& s) {
  BottleneckData b;
  b.shape = s;
  const int cm = s.has_expand ? s.c_mid : s.c_in;
  const int32_t in_zp = Uniform(rng, -20, 20);
  const int etaps = s.e_r == 0 ? 1 : s.e_r * s.e_s;
  if (s.has_expand) b.expand = MakeLayer(rng, cm, cm * etaps * s.c_in, etaps * s.c_in, in_zp);
  b.depthwise =
      MakeLayer(rng, cm, s.r * s.s * cm, s.r * s.s, s.has_expand ? b.expand.out_zp : in_zp);
  b.project = MakeLayer(rng, s.c_out, s.c_out * cm, cm, b.depthwise.out_zp);
  const double s_in = std::uniform_real_distribution<double>(0.02, 0.1)(rng);
  const double s_d = std::uniform_real_distribution<double>(0.02, 0.1)(rng);
  const double s_o = std::uniform_real_distribution<double>(0.03, 0.15)(rng);
  b.add = sp_host_add_s8_params(s_in, in_zp, s_d, b.project.out_zp, s_o, Uniform(rng, -10, 10),
                                -128, 127);
  return b;
}

// ---- A layer under test: its kernel, sizes and the plain result ------------------------------

struct Case {
  std::string name;
  sp_seg_layer_desc_t desc;
  int32_t in_bytes = 0, out_bytes = 0, segment = 1;
  std::vector<int8_t> input, expect;
  // The plain kernel(s) on another input (for the unsafe-shift runs).
  std::function<std::vector<int8_t>(const std::vector<int8_t>&)> plain;
  // Runs the segment-aware kernel on a pool.
  std::function<sp_status_t(const sp_seg_pool_t*, int32_t, int32_t)> run;
};

constexpr uint8_t kCanary = 0xA5;
constexpr int kGuard = 32;

struct PoolResult {
  sp_status_t status = SP_BAD_ARGUMENT;
  std::vector<int8_t> out;
};

// Places the input at in_start of a pool of pool_segments * segment_bytes bytes filled with
// random junk, runs the kernel with the output at out_start and returns the output. Checks that
// no byte outside the input and output ranges (nor outside the pool) changed.
PoolResult RunInPool(const Case& c, Rng& rng, int32_t pool_segments, int32_t segment_bytes,
                     int32_t in_start, int32_t out_start,
                     const std::vector<int8_t>* input = nullptr) {
  if (input == nullptr) input = &c.input;
  const int32_t pool_bytes = pool_segments * segment_bytes;
  std::vector<int8_t> raw = RandomBytes(rng, static_cast<size_t>(pool_bytes) + 2 * kGuard);
  std::memset(raw.data(), kCanary, kGuard);
  std::memset(raw.data() + kGuard + pool_bytes, kCanary, kGuard);
  int8_t* base = raw.data() + kGuard;
  for (int32_t i = 0; i < c.in_bytes; ++i) base[(in_start + i) % pool_bytes] = (*input)[i];
  const std::vector<int8_t> before = raw;
  sp_seg_pool_t pool{base, pool_segments, segment_bytes};
  PoolResult res;
  res.status = c.run(&pool, in_start, out_start);
  if (res.status != SP_OK) return res;
  std::vector<char> inside(pool_bytes, 0);
  for (int32_t i = 0; i < c.in_bytes; ++i) inside[(in_start + i) % pool_bytes] = 1;
  for (int32_t j = 0; j < c.out_bytes; ++j) {
    inside[(out_start + j) % pool_bytes] = 1;
    res.out.push_back(base[(out_start + j) % pool_bytes]);
  }
  for (int i = 0; i < kGuard; ++i) {
    EXPECT_EQ(static_cast<uint8_t>(raw[i]), kCanary) << c.name << ": write before the pool";
    EXPECT_EQ(static_cast<uint8_t>(raw[kGuard + pool_bytes + i]), kCanary)
        << c.name << ": write after the pool";
  }
  int stray = 0;
  for (int32_t a = 0; a < pool_bytes; ++a)
    if (!inside[a] && raw[kGuard + a] != before[kGuard + a]) ++stray;
  EXPECT_EQ(stray, 0) << c.name << ": bytes outside the input and output were written";
  return res;
}

struct Stats {
  int unsafe_cases = 0;    // cases with shift > 0 (shift - 1 exists)
  int unsafe_visible = 0;  // of those, the result differed at shift - 1
};

// The whole battery for one case.
void CheckCase(const Case& c, Rng& rng, Stats* stats) {
  SCOPED_TRACE(c.name);
  sp_seg_shift_t sh;
  ASSERT_EQ(sp_seg_sim_min_shift(&c.desc, &sh), SP_OK);
  ASSERT_EQ(sh.in_bytes, c.in_bytes);
  ASSERT_EQ(sh.out_bytes, c.out_bytes);
  ASSERT_LE(sh.first_safe_bytes, sh.shift_bytes);
  ASSERT_EQ(sh.footprint_bytes, std::max(sh.shift_bytes + c.in_bytes, c.out_bytes));
  const int32_t d = sh.shift_bytes;

  // 1. No overlap: output after the input, possibly wrapping.
  {
    const int32_t gap = Uniform(rng, 0, 7);
    const int32_t pool_bytes = c.in_bytes + c.out_bytes + gap;
    const int32_t in_start = Uniform(rng, 0, pool_bytes - 1);
    const int32_t out_start = (in_start + c.in_bytes + gap) % pool_bytes;
    const PoolResult r = RunInPool(c, rng, pool_bytes, 1, in_start, out_start);
    ASSERT_EQ(r.status, SP_OK);
    EXPECT_EQ(r.out, c.expect) << "non-overlapping output differs from the plain kernel";
  }

  // 2. Minimal shift, byte-granular pools of several sizes and starts (incl. wrapping ones).
  for (int trial = 0; trial < 6; ++trial) {
    const int32_t extra = trial < 3 ? 0 : Uniform(rng, 1, 50);
    const int32_t pool_bytes = std::max(d + c.in_bytes, c.out_bytes) + extra;
    int32_t in_start;
    switch (trial % 3) {
      case 0:
        in_start = pool_bytes - 1 - Uniform(rng, 0, std::min(pool_bytes - 1, 5));
        break;
      case 1:
        in_start = Uniform(rng, 0, std::min(d, pool_bytes - 1));
        break;  // output wraps
      default:
        in_start = Uniform(rng, 0, pool_bytes - 1);
        break;
    }
    const int32_t out_start = ((in_start - d) % pool_bytes + pool_bytes) % pool_bytes;
    const PoolResult r = RunInPool(c, rng, pool_bytes, 1, in_start, out_start);
    ASSERT_EQ(r.status, SP_OK) << "pool " << pool_bytes << " in " << in_start;
    EXPECT_EQ(r.out, c.expect) << "shift " << d << " pool " << pool_bytes << " in_start "
                               << in_start;
  }
  // 2b. Segment-granular placement: starts on segment boundaries, shift rounded up to segments.
  {
    const int32_t seg = c.segment;
    const int32_t dseg = sp_seg_shift_segments(d, seg);
    ASSERT_GE(dseg * seg, d);
    const int32_t in_segs = (c.in_bytes + seg - 1) / seg;
    const int32_t out_segs = (c.out_bytes + seg - 1) / seg;
    for (int trial = 0; trial < 3; ++trial) {
      const int32_t pool_segments = std::max(dseg + in_segs, out_segs) + Uniform(rng, 0, 2);
      sp_seg_pool_t probe{nullptr, pool_segments, seg};
      const int32_t in_seg = Uniform(rng, 0, pool_segments - 1);
      const int32_t in_start = sp_seg_start(&probe, in_seg);
      const int32_t out_start = sp_seg_start(&probe, in_seg - dseg);
      const PoolResult r = RunInPool(c, rng, pool_segments, seg, in_start, out_start);
      ASSERT_EQ(r.status, SP_OK);
      EXPECT_EQ(r.out, c.expect) << "segment shift " << dseg << " x " << seg;
    }
  }
  // Larger shifts stay safe.
  for (int32_t extra : {1, 2, 7, c.segment}) EXPECT_EQ(sp_seg_sim_is_safe(&c.desc, d + extra), 1);
  EXPECT_EQ(sp_seg_sim_is_safe(&c.desc, d), 1);
  EXPECT_EQ(sp_seg_sim_is_safe(&c.desc, sh.first_safe_bytes), 1);

  // 3. One byte less is unsafe (and visibly wrong for some input: up to 4 random inputs).
  if (d > 0) {
    EXPECT_EQ(sp_seg_sim_is_safe(&c.desc, d - 1), 0);
    const int32_t pool_bytes = std::max(d - 1 + c.in_bytes, c.out_bytes);
    bool visible = false;
    for (int attempt = 0; attempt < 4 && !visible; ++attempt) {
      const std::vector<int8_t> input = attempt == 0 ? c.input : RandomBytes(rng, c.in_bytes);
      const std::vector<int8_t> expect = attempt == 0 ? c.expect : c.plain(input);
      const int32_t in_start = Uniform(rng, 0, pool_bytes - 1);
      const int32_t out_start = ((in_start - (d - 1)) % pool_bytes + pool_bytes) % pool_bytes;
      const PoolResult r = RunInPool(c, rng, pool_bytes, 1, in_start, out_start, &input);
      ASSERT_EQ(r.status, SP_OK);
      visible = r.out != expect;
    }
    ++stats->unsafe_cases;
    if (visible) ++stats->unsafe_visible;
  }

  // The kernels refuse placements that break the contract.
  {
    const int32_t pool_bytes = d + c.in_bytes;
    if (pool_bytes >= c.out_bytes && d + 1 < pool_bytes) {
      // shift d + 1 > pool_bytes - in_bytes: the output head would wrap onto the input tail.
      std::vector<int8_t> buf(pool_bytes);
      sp_seg_pool_t pool{buf.data(), pool_bytes, 1};
      EXPECT_EQ(c.run(&pool, d + 1, 0), SP_BAD_ARGUMENT);
    }
  }
}

// ---- Case builders ---------------------------------------------------------------------------

// Runs `kernel` with a workspace of exactly `ws` bytes between guard bytes.
sp_status_t RunWithWorkspace(int32_t ws, const std::function<sp_status_t(int8_t*, int32_t)>& kernel) {
  std::vector<uint8_t> buf(static_cast<size_t>(ws) + 2 * kGuard, kCanary);
  const sp_status_t st = kernel(reinterpret_cast<int8_t*>(buf.data()) + kGuard, ws);
  for (int g = 0; g < kGuard; ++g) {
    EXPECT_EQ(buf[g], kCanary) << "write before the workspace";
    EXPECT_EQ(buf[kGuard + ws + g], kCanary) << "write after the workspace";
  }
  return st;
}

// The workspace a single-layer kernel documents.
int32_t ConvWorkspace(bool pointwise, const sp_seg_conv_shape_t& s) {
  return pointwise ? std::min(s.c_in, s.c_out) : s.c_out;
}

// chunk: output bytes per step (0: min(k, n)).
Case FcCase(Rng& rng, int m, int k, int n, int chunk = 0) {
  auto l = std::make_shared<LayerData>(MakeLayer(rng, n, n * k, k, Uniform(rng, -20, 20)));
  const sp_seg_fc_shape_t s{m, k, n, chunk};
  Case c;
  c.name = "fc " + std::to_string(m) + "x" + std::to_string(k) + "->" + std::to_string(n) +
           " chunk " + std::to_string(chunk);
  c.desc.kind = SP_SEG_KIND_FC;
  c.desc.fc = s;
  c.in_bytes = m * k;
  c.out_bytes = m * n;
  c.segment = sp_seg_fc_workspace_bytes(&s);
  c.input = RandomBytes(rng, c.in_bytes);
  c.plain = [l, s](const std::vector<int8_t>& in) { return PlainFc(s, *l, in); };
  c.expect = c.plain(c.input);
  c.run = [l, s](const sp_seg_pool_t* p, int32_t i, int32_t o) {
    const sp_seg_layer_s8_t v = l->View();
    return RunWithWorkspace(sp_seg_fc_workspace_bytes(&s), [&](int8_t* ws, int32_t n) {
      return sp_seg_fully_connected_s8(p, i, o, &s, &v, ws, n);
    });
  };
  return c;
}

enum class ConvKind { kPointwise, kConv, kDepthwise };

Case ConvCase(Rng& rng, ConvKind kind, const sp_seg_conv_shape_t& s) {
  const bool dw = kind == ConvKind::kDepthwise;
  const int fan_in = dw ? s.r * s.s : s.r * s.s * s.c_in;
  auto l = std::make_shared<LayerData>(
      MakeLayer(rng, s.c_out, dw ? s.r * s.s * s.c_in : s.c_out * s.r * s.s * s.c_in, fan_in,
                Uniform(rng, -20, 20)));
  Case c;
  const char* kn = kind == ConvKind::kPointwise ? "pointwise" : (dw ? "depthwise" : "conv");
  c.name = std::string(kn) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
           std::to_string(s.c_in) + "->" + std::to_string(s.c_out) + " k" + std::to_string(s.r) +
           "x" + std::to_string(s.s) + " s" + std::to_string(s.stride_h) +
           std::to_string(s.stride_w) + " p" + std::to_string(s.pad_top) +
           std::to_string(s.pad_left) + std::to_string(s.pad_bottom) + std::to_string(s.pad_right) +
           " d" + std::to_string(s.dilation_h) + std::to_string(s.dilation_w);
  c.desc.kind = kind == ConvKind::kPointwise ? SP_SEG_KIND_POINTWISE
                                             : (dw ? SP_SEG_KIND_DEPTHWISE : SP_SEG_KIND_CONV);
  c.desc.conv = s;
  c.in_bytes = s.h * s.w * s.c_in;
  c.out_bytes = sp_seg_conv_out_h(&s) * sp_seg_conv_out_w(&s) * s.c_out;
  c.segment = std::min(s.c_in, s.c_out);
  c.input = RandomBytes(rng, c.in_bytes);
  c.plain = [l, s, dw](const std::vector<int8_t>& in) { return PlainConv(s, *l, in, dw); };
  c.expect = c.plain(c.input);
  c.run = [l, s, kind](const sp_seg_pool_t* p, int32_t i, int32_t o) {
    const sp_seg_layer_s8_t v = l->View();
    return RunWithWorkspace(ConvWorkspace(kind == ConvKind::kPointwise, s),
                            [&](int8_t* ws, int32_t n) {
                              switch (kind) {
                                case ConvKind::kPointwise:
                                  return sp_seg_pointwise_s8(p, i, o, &s, &v, ws, n);
                                case ConvKind::kDepthwise:
                                  return sp_seg_depthwise_s8(p, i, o, &s, &v, ws, n);
                                default:
                                  return sp_seg_conv_s8(p, i, o, &s, &v, ws, n);
                              }
                            });
  };
  return c;
}

// Runs the bottleneck with a workspace of exactly the documented size between guard bytes.
sp_status_t RunBottleneckGuarded(const BottleneckData& b, const sp_seg_pool_t* p, int32_t i,
                                 int32_t o) {
  const int32_t ws = sp_seg_bottleneck_workspace_bytes(&b.shape);
  std::vector<uint8_t> buf(static_cast<size_t>(ws) + 2 * kGuard, kCanary);
  const sp_seg_bottleneck_s8_t params = b.Params();
  const sp_status_t st = sp_seg_bottleneck_s8(p, i, o, &b.shape, &params,
                                              reinterpret_cast<int8_t*>(buf.data()) + kGuard, ws);
  for (int g = 0; g < kGuard; ++g) {
    EXPECT_EQ(buf[g], kCanary) << "write before the workspace";
    EXPECT_EQ(buf[kGuard + ws + g], kCanary) << "write after the workspace";
  }
  return st;
}

Case BottleneckCase(Rng& rng, const sp_seg_bottleneck_shape_t& s) {
  auto b = std::make_shared<BottleneckData>(MakeBottleneck(rng, s));
  Case c;
  c.name = "bottleneck " + std::to_string(s.h) + "x" + std::to_string(s.w) + " " +
           std::to_string(s.c_in) + "/" + std::to_string(s.c_mid) + "/" + std::to_string(s.c_out) +
           " k" + std::to_string(s.r) + "x" + std::to_string(s.s) + " s" +
           std::to_string(s.stride_h) + std::to_string(s.stride_w) + " p" +
           std::to_string(s.pad_top) + std::to_string(s.pad_left) + std::to_string(s.pad_bottom) +
           std::to_string(s.pad_right) + (s.has_expand ? "" : " no-expand") +
           (s.e_r == 0 ? "" : " expand-conv" + std::to_string(s.e_r) + "x" + std::to_string(s.e_s) +
                                  "s" + std::to_string(s.e_stride_h) + std::to_string(s.e_stride_w) +
                                  "p" + std::to_string(s.e_pad_top) + std::to_string(s.e_pad_left) +
                                  std::to_string(s.e_pad_bottom) + std::to_string(s.e_pad_right)) +
           (s.has_residual ? " residual" : "") + (s.row_cache ? " row-cache" : "");
  c.desc.kind = SP_SEG_KIND_BOTTLENECK;
  c.desc.bottleneck = s;
  c.in_bytes = s.h * s.w * s.c_in;
  c.out_bytes = sp_seg_bottleneck_out_h(&s) * sp_seg_bottleneck_out_w(&s) * s.c_out;
  c.segment = std::min(s.c_in, s.c_out);
  c.input = RandomBytes(rng, c.in_bytes);
  c.plain = [b](const std::vector<int8_t>& in) { return PlainBottleneck(*b, in); };
  c.expect = c.plain(c.input);
  c.run = [b](const sp_seg_pool_t* p, int32_t i, int32_t o) {
    return RunBottleneckGuarded(*b, p, i, o);
  };
  return c;
}

sp_seg_bottleneck_shape_t BShape(int h, int w, int cin, int cmid, int cout, int r, int s, int sh,
                                 int sw, int pt, int pl, int pb, int pr, bool expand,
                                 bool residual) {
  return sp_seg_bottleneck_shape_t{h,  w,  cin, cmid, cout,   r,        s, sh, sw, pt, pl,
                                   pb, pr, expand, residual, 0,      0,        0, 0,  0,  0,  0,  0,
                                   0};
}

// The same with a Conv2D expansion er x es, stride esh x esw, pads ept, epl, epb, epr (a stem).
sp_seg_bottleneck_shape_t BShapeConvExpand(int h, int w, int cin, int cmid, int cout, int r, int s,
                                           int sh, int sw, int pad, int er, int es, int esh,
                                           int esw, int ept, int epl, int epb, int epr) {
  sp_seg_bottleneck_shape_t b = BShape(h, w, cin, cmid, cout, r, s, sh, sw, pad, pad, pad, pad,
                                       true, false);
  b.e_r = er;
  b.e_s = es;
  b.e_stride_h = esh;
  b.e_stride_w = esw;
  b.e_pad_top = ept;
  b.e_pad_left = epl;
  b.e_pad_bottom = epb;
  b.e_pad_right = epr;
  return b;
}

// At shift - 1 exactly one output byte is written too early, over one input byte that is read
// again afterwards by a few outputs only (for FC: just the last output of the row); after
// requantisation, or when the clobbering byte equals the clobbered one, the damage may not show.
// So the test asks for a fraction of the unsafe runs to differ (the simulation's verdict, checked
// in every case, is the exact criterion).
void ExpectVisible(const Stats& st, int min_percent) {
  std::printf("unsafe shift (d - 1) visibly wrong in %d of %d runs\n", st.unsafe_visible,
              st.unsafe_cases);
  EXPECT_GT(st.unsafe_cases, 0);
  EXPECT_GE(st.unsafe_visible * 100, st.unsafe_cases * min_percent)
      << st.unsafe_visible << " of " << st.unsafe_cases << " unsafe runs were visibly wrong";
}

// ---- Tests -----------------------------------------------------------------------------------

TEST(SegKernels, FullyConnectedRandom) {
  Rng rng(101);
  Stats st;
  for (int i = 0; i < 24; ++i) {
    const int n = Uniform(rng, 1, 160);
    const int chunk = i % 3 == 0 ? 0 : Uniform(rng, 1, n + 3);
    CheckCase(FcCase(rng, Uniform(rng, 1, 4), Uniform(rng, 1, 160), n, chunk), rng, &st);
  }
  ExpectVisible(st, 70);
}

TEST(SegKernels, PointwiseRandom) {
  Rng rng(202);
  Stats st;
  for (int i = 0; i < 24; ++i) {
    int cin = Uniform(rng, 1, 40), cout = Uniform(rng, 1, 40);
    if (i % 2 == 0 && cin > cout) std::swap(cin, cout);  // C_in < C_out and C_in > C_out
    if (i % 2 == 1 && cin < cout) std::swap(cin, cout);
    const int sh = Uniform(rng, 1, 2), sw = Uniform(rng, 1, 2);
    CheckCase(ConvCase(rng, ConvKind::kPointwise,
                       ConvShape(Uniform(rng, 1, 10), Uniform(rng, 1, 10), cin, cout, 1, 1, sh, sw,
                                 0, 0, 0, 0)),
              rng, &st);
  }
  ExpectVisible(st, 80);
}

TEST(SegKernels, Conv2dRandom) {
  Rng rng(303);
  Stats st;
  for (int i = 0; i < 40; ++i) {
    const int r = 1 + i % 7;
    const int s = Uniform(rng, 0, 3) == 0 ? Uniform(rng, 1, 7) : r;
    const int dil = Uniform(rng, 0, 5) == 0 ? 2 : 1;
    const int pt = Uniform(rng, 0, r - 1), pb = Uniform(rng, 0, r - 1);
    const int pl = Uniform(rng, 0, s - 1), pr = Uniform(rng, 0, s - 1);
    const int h = std::max(dil * (r - 1) + 1 - pt - pb, 1) + Uniform(rng, 0, 7);
    const int w = std::max(dil * (s - 1) + 1 - pl - pr, 1) + Uniform(rng, 0, 7);
    CheckCase(ConvCase(rng, ConvKind::kConv,
                       ConvShape(h, w, Uniform(rng, 1, 20), Uniform(rng, 1, 20), r, s,
                                 Uniform(rng, 1, 2), Uniform(rng, 1, 2), pt, pl, pb, pr, dil, dil)),
              rng, &st);
  }
  ExpectVisible(st, 80);
}

TEST(SegKernels, DepthwiseRandom) {
  Rng rng(404);
  Stats st;
  for (int i = 0; i < 30; ++i) {
    const int r = 3 + 2 * (i % 3);                                           // 3x3, 5x5, 7x7
    const int c = i % 5 == 0 ? Uniform(rng, 65, 140) : Uniform(rng, 1, 40);  // > one chunk too
    const int pad = Uniform(rng, 0, 1) ? (r - 1) / 2 : Uniform(rng, 0, r - 1);
    const int dil = Uniform(rng, 0, 5) == 0 ? 2 : 1;
    const int h = std::max(dil * (r - 1) + 1 - 2 * pad, 1) + Uniform(rng, 0, 6);
    const int w = std::max(dil * (r - 1) + 1 - 2 * pad, 1) + Uniform(rng, 0, 6);
    const int stride = Uniform(rng, 1, 2);
    CheckCase(ConvCase(rng, ConvKind::kDepthwise,
                       ConvShape(h, w, c, c, r, r, stride, stride, pad, pad, pad, pad, dil, dil)),
              rng, &st);
  }
  ExpectVisible(st, 80);
}

TEST(SegKernels, BottleneckRandom) {
  Rng rng(505);
  Stats st;
  for (int i = 0; i < 36; ++i) {
    const int r = i % 6 == 5 ? 5 : (i % 9 == 7 ? 7 : 3);
    const int s = i % 11 == 10 ? 5 : r;
    const bool residual = i % 2 == 0;
    const int stride = residual ? 1 : Uniform(rng, 1, 2);
    const bool expand = i % 7 != 3;
    const int cin = Uniform(rng, 1, 16);
    const int cmid = expand ? Uniform(rng, 1, 48) : cin;
    const int cout = residual ? cin : Uniform(rng, 1, 24);
    int pt = (r - 1) / 2, pb = (r - 1) / 2, pl = (s - 1) / 2, pr = (s - 1) / 2;
    if (!residual && Uniform(rng, 0, 2) == 0) {
      pt = Uniform(rng, 0, r - 1);
      pb = Uniform(rng, 0, r - 1);
      pl = Uniform(rng, 0, s - 1);
      pr = Uniform(rng, 0, s - 1);
    }
    const int h = std::max(r - pt - pb, 1) + Uniform(rng, 0, 9);
    const int w = std::max(s - pl - pr, 1) + Uniform(rng, 0, 9);
    sp_seg_bottleneck_shape_t shape =
        BShape(h, w, cin, cmid, cout, r, s, stride, stride, pt, pl, pb, pr, expand, residual);
    shape.row_cache = i % 3 == 1;  // every third case with the row cache
    CheckCase(BottleneckCase(rng, shape), rng, &st);
  }
  ExpectVisible(st, 80);
}

// A network's stem fused as the expansion (MCUNet B1: 3x3 stride-2 conv 3 -> 16, depthwise 3x3,
// project 16 -> 8) and random Conv2D expansions: bit-exact against the plain kernels, minimal shift
// from the trace, every smaller shift that is unsafe visibly wrong.
TEST(SegKernels, BottleneckConvExpansion) {
  Rng rng(515);
  Stats st;
  CheckCase(BottleneckCase(rng, BShapeConvExpand(22, 22, 3, 16, 8, 3, 3, 1, 1, 1, 3, 3, 2, 2, 1, 1,
                                                 1, 1)),
            rng, &st);
  for (int i = 0; i < 24; ++i) {
    const int er = Uniform(rng, 1, 5), es = Uniform(rng, 1, 5);
    const int esh = Uniform(rng, 1, 3), esw = Uniform(rng, 1, 3);
    const int ept = Uniform(rng, 0, er - 1), epb = Uniform(rng, 0, er - 1);
    const int epl = Uniform(rng, 0, es - 1), epr = Uniform(rng, 0, es - 1);
    const int r = i % 3 == 0 ? 5 : 3, stride = Uniform(rng, 1, 2), pad = (r - 1) / 2;
    // The expanded plane is at least r x r, so that the depthwise has an output.
    const int h = std::max(er - ept - epb, 1) + esh * (r - 1) + Uniform(rng, 0, 8);
    const int w = std::max(es - epl - epr, 1) + esw * (r - 1) + Uniform(rng, 0, 8);
    sp_seg_bottleneck_shape_t shape =
        BShapeConvExpand(h, w, Uniform(rng, 1, 8), Uniform(rng, 1, 24), Uniform(rng, 1, 12), r, r,
                         stride, stride, pad, er, es, esh, esw, ept, epl, epb, epr);
    shape.row_cache = i % 2;
    CheckCase(BottleneckCase(rng, shape), rng, &st);
  }
  ExpectVisible(st, 50);
  // Bad expansion geometry is refused (padding as large as the kernel, zero stride, too many taps).
  Rng r2(1);
  BottleneckData b = MakeBottleneck(r2, BShapeConvExpand(8, 8, 3, 4, 4, 3, 3, 1, 1, 1, 3, 3, 1, 1,
                                                         1, 1, 1, 1));
  std::vector<int8_t> pool_mem(4096);
  sp_seg_pool_t pool{pool_mem.data(), 4096, 1};
  std::vector<int8_t> ws(1024);
  for (int bad = 0; bad < 3; ++bad) {
    sp_seg_bottleneck_shape_t s = b.shape;
    if (bad == 0) s.e_pad_top = 3;
    if (bad == 1) s.e_stride_w = 0;
    if (bad == 2) s.e_r = s.e_s = 9;
    const sp_seg_bottleneck_s8_t params = b.Params();
    EXPECT_EQ(sp_seg_bottleneck_s8(&pool, 2048, 0, &s, &params, ws.data(), 1024), SP_BAD_ARGUMENT)
        << bad;
    EXPECT_EQ(sp_seg_bottleneck_out_h(&s), 0) << bad;
  }
}

// The layers quoted in the report; the expected shifts follow from the documented order.
TEST(SegKernels, RepresentativeShifts) {
  Rng rng(606);
  struct Row {
    Case c;
    int32_t expect_bytes;  // -1: not derived by hand
  };
  std::vector<Row> rows;
  // Pointwise C_in = C_out: pixel p is read completely before it is written: shift 0.
  rows.push_back(
      {ConvCase(rng, ConvKind::kPointwise, ConvShape(80, 80, 16, 16, 1, 1, 1, 1, 0, 0, 0, 0)), 0});
  // Pointwise 16 -> 24: (HW - 1) * (24 - 16) (PointwiseShiftClosedForm in bytes).
  rows.push_back(
      {ConvCase(rng, ConvKind::kPointwise, ConvShape(20, 20, 16, 24, 1, 1, 1, 1, 0, 0, 0, 0)),
       399 * 8});
  // FC 1x1024 -> 1000 in one chunk of min(K, N) = 1000: one step, shift 0.
  rows.push_back({FcCase(rng, 1, 1024, 1000), 0});
  // FC 2x64 -> 100 in chunks of 10: step (row 1, chunk 8) writes output bytes up to 189 before
  // step (row 1, chunk 9) reads row 1 from byte 64: 189 - 64 + 1 = 126.
  rows.push_back({FcCase(rng, 2, 64, 100, 10), 126});
  // 3x3 pad 1: output pixel (oh, ow) must stay below input pixel (oh-1, ow) read by the next
  // step: shift = 16 * (W + 1) = 336.
  rows.push_back(
      {ConvCase(rng, ConvKind::kConv, ConvShape(20, 20, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1)), 336});
  rows.push_back(
      {BottleneckCase(rng, BShape(20, 20, 16, 48, 16, 3, 3, 1, 1, 1, 1, 1, 1, true, true)), -1});
  rows.push_back(
      {BottleneckCase(rng, BShape(40, 40, 16, 48, 24, 3, 3, 2, 2, 1, 1, 1, 1, true, false)), -1});
  rows.push_back(
      {ConvCase(rng, ConvKind::kDepthwise, ConvShape(20, 20, 48, 48, 3, 3, 1, 1, 1, 1, 1, 1)), -1});
  Stats st;
  for (auto& row : rows) {
    sp_seg_shift_t sh;
    ASSERT_EQ(sp_seg_sim_min_shift(&row.c.desc, &sh), SP_OK);
    std::printf("%-44s in %7d out %7d shift %6d B (%4d seg of %2d) first_safe %6d footprint %7d\n",
                row.c.name.c_str(), sh.in_bytes, sh.out_bytes, sh.shift_bytes,
                sp_seg_shift_segments(sh.shift_bytes, row.c.segment), row.c.segment,
                sh.first_safe_bytes, sh.footprint_bytes);
    if (row.expect_bytes >= 0) {
      EXPECT_EQ(sh.shift_bytes, row.expect_bytes) << row.c.name;
    }
    CheckCase(row.c, rng, &st);
  }
}

// Every start position of a minimal pool: the wrap point falls at every byte of the input and of
// the output (inside rows, pixels, channel chunks and the residual run).
TEST(SegKernels, EveryStartPosition) {
  Rng rng(909);
  std::vector<Case> cases;
  cases.push_back(FcCase(rng, 3, 7, 5));
  cases.push_back(FcCase(rng, 3, 7, 9, 4));
  cases.push_back(
      ConvCase(rng, ConvKind::kPointwise, ConvShape(3, 4, 5, 3, 1, 1, 1, 1, 0, 0, 0, 0)));
  cases.push_back(ConvCase(rng, ConvKind::kConv, ConvShape(4, 5, 3, 4, 3, 3, 1, 2, 1, 1, 1, 0)));
  cases.push_back(
      ConvCase(rng, ConvKind::kDepthwise, ConvShape(4, 4, 70, 70, 3, 3, 1, 1, 1, 1, 1, 1)));
  cases.push_back(BottleneckCase(rng, BShape(4, 5, 3, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, true, true)));
  cases.push_back(BottleneckCase(rng, BShape(5, 4, 3, 6, 4, 3, 3, 2, 2, 0, 0, 1, 1, true, false)));
  cases.push_back(
      BottleneckCase(rng, BShapeConvExpand(7, 6, 3, 5, 2, 3, 3, 1, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1)));
  {
    sp_seg_bottleneck_shape_t rows = BShape(4, 5, 3, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, true, true);
    rows.row_cache = 1;
    cases.push_back(BottleneckCase(rng, rows));
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    sp_seg_shift_t sh;
    ASSERT_EQ(sp_seg_sim_min_shift(&c.desc, &sh), SP_OK);
    const int32_t pool_bytes = sh.footprint_bytes;
    int bad = 0;
    for (int32_t in_start = 0; in_start < pool_bytes; ++in_start) {
      const int32_t out_start =
          ((in_start - sh.shift_bytes) % pool_bytes + pool_bytes) % pool_bytes;
      const PoolResult r = RunInPool(c, rng, pool_bytes, 1, in_start, out_start);
      ASSERT_EQ(r.status, SP_OK);
      if (r.out != c.expect) ++bad;
    }
    EXPECT_EQ(bad, 0) << "of " << pool_bytes << " start positions";
  }
}

// The kernels' own order (simulated) against the contract's analysis (src/segment/overlap.h, ISL,
// at byte granularity): equal for the single-layer kernels; the bottleneck reads earlier than its
// contract (column cache), so its shift may only be smaller.
int64_t SimShift(const sp_seg_layer_desc_t& d) {
  sp_seg_shift_t sh;
  EXPECT_EQ(sp_seg_sim_min_shift(&d, &sh), SP_OK);
  return sh.shift_bytes;
}

int64_t IslShift(const sramplan::StatusOr<sramplan::segment::AffineKernel>& k) {
  EXPECT_TRUE(k.ok()) << k.status().message();
  if (!k.ok()) return -1;
  auto a = sramplan::segment::AnalyzeShift(*k);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? a->shift * k->segment_bytes : -1;
}

TEST(SegKernels, SimulatedShiftMatchesContractAnalysis) {
  namespace seg = sramplan::segment;
  Rng rng(1001);
  int compared = 0;
  for (int i = 0; i < 10; ++i) {  // FC, byte chunks and chunks dividing K and N
    const int m = Uniform(rng, 1, 3), c = Uniform(rng, 1, 4);
    const int k = c * Uniform(rng, 1, 6), n = c * Uniform(rng, 1, 6);
    sp_seg_layer_desc_t d{};
    d.kind = SP_SEG_KIND_FC;
    d.fc = sp_seg_fc_shape_t{m, k, n, c};
    EXPECT_EQ(SimShift(d), IslShift(seg::FullyConnectedKernel(m, k, n, c)))
        << "fc " << m << "x" << k << "->" << n << " chunk " << c;
    ++compared;
  }
  for (int i = 0; i < 8; ++i) {  // pointwise (stride 1)
    const int h = Uniform(rng, 1, 5), w = Uniform(rng, 1, 5);
    const int cin = Uniform(rng, 1, 12), cout = Uniform(rng, 1, 12);
    sp_seg_layer_desc_t d{};
    d.kind = SP_SEG_KIND_POINTWISE;
    d.conv = ConvShape(h, w, cin, cout, 1, 1, 1, 1, 0, 0, 0, 0);
    EXPECT_EQ(SimShift(d), IslShift(seg::PointwiseConvKernel(h, w, cin, cout, 1)))
        << "pointwise " << h << "x" << w << "x" << cin << "->" << cout;
    ++compared;
  }
  for (int i = 0; i < 10; ++i) {  // Conv2D, any padding and stride
    const int r = Uniform(rng, 1, 3), s = Uniform(rng, 1, 3);
    seg::Conv2DParams cp;
    cp.r = r;
    cp.s = s;
    cp.pad_top = Uniform(rng, 0, r - 1);
    cp.pad_bottom = Uniform(rng, 0, r - 1);
    cp.pad_left = Uniform(rng, 0, s - 1);
    cp.pad_right = Uniform(rng, 0, s - 1);
    cp.h = std::max<int64_t>(r - cp.pad_top - cp.pad_bottom, 1) + Uniform(rng, 0, 3);
    cp.w = std::max<int64_t>(s - cp.pad_left - cp.pad_right, 1) + Uniform(rng, 0, 3);
    cp.c_in = Uniform(rng, 1, 6);
    cp.c_out = Uniform(rng, 1, 6);
    cp.stride_h = Uniform(rng, 1, 2);
    cp.stride_w = Uniform(rng, 1, 2);
    cp.segment_bytes = 1;
    sp_seg_layer_desc_t d{};
    d.kind = SP_SEG_KIND_CONV;
    d.conv = ConvShape(cp.h, cp.w, cp.c_in, cp.c_out, r, s, cp.stride_h, cp.stride_w, cp.pad_top,
                       cp.pad_left, cp.pad_bottom, cp.pad_right);
    EXPECT_EQ(SimShift(d), IslShift(seg::Conv2DKernel(cp)))
        << "conv " << cp.h << "x" << cp.w << "x" << cp.c_in << "->" << cp.c_out << " k" << r << "x"
        << s;
    ++compared;
  }
  for (int i = 0; i < 8; ++i) {  // depthwise, symmetric padding
    const int r = i % 2 ? 3 : 5, pad = Uniform(rng, 0, (r - 1) / 2), stride = Uniform(rng, 1, 2);
    const int h = std::max(r - 2 * pad, 1) + Uniform(rng, 0, 3);
    const int w = std::max(r - 2 * pad, 1) + Uniform(rng, 0, 3);
    const int c = i == 7 ? 70 : Uniform(rng, 1, 8);  // 70: more than one channel chunk
    sp_seg_layer_desc_t d{};
    d.kind = SP_SEG_KIND_DEPTHWISE;
    d.conv = ConvShape(h, w, c, c, r, r, stride, stride, pad, pad, pad, pad);
    EXPECT_EQ(SimShift(d), IslShift(seg::DepthwiseConvKernel(h, w, c, r, r, stride, pad, 1)))
        << "depthwise " << h << "x" << w << "x" << c << " k" << r << " s" << stride << " p" << pad;
    ++compared;
  }
  for (int i = 0; i < 6; ++i) {  // bottleneck: at most the contract's shift
    const bool residual = i % 2 == 0;
    const int stride = residual ? 1 : Uniform(rng, 1, 2);
    const int cin = Uniform(rng, 1, 5), cmid = Uniform(rng, 1, 8);
    const int cout = residual ? cin : Uniform(rng, 1, 5);
    const int h = Uniform(rng, 2, 5), w = Uniform(rng, 2, 5);
    seg::BottleneckParams bp;
    bp.h = h;
    bp.w = w;
    bp.c_in = cin;
    bp.c_mid = cmid;
    bp.c_out = cout;
    bp.r = bp.s = 3;
    bp.stride2 = stride;
    bp.residual = residual;
    bp.segment_bytes = 1;
    sp_seg_layer_desc_t d{};
    d.kind = SP_SEG_KIND_BOTTLENECK;
    d.bottleneck = BShape(h, w, cin, cmid, cout, 3, 3, stride, stride, 1, 1, 1, 1, true, residual);
    EXPECT_LE(SimShift(d), IslShift(seg::InvertedBottleneckKernel(bp)))
        << "bottleneck " << h << "x" << w << " " << cin << "/" << cmid << "/" << cout;
    ++compared;
  }
  EXPECT_EQ(compared, 42);
}

TEST(SegKernels, BottleneckWorkspaceFormula) {
  // 3x3: R*S + 1 = 10 slots of C_mid; the residual slot holds C_out bytes; then the scratch: 3
  // bytes of alignment and 8 per depthwise tap.
  auto s = BShape(20, 20, 16, 48, 16, 3, 3, 1, 1, 1, 1, 1, 1, true, true);
  const int32_t taps = 3 + 8 * 9;
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&s), 10 * 48 + 16 + taps);
  s.has_residual = 0;
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&s), 10 * 48 + taps);
  // 5x5 under the column cache, pointwise expansion, C_in = 16: min(R, 128 / C_in) = 5 input pixels
  // copied next to each other; not with C_in = 6 (not a multiple of 4) nor under the row cache.
  auto five = BShape(20, 20, 16, 48, 16, 5, 5, 1, 1, 2, 2, 2, 2, true, false);
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&five), 26 * 48 + 3 + 8 * 25 + 5 * 16);
  five.c_in = 6;
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&five), 26 * 48 + 3 + 8 * 25);
  five.c_in = 16;
  five.row_cache = 1;
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&five), (5 * 20 + 1) * 48 + 3 + 8 * 25);
  s.has_expand = 0;
  s.c_mid = 16;
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&s), 10 * 16 + taps);
  // A stem (3x3 stride-2 Conv2D expansion of 3 channels): two 27-byte window columns.
  const auto stem = BShapeConvExpand(20, 20, 3, 16, 8, 3, 3, 1, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1);
  EXPECT_EQ(sp_seg_bottleneck_workspace_bytes(&stem), 10 * 16 + taps + 2 * 27);
  // One byte less is refused.
  Rng rng(707);
  auto full = BShape(6, 6, 8, 24, 8, 3, 3, 1, 1, 1, 1, 1, 1, true, true);
  const BottleneckData b = MakeBottleneck(rng, full);
  const sp_seg_bottleneck_s8_t params = b.Params();
  std::vector<int8_t> pool_mem(2 * 6 * 6 * 8), ws(sp_seg_bottleneck_workspace_bytes(&full));
  sp_seg_pool_t pool{pool_mem.data(), static_cast<int32_t>(pool_mem.size()), 1};
  EXPECT_EQ(sp_seg_bottleneck_s8(&pool, 0, 288, &full, &params, ws.data(),
                                 static_cast<int32_t>(ws.size()) - 1),
            SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_seg_bottleneck_s8(&pool, 0, 288, &full, &params, ws.data(),
                                 static_cast<int32_t>(ws.size())),
            SP_OK);
  // Residual needs C_in == C_out and a same-size output.
  auto bad = full;
  bad.stride_h = bad.stride_w = 2;
  EXPECT_EQ(sp_seg_bottleneck_s8(&pool, 0, 288, &bad, &params, ws.data(),
                                 static_cast<int32_t>(ws.size())),
            SP_BAD_ARGUMENT);
}

TEST(SegKernels, SegmentStartsAndShiftSegments) {
  std::vector<int8_t> mem(60);
  sp_seg_pool_t pool{mem.data(), 5, 12};
  EXPECT_EQ(sp_seg_start(&pool, 0), 0);
  EXPECT_EQ(sp_seg_start(&pool, 4), 48);
  EXPECT_EQ(sp_seg_start(&pool, 5), 0);
  EXPECT_EQ(sp_seg_start(&pool, -1), 48);
  EXPECT_EQ(sp_seg_shift_segments(0, 16), 0);
  EXPECT_EQ(sp_seg_shift_segments(15, 16), 1);
  EXPECT_EQ(sp_seg_shift_segments(351, 16), 22);
}

TEST(SegKernels, RejectsBadArguments) {
  Rng rng(808);
  LayerData l = MakeLayer(rng, 4, 16, 4, 0);
  const sp_seg_layer_s8_t v = l.View();
  const sp_seg_fc_shape_t s{1, 4, 4, 0};
  std::vector<int8_t> mem(16), ws(8);
  sp_seg_pool_t pool{mem.data(), 16, 1};
  EXPECT_EQ(sp_seg_fully_connected_s8(&pool, 0, 8, &s, &v, ws.data(), 4), SP_OK);
  EXPECT_EQ(sp_seg_fully_connected_s8(&pool, 0, 8, &s, &v, ws.data(), 3), SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_seg_fully_connected_s8(&pool, 0, 8, &s, &v, nullptr, 4), SP_BAD_ARGUMENT);
  const sp_seg_fc_shape_t neg{1, 4, 4, -1};
  EXPECT_EQ(sp_seg_fully_connected_s8(&pool, 0, 8, &neg, &v, ws.data(), 4), SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_seg_fully_connected_s8(&pool, 16, 0, &s, &v, ws.data(), 4),
            SP_BAD_ARGUMENT);  // start >= pool
  EXPECT_EQ(sp_seg_fully_connected_s8(&pool, 0, 3, &s, &v, ws.data(), 4),
            SP_BAD_ARGUMENT);  // shift 13 > 12
  sp_seg_pool_t empty{nullptr, 16, 1};
  EXPECT_EQ(sp_seg_fully_connected_s8(&empty, 0, 8, &s, &v, ws.data(), 4), SP_BAD_ARGUMENT);
  const sp_seg_conv_shape_t pw = ConvShape(2, 2, 4, 4, 1, 1, 1, 1, 1, 0, 0, 0);
  std::vector<int8_t> big(64);
  sp_seg_pool_t pool2{big.data(), 64, 1};
  EXPECT_EQ(sp_seg_pointwise_s8(&pool2, 0, 32, &pw, &v, ws.data(), 4),
            SP_BAD_ARGUMENT);  // padded 1x1
  const sp_seg_conv_shape_t pw_ok = ConvShape(2, 2, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0);
  EXPECT_EQ(sp_seg_pointwise_s8(&pool2, 0, 32, &pw_ok, &v, ws.data(), 4), SP_OK);
  EXPECT_EQ(sp_seg_pointwise_s8(&pool2, 0, 32, &pw_ok, &v, ws.data(), 3), SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_seg_conv_s8(&pool2, 0, 32, &pw_ok, &v, ws.data(), 3), SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_seg_depthwise_s8(&pool2, 0, 32, &pw_ok, &v, ws.data(), 3), SP_BAD_ARGUMENT);
  sp_seg_layer_desc_t desc{};
  desc.kind = SP_SEG_KIND_CONV;
  desc.conv = ConvShape(2, 2, 4, 4, 9, 9, 1, 1, 0, 0, 0, 0);  // 81 taps > SP_SEG_MAX_TAPS
  sp_seg_shift_t sh;
  EXPECT_EQ(sp_seg_sim_min_shift(&desc, &sh), SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_seg_sim_is_safe(&desc, 0), -1);
}

}  // namespace
