// int8 convolution (generic, depthwise, pointwise) and fully connected: hand-computed cases and a
// naive reference written here (TFLite ConvPerChannel semantics), in NCHW and NHWC layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

extern "C" {
#include "sramplan_rt_host.h"
#include "sramplan_rt_int8.h"
}

namespace {

constexpr uint8_t kCanary = 0x5A;
constexpr int kGuard = 16;

sp_tensor_t Nchw(int n, int c, int h, int w) {
  sp_tensor_t t;
  sp_tensor_init_nchw(&t, n, c, h, w);
  return t;
}
sp_tensor_t Nhwc(int n, int c, int h, int w) {
  sp_tensor_t t;
  sp_tensor_init_nhwc(&t, n, c, h, w);
  return t;
}

// Offset of logical index (i0, i1, i2, i3) in a 4-D descriptor.
int Off(const sp_tensor_t& t, int a, int b, int c, int d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

// Packs a logical (row-major over dims) array into a buffer laid out by desc.
template <class T>
std::vector<T> Pack(const sp_tensor_t& t, const std::vector<T>& logical) {
  std::vector<T> buf(sp_tensor_span(&t), T(0));
  int i = 0;
  for (int a = 0; a < t.dims[0]; ++a)
    for (int b = 0; b < t.dims[1]; ++b)
      for (int c = 0; c < t.dims[2]; ++c)
        for (int d = 0; d < t.dims[3]; ++d) buf[Off(t, a, b, c, d)] = logical[i++];
  return buf;
}

// Output buffer with canaries on both sides; Unpack checks them.
struct OutBuf {
  sp_tensor_t desc;
  std::vector<int8_t> raw;
  explicit OutBuf(const sp_tensor_t& d) : desc(d), raw(sp_tensor_span(&d) + 2 * kGuard) {
    std::memset(raw.data(), kCanary, raw.size());
  }
  int8_t* data() { return raw.data() + kGuard; }
  std::vector<int8_t> Unpack() const {
    for (int i = 0; i < kGuard; ++i) {
      EXPECT_EQ(static_cast<uint8_t>(raw[i]), kCanary) << "write before the output";
      EXPECT_EQ(static_cast<uint8_t>(raw[raw.size() - 1 - i]), kCanary) << "write after the output";
    }
    std::vector<int8_t> out;
    const sp_tensor_t& t = desc;
    for (int a = 0; a < t.dims[0]; ++a)
      for (int b = 0; b < t.dims[1]; ++b)
        for (int c = 0; c < t.dims[2]; ++c)
          for (int d = 0; d < t.dims[3]; ++d) out.push_back(raw[kGuard + Off(t, a, b, c, d)]);
    return out;
  }
};

struct ConvCase {
  int n, c, h, w, k, r, s, groups;
  int stride[2], pad[4], dilation[2];
  int32_t in_zp, out_zp, act_min, act_max;
  std::vector<int8_t> in;       // logical NCHW
  std::vector<int8_t> wt;       // logical (K, C/groups, R, S)
  std::vector<int32_t> bias;    // K or empty
  std::vector<sp_requant_t> rq; // K
  int oh() const { return (h + pad[0] + pad[2] - dilation[0] * (r - 1) - 1) / stride[0] + 1; }
  int ow() const { return (w + pad[1] + pad[3] - dilation[1] * (s - 1) - 1) / stride[1] + 1; }
};

// Naive reference: explicit bounds checks, padding contributes nothing (== input zero point).
std::vector<int8_t> RefConv(const ConvCase& cc) {
  const int cg = cc.c / cc.groups, kg = cc.k / cc.groups;
  std::vector<int8_t> out;
  for (int n = 0; n < cc.n; ++n)
    for (int k = 0; k < cc.k; ++k)
      for (int oh = 0; oh < cc.oh(); ++oh)
        for (int ow = 0; ow < cc.ow(); ++ow) {
          int64_t acc = 0;
          const int g = k / kg;
          for (int c = 0; c < cg; ++c)
            for (int r = 0; r < cc.r; ++r)
              for (int s = 0; s < cc.s; ++s) {
                const int ih = oh * cc.stride[0] - cc.pad[0] + r * cc.dilation[0];
                const int iw = ow * cc.stride[1] - cc.pad[1] + s * cc.dilation[1];
                if (ih < 0 || ih >= cc.h || iw < 0 || iw >= cc.w) continue;
                const int ic = g * cg + c;
                const int x = cc.in[((n * cc.c + ic) * cc.h + ih) * cc.w + iw];
                const int wv = cc.wt[((k * cg + c) * cc.r + r) * cc.s + s];
                acc += static_cast<int64_t>(x - cc.in_zp) * wv;
              }
          if (!cc.bias.empty()) acc += cc.bias[k];
          int32_t v = sp_multiply_by_quantized_multiplier(static_cast<int32_t>(acc),
                                                          cc.rq[k].multiplier, cc.rq[k].shift) +
                      cc.out_zp;
          out.push_back(static_cast<int8_t>(std::clamp(v, cc.act_min, cc.act_max)));
        }
  return out;
}

enum class Path { kAuto, kGeneric, kDepthwise, kPointwise };

using ConvFn = sp_status_t (*)(const sp_tensor_t*, const int8_t*, int32_t, const sp_tensor_t*,
                               const int8_t*, const int32_t*, const sp_requant_t*, int32_t, int32_t,
                               int32_t, const int32_t[2], const int32_t[2], const int32_t[2],
                               int32_t, const sp_tensor_t*, int8_t*);

ConvFn FnFor(Path p) {
  switch (p) {
    case Path::kGeneric:
      return sp_conv_s8_generic;
    case Path::kDepthwise:
      return sp_conv_s8_depthwise;
    case Path::kPointwise:
      return sp_conv_s8_pointwise;
    default:
      return sp_conv_s8;
  }
}

// Runs the kernel with the given activation layout (NHWC or NCHW) and weight layout (KRSC or
// KCRS); returns the logical NCHW output.
std::vector<int8_t> RunConv(const ConvCase& cc, bool nhwc, bool w_krsc, Path path,
                            sp_status_t* status = nullptr) {
  const sp_tensor_t in_d = nhwc ? Nhwc(cc.n, cc.c, cc.h, cc.w) : Nchw(cc.n, cc.c, cc.h, cc.w);
  const int cg = cc.c / cc.groups;
  const sp_tensor_t w_d = w_krsc ? Nhwc(cc.k, cg, cc.r, cc.s) : Nchw(cc.k, cg, cc.r, cc.s);
  const sp_tensor_t out_d =
      nhwc ? Nhwc(cc.n, cc.k, cc.oh(), cc.ow()) : Nchw(cc.n, cc.k, cc.oh(), cc.ow());
  const std::vector<int8_t> in = Pack(in_d, cc.in);
  const std::vector<int8_t> wt = Pack(w_d, cc.wt);
  OutBuf out(out_d);
  const int32_t stride[2] = {cc.stride[0], cc.stride[1]};
  const int32_t pad[4] = {cc.pad[0], cc.pad[1], cc.pad[2], cc.pad[3]};
  const int32_t dil[2] = {cc.dilation[0], cc.dilation[1]};
  const sp_status_t st =
      FnFor(path)(&in_d, in.data(), cc.in_zp, &w_d, wt.data(), cc.bias.empty() ? nullptr : cc.bias.data(),
                  cc.rq.data(), cc.out_zp, cc.act_min, cc.act_max, stride, pad, dil, cc.groups,
                  &out_d, out.data());
  if (status) *status = st;
  else EXPECT_EQ(st, SP_OK);
  return out.Unpack();
}

sp_requant_t Rq(int32_t m, int32_t s) { return sp_requant_t{m, s}; }
constexpr int32_t kHalfQ31 = 1 << 30;

// 3x3 input 1..9, 3x3 all-ones kernel, pad 1 all around, stride 1.
ConvCase Hand3x3() {
  ConvCase cc{};
  cc.n = 1; cc.c = 1; cc.h = 3; cc.w = 3; cc.k = 1; cc.r = 3; cc.s = 3; cc.groups = 1;
  cc.stride[0] = cc.stride[1] = 1;
  cc.pad[0] = cc.pad[1] = cc.pad[2] = cc.pad[3] = 1;
  cc.dilation[0] = cc.dilation[1] = 1;
  cc.in_zp = 0; cc.out_zp = 0; cc.act_min = -128; cc.act_max = 127;
  cc.in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  cc.wt = std::vector<int8_t>(9, 1);
  cc.rq = {Rq(kHalfQ31, 0)};  // x 0.5
  return cc;
}

TEST(ConvS8, HandPaddingBorders) {
  // Window sums with zero padding:  12 21 16 / 27 45 33 / 24 39 28; times 0.5 with TFLite rounding
  // (positive ties up): 6 11 8 / 14 23 17 / 12 20 14.
  const ConvCase cc = Hand3x3();
  const std::vector<int8_t> expect = {6, 11, 8, 14, 23, 17, 12, 20, 14};
  for (bool nhwc : {false, true}) {
    EXPECT_EQ(RunConv(cc, nhwc, false, Path::kAuto), expect);
    EXPECT_EQ(RunConv(cc, nhwc, true, Path::kGeneric), expect);
  }
  EXPECT_EQ(RefConv(cc), expect);
}

TEST(ConvS8, PaddingActsAsInputZeroPoint) {
  ConvCase cc = Hand3x3();
  cc.in_zp = 10;
  for (auto& v : cc.in) v = static_cast<int8_t>(v + 10);
  EXPECT_EQ(RunConv(cc, false, false, Path::kAuto),
            (std::vector<int8_t>{6, 11, 8, 14, 23, 17, 12, 20, 14}));
  cc.in_zp = -100;
  for (auto& v : cc.in) v = static_cast<int8_t>(v - 110);
  EXPECT_EQ(RunConv(cc, true, false, Path::kAuto),
            (std::vector<int8_t>{6, 11, 8, 14, 23, 17, 12, 20, 14}));
}

TEST(ConvS8, FusedRelu6InInt8Terms) {
  // Output scale 0.25, zero point -3: ReLU6 is [-3, -3 + 6 / 0.25] = [-3, 21].
  int32_t lo, hi;
  sp_host_act_range_s8(2, 0.25, -3, &lo, &hi);
  ASSERT_EQ(lo, -3);
  ASSERT_EQ(hi, 21);
  ConvCase cc = Hand3x3();
  cc.rq = {Rq(kHalfQ31, 1)};  // x 1.0
  cc.out_zp = -3;
  cc.act_min = lo;
  cc.act_max = hi;
  // sums - 3 = 9 18 13 / 24 42 30 / 21 36 25, clamped above at 21.
  EXPECT_EQ(RunConv(cc, true, true, Path::kAuto),
            (std::vector<int8_t>{9, 18, 13, 21, 21, 21, 21, 21, 21}));
  // With bias -30: -21 -12 -17 / -6 12 0 / -9 6 -5, clamped below at -3.
  cc.bias = {-30};
  EXPECT_EQ(RunConv(cc, false, false, Path::kAuto),
            (std::vector<int8_t>{-3, -3, -3, -3, 12, 0, -3, 6, -3}));
}

TEST(ConvS8, SaturatesToInt8Range) {
  ConvCase cc = Hand3x3();
  cc.rq = {Rq(kHalfQ31, 1)};
  cc.bias = {1000};
  EXPECT_EQ(RunConv(cc, false, false, Path::kAuto), std::vector<int8_t>(9, 127));
  cc.bias = {-1000};
  EXPECT_EQ(RunConv(cc, true, false, Path::kAuto), std::vector<int8_t>(9, -128));
}

ConvCase Dilated7x7(int pad) {
  ConvCase cc{};
  cc.n = 1; cc.c = 1; cc.h = 7; cc.w = 7; cc.k = 1; cc.r = 3; cc.s = 3; cc.groups = 1;
  cc.stride[0] = cc.stride[1] = 2;
  cc.pad[0] = cc.pad[1] = cc.pad[2] = cc.pad[3] = pad;
  cc.dilation[0] = cc.dilation[1] = 2;
  cc.in_zp = 0; cc.out_zp = 0; cc.act_min = -128; cc.act_max = 127;
  for (int h = 0; h < 7; ++h)
    for (int w = 0; w < 7; ++w) cc.in.push_back(static_cast<int8_t>(7 * h + w));
  cc.wt = std::vector<int8_t>(9, 1);
  return cc;
}

TEST(ConvS8, Stride2Dilation2) {
  // Taps at rows 2*oh + {0,2,4}, cols 2*ow + {0,2,4}: sum = 126*oh + 18*ow + 144
  // = 144 162 / 270 288. Times 0.25 (multiplier 0.5, shift -1; double rounding):
  // 36, 162 -> 81 -> 40.5 -> 41, 270 -> 135 -> 67.5 -> 68, 72.
  ConvCase cc = Dilated7x7(0);
  cc.rq = {Rq(kHalfQ31, -1)};
  ASSERT_EQ(cc.oh(), 2);
  const std::vector<int8_t> expect = {36, 41, 68, 72};
  for (bool nhwc : {false, true}) EXPECT_EQ(RunConv(cc, nhwc, false, Path::kAuto), expect);
  EXPECT_EQ(RefConv(cc), expect);
}

TEST(ConvS8, Stride2Dilation2Padded) {
  ConvCase cc = Dilated7x7(2);
  cc.rq = {Rq(kHalfQ31, 0)};  // x 0.5
  ASSERT_EQ(cc.oh(), 4);
  const std::vector<int8_t> got = RunConv(cc, true, false, Path::kAuto);
  // (0,0): rows/cols {-2,0,2} -> {0,2}: v(0,0)+v(0,2)+v(2,0)+v(2,2) = 0+2+14+16 = 32 -> 16.
  EXPECT_EQ(got[0], 16);
  // (1,2): rows {0,2,4}, cols {2,4,6}, all inside: 3*7*(0+2+4) + 3*(2+4+6) = 162 -> 81.
  EXPECT_EQ(got[1 * 4 + 2], 81);
  // (3,3): rows/cols {4,6,8} -> {4,6}: 32+34+46+48 = 160 -> 80.
  EXPECT_EQ(got[15], 80);
  EXPECT_EQ(got, RefConv(cc));
  EXPECT_EQ(RunConv(cc, false, true, Path::kGeneric), got);
}

ConvCase RandomCase(std::mt19937& rng, int n, int c, int h, int w, int k, int r, int s, int groups,
                    std::initializer_list<int> stride, std::initializer_list<int> pad,
                    std::initializer_list<int> dilation) {
  ConvCase cc{};
  cc.n = n; cc.c = c; cc.h = h; cc.w = w; cc.k = k; cc.r = r; cc.s = s; cc.groups = groups;
  std::copy(stride.begin(), stride.end(), cc.stride);
  std::copy(pad.begin(), pad.end(), cc.pad);
  std::copy(dilation.begin(), dilation.end(), cc.dilation);
  std::uniform_int_distribution<int> i8(-128, 127), w8(-127, 127), b(-3000, 3000);
  cc.in_zp = -7;
  cc.out_zp = 5;
  cc.act_min = -100;
  cc.act_max = 120;
  for (int i = 0; i < n * c * h * w; ++i) cc.in.push_back(static_cast<int8_t>(i8(rng)));
  for (int i = 0; i < k * (c / groups) * r * s; ++i) cc.wt.push_back(static_cast<int8_t>(w8(rng)));
  std::uniform_real_distribution<double> sc(0.0005, 0.02);
  for (int i = 0; i < k; ++i) {
    cc.bias.push_back(b(rng));
    cc.rq.push_back(sp_host_quantize_multiplier(sc(rng)));
  }
  return cc;
}

TEST(ConvS8, GroupedMatchesNaiveInBothLayouts) {
  std::mt19937 rng(1);
  const ConvCase cc = RandomCase(rng, 2, 6, 9, 8, 9, 3, 3, 3, {2, 1}, {1, 0, 2, 1}, {1, 2});
  const std::vector<int8_t> ref = RefConv(cc);
  for (bool nhwc : {false, true})
    for (bool krsc : {false, true}) {
      EXPECT_EQ(RunConv(cc, nhwc, krsc, Path::kAuto), ref) << nhwc << krsc;
      EXPECT_EQ(RunConv(cc, nhwc, krsc, Path::kGeneric), ref) << nhwc << krsc;
    }
}

TEST(ConvS8, DepthwiseMatchesNaiveAndGeneric) {
  std::mt19937 rng(2);
  for (int dil : {1, 2}) {
    // groups == C == 4, depth multiplier 2 (K = 8), stride 2, asymmetric padding.
    const ConvCase cc = RandomCase(rng, 1, 4, 11, 10, 8, 3, 3, 4, {2, 2}, {1, 1, 1, 0}, {dil, dil});
    const std::vector<int8_t> ref = RefConv(cc);
    for (bool nhwc : {false, true}) {
      EXPECT_EQ(RunConv(cc, nhwc, false, Path::kDepthwise), ref);
      EXPECT_EQ(RunConv(cc, nhwc, true, Path::kGeneric), ref);
      EXPECT_EQ(RunConv(cc, nhwc, false, Path::kAuto), ref);
    }
  }
}

TEST(ConvS8, DepthwiseWithTfLiteFilterLayout) {
  // TFLite depthwise filter [1, R, S, K] is logical (K, 1, R, S) with strides (1, 0, S*K, K).
  std::mt19937 rng(3);
  const ConvCase cc = RandomCase(rng, 1, 6, 7, 7, 6, 3, 3, 6, {1, 1}, {1, 1, 1, 1}, {1, 1});
  sp_tensor_t w_d;
  w_d.rank = 4;
  w_d.dims[0] = 6; w_d.dims[1] = 1; w_d.dims[2] = 3; w_d.dims[3] = 3;
  w_d.strides[0] = 1; w_d.strides[1] = 0; w_d.strides[2] = 3 * 6; w_d.strides[3] = 6;
  std::vector<int8_t> wt(sp_tensor_span(&w_d));
  for (int k = 0; k < 6; ++k)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) wt[Off(w_d, k, 0, r, s)] = cc.wt[(k * 3 + r) * 3 + s];
  const sp_tensor_t in_d = Nhwc(1, 6, 7, 7), out_d = Nhwc(1, 6, 7, 7);
  const std::vector<int8_t> in = Pack(in_d, cc.in);
  OutBuf out(out_d);
  const int32_t stride[2] = {1, 1}, pad[4] = {1, 1, 1, 1}, dil[2] = {1, 1};
  ASSERT_EQ(sp_conv_s8(&in_d, in.data(), cc.in_zp, &w_d, wt.data(), cc.bias.data(), cc.rq.data(),
                       cc.out_zp, cc.act_min, cc.act_max, stride, pad, dil, 6, &out_d, out.data()),
            SP_OK);
  EXPECT_EQ(out.Unpack(), RefConv(cc));
}

// The channel-contiguous fast path of sp_conv_s8_depthwise (NHWC input and output, TFLite [1, R, S, C]
// filter): more channels than one accumulation chunk (64), batch 2, strides, dilation and asymmetric
// padding, against the naive reference.
TEST(ConvS8, DepthwiseChannelContiguousFastPath) {
  std::mt19937 rng(31);
  int cases = 0;
  for (int c : {1, 64, 70, 131})
    for (int dil : {1, 2})
      for (int st : {1, 2}) {
        const ConvCase cc = RandomCase(rng, 2, c, 9, 8, c, 3, 3, c, {st, st}, {1, 0, 2, 1}, {dil, dil});
        sp_tensor_t w_d;
        w_d.rank = 4;
        w_d.dims[0] = c; w_d.dims[1] = 1; w_d.dims[2] = 3; w_d.dims[3] = 3;
        w_d.strides[0] = 1; w_d.strides[1] = 0; w_d.strides[2] = 3 * c; w_d.strides[3] = c;
        std::vector<int8_t> wt(sp_tensor_span(&w_d));
        for (int k = 0; k < c; ++k)
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) wt[Off(w_d, k, 0, r, s)] = cc.wt[(k * 3 + r) * 3 + s];
        const sp_tensor_t in_d = Nhwc(2, c, 9, 8), out_d = Nhwc(2, c, cc.oh(), cc.ow());
        const std::vector<int8_t> in = Pack(in_d, cc.in);
        OutBuf out(out_d);
        const int32_t stride[2] = {st, st}, pad[4] = {1, 0, 2, 1}, dl[2] = {dil, dil};
        ASSERT_EQ(sp_conv_s8_depthwise(&in_d, in.data(), cc.in_zp, &w_d, wt.data(), cc.bias.data(), cc.rq.data(),
                                       cc.out_zp, cc.act_min, cc.act_max, stride, pad, dl, c, &out_d, out.data()),
                  SP_OK);
        EXPECT_EQ(out.Unpack(), RefConv(cc)) << "c " << c << " dilation " << dil << " stride " << st;
        ++cases;
      }
  EXPECT_EQ(cases, 16);
}

