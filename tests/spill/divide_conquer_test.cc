// Divide and conquer: forced cuts on a chain (boundary traffic worked out by hand), and random DAGs
// where the stitched solution is valid and sits between its lower bound and the fixed-order optimum.
#include "spill/divide_conquer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "spill/cosma.h"
#include "spill/spill.h"
#include "spill_builders.h"

namespace sramplan::spill {
namespace {

using testing::AddOp;
using testing::AddTensor;
using testing::TwoBranches;

// x -> t1 -> t2 -> t3 -> t4 -> t5 -> y, all 10 bytes, budget 20 = M_min: the whole chain runs with
// no traffic. With at most 3 ops per part the only cut is before step 3, crossed by t3 (produced at
// step 2, read at step 3): the stitched parts store it (a spill, 10 B) and load it (a reload, 10 B),
// 20 B while their bound (sum of the parts' optima) is 0. The fixed-order solve of the whole order
// carries t3 across the cut on chip: 0 B, which meets the bound over all orders (0), so it is chosen.
TEST(DivideAndConquerTest, ChainCutIsCarriedAcrossByTheWholeOrderSolve) {
  SpillProblem p;
  int prev = AddTensor(&p, "x", 10, true);
  for (int i = 1; i <= 6; ++i) {
    int t = AddTensor(&p, i == 6 ? "y" : "t" + std::to_string(i), 10, false, false, i == 6);
    AddOp(&p, "op" + std::to_string(i), {prev}, {t});
    prev = t;
  }
  p.budget = 20;
  DcOptions o;
  o.max_ops_per_part = 3;
  auto s = SolveDivideAndConquer(p, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(CheckSolution(p, *s).ok()) << CheckSolution(p, *s).message();
  EXPECT_EQ(s->method, "cosma-dc");
  EXPECT_EQ(s->noncompulsory_bytes, 0);
  EXPECT_EQ(s->lower_bound_bytes, 0);
  EXPECT_EQ(s->all_orders_lower_bound_bytes, 0);
  EXPECT_TRUE(s->proved_optimal);
  EXPECT_NE(s->detail.find("2 parts"), std::string::npos) << s->detail;
  EXPECT_NE(s->detail.find("gap 20 B"), std::string::npos) << s->detail;  // the stitched candidate
  EXPECT_NE(s->detail.find("chosen: fixed-schedule solve"), std::string::npos) << s->detail;

  // One part covering everything is the plain fixed-order ILP: 0 bytes, proved.
  o.max_ops_per_part = 6;
  auto whole = SolveDivideAndConquer(p, o);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->noncompulsory_bytes, 0);
  EXPECT_TRUE(whole->proved_optimal);
}

// A weight read in two parts, and an activation crossing the cut. With room for both, D&C pins them:
// each stays resident across the cut (one residency, no reload), so nothing non-compulsory is paid.
// With budget 25 = M_min only the weight can be pinned (5 B off each part's budget leaves 20 B, what
// A and D need without it): b is spilled and reloaded (20 B) instead of 25 B for plain stitching; the
// fixed-order solve of the whole order then does better.
TEST(DivideAndConquerTest, BoundaryTensorsArePinnedWhenTheBudgetAllows) {
  SpillProblem p;
  int x = AddTensor(&p, "x", 10, true);
  int w = AddTensor(&p, "w", 5, false, true);
  int a = AddTensor(&p, "a", 10);
  int b = AddTensor(&p, "b", 10);
  int c = AddTensor(&p, "c", 10);
  int y = AddTensor(&p, "y", 10, false, false, true);
  AddOp(&p, "A", {x, w}, {a});
  AddOp(&p, "B", {a}, {b});
  AddOp(&p, "C", {b}, {c});
  AddOp(&p, "D", {c, w}, {y});
  p.budget = 40;  // everything fits: the whole problem needs no traffic at all
  DcOptions o;
  o.max_ops_per_part = 2;  // parts {A,B} and {C,D}; b and w cross the cut
  auto s = SolveDivideAndConquer(p, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(CheckSolution(p, *s).ok()) << CheckSolution(p, *s).message();
  EXPECT_EQ(s->noncompulsory_bytes, 0) << s->detail;
  EXPECT_EQ(s->compulsory_bytes, 10 + 5 + 10);  // load x, load w, store y
  EXPECT_TRUE(s->proved_optimal);
  EXPECT_NE(s->detail.find("pinned"), std::string::npos) << s->detail;
  int w_pieces = 0;
  for (const Residency& r : s->residencies) {
    if (r.tensor == w) {
      ++w_pieces;
      EXPECT_EQ(r.first_step, 0);
      EXPECT_EQ(r.last_step, 3);
    }
  }
  EXPECT_EQ(w_pieces, 1);

  p.budget = 25;
  s = SolveDivideAndConquer(p, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(CheckSolution(p, *s).ok()) << CheckSolution(p, *s).message();
  // The stitched candidate pins w and pays 20 B for b (spill + reload across the cut); the whole-order
  // fixed solve keeps b on chip too (B: a + b + w = 25, C: b + c + w = 25): 0 B, chosen.
  EXPECT_NE(s->detail.find("1 boundary tensors pinned"), std::string::npos) << s->detail;
  EXPECT_NE(s->detail.find("gap 20 B"), std::string::npos) << s->detail;
  EXPECT_EQ(s->noncompulsory_bytes, 0) << s->detail;
  EXPECT_NE(s->detail.find("chosen: fixed-schedule solve"), std::string::npos) << s->detail;
  (void)b;
}

TEST(DivideAndConquerTest, BudgetBelowMinBudgetIsOutOfMemory) {
  SpillProblem p;
  int x = AddTensor(&p, "x", 10, true);
  int y = AddTensor(&p, "y", 10, false, false, true);
  AddOp(&p, "only", {x}, {y});
  p.budget = 19;
  auto s = SolveDivideAndConquer(p, DcOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(s.status().message().find("'only'"), std::string::npos) << s.status().message();
}

SpillProblem RandomProblem(uint32_t seed, int n_ops) {
  std::mt19937 rng(seed);
  SpillProblem p;
  auto bytes = [&]() { return static_cast<int64_t>(1 + rng() % 8); };
  std::vector<int> pool;
  pool.push_back(AddTensor(&p, "in", bytes(), true));
  for (int o = 0; o < n_ops; ++o) {
    std::vector<int> in;
    int k = 1 + static_cast<int>(rng() % 2);
    for (int i = 0; i < k; ++i) {
      int back = static_cast<int>(rng() % std::min<size_t>(pool.size(), rng() % 5 == 0 ? 6 : 2));
      int t = pool[pool.size() - 1 - back];
      if (std::find(in.begin(), in.end(), t) == in.end()) in.push_back(t);
    }
    if (rng() % 5 == 0) in.push_back(AddTensor(&p, "w" + std::to_string(o), bytes(), false, true));
    int out = AddTensor(&p, "t" + std::to_string(o), bytes());
    AddOp(&p, "op" + std::to_string(o), in, {out});
    pool.push_back(out);
  }
  std::vector<bool> read(p.tensors.size(), false);
  for (const auto& op : p.ops)
    for (int t : op.inputs) read[t] = true;
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (!read[t] && !p.tensors[t].graph_input && !p.tensors[t].weight) p.tensors[t].graph_output = true;
  p.budget = MinBudget(p) + static_cast<int64_t>(rng() % 6);
  return p;
}

TEST(DivideAndConquerTest, RandomInstancesAreValidAndBracketTheOptimum) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SpillProblem p = RandomProblem(seed, 12 + static_cast<int>(seed % 3) * 4);
    std::vector<int> order(p.ops.size());
    std::iota(order.begin(), order.end(), 0);
    DcOptions o;
    o.max_ops_per_part = 6;
    o.time_limit_s = 2;
    o.reorder_rounds = 0;  // the base order only
    auto dc = SolveDivideAndConquer(p, o);
    ASSERT_TRUE(dc.ok()) << dc.status().message();
    ASSERT_TRUE(CheckSolution(p, *dc).ok()) << CheckSolution(p, *dc).message();
    EXPECT_EQ(dc->order, order);
    EXPECT_LE(dc->lower_bound_bytes, dc->noncompulsory_bytes);

    CosmaOptions co;
    co.fixed_order = order;
    co.time_limit_s = 2;
    auto opt = SolveCosma(p, co);
    ASSERT_TRUE(opt.ok()) << opt.status().message();
    // The parts' bounds are a bound for every solution of this order; D&C is one such solution.
    EXPECT_LE(dc->lower_bound_bytes, opt->noncompulsory_bytes) << dc->detail;
    if (opt->proved_optimal) {
      EXPECT_GE(dc->noncompulsory_bytes, opt->noncompulsory_bytes) << dc->detail;
    }

    // Never worse than the fixed-schedule solve of the base order.
    EXPECT_LE(dc->noncompulsory_bytes, opt->noncompulsory_bytes) << dc->detail;

    // Parts that may reorder their own ops, and the reorder rounds, are valid too, never worse than
    // the fixed-schedule solve, and never below the bound over all orders.
    o.joint_parts = true;
    o.reorder_rounds = 3;
    auto dcj = SolveDivideAndConquer(p, o);
    ASSERT_TRUE(dcj.ok()) << dcj.status().message();
    ASSERT_TRUE(CheckSolution(p, *dcj).ok()) << CheckSolution(p, *dcj).message();
    EXPECT_LE(dcj->lower_bound_bytes, dcj->noncompulsory_bytes);
    EXPECT_EQ(dcj->lower_bound_bytes, dcj->all_orders_lower_bound_bytes);
    EXPECT_LE(dcj->noncompulsory_bytes, opt->noncompulsory_bytes) << dcj->detail;
  }
}

// x(in,5) -A-> a(10); branch P: a -P1-> p1(10) -P2-> p2(5); branch Q: a -Q1-> q1(10) -Q2-> q2(5);
// F: p2,q2 -> y(out,10); budget 25. The base order A,P1,Q1,P2,Q2,F costs 20 B at its optimum (p1 leaves
// over Q1); A,P1,P2,Q1,Q2,F costs 0. With parts of at most 4 ops the first round cannot move P2 before
// Q1 (different parts), the second (parts of 6 ops: everything) can: D&C finds 0, below the
// fixed-schedule solve, and meets the bound over all orders.
TEST(DivideAndConquerTest, ReorderRoundsBeatTheFixedScheduleSolve) {
  SpillProblem p = TwoBranches();
  CosmaOptions co;
  co.fixed_order = {0, 1, 2, 3, 4, 5};
  auto fixed = SolveCosma(p, co);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->noncompulsory_bytes, 20);
  DcOptions o;
  o.max_ops_per_part = 4;
  auto s = SolveDivideAndConquer(p, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(CheckSolution(p, *s).ok());
  EXPECT_EQ(s->noncompulsory_bytes, 0) << s->detail;
  EXPECT_TRUE(s->proved_optimal);
  EXPECT_NE(s->detail.find("chosen: round"), std::string::npos) << s->detail;
}

// A chain of six ops without traffic, then TwoBranches' diamond fed by the chain's end (budget 25):
// in the breadth-first order (A, P1, Q1, P2, Q2, F) the diamond moves 20 B, depth-first none. A reorder
// round with windows of 6 ops cuts the 12 steps into the chain and the diamond; only the diamond, where
// the incumbent spills and reloads, is re-solved (the label counts one window), the chain keeps its
// order, and the placed result moves nothing.
TEST(DivideAndConquerTest, ReorderRoundReSolvesOnlyWindowsWithTraffic) {
  SpillProblem p;
  int prev = AddTensor(&p, "x", 5, true);
  for (int i = 1; i <= 6; ++i) {
    int t = AddTensor(&p, "t" + std::to_string(i), i == 6 ? 5 : 10);
    AddOp(&p, "op" + std::to_string(i), {prev}, {t});
    prev = t;
  }
  testing::AddTwoBranches(&p, prev);
  p.budget = 25;
  CosmaOptions co;
  co.fixed_order.resize(12);
  std::iota(co.fixed_order.begin(), co.fixed_order.end(), 0);
  auto fixed = SolveCosma(p, co);
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  ASSERT_EQ(fixed->noncompulsory_bytes, 20) << fixed->detail;
  std::string label;
  auto r = ReorderRound(p, *fixed, 6, 30, false, &label);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(CheckSolution(p, *r).ok());
  EXPECT_EQ(r->noncompulsory_bytes, 0) << r->detail;
  EXPECT_EQ(label.rfind("1 windows of <= 6 ops reordered", 0), 0u) << label;
  EXPECT_EQ(std::vector<int>(r->order.begin(), r->order.begin() + 6), std::vector<int>({0, 1, 2, 3, 4, 5}));
  // No traffic anywhere: nothing to re-solve, the incumbent comes back.
  std::string label0;
  auto same = ReorderRound(p, *r, 6, 30, false, &label0);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->order, r->order);
  EXPECT_EQ(label0.rfind("0 windows", 0), 0u) << label0;
}

}  // namespace
}  // namespace sramplan::spill
