// MCUNet / ProxylessNAS network configs (the JSON that mcunet's `build_model` reads) -> int8 NHWC graph.
// first_conv (ConvLayer) -> blocks (MobileInvertedResidualBlock: MBInvertedConvLayer + optional
// IdentityLayer shortcut) -> feature_mix_layer (1x1 ConvLayer, optional) -> global average pool ->
// classifier (LinearLayer).
#include <cmath>
#include <optional>

#include "import/import.h"
#include "import/json_util.h"
#include "support/int_math.h"

namespace sramplan::import {
namespace {

using nlohmann::json;

// Limits on what a config may ask for, checked before anything is allocated. Real MCUNet and
// ProxylessNAS configs use at most a few thousand channels and kernels up to 7.
constexpr int64_t kMaxChannels = int64_t{1} << 16;
constexpr int64_t kMaxKernel = 255;
constexpr int64_t kMaxStride = 4096;
constexpr int64_t kMaxExpandRatio = 1024;
// Largest tensor (activation or weight) a config may produce: 2^31 bytes (2 GiB).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;

class Builder {
 public:
  explicit Builder(ir::Graph* g) : g_(g) {}

  // A tensor of `shape`; its byte size (checked, before anything is allocated) must be at most
  // kMaxTensorBytes. `layer` names the layer in the message.
  StatusOr<ir::TensorId> Tensor(const std::string& name, std::vector<int64_t> shape, ir::TensorKind kind,
                                const std::string& layer, ir::DataType dtype = ir::DataType::kInt8) {
    std::optional<int64_t> bytes = ir::DataTypeSize(dtype);
    for (int64_t d : shape) {
      if (d < 1) return InvalidArgument("layer '" + layer + "': tensor '" + name + "' would be empty");
      if (bytes) bytes = CheckedMul(*bytes, d);
    }
    if (!bytes || *bytes > kMaxTensorBytes) {
      std::string dims;
      for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      return InvalidArgument("layer '" + layer + "': tensor '" + name + "' [" + dims + "] would take " +
                             (bytes ? std::to_string(*bytes) + " bytes" : "more than 2^63 bytes") +
                             "; sramplan accepts tensors of at most 2^31 bytes (2 GiB)");
    }
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
      // Per output channel: shape[0] <= kMaxChannels.
      t.quant.scale.assign(static_cast<size_t>(t.shape[0]), 0.02f);
      t.quant.zero_point.assign(static_cast<size_t>(t.shape[0]), 0);
    }
    return g_->AddTensor(std::move(t));
  }

