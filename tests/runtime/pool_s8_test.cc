// int8 pooling: max/average pool (TFLite rounding, padding borders, count_include_pad, ceil-mode
// output dims), global average pool (plain and requantising), NCHW vs NHWC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "sramplan_rt_int8.h"
}

namespace {

sp_tensor_t Desc(bool nhwc, int n, int c, int h, int w) {
  sp_tensor_t t;
  if (nhwc) sp_tensor_init_nhwc(&t, n, c, h, w);
  else sp_tensor_init_nchw(&t, n, c, h, w);
  return t;
}

int Off(const sp_tensor_t& t, int a, int b, int c, int d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

std::vector<int8_t> Pack(const sp_tensor_t& t, const std::vector<int8_t>& logical) {
  std::vector<int8_t> buf(sp_tensor_span(&t));
  int i = 0;
  for (int a = 0; a < t.dims[0]; ++a)
    for (int b = 0; b < t.dims[1]; ++b)
      for (int c = 0; c < t.dims[2]; ++c)
        for (int d = 0; d < t.dims[3]; ++d) buf[Off(t, a, b, c, d)] = logical[i++];
  return buf;
}

std::vector<int8_t> Unpack(const sp_tensor_t& t, const std::vector<int8_t>& buf) {
  std::vector<int8_t> out;
  for (int a = 0; a < t.dims[0]; ++a)
    for (int b = 0; b < t.dims[1]; ++b)
      for (int c = 0; c < t.dims[2]; ++c)
        for (int d = 0; d < t.dims[3]; ++d) out.push_back(buf[Off(t, a, b, c, d)]);
  return out;
}

struct Pool {
  int kernel[2], stride[2], pad[4];
  bool avg = false;
  int count_include_pad = 0;
  int act_min = -128, act_max = 127;
};

// Runs a pool on logical NCHW input (n, c, h, w) -> (n, c, oh, ow) in the given layout.
std::vector<int8_t> RunPool(const Pool& p, bool nhwc, int n, int c, int h, int w, int oh, int ow,
                        const std::vector<int8_t>& in_logical, sp_status_t* status = nullptr) {
  const sp_tensor_t in_d = Desc(nhwc, n, c, h, w), out_d = Desc(nhwc, n, c, oh, ow);
  const std::vector<int8_t> in = Pack(in_d, in_logical);
  std::vector<int8_t> out(sp_tensor_span(&out_d), 99);
  const int32_t k[2] = {p.kernel[0], p.kernel[1]}, s[2] = {p.stride[0], p.stride[1]};
  const int32_t pad[4] = {p.pad[0], p.pad[1], p.pad[2], p.pad[3]};
  const sp_status_t st =
      p.avg ? sp_avg_pool_s8(&in_d, in.data(), k, s, pad, p.count_include_pad, p.act_min, p.act_max,
                             &out_d, out.data())
            : sp_max_pool_s8(&in_d, in.data(), k, s, pad, p.act_min, p.act_max, &out_d, out.data());
  if (status) *status = st;
  else EXPECT_EQ(st, SP_OK);
  return Unpack(out_d, out);
}

TEST(MaxPoolS8, TwoByTwoStrideTwo) {
  const std::vector<int8_t> in = {1, 5, 2, 0,    //
                                  3, -4, 7, 8,   //
                                  -9, -8, 0, 1,  //
                                  -7, -6, 2, 3};
  Pool p{{2, 2}, {2, 2}, {0, 0, 0, 0}};
  for (bool nhwc : {false, true})
    EXPECT_EQ(RunPool(p, nhwc, 1, 1, 4, 4, 2, 2, in), (std::vector<int8_t>{5, 8, -6, 3}));
}

TEST(MaxPoolS8, PaddingNeverWins) {
  // All inputs negative: treating padding as 0 (or as -128 then clamping) would be visible.
  const std::vector<int8_t> in = {-100, -99, -98, -97, -96, -95, -94, -93, -92};
  Pool p{{3, 3}, {1, 1}, {1, 1, 1, 1}};
  const std::vector<int8_t> expect = {-96, -95, -95, -93, -92, -92, -93, -92, -92};
  for (bool nhwc : {false, true}) EXPECT_EQ(RunPool(p, nhwc, 1, 1, 3, 3, 3, 3, in), expect);
}

TEST(MaxPoolS8, FusedActivationClamps) {
  const std::vector<int8_t> in = {-100, -99, -98, -97, -96, -95, -94, -93, -92};
  Pool p{{3, 3}, {1, 1}, {1, 1, 1, 1}};
  p.act_min = -94;
  p.act_max = -93;
  EXPECT_EQ(RunPool(p, true, 1, 1, 3, 3, 3, 3, in),
            (std::vector<int8_t>{-94, -94, -94, -93, -93, -93, -93, -93, -93}));
}

TEST(AvgPoolS8, TfLiteRounding) {
  Pool p{{2, 2}, {2, 2}, {0, 0, 0, 0}};
  p.avg = true;
  // Four 2x2 windows (one per channel): 11/4 = 2.75 -> 3; -11/4 -> -3; 6/4 = 1.5 -> 2 (half away
  // from zero); -6/4 = -1.5 -> -2; 5/4 = 1.25 -> 1; -5/4 -> -1.
  const std::vector<int8_t> in = {1, 2, 3, 5,      //
                                  -1, -2, -3, -5,  //
                                  1, 2, 0, 3,      //
                                  -1, -2, 0, -3,   //
                                  1, 1, 1, 2,      //
                                  -1, -1, -1, -2};
  for (bool nhwc : {false, true})
    EXPECT_EQ(RunPool(p, nhwc, 1, 6, 2, 2, 1, 1, in), (std::vector<int8_t>{3, -3, 2, -2, 1, -1}));
}

TEST(AvgPoolS8, PaddingBordersAndCountIncludePad) {
  const std::vector<int8_t> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Pool p{{3, 3}, {1, 1}, {1, 1, 1, 1}};
  p.avg = true;
  // Count = taps inside the input: corner 12/4 = 3, edge 21/6 = 3.5 -> 4, centre 45/9 = 5,
  // edge 27/6 = 4.5 -> 5, 33/6 = 5.5 -> 6, 39/6 = 6.5 -> 7, corners 16/4 = 4, 24/4 = 6, 28/4 = 7.
  EXPECT_EQ(RunPool(p, false, 1, 1, 3, 3, 3, 3, in),
            (std::vector<int8_t>{3, 4, 4, 5, 5, 6, 6, 7, 7}));
  // count_include_pad: always 9: 12/9 -> 1, 21/9 -> 2, 16/9 -> 2, 27/9 = 3, 5, 33/9 -> 4,
  // 24/9 -> 3, 39/9 -> 4, 28/9 -> 3.
  p.count_include_pad = 1;
  EXPECT_EQ(RunPool(p, true, 1, 1, 3, 3, 3, 3, in),
            (std::vector<int8_t>{1, 2, 2, 3, 5, 4, 3, 4, 3}));
}

TEST(AvgPoolS8, CeilModeOutputDims) {
  // 3x3 input, kernel 2, stride 2, no padding, ceil_mode: 2x2 output; the last windows hang past
  // the input and average only what is inside (also with count_include_pad: no end padding).
  const std::vector<int8_t> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Pool p{{2, 2}, {2, 2}, {0, 0, 0, 0}};
  p.avg = true;
  // (1+2+4+5)/4 = 3; (3+6)/2 = 4.5 -> 5; (7+8)/2 = 7.5 -> 8; 9.
  EXPECT_EQ(RunPool(p, false, 1, 1, 3, 3, 2, 2, in), (std::vector<int8_t>{3, 5, 8, 9}));
  p.count_include_pad = 1;
  EXPECT_EQ(RunPool(p, true, 1, 1, 3, 3, 2, 2, in), (std::vector<int8_t>{3, 5, 8, 9}));
  // Max pool with the same geometry.
  Pool m{{2, 2}, {2, 2}, {0, 0, 0, 0}};
  EXPECT_EQ(RunPool(m, true, 1, 1, 3, 3, 2, 2, in), (std::vector<int8_t>{5, 6, 8, 9}));
}

TEST(PoolS8, RejectsWindowsWithoutInput) {
  const std::vector<int8_t> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Pool p{{2, 2}, {2, 2}, {0, 0, 0, 0}};
  sp_status_t st = SP_OK;
  RunPool(p, false, 1, 1, 3, 3, 3, 3, in, &st);  // third window starts at 4 > 2
  EXPECT_EQ(st, SP_BAD_ARGUMENT);
  Pool q{{1, 1}, {1, 1}, {1, 0, 0, 0}};  // a 1x1 window entirely in the padding
  RunPool(q, false, 1, 1, 3, 3, 4, 3, in, &st);
  EXPECT_EQ(st, SP_BAD_ARGUMENT);
}

TEST(PoolS8, NchwAndNhwcAgreeOnRandomData) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> in(2 * 5 * 9 * 8);
  for (auto& v : in) v = static_cast<int8_t>(d(rng));
  for (bool avg : {false, true}) {
    Pool p{{3, 2}, {2, 3}, {1, 0, 1, 2}};
    p.avg = avg;
    const int oh = (9 + 2 - 3) / 2 + 1, ow = (8 + 2 - 2) / 3 + 1;
    EXPECT_EQ(RunPool(p, false, 2, 5, 9, 8, oh, ow, in), RunPool(p, true, 2, 5, 9, 8, oh, ow, in));
  }
}

// Naive reference pool on logical NCHW data.
std::vector<int8_t> RefPool(const Pool& p, int n, int c, int h, int w, int oh, int ow,
                            const std::vector<int8_t>& in) {
  std::vector<int8_t> out;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < c; ++b)
      for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
          int mx = -128, sum = 0, cnt = 0, padded = 0;
          for (int i = 0; i < p.kernel[0]; ++i)
            for (int j = 0; j < p.kernel[1]; ++j) {
              const int ih = y * p.stride[0] - p.pad[0] + i, iw = x * p.stride[1] - p.pad[1] + j;
              if (ih < h + p.pad[2] && iw < w + p.pad[3]) ++padded;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              const int v = in[((a * c + b) * h + ih) * w + iw];
              mx = std::max(mx, v);
              sum += v;
              ++cnt;
            }
          const int count = p.count_include_pad ? padded : cnt;
          // Round half away from zero, computed differently from the kernel.
          const int q = static_cast<int>(std::lround(static_cast<double>(sum) / count));
          const int v = p.avg ? q : mx;
          out.push_back(static_cast<int8_t>(std::clamp(v, p.act_min, p.act_max)));
        }
  return out;
}

