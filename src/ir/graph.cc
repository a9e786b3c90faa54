#include "ir/graph.h"

#include <algorithm>
#include <set>

#include "ir/op_dtypes.h"
#include "ir/shape_inference.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::ir {

int DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kBool:
      return 1;
    case DataType::kInt16:
    case DataType::kFloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
      return 8;
  }
  return 1;
}

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kInt8: return "int8";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat32: return "float32";
    case DataType::kBool: return "bool";
  }
  return "?";
}

bool ParseDataType(const std::string& name, DataType* out) {
  static const std::pair<const char*, DataType> kTable[] = {
      {"int8", DataType::kInt8},       {"uint8", DataType::kUInt8},
      {"int16", DataType::kInt16},     {"int32", DataType::kInt32},
      {"int64", DataType::kInt64},     {"float16", DataType::kFloat16},
      {"float32", DataType::kFloat32}, {"bool", DataType::kBool}};
  for (const auto& [n, t] : kTable) {
    if (name == n) {
      *out = t;
      return true;
    }
  }
  return false;
}

const char* TensorKindName(TensorKind k) {
  switch (k) {
    case TensorKind::kInput: return "input";
    case TensorKind::kOutput: return "output";
    case TensorKind::kActivation: return "activation";
    case TensorKind::kConstant: return "constant";
  }
  return "?";
}

bool ParseTensorKind(const std::string& name, TensorKind* out) {
  if (name == "input") *out = TensorKind::kInput;
  else if (name == "output") *out = TensorKind::kOutput;
  else if (name == "activation") *out = TensorKind::kActivation;
  else if (name == "constant") *out = TensorKind::kConstant;
  else return false;
  return true;
}

int64_t Attributes::GetInt(const std::string& name, int64_t dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  if (auto* d = std::get_if<double>(&it->second)) return static_cast<int64_t>(*d);
  return dflt;
}

double Attributes::GetFloat(const std::string& name, double dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  if (auto* v = std::get_if<double>(&it->second)) return *v;
  if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return dflt;
}

std::string Attributes::GetString(const std::string& name, const std::string& dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  return dflt;
}

std::vector<int64_t> Attributes::GetInts(const std::string& name, std::vector<int64_t> dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  if (auto* i = std::get_if<int64_t>(&it->second)) return {*i};
  return dflt;
}

std::vector<double> Attributes::GetFloats(const std::string& name, std::vector<double> dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  if (auto* v = std::get_if<std::vector<double>>(&it->second)) return *v;
  if (auto* d = std::get_if<double>(&it->second)) return {*d};
  return dflt;
}

int64_t Tensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    auto m = CheckedMul(n, std::max<int64_t>(d, 0));
    if (!m) return kMaxBytes;
    n = *m;
  }
  return n;
}

int64_t Tensor::Bytes() const {
  auto b = CheckedMul(NumElements(), DataTypeSize(dtype));
  return b ? *b : kMaxBytes;
}

TensorId Graph::AddTensor(Tensor t) {
  TensorId id(static_cast<int32_t>(tensors_.size()));
  t.id = id;
  t.producer = OpId();
  t.consumers.clear();
  by_name_.emplace(t.name, id);
  tensors_.push_back(std::move(t));
  return id;
}

OpId Graph::AddOp(Op op) {
  OpId id(static_cast<int32_t>(ops_.size()));
  op.id = id;
  for (TensorId in : op.inputs) {
    // Ops are added in id order, so an op already listed (it reads the tensor twice) is the last
    // entry: no search of the whole list (quadratic for a tensor with many consumers).
    auto& c = tensor(in).consumers;
    if (c.empty() || c.back() != id) c.push_back(id);
  }
  for (TensorId out : op.outputs) {
    Tensor& t = tensor(out);
    // A second producer is recorded nowhere: VerifyGraph reports it from the op lists.
    if (!t.producer.valid()) t.producer = id;
  }
  ops_.push_back(std::move(op));
  return id;
}

