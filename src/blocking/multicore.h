// Multi-core partitioning of one layer (paper Sec. 3.3 and 5.3): S identical cores, each with a
// private copy of the hierarchy's on-chip levels, share the off-chip backing store. The layer's
// outermost loop is unrolled across the cores:
//   K partitioning: core i computes kernels [i K/S, (i+1) K/S); every core reads the same input
//     stream, so the input is read ONCE from its backing store and broadcast to all cores; kernels
//     and outputs are private (disjoint slabs).
//   XY partitioning: core i computes output rows [i Y/S, (i+1) Y/S) (columns of X when S does not
//     divide Y); the kernel stream is the same on every core, so kernels are read once and
//     broadcast; inputs (with their window halos, read by both neighbours) and outputs are private.
// Every core runs the same blocking string on its sub-layer (K/S kernels, or Y/S rows), found by the
// single-core search on the per-core hierarchy (the string minimises one core's energy; the sharing
// below is accounted afterwards, it does not steer the search). Energy of the S-core system:
//   S x (core memory energy) - (S - 1) x (shared operand's backing reads x backing read energy)
//   + broadcast words x broadcast energy per word + layer MACs x MAC energy,
// broadcast words = one core's reads of the shared operand from its backing store (each reaches all
// S cores in one broadcast). The broadcast energy per word is the paper's estimate: the access energy
// of one SRAM as large as all the cores' on-chip memory (Table 3 at `width_bits`), or an explicit
// value; with S = 1 there is no broadcast and the result equals the single-core evaluation.
#pragma once

#include <cstdint>
#include <string>

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "support/status.h"

namespace sramplan::blocking {

enum class Partition { kK, kXY };
const char* PartitionName(Partition p);  // "K", "XY"

struct MulticoreOptions {
  int cores = 1;
  Partition partition = Partition::kK;
  int width_bits = 64;               // Table 3 column for the broadcast estimate
  double broadcast_pj_per_16b = -1;  // >= 0: use this instead of the Table 3 estimate
};

struct MulticoreResult {
  int cores = 1;
  Partition partition = Partition::kK;
  Dim split = Dim::kK;         // the unrolled dimension (K, Y or X)
  Layer per_core;              // one core's sub-layer
  BlockingString string;       // one core's string (on per_core)
  Evaluation core;             // one core's evaluation
  Operand shared = Operand::kInput;  // broadcast operand: input (K) or kernel (XY)
  int64_t broadcast_words = 0;       // shared operand's backing reads, counted once
  double broadcast_pj_per_word = 0;
  double private_pj = 0;    // memory energy without the duplicate shared reads
  double broadcast_pj = 0;
  double memory_pj = 0, mac_pj = 0, total_pj = 0;
  int64_t onchip_bytes = 0;  // all cores' on-chip bytes
  double search_s = 0;
  bool proved_optimal = false;
};

// One core's sub-layer; the error names the dimension and the core count when S does not divide it.
StatusOr<Layer> PartitionLayer(const Layer& layer, int cores, Partition p, Dim* split);
// The S-core energy of running `per_core_string` (a valid string of the sub-layer) on every core.
StatusOr<MulticoreResult> EvaluateMulticore(const Layer& layer, const Hierarchy& h, const BlockingString& per_core_string,
                                            const MulticoreOptions& mo);
// Searches one core's string (heuristic, then the exact search seeded with it when `exact`) and
// evaluates the S-core system.
StatusOr<MulticoreResult> MulticoreSearch(const Layer& layer, const Hierarchy& h, const MulticoreOptions& mo,
                                          const SearchOptions& opt, bool exact);

}  // namespace sramplan::blocking
