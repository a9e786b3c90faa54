#include "fusion/fusion_spill.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "milp/milp.h"
#include "support/int_math.h"

namespace sramplan::fusion {

int64_t KeptMap::saved() const {
  int64_t s = saved_write;
  for (const auto& [g, b] : saved_reads) s += b;
  return s;
}

int64_t MostStrips(const GroupEval& e, const AccelModel& m) {
  const int64_t min_t = std::min(m.t_h, e.ref_rows);
  int64_t lo = 1, hi = std::max<int64_t>(e.ref_rows, 1);
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (CeilDiv(e.ref_rows, mid) >= min_t) lo = mid; else hi = mid - 1;
  }
  return lo;
}

namespace {

// A candidate: the map, the lowest offset the groups it spans allow, and the groups' span.
struct Candidate {
  KeptMap map;
  int64_t floor = 0;  // max working set (aligned) over [first_group, last_group]
};

bool Conflict(const KeptMap& a, const KeptMap& b) {
  return a.first_group <= b.last_group && b.first_group <= a.last_group;
}

// The maps that could stay on chip alone, with what each saves (Eq. 3's terms of the groups).
std::vector<Candidate> Candidates(const FusionGraph& fg, const AccelModel& m, const FusionResult& r,
                                  const ResidencyOptions& o, std::vector<int64_t>* floors) {
  const int ng = static_cast<int>(r.groups.size());
  std::vector<int> group_of(fg.vertices.size(), -1);
  for (int k = 0; k < ng; ++k)
    for (int v : r.groups[k]) group_of[v] = k;
  const int64_t align = std::max<int64_t>(o.alignment, 1);
  floors->assign(ng, 0);
  for (int k = 0; k < ng; ++k) {
    const GroupEval& e = r.evals[k];
    int64_t need = e.buffer_bytes;
    if (o.retile && e.params_resident)
      need = GroupFmapBytes(fg, r.groups[k], MostStrips(e, m), e.isoa, m, e.halo) + e.param_bytes;
    if (k < static_cast<int>(o.group_min_bytes.size())) need = std::max(need, o.group_min_bytes[k]);
    (*floors)[k] = std::min(m.buffer_bytes, AlignUp(need, align));
  }
  std::vector<Candidate> out;
  for (size_t f = 0; f < fg.tensors.size(); ++f) {
    const FTensor& t = fg.tensors[f];
    if (t.producer < 0 || t.graph_output || t.bytes <= 0) continue;
    if (f < o.eligible.size() && !o.eligible[f]) continue;
    Candidate c;
    KeptMap& km = c.map;
    km.tensor = static_cast<int>(f);
    km.first_group = group_of[t.producer];
    km.last_group = km.first_group;
    // Per reader group: the rows it reads (the deepest window of its vertices reading t).
    std::vector<std::pair<int, int64_t>> rows_read;  // (group, rows)
    for (int v : t.consumers) {
      const int g = group_of[v];
      if (g == km.first_group) continue;
      if (g < km.first_group) return {};  // not a valid order; nothing is kept
      const Vertex& vx = fg.vertices[v];
      int64_t rows = 1;
      for (size_t j = 0; j < vx.inputs.size(); ++j)
        if (vx.inputs[j] == static_cast<int>(f)) rows = std::max(rows, vx.in_maps[j].RowsRead());
      auto it = std::find_if(rows_read.begin(), rows_read.end(), [&](const auto& p) { return p.first == g; });
      if (it == rows_read.end()) rows_read.push_back({g, rows}); else it->second = std::max(it->second, rows);
    }
    if (rows_read.empty()) continue;  // read only inside its group: never in DRAM
    std::sort(rows_read.begin(), rows_read.end());
    for (const auto& [g, rows] : rows_read) {
      km.saved_reads.push_back({g, rows >= t.rows ? t.bytes : t.bytes / t.rows * rows});
      km.last_group = std::max(km.last_group, g);
    }
    km.bytes = t.bytes;
    km.saved_write = t.bytes;
    km.slot_bytes = AlignUp(t.bytes, align);
    for (int k = km.first_group; k <= km.last_group; ++k) c.floor = std::max(c.floor, (*floors)[k]);
    if (c.floor + km.slot_bytes > m.buffer_bytes) continue;
    out.push_back(std::move(c));
  }
  return out;
}

// The lowest offset >= floor where `slot` bytes do not meet a placed map sharing a group with `km`,
// or -1 past `capacity`.
int64_t FirstFit(const KeptMap& km, int64_t floor, const std::vector<KeptMap>& placed, int64_t capacity) {
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (const KeptMap& p : placed)
    if (Conflict(km, p)) busy.push_back({p.offset, p.offset + p.slot_bytes});
  std::sort(busy.begin(), busy.end());
  int64_t at = floor;
  for (const auto& [lo, hi] : busy) {
    if (at + km.slot_bytes <= lo) break;
    at = std::max(at, hi);
  }
  return at + km.slot_bytes <= capacity ? at : -1;
}

// First fit, the largest saving per byte first (ties: the earlier tensor).
std::vector<int> Greedy(const std::vector<Candidate>& c, int64_t capacity, std::vector<int64_t>* offsets) {
  std::vector<int> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    // saved_a / slot_a > saved_b / slot_b, in integers (both < 2^40 on any real map).
    const __int128 l = static_cast<__int128>(c[a].map.saved()) * c[b].map.slot_bytes;
    const __int128 r = static_cast<__int128>(c[b].map.saved()) * c[a].map.slot_bytes;
    return l > r;
  });
  std::vector<KeptMap> placed;
  std::vector<int> chosen;
  offsets->assign(c.size(), -1);
  for (int i : order) {
    const int64_t at = FirstFit(c[i].map, c[i].floor, placed, capacity);
    if (at < 0) continue;
    (*offsets)[i] = at;
    placed.push_back(c[i].map);
    placed.back().offset = at;
    chosen.push_back(i);
  }
  return chosen;
}

