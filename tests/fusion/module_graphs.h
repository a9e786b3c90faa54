// A small inception-style graph for the module-buffering tests (native JSON, NHWC, int8):
//   x[1,16,16,8] -> stem (1x1, 8->8) -> s
//   module 1 (Concat): s -> b1 (1x1, 8->4) -> a1 ; s -> c1 (1x1, 8->4) -> c2 (3x3 pad 1, 4->8) -> a2 ;
//                      s -> mp (3x3 maxpool, pad 1) -> p1 (1x1, 8->4) -> a3 ; concat(a1, a2, a3) -> c
//   module 2 (Add, an identity branch): c -> r1 (1x1, 16->16) -> relu -> r2 (1x1, 16->16) -> add(d, c) -> y
// Bytes: x 2048, s 2048, a1 1024, a2 2048, a3 1024, c 4096, y 4096.
#pragma once

namespace sramplan::testing {

inline const char* kInceptionGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "mini_inception", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 16, 16, 8], "kind": "input"},
    {"name": "ws", "shape": [8, 1, 1, 8], "kind": "constant"},
    {"name": "wb1", "shape": [4, 1, 1, 8], "kind": "constant"},
    {"name": "wc1", "shape": [4, 1, 1, 8], "kind": "constant"},
    {"name": "wc2", "shape": [8, 3, 3, 4], "kind": "constant"},
    {"name": "wp1", "shape": [4, 1, 1, 8], "kind": "constant"},
    {"name": "wr1", "shape": [16, 1, 1, 16], "kind": "constant"},
    {"name": "wr2", "shape": [16, 1, 1, 16], "kind": "constant"},
    {"name": "s"}, {"name": "a1"}, {"name": "t1"}, {"name": "a2"}, {"name": "m"}, {"name": "a3"}, {"name": "c"},
    {"name": "e"}, {"name": "f"}, {"name": "d"},
    {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "stem", "type": "Conv", "inputs": ["x", "ws"], "outputs": ["s"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "b1", "type": "Conv", "inputs": ["s", "wb1"], "outputs": ["a1"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "c1", "type": "Conv", "inputs": ["s", "wc1"], "outputs": ["t1"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "c2", "type": "Conv", "inputs": ["t1", "wc2"], "outputs": ["a2"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
    {"name": "mp", "type": "MaxPool", "inputs": ["s"], "outputs": ["m"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}},
    {"name": "p1", "type": "Conv", "inputs": ["m", "wp1"], "outputs": ["a3"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "cat", "type": "Concat", "inputs": ["a1", "a2", "a3"], "outputs": ["c"], "attrs": {"axis": 3}},
    {"name": "r1", "type": "Conv", "inputs": ["c", "wr1"], "outputs": ["e"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "relu", "type": "Relu", "inputs": ["e"], "outputs": ["f"]},
    {"name": "r2", "type": "Conv", "inputs": ["f", "wr2"], "outputs": ["d"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "add", "type": "Add", "inputs": ["d", "c"], "outputs": ["y"]}
  ]
})";

}  // namespace sramplan::testing
