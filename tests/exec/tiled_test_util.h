// Helpers shared by the tile-by-tile executor tests (exec_tiled_test.cc, exec_tiled_pad_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "test_util.h"
#include "target/target.h"

namespace sramplan::exec::tiled_test {

// The optimus-accel target with its global buffer set to `buffer_bytes`.
inline target::Target Accel(int64_t buffer_bytes) {
  auto t = target::LoadTarget("optimus-accel");
  EXPECT_TRUE(t.ok());
  target::Target tt = *t;
  tt.levels[tt.arena_level].capacity = buffer_bytes;
  return tt;
}

// Plans `g` with strategy `s` in `dtype`; an empty plan (and a test failure) when it does not plan.
inline plan::Plan Plan(const ir::Graph& g, const target::Target& t, const std::string& s, const std::string& dtype) {
  driver::PlanOptions o;
  o.dtype_name = dtype;
  auto p = driver::RunStrategy(g, t, s, o);
  EXPECT_TRUE(p.ok()) << s << ": " << p.status().message();
  return p.ok() ? *p : plan::Plan{};
}

// A model's seeded data: int8 quantised (`q` set) or float32.
struct RunData {
  std::optional<QuantizedModel> q;
  ModelData data;
  const QuantizedModel* quant() const { return q ? &*q : nullptr; }
};

inline RunData MakeRunData(const ir::Graph& g, bool int8) {
  RunData r;
  if (int8) {
    auto qm = QuantizeModel(g, kDefaultSeed, nullptr);
    EXPECT_TRUE(qm.ok()) << qm.status().message();
    if (qm.ok()) {
      r.q = std::move(qm).value();
      r.data = r.q->data;
    }
  } else {
    auto d = MakeModelData(g, kDefaultSeed);
    EXPECT_TRUE(d.ok());
    if (d.ok()) r.data = std::move(d).value();
  }
  return r;
}

// Runs `p` naively and tile by tile; "" when the outputs are bit-identical and the DRAM bytes the
// plan's (Compare), else why. `notes`: the run's per-group notes.
inline std::string RunBoth(const ir::Graph& g, const plan::Plan& p, const QuantizedModel* q, const ModelData& data,
                           std::vector<std::string>* notes = nullptr) {
  auto naive = RunNaive(g, testing::PlanOrder(g, p), data, q);
  if (!naive.ok()) return "naive: " + naive.status().message();
  auto arena = RunArena(g, p, data, q);
  if (!arena.ok()) return "arena: " + arena.status().message();
  if (notes) *notes = arena->notes;
  return Compare(g, *naive, *arena, p);
}

}  // namespace sramplan::exec::tiled_test
