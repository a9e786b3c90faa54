// Integer helpers with overflow checks: every byte count a user can influence goes through these.
#pragma once

#include <cstdint>
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