TEST(PoolS8, RandomGeometriesMatchNaive) {
  std::mt19937 rng(8);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::uniform_int_distribution<int> d(-128, 127);
  int checked = 0;
  while (checked < 60) {
    Pool p{{pick(1, 4), pick(1, 4)}, {pick(1, 3), pick(1, 3)}, {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)}};
    p.avg = pick(0, 1) == 1;
    p.count_include_pad = pick(0, 1);
    p.act_min = pick(-128, -20);
    p.act_max = pick(20, 127);
    // Every window must hold an input tap (padding smaller than the kernel, as in real models).
    if (p.pad[0] >= p.kernel[0] || p.pad[1] >= p.kernel[1] || p.pad[2] >= p.kernel[0] ||
        p.pad[3] >= p.kernel[1])
      continue;
    const int n = pick(1, 2), c = pick(1, 4), h = pick(1, 9), w = pick(1, 9);
    const int sh = h + p.pad[0] + p.pad[2] - p.kernel[0], sw = w + p.pad[1] + p.pad[3] - p.kernel[1];
    if (sh < 0 || sw < 0) continue;
    int oh = sh / p.stride[0] + 1, ow = sw / p.stride[1] + 1;
    // ceil_mode when the last window still starts inside the input.
    if (pick(0, 1) && sh % p.stride[0] && oh * p.stride[0] - p.pad[0] < h) ++oh;
    if (pick(0, 1) && sw % p.stride[1] && ow * p.stride[1] - p.pad[1] < w) ++ow;
    std::vector<int8_t> in(n * c * h * w);
    for (auto& v : in) v = static_cast<int8_t>(d(rng));
    const std::vector<int8_t> ref = RefPool(p, n, c, h, w, oh, ow, in);
    EXPECT_EQ(RunPool(p, false, n, c, h, w, oh, ow, in), ref) << "case " << checked;
    EXPECT_EQ(RunPool(p, true, n, c, h, w, oh, ow, in), ref) << "case " << checked;
    ++checked;
  }
}

