// Tests for the vMCU segment overlap analysis. The references here are independent of ISL: every
// kernel's execution order is re-enumerated with plain loops (the runtime contract of overlap.h),
// simulated in a pool of tagged segments, and compared with the ISL optimum.
#include "segment/overlap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sramplan::segment {
namespace {

// Segments (of `seg` bytes) overlapping bytes [lo, hi).
void AddSegments(std::vector<int64_t>& out, int64_t lo, int64_t hi, int64_t seg) {
  for (int64_t x = lo / seg; x <= (hi - 1) / seg; ++x) out.push_back(x);
}

std::vector<TraceStep> FcTrace(int64_t m, int64_t in, int64_t out, int64_t seg) {
  const int64_t kc = (in + seg - 1) / seg, nc = (out + seg - 1) / seg;
  std::vector<TraceStep> t;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t n = 0; n < nc; ++n) {
      for (int64_t k = 0; k < kc; ++k) {
        TraceStep s;
        AddSegments(s.reads, i * in + k * seg, std::min(i * in + (k + 1) * seg, (i + 1) * in), seg);
        if (k == kc - 1) {
          AddSegments(s.writes, i * out + n * seg, std::min(i * out + (n + 1) * seg, (i + 1) * out),
                      seg);
        }
        t.push_back(s);
      }
    }
  }
  return t;
}

std::vector<TraceStep> PointwiseTrace(int64_t h, int64_t w, int64_t ci, int64_t co, int64_t seg) {
  std::vector<TraceStep> t;
  for (int64_t pix = 0; pix < h * w; ++pix) {
    TraceStep s;
    AddSegments(s.reads, pix * ci, (pix + 1) * ci, seg);
    AddSegments(s.writes, pix * co, (pix + 1) * co, seg);
    t.push_back(s);
  }
  return t;
}

std::vector<TraceStep> ConvTrace(const Conv2DParams& p, int64_t seg) {
  const int64_t oh = (p.h + p.pad_top + p.pad_bottom - p.r) / p.stride_h + 1;
  const int64_t ow = (p.w + p.pad_left + p.pad_right - p.s) / p.stride_w + 1;
  std::vector<TraceStep> t;
  for (int64_t y = 0; y < oh; ++y) {
    for (int64_t x = 0; x < ow; ++x) {
      TraceStep s;
      for (int64_t r = 0; r < p.r; ++r) {
        for (int64_t c = 0; c < p.s; ++c) {
          const int64_t hi = y * p.stride_h - p.pad_top + r, wi = x * p.stride_w - p.pad_left + c;
          if (hi < 0 || hi >= p.h || wi < 0 || wi >= p.w) continue;  // padding: no pool read
          AddSegments(s.reads, (hi * p.w + wi) * p.c_in, (hi * p.w + wi + 1) * p.c_in, seg);
        }
      }
      AddSegments(s.writes, (y * ow + x) * p.c_out, (y * ow + x + 1) * p.c_out, seg);
      t.push_back(s);
    }
  }
  return t;
}

// The fused bottleneck at pool level: per output pixel, the pw1 reads of the dw window taps (phase
// 0), then the residual read and the write of E (phase 3).
std::vector<TraceStep> BottleneckTrace(const BottleneckParams& b, int64_t seg) {
  const int64_t pr = b.pad_top < 0 ? (b.r - 1) / 2 : b.pad_top;
  const int64_t ps = b.pad_left < 0 ? (b.s - 1) / 2 : b.pad_left;
  const int64_t pb = b.pad_bottom < 0 ? (b.r - 1) / 2 : b.pad_bottom;
  const int64_t pe = b.pad_right < 0 ? (b.s - 1) / 2 : b.pad_right;
  const int64_t h1 = (b.h + b.e_pad_top + b.e_pad_bottom - b.er) / b.stride1 + 1;
  const int64_t w1 = (b.w + b.e_pad_left + b.e_pad_right - b.es) / b.stride1 + 1;
  const int64_t h2 = (h1 + pr + pb - b.r) / b.stride2 + 1, w2 = (w1 + ps + pe - b.s) / b.stride2 + 1;
  const int64_t h3 = (h2 + b.stride3 - 1) / b.stride3, w3 = (w2 + b.stride3 - 1) / b.stride3;
  std::vector<TraceStep> t;
  for (int64_t p = 0; p < h3; ++p) {
    for (int64_t q = 0; q < w3; ++q) {
      const int64_t p2 = p * b.stride3, q2 = q * b.stride3;
      for (int64_t r = 0; r < b.r; ++r) {
        for (int64_t s = 0; s < b.s; ++s) {
          const int64_t y1 = p2 * b.stride2 - pr + r, x1 = q2 * b.stride2 - ps + s;
          if (y1 < 0 || y1 >= h1 || x1 < 0 || x1 >= w1) continue;
          TraceStep st;  // one step per tap, as in the schedule [p, q, 0, r, s]
          for (int64_t a = 0; a < b.er; ++a)  // the expansion window of B pixel (y1, x1)
            for (int64_t c = 0; c < b.es; ++c) {
              const int64_t hi = y1 * b.stride1 - b.e_pad_top + a, wi = x1 * b.stride1 - b.e_pad_left + c;
              if (hi < 0 || hi >= b.h || wi < 0 || wi >= b.w) continue;
              const int64_t pix = hi * b.w + wi;
              AddSegments(st.reads, pix * b.c_in, (pix + 1) * b.c_in, seg);
            }
          t.push_back(st);
        }
      }
      TraceStep last;  // S4 at [p, q, 3, 0, 0]
      if (b.residual) AddSegments(last.reads, (p * b.w + q) * b.c_in, (p * b.w + q + 1) * b.c_in, seg);
      AddSegments(last.writes, (p * w3 + q) * b.c_out, (p * w3 + q + 1) * b.c_out, seg);
      t.push_back(last);
    }
  }
  return t;
}

