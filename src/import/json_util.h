// The importers' JSON helpers now live in support/json.h (shared with the target and plan readers);
// this header keeps their names in sramplan::import.
#pragma once

#include "support/json.h"

namespace sramplan::import {

using ::sramplan::ExpectObject;
using ::sramplan::GetBoolOr;
using ::sramplan::GetInt;
using ::sramplan::GetIntList;
using ::sramplan::GetIntOr;
using ::sramplan::GetNumberOr;
using ::sramplan::GetString;
using ::sramplan::GetStringOr;
using ::sramplan::GuardJson;
using ::sramplan::JsonRef;
using ::sramplan::JsonSnippet;

// Parses JSON text; messages start with the quoted file name.
inline StatusOr<nlohmann::json> ParseJson(const std::string& text, const std::string& name) {
  return ::sramplan::ParseJson(text, "'" + name + "'");
}

}  // namespace sramplan::import
