// ONNX shape inference, node by node in topological order, with import-time folding (step 4 of
// the importer pipeline in onnx_import.cc). Part of the ONNX importer (see onnx_internal.h).
#include "import/onnx_internal.h"
#include "ir/shape_inference.h"
#include "support/strings.h"

namespace sramplan::import::onnx_internal {

onnx::TypeProto TensorType(int32_t elem_type, const Dims& dims) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* sh = tt->mutable_shape();
  for (int64_t d : dims) sh->add_dim()->set_dim_value(d);
  return t;
}

void Importer::SetType(const std::string& name, const onnx::TypeProto& type) {
  onnx::TypeProto& slot = types_[name];
  slot = type;
  type_ptrs_[name] = &slot;
}

Status Importer::SeedTypes() {
  for (const auto& vi : model_.graph().input())
    if (!IsConstant(vi.name())) SetType(vi.name(), vi.type());
  for (const auto& [name, t] : init_)
    SetType(name, TensorType(t->data_type(), Dims(t->dims().begin(), t->dims().end())));
  for (const auto& [name, t] : stripped_)
    SetType(name, TensorType(t->data_type(), Dims(t->dims().begin(), t->dims().end())));
  for (const auto& vi : model_.graph().output()) declared_[vi.name()] = vi.type();
  for (const auto& [name, t] : init_) data_ptrs_[name] = t;
  return Status::Ok();
}

// libonnx's shape functions trust their attributes (a zero stride divides by zero, a weight of
// the wrong rank is indexed out of bounds). Everything they could trip over is checked here, with
// the input shapes known so far, before the function runs.
Status Importer::CheckBeforeInference(const NodeProto& n) {
  auto bad = [&](const std::string& what) {
    return InvalidArgument("node " + Q(n.name()) + " (" + n.op_type() + "): " + what);
  };
  for (const auto& a : n.attribute()) {
    const std::string& an = a.name();
    bool positive = an == "strides" || an == "dilations" || an == "kernel_shape" || an == "group" ||
                    an == "blocksize";
    if (positive) {
      if (a.has_i() && (a.i() < 1 || a.i() > kMaxWindowAttr))
        return bad("attribute " + an + " must be in [1, " + std::to_string(kMaxWindowAttr) +
                   "], got " + std::to_string(a.i()));
      for (int64_t v : a.ints())
        if (v < 1 || v > kMaxWindowAttr)
          return bad("attribute " + an + " must be in [1, " + std::to_string(kMaxWindowAttr) +
                     "], got " + std::to_string(v));
    }
    if (an == "pads" || an == "output_padding") {
      int64_t lo = n.op_type() == "Pad" ? -kMaxWindowAttr : 0;  // Pad (opset < 11) may crop
      for (int64_t v : a.ints())
        if (v < lo || v > kMaxWindowAttr)
          return bad("attribute " + an + " must be in [" + std::to_string(lo) + ", " +
                     std::to_string(kMaxWindowAttr) + "], got " + std::to_string(v));
    }
  }
  // Window ops: ranks and attribute lengths must match the input.
  const std::string& t = n.op_type();
  bool window = FindAttr(n, "kernel_shape") || FindAttr(n, "strides") || t == "Conv" ||
                t == "ConvTranspose" || t == "MaxPool" || t == "AveragePool" || t == "LpPool" ||
                t == "ConvInteger" || t == "QLinearConv" || t == "MaxUnpool";
  if (window && n.input_size() >= 1) {
    std::optional<int> rank = RankOf(n.input(0));
    if (rank) {
      if (*rank < 3) return bad("input " + Q(n.input(0)) + " needs at least 3 dimensions");
      size_t nsp = static_cast<size_t>(*rank - 2);
      for (const char* an :
           {"strides", "dilations", "kernel_shape", "output_padding", "output_shape"})
        if (const AttributeProto* a = FindAttr(n, an);
            a && a->ints_size() && static_cast<size_t>(a->ints_size()) != nsp)
          return bad(std::string("attribute ") + an + " needs " + std::to_string(nsp) + " entries");
      if (const AttributeProto* a = FindAttr(n, "pads");
          a && a->ints_size() && static_cast<size_t>(a->ints_size()) != 2 * nsp)
        return bad("attribute pads needs " + std::to_string(2 * nsp) + " entries");
      for (int w = 1; w < n.input_size() && w <= 3; ++w) {
        if (n.input(w).empty()) continue;
        std::optional<int> wr = RankOf(n.input(w));
        bool is_weight = (t == "Conv" || t == "ConvTranspose" || t == "ConvInteger") && w == 1;
        if (is_weight && wr && *wr != *rank)
          return bad("weight " + Q(n.input(w)) + " has rank " + std::to_string(*wr) +
                     " but the input has rank " + std::to_string(*rank));
      }
    }
  }
  return Status::Ok();
}

