// vMCU segment-level overlap analysis with ISL. See overlap.h for the model.
//
// Derivation of the constraint (refinement of the paper's Eq. 1). With b_Out = 0 and b_In = D, a
// write of output segment o at step j lands on pool address o, a read of input segment x at step i
// looks at address D + x. The paper requires, for all j <= i (lexicographic),
// D + x(i) >= o(j): every write lies at or below every later-or-same read, so the output "frontier"
// never overtakes the input still to be read. Taken literally, ">=" allows a write at step j < i to
// the very address that step i reads afterwards, which destroys that input segment; and for j == i
// the write happens after the step's reads (read then write), so no constraint is needed there. We
// therefore impose, for all j <lex i:  D + x(i) > o(j), i.e.
//     D >= max_{j <lex i, o in W(j), x in R(i)} (o - x) + 1,
// and compute that maximum with ISL over the integer set of (write, read) pairs. At D - 1 the
// maximising pair writes exactly the address that is read later (a real destroyed read), so the
// bound is tight. For GEMM (store after the reduction) the result equals the paper's closed form.
#include "segment/overlap.h"

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <sstream>
#include <utility>

#include "support/int_math.h"

namespace sramplan::segment {
namespace {

// ---- minimal RAII for the ISL objects used here --------------------------------------------------
struct IslFree {
  void operator()(isl_ctx* p) const { isl_ctx_free(p); }
  void operator()(isl_set* p) const { isl_set_free(p); }
  void operator()(isl_map* p) const { isl_map_free(p); }
  void operator()(isl_union_set* p) const { isl_union_set_free(p); }
  void operator()(isl_union_map* p) const { isl_union_map_free(p); }
  void operator()(isl_aff* p) const { isl_aff_free(p); }
  void operator()(isl_val* p) const { isl_val_free(p); }
};
template <typename T>
using Isl = std::unique_ptr<T, IslFree>;

std::string IslError(isl_ctx* ctx) {
  const char* msg = isl_ctx_last_error_msg(ctx);
  std::string s = msg != nullptr ? msg : "unknown ISL error";
  isl_ctx_reset_error(ctx);
  return s;
}

Status KernelError(const AffineKernel& k, const std::string& what) {
  return InvalidArgument("segment kernel '" + k.name + "': " + what);
}

// Collects the maps of a union map into one isl_map with anonymous tuples on both sides (all pieces
// must have the same dimensions).
struct FlattenState {
  isl_map* acc = nullptr;
  isl_size in_dims = -1;
  isl_size out_dims = -1;
  bool check_in_dims = true;  // false for schedules: statements may have different depths
  bool mismatch = false;
  bool parametric = false;
};

isl_stat FlattenOne(isl_map* map, void* user) {
  auto* st = static_cast<FlattenState*>(user);
  if (isl_map_dim(map, isl_dim_param) > 0) st->parametric = true;
  const isl_size in = isl_map_dim(map, isl_dim_in);
  const isl_size out = isl_map_dim(map, isl_dim_out);
  if (st->in_dims < 0) {
    st->in_dims = in;
    st->out_dims = out;
  } else if ((st->check_in_dims && in != st->in_dims) || out != st->out_dims) {
    st->mismatch = true;
    isl_map_free(map);
    return isl_stat_ok;
  }
  if (!st->check_in_dims) {  // dimension check only; pieces of different depths cannot be united
    isl_map_free(map);
    return isl_stat_ok;
  }
  map = isl_map_reset_tuple_id(map, isl_dim_in);
  map = isl_map_reset_tuple_id(map, isl_dim_out);
  st->acc = st->acc == nullptr ? map : isl_map_union(st->acc, map);
  return isl_stat_ok;
}

// Returns nullptr map for an empty union map.
StatusOr<Isl<isl_map>> Flatten(const AffineKernel& k, isl_union_map* umap, const std::string& what,
                               isl_size want_out_dims) {
  FlattenState st;
  isl_union_map_foreach_map(umap, &FlattenOne, &st);
  Isl<isl_map> result(st.acc);
  if (st.parametric) return KernelError(k, what + ": parametric sets are not supported");
  if (st.mismatch) {
    return KernelError(k, what + ": all pieces must have the same dimensions (the schedule must map "
                              "every statement into one time space)");
  }
  if (result != nullptr && want_out_dims >= 0 && st.out_dims != want_out_dims) {
    return KernelError(k, what + ": the segment index must be 1-dimensional");
  }
  return result;
}

struct BoundedState {
  bool all_bounded = true;
};
isl_stat CheckBounded(isl_set* set, void* user) {
  auto* st = static_cast<BoundedState*>(user);
  if (isl_set_is_bounded(set) != isl_bool_true) st->all_bounded = false;
  isl_set_free(set);
  return isl_stat_ok;
}

// Checks that the accessed segment indices lie in [0, segments).
Status CheckRange(const AffineKernel& k, isl_map* access, int64_t segments, const char* tensor) {
  if (access == nullptr) return Status::Ok();
  Isl<isl_set> range(isl_map_range(isl_map_copy(access)));
  if (isl_set_is_empty(range.get()) == isl_bool_true) return Status::Ok();
  Isl<isl_val> lo(isl_set_dim_min_val(isl_set_copy(range.get()), 0));
  Isl<isl_val> hi(isl_set_dim_max_val(isl_set_copy(range.get()), 0));
  if (lo == nullptr || hi == nullptr || isl_val_is_int(lo.get()) != isl_bool_true ||
      isl_val_is_int(hi.get()) != isl_bool_true) {
    return KernelError(k, std::string("the accesses of ") + tensor + " are unbounded");
  }
  const int64_t l = isl_val_get_num_si(lo.get());
  const int64_t h = isl_val_get_num_si(hi.get());
  if (l < 0 || h >= segments) {
    return KernelError(k, std::string("accesses of ") + tensor + " reach segments [" +
                              std::to_string(l) + ", " + std::to_string(h) + "] outside [0, " +
                              std::to_string(segments) + "); check the access maps or the size");
  }
  return Status::Ok();
}

void FillFootprint(const AffineKernel& k, ShiftAnalysis& result) {
  result.footprint_segments = SegmentFootprint(result.shift, k.in_segments, k.out_segments);
  result.footprint_bytes =
      FootprintBytes(result.shift, k.segment_bytes,
                     k.in_bytes > 0 ? k.in_bytes : k.in_segments * k.segment_bytes,
                     k.out_bytes > 0 ? k.out_bytes : k.out_segments * k.segment_bytes);
}

StatusOr<ShiftAnalysis> AnalyzeWithContext(isl_ctx* ctx, const AffineKernel& k) {
  if (k.in_segments <= 0 || k.out_segments <= 0 || k.segment_bytes <= 0 ||
      k.in_segments > kMaxBytes || k.out_segments > kMaxBytes || k.segment_bytes > kMaxBytes ||
      k.in_bytes < 0 || k.out_bytes < 0 || k.in_bytes > kMaxBytes || k.out_bytes > kMaxBytes) {
    return KernelError(k, "in_segments, out_segments and segment_bytes must be positive");
  }
  Isl<isl_union_set> dom(isl_union_set_read_from_str(ctx, k.domain.c_str()));
  if (dom == nullptr) return KernelError(k, "cannot parse the domain: " + IslError(ctx));
  Isl<isl_union_map> reads(isl_union_map_read_from_str(ctx, k.reads.c_str()));
  if (reads == nullptr) return KernelError(k, "cannot parse the reads: " + IslError(ctx));
  Isl<isl_union_map> writes(isl_union_map_read_from_str(ctx, k.writes.c_str()));
  if (writes == nullptr) return KernelError(k, "cannot parse the writes: " + IslError(ctx));

  {
    isl_space* space = isl_union_set_get_space(dom.get());
    const isl_size params = isl_space_dim(space, isl_dim_param);
    isl_space_free(space);
    if (params != 0) {
      return KernelError(k, "parametric domains are not supported; write the sizes as numbers");
    }
  }
  BoundedState bounded;
  isl_union_set_foreach_set(dom.get(), &CheckBounded, &bounded);
  if (!bounded.all_bounded) return KernelError(k, "the iteration domain must be bounded");

  Isl<isl_union_map> sched;
  if (k.schedule.empty()) {
    if (isl_union_set_n_set(dom.get()) != 1) {
      return KernelError(k, "a schedule is required when the domain has several statements");
    }
    sched.reset(isl_union_set_identity(isl_union_set_copy(dom.get())));
  } else {
    sched.reset(isl_union_map_read_from_str(ctx, k.schedule.c_str()));
    if (sched == nullptr) return KernelError(k, "cannot parse the schedule: " + IslError(ctx));
    sched.reset(isl_union_map_intersect_domain(sched.release(), isl_union_set_copy(dom.get())));
    Isl<isl_union_set> scheduled(isl_union_map_domain(isl_union_map_copy(sched.get())));
    if (isl_union_set_is_subset(dom.get(), scheduled.get()) != isl_bool_true) {
      return KernelError(k, "the schedule does not cover every statement instance");
    }
    if (isl_union_map_is_single_valued(sched.get()) != isl_bool_true) {
      return KernelError(k, "the schedule must give each instance exactly one time vector");
    }
    // Checks that every statement maps into the same time space (only the time dimensions are
    // compared: statements may have different depths).
    FlattenState st;
    st.check_in_dims = false;
    isl_union_map_foreach_map(sched.get(), &FlattenOne, &st);
    if (st.parametric) return KernelError(k, "the schedule: parametric maps are not supported");
    if (st.mismatch) {
      return KernelError(k, "the schedule must map every statement into one time space");
    }
  }
  reads.reset(isl_union_map_intersect_domain(reads.release(), isl_union_set_copy(dom.get())));
  writes.reset(isl_union_map_intersect_domain(writes.release(), isl_union_set_copy(dom.get())));

  // Time -> segment relations.
  Isl<isl_union_map> time_reads(isl_union_map_apply_range(
      isl_union_map_reverse(isl_union_map_copy(sched.get())), isl_union_map_copy(reads.get())));
  Isl<isl_union_map> time_writes(isl_union_map_apply_range(
      isl_union_map_reverse(isl_union_map_copy(sched.get())), isl_union_map_copy(writes.get())));
  if (time_reads == nullptr || time_writes == nullptr) {
    return InternalError("segment kernel '" + k.name + "': ISL failed: " + IslError(ctx));
  }
  SP_ASSIGN_OR_RETURN(Isl<isl_map> tr, Flatten(k, time_reads.get(), "reads", 1));
  SP_ASSIGN_OR_RETURN(Isl<isl_map> tw, Flatten(k, time_writes.get(), "writes", 1));
  SP_RETURN_IF_ERROR(CheckRange(k, tr.get(), k.in_segments, "the input"));
  SP_RETURN_IF_ERROR(CheckRange(k, tw.get(), k.out_segments, "the output"));

  ShiftAnalysis result;
  if (tr != nullptr && tw != nullptr) {
    const isl_size tdims = isl_map_dim(tr.get(), isl_dim_in);
    if (tdims != isl_map_dim(tw.get(), isl_dim_in)) {
      return KernelError(k, "reads and writes are scheduled into different time spaces");
    }
    // { [o] -> [x] : exists tw <lex tr with (tw -> o) a write and (tr -> x) a read }.
    Isl<isl_map> lex_lt(isl_map_lex_lt(isl_space_set_alloc(ctx, 0, tdims)));
    Isl<isl_map> pairs(isl_map_apply_range(
        isl_map_apply_range(isl_map_reverse(tw.release()), lex_lt.release()), tr.release()));
    Isl<isl_set> flat(isl_set_flatten(isl_map_wrap(pairs.release())));
    Isl<isl_aff> obj(isl_aff_read_from_str(ctx, "{ [o, x] -> [(o - x)] }"));
    if (flat == nullptr || obj == nullptr) {
      return InternalError("segment kernel '" + k.name + "': ISL failed: " + IslError(ctx));
    }
    const isl_bool empty = isl_set_is_empty(flat.get());
    if (empty == isl_bool_error) {
      return InternalError("segment kernel '" + k.name + "': ISL failed: " + IslError(ctx));
    }
    if (empty == isl_bool_true) {  // no write precedes any read: any shift is safe
      FillFootprint(k, result);
      return result;
    }
    Isl<isl_val> max(isl_set_max_val(flat.get(), obj.get()));
    if (max == nullptr || isl_val_is_nan(max.get()) == isl_bool_true) {
      return InternalError("segment kernel '" + k.name + "': ISL optimisation failed: " +
                           IslError(ctx));
    }
    if (isl_val_is_infty(max.get()) == isl_bool_true) {
      return KernelError(k, "the overlap is unbounded");
    }
    if (isl_val_is_int(max.get()) == isl_bool_true) {
      result.unclamped_shift = isl_val_get_num_si(max.get()) + 1;
    }
    // -infinity: no write precedes any read; any shift is safe.
  }
  result.shift = std::max<int64_t>(0, result.unclamped_shift.value_or(0));
  FillFootprint(k, result);
  return result;
}

// ---- ISL text helpers for the builders ----------------------------------------------------------

// Constraints stating that segment `var` (of `seg` bytes) overlaps the byte range
// [lo, lo + len) where lo is an affine expression in ISL syntax and len > 0 is a constant; `cap` (if
// not empty) is an additional exclusive upper bound expression on the bytes.
std::string SegmentsOverlapping(const std::string& var, int64_t seg, const std::string& lo,
                                int64_t len, const std::string& cap = "") {
  std::ostringstream os;
  os << seg << "*" << var << " + " << (seg - 1) << " >= " << lo << " and " << seg << "*" << var
     << " <= " << lo << " + " << (len - 1);
  if (!cap.empty()) os << " and " << seg << "*" << var << " <= " << cap << " - 1";
  return os.str();
}

int64_t DefaultSeg(int64_t a, int64_t b, int64_t requested) {
  return requested > 0 ? requested : std::min(a, b);
}

bool Positive(std::initializer_list<int64_t> v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x > 0; });
}

