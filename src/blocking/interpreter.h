// The execution check of the blocking model: runs a blocking string on real data, with every buffer
// the model places held as an array that is loaded from its parent holder when its tile changes
// (detected from the loop counters, independently of the model's fill formula) and every MAC
// reading its operands from the innermost holder. It counts the words each holder reads and
// writes; they must equal Evaluate's counts, and the output must equal RunNaive's bit for bit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "blocking/model.h"
#include "support/status.h"

namespace sramplan::blocking {

// Layouts: input [n][c][yi][xi] with xi < (X-1)sx + Fw, yi < (Y-1)sy + Fh; kernel [k][c][fh][fw];
// output [n][k][y][x]. Pooling: input [n][k][yi][xi], no kernel (empty span); LRN: input
// [n][ki][y][x] with ki < K + C - 1, no kernel. The output is the nest's result (layer.h): the
// convolution, the window max, the window sum (average pooling) or the sum of squares (LRN), with
// int32 wrap-around.
struct InterpreterResult {
  std::vector<int32_t> output;
  std::vector<BufferUse> buffers;  // Evaluate's holders, with the counted fills, reads and writes
};

// The unblocked seven-loop nest of the layer's kind.
std::vector<int32_t> RunNaive(const Layer& layer, std::span<const int16_t> input, std::span<const int16_t> kernel);
// Runs `s` with the holders Evaluate(layer, h, s) places. Fails when the data do not have the
// layer's sizes, or (kMismatch) when a holder is asked for an element its tile does not contain.
StatusOr<InterpreterResult> RunBlocked(const Layer& layer, const Hierarchy& h, const BlockingString& s,
                                       std::span<const int16_t> input, std::span<const int16_t> kernel);

}  // namespace sramplan::blocking
