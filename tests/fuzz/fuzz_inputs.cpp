// Fuzz entry for gpumux's input readers (issue 13 item 5, issue 27, issue 36): the scenario
// loader (load, resolve, inspect's rows and validate's capacity checks, a short simulate; LLM
// cards and catalog keys are scenario keys) and every trace reader; the cluster section (load, a
// short replay, its metrics and workload pods; GKE keys are pool keys of it), the openb node and
// pod CSVs, the device-plugin and mig-parted configs, the `plan:` section (load, a small plan and
// its `-o DIR` folder written atomically), and the result-file readers of `gpumux report`. The
// first byte of the input picks the target (fuzz_one below: bytes 0xF0-0xF6 the issue-27 and
// issue-36 targets, 0xF7-0xFF wrap onto them, every other byte modulo 11 the earlier ones, so
// committed findings keep theirs); the rest is the document. GPUMUX_FUZZ_TARGET=N pins every
// input to target N whatever its first byte (scripts/ci-sanitize.sh fuzzes each surface on its
// own, so mutations stay on it). A UserError (InputError, RangeError, ...) is the expected answer
// to a bad input; anything else escaping, a crash, a sanitizer report, a hang or a memory blow-up
// is a finding.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with clang -fsanitize=fuzzer as the libFuzzer
// binary `fuzz_inputs` (GPUMUX_FUZZ=ON), and always as `fuzz_replay`, a plain main that runs every
// file of the directories or files it is given through the same function (ctest
// fuzz.corpus_replay over tests/fuzz/corpus/).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#endif
#endif

#include "sim/util/error.hpp"

#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/device_plugin_config.hpp"
#include "models/cluster/mig_parted_config.hpp"
#include "models/cluster/openb_reader.hpp"
#include "models/cluster/workload_pods.hpp"
#include "models/config/profile_loader.hpp"
#include "models/app/plan_deploy.hpp"
#include "models/output/result_io.hpp"
#include "models/output/result_read_isolated.hpp"
#include "models/plan/capacity_check.hpp"
#include "models/plan/planner.hpp"
#include "models/scenario/inspect.hpp"
#include "sim/io/output_directory.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/kernel_trace.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/scenario/trace_reader.hpp"
#include "models/scenario/work_estimate.hpp"

