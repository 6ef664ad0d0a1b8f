// The emit -> load round trip (models/scenario/emit.hpp): a loaded scenario written back as
// YAML loads to the same scenario; and resolve's refusal of a grid narrower than one SM.
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
