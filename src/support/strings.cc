#include "support/strings.h"

#include <cctype>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>
#include <sys/stat.h>

#include "support/int_math.h"

namespace sramplan {

std::string JoinInts(const std::vector<int64_t>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

std::string HumanBytes(int64_t bytes) {
  char buf[64];
  double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  } else if (bytes < int64_t{1} << 30) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

std::string ToLower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

StatusOr<int64_t> ParseSize(const std::string& text) {
  const std::string example = " (use e.g. 131072, 128KiB or 1.5MiB)";
  const std::string shown = "'" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "'";
  const std::string too_large = shown + " is too large: sramplan handles sizes up to 2^50 bytes (1 PiB)";
  size_t i = 0;
  // Integer part (exact int64) and fraction digits (exact: at most 18 significant digits).
  int64_t whole = 0;
  bool whole_overflow = false;
  size_t int_digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    auto m = CheckedMul(whole, 10);
    auto a = m ? CheckedAdd(*m, text[i] - '0') : std::nullopt;
    if (a) whole = *a;
    else whole_overflow = true;
    ++i;
    ++int_digits;
  }
  std::string fraction;
  bool has_point = false;
  if (i < text.size() && text[i] == '.') {
    has_point = true;
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) fraction += text[i++];
  }
  if (int_digits == 0 && fraction.empty()) {
    if (!text.empty() && text[0] == '-') return InvalidArgument(shown + " is not a size: sizes cannot be negative");
    return InvalidArgument(shown + " is not a size" + example);
  }
  if (has_point && fraction.empty()) return InvalidArgument(shown + " is not a size" + example);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();  // 1.50 == 1.5
  std::string unit = ToLower(text.substr(i));
  int shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  else if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
  else
    return InvalidArgument(shown + " is not a size: unknown unit '" + text.substr(i, 20) +
                           "' (B, KiB, MiB, GiB or TiB; KB means KiB)");
  if (whole_overflow) return InvalidArgument(too_large);
  if (fraction.size() > 18) return InvalidArgument(shown + " is not a whole number of bytes (too many decimals)");
  // bytes = whole * 2^shift + frac * 2^shift / 10^digits, the last term exact.
  __int128 frac = 0, pow10 = 1;
  for (char c : fraction) {
    frac = frac * 10 + (c - '0');
    pow10 *= 10;
  }
  __int128 frac_scaled = frac << shift;  // < 10^18 * 2^40 < 2^100
  if (frac_scaled % pow10 != 0) return InvalidArgument(shown + " is not a whole number of bytes");
  __int128 bytes = (static_cast<__int128>(whole) << shift) + frac_scaled / pow10;  // < 2^104
  if (bytes > kMaxBytes) return InvalidArgument(too_large);
  return static_cast<int64_t>(bytes);
}

bool ParseByteSize(const std::string& text, int64_t* out) {
  StatusOr<int64_t> v = ParseSize(text);
  if (!v.ok()) return false;
  *out = *v;
  return true;
}

Status ReadFileBounded(const std::string& path, int64_t max_bytes, std::string* out,
                       const std::function<Status(std::string_view head, int64_t* max_bytes)>& check_head) {
  out->clear();
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return NotFound("cannot open '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return NotFound("'" + path + "' is a directory, expected a file");
  auto limit_text = [&] {
    return std::to_string(max_bytes) + " bytes" + (max_bytes >= 1024 ? " (" + HumanBytes(max_bytes) + ")" : "");
  };
  if (S_ISREG(st.st_mode) && st.st_size > max_bytes)
    return InvalidArgument("'" + path + "' is " + std::to_string(static_cast<long long>(st.st_size)) +
                           " bytes; sramplan reads at most " + limit_text() + " from one file of this kind");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return NotFound("cannot open '" + path + "': " + std::strerror(errno));
  if (S_ISREG(st.st_mode)) out->reserve(static_cast<size_t>(st.st_size));
  constexpr size_t kHead = 4096;
  bool head_checked = !check_head;
  std::vector<char> buf(size_t{1} << 16);
  Status result = Status::Ok();
  while (true) {
    // Never read past max_bytes + 1: that one byte more tells "too large" from "exactly the limit".
    size_t want = buf.size();
    int64_t room = max_bytes + 1 - static_cast<int64_t>(out->size());
    if (room <= 0) break;
    if (static_cast<int64_t>(want) > room) want = static_cast<size_t>(room);
    if (!head_checked && out->size() < kHead) want = std::min(want, kHead - out->size());
    size_t n = std::fread(buf.data(), 1, want, f);
    out->append(buf.data(), n);
    bool eof = n < want;
    if (eof && std::ferror(f)) {
      result = InvalidArgument("error reading '" + path + "': " + std::strerror(errno));
      break;
    }
    if (!head_checked && (out->size() >= kHead || eof)) {
      head_checked = true;
      int64_t limit = max_bytes;
      result = check_head(*out, &limit);
      if (!result.ok()) break;
      max_bytes = std::min(max_bytes, limit);
    }
    if (eof) break;
  }
  std::fclose(f);
  if (!result.ok()) {
    out->clear();
    return result;
  }
  if (static_cast<int64_t>(out->size()) > max_bytes) {
    out->clear();
    out->shrink_to_fit();
    return InvalidArgument("'" + path + "' is larger than " + limit_text() +
                           ", the most sramplan reads from one file of this kind (stopped reading there)");
  }
  return Status::Ok();
}

bool ReadFileToString(const std::string& path, std::string* out, std::string* error, int64_t max_bytes) {
  Status s = ReadFileBounded(path, max_bytes, out);
  if (!s.ok()) {
    *error = s.message();
    return false;
  }
  return true;
}

}  // namespace sramplan
