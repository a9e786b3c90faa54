// Integer helpers with overflow checks: every byte count a user can influence goes through these.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>

namespace sramplan {

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// Product of all factors, or nullopt when it overflows int64 or any factor is negative.
inline std::optional<int64_t> CheckedProduct(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    if (f < 0 || __builtin_mul_overflow(r, f, &r)) return std::nullopt;
  }
  return r;
}
// a * b when it is at most `limit` (a, b >= 0), else nullopt.
inline std::optional<int64_t> CheckedMulAtMost(int64_t a, int64_t b, int64_t limit) {
  auto r = CheckedMul(a, b);
  if (!r || *r > limit) return std::nullopt;
  return r;
}
// True when v fits an int (for fields stored as int).
inline constexpr bool FitsInt(int64_t v) {
  return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
}
inline constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  return (a >= 0) ? a / b : -((-a + b - 1) / b);
}
inline constexpr int64_t AlignUp(int64_t v, int64_t alignment) {
  return alignment <= 1 ? v : CeilDiv(v, alignment) * alignment;
}
// Largest byte count sramplan accepts for one tensor or arena (1 PiB): keeps sums far from overflow.
inline constexpr int64_t kMaxBytes = int64_t{1} << 50;

}  // namespace sramplan