// The same path with a 9x9 window (81 taps, more than its 64-entry tap table): one channel at a time.
TEST(ConvS8, DepthwiseChannelContiguousLargeWindow) {
  std::mt19937 rng(37);
  for (int c : {5, 70})
    for (int st : {1, 2}) {
      const ConvCase cc = RandomCase(rng, 1, c, 12, 11, c, 9, 9, c, {st, st}, {1, 0, 2, 1}, {1, 1});
      sp_tensor_t w_d;
      w_d.rank = 4;
      w_d.dims[0] = c; w_d.dims[1] = 1; w_d.dims[2] = 9; w_d.dims[3] = 9;
      w_d.strides[0] = 1; w_d.strides[1] = 0; w_d.strides[2] = 9 * c; w_d.strides[3] = c;
      std::vector<int8_t> wt(sp_tensor_span(&w_d));
      for (int k = 0; k < c; ++k)
        for (int r = 0; r < 9; ++r)
          for (int s = 0; s < 9; ++s) wt[Off(w_d, k, 0, r, s)] = cc.wt[(k * 9 + r) * 9 + s];
      const sp_tensor_t in_d = Nhwc(1, c, 12, 11), out_d = Nhwc(1, c, cc.oh(), cc.ow());
      const std::vector<int8_t> in = Pack(in_d, cc.in);
      OutBuf out(out_d);
      const int32_t stride[2] = {st, st}, pad[4] = {1, 0, 2, 1}, dl[2] = {1, 1};
      ASSERT_EQ(sp_conv_s8_depthwise(&in_d, in.data(), cc.in_zp, &w_d, wt.data(), cc.bias.data(), cc.rq.data(),
                                     cc.out_zp, cc.act_min, cc.act_max, stride, pad, dl, c, &out_d, out.data()),
                SP_OK);
      EXPECT_EQ(out.Unpack(), RefConv(cc)) << "c " << c << " stride " << st;
    }
}

