#include "target/target.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::target {
namespace {

using nlohmann::json;

struct KindName {
  MemoryKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {{MemoryKind::kRegisterFile, "register_file"},
                               {MemoryKind::kSram, "sram"},
                               {MemoryKind::kScratchpad, "scratchpad"},
                               {MemoryKind::kFlash, "flash"},
                               {MemoryKind::kDram, "dram"}};

// Blocking paper (Yang et al.) Table 3: pJ per 16-bit access by SRAM size (KB) and word width.
struct EnergyRow {
  int kb;
  double pj[4];  // 64, 128, 256, 512-bit words
};
constexpr EnergyRow kTable3[] = {
    {1, {1.20, 0.93, 0.69, 0.57}},      {2, {1.54, 1.37, 0.91, 0.68}},
    {4, {2.11, 1.68, 1.34, 0.90}},      {8, {3.19, 2.71, 2.21, 1.33}},
    {16, {4.36, 3.57, 2.66, 2.19}},     {32, {5.82, 4.80, 3.52, 2.64}},
    {64, {8.10, 7.51, 5.79, 4.67}},     {128, {11.66, 11.50, 8.46, 6.15}},
    {256, {15.60, 15.51, 13.09, 8.99}}, {512, {23.37, 23.24, 17.93, 15.76}},
    {1024, {36.32, 32.81, 28.88, 25.22}}};
constexpr double kDramPjPer16b = 320.0;

StatusOr<json> ParseJsonText(const std::string& text, const std::string& name) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    return InvalidArgument("target '" + name + "' is not valid JSON (byte " +
                           std::to_string(e.byte) + ")");
  }
}

StatusOr<int64_t> ParseCapacity(const json& v, const std::string& where) {
  int64_t bytes = 0;
  if (v.is_number_integer()) {
    bytes = v.get<int64_t>();
  } else if (v.is_string()) {
    if (!ParseByteSize(v.get<std::string>(), &bytes))
      return InvalidArgument(where + ": capacity '" + v.get<std::string>() +
                             "' is not a size (use e.g. 131072, \"128KiB\", \"1MiB\")");
  } else {
    return InvalidArgument(where + ": capacity must be a number of bytes or a string like \"128KiB\"");
  }
  if (bytes <= 0)
    return InvalidArgument(where + ": capacity must be positive (got " + std::to_string(bytes) + ")");
  if (bytes > kMaxBytes) return InvalidArgument(where + ": capacity is too large");
  return bytes;
}

// Merges `child` over `base`: objects recursively; `levels` by level name.
json Merge(const json& base, const json& child) {
  json out = base;
  for (auto it = child.begin(); it != child.end(); ++it) {
    if (it.key() == "inherit") continue;
    if (it.key() == "levels" && it.value().is_array() && out.contains("levels") &&
        out["levels"].is_array()) {
      json levels = out["levels"];
      for (const auto& cl : it.value()) {
        bool merged = false;
        for (auto& bl : levels) {
          if (cl.is_object() && bl.is_object() && cl.contains("name") && bl.contains("name") &&
              cl["name"] == bl["name"]) {
            bl = Merge(bl, cl);
            merged = true;
          }
        }
        if (!merged) levels.push_back(cl);
      }
      out["levels"] = levels;
    } else if (it.value().is_object() && out.contains(it.key()) && out[it.key()].is_object()) {
      out[it.key()] = Merge(out[it.key()], it.value());
    } else {
      out[it.key()] = it.value();
    }
  }
  return out;
}

StatusOr<json> Resolve(const std::string& text, const std::string& name, const std::string& base_dir,
                       int depth);

