// Scenario loading's errors (models/scenario/loader.hpp): each names file, line, column and
// key path, in one line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/sharing.hpp"
#include "tests/support/minimal_scenario.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;
using testing::edited;
using testing::error_of;
using testing::kData;
using testing::kFull;
using testing::kMinimal;

// --- errors: each names file, line, column and key path ---

TEST(ScenarioLoaderErrors, UnknownKeyWithHint) {
  const std::string e = error_of(
      edited("      mode: time-slicing\n", "      mode: time-slicing\n      timeslise: 2ms\n"));
  EXPECT_CONTAINS(e,
                  "bad.yaml:8:7: gpus.0.sharing.timeslise: unknown key 'timeslise' in "
                  "gpus.0.sharing (did you mean 'timeslice'?); allowed: mode, replicas,");
}

TEST(ScenarioLoaderErrors, MisplacedKeySaysWhereItBelongs) {
  const std::string e =
      error_of(edited("      request:\n", "      host_gap: 20us\n      request:\n"));
  EXPECT_CONTAINS(e,
                  "bad.yaml:14:7: tenants.0.workload.host_gap: unknown key 'host_gap' in "
                  "tenants.0.workload (it belongs under workload.request)");
}

TEST(ScenarioLoaderErrors, BareNumberForADuration) {
  EXPECT_CONTAINS(error_of(edited("duration: 10s", "duration: 10")),
                  "bad.yaml:2:11: duration: missing unit, e.g. 2ms (got '10')");
}

TEST(ScenarioLoaderErrors, BareNumberForARate) {
  EXPECT_CONTAINS(error_of(edited("rate: 50/s", "rate: 50")),
                  "bad.yaml:13:42: tenants.0.workload.arrivals.rate: missing unit, e.g. 50/s");
}

TEST(ScenarioLoaderErrors, NegativeRate) {
  EXPECT_CONTAINS(error_of(edited("rate: 50/s", "rate: -5/s")),
                  "bad.yaml:13:42: tenants.0.workload.arrivals.rate: must not be negative");
}

TEST(ScenarioLoaderErrors, StringForAnInteger) {
  EXPECT_CONTAINS(error_of(edited("replicas: 1", "replicas: three")),
                  "bad.yaml:11:15: tenants.0.replicas: expected an integer, got 'three'");
  EXPECT_CONTAINS(error_of(edited("replicas: 1", "replicas: 2.5")),
                  "bad.yaml:11:15: tenants.0.replicas: expected an integer, got '2.5'");
  EXPECT_CONTAINS(error_of(edited("replicas: 1", "replicas: 0")),
                  "bad.yaml:11:15: tenants.0.replicas: must be >= 1, got 0");
}

TEST(ScenarioLoaderErrors, MissingRequiredKey) {
  EXPECT_CONTAINS(error_of(edited("    device: gpu0\n", "")),
                  "bad.yaml:9:5: tenants.0.device: missing required key 'device'");
  EXPECT_CONTAINS(error_of(edited("name: t\n", "")),
                  "bad.yaml:1:1: name: missing required key 'name'");
  EXPECT_CONTAINS(error_of(edited("{name: k, duration: 2ms, sm_fraction: 0.5}", "{name: k}")),
                  "bad.yaml:16:13: tenants.0.workload.request.kernels.0.duration: missing "
                  "required key 'duration'");
  EXPECT_CONTAINS(error_of(edited("{process: poisson, rate: 50/s}", "{process: poisson}")),
                  "bad.yaml:13:17: tenants.0.workload.arrivals.rate: missing required key");
}

TEST(ScenarioLoaderErrors, FractionsOutOfRange) {
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5", "sm_fraction: 1.5")),
                  "bad.yaml:16:51: tenants.0.workload.request.kernels.0.sm_fraction: must be in "
                  "(0, 1], got 1.5");
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5", "sm_fraction: 0")),
                  "kernels.0.sm_fraction: must be in (0, 1], got 0");
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5", "memory_bound: -0.1")),
                  "bad.yaml:16:52: tenants.0.workload.request.kernels.0.memory_bound: must be in "
                  "[0, 1], got -0.1");
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5", "sm_fraction: 50%")),
                  "kernels.0.sm_fraction: expected a plain number, got '50%'");
  EXPECT_CONTAINS(
      error_of(edited("mode: time-slicing", "mode: mps\n      active_thread_percentage: 0")),
      "bad.yaml:8:33: gpus.0.sharing.active_thread_percentage: must be in (0, 100]");
}

