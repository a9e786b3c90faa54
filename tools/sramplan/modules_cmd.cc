#include "modules_cmd.h"

#include <iostream>
#include <string>

#include "analysis/liveness.h"
#include "fusion/modules.h"
#include "canonical_flag.h"
#include "import/import.h"
#include "transform/canonicalize.h"

namespace sramplan::cli {
namespace {

struct ModulesFlags {
  std::string model;
  int64_t batch = 1;
  bool allow_unknown = false;
  bool canonicalize = false, no_canonicalize = false;
  int long_skip_ops = fusion::ModuleOptions{}.long_skip_ops;
  int max_ops = fusion::ModuleOptions{}.max_ops;
};

ModulesFlags& Flags() {
  static ModulesFlags f;
  return f;
}

}  // namespace

CLI::App* AddModulesCommand(CLI::App* app) {
  ModulesFlags& f = Flags();
  auto* cmd = app->add_subcommand(
      "modules", "module detection for module buffering: the multi-branch modules (fork .. Concat/Add), their "
                 "branches, and why other regions are not modules");
  cmd->add_option("model", f.model, "model: .onnx, native .graph.json, or an MCUNet config .json")->required();
  cmd->add_option("--batch", f.batch, "bind the symbolic batch dimension (default 1)");
  cmd->add_flag("--allow-unknown-ops", f.allow_unknown, "import ops outside the supported set as opaque ops");
  cmd->add_flag("--canonicalize", f.canonicalize, "canonicalise any model first (the default for ONNX, as `plan`)");
  cmd->add_flag("--no-canonicalize", f.no_canonicalize, "detect modules on an ONNX model as imported");
  cmd->add_option("--long-skip", f.long_skip_ops,
                  "an edge spanning more ops than this is a long skip connection and is erased (default 40)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-ops", f.max_ops, "a region with more ops is too large to be a module (default 64)")
      ->check(CLI::Range(2, 1 << 20));
  return cmd;
}

int RunModulesCommand() {
  const ModulesFlags& f = Flags();
  import::ImportOptions io;
  io.batch = f.batch;
  io.allow_unknown_ops = f.allow_unknown;
  auto g = import::ImportModel(f.model, io);
  auto canonical = WantCanonical(f.model, f.canonicalize, f.no_canonicalize);
  Status st = !g.ok() ? g.status() : !canonical.ok() ? canonical.status() : Status::Ok();
  if (st.ok() && *canonical) {
    auto r = transform::Canonicalize(&*g, {});
    st = r.status();
  }
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  fusion::ModuleOptions mo;
  mo.long_skip_ops = f.long_skip_ops;
  mo.max_ops = f.max_ops;
  const fusion::ModuleReport rep = fusion::DetectModules(*g, analysis::ModelOrder(*g), mo);
  std::cout << fusion::ModuleReportText(*g, rep);
  if (rep.modules.empty())
    std::cout << "no qualifying module: strategy modulebuf runs every op as its own step (layer by layer, "
                 "forwarding outputs on chip where they fit)\n";
  return 0;
}

}  // namespace sramplan::cli
