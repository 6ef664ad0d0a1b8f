// Device-plugin semantics (issue 6, item 4): what `replicas: N` means under MPS, the MPS client
// limit inside a MIG instance, and the refusal of data-parallel tenants on MIG instances.
#include <gtest/gtest.h>

#include <string>

#include "models/config/profile_loader.hpp"
#include "tests/support/run_yaml.hpp"
#include "tests/support/sharing.hpp"
#include "tests/support/launch.hpp"

namespace gpumux {
namespace {

using testing::run_yaml;
using testing::tenant;

constexpr std::int64_t kMiB = 1024 * 1024;

ResolvedScenario resolve_yaml(const std::string& yaml) {
  return resolve_scenario(load_scenario_text(yaml, "test.yaml"));
}

// One closed-loop client running a full-grid compute kernel on an MPS H100 with `sharing`.
std::string solo_mps(const std::string& sharing, const std::string& memory = "1GiB") {
  return R"(
name: replicas
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps)" +
         sharing + R"(}}
tenants:
  - name: a
    device: gpu0
    memory: )" +
         memory + R"(
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: k, duration: 1ms, sm_fraction: 1.0}]}
)";
}

// ------------------------------------------------------------------------ replicas under MPS

TEST(MpsReplicas, FourReplicasGiveEachClientAQuarterOfTheSmsSoAFullGridKernelTakesFourTimes) {
  // Device plugin: active threads 100/4 = 25 %: the grid holds 33 of 132 SMs, even alone.
  const RunResult r = run_yaml(solo_mps(", replicas: 4"));
  EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + 4e6, 2.0);
  const RunResult unset = run_yaml(solo_mps(""));
  EXPECT_NEAR(tenant(unset, "a").latency.p50, launch_ns() + 1e6, 2.0);
}

TEST(MpsReplicas, ResolvedLimitsFollowTheDevicePluginArithmetic) {
  const ResolvedScenario four = resolve_yaml(solo_mps(", replicas: 4"));
  ASSERT_EQ(four.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(*mps_params(four.devices[0].sharing).active_thread_percentage, 25.0);
  // 79.25 GiB / 4 = 20288 MiB.
  EXPECT_EQ(*mps_params(four.devices[0].sharing).pinned_memory_limit, 20288 * kMiB);
  // Integer percentage as the plugin's 100/replicasPerDevice; memory in whole MiB, rounded down.
  const ResolvedScenario three = resolve_yaml(solo_mps(", replicas: 3"));
  EXPECT_DOUBLE_EQ(*mps_params(three.devices[0].sharing).active_thread_percentage, 33.0);
  EXPECT_EQ(*mps_params(three.devices[0].sharing).pinned_memory_limit,
            (79LL * 1024 + 256) / 3 * kMiB);
  // These are device-plugin rules, not profile assumptions: not listed as profile defaults.
  for (const std::string& key : four.devices[0].profile_defaults) {
    EXPECT_NE(key, "pinned_memory_limit");
    EXPECT_NE(key, "active_thread_percentage");
  }
  // Without replicas: 100 % and no memory limit (plain MPS defaults).
  const ResolvedScenario none = resolve_yaml(solo_mps(""));
  EXPECT_DOUBLE_EQ(*mps_params(none.devices[0].sharing).active_thread_percentage, 100.0);
  EXPECT_FALSE(mps_params(none.devices[0].sharing).pinned_memory_limit);
  // Time-slicing replicas set neither.
  std::string ts = solo_mps(", replicas: 4");
  ts.replace(ts.find("mode: mps"), 9, "mode: time-slicing");
  EXPECT_FALSE(mps_params(resolve_yaml(ts).devices[0].sharing).pinned_memory_limit);
}

TEST(MpsReplicas, AClientAllocatingMoreThanAQuarterOfMemoryIsOomKilled) {
  // 20 GiB > 79.25 GiB / 4; 19 GiB fits.
  const RunResult over = run_yaml(solo_mps(", replicas: 4", "20GiB"));
  EXPECT_EQ(tenant(over, "a").oom_events, 1);
  EXPECT_EQ(tenant(over, "a").completed, 0);
  const RunResult fits = run_yaml(solo_mps(", replicas: 4", "19GiB"));
  EXPECT_EQ(tenant(fits, "a").oom_events, 0);
  EXPECT_GT(tenant(fits, "a").completed, 100);
  // Without replicas the whole GPU is available to the one client.
  EXPECT_EQ(tenant(run_yaml(solo_mps("", "20GiB")), "a").oom_events, 0);
}

TEST(MpsReplicas, ExplicitActiveThreadPercentageAndPinnedLimitWin) {
  const RunResult r = run_yaml(solo_mps(", replicas: 4, active_thread_percentage: 50", "19GiB"));
  EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + 2e6, 2.0);  // 50 %, not 25 %
  // The memory share still applies.
  const RunResult big = run_yaml(solo_mps(", replicas: 4, active_thread_percentage: 50", "20GiB"));
  EXPECT_EQ(tenant(big, "a").oom_events, 1);
  const RunResult mem = run_yaml(solo_mps(", replicas: 4, pinned_memory_limit: 30GiB", "20GiB"));
  EXPECT_EQ(tenant(mem, "a").oom_events, 0);
  EXPECT_NEAR(tenant(mem, "a").latency.p50, launch_ns() + 4e6, 2.0);  // threads still 25 %
}