// One channel to one channel (TinyEngine's in-place depthwise, plane by plane): sp_conv_s8 takes the
// depthwise loop; it equals the generic loop and the reference.
TEST(ConvS8, SingleChannelTakesTheDepthwiseLoop) {
  std::mt19937 rng(41);
  for (int dil : {1, 2})
    for (int st : {1, 2}) {
      const ConvCase cc = RandomCase(rng, 2, 1, 9, 7, 1, 3, 3, 1, {st, st}, {1, 1, 0, 2}, {dil, dil});
      const std::vector<int8_t> ref = RefConv(cc);
      for (bool nhwc : {false, true}) {
        EXPECT_EQ(RunConv(cc, nhwc, false, Path::kAuto), ref) << dil << st << nhwc;
        EXPECT_EQ(RunConv(cc, nhwc, true, Path::kGeneric), ref) << dil << st << nhwc;
      }
    }
}

TEST(ConvS8, PointwiseMatchesNaiveAndGeneric) {
  std::mt19937 rng(4);
  for (int st : {1, 2}) {
    const ConvCase cc = RandomCase(rng, 2, 5, 6, 7, 7, 1, 1, 1, {st, st}, {0, 0, 0, 0}, {1, 1});
    const std::vector<int8_t> ref = RefConv(cc);
    for (bool nhwc : {false, true}) {
      EXPECT_EQ(RunConv(cc, nhwc, false, Path::kPointwise), ref);
      EXPECT_EQ(RunConv(cc, nhwc, true, Path::kGeneric), ref);
      EXPECT_EQ(RunConv(cc, nhwc, false, Path::kAuto), ref);
    }
  }
}