// Offsets of the chosen maps from their order in `hint` (ascending): each as low as its floor and
// the chosen maps below it that share a group allow. Maps that then pass the capacity are dropped.
std::vector<int> Settle(const std::vector<Candidate>& c, std::vector<int> chosen, const std::vector<double>& hint,
                        int64_t capacity, std::vector<int64_t>* offsets) {
  std::stable_sort(chosen.begin(), chosen.end(), [&](int a, int b) { return hint[a] < hint[b]; });
  std::vector<int> kept;
  offsets->assign(c.size(), -1);
  for (int i : chosen) {
    int64_t at = c[i].floor;
    for (int j : kept)
      if (Conflict(c[i].map, c[j].map)) at = std::max(at, (*offsets)[j] + c[j].map.slot_bytes);
    if (at + c[i].map.slot_bytes > capacity) continue;
    (*offsets)[i] = at;
    kept.push_back(i);
  }
  return kept;
}

int64_t SavedOf(const std::vector<Candidate>& c, const std::vector<int>& chosen) {
  int64_t s = 0;
  for (int i : chosen) s += c[i].map.saved();
  return s;
}

// The ILP: x_i (kept), o_i (offset), y_ij (i below j) per pair sharing a group; maximise the saving.
milp::Result SolveIlp(const std::vector<Candidate>& c, int64_t capacity, const std::vector<int64_t>& floors,
                      const std::vector<int>& greedy, const std::vector<int64_t>& greedy_at, double time_limit_s) {
  milp::Model mip;
  const int n = static_cast<int>(c.size());
  const double B = static_cast<double>(capacity);
  std::vector<int> x(n), o(n);
  std::vector<double> start;
  std::vector<char> in_greedy(n, 0);
  for (int i : greedy) in_greedy[i] = 1;
  for (int i = 0; i < n; ++i) {
    x[i] = mip.AddCol(0, 1, -static_cast<double>(c[i].map.saved()), true);
    start.push_back(in_greedy[i]);
    o[i] = mip.AddCol(static_cast<double>(c[i].floor), B - static_cast<double>(c[i].map.slot_bytes), 0, false);
    start.push_back(static_cast<double>(in_greedy[i] ? greedy_at[i] : c[i].floor));
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (!Conflict(c[i].map, c[j].map)) continue;
      const int y = mip.AddCol(0, 1, 0, true);
      start.push_back(in_greedy[i] && in_greedy[j] && greedy_at[i] < greedy_at[j] ? 1 : 0);
      const double si = static_cast<double>(c[i].map.slot_bytes), sj = static_cast<double>(c[j].map.slot_bytes);
      // y = 1, both kept: o_i + s_i <= o_j.  y = 0, both kept: o_j + s_j <= o_i.
      mip.AddRow({{o[i], 1}, {o[j], -1}, {y, B}, {x[i], B}, {x[j], B}}, -milp::Model::Inf(), 3 * B - si);
      mip.AddRow({{o[j], 1}, {o[i], -1}, {y, -B}, {x[i], B}, {x[j], B}}, -milp::Model::Inf(), 2 * B - sj);
    }
  // Per group: the kept maps spanning it fit above its working set.
  for (size_t k = 0; k < floors.size(); ++k) {
    std::vector<std::pair<int, double>> terms;
    for (int i = 0; i < n; ++i)
      if (c[i].map.first_group <= static_cast<int>(k) && static_cast<int>(k) <= c[i].map.last_group)
        terms.push_back({x[i], static_cast<double>(c[i].map.slot_bytes)});
    if (terms.size() >= 2) mip.AddRow(terms, -milp::Model::Inf(), B - static_cast<double>(floors[k]));
  }
  milp::SolveOptions so;
  so.time_limit_s = time_limit_s;
  so.start = &start;
  so.progress_what = "kept maps ILP (CBC)";
  so.progress_unit = "B";
  return mip.Solve(so);
}