// Caps sizes so every product in the ISL text stays far from overflow.
constexpr int64_t kMaxDim = int64_t{1} << 20;
bool Reasonable(std::initializer_list<int64_t> v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x <= kMaxDim; });
}

}  // namespace

StatusOr<ShiftAnalysis> AnalyzeShift(const AffineKernel& kernel) {
  Isl<isl_ctx> ctx(isl_ctx_alloc());
  if (ctx == nullptr) return InternalError("cannot allocate an ISL context");
  isl_options_set_on_error(ctx.get(), ISL_ON_ERROR_CONTINUE);
  // Every ISL object is released inside AnalyzeWithContext, before the context.
  return AnalyzeWithContext(ctx.get(), kernel);
}

StatusOr<int64_t> MinimalSafeShift(const AffineKernel& kernel) {
  SP_ASSIGN_OR_RETURN(ShiftAnalysis a, AnalyzeShift(kernel));
  return a.shift;
}

int64_t SegmentFootprint(int64_t shift, int64_t in_segments, int64_t out_segments) {
  return std::max(shift + in_segments, out_segments);
}

int64_t FootprintBytes(int64_t shift, int64_t segment_bytes, int64_t in_bytes, int64_t out_bytes) {
  return std::max(shift * segment_bytes + in_bytes, out_bytes);
}

