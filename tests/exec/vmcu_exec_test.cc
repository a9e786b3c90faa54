// vmcu plans executed: steps whose output overlaps its dying input ("segment-overlap") and fused
// inverted bottlenecks run the segment-aware kernels (runtime/src/sramplan_rt_seg_s8.c) on the
// arena as a circular pool; the result must equal the naive int8 run (ops one by one, every tensor
// its own buffer) bit for bit. Mutations: a declared shift one segment too small (the verifier
// bypassed) corrupts the result or is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_graphs.h"
#include "test_util.h"

extern "C" {
#include "sramplan_rt_seg.h"
}

namespace sramplan::exec {
namespace {

ir::Graph LoadBlock(const std::string& name) {
  auto g = import::ImportModel(testing::SourcePath("models/mcunet_blocks/" + name + ".graph.json"), {});
  EXPECT_TRUE(g.ok()) << name << ": " << g.status().message();
  ir::Graph out = std::move(g).value();
  ir::ApplyDtype(out, ir::DataType::kInt8);
  return out;
}

plan::Plan VmcuPlan(const ir::Graph& g) {
  auto t = target::LoadTarget("stm32f411re");
  EXPECT_TRUE(t.ok());
  driver::PlanOptions o;
  o.dtype_name = "int8";
  auto p = driver::RunStrategy(g, *t, "vmcu", o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

analysis::Schedule OrderOf(const ir::Graph& g, const plan::Plan& p) { return testing::PlanOrder(g, p); }

struct Counts {
  int overlaps = 0;  // buffers declaring a segment-overlap
  int fused = 0;     // multi-op steps
};

Counts CountSegmentSteps(const plan::Plan& p) {
  Counts c;
  for (const auto& b : p.buffers)
    for (const auto& o : b.overlaps) c.overlaps += o.reason == "segment-overlap";
  for (const auto& s : p.steps) c.fused += s.ops.size() > 1;
  return c;
}

// "" when the arena run equals the naive run bit for bit (and the off-chip counts the plan's).
std::string ArenaVsNaive(const ir::Graph& g, const plan::Plan& p, const QuantizedModel& q,
                         const ExecResult& naive) {
  auto arena = RunArena(g, p, q.data, &q);
  if (!arena.ok()) return "arena: " + arena.status().message();
  return Compare(g, naive, *arena, p);
}

void ExpectBitExact(const std::string& name) {
  SCOPED_TRACE(name);
  const auto t0 = std::chrono::steady_clock::now();
  ir::Graph g = LoadBlock(name);
  const plan::Plan p = VmcuPlan(g);
  const plan::VerifyResult v = plan::VerifyPlan(p);
  ASSERT_TRUE(v.ok()) << v.Summary();
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_TRUE(q.ok()) << q.status().message();
  auto naive = RunNaive(g, OrderOf(g, p), q->data, &*q);
  ASSERT_TRUE(naive.ok()) << naive.status().message();
  const std::string diff = ArenaVsNaive(g, p, *q, *naive);
  EXPECT_EQ(diff, "");
  const Counts c = CountSegmentSteps(p);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-24s %3zu steps, %2d segment overlaps, %2d fused groups, arena %7lld B: %s "
              "(%.0f ms)\n",
              name.c_str(), p.steps.size(), c.overlaps, c.fused,
              static_cast<long long>(p.metrics.arena_bytes), diff.empty() ? "bit-exact" : "DIFFERS", ms);
}

TEST(VmcuExec, SBlocksBitExact) {
  for (const char* b : {"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"}) ExpectBitExact(b);
}

TEST(VmcuExec, BBlocksBitExact) {
  for (int i = 1; i <= 17; ++i) ExpectBitExact("B" + std::to_string(i));
}

TEST(VmcuExec, WholeNetworkBitExact) { ExpectBitExact("mcunet-320kb-imagenet"); }

// A chain laid out modulo a circular pool: tensors (the graph input among them) run past the end of
// the arena and continue at byte 0; the segment kernels address them modulo the pool, the executor
// writes the input in two pieces, and the result equals the naive run. A plain kernel (the plan
// rewritten so that a wrapped tensor is read by a non-segment step) is refused, never run out of
// bounds.
TEST(VmcuExec, CircularPoolChainBitExact) {
  auto gi = import::ImportNativeJson(testing::ConvChainGraph(8), "conv_chain", {});
  ASSERT_TRUE(gi.ok()) << gi.status().message();
  ir::Graph g = std::move(gi).value();
  ir::ApplyDtype(g, ir::DataType::kInt8);
  const plan::Plan p = VmcuPlan(g);
  ASSERT_TRUE(plan::VerifyPlan(p).ok()) << plan::VerifyPlan(p).Summary();
  ASSERT_EQ(p.pools.size(), 1u);
  int wrapped = 0;
  for (const auto& b : p.buffers) wrapped += plan::Wraps(p, b);
  ASSERT_GT(wrapped, 0);
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_TRUE(q.ok()) << q.status().message();
  auto naive = RunNaive(g, OrderOf(g, p), q->data, &*q);
  ASSERT_TRUE(naive.ok()) << naive.status().message();
  EXPECT_EQ(ArenaVsNaive(g, p, *q, *naive), "");
  // Drop the segment overlap of a step whose input wraps and make the step a plain Conv.
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const plan::Buffer& in = p.buffers[i];
    if (!plan::Wraps(p, in)) continue;
    for (size_t j = 0; j < p.buffers.size(); ++j) {
      const plan::Buffer& out = p.buffers[j];
      if (out.overlaps.empty() || out.overlaps[0].tensor != in.tensor) continue;
      plan::Plan bad = p;
      bad.buffers[j].overlaps.clear();
      plan::Step& st = bad.steps[out.first_step];
      st.kind = plan::StepKind::kOp;
      st.segment_bytes = 0;
      EXPECT_FALSE(plan::VerifyPlan(bad).ok());
      const std::string diff = ArenaVsNaive(g, bad, *q, *naive);
      EXPECT_NE(diff.find("wraps around the circular pool"), std::string::npos) << diff;
      return;
    }
  }
  ADD_FAILURE() << "no wrapped tensor is the input of a segment step";
}

// The segment kernel a step runs, as the shift simulator describes it (shapes from the plan).
bool StepKernelDesc(const ir::Graph& g, const plan::Plan& p, int step, sp_seg_layer_desc_t* d) {
  const auto& ops = p.steps[step].ops;
  auto shape = [&](const std::string& t) { return g.tensor(*g.FindTensor(t)).shape; };
  auto attr = [](const plan::StepOp& op, const char* k, std::vector<int64_t> def) {
    auto it = op.attrs.find(k);
    return it == op.attrs.end() ? def : it->second;
  };
  *d = sp_seg_layer_desc_t{};
  if (ops.size() > 1) {
    const auto x = shape(ops[0].inputs[0]), mid = shape(ops[0].outputs[0]), y = shape(ops[2].outputs[0]);
    const auto k = attr(ops[1], "kernel_shape", {1, 1}), st = attr(ops[1], "strides", {1, 1});
    const auto pd = attr(ops[1], "pads", {0, 0, 0, 0});
    d->kind = SP_SEG_KIND_BOTTLENECK;
    d->bottleneck = sp_seg_bottleneck_shape_t{
        static_cast<int32_t>(x[1]),   static_cast<int32_t>(x[2]),   static_cast<int32_t>(x[3]),
        static_cast<int32_t>(mid[3]), static_cast<int32_t>(y[3]),   static_cast<int32_t>(k[0]),
        static_cast<int32_t>(k[1]),   static_cast<int32_t>(st[0]),  static_cast<int32_t>(st[1]),
        static_cast<int32_t>(pd[0]),  static_cast<int32_t>(pd[1]),  static_cast<int32_t>(pd[2]),
        static_cast<int32_t>(pd[3]),  1,                            ops.size() == 4 ? 1 : 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0};
    // The workspace variant the plan chose.
    d->bottleneck.row_cache = attr(ops[0], "row_cache", {0})[0] != 0 ? 1 : 0;
    // The expansion's geometry (a stem fused as the expansion is a 3x3 stride-2 Conv).
    const auto ek = attr(ops[0], "kernel_shape", {1, 1}), es = attr(ops[0], "strides", {1, 1});
    const auto ep = attr(ops[0], "pads", {0, 0, 0, 0});
    d->bottleneck.e_r = static_cast<int32_t>(ek[0]);
    d->bottleneck.e_s = static_cast<int32_t>(ek[1]);
    d->bottleneck.e_stride_h = static_cast<int32_t>(es[0]);
    d->bottleneck.e_stride_w = static_cast<int32_t>(es[1]);
    d->bottleneck.e_pad_top = static_cast<int32_t>(ep[0]);
    d->bottleneck.e_pad_left = static_cast<int32_t>(ep[1]);
    d->bottleneck.e_pad_bottom = static_cast<int32_t>(ep[2]);
    d->bottleneck.e_pad_right = static_cast<int32_t>(ep[3]);
    return true;
  }
  const plan::StepOp& op = ops[0];
  const auto x = shape(op.inputs[0]), y = shape(op.outputs[0]);
  if (op.type == "Gemm" || op.type == "MatMul") {
    d->kind = SP_SEG_KIND_FC;
    d->fc = sp_seg_fc_shape_t{static_cast<int32_t>(x[0]), static_cast<int32_t>(x[1]),
                              static_cast<int32_t>(y[1]),
                              static_cast<int32_t>(attr(op, "segment_bytes", {0})[0])};
    return true;
  }
  if (op.type != "Conv" && op.type != "DepthwiseConv") return false;
  const auto k = attr(op, "kernel_shape", {1, 1}), st = attr(op, "strides", {1, 1});
  const auto pd = attr(op, "pads", {0, 0, 0, 0});
  d->kind = op.type == "DepthwiseConv" ? SP_SEG_KIND_DEPTHWISE : SP_SEG_KIND_CONV;
  d->conv = sp_seg_conv_shape_t{
      static_cast<int32_t>(x[1]),  static_cast<int32_t>(x[2]),  static_cast<int32_t>(x[3]),
      static_cast<int32_t>(y[3]),  static_cast<int32_t>(k[0]),  static_cast<int32_t>(k[1]),
      static_cast<int32_t>(st[0]), static_cast<int32_t>(st[1]), static_cast<int32_t>(pd[0]),
      static_cast<int32_t>(pd[1]), static_cast<int32_t>(pd[2]), static_cast<int32_t>(pd[3]),
      1,                           1};
  return true;
}

// Each declared segment overlap in turn, the verifier bypassed:
//  (a) the output one segment closer to its input (the declared shift one segment too small): the
//      verifier rejects it; the run differs or is refused whenever the kernel's own minimal shift
//      (sp_seg_sim_min_shift) is larger than the mutated distance. Single-layer kernels follow the
//      contract exactly, but the plan's shift is rounded up to whole segments and to the target's
//      alignment; the fused bottleneck also reads earlier than its contract (column cache). So
//      some steps are still safe one segment closer (printed).
//  (b) the output at the kernel's minimal shift minus one byte: the run differs or is refused.
TEST(VmcuExec, ShiftTooSmallIsCaught) {
  int seg_mutations = 0, seg_unsafe = 0, seg_caught = 0, byte_mutations = 0, byte_caught = 0;
  for (const char* name : {"S1", "S5", "S7", "S8", "B1", "B3", "B9", "B16", "mcunet-320kb-imagenet"}) {
    SCOPED_TRACE(name);
    ir::Graph g = LoadBlock(name);
    const plan::Plan p = VmcuPlan(g);
    auto q = QuantizeModel(g, kDefaultSeed, nullptr);
    ASSERT_TRUE(q.ok()) << q.status().message();
    auto naive = RunNaive(g, OrderOf(g, p), q->data, &*q);
    ASSERT_TRUE(naive.ok()) << naive.status().message();
    ASSERT_EQ(ArenaVsNaive(g, p, *q, *naive), "");
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      if (p.buffers[b].overlaps.empty() || p.buffers[b].overlaps[0].reason != "segment-overlap")
        continue;
      const plan::Buffer& out0 = p.buffers[b];
      const int s = out0.first_step;
      const plan::Buffer* in = nullptr;
      for (const auto& c : p.buffers)
        if (c.tensor == out0.overlaps[0].tensor && c.first_step <= s && s <= c.last_step) in = &c;
      ASSERT_NE(in, nullptr);
      sp_seg_layer_desc_t desc;
      ASSERT_TRUE(StepKernelDesc(g, p, s, &desc)) << "step " << s;
      sp_seg_shift_t sim;
      ASSERT_EQ(sp_seg_sim_min_shift(&desc, &sim), SP_OK) << "step " << s;
      const int64_t declared = in->offset - out0.offset;
      ASSERT_GE(declared, sim.shift_bytes) << "step " << s << ": the plan's shift is unsafe for the kernel";
      int64_t seg = 1;
      for (const auto& so : p.steps[s].ops) {
        auto it = so.attrs.find("segment_bytes");
        if (it != so.attrs.end() && !it->second.empty()) seg = it->second[0];
      }
      // The verifier checks the documented contract, which needs at least what the kernel needs:
      // every distance below the kernel's minimal shift must be rejected. (Between the two, and
      // above the contract's minimum where the plan rounded the shift up to the target's
      // alignment, a distance may be legitimately accepted.)
      auto run_at = [&](int64_t distance) {
        plan::Plan m = p;
        plan::Buffer& out = m.buffers[b];
        out.offset = in->offset - distance;
        out.overlaps[0].shift = -distance;
        for (auto& l : m.levels)
          if (l.name == out.level) l.used_bytes = std::max(l.used_bytes, out.offset + out.bytes);
        if (distance < sim.shift_bytes)
          EXPECT_FALSE(plan::VerifyPlan(m).ok()) << "step " << s << ": the verifier accepts shift " << distance;
        return !ArenaVsNaive(g, m, *q, *naive).empty();
      };
      ++seg_mutations;
      const bool caught = run_at(declared - seg);
      if (declared - seg < sim.shift_bytes) {
        ++seg_unsafe;
        seg_caught += caught;
        EXPECT_TRUE(caught) << name << " step " << s << ": one segment too small went unnoticed";
      } else {
        // Slack: the fused kernel's column cache, or segment / alignment rounding of the shift.
        std::printf("  %s step %d (%s, %zu ops): declared %lld B, segment %lld B, kernel needs %d B\n", name, s,
                    p.steps[s].ops[0].name.c_str(), p.steps[s].ops.size(), static_cast<long long>(declared),
                    static_cast<long long>(seg), sim.shift_bytes);
      }
      if (sim.shift_bytes > 0) {
        ++byte_mutations;
        byte_caught += run_at(sim.shift_bytes - 1);
      }
    }
  }
  std::printf("one segment too small: %d mutations, %d below the kernel's minimal shift, %d of those "
              "caught; minimal shift - 1 byte: %d of %d caught\n",
              seg_mutations, seg_unsafe, seg_caught, byte_caught, byte_mutations);
  EXPECT_GT(seg_unsafe, 0);
  EXPECT_EQ(seg_caught, seg_unsafe);
  EXPECT_GT(byte_mutations, 0);
  // A one-byte clobber can vanish in requantisation (see seg_kernels_test); most must show.
  EXPECT_GE(byte_caught * 10, byte_mutations * 8);
}

// The CLI end to end: `sramplan verify MODEL --strategy vmcu` (int8 by default).
TEST(VmcuExec, CliVerify) {
  for (const char* b : {"B3", "S7", "B1"}) {
    std::string out, err;
    const int rc = testing::RunCli("verify '" + testing::SourcePath(std::string("models/mcunet_blocks/") + b +
                                                                    ".graph.json") +
                                       "' --target stm32f411re --strategy vmcu",
                                   &out, &err);
    EXPECT_EQ(rc, 0) << b << "\n" << out << err;
    EXPECT_NE(out.find("verify vmcu: OK"), std::string::npos) << b << "\n" << out << err;
  }
  std::string out, err;
  const int rc = testing::RunCli(
      "verify '" + testing::SourcePath("models/mcunet_blocks/S1.graph.json") +
          "' --target stm32f411re --strategy vmcu --dtype float32",
      &out, &err);
  EXPECT_EQ(rc, 1) << out << err;
  EXPECT_NE(err.find("vmcu plans run in int8"), std::string::npos) << err;
}

TEST(VmcuExec, Float32PlansAreRefused) {
  ir::Graph g = LoadBlock("S1");
  ir::ApplyDtype(g, ir::DataType::kFloat32);
  auto t = target::LoadTarget("stm32f411re");
  ASSERT_TRUE(t.ok());
  driver::PlanOptions o;
  o.dtype_name = "float32";
  auto p = driver::RunStrategy(g, *t, "vmcu", o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  if (CountSegmentSteps(*p).overlaps + CountSegmentSteps(*p).fused == 0)
    GTEST_SKIP() << "no segment step in the float32 plan";
  auto data = MakeModelData(g, kDefaultSeed);
  ASSERT_TRUE(data.ok());
  auto r = RunArena(g, *p, *data, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("int8"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace sramplan::exec
