// Module detection for module buffering (Kim et al., "A Simple Method to Reduce Off-chip Memory
// Accesses on Convolutional Neural Networks", Alg. 2): erase the long skip connections, then find
// the single-entry / single-exit multi-branch regions that end in a merge layer (Concat, or an
// element-wise Add / Sum) and are small enough to keep on chip branch by branch. Regions inside a
// module's branch are its sub-modules (depth 2, 3, ...; Inception-C's 1x3 / 3x1 pairs). Every
// fork/join region that does not qualify is reported with the reason. IR in, modules out; no plan.
#pragma once

#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"

namespace sramplan::fusion {

struct ModuleOptions {
  // An edge whose consumer runs more than this many ops after its producer (in the detection
  // order) is a long skip connection: Alg. 2 erases it, its tensor then comes from off-chip memory.
  int long_skip_ops = 40;
  // Condition 4 of the paper: no module with lots of layers (ops, merge included).
  int max_ops = 64;
};

// One branch of a module: the ops between the module's input (MIFM) and its merge, in the
// detection order. An identity branch (the MIFM itself feeds the merge) has no ops.
struct ModuleBranch {
  std::vector<ir::OpId> ops;
  // The ops whose outputs the merge reads: one, or several when the branch forks again and its
  // sub-branches end at this module's merge (a sub-module sharing the merge, as Inception-C's
  // 1x3 / 3x1 pairs do once the exporter flattens their concat); none for an identity branch.
  std::vector<ir::OpId> outputs;
};

struct Module {
  std::string name;               // the common name prefix of its ops ("Mixed_5b"), or module<i>
  ir::OpId entry;                 // the fork: its output is the MIFM; not one of the module's ops
  ir::TensorId mifm;              // the fork's output the branches read
  ir::OpId merge;                 // Concat / Add / Sum; its output is the MOFM
  std::string merge_type;
  std::vector<ModuleBranch> branches;  // in the order of their first op
  std::vector<ir::OpId> ops;           // branch ops and the merge, in the detection order
  // Inputs of the sub-modules that share this module's merge (a fork inside a branch whose
  // sub-branches end at the merge): Alg. 4's MIFM of depth + 1.
  std::vector<ir::TensorId> sub_inputs;
  int depth = 1;                       // 1: top level; d: inside a branch of a depth d-1 module
  int parent = -1;                     // index of the enclosing module
  int parent_branch = -1;              // the enclosing module's branch this one lies in
};

// A fork/join region (or a fork) that is not a module, and why.
struct RejectedRegion {
  std::string entry;  // op names
  std::string exit;
  int ops = 0;
  std::string reason;
};

struct ModuleReport {
  std::vector<Module> modules;  // ordered by entry position; parents before their sub-modules
  std::vector<RejectedRegion> rejected;
  std::vector<std::string> erased_skips;  // "producer -> consumer" of every erased long skip
  int top_level() const;                  // modules of depth 1
};

// Detects the modules of `g` for the schedule `order` (a valid one: ValidateSchedule).
ModuleReport DetectModules(const ir::Graph& g, const analysis::Schedule& order,
                           const ModuleOptions& options = {});

// A human-readable report: one line per module (name, depth, merge, branches and their ops) and
// per rejected region, and the erased skips.
std::string ModuleReportText(const ir::Graph& g, const ModuleReport& r);

}  // namespace sramplan::fusion
