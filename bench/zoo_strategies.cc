// Every bundled model under every tensor-level strategy and vmcu, int8, after canonicalisation
// (src/transform: channels-last, folded activations): arena bytes side by side, whether `sramplan
// verify --strategy vmcu` runs the vmcu plan bit-exact, and whether `sramplan codegen` + `make check`
// (QEMU mps2-an386) ran for the models whose weights fit that board's 4 MB.
// Writes bench/results/zoo_strategies.json and .md (or --out DIR).
//
//   bench_zoo_strategies [--models SUBSTR[,SUBSTR...]] [--dir DIR]... [--target T] [--no-verify]
//                        [--no-firmware] [--out DIR]
//
// --dir adds the .onnx, .graph.json and .tflite files of another directory (models that are not
// bundled, e.g. `models/export_zoo.py --extra --out DIR`, or ../shared/reference/tflite); their rows
// say "(not bundled)". .tflite models are imported with --fold-pad.
//
// The planning target defaults to sram:256MiB so that every model plans (the arena is what is
// compared); verify and codegen run the CLI, as a user would.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_util.h"
#include "driver/strategy.h"
#include "exec/hybrid.h"
#include "import/import.h"
#include "transform/canonicalize.h"

namespace fs = std::filesystem;
namespace sp = sramplan;

