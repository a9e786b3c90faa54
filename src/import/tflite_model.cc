// Reads a .tflite flatbuffer with flatbuffers' Table and Verifier (see tflite_model.h). Field numbers
// below are the TFLite schema's field ids; a field's vtable slot is 4 + 2 * id.
#include "import/tflite_model.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace sramplan::import::tflite {
namespace {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Table;
using flatbuffers::Vector;

constexpr flatbuffers::voffset_t Vt(int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); }

// A verifying reader: every accessor verifies what it touches first and records the first failure.
class Reader {
 public:
  Reader(const std::string& bytes, std::string name)
      : bytes_(bytes),
        verifier_(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), Opts()),
        name_(std::move(name)) {}

  static flatbuffers::Verifier::Options Opts() {
    flatbuffers::Verifier::Options o;
    o.max_depth = 64;
    o.max_tables = 10000000;
    return o;
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void Fail(const std::string& what) {
    if (error_.empty()) error_ = what;
  }

  const Table* Root() {
    uint32_t off = 0;
    std::memcpy(&off, bytes_.data(), 4);
    if (off < 8 || off > bytes_.size() - 4) {
      Fail("the root table offset " + std::to_string(off) + " points outside the file (" +
           std::to_string(bytes_.size()) + " bytes)");
      return nullptr;
    }
    return Begin(reinterpret_cast<const Table*>(bytes_.data() + off), "model");
  }

  // Verifies the table's vtable; pair with End().
  const Table* Begin(const Table* t, const std::string& what) {
    if (!ok() || t == nullptr) return nullptr;
    if (!t->VerifyTableStart(verifier_)) {
      Fail("table " + what + " is corrupt (its vtable lies outside the file or the file nests too deep)");
      return nullptr;
    }
    return t;
  }
  void End() { verifier_.EndTable(); }

  template <typename T>
  T Scalar(const Table* t, int id, T dflt, const std::string& what) {
    if (!ok() || t == nullptr) return dflt;
    if (!t->VerifyField<T>(verifier_, Vt(id), sizeof(T))) {
      Fail("field " + what + " lies outside the file");
      return dflt;
    }
    return t->GetField<T>(Vt(id), dflt);
  }

  template <typename T>
  const Vector<T>* Vec(const Table* t, int id, const std::string& what) {
    if (!ok() || t == nullptr) return nullptr;
    if (!t->VerifyOffset(verifier_, Vt(id))) {
      Fail("vector " + what + " has an offset outside the file");
      return nullptr;
    }
    const auto* v = t->GetPointer<const Vector<T>*>(Vt(id));
    if (!verifier_.VerifyVector(v)) {
      Fail("vector " + what + " runs past the end of the file");
      return nullptr;
    }
    return v;
  }

  std::string Str(const Table* t, int id, const std::string& what) {
    if (!ok() || t == nullptr) return "";
    if (!t->VerifyOffset(verifier_, Vt(id))) {
      Fail("string " + what + " has an offset outside the file");
      return "";
    }
    const auto* s = t->GetPointer<const String*>(Vt(id));
    if (!verifier_.VerifyString(s)) {
      Fail("string " + what + " runs past the end of the file");
      return "";
    }
    return s ? s->str() : "";
  }

  const Table* Sub(const Table* t, int id, const std::string& what) {
    if (!ok() || t == nullptr) return nullptr;
    if (!t->VerifyOffset(verifier_, Vt(id))) {
      Fail("table " + what + " has an offset outside the file");
      return nullptr;
    }
    return Begin(t->GetPointer<const Table*>(Vt(id)), what);
  }

  template <typename T>
  std::vector<T> Ints(const Table* t, int id, const std::string& what) {
    const auto* v = Vec<T>(t, id, what);
    std::vector<T> out;
    if (v == nullptr) return out;
    // Element by element through memcpy: a corrupt file may place an int64 vector at an offset that
    // is not 8-byte aligned, and a typed load there is undefined behaviour (little-endian hosts).
    out.resize(v->size());
    const uint8_t* data = v->Data();
    for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], data + i * sizeof(T), sizeof(T));
    return out;
  }

  size_t PositionOf(const void* p) const { return static_cast<const char*>(p) - bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  const std::string& bytes_;
  flatbuffers::Verifier verifier_;
  std::string name_;
  std::string error_;
};

