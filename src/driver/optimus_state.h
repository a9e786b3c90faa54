// The fuse-tiled pass's result for assemble-tiled: the fusion graph, the accelerator model and the
// groups the method chose (fusion/optimus_dp.h).
#pragma once

#include "fusion/optimus_dp.h"
#include "fusion/optimus_model.h"

namespace sramplan::driver {

struct OptimusState {
  fusion::FusionMethod method = fusion::FusionMethod::kOptimus;
  fusion::AccelModel model;
  fusion::FusionGraph graph;
  fusion::FusionResult result;
};

}  // namespace sramplan::driver
