// The memory hierarchy a blocking runs on: levels fastest first, each with a capacity, the operands
// (input / kernel / output buffers) it may hold and an energy per word access, the word width and
// the MAC energy. Built from a target (src/target, via cost::HardwareModel) or from a blocking
// hierarchy JSON file; energies from the blocking paper's Table 3 by size and word width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blocking/layer.h"
#include "support/status.h"
#include "target/target.h"

namespace sramplan::blocking {

struct Level {
  std::string name;
  int64_t capacity_bytes = 0;
  bool holds[kNumOperands] = {true, true, true};  // by Operand
  double read_pj = 0;   // per word read
  double write_pj = 0;  // per word written
  bool off_chip = false;
  bool Holds(Operand t) const { return holds[static_cast<int>(t)]; }
};

struct Hierarchy {
  std::string name;
  std::vector<Level> levels;  // fastest first; the last level holding an operand backs all of it
  int word_bits = 16;
  double mac_pj = 1.0;
  int64_t word_bytes() const { return (word_bits + 7) / 8; }
  // The last level that holds `t` (-1 if none).
  int Backing(Operand t) const;
  // Sum of the on-chip capacities in bytes.
  int64_t OnChipBytes() const;
};

// Table 3 of the paper: energy in pJ of one 16-bit access of an SRAM of `capacity_bytes` built with
// `width_bits`-wide words (64, 128, 256 or 512; anything else is an error naming the width). Between
// the table's sizes (1 KB .. 1 MB) the energy is interpolated linearly in log2(size); below 1 KB and
// from 1 MB to 16 MB it is extrapolated with the nearest segment's slope (never below 40% of the 1 KB
// value); above 16 MB the memory is DRAM: 320 pJ.
StatusOr<double> Table3PjPer16b(int64_t capacity_bytes, int width_bits);
inline constexpr double kDramPjPer16b = 320.0;
// SRAM area in mm^2 for `capacity_bytes`, from the paper's one reported pair (8 MB of SRAM ~ 45 mm^2
// in 45 nm, Sec. 5.2): linear in capacity, 5.6 mm^2 per MB. Used only to compare co-designed
// hierarchies with one another and with DianNao.
double SramAreaMm2(int64_t capacity_bytes);

// From a target: every memory level in order; a level holds the input and output buffers when it
// holds activations and the kernel buffer when it holds weights, except that a level named "ib",
// "kb" or "ob" (any case, or starting "ib_", "kb_", "ob_") holds only that buffer (DianNao's split
// buffers). Energies are the target's (read/write pJ per byte x word bytes). Word width and MAC
// energy from the target's compute array (mac_pj 0 -> 1 pJ, the paper's figure).
StatusOr<Hierarchy> HierarchyFromTarget(const target::Target& t);
// Resolves `spec` as a target (preset, file, sram:SIZE) or, when it is a JSON file with
// "blocking_levels", a blocking hierarchy file (docs/architecture.md, "Blocking").
StatusOr<Hierarchy> LoadHierarchy(const std::string& spec);
// A blocking hierarchy file's text: {"name", "word_bits": 16, "mac_pj": 1,
//   "blocking_levels": [{"name", "capacity": "2KiB" | bytes | "dram", "holds": ["input", ...],
//                        "pj_per_16b": x | "width_bits": 64..512}]}
StatusOr<Hierarchy> ParseHierarchyJson(const std::string& text, const std::string& name);
// Every level has a positive capacity and an energy; the first level can hold one word of each
// operand it holds; every operand has a level; the errors name the level and the field.
Status ValidateHierarchy(const Hierarchy& h);

}  // namespace sramplan::blocking
