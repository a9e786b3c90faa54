// Native JSON graph format: docs/graph-format.md.
#include <limits>
#include <optional>
#include <set>

#include "import/import.h"
#include "import/json_util.h"
#include "ir/shape_inference.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::import {
namespace {

using nlohmann::json;

StatusOr<ir::AttrValue> ToAttr(const json& v, const std::string& where) {
  if (v.is_number_integer()) {
    std::optional<int64_t> x = JsonToInt64(v);
    if (!x) return InvalidArgument(where + ": " + JsonSnippet(v) + " does not fit a 64-bit integer");
    return ir::AttrValue(*x);
  }
  if (v.is_number()) return ir::AttrValue(v.get<double>());
  if (v.is_boolean()) return ir::AttrValue(static_cast<int64_t>(v.get<bool>()));
  if (v.is_string()) return ir::AttrValue(v.get<std::string>());
  if (v.is_array()) {
    bool all_int = true;
    for (const auto& e : v) {
      if (!e.is_number()) return InvalidArgument(where + ": lists may hold numbers only");
      if (!e.is_number_integer()) all_int = false;
    }
    if (all_int) {
      std::vector<int64_t> ints;
      for (const auto& e : v) {
        std::optional<int64_t> x = JsonToInt64(e);
        if (!x) return InvalidArgument(where + ": " + JsonSnippet(e) + " does not fit a 64-bit integer");
        ints.push_back(*x);
      }
      return ir::AttrValue(std::move(ints));
    }
    return ir::AttrValue(v.get<std::vector<double>>());
  }
  return InvalidArgument(where + ": unsupported attribute value " + JsonSnippet(v));
}

StatusOr<ir::QuantParams> ParseQuant(const json& q, const std::string& where) {
  ir::QuantParams p;
  SP_RETURN_IF_ERROR(ExpectObject(q, where));
  if (!q.contains("scale") || !q["scale"].is_array() || q["scale"].empty())
    return InvalidArgument(where + ": 'scale' must be a non-empty list of numbers");
  for (const auto& s : q["scale"]) {
    if (!s.is_number() || !(s.get<double>() > 0) || s.get<double>() > std::numeric_limits<float>::max())
      return InvalidArgument(where + ": every scale must be a positive number that fits a float, got " +
                             JsonSnippet(s));
    p.scale.push_back(s.get<float>());
  }
  if (q.contains("zero_point")) {
    if (!q["zero_point"].is_array()) return InvalidArgument(where + ": 'zero_point' must be a list");
    for (const auto& z : q["zero_point"]) {
      std::optional<int64_t> zp = JsonToInt64(z);
      if (!zp || *zp < INT32_MIN || *zp > INT32_MAX)
        return InvalidArgument(where + ": zero points must be 32-bit integers, got " + JsonSnippet(z));
      p.zero_point.push_back(static_cast<int32_t>(*zp));
    }
  } else {
    p.zero_point.assign(p.scale.size(), 0);
  }
  if (p.zero_point.size() != p.scale.size())
    return InvalidArgument(where + ": 'scale' and 'zero_point' must have the same length");
  SP_ASSIGN_OR_RETURN(int64_t axis, GetIntOr(q, "axis", 0, where));
  if (axis < -ir::kMaxRank || axis >= ir::kMaxRank)
    return InvalidArgument(where + ": axis " + std::to_string(axis) + " is out of range");
  p.axis = static_cast<int>(axis);
  return p;
}

// Declares the graph's 'tensors' in `g`; the names of those without a shape go to `missing_shape`.
Status AddTensors(const json& j, const std::string& where, const std::string& dtype_name, ir::Graph* g,
                  std::set<std::string>* missing_shape) {
  for (size_t i = 0; i < j["tensors"].size(); ++i) {
    const json& jt = j["tensors"][i];
    std::string tw = where + " tensors[" + std::to_string(i) + "]";
    SP_RETURN_IF_ERROR(ExpectObject(jt, tw));
    ir::Tensor t;
    SP_ASSIGN_OR_RETURN(t.name, GetString(jt, "name", tw));
    tw = where + " tensor '" + t.name + "'";
    if (g->FindTensor(t.name)) return InvalidArgument(tw + " is declared twice");
    SP_ASSIGN_OR_RETURN(std::string kind, GetStringOr(jt, "kind", "activation", tw));
    if (!ir::ParseTensorKind(kind, &t.kind))
      return InvalidArgument(tw + ": kind '" + kind + "' must be input, output, activation or constant");
    SP_ASSIGN_OR_RETURN(std::string dt, GetStringOr(jt, "dtype", dtype_name, tw));
    if (!ir::ParseDataType(dt, &t.dtype)) return InvalidArgument(tw + ": unknown dtype '" + dt + "'");
    if (jt.contains("shape")) {
      SP_ASSIGN_OR_RETURN(t.shape, GetIntList(jt, "shape", tw));
      if (t.shape.size() > static_cast<size_t>(ir::kMaxRank))
        return InvalidArgument(tw + " has rank " + std::to_string(t.shape.size()) +
                               "; sramplan supports up to 6 dimensions");
      for (int64_t d : t.shape)
        if (d <= 0)
          return InvalidArgument(tw + " has a non-positive dimension [" + JoinInts(t.shape) +
                                 "]; every dimension must be >= 1");
    } else {
      if (t.kind == ir::TensorKind::kInput || t.kind == ir::TensorKind::kConstant)
        return InvalidArgument(tw + " (" + kind + ") needs a 'shape'");
      missing_shape->insert(t.name);
    }
    if (jt.contains("quant")) {
      SP_ASSIGN_OR_RETURN(t.quant, ParseQuant(jt["quant"], tw + " quant"));
    }
    g->AddTensor(std::move(t));
  }
  return Status::Ok();
}

// A view op with an explicit 'shape' attribute (Reshape style: 0 copies the input dim, -1 is
// inferred) gives its output that shape.
Status SetExplicitViewShape(const ir::Op& added, const std::string& ow, ir::Graph* g,
                            std::set<std::string>* missing_shape) {
  std::vector<int64_t> s = added.attrs.GetInts("shape");
  const auto& x = g->tensor(added.inputs[0]).shape;
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == 0 && k < x.size()) s[k] = x[k];
    if (s[k] == -1) infer = static_cast<int64_t>(k);
    else if (s[k] <= 0) return InvalidArgument(ow + ": bad 'shape' attribute");
    else if (auto m = CheckedMul(known, s[k])) known = *m;
    else return InvalidArgument(ow + ": 'shape' has too many elements (overflow)");
  }
  int64_t numel = 1;
  for (int64_t d : x) {
    auto m = CheckedMul(numel, d);
    if (!m) return InvalidArgument(ow + ": the input has too many elements (overflow); check its dimensions");
    numel = *m;
  }
  if (infer >= 0) {
    if (numel % known != 0) return InvalidArgument(ow + ": 'shape' does not divide the input");
    s[infer] = numel / known;
  }
  g->tensor(added.outputs[0]).shape = s;
  missing_shape->erase(g->tensor(added.outputs[0]).name);
  return Status::Ok();
}

}  // namespace