namespace {

using namespace gpumux;

// A run is capped at this much simulated time and this much estimated work, so one case stays
// in milliseconds (the loader's own budget, work_estimate.hpp, allows minutes).
constexpr Nanos kMaxFuzzDuration = 50'000'000;  // 50 ms
constexpr double kMaxFuzzWork = 2e4;

std::string temp_path(const std::string& name);
std::string temp_file(const std::string& bytes, const char* suffix);

void fuzz_scenario(const std::string& text) {
  // A directory that does not exist: relative trace paths in the document resolve under it
  // and fail as missing files (absolute paths are read as written).
  Scenario scenario = load_scenario_text(text, "/nonexistent-gpumux-fuzz/fuzz.yaml");
  if (scenario.duration > kMaxFuzzDuration) scenario.duration = kMaxFuzzDuration;
  if (scenario.warmup > scenario.duration) scenario.warmup = 0;
  scenario.allow_large = false;
  ResolvedScenario resolved = resolve_scenario(std::move(scenario));
  // What `gpumux validate` and `gpumux inspect` compute from the resolved scenario.
  capacity_findings(resolved);
  inspect_kernels(resolved);
  default_warnings(resolved.scenario);
  const WorkEstimate work = estimate_work(resolved.scenario, resolved.traces);
  if (!(work.requests <= kMaxFuzzWork && work.launches <= 50 * kMaxFuzzWork &&
        work.samples <= kMaxFuzzWork)) {
    return;
  }
  RunOptions options;
  options.record_requests = false;
  simulate(resolved, options);
}

// A cluster case: at most this many pods and nodes, a replay of at most kMaxFuzzDuration, and
// workload pods simulated only when their estimated work fits kMaxFuzzWork.
constexpr std::size_t kMaxFuzzPods = 2000;
constexpr std::size_t kMaxFuzzNodes = 1000;

void fuzz_cluster(const std::string& text) {
  cluster::ClusterSpec spec =
      cluster::load_cluster_text(text, "/nonexistent-gpumux-fuzz/fuzz.yaml");
  std::size_t nodes = 0;
  for (const cluster::NodePoolSpec& p : spec.pools) {
    nodes +=
        static_cast<std::size_t>(std::max(p.count, p.autoscaling ? p.autoscaling->max_nodes : 0));
  }
  if (spec.pods.size() > kMaxFuzzPods || nodes > kMaxFuzzNodes) return;
  if (spec.duration == 0 || spec.duration > kMaxFuzzDuration) spec.duration = kMaxFuzzDuration;
  if (spec.sample > 0 && spec.duration / spec.sample > 1000) spec.sample = spec.duration / 1000 + 1;
  cluster::ClusterResult result = cluster::run_cluster(spec);
  double work = 0;
  for (const cluster::PodSpec& pod : spec.pods) {
    if (!pod.workload.tenant) continue;
    Scenario one;
    one.duration = spec.duration;
    one.tenants.push_back(*pod.workload.tenant);
    const WorkEstimate w = estimate_work(one, {});
    work += w.requests + w.launches / 50;
  }
  if (work <= kMaxFuzzWork) cluster::simulate_workload_pods(spec, result);
  cluster::cluster_metrics(result);
}

void fuzz_mig_parted(const std::string& text) {
  const cluster::MigPartedFile file =
      cluster::parse_mig_parted_config(text, "/nonexistent-gpumux-fuzz/mig-parted.yaml");
  const DeviceProfile& gpu = load_device_profile("a100-80gb");
  for (const auto& [name, config] : file.configs) {
    cluster::GpuSharingConfig out;
    try {
      cluster::apply_mig_parted_config(file, name, {}, gpu, 8, out);
    } catch (const UserError&) {
      // Each config is tried: one refused must not hide the next.
    }
  }
}

// A plan: the `plan:` section loads (every size); a small one (<= 3 tenants, <= 2 GPUs) is
// searched over at most kMaxFuzzDuration per simulation on one thread.
void fuzz_plan(const std::string& text) {
  Scenario scenario = load_scenario_text(text, "/nonexistent-gpumux-fuzz/plan.yaml");
  if (!scenario.plan || scenario.tenants.size() > 3 || scenario.plan->max_gpus > 2 ||
      scenario.plan->gpus.size() > 2) {
    return;
  }
  if (scenario.duration > kMaxFuzzDuration) scenario.duration = kMaxFuzzDuration;
  if (scenario.warmup > scenario.duration) scenario.warmup = 0;
  for (const TenantSpec& t : scenario.tenants) {
    Scenario one;
    one.duration = scenario.duration;
    one.tenants.push_back(t);
    const WorkEstimate w = estimate_work(one, {});
    if (!(w.requests <= kMaxFuzzWork && w.launches <= 50 * kMaxFuzzWork)) return;
  }
  PlanOptions options;
  options.jobs = 1;
  PlanResult result = plan_scenario(scenario, options);
  if (!result.found()) {
    // 50 ms rarely makes an SLO verdict conclusive: without SLOs every setup that fits is
    // feasible, so the files of `plan -o DIR` are written for most inputs that load.
    for (TenantSpec& t : scenario.tenants) t.slo = SloSpec{};
    result = plan_scenario(scenario, options);
    if (!result.found()) return;
  }
  // `plan -o DIR`: the deployment files, written into one folder replaced whole each time.
  const std::vector<PlanFile> files = plan_deployment_files(result, "fuzz.yaml");
  replace_directory_atomically(temp_path("plan"), plan_output_entry, [&](const std::string& temp) {
    for (const PlanFile& file : files) {
      const std::filesystem::path path = std::filesystem::path(temp) / file.path;
      std::filesystem::create_directories(path.parent_path());
      std::ofstream(path) << file.text;
    }
  });
}

// In the child that decodes a result file: a sanitizer report there (the HDF5 library's
// memcpy on a corrupt heap) must not make libFuzzer write the parent's input as a crash; the
// child dies and the parent answers "corrupt" (a UserError). Memory errors of gpumux's own
// readers in the child are therefore not findings here: test_result_io and the corpus replay
// run them in-process.
void quiet_child() {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  __sanitizer_set_death_callback(nullptr);
#endif
#endif
}

// `gpumux report` of a result file (issue 36): the bytes as a file, its summaries read back,
// every table decoded, then the text report (a cluster replay's summary is printed as it is).
void fuzz_result_file(const std::string& bytes) {
  const std::string path = temp_file(bytes, ".h5");
  // 5 s: under ci-sanitize.sh's 10 s per input (a hang of the HDF5 library is refused).
  const std::vector<nlohmann::ordered_json> summaries =
      read_result_file_isolated(path, 5, quiet_child);
  if (summaries.size() == 1 && summaries.front().is_object() &&
      summaries.front().value("kind", "") == "cluster") {
    return;
  }
  if (summaries.size() > 1) {
    compare_table_from_json(summaries);
  } else {
    for (const nlohmann::ordered_json& s : summaries) summary_table_from_json(s);
  }
}

// This process's own temporary folder, removed at exit (fuzz_replay runs left one each).
struct TempFolder {
  std::string path;
  TempFolder() {
    char pattern[] = "/tmp/gpumux-fuzz-XXXXXX";
    const char* made = mkdtemp(pattern);
    path = made ? made : "";
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

// A path in this process's own temporary folder.
std::string temp_path(const std::string& name) {
  static const TempFolder folder;
  return (folder.path.empty() ? std::string("/tmp") : folder.path) + "/" + name;
}

std::string temp_file(const std::string& bytes, const char* suffix) {
  const std::string path = temp_path(std::string("input") + suffix);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// GPUMUX_FUZZ_TARGET: the target every input goes to (a selector of fuzz_one), or -1.
int pinned_target() {
  static const int pinned = [] {
    const char* value = std::getenv("GPUMUX_FUZZ_TARGET");
    return value != nullptr && *value != '\0' ? std::atoi(value) : -1;
  }();
  return pinned;
}

void fuzz_one(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  // 0xF0-0xFF: the issue-27 and issue-36 targets (11-17 below); any other byte: modulo 11, as
  // before; GPUMUX_FUZZ_TARGET overrides both.
  const unsigned selector = pinned_target() >= 0 ? static_cast<unsigned>(pinned_target())
                            : data[0] >= 0xF0    ? 11 + (data[0] - 0xF0) % 7
                                                 : data[0] % 11;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  std::istringstream in(body);
  switch (selector) {
    case 0:
    case 1:
    case 2:
    case 3:
      fuzz_scenario(body);
      break;
    case 4:
      parse_trace(in, "fuzz.csv", TraceFormat::csv, 1.0);
      break;
    case 5:
      parse_trace(in, "fuzz.csv", TraceFormat::azure_llm, 0.5);
      break;
    case 6:
      parse_trace(in, "fuzz.jsonl", TraceFormat::mooncake, 1.0);
      break;
    case 7:
      parse_torch_trace(in, "fuzz.json");
      break;
    case 8:
      parse_csv_kernel_trace(in, "fuzz.csv");
      break;
    case 9:
      parse_ncu_metrics(in, "fuzz-ncu.csv");
      break;
    case 10:
      read_kernel_trace(temp_file(body, ".sqlite"), KernelTraceFormat::nsys);
      break;
    case 11:  // 0xF0: a scenario with a `cluster:` section (pools, pods, GKE keys, scheduler)
      fuzz_cluster(body);
      break;
    case 12:  // 0xF1
      cluster::parse_openb_nodes(body, "fuzz-nodes.csv");
      break;
    case 13:  // 0xF2
      cluster::parse_openb_pods(body, "fuzz-pods.csv",
                                static_cast<std::size_t>(kWorkBudgetClusterPods));
      break;
    case 14:  // 0xF3
      cluster::parse_device_plugin_config(body, "/nonexistent-gpumux-fuzz/device-plugin.yaml");
      break;
    case 15:  // 0xF4
      fuzz_mig_parted(body);
      break;
    case 16:  // 0xF5: a scenario with a `plan:` section
      fuzz_plan(body);
      break;
    case 17:  // 0xF6: a result file (gpumux run -o, compare -o, a cluster replay's -o)
      fuzz_result_file(body);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    fuzz_one(data, size);
  } catch (const gpumux::UserError&) {
    // The documented answer to a bad input.
  }
  return 0;
}
