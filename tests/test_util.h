// Helpers shared by the tests: paths into the source tree, running the CLI, temp files.
#pragma once

#include <string>

namespace sramplan::testing {

// Absolute path of a file in the source tree, e.g. SourcePath("models/onnx/resnet18.onnx").
std::string SourcePath(const std::string& relative);
// Writes `content` to a fresh file in a per-process temp dir and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& content);
// Runs build/sramplan with `args` (shell-quoted by the caller); returns the exit code and fills
// stdout/stderr.
int RunCli(const std::string& args, std::string* out, std::string* err);

}  // namespace sramplan::testing
