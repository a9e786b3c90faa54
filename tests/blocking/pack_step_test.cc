// The exact search's incremental packing (blocking/pack_step.h) equals Pack on every prefix of random
// strings: same buffers (operand, cut, level, tile, fills), free bytes, exhausted flags and pointers.
#include <gtest/gtest.h>

#include <random>

#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "blocking/pack_step.h"
#include "target/target.h"
#include "blocking/blocking_strings.h"

namespace sramplan::blocking {
namespace {

Hierarchy Shared(int64_t l0, int64_t l1, int64_t l2) {
  Hierarchy h;
  h.name = "shared";
  h.levels = {Level{"l0", l0, {true, true, true}, 0.4, 0.5, false}, Level{"l1", l1, {true, true, true}, 1.5, 1.6, false},
              Level{"l2", l2, {true, true, true}, 6.0, 6.5, false},
              Level{"dram", int64_t{1} << 40, {true, true, true}, 320.0, 320.0, true}};
  return h;
}

TEST(PackStep, EqualsPackOnEveryPrefix) {
  auto diannao = HierarchyFromTarget(*target::LoadTarget("diannao"));
  ASSERT_TRUE(diannao.ok());
  std::vector<Hierarchy> hs = {*diannao, Shared(64, 1024, 16384), Shared(24, 200, 2000)};
  std::vector<Layer> layers = {ConvLayer("conv", 12, 8, 16, 24, 3, 3), ConvLayer("s2", 8, 8, 6, 12, 3, 3, 2, 2, 2),
                               FcLayer("fc", 64, 48, 4), PoolLayer("pool", LayerKind::kMaxPool, 8, 6, 16, 3, 3, 1, 2, 2),
                               LrnLayer("lrn", 6, 4, 32, 5)};
  std::mt19937_64 rng(7);
  int checked = 0, buffers = 0;
  for (const Hierarchy& h : hs)
    for (const Layer& l : layers)
      for (int k = 0; k < 60; ++k) {
        BlockingString s = testing::RandomInterleavedString(l, rng);
        Packing prev = Pack(l, h, {}), next;
        BlockingString prefix;
        Extents inner = {1, 1, 1, 1, 1, 1, 1};
        for (const Loop& loop : s) {
          prefix.push_back(loop);
          PackStep(l, h, prefix, inner, prev, &next);
          inner[static_cast<int>(loop.dim)] = loop.size;
          Packing want = Pack(l, h, prefix);
          SCOPED_TRACE(l.name + " on " + h.name + ": " + ToString(prefix));
          ASSERT_EQ(next.free_bytes, want.free_bytes);
          for (int t = 0; t < kNumOperands; ++t) {
            EXPECT_EQ(next.exhausted[t], want.exhausted[t]);
            EXPECT_EQ(next.ptr[t], want.ptr[t]);
            ASSERT_EQ(next.chains[t].size(), want.chains[t].size());
            for (size_t i = 0; i < want.chains[t].size(); ++i) {
              const BufferUse &a = next.chains[t][i], &b = want.chains[t][i];
              EXPECT_EQ(a.operand, b.operand);
              EXPECT_EQ(a.cut, b.cut);
              EXPECT_EQ(a.level, b.level);
              EXPECT_EQ(a.elems, b.elems);
              EXPECT_EQ(a.fills, b.fills);
              EXPECT_EQ(a.backing, b.backing);
              buffers += !b.backing;
            }
          }
          prev = next;
          ++checked;
        }
      }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(buffers, 3000);  // prefixes with on-chip buffers, not only backing stores
}

}  // namespace
}  // namespace sramplan::blocking
