#include "report/report.h"

#include <gtest/gtest.h>

#include "driver/strategy.h"
#include "import/import.h"
#include "test_graphs.h"

namespace sramplan::report {
namespace {

struct Fixture {
  ir::Graph g;
  plan::Plan p;
};

Fixture Make(const char* graph, const std::string& strategy, const std::string& target) {
  auto g = import::ImportNativeJson(graph, "t", {});
  EXPECT_TRUE(g.ok());
  auto p = driver::RunStrategy(*g, *target::LoadTarget(target), strategy, {});
  EXPECT_TRUE(p.ok());
  return {std::move(g).value(), std::move(p).value()};
}

TEST(Report, MemoryMapShowsEveryStepAndSharing) {
  Fixture f = Make(testing::kChainGraph, "inplace", "stm32f411re");
  std::string map = MemoryMap(f.p, 16);
  EXPECT_NE(map.find("conv1"), std::string::npos);
  EXPECT_NE(map.find("conv2"), std::string::npos);
  EXPECT_NE(map.find('*'), std::string::npos) << map;  // relu shares a's bytes
  // Step 1 (relu): a and b share [0,512) of the 768-byte arena: live bytes 512, counted once.
  EXPECT_NE(map.find("relu"), std::string::npos);
  EXPECT_NE(map.find("       512\n"), std::string::npos) << map;
}

TEST(Report, DoesNotFitDetail) {
  Fixture f = Make(testing::kBottleneckGraph, "tflm", "sram:4KiB");
  std::string d = DoesNotFitDetail(f.p);
  EXPECT_NE(d.find("required 8000 B"), std::string::npos) << d;
  EXPECT_NE(d.find("excess 3904 B"), std::string::npos) << d;
  EXPECT_NE(d.find("peak at step 1 (dw)"), std::string::npos) << d;
  // The tensors live at the peak, largest first.
  EXPECT_LT(d.find("    e "), d.find("    x ")) << d;
}

TEST(Report, CsvFilesHaveOneRowPerPlanAndStep) {
  Fixture f = Make(testing::kBottleneckGraph, "tflm", "stm32f411re");
  std::string sum = SummaryCsv({f.p, f.p});
  EXPECT_EQ(std::count(sum.begin(), sum.end(), '\n'), 3);
  EXPECT_NE(sum.find("bottleneck,stm32f411re,tflm,int8,1,4,1,sram,8000,8000,131072"), std::string::npos) << sum;
  std::string per = PerLayerCsv(f.g, {f.p});
  EXPECT_EQ(std::count(per.begin(), per.end(), '\n'), 5);
  EXPECT_NE(per.find("tflm,1,dw,DepthwiseConv,1x10x10x32,3200,28800,288,8000,8000"), std::string::npos) << per;
}

TEST(Report, SummaryAndCompare) {
  Fixture f = Make(testing::kChainGraph, "tflm", "stm32f411re");
  std::string s = PlanSummary(f.p);
  EXPECT_NE(s.find("verdict: FITS"), std::string::npos);
  EXPECT_NE(s.find("overhead 0.0%"), std::string::npos) << s;
  std::string c = CompareTable({f.p});
  EXPECT_NE(c.find("tflm"), std::string::npos);
  std::string insp = InspectTable(f.g);
  EXPECT_NE(insp.find("conv1"), std::string::npos);
}

}  // namespace
}  // namespace sramplan::report
