// Issue 16: the blocking paper's Table 4 layers on DianNao's buffers (and on co-designed
// hierarchies when --codesign): exact optimum (energy, search time, proved), the seeded heuristic
// and its gap, DianNao's default schedule vs the optimum (kernel-buffer energy ratio). Writes
// bench/results/blocking.{json,md} (or --out DIR). Flags: --time-limit S (per exact search, 10),
// --threads N (2), --layers Conv1,Conv2,..., --codesign 0|1, --multicore 0|1|only
// (K vs XY partitioning on 1-8 DianNao cores; "only" recomputes just that section into the existing files),
// --pool-lrn 0|1 (AlexNet's pooling and LRN layers).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "blocking/codesign.h"
#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/multicore.h"
#include "blocking/optimizer.h"
#include "blocking/schedules.h"
#include "target/target.h"

namespace bl = sramplan::blocking;
using nlohmann::ordered_json;

namespace {

std::vector<bl::Layer> Table4() {
  return {bl::ConvLayer("Conv1", 256, 256, 256, 384, 11, 11), bl::ConvLayer("Conv2", 500, 375, 32, 48, 9, 9),
          bl::ConvLayer("Conv3", 32, 32, 108, 200, 4, 4),     bl::ConvLayer("Conv4", 56, 56, 128, 256, 3, 3),
          bl::ConvLayer("Conv5", 28, 28, 256, 512, 3, 3),     bl::FcLayer("FC1", 200, 100),
          bl::FcLayer("FC2", 4096, 4096)};
}

ordered_json Record(const bl::Layer& l, const bl::Hierarchy& h, const std::string& method, const bl::BlockingString& s,
                    const bl::Evaluation& ev, double search_s, bool proved, int64_t nodes) {
  ordered_json acc = ordered_json::object();
  ordered_json epl = ordered_json::object();
  for (size_t i = 0; i < h.levels.size(); ++i) {
    acc[h.levels[i].name] = ev.levels[i].reads + ev.levels[i].writes;
    epl[h.levels[i].name] = ev.levels[i].energy_pj;
  }
  return {{"layer", l.name},
          {"hierarchy", h.name},
          {"method", method},
          {"string", bl::ToString(s)},
          {"energy_pj", ev.total_pj},
          {"memory_pj", ev.memory_pj},
          {"mac_pj", ev.mac_pj},
          {"ib_pj", ev.operand_pj[0]},
          {"kb_pj", ev.operand_pj[1]},
          {"ob_pj", ev.operand_pj[2]},
          {"accesses", acc},
          {"energy_pj_per_level", epl},
          {"search_s", search_s},
          {"proved_optimal", proved},
          {"nodes", nodes}};
}

std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Energy (pJ) of the MAC stream of operand t: every MAC reads t (output: reads and writes it) in t's
// innermost holder (model.h).
double MacStreamPj(const bl::Evaluation& ev, const bl::Hierarchy& h, bl::Operand t) {
  for (const bl::BufferUse& b : ev.buffers)
    if (b.operand == t) {
      const bl::Level& l = h.levels[b.level];
      return static_cast<double>(ev.macs) * (l.read_pj + (t == bl::Operand::kOutput ? l.write_pj : 0.0));
    }
  return 0;
}

// Words of operand t moved between its backing store and the level below, over its size (how many
// times the operand crosses the off-chip link).
double BackingPasses(const bl::Layer& l, const bl::Evaluation& ev, bl::Operand t) {
  for (const bl::BufferUse& b : ev.buffers)
    if (b.operand == t && b.backing)
      return static_cast<double>(t == bl::Operand::kOutput ? b.writes : b.reads) / static_cast<double>(l.Size(t));
  return 0;
}

// Memory energy if the datapath fed the MACs as the paper's 16 x 16 core does (each input word read
// once for 16 MACs, each partial sum read and written once per 16 MACs through the adder tree):
// the input and output MAC streams divided by 16. A what-if for the comparison, not the model.
double DatapathWhatIfPj(const bl::Evaluation& ev, const bl::Hierarchy& h) {
  return ev.memory_pj - (15.0 / 16.0) * (MacStreamPj(ev, h, bl::Operand::kInput) + MacStreamPj(ev, h, bl::Operand::kOutput));
}

struct RatioRow {
  bl::Layer layer;
  bl::Evaluation dn, def, cd1, cd8;
  bl::Hierarchy h1, h8;
};

// Section comparing the DianNao and co-design ratios with the paper's (docs/architecture.md's
// blocking paragraph explains them).
void RatioAnalysis(const bl::Hierarchy& dh, const std::vector<RatioRow>& rows, std::ostringstream* md) {
  *md << "\n## Ratios against the paper (analysis of the runs above)\n\n"
      << "Kernel passes = kernel words read from DRAM / kernel size. mem/MAC = memory over MAC energy. MAC-stream share: "
         "the part of the co-designed memory energy spent by the per-MAC operand accesses in the innermost holders "
         "(4 accesses per MAC at >= ~1 pJ each in Table 3). Datapath what-if: input and output MAC streams / 16 "
         "(the paper's 16x16 core broadcasts inputs and reduces partial sums in adder trees), on both DianNao and "
         "the co-designed hierarchy.\n\n"
      << "| layer | default kernel passes | optimal kernel passes | KB ratio | DianNao mem/MAC | 8MB mem/MAC | 8MB MAC-stream share | "
         "8MB memory ratio | 1MB memory ratio | 8MB ratio, datapath what-if | 1MB ratio, datapath what-if |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const RatioRow& r : rows) {
    double ms8 = 0;
    for (bl::Operand t : {bl::Operand::kInput, bl::Operand::kKernel, bl::Operand::kOutput}) ms8 += MacStreamPj(r.cd8, r.h8, t);
    *md << "| " << r.layer.name << " | " << Fmt("%.0f", BackingPasses(r.layer, r.def, bl::Operand::kKernel)) << " | "
        << Fmt("%.1f", BackingPasses(r.layer, r.dn, bl::Operand::kKernel)) << " | "
        << Fmt("%.1fx", r.def.operand_pj[1] / r.dn.operand_pj[1]) << " | " << Fmt("%.1f", r.dn.memory_pj / r.dn.mac_pj)
        << " | " << Fmt("%.1f", r.cd8.memory_pj / r.cd8.mac_pj) << " | " << Fmt("%.0f%%", 100.0 * ms8 / r.cd8.memory_pj)
        << " | " << Fmt("%.1fx", r.dn.memory_pj / r.cd8.memory_pj) << " | " << Fmt("%.1fx", r.dn.memory_pj / r.cd1.memory_pj)
        << " | " << Fmt("%.1fx", DatapathWhatIfPj(r.dn, dh) / DatapathWhatIfPj(r.cd8, r.h8)) << " | "
        << Fmt("%.1fx", DatapathWhatIfPj(r.dn, dh) / DatapathWhatIfPj(r.cd1, r.h1)) << " |\n";
  }
}

