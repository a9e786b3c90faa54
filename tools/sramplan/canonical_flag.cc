#include "canonical_flag.h"

#include <cctype>
#include <fstream>

#include "import/tflite_model.h"

namespace sramplan::cli {

StatusOr<bool> WantCanonical(const std::string& model, bool force, bool off) {
  if (force && off) return InvalidArgument("--canonicalize and --no-canonicalize contradict each other; give one");
  if (force || off) return force;
  std::ifstream in(model, std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  size_t i = 0;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i < head.size() && head[i] == '{') return false;          // native graph or MCUNet config
  if (import::tflite::LooksLikeTflite(head)) return false;      // .tflite: NHWC, fused activations
  return !head.empty();                                          // ONNX (an unreadable file fails at import)
}

}  // namespace sramplan::cli
