#include "transform/canonicalize.h"

#include <numeric>

#include "ir/shape_inference.h"

namespace sramplan::transform {

std::string CanonicalizeReport::Summary() const {
  return "canonicalised: " + std::to_string(unshared_biases) + " shared biases copied, " + std::to_string(folded_activations) + " activations folded into their Conv, " +
         std::to_string(permuted_tensors) + " feature maps channels-last, " + std::to_string(transposed_weights) +
         " constants transposed, " + std::to_string(inserted_transposes) + " Transpose and " +
         std::to_string(inserted_views) + " Reshape ops inserted" +
         (folded_flattens ? ", " + std::to_string(folded_flattens) + " Flatten read channels-last (FC weights permuted)"
                          : "");
}

std::vector<int64_t> ChannelsLastPerm(int rank) {
  std::vector<int64_t> p;
  if (rank < 3) {
    p.resize(rank);
    std::iota(p.begin(), p.end(), 0);
    return p;
  }
  p.push_back(0);
  for (int i = 2; i < rank; ++i) p.push_back(i);
  p.push_back(1);
  return p;
}

std::vector<uint8_t> PermuteData(const std::vector<uint8_t>& data, const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& perm, int elem_bytes) {
  const int r = static_cast<int>(shape.size());
  std::vector<int64_t> old_stride(r, 1), new_shape(r), new_stride(r, 1);
  for (int i = r - 2; i >= 0; --i) old_stride[i] = old_stride[i + 1] * shape[i + 1];
  for (int i = 0; i < r; ++i) new_shape[i] = shape[perm[i]];
  for (int i = r - 2; i >= 0; --i) new_stride[i] = new_stride[i + 1] * new_shape[i + 1];
  const int64_t n = static_cast<int64_t>(data.size()) / elem_bytes;
  std::vector<uint8_t> out(data.size());
  std::vector<int64_t> idx(r, 0);  // index in the new tensor
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int i = 0; i < r; ++i) src += idx[i] * old_stride[perm[i]];
    std::copy_n(data.begin() + src * elem_bytes, elem_bytes, out.begin() + k * elem_bytes);
    for (int i = r - 1; i >= 0; --i) {
      if (++idx[i] < new_shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

StatusOr<CanonicalizeReport> Canonicalize(ir::Graph* g, const CanonicalizeOptions& options) {
  CanonicalizeReport report;
  if (options.unshare_biases) SP_RETURN_IF_ERROR(UnshareBiases(g, &report));
  if (options.fold_activations) SP_RETURN_IF_ERROR(FoldActivations(g, &report));
  if (options.channels_last) SP_RETURN_IF_ERROR(ToChannelsLast(g, &report));
  return report;
}

// ---------------------------------------------------------------------------------------------
// UnshareBiases

Status UnshareBiases(ir::Graph* g, CanonicalizeReport* report) {
  // Readers of each constant; a constant that is a Conv/Gemm bias and has more than one reader
  // gets a copy for every reader after the first.
  std::vector<int> readers(g->num_tensors(), 0);
  std::vector<char> is_bias(g->num_tensors(), 0);
  for (const ir::Op& op : g->ops()) {
    for (ir::TensorId in : op.inputs) ++readers[in.value()];
    if ((op.type == "Conv" || op.type == "Gemm") && op.inputs.size() >= 3) is_bias[op.inputs[2].value()] = 1;
  }
  bool any = false;
  for (int i = 0; i < g->num_tensors(); ++i)
    any |= is_bias[i] && readers[i] > 1 && g->tensor(ir::TensorId(i)).kind == ir::TensorKind::kConstant;
  if (!any) return Status::Ok();
  ir::Graph out;
  out.name = g->name;
  out.layout = g->layout;
  for (const ir::Tensor& t : g->tensors()) out.AddTensor(t);  // same ids
  std::vector<int> seen(g->num_tensors(), 0);
  for (const ir::Op& op : g->ops()) {
    ir::Op n = op;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int id = n.inputs[i].value();
      if (!is_bias[id] || readers[id] <= 1 || g->tensor(n.inputs[i]).kind != ir::TensorKind::kConstant) continue;
      if (seen[id]++ == 0) continue;  // the first reader keeps the original
      ir::Tensor copy = g->tensor(n.inputs[i]);
      copy.name = copy.name + "." + op.name;
      for (int k = 2; out.FindTensor(copy.name); ++k) copy.name = g->tensor(n.inputs[i]).name + "." + op.name + "." + std::to_string(k);
      n.inputs[i] = out.AddTensor(std::move(copy));
      ++report->unshared_biases;
    }
    out.AddOp(std::move(n));
  }
  SP_RETURN_IF_ERROR(ir::VerifyGraph(out));
  *g = std::move(out);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// UnfuseActivations

Status UnfuseActivations(ir::Graph* g, int* count) {
  int n = 0;
  for (const ir::Op& op : g->ops()) {
    if (op.type == "Conv" || !op.attrs.Has("activation")) continue;
    const std::string act = op.attrs.GetString("activation", "none");
    if (act != "none" && act != "relu" && act != "relu6")
      return InvalidArgument("op '" + op.name + "' (" + op.type + ") has the activation '" + act +
                             "'; give relu, relu6 or none");
    if (act != "none" && op.outputs.size() != 1)
      return InvalidArgument("op '" + op.name + "' (" + op.type + ") has a fused activation but " +
                             std::to_string(op.outputs.size()) + " outputs; give it one output");
    n += act != "none";
  }
  if (count) *count = n;
  if (n == 0) return Status::Ok();
  ir::Graph out;
  out.name = g->name;
  out.layout = g->layout;
  for (const ir::Tensor& t : g->tensors()) out.AddTensor(t);  // same ids
  for (const ir::Op& op : g->ops()) {
    ir::Op n_op = op;
    const std::string act = op.attrs.GetString("activation", "none");
    if (op.type == "Conv" || act == "none") {
      out.AddOp(std::move(n_op));
      continue;
    }
    n_op.attrs = ir::Attributes();
    for (const auto& [k, v] : op.attrs.values())
      if (k != "activation") n_op.attrs.Set(k, v);
    ir::Tensor pre = g->tensor(op.outputs[0]);
    pre.name = pre.name + ".pre_activation";
    for (int k = 2; out.FindTensor(pre.name); ++k) pre.name = g->tensor(op.outputs[0]).name + ".pre_activation" + std::to_string(k);
    pre.kind = ir::TensorKind::kActivation;
    pre.data.clear();
    n_op.outputs = {out.AddTensor(std::move(pre))};
    ir::Op a;
    a.name = op.name + "/" + act;
    a.type = act == "relu" ? "Relu" : "Clip";
    if (act == "relu6") {
      a.attrs.Set("min", 0.0);
      a.attrs.Set("max", 6.0);
    }
    a.inputs = {n_op.outputs[0]};
    a.outputs = {op.outputs[0]};
    out.AddOp(std::move(n_op));
    out.AddOp(std::move(a));
  }
  SP_RETURN_IF_ERROR(ir::VerifyGraph(out));
  *g = std::move(out);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// FoldActivations

namespace {

// "relu" or "relu6" when `op` is an activation a Conv can fuse; "" otherwise.
std::string FusableActivation(const ir::Op& op) {
  if (op.type == "Relu") return "relu";
  if (op.type != "Clip") return "";
  const double lo = op.attrs.GetFloat("min", -1), hi = op.attrs.GetFloat("max", -1);
  if (!op.attrs.Has("min") || lo != 0.0) return "";
  if (!op.attrs.Has("max")) return "relu";
  return hi == 6.0 ? "relu6" : "";
}

}  // namespace

Status FoldActivations(ir::Graph* g, CanonicalizeReport* report) {
  const ir::Graph& src = *g;
  // fold_into[act op] = the Conv that absorbs it.
  std::vector<int> absorbed_by(src.num_ops(), -1);
  std::vector<std::string> fused(src.num_ops());
  std::vector<char> drop_tensor(src.num_tensors(), 0);
  for (const ir::Op& op : src.ops()) {
    if (op.type != "Conv" || op.outputs.size() != 1) continue;
    if (op.attrs.GetString("activation", "none") != "none") continue;
    const ir::Tensor& y = src.tensor(op.outputs[0]);
    if (y.kind != ir::TensorKind::kActivation || y.consumers.size() != 1) continue;
    const ir::Op& act = src.op(y.consumers[0]);
    const std::string kind = FusableActivation(act);
    if (kind.empty() || act.inputs.size() != 1 || act.outputs.size() != 1) continue;
    absorbed_by[act.id.value()] = op.id.value();
    fused[op.id.value()] = kind;
    drop_tensor[y.id.value()] = 1;
  }
  int folded = 0;
  for (int v : absorbed_by) folded += v >= 0;
  if (folded == 0) return Status::Ok();

  ir::Graph out;
  out.name = src.name;
  out.layout = src.layout;
  std::vector<ir::TensorId> remap(src.num_tensors());
  for (const ir::Tensor& t : src.tensors()) {
    if (drop_tensor[t.id.value()]) continue;
    remap[t.id.value()] = out.AddTensor(t);
  }
  for (const ir::Op& op : src.ops()) {
    if (absorbed_by[op.id.value()] >= 0) continue;
    ir::Op n = op;
    for (auto& in : n.inputs) in = remap[in.value()];
    if (!fused[op.id.value()].empty()) {
      const ir::Op& act = src.op(src.tensor(op.outputs[0]).consumers[0]);
      n.outputs = {remap[act.outputs[0].value()]};
      n.attrs.Set("activation", fused[op.id.value()]);
    } else {
      for (auto& o : n.outputs) o = remap[o.value()];
    }
    out.AddOp(std::move(n));
  }
  SP_RETURN_IF_ERROR(ir::VerifyGraph(out));
  *g = std::move(out);
  report->folded_activations += folded;
  return Status::Ok();
}

}  // namespace sramplan::transform
