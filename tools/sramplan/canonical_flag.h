// When the CLI canonicalises a model (transform/canonicalize.h) before planning.
#pragma once

#include <string>

#include "support/status.h"

namespace sramplan::cli {

// --canonicalize forces canonicalisation for any format and --no-canonicalize turns it off (both
// together are an error naming them). By default an ONNX model is canonicalised (its exports write
// Conv and Relu/Clip apart, NCHW and shared biases); native graphs, MCUNet configs and .tflite files
// are read in the canonical form already and are planned as they are.
StatusOr<bool> WantCanonical(const std::string& model, bool force, bool off);

}  // namespace sramplan::cli