namespace {

struct Args {
  std::vector<std::string> filters;
  std::vector<std::string> dirs;  // --dir: models that are not bundled
  std::string target = "sram:256MiB";
  bool verify = true, firmware = true;
  std::string out = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
};

int Sh(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  const int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::vector<std::string> Models(const Args& a) {
  std::vector<std::string> all;
  for (const char* dir : {"models/onnx", "models/nas", "models/mcunet_blocks"})
    for (const auto& e : fs::directory_iterator(std::string(SRAMPLAN_SOURCE_DIR) + "/" + dir)) {
      const std::string p = e.path().string();
      if (p.ends_with(".onnx") || p.ends_with(".graph.json")) all.push_back(p);
    }
  std::sort(all.begin(), all.end());
  for (const auto& dir : a.dirs) {
    std::vector<std::string> more;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string p = e.path().string();
      if (p.ends_with(".onnx") || p.ends_with(".graph.json") || p.ends_with(".tflite")) more.push_back(p);
    }
    std::sort(more.begin(), more.end());
    all.insert(all.end(), more.begin(), more.end());
  }
  std::vector<std::string> out;
  for (const auto& m : all) {
    bool keep = a.filters.empty();
    for (const auto& f : a.filters) keep = keep || m.find(f) != std::string::npos;
    if (keep) out.push_back(m);
  }
  return out;
}

std::string Stem(const std::string& path) {
  std::string s = fs::path(path).filename().string();
  for (const char* ext : {".graph.json", ".onnx", ".tflite"})
    if (s.ends_with(ext)) s.resize(s.size() - std::string(ext).size());
  return s;
}

std::string FoldPad(const std::string& model) { return model.ends_with(".tflite") ? " --fold-pad" : ""; }

// "ok", "mismatch: ..." or "error: ..." from `sramplan verify --strategy vmcu`.
std::string Verify(const std::string& model) {
  std::string out;
  const int rc = Sh("timeout 3600 " + std::string(SRAMPLAN_CLI) + " verify '" + model + "'" + FoldPad(model) +
                        " --canonicalize --target sram:256MiB --strategy vmcu -q",
                    &out);
  if (rc == 124) return "error: timed out after 3600 s";
  if (rc == 0) return "ok";
  std::string line = out.substr(0, out.find('\n'));
  return (rc == 3 ? "mismatch: " : "error: ") + line.substr(0, 160);
}

// "ok" when codegen + make check (QEMU) printed the host checksum, else why not.
std::string Firmware(const std::string& model, int64_t weight_bytes, const std::string& dir) {
  if (weight_bytes > (int64_t{7} << 19)) return "skipped: weights " + std::to_string(weight_bytes) + " B > 3.5 MiB";
  std::string out;
  fs::remove_all(dir);
  int rc = Sh(std::string(SRAMPLAN_CLI) + " codegen '" + model + "'" + FoldPad(model) +
                  " --canonicalize --target mps2-an386 --strategy vmcu -q --out '" +
                  dir + "'",
              &out);
  if (rc != 0) return "codegen: " + out.substr(0, std::min<size_t>(out.find('\n'), 160));
  rc = Sh("timeout 900 make -s -C '" + dir + "' check", &out);
  fs::remove_all(dir);
  return rc == 0 && out.find("matches the host executor") != std::string::npos ? "ok" : "make check failed";
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << k << " needs a value\n";
        std::exit(1);
      }
      return argv[++i];
    };
    if (k == "--models") {
      std::stringstream ss(next());
      for (std::string f; std::getline(ss, f, ',');) a.filters.push_back(f);
    } else if (k == "--dir") {
      a.dirs.push_back(next());
    } else if (k == "--target") {
      a.target = next();
    } else if (k == "--out") {
      a.out = next();
    } else if (k == "--no-verify") {
      a.verify = false;
    } else if (k == "--no-firmware") {
      a.firmware = false;
    } else {
      std::cerr << "usage: bench_zoo_strategies [--models SUBSTR,...] [--dir DIR]... [--target T] [--no-verify] "
                   "[--no-firmware] [--out DIR]\n";
      return k == "--help" || k == "-h" ? 0 : 1;
    }
  }
  auto target = sp::target::LoadTarget(a.target);
  if (!target.ok()) {
    std::cerr << target.status().message() << "\n";
    return 1;
  }
  std::vector<std::string> strategies;
  for (const auto& s : sp::driver::Strategies())
    if (s.family == sp::driver::Family::kTensor || s.name == "vmcu") strategies.push_back(s.name);
  nlohmann::json records = nlohmann::json::array();
  std::ostringstream md;
  md << "# Every model (bundled, and those given with --dir) under every tensor-level strategy and vmcu (int8, canonicalised)\n\n"
     << "Machine: " << sp::bench::Machine() << "; load at start " << sp::bench::LoadAverage() << ".\n"
     << "Arena bytes on `" << a.target << "` after `--canonicalize`; verify = `sramplan verify --canonicalize "
     << "--strategy vmcu` (bit-exact in the planned arena); firmware = `sramplan codegen --canonicalize --target "
     << "mps2-an386 --strategy vmcu` + `make check` in QEMU.\n\n| model |";
  for (const auto& s : strategies) md << " " << s << " |";
  md << " vmcu / tinyengine | verify vmcu | firmware |\n|---|";
  for (size_t i = 0; i < strategies.size(); ++i) md << "---:|";
  md << "---:|---|---|\n";
  int vmcu_le_te = 0, cnns = 0;
  for (const auto& model : Models(a)) {
    const bool bundled = model.starts_with(std::string(SRAMPLAN_SOURCE_DIR) + "/models/");
    const std::string name = Stem(model) + (bundled ? "" : " (not bundled)");
    std::cerr << name << "\n";
    sp::import::ImportOptions io;
    io.fold_pad = model.ends_with(".tflite");
    auto g = sp::import::ImportModel(model, io);
    if (!g.ok()) {
      std::cerr << "  " << g.status().message() << "\n";
      continue;
    }
    auto canon = sp::transform::Canonicalize(&*g, {});
    if (!canon.ok()) {
      std::cerr << "  " << canon.status().message() << "\n";
      continue;
    }
    sp::ir::ApplyDtype(*g, sp::ir::DataType::kInt8);
    auto hybrid = sp::exec::MakeHybridInt8(&*g);  // as the CLI: ops without an int8 kernel keep float32
    if (!hybrid.ok()) {
      std::cerr << "  " << hybrid.status().message() << "\n";
      continue;
    }
    nlohmann::json rec = {{"model", Stem(model)},
                          {"bundled", bundled},
                          {"target", a.target},
                          {"arena_bytes", nlohmann::json::object()}};
    int64_t weights = 0;
    for (const auto& t : g->tensors())
      if (t.kind == sp::ir::TensorKind::kConstant) weights += t.Bytes();
    rec["weight_bytes"] = weights;
    md << "| " << name << " |";
    std::map<std::string, int64_t> arena;
    for (const auto& s : strategies) {
      sp::driver::PlanOptions o;
      o.dtype_name = "int8";
      const auto t0 = std::chrono::steady_clock::now();
      auto p = sp::driver::RunStrategy(*g, *target, s, o);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (p.ok()) {
        arena[s] = p->metrics.arena_bytes;
        rec["arena_bytes"][s] = p->metrics.arena_bytes;
        rec["plan_ms"][s] = ms;
        md << " " << p->metrics.arena_bytes << " |";
      } else {
        rec["arena_bytes"][s] = nullptr;
        rec["errors"][s] = p.status().message();
        md << " error |";
      }
    }
    bool conv = false;
    for (const auto& op : g->ops()) conv = conv || op.type == "Conv";
    if (arena.count("vmcu") && arena.count("tinyengine")) {
      const double r = static_cast<double>(arena["vmcu"]) / static_cast<double>(arena["tinyengine"]);
      rec["vmcu_over_tinyengine"] = r;
      char b[32];
      std::snprintf(b, sizeof b, " %.3f |", r);
      md << b;
      if (conv) {
        ++cnns;
        vmcu_le_te += arena["vmcu"] <= arena["tinyengine"];
      }
    } else {
      md << " - |";
    }
    const std::string v = a.verify ? Verify(model) : "not run";
    const std::string fw = a.firmware ? Firmware(model, weights, a.out + "/.fw_" + name) : "not run";
    rec["verify_vmcu"] = v;
    rec["firmware"] = fw;
    md << " " << v << " | " << fw << " |\n";
    records.push_back(rec);
  }
  md << "\nvmcu <= tinyengine on " << vmcu_le_te << " of " << cnns << " models with a Conv.\n";
  fs::create_directories(a.out);
  nlohmann::json doc = {{"benchmark", "zoo_strategies"},
                        {"machine", sp::bench::Machine()},
                        {"target", a.target},
                        {"strategies", strategies},
                        {"records", records}};
  std::ofstream(a.out + "/zoo_strategies.json") << doc.dump(1) << "\n";
  std::ofstream(a.out + "/zoo_strategies.md") << md.str();
  std::cout << md.str();
  return 0;
}
