// Passes and the pass registry: a strategy is a named, ordered list of passes over one
// PlanningContext (docs/architecture.md). Each pass lives in its own file under driver/passes/.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace sramplan::driver {

struct PlanningContext;

class Pass {
 public:
  virtual ~Pass() = default;
  // The pass as written in a strategy's pipeline, e.g. "place:tflm".
  virtual std::string name() const = 0;
  virtual Status Run(PlanningContext& ctx) = 0;
};

// Makes a pass from its argument (the text after ':' in "place:tflm"; empty when there is none), or
// an InvalidArgument naming the arguments it takes.
using PassFactory = std::function<StatusOr<std::unique_ptr<Pass>>(std::string_view arg)>;

struct PassInfo {
  std::string name;
  std::string description;
  PassFactory make;
};

// Every pass, by name (driver/passes/registry.cc lists them).
const std::vector<PassInfo>& Passes();
// The pass of "name[:arg]", or InvalidArgument naming the known passes.
StatusOr<std::unique_ptr<Pass>> MakePass(std::string_view spec);

// A pass defined by a function: most passes need no state of their own.
class FunctionPass : public Pass {
 public:
  FunctionPass(std::string name, std::function<Status(PlanningContext&)> run)
      : name_(std::move(name)), run_(std::move(run)) {}
  std::string name() const override { return name_; }
  Status Run(PlanningContext& ctx) override { return run_(ctx); }

 private:
  std::string name_;
  std::function<Status(PlanningContext&)> run_;
};

// Helpers for the factories in passes/*.cc.
StatusOr<std::unique_ptr<Pass>> NoArgPass(std::string_view name, std::string_view arg,
                                          std::function<Status(PlanningContext&)> run);
StatusOr<std::unique_ptr<Pass>> ChoicePass(
    std::string_view name, std::string_view arg, const std::vector<std::string>& choices,
    std::function<Status(PlanningContext&, const std::string&)> run);

}  // namespace sramplan::driver
