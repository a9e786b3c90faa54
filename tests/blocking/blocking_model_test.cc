// The blocking model: Table 2's buffers and refetch rates, the packing, energy, and the execution
// check (the interpreter's counted accesses equal the model's, its output the unblocked conv's).
#include <gtest/gtest.h>

#include <random>

#include "blocking/hierarchy.h"
#include "blocking/interpreter.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "blocking/schedules.h"
#include "target/target.h"

namespace sramplan::blocking {
namespace {

Hierarchy ThreeLevel(int64_t l0, int64_t l1) {
  Hierarchy h;
  h.name = "test";
  Level a{"rf", l0, {true, true, true}, 0.5, 0.5, false};
  Level b{"sram", l1, {true, true, true}, 3.0, 3.0, false};
  Level c{"dram", int64_t{1} << 40, {true, true, true}, 320.0, 320.0, true};
  h.levels = {a, b, c};
  return h;
}

TEST(BlockingModel, ParsesAndValidatesStrings) {
  Layer l = ConvLayer("c", 8, 8, 4, 6, 3, 3);
  auto s = ParseBlockingString("Fw Fh X:4 C:2 K:3 Y X C K", l);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(ToString(*s), "Fw:3 Fh:3 X:4 C:2 K:3 Y:8 X:8 C:4 K:6");
  EXPECT_EQ(Trips(*s), (std::vector<int64_t>{3, 3, 4, 2, 3, 8, 2, 2, 2}));
  auto bad = ParseBlockingString("Fw Fh X:3 Y C K", l);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("divide"), std::string::npos) << bad.status().message();
  auto missing = ParseBlockingString("Fw Fh X Y C", l);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("K = 6"), std::string::npos) << missing.status().message();
  EXPECT_FALSE(ParseBlockingString("Q:2", l).ok());
}

// Table 2: a K loop implies an input buffer, a C loop an output buffer, an X or Y loop a kernel
// buffer, with the sizes of the tiles inside them and the refetch rates the paper gives.
TEST(BlockingModel, Table2BuffersAndRefetchRates) {
  Layer l = ConvLayer("c", 8, 8, 4, 6, 3, 3);
  auto s = *ParseBlockingString("Fw Fh X:4 Y:4 C:2 K:3 X Y C K", l);
  // cut 0..: Fw Fh X4 Y4 C2 K3 X8 Y8 C4 K6
  EXPECT_EQ(ImpliedCuts(s, Operand::kKernel), (std::vector<int>{2, 6}));  // X4 after Fh; X8 after K3
  EXPECT_EQ(ImpliedCuts(s, Operand::kOutput), (std::vector<int>{4, 8}));  // C2 after Y4; C4 after Y8
  EXPECT_EQ(ImpliedCuts(s, Operand::kInput), (std::vector<int>{1, 2, 5, 9}));  // Fw, Fh windows; K3; K6
  std::vector<Extents> b = CutBlocks(s);
  // KB at X4: C_{-1} K_{-1} Fh Fw = 9 words; refetch X4Y4.. from its fills.
  EXPECT_EQ(l.Footprint(Operand::kKernel, b[2]), 9);
  // IB at K3: (Y+Fh-1)(X+Fw-1)C = 6*6*2.
  EXPECT_EQ(l.Footprint(Operand::kInput, b[5]), 72);
  // OB at C2: X Y K = 4*4*1.
  EXPECT_EQ(l.Footprint(Operand::kOutput, b[4]), 16);
  std::vector<int64_t> trips = Trips(s);
  // IB at K3 is refilled for every (X8, Y8, C4, K6) block step: 2*2*2*2 times; the paper's refetch
  // rate K_i (Y+Fh-1)(X+Fw-1) / (K_{i-1} Y X) = 3*36/16 of the level above.
  EXPECT_EQ(Fills(s, trips, 5, Operand::kInput), 16);
  // OB at C2: loaded once per C2 run: everything outside C2 = K3 X Y C K trips = 3*2*2*2*2.
  EXPECT_EQ(Fills(s, trips, 4, Operand::kOutput), 3 * 2 * 2 * 2 * 2);
  // KB at X8 (cut 6): C4 and K6 outside it -> 4 fills.
  EXPECT_EQ(Fills(s, trips, 6, Operand::kKernel), 4);
}

