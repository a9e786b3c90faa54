#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace sramplan {

// "1,3,224,224" style join.
std::string JoinInts(const std::vector<int64_t>& v, const char* sep = ",");
// 131072 -> "128.0 KiB"; small numbers stay in bytes.
std::string HumanBytes(int64_t bytes);
// Parses a byte size: "1024", "128KiB", "128KB", "512k", "1MiB", "2GiB", "1TiB", "1.5KiB" (KB and KiB
// both mean 1024 here, as MCU vendors use; "B" is optional). A fraction is accepted when the result
// is a whole number of bytes. Errors say why: not a size, not a whole number of bytes, or larger than
// kMaxBytes (2^50). Zero is returned as 0 (callers that need a positive size check that).
StatusOr<int64_t> ParseSize(const std::string& text);
// ParseSize(text).ok(), storing the value.
bool ParseByteSize(const std::string& text, int64_t* out);
std::string ToLower(std::string s);

// The most sramplan reads from one file: 2 GiB - 1 (ONNX protobuf's own limit).
inline constexpr int64_t kMaxFileBytes = (int64_t{1} << 31) - 1;
// Reads `path` whole, but never more than `max_bytes` + 1 bytes: a larger file, an endless device
// (/dev/zero) or a FIFO that keeps writing fails with a message naming the limit. A regular file
// larger than the limit fails before reading. `check_head`, when given, sees the first bytes (4 KiB,
// or the whole file when shorter) before the rest is read; it may refuse the file at once, or lower
// the limit for the kind of file it recognises (`*max_bytes`).
// NotFound when the file cannot be opened, InvalidArgument when it is too large or refused.
Status ReadFileBounded(const std::string& path, int64_t max_bytes, std::string* out,
                       const std::function<Status(std::string_view head, int64_t* max_bytes)>& check_head = nullptr);
bool ReadFileToString(const std::string& path, std::string* out, std::string* error,
                      int64_t max_bytes = kMaxFileBytes);

}  // namespace sramplan
