// Multi-core K vs XY partitioning (paper Sec. 3.3): the shared operand is read once and broadcast;
// counts computed by hand for a small layer on a one-level hierarchy.
#include <gtest/gtest.h>

#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/multicore.h"

namespace sramplan::blocking {
namespace {

Hierarchy OneLevel() {
  Hierarchy h;
  h.name = "one";
  h.levels = {Level{"sram", 1024, {true, true, true}, 1.0, 1.0, false},
              Level{"dram", int64_t{1} << 40, {true, true, true}, 320.0, 320.0, true}};
  return h;
}

// Layer X=4 Y=4 C=2 K=4, 1x1 window; string "X Y C K" (innermost first). Reuse rule: OB at cut 2
// (X*Y tile), IB at cut 3 (X*Y*C tile), no KB (kernels stream from DRAM on every MAC).
TEST(BlockingMulticore, KPartitionBroadcastsTheInputOnce) {
  Layer l = ConvLayer("t", 4, 4, 2, 4, 1, 1);
  Hierarchy h = OneLevel();
  MulticoreOptions mo;
  mo.cores = 2;
  mo.partition = Partition::kK;
  mo.broadcast_pj_per_16b = 5;
  auto sub = PartitionLayer(l, 2, Partition::kK, nullptr);
  ASSERT_TRUE(sub.ok());
  auto s = ParseBlockingString("X Y C K", *sub);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = EvaluateMulticore(l, h, *s, mo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->split, Dim::kK);
  EXPECT_EQ(r->per_core.extent(Dim::kK), 2);
  // One core: 64 MACs. sram: IB 64 MAC reads + 32 fill writes; OB 64 reads + 64 writes + 32 write-back
  // reads -> 160 reads, 96 writes = 256 pJ. DRAM: input 32, kernel 64 reads, output 32 writes -> 128 x 320.
  EXPECT_EQ(r->core.levels[0].reads, 160);
  EXPECT_EQ(r->core.levels[0].writes, 96);
  EXPECT_EQ(r->core.levels[1].reads, 96);
  EXPECT_EQ(r->core.levels[1].writes, 32);
  EXPECT_DOUBLE_EQ(r->core.memory_pj, 256 + 128 * 320);
  EXPECT_EQ(r->shared, Operand::kInput);
  EXPECT_EQ(r->broadcast_words, 32);
  EXPECT_DOUBLE_EQ(r->private_pj, 2 * 41216.0 - 32 * 320.0);  // 72192
  EXPECT_DOUBLE_EQ(r->broadcast_pj, 32 * 5.0);
  EXPECT_DOUBLE_EQ(r->mac_pj, 128);
  EXPECT_DOUBLE_EQ(r->total_pj, 72192 + 160 + 128);
  EXPECT_EQ(r->onchip_bytes, 2048);
}

TEST(BlockingMulticore, XYPartitionBroadcastsTheKernelsOnce) {
  Layer l = ConvLayer("t", 4, 4, 2, 4, 1, 1);
  Hierarchy h = OneLevel();
  MulticoreOptions mo;
  mo.cores = 2;
  mo.partition = Partition::kXY;
  mo.broadcast_pj_per_16b = 5;
  Dim d;
  auto sub = PartitionLayer(l, 2, Partition::kXY, &d);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(d, Dim::kY);
  auto s = ParseBlockingString("X Y C K", *sub);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = EvaluateMulticore(l, h, *s, mo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // One core (Y = 2): 64 MACs. sram: IB 64 + 16 fill; OB tile 8, 4 fills: 64 + 64 + 32 -> 160 reads,
  // 80 writes. DRAM: input 16, kernel 64 reads, output 32 writes.
  EXPECT_EQ(r->core.levels[0].reads, 160);
  EXPECT_EQ(r->core.levels[0].writes, 80);
  EXPECT_EQ(r->core.levels[1].reads, 80);
  EXPECT_EQ(r->core.levels[1].writes, 32);
  EXPECT_EQ(r->shared, Operand::kKernel);
  EXPECT_EQ(r->broadcast_words, 64);
  EXPECT_DOUBLE_EQ(r->private_pj, 2 * (240 + 112 * 320.0) - 64 * 320.0);  // 51680
  EXPECT_DOUBLE_EQ(r->broadcast_pj, 64 * 5.0);
  EXPECT_DOUBLE_EQ(r->total_pj, 51680 + 320 + 128);
}

TEST(BlockingMulticore, OneCoreEqualsSingleCoreAndTable3Broadcast) {
  Layer l = ConvLayer("t", 8, 8, 4, 8, 3, 3);
  Hierarchy h = OneLevel();
  auto s = ParseBlockingString("Fw Fh X Y C K", l);
  ASSERT_TRUE(s.ok());
  MulticoreOptions mo;
  auto r = EvaluateMulticore(l, h, *s, mo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->total_pj, Evaluate(l, h, *s).total_pj);
  EXPECT_DOUBLE_EQ(r->broadcast_pj, 0);
  mo.cores = 4;
  mo.partition = Partition::kXY;
  auto sub = PartitionLayer(l, 4, Partition::kXY, nullptr);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->extent(Dim::kY), 2);
  EXPECT_EQ(sub->Size(Operand::kInput), 10 * 4 * 4);  // (8+2) x (2+2) x C: halos replicated per core
  auto s4 = ParseBlockingString("Fw Fh X Y C K", *sub);
  ASSERT_TRUE(s4.ok());
  auto r4 = EvaluateMulticore(l, h, *s4, mo);
  ASSERT_TRUE(r4.ok()) << r4.status().message();
  EXPECT_DOUBLE_EQ(r4->broadcast_pj_per_word, *Table3PjPer16b(4 * 1024, 64));
}

TEST(BlockingMulticore, ErrorsNameTheDimensionAndSearchRuns) {
  Layer l = ConvLayer("odd", 6, 6, 4, 6, 3, 3);
  auto k = PartitionLayer(l, 4, Partition::kK, nullptr);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("K = 6"), std::string::npos) << k.status().message();
  auto xy = PartitionLayer(l, 4, Partition::kXY, nullptr);
  ASSERT_FALSE(xy.ok());
  EXPECT_NE(xy.status().message().find("Y = 6"), std::string::npos) << xy.status().message();
  Layer c = ConvLayer("c", 8, 8, 8, 8, 3, 3);
  Hierarchy h = OneLevel();
  SearchOptions opt;
  opt.time_limit_s = 30;
  for (Partition p : {Partition::kK, Partition::kXY}) {
    MulticoreOptions mo;
    mo.cores = 2;
    mo.partition = p;
    auto r = MulticoreSearch(c, h, mo, opt, /*exact=*/true);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->proved_optimal);
    EXPECT_EQ(r->core.macs * 2, c.Macs());
    EXPECT_GT(r->broadcast_words, 0);
  }
}

}  // namespace
}  // namespace sramplan::blocking
