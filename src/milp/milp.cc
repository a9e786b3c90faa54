#include "milp/milp.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "coin/CbcEventHandler.hpp"
#include "coin/CbcHeuristic.hpp"
#include "coin/CbcHeuristicDiveCoefficient.hpp"
#include "coin/CbcHeuristicFPump.hpp"
#include "coin/CbcHeuristicLocal.hpp"
#include "coin/CbcHeuristicRINS.hpp"
#include "coin/CbcModel.hpp"
#include "coin/CglClique.hpp"
#include "coin/CglFlowCover.hpp"
#include "coin/CglGomory.hpp"
#include "coin/CglKnapsackCover.hpp"
#include "coin/CglMixedIntegerRounding2.hpp"
#include "coin/CglProbing.hpp"
#include "coin/CoinMessageHandler.hpp"
#include "coin/CoinPackedMatrix.hpp"
#include "coin/OsiClpSolverInterface.hpp"
#include "support/progress.h"

namespace sramplan::milp {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Stops CBC at the next event after the deadline. CBC clones handlers, so the flag lives outside.
class DeadlineHandler : public CbcEventHandler {
 public:
  DeadlineHandler(Clock::time_point deadline, bool* fired, Progress* progress)
      : deadline_(deadline), fired_(fired), progress_(progress) {}
  CbcAction event(CbcEvent which) override {
    switch (which) {
      case node:
      case treeStatus:
      case generatedCuts:
      case heuristicPass:
      case afterHeuristic:
        if (progress_ && progress_->enabled() && model_) {
          const double best = model_->getObjValue();
          progress_->Update(best < 1e40 ? best : -1, model_->getBestPossibleObjValue(), model_->getNodeCount());
        }
        if (Clock::now() >= deadline_) {
          *fired_ = true;
          return stop;
        }
        return noAction;
      default:
        return noAction;
    }
  }
  CbcEventHandler* clone() const override { return new DeadlineHandler(*this); }

 private:
  Clock::time_point deadline_;
  bool* fired_;
  Progress* progress_;  // lives outside: CBC clones handlers
};

}  // namespace

int Model::AddCol(double lb, double ub, double obj, bool integer) {
  lb_.push_back(lb);
  ub_.push_back(ub);
  obj_.push_back(obj);
  integer_.push_back(integer);
  return static_cast<int>(lb_.size()) - 1;
}

void Model::AddRow(const std::vector<std::pair<int, double>>& terms, double lb, double ub) {
  int r = static_cast<int>(row_lb_.size());
  for (const auto& [c, v] : terms) {
    if (v == 0) continue;
    ri_.push_back(r);
    ci_.push_back(c);
    el_.push_back(v);
  }
  row_lb_.push_back(lb);
  row_ub_.push_back(ub);
}

double Model::Inf() { return COIN_DBL_MAX; }

double Model::ObjectiveOf(const std::vector<double>& x) const {
  double obj = 0;
  for (int c = 0; c < num_cols(); ++c) obj += obj_[c] * x[c];
  return obj;
}

