// Memory pools in the firmware (issue 19): a plan of the pool strategies keeps its activations in
// several levels that are pools of one target level (plan::Level::pool_of), each at its own address.
// The firmware gets one arena array per pool, in a section of its own, and link.ld one region per
// pool at the pool's base with the pool's capacity, so the linker proves that every pool's arena
// fits its region and sits at the planned address. .data, .bss and the stack go into the pool with
// the most room left (its region is RAM). The firmware runs in QEMU's mps2 boards, so every pool must
// lie inside their data SSRAM (0x20000000, 4 MiB): STM32F767ZI's DTCM / SRAM1 / SRAM2
// (0x20000000..0x20080000) do, at their real addresses.
#include <cstdio>

#include "codegen/emitter.h"

namespace sramplan::codegen {
namespace {

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Status Emitter::IndexPools() {
  for (const auto& l : p_.levels)
    if (!l.pool_of.empty()) pools_.push_back(&l);
  if (pools_.empty()) return Status::Ok();
  const plan::Level* ram = nullptr;
  for (const plan::Level* l : pools_) {
    if (l->base < kQemuRamOrigin || l->base + l->capacity > kQemuRamOrigin + kQemuRegionBytes)
      return Unsupported("memory pool '" + l->name + "' [" + Hex32(static_cast<uint32_t>(l->base)) + ", +" +
                         std::to_string(l->capacity) + ") lies outside the data SSRAM of QEMU's mps2 boards (" +
                         Hex32(kQemuRamOrigin) + ", 4 MiB), where the firmware runs; give the target's pools "
                         "addresses inside it (as stm32f767zi's are) to generate firmware");
    if (l->base % 16 != 0)
      return Unsupported("memory pool '" + l->name + "' starts at " + Hex32(static_cast<uint32_t>(l->base)) +
                         ", not a multiple of 16 (the arena's alignment)");
    if (!ram || l->capacity - l->used_bytes > ram->capacity - ram->used_bytes) ram = l;
  }
  for (const auto& l : p_.levels)
    if (l.pool_of.empty() && l.kind != "flash" && l.kind != "dram")
      for (const auto& b : p_.buffers)
        if (b.level == l.name && b.bytes > 0)
          return Unsupported("level '" + l.name + "' holds '" + b.tensor +
                             "' next to memory pools; codegen keeps activations in the pools only");
  arena_level_ = ram;
  fw_.ram_pool = ram->name;
  return Status::Ok();
}

bool Emitter::IsPool(const std::string& level) const {
  for (const plan::Level* l : pools_)
    if (l->name == level) return true;
  return false;
}

std::string Emitter::MemName(const std::string& level) const {
  return IsPool(level) ? "sramplan_pool_" + Identifier(level) : "sramplan_arena";
}

std::string Emitter::PoolArrays() const {
  std::string c = "/* Memory pools: one arena per pool, each in its own section, which link.ld places at the\n"
                  " * pool's address. */\n";
  for (const plan::Level* l : pools_) {
    const std::string name = MemName(l->name);
    c += "static uint8_t " + name + "[" + std::to_string(std::max<int64_t>(l->used_bytes, 1)) +
         "] /* pool '" + Comment(l->name) + "' at " + Hex32(static_cast<uint32_t>(l->base)) + ", " +
         std::to_string(l->used_bytes) + " of " + std::to_string(l->capacity) + " bytes */\n" +
         "    __attribute__((section(\"." + name + "\"), aligned(16)));\n";
  }
  return c + "\n";
}

std::string Emitter::PoolRegions() const {
  std::string s;
  char line[200];
  for (const plan::Level* l : pools_) {
    const std::string region = l == arena_level_ ? "RAM" : "POOL_" + Upper(Identifier(l->name));
    std::snprintf(line, sizeof line, "  %-5s (rwx) : ORIGIN = 0x%08llx, LENGTH = %lld /* pool '%s'%s */\n",
                  region.c_str(), static_cast<unsigned long long>(l->base), static_cast<long long>(l->capacity),
                  Comment(l->name).c_str(), l == arena_level_ ? ": also .data, .bss and the stack" : "");
    s += line;
  }
  return s;
}

std::string Emitter::PoolSections() const {
  std::string s = "  /* Memory pools: each pool's arena first in its region, at the pool's address. */\n";
  for (const plan::Level* l : pools_) {
    const std::string name = MemName(l->name);
    const std::string region = l == arena_level_ ? "RAM" : "POOL_" + Upper(Identifier(l->name));
    s += "  ." + name + " (NOLOAD) : { KEEP(*(." + name + ")) } > " + region + "\n";
    s += "  ASSERT(ADDR(." + name + ") == ORIGIN(" + region + "), \"pool '" + Comment(l->name) +
         "' is not at its address\")\n";
  }
  return s;
}

}  // namespace sramplan::codegen