  // Conv (NHWC) with weight [K, R, S, C/group] and int32 bias; "same" padding for odd kernels.
  // The caller has checked k, stride, out_c and group against the limits above.
  StatusOr<ir::TensorId> Conv(const std::string& name, ir::TensorId x, int64_t out_c, int64_t k,
                              int64_t stride, int64_t group, const std::string& act) {
    const auto xs = g_->tensor(x).shape;
    int64_t c = xs[3];
    if (k <= 0 || stride <= 0 || out_c <= 0 || group <= 0 || c % group != 0 || out_c % group != 0)
      return InvalidArgument("layer '" + name + "': bad kernel/stride/channels/groups (kernel " + std::to_string(k) +
                             ", stride " + std::to_string(stride) + ", " + std::to_string(c) + " -> " +
                             std::to_string(out_c) + " channels, groups " + std::to_string(group) + ")");
    int64_t pad = (k - 1) / 2;
    int64_t ho = (xs[1] + 2 * pad - k) / stride + 1;
    int64_t wo = (xs[2] + 2 * pad - k) / stride + 1;
    if (xs[1] + 2 * pad < k || xs[2] + 2 * pad < k || ho <= 0 || wo <= 0)
      return InvalidArgument("layer '" + name + "': output would be empty (kernel " + std::to_string(k) + " on " +
                             std::to_string(xs[1]) + "x" + std::to_string(xs[2]) + ")");
    SP_ASSIGN_OR_RETURN(ir::TensorId w,
                        Tensor(name + ".weight", {out_c, k, k, c / group}, ir::TensorKind::kConstant, name));
    SP_ASSIGN_OR_RETURN(ir::TensorId b,
                        Tensor(name + ".bias", {out_c}, ir::TensorKind::kConstant, name, ir::DataType::kInt32));
    SP_ASSIGN_OR_RETURN(ir::TensorId y,
                        Tensor(name + ".out", {xs[0], ho, wo, out_c}, ir::TensorKind::kActivation, name));
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

  StatusOr<ir::TensorId> Simple(const std::string& name, const std::string& type, std::vector<ir::TensorId> in,
                                std::vector<int64_t> out_shape) {
    SP_ASSIGN_OR_RETURN(ir::TensorId y, Tensor(name + ".out", std::move(out_shape), ir::TensorKind::kActivation, name));
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

StatusOr<std::string> Activation(const JsonRef& layer) {
  SP_ASSIGN_OR_RETURN(std::string act, layer.StringOr("act_func", "none"));
  if (act == "relu6" || act == "relu" || act == "none") return act;
  return Unsupported(layer.path() + ".act_func: '" + act + "' is not supported (relu, relu6 or none)");
}

// The geometry of one conv layer read from `layer`, every value within the limits above.
struct ConvFields {
  int64_t out_c = 0, k = 1, stride = 1, groups = 1;
  std::string act;
};

StatusOr<ConvFields> ReadConv(const JsonRef& layer, bool need_kernel, bool read_stride_groups) {
  ConvFields f;
  SP_ASSIGN_OR_RETURN(f.out_c, layer.Int("out_channels", 1, kMaxChannels));
  if (need_kernel) {
    SP_ASSIGN_OR_RETURN(f.k, layer.Int("kernel_size", 1, kMaxKernel));
  } else {
    SP_ASSIGN_OR_RETURN(f.k, layer.IntOr("kernel_size", 1, 1, kMaxKernel));
  }
  if (read_stride_groups) {
    SP_ASSIGN_OR_RETURN(f.stride, layer.IntOr("stride", 1, 1, kMaxStride));
    SP_ASSIGN_OR_RETURN(f.groups, layer.IntOr("groups", 1, 1, kMaxChannels));
  }
  SP_ASSIGN_OR_RETURN(f.act, Activation(layer));
  return f;
}

}  // namespace

static StatusOr<ir::Graph> ImportMcunetConfigImpl(const std::string& text, const std::string& name,
                                                  const ImportOptions& options) {
  SP_ASSIGN_OR_RETURN(json doc, ParseJson(text, name));
  const JsonRef j(doc);
  SP_RETURN_IF_ERROR(j.ExpectObject());
  ir::Graph g;
  g.name = name;
  g.layout = ir::Layout::kNHWC;
  Builder b(&g);
  SP_ASSIGN_OR_RETURN(int64_t res, j.Int("resolution", 1, 4096));
  if (options.batch <= 0 || options.batch > 65536) return InvalidArgument("--batch must be in 1..65536");
  SP_ASSIGN_OR_RETURN(JsonRef fc, j.Object("first_conv"));
  SP_ASSIGN_OR_RETURN(int64_t in_c, fc.IntOr("in_channels", 3, 1, kMaxChannels));
  SP_ASSIGN_OR_RETURN(ir::TensorId x,
                      b.Tensor("input", {options.batch, res, res, in_c}, ir::TensorKind::kInput, "input"));
  {
    SP_ASSIGN_OR_RETURN(ConvFields f, ReadConv(fc, true, true));
    SP_ASSIGN_OR_RETURN(x, b.Conv("first_conv", x, f.out_c, f.k, f.stride, f.groups, f.act));
  }
  SP_ASSIGN_OR_RETURN(JsonRef blocks, j.Array("blocks"));
  for (size_t idx = 0; idx < blocks.size(); ++idx) {
    std::string bn = "blocks." + std::to_string(idx);
    const JsonRef blk = blocks[idx];
    SP_RETURN_IF_ERROR(blk.ExpectObject());
    bool identity = false;
    if (blk.Has("shortcut")) {
      SP_ASSIGN_OR_RETURN(JsonRef sc, blk.Object("shortcut"));
      SP_ASSIGN_OR_RETURN(std::string sc_name, sc.StringOr("name", ""));
      identity = sc_name == "IdentityLayer";
    }
    std::string cname;
    if (blk.Has("mobile_inverted_conv")) {
      SP_ASSIGN_OR_RETURN(JsonRef conv0, blk.Object("mobile_inverted_conv"));
      SP_ASSIGN_OR_RETURN(cname, conv0.String("name"));
    }
    if (cname.empty() || cname == "ZeroLayer") {
      if (!identity) return Unsupported(blk.path() + ": a ZeroLayer block without identity shortcut");
      continue;  // the block is the identity
    }
    const JsonRef conv = blk.Child("mobile_inverted_conv");
    if (cname != "MBInvertedConvLayer")
      return Unsupported(conv.path() + ".name: layer '" + cname + "' is not supported (MBInvertedConvLayer)");
    SP_ASSIGN_OR_RETURN(bool se, conv.BoolOr("use_se", false));
    if (se) return Unsupported(conv.path() + ".use_se: squeeze-and-excitation is not supported");
    SP_ASSIGN_OR_RETURN(int64_t ci, conv.Int("in_channels", 1, kMaxChannels));
    SP_ASSIGN_OR_RETURN(int64_t co, conv.Int("out_channels", 1, kMaxChannels));
    SP_ASSIGN_OR_RETURN(int64_t k, conv.Int("kernel_size", 1, kMaxKernel));
    SP_ASSIGN_OR_RETURN(int64_t s, conv.IntOr("stride", 1, 1, kMaxStride));
    SP_ASSIGN_OR_RETURN(double er, conv.NumberOr("expand_ratio", 1, 0, kMaxExpandRatio));
    SP_ASSIGN_OR_RETURN(int64_t mid, conv.IntOr("mid_channels", 0, 0, kMaxChannels));
    SP_ASSIGN_OR_RETURN(std::string act, Activation(conv));
    if (g.tensor(x).shape[3] != ci)
      return InvalidArgument(conv.path() + ".in_channels: " + std::to_string(ci) +
                             " does not match the previous layer's " + std::to_string(g.tensor(x).shape[3]) +
                             " channels");
    if (mid == 0) {
      // ci <= 2^16 and er <= 1024: the product is exact in a double and far inside int64.
      mid = static_cast<int64_t>(std::llround(static_cast<double>(ci) * er));
      if (mid < 1 || mid > kMaxChannels)
        return InvalidArgument(conv.path() + ".expand_ratio: " + std::to_string(ci) + " channels x " +
                               JsonSnippet(conv.Child("expand_ratio").json()) + " gives " + std::to_string(mid) +
                               " middle channels; it must be in [1, " + std::to_string(kMaxChannels) + "]");
    }
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
        return InvalidArgument(blk.path() + ": identity shortcut but the block changes the shape");
      SP_ASSIGN_OR_RETURN(h, b.Simple(bn + ".add", "Add", {h, block_in}, g.tensor(h).shape));
    }
    x = h;
  }
  if (j.Has("feature_mix_layer")) {
    SP_ASSIGN_OR_RETURN(JsonRef fm, j.Object("feature_mix_layer"));
    SP_ASSIGN_OR_RETURN(ConvFields f, ReadConv(fm, false, false));
    SP_ASSIGN_OR_RETURN(x, b.Conv("feature_mix_layer", x, f.out_c, f.k, 1, 1, f.act));
  }
  auto xs = g.tensor(x).shape;
  SP_ASSIGN_OR_RETURN(x, b.Simple("global_avg_pool", "GlobalAveragePool", {x}, {xs[0], 1, 1, xs[3]}));
  SP_ASSIGN_OR_RETURN(x, b.Simple("flatten", "Flatten", {x}, {xs[0], xs[3]}));
  {
    SP_ASSIGN_OR_RETURN(JsonRef cl, j.Object("classifier"));
    SP_ASSIGN_OR_RETURN(int64_t in_f, cl.Int("in_features", 1, kMaxChannels));
    SP_ASSIGN_OR_RETURN(int64_t out_f, cl.Int("out_features", 1, kMaxChannels));
    if (in_f != xs[3])
      return InvalidArgument(cl.path() + ".in_features: " + std::to_string(in_f) + " but the features have " +
                             std::to_string(xs[3]) + " channels");
    SP_ASSIGN_OR_RETURN(ir::TensorId wt,
                        b.Tensor("classifier.weight", {out_f, in_f}, ir::TensorKind::kConstant, "classifier"));
    SP_ASSIGN_OR_RETURN(ir::TensorId bias, b.Tensor("classifier.bias", {out_f}, ir::TensorKind::kConstant,
                                                    "classifier", ir::DataType::kInt32));
    SP_ASSIGN_OR_RETURN(ir::TensorId y, b.Tensor("output", {xs[0], out_f}, ir::TensorKind::kOutput, "classifier"));
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
  auto g = GuardJson<ir::Graph>("'" + name + "'", [&] { return ImportMcunetConfigImpl(text, name, options); });
  if (!g.ok()) return g.status().WithContext("MCUNet config '" + name + "'");
  return g;
}

}  // namespace sramplan::import
