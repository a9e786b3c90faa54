// The inner loops of runtime/src/sp_fast_s8.h against the reference arithmetic: the branch-free
// requantisation equals sp_mbqm / sp_mbqm_zp for every input class (edge values included), and the
// dot-product / depthwise helpers and the kernels' fast paths equal the plain loops. (This is the
// portable path; the SIMD path of the same functions runs in the Cortex-M firmware, whose output
// checksums the codegen tests and bench/firmware_speed.py compare with the host executor.)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/src/sp_fast_s8.h"
#include "sramplan_rt_int8.h"
}

namespace {

TEST(FastKernels, RequantEqualsTheReferenceForEdgeAndRandomInputs) {
  const std::vector<int32_t> xs = {0, 1, -1, 2, -2, 3, -3, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1,
                                   -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, 123456789, -987654321};
  const std::vector<int32_t> ms = {0, 1, -1, 1 << 30, (1 << 30) + 12345, INT32_MAX, INT32_MIN, INT32_MIN + 1,
                                   1518500250, -1518500250, 2};
  for (int32_t x : xs)
    for (int32_t m : ms)
      for (int32_t sh = -40; sh <= 40; ++sh)
        ASSERT_EQ(sp_fq_mbqm(x, m, sh), sp_mbqm(x, m, sh)) << x << " " << m << " " << sh;
  std::mt19937 rng(17);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), acc(-(1 << 22), 1 << 22),
      mult(1 << 30, INT32_MAX), shift(-31, 8), zp(-128, 127);
  for (int i = 0; i < 200000; ++i) {
    const int32_t x = (i & 1) ? any(rng) : acc(rng), m = (i & 2) ? any(rng) : mult(rng), s = shift(rng);
    ASSERT_EQ(sp_fq_mbqm(x, m, s), sp_mbqm(x, m, s)) << x << " " << m << " " << s;
    const sp_requant_t rq{m, s};
    const int32_t z = zp(rng);
    const int32_t want = sp_clamp_i32(sp_mbqm_zp(x, m, s, z), -100, 110);
    ASSERT_EQ(sp_fq_out(x, &rq, z, -100, 110), want) << x << " " << m << " " << s << " " << z;
  }
}

TEST(FastKernels, DotProductsEqualThePlainLoops) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(-128, 127), off(-127, 128);
  for (int n = 0; n <= 41; ++n) {
    std::vector<int8_t> x0(n + 4), x1(n + 4), w(4 * n + 4);
    for (auto& v : x0) v = static_cast<int8_t>(byte(rng));
    for (auto& v : x1) v = static_cast<int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng));
    for (int32_t o : {off(rng), -128, 128, 40000}) {
      auto ref = [&](const std::vector<int8_t>& x, int row) {
        int32_t a = 0;
        for (int i = 0; i < n; ++i) a += (x[i] + o) * w[row * n + i];
        return a;
      };
      EXPECT_EQ(sp_dot_s8(x0.data(), w.data(), n, o), ref(x0, 0));
      int32_t a4[4] = {1, 2, 3, 4};
      sp_dot4_s8(x0.data(), w.data(), n, n, o, a4);
      for (int j = 0; j < 4; ++j) EXPECT_EQ(a4[j], j + 1 + ref(x0, j)) << n << " " << j;
      int32_t a22[4] = {0, 0, 0, 0};
      sp_dot2x2_s8(x0.data(), x1.data(), w.data(), n, n, o, a22);
      EXPECT_EQ(a22[0], ref(x0, 0));
      EXPECT_EQ(a22[1], ref(x0, 1));
      EXPECT_EQ(a22[2], ref(x1, 0));
      EXPECT_EQ(a22[3], ref(x1, 1));
    }
  }
}

TEST(FastKernels, DepthwiseTapsEqualThePlainLoop) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> x(512), w(512);
  for (auto& v : x) v = static_cast<int8_t>(byte(rng));
  for (auto& v : w) v = static_cast<int8_t>(byte(rng));
  const int32_t xo[5] = {0, 17, 64, 200, 301}, wo[5] = {3, 40, 80, 120, 400};
  for (int32_t o : {-5, 128, -127}) {
    int32_t acc[4] = {7, 0, -7, 1};
    sp_dw4_s8(x.data(), xo, w.data(), wo, 5, o, acc);
    for (int j = 0; j < 4; ++j) {
      int32_t want = j == 0 ? 7 : (j == 2 ? -7 : (j == 3 ? 1 : 0));
      for (int t = 0; t < 5; ++t) want += (x[xo[t] + j] + o) * w[wo[t] + j];
      EXPECT_EQ(acc[j], want);
    }
  }
}

