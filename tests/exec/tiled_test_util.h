// Helpers shared by the tile-by-tile executor tests (exec_tiled_test.cc, exec_tiled_pad_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "driver/strategy.h"
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

}  // namespace sramplan::exec::tiled_test
