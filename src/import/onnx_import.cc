// ONNX importer: the only code in sramplan that sees protobuf.
//
// Pipeline (all on a private copy of the ModelProto):
//   1. parse and check the structure (names, producers, op support, ONNX schema verification);
//   2. sort the nodes topologically (Kahn; a cycle is reported with a node on it);
//   3. bind the symbolic batch dimension of the graph inputs to ImportOptions::batch;
//   4. ONNX shape inference, one node at a time in topological order (libonnx's own shape function
//      of each op through InferenceContextImpl, after checking what it would trip over: libonnx
//      divides by a zero stride or indexes a weight of the wrong rank instead of throwing), then
//      folding of the node when all its inputs are known at import time (shape arithmetic: Shape,
//      Gather, Unsqueeze, Concat, Cast, Slice, Div, ...). A folded value feeds the shape functions
//      of the nodes after it, so one pass resolves every static shape; the file's value_info is
//      not used (it is stale once the batch is bound);
//   5. canonicalise: inputs that ONNX opset 13 turned into tensors (Clip min/max, Slice starts, Pad
//      pads, Reshape shape, ...) become attributes, Identity/Dropout disappear, BatchNormalization
//      after a Conv is folded into it, auto_pad becomes explicit pads;
//   6. emit the ir::Graph (only tensors some op uses) and run ir::VerifyGraph.
// libonnx throws; every call into it is wrapped here and turned into a Status.
//
// Files: onnx_proto.cc (payloads, attributes), onnx_fold.cc (evaluator), onnx_infer.cc (steps 4),
// onnx_canonicalize.cc (steps 5-6), this file (steps 1-3 and the driver); onnx_internal.h.
#include <climits>
#include <queue>

#include "import/import.h"
#include "import/onnx_internal.h"
#include "support/strings.h"

