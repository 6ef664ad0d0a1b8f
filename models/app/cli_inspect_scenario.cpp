// gpumux inspect SCENARIO: every tenant's kernel classes and where each parameter came from
// (models/scenario/inspect.hpp); no simulation.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "models/app/application.hpp"
#include "models/app/cli_common.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/gpu/power.hpp"

namespace gpumux::cli {
namespace {

const CommandHelp kInspectHelp{
    "usage: gpumux inspect SCENARIO.yaml [--set KEY=VALUE ...] [--seed N] "
    "[--format table|json|yaml|csv] [--json]",
    "Resolves SCENARIO.yaml (as validate does) and prints, per tenant and kernel class, the\n"
    "parameters the device physics acts on: solo duration on the whole GPU, sm_fraction, waves,\n"
    "memory_bound, busy share (the SM phase's share of solo time when it overlaps the memory\n"
    "phase, a roofline kernel; '-': serial phases), working set, repeat, launch mode (stream\n"
    "or CUDA graph) and the tenant's memory, each with its origin: user (written in the scenario), "
    "default (the loader's\n"
    "fallback: sm_fraction 1, memory_bound 0, waves 1), catalog:NAME (the workload catalog,\n"
    "docs/workloads.md), trace (a recorded kernel trace) or ncu (Nsight Compute metrics).\n"
    "A kernel class is the kernels of a request with the same name and values (n = how many).\n"
    "Also the grid (blocks / resident blocks per SM) and, for catalog tenants, the runtime,\n"
    "the host gap per launch it implies and how each kernel is implemented (GEMM tile and\n"
    "split-K, fused or unfused attention). Per GPU whose power is modelled: its TDP and its\n"
    "draw and clock at full load (docs/strategies.md, \"Power and clocks\").\n"
    "Exit: 0 shown, 2 bad input.",
    "  gpumux inspect scenarios/quickstart.yaml\n"
    "  gpumux inspect scenarios/pattern-batch-inference.yaml --json\n"
    "  gpumux inspect my.yaml --set tenants.0.workload.batch=64 --format csv\n"};

po::options_description inspect_options() {
  po::options_description o("gpumux inspect SCENARIO.yaml");
  o.add_options()("set",
                  po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
                  "override a scenario key (repeatable)")(
      "seed", po::value<std::string>()->value_name("N"), "override the master seed")(
      "format", po::value<std::string>()->value_name(join(output_format_names(), "|")),
      "output: table (default), json (per tenant: memory and kernel classes, each value with "
      "its origin), csv (one row per kernel class)")("json", po::bool_switch(),
                                                     "the same as --format json");
  add_quiet_option(o);
  return o;
}

// Per GPU whose power is modelled (models/gpu/power.hpp): its TDP, and its draw and clock at the
// bound of its load: every SM of its devices busy at their FP16 tensor peak, their whole HBM
// bandwidth in use (a run measures the real load: its summary's clock_mhz and board_power_w).
nlohmann::json power_bounds(const ResolvedScenario& r) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t g = 0; g < r.gpu_profiles.size(); ++g) {
    const DeviceProfile& gpu = *r.gpu_profiles[g];
    const PowerParams p = r.scenario.gpus[g].power.apply(gpu.power);
    if (!p.modelled()) continue;
    double activity = 0, bytes = 0;
    for (const ResolvedDevice& d : r.devices) {
      if (d.gpu != static_cast<int>(g)) continue;
      activity += static_cast<double>(d.geometry.sms) / std::max(1, gpu.sms);
      bytes += d.geometry.bandwidth * achievable_hbm_bandwidth(gpu);
    }
    const double tensor = std::max(gpu.compute.fp16_tensor, gpu.compute.bf16_tensor) * activity;
    const double x = capped_clock_ratio(p, activity, bytes, tensor);
    out.push_back({{"gpu", r.scenario.gpus[g].name},
                   {"tdp_w", p.tdp_w},
                   {"boost_clock_mhz", p.boost_clock_mhz},
                   {"base_clock_mhz", p.base_clock_mhz},
                   {"full_load_power_at_boost_w", board_power(p, activity, bytes, 1.0, tensor)},
                   {"full_load_clock_mhz", x * p.boost_clock_mhz},
                   {"origin", r.scenario.gpus[g].power.any() ? "user" : "profile " + gpu.name}});
  }
  return out;
}

