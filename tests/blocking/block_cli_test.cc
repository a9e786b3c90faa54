// `sramplan block`: one layer by dimensions, a Table 4 layer, a model's layers; bad input exits 1
// naming the field.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace sramplan::testing {
namespace {

TEST(BlockCli, OneLayerByDimsWritesTableAndJson) {
  std::string json = WriteTempFile("block.json", "");
  CliRun r = Cli("block --target diannao --dims X=4,Y=4,C=8,K=8,Fw=3,Fh=3 --time-limit 300 --json " + json);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("proved optimal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("string (innermost first)"), std::string::npos);
  std::ifstream in(json);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::json::parse(ss.str());
  ASSERT_EQ(doc["layers"].size(), 1u);
  const auto& l = doc["layers"][0];
  EXPECT_EQ(l["hierarchy"], "diannao");
  EXPECT_EQ(l["method"], "exact");
  EXPECT_TRUE(l["proved_optimal"].get<bool>());
  EXPECT_EQ(l["levels"].size(), 4u);
  double sum = 0;
  for (const auto& lv : l["levels"]) sum += lv["energy_pj"].get<double>();
  EXPECT_NEAR(sum, l["memory_pj"].get<double>(), 1e-6 * sum);
  EXPECT_GT(l["search_s"].get<double>(), 0);
}

TEST(BlockCli, Table4DefaultAndStringMethods) {
  CliRun d = Cli("block --target diannao --table4 FC1 --method default");
  ASSERT_EQ(d.rc, 0) << d.all();
  EXPECT_NE(d.out.find("layer FC1"), std::string::npos);
  CliRun s = Cli("block --target diannao --dims X=4,Y=4,C=8,K=8,Fw=3,Fh=3 --method string --string 'Fw Fh X:2 K Y X C'");
  ASSERT_EQ(s.rc, 0) << s.all();
  EXPECT_NE(s.out.find("Fw:3 Fh:3 X:2 K:8 Y:4 X:4 C:8"), std::string::npos) << s.out;
}

TEST(BlockCli, ModelLayers) {
  CliRun r = Cli("block " + SourcePath("models/mcunet_blocks/B1.graph.json") + " --target diannao --method heuristic");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("total energy"), std::string::npos) << r.out;
}

// Pooling and LRN: by --dims kind=..., and a model's MaxPool / AveragePool ops; no kernel energy.
TEST(BlockCli, PoolingAndLrnLayers) {
  std::string json = WriteTempFile("block_pool.json", "");
  CliRun r = Cli("block " + SourcePath("models/onnx/alexnet.onnx") + " --target diannao --layer /features/features.2/MaxPool --json " + json);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("kind=maxpool X=27 Y=27 C=1 K=64 Fw=3 Fh=3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("proved optimal"), std::string::npos) << r.out;
  std::ifstream in(json);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::json::parse(ss.str());
  const auto& l = doc["layers"][0];
  EXPECT_EQ(l["kind"], "maxpool");
  EXPECT_EQ(l["operand_pj"]["kernel"].get<double>(), 0.0);
  EXPECT_GT(l["operand_pj"]["input"].get<double>(), 0.0);
  CliRun lrn = Cli("block --target diannao --dims kind=lrn,X=13,Y=13,K=32,C=5 --method heuristic");
  ASSERT_EQ(lrn.rc, 0) << lrn.all();
  EXPECT_NE(lrn.out.find("kind=lrn"), std::string::npos) << lrn.out;
  CliRun kind = Cli("block --target diannao --dims kind=pool,X=5");
  EXPECT_EQ(kind.rc, 1);
  EXPECT_NE(kind.err.find("kind = 'pool' is unknown"), std::string::npos) << kind.all();
  CliRun c = Cli("block --target diannao --dims kind=maxpool,X=5,C=3");
  EXPECT_EQ(c.rc, 1);
  EXPECT_NE(c.err.find("leave C = 1"), std::string::npos) << c.all();
  CliRun cores = Cli("block --target diannao --dims kind=lrn,X=4,K=4,C=3 --cores 2");
  EXPECT_EQ(cores.rc, 1);
  EXPECT_NE(cores.err.find("without --cores"), std::string::npos) << cores.all();
}

TEST(BlockCli, BadInputNamesTheField) {
  CliRun zero = Cli("block --target diannao --dims X=0,Y=4,C=4,K=4");
  EXPECT_EQ(zero.rc, 1);
  EXPECT_NE(zero.err.find("X = 0 must be a positive integer"), std::string::npos) << zero.all();
  CliRun neg = Cli("block --target diannao --dims X=4,K=-2");
  EXPECT_EQ(neg.rc, 1);
  EXPECT_NE(neg.err.find("K = -2"), std::string::npos) << neg.all();
  CliRun dim = Cli("block --target diannao --dims Q=4");
  EXPECT_EQ(dim.rc, 1);
  EXPECT_NE(dim.err.find("unknown dimension 'Q'"), std::string::npos) << dim.all();
  std::string h = WriteTempFile("h.json", R"({"blocking_levels": [{"name": "rf", "capacity": 64},
      {"name": "dram", "capacity": "dram"}]})");
  CliRun energy = Cli("block --target " + h + " --dims X=4,C=4,K=4");
  EXPECT_EQ(energy.rc, 1);
  EXPECT_NE(energy.err.find("'rf' has no energy"), std::string::npos) << energy.all();
  std::string w = WriteTempFile("w.json", R"({"blocking_levels": [{"name": "rf", "capacity": 64, "width_bits": 100},
      {"name": "dram", "capacity": "dram"}]})");
  CliRun width = Cli("block --target " + w + " --dims X=4,C=4,K=4");
  EXPECT_EQ(width.rc, 1);
  EXPECT_NE(width.err.find("width_bits"), std::string::npos) << width.all();
  std::string t = WriteTempFile("t.json", R"({"blocking_levels": [{"name": "rf", "capacity": 2, "pj_per_16b": 0.2},
      {"name": "dram", "capacity": "dram"}]})");
  CliRun tiny = Cli("block --target " + t + " --dims X=4,C=4,K=4");
  EXPECT_EQ(tiny.rc, 1);
  EXPECT_NE(tiny.err.find("one MAC's operands"), std::string::npos) << tiny.all();
  CliRun both = Cli("block --target diannao --table4 Conv1 --dims X=4");
  EXPECT_EQ(both.rc, 1);
  CliRun bad_string = Cli("block --target diannao --dims X=4,C=4 --method string --string 'X:3 C'");
  EXPECT_EQ(bad_string.rc, 1);
  EXPECT_NE(bad_string.err.find("X:3"), std::string::npos) << bad_string.all();
}

