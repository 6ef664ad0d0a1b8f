// gpumux mig, models, report, plot: the device profiles and stored result files; no simulation.
#include <fmt/format.h>

#include <iostream>

#include "models/app/cli_common.hpp"
#include "models/app/python_tool.hpp"
#include "models/config/mig_names.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/gpu/sharing_law.hpp"
#include "models/output/result_io.hpp"
#include "models/output/result_read_isolated.hpp"
#include "models/strategies/registry.hpp"
#include "sim/util/strings.hpp"

namespace gpumux::cli {
namespace {

// A command without a positional argument: its options only; anything else is bad input.
po::variables_map parse_listing(const std::vector<std::string>& args,
                                const po::options_description& options) {
  const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
  for (const po::option& option : parsed.options) {
    if (option.position_key >= 0) {
      throw po::error(fmt::format("unexpected argument '{}'", option.value.front()));
    }
  }
  po::variables_map vm;
  po::store(parsed, vm);
  po::notify(vm);
  return vm;
}

const CommandHelp kMigHelp{
    "usage: gpumux mig GPU_MODEL [--check LAYOUT] [--format table|json|yaml] [--json]",
    "Without --check: the MIG profiles of GPU_MODEL (SMs, memory, slices, max count, placements)\n"
    "and its named layouts. With --check: does LAYOUT fit, and where does each instance go?\n"
    "LAYOUT is comma-separated profiles, PROFILE:COUNT for repeats (mig-parted/GKE syntax), or a\n"
    "named layout. GPU_MODEL is a profile name (see `gpumux models`) or an nvidia-smi name.\n"
    "--format json|yaml prints the same data with machine units (bytes); with --check it holds\n"
    "`fits`, `reason` (when it does not) and each placement's memory slices.\n"
    "Exit: 0 fits, 1 does not fit, 2 bad input.",
    "  gpumux mig h100-sxm-80gb\n"
    "  gpumux mig h100-sxm-80gb --format yaml\n"
    "  gpumux mig h100-sxm-80gb --check 3g.40gb:2,1g.10gb:1\n"
    "  gpumux mig \"NVIDIA H100 80GB HBM3\" --check all-balanced\n"};
const CommandHelp kModelsHelp{
    "usage: gpumux models [--format table|json|yaml] [--json]",
    "Lists the GPU models built in (calibration/profiles/*.yaml): SMs, memory, HBM bandwidth,\n"
    "dense FP16 Tensor Core peak (`-` where the profile gives none), MIG profiles, and the\n"
    "nvidia-smi names accepted as `model:` in scenarios. --format json|yaml: one entry per\n"
    "model, machine units (memory_bytes, hbm_bandwidth_bytes_per_s, fp16_tensor_flops; null\n"
    "where the profile gives none).",
    "  gpumux models\n"
    "  gpumux models --json\n"};
const CommandHelp kReportHelp{
    "usage: gpumux report OUT.h5 [--format table|json|yaml|csv] [--json] [--html REPORT.html]",
    "Prints the summary stored in a result file written by `run -o` or `compare -o`.\n"
    "Default: the table; --json prints the stored JSON summary (one line per run).\n"
    "Every table of the file is read through first: a corrupt or truncated one is refused\n"
    "(`OUT.h5: /requests: corrupt or truncated table (...)`, exit 2), as is a table declaring\n"
    "more rows than the file could hold; OUT.h5 must be a regular file (no FIFO or device).\n"
    "--html REPORT.html is checked before anything is read, as `run -o` checks its target, and\n"
    "written atomically (REPORT.html.tmp.PID, fsynced, renamed).\n"
    "--html writes one self-contained page (no external files): summary tables, SLO verdicts,\n"
    "latency CDFs, utilisation and memory timelines, notes and assumptions (needs python3 with\n"
    "matplotlib; GPUMUX_PYTHON selects the interpreter).",
    "  gpumux report out.h5\n"
    "  gpumux report cmp.h5 --json\n"
    "  gpumux report cmp.h5 --format csv\n"
    "  gpumux report out.h5 --html report.html\n"};
const CommandHelp kPlotHelp{
    "usage: gpumux plot OUT.h5 [--kind cdf|timeline|compare] -o FIG.png|FIG.svg",
    "Draws a figure of a result file (run -o or compare -o) with matplotlib:\n"
    "  cdf       latency CDF per tenant (ms, log scale) and its tail (1 - CDF, log), SLO lines\n"
    "  timeline  SM busy, DRAM busy and memory used per device over simulated time\n"
    "  compare   p99 per tenant for each strategy with SLO targets; throughput, SM busy, cost\n"
    "Default kind: compare for a compare file, cdf for a single run. Needs python3 with\n"
    "matplotlib (GPUMUX_PYTHON selects the interpreter). -o is checked before anything is\n"
    "read, as `run -o` checks its target (a regular file or a new name: no directory, FIFO,\n"
    "missing folder), and written atomically. Exit 0 written, 2 bad input or a failed write.",
    "  gpumux plot out.h5 -o cdf.png\n"
    "  gpumux plot out.h5 --kind timeline -o timeline.svg\n"
    "  gpumux plot cmp.h5 --kind compare -o compare.png\n"};

po::options_description mig_options() {
  po::options_description o("gpumux mig GPU_MODEL");
  o.add_options()("check", po::value<std::string>()->value_name("LAYOUT"),
                  "a layout: comma-separated profiles (3g.40gb,2g.20gb,1g.10gb), with counts "
                  "(3g.40gb:2,1g.10gb:1), or a name (all-balanced)");
  add_data_format_options(o);
  add_quiet_option(o);
  return o;
}

po::options_description models_options() {
  po::options_description o("gpumux models");
  add_data_format_options(o);
  add_quiet_option(o);
  return o;
}

po::options_description report_options() {
  po::options_description o("gpumux report OUT.h5");
  o.add_options()("format", po::value<std::string>()->value_name(join(output_format_names(), "|")),
                  "output: table (default), json (the stored summary, one line per run), csv "
                  "(one row per tenant, a strategy column for compare files)")(
      "json", po::bool_switch(), "the same as --format json")(
      "html", po::value<std::string>()->value_name("REPORT.html"),
      "write a self-contained HTML report here");
  add_quiet_option(o);
  return o;
}

po::options_description plot_options() {
  po::options_description o("gpumux plot OUT.h5");
  o.add_options()("kind", po::value<std::string>()->value_name("cdf|timeline|compare"),
                  "the figure (default: compare for a compare file, else cdf)")(
      "output,o", po::value<std::string>()->required()->value_name("FIG.png|svg"),
      "the figure file: .png or .svg");
  add_quiet_option(o);
  return o;
}

// `gpumux mig MODEL --format json|yaml`: the profile's MIG geometry, memory in bytes.
nlohmann::ordered_json mig_profiles_json(const DeviceProfile& gpu) {
  nlohmann::ordered_json profiles = nlohmann::ordered_json::array();
  for (const MigProfileSpec& spec : gpu.mig_profiles) {
    profiles.push_back({{"name", spec.name},
                        {"sms", spec.sms},
                        {"memory_bytes", spec.memory},
                        {"memory_slices", spec.memory_slices},
                        {"compute_slices", spec.compute_slices},
                        {"max_count", spec.max_count},
                        {"placements", spec.placements}});
  }
  nlohmann::ordered_json layouts = nlohmann::ordered_json::object();
  for (const auto& [name, instances] : gpu.mig_layouts) layouts[name] = instances;
  return {{"model", gpu.name},
          {"memory_slices", gpu.memory_slices},
          {"compute_slices", gpu.compute_slices},
          {"profiles", profiles},
          {"layouts", layouts}};
}

// `gpumux mig MODEL --check LAYOUT --format json|yaml`: the verdict and each placement.
nlohmann::ordered_json mig_fit_json(const DeviceProfile& gpu, const std::string& layout_text,
                                    const MigFitResult& fit) {
  nlohmann::ordered_json result{{"model", gpu.name}, {"layout", layout_text}, {"fits", fit.fits}};
  if (!fit.fits) {
    result["reason"] = fit.reason;
    return result;
  }
  nlohmann::ordered_json placements = nlohmann::ordered_json::array();
  int compute = 0;
  for (const MigInstancePlacement& p : fit.placements) {
    compute += p.profile->compute_slices;
    placements.push_back({{"index", p.index},
                          {"profile", p.profile->name},
                          {"first_memory_slice", p.start},
                          {"last_memory_slice", p.end() - 1},
                          {"sms", p.profile->sms},
                          {"memory_bytes", p.profile->memory}});
  }
  result["placements"] = placements;
  result["compute_slices_used"] = compute;
  result["compute_slices"] = gpu.compute_slices;
  return result;
}

int command_mig(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, mig_options(), "model");
  const DataFormat format = data_format(vm);
  const DeviceProfile& profile = load_device_profile(vm["model"].as<std::string>());
  if (!vm.count("check")) {
    if (format == DataFormat::table) {
      std::cout << describe_mig(profile);
    } else {
      print_data(mig_profiles_json(profile), format, std::cout);
    }
    return kExitOk;
  }
  const std::string layout_text = vm["check"].as<std::string>();
  std::vector<std::string> layout;
  try {
    layout = expand_mig_layout(profile, {layout_text});
  } catch (const InputError& e) {
    // A layout that cannot be read ('3g.40gb:x', an unknown layout name) names the option.
    if (!e.where().file.empty()) throw;
    throw InputError(SourceLocation{"--check", 0, 0, ""}, e.what());
  }
  const MigFitResult fit = fit_mig_layout(profile, layout);
  if (format != DataFormat::table) {
    print_data(mig_fit_json(profile, layout_text, fit), format, std::cout);
    return fit.fits ? kExitOk : kExitSlo;
  }
  if (!fit.fits) {
    std::cout << "does not fit on " << profile.name << ": " << fit.reason << "\n";
    return kExitSlo;
  }
  std::cout << "fits on " << profile.name << ":\n";
  int compute = 0;
  for (const MigInstancePlacement& p : fit.placements) {
    compute += p.profile->compute_slices;
    std::cout << "  #" << p.index << "  " << p.profile->name << "  memory slices " << p.start << "-"
              << p.end() - 1 << "  " << p.profile->sms << " SMs\n";
  }
  std::cout << "  compute slices used: " << compute << " of " << profile.compute_slices << "\n";
  return kExitOk;
}

// `gpumux models --format json|yaml`: one entry per built-in model, machine units.
nlohmann::ordered_json models_json() {
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const std::string& name : embedded_profile_names()) {
    const DeviceProfile& gpu = load_device_profile(name);
    std::vector<std::string> mig;
    for (const MigProfileSpec& spec : gpu.mig_profiles) {
      if (spec.name.find('+') == std::string::npos) mig.push_back(spec.name);
    }
    models.push_back({{"model", gpu.name},
                      {"sms", gpu.sms},
                      {"memory_bytes", gpu.memory},
                      {"hbm_bandwidth_bytes_per_s", gpu.hbm_bandwidth},
                      {"fp16_tensor_flops", gpu.compute.fp16_tensor > 0
                                                ? nlohmann::ordered_json(gpu.compute.fp16_tensor)
                                                : nlohmann::ordered_json()},
                      {"mig_profiles", mig},
                      {"nvidia_smi_names", gpu.nvidia_smi_names}});
  }
  return models;
}

