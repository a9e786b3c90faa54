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
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "import/import.h"
#include "ir/shape_inference.h"
#include "support/int_math.h"
#include "support/strings.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the ONNX importer copies tensor payloads as little-endian bytes");

namespace sramplan::import {
namespace {

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

std::string Q(const std::string& s) { return "'" + s + "'"; }
std::string DimsStr(const Dims& d) {
  std::string r = "[";
  r += JoinInts(d);
  return r += "]";
}

// First line of an exception message, trimmed to a readable length.
std::string ExceptionText(const std::exception& e) {
  std::string m = e.what();
  size_t nl = m.find('\n');
  if (nl != std::string::npos) m = m.substr(0, nl);
  if (m.size() > 600) m = m.substr(0, 600) + "...";
  return m;
}

// ---------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------

int ElemSize(int32_t t) {
  switch (t) {
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::BOOL:
      return 1;
    case TensorProto::UINT16:
    case TensorProto::INT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::DOUBLE:
      return 8;
    default:
      return 0;  // string, complex, undefined: never decoded
  }
}

std::string ElemTypeName(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return "type #" + std::to_string(t);
}

bool IsFloatElem(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 ||
         t == TensorProto::BFLOAT16;
}

std::optional<ir::DataType> ToIrType(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT:
      return ir::DataType::kFloat32;
    case TensorProto::FLOAT16:
      return ir::DataType::kFloat16;
    case TensorProto::INT8:
      return ir::DataType::kInt8;
    case TensorProto::UINT8:
      return ir::DataType::kUInt8;
    case TensorProto::INT16:
      return ir::DataType::kInt16;
    case TensorProto::INT32:
      return ir::DataType::kInt32;
    case TensorProto::INT64:
      return ir::DataType::kInt64;
    case TensorProto::BOOL:
      return ir::DataType::kBool;
    default:
      return std::nullopt;
  }
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | static_cast<uint32_t>(exp) << 10 | man >> 13;
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: fine
  return static_cast<uint16_t>(half);
}

float Bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

// double -> int64 without undefined behaviour: NaN is 0, out-of-range values saturate.
int64_t SaturatingInt(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// Element count of `dims`; nullopt when a dim is negative or the product overflows.
std::optional<int64_t> NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    auto m = CheckedMul(n, d);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

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
    switch (type) {
      case TensorProto::BOOL:
        return v != 0;
      case TensorProto::INT8:
        return static_cast<int8_t>(v);
      case TensorProto::UINT8:
        return static_cast<uint8_t>(v);
      case TensorProto::INT16:
        return static_cast<int16_t>(v);
      case TensorProto::UINT16:
        return static_cast<uint16_t>(v);
      case TensorProto::INT32:
        return static_cast<int32_t>(v);
      case TensorProto::UINT32:
        return static_cast<uint32_t>(v);
      default:
        return v;
    }
  }
};

// Little-endian payload bytes -> Value. `bytes` has numel * ElemSize(type) bytes.
Value DecodeBytes(int32_t type, const Dims& dims, const std::vector<uint8_t>& bytes) {
  Value v;
  v.type = type;
  v.dims = dims;
  int es = ElemSize(type);
  int64_t n = es ? static_cast<int64_t>(bytes.size()) / es : 0;
  v.Resize(n);
  const uint8_t* p = bytes.data();
  for (int64_t k = 0; k < n; ++k, p += es) {
    switch (type) {
      case TensorProto::FLOAT: {
        float x;
        std::memcpy(&x, p, 4);
        v.f[k] = x;
        break;
      }
      case TensorProto::DOUBLE:
        std::memcpy(&v.f[k], p, 8);
        break;
      case TensorProto::FLOAT16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        v.f[k] = HalfToFloat(h);
        break;
      }
      case TensorProto::BFLOAT16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        v.f[k] = Bf16ToFloat(h);
        break;
      }
      case TensorProto::INT8:
        v.i[k] = static_cast<int8_t>(*p);
        break;
      case TensorProto::UINT8:
        v.i[k] = *p;
        break;
      case TensorProto::BOOL:
        v.i[k] = *p != 0;
        break;
      case TensorProto::INT16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v.i[k] = x;
        break;
      }
      case TensorProto::UINT16: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v.i[k] = x;
        break;
      }
      case TensorProto::INT32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v.i[k] = x;
        break;
      }
      case TensorProto::UINT32: {
        uint32_t x;
        std::memcpy(&x, p, 4);
        v.i[k] = x;
        break;
      }
      case TensorProto::INT64:
        std::memcpy(&v.i[k], p, 8);
        break;
      case TensorProto::UINT64: {
        uint64_t x;
        std::memcpy(&x, p, 8);
        v.i[k] = static_cast<int64_t>(x);
        break;
      }
      default:
        break;
    }
  }
  return v;
}

template <typename T>
void Put(std::vector<uint8_t>& out, size_t k, T x) {
  std::memcpy(out.data() + k * sizeof(T), &x, sizeof(T));
}

