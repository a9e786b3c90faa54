// The executors: naive and arena runs agree bit for bit on every strategy's plan; broken plans are
// caught by execution even when the verifier is bypassed.
#include "exec/executor.h"

#include <gtest/gtest.h>

#include "test_util.h"

#include <map>

#include "driver/strategy.h"
#include "import/import.h"
#include "bad_dtype_graphs.h"
#include "exec/kernels.h"
#include "random_graphs.h"
#include "test_graphs.h"

namespace sramplan::exec {
namespace {

ir::Graph Float(ir::Graph g) {
  ir::ApplyDtype(g, ir::DataType::kFloat32);
  return g;
}

ir::Graph Load(const char* text) {
  auto g = import::ImportNativeJson(text, "t", {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return Float(std::move(g).value());
}

analysis::Schedule OrderOf(const ir::Graph& g, const plan::Plan& p) { return testing::PlanOrder(g, p); }

plan::Plan MakePlan(const ir::Graph& g, const std::string& strategy, const std::string& target = "stm32f411re") {
  auto t = target::LoadTarget(target);
  driver::PlanOptions o;
  o.dtype_name = "float32";
  auto p = driver::RunStrategy(g, *t, strategy, o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

// Runs both executors; returns Compare's verdict ("" = identical) or the arena run's error.
std::string Verify(const ir::Graph& g, const plan::Plan& p) {
  auto data = MakeModelData(g, kDefaultSeed);
  EXPECT_TRUE(data.ok());
  auto naive = RunNaive(g, OrderOf(g, p), *data);
  EXPECT_TRUE(naive.ok()) << naive.status().message();
  auto arena = RunArena(g, p, *data);
  if (!arena.ok()) return "error: " + arena.status().message();
  return Compare(g, *naive, *arena, p);
}

TEST(Executor, EveryStrategyMatchesOnSmallGraphs) {
  for (const char* text : {testing::kChainGraph, testing::kBottleneckGraph}) {
    ir::Graph g = Load(text);
    for (const auto& s : driver::StrategiesOf(driver::Family::kTensor)) EXPECT_EQ(Verify(g, MakePlan(g, s.name)), "") << s.name;
  }
}

TEST(Executor, OutputsAreNotTrivial) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  auto data = MakeModelData(g, kDefaultSeed);
  auto r = RunNaive(g, analysis::ModelOrder(g), *data);
  ASSERT_TRUE(r.ok());
  const float* y = reinterpret_cast<const float*>(r->outputs[0].data());
  int nonzero = 0;
  for (size_t i = 0; i < r->outputs[0].size() / 4; ++i) nonzero += y[i] != 0.0f;
  EXPECT_GT(nonzero, 100);
  // A different seed gives different outputs; the same seed the same bytes.
  auto d2 = MakeModelData(g, 7);
  auto r2 = RunNaive(g, analysis::ModelOrder(g), *d2);
  EXPECT_NE(r->outputs[0], r2->outputs[0]);
  auto r3 = RunNaive(g, analysis::ModelOrder(g), *data);
  EXPECT_EQ(r->outputs[0], r3->outputs[0]);
}

TEST(Executor, ShiftedBufferIsCaughtWithoutTheVerifier) {
  ir::Graph g = Load(testing::kChainGraph);
  plan::Plan p = MakePlan(g, "tflm");
  // Move a onto b: both live at step 1 (relu reads a, writes b). Not re-verified.
  int64_t b_offset = 0;
  for (const auto& b : p.buffers)
    if (b.tensor == "b") b_offset = b.offset;
  for (auto& b : p.buffers)
    if (b.tensor == "a") b.offset = b_offset;
  EXPECT_NE(Verify(g, p), "");
}

TEST(Executor, ShiftedBufferInTheBottleneckIsCaught) {
  ir::Graph g = Load(testing::kBottleneckGraph);
  plan::Plan p = MakePlan(g, "tflm");
  // x lives through the whole block (the residual add reads it); put it on top of e.
  int64_t e_offset = 0;
  for (const auto& b : p.buffers)
    if (b.tensor == "e") e_offset = b.offset;
  for (auto& b : p.buffers)
    if (b.tensor == "x") b.offset = e_offset;
  EXPECT_NE(Verify(g, p), "");
}

TEST(Executor, MissingBufferIsAMismatchNamingOpAndTensor) {
  ir::Graph g = Load(testing::kChainGraph);
  plan::Plan p = MakePlan(g, "tflm");
  for (auto& b : p.buffers)
    if (b.tensor == "b") b.last_step = 1;  // conv2 reads b at step 2
  std::string v = Verify(g, p);
  EXPECT_NE(v.find("op 'conv2'"), std::string::npos) << v;
  EXPECT_NE(v.find("tensor 'b'"), std::string::npos) << v;
}

TEST(Executor, WrongOffchipCountIsAMismatch) {
  ir::Graph g = Load(testing::kChainGraph);
  plan::Plan p = MakePlan(g, "tflm");
  p.metrics.offchip_read_bytes += 1;
  EXPECT_NE(Verify(g, p).find("off-chip bytes differ"), std::string::npos);
}

TEST(Executor, RandomDagsAllStrategies) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    ir::Graph g = Float(seed % 3 == 0   ? testing::Chain(seed, 30)
                        : seed % 3 == 1 ? testing::Diamonds(seed, 40)
                                        : testing::Cells(seed, 60));
    for (const auto& s : driver::StrategiesOf(driver::Family::kTensor)) EXPECT_EQ(Verify(g, MakePlan(g, s.name)), "") << g.name << " " << s.name;
  }
}

// Issue 12, defence in depth: whatever the import-time dtype check let through, a kernel runs only
// on operands whose dtype it uses and whose buffers hold exactly elements x element size.
TEST(Executor, KernelsRefuseOperandsOfTheWrongDtypeOrSize) {
  for (ir::DataType y : {ir::DataType::kBool, ir::DataType::kInt64}) {
    const ir::Graph g = testing::BadDtypeGraph("Conv", y);
    auto data = MakeModelData(g, kDefaultSeed);
    ASSERT_TRUE(data.ok());
    auto naive = RunNaive(g, analysis::ModelOrder(g), *data);
    ASSERT_FALSE(naive.ok());
    EXPECT_EQ(naive.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(naive.status().message().find("op 'c' (Conv): the float32 kernel uses float32 at output 'y', which is " +
                                            std::string(ir::DataTypeName(y))),
              std::string::npos)
        << naive.status().message();
    auto arena = RunArena(g, MakePlan(g, "tflm", "sram:1MiB"), *data);
    ASSERT_FALSE(arena.ok());
    EXPECT_NE(arena.status().message().find("refusing to run it"), std::string::npos) << arena.status().message();
  }
  // The int8 kernels: int8 data and weights, an int32 bias.
  ir::Graph g = testing::BadDtypeGraph("Conv", ir::DataType::kInt8);
  for (ir::Tensor& t : g.mutable_tensors()) t.dtype = ir::DataType::kInt8;
  const ir::Op& op = g.op(ir::OpId(0));
  const int64_t x = 1 * 3 * 8 * 8, w = 4 * 3 * 3 * 3, y = 1 * 4 * 6 * 6;
  EXPECT_TRUE(CheckKernelOperands(g, op, true, {{x, w}, {y}}).ok());
  Status s = CheckKernelOperands(g, op, true, {{x, w - 1}, {y}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("touches 108 bytes of input 'w' (int8) but its buffer holds 107 bytes"), std::string::npos)
      << s.message();
  EXPECT_FALSE(CheckKernelOperands(g, op, false, {{x * 4, w * 4}, {y * 4}}).ok());  // int8 tensors, float kernel
}

}  // namespace
}  // namespace sramplan::exec
