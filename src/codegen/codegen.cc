// C firmware from an int8 plan (codegen.h): the Emitter's indexes and names, its Run, and the public
// entry points.
#include "codegen/codegen.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/emitter.h"
#include "exec/executor.h"
#include "support/strings.h"

#ifndef SRAMPLAN_RUNTIME_DIR
#define SRAMPLAN_RUNTIME_DIR "runtime"
#endif

namespace sramplan::codegen {

Status Emitter::Index() {
  for (const auto& l : p_.levels)
    if (l.name == p_.arena_level) arena_level_ = &l;
  if (!arena_level_)
    return InvalidArgument("the plan names arena level '" + p_.arena_level +
                           "', which is not one of its levels");
  SP_RETURN_IF_ERROR(IndexPools());
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
  if (b->level == arena_level_->name || IsPool(b->level)) {
    loc.arena = true;
    loc.mem = MemName(b->level);
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
    (c.role == "segw" || c.role == "bias" || c.role == "dww" ? fw_.weight_bytes : fw_.table_bytes) +=
        static_cast<int64_t>(c.bytes.size());
  }
  return name;
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
  fw_.kernels = cpu == "cortex-m3"
                    ? "portable C (cortex-m3 has no DSP extension: no SXTB16/SMLAD)"
                    : "SIMD (SXTB16/SXTAB16 + SMLAD, " + cpu + " DSP extension)";
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
  for (const plan::Level* l : pools_) {
    fw_.pools.push_back({l->name, l->base, l->capacity, l->used_bytes});
    if (l->used_bytes > l->capacity) fw_.fits = false;
  }
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
      init += "  memcpy(" + loc.mem + " + " + std::to_string(loc.offset) + ", " + TensorArray(t.id) + ", " +
              std::to_string(head) + "); /* " + what + ", up to the pool's end */\n";
      init += "  memcpy(" + loc.mem + ", (const int8_t*)" + TensorArray(t.id) + " + " + std::to_string(head) + ", " +
              std::to_string(t.Bytes() - head) + "); /* " + what + ", wrapped to the pool's start */\n";
      continue;
    }
    init += "  memcpy(" + loc.mem + " + " + std::to_string(loc.offset) + ", " + TensorArray(t.id) +
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
  for (const plan::Level* l : pools_)
    if (l->used_bytes > l->capacity) fw_.fits = false;
  std::string checksum;
  for (ir::TensorId id : g_.Outputs()) {
    const ir::Tensor& t = g_.tensor(id);
    SP_ASSIGN_OR_RETURN(Loc loc, Locate(id, n - 1, "(graph output)"));
    if (!loc.arena) return Unsupported("graph output '" + t.name + "' is not in the arena level");
    checksum += "  h = sp_fnv1a(h, " + loc.mem + " + " + std::to_string(loc.offset) + ", " +
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