// The pointwise (2x2 blocked), FC and small-window conv fast paths against sp_conv_s8_generic's
// strided loops (weights given with non-unit strides never take a fast path).
TEST(FastKernels, ConvFastPathsEqualTheGenericLoops) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (int trial = 0; trial < 6; ++trial) {
    const int C = 3 + trial * 5, K = 5 + trial, H = 7, W = 5 + trial % 2, R = trial % 2 ? 3 : 1;
    sp_tensor_t in, wt, wt_strided, out;
    sp_tensor_init_nhwc(&in, 1, C, H, W);
    const int32_t wdims[4] = {K, C, R, R};
    wt.rank = 4;
    for (int i = 0; i < 4; ++i) wt.dims[i] = wdims[i];
    wt.strides[0] = R * R * C;  // [K][R][S][C]
    wt.strides[1] = 1;
    wt.strides[2] = R * C;
    wt.strides[3] = C;
    std::vector<int8_t> x(C * H * W), w(K * R * R * C), w2(2 * K * R * R * C);
    for (auto& v : x) v = static_cast<int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng));
    // The same filter with every element at twice its offset: no fast path takes it.
    for (size_t i = 0; i < w.size(); ++i) w2[2 * i] = w[i];
    wt_strided = wt;
    for (int i = 0; i < 4; ++i) wt_strided.strides[i] *= 2;
    std::vector<int32_t> bias(K);
    std::vector<sp_requant_t> rq(K);
    for (int k = 0; k < K; ++k) {
      bias[k] = byte(rng) * 50;
      rq[k] = {(1 << 30) + k * 1234567, -(k % 9)};
    }
    const int32_t pad1 = R == 3 ? 1 : 0;
    const int32_t stride[2] = {1, 1}, pad[4] = {pad1, pad1, pad1, pad1}, dil[2] = {1, 1};
    sp_tensor_init_nhwc(&out, 1, K, H, W);
    std::vector<int8_t> fast(K * H * W), ref(K * H * W);
    ASSERT_EQ(sp_conv_s8(&in, x.data(), 3, &wt, w.data(), bias.data(), rq.data(), -4, -128, 127, stride, pad,
                         dil, 1, &out, fast.data()),
              SP_OK);
    ASSERT_EQ(sp_conv_s8_generic(&in, x.data(), 3, &wt_strided, w2.data(), bias.data(), rq.data(), -4, -128,
                                 127, stride, pad, dil, 1, &out, ref.data()),
              SP_OK);
    EXPECT_EQ(fast, ref) << "trial " << trial;
    if (R == 1) {  // the same numbers as a fully connected layer over H*W rows
      sp_tensor_t fin, fw, fw_strided, fout;
      const int32_t id[2] = {H * W, C}, wd[2] = {K, C}, od[2] = {H * W, K};
      sp_tensor_init_contiguous(&fin, 2, id);
      sp_tensor_init_contiguous(&fw, 2, wd);
      sp_tensor_init_contiguous(&fout, 2, od);
      fw_strided = fw;
      fw_strided.strides[0] *= 2;
      fw_strided.strides[1] *= 2;
      std::vector<int8_t> fc(K * H * W), fc_ref(K * H * W);
      ASSERT_EQ(sp_fully_connected_s8(&fin, x.data(), 3, &fw, w.data(), bias.data(), rq.data(), -4, -128, 127,
                                      &fout, fc.data()),
                SP_OK);
      ASSERT_EQ(sp_fully_connected_s8(&fin, x.data(), 3, &fw_strided, w2.data(), bias.data(), rq.data(), -4,
                                      -128, 127, &fout, fc_ref.data()),
                SP_OK);
      EXPECT_EQ(fc, fc_ref);
      EXPECT_EQ(fc, fast);
    }
  }
}

}  // namespace
