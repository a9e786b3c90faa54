#include "blocking/model.h"

#include <algorithm>
#include <sstream>

#include "support/strings.h"

namespace sramplan::blocking {

namespace {
int Idx(Dim d) { return static_cast<int>(d); }
}  // namespace

std::string ToString(const BlockingString& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ' ';
    out += DimName(s[i].dim);
    out += ':' + std::to_string(s[i].size);
  }
  return out;
}

StatusOr<BlockingString> ParseBlockingString(const std::string& text, const Layer& layer) {
  BlockingString s;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    size_t colon = tok.find_first_of(":=");
    std::string name = tok.substr(0, colon);
    Loop l;
    if (!ParseDim(name, &l.dim))
      return InvalidArgument("blocking string: loop '" + tok.substr(0, 40) +
                             "' has no dimension; use X, Y, C, K, Fw, Fh or N (e.g. X:8)");
    l.size = layer.extent(l.dim);
    if (colon != std::string::npos) {
      std::string num = tok.substr(colon + 1);
      char* end = nullptr;
      long long v = num.empty() ? -1 : std::strtoll(num.c_str(), &end, 10);
      if (num.empty() || *end != '\0' || v < 1 || v > (int64_t{1} << 24))
        return InvalidArgument("blocking string: loop '" + tok.substr(0, 40) + "' needs a positive size after ':'");
      l.size = v;
    }
    s.push_back(l);
  }
  SP_RETURN_IF_ERROR(ValidateString(layer, s));
  return s;
}

Status ValidateString(const Layer& layer, const BlockingString& s) {
  Extents cur = {1, 1, 1, 1, 1, 1, 1};
  for (size_t i = 0; i < s.size(); ++i) {
    const Loop& l = s[i];
    std::string where = "blocking string loop " + std::to_string(i) + " (" + DimName(l.dim) + ":" + std::to_string(l.size) + ")";
    int64_t b = cur[Idx(l.dim)];
    if (l.size <= b)
      return InvalidArgument(where + ": size must be larger than the " + std::to_string(b) + " its inner loops cover");
    if (l.size % b != 0)
      return InvalidArgument(where + ": size must be a multiple of the " + std::to_string(b) + " its inner loops cover");
    if (layer.extent(l.dim) % l.size != 0)
      return InvalidArgument(where + ": size must divide the layer's " + DimName(l.dim) + " = " +
                             std::to_string(layer.extent(l.dim)));
    cur[Idx(l.dim)] = l.size;
  }
  for (Dim d : kAllDims)
    if (cur[Idx(d)] != layer.extent(d))
      return InvalidArgument(std::string("blocking string: no loop covers the whole ") + DimName(d) + " = " +
                             std::to_string(layer.extent(d)) + "; add a loop " + DimName(d) + " outside the others");
  return Status::Ok();
}

std::vector<int64_t> Trips(const BlockingString& s) {
  Extents cur = {1, 1, 1, 1, 1, 1, 1};
  std::vector<int64_t> t;
  for (const Loop& l : s) {
    t.push_back(l.size / cur[Idx(l.dim)]);
    cur[Idx(l.dim)] = l.size;
  }
  return t;
}

std::vector<Extents> CutBlocks(const BlockingString& s) {
  std::vector<Extents> out;
  Extents cur = {1, 1, 1, 1, 1, 1, 1};
  out.push_back(cur);
  for (const Loop& l : s) {
    cur[Idx(l.dim)] = l.size;
    out.push_back(cur);
  }
  return out;
}

std::vector<int> ImpliedCuts(const Layer& layer, const BlockingString& s, Operand t) {
  std::vector<int> cuts;
  if (t == Operand::kKernel && !layer.HasKernel()) return cuts;
  for (size_t c = 1; c < s.size(); ++c) {
    bool run_start = !layer.Indexes(s[c].dim, t) && layer.Indexes(s[c - 1].dim, t);
    bool window = t == Operand::kInput && layer.IsWindow(s[c - 1].dim);
    if (run_start || window) cuts.push_back(static_cast<int>(c));
  }
  return cuts;
}

std::vector<int> ImpliedCuts(const BlockingString& s, Operand t) { return ImpliedCuts(Layer{}, s, t); }

namespace {

struct Candidate {
  Operand t;
  int cut;
  int64_t elems, fills;
};

}  // namespace

int64_t Fills(const BlockingString& s, const std::vector<int64_t>& trips, int cut, Operand t) {
  return Fills(Layer{}, s, trips, cut, t);
}

int64_t Fills(const Layer& layer, const BlockingString& s, const std::vector<int64_t>& trips, int cut, Operand t) {
  int n = static_cast<int>(s.size());
  int f = cut;
  while (f < n && !layer.Indexes(s[f].dim, t)) ++f;
  int64_t p = 1;
  for (int j = f; j < n; ++j) p *= trips[j];
  return p;
}