int64_t MaxOf(const std::vector<TraceStep>& t, bool writes) {
  int64_t m = -1;
  for (const TraceStep& s : t) {
    for (int64_t v : writes ? s.writes : s.reads) m = std::max(m, v);
  }
  return m;
}

// The ISL result equals the brute-force frontier; the shift is safe in the simulated pool; one less
// really destroys an input segment (when the shift is not clamped at 0; g_unsafe_checked counts
// those cases).
int g_unsafe_checked = 0;
void ExpectMatchesBruteForce(const AffineKernel& k, const std::vector<TraceStep>& trace) {
  SCOPED_TRACE(k.name);
  StatusOr<ShiftAnalysis> a = AnalyzeShift(k);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_LE(MaxOf(trace, false) + 1, k.in_segments);  // strided convs may skip the tail
  ASSERT_EQ(MaxOf(trace, true) + 1, k.out_segments);
  const std::optional<int64_t> frontier = TraceFrontierShift(trace);
  EXPECT_EQ(a->unclamped_shift, frontier);
  EXPECT_EQ(a->shift, std::max<int64_t>(0, frontier.value_or(0)));
  EXPECT_EQ(a->footprint_segments, SegmentFootprint(a->shift, k.in_segments, k.out_segments));
  if (k.in_bytes > 0) {
    EXPECT_EQ(a->footprint_bytes,
              std::max(a->shift * k.segment_bytes + k.in_bytes, k.out_bytes));
  }
  EXPECT_FALSE(SimulateTrace(trace, a->shift, k.in_segments, k.out_segments).has_value());
  if (a->unclamped_shift.has_value() && *a->unclamped_shift > 0) {
    const std::optional<DestroyedRead> bad =
        SimulateTrace(trace, a->shift - 1, k.in_segments, k.out_segments);
    ASSERT_TRUE(bad.has_value());
    EXPECT_GE(bad->segment, 0);  // an input read, not the final output check
    EXPECT_GE(bad->writer_step, 0);
    EXPECT_LT(bad->writer_step, bad->step);
    ++g_unsafe_checked;
  }
}

// ---- GEMM / FC ----------------------------------------------------------------------------------

TEST(GemmTest, PaperFigure1Example) {
  // In 2x3 segments, Out 2x2 segments: one empty segment, 7 in total (paper Fig. 1c).
  StatusOr<AffineKernel> k = GemmKernel(2, 3, 2);
  ASSERT_TRUE(k.ok());
  StatusOr<ShiftAnalysis> a = AnalyzeShift(*k);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->shift, 1);
  EXPECT_EQ(a->footprint_segments, 7);
}

TEST(GemmTest, ClosedFormOnManyShapes) {
  for (int64_t m = 1; m <= 6; ++m) {
    for (int64_t kk = 1; kk <= 6; ++kk) {
      for (int64_t n = 1; n <= 6; ++n) {
        StatusOr<AffineKernel> k = GemmKernel(m, kk, n);
        ASSERT_TRUE(k.ok());
        StatusOr<ShiftAnalysis> a = AnalyzeShift(*k);
        ASSERT_TRUE(a.ok()) << a.status().message();
        EXPECT_EQ(a->shift, GemmShiftClosedForm(m, kk, n)) << m << " " << kk << " " << n;
        EXPECT_EQ(a->footprint_segments, GemmFootprintClosedForm(m, kk, n))
            << m << " " << kk << " " << n;
      }
    }
  }
  // Larger shapes: the ISL problem size does not depend on the extents.
  const int64_t shapes[][3] = {{1000, 7, 3},   {1000, 3, 7},   {64, 64, 64}, {49, 1, 1000},
                               {1, 1280, 10},  {4096, 2, 40},  {10, 100, 99}, {100, 99, 100},
                               {7, 1000, 1000}, {123, 45, 678}};
  for (const auto& s : shapes) {
    StatusOr<AffineKernel> k = GemmKernel(s[0], s[1], s[2]);
    ASSERT_TRUE(k.ok());
    StatusOr<ShiftAnalysis> a = AnalyzeShift(*k);
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->shift, GemmShiftClosedForm(s[0], s[1], s[2])) << s[0] << " " << s[1] << " " << s[2];
    EXPECT_EQ(a->footprint_segments, GemmFootprintClosedForm(s[0], s[1], s[2]));
  }
}