TEST(ConvS8, RandomGeometriesMatchNaive) {
  // Strides 1..3, dilations 1..3, asymmetric padding 0..2, groups in {1, 2, C}, both layouts.
  std::mt19937 rng(42);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  while (checked < 40) {
    const int c = 2 * pick(1, 3), r = pick(1, 3), s = pick(1, 3);
    const int gsel = pick(0, 2), groups = gsel == 0 ? 1 : (gsel == 1 ? 2 : c);
    const int k = groups * pick(1, 3);
    const int h = pick(1, 9), w = pick(1, 9);
    const int sh = pick(1, 3), sw = pick(1, 3), dh = pick(1, 3), dw = pick(1, 3);
    const int pt = pick(0, 2), pl = pick(0, 2), pb = pick(0, 2), pr = pick(0, 2);
    if (h + pt + pb - dh * (r - 1) - 1 < 0 || w + pl + pr - dw * (s - 1) - 1 < 0) continue;
    const ConvCase cc =
        RandomCase(rng, pick(1, 2), c, h, w, k, r, s, groups, {sh, sw}, {pt, pl, pb, pr}, {dh, dw});
    const std::vector<int8_t> ref = RefConv(cc);
    const bool nhwc = pick(0, 1) == 1, krsc = pick(0, 1) == 1;
    EXPECT_EQ(RunConv(cc, nhwc, krsc, Path::kAuto), ref) << "case " << checked;
    EXPECT_EQ(RunConv(cc, !nhwc, !krsc, Path::kGeneric), ref) << "case " << checked;
    ++checked;
  }
}

