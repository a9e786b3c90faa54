#include "target/target.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include "support/int_math.h"
#include "support/json.h"
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

std::string HexAddress(int64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(a));
  return buf;
}

// Largest target file read: targets are a few KiB.
constexpr int64_t kMaxTargetFileBytes = int64_t{16} << 20;
// Largest number of PEs per row or column, and of MACs per cycle.
constexpr int64_t kMaxComputeValue = kInt32Max;
constexpr int64_t kMaxMacsPerCycle = int64_t{1} << 62;
// Largest bandwidth and energy figures accepted (far above any real memory).
constexpr double kMaxBandwidth = 1e12;
constexpr double kMaxEnergyPj = 1e9;

// A capacity: an integer number of bytes or a size string ("128KiB", "1.5MiB").
StatusOr<int64_t> ParseCapacity(const JsonRef& v) {
  int64_t bytes = 0;
  if (v.json().is_string()) {
    StatusOr<int64_t> parsed = ParseSize(v.json().get<std::string>());
    if (!parsed.ok()) return v.Error(parsed.status().message());
    bytes = *parsed;
    if (bytes <= 0) return v.Error("capacity must be positive, got " + JsonSnippet(v.json()));
  } else if (v.json().is_number()) {
    std::optional<int64_t> exact = JsonToInt64(v.json());
    if (exact && *exact <= 0) return v.Error("capacity must be positive, got " + std::to_string(*exact));
    SP_ASSIGN_OR_RETURN(bytes, v.AsInt(1, kMaxBytes));
  } else {
    return v.Error("capacity must be a number of bytes or a string like \"128KiB\", got " + JsonSnippet(v.json()));
  }
  return bytes;
}

// An address: a non-negative integer or a hex string ("0x20000000").
StatusOr<int64_t> ParseAddress(const JsonRef& v) {
  if (v.json().is_string()) {
    const std::string text = v.json().get<std::string>();
    int64_t value = 0;
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    bool ok = hex && text.size() <= 14;
    for (size_t i = 2; ok && i < text.size(); ++i) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      if (c >= '0' && c <= '9') value = value * 16 + (c - '0');
      else if (c >= 'a' && c <= 'f') value = value * 16 + (c - 'a' + 10);
      else ok = false;
    }
    if (ok) return value;
    return v.Error("must be an address like \"0x20000000\" (at most 12 hex digits), got " + JsonSnippet(v.json()));
  }
  return v.AsInt(0, kMaxBytes);
}

