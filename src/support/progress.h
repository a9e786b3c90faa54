// Progress of long searches (exact placement, min-peak DP, the CBC solves of COSMA and the min-peak
// ILP, blocking and fusion search) on stderr, and the one wording of their verdict.
//
// A Progress prints nothing during its first second, then at most every half second one line:
//   [exact placement] 2.5 s of 10 s: best 123456 B, bound 120000 B, gap 3456 B (2.8%), 1048576 nodes
// on stderr, only when stderr is a terminal (rewritten in place there), or when SRAMPLAN_PROGRESS=1
// forces it (plain lines; for logs and tests). SRAMPLAN_PROGRESS=0 or SetProgressEnabled(false)
// (the CLI's -q) silences it. When it printed anything, Finish prints the outcome: "proved optimal"
// or "not proved" with the gap. Printing never changes what a search does: results stay
// deterministic.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace sramplan {

// "proved optimal" when best <= bound, else "not proved: best B, bound B, gap B (x%)" in `unit`.
std::string ProofText(double best, double bound, const std::string& unit = "B");

// Turns progress off (false) or back to automatic (true: stderr is a terminal or SRAMPLAN_PROGRESS=1).
void SetProgressEnabled(bool enabled);
// Whether a Progress created now would print.
bool ProgressEnabled();

class Progress {
 public:
  // `what` names the search; `time_limit_s` <= 0: none shown; `work` names the count (nodes, states).
  Progress(std::string what, double time_limit_s, std::string unit = "B", std::string work = "nodes");
  // The same, for a search that is the last phase of a run whose time limit counts from `start`
  // (heuristics ran before it): elapsed time, the first-second quiet period and "x s of limit"
  // count from `start`, so the line shows the run's time against its limit.
  Progress(std::string what, double time_limit_s, std::chrono::steady_clock::time_point start,
           std::string unit = "B", std::string work = "nodes");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The best solution so far and the proved bound (lower is better; bound < 0: none yet) after
  // `work` units. Cheap when disabled or called often: it reads the clock and prints at most every
  // half second. Thread-safe.
  void Update(double best, double bound, int64_t work);
  // The outcome; printed only when a progress line was. A search that proved its best optimal
  // passes bound = best; bound < 0 says "not proved (no bound known)". Idempotent (the destructor calls it with
  // the last values).
  void Finish(double best, double bound);
  bool enabled() const { return enabled_; }
  double Elapsed() const;

 private:
  void Print(double best, double bound, int64_t work, bool final_line);

  std::string what_, unit_, work_name_;
  double time_limit_s_;
  bool enabled_, tty_;
  std::chrono::steady_clock::time_point start_, next_;
  std::mutex mu_;
  bool printed_ = false, finished_ = false;
  double best_ = -1, bound_ = -1;
  int64_t work_ = 0;
};

}  // namespace sramplan
