// Builders of spill::SpillProblem instances for the spill tests (shared by cosma_test and
// divide_conquer_test).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "spill/spill.h"

namespace sramplan::spill::testing {

inline int AddTensor(SpillProblem* p, const std::string& name, int64_t bytes, bool input = false,
                     bool weight = false, bool output = false) {
  SpillTensor t;
  t.name = name;
  t.bytes = bytes;
  t.graph_input = input;
  t.weight = weight;
  t.graph_output = output;
  p->tensors.push_back(t);
  return static_cast<int>(p->tensors.size()) - 1;
}

inline void AddOp(SpillProblem* p, const std::string& name, std::vector<int> in, std::vector<int> out) {
  p->ops.push_back({name, std::move(in), std::move(out)});
}

}  // namespace sramplan::spill::testing