TEST(GemmTest, BruteForceAndUnsafeShift) {
  for (int64_t m = 1; m <= 4; ++m) {
    for (int64_t kk = 1; kk <= 4; ++kk) {
      for (int64_t n = 1; n <= 4; ++n) {
        StatusOr<AffineKernel> k = GemmKernel(m, kk, n);
        ASSERT_TRUE(k.ok());
        ExpectMatchesBruteForce(*k, FcTrace(m, kk, n, 1));
      }
    }
  }
}

TEST(FullyConnectedTest, PaperSegmentRuleAndUnalignedRows) {
  // (M, in bytes, out bytes, segment bytes or 0 for the paper rule min(in, out)).
  const int64_t cases[][4] = {{8, 64, 16, 0}, {8, 16, 64, 0}, {5, 24, 16, 0}, {5, 16, 24, 0},
                              {3, 10, 10, 0}, {6, 7, 5, 0},   {4, 20, 12, 4}, {4, 13, 9, 3}};
  for (const auto& c : cases) {
    StatusOr<AffineKernel> k = FullyConnectedKernel(c[0], c[1], c[2], c[3]);
    ASSERT_TRUE(k.ok()) << k.status().message();
    const int64_t seg = c[3] > 0 ? c[3] : std::min(c[1], c[2]);
    EXPECT_EQ(k->segment_bytes, seg);
    ExpectMatchesBruteForce(*k, FcTrace(c[0], c[1], c[2], seg));
  }
  // With segments dividing both rows the FC is the paper's GEMM in segment units.
  StatusOr<AffineKernel> fc = FullyConnectedKernel(50, 64, 16);
  ASSERT_TRUE(fc.ok());
  EXPECT_EQ(*MinimalSafeShift(*fc), GemmShiftClosedForm(50, 4, 1));
}

// ---- pointwise ----------------------------------------------------------------------------------

TEST(PointwiseTest, ClosedFormAndBruteForce) {
  const int64_t cases[][5] = {{4, 5, 16, 16, 0}, {4, 5, 16, 48, 0}, {4, 5, 48, 16, 0},
                              {3, 3, 16, 24, 0}, {3, 3, 24, 16, 0}, {2, 7, 8, 8, 4},
                              {5, 2, 3, 8, 0},   {3, 4, 12, 20, 8}};
  for (const auto& c : cases) {
    StatusOr<AffineKernel> k = PointwiseConvKernel(c[0], c[1], c[2], c[3], c[4]);
    ASSERT_TRUE(k.ok()) << k.status().message();
    const int64_t seg = k->segment_bytes;
    ExpectMatchesBruteForce(*k, PointwiseTrace(c[0], c[1], c[2], c[3], seg));
    if (c[2] % seg == 0 && c[3] % seg == 0) {
      EXPECT_EQ(*MinimalSafeShift(*k), PointwiseShiftClosedForm(c[0] * c[1], c[2] / seg, c[3] / seg));
    }
  }
}

TEST(PointwiseTest, McunetLayerHw80C16K16) {
  // The paper's named single-layer case: in-place at segment level (shift 0), footprint one tensor.
  StatusOr<AffineKernel> k = PointwiseConvKernel(80, 80, 16, 16);
  ASSERT_TRUE(k.ok());
  StatusOr<ShiftAnalysis> a = AnalyzeShift(*k);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(k->segment_bytes, 16);
  EXPECT_EQ(a->shift, 0);
  EXPECT_EQ(a->footprint_segments * k->segment_bytes, 80 * 80 * 16);  // 102400 B vs 204800 B
  EXPECT_EQ(a->footprint_bytes, 102400);
}

// ---- Conv2D / depthwise -------------------------------------------------------------------------