// Value -> little-endian payload bytes in its element type.
std::vector<uint8_t> EncodeBytes(const Value& v) {
  int es = ElemSize(v.type);
  int64_t n = v.size();
  std::vector<uint8_t> out(static_cast<size_t>(n) * es);
  for (int64_t k = 0; k < n; ++k) {
    switch (v.type) {
      case TensorProto::FLOAT:
        Put<float>(out, k, static_cast<float>(v.f[k]));
        break;
      case TensorProto::DOUBLE:
        Put<double>(out, k, v.f[k]);
        break;
      case TensorProto::FLOAT16:
        Put<uint16_t>(out, k, FloatToHalf(static_cast<float>(v.f[k])));
        break;
      case TensorProto::BFLOAT16:
        Put<uint16_t>(out, k, FloatToBf16(static_cast<float>(v.f[k])));
        break;
      case TensorProto::INT8:
        Put<int8_t>(out, k, static_cast<int8_t>(v.i[k]));
        break;
      case TensorProto::UINT8:
      case TensorProto::BOOL:
        Put<uint8_t>(out, k, static_cast<uint8_t>(v.i[k]));
        break;
      case TensorProto::INT16:
        Put<int16_t>(out, k, static_cast<int16_t>(v.i[k]));
        break;
      case TensorProto::UINT16:
        Put<uint16_t>(out, k, static_cast<uint16_t>(v.i[k]));
        break;
      case TensorProto::INT32:
        Put<int32_t>(out, k, static_cast<int32_t>(v.i[k]));
        break;
      case TensorProto::UINT32:
        Put<uint32_t>(out, k, static_cast<uint32_t>(v.i[k]));
        break;
      case TensorProto::INT64:
        Put<int64_t>(out, k, v.i[k]);
        break;
      case TensorProto::UINT64:
        Put<uint64_t>(out, k, static_cast<uint64_t>(v.i[k]));
        break;
      default:
        break;
    }
  }
  return out;
}

// Reads the payload of a TensorProto as little-endian bytes of its element type. `has_data` is
// false for a stripped (graph-only) or externally stored tensor. Errors name the tensor.
// `bytes` may be null to validate only (no copy of large payloads).
Status ReadPayload(const TensorProto& t, const std::string& what, std::vector<uint8_t>* bytes,
                   bool* has_data) {
  *has_data = false;
  if (bytes) bytes->clear();
  Dims dims(t.dims().begin(), t.dims().end());
  for (int64_t d : dims) {
    if (d < 0)
      return InvalidArgument(what + " " + Q(t.name()) + " has a negative dimension " +
                             DimsStr(dims) + "; every dimension must be >= 1");
    if (d > kMaxBytes)
      return InvalidArgument(what + " " + Q(t.name()) + " " + DimsStr(dims) +
                             " has a dimension that is too large; check its dimensions");
  }
  auto n = NumElements(dims);
  if (!n || *n > kMaxBytes)
    return InvalidArgument(what + " " + Q(t.name()) + " " + DimsStr(dims) +
                           " has too many elements (overflow); check its dimensions");
  if (t.data_location() == TensorProto::EXTERNAL) return Status::Ok();  // weights not needed
  int32_t type = t.data_type();
  int es = ElemSize(type);
  auto count_error = [&](int64_t have) {
    return InvalidArgument(what + " " + Q(t.name()) + " has " + std::to_string(have) +
                           " values but its dimensions " + DimsStr(dims) + " need " +
                           std::to_string(*n) + "; the file is corrupt");
  };
  if (t.has_raw_data()) {
    if (es == 0) return Status::Ok();  // strings etc.: keep as "no data"
    const std::string& raw = t.raw_data();
    if (raw.size() % es != 0 || static_cast<int64_t>(raw.size() / es) != *n)
      return count_error(static_cast<int64_t>(raw.size() / es));
    if (bytes) bytes->assign(raw.begin(), raw.end());
    *has_data = true;
    return Status::Ok();
  }
  int64_t have = t.float_data_size() + t.int32_data_size() + t.int64_data_size() +
                 t.double_data_size() + t.uint64_data_size() + t.string_data_size();
  if (have == 0) {
    // Stripped, or a tensor with zero elements (whose data is legitimately empty).
    *has_data = *n == 0 && es != 0;
    return Status::Ok();
  }
  if (es == 0) return Status::Ok();
  // The typed field that holds this element type.
  int64_t count = 0;
  switch (type) {
    case TensorProto::FLOAT:
      count = t.float_data_size();
      break;
    case TensorProto::DOUBLE:
      count = t.double_data_size();
      break;
    case TensorProto::INT64:
      count = t.int64_data_size();
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      count = t.uint64_data_size();
      break;
    default:
      count = t.int32_data_size();
      break;  // 8/16/32-bit ints, bool, float16, bfloat16
  }
  if (count != *n) return count_error(count);
  *has_data = true;
  if (!bytes) return Status::Ok();
  if (type == TensorProto::FLOAT16 || type == TensorProto::BFLOAT16) {
    // Stored as raw 16-bit patterns: copy them without a float round trip.
    bytes->resize(static_cast<size_t>(*n) * 2);
    for (int64_t k = 0; k < *n; ++k)
      Put<uint16_t>(*bytes, k, static_cast<uint16_t>(t.int32_data(static_cast<int>(k))));
    return Status::Ok();
  }
  Value v;
  v.type = type;
  v.dims = dims;
  switch (type) {
    case TensorProto::FLOAT:
      v.f.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TensorProto::DOUBLE:
      v.f.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TensorProto::INT64:
      v.i.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      for (uint64_t x : t.uint64_data()) v.i.push_back(static_cast<int64_t>(x));
      break;
    default:
      v.i.assign(t.int32_data().begin(), t.int32_data().end());
      break;
  }
  for (int64_t& x : v.i) x = v.WrapInt(x);
  *bytes = EncodeBytes(v);
  return Status::Ok();
}