TEST(ConvS8, RejectsBadArguments) {
  ConvCase cc = Hand3x3();
  sp_status_t st = SP_OK;
  // Depthwise path with groups != C.
  RunConv(cc, false, false, Path::kAuto);
  std::mt19937 rng(5);
  ConvCase g = RandomCase(rng, 1, 4, 5, 5, 4, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1});
  std::vector<int8_t> out = RunConv(g, false, false, Path::kDepthwise, &st);
  EXPECT_EQ(st, SP_BAD_ARGUMENT);
  EXPECT_EQ(out, std::vector<int8_t>(out.size(), static_cast<int8_t>(kCanary)));  // untouched
  // Pointwise path with a 3x3 kernel.
  RunConv(cc, false, false, Path::kPointwise, &st);
  EXPECT_EQ(st, SP_BAD_ARGUMENT);
  // Output dims that do not match the convolution arithmetic.
  const sp_tensor_t in_d = Nchw(1, 1, 3, 3), w_d = Nchw(1, 1, 3, 3), bad_out = Nchw(1, 1, 2, 3);
  int8_t o[9];
  const int32_t stride[2] = {1, 1}, pad[4] = {1, 1, 1, 1}, dil[2] = {1, 1};
  EXPECT_EQ(sp_conv_s8(&in_d, cc.in.data(), 0, &w_d, cc.wt.data(), nullptr, cc.rq.data(), 0, -128,
                       127, stride, pad, dil, 1, &bad_out, o),
            SP_BAD_ARGUMENT);
  // Activation range outside int8.
  const sp_tensor_t good_out = Nchw(1, 1, 3, 3);
  EXPECT_EQ(sp_conv_s8(&in_d, cc.in.data(), 0, &w_d, cc.wt.data(), nullptr, cc.rq.data(), 0, -129,
                       127, stride, pad, dil, 1, &good_out, o),
            SP_BAD_ARGUMENT);
}