TEST(GlobalAvgPoolS8, RoundingAndLayouts) {
  // Channel 0: 1+2+3+4+5+6 = 21 / 6 = 3.5 -> 4; channel 1: -21 / 6 -> -4 (half away from zero).
  const std::vector<int8_t> in = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
  for (bool nhwc : {false, true}) {
    const sp_tensor_t in_d = Desc(nhwc, 1, 2, 2, 3), out_d = Desc(nhwc, 1, 2, 1, 1);
    const std::vector<int8_t> buf = Pack(in_d, in);
    int8_t out[2];
    ASSERT_EQ(sp_global_avg_pool_s8(&in_d, buf.data(), -128, 127, &out_d, out), SP_OK);
    EXPECT_EQ(out[0], 4);
    EXPECT_EQ(out[1], -4);
    ASSERT_EQ(sp_global_avg_pool_s8(&in_d, buf.data(), -2, 127, &out_d, out), SP_OK);
    EXPECT_EQ(out[1], -2);
  }
}

TEST(GlobalAvgPoolS8, Requantising) {
  // in_zp 10, values 10 + {1, 2, 3, 4}: sum(x - zp) = 10; rq = 0.25 (0.5, shift -1) = 1 / count,
  // so 10 / 4 = 2.5: SRDHM(10, 0.5) = 5, RDBPOT(5, 1) = 3; + out_zp -3 = 0. Channel 1: zp-relative
  // {-1, -2, -3, -4}: -10 -> -5 -> -2.5 -> -3 -> -6.
  const std::vector<int8_t> in = {11, 12, 13, 14, 9, 8, 7, 6};
  const sp_tensor_t in_d = Desc(false, 1, 2, 2, 2), out_d = Desc(false, 1, 2, 1, 1);
  int8_t out[2];
  ASSERT_EQ(sp_global_avg_pool_requant_s8(&in_d, in.data(), 10, sp_requant_t{1 << 30, -1}, -3, -128,
                                          127, &out_d, out),
            SP_OK);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], -6);
}

}  // namespace
