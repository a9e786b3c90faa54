// Plan files (docs/plan-format.md): one plan, or several in {"schema_version": 1, "plans": [...]}
// as `sramplan plan --strategy all --json` writes them. PlanToJson / PlanFromJson (one plan) are
// declared in plan.h.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace sramplan::plan {

// The file `plan --json` writes for several plans.
std::string PlansToJson(const std::vector<Plan>& plans);

// Reads a plan file holding one plan or several. Every field is read exactly (integers within their
// type's range, byte counts within 2^50); a bad field's message names its path, e.g.
// "plans[2].buffers[17].first_step: must be an integer in [0, 2^31), got 9007199254740992".
// `*multi` (when given) says whether the file was the several-plans form.
StatusOr<std::vector<Plan>> PlansFromJson(const std::string& text, bool* multi = nullptr);

}  // namespace sramplan::plan