std::string duration_text(double ns) {
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

// "catalog:resnet50" when every field of the row has that origin, else the duration's origin
// then the others by origin: "user; default: waves, working_set".
std::string origins_text(const InspectRow& r) {
  const std::pair<const char*, const std::string*> fields[] = {
      {"sm_fraction", &r.sm_fraction_origin},   {"waves", &r.waves_origin},
      {"memory_bound", &r.memory_bound_origin}, {"busy_share", &r.busy_share_origin},
      {"working_set", &r.working_set_origin},   {"repeat", &r.repeat_origin}};
  std::vector<std::pair<std::string, std::string>> others;  // origin -> fields
  for (const auto& [name, origin] : fields) {
    if (*origin == r.duration_origin) continue;
    if (origin == &r.busy_share_origin && r.busy_share < 0) continue;  // (serial: nothing given)
    const std::string& key = *origin;  // (clang 14 cannot capture a structured binding)
    auto it = std::find_if(others.begin(), others.end(),
                           [&key](const auto& entry) { return entry.first == key; });
    if (it == others.end()) {
      others.emplace_back(*origin, name);
    } else {
      it->second += std::string(", ") + name;
    }
  }
  std::string out = r.duration_origin;
  for (const auto& [origin, names] : others) out += "; " + origin + ": " + names;
  return out;
}

// 51114064 -> "48.7 MiB" (the table is read by people; json and csv keep bytes).
std::string size_text(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

// RFC 4180: quoted when it holds a comma, quote or line break (trace kernel names do).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

nlohmann::json valued(const nlohmann::json& value, const std::string& origin) {
  return {{"value", value}, {"origin", origin}};
}

int command_inspect(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, inspect_options(), "scenario");
  const OutputFormat format = output_format(vm);
  const Inspection inspection = inspect_request(scenario_request(vm));
  const std::vector<InspectRow>& rows = inspection.rows;
  if (structured(format)) {
    nlohmann::json tenants = nlohmann::json::array();
    for (const InspectRow& r : rows) {
      if (tenants.empty() || tenants.back()["name"] != r.tenant) {
        tenants.push_back({{"name", r.tenant},
                           {"device", r.device},
                           {"memory_bytes", valued(r.memory, r.memory_origin)},
                           {"memory_per_request_bytes",
                            valued(r.memory_per_request, r.memory_per_request_origin)},
                           {"launch", valued(r.launch, r.launch_origin)},
                           {"host_gap_ns", valued(r.host_gap_ns, r.host_gap_origin)},
                           {"time_alone",
                            {{"launch_gap_ns", r.launch_gap_ns},
                             {"kernel_fixed_cost_ns", r.kernel_fixed_ns},
                             {"block_round_cost_ns", r.block_round_ns},
                             {"host_per_request_ns", r.host_request_ns},
                             {"copy_ns", r.copy_ns},
                             {"harness", r.harness.empty() ? "none" : r.harness},
                             {"harness_ns", r.harness_ns},
                             {"serving", r.serving.empty() ? "none" : r.serving},
                             {"front_end_ns", r.front_end_ns},
                             {"host_origin", r.host_origin},
                             {"origin", r.time_alone_origin}}},
                           {"kernels", nlohmann::json::array()}});
        if (!r.runtime.empty()) tenants.back()["runtime"] = valued(r.runtime, r.runtime_origin);
        if (!r.lengths.empty()) tenants.back()["lengths"] = r.lengths;
        if (r.host_cpu_speed > 0) {
          tenants.back()["host_cpu"] = {{"name", r.host_cpu.empty() ? "custom" : r.host_cpu},
                                        {"speed", r.host_cpu_speed},
                                        {"origin", r.host_cpu_origin}};
        }
        if (!r.engine_cpu.empty()) {
          tenants.back()["engine_cpu"] = {{"engine", r.engine_cpu},
                                          {"per_iteration_ns", r.engine_cpu_iteration_ns},
                                          {"per_sequence_ns", r.engine_cpu_sequence_ns},
                                          {"origin", r.engine_cpu_origin}};
        }
      }
      tenants.back()["kernels"].push_back(
          {{"name", r.kernel},
           {"count", r.count},
           {"duration_ns", valued(r.duration_ns, r.duration_origin)},
           {"sm_fraction", valued(r.sm_fraction, r.sm_fraction_origin)},
           {"waves", valued(r.waves, r.waves_origin)},
           {"memory_bound", valued(r.memory_bound, r.memory_bound_origin)},
           {"busy_share",
            valued(r.busy_share >= 0 ? nlohmann::json(r.busy_share) : nlohmann::json(),
                   r.busy_share_origin)},
           {"working_set_bytes", valued(r.working_set, r.working_set_origin)},
           {"repeat", valued(r.repeat, r.repeat_origin)},
           {"blocks", r.blocks},
           {"blocks_per_sm", r.blocks_per_sm},
           {"implementation", r.implementation}});
    }
    print_structured(nlohmann::json{{"scenario", inspection.resolved.scenario.name},
                                    {"power", power_bounds(inspection.resolved)},
                                    {"tenants", tenants},
                                    {"warnings", inspection.warnings}},
                     format, std::cout);
    return kExitOk;
  }
  if (format == OutputFormat::csv) {
    std::cout << "tenant,device,kernel,count,duration_ns,duration_origin,sm_fraction,"
                 "sm_fraction_origin,waves,waves_origin,memory_bound,memory_bound_origin,"
                 "working_set_bytes,working_set_origin,repeat,repeat_origin,launch,launch_origin,"
                 "memory_bytes,memory_origin,memory_per_request_bytes,memory_per_request_origin,"
                 "blocks,blocks_per_sm,implementation,runtime,runtime_origin,host_gap_ns,"
                 "host_gap_origin,busy_share,busy_share_origin,launch_gap_ns,"
                 "kernel_fixed_cost_ns,block_round_cost_ns,host_per_request_ns,copy_ns,"
                 "time_alone_origin,engine_cpu,engine_cpu_per_iteration_ns,"
                 "engine_cpu_per_sequence_ns,engine_cpu_origin\n";
    for (const InspectRow& r : rows) {
      std::cout << csv_field(r.tenant) << "," << csv_field(r.device) << "," << csv_field(r.kernel)
                << "," << r.count << "," << fmt::format("{}", r.duration_ns) << ","
                << r.duration_origin << "," << fmt::format("{}", r.sm_fraction) << ","
                << r.sm_fraction_origin << "," << fmt::format("{}", r.waves) << ","
                << r.waves_origin << "," << fmt::format("{}", r.memory_bound) << ","
                << r.memory_bound_origin << "," << r.working_set << "," << r.working_set_origin
                << "," << r.repeat << "," << r.repeat_origin << "," << r.launch << ","
                << r.launch_origin << "," << r.memory << "," << r.memory_origin << ","
                << r.memory_per_request << "," << r.memory_per_request_origin << "," << r.blocks
                << "," << r.blocks_per_sm << "," << csv_field(r.implementation) << "," << r.runtime
                << "," << r.runtime_origin << "," << fmt::format("{}", r.host_gap_ns) << ","
                << r.host_gap_origin << ","
                << (r.busy_share >= 0 ? fmt::format("{}", r.busy_share) : std::string()) << ","
                << r.busy_share_origin << "," << fmt::format("{}", r.launch_gap_ns) << ","
                << fmt::format("{}", r.kernel_fixed_ns) << ","
                << fmt::format("{}", r.block_round_ns) << ","
                << fmt::format("{}", r.host_request_ns) << "," << fmt::format("{}", r.copy_ns)
                << "," << csv_field(r.time_alone_origin) << "," << r.engine_cpu << ","
                << fmt::format("{}", r.engine_cpu_iteration_ns) << ","
                << fmt::format("{}", r.engine_cpu_sequence_ns) << "," << r.engine_cpu_origin
                << "\n";
    }
    return kExitOk;
  }
  std::string current;
  for (const InspectRow& r : rows) {
    if (r.tenant != current) {
      current = r.tenant;
      std::cout << (current == rows.front().tenant ? "" : "\n") << "tenant " << r.tenant << " on "
                << r.device << ": memory " << size_text(r.memory) << " (" << r.memory_origin
                << "), per request " << size_text(r.memory_per_request) << " ("
                << r.memory_per_request_origin << "), launch " << r.launch << " ("
                << r.launch_origin << ")";
      if (!r.runtime.empty())
        std::cout << ", runtime " << r.runtime << " (" << r.runtime_origin << ")";
      if (r.host_gap_ns > 0 || !r.runtime.empty()) {
        std::cout << ", host gap " << duration_text(r.host_gap_ns) << " per launch ("
                  << r.host_gap_origin << ")";
      }
      std::cout << "\n";
      if (r.time_alone_origin != "none" && !r.time_alone_origin.empty()) {
        std::cout << "  time alone: " << duration_text(r.launch_gap_ns)
                  << " stream gap per kernel (kernel_fixed_cost "
                  << duration_text(r.kernel_fixed_ns) << "), block_round_cost "
                  << duration_text(r.block_round_ns) << " per round of blocks, per request host "
                  << duration_text(r.host_request_ns) << " + copies " << duration_text(r.copy_ns)
                  << " (" << r.time_alone_origin << ")\n";
        if (!r.harness.empty()) {
          std::cout << "  benchmark harness " << r.harness << ": " << duration_text(r.harness_ns)
                    << " host time per request (beside the runtime's per request host)\n";
        }
        if (!r.serving.empty()) {
          std::cout << "  serving front end " << r.serving << ": " << duration_text(r.front_end_ns)
                    << " per request (host time: it delays the request, holds no GPU)\n";
        }
        if (!r.host_origin.empty()) std::cout << "  host terms: " << r.host_origin << "\n";
      }
      if (!r.lengths.empty()) std::cout << "  lengths: " << r.lengths << "\n";
      if (r.host_cpu_speed > 0) {
        // models/gpu/host_cpu.hpp: the model's host CPU times are the reference host's / speed.
        std::cout << "  host CPU: " << (r.host_cpu.empty() ? std::string("custom") : r.host_cpu)
                  << fmt::format(", single-thread speed {:.3g}", r.host_cpu_speed)
                  << " x the DGX A100 host's (" << r.host_cpu_origin
                  << "): the model's dispatch, engine and front-end CPU times are divided by it\n";
      }
      if (!r.engine_cpu.empty()) {
        std::cout << "  engine CPU per iteration: " << duration_text(r.engine_cpu_iteration_ns)
                  << " + " << duration_text(r.engine_cpu_sequence_ns) << " per sequence ("
                  << r.engine_cpu << ", " << r.engine_cpu_origin << ")\n";
      }
      std::cout << fmt::format(
          "  {:<28} {:>4} {:>11} {:>8} {:>7} {:>7} {:>6} {:>10} {:>6} {:>9}  {}\n", "kernel", "n",
          "duration", "sm_frac", "waves", "m_bound", "busy", "work_set", "repeat", "grid",
          "origin");
    }
    const std::string grid =
        r.blocks > 0 ? fmt::format("{}/{}", r.blocks, r.blocks_per_sm) : std::string("-");
    std::cout << fmt::format(
        "  {:<28} {:>4} {:>11} {:>8.3f} {:>7.2f} {:>7.3f} {:>6} {:>10} {:>6} {:>9}  {}{}\n",
        r.kernel.size() > 28 ? r.kernel.substr(0, 27) + "~" : r.kernel, r.count,
        duration_text(r.duration_ns), r.sm_fraction, r.waves, r.memory_bound,
        r.busy_share >= 0 ? fmt::format("{:.3f}", r.busy_share) : std::string("-"),
        size_text(r.working_set), r.repeat, grid, origins_text(r),
        r.implementation.empty() ? std::string() : " [" + r.implementation + "]");
  }
  for (const nlohmann::json& p : power_bounds(inspection.resolved)) {
    std::cout << fmt::format(
        "\npower {}: TDP {:.0f} W; at full load (every SM busy at its FP16 tensor peak, all its "
        "HBM "
        "bandwidth) it "
        "would draw {:.0f} W at {:.0f} MHz boost, so its clock is at least {:.0f} MHz (base {:.0f} "
        "MHz; {})\n",
        p["gpu"].get<std::string>(), p["tdp_w"].get<double>(),
        p["full_load_power_at_boost_w"].get<double>(), p["boost_clock_mhz"].get<double>(),
        p["full_load_clock_mhz"].get<double>(), p["base_clock_mhz"].get<double>(),
        p["origin"].get<std::string>());
  }
  for (const std::string& w : inspection.warnings) std::cerr << "gpumux: warning: " << w << "\n";
  return kExitOk;
}

}  // namespace

Command inspect_command() {
  return Command{"inspect", &kInspectHelp, inspect_options, command_inspect};
}

}  // namespace gpumux::cli
