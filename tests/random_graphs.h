// Random DAGs for property tests: chains, diamonds and NAS-like cells of int8 NHWC ops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace sramplan::testing {

using ir::Graph;
using ir::TensorId;

class RandomGraph {
 public:
  RandomGraph(uint32_t seed, int c) : rng_(seed), c_(c) {
    g_.name = "random" + std::to_string(seed);
    g_.layout = ir::Layout::kNHWC;
  }

  TensorId Input(int64_t hw) { return T("x", {1, hw, hw, c_}, ir::TensorKind::kInput); }

  TensorId Unary(TensorId x) {
    static const char* kTypes[] = {"Relu", "Sigmoid", "HardSwish", "Clip"};
    return Op(kTypes[rng_() % 4], {x}, g_.tensor(x).shape);
  }
  TensorId Pointwise(TensorId x) {
    auto s = g_.tensor(x).shape;
    TensorId w = T("w", {s[3], 1, 1, s[3]}, ir::TensorKind::kConstant);
    return Op("Conv", {x, w}, s, {{"kernel_shape", std::vector<int64_t>{1, 1}}});
  }
  TensorId Depthwise(TensorId x) {
    auto s = g_.tensor(x).shape;
    TensorId w = T("w", {s[3], 3, 3, 1}, ir::TensorKind::kConstant);
    return Op("Conv", {x, w}, s,
              {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}},
               {"group", s[3]}});
  }
  TensorId Add(TensorId a, TensorId b) { return Op("Add", {a, b}, g_.tensor(a).shape); }
  TensorId ConcatThenProject(std::vector<TensorId> xs) {
    auto s = g_.tensor(xs[0]).shape;
    auto cat = s;
    cat[3] = s[3] * static_cast<int64_t>(xs.size());
    TensorId c = Op("Concat", xs, cat, {{"axis", int64_t{3}}});
    TensorId w = T("w", {s[3], 1, 1, cat[3]}, ir::TensorKind::kConstant);
    return Op("Conv", {c, w}, s, {{"kernel_shape", std::vector<int64_t>{1, 1}}});
  }
  TensorId Flatten(TensorId x) {
    auto s = g_.tensor(x).shape;
    TensorId f = Op("Flatten", {x}, {1, s[1] * s[2] * s[3]});
    return Op("Relu", {f}, {1, s[1] * s[2] * s[3]});
  }
  TensorId Random(const std::vector<TensorId>& pool) {
    TensorId a = pool[rng_() % pool.size()];
    switch (rng_() % 5) {
      case 0: return Unary(a);
      case 1: return Pointwise(a);
      case 2: return Depthwise(a);
      case 3: return Add(a, pool[rng_() % pool.size()]);
      default: return ConcatThenProject({a, pool[rng_() % pool.size()]});
    }
  }
  void Finish(TensorId y) { g_.tensor(y).kind = ir::TensorKind::kOutput; }
  Graph& graph() { return g_; }
  std::mt19937& rng() { return rng_; }

 private:
  TensorId T(const std::string& base, std::vector<int64_t> shape, ir::TensorKind kind) {
    ir::Tensor t;
    t.name = base + std::to_string(g_.num_tensors());
    t.shape = std::move(shape);
    t.kind = kind;
    t.dtype = ir::DataType::kInt8;
    return g_.AddTensor(std::move(t));
  }
  TensorId Op(const std::string& type, std::vector<TensorId> in, std::vector<int64_t> out_shape,
              std::vector<std::pair<std::string, ir::AttrValue>> attrs = {}) {
    TensorId y = T("t", std::move(out_shape), ir::TensorKind::kActivation);
    ir::Op op;
    op.name = type + std::to_string(g_.num_ops());
    op.type = type;
    op.inputs = std::move(in);
    op.outputs = {y};
    for (auto& [k, v] : attrs) op.attrs.Set(k, v);
    g_.AddOp(std::move(op));
    return y;
  }

  std::mt19937 rng_;
  int64_t c_;
  Graph g_;
};

inline Graph Chain(uint32_t seed, int n) {
  RandomGraph r(seed, 8);
  TensorId x = r.Input(6);
  for (int i = 0; i < n - 1; ++i) x = r.Random({x});
  x = r.Flatten(x);
  r.Finish(x);
  return std::move(r.graph());
}

inline Graph Diamonds(uint32_t seed, int n) {
  RandomGraph r(seed, 4);
  TensorId x = r.Input(5);
  std::vector<TensorId> pool = {x};
  while (r.graph().num_ops() < n) {
    TensorId l = r.Random({x}), rr = r.Random({x});
    x = r.Add(l, rr);
  }
  r.Finish(r.Unary(x));
  return std::move(r.graph());
}

// NAS-like: each cell combines the two previous cell outputs through a few nodes that each mix two
// earlier states, then concatenates the nodes and projects back.
inline Graph Cells(uint32_t seed, int n) {
  RandomGraph r(seed, 4);
  TensorId prev2 = r.Input(4), prev = r.Unary(prev2);
  while (r.graph().num_ops() < n) {
    std::vector<TensorId> states = {prev2, prev};
    std::vector<TensorId> nodes;
    for (int k = 0; k < 4; ++k) {
      TensorId a = r.Random(states), b = r.Random(states);
      TensorId node = r.Add(a, b);
      states.push_back(node);
      nodes.push_back(node);
    }
    prev2 = prev;
    prev = r.ConcatThenProject(nodes);
  }
  r.Finish(r.Unary(prev));
  return std::move(r.graph());
}

// A random DAG of `min_ops` + rng() % `ops_range` opaque int8 ops over 1-D tensors: each op reads one
// or two earlier tensors; tensors nobody reads are graph outputs.
inline Graph OpaqueDag(std::mt19937& rng, int min_ops, int ops_range) {
  Graph g;
  g.name = "r";
  int n = min_ops + static_cast<int>(rng() % ops_range);
  auto tensor = [&](std::string name, ir::TensorKind kind) {
    ir::Tensor t;
    t.name = std::move(name);
    t.shape = {1 + static_cast<int64_t>(rng() % (kind == ir::TensorKind::kInput ? 50 : 100))};
    t.dtype = ir::DataType::kInt8;
    t.kind = kind;
    return g.AddTensor(std::move(t));
  };
  std::vector<TensorId> avail = {tensor("x", ir::TensorKind::kInput)};
  for (int i = 0; i < n; ++i) {
    ir::Op op;
    op.name = "op" + std::to_string(i);
    op.type = "Opaque";
    int k = 1 + static_cast<int>(rng() % 2);
    for (int j = 0; j < k; ++j) {
      TensorId in = avail[rng() % avail.size()];
      if (std::find(op.inputs.begin(), op.inputs.end(), in) == op.inputs.end()) op.inputs.push_back(in);
    }
    TensorId out = tensor("t" + std::to_string(i), ir::TensorKind::kActivation);
    op.outputs = {out};
    g.AddOp(op);
    avail.push_back(out);
  }
  for (auto& t : g.mutable_tensors())
    if (t.kind == ir::TensorKind::kActivation && t.consumers.empty()) t.kind = ir::TensorKind::kOutput;
  return g;
}

}  // namespace sramplan::testing