// ---- builders -----------------------------------------------------------------------------------

StatusOr<AffineKernel> GemmKernel(int64_t m, int64_t k, int64_t n) {
  SP_ASSIGN_OR_RETURN(AffineKernel kernel, FullyConnectedKernel(m, k, n, 1));
  kernel.name = "gemm_M" + std::to_string(m) + "_K" + std::to_string(k) + "_N" + std::to_string(n);
  return kernel;
}

StatusOr<AffineKernel> FullyConnectedKernel(int64_t m, int64_t in_bytes, int64_t out_bytes,
                                            int64_t segment_bytes) {
  const int64_t seg = DefaultSeg(in_bytes, out_bytes, segment_bytes);
  AffineKernel k;
  k.name = "fc_M" + std::to_string(m) + "_in" + std::to_string(in_bytes) + "_out" +
           std::to_string(out_bytes);
  if (!Positive({m, in_bytes, out_bytes, seg}) || !Reasonable({m, in_bytes, out_bytes, seg}) ||
      !CheckedMul(m, std::max(in_bytes, out_bytes)).has_value() ||
      m * std::max(in_bytes, out_bytes) > kMaxBytes) {
    return KernelError(k, "sizes must be positive and reasonable (M, in, out, segment bytes)");
  }
  const int64_t kc = CeilDiv(in_bytes, seg);
  const int64_t nc = CeilDiv(out_bytes, seg);
  std::ostringstream d, r, w, lo_in, lo_out, cap_in, cap_out;
  d << "{ S[m, n, k] : 0 <= m < " << m << " and 0 <= n < " << nc << " and 0 <= k < " << kc << " }";
  lo_in << in_bytes << "*m + " << seg << "*k";
  cap_in << in_bytes << "*m + " << in_bytes;
  lo_out << out_bytes << "*m + " << seg << "*n";
  cap_out << out_bytes << "*m + " << out_bytes;
  r << "{ S[m, n, k] -> In[x] : " << SegmentsOverlapping("x", seg, lo_in.str(), seg, cap_in.str())
    << " }";
  w << "{ S[m, n, k] -> Out[o] : k = " << (kc - 1) << " and "
    << SegmentsOverlapping("o", seg, lo_out.str(), seg, cap_out.str()) << " }";
  k.domain = d.str();
  k.reads = r.str();
  k.writes = w.str();
  k.in_bytes = m * in_bytes;
  k.out_bytes = m * out_bytes;
  k.in_segments = CeilDiv(k.in_bytes, seg);
  k.out_segments = CeilDiv(k.out_bytes, seg);
  k.segment_bytes = seg;
  k.loop_order =
      "for m < M; for n < ceil(out/seg); for k < ceil(in/seg): read input chunk (m,k); "
      "if k == last: write output chunk (m,n)";
  return k;
}

