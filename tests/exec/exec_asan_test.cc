// Always built with AddressSanitizer, in every preset (tests/CMakeLists.txt compiles the executor and
// the runtime kernels into this binary with -fsanitize=address): the graphs of issue 12 that made the
// float Conv kernel write past a bool or int64 output's buffer, and a Slice given a Conv's inputs,
// run through both executors with the import-time check bypassed. Each run must be refused with an
// error, and any out-of-bounds access aborts the test.
#include <gtest/gtest.h>

#include "bad_dtype_graphs.h"
#include "driver/strategy.h"
#include "exec/executor.h"

namespace sramplan::exec {
namespace {

struct Case {
  const char* type;
  ir::DataType y;
};

TEST(ExecAsan, BadOperandDtypesAreRefusedNotRun) {
  for (const Case c : {Case{"Conv", ir::DataType::kBool}, Case{"Conv", ir::DataType::kInt64},
                       Case{"Conv", ir::DataType::kInt8}, Case{"Slice", ir::DataType::kFloat32},
                       Case{"Slice", ir::DataType::kBool}}) {
    SCOPED_TRACE(std::string(c.type) + " -> " + ir::DataTypeName(c.y));
    const ir::Graph g = testing::BadDtypeGraph(c.type, c.y);
    ASSERT_FALSE(ir::VerifyGraph(g).ok());  // the import-time check rejects it
    auto data = MakeModelData(g, kDefaultSeed);
    ASSERT_TRUE(data.ok()) << data.status().message();
    auto naive = RunNaive(g, analysis::ModelOrder(g), *data);
    EXPECT_FALSE(naive.ok());
    auto t = target::LoadTarget("sram:1MiB");
    ASSERT_TRUE(t.ok());
    driver::PlanOptions o;
    o.dtype_name = "float32";
    for (const char* strategy : {"naive", "tflm"}) {
      auto p = driver::RunStrategy(g, *t, strategy, o);
      ASSERT_TRUE(p.ok()) << p.status().message();
      auto arena = RunArena(g, *p, *data);
      EXPECT_FALSE(arena.ok()) << strategy;
    }
  }
}

TEST(ExecAsan, ModelDataOfTheWrongSizeIsRefused) {
  const ir::Graph g = testing::BadDtypeGraph("Conv", ir::DataType::kFloat32);
  ASSERT_TRUE(ir::VerifyGraph(g).ok());
  auto data = MakeModelData(g, kDefaultSeed);
  ASSERT_TRUE(data.ok());
  data->values[1].resize(8);  // the weights, truncated
  auto naive = RunNaive(g, analysis::ModelOrder(g), *data);
  ASSERT_FALSE(naive.ok());
  EXPECT_NE(naive.status().message().find("the data of constant 'w' has 8 bytes"), std::string::npos)
      << naive.status().message();
}

}  // namespace
}  // namespace sramplan::exec
