#include "blocking/layer.h"

#include <cctype>


namespace sramplan::blocking {

namespace {
constexpr const char* kDimNames[kNumDims] = {"X", "Y", "C", "K", "Fw", "Fh", "N"};
// indexes[dim][operand]
constexpr bool kIndexes[kNumDims][kNumOperands] = {
    {true, false, true},  {true, false, true},  {true, true, false}, {false, true, true},
    {true, true, false},  {true, true, false},  {true, false, true}};
}  // namespace

const char* DimName(Dim d) { return kDimNames[static_cast<int>(d)]; }

bool ParseDim(const std::string& s, Dim* d) {
  for (Dim x : kAllDims) {
    std::string n = DimName(x);
    if (n.size() != s.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < n.size(); ++i)
      eq = eq && std::tolower(static_cast<unsigned char>(n[i])) == std::tolower(static_cast<unsigned char>(s[i]));
    if (eq) {
      *d = x;
      return true;
    }
  }
  return false;
}

const char* OperandName(Operand t) {
  static constexpr const char* kNames[] = {"input", "kernel", "output"};
  return kNames[static_cast<int>(t)];
}
const char* BufferName(Operand t) {
  static constexpr const char* kNames[] = {"IB", "KB", "OB"};
  return kNames[static_cast<int>(t)];
}

bool Indexes(Dim d, Operand t) { return kIndexes[static_cast<int>(d)][static_cast<int>(t)]; }

const char* KindName(LayerKind k) {
  static constexpr const char* kNames[] = {"conv", "maxpool", "avgpool", "lrn"};
  return kNames[static_cast<int>(k)];
}

bool ParseKind(const std::string& s, LayerKind* k) {
  std::string l;
  for (char ch : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (l == "fc") l = "conv";
  for (LayerKind x : {LayerKind::kConv, LayerKind::kMaxPool, LayerKind::kAvgPool, LayerKind::kLrn})
    if (l == KindName(x)) {
      *k = x;
      return true;
    }
  return false;
}

bool Layer::Indexes(Dim d, Operand t) const {
  if (kind == LayerKind::kConv) return blocking::Indexes(d, t);
  if (t == Operand::kKernel) return false;
  if (d == Dim::kK) return true;
  return blocking::Indexes(d, t);
}

bool Layer::IsWindow(Dim d) const {
  if (kind == LayerKind::kLrn) return d == Dim::kC;
  return d == Dim::kFw || d == Dim::kFh;
}

int64_t Layer::Footprint(Operand t, const Extents& b) const {
  auto e = [&](Dim d) { return b[static_cast<int>(d)]; };
  if (kind != LayerKind::kConv) {
    if (t == Operand::kKernel) return 0;
    if (t == Operand::kInput && kind == LayerKind::kLrn)
      return e(Dim::kN) * (e(Dim::kK) + e(Dim::kC) - 1) * e(Dim::kX) * e(Dim::kY);
    if (t == Operand::kInput)
      return e(Dim::kN) * e(Dim::kK) * ((e(Dim::kX) - 1) * stride_x + e(Dim::kFw)) *
             ((e(Dim::kY) - 1) * stride_y + e(Dim::kFh));
  }
  switch (t) {
    case Operand::kInput:
      return e(Dim::kN) * e(Dim::kC) * ((e(Dim::kX) - 1) * stride_x + e(Dim::kFw)) *
             ((e(Dim::kY) - 1) * stride_y + e(Dim::kFh));
    case Operand::kKernel:
      return e(Dim::kK) * e(Dim::kC) * e(Dim::kFw) * e(Dim::kFh);
    case Operand::kOutput:
      return e(Dim::kN) * e(Dim::kK) * e(Dim::kX) * e(Dim::kY);
  }
  return 0;
}

int64_t Layer::Macs() const {
  int64_t m = 1;
  for (int64_t e : ext) m *= e;
  return m;
}

Layer ConvLayer(std::string name, int64_t x, int64_t y, int64_t c, int64_t k, int64_t fw, int64_t fh,
                int64_t n, int64_t stride_x, int64_t stride_y) {
  Layer l;
  l.name = std::move(name);
  l.ext = {x, y, c, k, fw, fh, n};
  l.stride_x = stride_x;
  l.stride_y = stride_y;
  return l;
}

Layer FcLayer(std::string name, int64_t c, int64_t k, int64_t n) { return ConvLayer(std::move(name), 1, 1, c, k, 1, 1, n); }

Layer PoolLayer(std::string name, LayerKind kind, int64_t x, int64_t y, int64_t channels, int64_t fw, int64_t fh,
                int64_t n, int64_t stride_x, int64_t stride_y) {
  Layer l = ConvLayer(std::move(name), x, y, 1, channels, fw, fh, n, stride_x, stride_y);
  l.kind = kind;
  return l;
}

Layer LrnLayer(std::string name, int64_t x, int64_t y, int64_t channels, int64_t size, int64_t n) {
  Layer l = ConvLayer(std::move(name), x, y, size, channels, 1, 1, n);
  l.kind = LayerKind::kLrn;
  return l;
}

Status ValidateLayer(const Layer& l) {
  constexpr int64_t kMax = int64_t{1} << 24;
  for (Dim d : kAllDims) {
    if (l.extent(d) < 1)
      return InvalidArgument("layer '" + l.name + "': dimension " + DimName(d) + " = " +
                             std::to_string(l.extent(d)) + " must be a positive integer (at least 1)");
    if (l.extent(d) > kMax)
      return InvalidArgument("layer '" + l.name + "': dimension " + DimName(d) + " = " +
                             std::to_string(l.extent(d)) + " is above 2^24; give a smaller extent");
  }
  if (l.stride_x < 1 || l.stride_y < 1 || l.stride_x > 64 || l.stride_y > 64)
    return InvalidArgument("layer '" + l.name + "': strides " + std::to_string(l.stride_x) + " x " +
                           std::to_string(l.stride_y) + " must be in [1, 64]");
  if ((l.kind == LayerKind::kMaxPool || l.kind == LayerKind::kAvgPool) && l.extent(Dim::kC) != 1)
    return InvalidArgument("layer '" + l.name + "': a " + KindName(l.kind) + " layer has C = " +
                           std::to_string(l.extent(Dim::kC)) + "; give the channels as K and leave C = 1");
  if (l.kind == LayerKind::kLrn &&
      (l.extent(Dim::kFw) != 1 || l.extent(Dim::kFh) != 1 || l.stride_x != 1 || l.stride_y != 1))
    return InvalidArgument("layer '" + l.name + "': an lrn layer normalises across channels (K, window C = its size); "
                           "give Fw = Fh = 1 and strides 1");
  long double macs = 1;
  for (int64_t e : l.ext) macs *= static_cast<long double>(e);
  if (macs > static_cast<long double>(int64_t{1} << 44))
    return InvalidArgument("layer '" + l.name + "': " + std::to_string(static_cast<double>(macs)) +
                           " MACs is above 2^44; give smaller dimensions");
  return Status::Ok();
}

}  // namespace sramplan::blocking