TEST(ScenarioLoaderErrors, BusyShareNeedsTheLongerPhaseToBeOne) {
  // Overlapped phases (contention law 2): the solo time is the longer phase, so busy_share or
  // memory_bound is 1.
  EXPECT_CONTAINS(
      error_of(edited("sm_fraction: 0.5", "sm_fraction: 0.5, busy_share: 0.5")),
      "bad.yaml:16:68: tenants.0.workload.request.kernels.0.busy_share: busy_share "
      "0.5 with memory_bound 0 (not given): overlapped phases need one of them to be 1");
  EXPECT_CONTAINS(
      error_of(edited("sm_fraction: 0.5", "memory_bound: 0.4, busy_share: 0.9")),
      "kernels.0.busy_share: busy_share 0.9 with memory_bound 0.4: overlapped phases need");
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5", "memory_bound: 1, busy_share: 1.5")),
                  "kernels.0.busy_share: must be in [0, 1], got 1.5");
  const Scenario ok = load_scenario_text(
      edited("sm_fraction: 0.5", "memory_bound: 0.25, busy_share: 1"), "ok.yaml");
  EXPECT_EQ(ok.tenants[0].workload.kernels[0].busy_share, 1.0);
  EXPECT_EQ(ok.tenants[0].workload.kernels[0].memory_bound, 0.25);
  EXPECT_EQ(load_scenario_text(kMinimal, "min.yaml").tenants[0].workload.kernels[0].busy_share,
            -1.0);  // not given: serial phases
}

TEST(ScenarioLoaderErrors, UnknownSharingMode) {
  EXPECT_CONTAINS(error_of(edited("mode: time-slicing", "mode: fair-share")),
                  "bad.yaml:7:13: gpus.0.sharing.mode: unknown sharing mode 'fair-share'; use one "
                  "of: exclusive, time-slicing, mps");
  EXPECT_CONTAINS(error_of(edited("mode: time-slicing", "mode: timeslice")),
                  "unknown sharing mode 'timeslice' (did you mean 'time-slicing'?)");
  EXPECT_CONTAINS(error_of(edited("mode: time-slicing", "mode: mpss")),
                  "unknown sharing mode 'mpss' (did you mean 'mps'?)");
  EXPECT_CONTAINS(error_of(edited("mode: time-slicing", "preemption: eventually")),
                  "bad.yaml:7:19: gpus.0.sharing.preemption: unknown preemption mode");
}

TEST(ScenarioLoaderErrors, YamlSyntaxError) {
  const std::string e = error_of(edited("rate: 50/s}", "rate: 50/s"));
  EXPECT_CONTAINS(e, "bad.yaml:14:");
  EXPECT_CONTAINS(e, "YAML syntax error: end of map flow not found");
  EXPECT_CONTAINS(error_of(edited("  - name: chat\n", "  - name: chat\n   x: 1\n")),
                  "bad.yaml:10:4: YAML syntax error");
}

TEST(ScenarioLoaderErrors, DuplicateNames) {
  const std::string two_tenants =
      std::string(kMinimal) +
      "  - name: chat\n"  // 17
      "    device: gpu0\n"
      "    workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: "
      "[{duration: 1ms}]}}\n";
  EXPECT_CONTAINS(error_of(two_tenants),
                  "bad.yaml:17:11: tenants.1.name: duplicate tenant name 'chat' (also tenants.0)");

  // After expansion: chat with replicas 2 is chat-0, chat-1.
  std::string expanded = two_tenants;
  expanded.replace(expanded.find("replicas: 1"), 11, "replicas: 2");
  expanded.replace(expanded.rfind("name: chat"), 10, "name: chat-1");
  EXPECT_CONTAINS(
      error_of(expanded),
      "bad.yaml:17:11: tenants.1.name: duplicate tenant name "
      "'chat-1' (also tenants.0; count/replicas N > 1 names copies NAME-0 .. NAME-(N-1))");

  EXPECT_CONTAINS(error_of(edited("gpus:\n", "gpus:\n  - {name: gpu0, model: a100}\n")),
                  "bad.yaml:5:11: gpus.1.name: duplicate gpu name 'gpu0' (also gpus.0)");
  EXPECT_CONTAINS(error_of(edited("duration: 10s\n", "duration: 10s\nduration: 5s\n")),
                  "bad.yaml:3:1: duration: duplicate key 'duration' (first on line 2)");
}

