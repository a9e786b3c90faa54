// The intermediate representation: a graph of tensors and ops with strong ids.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "support/status.h"
#include "support/strong_id.h"

namespace sramplan::ir {

struct TensorTag;
struct OpTag;
using TensorId = StrongId<TensorTag>;
using OpId = StrongId<OpTag>;

enum class DataType : uint8_t { kInt8, kUInt8, kInt16, kInt32, kInt64, kFloat16, kFloat32, kBool };
int DataTypeSize(DataType t);
const char* DataTypeName(DataType t);
bool ParseDataType(const std::string& name, DataType* out);
inline bool IsFloat(DataType t) { return t == DataType::kFloat16 || t == DataType::kFloat32; }

enum class TensorKind : uint8_t { kInput, kOutput, kActivation, kConstant };
const char* TensorKindName(TensorKind k);
bool ParseTensorKind(const std::string& name, TensorKind* out);

// Where the channel axis of 4-D feature maps is.
enum class Layout : uint8_t { kNCHW, kNHWC };

inline constexpr int kMaxRank = 6;

struct QuantParams {
  std::vector<float> scale;        // 1 entry: per tensor; C entries: per channel along `axis`
  std::vector<int32_t> zero_point;
  int axis = 0;
  bool empty() const { return scale.empty(); }
};

using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

class Attributes {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  void Set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  int64_t GetInt(const std::string& name, int64_t dflt) const;
  double GetFloat(const std::string& name, double dflt) const;
  std::string GetString(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> dflt = {}) const;
  std::vector<double> GetFloats(const std::string& name, std::vector<double> dflt = {}) const;
  const std::map<std::string, AttrValue>& values() const { return values_; }

 private:
  std::map<std::string, AttrValue> values_;
};

struct Tensor {
  TensorId id;
  std::string name;
  std::vector<int64_t> shape;  // rank 0..6, every dim >= 1 after verification
  DataType dtype = DataType::kFloat32;
  TensorKind kind = TensorKind::kActivation;
  QuantParams quant;
  OpId producer;                // invalid for inputs and constants
  std::vector<OpId> consumers;  // in op order; an op using a tensor twice is listed once
  std::vector<uint8_t> data;    // constant payload (little endian) when the model carries it
  int64_t NumElements() const;  // product of dims; valid after VerifyGraph
  int64_t Bytes() const;        // NumElements * element size
};

struct Op {
  OpId id;
  std::string name;
  std::string type;  // ONNX operator name; "Opaque" for ops imported with --allow-unknown-ops
  std::vector<TensorId> inputs;   // an optional ONNX input that is absent is not listed
  std::vector<TensorId> outputs;
  Attributes attrs;
  std::string original_type;  // for Opaque ops: the type in the source model
};

class Graph {
 public:
  std::string name;
  Layout layout = Layout::kNCHW;

  // Adds a tensor; its name must be unique (checked by VerifyGraph, looked up by FindTensor).
  TensorId AddTensor(Tensor t);
  // Adds an op at the end of the model order and records producer/consumer links.
  OpId AddOp(Op op);

  Tensor& tensor(TensorId id) { return tensors_.at(id.value()); }
  const Tensor& tensor(TensorId id) const { return tensors_.at(id.value()); }
  Op& op(OpId id) { return ops_.at(id.value()); }
  const Op& op(OpId id) const { return ops_.at(id.value()); }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Op>& ops() const { return ops_; }
  std::vector<Tensor>& mutable_tensors() { return tensors_; }
  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  int num_ops() const { return static_cast<int>(ops_.size()); }

  std::optional<TensorId> FindTensor(const std::string& name) const;
  std::vector<TensorId> Inputs() const;   // tensors of kind kInput, in id order
  std::vector<TensorId> Outputs() const;  // tensors of kind kOutput, in id order

  // The tensor that owns the bytes of `t`: follows view ops (Reshape, Flatten, ...) to their input.
  TensorId StorageRoot(TensorId t) const;

 private:
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
  std::unordered_map<std::string, TensorId> by_name_;
};

// View ops alias their (first) input and allocate nothing.
bool IsViewOp(const std::string& type);
// Element-wise ops: output element i depends only on input element i (after broadcasting).
bool IsUnaryElementwise(const std::string& type);
bool IsBinaryElementwise(const std::string& type);
// A depthwise convolution: Conv with group == C_in == C_out/multiplier, multiplier 1.
bool IsDepthwiseConv(const Graph& g, const Op& op);
// Index of the channel axis of a feature map of the given rank in this graph's layout.
int ChannelAxis(const Graph& g, int rank);

// Graph verifier: names unique, every tensor produced at most once and activations/outputs exactly
// once, ops in a valid execution order (so no cycles), ranks 0..6, dims positive, byte sizes within
// bounds, op arity and shapes consistent for every op whose shape rule sramplan knows, and every
// operand's dtype one its op kind accepts (CheckOpDtypes, ir/op_dtypes.h). Every importer runs it
// after shape inference.
Status VerifyGraph(const Graph& g);

// Converts every floating-point tensor to `dtype` (what `--dtype int8` does); biases of Conv/Gemm
// become int32 when dtype is an integer type, as in TFLite.
void ApplyDtype(Graph& g, DataType dtype);

}  // namespace sramplan::ir
