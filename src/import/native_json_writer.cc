// import::NativeGraphJson: an ir::Graph as the native graph format that native_json.cc reads.
#include <nlohmann/json.hpp>
#include <variant>

#include "import/import.h"

namespace sramplan::import {

std::string NativeGraphJson(const ir::Graph& g) {
  using json = nlohmann::ordered_json;
  json j;
  j["format"] = "sramplan-graph";
  j["version"] = 1;
  j["name"] = g.name;
  j["layout"] = g.layout == ir::Layout::kNHWC ? "NHWC" : "NCHW";
  json tensors = json::array();
  for (const ir::Tensor& t : g.tensors()) {
    json jt = {{"name", t.name},
               {"shape", t.shape},
               {"kind", ir::TensorKindName(t.kind)},
               {"dtype", ir::DataTypeName(t.dtype)}};
    if (!t.quant.empty()) {
      jt["quant"] = {{"scale", t.quant.scale}, {"zero_point", t.quant.zero_point}, {"axis", t.quant.axis}};
    }
    tensors.push_back(std::move(jt));
  }
  j["tensors"] = std::move(tensors);
  json ops = json::array();
  for (const ir::Op& op : g.ops()) {
    json jo = {{"name", op.name}, {"type", op.type == "Opaque" ? op.original_type : op.type}};
    json ins = json::array(), outs = json::array();
    for (ir::TensorId t : op.inputs) ins.push_back(g.tensor(t).name);
    for (ir::TensorId t : op.outputs) outs.push_back(g.tensor(t).name);
    jo["inputs"] = std::move(ins);
    jo["outputs"] = std::move(outs);
    if (!op.attrs.values().empty()) {
      json attrs = json::object();
      for (const auto& [key, value] : op.attrs.values())
        std::visit([&, k = key](const auto& v) { attrs[k] = v; }, value);
      jo["attrs"] = std::move(attrs);
    }
    ops.push_back(std::move(jo));
  }
  j["ops"] = std::move(ops);
  // One tensor or op per line (what a reader diffs), the rest indented.
  std::string out = "{\n";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += std::string(first ? "" : ",\n") + " " + json(it.key()).dump() + ": ";
    first = false;
    if (!it->is_array()) {
      out += it->dump();
      continue;
    }
    out += "[";
    for (size_t i = 0; i < it->size(); ++i) out += std::string(i ? ",\n  " : "\n  ") + (*it)[i].dump();
    out += it->empty() ? "]" : "\n ]";
  }
  return out + "\n}";
}

}  // namespace sramplan::import
