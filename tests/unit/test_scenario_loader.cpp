// Scenario loading (models/scenario/loader.hpp): schema, units, defaults, expansion, overrides,
// error locations, and the emit -> load round trip (models/scenario/emit.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/sharing.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(GPUMUX_SOURCE_DIR) + "/tests/data/";
const std::string kFull = kData + "scenarios/full.yaml";

// The smallest valid scenario; the error tests edit one line of it, so line numbers are fixed:
constexpr const char* kMinimal =
    "name: t\n"                                                  // 1
    "duration: 10s\n"                                            // 2
    "gpus:\n"                                                    // 3
    "  - name: gpu0\n"                                           // 4
    "    model: h100-sxm-80gb\n"                                 // 5
    "    sharing:\n"                                             // 6
    "      mode: time-slicing\n"                                 // 7
    "tenants:\n"                                                 // 8
    "  - name: chat\n"                                           // 9
    "    device: gpu0\n"                                         // 10
    "    replicas: 1\n"                                          // 11
    "    workload:\n"                                            // 12
    "      arrivals: {process: poisson, rate: 50/s}\n"           // 13
    "      request:\n"                                           // 14
    "        kernels:\n"                                         // 15
    "          - {name: k, duration: 2ms, sm_fraction: 0.5}\n";  // 16

