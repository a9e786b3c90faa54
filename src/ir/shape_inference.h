// Output-shape rules for the ops sramplan knows. Used to fill shapes of native graphs and to check
// the shapes an importer produced.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace sramplan::ir {

// Returns the output shapes of `op` from its input shapes. kUnsupported when sramplan has no rule for
// the op type (the caller then trusts the given shapes); kInvalidArgument when the inputs are
// inconsistent (the message names the op).
StatusOr<std::vector<std::vector<int64_t>>> InferOutputShapes(const Graph& g, const Op& op);

// Numpy-style broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a,
                                                    const std::vector<int64_t>& b);

}  // namespace sramplan::ir
