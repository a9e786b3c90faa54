// ToChannelsLast (canonicalize.h): NCHW -> NHWC with Transposes at the edges of the feature-map
// region.
#include <algorithm>
#include <map>
#include <set>

#include "transform/canonicalize.h"

namespace sramplan::transform {
namespace {

using ir::Graph;
using ir::Op;
using ir::Tensor;
using ir::TensorId;

// Ops whose kernels read the graph's layout (Describe(..., true) or ChannelAxis): every non-constant
// operand of rank >= 3 is a feature map.
bool LayoutBound(const std::string& t) {
  return t == "Conv" || t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool" ||
         t == "GlobalMaxPool" || t == "BatchNormalization";
}

bool IsReduce(const std::string& t) {
  return t == "ReduceMean" || t == "ReduceMax" || t == "ReduceMin" || t == "ReduceSum" || t == "ReduceProd";
}

// Ops that run on physical shapes and stay correct when their axis attributes follow the
// permutation: a feature map through them stays a feature map.
bool Transparent(const Op& op) {
  const std::string& t = op.type;
  if (t == "BatchNormalization") return false;
  if (ir::IsUnaryElementwise(t) || ir::IsBinaryElementwise(t)) return true;
  if (t == "Concat" || t == "Split" || t == "Softmax" || t == "LogSoftmax") return true;
  if (t == "Pad") return op.inputs.size() == 1;  // pads as an attribute (the importer's canonical form)
  if (t == "Slice") return op.inputs.size() == 1 && op.attrs.Has("starts");
  if (t == "Resize" || t == "Upsample") return op.inputs.size() == 1;
  if (IsReduce(t)) return op.attrs.GetInt("keepdims", 1) != 0 && op.attrs.Has("axes");
  return false;
}

bool IsData(const Tensor& t) { return t.kind != ir::TensorKind::kConstant; }

int64_t NewAxis(int64_t a, int rank) {
  if (a < 0) a += rank;
  if (a == 0) return 0;
  return a == 1 ? rank - 1 : a - 1;
}

std::vector<int64_t> Permute(const std::vector<int64_t>& v, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = v[perm[i]];
  return out;
}

// Attributes of a transparent op with rank-r feature maps, in channels-last axes.
void PermuteAttrs(Op* op, int r) {
  const auto perm = ChannelsLastPerm(r);
  const std::string& t = op->type;
  if (t == "Concat" || t == "Split" || t == "Softmax" || t == "LogSoftmax")
    op->attrs.Set("axis", NewAxis(op->attrs.GetInt("axis", t == "Concat" || t == "Split" ? 0 : -1), r));
  if (t == "Slice" || IsReduce(t)) {
    auto axes = op->attrs.GetInts("axes");
    if (t == "Slice" && axes.empty()) {
      axes.resize(op->attrs.GetInts("starts").size());
      for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    }
    for (auto& a : axes) a = NewAxis(a, r);
    op->attrs.Set("axes", axes);
  }
  if (t == "Pad") {
    auto pads = op->attrs.GetInts("pads");
    if (static_cast<int>(pads.size()) == 2 * r) {
      std::vector<int64_t> b(pads.begin(), pads.begin() + r), e(pads.begin() + r, pads.end());
      b = Permute(b, perm);
      e = Permute(e, perm);
      b.insert(b.end(), e.begin(), e.end());
      op->attrs.Set("pads", b);
    }
  }
  if (t == "Resize" || t == "Upsample") {
    for (const char* key : {"scales", "sizes"}) {
      if (!op->attrs.Has(key)) continue;
      auto f = op->attrs.GetFloats(key);
      if (static_cast<int>(f.size()) == r) {
        std::vector<double> n(r);
        for (int i = 0; i < r; ++i) n[i] = f[perm[i]];
        op->attrs.Set(key, n);
      } else {
        auto v = op->attrs.GetInts(key);
        if (static_cast<int>(v.size()) == r) op->attrs.Set(key, Permute(v, perm));
      }
    }
  }
}

struct Rewriter {
  const Graph& src;
  CanonicalizeReport* report;
  std::vector<char> fm;  // per source tensor: a feature map (permuted)
  Graph out;
  std::vector<TensorId> remap;
  std::map<int, TensorId> nchw_copy;  // source fm tensor -> its channels-first copy in `out`
  std::set<int> flatten_nhwc;             // source Flatten ops that read the channels-last map directly
  std::map<int, TensorId> fc_weights;     // source Gemm/MatMul op -> its weights with K in (h, w, c) order

