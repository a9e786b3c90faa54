#include "ir/op_dtypes.h"

#include <map>

namespace sramplan::ir {
namespace {

constexpr DtypeSet kBool = Dt(DataType::kBool);
constexpr DtypeSet kI64 = Dt(DataType::kInt64);
constexpr DataType kAllTypes[] = {DataType::kInt8,  DataType::kUInt8,   DataType::kInt16,
                                  DataType::kInt32, DataType::kInt64,   DataType::kFloat16,
                                  DataType::kFloat32, DataType::kBool};

// Operand rule shorthands: T(name, set) is in group 0 (ONNX "T"), U(...) in group 1, free(...) in
// no group.
OperandRule T(const char* name, DtypeSet s) { return {name, s, 0}; }
OperandRule U(const char* name, DtypeSet s) { return {name, s, 1}; }
OperandRule Free(const char* name, DtypeSet s) { return {name, s, -1}; }
OperandRule Bias(const char* name, DtypeSet s) { return {name, s, 0, /*or_int32=*/true}; }
OperandRule ConstIndex(const char* name) { return {name, kIndexDtypes, -1, false, /*constant=*/true}; }

std::map<std::string, OpDtypeRule> BuildRules() {
  std::map<std::string, OpDtypeRule> r;
  const DtypeSet num = kNumericDtypes, numint = kNumericOrIntDtypes, any = kAllDtypes;
  // Convolutions and matrix products: X, W and Y share a type; the bias has it too or is int32
  // (TFLite's quantised form).
  for (const char* t : {"Conv", "ConvTranspose"})
    r[t] = {{T("X", num), T("W", num), Bias("B", num)}, 2, false, {T("Y", num)}};
  r["Gemm"] = {{T("A", numint), T("B", numint), Bias("C", numint)}, 2, false, {T("Y", numint)}};
  r["MatMul"] = {{T("A", numint), T("B", numint)}, 2, false, {T("Y", numint)}};
  r["BatchNormalization"] = {{T("X", num), U("scale", num), U("B", num), U("input_mean", num),
                              U("input_var", num)},
                             5,
                             false,
                             {T("Y", num), U("running_mean", num), U("running_var", num)}};
  r["LayerNormalization"] = {{T("X", num), T("Scale", num), T("B", num)}, 1, false,
                             {T("Y", num), U("Mean", num), U("InvStdDev", num)}};
  r["InstanceNormalization"] = {{T("input", num), T("scale", num), T("B", num)}, 3, false,
                                {T("output", num)}};
  // Unary element-wise.
  for (const char* t : {"Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Elu", "Selu",
                        "Softplus", "Softmax", "LogSoftmax", "Sqrt", "Exp", "Log", "Reciprocal",
                        "Floor", "Ceil", "Gelu", "LeakyRelu"})
    r[t] = {{T("X", num)}, 1, false, {T("Y", num)}};
  for (const char* t : {"Relu", "Neg", "Abs", "Sign"})
    r[t] = {{T("X", numint)}, 1, false, {T("Y", numint)}};
  r["LRN"] = {{T("X", num)}, 1, false, {T("Y", num)}};  // local response normalisation (issue 16's blocking)
  r["PRelu"] = {{T("X", numint), T("slope", numint)}, 2, false, {T("Y", numint)}};
  r["Clip"] = {{T("input", numint), T("min", numint), T("max", numint)}, 1, false,
               {T("output", numint)}};
  r["Not"] = {{T("X", kBool)}, 1, false, {T("Y", kBool)}};
  // Binary element-wise.
  for (const char* t : {"Add", "Sub", "Mul", "Div", "Mod"})
    r[t] = {{T("A", numint), T("B", numint)}, 2, false, {T("C", numint)}};
  r["Pow"] = {{T("X", numint), U("Y", numint)}, 2, false, {T("Z", numint)}};
  for (const char* t : {"Max", "Min", "Sum", "Mean"})
    r[t] = {{T("data_0", numint)}, 1, true, {T("output", numint)}};
  for (const char* t : {"And", "Or", "Xor"})
    r[t] = {{T("A", kBool), T("B", kBool)}, 2, false, {Free("C", kBool)}};
  r["Equal"] = {{T("A", any), T("B", any)}, 2, false, {Free("C", kBool)}};
  for (const char* t : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    r[t] = {{T("A", numint), T("B", numint)}, 2, false, {Free("C", kBool)}};
  r["Where"] = {{Free("condition", kBool), T("X", any), T("Y", any)}, 3, false, {T("output", any)}};
  // Pooling and reductions.
  r["MaxPool"] = {{T("X", num)}, 1, false, {T("Y", num), Free("Indices", kI64)}};
  for (const char* t : {"AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool"})
    r[t] = {{T("X", num)}, 1, false, {T("Y", num)}};
  for (const char* t : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                        "ReduceSumSquare"})
    r[t] = {{T("data", numint), Free("axes", kI64)}, 1, false, {T("reduced", numint)}};
  // Data movement: any element type, moved unchanged.
  r["Concat"] = {{T("inputs", any)}, 1, true, {T("concat_result", any)}};
  r["Split"] = {{T("input", any), Free("split", kI64)}, 1, false, {T("outputs", any)}, 1, true};
  // sramplan reads starts/ends/axes/steps at import time (attributes or folded constants).
  r["Slice"] = {{T("data", any), ConstIndex("starts"), ConstIndex("ends"), ConstIndex("axes"),
                 ConstIndex("steps")},
                1,
                false,
                {T("output", any)}};
  r["Gather"] = {{T("data", any), Free("indices", kIndexDtypes)}, 2, false, {T("output", any)}};
  for (const char* t : {"Transpose", "Identity", "Flatten", "DepthToSpace", "SpaceToDepth"})
    r[t] = {{T("input", any)}, 1, false, {T("output", any)}};
  r["Dropout"] = {{T("data", any), Free("ratio", num), Free("training_mode", kBool)}, 1, false,
                  {T("output", any), Free("mask", kBool)}};
  r["Reshape"] = {{T("data", any), Free("shape", kI64)}, 1, false, {T("reshaped", any)}};
  for (const char* t : {"Squeeze", "Unsqueeze"})
    r[t] = {{T("data", any), Free("axes", kI64)}, 1, false, {T("output", any)}};
  // Pad's pads / constant_value / axes and Resize's roi / scales / sizes: the importer folds the
  // constant ones into attributes and drops them, so a remaining one may sit at a lower index.
  const DtypeSet control = numint;
  r["Pad"] = {{T("data", any), Free("pads", any), Free("constant_value", any), Free("axes", any)},
              1,
              false,
              {T("output", any)}};
  r["Resize"] = {{T("X", any), Free("roi", control), Free("scales", control), Free("sizes", control)},
                 1,
                 false,
                 {T("Y", any)}};
  r["Upsample"] = {{T("X", any), Free("scales", control)}, 1, false, {T("Y", any)}};
  r["Tile"] = {{T("input", any), Free("repeats", kI64)}, 1, false, {T("output", any)}};
  r["Expand"] = {{T("input", any), Free("shape", kI64)}, 1, false, {T("output", any)}};
  // Type conversions and shape arithmetic.
  r["Cast"] = {{Free("input", any)}, 1, false, {Free("output", any)}};
  // A hybrid int8 graph's conversions around its float32 ops (exec/hybrid.h): float32 -> int8 and
  // back with the int8 side's scale and zero point (float32 -> float32 in the graph calibrated).
  r["Quantize"] = {{Free("input", num)}, 1, false, {Free("output", num)}};
  r["Dequantize"] = {{Free("input", num)}, 1, false, {Free("output", num)}};
  r["Shape"] = {{Free("data", any)}, 1, false, {Free("shape", kI64)}};
  r["Size"] = {{Free("data", any)}, 1, false, {Free("size", kI64)}};
  r["ConstantOfShape"] = {{Free("input", kI64)}, 0, false, {Free("output", any)}};
  r["Range"] = {{T("start", numint), T("limit", numint), T("delta", numint)}, 3, false,
                {T("output", numint)}};
  r["Constant"] = {{}, 0, false, {Free("output", any)}};
  return r;
}

std::string Count(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string OperandNames(const std::vector<OperandRule>& rules) {
  std::string s;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i) s += ", ";
    s += rules[i].name;
  }
  return s;
}

}  // namespace

