// `sramplan modules MODEL`: module detection for module buffering (fusion/modules.h, Alg. 2): which
// single-entry / single-exit multi-branch regions qualify as modules, their branches and depth,
// and why every other fork/join region does not.
#pragma once

#include <CLI/CLI.hpp>

namespace sramplan::cli {

// Adds the `modules` subcommand to `app` and returns it.
CLI::App* AddModulesCommand(CLI::App* app);
// Runs it once `app` has parsed a command line that chose it: 0 when the model was read (with or
// without modules), 1 on bad input.
int RunModulesCommand();

}  // namespace sramplan::cli
