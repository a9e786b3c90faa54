// Weights and inputs for executing a model: the model's own data where it has it, otherwise
// deterministic pseudo-random values from a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace sramplan::exec {

inline constexpr uint64_t kDefaultSeed = 20261122;

struct ModelData {
  // Indexed by tensor id; empty for tensors that are neither constants nor graph inputs.
  std::vector<std::vector<uint8_t>> values;
  int generated_constants = 0;  // constants without data in the model that got generated values
};

// Float32 graphs only (the executors run float32 models; int8 execution derives from these).
StatusOr<ModelData> MakeModelData(const ir::Graph& g, uint64_t seed);

}  // namespace sramplan::exec
