#include "blocking/search_memo.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "blocking/optimizer.h"

namespace sramplan::blocking {

namespace {

void PutInt(std::string* out, uint64_t v) {  // 7 bits a byte, low first (a prefix-free code)
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

PrefixMemo::PrefixMemo(const Layer& layer, int64_t limit) : limit_(limit) {
  // Every loop token "D:s" the layer can have, sorted as strings: its rank orders prefixes with the
  // same number of loops as their texts (a token that is a string prefix of another, "X:3" of
  // "X:32", comes first in both orders: the text continues with ' ' or ends).
  std::vector<std::pair<std::string, std::pair<int, int>>> tokens;
  for (Dim d : kAllDims) {
    const int di = static_cast<int>(d);
    divs_[di] = Divisors(layer.extent(d));
    rank_[di].assign(divs_[di].size(), 0);
    for (size_t i = 0; i < divs_[di].size(); ++i)
      tokens.push_back({std::string(DimName(d)) + ":" + std::to_string(divs_[di][i]), {di, static_cast<int>(i)}});
  }
  std::sort(tokens.begin(), tokens.end());
  for (size_t r = 0; r < tokens.size(); ++r)
    rank_[tokens[r].second.first][tokens[r].second.second] = static_cast<uint32_t>(r);
}

int PrefixMemo::DivisorIndex(Dim d, int64_t size) const {
  const std::vector<int64_t>& v = divs_[static_cast<int>(d)];
  return static_cast<int>(std::lower_bound(v.begin(), v.end(), size) - v.begin());
}

void PrefixMemo::Key(const Extents& cur, const std::array<int, kNumDims>& count, Dim last, const Packing& pk,
                     std::string* key) const {
  key->clear();
  for (Dim d : kAllDims) {
    PutInt(key, static_cast<uint64_t>(DivisorIndex(d, cur[static_cast<int>(d)])));
    PutInt(key, static_cast<uint64_t>(count[static_cast<int>(d)]));
  }
  PutInt(key, static_cast<uint64_t>(last));
  for (int ti = 0; ti < kNumOperands; ++ti) {
    const std::vector<BufferUse>& ch = pk.chains[ti];
    PutInt(key, pk.exhausted[ti] ? 1 : 0);
    PutInt(key, ch.size());
    for (size_t i = 0; i + 1 < ch.size(); ++i) {  // the backing store (last) is the same in every prefix
      PutInt(key, static_cast<uint64_t>(ch[i].level));
      PutInt(key, static_cast<uint64_t>(ch[i].elems));
      PutInt(key, static_cast<uint64_t>(ch[i].fills));
    }
  }
}

void PrefixMemo::Rank(const BlockingString& prefix, std::string* rank) const {
  rank->clear();
  for (const Loop& l : prefix) {
    uint32_t r = rank_[static_cast<int>(l.dim)][DivisorIndex(l.dim, l.size)];
    for (int shift = 24; shift >= 0; shift -= 8) rank->push_back(static_cast<char>((r >> shift) & 0xff));  // big-endian
  }
}

bool PrefixMemo::SeenSmaller(const std::string& key, const std::string& rank) {
  const uint64_t hash = std::hash<std::string>{}(key);
  Shard& sh = shards_[hash % kShards];
  std::lock_guard<std::mutex> lock(sh.mu);
  if (sh.slots.empty()) sh.slots.resize(1 << 12);
  size_t mask = sh.slots.size() - 1;
  size_t i = (hash >> 8) & mask;
  for (; sh.slots[i].entry >= 0; i = (i + 1) & mask) {
    if (sh.slots[i].hash != hash) continue;
    Entry& e = sh.entries[static_cast<size_t>(sh.slots[i].entry)];
    if (e.key_len != key.size() || sh.keys.compare(e.key_off, e.key_len, key) != 0) continue;
    // Same number of loops (the key holds the counts): byte order of the ranks = text order.
    if (sh.ranks.compare(e.rank_off, e.rank_len, rank) < 0) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    sh.ranks.replace(e.rank_off, e.rank_len, rank);  // the same length
    return false;
  }
  // Reserve a place first: a check and a later increment would let two threads (in different
  // shards) both pass the limit.
  if (size_.fetch_add(1, std::memory_order_relaxed) >= limit_) {
    size_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  sh.slots[i] = {hash, static_cast<int64_t>(sh.entries.size())};
  sh.entries.push_back({sh.keys.size(), static_cast<uint32_t>(key.size()), static_cast<uint32_t>(rank.size()), sh.ranks.size()});
  sh.keys += key;
  sh.ranks += rank;
  if (sh.entries.size() * 2 > sh.slots.size()) {  // grow: at most half the slots used
    std::vector<Slot> old = std::move(sh.slots);
    sh.slots.assign(old.size() * 2, Slot{});
    mask = sh.slots.size() - 1;
    for (const Slot& s : old) {
      if (s.entry < 0) continue;
      size_t j = (s.hash >> 8) & mask;
      while (sh.slots[j].entry >= 0) j = (j + 1) & mask;
      sh.slots[j] = s;
    }
  }
  return false;
}

int64_t PrefixMemo::size() const { return size_.load(); }
int64_t PrefixMemo::hits() const { return hits_.load(); }

}  // namespace sramplan::blocking