TEST(Conv2DTest, BruteForceEveryKernelStridePadding) {
  // Square kernels 1x1..7x7, strides 1 and 2, every padding 0..k/2, two channel ratios.
  const int64_t channel_cases[][2] = {{8, 16}, {16, 8}};
  int checked = 0;
  g_unsafe_checked = 0;
  for (int64_t kk = 1; kk <= 7; ++kk) {
    for (int64_t stride = 1; stride <= 2; ++stride) {
      for (int64_t pad = 0; pad <= kk / 2; ++pad) {
        for (const auto& ch : channel_cases) {
          Conv2DParams p;
          p.h = 9;
          p.w = 8;
          p.c_in = ch[0];
          p.c_out = ch[1];
          p.r = p.s = kk;
          p.stride_h = p.stride_w = stride;
          p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
          StatusOr<AffineKernel> k = Conv2DKernel(p);
          ASSERT_TRUE(k.ok()) << k.status().message();
          ExpectMatchesBruteForce(*k, ConvTrace(p, k->segment_bytes));
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * (1 + 2 + 2 + 3 + 3 + 4 + 4));
  EXPECT_GT(g_unsafe_checked, checked / 2);  // most of them have a positive shift
}

TEST(Conv2DTest, NonSquareAsymmetricAndUnalignedSegments) {
  struct Case {
    int64_t h, w, ci, co, r, s, sh, sw, pt, pl, pb, pr, seg;
  };
  const Case cases[] = {
      {7, 9, 16, 16, 3, 5, 1, 2, 1, 2, 1, 2, 0},   {8, 8, 16, 24, 3, 3, 2, 2, 0, 0, 1, 1, 0},
      {6, 7, 24, 16, 1, 7, 1, 1, 0, 3, 0, 3, 0},   {10, 5, 3, 8, 5, 1, 2, 1, 2, 0, 2, 0, 0},
      {5, 5, 8, 8, 2, 2, 1, 1, 0, 0, 1, 1, 0},     {6, 6, 12, 20, 3, 3, 1, 1, 1, 1, 1, 1, 8},
      {9, 9, 4, 4, 7, 7, 2, 2, 3, 3, 3, 3, 2},
  };
  for (const Case& c : cases) {
    Conv2DParams p{c.h, c.w, c.ci, c.co, c.r, c.s, c.sh, c.sw, c.pt, c.pl, c.pb, c.pr, c.seg};
    StatusOr<AffineKernel> k = Conv2DKernel(p);
    ASSERT_TRUE(k.ok()) << k.status().message();
    ExpectMatchesBruteForce(*k, ConvTrace(p, k->segment_bytes));
  }
}

TEST(Conv2DTest, ThreeByThreeSamePaddingNeedsOneRowPlusOne) {
  // Output pixel (p, q) still needs input pixel (p-1, q-1) when it writes (p, q): W + 1 segments.
  StatusOr<AffineKernel> k = Conv2DKernel(20, 20, 16, 16, 3, 3, 1, 1);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*MinimalSafeShift(*k), 21);
}

TEST(DepthwiseTest, BruteForce) {
  for (int64_t kk : {3, 5, 7}) {
    for (int64_t stride = 1; stride <= 2; ++stride) {
      for (int64_t pad = 0; pad <= kk / 2; ++pad) {
        StatusOr<AffineKernel> k = DepthwiseConvKernel(9, 10, 8, kk, kk, stride, pad);
        ASSERT_TRUE(k.ok()) << k.status().message();
        Conv2DParams p{9, 10, 8, 8, kk, kk, stride, stride, pad, pad, pad, pad, 0};
        ExpectMatchesBruteForce(*k, ConvTrace(p, 8));
      }
    }
  }
  // Smaller segments than a pixel.
  StatusOr<AffineKernel> k = DepthwiseConvKernel(6, 6, 16, 3, 3, 1, 1, 4);
  ASSERT_TRUE(k.ok());
  Conv2DParams p{6, 6, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 4};
  ExpectMatchesBruteForce(*k, ConvTrace(p, 4));
}

// ---- fused inverted bottleneck (Eq. 2) ----------------------------------------------------------

TEST(BottleneckTest, MatchesBruteForceSimulation) {
  struct Case {
    int64_t h, ci, cm, co, r, s1, s2, s3;
    bool residual;
  };
  const Case cases[] = {
      {20, 16, 48, 16, 3, 1, 1, 1, true},   // MCUNet-5fps-VWW S1
      {10, 24, 144, 16, 3, 1, 1, 1, false}, // S3 (c_in != c_out: no residual)
      {11, 16, 64, 24, 5, 1, 1, 1, false},  // B5-like, unaligned output pixels
      {12, 3, 16, 8, 3, 2, 1, 1, false},    // B1-like: pw1 stride 2
      {12, 8, 24, 16, 7, 1, 2, 1, false},   // B2-like: dw stride 2, 7x7
      {9, 16, 80, 24, 5, 1, 2, 1, false},   // B6-like
      {9, 8, 32, 8, 3, 1, 1, 2, false},     // pw2 stride 2
      {7, 8, 32, 8, 7, 1, 1, 1, true},      // 7x7 on a small image
  };
  for (const Case& c : cases) {
    BottleneckParams b;
    b.h = b.w = c.h;
    b.c_in = c.ci;
    b.c_mid = c.cm;
    b.c_out = c.co;
    b.r = b.s = c.r;
    b.stride1 = c.s1;
    b.stride2 = c.s2;
    b.stride3 = c.s3;
    b.residual = c.residual;
    StatusOr<AffineKernel> k = InvertedBottleneckKernel(b);
    ASSERT_TRUE(k.ok()) << k.status().message();
    EXPECT_EQ(k->workspace_bytes, c.r * c.r * c.cm + c.cm + (c.residual ? c.co : 0));
    ExpectMatchesBruteForce(*k, BottleneckTrace(b, k->segment_bytes));
  }
}

// A network's stem fused as the expansion (Conv2D er x es, stride, padding): MCUNet's B1 shape on
// a smaller image, then every expansion kernel 1..5, stride 1..2 and padding.
TEST(BottleneckTest, ConvExpansionMatchesBruteForce) {
  BottleneckParams b;
  b.h = b.w = 14;
  b.c_in = 3;
  b.c_mid = 16;
  b.c_out = 8;
  b.r = b.s = 3;
  b.stride1 = 2;
  b.er = b.es = 3;
  b.e_pad_top = b.e_pad_left = b.e_pad_bottom = b.e_pad_right = 1;
  b.residual = false;
  StatusOr<AffineKernel> k = InvertedBottleneckKernel(b);
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(k->out_bytes, 7 * 7 * 8);
  ExpectMatchesBruteForce(*k, BottleneckTrace(b, k->segment_bytes));
  int checked = 0;
  for (int64_t er = 1; er <= 5; ++er)
    for (int64_t s1 = 1; s1 <= 2; ++s1)
      for (int64_t pad = 0; pad < er; pad += 2) {
        b.h = b.w = 9;
        b.er = b.es = er;
        b.stride1 = s1;
        b.e_pad_top = b.e_pad_left = pad;
        b.e_pad_bottom = b.e_pad_right = er - 1 - pad;
        b.stride2 = 1 + (er % 2);
        k = InvertedBottleneckKernel(b);
        ASSERT_TRUE(k.ok()) << k.status().message();
        ExpectMatchesBruteForce(*k, BottleneckTrace(b, k->segment_bytes));
        ++checked;
      }
  EXPECT_EQ(checked, 18);
  // A residual needs the 1x1 expansion.
  b.er = b.es = 3;
  b.stride1 = b.stride2 = 1;
  b.c_out = b.c_in;
  b.e_pad_top = b.e_pad_left = b.e_pad_bottom = b.e_pad_right = 1;
  b.residual = true;
  EXPECT_FALSE(InvertedBottleneckKernel(b).ok());
}

// TFLite's SAME padding at stride 2 pads only the bottom and right (and a folded PAD may pad any
// side): every padding of a 3x3 and a 5x5 depthwise below the kernel, stride 1 and 2, matches the
// brute-force trace; padding as large as the kernel is refused.
TEST(BottleneckTest, AsymmetricDepthwisePaddingMatchesBruteForce) {
  BottleneckParams b;
  b.h = b.w = 10;
  b.c_in = 8;
  b.c_mid = 24;
  b.c_out = 16;
  b.residual = false;
  int checked = 0;
  for (int64_t r : {3, 5})
    for (int64_t s2 = 1; s2 <= 2; ++s2)
      for (int64_t top = 0; top < r; top += 2)
        for (int64_t bottom = 0; bottom < r; ++bottom) {
          b.r = b.s = r;
          b.stride2 = s2;
          b.pad_top = top;
          b.pad_left = bottom;  // the width gets the transposed padding
          b.pad_bottom = bottom;
          b.pad_right = top;
          StatusOr<AffineKernel> k = InvertedBottleneckKernel(b);
          ASSERT_TRUE(k.ok()) << k.status().message();
          const int64_t h2 = (10 + top + bottom - r) / s2 + 1, w2 = (10 + bottom + top - r) / s2 + 1;
          EXPECT_EQ(k->out_bytes, h2 * w2 * 16);
          ExpectMatchesBruteForce(*k, BottleneckTrace(b, k->segment_bytes));
          ++checked;
        }
  EXPECT_EQ(checked, 2 * (2 * 3 + 3 * 5));
  b.r = b.s = 3;
  b.pad_bottom = 3;
  EXPECT_FALSE(InvertedBottleneckKernel(b).ok());
}

TEST(BottleneckTest, VwwS1) {
  BottleneckParams b;
  b.h = b.w = 20;
  b.c_in = 16;
  b.c_mid = 48;
  b.c_out = 16;
  StatusOr<AffineKernel> k = InvertedBottleneckKernel(b);
  ASSERT_TRUE(k.ok()) << k.status().message();
  StatusOr<ShiftAnalysis> a = AnalyzeShift(*k);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // E(p, q) is written while A(p-1, q-1) is still needed by the next output pixel's window... the
  // next pixel (p, q+1) reads A(p-1, q) at the earliest: shift = (pW + q) - ((p-1)W + q) + 1 = W + 1.
  EXPECT_EQ(a->shift, 21);
  EXPECT_EQ(a->footprint_segments, 400 + 21);
  EXPECT_EQ(k->workspace_bytes, 9 * 48 + 48 + 16);  // residual: the projected pixel too
}

TEST(BottleneckTest, RejectsInvalidResidual) {
  BottleneckParams b;
  b.h = b.w = 8;
  b.c_in = 16;
  b.c_mid = 32;
  b.c_out = 24;
  EXPECT_FALSE(InvertedBottleneckKernel(b).ok());  // residual with c_in != c_out
  b.residual = false;
  EXPECT_TRUE(InvertedBottleneckKernel(b).ok());
}

// ---- user-written affine kernels and errors -----------------------------------------------------

TEST(AffineKernelTest, CustomKernelsFromIslText) {
  // A reversed elementwise kernel: step i reads In[9 - i] and writes Out[9 - i]. Writes go downward
  // while reads go downward too: the frontier of earlier writes is above later reads.
  AffineKernel rev;
  rev.name = "reverse";
  rev.domain = "{ S[i] : 0 <= i < 10 }";
  rev.reads = "{ S[i] -> In[9 - i] }";
  rev.writes = "{ S[i] -> Out[9 - i] }";
  rev.in_segments = rev.out_segments = 10;
  std::vector<TraceStep> t;
  for (int i = 0; i < 10; ++i) t.push_back({{9 - i}, {9 - i}});
  ExpectMatchesBruteForce(rev, t);
  EXPECT_EQ(*MinimalSafeShift(rev), 10);  // no overlap possible in a downward frontier

  // Upsampling by 2 along a row (each input read twice, two outputs per step), triangular domain.
  AffineKernel tri;
  tri.name = "triangle";
  tri.domain = "{ S[i, j] : 0 <= j <= i < 6 }";
  tri.reads = "{ S[i, j] -> In[i + j] }";
  tri.writes = "{ S[i, j] -> Out[o] : 2i <= o <= 2i + 1 and j = i }";
  tri.in_segments = 11;
  tri.out_segments = 12;
  std::vector<TraceStep> t2;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j <= i; ++j) {
      TraceStep s{{i + j}, {}};
      if (j == i) s.writes = {2 * i, 2 * i + 1};
      t2.push_back(s);
    }
  }
  ExpectMatchesBruteForce(tri, t2);

  // No write precedes a read: unconstrained, clamped to 0.
  AffineKernel one;
  one.name = "single_step";
  one.domain = "{ S[0] }";
  one.reads = "{ S[0] -> In[x] : 0 <= x < 4 }";
  one.writes = "{ S[0] -> Out[x] : 0 <= x < 4 }";
  one.in_segments = one.out_segments = 4;
  StatusOr<ShiftAnalysis> a = AnalyzeShift(one);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->unclamped_shift.has_value());
  EXPECT_EQ(a->shift, 0);
}

