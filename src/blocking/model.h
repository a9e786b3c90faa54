// The analytical model of a blocking string on a memory hierarchy (paper Sec. 3.1-3.5).
//
// A blocking string is the loop nest, innermost loop first; each loop has a dimension and the range
// it covers (the paper's X0, X1, ...: a loop of size s over a dimension whose inner loops cover b
// runs s / b iterations). Sizes of a dimension grow outwards, each divides the next, and the last
// loop of a dimension covers its whole extent; dimensions of extent 1 need no loop.
//
// Buffers (the reuse rule, Table 2): cut c (the loops 0..c-1 inside it) gets a buffer of operand t
// when loop c does not index t and loop c-1 does (the start of a run of loops that reuse t's tile:
// K loops -> input buffer, C/Fw/Fh loops -> output buffer, X/Y/N loops -> kernel buffer), and the
// input also gets one after an Fw or Fh loop (the overlapping windows). A buffer holds the tile of
// its operand spanned by the loops inside it and is refilled each time that tile changes:
// fills = the product of the trip counts from the first loop at or outside c that indexes t.
//
// Packing (Sec. 3.5): buffers are placed innermost cut first (ties: larger tile first) into the
// lowest level, at or above the operand's previous buffer, that holds the operand and has room; an
// operand's inner buffer that lands in the same level as its next buffer is dropped (the outer one
// holds its data); a buffer that finds no room goes to the backing level (the last level holding
// the operand, which holds all of it), and so do the operand's outer buffers.
//
// Accesses, in words: every MAC reads its input and kernel word and reads and writes its partial
// sum in the operand's innermost holder. Each fill of an input or kernel buffer reads its tile from
// the next holder and writes it into the buffer. An output buffer writes each tile back to the next
// holder when it leaves (reading it from the buffer) and reads it from there when it comes back
// (a first visit starts from zero, no access). Energy = sum over levels of reads x read energy +
// writes x write energy, plus MACs x MAC energy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blocking/hierarchy.h"
#include "blocking/layer.h"
#include "support/status.h"

namespace sramplan::blocking {

struct Loop {
  Dim dim = Dim::kX;
  int64_t size = 1;  // the range of `dim` this loop covers
  bool operator==(const Loop&) const = default;
};
using BlockingString = std::vector<Loop>;  // innermost first

// "Fw:11 Fh:11 X:8 C:16 K:16 Y X C K" (a bare dimension covers its whole extent), innermost first.
std::string ToString(const BlockingString& s);
StatusOr<BlockingString> ParseBlockingString(const std::string& text, const Layer& layer);
// The string's rules (above); the error names the loop and the fix.
Status ValidateString(const Layer& layer, const BlockingString& s);
// Trip count of every loop.
std::vector<int64_t> Trips(const BlockingString& s);
// Block sizes of every dimension inside cut c (loops 0..c-1), for c = 0..size().
std::vector<Extents> CutBlocks(const BlockingString& s);

// One holder of an operand's data: a buffer at cut `cut`, or the backing store (cut = loops).
struct BufferUse {
  Operand operand = Operand::kInput;
  int cut = 0;
  int level = 0;
  int64_t elems = 0;  // tile size in words
  int64_t fills = 0;  // times the tile is (re)loaded (1 for the backing store)
  int64_t reads = 0;  // words read from this holder
  int64_t writes = 0;
  bool backing = false;
};

struct LevelUse {
  int64_t used_bytes = 0;
  int64_t reads = 0, writes = 0;
  double energy_pj = 0;
};

struct Evaluation {
  std::vector<BufferUse> buffers;  // by operand, each operand's chain innermost first
  std::vector<LevelUse> levels;    // by hierarchy level
  int64_t macs = 0;
  double memory_pj = 0, mac_pj = 0, total_pj = 0;
  double operand_pj[kNumOperands] = {0, 0, 0};  // memory energy by operand (IB / KB / OB energy)
  bool fits = true;  // every level's used bytes within its capacity
};

// Evaluates a valid string (ValidateString) on a valid hierarchy.
Evaluation Evaluate(const Layer& layer, const Hierarchy& h, const BlockingString& s);

// Packing of the buffers the reuse rule implies: each operand's chain, innermost first, ending with
// its backing store (fills and accesses not yet counted); exhausted[t]: some buffer of t found no
// room, so t's outer buffers all go to the backing store; ptr[t]: the lowest level t's next buffer
// may use.
struct Packing {
  std::vector<std::vector<BufferUse>> chains;
  bool exhausted[kNumOperands] = {false, false, false};
  int ptr[kNumOperands] = {0, 0, 0};
  std::vector<int64_t> free_bytes;  // by level: capacity minus the placed buffers
};
Packing Pack(const Layer& layer, const Hierarchy& h, const BlockingString& s);
// Times the tile of operand t's buffer at cut `cut` is loaded (product of the trip counts from the
// first loop at or outside `cut` that indexes t; 1 when none does).
int64_t Fills(const Layer& layer, const BlockingString& s, const std::vector<int64_t>& trips, int cut, Operand t);
int64_t Fills(const BlockingString& s, const std::vector<int64_t>& trips, int cut, Operand t);  // a conv layer

// The cuts where the reuse rule puts a buffer of operand t (before packing), innermost first.
// Pooling and LRN (layer.h) have no kernel buffers; their K loops index the input.
std::vector<int> ImpliedCuts(const Layer& layer, const BlockingString& s, Operand t);
std::vector<int> ImpliedCuts(const BlockingString& s, Operand t);  // a conv layer

}  // namespace sramplan::blocking
