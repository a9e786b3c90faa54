// Human and machine outputs: terminal summary, ASCII memory map, CSV files, inspect table.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "plan/plan.h"

namespace sramplan::report {

// Per-op table of `sramplan inspect`.
std::string InspectTable(const ir::Graph& g);
// Verdict, used vs lower bound vs capacity per level, overhead, traffic, energy.
std::string PlanSummary(const plan::Plan& p);
// When a plan does not fit: per level required / available / excess, the peak step and the tensors
// live there (largest first).
std::string DoesNotFitDetail(const plan::Plan& p);
// Address-over-steps map of the activation arena, one row per step, `width` columns of address.
std::string MemoryMap(const plan::Plan& p, int width = 64);
// Several strategies' plans of one model side by side.
std::string CompareTable(const std::vector<plan::Plan>& plans);
// summary.csv (one row per plan) and per_layer.csv (one row per step and plan).
std::string SummaryCsv(const std::vector<plan::Plan>& plans);
std::string PerLayerCsv(const ir::Graph& g, const std::vector<plan::Plan>& plans);
// Bytes occupied in `level` at each step (the union of the live buffers' ranges, so bytes shared by
// a declared overlap count once); one entry per step (at least one).
std::vector<int64_t> LiveBytesPerStep(const plan::Plan& p, const std::string& level);

}  // namespace sramplan::report
