// Private to the ONNX importer (src/import/onnx_*.cc): the only code in sramplan that sees
// protobuf. The pipeline is described in onnx_import.cc. Files:
//   onnx_proto.cc        element types, tensor payloads (TensorProto <-> Value), attribute reading
//   onnx_fold.cc         the evaluator that folds ops whose inputs are known at import time
//   onnx_import.cc       parsing and checking the model, topological sort, batch binding
//   onnx_infer.cc        ONNX shape inference node by node, with folding
//   onnx_canonicalize.cc attributes and control inputs to ir attributes, BatchNormalization
//                        folding, ir::Graph emission
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "import/import.h"
#include "ir/graph.h"
#include "support/int_math.h"
#include "support/status.h"

namespace sramplan::import::onnx_internal {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;
using Dims = std::vector<int64_t>;

// Largest tensor (in elements) that is evaluated at import time. Shape arithmetic is far smaller.
constexpr int64_t kMaxFoldElements = int64_t{1} << 16;
// Bound of kernel sizes, strides, dilations, pads and groups: keeps every window computation (ours
// and libonnx's) far from int64 overflow.
constexpr int64_t kMaxWindowAttr = int64_t{1} << 30;
// Protobuf cannot represent messages of 2 GiB or more.
constexpr size_t kMaxModelBytes = static_cast<size_t>(INT_MAX);

std::string Q(const std::string& s);
std::string DimsStr(const Dims& d);
// First line of an exception message, trimmed to a readable length.
std::string ExceptionText(const std::exception& e);

// ---------------------------------------------------------------------------------------------
// Element types (onnx_proto.cc)
// ---------------------------------------------------------------------------------------------

int ElemSize(int32_t t);
std::string ElemTypeName(int32_t t);
bool IsFloatElem(int32_t t);
std::optional<ir::DataType> ToIrType(int32_t t);
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float Bf16ToFloat(uint16_t h);
uint16_t FloatToBf16(float f);
// double -> int64 without undefined behaviour: NaN is 0, out-of-range values saturate.
int64_t SaturatingInt(double v);
// Element count of `dims`; nullopt when a dim is negative or the product overflows.
std::optional<int64_t> NumElements(const Dims& dims);

// ---------------------------------------------------------------------------------------------
// Values known at import time
// ---------------------------------------------------------------------------------------------

// A small tensor with its data, used for folding. Integer and bool types keep exact int64 values;
// floating types keep doubles rounded to their precision.
struct Value {
  int32_t type = TensorProto::INT64;
  Dims dims;
  std::vector<int64_t> i;
  std::vector<double> f;

