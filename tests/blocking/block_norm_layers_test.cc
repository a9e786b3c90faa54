// `sramplan block` on a model's LRN, GlobalAveragePool / GlobalMaxPool and ReduceMean-over-H,W ops
// (pooling with the window = the input) and on --dims kind=globalavgpool; the layers are searched
// exactly and match the --dims forms; a bad LRN exits 1 naming the op and the attribute.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace sramplan::testing {
namespace {

// input [1, 16, 8, 6] (N, C, H, W) -> LRN(size) -> ReduceMean(H, W) / GlobalMaxPool / ReduceMean(C).
std::string NormGraph(const std::string& lrn_attrs) {
  return R"({"format": "sramplan-graph", "version": 1, "name": "lrn-net", "layout": "NCHW", "dtype": "float32",
  "tensors": [
    {"name": "x", "shape": [1, 16, 8, 6], "kind": "input"},
    {"name": "n", "shape": [1, 16, 8, 6], "kind": "activation"},
    {"name": "m", "shape": [1, 16, 1, 1], "kind": "output"},
    {"name": "g", "shape": [1, 16, 1, 1], "kind": "output"},
    {"name": "c", "shape": [1, 1, 8, 6], "kind": "output"}
  ],
  "ops": [
    {"name": "lrn1", "type": "LRN", "inputs": ["x"], "outputs": ["n"], "attrs": {)" + lrn_attrs + R"(}},
    {"name": "mean_hw", "type": "ReduceMean", "inputs": ["n"], "outputs": ["m"], "attrs": {"axes": [2, 3], "keepdims": 1}},
    {"name": "gmax", "type": "GlobalMaxPool", "inputs": ["n"], "outputs": ["g"], "attrs": {}},
    {"name": "mean_c", "type": "ReduceMean", "inputs": ["n"], "outputs": ["c"], "attrs": {"axes": [1], "keepdims": 1}}
  ]})";
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(BlockNormLayers, LrnAndGlobalPoolingFromAModel) {
  std::string model = WriteTempFile("lrn_net.graph.json",
                                    NormGraph(R"("size": 5, "alpha": 0.0001, "beta": 0.75, "bias": 1.0)"));
  std::string json = WriteTempFile("block_norm.json", "");
  CliRun r = Cli("block " + model + " --target diannao --time-limit 120 -v --json " + json);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("layer lrn1 (kind=lrn X=6 Y=8 C=5 K=16 Fw=1 Fh=1 N=1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer mean_hw (kind=avgpool X=1 Y=1 C=1 K=16 Fw=6 Fh=8 N=1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer gmax (kind=maxpool X=1 Y=1 C=1 K=16 Fw=6 Fh=8 N=1)"), std::string::npos) << r.out;
  // A mean over the channels is not a pooling window of this nest: skipped, with the reason.
  EXPECT_EQ(r.out.find("layer mean_c"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("skipped mean_c"), std::string::npos) << r.all();
  auto doc = ReadJson(json);
  ASSERT_EQ(doc["layers"].size(), 3u);
  for (const auto& l : doc["layers"]) {
    EXPECT_TRUE(l["proved_optimal"].get<bool>()) << l["layer"];
    EXPECT_EQ(l["operand_pj"]["kernel"].get<double>(), 0.0) << l["layer"];
    EXPECT_GT(l["operand_pj"]["input"].get<double>(), 0.0) << l["layer"];
  }
  EXPECT_EQ(doc["layers"][0]["kind"], "lrn");
  EXPECT_EQ(doc["layers"][0]["macs"].get<int64_t>(), 6 * 8 * 16 * 5);
  EXPECT_EQ(doc["layers"][1]["kind"], "avgpool");
  EXPECT_EQ(doc["layers"][1]["macs"].get<int64_t>(), 16 * 6 * 8);

  // The same layers by --dims give the same optimum.
  std::string dj = WriteTempFile("block_norm_dims.json", "");
  CliRun d = Cli("block --target diannao --dims kind=globalavgpool,X=6,Y=8,K=16 --time-limit 120 --json " + dj);
  ASSERT_EQ(d.rc, 0) << d.all();
  EXPECT_NE(d.out.find("kind=avgpool X=1 Y=1 C=1 K=16 Fw=6 Fh=8"), std::string::npos) << d.out;
  EXPECT_DOUBLE_EQ(ReadJson(dj)["layers"][0]["energy_pj"].get<double>(), doc["layers"][1]["energy_pj"].get<double>());
  CliRun ld = Cli("block --target diannao --dims kind=lrn,X=6,Y=8,K=16,C=5 --time-limit 120 --json " + dj);
  ASSERT_EQ(ld.rc, 0) << ld.all();
  EXPECT_DOUBLE_EQ(ReadJson(dj)["layers"][0]["energy_pj"].get<double>(), doc["layers"][0]["energy_pj"].get<double>());
}

TEST(BlockNormLayers, BadInputNamesTheField) {
  CliRun nosize = Cli("block " + WriteTempFile("lrn_nosize.graph.json", NormGraph(R"("alpha": 0.0001)")) +
                      " --target diannao --layer lrn1");
  EXPECT_EQ(nosize.rc, 1) << nosize.all();
  EXPECT_NE(nosize.err.find("'lrn1'"), std::string::npos) << nosize.all();
  EXPECT_NE(nosize.err.find("'size'"), std::string::npos) << nosize.all();
  CliRun zero = Cli("block " + WriteTempFile("lrn_zero.graph.json", NormGraph(R"("size": 0)")) +
                    " --target diannao --layer lrn1");
  EXPECT_EQ(zero.rc, 1) << zero.all();
  EXPECT_NE(zero.err.find("size = 0"), std::string::npos) << zero.all();
  CliRun window = Cli("block --target diannao --dims kind=globalmaxpool,X=6,Y=8,K=16,Fw=3");
  EXPECT_EQ(window.rc, 1) << window.all();
  EXPECT_NE(window.err.find("drop Fw, Fh"), std::string::npos) << window.all();
  CliRun neg = Cli("block --target diannao --dims kind=globalavgpool,X=-6,Y=8,K=16");
  EXPECT_EQ(neg.rc, 1) << neg.all();
  EXPECT_NE(neg.err.find("X = -6"), std::string::npos) << neg.all();
}

}  // namespace
}  // namespace sramplan::testing