namespace sramplan::import::onnx_internal {

Status Importer::Parse(const std::string& bytes) {
  if (bytes.empty())
    return InvalidArgument(Q(name_) + " is empty (0 bytes); expected an ONNX model file");
  if (bytes.size() > kMaxModelBytes)
    return InvalidArgument(Q(name_) + " is " + HumanBytes(static_cast<int64_t>(bytes.size())) +
                           "; ONNX protobuf files must be smaller than 2 GiB (store the weights "
                           "as external data or strip them)");
  bool ok = false;
  try {
    ok = model_.ParseFromString(bytes);
  } catch (...) {
    ok = false;
  }
  if (!ok)
    return InvalidArgument(Q(name_) +
                           " is not a valid ONNX model (protobuf parse failed); the file is "
                           "truncated, corrupt or not an .onnx file");
  if (!model_.has_graph() || model_.graph().node_size() == 0)
    return InvalidArgument(Q(name_) +
                           " is not a valid ONNX model: it has no graph or no nodes (a protobuf "
                           "that is not an ONNX ModelProto?)");
  for (const auto& op : model_.opset_import()) {
    std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    domain_versions_[domain] = op.version();
    if (domain.empty()) opset_ = op.version();
  }
  if (opset_ <= 0)
    return InvalidArgument(Q(name_) +
                           " has no opset_import for the default ONNX domain; re-export the "
                           "model with an explicit opset (e.g. opset_version=13)");
  return Status::Ok();
}

Status Importer::Collect() {
  onnx::GraphProto* g = model_.mutable_graph();
  // Initializers: validate the payload, split into "with data" and "stripped".
  std::vector<std::unique_ptr<TensorProto>> all;
  while (!g->initializer().empty()) all.emplace_back(g->mutable_initializer()->ReleaseLast());
  std::reverse(all.begin(), all.end());
  for (auto& owned : all) {
    TensorProto* t = owned.get();
    if (t->name().empty()) return InvalidArgument("an initializer has no name");
    if (init_.count(t->name()) || stripped_.count(t->name()))
      return InvalidArgument("initializer " + Q(t->name()) + " is defined twice");
    bool has = false;
    SP_RETURN_IF_ERROR(ReadPayload(*t, "initializer", nullptr, &has));
    if (has) {
      g->mutable_initializer()->AddAllocated(owned.release());
      init_[t->name()] = t;
    } else {
      stripped_[t->name()] = std::move(owned);
    }
  }
  // Graph inputs (those that are not initializers) and outputs.
  for (const auto& vi : g->input()) {
    if (IsConstant(vi.name())) continue;
    if (vi.name().empty()) return InvalidArgument("a graph input has no name");
    if (!vi.type().has_tensor_type())
      return Unsupported("graph input " + Q(vi.name()) +
                         " is not a tensor (sequence, map or optional inputs are not supported)");
    input_names_.push_back(vi.name());
  }
  for (const auto& vi : g->output()) {
    if (vi.name().empty()) return InvalidArgument("a graph output has no name");
    if (vi.type().has_sequence_type() || vi.type().has_map_type())
      return Unsupported("graph output " + Q(vi.name()) + " is not a tensor");
    output_names_.push_back(vi.name());
    outputs_set_.insert(vi.name());
  }
  if (output_names_.empty()) return InvalidArgument("the graph has no outputs");
  for (const auto& n : input_names_) all_names_.insert(n);
  for (const auto& [n, t] : init_) all_names_.insert(n);
  for (const auto& [n, t] : stripped_) all_names_.insert(n);
  // Node names: unique, generated where missing.
  std::unordered_set<std::string> node_names;
  for (int k = 0; k < g->node_size(); ++k) {
    NodeProto* n = g->mutable_node(k);
    std::string base = n->name().empty() ? n->op_type() + "_" + std::to_string(k) : n->name();
    std::string nm = base;
    for (int s = 1; node_names.count(nm); ++s) nm = base + "_" + std::to_string(s);
    node_names.insert(nm);
    n->set_name(nm);
  }
  // Producers.
  for (const auto& n : g->node()) {
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      if (IsConstant(o) ||
          std::find(input_names_.begin(), input_names_.end(), o) != input_names_.end())
        return InvalidArgument("node " + Q(n.name()) + " (" + n.op_type() + ") writes " + Q(o) +
                               ", which is a graph input or initializer");
      if (!producer_.emplace(o, n.name()).second)
        return InvalidArgument("tensor " + Q(o) + " is produced twice (by " + Q(producer_[o]) +
                               " and " + Q(n.name()) + "); every tensor must be produced once");
      all_names_.insert(o);
    }
  }
  for (const auto& n : g->node()) {
    for (const auto& i : n.input()) {
      if (i.empty() || producer_.count(i) || IsConstant(i) ||
          std::find(input_names_.begin(), input_names_.end(), i) != input_names_.end())
        continue;
      return InvalidArgument("node " + Q(n.name()) + " (" + n.op_type() + ") reads " + Q(i) +
                             ", which no node produces and which is not a graph input or "
                             "initializer");
    }
  }
  for (const auto& o : output_names_) {
    if (!producer_.count(o))
      return InvalidArgument("graph output " + Q(o) +
                             " is not produced by any node (it is an input, an initializer or "
                             "missing); sramplan needs outputs computed by operators");
  }
  return Status::Ok();
}

Status Importer::CheckNodes() {
  const auto& supported = SupportedOnnxOps();
  std::unordered_set<std::string> sup(supported.begin(), supported.end());
  for (auto& n : *model_.mutable_graph()->mutable_node()) {
    bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!std_domain || !sup.count(n.op_type())) {
      std::string type = std_domain ? n.op_type() : n.domain() + "." + n.op_type();
      if (!options_.allow_unknown_ops)
        return Unsupported("op type " + Q(type) + " of node " + Q(n.name()) +
                           " is not supported by the ONNX importer; pass --allow-unknown-ops to "
                           "import it as an opaque op (its inputs and outputs stay live while "
                           "it runs) or replace it in the model");
      opaque_nodes_.insert(n.name());
    }
    const onnx::OpSchema* schema = nullptr;
    try {
      std::string domain = std_domain ? "" : n.domain();
      auto v = domain_versions_.find(domain);
      if (v != domain_versions_.end())
        schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(v->second), domain);
    } catch (...) {
      schema = nullptr;
    }
    if (!schema) {
      if (!opaque_nodes_.count(n.name()))
        return Unsupported("node " + Q(n.name()) + ": op type " + Q(n.op_type()) +
                           " does not exist in ONNX opset " + std::to_string(opset_));
      // No ONNX shape function: keep whatever value_info the file has for its outputs.
      for (const auto& vi : model_.graph().value_info())
        for (const auto& o : n.output())
          if (vi.name() == o) preserved_vi_.push_back(vi);
      continue;
    }
    schemas_[n.name()] = schema;
    try {
      schema->Verify(n);
    } catch (const std::exception& e) {
      return InvalidArgument("node " + Q(n.name()) + " (" + n.op_type() +
                             ") is invalid for opset " + std::to_string(opset_) + ": " +
                             ExceptionText(e));
    }
  }
  return Status::Ok();
}