StatusOr<AffineKernel> PointwiseConvKernel(int64_t h, int64_t w, int64_t c_in, int64_t c_out,
                                           int64_t segment_bytes) {
  const int64_t seg = DefaultSeg(c_in, c_out, segment_bytes);
  AffineKernel k;
  k.name = "pointwise_" + std::to_string(h) + "x" + std::to_string(w) + "_" + std::to_string(c_in) +
           "to" + std::to_string(c_out);
  if (!Positive({h, w, c_in, c_out, seg}) || !Reasonable({h, w, c_in, c_out, seg}) ||
      h * w * std::max(c_in, c_out) > kMaxBytes) {
    return KernelError(k, "sizes must be positive and reasonable (H, W, C_in, C_out, segment)");
  }
  std::ostringstream d, r, wr, lo_in, lo_out;
  d << "{ S[h, w] : 0 <= h < " << h << " and 0 <= w < " << w << " }";
  lo_in << (c_in * w) << "*h + " << c_in << "*w";
  lo_out << (c_out * w) << "*h + " << c_out << "*w";
  r << "{ S[h, w] -> In[x] : " << SegmentsOverlapping("x", seg, lo_in.str(), c_in) << " }";
  wr << "{ S[h, w] -> Out[o] : " << SegmentsOverlapping("o", seg, lo_out.str(), c_out) << " }";
  k.domain = d.str();
  k.reads = r.str();
  k.writes = wr.str();
  k.in_bytes = h * w * c_in;
  k.out_bytes = h * w * c_out;
  k.in_segments = CeilDiv(k.in_bytes, seg);
  k.out_segments = CeilDiv(k.out_bytes, seg);
  k.segment_bytes = seg;
  k.loop_order = "for h < H; for w < W: read input pixel (h,w) [all C_in bytes]; then write output "
                 "pixel (h,w) [all C_out bytes]";
  return k;
}

