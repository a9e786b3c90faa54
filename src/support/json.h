// One layer for reading JSON input files (models, MCUNet configs, targets, plans): parsing that cannot
// overflow the stack or throw, and typed getters whose errors name the field path
// ("plans[2].buffers[17].first_step: must be an integer in [0, 2^31), got 9007199254740992").
//
// Nothing here throws: every nlohmann exception is caught and becomes InvalidArgument.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/status.h"

namespace sramplan {

// Deepest nesting of arrays and objects ParseJson accepts. Everything that walks a parsed value
// recursively (nlohmann's copy and dump, the target `inherit` merge) is bounded by this.
inline constexpr int kMaxJsonDepth = 512;

// Parses JSON text. `name` starts every message as given ("'model.json'", "target 'x'"). Text nested deeper
// than `max_depth` is rejected before parsing, naming the line and column where the limit is
// crossed; syntax errors and numbers out of range (1e999) name their line and column too.
StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& name,
                                   int max_depth = kMaxJsonDepth);

// For ReadFileBounded's head check of a file that must hold one JSON object: refuses at once bytes
// whose first non-space character is not '{' (a binary, /dev/zero, an endless stream of garbage).
Status CheckJsonObjectHead(std::string_view head, const std::string& name);

// Compact text of `v` for messages, cut to `max_chars` (then ending in "..."). Invalid UTF-8 in
// strings is replaced, never thrown.
std::string JsonSnippet(const nlohmann::json& v, size_t max_chars = 80);
// The serialised value with invalid UTF-8 replaced instead of thrown (nlohmann's dump throws).
std::string DumpJson(const nlohmann::json& v, int indent = -1);
// "[0, 2^31)", "[1, 4096]", "[-2^63, 2^63)": the range an integer field accepts, as messages show it.
std::string IntRangeText(int64_t lo, int64_t hi);

// Common integer ranges for fields.
inline constexpr int64_t kInt32Max = 2147483647;
inline constexpr int64_t kInt64Min = INT64_MIN;
inline constexpr int64_t kInt64Max = INT64_MAX;

// A JSON value plus the path that leads to it from the document root ("levels[1].capacity"). Getters
// return the value or InvalidArgument("<path>: <what is wrong>, got <value>"). The referenced value
// must outlive the JsonRef (children point into the same document).
class JsonRef {
 public:
  explicit JsonRef(const nlohmann::json& v, std::string path = "") : v_(&v), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *v_; }
  const std::string& path() const { return path_; }
  // InvalidArgument("<path>: <what>"), or just <what> at the root.
  Status Error(const std::string& what) const;

  bool is_object() const { return v_->is_object(); }
  bool is_array() const { return v_->is_array(); }
  bool is_null() const { return v_->is_null(); }
  bool is_string() const { return v_->is_string(); }
  // An object that has `key` with a non-null value.
  bool Has(std::string_view key) const;
  // Element count of an array or object; 0 for anything else.
  size_t size() const { return (v_->is_array() || v_->is_object()) ? v_->size() : 0; }
  // Array element `i` (i < size()).
  JsonRef operator[](size_t i) const;
  // Object member `key` (a null value when this is not an object or has no such member).
  JsonRef Child(std::string_view key) const;
  // The members of an object in document order (key order for nlohmann::json), as (key, value).
  std::vector<std::pair<std::string, JsonRef>> Items() const;

  Status ExpectObject() const;
  Status ExpectArray() const;

  // This value as a type. Integers must be JSON integers (no fraction, no exponent) within
  // [lo, hi]; numbers must be finite and within [lo, hi].
  StatusOr<int64_t> AsInt(int64_t lo, int64_t hi) const;
  StatusOr<double> AsNumber(double lo, double hi) const;
  StatusOr<std::string> AsString() const;
  StatusOr<bool> AsBool() const;
  StatusOr<std::vector<int64_t>> AsIntList(int64_t lo, int64_t hi) const;
  StatusOr<std::vector<std::string>> AsStringList() const;

  // Members. A required member that is missing (or null) is an error naming its path; the `...Or`
  // forms return `dflt` for a missing or null member.
  StatusOr<JsonRef> Field(std::string_view key) const;
  StatusOr<JsonRef> Object(std::string_view key) const;
  StatusOr<JsonRef> Array(std::string_view key) const;
  StatusOr<int64_t> Int(std::string_view key, int64_t lo, int64_t hi) const;
  StatusOr<int64_t> IntOr(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const;
  StatusOr<double> Number(std::string_view key, double lo, double hi) const;
  StatusOr<double> NumberOr(std::string_view key, double dflt, double lo, double hi) const;
  StatusOr<std::string> String(std::string_view key) const;
  StatusOr<std::string> StringOr(std::string_view key, const std::string& dflt) const;
  StatusOr<bool> Bool(std::string_view key) const;
  StatusOr<bool> BoolOr(std::string_view key, bool dflt) const;
  StatusOr<std::vector<int64_t>> IntList(std::string_view key, int64_t lo, int64_t hi) const;
  StatusOr<std::vector<int64_t>> IntListOr(std::string_view key, int64_t lo, int64_t hi) const;
  StatusOr<std::vector<std::string>> StringList(std::string_view key) const;
  StatusOr<std::vector<std::string>> StringListOr(std::string_view key) const;

 private:
  std::string ChildPath(std::string_view key) const;
  Status Missing(std::string_view key, const std::string& what) const;

  const nlohmann::json* v_;
  std::string path_;
};

// The older "where"-style helpers (messages "<where>: field 'k' ..."), exact and exception-free like
// JsonRef. Integers span int64.
Status ExpectObject(const nlohmann::json& j, const std::string& where);
StatusOr<int64_t> GetInt(const nlohmann::json& j, const std::string& key, const std::string& where);
StatusOr<int64_t> GetIntOr(const nlohmann::json& j, const std::string& key, int64_t dflt,
                           const std::string& where);
StatusOr<double> GetNumberOr(const nlohmann::json& j, const std::string& key, double dflt,
                             const std::string& where);
StatusOr<std::string> GetString(const nlohmann::json& j, const std::string& key,
                                const std::string& where);
StatusOr<std::string> GetStringOr(const nlohmann::json& j, const std::string& key,
                                  const std::string& dflt, const std::string& where);
StatusOr<std::vector<int64_t>> GetIntList(const nlohmann::json& j, const std::string& key,
                                          const std::string& where);
StatusOr<bool> GetBoolOr(const nlohmann::json& j, const std::string& key, bool dflt,
                         const std::string& where);
// An exact int64 from a JSON integer (signed or unsigned); nullopt for anything else or out of range.
std::optional<int64_t> JsonToInt64(const nlohmann::json& v);

// Message of a nlohmann exception without its "[json.exception.type_error.302] " prefix, cut short.
std::string JsonExceptionText(const nlohmann::json::exception& e);

// Runs `body`; a nlohmann exception that escaped the typed getters becomes InvalidArgument naming
// `what` (a last line of defence: the getters above do not throw).
template <typename T, typename F>
StatusOr<T> GuardJson(const std::string& what, F&& body) {
  try {
    return body();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(what + ": unexpected JSON value (" + JsonExceptionText(e) + ")");
  }
}

}  // namespace sramplan
