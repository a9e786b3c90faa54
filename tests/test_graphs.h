// Small graphs for golden and mutation tests, as native JSON text (docs/graph-format.md).
#pragma once

#include <string>

namespace sramplan::testing {

// x[1,8,8,4] -> conv1 (1x1, 4->8) -> a[1,8,8,8] -> relu -> b -> conv2 (1x1, 8->4) -> y[1,8,8,4]; int8, NHWC.
// Bytes: x 256, a 512, b 512, y 256.
inline const char* kChainGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "chain", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 8, 8, 4], "kind": "input"},
    {"name": "w1", "shape": [8, 1, 1, 4], "kind": "constant"},
    {"name": "a"}, {"name": "b"},
    {"name": "w2", "shape": [4, 1, 1, 8], "kind": "constant"},
    {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "conv1", "type": "Conv", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "relu", "type": "Relu", "inputs": ["a"], "outputs": ["b"]},
    {"name": "conv2", "type": "Conv", "inputs": ["b", "w2"], "outputs": ["y"], "attrs": {"kernel_shape": [1, 1]}}
  ]
})";

// x[1,10,10,16] -> pw (1x1, 16->32) -> e[1,10,10,32] -> dw (3x3 depthwise, pad 1) -> d[1,10,10,32]
//   -> pj (1x1, 32->16) -> p[1,10,10,16] -> add(p, x) -> y. int8, NHWC.
// Bytes: x 1600, e 3200, d 3200, p 1600, y 1600.
inline const char* kBottleneckGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "bottleneck", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 10, 10, 16], "kind": "input"},
    {"name": "we", "shape": [32, 1, 1, 16], "kind": "constant"},
    {"name": "wd", "shape": [32, 3, 3, 1], "kind": "constant"},
    {"name": "wp", "shape": [16, 1, 1, 32], "kind": "constant"},
    {"name": "e"}, {"name": "d"}, {"name": "p"},
    {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "pw", "type": "Conv", "inputs": ["x", "we"], "outputs": ["e"], "attrs": {"kernel_shape": [1, 1], "activation": "relu6"}},
    {"name": "dw", "type": "Conv", "inputs": ["e", "wd"], "outputs": ["d"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "group": 32, "activation": "relu6"}},
    {"name": "pj", "type": "Conv", "inputs": ["d", "wp"], "outputs": ["p"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "add", "type": "Add", "inputs": ["p", "x"], "outputs": ["y"]}
  ]
})";

// x -> p1 -> A1 (100 B) -> p2 -> A2 (1 B); x -> q1 -> B1 (100 B) -> q2 -> B2 (1 B); add(A2, B2) -> y.
// The model order interleaves the branches (p1, q1, p2, q2, add): at q1 x, A1 and B1 are live: 201 B.
// Finishing one branch first (p1, p2, q1, q2, add) peaks at 102 B (at q1: x + A2 + B1), the optimum.
inline const char* kTwoBranchesGraph = R"({"format": "sramplan-graph", "dtype": "int8", "name": "branches",
  "tensors": [{"name": "x", "shape": [1], "kind": "input"},
              {"name": "A1", "shape": [100]}, {"name": "A2", "shape": [1]},
              {"name": "B1", "shape": [100]}, {"name": "B2", "shape": [1]},
              {"name": "y", "shape": [1], "kind": "output"}],
  "ops": [{"name": "p1", "type": "Opaque", "inputs": ["x"], "outputs": ["A1"]},
          {"name": "q1", "type": "Opaque", "inputs": ["x"], "outputs": ["B1"]},
          {"name": "p2", "type": "Opaque", "inputs": ["A1"], "outputs": ["A2"]},
          {"name": "q2", "type": "Opaque", "inputs": ["B1"], "outputs": ["B2"]},
          {"name": "add", "type": "Add", "inputs": ["A2", "B2"], "outputs": ["y"]}]})";

// A linear network where every step is tight: x[1,20,20,16] -> `convs` 3x3 convolutions (pad 1,
// 16 -> 16) -> y. Each step needs its input and output overlapped by the segment shift of 336 bytes
// (6736 B), and a linear arena drifts down by 336 bytes per layer; a circular pool does not.
inline std::string ConvChainGraph(int convs) {
  std::string t = R"({"format": "sramplan-graph", "version": 1, "name": "conv_chain", "layout": "NHWC", "dtype": "int8",
    "tensors": [{"name": "x", "shape": [1, 20, 20, 16], "kind": "input"})";
  std::string o;
  for (int i = 0; i < convs; ++i) {
    const std::string in = i == 0 ? "x" : "a" + std::to_string(i - 1);
    const std::string out = i + 1 == convs ? "y" : "a" + std::to_string(i);
    const std::string w = "w" + std::to_string(i);
    t += R"(, {"name": ")" + w + R"(", "shape": [16, 3, 3, 16], "kind": "constant"})";
    t += R"(, {"name": ")" + out + R"(", "shape": [1, 20, 20, 16], "kind": ")" +
         (i + 1 == convs ? "output" : "activation") + R"("})";
    o += std::string(i == 0 ? "" : ", ") + R"({"name": "c)" + std::to_string(i) + R"(", "type": "Conv", "inputs": [")" +
         in + R"(", ")" + w + R"("], "outputs": [")" + out +
         R"("], "attrs": {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "group": 1}})";
  }
  return t + "], \"ops\": [" + o + "]}";
}

}  // namespace sramplan::testing
