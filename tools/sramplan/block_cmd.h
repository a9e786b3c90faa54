// `sramplan block`: loop-nest blocking of one layer (dimensions on the command line, a Table 4 layer
// of the blocking paper, or a layer of a model) or of every conv / FC layer of a model on a memory
// hierarchy (src/blocking).
#pragma once

#include <CLI/CLI.hpp>

namespace sramplan::cli {

// Adds the `block` subcommand to `app` and returns it.
CLI::App* AddBlockCommand(CLI::App* app);
// Runs it once `app` has parsed a command line that chose it. Exit codes: 0 done, 1 bad usage or
// input (the message names the field), 2 no blocking fits the hierarchy.
int RunBlockCommand(int verbosity);

}  // namespace sramplan::cli
