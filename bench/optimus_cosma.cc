// optimus-cosma vs optimus (issue 14, beyond the paper): DRAM bytes when fused groups' output maps
// may stay in the global buffer between groups (keep-on-chip), on the bench_optimus models at 64,
// 128 and 512 KB, batch 4 int16 (the paper's setting) and batch 1 int8 (what `verify` runs). Every
// plan is made through the strategy pipeline, whose last pass is the independent verifier.
// Writes bench/results/optimus_cosma.{json,md}.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_util.h"
#include "driver/strategy.h"
#include "import/import.h"
#include "target/target.h"

namespace sp = sramplan;

namespace {

struct Row {
  int64_t dram = -1;
  int64_t kept = 0, groups = 0;
  double ms = 0;
  std::string scheme, error, note;
};

Row PlanRow(const sp::ir::Graph& g, const sp::target::Target& t, const std::string& strategy, int64_t batch,
            const std::string& dtype) {
  sp::driver::PlanOptions o;
  o.batch = batch;
  o.dtype_name = dtype;
  const auto t0 = std::chrono::steady_clock::now();
  auto p = sp::driver::RunStrategy(g, t, strategy, o);
  Row r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!p.ok()) {
    r.error = p.status().message();
    return r;
  }
  r.dram = p->metrics.dram_read_bytes + p->metrics.dram_write_bytes;
  r.groups = static_cast<int64_t>(p->steps.size());
  const std::string& arena = t.levels[t.arena_level].name;
  for (const auto& b : p->buffers)
    for (const auto& x : p->tensors)
      if (x.name == b.tensor && x.kind == "activation" && b.level == arena) ++r.kept;
  r.scheme = "optimus";
  for (const std::string& n : p->notes)
    if (n.rfind("keep-on-chip:", 0) == 0) r.note = n.substr(0, n.find(')') + 1);
  for (const std::string& n : p->notes)
    for (const char* s : {"nofuse", "efficient-s"})
      if (n.rfind("keep-on-chip:", 0) == 0 && n.find(std::string("against ") + s + "'s") != std::string::npos) r.scheme = s;
  return r;
}

std::string Mb(int64_t b) {
  std::ostringstream s;
  s.precision(5);
  s << b / 1e6;
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_dir = argv[++i];
  const std::string root = SRAMPLAN_SOURCE_DIR;
  std::vector<std::pair<std::string, std::string>> models;
  for (const char* m : {"alexnet", "vgg16", "googlenet", "squeezenet1_0", "mobilenet_v2", "resnet18", "resnet50",
                        "resnet152"})
    models.push_back({m, root + "/models/onnx/" + m + ".onnx"});
  models.push_back({"nasnet-a-imagenet", root + "/models/nas/nasnet-a-imagenet.graph.json"});
  auto base = sp::target::LoadTarget("optimus-accel");
  if (!base.ok()) {
    std::cerr << base.status().message() << "\n";
    return 1;
  }
  nlohmann::json records = nlohmann::json::array();
  std::ostringstream md;
  md << "# optimus-cosma vs optimus: DRAM bytes with group outputs kept in the global buffer (bench_optimus_cosma)\n\n"
     << "Machine: " << sp::bench::Machine() << " (load " << sp::bench::LoadAverage() << ")\n\n"
     << "optimus-accel (T_c 16), model order. MB = 1e6 B. kept = feature maps held on chip between groups; scheme = "
        "the groups the kept maps were chosen for (optimus's unless nofuse's or efficient-s's with their kept maps "
        "move strictly fewer bytes). Every plan passed the verifier (the pipeline's last pass).\n";
  int worse = 0;
  for (const auto& [batch, dtype] : {std::pair<int64_t, std::string>{4, "int16"}, {1, "int8"}}) {
    md << "\n## Batch " << batch << ", " << dtype << "\n\n| model | buffer | optimus MB | optimus-cosma MB | saved | kept "
       << "| scheme | groups | plan ms |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& [name, path] : models) {
      sp::import::ImportOptions io;
      io.batch = batch;
      auto g = sp::import::ImportModel(path, io);
      if (!g.ok()) {
        std::cerr << name << ": " << g.status().message() << "\n";
        return 1;
      }
      sp::ir::ApplyDtype(*g, dtype == "int16" ? sp::ir::DataType::kInt16 : sp::ir::DataType::kInt8);
      for (int64_t kb : {64, 128, 512}) {
        sp::target::Target t = *base;
        t.levels[t.arena_level].capacity = kb << 10;
        const Row a = PlanRow(*g, t, "optimus", batch, dtype);
        const Row c = PlanRow(*g, t, "optimus-cosma", batch, dtype);
        for (const auto* r : {&a, &c})
          records.push_back({{"model", name}, {"method", r == &a ? "optimus" : "optimus-cosma"}, {"buffer_bytes", kb << 10},
                             {"batch", batch}, {"dtype", dtype}, {"dram_bytes", r->dram}, {"groups", r->groups},
                             {"kept_maps", r->kept}, {"scheme", r->scheme}, {"plan_ms", r->ms}, {"note", r->note},
                             {"error", r->error}});
        if (!a.error.empty() || !c.error.empty()) {
          md << "| " << name << " | " << kb << " KB | " << (a.error.empty() ? Mb(a.dram) : "-") << " | "
             << (c.error.empty() ? Mb(c.dram) : "-") << " | - | - | - | - | "
             << (a.error.empty() ? c.error : a.error).substr(0, 90) << " |\n";
          continue;
        }
        worse += c.dram > a.dram;
        std::ostringstream pct;
        pct.precision(3);
        pct << 100.0 * (a.dram - c.dram) / a.dram << "%";
        md << "| " << name << " | " << kb << " KB | " << Mb(a.dram) << " | " << Mb(c.dram) << " | " << pct.str()
           << " | " << c.kept << " | " << c.scheme << " | " << c.groups << " | " << static_cast<int64_t>(c.ms) << " |\n";
        std::cout << name << " b" << batch << " " << kb << " KB: optimus " << a.dram << " optimus-cosma " << c.dram
                  << " kept " << c.kept << " (" << c.scheme << ")\n";
      }
    }
  }
  md << "\noptimus-cosma worse than optimus: " << worse << " cases.\n";
  std::filesystem::create_directories(out_dir);
  nlohmann::json j = {{"machine", sp::bench::Machine()}, {"records", records}, {"worse_than_optimus", worse}};
  std::ofstream(out_dir + "/optimus_cosma.json") << j.dump(1) << "\n";
  std::ofstream(out_dir + "/optimus_cosma.md") << md.str();
  return worse == 0 ? 0 : 1;
}
