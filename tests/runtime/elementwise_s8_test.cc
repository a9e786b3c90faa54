// int8 elementwise kernels: Add/Sub/Mul with TFLite requantisation and broadcasting, LUT
// activations, requantize, clamp, and the integer softmax.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"
}

namespace {

sp_tensor_t Contig(std::vector<int32_t> dims) {
  sp_tensor_t t;
  sp_tensor_init_contiguous(&t, static_cast<int32_t>(dims.size()), dims.data());
  return t;
}
sp_tensor_t Scalar() { return Contig({}); }

sp_add_s8_params_t AddParams(double s1, int zp1, double s2, int zp2, double so, int zpo) {
  return sp_host_add_s8_params(s1, zp1, s2, zp2, so, zpo, -128, 127);
}

int8_t Add1(int8_t a, int8_t b, const sp_add_s8_params_t& p) {
  const sp_tensor_t s = Scalar();
  int8_t o = 0;
  EXPECT_EQ(sp_add_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  return o;
}

TEST(AddS8, ParamsAreTfLites) {
  // s1 = 0.5, s2 = 1, so = 1: twice_max = 2; in1 0.25 = (2^30, -1); in2 0.5 = (2^30, 0);
  // out 2 / 2^20 = 2^-19 = (2^30, -18).
  const sp_add_s8_params_t p = AddParams(0.5, 0, 1.0, 0, 1.0, 0);
  EXPECT_EQ(p.left_shift, 20);
  EXPECT_EQ(p.in1_rq.multiplier, 1 << 30);
  EXPECT_EQ(p.in1_rq.shift, -1);
  EXPECT_EQ(p.in2_rq.multiplier, 1 << 30);
  EXPECT_EQ(p.in2_rq.shift, 0);
  EXPECT_EQ(p.out_rq.multiplier, 1 << 30);
  EXPECT_EQ(p.out_rq.shift, -18);
}

TEST(AddS8, HandComputedRounding) {
  // Equal scales: exact integer sums.
  const sp_add_s8_params_t eq = AddParams(1.0, 0, 1.0, 0, 1.0, 0);
  EXPECT_EQ(Add1(3, 4, eq), 7);
  EXPECT_EQ(Add1(-3, -4, eq), -7);
  // s1 = 0.5, s2 = 1: 3 * 0.5 + 1 = 2.5. a = 3*2^20 * 0.25 = 3*2^18, b = 2^20 * 0.5 = 2^19,
  // sum 5*2^18; out: SRDHM(5*2^18, 0.5) = 5*2^17, RDBPOT(., 18) = 2.5 -> 3. Negated: -2.5 -> -3.
  const sp_add_s8_params_t p = AddParams(0.5, 0, 1.0, 0, 1.0, 0);
  EXPECT_EQ(Add1(3, 1, p), 3);
  EXPECT_EQ(Add1(-3, -1, p), -3);
  EXPECT_EQ(Add1(1, 0, p), 1);   // 0.5 -> 1
  EXPECT_EQ(Add1(-1, 0, p), -1); // -0.5 -> -1
  // Zero points: real = (x - zp) * s; (13 - 1)*0.5 + (-1 + 2)*1 = 7 -> 7 + 10 = 17.
  const sp_add_s8_params_t z = AddParams(0.5, 1, 1.0, -2, 1.0, 10);
  EXPECT_EQ(Add1(13, -1, z), 17);
}

TEST(AddS8, SaturationAndFusedActivation) {
  sp_add_s8_params_t p = AddParams(1.0, 0, 1.0, 0, 1.0, 0);
  EXPECT_EQ(Add1(127, 127, p), 127);
  EXPECT_EQ(Add1(-128, -128, p), -128);
  p.act_min = 0;  // ReLU with zero point 0
  p.act_max = 6;  // ReLU6 with scale 1
  EXPECT_EQ(Add1(-3, 1, p), 0);
  EXPECT_EQ(Add1(3, 5, p), 6);
  EXPECT_EQ(Add1(3, 2, p), 5);
}

TEST(SubS8, HandComputed) {
  const sp_add_s8_params_t p = AddParams(1.0, 0, 1.0, 0, 1.0, 0);
  const sp_tensor_t s = Scalar();
  int8_t a = 3, b = 5, o = 0;
  ASSERT_EQ(sp_sub_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  EXPECT_EQ(o, -2);
  a = -100;
  b = 100;
  ASSERT_EQ(sp_sub_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  EXPECT_EQ(o, -128);
}

TEST(MulS8, HandComputedRounding) {
  const sp_tensor_t s = Scalar();
  // s1 * s2 / so = 0.5 * 0.25 / 0.125 = 1: 3 * 5 = 15.
  sp_mul_s8_params_t p = sp_host_mul_s8_params(0.5, 0, 0.25, 0, 0.125, 0, -128, 127);
  EXPECT_EQ(p.rq.multiplier, 1 << 30);
  EXPECT_EQ(p.rq.shift, 1);
  int8_t a = 3, b = 5, o = 0;
  ASSERT_EQ(sp_mul_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  EXPECT_EQ(o, 15);
  // Multiplier 0.5: 15 * 0.5 = 7.5 -> 8; -15 * 0.5 = -7.5 -> -7 (TFLite's doubling high mul rounds
  // negative ties toward zero).
  p = sp_host_mul_s8_params(0.5, 0, 0.25, 0, 0.25, 0, -128, 127);
  ASSERT_EQ(sp_mul_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  EXPECT_EQ(o, 8);
  a = -3;
  ASSERT_EQ(sp_mul_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  EXPECT_EQ(o, -7);
  // Zero points and saturation: (20 - 10) * (30 + 5) * 1 = 350 -> 127.
  p = sp_host_mul_s8_params(0.5, 10, 0.25, -5, 0.125, 0, -128, 127);
  a = 20;
  b = 30;
  ASSERT_EQ(sp_mul_s8(&s, &a, &s, &b, &p, &s, &o), SP_OK);
  EXPECT_EQ(o, 127);
}

TEST(AddS8, BroadcastingMatchesScalarCalls) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> d(-128, 127);
  const sp_add_s8_params_t p = AddParams(0.07, 3, 0.05, -9, 0.1, -4);
  const sp_mul_s8_params_t m = sp_host_mul_s8_params(0.07, 3, 0.05, -9, 0.1, -4, -128, 127);
  struct Shapes {
    std::vector<int32_t> a, b, out;
  };
  const std::vector<Shapes> cases = {
      {{2, 3}, {3}, {2, 3}},
      {{2, 3}, {2, 1}, {2, 3}},
      {{4, 1, 3}, {1, 5, 1}, {4, 5, 3}},
      {{}, {2, 2}, {2, 2}},
      {{1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1}, {2, 2, 2, 2, 2, 2}},
  };
  for (const Shapes& c : cases) {
    const sp_tensor_t ad = Contig(c.a), bd = Contig(c.b), od = Contig(c.out);
    std::vector<int8_t> a(sp_tensor_numel(&ad)), b(sp_tensor_numel(&bd));
    for (auto& v : a) v = static_cast<int8_t>(d(rng));
    for (auto& v : b) v = static_cast<int8_t>(d(rng));
    std::vector<int8_t> sum(sp_tensor_numel(&od)), prod(sum.size());
    ASSERT_EQ(sp_add_s8(&ad, a.data(), &bd, b.data(), &p, &od, sum.data()), SP_OK);
    ASSERT_EQ(sp_mul_s8(&ad, a.data(), &bd, b.data(), &m, &od, prod.data()), SP_OK);
    // Reference: walk the output index, map it to a and b by numpy rules, call on scalars.
    const int r = od.rank;
    std::vector<int32_t> idx(r, 0);
    for (size_t flat = 0; flat < sum.size(); ++flat) {
      size_t rem = flat;
      for (int k = r - 1; k >= 0; --k) {
        idx[k] = static_cast<int32_t>(rem % od.dims[k]);
        rem /= od.dims[k];
      }
      auto offset = [&](const sp_tensor_t& t) {
        int off = 0;
        for (int k = 0; k < t.rank; ++k) {
          const int oi = idx[r - t.rank + k];
          off += (t.dims[k] == 1 ? 0 : oi) * t.strides[k];
        }
        return off;
      };
      const int8_t x = a[offset(ad)], y = b[offset(bd)];
      EXPECT_EQ(sum[flat], Add1(x, y, p));
      const sp_tensor_t s = Scalar();
      int8_t pr = 0;
      ASSERT_EQ(sp_mul_s8(&s, &x, &s, &y, &m, &s, &pr), SP_OK);
      EXPECT_EQ(prod[flat], pr);
    }
  }
}

TEST(AddS8, StrideZeroBroadcastAndInPlace) {
  // b described as (2, 3) with strides (0, 1): the same row for both output rows.
  const sp_add_s8_params_t p = AddParams(1.0, 0, 1.0, 0, 1.0, 0);
  sp_tensor_t ad = Contig({2, 3}), bd = Contig({2, 3});
  bd.strides[0] = 0;
  std::vector<int8_t> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30};
  // In place: out == a with the same descriptor.
  ASSERT_EQ(sp_add_s8(&ad, a.data(), &bd, b.data(), &p, &ad, a.data()), SP_OK);
  EXPECT_EQ(a, (std::vector<int8_t>{11, 22, 33, 14, 25, 36}));
  // Incompatible shapes are rejected.
  const sp_tensor_t bad = Contig({4});
  int8_t o[6];
  EXPECT_EQ(sp_add_s8(&ad, a.data(), &bad, b.data(), &p, &ad, o), SP_BAD_ARGUMENT);
}

TEST(LutS8, HandValuesOfBuiltTables) {
  int8_t sig[256], th[256], hs[256];
  // Sigmoid: in scale 0.1, zp 0 -> out scale 1/256, zp -128 (TFLite's convention).
  sp_host_build_lut_s8(SP_LUT_SIGMOID, 0, 0, 0.1, 0, 1.0 / 256, -128, sig);
  // Tanh: out scale 1/128, zp 0.
  sp_host_build_lut_s8(SP_LUT_TANH, 0, 0, 0.1, 0, 1.0 / 128, 0, th);
  // Hard-swish: out scale 0.05, zp 0.
  sp_host_build_lut_s8(SP_LUT_HARD_SWISH, 0, 0, 0.1, 0, 0.05, 0, hs);
  const sp_tensor_t d = Contig({6});
  const int8_t in[6] = {0, 10, -10, 127, -128, 40};
  int8_t out[6];
  ASSERT_EQ(sp_lut_s8(&d, in, sig, &d, out), SP_OK);
  // sigmoid(0) = 0.5 -> 128 - 128 = 0; sigmoid(1) = 0.731059 * 256 = 187.15 -> 59;
  // sigmoid(-1) = 0.268941 * 256 = 68.85 -> -59; sigmoid(12.7) * 256 -> 256 -> clamps to 127;
  // sigmoid(-12.8) * 256 = 0.0007 -> -128; sigmoid(4) = 0.982014 * 256 = 251.4 -> 123.
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{0, 59, -59, 127, -128, 123}));
  ASSERT_EQ(sp_lut_s8(&d, in, th, &d, out), SP_OK);
  // tanh(1) * 128 = 97.48 -> 97; tanh(12.7) -> 128 -> 127; tanh(4) * 128 = 127.91 -> 127.
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{0, 97, -97, 127, -128, 127}));
  ASSERT_EQ(sp_lut_s8(&d, in, hs, &d, out), SP_OK);
  // hswish(1) = 4/6 = 0.6667 / 0.05 = 13.3 -> 13; hswish(-1) = -1*2/6 = -0.333 -> -6.67 -> -7;
  // hswish(12.7) = 12.7 -> 254 -> 127; hswish(-12.8) = 0; hswish(4) = 4 -> 80.
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{0, 13, -7, 127, 0, 80}));
  // Index convention: table[x + 128].
  int8_t ident[256];
  for (int i = 0; i < 256; ++i) ident[i] = static_cast<int8_t>(127 - i);
  ASSERT_EQ(sp_lut_s8(&d, in, ident, &d, out), SP_OK);
  EXPECT_EQ(out[0], -1);    // 127 - 128
  EXPECT_EQ(out[4], 127);   // x = -128 -> index 0
  EXPECT_EQ(out[3], -128);  // x = 127 -> index 255
}

