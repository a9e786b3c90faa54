#include "import/import.h"

#include "transform/canonicalize.h"

#include <cctype>
#include <cstdio>

#include "import/json_util.h"
#include "import/tflite_model.h"
#include "support/strings.h"

namespace sramplan::import {

// JSON models (native graphs, MCUNet configs) are read up to 256 MiB: a 100,000-op graph is ~40 MB.
constexpr int64_t kMaxJsonModelBytes = int64_t{256} << 20;

ModelFormat DetectModelFormat(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i == head.size()) return ModelFormat::kEmpty;
  if (head[i] == '{') return ModelFormat::kJson;
  if (tflite::LooksLikeTflite(head)) return ModelFormat::kTflite;
  return ModelFormat::kOnnx;
}

StatusOr<ir::Graph> ImportModel(const std::string& path, const ImportOptions& options) {
  if (options.batch < 1 || options.batch > 65536)
    return InvalidArgument("--batch must be between 1 and 65536");
  // Read at most 2 GiB (ONNX's limit), and refuse at once a stream whose first bytes can be neither
  // JSON nor an ONNX protobuf (/dev/zero, a binary that is not a model).
  std::string bytes;
  auto check_head = [&](std::string_view head, int64_t* max_bytes) -> Status {
    const ModelFormat format = DetectModelFormat(head);
    if (format == ModelFormat::kJson) *max_bytes = kMaxJsonModelBytes;
    if (format != ModelFormat::kOnnx) return Status::Ok();
    // A protobuf message starts with a field tag: field number >= 1 and wire type 0, 1, 2 or 5.
    const unsigned char tag = static_cast<unsigned char>(head[0]);
    const int wire = tag & 7;
    if ((tag >> 3) == 0 || (wire != 0 && wire != 1 && wire != 2 && wire != 5)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", tag);
      return InvalidArgument("model file '" + path + "' is neither JSON nor an ONNX model: it starts with byte " +
                             hex + ", which cannot begin a protobuf message");
    }
    return Status::Ok();
  };
  Status read = ReadFileBounded(path, kMaxFileBytes, &bytes, check_head);
  if (!read.ok()) return read;
  return ImportModelBytes(bytes, path, options);
}

StatusOr<ir::Graph> ImportModelBytes(const std::string& bytes, const std::string& path,
                                     const ImportOptions& options) {
  if (options.batch < 1 || options.batch > 65536)
    return InvalidArgument("--batch must be between 1 and 65536");
  if (bytes.empty()) return InvalidArgument("model file '" + path + "' is empty");
  const ModelFormat format = DetectModelFormat(bytes);
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  StatusOr<ir::Graph> g = InvalidArgument("unreachable");
  if (format == ModelFormat::kJson) {
    if (!options.input_shape.empty())
      return InvalidArgument("--input-shape applies to ONNX models; '" + path +
                             "' is JSON: give the shapes in the graph (or the config's resolution) instead");
    SP_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(bytes, path));
    if (j.is_object() && j.contains("format")) {
      g = ImportNativeJson(bytes, base, options);
    } else if (j.is_object() && j.contains("blocks") && j.contains("first_conv")) {
      g = ImportMcunetConfig(bytes, base, options);
    } else {
      return InvalidArgument("'" + path +
                             "' is JSON but neither a sramplan graph (\"format\": \"sramplan-graph\") "
                             "nor an MCUNet config (\"first_conv\", \"blocks\")");
    }
  } else if (format == ModelFormat::kTflite) {
    g = ImportTflite(bytes, base, options);
  } else {
    g = ImportOnnx(bytes, base, options);
  }
  if (!g.ok()) return g.status().WithContext("importing '" + path + "'");
  // Only the Conv kernels apply a fused `activation`; elsewhere it becomes its own op.
  SP_RETURN_IF_ERROR(transform::UnfuseActivations(&*g, nullptr).WithContext("importing '" + path + "'"));
  return g;
}

}  // namespace sramplan::import