void ValueToTensorProto(const Value& v, const std::string& name, TensorProto* t) {
  t->Clear();
  t->set_name(name);
  t->set_data_type(v.type);
  for (int64_t d : v.dims) t->add_dims(d);
  std::vector<uint8_t> b = EncodeBytes(v);
  t->set_raw_data(std::string(b.begin(), b.end()));
}

// ---------------------------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------------------------

const AttributeProto* FindAttr(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t AttrInt(const NodeProto& n, const std::string& name, int64_t dflt) {
  const AttributeProto* a = FindAttr(n, name);
  return a && (a->type() == AttributeProto::INT || a->has_i()) ? a->i() : dflt;
}

std::optional<std::vector<int64_t>> AttrInts(const NodeProto& n, const std::string& name) {
  const AttributeProto* a = FindAttr(n, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

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

// ---------------------------------------------------------------------------------------------
// Folding: evaluation of ops on values known at import time
// ---------------------------------------------------------------------------------------------

Dims StridesOf(const Dims& d) {
  Dims s(d.size(), 1);
  for (int k = static_cast<int>(d.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * d[k + 1];
  return s;
}

// For every element of `out` (row-major), the flat index of the element of `in` it reads under
// numpy broadcasting (in is right-aligned against out).
std::vector<int64_t> BroadcastIndex(const Dims& out, const Dims& in) {
  int64_t n = *NumElements(out);
  std::vector<int64_t> idx(n, 0);
  size_t r = out.size(), ri = in.size();
  Dims in_strides = StridesOf(in);
  Dims coord(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t a = 0; a < ri; ++a) {
      int64_t c = coord[r - ri + a];
      if (in[a] != 1) off += c * in_strides[a];
    }
    idx[k] = off;
    for (int a = static_cast<int>(r) - 1; a >= 0; --a) {
      if (++coord[a] < out[a]) break;
      coord[a] = 0;
    }
  }
  return idx;
}

std::optional<Dims> Broadcast(const std::vector<const Value*>& vs) {
  Dims out;
  for (const Value* v : vs) {
    auto b = ir::BroadcastShapes(out, v->dims);
    if (!b) return std::nullopt;
    out = *b;
  }
  return out;
}

bool Small(const Dims& d) {
  auto n = NumElements(d);
  return n && *n <= kMaxFoldElements;
}

int64_t NormAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

// The evaluator. Returns false when the op cannot be folded (unknown op, too large, odd types);
// errors are real inconsistencies in the model and name the node.
class Evaluator {
 public:
  Evaluator(const NodeProto& n, const std::vector<const Value*>& in) : n_(n), in_(in) {}

  StatusOr<bool> Run(std::vector<Value>* out);

 private:
  Status Bad(const std::string& what) const {
    return InvalidArgument("node " + Q(n_.name()) + " (" + n_.op_type() + "): " + what);
  }
  const Value* In(size_t k) const { return k < in_.size() ? in_[k] : nullptr; }
  // An int list from input `k` when present, else from attribute `attr`.
  std::optional<std::vector<int64_t>> IntsArg(size_t k, const std::string& attr) const {
    if (const Value* v = In(k)) return v->Ints();
    return AttrInts(n_, attr);
  }

  StatusOr<bool> Elementwise(std::vector<Value>* out);
  StatusOr<bool> Gather(Value* out);
  StatusOr<bool> Concat(Value* out);
  StatusOr<bool> Slice(Value* out);
  StatusOr<bool> Transpose(Value* out);
  StatusOr<bool> Reduce(Value* out);
  StatusOr<bool> Tile(Value* out);

  const NodeProto& n_;
  const std::vector<const Value*>& in_;
};

StatusOr<bool> Evaluator::Run(std::vector<Value>* out) {
  const std::string& t = n_.op_type();
  const Value* x = In(0);
  out->assign(1, Value());
  Value& y = (*out)[0];
  if (t == "Identity") {
    if (!x) return false;
    y = *x;
    return true;
  }
  if (t == "Cast") {
    if (!x) return false;
    int64_t to = AttrInt(n_, "to", 0);
    if (ElemSize(static_cast<int32_t>(to)) == 0) return false;
    y.type = static_cast<int32_t>(to);
    y.dims = x->dims;
    y.Resize(x->size());
    for (int64_t k = 0; k < x->size(); ++k) {
      if (x->is_float())
        y.SetD(k, x->f[k]);
      else
        y.SetI(k, x->i[k]);
    }
    return true;
  }
  if (t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze") {
    if (!x) return false;
    Dims d = x->dims;
    int64_t r = static_cast<int64_t>(d.size());
    Dims nd;
    if (t == "Reshape") {
      const Value* s = In(1);
      if (!s) return false;
      std::vector<int64_t> spec = s->Ints();
      bool allowzero = AttrInt(n_, "allowzero", 0) != 0;
      int64_t known = 1, minus = -1;
      for (size_t k = 0; k < spec.size(); ++k) {
        int64_t v = spec[k];
        if (v == 0 && !allowzero) {
          if (static_cast<int64_t>(k) >= r) return Bad("shape entry 0 copies a missing dim");
          v = d[k];
        }
        if (v == -1) {
          if (minus >= 0) return Bad("shape has more than one -1");
          minus = static_cast<int64_t>(k);
          nd.push_back(1);
          continue;
        }
        if (v < 0) return Bad("shape entry " + std::to_string(v) + " is invalid");
        nd.push_back(v);
        auto m = CheckedMul(known, v);
        if (!m) return Bad("shape " + DimsStr(spec) + " overflows");
        known = *m;
      }
      if (minus >= 0) {
        if (known == 0 || x->size() % known != 0)
          return Bad("cannot reshape " + DimsStr(d) + " to " + DimsStr(spec));
        nd[minus] = x->size() / known;
      }
    } else if (t == "Flatten") {
      int64_t axis = NormAxis(AttrInt(n_, "axis", 1), r);
      if (axis < 0 || axis > r) return Bad("axis out of range");
      int64_t a = 1, b = 1;
      for (int64_t k = 0; k < r; ++k) (k < axis ? a : b) *= d[k];
      nd = {a, b};
    } else if (t == "Squeeze") {
      auto axes = IntsArg(1, "axes");
      std::vector<bool> drop(r, false);
      if (!axes || axes->empty()) {
        for (int64_t k = 0; k < r; ++k) drop[k] = d[k] == 1;
      } else {
        for (int64_t a : *axes) {
          a = NormAxis(a, r);
          if (a < 0 || a >= r || d[a] != 1) return Bad("cannot squeeze axis of " + DimsStr(d));
          drop[a] = true;
        }
      }
      for (int64_t k = 0; k < r; ++k)
        if (!drop[k]) nd.push_back(d[k]);
    } else {
      auto axes = IntsArg(1, "axes");
      if (!axes) return false;
      int64_t nr = r + static_cast<int64_t>(axes->size());
      std::vector<bool> ins(nr, false);
      for (int64_t a : *axes) {
        a = NormAxis(a, nr);
        if (a < 0 || a >= nr || ins[a]) return Bad("invalid unsqueeze axes");
        ins[a] = true;
      }
      size_t src = 0;
      for (int64_t k = 0; k < nr; ++k) nd.push_back(ins[k] ? 1 : d[src++]);
    }
    auto n = NumElements(nd);
    if (!n || *n != x->size()) return Bad("cannot reshape " + DimsStr(d) + " to " + DimsStr(nd));
    y = *x;
    y.dims = nd;
    return true;
  }
  if (t == "Concat") return Concat(&y);
  if (t == "Gather") return Gather(&y);
  if (t == "Slice") return Slice(&y);
  if (t == "Transpose") return Transpose(&y);
  if (t == "Tile") return Tile(&y);
  if (t == "ReduceProd" || t == "ReduceSum" || t == "ReduceMin" || t == "ReduceMax" ||
      t == "ReduceMean")
    return Reduce(&y);
  if (t == "ConstantOfShape") {
    if (!x) return false;
    Dims d = x->Ints();
    if (!Small(d)) return false;
    y.type = TensorProto::FLOAT;
    double fill = 0.0;
    if (const AttributeProto* a = FindAttr(n_, "value"); a && a->has_t()) {
      std::vector<uint8_t> bytes;
      bool has = false;
      SP_RETURN_IF_ERROR(ReadPayload(a->t(), "value of node " + Q(n_.name()), &bytes, &has));
      if (!has || ElemSize(a->t().data_type()) == 0) return false;
      Value v = DecodeBytes(a->t().data_type(), {}, bytes);
      if (v.size() != 1) return Bad("value must have one element");
      y.type = v.type;
      fill = v.D(0);
      y.dims = d;
      y.Resize(*NumElements(d));
      for (int64_t k = 0; k < y.size(); ++k) {
        if (v.is_float())
          y.SetD(k, fill);
        else
          y.SetI(k, v.i[0]);
      }
      return true;
    }
    y.dims = d;
    y.Resize(*NumElements(d));
    return true;
  }
  if (t == "Range") {
    const Value *s = In(0), *l = In(1), *dl = In(2);
    if (!s || !l || !dl || s->size() != 1 || l->size() != 1 || dl->size() != 1) return false;
    y.type = s->type;
    double start = s->D(0), limit = l->D(0), delta = dl->D(0);
    if (delta == 0) return Bad("delta is zero");
    double cnt = std::ceil((limit - start) / delta);
    int64_t n = cnt > 0 ? static_cast<int64_t>(std::min<double>(cnt, 1e12)) : 0;
    if (n > kMaxFoldElements) return false;
    y.dims = {n};
    y.Resize(n);
    for (int64_t k = 0; k < n; ++k) {
      if (s->is_float())
        y.SetD(k, start + k * delta);
      else
        y.SetI(k, static_cast<int64_t>(static_cast<uint64_t>(s->i[0]) +
                                       static_cast<uint64_t>(k) * static_cast<uint64_t>(dl->i[0])));
    }
    return true;
  }
  if (t == "Expand") {
    const Value* s = In(1);
    if (!x || !s) return false;
    Dims shape = s->Ints();
    for (int64_t d : shape)
      if (d < 0) return Bad("negative dimension in shape");
    auto b = ir::BroadcastShapes(x->dims, shape);
    if (!b) return Bad("cannot expand " + DimsStr(x->dims) + " to " + DimsStr(shape));
    if (!Small(*b)) return false;
    y.type = x->type;
    y.dims = *b;
    y.Resize(*NumElements(*b));
    std::vector<int64_t> idx = BroadcastIndex(*b, x->dims);
    for (int64_t k = 0; k < y.size(); ++k) {
      if (x->is_float())
        y.f[k] = x->f[idx[k]];
      else
        y.i[k] = x->i[idx[k]];
    }
    return true;
  }
  return Elementwise(out);
}

StatusOr<bool> Evaluator::Elementwise(std::vector<Value>* out) {
  const std::string& t = n_.op_type();
  Value& y = (*out)[0];
  static const std::set<std::string> kUnary = {"Neg",        "Abs",  "Sqrt", "Floor", "Ceil", "Not",
                                               "Reciprocal", "Relu", "Sign", "Exp",   "Log"};
  static const std::set<std::string> kBinary = {"Add",
                                                "Sub",
                                                "Mul",
                                                "Div",
                                                "Pow",
                                                "Mod",
                                                "Equal",
                                                "Less",
                                                "Greater",
                                                "LessOrEqual",
                                                "GreaterOrEqual",
                                                "And",
                                                "Or",
                                                "Xor",
                                                "Max",
                                                "Min",
                                                "Where",
                                                "Sum"};
  bool unary = kUnary.count(t) > 0;
  if (!unary && !kBinary.count(t)) return false;
  std::vector<const Value*> args;
  for (const Value* v : in_) {
    if (!v) return false;
    args.push_back(v);
  }
  if (args.empty() || (unary && args.size() != 1)) return false;
  if (t == "Where" && args.size() != 3) return false;
  if (!unary && t != "Where" && t != "Max" && t != "Min" && t != "Sum" && args.size() != 2)
    return false;
  auto shape = Broadcast(args);
  if (!shape) {
    std::string s;
    for (const Value* v : args) s += DimsStr(v->dims) + " ";
    return Bad("shapes " + s + "do not broadcast");
  }
  if (!Small(*shape)) return false;
  int64_t n = *NumElements(*shape);
  std::vector<std::vector<int64_t>> idx;
  for (const Value* v : args) idx.push_back(BroadcastIndex(*shape, v->dims));
  const Value& a = *args[0];
  bool cmp = t == "Equal" || t == "Less" || t == "Greater" || t == "LessOrEqual" ||
             t == "GreaterOrEqual" || t == "And" || t == "Or" || t == "Xor" || t == "Not";
  y.type = cmp ? static_cast<int32_t>(TensorProto::BOOL) : (t == "Where" ? args[1]->type : a.type);
  y.dims = *shape;
  y.Resize(n);
  bool fl = a.is_float();
  bool fmod = AttrInt(n_, "fmod", 0) != 0;
  for (int64_t k = 0; k < n; ++k) {
    if (t == "Where") {
      const Value& c = *args[0];
      const Value& src = c.I(idx[0][k]) ? *args[1] : *args[2];
      int64_t j = c.I(idx[0][k]) ? idx[1][k] : idx[2][k];
      if (src.is_float())
        y.SetD(k, src.D(j));
      else
        y.SetI(k, src.I(j));
      continue;
    }
    if (unary) {
      int64_t j = idx[0][k];
      if (fl || t == "Sqrt" || t == "Exp" || t == "Log" || t == "Reciprocal") {
        double v = a.D(j), r = v;
        if (t == "Neg")
          r = -v;
        else if (t == "Abs")
          r = std::fabs(v);
        else if (t == "Sqrt")
          r = std::sqrt(v);
        else if (t == "Floor")
          r = std::floor(v);
        else if (t == "Ceil")
          r = std::ceil(v);
        else if (t == "Not")
          r = v == 0;
        else if (t == "Reciprocal")
          r = 1.0 / v;
        else if (t == "Relu")
          r = v > 0 ? v : 0;
        else if (t == "Sign")
          r = (v > 0) - (v < 0);
        else if (t == "Exp")
          r = std::exp(v);
        else if (t == "Log")
          r = std::log(v);
        y.SetD(k, r);
      } else {
        int64_t v = a.I(j), r = v;
        if (t == "Neg")
          r = v == INT64_MIN ? v : -v;
        else if (t == "Abs")
          r = v < 0 && v != INT64_MIN ? -v : v;
        else if (t == "Not")
          r = v == 0;
        else if (t == "Relu")
          r = v > 0 ? v : 0;
        else if (t == "Sign")
          r = (v > 0) - (v < 0);
        y.SetI(k, r);
      }
      continue;
    }
    if (t == "Max" || t == "Min" || t == "Sum") {
      double acc = a.D(idx[0][k]);
      int64_t iacc = a.I(idx[0][k]);
      for (size_t m = 1; m < args.size(); ++m) {
        double v = args[m]->D(idx[m][k]);
        int64_t iv = args[m]->I(idx[m][k]);
        if (t == "Max") {
          acc = std::max(acc, v);
          iacc = std::max(iacc, iv);
        } else if (t == "Min") {
          acc = std::min(acc, v);
          iacc = std::min(iacc, iv);
        } else {
          acc += v;
          iacc = static_cast<int64_t>(static_cast<uint64_t>(iacc) + static_cast<uint64_t>(iv));
        }
      }
      if (fl)
        y.SetD(k, acc);
      else
        y.SetI(k, iacc);
      continue;
    }
    const Value& b = *args[1];
    int64_t ja = idx[0][k], jb = idx[1][k];
    if (fl || b.is_float()) {
      double u = a.D(ja), v = b.D(jb), r = 0;
      if (t == "Add")
        r = u + v;
      else if (t == "Sub")
        r = u - v;
      else if (t == "Mul")
        r = u * v;
      else if (t == "Div")
        r = u / v;
      else if (t == "Pow")
        r = std::pow(u, v);
      else if (t == "Mod")
        r = fmod ? std::fmod(u, v) : u - std::floor(u / v) * v;
      else if (t == "Equal")
        r = u == v;
      else if (t == "Less")
        r = u < v;
      else if (t == "Greater")
        r = u > v;
      else if (t == "LessOrEqual")
        r = u <= v;
      else if (t == "GreaterOrEqual")
        r = u >= v;
      else if (t == "And")
        r = (u != 0) && (v != 0);
      else if (t == "Or")
        r = (u != 0) || (v != 0);
      else if (t == "Xor")
        r = (u != 0) != (v != 0);
      y.SetD(k, r);
    } else {
      int64_t u = a.I(ja), v = b.I(jb), r = 0;
      if (t == "Add")
        r = static_cast<int64_t>(static_cast<uint64_t>(u) + static_cast<uint64_t>(v));
      else if (t == "Sub")
        r = static_cast<int64_t>(static_cast<uint64_t>(u) - static_cast<uint64_t>(v));
      else if (t == "Mul")
        r = static_cast<int64_t>(static_cast<uint64_t>(u) * static_cast<uint64_t>(v));
      else if (t == "Div" || t == "Mod") {
        if (v == 0) return Bad("integer division by zero");
        if (u == INT64_MIN && v == -1)
          r = t == "Div" ? INT64_MIN : 0;
        else if (t == "Div")
          r = u / v;  // truncation, as ONNX Runtime
        else {
          r = u % v;
          if (!fmod && r != 0 && ((r < 0) != (v < 0))) r += v;  // sign of the divisor
        }
      } else if (t == "Pow")
        r = SaturatingInt(std::pow(static_cast<double>(u), static_cast<double>(v)));
      else if (t == "Equal")
        r = u == v;
      else if (t == "Less")
        r = u < v;
      else if (t == "Greater")
        r = u > v;
      else if (t == "LessOrEqual")
        r = u <= v;
      else if (t == "GreaterOrEqual")
        r = u >= v;
      else if (t == "And")
        r = (u != 0) && (v != 0);
      else if (t == "Or")
        r = (u != 0) || (v != 0);
      else if (t == "Xor")
        r = (u != 0) != (v != 0);
      y.SetI(k, r);
    }
  }
  return true;
}

StatusOr<bool> Evaluator::Gather(Value* out) {
  const Value *x = In(0), *ind = In(1);
  if (!x || !ind) return false;
  int64_t r = static_cast<int64_t>(x->dims.size());
  if (r == 0) return Bad("cannot gather from a scalar");
  int64_t axis = NormAxis(AttrInt(n_, "axis", 0), r);
  if (axis < 0 || axis >= r) return Bad("axis out of range");
  Dims od(x->dims.begin(), x->dims.begin() + axis);
  od.insert(od.end(), ind->dims.begin(), ind->dims.end());
  od.insert(od.end(), x->dims.begin() + axis + 1, x->dims.end());
  if (!Small(od)) return false;
  int64_t outer = 1, inner = 1, dim = x->dims[axis];
  for (int64_t k = 0; k < axis; ++k) outer *= x->dims[k];
  for (int64_t k = axis + 1; k < r; ++k) inner *= x->dims[k];
  out->type = x->type;
  out->dims = od;
  out->Resize(*NumElements(od));
  int64_t ni = ind->size(), pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t q = 0; q < ni; ++q) {
      int64_t j = ind->I(q);
      if (j < 0) j += dim;
      if (j < 0 || j >= dim)
        return Bad("index " + std::to_string(ind->I(q)) + " is out of range for dimension " +
                   std::to_string(dim));
      for (int64_t in = 0; in < inner; ++in, ++pos) {
        int64_t src = (o * dim + j) * inner + in;
        if (x->is_float())
          out->f[pos] = x->f[src];
        else
          out->i[pos] = x->i[src];
      }
    }
  }
  return true;
}

StatusOr<bool> Evaluator::Concat(Value* out) {
  if (in_.empty()) return false;
  for (const Value* v : in_)
    if (!v) return false;
  const Value& a = *in_[0];
  int64_t r = static_cast<int64_t>(a.dims.size());
  if (r == 0) return Bad("cannot concatenate scalars");
  int64_t axis = NormAxis(AttrInt(n_, "axis", 0), r);
  if (axis < 0 || axis >= r) return Bad("axis out of range");
  Dims od = a.dims;
  od[axis] = 0;
  for (const Value* v : in_) {
    if (static_cast<int64_t>(v->dims.size()) != r || v->type != a.type)
      return Bad("inputs differ in rank or type");
    for (int64_t k = 0; k < r; ++k)
      if (k != axis && v->dims[k] != a.dims[k]) return Bad("inputs differ off the concat axis");
    od[axis] += v->dims[axis];
  }
  if (!Small(od)) return false;
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= od[k];
  out->type = a.type;
  out->dims = od;
  out->Resize(*NumElements(od));
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Value* v : in_) {
      int64_t chunk = v->size() / std::max<int64_t>(outer, 1);
      for (int64_t c = 0; c < chunk; ++c, ++pos) {
        if (a.is_float())
          out->f[pos] = v->f[o * chunk + c];
        else
          out->i[pos] = v->i[o * chunk + c];
      }
    }
  }
  return true;
}