// kMinimal with the first occurrence of `from` replaced by `to`.
std::string edited(const std::string& from, const std::string& to) {
  std::string text = kMinimal;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string error_of(const std::string& yaml, const std::vector<Override>& overrides = {}) {
  try {
    load_scenario_text(yaml, "bad.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

TEST(ScenarioLoader, MinimalScenarioGetsTheDefaults) {
  const Scenario s = load_scenario_text(kMinimal, "min.yaml");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.duration, 10'000'000'000);
  EXPECT_EQ(s.warmup, 0);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].count, 1);
  EXPECT_TRUE(s.gpus[0].mig.empty());
  EXPECT_STREQ(s.gpus[0].sharing.mode_name(), "time-slicing");
  EXPECT_EQ(ts_params(s.gpus[0].sharing).preemption, PreemptionMode::instruction);
  EXPECT_EQ(s.gpus[0].sharing.replicas, 0);
  EXPECT_FALSE(ts_params(s.gpus[0].sharing).timeslice.has_value());
  ASSERT_EQ(s.tenants.size(), 1u);
  const TenantSpec& t = s.tenants[0];
  EXPECT_EQ(t.memory, 0);
  EXPECT_EQ(t.gpus, 1);
  EXPECT_EQ(t.workload.host_gap, 0);
  EXPECT_EQ(t.workload.max_in_flight, 1);
  EXPECT_EQ(t.workload.memory_per_request, 0);
  EXPECT_FALSE(t.slo.any());
  ASSERT_EQ(t.workload.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(t.workload.kernels[0].memory_bound, 0.0);
  EXPECT_EQ(t.workload.kernels[0].repeat, 1);
  EXPECT_TRUE(s.faults.empty());
  EXPECT_EQ(s.output.sample, 100'000'000);
  EXPECT_FALSE(s.output.kernels);
  EXPECT_EQ(s.output.percentiles, PercentileMethod::automatic);  // the documented default

  const std::string no_sharing = edited("    sharing:\n      mode: time-slicing\n", "");
  EXPECT_STREQ(load_scenario_text(no_sharing, "x.yaml").gpus[0].sharing.mode_name(), "exclusive");
}

TEST(ScenarioLoader, FullScenarioValues) {
  const Scenario s = load_scenario_file(kFull);
  EXPECT_EQ(s.source_file, kFull);
  EXPECT_EQ(s.name, "full-example");
  EXPECT_EQ(s.description, "every key of the schema");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.duration, 120'000'000'000);
  EXPECT_EQ(s.warmup, 10'000'000'000);

  ASSERT_EQ(s.gpus.size(), 3u);  // gpu0, pool-0, pool-1
  const GpuSpec& g = s.gpus[0];
  EXPECT_EQ(g.name, "gpu0");
  EXPECT_EQ(g.model, "h100-sxm-80gb");
  EXPECT_EQ(g.mig, (std::vector<std::string>{"2g.20gb", "1g.10gb", "1g.10gb"}));
  EXPECT_DOUBLE_EQ(g.cost_per_hour, 4.5);
  EXPECT_STREQ(g.sharing.mode_name(), "time-slicing");
  EXPECT_EQ(g.sharing.replicas, 3);
  EXPECT_EQ(ts_params(g.sharing).timeslice, 1'024'000);
  EXPECT_EQ(ts_params(g.sharing).context_switch, 50'000);
  EXPECT_EQ(ts_params(g.sharing).preemption, PreemptionMode::kernel_boundary);
  EXPECT_EQ(ts_params(g.sharing).preemption_latency, 20'000);
  EXPECT_EQ(ts_params(g.sharing).cache_refill, 15'000);
  const GpuSpec& pool = s.gpus[2];
  EXPECT_EQ(pool.name, "pool-1");
  EXPECT_EQ(pool.count, 2);
  EXPECT_TRUE(pool.mig.empty());
  EXPECT_EQ(pool.mig_layout_name, "all-balanced");
  EXPECT_STREQ(pool.sharing.mode_name(), "mps");
  EXPECT_EQ(mps_params(pool.sharing).active_thread_percentage, 50.0);
  EXPECT_EQ(mps_params(pool.sharing).pinned_memory_limit, 10LL << 30);
  EXPECT_EQ(mps_params(pool.sharing).max_clients, 48);

  ASSERT_EQ(s.tenants.size(), 4u);  // chat, batch-0, batch-1, replay
  const TenantSpec& chat = s.tenants[0];
  EXPECT_EQ(chat.device, "gpu0/1");
  EXPECT_EQ(chat.memory, 8LL << 30);
  EXPECT_EQ(chat.workload.arrivals.process, ArrivalProcess::poisson);
  EXPECT_EQ(chat.workload.arrivals.rate_per_s, 50.0);  // 3000/min
  EXPECT_EQ(chat.workload.host_gap, 20'000);
  EXPECT_EQ(chat.workload.max_in_flight, 2);
  EXPECT_EQ(chat.workload.memory_per_request, 512LL << 20);
  EXPECT_EQ(chat.slo.p99, 100'000'000);
  EXPECT_EQ(chat.slo.p50, 10'000'000);
  EXPECT_FALSE(chat.slo.p90.has_value());
  const auto& k = chat.workload.kernels;
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(k[0].name, "gemm");
  EXPECT_EQ(k[0].duration.kind, DurationDistribution::Kind::fixed);
  EXPECT_EQ(k[0].duration.value, 2'000'000);
  EXPECT_DOUBLE_EQ(k[0].sm_fraction, 1.0);
  EXPECT_DOUBLE_EQ(k[0].memory_bound, 0.2);
  EXPECT_EQ(k[0].repeat, 4);
  EXPECT_DOUBLE_EQ(k[1].sm_fraction, 0.3);
  EXPECT_EQ(k[2].duration.kind, DurationDistribution::Kind::exponential);
  EXPECT_EQ(k[2].duration.value, 2'000'000);
  EXPECT_DOUBLE_EQ(k[2].duration.mean(), 2e6);
  EXPECT_EQ(k[3].duration.kind, DurationDistribution::Kind::lognormal);
  EXPECT_EQ(k[3].duration.value, 2'000'000);
  EXPECT_DOUBLE_EQ(k[3].duration.sigma, 0.4);
  EXPECT_DOUBLE_EQ(k[3].duration.mean(), 2e6 * std::exp(0.08));  // median * e^(sigma^2/2)
  EXPECT_EQ(k[4].duration.kind, DurationDistribution::Kind::uniform);
  EXPECT_EQ(k[4].duration.value, 1'000'000);
  EXPECT_EQ(k[4].duration.upper, 3'000'000);
  EXPECT_DOUBLE_EQ(k[4].duration.mean(), 2e6);

  const TenantSpec& batch = s.tenants[1];
  EXPECT_EQ(batch.memory, 80'000'000'000);
  EXPECT_EQ(batch.workload.arrivals.process, ArrivalProcess::closed);
  EXPECT_EQ(batch.workload.arrivals.concurrency, 4);
  EXPECT_EQ(batch.workload.arrivals.think, 5'000'000);
  EXPECT_EQ(batch.workload.max_in_flight, 4);  // closed loop: = concurrency
  EXPECT_EQ(batch.workload.kernels[0].name, "kernel0");
  EXPECT_EQ(batch.workload.kernels[0].duration.value, 1'500'000'000);

  const ArrivalSpec& replay = s.tenants[3].workload.arrivals;
  EXPECT_EQ(replay.process, ArrivalProcess::trace);
  EXPECT_EQ(replay.trace_format, TraceFormat::csv);
  EXPECT_DOUBLE_EQ(replay.time_scale, 0.5);
  EXPECT_EQ(s.tenants[3].active_from, 1'000'000'000);
  EXPECT_EQ(s.tenants[3].active_until, 100'000'000'000);
  EXPECT_EQ(s.tenants[0].active_from, 0);
  EXPECT_FALSE(s.tenants[0].active_until.has_value());
  // Resolved against the scenario's directory, absolute and normalised.
  EXPECT_EQ(fs::path(replay.trace_file),
            fs::absolute(kData + "traces/small.csv").lexically_normal());

  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].tenant, "batch-1");
  EXPECT_EQ(s.faults[0].at, 30'000'000'000);
  EXPECT_EQ(s.faults[0].kind, FaultKind::fatal);
  EXPECT_EQ(s.faults[0].recovery, 10'000'000'000);
  EXPECT_EQ(s.faults[1].at, 60'000'000'000);
  EXPECT_FALSE(s.faults[1].recovery.has_value());
  EXPECT_EQ(s.output.sample, 50'000'000);
  EXPECT_TRUE(s.output.kernels);
  EXPECT_EQ(s.output.percentiles, PercentileMethod::sketch);
}

TEST(ScenarioLoader, ExpansionKeepsTheWrittenLocation) {
  const Scenario s = load_scenario_file(kFull);
  EXPECT_EQ(s.gpus[1].name, "pool-0");
  EXPECT_EQ(s.gpus[2].name, "pool-1");
  for (const GpuSpec* g : {&s.gpus[1], &s.gpus[2]}) {
    EXPECT_EQ(g->where.key_path, "gpus.1");
    EXPECT_EQ(g->where.line, 21);
    EXPECT_EQ(g->where.file, kFull);
  }
  EXPECT_EQ(s.tenants[1].name, "batch-0");
  EXPECT_EQ(s.tenants[2].name, "batch-1");
  EXPECT_EQ(s.tenants[2].where.key_path, "tenants.1");
  EXPECT_EQ(s.tenants[2].where.line, 50);
  EXPECT_EQ(s.tenants[2].where.column, 5);
  EXPECT_EQ(s.tenants[2].replicas, 2);
  EXPECT_EQ(s.tenants[3].name, "replay");
  EXPECT_EQ(s.tenants[3].where.key_path, "tenants.2");
}

TEST(ScenarioLoader, LocateFindsKeysAndAncestors) {
  const Scenario s = load_scenario_file(kFull);
  const SourceLocation memory = s.locate("tenants.0.memory");
  EXPECT_EQ(memory.file, kFull);
  EXPECT_EQ(memory.line, 35);
  EXPECT_EQ(memory.column, 13);
  EXPECT_EQ(memory.key_path, "tenants.0.memory");
  const SourceLocation kernel = s.locate("tenants.0.workload.request.kernels.1.duration");
  EXPECT_EQ(kernel.line, 42);
  // Not written: the nearest written ancestor's position, the requested path.
  const SourceLocation unset = s.locate("tenants.1.memory_per_request.extra");
  EXPECT_EQ(unset.line, 50);
  EXPECT_EQ(unset.key_path, "tenants.1.memory_per_request.extra");
  const SourceLocation nothing = s.locate("nowhere.at.all");
  EXPECT_EQ(nothing.file, kFull);
  EXPECT_EQ(nothing.line, 0);
  EXPECT_EQ(s.locate("faults.0.recovery").line, 68);  // active: added above
}

TEST(ScenarioLoader, MigListLayoutNameOrCommaString) {
  const auto mig = [](const std::string& value) {
    return load_scenario_text(edited("    sharing:\n", "    mig: " + value + "\n    sharing:\n"),
                              "m.yaml")
        .gpus[0];
  };
  EXPECT_EQ(mig("[3g.40gb, 4g.40gb]").mig, (std::vector<std::string>{"3g.40gb", "4g.40gb"}));
  EXPECT_EQ(mig("\"3g.40gb, 1g.10gb,1g.10gb\"").mig,
            (std::vector<std::string>{"3g.40gb", "1g.10gb", "1g.10gb"}));
  const GpuSpec layout = mig("all-1g");
  EXPECT_TRUE(layout.mig.empty());
  EXPECT_EQ(layout.mig_layout_name, "all-1g");
}

TEST(ScenarioLoader, SpellingsOfModes) {
  for (const char* mode : {"time-slicing", "time_slicing", "timeslicing"}) {
    const Scenario s =
        load_scenario_text(edited("mode: time-slicing", "mode: " + std::string(mode)), "x.yaml");
    EXPECT_STREQ(s.gpus[0].sharing.mode_name(), "time-slicing") << mode;
  }
  EXPECT_STREQ(
      load_scenario_text(edited("time-slicing", "mps"), "x.yaml").gpus[0].sharing.mode_name(),
      "mps");
  const Scenario constant =
      load_scenario_text(edited("process: poisson", "process: constant"), "x.yaml");
  EXPECT_EQ(constant.tenants[0].workload.arrivals.process, ArrivalProcess::constant);
}

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

// --- overrides ---

TEST(ScenarioOverrides, ParseOverride) {
  const Override o = parse_override("tenants.0.workload.arrivals.rate=80/s");
  EXPECT_EQ(o.key_path, "tenants.0.workload.arrivals.rate");
  EXPECT_EQ(o.value, "80/s");
  EXPECT_EQ(parse_override("description=a=b").value, "a=b");
  try {
    parse_override("seed");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_CONTAINS(e.what(), "--set seed: expected KEY=VALUE");
  }
}

TEST(ScenarioOverrides, ValuesReplaceAndAddKeys) {
  const Scenario s = load_scenario_text(
      kMinimal, "min.yaml",
      {parse_override("seed=9"), parse_override("gpus.0.sharing.timeslice=2ms"),
       parse_override("tenants.0.workload.arrivals.rate=80/s"),
       parse_override("tenants.0.workload.request.kernels.0={duration: 5ms, repeat: 2}")});
  EXPECT_EQ(s.seed, 9u);
  EXPECT_EQ(ts_params(s.gpus[0].sharing).timeslice, 2'000'000);
  EXPECT_EQ(s.tenants[0].workload.arrivals.rate_per_s, 80.0);
  EXPECT_EQ(s.tenants[0].workload.kernels[0].duration.value, 5'000'000);
  EXPECT_EQ(s.tenants[0].workload.kernels[0].repeat, 2);
  EXPECT_DOUBLE_EQ(s.tenants[0].workload.kernels[0].sm_fraction, 1.0);  // the whole entry replaced
  // An overridden key is located at the flag, not in the file.
  EXPECT_EQ(s.locate("seed").file, "--set");
  EXPECT_EQ(s.locate("gpus.0.sharing.timeslice").line, 0);
  EXPECT_EQ(s.locate("gpus.0.sharing.mode").line, 7);
}

TEST(ScenarioOverrides, WholeBlockOverride) {
  const Scenario s = load_scenario_text(
      kMinimal, "min.yaml",
      {parse_override("tenants.0.workload.arrivals={process: closed, concurrency: 2}")});
  EXPECT_EQ(s.tenants[0].workload.arrivals.process, ArrivalProcess::closed);
  EXPECT_EQ(s.tenants[0].workload.arrivals.concurrency, 2);
  EXPECT_EQ(s.tenants[0].workload.max_in_flight, 2);
}

TEST(ScenarioOverrides, ByName) {
  const Scenario s = load_scenario_text(
      kMinimal, "min.yaml",
      {parse_override("tenants.chat.replicas=3"), parse_override("gpus.gpu0.sharing.mode=mps")});
  ASSERT_EQ(s.tenants.size(), 3u);
  EXPECT_EQ(s.tenants[1].name, "chat-1");
  EXPECT_STREQ(s.gpus[0].sharing.mode_name(), "mps");
  EXPECT_EQ(error_of(kMinimal, {parse_override("tenants.chat.replicas=3"),
                                parse_override("tenants.chat-1.memory=1Gi")}),
            "--set tenants.chat-1.memory: tenants has no entry named 'chat-1' (a replica of "
            "'chat': --set tenants.chat.KEY sets all its replicas)");
}

TEST(ScenarioOverrides, LaterOverridesWin) {
  const Scenario s = load_scenario_text(kMinimal, "min.yaml",
                                        {parse_override("seed=3"), parse_override("seed=4")});
  EXPECT_EQ(s.seed, 4u);
}

TEST(ScenarioOverrides, BadPaths) {
  EXPECT_EQ(error_of(kMinimal, {parse_override("gpus.3.sharing.timeslice=2ms")}),
            "--set gpus.3.sharing.timeslice: gpus has 1 entries");
  EXPECT_EQ(error_of(kMinimal, {parse_override("gpus.first.model=a100")}),
            "--set gpus.first.model: gpus has no entry named 'first'; names: gpu0 (or an index "
            "0-0)");
  EXPECT_EQ(error_of(kMinimal, {parse_override("tenants.chta.replicas=2")}),
            "--set tenants.chta.replicas: tenants has no entry named 'chta' (did you mean "
            "'chat'?); names: chat (or an index 0-0)");
  EXPECT_EQ(error_of(kMinimal, {parse_override("tenants.0.worklod.arrivals.rate=2/s")}),
            "--set tenants.0.worklod.arrivals.rate: tenants.0 has no key 'worklod' (did you mean "
            "'workload'?)");
  const std::string no_sharing = edited("    sharing:\n      mode: time-slicing\n", "");
  EXPECT_EQ(error_of(no_sharing, {parse_override("gpus.0.sharing.timeslice=2ms")}),
            "--set gpus.0.sharing.timeslice: gpus.0 has no key 'sharing'; to add it, set the whole "
            "block: --set gpus.0.sharing={timeslice: 2ms}");
  // Exclusive GPU: the time-slicing key is read and checked, kept aside for `compare`.
  EXPECT_EQ(ts_params(load_scenario_text(no_sharing, "x.yaml",
                                         {parse_override("gpus.0.sharing={timeslice: 2ms}")})
                          .gpus[0]
                          .sharing)
                .timeslice,
            2'000'000);
  EXPECT_EQ(error_of(kMinimal, {parse_override("name.x=1")}),
            "--set name.x: name is a single value, not a mapping or list");
  EXPECT_EQ(error_of(kMinimal, {parse_override("gpus..model=a")}),
            "--set gpus..model: expected a dotted key path such as gpus.0.sharing.timeslice");
}

TEST(ScenarioOverrides, ValuesAreCheckedLikeTheFile) {
  EXPECT_EQ(error_of(kMinimal, {parse_override("gpus.0.sharing.timeslice=2")}),
            "--set gpus.0.sharing.timeslice: missing unit, e.g. 2ms (got '2')");
  EXPECT_EQ(error_of(kMinimal, {parse_override("tenants.0.workload.arrivals.rate=80")}),
            "--set tenants.0.workload.arrivals.rate: missing unit, e.g. 50/s (got '80')");
  EXPECT_CONTAINS(error_of(kMinimal, {parse_override("gpus.0.sharing.timeslize=2ms")}),
                  "--set gpus.0.sharing.timeslize: unknown key 'timeslize' in gpus.0.sharing (did "
                  "you mean 'timeslice'?)");
  EXPECT_EQ(error_of(kMinimal, {parse_override("tenants.0.workload.arrivals={process: closed}")}),
            "--set tenants.0.workload.arrivals.concurrency: missing required key 'concurrency'");
  EXPECT_CONTAINS(error_of(kMinimal, {parse_override("seed={a: [")}),
                  "--set seed: bad YAML value '{a: [' (line 1, column ");
  // The value is read like a file: UTF-8 only, one document.
  EXPECT_CONTAINS(error_of(kMinimal, {parse_override("name=caf\xE9")}),
                  "--set name: bad YAML value 'caf\\xE9' (line 1, column 4 of the value): not "
                  "UTF-8 text (byte 0xE9");
  EXPECT_CONTAINS(error_of(kMinimal, {parse_override("name=a\n---\nb")}), "several YAML documents");
  // The file's own errors still point into the file.
  EXPECT_CONTAINS(error_of(edited("rate: 50/s", "rate: 50"), {parse_override("seed=2")}),
                  "bad.yaml:13:42: tenants.0.workload.arrivals.rate: missing unit");
}

TEST(ScenarioOverrides, ApplyToFiles) {
  const Scenario s = load_scenario_file(
      kFull, {parse_override("tenants.1.replicas=3"), parse_override("gpus.1.count=1"),
              parse_override("tenants.1.device=pool"), parse_override("tenants.2.device=pool/0"),
              parse_override("tenants.2.workload.arrivals.time_scale=2")});
  EXPECT_EQ(s.tenants.size(), 5u);  // chat, batch-0..2, replay
  EXPECT_EQ(s.gpus.size(), 2u);     // gpu0, pool
  EXPECT_EQ(s.gpus[1].name, "pool");
  EXPECT_EQ(s.tenants[3].device, "pool");
  EXPECT_EQ(s.tenants[4].workload.arrivals.time_scale, 2.0);
  // Without the device override, the tenant names a device that no longer exists.
  try {
    load_scenario_file(kFull, {parse_override("gpus.1.count=1")});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_CONTAINS(e.what(),
                    "full.yaml:51:13: tenants.1.device: no gpu named 'pool-1' (did you "
                    "mean 'pool'?); gpus: gpu0, pool");
  }
}

// --- emit ---

void expect_same(const Scenario& a, const Scenario& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.duration, b.duration);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.allow_large, b.allow_large);
  EXPECT_EQ(a.contention_law, b.contention_law);
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const GpuSpec& x = a.gpus[i];
    const GpuSpec& y = b.gpus[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.model, y.model);
    EXPECT_EQ(x.mig, y.mig);
    EXPECT_EQ(x.mig_layout_name, y.mig_layout_name);
    EXPECT_EQ(x.cost_per_hour, y.cost_per_hour);
    EXPECT_STREQ(x.sharing.mode_name(), y.sharing.mode_name());
    EXPECT_EQ(x.sharing.replicas, y.sharing.replicas);
    EXPECT_EQ(ts_params(x.sharing).timeslice, ts_params(y.sharing).timeslice);
    EXPECT_EQ(ts_params(x.sharing).context_switch, ts_params(y.sharing).context_switch);
    EXPECT_EQ(ts_params(x.sharing).preemption, ts_params(y.sharing).preemption);
    EXPECT_EQ(ts_params(x.sharing).preemption_latency, ts_params(y.sharing).preemption_latency);
    EXPECT_EQ(ts_params(x.sharing).cache_refill, ts_params(y.sharing).cache_refill);
    EXPECT_EQ(mps_params(x.sharing).active_thread_percentage,
              mps_params(y.sharing).active_thread_percentage);
    EXPECT_EQ(mps_params(x.sharing).pinned_memory_limit, mps_params(y.sharing).pinned_memory_limit);
    EXPECT_EQ(mps_params(x.sharing).max_clients, mps_params(y.sharing).max_clients);
  }
  ASSERT_EQ(a.tenants.size(), b.tenants.size());
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    const TenantSpec& x = a.tenants[i];
    const TenantSpec& y = b.tenants[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.memory, y.memory);
    EXPECT_EQ(x.gpus, y.gpus);
    EXPECT_EQ(x.slo.p50, y.slo.p50);
    EXPECT_EQ(x.slo.p90, y.slo.p90);
    EXPECT_EQ(x.slo.p99, y.slo.p99);
    EXPECT_EQ(x.slo.p999, y.slo.p999);
    const WorkloadSpec& w = x.workload;
    const WorkloadSpec& v = y.workload;
    EXPECT_EQ(w.arrivals.process, v.arrivals.process);
    EXPECT_EQ(w.arrivals.rate_per_s, v.arrivals.rate_per_s);
    EXPECT_EQ(w.arrivals.concurrency, v.arrivals.concurrency);
    EXPECT_EQ(w.arrivals.think, v.arrivals.think);
    EXPECT_EQ(w.arrivals.trace_file, v.arrivals.trace_file);
    EXPECT_EQ(w.arrivals.trace_format, v.arrivals.trace_format);
    EXPECT_EQ(w.arrivals.time_scale, v.arrivals.time_scale);
    EXPECT_EQ(w.host_gap, v.host_gap);
    EXPECT_EQ(w.max_in_flight, v.max_in_flight);
    EXPECT_EQ(w.memory_per_request, v.memory_per_request);
    EXPECT_EQ(w.cuda_graph, v.cuda_graph);
    EXPECT_EQ(w.priority, v.priority);
    ASSERT_EQ(w.kernels.size(), v.kernels.size());
    for (std::size_t k = 0; k < w.kernels.size(); ++k) {
      EXPECT_EQ(w.kernels[k].name, v.kernels[k].name);
      EXPECT_EQ(w.kernels[k].waves, v.kernels[k].waves);
      EXPECT_EQ(w.kernels[k].working_set, v.kernels[k].working_set);
      EXPECT_EQ(w.kernels[k].blocks, v.kernels[k].blocks);
      EXPECT_EQ(w.kernels[k].blocks_per_sm, v.kernels[k].blocks_per_sm);
      EXPECT_EQ(w.kernels[k].duration.kind, v.kernels[k].duration.kind);
      EXPECT_EQ(w.kernels[k].duration.value, v.kernels[k].duration.value);
      EXPECT_EQ(w.kernels[k].duration.sigma, v.kernels[k].duration.sigma);
      EXPECT_EQ(w.kernels[k].duration.upper, v.kernels[k].duration.upper);
      EXPECT_EQ(w.kernels[k].sm_fraction, v.kernels[k].sm_fraction);
      EXPECT_EQ(w.kernels[k].memory_bound, v.kernels[k].memory_bound);
      EXPECT_EQ(w.kernels[k].busy_share, v.kernels[k].busy_share);
      EXPECT_EQ(w.kernels[k].repeat, v.kernels[k].repeat);
    }
  }
  ASSERT_EQ(a.faults.size(), b.faults.size());
  for (std::size_t i = 0; i < a.faults.size(); ++i) {
    EXPECT_EQ(a.faults[i].tenant, b.faults[i].tenant);
    EXPECT_EQ(a.faults[i].at, b.faults[i].at);
    EXPECT_EQ(a.faults[i].kind, b.faults[i].kind);
    EXPECT_EQ(a.faults[i].recovery, b.faults[i].recovery);
  }
  EXPECT_EQ(a.output.sample, b.output.sample);
  EXPECT_EQ(a.output.kernels, b.output.kernels);
  EXPECT_EQ(a.output.percentiles, b.output.percentiles);
}

TEST(ScenarioEmit, RoundTripGivesAnEqualScenario) {
  const Scenario original = load_scenario_file(kFull);
  const std::string yaml = emit_scenario_yaml(original);
  const Scenario again = load_scenario_text(yaml, "/elsewhere/emitted.yaml");
  expect_same(original, again);
  EXPECT_EQ(emit_scenario_yaml(again), yaml);  // a fixed point
  // Expanded entries are written expanded.
  EXPECT_CONTAINS(yaml, "name: pool-1");
  EXPECT_CONTAINS(yaml, "name: batch-0");
  EXPECT_EQ(again.gpus[2].count, 1);
  EXPECT_EQ(again.tenants[2].replicas, 1);
}

TEST(ScenarioEmit, EveryFieldIsExplicit) {
  const std::string yaml = emit_scenario_yaml(load_scenario_text(kMinimal, "min.yaml"));
  for (const char* key :
       {"seed: 1", "warmup: 0ns", "description: \"\"", "preemption: instruction", "memory: 0B",
        "host_gap: 0ns", "max_in_flight: 1", "memory_bound: 0", "repeat: 1", "rate: 50/s",
        "sample: 100ms", "kernels: false", "percentiles: auto"}) {
    EXPECT_CONTAINS(yaml, key);
  }
  EXPECT_EQ(yaml.find("timeslice"), std::string::npos);  // unset optionals are left out
  EXPECT_EQ(yaml.find("slo"), std::string::npos);
}

TEST(ScenarioEmit, OddValuesSurvive) {
  Scenario s = load_scenario_text(kMinimal, "min.yaml");
  s.description = "quotes \" and: colons # and a\nnewline";
  s.tenants[0].workload.arrivals.rate_per_s = 23.0 / 60;
  s.tenants[0].workload.kernels[0].sm_fraction = 0.1 + 0.2;  // 0.30000000000000004
  s.tenants[0].workload.kernels[0].duration.value = 1'000'000'001;
  s.tenants[0].workload.kernels[0].waves = 2.5;
  s.tenants[0].workload.kernels[0].working_set = 12'345'678;
  s.tenants[0].workload.kernels[0].blocks = 528;
  s.tenants[0].workload.kernels[0].blocks_per_sm = 2;
  s.tenants[0].workload.kernels[0].memory_bound = 1;
  s.tenants[0].workload.kernels[0].busy_share = 0.1 + 0.2;  // overlapped phases (law 2)
  s.tenants[0].workload.cuda_graph = true;
  s.tenants[0].workload.priority = -3;
  s.seed = 18'446'744'073'709'551'615ULL;
  const Scenario again = load_scenario_text(emit_scenario_yaml(s), "x.yaml");
  expect_same(s, again);
}

TEST(ScenarioLoader, ContentionLawByNameAndSet) {
  EXPECT_EQ(load_scenario_text(kMinimal, "min.yaml").contention_law, "");  // the default
  const Scenario fluid =
      load_scenario_text(std::string("contention_law: fluid\n") + kMinimal, "law.yaml");
  EXPECT_EQ(fluid.contention_law, "fluid");
  // emitted only when set, and back to the same value
  EXPECT_CONTAINS(emit_scenario_yaml(fluid), "contention_law: fluid");
  EXPECT_EQ(load_scenario_text(emit_scenario_yaml(fluid), "again.yaml").contention_law, "fluid");
  EXPECT_EQ(emit_scenario_yaml(load_scenario_text(kMinimal, "min.yaml")).find("contention_law"),
            std::string::npos);
  // --set reaches it
  const Scenario set = load_scenario_text(kMinimal, "min.yaml", {{"contention_law", "fluid"}});
  EXPECT_EQ(set.contention_law, "fluid");
  const std::string error = error_of(std::string("contention_law: fluidd\n") + kMinimal);
  EXPECT_CONTAINS(error, "bad.yaml:1:");
  EXPECT_CONTAINS(error, "unknown contention law 'fluidd'");
  EXPECT_CONTAINS(error, "residency, fluid");
}

TEST(ScenarioLoader, BlockFootprint) {
  // `block:` (contention law 1c): read, left for resolve_scenario to derive blocks_per_sm on the
  // tenant's GPU, emitted without blocks_per_sm and read back the same.
  const Scenario s = load_scenario_text(
      edited("sm_fraction: 0.5}",
             "sm_fraction: 0.5, blocks: 528, block: {threads: 256, registers: 40, "
             "shared_memory: 48KiB}}"),
      "b.yaml");
  const KernelSpec& k = s.tenants[0].workload.kernels[0];
  EXPECT_EQ(k.block, (BlockFootprint{256, 40, 48 * 1024}));
  EXPECT_TRUE(k.derive_blocks_per_sm);
  const std::string yaml = emit_scenario_yaml(s);
  EXPECT_CONTAINS(yaml, "block: {threads: 256, registers: 40, shared_memory: 48KiB}");
  EXPECT_EQ(yaml.find("blocks_per_sm"), std::string::npos);
  const Scenario reloaded = load_scenario_text(yaml, "again.yaml");
  const KernelSpec& again = reloaded.tenants[0].workload.kernels[0];
  EXPECT_EQ(again.block, k.block);
  EXPECT_TRUE(again.derive_blocks_per_sm);
  // With blocks_per_sm given, it is kept.
  EXPECT_FALSE(load_scenario_text(edited("sm_fraction: 0.5}",
                                         "sm_fraction: 0.5, blocks: 528, blocks_per_sm: 2, "
                                         "block: {threads: 256}}"),
                                  "b.yaml")
                   .tenants[0]
                   .workload.kernels[0]
                   .derive_blocks_per_sm);
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5}", "sm_fraction: 0.5, block: {threads: 64}}")),
                  "block needs blocks");
  EXPECT_CONTAINS(
      error_of(edited("sm_fraction: 0.5}", "sm_fraction: 0.5, blocks: 9, block: {threads: 2048}}")),
      "at most 1024 threads per block");
  EXPECT_CONTAINS(
      error_of(edited("sm_fraction: 0.5}", "sm_fraction: 0.5, blocks: 9, block: {thread: 64}}")),
      "bad.yaml:16:");
}

TEST(ScenarioLoader, BlocksAndBlocksPerSm) {
  const Scenario s = load_scenario_text(
      edited("sm_fraction: 0.5}", "sm_fraction: 0.5, blocks: 528, blocks_per_sm: 2}"), "b.yaml");
  EXPECT_EQ(s.tenants[0].workload.kernels[0].blocks, 528);
  EXPECT_DOUBLE_EQ(s.tenants[0].workload.kernels[0].grid(), 264.0);
  EXPECT_EQ(load_scenario_text(kMinimal, "min.yaml").tenants[0].workload.kernels[0].grid(), 0.0);
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5}", "sm_fraction: 0.5, blocks: 0}")),
                  "bad.yaml:16:");
  EXPECT_CONTAINS(error_of(edited("sm_fraction: 0.5}", "sm_fraction: 0.5, blocks_per_sm: 2}")),
                  "blocks_per_sm needs blocks");
}

}  // namespace
}  // namespace gpumux

namespace gpumux {
namespace {

// The smallest real grid is one thread block on one SM: sm_fraction x S_gpu >= 1 (issue 23).
// Narrower, the residency law never grants it a block and the run would report `complete`
// with none of its requests done; refused at resolve, one line at the kernel's key.
TEST(ResolveGridWidth, AKernelNarrowerThanOneSmIsRefusedAtItsKey) {
  const auto scenario = [](const std::string& fraction) {
    return "name: narrow\nduration: 10ms\n"
           "gpus: [{name: gpu0, model: h100-sxm-80gb}]\n"
           "tenants:\n"
           "  - name: t\n"
           "    device: gpu0\n"
           "    workload:\n"
           "      arrivals: {process: constant, rate: 1000/s}\n"
           "      request:\n"
           "        kernels:\n"
           "          - {name: ok, duration: 1ms}\n"
           "          - {name: tiny, duration: 1ms, sm_fraction: " +
           fraction + "}\n";
  };
  for (const std::string f : {"1e-9", "0.007"}) {
    try {
      resolve_scenario(load_scenario_text(scenario(f), "narrow.yaml"));
      FAIL() << f;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.where().line, 12) << what;
      EXPECT_NE(what.find("tenants.0.workload.request.kernels.1.sm_fraction"), std::string::npos)
          << what;
      EXPECT_NE(what.find("132 SMs"), std::string::npos) << what;
      EXPECT_NE(what.find("sm_fraction >= 1/132"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  // One SM's worth (1/132 = 0.00758) and more resolve.
  EXPECT_NO_THROW(resolve_scenario(load_scenario_text(scenario("0.0076"), "narrow.yaml")));
  EXPECT_NO_THROW(
      resolve_scenario(load_scenario_text(scenario(std::to_string(1.0 / 132)), "narrow.yaml")));
}

}  // namespace
}  // namespace gpumux
