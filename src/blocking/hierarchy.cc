#include "blocking/hierarchy.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "cost/hardware_model.h"
#include "support/json.h"
#include "support/strings.h"

namespace sramplan::blocking {

namespace {

constexpr double kTable3Kb[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
constexpr double kTable3[][4] = {
    {1.20, 0.93, 0.69, 0.57},     {1.54, 1.37, 0.91, 0.68},     {2.11, 1.68, 1.34, 0.90},
    {3.19, 2.71, 2.21, 1.33},     {4.36, 3.57, 2.66, 2.19},     {5.82, 4.80, 3.52, 2.64},
    {8.10, 7.51, 5.79, 4.67},     {11.66, 11.50, 8.46, 6.15},   {15.60, 15.51, 13.09, 8.99},
    {23.37, 23.24, 17.93, 15.76}, {36.32, 32.81, 28.88, 25.22}};
constexpr int kRows = 11;

bool NamedOnly(const std::string& lower, const char* tag) {
  std::string t = tag;
  return lower == t || lower.rfind(t + "_", 0) == 0;
}

}  // namespace

int Hierarchy::Backing(Operand t) const {
  for (int i = static_cast<int>(levels.size()) - 1; i >= 0; --i)
    if (levels[i].Holds(t)) return i;
  return -1;
}

int64_t Hierarchy::OnChipBytes() const {
  int64_t s = 0;
  for (const Level& l : levels)
    if (!l.off_chip) s += l.capacity_bytes;
  return s;
}

StatusOr<double> Table3PjPer16b(int64_t capacity_bytes, int width_bits) {
  int col = width_bits == 64 ? 0 : width_bits == 128 ? 1 : width_bits == 256 ? 2 : width_bits == 512 ? 3 : -1;
  if (col < 0)
    return InvalidArgument("width_bits = " + std::to_string(width_bits) +
                           " is not a word width of the energy table (Table 3); use 64, 128, 256 or 512");
  if (capacity_bytes <= 0) return InvalidArgument("capacity must be positive to look up its energy");
  double kb = static_cast<double>(capacity_bytes) / 1024.0;
  if (kb > 16 * 1024) return kDramPjPer16b;
  double lg = std::log2(kb);  // row r is at log2 = r
  int r = std::clamp(static_cast<int>(std::floor(lg)), 0, kRows - 2);
  double lo = kTable3[r][col], hi = kTable3[r + 1][col];
  double v = lo + (hi - lo) * (lg - r);
  return std::max(v, 0.4 * kTable3[0][col]);
}

double SramAreaMm2(int64_t capacity_bytes) {
  return 5.625 * static_cast<double>(capacity_bytes) / (1024.0 * 1024.0);
}

StatusOr<Hierarchy> HierarchyFromTarget(const target::Target& t) {
  SP_ASSIGN_OR_RETURN(cost::HardwareModel hw, cost::HardwareModel::From(t));
  Hierarchy h;
  h.name = t.name;
  h.word_bits = hw.compute().word_bits;
  h.mac_pj = hw.compute().mac_pj > 0 ? hw.compute().mac_pj : 1.0;
  for (const cost::LevelModel& lm : hw.levels()) {
    Level l;
    l.name = lm.name;
    l.capacity_bytes = lm.capacity * lm.instances;
    l.off_chip = lm.off_chip;
    std::string lower = ToLower(lm.name);
    bool ib = NamedOnly(lower, "ib"), kb = NamedOnly(lower, "kb"), ob = NamedOnly(lower, "ob");
    if (ib || kb || ob) {
      l.holds[0] = ib;
      l.holds[1] = kb;
      l.holds[2] = ob;
    } else {
      l.holds[0] = l.holds[2] = lm.holds_activations;
      l.holds[1] = lm.holds_weights;
    }
    double bytes = static_cast<double>(h.word_bytes());
    l.read_pj = lm.read_pj_per_byte * bytes;
    l.write_pj = lm.write_pj_per_byte * bytes;
    h.levels.push_back(l);
  }
  SP_RETURN_IF_ERROR(ValidateHierarchy(h).WithContext("target '" + t.name + "'"));
  return h;
}

static StatusOr<Level> ParseLevel(const JsonRef& l, int word_bits) {
  Level out;
  SP_RETURN_IF_ERROR(l.ExpectObject());
  SP_ASSIGN_OR_RETURN(out.name, l.String("name"));
  SP_ASSIGN_OR_RETURN(JsonRef cap, l.Field("capacity"));
  if (cap.is_string()) {
    SP_ASSIGN_OR_RETURN(std::string s, cap.AsString());
    if (ToLower(s) == "dram") {
      out.capacity_bytes = int64_t{1} << 50;
      out.off_chip = true;
    } else {
      StatusOr<int64_t> v = ParseSize(s);
      if (!v.ok()) return cap.Error(v.status().message());
      out.capacity_bytes = *v;
    }
  } else {
    SP_ASSIGN_OR_RETURN(out.capacity_bytes, cap.AsInt(0, int64_t{1} << 50));
  }
  if (out.capacity_bytes <= 0) return l.Child("capacity").Error("must be positive (bytes, \"2KiB\" or \"dram\")");
  SP_ASSIGN_OR_RETURN(bool off, l.BoolOr("off_chip", out.off_chip));
  out.off_chip = off;
  if (l.Has("holds")) {
    SP_ASSIGN_OR_RETURN(std::vector<std::string> holds, l.StringList("holds"));
    for (bool& b : out.holds) b = false;
    for (size_t i = 0; i < holds.size(); ++i) {
      int k = holds[i] == "input" ? 0 : holds[i] == "kernel" ? 1 : holds[i] == "output" ? 2 : -1;
      if (k < 0) return l.Child("holds")[i].Error("must be \"input\", \"kernel\" or \"output\", got \"" + holds[i].substr(0, 40) + "\"");
      out.holds[k] = true;
    }
  }
  double per16 = 0;
  if (l.Has("pj_per_16b")) {
    SP_ASSIGN_OR_RETURN(per16, l.Number("pj_per_16b", 0.0, 1e6));
  } else if (l.Has("width_bits")) {
    SP_ASSIGN_OR_RETURN(int64_t w, l.Int("width_bits", 1, 4096));
    StatusOr<double> e = Table3PjPer16b(out.capacity_bytes, static_cast<int>(w));
    if (!e.ok()) return l.Child("width_bits").Error(e.status().message());
    per16 = *e;
  } else if (out.off_chip) {
    per16 = kDramPjPer16b;
  } else {
    return l.Error("level '" + out.name + "' has no energy: give \"pj_per_16b\" or \"width_bits\" (64, 128, 256, 512)");
  }
  out.read_pj = out.write_pj = per16 * word_bits / 16.0;
  return out;
}

StatusOr<Hierarchy> ParseHierarchyJson(const std::string& text, const std::string& name) {
  SP_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text, "'" + name + "'"));
  JsonRef root(j);
  SP_RETURN_IF_ERROR(root.ExpectObject());
  Hierarchy h;
  SP_ASSIGN_OR_RETURN(h.name, root.StringOr("name", name));
  SP_ASSIGN_OR_RETURN(int64_t wb, root.IntOr("word_bits", 16, 1, 64));
  if (wb % 8 != 0) return root.Child("word_bits").Error("must be a multiple of 8 (8, 16, 32, 64), got " + std::to_string(wb));
  h.word_bits = static_cast<int>(wb);
  SP_ASSIGN_OR_RETURN(h.mac_pj, root.NumberOr("mac_pj", 1.0, 0.0, 1e6));
  SP_ASSIGN_OR_RETURN(JsonRef levels, root.Array("blocking_levels"));
  for (size_t i = 0; i < levels.size(); ++i) {
    SP_ASSIGN_OR_RETURN(Level l, ParseLevel(levels[i], h.word_bits));
    h.levels.push_back(l);
  }
  SP_RETURN_IF_ERROR(ValidateHierarchy(h).WithContext("'" + name + "'"));
  return h;
}