  bool is_float() const { return IsFloatElem(type); }
  int64_t size() const { return static_cast<int64_t>(is_float() ? f.size() : i.size()); }
  double D(int64_t k) const { return is_float() ? f[k] : static_cast<double>(i[k]); }
  int64_t I(int64_t k) const { return is_float() ? SaturatingInt(f[k]) : i[k]; }
  std::vector<int64_t> Ints() const {
    std::vector<int64_t> r(size());
    for (int64_t k = 0; k < size(); ++k) r[k] = I(k);
    return r;
  }
  std::vector<double> Floats() const {
    std::vector<double> r(size());
    for (int64_t k = 0; k < size(); ++k) r[k] = D(k);
    return r;
  }
  // Resizes the storage for `n` elements of the current type.
  void Resize(int64_t n) {
    if (is_float()) {
      f.assign(n, 0.0);
      i.clear();
    } else {
      i.assign(n, 0);
      f.clear();
    }
  }
  // Stores `v` at `k`, converting to the element type (rounding / wrapping as the type does).
  void SetD(int64_t k, double v) {
    if (is_float()) {
      f[k] = RoundFloat(v);
    } else {
      i[k] = WrapInt(SaturatingInt(v));
    }
  }
  void SetI(int64_t k, int64_t v) {
    if (is_float())
      f[k] = RoundFloat(static_cast<double>(v));
    else
      i[k] = WrapInt(v);
  }
  double RoundFloat(double v) const {
    if (type != TensorProto::DOUBLE && v == v) {  // out of float range: infinity, not UB
      if (v > std::numeric_limits<float>::max()) return std::numeric_limits<double>::infinity();
      if (v < -std::numeric_limits<float>::max()) return -std::numeric_limits<double>::infinity();
    }
    if (type == TensorProto::FLOAT) return static_cast<double>(static_cast<float>(v));
    if (type == TensorProto::FLOAT16) return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    if (type == TensorProto::BFLOAT16) return Bf16ToFloat(FloatToBf16(static_cast<float>(v)));
    return v;
  }
  int64_t WrapInt(int64_t v) const {
    if (type == TensorProto::BOOL) return v != 0;
    // The integer types narrower than 64 bits: v keeps its low `bits` bits, sign-extended when
    // signed.
    struct Narrow {
      int32_t type;
      int bits;
      bool is_signed;
    };
    static constexpr Narrow kNarrow[] = {
        {TensorProto::INT8, 8, true},   {TensorProto::UINT8, 8, false},
        {TensorProto::INT16, 16, true}, {TensorProto::UINT16, 16, false},
        {TensorProto::INT32, 32, true}, {TensorProto::UINT32, 32, false}};
    for (const Narrow& n : kNarrow) {
      if (n.type != type) continue;
      const uint64_t low = static_cast<uint64_t>(v) & ((uint64_t{1} << n.bits) - 1);
      const bool negative = n.is_signed && (low >> (n.bits - 1)) != 0;
      return negative ? static_cast<int64_t>(low) - (int64_t{1} << n.bits)
                      : static_cast<int64_t>(low);
    }
    return v;
  }
};

// Little-endian payload bytes -> Value. `bytes` has numel * ElemSize(type) bytes.
Value DecodeBytes(int32_t type, const Dims& dims, const std::vector<uint8_t>& bytes);
// Value -> little-endian payload bytes in its element type.
std::vector<uint8_t> EncodeBytes(const Value& v);
// Reads the payload of a TensorProto as little-endian bytes of its element type. `has_data` is
// false for a stripped (graph-only) or externally stored tensor. Errors name the tensor.
// `bytes` may be null to validate only (no copy of large payloads).
Status ReadPayload(const TensorProto& t, const std::string& what, std::vector<uint8_t>* bytes,
                   bool* has_data);
void ValueToTensorProto(const Value& v, const std::string& name, TensorProto* t);

// ---------------------------------------------------------------------------------------------
// Attributes (onnx_proto.cc)
// ---------------------------------------------------------------------------------------------

const AttributeProto* FindAttr(const NodeProto& n, const std::string& name);
int64_t AttrInt(const NodeProto& n, const std::string& name, int64_t dflt);
std::optional<std::vector<int64_t>> AttrInts(const NodeProto& n, const std::string& name);

// ---------------------------------------------------------------------------------------------
// Folding (onnx_fold.cc)
// ---------------------------------------------------------------------------------------------

// True when `d` is small enough to be evaluated at import time (kMaxFoldElements).
bool Small(const Dims& d);
inline int64_t NormAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }
// Ops the evaluator may fold when all their inputs are known.
bool IsFoldable(const std::string& t);
// Evaluates node `n` on the known inputs `in` (nullptr: absent optional input) into `out`.
// Returns false when the op cannot be folded (unknown op, too large, odd types); errors are real
// inconsistencies in the model and name the node.
StatusOr<bool> EvaluateNode(const NodeProto& n, const std::vector<const Value*>& in,
                            std::vector<Value>* out);

// ---------------------------------------------------------------------------------------------
// The importer
// ---------------------------------------------------------------------------------------------

// An op after canonicalisation, before it becomes an ir::Op.
struct NodeRec {
  std::string name;
  std::string type;
  std::string original_type;
  std::vector<std::string> inputs;  // "" = absent optional input
  std::vector<std::string> outputs;
  ir::Attributes attrs;
  bool deleted = false;
};

