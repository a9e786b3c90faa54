// plan.json's module-buffering fields (docs/plan-format.md): the "modules" section and the
// metrics' feature-map / weight DRAM split. Written only by module-buffering plans, so every other
// plan's JSON is unchanged.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "support/json.h"
#include "support/status.h"

namespace sramplan::plan {

void ModulesToJson(const Plan& p, nlohmann::ordered_json* j);
void DramSplitToJson(const Metrics& m, nlohmann::ordered_json* metrics);
Status ModulesFromJson(const JsonRef& j, Plan* p);
Status DramSplitFromJson(const JsonRef& metrics, Metrics* m);

}  // namespace sramplan::plan
