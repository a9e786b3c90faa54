// The tile model (fusion/optimus_model) counts what the tile-by-tile executor holds: in every group
// of the baselines' plans whose ISOA outputs no operator of the group reads, the executor's windows,
// resident parameters and streamed sums at the plan's strips fit the group's buffer_bytes, so it
// runs the plan's strips (no note; the DRAM bytes then are the plan's, which verify checks). ResNet-18 has 1x1 stride-2
// convolutions (rows between windows pass through the line buffer) and global pooling + Flatten
// (int32 sums; the view in place); SqueezeNet global pooling followed by two views.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "exec/lower_step.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_util.h"
#include "tiled_test_util.h"
#include "transform/canonicalize.h"

namespace sramplan::exec {
namespace {

using tiled_test::Accel;
using tiled_test::Plan;

// Whether an op of step `st` lists as ISOA produces a tensor another op of the step reads.
bool IsoaReadInside(const plan::Step& st, const plan::Plan& p) {
  std::set<std::string> ops;
  for (const auto& op : st.ops) ops.insert(op.name);
  for (const auto& t : p.tensors) {
    if (std::find(st.tiled.isoa.begin(), st.tiled.isoa.end(), t.producer) == st.tiled.isoa.end()) continue;
    for (const auto& c : t.consumers)
      if (ops.count(c)) return true;
  }
  return false;
}

// Step k lowers to the plan's strips with no note, within the plan's buffer bytes and with its DRAM
// writes.
void ExpectLoweredAsPlanned(const StepLowering& l, const plan::Plan& p, size_t k) {
  const plan::Step& st = p.steps[k];
  auto sc = LowerStep(l, static_cast<int>(k));
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  ASSERT_TRUE(sc->tiled);
  EXPECT_EQ(sc->tiled->note, "");
  EXPECT_EQ(sc->tiled->tiles, st.tiled.tiles);
  EXPECT_LE(sc->tiled->working_bytes, st.tiled.buffer_bytes);
  EXPECT_EQ(sc->tiled->write_bytes, st.tiled.dram_write_bytes);
}

TEST(ExecTiledFit, BaselineGroupsRunThePlansStripsInTheModelsBytes) {
  for (const char* model : {"resnet18", "squeezenet1_0"}) {
    auto gi = import::ImportModel(testing::SourcePath(std::string("models/onnx/") + model + ".onnx"), {});
    ASSERT_TRUE(gi.ok()) << gi.status().message();
    ir::Graph g = std::move(gi).value();
    ASSERT_TRUE(transform::Canonicalize(&g, {}).ok());
    ir::ApplyDtype(g, ir::DataType::kInt8);
    auto q = QuantizeModel(g, kDefaultSeed, nullptr);
    ASSERT_TRUE(q.ok()) << q.status().message();
    for (const char* s : {"nofuse", "dnnvm", "efficient-s", "fused-layer"}) {
      const plan::Plan p = Plan(g, Accel(128 << 10), s, "int8");
      ASSERT_TRUE(plan::VerifyPlan(p).ok()) << model << " " << s;
      const StepLowering l(g, p, &*q);
      int checked = 0;
      for (size_t k = 0; k < p.steps.size(); ++k) {
        const plan::Step& st = p.steps[k];
        if (st.kind != plan::StepKind::kFusedTiled || IsoaReadInside(st, p)) continue;
        SCOPED_TRACE(std::string(model) + " " + s + " step " + std::to_string(k) + " ('" + st.ops.front().name + "')");
        ExpectLoweredAsPlanned(l, p, k);
        ++checked;
      }
      EXPECT_GE(checked, 2) << model << " " << s;
    }
  }
}

// pnasnet-5-cifar10, efficient-s at 128 KB: the group of 'cell7_in_relu' writes a 1x1 stride-2
// conv's 8 rows and a Slice's 15 rows of one 16-row map in 5 strips. Split by floor, the two drift
// a row apart and the map held 5 rows (138,720 B of a 131,072 B buffer, so 6 strips ran); split
// by ceil (taken when floor exceeds the model) it holds the model's 4 and runs the plan's strips.
TEST(ExecTiledFit, GroupOutputsOfDifferentHeightsStayWithinTheModel) {
  auto gi = import::ImportModel(testing::SourcePath("models/nas/pnasnet-5-cifar10.graph.json"), {});
  ASSERT_TRUE(gi.ok()) << gi.status().message();
  ir::Graph g = std::move(gi).value();
  ASSERT_TRUE(transform::Canonicalize(&g, {}).ok());
  ir::ApplyDtype(g, ir::DataType::kInt8);
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  ASSERT_TRUE(q.ok()) << q.status().message();
  const plan::Plan p = Plan(g, Accel(128 << 10), "efficient-s", "int8");
  ASSERT_TRUE(plan::VerifyPlan(p).ok());
  const StepLowering l(g, p, &*q);
  int found = 0;
  for (size_t k = 0; k < p.steps.size(); ++k) {
    const plan::Step& st = p.steps[k];
    if (st.kind != plan::StepKind::kFusedTiled) continue;
    SCOPED_TRACE("step " + std::to_string(k) + " ('" + st.ops.front().name + "')");
    ExpectLoweredAsPlanned(l, p, k);
    if (st.ops.front().name == "cell7_in_relu") {
      ++found;
      EXPECT_GT(st.tiled.tiles, 1);
    }
  }
  EXPECT_EQ(found, 1);
}

}  // namespace
}  // namespace sramplan::exec
