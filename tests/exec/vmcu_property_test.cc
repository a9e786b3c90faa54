// Property test of the vmcu strategy on random MCUNet-style inverted-bottleneck chains (issue 12):
// every plan the strategy returns passes the independent verifier, runs in int8 inside its arena bit
// for bit as the naive run, and the code generator emits its steps. Planner, verifier, executor and
// code generator agree on when a segment step needs its '<op>.workspace' buffer and how large it is.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "plan/verifier.h"
#include "test_util.h"

namespace sramplan::exec {
namespace {

// One layer of a chain: a Conv (group 1) or a depthwise Conv with a k x k kernel.
struct Layer {
  bool depthwise = false;
  int64_t c_out = 0;  // ignored for depthwise
  int64_t k = 1, stride = 1, pad = 0;
  bool relu6 = true;
};

class ChainBuilder {
 public:
  ChainBuilder(const std::string& name, int64_t hw, int64_t c) {
    g_.name = name;
    g_.layout = ir::Layout::kNHWC;
    cur_ = Tensor("x", {1, hw, hw, c}, ir::TensorKind::kInput, ir::DataType::kInt8);
  }

  // Adds a layer; false (nothing added) when its window does not fit the current extent.
  bool Add(const Layer& l) {
    const auto x = g_.tensor(cur_).shape;
    const int64_t span = x[1] + 2 * l.pad - l.k;
    if (span < 0) return false;
    const int64_t oh = span / l.stride + 1;
    const int64_t c_out = l.depthwise ? x[3] : l.c_out;
    const std::string n = "l" + std::to_string(g_.num_ops());
    ir::TensorId w = Tensor(n + "_w", l.depthwise ? std::vector<int64_t>{x[3], l.k, l.k, 1}
                                                  : std::vector<int64_t>{c_out, l.k, l.k, x[3]},
                            ir::TensorKind::kConstant, ir::DataType::kInt8);
    ir::TensorId b = Tensor(n + "_b", {c_out}, ir::TensorKind::kConstant, ir::DataType::kInt32);
    ir::TensorId y = Tensor(n + "_out", {1, oh, oh, c_out}, ir::TensorKind::kActivation, ir::DataType::kInt8);
    ir::Op op;
    op.name = n;
    op.type = "Conv";
    op.inputs = {cur_, w, b};
    op.outputs = {y};
    op.attrs.Set("kernel_shape", std::vector<int64_t>{l.k, l.k});
    op.attrs.Set("strides", std::vector<int64_t>{l.stride, l.stride});
    op.attrs.Set("pads", std::vector<int64_t>{l.pad, l.pad, l.pad, l.pad});
    op.attrs.Set("dilations", std::vector<int64_t>{1, 1});
    op.attrs.Set("group", l.depthwise ? x[3] : int64_t{1});
    op.attrs.Set("activation", std::string(l.relu6 ? "relu6" : "none"));
    g_.AddOp(std::move(op));
    cur_ = y;
    return true;
  }
  // An Add of the current tensor and `skip` (same shape) becomes the current tensor.
  void Residual(ir::TensorId skip) {
    const std::string n = "add" + std::to_string(g_.num_ops());
    ir::TensorId y = Tensor(n + "_out", g_.tensor(cur_).shape, ir::TensorKind::kActivation, ir::DataType::kInt8);
    ir::Op op;
    op.name = n;
    op.type = "Add";
    op.inputs = {skip, cur_};
    op.outputs = {y};
    g_.AddOp(std::move(op));
    cur_ = y;
  }
  ir::TensorId current() const { return cur_; }
  const std::vector<int64_t>& shape() const { return g_.tensor(cur_).shape; }
  ir::Graph Finish() {
    g_.tensor(cur_).kind = ir::TensorKind::kOutput;
    return std::move(g_);
  }

