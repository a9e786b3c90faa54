// A .tflite flatbuffer read into plain structs with flatbuffers' low-level table API (libflatbuffers-dev):
// no generated code and no copy of TensorFlow's schema, only the schema's field ids and enum values
// (facts of the format). Every table, vector and string is checked with flatbuffers::Verifier before
// it is read, and every index (opcode, tensor, buffer) is range-checked, so corrupt input gives a
// Status, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"

namespace sramplan::import::tflite {

// TensorType values of the TFLite schema.
enum TensorType : int {
  kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUInt8 = 3, kInt64 = 4, kString = 5, kBool = 6, kInt16 = 7,
  kComplex64 = 8, kInt8 = 9, kFloat64 = 10,
};
// Bytes per element of a TensorType, 0 when sramplan does not size it (strings, complex, ...).
int TensorTypeBytes(int type);
const char* TensorTypeName(int type);

// BuiltinOperator values of the TFLite schema that sramplan maps (builtin_code; older files keep
// codes below 127 in deprecated_builtin_code).
enum Builtin : int {
  kAdd = 0, kAveragePool2D = 1, kConcatenation = 2, kConv2D = 3, kDepthwiseConv2D = 4, kDequantize = 6,
  kFullyConnected = 9, kLogistic = 14, kMaxPool2D = 17, kMul = 18, kRelu = 19, kRelu6 = 21, kReshape = 22,
  kSoftmax = 25, kCustom = 32, kPad = 34, kTranspose = 39, kMean = 40, kSub = 41, kSqueeze = 43,
  kStridedSlice = 45, kQuantize = 114, kHardSwish = 117, kBatchMatMul = 126,
};
// The schema's name of a builtin code ("CONV_2D"), or "BUILTIN_<n>" for codes sramplan does not name.
std::string BuiltinName(int code);

struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int quantized_dimension = 0;
};

struct Tensor {
  std::vector<int32_t> shape;
  int type = kFloat32;
  uint32_t buffer = 0;  // index into Model::buffers; 0 is the empty sentinel buffer
  std::string name;
  Quantization quant;
  bool is_variable = false;
};

// The builtin options sramplan reads, by field of the options table of the op's kind (absent fields
// keep the schema defaults).
struct Options {
  int padding = 0;  // Padding: 0 SAME, 1 VALID
  int stride_w = 1, stride_h = 1, filter_w = 1, filter_h = 1, dilation_w = 1, dilation_h = 1;
  int depth_multiplier = 1;
  int activation = 0;  // ActivationFunctionType: 0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH, 5 SIGN_BIT
  int axis = 0;        // CONCATENATION
  bool keep_dims = false;     // MEAN (ReducerOptions)
  bool keep_num_dims = false;  // FULLY_CONNECTED
  bool adj_x = false, adj_y = false;  // BATCH_MATMUL
  int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;  // STRIDED_SLICE
  float beta = 1.0f;  // SOFTMAX
};

struct Operator {
  int opcode_index = 0;
  int builtin = 0;          // effective builtin code (max of deprecated_builtin_code and builtin_code)
  std::string custom_code;  // for CUSTOM ops
  std::vector<int32_t> inputs, outputs;  // tensor indices; -1 marks an omitted optional input
  Options options;
};

struct Subgraph {
  std::vector<Tensor> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<Operator> operators;
  std::string name;
};

struct Buffer {
  size_t data_offset = 0;  // position of the data bytes in the file
  size_t size = 0;         // 0: no data (activations, the sentinel buffer 0)
  bool external = false;   // the data lies outside the flatbuffer (Buffer.offset/size, models > 2 GB)
};

struct Metadata {
  std::string name;
  uint32_t buffer = 0;
};

struct Model {
  uint32_t version = 0;
  std::vector<Subgraph> subgraphs;
  std::vector<Buffer> buffers;
  std::vector<Metadata> metadata;
  std::string description;
};

// Parses `bytes` (a whole .tflite file; `name` is used in messages). Checks the "TFL3" identifier,
// verifies the flatbuffer and range-checks every index; shapes are checked by the importer.
StatusOr<Model> ParseModel(const std::string& bytes, const std::string& name);

// The data of buffer `index` (empty when it has none).
inline std::string_view BufferData(const std::string& bytes, const Model& m, uint32_t index) {
  const Buffer& b = m.buffers.at(index);
  return std::string_view(bytes).substr(b.data_offset, b.size);
}

// The IR tensor name of every tensor of `sg` (the importer's and the offline-plan export's one rule):
// the file's name when it is non-empty and unique in the subgraph, else "<name>#<index>" ("t<index>"
// for an empty name).
std::vector<std::string> IrTensorNames(const Subgraph& sg);

// True when `bytes` starts like a .tflite file (the "TFL3" file identifier at bytes 4..7).
bool LooksLikeTflite(std::string_view bytes);

inline constexpr const char* kOfflineMemoryAllocation = "OfflineMemoryAllocation";

// The offsets of the model's OfflineMemoryAllocation metadata (version 1, subgraphs, n, n offsets),
// empty when it has none.
StatusOr<std::vector<int32_t>> OfflineOffsets(const std::string& bytes, const Model& m);

}  // namespace sramplan::import::tflite