StatusOr<AffineKernel> Conv2DKernel(const Conv2DParams& p) {
  const int64_t seg = DefaultSeg(p.c_in, p.c_out, p.segment_bytes);
  AffineKernel k;
  k.name = "conv2d_" + std::to_string(p.r) + "x" + std::to_string(p.s) + "_s" +
           std::to_string(p.stride_h) + "_p" + std::to_string(p.pad_top);
  if (!Positive({p.h, p.w, p.c_in, p.c_out, p.r, p.s, p.stride_h, p.stride_w, seg}) ||
      !Reasonable({p.h, p.w, p.c_in, p.c_out, p.r, p.s, p.stride_h, p.stride_w, seg}) ||
      p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 || p.pad_right < 0 ||
      p.pad_top >= p.r || p.pad_bottom >= p.r || p.pad_left >= p.s || p.pad_right >= p.s ||
      p.h * p.w * std::max(p.c_in, p.c_out) > kMaxBytes) {
    return KernelError(k, "sizes must be positive, paddings in [0, kernel size)");
  }
  const int64_t hp = p.h + p.pad_top + p.pad_bottom - p.r;
  const int64_t wp = p.w + p.pad_left + p.pad_right - p.s;
  if (hp < 0 || wp < 0) return KernelError(k, "the kernel is larger than the padded image");
  const int64_t out_h = hp / p.stride_h + 1;
  const int64_t out_w = wp / p.stride_w + 1;
  std::ostringstream d, r, wr, lo_out;
  d << "{ S[p, q] : 0 <= p < " << out_h << " and 0 <= q < " << out_w << " }";
  r << "{ S[p, q] -> In[x] : exists (r, s, hi, wi : 0 <= r < " << p.r << " and 0 <= s < " << p.s
    << " and hi = " << p.stride_h << "*p - " << p.pad_top << " + r and wi = " << p.stride_w
    << "*q - " << p.pad_left << " + s and 0 <= hi < " << p.h << " and 0 <= wi < " << p.w << " and "
    << SegmentsOverlapping("x", seg,
                           std::to_string(p.c_in * p.w) + "*hi + " + std::to_string(p.c_in) + "*wi",
                           p.c_in)
    << ") }";
  lo_out << (p.c_out * out_w) << "*p + " << p.c_out << "*q";
  wr << "{ S[p, q] -> Out[o] : " << SegmentsOverlapping("o", seg, lo_out.str(), p.c_out) << " }";
  k.domain = d.str();
  k.reads = r.str();
  k.writes = wr.str();
  k.in_bytes = p.h * p.w * p.c_in;
  k.out_bytes = out_h * out_w * p.c_out;
  k.in_segments = CeilDiv(k.in_bytes, seg);
  k.out_segments = CeilDiv(k.out_bytes, seg);
  k.segment_bytes = seg;
  k.loop_order = "for p < P; for q < Q: read every in-image input pixel of the RxS window at "
                 "(p*stride_h - pad_top, q*stride_w - pad_left); then write output pixel (p,q)";
  return k;
}

