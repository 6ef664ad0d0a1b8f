// Parsing a device profile document (profile_loader.hpp): the keys, units and ranges of a
// profile, the provenance rules (every number sourced or labelled an assumption), MIG profiles
// and layouts, sm_limits. Finding a profile by name or path, aliases and the cache are
// profile_lookup.cpp's.
#include "models/config/profile_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "models/config/input_error.hpp"
#include "models/config/sharing_bounds.hpp"
#include "models/config/yaml_reader.hpp"
#include "models/gpu/mig_layout.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

std::string fnv1a_64_hex(std::string_view text) {
  const std::uint64_t hash = fnv1a64(text);
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

using yaml::child_path;

// Reads one profile document. Every numeric leaf must carry provenance: either it is written as
// {value: X, source: "..."} / {value: X, assumption: "..."}, or it sits inside a MIG profile or
// layout entry that itself carries `source:` or `assumption:` (which then covers its numbers).
// Reading, locating and number parsing are the scenario loader's (models/config/yaml_reader.hpp);
// the provenance rules and messages are the profile's own.
class ProfileParser {
 public:
  explicit ProfileParser(std::string file) : file_(std::move(file)), ctx_(file_, locations_) {}

  DeviceProfile parse(const std::string& text) {
    // Const from here on: yaml-cpp's non-const operator[] would insert missing keys.
    const YAML::Node root = load(text);
    if (!root.IsMap()) fail(root, "", "a device profile must be a YAML mapping");

    check_keys(root, "",
               {"display_name",
                "nvidia_smi_name",
                "notes",
                "sms",
                "memory",
                "hbm_bandwidth",
                "hbm_bandwidth_measured",
                "l2_cache",
                "l2_bandwidth",
                "sm_bandwidth",
                "launch_overhead",
                "graph_launch_overhead",
                "kernel_fixed_cost",
                "block_round_cost",
                "pcie_bandwidth",
                "host_per_request",
                "harness_per_request",
                "host_cpu",
                "timeslice",
                "context_switch",
                "preemption_latency",
                "cache_refill",
                "mps_max_clients",
                "mig",
                "boost_clock",
                "base_clock",
                "tdp",
                "power",
                "compute_capability",
                "sm_limits",
                "compute_throughput"});
    DeviceProfile gpu;
    gpu.display_name = string_at(root, "display_name", "");
    if (root["nvidia_smi_name"]) {
      const YAML::Node names = sourced(root, "nvidia_smi_name", "", false);
      if (names.IsScalar()) {
        gpu.nvidia_smi_names.push_back(names.Scalar());
      } else if (names.IsSequence()) {
        for (const YAML::Node& name : names) {
          if (!name.IsScalar()) fail(name, "nvidia_smi_name", "expected a text or a list of texts");
          gpu.nvidia_smi_names.push_back(name.Scalar());
        }
      } else {
        fail(names, "nvidia_smi_name", "expected a text or a list of texts");
      }
    }
    if (root["notes"]) string_at(root, "notes", "");
    gpu.sms = positive_int(root, "sms", "", false);
    gpu.memory = size_at(root, "memory", "", false);
    gpu.hbm_bandwidth = bandwidth_at(root, "hbm_bandwidth", "", false);
    if (root["hbm_bandwidth_measured"]) {
      gpu.hbm_bandwidth_measured = bandwidth_at(root, "hbm_bandwidth_measured", "", false);
    }
    gpu.l2_cache = size_at(root, "l2_cache", "", false);
    gpu.l2_bandwidth = bandwidth_at(root, "l2_bandwidth", "", false);
    if (root["sm_bandwidth"]) {
      gpu.sm_bandwidth = bandwidth_at(root, "sm_bandwidth", "", false);
    } else if (gpu.sms > 0) {
      // assumption: an SM moves at least its share of the L2 read plateau, the rate every SM
      // sustains when all of them read at once (every HBM byte reaches the SM through L2).
      gpu.sm_bandwidth = gpu.l2_bandwidth / gpu.sms;
      assumed_.push_back("sm_bandwidth");
    }
    gpu.launch_overhead = duration_at(root, "launch_overhead", "", false);
    gpu.graph_launch_overhead = duration_at(root, "graph_launch_overhead", "", false);
    if (root["kernel_fixed_cost"]) {
      gpu.kernel_fixed_cost = duration_at(root, "kernel_fixed_cost", "", false);
    }
    if (root["block_round_cost"]) {
      gpu.block_round_cost = duration_at(root, "block_round_cost", "", false);
    }
    if (root["pcie_bandwidth"]) {
      gpu.pcie_bandwidth = bandwidth_at(root, "pcie_bandwidth", "", false);
    }
    // A mapping of a name to a time: host_per_request by runtime, harness_per_request by
    // benchmark harness (host_time.hpp T_req and T_h).
    const auto times_by_name = [&](const char* key, const std::string& named,
                                   const std::string& example, std::map<std::string, Nanos>& into) {
      const YAML::Node names = root[key];
      if (!names) return;
      if (!names.IsMap()) {
        fail(names, key,
             "expected a mapping of " + named + " name to a time, e.g. {" + example +
                 ": {value: 40us, fitted: \"...\"}}");
      }
      for (auto it = names.begin(); it != names.end(); ++it) {
        const std::string name = key_text(it->first, key);
        if (name.empty() || name == "none") {
          fail(it->first, key, "a " + named + " name must be a non-empty name other than `none`");
        }
        into[name] = duration_at(names, name, key, false);
      }
    };
    times_by_name("host_per_request", "runtime", "tensorrt", gpu.host_per_request);
    times_by_name("harness_per_request", "harness", "mlperf-loadgen", gpu.harness_per_request);
    if (root["host_cpu"]) {
      // The host beside the GPU, by name (models/gpu/host_cpu.hpp has the speeds and sources).
      const YAML::Node name = sourced(root, "host_cpu", "", false);
      const NamedHostCpu* host = name.IsScalar() ? named_host_cpu(name.Scalar()) : nullptr;
      if (host == nullptr) {
        fail(name, "host_cpu",
             "unknown host CPU '" + (name.IsScalar() ? name.Scalar() : std::string()) +
                 "'; use one of: " + named_host_cpu_list());
      }
      gpu.host_cpu = host->name;
      gpu.host_cpu_speed = host->speed;
    }
    gpu.timeslice = duration_at(root, "timeslice", "", false);
    if (gpu.timeslice < kMinTimeslice) {
      fail(root["timeslice"], "timeslice", kTimesliceBoundReason);
    }
    gpu.context_switch = duration_at(root, "context_switch", "", false);
    gpu.preemption_latency = duration_at(root, "preemption_latency", "", false);
    gpu.cache_refill = duration_at(root, "cache_refill", "", false);
    for (const auto& [key, cost] :
         {std::pair<const char*, Nanos>{"context_switch", gpu.context_switch},
          {"preemption_latency", gpu.preemption_latency},
          {"cache_refill", gpu.cache_refill}}) {
      if (cost > kMaxSwitchCost) {
        fail(root[key], key, kSwitchCostBoundReason);
      }
    }
    gpu.mps_max_clients = positive_int(root, "mps_max_clients", "", false);
    if (root["mig"]) parse_mig(root["mig"], gpu);
    if (root["boost_clock"]) {
      gpu.boost_clock_mhz = positive_with_unit(root, "boost_clock", "", "MHz", "1410MHz");
    }
    if (root["base_clock"]) {
      gpu.base_clock_mhz = positive_with_unit(root, "base_clock", "", "MHz", "1275MHz");
      if (gpu.boost_clock_mhz > 0 && gpu.base_clock_mhz > gpu.boost_clock_mhz)
        fail(root["base_clock"], "base_clock", "must not exceed boost_clock");
    }
    if (root["tdp"]) gpu.power.tdp_w = positive_with_unit(root, "tdp", "", "W", "400W");
    if (root["power"]) parse_power(root["power"], gpu.power);
    // A board whose idle draw reaches its TDP cannot run at all: the cap law's room (TDP - P_idle)
    // is <= 0 and every kernel ran at the base clock without a word (power.hpp).
    if (gpu.power.tdp_w > 0 && gpu.power.idle_w >= gpu.power.tdp_w) {
      const auto watts = [](double w) {
        char text[32];
        std::snprintf(text, sizeof text, "%gW", w);
        return std::string(text);
      };
      fail(root["tdp"] ? root["tdp"] : root["power"]["idle"], "tdp",
           "must exceed power.idle (" + watts(gpu.power.tdp_w) + " <= " + watts(gpu.power.idle_w) +
               "): the board could not run");
    }
    gpu.power.boost_clock_mhz = gpu.boost_clock_mhz;
    gpu.power.base_clock_mhz = gpu.base_clock_mhz;
    if (root["compute_capability"]) {
      const YAML::Node cc = sourced(root, "compute_capability", "", false);
      if (!cc.IsScalar()) fail(cc, "compute_capability", "expected a text such as \"8.0\"");
      gpu.compute_capability = cc.Scalar();
    }
    if (root["sm_limits"]) parse_sm_limits(root["sm_limits"], gpu);
    if (root["compute_throughput"]) parse_compute(root["compute_throughput"], gpu.compute);
    gpu.assumed = assumed_;
    gpu.fitted = fitted_;
    return gpu;
  }

 private:
  YAML::Node load(const std::string& text) const {
    return yaml::parse(text, file_, "invalid YAML: ");
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                         const std::string& message) const {
    ctx_.fail(yaml::Field{node, path, node.IsDefined() ? node.Mark() : YAML::Mark::null_mark()},
              message);
  }

  // A mapping key's text; a key that is a list or a mapping (`[x]: 1`, `? {a: 1}`) is refused
  // at its line (yaml-cpp's conversion would throw: "internal error", exit 3).
  std::string key_text(const YAML::Node& key, const std::string& path) const {
    if (!key.IsScalar()) fail(key, path, "a key must be a plain name, not a list or a mapping");
    return key.Scalar();
  }

  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::set<std::string>& allowed) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = key_text(it->first, path);
      if (!allowed.count(key)) {
        std::vector<std::string> names(allowed.begin(), allowed.end());
        fail(it->first, child_path(path, key),
             "unknown key '" + key + "' (allowed: " + join(names, ", ") + ")");
      }
    }
  }

  YAML::Node required(const YAML::Node& map, const std::string& key,
                      const std::string& path) const {
    const YAML::Node node = map[key];
    if (!node) fail(map, child_path(path, key), "missing required key");
    return node;
  }

  // Returns the value node of `map[key]` after checking its provenance. `covered` is true inside
  // an entry that carries its own source/assumption.
  YAML::Node sourced(const YAML::Node& map, const std::string& key, const std::string& parent,
                     bool covered) const {
    const std::string path = child_path(parent, key);
    const YAML::Node node = required(map, key, parent);
    if (node.IsMap()) {
      check_keys(node, path, {"value", "source", "assumption", "fitted"});
      const bool has_source = static_cast<bool>(node["source"]);
      const bool has_assumption = static_cast<bool>(node["assumption"]);
      const bool has_fitted = static_cast<bool>(node["fitted"]);
      const int kinds = int{has_source} + int{has_assumption} + int{has_fitted};
      if (kinds != 1) {
        fail(node, path,
             kinds > 1 ? "give one of source, assumption or fitted, not several"
                       : "a value needs `source:` (where it was published or measured), "
                         "`assumption:` (why it was chosen) or `fitted:` (the data, script "
                         "and cross-validated error it was fitted with)");
      }
      provenance_text(node, has_source ? "source" : has_assumption ? "assumption" : "fitted", path);
      if (has_assumption) assumed_.push_back(path);
      if (has_fitted) fitted_.push_back(path);
      return required(node, "value", path);
    }
    if (!covered) {
      fail(node, path,
           "number without a source: write {value: ..., source: \"...\"} or "
           "{value: ..., assumption: \"why\"}");
    }
    return node;
  }

  void provenance_text(const YAML::Node& map, const char* key, const std::string& path) const {
    const YAML::Node node = map[key];
    const std::string full = child_path(path, key);
    if (!node.IsScalar()) fail(node, full, "must be a text");
    const std::string text = node.as<std::string>();
    if (text.find_first_not_of(" \t") == std::string::npos) fail(node, full, "must not be empty");
  }

  std::string string_at(const YAML::Node& map, const std::string& key,
                        const std::string& parent) const {
    const YAML::Node node = required(map, key, parent);
    if (!node.IsScalar()) fail(node, child_path(parent, key), "expected a text");
    return node.as<std::string>();
  }

  long long as_integer(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) fail(node, path, "expected an integer");
    const std::string text = node.Scalar();
    const std::optional<long long> value = yaml::parse_integer(text);
    if (!value) fail(node, path, "expected an integer, got '" + text + "'");
    return *value;
  }

  double as_number(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) fail(node, path, "expected a number");
    const std::string text = node.Scalar();
    const std::optional<double> value = yaml::parse_number(text);
    if (!value || !std::isfinite(*value)) {
      fail(node, path, "expected a plain number, got '" + text + "'");
    }
    return *value;
  }

  int positive_int(const YAML::Node& map, const std::string& key, const std::string& parent,
                   bool covered) const {
    const std::string path = child_path(parent, key);
    const YAML::Node node = sourced(map, key, parent, covered);
    const long long value = as_integer(node, path);
    if (value < 1 || value > 1'000'000) fail(node, path, "must be a positive integer");
    return static_cast<int>(value);
  }

  template <typename Parser>
  auto with_unit(const YAML::Node& map, const std::string& key, const std::string& parent,
                 bool covered, Parser parser) const {
    const std::string path = child_path(parent, key);
    const YAML::Node node = sourced(map, key, parent, covered);
    if (!node.IsScalar()) fail(node, path, "expected a value with a unit");
    try {
      return parser(node.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(node, path, e.what());
    }
  }

  std::int64_t size_at(const YAML::Node& map, const std::string& key, const std::string& parent,
                       bool covered) const {
    const std::int64_t bytes = with_unit(map, key, parent, covered, units::parse_size_bytes);
    if (bytes <= 0) fail(map[key], child_path(parent, key), "must be greater than zero");
    return bytes;
  }

  // A number written with `unit` ("300W"), sourced, greater than zero.
  double positive_with_unit(const YAML::Node& map, const std::string& key,
                            const std::string& parent, std::string_view unit,
                            const std::string& example) const {
    const std::string path = child_path(parent, key);
    const YAML::Node node = sourced(map, key, parent, false);
    const std::optional<double> value =
        node.IsScalar() ? parse_with_unit(node.Scalar(), unit) : std::nullopt;
    if (!value || !(*value > 0)) {
      fail(node, path, "expected a value in " + std::string(unit) + ", e.g. " + example);
    }
    return *value;
  }

  // `power:` the power law's terms (models/gpu/power.hpp), each {value, source|assumption}:
  // idle (W), sm_dynamic (W), hbm_energy (pJ/B), clock_exponent (a plain number, 1 to 4),
  // tensor_energy (pJ/FLOP: one FP16/BF16 tensor FLOP at the boost voltage).
  void parse_power(const YAML::Node& node, PowerParams& power) const {
    const std::string path = "power";
    if (!node.IsMap()) {
      fail(node, path, "expected a mapping {idle: ..., sm_dynamic: ..., hbm_energy: ...}");
    }
    check_keys(node, path, {"idle", "sm_dynamic", "hbm_energy", "clock_exponent", "tensor_energy"});
    if (node["idle"]) power.idle_w = positive_with_unit(node, "idle", path, "W", "50W");
    if (node["sm_dynamic"]) {
      power.sm_dynamic_w = positive_with_unit(node, "sm_dynamic", path, "W", "295W");
    }
    if (node["hbm_energy"]) {
      power.hbm_joules_per_byte =
          positive_with_unit(node, "hbm_energy", path, "pJ/B", "31pJ/B") * 1e-12;
    }
    if (node["tensor_energy"]) {
      power.tensor_joules_per_flop =
          positive_with_unit(node, "tensor_energy", path, "pJ/FLOP", "0.76pJ/FLOP") * 1e-12;
    }
    if (node["clock_exponent"]) {
      const YAML::Node e = sourced(node, "clock_exponent", path, false);
      const double value = as_number(e, path + ".clock_exponent");
      if (!(value >= 1 && value <= 4)) fail(e, path + ".clock_exponent", "must be in [1, 4]");
      power.clock_exponent = value;
    }
  }

  // `compute_throughput:` every precision written, each {value, source|assumption}: floating
  // point in GFLOPS/TFLOPS/PFLOPS, int8 in GOPS/TOPS/POPS; 0 = not supported.
  void parse_compute(const YAML::Node& node, ComputeThroughput& compute) const {
    const std::string path = "compute_throughput";
    if (!node.IsMap()) {
      fail(node, path, "expected a mapping {fp16_tensor: ..., bf16_tensor: ..., ...}");
    }
    check_keys(node, path,
               {"fp16_tensor", "bf16_tensor", "fp8_tensor", "int8_tensor", "tf32_tensor", "fp32"});
    compute.fp16_tensor = with_unit(node, "fp16_tensor", path, false, units::parse_flops);
    compute.bf16_tensor = with_unit(node, "bf16_tensor", path, false, units::parse_flops);
    compute.fp8_tensor = with_unit(node, "fp8_tensor", path, false, units::parse_flops);
    compute.int8_tensor = with_unit(node, "int8_tensor", path, false, units::parse_ops);
    compute.tf32_tensor = with_unit(node, "tf32_tensor", path, false, units::parse_flops);
    compute.fp32 = with_unit(node, "fp32", path, false, units::parse_flops);
  }

  double bandwidth_at(const YAML::Node& map, const std::string& key, const std::string& parent,
                      bool covered) const {
    const double rate = with_unit(map, key, parent, covered, units::parse_bandwidth_bytes_per_s);
    if (!(rate > 0)) fail(map[key], child_path(parent, key), "must be greater than zero");
    return rate;
  }

  Nanos duration_at(const YAML::Node& map, const std::string& key, const std::string& parent,
                    bool covered) const {
    return with_unit(map, key, parent, covered, units::parse_duration_ns);
  }

  // An entry (MIG profile or layout) may carry `source:` or `assumption:` covering its numbers.
  bool entry_covered(const YAML::Node& entry, const std::string& path) const {
    const bool has_source = static_cast<bool>(entry["source"]);
    const bool has_assumption = static_cast<bool>(entry["assumption"]);
    if (has_source && has_assumption)
      fail(entry, path, "give either source or assumption, not both");
    if (has_source) provenance_text(entry, "source", path);
    if (has_assumption) provenance_text(entry, "assumption", path);
    return has_source || has_assumption;
  }

  void parse_sm_limits(const YAML::Node& entry, DeviceProfile& gpu) const {
    const std::string path = "sm_limits";
    if (!entry.IsMap()) fail(entry, path, "expected a mapping");
    check_keys(entry, path,
               {"source", "assumption", "max_threads", "max_blocks", "registers", "shared_memory",
                "shared_memory_reserved_per_block"});
    const bool covered = entry_covered(entry, path);
    SmLimits& l = gpu.sm_limits;
    l.max_threads = positive_int(entry, "max_threads", path, covered);
    l.max_blocks = positive_int(entry, "max_blocks", path, covered);
    l.registers = positive_int(entry, "registers", path, covered);
    l.shared_memory = size_at(entry, "shared_memory", path, covered);
    if (entry["shared_memory_reserved_per_block"]) {
      l.shared_reserved_per_block = with_unit(entry, "shared_memory_reserved_per_block", path,
                                              covered, units::parse_size_bytes);
    }
  }
  void parse_mig(const YAML::Node& mig, DeviceProfile& gpu) const {
    if (!mig.IsMap()) fail(mig, "mig", "expected a mapping");
    check_keys(mig, "mig", {"memory_slices", "compute_slices", "profiles", "layouts"});
    gpu.memory_slices = positive_int(mig, "memory_slices", "mig", false);
    gpu.compute_slices = positive_int(mig, "compute_slices", "mig", false);
    if (gpu.memory_slices > 30) fail(mig["memory_slices"], "mig.memory_slices", "at most 30");

    const YAML::Node profiles = required(mig, "profiles", "mig");
    if (!profiles.IsSequence() || profiles.size() == 0) {
      fail(profiles, "mig.profiles", "expected a non-empty list of MIG profiles");
    }
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      gpu.mig_profiles.push_back(
          parse_mig_profile(profiles[i], "mig.profiles." + std::to_string(i), gpu));
    }
    if (mig["layouts"]) parse_layouts(mig["layouts"], gpu);
  }

  MigProfileSpec parse_mig_profile(const YAML::Node& entry, const std::string& path,
                                   const DeviceProfile& gpu) const {
    if (!entry.IsMap()) fail(entry, path, "expected a mapping");
    check_keys(entry, path,
               {"name", "source", "assumption", "notes", "sms", "memory", "memory_slices",
                "compute_slices", "max_count", "placements"});
    const bool covered = entry_covered(entry, path);
    MigProfileSpec spec;
    spec.name = string_at(entry, "name", path);
    if (spec.name.empty() || spec.name.find_first_of(", \t") != std::string::npos) {
      fail(entry["name"], path + ".name",
           "a profile name must be non-empty, without commas or spaces");
    }
    if (gpu.find_mig_profile(spec.name)) {
      fail(entry["name"], path + ".name", "duplicate MIG profile '" + spec.name + "'");
    }
    spec.sms = positive_int(entry, "sms", path, covered);
    if (spec.sms > gpu.sms) {
      fail(entry["sms"], path + ".sms",
           "more SMs than the whole GPU (" + std::to_string(gpu.sms) + ")");
    }
    spec.memory = size_at(entry, "memory", path, covered);
    if (spec.memory > gpu.memory) {
      fail(entry["memory"], path + ".memory", "more memory than the whole GPU");
    }
    spec.memory_slices = positive_int(entry, "memory_slices", path, covered);
    if (spec.memory_slices > gpu.memory_slices) {
      fail(entry["memory_slices"], path + ".memory_slices",
           "exceeds the GPU's " + std::to_string(gpu.memory_slices) + " memory slices");
    }
    spec.compute_slices = positive_int(entry, "compute_slices", path, covered);
    if (spec.compute_slices > gpu.compute_slices) {
      fail(entry["compute_slices"], path + ".compute_slices",
           "exceeds the GPU's " + std::to_string(gpu.compute_slices) + " compute slices");
    }
    spec.max_count = positive_int(entry, "max_count", path, covered);

    const std::string placements_path = path + ".placements";
    const YAML::Node placements = sourced(entry, "placements", path, covered);
    if (!placements.IsSequence() || placements.size() == 0) {
      fail(placements, placements_path, "expected a non-empty list of start memory slices");
    }
    for (std::size_t i = 0; i < placements.size(); ++i) {
      const std::string item_path = placements_path + "." + std::to_string(i);
      const long long start = as_integer(placements[i], item_path);
      if (start < 0 || start + spec.memory_slices > gpu.memory_slices) {
        fail(placements[i], item_path,
             "start " + std::to_string(start) + " + " + std::to_string(spec.memory_slices) +
                 " memory slices does not fit in " + std::to_string(gpu.memory_slices));
      }
      if (!spec.placements.empty() && start <= spec.placements.back()) {
        fail(placements[i], item_path, "placements must be strictly increasing");
      }
      spec.placements.push_back(static_cast<int>(start));
    }
    return spec;
  }

  void parse_layouts(const YAML::Node& layouts, DeviceProfile& gpu) const {
    if (!layouts.IsMap()) fail(layouts, "mig.layouts", "expected a mapping of named layouts");
    for (auto it = layouts.begin(); it != layouts.end(); ++it) {
      const std::string name = key_text(it->first, "mig.layouts");
      const std::string path = "mig.layouts." + name;
      const YAML::Node entry = it->second;
      if (!entry.IsMap())
        fail(entry, path, "expected {mig-devices: {PROFILE: COUNT, ...}, source: ...}");
      check_keys(entry, path, {"mig-devices", "source", "assumption", "notes"});
      // The counts are covered by the entry's own source (e.g. the mig-parted file it copies).
      if (!entry_covered(entry, path)) {
        fail(entry, path,
             "a layout needs `source:` (e.g. the mig-parted config it copies) or "
             "`assumption:`");
      }
      const YAML::Node devices = required(entry, "mig-devices", path);
      const std::string devices_path = path + ".mig-devices";
      if (!devices.IsMap() || devices.size() == 0) {
        fail(devices, devices_path, "expected a non-empty mapping PROFILE: COUNT");
      }
      std::vector<std::string> instances;
      for (auto d = devices.begin(); d != devices.end(); ++d) {
        const std::string profile = key_text(d->first, devices_path);
        const std::string count_path = devices_path + "." + profile;
        if (!gpu.find_mig_profile(profile)) {
          std::vector<std::string> known;
          for (const MigProfileSpec& spec : gpu.mig_profiles) known.push_back(spec.name);
          fail(d->first, count_path,
               "no MIG profile '" + profile + "' in this file; known: " + join(known, ", "));
        }
        const long long count = as_integer(d->second, count_path);
        if (count < 1 || count > 64) fail(d->second, count_path, "count must be 1..64");
        instances.insert(instances.end(), static_cast<std::size_t>(count), profile);
      }
      const MigFitResult fit = fit_mig_layout(gpu, instances);
      if (!fit.fits) fail(entry, path, "layout does not fit: " + fit.reason);
      gpu.mig_layouts[name] = std::move(instances);
    }
  }

  mutable std::vector<std::string> assumed_;  // key paths whose value is an assumption
  mutable std::vector<std::string> fitted_;   // key paths whose value is fitted
  std::string file_;
  std::map<std::string, SourceLocation> locations_;
  yaml::Context ctx_;
};

std::string file_stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

}  // namespace

DeviceProfile parse_device_profile(const std::string& yaml_text, const std::string& source_name) {
  DeviceProfile gpu = ProfileParser(source_name).parse(yaml_text);
  gpu.name = file_stem(source_name);
  gpu.source_path = source_name;
  gpu.content_hash = fnv1a_64_hex(yaml_text);
  return gpu;
}

}  // namespace gpumux