// A level's "pools": disjoint address ranges, together at most the level's capacity.
Status ParsePools(const JsonRef& l, int word_bits, MemoryLevel* m) {
  SP_ASSIGN_OR_RETURN(JsonRef pools, l.Array("pools"));
  if (pools.size() == 0) return pools.Error("must list at least one pool (or leave \"pools\" out)");
  if (IsOffChip(m->kind) || m->kind == MemoryKind::kRegisterFile)
    return pools.Error("pools are for on-chip RAM levels; level '" + m->name + "' is " + MemoryKindName(m->kind));
  int64_t total = 0;
  for (size_t i = 0; i < pools.size(); ++i) {
    const JsonRef q = pools[i];
    SP_RETURN_IF_ERROR(q.ExpectObject());
    MemoryPool pool;
    SP_ASSIGN_OR_RETURN(pool.name, q.String("name"));
    if (pool.name.empty()) return q.Child("name").Error("must be a non-empty pool name");
    for (const auto& other : m->pools)
      if (other.name == pool.name) return q.Error("pool '" + pool.name + "' is defined twice");
    SP_ASSIGN_OR_RETURN(JsonRef base, q.Field("base"));
    SP_ASSIGN_OR_RETURN(pool.base, ParseAddress(base));
    SP_ASSIGN_OR_RETURN(JsonRef cap, q.Field("capacity"));
    SP_ASSIGN_OR_RETURN(pool.capacity, ParseCapacity(cap));
    for (const auto& other : m->pools)
      if (pool.base < other.base + other.capacity && other.base < pool.base + pool.capacity)
        return q.Error("pool '" + pool.name + "' [" + HexAddress(pool.base) + ", " +
                       HexAddress(pool.base + pool.capacity) + ") overlaps pool '" + other.name + "' [" +
                       HexAddress(other.base) + ", " + HexAddress(other.base + other.capacity) +
                       "); give the pools disjoint address ranges");
    total += pool.capacity;
    const double dflt = DefaultEnergyPjPerByte(m->kind, pool.capacity, word_bits);
    pool.cost_source = "blocking paper Table 3 by pool capacity";
    if (q.Has("read_pj_per_byte") || q.Has("write_pj_per_byte") || q.Has("stall_cycles_per_byte")) {
      SP_ASSIGN_OR_RETURN(pool.cost_source, q.StringOr("cost_source", "target file"));
    }
    SP_ASSIGN_OR_RETURN(pool.read_pj_per_byte, q.NumberOr("read_pj_per_byte", dflt, 0.0, kMaxEnergyPj));
    SP_ASSIGN_OR_RETURN(pool.write_pj_per_byte, q.NumberOr("write_pj_per_byte", pool.read_pj_per_byte, 0.0, kMaxEnergyPj));
    SP_ASSIGN_OR_RETURN(pool.stall_cycles_per_byte, q.NumberOr("stall_cycles_per_byte", 0.0, 0.0, 1e6));
    m->pools.push_back(pool);
  }
  if (total > m->capacity)
    return pools.Error("the pools hold " + std::to_string(total) + " bytes, more than level '" + m->name +
                       "' (" + std::to_string(m->capacity) + " bytes); shrink a pool or raise the level's capacity");
  return Status::Ok();
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
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) path = candidate;
  }
  std::string text;
  Status read = ReadFileBounded(path, kMaxTargetFileBytes, &text, [&](std::string_view head, int64_t*) {
    return CheckJsonObjectHead(head, "the file");
  });
  if (read.code() == StatusCode::kInvalidArgument) return read.WithContext("target '" + spec + "'");
  if (!read.ok()) {
    const std::string error = read.message();
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
  SP_ASSIGN_OR_RETURN(json j, ParseJson(text, "target '" + name + "'"));
  if (!j.is_object()) return InvalidArgument("target '" + name + "' must be a JSON object, got " + JsonSnippet(j));
  if (j.contains("inherit")) {
    if (!j["inherit"].is_string())
      return InvalidArgument("target '" + name + "': inherit: must be a preset name or a file path, got " +
                             JsonSnippet(j["inherit"]));
    SP_ASSIGN_OR_RETURN(json base, LoadJsonSpec(j["inherit"].get<std::string>(), base_dir, depth + 1));
    base.erase("name");
    base.erase("description");
    return Merge(base, j);
  }
  return j;
}

