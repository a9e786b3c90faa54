#include "import/json_util.h"

namespace sramplan::import {

StatusOr<nlohmann::json> ParseJson(const std::string& text, const std::string& name) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidArgument("'" + name + "' is not valid JSON (byte " + std::to_string(e.byte) +
                           "): " + e.what());
  }
}

Status ExpectObject(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return InvalidArgument(where + " must be a JSON object");
  return Status::Ok();
}

StatusOr<int64_t> GetInt(const nlohmann::json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    return InvalidArgument(where + ": missing required integer field '" + key + "'");
  const auto& v = j.at(key);
  if (!v.is_number_integer())
    return InvalidArgument(where + ": field '" + key + "' must be an integer, got " + v.dump());
  return v.get<int64_t>();
}

StatusOr<int64_t> GetIntOr(const nlohmann::json& j, const std::string& key, int64_t dflt,
                           const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  return GetInt(j, key, where);
}

StatusOr<double> GetNumberOr(const nlohmann::json& j, const std::string& key, double dflt,
                             const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  const auto& v = j.at(key);
  if (!v.is_number()) return InvalidArgument(where + ": field '" + key + "' must be a number");
  return v.get<double>();
}

StatusOr<std::string> GetString(const nlohmann::json& j, const std::string& key,
                                const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    return InvalidArgument(where + ": missing required string field '" + key + "'");
  const auto& v = j.at(key);
  if (!v.is_string()) return InvalidArgument(where + ": field '" + key + "' must be a string");
  return v.get<std::string>();
}

StatusOr<std::string> GetStringOr(const nlohmann::json& j, const std::string& key,
                                  const std::string& dflt, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  return GetString(j, key, where);
}

StatusOr<std::vector<int64_t>> GetIntList(const nlohmann::json& j, const std::string& key,
                                          const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    return InvalidArgument(where + ": missing required list field '" + key + "'");
  const auto& v = j.at(key);
  if (!v.is_array()) return InvalidArgument(where + ": field '" + key + "' must be a list of integers");
  std::vector<int64_t> out;
  for (const auto& e : v) {
    if (!e.is_number_integer())
      return InvalidArgument(where + ": field '" + key + "' must contain only integers, got " + e.dump());
    out.push_back(e.get<int64_t>());
  }
  return out;
}

StatusOr<bool> GetBoolOr(const nlohmann::json& j, const std::string& key, bool dflt,
                         const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return dflt;
  const auto& v = j.at(key);
  if (!v.is_boolean()) return InvalidArgument(where + ": field '" + key + "' must be true or false");
  return v.get<bool>();
}

}  // namespace sramplan::import
