// Tile-by-tile execution of an Optimus group (plan::StepKind::kFusedTiled): the group's ops run as
// row strips of its outputs, per image, inside one byte array standing for the accelerator's
// global buffer. Every feature map the group touches holds a window of rows there (a line buffer:
// the halo rows a later strip still needs stay; rows no consumer needs any more are dropped);
// group inputs are loaded from DRAM row by row as the strips need them (each row once), group
// outputs are written to DRAM as their rows are computed (each row once), and parameters are
// loaded into the buffer once (params_resident) or read from DRAM by every strip that runs the op.
//
// The ops run through the existing float32 and int8 kernels on strip-sized operands: an op's
// output rows [a, b) are computed from the input rows the window relation gives, with the padding
// of the strip's edges (real padding only at the tensor's top and bottom), so every output value
// is computed from the same inputs as in the naive run.
//
// Scope (what the schedule knows, checked when lowering): channels-last (NHWC) graphs. Conv,
// MaxPool and AveragePool (2-D) follow the window relation; element-wise ops and channel Concat
// keep the rows; every other op (global pooling, Gemm, views, ...) runs once on its whole inputs.
// int8 GlobalAveragePool streams its input (per-channel sums); float32 runs it on its whole input.
// ISOA (an op's output kept T_c channels at a time): an ISOA output no op of the group reads streams
// to DRAM through a T_c-channel staging window; one the group reads runs sliced with int32 partial
// sums (int8, exec/exec_tiled_isoa.h); otherwise (float32, other ops) it is held with every channel,
// and when that does not fit at the plan's strips the run says so (more strips, or a mismatch).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/kernels.h"
#include "ir/graph.h"
#include "plan/plan.h"

namespace sramplan::exec {

struct QuantizedModel;

// A tensor the group touches, with its window in the global buffer.
struct TiledTensor {
  ir::TensorId id;
  int64_t rows = 1;         // H of one image (1: not a 4-D feature map, handled whole)
  int64_t row_bytes = 0;    // bytes of one row of one image
  int64_t window_rows = 0;  // rows the window holds at most
  int64_t offset = 0;       // of the window in the global buffer
  int producer = -1;        // index into the group's ops; -1: a group input (loaded from DRAM)
  bool to_dram = false;     // a group output (written to DRAM as computed)
  bool in_situ = false;     // shares its producer's input window (a unary element-wise op in place, or a
                            // view on whole operands: the same bytes, rows counted in the owner's rows)
  int share = -1;           // in_situ: the tensor whose window it uses
  // An ISOA output no op of the group reads: the kernel writes its rows straight to DRAM; the
  // window is its T_c-channel staging (staging_bytes per row).
  bool direct = false;
  int64_t staging_bytes = 0;
  // A group input or output the plan keeps in the global buffer between groups (keep-on-chip):
  // its rows move on chip, not counted as DRAM bytes (set when lowering, exec/lower_step.cc).
  bool on_chip = false;
  // int8: an ISOA output the group reads, held slice_channels channels at a time (slice_bytes a
  // row) and read by readers summing int32 partial sums (exec/exec_tiled_isoa.h).
  bool sliced = false;
  int64_t slice_channels = 0, slice_bytes = 0;
};

// How an op of the group runs: strip by strip (its output rows follow its inputs' rows) or once
// on whole operands; per input, how its rows follow the output rows.
enum class TiledRule { kWindow, kSame, kWhole };
struct TiledInput {
  TiledRule rule = TiledRule::kWhole;
  int64_t stride = 1, pad_top = 0, k_eff = 1;  // kWindow
  std::vector<int64_t> pads;                   // kWindow: the op's pads (top, left, bottom, right)
};
struct TiledOp {
  bool rowwise = false;
  // int8 GlobalAveragePool: its input streams strip by strip into per-channel int32 sums in the
  // buffer (sp_global_pool_sum_s8), finished when the input is complete.
  bool stream = false;
  int64_t sums_offset = 0;  // stream, isoa_reader: where its sums lie in the buffer
  bool isoa_source = false;  // computes its (sliced) output one channel slice at a time
  bool isoa_reader = false;  // sums a sliced input slice by slice (run with its source)
  std::vector<TiledInput> rules;  // per op input
  std::vector<int> in, out;       // tensor indexes per op input / output; -1 for constants
  int64_t param_bytes = 0;        // the constants it reads, each once
};

// What a group runs per image and strip: which rows of each op's output it computes.
struct TiledRun {
  int op = 0;                      // index into the group's ops
  int64_t out_begin = 0, out_end = 0;  // rows of the op's output (all outputs for a whole op);
                                       // a streaming op: rows of its input it adds
  bool finish = false;                 // a streaming op: its input is complete, write the output
};
struct TiledStrip {
  std::vector<TiledRun> runs;   // in op order
  std::vector<int64_t> keep;    // per window owner: the first row it keeps during the strip
  std::vector<int64_t> target;  // per tensor: rows computed / loaded by the strip's end
};

struct TiledSchedule {
  int64_t tiles = 1;
  int64_t images = 1;
  std::vector<const ir::Op*> ops;
  std::vector<TiledOp> op_info;  // per op
  std::vector<TiledTensor> tensors;
  std::vector<ir::TensorId> params;  // constants the group reads, each once
  int64_t param_bytes = 0;
  bool params_resident = false;
  int64_t param_offset = 0;          // resident parameters: where they start in the buffer
  std::vector<TiledStrip> strips;
  int64_t working_bytes = 0;         // windows (+ resident parameters): the bytes the run uses
  int64_t buffer_capacity = 0;       // B_c: the global buffer's bytes
  // DRAM bytes the schedule moves (all images); equal to the run's counts.
  int64_t read_bytes = 0, write_bytes = 0;
  // Non-empty when the run differs from the plan's group (more strips), saying why.
  std::string note;
};

// The schedule of fused-tiled step `s` of `p` (its ops `ops`, in step order). kUnsupported for
// groups outside the scope above, kMismatch when the plan disagrees with the model or the windows
// do not fit the global buffer (`capacity` bytes).
// `int8`: the run uses the int8 kernels (global average pooling then streams).
StatusOr<TiledSchedule> BuildTiledSchedule(const ir::Graph& g, const plan::Plan& p, int s,
                                           const std::vector<const ir::Op*>& ops, int64_t capacity,
                                           bool int8 = false);

// Where the group's DRAM operands are: the whole tensor (all images) in DRAM.
using DramLocator = std::function<StatusOr<uint8_t*>(const ir::Tensor& t)>;

struct TiledCounts {
  int64_t read_bytes = 0, write_bytes = 0;
};

// Runs the schedule in `buffer` (schedule.buffer_capacity bytes, poisoned first). `scratch` is a
// copy of the model graph whose shapes and attributes the runner rewrites per strip (and restores).
StatusOr<TiledCounts> RunTiledSchedule(const TiledSchedule& ts, ir::Graph& scratch, const QuantizedModel* q,
                                       const DramLocator& dram, std::vector<uint8_t>& buffer);

// How the schedule's DRAM bytes arise (inputs, outputs, parameters once or per op run), for notes.
std::string TiledTrafficWhy(const TiledSchedule& ts);

// A copy of `g` for RunTiledSchedule: constant payloads larger than 4 KiB are left out (the
// kernels read constants through their operand pointers).
ir::Graph ScratchGraph(const ir::Graph& g);

}  // namespace sramplan::exec
