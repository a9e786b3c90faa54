// ISOA read inside an Optimus group, executed (int8): the source op computes its output T_c
// channels at a time into a T_c-channel window, and every reader (a Conv with group 1 whose row
// windows do not overlap between strips, fusion/isoa_rules.h) adds that input-channel slice to
// int32 partial sums of the rows it computes in the strip, in the global buffer; after the last
// slice the sums are requantised once (TFLite MultiplyByQuantizedMultiplier, as the kernels), so
// the outputs equal the unsplit convolution's bit for bit (integer sums do not depend on the order).
// float32 runs such groups with every channel held (its sums would depend on the order).
//
// Internal to exec_tiled.cc: schedule marks, the strip check, and the per-slice arithmetic on the
// call records BuildCallsS8 makes for the strip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/exec_tiled.h"
#include "exec/kernels.h"
#include "plan/plan.h"

namespace sramplan::exec {

// Marks the group's ISOA outputs that its ops read and that the executor runs sliced (sources
// and readers as in fusion/isoa_rules.h), in `ts` (tensors: sliced, slice_bytes; ops: roles).
void MarkIsoaSlices(const ir::Graph& g, const plan::TiledGroup& tg, TiledSchedule* ts);

// Before the backward pass reaches `source` (target[x] of its sliced output x final): raises its
// readers' targets so that they consume every row of x the strip computes (the slices are gone
// after the strip).
void RaiseIsoaReaders(const TiledSchedule& ts, int source, std::vector<int64_t>* target);
// Every reader's input rows of a strip lie in the rows its source computes in that strip (a slice
// is overwritten by the next one); kMismatch naming the ops otherwise.
Status CheckIsoaStrips(const TiledSchedule& ts, const std::string& where);

// Lays out the readers' int32 sums from `cursor` (rows of their largest run); returns the new cursor.
int64_t LayoutIsoaSums(const ir::Graph& g, TiledSchedule* ts, int64_t cursor);

// Channels [c0, c0 + n) of the source's output rows of the strip into `window` (rows of tc
// channels): a Conv (its weights, bias and requantisation from channel c0) or a channel Concat.
Status IsoaSourceSlice(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                       uint8_t* window, int64_t c0, int64_t n, int64_t tc);
// Adds channels [c0, c0 + n) (rows of tc channels from `slice`) to a reader's int32 sums.
Status IsoaAccumulate(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                      const uint8_t* slice, int64_t c0, int64_t n, int64_t tc, int32_t* sums);
// The reader's outputs from its sums (bias, requantisation, zero point, activation range).
Status IsoaFinish(const ir::Op& op, const OpCalls& calls, const std::vector<const uint8_t*>& in,
                  const int32_t* sums, uint8_t* out);

}  // namespace sramplan::exec
