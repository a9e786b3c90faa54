// Module detection (Alg. 2): which fork/join regions are modules, their branches, depth and
// names, and the reasons the others are not.
#include "fusion/modules.h"

#include <gtest/gtest.h>

#include "fusion/module_graphs.h"
#include "import/import.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::fusion {
namespace {

ir::Graph Zoo(const std::string& path) {
  auto g = import::ImportModel(testing::SourcePath(path), {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

std::vector<std::string> OpNames(const ir::Graph& g, const std::vector<ir::OpId>& ops) {
  std::vector<std::string> n;
  for (ir::OpId o : ops) n.push_back(g.op(o).name);
  return n;
}

TEST(Modules, MiniInceptionHasAConcatAndAnAddModule) {
  ir::Graph g = testing::LoadNativeGraph(testing::kInceptionGraph);
  ModuleReport r = DetectModules(g, analysis::ModelOrder(g));
  ASSERT_EQ(r.modules.size(), 2u) << ModuleReportText(g, r);
  const Module& m = r.modules[0];
  EXPECT_EQ(g.op(m.entry).name, "stem");
  EXPECT_EQ(g.tensor(m.mifm).name, "s");
  EXPECT_EQ(m.merge_type, "Concat");
  ASSERT_EQ(m.branches.size(), 3u);
  EXPECT_EQ(OpNames(g, m.branches[0].ops), (std::vector<std::string>{"b1"}));
  EXPECT_EQ(OpNames(g, m.branches[1].ops), (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(OpNames(g, m.branches[2].ops), (std::vector<std::string>{"mp", "p1"}));
  EXPECT_EQ(OpNames(g, m.branches[1].outputs), (std::vector<std::string>{"c2"}));
  EXPECT_EQ(m.ops.size(), 6u);  // 5 branch ops and the merge; the fork is not one of them
  const Module& res = r.modules[1];
  EXPECT_EQ(res.merge_type, "Add");
  EXPECT_EQ(g.tensor(res.mifm).name, "c");
  ASSERT_EQ(res.branches.size(), 2u);
  int identity = 0;
  for (const auto& b : res.branches) identity += b.ops.empty() && b.outputs.empty();
  EXPECT_EQ(identity, 1);
  EXPECT_EQ(res.depth, 1);
}

TEST(Modules, AChainHasNoneAndSaysSo) {
  ir::Graph g = testing::LoadNativeGraph(testing::kChainGraph);
  ModuleReport r = DetectModules(g, analysis::ModelOrder(g));
  EXPECT_TRUE(r.modules.empty());
  EXPECT_TRUE(r.rejected.empty());
  EXPECT_NE(ModuleReportText(g, r).find("0 modules"), std::string::npos);
}

TEST(Modules, ConditionsRejectWithReasons) {
  ir::Graph g = testing::LoadNativeGraph(testing::kInceptionGraph);
  ModuleOptions small;
  small.max_ops = 4;  // the concat module has 6 ops
  ModuleReport r = DetectModules(g, analysis::ModelOrder(g), small);
  ASSERT_EQ(r.modules.size(), 1u);
  EXPECT_EQ(r.modules[0].merge_type, "Add");
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_NE(r.rejected[0].reason.find("condition 4"), std::string::npos) << r.rejected[0].reason;
  // Erasing every edge longer than one op breaks the module inputs' edges: no module is left.
  ModuleOptions tight;
  tight.long_skip_ops = 1;
  ModuleReport t = DetectModules(g, analysis::ModelOrder(g), tight);
  EXPECT_FALSE(t.erased_skips.empty());
  EXPECT_LT(t.modules.size(), 2u);
}

// The paper's count: 11 modules in Inception-V3 (a1-a3, reduction-a, b1-b4, reduction-b, c1-c2);
// Inception-C's 1x3 / 3x1 pairs are sub-modules sharing the merge (depth-2 MIFMs).
TEST(Modules, InceptionV3HasTheElevenModulesOfThePaper) {
  ir::Graph g = Zoo("models/onnx/inception_v3.onnx");
  ModuleReport r = DetectModules(g, analysis::ModelOrder(g));
  ASSERT_EQ(r.modules.size(), 11u) << ModuleReportText(g, r);
  const std::vector<std::string> names = {"Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c",
                                          "Mixed_6d", "Mixed_6e", "Mixed_7a", "Mixed_7b", "Mixed_7c"};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(r.modules[i].name, names[i]);
    EXPECT_EQ(r.modules[i].merge_type, "Concat");
  }
  EXPECT_EQ(r.modules[0].branches.size(), 4u);
  EXPECT_EQ(r.modules[3].branches.size(), 3u);  // reduction-a
  EXPECT_EQ(r.modules[9].sub_inputs.size(), 2u);  // Inception-C: two sub-modules
  EXPECT_TRUE(r.modules[2].sub_inputs.empty());
  EXPECT_TRUE(r.rejected.empty()) << ModuleReportText(g, r);
}

TEST(Modules, GoogLeNetAndResNetBlocks) {
  ir::Graph gl = Zoo("models/onnx/googlenet.onnx");
  EXPECT_EQ(DetectModules(gl, analysis::ModelOrder(gl)).modules.size(), 9u);
  ir::Graph rn = Zoo("models/onnx/resnet18.onnx");
  ModuleReport r = DetectModules(rn, analysis::ModelOrder(rn));
  ASSERT_EQ(r.modules.size(), 8u);
  for (const auto& m : r.modules) EXPECT_EQ(m.merge_type, "Add");
  EXPECT_EQ(r.modules[0].name, "layer1/layer1.0");
}

TEST(Modules, DenseNetBlocksAreNotModulesAndTheReportSaysWhy) {
  ir::Graph g = Zoo("models/onnx/densenet121.onnx");
  ModuleReport r = DetectModules(g, analysis::ModelOrder(g));
  EXPECT_TRUE(r.modules.empty());
  ASSERT_FALSE(r.rejected.empty());
  EXPECT_NE(r.rejected[0].reason.find("single-entry"), std::string::npos) << r.rejected[0].reason;
}

TEST(Modules, CliReportsModulesAndRefusesBadInput) {
  testing::CliRun r = testing::Cli("modules '" + testing::SourcePath("models/onnx/inception_v3.onnx") + "'");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("11 modules (11 top level)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Mixed_7c: depth 1, Concat of 4 branches"), std::string::npos) << r.out;
  const std::string chain = testing::WriteTempFile("chain.graph.json", testing::kChainGraph);
  r = testing::Cli("modules '" + chain + "'");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("no qualifying module"), std::string::npos) << r.out;
  r = testing::Cli("modules /nonexistent/model.onnx");
  EXPECT_EQ(r.rc, 1) << r.all();
  // Planning: a budget below a layer's streaming working set does not fit (2), min is bad input (1).
  const std::string gl = "'" + testing::SourcePath("models/onnx/googlenet.onnx") + "' --target exynos-npu";
  r = testing::Cli("plan " + gl + " --strategy modulebuf --budget 1KiB");
  EXPECT_EQ(r.rc, 2) << r.all();
  EXPECT_NE(r.err.find("alone needs"), std::string::npos) << r.err;
  r = testing::Cli("plan " + gl + " --strategy modulebuf --budget min");
  EXPECT_EQ(r.rc, 1) << r.all();
  r = testing::Cli("plan " + gl + " --strategy modulebuf --no-map");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("9 modules detected"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sramplan::fusion
