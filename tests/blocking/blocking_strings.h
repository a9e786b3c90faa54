// Blocking strings for the blocking tests: every string with at most two loops per dimension (the
// brute force the exact search is checked against) and random valid strings.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "blocking/model.h"
#include "blocking/optimizer.h"

namespace sramplan::blocking::testing {

// Calls `f` on every string with at most two loops per dimension, in any order (no symmetry or
// adjacency rule).
inline void EnumerateStrings(const Layer& l, const std::function<void(const BlockingString&)>& f) {
  std::vector<std::vector<std::vector<Loop>>> chains;  // per present dim: its possible loop chains
  for (Dim d : kAllDims) {
    int64_t e = l.extent(d);
    if (e == 1) continue;
    std::vector<std::vector<Loop>> opts = {{{d, e}}};
    for (int64_t s : Divisors(e))
      if (s > 1 && s < e) opts.push_back({{d, s}, {d, e}});
    chains.push_back(opts);
  }
  std::vector<size_t> pick(chains.size(), 0);
  while (true) {
    std::vector<std::vector<Loop>> per;
    size_t total = 0;
    for (size_t i = 0; i < chains.size(); ++i) {
      per.push_back(chains[i][pick[i]]);
      total += per.back().size();
    }
    std::vector<size_t> at(per.size(), 0);
    BlockingString cur;
    std::function<void()> rec = [&]() {
      if (cur.size() == total) {
        f(cur);
        return;
      }
      for (size_t i = 0; i < per.size(); ++i) {
        if (at[i] == per[i].size()) continue;
        cur.push_back(per[i][at[i]++]);
        rec();
        --at[i];
        cur.pop_back();
      }
    };
    rec();
    size_t i = 0;
    while (i < pick.size() && ++pick[i] == chains[i].size()) pick[i++] = 0;
    if (i == pick.size()) break;
  }
}

// The least energy of any string EnumerateStrings gives that fits `h` (infinity if none fits).
inline double BruteForceBest(const Layer& l, const Hierarchy& h) {
  double best = std::numeric_limits<double>::infinity();
  EnumerateStrings(l, [&](const BlockingString& s) {
    Evaluation ev = Evaluate(l, h, s);
    if (ev.fits) best = std::min(best, ev.total_pj);
  });
  return best;
}

// A random valid string: every dimension split in up to three loops (sizes drawn among the
// divisors), the dimensions' loops randomly interleaved.
inline BlockingString RandomInterleavedString(const Layer& l, std::mt19937_64& rng) {
  std::vector<std::vector<Loop>> per;
  for (Dim d : kAllDims) {
    int64_t e = l.extent(d);
    if (e == 1) continue;
    std::vector<Loop> ch;
    int64_t cur = 1;
    for (int64_t s : Divisors(e))
      if (s > cur && s < e && s % cur == 0 && rng() % 3 == 0) {
        ch.push_back({d, s});
        cur = s;
      }
    ch.push_back({d, e});
    per.push_back(ch);
  }
  BlockingString s;
  std::vector<size_t> at(per.size(), 0);
  size_t total = 0;
  for (auto& c : per) total += c.size();
  while (s.size() < total) {
    size_t i = rng() % per.size();
    if (at[i] < per[i].size()) s.push_back(per[i][at[i]++]);
  }
  return s;
}

}  // namespace sramplan::blocking::testing
