#include "models/app/cli_common.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <yaml-cpp/yaml.h>

#include "models/app/interrupt.hpp"
#include "models/config/input_error.hpp"
#include "models/output/result_io.hpp"
#include "models/run/slo.hpp"

namespace gpumux::cli {

po::variables_map parse_command(const std::vector<std::string>& args,
                                const po::options_description& options,
                                const std::string& positional_name) {
  po::options_description all;
  all.add(options);
  all.add_options()(positional_name.c_str(), po::value<std::string>());
  po::positional_options_description positional;
  positional.add(positional_name.c_str(), 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (!vm.count(positional_name)) {
    throw po::error("missing " + positional_name);
  }
  return vm;
}

ScenarioRequest scenario_request(const po::variables_map& vm) {
  ScenarioRequest request;
  request.scenario = vm["scenario"].as<std::string>();
  if (vm.count("set")) request.overrides = vm["set"].as<std::vector<std::string>>();
  if (vm.count("seed")) {
    // Read here, not by program_options: its unsigned conversion takes "-1" as 2^64 - 1.
    const std::string text = vm["seed"].as<std::string>();
    std::uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      throw InputError(SourceLocation{"", 0, 0, "--seed"},
                       "expected an integer from 0 to 18446744073709551615, got '" + text + "'");
    }
    request.seed = seed;
  }
  return request;
}

std::string extension_of(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string extension = path.substr(dot);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

[[noreturn]] void bad_extension(const std::string& option, const std::string& path,
                                const std::string& wanted) {
  std::string message = option;
  message += " ";
  message += path;
  message += ": gpumux writes ";
  message += wanted;
  const std::string extension = extension_of(path);
  if (extension.empty()) {
    message += " (no extension)";
  } else {
    message += ", not ";
    message += extension;
  }
  throw InputError(message);
}

const std::vector<std::string>& output_format_names() {
  static const std::vector<std::string> kNames = {"table", "json", "yaml", "csv"};
  return kNames;
}

const std::vector<std::string>& data_format_names() {
  static const std::vector<std::string> kNames = {"table", "json", "yaml"};
  return kNames;
}

namespace {

/// The index of `--format NAME` in `names`; throws po::error listing them when it is not there,
/// or when --json contradicts it.
std::size_t format_index(const po::variables_map& vm, const std::vector<std::string>& names) {
  const bool json = vm.count("json") && vm["json"].as<bool>();
  const std::string name = vm["format"].as<std::string>();
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) throw po::error("--format " + name + ": not one of " + join(names));
  if (json && name != "json") {
    throw po::error("--json contradicts --format " + name + " (--json means --format json)");
  }
  return static_cast<std::size_t>(found - names.begin());
}

}  // namespace

OutputFormat output_format(const po::variables_map& vm) {
  const bool json = vm.count("json") && vm["json"].as<bool>();
  if (!vm.count("format")) return json ? OutputFormat::json : OutputFormat::table;
  return static_cast<OutputFormat>(format_index(vm, output_format_names()));
}

DataFormat data_format(const po::variables_map& vm) {
  const bool json = vm.count("json") && vm["json"].as<bool>();
  if (!vm.count("format")) return json ? DataFormat::json : DataFormat::table;
  return static_cast<DataFormat>(format_index(vm, data_format_names()));
}

void add_data_format_options(po::options_description& options) {
  options.add_options()(
      "format", po::value<std::string>()->value_name(join(data_format_names(), "|")),
      "output: table (default), json or yaml (the same data, machine units: "
      "bytes, bytes/s, FLOP/s)")("json", po::bool_switch(), "the same as --format json");
}

void add_quiet_option(po::options_description& options) {
  options.add_options()("quiet,q", po::bool_switch(),
                        "no progress bar and no informational stderr lines; warnings and errors "
                        "still print");
}

namespace {

void emit_yaml(const nlohmann::ordered_json& value, YAML::Emitter& out) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (auto it = value.begin(); it != value.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      emit_yaml(*it, out);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : value) emit_yaml(item, out);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    out << YAML::DoubleQuoted << value.get<std::string>();
  } else if (value.is_boolean()) {
    out << value.get<bool>();
  } else if (value.is_number_integer()) {
    out << value.get<std::int64_t>();
  } else if (value.is_number()) {
    out << value.dump();  // shortest round-trip text, as in the JSON
  } else {
    out << YAML::Null;
  }
}

}  // namespace

void print_data(const nlohmann::ordered_json& data, DataFormat format, std::ostream& out) {
  if (format == DataFormat::json) {
    out << data.dump(2) << "\n";
  } else if (format == DataFormat::yaml) {
    YAML::Emitter emitter;
    emit_yaml(data, emitter);
    out << emitter.c_str() << "\n";
  }
}

