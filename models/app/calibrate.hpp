#pragma once
// `gpumux calibrate` (docs/calibration.md): fits the time-alone parameters that no datasheet
// gives (device_profile.hpp: kernel_fixed_cost, block_round_cost, host_per_request per runtime,
// harness_per_request per benchmark harness)
// to measured times of catalog workloads alone, cross-validates the fit leaving one source out,
// and writes a profile with the fitted values and their provenance.
//
// Data: CSV files with a header row and one measured point per row (calibration/fit/*.csv):
//   id, source, model, phase, batch, seq_len, dtype, runtime, profile, mig, metric, value, unit
// (memory_format, harness, cuda_graph and note optional; empty cells take the catalog's defaults).
// `metric` is `latency` (the mean time of one request alone, unit us|ms|s) or `throughput` (items
// per second of back-to-back requests, unit items/s, the items being the batch's). Each point runs
// as a closed loop of one request in flight on the point's `profile` (a whole GPU, or the MIG
// instance `mig`).
//
// The fit. theta = the free parameters (ns, >= 0). A point's target time T_i is its latency,
// or batch / throughput; its prediction t_i(theta) the simulated mean latency with theta written
// into its profile. Gauss-Newton on the relative residuals r_i = (t_i(theta) - T_i) / T_i: at
// theta_k the Jacobian J_ij = (t_i(theta_k + d e_j) - t_i(theta_k)) / d (d = 1 us, exact while
// t is linear in theta, as it is for a request alone: the costs add on its critical path unless
// the host paces it), then the non-negative least squares
//     theta_{k+1} = argmin_{theta >= 0} || W (t(theta_k) + J (theta - theta_k) - T) ||_2,
//     W = diag(1 / T_i),
// solved exactly by trying every set of free (positive) parameters (2^p unconstrained least
// squares with Eigen's column-pivoting QR, p <= 12) and keeping the best feasible one. Three
// iterations (or until no parameter moves by more than 1 ns).
// Cross-validation: for each source s, theta_s = the NNLS of the rows of the other sources
// (linearised at the full fit), and each point of s is simulated at theta_s: its out-of-sample
// prediction. A parameter no other source informs is 0 in that fold.
// Cost: (iterations x (p + 1) + 1 + sources) x points simulations of a request alone (each a
// few ms to a few hundred ms of CPU) plus 2^p small QR solves per NNLS.
#include <map>
#include <string>
#include <vector>

