// The cost functions rebuild exactly (bit for bit) the energy and traffic the plans report, on
// bundled models (the strategies' metrics passes call them; tests/golden proves the plans did not
// change when they moved here from the driver).
#include "cost/energy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "driver/strategy.h"
#include "import/import.h"
#include "plan/plan.h"
#include "test_util.h"

namespace sramplan::cost {
namespace {

struct Case {
  std::string model;
  std::string target;
  std::string strategy;
  std::string budget;  // budget strategies
};

struct Planned {
  ir::Graph g;
  target::Target t;
  HardwareModel hw;
  plan::Plan p;
  analysis::Schedule sched;
};

Planned PlanCase(const Case& c) {
  auto g = import::ImportModel(testing::SourcePath(c.model), {});
  EXPECT_TRUE(g.ok()) << c.model << ": " << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  auto t = target::LoadTarget(c.target);
  EXPECT_TRUE(t.ok()) << t.status().message();
  auto hw = HardwareModel::From(*t);
  EXPECT_TRUE(hw.ok()) << hw.status().message();
  driver::PlanOptions o;
  o.budget = c.budget;
  auto p = driver::RunStrategy(*g, *t, c.strategy, o);
  EXPECT_TRUE(p.ok()) << c.model << " " << c.strategy << ": " << p.status().message();
  analysis::Schedule sched = testing::PlanOrder(*g, *p);
  return {std::move(g).value(), std::move(t).value(), std::move(hw).value(), std::move(p).value(),
          std::move(sched)};
}

bool IsConstant(const ir::Tensor& t) { return t.kind == ir::TensorKind::kConstant; }

// The plan's energy and off-chip metrics, rebuilt with the cost functions in the order the strategy
// builds them: transfers, then op accesses (weights not placed in the arena read from their level).
Ledger Rebuild(const Planned& x) {
  const HardwareModel& hw = x.hw;
  Ledger l(hw);
  for (const plan::Transfer& tr : x.p.transfers) {
    TransferKind kind = tr.kind == "load"     ? TransferKind::kLoad
                        : tr.kind == "reload" ? TransferKind::kReload
                        : tr.kind == "store"  ? TransferKind::kStore
                                              : TransferKind::kSpill;
    AddTransfer(hw, hw.arena(), hw.dram(), kind, tr.bytes, &l);
  }
  std::set<std::string> on_chip;
  for (const plan::Buffer& b : x.p.buffers)
    if (b.level == x.p.arena_level) on_chip.insert(b.tensor);
  AddOpAccesses(
      x.g, x.sched, hw, hw.arena(), hw.weights(),
      [&](const ir::Tensor& t) { return IsConstant(t) && !on_chip.count(t.name); }, &l);
  return l;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      {"models/onnx/mobilenet_v2.onnx", "stm32f767zi", "tflm", ""},
      {"models/onnx/mobilenet_v2.onnx", "exynos-npu", "hmcos", ""},
      {"models/onnx/resnet18.onnx", "sram:64MiB", "inplace", ""},
      {"models/onnx/squeezenet1_0.onnx", "exynos-npu", "belady", "min"},
      {"models/onnx/mobilenet_v2.onnx", "sram:64MiB", "greedy", "mpmf"},
      {"models/mcunet_blocks/B3.graph.json", "stm32f411re", "vmcu", ""},
      {"models/mcunet_blocks/mcunet-320kb-imagenet.graph.json", "stm32f411re", "tinyengine", ""},
  };
  return kCases;
}

TEST(Energy, RebuildsThePlansMetricsBitForBit) {
  int with_transfers = 0;
  for (const Case& c : Cases()) {
    Planned x = PlanCase(c);
    const plan::Metrics& m = x.p.metrics;
    Ledger l = Rebuild(x);
    const std::string what = c.model + " " + c.target + " " + c.strategy;
    EXPECT_EQ(l.energy_pj, m.energy_pj) << what;  // exact: same additions in the same order
    EXPECT_GT(l.energy_pj, 0) << what;
    EXPECT_EQ(l.offchip_read_bytes, m.offchip_read_bytes) << what;
    EXPECT_EQ(l.offchip_write_bytes, m.offchip_write_bytes) << what;
    EXPECT_EQ(l.noncompulsory_read_bytes, m.noncompulsory_read_bytes) << what;
    EXPECT_EQ(l.noncompulsory_write_bytes, m.noncompulsory_write_bytes) << what;
    with_transfers += !x.p.transfers.empty();
    // The same accesses, evaluated per level without MACs: equal up to rounding (another order).
    Traffic tr = l.traffic;
    tr.macs = 0;
    Cost cost = Evaluate(x.hw, tr);
    EXPECT_NEAR(cost.energy_pj, l.energy_pj, 1e-9 * l.energy_pj) << what;
    EXPECT_EQ(cost.dram_read, l.offchip_read_bytes) << what;
    if (x.hw.dram() >= 0) {
      EXPECT_EQ(cost.dram_write, l.offchip_write_bytes) << what;
    }
  }
  EXPECT_GE(with_transfers, 2);
}

}  // namespace
}  // namespace sramplan::cost