StatusOr<AffineKernel> Conv2DKernel(int64_t h, int64_t w, int64_t c_in, int64_t c_out, int64_t r,
                                    int64_t s, int64_t stride, int64_t pad,
                                    int64_t segment_bytes) {
  Conv2DParams p;
  p.h = h;
  p.w = w;
  p.c_in = c_in;
  p.c_out = c_out;
  p.r = r;
  p.s = s;
  p.stride_h = p.stride_w = stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
  p.segment_bytes = segment_bytes;
  return Conv2DKernel(p);
}

StatusOr<AffineKernel> DepthwiseConvKernel(int64_t h, int64_t w, int64_t c, int64_t r, int64_t s,
                                           int64_t stride, int64_t pad, int64_t segment_bytes) {
  SP_ASSIGN_OR_RETURN(AffineKernel k, Conv2DKernel(h, w, c, c, r, s, stride, pad, segment_bytes));
  k.name = "depthwise_" + std::to_string(r) + "x" + std::to_string(s) + "_s" +
           std::to_string(stride) + "_p" + std::to_string(pad);
  return k;
}

StatusOr<AffineKernel> InvertedBottleneckKernel(const BottleneckParams& b) {
  const int64_t seg = DefaultSeg(b.c_in, b.c_out, b.segment_bytes);
  AffineKernel k;
  k.name = "bottleneck_" + std::to_string(b.h) + "x" + std::to_string(b.w) + "_" +
           std::to_string(b.c_in) + "_" + std::to_string(b.c_mid) + "_" + std::to_string(b.c_out) +
           "_k" + std::to_string(b.r);
  if (!Positive({b.h, b.w, b.c_in, b.c_mid, b.c_out, b.r, b.s, b.stride1, b.stride2, b.stride3,
                 seg, b.er, b.es}) ||
      std::min({b.e_pad_top, b.e_pad_left, b.e_pad_bottom, b.e_pad_right}) < 0 ||
      b.e_pad_top >= b.er || b.e_pad_bottom >= b.er || b.e_pad_left >= b.es ||
      b.e_pad_right >= b.es || b.h + b.e_pad_top + b.e_pad_bottom < b.er ||
      b.w + b.e_pad_left + b.e_pad_right < b.es ||
      !Reasonable({b.h, b.w, b.c_in, b.c_mid, b.c_out, b.r, b.s, b.stride1, b.stride2, b.stride3,
                   seg}) ||
      b.h * b.w * std::max({b.c_in, b.c_mid, b.c_out}) > kMaxBytes) {
    return KernelError(k, "sizes and strides must be positive");
  }
  const int64_t pr = b.pad_top < 0 ? (b.r - 1) / 2 : b.pad_top;
  const int64_t ps = b.pad_left < 0 ? (b.s - 1) / 2 : b.pad_left;
  const int64_t pb = b.pad_bottom < 0 ? (b.r - 1) / 2 : b.pad_bottom;
  const int64_t pe = b.pad_right < 0 ? (b.s - 1) / 2 : b.pad_right;
  if (pr >= b.r || pb >= b.r || ps >= b.s || pe >= b.s) {
    return KernelError(k, "the depthwise padding must be smaller than its kernel");
  }
  if (pr != (b.r - 1) / 2 || ps != (b.s - 1) / 2 || pb != (b.r - 1) / 2 || pe != (b.s - 1) / 2)
    k.name += "_p" + std::to_string(pr) + std::to_string(ps) + std::to_string(pb) + std::to_string(pe);
  const int64_t h1 = (b.h + b.e_pad_top + b.e_pad_bottom - b.er) / b.stride1 + 1;
  const int64_t w1 = (b.w + b.e_pad_left + b.e_pad_right - b.es) / b.stride1 + 1;
  const bool pointwise = b.er == 1 && b.es == 1 && b.e_pad_top == 0 && b.e_pad_left == 0 &&
                         b.e_pad_bottom == 0 && b.e_pad_right == 0;
  if (h1 + pr + pb < b.r || w1 + ps + pe < b.s) {
    return KernelError(k, "the depthwise kernel is larger than its padded input; do not fuse");
  }
  const int64_t h2 = (h1 + pr + pb - b.r) / b.stride2 + 1, w2 = (w1 + ps + pe - b.s) / b.stride2 + 1;
  const int64_t h3 = CeilDiv(h2, b.stride3), w3 = CeilDiv(w2, b.stride3);
  if (b.residual && (!pointwise || b.stride1 != 1 || b.stride2 != 1 || b.stride3 != 1 || b.c_in != b.c_out ||
                     h3 != b.h || w3 != b.w)) {
    return KernelError(k, "a residual needs strides 1, c_in == c_out and an output as "
                          "large as the input (odd depthwise kernel)");
  }
  const int64_t step = b.stride3 * b.stride2;  // B-row stride per output row
  std::ostringstream d, sc, r, wr, lo_a, lo_e;
  const std::string out_box = "0 <= p < " + std::to_string(h3) + " and 0 <= q < " +
                              std::to_string(w3);
  // S1[p, q, r, s, a, b]: expansion tap (a, b) of the window tap (r, s); all taps of one (r, s)
  // share a time vector (one step).
  const std::string hi = std::to_string(b.stride1) + "*(" + std::to_string(step) + "*p - " +
                         std::to_string(pr) + " + r) - " + std::to_string(b.e_pad_top) + " + a";
  const std::string wi = std::to_string(b.stride1) + "*(" + std::to_string(step) + "*q - " +
                         std::to_string(ps) + " + s) - " + std::to_string(b.e_pad_left) + " + b";
  d << "{ S1[p, q, r, s, a, b] : " << out_box << " and 0 <= r < " << b.r << " and 0 <= s < " << b.s
    << " and 0 <= " << step << "*p - " << pr << " + r < " << h1 << " and 0 <= " << step << "*q - "
    << ps << " + s < " << w1 << " and 0 <= a < " << b.er << " and 0 <= b < " << b.es << " and 0 <= "
    << hi << " < " << b.h << " and 0 <= " << wi << " < " << b.w << "; S2[p, q] : " << out_box
    << "; S3[p, q] : " << out_box << "; S4[p, q] : " << out_box << " }";
  sc << "{ S1[p, q, r, s, a, b] -> [p, q, 0, r, s]; S2[p, q] -> [p, q, 1, 0, 0]; "
        "S3[p, q] -> [p, q, 2, 0, 0]; S4[p, q] -> [p, q, 3, 0, 0] }";
  r << "{ S1[p, q, r, s, a, b] -> A[x] : exists (hi, wi : hi = " << hi << " and wi = " << wi
    << " and "
    << SegmentsOverlapping("x", seg,
                           std::to_string(b.c_in * b.w) + "*hi + " + std::to_string(b.c_in) + "*wi",
                           b.c_in)
    << ")";
  if (b.residual) {
    lo_a << (b.c_in * b.w) << "*p + " << b.c_in << "*q";
    r << "; S4[p, q] -> A[x] : " << SegmentsOverlapping("x", seg, lo_a.str(), b.c_in);
  }
  r << " }";
  lo_e << (b.c_out * w3) << "*p + " << b.c_out << "*q";
  wr << "{ S4[p, q] -> E[o] : " << SegmentsOverlapping("o", seg, lo_e.str(), b.c_out) << " }";
  k.domain = d.str();
  k.schedule = sc.str();
  k.reads = r.str();
  k.writes = wr.str();
  k.in_bytes = b.h * b.w * b.c_in;
  k.out_bytes = h3 * w3 * b.c_out;
  k.in_segments = CeilDiv(k.in_bytes, seg);
  k.out_segments = CeilDiv(k.out_bytes, seg);
  k.segment_bytes = seg;
  k.workspace_bytes = b.r * b.s * b.c_mid + b.c_mid + (b.residual ? b.c_out : 0);
  k.loop_order = "for p < H3; for q < W3: [S1] for r < R, s < S: read A pixel of window tap (r,s) "
                 "(if inside), pw1 into workspace; [S2] dw; [S3] pw2; [S4] read A(p,q) if "
                 "residual; write E(p,q)";
  return k;
}