// Multi-core K vs XY partitioning (paper Sec. 3.3 / Fig. 9) of the Table 4 conv layers on DianNao
// cores: per-core string by the heuristic search (beam as given), 1, 2, 4, 8 cores.
void Multicore(const bl::Hierarchy& h, const bl::SearchOptions& opt, const std::string& only, ordered_json* records,
               std::ostringstream* md) {
  *md << "\n## Multi-core: K vs XY partitioning (paper Sec. 3.3)\n\n"
      << "Each core has a private copy of DianNao's on-chip buffers; DRAM is shared. K partitioning: input read once from "
         "DRAM and broadcast; XY partitioning (Y, else X): kernels read once and broadcast, input halos replicated. "
         "Broadcast energy per word = Table 3 access energy (64-bit) of an SRAM of all cores' on-chip bytes. Per-core "
         "string: heuristic search on the per-core sub-layer (minimises one core's energy; sharing accounted after). "
         "uJ = whole layer on all cores (memory + 1 pJ/MAC); n/a = the core count does not divide K (or X/Y).\n\n"
      << "| layer | cores | K: total uJ | K: bcast uJ | XY: total uJ | XY: bcast uJ | XY split | better |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  for (const bl::Layer& l : Table4()) {
    if (l.name.rfind("Conv", 0) != 0) continue;
    if (!only.empty() && only.find("," + l.name + ",") == std::string::npos) continue;
    for (int cores : {1, 2, 4, 8}) {
      std::cerr << "multicore " << l.name << " x" << cores << "...\n";
      std::string cells[2][2] = {{"n/a", "n/a"}, {"n/a", "n/a"}};
      std::string split = "-";
      double tot[2] = {-1, -1};
      for (bl::Partition p : {bl::Partition::kK, bl::Partition::kXY}) {
        bl::MulticoreOptions mo;
        mo.cores = cores;
        mo.partition = p;
        auto r = bl::MulticoreSearch(l, h, mo, opt, /*exact=*/false);
        if (!r.ok()) {
          std::cerr << "  " << bl::PartitionName(p) << ": " << r.status().message() << "\n";
          continue;
        }
        int pi = p == bl::Partition::kK ? 0 : 1;
        tot[pi] = r->total_pj;
        cells[pi][0] = Fmt("%.1f", r->total_pj / 1e6);
        cells[pi][1] = Fmt("%.1f", r->broadcast_pj / 1e6);
        if (pi == 1) split = bl::DimName(r->split);
        ordered_json rec = Record(r->per_core, h, p == bl::Partition::kK ? "multicore-k" : "multicore-xy", r->string,
                                  r->core, r->search_s, false, 0);
        rec["layer"] = l.name;
        rec["cores"] = cores;
        rec["split"] = bl::DimName(r->split);
        rec["per_core_layer"] = r->per_core.name;
        rec["shared_operand"] = bl::OperandName(r->shared);
        rec["broadcast_words"] = r->broadcast_words;
        rec["broadcast_pj_per_word"] = r->broadcast_pj_per_word;
        rec["private_pj"] = r->private_pj;
        rec["broadcast_pj"] = r->broadcast_pj;
        rec["core_energy_pj"] = r->core.total_pj;
        rec["energy_pj"] = r->total_pj;
        rec["memory_pj"] = r->memory_pj;
        rec["mac_pj"] = r->mac_pj;
        rec["onchip_bytes"] = r->onchip_bytes;
        records->push_back(rec);
      }
      std::string better = tot[0] < 0 && tot[1] < 0 ? "-" : tot[1] < 0 || (tot[0] >= 0 && tot[0] <= tot[1]) ? "K" : "XY";
      *md << "| " << l.name << " | " << cores << " | " << cells[0][0] << " | " << cells[0][1] << " | " << cells[1][0]
          << " | " << cells[1][1] << " | " << split << " | " << better << " |\n";
    }
  }
}

