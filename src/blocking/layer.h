// One CNN layer as the blocking paper's loop nest (Yang et al., "A Systematic Approach to Blocking
// Convolutional Neural Networks", Sec. 3): seven loops X, Y (output pixels), C (input channels),
// K (kernels = output channels), Fw, Fh (window) and N (batch), around
//   O[n][k][y][x] += I[n][c][y + fh][x + fw] * W[k][c][fh][fw]
// with strides sx, sy (x*sx + fw; the input is ((X-1)sx + Fw) x ((Y-1)sy + Fh), any padding already
// applied). FC is the case X = Y = Fw = Fh = 1.
//
// Pooling and LRN use the same seven loops without a kernel operand (LayerKind):
//   pooling  O[n][k][y][x] = max / sum over (fh, fw) of I[n][k][y sy + fh][x sx + fw]
//            (K = the channels, C = 1; K indexes the input and the output);
//   LRN      O[n][k][y][x] = sum over c of I[n][k + c][y][x]^2
//            (K = the channels, C = the local size across channels, Fw = Fh = 1, strides 1; the
//            input has K + C - 1 channels, its padding applied; C indexes only the input and slides
//            a window along K as Fw slides one along X).
// The nest computes the window max (max pooling), the window sum (average pooling: the 1 / (Fw Fh)
// scale is a per-output epilogue) or the sum of squares (LRN: x / (bias + alpha s / n)^beta is a
// per-output epilogue); one "MAC" is one window step (compare, add or square-add).
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

enum class LayerKind { kConv = 0, kMaxPool, kAvgPool, kLrn };
const char* KindName(LayerKind k);  // "conv", "maxpool", "avgpool", "lrn"
// Parses a KindName (case-insensitive; "fc" is "conv"); false when unknown.
bool ParseKind(const std::string& s, LayerKind* k);

struct Layer {
  std::string name = "layer";
  Extents ext = {1, 1, 1, 1, 1, 1, 1};
  int64_t stride_x = 1, stride_y = 1;
  LayerKind kind = LayerKind::kConv;
  bool HasKernel() const { return kind == LayerKind::kConv; }
  // The reuse rule for this kind (Indexes above for conv; pooling and LRN: K indexes the input
  // and the output, the kernel has no data).
  bool Indexes(Dim d, Operand t) const;
  // A dimension whose loop slides the input window (Fw, Fh; LRN: C): the input gets a buffer
  // after it (model.h).
  bool IsWindow(Dim d) const;
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
// Pooling over an Fw x Fh window (max or average) of `channels` channels; output X x Y.
Layer PoolLayer(std::string name, LayerKind kind, int64_t x, int64_t y, int64_t channels, int64_t fw, int64_t fh,
                int64_t n = 1, int64_t stride_x = 1, int64_t stride_y = 1);
// Local response normalisation across `size` neighbouring channels of `channels` channels.
Layer LrnLayer(std::string name, int64_t x, int64_t y, int64_t channels, int64_t size, int64_t n = 1);
// Every extent >= 1 and the operand sizes below 2^50 elements; the error names the dimension.
Status ValidateLayer(const Layer& l);

}  // namespace sramplan::blocking
