// `sramplan codegen`: plan an int8 model, quantise it and write a firmware project (src/codegen).
#pragma once

#include <CLI/CLI.hpp>

namespace sramplan::cli {

// Adds the `codegen` subcommand to `app` and returns it.
CLI::App* AddCodegenCommand(CLI::App* app);
// Runs it once `app` has parsed a command line that chose it. verbosity: 0 quiet, 1 normal,
// 2 verbose. Exit codes: 0 written and fits, 1 bad usage or input (an op the firmware cannot run is
// named), 2 written but does not fit (the link fails naming the overflow), 3 internal error.
int RunCodegenCommand(int verbosity);

}  // namespace sramplan::cli
