// Traffic (bytes read and written per memory level, and MACs) and its cost on a HardwareModel.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/hardware_model.h"

namespace sramplan::cost {

struct Traffic {
  Traffic() = default;
  explicit Traffic(int levels) : read(levels, 0), write(levels, 0) {}
  explicit Traffic(const HardwareModel& hw) : Traffic(hw.num_levels()) {}
  std::vector<int64_t> read;   // bytes read from each level
  std::vector<int64_t> write;  // bytes written to each level
  int64_t macs = 0;
  Traffic& operator+=(const Traffic& o);  // level counts must agree (the larger is kept)
};

struct Cost {
  double energy_pj = 0;    // memory accesses plus MACs
  int64_t cycles = 0;      // the slowest of compute and every level's bandwidth (a roofline)
  int64_t dram_read = 0;   // bytes read from off-chip levels
  int64_t dram_write = 0;  // bytes written to off-chip levels
};

// energy = sum over levels (read * read_pj + write * write_pj) + macs * mac_pj;
// cycles = max(ceil(macs / macs_per_cycle), max over levels with a bandwidth of
//              ceil((read + write) / bytes_per_cycle)).
// Levels missing from `traffic` count as untouched.
Cost Evaluate(const HardwareModel& hw, const Traffic& traffic);

}  // namespace sramplan::cost
