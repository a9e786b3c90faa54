// Random DAGs of Relu/Add ops in the native graph format (docs/graph-format.md), for the scale
// benchmark (bench/scale.cc) and anyone who wants a large graph: `bench_scale --write-graph N SEED FILE`.
//
// The graph has two int8 inputs of different sizes, x0 [1,16,8,8] (1 KiB) and x1 [1,32,8,8] (2 KiB).
// Op k is a Relu of a tensor made by one of the last kWindow ops (or an input), or an Add of that
// tensor and another of the same shape: the most recent one in the window, or with probability
// 1/16 (a long skip connection) any earlier one. Tensors nobody reads are graph outputs, live to the
// end (about one in eight): so the number of buffers live at a step grows with the graph, as do the
// lifetimes of the skip sources, which is what exposes work quadratic in steps x buffers. The same
// (ops, seed) always gives the same text (splitmix64, no standard distributions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sramplan::bench {

inline std::string RandomReluAddGraphJson(int num_ops, uint64_t seed) {
  constexpr int kWindow = 8;
  uint64_t state = seed;
  auto next = [&]() {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  struct T {
    std::string name;
    int shape_class;  // 0: [1,16,8,8], 1: [1,32,8,8]
    bool read = false;
  };
  std::vector<T> tensors = {{"x0", 0, false}, {"x1", 1, false}};
  std::vector<int> of_class[2] = {{0}, {1}};  // tensor indices per shape class
  std::string ops;
  ops.reserve(static_cast<size_t>(num_ops) * 80);
  for (int k = 0; k < num_ops; ++k) {
    const int hi = static_cast<int>(tensors.size());
    const int lo = hi > kWindow ? hi - kWindow : 0;
    const int a = lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo));
    const int cls = tensors[a].shape_class;
    int b = -1;
    if (next() % 2 == 0) {  // Add
      if (next() % 16 == 0) {
        const std::vector<int>& same = of_class[cls];
        b = same[next() % same.size()];
        if (b == a) b = -1;
      } else {
        for (int j = hi - 1; j >= lo && b < 0; --j)
          if (j != a && tensors[j].shape_class == cls) b = j;
      }
    }
    tensors[a].read = true;
    const std::string out = "t" + std::to_string(k);
    ops += ",\n  {\"name\": \"op" + std::to_string(k) + "\", \"type\": \"";
    if (b >= 0) {
      tensors[b].read = true;
      ops += "Add\", \"inputs\": [\"" + tensors[a].name + "\", \"" + tensors[b].name + "\"]";
    } else {
      ops += "Relu\", \"inputs\": [\"" + tensors[a].name + "\"]";
    }
    ops += ", \"outputs\": [\"" + out + "\"]}";
    of_class[cls].push_back(static_cast<int>(tensors.size()));
    tensors.push_back({out, cls, false});
  }
  auto shape = [](int c) { return c == 0 ? "[1, 16, 8, 8]" : "[1, 32, 8, 8]"; };
  std::string json = "{\"format\": \"sramplan-graph\", \"version\": 1, \"name\": \"relu_add_" +
                     std::to_string(num_ops) + "_" + std::to_string(seed) + "\", \"dtype\": \"int8\",\n";
  json += "\"tensors\": [\n";
  json += "  {\"name\": \"x0\", \"shape\": " + std::string(shape(0)) + ", \"kind\": \"input\"},\n";
  json += "  {\"name\": \"x1\", \"shape\": " + std::string(shape(1)) + ", \"kind\": \"input\"}";
  for (size_t i = 2; i < tensors.size(); ++i) {
    json += ",\n  {\"name\": \"" + tensors[i].name + "\", \"shape\": " + shape(tensors[i].shape_class);
    if (!tensors[i].read) json += ", \"kind\": \"output\"";
    json += "}";
  }
  json += "\n],\n\"ops\": [";
  json += ops.empty() ? "" : ops.substr(1);
  json += "\n]}\n";
  return json;
}

}  // namespace sramplan::bench