StatusOr<json> LoadJsonSpec(const std::string& spec, const std::string& base_dir, int depth) {
  for (const auto& [pname, ptext] : BundledPresets())
    if (pname == spec) return Resolve(ptext, pname, base_dir, depth);
  std::string path = spec;
  if (!path.empty() && path[0] != '/' && !base_dir.empty()) {
    std::string candidate = base_dir + "/" + path;
    std::string dummy, err;
    if (ReadFileToString(candidate, &dummy, &err)) path = candidate;
  }
  std::string text, error;
  if (!ReadFileToString(path, &text, &error)) {
    std::string names;
    for (const auto& [pname, ptext] : BundledPresets()) names += (names.empty() ? "" : ", ") + pname;
    return NotFound("unknown target '" + spec + "': not a preset (" + names +
                    "), not a readable file (" + error + "), and not the shorthand sram:SIZE");
  }
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  return Resolve(text, path, dir, depth);
}

StatusOr<json> Resolve(const std::string& text, const std::string& name, const std::string& base_dir,
                       int depth) {
  if (depth > 8) return InvalidArgument("target '" + name + "': 'inherit' chain is too deep (cycle?)");
  SP_ASSIGN_OR_RETURN(json j, ParseJsonText(text, name));
  if (!j.is_object()) return InvalidArgument("target '" + name + "' must be a JSON object");
  if (j.contains("inherit")) {
    if (!j["inherit"].is_string())
      return InvalidArgument("target '" + name + "': 'inherit' must be a preset name or a file path");
    SP_ASSIGN_OR_RETURN(json base, LoadJsonSpec(j["inherit"].get<std::string>(), base_dir, depth + 1));
    base.erase("name");
    base.erase("description");
    return Merge(base, j);
  }
  return j;
}

