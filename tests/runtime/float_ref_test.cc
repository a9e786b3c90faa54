// float32 reference kernels against hand-computed values: conv 1-D/2-D/3-D, Gemm, MatMul
// (batched, broadcast, 1-D), normalisation, activations (Erf, ...), softmax, binary ops with
// broadcasting, pooling, reductions, linear resize, cast.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "sramplan_rt_f32.h"
}

namespace {

sp_tensor_t Contig(std::vector<int32_t> dims) {
  sp_tensor_t t;
  sp_tensor_init_contiguous(&t, static_cast<int32_t>(dims.size()), dims.data());
  return t;
}

// Channels-last strides for a logical (N, C, spatial...) shape.
sp_tensor_t ChannelsLast(std::vector<int32_t> dims) {
  sp_tensor_t t = Contig(dims);
  const int r = static_cast<int>(dims.size());
  int s = 1;
  t.strides[1] = s;
  s *= dims[1];
  for (int d = r - 1; d >= 2; --d) {
    t.strides[d] = s;
    s *= dims[d];
  }
  t.strides[0] = s;
  return t;
}

// Row-major multi-index iteration helpers for packing logical data into any layout.
int Offset(const sp_tensor_t& t, const std::vector<int>& idx) {
  int off = 0;
  for (int d = 0; d < t.rank; ++d) off += idx[d] * t.strides[d];
  return off;
}
bool Next(const sp_tensor_t& t, std::vector<int>& idx) {
  for (int d = t.rank - 1; d >= 0; --d) {
    if (++idx[d] < t.dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}
std::vector<float> Pack(const sp_tensor_t& t, const std::vector<float>& logical) {
  std::vector<float> buf(sp_tensor_span(&t));
  std::vector<int> idx(t.rank, 0);
  size_t i = 0;
  do buf[Offset(t, idx)] = logical[i++];
  while (Next(t, idx));
  return buf;
}
std::vector<float> Unpack(const sp_tensor_t& t, const std::vector<float>& buf) {
  std::vector<float> out;
  std::vector<int> idx(t.rank, 0);
  do out.push_back(buf[Offset(t, idx)]);
  while (Next(t, idx));
  return out;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// ---- Convolution -----------------------------------------------------------------------------

TEST(ConvF32, TwoDimensionalPaddingBorders) {
  const sp_tensor_t in_d = Contig({1, 1, 3, 3}), w_d = Contig({1, 1, 3, 3}),
                    out_d = Contig({1, 1, 3, 3});
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w(9, 1.0f);
  const float bias = 0.5f;
  const int32_t pad[4] = {1, 1, 1, 1};
  std::vector<float> out(9);
  ASSERT_EQ(sp_conv_f32(&in_d, in.data(), &w_d, w.data(), &bias, nullptr, pad, nullptr, 1, &out_d,
                        out.data()),
            SP_OK);
  ExpectNear(out, {12.5f, 21.5f, 16.5f, 27.5f, 45.5f, 33.5f, 24.5f, 39.5f, 28.5f});
}

TEST(ConvF32, OneDimensional) {
  // x = 1 2 4 8 16, w = (1, 0, -1), pad 1: out[i] = x[i-1] - x[i+1].
  const sp_tensor_t in_d = Contig({1, 1, 5}), w_d = Contig({1, 1, 3}), out_d = Contig({1, 1, 5});
  const std::vector<float> in = {1, 2, 4, 8, 16}, w = {1, 0, -1};
  const int32_t pad[2] = {1, 1};
  std::vector<float> out(5);
  ASSERT_EQ(sp_conv_f32(&in_d, in.data(), &w_d, w.data(), nullptr, nullptr, pad, nullptr, 1,
                        &out_d, out.data()),
            SP_OK);
  ExpectNear(out, {-2, -3, -6, -12, 8});
}

TEST(ConvF32, ThreeDimensionalHand) {
  // Input 3x3x3 with value 9d + 3h + w; 2x2x2 ones kernel, stride 1, no padding:
  // out(d,h,w) = 8 (9d + 3h + w) + 4 (9 + 3 + 1) = 8 (9d + 3h + w) + 52; plus bias 1.
  const sp_tensor_t in_d = Contig({1, 1, 3, 3, 3}), w_d = Contig({1, 1, 2, 2, 2}),
                    out_d = Contig({1, 1, 2, 2, 2});
  std::vector<float> in(27);
  for (int i = 0; i < 27; ++i) in[i] = static_cast<float>(i);
  const std::vector<float> w(8, 1.0f);
  const float bias = 1.0f;
  std::vector<float> out(8);
  ASSERT_EQ(sp_conv_f32(&in_d, in.data(), &w_d, w.data(), &bias, nullptr, nullptr, nullptr, 1,
                        &out_d, out.data()),
            SP_OK);
  ExpectNear(out, {53, 61, 77, 85, 125, 133, 149, 157});
}

struct ConvNd {
  std::vector<int32_t> in_dims, w_dims, stride, pad, dilation;
  int groups;
};

std::vector<int32_t> OutDims(const ConvNd& c) {
  const int sd = static_cast<int>(c.in_dims.size()) - 2;
  std::vector<int32_t> o = {c.in_dims[0], c.w_dims[0]};
  for (int i = 0; i < sd; ++i)
    o.push_back((c.in_dims[2 + i] + c.pad[i] + c.pad[sd + i] - c.dilation[i] * (c.w_dims[2 + i] - 1) -
                 1) / c.stride[i] + 1);
  return o;
}

// Naive N-D reference (double accumulation), logical row-major data, spatial rank 1..3.
std::vector<float> RefConvNd(const ConvNd& c, const std::vector<float>& in,
                             const std::vector<float>& w, const std::vector<float>& bias) {
  const int sd = static_cast<int>(c.in_dims.size()) - 2;
  const std::vector<int32_t> od = OutDims(c);
  const sp_tensor_t in_t = Contig(c.in_dims), w_t = Contig(c.w_dims), o_t = Contig(od);
  const int C = c.in_dims[1], K = c.w_dims[0], cg = C / c.groups, kg = K / c.groups;
  std::vector<float> out(sp_tensor_numel(&o_t));
  std::vector<int> oi(o_t.rank, 0);
  do {
    const int n = oi[0], k = oi[1];
    double acc = bias.empty() ? 0.0 : bias[k];
    std::vector<int> wi(w_t.rank, 0);
    do {
      if (wi[0] != k) continue;
      bool inside = true;
      std::vector<int> ii = {n, (k / kg) * cg + wi[1]};
      for (int s = 0; s < sd; ++s) {
        const int p = oi[2 + s] * c.stride[s] - c.pad[s] + wi[2 + s] * c.dilation[s];
        if (p < 0 || p >= c.in_dims[2 + s]) inside = false;
        ii.push_back(p);
      }
      if (inside) acc += static_cast<double>(in[Offset(in_t, ii)]) * w[Offset(w_t, wi)];
    } while (Next(w_t, wi));
    out[Offset(o_t, oi)] = static_cast<float>(acc);
  } while (Next(o_t, oi));
  return out;
}

void CheckConvNd(const ConvNd& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  const std::vector<int32_t> od = OutDims(c);
  const sp_tensor_t in_l = Contig(c.in_dims), w_l = Contig(c.w_dims), o_l = Contig(od);
  std::vector<float> in(sp_tensor_numel(&in_l)), w(sp_tensor_numel(&w_l)), bias(c.w_dims[0]);
  for (auto& v : in) v = u(rng);
  for (auto& v : w) v = u(rng);
  for (auto& v : bias) v = u(rng);
  const std::vector<float> ref = RefConvNd(c, in, w, bias);
  std::vector<float> first;
  for (bool cl : {false, true}) {
    const sp_tensor_t in_d = cl ? ChannelsLast(c.in_dims) : in_l;
    const sp_tensor_t w_d = cl ? ChannelsLast(c.w_dims) : w_l;
    const sp_tensor_t o_d = cl ? ChannelsLast(od) : o_l;
    const std::vector<float> inb = Pack(in_d, in), wb = Pack(w_d, w);
    std::vector<float> ob(sp_tensor_span(&o_d));
    ASSERT_EQ(sp_conv_f32(&in_d, inb.data(), &w_d, wb.data(), bias.data(), c.stride.data(),
                          c.pad.data(), c.dilation.data(), c.groups, &o_d, ob.data()),
              SP_OK);
    const std::vector<float> got = Unpack(o_d, ob);
    ExpectNear(got, ref, 1e-4f);
    if (first.empty()) first = got;
    else EXPECT_EQ(got, first);  // same summation order in every layout: bit-identical
  }
}

TEST(ConvF32, GroupedStridedDilatedMatchesNaive) {
  CheckConvNd({{2, 6, 9, 8}, {9, 2, 3, 3}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 3}, 1);
  CheckConvNd({{1, 4, 7, 7}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {2, 2}, 4}, 2);  // depthwise
  CheckConvNd({{1, 3, 10}, {4, 3, 3}, {2}, {1, 2}, {2}, 1}, 3);                   // 1-D
  CheckConvNd({{1, 4, 5, 6, 7}, {6, 2, 3, 1, 3}, {2, 1, 2}, {1, 0, 1, 1, 0, 2}, {1, 1, 2}, 2},
              4);  // 3-D (R(2+1)D-like (t, 1, k) kernels), grouped
}

TEST(ConvF32, RejectsWrongOutputDims) {
  const sp_tensor_t in_d = Contig({1, 1, 3, 3}), w_d = Contig({1, 1, 3, 3}),
                    out_d = Contig({1, 1, 2, 2});
  const std::vector<float> in(9, 1.0f), w(9, 1.0f);
  std::vector<float> out(4);
  EXPECT_EQ(sp_conv_f32(&in_d, in.data(), &w_d, w.data(), nullptr, nullptr, nullptr, nullptr, 2,
                        &out_d, out.data()),
            SP_BAD_ARGUMENT);  // groups 2 with C 1
}

// ---- Gemm / MatMul ---------------------------------------------------------------------------

TEST(GemmF32, AlphaBetaTransposeBroadcast) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 0, 0, 1, 1, 1}, c = {1, 2};
  const sp_tensor_t a_d = Contig({2, 3}), b_d = Contig({3, 2}), c_d = Contig({2}),
                    o_d = Contig({2, 2});
  std::vector<float> out(4);
  // AB = [[4, 5], [10, 11]]; 2 AB + 0.5 C = [[8.5, 11], [20.5, 23]].
  ASSERT_EQ(sp_gemm_f32(&a_d, a.data(), &b_d, b.data(), &c_d, c.data(), 2.0f, 0.5f, 0, 0, &o_d,
                        out.data()),
            SP_OK);
  ExpectNear(out, {8.5f, 11, 20.5f, 23});
  // transA / transB with the transposed matrices give the same.
  const std::vector<float> at = {1, 4, 2, 5, 3, 6}, bt = {1, 0, 1, 0, 1, 1};
  const sp_tensor_t at_d = Contig({3, 2}), bt_d = Contig({2, 3});
  ASSERT_EQ(sp_gemm_f32(&at_d, at.data(), &bt_d, bt.data(), &c_d, c.data(), 2.0f, 0.5f, 1, 1, &o_d,
                        out.data()),
            SP_OK);
  ExpectNear(out, {8.5f, 11, 20.5f, 23});
  // Scalar C, no C.
  const sp_tensor_t s_d = Contig({});
  const float s = 10;
  ASSERT_EQ(sp_gemm_f32(&a_d, a.data(), &b_d, b.data(), &s_d, &s, 1.0f, 1.0f, 0, 0, &o_d,
                        out.data()),
            SP_OK);
  ExpectNear(out, {14, 15, 20, 21});
  ASSERT_EQ(sp_gemm_f32(&a_d, a.data(), &b_d, b.data(), nullptr, nullptr, 1.0f, 1.0f, 0, 0, &o_d,
                        out.data()),
            SP_OK);
  ExpectNear(out, {4, 5, 10, 11});
}

TEST(MatMulF32, BatchedHand) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8}, b = {1, 0, 1, 1};
  const sp_tensor_t a_d = Contig({2, 2, 2}), b_d = Contig({2, 2}), o_d = Contig({2, 2, 2});
  std::vector<float> out(8);
  ASSERT_EQ(sp_matmul_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {3, 2, 7, 4, 11, 6, 15, 8});
}