std::optional<TensorId> Graph::FindTensor(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<TensorId> Graph::Inputs() const {
  std::vector<TensorId> r;
  for (const auto& t : tensors_)
    if (t.kind == TensorKind::kInput) r.push_back(t.id);
  return r;
}

std::vector<TensorId> Graph::Outputs() const {
  std::vector<TensorId> r;
  for (const auto& t : tensors_)
    if (t.kind == TensorKind::kOutput) r.push_back(t.id);
  return r;
}

TensorId Graph::StorageRoot(TensorId t) const {
  // Bounded walk: a view chain is at most as long as the op list.
  for (int guard = 0; guard <= num_ops(); ++guard) {
    const Tensor& ten = tensor(t);
    if (!ten.producer.valid()) return t;
    const Op& p = op(ten.producer);
    if (!IsViewOp(p.type) || p.inputs.empty()) return t;
    const Tensor& src = tensor(p.inputs[0]);
    if (src.kind == TensorKind::kConstant) return t;
    t = p.inputs[0];
  }
  return t;
}

bool IsViewOp(const std::string& type) {
  static const std::set<std::string> kViews = {"Reshape", "Flatten", "Squeeze",
                                               "Unsqueeze", "Identity", "Dropout"};
  return kViews.count(type) > 0;
}

bool IsUnaryElementwise(const std::string& type) {
  static const std::set<std::string> kUnary = {
      "Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Sqrt", "Neg",
      "Exp", "Log", "Abs", "LeakyRelu", "Elu", "Gelu", "Reciprocal", "Cast", "BatchNormalization"};
  return kUnary.count(type) > 0;
}

bool IsBinaryElementwise(const std::string& type) {
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  return kBinary.count(type) > 0;
}

int ChannelAxis(const Graph& g, int rank) {
  if (rank <= 1) return 0;
  return g.layout == Layout::kNHWC ? rank - 1 : 1;
}

bool IsDepthwiseConv(const Graph& g, const Op& op) {
  if (op.type != "Conv" || op.inputs.empty() || op.outputs.empty()) return false;
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (x.shape.size() < 3 || y.shape.size() != x.shape.size()) return false;
  int ca = ChannelAxis(g, static_cast<int>(x.shape.size()));
  int64_t group = op.attrs.GetInt("group", 1);
  return group > 1 && group == x.shape[ca] && y.shape[ca] == x.shape[ca];
}

namespace {

std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  r += JoinInts(s);
  return r += "]";
}

}  // namespace

