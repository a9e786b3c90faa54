#include "analysis/regions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analysis/op_dag.h"
#include "import/import.h"
#include "test_util.h"

namespace sramplan::analysis {
namespace {

// A random DAG in topological order: each node gets up to 3 predecessors among the previous 6.
DagPreds RandomDag(std::mt19937& rng, int n) {
  DagPreds preds(n);
  for (int v = 1; v < n; ++v) {
    int k = static_cast<int>(rng() % 4);
    for (int i = 0; i < k; ++i) {
      int p = std::max(0, v - 1 - static_cast<int>(rng() % 6));
      if (std::find(preds[v].begin(), preds[v].end(), p) == preds[v].end()) preds[v].push_back(p);
    }
    std::sort(preds[v].begin(), preds[v].end());
  }
  return preds;
}

// reach[a][v]: a path a -> v of at least one edge.
std::vector<std::vector<bool>> BruteReach(const DagPreds& preds) {
  const int n = static_cast<int>(preds.size());
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (int v = 0; v < n; ++v)
    for (int p : preds[v]) {
      reach[p][v] = true;
      for (int a = 0; a < n; ++a)
        if (reach[a][p]) reach[a][v] = true;
    }
  return reach;
}

TEST(Regions, ReachabilityAndForcedCutsMatchBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 2 + trial % 30;
    DagPreds preds = RandomDag(rng, n);
    Reachability r(preds);
    auto reach = BruteReach(preds);
    for (int a = 0; a < n; ++a)
      for (int v = 0; v < n; ++v) {
        EXPECT_EQ(r.IsAncestor(a, v), static_cast<bool>(reach[a][v]));
        EXPECT_EQ(r.IsDescendant(v, a), static_cast<bool>(reach[a][v]));
      }
    for (int v = 0; v < n; ++v)
      for (int c = 0; c <= n; ++c) {
        int count = 0;
        for (int a = 0; a < c; ++a) count += reach[a][v];
        EXPECT_EQ(r.CountAncestorsBelow(v, c), count);
      }
    std::vector<bool> forced = ForcedCuts(r);
    ASSERT_EQ(forced.size(), static_cast<size_t>(n + 1));
    for (int i = 0; i <= n; ++i) {
      bool expect = true;
      for (int a = 0; a < i; ++a)
        for (int b = i; b < n; ++b) expect = expect && reach[a][b];
      EXPECT_EQ(forced[i], expect) << "trial " << trial << " cut " << i;
    }
  }
}

TEST(Regions, ForcedCutsOfADiamondChain) {
  // 0 -> {1, 2} -> 3 -> 4: cuts before 1 and before 3 and 4 are forced, the one before 2 is not.
  DagPreds preds = {{}, {0}, {0}, {1, 2}, {3}};
  std::vector<bool> forced = ForcedCuts(Reachability(preds));
  EXPECT_EQ(forced, (std::vector<bool>{true, true, false, true, true, true}));
}

TEST(Regions, CrossingCosts) {
  // Span 0..2 (weight 5) crosses cuts 1 and 2; span 1..4 (weight 7) crosses 2, 3, 4; 3..3 never.
  std::vector<AccessSpan> spans = {{0, 2, 5}, {1, 4, 7}, {3, 3, 100}};
  EXPECT_EQ(CrossingCosts(5, spans), (std::vector<int64_t>{0, 5, 12, 7, 7, 0}));
}

TEST(Regions, MinCostPartitionIsOptimal) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + trial % 11, max_len = 1 + static_cast<int>(rng() % 4);
    std::vector<int64_t> cost(n + 1, 0);
    for (int c = 1; c < n; ++c) cost[c] = static_cast<int64_t>(rng() % 5);
    auto parts = MinCostPartition(cost, max_len);
    // Contiguous cover of 0..n-1 with parts of at most max_len.
    ASSERT_FALSE(parts.empty());
    EXPECT_EQ(parts.front().first, 0);
    EXPECT_EQ(parts.back().second, n);
    int64_t got = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      EXPECT_LE(parts[k].second - parts[k].first, max_len);
      EXPECT_GT(parts[k].second, parts[k].first);
      if (k > 0) {
        EXPECT_EQ(parts[k].first, parts[k - 1].second);
        got += cost[parts[k].first];
      }
    }
    // Brute force over every set of cuts.
    std::pair<int64_t, int> best = {INT64_MAX, 0};
    for (int mask = 0; mask < (1 << (n - 1)); ++mask) {
      int64_t c = 0;
      int start = 0, count = 1;
      bool ok = true;
      for (int i = 1; i < n; ++i)
        if (mask >> (i - 1) & 1) {
          ok = ok && i - start <= max_len;
          c += cost[i];
          start = i;
          ++count;
        }
      ok = ok && n - start <= max_len;
      if (ok) best = std::min(best, {c, count});
    }
    EXPECT_EQ(std::make_pair(got, static_cast<int>(parts.size())), best) << "trial " << trial;
  }
}