TEST(AffineKernelTest, Errors) {
  AffineKernel k;
  k.name = "bad";
  k.domain = "{ S[i] : 0 <= i < 4 }";
  k.reads = "{ S[i] -> In[i] }";
  k.writes = "{ S[i] -> Out[i] }";
  k.in_segments = k.out_segments = 4;
  ASSERT_TRUE(AnalyzeShift(k).ok());

  AffineKernel parse = k;
  parse.reads = "{ S[i] -> In[i }";
  StatusOr<ShiftAnalysis> r = AnalyzeShift(parse);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("bad"), std::string::npos);

  AffineKernel unbounded = k;
  unbounded.domain = "{ S[i] : i >= 0 }";
  EXPECT_FALSE(AnalyzeShift(unbounded).ok());

  AffineKernel outside = k;
  outside.writes = "{ S[i] -> Out[i + 1] }";
  r = AnalyzeShift(outside);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("outside"), std::string::npos);

  AffineKernel two_d = k;
  two_d.reads = "{ S[i] -> In[i, 0] }";
  EXPECT_FALSE(AnalyzeShift(two_d).ok());

  AffineKernel multi = k;
  multi.domain = "{ S[i] : 0 <= i < 4; T[i] : 0 <= i < 4 }";
  EXPECT_FALSE(AnalyzeShift(multi).ok());  // needs a schedule
  multi.schedule = "{ S[i] -> [i, 0]; T[i] -> [i] }";
  EXPECT_FALSE(AnalyzeShift(multi).ok());  // two time spaces
  multi.schedule = "{ S[i] -> [i, 0]; T[i] -> [i, 1] }";
  EXPECT_TRUE(AnalyzeShift(multi).ok());

  AffineKernel sizes = k;
  sizes.in_segments = 0;
  EXPECT_FALSE(AnalyzeShift(sizes).ok());

  EXPECT_FALSE(GemmKernel(0, 1, 1).ok());
  EXPECT_FALSE(Conv2DKernel(2, 2, 8, 8, 5, 5, 1, 0).ok());  // kernel larger than the image
  EXPECT_FALSE(Conv2DKernel(8, 8, 8, 8, 3, 3, 1, 3).ok());  // padding >= kernel
}

