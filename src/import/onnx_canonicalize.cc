// Canonicalisation (step 5 of the importer pipeline in onnx_import.cc: control inputs become
// attributes, Identity/Dropout disappear, BatchNormalization after a Conv is folded into it, window
// attributes are made explicit) and emission of the ir::Graph (step 6). Part of the ONNX importer
// (see onnx_internal.h).
#include "import/onnx_internal.h"
#include "ir/shape_inference.h"
#include "support/strings.h"

namespace sramplan::import::onnx_internal {
namespace {

// Copies the ONNX attributes that ir::Attributes can hold (int, float, string, ints, floats).
void CopyAttributes(const NodeProto& n, ir::Attributes* out) {
  for (const auto& a : n.attribute()) {
    AttributeProto::AttributeType type = a.type();
    if (type == AttributeProto::UNDEFINED) {  // old files: deduce from the populated field
      if (a.ints_size())
        type = AttributeProto::INTS;
      else if (a.floats_size())
        type = AttributeProto::FLOATS;
      else if (a.has_s())
        type = AttributeProto::STRING;
      else if (a.has_f())
        type = AttributeProto::FLOAT;
      else if (a.has_i())
        type = AttributeProto::INT;
    }
    switch (type) {
      case AttributeProto::INT:
        out->Set(a.name(), static_cast<int64_t>(a.i()));
        break;
      case AttributeProto::FLOAT:
        out->Set(a.name(), static_cast<double>(a.f()));
        break;
      case AttributeProto::STRING:
        out->Set(a.name(), a.s());
        break;
      case AttributeProto::INTS:
        out->Set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        break;
      case AttributeProto::FLOATS: {
        std::vector<double> v(a.floats().begin(), a.floats().end());
        out->Set(a.name(), std::move(v));
        break;
      }
      case AttributeProto::TENSOR:
        // A one-element tensor attribute (ConstantOfShape value) becomes a number.
        if (a.has_t() &&
            NumElements(Dims(a.t().dims().begin(), a.t().dims().end())) == int64_t{1}) {
          std::vector<uint8_t> bytes;
          bool has = false;
          if (ReadPayload(a.t(), "attribute", &bytes, &has).ok() && has) {
            Value v = DecodeBytes(a.t().data_type(), Dims(a.t().dims().begin(), a.t().dims().end()),
                                  bytes);
            if (v.size() == 1) {
              if (v.is_float())
                out->Set(a.name(), v.f[0]);
              else
                out->Set(a.name(), v.i[0]);
            }
          }
        }
        break;
      default:
        break;  // graphs, strings lists, sparse tensors: not representable, dropped
    }
  }
}

// Inputs that ONNX turned from attributes into tensors: (input index, attribute name, as floats).
struct ControlInput {
  int index;
  const char* attr;
  bool floats;
};

std::vector<ControlInput> ControlInputsOf(const std::string& t) {
  if (t == "Clip") return {{1, "min", true}, {2, "max", true}};
  if (t == "Split") return {{1, "split", false}};
  if (t == "Slice")
    return {{1, "starts", false}, {2, "ends", false}, {3, "axes", false}, {4, "steps", false}};
  if (t == "Pad") return {{1, "pads", false}, {2, "value", true}, {3, "axes", false}};
  if (t == "Reshape" || t == "Expand") return {{1, "shape", false}};
  if (t == "Squeeze" || t == "Unsqueeze") return {{1, "axes", false}};
  if (t == "ReduceSum" || t == "ReduceMean" || t == "ReduceMax" || t == "ReduceMin" ||
      t == "ReduceProd" || t == "ReduceL1" || t == "ReduceL2" || t == "ReduceLogSumExp" ||
      t == "ReduceSumSquare" || t == "ReduceLogSum")
    return {{1, "axes", false}};
  if (t == "Resize") return {{1, "roi", true}, {2, "scales", true}, {3, "sizes", false}};
  if (t == "Upsample") return {{1, "scales", true}};
  if (t == "Tile") return {{1, "repeats", false}};
  if (t == "ConstantOfShape") return {{0, "shape", false}};
  if (t == "TopK") return {{1, "k", false}};
  return {};
}

}  // namespace

Status Importer::FoldControlInputs(NodeRec& r) {
  for (const ControlInput& c : ControlInputsOf(r.type)) {
    if (c.index >= static_cast<int>(r.inputs.size())) continue;
    std::string& in = r.inputs[c.index];
    if (in.empty() || !IsConstant(in)) continue;  // absent, or computed at run time: stays
    if (const Value* v = Known(in)) {
      bool scalar_attr = r.type == "Clip" || (r.type == "Pad" && c.index == 2) || r.type == "TopK";
      if (v->size() > 0 || !scalar_attr) {
        if (std::string(c.attr) == "roi") {
          // roi only matters for tf_crop_and_resize; dropped.
        } else if (scalar_attr && v->size() == 1) {
          if (c.floats)
            r.attrs.Set(c.attr, v->D(0));
          else
            r.attrs.Set(c.attr, v->I(0));
        } else if (c.floats) {
          if (v->size() > 0) r.attrs.Set(c.attr, v->Floats());
        } else if (v->size() > 0 || r.type != "Resize") {
          r.attrs.Set(c.attr, v->Ints());
        }
      }
    }
    in.clear();  // a constant control input is not a data tensor: drop it (stripped or folded)
  }
  if (r.type == "Reshape") {
    // The resolved output shape, which is what a planner needs (no 0 / -1 entries).
    if (auto s = StaticShapeOf(r.outputs[0])) r.attrs.Set("shape", *s);
  }
  if (r.type == "Slice" && r.attrs.Has("starts")) {
    size_t m = r.attrs.GetInts("starts").size();
    if (!r.attrs.Has("axes")) {
      std::vector<int64_t> axes;
      for (size_t k = 0; k < m; ++k) axes.push_back(static_cast<int64_t>(k));
      r.attrs.Set("axes", axes);
    }
    if (!r.attrs.Has("steps")) r.attrs.Set("steps", std::vector<int64_t>(m, 1));
  }
  if (r.type == "Pad" && r.attrs.Has("axes") && r.attrs.Has("pads")) {
    // Opset 18 Pad with axes: expand pads to every axis.
    auto rank_dims = StaticShapeOf(r.inputs[0]);
    std::vector<int64_t> axes = r.attrs.GetInts("axes"), pads = r.attrs.GetInts("pads");
    if (rank_dims && pads.size() == 2 * axes.size()) {
      int64_t rk = static_cast<int64_t>(rank_dims->size());
      std::vector<int64_t> full(2 * rk, 0);
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = NormAxis(axes[k], rk);
        if (a < 0 || a >= rk)
          return InvalidArgument("node " + Q(r.name) + " (Pad): axis out of range");
        full[a] = pads[k];
        full[a + rk] = pads[k + axes.size()];
      }
      r.attrs.Set("pads", full);
    }
  }
  if (r.type == "Resize" || r.type == "Upsample") {
    if (auto s = StaticShapeOf(r.outputs[0]); s && !r.attrs.Has("sizes")) r.attrs.Set("sizes", *s);
  }
  return Status::Ok();
}

