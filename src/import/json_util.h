// Small helpers to read nlohmann::json without exceptions escaping, with messages that name the path.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/status.h"

namespace sramplan::import {

// Parses JSON text; on error the message gives the file name and byte position.
StatusOr<nlohmann::json> ParseJson(const std::string& text, const std::string& name);

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

// Runs `body`; a nlohmann::json exception (wrong value type deep inside) becomes InvalidArgument.
template <typename T, typename F>
StatusOr<T> GuardJson(const std::string& what, F&& body) {
  try {
    return body();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(what + ": unexpected JSON value (" + std::string(e.what()) + ")");
  }
}

}  // namespace sramplan::import