// ---- circular pools -----------------------------------------------------------------------------

// Runs a chain of traces in a circular pool of `pool` units (bytes), tensors tagged (tensor, byte).
// Each trace step works on segments of its layer; a segment read checks every byte of it that
// belongs to the tensor. Returns false on the first destroyed byte.
struct ChainStage {
  std::vector<TraceStep> trace;
  int64_t seg, in_bytes, out_bytes;
};
bool RunChain(const std::vector<ChainStage>& stages, const CircularPoolPlan& plan) {
  const int64_t pool = plan.pool_bytes;
  std::vector<std::pair<int64_t, int64_t>> tag(pool, {-1, -1});
  auto at = [&](int64_t off, int64_t b) { return ((off + b) % pool + pool) % pool; };
  for (int64_t b = 0; b < stages[0].in_bytes; ++b) tag[at(plan.tensor_offsets[0], b)] = {0, b};
  for (size_t l = 0; l < stages.size(); ++l) {
    const ChainStage& st = stages[l];
    const int64_t in_off = plan.tensor_offsets[l], out_off = plan.tensor_offsets[l + 1];
    for (const TraceStep& s : st.trace) {
      for (int64_t x : s.reads) {
        for (int64_t b = x * st.seg; b < std::min((x + 1) * st.seg, st.in_bytes); ++b) {
          if (tag[at(in_off, b)] != std::make_pair(static_cast<int64_t>(l), b)) return false;
        }
      }
      for (int64_t o : s.writes) {
        for (int64_t b = o * st.seg; b < std::min((o + 1) * st.seg, st.out_bytes); ++b) {
          tag[at(out_off, b)] = {static_cast<int64_t>(l + 1), b};
        }
      }
    }
  }
  const int64_t last = static_cast<int64_t>(stages.size());
  for (int64_t b = 0; b < stages.back().out_bytes; ++b) {
    if (tag[at(plan.tensor_offsets[last], b)] != std::make_pair(last, b)) return false;
  }
  return true;
}

