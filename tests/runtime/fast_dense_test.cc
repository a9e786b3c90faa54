// runtime/src/sp_fast_s8.h, issue 17's second pass: the per-channel fast requantisation (sp_rqc_*,
// one SMLAL on Cortex-M) equals sp_mbqm / sp_mbqm_zp + clamp for every channel it accepts, and the
// dense loops (sp_dense_out, sp_dense_out2, sp_dense_pixels: channel pairs outer, pixel pairs
// inner) equal the plain per-output loop for odd and even pixel / channel counts, input strides
// equal to and different from the weight stride, and fast and slow requantisation channels. This is
// the portable path; the assembly of the same functions (SP_DSP) is checked bit for bit in QEMU by
// tests/codegen/firmware_kernels_test.cc and bench/firmware_speed.py (whole-network checksums).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/src/sp_fast_s8.h"
#include "sramplan_rt_int8.h"
}

namespace {

TEST(FastDense, ChannelRequantEqualsTheReference) {
  const std::vector<int32_t> xs = {0, 1, -1, 2, -2, 3, -3, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1,
                                   -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, 123456789, -987654321};
  const std::vector<int32_t> ms = {0, 1, -1, 1 << 30, (1 << 30) + 12345, INT32_MAX, INT32_MIN, 1518500250, 2};
  int accepted = 0, refused = 0;
  for (int32_t m : ms)
    for (int32_t sh = -40; sh <= 3; ++sh) {
      const sp_requant_t rq{m, sh};
      sp_rqc_t c;
      if (!sp_rqc_init(&rq, 0, &c)) {
        ++refused;  // negative multiplier or shift >= 0: the caller takes sp_fq_out
        EXPECT_TRUE(m < 0 || sh >= 0) << m << " " << sh;
        continue;
      }
      ++accepted;
      for (int32_t x : xs) ASSERT_EQ(sp_rqc_apply(x, &c), sp_mbqm(x, m, sh)) << x << " " << m << " " << sh;
    }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
  std::mt19937 rng(23);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), acc(-(1 << 22), 1 << 22),
      mult(1 << 30, INT32_MAX), shift(-35, -1), zp(-128, 127), tie(-4096, 4096);
  for (int i = 0; i < 400000; ++i) {
    const int32_t m = (i & 2) ? mult(rng) : (1 << 30) + (i & 7), s = shift(rng), z = zp(rng);
    // i % 3 == 2: small accumulators around the rounding ties of small shifts.
    const int32_t x = i % 3 == 0 ? any(rng) : (i % 3 == 1 ? acc(rng) : tie(rng));
    const sp_requant_t rq{m, s};
    sp_rqc_t c;
    ASSERT_TRUE(sp_rqc_init(&rq, z, &c));
    ASSERT_EQ(sp_rqc_apply(x, &c), sp_mbqm(x, m, s)) << x << " " << m << " " << s;
    ASSERT_EQ(sp_rqc_out(x, &c, z, -100, 110), sp_clamp_i32(sp_mbqm_zp(x, m, s, z), -100, 110));
    ASSERT_EQ(sp_rqc_out_full(x, &c, z), sp_clamp_i32(sp_mbqm_zp(x, m, s, z), -128, 127));
  }
  // sp_rqf_out_full (constants derived inline) for every shift sp_rq_all_fast accepts.
  for (int32_t sh = -31; sh <= -1; ++sh)
    for (int i = 0; i < 2000; ++i) {
      const sp_requant_t rq{mult(rng), sh};
      const int32_t x = (i & 1) ? any(rng) : tie(rng), z = zp(rng);
      ASSERT_TRUE(sp_rq_all_fast(&rq, 1, z));
      ASSERT_EQ(sp_rqf_out_full(x, &rq, z), sp_clamp_i32(sp_mbqm_zp(x, rq.multiplier, sh, z), -128, 127));
    }
  const sp_requant_t mixed[3] = {{1 << 30, -3}, {1 << 30, 0}, {1 << 30, -40}};
  EXPECT_TRUE(sp_rq_all_fast(mixed, 1, 0));
  EXPECT_FALSE(sp_rq_all_fast(mixed, 2, 0));  // shift 0
  EXPECT_FALSE(sp_rq_all_fast(mixed + 2, 1, 0));  // shift below -31
  EXPECT_FALSE(sp_rq_all_fast(mixed, 1, 70000));
  const sp_requant_t big_zp{1 << 30, -3};
  sp_rqc_t c;
  EXPECT_FALSE(sp_rqc_init(&big_zp, 1 << 20, &c));  // |zero point| > 2^16: the clamp path
}

