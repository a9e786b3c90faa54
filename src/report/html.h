// The HTML report (`plan/verify/place --html FILE`): one self-contained page, inline SVG and CSS and a
// little inline JS for hover, nothing fetched. Per plan and memory level an address-by-step chart
// (every buffer one <rect class="buf"> with data-buffer, data-level, data-offset, data-bytes,
// data-first, data-last; the second piece of a buffer that wraps a circular pool is a
// <rect class="buf-wrap">), spills/reloads as arrows to the off-chip lane, declared overlaps,
// circular pools, fused groups and their tiles, the peak step and the tensors live there; a table
// comparing the plans when there are several; per-step RAM and off-chip bytes as bar charts.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace sramplan::report {

struct HtmlOptions {
  std::string title;               // page heading; empty: "<model> on <target>"
  std::vector<std::string> notes;  // lines shown under the heading (e.g. verify's results)
};

// The page for `plans` (one, or several strategies of one model). Deterministic: the same plans
// give the same bytes.
std::string HtmlReport(const std::vector<plan::Plan>& plans, const HtmlOptions& options = {});

}  // namespace sramplan::report
