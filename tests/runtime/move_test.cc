// Type-generic data movement: copy/expand, tile, concat, slice/split, gather, transpose, pad,
// nearest resize, where. Hand-computed small cases on int8, float and int64 elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "sramplan_rt.h"
}

namespace {

sp_tensor_t Contig(std::vector<int32_t> dims) {
  sp_tensor_t t;
  sp_tensor_init_contiguous(&t, static_cast<int32_t>(dims.size()), dims.data());
  return t;
}

template <class T>
std::vector<T> Iota(int n, T start = T(0)) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<T>(start + i);
  return v;
}

TEST(RtTensorHelpers, DescriptorsAndSpan) {
  sp_tensor_t t;
  sp_tensor_init_nhwc(&t, 2, 3, 4, 5);
  EXPECT_EQ(t.strides[0], 60);
  EXPECT_EQ(t.strides[1], 1);
  EXPECT_EQ(t.strides[2], 15);
  EXPECT_EQ(t.strides[3], 3);
  EXPECT_EQ(sp_tensor_numel(&t), 120);
  EXPECT_EQ(sp_tensor_span(&t), 120);
  t.strides[0] = 0;  // broadcast view
  EXPECT_EQ(sp_tensor_span(&t), 60);
  const sp_tensor_t s = Contig({});
  EXPECT_EQ(sp_tensor_numel(&s), 1);
  EXPECT_EQ(sp_tensor_span(&s), 1);
  EXPECT_TRUE(sp_tensor_valid(&s));
  t.strides[1] = -1;
  EXPECT_FALSE(sp_tensor_valid(&t));
}

TEST(RtCopy, NchwToNhwcAndExpand) {
  // Logical (1, 2, 2, 2) NCHW -> NHWC memory.
  sp_tensor_t in_d, out_d;
  sp_tensor_init_nchw(&in_d, 1, 2, 2, 2);
  sp_tensor_init_nhwc(&out_d, 1, 2, 2, 2);
  const std::vector<int8_t> in = {0, 1, 2, 3, 10, 11, 12, 13};
  std::vector<int8_t> out(8);
  ASSERT_EQ(sp_copy(&in_d, in.data(), 1, &out_d, out.data()), SP_OK);
  EXPECT_EQ(out, (std::vector<int8_t>{0, 10, 1, 11, 2, 12, 3, 13}));
  // Expand (1, 1, 3) float -> (2, 1, 3) (the ViT class token) and (3) -> (2, 3).
  const std::vector<float> tok = {1.5f, 2.5f, 3.5f};
  const sp_tensor_t td = Contig({1, 1, 3}), ed = Contig({2, 1, 3});
  std::vector<float> e(6);
  ASSERT_EQ(sp_expand(&td, tok.data(), 4, &ed, e.data()), SP_OK);
  EXPECT_EQ(e, (std::vector<float>{1.5f, 2.5f, 3.5f, 1.5f, 2.5f, 3.5f}));
  const sp_tensor_t v3 = Contig({3}), m23 = Contig({2, 3});
  ASSERT_EQ(sp_expand(&v3, tok.data(), 4, &m23, e.data()), SP_OK);
  EXPECT_EQ(e, (std::vector<float>{1.5f, 2.5f, 3.5f, 1.5f, 2.5f, 3.5f}));
  const sp_tensor_t bad = Contig({2, 4});
  EXPECT_EQ(sp_expand(&v3, tok.data(), 4, &bad, e.data()), SP_BAD_ARGUMENT);
  EXPECT_EQ(sp_copy(&v3, tok.data(), 3, &m23, e.data()), SP_BAD_ARGUMENT);  // elem size 3
}