TEST(CircularPoolTest, ChainOfConvsSameSegmentSize) {
  // 3x3 conv 16->16, pointwise 16->32, depthwise 3x3 stride 2, pointwise 32->16, FC-like 1x1.
  std::vector<Conv2DParams> convs = {
      {10, 10, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16}, {10, 10, 16, 32, 1, 1, 1, 1, 0, 0, 0, 0, 16},
      {10, 10, 32, 32, 3, 3, 2, 2, 1, 1, 1, 1, 16}, {5, 5, 32, 16, 1, 1, 1, 1, 0, 0, 0, 0, 16},
      {5, 5, 16, 16, 5, 5, 1, 1, 2, 2, 2, 2, 16},
  };
  std::vector<ChainLayer> layers;
  std::vector<ChainStage> stages;
  for (const Conv2DParams& p : convs) {
    StatusOr<AffineKernel> k = Conv2DKernel(p);
    ASSERT_TRUE(k.ok()) << k.status().message();
    StatusOr<int64_t> shift = MinimalSafeShift(*k);
    ASSERT_TRUE(shift.ok());
    const int64_t oh = (p.h + p.pad_top + p.pad_bottom - p.r) / p.stride_h + 1;
    const int64_t ow = (p.w + p.pad_left + p.pad_right - p.s) / p.stride_w + 1;
    layers.push_back({k->name, 16, p.h * p.w * p.c_in, oh * ow * p.c_out, *shift});
    stages.push_back({ConvTrace(p, 16), 16, p.h * p.w * p.c_in, oh * ow * p.c_out});
  }
  for (int64_t start : {0, 5 * 16, 77 * 16}) {
    StatusOr<CircularPoolPlan> plan = PlanCircularPool(layers, start);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    ASSERT_EQ(plan->tensor_offsets.size(), layers.size() + 1);
    int64_t max_span = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
      EXPECT_EQ(plan->tensor_offsets[i + 1],
                ((plan->tensor_offsets[i] - layers[i].shift * 16) % plan->pool_bytes +
                 plan->pool_bytes) % plan->pool_bytes);
      max_span = std::max(max_span, plan->layer_footprint_bytes[i]);
    }
    EXPECT_EQ(plan->pool_bytes, max_span);
    EXPECT_EQ(plan->pool_bytes % 16, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
      EXPECT_EQ(plan->layer_footprint_bytes[i],
                std::max(layers[i].shift * 16 + layers[i].in_bytes, layers[i].out_bytes));
    }
    EXPECT_TRUE(RunChain(stages, *plan)) << "start " << start;
    // One byte less wraps the largest layer onto itself.
    CircularPoolPlan smaller = *plan;
    smaller.pool_bytes -= 1;
    for (size_t i = 1; i < smaller.tensor_offsets.size(); ++i) {
      smaller.tensor_offsets[i] =
          ((smaller.tensor_offsets[i - 1] - layers[i - 1].shift * 16) % smaller.pool_bytes +
           smaller.pool_bytes) % smaller.pool_bytes;
    }
    smaller.tensor_offsets[0] %= smaller.pool_bytes;
    EXPECT_FALSE(RunChain(stages, smaller)) << "start " << start;
  }
}