StatusOr<bool> Evaluator::Slice(Value* out) {
  const Value* x = In(0);
  if (!x) return false;
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (n_.input_size() > 1) {  // opset >= 10: inputs
    if (!In(1) || !In(2)) return false;
    starts = In(1)->Ints();
    ends = In(2)->Ints();
    if (n_.input_size() > 3 && !n_.input(3).empty()) {
      if (!In(3)) return false;
      axes = In(3)->Ints();
    }
    if (n_.input_size() > 4 && !n_.input(4).empty()) {
      if (!In(4)) return false;
      steps = In(4)->Ints();
    }
  } else {
    starts = AttrInts(n_, "starts");
    ends = AttrInts(n_, "ends");
    axes = AttrInts(n_, "axes");
  }
  if (!starts || !ends || starts->size() != ends->size())
    return Bad("starts/ends are inconsistent");
  int64_t r = static_cast<int64_t>(x->dims.size());
  size_t m = starts->size();
  if (!axes) {
    axes.emplace();
    for (size_t k = 0; k < m; ++k) axes->push_back(static_cast<int64_t>(k));
  }
  if (!steps) steps = std::vector<int64_t>(m, 1);
  if (axes->size() != m || steps->size() != m) return Bad("axes/steps have the wrong length");
  Dims begin(r, 0), step(r, 1), od = x->dims;
  for (size_t k = 0; k < m; ++k) {
    int64_t a = NormAxis((*axes)[k], r);
    if (a < 0 || a >= r) return Bad("axis out of range");
    int64_t d = x->dims[a], s = (*starts)[k], e = (*ends)[k], st = (*steps)[k];
    if (st == 0) return Bad("step is zero");
    if (s < 0) s += d;
    if (e < 0) e += d;
    int64_t cnt;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      cnt = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      cnt = s > e ? (s - e - 1) / (st == INT64_MIN ? INT64_MAX : -st) + 1 : 0;
    }
    begin[a] = s;
    step[a] = st;
    od[a] = cnt;
  }
  if (!Small(od)) return false;
  out->type = x->type;
  out->dims = od;
  int64_t n = *NumElements(od);
  out->Resize(n);
  Dims xs = StridesOf(x->dims);
  Dims coord(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += (begin[a] + coord[a] * step[a]) * xs[a];
    if (x->is_float())
      out->f[k] = x->f[src];
    else
      out->i[k] = x->i[src];
    for (int64_t a = r - 1; a >= 0; --a) {
      if (++coord[a] < od[a]) break;
      coord[a] = 0;
    }
  }
  return true;
}