TEST(MpsReplicas, InsideMigTheMemoryShareIsOfTheInstance) {
  // 3g.40gb holds 39.5 GiB: replicas 2 -> 19.75 GiB per client; 1g.10gb: 9.75 / 2.
  const ResolvedScenario r = resolve_yaml(R"(
name: mig-replicas
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 1g.10gb], sharing: {mode: mps, replicas: 2}}
tenants:
  - {name: a, device: gpu0/0, workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: k, duration: 1ms}]}}}
)");
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(*mps_params(r.devices[0].sharing).pinned_memory_limit, (39 * 1024 + 512) / 2 * kMiB);
  EXPECT_EQ(*mps_params(r.devices[1].sharing).pinned_memory_limit, (9 * 1024 + 768) / 2 * kMiB);
  EXPECT_DOUBLE_EQ(*mps_params(r.devices[0].sharing).active_thread_percentage, 50.0);
}

// ------------------------------------------------------------- MPS client limit inside MIG

std::string mig_clients(const std::string& mig, int clients, const std::string& extra) {
  return R"(
name: mig-clients
duration: 200ms
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [)" +
         mig + R"(], sharing: {mode: mps)" + extra + R"(}}
tenants:
  - name: c
    replicas: )" +
         std::to_string(clients) +
         R"(
    device: gpu0/0
    workload: {arrivals: {process: poisson, rate: 10/s}, request: {kernels: [{name: k, duration: 10us}]}}
)";
}

int rejected(const RunResult& r) {
  int n = 0;
  for (const EventRecord& e : r.events_log) n += e.kind == EventKind::reject;
  return n;
}

TEST(MpsInMig, ClientLimitIsLoweredProportionallyToTheComputeInstanceSize) {
  // 48 x 1/7 -> 6 on a 1g; 48 x 3/7 -> 20 on a 3g; 48 on the 7g; 60 x 1/7 -> 8 from CUDA 13.1.
  auto limit = [](const std::string& mig, const std::string& extra) {
    return *mps_params(resolve_yaml(mig_clients(mig, 1, extra)).devices[0].sharing).max_clients;
  };
  EXPECT_EQ(limit("1g.10gb", ""), 6);
  EXPECT_EQ(limit("2g.20gb", ""), 13);
  EXPECT_EQ(limit("3g.40gb", ""), 20);
  EXPECT_EQ(limit("4g.40gb", ""), 27);
  EXPECT_EQ(limit("7g.80gb", ""), 48);
  EXPECT_EQ(limit("1g.10gb", ", cuda_version: 13.1"), 8);
  // An explicit max_clients is the scenario's own: not scaled.
  EXPECT_EQ(limit("1g.10gb", ", max_clients: 40"), 40);

  EXPECT_EQ(rejected(run_yaml(mig_clients("1g.10gb", 8, ""))), 2);
  EXPECT_EQ(rejected(run_yaml(mig_clients("1g.10gb", 8, ", cuda_version: 13.1"))), 0);
  EXPECT_EQ(rejected(run_yaml(mig_clients("3g.40gb", 20, ""))), 0);
}

// ------------------------------------------------------- data-parallel tenants across MIG

const char* kDataParallelOnMig = R"(name: dp-mig
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 3g.40gb], sharing: {mode: mps}}
tenants:
  - name: trainer
    device: [gpu0/0, gpu0/1]
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: step, duration: 10ms}, {name: allreduce, duration: 1ms, collective: true}]}
)";

TEST(DataParallelOnMig, IsRefusedWithOneLineNamingFileLineAndKey) {
  try {
    run_yaml(kDataParallelOnMig);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind("test.yaml:7:", 0), 0u) << what;  // the `device:` line
    EXPECT_NE(what.find("tenants.0.device"), std::string::npos) << what;
    EXPECT_NE(what.find("gpu0/0"), std::string::npos) << what;
    EXPECT_NE(what.find("MIG"), std::string::npos) << what;
  }
}

TEST(DataParallelOnMig, OneInstanceOrWholeGpusAreStillAccepted) {
  std::string one = kDataParallelOnMig;
  one.replace(one.find("[gpu0/0, gpu0/1]"), 16, "gpu0/0");
  EXPECT_NO_THROW(resolve_yaml(one));
  std::string whole = kDataParallelOnMig;
  whole.replace(whole.find("mig: [3g.40gb, 3g.40gb], "), 25, "count: 2, ");
  whole.replace(whole.find("[gpu0/0, gpu0/1]"), 16, "[gpu0-0, gpu0-1]");
  EXPECT_NO_THROW(resolve_yaml(whole));
}

}  // namespace
}  // namespace gpumux
