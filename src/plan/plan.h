// plan::Plan: where every tensor lives at every step. A value; produced by strategies, checked by
// PlanVerifier, written as JSON (docs/plan-format.md).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/status.h"

namespace sramplan::plan {

// The plan.json version written; PlanFromJson also reads version 1 (converted by InferStepKinds).
inline constexpr int kSchemaVersion = 2;

// What a step runs (exec/lower_step turns a step into kernel calls by its kind):
//   kOp               its ops one after another, each through its plain kernel.
//   kInPlaceDepthwise one DepthwiseConv whose output overwrites its dying input (TinyEngine's way),
//                     channel by channel through the step's `workspace` (a one-channel scratch).
//   kSegment          one Conv / DepthwiseConv / Gemm / MatMul on the segment-aware kernels
//                     (sramplan_rt_seg.h), its output declaring a "segment-overlap" with its input.
//   kFusedBottleneck  a fused inverted bottleneck Conv, DepthwiseConv, Conv 1x1 [, Add of the group
//                     input] on sp_seg_bottleneck_s8; its intermediates live in the workspace.
//   kFusedTiled       an Optimus fused group (`tiled`): its ops run as `tiles` full-width row strips
//                     per image in the step's workspace (the global buffer); only the group's
//                     inputs, outputs and parameters move to or from DRAM. The verifier re-derives
//                     the working set and the DRAM bytes; the lowering builds its strip schedule
//                     (exec/exec_tiled.h) and the executor runs it in the global buffer.
//   kModule           reserved (module buffering): read and written, but the verifier and the
//                     lowering refuse it as not supported yet.
enum class StepKind { kOp, kInPlaceDepthwise, kSegment, kFusedBottleneck, kFusedTiled, kModule };
// "op", "inplace-depthwise", "segment", "fused-bottleneck", "fused-tiled", "module".
const char* StepKindName(StepKind k);
// The kind a name gives; false when the name is none of StepKindName's.
bool ParseStepKind(const std::string& name, StepKind* k);

struct Level {
  std::string name;
  std::string kind;  // register_file, sram, scratchpad, flash, dram
  int64_t capacity = 0;
  int64_t used_bytes = 0;         // highest byte used by any buffer in this level
  int64_t lower_bound_bytes = 0;  // max over steps of bytes live in this level
  bool holds_activations = false;
  // A memory pool (issue 19): one separately addressed region of the target level `pool_of`, at
  // address `base`. Its buffers name it as their level. Empty: a plain level.
  std::string pool_of{};
  int64_t base = 0;
};

struct StepOp {
  std::string name;
  std::string type;  // ONNX type; "DepthwiseConv" for depthwise convolutions
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Geometry the verifier needs to check shapes and declared segment overlaps: for Conv
  // kernel_shape, strides, pads, dilations, group. Step parameters live in plan::Step.
  std::map<std::string, std::vector<int64_t>> attrs;
};

// kFusedTiled: how an Optimus group runs (fusion/optimus_model.h). Rows follow the tile relation
// t(l-1) = t(l) * S + K - S backwards from the group's outputs (halo rows held in line buffers).
struct TiledGroup {
  int64_t tiles = 0;        // row strips per image (the batch is the outer loop)
  int64_t tile_rows = 0;    // t_h: rows of the group output with most rows, per strip
  int64_t tile_cols = 0;    // t_w: its full width
  int64_t tile_channels = 0;  // T_c: channels an ISOA op's output keeps
  std::vector<std::string> isoa;  // ops applying ISOA (Alg. 2): their outputs hold T_c channels
  bool params_resident = false;   // parameters loaded once (else once per strip and image)
  int64_t buffer_bytes = 0;       // working set: fmap rows (+ resident parameters)
  int64_t dram_read_bytes = 0;    // inputs once, parameters once or tiles x batch times
  int64_t dram_write_bytes = 0;   // outputs once
  std::string halo = "recompute";  // "recompute" (the tile relation's rows) or "line-buffer" (K - S cached rows + new)
};

struct Step {
  int index = 0;
  std::vector<StepOp> ops;  // one op, or a fused group (later strategies)
  StepKind kind = StepKind::kOp;
  // The tensor name of the step's workspace / scratch buffer (a segment or fused step's workspace,
  // an in-place depthwise step's one-channel scratch); empty: none.
  std::string workspace{};
  int64_t segment_bytes = 0;  // segment kinds: bytes per segment / FC output chunk (0: not set)
  bool row_cache = false;     // kFusedBottleneck: the row-cache variant of the kernel
  TiledGroup tiled{};         // kFusedTiled only
};

struct Tensor {
  std::string name;
  int64_t bytes = 0;
  std::string kind;   // input, output, activation, constant, scratch
  std::string dtype;
  std::vector<int64_t> shape;
  std::string producer;  // op name, empty for inputs and constants
  std::vector<std::string> consumers;
  std::string alias_of;  // for views: the tensor whose bytes this one shares
};

struct Overlap {
  std::string tensor;  // the buffer this one may share bytes with
  std::string reason;  // "inplace-elementwise", "inplace-depthwise", "segment-overlap"
  int64_t shift = 0;   // this.offset - other.offset when overlapping
};

struct Buffer {
  std::string tensor;
  std::string level;
  int64_t offset = 0;
  int64_t bytes = 0;
  int first_step = 0;  // inclusive
  int last_step = 0;   // inclusive
  std::vector<Overlap> overlaps;
};

// A circular segment pool (vMCU): the first `bytes` bytes of `level` (its whole used size) are
// addressed modulo `bytes`, so a buffer of that level may start at `offset` < bytes and run past
// the pool's end, continuing at byte 0 ("wraps"). Only the segment-aware kernels address the pool
// modulo: a wrapping buffer may be read and written only by segment steps (IsSegmentStep), and the
// output of a segment step sits (in_offset - out_offset) mod bytes below its input. A buffer's
// start segment is offset / segment_bytes.
struct Pool {
  std::string level;
  int64_t bytes = 0;
  int64_t segment_bytes = 1;  // the planner's unit of shift and allocation (informational)
};

struct Transfer {
  int step = 0;
  std::string kind;  // load, store, spill, reload
  std::string tensor;
  int64_t bytes = 0;
  std::string from;
  std::string to;
};

struct Metrics {
  std::map<std::string, int64_t> peak_bytes;  // per level
  int64_t arena_bytes = 0;                    // activation arena size
  int64_t lower_bound_bytes = 0;              // activation arena lower bound
  double overhead_pct = 0;                    // (arena - lower bound) / lower bound
  int64_t offchip_read_bytes = 0;
  int64_t offchip_write_bytes = 0;
  int64_t noncompulsory_read_bytes = 0;
  int64_t noncompulsory_write_bytes = 0;
  int64_t inplace_saved_bytes = 0;  // what in-place sharing saved vs placing the same schedule without it
  int64_t budget_bytes = 0;         // budget strategies: on-chip bytes the plan was given (0: none)
  double energy_pj = 0;             // memory access energy estimate
  bool fits = false;
  // Plans with fused-tiled steps: the DRAM bytes of their groups (Eq. 3), written only then.
  int64_t dram_read_bytes = 0;
  int64_t dram_write_bytes = 0;
  // Module buffering (modulebuf, layerwise): off-chip bytes split into feature maps and weights;
  // written to plan.json (with dram_read_bytes / dram_write_bytes) only when dram_split is set.
  bool dram_split = false;
  int64_t fm_dram_bytes = 0;
  int64_t weight_dram_bytes = 0;
  // COSMA strategies (cosma, cosma-fixed, cosma-dc): a lower bound on the non-compulsory bytes that holds
  // for every operator order (spill/spill_bound.h) and the plan's gap to it in percent of its own
  // non-compulsory bytes; -1: not computed (the fields are then left out of plan.json).
  int64_t noncompulsory_lower_bound_bytes = -1;
  double noncompulsory_gap_pct = 0;
};

// One module of module buffering (modulebuf, layerwise): its ops in processing order, Alg. 3's
// branch order, Alg. 6's processing type, and where its input (MIFM) and its branch outputs
// (MOFM) sit on chip; its feature-map and weight traffic as planned.
struct ModuleRegion {
  std::string tensor;
  int64_t offset = -1;  // on-chip offset; -1: in DRAM
  int64_t bytes = 0;
  int depth = 1;
};
struct Module {
  std::string name;
  int depth = 1;
  std::string merge;       // the merge op
  std::string processing;  // "I", "II", "layerwise"
  std::vector<std::string> ops;                  // in the plan's step order
  std::vector<std::vector<std::string>> branches;  // ops of each branch, in processing order
  std::vector<int64_t> branch_req_bytes;           // Alg. 3's size_req(b), same order
  std::vector<ModuleRegion> mifm;                  // the module input at each depth
  std::vector<ModuleRegion> mofm;                  // the branch outputs, then the merge output
  int64_t fm_read_bytes = 0, fm_write_bytes = 0, weight_bytes = 0;
  int fm_reads = 0, fm_writes = 0;  // off-chip feature-map transfers (streamed operands and copies)
};

struct Plan {
  int schema_version = kSchemaVersion;
  std::string model;
  std::string target;
  std::string strategy;
  std::string schedule = "model";  // how the step order was chosen
  std::string dtype;
  int64_t batch = 1;
  std::string arena_level;
  std::vector<Level> levels;
  std::vector<Step> steps;
  std::vector<Tensor> tensors;
  std::vector<Buffer> buffers;
  std::vector<Transfer> transfers;
  std::vector<Pool> pools;  // at most one per level; empty: every buffer is a plain byte range
  Metrics metrics;
  std::vector<std::string> notes;
  std::vector<Module> modules;  // module buffering only; plan.json "modules" when not empty
};

// The pool of `level`, or nullptr.
const Pool* FindPool(const Plan& p, const std::string& level);
// The byte ranges [lo, hi) of the level that `b` occupies: one, or two when it wraps around its
// level's pool (then [offset, pool) and [0, offset + bytes - pool)).
std::vector<std::pair<int64_t, int64_t>> BufferPieces(const Plan& p, const Buffer& b);
bool Wraps(const Plan& p, const Buffer& b);
// Step s runs the segment-aware kernels (sramplan_rt_seg.h) on its level as a circular pool: its
// kind is kSegment or kFusedBottleneck.
bool IsSegmentStep(const Plan& p, int s);
bool IsSegmentKind(StepKind k);

// Gives every step of a plan without kinds (schema version 1, or a planner that does not set them)
// its kind and parameters by the version-1 conventions: a fused Conv, DepthwiseConv, Conv [, Add]
// is kFusedBottleneck and a single op whose output buffer declares a "segment-overlap" kSegment;
// a single DepthwiseConv with a '<op>.scratch' buffer is kInPlaceDepthwise. segment_bytes and
// row_cache move from the ops' attrs to the step; the workspace is the '<first op>.workspace' (or
// '<op>.scratch') buffer when the plan has one. Idempotent: a step whose kind is not kOp, or that
// already names a workspace, is left as it is.
void InferStepKinds(Plan* p);

std::string PlanToJson(const Plan& p);
StatusOr<Plan> PlanFromJson(const std::string& text);

}  // namespace sramplan::plan
