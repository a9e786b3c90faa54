// Fuzz entry points, one per input format. Each takes the raw bytes of one input file and runs them
// through the same in-memory functions the CLI uses (import, target parsing, placement CSV, plan JSON
// + the independent verifier), then, for inputs that load, the next stages (a cheap plan, and for
// tiny graphs an execution check), so a fuzzer reaches the planner and the executor.
//
// The same functions back the libFuzzer executables in this folder (fuzz_<format>.cc) and the
// corpus regression test (tests/fuzz/fuzz_regression_test.cc), which runs every seed and
// regression file in the normal test suites.
//
// Bad input is expected and ignored (the functions return 0). A bug in sramplan is reported through
// the bug handler: an internal error, a plan from a strategy that its own verifier rejects, a plan
// that does not survive its JSON round trip, a placement with overlapping buffers, or an arena run
// that differs from the naive run. The default handler prints the message and aborts, which
// libFuzzer records as a crash. Crashes, sanitizer reports and escaped exceptions are not caught.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sramplan::fuzz {

int RunOnnx(const uint8_t* data, size_t size);          // ONNX model bytes (import::ImportOnnx)
int RunNativeGraph(const uint8_t* data, size_t size);   // native graph JSON (import::ImportNativeJson)
int RunMcunetConfig(const uint8_t* data, size_t size);  // MCUNet config JSON (import::ImportMcunetConfig)
int RunModelFile(const uint8_t* data, size_t size);     // any model file, the CLI's dispatch (ImportModelBytes)
int RunTarget(const uint8_t* data, size_t size);        // target JSON or a sram:SIZE spec
int RunPlacementCsv(const uint8_t* data, size_t size);  // placement problem CSV (sramplan place)
int RunPlanJson(const uint8_t* data, size_t size);      // plan JSON (sramplan check-plan)
int RunTflite(const uint8_t* data, size_t size);        // .tflite flatbuffer (import::ImportTflite, TFLM arena, offline plan)

struct Entry {
  const char* format;  // also the corpus folder: tests/fuzz/<format>/
  int (*run)(const uint8_t* data, size_t size);
};
const std::vector<Entry>& Entries();

// Receives the description of a bug found by an entry. The default prints it and aborts.
using BugHandler = void (*)(const std::string& message);
void SetBugHandler(BugHandler handler);

}  // namespace sramplan::fuzz
