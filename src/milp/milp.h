// A small mixed-integer linear program builder on top of CBC's C++ API, shared by the COSMA spill
// ILPs (spill/cosma_fixed.cc, spill/cosma_joint.cc) and the min-peak scheduling ILP (schedule/min_peak_ilp.cc).
//
// Columns and rows are added one by one (rows as sparse term lists with lower/upper bounds); Solve
// hands the model to CBC (one thread) with a fixed set of cut generators and primal heuristics, an
// optional full feasible assignment as the first incumbent, and a wall-clock limit.
//
// Time limit: CBC's own limit (wall clock, not CPU time) covers branch and bound; the root LP gets
// Clp's limit, and an event handler stops the run at the next CBC event after the deadline (root cut
// passes, heuristic passes, nodes). Together this bounds the overrun to one cut pass or heuristic
// call; Result::hit_limit says the limit stopped the solve (so it may not be optimal).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace sramplan::milp {

struct SolveOptions {
  double time_limit_s = 60;               // wall clock; at least 0.05 s is always given
  const std::vector<double>* start = nullptr;  // a full feasible assignment: CBC's first incumbent
  bool verbose = false;                   // CBC's and Clp's logs to stdout
  double allowable_gap = 0.99;            // absolute gap that counts as closed (0.99: integral objectives)
  // Models with more columns than this get fewer root cut passes and no probing (root cuts on big
  // models cost more than they bring).
  int large_model_cols = 3000;
  // Progress on stderr (support/progress.h): what the solve is and the objective's unit.
  const char* progress_what = "MILP (CBC)";
  const char* progress_unit = "";
};

struct Result {
  bool has_solution = false;
  bool optimal = false;     // CBC proved the incumbent optimal
  bool infeasible = false;  // CBC proved the model infeasible
  bool hit_limit = false;   // the time limit stopped the root LP, the cuts or the search
  double objective = 0;     // of x (recomputed from the objective coefficients)
  double bound = 0;         // a valid lower bound on the objective (minimisation); <= objective
  std::vector<double> x;    // the best solution found (size num_cols) when has_solution
  int64_t nodes = 0;        // branch-and-bound nodes
  double seconds = 0;
};

class Model {
 public:
  int AddCol(double lb, double ub, double obj, bool integer);
  // Terms with a zero coefficient are dropped.
  void AddRow(const std::vector<std::pair<int, double>>& terms, double lb, double ub);
  static double Inf();  // +infinity for bounds (use -Inf() for no lower bound)
  int num_cols() const { return static_cast<int>(lb_.size()); }
  int num_rows() const { return static_cast<int>(row_lb_.size()); }
  double ObjectiveOf(const std::vector<double>& x) const;

  // Minimises the objective. Never throws; a root LP that is not solved in time gives no solution and
  // bound 0.
  Result Solve(const SolveOptions& options) const;

 private:
  std::vector<double> lb_, ub_, obj_;
  std::vector<bool> integer_;
  std::vector<int> ri_, ci_;
  std::vector<double> el_;
  std::vector<double> row_lb_, row_ub_;
};

}  // namespace sramplan::milp
