// The optimiser's micro-kernel constraints (SearchOptions::k_multiple, min_accum_depth;
// x86::KernelSearchOptions) and the x86 blocked convolution run on the strings they give: the L1
// tile (as MakeConvPlan cuts it, independently of the search's own check) has whole SIMD K chunks
// and at least the minimum accumulation depth, and both kernels (AVX2 where the CPU has it, and the
// portable one) match a double-accumulated reference on odd shapes and strides.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "blocking/optimizer.h"
#include "blocking/x86_conv.h"

namespace sramplan::blocking::x86 {
namespace {

int Idx(Dim d) { return static_cast<int>(d); }

std::vector<float> Random(size_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// max |blocked - reference| for `str` on `path`.
double MaxErr(const Layer& l, const BlockingString& str, int64_t l1, KernelPath path, ConvPlan* plan_out) {
  const int64_t X = l.extent(Dim::kX), Y = l.extent(Dim::kY), C = l.extent(Dim::kC), K = l.extent(Dim::kK),
                Fw = l.extent(Dim::kFw), Fh = l.extent(Dim::kFh);
  const int64_t xi = (X - 1) * l.stride_x + Fw, yi = (Y - 1) * l.stride_y + Fh;
  std::vector<float> in = Random(static_cast<size_t>(xi * yi * C), 5), w = Random(static_cast<size_t>(Fh * Fw * C * K), 6);
  auto plan = MakeConvPlan(l, str, l1, w);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return 1e9;
  *plan_out = *plan;
  std::vector<float> out;
  Status st = RunBlockedConv(*plan, in, &out, path);
  EXPECT_TRUE(st.ok()) << st.message();
  double err = 0;
  for (int64_t y = 0; y < Y; ++y)
    for (int64_t x = 0; x < X; ++x)
      for (int64_t k = 0; k < K; ++k) {
        double ref = 0;
        for (int64_t fh = 0; fh < Fh; ++fh)
          for (int64_t fw = 0; fw < Fw; ++fw)
            for (int64_t c = 0; c < C; ++c)
              ref += static_cast<double>(in[((y * l.stride_y + fh) * xi + x * l.stride_x + fw) * C + c]) *
                     w[((fh * Fw + fw) * C + c) * K + k];
        err = std::max(err, std::fabs(ref - out[(y * X + x) * K + k]));
      }
  return err;
}

std::vector<KernelPath> Paths() {
  std::vector<KernelPath> p = {KernelPath::kPortable};
  if (HasAvx2Fma()) p.push_back(KernelPath::kAvx2);
  return p;
}

bool TileMeets(const Layer& l, const Extents& t, int k_multiple, int64_t min_depth) {
  const int64_t tk = t[Idx(Dim::kK)];
  const int64_t depth = t[Idx(Dim::kC)] * t[Idx(Dim::kFw)] * t[Idx(Dim::kFh)];
  const int64_t full = l.extent(Dim::kC) * l.extent(Dim::kFw) * l.extent(Dim::kFh);
  return (tk % k_multiple == 0 || tk == l.extent(Dim::kK)) && depth >= std::min(min_depth, full);
}

TEST(X86KernelConstraints, KMultipleIsWholeSimdChunks) {
  EXPECT_EQ(KernelSearchOptions(ConvLayer("a", 4, 4, 3, 96, 3, 3)).k_multiple, 16);
  EXPECT_EQ(KernelSearchOptions(ConvLayer("b", 4, 4, 3, 200, 3, 3)).k_multiple, 40);  // 16 + 16 + 8
  EXPECT_EQ(KernelSearchOptions(ConvLayer("c", 4, 4, 3, 24, 3, 3)).k_multiple, 24);   // 16 + 8
  EXPECT_EQ(KernelSearchOptions(ConvLayer("d", 4, 4, 3, 8, 3, 3)).k_multiple, 8);
  EXPECT_EQ(KernelSearchOptions(ConvLayer("e", 4, 4, 3, 21, 3, 3)).k_multiple, 8);  // only K = 21 itself meets it
  EXPECT_EQ(KernelSearchOptions(ConvLayer("f", 4, 4, 3, 16, 3, 3), 77).min_accum_depth, 77);
}

TEST(X86KernelConstraints, CheckFollowsTheLowestLevelTile) {
  HostCaches caches;
  caches.l1d = 4096;  // 1024 floats
  Hierarchy h = HostHierarchy(caches);
  Layer l = ConvLayer("t", 8, 8, 16, 32, 3, 3);
  SearchOptions opt;
  auto parse = [&](const char* s) {
    auto r = ParseBlockingString(s, l);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : BlockingString{};
  };
  const BlockingString k8 = parse("K:8 C:4 Fw Fh X:4 Y:2 X Y C K");        // tile K 8, depth 36
  const BlockingString k16 = parse("K:16 C:4 Fw Fh X:4 Y:2 X Y C K");      // tile K 16, depth 36
  const BlockingString shallow = parse("K:16 X:8 Y:4 C:2 Fw Fh Y C K");    // tile depth 18
  EXPECT_TRUE(MeetsKernelConstraints(l, h, opt, k8));  // off by default
  opt.k_multiple = 16;
  EXPECT_FALSE(MeetsKernelConstraints(l, h, opt, k8));
  EXPECT_TRUE(MeetsKernelConstraints(l, h, opt, k16));
  opt.min_accum_depth = 32;
  EXPECT_TRUE(MeetsKernelConstraints(l, h, opt, k16));
  EXPECT_FALSE(MeetsKernelConstraints(l, h, opt, shallow));
  // A prefix that still fits the lowest level is not decided yet.
  EXPECT_TRUE(MeetsKernelConstraints(l, h, opt, BlockingString{{Dim::kK, 8}, {Dim::kC, 2}}));
  // The exact search does not honour them and says so.
  auto ex = ExactSearch(l, h, opt);
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.status().message().find("heuristic search only"), std::string::npos) << ex.status().message();
}

TEST(X86KernelConstraints, SearchedStringsMeetThemAndMatchTheReference) {
  struct T {
    Layer l;
    int64_t l1, min_depth;
  };
  const T cases[] = {
      {ConvLayer("s2", 11, 7, 12, 48, 3, 3, 1, 2, 2), 8192, 36},   // stride 2, 77 pixels, K 16-chunks
      {ConvLayer("s3", 13, 5, 10, 40, 5, 3, 1, 3, 1), 16384, 30},  // stride 3 in X, K = 40: 16 + 16 + 8
      {ConvLayer("k24", 9, 9, 7, 24, 3, 3), 8192, 21},             // K = 24: 16 + 8, 81 pixels
      {ConvLayer("odd", 7, 13, 9, 32, 2, 4), 4096, 24},            // odd X, Y and window
  };
  int unconstrained_violations = 0;
  for (const T& t : cases) {
    HostCaches caches;
    caches.l1d = t.l1;
    caches.l2 = t.l1 * 8;
    caches.l3 = t.l1 * 64;
    Hierarchy h = HostHierarchy(caches);
    SearchOptions opt = KernelSearchOptions(t.l, t.min_depth);
    opt.threads = 1;
    auto r = HeuristicSearch(t.l, h, opt);
    ASSERT_TRUE(r.ok()) << t.l.name << ": " << r.status().message();
    EXPECT_TRUE(MeetsKernelConstraints(t.l, h, opt, r->best)) << t.l.name << " " << ToString(r->best);
    for (KernelPath p : Paths()) {
      ConvPlan plan;
      EXPECT_LT(MaxErr(t.l, r->best, t.l1, p, &plan), 1e-4) << t.l.name << " " << ToString(r->best);
      EXPECT_LT(plan.cut, static_cast<int>(r->best.size())) << t.l.name << ": the L1 tile should not be the whole nest";
      EXPECT_TRUE(TileMeets(t.l, plan.tile, opt.k_multiple, t.min_depth)) << t.l.name << " " << ToString(r->best);
    }
    // The same search without the constraints: counts the layers where they changed the tile.
    SearchOptions plain;
    plain.threads = 1;
    auto u = HeuristicSearch(t.l, h, plain);
    ASSERT_TRUE(u.ok());
    auto up = MakeConvPlan(t.l, u->best, t.l1, std::vector<float>(static_cast<size_t>(t.l.Size(Operand::kKernel))));
    ASSERT_TRUE(up.ok());
    if (!TileMeets(t.l, up->tile, opt.k_multiple, t.min_depth)) ++unconstrained_violations;
  }
  EXPECT_GT(unconstrained_violations, 0) << "the constraints never changed a tile: the test shows nothing";
}

}  // namespace
}  // namespace sramplan::blocking::x86
