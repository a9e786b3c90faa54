// Model importers: ONNX (graph-only files welcome), the native JSON graph format, MCUNet configs,
// .tflite flatbuffers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace sramplan::import {

struct ImportOptions {
  int64_t batch = 1;               // binds the symbolic batch dimension (ONNX dim_param / dim 0)
  bool allow_unknown_ops = false;  // unknown ONNX ops become "Opaque" instead of an error
  // ONNX only: the dims of the model's only graph input, in its own layout (e.g. {1, 3, 96, 96} to
  // run an ImageNet export at 96x96); empty: as the file says. Shapes are inferred again from it.
  std::vector<int64_t> input_shape;
  bool fold_pad = false;           // .tflite: a spatial PAD feeding only a convolution becomes its padding
};

// What a model file's first bytes say it is: JSON (a native graph or an MCUNet config: the first
// non-space byte is '{'), a .tflite flatbuffer ("TFL3" at byte 4), otherwise ONNX; kEmpty when the
// bytes are empty or all white space. The importer and the CLI's canonicalisation default both use it.
enum class ModelFormat { kEmpty, kJson, kTflite, kOnnx };
ModelFormat DetectModelFormat(std::string_view head);

// Picks the importer by the file's content (see docs/graph-format.md) and verifies the result.
StatusOr<ir::Graph> ImportModel(const std::string& path, const ImportOptions& options);
// The same on the file's bytes already in memory; `path` is used in messages only.
StatusOr<ir::Graph> ImportModelBytes(const std::string& bytes, const std::string& path,
                                     const ImportOptions& options);

// ONNX protobuf bytes -> graph in NCHW with the model's dtypes. `name` is used in messages.
StatusOr<ir::Graph> ImportOnnx(const std::string& bytes, const std::string& name,
                               const ImportOptions& options);
// Native JSON graph text (docs/graph-format.md).
StatusOr<ir::Graph> ImportNativeJson(const std::string& text, const std::string& name,
                                     const ImportOptions& options);
// MCUNet / ProxylessNAS JSON config (first_conv, blocks, feature_mix_layer, classifier) -> int8 NHWC.
StatusOr<ir::Graph> ImportMcunetConfig(const std::string& text, const std::string& name,
                                       const ImportOptions& options);

// A .tflite flatbuffer (subgraph 0) -> NHWC graph, quantised tensors as float32 with the file's
// quantisation parameters and dequantised constants (import/tflite_import.cc).
StatusOr<ir::Graph> ImportTflite(const std::string& bytes, const std::string& name, const ImportOptions& options);

// `g` as a native graph (docs/graph-format.md: format, layout, tensors with shape, kind, dtype and
// quantisation, ops with attributes), which ImportNativeJson reads back into the same graph. Constant
// payloads are not written (the file is the graph's structure; importers of it get seeded weights).
std::string NativeGraphJson(const ir::Graph& g);

// The ONNX operator types the importer maps (for --help and error messages).
const std::vector<std::string>& SupportedOnnxOps();

}  // namespace sramplan::import
