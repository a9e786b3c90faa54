// The bundled CNNs whose exports pad inside their blocks (DenseNet-121's transitions and
// Inception-v3's AveragePool branches: a Pad before the pooling) plan with every fusion method at
// 128 KB (a constant Pad is a window of one row, not a whole-input op), every plan passes the
// verifier, optimus is never worse than a baseline, and Pads run inside fused groups. A plan says
// per group when its ISOA decisions feed operators inside the group (no int32 partial-sum path in
// the executor yet).
#include <gtest/gtest.h>

#include "driver/strategy.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_util.h"
#include "transform/canonicalize.h"

namespace sramplan::driver {
namespace {

const char* kMethods[] = {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"};

ir::Graph LoadCnn(const std::string& model) {
  auto g = import::ImportModel(testing::SourcePath("models/onnx/" + model + ".onnx"), {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {};
  EXPECT_TRUE(transform::Canonicalize(&*g, {}).ok());  // as the CLI does by default
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  return std::move(g).value();
}

plan::Plan PlanInt8At(const ir::Graph& g, const std::string& s, int64_t buffer) {
  auto t = target::LoadTarget("optimus-accel");
  EXPECT_TRUE(t.ok());
  target::Target tt = *t;
  tt.levels[tt.arena_level].capacity = buffer;
  PlanOptions o;
  o.dtype_name = "int8";
  auto p = RunStrategy(g, tt, s, o);
  EXPECT_TRUE(p.ok()) << s << ": " << p.status().message();
  return p.ok() ? *p : plan::Plan{};
}

TEST(OptimusPadModels, DenseNetAndInceptionPlanAt128KbAndOptimusIsNeverWorse) {
  for (const char* model : {"densenet121", "inception_v3"}) {
    const ir::Graph g = LoadCnn(model);
    int64_t optimus = -1;
    for (const char* s : kMethods) {
      SCOPED_TRACE(std::string(model) + " " + s);
      const plan::Plan p = PlanInt8At(g, s, 128 << 10);
      ASSERT_FALSE(p.steps.empty());
      const auto v = plan::VerifyPlan(p);
      EXPECT_TRUE(v.ok()) << v.Summary();
      int pads_in_groups = 0;
      for (const auto& st : p.steps) {
        EXPECT_LE(st.tiled.buffer_bytes, 128 << 10);
        for (const auto& op : st.ops) pads_in_groups += op.type == "Pad" && st.ops.size() > 1;
      }
      if (std::string(s) != "nofuse") EXPECT_GT(pads_in_groups, 0);
      const int64_t bytes = p.metrics.dram_read_bytes + p.metrics.dram_write_bytes;
      if (std::string(s) == "optimus") optimus = bytes;
      else if (std::string(s) != "optimus-online") EXPECT_LE(optimus, bytes);
    }
  }
}

TEST(OptimusPadModels, PlanNamesGroupsWhoseIsoaFeedsTheGroup) {
  const ir::Graph g = LoadCnn("squeezenet1_0");
  auto count = [](const plan::Plan& p) {
    int n = 0;
    for (const auto& note : p.notes) n += note.find("no int32 partial-sum path") != std::string::npos;
    return n;
  };
  const plan::Plan opt = PlanInt8At(g, "optimus", 128 << 10);
  int expected = 0;  // groups with an ISOA op whose output another op of the group reads
  for (const auto& st : opt.steps) {
    bool feeds = false;
    for (const auto& name : st.tiled.isoa)
      for (const auto& op : st.ops)
        if (op.name == name)
          for (const auto& out : op.outputs)
            for (const auto& other : st.ops)
              feeds = feeds || std::find(other.inputs.begin(), other.inputs.end(), out) != other.inputs.end();
    expected += feeds;
  }
  EXPECT_GT(expected, 0);
  EXPECT_EQ(count(opt), expected);
  EXPECT_EQ(count(PlanInt8At(g, "dnnvm", 128 << 10)), 0);  // the prior works' rule: no ISOA
}

}  // namespace
}  // namespace sramplan::driver
