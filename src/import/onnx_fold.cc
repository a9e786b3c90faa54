// The import-time constant folder: evaluates ops (shape arithmetic, small element-wise
// computations, data movement) whose inputs are all known. Part of the ONNX importer (see
// onnx_internal.h).
#include <cmath>
#include <optional>
#include <set>

#include "import/onnx_internal.h"
#include "ir/shape_inference.h"
#include "support/int_math.h"
#include "support/strings.h"

namespace sramplan::import::onnx_internal {

// ---------------------------------------------------------------------------------------------
// Folding: evaluation of ops on values known at import time
// ---------------------------------------------------------------------------------------------

bool Small(const Dims& d) {
  auto n = NumElements(d);
  return n && *n <= kMaxFoldElements;
}

namespace {

Dims StridesOf(const Dims& d) {
  Dims s(d.size(), 1);
  for (int k = static_cast<int>(d.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * d[k + 1];
  return s;
}

// Calls f(k, coord) for the first n elements k of a tensor of dims d in row-major order, coord
// being k's coordinates.
template <typename F>
void ForEachCoord(const Dims& d, int64_t n, F f) {
  Dims coord(d.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(k, static_cast<const Dims&>(coord));
    for (int64_t a = static_cast<int64_t>(d.size()) - 1; a >= 0; --a) {
      if (++coord[a] < d[a]) break;
      coord[a] = 0;
    }
  }
}

// out = n elements of x rearranged into dims od: element k, at coordinates coord, is x's element
// at the flat index src(coord).
template <typename Src>
void GatherElements(const Value& x, const Dims& od, int64_t n, Value* out, Src src) {
  out->type = x.type;
  out->dims = od;
  out->Resize(n);
  ForEachCoord(od, n, [&](int64_t k, const Dims& coord) {
    const int64_t from = src(coord);
    if (x.is_float())
      out->f[k] = x.f[from];
    else
      out->i[k] = x.i[from];
  });
}

// For every element of `out` (row-major), the flat index of the element of `in` it reads under
// numpy broadcasting (in is right-aligned against out).
std::vector<int64_t> BroadcastIndex(const Dims& out, const Dims& in) {
  int64_t n = *NumElements(out);
  std::vector<int64_t> idx(n, 0);
  size_t r = out.size(), ri = in.size();
  Dims in_strides = StridesOf(in);
  ForEachCoord(out, n, [&](int64_t k, const Dims& coord) {
    int64_t off = 0;
    for (size_t a = 0; a < ri; ++a) {
      int64_t c = coord[r - ri + a];
      if (in[a] != 1) off += c * in_strides[a];
    }
    idx[k] = off;
  });
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

  StatusOr<bool> Cast(Value* out);
  StatusOr<bool> View(Value* out);
  StatusOr<bool> ConstantOfShape(Value* out);
  StatusOr<bool> Range(Value* out);
  StatusOr<bool> Expand(Value* out);
  StatusOr<bool> Elementwise(std::vector<Value>* out);
  StatusOr<int64_t> BinaryInt(const std::string& t, int64_t u, int64_t v, bool fmod) const;
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
  if (t == "Cast") return Cast(&y);
  if (t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze") return View(&y);
  if (t == "Concat") return Concat(&y);
  if (t == "Gather") return Gather(&y);
  if (t == "Slice") return Slice(&y);
  if (t == "Transpose") return Transpose(&y);
  if (t == "Tile") return Tile(&y);
  if (t == "ReduceProd" || t == "ReduceSum" || t == "ReduceMin" || t == "ReduceMax" ||
      t == "ReduceMean")
    return Reduce(&y);
  if (t == "ConstantOfShape") return ConstantOfShape(&y);
  if (t == "Range") return Range(&y);
  if (t == "Expand") return Expand(&y);
  return Elementwise(out);
}

StatusOr<bool> Evaluator::Cast(Value* out) {
  const Value* x = In(0);
  Value& y = *out;
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

// Reshape, Flatten, Squeeze and Unsqueeze: the data unchanged under new dims.
StatusOr<bool> Evaluator::View(Value* out) {
  const std::string& t = n_.op_type();
  const Value* x = In(0);
  Value& y = *out;
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

StatusOr<bool> Evaluator::ConstantOfShape(Value* out) {
  const Value* x = In(0);
  Value& y = *out;
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

StatusOr<bool> Evaluator::Range(Value* out) {
  Value& y = *out;
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

StatusOr<bool> Evaluator::Expand(Value* out) {
  const Value* x = In(0);
  Value& y = *out;
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

// Unary element-wise ops on a floating value (and Sqrt/Exp/Log/Reciprocal of any value).
double UnaryFloat(const std::string& t, double v) {
  double r = v;
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
  return r;
}

// Unary element-wise ops on an integer or bool value.
int64_t UnaryInt(const std::string& t, int64_t v) {
  int64_t r = v;
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
  return r;
}

// The comparison and logical binary ops, alike on floats and integers (1 true, 0 false); nullopt
// for the other ops.
template <typename T>
std::optional<T> CompareOrLogic(const std::string& t, T u, T v) {
  bool r;
  if (t == "Equal")
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
  else
    return std::nullopt;
  return static_cast<T>(r);
}

// Binary element-wise ops when either operand is floating. `fmod`: Mod's attribute.
double BinaryFloat(const std::string& t, double u, double v, bool fmod) {
  if (std::optional<double> c = CompareOrLogic(t, u, v)) return *c;
  double r = 0;
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
  return r;
}

// Binary element-wise ops on integers (wrapping as int64; division truncates, as ONNX Runtime).
StatusOr<int64_t> Evaluator::BinaryInt(const std::string& t, int64_t u, int64_t v,
                                       bool fmod) const {
  if (std::optional<int64_t> c = CompareOrLogic(t, u, v)) return *c;
  int64_t r = 0;
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
  return r;
}

// The element-wise ops Evaluator::Elementwise folds (IsFoldable lists them with the others).
const std::set<std::string>& UnaryElementwiseOps() {
  static const std::set<std::string> kUnary = {"Neg",        "Abs",  "Sqrt", "Floor", "Ceil", "Not",
                                               "Reciprocal", "Relu", "Sign", "Exp",   "Log"};
  return kUnary;
}

const std::set<std::string>& BinaryElementwiseOps() {
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
  return kBinary;
}

StatusOr<bool> Evaluator::Elementwise(std::vector<Value>* out) {
  const std::string& t = n_.op_type();
  Value& y = (*out)[0];
  bool unary = UnaryElementwiseOps().count(t) > 0;
  if (!unary && !BinaryElementwiseOps().count(t)) return false;
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
      if (fl || t == "Sqrt" || t == "Exp" || t == "Log" || t == "Reciprocal")
        y.SetD(k, UnaryFloat(t, a.D(j)));
      else
        y.SetI(k, UnaryInt(t, a.I(j)));
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
      y.SetD(k, BinaryFloat(t, a.D(ja), b.D(jb), fmod));
    } else {
      SP_ASSIGN_OR_RETURN(int64_t r, BinaryInt(t, a.I(ja), b.I(jb), fmod));
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
  Dims xs = StridesOf(x->dims);
  GatherElements(*x, od, *NumElements(od), out, [&](const Dims& coord) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += (begin[a] + coord[a] * step[a]) * xs[a];
    return src;
  });
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
  Dims xs = StridesOf(x->dims);
  GatherElements(*x, od, x->size(), out, [&](const Dims& coord) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += coord[a] * xs[perm[a]];
    return src;
  });
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
  Dims xs = StridesOf(x->dims);
  GatherElements(*x, od, *NumElements(od), out, [&](const Dims& coord) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += (coord[a] % x->dims[a]) * xs[a];
    return src;
  });
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
  ForEachCoord(x->dims, x->size(), [&](int64_t k, const Dims& coord) {
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
  });
  for (int64_t k = 0; k < n; ++k) {
    double v = acc[k];
    if (t == "ReduceMean" && cnt[k]) v /= static_cast<double>(cnt[k]);
    out->SetD(k, v);
  }
  return true;
}

}  // namespace

StatusOr<bool> EvaluateNode(const NodeProto& n, const std::vector<const Value*>& in,
                            std::vector<Value>* out) {
  Evaluator ev(n, in);
  return ev.Run(out);
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
                                                  "Shape",
                                                  "Size",
                                                  "Dropout"};
  return kFoldable.count(t) > 0 || UnaryElementwiseOps().count(t) > 0 ||
         BinaryElementwiseOps().count(t) > 0;
}

}  // namespace sramplan::import::onnx_internal
