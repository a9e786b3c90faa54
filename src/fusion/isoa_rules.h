// Where ISOA (an operator's output kept T_c channels at a time) may be read inside an Optimus
// group: the roles BuildFusionGraph marks (Vertex::isoa_source, Vertex::isoa_reader), the cases
// exec/exec_tiled_isoa.cc executes bit-exactly with int32 partial sums.
#pragma once

#include "fusion/optimus_model.h"
#include "ir/graph.h"

namespace sramplan::fusion {

// Marks every vertex's isoa_source / isoa_reader (channels-last graphs only: the executor's scope).
void MarkIsoaRoles(const ir::Graph& g, FusionGraph* fg);

}  // namespace sramplan::fusion