StatusOr<bool> Evaluator::Transpose(Value* out) {
  const Value* x = In(0);
  if (!x) return false;
  int64_t r = static_cast<int64_t>(x->dims.size());
  std::vector<int64_t> perm = AttrInts(n_, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (int64_t k = r - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int64_t>(perm.size()) != r) return Bad("perm has the wrong length");
  Dims od(r);
  for (int64_t k = 0; k < r; ++k) {
    if (perm[k] < 0 || perm[k] >= r) return Bad("perm entry out of range");
    od[k] = x->dims[perm[k]];
  }
  out->type = x->type;
  out->dims = od;
  out->Resize(x->size());
  Dims xs = StridesOf(x->dims);
  Dims coord(r, 0);
  for (int64_t k = 0; k < x->size(); ++k) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += coord[a] * xs[perm[a]];
    if (x->is_float())
      out->f[k] = x->f[src];
    else
      out->i[k] = x->i[src];
    for (int64_t a = r - 1; a >= 0; --a) {
      if (++coord[a] < od[a]) break;
      coord[a] = 0;
    }
  }
  return true;
}

StatusOr<bool> Evaluator::Tile(Value* out) {
  const Value *x = In(0), *rep = In(1);
  if (!x || !rep) return false;
  std::vector<int64_t> reps = rep->Ints();
  int64_t r = static_cast<int64_t>(x->dims.size());
  if (static_cast<int64_t>(reps.size()) != r) return Bad("repeats has the wrong length");
  Dims od(r);
  for (int64_t k = 0; k < r; ++k) {
    if (reps[k] < 0) return Bad("negative repeat");
    auto m = CheckedMul(x->dims[k], reps[k]);
    if (!m) return false;
    od[k] = *m;
  }
  if (!Small(od)) return false;
  out->type = x->type;
  out->dims = od;
  int64_t n = *NumElements(od);
  out->Resize(n);
  Dims xs = StridesOf(x->dims);
  Dims coord(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += (coord[a] % x->dims[a]) * xs[a];
    if (x->is_float())
      out->f[k] = x->f[src];
    else
      out->i[k] = x->i[src];
    for (int64_t a = r - 1; a >= 0; --a) {
      if (++coord[a] < od[a]) break;
      coord[a] = 0;
    }
  }
  return true;
}