TEST(CircularPoolTest, MixedSegmentSizesAndErrors) {
  // FC 24 -> 16 bytes per row (seg 16), then pointwise 16 -> 8 (seg 8), then GEMM-like 8 -> 32.
  std::vector<ChainLayer> layers;
  std::vector<ChainStage> stages;
  {
    StatusOr<AffineKernel> k = FullyConnectedKernel(12, 24, 16);
    ASSERT_TRUE(k.ok());
    layers.push_back({k->name, 16, 12 * 24, 12 * 16, *MinimalSafeShift(*k)});
    stages.push_back({FcTrace(12, 24, 16, 16), 16, 12 * 24, 12 * 16});
  }
  {
    StatusOr<AffineKernel> k = PointwiseConvKernel(3, 4, 16, 8);
    ASSERT_TRUE(k.ok());
    layers.push_back({k->name, 8, 12 * 16, 12 * 8, *MinimalSafeShift(*k)});
    stages.push_back({PointwiseTrace(3, 4, 16, 8, 8), 8, 12 * 16, 12 * 8});
  }
  {
    StatusOr<AffineKernel> k = FullyConnectedKernel(12, 8, 32);
    ASSERT_TRUE(k.ok());
    layers.push_back({k->name, 8, 12 * 8, 12 * 32, *MinimalSafeShift(*k)});
    stages.push_back({FcTrace(12, 8, 32, 8), 8, 12 * 8, 12 * 32});
  }
  StatusOr<CircularPoolPlan> plan = PlanCircularPool(layers, 40);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(RunChain(stages, *plan));
  EXPECT_LT(plan->pool_bytes, 12 * 24 + 12 * 16);  // less than the largest in + out
  // The pool is the largest layer span (here the 8 -> 32 expansion, whose output dominates).
  EXPECT_EQ(plan->pool_bytes, *std::max_element(plan->layer_footprint_bytes.begin(),
                                                plan->layer_footprint_bytes.end()));

  std::vector<ChainLayer> bad = layers;
  bad[1].in_bytes += 1;
  EXPECT_FALSE(PlanCircularPool(bad).ok());
  bad = layers;
  bad[0].shift = -1;
  EXPECT_FALSE(PlanCircularPool(bad).ok());
  EXPECT_FALSE(PlanCircularPool({}).ok());
}

TEST(SimulateTraceTest, CircularAddressing) {
  // GEMM 3x2 -> 3x2 (shift 1, footprint 7) runs in a circular pool of 7 at any input position.
  std::vector<TraceStep> t = FcTrace(3, 2, 2, 1);
  StatusOr<AffineKernel> k = GemmKernel(3, 2, 2);
  ASSERT_TRUE(k.ok());
  const int64_t shift = *MinimalSafeShift(*k);
  EXPECT_EQ(shift, 1);
  EXPECT_FALSE(SimulateTrace(t, shift, 6, 6, 7).has_value());
  EXPECT_FALSE(SimulateTrace(t, shift + 7 * 3, 6, 6, 7).has_value());
  EXPECT_TRUE(SimulateTrace(t, shift, 6, 6, 6).has_value());
}

}  // namespace
}  // namespace sramplan::segment
