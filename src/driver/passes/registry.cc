// The registry of passes by name, and the helpers the factories use.
#include <algorithm>

#include "driver/context.h"
#include "driver/pass.h"
#include "driver/passes/passes.h"

namespace sramplan::driver {

const std::vector<PassInfo>& Passes() {
  using namespace passes;
  static const std::vector<PassInfo> kPasses = {
      {"schedule",
       "the operator order: --schedule (model or minpeak); schedule:minpeak forces min-peak",
       MakeSchedule},
      {"liveness",
       "arena buffers over the order: first and last step of every tensor that owns bytes",
       MakeLiveness},
      {"inplace",
       "TinyEngine's rule: depthwise and element-wise outputs over an input that dies there",
       MakeInplace},
      {"requests",
       "one placement request per in-place class (+ scratch); requests:tflm rounds sizes to 16 B",
       MakeRequests},
      {"place", "place the requests: place:naive|linear|tflm|optimal", MakePlace},
      {"assemble", "the plan: steps, tensors, arena buffers and scratch buffers", MakeAssemble},
      {"bound", "the arena's lower bound: per step, each in-place class once, plus scratch",
       MakeClassBound},
      {"inplace-savings", "what in-place sharing saved against the same placement without it",
       MakeInplaceSavings},
      {"spill-problem",
       "the spill problem (one tensor per arena buffer), M_min and the budget (--budget)",
       MakeSpillProblem},
      {"spill", "solve the spill problem: spill:belady|greedy|cosma|cosma-fixed|cosma-dc",
       MakeSpill},
      {"assemble-spill", "the plan of a spill solution: on-chip residencies and DRAM buffers",
       MakeAssembleSpill},
      {"transfers", "loads, stores, spills and reloads with their off-chip bytes and energy",
       MakeTransfers},
      {"fuse", "fused step groups: fuse:bottleneck (vMCU inverted bottlenecks, segment kernels)",
       MakeFuse},
      {"step-liveness", "buffers over the fused steps (fused intermediates own no buffer)",
       MakeStepLiveness},
      {"segment-overlap", "outputs over their dying inputs by the minimal safe shift (ISL), placed",
       MakeSegmentOverlap},
      {"circular-pool", "lay the longest overlap chain out modulo a pool when that is smaller",
       MakeCircularPool},
      {"row-cache", "the fused kernels' row cache where the arena stays as it is", MakeRowCache},
      {"assemble-segments", "the plan of a segment layout: fused steps, overlaps, workspaces, pool",
       MakeAssembleSegments},
      {"assemble-modules", "module buffering (Kim et al. Alg. 1-6) or layer-wise: assemble-modules:paper|reorder|layerwise",
       MakeModuleBuffer},
      {"assemble-best", "module buffering or COSMA's replacement per region or for the whole network, whichever moves fewer bytes off chip", MakeCombine},
      {"module-metrics", "off-chip bytes of a module-buffering plan, feature maps vs weights, per module",
       MakeModuleMetrics},
      {"weights", "weights laid out one after another in the weight level for the whole run",
       MakeWeights},
      {"metrics", "level sizes, lower bounds, fits, op accesses (energy, off-chip reads)",
       MakeMetrics},
      {"verify", "the independent plan verifier (plan/verifier.h)", MakeVerify},
      {"fuse-tiled",
       "Optimus fusion groups for a global buffer: fuse-tiled:optimus|optimus-online|dnnvm|efficient-s|"
       "fused-layer|nofuse",
       MakeFuseTiled},
      {"assemble-tiled", "the plan of fusion groups: fused-tiled steps, workspaces, DRAM buffers, Eq. 3 bytes",
       MakeAssembleTiled},
      {"keep-on-chip", "fused groups' output maps kept in the global buffer for later groups (ILP over the group sequence)",
       MakeKeepOnChip},
      {"pools", "the arena split into the target's memory pools, hot small buffers in the cheap pool: pools:tflm|optimal",
       MakePools},
  };
  return kPasses;
}

StatusOr<std::unique_ptr<Pass>> MakePass(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view arg =
      colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  for (const PassInfo& p : Passes())
    if (p.name == name) return p.make(arg);
  std::string names;
  for (const PassInfo& p : Passes()) names += (names.empty() ? "" : ", ") + p.name;
  return InvalidArgument("unknown pass '" + std::string(name) + "'; the passes are " + names);
}

StatusOr<std::unique_ptr<Pass>> NoArgPass(std::string_view name, std::string_view arg,
                                          std::function<Status(PlanningContext&)> run) {
  if (!arg.empty())
    return InvalidArgument("pass '" + std::string(name) + "' takes no argument (got '" +
                           std::string(arg) + "')");
  return std::unique_ptr<Pass>(new FunctionPass(std::string(name), std::move(run)));
}

StatusOr<std::unique_ptr<Pass>> ChoicePass(
    std::string_view name, std::string_view arg, const std::vector<std::string>& choices,
    std::function<Status(PlanningContext&, const std::string&)> run) {
  if (std::find(choices.begin(), choices.end(), std::string(arg)) == choices.end()) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + (c.empty() ? "(none)" : c);
    return InvalidArgument("pass '" + std::string(name) + "' takes one of " + list + " (got '" +
                           std::string(arg) + "')");
  }
  std::string full = std::string(name) + (arg.empty() ? "" : ":" + std::string(arg));
  std::string a(arg);
  return std::unique_ptr<Pass>(new FunctionPass(
      full, [run = std::move(run), a](PlanningContext& ctx) { return run(ctx, a); }));
}

}  // namespace sramplan::driver