TEST(ScenarioLoaderErrors, InvalidNamesAndDevices) {
  EXPECT_CONTAINS(error_of(edited("name: chat", "name: my chat")),
                  "bad.yaml:9:11: tenants.0.name: invalid name 'my chat'");
  EXPECT_CONTAINS(error_of(edited("device: gpu0", "device: gpu1")),
                  "bad.yaml:10:13: tenants.0.device: no gpu named 'gpu1' (did you mean 'gpu0'?)");
  EXPECT_CONTAINS(error_of(edited("device: gpu0", "device: gpu0/x")),
                  "bad.yaml:10:13: tenants.0.device: expected GPU or GPU/INSTANCE");
  EXPECT_CONTAINS(error_of(edited("model: h100-sxm-80gb", "model: h100-sxm-80gb\n    count: 2")),
                  "bad.yaml:11:13: tenants.0.device: gpu 'gpu0' has count 2; name one of its "
                  "devices (gpu0-0 .. gpu0-1)");
}

TEST(ScenarioLoaderErrors, MissingScenarioFile) {
  try {
    load_scenario_file(kData + "scenarios/does-not-exist.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), kData +
                                         "scenarios/does-not-exist.yaml: cannot open scenario "
                                         "file: No such file or directory");
    EXPECT_EQ(e.where().file, kData + "scenarios/does-not-exist.yaml");
  }
}

TEST(ScenarioLoaderErrors, MissingTraceFile) {
  const std::string text =
      edited("{process: poisson, rate: 50/s}", "{process: trace, file: nope.csv, format: csv}");
  try {
    load_scenario_text(text, kData + "scenarios/inline.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_CONTAINS(e.what(),
                    "inline.yaml:13:40: tenants.0.workload.arrivals.file: trace file "
                    "not found: " +
                        fs::absolute(kData + "scenarios/nope.csv").string());
  }
  // The same file name is found relative to the scenario's directory.
  const std::string found = edited("{process: poisson, rate: 50/s}",
                                   "{process: trace, file: ../traces/small.csv, format: csv}");
  EXPECT_NO_THROW(load_scenario_text(found, kData + "scenarios/inline.yaml"));
  EXPECT_CONTAINS(error_of(edited("{process: poisson, rate: 50/s}",
                                  "{process: trace, file: x.csv, format: parquet}")),
                  "tenants.0.workload.arrivals.file: trace file not found");
}

