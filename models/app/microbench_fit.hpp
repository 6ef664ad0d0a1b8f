#pragma once
// `gpumux calibrate` on the CSVs that calibration/microbench/run_all.sh writes on a user's GPU
// (docs/calibration.md, "Calibrating to your own GPU"): the same laws as
// calibration/microbench/fit.py (its README has the long form), so the same files give the same
// numbers.
//
// Time-slicing runs (ts_LABEL_meta.csv + ts_LABEL_gaps.csv, timeslice_probe `drive`): N
// spinning processes; block 0 of each logged every jump of %globaltimer above a threshold, the
// intervals its context was off the GPU. A gap is a *switch gap* when another spinner's run
// overlaps it (overlap > 0 ns), else a *stall*. The context's *slices* are its runs joined
// across stalls; a slice bounded by switch gaps on both sides (not the kernel's first or last)
// and inside the window in which all N spinners were alive is a timeslice sample. All spinners'
// slices merged and sorted by (start, end, process): the idle from one context's slice end to
// the next context's slice start (when >= 0, inside the window) is a switch sample S.
//   timeslice = median of the timeslice samples of every run with N >= 2 (pooled).
// Short kernels beside a spinner (sk_LABEL_{meta,gaps,kernels}.csv, timeslice_probe `shortk`,
// synchronous: every batch one kernel): each kernel inside a gap of the spinner (the last gap
// starting at or before the kernel's start, ending at or after its end); per such gap,
// C_out = gap end - the last kernel end in it (switch back, nothing to save).
//   context_switch = median C_out; preemption_latency = max(median S - context_switch, 0)
//   (so that preemption + switch reproduces S); without a short-kernel run, context_switch =
//   median S and preemption_latency is not fitted.
// Launch (launch.csv, launch_probe): launch_overhead = launch_stream_us, graph_launch_overhead
// = launch_graph_us, hbm_bandwidth_measured = bw_read_GBps, as the probe measured them.
// Medians: numpy's default percentile (linear interpolation between the order statistics), on
// the samples in us (ns / 1000).
// Cross-validation (leave one time-slicing run out): T and S refitted without a run predict the
// run's median wait, the length of a spinner's switch gaps, by the round-robin law
// wait = (N - 1)(T + S) + S; the in-sample error uses the full T and S. The short-kernel split and
// the launch values come from one run each: no fold.
// Cost: O(G x R) per time-slicing run (G gaps, R runs of the other spinners: a few ms for the
// probe's 2 s runs), O(K log G) per short-kernel run.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumux {

/// What a CSV given to `gpumux calibrate` holds, from its header (and, where two kinds share
/// columns, its name).
enum class CalibrationFileKind {
  catalog_points,    ///< measured catalog points (calibrate.hpp)
  spinner_meta,      ///< timeslice_probe: one row per logged block (*_meta.csv)
  spinner_gaps,      ///< timeslice_probe: the gaps of each logged block (*_gaps.csv)
  short_kernels,     ///< timeslice_probe shortk: one row per short kernel (*_kernels.csv)
  launch,            ///< launch_probe: metric,param,value,unit (launch.csv)
  run_facts,         ///< key,value (device.csv, run-info.csv): the GPU's name, the date
  run_steps,         ///< step,rc (steps.csv): read, informs nothing
  other_run_output,  ///< nvidia-smi-*.csv, resolution.csv (by name): informs nothing
};

/// The kind of `path` (its first line that is not blank or a # comment). Throws InputError
/// "FILE:LINE: header: ..." for an empty file or a header of no known kind.
CalibrationFileKind calibration_file_kind(const std::string& path);

/// The profile keys a file of `kind` can inform (empty for the run facts and other output).
std::vector<std::string> keys_informed_by(CalibrationFileKind kind);

/// The profile keys fitted from microbenchmark files, in output order.
const std::vector<std::string>& microbench_keys();

/// The data given to `gpumux calibrate` (the CLI's DATA... and Python's `gpumux.calibrate`
/// alike): a folder stands for its *.csv files, sorted by name; each file's kind from its header.
struct CalibrationInputs {
  std::vector<std::string> catalog;     ///< the catalog-point files, in order
  std::vector<std::string> microbench;  ///< calibration/microbench output, in order
  std::vector<std::string> all;         ///< every file, folders expanded, in order
  std::map<std::string, CalibrationFileKind> kind;
  std::set<std::string> from_folder;  ///< the files a folder stood for (not named one by one)
};

/// Expands folders and classifies each file. Throws InputError for a folder with no .csv file
/// and for a file calibration_file_kind refuses. O(files + folder entries), reads each header.
CalibrationInputs classify_calibration_inputs(const std::vector<std::string>& given);

/// The parameters asked for (`--fit` / `fit=`), split by the fit that owns them.
struct FitKeys {
  std::vector<std::string> catalog;     ///< catalog_fit_keys() members
  std::vector<std::string> microbench;  ///< microbench_keys() members
};

/// Splits `keys` and checks them against `data`: an unknown key, a key no given file informs,
/// or a file named one by one that informs none of the keys (a folder's other files are let be)
/// is an InputError naming `option` ("--fit" on the command line, "fit" in Python). Empty `keys`
/// (fit everything) passes. O(keys x files).
FitKeys split_fit_keys(const std::vector<std::string>& keys, const CalibrationInputs& data,
                       const std::string& option);

