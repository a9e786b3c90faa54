// Optimus (paper 002): the accelerator model, the fusion graph (operators with their merged
// Conv+BN+activation and views), the tile relation t(l-1) = t(l)*S + K - S backwards through a
// fused group (a DAG: several inputs and outputs), the ISOA decision DP (Alg. 2), tile
// maximisation (Eq. 4) and the group's DRAM cost (Eq. 3). IR in, numbers out; no plan.
//
// Model (docs/architecture.md, "Optimus"): a group runs per image (the batch is the outer loop) as
// `tiles` full-width row strips of its outputs (the paper's t_w = O_w, line buffers). A tensor
// produced in the group holds R rows x t_c channels in the global buffer, R from the tile relation
// (halo rows kept in the line buffer), t_c = min(T_c, C) when its producer applies ISOA, else C;
// a group input holds R rows of all channels. Parameters either stay in the buffer for the whole
// group (loaded once) or stream from DRAM through the PE array once per tile and image.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/liveness.h"
#include "ir/graph.h"
#include "support/status.h"
#include "target/target.h"

namespace sramplan::fusion {

// The accelerator: global buffer B_c, the PE array's throughput T_c (output channels per pass,
// the Ow|Cout dataflow's columns), T_w (output columns per pass, its rows) and T_h (output rows
// per pass: 1 in this dataflow), the batch.
struct AccelModel {
  int64_t buffer_bytes = 0;  // B_c
  int64_t t_c = 1;
  int64_t t_h = 1;
  int64_t t_w = 1;
  int64_t batch = 1;
  // Halo caching (beyond the paper): each group holds its halo rows in line buffers when that moves
  // fewer DRAM bytes (ties: a smaller working set); false: every group recomputes (the paper's count).
  bool halo_choice = true;
  // The target's arena level (the global buffer) and compute array.
  static StatusOr<AccelModel> From(const target::Target& t, int64_t batch);
};

// How an operator's input rows follow from its output rows.
enum class RowRule {
  kWindow,  // Conv / pooling: (r - 1) * stride + max(dilation * (k - 1) + 1, stride), clipped to the input
  kSame,    // element-wise, Concat, BatchNorm: r rows (a broadcast input of one row: 1)
  kReduce,  // global average pooling: the input streams, ceil(H / tiles) rows a tile, into 32-bit
            // sums per channel (the vertex's accum_bytes); other reductions are kWhole
  kWhole,   // everything else (Gemm, Flatten to a matrix, Softmax, unknown ops): the whole input
};

struct RowMap {
  RowRule rule = RowRule::kWhole;
  int64_t stride = 1, k_eff = 1;
  int64_t in_rows = 1;  // rows of the input tensor
  int64_t fixed_out = 0;  // > 0: the op's whole output is needed (a merged view changes its rows)
  int64_t pad_top = 0, out_rows = 0;  // kWindow of a Conv / pooling: its top padding and output rows
  // Rows of the input read when the op computes all its output rows (a strided window may never
  // reach the last rows): the group reads only these from DRAM.
  int64_t RowsRead() const;
  // Rows of the input needed for r output rows when the group runs `tiles` strips.
  int64_t Apply(int64_t r, int64_t tiles) const;
  // Rows of the input a strip adds when the op's output advances by d rows (line buffer).
  int64_t NewRows(int64_t d, int64_t tiles) const;
  // Rows of the input the first strip needs for the output's first f rows (the top padding and the
  // window's lead: a line buffer's first strip may hold more rows than a later one).
  int64_t FirstRows(int64_t f, int64_t tiles) const;
};

// A feature map between fusion vertices.
struct FTensor {
  ir::TensorId id;
  int64_t bytes = 0;      // whole batch
  int64_t rows = 1;       // H of one image (1 for tensors that are not 4-D feature maps)
  int64_t channels = 1;   // C (1 when not a 4-D feature map: no channel tiling)
  int64_t row_bytes = 0;  // bytes of one row of one image, all channels
  int64_t row_elems = 0;  // elements of that row (ISOA readers hold 4-byte sums per element)
  int producer = -1;      // vertex, -1 for graph inputs
  std::vector<int> consumers;  // vertices, ascending
  bool graph_output = false;
};

// One operator of the fusion DAG: a main op and the ops merged into it (activation, BatchNorm,
// views that feed nothing else).
struct Vertex {
  std::vector<ir::OpId> ops;
  std::string name;  // the main op's
  std::vector<int> inputs;      // FTensors read (no constants), ascending
  std::vector<RowMap> in_maps;  // per input
  std::vector<int> outputs;     // FTensors written
  int64_t param_bytes = 0;      // constants it reads (whole)
  int64_t accum_bytes = 0;      // 32-bit sums in the buffer (a streamed global average pooling: 4 B a channel)
  int64_t macs = 0;
  bool channel_tiled = false;   // its outputs are 4-D feature maps (ISOA may apply)
  std::vector<int> preds, succs;  // vertices, ascending
  bool known = true;            // false: an op the row model does not know (kWhole, own group)
  // ISOA read inside a group (fusion/isoa_rules.cc, what exec/exec_tiled_isoa.cc runs): the
  // vertex can produce its output T_c channels at a time for readers of the group (a one-op Conv
  // with group 1, or a channel Concat), and it can read such an input as int32 partial sums per
  // input-channel slice (a one-op Conv with group 1 whose window is one row high).
  bool isoa_source = false;
  bool isoa_reader = false;
};

struct FusionGraph {
  std::vector<Vertex> vertices;  // in a topological order (the schedule's)
  std::vector<FTensor> tensors;
  int64_t batch = 1;
};

// The fusion DAG of `order`: unary element-wise ops, BatchNormalization and view ops merge into
// the vertex producing their only input when that input feeds nothing else. `batch`: images per
// run (a tensor whose first axis is the batch holds one strip per image).
StatusOr<FusionGraph> BuildFusionGraph(const ir::Graph& g, const analysis::Schedule& order, int64_t batch);

// How a group is evaluated: Optimus (ISOA by Alg. 2, parameters may stream) or the prior works'
// constraints (no ISOA, all parameters on chip for the whole group).
enum class CostRule { kOptimus, kPriorWork };

// How a group's strips share the rows their windows overlap in (the halo):
//   kRecompute   the paper's count: every feature map holds the tile relation's rows backwards from
//                the group outputs (r output rows of two 3x3 stride-1 convs: r + 2 and r + 4 rows).
//   kLineBuffer  a map that one operator of the group reads (and the group does not write out) holds
//                that operator's window of the rows a strip adds: K - S cached rows + new rows (r + 2
//                and r + 2); a map with several readers, or read and written out, keeps the
//                recompute rows (its readers progress apart). An ISOA output holds its cached rows
//                with every channel, its new rows T_c channels at a time.
// The executor (exec/exec_tiled.cc) runs line buffers for both: a recompute group's count is an
// upper bound of what it holds, a line-buffer group's is its windows (for chains of one reader).
enum class Halo { kRecompute, kLineBuffer };
const char* HaloName(Halo h);  // "recompute", "line-buffer"

// The evaluation of one group (a set of vertices, ascending).
struct GroupEval {
  bool feasible = false;
  int64_t tiles = 1;          // strips per image
  int64_t tile_rows = 1;      // rows per strip of the tallest feature map the group touches
  int64_t ref_rows = 1;       // its rows
  bool params_resident = false;
  int64_t buffer_bytes = 0;   // working set in the global buffer (with resident parameters)
  int64_t min_buffer_bytes = 0;  // the working set of the smallest allowed tile (for errors)
  std::vector<char> isoa;     // per group vertex (in group order): phi
  int64_t read_bytes = 0;     // DRAM: inputs once, parameters once or tiles x batch times
  int64_t write_bytes = 0;    // DRAM: group outputs once
  int64_t param_bytes = 0;
  Halo halo = Halo::kRecompute;
  int64_t dram_bytes() const { return read_bytes + write_bytes; }
};

// Rows of each FTensor the group touches for `tiles` strips (0 for tensors it does not touch).
// Exposed for tests.
std::vector<int64_t> GroupRows(const FusionGraph& fg, const std::vector<int>& group, int64_t tiles,
                               int64_t* ref_rows);
// Alg. 2: ISOA decisions of the group's vertices (reverse topological DP on the 1-row tile).
std::vector<char> IsoaDecisions(const FusionGraph& fg, const std::vector<int>& group, const AccelModel& m);
// The group's working set for `tiles` strips and decisions `isoa` (fmaps only).
int64_t GroupFmapBytes(const FusionGraph& fg, const std::vector<int>& group, int64_t tiles,
                       const std::vector<char>& isoa, const AccelModel& m, Halo halo = Halo::kRecompute);
// The same with the decisions of IsoaDecisions (the group indexed once).
int64_t GroupFmapBytesIsoa(const FusionGraph& fg, const std::vector<int>& group, int64_t tiles, const AccelModel& m);
// Eq. 4 then Eq. 3: the largest tile that fits, and the group's DRAM bytes.
GroupEval EvaluateGroup(const FusionGraph& fg, const std::vector<int>& group, const AccelModel& m,
                        CostRule rule);

}  // namespace sramplan::fusion