// ---- closed forms -------------------------------------------------------------------------------

int64_t GemmShiftClosedForm(int64_t m, int64_t k, int64_t n) {
  return std::max<int64_t>(0, (m - 1) * (n - k)) + n - 1;
}

int64_t GemmFootprintClosedForm(int64_t m, int64_t k, int64_t n) {
  return std::max(m * n, m * k) + std::min(n, k) - 1;
}

int64_t PointwiseShiftClosedForm(int64_t pixels, int64_t k_segs, int64_t n_segs) {
  return std::max<int64_t>(0, (pixels - 1) * (n_segs - k_segs));
}

// ---- brute-force reference ----------------------------------------------------------------------

std::optional<int64_t> TraceFrontierShift(const std::vector<TraceStep>& trace) {
  std::optional<int64_t> best;
  std::optional<int64_t> max_write_before;  // max output segment written by steps < i
  for (const TraceStep& step : trace) {
    if (max_write_before.has_value() && !step.reads.empty()) {
      const int64_t min_read = *std::min_element(step.reads.begin(), step.reads.end());
      const int64_t v = *max_write_before - min_read + 1;
      best = best.has_value() ? std::max(*best, v) : v;
    }
    if (!step.writes.empty()) {
      const int64_t mw = *std::max_element(step.writes.begin(), step.writes.end());
      max_write_before = max_write_before.has_value() ? std::max(*max_write_before, mw) : mw;
    }
  }
  return best;
}

