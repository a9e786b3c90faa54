#include "cost/hardware_model.h"

#include <cmath>
#include <utility>

namespace sramplan::cost {

StatusOr<HardwareModel> HardwareModel::From(const target::Target& t) {
  const int n = static_cast<int>(t.levels.size());
  if (n == 0)
    return InvalidArgument("target '" + t.name +
                           "' has no memory levels; give at least one in 'levels'");
  if (t.arena_level < 0 || t.arena_level >= n || t.weight_level < 0 || t.weight_level >= n)
    return InvalidArgument("target '" + t.name +
                           "' has no arena or weight level; give one level \"holds\": " +
                           "[\"activations\"] and one \"holds\": [\"weights\"]");
  std::vector<LevelModel> levels;
  for (const target::MemoryLevel& l : t.levels) {
    LevelModel m;
    m.name = l.name;
    m.kind = l.kind;
    m.capacity = l.capacity;
    m.instances = l.instances;
    m.read_pj_per_byte = l.read_pj_per_byte;
    m.write_pj_per_byte = l.write_pj_per_byte;
    m.bytes_per_cycle = l.bandwidth_bytes_per_cycle;
    m.off_chip = target::IsOffChip(l.kind);
    m.holds_activations = l.holds_activations;
    m.holds_weights = l.holds_weights;
    levels.push_back(std::move(m));
  }
  ComputeModel c;
  c.pe_rows = t.compute.pe_rows;
  c.pe_cols = t.compute.pe_cols;
  c.macs_per_cycle = t.compute.macs_per_cycle;
  c.word_bits = t.compute.word_bits;
  c.clock_mhz = t.compute.clock_mhz;
  c.mac_pj = t.compute.mac_pj;
  return Make(t.name, std::move(levels), t.levels[t.arena_level].name,
              t.levels[t.weight_level].name, c);
}

StatusOr<HardwareModel> HardwareModel::Make(std::string name, std::vector<LevelModel> levels,
                                            const std::string& arena, const std::string& weights,
                                            const ComputeModel& compute) {
  HardwareModel hw;
  hw.name_ = std::move(name);
  hw.levels_ = std::move(levels);
  hw.compute_ = compute;
  for (const LevelModel& l : hw.levels_) {
    auto bad = [&](const std::string& what) {
      return InvalidArgument("level '" + l.name + "' of '" + hw.name_ + "': " + what);
    };
    if (l.capacity < 0)
      return bad("capacity " + std::to_string(l.capacity) + " is negative; give bytes >= 0");
    if (l.instances < 1) return bad("instances " + std::to_string(l.instances) + " must be >= 1");
    if (!(l.read_pj_per_byte >= 0) || !(l.write_pj_per_byte >= 0) ||
        !std::isfinite(l.read_pj_per_byte) || !std::isfinite(l.write_pj_per_byte))
      return bad("read/write energy must be finite and >= 0 pJ per byte");
    if (!(l.bytes_per_cycle >= 0) || !std::isfinite(l.bytes_per_cycle))
      return bad("bandwidth must be finite and >= 0 bytes per cycle (0: not modelled)");
  }
  hw.arena_ = hw.FindLevel(arena);
  hw.weights_ = hw.FindLevel(weights);
  if (hw.arena_ < 0)
    return InvalidArgument("'" + hw.name_ + "' has no level '" + arena +
                           "' for activations; keep a level of that name");
  if (hw.weights_ < 0)
    return InvalidArgument("'" + hw.name_ + "' has no level '" + weights +
                           "' for weights; keep a level of that name");
  for (int i = 0; i < hw.num_levels(); ++i)
    if (hw.levels_[i].kind == target::MemoryKind::kDram) {
      hw.dram_ = i;
      break;
    }
  return hw;
}

int HardwareModel::FindLevel(std::string_view name) const {
  for (int i = 0; i < num_levels(); ++i)
    if (levels_[i].name == name) return i;
  return -1;
}

StatusOr<HardwareModel> HardwareModel::WithLevels(std::vector<LevelModel> levels) const {
  return Make(name_, std::move(levels), levels_[arena_].name, levels_[weights_].name, compute_);
}

HardwareModel HardwareModel::WithCompute(const ComputeModel& compute) const {
  HardwareModel hw = *this;
  hw.compute_ = compute;
  return hw;
}

}  // namespace sramplan::cost