void ReadOptions(Reader& r, const Table* o, int code, const std::string& what, Options* opt) {
  if (o == nullptr) return;
  auto i = [&](int id, int dflt) { return r.Scalar<int32_t>(o, id, dflt, what + "." + std::to_string(id)); };
  auto b = [&](int id) { return r.Scalar<uint8_t>(o, id, 0, what + "." + std::to_string(id)) != 0; };
  auto s8 = [&](int id) { return static_cast<int>(r.Scalar<int8_t>(o, id, 0, what + "." + std::to_string(id))); };
  switch (code) {
    case kConv2D:  // Conv2DOptions: padding, stride_w, stride_h, fused_activation_function, dilation_w, dilation_h
      opt->padding = s8(0);
      opt->stride_w = i(1, 0);
      opt->stride_h = i(2, 0);
      opt->activation = s8(3);
      opt->dilation_w = i(4, 1);
      opt->dilation_h = i(5, 1);
      break;
    case kDepthwiseConv2D:  // padding, stride_w, stride_h, depth_multiplier, activation, dilation_w, dilation_h
      opt->padding = s8(0);
      opt->stride_w = i(1, 0);
      opt->stride_h = i(2, 0);
      opt->depth_multiplier = i(3, 0);
      opt->activation = s8(4);
      opt->dilation_w = i(5, 1);
      opt->dilation_h = i(6, 1);
      break;
    case kAveragePool2D:
    case kMaxPool2D:  // Pool2DOptions: padding, stride_w, stride_h, filter_width, filter_height, activation
      opt->padding = s8(0);
      opt->stride_w = i(1, 0);
      opt->stride_h = i(2, 0);
      opt->filter_w = i(3, 0);
      opt->filter_h = i(4, 0);
      opt->activation = s8(5);
      break;
    case kFullyConnected:  // FullyConnectedOptions: activation, weights_format, keep_num_dims
      opt->activation = s8(0);
      opt->keep_num_dims = b(2);
      break;
    case kSoftmax:  // SoftmaxOptions: beta
      opt->beta = r.Scalar<float>(o, 0, 0.0f, what + ".beta");
      break;
    case kConcatenation:  // ConcatenationOptions: axis, activation
      opt->axis = i(0, 0);
      opt->activation = s8(1);
      break;
    case kAdd:
    case kMul:
    case kSub:  // AddOptions / MulOptions / SubOptions: activation first
      opt->activation = s8(0);
      break;
    case kMean:  // ReducerOptions: keep_dims
      opt->keep_dims = b(0);
      break;
    case kStridedSlice:  // StridedSliceOptions: begin, end, ellipsis, new_axis, shrink_axis masks
      opt->begin_mask = i(0, 0);
      opt->end_mask = i(1, 0);
      opt->ellipsis_mask = i(2, 0);
      opt->new_axis_mask = i(3, 0);
      opt->shrink_axis_mask = i(4, 0);
      break;
    case kBatchMatMul:  // BatchMatMulOptions: adj_x, adj_y
      opt->adj_x = b(0);
      opt->adj_y = b(1);
      break;
    default:
      break;
  }
}

