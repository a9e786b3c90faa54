// Transposition table of the exact blocking search (optimizer.cc): two prefixes that leave the
// search in the same state have the same completions at the same energies, so only one of them
// needs its subtree searched.
//
// The state of a prefix (its key): the block size and loop count of every dimension and the last
// loop's dimension (they decide which loops may follow), and the packing (pack_step.h): by operand,
// whether it is exhausted and its placed buffers' level, tile size and fill count. Pack places the
// buffers of a longer string from that state alone (the free space of a level is its capacity minus
// the placed buffers; a buffer's fills grow with a later loop when it already has fills > 1 or the
// loop indexes its operand; its cut is not used otherwise: fills > 1 exactly when an indexing loop
// follows it), and Evaluate's energy depends only on the final chains. So equal keys mean equal
// completion sets with equal energies, and between two such prefixes the one with the smaller text
// gives every tie its smaller text (completions share the suffix): the search keeps that one.
//
// Thread-safe (sharded, one mutex per shard). Holds at most `limit` keys; past it, lookups still
// prune but new keys are not stored (the search stays exact, it only revisits more).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "blocking/layer.h"
#include "blocking/model.h"

namespace sramplan::blocking {

class PrefixMemo {
 public:
  PrefixMemo(const Layer& layer, int64_t limit);
  // The key of a prefix ending with a loop over `last` with block sizes `cur`, loop counts `count`
  // and packing `pk`, written into *key (reused between calls).
  void Key(const Extents& cur, const std::array<int, kNumDims>& count, Dim last, const Packing& pk,
           std::string* key) const;
  // The text rank of `prefix` (compares as ToString(prefix) does), written into *rank.
  void Rank(const BlockingString& prefix, std::string* rank) const;
  // True when a prefix with this key and a smaller rank was seen (the caller drops its subtree);
  // otherwise records (key, rank) and returns false.
  bool SeenSmaller(const std::string& key, const std::string& rank);
  int64_t size() const;
  int64_t hits() const;

 private:
  // One shard: open addressing over (64-bit hash, entry index) slots, the keys and ranks in arenas
  // (a hash match is confirmed by comparing the key bytes).
  struct Entry {
    uint64_t key_off;
    uint32_t key_len;
    uint32_t rank_len;
    uint64_t rank_off;
  };
  struct Slot {
    uint64_t hash = 0;
    int64_t entry = -1;
  };
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots;
    std::vector<Entry> entries;
    std::string keys, ranks;
  };
  static constexpr int kShards = 16;
  std::array<std::vector<int64_t>, kNumDims> divs_;
  std::array<std::vector<uint32_t>, kNumDims> rank_;  // by dimension, by divisor index: the token's rank
  int64_t limit_;
  std::array<Shard, kShards> shards_;
  std::atomic<int64_t> size_{0}, hits_{0};
  int DivisorIndex(Dim d, int64_t size) const;
};

}  // namespace sramplan::blocking