TEST(Regions, ForkJoinDiamondResidualAndNesting) {
  // 0 forks into 1 and 2 (1 forks again into 3, 4 that join at 5), which join at 6; 6 -> 7 and a
  // residual 6 -> 8, 7 -> 8.
  DagPreds preds = {{}, {0}, {0}, {1}, {1}, {3, 4}, {2, 5}, {6}, {6, 7}};
  auto regions = ForkJoinRegions(preds);
  ASSERT_EQ(regions.size(), 3u);
  EXPECT_EQ(regions[0].entry, 0);
  EXPECT_EQ(regions[0].exit, 6);
  EXPECT_EQ(regions[0].nodes, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(regions[0].branches, 2);
  EXPECT_EQ(regions[1].entry, 1);
  EXPECT_EQ(regions[1].exit, 5);
  EXPECT_EQ(regions[1].nodes, (std::vector<int>{1, 3, 4, 5}));
  EXPECT_EQ(regions[2].entry, 6);
  EXPECT_EQ(regions[2].exit, 8);
  EXPECT_EQ(regions[2].nodes, (std::vector<int>{6, 7, 8}));
}

TEST(Regions, NoRegionWithASideEntryOrBranchesThatNeverMeet) {
  // 1 feeds 3 from outside the fork 0 -> {2, 3} -> 4.
  EXPECT_TRUE(ForkJoinRegions({{}, {}, {0}, {0, 1}, {2, 3}}).empty());
  // 0 -> {1, 2}, two outputs.
  EXPECT_TRUE(ForkJoinRegions({{}, {0}, {0}}).empty());
  // The side entry is inside a larger region: 0 -> {1, 2}; 1 -> {3, 4}; 2 -> 4; {3, 4} -> 5. The
  // fork at 1 does not close before 5 without the edge 2 -> 4, so only 0's region (0..5) exists.
  auto r = ForkJoinRegions({{}, {0}, {0}, {1}, {1, 2}, {3, 4}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].entry, 0);
  EXPECT_EQ(r[0].exit, 5);
}

// On random DAGs and real networks (NAS cells, inception, residual blocks) every region found is
// single-entry / single-exit.
TEST(Regions, ForkJoinRegionsAreSingleEntrySingleExit) {
  std::mt19937 rng(3);
  std::vector<DagPreds> dags;
  for (int i = 0; i < 30; ++i) dags.push_back(RandomDag(rng, 5 + i));
  for (const char* path : {"models/nas/darts-cifar10.graph.json", "models/onnx/googlenet.onnx",
                           "models/onnx/mobilenet_v2.onnx"}) {
    auto g = import::ImportModel(testing::SourcePath(path), {});
    ASSERT_TRUE(g.ok()) << g.status().message();
    DagPreds model = OpPredecessors(*g, ModelOrder(*g));
    dags.push_back(model);
  }
  size_t found = 0;
  for (const DagPreds& preds : dags) {
    const int n = static_cast<int>(preds.size());
    std::vector<std::vector<int>> succs(n);
    for (int v = 0; v < n; ++v)
      for (int p : preds[v]) succs[p].push_back(v);
    for (const ForkJoinRegion& r : ForkJoinRegions(preds)) {
      ++found;
      std::vector<bool> in(n, false);
      for (int v : r.nodes) in[v] = true;
      ASSERT_TRUE(in[r.entry] && in[r.exit]);
      EXPECT_GE(r.branches, 2);
      for (int v : r.nodes) {
        if (v != r.entry) {
          for (int p : preds[v]) EXPECT_TRUE(in[p]) << "side entry into " << v;
        }
        if (v != r.exit) {
          for (int s : succs[v]) EXPECT_TRUE(in[s]) << "side exit from " << v;
        }
      }
    }
  }
  EXPECT_GT(found, 20u);
}

TEST(Regions, OpPredecessorsFollowTheOrder) {
  auto g = import::ImportModel(testing::SourcePath("models/onnx/googlenet.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Schedule order = ModelOrder(*g);
  DagPreds preds = OpPredecessors(*g, order);
  ASSERT_EQ(preds.size(), order.size());
  int edges = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (size_t k = 0; k < preds[i].size(); ++k) {
      const int p = preds[i][k];
      ASSERT_LT(p, static_cast<int>(i));
      if (k > 0) {
        EXPECT_LT(preds[i][k - 1], p);  // ascending, unique
      }
      bool feeds = false;  // the op at p produces an input of the op at i
      for (ir::TensorId in : g->op(order[i]).inputs)
        feeds = feeds || g->tensor(in).producer == order[p];
      EXPECT_TRUE(feeds);
      ++edges;
    }
  }
  EXPECT_GT(edges, static_cast<int>(order.size()) - 2);
  // GoogLeNet's nine inception blocks are fork/join regions with four branches.
  int four_way = 0;
  for (const ForkJoinRegion& r : ForkJoinRegions(preds)) four_way += r.branches == 4;
  EXPECT_EQ(four_way, 9);
}

}  // namespace
}  // namespace sramplan::analysis
