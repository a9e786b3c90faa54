// MCUNet / ProxylessNAS network configs (the JSON that mcunet's `build_model` reads) -> int8 NHWC graph.
// first_conv (ConvLayer) -> blocks (MobileInvertedResidualBlock: MBInvertedConvLayer + optional
// IdentityLayer shortcut) -> feature_mix_layer (1x1 ConvLayer, optional) -> global average pool ->
// classifier (LinearLayer).
#include <cmath>

#include "import/import.h"
#include "import/json_util.h"

namespace sramplan::import {
namespace {

using nlohmann::json;

class Builder {
 public:
  explicit Builder(ir::Graph* g) : g_(g) {}

  ir::TensorId Tensor(const std::string& name, std::vector<int64_t> shape, ir::TensorKind kind,
                      ir::DataType dtype = ir::DataType::kInt8) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.kind = kind;
    t.dtype = dtype;
    if (kind != ir::TensorKind::kConstant) {
      // Activations: per-tensor asymmetric int8 quantisation (values for planning/execution only).
      t.quant.scale = {0.05f};
      t.quant.zero_point = {-128};
    } else if (dtype == ir::DataType::kInt8) {
      t.quant.scale.assign(static_cast<size_t>(t.shape[0]), 0.02f);
      t.quant.zero_point.assign(static_cast<size_t>(t.shape[0]), 0);
    }
    return g_->AddTensor(std::move(t));
  }

  // Conv (NHWC) with weight [K, R, S, C/group] and int32 bias; "same" padding for odd kernels.
  StatusOr<ir::TensorId> Conv(const std::string& name, ir::TensorId x, int64_t out_c, int64_t k,
                              int64_t stride, int64_t group, const std::string& act) {
    const auto xs = g_->tensor(x).shape;
    int64_t c = xs[3];
    if (k <= 0 || stride <= 0 || out_c <= 0 || group <= 0 || c % group != 0)
      return InvalidArgument("layer '" + name + "': bad kernel/stride/channels/groups");
    int64_t pad = (k - 1) / 2;
    int64_t ho = (xs[1] + 2 * pad - k) / stride + 1;
    int64_t wo = (xs[2] + 2 * pad - k) / stride + 1;
    if (ho <= 0 || wo <= 0) return InvalidArgument("layer '" + name + "': output would be empty");
    ir::TensorId w = Tensor(name + ".weight", {out_c, k, k, c / group}, ir::TensorKind::kConstant);
    ir::TensorId b = Tensor(name + ".bias", {out_c}, ir::TensorKind::kConstant, ir::DataType::kInt32);
    ir::TensorId y = Tensor(name + ".out", {xs[0], ho, wo, out_c}, ir::TensorKind::kActivation);
    ir::Op op;
    op.name = name;
    op.type = "Conv";
    op.inputs = {x, w, b};
    op.outputs = {y};
    op.attrs.Set("kernel_shape", std::vector<int64_t>{k, k});
    op.attrs.Set("strides", std::vector<int64_t>{stride, stride});
    op.attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    op.attrs.Set("group", group);
    op.attrs.Set("activation", act);
    g_->AddOp(std::move(op));
    return y;
  }

  ir::TensorId Simple(const std::string& name, const std::string& type, std::vector<ir::TensorId> in,
                      std::vector<int64_t> out_shape) {
    ir::TensorId y = Tensor(name + ".out", std::move(out_shape), ir::TensorKind::kActivation);
    ir::Op op;
    op.name = name;
    op.type = type;
    op.inputs = std::move(in);
    op.outputs = {y};
    g_->AddOp(std::move(op));
    return y;
  }

  ir::Graph* g() { return g_; }

 private:
  ir::Graph* g_;
};

StatusOr<std::string> Activation(const json& layer, const std::string& where) {
  SP_ASSIGN_OR_RETURN(std::string act, GetStringOr(layer, "act_func", "none", where));
  if (act == "relu6" || act == "relu" || act == "none") return act;
  return Unsupported(where + ": act_func '" + act + "' is not supported (relu, relu6 or none)");
}

}  // namespace

