#include "support/progress.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sramplan {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_allowed{true};

// -1: automatic (a terminal), 0: off, 1: forced; from SRAMPLAN_PROGRESS, read once.
int EnvMode() {
  static const int mode = [] {
    const char* v = std::getenv("SRAMPLAN_PROGRESS");
    if (!v || !*v) return -1;
    return std::strcmp(v, "0") == 0 ? 0 : 1;
  }();
  return mode;
}

std::string Amount(double v, const std::string& unit) {
  if (unit.empty()) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
  }
  char buf[64];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(std::llround(v)), unit.c_str());
  else
    std::snprintf(buf, sizeof buf, "%.6g %s", v, unit.c_str());
  return buf;
}

}  // namespace

std::string ProofText(double best, double bound, const std::string& unit) {
  if (best <= bound) return "proved optimal";
  std::string s = "not proved: best " + Amount(best, unit) + ", bound " + Amount(bound, unit) + ", gap " +
                  Amount(best - bound, unit);
  if (best > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.2f%%)", 100.0 * (best - bound) / best);
    s += pct;
  }
  return s;
}

void SetProgressEnabled(bool enabled) { g_allowed = enabled; }

bool ProgressEnabled() {
  if (!g_allowed || EnvMode() == 0) return false;
  return EnvMode() == 1 || isatty(STDERR_FILENO);
}

Progress::Progress(std::string what, double time_limit_s, std::string unit, std::string work)
    : Progress(std::move(what), time_limit_s, Clock::now(), std::move(unit), std::move(work)) {}

Progress::Progress(std::string what, double time_limit_s, Clock::time_point start, std::string unit,
                   std::string work)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      work_name_(std::move(work)),
      time_limit_s_(time_limit_s),
      enabled_(ProgressEnabled()),
      tty_(enabled_ && isatty(STDERR_FILENO)),
      start_(start),
      next_(start_ + std::chrono::seconds(1)) {}

Progress::~Progress() { Finish(best_, bound_); }

double Progress::Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void Progress::Update(double best, double bound, int64_t work) {
  if (!enabled_) return;
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  best_ = best;
  bound_ = bound;
  work_ = work;
  if (now < next_ || finished_) return;
  next_ = now + std::chrono::milliseconds(500);
  Print(best, bound, work, false);
}

void Progress::Finish(double best, double bound) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (printed_) Print(best, bound, work_, true);
}

void Progress::Print(double best, double bound, int64_t work, bool final_line) {
  std::string line = "[" + what_ + "] ";
  char t[64];
  if (final_line)
    std::snprintf(t, sizeof t, "done in %.1f s: ", Elapsed());
  else if (time_limit_s_ > 0)
    std::snprintf(t, sizeof t, "%.1f s of %g s: ", Elapsed(), time_limit_s_);
  else
    std::snprintf(t, sizeof t, "%.1f s: ", Elapsed());
  line += t;
  line += best >= 0 ? "best " + Amount(best, unit_) : std::string("no solution yet");
  if (bound >= 0) line += ", bound " + Amount(bound, unit_);
  if (final_line && best >= 0 && bound >= 0) {
    line += "; " + ProofText(best, bound, unit_);
  } else if (final_line && best >= 0) {
    line += "; not proved (no bound known)";
  } else if (best >= 0 && bound >= 0 && best > bound) {
    char g[64];
    std::snprintf(g, sizeof g, ", gap %.2f%%", best > 0 ? 100.0 * (best - bound) / best : 0.0);
    line += g;
  }
  if (work > 0) line += ", " + std::to_string(work) + " " + work_name_;
  if (tty_)
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final_line ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace sramplan
