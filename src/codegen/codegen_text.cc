// Text helpers of the C emitter (emitter.h): the runtime files a project carries, literals,
// identifiers, comments, constant arrays and pointer expressions.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/emitter.h"
#include "sramplan_rt_seg.h"
#include "support/strings.h"

namespace sramplan::codegen {

// The runtime files a firmware project carries: the MCU-safe sources runtime/CMakeLists.txt lists
// in SRAMPLAN_RUNTIME_MCU_SOURCES (read from there, so a kernel added to the runtime is copied too)
// and the headers they include.
const char* const kRuntimeHeaders[] = {"include/sramplan_rt.h", "include/sramplan_rt_int8.h",
                                       "src/sp_internal.h", "src/sp_fast_s8.h"};
const char* const kDefaultRuntimeSources[] = {
    "src/sramplan_rt_common.c",  "src/sramplan_rt_move.c",    "src/sramplan_rt_requant.c",
    "src/sramplan_rt_conv_s8.c", "src/sramplan_rt_pool_s8.c", "src/sramplan_rt_elementwise_s8.c"};


StatusOr<RuntimeFiles> ListRuntime(const std::string& dir) {
  RuntimeFiles r;
  std::string cmake, error;
  if (ReadFileToString(dir + "/CMakeLists.txt", &cmake, &error)) {
    const size_t at = cmake.find("set(SRAMPLAN_RUNTIME_MCU_SOURCES");
    const size_t end = at == std::string::npos ? at : cmake.find(')', at);
    if (end != std::string::npos) {
      const std::string list = cmake.substr(at, end - at);
      const std::string key = "${CMAKE_CURRENT_SOURCE_DIR}/";
      for (size_t i = 0; (i = list.find(key, i)) != std::string::npos;) {
        i += key.size();
        size_t j = i;
        while (j < list.size() && !std::isspace(static_cast<unsigned char>(list[j]))) ++j;
        r.sources.push_back(list.substr(i, j - i));
        i = j;
      }
    }
  }
  if (r.sources.empty())
    r.sources.assign(std::begin(kDefaultRuntimeSources), std::end(kDefaultRuntimeSources));
  r.headers.assign(std::begin(kRuntimeHeaders), std::end(kRuntimeHeaders));
  // Every runtime header an MCU source includes (e.g. a segment-aware kernel's own header).
  for (const std::string& src : r.sources) {
    std::string text;
    if (!ReadFileToString(dir + "/" + src, &text, &error))
      return NotFound("the runtime source '" + dir + "/" + src + "' is missing (" + error +
                      "); point codegen at the runtime/ directory");
    for (size_t i = 0; (i = text.find("#include \"", i)) != std::string::npos;) {
      i += 10;
      const size_t j = text.find('"', i);
      if (j == std::string::npos) break;
      const std::string h = text.substr(i, j - i);
      i = j;
      for (const char* sub : {"include/", "src/"}) {
        const std::string rel = sub + h;
        if (std::filesystem::exists(dir + "/" + rel) &&
            std::find(r.headers.begin(), r.headers.end(), rel) == r.headers.end())
          r.headers.push_back(rel);
      }
    }
  }
  return r;
}

std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string Str(int64_t v) {
  // INT64/INT32 minimum cannot be written as a literal; the others print as they are.
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  if (v > INT32_MAX || v < INT32_MIN) return std::to_string(v) + "LL";
  return std::to_string(v);
}

std::string Hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

std::string Identifier(const std::string& name) {
  std::string r;
  for (char c : name) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

std::string Comment(const std::string& s) {
  std::string r = s;
  for (size_t i = 0; (i = r.find("*/", i)) != std::string::npos;) r.replace(i, 2, "* /");
  return r;
}

std::string CString(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 32) continue;
    r += c;
  }
  return r;
}


