// `gpumux calibrate DATA.csv ... -o PROFILE.yaml`: fits the time-alone parameters a datasheet
// does not give to measured points and writes them into a profile (models/app/calibrate.hpp).
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <optional>
#include <fstream>

#include "models/app/calibrate.hpp"
#include "models/app/cli_common.hpp"
#include "models/app/microbench_fit.hpp"
#include "models/config/profile_loader.hpp"
#include "sim/util/strings.hpp"

namespace gpumux::cli {
namespace {

const CommandHelp kCalibrateHelp{
    "usage: gpumux calibrate DATA.csv [DATA.csv ...] [-o PROFILE.yaml] [--profile BASE]\n"
    "                        [--fit KEYS] [--date YYYY-MM-DD] [--report REPORT.md]\n"
    "                        [--format table|json]",
    "Fits the parameters of a workload's time alone that no datasheet gives: kernel_fixed_cost\n"
    "(stream time per kernel beyond the launch: first-block latency, drain, flush),\n"
    "block_round_cost (per round of blocks on the busiest SM), host_per_request (host time\n"
    "per inference request, one per runtime in the data) and harness_per_request (a benchmark\n"
    "harness's host time per request, one per `harness` the points name) to measured catalog\n"
    "workloads alone\n"
    "(docs/calibration.md: the CSV columns; calibration/fit/ is the shipped calibration set).\n"
    "Non-negative least squares on relative errors (Eigen), each point simulated; then one fold\n"
    "per `source` left out and predicted by the others (out-of-sample error). Prints the\n"
    "parameters, the median |error| before, in sample and out of sample, and each point.\n"
    "-o writes BASE (default: the profile of the data's points, when they name one) with the\n"
    "fitted values as `fitted:` entries (data, date, cross-validated error): use it as a\n"
    "scenario's `model: PROFILE.yaml`.\n"
    "DATA may also be the CSVs calibration/microbench/run_all.sh measured on your GPU (the\n"
    "unpacked raw/ folder, or the folder itself): timeslice, context_switch,\n"
    "preemption_latency, launch_overhead, graph_launch_overhead and hbm_bandwidth_measured, by\n"
    "the laws of calibration/microbench/fit.py, each run left out in turn. The kind of each\n"
    "file comes from its header.",
    "  gpumux calibrate calibration/fit/solo-latency.csv\n"
    "  gpumux calibrate calibration/fit/*.csv --profile a100-80gb -o my-a100.yaml\n"
    "  gpumux calibrate mine.csv --fit host_per_request --report fit.md\n"
    "  gpumux calibrate raw/*.csv --profile h100-sxm-80gb -o my-h100.yaml\n"};

po::options_description calibrate_options() {
  po::options_description o("gpumux calibrate DATA.csv ...");
  o.add_options()("output,o", po::value<std::string>()->value_name("PROFILE.yaml"),
                  "write the fitted profile (atomically)")(
      "profile", po::value<std::string>()->value_name("BASE"),
      "the profile -o copies (a name or a .yaml path); default: the one the points name")(
      "fit", po::value<std::string>()->value_name("KEYS"),
      "comma-separated: kernel_fixed_cost,block_round_cost,host_per_request,"
      "harness_per_request (catalog points);"
      " timeslice,context_switch,preemption_latency,launch_overhead,graph_launch_overhead,"
      "hbm_bandwidth_measured (microbenchmarks); default: all the data informs")(
      "date", po::value<std::string>()->value_name("YYYY-MM-DD"),
      "the date in the provenance (default: run-info.csv's, else today, UTC)")(
      "report", po::value<std::string>()->value_name("REPORT.md"),
      "also write the Markdown report (atomically)")(
      "iterations", po::value<int>()->default_value(3), "Gauss-Newton iterations (1-10)")(
      "format", po::value<std::string>()->value_name("table|json"),
      "output: table (default) or json")("json", po::bool_switch(), "the same as --format json");
  add_quiet_option(o);
  return o;
}

void write_text_file(const char* option, const std::string& path, const std::string& text) {
  output_errors_as_bad_input(
      [&] {
        replace_file_atomically(path, [&](const std::string& temp) {
          std::ofstream out(temp, std::ios::binary);
          out << text;
          out.close();
          if (!out) throw OutputError(path + ": cannot write");
        });
      },
      option);
}

/// PATH as a name to compare (the same file by two spellings: ./a.csv and a.csv).
std::filesystem::path comparable_path(const std::string& path) {
  std::error_code ec;
  // Absolute first: weakly_canonical("new.md") stays relative while "./new.md" does not.
  const std::filesystem::path p =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return (ec ? std::filesystem::path(path) : p).lexically_normal();
}

/// -o and --report each name a file of their own: not one of the DATA files (the write would
/// replace the measurements with the profile or report) and not each other (the report would
/// replace the profile).
void refuse_targets_that_overwrite(const po::variables_map& vm,
                                   const std::vector<std::string>& data_files) {
  std::vector<std::pair<std::string, std::string>> targets;
  for (const char* option : {"output", "report"}) {
    if (vm.count(option)) {
      targets.emplace_back(option == std::string("output") ? "-o" : "--report",
                           vm[option].as<std::string>());
    }
  }
  for (const auto& [option, target] : targets) {
    for (const std::string& file : data_files) {
      if (comparable_path(target) == comparable_path(file)) {
        throw InputError(option + " " + target +
                         ": is one of the data files; writing it would replace the measured "
                         "points (name another file)");
      }
    }
  }
  if (targets.size() == 2 &&
      comparable_path(targets[0].second) == comparable_path(targets[1].second)) {
    throw InputError("--report " + targets[1].second +
                     ": the same file as -o; the report would replace the profile (name another "
                     "file)");
  }
}

/// DATE as YYYY-MM-DD, a day of the calendar (2026-02-30 and 2026-13-01 are refused).
bool is_calendar_date(const std::string& date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return false;
  for (std::size_t i = 0; i < date.size(); ++i) {
    if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(date[i]))) return false;
  }
  const std::chrono::year_month_day day{
      std::chrono::year{std::stoi(date.substr(0, 4))},
      std::chrono::month{static_cast<unsigned>(std::stoi(date.substr(5, 2)))},
      std::chrono::day{static_cast<unsigned>(std::stoi(date.substr(8, 2)))}};
  return day.ok();
}