Status Importer::SortNodes() {
  onnx::GraphProto* g = model_.mutable_graph();
  int n = g->node_size();
  std::unordered_map<std::string, int> prod;
  for (int k = 0; k < n; ++k)
    for (const auto& o : g->node(k).output())
      if (!o.empty()) prod[o] = k;
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<int>> preds(n);
  for (int k = 0; k < n; ++k) {
    std::set<int> ps;
    for (const auto& i : g->node(k).input()) {
      auto it = prod.find(i);
      if (it != prod.end()) ps.insert(it->second);
    }
    for (int p : ps) {
      succ[p].push_back(k);
      preds[k].push_back(p);
      ++indeg[k];
    }
  }
  // Kahn with the original index as priority: an already sorted model keeps its order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int k = 0; k < n; ++k)
    if (indeg[k] == 0) ready.push(k);
  std::vector<int> order;
  while (!ready.empty()) {
    int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int s : succ[k])
      if (--indeg[s] == 0) ready.push(s);
  }
  if (static_cast<int>(order.size()) != n) {
    // Walk predecessors among the unsorted nodes until one repeats: that node is on a cycle.
    int k = 0;
    while (indeg[k] == 0) ++k;
    std::vector<int> seen_at(n, -1);
    std::vector<int> path;
    while (seen_at[k] < 0) {
      seen_at[k] = static_cast<int>(path.size());
      path.push_back(k);
      for (int p : preds[k])
        if (indeg[p] > 0) {
          k = p;
          break;
        }
    }
    // path[seen_at[k]..] is k, pred(k), pred(pred(k)), ...: print it in data-flow order.
    std::string cycle = Q(g->node(k).name());
    for (size_t j = path.size(); j-- > static_cast<size_t>(seen_at[k]) + 1;)
      cycle += " -> " + Q(g->node(path[j]).name());
    cycle += " -> " + Q(g->node(k).name());
    return InvalidArgument("the graph has a cycle through node " + Q(g->node(k).name()) + " (" +
                           g->node(k).op_type() + "): " + cycle + "; ONNX graphs must be acyclic");
  }
  bool sorted = true;
  for (int k = 0; k < n; ++k) sorted = sorted && order[k] == k;
  if (!sorted) {
    google::protobuf::RepeatedPtrField<NodeProto> nodes;
    for (int k : order) *nodes.Add() = g->node(k);
    g->mutable_node()->Swap(&nodes);
  }
  return Status::Ok();
}

// --input-shape: the only real graph input gets these dims (checked: same rank, each in range).
Status Importer::OverrideInputShape() {
  onnx::GraphProto* g = model_.mutable_graph();
  std::unordered_set<std::string> real(input_names_.begin(), input_names_.end());
  std::vector<onnx::ValueInfoProto*> inputs;
  for (auto& vi : *g->mutable_input())
    if (real.count(vi.name())) inputs.push_back(&vi);
  if (inputs.size() != 1) {
    std::string names;
    for (auto* vi : inputs) names += (names.empty() ? "" : ", ") + Q(vi->name());
    return InvalidArgument("--input-shape needs a model with one graph input; this one has " +
                           std::to_string(inputs.size()) + (names.empty() ? "" : ": " + names));
  }
  auto* sh = inputs[0]->mutable_type()->mutable_tensor_type()->mutable_shape();
  const auto& want = options_.input_shape;
  if (sh->dim_size() != static_cast<int>(want.size()))
    return InvalidArgument("--input-shape gives " + std::to_string(want.size()) + " dimensions but graph input " +
                           Q(inputs[0]->name()) + " has " + std::to_string(sh->dim_size()));
  for (int a = 0; a < sh->dim_size(); ++a) {
    if (want[a] < 1 || want[a] > kMaxBytes)
      return InvalidArgument("--input-shape: dimension " + std::to_string(a) + " is " + std::to_string(want[a]) +
                             "; every dimension must be between 1 and " + std::to_string(kMaxBytes));
    sh->mutable_dim(a)->set_dim_value(want[a]);
  }
  return Status::Ok();
}