// Greedy packing (model.h): each operand's chain of buffers, then its backing store.
Packing Pack(const Layer& layer, const Hierarchy& h, const BlockingString& s) {
  std::vector<int64_t> trips = Trips(s);
  std::vector<Extents> blocks = CutBlocks(s);
  std::vector<Candidate> cands;
  cands.reserve(3 * s.size());
  for (int ti = 0; ti < kNumOperands; ++ti) {
    Operand t = static_cast<Operand>(ti);
    if (t == Operand::kKernel && !layer.HasKernel()) continue;
    for (size_t c = 1; c < s.size(); ++c) {  // ImpliedCuts(layer, s, t), without its vector
      bool run_start = !layer.Indexes(s[c].dim, t) && layer.Indexes(s[c - 1].dim, t);
      bool window = t == Operand::kInput && layer.IsWindow(s[c - 1].dim);
      if (run_start || window)
        cands.push_back({t, static_cast<int>(c), layer.Footprint(t, blocks[c]), Fills(layer, s, trips, static_cast<int>(c), t)});
    }
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.cut != b.cut) return a.cut < b.cut;
    return a.elems > b.elems;
  });
  int nl = static_cast<int>(h.levels.size());
  std::vector<int64_t> free_bytes(nl);
  for (int i = 0; i < nl; ++i) free_bytes[i] = h.levels[i].capacity_bytes;
  Packing pk;
  std::vector<std::vector<BufferUse>>& chains = pk.chains;
  chains.resize(kNumOperands);
  for (auto& ch : chains) ch.reserve(4);
  int* ptr = pk.ptr;
  const int64_t wb = h.word_bytes();
  for (const Candidate& c : cands) {
    int ti = static_cast<int>(c.t);
    int back = h.Backing(c.t);
    int64_t bytes = c.elems * wb;
    int chosen = -1;
    for (int l = ptr[ti]; l < back && chosen < 0; ++l) {
      if (!h.levels[l].Holds(c.t)) continue;
      int64_t avail = free_bytes[l];
      if (!chains[ti].empty() && chains[ti].back().level == l) avail += chains[ti].back().elems * wb;
      if (avail >= bytes) chosen = l;
    }
    if (chosen < 0) {
      ptr[ti] = back;
      pk.exhausted[ti] = true;
      continue;
    }
    if (!chains[ti].empty() && chains[ti].back().level == chosen) {
      free_bytes[chosen] += chains[ti].back().elems * wb;
      chains[ti].pop_back();
    }
    free_bytes[chosen] -= bytes;
    ptr[ti] = chosen;
    BufferUse u;
    u.operand = c.t;
    u.cut = c.cut;
    u.level = chosen;
    u.elems = c.elems;
    u.fills = c.fills;
    chains[ti].push_back(u);
  }
  for (int ti = 0; ti < kNumOperands; ++ti) {
    Operand t = static_cast<Operand>(ti);
    BufferUse b;
    b.operand = t;
    b.cut = static_cast<int>(s.size());
    b.level = h.Backing(t);
    b.elems = layer.Size(t);
    b.fills = 1;
    b.backing = true;
    chains[ti].push_back(b);
  }
  pk.free_bytes = free_bytes;
  return pk;
}

Evaluation Evaluate(const Layer& layer, const Hierarchy& h, const BlockingString& s) {
  Evaluation ev;
  ev.macs = layer.Macs();
  std::vector<std::vector<BufferUse>> chains = Pack(layer, h, s).chains;
  for (int ti = 0; ti < kNumOperands; ++ti) {
    Operand t = static_cast<Operand>(ti);
    std::vector<BufferUse>& ch = chains[ti];
    if (t == Operand::kKernel && !layer.HasKernel()) {  // pooling, LRN: no kernel data
      for (const BufferUse& b : ch) ev.buffers.push_back(b);
      continue;
    }
    ch[0].reads += ev.macs;
    if (t == Operand::kOutput) ch[0].writes += ev.macs;
    for (size_t i = 0; i + 1 < ch.size(); ++i) {
      int64_t moved = ch[i].fills * ch[i].elems;
      if (t != Operand::kOutput) {
        ch[i + 1].reads += moved;
        ch[i].writes += moved;
      } else {
        int64_t tiles = layer.Size(t) / ch[i].elems;
        int64_t back_in = (ch[i].fills - tiles) * ch[i].elems;
        ch[i + 1].reads += back_in;
        ch[i].writes += back_in;
        ch[i].reads += moved;
        ch[i + 1].writes += moved;
      }
    }
    for (const BufferUse& b : ch) ev.buffers.push_back(b);
  }
  ev.levels.assign(h.levels.size(), LevelUse{});
  const int64_t wb = h.word_bytes();
  for (const BufferUse& b : ev.buffers) {
    LevelUse& lu = ev.levels[b.level];
    const Level& l = h.levels[b.level];
    lu.used_bytes += b.elems * wb;
    lu.reads += b.reads;
    lu.writes += b.writes;
    double e = static_cast<double>(b.reads) * l.read_pj + static_cast<double>(b.writes) * l.write_pj;
    lu.energy_pj += e;
    ev.operand_pj[static_cast<int>(b.operand)] += e;
  }
  for (size_t i = 0; i < h.levels.size(); ++i) {
    ev.memory_pj += ev.levels[i].energy_pj;
    if (ev.levels[i].used_bytes > h.levels[i].capacity_bytes) ev.fits = false;
  }
  ev.mac_pj = static_cast<double>(ev.macs) * h.mac_pj;
  ev.total_pj = ev.memory_pj + ev.mac_pj;
  return ev;
}

}  // namespace sramplan::blocking
