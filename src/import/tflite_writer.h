// Writes .tflite flatbuffers with flatbuffers' FlatBufferBuilder (field ids of the TFLite schema, as
// the reader in tflite_model.h): small models for tests, and a model with TFLM's offline memory plan.
#pragma once

#include <string>
#include <vector>

#include "import/tflite_model.h"

namespace sramplan::import::tflite {

// A model to write: subgraph 0, the buffers' data (buffers[0] should be empty, the schema's
// sentinel) and metadata entries. Operators name their builtin code (and custom_code for CUSTOM);
// the operator-code table is made from the distinct codes in order of first use.
struct ModelToWrite {
  Subgraph subgraph;
  std::vector<std::string> buffers = {""};
  std::vector<Metadata> metadata;
  std::string description = "sramplan";
};
std::string WriteModel(const ModelToWrite& model);

// `bytes` (a .tflite file, parsed as `m`) with TFLM's OfflineMemoryAllocation metadata: one new
// buffer of little-endian int32 words {1 (version), subgraphs, n, offsets[n]} (n = tensors of all
// subgraphs; -1: TFLM plans the tensor) and a metadata entry naming it (an older entry of that name
// is dropped). The original file is kept byte for byte after a new root table placed in front of it
// (flatbuffer offsets are relative and point forward, and the shift is a multiple of 16, so every
// table, vector and buffer of the original stays valid and aligned); only the root changes.
StatusOr<std::string> WithOfflinePlan(const std::string& bytes, const Model& m, const std::vector<int32_t>& offsets);

// Reads `written` back and checks it is `original` with `offsets` as its offline plan: the same
// tensors, operators, inputs, outputs and buffer contents, and the metadata holding exactly
// `offsets`. A message names the first difference.
Status CheckOfflinePlanFile(const std::string& original, const std::string& written, const std::vector<int32_t>& offsets);

}  // namespace sramplan::import::tflite
