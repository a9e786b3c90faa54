// Requantisation primitives (gemmlowp / TFLite semantics) and the host-side QuantizeMultiplier.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

extern "C" {
#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"
}

namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kHalf = 1 << 30;  // multiplier 0.5 (Q31)

int32_t Srdhm(int32_t a, int32_t b) { return sp_saturating_rounding_doubling_high_mul(a, b); }
int32_t Rdbpot(int32_t x, int32_t e) { return sp_rounding_divide_by_pot(x, e); }
int32_t Mbqm(int32_t x, int32_t m, int32_t s) { return sp_multiply_by_quantized_multiplier(x, m, s); }

TEST(SaturatingRoundingDoublingHighMul, ExactProducts) {
  // a * b / 2^31 exactly representable.
  EXPECT_EQ(Srdhm(kHalf, kHalf), 1 << 29);
  EXPECT_EQ(Srdhm(100, kHalf), 50);
  EXPECT_EQ(Srdhm(-100, kHalf), -50);
  EXPECT_EQ(Srdhm(0, kMin), 0);
}

TEST(SaturatingRoundingDoublingHighMul, TiesRoundUpAsTfLite) {
  // ab = 2^30 is +0.5 -> 1 (away from zero).
  EXPECT_EQ(Srdhm(1 << 15, 1 << 15), 1);
  // ab = 3 * 2^30 is +1.5 -> 2.
  EXPECT_EQ(Srdhm(3 << 15, 1 << 15), 2);
  // ab = -2^30 is -0.5: nudge 1 - 2^30, (-2^31 + 1) / 2^31 truncates to 0 (toward zero).
  EXPECT_EQ(Srdhm(-(1 << 15), 1 << 15), 0);
  // ab = -3 * 2^30 is -1.5 -> -1.
  EXPECT_EQ(Srdhm(-(3 << 15), 1 << 15), -1);
}

TEST(SaturatingRoundingDoublingHighMul, NearTies) {
  // ab = 2^30 - 1 = 3 * 357913941 is just below +0.5 -> 0.
  EXPECT_EQ(Srdhm(3, 357913941), 0);
  // ab = 2^30 + 1 = 25 * 42949673 is just above +0.5 -> 1.
  EXPECT_EQ(Srdhm(25, 42949673), 1);
  // ab = -(2^30 + 1) is just below -0.5 -> -1.
  EXPECT_EQ(Srdhm(-25, 42949673), -1);
  // ab = -(2^30 - 1) is just above -0.5 -> 0.
  EXPECT_EQ(Srdhm(-3, 357913941), 0);
}

TEST(SaturatingRoundingDoublingHighMul, Saturation) {
  // The only overflow: (-1) * (-1) in Q31 = +1, saturated to INT32_MAX.
  EXPECT_EQ(Srdhm(kMin, kMin), kMax);
  // (2^31-1)^2 / 2^31 = 2^31 - 2 + 2^-31 -> 2147483646.
  EXPECT_EQ(Srdhm(kMax, kMax), 2147483646);
  // -2^31 (2^31-1) / 2^31 = -(2^31 - 1) exactly: -2147483647.
  EXPECT_EQ(Srdhm(kMin, kMax), -2147483647);
  EXPECT_EQ(Srdhm(kMax, kMin), -2147483647);
}

TEST(RoundingDivideByPot, TiesAwayFromZero) {
  EXPECT_EQ(Rdbpot(5, 1), 3);    // 2.5
  EXPECT_EQ(Rdbpot(-5, 1), -3);  // -2.5
  EXPECT_EQ(Rdbpot(3, 1), 2);    // 1.5
  EXPECT_EQ(Rdbpot(-3, 1), -2);  // -1.5
  EXPECT_EQ(Rdbpot(1, 1), 1);    // 0.5
  EXPECT_EQ(Rdbpot(-1, 1), -1);  // -0.5
  EXPECT_EQ(Rdbpot(6, 2), 2);    // 1.5
  EXPECT_EQ(Rdbpot(-6, 2), -2);  // -1.5
  EXPECT_EQ(Rdbpot(-2, 2), -1);  // -0.5
}

TEST(RoundingDivideByPot, NonTies) {
  EXPECT_EQ(Rdbpot(5, 2), 1);    // 1.25
  EXPECT_EQ(Rdbpot(-5, 2), -1);  // -1.25
  EXPECT_EQ(Rdbpot(7, 2), 2);    // 1.75
  EXPECT_EQ(Rdbpot(-7, 2), -2);  // -1.75
  EXPECT_EQ(Rdbpot(12345, 0), 12345);
  EXPECT_EQ(Rdbpot(-12345, 0), -12345);
}

TEST(RoundingDivideByPot, Extremes) {
  EXPECT_EQ(Rdbpot(kMin, 31), -1);          // exactly -1
  EXPECT_EQ(Rdbpot(kMax, 31), 1);           // 0.99999...
  EXPECT_EQ(Rdbpot(-(1 << 30), 31), -1);    // -0.5 -> -1
  EXPECT_EQ(Rdbpot(1 << 30, 31), 1);        // 0.5 -> 1
  EXPECT_EQ(Rdbpot((1 << 30) - 1, 31), 0);  // just below 0.5
  EXPECT_EQ(Rdbpot(kMin, 1), kMin / 2);
}