 private:
  ir::TensorId Tensor(const std::string& name, std::vector<int64_t> shape, ir::TensorKind kind, ir::DataType dt) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.kind = kind;
    t.dtype = dt;
    return g_.AddTensor(std::move(t));
  }
  ir::Graph g_;
  ir::TensorId cur_;
};

// A random chain of 1 to 3 inverted bottlenecks (expand 1x1 or none, depthwise k in {1,3,5,7},
// stride 1 or 2, same padding or none, project 1x1, residual where shapes allow), sometimes a
// standalone 1x1 depthwise + projection, on an input of 4..12 pixels square and 4..24 channels.
ir::Graph RandomChain(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
  ChainBuilder b("chain" + std::to_string(seed), pick({4, 6, 7, 8, 9, 12}), pick({4, 8, 12, 16, 24}));
  const int blocks = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < blocks; ++i) {
    const ir::TensorId block_in = b.current();
    const std::vector<int64_t> in_shape = b.shape();
    const int64_t c = in_shape[3];
    const int64_t ratio = pick({1, 2, 3, 4, 6});
    if (ratio > 1) b.Add({false, c * ratio, 1, 1, 0, true});
    const int64_t k = pick({1, 3, 5, 7});
    const int64_t stride = pick({1, 1, 2});
    const int64_t pad = rng() % 3 == 0 ? 0 : (k - 1) / 2;
    if (!b.Add({true, 0, k, stride, pad, true})) b.Add({true, 0, 1, 1, 0, true});
    const int64_t c_out = rng() % 3 == 0 ? c : pick({4, 8, 16, 24, 32});
    b.Add({false, c_out, 1, 1, 0, false});
    if (b.shape() == in_shape && rng() % 2 == 0) b.Residual(block_in);
    if (rng() % 4 == 0) {  // the issue's tail: a 1x1 depthwise and a 1x1 projection
      b.Add({true, 0, 1, 1, 0, true});
      b.Add({false, pick({8, 16, 24}), 1, 1, 0, false});
    }
  }
  return b.Finish();
}

// The smallest chain of issue 12: expand 1x1 16->48, depthwise 7x7 without padding on 8x8,
// project 48->16, a 1x1 depthwise and a 1x1 projection to 24 channels.
ir::Graph IssueChain() {
  ChainBuilder b("issue12", 8, 16);
  b.Add({false, 48, 1, 1, 0, true});
  b.Add({true, 0, 7, 1, 0, true});
  b.Add({false, 16, 1, 1, 0, false});
  b.Add({true, 0, 1, 1, 0, true});
  b.Add({false, 24, 1, 1, 0, false});
  return b.Finish();
}

struct Outcome {
  int segment_steps = 0;
  std::string error;  // "" when the plan verified, ran bit-exact and generated code
};

Outcome PlanVerifyRunGenerate(const ir::Graph& g, const std::string& target_spec) {
  Outcome o;
  Status gs = ir::VerifyGraph(g);
  if (!gs.ok()) return {0, "graph: " + gs.message()};
  auto t = target::LoadTarget(target_spec);
  if (!t.ok()) return {0, "target: " + t.status().message()};
  driver::PlanOptions opts;
  opts.dtype_name = "int8";
  auto p = driver::RunStrategy(g, *t, "vmcu", opts);
  if (!p.ok()) return {0, "plan: " + p.status().message()};
  for (int s = 0; s < static_cast<int>(p->steps.size()); ++s) o.segment_steps += plan::IsSegmentStep(*p, s);
  const plan::VerifyResult v = plan::VerifyPlan(*p);
  if (!v.ok()) return {o.segment_steps, "verifier: " + v.Summary()};
  auto q = QuantizeModel(g, kDefaultSeed, nullptr);
  if (!q.ok()) return {o.segment_steps, "quantize: " + q.status().message()};
  auto naive = RunNaive(g, testing::PlanOrder(g, *p), q->data, &*q);
  if (!naive.ok()) return {o.segment_steps, "naive: " + naive.status().message()};
  auto arena = RunArena(g, *p, q->data, &*q);
  if (!arena.ok()) return {o.segment_steps, "arena: " + arena.status().message()};
  const std::string diff = Compare(g, *naive, *arena, *p);
  if (!diff.empty()) return {o.segment_steps, "compare: " + diff};
  auto fw = codegen::GenerateFirmware(g, *p, *q, {});
  if (!fw.ok()) return {o.segment_steps, "codegen: " + fw.status().message()};
  if (fw->extra_ram_bytes != 0) return {o.segment_steps, "codegen: a workspace outside the plan"};
  return o;
}

TEST(VmcuProperty, IssueChainVerifiesRunsAndGenerates) {
  const Outcome o = PlanVerifyRunGenerate(IssueChain(), "sram:1MiB");
  EXPECT_EQ(o.error, "");
  EXPECT_GT(o.segment_steps, 0);
}

TEST(VmcuProperty, RandomInvertedBottleneckChains) {
  const auto t0 = std::chrono::steady_clock::now();
  int seeds = 0, with_segment_steps = 0, failures = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const ir::Graph g = RandomChain(seed);
    const Outcome o = PlanVerifyRunGenerate(g, seed % 2 ? "sram:1MiB" : "stm32f411re");
    ++seeds;
    with_segment_steps += o.segment_steps > 0;
    if (!o.error.empty() && ++failures <= 5) ADD_FAILURE() << "seed " << seed << ": " << o.error;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d random chains, %d with segment steps, %d failures (%.1f s)\n", seeds, with_segment_steps,
              failures, s);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(with_segment_steps, seeds / 2);  // the property is about segment steps
}

}  // namespace
}  // namespace sramplan::exec
