#include "support/json.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sramplan {
namespace {

using nlohmann::json;

// 1-based line and column of byte `pos` of `text`.
std::pair<size_t, size_t> LineColumn(std::string_view text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string Cut(std::string s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  s.resize(max_chars);
  return s + "...";
}

// Scans the bytes (outside strings) for the nesting depth of [ and {; the position where it first
// exceeds `max_depth`, or npos.
size_t FindTooDeep(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return std::string_view::npos;
}

const char* TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

// "got 12", "got \"abc\"", "got an object {...}".
std::string Got(const json& v) {
  if (v.is_object() || v.is_array()) return std::string("got ") + TypeName(v) + " " + JsonSnippet(v);
  return "got " + JsonSnippet(v);
}

bool IsIdentifier(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

std::string PowerOfTwoText(uint64_t v) {
  // v is a power of two >= 2^16: "2^k".
  int k = 0;
  while ((uint64_t{1} << k) != v) ++k;
  return "2^" + std::to_string(k);
}

bool IsLargePowerOfTwo(uint64_t v) { return v >= (uint64_t{1} << 16) && (v & (v - 1)) == 0; }

std::string DoubleText(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  // Shortest form that round-trips.
  for (int prec = 1; prec <= 17; ++prec) {
    char s[64];
    std::snprintf(s, sizeof s, "%.*g", prec, d);
    if (std::strtod(s, nullptr) == d) return s;
  }
  return buf;
}

}  // namespace

Status CheckJsonObjectHead(std::string_view head, const std::string& name) {
  size_t k = 0;
  // A UTF-8 byte order mark is allowed (nlohmann skips it).
  if (head.substr(0, 3) == "\xEF\xBB\xBF") k = 3;
  while (k < head.size() && std::isspace(static_cast<unsigned char>(head[k]))) ++k;
  if (k == head.size() || head[k] == '{') return Status::Ok();
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(head[k]));
  std::string shown = std::isprint(static_cast<unsigned char>(head[k])) ? "'" + std::string(1, head[k]) + "'" : hex;
  return InvalidArgument(name + " is not a JSON object: it starts with " + shown + " at byte " + std::to_string(k) +
                         ", not '{'");
}

std::string DumpJson(const json& v, int indent) {
  return v.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string JsonSnippet(const json& v, size_t max_chars) {
  // Values are at most kMaxJsonDepth deep (ParseJson), so dump's recursion is bounded; the text of a
  // huge value is still built whole, so cut large containers before dumping.
  if ((v.is_array() || v.is_object()) && v.size() > max_chars) {
    json head = v.is_array() ? json::array() : json::object();
    size_t n = 0;
    for (auto it = v.begin(); it != v.end() && n < max_chars / 2; ++it, ++n) {
      if (v.is_array()) head.push_back(it->is_array() || it->is_object() ? json("...") : *it);
      else head[it.key()] = it->is_array() || it->is_object() ? json("...") : *it;
    }
    return Cut(DumpJson(head), max_chars);
  }
  if (v.is_string() && v.get_ref<const std::string&>().size() > max_chars)
    return Cut(DumpJson(json(v.get_ref<const std::string&>().substr(0, max_chars))), max_chars);
  return Cut(DumpJson(v), max_chars);
}

std::string IntRangeText(int64_t lo, int64_t hi) {
  std::string s = "[";
  if (lo < 0 && IsLargePowerOfTwo(uint64_t{0} - static_cast<uint64_t>(lo)))
    s += "-" + PowerOfTwoText(uint64_t{0} - static_cast<uint64_t>(lo));
  else
    s += std::to_string(lo);
  s += ", ";
  uint64_t next = static_cast<uint64_t>(hi) + 1;
  if (hi >= 0 && IsLargePowerOfTwo(next)) s += PowerOfTwoText(next) + ")";
  else if (hi > 0 && IsLargePowerOfTwo(static_cast<uint64_t>(hi))) s += PowerOfTwoText(static_cast<uint64_t>(hi)) + "]";
  else s += std::to_string(hi) + "]";
  return s;
}

std::string JsonExceptionText(const json::exception& e) {
  std::string m = e.what();
  if (m.rfind("[json.exception.", 0) == 0) {
    size_t close = m.find("] ");
    if (close != std::string::npos) m = m.substr(close + 2);
  }
  return Cut(m, 200);
}

StatusOr<json> ParseJson(std::string_view text, const std::string& name, int max_depth) {
  size_t deep = FindTooDeep(text, max_depth);
  if (deep != std::string_view::npos) {
    auto [line, col] = LineColumn(text, deep);
    return InvalidArgument(name + " nests lists and objects more than " + std::to_string(max_depth) +
                           " levels deep (line " + std::to_string(line) + ", column " + std::to_string(col) +
                           "); sramplan reads JSON nested at most " + std::to_string(max_depth) + " deep");
  }
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return InvalidArgument(name + " is not valid JSON: " + JsonExceptionText(e));
  } catch (const json::out_of_range& e) {
    // Numbers that do not fit a double (1e999). nlohmann does not say where: find the token.
    std::string m = JsonExceptionText(e);
    const std::string full = e.what();
    std::string where;
    size_t q1 = full.find('\''), q2 = full.rfind('\'');
    if (q1 != std::string::npos && q2 > q1 + 1) {
      size_t pos = text.find(std::string_view(full).substr(q1 + 1, q2 - q1 - 1));
      if (pos != std::string_view::npos) {
        auto [line, col] = LineColumn(text, pos);
        where = " at line " + std::to_string(line) + ", column " + std::to_string(col);
      }
    }
    return InvalidArgument(name + " is not valid JSON" + where + ": " + m +
                           " (numbers must fit a 64-bit integer or a double)");
  } catch (const json::exception& e) {
    return InvalidArgument(name + " is not valid JSON: " + JsonExceptionText(e));
  }
}

std::optional<int64_t> JsonToInt64(const json& v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

// ---- JsonRef ----

Status JsonRef::Error(const std::string& what) const {
  return InvalidArgument(path_.empty() ? what : path_ + ": " + what);
}

std::string JsonRef::ChildPath(std::string_view key) const {
  std::string out = path_;
  if (IsIdentifier(key) && key.size() <= 64) {
    if (!out.empty()) out += '.';
    out.append(key.data(), key.size());
  } else {
    out += '[';
    out += JsonSnippet(nlohmann::json(std::string(key)), 64);
    out += ']';
  }
  return out;
}

bool JsonRef::Has(std::string_view key) const {
  if (!v_->is_object()) return false;
  auto it = v_->find(key);
  return it != v_->end() && !it->is_null();
}

JsonRef JsonRef::operator[](size_t i) const {
  return JsonRef((*v_)[i], path_ + "[" + std::to_string(i) + "]");
}

JsonRef JsonRef::Child(std::string_view key) const {
  static const nlohmann::json kNull;
  if (!v_->is_object()) return JsonRef(kNull, ChildPath(key));
  auto it = v_->find(key);
  return JsonRef(it == v_->end() ? kNull : *it, ChildPath(key));
}

std::vector<std::pair<std::string, JsonRef>> JsonRef::Items() const {
  std::vector<std::pair<std::string, JsonRef>> out;
  if (!v_->is_object()) return out;
  for (auto it = v_->begin(); it != v_->end(); ++it)
    out.emplace_back(it.key(), JsonRef(it.value(), ChildPath(it.key())));
  return out;
}

Status JsonRef::ExpectObject() const {
  if (!v_->is_object()) return Error("must be a JSON object, " + Got(*v_));
  return Status::Ok();
}

Status JsonRef::ExpectArray() const {
  if (!v_->is_array()) return Error("must be a list, " + Got(*v_));
  return Status::Ok();
}

StatusOr<int64_t> JsonRef::AsInt(int64_t lo, int64_t hi) const {
  std::optional<int64_t> v = JsonToInt64(*v_);
  if (!v || *v < lo || *v > hi) return Error("must be an integer in " + IntRangeText(lo, hi) + ", " + Got(*v_));
  return *v;
}

StatusOr<double> JsonRef::AsNumber(double lo, double hi) const {
  if (!v_->is_number()) return Error("must be a number, " + Got(*v_));
  double d = v_->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    return Error("must be a number in [" + DoubleText(lo) + ", " + DoubleText(hi) + "], " + Got(*v_));
  return d;
}

StatusOr<std::string> JsonRef::AsString() const {
  if (!v_->is_string()) return Error("must be a string, " + Got(*v_));
  return v_->get<std::string>();
}

StatusOr<bool> JsonRef::AsBool() const {
  if (!v_->is_boolean()) return Error("must be true or false, " + Got(*v_));
  return v_->get<bool>();
}

StatusOr<std::vector<int64_t>> JsonRef::AsIntList(int64_t lo, int64_t hi) const {
  if (!v_->is_array()) return Error("must be a list of integers, " + Got(*v_));
  std::vector<int64_t> out;
  out.reserve(v_->size());
  for (size_t i = 0; i < v_->size(); ++i) {
    SP_ASSIGN_OR_RETURN(int64_t x, (*this)[i].AsInt(lo, hi));
    out.push_back(x);
  }
  return out;
}

StatusOr<std::vector<std::string>> JsonRef::AsStringList() const {
  if (!v_->is_array()) return Error("must be a list of strings, " + Got(*v_));
  std::vector<std::string> out;
  out.reserve(v_->size());
  for (size_t i = 0; i < v_->size(); ++i) {
    SP_ASSIGN_OR_RETURN(std::string s, (*this)[i].AsString());
    out.push_back(std::move(s));
  }
  return out;
}

Status JsonRef::Missing(std::string_view key, const std::string& what) const {
  if (!v_->is_object()) return Error("must be a JSON object, " + Got(*v_));
  return JsonRef(*v_, ChildPath(key)).Error(std::string("missing (required: ") + what + ")");
}

StatusOr<JsonRef> JsonRef::Field(std::string_view key) const {
  if (!Has(key)) return Missing(key, "a value");
  return Child(key);
}

StatusOr<JsonRef> JsonRef::Object(std::string_view key) const {
  if (!Has(key)) return Missing(key, "an object");
  JsonRef c = Child(key);
  SP_RETURN_IF_ERROR(c.ExpectObject());
  return c;
}

StatusOr<JsonRef> JsonRef::Array(std::string_view key) const {
  if (!Has(key)) return Missing(key, "a list");
  JsonRef c = Child(key);
  SP_RETURN_IF_ERROR(c.ExpectArray());
  return c;
}

StatusOr<int64_t> JsonRef::Int(std::string_view key, int64_t lo, int64_t hi) const {
  if (!Has(key)) return Missing(key, "an integer in " + IntRangeText(lo, hi));
  return Child(key).AsInt(lo, hi);
}

StatusOr<int64_t> JsonRef::IntOr(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const {
  if (!Has(key)) return dflt;
  return Child(key).AsInt(lo, hi);
}

StatusOr<double> JsonRef::Number(std::string_view key, double lo, double hi) const {
  if (!Has(key)) return Missing(key, "a number");
  return Child(key).AsNumber(lo, hi);
}

StatusOr<double> JsonRef::NumberOr(std::string_view key, double dflt, double lo, double hi) const {
  if (!Has(key)) return dflt;
  return Child(key).AsNumber(lo, hi);
}

StatusOr<std::string> JsonRef::String(std::string_view key) const {
  if (!Has(key)) return Missing(key, "a string");
  return Child(key).AsString();
}

StatusOr<std::string> JsonRef::StringOr(std::string_view key, const std::string& dflt) const {
  if (!Has(key)) return dflt;
  return Child(key).AsString();
}

StatusOr<bool> JsonRef::Bool(std::string_view key) const {
  if (!Has(key)) return Missing(key, "true or false");
  return Child(key).AsBool();
}

StatusOr<bool> JsonRef::BoolOr(std::string_view key, bool dflt) const {
  if (!Has(key)) return dflt;
  return Child(key).AsBool();
}

StatusOr<std::vector<int64_t>> JsonRef::IntList(std::string_view key, int64_t lo, int64_t hi) const {
  if (!Has(key)) return Missing(key, "a list of integers");
  return Child(key).AsIntList(lo, hi);
}

StatusOr<std::vector<int64_t>> JsonRef::IntListOr(std::string_view key, int64_t lo, int64_t hi) const {
  if (!Has(key)) return std::vector<int64_t>{};
  return Child(key).AsIntList(lo, hi);
}

StatusOr<std::vector<std::string>> JsonRef::StringList(std::string_view key) const {
  if (!Has(key)) return Missing(key, "a list of strings");
  return Child(key).AsStringList();
}

StatusOr<std::vector<std::string>> JsonRef::StringListOr(std::string_view key) const {
  if (!Has(key)) return std::vector<std::string>{};
  return Child(key).AsStringList();
}

// ---- "where"-style helpers ----

Status ExpectObject(const json& j, const std::string& where) {
  if (!j.is_object()) return InvalidArgument(where + " must be a JSON object, " + Got(j));
  return Status::Ok();
}

StatusOr<int64_t> GetInt(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    return InvalidArgument(where + ": missing required integer field '" + key + "'");
  const auto& v = j.at(key);
  std::optional<int64_t> i = JsonToInt64(v);
  if (!i)
    return InvalidArgument(where + ": field '" + key + "' must be an integer in " +
                           IntRangeText(kInt64Min, kInt64Max) + ", " + Got(v));
  return *i;
}

StatusOr<int64_t> GetIntOr(const json& j, const std::string& key, int64_t dflt, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  return GetInt(j, key, where);
}

StatusOr<double> GetNumberOr(const json& j, const std::string& key, double dflt, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  const auto& v = j.at(key);
  if (!v.is_number()) return InvalidArgument(where + ": field '" + key + "' must be a number, " + Got(v));
  return v.get<double>();
}

StatusOr<std::string> GetString(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    return InvalidArgument(where + ": missing required string field '" + key + "'");
  const auto& v = j.at(key);
  if (!v.is_string()) return InvalidArgument(where + ": field '" + key + "' must be a string, " + Got(v));
  return v.get<std::string>();
}

StatusOr<std::string> GetStringOr(const json& j, const std::string& key, const std::string& dflt,
                                  const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  return GetString(j, key, where);
}

StatusOr<std::vector<int64_t>> GetIntList(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    return InvalidArgument(where + ": missing required list field '" + key + "'");
  const auto& v = j.at(key);
  if (!v.is_array())
    return InvalidArgument(where + ": field '" + key + "' must be a list of integers, " + Got(v));
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    std::optional<int64_t> e = JsonToInt64(v[i]);
    if (!e)
      return InvalidArgument(where + ": field '" + key + "'[" + std::to_string(i) + "] must be an integer in " +
                             IntRangeText(kInt64Min, kInt64Max) + ", " + Got(v[i]));
    out.push_back(*e);
  }
  return out;
}

StatusOr<bool> GetBoolOr(const json& j, const std::string& key, bool dflt, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  const auto& v = j.at(key);
  if (!v.is_boolean()) return InvalidArgument(where + ": field '" + key + "' must be true or false, " + Got(v));
  return v.get<bool>();
}

}  // namespace sramplan
