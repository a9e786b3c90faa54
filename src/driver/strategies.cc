// The one table of strategies, and the pipeline runner.
#include <algorithm>
#include <chrono>

#include "driver/context.h"
#include "driver/pass.h"
#include "driver/strategy.h"

namespace sramplan::driver {
namespace {

// The tensor-level pipelines differ only in their placement (and TinyEngine's in-place passes).
std::vector<std::string> TensorPipeline(const std::string& requests, const std::string& place, bool inplace,
                                        const std::string& schedule = "schedule") {
  std::vector<std::string> p = {schedule, "liveness"};
  if (inplace) p.push_back("inplace");
  for (const std::string& s : {requests, place, std::string("assemble"), std::string("weights"), std::string("bound"),
                               std::string("metrics")})
    p.push_back(s);
  if (inplace) p.push_back("inplace-savings");
  p.push_back("verify");
  return p;
}

// Memory pools (issue 19): a single-arena pipeline whose arena the `pools` pass splits after metrics.
std::vector<std::string> PoolPipeline(const std::string& requests, const std::string& place, const std::string& pools) {
  std::vector<std::string> p = TensorPipeline(requests, place, false);
  p.insert(p.end() - 1, pools);
  return p;
}

std::vector<std::string> BudgetPipeline(const std::string& solver) {
  return {"spill-problem", "schedule", "spill:" + solver, "assemble-spill", "weights", "transfers", "metrics", "verify"};
}

// Optimus and its baselines: one fused-tiled step per group, feature maps and weights in DRAM.
StrategySpec Fused(std::string name, std::string description) {
  return StrategySpec{name,    std::move(description), AllGroup::kNone, /*needs_dram=*/true, /*int8_only=*/false,
                      /*uses_budget=*/false, {"schedule", "fuse-tiled:" + name, "assemble-tiled", "verify"},
                      Family::kFused};
}

StrategySpec Budget(std::string name, std::string description, AllGroup all) {
  StrategySpec s{name, std::move(description), all, /*needs_dram=*/true, /*int8_only=*/false, /*uses_budget=*/true,
                 BudgetPipeline(name), Family::kBudget};
  return s;
}

}  // namespace

const std::vector<StrategySpec>& Strategies() {
  using A = AllGroup;
  static const std::vector<StrategySpec> kTable = {
      {"naive", "model order; every tensor its own region (no reuse)", A::kTensor, false, false, false,
       TensorPipeline("requests", "place:naive", false)},
      {"linear", "model order; first-use order, best fit into freed gaps", A::kTensor, false,
       false, false, TensorPipeline("requests", "place:linear", false)},
      {"tflm", "model order; TFLite Micro GreedyMemoryPlanner (16-byte sizes, largest first, first fit)", A::kTensor,
       false, false, false, TensorPipeline("requests:tflm", "place:tflm", false)},
      {"inplace", "tflm placement plus TinyEngine's in-place depthwise and element-wise ops", A::kTensor, false, false,
       false, TensorPipeline("requests:tflm", "place:tflm", true)},
      {"optimal", "--schedule order; exact placement (best-of greedy portfolio + branch and bound, 20000 nodes)",
       A::kTensor, false, false, false, TensorPipeline("requests", "place:optimal", false)},
      {"tinyengine", "vMCU's TinyEngine baseline: in-place depthwise, first fit by size, no partial overlap",
       A::kTensor, false, false, false, TensorPipeline("requests:tflm", "place:tflm", true)},
      {"hmcos", "vMCU's HMCOS baseline: min-peak order, no in-place, exact placement", A::kTensor, false, false, false,
       TensorPipeline("requests", "place:optimal", false, "schedule:minpeak")},
      {"vmcu", "vMCU segment-level overlap and fused inverted bottlenecks (int8)", A::kTensor, false,
       /*int8_only=*/true, false,
       {"schedule", "liveness", "fuse:bottleneck", "step-liveness", "segment-overlap", "circular-pool",
        "row-cache:fit", "assemble-segments", "weights", "metrics", "verify"},
       Family::kSegment},
      {"vmcu-fast", "vmcu with the faster row-cache kernel on more fused steps: arena up to 10% larger (int8)",
       A::kNone, false, /*int8_only=*/true, false,
       {"schedule", "liveness", "fuse:bottleneck", "step-liveness", "segment-overlap", "circular-pool",
        "row-cache:10", "assemble-segments", "weights", "metrics", "verify"},
       Family::kSegment},
      {"vmcu-small", "vmcu with the smallest arena: the row-cache kernel only where the arena stays as it is (int8)",
       A::kNone, false, /*int8_only=*/true, false,
       {"schedule", "liveness", "fuse:bottleneck", "step-liveness", "segment-overlap", "circular-pool", "row-cache",
        "assemble-segments", "weights", "metrics", "verify"},
       Family::kSegment},
      Budget("belady",
             "linear allocator in the budget; evict the tensor used furthest in the future (--schedule model|minpeak)",
             A::kBudget),
      Budget("greedy",
             "linear allocator in the budget; evict what costs the fewest off-chip bytes (--schedule model|minpeak)",
             A::kBudget),
      Budget("cosma-fixed", "COSMA's ILP for the --schedule order (Eq. 16-17): addresses and spill/reload", A::kBudget),
      Budget("cosma", "COSMA's joint ILP (CBC): operator order, addresses and spill/reload together", A::kBudget),
      Budget("cosma-dc", "COSMA divide and conquer: automatic break nodes, parts solved exactly, stitched", A::kNone),
      {"modulebuf", "module buffering (Kim et al.): multi-branch modules kept on chip branch by branch (--budget size)",
       A::kNone, /*needs_dram=*/true, false, /*uses_budget=*/true,
       {"assemble-modules:paper", "weights", "metrics", "module-metrics", "verify"}, Family::kBudget},
      {"modulebuf-reorder", "modulebuf, also trying each module's branches in Alg. 3's order with one branch moved last",
       A::kNone, /*needs_dram=*/true, false, /*uses_budget=*/true,
       {"assemble-modules:reorder", "weights", "metrics", "module-metrics", "verify"}, Family::kBudget},
      {"modulebuf-cosma", "module buffering where it wins, COSMA's ILP elsewhere: regions between boundaries planned both "
                          "ways and stitched, or a whole-network plan, whichever moves fewer bytes",
       A::kNone, /*needs_dram=*/true, false, /*uses_budget=*/true, {"assemble-best", "verify"}, Family::kBudget},
      {"layerwise", "the module-buffering paper's naive baseline: every feature map to and from DRAM", A::kNone,
       /*needs_dram=*/true, false, /*uses_budget=*/true,
       {"assemble-modules:layerwise", "weights", "metrics", "module-metrics", "verify"}, Family::kBudget},
      Fused("optimus", "Optimus DAG fusion (Alg. 1-2, Eq. 3-4): fewest DRAM bytes through the global buffer"),
      Fused("optimus-online", "Optimus online variant (Alg. 3): pruned DAG fusion with a group-size look-up table"),
      Fused("dnnvm", "DNNVM baseline: no multi-input/-output operator inside a group; parameters on chip"),
      Fused("efficient-s", "Efficient-S baseline: DP over a linear proxy (the model order); parameters on chip"),
      Fused("fused-layer", "fused-layer baseline (Alwani et al.): chains only, exhaustive; parameters on chip"),
      Fused("nofuse", "no fusion: one group per operator (Conv+BN+activation merged), tiled"),
      {"optimus-cosma", "optimus's groups with COSMA-style spilling under one budget: group outputs stay in the global "
                        "buffer beside later groups' working sets where that saves DRAM bytes (ILP)",
       A::kNone, /*needs_dram=*/true, false, /*uses_budget=*/false,
       {"schedule", "fuse-tiled:optimus", "assemble-tiled", "keep-on-chip", "verify"}, Family::kFused},
      {"pools", "tflm's order and lifetimes; buffers split over the arena level's memory pools (hot, small ones to "
                "the cheapest), each pool placed by TFLM's planner",
       A::kNone, false, false, false, PoolPipeline("requests:tflm", "place:tflm", "pools:tflm"), Family::kPools},
      {"pools-optimal", "--schedule order; buffers split over the arena level's memory pools, each pool placed exactly",
       A::kNone, false, false, false, PoolPipeline("requests", "place:linear", "pools:optimal"), Family::kPools},
  };
  return kTable;
}

std::vector<StrategySpec> StrategiesOf(Family family) {
  std::vector<StrategySpec> out;
  for (const auto& s : Strategies())
    if (s.family == family) out.push_back(s);
  return out;
}

const StrategySpec* FindStrategy(const std::string& name) {
  for (const auto& s : Strategies())
    if (s.name == name) return &s;
  return nullptr;
}

bool IsStrategy(const std::string& name) { return FindStrategy(name) != nullptr; }

std::vector<std::string> StrategyNames(AllGroup group) {
  std::vector<std::string> names;
  for (const auto& s : Strategies())
    if (s.all == group) names.push_back(s.name);
  return names;
}

Status UnknownStrategy(const std::string& name, bool all_allowed, const std::string& what) {
  std::string names;
  for (const auto& s : Strategies()) names += (names.empty() ? "" : ", ") + s.name;
  return InvalidArgument("unknown " + what + " '" + name + "'; choose one of " + names + (all_allowed ? ", or all" : "") +
                         " (sramplan strategies lists them with their passes)");
}

StatusOr<plan::Plan> RunStrategy(const ir::Graph& g, const target::Target& t, const std::string& strategy,
                                 const PlanOptions& options, const AfterPass& after_pass) {
  const StrategySpec* spec = FindStrategy(strategy);
  if (spec == nullptr) return UnknownStrategy(strategy, true);
  std::vector<std::unique_ptr<Pass>> pipeline;
  for (const std::string& p : spec->passes) {
    auto pass = MakePass(p);
    if (!pass.ok()) return InternalError("strategy '" + strategy + "': " + pass.status().message());
    pipeline.push_back(std::move(pass).value());
  }
  SP_ASSIGN_OR_RETURN(cost::HardwareModel hw, cost::HardwareModel::From(t));
  PlanningContext ctx(g, t, std::move(hw), *spec, options);
  // --time-limit is one budget for the whole plan: each pass gets what remains of it.
  const double budget_s = options.search_time_limit_s;
  const auto start = std::chrono::steady_clock::now();
  for (auto& pass : pipeline) {
    if (budget_s > 0) {
      const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ctx.options.search_time_limit_s = ctx.options.time_limit_s = std::max(kMinStageSeconds, budget_s - used);
    }
    SP_RETURN_IF_ERROR(pass->Run(ctx));
    if (after_pass) SP_RETURN_IF_ERROR(after_pass(pass->name(), ctx));
  }
  if (!ctx.assembled) return InternalError("strategy '" + strategy + "' has no assemble pass");
  if (ctx.plan.dtype == "int8" && !t.cpu.empty() && !target::CpuHasDsp(t.cpu))  // issue 17
    ctx.plan.notes.push_back("kernels: portable C: the target's CPU " + t.cpu +
                             " has no DSP extension (no SXTB16/SMLAD), so the int8 kernels run their portable loops");
  return std::move(ctx.plan);
}

}  // namespace sramplan::driver