std::optional<int> Importer::RankOf(const std::string& name) const {
  auto it = type_ptrs_.find(name);
  if (it == type_ptrs_.end() || !it->second->has_tensor_type() ||
      !it->second->tensor_type().has_shape())
    return std::nullopt;
  return it->second->tensor_type().shape().dim_size();
}

// ONNX 1.12 computes ceil_mode pooling as ceil((in + pads - k) / s) + 1 without the rule of PyTorch
// and ONNX Runtime that the last window must start inside the input or its leading padding
// (later ONNX releases added it). The output extent is recomputed here with that rule, which is
// also what ir::InferOutputShapes implements.
void Importer::FixCeilModePool(const NodeProto& n) {
  const std::string& t = n.op_type();
  if ((t != "MaxPool" && t != "AveragePool" && t != "LpPool") || n.input_size() < 1 ||
      n.output_size() < 1 || AttrInt(n, "ceil_mode", 0) == 0)
    return;
  if (const AttributeProto* a = FindAttr(n, "auto_pad"); a && a->s() != "NOTSET") return;
  auto x = StaticShapeOf(n.input(0));
  if (!x || x->size() < 3) return;
  size_t nsp = x->size() - 2;
  std::vector<int64_t> k = AttrInts(n, "kernel_shape").value_or(std::vector<int64_t>{});
  std::vector<int64_t> s = AttrInts(n, "strides").value_or(std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> d = AttrInts(n, "dilations").value_or(std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> p = AttrInts(n, "pads").value_or(std::vector<int64_t>(2 * nsp, 0));
  if (k.size() != nsp || s.size() != nsp || d.size() != nsp || p.size() != 2 * nsp) return;
  for (const std::string& o : n.output()) {
    auto it = types_.find(o);
    if (o.empty() || it == types_.end() || !it->second.has_tensor_type()) continue;
    auto* sh = it->second.mutable_tensor_type()->mutable_shape();
    if (sh->dim_size() != static_cast<int>(x->size())) continue;
    for (size_t i = 0; i < nsp; ++i) {
      int64_t in = (*x)[2 + i], eff = d[i] * (k[i] - 1) + 1;
      int64_t span = in + p[i] + p[i + nsp] - eff;
      if (s[i] <= 0 || span < 0) continue;
      int64_t out = CeilDiv(span, s[i]) + 1;
      if ((out - 1) * s[i] >= in + p[i]) out -= 1;
      sh->mutable_dim(static_cast<int>(2 + i))->set_dim_value(out);
    }
  }
}

// Checks (and completes) the type ONNX inferred for output `o` of node `n`.
Status Importer::CheckOutputType(const NodeProto& n, const std::string& o) {
  auto d = declared_.find(o);
  auto it = types_.find(o);
  if (it == types_.end() || !it->second.has_tensor_type()) {
    // Nothing inferred: a graph output falls back to its declared type.
    if (d != declared_.end() && d->second.has_tensor_type()) SetType(o, d->second);
    it = types_.find(o);
    if (it == types_.end() || !it->second.has_tensor_type()) return Status::Ok();
  }
  onnx::TypeProto& type = it->second;
  auto* tt = type.mutable_tensor_type();
  // A graph output: the declared type fills what inference left open, and must agree with it.
  if (d != declared_.end() && d->second.has_tensor_type()) {
    const auto& dt = d->second.tensor_type();
    if (tt->elem_type() == 0) tt->set_elem_type(dt.elem_type());
    if (dt.has_shape()) {
      if (!tt->has_shape()) *tt->mutable_shape() = dt.shape();
      if (tt->shape().dim_size() == dt.shape().dim_size()) {
        for (int a = 0; a < dt.shape().dim_size(); ++a) {
          const auto& dd = dt.shape().dim(a);
          auto* td = tt->mutable_shape()->mutable_dim(a);
          if (!dd.has_dim_value() || dd.dim_value() <= 0) continue;
          if (!td->has_dim_value())
            td->set_dim_value(dd.dim_value());
          else if (td->dim_value() != dd.dim_value())
            return InvalidArgument("graph output " + Q(o) + " is declared with " +
                                   std::to_string(dd.dim_value()) + " at axis " +
                                   std::to_string(a) + " but node " + Q(n.name()) + " (" +
                                   n.op_type() + ") computes " + std::to_string(td->dim_value()));
        }
      }
    }
  }
  if (!tt->has_shape()) return Status::Ok();
  for (int a = 0; a < tt->shape().dim_size(); ++a) {
    const auto& dim = tt->shape().dim(a);
    if (dim.has_dim_value() && dim.dim_value() > kMaxBytes)
      return InvalidArgument("node " + Q(n.name()) + " (" + n.op_type() + ") produces " + Q(o) +
                             " with the dimension " + std::to_string(dim.dim_value()) +
                             ", which is too large; check the node's attributes and inputs");
    if (dim.has_dim_value() && dim.dim_value() <= 0)
      return InvalidArgument("node " + Q(n.name()) + " (" + n.op_type() + ") produces " + Q(o) +
                             " with " + (dim.dim_value() == 0 ? "a zero" : "a negative") +
                             " dimension " + DescribeShape(o) +
                             "; every dimension must be >= 1 (check the node's attributes and "
                             "inputs)");
  }
  return Status::Ok();
}

StatusOr<bool> Importer::InferNode(NodeProto& n) {
  const onnx::OpSchema* schema = nullptr;
  if (auto it = schemas_.find(n.name()); it != schemas_.end()) schema = it->second;
  if (!schema) {
    // A custom-domain op (imported as Opaque): its outputs keep the file's value_info.
    for (const auto& vi : preserved_vi_)
      for (const auto& o : n.output())
        if (vi.name() == o) SetType(vi.name(), vi.type());
    for (const auto& o : n.output())
      if (!o.empty()) SP_RETURN_IF_ERROR(CheckOutputType(n, o));
    return false;
  }
  for (const auto& i : n.input())
    if (!i.empty() && !type_ptrs_.count(i)) return ShapeError(i);
  SP_RETURN_IF_ERROR(CheckBeforeInference(n));
  const std::string& t = n.op_type();
  if (schema->has_type_and_shape_inference_function()) {
    static const std::unordered_map<std::string, const onnx::SparseTensorProto*> kNoSparse;
    try {
      onnx::shape_inference::InferenceContextImpl ctx(n, type_ptrs_, data_ptrs_, kNoSparse, nullptr,
                                                      nullptr);
      schema->GetTypeAndShapeInferenceFunction()(ctx);
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty()) SetType(n.output(k), *ctx.getOutputType(k));
    } catch (const std::exception& e) {
      return InvalidArgument("ONNX shape inference failed at node " + Q(n.name()) + " (" + t +
                             "): " + ExceptionText(e));
    } catch (...) {
      return InvalidArgument("ONNX shape inference failed at node " + Q(n.name()) + " (" + t + ")");
    }
  } else if ((t == "LessOrEqual" || t == "GreaterOrEqual") && n.input_size() == 2 &&
             n.output_size() == 1) {
    // Defined by a function body in ONNX 1.12 (no shape function): broadcast, bool.
    auto a = StaticShapeOf(n.input(0)), b = StaticShapeOf(n.input(1));
    if (a && b) {
      auto s = ir::BroadcastShapes(*a, *b);
      if (!s)
        return InvalidArgument("node " + Q(n.name()) + " (" + t + "): inputs do not broadcast");
      SetType(n.output(0), TensorType(TensorProto::BOOL, *s));
    }
  }
  FixCeilModePool(n);
  for (const auto& o : n.output())
    if (!o.empty()) SP_RETURN_IF_ERROR(CheckOutputType(n, o));
  SP_ASSIGN_OR_RETURN(bool folded, TryFold(n));
  return folded;
}

const Value* Importer::Known(const std::string& name) {
  auto it = values_.find(name);
  if (it != values_.end()) return &it->second;
  auto t = init_.find(name);
  if (t == init_.end()) return nullptr;
  const TensorProto& tp = *t->second;
  Dims dims(tp.dims().begin(), tp.dims().end());
  if (!Small(dims) || ElemSize(tp.data_type()) == 0) return nullptr;
  std::vector<uint8_t> bytes;
  bool has = false;
  if (!ReadPayload(tp, "initializer", &bytes, &has).ok() || !has) return nullptr;
  return &(values_[name] = DecodeBytes(tp.data_type(), dims, bytes));
}

std::optional<Value> Importer::DecodeConstant(const std::string& name) {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  if (auto nc = new_consts_.find(name); nc != new_consts_.end()) {
    if (!nc->second.has_data) return std::nullopt;
    return DecodeBytes(nc->second.type, nc->second.dims, nc->second.bytes);
  }
  auto t = init_.find(name);
  if (t == init_.end() || ElemSize(t->second->data_type()) == 0) return std::nullopt;
  std::vector<uint8_t> bytes;
  bool has = false;
  if (!ReadPayload(*t->second, "initializer", &bytes, &has).ok() || !has) return std::nullopt;
  return DecodeBytes(t->second->data_type(),
                     Dims(t->second->dims().begin(), t->second->dims().end()), bytes);
}

int32_t Importer::ElemTypeOf(const std::string& name) const {
  if (auto it = init_.find(name); it != init_.end()) return it->second->data_type();
  if (auto it = stripped_.find(name); it != stripped_.end()) return it->second->data_type();
  if (auto it = new_consts_.find(name); it != new_consts_.end()) return it->second.type;
  auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type()) return 0;
  return it->second.tensor_type().elem_type();
}