Status ReadSubgraph(Reader& r, const Table* sg, const std::vector<int>& codes, const std::vector<std::string>& custom,
                    size_t num_buffers, Subgraph* out) {
  const std::string w = "subgraphs[0]";
  out->name = r.Str(sg, 4, w + ".name");
  const auto* tensors = r.Vec<Offset<Table>>(sg, 0, w + ".tensors");
  const size_t nt = tensors ? tensors->size() : 0;
  for (size_t i = 0; i < nt && r.ok(); ++i) {
    const std::string tw = w + ".tensors[" + std::to_string(i) + "]";
    const Table* t = r.Begin(tensors->Get(static_cast<flatbuffers::uoffset_t>(i)), tw);
    if (!t) break;
    Tensor x;
    x.shape = r.Ints<int32_t>(t, 0, tw + ".shape");
    x.type = r.Scalar<int8_t>(t, 1, 0, tw + ".type");
    x.buffer = r.Scalar<uint32_t>(t, 2, 0, tw + ".buffer");
    x.name = r.Str(t, 3, tw + ".name");
    x.is_variable = r.Scalar<uint8_t>(t, 5, 0, tw + ".is_variable") != 0;
    if (const Table* q = r.Sub(t, 4, tw + ".quantization")) {
      x.quant.scale = r.Ints<float>(q, 2, tw + ".quantization.scale");
      x.quant.zero_point = r.Ints<int64_t>(q, 3, tw + ".quantization.zero_point");
      x.quant.quantized_dimension = r.Scalar<int32_t>(q, 6, 0, tw + ".quantization.quantized_dimension");
      r.End();
    }
    r.End();
    if (!r.ok()) break;
    if (x.buffer >= num_buffers)
      return InvalidArgument("tensor " + std::to_string(i) + " ('" + x.name + "') uses buffer " +
                             std::to_string(x.buffer) + " but the model has " + std::to_string(num_buffers) +
                             " buffers; the file is corrupt: re-export it");
    out->tensors.push_back(std::move(x));
  }
  out->inputs = r.Ints<int32_t>(sg, 1, w + ".inputs");
  out->outputs = r.Ints<int32_t>(sg, 2, w + ".outputs");
  const auto* ops = r.Vec<Offset<Table>>(sg, 3, w + ".operators");
  const size_t no = ops ? ops->size() : 0;
  for (size_t i = 0; i < no && r.ok(); ++i) {
    const std::string ow = w + ".operators[" + std::to_string(i) + "]";
    const Table* o = r.Begin(ops->Get(static_cast<flatbuffers::uoffset_t>(i)), ow);
    if (!o) break;
    Operator op;
    op.opcode_index = static_cast<int>(r.Scalar<uint32_t>(o, 0, 0, ow + ".opcode_index"));
    op.inputs = r.Ints<int32_t>(o, 1, ow + ".inputs");
    op.outputs = r.Ints<int32_t>(o, 2, ow + ".outputs");
    if (r.ok() && (op.opcode_index < 0 || static_cast<size_t>(op.opcode_index) >= codes.size()))
      return InvalidArgument(ow + " uses operator code " + std::to_string(op.opcode_index) + " but the model has " +
                             std::to_string(codes.size()) + "; the file is corrupt: re-export it");
    if (r.ok()) {
      op.builtin = codes[op.opcode_index];
      op.custom_code = custom[op.opcode_index];
      if (const Table* opts = r.Sub(o, 4, ow + ".builtin_options")) {
        ReadOptions(r, opts, op.builtin, ow + ".builtin_options", &op.options);
        r.End();
      }
    }
    r.End();
    if (!r.ok()) break;
    for (int32_t k : op.inputs)
      if (k < -1 || k >= static_cast<int32_t>(nt))
        return InvalidArgument(ow + " (" + BuiltinName(op.builtin) + ") reads tensor " + std::to_string(k) +
                               " but subgraph 0 has " + std::to_string(nt) + " tensors; the file is corrupt");
    for (int32_t k : op.outputs)
      if (k < 0 || k >= static_cast<int32_t>(nt))
        return InvalidArgument(ow + " (" + BuiltinName(op.builtin) + ") writes tensor " + std::to_string(k) +
                               " but subgraph 0 has " + std::to_string(nt) + " tensors; the file is corrupt");
    out->operators.push_back(std::move(op));
  }
  for (const auto* list : {&out->inputs, &out->outputs})
    for (int32_t k : *list)
      if (k < 0 || k >= static_cast<int32_t>(nt))
        return InvalidArgument(w + " lists tensor " + std::to_string(k) + " as an input or output but has " +
                               std::to_string(nt) + " tensors; the file is corrupt");
  return Status::Ok();
}

}  // namespace

int TensorTypeBytes(int type) {
  switch (type) {
    case kFloat32: case kInt32: return 4;
    case kFloat16: case kInt16: return 2;
    case kUInt8: case kInt8: case kBool: return 1;
    case kInt64: case kFloat64: return 8;
    default: return 0;
  }
}