  // A Flatten (axis 1) of a 4-D feature map whose every reader is a Gemm / MatMul taking it as A
  // with constant weights B reads the channels-last map directly, and B's K axis is permuted from
  // (c, h, w) to (h, w, c) once (as TFLite's converter does): no Transpose back to NCHW, no copy.
  void FoldFlattenIntoWeights() {
    for (const Op& op : src.ops()) {
      if (op.type != "Flatten" || op.inputs.size() != 1 || op.outputs.size() != 1) continue;
      const Tensor& x = src.tensor(op.inputs[0]);
      if (!fm[x.id.value()] || x.shape.size() != 4 || op.attrs.GetInt("axis", 1) != 1) continue;
      const Tensor& y = src.tensor(op.outputs[0]);
      if (y.kind != ir::TensorKind::kActivation || y.consumers.empty()) continue;
      const int64_t c = x.shape[1], hw = x.shape[2] * x.shape[3];
      // B is [N, K] for Gemm with transB, else [K, N].
      auto k_last = [&](const Op& fc) { return fc.type == "Gemm" && fc.attrs.GetInt("transB", 0) != 0; };
      bool ok = true;
      for (ir::OpId id : y.consumers) {
        const Op& fc = src.op(id);
        const bool gemm = fc.type == "Gemm" && fc.attrs.GetInt("transA", 0) == 0;
        ok = ok && (gemm || fc.type == "MatMul") && fc.inputs.size() >= 2 && fc.inputs[0] == y.id &&
             fc.inputs[1] != y.id && src.tensor(fc.inputs[1]).kind == ir::TensorKind::kConstant &&
             src.tensor(fc.inputs[1]).shape.size() == 2 &&
             src.tensor(fc.inputs[1]).shape[k_last(fc) ? 1 : 0] == c * hw;
      }
      if (!ok) continue;
      flatten_nhwc.insert(op.id.value());
      ++report->folded_flattens;
      if (c == 1 || hw == 1) continue;  // the same element order: the weights stay as they are
      for (ir::OpId id : y.consumers) {
        const Op& fc = src.op(id);
        const Tensor& b = src.tensor(fc.inputs[1]);
        Tensor n = b;
        n.name = b.name + ".nhwc_k";
        if (!b.data.empty()) {
          // K = (c, h, w) row-major as [C, HW]; (h, w, c) is its transpose [HW, C].
          const bool kl = k_last(fc);
          const int64_t other = kl ? b.shape[0] : b.shape[1];
          const std::vector<int64_t> shape = kl ? std::vector<int64_t>{other, c, hw} : std::vector<int64_t>{c, hw, other};
          const std::vector<int64_t> perm = kl ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0, 2};
          n.data = PermuteData(b.data, shape, perm, ir::DataTypeSize(b.dtype));
        }
        fc_weights[id.value()] = out.AddTensor(std::move(n));
        ++report->transposed_weights;
      }
    }
  }

  Status MarkFeatureMaps() {
    fm.assign(src.num_tensors(), 0);
    auto rank = [&](TensorId id) { return static_cast<int>(src.tensor(id).shape.size()); };
    for (const Op& op : src.ops()) {
      if (!LayoutBound(op.type)) continue;
      if (op.inputs.empty() || rank(op.inputs[0]) < 3)
        return InvalidArgument("op '" + op.name + "' (" + op.type +
                               ") has no feature map of rank 3 or more; it cannot be made channels-last");
      fm[op.inputs[0].value()] = 1;
      for (TensorId o : op.outputs) fm[o.value()] = 1;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Op& op : src.ops()) {
        if (!Transparent(op)) continue;
        bool any = false;
        int r = -1;
        for (const auto* list : {&op.inputs, &op.outputs})
          for (TensorId id : *list)
            if (fm[id.value()]) any = true, r = rank(id);
        if (!any) continue;
        for (const auto* list : {&op.inputs, &op.outputs})
          for (TensorId id : *list)
            if (IsData(src.tensor(id)) && rank(id) == r && !fm[id.value()]) fm[id.value()] = 1, changed = true;
      }
    }
    return Status::Ok();
  }

