#include "block_cmd.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "blocking/hierarchy.h"
#include "blocking/model.h"
#include "blocking/multicore.h"
#include "blocking/optimizer.h"
#include "blocking/schedules.h"
#include "cli_checks.h"
#include "import/import.h"
#include "ir/op_geometry.h"
#include "support/strings.h"

namespace sramplan::cli {
namespace {

namespace bl = blocking;

struct BlockFlags {
  std::string model;
  std::string target;
  std::string dims;
  std::string table4;
  std::string layer;
  std::string method = "exact";
  std::string string;
  std::string json;
  double time_limit_s = 10;
  int threads = 2;
  int max_splits = 2;
  int64_t batch = 1;
  int cores = 0;  // > 0: multi-core K / XY partitioning
  std::string partition = "both";
};

BlockFlags& Flags() {
  static BlockFlags f;
  return f;
}

int Fail(const Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  return s.code() == StatusCode::kOutOfMemory ? 2 : s.code() == StatusCode::kMismatch ? 3 : 1;
}

std::string Num(double v, const char* fmt = "%.3f") {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string Dims(const bl::Layer& l) {
  std::string s = l.kind == bl::LayerKind::kConv ? "" : std::string("kind=") + bl::KindName(l.kind);
  for (bl::Dim d : bl::kAllDims) s += std::string(s.empty() ? "" : " ") + bl::DimName(d) + "=" + std::to_string(l.extent(d));
  if (l.stride_x != 1 || l.stride_y != 1) s += " sx=" + std::to_string(l.stride_x) + " sy=" + std::to_string(l.stride_y);
  return s;
}

// "X=56,Y=56,C=128,K=256,Fw=3,Fh=3[,N=1][,sx=1,sy=1][,kind=conv|maxpool|avgpool|lrn]"; kind =
// globalavgpool / globalmaxpool: X, Y = the input's width and height, K = the channels, pooled
// to 1 x 1 (the window is the whole input).
StatusOr<bl::Layer> ParseDims(const std::string& text) {
  bl::Layer l;
  l.name = "layer";
  bool global = false;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return InvalidArgument("--dims: '" + item.substr(0, 40) + "' is not NAME=VALUE (e.g. X=56,Y=56,C=128,K=256,Fw=3,Fh=3)");
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (key == "kind") {
      const std::string k = ToLower(val);
      global = k == "globalavgpool" || k == "globalmaxpool";
      if (global) l.kind = k == "globalmaxpool" ? bl::LayerKind::kMaxPool : bl::LayerKind::kAvgPool;
      if (!global && !bl::ParseKind(val, &l.kind))
        return InvalidArgument("--dims: kind = '" + val.substr(0, 40) +
                               "' is unknown; use conv, maxpool, avgpool, lrn, globalavgpool or globalmaxpool");
      continue;
    }
    char* end = nullptr;
    long long v = std::strtoll(val.c_str(), &end, 10);
    if (val.empty() || *end != '\0')
      return InvalidArgument("--dims: " + key + " = '" + val.substr(0, 40) + "' must be an integer");
    if (v < 1) return InvalidArgument("--dims: " + key + " = " + val + " must be a positive integer (at least 1)");
    bl::Dim d;
    if (key == "sx") l.stride_x = v;
    else if (key == "sy") l.stride_y = v;
    else if (bl::ParseDim(key, &d)) l.extent(d) = v;
    else return InvalidArgument("--dims: unknown dimension '" + key.substr(0, 40) + "'; use X, Y, C, K, Fw, Fh, N, sx, sy, kind");
  }
  if (global) {
    if (l.extent(bl::Dim::kFw) != 1 || l.extent(bl::Dim::kFh) != 1 || l.stride_x != 1 || l.stride_y != 1)
      return InvalidArgument("--dims: kind = global pooling takes the input as X, Y (the window is all of it); drop Fw, Fh, sx and sy");
    l.extent(bl::Dim::kFw) = l.extent(bl::Dim::kX);
    l.extent(bl::Dim::kFh) = l.extent(bl::Dim::kY);
    l.extent(bl::Dim::kX) = l.extent(bl::Dim::kY) = 1;
  }
  SP_RETURN_IF_ERROR(bl::ValidateLayer(l));
  return l;
}

StatusOr<bl::Layer> Table4(const std::string& name) {
  struct Row { const char* name; int64_t x, y, c, k, f; };
  static constexpr Row kRows[] = {{"Conv1", 256, 256, 256, 384, 11}, {"Conv2", 500, 375, 32, 48, 9},
                                  {"Conv3", 32, 32, 108, 200, 4},    {"Conv4", 56, 56, 128, 256, 3},
                                  {"Conv5", 28, 28, 256, 512, 3},    {"FC1", 1, 1, 200, 100, 1},
                                  {"FC2", 1, 1, 4096, 4096, 1}};
  for (const Row& r : kRows)
    if (ToLower(name) == ToLower(r.name)) return bl::ConvLayer(r.name, r.x, r.y, r.c, r.k, r.f, r.f);
  return InvalidArgument("--table4: unknown layer '" + name.substr(0, 40) + "'; use Conv1..Conv5, FC1 or FC2");
}

// The N, C, H, W extents of a rank-4 activation in the graph's layout; false for another rank.
bool Nchw(const ir::Graph& g, ir::TensorId id, int64_t* n, int64_t* c, int64_t* hh, int64_t* w) {
  const std::vector<int64_t>& s = g.tensor(id).shape;
  if (s.size() != 4) return false;
  const int ca = ir::ChannelAxis(g, 4);
  std::vector<int64_t> sp;
  for (int i = 1; i < 4; ++i)
    if (i != ca) sp.push_back(s[i]);
  *n = s[0];
  *c = s[ca];
  *hh = sp[0];
  *w = sp[1];
  return true;
}

// LRN (across channels), GlobalAveragePool / GlobalMaxPool and ReduceMean over the two spatial
// axes of a rank-4 tensor as a layer (pooling with the window = the input); *skip explains why an
// op of these types is not one.
StatusOr<bl::Layer> NormOrGlobalPool(const ir::Graph& g, const ir::Op& op, std::string* skip) {
  int64_t n = 0, c = 0, hh = 0, w = 0;
  if (op.inputs.empty() || !Nchw(g, op.inputs[0], &n, &c, &hh, &w)) {
    *skip = "its input is not a 4-D N, C, H, W tensor (outside the seven-loop nest)";
    return bl::Layer{};
  }
  if (op.type == "LRN") {
    if (!op.attrs.Has("size"))
      return InvalidArgument("LRN op '" + op.name + "' has no 'size' attribute; give the number of channels it sums over (e.g. 5)");
    const int64_t size = op.attrs.GetInt("size", 0);
    if (size < 1)
      return InvalidArgument("LRN op '" + op.name + "': size = " + std::to_string(size) + " must be a positive integer");
    return bl::LrnLayer(op.name, w, hh, c, size, n);
  }
  if (op.type == "ReduceMean") {
    std::vector<int64_t> axes = op.attrs.GetInts("axes");
    const int ca = ir::ChannelAxis(g, 4);
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
    std::sort(axes.begin(), axes.end());
    std::vector<int64_t> spatial;
    for (int64_t i = 1; i < 4; ++i)
      if (i != ca) spatial.push_back(i);
    if (axes != spatial) {
      *skip = "it does not reduce exactly the two spatial axes (not a global pooling)";
      return bl::Layer{};
    }
  }
  const bl::LayerKind kind = op.type == "GlobalMaxPool" ? bl::LayerKind::kMaxPool : bl::LayerKind::kAvgPool;
  return bl::PoolLayer(op.name, kind, 1, 1, c, w, hh, n);
}

// Every Conv (group 1, 2-D, no dilation), Gemm / MatMul, 2-D MaxPool / AveragePool (no dilation;
// padding as the output extents imply), LRN, GlobalAveragePool / GlobalMaxPool and ReduceMean over
// H and W of the model as a layer; others are listed on stderr as skipped.
StatusOr<std::vector<bl::Layer>> ModelLayers(const std::string& path, int64_t batch, const std::string& only, int verbosity) {
  import::ImportOptions io;
  io.batch = batch;
  SP_ASSIGN_OR_RETURN(ir::Graph g, import::ImportModel(path, io));
  std::vector<bl::Layer> out;
  for (const ir::Op& op : g.ops()) {
    if (!only.empty() && op.name != only) continue;
    if (op.type == "Conv") {
      SP_ASSIGN_OR_RETURN(ir::ConvGeometry cg, ir::ParseConvGeometry(g, op));
      if (!cg.Is2D() || cg.group != 1 || !cg.UnitDilations()) {
        if (verbosity > 0) std::cerr << "skipped " << op.name << ": grouped, dilated or not 2-D (outside the seven-loop nest)\n";
        continue;
      }
      out.push_back(bl::ConvLayer(op.name, cg.out_spatial[1], cg.out_spatial[0], cg.in_channels, cg.out_channels,
                                  cg.kernel[1], cg.kernel[0], cg.batch, cg.strides[1], cg.strides[0]));
    } else if (op.type == "Gemm" || op.type == "MatMul") {
      SP_ASSIGN_OR_RETURN(ir::GemmGeometry gg, ir::ParseGemmGeometry(g, op));
      int64_t nb = gg.m;
      for (int64_t b : gg.batch) nb *= b;
      out.push_back(bl::FcLayer(op.name, gg.k, gg.n, nb));
    } else if (op.type == "MaxPool" || op.type == "AveragePool") {
      SP_ASSIGN_OR_RETURN(ir::PoolGeometry pg, ir::ParsePoolGeometry(g, op));
      if (!pg.Is2D() || !pg.UnitDilations()) {
        if (verbosity > 0) std::cerr << "skipped " << op.name << ": dilated or not 2-D (outside the seven-loop nest)\n";
        continue;
      }
      out.push_back(bl::PoolLayer(op.name, pg.max ? bl::LayerKind::kMaxPool : bl::LayerKind::kAvgPool,
                                  pg.out_spatial[1], pg.out_spatial[0], pg.in_channels, pg.kernel[1], pg.kernel[0],
                                  pg.batch, pg.strides[1], pg.strides[0]));
    } else if (op.type == "LRN" || op.type == "GlobalAveragePool" || op.type == "GlobalMaxPool" ||
               op.type == "ReduceMean") {
      std::string skip;
      SP_ASSIGN_OR_RETURN(bl::Layer l, NormOrGlobalPool(g, op, &skip));
      if (!skip.empty()) {
        if (verbosity > 0) std::cerr << "skipped " << op.name << ": " << skip << "\n";
        continue;
      }
      out.push_back(l);
    }
  }
  if (out.empty())
    return InvalidArgument(only.empty() ? "model '" + path + "' has no Conv, Gemm, MatMul, pooling or LRN layer to block"
                                        : "--layer: no Conv, Gemm, MatMul, pooling or LRN op named '" + only + "' in '" + path + "'");
  return out;
}

struct Outcome {
  bl::Layer layer;
  std::string method;
  bl::BlockingString string;
  bl::Evaluation eval;
  double search_s = 0;
  bool proved = false;
  int64_t nodes = 0;
};

StatusOr<Outcome> BlockOne(const bl::Layer& l, const bl::Hierarchy& h, const BlockFlags& f) {
  SP_RETURN_IF_ERROR(bl::ValidateLayer(l));
  Outcome o;
  o.layer = l;
  o.method = f.method;
  bl::SearchOptions opt;
  opt.time_limit_s = f.time_limit_s;
  opt.threads = f.threads;
  opt.max_loops_per_dim = f.max_splits;
  if (f.method == "string") {
    SP_ASSIGN_OR_RETURN(o.string, bl::ParseBlockingString(f.string, l));
    o.eval = bl::Evaluate(l, h, o.string);
    if (!o.eval.fits) return OutOfMemory("layer '" + l.name + "': the given string's buffers do not fit '" + h.name + "'");
    return o;
  }
  if (f.method == "default") {
    o.string = bl::DianNaoDefault(l, h.levels[0].capacity_bytes, h.word_bytes());
    o.eval = bl::Evaluate(l, h, o.string);
    return o;
  }
  SP_ASSIGN_OR_RETURN(bl::SearchResult heur, bl::HeuristicSearch(l, h, opt));
  bl::SearchResult r = heur;
  if (f.method == "exact") {
    SP_ASSIGN_OR_RETURN(bl::SearchResult ex, bl::ExactSearch(l, h, opt, &heur.best));
    ex.search_s += heur.search_s;
    r = ex;
  }
  o.string = r.best;
  o.eval = r.eval;
  o.search_s = r.search_s;
  o.proved = r.proved_optimal;
  o.nodes = r.nodes;
  return o;
}

nlohmann::ordered_json ToJson(const Outcome& o, const bl::Hierarchy& h) {
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  for (size_t i = 0; i < h.levels.size(); ++i) {
    nlohmann::ordered_json bufs = nlohmann::ordered_json::array();
    for (const bl::BufferUse& u : o.eval.buffers)
      if (u.level == static_cast<int>(i))
        bufs.push_back({{"buffer", u.backing ? std::string(bl::OperandName(u.operand)) : std::string(bl::BufferName(u.operand))},
                        {"cut", u.cut}, {"elems", u.elems}, {"bytes", u.elems * h.word_bytes()}, {"fills", u.fills},
                        {"reads", u.reads}, {"writes", u.writes}, {"backing", u.backing}});
    const bl::LevelUse& lu = o.eval.levels[i];
    levels.push_back({{"name", h.levels[i].name}, {"capacity_bytes", h.levels[i].capacity_bytes},
                      {"used_bytes", lu.used_bytes}, {"reads", lu.reads}, {"writes", lu.writes},
                      {"accesses", lu.reads + lu.writes}, {"energy_pj", lu.energy_pj}, {"buffers", bufs}});
  }
  nlohmann::ordered_json dims = nlohmann::ordered_json::object();
  for (bl::Dim d : bl::kAllDims) dims[bl::DimName(d)] = o.layer.extent(d);
  dims["sx"] = o.layer.stride_x;
  dims["sy"] = o.layer.stride_y;
  return {{"layer", o.layer.name},  {"kind", bl::KindName(o.layer.kind)}, {"dims", dims},
          {"hierarchy", h.name},    {"method", o.method},
          {"string", bl::ToString(o.string)}, {"energy_pj", o.eval.total_pj},
          {"memory_pj", o.eval.memory_pj},    {"mac_pj", o.eval.mac_pj},
          {"operand_pj", {{"input", o.eval.operand_pj[0]}, {"kernel", o.eval.operand_pj[1]}, {"output", o.eval.operand_pj[2]}}},
          {"macs", o.eval.macs},    {"search_s", o.search_s},
          {"proved_optimal", o.proved}, {"nodes", o.nodes},
          {"levels", levels}};
}

void PrintOne(const Outcome& o, const bl::Hierarchy& h) {
  std::cout << "layer " << o.layer.name << " (" << Dims(o.layer) << ") on " << h.name << ", method " << o.method;
  if (o.method == "exact") std::cout << (o.proved ? " (proved optimal" : " (NOT proved: time limit") << ", " << Num(o.search_s, "%.2f") << " s)";
  else if (o.method == "heuristic") std::cout << " (" << Num(o.search_s, "%.2f") << " s)";
  std::cout << "\n  string (innermost first): " << bl::ToString(o.string) << "\n";
  std::printf("  %-10s %12s %-40s %14s %14s %12s\n", "level", "capacity", "buffers (cut:bytes)", "reads", "writes", "energy uJ");
  for (size_t i = 0; i < h.levels.size(); ++i) {
    std::string bufs;
    for (const bl::BufferUse& u : o.eval.buffers)
      if (u.level == static_cast<int>(i))
        bufs += std::string(bufs.empty() ? "" : " ") + (u.backing ? std::string(bl::OperandName(u.operand)) : std::string(bl::BufferName(u.operand)) + "@" + std::to_string(u.cut)) +
                ":" + HumanBytes(u.elems * h.word_bytes());
    const bl::LevelUse& lu = o.eval.levels[i];
    std::printf("  %-10s %12s %-40s %14lld %14lld %12.3f\n", h.levels[i].name.c_str(), HumanBytes(h.levels[i].capacity_bytes).c_str(),
                bufs.c_str(), static_cast<long long>(lu.reads), static_cast<long long>(lu.writes), lu.energy_pj / 1e6);
  }
  std::cout << "  energy " << Num(o.eval.total_pj / 1e6) << " uJ = memory " << Num(o.eval.memory_pj / 1e6) << " uJ (IB "
            << Num(o.eval.operand_pj[0] / 1e6) << ", KB " << Num(o.eval.operand_pj[1] / 1e6) << ", OB "
            << Num(o.eval.operand_pj[2] / 1e6) << ") + MAC " << Num(o.eval.mac_pj / 1e6) << " uJ\n";
}

// --cores N: K and/or XY partitioning of each layer across N cores (blocking/multicore.h).
StatusOr<bl::MulticoreResult> MulticoreOne(const bl::Layer& l, const bl::Hierarchy& h, const BlockFlags& f, bl::Partition p) {
  bl::MulticoreOptions mo;
  mo.cores = f.cores;
  mo.partition = p;
  if (f.method == "string") {
    SP_ASSIGN_OR_RETURN(bl::Layer sub, bl::PartitionLayer(l, f.cores, p, nullptr));
    SP_ASSIGN_OR_RETURN(bl::BlockingString s, bl::ParseBlockingString(f.string, sub));
    return bl::EvaluateMulticore(l, h, s, mo);
  }
  bl::SearchOptions opt;
  opt.time_limit_s = f.time_limit_s;
  opt.threads = f.threads;
  opt.max_loops_per_dim = f.max_splits;
  return bl::MulticoreSearch(l, h, mo, opt, f.method == "exact");
}

int RunMulticore(const std::vector<bl::Layer>& layers, const bl::Hierarchy& h, const BlockFlags& f) {
  if (f.method == "default") return Fail(InvalidArgument("--cores works with --method exact, heuristic or string, not default"));
  std::vector<bl::Partition> parts;
  if (f.partition != "XY") parts.push_back(bl::Partition::kK);
  if (f.partition != "K") parts.push_back(bl::Partition::kXY);
  nlohmann::ordered_json doc = {{"schema", "sramplan-block-multicore/1"}, {"hierarchy", h.name}, {"cores", f.cores},
                                {"method", f.method}, {"layers", nlohmann::ordered_json::array()}};
  std::printf("%d cores on %s (on-chip levels private per core, off-chip shared), method %s\n", f.cores, h.name.c_str(),
              f.method.c_str());
  std::printf("  %-10s %-4s %-5s %-36s %12s %12s %12s %12s %12s\n", "layer", "part", "split", "per-core string", "bcast words",
              "private uJ", "bcast uJ", "MAC uJ", "total uJ");
  for (const bl::Layer& l : layers) {
    if (Status st = bl::ValidateLayer(l); !st.ok()) return Fail(st);
    for (bl::Partition p : parts) {
      StatusOr<bl::MulticoreResult> r = MulticoreOne(l, h, f, p);
      if (!r.ok()) return Fail(r.status());
      std::printf("  %-10s %-4s %-5s %-36s %12lld %12.3f %12.3f %12.3f %12.3f\n", l.name.c_str(), bl::PartitionName(p),
                  bl::DimName(r->split), bl::ToString(r->string).c_str(), static_cast<long long>(r->broadcast_words),
                  r->private_pj / 1e6, r->broadcast_pj / 1e6, r->mac_pj / 1e6, r->total_pj / 1e6);
      doc["layers"].push_back({{"layer", l.name}, {"partition", bl::PartitionName(p)}, {"split", bl::DimName(r->split)},
                               {"string", bl::ToString(r->string)}, {"shared", bl::OperandName(r->shared)},
                               {"broadcast_words", r->broadcast_words}, {"broadcast_pj_per_word", r->broadcast_pj_per_word},
                               {"private_pj", r->private_pj}, {"broadcast_pj", r->broadcast_pj},
                               {"memory_pj", r->memory_pj}, {"mac_pj", r->mac_pj}, {"energy_pj", r->total_pj},
                               {"core_energy_pj", r->core.total_pj}, {"onchip_bytes", r->onchip_bytes},
                               {"search_s", r->search_s}, {"proved_optimal", r->proved_optimal}});
    }
  }
  if (!f.json.empty()) {
    std::ofstream out(f.json, std::ios::binary);
    out << doc.dump(1) << "\n";
    if (!out) return Fail(InvalidArgument("--json: cannot write '" + f.json + "'"));
  }
  return 0;
}

}  // namespace

CLI::App* AddBlockCommand(CLI::App* app) {
  BlockFlags& f = Flags();
  auto* cmd = app->add_subcommand("block", "loop-nest blocking of one layer or of every conv/FC layer of a model on a "
                                           "memory hierarchy (blocking string, buffers, accesses and energy per level)");
  cmd->add_option("model", f.model, "model (.onnx, .graph.json, MCUNet config): block its Conv/Gemm/MatMul, pooling and LRN layers");
  cmd->add_option("--target", f.target, "hierarchy: a target preset or file (e.g. diannao) or a blocking hierarchy JSON")->required();
  cmd->add_option("--dims", f.dims, "one layer: X=..,Y=..,C=..,K=..,Fw=..,Fh=..[,N=..][,sx=..,sy=..][,kind=..] (unset ones are 1)");
  cmd->add_option("--table4", f.table4, "one of the blocking paper's Table 4 layers: Conv1..Conv5, FC1, FC2");
  cmd->add_option("--layer", f.layer, "with a model: only the op of this name");
  cmd->add_option("--method", f.method, "exact (default; seeded by the heuristic), heuristic, default (DianNao's), string")
      ->check(CLI::IsMember({"exact", "heuristic", "default", "string"}));
  cmd->add_option("--string", f.string, "with --method string: the blocking string to evaluate, innermost first (e.g. \"Fw Fh X:8 K Y X C\")");
  cmd->add_option("--json", f.json, "write the results as JSON to this file");
  cmd->add_option("--time-limit", f.time_limit_s, "seconds per exact search (default 10); past it proved_optimal is false")->check(kTimeLimit);
  cmd->add_option("--threads", f.threads, "threads of the exact search (default 2)")->check(CLI::Range(1, 256));
  cmd->add_option("--max-splits", f.max_splits, "loops per dimension in the searched strings (default 2)")->check(CLI::Range(1, 4));
  cmd->add_option("--batch", f.batch, "with a model: bind the symbolic batch dimension (default 1)")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--cores", f.cores, "partition each layer across N cores (K and XY, paper Sec. 3.3)")->check(CLI::Range(1, 4096));
  cmd->add_option("--partition", f.partition, "with --cores: K, XY or both (default)")->check(CLI::IsMember({"K", "XY", "both"}));
  return cmd;
}

int RunBlockCommand(int verbosity) {
  const BlockFlags& f = Flags();
  int sources = (f.model.empty() ? 0 : 1) + (f.dims.empty() ? 0 : 1) + (f.table4.empty() ? 0 : 1);
  if (sources != 1) return Fail(InvalidArgument("block: give exactly one of a model, --dims or --table4"));
  if (f.method == "string" && f.string.empty()) return Fail(InvalidArgument("--method string needs --string \"...\""));
  StatusOr<bl::Hierarchy> h = bl::LoadHierarchy(f.target);
  if (!h.ok()) return Fail(h.status());
  std::vector<bl::Layer> layers;
  if (!f.dims.empty()) {
    StatusOr<bl::Layer> l = ParseDims(f.dims);
    if (!l.ok()) return Fail(l.status());
    layers.push_back(*l);
  } else if (!f.table4.empty()) {
    StatusOr<bl::Layer> l = Table4(f.table4);
    if (!l.ok()) return Fail(l.status());
    layers.push_back(*l);
  } else {
    StatusOr<std::vector<bl::Layer>> ls = ModelLayers(f.model, f.batch, f.layer, verbosity);
    if (!ls.ok()) return Fail(ls.status());
    layers = *ls;
  }
  if (f.cores > 0) return RunMulticore(layers, *h, f);
  nlohmann::ordered_json doc = {{"schema", "sramplan-block/1"}, {"hierarchy", h->name}, {"layers", nlohmann::ordered_json::array()}};
  double total = 0;
  for (const bl::Layer& l : layers) {
    if (verbosity > 1) std::cerr << "blocking " << l.name << "...\n";
    StatusOr<Outcome> o = BlockOne(l, *h, f);
    if (!o.ok()) return Fail(o.status());
    if (verbosity > 0 || layers.size() == 1) PrintOne(*o, *h);
    total += o->eval.total_pj;
    doc["layers"].push_back(ToJson(*o, *h));
  }
  if (layers.size() > 1) std::cout << layers.size() << " layers, total energy " << Num(total / 1e6) << " uJ\n";
  if (!f.json.empty()) {
    std::ofstream out(f.json, std::ios::binary);
    out << doc.dump(1) << "\n";
    if (!out) return Fail(InvalidArgument("--json: cannot write '" + f.json + "'"));
  }
  return 0;
}

}  // namespace sramplan::cli