TEST(MatMulF32, OneDimensionalOperands) {
  const std::vector<float> v = {1, 2, 3}, m = {1, 0, 0, 1, 1, 1}, mt = {1, 2, 3, 4, 5, 6};
  const sp_tensor_t v_d = Contig({3}), m_d = Contig({3, 2}), mt_d = Contig({2, 3}),
                    o2 = Contig({2}), o0 = Contig({});
  std::vector<float> out(2);
  ASSERT_EQ(sp_matmul_f32(&v_d, v.data(), &m_d, m.data(), &o2, out.data()), SP_OK);
  ExpectNear(out, {4, 5});
  const std::vector<float> ones = {1, 1, 1};
  ASSERT_EQ(sp_matmul_f32(&mt_d, mt.data(), &v_d, ones.data(), &o2, out.data()), SP_OK);
  ExpectNear(out, {6, 15});
  const std::vector<float> w = {4, 5, 6};
  float dot = 0;
  ASSERT_EQ(sp_matmul_f32(&v_d, v.data(), &v_d, w.data(), &o0, &dot), SP_OK);
  EXPECT_FLOAT_EQ(dot, 32);
}

TEST(MatMulF32, BroadcastBatchMatchesNaive) {
  // A (2, 1, 2, 3) x B (3, 3, 2) -> (2, 3, 2, 2).
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(12), b(18);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  const sp_tensor_t a_d = Contig({2, 1, 2, 3}), b_d = Contig({3, 3, 2}), o_d = Contig({2, 3, 2, 2});
  std::vector<float> out(24);
  ASSERT_EQ(sp_matmul_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 2; ++n) {
          double acc = 0;
          for (int k = 0; k < 3; ++k) acc += a[(i * 2 + m) * 3 + k] * b[(j * 3 + k) * 2 + n];
          EXPECT_NEAR(out[((i * 3 + j) * 2 + m) * 2 + n], acc, 1e-5);
        }
  const sp_tensor_t bad = Contig({2, 2, 2, 2});
  EXPECT_EQ(sp_matmul_f32(&a_d, a.data(), &b_d, b.data(), &bad, out.data()), SP_BAD_ARGUMENT);
}

