// libFuzzer target: placement problem CSV (sramplan place). Corpus: tests/fuzz/placement_csv/ (see fuzz_entries.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sramplan::fuzz::RunPlacementCsv(data, size);
}