// Pooling and LRN layers of AlexNet (Krizhevsky et al. 2012: LRN size 5, 3x3 stride-2 max pooling)
// on DianNao's buffers: exact optimum and the heuristic.
void PoolingAndLrn(const bl::Hierarchy& h, const bl::SearchOptions& opt, ordered_json* records, std::ostringstream* md) {
  *md << "\n## Pooling and LRN (AlexNet's layers) on DianNao\n\n"
      << "Same loop nest without a kernel operand (src/blocking/layer.h): pooling K = channels, C = 1; LRN K = "
         "channels, C = the local size 5 (a window across channels). One op = one window step (1 pJ).\n\n"
      << "| layer | kind | dims | exact uJ | proved | exact s | heuristic uJ | gap % | IB uJ | OB uJ | exact string |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  const std::vector<bl::Layer> layers = {
      bl::LrnLayer("LRN1", 55, 55, 96, 5), bl::PoolLayer("Pool1", bl::LayerKind::kMaxPool, 27, 27, 96, 3, 3, 1, 2, 2),
      bl::LrnLayer("LRN2", 27, 27, 256, 5), bl::PoolLayer("Pool2", bl::LayerKind::kMaxPool, 13, 13, 256, 3, 3, 1, 2, 2),
      bl::PoolLayer("Pool5", bl::LayerKind::kMaxPool, 6, 6, 256, 3, 3, 1, 2, 2)};
  for (const bl::Layer& l : layers) {
    std::cerr << l.name << "...\n";
    auto heur = bl::HeuristicSearch(l, h, opt);
    auto ex = heur.ok() ? bl::ExactSearch(l, h, opt, &heur->best) : heur;
    if (!ex.ok()) {
      std::cerr << ex.status().message() << "\n";
      continue;
    }
    ordered_json rec = Record(l, h, "exact", ex->best, ex->eval, ex->search_s, ex->proved_optimal, ex->nodes);
    rec["kind"] = bl::KindName(l.kind);
    records->push_back(rec);
    rec = Record(l, h, "heuristic", heur->best, heur->eval, heur->search_s, false, heur->nodes);
    rec["kind"] = bl::KindName(l.kind);
    records->push_back(rec);
    std::string dims = "X" + std::to_string(l.extent(bl::Dim::kX)) + " Y" + std::to_string(l.extent(bl::Dim::kY)) + " K" +
                       std::to_string(l.extent(bl::Dim::kK)) + " C" + std::to_string(l.extent(bl::Dim::kC)) + " F" +
                       std::to_string(l.extent(bl::Dim::kFw)) + " s" + std::to_string(l.stride_x);
    *md << "| " << l.name << " | " << bl::KindName(l.kind) << " | " << dims << " | " << Fmt("%.2f", ex->eval.total_pj / 1e6)
        << " | " << (ex->proved_optimal ? "yes" : "no") << " | " << Fmt("%.2f", ex->search_s) << " | "
        << Fmt("%.2f", heur->eval.total_pj / 1e6) << " | " << Fmt("%.2f", 100.0 * (heur->eval.total_pj / ex->eval.total_pj - 1))
        << " | " << Fmt("%.2f", ex->eval.operand_pj[0] / 1e6) << " | " << Fmt("%.2f", ex->eval.operand_pj[2] / 1e6) << " | "
        << bl::ToString(ex->best) << " |\n";
  }
}