const char* TensorTypeName(int type) {
  static const char* kNames[] = {"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING",
                                 "BOOL",    "INT16",   "COMPLEX64", "INT8", "FLOAT64"};
  return type >= 0 && type <= kFloat64 ? kNames[type] : "UNKNOWN_TYPE";
}

std::string BuiltinName(int code) {
  static const std::pair<int, const char*> kNames[] = {
      {kAdd, "ADD"}, {kAveragePool2D, "AVERAGE_POOL_2D"}, {kConcatenation, "CONCATENATION"},
      {kConv2D, "CONV_2D"}, {kDepthwiseConv2D, "DEPTHWISE_CONV_2D"}, {kDequantize, "DEQUANTIZE"},
      {kFullyConnected, "FULLY_CONNECTED"}, {kLogistic, "LOGISTIC"}, {kMaxPool2D, "MAX_POOL_2D"}, {kMul, "MUL"},
      {kRelu, "RELU"}, {kRelu6, "RELU6"}, {kReshape, "RESHAPE"}, {kSoftmax, "SOFTMAX"}, {kCustom, "CUSTOM"},
      {kPad, "PAD"}, {kTranspose, "TRANSPOSE"}, {kMean, "MEAN"}, {kSub, "SUB"}, {kSqueeze, "SQUEEZE"},
      {kStridedSlice, "STRIDED_SLICE"}, {kQuantize, "QUANTIZE"}, {kHardSwish, "HARD_SWISH"},
      {kBatchMatMul, "BATCH_MATMUL"},
  };
  for (const auto& [c, n] : kNames)
    if (c == code) return n;
  return "BUILTIN_" + std::to_string(code);
}

std::vector<std::string> IrTensorNames(const Subgraph& sg) {
  std::map<std::string, int> count;
  for (const Tensor& t : sg.tensors) ++count[t.name];
  std::vector<std::string> names;
  for (size_t i = 0; i < sg.tensors.size(); ++i) {
    const std::string& n = sg.tensors[i].name;
    names.push_back(n.empty() ? "t" + std::to_string(i) : count[n] > 1 ? n + "#" + std::to_string(i) : n);
  }
  return names;
}

bool LooksLikeTflite(std::string_view bytes) { return bytes.size() >= 8 && bytes.substr(4, 4) == "TFL3"; }