std::optional<DestroyedRead> SimulateTrace(const std::vector<TraceStep>& trace, int64_t shift,
                                           int64_t in_segments, int64_t out_segments,
                                           int64_t pool_segments) {
  constexpr int64_t kEmpty = std::numeric_limits<int64_t>::min();
  // Linear pool: addresses from min(0, shift) to max(out, shift + in); circular: [0, pool).
  const int64_t base = pool_segments > 0 ? 0 : -std::min<int64_t>(0, shift);
  const int64_t size =
      pool_segments > 0 ? pool_segments : base + std::max(out_segments, shift + in_segments);
  auto phys = [&](int64_t addr) {
    return pool_segments > 0 ? ((addr % pool_segments) + pool_segments) % pool_segments
                             : addr + base;
  };
  std::vector<int64_t> tag(size, kEmpty);
  std::vector<int64_t> writer(size, -1);
  for (int64_t x = 0; x < in_segments; ++x) tag[phys(shift + x)] = x;  // later x wins on wrap
  for (int64_t i = 0; i < static_cast<int64_t>(trace.size()); ++i) {
    for (int64_t x : trace[i].reads) {
      SP_CHECK(x >= 0 && x < in_segments);
      const int64_t a = phys(shift + x);
      if (tag[a] != x) return DestroyedRead{i, x, a, writer[a]};
    }
    for (int64_t o : trace[i].writes) {
      SP_CHECK(o >= 0 && o < out_segments);
      tag[phys(o)] = -1 - o;
      writer[phys(o)] = i;
    }
  }
  for (int64_t o = 0; o < out_segments; ++o) {
    const int64_t a = phys(o);
    if (tag[a] != -1 - o) {
      return DestroyedRead{static_cast<int64_t>(trace.size()), -1 - o, a, writer[a]};
    }
  }
  return std::nullopt;
}

// ---- circular pool ------------------------------------------------------------------------------

StatusOr<CircularPoolPlan> PlanCircularPool(const std::vector<ChainLayer>& layers,
                                            int64_t input_offset) {
  if (layers.empty()) return InvalidArgument("circular pool: the chain has no layers");
  CircularPoolPlan plan;
  for (size_t i = 0; i < layers.size(); ++i) {
    const ChainLayer& l = layers[i];
    const std::string who = "circular pool: layer " + std::to_string(i) + " '" + l.name + "'";
    if (l.segment_bytes <= 0 || l.in_bytes <= 0 || l.out_bytes <= 0 || l.in_bytes > kMaxBytes ||
        l.out_bytes > kMaxBytes || l.segment_bytes > kMaxBytes) {
      return InvalidArgument(who + ": segment, input and output bytes must be positive");
    }
    if (l.shift < 0 || l.shift > kMaxBytes / l.segment_bytes) {
      return InvalidArgument(who + ": the shift must be >= 0 (use MinimalSafeShift)");
    }
    if (i > 0 && l.in_bytes != layers[i - 1].out_bytes) {
      return InvalidArgument(who + ": input is " + std::to_string(l.in_bytes) +
                             " bytes but the previous layer writes " +
                             std::to_string(layers[i - 1].out_bytes));
    }
    const int64_t span = FootprintBytes(l.shift, l.segment_bytes, l.in_bytes, l.out_bytes);
    plan.layer_footprint_bytes.push_back(span);
    plan.pool_bytes = std::max(plan.pool_bytes, span);
  }
  const int64_t pool = plan.pool_bytes;
  auto mod = [pool](int64_t v) { return ((v % pool) + pool) % pool; };
  plan.tensor_offsets.push_back(mod(input_offset));
  for (const ChainLayer& l : layers) {
    plan.tensor_offsets.push_back(mod(plan.tensor_offsets.back() - l.shift * l.segment_bytes));
  }
  return plan;
}

}  // namespace sramplan::segment
