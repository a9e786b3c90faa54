// Per-op compute and weight statistics (what `sramplan inspect` prints).
#pragma once

#include "ir/graph.h"

namespace sramplan::analysis {

struct OpCost {
  int64_t macs = 0;          // multiply-accumulates
  int64_t weight_bytes = 0;  // bytes of constant inputs
  int64_t output_bytes = 0;
};

OpCost ComputeOpCost(const ir::Graph& g, const ir::Op& op);

}  // namespace sramplan::analysis