// Each group's strips: its own when its working set fits below the kept maps live at it, else the
// fewest (parameters resident) whose working set does.
void Retile(const FusionGraph& fg, const AccelModel& m, const FusionResult& r, const ResidencyOptions& o,
            ResidencyResult* res) {
  const int ng = static_cast<int>(r.groups.size());
  for (int k = 0; k < ng; ++k) {
    const GroupEval& e = r.evals[k];
    int64_t limit = m.buffer_bytes;
    for (const KeptMap& km : res->maps)
      if (km.first_group <= k && k <= km.last_group) limit = std::min(limit, km.offset);
    int64_t tiles = e.tiles, bytes = e.buffer_bytes;
    if (bytes > limit && o.retile && e.params_resident) {
      int64_t a = e.tiles, b = MostStrips(e, m);
      auto fits = [&](int64_t t) { return GroupFmapBytes(fg, r.groups[k], t, e.isoa, m, e.halo) + e.param_bytes <= limit; };
      while (a < b) {
        const int64_t mid = a + (b - a) / 2;
        if (fits(mid)) b = mid; else a = mid + 1;
      }
      tiles = a;
      bytes = GroupFmapBytes(fg, r.groups[k], tiles, e.isoa, m, e.halo) + e.param_bytes;
      ++res->retiled_groups;
    }
    res->group_tiles.push_back(tiles);
    res->group_buffer_bytes.push_back(bytes);
  }
}

}  // namespace

StatusOr<ResidencyResult> ChooseKeptMaps(const FusionGraph& fg, const AccelModel& m, const FusionResult& r,
                                         const ResidencyOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (r.evals.size() != r.groups.size()) return InvalidArgument("the fusion scheme has no evaluation per group");
  ResidencyResult res;
  const std::vector<Candidate> c = Candidates(fg, m, r, o, &res.group_floor);
  res.candidates = static_cast<int64_t>(c.size());
  std::vector<int64_t> greedy_at, at;
  const std::vector<int> greedy = Greedy(c, m.buffer_bytes, &greedy_at);
  std::vector<int> chosen = greedy;
  at = greedy_at;
  res.method = c.empty() ? "none" : "greedy";
  res.proved_optimal = c.size() <= 1 || greedy.size() == c.size();  // all kept: nothing better exists
  if (!res.proved_optimal) {
    const milp::Result ilp = SolveIlp(c, m.buffer_bytes, res.group_floor, greedy, greedy_at, o.time_limit_s);
    if (ilp.has_solution) {
      std::vector<int> picked;
      std::vector<double> hint(c.size(), 0);
      for (size_t i = 0; i < c.size(); ++i) {
        if (ilp.x[2 * i] > 0.5) picked.push_back(static_cast<int>(i));
        hint[i] = ilp.x[2 * i + 1];
      }
      std::vector<int64_t> settled_at;
      const std::vector<int> settled = Settle(c, picked, hint, m.buffer_bytes, &settled_at);
      if (SavedOf(c, settled) >= SavedOf(c, chosen)) {
        chosen = settled;
        at = settled_at;
        res.method = "ilp";
        res.proved_optimal = ilp.optimal && settled.size() == picked.size();
      }
    }
    res.note = std::string("ILP over ") + std::to_string(c.size()) + " candidate maps" +
               (ilp.hit_limit ? " (time limit hit)" : "") + (res.proved_optimal ? ", optimal" : ", not proved optimal");
  }
  for (int i : chosen) {
    KeptMap km = c[i].map;
    km.offset = at[i];
    res.saved_write_bytes += km.saved_write;
    for (const auto& [g, b] : km.saved_reads) res.saved_read_bytes += b;
    res.maps.push_back(std::move(km));
  }
  std::sort(res.maps.begin(), res.maps.end(), [](const KeptMap& a, const KeptMap& b) {
    return a.first_group != b.first_group ? a.first_group < b.first_group : a.tensor < b.tensor;
  });
  res.saved_bytes = res.saved_read_bytes + res.saved_write_bytes;
  Retile(fg, m, r, o, &res);
  res.search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace sramplan::fusion
