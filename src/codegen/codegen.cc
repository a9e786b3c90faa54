#include "codegen/codegen.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "exec/executor.h"
#include "exec/kernels.h"
#include "exec/lower_step.h"
#include "sramplan_rt_seg.h"
#include "support/strings.h"

#ifndef SRAMPLAN_RUNTIME_DIR
#define SRAMPLAN_RUNTIME_DIR "runtime"
#endif

namespace sramplan::codegen {
namespace {

// QEMU's mps2 boards (AN385/AN386/AN500): 4 MiB of code SSRAM at 0x00000000 and 4 MiB of data
// SSRAM at 0x20000000; link.ld's regions must stay inside them.
constexpr int64_t kQemuFlashOrigin = 0x00000000;
constexpr int64_t kQemuRamOrigin = 0x20000000;
constexpr int64_t kQemuRegionBytes = 4 << 20;

// The runtime files a firmware project carries: the MCU-safe sources runtime/CMakeLists.txt lists
// in SRAMPLAN_RUNTIME_MCU_SOURCES (read from there, so a kernel added to the runtime is copied too)
// and the headers they include.
const char* const kRuntimeHeaders[] = {"include/sramplan_rt.h", "include/sramplan_rt_int8.h",
                                       "src/sp_internal.h"};
const char* const kDefaultRuntimeSources[] = {
    "src/sramplan_rt_common.c",  "src/sramplan_rt_move.c",    "src/sramplan_rt_requant.c",
    "src/sramplan_rt_conv_s8.c", "src/sramplan_rt_pool_s8.c", "src/sramplan_rt_elementwise_s8.c"};

struct RuntimeFiles {
  std::vector<std::string> headers;  // relative to the runtime directory
  std::vector<std::string> sources;
};

StatusOr<RuntimeFiles> ListRuntime(const std::string& dir) {
  RuntimeFiles r;
  std::string cmake, error;
  if (ReadFileToString(dir + "/CMakeLists.txt", &cmake, &error)) {
    const size_t at = cmake.find("set(SRAMPLAN_RUNTIME_MCU_SOURCES");
    const size_t end = at == std::string::npos ? at : cmake.find(')', at);
    if (end != std::string::npos) {
      const std::string list = cmake.substr(at, end - at);
      const std::string key = "${CMAKE_CURRENT_SOURCE_DIR}/";
      for (size_t i = 0; (i = list.find(key, i)) != std::string::npos;) {
        i += key.size();
        size_t j = i;
        while (j < list.size() && !std::isspace(static_cast<unsigned char>(list[j]))) ++j;
        r.sources.push_back(list.substr(i, j - i));
        i = j;
      }
    }
  }
  if (r.sources.empty())
    r.sources.assign(std::begin(kDefaultRuntimeSources), std::end(kDefaultRuntimeSources));
  r.headers.assign(std::begin(kRuntimeHeaders), std::end(kRuntimeHeaders));
  // Every runtime header an MCU source includes (e.g. a segment-aware kernel's own header).
  for (const std::string& src : r.sources) {
    std::string text;
    if (!ReadFileToString(dir + "/" + src, &text, &error))
      return NotFound("the runtime source '" + dir + "/" + src + "' is missing (" + error +
                      "); point codegen at the runtime/ directory");
    for (size_t i = 0; (i = text.find("#include \"", i)) != std::string::npos;) {
      i += 10;
      const size_t j = text.find('"', i);
      if (j == std::string::npos) break;
      const std::string h = text.substr(i, j - i);
      i = j;
      for (const char* sub : {"include/", "src/"}) {
        const std::string rel = sub + h;
        if (std::filesystem::exists(dir + "/" + rel) &&
            std::find(r.headers.begin(), r.headers.end(), rel) == r.headers.end())
          r.headers.push_back(rel);
      }
    }
  }
  return r;
}

std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string Str(int64_t v) {
  // INT64/INT32 minimum cannot be written as a literal; the others print as they are.
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  if (v > INT32_MAX || v < INT32_MIN) return std::to_string(v) + "LL";
  return std::to_string(v);
}

std::string Hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// A C identifier from a model name.
std::string Identifier(const std::string& name) {
  std::string r;
  for (char c : name) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

// Safe inside a C block comment.
std::string Comment(const std::string& s) {
  std::string r = s;
  for (size_t i = 0; (i = r.find("*/", i)) != std::string::npos;) r.replace(i, 2, "* /");
  return r;
}

// Safe inside a C string literal.
std::string CString(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 32) continue;
    r += c;
  }
  return r;
}

struct CType {
  const char* name;
  int size;
};

bool TensorCType(ir::DataType t, CType* out) {
  switch (t) {
    case ir::DataType::kInt8:
      *out = {"int8_t", 1};
      return true;
    case ir::DataType::kUInt8:
    case ir::DataType::kBool:
      *out = {"uint8_t", 1};
      return true;
    case ir::DataType::kInt16:
      *out = {"int16_t", 2};
      return true;
    case ir::DataType::kInt32:
      *out = {"int32_t", 4};
      return true;
    case ir::DataType::kInt64:
      *out = {"int64_t", 8};
      return true;
    default:
      return false;
  }
}

int CTypeSize(const std::string& ctype) {
  if (ctype == "int8_t" || ctype == "uint8_t") return 1;
  if (ctype == "int16_t") return 2;
  if (ctype == "int32_t") return 4;
  if (ctype == "int64_t" || ctype == "sp_requant_t") return 8;
  return 1;
}

// Little-endian element `i` of `bytes` as a signed or unsigned integer of `ctype`.
int64_t Element(const std::vector<uint8_t>& bytes, size_t i, const std::string& ctype) {
  const int n = CTypeSize(ctype);
  uint64_t u = 0;
  for (int b = n - 1; b >= 0; --b) u = (u << 8) | bytes[i * n + b];
  if (ctype == "uint8_t") return static_cast<int64_t>(u);
  if (n == 1) return static_cast<int8_t>(u);
  if (n == 2) return static_cast<int16_t>(u);
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(u));
  return static_cast<int64_t>(u);
}

// "static const T name[N] = {...};" with the values of `bytes`.
std::string ArrayDefinition(const std::string& ctype, const std::string& name,
                            const std::vector<uint8_t>& bytes, const std::string& comment) {
  std::string s;
  if (!comment.empty()) s += "/* " + Comment(comment) + " */\n";
  if (ctype == "sp_requant_t") {
    const size_t n = bytes.size() / 8;
    s += "static const sp_requant_t " + name + "[" + std::to_string(std::max<size_t>(n, 1)) +
         "] = {";
    for (size_t i = 0; i < n; ++i) {
      s += (i % 4 == 0 ? "\n    " : " ") + std::string("{") +
           Str(Element(bytes, 2 * i, "int32_t")) + ", " +
           Str(Element(bytes, 2 * i + 1, "int32_t")) + "}" + (i + 1 < n ? "," : "");
    }
    if (n == 0) s += "{0, 0}";
    return s + "};\n";
  }
  const int size = CTypeSize(ctype);
  const size_t n = bytes.size() / size;
  const size_t per_line = size == 1 ? 16 : size <= 4 ? 8 : 4;
  s +=
      "static const " + ctype + " " + name + "[" + std::to_string(std::max<size_t>(n, 1)) + "] = {";
  for (size_t i = 0; i < n; ++i)
    s += (i % per_line == 0 ? "\n    " : " ") + Str(Element(bytes, i, ctype)) +
         (i + 1 < n ? "," : "");
  if (n == 0) s += "0";
  return s + "};\n";
}

// An address a pointer argument resolves to: `base` (an array of `ctype`) plus bytes.
struct Addr {
  std::string base;
  std::string ctype;  // element type of the base array
  bool is_const = false;
  int64_t offset = 0;  // bytes
  int64_t step = 0;    // bytes per loop iteration
};

