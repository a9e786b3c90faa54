// vMCU segment-level overlap analysis (issue 5, item 1).
//
// A segment-aware kernel reads its input tensor In and writes its output tensor Out, both stored in
// one (circular) segment pool: input segment x lives at pool address b_In + x, output segment o at
// b_Out + o (addresses in segments, segments in row-major order of the NHWC / [M, K] tensor). The
// output starts `shift` = b_In - b_Out segments before the input, so the op needs
// SegmentFootprint(shift, in, out) = max(shift + in, out) segments instead of in + out.
//
// Safety model (the paper's Eq. 1, refined; see overlap.cc for the derivation):
//   * A kernel is a set of statement instances executed in the lexicographic order of their
//     schedule (time) vectors. Every instance first performs all of its pool reads, then all of its
//     pool writes ("read then write").
//   * A write at instance j destroys the input segment at its pool address. The shift is safe when
//     for every instance j that writes output segment o and every strictly later instance i
//     (time(j) <lex time(i)) that reads input segment x:  b_Out + o < b_In + x, i.e.
//         shift >= max_{j <lex i} (o(j) - x(i)) + 1.
//     The paper writes ">=" over j <= i; we use ">" for j < i (a write at an earlier step to the very
//     address read later *is* a destroyed read) and nothing for j == i (reads precede writes inside
//     one step). With this form the minimum is tight: at shift - 1 the maximising pair (j, i) writes
//     exactly the address i reads afterwards. For GEMM both forms give the paper's closed form.
//   * The minimum is clamped at 0: a negative shift (output starting above the input) never lowers
//     the footprint, and 0 is always safe when the unclamped minimum is <= 0.
//   * Multi-operator groups (Eq. 2): several statements with a common schedule; only the group's
//     input In* and output Out* live in the pool (intermediates are in a private workspace), and
//     the same condition is imposed between every read of In* by any statement and every write of
//     Out* by any statement.
//   * Accesses are relations, not functions: one instance may read or write several segments (a
//     window, a pixel spanning several segments, a segment shared by two pixels when the segment
//     size does not divide the channel count). Segment granularity is conservative at byte level.
//
// All kernel builders below document their execution order: that order is the contract with the
// segment-aware C kernels in runtime/. A runtime kernel may reorder work freely *inside* one step
// (one statement instance) as long as it performs every pool read of the step before any pool write
// of the step, and it must execute the steps in the documented order. Performing a pool read
// earlier, or a pool write later, than the contract says never breaks safety (e.g. loading the
// residual pixel together with the window, or buffering output pixels before storing them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace sramplan::segment {

// A kernel at segment granularity, in ISL notation (https://libisl.sourceforge.io).
struct AffineKernel {
  std::string name;  // used in error messages, e.g. "conv2d_3x3_s1"
  // Statement instances, an ISL union set: "{ S[m, n, k] : 0 <= m < 4 and 0 <= n < 2 and 0 <= k < 3 }".
  // Must be bounded.
  std::string domain;
  // Statement instance -> time vector, an ISL union map into one common anonymous space, e.g.
  // "{ S1[p, q, r, s] -> [p, q, 0, r, s]; S2[p, q] -> [p, q, 1, 0, 0] }". Empty: the identity
  // (allowed for single-statement kernels only: time = the instance's own coordinates).
  // Instances with equal time vectors count as the same step (all their reads precede their writes).
  std::string schedule;
  // Statement instance -> input segment index, e.g. "{ S[m, n, k] -> In[3m + k] }". Any range
  // tuple name; the range must be 1-dimensional and inside [0, in_segments).
  std::string reads;
  // Statement instance -> output segment index, e.g. "{ S[m, n, k] -> Out[2m + n] : k = 2 }".
  std::string writes;
  int64_t in_segments = 0;
  int64_t out_segments = 0;
  int64_t segment_bytes = 1;    // bytes per segment for this kernel
  // Tensor sizes in bytes (set by the builders; 0 means in_segments * segment_bytes). The last
  // segment of a tensor may be partial.
  int64_t in_bytes = 0;
  int64_t out_bytes = 0;
  int64_t workspace_bytes = 0;  // informational: private scratch outside the pool (fused kernels)
  std::string loop_order;       // human-readable execution order (the runtime contract)
};

