// Small .tflite models for tests, written with the project's own writer (import/tflite_writer.h).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "import/tflite_writer.h"
#include "test_util.h"

namespace sramplan::testing {

namespace tfl = import::tflite;

inline tfl::Tensor TflTensor(const std::string& name, std::vector<int32_t> shape, int type, uint32_t buffer = 0,
                             std::vector<float> scale = {0.05f}, std::vector<int64_t> zp = {0}, int qdim = 0) {
  tfl::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.type = type;
  t.buffer = buffer;
  t.quant.scale = std::move(scale);
  t.quant.zero_point = std::move(zp);
  if (t.quant.zero_point.size() < t.quant.scale.size()) t.quant.zero_point.resize(t.quant.scale.size(), 0);
  t.quant.quantized_dimension = qdim;
  return t;
}

inline tfl::Operator TflOp(int builtin, std::vector<int32_t> in, std::vector<int32_t> out, tfl::Options o = {}) {
  tfl::Operator op;
  op.builtin = builtin;
  op.inputs = std::move(in);
  op.outputs = std::move(out);
  op.options = o;
  return op;
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// input [1,4,4,2] -> CONV_2D 1x1 (8 ch, per-channel scales 0.5 * (k + 1), relu6) -> t3
// -> DEPTHWISE_CONV_2D 3x3 SAME (no bias) -> t5 -> ADD(t3, t5) -> t6 -> MEAN over H, W -> t8 [1,8].
inline tfl::ModelToWrite SmallTfliteModel() {
  tfl::ModelToWrite m;
  auto& sg = m.subgraph;
  std::vector<float> conv_scales;
  for (int k = 0; k < 8; ++k) conv_scales.push_back(0.5f * static_cast<float>(k + 1));
  std::vector<int8_t> conv_w(16, 2);
  std::vector<int32_t> conv_b(8, 0);
  std::vector<int8_t> dw_w(72);
  for (int h = 0; h < 3; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 8; ++c) dw_w[(h * 3 + w) * 8 + c] = static_cast<int8_t>(h * 30 + w * 10 + c);
  std::vector<int32_t> axes = {1, 2};
  m.buffers = {"", Bytes(conv_w), Bytes(conv_b), Bytes(dw_w), Bytes(axes)};
  sg.tensors = {
      TflTensor("input", {1, 4, 4, 2}, tfl::kInt8),
      TflTensor("conv/w", {8, 1, 1, 2}, tfl::kInt8, 1, conv_scales, {}, 0),
      TflTensor("conv/b", {8}, tfl::kInt32, 2, std::vector<float>(8, 0.01f), {}, 0),
      TflTensor("conv/out", {1, 4, 4, 8}, tfl::kInt8),
      TflTensor("dw/w", {1, 3, 3, 8}, tfl::kInt8, 3, {1.0f}),
      TflTensor("dw/out", {1, 4, 4, 8}, tfl::kInt8),
      TflTensor("add/out", {1, 4, 4, 8}, tfl::kInt8),
      TflTensor("mean/axes", {2}, tfl::kInt32, 4, {}, {}),
      TflTensor("output", {1, 8}, tfl::kInt8),
  };
  tfl::Options conv;
  conv.padding = 1;  // VALID
  conv.activation = 3;
  tfl::Options dw;
  dw.padding = 0;  // SAME
  dw.depth_multiplier = 1;
  m.subgraph.operators = {TflOp(tfl::kConv2D, {0, 1, 2}, {3}, conv), TflOp(tfl::kDepthwiseConv2D, {3, 4, -1}, {5}, dw),
                          TflOp(tfl::kAdd, {3, 5}, {6}), TflOp(tfl::kMean, {6, 7}, {8})};
  sg.inputs = {0};
  sg.outputs = {8};
  return m;
}

// The reference models and tflm_arena.json (../shared/reference/tflite from the repository, or
// $SRAMPLAN_TFLITE_REFERENCE); empty when not found.
inline std::string TfliteReferenceDir() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("SRAMPLAN_TFLITE_REFERENCE")) candidates.push_back(e);
  candidates.push_back(SourcePath("../shared/reference/tflite"));
  candidates.push_back(SourcePath("../../shared/reference/tflite"));  // a worktree under /work/wt/NAME
  for (const auto& c : candidates)
    if (std::filesystem::exists(c + "/tflm_arena.json")) return c;
  return "";
}

}  // namespace sramplan::testing
