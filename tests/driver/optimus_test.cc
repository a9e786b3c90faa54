// The Optimus strategies on bundled CNNs: every plan passes the verifier (which re-derives each
// group's working set and DRAM bytes), optimus is never worse than a baseline, plan.json carries
// the groups, the verifier catches a tampered group, and bad input is a clear error.
#include <gtest/gtest.h>

#include <fstream>

#include "driver/strategy.h"
#include "import/import.h"
#include "plan/verifier.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::driver {
namespace {

const char* kMethods[] = {"optimus", "optimus-online", "dnnvm", "efficient-s", "fused-layer", "nofuse"};

plan::Plan PlanModel(const ir::Graph& g, const target::Target& t, const std::string& s) {
  PlanOptions o;
  o.batch = 4;
  o.dtype_name = "int16";
  auto p = RunStrategy(g, t, s, o);
  EXPECT_TRUE(p.ok()) << s << ": " << p.status().message();
  return p.ok() ? *p : plan::Plan{};
}

TEST(Optimus, BundledCnnsVerifyAndOptimusIsNeverWorse) {
  auto t = target::LoadTarget("optimus-accel");
  ASSERT_TRUE(t.ok());
  for (const char* model : {"squeezenet1_0", "mobilenet_v2", "resnet18"}) {
    import::ImportOptions io;
    io.batch = 4;
    auto g = import::ImportModel(testing::SourcePath(std::string("models/onnx/") + model + ".onnx"), io);
    ASSERT_TRUE(g.ok()) << g.status().message();
    ir::ApplyDtype(*g, ir::DataType::kInt16);
    for (int64_t kib : {128, 256, 1024}) {
      target::Target tt = *t;
      tt.levels[tt.arena_level].capacity = kib << 10;
      int64_t optimus = -1;
      for (const char* s : kMethods) {
        const plan::Plan p = PlanModel(*g, tt, s);
        ASSERT_FALSE(p.steps.empty()) << model << " " << s;
        EXPECT_TRUE(plan::VerifyPlan(p).fits()) << model << " " << s << "\n" << plan::VerifyPlan(p).Summary();
        const int64_t bytes = p.metrics.dram_read_bytes + p.metrics.dram_write_bytes;
        int64_t sum = 0;
        for (const auto& st : p.steps) {
          EXPECT_EQ(st.kind, plan::StepKind::kFusedTiled);
          EXPECT_LE(st.tiled.buffer_bytes, kib << 10);
          sum += st.tiled.dram_read_bytes + st.tiled.dram_write_bytes;
        }
        EXPECT_EQ(sum, bytes);
        if (std::string(s) == "optimus") {
          optimus = bytes;
        } else if (std::string(s) != "optimus-online") {
          EXPECT_LE(optimus, bytes) << model << " " << kib << " KiB vs " << s;
        }
      }
    }
  }
}

TEST(Optimus, PlanJsonRoundTripsGroupsAndVerifierCatchesTampering) {
  auto t = target::LoadTarget("optimus-accel");
  import::ImportOptions io;
  io.batch = 4;
  auto g = import::ImportModel(testing::SourcePath("models/onnx/resnet18.onnx"), io);
  ASSERT_TRUE(g.ok() && t.ok());
  ir::ApplyDtype(*g, ir::DataType::kInt16);
  const plan::Plan p = PlanModel(*g, *t, "optimus");
  const std::string text = plan::PlanToJson(p);
  EXPECT_NE(text.find("\"group\""), std::string::npos);
  EXPECT_NE(text.find("\"dram_read_bytes\""), std::string::npos);
  auto back = plan::PlanFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(plan::PlanToJson(*back), text);
  EXPECT_TRUE(plan::VerifyPlan(*back).ok());
  // A group that claims fewer strips (a larger tile) than its workspace holds, fewer DRAM bytes,
  // or a wrong ISOA op: each is caught.
  plan::Plan bad = *back;
  size_t k = 0;
  while (k < bad.steps.size() && bad.steps[k].tiled.tiles < 2) ++k;
  ASSERT_LT(k, bad.steps.size());
  bad.steps[k].tiled.tiles -= 1;
  EXPECT_FALSE(plan::VerifyPlan(bad).ok());
  bad = *back;
  bad.steps[0].tiled.dram_read_bytes -= 1;
  EXPECT_FALSE(plan::VerifyPlan(bad).ok());
  bad = *back;
  bad.steps[0].tiled.isoa.push_back("no-such-op");
  EXPECT_FALSE(plan::VerifyPlan(bad).ok());
}

TEST(Optimus, CliBufferTooSmallExits2NamingTheOp) {
  const std::string target = testing::WriteTempFile(
      "tiny-accel.json", R"({"inherit": "optimus-accel", "levels": [{"name": "buffer", "capacity": 4096}]})");
  const testing::CliRun r = testing::Cli("plan " + testing::SourcePath("models/onnx/resnet18.onnx") + " --target " +
                                         target + " --strategy optimus --batch 4 --dtype int16 -q");
  EXPECT_EQ(r.rc, 2) << r.all();
  EXPECT_NE(r.all().find("does not fit the 4096-byte global buffer"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("'/conv1/Conv'"), std::string::npos) << r.all();
}

TEST(Optimus, CliWritesTheGroupsCsv) {
  const std::string dir = testing::WriteTempFile("optimus-csv/.keep", "");
  const std::string out = dir.substr(0, dir.rfind('/'));
  const testing::CliRun r = testing::Cli("plan " + testing::SourcePath("models/onnx/squeezenet1_0.onnx") +
                                         " --target optimus-accel --strategy optimus --batch 4 --dtype int16 -q --csv " +
                                         out);
  ASSERT_EQ(r.rc, 0) << r.all();
  std::ifstream in(out + "/groups.csv");
  std::string header, row;
  ASSERT_TRUE(std::getline(in, header));
  EXPECT_EQ(header.rfind("strategy,step,ops,", 0), 0u) << header;
  int rows = 0;
  while (std::getline(in, row)) rows += row.rfind("optimus,", 0) == 0;
  EXPECT_GT(rows, 5);
}

TEST(Optimus, CliNeedsDram) {
  const testing::CliRun r = testing::Cli("plan " + testing::SourcePath("models/onnx/squeezenet1_0.onnx") +
                                         " --target stm32f411re --strategy optimus -q");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.all().find("has no DRAM level"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace sramplan::driver
