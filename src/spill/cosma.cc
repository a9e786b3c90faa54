#include "spill/cosma.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "spill/cosma_internal.h"
#include "spill/divide_conquer.h"
#include "spill/spill_bound.h"

namespace sramplan::spill {

using cosma_internal::Clock;
using cosma_internal::Fmt;
using cosma_internal::IsPreloaded;
using cosma_internal::JointResult;
using cosma_internal::kEliteOrders;
using cosma_internal::kMaxJointOpSteps;
using cosma_internal::OpWindows;
using cosma_internal::SearchOrders;
using cosma_internal::SearchResult;
using cosma_internal::SecondsSince;
using cosma_internal::SolveFixed;
using cosma_internal::SolveJointRelaxation;
using cosma_internal::Structure;

namespace {

Structure Analyze(const SpillProblem& p) {
  Structure s;
  size_t nt = p.tensors.size();
  s.producer.assign(nt, -1);
  s.consumers.assign(nt, {});
  s.preds.assign(p.ops.size(), {});
  for (size_t o = 0; o < p.ops.size(); ++o) {
    for (int t : p.ops[o].outputs) s.producer[t] = static_cast<int>(o);
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    for (int t : p.ops[o].inputs) {
      s.consumers[t].push_back(static_cast<int>(o));
      if (s.producer[t] >= 0) s.preds[o].push_back(s.producer[t]);
    }
  }
  // View ops have no outputs here (their readers read the root tensor), so the problem does not say
  // that a view's readers come after it. Keep that order conservatively: an op without outputs
  // precedes every later op (in the problem's op list, a topological order of the model) that reads
  // one of its inputs. The order search and the joint ILP only move ops along these edges.
  for (size_t v = 0; v < p.ops.size(); ++v) {
    if (!p.ops[v].outputs.empty()) continue;
    for (int t : p.ops[v].inputs) {
      for (int c : s.consumers[t]) {
        if (c > static_cast<int>(v)) s.preds[c].push_back(static_cast<int>(v));
      }
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    std::sort(s.preds[o].begin(), s.preds[o].end());
    s.preds[o].erase(std::unique(s.preds[o].begin(), s.preds[o].end()), s.preds[o].end());
  }
  return s;
}

std::string OpLabel(const SpillProblem& p, int o) {
  return "op " + std::to_string(o) + (p.ops[o].name.empty() ? "" : " '" + p.ops[o].name + "'");
}

}  // namespace

Status ValidateSpillProblem(const SpillProblem& p) {
  const int nt = static_cast<int>(p.tensors.size());
  if (p.alignment < 1) return InvalidArgument("spill problem: alignment must be >= 1");
  if (p.budget < 0) return InvalidArgument("spill problem: negative budget");
  std::vector<int> producer(nt, -1);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const SpillTensor& tt = p.tensors[t];
    if (tt.bytes < 0 || tt.bytes % p.alignment != 0) {
      return InvalidArgument("spill problem: tensor '" + tt.name + "' has " + std::to_string(tt.bytes) +
                             " bytes, not a non-negative multiple of the alignment " +
                             std::to_string(p.alignment));
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    const SpillOp& op = p.ops[o];
    std::set<int> seen;
    for (int t : op.inputs) {
      if (t < 0 || t >= nt) return InvalidArgument("spill problem: " + OpLabel(p, o) + " reads a bad tensor index");
      if (!seen.insert(t).second) return InvalidArgument("spill problem: " + OpLabel(p, o) + " lists an input twice");
    }
    for (int t : op.outputs) {
      if (t < 0 || t >= nt) return InvalidArgument("spill problem: " + OpLabel(p, o) + " writes a bad tensor index");
      if (!seen.insert(t).second) return InvalidArgument("spill problem: " + OpLabel(p, o) + " lists a tensor twice");
      if (producer[t] >= 0 || IsPreloaded(p.tensors[t])) {
        return InvalidArgument("spill problem: tensor '" + p.tensors[t].name + "' has more than one producer");
      }
      producer[t] = static_cast<int>(o);
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    for (int t : p.ops[o].inputs) {
      if (!IsPreloaded(p.tensors[t]) && (producer[t] < 0 || producer[t] >= static_cast<int>(o))) {
        return InvalidArgument("spill problem: " + OpLabel(p, o) + " reads tensor '" + p.tensors[t].name +
                               "' which is not produced before it (ops must be topologically ordered)");
      }
    }
  }
  for (size_t o = 0; o < p.ops.size(); ++o) {
    int64_t need = 0;
    for (int t : p.ops[o].inputs) need += p.tensors[t].bytes;
    for (int t : p.ops[o].outputs) need += p.tensors[t].bytes;
    if (need > p.budget) {
      return Status(StatusCode::kOutOfMemory,
                    OpLabel(p, o) + " needs " + std::to_string(need) +
                        " bytes for its own inputs and outputs but the budget is " + std::to_string(p.budget) +
                        " bytes (M_min = " + std::to_string(MinBudget(p)) +
                        "); raise the budget or tile the op");
    }
  }
  return Status::Ok();
}

Status ValidateSpillOrder(const SpillProblem& p, const std::vector<int>& order) {
  const int n = static_cast<int>(p.ops.size());
  if (static_cast<int>(order.size()) != n) {
    return InvalidArgument("order has " + std::to_string(order.size()) + " steps but the problem has " +
                           std::to_string(n) + " ops");
  }
  std::vector<int> step(n, -1);
  for (int i = 0; i < n; ++i) {
    if (order[i] < 0 || order[i] >= n || step[order[i]] >= 0) {
      return InvalidArgument("order is not a permutation of the ops (bad or repeated entry at step " +
                             std::to_string(i) + ")");
    }
    step[order[i]] = i;
  }
  std::vector<int> producer(p.tensors.size(), -1);
  for (int o = 0; o < n; ++o) {
    for (int t : p.ops[o].outputs) producer[t] = o;
  }
  for (int o = 0; o < n; ++o) {
    for (int t : p.ops[o].inputs) {
      if (producer[t] >= 0 && step[producer[t]] >= step[o]) {
        return InvalidArgument("order runs " + OpLabel(p, o) + " before " + OpLabel(p, producer[t]) +
                               " which produces its input '" + p.tensors[t].name + "'");
      }
    }
  }
  return Status::Ok();
}

namespace {

// Sets what every returned solution reports: method, optimality, bound, time and the detail.
SpillSolution Finish(SpillSolution sol, const std::string& method, bool optimal, int64_t lb, std::string detail,
                     bool hit_limit, Clock::time_point t0, double time_limit_s) {
  sol.method = method;
  sol.proved_optimal = optimal;
  sol.lower_bound_bytes = optimal ? sol.noncompulsory_bytes : std::min(lb, sol.noncompulsory_bytes);
  sol.seconds = SecondsSince(t0);
  sol.hit_time_limit = hit_limit && !optimal;
  sol.detail = std::move(detail) + ", " + Fmt("%.3f s", sol.seconds) +
               (sol.hit_time_limit ? Fmt(", time limit hit (%.1f s)", time_limit_s) : "");
  return sol;
}

// The orders warm starts are built from: the fixed order, or the model order and the distinct warm
// orders.
std::vector<std::vector<int>> CandidateOrders(const SpillProblem& p, const CosmaOptions& o) {
  std::vector<std::vector<int>> orders;
  if (!o.fixed_order.empty()) {
    orders.push_back(o.fixed_order);
  } else {
    std::vector<int> model(p.ops.size());
    std::iota(model.begin(), model.end(), 0);
    orders.push_back(model);
    for (const auto& w : o.warm_orders) {
      if (std::find(orders.begin(), orders.end(), w) == orders.end()) orders.push_back(w);
    }
  }
  return orders;
}

// The best valid Belady or greedy solution over `orders` (the first of equal ones).
std::optional<SpillSolution> BestBaseline(const SpillProblem& p, const std::vector<std::vector<int>>& orders) {
  std::optional<SpillSolution> best;
  auto consider = [&](StatusOr<SpillSolution> cand) {
    if (!cand.ok() || !CheckSolution(p, *cand).ok()) return;
    if (!best || cand->noncompulsory_bytes < best->noncompulsory_bytes) best = std::move(cand).value();
  };
  for (const auto& ord : orders) {
    consider(SolveBelady(p, ord));
    consider(SolveGreedy(p, ord));
  }
  return best;
}

// Fixed-schedule mode: the fixed-order ILP; the best warm start when CBC fails.
StatusOr<SpillSolution> SolveFixedMode(const SpillProblem& p, const Structure& s, const CosmaOptions& o,
                                       const std::optional<SpillSolution>& best, Clock::time_point t0) {
  const std::string method = "cosma-fixed";
  auto fr = SolveFixed(p, s, o.fixed_order, best ? &*best : nullptr, o.time_limit_s, o.verbose);
  if (!fr.ok()) {
    if (!best) return fr.status();
    return Finish(*best, method, false, 0, "cbc failed (" + fr.status().message() + "); warm start " + best->method,
                  false, t0, o.time_limit_s);
  }
  SpillSolution sol = fr->solution;
  if (best && best->noncompulsory_bytes < sol.noncompulsory_bytes) sol = *best;  // cannot happen when optimal
  std::string detail = "cbc " + fr->status + ", " + std::to_string(fr->vars) + " vars, " +
                       std::to_string(fr->rows) + " rows";
  if (!fr->optimal) {
    detail += ", bound " + std::to_string(fr->lower_bound) + " B, gap " +
              std::to_string(sol.noncompulsory_bytes - fr->lower_bound) + " B";
  }
  return Finish(sol, method, fr->optimal && sol.noncompulsory_bytes <= fr->lower_bound, fr->lower_bound, detail,
                fr->hit_limit, t0, o.time_limit_s);
}

// Joint mode. (1) Place the candidate orders exactly with the fast fixed-order path (a quick 0 ends
// here). (2) Search orders (list schedules + local search scored by the capacity simulation) and
// place the best few exactly. (3) The scheduling relaxation, when small enough, gives a bound for
// every order, and an order; place that too. The stages share the best placed solution so far (the
// winner) and the detail they report.
class JointMode {
 public:
  JointMode(const SpillProblem& p, const CosmaOptions& o, const Structure& s, Clock::time_point t0,
            const std::vector<std::vector<int>>& orders, std::optional<SpillSolution> best, int64_t all_bound)
      : p_(p), o_(o), s_(s), t0_(t0), orders_(orders), winner_(std::move(best)), all_bound_(all_bound) {}

  StatusOr<SpillSolution> Run();

 private:
  double Left() const { return o_.time_limit_s - SecondsSince(t0_); }
  // The winner meets the bound over all orders (spill_bound.h): nothing left to search.
  bool AtBound() const { return winner_ && winner_->noncompulsory_bytes <= all_bound_; }
  bool Place(const std::vector<int>& ord, double limit, bool quiet);
  std::string SearchAndPlace(bool joint_fits);
  std::string LargeNeighbourhood();
  JointResult JointBound();

  const SpillProblem& p_;
  const CosmaOptions& o_;
  const Structure& s_;
  const Clock::time_point t0_;
  const std::vector<std::vector<int>>& orders_;
  std::optional<SpillSolution> winner_;
  const int64_t all_bound_;          // bound over all orders and placements (spill_bound.h)
  int64_t winner_fixed_bound_ = -1;  // the fixed-order bound of the winner's order (not a bound over orders)
  std::string detail_;
  int placed_ = 0;
  // Per searched order: "fallback/exact" bytes (the address-aware baselines' best, then the exact
  // fixed-order solve's, '-' when it was skipped or failed), for the detail.
  std::string order_log_;
  bool hit_limit_ = false;
};

// Places `ord` with the fixed-order path within `limit` seconds; true when the winner improved.
// `quiet`: an order of the search (logged in order_log_ instead of the detail).
bool JointMode::Place(const std::vector<int>& ord, double limit, bool quiet) {
  // The address-aware baselines (Belady, greedy) always give a placed, valid solution for the order:
  // the exact solve's warm start, and a candidate of their own, so that an order whose exact solve is
  // skipped, fails or runs out of time still counts with its best placed solution.
  std::optional<SpillSolution> warm;
  auto b = SolveBelady(p_, ord);
  auto g = SolveGreedy(p_, ord);
  if (b.ok() && CheckSolution(p_, *b).ok()) warm = *b;
  if (g.ok() && CheckSolution(p_, *g).ok() && (!warm || g->noncompulsory_bytes < warm->noncompulsory_bytes)) {
    warm = *g;
  }
  bool improved = false;
  auto offer = [&](const SpillSolution& cand, int64_t fixed_bound) {
    if (!winner_ || cand.noncompulsory_bytes < winner_->noncompulsory_bytes ||
        (cand.noncompulsory_bytes == winner_->noncompulsory_bytes && winner_->order == ord &&
         fixed_bound > winner_fixed_bound_)) {
      const bool better = !winner_ || cand.noncompulsory_bytes < winner_->noncompulsory_bytes;
      winner_ = cand;
      winner_fixed_bound_ = fixed_bound;
      improved |= better;
    }
  };
  if (quiet) {
    order_log_ += (order_log_.empty() ? "" : ", ") +
                  (warm ? std::to_string(warm->noncompulsory_bytes) : std::string("-")) + "/";
  }
  if (warm) offer(*warm, -1);
  if (winner_ && winner_->order == ord && (!warm || winner_->noncompulsory_bytes < warm->noncompulsory_bytes)) {
    warm = *winner_;
  }
  if (limit <= 0.05) {
    hit_limit_ = true;
    if (!quiet) detail_ += "; placement skipped (time limit)";
    if (quiet) order_log_ += "-";
    return improved;
  }
  auto fr = SolveFixed(p_, s_, ord, warm ? &*warm : nullptr, limit, o_.verbose);
  ++placed_;
  if (!fr.ok() || !CheckSolution(p_, fr->solution).ok()) {
    if (quiet) order_log_ += "-";
    return improved;
  }
  hit_limit_ |= fr->hit_limit;
  if (quiet) order_log_ += std::to_string(fr->solution.noncompulsory_bytes);
  if (!quiet) {
    detail_ += "; placement " + std::to_string(placed_) + ": cbc " + fr->status + ", " + std::to_string(fr->vars) +
               " vars, " + std::to_string(fr->rows) + " rows, " + Fmt("%.2f s", fr->seconds);
  }
  offer(fr->solution, fr->lower_bound);
  return improved;
}

// Stage (2): the order search, then the exact placement of its best orders. Returns its detail.
std::string JointMode::SearchAndPlace(bool joint_fits) {
  const double T = o_.time_limit_s;
  // Time shares: with the joint ILP to come the search is a warm start for it; without, it is the
  // only thing left, so it gets the time up to 90% of the limit, half simulating, half placing.
  const double end_share = joint_fits ? 0.3 : o_.lns ? 0.55 : 0.9;
  const double search_s = std::max(0.0, end_share * T - (T - Left()));
  const Clock::time_point sim_deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(0.5 * search_s));
  const int n = static_cast<int>(p_.ops.size());
  const int64_t max_evals = o_.order_search_evals > 0 ? o_.order_search_evals
                                                      : std::max<int64_t>(20000, 600LL * n);
  std::vector<std::vector<int>> starts = orders_;
  if (std::find(starts.begin(), starts.end(), winner_->order) == starts.end()) starts.push_back(winner_->order);
  SearchResult sr = SearchOrders(p_, s_, starts, max_evals, sim_deadline, o_.seed, kEliteOrders);
  hit_limit_ |= sr.hit_deadline;
  const int64_t before = winner_->noncompulsory_bytes;
  int exact = 0, improved = 0;
  for (size_t k = 0; k < sr.elite.size(); ++k) {
    if (AtBound()) break;
    const auto& ord = sr.elite[k];
    if (std::find(orders_.begin(), orders_.end(), ord) != orders_.end()) continue;
    // Simulated costs bound the fixed-order capacity optimum from above only; an order whose
    // simulation is far above the winner is still worth placing (fragmentation, the simulation's
    // own choices), but not once the time is spent.
    const double remaining = end_share * T - (T - Left());
    if (remaining <= 0.05) {
      hit_limit_ = true;
      break;
    }
    // The best simulated order gets half of the placement time: its capacity optimum is the lowest,
    // and on fragmenting graphs (NAS cells) the exact placer needs seconds to place it; the other
    // orders share the rest (time an easy order leaves unused passes to the next ones).
    double share = remaining / static_cast<double>(sr.elite.size() - k);
    if (k == 0) share = std::max(share, 0.5 * remaining);
    ++exact;
    improved += Place(ord, std::max(std::min(remaining, 0.05 * T), share), true);
  }
  return "; order search: " + std::to_string(sr.evals) + " simulated orders (" +
         std::to_string(sr.list_schedules) + " list schedules), simulated cost " + std::to_string(sr.start_cost) +
         " -> " + (sr.elite_cost.empty() ? std::string("?") : std::to_string(sr.elite_cost.front())) + " B, " +
         std::to_string(exact) + " orders solved exactly (baselines/exact B: " + order_log_ + "), " +
         std::to_string(before) + " -> " + std::to_string(winner_->noncompulsory_bytes) + " B" +
         (sr.hit_deadline ? " (search stopped by the time limit)" : "");
}

// Stage (2b), graphs too large for the joint ILP: large-neighbourhood search from the winner (the best
// of the baselines, the warm orders' exact solves and the order search): rounds of ReorderRound with
// windows of 40, 60, 24, 80, 32 ops in turn, each window re-solved exactly with the rest of the order
// fixed and the whole order then placed exactly; a round's result replaces the winner only when it
// passes CheckSolution and moves fewer bytes. Stops at the bound, when the time (up to 95% of the
// limit) is spent, or after five rounds in a row without improvement.
std::string JointMode::LargeNeighbourhood() {
  static constexpr int kWindows[] = {40, 60, 24, 80, 32};
  const double T = o_.time_limit_s;
  const int64_t before = winner_->noncompulsory_bytes;
  int rounds = 0, improved = 0, stall = 0;
  while (!AtBound() && stall < 5) {
    const double left = 0.95 * T - (T - Left());
    if (left <= 0.3) {
      hit_limit_ = true;
      break;
    }
    std::string label;
    auto cand = ReorderRound(p_, *winner_, kWindows[rounds % 5], std::min(left, 0.25 * T), o_.verbose, &label);
    ++rounds;
    if (cand.ok() && cand->hit_time_limit) hit_limit_ = true;  // a window stopped on time: the clock decides
    if (cand.ok() && cand->noncompulsory_bytes < winner_->noncompulsory_bytes && CheckSolution(p_, *cand).ok()) {
      winner_ = std::move(cand).value();
      winner_fixed_bound_ = -1;
      ++improved;
      stall = 0;
    } else {
      ++stall;
    }
  }
  return "; large-neighbourhood search: " + std::to_string(rounds) + " rounds, " + std::to_string(improved) +
         " improved, " + std::to_string(before) + " -> " + std::to_string(winner_->noncompulsory_bytes) + " B";
}

// Stage (3): the joint scheduling relaxation, unless the winner needs no bound or it is off.
JointResult JointMode::JointBound() {
  JointResult jr;
  if (AtBound()) {
    jr.skipped = "no joint bound needed";
    return jr;
  }
  const double jl = std::min(o_.time_limit_s - SecondsSince(t0_),
                             std::max(0.1 * o_.time_limit_s, 0.6 * o_.time_limit_s - SecondsSince(t0_)));
  if (!o_.joint_ilp) {
    jr.skipped = "joint ILP off";
  } else if (jl > 0.05) {
    jr = SolveJointRelaxation(p_, s_, winner_ ? &*winner_ : nullptr, jl, o_.verbose);
    hit_limit_ |= jr.hit_limit;
  } else {
    jr.skipped = "joint ILP skipped: time limit";
    hit_limit_ = true;
  }
  return jr;
}

StatusOr<SpillSolution> JointMode::Run() {
  const double T = o_.time_limit_s;
  for (const auto& ord : orders_) {
    if (AtBound()) break;
    Place(ord, std::min(0.25 * T, Left()), false);
  }
  std::vector<int> asap, alap;
  const bool joint_fits = o_.joint_ilp && OpWindows(p_, s_, &asap, &alap) <= kMaxJointOpSteps;
  std::string search_detail;
  if (o_.order_search && winner_ && !AtBound() && Left() > 0.1) {
    search_detail = SearchAndPlace(joint_fits);
  }
  if (o_.lns && !joint_fits && winner_ && !AtBound() && Left() > 0.5) search_detail += LargeNeighbourhood();
  JointResult jr = JointBound();
  detail_ = (!jr.skipped.empty() ? jr.skipped
                                 : "joint bound: cbc " + std::string(jr.optimal ? "optimal" : "time limit") + ", " +
                                       std::to_string(jr.vars) + " vars, " + std::to_string(jr.rows) + " rows, " +
                                       Fmt("%.2f s", jr.seconds)) +
            detail_;
  if (jr.has_order && std::find(orders_.begin(), orders_.end(), jr.order) == orders_.end() &&
      (!winner_ || winner_->noncompulsory_bytes > jr.lower_bound)) {
    Place(jr.order, o_.time_limit_s - SecondsSince(t0_), false);
  }
  detail_ += search_detail;
  if (!winner_) return InternalError("cosma: no solution found (no warm start and CBC failed)");
  const int64_t lb = std::max(jr.lower_bound, all_bound_);
  bool optimal = winner_->noncompulsory_bytes <= lb;
  if (!optimal) {
    detail_ += "; gap " + std::to_string(winner_->noncompulsory_bytes - lb) + " B to the bound over orders";
    if (winner_fixed_bound_ >= 0) {
      detail_ += "; fixed-order bound of the chosen order " + std::to_string(winner_fixed_bound_) +
                 " B (valid for that order only, not over orders)";
    }
  }
  return Finish(*winner_, "cosma", optimal, lb, detail_, hit_limit_, t0_, o_.time_limit_s);
}

}  // namespace

StatusOr<SpillSolution> SolveCosma(const SpillProblem& p, const CosmaOptions& o) {
  Clock::time_point t0 = Clock::now();
  SP_RETURN_IF_ERROR(ValidateSpillProblem(p));
  const bool fixed = !o.fixed_order.empty();
  if (fixed) SP_RETURN_IF_ERROR(ValidateSpillOrder(p, o.fixed_order).WithContext("cosma fixed_order"));
  for (const auto& w : o.warm_orders) SP_RETURN_IF_ERROR(ValidateSpillOrder(p, w).WithContext("cosma warm order"));
  Structure s = Analyze(p);
  const std::string method = fixed ? "cosma-fixed" : "cosma";

  // Warm starts.
  std::vector<std::vector<int>> orders = CandidateOrders(p, o);
  std::optional<SpillSolution> best = BestBaseline(p, orders);
  if (best && best->noncompulsory_bytes == 0) {
    SpillSolution sol = Finish(*best, method, true, 0, "warm start (" + best->method + ") has no non-compulsory traffic",
                               false, t0, o.time_limit_s);
    sol.all_orders_lower_bound_bytes = 0;
    return sol;
  }
  // The bound over all orders: reported with every result; in the joint mode it also ends the search
  // once an order meets it.
  SpillBound bound;
  if (o.all_orders_bound) {
    SpillBoundOptions bo;
    bo.time_limit_s = BoundTimeLimit(o.time_limit_s);
    bo.verbose = o.verbose;
    SP_ASSIGN_OR_RETURN(bound, LowerBoundAllOrders(p, bo));
  }
  StatusOr<SpillSolution> sol = fixed ? SolveFixedMode(p, s, o, best, t0)
                                      : JointMode(p, o, s, t0, orders, std::move(best), bound.bytes).Run();
  if (sol.ok() && o.all_orders_bound) AttachAllOrdersBound(bound, &*sol);
  return sol;
}

double BoundTimeLimit(double time_limit_s) { return std::clamp(0.1 * time_limit_s, 0.2, 5.0); }

void AttachAllOrdersBound(const SpillBound& bound, SpillSolution* sol) {
  sol->all_orders_lower_bound_bytes = std::min(bound.bytes, sol->noncompulsory_bytes);
  sol->detail += "; bound over all orders " + std::to_string(bound.bytes) + " B (" + bound.detail + ")";
}

}  // namespace sramplan::spill
