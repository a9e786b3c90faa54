// The factories of the built-in passes, one per file in this folder (registry.cc lists them).
#pragma once

#include <memory>
#include <string_view>

#include "analysis/liveness.h"
#include "cost/energy.h"
#include "driver/pass.h"
#include "plan/plan.h"

namespace sramplan::driver {
struct VmcuState;
struct VmcuInputs;
}

namespace sramplan::driver::passes {

using MakeResult = StatusOr<std::unique_ptr<Pass>>;

// Every strategy.
MakeResult MakeSchedule(std::string_view arg);       // schedule[:minpeak]
MakeResult MakeLiveness(std::string_view arg);       // liveness
MakeResult MakeWeights(std::string_view arg);        // weights
MakeResult MakeMetrics(std::string_view arg);        // metrics
MakeResult MakeVerify(std::string_view arg);         // verify
// Tensor-level strategies.
MakeResult MakeInplace(std::string_view arg);        // inplace
MakeResult MakeRequests(std::string_view arg);       // requests[:tflm]
MakeResult MakePlace(std::string_view arg);          // place:naive|linear|tflm|optimal
MakeResult MakeAssemble(std::string_view arg);       // assemble
MakeResult MakeClassBound(std::string_view arg);     // bound
MakeResult MakeInplaceSavings(std::string_view arg); // inplace-savings
// Budget strategies.
MakeResult MakeSpillProblem(std::string_view arg);   // spill-problem
MakeResult MakeSpill(std::string_view arg);          // spill:belady|greedy|cosma|cosma-fixed|cosma-dc
MakeResult MakeAssembleSpill(std::string_view arg);  // assemble-spill
MakeResult MakeTransfers(std::string_view arg);      // transfers
// The min-peak footprint of the spill problem (computed once; spill-problem must have run), and an
// order as op indices.
int64_t ComputeMpmf(PlanningContext& ctx);
std::vector<int> OrderIndices(const analysis::Schedule& sched);

// The plan metrics' traffic fields as a cost::Ledger and back (metrics.cc): the cost functions add
// to them in the order the passes run.
cost::Ledger LedgerOf(const cost::HardwareModel& hw, const plan::Metrics& m);
void StoreLedger(const cost::Ledger& l, plan::Metrics* m);
// vmcu.
// The vmcu state the fuse pass made, or an InternalError naming `pass` (run fuse:bottleneck first).
StatusOr<VmcuState*> VmcuOf(PlanningContext& ctx, std::string_view pass);
// A pass without argument over the vmcu state (VmcuOf) and the layout search's inputs.
MakeResult VmcuPass(std::string_view name, std::string_view arg,
                    std::function<Status(PlanningContext&, VmcuState&, const VmcuInputs&)> run);
MakeResult MakeFuse(std::string_view arg);              // fuse:bottleneck
MakeResult MakeStepLiveness(std::string_view arg);      // step-liveness
MakeResult MakeSegmentOverlap(std::string_view arg);    // segment-overlap
MakeResult MakeCircularPool(std::string_view arg);      // circular-pool
// circular-pool's placement for the current workspaces: the first pool size P from p_lo while
// P < p_hi (in steps of `stride`) whose chain, laid out modulo P, places within P; kept in st.best
// and st.pool_bytes. False (st unchanged) if none places.
bool PlaceCircularPool(PlanningContext& ctx, VmcuState& st, const VmcuInputs& in, int64_t p_lo,
                       int64_t p_hi, int64_t stride);
MakeResult MakeRowCache(std::string_view arg);          // row-cache
MakeResult MakeAssembleSegments(std::string_view arg);  // assemble-segments
// Module buffering (Samsung).
MakeResult MakeModuleBuffer(std::string_view arg);      // assemble-modules:paper|reorder|layerwise
MakeResult MakeModuleMetrics(std::string_view arg);     // module-metrics
MakeResult MakeCombine(std::string_view arg);           // assemble-best
// Optimus (passes/optimus.cc).
MakeResult MakeFuseTiled(std::string_view arg);      // fuse-tiled:optimus|optimus-online|dnnvm|...
MakeResult MakeAssembleTiled(std::string_view arg);  // assemble-tiled
MakeResult MakeKeepOnChip(std::string_view arg);     // keep-on-chip (passes/keep_on_chip.cc)
// A fused-tiled plan's metrics: each level's used bytes and fit, the arena, the given DRAM bytes and
// their energy (passes/optimus.cc; assemble-tiled and keep-on-chip).
void SetTiledPlanMetrics(PlanningContext& ctx, int64_t dram_read_bytes, int64_t dram_write_bytes, plan::Plan* p);
// Memory pools (issue 19).
MakeResult MakePools(std::string_view arg);          // pools:tflm|optimal

}  // namespace sramplan::driver::passes