std::optional<Dims> Importer::StaticShapeOf(const std::string& name) const {
  if (auto it = init_.find(name); it != init_.end())
    return Dims(it->second->dims().begin(), it->second->dims().end());
  if (auto it = stripped_.find(name); it != stripped_.end())
    return Dims(it->second->dims().begin(), it->second->dims().end());
  if (auto it = new_consts_.find(name); it != new_consts_.end()) return it->second.dims;
  auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type() || !it->second.tensor_type().has_shape())
    return std::nullopt;
  Dims d;
  for (const auto& dim : it->second.tensor_type().shape().dim()) {
    if (!dim.has_dim_value()) return std::nullopt;
    d.push_back(dim.dim_value());
  }
  return d;
}

std::string Importer::DescribeShape(const std::string& name) const {
  auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type()) return "no type";
  if (!it->second.tensor_type().has_shape()) return "unknown rank";
  std::string s = "[";
  bool first = true;
  for (const auto& dim : it->second.tensor_type().shape().dim()) {
    if (!first) s += ",";
    first = false;
    if (dim.has_dim_value())
      s += std::to_string(dim.dim_value());
    else if (dim.has_dim_param())
      s += dim.dim_param();
    else
      s += "?";
  }
  return s + "]";
}

std::string Importer::ProducerOf(const std::string& name) const {
  for (const auto& n : model_.graph().node())
    for (const auto& o : n.output())
      if (o == name) return Q(n.name()) + " (" + n.op_type() + ")";
  return "?";
}