std::string Terms(int64_t offset, int64_t step, bool loop) {
  std::string s;
  if (offset != 0) s += " + " + Str(offset);
  if (loop && step != 0) s += step == 1 ? " + i" : " + i * " + Str(step);
  return s;
}

// The C expression passing `a` as a parameter of type `param`.
std::string PointerExpr(const Addr& a, const std::string& param, bool loop) {
  std::string pointee = param;
  const bool const_param = pointee.rfind("const ", 0) == 0;
  if (const_param) pointee = pointee.substr(6);
  pointee.pop_back();  // '*'
  const int size = CTypeSize(a.ctype);
  if (pointee == a.ctype && (const_param || !a.is_const) && a.offset % size == 0 &&
      a.step % size == 0) {
    const std::string t = Terms(a.offset / size, a.step / size, loop);
    return t.empty() ? a.base : "(" + a.base + t + ")";
  }
  const std::string bytes =
      a.ctype == "uint8_t" ? a.base
                           : std::string("(") + (a.is_const ? "const " : "") + "uint8_t*)" + a.base;
  return "(" + param + ")(" + bytes + Terms(a.offset, a.step, loop) + ")";
}

class Emitter {
 public:
  Emitter(const ir::Graph& g, const plan::Plan& p, const exec::QuantizedModel& q,
          const CodegenOptions& o)
      : g_(g), p_(p), q_(q), o_(o) {}

  StatusOr<Firmware> Run();

 private:
  // Where a tensor's bytes are at a step: in the arena at `offset`, or a const array in flash.
  struct Loc {
    bool arena = false;
    bool wraps = false;  // runs past the end of the arena's circular pool (segment kernels only)
    int64_t offset = 0;
    ir::TensorId tensor;  // flash: the tensor whose const array holds the bytes
  };

  Status Index();
  StatusOr<const plan::Buffer*> Buffer(const std::string& tensor, int step,
                                       const std::string& what);
  // allow_wrap: the caller addresses a buffer that wraps around the circular pool modulo the pool.
  StatusOr<Loc> Locate(ir::TensorId t, int step, const std::string& what, bool allow_wrap = false);
  // The calls exec::LowerStep gives a step, printed: a plain or in-place op, or a segment step.
  Status EmitOp(int s, const plan::StepOp& so, const exec::LoweredOp& lo, const plan::Buffer* scratch);
  Status EmitSegmentStep(const exec::StepCalls& sc);
  std::string SegLayerInit(const exec::SegLayerS8& l);
  std::string TensorArray(ir::TensorId t);
  std::string DescName(const sp_tensor_t& d);
  std::string IntsName(const std::vector<int32_t>& v);
  std::string RequantName(const sp_requant_t& rq);
  std::string AddParamsName(const sp_add_s8_params_t& p);
  std::string MulParamsName(const sp_mul_s8_params_t& p);
  std::string ConstName(const exec::ConstArray& c);
  std::string Decl(const std::string& key, const std::string& prefix, const std::string& body);
  std::string ModelC(const std::string& run_body, const std::string& checksum_body);
  std::string StartupC() const;
  std::string LinkerScript() const;
  std::string Makefile() const;
  std::string Readme() const;

  const ir::Graph& g_;
  const plan::Plan& p_;
  const exec::QuantizedModel& q_;
  const CodegenOptions& o_;
  Firmware fw_;
  std::string runtime_dir_;
  RuntimeFiles runtime_;

  const plan::Level* arena_level_ = nullptr;
  std::unordered_map<std::string, std::vector<const plan::Buffer*>> buffers_;
  std::unordered_map<std::string, const plan::Tensor*> ptensors_;
  std::unordered_map<std::string, const ir::Op*> ops_;

  std::string run_;                         // sramplan_run's body
  std::vector<std::string> tensor_arrays_;  // by tensor id: the const array's name, once used
  std::vector<std::string> decl_order_;     // descriptor / parameter / table definitions, in order
  std::map<std::string, std::string> decl_names_;  // definition key -> name
  std::set<std::string> used_names_;
  int decl_counter_ = 0;
};