TEST(BlockingModel, PackingFollowsCapacitiesAndMergesSameLevelBuffers) {
  Layer l = ConvLayer("c", 8, 8, 4, 6, 3, 3);
  auto s = *ParseBlockingString("Fw Fh X:4 Y:4 C:2 K:3 X Y C K", l);
  Evaluation big = Evaluate(l, ThreeLevel(1 << 20, 1 << 30), s);
  // Everything fits the first level: each operand keeps only its outermost buffer there.
  int in_rf = 0;
  for (const BufferUse& u : big.buffers)
    if (!u.backing) {
      EXPECT_EQ(u.level, 0);
      ++in_rf;
    }
  EXPECT_EQ(in_rf, 3);
  Evaluation tiny = Evaluate(l, ThreeLevel(64, 1 << 30), s);
  EXPECT_TRUE(tiny.fits);
  for (const BufferUse& u : tiny.buffers)
    if (!u.backing && u.level == 0) {
      EXPECT_LE(u.elems * 2, 64);
    }
  EXPECT_LT(big.total_pj, Evaluate(l, ThreeLevel(2, 4), s).total_pj);
  // MAC energy is 1 pJ per MAC by default.
  EXPECT_DOUBLE_EQ(big.mac_pj, static_cast<double>(l.Macs()));
}

TEST(BlockingModel, EnergyIsAccessesTimesPerAccessEnergy) {
  Layer l = ConvLayer("c", 4, 4, 2, 2, 3, 3);
  Hierarchy h = ThreeLevel(256, 4096);
  auto s = *ParseBlockingString("Fw Fh X:2 K Y C X", l);
  Evaluation ev = Evaluate(l, h, s);
  double sum = 0;
  for (size_t i = 0; i < h.levels.size(); ++i) {
    EXPECT_DOUBLE_EQ(ev.levels[i].energy_pj,
                     ev.levels[i].reads * h.levels[i].read_pj + ev.levels[i].writes * h.levels[i].write_pj);
    sum += ev.levels[i].energy_pj;
  }
  EXPECT_DOUBLE_EQ(ev.memory_pj, sum);
  EXPECT_DOUBLE_EQ(ev.total_pj, sum + ev.mac_pj);
  // The backing store supplies every input and kernel word at least once and receives every output.
  int64_t dram_reads = ev.levels[2].reads, dram_writes = ev.levels[2].writes;
  EXPECT_GE(dram_reads, l.Size(Operand::kInput) + l.Size(Operand::kKernel));
  EXPECT_GE(dram_writes, l.Size(Operand::kOutput));
}

std::vector<int16_t> RandomData(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int16_t> v(n);
  for (auto& x : v) x = static_cast<int16_t>(static_cast<int>(rng() % 15) - 7);
  return v;
}

// A random valid string of `l` (each dimension split into up to three loops, random order).
BlockingString RandomString(const Layer& l, std::mt19937_64& rng) {
  std::vector<Loop> loops;
  for (Dim d : kAllDims) {
    int64_t e = l.extent(d);
    if (e == 1) continue;
    std::vector<int64_t> dv = Divisors(e);
    std::vector<int64_t> sizes;
    int64_t cur = 1;
    for (int k = 0; k < 2; ++k) {
      std::vector<int64_t> opts;
      for (int64_t x : dv)
        if (x > cur && x < e && x % cur == 0) opts.push_back(x);
      if (opts.empty() || rng() % 2) break;
      cur = opts[rng() % opts.size()];
      sizes.push_back(cur);
    }
    sizes.push_back(e);
    for (int64_t s : sizes) loops.push_back({d, s});
  }
  // Random interleaving that keeps each dimension's loops in order.
  BlockingString out;
  std::vector<std::vector<Loop>> per(kNumDims);
  for (const Loop& lp : loops) per[static_cast<int>(lp.dim)].push_back(lp);
  std::vector<size_t> at(kNumDims, 0);
  while (out.size() < loops.size()) {
    int d = static_cast<int>(rng() % kNumDims);
    if (at[d] < per[d].size()) out.push_back(per[d][at[d]++]);
  }
  return out;
}