StatusOr<Model> ParseModel(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 8) return InvalidArgument("'" + name + "' is too short for a .tflite flatbuffer (" +
                                               std::to_string(bytes.size()) + " bytes)");
  if (!LooksLikeTflite(bytes))
    return InvalidArgument("'" + name + "' lacks the .tflite file identifier \"TFL3\" at bytes 4..7");
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return InvalidArgument("'" + name + "' is larger than a flatbuffer can be (2 GiB)");
  Reader r(bytes, name);
  Model m;
  const Table* root = r.Root();
  m.version = r.Scalar<uint32_t>(root, 0, 0, "model.version");
  // operator_codes: deprecated_builtin_code (int8), custom_code, version, builtin_code (int32).
  std::vector<int> codes;
  std::vector<std::string> custom;
  const auto* opcodes = r.Vec<Offset<Table>>(root, 1, "model.operator_codes");
  for (size_t i = 0; opcodes && i < opcodes->size() && r.ok(); ++i) {
    const std::string w = "model.operator_codes[" + std::to_string(i) + "]";
    const Table* c = r.Begin(opcodes->Get(static_cast<flatbuffers::uoffset_t>(i)), w);
    const int deprecated = r.Scalar<int8_t>(c, 0, 0, w + ".deprecated_builtin_code");
    custom.push_back(r.Str(c, 1, w + ".custom_code"));
    const int builtin = r.Scalar<int32_t>(c, 3, 0, w + ".builtin_code");
    codes.push_back(std::max(deprecated, builtin));
    if (c) r.End();
  }
  // buffers: data (vector of ubyte), offset and size (ulong) for data outside the flatbuffer.
  const auto* buffers = r.Vec<Offset<Table>>(root, 4, "model.buffers");
  for (size_t i = 0; buffers && i < buffers->size() && r.ok(); ++i) {
    const std::string w = "model.buffers[" + std::to_string(i) + "]";
    const Table* b = r.Begin(buffers->Get(static_cast<flatbuffers::uoffset_t>(i)), w);
    Buffer buf;
    if (const auto* data = r.Vec<uint8_t>(b, 0, w + ".data")) {
      buf.data_offset = r.PositionOf(data->data());
      buf.size = data->size();
    }
    const uint64_t off = r.Scalar<uint64_t>(b, 1, 0, w + ".offset");
    const uint64_t size = r.Scalar<uint64_t>(b, 2, 0, w + ".size");
    if (b) r.End();
    if (r.ok() && off > 1) {
      if (off > bytes.size() || size > bytes.size() - off)
        return InvalidArgument(w + " points at bytes " + std::to_string(off) + ".." + std::to_string(off + size) +
                               " outside the " + std::to_string(bytes.size()) + "-byte file; the file is corrupt");
      buf.data_offset = off;
      buf.size = size;
      buf.external = true;
    }
    m.buffers.push_back(buf);
  }
  m.description = r.Str(root, 3, "model.description");
  const auto* metadata = r.Vec<Offset<Table>>(root, 6, "model.metadata");
  for (size_t i = 0; metadata && i < metadata->size() && r.ok(); ++i) {
    const std::string w = "model.metadata[" + std::to_string(i) + "]";
    const Table* t = r.Begin(metadata->Get(static_cast<flatbuffers::uoffset_t>(i)), w);
    Metadata md;
    md.name = r.Str(t, 0, w + ".name");
    md.buffer = r.Scalar<uint32_t>(t, 1, 0, w + ".buffer");
    if (t) r.End();
    if (r.ok() && md.buffer >= m.buffers.size())
      return InvalidArgument(w + " ('" + md.name + "') uses buffer " + std::to_string(md.buffer) +
                             " but the model has " + std::to_string(m.buffers.size()) + "; the file is corrupt");
    m.metadata.push_back(std::move(md));
  }
  const auto* subgraphs = r.Vec<Offset<Table>>(root, 2, "model.subgraphs");
  if (r.ok() && (subgraphs == nullptr || subgraphs->size() == 0))
    return InvalidArgument("'" + name + "' has no subgraph; a .tflite model needs at least one");
  for (size_t i = 0; subgraphs && i < subgraphs->size() && r.ok(); ++i) {
    const Table* sg = r.Begin(subgraphs->Get(static_cast<flatbuffers::uoffset_t>(i)), "subgraphs[" + std::to_string(i) + "]");
    if (!sg) break;
    Subgraph s;
    if (i == 0) {
      SP_RETURN_IF_ERROR(ReadSubgraph(r, sg, codes, custom, m.buffers.size(), &s));
    } else {
      // Other subgraphs (IF/WHILE bodies) are counted, not read: sramplan plans subgraph 0.
      const auto* t = r.Vec<Offset<Table>>(sg, 0, "subgraphs[" + std::to_string(i) + "].tensors");
      s.tensors.resize(t ? t->size() : 0);
    }
    r.End();
    m.subgraphs.push_back(std::move(s));
  }
  if (!r.ok()) return InvalidArgument("'" + name + "' is not a valid .tflite flatbuffer: " + r.error());
  return m;
}

StatusOr<std::vector<int32_t>> OfflineOffsets(const std::string& bytes, const Model& m) {
  for (const Metadata& md : m.metadata) {
    if (md.name != kOfflineMemoryAllocation) continue;
    std::string_view d = BufferData(bytes, m, md.buffer);
    if (d.size() < 12 || d.size() % 4 != 0)
      return InvalidArgument("metadata OfflineMemoryAllocation: buffer " + std::to_string(md.buffer) + " has " +
                             std::to_string(d.size()) + " bytes, not 3 + n int32 words");
    std::vector<int32_t> words(d.size() / 4);
    std::memcpy(words.data(), d.data(), d.size());  // little endian, as the file
    if (words[2] < 0 || static_cast<size_t>(words[2]) != words.size() - 3)
      return InvalidArgument("metadata OfflineMemoryAllocation says " + std::to_string(words[2]) + " offsets but holds " +
                             std::to_string(words.size() - 3));
    return std::vector<int32_t>(words.begin() + 3, words.end());
  }
  return std::vector<int32_t>{};
}

}  // namespace sramplan::import::tflite