void print_structured(const nlohmann::ordered_json& data, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::json) {
    out << data.dump() << "\n";
  } else {
    print_data(data, DataFormat::yaml, out);
  }
}

void check_output_path(const po::variables_map& vm) {
  if (!vm.count("output")) return;
  const std::string path = vm["output"].as<std::string>();
  const std::string extension = extension_of(path);
  if (extension == ".h5" || extension == ".hdf5") {
    output_errors_as_bad_input([&] { check_output_target(path); });
    return;
  }
  throw InputError("-o " + path + ": gpumux writes HDF5 result files only (.h5 or .hdf5)" +
                   (extension.empty() ? std::string() : ", not " + extension) +
                   "; for a table use --json or `gpumux report OUT.h5`");
}

bool slo_met(const RunResult& result, const std::string& prefix) {
  const std::vector<std::string> misses =
      slo_miss_messages(evaluate_slos(result), prefix, result.percentiles.confidence);
  for (const std::string& line : misses) std::cerr << "gpumux: " << line << "\n";
  return misses.empty();
}

void warn_overload(const ResolvedScenario& resolved, const RunResult& result) {
  constexpr double kOverloadSlowdown = 100.0;
  const Nanos duration = resolved.scenario.duration;
  if (duration <= 0 || result.sim_time_ns <= duration + duration / 10) return;
  for (std::size_t t = 0; t < result.tenants.size() && t < resolved.scenario.tenants.size(); ++t) {
    const auto& tenant = result.tenants[t];
    if (!(tenant.slowdown_mean >= kOverloadSlowdown)) continue;
    std::cerr << "gpumux: warning: tenant " << resolved.scenario.tenants[t].name
              << ": offered load exceeds what its device can serve (mean slowdown "
              << static_cast<long long>(tenant.slowdown_mean) << "x; the backlog drained "
              << (result.sim_time_ns - duration) / 1'000'000'000 << " s after arrivals stopped)"
              << "; lower its rate or give it more GPU\n";
  }
}

namespace {

EngineSwitches& process_engine_switches() {
  static EngineSwitches switches;
  return switches;
}

/// The developer switch NAME (docs/performance.md "Developer switches"): unset or empty gives
/// DEFAULT_ON, "0" off, "1" on. Anything else ("off", "false", " 0") is refused in one line, as
/// GPUMUX_QUEUE's unknown queue is: a benchmark that asks for a mode gets it or stops (it used to
/// leave the switch at its default without a word).
bool switch_on(const char* name, bool default_on) {
  const char* set = std::getenv(name);
  if (set == nullptr || *set == '\0') return default_on;
  const std::string value(set);
  if (value == "0") return false;
  if (value == "1") return true;
  std::string shown;
  for (const char c : value.substr(0, 40)) {
    shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  throw InputError(SourceLocation{name, 0, 0, ""},
                   "expected 0 (off) or 1 (on), got '" + shown + "'");
}

}  // namespace

EngineSwitches engine_switches_from_environment() {
  EngineSwitches switches;
  const char* queue = std::getenv("GPUMUX_QUEUE");
  switches.queue = queue_kind_named(queue != nullptr ? queue : "");
  switches.direct_path = switch_on("GPUMUX_DIRECT", true);
  switches.partition = switch_on("GPUMUX_PARTITION", true);
  switches.eager_device = switch_on("GPUMUX_DEVICE_EAGER", false);
  switches.plan_lazy_windows = switch_on("GPUMUX_PLAN_LAZY", true);
  switches.plan_dominance = switch_on("GPUMUX_PLAN_DOMINANCE", true);
  switches.plan_continue_windows = switch_on("GPUMUX_PLAN_CONTINUE", true);
  switches.plan_futility = switch_on("GPUMUX_PLAN_FUTILITY", true);
  switches.plan_unit_processes = switch_on("GPUMUX_PLAN_PROCESSES", true);
  return switches;
}

void set_engine_switches(const EngineSwitches& switches) { process_engine_switches() = switches; }

const EngineSwitches& engine_switches() { return process_engine_switches(); }

RunControl CliProgress::control(bool record_requests) {
  RunControl control;
  control.engine = engine_switches();
  control.record_requests = record_requests;
  control.interrupt = &stop_requested();
  if (quiet_) return control;
  control.started = [this] { bar_.emplace(); };
  control.progress = [this](Nanos now, Nanos horizon, std::uint64_t events) {
    bar_->update(now, horizon, events);
  };
  control.finished = [this] { bar_->finish(); };
  return control;
}

}  // namespace gpumux::cli