// A constant made by the importer (BatchNormalization folding).
struct NewConst {
  int32_t type = TensorProto::FLOAT;
  Dims dims;
  bool has_data = false;
  std::vector<uint8_t> bytes;
};

class Importer {
 public:
  Importer(const std::string& name, const ImportOptions& options)
      : name_(name), options_(options) {}

  StatusOr<ir::Graph> Run(const std::string& bytes);

 private:
  Status Parse(const std::string& bytes);
  Status Collect();
  Status CheckNodes();
  Status SortNodes();
  Status BindBatch();
  Status OverrideInputShape();
  Status ConvertConstantNodes();
  Status InferAndFold();
  Status SeedTypes();
  StatusOr<bool> InferNode(NodeProto& n);
  Status CheckBeforeInference(const NodeProto& n);
  Status CheckOutputType(const NodeProto& n, const std::string& o);
  void FixCeilModePool(const NodeProto& n);
  StatusOr<bool> TryFold(const NodeProto& node);
  void SetType(const std::string& name, const onnx::TypeProto& type);
  std::optional<int> RankOf(const std::string& name) const;
  Status Canonicalize();
  Status FoldControlInputs(NodeRec& r);
  Status NormalizeWindowAttrs(NodeRec& r);
  Status FoldBatchNorms();
  StatusOr<ir::Graph> Emit();

  // Lookups.
  bool IsConstant(const std::string& name) const {
    return init_.count(name) > 0 || stripped_.count(name) > 0 || new_consts_.count(name) > 0;
  }
  const Value* Known(const std::string& name);
  // Full-size decode of a constant with data (for BN folding); nullopt when it has no data.
  std::optional<Value> DecodeConstant(const std::string& name);
  int32_t ElemTypeOf(const std::string& name) const;
  // Shape with every dim known, or nullopt.
  std::optional<Dims> StaticShapeOf(const std::string& name) const;
  std::string DescribeShape(const std::string& name) const;
  std::string ProducerOf(const std::string& name) const;
  Status ShapeError(const std::string& tensor);
  std::string UniqueName(const std::string& base);

  std::string name_;
  ImportOptions options_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  std::map<std::string, int64_t> domain_versions_;

  // Initializers that carry data, Constant nodes and folded values; the TensorProtos are owned by
  // model_.graph().initializer(). ONNX shape functions may read them (data_ptrs_).
  std::unordered_map<std::string, const TensorProto*> init_;
  // Stripped initializers (dims, no data; graph-only models): kept out of the data map, so that
  // no ONNX shape function reads their missing payload.
  std::unordered_map<std::string, std::unique_ptr<TensorProto>> stripped_;
  std::unordered_map<std::string, Value> values_;  // decoded small constants
  std::unordered_map<std::string, NewConst> new_consts_;
  std::vector<std::string> input_names_;  // real graph inputs, in order
  std::vector<std::string> output_names_;
  std::unordered_set<std::string> outputs_set_;
  std::unordered_set<std::string> opaque_nodes_;    // by node name
  std::vector<onnx::ValueInfoProto> preserved_vi_;  // value_info of outputs of schema-less ops
  std::unordered_map<std::string, const onnx::OpSchema*> schemas_;  // by node name
  // Types of every value known so far (inputs, initializers, inferred outputs), and the pointer
  // and data maps libonnx's InferenceContextImpl reads.
  std::unordered_map<std::string, onnx::TypeProto> types_;
  std::unordered_map<std::string, onnx::TypeProto*> type_ptrs_;
  std::unordered_map<std::string, const TensorProto*> data_ptrs_;
  std::unordered_map<std::string, onnx::TypeProto> declared_;  // graph outputs after binding
  std::unordered_map<std::string, std::string> producer_;      // value -> node name
  std::unordered_set<std::string> all_names_;
  std::vector<NodeRec> recs_;
};

}  // namespace sramplan::import::onnx_internal
