// PlanVerifier: checks a plan on its own terms, sharing no code with the planners. It reads only the
// plan: steps, tensors, buffers, levels.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace sramplan::plan {

struct VerifyResult {
  std::vector<std::string> errors;    // the plan is wrong (would compute garbage or is malformed)
  std::vector<std::string> capacity;  // the plan is consistent but some level overflows
  bool ok() const { return errors.empty(); }
  bool fits() const { return errors.empty() && capacity.empty(); }
  std::string Summary(size_t max_lines = 10) const;
};

// Checks: steps numbered 0..n-1; every tensor produced once; every input produced at an earlier step
// (dependencies); every input and output of a step resident (a buffer of its storage tensor covers the
// step); buffers inside their level's capacity; no two buffers of a level that are live at the same
// step share a byte unless one declares a legal overlap with the other; level used/lower-bound and
// metrics.fits consistent with the buffers.
VerifyResult VerifyPlan(const Plan& p);

}  // namespace sramplan::plan
