// vMCU's layout search, shared by the segment-overlap, circular-pool and row-cache passes: overlap
// classes (an output `shift` bytes below the input it overwrites), one placement request per class,
// and the smallest of several variants (class extent caps, chains broken where a step fits without
// its overlap).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "fusion/bottleneck.h"
#include "ir/graph.h"
#include "placement/optimal.h"
#include "target/target.h"

namespace sramplan::driver {

// An arena buffer of a vmcu plan: a tensor alive from step `first` to `last` (plan steps).
struct VmcuBuf {
  ir::TensorId tensor;
  int64_t bytes;
  int first, last;
};

struct Declared {
  int out, in;  // buffers
  int64_t shift_bytes;
  std::string reason = "segment-overlap";
};

struct Layout {
  std::vector<int> cls;
  std::vector<int64_t> rel;
  std::vector<Declared> declared;
  std::vector<int64_t> dw_scratch;
  std::vector<int64_t> workspace;
  std::vector<bool> step_overlaps;
  std::map<int, int> req_of_class;
  std::vector<placement::BufferRequest> requests;
  std::vector<int> ws_req;
  std::vector<int> member_req;  // fixed-offset request of a member of the largest class, else -1
  placement::OptimalResult placed;
};

// The vmcu strategy's state in the PlanningContext.
struct VmcuState {
  std::vector<fusion::StepInfo> steps;  // fuse:bottleneck
  std::vector<int> step_of_op;          // step-liveness: op id -> plan step
  std::vector<VmcuBuf> bufs;            // step-liveness: fused intermediates own no buffer
  std::vector<int> buf_of;              // liveness buffer -> bufs index, -1 (fused intermediate)
  std::vector<int64_t> intrinsic_ws;    // each step's own (column-cache) workspace
  Layout best;                          // segment-overlap, then circular-pool / row-cache
  int64_t pool_bytes = 0;               // circular-pool: the pool's bytes (0: linear layout)
  std::vector<bool> row_cache;          // row-cache: steps that use the row cache

  int num_steps() const { return static_cast<int>(steps.size()); }
};

struct VmcuInputs {
  const ir::Graph& g;
  const target::Target& t;
  const analysis::Liveness& lv;
  const VmcuState& st;
  // --time-limit's remainder for the layout search (PlanOptions::search_time_limit_s; 0: none given,
  // each exact placement keeps its 30 s safety net and the node limit that keeps plans reproducible).
  double time_limit_s = 0;
};

// The buffer (bufs index) of tensor `id`, -1 if none.
int VmcuBufferIndex(const VmcuInputs& in, ir::TensorId id);
// A layout: overlaps taken where allowed by the caps, requests, and their placement.
Layout BuildLayout(const VmcuInputs& in, int64_t extent_cap, int64_t cap);
// Per step: live bytes of a layout, each declared overlap pair counted as max(shift + in, out)
// instead of in + out (workspaces not included).
std::vector<int64_t> LiveOf(const VmcuInputs& in, const Layout& L);
// Lower bound of a layout: the live bytes plus the step's workspace, at the worst step.
int64_t LowerBoundOf(const VmcuInputs& in, const Layout& L);
// The smallest layout for the current workspaces (steps[s].workspace).
Layout SearchLayout(const VmcuInputs& in);

}  // namespace sramplan::driver