TEST(RtTile, RepeatsPerAxis) {
  const sp_tensor_t in_d = Contig({2, 2}), out_d = Contig({4, 6});
  const std::vector<int64_t> in = {1, 2, 3, 4};
  std::vector<int64_t> out(24);
  ASSERT_EQ(sp_tile(&in_d, in.data(), 8, &out_d, out.data()), SP_OK);
  EXPECT_EQ(out, (std::vector<int64_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                       1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
}

TEST(RtConcat, AlongAxis) {
  // (1, 2, 2) ++ (1, 1, 2) along axis 1 -> (1, 3, 2), int8 (a copy: shared quantisation).
  const sp_tensor_t a = Contig({1, 2, 2}), b = Contig({1, 1, 2}), o = Contig({1, 3, 2});
  const int8_t av[4] = {1, 2, 3, 4}, bv[2] = {-5, -6};
  const sp_tensor_t* descs[2] = {&a, &b};
  const void* ptrs[2] = {av, bv};
  int8_t out[6];
  ASSERT_EQ(sp_concat(2, descs, ptrs, 1, 1, &o, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{1, 2, 3, 4, -5, -6}));
  // Along the last axis of NHWC feature maps = channel concat: (1,2,1,1)+(1,1,1,1) logical NCHW
  // in channels-last memory.
  sp_tensor_t c1, c2, co;
  sp_tensor_init_nhwc(&c1, 1, 2, 2, 1);
  sp_tensor_init_nhwc(&c2, 1, 1, 2, 1);
  sp_tensor_init_nhwc(&co, 1, 3, 2, 1);
  const float f1[4] = {1, 2, 3, 4}, f2[2] = {9, 8};  // f1: h0 (c0, c1), h1 (c0, c1)
  const sp_tensor_t* d2[2] = {&c1, &c2};
  const void* p2[2] = {f1, f2};
  float fo[6];
  ASSERT_EQ(sp_concat(2, d2, p2, 1, 4, &co, fo), SP_OK);
  EXPECT_EQ(std::vector<float>(fo, fo + 6), (std::vector<float>{1, 2, 9, 3, 4, 8}));
  // Mismatched dims are rejected.
  const sp_tensor_t wrong = Contig({1, 3, 3});
  EXPECT_EQ(sp_concat(2, descs, ptrs, 1, 1, &wrong, out), SP_BAD_ARGUMENT);
}

TEST(RtSlice, StepsAndSplit) {
  const sp_tensor_t in_d = Contig({3, 4});
  const std::vector<float> in = Iota<float>(12);
  // Rows 2..0 reversed, columns 1, 3.
  const sp_tensor_t out_d = Contig({3, 2});
  const int32_t starts[2] = {2, 1}, steps[2] = {-1, 2};
  std::vector<float> out(6);
  ASSERT_EQ(sp_slice(&in_d, in.data(), starts, steps, 4, &out_d, out.data()), SP_OK);
  EXPECT_EQ(out, (std::vector<float>{9, 11, 5, 7, 1, 3}));
  // Split (3, 4) along axis 1 into (3, 1) and (3, 3) as two slices.
  const sp_tensor_t s1 = Contig({3, 1}), s2 = Contig({3, 3});
  const int32_t st1[2] = {0, 0}, st2[2] = {0, 1};
  std::vector<float> o1(3), o2(9);
  ASSERT_EQ(sp_slice(&in_d, in.data(), st1, nullptr, 4, &s1, o1.data()), SP_OK);
  ASSERT_EQ(sp_slice(&in_d, in.data(), st2, nullptr, 4, &s2, o2.data()), SP_OK);
  EXPECT_EQ(o1, (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(o2, (std::vector<float>{1, 2, 3, 5, 6, 7, 9, 10, 11}));
  // Reading past the end is rejected.
  const int32_t bad[2] = {1, 2};
  EXPECT_EQ(sp_slice(&in_d, in.data(), bad, nullptr, 4, &s2, o2.data()), SP_BAD_ARGUMENT);
}

TEST(RtGather, AxesAndNegativeIndices) {
  const sp_tensor_t in_d = Contig({3, 2});
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  // axis 0, indices (2,) = {2, -3} -> rows 2, 0.
  const sp_tensor_t idx_d = Contig({2}), out_d = Contig({2, 2});
  const int64_t idx[2] = {2, -3};
  std::vector<float> out(4);
  ASSERT_EQ(sp_gather(&in_d, in.data(), 0, &idx_d, idx, 4, &out_d, out.data()), SP_OK);
  EXPECT_EQ(out, (std::vector<float>{5, 6, 1, 2}));
  // axis 1, indices (2, 2) -> out (3, 2, 2).
  const sp_tensor_t idx2_d = Contig({2, 2}), out2_d = Contig({3, 2, 2});
  const int64_t idx2[4] = {1, 0, 0, -1};
  std::vector<float> out2(12);
  ASSERT_EQ(sp_gather(&in_d, in.data(), 1, &idx2_d, idx2, 4, &out2_d, out2.data()), SP_OK);
  EXPECT_EQ(out2, (std::vector<float>{2, 1, 1, 2, 4, 3, 3, 4, 6, 5, 5, 6}));
  // Scalar index (rank 0) on int64 data (shape subgraphs): out drops the axis.
  const std::vector<int64_t> shape = {1, 197, 768};
  const sp_tensor_t sd = Contig({3}), scalar = Contig({});
  const int64_t one = 1;
  int64_t picked = 0;
  ASSERT_EQ(sp_gather(&sd, shape.data(), 0, &scalar, &one, 8, &scalar, &picked), SP_OK);
  EXPECT_EQ(picked, 197);
  // Out of range.
  const int64_t oob[2] = {3, 0};
  EXPECT_EQ(sp_gather(&in_d, in.data(), 0, &idx_d, oob, 4, &out_d, out.data()), SP_BAD_ARGUMENT);
}

TEST(RtTranspose, Permutations) {
  const sp_tensor_t a = Contig({2, 3}), at = Contig({3, 2});
  const int8_t av[6] = {1, 2, 3, 4, 5, 6};
  int8_t o[6];
  const int32_t p01[2] = {1, 0};
  ASSERT_EQ(sp_transpose(&a, av, p01, 1, &at, o), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(o, o + 6), (std::vector<int8_t>{1, 4, 2, 5, 3, 6}));
  // (2, 3, 4) with perm (2, 0, 1) -> (4, 2, 3): out[k][i][j] = in[i][j][k].
  const sp_tensor_t b = Contig({2, 3, 4}), bt = Contig({4, 2, 3});
  const std::vector<float> bv = Iota<float>(24);
  std::vector<float> bo(24);
  const int32_t perm[3] = {2, 0, 1};
  ASSERT_EQ(sp_transpose(&b, bv.data(), perm, 4, &bt, bo.data()), SP_OK);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(bo[(k * 2 + i) * 3 + j], bv[(i * 3 + j) * 4 + k]);
  const int32_t bad[3] = {0, 0, 1};
  EXPECT_EQ(sp_transpose(&b, bv.data(), bad, 4, &bt, bo.data()), SP_BAD_ARGUMENT);
}

TEST(RtPad, ConstantIsZeroPointForInt8) {
  // (2, 2) padded with begin (1, 0), end (0, 1) -> (3, 3), value = zero point -7.
  const sp_tensor_t in_d = Contig({2, 2}), out_d = Contig({3, 3});
  const int8_t in[4] = {1, 2, 3, 4};
  const int32_t pads[4] = {1, 0, 0, 1};
  const int8_t zp = -7;
  int8_t out[9];
  ASSERT_EQ(sp_pad(&in_d, in, pads, SP_PAD_CONSTANT, &zp, 1, &out_d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 9), (std::vector<int8_t>{-7, -7, -7, 1, 2, -7, 3, 4, -7}));
}

TEST(RtPad, ReflectEdgeAndCrop) {
  const sp_tensor_t in_d = Contig({3}), out_d = Contig({7});
  const float in[3] = {1, 2, 3};
  const int32_t pads[2] = {2, 2};
  float out[7];
  ASSERT_EQ(sp_pad(&in_d, in, pads, SP_PAD_REFLECT, nullptr, 4, &out_d, out), SP_OK);
  EXPECT_EQ(std::vector<float>(out, out + 7), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  ASSERT_EQ(sp_pad(&in_d, in, pads, SP_PAD_EDGE, nullptr, 4, &out_d, out), SP_OK);
  EXPECT_EQ(std::vector<float>(out, out + 7), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
  // Negative pads crop: begin -1, end 1 with value 0.
  const int32_t crop[2] = {-1, 1};
  const float zero = 0;
  const sp_tensor_t out3 = Contig({3});
  ASSERT_EQ(sp_pad(&in_d, in, crop, SP_PAD_CONSTANT, &zero, 4, &out3, out), SP_OK);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{2, 3, 0}));
  // Reflect needs pad < dim.
  const int32_t big[2] = {3, 0};
  const sp_tensor_t out6 = Contig({6});
  EXPECT_EQ(sp_pad(&in_d, in, big, SP_PAD_REFLECT, nullptr, 4, &out6, out), SP_BAD_ARGUMENT);
}

TEST(RtPad, FeatureMapBordersNhwc) {
  // Logical (1, 1, 2, 2) NHWC, pads (0,0,1,1, 0,0,1,1) -> (1, 1, 4, 4) with 0 borders.
  sp_tensor_t in_d, out_d;
  sp_tensor_init_nhwc(&in_d, 1, 1, 2, 2);
  sp_tensor_init_nhwc(&out_d, 1, 1, 4, 4);
  const int8_t in[4] = {1, 2, 3, 4};
  const int32_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
  const int8_t zp = 0;
  int8_t out[16];
  ASSERT_EQ(sp_pad(&in_d, in, pads, SP_PAD_CONSTANT, &zp, 1, &out_d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 16),
            (std::vector<int8_t>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0}));
}

std::vector<int8_t> Resize1d(const std::vector<int8_t>& in, int out_len, sp_coord_mode_t c,
                             sp_nearest_mode_t n) {
  const sp_tensor_t in_d = Contig({static_cast<int32_t>(in.size())}), out_d = Contig({out_len});
  std::vector<int8_t> out(out_len);
  EXPECT_EQ(sp_resize_nearest(&in_d, in.data(), c, n, 1, &out_d, out.data()), SP_OK);
  return out;
}

TEST(RtResizeNearest, CoordinateAndRoundingModes) {
  const std::vector<int8_t> two = {10, 20}, three = {10, 20, 30};
  // 2 -> 4 asymmetric floor (TFLite default): 0, 0.5, 1, 1.5 -> 0 0 1 1.
  EXPECT_EQ(Resize1d(two, 4, SP_COORD_ASYMMETRIC, SP_NEAREST_FLOOR),
            (std::vector<int8_t>{10, 10, 20, 20}));
  // 2 -> 4 ONNX default (half_pixel, round_prefer_floor): -0.25 0.25 0.75 1.25 -> 0 0 1 1.
  EXPECT_EQ(Resize1d(two, 4, SP_COORD_HALF_PIXEL, SP_NEAREST_ROUND_PREFER_FLOOR),
            (std::vector<int8_t>{10, 10, 20, 20}));
  // 3 -> 2 asymmetric floor: 0, 1.5 -> 0 1; half_pixel round_prefer_floor: 0.25, 1.75 -> 0 2.
  EXPECT_EQ(Resize1d(three, 2, SP_COORD_ASYMMETRIC, SP_NEAREST_FLOOR),
            (std::vector<int8_t>{10, 20}));
  EXPECT_EQ(Resize1d(three, 2, SP_COORD_HALF_PIXEL, SP_NEAREST_ROUND_PREFER_FLOOR),
            (std::vector<int8_t>{10, 30}));
  // 2 -> 3 align_corners: 0, 0.5, 1: ties -> floor (0 0 1) or ceil (0 1 1).
  EXPECT_EQ(Resize1d(two, 3, SP_COORD_ALIGN_CORNERS, SP_NEAREST_ROUND_PREFER_FLOOR),
            (std::vector<int8_t>{10, 10, 20}));
  EXPECT_EQ(Resize1d(two, 3, SP_COORD_ALIGN_CORNERS, SP_NEAREST_ROUND_PREFER_CEIL),
            (std::vector<int8_t>{10, 20, 20}));
  // 3 -> 2 asymmetric ceil: 0, 1.5 -> 0 2; TF half pixel 2 -> 4: 0.25 .75 1.25 1.75 -> 0 0 1 1.
  EXPECT_EQ(Resize1d(three, 2, SP_COORD_ASYMMETRIC, SP_NEAREST_CEIL),
            (std::vector<int8_t>{10, 30}));
  EXPECT_EQ(Resize1d(two, 4, SP_COORD_TF_HALF_PIXEL_FOR_NN, SP_NEAREST_FLOOR),
            (std::vector<int8_t>{10, 10, 20, 20}));
  // 3 -> 5 half_pixel: (x + .5) * .6 - .5 = -0.2 0.4 1.0 1.6 2.2 -> 0 0 1 2 2.
  EXPECT_EQ(Resize1d(three, 5, SP_COORD_HALF_PIXEL, SP_NEAREST_ROUND_PREFER_FLOOR),
            (std::vector<int8_t>{10, 10, 20, 30, 30}));
}

TEST(RtResizeNearest, FeatureMap2xUpsampleNchw) {
  sp_tensor_t in_d, out_d;
  sp_tensor_init_nchw(&in_d, 1, 2, 2, 2);
  sp_tensor_init_nchw(&out_d, 1, 2, 4, 4);
  const float in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float out[32];
  ASSERT_EQ(sp_resize_nearest(&in_d, in, SP_COORD_ASYMMETRIC, SP_NEAREST_FLOOR, 4, &out_d, out),
            SP_OK);
  const float expect_c0[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(out[i], expect_c0[i]);
    EXPECT_EQ(out[16 + i], expect_c0[i] + 4);
  }
}

TEST(RtWhere, BroadcastSelect) {
  const sp_tensor_t cd = Contig({2, 1}), xd = Contig({3}), yd = Contig({}), od = Contig({2, 3});
  const uint8_t cond[2] = {1, 0};
  const float x[3] = {1, 2, 3}, y = -1;
  float out[6];
  ASSERT_EQ(sp_where(&cd, cond, &xd, x, &yd, &y, 4, &od, out), SP_OK);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{1, 2, 3, -1, -1, -1}));
}

}  // namespace