// Result of the integer-set optimisation.
struct ShiftAnalysis {
  // max over (j <lex i) of o(j) - x(i) + 1; nullopt when no write precedes any read (any shift is
  // safe). May be negative.
  std::optional<int64_t> unclamped_shift;
  int64_t shift = 0;               // max(unclamped_shift, 0): the shift to use (b_In - b_Out)
  int64_t footprint_segments = 0;  // SegmentFootprint(shift, in_segments, out_segments)
  int64_t footprint_bytes = 0;     // FootprintBytes(shift, segment_bytes, in_bytes, out_bytes)
};

// Solves Eq. 1 / Eq. 2 with ISL. InvalidArgument for unparsable ISL text, unbounded domains,
// accesses outside the tensors, or a schedule that does not map into one time space.
StatusOr<ShiftAnalysis> AnalyzeShift(const AffineKernel& kernel);
// The minimal safe b_In - b_Out (clamped at 0), i.e. AnalyzeShift(kernel)->shift.
StatusOr<int64_t> MinimalSafeShift(const AffineKernel& kernel);

// Segments spanned by input and output together when the output starts `shift` >= 0 segments before
// the input: max(shift + in_segments, out_segments).
int64_t SegmentFootprint(int64_t shift, int64_t in_segments, int64_t out_segments);
// The same in bytes: the output starts shift * segment_bytes bytes before the input, so input and
// output together span max(shift * segment_bytes + in_bytes, out_bytes) bytes.
int64_t FootprintBytes(int64_t shift, int64_t segment_bytes, int64_t in_bytes, int64_t out_bytes);

// ---------------------------------------------------------------------------------------------
// Kernel builders. Tensors are int8, NHWC (batch 1) or row-major [rows, features]. A segment is
// `segment_bytes` consecutive bytes of the tensor (segment s = bytes [s*seg, (s+1)*seg)); the last
// segment of a tensor may be partial. segment_bytes = 0 picks the paper's rule (Sec. 5.3). When the
// segment size does not divide a pixel / row, one step touches every segment overlapping its bytes.
// All builders return InvalidArgument for non-positive sizes or impossible geometry.

// GEMM in segment units (the paper's Sec. 4 example): In[M, K] x W[K, N] -> Out[M, N], K and N in
// segments. Same as FullyConnectedKernel(M, K, N, 1).
StatusOr<AffineKernel> GemmKernel(int64_t m, int64_t k, int64_t n);

// Fully connected / GEMM on int8 rows: In[M, in_bytes] -> Out[M, out_bytes], weights in flash.
// segment_bytes = 0: min(in_bytes, out_bytes) (paper rule). Let Kc = ceil(in_bytes / seg) and
// Nc = ceil(out_bytes / seg) be the numbers of seg-byte chunks of an input and an output row.
// Contract (steps S[m, n, k] in this order):
//   for m in [0, M)            // rows
//     for n in [0, Nc)         // output chunk: bytes [n*seg, min((n+1)*seg, out_bytes)) of row m
//       for k in [0, Kc)       // input chunk:  bytes [k*seg, min((k+1)*seg, in_bytes)) of row m
//         read input chunk (m, k) from the pool; accumulate in registers
//         if k == Kc - 1: write output chunk (m, n) to the pool
// (an input row is read once per output chunk; the output chunk is stored once, after its
// reduction). Segments: input chunk (m, k) touches the input segments overlapping bytes
// m*in_bytes + [k*seg, ...), output likewise.
StatusOr<AffineKernel> FullyConnectedKernel(int64_t m, int64_t in_bytes, int64_t out_bytes,
                                            int64_t segment_bytes = 0);

// Pointwise (1x1, stride 1) convolution HxWxC_in -> HxWxC_out. segment_bytes = 0: min(C_in, C_out).
// Contract (steps S[h, w], pixel-major):
//   for h in [0, H), for w in [0, W):
//     read all C_in bytes of input pixel (h, w) (e.g. copy them to a C_in-byte local buffer)
//     then write all C_out bytes of output pixel (h, w)
// The kernel must not write any byte of output pixel (h, w) before it has read all of input pixel
// (h, w) from the pool.
StatusOr<AffineKernel> PointwiseConvKernel(int64_t h, int64_t w, int64_t c_in, int64_t c_out,
                                           int64_t segment_bytes = 0);

