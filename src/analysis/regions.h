// Region structure of a dependency graph, shared by the schedulers and spill planners. Works on an
// abstract DAG (nodes 0..n-1 in a topological order: every predecessor of v is smaller than v), so
// libraries that never see the IR (spill/) use it as well as those that do (schedule/).
//
//  - Reachability: ancestor / descendant bit sets.
//  - ForcedCuts: positions of the order where every node before is an ancestor of every node after,
//    so every valid order runs the two sides one after the other (a cut that loses nothing).
//  - CrossingCosts + MinCostPartition: cut an order into contiguous parts of bounded length so that
//    the weight of what lives across the cuts is smallest (COSMA's divide-and-conquer break
//    points).
//  - ForkJoinRegions: single-entry / single-exit regions that open at a fork (a node with several
//    successors) and close at the join where the branches meet (inception blocks, residual blocks,
//    NAS cells): the modules of module buffering.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sramplan::analysis {

// Predecessors of each node; preds[v][i] < v for all i.
using DagPreds = std::vector<std::vector<int>>;

class Reachability {
 public:
  explicit Reachability(const DagPreds& preds);
  int size() const { return n_; }
  // a != v and a runs before v in every valid order (there is a path a -> ... -> v).
  bool IsAncestor(int a, int v) const { return Get(anc_, v, a); }
  bool IsDescendant(int d, int v) const { return Get(desc_, v, d); }
  // Number of ancestors of v with an index below c.
  int CountAncestorsBelow(int v, int c) const;
  const std::vector<std::vector<int>>& succs() const { return succs_; }
  int max_pred(int v) const { return max_pred_[v]; }  // -1 without predecessors

 private:
  bool Get(const std::vector<uint64_t>& m, int r, int c) const {
    return (m[static_cast<size_t>(r) * words_ + (c >> 6)] >> (c & 63)) & 1;
  }
  int n_;
  size_t words_;
  std::vector<uint64_t> anc_, desc_;  // row v: the ancestors / descendants of v
  std::vector<std::vector<int>> succs_;
  std::vector<int> max_pred_;
};

// forced[i] for i in 0..n: the cut before node i is forced (every node < i is an ancestor of every
// node >= i); forced[0] and forced[n] are true.
std::vector<bool> ForcedCuts(const Reachability& r);

// Something accessed at positions first..last (inclusive) of an order, costing `weight` when a cut
// separates its accesses.
struct AccessSpan {
  int first = 0;
  int last = 0;
  int64_t weight = 0;
};
// cost[c] for c in 0..n: the total weight of the spans with first < c <= last (accessed both before
// position c and from c on); cost[0] = cost[n] = 0. Spans with last <= first never cross a cut.
std::vector<int64_t> CrossingCosts(int n, std::span<const AccessSpan> spans);
// Splits positions 0..n-1 (n = cut_cost.size() - 1) into contiguous parts [begin, end) of at most
// max_len positions minimising (sum of cut_cost at the cuts, number of parts), lexicographically;
// ties go to the earliest predecessor cut. max_len >= 1.
std::vector<std::pair<int, int>> MinCostPartition(std::span<const int64_t> cut_cost, int max_len);

// A single-entry / single-exit region: `entry` forks into several branches that all meet at `exit`;
// every edge into a node of the region other than `entry` comes from the region, and every edge out
// of a node other than `exit` stays in it.
struct ForkJoinRegion {
  int entry = 0;
  int exit = 0;
  std::vector<int> nodes;  // entry, the branches' nodes and exit, ascending
  int branches = 0;        // successors of entry inside the region
};
// For every fork, the smallest fork/join region it opens (the first post-dominator of the fork that
// closes a single-entry / single-exit region), if any; ordered by entry. Consecutive regions may
// share a node (one's exit is the next one's entry). Forks whose branches never meet (several graph
// outputs) open none.
std::vector<ForkJoinRegion> ForkJoinRegions(const DagPreds& preds);

}  // namespace sramplan::analysis