int command_models(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_listing(args, models_options());
  const DataFormat format = data_format(vm);
  if (format != DataFormat::table) {
    print_data(models_json(), format, std::cout);
    return kExitOk;
  }
  std::cout << fmt::format("{:<15} {:>4} {:>10} {:>10} {:>12}  {:<48} {}\n", "model", "SMs",
                           "memory", "HBM", "FP16 tensor", "MIG profiles", "nvidia-smi name");
  for (const std::string& name : embedded_profile_names()) {
    const DeviceProfile& gpu = load_device_profile(name);
    std::string mig;
    for (const MigProfileSpec& spec : gpu.mig_profiles) {
      if (spec.name.find('+') != std::string::npos) continue;  // +me/+gfx variants: `gpumux mig`
      mig += (mig.empty() ? "" : " ") + spec.name;
    }
    std::string smi;
    for (const std::string& alias : gpu.nvidia_smi_names) smi += (smi.empty() ? "" : " | ") + alias;
    const std::string fp16 = gpu.compute.fp16_tensor > 0
                                 ? fmt::format("{:.1f} TFLOPS", gpu.compute.fp16_tensor / 1e12)
                                 : "-";
    std::cout << fmt::format(
        "{:<15} {:>4} {:>6.1f} GiB {:>5.2f} TB/s {:>12}  {:<48} {}\n", gpu.name, gpu.sms,
        static_cast<double>(gpu.memory) / (1024.0 * 1024 * 1024), gpu.hbm_bandwidth / 1e12, fp16,
        mig.empty() ? "-" : mig, smi.empty() ? "-" : smi);
  }
  std::cout << "\nUse a model name or its nvidia-smi name as `model:` in a scenario; "
               "`gpumux mig MODEL` shows the MIG details.\n";
  return kExitOk;
}

