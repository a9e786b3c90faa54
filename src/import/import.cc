#include "import/import.h"

#include <cctype>

#include "import/json_util.h"
#include "support/strings.h"

namespace sramplan::import {

StatusOr<ir::Graph> ImportModel(const std::string& path, const ImportOptions& options) {
  if (options.batch < 1 || options.batch > 65536)
    return InvalidArgument("--batch must be between 1 and 65536");
  std::string bytes, error;
  if (!ReadFileToString(path, &bytes, &error)) return NotFound(error);
  return ImportModelBytes(bytes, path, options);
}

StatusOr<ir::Graph> ImportModelBytes(const std::string& bytes, const std::string& path,
                                     const ImportOptions& options) {
  if (options.batch < 1 || options.batch > 65536)
    return InvalidArgument("--batch must be between 1 and 65536");
  if (bytes.empty()) return InvalidArgument("model file '" + path + "' is empty");
  size_t i = 0;
  while (i < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[i]))) ++i;
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  StatusOr<ir::Graph> g = InvalidArgument("unreachable");
  if (i < bytes.size() && bytes[i] == '{') {
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
  } else {
    g = ImportOnnx(bytes, base, options);
  }
  if (!g.ok()) return g.status().WithContext("importing '" + path + "'");
  return g;
}

}  // namespace sramplan::import