namespace gpumux {

/// One measured point of a calibration file.
struct CalibrationPoint {
  std::string file;
  int line = 0;  ///< 1-based line of the row
  std::string id, source, model, phase, dtype, runtime, profile, mig, memory_format;
  /// The benchmark harness that timed it (column `harness`, optional; "" = none): the point
  /// pays the profile's harness_per_request of that name (host_time.hpp T_h).
  std::string harness;
  /// Whether the source launched the request's kernels as one CUDA graph (column `cuda_graph`,
  /// optional: `true` or `false`; empty = false): the point runs with the workload's
  /// `cuda_graph: true`, so each kernel's stream gap is graph_launch_overhead + kernel_fixed_cost
  /// instead of launch_overhead + kernel_fixed_cost, and the runtime's per-operator host dispatch
  /// and device time per kernel are not paid (workload_spec.hpp stream_launch_overhead).
  bool cuda_graph = false;
  int batch = 0, seq_len = 0;
  std::string metric;  ///< latency | throughput
  double value = 0;    ///< as written, in `unit`
  std::string unit;
  double target_s = 0;  ///< the time it implies: latency, or batch / throughput (s)
};

/// Throws the InputError "FILE:LINE: COLUMN: WHY" about a calibration point.
[[noreturn]] void point_error(const std::string& file, int line, const std::string& column,
                              const std::string& why);

/// Reads calibration CSV files. Throws InputError naming file, line and column for a missing
/// column, an unknown metric or unit, or a value that is not a positive number.
std::vector<CalibrationPoint> read_calibration_points(const std::vector<std::string>& files);

/// A fitted parameter's name as a profile key path ("kernel_fixed_cost",
/// "host_per_request.tensorrt", "harness_per_request.mlperf-loadgen").
struct CalibrationParameter {
  std::string key;
  double before_ns = 0;  ///< the base profile's value (0 when absent)
  double fitted_ns = 0;
  double fold_min_ns = 0, fold_max_ns = 0;  ///< its range over the leave-one-source-out folds
  int informed_by = 0;  ///< points whose prediction depends on it (non-zero Jacobian column)
};

struct CalibrationRow {
  const CalibrationPoint* point = nullptr;
  double before_s = 0;         ///< predicted with the base profiles' values
  double in_sample_s = 0;      ///< with the fitted values
  double out_of_sample_s = 0;  ///< with the fold that left its source out (NaN: one source)
  std::vector<std::string> depends_on;  ///< the fitted parameters it is sensitive to
};

struct CalibrationOptions {
  /// Which parameters to fit: "kernel_fixed_cost", "block_round_cost", "host_per_request"
  /// (one per runtime of the data's inference points), "harness_per_request" (one per harness
  /// the data's points name). Empty = all four kinds.
  std::vector<std::string> fit;
  int iterations = 3;
  /// Called with a line of progress ("fit 2/3: 84 simulations").
  void (*progress)(const std::string&) = nullptr;
};

struct CalibrationResult {
  std::vector<CalibrationPoint> points;
  std::vector<CalibrationParameter> parameters;
  std::vector<CalibrationRow> rows;  ///< one per point, in file order
  std::vector<std::string> sources;  ///< the folds, sorted
  int simulations = 0;
  /// Median |relative error| over the rows of each mechanism ("alone" on a whole GPU, "MIG"
  /// on an instance, "all"): before, in sample, out of sample (NaN when the points have one
  /// source: no fold to leave out).
  struct Errors {
    std::string mechanism;
    int points = 0;
    double before = 0, in_sample = 0, out_of_sample = 0;
  };
  std::vector<Errors> errors;
};

/// The parameters the catalog fit can fit (`--fit` keys), in fit order: kernel_fixed_cost,
/// block_round_cost, host_per_request (one per runtime in the data), harness_per_request (one
/// per harness in the data).
const std::vector<std::string>& catalog_fit_keys();

/// How the caller spells the output and profile options in messages: {"-o", "--profile",
/// "--profile h100-sxm-80gb"} on the command line, {"output", "profile=",
/// "profile='h100-sxm-80gb'"} in Python.
struct CalibrateOptionNames {
  std::string output, profile, profile_example;
};

/// The base profile of `gpumux calibrate`: `given` when not empty, else the points' profile.
/// When `writing`, the points must name one profile, and microbenchmark data alone (no points:
/// `measured_gpu` is the GPU the files name, maybe "") needs `given`; each an InputError naming
/// the options as `names` spells them. "" when there is nothing to write and no points. O(points).
std::string calibration_base_profile(const std::vector<CalibrationPoint>& points,
                                     const std::string& measured_gpu, const std::string& given,
                                     bool writing, const CalibrateOptionNames& names);

/// Fits, cross-validates and predicts every point (see the header comment). Throws InputError
/// for a point the scenario loader refuses (naming the point's file and line).
CalibrationResult calibrate(const std::vector<CalibrationPoint>& points,
                            const CalibrationOptions& options);

/// The profile `base` (a name or path) with the fitted parameters written into it as
/// `{value: ..., fitted: "..."}` entries (replacing those keys where the base has them), the
/// provenance naming the data files, the date, the points and the cross-validated error.
std::string fitted_profile_text(const std::string& base, const CalibrationResult& result,
                                const std::vector<std::string>& files, const std::string& date);

/// A Markdown report: parameters, errors per mechanism, one row per point.
std::string calibration_report(const CalibrationResult& result);

/// A profile's text without its top-level entries named in `keys` (each: its key line and the
/// indented or continued lines under it). O(length).
std::string without_top_keys(const std::string& text, const std::vector<std::string>& keys);

/// `text` in YAML double quotes (" and \ escaped).
std::string yaml_quoted(const std::string& text);

/// Non-negative least squares min ||A x - b||, x >= 0, for a few columns (p <= 12): every set
/// of positive columns is solved unconstrained and the best feasible solution kept; exact.
/// A is n x p row-major (n rows of p values). O(2^p p^2 n).
std::vector<double> nonnegative_least_squares(const std::vector<double>& a,
                                              const std::vector<double>& b, int columns);

}  // namespace gpumux