TEST(FastDense, PreparedAddEqualsTheReferenceAdd) {
  std::mt19937 rng(41);
  std::uniform_int_distribution<int32_t> byte(-128, 127), mult(1 << 30, INT32_MAX), any(INT32_MIN, INT32_MAX),
      shift(-33, 3), ls(0, 22), pick(0, 7);
  int modes[3] = {0, 0, 0};
  for (int i = 0; i < 3000; ++i) {
    sp_add_s8_params_t p{};
    p.in1_zp = byte(rng);
    p.in2_zp = byte(rng);
    p.out_zp = pick(rng) == 0 ? 70000 : byte(rng);  // a zero point the fast path refuses, sometimes
    p.left_shift = pick(rng) < 6 ? 20 : ls(rng);
    // TFLite's Add: the larger input scale gives {2^30, 0}; also random and negative multipliers.
    p.in1_rq = pick(rng) < 4 ? sp_requant_t{1 << 30, 0} : sp_requant_t{mult(rng), shift(rng)};
    p.in2_rq = pick(rng) == 0 ? sp_requant_t{any(rng), shift(rng)} : sp_requant_t{mult(rng), shift(rng)};
    p.out_rq = {pick(rng) == 0 ? INT32_MIN : mult(rng), shift(rng) - 10};
    p.act_min = pick(rng) < 4 ? -128 : -90;
    p.act_max = pick(rng) < 4 ? 127 : 100;
    sp_addc_t c;
    sp_addc_init(&p, &c);
    for (const sp_rqt_t* t : {&c.r1, &c.r2, &c.ro}) ++modes[t->mode];
    for (int a = -128; a < 128; a += 3)
      for (int b = -128; b < 128; b += 5)
        ASSERT_EQ(sp_addc(a, b, &c), sp_fq_add(a, b, &p)) << i << " " << a << " " << b;
  }
  EXPECT_GT(modes[0], 0);  // sp_fq_mbqm
  EXPECT_GT(modes[1], 0);  // the fast path
  EXPECT_GT(modes[2], 0);  // shift >= 0
}

TEST(FastDense, DepthwiseTapPairsAndFourChannelRequantEqualThePlainLoops) {
  std::mt19937 rng(43);
  std::uniform_int_distribution<int> byte(-128, 127), tap(0, 60);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX), shift(-14, -1), b(-5000, 5000);
  std::vector<int8_t> x(256), w(256);
  for (auto& v : x) v = static_cast<int8_t>(byte(rng));
  for (auto& v : w) v = static_cast<int8_t>(byte(rng));
  for (int ntap : {0, 1, 2, 9, 25, 49}) {
    for (int32_t in_off : {128, -5, 40000}) {
      std::vector<int32_t> tp(2 * ntap);
      for (auto& v : tp) v = tap(rng) * 4;
      int32_t want[4], got[4];
      for (int j = 0; j < 4; ++j) {
        got[j] = want[j] = b(rng);
        for (int t = 0; t < ntap; ++t) want[j] += (x[tp[2 * t] + j] + in_off) * w[tp[2 * t + 1] + j];
      }
      sp_dw4p_s8(x.data(), w.data(), tp.data(), ntap, in_off, got);
      for (int j = 0; j < 4; ++j) ASSERT_EQ(got[j], want[j]) << ntap << " " << in_off << " " << j;
      // Channel 3 takes the slow requantisation (shift >= 0).
      const sp_requant_t rq[4] = {{mult(rng), shift(rng)}, {mult(rng), shift(rng)}, {mult(rng), shift(rng)}, {mult(rng), 2}};
      for (auto [lo, hi] : {std::pair{-128, 127}, std::pair{-128, 90}}) {
        int8_t out[4];
        const int32_t zp = byte(rng);
        sp_rq4_store(got, rq, zp, lo, hi, out);
        for (int j = 0; j < 4; ++j)
          ASSERT_EQ(out[j], sp_clamp_i32(sp_mbqm_zp(got[j], rq[j].multiplier, rq[j].shift, zp), lo, hi));
      }
    }
  }
}

// TinyEngine's in-place depthwise runs one channel plane per call (input pixels strided by the
// channel count, output dense): the plane path (interior tap table, two outputs at a time) equals
// the generic loop for odd and even widths, strides, paddings, dilations and kernel sizes.
TEST(FastDense, DepthwisePlaneEqualsTheGenericLoop) {
  std::mt19937 rng(47);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  int cases = 0;
  for (int k : {1, 3, 5, 7})
    for (int stride : {1, 2})
      for (int dil : {1, 2})
        for (int hw : {1, 6, 9, 12})
        for (int pad : {k / 2, 0}) {  // 3x3 with dilation 1: the interior runs take nine taps at once
          const int C = 5;  // the plane is channel 2 of a 5-channel NHWC tensor
          std::vector<int8_t> x(hw * hw * C), wt(k * k);
          for (auto& v : x) v = static_cast<int8_t>(byte(rng));
          for (auto& v : wt) v = static_cast<int8_t>(byte(rng));
          const int32_t span = hw + 2 * pad - dil * (k - 1) - 1;
          if (span < 0) continue;
          const int32_t o = span / stride + 1;
          const sp_tensor_t in_d{4, {1, 1, hw, hw}, {hw * hw * C, 1, hw * C, C}};
          const sp_tensor_t w_d{4, {1, 1, k, k}, {k * k, 1, k, 1}};
          const sp_tensor_t out_d{4, {1, 1, o, o}, {o * o, o * o, o, 1}};
          const int32_t st[2] = {stride, stride}, pd[4] = {pad, pad, pad, pad}, dl[2] = {dil, dil};
          const int32_t bias = 321;
          for (int32_t shift : {-7, 1}) {  // fast and slow requantisation
            for (auto [lo, hi] : {std::pair{-128, 127}, std::pair{-128, 60}}) {
              const sp_requant_t rq{mult(rng), shift};
              std::vector<int8_t> got(o * o), want(o * o);
              ASSERT_EQ(sp_conv_s8(&in_d, x.data() + 2, -3, &w_d, wt.data(), &bias, &rq, 5, lo, hi, st, pd, dl, 1,
                                   &out_d, got.data()),
                        SP_OK);
              ASSERT_EQ(sp_conv_s8_generic(&in_d, x.data() + 2, -3, &w_d, wt.data(), &bias, &rq, 5, lo, hi, st, pd,
                                           dl, 1, &out_d, want.data()),
                        SP_OK);
              ASSERT_EQ(got, want) << "k=" << k << " stride=" << stride << " dil=" << dil << " hw=" << hw
                                   << " pad=" << pad;
              ++cases;
            }
          }
        }
  EXPECT_GT(cases, 100);
}