StatusOr<Target> FromJsonImpl(const json& doc, const std::string& name, std::string* shown_name) {
  const JsonRef j(doc);
  Target t;
  SP_RETURN_IF_ERROR(j.ExpectObject());
  SP_ASSIGN_OR_RETURN(t.name, j.StringOr("name", name));
  *shown_name = t.name;
  if (j.Has("description") && j.Child("description").is_string()) t.description = doc["description"];
  SP_ASSIGN_OR_RETURN(t.alignment, j.IntOr("alignment", t.alignment, 1, 4096));
  SP_ASSIGN_OR_RETURN(t.cpu, j.StringOr("cpu", ""));
  if (!t.cpu.empty()) {
    const auto& cpus = KnownCpus();
    if (std::find(cpus.begin(), cpus.end(), t.cpu) == cpus.end()) {
      std::string names;
      for (const auto& c : cpus) names += (names.empty() ? "" : ", ") + c;
      return InvalidArgument("target '" + t.name + "': cpu: unknown CPU '" + t.cpu + "'; write one of " + names +
                             ", or leave 'cpu' out");
    }
  }
  SP_ASSIGN_OR_RETURN(JsonRef levels, j.Array("levels"));
  if (levels.size() == 0) return levels.Error("must be a non-empty list of memory levels");
  int word_bits = 8;
  if (j.Has("compute")) {
    SP_ASSIGN_OR_RETURN(JsonRef c, j.Object("compute"));
    SP_ASSIGN_OR_RETURN(int64_t rows, c.IntOr("pe_rows", 1, 1, kMaxComputeValue));
    SP_ASSIGN_OR_RETURN(int64_t cols, c.IntOr("pe_cols", 1, 1, kMaxComputeValue));
    // rows, cols < 2^31: their product (the default MACs per cycle) cannot overflow int64.
    SP_ASSIGN_OR_RETURN(int64_t macs, c.IntOr("macs_per_cycle", rows * cols, 1, kMaxMacsPerCycle));
    SP_ASSIGN_OR_RETURN(int64_t bits, c.IntOr("word_bits", 8, 1, 4096));
    t.compute.pe_rows = rows;
    t.compute.pe_cols = cols;
    t.compute.macs_per_cycle = macs;
    t.compute.word_bits = static_cast<int>(bits);
    SP_ASSIGN_OR_RETURN(t.compute.clock_mhz, c.NumberOr("clock_mhz", 0.0, 0.0, 1e6));
    SP_ASSIGN_OR_RETURN(t.compute.mac_pj, c.NumberOr("mac_pj", 0.0, 0.0, kMaxEnergyPj));
    word_bits = t.compute.word_bits;
  }
  for (size_t i = 0; i < levels.size(); ++i) {
    const JsonRef l = levels[i];
    SP_RETURN_IF_ERROR(l.ExpectObject());
    MemoryLevel m;
    SP_ASSIGN_OR_RETURN(m.name, l.String("name"));
    if (m.name.empty()) return l.Child("name").Error("must be a non-empty level name");
    for (const auto& other : t.levels)
      if (other.name == m.name) return l.Error("level '" + m.name + "' is defined twice");
    SP_ASSIGN_OR_RETURN(std::string kind, l.StringOr("kind", "sram"));
    bool found = false;
    for (const auto& k : kKinds)
      if (kind == k.name) {
        m.kind = k.kind;
        found = true;
      }
    if (!found)
      return l.Child("kind").Error("'" + kind + "' must be register_file, sram, scratchpad, flash or dram");
    SP_ASSIGN_OR_RETURN(JsonRef cap, l.Field("capacity"));
    SP_ASSIGN_OR_RETURN(m.capacity, ParseCapacity(cap));
    SP_ASSIGN_OR_RETURN(int64_t instances, l.IntOr("instances", 1, 1, kInt32Max));
    m.instances = static_cast<int>(instances);
    std::optional<int64_t> total = CheckedMul(m.capacity, instances);
    if (!total || *total > kMaxBytes)
      return l.Error("capacity x instances = " + std::to_string(m.capacity) + " x " + std::to_string(instances) +
                     " bytes is more than 2^50 bytes (1 PiB), the most sramplan handles");
    double dflt = DefaultEnergyPjPerByte(m.kind, m.capacity, word_bits);
    m.energy_source = "blocking paper Table 3";
    if (l.Has("read_pj_per_byte") || l.Has("write_pj_per_byte")) {
      SP_ASSIGN_OR_RETURN(m.energy_source, l.StringOr("energy_source", "target file"));
    }
    SP_ASSIGN_OR_RETURN(m.read_pj_per_byte, l.NumberOr("read_pj_per_byte", dflt, 0.0, kMaxEnergyPj));
    SP_ASSIGN_OR_RETURN(m.write_pj_per_byte, l.NumberOr("write_pj_per_byte", m.read_pj_per_byte, 0.0, kMaxEnergyPj));
    SP_ASSIGN_OR_RETURN(m.bandwidth_bytes_per_cycle, l.NumberOr("bandwidth_bytes_per_cycle", 0.0, 0.0, kMaxBandwidth));
    if (l.Has("holds")) {
      SP_ASSIGN_OR_RETURN(std::vector<std::string> holds, l.StringList("holds"));
      for (size_t h = 0; h < holds.size(); ++h) {
        if (holds[h] == "activations") m.holds_activations = true;
        else if (holds[h] == "weights") m.holds_weights = true;
        else return l.Child("holds")[h].Error("must be \"activations\" or \"weights\", got \"" + holds[h].substr(0, 40) + "\"");
      }
    } else {
      m.holds_activations = true;
      m.holds_weights = IsOffChip(m.kind);
    }
    if (l.Has("pools")) SP_RETURN_IF_ERROR(ParsePools(l, word_bits, &m));
    t.levels.push_back(m);
  }
  for (size_t i = 0; i < t.levels.size(); ++i)
    for (const auto& pool : t.levels[i].pools)
      for (const auto& other : t.levels)
        if (other.name == pool.name)
          return levels[i].Error("pool '" + pool.name + "' has the name of a level; a plan names pools and levels alike: rename the pool");
  auto find_level = [&](const char* key, int* out) -> Status {
    if (!j.Has(key)) return Status::Ok();
    SP_ASSIGN_OR_RETURN(std::string level, j.String(key));
    for (size_t i = 0; i < t.levels.size(); ++i)
      if (t.levels[i].name == level) *out = static_cast<int>(i);
    if (*out < 0) return j.Child(key).Error("names level '" + level + "', which is not defined");
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
  for (size_t i = 0; i < t.levels.size(); ++i)
    if (!t.levels[i].pools.empty() && static_cast<int>(i) != t.arena_level)
      return levels[i].Error("level '" + t.levels[i].name + "' has pools but is not the arena level ('" +
                             t.levels[t.arena_level].name + "'); only the arena level is split into pools");
  if (t.weight_level == t.arena_level)
    return InvalidArgument("target '" + t.name + "': level '" + t.levels[t.arena_level].name +
                           "' is both the arena level and the weight level; sramplan lays the weights out in "
                           "a level of their own (flash or DRAM): set \"weight_level\" (or \"arena_level\") to "
                           "another level");
  return t;
}

StatusOr<Target> FromJson(const json& j, const std::string& name) {
  std::string shown = name;
  StatusOr<Target> t = FromJsonImpl(j, name, &shown);
  if (!t.ok() && t.status().message().rfind("target '", 0) != 0)
    return t.status().WithContext("target '" + shown + "'");
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
    return InvalidArgument("target '" + name + "': unexpected JSON value (" + JsonExceptionText(e) + ")");
  }
}