StatusOr<Target> FromJson(const json& j, const std::string& name) {
  Target t;
  t.name = j.value("name", name);
  if (j.contains("description") && j["description"].is_string()) t.description = j["description"];
  if (j.contains("alignment")) {
    if (!j["alignment"].is_number_integer() || j["alignment"].get<int64_t>() < 1 ||
        j["alignment"].get<int64_t>() > 4096)
      return InvalidArgument("target '" + t.name + "': alignment must be an integer in 1..4096");
    t.alignment = j["alignment"].get<int64_t>();
  }
  if (!j.contains("levels") || !j["levels"].is_array() || j["levels"].empty())
    return InvalidArgument("target '" + t.name + "' needs a non-empty 'levels' list");
  int word_bits = 8;
  if (j.contains("compute") && j["compute"].is_object()) {
    const json& c = j["compute"];
    t.compute.pe_rows = c.value("pe_rows", 1);
    t.compute.pe_cols = c.value("pe_cols", 1);
    t.compute.macs_per_cycle = c.value("macs_per_cycle", t.compute.pe_rows * t.compute.pe_cols);
    t.compute.word_bits = c.value("word_bits", 8);
    t.compute.clock_mhz = c.value("clock_mhz", 0.0);
    t.compute.mac_pj = c.value("mac_pj", 0.0);
    if (t.compute.pe_rows < 1 || t.compute.pe_cols < 1 || t.compute.macs_per_cycle < 1 ||
        t.compute.word_bits < 1)
      return InvalidArgument("target '" + t.name + "': compute values must be positive");
    word_bits = t.compute.word_bits;
  }
  for (size_t i = 0; i < j["levels"].size(); ++i) {
    const json& l = j["levels"][i];
    std::string where = "target '" + t.name + "' levels[" + std::to_string(i) + "]";
    if (!l.is_object()) return InvalidArgument(where + " must be an object");
    MemoryLevel m;
    if (!l.contains("name") || !l["name"].is_string() || l["name"].get<std::string>().empty())
      return InvalidArgument(where + " needs a 'name'");
    m.name = l["name"];
    where = "target '" + t.name + "' level '" + m.name + "'";
    for (const auto& other : t.levels)
      if (other.name == m.name) return InvalidArgument(where + " is defined twice");
    std::string kind = l.value("kind", "sram");
    bool found = false;
    for (const auto& k : kKinds)
      if (kind == k.name) {
        m.kind = k.kind;
        found = true;
      }
    if (!found)
      return InvalidArgument(where + ": kind '" + kind +
                             "' must be register_file, sram, scratchpad, flash or dram");
    if (!l.contains("capacity")) return InvalidArgument(where + " needs a 'capacity'");
    SP_ASSIGN_OR_RETURN(m.capacity, ParseCapacity(l["capacity"], where));
    m.instances = l.value("instances", 1);
    if (m.instances < 1) return InvalidArgument(where + ": instances must be >= 1");
    double dflt = DefaultEnergyPjPerByte(m.kind, m.capacity, word_bits);
    m.energy_source = "blocking paper Table 3";
    if (l.contains("read_pj_per_byte") || l.contains("write_pj_per_byte"))
      m.energy_source = l.value("energy_source", std::string("target file"));
    m.read_pj_per_byte = l.value("read_pj_per_byte", dflt);
    m.write_pj_per_byte = l.value("write_pj_per_byte", m.read_pj_per_byte);
    m.bandwidth_bytes_per_cycle = l.value("bandwidth_bytes_per_cycle", 0.0);
    if (m.read_pj_per_byte < 0 || m.write_pj_per_byte < 0 || m.bandwidth_bytes_per_cycle < 0)
      return InvalidArgument(where + ": energies and bandwidth must be >= 0");
    if (l.contains("holds")) {
      if (!l["holds"].is_array()) return InvalidArgument(where + ": 'holds' must be a list");
      for (const auto& h : l["holds"]) {
        if (h == "activations") m.holds_activations = true;
        else if (h == "weights") m.holds_weights = true;
        else return InvalidArgument(where + ": 'holds' entries must be \"activations\" or \"weights\"");
      }
    } else {
      m.holds_activations = true;
      m.holds_weights = IsOffChip(m.kind);
    }
    t.levels.push_back(m);
  }
  auto find_level = [&](const char* key, int* out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_string()) return InvalidArgument("target '" + t.name + "': '" + key + "' must be a level name");
    for (size_t i = 0; i < t.levels.size(); ++i)
      if (t.levels[i].name == j[key].get<std::string>()) *out = static_cast<int>(i);
    if (*out < 0)
      return InvalidArgument("target '" + t.name + "': '" + key + "' names level '" +
                             j[key].get<std::string>() + "', which is not defined");
    return Status::Ok();
  };
  SP_RETURN_IF_ERROR(find_level("arena_level", &t.arena_level));
  SP_RETURN_IF_ERROR(find_level("weight_level", &t.weight_level));
  if (t.arena_level < 0) {
    // Default: the largest on-chip level (not a register file) that holds activations.
    for (size_t i = 0; i < t.levels.size(); ++i) {
      const auto& l = t.levels[i];
      if (!l.holds_activations || IsOffChip(l.kind) || l.kind == MemoryKind::kRegisterFile) continue;
      if (t.arena_level < 0 || l.capacity > t.levels[t.arena_level].capacity)
        t.arena_level = static_cast<int>(i);
    }
  }
  if (t.arena_level < 0)
    return InvalidArgument("target '" + t.name +
                           "' has no on-chip level that holds activations; add \"holds\": "
                           "[\"activations\"] to an SRAM or scratchpad level");
  if (t.weight_level < 0) {
    for (size_t i = 0; i < t.levels.size(); ++i)
      if (t.levels[i].holds_weights && IsOffChip(t.levels[i].kind)) {
        t.weight_level = static_cast<int>(i);
        break;
      }
    for (size_t i = 0; t.weight_level < 0 && i < t.levels.size(); ++i)
      if (t.levels[i].holds_weights) t.weight_level = static_cast<int>(i);
  }
  if (t.weight_level < 0)
    return InvalidArgument("target '" + t.name + "' has no level that holds weights");
  return t;
}

}  // namespace

const char* MemoryKindName(MemoryKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "?";
}

