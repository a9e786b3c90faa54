// Hierarchy co-design (paper Sec. 3.6): the number and sizes of on-chip levels under an SRAM budget,
// for one layer or for a set of layers that share one hierarchy.
//
// Candidates: 1, 2 or 3 shared on-chip levels (every level holds all three buffers) in front of
// DRAM, sizes powers of two (1 level: 1 KB .. budget; 2 levels: a 64 B .. 4 KB register file and a
// 4 KB .. budget SRAM; 3 levels: 64 B / 256 B / 1 KB, 4 / 16 / 64 KB, 256 KB .. budget), the total
// within the budget; energies from Table 3 at `width_bits`, DRAM 320 pJ / 16 bit. Every candidate
// is scored per layer with the heuristic search; a layer's best point is its lowest energy, the
// set's common point the lowest sum of energies over the layers (the paper keeps each layer's 10
// best points and intersects them; scoring every candidate for every layer is the same choice
// without the cut-off).
#pragma once

#include <cstdint>
#include <vector>

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "blocking/optimizer.h"
#include "support/status.h"

namespace sramplan::blocking {

struct DesignPoint {
  Hierarchy hierarchy;
  std::vector<double> energy_pj;  // by layer (heuristic search)
  double total_pj = 0;
  int64_t onchip_bytes = 0;
  double area_mm2 = 0;  // SramAreaMm2(onchip_bytes)
};

std::vector<Hierarchy> CodesignCandidates(int64_t budget_bytes, int width_bits, int word_bits, double mac_pj);
// Scores every candidate for every layer. Fails when a layer is invalid.
StatusOr<std::vector<DesignPoint>> CodesignSweep(const std::vector<Layer>& layers, int64_t budget_bytes, int width_bits,
                                                 int word_bits, double mac_pj, const SearchOptions& opt);

}  // namespace sramplan::blocking
