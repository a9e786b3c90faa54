// modulebuf-cosma's per-region combination (driver/region_stitch.h, driver/region_combine.h): the
// boundaries of an order, region sub-graphs, a plan stitched from two methods' region plans (verified,
// executed bit-exact with the off-chip bytes as planned), never worse than the whole-network plans,
// and strictly better than module buffering on a NAS graph where COSMA has no whole-network plan.
#include <gtest/gtest.h>

#include <map>

#include "cost/hardware_model.h"
#include "driver/context.h"
#include "driver/region_combine.h"
#include "driver/region_stitch.h"
#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "fusion/module_graphs.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "target/target.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

int64_t Total(const plan::Plan& p) { return p.metrics.offchip_read_bytes + p.metrics.offchip_write_bytes; }

target::Target Exynos(int64_t capacity = 0) {
  auto t = target::LoadTarget("exynos-npu");
  EXPECT_TRUE(t.ok());
  if (capacity > 0) t->levels[t->arena_level].capacity = capacity;
  return *t;
}

StatusOr<plan::Plan> Plan(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                          const std::string& budget, double time_limit = 2) {
  PlanOptions o;
  o.budget = budget;
  o.time_limit_s = time_limit;
  return RunStrategy(g, t, strategy, o);
}

ir::Graph Int8(const std::string& path) {
  auto g = import::ImportModel(testing::SourcePath(path), {});
  EXPECT_TRUE(g.ok()) << path;
  ir::Graph out = std::move(g).value();
  ir::ApplyDtype(out, ir::DataType::kInt8);
  return out;
}

// "" when the plan runs in its arena bit-exact against the naive run with the planned off-chip bytes.
std::string Execute(const ir::Graph& g, const plan::Plan& p) { return testing::RunPlanAgainstNaive(g, p); }

std::string CombineNote(const plan::Plan& p) {
  for (const auto& n : p.notes)
    if (n.rfind("combine:", 0) == 0) return n;
  return "";
}

// The off-chip bytes the note reports for a whole-network candidate, -1 when it had no plan.
int64_t NoteBytes(const std::string& note, const std::string& method) {
  const size_t at = note.find(method + ": ");
  if (at == std::string::npos) return -1;
  const std::string rest = note.substr(at + method.size() + 2);
  if (rest.rfind("no plan", 0) == 0) return -1;
  return std::stoll(rest);
}

// mini_inception in model order: stem | b1 [s, a1 cross] c1 c2 mp p1 cat | r1 [e, c] relu [f, c] r2 [d, c] add.
TEST(RegionCombine, BoundariesOfTheModelOrder) {
  ir::Graph g = testing::LoadNativeGraph(testing::kInceptionGraph);
  const analysis::Schedule order = analysis::ModelOrder(g);
  EXPECT_EQ(BoundaryCuts(g, order, 1), (std::vector<int>{1, 7}));
  // Two crossing maps: after b1 (s and a1); after r1, relu, r2 (c and a map of equal size): the first.
  EXPECT_EQ(BoundaryCuts(g, order, 2), (std::vector<int>{1, 2, 7, 8}));
}

TEST(RegionCombine, RegionGraphKeepsNamesAndMakesCrossingMapsInputsAndOutputs) {
  ir::Graph g = testing::LoadNativeGraph(testing::kInceptionGraph);
  const analysis::Schedule order = analysis::ModelOrder(g);
  auto sub = RegionGraph(g, std::vector<ir::OpId>(order.begin() + 1, order.begin() + 7));
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  EXPECT_EQ(sub->num_ops(), 6);
  EXPECT_EQ(sub->op(ir::OpId(0)).name, "b1");
  std::map<std::string, ir::TensorKind> kind;
  for (const auto& t : sub->tensors()) kind[t.name] = t.kind;
  EXPECT_EQ(kind.at("s"), ir::TensorKind::kInput);
  EXPECT_EQ(kind.at("c"), ir::TensorKind::kOutput);
  EXPECT_EQ(kind.at("a1"), ir::TensorKind::kActivation);
  EXPECT_EQ(kind.at("wc2"), ir::TensorKind::kConstant);
  EXPECT_FALSE(kind.count("x"));
  EXPECT_FALSE(kind.count("e"));
}

