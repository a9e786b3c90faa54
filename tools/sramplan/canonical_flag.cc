#include "canonical_flag.h"

#include <fstream>

#include "import/import.h"

namespace sramplan::cli {

StatusOr<bool> WantCanonical(const std::string& model, bool force, bool off) {
  if (force && off) return InvalidArgument("--canonicalize and --no-canonicalize contradict each other; give one");
  if (force || off) return force;
  std::ifstream in(model, std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  // Only ONNX is channels-first with unfused activations; an unreadable file fails at import.
  return import::DetectModelFormat(head) == import::ModelFormat::kOnnx;
}

}  // namespace sramplan::cli