// ---- Normalisation ---------------------------------------------------------------------------

TEST(LayerNormF32, HandComputed) {
  // [1, 2, 3, 4]: mean 2.5, var 1.25, std 1.1180340: -1.3416408 -0.4472136 0.4472136 1.3416408.
  const sp_tensor_t d = Contig({1, 4});
  const std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out(4);
  ASSERT_EQ(sp_layer_norm_f32(&d, x.data(), 1, nullptr, nullptr, 0.0f, &d, out.data()), SP_OK);
  ExpectNear(out, {-1.3416408f, -0.4472136f, 0.4472136f, 1.3416408f});
  const std::vector<float> scale = {1, 1, 2, 2}, bias = {0, 0, 1, 1};
  ASSERT_EQ(sp_layer_norm_f32(&d, x.data(), 1, scale.data(), bias.data(), 0.0f, &d, out.data()),
            SP_OK);
  ExpectNear(out, {-1.3416408f, -0.4472136f, 1.8944272f, 3.6832816f});
  // Axis 1 of (2, 2, 2): each batch normalised over its 4 values; epsilon 1e-5.
  const sp_tensor_t d3 = Contig({2, 2, 2});
  const std::vector<float> y = {1, 2, 3, 4, 10, 10, 20, 20};
  std::vector<float> o3(8);
  ASSERT_EQ(sp_layer_norm_f32(&d3, y.data(), 1, nullptr, nullptr, 1e-5f, &d3, o3.data()), SP_OK);
  const float s1 = 1.0f / std::sqrt(1.25f + 1e-5f), s2 = 1.0f / std::sqrt(25.0f + 1e-5f);
  ExpectNear(o3, {-1.5f * s1, -0.5f * s1, 0.5f * s1, 1.5f * s1, -5 * s2, -5 * s2, 5 * s2, 5 * s2});
}

