// Strong integer ids so a TensorId can never be passed where an OpId is expected.
#pragma once

#include <cstdint>
#include <functional>

namespace sramplan {

template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(int32_t v) : v_(v) {}
  constexpr int32_t value() const { return v_; }
  constexpr bool valid() const { return v_ >= 0; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  int32_t v_ = -1;
};

}  // namespace sramplan

template <typename Tag>
struct std::hash<sramplan::StrongId<Tag>> {
  size_t operator()(const sramplan::StrongId<Tag>& id) const { return std::hash<int32_t>()(id.value()); }
};
