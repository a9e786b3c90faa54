// libFuzzer target: any model file (the CLI's importer dispatch). Corpus: tests/fuzz/model/ (see fuzz_entries.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sramplan::fuzz::RunModelFile(data, size);
}