StatusOr<bool> Evaluator::Reduce(Value* out) {
  const std::string& t = n_.op_type();
  const Value* x = In(0);
  if (!x) return false;
  int64_t r = static_cast<int64_t>(x->dims.size());
  auto axes = IntsArg(1, "axes");
  bool keep = AttrInt(n_, "keepdims", 1) != 0;
  std::vector<bool> red(r, false);
  if (!axes || axes->empty()) {
    if (AttrInt(n_, "noop_with_empty_axes", 0)) {
      *out = *x;
      return true;
    }
    std::fill(red.begin(), red.end(), true);
  } else {
    for (int64_t a : *axes) {
      a = NormAxis(a, r);
      if (a < 0 || a >= r) return Bad("axis out of range");
      red[a] = true;
    }
  }
  Dims od, kd;  // od: output dims; kd: dims with reduced axes kept as 1
  for (int64_t k = 0; k < r; ++k) {
    kd.push_back(red[k] ? 1 : x->dims[k]);
    if (!red[k])
      od.push_back(x->dims[k]);
    else if (keep)
      od.push_back(1);
  }
  int64_t n = *NumElements(kd);
  out->type = x->type;
  out->dims = od;
  out->Resize(n);
  std::vector<double> acc(n, t == "ReduceProd" ? 1.0 : 0.0);
  std::vector<bool> seen(n, false);
  std::vector<int64_t> cnt(n, 0);
  Dims ks = StridesOf(kd);
  Dims coord(r, 0);
  for (int64_t k = 0; k < x->size(); ++k) {
    int64_t dst = 0;
    for (int64_t a = 0; a < r; ++a)
      if (!red[a]) dst += coord[a] * ks[a];
    double v = x->D(k);
    if (t == "ReduceProd")
      acc[dst] *= v;
    else if (t == "ReduceSum" || t == "ReduceMean")
      acc[dst] += v;
    else if (!seen[dst])
      acc[dst] = v;
    else if (t == "ReduceMin")
      acc[dst] = std::min(acc[dst], v);
    else
      acc[dst] = std::max(acc[dst], v);
    seen[dst] = true;
    ++cnt[dst];
    for (int64_t a = r - 1; a >= 0; --a) {
      if (++coord[a] < x->dims[a]) break;
      coord[a] = 0;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    double v = acc[k];
    if (t == "ReduceMean" && cnt[k]) v /= static_cast<double>(cnt[k]);
    out->SetD(k, v);
  }
  return true;
}

// Ops the evaluator may fold when all their inputs are known.
bool IsFoldable(const std::string& t) {
  static const std::set<std::string> kFoldable = {"Identity",
                                                  "Cast",
                                                  "Reshape",
                                                  "Flatten",
                                                  "Squeeze",
                                                  "Unsqueeze",
                                                  "Concat",
                                                  "Gather",
                                                  "Slice",
                                                  "Transpose",
                                                  "Tile",
                                                  "ReduceProd",
                                                  "ReduceSum",
                                                  "ReduceMin",
                                                  "ReduceMax",
                                                  "ReduceMean",
                                                  "ConstantOfShape",
                                                  "Range",
                                                  "Expand",
                                                  "Neg",
                                                  "Abs",
                                                  "Sqrt",
                                                  "Floor",
                                                  "Ceil",
                                                  "Not",
                                                  "Reciprocal",
                                                  "Relu",
                                                  "Sign",
                                                  "Exp",
                                                  "Log",
                                                  "Add",
                                                  "Sub",
                                                  "Mul",
                                                  "Div",
                                                  "Pow",
                                                  "Mod",
                                                  "Equal",
                                                  "Less",
                                                  "Greater",
                                                  "LessOrEqual",
                                                  "GreaterOrEqual",
                                                  "And",
                                                  "Or",
                                                  "Xor",
                                                  "Max",
                                                  "Min",
                                                  "Where",
                                                  "Sum",
                                                  "Shape",
                                                  "Size",
                                                  "Dropout"};
  return kFoldable.count(t) > 0;
}

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

Status Importer::BindBatch() {
  if (options_.batch <= 0)
    return InvalidArgument("batch must be >= 1 (got " + std::to_string(options_.batch) + ")");
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
    } else if (a->name() == "value_float") {
      t->set_data_type(TensorProto::FLOAT);
      t->add_float_data(a->f());
    } else if (a->name() == "value_floats") {
      t->set_data_type(TensorProto::FLOAT);
      t->add_dims(a->floats_size());
      for (float v : a->floats()) t->add_float_data(v);
    } else if (a->name() == "value_int") {
      t->set_data_type(TensorProto::INT64);
      t->add_int64_data(a->i());
    } else if (a->name() == "value_ints") {
      t->set_data_type(TensorProto::INT64);
      t->add_dims(a->ints_size());
      for (int64_t v : a->ints()) t->add_int64_data(v);
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
    Evaluator ev(node, in);
    SP_ASSIGN_OR_RETURN(bool ok, ev.Run(&outs));
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

}  // namespace

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
      "ReduceMax", "ReduceMin", "ReduceProd",
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