// A cluster replay's result file (`kind: cluster` in its /summary, models/cluster/
// cluster_output.hpp): report prints that summary; the device-result views refuse it.
bool is_cluster_summary(const std::vector<nlohmann::ordered_json>& summaries) {
  return summaries.size() == 1 && summaries.front().is_object() &&
         summaries.front().value("kind", "") == "cluster";
}

InputError not_for_cluster(const std::string& path, const std::string& what) {
  return InputError(SourceLocation{path, 0, 0, ""},
                    what +
                        " reads device results, and this is a cluster replay's file (kind "
                        "cluster): `gpumux report " +
                        path +
                        "` prints its summary; its tables are under /cluster (docs/cluster.md)");
}

// The cluster summary as indented `key: value` lines (nested objects and arrays indented).
void print_cluster_summary(const nlohmann::ordered_json& value, const std::string& indent,
                           std::ostream& out) {
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string key = value.is_object() ? it.key() : "-";
    if (it->is_structured()) {
      out << indent << key << ":\n";
      print_cluster_summary(*it, indent + "  ", out);
    } else {
      out << indent << key << ": " << it->dump() << "\n";
    }
  }
}

/// The file Python will write (report --html, plot -o), checked here as `run -o` checks its
/// target (sim/io/output_target.hpp: a regular file or a new name in a directory where files can
/// be created; no directory, FIFO, device, missing folder or name too long): one line, exit 2,
/// before any work, instead of a traceback after it.
void check_written_file(const std::string& option, const std::string& path) {
  try {
    check_output_target(path);
  } catch (const OutputError& e) {
    throw InputError(option + " " + e.what());
  }
}