static StatusOr<ir::Graph> ImportNativeJsonImpl(const std::string& text, const std::string& name,
                                     const ImportOptions& options) {
  SP_ASSIGN_OR_RETURN(json j, ParseJson(text, name));
  const std::string where = "graph '" + name + "'";
  SP_RETURN_IF_ERROR(ExpectObject(j, where));
  SP_ASSIGN_OR_RETURN(std::string format, GetString(j, "format", where));
  if (format != "sramplan-graph")
    return InvalidArgument(where + ": 'format' must be \"sramplan-graph\"");
  SP_ASSIGN_OR_RETURN(int64_t version, GetIntOr(j, "version", 1, where));
  if (version != 1)
    return InvalidArgument(where + ": version " + std::to_string(version) +
                           " is not supported (this sramplan reads version 1)");
  ir::Graph g;
  SP_ASSIGN_OR_RETURN(g.name, GetStringOr(j, "name", name, where));
  SP_ASSIGN_OR_RETURN(std::string layout, GetStringOr(j, "layout", "NCHW", where));
  if (layout == "NHWC") g.layout = ir::Layout::kNHWC;
  else if (layout != "NCHW") return InvalidArgument(where + ": layout must be \"NCHW\" or \"NHWC\"");
  SP_ASSIGN_OR_RETURN(std::string dtype_name, GetStringOr(j, "dtype", "float32", where));
  ir::DataType default_dtype;
  if (!ir::ParseDataType(dtype_name, &default_dtype))
    return InvalidArgument(where + ": unknown dtype '" + dtype_name + "'");

  if (!j.contains("tensors") || !j["tensors"].is_array())
    return InvalidArgument(where + ": 'tensors' must be a list");
  if (!j.contains("ops") || !j["ops"].is_array() || j["ops"].empty())
    return InvalidArgument(where + ": 'ops' must be a non-empty list");

  std::set<std::string> missing_shape;
  SP_RETURN_IF_ERROR(AddTensors(j, where, dtype_name, &g, &missing_shape));

  for (size_t i = 0; i < j["ops"].size(); ++i) {
    const json& jo = j["ops"][i];
    std::string ow = where + " ops[" + std::to_string(i) + "]";
    SP_RETURN_IF_ERROR(ExpectObject(jo, ow));
    ir::Op op;
    SP_ASSIGN_OR_RETURN(op.name, GetStringOr(jo, "name", "op" + std::to_string(i), ow));
    ow = where + " op '" + op.name + "'";
    SP_ASSIGN_OR_RETURN(op.type, GetString(jo, "type", ow));
    for (const char* key : {"inputs", "outputs"}) {
      if (!jo.contains(key) || !jo[key].is_array())
        return InvalidArgument(ow + ": '" + key + "' must be a list of tensor names");
      for (const auto& n : jo[key]) {
        if (!n.is_string()) return InvalidArgument(ow + ": '" + key + "' must hold tensor names");
        auto id = g.FindTensor(n.get<std::string>());
        if (!id)
          return InvalidArgument(ow + " refers to tensor '" + n.get<std::string>() +
                                 "', which is not declared in 'tensors'");
        (std::string(key) == "inputs" ? op.inputs : op.outputs).push_back(*id);
      }
    }
    if (jo.contains("attrs")) {
      SP_RETURN_IF_ERROR(ExpectObject(jo["attrs"], ow + " attrs"));
      for (auto it = jo["attrs"].begin(); it != jo["attrs"].end(); ++it) {
        SP_ASSIGN_OR_RETURN(ir::AttrValue v, ToAttr(it.value(), ow + " attr '" + it.key() + "'"));
        op.attrs.Set(it.key(), std::move(v));
      }
    }
    static const std::set<std::string> kKnown = {
        "Conv", "Gemm", "MatMul", "BatchNormalization", "Relu", "Clip", "Sigmoid", "HardSigmoid",
        "HardSwish", "Tanh", "Erf", "Softmax", "Add", "Sub", "Mul", "Div", "Pow", "MaxPool",
        "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "Concat", "Split",
        "Slice", "Gather", "Transpose", "Pad", "Resize", "LayerNormalization", "Reshape",
        "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Sqrt", "Opaque", "LRN"};
    if (!kKnown.count(op.type)) {
      if (!options.allow_unknown_ops)
        return Unsupported(ow + " has unsupported type '" + op.type +
                           "'; use a supported ONNX op name or pass --allow-unknown-ops");
      op.original_type = op.type;
      op.type = "Opaque";
    }
    // Fill missing output shapes from the shape rules (inputs are complete by now).
    bool ready = true;
    for (ir::TensorId in : op.inputs)
      if (missing_shape.count(g.tensor(in).name)) ready = false;
    ir::OpId id = g.AddOp(op);
    bool needs = false;
    for (ir::TensorId out : op.outputs)
      if (missing_shape.count(g.tensor(out).name)) needs = true;
    if (!needs) continue;
    if (!ready)
      return InvalidArgument(ow + ": an input has no shape yet (declare ops in execution order)");
    const ir::Op& added = g.op(id);
    if (ir::IsViewOp(added.type) && added.attrs.Has("shape") && added.inputs.size() >= 1) {
      SP_RETURN_IF_ERROR(SetExplicitViewShape(added, ow, &g, &missing_shape));
      continue;
    }
    auto shapes = ir::InferOutputShapes(g, added);
    if (!shapes.ok()) {
      if (shapes.status().code() == StatusCode::kUnsupported)
        return InvalidArgument(ow + ": give the shape of its outputs; sramplan cannot infer the "
                               "output shape of a " + added.type);
      return shapes.status();
    }
    for (size_t k = 0; k < added.outputs.size() && k < shapes->size(); ++k) {
      ir::Tensor& t = g.tensor(added.outputs[k]);
      if (missing_shape.erase(t.name)) t.shape = (*shapes)[k];
    }
  }
  if (!missing_shape.empty())
    return InvalidArgument(where + ": tensor '" + *missing_shape.begin() +
                           "' has no shape and no op produces it");
  SP_RETURN_IF_ERROR(ir::VerifyGraph(g));
  return g;
}

StatusOr<ir::Graph> ImportNativeJson(const std::string& text, const std::string& name,
                                 const ImportOptions& options) {
  return GuardJson<ir::Graph>("'" + name + "'", [&] { return ImportNativeJsonImpl(text, name, options); });
}

}  // namespace sramplan::import