Status Emitter::Index() {
  for (const auto& l : p_.levels)
    if (l.name == p_.arena_level) arena_level_ = &l;
  if (!arena_level_)
    return InvalidArgument("the plan names arena level '" + p_.arena_level +
                           "', which is not one of its levels");
  for (const auto& b : p_.buffers) buffers_[b.tensor].push_back(&b);
  for (const auto& t : p_.tensors) ptensors_[t.name] = &t;
  for (const ir::Op& op : g_.ops()) ops_[op.name] = &op;
  tensor_arrays_.assign(g_.num_tensors(), "");
  // Tensor array names first, in tensor id order, so names never depend on emission order.
  for (const ir::Tensor& t : g_.tensors()) {
    std::string base = std::string(t.kind == ir::TensorKind::kInput ? "sp_input_" : "sp_const_") +
                       Identifier(t.name);
    std::string name = base;
    for (int k = 2; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    if (t.kind == ir::TensorKind::kInput || t.kind == ir::TensorKind::kConstant) {
      used_names_.insert(name);
      tensor_arrays_[t.id.value()] = "?" + name;  // '?': named, not used yet
    }
  }
  return Status::Ok();
}

StatusOr<const plan::Buffer*> Emitter::Buffer(const std::string& tensor, int step,
                                              const std::string& what) {
  std::string root = tensor;
  for (int guard = 0; guard < 64; ++guard) {
    auto it = ptensors_.find(root);
    if (it == ptensors_.end() || it->second->alias_of.empty()) break;
    root = it->second->alias_of;
  }
  const plan::Buffer* hit = nullptr;
  auto it = buffers_.find(root);
  if (it != buffers_.end())
    for (const plan::Buffer* b : it->second)
      if (b->first_step <= step && step <= b->last_step) hit = b;
  if (!hit)
    return InvalidArgument(
        "step " + std::to_string(step) + " " + what + ": tensor '" + tensor + "'" +
        (root != tensor ? " (stored in '" + root + "')" : "") +
        " has no buffer live at this step; the plan does not describe the model");
  return hit;
}

StatusOr<Emitter::Loc> Emitter::Locate(ir::TensorId id, int step, const std::string& what,
                                       bool allow_wrap) {
  const ir::Tensor& t = g_.tensor(id);
  SP_ASSIGN_OR_RETURN(const plan::Buffer* b, Buffer(t.name, step, what));
  if (t.Bytes() > b->bytes)
    return InvalidArgument("step " + std::to_string(step) + " " + what + ": tensor '" + t.name +
                           "' needs " + std::to_string(t.Bytes()) + " bytes but its buffer has " +
                           std::to_string(b->bytes));
  Loc loc;
  if (b->level == arena_level_->name) {
    loc.arena = true;
    loc.offset = b->offset;
    loc.wraps = plan::Wraps(p_, *b);
    if (loc.wraps && !allow_wrap)
      return InvalidArgument("step " + std::to_string(step) + " " + what + ": tensor '" + t.name +
                             "' wraps around the circular pool; only the segment-aware kernels address it "
                             "modulo the pool");
    return loc;
  }
  std::optional<ir::TensorId> root = g_.FindTensor(b->tensor);
  if (root) {
    const ir::Tensor& r = g_.tensor(*root);
    if (r.kind == ir::TensorKind::kConstant || r.kind == ir::TensorKind::kInput) {
      loc.tensor = *root;
      return loc;
    }
  }
  return Unsupported("step " + std::to_string(step) + " " + what + ": tensor '" + t.name +
                     "' lives in level '" + b->level +
                     "'; the firmware keeps activations only in "
                     "the arena level '" +
                     arena_level_->name + "' (and constants in flash)");
}

std::string Emitter::TensorArray(ir::TensorId t) {
  std::string& n = tensor_arrays_[t.value()];
  if (!n.empty() && n[0] == '?') n = n.substr(1);
  return n;
}

std::string Emitter::Decl(const std::string& key, const std::string& prefix,
                          const std::string& body) {
  auto it = decl_names_.find(key);
  if (it != decl_names_.end()) return it->second;
  std::string name = prefix + std::to_string(decl_counter_++);
  while (used_names_.count(name)) name = prefix + std::to_string(decl_counter_++);
  used_names_.insert(name);
  decl_names_[key] = name;
  std::string text = body;
  for (size_t i = 0; (i = text.find("@")) != std::string::npos;) text.replace(i, 1, name);
  decl_order_.push_back(text);
  return name;
}

std::string Emitter::DescName(const sp_tensor_t& d) {
  std::string dims, strides;
  for (int i = 0; i < d.rank; ++i) {
    dims += std::string(i ? ", " : "") + Str(d.dims[i]);
    strides += std::string(i ? ", " : "") + Str(d.strides[i]);
  }
  if (d.rank == 0) dims = strides = "0";
  const std::string init = std::string("{") + Str(d.rank) + ", {" + dims + "}, {" + strides + "}}";
  return Decl("desc" + init, "sp_d", "static const sp_tensor_t @ = " + init + ";\n");
}

std::string Emitter::IntsName(const std::vector<int32_t>& v) {
  std::string init;
  for (size_t i = 0; i < v.size(); ++i) init += std::string(i ? ", " : "") + Str(v[i]);
  if (v.empty()) init = "0";
  return Decl("ints{" + init + "}", "sp_i",
              "static const int32_t @[" + std::to_string(std::max<size_t>(v.size(), 1)) + "] = {" +
                  init + "};\n");
}

std::string Emitter::RequantName(const sp_requant_t& rq) {
  const std::string init = std::string("{") + Str(rq.multiplier) + ", " + Str(rq.shift) + "}";
  return Decl("rq" + init, "sp_q", "static const sp_requant_t @ = " + init + ";\n");
}

std::string Emitter::AddParamsName(const sp_add_s8_params_t& p) {
  auto rq = [](const sp_requant_t& r) {
    return std::string("{") + Str(r.multiplier) + ", " + Str(r.shift) + "}";
  };
  const std::string init = "{.in1_zp = " + Str(p.in1_zp) + ", .in2_zp = " + Str(p.in2_zp) +
                           ", .out_zp = " + Str(p.out_zp) + ", .left_shift = " + Str(p.left_shift) +
                           ",\n    .in1_rq = " + rq(p.in1_rq) + ", .in2_rq = " + rq(p.in2_rq) +
                           ", .out_rq = " + rq(p.out_rq) + ", .act_min = " + Str(p.act_min) +
                           ", .act_max = " + Str(p.act_max) + "}";
  return Decl("add" + init, "sp_add", "static const sp_add_s8_params_t @ = " + init + ";\n");
}

std::string Emitter::MulParamsName(const sp_mul_s8_params_t& p) {
  const std::string init = "{.in1_zp = " + Str(p.in1_zp) + ", .in2_zp = " + Str(p.in2_zp) +
                           ", .out_zp = " + Str(p.out_zp) + ", .rq = {" + Str(p.rq.multiplier) +
                           ", " + Str(p.rq.shift) + "}, .act_min = " + Str(p.act_min) +
                           ", .act_max = " + Str(p.act_max) + "}";
  return Decl("mul" + init, "sp_mul", "static const sp_mul_s8_params_t @ = " + init + ";\n");
}

std::string Emitter::ConstName(const exec::ConstArray& c) {
  const std::string key = "const:" + c.ctype + ":" + std::string(c.bytes.begin(), c.bytes.end());
  const bool is_new = !decl_names_.count(key);
  const std::string prefix = "sp_" + (c.role == "requant" ? std::string("rq") : c.role) + "_";
  const std::string name = Decl(key, prefix, ArrayDefinition(c.ctype, "@", c.bytes, ""));
  if (is_new) {
    // Repacked weights and biases of segment-aware layers count as weights.
    (c.role == "segw" || c.role == "bias" ? fw_.weight_bytes : fw_.table_bytes) +=
        static_cast<int64_t>(c.bytes.size());
  }
  return name;
}

Status Emitter::EmitOp(int s, const plan::StepOp& so, const exec::LoweredOp& lo,
                       const plan::Buffer* scratch) {
  const ir::Op& op = *lo.op;
  const std::string what = "op '" + op.name + "'";
  std::vector<Loc> in, out;
  for (ir::TensorId id : op.inputs) {
    SP_ASSIGN_OR_RETURN(Loc l, Locate(id, s, what));
    in.push_back(l);
  }
  for (ir::TensorId id : op.outputs) {
    SP_ASSIGN_OR_RETURN(Loc l, Locate(id, s, what));
    if (!l.arena && !ir::IsViewOp(op.type))
      return Unsupported("step " + std::to_string(s) + " " + what + " writes '" +
                         g_.tensor(id).name + "' outside the arena level");
    out.push_back(l);
  }
  std::string header = "  /* step " + std::to_string(s) + ": " + Comment(op.name) + " (" +
                       Comment(so.type.empty() ? op.type : so.type);
  if (ir::IsViewOp(op.type)) {
    run_ += header + "): a view, no code */\n";
    return Status::Ok();
  }
  // The in-place decision is exec::LowerStep's (the arena executor's): a depthwise convolution over
  // its input runs through the step's scratch buffer.
  const exec::OpCalls& calls = lo.calls;
  int64_t scratch_offset = -1;
  if (lo.in_place) {
    if (scratch->level != arena_level_->name)
      return Unsupported(what + ": its scratch buffer lives outside the arena level");
    scratch_offset = scratch->offset;
    header += ", in place through '" + Comment(scratch->tensor) + "' at arena offset " +
              std::to_string(scratch->offset);
  }
  if (calls.host_loop)
    return Unsupported("op '" + op.name + "' (" + op.type + "): " + calls.host_loop_what +
                       " has no runtime kernel (the host runs it as a plain loop); the firmware "
                       "cannot run this model");
  if (!calls.temp_bytes.empty())
    return Unsupported("op '" + op.name + "' (" + op.type +
                       "): a convolution over channel-strided (NCHW) operands needs staging "
                       "buffers the plan does not hold; the firmware runs channels-last (NHWC) "
                       "models");
  header += "): ";
  for (size_t i = 0; i < op.inputs.size(); ++i)
    header += std::string(i ? ", " : "") + Comment(g_.tensor(op.inputs[i]).name);
  header += " -> ";
  for (size_t k = 0; k < op.outputs.size(); ++k)
    header += std::string(k ? ", " : "") + Comment(g_.tensor(op.outputs[k]).name);
  run_ += header + " */\n";

  std::vector<std::string> const_names;
  for (const exec::ConstArray& c : calls.consts) const_names.push_back(ConstName(c));
  auto addr = [&](const exec::CallRef& r, std::string* error) -> Addr {
    Addr a;
    a.offset = r.offset;
    a.step = r.step;
    const Loc* loc = nullptr;
    switch (r.base) {
      case exec::CallRef::Base::kInput:
        if (r.index < static_cast<int>(in.size())) loc = &in[r.index];
        break;
      case exec::CallRef::Base::kOutput:
        if (r.index < static_cast<int>(out.size())) loc = &out[r.index];
        break;
      case exec::CallRef::Base::kScratch:
        a.base = "sramplan_arena";
        a.ctype = "uint8_t";
        a.offset += scratch_offset;
        return a;
      case exec::CallRef::Base::kConst:
        if (r.index < static_cast<int>(const_names.size())) {
          a.base = const_names[r.index];
          a.ctype = calls.consts[r.index].ctype;
          a.is_const = true;
          return a;
        }
        break;
      case exec::CallRef::Base::kTemp:
        break;
    }
    if (!loc) {
      *error = "a call refers to an operand the op does not have";
      return a;
    }
    if (loc->arena) {
      a.base = "sramplan_arena";
      a.ctype = "uint8_t";
      a.offset += loc->offset;
      return a;
    }
    CType ct;
    if (!TensorCType(g_.tensor(loc->tensor).dtype, &ct)) {
      *error = std::string("constant '") + g_.tensor(loc->tensor).name + "' has element type " +
               ir::DataTypeName(g_.tensor(loc->tensor).dtype) + ", which int8 firmware cannot hold";
      return a;
    }
    a.base = TensorArray(loc->tensor);
    a.ctype = ct.name;
    a.is_const = true;
    return a;
  };
  for (const exec::CallBlock& b : calls.blocks) {
    const bool loop = b.count != 1;
    if (b.count <= 0) continue;
    std::string indent = "  ";
    if (loop) {
      run_ += "  for (int32_t i = 0; i < " + Str(b.count) + "; ++i) {\n";
      indent = "    ";
    }
    for (const exec::KernelCall& k : b.calls) {
      const exec::KernelSignature& sig = exec::Signature(k.fn);
      if (k.args.size() != sig.params.size())
        return InternalError(what + ": a call of " + sig.name + " has the wrong argument count");
      std::string args;
      for (size_t a = 0; a < k.args.size(); ++a) {
        const std::string param = sig.params[a];
        const exec::CallArg& v = k.args[a];
        std::string e;
        if (const auto* d = std::get_if<sp_tensor_t>(&v)) {
          e = "&" + DescName(*d);
        } else if (const auto* r = std::get_if<exec::CallRef>(&v)) {
          std::string error;
          Addr ad = addr(*r, &error);
          if (!error.empty()) return Unsupported(what + ": " + error);
          e = PointerExpr(ad, param, loop);
        } else if (std::holds_alternative<std::nullptr_t>(v)) {
          e = "NULL";
        } else if (const auto* i = std::get_if<int64_t>(&v)) {
          e = param == "int32_t" ? Str(*i) : "(" + param + ")" + Str(*i);
        } else if (const auto* ints = std::get_if<std::vector<int32_t>>(&v)) {
          e = IntsName(*ints);
        } else if (const auto* rq = std::get_if<sp_requant_t>(&v)) {
          e = RequantName(*rq);
        } else if (const auto* ap = std::get_if<sp_add_s8_params_t>(&v)) {
          e = "&" + AddParamsName(*ap);
        } else if (const auto* mp = std::get_if<sp_mul_s8_params_t>(&v)) {
          e = "&" + MulParamsName(*mp);
        }
        args += std::string(a ? ", " : "") + e;
      }
      run_ += indent + "SP_CALL(" + std::to_string(s) + ", " + sig.name + "(" + args + "));\n";
      ++fw_.kernel_calls;
    }
    if (loop) run_ += "  }\n";
  }
  return Status::Ok();
}

// The brace initializer of a sp_seg_layer_s8_t for `l` (its weights, bias and requantisation
// arrays become const arrays in flash).
std::string Emitter::SegLayerInit(const exec::SegLayerS8& l) {
  exec::ConstArray w{"int8_t", "segw", {}};
  w.bytes.assign(reinterpret_cast<const uint8_t*>(l.weights.data()),
                 reinterpret_cast<const uint8_t*>(l.weights.data()) + l.weights.size());
  std::string bias = "NULL";
  if (!l.bias.empty()) {
    exec::ConstArray b{"int32_t", "bias", {}};
    b.bytes.resize(l.bias.size() * sizeof(int32_t));
    std::memcpy(b.bytes.data(), l.bias.data(), b.bytes.size());
    bias = ConstName(b);
  }
  exec::ConstArray rq{"sp_requant_t", "requant", {}};
  rq.bytes.resize(l.rq.size() * sizeof(sp_requant_t));
  std::memcpy(rq.bytes.data(), l.rq.data(), rq.bytes.size());
  return "{" + ConstName(w) + ", " + bias + ", " + ConstName(rq) + ", " + Str(l.in_zp) + ", " +
         Str(l.out_zp) + ", " + Str(l.act_min) + ", " + Str(l.act_max) + "}";
}

// A segment step (kind segment or fused-bottleneck): the one segment-aware kernel call
// exec::LowerStep gives it, on the arena as the circular pool, with the step's workspace.
Status Emitter::EmitSegmentStep(const exec::StepCalls& sc) {
  const int s = sc.step;
  const std::string where = "step " + std::to_string(s);
  const std::vector<const ir::Op*>& sops = sc.ops;
  for (const ir::Op* op : sops) {
    const std::string what = "op '" + op->name + "'";
    for (ir::TensorId id : op->inputs)
      if (!exec::IsFusedIntermediate(g_, sops, id)) SP_RETURN_IF_ERROR(Locate(id, s, what, true).status());
    for (ir::TensorId id : op->outputs) {
      if (exec::IsFusedIntermediate(g_, sops, id)) continue;
      SP_ASSIGN_OR_RETURN(Loc l, Locate(id, s, what, true));
      if (!l.arena)
        return Unsupported(where + " " + what + " writes '" + g_.tensor(id).name + "' outside the arena level");
    }
  }
  const ir::Tensor& xt = g_.tensor(sops.front()->inputs[0]);
  const ir::Tensor& yt = g_.tensor(sops.back()->outputs[0]);
  if (sc.input->level != arena_level_->name || sc.output->level != arena_level_->name)
    return Unsupported(where + " op '" + sops.front()->name + "': the input '" + xt.name + "' and output '" +
                       yt.name + "' of a segment step must be in the arena level");
  const exec::KernelCall& k = *sc.segment;
  const exec::SegPoolArg& pa = std::get<exec::SegPoolArg>(k.args[0]);
  const int64_t size = int64_t{pa.pool_segments} * pa.segment_bytes;
  const std::string pool = Decl("pool:" + Str(size) + ":" + Str(pa.segment_bytes), "sp_pool",
                                "static const sp_seg_pool_t @ = {(int8_t*)sramplan_arena, " +
                                    Str(pa.pool_segments) + ", " + Str(pa.segment_bytes) + "};\n");
  const int64_t in_start = std::get<int64_t>(k.args[1]), out_start = std::get<int64_t>(k.args[2]);
  if (sc.workspace->level != arena_level_->name)
    return Unsupported(where + ": the workspace '" + sc.workspace->tensor + "' is outside the arena level");
  const std::string ws = "(int8_t*)(sramplan_arena + " + Str(sc.workspace->offset) + ")";
  const int64_t ws_bytes = std::get<int64_t>(k.args[6]);
  std::string shape, params;
  if (const auto* l = std::get_if<exec::SegLayerS8>(&k.args[4])) {
    params = Decl("layer" + SegLayerInit(*l), "sp_layer",
                  "static const sp_seg_layer_s8_t @ = " + SegLayerInit(*l) + ";\n");
    if (const auto* fs = std::get_if<sp_seg_fc_shape_t>(&k.args[3])) {
      const std::string init =
          "{" + Str(fs->m) + ", " + Str(fs->k) + ", " + Str(fs->n) + ", " + Str(fs->chunk) + "}";
      shape = Decl("fcs" + init, "sp_fcs", "static const sp_seg_fc_shape_t @ = " + init + ";\n");
    } else {
      const sp_seg_conv_shape_t& c = std::get<sp_seg_conv_shape_t>(k.args[3]);
      const std::string init = "{" + Str(c.h) + ", " + Str(c.w) + ", " + Str(c.c_in) + ", " + Str(c.c_out) +
                               ", " + Str(c.r) + ", " + Str(c.s) + ", " + Str(c.stride_h) + ", " +
                               Str(c.stride_w) + ", " + Str(c.pad_top) + ", " + Str(c.pad_left) + ", " +
                               Str(c.pad_bottom) + ", " + Str(c.pad_right) + ", " + Str(c.dilation_h) +
                               ", " + Str(c.dilation_w) + "}";
      shape = Decl("cs" + init, "sp_cs", "static const sp_seg_conv_shape_t @ = " + init + ";\n");
    }
  } else {
    const exec::SegBottleneckS8& fb = std::get<exec::SegBottleneckS8>(k.args[4]);
    const sp_seg_bottleneck_shape_t& bs = std::get<sp_seg_bottleneck_shape_t>(k.args[3]);
    const std::string add = fb.residual ? "&" + AddParamsName(fb.add) : std::string("NULL");
    const std::string sinit = "{" + Str(bs.h) + ", " + Str(bs.w) + ", " + Str(bs.c_in) + ", " +
                              Str(bs.c_mid) + ", " + Str(bs.c_out) + ", " + Str(bs.r) + ", " +
                              Str(bs.s) + ", " + Str(bs.stride_h) + ", " + Str(bs.stride_w) + ", " +
                              Str(bs.pad_top) + ", " + Str(bs.pad_left) + ", " +
                              Str(bs.pad_bottom) + ", " + Str(bs.pad_right) + ", " +
                              Str(bs.has_expand) + ", " + Str(bs.has_residual) + ", " +
                              Str(bs.e_r) + ", " + Str(bs.e_s) + ", " + Str(bs.e_stride_h) + ", " +
                              Str(bs.e_stride_w) + ", " + Str(bs.e_pad_top) + ", " +
                              Str(bs.e_pad_left) + ", " + Str(bs.e_pad_bottom) + ", " +
                              Str(bs.e_pad_right) + ", " + Str(bs.row_cache) + "}";
    shape = Decl("bs" + sinit, "sp_bs", "static const sp_seg_bottleneck_shape_t @ = " + sinit + ";\n");
    const std::string pinit = "{" + SegLayerInit(fb.expand) + ",\n    " + SegLayerInit(fb.depthwise) +
                              ",\n    " + SegLayerInit(fb.project) + ",\n    " + add + "}";
    params = Decl("bp" + pinit, "sp_bp", "static const sp_seg_bottleneck_s8_t @ = " + pinit + ";\n");
  }
  const std::string kernel = exec::Signature(k.fn).name;
  const std::string call = kernel + "(&" + pool + ", " + Str(in_start) + ", " + Str(out_start) + ", &" + shape +
                           ", &" + params + ", " + ws + ", " + Str(ws_bytes) + ")";
  std::string header = "  /* step " + std::to_string(s) + ": ";
  for (size_t i = 0; i < sops.size(); ++i)
    header += std::string(i ? " + " : "") + Comment(sops[i]->name) + " (" + Comment(sops[i]->type) + ")";
  header += ", segment-aware " + kernel + ": " + Comment(xt.name) + " @" + Str(in_start) + " -> " +
            Comment(yt.name) + " @" + Str(out_start) + " */\n";
  run_ += header + "  SP_CALL(" + std::to_string(s) + ", " + call + ");\n";
  ++fw_.kernel_calls;
  return Status::Ok();
}

std::string Emitter::ModelC(const std::string& run_body, const std::string& checksum_body) {
  std::string c;
  c += "/* Generated by sramplan codegen. Do not edit.\n";
  c += " * model " + Comment(p_.model) + ", target " + Comment(p_.target) + ", strategy " +
       Comment(p_.strategy) + ", schedule " + Comment(p_.schedule) + ", " + Comment(p_.dtype) +
       ", batch " + std::to_string(p_.batch) + ".\n";
  c += " * Arena: " + std::to_string(fw_.arena_bytes) + " bytes in .bss (level '" +
       Comment(arena_level_->name) + "', " + std::to_string(arena_level_->capacity) +
       " bytes); weights " + std::to_string(fw_.weight_bytes) + " bytes, input " +
       std::to_string(fw_.input_bytes) + " bytes, tables " + std::to_string(fw_.table_bytes) +
       " bytes in .rodata (flash).\n";
  c += " * " + std::to_string(fw_.steps) + " steps, " + std::to_string(fw_.kernel_calls) +
       " kernel call sites; the calls are the records the host executors run (exec/kernels.h).\n";
  c += " * main() prints the FNV-1a 32 checksum of the outputs; the host arena executor's is " +
       Hex32(fw_.expected_checksum) + ". */\n";
  c += "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n";
  c += "#include \"sramplan_rt_int8.h\"\n#include \"sramplan_rt_seg.h\"\n\n";
  c += "#define SRAMPLAN_ARENA_BYTES " + std::to_string(fw_.arena_bytes) + "\n";
  c += "#define SRAMPLAN_EXPECTED_CHECKSUM " + Hex32(fw_.expected_checksum) + "u\n\n";
  c += "/* Every tensor the plan keeps in SRAM lives here, at its planned offset. */\n";
  c += "static uint8_t sramplan_arena[SRAMPLAN_ARENA_BYTES > 0 ? SRAMPLAN_ARENA_BYTES : 1]\n"
       "    __attribute__((aligned(16)));\n\n";
  c += "/* A kernel that rejects its arguments stops the run with its step + 1. */\n";
  c += "#define SP_CALL(step, call)                 \\\n"
       "  do {                                      \\\n"
       "    if ((call) != SP_OK) return (step) + 1; \\\n"
       "  } while (0)\n\n";
  // Constants: model tensors first (tensor id order), then descriptors, parameters and tables.
  c += "/* ---- Model constants and input (flash) ---- */\n";
  for (const ir::Tensor& t : g_.tensors()) {
    const std::string& n = tensor_arrays_[t.id.value()];
    if (n.empty() || n[0] == '?') continue;
    CType ct{"uint8_t", 1};
    TensorCType(t.dtype, &ct);
    std::string shape;
    for (size_t i = 0; i < t.shape.size(); ++i)
      shape += std::string(i ? "x" : "") + std::to_string(t.shape[i]);
    c += ArrayDefinition(ct.name, n, q_.data.values[t.id.value()],
                         std::string(t.kind == ir::TensorKind::kInput ? "input" : "constant") +
                             " '" + t.name + "' " + ir::DataTypeName(t.dtype) + " [" + shape + "]");
  }
  c += "\n/* ---- Kernel descriptors, parameters and tables (flash) ---- */\n";
  for (const std::string& d : decl_order_) c += d;
  c += "\n/* Runs the model; 0, or the failing step + 1. */\n";
  c += "int sramplan_run(void) {\n" + run_body + "  return 0;\n}\n\n";
  c += "static uint32_t sp_fnv1a(uint32_t h, const uint8_t* p, uint32_t n) {\n"
       "  while (n--) {\n    h ^= *p++;\n    h *= 16777619u;\n  }\n  return h;\n}\n\n";
  c += "/* FNV-1a 32 over the output bytes, in output order. */\n";
  c += "uint32_t sramplan_checksum(void) {\n  uint32_t h = 2166136261u;\n" + checksum_body +
       "  return h;\n}\n\n";
  c += "#ifdef SRAMPLAN_FIRMWARE\n"
       "void sp_semihost_write0(const char* s); /* startup.c */\n"
       "static void sp_puts(const char* s) { sp_semihost_write0(s); }\n"
       "#else\n"
       "#include <stdio.h>\n"
       "static void sp_puts(const char* s) { fputs(s, stdout); }\n"
       "#endif\n\n";
  c += "static void sp_put_hex(uint32_t v) {\n"
       "  char b[11];\n  int i;\n  b[0] = '0';\n  b[1] = 'x';\n"
       "  for (i = 0; i < 8; ++i) b[2 + i] = \"0123456789abcdef\"[(v >> (28 - 4 * i)) & 15u];\n"
       "  b[10] = 0;\n  sp_puts(b);\n}\n\n";
  c += "static void sp_put_uint(uint32_t v) {\n"
       "  char d[12];\n  int n = 11;\n  d[n] = 0;\n  do {\n    d[--n] = (char)('0' + v % 10u);\n"
       "    v /= 10u;\n  } while (v);\n  sp_puts(d + n);\n}\n\n";
  const std::string name = CString(p_.model.empty() ? g_.name : p_.model);
  c += "int main(void) {\n"
       "  int rc = sramplan_run();\n"
       "  uint32_t h;\n"
       "  if (rc != 0) {\n"
       "    sp_puts(\"sramplan: a kernel rejected its arguments at step \");\n"
       "    sp_put_uint((uint32_t)(rc - 1));\n"
       "    sp_puts(\"\\n\");\n"
       "    return 2;\n"
       "  }\n"
       "  h = sramplan_checksum();\n"
       "  sp_puts(\"sramplan " +
       name +
       ": checksum \");\n"
       "  sp_put_hex(h);\n"
       "  if (h == SRAMPLAN_EXPECTED_CHECKSUM) {\n"
       "    sp_puts(\" (matches the host executor)\\n\");\n"
       "    return 0;\n"
       "  }\n"
       "  sp_puts(\" (MISMATCH: the host executor has \");\n"
       "  sp_put_hex(SRAMPLAN_EXPECTED_CHECKSUM);\n"
       "  sp_puts(\")\\n\");\n"
       "  return 3;\n"
       "}\n";
  return c;
}

std::string Emitter::StartupC() const {
  return R"(/* Generated by sramplan codegen. Cortex-M startup for QEMU's mps2 boards: vector table, reset
 * handler (copies .data, zeroes .bss, paints the stack, runs main, reports the stack high-water
 * mark) and Arm semihosting (SYS_WRITE0, SYS_EXIT), so `qemu-system-arm -semihosting-config
 * enable=on,target=native` prints and then exits. */
#include <stdint.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack, __stack_start;
extern const char __stack_size[]; /* link.ld: the stack budget in bytes, as an address */
int main(void);

#define SP_STACK_PAINT 0x5A5A5A5Au

static int sp_semihost(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void sp_semihost_write0(const char* s) { sp_semihost(0x04, s); /* SYS_WRITE0 */ }

/* SYS_EXIT: ADP_Stopped_ApplicationExit ends QEMU with status 0, anything else with 1. */
static void sp_semihost_exit(int ok) {
  sp_semihost(0x18, (const void*)(uintptr_t)(ok ? 0x20026u : 0x20023u));
  for (;;) {
  }
}

static void sp_write_uint(uint32_t v) {
  char d[12];
  int n = 11;
  d[n] = 0;
  do {
    d[--n] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  sp_semihost_write0(d + n);
}

/* Fills the free stack below this function's frame with a pattern. */
static __attribute__((noinline)) void sp_paint_stack(void) {
  volatile uint32_t marker = 0;
  uint32_t* p = &__stack_start;
  uint32_t* top = (uint32_t*)&marker - 16;
  while (p < top) *p++ = SP_STACK_PAINT;
  (void)marker;
}

/* Bytes of stack the run touched: from the top of RAM down to the deepest overwritten word. */
static uint32_t sp_stack_used(void) {
  const uint32_t* p = &__stack_start;
  while (p < &_estack && *p == SP_STACK_PAINT) ++p;
  return (uint32_t)((uintptr_t)&_estack - (uintptr_t)p);
}

void Reset_Handler(void) {
  uint32_t* src = &_sidata;
  uint32_t* dst = &_sdata;
  int rc;
  uint32_t used;
  while (dst < &_edata) *dst++ = *src++;
  for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
  sp_paint_stack();
  rc = main();
  used = sp_stack_used();
  sp_semihost_write0("sramplan: stack high-water ");
  sp_write_uint(used);
  sp_semihost_write0(" bytes of the ");
  sp_write_uint((uint32_t)(uintptr_t)__stack_size);
  sp_semihost_write0(used > (uint32_t)(uintptr_t)__stack_size ? "-byte budget: OVER BUDGET\n"
                                                              : "-byte budget\n");
  /* A stack past its budget may have run into the arena: the run does not count. */
  sp_semihost_exit(rc == 0 && used <= (uint32_t)(uintptr_t)__stack_size);
}

void Fault_Handler(void) {
  sp_semihost_write0("sramplan: fault\n");
  sp_semihost_exit(0);
}

typedef void (*sp_vector_t)(void);
__attribute__((section(".isr_vector"), used)) const sp_vector_t sp_vectors[16] = {
    (sp_vector_t)(uintptr_t)&_estack, /* initial stack pointer: the top of RAM */
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Fault_Handler, /* SVC */
    Fault_Handler, /* DebugMon */
    0,
    Fault_Handler, /* PendSV */
    Fault_Handler, /* SysTick */
};
)";
}

std::string Emitter::LinkerScript() const {
  const plan::Level* flash = nullptr;
  for (const auto& l : p_.levels)
    if (!flash && (l.kind == "flash" || l.kind == "dram")) flash = &l;
  std::string s;
  s += "/* Generated by sramplan codegen. Memory map of target '" + Comment(p_.target) +
       "' at the addresses of QEMU's mps2 boards.\n";
  s += " * FLASH: " +
       (flash ? "level '" + Comment(flash->name) + "' (" + flash->kind + ", " +
                    std::to_string(flash->capacity) + " bytes" +
                    (flash->capacity > kQemuRegionBytes ? ", limited to QEMU's 4 MiB" : "") + ")"
              : std::string("no flash level in the target: QEMU's 4 MiB")) +
       ": code, weights, tables, the input.\n";
  s += " * RAM: level '" + Comment(arena_level_->name) + "' (" +
       std::to_string(arena_level_->capacity) + " bytes" +
       (arena_level_->capacity > kQemuRegionBytes ? ", limited to QEMU's 4 MiB" : "") +
       "): .data, .bss (the " + std::to_string(fw_.arena_bytes) + "-byte arena) and a " +
       std::to_string(fw_.stack_bytes) + "-byte stack at the top.\n";
  s += " * A plan that does not fit fails to link: \"region `RAM' overflowed by N bytes\". */\n";
  s += "MEMORY\n{\n";
  char line[160];
  std::snprintf(line, sizeof line, "  FLASH (rx)  : ORIGIN = 0x%08llx, LENGTH = %lld\n",
                static_cast<long long>(kQemuFlashOrigin),
                static_cast<long long>(fw_.flash_capacity));
  s += line;
  std::snprintf(line, sizeof line, "  RAM   (rwx) : ORIGIN = 0x%08llx, LENGTH = %lld\n",
                static_cast<long long>(kQemuRamOrigin), static_cast<long long>(fw_.ram_capacity));
  s += line;
  s += "}\n\n";
  s += "ENTRY(Reset_Handler)\n";
  s += "__stack_size = " + std::to_string(fw_.stack_bytes) + ";\n\n";
  s += R"(SECTIONS
{
  .text :
  {
    KEEP(*(.isr_vector))
    *(.text*)
    *(.rodata*)
    . = ALIGN(4);
  } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  _sidata = LOADADDR(.data);
  .data :
  {
    . = ALIGN(4);
    _sdata = .;
    *(.data*)
    . = ALIGN(4);
    _edata = .;
  } > RAM AT > FLASH
  .bss (NOLOAD) :
  {
    . = ALIGN(4);
    _sbss = .;
    *(.bss*)
    *(COMMON)
    . = ALIGN(4);
    _ebss = .;
  } > RAM
  /* The stack budget: reserved after .bss so that RAM overflows when it does not fit; the stack
   * itself starts at the top of RAM. */
  .stack (NOLOAD) :
  {
    . = ALIGN(8);
    __stack_start = .;
    . = . + __stack_size;
  } > RAM
  _estack = ORIGIN(RAM) + LENGTH(RAM);
  /DISCARD/ : { *(.ARM.attributes) *(.comment) }
}
)";
  return s;
}

std::string Emitter::Makefile() const {
  std::string srcs = "model.c startup.c";
  for (const std::string& f : runtime_.sources) {
    srcs += " \\\n  runtime/";
    srcs += Base(f);
  }
  std::string hdrs;
  for (const std::string& f : runtime_.headers) {
    if (!hdrs.empty()) hdrs += ' ';
    hdrs += "runtime/";
    hdrs += Base(f);
  }
  std::string m;
  m += "# Generated by sramplan codegen: model '" + p_.model + "', target '" + p_.target +
       "', strategy '" + p_.strategy + "'.\n";
  m += "#   make        builds model.elf (arm-none-eabi-gcc, newlib) and prints its size\n";
  m += "#   make run    runs it in QEMU with semihosting (prints the output checksum)\n";
  m += "#   make check  runs it and compares the checksum with expected_checksum.txt\n";
  m += "CROSS ?= arm-none-eabi-\nCC = $(CROSS)gcc\nSIZE = $(CROSS)size\n";
  m += "QEMU ?= qemu-system-arm\n";
  m += "CPU ?= " + fw_.cpu + "\nMACHINE ?= " + fw_.machine + "\n";
  m += "CFLAGS = -mcpu=$(CPU) -mthumb -O2 -std=c99 -Wall -ffunction-sections -fdata-sections \\\n"
       "  -DSRAMPLAN_FIRMWARE -Iruntime\n";
  m += "LDFLAGS = -mcpu=$(CPU) -mthumb -nostartfiles --specs=nano.specs -T link.ld \\\n"
       "  -Wl,--gc-sections -Wl,-Map=model.map -Wl,--print-memory-usage\n";
  m += "SRCS = " + srcs + "\n";
  m += "HDRS = " + hdrs + "\n";
  m += "OBJS = $(SRCS:.c=.o)\n\n";
  m += "all: model.elf\n\n";
  m += "model.elf: $(OBJS) link.ld\n\t$(CC) $(LDFLAGS) $(OBJS) -o $@\n\t$(SIZE) $@\n\n";
  m += "%.o: %.c $(HDRS)\n\t$(CC) $(CFLAGS) -c $< -o $@\n\n";
  m += "run: model.elf\n\t$(QEMU) -M $(MACHINE) -nographic -semihosting-config "
       "enable=on,target=native -kernel model.elf\n\n";
  m += "check: model.elf\n\t@out=\"$$($(QEMU) -M $(MACHINE) -nographic -semihosting-config "
       "enable=on,target=native -kernel model.elf 2>&1)\"; echo \"$$out\"; \\\n"
       "\techo \"$$out\" | grep -q \"checksum $$(cat expected_checksum.txt)\"\n\n";
  m += "clean:\n\trm -f $(OBJS) model.elf model.map\n\n";
  m += ".PHONY: all run check clean\n";
  return m;
}

std::string Emitter::Readme() const {
  auto kib = [](int64_t b) { return std::to_string(b) + " B (" + HumanBytes(b) + ")"; };
  std::string r;
  r += "# Firmware for " + p_.model + " on " + p_.target + "\n\n";
  r += "Generated by `sramplan codegen` from the `" + p_.strategy + "` plan (schedule `" +
       p_.schedule + "`, " + p_.dtype + ", batch " + std::to_string(p_.batch) +
       "), weights and input from seed " + std::to_string(o_.seed) +
       ". Do not edit; regenerate.\n\n";
  r += "## Files\n\n";
  r += "| file | what |\n|---|---|\n";
  r += "| `model.c` | the static arena, weights/biases/tables/input as const arrays, "
       "`sramplan_run()` "
       "(the runtime kernel calls in plan step order at the planned offsets), "
       "`sramplan_checksum()` and `main()` |\n";
  r += "| `startup.c` | vector table, reset handler (copies .data, zeroes .bss), semihosting "
       "output and exit |\n";
  r += "| `link.ld` | FLASH and RAM regions of the target, at QEMU mps2 addresses |\n";
  r += "| `Makefile` | `make` (" + fw_.cpu + "), `make run` (QEMU " + fw_.machine +
       "), `make check` |\n";
  r += "| `runtime/` | the sramplan runtime's integer-only C99 kernels |\n";
  r += "| `expected_checksum.txt` | FNV-1a 32 of the output bytes from the host arena executor "
       "|\n\n";
  r += "## Memory\n\n";
  r += "| what | bytes | where |\n|---|---|---|\n";
  r += "| arena (plan `" + p_.strategy + "`) | " + kib(fw_.arena_bytes) + " | RAM (.bss) |\n";
  r += "| stack reserve (`--stack`) | " + kib(fw_.stack_bytes) + " | RAM (top) |\n";
  r += "| RAM capacity (level `" + arena_level_->name + "`) | " + kib(fw_.ram_capacity) + " | |\n";
  r += "| weights and biases | " + kib(fw_.weight_bytes) + " | FLASH (.rodata) |\n";
  r += "| input | " + kib(fw_.input_bytes) + " | FLASH (.rodata), copied into the arena |\n";
  r +=
      "| lookup tables, requantisation arrays | " + kib(fw_.table_bytes) + " | FLASH (.rodata) |\n";
  r += "| FLASH capacity | " + kib(fw_.flash_capacity) + " | |\n\n";
  r += std::string("Arena + stack ") + (fw_.fits ? "fit" : "DO NOT FIT") + " in RAM (" +
       std::to_string(fw_.arena_bytes + fw_.stack_bytes) + " of " +
       std::to_string(fw_.ram_capacity) +
       " bytes); the linker also counts .data and the few "
       "other statics and fails with \"region `RAM' overflowed by N bytes\" when they do not "
       "fit.\n\n";
  r += "## Run\n\n```\nmake run\n```\n\nprints `checksum " + Hex32(fw_.expected_checksum) + "` (" +
       std::to_string(fw_.steps) + " steps, " + std::to_string(fw_.kernel_calls) +
       " kernel call sites) and the stack high-water mark; the run fails (QEMU exits 1) when the "
       "checksum differs, a kernel rejects its arguments or the stack outgrew its budget. Output "
       "goes through Arm semihosting calls in startup.c (SYS_WRITE0, SYS_EXIT) rather than "
       "newlib's rdimon printf, so no heap takes RAM outside the budget; newlib-nano provides "
       "memcpy/memset. Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm.\n\n"
       "The same model.c also builds on a host (`cc -Iruntime model.c runtime/*.c`): without "
       "SRAMPLAN_FIRMWARE it prints with stdio.\n";
  return r;
}

StatusOr<Firmware> Emitter::Run() {
  if (p_.dtype != "int8")
    return Unsupported("codegen emits int8 firmware; this plan is " +
                       (p_.dtype.empty() ? std::string("of no dtype") : p_.dtype) +
                       " (plan with --dtype int8)");
  if (!p_.transfers.empty())
    return Unsupported("the plan moves tensors between memory levels (" +
                       std::to_string(p_.transfers.size()) + " transfers, e.g. '" +
                       p_.transfers[0].tensor +
                       "'); codegen supports single-arena plans without transfers");
  if (o_.stack_bytes < 256 || o_.stack_bytes % 8 != 0)
    return InvalidArgument("--stack must be a multiple of 8 of at least 256 bytes, not " +
                           std::to_string(o_.stack_bytes));
  SP_RETURN_IF_ERROR(Index());
  runtime_dir_ = o_.runtime_dir.empty() ? SRAMPLAN_RUNTIME_DIR : o_.runtime_dir;
  SP_ASSIGN_OR_RETURN(runtime_, ListRuntime(runtime_dir_));
  std::string cpu = o_.cpu;
  if (cpu.empty()) {
    std::string t = p_.target;
    std::transform(t.begin(), t.end(), t.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    cpu = t.find("stm32f7") != std::string::npos || t.find("stm32h7") != std::string::npos ||
                  t.find("m7") != std::string::npos
              ? "cortex-m7"
              : "cortex-m4";
  }
  if (cpu == "cortex-m3") {
    fw_.machine = "mps2-an385";
  } else if (cpu == "cortex-m4") {
    fw_.machine = "mps2-an386";
  } else if (cpu == "cortex-m7") {
    fw_.machine = "mps2-an500";
  } else {
    return InvalidArgument("unknown --cpu '" + cpu + "'; choose cortex-m3, cortex-m4 or cortex-m7");
  }
  fw_.cpu = cpu;
  fw_.arena_bytes = arena_level_->used_bytes;
  fw_.stack_bytes = o_.stack_bytes;
  fw_.ram_capacity = std::min<int64_t>(arena_level_->capacity, kQemuRegionBytes);
  fw_.flash_capacity = kQemuRegionBytes;
  for (const auto& l : p_.levels)
    if (l.kind == "flash" || l.kind == "dram") {
      fw_.flash_capacity = std::min<int64_t>(l.capacity, kQemuRegionBytes);
      break;
    }
  fw_.fits = fw_.arena_bytes + fw_.stack_bytes <= fw_.ram_capacity;
  fw_.steps = static_cast<int>(p_.steps.size());
  const int n = fw_.steps;
  if (n == 0) return InvalidArgument("the plan has no steps");

  // The expected checksum: the host arena executor on the same plan, data and quantisation.
  SP_ASSIGN_OR_RETURN(exec::ExecResult host, exec::RunArena(g_, p_, q_.data, &q_));
  fw_.expected_checksum = Fnv1a32(host.outputs);

  // Inputs (and constants the plan keeps in SRAM) are written into the arena before step 0, at
  // the buffer live at their first use, as the arena executor does.
  std::string init;
  for (const ir::Tensor& t : g_.tensors()) {
    if (t.kind != ir::TensorKind::kConstant && t.kind != ir::TensorKind::kInput) continue;
    int first_use = n;
    for (ir::OpId c : t.consumers)
      for (int s = 0; s < n && s < first_use; ++s)
        for (const auto& so : p_.steps[s].ops)
          if (so.name == g_.op(c).name) first_use = std::min(first_use, s);
    if (first_use == n) continue;
    SP_ASSIGN_OR_RETURN(Loc loc, Locate(t.id, first_use, "(initial data)", true));
    CType ct;
    if (!TensorCType(t.dtype, &ct))
      return Unsupported(std::string("tensor '") + t.name + "' has element type " +
                         ir::DataTypeName(t.dtype) + ", which int8 firmware cannot hold");
    if (t.kind == ir::TensorKind::kInput) fw_.input_bytes += t.Bytes();
    if (!loc.arena) continue;
    const std::string what = std::string(t.kind == ir::TensorKind::kInput ? "input '" : "constant '") +
                             Comment(t.name) + "'";
    const int64_t pool_bytes = arena_level_->used_bytes;
    if (loc.wraps) {  // the first segment step reads it modulo the circular pool
      const int64_t head = pool_bytes - loc.offset;
      init += "  memcpy(sramplan_arena + " + std::to_string(loc.offset) + ", " + TensorArray(t.id) + ", " +
              std::to_string(head) + "); /* " + what + ", up to the pool's end */\n";
      init += "  memcpy(sramplan_arena, (const int8_t*)" + TensorArray(t.id) + " + " + std::to_string(head) + ", " +
              std::to_string(t.Bytes() - head) + "); /* " + what + ", wrapped to the pool's start */\n";
      continue;
    }
    init += "  memcpy(sramplan_arena + " + std::to_string(loc.offset) + ", " + TensorArray(t.id) +
            ", " + std::to_string(t.Bytes()) + "); /* " + what + " */\n";
  }
  if (!init.empty())
    run_ += "  /* The application writes the input into the arena before step 0. */\n" + init;
  const exec::StepLowering lowering(g_, p_, &q_);
  for (int s = 0; s < n; ++s) {
    auto lowered = exec::LowerStep(lowering, s);
    if (!lowered.ok())  // a plan that disagrees with the model is bad input here
      return lowered.status().code() == StatusCode::kMismatch ? InvalidArgument(lowered.status().message())
                                                               : lowered.status();
    const exec::StepCalls& sc = *lowered;
    if (sc.segment) {
      SP_RETURN_IF_ERROR(EmitSegmentStep(sc));
      continue;
    }
    for (size_t i = 0; i < sc.op_calls.size(); ++i)
      SP_RETURN_IF_ERROR(EmitOp(s, p_.steps[s].ops[i], sc.op_calls[i], sc.workspace));
  }

  fw_.fits = fw_.arena_bytes + fw_.extra_ram_bytes + fw_.stack_bytes <= fw_.ram_capacity;
  std::string checksum;
  for (ir::TensorId id : g_.Outputs()) {
    const ir::Tensor& t = g_.tensor(id);
    SP_ASSIGN_OR_RETURN(Loc loc, Locate(id, n - 1, "(graph output)"));
    if (!loc.arena) return Unsupported("graph output '" + t.name + "' is not in the arena level");
    checksum += "  h = sp_fnv1a(h, sramplan_arena + " + std::to_string(loc.offset) + ", " +
                std::to_string(t.Bytes()) + "u); /* output '" + Comment(t.name) + "' */\n";
  }
  for (const ir::Tensor& t : g_.tensors()) {
    const std::string& nm = tensor_arrays_[t.id.value()];
    if (!nm.empty() && nm[0] != '?' && t.kind == ir::TensorKind::kConstant)
      fw_.weight_bytes += t.Bytes();
  }
  std::string model_c = ModelC(run_, checksum);

  fw_.files.emplace_back("model.c", std::move(model_c));
  fw_.files.emplace_back("startup.c", StartupC());
  fw_.files.emplace_back("link.ld", LinkerScript());
  fw_.files.emplace_back("Makefile", Makefile());
  fw_.files.emplace_back("README.md", Readme());
  fw_.files.emplace_back("expected_checksum.txt", Hex32(fw_.expected_checksum) + "\n");
  std::vector<std::string> runtime = runtime_.headers;
  runtime.insert(runtime.end(), runtime_.sources.begin(), runtime_.sources.end());
  for (const std::string& f : runtime) {
    std::string text, error;
    if (!ReadFileToString(runtime_dir_ + "/" + f, &text, &error))
      return NotFound("the runtime file '" + runtime_dir_ + "/" + f + "' is missing (" + error +
                      "); point codegen at the runtime/ directory");
    fw_.files.emplace_back("runtime/" + Base(f), std::move(text));
  }
  return std::move(fw_);
}

}  // namespace

uint32_t Fnv1a32(const std::vector<std::vector<uint8_t>>& outputs) {
  uint32_t h = 2166136261u;
  for (const auto& o : outputs)
    for (uint8_t b : o) {
      h ^= b;
      h *= 16777619u;
    }
  return h;
}

StatusOr<Firmware> GenerateFirmware(const ir::Graph& g, const plan::Plan& p,
                                    const exec::QuantizedModel& q, const CodegenOptions& options) {
  Emitter e(g, p, q, options);
  return e.Run();
}

Status WriteFirmware(const Firmware& fw, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/runtime", ec);
  if (ec) return InvalidArgument("cannot create '" + dir + "': " + ec.message());
  for (const auto& [path, content] : fw.files) {
    const std::string full = dir + "/" + path;
    std::ofstream out(full, std::ios::binary);
    out << content;
    if (!out) return InvalidArgument("cannot write '" + full + "'");
  }
  return Status::Ok();
}

}  // namespace sramplan::codegen
