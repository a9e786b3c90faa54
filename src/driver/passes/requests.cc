// requests[:tflm]: one placement request per in-place class (the class root is the earliest buffer:
// inputs host outputs), then one per scratch buffer. requests:tflm rounds sizes up to 16 bytes with
// alignment 1, as TFLM's allocator does before its planner sees them; without the argument the
// sizes are exact and aligned to the target's alignment.
#include <numeric>

#include "driver/context.h"
#include "driver/passes/passes.h"
#include "support/int_math.h"

namespace sramplan::driver::passes {
namespace {

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

MakeResult MakeRequests(std::string_view arg) {
  return ChoicePass("requests", arg, {"", "tflm"},
                    [](PlanningContext& ctx, const std::string& a) -> Status {
                      const analysis::Liveness& lv = ctx.liveness;
                      TensorState& ts = ctx.tensors;
                      ts.tflm_sizes = a == "tflm";
                      const size_t nb = lv.buffers.size();
                      ts.placed_bytes.resize(nb);
                      for (size_t i = 0; i < nb; ++i)
                        ts.placed_bytes[i] =
                            ts.tflm_sizes ? AlignUp(lv.buffers[i].bytes, 16) : lv.buffers[i].bytes;
                      std::vector<int> parent(nb);
                      std::iota(parent.begin(), parent.end(), 0);
                      for (const auto& p : ts.inplace)
                        parent[Find(parent, p.out_buffer)] = Find(parent, p.in_buffer);
                      ts.class_of.resize(nb);
                      for (size_t i = 0; i < nb; ++i)
                        ts.class_of[i] = Find(parent, static_cast<int>(i));
                      ts.request_of_class.assign(nb, -1);
                      ctx.requests.clear();
                      for (size_t i = 0; i < nb; ++i) {
                        const int c = ts.class_of[i];
                        if (ts.request_of_class[c] < 0) {
                          ts.request_of_class[c] = static_cast<int>(ctx.requests.size());
                          placement::BufferRequest r;
                          r.id = static_cast<int>(ctx.requests.size());
                          r.bytes = ts.placed_bytes[i];
                          r.alignment = ts.tflm_sizes ? 1 : ctx.target.alignment;
                          r.first_step = lv.buffers[i].first_step;
                          r.last_step = lv.buffers[i].last_step;
                          ctx.requests.push_back(r);
                        } else {
                          placement::BufferRequest& r = ctx.requests[ts.request_of_class[c]];
                          r.bytes = std::max(r.bytes, ts.placed_bytes[i]);
                          r.first_step = std::min(r.first_step, lv.buffers[i].first_step);
                          r.last_step = std::max(r.last_step, lv.buffers[i].last_step);
                        }
                      }
                      for (const Scratch& sc : ts.scratch) {
                        placement::BufferRequest r;
                        r.id = static_cast<int>(ctx.requests.size());
                        r.bytes = sc.bytes;
                        r.alignment = 1;
                        r.first_step = r.last_step = sc.step;
                        ctx.requests.push_back(r);
                      }
                      return Status::Ok();
                    });
}

}  // namespace sramplan::driver::passes