bool TensorCType(ir::DataType t, CType* out) {
  switch (t) {
    case ir::DataType::kInt8:
      *out = {"int8_t", 1};
      return true;
    case ir::DataType::kUInt8:
    case ir::DataType::kBool:
      *out = {"uint8_t", 1};
      return true;
    case ir::DataType::kInt16:
      *out = {"int16_t", 2};
      return true;
    case ir::DataType::kInt32:
      *out = {"int32_t", 4};
      return true;
    case ir::DataType::kInt64:
      *out = {"int64_t", 8};
      return true;
    default:
      return false;
  }
}

int CTypeSize(const std::string& ctype) {
  if (ctype == "int8_t" || ctype == "uint8_t") return 1;
  if (ctype == "int16_t") return 2;
  if (ctype == "int32_t") return 4;
  if (ctype == "int64_t" || ctype == "sp_requant_t") return 8;
  return 1;
}

int64_t Element(const std::vector<uint8_t>& bytes, size_t i, const std::string& ctype) {
  const int n = CTypeSize(ctype);
  uint64_t u = 0;
  for (int b = n - 1; b >= 0; --b) u = (u << 8) | bytes[i * n + b];
  if (ctype == "uint8_t") return static_cast<int64_t>(u);
  if (n == 1) return static_cast<int8_t>(u);
  if (n == 2) return static_cast<int16_t>(u);
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(u));
  return static_cast<int64_t>(u);
}

std::string ArrayDefinition(const std::string& ctype, const std::string& name,
                            const std::vector<uint8_t>& bytes, const std::string& comment) {
  std::string s;
  if (!comment.empty()) s += "/* " + Comment(comment) + " */\n";
  if (ctype == "sp_requant_t") {
    const size_t n = bytes.size() / 8;
    s += "static const sp_requant_t " + name + "[" + std::to_string(std::max<size_t>(n, 1)) +
         "] = {";
    for (size_t i = 0; i < n; ++i) {
      s += (i % 4 == 0 ? "\n    " : " ") + std::string("{") +
           Str(Element(bytes, 2 * i, "int32_t")) + ", " +
           Str(Element(bytes, 2 * i + 1, "int32_t")) + "}" + (i + 1 < n ? "," : "");
    }
    if (n == 0) s += "{0, 0}";
    return s + "};\n";
  }
  const int size = CTypeSize(ctype);
  const size_t n = bytes.size() / size;
  const size_t per_line = size == 1 ? 16 : size <= 4 ? 8 : 4;
  s +=
      "static const " + ctype + " " + name + "[" + std::to_string(std::max<size_t>(n, 1)) + "] = {";
  for (size_t i = 0; i < n; ++i)
    s += (i % per_line == 0 ? "\n    " : " ") + Str(Element(bytes, i, ctype)) +
         (i + 1 < n ? "," : "");
  if (n == 0) s += "0";
  return s + "};\n";
}

// An address a pointer argument resolves to: `base` (an array of `ctype`) plus bytes.

std::string Terms(int64_t offset, int64_t step, bool loop) {
  std::string s;
  if (offset != 0) s += " + " + Str(offset);
  if (loop && step != 0) s += step == 1 ? " + i" : " + i * " + Str(step);
  return s;
}

std::string PointerExpr(const Addr& a, const std::string& param, bool loop) {
  std::string pointee = param;
  const bool const_param = pointee.rfind("const ", 0) == 0;
  if (const_param) pointee = pointee.substr(6);
  pointee.pop_back();  // '*'
  const int size = CTypeSize(a.ctype);
  if (pointee == a.ctype && (const_param || !a.is_const) && a.offset % size == 0 &&
      a.step % size == 0) {
    const std::string t = Terms(a.offset / size, a.step / size, loop);
    return t.empty() ? a.base : "(" + a.base + t + ")";
  }
  const std::string bytes =
      a.ctype == "uint8_t" ? a.base
                           : std::string("(") + (a.is_const ? "const " : "") + "uint8_t*)" + a.base;
  return "(" + param + ")(" + bytes + Terms(a.offset, a.step, loop) + ")";
}

}  // namespace sramplan::codegen