Status VerifyGraph(const Graph& g) {
  if (g.num_ops() == 0) return InvalidArgument("graph '" + g.name + "' has no operators");
  std::set<std::string> names;
  for (const Tensor& t : g.tensors()) {
    if (t.name.empty()) return InvalidArgument("tensor #" + std::to_string(t.id.value()) + " has no name");
    if (!names.insert(t.name).second)
      return InvalidArgument("tensor name '" + t.name + "' is used twice; names must be unique");
    if (t.shape.size() > static_cast<size_t>(kMaxRank))
      return InvalidArgument("tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()) +
                             " " + ShapeStr(t.shape) + "; sramplan supports up to " +
                             std::to_string(kMaxRank) + " dimensions");
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d <= 0)
        return InvalidArgument("tensor '" + t.name + "' has a non-positive dimension " +
                               ShapeStr(t.shape) +
                               "; every dimension must be >= 1 (bind symbolic dims with --batch)");
      auto m = CheckedMul(n, d);
      if (!m || *m > kMaxBytes)
        return InvalidArgument("tensor '" + t.name + "' " + ShapeStr(t.shape) +
                               " has too many elements (overflow); check its dimensions");
      n = *m;
    }
    auto bytes = CheckedMul(n, DataTypeSize(t.dtype));
    if (!bytes || *bytes > kMaxBytes)
      return InvalidArgument("tensor '" + t.name + "' " + ShapeStr(t.shape) + " is too large");
  }
  std::set<std::string> op_names;
  for (const Op& op : g.ops()) {
    if (op.name.empty()) return InvalidArgument("op #" + std::to_string(op.id.value()) + " (" + op.type + ") has no name");
    if (!op_names.insert(op.name).second)
      return InvalidArgument("op name '" + op.name + "' is used twice; op names must be unique (plans and reports "
                             "address ops by name)");
  }
  // Producers and execution order.
  std::vector<int> produced_by(g.num_tensors(), -1);
  for (const Op& op : g.ops()) {
    if (op.outputs.empty())
      return InvalidArgument("op '" + op.name + "' (" + op.type + ") has no outputs");
    for (TensorId in : op.inputs) {
      const Tensor& t = g.tensor(in);
      bool available = t.kind == TensorKind::kInput || t.kind == TensorKind::kConstant ||
                       produced_by[in.value()] >= 0;
      if (!available) {
        bool later = false;
        for (const Op& o2 : g.ops())
          for (TensorId out : o2.outputs)
            if (out == in) later = true;
        if (later)
          return InvalidArgument("op '" + op.name + "' reads tensor '" + t.name +
                                 "' before it is produced: the graph has a cycle or its ops are "
                                 "not in execution order");
        return InvalidArgument("op '" + op.name + "' reads tensor '" + t.name +
                               "', which no op produces and which is not a graph input or constant");
      }
    }
    // A view op shares its input's bytes; the executors and codegen run no kernel for it. A view of
    // a constant would need a copy (and, in int8, the constant's quantisation), which nothing runs.
    if (IsViewOp(op.type) && !op.inputs.empty() && g.tensor(op.inputs[0]).kind == TensorKind::kConstant)
      return InvalidArgument("op '" + op.name + "' (" + op.type + ") takes the constant '" +
                             g.tensor(op.inputs[0]).name +
                             "' as its data input; sramplan runs view ops only on activations: fold the op "
                             "into the constant (give the constant the output's shape) or remove it");
    for (TensorId out : op.outputs) {
      const Tensor& t = g.tensor(out);
      if (t.kind == TensorKind::kInput || t.kind == TensorKind::kConstant)
        return InvalidArgument("op '" + op.name + "' writes tensor '" + t.name + "', which is a " +
                               TensorKindName(t.kind));
      if (produced_by[out.value()] >= 0)
        return InvalidArgument("tensor '" + t.name + "' is produced twice (by '" +
                               g.op(OpId(produced_by[out.value()])).name + "' and '" + op.name +
                               "'); every tensor must be produced once");
      produced_by[out.value()] = op.id.value();
    }
  }
  for (const Tensor& t : g.tensors()) {
    if ((t.kind == TensorKind::kActivation || t.kind == TensorKind::kOutput) &&
        produced_by[t.id.value()] < 0)
      return InvalidArgument("tensor '" + t.name + "' (" + TensorKindName(t.kind) +
                             ") is never produced; mark it as an input or constant or remove it");
  }
  if (g.Outputs().empty()) return InvalidArgument("graph '" + g.name + "' has no output tensor");
  // Shapes.
  for (const Op& op : g.ops()) {
    auto inferred = InferOutputShapes(g, op);
    if (!inferred.ok()) {
      if (inferred.status().code() == StatusCode::kUnsupported) continue;
      return inferred.status();
    }
    const auto& shapes = inferred.value();
    for (size_t i = 0; i < op.outputs.size() && i < shapes.size(); ++i) {
      const Tensor& t = g.tensor(op.outputs[i]);
      if (t.shape != shapes[i])
        return InvalidArgument("op '" + op.name + "' (" + op.type + ") produces '" + t.name +
                               "' with shape " + ShapeStr(t.shape) + " but its inputs give " +
                               ShapeStr(shapes[i]));
    }
  }
  // Element types, after the shapes (one table of what each op kind accepts: ir/op_dtypes.h).
  return CheckOpDtypes(g);
}

void ApplyDtype(Graph& g, DataType dtype) {
  // Numeric data (activations and weights) takes the planning type; int32 biases stay int32 in an
  // integer plan and follow a float plan; int64 indices and bools never change.
  auto numeric = [](DataType t) {
    return t == DataType::kInt8 || t == DataType::kUInt8 || t == DataType::kInt16 || IsFloat(t);
  };
  std::vector<bool> bias(g.num_tensors(), false);
  for (const Op& op : g.ops())
    if ((op.type == "Conv" || op.type == "Gemm" || op.type == "ConvTranspose") && op.inputs.size() >= 3 &&
        g.tensor(op.inputs[2]).kind == TensorKind::kConstant)
      bias[op.inputs[2].value()] = true;
  for (Tensor& t : g.mutable_tensors()) {
    if (bias[t.id.value()] && (numeric(t.dtype) || t.dtype == DataType::kInt32)) {
      t.dtype = IsFloat(dtype) ? dtype : DataType::kInt32;
    } else if (numeric(t.dtype)) {
      t.dtype = dtype;
    }
  }
}

}  // namespace sramplan::ir
