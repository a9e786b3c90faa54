// Exact and portfolio placement for a fixed schedule (dynamic storage allocation: every buffer's
// live range is fixed; choose offsets so that no two buffers live at the same step share a byte,
// and the arena -- max over buffers of offset + bytes -- is as small as possible).
//
// The exact search follows the idea of MiniMalloc (Moffitt, ASPLOS 2023), re-derived here:
//  * time compression: the distinct live-range endpoints cut time into "sections";
//  * canonical solutions: every buffer rests on the floor of its sections (offset 0 or the top of a
//    buffer below it) and the search builds placements bottom-up. At each node it picks a "valley"
//    (a run of sections at one height whose neighbours are higher; the one with the least slack)
//    and branches on the leftmost buffer that goes on its floor, or on leaving it empty (raising
//    it to its lower neighbour). In a valley with a section that cannot hold any waste it branches
//    instead on which buffer covers that section;
//  * dominance: a valley is not left empty when a remaining buffer fits in the space wasted;
//    identical buffers are placed in index order;
//  * inference: per section, the floor plus the bytes still to place must fit under the bound, and
//    the one-machine bound with release dates (a buffer cannot go below the highest floor of its
//    sections) must hold;
//  * decomposition: where no unplaced buffer crosses a section boundary the problem splits into
//    independent parts, solved one after the other (a failure in one never re-opens another);
//  * memory: proved failures are remembered by (unplaced buffers, their lowest offsets);
//  * restarts: a portfolio of eight searches (the instance and its mirror image in time, four
//    branching/ordering configurations each) takes turns with Luby-sequence node budgets; runs
//    after the first are randomly perturbed. Budgets count nodes, so results are deterministic.
// A placement of arena <= C is looked for with C = capacity (if the best greedy one does not fit),
// then C = the live-bytes lower bound, then by bisection between the proved bound and the best
// arena found; "proved" means the search exhausted every canonical placement below it.
//
// Results are deterministic as long as no time limit cuts the search (ties broken by request
// index); a search cut by the time limit returns the best placement found so far with
// proved_optimal = false. Known limits: requests with a fixed_offset disable the exact search (the
// greedy result is returned); alignments that do not divide the sizes make proofs much slower.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "placement/placement.h"

namespace sramplan::placement {

struct OptimalOptions {
  double time_limit_s = 10;         // wall-clock budget of the exact search (<= 0: no search)
  std::optional<int64_t> capacity;  // if set, first find an arena <= capacity, then minimise
  int64_t node_limit = 0;           // > 0: also stop after this many search nodes (reproducible)
  bool minimize = true;  // false: with a capacity, stop at the first placement that fits it
                         // (without a capacity: no search, the best greedy placement)
};

struct OptimalResult {
  Placement placement;
  int64_t lower_bound = 0;  // live-bytes bound: max over steps of the bytes live at that step
  int64_t proved_lower_bound = 0;  // >= lower_bound: no arena below this exists (search proofs)
  bool proved_optimal = false;     // placement.arena_bytes is the minimum possible
  bool fits_capacity = true;       // arena_bytes <= capacity (true when no capacity was given)
  bool hit_limit = false;          // the time or node limit stopped the search
  int64_t nodes = 0;               // search nodes explored
  double seconds = 0;              // wall-clock time of the whole call
  double seconds_to_fit = -1;  // when a placement within the capacity was first known (-1: never)
  std::string method;  // algorithm that produced `placement` ("exact", "greedy-by-size", ...)
};

// Max over time of the sum of bytes of the buffers live at that time (also at least every
// fixed_offset + bytes and every single request's bytes, which the arena counts too).
int64_t LiveBytesLowerBound(const std::vector<BufferRequest>& requests);

// Greedy: buffers ordered by bytes x number of buffers they overlap in time (largest first; ties:
// larger bytes, then request order), each placed at the lowest aligned offset where it fits among
// the already placed buffers that overlap it in time.
Placement PlaceGreedyByConflicts(const std::vector<BufferRequest>& requests);

// Named greedy orders used by the portfolio, each first-fit at the lowest offset:
// "greedy-by-size", "greedy-by-area" (bytes x steps), "greedy-by-lifetime" (longest first),
// "greedy-by-conflicts", "greedy-by-start" (first use), "tflm" (TFLM's rule, see placement.h).
const std::vector<std::string>& GreedyOrderNames();
StatusOr<Placement> PlaceGreedyByName(const std::string& name,
                                      const std::vector<BufferRequest>& requests);

// The exact search alone, with greedy-by-conflicts as its starting upper bound. Requests with a
// fixed_offset are kept where they are; if there are any, the exact search is skipped (the greedy
// result is returned, proved optimal only if it meets the lower bound).
OptimalResult PlaceOptimal(const std::vector<BufferRequest>& requests,
                           const OptimalOptions& options);

// Portfolio: every greedy order of GreedyOrderNames(), then the exact search seeded with the best
// of them. `method` names the algorithm whose placement is returned.
OptimalResult PlaceBestOf(const std::vector<BufferRequest>& requests,
                          const OptimalOptions& options);

}  // namespace sramplan::placement