TEST(LutS8, StridedLayouts) {
  // A 2x3 view with transposed strides written into a contiguous output.
  int8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<int8_t>((i - 128) / 2);
  sp_tensor_t in_d = Contig({2, 3});
  in_d.strides[0] = 1;
  in_d.strides[1] = 2;
  const int8_t in[6] = {10, 20, 30, 40, 50, 60};  // logical [[10, 30, 50], [20, 40, 60]]
  const sp_tensor_t out_d = Contig({2, 3});
  int8_t out[6];
  ASSERT_EQ(sp_lut_s8(&in_d, in, table, &out_d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{5, 15, 25, 10, 20, 30}));
}

TEST(RequantizeAndClampS8, HandComputed) {
  const sp_tensor_t d = Contig({4});
  const int8_t in[4] = {10, 11, -128, 127};
  int8_t out[4];
  // (x - 0) * 0.5 + 3: 5 + 3 = 8; 5.5 -> 6 -> 9; -64 + 3 = -61; 63.5 -> 64 -> 67.
  ASSERT_EQ(sp_requantize_s8(&d, in, 0, sp_requant_t{1 << 30, 0}, 3, &d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 4), (std::vector<int8_t>{8, 9, -61, 67}));
  // x * 2 - 5 saturates: 15, 17, -128, 127.
  ASSERT_EQ(sp_requantize_s8(&d, in, 0, sp_requant_t{1 << 30, 2}, -5, &d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 4), (std::vector<int8_t>{15, 17, -128, 127}));
  ASSERT_EQ(sp_clamp_s8(&d, in, -3, 10, &d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 4), (std::vector<int8_t>{10, 10, -3, 10}));
}

