// ChooseKeptMaps (fusion/fusion_spill.h) against brute force on small random group sequences: every
// subset of the candidate maps, every order of it placed as low as its floor and the maps below it
// allow (any placement can be pushed down to such one), the best saving; the ILP must reach it and
// its own placement must be valid (floors, capacity, no two maps sharing a group overlap).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "fusion/fusion_spill.h"

namespace sramplan::fusion {
namespace {

struct Instance {
  FusionGraph fg;
  FusionResult r;
  AccelModel m;
};

// n single-vertex groups in order; vertex v outputs tensor v, read by 1..2 later vertices (the last
// vertex's output is the graph output). Working sets and map sizes random, multiples of 16.
Instance RandomInstance(std::mt19937& rng, int n) {
  Instance in;
  in.m.buffer_bytes = 1024;
  std::uniform_int_distribution<int64_t> ws(1, 40), sz(1, 30);
  in.fg.vertices.resize(n);
  in.fg.tensors.resize(n);
  for (int v = 0; v < n; ++v) {
    FTensor& t = in.fg.tensors[v];
    t.bytes = 16 * sz(rng);
    t.rows = 1;
    t.row_bytes = t.bytes;
    t.producer = v;
    t.graph_output = v == n - 1;
    in.fg.vertices[v].outputs = {v};
    in.fg.vertices[v].name = "v" + std::to_string(v);
  }
  for (int v = 0; v + 1 < n; ++v) {
    std::uniform_int_distribution<int> later(v + 1, n - 1);
    for (int k = 0; k < 1 + static_cast<int>(rng() % 2); ++k) {
      const int c = later(rng);
      if (std::find(in.fg.tensors[v].consumers.begin(), in.fg.tensors[v].consumers.end(), c) !=
          in.fg.tensors[v].consumers.end())
        continue;
      in.fg.tensors[v].consumers.push_back(c);
      in.fg.vertices[c].inputs.push_back(v);
      in.fg.vertices[c].in_maps.push_back(RowMap{});
    }
    std::sort(in.fg.tensors[v].consumers.begin(), in.fg.tensors[v].consumers.end());
  }
  for (int v = 0; v < n; ++v) {
    in.r.groups.push_back({v});
    GroupEval e;
    e.feasible = true;
    e.buffer_bytes = 16 * ws(rng);
    e.isoa = {0};
    in.r.evals.push_back(e);
  }
  return in;
}

struct Item {
  int first, last;
  int64_t floor, size, saved;
};

// The best saving over every subset and order (Settle-style placement).
int64_t BruteForce(const Instance& in, int64_t* candidates) {
  const int n = static_cast<int>(in.r.groups.size());
  std::vector<Item> items;
  for (int v = 0; v < n; ++v) {
    const FTensor& t = in.fg.tensors[v];
    if (t.graph_output || t.consumers.empty()) continue;
    Item it{v, t.consumers.back(), 0, t.bytes, t.bytes * (1 + static_cast<int64_t>(t.consumers.size()))};
    for (int k = it.first; k <= it.last; ++k) it.floor = std::max(it.floor, in.r.evals[k].buffer_bytes);
    if (it.floor + it.size <= in.m.buffer_bytes) items.push_back(it);
  }
  *candidates = static_cast<int64_t>(items.size());
  int64_t best = 0;
  for (uint32_t mask = 0; mask < (1u << items.size()); ++mask) {
    std::vector<int> sel;
    int64_t saved = 0;
    for (size_t i = 0; i < items.size(); ++i)
      if (mask >> i & 1) {
        sel.push_back(static_cast<int>(i));
        saved += items[i].saved;
      }
    if (saved <= best) continue;
    bool ok = false;
    do {
      std::vector<int64_t> at(items.size(), 0);
      ok = true;
      for (size_t a = 0; a < sel.size() && ok; ++a) {
        const Item& x = items[sel[a]];
        int64_t o = x.floor;
        for (size_t b = 0; b < a; ++b) {
          const Item& y = items[sel[b]];
          if (x.first <= y.last && y.first <= x.last) o = std::max(o, at[sel[b]] + y.size);
        }
        at[sel[a]] = o;
        ok = o + x.size <= in.m.buffer_bytes;
      }
    } while (!ok && std::next_permutation(sel.begin(), sel.end()));
    if (ok) best = saved;
  }
  return best;
}

TEST(FusionSpill, IlpMatchesBruteForce) {
  std::mt19937 rng(1234);
  int nontrivial = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Instance in = RandomInstance(rng, 5 + trial % 4);
    int64_t cands = 0;
    const int64_t best = BruteForce(in, &cands);
    ResidencyOptions o;
    o.alignment = 16;
    auto res = ChooseKeptMaps(in.fg, in.m, in.r, o);
    ASSERT_TRUE(res.ok()) << res.status().message();
    EXPECT_EQ(res->candidates, cands) << trial;
    EXPECT_EQ(res->saved_bytes, best) << trial;
    EXPECT_TRUE(res->proved_optimal) << trial;
    nontrivial += res->maps.size() < static_cast<size_t>(cands);
    // The placement: floors, capacity, no overlap between maps sharing a group.
    for (const KeptMap& a : res->maps) {
      for (int k = a.first_group; k <= a.last_group; ++k) EXPECT_GE(a.offset, in.r.evals[k].buffer_bytes);
      EXPECT_LE(a.offset + a.slot_bytes, in.m.buffer_bytes);
      EXPECT_EQ(a.offset % 16, 0);
      for (const KeptMap& b : res->maps)
        if (&a != &b && a.first_group <= b.last_group && b.first_group <= a.last_group) {
          EXPECT_TRUE(a.offset + a.slot_bytes <= b.offset || b.offset + b.slot_bytes <= a.offset);
        }
    }
  }
  EXPECT_GT(nontrivial, 10);  // the budget binds: not every candidate fits
}

TEST(FusionSpill, NothingKeptWhenWorkingSetsFillTheBuffer) {
  std::mt19937 rng(7);
  Instance in = RandomInstance(rng, 6);
  for (GroupEval& e : in.r.evals) e.buffer_bytes = in.m.buffer_bytes;
  auto res = ChooseKeptMaps(in.fg, in.m, in.r, {});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->candidates, 0);
  EXPECT_TRUE(res->maps.empty());
  EXPECT_EQ(res->saved_bytes, 0);
}

}  // namespace
}  // namespace sramplan::fusion