int command_report(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, report_options(), "file");
  const OutputFormat format = output_format(vm);
  if (vm.count("html") && extension_of(vm["html"].as<std::string>()) != ".html" &&
      extension_of(vm["html"].as<std::string>()) != ".htm") {
    bad_extension("--html", vm["html"].as<std::string>(), ".html");
  }
  if (vm.count("html")) check_written_file("--html", vm["html"].as<std::string>());
  // Every table of the file decodes (a corrupt /requests is refused here, not reported on), in
  // a child process: the HDF5 library can crash or hang on a corrupt file.
  const std::vector<nlohmann::ordered_json> summaries =
      read_result_file_isolated(vm["file"].as<std::string>());
  if (is_cluster_summary(summaries)) {
    if (vm.count("html")) throw not_for_cluster(vm["file"].as<std::string>(), "report --html");
    if (format == OutputFormat::csv) {
      throw not_for_cluster(vm["file"].as<std::string>(), "report --format csv");
    }
    if (structured(format)) {
      print_structured(summaries.front(), format, std::cout);
    } else {
      std::cout << "cluster replay " << vm["file"].as<std::string>() << "\n";
      print_cluster_summary(summaries.front(), "  ", std::cout);
    }
    return kExitOk;
  }
  if (vm.count("html")) {
    return exec_python_module(
        "report --html", "gpumux.report",
        {vm["file"].as<std::string>(), "--html", vm["html"].as<std::string>()});
  }
  if (format == OutputFormat::json) {
    for (const nlohmann::ordered_json& s : summaries) std::cout << s.dump() << "\n";
  } else if (format == OutputFormat::yaml) {  // one list, like compare's --format yaml
    print_structured(nlohmann::ordered_json(summaries), format, std::cout);
  } else if (format == OutputFormat::csv) {
    bool compare_file = summaries.size() > 1;
    for (const nlohmann::ordered_json& s : summaries) {
      if (s.contains("strategy") && !s["strategy"].is_null()) compare_file = true;
    }
    std::cout << summaries_csv(summaries, compare_file);
  } else if (summaries.size() > 1) {
    std::cout << compare_table_from_json(summaries);
  } else {
    for (const nlohmann::ordered_json& s : summaries) std::cout << summary_table_from_json(s);
  }
  return kExitOk;
}

