// Issue 17, item 3: sp_conv_s8_depthwise's one-channel plane path (TinyEngine's in-place depthwise)
// walks its interior windows in place (no tap table on the stack; 5x5 and 7x7 unrolled), and its
// NHWC path (TFLite [1, R, S, C] weights, four channels at a time) equal sp_conv_s8_generic's
// strided loop bit for bit, over window sizes (up to 9x9), strides, dilations, padding, channel
// tails and clamped activations. (Portable path here; the SIMD path runs in the firmware tests in
// QEMU, whose checksums equal the host executor's.)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/src/sp_fast_s8.h"
#include "sramplan_rt_int8.h"
}

namespace {

struct DwCase {
  int c, h, w, r, stride, dil, pad;
  int act_min, act_max;
};

// Depthwise convolution of `cs` through sp_conv_s8_depthwise (NHWC input and output, weights
// [1, R, S, C] as channel-contiguous strides) and through sp_conv_s8_generic with every weight at
// twice its offset (no fast path takes that); returns false if either call fails.
bool RunBoth(const DwCase& cs, std::mt19937* rng, std::vector<int8_t>* fast, std::vector<int8_t>* ref) {
  std::uniform_int_distribution<int> byte(-128, 127);
  const int C = cs.c, R = cs.r;
  const int OH = (cs.h + 2 * cs.pad - cs.dil * (R - 1) - 1) / cs.stride + 1;
  const int OW = (cs.w + 2 * cs.pad - cs.dil * (R - 1) - 1) / cs.stride + 1;
  sp_tensor_t in, wt, wt2, out;
  sp_tensor_init_nhwc(&in, 1, C, cs.h, cs.w);
  sp_tensor_init_nhwc(&out, 1, C, OH, OW);
  wt.rank = 4;
  wt.dims[0] = C;
  wt.dims[1] = 1;
  wt.dims[2] = R;
  wt.dims[3] = R;
  wt.strides[0] = 1;  // [1][R][S][C]: channel k at offset k
  wt.strides[1] = 1;
  wt.strides[2] = R * C;
  wt.strides[3] = C;
  wt2 = wt;
  for (int i = 0; i < 4; ++i) wt2.strides[i] *= 2;
  std::vector<int8_t> x(C * cs.h * cs.w), w(R * R * C), w2(2 * R * R * C);
  for (auto& v : x) v = static_cast<int8_t>(byte(*rng));
  for (auto& v : w) v = static_cast<int8_t>(byte(*rng));
  for (size_t i = 0; i < w.size(); ++i) w2[2 * i] = w[i];
  std::vector<int32_t> bias(C);
  std::vector<sp_requant_t> rq(C);
  for (int k = 0; k < C; ++k) {
    bias[k] = byte(*rng) * 40;
    rq[k] = {(1 << 30) + k * 7654321, -(k % 7) - 1};
  }
  const int32_t stride[2] = {cs.stride, cs.stride}, pad[4] = {cs.pad, cs.pad, cs.pad, cs.pad},
                dil[2] = {cs.dil, cs.dil};
  fast->assign(C * OH * OW, 0);
  ref->assign(C * OH * OW, 1);
  return sp_conv_s8_depthwise(&in, x.data(), 5, &wt, w.data(), bias.data(), rq.data(), -3, cs.act_min, cs.act_max,
                              stride, pad, dil, C, &out, fast->data()) == SP_OK &&
         sp_conv_s8_generic(&in, x.data(), 5, &wt2, w2.data(), bias.data(), rq.data(), -3, cs.act_min,
                            cs.act_max, stride, pad, dil, C, &out, ref->data()) == SP_OK;
}

TEST(DepthwiseWalk, NhwcRowsEqualTheGenericLoop) {
  std::mt19937 rng(17);
  const DwCase cases[] = {
      {8, 9, 9, 3, 1, 1, 1, -128, 127},  {12, 10, 7, 3, 2, 1, 1, -128, 127}, {13, 11, 11, 5, 1, 1, 2, -128, 127},
      {16, 12, 12, 5, 2, 1, 2, 0, 127},  {20, 14, 13, 7, 1, 1, 3, -128, 127}, {6, 15, 15, 7, 2, 1, 3, -20, 90},
      {9, 9, 9, 3, 1, 2, 2, -128, 127},  {4, 3, 3, 7, 1, 1, 3, -128, 127},    {1, 8, 8, 3, 1, 1, 1, -128, 127},
  };
  for (const DwCase& cs : cases) {
    std::vector<int8_t> fast, ref;
    ASSERT_TRUE(RunBoth(cs, &rng, &fast, &ref)) << "C=" << cs.c << " R=" << cs.r;
    EXPECT_EQ(fast, ref) << "C=" << cs.c << " R=" << cs.r << " stride " << cs.stride << " dilation " << cs.dil;
  }
}

// One channel (C = 1): the plane path of TinyEngine's in-place depthwise, windows 3x3 to 7x7 and
// a 9x9 one (more taps than the old 64-entry stack table held).
TEST(DepthwiseWalk, OneChannelPlanesEqualTheGenericLoop) {
  std::mt19937 rng(71);
  const DwCase cases[] = {
      {1, 12, 12, 3, 1, 1, 1, -128, 127}, {1, 12, 11, 5, 1, 1, 2, -128, 127}, {1, 13, 13, 5, 2, 1, 2, 0, 127},
      {1, 14, 14, 7, 1, 1, 3, -128, 127}, {1, 15, 16, 7, 2, 1, 3, -50, 60},   {1, 12, 12, 5, 1, 2, 4, -128, 127},
      {1, 20, 20, 9, 1, 1, 4, -128, 127},
  };
  for (const DwCase& cs : cases) {
    std::vector<int8_t> fast, ref;
    ASSERT_TRUE(RunBoth(cs, &rng, &fast, &ref)) << "R=" << cs.r;
    EXPECT_EQ(fast, ref) << "R=" << cs.r << " stride " << cs.stride << " dilation " << cs.dil;
  }
}

}  // namespace