// ---- Fully connected -----------------------------------------------------------------------

TEST(FullyConnectedS8, HandComputed) {
  // in (2, 3), in_zp 1; w (2, 3); bias {10, 0}; rq {x1.0, x0.5}; out_zp 5.
  const int8_t in[6] = {1, 2, 3, 2, 1, 1};  // minus zp: {0,1,2}, {1,0,0}
  const int8_t w[6] = {1, 1, 1, -1, 2, -3};
  const int32_t bias[2] = {10, 0};
  const sp_requant_t rq[2] = {Rq(kHalfQ31, 1), Rq(kHalfQ31, 0)};
  sp_tensor_t in_d, w_d, out_d;
  const int32_t din[2] = {2, 3}, dw[2] = {2, 3}, dout[2] = {2, 2};
  sp_tensor_init_contiguous(&in_d, 2, din);
  sp_tensor_init_contiguous(&w_d, 2, dw);
  sp_tensor_init_contiguous(&out_d, 2, dout);
  int8_t out[4];
  ASSERT_EQ(sp_fully_connected_s8(&in_d, in, 1, &w_d, w, bias, rq, 5, -128, 127, &out_d, out),
            SP_OK);
  // Row 0: ch0 0+1+2+10 = 13 -> 18; ch1 0+2-6 = -4 -> x0.5 = -2 -> 3.
  // Row 1: ch0 1+10 = 11 -> 16; ch1 -1 -> x0.5 = -0.5 -> 0 (TFLite: negative tie toward zero) -> 5.
  EXPECT_EQ(std::vector<int8_t>(out, out + 4), (std::vector<int8_t>{18, 3, 16, 5}));

  // The same weights stored transposed ([K, N] in memory) through strides.
  const int8_t wt[6] = {1, -1, 1, 2, 1, -3};
  sp_tensor_t wt_d = w_d;
  wt_d.strides[0] = 1;
  wt_d.strides[1] = 2;
  int8_t out2[4];
  ASSERT_EQ(sp_fully_connected_s8(&in_d, in, 1, &wt_d, wt, bias, rq, 5, -128, 127, &out_d, out2),
            SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out2, out2 + 4), (std::vector<int8_t>{18, 3, 16, 5}));
  // Fused activation and saturation.
  ASSERT_EQ(sp_fully_connected_s8(&in_d, in, 1, &w_d, w, bias, rq, 5, 4, 17, &out_d, out), SP_OK);
  EXPECT_EQ(std::vector<int8_t>(out, out + 4), (std::vector<int8_t>{17, 4, 16, 5}));
}

TEST(FullyConnectedS8, EqualsPointwiseConv) {
  // FC over (M, K) equals a 1x1 conv over (M, K, 1, 1).
  std::mt19937 rng(6);
  const ConvCase cc = RandomCase(rng, 3, 20, 1, 1, 11, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1});
  sp_tensor_t in_d, w_d, out_d;
  const int32_t din[2] = {3, 20}, dw[2] = {11, 20}, dout[2] = {3, 11};
  sp_tensor_init_contiguous(&in_d, 2, din);
  sp_tensor_init_contiguous(&w_d, 2, dw);
  sp_tensor_init_contiguous(&out_d, 2, dout);
  std::vector<int8_t> out(33);
  ASSERT_EQ(sp_fully_connected_s8(&in_d, cc.in.data(), cc.in_zp, &w_d, cc.wt.data(), cc.bias.data(),
                                  cc.rq.data(), cc.out_zp, cc.act_min, cc.act_max, &out_d,
                                  out.data()),
            SP_OK);
  EXPECT_EQ(out, RefConv(cc));
}

}  // namespace
