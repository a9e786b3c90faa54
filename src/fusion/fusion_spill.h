// Fusion and COSMA-style spilling under one budget (issue 14, beyond the paper): between fused
// groups, a group output feature map may stay in the global buffer for the later groups that read
// it instead of the store to DRAM and the reloads, when the buffer has room beside those groups'
// working sets.
//
// Model (the groups run in order, each per image with the batch as the outer loop, so a map that
// stays holds the whole batch): group k's working set occupies [0, w_k) of the buffer (its
// workspace, where assemble-tiled puts it); a map t kept on chip occupies [o_t, o_t + s_t) from its
// producer's group a_t through its last reader's group b_t, above the working set of every group it
// spans (o_t >= max_{a_t <= k <= b_t} w_k, o_t + s_t <= B_c), and never beside another kept map it
// shares a group with. It saves its store (its bytes) and each later reader group's load (the rows
// that group reads, as Eq. 3 counts them). The group's windows stay as they are (the producer copies
// its rows into the kept map instead of DRAM, the readers copy from it), so the working sets and
// the tiles do not change.
//
// The choice: an ILP (CBC) over the candidate maps, maximising the saved bytes, with their offsets
// and pairwise order (big-M disjunctions) and per-group capacity rows; a first-fit greedy (largest
// saving per byte first) is its first incumbent and its answer when CBC finds nothing better in its
// time. Offsets are re-derived from the chosen order (each map as low as the maps below it allow).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusion/optimus_dp.h"
#include "fusion/optimus_model.h"
#include "support/status.h"

namespace sramplan::fusion {

struct KeptMap {
  int tensor = 0;                  // FTensor
  int first_group = 0;             // the group producing it
  int last_group = 0;              // the last group reading it
  int64_t bytes = 0;               // whole batch (the tensor's bytes)
  int64_t slot_bytes = 0;          // bytes rounded up to the alignment (what it occupies)
  int64_t offset = 0;              // in the global buffer
  int64_t saved_write = 0;         // the producer group's store
  std::vector<std::pair<int, int64_t>> saved_reads;  // (group, bytes of its load), ascending groups
  int64_t saved() const;
};

struct ResidencyOptions {
  int64_t alignment = 1;
  double time_limit_s = 5;  // the ILP's wall clock
  // Per FTensor: 0 = may not stay on chip (e.g. a view or an aliased storage); empty: every map may.
  std::vector<char> eligible;
  // Per group: bytes of the buffer its run needs at least (e.g. its most strips with every channel
  // held); empty: none beyond the model's.
  std::vector<int64_t> group_min_bytes;
  // Groups whose parameters stay in the buffer may run more strips (a smaller working set) at the
  // same DRAM bytes (Eq. 3 reads inputs, outputs and resident parameters once whatever the tile):
  // their floor is their smallest working set, and after the choice each runs the fewest strips
  // that fit below the maps kept beside it. false: every group keeps its tiles and working set.
  bool retile = true;
};

struct ResidencyResult {
  std::vector<KeptMap> maps;     // the maps kept on chip, by first group then tensor
  int64_t candidates = 0;        // maps that could stay on chip alone
  int64_t saved_bytes = 0;       // DRAM bytes saved (reads + writes)
  int64_t saved_read_bytes = 0, saved_write_bytes = 0;
  std::vector<int64_t> group_floor;  // per group: the least bytes its working set may occupy (aligned)
  std::vector<int64_t> group_tiles;  // per group: strips per image after the choice
  std::vector<int64_t> group_buffer_bytes;  // per group: its working set then (Eq. 4's terms)
  int64_t retiled_groups = 0;        // groups that run more strips than optimus's
  bool proved_optimal = false;   // the ILP proved the choice optimal for this model
  std::string method;            // "none", "greedy" or "ilp"
  std::string note;
  double search_ms = 0;
};

// The most strips of a group whose tile still has min(T_h, rows) rows (Eq. 4's range).
int64_t MostStrips(const GroupEval& e, const AccelModel& m);

// Chooses the maps of scheme `r` (groups in execution order, with their evaluations) that stay in
// the global buffer of `m`.
StatusOr<ResidencyResult> ChooseKeptMaps(const FusionGraph& fg, const AccelModel& m, const FusionResult& r,
                                         const ResidencyOptions& o);

}  // namespace sramplan::fusion
