// ResNet for CIFAR-10 (He, Zhang, Ren, Sun, "Deep Residual Learning for Image Recognition", CVPR
// 2016, Sec. 4.2) as a native sramplan graph (docs/graph-format.md), generated for any depth 6n+2:
// a 3x3 stem conv with 16 channels on a 32x32x3 input, three stages of n basic blocks (two 3x3
// convs with BatchNorm folded, ReLU, identity shortcut, Add, ReLU) with 16, 32 and 64 channels at
// 32x32, 16x16 and 8x8 (the first conv of stages 2 and 3 has stride 2), global average pooling and
// a 10-way fully connected layer: 6n + 2 weighted layers (n = 200: ResNet-1202). The two
// down-sampling shortcuts are 1x1 stride-2 projections (the paper's option B; option A's
// zero-padded identity has no weights either way, so the layer count and the 3x3 geometry are the
// paper's). Graph only: no weights' values (planning does not read them).
#pragma once

#include <sstream>
#include <string>

namespace sramplan::bench {

inline std::string ResNetCifarGraphJson(int depth, int batch) {
  const int n = (depth - 2) / 6;
  std::ostringstream t, o;  // tensors, ops
  bool first_tensor = true, first_op = true;
  auto tensor = [&](const std::string& name, const std::string& shape, const char* kind) {
    t << (first_tensor ? "" : ",\n") << "    {\"name\": \"" << name << "\", \"kind\": \"" << kind << "\"";
    if (!shape.empty()) t << ", \"shape\": " << shape;
    t << "}";
    first_tensor = false;
  };
  auto op = [&](const std::string& name, const char* type, const std::string& inputs, const std::string& out,
                const std::string& attrs) {
    o << (first_op ? "" : ",\n") << "    {\"name\": \"" << name << "\", \"type\": \"" << type << "\", \"inputs\": ["
      << inputs << "], \"outputs\": [\"" << out << "\"]";
    if (!attrs.empty()) o << ", \"attrs\": {" << attrs << "}";
    o << "}";
    first_op = false;
  };
  // Text of its arguments (streams: string literals plus std::to_string trip GCC 12's -Wrestrict).
  auto cat = [](const auto&... xs) {
    std::ostringstream s;
    (s << ... << xs);
    return s.str();
  };
  auto q = [&](const std::string& s) { return cat('"', s, '"'); };
  auto shape4 = [&](int h, int c) { return cat("[", batch, ", ", h, ", ", h, ", ", c, "]"); };
  // A conv (BatchNorm folded into its weights and bias) with an optional fused ReLU.
  auto conv = [&](const std::string& name, const std::string& in, int cin, int cout, int k, int stride, bool relu) {
    tensor(name + "_w", cat("[", cout, ", ", k, ", ", k, ", ", cin, "]"), "constant");
    tensor(name + "_b", cat("[", cout, "]"), "constant");
    tensor(name + "_out", "", "activation");
    const int p = k / 2;
    op(name, "Conv", q(in) + ", " + q(name + "_w") + ", " + q(name + "_b"), name + "_out",
       cat("\"kernel_shape\": [", k, ", ", k, "], \"strides\": [", stride, ", ", stride, "], \"pads\": [", p, ", ", p,
           ", ", p, ", ", p, "], \"dilations\": [1, 1], \"group\": 1, \"activation\": ",
           relu ? "\"relu\"" : "\"none\""));
    return name + "_out";
  };
  tensor("input", shape4(32, 3), "input");
  std::string x = conv("stem", "input", 3, 16, 3, 1, true);
  int c = 16;
  for (int s = 0; s < 3; ++s) {
    const int cout = 16 << s;
    for (int b = 0; b < n; ++b) {
      const std::string name = cat("s", s + 1, "b", b);
      const int stride = (s > 0 && b == 0) ? 2 : 1;
      const std::string a = conv(name + "_c1", x, c, cout, 3, stride, true);
      const std::string y = conv(name + "_c2", a, cout, cout, 3, 1, false);
      const std::string skip = stride == 1 ? x : conv(name + "_proj", x, c, cout, 1, stride, false);
      tensor(name + "_add_out", "", "activation");
      op(name + "_add", "Add", q(y) + ", " + q(skip), name + "_add_out", "");
      tensor(name + "_relu_out", "", "activation");
      op(name + "_relu", "Relu", q(name + "_add_out"), name + "_relu_out", "");
      x = name + "_relu_out";
      c = cout;
    }
  }
  tensor("pool_out", "", "activation");
  op("pool", "GlobalAveragePool", q(x), "pool_out", "");
  tensor("flat_out", cat("[", batch, ", 64]"), "activation");
  op("flat", "Reshape", q("pool_out"), "flat_out", cat("\"shape\": [", batch, ", 64]"));
  tensor("fc_w", "[10, 64]", "constant");
  tensor("fc_b", "[10]", "constant");
  tensor("logits", cat("[", batch, ", 10]"), "output");
  op("fc", "Gemm", q("flat_out") + ", " + q("fc_w") + ", " + q("fc_b"), "logits",
     "\"alpha\": 1.0, \"beta\": 1.0, \"transA\": 0, \"transB\": 1");
  std::ostringstream g;
  g << "{\n  \"format\": \"sramplan-graph\",\n  \"version\": 1,\n  \"name\": \"resnet" << depth
    << "-cifar\",\n  \"layout\": \"NHWC\",\n  \"tensors\": [\n"
    << t.str() << "\n  ],\n  \"ops\": [\n" << o.str() << "\n  ]\n}\n";
  return g.str();
}

}  // namespace sramplan::bench
