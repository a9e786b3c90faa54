#include "blocking/schedules.h"

#include "blocking/optimizer.h"

namespace sramplan::blocking {

namespace {
int64_t LargestDivisorUpTo(int64_t n, int64_t cap) {
  int64_t best = 1;
  for (int64_t d : Divisors(n))
    if (d <= cap) best = d;
  return best;
}
}  // namespace

BlockingString DianNaoDefault(const Layer& layer, int64_t ib_bytes, int64_t word_bytes) {
  const int64_t C = layer.extent(Dim::kC), K = layer.extent(Dim::kK), X = layer.extent(Dim::kX);
  const int64_t fw = layer.extent(Dim::kFw), fh = layer.extent(Dim::kFh);
  int64_t ti = LargestDivisorUpTo(C, 16), tn = LargestDivisorUpTo(K, 16);
  int64_t xb = 1;
  for (int64_t d : Divisors(X))
    if (C * ((d - 1) * layer.stride_x + fw) * fh * word_bytes <= ib_bytes) xb = d;
  BlockingString s;
  Extents cur = {1, 1, 1, 1, 1, 1, 1};
  auto add = [&](Dim d, int64_t size) {
    if (size <= cur[static_cast<int>(d)]) return;
    s.push_back({d, size});
    cur[static_cast<int>(d)] = size;
  };
  add(Dim::kC, ti);
  add(Dim::kK, tn);
  add(Dim::kFw, fw);
  add(Dim::kFh, fh);
  add(Dim::kC, C);
  add(Dim::kX, xb);
  add(Dim::kK, K);
  add(Dim::kX, X);
  add(Dim::kY, layer.extent(Dim::kY));
  add(Dim::kN, layer.extent(Dim::kN));
  return s;
}

}  // namespace sramplan::blocking