TEST(MultiplyByQuantizedMultiplier, Basics) {
  EXPECT_EQ(Mbqm(100, kHalf, 0), 50);   // x * 0.5
  EXPECT_EQ(Mbqm(5, kHalf, 2), 10);     // x * 0.5 * 4 (left shift before the multiply)
  EXPECT_EQ(Mbqm(64, kHalf, -3), 4);    // x * 0.5 / 8
  EXPECT_EQ(Mbqm(-64, kHalf, -3), -4);
  EXPECT_EQ(Mbqm(7, 0, 0), 0);
}

TEST(MultiplyByQuantizedMultiplier, DoubleRoundingLikeTfLite) {
  // x * 0.25 with multiplier 0.5 and shift -1: two roundings, as TFLite's reference.
  // 3 * 0.25 = 0.75: SRDHM 1.5 -> 2, then 2 / 2 = 1.
  EXPECT_EQ(Mbqm(3, kHalf, -1), 1);
  // 1 * 0.25 = 0.25: SRDHM 0.5 -> 1, then 1 / 2 = 0.5 -> 1 (the known double-rounding artefact).
  EXPECT_EQ(Mbqm(1, kHalf, -1), 1);
  // -1 * 0.25: SRDHM -0.5 -> 0 (negative tie toward zero), then 0.
  EXPECT_EQ(Mbqm(-1, kHalf, -1), 0);
  // -3 * 0.25 = -0.75: SRDHM -1.5 -> -1, then -0.5 -> -1.
  EXPECT_EQ(Mbqm(-3, kHalf, -1), -1);
  // 10 * 0.25 = 2.5: SRDHM exact 5, then 2.5 -> 3; -2.5 -> -3.
  EXPECT_EQ(Mbqm(10, kHalf, -1), 3);
  EXPECT_EQ(Mbqm(-10, kHalf, -1), -3);
}

TEST(QuantizeMultiplier, HandValues) {
  sp_requant_t q = sp_host_quantize_multiplier(0.5);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 0);
  q = sp_host_quantize_multiplier(0.25);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, -1);
  q = sp_host_quantize_multiplier(1.0);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
  q = sp_host_quantize_multiplier(0.75);
  EXPECT_EQ(q.multiplier, 1610612736);  // 0.75 * 2^31
  EXPECT_EQ(q.shift, 0);
  q = sp_host_quantize_multiplier(3.0);
  EXPECT_EQ(q.multiplier, 1610612736);
  EXPECT_EQ(q.shift, 2);
  q = sp_host_quantize_multiplier(0.0);
  EXPECT_EQ(q.multiplier, 0);
  EXPECT_EQ(q.shift, 0);
  // Too small for shift >= -31: zero.
  q = sp_host_quantize_multiplier(1e-12);
  EXPECT_EQ(q.multiplier, 0);
  EXPECT_EQ(q.shift, 0);
  // Mantissa rounding up to 2^31 becomes 2^30 with shift + 1.
  q = sp_host_quantize_multiplier(1.0 - std::ldexp(1.0, -33));
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
}

TEST(QuantizeMultiplier, RoundTrip) {
  for (double real : {1e-6, 3.3e-4, 0.0123, 0.3333, 0.9999, 1.5, 17.25, 1000.0}) {
    const sp_requant_t q = sp_host_quantize_multiplier(real);
    ASSERT_GE(q.multiplier, 1 << 30) << real;
    const double back = q.multiplier * std::ldexp(1.0, q.shift - 31);
    EXPECT_NEAR(back / real, 1.0, 1e-9) << real;
  }
}

TEST(MultiplyByQuantizedMultiplier, MatchesRealMultiplierWithinOne) {
  // For moderate multipliers the fixed-point result is within 1 of the real product.
  for (double real : {0.001, 0.0478, 0.3, 0.77, 1.9}) {
    const sp_requant_t q = sp_host_quantize_multiplier(real);
    for (int32_t x = -100000; x <= 100000; x += 977) {
      const double expect = x * real;
      EXPECT_LE(std::fabs(Mbqm(x, q.multiplier, q.shift) - expect), 1.0) << real << " " << x;
    }
  }
}

TEST(ActivationRange, Relu6InInt8Terms) {
  int32_t lo = 0, hi = 0;
  sp_host_act_range_s8(2, 0.25, -3, &lo, &hi);  // ReLU6: [zp, zp + round(6 / 0.25)]
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, 21);
  sp_host_act_range_s8(2, 6.0 / 255.0, -128, &lo, &hi);
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  sp_host_act_range_s8(1, 0.1, 5, &lo, &hi);  // ReLU
  EXPECT_EQ(lo, 5);
  EXPECT_EQ(hi, 127);
  sp_host_act_range_s8(2, 0.01, 0, &lo, &hi);  // 6 / 0.01 = 600 saturates
  EXPECT_EQ(hi, 127);
  sp_host_act_range_s8(0, 0.01, 0, &lo, &hi);
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
}

}  // namespace
