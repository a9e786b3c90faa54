// Target: the memory hierarchy and compute array of a microcontroller or accelerator.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "support/status.h"

namespace sramplan::target {

enum class MemoryKind { kRegisterFile, kSram, kScratchpad, kFlash, kDram };
const char* MemoryKindName(MemoryKind k);
inline bool IsOffChip(MemoryKind k) { return k == MemoryKind::kFlash || k == MemoryKind::kDram; }

// One memory pool of a level (issue 19): a separately addressed RAM region (STM32F767ZI's DTCM,
// SRAM1, SRAM2; ESP32-S3's internal SRAM and external PSRAM). Only the pool strategies (`pools`,
// `pools-optimal`) split the level into its pools; every other strategy plans the level as one arena.
struct MemoryPool {
  std::string name;
  int64_t base = 0;       // its address in the CPU's memory map
  int64_t capacity = 0;   // bytes
  double read_pj_per_byte = 0;
  double write_pj_per_byte = 0;
  double stall_cycles_per_byte = 0;  // extra CPU cycles per byte accessed (wait states, cache misses)
  std::string cost_source;           // where the cost numbers come from
};

struct MemoryLevel {
  std::string name;
  MemoryKind kind = MemoryKind::kSram;
  int64_t capacity = 0;      // bytes (per instance)
  int instances = 1;         // e.g. one register file per PE
  double read_pj_per_byte = 0;
  double write_pj_per_byte = 0;
  double bandwidth_bytes_per_cycle = 0;
  bool holds_activations = false;
  bool holds_weights = false;
  std::string energy_source;  // where the energy numbers come from
  std::vector<MemoryPool> pools;  // empty: one region; else disjoint regions, together at most `capacity`
};

struct ComputeArray {
  int64_t pe_rows = 1;         // each at most 2^31 - 1
  int64_t pe_cols = 1;
  int64_t macs_per_cycle = 1;  // default pe_rows * pe_cols (at most 2^62)
  int word_bits = 8;
  double clock_mhz = 0;
  double mac_pj = 0;
};

struct Target {
  std::string name;
  std::string description;
  int64_t alignment = 16;          // byte alignment of tensor buffers in the arena
  std::vector<MemoryLevel> levels;  // fastest first
  ComputeArray compute;
  int arena_level = -1;   // where tensor-level plans put activations
  int weight_level = -1;  // where weights live
  std::string cpu;        // "cpu": cortex-m0, cortex-m0plus, cortex-m3, cortex-m4 or cortex-m7; empty: not said
};

// The CPUs a target's "cpu" may name.
const std::vector<std::string>& KnownCpus();
// True if `cpu` (a KnownCpus name) has the DSP extension the SIMD int8 kernels use (SXTB16/SMLAD:
// Cortex-M4/M7); Cortex-M0/M0+/M3 run the portable C kernels.
bool CpuHasDsp(const std::string& cpu);

// Resolves `spec`: a preset name (`sramplan targets`), a path to a target JSON file, or the shorthand
// `sram:256KiB` (one SRAM arena for activations plus off-chip DRAM for weights).
StatusOr<Target> LoadTarget(const std::string& spec);
// Parses target JSON text (with `inherit` resolved against presets and `base_dir`).
StatusOr<Target> ParseTarget(const std::string& text, const std::string& name,
                             const std::string& base_dir);
// The resolved target as JSON (what --print-target shows).
std::string TargetToJson(const Target& t);

// Energy per byte of one access of an SRAM of `capacity` bytes, from the blocking paper's Table 3
// (pJ per 16-bit access, 64-bit word column, halved); DRAM: 320 pJ / 16 bit.
double DefaultEnergyPjPerByte(MemoryKind kind, int64_t capacity, int word_bits);

const std::vector<std::pair<std::string, std::string>>& BundledPresets();  // (name, json text)

}  // namespace sramplan::target