TEST(BatchNormF32, HandComputed) {
  const sp_tensor_t d = Contig({1, 2, 2});
  const std::vector<float> x = {1, 2, 3, 4};
  const float scale[2] = {2, 1}, bias[2] = {0, 1}, mean[2] = {1, 3}, var[2] = {4, 1};
  std::vector<float> out(4);
  ASSERT_EQ(sp_batch_norm_f32(&d, x.data(), scale, bias, mean, var, 0.0f, &d, out.data()), SP_OK);
  ExpectNear(out, {0, 1, 1, 2});
}

TEST(InstanceNormF32, HandComputed) {
  const sp_tensor_t d = Contig({1, 2, 2});
  const std::vector<float> x = {1, 3, 10, 20};
  const float scale[2] = {1, 2}, bias[2] = {0, -1};
  std::vector<float> out(4);
  ASSERT_EQ(sp_instance_norm_f32(&d, x.data(), scale, bias, 0.0f, &d, out.data()), SP_OK);
  ExpectNear(out, {-1, 1, -3, 1});
}

// ---- Elementwise -----------------------------------------------------------------------------

std::vector<float> Unary(sp_unary_op_t op, const std::vector<float>& x, float alpha = 0,
                         float beta = 0) {
  const sp_tensor_t d = Contig({static_cast<int32_t>(x.size())});
  std::vector<float> out(x.size());
  EXPECT_EQ(sp_unary_f32(&d, x.data(), op, alpha, beta, &d, out.data()), SP_OK);
  return out;
}

