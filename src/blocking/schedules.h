// Fixed schedules to compare the searches with.
#pragma once

#include "blocking/layer.h"
#include "blocking/model.h"

namespace sramplan::blocking {

// Our reading of DianNao's default schedule (DianNao paper's pseudo-code as the blocking paper
// describes it, Sec. 5.2): the 16 x 16 datapath innermost (Ti input channels, Tn kernels, each the
// largest divisor of C / K up to 16), then the window (Fw, Fh), the remaining input channels, an
// X block, the remaining kernels, then the rest of X, Y and the batch:
//   C:ti K:tn Fw Fh C X:xb K X Y N
// xb is the largest divisor of X whose input block (C x ((xb - 1) sx + Fw) x Fh words, the input
// buffer the K loop implies) fits `ib_bytes` (1 when none does: "blocking in the x dimension once
// more to shrink the IB to 2 KB"). Loops of one iteration are left out.
BlockingString DianNaoDefault(const Layer& layer, int64_t ib_bytes, int64_t word_bytes);

}  // namespace sramplan::blocking
