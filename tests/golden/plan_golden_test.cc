// Golden plans: every bundled model (models/onnx, models/nas, models/mcunet_blocks) under every
// strategy, on stm32f767zi, sram:64MiB and exynos-npu, planned through driver::RunStrategy and
// compared with the hashes in tests/golden/plan_hashes.tsv (recorded before the pass-pipeline
// refactor). A plan is hashed in a canonical form: its JSON with the fields a newer schema added
// taken out (CanonicalDrop); a strategy that does not apply is recorded by its status code.
//
// Rows marked "unstable" are plans a wall-clock limit can change (the solver stopped on time, not on
// a proof); they are planned and verified, and their hash is not compared.
//
// Re-record (only when a plan is meant to change, and say why in the commit):
//   rm -f tests/golden/plan_hashes.tsv.new; SRAMPLAN_GOLDEN_RECORD=1 build/tests/plan_golden_test
// appends to tests/golden/plan_hashes.tsv.new; sort it, keep the header, mark rows unstable that differ
// between two recordings, then move it over plan_hashes.tsv.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "driver/strategy.h"
#include "exec/hybrid.h"
#include "import/import.h"
#include "plan/plan_json.h"
#include "plan/verifier.h"
#include "support/json.h"
#include "target/target.h"
#include "test_util.h"

namespace sramplan {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& Targets() {
  static const std::vector<std::string> t = {"stm32f767zi", "sram:64MiB", "exynos-npu"};
  return t;
}

// The strategies as they were before the refactor (driver::Strategies, BudgetStrategies and vmcu).
const std::vector<std::string>& StrategyNames() {
  static const std::vector<std::string> s = {"naive", "linear", "tflm",   "inplace",     "optimal",
                                             "tinyengine", "hmcos", "vmcu", "belady", "greedy",
                                             "cosma-fixed", "cosma-dc", "cosma"};
  return s;
}


std::vector<std::string> Models() {
  std::vector<std::string> out;
  for (const char* dir : {"models/onnx", "models/nas", "models/mcunet_blocks"}) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(testing::SourcePath(dir))) {
      std::string n = e.path().filename().string();
      if (n.size() > 5 && (n.ends_with(".onnx") || n.ends_with(".graph.json")))
        files.push_back(std::string(dir) + "/" + n);
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

// Schema 2 moved the step parameters out of op attrs (segment_bytes, row_cache) onto the step and
// added the step's kind. The hash covers everything else; the step parameters are compared
// semantically through StepParamsDigest.
//
// Notes are compared without the solver times they quote ("0.002 s" -> "# s").
void CanonicalDrop(nlohmann::json& j) {
  j.erase("schema_version");
  if (j.contains("notes"))
    for (auto& n : j["notes"]) n = std::regex_replace(n.get<std::string>(), std::regex("[0-9]+\\.[0-9]+ s\\b"), "# s");
  if (!j.contains("steps")) return;
  for (auto& st : j["steps"]) {
    for (const char* k : {"kind", "params", "workspace", "segment_bytes", "row_cache"}) st.erase(k);
    if (!st.contains("ops")) continue;
    for (auto& op : st["ops"])
      if (op.contains("attrs")) {
        op["attrs"].erase("segment_bytes");
        op["attrs"].erase("row_cache");
        if (op["attrs"].empty()) op.erase("attrs");
      }
  }
}

// The steps' segment parameters: "s<index>:<segment_bytes>:<row_cache>" for every step that has
// them (recorded from schema 1, where they were the ops' segment_bytes / row_cache attrs).
std::string StepParamsDigest(const plan::Plan& p) {
  std::string out;
  for (const auto& st : p.steps) {
    if (st.segment_bytes == 0 && !st.row_cache) continue;
    out += "s" + std::to_string(st.index) + ":" + std::to_string(st.segment_bytes) + ":" +
           std::to_string(st.row_cache) + ";";
  }
  return out;
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A plan whose solver stopped on a wall-clock limit (its notes say so) may differ run to run.
bool TimeLimited(const plan::Plan& p) {
  for (const auto& n : p.notes)
    if (n.find("not proved") != std::string::npos || n.find("time limit") != std::string::npos) return true;
  return false;
}

struct Row {
  std::string hash;     // 16 hex digits, or "status:<code>"
  std::string params = "-";  // Fnv1a of StepParamsDigest
  bool unstable = false;
};

std::string StatusCodeName(const Status& s) { return "status:" + std::to_string(static_cast<int>(s.code())); }

// Key "model|target|strategy".
std::map<std::string, Row> LoadGolden() {
  std::map<std::string, Row> rows;
  std::ifstream in(testing::SourcePath("tests/golden/plan_hashes.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string model, target, strategy, hash, flag;
    std::string params;
    ls >> model >> target >> strategy >> hash >> params >> flag;
    rows[model + "|" + target + "|" + strategy] = Row{hash, params, flag == "unstable"};
  }
  return rows;
}

std::mutex record_mu;

void Record(const std::string& line) {
  std::lock_guard<std::mutex> lock(record_mu);
  std::ofstream out(testing::SourcePath("tests/golden/plan_hashes.tsv.new"), std::ios::app);
  out << line << "\n";
}

class GoldenPlans : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenPlans, SameAsRecorded) {
  const std::string model = GetParam();
  const bool record = std::getenv("SRAMPLAN_GOLDEN_RECORD") != nullptr;
  static const std::map<std::string, Row> golden = LoadGolden();
  auto g = import::ImportModel(testing::SourcePath(model), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  // As the CLI plans --dtype int8: ops without an int8 kernel keep float32 (issue 13: only the models
  // with such ops, transformer and vit_b_16, change; their rows were re-recorded then).
  ASSERT_TRUE(exec::MakeHybridInt8(&*g).ok());
  for (const auto& tname : Targets()) {
    auto t = target::LoadTarget(tname);
    ASSERT_TRUE(t.ok()) << t.status().message();
    for (const auto& s : StrategyNames()) {
      SCOPED_TRACE(model + " " + tname + " " + s);
      driver::PlanOptions o;
      o.time_limit_s = 5;  // budget strategies: the arena level's capacity as the budget
      auto p = driver::RunStrategy(*g, *t, s, o);
      Row got;
      if (!p.ok()) {
        got.hash = StatusCodeName(p.status());
      } else {
        EXPECT_TRUE(plan::VerifyPlan(*p).ok());
        auto j = nlohmann::json::parse(plan::PlanToJson(*p));
        CanonicalDrop(j);
        got.hash = Hex(Fnv1a(j.dump()));
        got.params = Hex(Fnv1a(StepParamsDigest(*p)));
        got.unstable = TimeLimited(*p);
      }
      const std::string key = model + "|" + tname + "|" + s;
      if (record) {
        std::string line = model;
        line.append("\t").append(tname).append("\t").append(s);
        line.append("\t").append(got.hash).append("\t").append(got.params);
        if (got.unstable) line.append("\tunstable");
        Record(line);
        continue;
      }
      auto it = golden.find(key);
      ASSERT_NE(it, golden.end()) << "no golden row for " << key << " (re-record: see the file's header)";
      if (it->second.unstable || got.unstable) {
        EXPECT_EQ(it->second.hash.starts_with("status:"), got.hash.starts_with("status:")) << key;
        continue;
      }
      EXPECT_EQ(it->second.hash, got.hash) << key << ": the plan changed";
      EXPECT_EQ(it->second.params, got.params) << key << ": the steps' segment parameters changed";
    }
  }
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).filename().string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Bundled, GoldenPlans, ::testing::ValuesIn(Models()), ParamName);

}  // namespace
}  // namespace sramplan
