// The exact search's transposition table (search_memo.h) and its per-block cache of the
// outermost-dimensions bound (optimizer.cc): with the table on, off or nearly full, and on one or
// two threads, the search returns the same string, and its energy equals a brute-force enumeration
// of every string on small layers.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/optimizer.h"
#include "blocking/pack_step.h"
#include "blocking/search_memo.h"
#include "target/target.h"
#include "blocking/blocking_strings.h"

namespace sramplan::blocking {
namespace {

Hierarchy Shared3() {
  Hierarchy h;
  h.name = "shared3";
  h.levels = {Level{"l0", 12, {true, true, true}, 0.3, 0.35, false}, Level{"l1", 48, {true, true, true}, 1.2, 1.3, false},
              Level{"l2", 160, {true, true, true}, 5.0, 5.5, false},
              Level{"dram", int64_t{1} << 40, {true, true, true}, 320.0, 320.0, true}};
  return h;
}

Hierarchy TinySplit() {
  auto t = target::LoadTarget("diannao");
  auto h = HierarchyFromTarget(*t);
  h->levels[0].capacity_bytes = 24;
  h->levels[1].capacity_bytes = 64;
  h->levels[2].capacity_bytes = 24;
  return *h;
}

TEST(BlockingMemo, SearchWithTableEqualsBruteForceAndTheSearchWithout) {
  std::vector<Layer> layers = {ConvLayer("c", 4, 4, 4, 6, 2, 2), ConvLayer("s2", 3, 2, 4, 4, 3, 2, 1, 2, 2),
                               ConvLayer("square", 4, 4, 2, 2, 2, 2), FcLayer("fc", 8, 4, 2),
                               PoolLayer("pool", LayerKind::kMaxPool, 4, 2, 4, 2, 2), LrnLayer("lrn", 4, 4, 8, 3)};
  int64_t total_hits = 0;
  for (const Layer& l : layers)
    for (const Hierarchy& h : {TinySplit(), Shared3()}) {
      SCOPED_TRACE(l.name + " on " + h.name);
      const double brute = testing::BruteForceBest(l, h);
      SearchOptions opt;
      opt.time_limit_s = 120;
      auto on = ExactSearch(l, h, opt);
      SearchOptions off_opt = opt;
      off_opt.memo_limit = 0;
      auto off = ExactSearch(l, h, off_opt);
      SearchOptions full_opt = opt;  // the table fills after a few states: still exact
      full_opt.memo_limit = 5;
      auto full = ExactSearch(l, h, full_opt);
      SearchOptions one_opt = opt;
      one_opt.threads = 1;
      auto one = ExactSearch(l, h, one_opt);
      SearchOptions one_off_opt = one_opt;
      one_off_opt.memo_limit = 0;
      auto one_off = ExactSearch(l, h, one_off_opt);
      ASSERT_TRUE(on.ok() && off.ok() && full.ok() && one.ok() && one_off.ok());
      for (const SearchResult* r : {&*on, &*off, &*full, &*one}) {
        EXPECT_TRUE(r->proved_optimal);
        EXPECT_DOUBLE_EQ(r->eval.total_pj, brute) << ToString(r->best);
        EXPECT_EQ(ToString(r->best), ToString(on->best));  // the same tie-break
      }
      EXPECT_EQ(off->memo_hits, 0);
      EXPECT_EQ(off->memo_states, 0);
      EXPECT_LE(full->memo_states, 5);
      // Node counts compared on one thread: with two, which thread finds the incumbent first (and so
      // what the bound prunes) depends on the scheduler.
      EXPECT_LE(one->nodes, one_off->nodes);
      total_hits += on->memo_hits;
    }
  EXPECT_GT(total_hits, 0);  // the table did drop prefixes
}

// Prefixes of the same length compare by rank bytes exactly as by ToString (the tie-break).
TEST(BlockingMemo, RankOrdersLikeText) {
  Layer l = ConvLayer("c", 32, 30, 12, 100, 3, 3);
  PrefixMemo memo(l, 16);
  std::mt19937_64 rng(7);
  auto random_prefix = [&](int n) {
    BlockingString s;
    for (int i = 0; i < n; ++i) {
      Dim d = kAllDims[rng() % 6];
      std::vector<int64_t> dv = Divisors(l.extent(d));
      s.push_back({d, dv[rng() % dv.size()]});
    }
    return s;
  };
  int compared = 0;
  for (int it = 0; it < 3000; ++it) {
    int n = 1 + static_cast<int>(rng() % 5);
    BlockingString a = random_prefix(n), b = random_prefix(n);
    if (it % 3 == 0) {  // share a start so that later tokens decide ("X:3" against "X:32")
      b = a;
      b.back() = random_prefix(1)[0];
    }
    std::string ra, rb;
    memo.Rank(a, &ra);
    memo.Rank(b, &rb);
    const std::string ta = ToString(a), tb = ToString(b);
    EXPECT_EQ(ra < rb, ta < tb) << ta << " | " << tb;
    EXPECT_EQ(ra == rb, ta == tb) << ta << " | " << tb;
    ++compared;
  }
  EXPECT_EQ(compared, 3000);
}

// Two prefixes with the same key have the same energy for every completion (the table's premise):
// every prefix of up to five loops of a small layer (two loops per dimension at most, never two
// adjacent loops of one dimension) is grouped by key, and each is completed like the first of its
// group, with every order of its missing dimensions as whole loops.
TEST(BlockingMemo, EqualKeysHaveEqualCompletions) {
  Layer l = ConvLayer("c", 4, 2, 4, 6, 2, 1);
  for (const Hierarchy& h : {TinySplit(), Shared3()}) {
    PrefixMemo memo(l, 1 << 20);
    std::map<std::string, BlockingString> first;  // key -> the first prefix with it
    int pairs = 0, completions = 0;
    BlockingString s;
    Extents cur = {1, 1, 1, 1, 1, 1, 1};
    std::array<int, kNumDims> count{};
    std::function<void()> rec = [&]() {
      if (!s.empty()) {
        std::string key;
        memo.Key(cur, count, s.back().dim, Pack(l, h, s), &key);
        auto [it, fresh] = first.emplace(key, s);
        if (!fresh) {
          ++pairs;
          std::vector<Dim> rest;
          for (Dim d : kAllDims)
            if (cur[static_cast<int>(d)] != l.extent(d)) rest.push_back(d);
          std::sort(rest.begin(), rest.end());
          do {
            BlockingString a = it->second, b = s;
            for (Dim d : rest) {
              a.push_back({d, l.extent(d)});
              b.push_back({d, l.extent(d)});
            }
            ++completions;
            EXPECT_DOUBLE_EQ(Evaluate(l, h, a).total_pj, Evaluate(l, h, b).total_pj) << ToString(a) << " | " << ToString(b);
          } while (std::next_permutation(rest.begin(), rest.end()));
        }
      }
      if (s.size() == 5) return;
      for (Dim d : kAllDims) {
        const int di = static_cast<int>(d);
        if (cur[di] == l.extent(d) || count[di] >= 2 || (!s.empty() && s.back().dim == d)) continue;
        for (int64_t v : Divisors(l.extent(d))) {
          if (v <= cur[di] || v % cur[di] != 0 || (count[di] == 1 && v != l.extent(d))) continue;
          const int64_t was = cur[di];
          s.push_back({d, v});
          cur[di] = v;
          ++count[di];
          rec();
          --count[di];
          cur[di] = was;
          s.pop_back();
        }
      }
    };
    rec();
    EXPECT_GT(pairs, 100) << h.name;
    EXPECT_GT(completions, pairs) << h.name;
  }
}

}  // namespace
}  // namespace sramplan::blocking
