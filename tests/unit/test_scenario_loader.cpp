// Scenario loading (models/scenario/loader.hpp): schema, units, defaults, expansion and
// overrides. Error locations: test_scenario_loader_errors.cpp; the emit -> load round trip:
// test_scenario_emit.cpp.
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

}  // namespace
}  // namespace gpumux
