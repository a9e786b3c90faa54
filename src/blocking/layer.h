// One CNN layer as the blocking paper's loop nest (Yang et al., "A Systematic Approach to Blocking
// Convolutional Neural Networks", Sec. 3): seven loops X, Y (output pixels), C (input channels),
// K (kernels = output channels), Fw, Fh (window) and N (batch), around
//   O[n][k][y][x] += I[n][c][y + fh][x + fw] * W[k][c][fh][fw]
// with strides sx, sy (x*sx + fw; the input is ((X-1)sx + Fw) x ((Y-1)sy + Fh), any padding already
// applied). FC is the case X = Y = Fw = Fh = 1.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "support/status.h"

namespace sramplan::blocking {

enum class Dim { kX = 0, kY, kC, kK, kFw, kFh, kN };
inline constexpr int kNumDims = 7;
inline constexpr std::array<Dim, kNumDims> kAllDims = {Dim::kX, Dim::kY, Dim::kC, Dim::kK,
                                                       Dim::kFw, Dim::kFh, Dim::kN};
const char* DimName(Dim d);  // "X", "Y", "C", "K", "Fw", "Fh", "N"
// Parses a DimName (case-insensitive); false when unknown.
bool ParseDim(const std::string& s, Dim* d);

// The three data sets of the nest: input image, kernel weights, output (partial sums).
enum class Operand { kInput = 0, kKernel, kOutput };
inline constexpr int kNumOperands = 3;
const char* OperandName(Operand t);  // "input", "kernel", "output"
const char* BufferName(Operand t);   // "IB", "KB", "OB"

// Whether loop dimension `d` indexes operand `t` (the reuse rule: a loop that does not index t
// reuses t's data): X, Y, N index input and output; C, Fw, Fh index input and kernel; K indexes
// kernel and output.
bool Indexes(Dim d, Operand t);

using Extents = std::array<int64_t, kNumDims>;  // by Dim; block sizes use the same layout

struct Layer {
  std::string name = "layer";
  Extents ext = {1, 1, 1, 1, 1, 1, 1};
  int64_t stride_x = 1, stride_y = 1;
  int64_t extent(Dim d) const { return ext[static_cast<int>(d)]; }
  int64_t& extent(Dim d) { return ext[static_cast<int>(d)]; }
  int64_t Macs() const;
  // Elements of operand t in a block with sizes `b` (the footprint of the loops inside it).
  int64_t Footprint(Operand t, const Extents& b) const;
  int64_t Size(Operand t) const { return Footprint(t, ext); }
};

// Conv layer with output X x Y, C input and K output channels, an Fw x Fh window, batch N.
Layer ConvLayer(std::string name, int64_t x, int64_t y, int64_t c, int64_t k, int64_t fw, int64_t fh,
                int64_t n = 1, int64_t stride_x = 1, int64_t stride_y = 1);
// Fully connected C -> K on a batch of N.
Layer FcLayer(std::string name, int64_t c, int64_t k, int64_t n = 1);
// Every extent >= 1 and the operand sizes below 2^50 elements; the error names the dimension.
Status ValidateLayer(const Layer& l);

}  // namespace sramplan::blocking