Status Importer::NormalizeWindowAttrs(NodeRec& r) {
  bool conv = r.type == "Conv";
  if (!conv && r.type != "MaxPool" && r.type != "AveragePool" && r.type != "LpPool")
    return Status::Ok();
  if (r.inputs.empty() || r.inputs[0].empty()) return Status::Ok();
  auto x = StaticShapeOf(r.inputs[0]);
  if (!x || x->size() < 3) return Status::Ok();  // VerifyGraph / shape errors report it
  size_t nsp = x->size() - 2;
  std::vector<int64_t> kernel = r.attrs.GetInts("kernel_shape");
  if (conv && kernel.empty() && r.inputs.size() > 1) {
    if (auto w = StaticShapeOf(r.inputs[1]); w && w->size() == x->size())
      kernel.assign(w->begin() + 2, w->end());
    r.attrs.Set("kernel_shape", kernel);
  }
  if (kernel.size() != nsp) return Status::Ok();
  std::vector<int64_t> strides = r.attrs.GetInts("strides", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> dil = r.attrs.GetInts("dilations", std::vector<int64_t>(nsp, 1));
  r.attrs.Set("strides", strides);
  if (conv || r.attrs.Has("dilations")) r.attrs.Set("dilations", dil);
  if (conv) r.attrs.Set("group", r.attrs.GetInt("group", 1));
  std::string auto_pad = r.attrs.GetString("auto_pad", "NOTSET");
  std::vector<int64_t> pads = r.attrs.GetInts("pads", std::vector<int64_t>(2 * nsp, 0));
  if (auto_pad == "VALID") {
    pads.assign(2 * nsp, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (strides.size() != nsp || dil.size() != nsp) return Status::Ok();
    pads.assign(2 * nsp, 0);
    for (size_t i = 0; i < nsp; ++i) {
      int64_t in = (*x)[2 + i];
      int64_t s = std::max<int64_t>(strides[i], 1);
      int64_t out = CeilDiv(in, s);
      int64_t eff = dil[i] * (kernel[i] - 1) + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in);
      int64_t small = total / 2, big = total - small;
      pads[i] = auto_pad == "SAME_UPPER" ? small : big;
      pads[i + nsp] = auto_pad == "SAME_UPPER" ? big : small;
    }
  }
  if (auto_pad != "NOTSET") r.attrs.Set("auto_pad", std::string("NOTSET"));
  r.attrs.Set("pads", pads);
  return Status::Ok();
}

std::string Importer::UniqueName(const std::string& base) {
  std::string n = base;
  for (int s = 1; all_names_.count(n); ++s) n = base + "_" + std::to_string(s);
  all_names_.insert(n);
  return n;
}

Status Importer::Canonicalize() {
  const onnx::GraphProto& g = model_.graph();
  std::unordered_map<std::string, int> uses;
  for (const auto& n : g.node())
    for (const auto& i : n.input()) ++uses[i];
  for (const auto& o : output_names_) ++uses[o];
  std::unordered_map<std::string, std::string> alias;
  auto resolve = [&](const std::string& s) {
    auto it = alias.find(s);
    return it == alias.end() ? s : it->second;
  };
  // ONNX node names are optional and need not be unique; sramplan addresses ops by name, so a node
  // without one is named '<op_type>_<index>' and a repeated name gets a '_<k>' suffix.
  std::set<std::string> op_names;
  int node_index = 0;
  for (const auto& n : g.node()) {
    NodeRec r;
    const std::string base = n.name().empty() ? n.op_type() + "_" + std::to_string(node_index) : n.name();
    ++node_index;
    r.name = base;
    for (int k = 1; !op_names.insert(r.name).second; ++k) r.name = base + "_" + std::to_string(k);
    r.type = n.op_type();
    for (const auto& i : n.input()) r.inputs.push_back(i.empty() ? i : resolve(i));
    r.outputs.assign(n.output().begin(), n.output().end());
    CopyAttributes(n, &r.attrs);
    if (opaque_nodes_.count(n.name())) {
      bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
      r.original_type = std_domain ? n.op_type() : n.domain() + "." + n.op_type();
      r.type = "Opaque";
      recs_.push_back(std::move(r));
      continue;
    }
    if (r.type == "Identity" || r.type == "Dropout") {
      if (r.inputs.empty() || r.inputs[0].empty() || r.outputs.empty())
        return InvalidArgument("node " + Q(r.name) + " (" + r.type + ") has no input or output");
      for (size_t k = 1; k < r.outputs.size(); ++k)
        if (!r.outputs[k].empty() && uses[r.outputs[k]] > 0)
          return Unsupported("node " + Q(r.name) +
                             " (Dropout) has its mask output used; training-mode graphs are not "
                             "supported");
      const std::string& out = r.outputs[0];
      if (outputs_set_.count(out)) {
        // The graph output keeps its name: an Identity view op produces it.
        r.type = "Identity";
        r.inputs.resize(1);
        r.outputs.resize(1);
        r.attrs = ir::Attributes();
        recs_.push_back(std::move(r));
      } else {
        alias[out] = r.inputs[0];
      }
      continue;
    }
    SP_RETURN_IF_ERROR(FoldControlInputs(r));
    SP_RETURN_IF_ERROR(NormalizeWindowAttrs(r));
    recs_.push_back(std::move(r));
  }
  return FoldBatchNorms();
}

Status Importer::FoldBatchNorms() {
  std::unordered_map<std::string, int> uses;
  std::unordered_map<std::string, size_t> prod;
  for (size_t k = 0; k < recs_.size(); ++k) {
    for (const auto& i : recs_[k].inputs)
      if (!i.empty()) ++uses[i];
    for (const auto& o : recs_[k].outputs)
      if (!o.empty()) prod[o] = k;
  }
  for (const auto& o : output_names_) ++uses[o];
  for (NodeRec& bn : recs_) {
    if (bn.type != "BatchNormalization" || bn.inputs.size() < 5 || bn.outputs.empty()) continue;
    if (bn.attrs.GetInt("training_mode", 0) != 0) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      extra_outputs = extra_outputs || (!bn.outputs[k].empty() && uses[bn.outputs[k]] > 0);
    if (extra_outputs) continue;
    const std::string& y = bn.inputs[0];
    auto p = prod.find(y);
    if (p == prod.end() || uses[y] != 1) continue;
    NodeRec& conv = recs_[p->second];
    if (conv.type != "Conv" || conv.deleted || conv.inputs.size() < 2 || conv.outputs.size() != 1)
      continue;
    const std::string& w = conv.inputs[1];
    if (!IsConstant(w)) continue;
    bool params_const = true;
    for (int k = 1; k <= 4; ++k) params_const = params_const && IsConstant(bn.inputs[k]);
    if (!params_const) continue;
    auto wshape = StaticShapeOf(w);
    if (!wshape || wshape->size() < 3) continue;
    int64_t cout = (*wshape)[0];
    bool shapes_ok = true;
    for (int k = 1; k <= 4; ++k) {
      auto s = StaticShapeOf(bn.inputs[k]);
      shapes_ok = shapes_ok && s && NumElements(*s) == cout;
    }
    std::string bias = conv.inputs.size() >= 3 ? conv.inputs[2] : "";
    if (!bias.empty()) {
      auto s = StaticShapeOf(bias);
      shapes_ok = shapes_ok && IsConstant(bias) && s && NumElements(*s) == cout;
    }
    if (!shapes_ok) continue;
    int32_t wtype = ElemTypeOf(w);
    if (!IsFloatElem(wtype)) continue;

    // Numbers, when every piece carries data.
    double eps = bn.attrs.GetFloat("epsilon", 1e-5);
    std::optional<Value> wv = DecodeConstant(w);
    std::optional<Value> bv = bias.empty() ? std::nullopt : DecodeConstant(bias);
    std::vector<std::optional<Value>> pv;
    for (int k = 1; k <= 4; ++k) pv.push_back(DecodeConstant(bn.inputs[k]));
    bool data = wv && (bias.empty() || bv) && pv[0] && pv[1] && pv[2] && pv[3];
    NewConst nw{wtype, *wshape, false, {}};
    NewConst nb{wtype, {cout}, false, {}};
    if (data) {
      int64_t per = wv->size() / std::max<int64_t>(cout, 1);
      Value nbv;
      nbv.type = wtype;
      nbv.dims = {cout};
      nbv.Resize(cout);
      for (int64_t c = 0; c < cout; ++c) {
        double scale = pv[0]->D(c) / std::sqrt(pv[3]->D(c) + eps);
        for (int64_t j = 0; j < per; ++j) wv->SetD(c * per + j, wv->D(c * per + j) * scale);
        double b0 = bv ? bv->D(c) : 0.0;
        nbv.SetD(c, (b0 - pv[2]->D(c)) * scale + pv[1]->D(c));
      }
      nw.has_data = nb.has_data = true;
      nw.bytes = EncodeBytes(*wv);
      nb.bytes = EncodeBytes(nbv);
    }
    // The weight: replaced when its values change (or when they would be stale).
    bool w_has_data = DecodeConstant(w).has_value();
    if (data || w_has_data) {
      std::string nwname = UniqueName(conv.name + ".weight_bn_folded");
      new_consts_[nwname] = std::move(nw);
      conv.inputs[1] = nwname;
    }
    bool reuse_bias = !data && !bias.empty() && !DecodeConstant(bias).has_value();
    if (!reuse_bias) {
      std::string nbname = UniqueName(conv.name + (bias.empty() ? ".bias" : ".bias_bn_folded"));
      new_consts_[nbname] = std::move(nb);
      conv.inputs.resize(3);
      conv.inputs[2] = nbname;
    }
    conv.outputs[0] = bn.outputs[0];
    prod[bn.outputs[0]] = p->second;
    bn.deleted = true;
  }
  return Status::Ok();
}

StatusOr<ir::Graph> Importer::Emit() {
  ir::Graph graph;
  // Exporters' generic graph names ("main_graph", "torch_jit") say nothing: use the file's stem.
  graph.name = model_.graph().name();
  if (graph.name.empty() || graph.name == "main_graph" || graph.name == "torch_jit" ||
      graph.name == "torch-jit-export") {
    std::string stem = name_.substr(
        name_.find_last_of('/') == std::string::npos ? 0 : name_.find_last_of('/') + 1);
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".onnx") == 0)
      stem.resize(stem.size() - 5);
    graph.name = stem.empty() ? "model" : stem;
  }
  std::unordered_map<std::string, ir::TensorId> ids;
  std::unordered_set<std::string> produced;
  for (const NodeRec& r : recs_)
    if (!r.deleted)
      for (const auto& o : r.outputs)
        if (!o.empty()) produced.insert(o);

  auto add = [&](const std::string& name, ir::TensorKind kind) -> StatusOr<ir::TensorId> {
    if (auto it = ids.find(name); it != ids.end()) return it->second;
    ir::Tensor t;
    t.name = name;
    t.kind = kind;
    int32_t et = ElemTypeOf(name);
    std::string what = std::string(ir::TensorKindName(kind)) + " tensor " + Q(name);
    if (et == 0)
      return InvalidArgument("ONNX shape inference could not determine the element type of " +
                             what + " (output of node " + ProducerOf(name) + ")");
    auto dt = ToIrType(et);
    if (!dt)
      return Unsupported(what + " has element type " + ElemTypeName(et) +
                         ", which sramplan does not support (supported: FLOAT, FLOAT16, INT8, "
                         "UINT8, INT16, INT32, INT64, BOOL)");
    t.dtype = *dt;
    auto shape = StaticShapeOf(name);
    if (!shape) {
      Status s = ShapeError(name);
      return s;
    }
    t.shape = *shape;
    if (kind == ir::TensorKind::kConstant) {
      if (auto nc = new_consts_.find(name); nc != new_consts_.end()) {
        if (nc->second.has_data) t.data = nc->second.bytes;
      } else if (auto it = init_.find(name); it != init_.end()) {
        bool has = false;
        SP_RETURN_IF_ERROR(ReadPayload(*it->second, "initializer", &t.data, &has));
        if (!has) t.data.clear();
      }
    }
    ir::TensorId id = graph.AddTensor(std::move(t));
    ids[name] = id;
    return id;
  };

  for (const auto& n : input_names_) {
    SP_ASSIGN_OR_RETURN(ir::TensorId id, add(n, ir::TensorKind::kInput));
    (void)id;
  }
  for (const NodeRec& r : recs_) {
    if (r.deleted) continue;
    ir::Op op;
    op.name = r.name;
    op.type = r.type;
    op.original_type = r.original_type;
    op.attrs = r.attrs;
    for (const auto& i : r.inputs) {
      if (i.empty()) continue;
      ir::TensorKind kind;
      if (IsConstant(i))
        kind = ir::TensorKind::kConstant;
      else if (produced.count(i) || ids.count(i))
        kind = ir::TensorKind::kActivation;
      else
        return InternalError("node " + Q(r.name) + " reads " + Q(i) +
                             ", which nothing produces after import-time folding");
      SP_ASSIGN_OR_RETURN(ir::TensorId id, add(i, kind));
      op.inputs.push_back(id);
    }
    for (const auto& o : r.outputs) {
      if (o.empty()) continue;
      ir::TensorKind kind =
          outputs_set_.count(o) ? ir::TensorKind::kOutput : ir::TensorKind::kActivation;
      SP_ASSIGN_OR_RETURN(ir::TensorId id, add(o, kind));
      op.outputs.push_back(id);
    }
    graph.AddOp(std::move(op));
  }
  for (const auto& o : output_names_)
    if (!ids.count(o))
      return InvalidArgument("graph output " + Q(o) +
                             " is a constant after import-time folding; sramplan needs outputs "
                             "computed by operators");
  return graph;
}

}  // namespace sramplan::import::onnx_internal
