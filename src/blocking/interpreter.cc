#include "blocking/interpreter.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>

namespace sramplan::blocking {

namespace {

using Coord = std::array<int64_t, 4>;

int D(Dim d) { return static_cast<int>(d); }

// The 4-d coordinates of operand t's element (or tile origin) for per-dimension positions g and
// its extent for block sizes b.
Coord Coords(const Layer& l, Operand t, const Extents& g) {
  if (t == Operand::kInput && l.kind == LayerKind::kLrn)
    return {g[D(Dim::kN)], g[D(Dim::kK)] + g[D(Dim::kC)], g[D(Dim::kY)], g[D(Dim::kX)]};
  if (t == Operand::kInput && !l.HasKernel())
    return {g[D(Dim::kN)], g[D(Dim::kK)], g[D(Dim::kY)] * l.stride_y + g[D(Dim::kFh)],
            g[D(Dim::kX)] * l.stride_x + g[D(Dim::kFw)]};
  switch (t) {
    case Operand::kInput:
      return {g[D(Dim::kN)], g[D(Dim::kC)], g[D(Dim::kY)] * l.stride_y + g[D(Dim::kFh)],
              g[D(Dim::kX)] * l.stride_x + g[D(Dim::kFw)]};
    case Operand::kKernel:
      return {g[D(Dim::kK)], g[D(Dim::kC)], g[D(Dim::kFh)], g[D(Dim::kFw)]};
    case Operand::kOutput:
      return {g[D(Dim::kN)], g[D(Dim::kK)], g[D(Dim::kY)], g[D(Dim::kX)]};
  }
  return {};
}
Coord Shape(const Layer& l, Operand t, const Extents& b) {
  if (t == Operand::kKernel && !l.HasKernel()) return {0, 0, 0, 0};
  if (t == Operand::kInput && l.kind == LayerKind::kLrn)
    return {b[D(Dim::kN)], b[D(Dim::kK)] + b[D(Dim::kC)] - 1, b[D(Dim::kY)], b[D(Dim::kX)]};
  if (t == Operand::kInput && !l.HasKernel())
    return {b[D(Dim::kN)], b[D(Dim::kK)], (b[D(Dim::kY)] - 1) * l.stride_y + b[D(Dim::kFh)],
            (b[D(Dim::kX)] - 1) * l.stride_x + b[D(Dim::kFw)]};
  switch (t) {
    case Operand::kInput:
      return {b[D(Dim::kN)], b[D(Dim::kC)], (b[D(Dim::kY)] - 1) * l.stride_y + b[D(Dim::kFh)],
              (b[D(Dim::kX)] - 1) * l.stride_x + b[D(Dim::kFw)]};
    case Operand::kKernel:
      return {b[D(Dim::kK)], b[D(Dim::kC)], b[D(Dim::kFh)], b[D(Dim::kFw)]};
    case Operand::kOutput:
      return {b[D(Dim::kN)], b[D(Dim::kK)], b[D(Dim::kY)], b[D(Dim::kX)]};
  }
  return {};
}

struct Holder {
  BufferUse use;
  Coord origin{}, shape{};
  std::vector<int64_t> key;  // the per-dimension origins of the dims that index the operand
  bool valid = false;
  std::vector<int32_t> data;
  std::set<Coord> visited;  // output tiles seen before
  // Index of global coordinate `c` in this tile, or -1 when the tile does not contain it.
  int64_t Index(const Coord& c) const {
    int64_t idx = 0;
    for (int i = 0; i < 4; ++i) {
      int64_t r = c[i] - origin[i];
      if (r < 0 || r >= shape[i]) return -1;
      idx = idx * shape[i] + r;
    }
    return idx;
  }
};

Status Missing(const Holder& h, const char* what) {
  return Status(StatusCode::kMismatch, std::string("blocking interpreter: ") + BufferName(h.use.operand) + " at cut " +
                                           std::to_string(h.use.cut) + " lacks an element its " + what + " needs");
}

// Copies holder `from`'s elements that lie in `to`'s tile (to -> from when `back`); counts words.
Status Move(Holder& child, Holder& parent, bool back) {
  Coord c;
  int64_t i = 0;
  for (c[0] = child.origin[0]; c[0] < child.origin[0] + child.shape[0]; ++c[0])
    for (c[1] = child.origin[1]; c[1] < child.origin[1] + child.shape[1]; ++c[1])
      for (c[2] = child.origin[2]; c[2] < child.origin[2] + child.shape[2]; ++c[2])
        for (c[3] = child.origin[3]; c[3] < child.origin[3] + child.shape[3]; ++c[3], ++i) {
          int64_t p = parent.Index(c);
          if (p < 0) return Missing(parent, back ? "child's write-back" : "child's fill");
          if (back) parent.data[p] = child.data[i];
          else child.data[i] = parent.data[p];
        }
  if (back) {
    child.use.reads += i;
    parent.use.writes += i;
  } else {
    parent.use.reads += i;
    child.use.writes += i;
  }
  return Status::Ok();
}

// The output's value before the first step (max pooling: the smallest int32).
int32_t Init(const Layer& l) { return l.kind == LayerKind::kMaxPool ? std::numeric_limits<int32_t>::min() : 0; }

// One step of the nest on the running output `o` (int32 wrap-around, as uint32 arithmetic).
int32_t Step(const Layer& l, int32_t o, int32_t in, int32_t w) {
  auto wrap = [](uint32_t v) { return static_cast<int32_t>(v); };
  switch (l.kind) {
    case LayerKind::kConv:
      return wrap(static_cast<uint32_t>(o) + static_cast<uint32_t>(in) * static_cast<uint32_t>(w));
    case LayerKind::kMaxPool:
      return std::max(o, in);
    case LayerKind::kAvgPool:
      return wrap(static_cast<uint32_t>(o) + static_cast<uint32_t>(in));
    case LayerKind::kLrn:
      return wrap(static_cast<uint32_t>(o) + static_cast<uint32_t>(in) * static_cast<uint32_t>(in));
  }
  return o;
}

}  // namespace

std::vector<int32_t> RunNaive(const Layer& l, std::span<const int16_t> input, std::span<const int16_t> kernel) {
  auto e = [&](Dim d) { return l.extent(d); };
  Coord ishape = Shape(l, Operand::kInput, l.ext), kshape = Shape(l, Operand::kKernel, l.ext);
  std::vector<int32_t> out(l.Size(Operand::kOutput), 0);
  auto at = [](const Coord& s, const Coord& c) { return ((c[0] * s[1] + c[1]) * s[2] + c[2]) * s[3] + c[3]; };
  int64_t o = 0;
  Extents g{};
  for (int64_t n = 0; n < e(Dim::kN); ++n)
    for (int64_t k = 0; k < e(Dim::kK); ++k)
      for (int64_t y = 0; y < e(Dim::kY); ++y)
        for (int64_t x = 0; x < e(Dim::kX); ++x, ++o) {
          int32_t acc = Init(l);
          for (int64_t c = 0; c < e(Dim::kC); ++c)
            for (int64_t fh = 0; fh < e(Dim::kFh); ++fh)
              for (int64_t fw = 0; fw < e(Dim::kFw); ++fw) {
                g = {x, y, c, k, fw, fh, n};
                int32_t w = l.HasKernel() ? int32_t{kernel[at(kshape, Coords(l, Operand::kKernel, g))]} : 0;
                acc = Step(l, acc, input[at(ishape, Coords(l, Operand::kInput, g))], w);
              }
          out[o] = acc;
        }
  return out;
}

StatusOr<InterpreterResult> RunBlocked(const Layer& l, const Hierarchy& h, const BlockingString& s,
                                       std::span<const int16_t> input, std::span<const int16_t> kernel) {
  if (static_cast<int64_t>(input.size()) != l.Size(Operand::kInput) ||
      static_cast<int64_t>(kernel.size()) != l.Size(Operand::kKernel))
    return InvalidArgument("blocking interpreter: input has " + std::to_string(input.size()) + " and kernel " +
                           std::to_string(kernel.size()) + " elements; the layer needs " +
                           std::to_string(l.Size(Operand::kInput)) + " and " + std::to_string(l.Size(Operand::kKernel)));
  Evaluation ev = Evaluate(l, h, s);
  std::vector<Extents> blocks = CutBlocks(s);
  std::vector<int64_t> trips = Trips(s);
  const int n = static_cast<int>(s.size());
  std::vector<int64_t> step(n);
  for (int j = 0; j < n; ++j) step[j] = s[j].size / trips[j];
  // chains[t]: holders innermost first; the backing holder has the whole tensor.
  std::vector<std::vector<Holder>> chains(kNumOperands);
  for (const BufferUse& u : ev.buffers) {
    Holder hd;
    hd.use = u;
    hd.use.fills = hd.use.reads = hd.use.writes = 0;
    hd.shape = Shape(l, u.operand, blocks[u.cut]);
    hd.data.assign(u.elems, 0);
    if (u.backing) {
      hd.valid = true;
      hd.use.fills = 1;
      if (u.operand == Operand::kInput) hd.data.assign(input.begin(), input.end());
      if (u.operand == Operand::kKernel) hd.data.assign(kernel.begin(), kernel.end());
      if (u.operand == Operand::kOutput) hd.data.assign(u.elems, Init(l));
    }
    chains[static_cast<int>(u.operand)].push_back(std::move(hd));
  }
  std::vector<int64_t> ctr(n, 0);
  auto origin_at = [&](int cut) {
    Extents g{};
    for (int j = cut; j < n; ++j) g[D(s[j].dim)] += ctr[j] * step[j];
    return g;
  };
  int changed = n;  // highest loop whose counter changed since the last MAC (n: the start)
  while (true) {
    // Evict (inner to outer) and then load (outer to inner) the holders whose tile changed.
    for (int ti = 0; ti < kNumOperands; ++ti) {
      Operand t = static_cast<Operand>(ti);
      std::vector<Holder>& ch = chains[ti];
      std::vector<char> reload(ch.size(), 0);
      for (size_t i = 0; i + 1 < ch.size(); ++i) {
        if (changed < ch[i].use.cut && ch[i].valid) continue;
        Extents g = origin_at(ch[i].use.cut);
        std::vector<int64_t> key;
        for (Dim d : kAllDims)
          if (l.Indexes(d, t)) key.push_back(g[D(d)]);
        if (ch[i].valid && key == ch[i].key) continue;
        if (ch[i].valid && t == Operand::kOutput) SP_RETURN_IF_ERROR(Move(ch[i], ch[i + 1], true));
        ch[i].key = key;
        ch[i].origin = Coords(l, t, g);
        reload[i] = 1;
      }
      for (size_t i = ch.size() - 1; i-- > 0;) {
        if (!reload[i]) continue;
        ch[i].valid = true;
        ++ch[i].use.fills;
        if (t == Operand::kOutput && ch[i].visited.insert(ch[i].origin).second) {
          std::fill(ch[i].data.begin(), ch[i].data.end(), Init(l));
        } else {
          SP_RETURN_IF_ERROR(Move(ch[i], ch[i + 1], false));
        }
      }
    }
    Extents g = origin_at(0);
    Holder& hi = chains[0][0];
    Holder& hk = chains[1][0];
    Holder& ho = chains[2][0];
    int64_t ii = hi.Index(Coords(l, Operand::kInput, g));
    int64_t ki = l.HasKernel() ? hk.Index(Coords(l, Operand::kKernel, g)) : 0;
    int64_t oi = ho.Index(Coords(l, Operand::kOutput, g));
    if (ii < 0) return Missing(hi, "MAC");
    if (ki < 0) return Missing(hk, "MAC");
    if (oi < 0) return Missing(ho, "MAC");
    ho.data[oi] = Step(l, ho.data[oi], hi.data[ii], l.HasKernel() ? hk.data[ki] : 0);
    ++hi.use.reads;
    if (l.HasKernel()) ++hk.use.reads;
    ++ho.use.reads;
    ++ho.use.writes;
    int j = 0;
    while (j < n && ++ctr[j] == trips[j]) ctr[j++] = 0;
    if (j == n) break;
    changed = j;
  }
  std::vector<Holder>& oc = chains[static_cast<int>(Operand::kOutput)];
  for (size_t i = 0; i + 1 < oc.size(); ++i) SP_RETURN_IF_ERROR(Move(oc[i], oc[i + 1], true));
  InterpreterResult r;
  r.output = oc.back().data;
  for (auto& ch : chains)
    for (const Holder& hd : ch) r.buffers.push_back(hd.use);
  return r;
}

}  // namespace sramplan::blocking