nlohmann::ordered_json result_json(const CalibrationResult& r) {
  nlohmann::ordered_json out;
  for (const CalibrationParameter& p : r.parameters) {
    out["parameters"][p.key] = {{"before_ns", p.before_ns},
                                {"fitted_ns", p.fitted_ns},
                                {"fold_min_ns", p.fold_min_ns},
                                {"fold_max_ns", p.fold_max_ns},
                                {"points", p.informed_by}};
  }
  for (const auto& e : r.errors) {
    out["errors"][e.mechanism] = {{"points", e.points},
                                  {"before", e.before},
                                  {"in_sample", e.in_sample},
                                  {"out_of_sample", e.out_of_sample}};
  }
  out["points"] = nlohmann::ordered_json::array();
  for (const CalibrationRow& row : r.rows) {
    out["points"].push_back({{"id", row.point->id},
                             {"source", row.point->source},
                             {"measured_s", row.point->target_s},
                             {"before_s", row.before_s},
                             {"in_sample_s", row.in_sample_s},
                             {"out_of_sample_s", row.out_of_sample_s},
                             {"depends_on", row.depends_on}});
  }
  out["sources"] = r.sources;
  out["simulations"] = r.simulations;
  return out;
}

std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

int command_calibrate(const std::vector<std::string>& args) {
  po::options_description all = calibrate_options();
  all.add_options()("data", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("data", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (!vm.count("data")) throw po::error("missing DATA.csv (the measured points)");
  const bool json =
      vm["json"].as<bool>() || (vm.count("format") && vm["format"].as<std::string>() == "json");
  if (vm.count("format") && vm["format"].as<std::string>() != "json" &&
      vm["format"].as<std::string>() != "table") {
    throw InputError("--format: expected table or json, got '" + vm["format"].as<std::string>() +
                     "'");
  }
  const int iterations = vm["iterations"].as<int>();
  if (iterations < 1 || iterations > 10) throw InputError("--iterations: expected 1 to 10");
  std::string date;
  if (vm.count("date")) {
    date = vm["date"].as<std::string>();
    if (!is_calendar_date(date)) {
      throw InputError("--date: expected a day as YYYY-MM-DD, got '" + date + "'");
    }
  }
  // `--profile ''` was taken as no --profile (the points' own profile written).
  if (vm.count("profile") && trim(vm["profile"].as<std::string>()).empty()) {
    throw InputError("--profile: empty; give a profile name or a .yaml path");
  }
  // Every check before any simulation: the data, the base profile, the targets.
  const CalibrationInputs data =
      classify_calibration_inputs(vm["data"].as<std::vector<std::string>>());
  const FitKeys fit_keys =
      vm.count("fit") ? split_fit_keys(split(vm["fit"].as<std::string>(), ','), data, "--fit")
                      : FitKeys{};
  refuse_mixed_calibration_inputs(data, "-o MY.yaml");
  const bool has_catalog = !data.catalog.empty();
  const bool has_microbench = !data.microbench.empty();
  std::vector<CalibrationPoint> points;
  if (has_catalog) points = read_calibration_points(data.catalog);
  std::optional<MicrobenchFit> bench;
  if (has_microbench) bench = fit_microbench(data.microbench);
  const std::string base = calibration_base_profile(
      points, bench ? bench->gpu : std::string(),
      vm.count("profile") ? vm["profile"].as<std::string>() : std::string(), vm.count("output") > 0,
      {"-o", "--profile", "--profile h100-sxm-80gb"});
  // The points' profiles first: a base taken from them is then known to load.
  for (const CalibrationPoint& p : points) {
    try {
      (void)load_device_profile(p.profile);
    } catch (const InputError& e) {
      point_error(p.file, p.line, "profile", e.what());
    }
  }
  if (!base.empty()) {
    try {
      (void)load_device_profile(base);
    } catch (const InputError& e) {
      if (!vm.count("profile")) throw;
      throw InputError("--profile: " + std::string(e.what()));
    }
  }
  if (vm.count("output")) {
    output_errors_as_bad_input([&] { check_output_target(vm["output"].as<std::string>()); });
  }
  if (vm.count("report")) {
    output_errors_as_bad_input([&] { check_output_target(vm["report"].as<std::string>()); },
                               "--report");
  }
  refuse_targets_that_overwrite(vm, data.all);
  if (date.empty()) date = bench && !bench->date.empty() ? bench->date : today_utc();
  std::optional<CalibrationResult> result;
  if (has_catalog) {
    CalibrationOptions options;
    options.fit = fit_keys.catalog;
    options.iterations = iterations;
    if (!vm["quiet"].as<bool>()) {
      options.progress = [](const std::string& line) {
        std::cerr << "calibrate: " << line << "\n";
      };
    }
    result = calibrate(points, options);
    if (result->sources.size() == 1) {
      std::cerr << "gpumux: warning: " << join(data.catalog, ", ") << ": every point is of source '"
                << result->sources.front()
                << "': leave-one-source-out cross-validation needs two sources (out of sample: "
                   "n/a)\n";
    }
  }
  std::string report;
  if (result) report += calibration_report(*result);
  if (bench) {
    if (!report.empty()) report += "\n";
    report += microbench_report(*bench);
  }
  if (json) {
    nlohmann::ordered_json out = result ? result_json(*result) : nlohmann::ordered_json::object();
    if (bench) out["microbench"] = microbench_json(*bench);
    std::cout << out.dump() << "\n";
  } else {
    std::cout << report;
  }
  if (vm.count("output")) {
    std::string text =
        result ? fitted_profile_text(base, *result, data.catalog, date) : device_profile_text(base);
    if (bench) text = with_microbench_values(text, *bench, fit_keys.microbench, date);
    write_text_file("-o", vm["output"].as<std::string>(), text);
  }
  if (vm.count("report")) write_text_file("--report", vm["report"].as<std::string>(), report);
  return kExitOk;
}

}  // namespace

Command calibrate_command() {
  return Command{"calibrate", &kCalibrateHelp, calibrate_options, command_calibrate};
}

}  // namespace gpumux::cli