Result Model::Solve(const SolveOptions& o) const {
  const Clock::time_point t0 = Clock::now();
  const double limit = std::max(0.05, o.time_limit_s);
  const Clock::time_point deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit));
  Result res;
  const int n = num_cols();
  OsiClpSolverInterface solver;
  CoinPackedMatrix matrix(false, ri_.data(), ci_.data(), el_.data(), static_cast<CoinBigIndex>(el_.size()));
  // The triplet constructor sizes the matrix by the largest index seen; pad empty rows/columns.
  matrix.setDimensions(num_rows(), n);
  solver.loadProblem(matrix, lb_.data(), ub_.data(), obj_.data(), row_lb_.data(), row_ub_.data());
  for (int c = 0; c < n; ++c) {
    if (integer_[c]) solver.setInteger(c);
  }
  if (!o.verbose) solver.messageHandler()->setLogLevel(0);
  CbcModel model(solver);
  if (!o.verbose) {
    model.setLogLevel(0);
    model.messageHandler()->setLogLevel(0);
    model.solver()->messageHandler()->setLogLevel(0);
  }
  model.setUseElapsedTime(true);  // wall clock: CPU time runs slower than the clock on a loaded machine
  model.setMaximumSeconds(limit);
  model.setNumberThreads(0);
  model.setMaximumCutPassesAtRoot(-20);  // stop root cuts when they stall
  model.setMaximumCutPasses(3);
  model.setAllowableFractionGap(0);
  model.setAllowableGap(o.allowable_gap);
  bool fired = false;
  Progress progress(o.progress_what, limit, o.progress_unit);
  DeadlineHandler handler(deadline, &fired, &progress);
  model.passInEventHandler(&handler);
  CglProbing probing;
  probing.setUsingObjective(true);
  probing.setMaxPass(3);
  probing.setMaxProbe(100);
  probing.setMaxLook(50);
  probing.setRowCuts(3);
  CglGomory gomory;
  gomory.setLimit(300);
  CglKnapsackCover knapsack;
  CglClique clique;
  clique.setStarCliqueReport(false);
  clique.setRowCliqueReport(false);
  CglMixedIntegerRounding2 mir;
  CglFlowCover flow;
  const bool large = n > o.large_model_cols;
  if (large) model.setMaximumCutPassesAtRoot(5);
  if (!large) model.addCutGenerator(&probing, -1, "Probing");
  model.addCutGenerator(&gomory, -1, "Gomory");
  model.addCutGenerator(&knapsack, -1, "Knapsack");
  model.addCutGenerator(&clique, -1, "Clique");
  model.addCutGenerator(&mir, -1, "MIR2");
  model.addCutGenerator(&flow, -1, "FlowCover");
  CbcRounding rounding(model);
  model.addHeuristic(&rounding);
  CbcHeuristicLocal local(model);
  model.addHeuristic(&local);
  CbcHeuristicFPump pump(model);
  pump.setMaximumPasses(20);
  model.addHeuristic(&pump);
  CbcHeuristicRINS rins(model);
  model.addHeuristic(&rins);
  CbcHeuristicDiveCoefficient dive(model);
  model.addHeuristic(&dive);
  // The root LP has no time limit of its own in CBC.
  auto* clp = dynamic_cast<OsiClpSolverInterface*>(model.solver());
  if (clp != nullptr) clp->getModelPtr()->setMaximumSeconds(limit);
  model.initialSolve();
  if (!model.solver()->isProvenOptimal()) {
    res.infeasible = model.solver()->isProvenPrimalInfeasible();
    res.hit_limit = !res.infeasible && SecondsSince(t0) >= 0.95 * limit;
    res.seconds = SecondsSince(t0);
    return res;  // LP not solved in time (or infeasible): no solution, bound 0
  }
  const double root_lp = model.solver()->getObjValue();
  const double left = limit - SecondsSince(t0);
  if (left <= 0) {
    res.hit_limit = true;
    res.bound = root_lp;
    if (o.start != nullptr) {
      res.has_solution = true;
      res.x = *o.start;
      res.objective = ObjectiveOf(res.x);
      res.bound = std::min(res.bound, res.objective);
    }
    res.seconds = SecondsSince(t0);
    return res;
  }
  // What is left for branch and bound (CBC counts its clock from its own start).
  model.setMaximumSeconds(std::max(0.05, left));
  if (clp != nullptr) clp->getModelPtr()->setMaximumSeconds(-1);
  if (o.start != nullptr) model.setBestSolution(o.start->data(), n, ObjectiveOf(*o.start), true);
  model.branchAndBound();
  const double* best = model.bestSolution();
  res.infeasible = model.isProvenInfeasible();
  if (best != nullptr) {
    res.has_solution = true;
    res.x.assign(best, best + n);
    res.objective = ObjectiveOf(res.x);
  }
  res.optimal = res.has_solution && model.isProvenOptimal();
  res.hit_limit = !res.optimal && !res.infeasible &&
                  (fired || model.isSecondsLimitReached() || SecondsSince(t0) >= 0.95 * limit);
  res.nodes = model.getNodeCount();
  // Without a proof, trust CBC's tree bound only when it is strictly below the incumbent (a time limit
  // during the root cuts reports the incumbent itself); the root LP is always a valid bound.
  res.bound = root_lp;
  if (res.optimal) {
    res.bound = res.objective;
  } else if (!fired) {
    double bp = model.getBestPossibleObjValue();
    if (std::isfinite(bp) && bp > res.bound && (!res.has_solution || bp < res.objective - 0.5)) res.bound = bp;
  }
  if (res.has_solution) res.bound = std::min(res.bound, res.objective);
  if (!std::isfinite(res.bound) || res.bound < -1e300) res.bound = 0;
  res.seconds = SecondsSince(t0);
  progress.Finish(res.has_solution ? res.objective : -1, res.bound);
  return res;
}

}  // namespace sramplan::milp
