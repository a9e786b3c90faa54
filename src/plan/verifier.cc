// PlanVerifier: checks a plan on its own terms, sharing no code with the planners (it depends only
// on src/support and src/plan). VerifyPlan runs a fixed sequence of named checks over one Checker
// that indexes the plan as it goes. Every value read from the plan is range-checked before anything
// loops over it or does arithmetic with it: a check that finds an element malformed (a buffer whose
// offset, size or live range is out of range, a step whose geometry disagrees with its tensors'
// shapes) reports it and marks it, and the later checks leave it alone instead of overflowing or
// running for hours.
#include "plan/verifier.h"

#include "plan/verifier_checker.h"

namespace sramplan::plan::verifier_internal {

std::string List(const std::vector<int64_t>& v) {
  std::string r = "[";  // appended, not "[" + ...: GCC 12 warns falsely (-Wrestrict) on that form here
  r += JoinInts(v, ", ");
  r += "]";
  return r;
}

// Tensors: unique names, bytes in [0, kMaxBytes], dimensions >= 0, and bytes equal to the shape's
// elements times the dtype's size (when the dtype is known).
void Checker::CheckTensors() {
  for (size_t i = 0; i < p_.tensors.size(); ++i) {
    const Tensor& t = p_.tensors[i];
    const std::string where = "tensors[" + Str(static_cast<int64_t>(i)) + "] '" + t.name + "'";
    if (!tensors_.emplace(t.name, &t).second) Err("tensor '" + t.name + "' is listed twice");
    bool ok = true;
    if (t.bytes < 0 || t.bytes > kMaxBytes) {
      Err(where + ": bytes " + Str(t.bytes) + " is outside [0, " + Str(kMaxBytes) + "]");
      ok = false;
    }
    std::optional<int64_t> elements = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] < 0) {
        Err(where + ": shape[" + Str(static_cast<int64_t>(d)) + "] is negative (" +
            Str(t.shape[d]) + ")");
        ok = false;
        elements.reset();
        break;
      }
      elements = CheckedMul(*elements, t.shape[d]);
      if (!elements) break;
    }
    // An empty shape is unknown (hand-written plans) or a scalar: bytes are not checked against
    // it.
    const int64_t size = ElementBytes(t.dtype);
    if (ok && size > 0 && !t.shape.empty()) {
      std::optional<int64_t> need = elements ? CheckedMul(*elements, size) : std::nullopt;
      if (!need || *need != t.bytes) {
        Err(where + ": shape " + List(t.shape) + " of " + t.dtype + " needs " +
            (need ? Str(*need) : std::string("more than 2^63")) + " bytes, but bytes is " +
            Str(t.bytes));
        ok = false;
      }
    }
    if (!ok) bad_shape_.insert(t.name);
  }
}

// Levels: unique names, positive capacity; which are off chip.
void Checker::CheckLevels() {
  for (size_t i = 0; i < p_.levels.size(); ++i) {
    const Level& l = p_.levels[i];
    if (!levels_.emplace(l.name, &l).second)
      Err("levels[" + Str(static_cast<int64_t>(i)) + "] '" + l.name + "' is listed twice");
    offchip_[l.name] = l.kind == "dram" || l.kind == "flash";
    if (l.capacity <= 0) Err("level '" + l.name + "' has no capacity");
  }
}

// Steps numbered 0..n-1, each runs an op, op names unique, every tensor written exists and is
// produced once.
void Checker::CheckSteps() {
  std::set<std::string> op_names;
  for (int s = 0; s < n_; ++s) {
    const Step& st = p_.steps[s];
    if (st.index != s)
      Err("steps[" + Str(s) + "]: index " + Str(st.index) + ", expected " + Str(s));
    if (st.ops.empty()) Err("steps[" + Str(s) + "] runs no op");
    for (size_t k = 0; k < st.ops.size(); ++k) {
      const StepOp& op = st.ops[k];
      if (!op_names.insert(op.name).second) Err("op '" + op.name + "' appears in two steps");
      for (const auto& out : op.outputs) {
        if (!tensors_.count(out))
          Err("step " + Str(s) + " op '" + op.name + "' writes unknown tensor '" + out + "'");
        if (produced_at_.count(out)) Err("tensor '" + out + "' is produced twice");
        produced_at_[out] = s;
        position_in_step_[out] = k;
      }
    }
  }
  for (const auto& t : p_.tensors)
    if ((t.kind == "activation" || t.kind == "output") && !produced_at_.count(t.name))
      Err("tensor '" + t.name + "' (" + t.kind + ") is never produced");
}

// Dependencies: every input is a graph input, a constant, or produced earlier (inside a fused
// step, ops run in their listed order).
void Checker::CheckDependencies() {
  for (int s = 0; s < n_; ++s)
    for (size_t k = 0; k < p_.steps[s].ops.size(); ++k) {
      const StepOp& op = p_.steps[s].ops[k];
      for (const auto& in : op.inputs) {
        const Tensor* t = FindTensor(in);
        if (!t) {
          Err("step " + Str(s) + " op '" + op.name + "' reads unknown tensor '" + in + "'");
          continue;
        }
        if (t->kind == "input" || t->kind == "constant") continue;
        auto pr = produced_at_.find(in);
        if (pr == produced_at_.end())
          Err("op '" + op.name + "' reads '" + in + "', which no step produces");
        else if (pr->second > s || (pr->second == s && position_in_step_[in] >= k))
          Err("dependency violated: step " + Str(s) + " op '" + op.name + "' reads '" + in +
              "', produced at step " + Str(pr->second));
      }
    }
}

// levels[].used_bytes equals the highest byte its buffers reach; metrics.fits agrees with
// capacity.
void Checker::CheckReportedSizes() {
  for (const auto& l : p_.levels) {
    const int64_t used = used_.count(l.name) ? used_.at(l.name) : 0;
    if (l.used_bytes != used)
      Err("level '" + l.name + "' reports used_bytes " + Str(l.used_bytes) +
          " but its buffers reach " + Str(used));
  }
  if (p_.metrics.fits != r_.capacity.empty())
    Err(std::string("metrics.fits says ") + (p_.metrics.fits ? "true" : "false") +
        " but the buffers " + (r_.capacity.empty() ? "fit" : "overflow a level"));
}

}  // namespace sramplan::plan::verifier_internal

namespace sramplan::plan {

using verifier_internal::Checker;

std::string VerifyResult::Summary(size_t max_lines) const {
  std::string s;
  size_t n = 0;
  for (const auto* list : {&errors, &capacity})
    for (const auto& e : *list) {
      if (n++ == max_lines) {
        s += "  ... (" + std::to_string(errors.size() + capacity.size() - max_lines) + " more)\n";
        return s;
      }
      s += "  " + e + "\n";
    }
  return s;
}

VerifyResult VerifyPlan(const Plan& p) { return Checker(p).Run(); }

}  // namespace sramplan::plan