StatusOr<Hierarchy> LoadHierarchy(const std::string& spec) {
  std::ifstream in(spec, std::ios::binary);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.find("\"blocking_levels\"") != std::string::npos) return ParseHierarchyJson(text, spec);
  }
  SP_ASSIGN_OR_RETURN(target::Target t, target::LoadTarget(spec));
  return HierarchyFromTarget(t);
}

Status ValidateHierarchy(const Hierarchy& h) {
  if (h.levels.empty()) return InvalidArgument("the hierarchy has no levels; add at least one (the backing store)");
  if (h.word_bits % 8 != 0 || h.word_bits <= 0 || h.word_bits > 64)
    return InvalidArgument("word_bits = " + std::to_string(h.word_bits) + " is not a known word width; use 8, 16, 32 or 64");
  for (size_t i = 0; i < h.levels.size(); ++i) {
    const Level& l = h.levels[i];
    if (l.capacity_bytes <= 0)
      return InvalidArgument("levels[" + std::to_string(i) + "] '" + l.name + "': capacity must be positive");
    if (!(l.read_pj > 0) || !(l.write_pj > 0))
      return InvalidArgument("levels[" + std::to_string(i) + "] '" + l.name +
                             "' has no energy per access; give read_pj_per_byte (target) or pj_per_16b / width_bits");
  }
  int held = 0;
  for (bool b : h.levels[0].holds) held += b ? 1 : 0;
  if (h.levels[0].capacity_bytes < held * h.word_bytes())
    return InvalidArgument("levels[0] '" + h.levels[0].name + "': capacity " + std::to_string(h.levels[0].capacity_bytes) +
                           " B cannot hold one MAC's operands (" + std::to_string(held) + " words of " +
                           std::to_string(h.word_bytes()) + " B); give the lowest level at least that much");
  for (int t = 0; t < kNumOperands; ++t)
    if (h.Backing(static_cast<Operand>(t)) < 0)
      return InvalidArgument(std::string("no level holds the ") + OperandName(static_cast<Operand>(t)) +
                             "; add it to some level's \"holds\"");
  return Status::Ok();
}

}  // namespace sramplan::blocking