/// gpumux plot: checks the arguments and the file here (one-line errors, exit 2), then draws
/// with `python3 -m gpumux.plot` (matplotlib).
int command_plot(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, plot_options(), "file");
  const std::string output = vm["output"].as<std::string>();
  const std::string extension = extension_of(output);
  if (extension != ".png" && extension != ".svg") bad_extension("-o", output, ".png or .svg");
  check_written_file("-o", output);
  std::vector<std::string> forwarded{vm["file"].as<std::string>(), "-o", output};
  if (vm.count("kind")) {
    const std::string kind = vm["kind"].as<std::string>();
    if (kind != "cdf" && kind != "timeline" && kind != "compare") {
      std::string message = "--kind ";
      message += kind;
      message += ": not one of cdf, timeline, compare";
      throw po::error(message);
    }
    forwarded.push_back("--kind");
    forwarded.push_back(kind);
  }
  // A gpumux device result file, or one line, exit 2.
  if (is_cluster_summary(read_result_file_isolated(vm["file"].as<std::string>()))) {
    throw not_for_cluster(vm["file"].as<std::string>(), "plot");
  }
  return exec_python_module("plot", "gpumux.plot", forwarded);
}

const CommandHelp kStrategiesHelp{
    "usage: gpumux strategies [--format table|json|yaml] [--json]",
    "Lists the sharing strategies (models/strategies/registry.cpp): the `sharing.mode` each is\n"
    "named by, its `sharing:` keys (each with its unit, default, valid values and what it sets,\n"
    "from the strategy's one parameter table), what a fatal fault takes down, and the names\n"
    "`gpumux compare --strategies` accepts. docs/strategies.md says what each models and what it\n"
    "does not. --format json|yaml: the same data (`strategies`, `compare_strategies`).",
    "  gpumux strategies\n"
    "  gpumux strategies --format yaml\n"};

po::options_description strategies_options() {
  po::options_description o("gpumux strategies");
  add_data_format_options(o);
  add_quiet_option(o);
  return o;
}

nlohmann::ordered_json strategies_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Strategy* strategy : strategies()) {
    std::vector<std::string> keys{"replicas"};
    nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
    for (const ParamSpec& p : strategy->parameters()) {
      keys.push_back(p.key);
      parameters.push_back({{"key", p.key},
                            {"unit", p.unit},
                            {"default", p.default_text},
                            {"range", p.range},
                            {"doc", p.doc}});
    }
    list.push_back(
        {{"name", strategy->name()},
         {"summary", strategy->summary()},
         {"modes", strategy->spellings()},
         {"keys", keys},
         {"parameters", parameters},
         {"fault_scope", strategy->fault_scope() == FaultScope::device ? "device" : "client"}});
  }
  nlohmann::ordered_json laws = nlohmann::ordered_json::array();
  for (const ContentionLaw* law : contention_laws()) {
    laws.push_back({{"name", law->name()}, {"summary", law->summary()}});
  }
  return {{"strategies", list},
          {"compare_strategies", compare_strategy_names()},
          {"contention_laws", laws}};
}

int command_strategies(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_listing(args, strategies_options());
  const DataFormat format = data_format(vm);
  if (format != DataFormat::table) {
    print_data(strategies_json(), format, std::cout);
    return kExitOk;
  }
  for (const Strategy* strategy : strategies()) {
    std::vector<std::string> keys{"replicas"};
    for (const std::string& key : strategy->keys()) keys.push_back(key);
    std::cout << strategy->name() << ": " << strategy->summary() << "\n"
              << "  mode:        " << join(strategy->spellings(), ", ") << "\n"
              << "  keys:        " << join(keys, ", ") << "\n";
    for (const ParamSpec& p : strategy->parameters()) {
      std::cout << "    " << p.key << " (" << p.unit << "; " << p.range
                << "; default: " << p.default_text << "): " << p.doc << "\n";
    }
    std::cout << "  a fault:     "
              << (strategy->fault_scope() == FaultScope::device ? "kills every client of the device"
                                                                : "kills only its client")
              << "\n";
  }
  std::cout << "\ncompare --strategies: " << join(compare_strategy_names(), ", ") << "\n"
            << "MIG (`mig:` on a gpus entry) runs a strategy inside every instance; "
               "`mig+NAME` in compare.\n"
            << "contention_law: " << join(contention_law_names(), ", ")
            << " (the first is the default; docs/strategies.md)\n";
  return kExitOk;
}

}  // namespace

Command mig_command() { return Command{"mig", &kMigHelp, mig_options, command_mig}; }
Command models_command() { return Command{"models", &kModelsHelp, models_options, command_models}; }
Command report_command() { return Command{"report", &kReportHelp, report_options, command_report}; }
Command plot_command() { return Command{"plot", &kPlotHelp, plot_options, command_plot}; }
Command strategies_command() {
  return Command{"strategies", &kStrategiesHelp, strategies_options, command_strategies};
}

}  // namespace gpumux::cli