TEST(SoftmaxS8, HandComputed) {
  int32_t table[256];
  sp_host_build_softmax_exp_table(0.1, 1.0, table);
  EXPECT_EQ(table[0], 65536);
  EXPECT_EQ(table[10], 24109);  // 65536 / e = 24109.3
  const sp_tensor_t d = Contig({3, 2});
  const int8_t in[6] = {0, 0, 10, 0, -128, 127};
  int8_t out[6];
  ASSERT_EQ(sp_softmax_s8(&d, in, 1, table, &d, out), SP_OK);
  // Equal logits: 0.5 each -> 128 - 128 = 0.
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  // 1.0 vs 0.0: 256 * 65536 / 89645 = 187.15 -> 59; 256 * 24109 / 89645 = 68.85 -> -59.
  EXPECT_EQ(out[2], 59);
  EXPECT_EQ(out[3], -59);
  // -12.8 vs 12.7: p ~ 1 -> 256 clamps to 127; the other exp(-25.5) rounds to 0 -> -128.
  EXPECT_EQ(out[4], -128);
  EXPECT_EQ(out[5], 127);
}

TEST(SoftmaxS8, SumsToOneAndTracksFloat) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> d(-128, 127);
  const double scale = 0.0625;
  int32_t table[256];
  sp_host_build_softmax_exp_table(scale, 1.0, table);
  for (int len : {2, 10, 100, 1000}) {
    const sp_tensor_t desc = Contig({len});
    std::vector<int8_t> in(len), out(len);
    for (auto& v : in) v = static_cast<int8_t>(d(rng));
    ASSERT_EQ(sp_softmax_s8(&desc, in.data(), 0, table, &desc, out.data()), SP_OK);
    double mx = -1e9, z = 0, sum = 0;
    for (int8_t v : in) mx = std::max(mx, v * scale);
    for (int8_t v : in) z += std::exp(v * scale - mx);
    for (int i = 0; i < len; ++i) {
      const double p = (out[i] + 128) / 256.0;
      const double ref = std::exp(in[i] * scale - mx) / z;
      EXPECT_NEAR(p, ref, 1.0 / 256 + 1e-3) << len << " " << i;
      sum += p;
    }
    // Each element is rounded to 1/256: the total is within len/512 of 1 (and 1/256 for clamping).
    EXPECT_NEAR(sum, 1.0, len / 512.0 + 1.0 / 256) << len;
    if (len <= 10) {
      EXPECT_NEAR(sum, 1.0, 0.02) << len;
    }
  }
}

TEST(SoftmaxS8, AxisViaStridesMatchesLastAxis) {
  // Softmax over axis 1 of (2, 3, 4) equals softmax over the last axis of its (2, 4, 3) transpose.
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> d(-128, 127);
  int32_t table[256];
  sp_host_build_softmax_exp_table(0.05, 1.0, table);
  const sp_tensor_t a = Contig({2, 3, 4});
  std::vector<int8_t> x(24), y(24);
  for (auto& v : x) v = static_cast<int8_t>(d(rng));
  ASSERT_EQ(sp_softmax_s8(&a, x.data(), 1, table, &a, y.data()), SP_OK);
  // View (2, 4, 3) of the same memory: strides (12, 1, 4).
  sp_tensor_t t = Contig({2, 4, 3});
  t.strides[0] = 12;
  t.strides[1] = 1;
  t.strides[2] = 4;
  std::vector<int8_t> z(24);
  ASSERT_EQ(sp_softmax_s8(&t, x.data(), 2, table, &t, z.data()), SP_OK);
  EXPECT_EQ(y, z);
  EXPECT_EQ(sp_softmax_s8(&a, x.data(), 3, table, &a, y.data()), SP_BAD_ARGUMENT);
}

}  // namespace
