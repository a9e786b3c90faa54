// libFuzzer target: native graph JSON. Corpus: tests/fuzz/graph/ (see fuzz_entries.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sramplan::fuzz::RunNativeGraph(data, size);
}