static StatusOr<ir::Graph> ImportMcunetConfigImpl(const std::string& text, const std::string& name,
                                       const ImportOptions& options) {
  SP_ASSIGN_OR_RETURN(json j, ParseJson(text, name));
  const std::string where = "MCUNet config '" + name + "'";
  SP_RETURN_IF_ERROR(ExpectObject(j, where));
  ir::Graph g;
  g.name = name;
  g.layout = ir::Layout::kNHWC;
  Builder b(&g);
  SP_ASSIGN_OR_RETURN(int64_t res, GetInt(j, "resolution", where));
  if (res <= 0 || res > 4096) return InvalidArgument(where + ": resolution must be in 1..4096");
  if (options.batch <= 0) return InvalidArgument("--batch must be >= 1");
  if (!j.contains("first_conv") || !j["first_conv"].is_object())
    return InvalidArgument(where + ": missing 'first_conv'");
  const json& fc = j["first_conv"];
  SP_ASSIGN_OR_RETURN(int64_t in_c, GetIntOr(fc, "in_channels", 3, where + " first_conv"));
  ir::TensorId x = b.Tensor("input", {options.batch, res, res, in_c}, ir::TensorKind::kInput);
  {
    std::string w = where + " first_conv";
    SP_ASSIGN_OR_RETURN(int64_t out_c, GetInt(fc, "out_channels", w));
    SP_ASSIGN_OR_RETURN(int64_t k, GetInt(fc, "kernel_size", w));
    SP_ASSIGN_OR_RETURN(int64_t s, GetIntOr(fc, "stride", 1, w));
    SP_ASSIGN_OR_RETURN(int64_t grp, GetIntOr(fc, "groups", 1, w));
    SP_ASSIGN_OR_RETURN(std::string act, Activation(fc, w));
    SP_ASSIGN_OR_RETURN(x, b.Conv("first_conv", x, out_c, k, s, grp, act));
  }
  if (!j.contains("blocks") || !j["blocks"].is_array())
    return InvalidArgument(where + ": 'blocks' must be a list");
  int idx = 0;
  for (const json& blk : j["blocks"]) {
    std::string bn = "blocks." + std::to_string(idx);
    std::string w = where + " " + bn;
    ++idx;
    SP_RETURN_IF_ERROR(ExpectObject(blk, w));
    const json conv = blk.contains("mobile_inverted_conv") ? blk["mobile_inverted_conv"] : json();
    bool identity = blk.contains("shortcut") && blk["shortcut"].is_object() &&
                    blk["shortcut"].value("name", "") == "IdentityLayer";
    if (conv.is_null() || conv.value("name", "") == "ZeroLayer") {
      if (!identity) return Unsupported(w + ": a ZeroLayer block without identity shortcut");
      continue;  // the block is the identity
    }
    SP_ASSIGN_OR_RETURN(std::string cname, GetString(conv, "name", w));
    if (cname != "MBInvertedConvLayer")
      return Unsupported(w + ": layer '" + cname + "' is not supported (MBInvertedConvLayer)");
    SP_ASSIGN_OR_RETURN(bool se, GetBoolOr(conv, "use_se", false, w));
    if (se) return Unsupported(w + ": squeeze-and-excitation (use_se) is not supported");
    SP_ASSIGN_OR_RETURN(int64_t ci, GetInt(conv, "in_channels", w));
    SP_ASSIGN_OR_RETURN(int64_t co, GetInt(conv, "out_channels", w));
    SP_ASSIGN_OR_RETURN(int64_t k, GetInt(conv, "kernel_size", w));
    SP_ASSIGN_OR_RETURN(int64_t s, GetIntOr(conv, "stride", 1, w));
    SP_ASSIGN_OR_RETURN(double er, GetNumberOr(conv, "expand_ratio", 1, w));
    SP_ASSIGN_OR_RETURN(int64_t mid, GetIntOr(conv, "mid_channels", 0, w));
    SP_ASSIGN_OR_RETURN(std::string act, Activation(conv, w));
    if (g.tensor(x).shape[3] != ci)
      return InvalidArgument(w + ": in_channels " + std::to_string(ci) +
                             " does not match the previous layer's " +
                             std::to_string(g.tensor(x).shape[3]) + " channels");
    if (mid == 0) mid = static_cast<int64_t>(std::llround(static_cast<double>(ci) * er));
    ir::TensorId block_in = x;
    ir::TensorId h = x;
    if (er != 1) {
      SP_ASSIGN_OR_RETURN(h, b.Conv(bn + ".expand", h, mid, 1, 1, 1, act));
    } else {
      mid = ci;
    }
    SP_ASSIGN_OR_RETURN(h, b.Conv(bn + ".depthwise", h, mid, k, s, mid, act));
    SP_ASSIGN_OR_RETURN(h, b.Conv(bn + ".project", h, co, 1, 1, 1, "none"));
    if (identity) {
      if (g.tensor(h).shape != g.tensor(block_in).shape)
        return InvalidArgument(w + ": identity shortcut but the block changes the shape");
      h = b.Simple(bn + ".add", "Add", {h, block_in}, g.tensor(h).shape);
    }
    x = h;
  }
  if (j.contains("feature_mix_layer") && j["feature_mix_layer"].is_object()) {
    const json& fm = j["feature_mix_layer"];
    std::string w = where + " feature_mix_layer";
    SP_ASSIGN_OR_RETURN(int64_t out_c, GetInt(fm, "out_channels", w));
    SP_ASSIGN_OR_RETURN(int64_t k, GetIntOr(fm, "kernel_size", 1, w));
    SP_ASSIGN_OR_RETURN(std::string act, Activation(fm, w));
    SP_ASSIGN_OR_RETURN(x, b.Conv("feature_mix_layer", x, out_c, k, 1, 1, act));
  }
  auto xs = g.tensor(x).shape;
  x = b.Simple("global_avg_pool", "GlobalAveragePool", {x}, {xs[0], 1, 1, xs[3]});
  x = b.Simple("flatten", "Flatten", {x}, {xs[0], xs[3]});
  if (!j.contains("classifier") || !j["classifier"].is_object())
    return InvalidArgument(where + ": missing 'classifier'");
  {
    const json& cl = j["classifier"];
    std::string w = where + " classifier";
    SP_ASSIGN_OR_RETURN(int64_t in_f, GetInt(cl, "in_features", w));
    SP_ASSIGN_OR_RETURN(int64_t out_f, GetInt(cl, "out_features", w));
    if (in_f != xs[3])
      return InvalidArgument(w + ": in_features " + std::to_string(in_f) + " but the features have " +
                             std::to_string(xs[3]) + " channels");
    if (out_f <= 0) return InvalidArgument(w + ": out_features must be >= 1");
    ir::TensorId wt = b.Tensor("classifier.weight", {out_f, in_f}, ir::TensorKind::kConstant);
    ir::TensorId bias =
        b.Tensor("classifier.bias", {out_f}, ir::TensorKind::kConstant, ir::DataType::kInt32);
    ir::TensorId y = b.Tensor("output", {xs[0], out_f}, ir::TensorKind::kOutput);
    ir::Op op;
    op.name = "classifier";
    op.type = "Gemm";
    op.inputs = {x, wt, bias};
    op.outputs = {y};
    op.attrs.Set("transB", int64_t{1});
    g.AddOp(std::move(op));
  }
  SP_RETURN_IF_ERROR(ir::VerifyGraph(g));
  return g;
}

StatusOr<ir::Graph> ImportMcunetConfig(const std::string& text, const std::string& name,
                                 const ImportOptions& options) {
  return GuardJson<ir::Graph>("'" + name + "'", [&] { return ImportMcunetConfigImpl(text, name, options); });
}

}  // namespace sramplan::import