TEST(UnaryF32, ErfAtAFewPoints) {
  ExpectNear(Unary(SP_UNARY_ERF, {0, 0.5f, 1, -1, 2, -3}),
             {0, 0.5204999f, 0.8427008f, -0.8427008f, 0.9953223f, -0.9999779f}, 1e-6f);
  const sp_tensor_t d = Contig({2});
  const float x[2] = {0.5f, 1};
  float y[2];
  ASSERT_EQ(sp_erf_f32(&d, x, &d, y), SP_OK);
  EXPECT_NEAR(y[1], 0.8427008f, 1e-6f);
}

TEST(UnaryF32, Activations) {
  ExpectNear(Unary(SP_UNARY_RELU, {-1, 0, 2}), {0, 0, 2});
  ExpectNear(Unary(SP_UNARY_CLIP, {-1, 3, 7}, 0, 6), {0, 3, 6});
  ExpectNear(Unary(SP_UNARY_SIGMOID, {0, 2, -2, -100}), {0.5f, 0.8807971f, 0.1192029f, 0});
  ExpectNear(Unary(SP_UNARY_HARD_SIGMOID, {1, -3, 3}, 0.2f, 0.5f), {0.7f, 0, 1});
  ExpectNear(Unary(SP_UNARY_HARD_SWISH, {1, -4, 4, -1}), {0.6666667f, 0, 4, -0.3333333f});
  ExpectNear(Unary(SP_UNARY_TANH, {0.5f, -0.5f}), {0.4621172f, -0.4621172f});
  ExpectNear(Unary(SP_UNARY_SQRT, {2, 9}), {1.4142136f, 3});
  ExpectNear(Unary(SP_UNARY_EXP, {1, 0}), {2.7182818f, 1});
  ExpectNear(Unary(SP_UNARY_NEG, {1, -2}), {-1, 2});
  ExpectNear(Unary(SP_UNARY_LEAKY_RELU, {-2, 2}, 0.1f), {-0.2f, 2});
  ExpectNear(Unary(SP_UNARY_GELU, {1}), {0.8413447f});
  ExpectNear(Unary(SP_UNARY_SOFTPLUS, {0}), {0.6931472f});
  // Named wrappers and a strided (transposed) view.
  sp_tensor_t in_d = Contig({2, 2});
  in_d.strides[0] = 1;
  in_d.strides[1] = 2;
  const sp_tensor_t out_d = Contig({2, 2});
  const float x[4] = {-1, 2, -3, 4};  // logical [[-1, -3], [2, 4]]
  float y[4];
  ASSERT_EQ(sp_relu_f32(&in_d, x, &out_d, y), SP_OK);
  ExpectNear(std::vector<float>(y, y + 4), {0, 0, 2, 4});
}

