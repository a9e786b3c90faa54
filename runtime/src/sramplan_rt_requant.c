/* sramplan runtime: requantisation primitives (integer-only, MCU-safe). */
#include "sp_internal.h"
#include "sramplan_rt_int8.h"

int32_t sp_saturating_rounding_doubling_high_mul(int32_t a, int32_t b) { return sp_srdhm(a, b); }

int32_t sp_rounding_divide_by_pot(int32_t x, int32_t exponent) {
  if (exponent < 0) exponent = 0;
  if (exponent > 31) exponent = 31;
  return sp_rdbpot(x, exponent);
}

int32_t sp_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift) {
  return sp_mbqm(x, multiplier, shift);
}