// Plain loop: dst[p * dps + k * dcs] for npix pixels at x + p * xs.
std::vector<int8_t> PlainDense(const std::vector<int8_t>& x, int32_t xs, int32_t npix, int32_t n,
                               const std::vector<int8_t>& w, int32_t ws, const std::vector<int32_t>& bias,
                               const std::vector<sp_requant_t>& rq, int32_t in_off, int32_t out_zp,
                               int32_t lo, int32_t hi, int32_t dps, int32_t dcs, int32_t count, size_t size) {
  std::vector<int8_t> out(size, 0);
  for (int32_t p = 0; p < npix; ++p)
    for (int32_t k = 0; k < count; ++k) {
      int32_t a = bias[k];
      for (int32_t i = 0; i < n; ++i) a += (x[p * xs + i] + in_off) * w[k * ws + i];
      out[p * dps + k * dcs] =
          static_cast<int8_t>(sp_clamp_i32(sp_mbqm_zp(a, rq[k].multiplier, rq[k].shift, out_zp), lo, hi));
    }
  return out;
}

TEST(FastDense, DenseLoopsEqualThePlainLoop) {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> byte(-128, 127), small(0, 9);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX), shift(-12, -1), b(-20000, 20000);
  int cases = 0;
  for (int32_t n : {1, 3, 4, 8, 12, 16, 20, 27, 28, 36, 48})
    for (int32_t npix : {1, 2, 3, 5, 8})
      for (int32_t count : {1, 2, 3, 5, 8}) {
        const int32_t ws = n, xs = (small(rng) & 1) ? n : n + 4;  // equal and different strides
        const int32_t in_off = (small(rng) & 1) ? 128 : byte(rng), out_zp = byte(rng);
        const bool full = small(rng) & 1;
        const int32_t lo = full ? -128 : -100, hi = full ? 127 : 90;
        std::vector<int8_t> x(npix * xs + 8), w(count * ws + 8);
        for (auto& v : x) v = static_cast<int8_t>(byte(rng));
        for (auto& v : w) v = static_cast<int8_t>(byte(rng));
        std::vector<int32_t> bias(count);
        std::vector<sp_requant_t> rq(count);
        for (int32_t k = 0; k < count; ++k) {
          bias[k] = b(rng);
          // Every third channel has a shift >= 0 (the slow path), the rest the fast path.
          rq[k] = {mult(rng), k % 3 == 2 ? 1 : shift(rng)};
        }
        const int32_t dps = count + 1, dcs = 1;  // a gap after each pixel: never written
        const size_t size = npix * dps + 2;
        const auto want = PlainDense(x, xs, npix, n, w, ws, bias, rq, in_off, out_zp, lo, hi, dps, dcs, count, size);
        std::vector<int8_t> got(size, 0);
        sp_dense_pixels(x.data(), xs, npix, n, w.data(), ws, bias.data(), rq.data(), in_off, out_zp, lo, hi,
                        got.data(), dps, dcs, count);
        ASSERT_EQ(got, want) << "pixels n=" << n << " npix=" << npix << " count=" << count << " xs=" << xs;
        std::fill(got.begin(), got.end(), 0);
        for (int32_t p = 0; p + 1 < npix; p += 2)
          sp_dense_out2(x.data() + p * xs, x.data() + (p + 1) * xs, n, w.data(), ws, bias.data(), rq.data(), in_off,
                        out_zp, lo, hi, got.data() + p * dps, got.data() + (p + 1) * dps, dcs, count);
        if (npix & 1)
          sp_dense_out(x.data() + (npix - 1) * xs, n, w.data(), ws, bias.data(), rq.data(), in_off, out_zp, lo, hi,
                       got.data() + (npix - 1) * dps, dcs, count);
        ASSERT_EQ(got, want) << "out2 n=" << n << " npix=" << npix << " count=" << count << " xs=" << xs;
        ++cases;
      }
  EXPECT_EQ(cases, 11 * 5 * 5);
}

}  // namespace
