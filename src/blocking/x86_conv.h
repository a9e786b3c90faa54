// A blocked direct convolution on x86 (issue 16, item 7): float32, batch 1, one thread, whose loop
// nest is a blocking string from the optimiser (optimizer.h) run on the host's cache hierarchy.
//
// Layouts: input [yi][xi][c] (yi = (Y-1) sy + Fh, xi = (X-1) sx + Fw, padding already applied),
// weights [fh][fw][c][k], output [y][x][k].
//
// Execution: the string's loops outside the L1 cut (the largest cut whose input, kernel and output
// tiles together fit in L1d, the capacity the optimiser packed them into) run in the string's order
// with its sizes (serpentine: each such loop reverses direction on every other pass, so an LRU cache
// keeps what the next pass needs first; x86_conv.cc); the tile inside the cut (tx x ty pixels, tk kernels, tc x tfh x tfw window) runs a
// register-blocked micro-kernel: for each chunk of up to 16 of the tile's kernels, groups of output
// pixels held in 12 ymm accumulators (6 pixels x 16 kernels, or 12 pixels x 8 kernels for a chunk of
// <= 8; the tile's pixels split into balanced groups of at most that many), loaded from the output
// at the start and stored at the end (the string's C/Fw/Fh loops
// outside the cut revisit partial sums), one broadcast input value per pixel and one or two 8-wide
// weight loads per step, over the tile's fh rows of contiguous (fw, c) steps. K remainders (tk not a
// multiple of 8 or 16) use masked weight loads and masked output loads/stores (strings searched with
// KernelSearchOptions have none). The AVX2/FMA kernel (x86_conv_avx2.cc, compiled with -mavx2 -mfma) runs when the
// CPU reports both (__builtin_cpu_supports), a portable scalar kernel with the same loops otherwise.
//
// Blocked layouts, like oneDNN's nChw8c/OIhw8i8o (the tile's operands contiguous, not strided by
// C or K, which in [y][x][c] would map a tile of a deep layer onto a few L1 sets): the timed call
// reads the input as [C/tc][yi][xi][tc] and writes the output as [K/tk][y][x][tk] (tc, tk = the
// tile's C and K blocks); PackInput / UnpackOutput convert (outside the timed call, as the bench
// excludes oneDNN's reorders). Weights are packed once per plan (MakeConvPlan, outside any timed call, like oneDNN's reorder to
// its blocked layout): for each K tile of the string (tk = the tile's K block), chunks of 16 kernels,
// each [fh][fw][c][kn] with kn = 16 except the tile's last chunk (kn = the remaining kernels; the
// kernel reads it with masked loads), so the packed weights are exactly Fh Fw C K floats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "support/status.h"

namespace sramplan::blocking::x86 {

struct HostCaches {
  int64_t l1d = 32 << 10, l2 = 1 << 20, l3 = 32 << 20;
  bool from_sysfs = false;  // false: some level unreadable, its default above kept
};
// L1d / L2 / L3 sizes of cpu0 from `sysfs_cache_dir` (index*/{level,type,size}); instruction
// caches are skipped.
HostCaches ReadHostCaches(const std::string& sysfs_cache_dir = "/sys/devices/system/cpu/cpu0/cache");
// The caches as shared levels holding all three operands (32-bit words) plus DRAM; access energies
// from Table 3 at 64-bit width by size (an L3 above 16 MB at 16 MB), DRAM 320 pJ / 16 bit: a
// relative cost per access for the optimiser, not a CPU energy claim.
Hierarchy HostHierarchy(const HostCaches& c);

// The search options that make the optimiser's L1 tile suit the micro-kernel (optimizer.h's
// k_multiple, min_accum_depth): a K tile of whole 16-kernel chunks (when 16 does not divide K, a
// multiple of the smallest multiple of 8 >= 16 dividing K: 16-chunks and one 8-chunk; else 8), so
// no masked loads or stores, and at least `min_accum_depth` (fw, fh, c) steps accumulated in
// registers between an accumulator's load and store.
constexpr int64_t kDefaultMinAccumDepth = 128;
SearchOptions KernelSearchOptions(const Layer& layer, int64_t min_accum_depth = kDefaultMinAccumDepth);

enum class KernelPath { kAuto = 0, kAvx2, kPortable };
// Whether this CPU runs the AVX2/FMA kernel (and the build has it).
bool HasAvx2Fma();

struct ConvPlan {
  Layer layer;
  BlockingString str;
  int cut = 0;          // loops [0, cut) form the L1 tile
  Extents tile{};       // block sizes inside the cut
  int64_t xi = 0, yi = 0;  // input width and height
  int64_t k_chunks = 0;    // chunks of 16 kernels per K tile
  std::vector<float> packed;  // weights, packed (header comment): Fh Fw C K floats
};

// Checks the layer (conv, batch 1), the string (ValidateString) and the weights' size
// (Fh Fw C K floats, layout above), picks the L1 cut for `l1d_bytes` and packs the weights.
StatusOr<ConvPlan> MakeConvPlan(const Layer& layer, const BlockingString& str, int64_t l1d_bytes,
                                const std::vector<float>& weights);
// out = conv(in, the plan's weights); `in` must hold yi xi C floats and `out` Y X K (errors name
// the buffer and the size it needs). kAvx2 on a CPU without AVX2/FMA is an error.
Status RunBlockedConv(const ConvPlan& p, const std::vector<float>& in, std::vector<float>* out,
                      KernelPath path = KernelPath::kAuto);
// The timed call, without checks: `in` and `out` in the blocked layouts (sizes as above).
void RunBlockedConvUnchecked(const ConvPlan& p, const float* in_blocked, float* out_blocked, bool avx2);
// [yi][xi][c] -> [C/tc][yi][xi][tc] and [K/tk][y][x][tk] -> [y][x][k] (same sizes).
void PackInput(const ConvPlan& p, const float* in, float* in_blocked);
void UnpackOutput(const ConvPlan& p, const float* out_blocked, float* out);

// One K chunk (kvalid = 1..16 kernels) of one L1 tile: the tile's tx x ty output pixels in groups of
// up to 6 (kvalid > 8) or 12 (kvalid <= 8; balanced: sizes differ by at most one), each group's partial sums in registers over the window: tfh rows
// of `run` = tfw x tc contiguous (fw, c) steps (the blocked layouts make them contiguous).
struct TileArgs {
  const float* in;   // the tile's first pixel's input at (fh0, fw0, c0) in the blocked input
  float* out;        // the tile's first pixel's output at the chunk's first kernel (blocked output)
  const float* w;    // the chunk's packed weights at (fh0, fw0) of the tile's C block
  int64_t tx = 0, ty = 0;
  int64_t in_x = 0, in_y = 0;    // floats between the inputs of adjacent output pixels (x, y)
  int64_t out_x = 0, out_y = 0;  // floats between adjacent output pixels (x, y)
  int64_t in_fh = 0, w_fh = 0;   // floats between window rows (input, packed weights)
  int kvalid = 16, tfh = 1, run = 1;
};
void TileKernelPortable(const TileArgs& t);
void TileKernelAvx2(const TileArgs& t);  // x86_conv_avx2.cc

}  // namespace sramplan::blocking::x86
