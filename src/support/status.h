// Status / StatusOr: how user-reachable failures travel through the library (no exceptions).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sramplan {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: exit code 1
  kNotFound,         // missing file or element: exit code 1
  kUnsupported,      // an op or feature outside the supported set: exit code 1
  kOutOfMemory,      // a plan does not fit: exit code 2
  kMismatch,         // a plan failed verification or execution disagreed: exit code 3
  kInternal,         // a broken invariant that escaped a check
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prepends context ("while importing model.onnx: ...").
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status OutOfMemory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }

template <typename T>
class StatusOr {
 public:
  StatusOr(const Status& s) : v_(s) {  // NOLINT: implicit by design
    if (s.ok()) v_ = InternalError("StatusOr constructed from an OK status without a value");
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<Status, T> v_;
};

[[noreturn]] inline void CheckFailed(const char* file, int line, const char* cond, const char* msg) {
  std::fprintf(stderr, "sramplan internal error at %s:%d: check failed: %s %s\n", file, line, cond,
               msg);
  std::abort();
}

}  // namespace sramplan

// Internal invariants only; user-reachable failures must return a Status.
#define SP_CHECK(cond)                                                \
  do {                                                                \
    if (!(cond)) ::sramplan::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define SP_CHECK_MSG(cond, msg)                                          \
  do {                                                                   \
    if (!(cond)) ::sramplan::CheckFailed(__FILE__, __LINE__, #cond, msg); \
  } while (0)

#define SP_CONCAT_INNER(a, b) a##b
#define SP_CONCAT(a, b) SP_CONCAT_INNER(a, b)

#define SP_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::sramplan::Status sp_status_ = (expr);   \
    if (!sp_status_.ok()) return sp_status_;  \
  } while (0)

#define SP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define SP_ASSIGN_OR_RETURN(lhs, expr) \
  SP_ASSIGN_OR_RETURN_IMPL(SP_CONCAT(sp_statusor_, __LINE__), lhs, expr)
