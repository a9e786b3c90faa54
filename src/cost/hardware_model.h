// The hardware as the cost models see it: memory levels (capacity, energy per byte, bandwidth,
// on/off chip) and the compute array, built from a target::Target. WithLevels swaps the levels for
// co-design sweeps (the same model with another buffer size or technology).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "target/target.h"

namespace sramplan::cost {

struct LevelModel {
  std::string name;
  target::MemoryKind kind = target::MemoryKind::kSram;
  int64_t capacity = 0;  // bytes per instance
  int instances = 1;
  double read_pj_per_byte = 0;
  double write_pj_per_byte = 0;
  double bytes_per_cycle = 0;  // 0: bandwidth not modelled (no cycle bound from this level)
  bool off_chip = false;       // flash or DRAM: its reads and writes are off-chip traffic
  bool holds_activations = false;
  bool holds_weights = false;
};

struct ComputeModel {
  int64_t pe_rows = 1;
  int64_t pe_cols = 1;
  int64_t macs_per_cycle = 1;
  int word_bits = 8;
  double clock_mhz = 0;  // 0: unknown
  double mac_pj = 0;     // energy of one multiply-accumulate
};

class HardwareModel {
 public:
  // Levels fastest first, as in the target. Fails when the target has no levels or its arena or
  // weight level is not one of them.
  static StatusOr<HardwareModel> From(const target::Target& t);

  const std::string& name() const { return name_; }
  const std::vector<LevelModel>& levels() const { return levels_; }
  const LevelModel& level(int i) const { return levels_.at(i); }
  int num_levels() const { return static_cast<int>(levels_.size()); }
  int arena() const { return arena_; }      // where tensor-level plans put activations
  int weights() const { return weights_; }  // where weights live
  int dram() const { return dram_; }        // the first DRAM level, -1 without one
  const ComputeModel& compute() const { return compute_; }
  int FindLevel(std::string_view name) const;  // -1 if none

  // The same model with other levels (co-design). The arena and weight levels are found again by
  // name; fails, naming the missing level, when one of them is gone, or when a level is malformed.
  StatusOr<HardwareModel> WithLevels(std::vector<LevelModel> levels) const;
  HardwareModel WithCompute(const ComputeModel& compute) const;

 private:
  static StatusOr<HardwareModel> Make(std::string name, std::vector<LevelModel> levels,
                                      const std::string& arena, const std::string& weights,
                                      const ComputeModel& compute);
  std::string name_;
  std::vector<LevelModel> levels_;
  int arena_ = -1, weights_ = -1, dram_ = -1;
  ComputeModel compute_;
};

}  // namespace sramplan::cost
