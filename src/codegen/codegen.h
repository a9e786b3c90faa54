// C emitter for microcontroller firmware: turns an int8 plan into a self-contained firmware project
// (model.c, startup.c, link.ld, Makefile, the runtime's MCU sources, README.md and the checksum the
// host arena executor computes for the same model, seed and quantisation).
//
// model.c holds one static arena of exactly the plan's arena bytes (.bss), the weights, biases and
// lookup tables as const arrays (.rodata, flash), the input as const data, and sramplan_run(),
// which calls the runtime kernels in plan step order at the planned arena offsets. The calls are
// the exec::OpCalls records of exec/kernels.h, the same records the host executors run, printed as
// C: there is no second translation of IR ops to kernel calls. main() runs the model, hashes the
// output bytes (FNV-1a 32) and prints the hash through Arm semihosting (SYS_WRITE0), then startup.c
// ends the program with SYS_EXIT so QEMU terminates.
//
// link.ld maps FLASH and RAM to the target's flash (weights) and SRAM (arena) capacities at the
// addresses of QEMU's mps2 boards (code memory at 0x00000000, data SRAM at 0x20000000). RAM holds
// the arena, the other static data and a reserved stack, so a plan that does not fit fails to link
// with ld's "region `RAM' overflowed by N bytes".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exec/model_data.h"
#include "exec/quantize.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "support/status.h"

namespace sramplan::codegen {

struct CodegenOptions {
  int64_t stack_bytes = 4096;  // stack reserved at the top of RAM (counted against SRAM)
  std::string cpu;             // cortex-m3, cortex-m4 or cortex-m7; empty: from the target name
  std::string runtime_dir;     // the runtime sources to copy; empty: this build's runtime/
  uint64_t seed = exec::kDefaultSeed;  // the seed `q` was made with (recorded in the README)
};

struct Firmware {
  // Relative path -> content, in a fixed order (model.c, startup.c, link.ld, Makefile, README.md,
  // expected_checksum.txt, runtime/...).
  std::vector<std::pair<std::string, std::string>> files;
  std::string cpu;           // -mcpu
  std::string machine;       // qemu-system-arm -M
  // Which int8 kernel paths the firmware compiles (runtime/src/sp_fast_s8.h): the SIMD path where
  // the CPU has the DSP extension (Cortex-M4/M7), the portable C loops where it has not (Cortex-M3).
  std::string kernels;
  int64_t arena_bytes = 0;   // the static arena (the plan's arena level used bytes)
  int64_t weight_bytes = 0;  // graph constants emitted as const arrays (flash)
  int64_t input_bytes = 0;   // graph inputs emitted as const arrays (flash)
  int64_t table_bytes = 0;   // lookup tables, requantisation arrays, descriptors' data (flash)
  int64_t stack_bytes = 0;
  // Static RAM outside the arena (.bss) besides the stack. 0: every segment step runs with the
  // step's params.workspace buffer (exec::SegmentStepWorkspace); a plan without one is refused.
  int64_t extra_ram_bytes = 0;
  int64_t ram_capacity = 0;    // RAM region LENGTH
  // Memory pools (plans of the pool strategies): one arena array and one linker region per pool at
  // the pool's address; the pool named `ram_pool` is the RAM region (also .data, .bss and stack).
  struct PoolRegion {
    std::string name;
    int64_t base = 0, capacity = 0, used = 0;
  };
  std::vector<PoolRegion> pools;
  std::string ram_pool;
  int64_t flash_capacity = 0;  // FLASH region LENGTH
  bool fits = false;           // arena + stack <= RAM (the linker has the last word)
  int steps = 0;
  int kernel_calls = 0;  // call sites in sramplan_run
  uint32_t expected_checksum = 0;
};

// Generates the firmware for `p` (an int8 plan of `g`) with the quantised model `q`. kUnsupported
// names the first op (and why) the firmware cannot run: ops without a runtime kernel (host loops),
// NCHW convolutions that need host staging buffers, plans with transfers, or activations outside
// the arena level. Runs the host arena executor once for the expected checksum.
StatusOr<Firmware> GenerateFirmware(const ir::Graph& g, const plan::Plan& p,
                                    const exec::QuantizedModel& q, const CodegenOptions& options);

// Writes fw.files under `dir` (created if needed).
Status WriteFirmware(const Firmware& fw, const std::string& dir);

// FNV-1a 32 over the bytes of `outputs`, in order (what the firmware prints).
uint32_t Fnv1a32(const std::vector<std::vector<uint8_t>>& outputs);

}  // namespace sramplan::codegen
