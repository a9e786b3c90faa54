// `sramplan plan` on .tflite files: tflm_arena_bytes and --tflite-out (tflite_cmd.h).
#include "tflite_cmd.h"

#include <fstream>
#include <map>
#include <sstream>

#include "driver/tflm_tail.h"
#include "import/tflite_model.h"
#include "import/tflite_writer.h"
#include "support/strings.h"

namespace sramplan::cli {
namespace {

namespace tfl = import::tflite;

StatusOr<std::string> ReadTflite(const std::string& path) {
  std::string bytes;
  SP_RETURN_IF_ERROR(ReadFileBounded(path, kMaxFileBytes, &bytes));
  if (!tfl::LooksLikeTflite(bytes)) return InvalidArgument("'" + path + "' is not a .tflite file");
  return bytes;
}

// The offset of every IR tensor name in the plan's arena level (views: their root's).
std::map<std::string, int64_t> ArenaOffsets(const plan::Plan& p) {
  std::map<std::string, int64_t> at;
  for (const auto& b : p.buffers)
    if (b.level == p.arena_level) at[b.tensor] = b.offset;
  std::map<std::string, std::string> alias;
  for (const auto& t : p.tensors)
    if (!t.alias_of.empty()) alias[t.name] = t.alias_of;
  for (const auto& [name, root] : alias) {
    std::string r = root;
    for (int hops = 0; hops < 64 && !at.count(r) && alias.count(r); ++hops) r = alias[r];
    if (at.count(r)) at[name] = at[r];
  }
  return at;
}

}  // namespace

bool IsTfliteFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  in.read(head, 8);
  return in.gcount() == 8 && tfl::LooksLikeTflite(std::string_view(head, 8));
}

StatusOr<std::string> TflmArenaReport(const std::string& path, driver::TflmKernels kernels) {
  SP_ASSIGN_OR_RETURN(std::string bytes, ReadTflite(path));
  SP_ASSIGN_OR_RETURN(tfl::Model m, tfl::ParseModel(bytes, path));
  driver::TflmArenaOptions o;
  o.kernels = kernels;
  SP_ASSIGN_OR_RETURN(driver::TflmArena a, driver::PredictTflmArena(bytes, m, o));
  SP_ASSIGN_OR_RETURN(driver::TflmTail tail64, driver::PredictTflmTail(m, a, 8));
  SP_ASSIGN_OR_RETURN(driver::TflmTail tail32, driver::PredictTflmTail(m, a, 4));
  std::string text = driver::TflmArenaSummary(a) + driver::TflmTailSummary(a, tail64, tail32);
  if (kernels == driver::TflmKernels::kCmsisNn)
    text += "  persistent tail: modelled with the reference kernels' OpData (CMSIS-NN's differs)\n";
  return text;
}