Status Importer::BindBatch() {
  if (options_.batch <= 0)
    return InvalidArgument("batch must be >= 1 (got " + std::to_string(options_.batch) + ")");
  if (!options_.input_shape.empty()) SP_RETURN_IF_ERROR(OverrideInputShape());
  onnx::GraphProto* g = model_.mutable_graph();
  std::unordered_set<std::string> real(input_names_.begin(), input_names_.end());
  // The batch parameters: symbolic dims at axis 0, or at axis 1 of sequence-first (S, N, E) inputs
  // whose axis 0 is static, and any parameter whose name says "batch".
  std::set<std::string> batch_params;
  for (const auto& vi : g->input()) {
    if (!real.count(vi.name()) || !vi.type().tensor_type().has_shape()) continue;
    const auto& sh = vi.type().tensor_type().shape();
    if (sh.dim_size() > 0 && sh.dim(0).has_dim_param()) batch_params.insert(sh.dim(0).dim_param());
    for (const auto& d : sh.dim())
      if (d.has_dim_param() && ToLower(d.dim_param()).find("batch") != std::string::npos)
        batch_params.insert(d.dim_param());
  }
  for (const auto& vi : g->input()) {
    if (!real.count(vi.name()) || !vi.type().tensor_type().has_shape()) continue;
    const auto& sh = vi.type().tensor_type().shape();
    if (sh.dim_size() == 3 && sh.dim(0).has_dim_value() && sh.dim(0).dim_value() > 0 &&
        sh.dim(1).has_dim_param() &&
        (batch_params.empty() || batch_params.count(sh.dim(1).dim_param())))
      batch_params.insert(sh.dim(1).dim_param());
  }
  for (auto& vi : *g->mutable_input()) {
    if (!real.count(vi.name())) continue;
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    if (!tt->has_shape())
      return InvalidArgument("graph input " + Q(vi.name()) +
                             " has no shape; export the model with input shapes");
    auto* sh = tt->mutable_shape();
    for (int a = 0; a < sh->dim_size(); ++a) {
      auto* d = sh->mutable_dim(a);
      if (d->has_dim_param()) {
        if (batch_params.count(d->dim_param())) {
          d->set_dim_value(options_.batch);
          continue;
        }
        return InvalidArgument("graph input " + Q(vi.name()) + " has the symbolic dimension " +
                               Q(d->dim_param()) + " at axis " + std::to_string(a) +
                               "; only the batch dimension is bound (by --batch): export the "
                               "model with a static size for " +
                               Q(d->dim_param()));
      }
      if (d->has_dim_value()) {
        if (d->dim_value() < 0)
          return InvalidArgument("graph input " + Q(vi.name()) + " has a negative dimension " +
                                 std::to_string(d->dim_value()) + " at axis " + std::to_string(a));
        if (d->dim_value() > kMaxBytes)
          return InvalidArgument("graph input " + Q(vi.name()) + " has the dimension " +
                                 std::to_string(d->dim_value()) + " at axis " + std::to_string(a) +
                                 ", which is too large");
        if (d->dim_value() > 0) continue;
        if (a != 0)
          return InvalidArgument("graph input " + Q(vi.name()) + " has a zero dimension at axis " +
                                 std::to_string(a) + "; every dimension must be >= 1");
      } else if (a != 0) {
        return InvalidArgument("graph input " + Q(vi.name()) +
                               " has an unknown dimension at axis " + std::to_string(a) +
                               "; export the model with static shapes");
      }
      d->set_dim_value(options_.batch);  // unknown or 0 at axis 0: the batch
    }
  }
  // Outputs: symbolic dims become unknown (inference fills them); negative dims are errors.
  for (auto& vi : *g->mutable_output()) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
    auto* sh = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int a = 0; a < sh->dim_size(); ++a) {
      auto* d = sh->mutable_dim(a);
      if (d->has_dim_param())
        d->clear_dim_param();
      else if (d->has_dim_value() && d->dim_value() < 0)
        return InvalidArgument("graph output " + Q(vi.name()) + " has a negative dimension " +
                               std::to_string(d->dim_value()) + " at axis " + std::to_string(a));
    }
  }
  // Value info of schema-less (opaque) ops: bind the batch params the same way.
  for (auto& vi : preserved_vi_) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && batch_params.count(d.dim_param())) d.set_dim_value(options_.batch);
  }
  return Status::Ok();
}

namespace {

// A Constant node's value_float(s) / value_int(s) as a tensor of `type`: the scalar `one`, or the
// 1-D `list` when `is_list`; `add` appends one element to the tensor's data.
template <typename T, typename List, typename Add>
void SetConstantValues(TensorProto* t, int32_t type, bool is_list, T one, const List& list,
                       Add add) {
  t->set_data_type(type);
  if (!is_list) {
    add(one);
    return;
  }
  t->add_dims(list.size());
  for (T v : list) add(v);
}

}  // namespace