void ExpectRunMatchesModel(const Layer& l, const Hierarchy& h, const BlockingString& s) {
  SCOPED_TRACE(l.name + " on " + h.name + ": " + ToString(s));
  ASSERT_TRUE(ValidateString(l, s).ok()) << ValidateString(l, s).message();
  auto in = RandomData(l.Size(Operand::kInput), 1), w = RandomData(l.Size(Operand::kKernel), 2);
  auto run = RunBlocked(l, h, s, in, w);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->output, RunNaive(l, in, w));
  Evaluation ev = Evaluate(l, h, s);
  ASSERT_EQ(run->buffers.size(), ev.buffers.size());
  for (size_t i = 0; i < ev.buffers.size(); ++i) {
    const BufferUse &m = ev.buffers[i], &r = run->buffers[i];
    SCOPED_TRACE(std::string(BufferName(m.operand)) + " cut " + std::to_string(m.cut));
    EXPECT_EQ(r.fills, m.fills);
    EXPECT_EQ(r.reads, m.reads);
    EXPECT_EQ(r.writes, m.writes);
  }
}

TEST(BlockingInterpreter, RandomStringsMatchNaiveAndModelCounts) {
  std::vector<Layer> layers = {ConvLayer("conv", 6, 4, 4, 6, 3, 3), ConvLayer("conv-n2", 4, 4, 2, 4, 2, 3, 2),
                               ConvLayer("conv-s2", 4, 2, 2, 4, 3, 3, 1, 2, 2), FcLayer("fc", 12, 8, 4),
                               PoolLayer("maxpool-s2", LayerKind::kMaxPool, 4, 2, 6, 3, 3, 1, 2, 2),
                               PoolLayer("avgpool-n2", LayerKind::kAvgPool, 2, 4, 4, 2, 2, 2, 2, 2),
                               LrnLayer("lrn", 4, 2, 6, 3), LrnLayer("lrn-n2", 2, 2, 8, 5, 2)};
  std::vector<Hierarchy> hs = {ThreeLevel(96, 1024), ThreeLevel(1 << 20, 1 << 30), ThreeLevel(8, 64)};
  auto diannao = target::LoadTarget("diannao");
  ASSERT_TRUE(diannao.ok());
  auto dh = HierarchyFromTarget(*diannao);
  ASSERT_TRUE(dh.ok()) << dh.status().message();
  dh->levels[0].capacity_bytes = 64;  // small enough that these layers spill to the other levels
  dh->levels[1].capacity_bytes = 128;
  dh->levels[2].capacity_bytes = 64;
  hs.push_back(*dh);
  std::mt19937_64 rng(7);
  for (const Layer& l : layers)
    for (const Hierarchy& h : hs)
      for (int k = 0; k < 12; ++k) ExpectRunMatchesModel(l, h, RandomString(l, rng));
}

TEST(BlockingInterpreter, OptimisedAndDefaultStringsRunExactly) {
  Layer l = ConvLayer("conv", 8, 8, 8, 8, 3, 3);
  Hierarchy h = ThreeLevel(256, 2048);
  SearchOptions opt;
  opt.time_limit_s = 60;
  auto ex = ExactSearch(l, h, opt);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ExpectRunMatchesModel(l, h, ex->best);
  ExpectRunMatchesModel(l, h, DianNaoDefault(l, 256, 2));
}

