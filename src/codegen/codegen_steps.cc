// The steps of sramplan_run: the kernel calls exec::LowerStep gives each plan step, printed as C.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/emitter.h"
#include "sramplan_rt_seg.h"
#include "support/strings.h"

namespace sramplan::codegen {

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
  std::string scratch_mem = "sramplan_arena";
  if (lo.in_place) {
    if (scratch->level != arena_level_->name && !IsPool(scratch->level))
      return Unsupported(what + ": its scratch buffer lives outside the arena level");
    scratch_mem = MemName(scratch->level);
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
                       "models: canonicalise the graph (the default for ONNX; drop --no-canonicalize, or pass "
                       "--canonicalize for other formats)");
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
        a.base = scratch_mem;
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
      a.base = loc->mem;
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
      std::string args, dw_desc, dw_weights;
      const bool dw_repacked = DepthwiseRepack(k, in, &dw_desc, &dw_weights);
      for (size_t a = 0; a < k.args.size(); ++a) {
        const std::string param = sig.params[a];
        const exec::CallArg& v = k.args[a];
        std::string e;
        if (dw_repacked && (a == 3 || a == 4)) {
          e = a == 3 ? dw_desc : "(const int8_t*)" + dw_weights;
        } else if (const auto* d = std::get_if<sp_tensor_t>(&v)) {
          e = "&";  // appended, not "&" + ...: GCC 12 warns falsely (-Wrestrict) on that form here
          e += DescName(*d);
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
  std::string init = "{";  // appended (GCC 12 warns falsely, -Wrestrict, on "{" + ...)
  init += ConstName(w) + ", " + bias + ", " + ConstName(rq) + ", " + Str(l.in_zp) + ", " + Str(l.out_zp) +
          ", " + Str(l.act_min) + ", " + Str(l.act_max) + "}";
  return init;
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
  if (!pools_.empty())
    return Unsupported(where + ": a segment step in a plan with memory pools (the segment kernels address one arena)");
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

}  // namespace sramplan::codegen
