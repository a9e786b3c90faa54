// bound: the arena's lower bound of a tensor-level strategy: at each step, the bytes that must be
// live there, counting an in-place class once (its largest member live at that step), unaligned
// sizes, plus the step's scratch buffer.
#include <numeric>
#include <set>

#include "driver/context.h"
#include "driver/passes/passes.h"

namespace sramplan::driver::passes {
namespace {

struct StepBytes {
  int step;
  int64_t bytes;
};

// Max over steps of the bytes that must be live there: per in-place class (classes[i] for buffer i)
// its largest member live at that step, plus the scratch buffer of the step (the last one listed,
// if several). Linear in buffers and steps (up to sorting): each class adds its piecewise-constant
// profile to a difference array, never a value per (buffer, step).
int64_t ClassLowerBound(const analysis::Liveness& lv, const std::vector<int>& classes,
                        const std::vector<StepBytes>& scratch, size_t num_steps) {
  const size_t steps = std::max<size_t>(num_steps, 1);
  std::vector<int64_t> diff(steps + 1, 0);
  std::vector<int> order(lv.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return classes[a] < classes[b]; });
  std::vector<std::pair<int64_t, int64_t>>
      events;  // (step, bytes): arrives at step / leaves before it (-1 - bytes)
  std::multiset<int64_t> live;
  for (size_t k = 0; k < order.size();) {
    size_t end = k;
    while (end < order.size() && classes[order[end]] == classes[order[k]]) ++end;
    if (end - k == 1) {
      const analysis::LiveTensor& b = lv.buffers[order[k]];
      diff[b.first_step] += std::max<int64_t>(b.bytes, 0);
      diff[b.last_step + 1] -= std::max<int64_t>(b.bytes, 0);
    } else {
      events.clear();
      for (size_t q = k; q < end; ++q) {
        const analysis::LiveTensor& b = lv.buffers[order[q]];
        events.push_back({b.first_step, b.bytes});
        events.push_back({int64_t{b.last_step} + 1, -1 - b.bytes});
      }
      std::sort(events.begin(), events.end());
      live.clear();
      for (size_t e = 0; e < events.size();) {
        const int64_t step = events[e].first;
        for (; e < events.size() && events[e].first == step; ++e) {
          if (events[e].second >= 0)
            live.insert(events[e].second);
          else
            live.erase(live.find(-1 - events[e].second));
        }
        if (live.empty()) continue;
        const int64_t value =
            std::max<int64_t>(*live.rbegin(), 0);  // the class's bytes until the next event
        const int64_t next = e < events.size() ? events[e].first : static_cast<int64_t>(steps);
        diff[step] += value;
        diff[next] -= value;
      }
    }
    k = end;
  }
  std::vector<int64_t> scratch_at(steps, 0);
  for (const StepBytes& sc : scratch) scratch_at[sc.step] = sc.bytes;
  int64_t lower_bound = 0, sum = 0;
  for (size_t s = 0; s < steps; ++s) {
    sum += diff[s];
    lower_bound = std::max(lower_bound, sum + scratch_at[s]);
  }
  return lower_bound;
}

}  // namespace

MakeResult MakeClassBound(std::string_view arg) {
  return NoArgPass("bound", arg, [](PlanningContext& ctx) -> Status {
    std::vector<StepBytes> scratch_steps;
    for (const Scratch& sc : ctx.tensors.scratch) scratch_steps.push_back({sc.step, sc.bytes});
    ctx.lower_bound =
        ClassLowerBound(ctx.liveness, ctx.tensors.class_of, scratch_steps, ctx.order.size());
    return Status::Ok();
  });
}

}  // namespace sramplan::driver::passes