  // Copies every tensor; feature maps get channels-last shapes.
  void CopyTensors() {
    out.name = src.name;
    out.layout = ir::Layout::kNHWC;
    remap.resize(src.num_tensors());
    for (const Tensor& t : src.tensors()) {
      Tensor n = t;
      if (fm[t.id.value()]) {
        const int r = static_cast<int>(t.shape.size());
        n.shape = Permute(t.shape, ChannelsLastPerm(r));
        if (n.quant.scale.size() > 1) n.quant.axis = static_cast<int>(NewAxis(n.quant.axis, r));
        ++report->permuted_tensors;
      }
      remap[t.id.value()] = out.AddTensor(std::move(n));
    }
  }

  // A constant whose data is permuted (Conv weights, broadcast operands): a new tensor, as a
  // constant may be shared with an op that keeps channels-first.
  TensorId PermutedConstant(TensorId id, int r) {
    const Tensor& t = src.tensor(id);
    Tensor n = t;
    std::vector<int64_t> shape(r - t.shape.size(), 1);
    shape.insert(shape.end(), t.shape.begin(), t.shape.end());
    const auto perm = ChannelsLastPerm(r);
    n.name = t.name + ".nhwc";
    n.shape = Permute(shape, perm);
    if (!t.data.empty()) n.data = PermuteData(t.data, shape, perm, ir::DataTypeSize(t.dtype));
    if (n.quant.scale.size() > 1)
      n.quant.axis = static_cast<int>(NewAxis(n.quant.axis + (r - static_cast<int>(t.shape.size())), r));
    if (auto existing = out.FindTensor(n.name)) return *existing;
    ++report->transposed_weights;
    return out.AddTensor(std::move(n));
  }

  // The channels-first copy of feature map `id`, for an op that reads element order.
  TensorId ChannelsFirst(TensorId id) {
    auto it = nchw_copy.find(id.value());
    if (it != nchw_copy.end()) return it->second;
    const Tensor& t = src.tensor(id);
    Tensor n = t;
    n.name = t.name + ".nchw";
    n.kind = ir::TensorKind::kActivation;
    n.quant.axis = t.quant.axis;
    TensorId copy = out.AddTensor(std::move(n));
    AddLayoutOp(remap[id.value()], copy, t, /*to_last=*/false);
    nchw_copy.emplace(id.value(), copy);
    return copy;
  }

  // from -> to, between the channels-last and channels-first forms of `t`'s shape.
  void AddLayoutOp(TensorId from, TensorId to, const Tensor& t, bool to_last) {
    const int r = static_cast<int>(t.shape.size());
    int64_t spatial = 1;
    for (int i = 2; i < r; ++i) spatial *= t.shape[i];
    Op op;
    op.inputs = {from};
    op.outputs = {to};
    if (spatial == 1 || t.shape[1] == 1) {
      op.type = "Reshape";
      op.name = out.tensor(to).name + ".view";
      op.attrs.Set("shape", out.tensor(to).shape);
      ++report->inserted_views;
    } else {
      op.type = "Transpose";
      op.name = out.tensor(to).name + ".transpose";
      std::vector<int64_t> perm = ChannelsLastPerm(r);
      if (!to_last) {  // the inverse: channels-first axis i is channels-last axis inv[i]
        std::vector<int64_t> inv(r);
        for (int i = 0; i < r; ++i) inv[perm[i]] = i;
        perm = inv;
      }
      op.attrs.Set("perm", perm);
      ++report->inserted_transposes;
    }
    out.AddOp(std::move(op));
  }