// Module buffering for stem .. cat, greedy spilling for r1 .. add, stitched: c is spilled by the
// first region and reloaded by the second, the plan verifies, moves the regions' bytes together and
// runs bit-exact.
TEST(RegionCombine, StitchedPlanOfTwoMethodsVerifiesAndExecutes) {
  ir::Graph g = testing::LoadNativeGraph(testing::kInceptionGraph);
  const target::Target t = Exynos();
  const analysis::Schedule order = analysis::ModelOrder(g);
  auto a = RegionGraph(g, std::vector<ir::OpId>(order.begin(), order.begin() + 7));
  auto b = RegionGraph(g, std::vector<ir::OpId>(order.begin() + 7, order.end()));
  ASSERT_TRUE(a.ok() && b.ok());
  auto pa = Plan(*a, t, "modulebuf-reorder", "");
  auto pb = Plan(*b, t, "greedy", "");
  ASSERT_TRUE(pa.ok() && pb.ok()) << pa.status().message() << pb.status().message();
  const StrategySpec* spec = FindStrategy("modulebuf-cosma");
  ASSERT_NE(spec, nullptr);
  auto hw = cost::HardwareModel::From(t);
  ASSERT_TRUE(hw.ok());
  PlanningContext ctx(g, t, *hw, *spec, PlanOptions{});
  analysis::Schedule stitched_order;
  auto p = StitchPlans(g, t, {&*pa, &*pb}, "modulebuf-cosma", PlanOptions{}, ctx.alignment(), &stitched_order);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(FinishStitchedPlan(ctx, stitched_order, &*p).ok());
  bool spill = false, reload = false;
  for (const auto& tr : p->transfers) {
    spill = spill || (tr.tensor == "c" && tr.kind == "spill" && tr.step == 6);
    reload = reload || (tr.tensor == "c" && tr.kind == "reload" && tr.step == 7);
    EXPECT_FALSE(tr.tensor == "c" && (tr.kind == "store" || tr.kind == "load"));
  }
  EXPECT_TRUE(spill && reload);
  int dram_copies = 0;
  for (const auto& buf : p->buffers) dram_copies += buf.tensor == "c" && buf.level == "dram";
  EXPECT_EQ(dram_copies, 1);
  EXPECT_EQ(Total(*p), Total(*pa) + Total(*pb));
  const plan::VerifyResult v = plan::VerifyPlan(*p);
  EXPECT_TRUE(v.ok()) << v.Summary();
  EXPECT_EQ(Execute(g, *p), "");
}

// Never worse than the whole-network plans it competes with (the deterministic ones run again here;
// COSMA's ILP stops at a wall-clock limit, so against the value its note reports).
void ExpectNeverWorse(const ir::Graph& g, const target::Target& t, const std::string& budget) {
  auto c = Plan(g, t, "modulebuf-cosma", budget, /*time_limit=*/1);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string note = CombineNote(*c);
  SCOPED_TRACE(g.name + " at " + budget + ": " + note);
  for (const char* method : {"modulebuf-reorder", "greedy", "belady"}) {
    auto p = Plan(g, t, method, budget);
    if (p.ok()) EXPECT_LE(Total(*c), Total(*p)) << method;
  }
  const int64_t cosma = NoteBytes(note, "cosma");
  if (cosma >= 0) EXPECT_LE(Total(*c), cosma);
}

TEST(RegionCombine, NeverWorseThanEitherWholeNetworkPlan) {
  ir::Graph mini = testing::LoadNativeGraph(testing::kInceptionGraph);
  for (const char* budget : {"4KiB", "8KiB", "16KiB", ""}) ExpectNeverWorse(mini, Exynos(), budget);
  ir::Graph darts = Int8("models/nas/darts-cifar10.graph.json");
  for (const char* budget : {"256KiB", "294912"}) ExpectNeverWorse(darts, Exynos(), budget);
  ir::Graph googlenet = Int8("models/onnx/googlenet.onnx");
  ExpectNeverWorse(googlenet, Exynos(), "512KiB");
}

// DARTS (CIFAR-10) at 256 KiB: below COSMA's M_min (288 KiB), so COSMA has no whole-network plan,
// but its later cells fit; the per-region combination moves fewer bytes than module buffering and
// runs bit-exact.
TEST(RegionCombine, DartsAtQuarterMegabyteBeatsModuleBufferingAndExecutes) {
  ir::Graph g = Int8("models/nas/darts-cifar10.graph.json");
  const target::Target t = Exynos();
  auto cosma = Plan(g, t, "cosma", "256KiB");
  ASSERT_FALSE(cosma.ok());
  EXPECT_NE(cosma.status().message().find("M_min"), std::string::npos);
  auto mb = Plan(g, t, "modulebuf-reorder", "256KiB");
  auto c = Plan(g, t, "modulebuf-cosma", "256KiB");
  ASSERT_TRUE(mb.ok() && c.ok());
  EXPECT_EQ(c->schedule, "regions");
  EXPECT_LT(Total(*c), Total(*mb));
  EXPECT_LT(c->metrics.fm_dram_bytes, mb->metrics.fm_dram_bytes);
  EXPECT_EQ(c->metrics.weight_dram_bytes, mb->metrics.weight_dram_bytes);
  const std::string note = CombineNote(*c);
  EXPECT_NE(note.find("kept the per-region combination"), std::string::npos) << note;
  EXPECT_NE(note.find(" cosma ("), std::string::npos) << note;  // some region is COSMA's
  EXPECT_EQ(Execute(g, *c), "");
}

TEST(RegionCombine, AGraphWithoutBoundariesKeepsAWholeNetworkPlan) {
  ir::Graph g = testing::LoadNativeGraph(R"({
    "format": "sramplan-graph", "version": 1, "name": "one_conv", "layout": "NHWC", "dtype": "int8",
    "tensors": [{"name": "x", "shape": [1, 8, 8, 4], "kind": "input"},
                {"name": "w", "shape": [4, 1, 1, 4], "kind": "constant"}, {"name": "y", "kind": "output"}],
    "ops": [{"name": "conv", "type": "Conv", "inputs": ["x", "w"], "outputs": ["y"],
             "attrs": {"kernel_shape": [1, 1]}}]})");
  auto c = Plan(g, Exynos(), "modulebuf-cosma", "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NE(CombineNote(*c).find("no boundary"), std::string::npos) << CombineNote(*c);
  EXPECT_NE(c->schedule, "regions");
}

}  // namespace
}  // namespace sramplan::driver
