// Placement problems as CSV (the format of MiniMalloc's benchmark instances):
//
//   id,lower,upper,size
//   0,995328,1000448,656384
//
// one buffer per line, live over the half-open interval [lower, upper), `size` bytes. Ids are
// arbitrary distinct integers. Solutions add an `offset` column: id,lower,upper,size,offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "placement/placement.h"
#include "support/status.h"

namespace sramplan::placement {

struct PlacementProblem {
  // One request per data line, in file order; request i has id i, alignment 1 and inclusive steps
  // obtained by compressing the distinct lower/upper values (two requests overlap in time exactly
  // when their [lower, upper) intervals intersect).
  std::vector<BufferRequest> requests;
  // The file's values, per request, kept for writing the solution.
  std::vector<int64_t> ids;
  std::vector<int64_t> lowers;
  std::vector<int64_t> uppers;
  // Filled when the file has an `offset` column (a solution file): offsets per request.
  std::vector<int64_t> offsets;
};

// Parses CSV text; `name` prefixes error messages ("A.csv:7: ..."). The header must be
// `id,lower,upper,size` (optionally followed by `,offset`); blank lines are ignored. Errors name
// the line and what is wrong: a missing or non-integer value, a negative size, upper <= lower, a
// duplicate id, too many or too few columns.
StatusOr<PlacementProblem> ParseProblemCsv(const std::string& text, const std::string& name);
StatusOr<PlacementProblem> ReadProblemCsvFile(const std::string& path);

// `id,lower,upper,size,offset`, one line per request in problem order.
std::string FormatSolutionCsv(const PlacementProblem& problem, const Placement& placement);
Status WriteSolutionCsvFile(const std::string& path, const PlacementProblem& problem,
                            const Placement& placement);

}  // namespace sramplan::placement
