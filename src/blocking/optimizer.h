// Searching blocking strings for one layer on a fixed hierarchy (paper Sec. 3.5).
//
// The space: strings built innermost loop first, each dimension split into at most
// `max_loops_per_dim` loops whose sizes divide the layer's extent (ValidateString), two loops of the
// same dimension never adjacent (they would be one loop). Adjacent X, Y and N loops are kept in that
// order only: they index the same operands, so swapping them leaves every buffer and count
// unchanged (symmetry pruning).
//
// Exact: depth-first branch and bound over that space. A prefix's lower bound counts the accesses
// that are already final (the MAC stream into the innermost placed buffer, the fill streams of
// buffers that have an outer buffer of the same operand) and, for the rest, the compulsory traffic of
// the backing store plus the refetch that the outermost dimensions of any completion force
// (optimizer.cc, OutermostDimsExtra); a prefix whose bound exceeds the best full string found is
// dropped (the outermost-dimensions term's passes vectors depend only on the block sizes, so each
// worker computes them once per block, OuterPassCache). Prefixes are packed incrementally
// (pack_step.h); a prefix whose search state equals that of a prefix with a smaller text is dropped
// (the transposition table, search_memo.h). The two-loop prefixes are shared among
// `threads` workers. Dominance: a prefix after which no operand can
// get another buffer below its backing store ("closed") is completed directly by the best order of
// its remaining dimensions (a DP over their subsets, optimizer.cc) instead of being branched. proved_optimal: the search finished within the
// time limit. Ties are broken by the string's text, so the result does not depend on the threads.
//
// Heuristic (the paper's seeded iterative search): builds strings loop by loop from the inside,
// keeping the `beam` best prefixes at each step (ranked by the energy of their cheapest quick
// completion), plus seeds made by randomly perturbing kept prefixes (a size moved to a neighbouring
// divisor, two adjacent loops exchanged); deterministic (fixed seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "blocking/model.h"
#include "support/status.h"

namespace sramplan::blocking {

struct SearchOptions {
  int max_loops_per_dim = 2;
  int threads = 2;
  double time_limit_s = 10;
  int beam = 128;       // heuristic: prefixes kept per step
  int perturbations = 2;  // heuristic: random seeds per kept prefix and step
  // Micro-kernel constraints (HeuristicSearch only; ExactSearch rejects them; 0 = off). They apply to
  // the lowest-level tile: the longest prefix of the string whose three operand footprints together
  // fit h.levels[0] (what the x86 kernel runs in registers from L1, x86_conv.h). When the string
  // grows past that capacity, that tile's K block must be a multiple of `k_multiple` (or all of K)
  // and its C x Fw x Fh block (the accumulation depth per output) at least
  // min(min_accum_depth, C Fw Fh). Strings whose whole nest fits the lowest level are not constrained.
  int k_multiple = 0;
  int64_t min_accum_depth = 0;
  // Exact: most prefix states kept in the transposition table (search_memo.h); 0 turns it off.
  int64_t memo_limit = int64_t{1} << 22;
};

// Whether `s` (a prefix or a full string) meets opt's micro-kernel constraints (above).
bool MeetsKernelConstraints(const Layer& layer, const Hierarchy& h, const SearchOptions& opt, const BlockingString& s);

struct SearchResult {
  BlockingString best;
  Evaluation eval;
  bool found = false;
  bool proved_optimal = false;
  int64_t nodes = 0;       // prefixes visited
  int64_t leaves = 0;      // full strings evaluated
  int64_t completions = 0;  // exact: closed prefixes completed by the DP (ExactSearch) instead of branching
  int64_t memo_hits = 0;    // exact: prefixes dropped by the transposition table (search_memo.h)
  int64_t memo_states = 0;  // exact: prefix states the table holds at the end
  double search_s = 0;
};

// Every search returns an error (naming the layer) when no string fits the hierarchy.
StatusOr<SearchResult> ExactSearch(const Layer& layer, const Hierarchy& h, const SearchOptions& opt,
                                   const BlockingString* incumbent = nullptr);
StatusOr<SearchResult> HeuristicSearch(const Layer& layer, const Hierarchy& h, const SearchOptions& opt);

// The lower bound on the energy (pJ) of every string starting with `prefix` (exposed for tests: it
// must never exceed Evaluate(...).total_pj of a completion).
double PrefixLowerBound(const Layer& layer, const Hierarchy& h, const BlockingString& prefix);
// The divisors of n in increasing order.
std::vector<int64_t> Divisors(int64_t n);

}  // namespace sramplan::blocking
