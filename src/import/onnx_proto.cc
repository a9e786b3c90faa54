// ONNX protobuf reading: element types, tensor payloads (TensorProto <-> Value) and node
// attributes. Part of the ONNX importer (see onnx_internal.h).
#include <bit>
#include <cstring>
#include <utility>

#include "import/onnx_internal.h"
#include "support/int_math.h"
#include "support/strings.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the ONNX importer copies tensor payloads as little-endian bytes");

namespace sramplan::import::onnx_internal {

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
  static constexpr std::pair<int32_t, ir::DataType> kIrTypes[] = {
      {TensorProto::FLOAT, ir::DataType::kFloat32}, {TensorProto::FLOAT16, ir::DataType::kFloat16},
      {TensorProto::INT8, ir::DataType::kInt8},     {TensorProto::UINT8, ir::DataType::kUInt8},
      {TensorProto::INT16, ir::DataType::kInt16},   {TensorProto::INT32, ir::DataType::kInt32},
      {TensorProto::INT64, ir::DataType::kInt64},   {TensorProto::BOOL, ir::DataType::kBool},
  };
  for (const auto& [onnx_type, ir_type] : kIrTypes)
    if (onnx_type == t) return ir_type;
  return std::nullopt;
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
  return std::bit_cast<float>(bits);
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
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
  return std::bit_cast<float>(bits);
}

uint16_t FloatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
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

namespace {

template <typename T>
void Put(std::vector<uint8_t>& out, size_t k, T x) {
  std::memcpy(out.data() + k * sizeof(T), &x, sizeof(T));
}

template <typename T>
T Load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

// How one element of a type moves between its little-endian bytes and a Value: through the
// Value's doubles (f) for the floating types, its int64s (i) for the others.
struct ElemCodec {
  int32_t type;
  void (*decode)(const uint8_t* p, Value& v, int64_t k);
  void (*encode)(const Value& v, int64_t k, std::vector<uint8_t>& out);
};

template <typename T>
void DecodeFloat(const uint8_t* p, Value& v, int64_t k) {
  v.f[k] = Load<T>(p);
}
template <typename T>
void EncodeFloat(const Value& v, int64_t k, std::vector<uint8_t>& out) {
  Put<T>(out, k, static_cast<T>(v.f[k]));
}
template <typename T>
void DecodeInt(const uint8_t* p, Value& v, int64_t k) {
  v.i[k] = static_cast<int64_t>(Load<T>(p));
}
template <typename T>
void EncodeInt(const Value& v, int64_t k, std::vector<uint8_t>& out) {
  Put<T>(out, k, static_cast<T>(v.i[k]));
}

constexpr ElemCodec kCodecs[] = {
    {TensorProto::FLOAT, DecodeFloat<float>, EncodeFloat<float>},
    {TensorProto::DOUBLE, DecodeFloat<double>, EncodeFloat<double>},
    {TensorProto::FLOAT16,
     [](const uint8_t* p, Value& v, int64_t k) { v.f[k] = HalfToFloat(Load<uint16_t>(p)); },
     [](const Value& v, int64_t k, std::vector<uint8_t>& out) {
       Put<uint16_t>(out, k, FloatToHalf(static_cast<float>(v.f[k])));
     }},
    {TensorProto::BFLOAT16,
     [](const uint8_t* p, Value& v, int64_t k) { v.f[k] = Bf16ToFloat(Load<uint16_t>(p)); },
     [](const Value& v, int64_t k, std::vector<uint8_t>& out) {
       Put<uint16_t>(out, k, FloatToBf16(static_cast<float>(v.f[k])));
     }},
    {TensorProto::INT8, DecodeInt<int8_t>, EncodeInt<int8_t>},
    {TensorProto::UINT8, DecodeInt<uint8_t>, EncodeInt<uint8_t>},
    {TensorProto::BOOL, [](const uint8_t* p, Value& v, int64_t k) { v.i[k] = *p != 0; },
     EncodeInt<uint8_t>},
    {TensorProto::INT16, DecodeInt<int16_t>, EncodeInt<int16_t>},
    {TensorProto::UINT16, DecodeInt<uint16_t>, EncodeInt<uint16_t>},
    {TensorProto::INT32, DecodeInt<int32_t>, EncodeInt<int32_t>},
    {TensorProto::UINT32, DecodeInt<uint32_t>, EncodeInt<uint32_t>},
    {TensorProto::INT64, DecodeInt<int64_t>, EncodeInt<int64_t>},
    {TensorProto::UINT64, DecodeInt<uint64_t>, EncodeInt<uint64_t>},
};

// The codec of `type`, or null (string, complex, undefined: never decoded).
const ElemCodec* CodecOf(int32_t type) {
  for (const ElemCodec& c : kCodecs)
    if (c.type == type) return &c;
  return nullptr;
}

}  // namespace

// Little-endian payload bytes -> Value. `bytes` has numel * ElemSize(type) bytes.
Value DecodeBytes(int32_t type, const Dims& dims, const std::vector<uint8_t>& bytes) {
  Value v;
  v.type = type;
  v.dims = dims;
  int es = ElemSize(type);
  int64_t n = es ? static_cast<int64_t>(bytes.size()) / es : 0;
  v.Resize(n);
  const ElemCodec* codec = CodecOf(type);
  const uint8_t* p = bytes.data();
  for (int64_t k = 0; codec && k < n; ++k, p += es) codec->decode(p, v, k);
  return v;
}

// Value -> little-endian payload bytes in its element type.
std::vector<uint8_t> EncodeBytes(const Value& v) {
  int es = ElemSize(v.type);
  int64_t n = v.size();
  std::vector<uint8_t> out(static_cast<size_t>(n) * es);
  const ElemCodec* codec = CodecOf(v.type);
  for (int64_t k = 0; codec && k < n; ++k) codec->encode(v, k, out);
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

}  // namespace sramplan::import::onnx_internal
