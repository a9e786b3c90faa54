// Incremental packing for the exact search (optimizer.cc): the packing of a prefix extended by one
// loop, computed from the packing of the prefix without re-packing it.
//
// Pack (model.h) places candidates innermost cut first, so the buffers at the cut before the new last
// loop are placed after every buffer of the shorter prefix and see the same free space; only the
// fill counts of the older buffers change (a buffer's fills = the product of the trips from its
// operand's first indexing loop at or after its cut: the new loop multiplies them when such a loop
// exists, or starts them when it is the first). PackStep therefore gives exactly Pack(prefix + loop)
// (tests/blocking/blocking_search_test.cc checks it on random strings), without allocating once the
// packings' vectors have grown.
#pragma once

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "blocking/model.h"

namespace sramplan::blocking {

// `next` = the packing of `s` (whose last loop is the new one) given `prev` = the packing of `s`
// without its last loop; `inner` = the block sizes of the loops before the new one.
void PackStep(const Layer& layer, const Hierarchy& h, const BlockingString& s, const Extents& inner, const Packing& prev,
              Packing* next);

}  // namespace sramplan::blocking