// Pooling and LRN: the kernel has no data and no buffer; a K loop indexes the input (no input buffer
// at its start); LRN's channel window C gives the input a buffer as Fw does for conv.
TEST(BlockingModel, PoolingAndLrnBuffersAndCounts) {
  Layer p = PoolLayer("pool", LayerKind::kMaxPool, 4, 4, 8, 3, 3, 1, 2, 2);
  ASSERT_TRUE(ValidateLayer(p).ok());
  EXPECT_EQ(p.Size(Operand::kInput), 8 * 9 * 9);
  EXPECT_EQ(p.Size(Operand::kKernel), 0);
  EXPECT_EQ(p.Size(Operand::kOutput), 8 * 4 * 4);
  auto s = ParseBlockingString("Fw Fh X:2 K:2 Y X K", p);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(ImpliedCuts(p, *s, Operand::kKernel), std::vector<int>{});
  EXPECT_EQ(ImpliedCuts(p, *s, Operand::kInput), (std::vector<int>{1, 2}));  // windows only: K indexes the input
  EXPECT_EQ(ImpliedCuts(p, *s, Operand::kOutput), std::vector<int>{});  // no window loop after an X/Y/K loop
  Hierarchy h = ThreeLevel(1 << 10, 1 << 16);
  Evaluation ev = Evaluate(p, h, *s);
  EXPECT_EQ(ev.operand_pj[static_cast<int>(Operand::kKernel)], 0);
  int64_t kernel_words = 0;
  for (const BufferUse& b : ev.buffers)
    if (b.operand == Operand::kKernel) kernel_words += b.elems + b.reads + b.writes;
  EXPECT_EQ(kernel_words, 0);
  EXPECT_EQ(ev.macs, 4 * 4 * 8 * 9);

  Layer lrn = LrnLayer("lrn", 2, 2, 8, 5);
  ASSERT_TRUE(ValidateLayer(lrn).ok());
  EXPECT_EQ(lrn.Size(Operand::kInput), 12 * 2 * 2);  // K + C - 1 channels
  auto t = ParseBlockingString("C K:4 X Y K", lrn);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(ImpliedCuts(lrn, *t, Operand::kInput), (std::vector<int>{1}));  // after the channel window
  EXPECT_EQ(lrn.Footprint(Operand::kInput, CutBlocks(*t)[2]), 8);          // 4 + 5 - 1 channels
  ExpectRunMatchesModel(lrn, h, *t);
  ExpectRunMatchesModel(p, ThreeLevel(64, 512), *s);

  Layer bad = PoolLayer("bad", LayerKind::kAvgPool, 4, 4, 8, 3, 3);
  bad.extent(Dim::kC) = 2;
  EXPECT_NE(ValidateLayer(bad).message().find("leave C = 1"), std::string::npos) << ValidateLayer(bad).message();
  Layer bad2 = LrnLayer("bad2", 4, 4, 8, 5);
  bad2.extent(Dim::kFw) = 3;
  EXPECT_NE(ValidateLayer(bad2).message().find("Fw = Fh = 1"), std::string::npos) << ValidateLayer(bad2).message();
}

// The naive nests compute what pooling and LRN compute.
TEST(BlockingInterpreter, NaivePoolingAndLrnValues) {
  Layer p = PoolLayer("p", LayerKind::kMaxPool, 2, 1, 1, 2, 1, 1, 2, 1);
  std::vector<int16_t> in = {3, -5, -2, 7};  // one row of 4: windows {3,-5}, {-2,7}
  EXPECT_EQ(RunNaive(p, in, {}), (std::vector<int32_t>{3, 7}));
  p.kind = LayerKind::kAvgPool;
  EXPECT_EQ(RunNaive(p, in, {}), (std::vector<int32_t>{-2, 5}));
  Layer lrn = LrnLayer("l", 1, 1, 2, 3);  // channels 0..3: outputs sum squares of 0..2 and 1..3
  std::vector<int16_t> ch = {1, 2, 3, 4};
  EXPECT_EQ(RunNaive(lrn, ch, {}), (std::vector<int32_t>{14, 29}));
}

