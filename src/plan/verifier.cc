#include "plan/verifier.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

namespace sramplan::plan {
namespace {

const std::set<std::string>& ElementwiseTypes() {
  static const std::set<std::string> k = {"Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
                                          "Tanh", "Erf", "Sqrt", "Neg", "Exp", "Log", "Abs",
                                          "LeakyRelu", "Elu", "Gelu", "Reciprocal", "Cast",
                                          "BatchNormalization", "Add", "Sub", "Mul", "Div", "Pow",
                                          "Max", "Min"};
  return k;
}


// vMCU segment overlap: output buffer `out` starts below input buffer `in` of the same step. The
// distance in bytes must cover the step's access order, recomputed here byte by byte (no code shared
// with the planner's ISL analysis): the kernel runs steps j in order, each reading its input bytes
// before writing its output bytes, so for every j < i the last byte j writes must lie below the first
// byte i reads:  off(in) - off(out) >= max_{j<i} (last_write(j) - first_read(i)) + 1.
//   - Conv / DepthwiseConv (NHWC, batch 1): steps = output pixels in row-major order; a step reads
//     the input pixels of its window inside the image and writes its output pixel.
//   - a fused group Conv (1x1, or any kernel/stride/padding: a stem) -> DepthwiseConv -> Conv 1x1
//     [-> Add of the group input]: the same, with the depthwise window mapped through the expansion
//     (a 1x1 stride-1 expansion keeps pixel positions) and the residual pixel.
//   - Gemm / MatMul [M, K] x -> [M, N]: steps (m, chunk) with chunks of attrs segment_bytes output
//     bytes; every step of row m reads all of input row m.
std::string CheckSegmentOverlap(const Plan& p, const std::unordered_map<std::string, const Tensor*>& tensors,
                                const Buffer& in, const Buffer& out) {
  const int s = out.first_step;
  if (in.level != out.level) return "the two buffers are in different levels";
  if (in.last_step != s) return "the input must die at the step that writes the output (step " + std::to_string(s) + ")";
  if (s < 0 || s >= static_cast<int>(p.steps.size())) return "no such step";
  const auto& ops = p.steps[s].ops;
  const std::string& xin = in.tensor;
  auto shape = [&](const std::string& name) -> std::vector<int64_t> {
    auto t = tensors.find(name);
    return t == tensors.end() ? std::vector<int64_t>{} : t->second->shape;
  };
  auto attr = [](const StepOp& op, const char* k, std::vector<int64_t> d) {
    auto it = op.attrs.find(k);
    return it == op.attrs.end() ? d : it->second;
  };
  // Describe the access pattern.
  std::vector<int64_t> x, y;
  const StepOp* window_op = nullptr;
  const StepOp* expand_op = nullptr;  // fused group: its expansion (any Conv; the window runs on its output)
  std::vector<int64_t> mid;
  bool residual = false;
  bool fc = false;
  int64_t chunk = 0;
  if (ops.size() == 1) {
    const StepOp& op = ops[0];
    if (op.inputs.empty() || op.inputs[0] != xin || op.outputs.empty() || op.outputs[0] != out.tensor)
      return "step " + std::to_string(s) + " does not read the input and write the output directly";
    if (op.type == "Conv" || op.type == "DepthwiseConv") {
      window_op = &op;
    } else if (op.type == "Gemm" || op.type == "MatMul") {
      fc = true;
      chunk = attr(op, "segment_bytes", {0})[0];
    } else {
      return "op type '" + op.type + "' has no segment-level access model";
    }
    x = shape(op.inputs[0]);
    y = shape(op.outputs[0]);
  } else if (ops.size() == 3 || ops.size() == 4) {
    if (ops[0].type != "Conv" || ops[1].type != "DepthwiseConv" || ops[2].type != "Conv" || ops[0].inputs.empty() ||
        ops[0].inputs[0] != xin || ops[0].outputs.empty() ||
        attr(ops[2], "kernel_shape", {}) != std::vector<int64_t>{1, 1} ||
        attr(ops[2], "strides", {1, 1}) != std::vector<int64_t>{1, 1} || attr(ops[0], "group", {1}) != std::vector<int64_t>{1})
      return "step " + std::to_string(s) + " is not a fused inverted bottleneck reading '" + xin + "'";
    window_op = &ops[1];
    expand_op = &ops[0];
    mid = shape(ops[0].outputs[0]);
    if (ops.size() == 4) {
      if (ops[3].type != "Add" || ops[3].outputs.empty() || ops[3].outputs[0] != out.tensor ||
          std::find(ops[3].inputs.begin(), ops[3].inputs.end(), xin) == ops[3].inputs.end())
        return "the fourth op of the fused group must add the group input and write the output";
      residual = true;
    } else if (ops[2].outputs.empty() || ops[2].outputs[0] != out.tensor) {
      return "the fused group does not write '" + out.tensor + "'";
    }
    x = shape(xin);
    y = shape(out.tensor);
  } else {
    return "step " + std::to_string(s) + " has no segment-level access model";
  }
  // Steps: first byte read and last byte written, in execution order.
  std::vector<int64_t> first_read, last_write;
  if (window_op) {
    if (x.size() != 4 || y.size() != 4 || x[0] != 1 || y[0] != 1) return "segment overlap needs NHWC batch-1 tensors";
    auto k = attr(*window_op, "kernel_shape", {1, 1});
    auto st = attr(*window_op, "strides", {1, 1});
    auto pads = attr(*window_op, "pads", {0, 0, 0, 0});
    auto dil = attr(*window_op, "dilations", {1, 1});
    if (k.size() != 2 || st.size() != 2 || pads.size() != 4 || dil != std::vector<int64_t>{1, 1})
      return "unsupported convolution geometry";
    const int64_t H = x[1], W = x[2], C = x[3], P = y[1], Q = y[2], K = y[3];
    // The expansion of a fused group maps input pixels to the plane the window runs on (identity
    // for a 1x1 stride-1 expansion): plane pixel (h, w) reads input rows h*es0 - ep0 + [0, ek0) and
    // columns w*es1 - ep1 + [0, ek1), clipped to the image.
    std::vector<int64_t> ek{1, 1}, es{1, 1}, ep{0, 0, 0, 0};
    int64_t MH = H, MW = W;
    if (expand_op) {
      ek = attr(*expand_op, "kernel_shape", {1, 1});
      es = attr(*expand_op, "strides", {1, 1});
      ep = attr(*expand_op, "pads", {0, 0, 0, 0});
      if (ek.size() != 2 || es.size() != 2 || ep.size() != 4 || attr(*expand_op, "dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
          es[0] < 1 || es[1] < 1 || mid.size() != 4)
        return "unsupported expansion geometry";
      MH = mid[1];
      MW = mid[2];
      if (residual && (ek != std::vector<int64_t>{1, 1} || es != std::vector<int64_t>{1, 1}))
        return "a fused group with a residual add needs a 1x1 stride-1 expansion";
    }
    for (int64_t pp = 0; pp < P; ++pp)
      for (int64_t q = 0; q < Q; ++q) {
        int64_t lo = INT64_MAX;
        for (int64_t r = 0; r < k[0]; ++r) {
          const int64_t h = pp * st[0] - pads[0] + r;
          if (h < 0 || h >= MH) continue;
          for (int64_t c = 0; c < k[1]; ++c) {
            const int64_t w = q * st[1] - pads[1] + c;
            if (w < 0 || w >= MW) continue;
            // The first input byte plane pixel (h, w) reads: its top-left tap inside the image.
            const int64_t h0 = std::max<int64_t>(0, h * es[0] - ep[0]), w0 = std::max<int64_t>(0, w * es[1] - ep[1]);
            if (h0 >= H || w0 >= W || h0 > h * es[0] - ep[0] + ek[0] - 1 || w0 > w * es[1] - ep[1] + ek[1] - 1) continue;
            lo = std::min(lo, (h0 * W + w0) * C);
          }
        }
        if (residual && pp < H && q < W) lo = std::min(lo, (pp * W + q) * C);
        first_read.push_back(lo);
        last_write.push_back((pp * Q + q + 1) * K - 1);
      }
  } else if (fc) {
    if (x.size() != 2 || y.size() != 2 || chunk <= 0) return "fully connected overlap needs [M, K] tensors and segment_bytes";
    const int64_t M = x[0], Kx = x[1], N = y[1];
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c0 = 0; c0 < N; c0 += chunk) {
        first_read.push_back(m * Kx);
        last_write.push_back(m * N + std::min(c0 + chunk, N) - 1);
      }
  }
  int64_t need = 0;
  int64_t suffix = INT64_MAX;
  for (size_t j = first_read.size(); j-- > 0;) {
    if (suffix != INT64_MAX) need = std::max(need, last_write[j] - suffix + 1);
    suffix = std::min(suffix, first_read[j]);
  }
  int64_t have = in.offset - out.offset;
  if (const Pool* pool = FindPool(p, in.level); pool && pool->bytes > 0) {
    // Modulo the pool; the kernels also need the output's head not to wrap onto the input's tail.
    have = ((have % pool->bytes) + pool->bytes) % pool->bytes;
    if (have + in.bytes > pool->bytes || out.bytes > pool->bytes)
      return "in the circular pool of " + std::to_string(pool->bytes) + " bytes the output starts " + std::to_string(have) +
             " bytes below the input, so the " + std::to_string(in.bytes) + "-byte input would wrap onto the output's head";
  }
  if (have < need)
    return "the output starts " + std::to_string(have) + " bytes below the input, but the step's access order needs " +
           std::to_string(need);
  return "";
}

}  // namespace

std::string VerifyResult::Summary(size_t max_lines) const {
  std::string s;
  size_t n = 0;
  for (const auto* list : {&errors, &capacity})
    for (const auto& e : *list) {
      if (n++ == max_lines) {
        s += "  ... (" + std::to_string(errors.size() + capacity.size() - max_lines) + " more)\n";
        return s;
      }
      s += "  " + e + "\n";
    }
  return s;
}

VerifyResult VerifyPlan(const Plan& p) {
  VerifyResult r;
  auto err = [&](std::string m) {
    if (r.errors.size() < 1000) r.errors.push_back(std::move(m));
  };
  const int n = static_cast<int>(p.steps.size());
  // Tensors.
  std::unordered_map<std::string, const Tensor*> tensors;
  for (const auto& t : p.tensors) {
    if (!tensors.emplace(t.name, &t).second) err("tensor '" + t.name + "' is listed twice");
    if (t.bytes < 0) err("tensor '" + t.name + "' has negative bytes");
  }
  auto root_of = [&](const std::string& name) {
    std::string cur = name;
    for (int guard = 0; guard < 64; ++guard) {
      auto it = tensors.find(cur);
      if (it == tensors.end() || it->second->alias_of.empty()) return cur;
      cur = it->second->alias_of;
    }
    return cur;
  };
  // Steps: numbering, producers.
  std::unordered_map<std::string, int> produced_at;
  std::unordered_map<std::string, const StepOp*> op_of_step_output;
  std::set<std::string> op_names;
  for (int s = 0; s < n; ++s) {
    const Step& st = p.steps[s];
    if (st.index != s) err("step " + std::to_string(s) + " has index " + std::to_string(st.index));
    if (st.ops.empty()) err("step " + std::to_string(s) + " runs no op");
    for (const auto& op : st.ops) {
      if (!op_names.insert(op.name).second) err("op '" + op.name + "' appears in two steps");
      for (const auto& out : op.outputs) {
        if (!tensors.count(out)) err("step " + std::to_string(s) + " op '" + op.name + "' writes unknown tensor '" + out + "'");
        if (produced_at.count(out)) err("tensor '" + out + "' is produced twice");
        produced_at[out] = s;
      }
    }
  }
  // Dependencies (inside a fused step, ops run in their listed order).
  std::unordered_map<std::string, size_t> position_in_step;
  for (int s = 0; s < n; ++s)
    for (size_t k = 0; k < p.steps[s].ops.size(); ++k)
      for (const auto& out : p.steps[s].ops[k].outputs) position_in_step[out] = k;
  for (int s = 0; s < n; ++s)
    for (size_t k = 0; k < p.steps[s].ops.size(); ++k)
      for (const auto& in : p.steps[s].ops[k].inputs) {
        const StepOp& op = p.steps[s].ops[k];
        auto it = tensors.find(in);
        if (it == tensors.end()) {
          err("step " + std::to_string(s) + " op '" + op.name + "' reads unknown tensor '" + in + "'");
          continue;
        }
        const std::string& kind = it->second->kind;
        if (kind == "input" || kind == "constant") continue;
        auto pr = produced_at.find(in);
        if (pr == produced_at.end())
          err("op '" + op.name + "' reads '" + in + "', which no step produces");
        else if (pr->second > s || (pr->second == s && position_in_step[in] >= k))
          err("dependency violated: step " + std::to_string(s) + " op '" + op.name + "' reads '" + in +
              "', produced at step " + std::to_string(pr->second));
      }
  for (const auto& t : p.tensors)
    if ((t.kind == "activation" || t.kind == "output") && !produced_at.count(t.name))
      err("tensor '" + t.name + "' (" + t.kind + ") is never produced");
  // Levels and buffers.
  std::unordered_map<std::string, const Level*> levels;
  for (const auto& l : p.levels) levels[l.name] = &l;
  std::unordered_map<std::string, std::vector<const Buffer*>> buffers_of;
  std::map<std::string, int64_t> used;
  for (const auto& b : p.buffers) {
    std::string what = "buffer of '" + b.tensor + "'";
    auto t = tensors.find(b.tensor);
    if (t == tensors.end()) {
      err(what + " names an unknown tensor");
      continue;
    }
    auto l = levels.find(b.level);
    if (l == levels.end()) {
      err(what + " is in unknown level '" + b.level + "'");
      continue;
    }
    if (b.offset < 0) err(what + " has negative offset " + std::to_string(b.offset));
    if (b.bytes < t->second->bytes)
      err(what + " has " + std::to_string(b.bytes) + " bytes but the tensor needs " + std::to_string(t->second->bytes));
    if (b.first_step < 0 || b.last_step >= std::max(n, 1) || b.first_step > b.last_step)
      err(what + " has an invalid live range [" + std::to_string(b.first_step) + ", " + std::to_string(b.last_step) + "]");
    if (!t->second->alias_of.empty()) err(what + ": '" + b.tensor + "' is a view and must not own a buffer");
    const Pool* pool = FindPool(p, b.level);
    if (pool && (b.offset >= pool->bytes || b.bytes > pool->bytes))
      err(what + " [" + std::to_string(b.offset) + ", +" + std::to_string(b.bytes) +
          ") does not start inside the circular pool of level '" + b.level + "' (" + std::to_string(pool->bytes) +
          " bytes), or is larger than the pool");
    int64_t end = 0;
    for (const auto& [lo, hi] : BufferPieces(p, b)) end = std::max(end, hi);
    if (b.offset > l->second->capacity || end > l->second->capacity)
      r.capacity.push_back(what + " ends at byte " + std::to_string(end) + " of level '" + b.level +
                           "', which has " + std::to_string(l->second->capacity) + " bytes");
    used[b.level] = std::max(used[b.level], end);
    buffers_of[b.tensor].push_back(&b);
  }
  // Circular pools: one per on-chip level, covering the level's used bytes; a buffer that wraps is
  // touched only by the segment kernels, as the data input or output of a segment step, never by a
  // transfer, and is not a graph output (the application reads outputs as plain arrays).
  {
    std::set<std::string> pool_levels;
    for (const Pool& pool : p.pools) {
      const std::string what = "circular pool of level '" + pool.level + "'";
      auto l = levels.find(pool.level);
      if (l == levels.end()) {
        err(what + ": no such level");
        continue;
      }
      if (!pool_levels.insert(pool.level).second) err(what + " is declared twice");
      if (l->second->kind == "flash" || l->second->kind == "dram") err(what + ": the level is off-chip");
      if (pool.bytes <= 0 || pool.segment_bytes < 1)
        err(what + " has " + std::to_string(pool.bytes) + " bytes and segments of " + std::to_string(pool.segment_bytes));
      else if (pool.bytes != used[pool.level])
        err(what + " has " + std::to_string(pool.bytes) + " bytes but must cover the level's used " +
            std::to_string(used[pool.level]) + " bytes (the kernels address the whole level modulo its size)");
    }
    for (const auto& b : p.buffers) {
      if (!Wraps(p, b)) continue;
      const std::string what = "buffer of '" + b.tensor + "' wraps around the circular pool of level '" + b.level + "'";
      auto t = tensors.find(b.tensor);
      if (t != tensors.end() && (t->second->kind == "output" || t->second->kind == "constant"))
        err(what + " but is a graph " + t->second->kind + "; place it without wrapping");
      for (const auto& tr : p.transfers)
        if (tr.tensor == b.tensor && tr.step >= b.first_step && tr.step <= b.last_step)
          err(what + " but is moved by a " + tr.kind + " at step " + std::to_string(tr.step) + "; transfers copy plain ranges");
      for (int s = std::max(b.first_step, 0); s <= b.last_step && s < n; ++s) {
        const auto& ops = p.steps[s].ops;
        bool touched = false;
        for (const auto& op : ops) {
          for (const auto& in : op.inputs) touched = touched || root_of(in) == b.tensor;
          for (const auto& out : op.outputs) touched = touched || out == b.tensor;
        }
        if (!touched) continue;
        const bool pool_operand = !ops.empty() && ((!ops.front().inputs.empty() && root_of(ops.front().inputs[0]) == b.tensor) ||
                                                   (!ops.back().outputs.empty() && ops.back().outputs[0] == b.tensor));
        bool other_use = false;  // read or written by an op of the step other than as the pool operand
        for (size_t k = 0; k < ops.size(); ++k) {
          for (size_t i = 0; i < ops[k].inputs.size(); ++i)
            if (root_of(ops[k].inputs[i]) == b.tensor && !(k == 0 && i == 0) &&
                !(ops.size() == 4 && k == 3))  // the fused residual Add reads the group input
              other_use = true;
          for (size_t i = 0; i < ops[k].outputs.size(); ++i)
            if (ops[k].outputs[i] == b.tensor && !(k + 1 == ops.size() && i == 0)) other_use = true;
        }
        if (!IsSegmentStep(p, s) || !pool_operand || other_use)
          err(what + " but step " + std::to_string(s) + " ('" + (ops.empty() ? std::string() : ops.front().name) +
              "') is not a segment step using it as its pool input or output; only the segment kernels address "
              "the pool modulo");
      }
    }
  }
  // Fused intermediates: tensors produced and entirely consumed inside one multi-op step (a fused
  // group computes them tile by tile in its workspace) need no buffer of their own.
  std::set<std::string> fused;
  for (int s = 0; s < n; ++s) {
    if (p.steps[s].ops.size() < 2) continue;
    std::set<std::string> names;
    for (const auto& op : p.steps[s].ops) names.insert(op.name);
    for (const auto& op : p.steps[s].ops)
      for (const auto& out : op.outputs) {
        auto t = tensors.find(out);
        if (t == tensors.end() || t->second->kind != "activation" || t->second->consumers.empty()) continue;
        bool inside = true;
        for (const auto& c : t->second->consumers) inside = inside && names.count(c);
        if (inside) fused.insert(out);
      }
  }
  // Residency: every input and output of a step is covered by a buffer of its storage tensor.
  for (int s = 0; s < n; ++s)
    for (const auto& op : p.steps[s].ops) {
      for (int io = 0; io < 2; ++io)
        for (const auto& name : io == 0 ? op.inputs : op.outputs) {
          if (!tensors.count(name) || fused.count(name)) continue;
          std::string root = root_of(name);
          bool ok = false;
          for (const Buffer* b : buffers_of[root])
            if (b->first_step <= s && s <= b->last_step) ok = true;
          if (!ok)
            err(std::string(io == 0 ? "input" : "output") + " '" + name + "'" +
                (root != name ? " (view of '" + root + "')" : "") + " of step " + std::to_string(s) +
                " op '" + op.name + "' is not resident: no buffer covers step " + std::to_string(s));
        }
    }
  // Transfers (plan-format.md): loads/reloads copy off chip -> on chip before the step's ops, into a
  // buffer that starts at that step; spills/stores copy on chip -> off chip after them, from a buffer
  // live at that step into one live from that step on. Data must exist where it is copied from.
  std::unordered_map<std::string, bool> offchip_level;
  for (const auto& l : p.levels) offchip_level[l.name] = l.kind == "dram" || l.kind == "flash";
  {
    // Earliest step at which each tensor's data exists in each level.
    std::map<std::pair<std::string, std::string>, int> valid_from;  // (tensor, level) -> step
    for (const auto& t : p.tensors)
      if (t.kind == "input" || t.kind == "constant")
        for (const Buffer* b : buffers_of[t.name])
          if (offchip_level[b->level] && b->first_step == 0) valid_from[{t.name, b->level}] = -1;
    std::vector<const Transfer*> order;
    for (const auto& tr : p.transfers) order.push_back(&tr);
    auto after = [](const Transfer* t) { return t->kind == "spill" || t->kind == "store"; };
    std::stable_sort(order.begin(), order.end(), [&](const Transfer* a, const Transfer* b) {
      return a->step != b->step ? a->step < b->step : after(a) < after(b);
    });
    std::set<std::pair<std::string, int>> filled;  // (tensor, step) buffers filled by a transfer
    for (const Transfer* tr : order) {
      std::string what = tr->kind + " of '" + tr->tensor + "' at step " + std::to_string(tr->step);
      auto t = tensors.find(tr->tensor);
      if (t == tensors.end()) {
        err(what + " names an unknown tensor");
        continue;
      }
      if (tr->kind != "load" && tr->kind != "reload" && tr->kind != "spill" && tr->kind != "store") {
        err(what + ": unknown kind (load, reload, spill, store)");
        continue;
      }
      if (!levels.count(tr->from) || !levels.count(tr->to) || tr->from == tr->to) {
        err(what + ": from '" + tr->from + "' to '" + tr->to + "' must name two different levels");
        continue;
      }
      if (tr->step < 0 || tr->step >= n) {
        err(what + ": no such step");
        continue;
      }
      if (tr->bytes != t->second->bytes) err(what + " moves " + std::to_string(tr->bytes) + " bytes, the tensor has " + std::to_string(t->second->bytes));
      const bool in = tr->kind == "load" || tr->kind == "reload";
      if (in && (!offchip_level[tr->from] || offchip_level[tr->to])) err(what + " must copy from an off-chip level to an on-chip one");
      if (!in && (offchip_level[tr->from] || !offchip_level[tr->to])) err(what + " must copy from an on-chip level to an off-chip one");
      const Buffer *src = nullptr, *dst = nullptr;
      for (const Buffer* b : buffers_of[tr->tensor]) {
        if (b->level == tr->from && b->first_step <= tr->step && tr->step <= b->last_step) src = b;
        if (b->level == tr->to && b->first_step <= tr->step && tr->step <= b->last_step) dst = b;
      }
      if (!src || !dst) {
        err(what + ": no buffer of the tensor in '" + (src ? tr->to : tr->from) + "' is live at that step");
        continue;
      }
      auto v = valid_from.find({tr->tensor, tr->from});
      const bool src_valid = v != valid_from.end() && (in ? v->second < tr->step : v->second <= tr->step);
      // On chip, the data is valid from its production step in the buffer that covers it.
      auto pr = produced_at.find(tr->tensor);
      const bool produced_here = !in && pr != produced_at.end() && pr->second <= tr->step &&
                                 src->first_step <= pr->second;
      const bool filled_here = !in && filled.count({tr->tensor, src->first_step}) > 0;
      if (!src_valid && !produced_here && !filled_here)
        err(what + ": the tensor's data is not in '" + tr->from + "' at that step");
      if (in) {
        if (dst->first_step != tr->step) err(what + ": the on-chip buffer must start at the step of the load");
        filled.insert({tr->tensor, tr->step});
      } else {
        // The copy exists off chip from after this step (a later reload may read it).
        valid_from.emplace(std::make_pair(tr->tensor, tr->to), tr->step);
      }
    }
    // Every on-chip buffer of a produced tensor that starts after its production is filled by a load.
    for (const auto& b : p.buffers) {
      if (offchip_level[b.level]) continue;
      auto pr = produced_at.find(b.tensor);
      auto t = tensors.find(b.tensor);
      if (t == tensors.end()) continue;
      const bool has_offchip = [&] {
        for (const Buffer* o : buffers_of[b.tensor])
          if (offchip_level[o->level]) return true;
        return false;
      }();
      const bool initial = (t->second->kind == "input" || t->second->kind == "constant") && !has_offchip;
      const bool produced = pr != produced_at.end() && pr->second == b.first_step;
      if (!initial && !produced && !filled.count({b.tensor, b.first_step}) && t->second->kind != "scratch" &&
          t->second->alias_of.empty())
        err("buffer of '" + b.tensor + "' in '" + b.level + "' from step " + std::to_string(b.first_step) +
            " holds no data: it starts neither at the tensor's production nor with a load");
    }
  }
  // Off-chip bytes: transfers plus ops reading (writing) tensors that only have an off-chip buffer.
  {
    int64_t rd = 0, wr = 0, nc_rd = 0, nc_wr = 0;
    for (const auto& tr : p.transfers) {
      const bool in = tr.kind == "load" || tr.kind == "reload";
      (in ? rd : wr) += tr.bytes;
      if (tr.kind == "reload") nc_rd += tr.bytes;
      if (tr.kind == "spill") nc_wr += tr.bytes;
    }
    for (int s = 0; s < n; ++s)
      for (const auto& op : p.steps[s].ops)
        for (int io = 0; io < 2; ++io) {
          if (io == 1 && (op.type == "Reshape" || op.type == "Flatten" || op.type == "Squeeze" || op.type == "Unsqueeze" ||
                          op.type == "Identity" || op.type == "Dropout"))
            continue;
          for (const auto& name : io == 0 ? op.inputs : op.outputs) {
            auto t = tensors.find(name);
            if (t == tensors.end()) continue;
            const Buffer* hit = nullptr;
            for (const Buffer* b : buffers_of[root_of(name)])
              if (b->first_step <= s && s <= b->last_step && (!hit || (offchip_level[hit->level] && !offchip_level[b->level])))
                hit = b;
            if (hit && offchip_level[hit->level]) (io == 0 ? rd : wr) += t->second->bytes;
          }
        }
    if (rd != p.metrics.offchip_read_bytes || wr != p.metrics.offchip_write_bytes)
      err("metrics report " + std::to_string(p.metrics.offchip_read_bytes) + " off-chip bytes read and " +
          std::to_string(p.metrics.offchip_write_bytes) + " written; the plan's transfers and off-chip operands add up to " +
          std::to_string(rd) + " and " + std::to_string(wr));
    if (nc_rd != p.metrics.noncompulsory_read_bytes || nc_wr != p.metrics.noncompulsory_write_bytes)
      err("metrics report " + std::to_string(p.metrics.noncompulsory_read_bytes) + "/" +
          std::to_string(p.metrics.noncompulsory_write_bytes) + " non-compulsory bytes read/written; reloads and spills add up to " +
          std::to_string(nc_rd) + "/" + std::to_string(nc_wr));
  }
  // Declared overlaps: legal only as the in-place rules allow.
  std::set<std::pair<std::string, std::string>> allowed;
  std::unordered_map<std::string, const Buffer*> first_buffer;
  for (const auto& b : p.buffers) first_buffer.emplace(b.tensor, &b);
  for (const auto& b : p.buffers)
    for (const auto& o : b.overlaps) {
      std::string what = "declared overlap of '" + b.tensor + "' with '" + o.tensor + "'";
      auto ob = first_buffer.find(o.tensor);
      if (ob == first_buffer.end()) {
        err(what + ": no buffer for '" + o.tensor + "'");
        continue;
      }
      const Buffer& a = *ob->second;
      if (o.reason == "segment-overlap") {
        // In a circular pool the output sits (in - out) mod pool bytes below the input.
        int64_t diff = b.offset - a.offset;
        if (const Pool* pool = FindPool(p, b.level); pool && pool->bytes > 0 && a.level == b.level)
          diff = -((((a.offset - b.offset) % pool->bytes) + pool->bytes) % pool->bytes);
        std::string why = o.shift != diff ? "declared shift " + std::to_string(o.shift) + " is not the offsets' difference " + std::to_string(diff)
                                          : CheckSegmentOverlap(p, tensors, a, b);
        if (!why.empty()) {
          err(what + ": " + why);
          continue;
        }
        allowed.insert({b.tensor, o.tensor});
        allowed.insert({o.tensor, b.tensor});
        continue;
      }
      if (o.reason != "inplace-elementwise" && o.reason != "inplace-depthwise") {
        err(what + ": unknown reason '" + o.reason + "'");
        continue;
      }
      int s = b.first_step;
      if (a.last_step != s || a.level != b.level) {
        err(what + ": in-place needs '" + o.tensor + "' to die at step " + std::to_string(s) + " where '" +
            b.tensor + "' is born (it dies at " + std::to_string(a.last_step) + ")");
        continue;
      }
      if (o.shift != 0 || b.offset != a.offset || b.bytes > a.bytes) {
        err(what + ": in-place output must sit at the input's offset and be no larger");
        continue;
      }
      bool legal = false;
      if (s >= 0 && s < n)
        for (const auto& op : p.steps[s].ops) {
          bool writes = std::find(op.outputs.begin(), op.outputs.end(), b.tensor) != op.outputs.end();
          bool reads = false;
          for (const auto& in : op.inputs)
            if (root_of(in) == o.tensor) reads = true;
          bool kind_ok = o.reason == "inplace-depthwise" ? op.type == "DepthwiseConv"
                                                         : ElementwiseTypes().count(op.type) > 0;
          if (writes && reads && kind_ok) legal = true;
        }
      if (!legal) {
        err(what + ": step " + std::to_string(s) + " has no " +
            (o.reason == "inplace-depthwise" ? "depthwise convolution" : "element-wise op") + " that reads '" +
            o.tensor + "' and writes '" + b.tensor + "'");
        continue;
      }
      allowed.insert({b.tensor, o.tensor});
      allowed.insert({o.tensor, b.tensor});
    }
  // No two buffers of a level live at the same step share a byte. Sweep by first_step.
  std::map<std::string, std::vector<const Buffer*>> by_level;
  for (const auto& b : p.buffers) by_level[b.level].push_back(&b);
  for (auto& [level, list] : by_level) {
    std::sort(list.begin(), list.end(), [](const Buffer* a, const Buffer* b) {
      return a->first_step != b->first_step ? a->first_step < b->first_step : a->offset < b->offset;
    });
    std::vector<std::vector<std::pair<int64_t, int64_t>>> pieces;  // once per buffer, not per pair
    pieces.reserve(list.size());
    for (const Buffer* b : list) pieces.push_back(BufferPieces(p, *b));
    for (size_t i = 0; i < list.size(); ++i)
      for (size_t j = i + 1; j < list.size() && list[j]->first_step <= list[i]->last_step; ++j) {
        const Buffer& a = *list[i];
        const Buffer& b = *list[j];
        if (a.bytes == 0 || b.bytes == 0) continue;
        bool space = false;
        for (const auto& [alo, ahi] : pieces[i])
          for (const auto& [blo, bhi] : pieces[j]) space = space || (alo < bhi && blo < ahi);
        if (!space || allowed.count({a.tensor, b.tensor})) continue;
        err("buffers of '" + a.tensor + "' [" + std::to_string(a.offset) + ", " + std::to_string(a.offset + a.bytes) +
            ") and '" + b.tensor + "' [" + std::to_string(b.offset) + ", " + std::to_string(b.offset + b.bytes) +
            ") in level '" + level + "' overlap while both are live at step " +
            std::to_string(std::max(a.first_step, b.first_step)));
      }
  }
  // Reported sizes.
  for (const auto& l : p.levels) {
    if (l.used_bytes != used[l.name])
      err("level '" + l.name + "' reports used_bytes " + std::to_string(l.used_bytes) + " but its buffers reach " +
          std::to_string(used[l.name]));
    if (l.capacity <= 0) err("level '" + l.name + "' has no capacity");
  }
  if (p.metrics.fits != r.capacity.empty())
    err(std::string("metrics.fits says ") + (p.metrics.fits ? "true" : "false") + " but the buffers " +
        (r.capacity.empty() ? "fit" : "overflow a level"));
  return r;
}

}  // namespace sramplan::plan