Status Importer::ConvertConstantNodes() {
  onnx::GraphProto* g = model_.mutable_graph();
  google::protobuf::RepeatedPtrField<NodeProto> kept;
  for (auto& n : *g->mutable_node()) {
    if (n.op_type() != "Constant" || opaque_nodes_.count(n.name()) || n.output_size() != 1 ||
        outputs_set_.count(n.output(0))) {
      *kept.Add() = std::move(n);
      continue;
    }
    const std::string& out = n.output(0);
    auto t = std::make_unique<TensorProto>();
    const AttributeProto* a = n.attribute_size() == 1 ? &n.attribute(0) : nullptr;
    if (!a) return InvalidArgument("Constant node " + Q(n.name()) + " needs exactly one attribute");
    if (a->name() == "value" && a->has_t()) {
      *t = a->t();
    } else if (a->name() == "value_float" || a->name() == "value_floats") {
      SetConstantValues(t.get(), TensorProto::FLOAT, a->name() == "value_floats", a->f(),
                        a->floats(), [&](float v) { t->add_float_data(v); });
    } else if (a->name() == "value_int" || a->name() == "value_ints") {
      SetConstantValues(t.get(), TensorProto::INT64, a->name() == "value_ints", a->i(), a->ints(),
                        [&](int64_t v) { t->add_int64_data(v); });
    } else {
      return Unsupported("Constant node " + Q(n.name()) + " uses attribute " + Q(a->name()) +
                         " (sparse or string constants are not supported)");
    }
    t->set_name(out);
    bool has = false;
    SP_RETURN_IF_ERROR(ReadPayload(*t, "constant", nullptr, &has));
    if (has) {
      g->mutable_initializer()->AddAllocated(t.get());
      init_[out] = t.release();
    } else {
      stripped_[out] = std::move(t);
    }
    producer_.erase(out);
  }
  g->mutable_node()->Swap(&kept);
  return Status::Ok();
}

StatusOr<ir::Graph> Importer::Run(const std::string& bytes) {
  SP_RETURN_IF_ERROR(Parse(bytes));
  const std::string ctx = "ONNX model " + Q(name_);
  auto steps = [&]() -> Status {
    SP_RETURN_IF_ERROR(Collect());
    SP_RETURN_IF_ERROR(CheckNodes());
    SP_RETURN_IF_ERROR(SortNodes());
    SP_RETURN_IF_ERROR(BindBatch());
    SP_RETURN_IF_ERROR(InferAndFold());
    return Canonicalize();
  };
  SP_RETURN_IF_ERROR(steps().WithContext(ctx));
  auto graph = Emit();
  if (!graph.ok()) return graph.status().WithContext(ctx);
  SP_RETURN_IF_ERROR(ir::VerifyGraph(*graph).WithContext(ctx));
  return graph;
}

}  // namespace sramplan::import::onnx_internal

namespace sramplan::import {

using onnx_internal::Importer;

const std::vector<std::string>& SupportedOnnxOps() {
  static const std::vector<std::string> kOps = {
      // Compute.
      "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization",
      "InstanceNormalization",
      // Activations and unary element-wise.
      "Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf",
      "Elu", "Selu", "Softplus", "Softmax", "LogSoftmax", "Sqrt", "Neg", "Exp", "Log", "Abs",
      "Reciprocal", "Floor", "Ceil", "Not", "Sign",
      // Binary element-wise (broadcasting).
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mod", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where",
      // Pooling and reductions.
      "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum",
      "ReduceMax", "ReduceMin", "ReduceProd", "LRN",
      // Data movement.
      "Concat", "Split", "Slice", "Gather", "Transpose", "Pad", "Resize", "Upsample", "Tile",
      "Expand", "DepthToSpace", "SpaceToDepth",
      // Views (alias their input).
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout",
      // Shape arithmetic (folded at import time when static).
      "Constant", "Shape", "Size", "ConstantOfShape", "Cast", "Range"};
  return kOps;
}

StatusOr<ir::Graph> ImportOnnx(const std::string& bytes, const std::string& name,
                               const ImportOptions& options) {
  Importer importer(name, options);
  return importer.Run(bytes);
}

}  // namespace sramplan::import
