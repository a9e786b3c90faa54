// libFuzzer target: plan JSON (sramplan check-plan). Corpus: tests/fuzz/plan/ (see fuzz_entries.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sramplan::fuzz::RunPlanJson(data, size);
}