TEST(BinaryF32, BroadcastingOps) {
  const sp_tensor_t a_d = Contig({2, 3}), b_d = Contig({3}), o_d = Contig({2, 3});
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 2, 4};
  std::vector<float> out(6);
  ASSERT_EQ(sp_add_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {2, 4, 7, 5, 7, 10});
  ASSERT_EQ(sp_sub_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {0, 0, -1, 3, 3, 2});
  ASSERT_EQ(sp_div_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {1, 1, 0.75f, 4, 2.5f, 1.5f});
  ASSERT_EQ(sp_mul_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {1, 4, 12, 4, 10, 24});
  ASSERT_EQ(sp_max_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {1, 2, 4, 4, 5, 6});
  ASSERT_EQ(sp_min_f32(&a_d, a.data(), &b_d, b.data(), &o_d, out.data()), SP_OK);
  ExpectNear(out, {1, 2, 3, 1, 2, 4});
  // Pow with a scalar exponent (LayerNorm's x^2) and with a column exponent (2, 1).
  const sp_tensor_t s_d = Contig({}), col_d = Contig({2, 1});
  const float two = 2, col[2] = {2, 0.5f};
  ASSERT_EQ(sp_pow_f32(&a_d, a.data(), &s_d, &two, &o_d, out.data()), SP_OK);
  ExpectNear(out, {1, 4, 9, 16, 25, 36});
  ASSERT_EQ(sp_pow_f32(&a_d, a.data(), &col_d, col, &o_d, out.data()), SP_OK);
  ExpectNear(out, {1, 4, 9, 2, 2.2360680f, 2.4494897f});
  // Comparison to bool, int64 shape arithmetic.
  uint8_t cmp[6];
  ASSERT_EQ(sp_compare_f32(&a_d, a.data(), &b_d, b.data(), SP_COMPARE_GREATER, &o_d, cmp), SP_OK);
  EXPECT_EQ(std::vector<uint8_t>(cmp, cmp + 6), (std::vector<uint8_t>{0, 0, 0, 1, 1, 1}));
  const sp_tensor_t i_d = Contig({2});
  const int64_t x[2] = {10, -7}, y[2] = {3, 2};
  int64_t q[2];
  ASSERT_EQ(sp_binary_s64(&i_d, x, &i_d, y, SP_BINARY_DIV, &i_d, q), SP_OK);
  EXPECT_EQ(q[0], 3);
  EXPECT_EQ(q[1], -3);
  const sp_tensor_t bad = Contig({4});
  EXPECT_EQ(sp_add_f32(&a_d, a.data(), &bad, b.data(), &o_d, out.data()), SP_BAD_ARGUMENT);
}

TEST(CastF32, Conversions) {
  const sp_tensor_t d = Contig({4});
  const float f[4] = {1.7f, -1.7f, 300.0f, 0.0f};
  int8_t s8[4];
  ASSERT_EQ(sp_cast(&d, f, SP_DTYPE_F32, &d, s8, SP_DTYPE_S8), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(s8, s8 + 4), (std::vector<int8_t>{1, -1, 44, 0}));  // 300 wraps
  int64_t i64[4];
  ASSERT_EQ(sp_cast(&d, f, SP_DTYPE_F32, &d, i64, SP_DTYPE_S64), SP_OK);
  EXPECT_EQ(i64[2], 300);
  float back[4];
  ASSERT_EQ(sp_cast(&d, i64, SP_DTYPE_S64, &d, back, SP_DTYPE_F32), SP_OK);
  ExpectNear(std::vector<float>(back, back + 4), {1, -1, 300, 0});
  uint8_t b[4];
  ASSERT_EQ(sp_cast(&d, f, SP_DTYPE_F32, &d, b, SP_DTYPE_BOOL), SP_OK);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 4), (std::vector<uint8_t>{1, 1, 1, 0}));
}

// ---- Softmax ---------------------------------------------------------------------------------

TEST(SoftmaxF32, HandComputed) {
  const sp_tensor_t d = Contig({3});
  const std::vector<float> x = {1, 2, 3};
  std::vector<float> out(3);
  ASSERT_EQ(sp_softmax_f32(&d, x.data(), 0, &d, out.data()), SP_OK);
  ExpectNear(out, {0.0900306f, 0.2447285f, 0.6652410f}, 1e-6f);
  ASSERT_EQ(sp_log_softmax_f32(&d, x.data(), 0, &d, out.data()), SP_OK);
  ExpectNear(out, {-2.4076060f, -1.4076060f, -0.4076060f}, 1e-6f);
  // Axis 0 of [[1, 2], [3, 4]]: each column is softmax(x, x + 2) = (0.1192029, 0.8807971).
  const sp_tensor_t m = Contig({2, 2});
  const std::vector<float> y = {1, 2, 3, 4};
  std::vector<float> o(4);
  ASSERT_EQ(sp_softmax_f32(&m, y.data(), 0, &m, o.data()), SP_OK);
  ExpectNear(o, {0.1192029f, 0.1192029f, 0.8807971f, 0.8807971f}, 1e-6f);
  // Large logits do not overflow.
  const std::vector<float> big = {1000, 1000, 0};
  ASSERT_EQ(sp_softmax_f32(&d, big.data(), 0, &d, out.data()), SP_OK);
  ExpectNear(out, {0.5f, 0.5f, 0}, 1e-6f);
}

