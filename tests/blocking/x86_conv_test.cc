// The x86 blocked convolution (issue 16 item 7): the register-blocked AVX2/FMA kernel and the
// portable kernel against a double-accumulated reference on small odd shapes (pixel and kernel
// remainders, strides 2 and 3, strings from the optimiser and hand-written ones), and bad input.
#include "blocking/x86_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <filesystem>
#include <random>

#include "blocking/optimizer.h"

namespace sramplan::blocking::x86 {
namespace {

struct Case {
  Layer layer;
  std::vector<float> in, w;
};

Case MakeCase(const Layer& l, int seed) {
  Case c{l, {}, {}};
  const int64_t xi = (l.extent(Dim::kX) - 1) * l.stride_x + l.extent(Dim::kFw);
  const int64_t yi = (l.extent(Dim::kY) - 1) * l.stride_y + l.extent(Dim::kFh);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  c.in.resize(static_cast<size_t>(xi * yi * l.extent(Dim::kC)));
  c.w.resize(static_cast<size_t>(l.extent(Dim::kFh) * l.extent(Dim::kFw) * l.extent(Dim::kC) * l.extent(Dim::kK)));
  for (float& v : c.in) v = u(rng);
  for (float& v : c.w) v = u(rng);
  return c;
}

std::vector<double> Reference(const Case& c) {
  const Layer& l = c.layer;
  const int64_t X = l.extent(Dim::kX), Y = l.extent(Dim::kY), C = l.extent(Dim::kC), K = l.extent(Dim::kK),
                Fw = l.extent(Dim::kFw), Fh = l.extent(Dim::kFh);
  const int64_t xi = (X - 1) * l.stride_x + Fw;
  std::vector<double> ref(static_cast<size_t>(X * Y * K), 0.0);
  for (int64_t y = 0; y < Y; ++y)
    for (int64_t x = 0; x < X; ++x)
      for (int64_t fh = 0; fh < Fh; ++fh)
        for (int64_t fw = 0; fw < Fw; ++fw)
          for (int64_t ci = 0; ci < C; ++ci)
            for (int64_t k = 0; k < K; ++k)
              ref[(y * X + x) * K + k] += static_cast<double>(c.in[((y * l.stride_y + fh) * xi + x * l.stride_x + fw) * C + ci]) *
                                          c.w[((fh * Fw + fw) * C + ci) * K + k];
  return ref;
}

// Runs `str` on both kernels (the AVX2 one where the CPU has it) and returns the max |error|.
double MaxErr(const Case& c, const BlockingString& str, int64_t l1, KernelPath path) {
  auto plan = MakeConvPlan(c.layer, str, l1, c.w);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return 1e9;
  std::vector<float> out;
  Status st = RunBlockedConv(*plan, c.in, &out, path);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<double> ref = Reference(c);
  EXPECT_EQ(out.size(), ref.size());
  double err = 0;
  for (size_t i = 0; i < ref.size() && i < out.size(); ++i) err = std::max(err, std::fabs(ref[i] - out[i]));
  return err;
}

std::vector<KernelPath> Paths() {
  std::vector<KernelPath> p = {KernelPath::kPortable};
  if (HasAvx2Fma()) p.push_back(KernelPath::kAvx2);
  return p;
}

TEST(X86Conv, HandWrittenStringsWithRemaindersAndStrides) {
  struct T {
    Layer l;
    const char* str;
    int64_t l1;
  };
  const T cases[] = {
      // K = 21: a 16-chunk and a masked 5-chunk; X*Y = 35 pixels: groups of 6 and a 5-pixel tail.
      {ConvLayer("a", 7, 5, 3, 21, 3, 3), "Fw Fh C X Y K", 1 << 20},
      // Stride 2, K tile 7 (masked 7 of 8 lanes), C split across tiles (partial sums revisited).
      {ConvLayer("b", 5, 3, 6, 14, 3, 2, 1, 2, 2), "K:7 X:5 C:2 Fw Fh Y C K", 1 << 20},
      // Stride 3 in X, 1 in Y; small L1 so the cut is inside the string: Fw/Fh split outside the tile.
      {ConvLayer("c", 9, 4, 5, 19, 3, 3, 1, 3, 1), "Fw X:3 K:19 C Y:2 Fh X Y", 2048},
      // Kernel 1x1 (FC-like), K = 33: 16 + 16 + a 1-lane chunk.
      {ConvLayer("d", 3, 1, 17, 33, 1, 1), "C K:33 X", 1 << 20},
      // K tile 12: one chunk of 12 (8 + 4 masked lanes); X split 4 + 4 around the window loops.
      {ConvLayer("h", 8, 3, 5, 24, 2, 2), "K:12 Fw C X:4 Fh Y X K", 1 << 20},
  };
  for (const T& t : cases) {
    Case c = MakeCase(t.l, 7);
    auto str = ParseBlockingString(t.str, t.l);
    ASSERT_TRUE(str.ok()) << str.status().message();
    for (KernelPath p : Paths()) EXPECT_LT(MaxErr(c, *str, t.l1, p), 1e-4) << t.l.name << " " << t.str;
  }
}

TEST(X86Conv, SmallL1PutsTheCutInsideTheString) {
  Layer l = ConvLayer("e", 6, 6, 8, 24, 3, 3);
  auto str = ParseBlockingString("K:8 X:3 C:4 Fw Fh Y:3 X C Y K", l);
  ASSERT_TRUE(str.ok()) << str.status().message();
  auto big = MakeConvPlan(l, *str, 1 << 20, MakeCase(l, 1).w);
  auto small = MakeConvPlan(l, *str, 512, MakeCase(l, 1).w);
  ASSERT_TRUE(big.ok() && small.ok());
  EXPECT_EQ(big->cut, static_cast<int>(str->size()));
  EXPECT_LT(small->cut, big->cut);
  EXPECT_GT(small->cut, 0);
  // Packed: K tile 8 -> one chunk of 8 kernels per tile, no padding: exactly Fh Fw C K floats.
  EXPECT_EQ(small->k_chunks, 1);
  EXPECT_EQ(small->packed.size(), static_cast<size_t>(3 * 3 * 8 * 24));
  Case c = MakeCase(l, 3);
  for (KernelPath p : Paths()) EXPECT_LT(MaxErr(c, *str, 512, p), 1e-4);
}

TEST(X86Conv, StringsFromTheOptimiserOnAHostLikeHierarchy) {
  HostCaches caches;
  caches.l1d = 2048;  // tiny caches so the strings block every dimension of these small layers
  caches.l2 = 16384;
  caches.l3 = 131072;
  Hierarchy h = HostHierarchy(caches);
  SearchOptions opt;
  opt.threads = 1;
  opt.time_limit_s = 5;
  const Layer layers[] = {ConvLayer("f", 13, 11, 9, 40, 3, 3), ConvLayer("g", 7, 9, 12, 30, 5, 3, 1, 2, 2)};
  for (const Layer& l : layers) {
    auto r = HeuristicSearch(l, h, opt);
    ASSERT_TRUE(r.ok()) << r.status().message();
    Case c = MakeCase(l, 11);
    for (KernelPath p : Paths()) EXPECT_LT(MaxErr(c, r->best, caches.l1d, p), 1e-4) << l.name << " " << ToString(r->best);
  }
}

TEST(X86Conv, BadInputNamesTheElement) {
  Layer l = ConvLayer("bad", 4, 4, 3, 8, 3, 3);
  auto str = ParseBlockingString("Fw Fh C X Y K", l);
  ASSERT_TRUE(str.ok());
  auto wrong_w = MakeConvPlan(l, *str, 32768, std::vector<float>(5));
  ASSERT_FALSE(wrong_w.ok());
  EXPECT_NE(wrong_w.status().message().find("Fh*Fw*C*K = 216"), std::string::npos) << wrong_w.status().message();
  Layer pool = PoolLayer("p", LayerKind::kMaxPool, 4, 4, 3, 2, 2);
  EXPECT_FALSE(MakeConvPlan(pool, *str, 32768, std::vector<float>(216)).ok());
  Layer batched = ConvLayer("n", 4, 4, 3, 8, 3, 3, 2);
  auto sb = ParseBlockingString("Fw Fh C X Y K N", batched);
  ASSERT_TRUE(sb.ok());
  auto nb = MakeConvPlan(batched, *sb, 32768, std::vector<float>(216));
  ASSERT_FALSE(nb.ok());
  EXPECT_NE(nb.status().message().find("batch"), std::string::npos);
  EXPECT_FALSE(MakeConvPlan(l, *str, 0, std::vector<float>(216)).ok());
  auto plan = MakeConvPlan(l, *str, 32768, std::vector<float>(216));
  ASSERT_TRUE(plan.ok());
  std::vector<float> out;
  Status st = RunBlockedConv(*plan, std::vector<float>(7), &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("expected 108"), std::string::npos) << st.message();
}

TEST(X86Conv, ReadsCacheSizesFromASysfsTree) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("x86conv_sysfs_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  auto level = [&](int i, const char* type, int lv, const char* size) {
    fs::create_directories(dir / ("index" + std::to_string(i)));
    std::ofstream(dir / ("index" + std::to_string(i)) / "type") << type << "\n";
    std::ofstream(dir / ("index" + std::to_string(i)) / "level") << lv << "\n";
    std::ofstream(dir / ("index" + std::to_string(i)) / "size") << size << "\n";
  };
  level(0, "Data", 1, "48K");
  level(1, "Instruction", 1, "32K");
  level(2, "Unified", 2, "2048K");
  level(3, "Unified", 3, "96M");
  HostCaches c = ReadHostCaches(dir.string());
  EXPECT_TRUE(c.from_sysfs);
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 2048 << 10);
  EXPECT_EQ(c.l3, int64_t{96} << 20);
  fs::remove_all(dir / "index3");
  EXPECT_FALSE(ReadHostCaches(dir.string()).from_sysfs);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sramplan::blocking::x86