std::string DtypeSetText(DtypeSet s) {
  std::vector<std::string> names;
  for (DataType t : kAllTypes)
    if (s & Dt(t)) names.push_back(DataTypeName(t));
  std::string r;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) r += i + 1 == names.size() ? " or " : ", ";
    r += names[i];
  }
  return r.empty() ? "nothing" : r;
}

const OpDtypeRule* FindOpDtypeRule(const std::string& op_type) {
  static const std::map<std::string, OpDtypeRule> kRules = BuildRules();
  auto it = kRules.find(op_type);
  return it == kRules.end() ? nullptr : &it->second;
}

Status CheckOpDtypes(const Graph& g, const Op& op) {
  const OpDtypeRule* rule = FindOpDtypeRule(op.type);
  if (!rule) return Status::Ok();
  const std::string who = "op '" + op.name + "' (" + op.type + ")";
  auto arity = [&](size_t n, int min, size_t rules, bool variadic, const char* what,
                   const std::vector<OperandRule>& names) -> Status {
    if (static_cast<int>(n) >= min && (variadic || n <= rules)) return Status::Ok();
    std::string takes = variadic ? "at least " + std::to_string(min)
                        : static_cast<size_t>(min) == rules
                            ? std::to_string(min)
                            : std::to_string(min) + " to " + std::to_string(rules);
    return InvalidArgument(who + " has " + Count(n, what) + "; " + op.type + " takes " + takes +
                           " (" + OperandNames(names) + (variadic ? ", ..." : "") + ")");
  };
  SP_RETURN_IF_ERROR(arity(op.inputs.size(), rule->min_inputs, rule->inputs.size(),
                           rule->variadic_inputs, "input", rule->inputs));
  SP_RETURN_IF_ERROR(arity(op.outputs.size(), rule->min_outputs, rule->outputs.size(),
                           rule->variadic_outputs, "output", rule->outputs));
  // The first operand of each group fixes the group's dtype.
  struct Bound {
    const Tensor* tensor = nullptr;
    const char* operand = nullptr;
    const char* side = nullptr;
  };
  std::map<int, Bound> bound;
  std::map<int, std::string> group_names;
  for (const auto* rules : {&rule->inputs, &rule->outputs})
    for (const OperandRule& o : *rules)
      if (o.group >= 0) {
        std::string& n = group_names[o.group];
        n += (n.empty() ? "" : ", ") + std::string(o.name);
      }
  auto check = [&](const std::vector<TensorId>& ids, const std::vector<OperandRule>& rules,
                   bool variadic, const char* side) -> Status {
    for (size_t i = 0; i < ids.size(); ++i) {
      const OperandRule& o = rules[variadic ? std::min(i, rules.size() - 1) : i];
      const Tensor& t = g.tensor(ids[i]);
      const std::string what = std::string(side) + " '" + t.name + "' (" + o.name + ")";
      if (o.constant && t.kind != TensorKind::kConstant)
        return InvalidArgument(who + ": " + what + " is not a constant (its kind is " + TensorKindName(t.kind) +
                               "); " + op.type + " needs " + o.name + " as a constant or an attribute");
      const bool int32_ok = o.or_int32 && t.dtype == DataType::kInt32;
      if (!(o.allowed & Dt(t.dtype)) && !int32_ok)
        return InvalidArgument(who + ": " + what + " has dtype " + DataTypeName(t.dtype) + "; " +
                               op.type + " accepts " + DtypeSetText(o.allowed) + " there");
      if (o.group < 0) continue;
      Bound& b = bound[o.group];
      if (!b.tensor) {
        if (!int32_ok) b = {&t, o.name, side};
        continue;
      }
      if (t.dtype == b.tensor->dtype || int32_ok) continue;
      return InvalidArgument(who + ": " + what + " has dtype " + DataTypeName(t.dtype) + " but " +
                             b.side + " '" + b.tensor->name + "' (" + b.operand + ") has " +
                             DataTypeName(b.tensor->dtype) + "; " + group_names[o.group] +
                             " of a " + op.type + " must have one dtype" +
                             (o.or_int32 ? std::string(" (") + o.name + " may also be int32)" : ""));
    }
    return Status::Ok();
  };
  SP_RETURN_IF_ERROR(check(op.inputs, rule->inputs, rule->variadic_inputs, "input"));
  return check(op.outputs, rule->outputs, rule->variadic_outputs, "output");
}

Status CheckOpDtypes(const Graph& g) {
  for (const Op& op : g.ops()) SP_RETURN_IF_ERROR(CheckOpDtypes(g, op));
  return Status::Ok();
}

}  // namespace sramplan::ir