StatusOr<std::string> WriteTfliteWithPlan(const std::string& in_path, const std::string& out_path, const ir::Graph& g,
                                          const plan::Plan& p, driver::TflmKernels kernels) {
  SP_ASSIGN_OR_RETURN(std::string bytes, ReadTflite(in_path));
  SP_ASSIGN_OR_RETURN(tfl::Model m, tfl::ParseModel(bytes, in_path));
  // TFLM runs one operator at a time with its own kernels, in the file's order.
  if (!p.pools.empty())
    return InvalidArgument("--tflite-out: strategy '" + p.strategy +
                           "' addresses a circular segment pool, which TFLM's kernels cannot; export a tensor-level "
                           "strategy (tflm, optimal, linear, naive)");
  for (const auto& st : p.steps)
    if (st.kind != plan::StepKind::kOp || st.ops.size() != 1)
      return InvalidArgument("--tflite-out: strategy '" + p.strategy + "' runs step " + std::to_string(st.index) +
                             " with sramplan's own fused or in-place kernels, which TFLM does not have; export a "
                             "tensor-level strategy (tflm, optimal, linear, naive)");
  // The plan must run the operators in the file's order: TFLM runs them so.
  std::vector<std::string> order;
  for (const auto& st : p.steps)
    for (const auto& op : st.ops) order.push_back(op.name);
  std::vector<std::string> model_order;
  for (const auto& op : g.ops()) model_order.push_back(op.name);
  if (order != model_order)
    return InvalidArgument("--tflite-out: strategy '" + p.strategy +
                           "' runs the operators in another order than the file; TFLM runs them in the file's "
                           "order, so export a plan of a model-order strategy (tflm, optimal, linear, naive)");
  const std::map<std::string, int64_t> at = ArenaOffsets(p);
  const std::vector<std::string> names = tfl::IrTensorNames(m.subgraphs[0]);
  size_t total = 0;
  for (const auto& sg : m.subgraphs) total += sg.tensors.size();
  std::vector<int32_t> offsets(total, -1);
  for (size_t t = 0; t < names.size(); ++t) {
    auto it = at.find(names[t]);
    if (it == at.end() || m.buffers[m.subgraphs[0].tensors[t].buffer].size > 0) continue;
    if (it->second > INT32_MAX) return InvalidArgument("--tflite-out: offset of '" + names[t] + "' exceeds int32");
    offsets[t] = static_cast<int32_t>(it->second);
  }
  // What TFLM will plan with these offsets, and the check that its kernels can run it.
  driver::TflmArenaOptions o;
  o.kernels = kernels;
  o.offline_offsets = offsets;
  SP_ASSIGN_OR_RETURN(driver::TflmArena a, driver::PredictTflmArena(bytes, m, o));
  std::map<int, int> reshape_input;  // output tensor -> input tensor of a RESHAPE / SQUEEZE
  for (const auto& op : m.subgraphs[0].operators)
    if ((op.builtin == tfl::kReshape || op.builtin == tfl::kSqueeze) && !op.inputs.empty() && !op.outputs.empty())
      reshape_input[op.outputs[0]] = op.inputs[0];
  int offline = 0;
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const auto& x = a.buffers[i];
    offline += x.offline;
    for (size_t j = 0; j < i; ++j) {
      const auto& y = a.buffers[j];
      if (x.first > y.last || y.first > x.last) continue;
      if (x.offset >= y.offset + y.bytes || y.offset >= x.offset + x.bytes) continue;
      auto view = [&](const driver::TflmBuffer& out, const driver::TflmBuffer& in) {
        auto r = reshape_input.find(out.tensor);
        return r != reshape_input.end() && r->second == in.tensor && out.offset == in.offset && out.bytes == in.bytes;
      };
      if (view(x, y) || view(y, x)) continue;
      return InvalidArgument("--tflite-out: in strategy '" + p.strategy + "''s plan, '" + x.name + "' and '" +
                             y.name + "' share bytes while TFLM keeps both live (TFLM's kernels cannot run in place); "
                             "export a strategy without in-place or segment overlap (tflm, optimal, linear, naive)");
    }
  }
  SP_ASSIGN_OR_RETURN(std::string out, tfl::WithOfflinePlan(bytes, m, offsets));
  SP_RETURN_IF_ERROR(tfl::CheckOfflinePlanFile(bytes, out, offsets));
  std::ofstream f(out_path, std::ios::binary);
  f << out;
  if (!f) return InvalidArgument("cannot write '" + out_path + "'");
  driver::TflmArenaOptions own;
  own.kernels = kernels;
  own.use_offline_plan = false;
  SP_ASSIGN_OR_RETURN(driver::TflmArena base, driver::PredictTflmArena(bytes, m, own));
  return "wrote " + out_path + ": OfflineMemoryAllocation with " + std::to_string(offline) + " of " +
         std::to_string(total) + " tensors placed by '" + p.strategy + "' (read back and checked); TFLM's head with it: " +
         std::to_string(a.planned_bytes) + " B (its own planner: " + std::to_string(base.planned_bytes) + " B)\n";
}

}  // namespace sramplan::cli
