#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sramplan {

// "1,3,224,224" style join.
std::string JoinInts(const std::vector<int64_t>& v, const char* sep = ",");
// 131072 -> "128.0 KiB"; small numbers stay in bytes.
std::string HumanBytes(int64_t bytes);
// Parses "128KiB", "128KB", "1MiB", "512k", "1024" (KB and KiB both mean 1024 here, as MCU vendors use).
bool ParseByteSize(const std::string& text, int64_t* out);
std::string ToLower(std::string s);
bool ReadFileToString(const std::string& path, std::string* out, std::string* error);

}  // namespace sramplan