double DefaultEnergyPjPerByte(MemoryKind kind, int64_t capacity, int word_bits) {
  if (kind == MemoryKind::kDram) return kDramPjPer16b / 2.0;
  int col = word_bits >= 512 ? 3 : word_bits >= 256 ? 2 : word_bits >= 128 ? 1 : 0;
  double kb = static_cast<double>(capacity) / 1024.0;
  if (kb > 16 * 1024) return kDramPjPer16b / 2.0;  // the paper uses DRAM above 16 MB
  // Next table size at or above the capacity; above 1 MB, extrapolate with the table's growth per
  // doubling at the top end (x1.55).
  for (const auto& row : kTable3)
    if (kb <= row.kb) return row.pj[col] / 2.0;
  double v = kTable3[10].pj[col];
  for (double s = 1024; s < kb; s *= 2) v *= 1.55;
  return v / 2.0;
}

StatusOr<Target> ParseTarget(const std::string& text, const std::string& name,
                             const std::string& base_dir) {
  try {
    SP_ASSIGN_OR_RETURN(json j, Resolve(text, name, base_dir, 0));
    return FromJson(j, name);
  } catch (const json::exception& e) {
    return InvalidArgument("target '" + name + "': unexpected JSON value (" + e.what() + ")");
  }
}

static StatusOr<Target> LoadTargetImpl(const std::string& spec);

StatusOr<Target> LoadTarget(const std::string& spec) {
  try {
    return LoadTargetImpl(spec);
  } catch (const json::exception& e) {
    return InvalidArgument("target '" + spec + "': unexpected JSON value (" + e.what() + ")");
  }
}

static StatusOr<Target> LoadTargetImpl(const std::string& spec) {
  if (spec.rfind("sram:", 0) == 0) {
    int64_t bytes = 0;
    if (!ParseByteSize(spec.substr(5), &bytes) || bytes <= 0)
      return InvalidArgument("target shorthand '" + spec +
                             "': the size must be positive, e.g. sram:256KiB or sram:131072");
    json j = {{"name", spec},
              {"description", "one SRAM arena for activations; weights in off-chip DRAM"},
              {"levels",
               json::array({json{{"name", "sram"}, {"kind", "sram"}, {"capacity", bytes},
                                 {"holds", json::array({"activations"})}},
                            json{{"name", "dram"}, {"kind", "dram"}, {"capacity", "1GiB"},
                                 {"holds", json::array({"activations", "weights"})}}})}};
    return FromJson(j, spec);
  }
  if (spec.empty()) return InvalidArgument("--target is empty; give a preset name, a file or sram:SIZE");
  SP_ASSIGN_OR_RETURN(json j, LoadJsonSpec(spec, "", 0));
  return FromJson(j, spec);
}

std::string TargetToJson(const Target& t) {
  json j;
  j["name"] = t.name;
  j["description"] = t.description;
  j["alignment"] = t.alignment;
  j["arena_level"] = t.levels[t.arena_level].name;
  j["weight_level"] = t.levels[t.weight_level].name;
  j["compute"] = {{"pe_rows", t.compute.pe_rows},       {"pe_cols", t.compute.pe_cols},
                  {"macs_per_cycle", t.compute.macs_per_cycle},
                  {"word_bits", t.compute.word_bits}, {"clock_mhz", t.compute.clock_mhz},
                  {"mac_pj", t.compute.mac_pj}};
  for (const auto& l : t.levels) {
    json h = json::array();
    if (l.holds_activations) h.push_back("activations");
    if (l.holds_weights) h.push_back("weights");
    j["levels"].push_back({{"name", l.name},
                           {"kind", MemoryKindName(l.kind)},
                           {"capacity", l.capacity},
                           {"instances", l.instances},
                           {"read_pj_per_byte", l.read_pj_per_byte},
                           {"write_pj_per_byte", l.write_pj_per_byte},
                           {"energy_source", l.energy_source},
                           {"bandwidth_bytes_per_cycle", l.bandwidth_bytes_per_cycle},
                           {"holds", h}});
  }
  return j.dump(2);
}

}  // namespace sramplan::target
