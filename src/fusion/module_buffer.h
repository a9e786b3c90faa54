// Module buffering (Kim et al., Alg. 1 and 3-6) and the paper's layer-wise baseline, on an NPU
// whose on-chip memory of `memory` bytes holds feature maps and streams weights from DRAM.
//
// Model (paper Sec. 3-4):
//  - A layer (one op) runs with its input either fully on chip (forwarded) or streamed from DRAM
//    a few rows at a time (IFM.Partial: kernel-height rows), its output either kept on chip
//    (OFM.Full) or streamed out (OFM.Partial: one row), its weights streamed 16 output channels at
//    a time, double buffered (W.Partial = 2 x 16 kernels), and a working memory of 16 MAAs x one
//    4x4 int32 patch (WM.Partial, Conv / Gemm / MatMul). Every step keeps
//        (feature maps on chip) + IFM.Partial + OFM.Partial + W.Partial + WM.Partial <= memory.
//  - Alg. 3 orders each module's branches by the memory they need (largest first); Alg. 4 keeps the
//    module's input (MIFM, and a sub-module's input at depth 2, ...) on chip for the whole module;
//    Alg. 5 counts the branch outputs already parked at the top of the memory (MOFM, occupied);
//    Alg. 6 forwards a layer's output on chip when IFM + OFM + WM + W fits the available memory
//    (memory - MIFMs - occupied MOFM), processing I keeping branch outputs in the MOFM (so the
//    module output is forwarded as the next module's MIFM) and processing II writing them to DRAM
//    to give their room to the branches. Each module takes whichever of I and II moves fewer
//    feature-map bytes off chip (I on ties).
//  - Ops outside modules forward their output on chip when it fits (a chain is a one-branch
//    module), otherwise stream it to DRAM. Layer-wise: every feature map to and from DRAM.
//  - A tensor read after a long skip (Alg. 2) is written to DRAM when it is produced and read
//    from there.
#pragma once

#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "fusion/modules.h"
#include "ir/graph.h"

namespace sramplan::fusion {

struct ModuleBufferOptions {
  int64_t memory = 0;     // on-chip bytes (size_mem)
  int64_t alignment = 16; // offsets and on-chip sizes
  bool layerwise = false; // the paper's naive baseline
  int long_skip_ops = 40; // as ModuleOptions::long_skip_ops
  // Beyond the paper: also try Alg. 3's branch order with each branch moved last, per module, and
  // keep the order (and processing) with the fewest feature-map bytes off chip.
  bool search_branch_orders = false;
};

// The NPU's per-layer working set (bytes).
struct LayerSizes {
  int64_t ifm_full = 0, ifm_partial = 0, ofm_full = 0, ofm_partial = 0, w_partial = 0, wm = 0;
  int64_t Staging() const { return ifm_partial + ofm_partial + w_partial + wm; }
};
LayerSizes ComputeLayerSizes(const ir::Graph& g, const ir::Op& op);
// IFM.Partial of one input of `op`.
int64_t InputPartialBytes(const ir::Graph& g, const ir::Op& op, ir::TensorId in);

// Where one arena tensor (a storage root) lives.
struct TensorHome {
  ir::TensorId tensor;
  int64_t bytes = 0;       // the tensor's bytes
  int produced = -1;       // its step; -1: a graph input
  int64_t chip_bytes = 0;  // aligned
  struct Stay {
    int first = 0, last = 0;  // on chip during [first, last]
    int64_t offset = 0;
    bool loaded = false;      // read from DRAM at `first` (else produced there)
  };
  std::vector<Stay> stays;  // ascending, disjoint
  int dram_from = -1;      // a DRAM copy from this step on (-1: none)
  bool stored = false;     // the DRAM copy is copied from chip after the producing step
};

// Alg. 6's numbers for one step.
struct LayerDecision {
  ir::OpId op;
  int module = -1;      // innermost module whose branch (or merge) it belongs to; -1: chain
  int branch = -1;      // that module's branch (detection index); -1: the merge or a chain op
  int64_t req = 0;      // size_req(b, k)
  int64_t avail = 0;    // size_avail(b, k)
  bool fwd = false;     // Alg. 6's forwarding flag
  bool on_chip = false; // the output stayed on chip
};

struct ModuleDecision {
  int module = 0;                   // index into ModuleReport::modules
  std::string processing;           // "I", "II" (top level; sub-modules follow their parent), "layerwise"
  std::vector<int> branch_order;    // Alg. 3: branch indices in processing order
  std::vector<int64_t> branch_req;  // size_req(b), per branch (detection index)
  std::string note;
};

struct ModuleBufferPlan {
  analysis::Schedule order;
  std::vector<TensorHome> homes;          // one per arena tensor
  std::vector<LayerDecision> layers;      // one per step
  std::vector<ModuleDecision> modules;    // one per module of the report
  std::vector<int> module_of_step;        // top-level module index (into report) per step, -1: chain
  int64_t max_staging = 0;                // the largest per-step staging (the budget's floor)
  std::vector<std::string> notes;
};

// Plans `g` (its modules in `report`, detected on the model order). kOutOfMemory when a layer's
// staging alone exceeds the memory (no plan can run it, not even layer-wise).
StatusOr<ModuleBufferPlan> PlanModuleBuffering(const ir::Graph& g, const ModuleReport& report,
                                               const ModuleBufferOptions& options);

}  // namespace sramplan::fusion
