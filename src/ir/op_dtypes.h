// Which element types each op kind accepts at each operand: one table (ONNX's type constraints,
// restricted to sramplan's dtypes, plus the quantised int8/uint8/int16 forms of the compute ops),
// checked once for every graph by VerifyGraph, i.e. by every importer after shape inference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace sramplan::ir {

// A set of DataTypes (bit i = DataType value i).
using DtypeSet = uint32_t;
constexpr DtypeSet Dt(DataType t) { return DtypeSet{1} << static_cast<int>(t); }
// int8, uint8, int16, float16, float32: what the compute kernels run in (float or quantised).
inline constexpr DtypeSet kNumericDtypes = Dt(DataType::kInt8) | Dt(DataType::kUInt8) |
                                           Dt(DataType::kInt16) | Dt(DataType::kFloat16) |
                                           Dt(DataType::kFloat32);
// The numeric types plus int32 and int64 (ONNX's integer arithmetic).
inline constexpr DtypeSet kNumericOrIntDtypes =
    kNumericDtypes | Dt(DataType::kInt32) | Dt(DataType::kInt64);
// Index and shape operands (Gather indices, Slice starts/ends/axes/steps, Reshape shape).
inline constexpr DtypeSet kIndexDtypes = Dt(DataType::kInt32) | Dt(DataType::kInt64);
inline constexpr DtypeSet kAllDtypes = kNumericOrIntDtypes | Dt(DataType::kBool);
// "int8, uint8 or float32" for messages.
std::string DtypeSetText(DtypeSet s);

// One operand position of an op kind.
struct OperandRule {
  const char* name;   // ONNX's operand name ("X", "W", "B", "starts"), for messages
  DtypeSet allowed;   // the dtypes accepted here
  int group = -1;     // operands with the same group (ONNX's type variable T) share one dtype
  bool or_int32 = false;  // also int32 where the group is another type (a quantised Conv's bias)
  bool constant = false;  // must be a constant tensor (sramplan reads it at import time)
};

struct OpDtypeRule {
  std::vector<OperandRule> inputs;
  int min_inputs = 0;
  bool variadic_inputs = false;  // the last input rule repeats
  std::vector<OperandRule> outputs;
  int min_outputs = 1;
  bool variadic_outputs = false;  // the last output rule repeats
};

// The rule of an op type; nullptr for types without one (Opaque ops are not checked).
const OpDtypeRule* FindOpDtypeRule(const std::string& op_type);

// Checks every op's operand count and operand dtypes against its rule. The first violation is an
// InvalidArgument naming the op, the tensor, its dtype and what the op accepts there.
Status CheckOpDtypes(const Graph& g);
Status CheckOpDtypes(const Graph& g, const Op& op);

}  // namespace sramplan::ir
