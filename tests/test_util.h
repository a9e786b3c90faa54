// Helpers shared by the tests: paths into the source tree, running the CLI, temp files.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/liveness.h"
#include "ir/graph.h"
#include "plan/plan.h"

namespace sramplan::testing {

// Absolute path of a file in the source tree, e.g. SourcePath("models/onnx/resnet18.onnx").
std::string SourcePath(const std::string& relative);
// Writes `content` to a fresh file in a per-process temp dir and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& content);
// Runs build/sramplan with `args` (shell-quoted by the caller); returns the exit code and fills
// stdout/stderr.
int RunCli(const std::string& args, std::string* out, std::string* err);
// RunCli's exit code, stdout and stderr together.
struct CliRun {
  int rc = -1;
  std::string out, err;
  std::string all() const { return out + err; }
};
CliRun Cli(const std::string& args);
// Runs a shell command (shell-quoted by the caller), e.g. another tool built with the project.
CliRun Sh(const std::string& command);
// The same, returning the exit code (-1 when it did not exit) with stdout and stderr together in
// `output`.
int Sh(const std::string& command, std::string* output);
// Whether the firmware tools (arm-none-eabi-gcc, qemu-system-arm, make) are installed; else the
// first missing one in `missing`.
bool HaveArmTools(std::string* missing);
// A new empty directory `name` under the per-process temp dir.
std::string FreshDir(const std::string& name);
// A native JSON graph (docs/graph-format.md) read as the CLI would, failing the test when it does not
// import.
ir::Graph LoadNativeGraph(const std::string& text);
// `g` planned with `strategy` on `target` for int8 (the plan is empty, and the test failed, when
// planning fails).
plan::Plan PlanInt8(const ir::Graph& g, const std::string& strategy, const std::string& target = "stm32f411re");
// The operator order a plan runs (its steps' ops, in order), as op ids of `g`.
analysis::Schedule PlanOrder(const ir::Graph& g, const plan::Plan& p);
// Runs `p` in its arena and `g` naively in the plan's order, int8 with seeded data (`seed`); "" when
// the outputs agree bit for bit and the counted off-chip bytes are the plan's, else what differs.
std::string RunPlanAgainstNaive(const ir::Graph& g, const plan::Plan& p, uint64_t seed = 7);

}  // namespace sramplan::testing