static StatusOr<Target> LoadTargetImpl(const std::string& spec);

StatusOr<Target> LoadTarget(const std::string& spec) {
  try {
    return LoadTargetImpl(spec);
  } catch (const json::exception& e) {
    return InvalidArgument("target '" + spec + "': unexpected JSON value (" + JsonExceptionText(e) + ")");
  }
}

static StatusOr<Target> LoadTargetImpl(const std::string& spec) {
  if (spec.rfind("sram:", 0) == 0) {
    StatusOr<int64_t> size = ParseSize(spec.substr(5));
    if (!size.ok())
      return InvalidArgument("target shorthand '" + spec + "': " + size.status().message() +
                             "; e.g. sram:256KiB or sram:131072");
    const int64_t bytes = *size;
    if (bytes <= 0)
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

const std::vector<std::string>& KnownCpus() {
  static const std::vector<std::string> c = {"cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7"};
  return c;
}

bool CpuHasDsp(const std::string& cpu) { return cpu == "cortex-m4" || cpu == "cortex-m7"; }

std::string TargetToJson(const Target& t) {
  json j;
  j["name"] = t.name;
  j["description"] = t.description;
  j["alignment"] = t.alignment;
  if (!t.cpu.empty()) j["cpu"] = t.cpu;
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
    if (!l.pools.empty()) {
      json pools = json::array();
      for (const auto& q : l.pools)
        pools.push_back({{"name", q.name}, {"base", HexAddress(q.base)}, {"capacity", q.capacity},
                         {"read_pj_per_byte", q.read_pj_per_byte}, {"write_pj_per_byte", q.write_pj_per_byte},
                         {"stall_cycles_per_byte", q.stall_cycles_per_byte}, {"cost_source", q.cost_source}});
      j["levels"].back()["pools"] = pools;
    }
  }
  return DumpJson(j, 2);
}

}  // namespace sramplan::target