Status Importer::ShapeError(const std::string& tensor) {
  auto p = producer_.find(tensor);
  if (p != producer_.end() && !schemas_.count(p->second))
    return InvalidArgument("the shape of tensor " + Q(tensor) + " (output of node " + Q(p->second) +
                           ", an op ONNX has no schema for) is unknown; add a value_info entry "
                           "with its type and static shape to the model");
  return InvalidArgument("ONNX shape inference could not determine the shape of tensor " +
                         Q(tensor) + " (output of node " + ProducerOf(tensor) + ", got " +
                         DescribeShape(tensor) +
                         "); its shape depends on values computed at run time or on an op "
                         "ONNX cannot infer: export the model with static shapes or simplify it "
                         "(e.g. onnxsim)");
}

StatusOr<bool> Importer::TryFold(const NodeProto& node) {
  const std::string& t = node.op_type();
  if (opaque_nodes_.count(node.name()) || !IsFoldable(t)) return false;
  for (const auto& o : node.output())
    if (outputs_set_.count(o)) return false;
  std::vector<Value> outs;
  if (t == "Shape" || t == "Size") {
    if (node.input_size() < 1) return false;
    auto s = StaticShapeOf(node.input(0));
    if (!s) return false;
    Value v;
    v.type = TensorProto::INT64;
    if (t == "Size") {
      auto n = NumElements(*s);
      if (!n) return false;
      v.i = {*n};
    } else {
      int64_t r = static_cast<int64_t>(s->size());
      int64_t start = std::clamp<int64_t>(NormAxis(AttrInt(node, "start", 0), r), 0, r);
      int64_t end = std::clamp<int64_t>(NormAxis(AttrInt(node, "end", r), r), 0, r);
      for (int64_t k = start; k < end; ++k) v.i.push_back((*s)[k]);
      v.dims = {static_cast<int64_t>(v.i.size())};
    }
    outs.push_back(std::move(v));
  } else if (t == "Dropout") {
    // Eval-mode Dropout of a known value (rare): the value itself; a mask output blocks folding.
    if (node.output_size() > 1 && !node.output(1).empty()) return false;
    const Value* x = node.input_size() ? Known(node.input(0)) : nullptr;
    if (!x) return false;
    outs.push_back(*x);
  } else {
    std::vector<const Value*> in;
    for (const auto& i : node.input()) {
      if (i.empty()) {
        in.push_back(nullptr);
        continue;
      }
      const Value* v = Known(i);
      if (!v) return false;
      in.push_back(v);
    }
    SP_ASSIGN_OR_RETURN(bool ok, EvaluateNode(node, in, &outs));
    if (!ok) return false;
  }
  onnx::GraphProto* g = model_.mutable_graph();
  for (int k = 0; k < node.output_size() && k < static_cast<int>(outs.size()); ++k) {
    const std::string& o = node.output(k);
    if (o.empty()) continue;
    TensorProto* tp = g->add_initializer();
    ValueToTensorProto(outs[k], o, tp);
    init_[o] = tp;
    data_ptrs_[o] = tp;
    SetType(o, TensorType(outs[k].type, outs[k].dims));
    values_[o] = std::move(outs[k]);
    producer_.erase(o);
  }
  return true;
}

// One pass in topological order: ONNX's shape function of every node, then folding of the node
// when all its inputs are known. A folded value is an initializer for the nodes after it, so
// shape arithmetic (Shape -> Gather -> Div -> Concat -> Reshape) resolves in the same pass.
Status Importer::InferAndFold() {
  SP_RETURN_IF_ERROR(ConvertConstantNodes());
  SP_RETURN_IF_ERROR(SeedTypes());
  onnx::GraphProto* g = model_.mutable_graph();
  google::protobuf::RepeatedPtrField<NodeProto> kept;
  for (auto& n : *g->mutable_node()) {
    SP_ASSIGN_OR_RETURN(bool folded, InferNode(n));
    if (!folded) *kept.Add() = std::move(n);
  }
  g->mutable_node()->Swap(&kept);
  return Status::Ok();
}

}  // namespace sramplan::import::onnx_internal
