// TFLite Micro's persistent (tail) section predicted from a .tflite file: what MicroInterpreter and
// MicroAllocator allocate from the top of the arena downwards and keep for the interpreter's life.
// In allocation order (each with TFLM's alignment: the tail pointer is aligned down, so padding counts):
//   1. the allocator objects: SingleArenaBufferAllocator, GreedyMemoryPlanner, MicroAllocator
//      (MicroAllocator::Create);
//   2. StartModelAllocation: MicroBuiltinDataAllocator, one SubgraphAllocations per subgraph, one
//      TfLiteEvalTensor per tensor, one NodeAndRegistration per operator;
//   3. the builtin data each operator's parser allocates (TfLiteConvParams, ..., alignof the struct);
//   4. each kernel's Init (its OpData, 16-byte aligned via AllocatePersistentBuffer);
//   5. each kernel's Prepare (per-channel output multiplier and shift arrays, int16 softmax tables);
//   6. FinishModelAllocation: one ScratchBufferHandle per scratch request, variable tensors' buffers;
//   7. AllocateTensors: the input and output TfLiteTensor pointer arrays and, per input/output, a
//      TfLiteTensor with its TfLiteAffineQuantization and zero-point TfLiteIntArray.
// Struct sizes are laid out from their fields for the pointer size (8: x86-64 host, 4: Cortex-M).
// Kernels are TFLM's reference kernels; operators outside the modelled set are listed in
// `unmodelled_ops`, and their kernels' OpData is then missing from the total.
#pragma once

#include <string>
#include <vector>

#include "driver/tflm_arena.h"
#include "import/tflite_model.h"
#include "support/status.h"

namespace sramplan::driver {

struct TflmTailPart {
  std::string what;
  int64_t bytes = 0;  // requested bytes of this kind (alignment padding is its own part)
};

struct TflmTail {
  int pointer_bytes = 8;
  int64_t bytes = 0;            // the tail: GetPersistentUsedBytes() of a MicroInterpreter
  // The same measured with TFLM's RecordingMicroInterpreter, whose allocator objects carry the
  // recording counters (RecordingMicroAllocator: 7 RecordedAllocation + a pointer;
  // RecordingSingleArenaBufferAllocator: 4 size_t).
  int64_t recording_bytes = 0;
  std::vector<TflmTailPart> parts;        // sum = bytes
  std::vector<std::string> unmodelled_ops;  // builtin names whose kernel data is not modelled
};

// The tail for `m` (single subgraph, as PredictTflmArena) with the given pointer size (4 or 8);
// `head` (PredictTflmArena of the same model) gives the scratch buffer requests.
StatusOr<TflmTail> PredictTflmTail(const import::tflite::Model& m, const TflmArena& head, int pointer_bytes);

// One CLI line: head, tails (64-bit host, 32-bit Cortex-M) and the arena_size to pass.
std::string TflmTailSummary(const TflmArena& head, const TflmTail& tail64, const TflmTail& tail32);

}  // namespace sramplan::driver