TEST(BlockCli, MulticoreKAndXY) {
  std::string json = WriteTempFile("block_mc.json", "");
  CliRun r = Cli("block --target diannao --dims X=8,Y=8,C=8,K=8,Fw=3,Fh=3 --cores 2 --time-limit 300 --json " + json);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("2 cores on diannao"), std::string::npos) << r.out;
  std::ifstream in(json);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::json::parse(ss.str());
  ASSERT_EQ(doc["layers"].size(), 2u);
  EXPECT_EQ(doc["layers"][0]["partition"], "K");
  EXPECT_EQ(doc["layers"][0]["shared"], "input");
  EXPECT_EQ(doc["layers"][1]["partition"], "XY");
  EXPECT_EQ(doc["layers"][1]["shared"], "kernel");
  for (const auto& l : doc["layers"]) {
    EXPECT_TRUE(l["proved_optimal"].get<bool>());
    EXPECT_NEAR(l["energy_pj"].get<double>(), l["private_pj"].get<double>() + l["broadcast_pj"].get<double>() +
                                                  l["mac_pj"].get<double>(), 1e-6 * l["energy_pj"].get<double>());
  }
  CliRun bad = Cli("block --target diannao --dims X=6,Y=6,C=8,K=6,Fw=3,Fh=3 --cores 4 --partition K");
  EXPECT_EQ(bad.rc, 1) << bad.all();
  EXPECT_NE(bad.err.find("K = 6"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace sramplan::testing
