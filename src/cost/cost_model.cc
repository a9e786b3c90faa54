#include "cost/cost_model.h"

#include <algorithm>
#include <cmath>

namespace sramplan::cost {

Traffic& Traffic::operator+=(const Traffic& o) {
  if (read.size() < o.read.size()) read.resize(o.read.size(), 0);
  if (write.size() < o.write.size()) write.resize(o.write.size(), 0);
  for (size_t i = 0; i < o.read.size(); ++i) read[i] += o.read[i];
  for (size_t i = 0; i < o.write.size(); ++i) write[i] += o.write[i];
  macs += o.macs;
  return *this;
}

Cost Evaluate(const HardwareModel& hw, const Traffic& traffic) {
  Cost c;
  const ComputeModel& pe = hw.compute();
  if (traffic.macs > 0 && pe.macs_per_cycle > 0)
    c.cycles = (traffic.macs + pe.macs_per_cycle - 1) / pe.macs_per_cycle;
  for (int l = 0; l < hw.num_levels(); ++l) {
    const LevelModel& level = hw.level(l);
    const int64_t r = l < static_cast<int>(traffic.read.size()) ? traffic.read[l] : 0;
    const int64_t w = l < static_cast<int>(traffic.write.size()) ? traffic.write[l] : 0;
    c.energy_pj += static_cast<double>(r) * level.read_pj_per_byte +
                   static_cast<double>(w) * level.write_pj_per_byte;
    if (level.bytes_per_cycle > 0 && r + w > 0)
      c.cycles = std::max(c.cycles, static_cast<int64_t>(std::ceil(static_cast<double>(r + w) /
                                                                   level.bytes_per_cycle)));
    if (level.off_chip) {
      c.dram_read += r;
      c.dram_write += w;
    }
  }
  c.energy_pj += static_cast<double>(traffic.macs) * pe.mac_pj;
  return c;
}

}  // namespace sramplan::cost