// ---- Pooling and reductions ------------------------------------------------------------------

TEST(PoolF32, AvgPadAndCountIncludePad) {
  const sp_tensor_t d = Contig({1, 1, 3, 3});
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int32_t k[2] = {3, 3}, pad[4] = {1, 1, 1, 1};
  std::vector<float> out(9);
  ASSERT_EQ(sp_avg_pool_f32(&d, x.data(), k, nullptr, pad, 0, &d, out.data()), SP_OK);
  ExpectNear(out, {3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f, 7});
  ASSERT_EQ(sp_avg_pool_f32(&d, x.data(), k, nullptr, pad, 1, &d, out.data()), SP_OK);
  ExpectNear(out, {12.f / 9, 21.f / 9, 16.f / 9, 3, 5, 33.f / 9, 24.f / 9, 39.f / 9, 28.f / 9});
  ASSERT_EQ(sp_max_pool_f32(&d, x.data(), k, nullptr, pad, nullptr, &d, out.data()), SP_OK);
  ExpectNear(out, {5, 6, 6, 8, 9, 9, 8, 9, 9});
}

TEST(PoolF32, ThreeDimensionalAndDilated) {
  const sp_tensor_t d = Contig({1, 1, 2, 2, 2}), o = Contig({1, 1, 1, 1, 1});
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};
  const int32_t k[3] = {2, 2, 2};
  float out = 0;
  ASSERT_EQ(sp_max_pool_f32(&d, x.data(), k, nullptr, nullptr, nullptr, &o, &out), SP_OK);
  EXPECT_EQ(out, 7);
  ASSERT_EQ(sp_avg_pool_f32(&d, x.data(), k, nullptr, nullptr, 0, &o, &out), SP_OK);
  EXPECT_FLOAT_EQ(out, 3.5f);
  // 1-D max pool, kernel 2, dilation 3: max(x[i], x[i+3]).
  const sp_tensor_t d1 = Contig({1, 1, 7}), o1 = Contig({1, 1, 4});
  const std::vector<float> y = {0, 6, 1, 5, 2, 4, 3};
  const int32_t k1 = 2, dil = 3;
  std::vector<float> out1(4);
  ASSERT_EQ(sp_max_pool_f32(&d1, y.data(), &k1, nullptr, nullptr, &dil, &o1, out1.data()), SP_OK);
  ExpectNear(out1, {5, 6, 4, 5});
}

TEST(PoolF32, GlobalPools) {
  const sp_tensor_t d = Contig({1, 2, 2, 2}), o = Contig({1, 2, 1, 1});
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -8};
  float out[2];
  ASSERT_EQ(sp_global_avg_pool_f32(&d, x.data(), &o, out), SP_OK);
  EXPECT_FLOAT_EQ(out[0], 2.5f);
  EXPECT_FLOAT_EQ(out[1], -3.5f);
  ASSERT_EQ(sp_global_max_pool_f32(&d, x.data(), &o, out), SP_OK);
  EXPECT_FLOAT_EQ(out[0], 4);
  EXPECT_FLOAT_EQ(out[1], -1);
}