  Status RewriteOps() {
    for (const Op& op : src.ops()) {
      Op n = op;
      const bool bound = LayoutBound(op.type), transparent = Transparent(op);
      int r = 0;
      for (TensorId id : op.outputs)
        if (fm[id.value()]) r = static_cast<int>(src.tensor(id).shape.size());
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        const TensorId id = op.inputs[i];
        const Tensor& t = src.tensor(id);
        n.inputs[i] = remap[id.value()];
        if (i == 0 && flatten_nhwc.count(op.id.value())) continue;  // reads the channels-last map
        if (i == 1 && fc_weights.count(op.id.value())) {
          n.inputs[i] = fc_weights.at(op.id.value());
          continue;
        }
        if (bound || transparent) {
          if (op.type == "Conv" && i == 1) {
            n.inputs[i] = PermutedConstant(id, static_cast<int>(t.shape.size()));
          } else if (transparent && r > 0 && !fm[id.value()] && t.shape.size() >= 2 &&
                     static_cast<int>(t.shape.size()) <= r && t.NumElements() > 1) {
            if (t.kind != ir::TensorKind::kConstant)
              return InvalidArgument("op '" + op.name + "' (" + op.type + ") broadcasts the activation '" + t.name +
                                     "' against a feature map; it cannot be made channels-last");
            n.inputs[i] = PermutedConstant(id, r);
          }
        } else if (fm[id.value()]) {
          n.inputs[i] = ChannelsFirst(id);
        }
      }
      if (transparent && r > 0) PermuteAttrs(&n, r);
      // Outputs that are feature maps but made by an op that writes channels-first.
      std::vector<std::pair<TensorId, TensorId>> after;  // (channels-first tmp, channels-last tensor)
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        const TensorId id = op.outputs[i];
        n.outputs[i] = remap[id.value()];
        if (bound || transparent || !fm[id.value()]) continue;
        const Tensor& t = src.tensor(id);
        Tensor tmp = t;
        tmp.name = t.name + ".nchw";
        tmp.kind = ir::TensorKind::kActivation;
        const TensorId tmp_id = out.AddTensor(std::move(tmp));
        n.outputs[i] = tmp_id;
        after.emplace_back(tmp_id, remap[id.value()]);
      }
      out.AddOp(std::move(n));
      for (auto [tmp, last] : after) {
        const Tensor channels_first = out.tensor(tmp);
        AddLayoutOp(tmp, last, channels_first, true);
      }
    }
    return Status::Ok();
  }
};

// The graph without the constants no op reads any more (the channels-first originals of the
// weights that were transposed).
Graph DropUnusedConstants(const Graph& g) {
  Graph out;
  out.name = g.name;
  out.layout = g.layout;
  std::vector<TensorId> remap(g.num_tensors());
  for (const Tensor& t : g.tensors())
    if (t.kind != ir::TensorKind::kConstant || !t.consumers.empty()) remap[t.id.value()] = out.AddTensor(t);
  for (const Op& op : g.ops()) {
    Op n = op;
    for (auto& id : n.inputs) id = remap[id.value()];
    for (auto& id : n.outputs) id = remap[id.value()];
    out.AddOp(std::move(n));
  }
  return out;
}

}  // namespace

Status ToChannelsLast(ir::Graph* g, CanonicalizeReport* report) {
  if (g->layout == ir::Layout::kNHWC) return Status::Ok();
  bool any_bound = false;
  for (const Op& op : g->ops()) any_bound |= LayoutBound(op.type);
  if (!any_bound) return Status::Ok();  // nothing reads a layout: leave the graph as it is
  Rewriter rw{*g, report, {}, {}, {}, {}, {}, {}};
  SP_RETURN_IF_ERROR(rw.MarkFeatureMaps());
  rw.CopyTensors();
  rw.FoldFlattenIntoWeights();
  SP_RETURN_IF_ERROR(rw.RewriteOps());
  *g = DropUnusedConstants(rw.out);
  return ir::VerifyGraph(*g);
}

}  // namespace sramplan::transform