TEST(ScenarioLoaderErrors, BadTraceFormatAndScale) {
  const std::string base = "{process: trace, file: ../traces/small.csv, format: csv}";
  const auto load = [&](const std::string& arrivals) {
    try {
      load_scenario_text(edited("{process: poisson, rate: 50/s}", arrivals),
                         kData + "scenarios/inline.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(load(base), "(no error)");
  EXPECT_CONTAINS(load("{process: trace, file: ../traces/small.csv, format: mooncak}"),
                  "inline.yaml:13:69: tenants.0.workload.arrivals.format: unknown trace format "
                  "'mooncak' (use one of: csv, azure-llm, mooncake) (did you mean 'mooncake'?)");
  EXPECT_CONTAINS(load("{process: trace, file: ../traces/small.csv, time_scale: 0}"),
                  "tenants.0.workload.arrivals.time_scale: must be > 0, got 0");
}

TEST(ScenarioLoaderErrors, BadDistribution) {
  EXPECT_CONTAINS(error_of(edited("duration: 2ms,", "duration: {gamma: 2ms},")),
                  "bad.yaml:16:34: tenants.0.workload.request.kernels.0.duration.gamma: unknown "
                  "key 'gamma'");
  EXPECT_CONTAINS(error_of(edited("duration: 2ms,", "duration: {exponential: 2ms, uniform: 1ms},")),
                  "bad.yaml:16:33: tenants.0.workload.request.kernels.0.duration: expected a "
                  "duration (2ms) or exactly one of");
  EXPECT_CONTAINS(
      error_of(edited("duration: 2ms,", "duration: {lognormal: {median: 2ms, sigma: -1}},")),
      "kernels.0.duration.lognormal.sigma: must be >= 0, got -1");
  EXPECT_CONTAINS(error_of(edited("duration: 2ms,", "duration: {uniform: {min: 3ms, max: 1ms}},")),
                  "kernels.0.duration.uniform.max: max must be >= min");
  EXPECT_CONTAINS(error_of(edited("duration: 2ms,", "duration: {lognormal: {median: 2ms}},")),
                  "kernels.0.duration.lognormal.sigma: missing required key 'sigma'");
  EXPECT_CONTAINS(error_of(edited("duration: 2ms,", "duration: 0ms,")),
                  "kernels.0.duration: must be greater than zero");
}

TEST(ScenarioLoaderErrors, WarmupNotShorterThanDuration) {
  EXPECT_CONTAINS(error_of(edited("duration: 10s\n", "duration: 10s\nwarmup: 10s\n")),
                  "bad.yaml:3:9: warmup: warmup (10s) must be shorter than duration (10s)");
  EXPECT_CONTAINS(error_of(edited("duration: 10s", "duration: 0s")),
                  "bad.yaml:2:11: duration: must be greater than zero");
}

TEST(ScenarioLoaderErrors, WrongShapes) {
  EXPECT_CONTAINS(error_of(edited("gpus:\n  - name: gpu0\n    model: h100-sxm-80gb\n",
                                  "gpus:\n    name: gpu0\n    model: h100-sxm-80gb\n")),
                  "bad.yaml:4:5: gpus: expected a list, got a mapping");
  EXPECT_CONTAINS(error_of(edited("gpus:\n  - name: gpu0\n    model: h100-sxm-80gb\n    sharing:\n"
                                  "      mode: time-slicing\n",
                                  "gpus: []\n")),
                  "bad.yaml:3:7: gpus: must be a non-empty list");
  EXPECT_CONTAINS(error_of(edited("{process: poisson, rate: 50/s}", "poisson")),
                  "bad.yaml:13:17: tenants.0.workload.arrivals: expected a mapping such as");
  EXPECT_CONTAINS(error_of(edited("{process: poisson, rate: 50/s}",
                                  "{process: closed, concurrency: 2, rate: 5/s}")),
                  "bad.yaml:13:51: tenants.0.workload.arrivals.rate: unknown key 'rate' in "
                  "tenants.0.workload.arrivals; allowed: process, concurrency, think");
  EXPECT_CONTAINS(error_of(edited("{process: poisson, rate: 50/s}", "{proces: poisson}")),
                  "bad.yaml:13:18: tenants.0.workload.arrivals.proces: unknown key 'proces' in "
                  "tenants.0.workload.arrivals (did you mean 'process'?)");
  EXPECT_CONTAINS(error_of(""), "bad.yaml: empty scenario");
  EXPECT_CONTAINS(error_of("- 1\n- 2\n"),
                  "bad.yaml:1:1: expected a mapping (key: value), got a list");
}

TEST(ScenarioLoaderErrors, Faults) {
  const std::string with_fault = std::string(kMinimal) + "faults:\n  - {tenant: chta, at: 1s}\n";
  EXPECT_CONTAINS(error_of(with_fault),
                  "bad.yaml:18:14: faults.0.tenant: no tenant named 'chta' (did you mean 'chat'?)");
  std::string replicated = std::string(kMinimal) + "faults:\n  - {tenant: chat, at: 1s}\n";
  replicated.replace(replicated.find("replicas: 1"), 11, "replicas: 3");
  EXPECT_CONTAINS(error_of(replicated),
                  "bad.yaml:18:14: faults.0.tenant: tenant 'chat' has 3 "
                  "replicas; name one of them (chat-0 .. chat-2)");
  const std::string bad_kind = std::string(kMinimal) +
                               "faults:\n  - {tenant: chat, at: 1s, kind: "
                               "flaky}\n";
  EXPECT_CONTAINS(error_of(bad_kind), "bad.yaml:18:34: faults.0.kind: unknown fault kind 'flaky'");
}

TEST(ScenarioLoaderErrors, OutputBlock) {
  EXPECT_CONTAINS(error_of(std::string(kMinimal) + "output: {sample: 10ms, kernels: maybe}\n"),
                  "bad.yaml:17:33: output.kernels: expected true or false, got 'maybe'");
  EXPECT_CONTAINS(error_of(std::string(kMinimal) + "output: {sample: 0s}\n"),
                  "bad.yaml:17:18: output.sample: must be greater than zero");
  EXPECT_CONTAINS(error_of(std::string(kMinimal) + "output: {percentiles: exakt}\n"),
                  "bad.yaml:17:23: output.percentiles: unknown percentile method 'exakt' "
                  "(did you mean 'exact'?)");
}

}  // namespace
}  // namespace gpumux
