// TFLite Micro's persistent tail predicted from .tflite files (driver/tflm_tail.h).
#include "driver/tflm_tail.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "import/tflite_test.h"

namespace sramplan::driver {
namespace {

namespace tfl = import::tflite;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int64_t Part(const TflmTail& t, const std::string& what) {
  for (const auto& p : t.parts)
    if (p.what == what) return p.bytes;
  return -1;
}

// The small model of tflite_test.h (CONV_2D 8 ch, DEPTHWISE_CONV_2D 8 ch, ADD, MEAN; 9 tensors; one
// scratch request, MEAN's), by hand, tail bytes used after each step:
// 64-bit: allocators 72+72+72+16 -> 232, SubgraphAllocations 16 -> 248, 9 eval tensors x 24 -> 464,
// 4 nodes x 64 -> 720, builtin data 28+28+8+1 -> 785, OpData (16-aligned) conv 72 -> 864, dw 72 -> 944,
// add 60 -> 1008, mean 40 -> 1056, per-channel 4 x 32 -> 1184, 1 handle 8 -> 1192, input: array 8
// (16-aligned) -> 1200, TfLiteTensor 64 -> 1264, quantization 24 -> 1288, zero points 8 -> 1296;
// output: array -> 1312, 1376, 1400, 1408.
// 32-bit: allocators 36+44+36+8 -> 124, 8 -> 132, 9 x 12 -> 240, 4 x 32 -> 368, 28+28+8+1 -> 433,
// conv 56 -> 496, dw 56 -> 560, add 60 -> 624, mean 40 -> 672, 4 x 32 -> 800, handle 4 -> 804,
// input: 4 -> 816, 40 -> 856, 12 -> 868, 8 -> 876; output: 4 -> 880, 920, 932, 940.
TEST(TflmTail, SmallModelByHand) {
  const std::string bytes = tfl::WriteModel(testing::SmallTfliteModel());
  auto m = tfl::ParseModel(bytes, "small");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto head = PredictTflmArena(bytes, *m);
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->scratch_buffers, 1);
  auto t64 = PredictTflmTail(*m, *head, 8);
  auto t32 = PredictTflmTail(*m, *head, 4);
  ASSERT_TRUE(t64.ok() && t32.ok());
  EXPECT_EQ(t64->bytes, 1408);
  EXPECT_EQ(t32->bytes, 940);
  EXPECT_EQ(t64->recording_bytes, 1408 + 208);
  EXPECT_EQ(Part(*t64, "allocator objects"), 232);
  EXPECT_EQ(Part(*t32, "allocator objects"), 124);
  EXPECT_EQ(Part(*t64, "TfLiteEvalTensor per tensor"), 9 * 24);
  EXPECT_EQ(Part(*t32, "NodeAndRegistration per operator"), 4 * 32);
  EXPECT_EQ(Part(*t64, "per-channel output multipliers and shifts"), 4 * 32);
  EXPECT_EQ(Part(*t64, "kernels' OpData"), 72 + 72 + 60 + 40);  // requested; each 16-aligned in the tail
  int64_t sum = 0;
  for (const auto& p : t64->parts) sum += p.bytes;
  EXPECT_EQ(sum, t64->bytes);
  EXPECT_TRUE(t64->unmodelled_ops.empty());
  const std::string s = TflmTailSummary(*head, *t64, *t32);
  ASSERT_EQ(head->planned_bytes, 384);
  EXPECT_NE(s.find("arena_size 1,324 B on a 32-bit Cortex-M = planned head 384 B + persistent tail 940 B"),
            std::string::npos)
      << s;
  EXPECT_FALSE(PredictTflmTail(*m, *head, 2).ok());
}

TEST(TflmTail, UnmodelledKernelsAreNamed) {
  auto model = testing::SmallTfliteModel();
  model.subgraph.operators[2].builtin = tfl::kMul;  // MUL's kernel data is not modelled
  const std::string bytes = tfl::WriteModel(model);
  auto m = tfl::ParseModel(bytes, "mul");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto head = PredictTflmArena(bytes, *m);
  ASSERT_TRUE(head.ok());
  auto t = PredictTflmTail(*m, *head, 4);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->unmodelled_ops, std::vector<std::string>{"MUL"});
  EXPECT_NE(TflmTailSummary(*head, *t, *t).find("MUL are not modelled"), std::string::npos);
}

// The goal of issue 20: the 64-bit tail equals what real TFLM measured (tflm_arena.json):
// arena_used_bytes - planned_bytes for a MicroInterpreter, persistent_bytes_host64 for the
// RecordingMicroInterpreter (whose allocator objects are 208 B larger). Exact for ds_cnn_kws and
// person_detect; mobilenet_v2_035_96 is 16 B short (see the report in README.md), so the bound is 16.
TEST(TflmTail, MatchesRealTflmOnReferenceModels) {
  const std::string dir = testing::TfliteReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference .tflite models not found";
  auto ref = nlohmann::json::parse(ReadAll(dir + "/tflm_arena.json"));
  int checked = 0, exact = 0;
  for (const auto& [name, row] : ref["models"].items()) {
    const std::string bytes = ReadAll(dir + "/" + name + ".tflite");
    auto m = tfl::ParseModel(bytes, name);
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().message();
    auto head = PredictTflmArena(bytes, *m);
    ASSERT_TRUE(head.ok()) << name;
    auto t64 = PredictTflmTail(*m, *head, 8);
    auto t32 = PredictTflmTail(*m, *head, 4);
    ASSERT_TRUE(t64.ok() && t32.ok()) << name;
    EXPECT_TRUE(t64->unmodelled_ops.empty()) << name;
    const int64_t used = row["arena_used_bytes"].get<int64_t>();
    const int64_t tail = used - row["planned_bytes"].get<int64_t>();
    const int64_t recorded = row["persistent_bytes_host64"].get<int64_t>();
    EXPECT_LE(std::llabs(t64->bytes - tail), 16) << name << ": predicted " << t64->bytes << ", measured " << tail;
    EXPECT_LE(std::llabs(t64->recording_bytes - recorded), 16) << name;
    EXPECT_LE(std::llabs(head->planned_bytes + t64->bytes - used), 16) << name;
    EXPECT_LT(t32->bytes, t64->bytes) << name;
    exact += t64->bytes == tail && t64->recording_bytes == recorded;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
  EXPECT_GE(exact, 2);
}

}  // namespace
}  // namespace sramplan::driver
