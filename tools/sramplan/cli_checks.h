// Validators of command-line values shared by every verb: one rule per kind of value, so that
// plan, verify, place and codegen accept and refuse the same things with the same message.
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/strings.h"

namespace sramplan::cli {

// Time limits (--time-limit of plan, verify and place): a finite number of seconds in (0, 10^6].
constexpr double kMaxTimeLimitS = 1e6;
inline const CLI::Validator kTimeLimit(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0 || v > kMaxTimeLimitS)
        return "'" + text + "' is not a time limit: give a number of seconds greater than 0 and at most 1000000";
      return "";
    },
    "SECONDS in (0, 1e6]");

// Byte sizes (--capacity, --budget): ParseSize's message says what is wrong ("1.3B" is not a whole
// number of bytes, "99999TiB" is too large).
inline std::string CheckPositiveSize(const std::string& text) {
  ::sramplan::StatusOr<int64_t> v = ::sramplan::ParseSize(text);
  if (!v.ok()) return v.status().message();
  if (*v <= 0) return "'" + text + "' must be a positive size (e.g. 1048576 or 1MiB)";
  return "";
}
inline const CLI::Validator kPositiveSize([](std::string& text) { return CheckPositiveSize(text); }, "SIZE");
inline const CLI::Validator kBudget(
    [](std::string& text) -> std::string {
      if (text == "min" || text == "mpmf" || text == "avg") return "";
      std::string e = CheckPositiveSize(text);
      return e.empty() ? "" : e + "; or give min, mpmf or avg";
    },
    "SIZE|min|mpmf|avg");
// Counts of bytes given on the command line (--segment-bytes, --stack).
inline const CLI::Validator kByteCount(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || v < 0 || v > (1LL << 31))
        return "'" + text + "' must be a whole number of bytes in [0, 2^31]";
      return "";
    },
    "BYTES");

// Tensor dims (--input-shape): "1x3x96x96" or "1,3,96,96"; empty text gives no dims.
inline ::sramplan::StatusOr<std::vector<int64_t>> ParseDims(const std::string& text, const std::string& flag) {
  std::vector<int64_t> dims;
  if (text.empty()) return dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of("x,", pos);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(pos, end - pos);
    char* stop = nullptr;
    errno = 0;
    const long long v = std::strtoll(part.c_str(), &stop, 10);
    if (part.empty() || stop != part.c_str() + part.size() || errno == ERANGE || v < 1 || v > (1LL << 31))
      return ::sramplan::InvalidArgument(flag + " '" + text + "': '" + part +
                                         "' is not a dimension; give positive whole numbers joined by 'x', e.g. "
                                         "1x3x96x96");
    dims.push_back(v);
    pos = end + 1;
  }
  return dims;
}

}  // namespace sramplan::cli