struct Conv2DParams {
  int64_t h = 0, w = 0;             // input spatial size
  int64_t c_in = 0, c_out = 0;      // channels (bytes per pixel, int8)
  int64_t r = 1, s = 1;             // kernel height, width
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;       // zero padding before the first row / column
  int64_t pad_bottom = 0, pad_right = 0;   // zero padding after the last row / column
  int64_t segment_bytes = 0;        // 0: min(c_in, c_out)
  // Output size: P = (h + pad_top + pad_bottom - r) / stride_h + 1, Q likewise (must be >= 1).
};
// General Conv2D (dilation 1). Contract (steps S[p, q], output-pixel-major):
//   for p in [0, P), for q in [0, Q):
//     for every (r, s) in the window with input pixel (hi, wi) = (p*stride_h - pad_top + r,
//       q*stride_w - pad_left + s) inside the image (padding is not a pool read): read all C_in
//       bytes of input pixel (hi, wi) (in any order)
//     then write all C_out bytes of output pixel (p, q)
StatusOr<AffineKernel> Conv2DKernel(const Conv2DParams& params);
// Convenience: symmetric padding `pad` on all sides.
StatusOr<AffineKernel> Conv2DKernel(int64_t h, int64_t w, int64_t c_in, int64_t c_out, int64_t r,
                                    int64_t s, int64_t stride, int64_t pad,
                                    int64_t segment_bytes = 0);

// Depthwise convolution (channel multiplier 1, C_in = C_out = c): the same steps and contract as
// Conv2DKernel with c_in = c_out = c (each step reads its window's pixels, all channels, then writes
// its output pixel); segment_bytes = 0: c.
StatusOr<AffineKernel> DepthwiseConvKernel(int64_t h, int64_t w, int64_t c, int64_t r, int64_t s,
                                           int64_t stride, int64_t pad, int64_t segment_bytes = 0);

struct BottleneckParams {
  int64_t h = 0, w = 0;                    // input A: h x w x c_in
  int64_t c_in = 0, c_mid = 0, c_out = 0;  // pw1: c_in -> c_mid, dw: c_mid, pw2: c_mid -> c_out
  int64_t r = 3, s = 3;                    // depthwise kernel
  // The depthwise padding; -1: "same", (r-1)/2 resp. (s-1)/2. TFLite's SAME with stride 2 pads
  // only the bottom and right (e.g. 0, 0, 1, 1), and PAD folded into the convolution likewise.
  int64_t pad_top = -1, pad_left = -1, pad_bottom = -1, pad_right = -1;
  int64_t stride1 = 1, stride2 = 1, stride3 = 1;  // strides of pw1, dw, pw2 (the paper's Table 2)
  bool residual = true;  // E = D + A; requires all strides 1, c_in == c_out, a 1x1 expansion
  int64_t segment_bytes = 0;  // 0: min(c_in, c_out)
  // The expansion as a Conv2D (a stem fused as the expansion): kernel er x es with stride stride1
  // and zero padding; 1x1 without padding is the usual pointwise expansion.
  int64_t er = 1, es = 1;
  int64_t e_pad_top = 0, e_pad_left = 0, e_pad_bottom = 0, e_pad_right = 0;
};
// Fused inverted bottleneck (pw expand -> dw RxS -> pw project [-> + A]) as a four-statement group
// (the paper's Eq. 2). Only A (input) and E (output) are in the pool; B (R*S pixels of c_mid), C and
// D (one pixel each) live in a private workspace of R*S*c_mid + c_mid + c_out bytes (the paper's
// "R*S + 2 segments"). Sizes: H1 = (h + e_pad_top + e_pad_bottom - er) / stride1 + 1 (= ceil(h /
// stride1) for the 1x1 expansion); H2 = (H1 + pad_top + pad_bottom - r) / stride2 + 1;
// H3 = ceil(H2 / stride3) (widths likewise); E is H3 x W3 x c_out.
// Contract (steps in this order; time vectors [p, q, phase, r, s]):
//   for p in [0, H3), for q in [0, W3):               // output pixel of E
//     (p2, q2) = (p*stride3, q*stride3)               // the C/D pixel it needs
//     phase 0, for r in [0, R), for s in [0, S):      // S1: pw1 on the dw window (recomputed)
//       (h1, w1) = (p2*stride2 - pad_top + r, q2*stride2 - pad_left + s); skip if outside H1 x W1
//       read the A pixels (h1*stride1 - e_pad_top + a, w1*stride1 - e_pad_left + b) of the
//       expansion window inside the input (c_in bytes each; one pixel for 1x1);
//       B[r][s] = expansion of them, in the workspace
//     phase 1: S2: C = dw(B window) in the workspace
//     phase 2: S3: D = pw2(C) in the workspace
//     phase 3: S4: if residual, read A pixel (p, q); write E pixel (p, q) = D (+ A) to the pool
StatusOr<AffineKernel> InvertedBottleneckKernel(const BottleneckParams& params);

