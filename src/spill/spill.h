// Tensor replacement under an on-chip budget (COSMA's problem): which tensors stay in the on-chip
// memory, at which address, and which are spilled to DRAM and reloaded, for an operator order.
//
// The problem is graph-shaped but free of the IR so that solvers (Belady, greedy, the COSMA ILP,
// divide and conquer) can be tested on hand-built instances. The driver builds it from an ir::Graph
// and turns a SpillSolution into a plan::Plan (buffers on chip and in DRAM, transfers).
//
// Timing model (one step = one op of `order`):
//   * before op order[s] runs: loads (first DRAM->chip copy of a graph input or weight, compulsory) and
//     reloads (any later DRAM->chip copy, non-compulsory) of tensors whose residency starts at s;
//   * op order[s] runs: all its inputs and outputs are resident (on chip) during step s;
//   * after it runs: spills (chip->DRAM copy of an activation needed later, non-compulsory) and
//     stores (copy of a graph output to DRAM, compulsory) of tensors resident at s.
// A residency [first_step, last_step] occupies [offset, offset + aligned bytes) of the budget during
// every step of the interval. It starts with the tensor's production (first_step = producer step) or
// with a load/reload at first_step. It may end at any step; the bytes are then free from the next step.
// A tensor is in DRAM from its first spill/store on (graph inputs and weights: from the start) and stays
// there, so it is spilled at most once and may be reloaded many times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"

namespace sramplan::spill {

struct SpillTensor {
  std::string name;
  int64_t bytes = 0;           // already rounded up to the problem's alignment
  bool graph_input = false;    // in DRAM at the start; the first load is compulsory
  bool weight = false;         // a constant; in DRAM at the start; the first load is compulsory
  bool graph_output = false;   // must be stored to DRAM once (compulsory), after it is produced
};

struct SpillOp {
  std::string name;
  std::vector<int> inputs;   // tensor indices (distinct); views are replaced by their root tensor
  std::vector<int> outputs;  // tensor indices (distinct); empty for view ops (they only read)
};

struct SpillProblem {
  std::vector<SpillTensor> tensors;
  std::vector<SpillOp> ops;   // in a valid topological order (the model's order)
  int64_t budget = 0;         // on-chip bytes available for these tensors
  int64_t alignment = 1;      // offsets are multiples of this
};

enum class MoveKind { kLoad, kReload, kSpill, kStore };
const char* MoveKindName(MoveKind k);  // "load", "reload", "spill", "store"

struct Move {
  int step = 0;
  int tensor = 0;
  MoveKind kind = MoveKind::kReload;
};

struct Residency {
  int tensor = 0;
  int first_step = 0;  // inclusive
  int last_step = 0;   // inclusive
  int64_t offset = 0;
};

struct SpillSolution {
  std::vector<int> order;              // op index run at each step (a topological order)
  std::vector<Residency> residencies;  // on-chip intervals
  std::vector<Move> moves;             // sorted by step, then loads/reloads before spills/stores
  int64_t noncompulsory_bytes = 0;     // spill + reload bytes
  int64_t compulsory_bytes = 0;        // load + store bytes
  // Solver report.
  std::string method;                  // "belady", "greedy", "cosma", "cosma-fixed", "cosma-dc", ...
  bool proved_optimal = false;         // noncompulsory_bytes is minimal for the problem (and order, if fixed)
  int64_t lower_bound_bytes = 0;       // proved lower bound on noncompulsory bytes
  // COSMA methods (cosma, cosma-fixed, cosma-dc): a lower bound valid for EVERY operator order
  // (spill_bound.h), <= noncompulsory_bytes; -1: not computed (the baselines).
  int64_t all_orders_lower_bound_bytes = -1;
  double seconds = 0;
  bool hit_time_limit = false;         // the time limit stopped (or skipped) a solver stage; the detail
                                       // then says "time limit hit"
  std::string detail;                  // solver status, sizes, gap, ...
};

// M_min of COSMA: the largest sum, over ops, of the bytes of the op's inputs and outputs.
int64_t MinBudget(const SpillProblem& p);

// Checks a solution against the timing model above, independently of how it was found: order is a
// topological permutation, every input/output is resident at its step, residencies start by production
// or by a (re)load, data is in DRAM before it is reloaded, no two residencies share a byte at a step,
// everything lies inside the budget, graph outputs are stored, and the byte totals are right.
// Returns kInvalidArgument naming the first violation.
Status CheckSolution(const SpillProblem& p, const SpillSolution& s);

// Recomputes noncompulsory_bytes / compulsory_bytes from the moves.
void CountBytes(const SpillProblem& p, SpillSolution* s);

// Baselines of COSMA: a linear (best-fit) allocator inside the budget with Belady's eviction
// (furthest next use) or greedy eviction (least off-chip bytes caused, ties: furthest next use),
// for a given order. kOutOfMemory when an op alone cannot be placed in the budget.
StatusOr<SpillSolution> SolveBelady(const SpillProblem& p, const std::vector<int>& order);
StatusOr<SpillSolution> SolveGreedy(const SpillProblem& p, const std::vector<int>& order);

}  // namespace sramplan::spill
