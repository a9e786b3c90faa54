#include "placement/problem_csv.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::placement {
namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  size_t begin = 0;
  while (true) {
    size_t comma = line.find(',', begin);
    fields.push_back(
        Trim(line.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return fields;
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && begin != end;
}

}  // namespace

StatusOr<PlacementProblem> ParseProblemCsv(const std::string& text, const std::string& name) {
  static const std::vector<std::string> kColumns = {"id", "lower", "upper", "size", "offset"};
  PlacementProblem p;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  size_t columns = 0;  // 0 until the header is read
  std::unordered_map<int64_t, int> line_of_id;
  int64_t total_bytes = 0;
  auto error = [&](const std::string& what) {
    return InvalidArgument(name + ":" + std::to_string(line_no) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    if (Trim(line).empty()) continue;
    std::vector<std::string> fields = SplitFields(line);
    if (columns == 0) {
      for (auto& f : fields) f = ToLower(f);
      bool ok = (fields.size() == 4 || fields.size() == 5);
      for (size_t i = 0; ok && i < fields.size(); ++i) ok = fields[i] == kColumns[i];
      if (!ok)
        return error("expected the header 'id,lower,upper,size' (optionally ',offset'), got '" +
                     Trim(line) + "'");
      columns = fields.size();
      continue;
    }
    if (fields.size() > columns)
      return error("too many columns: expected " + std::to_string(columns) + " (" +
                   (columns == 4 ? "id,lower,upper,size" : "id,lower,upper,size,offset") +
                   "), got " + std::to_string(fields.size()));
    if (fields.size() < columns)
      return error("too few columns: expected " + std::to_string(columns) + ", got " +
                   std::to_string(fields.size()));
    int64_t v[5] = {0, 0, 0, 0, 0};
    for (size_t c = 0; c < columns; ++c)
      if (!ParseInt(fields[c], &v[c]))
        return error("column '" + kColumns[c] + "' is not an integer: '" + fields[c] + "'");
    const int64_t id = v[0], lower = v[1], upper = v[2], size = v[3];
    if (size < 0)
      return error("negative size " + std::to_string(size) + " (buffer id " + std::to_string(id) +
                   ")");
    if (size > kMaxBytes)
      return error("size " + std::to_string(size) + " is larger than the supported maximum " +
                   std::to_string(kMaxBytes) + " (buffer id " + std::to_string(id) + ")");
    if (upper <= lower)
      return error("upper (" + std::to_string(upper) + ") must be greater than lower (" +
                   std::to_string(lower) + "): lifetimes are half-open [lower, upper) (buffer id " +
                   std::to_string(id) + ")");
    if (columns == 5 && v[4] < 0)
      return error("negative offset " + std::to_string(v[4]) + " (buffer id " + std::to_string(id) +
                   ")");
    auto [it, inserted] = line_of_id.emplace(id, line_no);
    if (!inserted)
      return error("duplicate id " + std::to_string(id) + " (first used on line " +
                   std::to_string(it->second) + ")");
    total_bytes += size;
    if (total_bytes > kMaxBytes)
      return error("the sizes add up to more than the supported maximum " +
                   std::to_string(kMaxBytes) + " bytes");
    p.ids.push_back(id);
    p.lowers.push_back(lower);
    p.uppers.push_back(upper);
    p.requests.push_back({static_cast<int>(p.requests.size()), size, 1, 0, 0, {}});
    if (columns == 5) p.offsets.push_back(v[4]);
  }
  if (columns == 0) {
    line_no = std::max(line_no, 1);
    return error("empty file: expected the header 'id,lower,upper,size'");
  }
  // Coordinate compression: [lower, upper) -> steps [index(lower), index(upper) - 1].
  std::vector<int64_t> points(p.lowers);
  points.insert(points.end(), p.uppers.begin(), p.uppers.end());
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto index = [&](int64_t v) {
    return static_cast<int>(std::lower_bound(points.begin(), points.end(), v) - points.begin());
  };
  for (size_t i = 0; i < p.requests.size(); ++i) {
    p.requests[i].first_step = index(p.lowers[i]);
    p.requests[i].last_step = index(p.uppers[i]) - 1;
  }
  return p;
}

StatusOr<PlacementProblem> ReadProblemCsvFile(const std::string& path) {
  std::string text, err;
  if (!ReadFileToString(path, &text, &err)) return NotFound(err);
  return ParseProblemCsv(text, path);
}

std::string FormatSolutionCsv(const PlacementProblem& problem, const Placement& placement) {
  SP_CHECK(placement.offsets.size() == problem.requests.size());
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.requests.size(); ++i) {
    out += std::to_string(problem.ids[i]) + "," + std::to_string(problem.lowers[i]) + "," +
           std::to_string(problem.uppers[i]) + "," + std::to_string(problem.requests[i].bytes) +
           "," + std::to_string(placement.offsets[i]) + "\n";
  }
  return out;
}

Status WriteSolutionCsvFile(const std::string& path, const PlacementProblem& problem,
                            const Placement& placement) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return NotFound("cannot write '" + path + "'");
  out << FormatSolutionCsv(problem, placement);
  out.close();
  if (!out) return NotFound("error while writing '" + path + "'");
  return Status::Ok();
}

}  // namespace sramplan::placement