TEST(BlockingHierarchy, Table3AndErrors) {
  EXPECT_DOUBLE_EQ(*Table3PjPer16b(2048, 64), 1.54);
  EXPECT_DOUBLE_EQ(*Table3PjPer16b(1024 * 1024, 512), 25.22);
  EXPECT_DOUBLE_EQ(*Table3PjPer16b(int64_t{32} << 20, 64), 320.0);
  double mid = *Table3PjPer16b(3 * 1024, 128);
  EXPECT_GT(mid, 1.37);
  EXPECT_LT(mid, 1.68);
  auto w = Table3PjPer16b(2048, 96);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("width_bits = 96"), std::string::npos);
  // A blocking hierarchy file: a level without energy, an unknown width, a tiny lowest level.
  auto no_energy = ParseHierarchyJson(R"({"blocking_levels": [{"name": "rf", "capacity": 64},
      {"name": "dram", "capacity": "dram"}]})", "h.json");
  ASSERT_FALSE(no_energy.ok());
  EXPECT_NE(no_energy.status().message().find("'rf' has no energy"), std::string::npos) << no_energy.status().message();
  auto width = ParseHierarchyJson(R"({"blocking_levels": [{"name": "rf", "capacity": 64, "width_bits": 48},
      {"name": "dram", "capacity": "dram"}]})", "h.json");
  ASSERT_FALSE(width.ok());
  EXPECT_NE(width.status().message().find("blocking_levels[0].width_bits"), std::string::npos) << width.status().message();
  auto tiny = ParseHierarchyJson(R"({"blocking_levels": [{"name": "rf", "capacity": 4, "pj_per_16b": 0.1},
      {"name": "dram", "capacity": "dram"}]})", "h.json");
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.status().message().find("one MAC's operands"), std::string::npos) << tiny.status().message();
  auto good = ParseHierarchyJson(R"({"word_bits": 16, "blocking_levels": [
      {"name": "rf", "capacity": 512, "pj_per_16b": 0.3},
      {"name": "sram", "capacity": "64KiB", "width_bits": 256, "holds": ["input", "kernel", "output"]},
      {"name": "dram", "capacity": "dram"}]})", "h.json");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_DOUBLE_EQ(good->levels[1].read_pj, 5.79);
  EXPECT_TRUE(good->levels[2].off_chip);
  Layer zero = ConvLayer("z", 0, 4, 4, 4, 3, 3);
  auto bad = ValidateLayer(zero);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("dimension X = 0"), std::string::npos);
}

TEST(BlockingHierarchy, DianNaoPresetSplitsBuffers) {
  auto t = target::LoadTarget("diannao");
  ASSERT_TRUE(t.ok());
  auto h = HierarchyFromTarget(*t);
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->levels.size(), 4u);
  EXPECT_TRUE(h->levels[0].Holds(Operand::kInput));
  EXPECT_FALSE(h->levels[0].Holds(Operand::kOutput));
  EXPECT_TRUE(h->levels[1].Holds(Operand::kKernel));
  EXPECT_FALSE(h->levels[1].Holds(Operand::kInput));
  EXPECT_TRUE(h->levels[2].Holds(Operand::kOutput));
  EXPECT_EQ(h->Backing(Operand::kInput), 3);
  // 2 KB SRAM at 64-bit words: Table 3's 1.54 pJ per 16-bit word.
  EXPECT_NEAR(h->levels[0].read_pj, 1.54, 1e-9);
  EXPECT_NEAR(h->levels[3].read_pj, 320.0, 1e-9);
}

}  // namespace
}  // namespace sramplan::blocking
