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

// Appends TwoBranches' diamond fed by tensor `x`: x -A-> a(10); branch P: a -P1-> p1(10) -P2-> p2(5);
// branch Q: a -Q1-> q1(10) -Q2-> q2(5); F: p2,q2 -> y(out,10).
inline void AddTwoBranches(SpillProblem* p, int x) {
  int a = AddTensor(p, "a", 10);
  int p1 = AddTensor(p, "p1", 10);
  int q1 = AddTensor(p, "q1", 10);
  int p2 = AddTensor(p, "p2", 5);
  int q2 = AddTensor(p, "q2", 5);
  int y = AddTensor(p, "y", 10, false, false, true);
  AddOp(p, "A", {x}, {a});
  AddOp(p, "P1", {a}, {p1});
  AddOp(p, "Q1", {a}, {q1});
  AddOp(p, "P2", {p1}, {p2});
  AddOp(p, "Q2", {q1}, {q2});
  AddOp(p, "F", {p2, q2}, {y});
}

// x(in,5) and the diamond above; budget 25. Model order A,P1,Q1,P2,Q2,F; A,P1,P2,Q1,Q2,F needs no
// traffic.
inline SpillProblem TwoBranches() {
  SpillProblem p;
  AddTwoBranches(&p, AddTensor(&p, "x", 5, true));
  p.budget = 25;
  return p;
}

}  // namespace sramplan::spill::testing