// --multicore only: recomputes the multi-core section and merges it into the existing results.
int MergeMulticore(const std::string& out_dir, const bl::Hierarchy& h, const bl::SearchOptions& opt,
                   const std::string& only) {
  ordered_json records = ordered_json::array();
  std::ostringstream md;
  std::ifstream jin(out_dir + "/blocking.json");
  std::ifstream min(out_dir + "/blocking.md");
  if (!jin || !min) {
    std::cerr << "--multicore only: run the full bench first (no " << out_dir << "/blocking.{json,md})\n";
    return 1;
  }
  ordered_json old = ordered_json::parse(jin);
  for (const auto& r : old["records"])
    if (r["method"].get<std::string>().rfind("multicore", 0) != 0) records.push_back(r);
  std::stringstream ms;
  ms << min.rdbuf();
  std::string text = ms.str();
  size_t cut = text.find("\n## Multi-core");
  if (cut == std::string::npos) cut = text.find("\nStrings (innermost");
  md << text.substr(0, cut);
  Multicore(h, opt, only, &records, &md);
  md << "\nStrings (innermost loop first) are in blocking.json. Multi-core section: " << sramplan::bench::Machine()
     << ", load " << sramplan::bench::LoadAverage() << ".\n";
  old["records"] = records;
  std::ofstream(out_dir + "/blocking.json") << old.dump(1) << "\n";
  std::ofstream(out_dir + "/blocking.md") << md.str();
  std::cout << md.str();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = std::string(SRAMPLAN_SOURCE_DIR) + "/bench/results";
  bl::SearchOptions opt;
  std::string only;
  bool codesign = true;
  // --multicore 1: add the multi-core section; only: recompute just that section and merge it into
  // the existing blocking.{json,md} (other records kept).
  std::string multicore = "1";
  bool pool_lrn = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--out") out_dir = argv[i + 1];
    else if (a == "--time-limit") opt.time_limit_s = std::stod(argv[i + 1]);
    else if (a == "--threads") opt.threads = std::stoi(argv[i + 1]);
    else if (a == "--layers") only = std::string(",") + argv[i + 1] + ",";
    else if (a == "--codesign") codesign = std::string(argv[i + 1]) != "0";
    else if (a == "--multicore") multicore = std::string(argv[i + 1]);
    else if (a == "--pool-lrn") pool_lrn = std::string(argv[i + 1]) != "0";
    else {
      std::cerr << "unknown flag " << a << "\n";
      return 1;
    }
  }
  auto t = sramplan::target::LoadTarget("diannao");
  if (!t.ok()) return 1;
  auto hd = bl::HierarchyFromTarget(*t);
  if (!hd.ok()) {
    std::cerr << hd.status().message() << "\n";
    return 1;
  }
  ordered_json records = ordered_json::array();
  std::ostringstream md;
  if (multicore == "only") return MergeMulticore(out_dir, *hd, opt, only);
  md << "# Blocking (issue 16): Table 4 layers on DianNao (IB 2 KB, KB 32 KB, OB 2 KB, DRAM; 16-bit)\n\n"
     << "Machine: " << sramplan::bench::Machine() << "; load " << sramplan::bench::LoadAverage() << "; exact search "
     << opt.threads << " threads, limit " << opt.time_limit_s << " s, at most " << opt.max_loops_per_dim
     << " loops per dimension. Energies in uJ (memory + 1 pJ/MAC).\n\n"
     << "exact s = wall time; CPU s = CPU time of the search, all threads (the machine is shared: with other "
        "jobs running, wall time exceeds CPU s / threads); nodes = prefixes visited.\n\n"
     << "| layer | exact uJ | proved | exact s | CPU s | nodes | heuristic uJ | gap % | heur. s | default uJ | default KB uJ | optimal KB uJ | KB ratio | total ratio |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<bl::Layer> convs;
  std::vector<double> diannao_pj, diannao_mem_pj;
  std::vector<RatioRow> ratio_rows;
  for (const bl::Layer& l : Table4()) {
    if (!only.empty() && only.find("," + l.name + ",") == std::string::npos) continue;
    std::cerr << l.name << "...\n";
    auto heur = bl::HeuristicSearch(l, *hd, opt);
    if (!heur.ok()) {
      std::cerr << heur.status().message() << "\n";
      return 1;
    }
    const std::clock_t c0 = std::clock();
    auto ex = bl::ExactSearch(l, *hd, opt, &heur->best);
    const double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    if (!ex.ok()) {
      std::cerr << ex.status().message() << "\n";
      return 1;
    }
    bl::BlockingString def = bl::DianNaoDefault(l, hd->levels[0].capacity_bytes, hd->word_bytes());
    bl::Evaluation dev = bl::Evaluate(l, *hd, def);
    records.push_back(Record(l, *hd, "exact", ex->best, ex->eval, ex->search_s, ex->proved_optimal, ex->nodes));
    records.back()["cpu_s"] = cpu_s;
    records.push_back(Record(l, *hd, "heuristic", heur->best, heur->eval, heur->search_s, false, heur->nodes));
    records.push_back(Record(l, *hd, "diannao-default", def, dev, 0, false, 0));
    double gap = 100.0 * (heur->eval.total_pj / ex->eval.total_pj - 1);
    if (l.name.rfind("Conv", 0) == 0) {
      convs.push_back(l);
      ratio_rows.push_back({l, ex->eval, dev, {}, {}, {}, {}});
      diannao_pj.push_back(ex->eval.total_pj);
      diannao_mem_pj.push_back(ex->eval.memory_pj);
    }
    md << "| " << l.name << " | " << Fmt("%.1f", ex->eval.total_pj / 1e6) << " | " << (ex->proved_optimal ? "yes" : "no")
       << " | " << Fmt("%.2f", ex->search_s) << " | " << Fmt("%.2f", cpu_s) << " | " << ex->nodes << " | "
       << Fmt("%.1f", heur->eval.total_pj / 1e6) << " | "
       << Fmt("%.2f", gap) << " | " << Fmt("%.2f", heur->search_s) << " | " << Fmt("%.1f", dev.total_pj / 1e6) << " | "
       << Fmt("%.1f", dev.operand_pj[1] / 1e6) << " | " << Fmt("%.1f", ex->eval.operand_pj[1] / 1e6) << " | "
       << Fmt("%.1fx", dev.operand_pj[1] / ex->eval.operand_pj[1]) << " | "
       << Fmt("%.1fx", dev.total_pj / ex->eval.total_pj) << " |\n";
    std::cerr << "  exact " << bl::ToString(ex->best) << " " << ex->eval.total_pj << " proved " << ex->proved_optimal
              << " " << ex->search_s << " s, nodes " << ex->nodes << "\n  heur " << heur->eval.total_pj << " "
              << heur->search_s << " s\n  default " << bl::ToString(def) << " " << dev.total_pj << "\n";
  }
  if (codesign && !convs.empty()) {
    const int64_t diannao_bytes = hd->OnChipBytes();
    md << "\n## Co-designed hierarchies (shared on-chip levels + DRAM, Table 3 at 64-bit words)\n\n"
       << "Per layer: the candidate with the lowest heuristic energy, then the exact search on it. Ratios are DianNao's "
          "exact optimum over the co-designed one (total = memory + MAC energy). Area: on-chip bytes over DianNao's "
       << diannao_bytes / 1024 << " KB (SRAM area is linear in bytes in our model).\n\n"
       << "| budget | layer | hierarchy | exact uJ | proved | exact s | CPU s | nodes | memory ratio | total ratio | on-chip KB | area ratio |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    bl::SearchOptions sweep = opt;
    sweep.beam = 32;
    sweep.perturbations = 1;
    for (int64_t budget : {int64_t{1} << 20, int64_t{8} << 20}) {
      std::string bname = budget == (int64_t{1} << 20) ? "1MB" : "8MB";
      std::cerr << "co-design " << bname << "...\n";
      auto pts = bl::CodesignSweep(convs, budget, 64, hd->word_bits, hd->mac_pj, sweep);
      if (!pts.ok()) {
        std::cerr << pts.status().message() << "\n";
        return 1;
      }
      size_t common = 0;
      for (size_t p = 0; p < pts->size(); ++p)
        if ((*pts)[p].total_pj < (*pts)[common].total_pj) common = p;
      for (size_t li = 0; li < convs.size(); ++li) {
        size_t best = 0;
        for (size_t p = 0; p < pts->size(); ++p)
          if ((*pts)[p].energy_pj[li] < (*pts)[best].energy_pj[li]) best = p;
        for (auto [idx, method] : {std::pair<size_t, std::string>{best, "exact"}, {common, "exact-common"}}) {
          const bl::Hierarchy& ch = (*pts)[idx].hierarchy;
          auto heur = bl::HeuristicSearch(convs[li], ch, opt);
          const std::clock_t c0 = std::clock();
          auto ex = heur.ok() ? bl::ExactSearch(convs[li], ch, opt, &heur->best) : heur;
          const double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
          if (!ex.ok()) {
            std::cerr << ex.status().message() << "\n";
            return 1;
          }
          ordered_json rec = Record(convs[li], ch, method, ex->best, ex->eval, ex->search_s, ex->proved_optimal, ex->nodes);
          rec["budget"] = bname;
          rec["cpu_s"] = cpu_s;
          rec["onchip_bytes"] = ch.OnChipBytes();
          rec["area_mm2"] = bl::SramAreaMm2(ch.OnChipBytes());
          rec["energy_ratio_vs_diannao"] = diannao_pj[li] / ex->eval.total_pj;
          rec["memory_ratio_vs_diannao"] = diannao_mem_pj[li] / ex->eval.memory_pj;
          rec["heuristic_energy_pj"] = heur->eval.total_pj;
          if (method == "exact") {
            (bname == "1MB" ? ratio_rows[li].cd1 : ratio_rows[li].cd8) = ex->eval;
            (bname == "1MB" ? ratio_rows[li].h1 : ratio_rows[li].h8) = ch;
          }
          records.push_back(rec);
          md << "| " << bname << (method == "exact" ? "" : " common") << " | " << convs[li].name << " | " << ch.name << " | "
             << Fmt("%.1f", ex->eval.total_pj / 1e6) << " | " << (ex->proved_optimal ? "yes" : "no") << " | "
             << Fmt("%.2f", ex->search_s) << " | " << Fmt("%.2f", cpu_s) << " | " << ex->nodes << " | "
             << Fmt("%.1fx", diannao_mem_pj[li] / ex->eval.memory_pj) << " | "
             << Fmt("%.1fx", diannao_pj[li] / ex->eval.total_pj) << " | " << ch.OnChipBytes() / 1024 << " | "
             << Fmt("%.1fx", static_cast<double>(ch.OnChipBytes()) / diannao_bytes) << " |\n";
          std::cerr << "  " << bname << " " << method << " " << convs[li].name << " " << ch.name << " "
                    << ex->eval.total_pj << " proved " << ex->proved_optimal << "\n";
        }
      }
    }
  }
  if (codesign && !ratio_rows.empty()) RatioAnalysis(*hd, ratio_rows, &md);
  if (pool_lrn) PoolingAndLrn(*hd, opt, &records, &md);
  if (multicore != "0") Multicore(*hd, opt, only, &records, &md);
  md << "\nStrings (innermost loop first) are in blocking.json.\n";
  ordered_json doc = {{"benchmark", "blocking"},
                      {"machine", sramplan::bench::Machine()},
                      {"threads", opt.threads},
                      {"time_limit_s", opt.time_limit_s},
                      {"max_loops_per_dim", opt.max_loops_per_dim},
                      {"records", records}};
  std::ofstream(out_dir + "/blocking.json") << doc.dump(1) << "\n";
  std::ofstream(out_dir + "/blocking.md") << md.str();
  std::cout << md.str();
  return 0;
}