TEST(ReduceF32, KeepdimsAndOps) {
  const sp_tensor_t d = Contig({2, 3});
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const int32_t last = 1, first = 0;
  float out[3];
  const sp_tensor_t keep = Contig({2, 1}), drop = Contig({2}), cols = Contig({3});
  ASSERT_EQ(sp_reduce_mean_f32(&d, x.data(), &last, 1, &keep, out), SP_OK);
  ExpectNear(std::vector<float>(out, out + 2), {2, 5});
  ASSERT_EQ(sp_reduce_mean_f32(&d, x.data(), &last, 1, &drop, out), SP_OK);
  ExpectNear(std::vector<float>(out, out + 2), {2, 5});
  ASSERT_EQ(sp_reduce_f32(&d, x.data(), SP_REDUCE_SUM, &first, 1, &cols, out), SP_OK);
  ExpectNear(std::vector<float>(out, out + 3), {5, 7, 9});
  ASSERT_EQ(sp_reduce_f32(&d, x.data(), SP_REDUCE_MAX, &first, 1, &cols, out), SP_OK);
  ExpectNear(std::vector<float>(out, out + 3), {4, 5, 6});
  ASSERT_EQ(sp_reduce_f32(&d, x.data(), SP_REDUCE_L2, &last, 1, &drop, out), SP_OK);
  ExpectNear(std::vector<float>(out, out + 2), {std::sqrt(14.f), std::sqrt(77.f)});
  ASSERT_EQ(sp_reduce_f32(&d, x.data(), SP_REDUCE_LOG_SUM_EXP, &last, 1, &drop, out), SP_OK);
  ExpectNear(std::vector<float>(out, out + 2), {3.4076060f, 6.4076060f});
  // All axes -> scalar.
  const int32_t both[2] = {0, 1};
  const sp_tensor_t scalar = Contig({});
  ASSERT_EQ(sp_reduce_f32(&d, x.data(), SP_REDUCE_PROD, both, 2, &scalar, out), SP_OK);
  EXPECT_FLOAT_EQ(out[0], 720);
  // Axis listed twice, wrong output rank.
  const int32_t twice[2] = {1, 1};
  EXPECT_EQ(sp_reduce_f32(&d, x.data(), SP_REDUCE_SUM, twice, 2, &scalar, out), SP_BAD_ARGUMENT);
}

// ---- Linear resize ---------------------------------------------------------------------------

TEST(ResizeLinearF32, CoordinateModes) {
  const sp_tensor_t in_d = Contig({1, 2});
  const std::vector<float> x = {1, 2};
  std::vector<float> out(4);
  const sp_tensor_t o4 = Contig({1, 4}), o3 = Contig({1, 3});
  // half_pixel 2 -> 4: src -0.25 (clamped 0), 0.25, 0.75, 1.25 (clamped 1).
  ASSERT_EQ(sp_resize_linear_f32(&in_d, x.data(), SP_COORD_HALF_PIXEL, &o4, out.data()), SP_OK);
  ExpectNear(out, {1, 1.25f, 1.75f, 2});
  ASSERT_EQ(sp_resize_linear_f32(&in_d, x.data(), SP_COORD_ASYMMETRIC, &o4, out.data()), SP_OK);
  ExpectNear(out, {1, 1.5f, 2, 2});
  std::vector<float> out3(3);
  ASSERT_EQ(sp_resize_linear_f32(&in_d, x.data(), SP_COORD_ALIGN_CORNERS, &o3, out3.data()), SP_OK);
  ExpectNear(out3, {1, 1.5f, 2});
}

TEST(ResizeLinearF32, BilinearFeatureMap) {
  // (1, 1, 2, 2) [[0, 1], [2, 3]] -> (1, 1, 4, 4) half_pixel: value = 2 sy + sx with
  // s in {0, 0.25, 0.75, 1}.
  const sp_tensor_t in_d = Contig({1, 1, 2, 2}), out_d = Contig({1, 1, 4, 4});
  const std::vector<float> x = {0, 1, 2, 3};
  std::vector<float> out(16);
  ASSERT_EQ(sp_resize_linear_f32(&in_d, x.data(), SP_COORD_HALF_PIXEL, &out_d, out.data()), SP_OK);
  const float s[4] = {0, 0.25f, 0.75f, 1};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(out[i * 4 + j], 2 * s[i] + s[j], 1e-6f);
  // NHWC layout gives the same.
  sp_tensor_t in_c, out_c;
  sp_tensor_init_nhwc(&in_c, 1, 1, 2, 2);
  sp_tensor_init_nhwc(&out_c, 1, 1, 4, 4);
  std::vector<float> out2(16);
  ASSERT_EQ(sp_resize_linear_f32(&in_c, x.data(), SP_COORD_HALF_PIXEL, &out_c, out2.data()), SP_OK);
  EXPECT_EQ(out, out2);
}

}  // namespace