/// Throws InputError when `data` mixes catalog points and microbenchmark output (fitted beside
/// the old launch and bandwidth values, kernel_fixed_cost would absorb them); `output_hint` says
/// how to write the first fit, e.g. "-o MY.yaml".
void refuse_mixed_calibration_inputs(const CalibrationInputs& data, const std::string& output_hint);

/// A row of a *_meta.csv: one logged block of a spinner (or of the short-kernel submitter).
struct SpinnerBlock {
  std::int64_t process_id = 0, block = 0;
  std::string role = "spin";  ///< "spin" for a spinner (also when the file has no role column)
  std::int64_t kernel_start_ns = 0, kernel_end_ns = 0;
};
/// A row of a *_gaps.csv: one interval [start, end] a block's context was off the GPU.
struct SpinnerGap {
  std::int64_t process_id = 0, block = 0, start_ns = 0, end_ns = 0;
};
/// A row of a *_kernels.csv (times on the GPU's %globaltimer, host times on the host clock).
struct ShortKernel {
  std::int64_t batch = 0, gpu_start_ns = 0, gpu_end_ns = 0;
};

/// One time-slicing run's samples (ns), as the header's law defines them.
struct TimesliceSamples {
  int spinners = 0;                  ///< N
  std::vector<std::int64_t> slices;  ///< timeslice samples
  std::vector<std::int64_t> switches;
  std::vector<std::int64_t> waits;  ///< switch gaps inside the window
};
TimesliceSamples analyze_timeslice_run(const std::vector<SpinnerBlock>& meta,
                                       const std::vector<SpinnerGap>& gaps);

/// One short-kernel run's samples (ns): per spinner gap holding kernels, gap start to first
/// kernel start (switch in) and last kernel end to gap end (switch out). `synchronous`: every
/// kernel its own batch; `spinners`: the spinner processes beside it.
struct ShortKernelSamples {
  bool synchronous = false;
  int spinners = 0;
  std::vector<std::int64_t> switch_in, switch_out;
};
ShortKernelSamples analyze_short_kernel_run(const std::vector<SpinnerBlock>& meta,
                                            const std::vector<SpinnerGap>& gaps,
                                            const std::vector<ShortKernel>& kernels);

/// numpy.percentile(x, q) with its default linear interpolation; x need not be sorted. NaN for
/// an empty x.
double percentile_linear(std::vector<double> x, double q);

/// One fitted value.
struct MicrobenchValue {
  std::string key;  ///< profile key
  double value = 0;
  std::string unit;                ///< "us" or "GB/s"
  std::string law;                 ///< how it was derived, one phrase
  std::vector<std::string> files;  ///< the files it comes from
  int samples = 0;                 ///< samples behind it (1 for a value the probe measured)
  int folds = 0;                   ///< leave-one-run-out folds (0: one run, no fold)
  double fold_min = 0, fold_max = 0;
};

struct MicrobenchFit {
  std::string gpu;                      ///< device.csv's name ("" when absent)
  std::string date;                     ///< run-info.csv's date_utc, YYYY-MM-DD ("" when absent)
  std::vector<MicrobenchValue> values;  ///< in microbench_keys() order, the measured ones
  /// The pooled medians, us (NaN when not measured).
  double timeslice_us = 0, switch_us = 0, switch_in_us = 0, switch_out_us = 0;
  /// The wait law per time-slicing run with N >= 2.
  struct WaitCheck {
    std::string run;
    int spinners = 0;
    double measured_us = 0, in_sample_us = 0, out_of_sample_us = 0;
  };
  std::vector<WaitCheck> waits;
  /// Median |relative error| of the wait law over those runs (NaN when none).
  double wait_in_sample = 0, wait_out_of_sample = 0;
  const MicrobenchValue* find(const std::string& key) const;
};

/// Reads the microbenchmark files (any mix of the kinds above but catalog_points), pairs each
/// run's meta, gaps and kernels files by name (STEM_meta.csv, STEM_gaps.csv, STEM_kernels.csv;
/// a run with a kernels file is a short-kernel run), and fits (the header's laws). Throws
/// InputError "FILE:LINE: COLUMN: WHY" for a missing column, a value that is not a non-negative
/// integer (times, ids) or number (launch values), an interval that ends before it starts, a
/// row with the wrong number of fields, or a meta file without its gaps file.
MicrobenchFit fit_microbench(const std::vector<std::string>& files);

/// `profile_text` with the keys of `fit` named in `keys` (all when empty) replaced by
/// `{value: ..., fitted: "..."}` entries: the files, the date, the GPU, the law, the samples and
/// the leave-one-run-out range and wait errors. Durations are written in integer ns (rounded to
/// nearest), bandwidths in GB/s.
std::string with_microbench_values(const std::string& profile_text, const MicrobenchFit& fit,
                                   const std::vector<std::string>& keys, const std::string& date);

/// `fit` as JSON (the CLI's `--json` "microbench" block, Python's calibrate()): gpu, date,
/// values {key: {value, unit, samples, folds, fold_min, fold_max, files}}, the pooled medians
/// (us; null when not measured) and the wait law's in- and out-of-sample errors per run.
nlohmann::ordered_json microbench_json(const MicrobenchFit& fit);

/// The Markdown section the CLI prints for `fit`.
std::string microbench_report(const MicrobenchFit& fit);

}  // namespace gpumux
