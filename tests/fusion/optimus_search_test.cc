// Optimus's search on bundled and generated models: the speed-ups (down-set count, group index,
// hashed group keys) keep the results recorded before them (bench/results/optimus.json of the
// earlier sessions), and optimus stays no worse than any baseline.
#include <gtest/gtest.h>

#include "../../bench/resnet_cifar.h"
#include "analysis/liveness.h"
#include "fusion/optimus_dp.h"
#include "fusion/optimus_model.h"
#include "import/import.h"
#include "target/target.h"
#include "test_util.h"

namespace sramplan::fusion {
namespace {

constexpr int64_t kBatch = 4;

ir::Graph Load(const std::string& relative) {
  import::ImportOptions o;
  o.batch = kBatch;
  auto g = import::ImportModel(testing::SourcePath(relative), o);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return ir::Graph();
  ir::ApplyDtype(*g, ir::DataType::kInt16);
  return std::move(*g);
}

AccelModel Accel(int64_t buffer) {
  auto t = target::LoadTarget("optimus-accel");
  EXPECT_TRUE(t.ok());
  t->levels[t->arena_level].capacity = buffer;
  auto m = AccelModel::From(*t, kBatch);
  EXPECT_TRUE(m.ok());
  return *m;
}

int64_t Bytes(const FusionGraph& fg, int64_t buffer, FusionMethod method, bool* proved = nullptr) {
  auto r = RunFusion(fg, Accel(buffer), method);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return -1;
  if (proved) *proved = r->proved_optimal;
  return r->dram_bytes;
}

// The proved optima (batch 4, int16, optimus-accel), re-recorded when ISOA read inside a group
// became what the executor runs (issue 14 item 7: Conv/Concat sources, group-1 Conv readers with a
// one-row window, one-op vertices, the readers' int32 partial sums counted): before, 140104256,
// 223228480, 10274944, 37685184, 115085120 and 661126464 with ISOA anywhere and no partial sums.
// With halo caching (line buffers weighed for groups without ISOA decisions), MobileNet-V2 at 128 KB
// fell from 60167104 and ResNet-50 from 770310208.
TEST(OptimusSearch, KeepsTheRecordedOptima) {
  struct Case {
    const char* model;
    int64_t buffer, optimus, online;
  };
  const Case cases[] = {
      {"models/onnx/resnet18.onnx", 128 << 10, 161165888, 161165888},
      {"models/onnx/resnet18.onnx", 64 << 10, 311236544, 311236544},
      {"models/onnx/squeezenet1_0.onnx", 512 << 10, 11990656, 14043520},
      {"models/onnx/mobilenet_v2.onnx", 128 << 10, 59866048, 59866048},
      {"models/onnx/googlenet.onnx", 128 << 10, 160588608, 160588608},
      {"models/onnx/resnet50.onnx", 128 << 10, 767098944, -1},
  };
  for (const Case& c : cases) {
    const ir::Graph g = Load(c.model);
    auto fg = BuildFusionGraph(g, analysis::ModelOrder(g), kBatch);
    ASSERT_TRUE(fg.ok());
    bool proved = false;
    EXPECT_EQ(Bytes(*fg, c.buffer, FusionMethod::kOptimus, &proved), c.optimus) << c.model << " " << c.buffer;
    EXPECT_TRUE(proved) << c.model;
    if (c.online >= 0) {
      EXPECT_EQ(Bytes(*fg, c.buffer, FusionMethod::kOnline), c.online) << c.model;
    }
  }
}

// The online variant (Alg. 3's size look-up table, without its fan-out rule) stays within 1% of
// the optimum: GoogLeNet (3.3% with the fan-out rule) is now optimal, ResNet-50 0.98%.
TEST(OptimusSearch, OnlineWithinOnePercent) {
  for (const char* model : {"models/onnx/googlenet.onnx", "models/onnx/resnet50.onnx"}) {
    const ir::Graph g = Load(model);
    auto fg = BuildFusionGraph(g, analysis::ModelOrder(g), kBatch);
    ASSERT_TRUE(fg.ok());
    for (int64_t b : {128 << 10, 512 << 10}) {
      const int64_t opt = Bytes(*fg, b, FusionMethod::kOptimus);
      const int64_t online = Bytes(*fg, b, FusionMethod::kOnline);
      EXPECT_GE(online, opt) << model << " " << b;
      EXPECT_LE(online, opt + opt / 100) << model << " " << b;
    }
  }
}

// The generated ResNet-1202 (CIFAR): 1202 weighted layers (plus two 1x1 projections), a DAG narrow
// enough for the full DP, which proves its scheme; optimus is no worse than any baseline.
TEST(OptimusSearch, ResNet1202IsProvedAndNeverWorse) {
  import::ImportOptions o;
  o.batch = kBatch;
  auto g = import::ImportModelBytes(bench::ResNetCifarGraphJson(1202, kBatch), "resnet1202.graph.json", o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt16);
  int convs = 0, gemms = 0, projections = 0;
  for (const ir::Op& op : g->ops()) {
    convs += op.type == "Conv";
    gemms += op.type == "Gemm";
    projections += op.name.find("_proj") != std::string::npos;
  }
  EXPECT_EQ(convs - projections + gemms, 1202);
  EXPECT_EQ(projections, 2);
  auto fg = BuildFusionGraph(*g, analysis::ModelOrder(*g), kBatch);
  ASSERT_TRUE(fg.ok());
  bool proved = false;
  const int64_t opt = Bytes(*fg, 128 << 10, FusionMethod::kOptimus, &proved);
  EXPECT_TRUE(proved);
  for (FusionMethod m : {FusionMethod::kDnnvm, FusionMethod::kEfficientS, FusionMethod::kFusedLayer,
                         FusionMethod::kNoFuse})
    EXPECT_LE(opt, Bytes(*fg, 128 << 10, m)) << FusionMethodName(m);
}

// NASNet-A's DAG has more down-sets than the full DP tabulates: the search says so (counted, not
// tried) and its bounded scheme is still no worse than any baseline.
TEST(OptimusSearch, WideDagSkipsTheFullDpAndIsNeverWorse) {
  const ir::Graph g = Load("models/nas/nasnet-a-imagenet.graph.json");
  auto fg = BuildFusionGraph(g, analysis::ModelOrder(g), kBatch);
  ASSERT_TRUE(fg.ok());
  auto r = RunFusion(*fg, Accel(128 << 10), FusionMethod::kOptimus);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->proved_optimal);
  EXPECT_NE(r->note.find("over 10000 down-sets"), std::string::npos) << r->note;
  for (FusionMethod m : {FusionMethod::kDnnvm, FusionMethod::kEfficientS, FusionMethod::kFusedLayer,
                         FusionMethod::kNoFuse})
    EXPECT_LE(r->dram_bytes, Bytes(*fg, 128 << 10, m)) << FusionMethodName(m);
}

}  // namespace
}  // namespace sramplan::fusion