// ---------------------------------------------------------------------------------------------
// Closed forms (paper Sec. 4), for GEMM in segment units (M, K, N >= 1), matching GemmKernel:
//   shift     = max(0, (M-1)(N-K)) + N - 1      (b_In - b_Out)
//   footprint = max(M*N, M*K) + min(N, K) - 1
int64_t GemmShiftClosedForm(int64_t m, int64_t k, int64_t n);
int64_t GemmFootprintClosedForm(int64_t m, int64_t k, int64_t n);
// Pointwise conv with the pixel-major contract when segment_bytes divides c_in and c_out
// (K = c_in/seg, N = c_out/seg segments per pixel, H*W pixels): shift = max(0, (H*W-1)(N-K)),
// footprint = H*W*max(N, K) (the pixel buffer lets the output overwrite the pixel just read).
int64_t PointwiseShiftClosedForm(int64_t pixels, int64_t k_segs, int64_t n_segs);

// ---------------------------------------------------------------------------------------------
// Brute-force reference on an explicit trace (used by tests; independent of ISL).
struct TraceStep {
  std::vector<int64_t> reads;   // input segments read by the step (before its writes)
  std::vector<int64_t> writes;  // output segments written by the step
};
// max over j < i of max(writes(j)) - min(reads(i)) + 1 (nullopt if no write precedes a read).
std::optional<int64_t> TraceFrontierShift(const std::vector<TraceStep>& trace);
struct DestroyedRead {
  int64_t step = 0;      // the step whose read found foreign data
  int64_t segment = 0;   // the input segment it wanted
  int64_t address = 0;   // pool address (0 = the output's first segment)
  int64_t writer_step = -1;  // step that overwrote it (-1: never held the input, e.g. wrapped)
};
// Simulates the trace with the output at pool address 0 and the input at `shift`, in a linear pool
// (pool_segments == 0) or a circular pool of pool_segments segments (addresses taken modulo). Returns
// the first read that does not find its input segment, or nullopt when every read is intact. Also
// reports (as a DestroyedRead with segment = -1 - o) an output segment o that is not intact at the
// end.
std::optional<DestroyedRead> SimulateTrace(const std::vector<TraceStep>& trace, int64_t shift,
                                           int64_t in_segments, int64_t out_segments,
                                           int64_t pool_segments = 0);

// ---------------------------------------------------------------------------------------------
// Circular segment pool for a chain of segment-aware kernels (linear network, or fused groups).
struct ChainLayer {
  std::string name;
  int64_t segment_bytes = 1;  // this kernel's segment size
  int64_t in_bytes = 0;       // must equal the previous layer's out_bytes
  int64_t out_bytes = 0;
  int64_t shift = 0;          // b_In - b_Out in this kernel's segments (>= 0, e.g. MinimalSafeShift)
};
struct CircularPoolPlan {
  int64_t pool_bytes = 0;
  // tensor_offsets[0] = chain input offset; tensor_offsets[k + 1] = output of layer k; bytes in
  // [0, pool_bytes).
  std::vector<int64_t> tensor_offsets;
  std::vector<int64_t> layer_footprint_bytes;  // per layer: FootprintBytes(shift, seg, in, out)
};
// Rule: layer k's output starts shift_k * seg_k bytes before its input, modulo the pool size:
//   offset[k+1] = (offset[k] - shift_k * seg_k) mod pool_bytes,
// and the next layer reads its input where it was written. While layer k runs only its input and
// output are live, and they span max(shift_k * seg_k + in_k, out_k) bytes starting at offset[k+1];
// the linear analysis holds in the circular pool when that span does not wrap onto itself, so the
// minimal pool is the maximum span over the layers. Kernels address the pool byte-wise modulo
// pool_bytes: a segment may straddle the end of the pool when segment sizes differ between layers
// or a tensor is not a whole number of segments (with one segment size dividing every tensor, all
// offsets and the pool size are multiples of it). InvalidArgument for an empty chain, mismatched
// tensor sizes, or negative shifts.
StatusOr<CircularPoolPlan> PlanCircularPool(const std::vector<ChainLayer>& layers,
                                            int64_t input_offset = 0);

}  // namespace sramplan::segment
