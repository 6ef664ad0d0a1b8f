// Tenants across the sharing strategies end to end: injected faults and restarts, data-parallel
// tenants spanning devices, a hybrid MIG + MPS layout, and determinism. The strategies one by
// one: test_sharing_models.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "models/config/profile_loader.hpp"
#include "tests/support/run_yaml.hpp"
#include "tests/support/launch.hpp"

namespace gpumux {
namespace {

using testing::device;
using testing::run_yaml;
using testing::tenant;

// ------------------------------------------------------------------------------------- faults

std::string fault_scenario(const std::string& gpu) {
  return R"(
name: faults
duration: 4s
gpus:
  - )" + gpu +
         R"(
tenants:
  - {name: a, device: DEV0, workload: {arrivals: {process: poisson, rate: 100/s}, request: {kernels: [{name: k, duration: 200us}]}}}
  - {name: b, device: DEV1, workload: {arrivals: {process: poisson, rate: 100/s}, request: {kernels: [{name: k, duration: 200us}]}}}
faults:
  - {tenant: a, at: 2s, kind: fatal}
)";
}

std::string with_devices(std::string yaml, const std::string& d0, const std::string& d1) {
  yaml.replace(yaml.find("DEV0"), 4, d0);
  yaml.replace(yaml.find("DEV1"), 4, d1);
  return yaml;
}

TEST(Faults, MpsFatalFaultTakesDownEveryClientOfTheServer) {
  const RunResult r = run_yaml(with_devices(
      fault_scenario("{name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps}}"), "gpu0", "gpu0"));
  EXPECT_GT(tenant(r, "a").failed, 100);
  EXPECT_GT(tenant(r, "b").failed, 100);
}

TEST(Faults, TimeSlicingFatalFaultFailsOnlyThatContext) {
  const RunResult r = run_yaml(with_devices(
      fault_scenario("{name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing}}"), "gpu0",
      "gpu0"));
  EXPECT_GT(tenant(r, "a").failed, 100);
  EXPECT_EQ(tenant(r, "b").failed, 0);
}

TEST(Faults, MigFaultStaysInsideItsInstanceEvenWithMpsInside) {
  const RunResult r = run_yaml(with_devices(
      fault_scenario(
          "{name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 3g.40gb], sharing: {mode: mps}}"),
      "gpu0/0", "gpu0/1"));
  EXPECT_GT(tenant(r, "a").failed, 100);
  EXPECT_EQ(tenant(r, "b").failed, 0);
}

TEST(Faults, RecoveryRestartsTheClient) {
  std::string yaml = with_devices(
      fault_scenario("{name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps}}"), "gpu0", "gpu0");
  yaml.replace(yaml.find("kind: fatal"), 11, "kind: fatal, recovery: 500ms");
  const RunResult r = run_yaml(yaml);
  // Down for 0.5 s of 4 s at 100/s: about 50 failures each, the rest complete.
  EXPECT_NEAR(static_cast<double>(tenant(r, "b").failed), 50.0, 25.0);
  EXPECT_GT(tenant(r, "b").completed, 300);
}

// ------------------------------------------------------------------------- data-parallel tenants

TEST(DataParallel, CollectiveWaitsForTheSlowestReplica) {
  // Two GPUs, one replica of each step per GPU: 10 ms of compute then a 2 ms collective, each
  // kernel after its launch overhead. Alone: latency = 2 L + 12 ms. With a neighbour on gpu0-1
  // (MPS) running 50 ms full-grid kernels back to back, that replica's kernels find every SM
  // held: its compute waits for one neighbour kernel, and its collective (launched while the
  // next neighbour kernel already holds the SMs) for another: 50 + 10 + 50 + 2 = 112 ms, and
  // gpu0-0's replica waits at the barrier for all of it (launch gaps hidden behind the waits).
  const std::string base = R"(
name: dp
duration: 5s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, count: 2, sharing: {mode: mps}}
tenants:
  - name: trainer
    device: [gpu0-0, gpu0-1]
    memory: 20GiB
    workload:
      arrivals: {process: closed, concurrency: 1}
      request:
        kernels:
          - {name: fwd-bwd, duration: 10ms}
          - {name: allreduce, duration: 2ms, memory_bound: 1.0, collective: true}
NEIGHBOUR)";
  std::string alone = base;
  alone.replace(alone.find("NEIGHBOUR"), 9, "");
  const RunResult a = run_yaml(alone);
  EXPECT_NEAR(tenant(a, "trainer").latency.p50, 2 * launch_ns() + 12e6, 2.0);
  EXPECT_EQ(tenant(a, "trainer").device, "gpu0-0,gpu0-1");
  EXPECT_EQ(device(a, "gpu0-1").memory_peak_bytes, 20LL << 30);

  std::string shared = base;
  shared.replace(shared.find("NEIGHBOUR"), 9, R"(
  - name: neighbour
    device: gpu0-1
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: k, duration: 50ms}]}
)");
  const RunResult b = run_yaml(shared);
  EXPECT_NEAR(tenant(b, "trainer").latency.p50, 112e6, 0.01 * 112e6);
  // gpu0-0 idles at the barrier: busy (10 ms compute + 2 ms collective, whose grid occupies
  // the SMs too) for about 12 of every 112 ms.
  EXPECT_NEAR(device(b, "gpu0-0").sm_busy, 12.0 / 112.0, 0.02);
}

TEST(DataParallel, GangNeedsAListOfDevicesAndNoTimeSlicing) {
  const std::string one_device = R"(
name: dp
duration: 1s
gpus: [{name: gpu0, model: h100-sxm-80gb, count: 2}]
tenants:
  - {name: t, device: gpu0-0, gpus: 2, workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: k, duration: 1ms}]}}}
)";
  EXPECT_THROW(run_yaml(one_device), InputError);
  std::string sliced = one_device;
  sliced.replace(sliced.find("count: 2}"), 9, "count: 2, sharing: {mode: time-slicing}}");
  sliced.replace(sliced.find("device: gpu0-0, gpus: 2"), 23, "device: [gpu0-0, gpu0-1]");
  try {
    run_yaml(sliced);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("time-shared"), std::string::npos) << e.what();
  }
}

TEST(DataParallel, ACollectiveEndsOnEveryRankTogether) {
  // An all-reduce of 12 ms (memory-bound, half the grid) on gpu0-0 and gpu0-1, then a 1 ms step.
  // On gpu0-1 a neighbour's 2 ms memory-bound kernel (the other half of the SMs) shares HBM
  // from the same instant: each runs at 1/2 for 4 ms, so that rank's share ends at
  // L + 2 + 10 = L + 14 ms, gpu0-0's at L + 12 ms. No rank has the reduced data before every
  // rank contributed: the collective ends at L + 14 ms on both, and each rank's next kernel is
  // issued then (ready L later).
  const RunResult r = run_yaml(R"(
name: dp-end
duration: 50ms
output: {kernels: true}
gpus:
  - {name: gpu0, model: h100-sxm-80gb, count: 2, sharing: {mode: mps}}
tenants:
  - name: trainer
    device: [gpu0-0, gpu0-1]
    workload:
      arrivals: {process: constant, rate: 10/s}
      request:
        kernels:
          - {name: allreduce, duration: 12ms, sm_fraction: 0.5, memory_bound: 1.0, collective: true}
          - {name: step, duration: 1ms, sm_fraction: 0.5}
  - name: neighbour
    device: gpu0-1
    workload:
      arrivals: {process: constant, rate: 10/s}
      request: {kernels: [{name: k, duration: 2ms, sm_fraction: 0.5, memory_bound: 1.0}]}
)");
  const auto l = static_cast<std::int64_t>(launch_ns());
  int collectives = 0, steps = 0;
  for (const KernelRecord& k : r.kernels) {
    if (k.tenant != 0) continue;  // the trainer (listed first)
    if (k.kernel_index == 0) {
      ++collectives;
      EXPECT_EQ(k.start_ns, l) << k.device;
      EXPECT_EQ(k.finish_ns, l + 14'000'000) << k.device;
    } else {
      ++steps;
      EXPECT_EQ(k.start_ns, 2 * l + 14'000'000) << k.device;
      EXPECT_EQ(k.finish_ns, 2 * l + 15'000'000) << k.device;
    }
  }
  EXPECT_EQ(collectives, 2);
  EXPECT_EQ(steps, 2);
  EXPECT_NEAR(tenant(r, "trainer").latency.mean, 2 * launch_ns() + 15e6, 2.0);
}

// -------------------------------------------------------------------------------------- hybrid

TEST(Hybrid, TimeSlicingInsideMigInstancesIsolatesInstances) {
  const RunResult r = run_yaml(R"(
name: hybrid
duration: 5s
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    mig: [2g.20gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]
    sharing: {mode: time-slicing, replicas: 3}
tenants:
  - {name: hot, replicas: 3, device: gpu0/0, workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: k, duration: 5ms}]}}}
  - {name: calm, device: gpu0/1, workload: {arrivals: {process: closed, concurrency: 1, think: 10ms}, request: {kernels: [{name: k, duration: 1ms}]}}}
)");
  // calm is alone in its 1g.10gb: latency = L + 132/16 ms whatever the 2g.20gb does.
  EXPECT_NEAR(tenant(r, "calm").latency.p99, launch_ns() + 1e6 * 132 / 16, 2.0);
  EXPECT_GT(device(r, "gpu0/0").context_switches, 100);
  EXPECT_EQ(device(r, "gpu0/1").context_switches, 0);
}

// ------------------------------------------------------------------------------ determinism

TEST(Determinism, EveryEventQueueKindGivesIdenticalRuns) {
  // The runner picks the event queue from the scenario's size; the choice must never change a
  // result. A mixed scenario (time-slicing, MPS, MIG, faults) under each kind.
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(R"(
name: both-queues
seed: 4
duration: 3s
gpus:
  - {name: ts, model: h100-sxm-80gb, sharing: {mode: time-slicing}}
  - {name: mp, model: a100-80gb, mig: all-balanced, sharing: {mode: mps}}
tenants:
  - {name: a, replicas: 3, device: ts, workload: {arrivals: {process: poisson, rate: 300/s}, request: {kernels: [{name: k, duration: {exponential: 800us}, memory_bound: 0.4, repeat: 3}], host_gap: 30us}}}
  - {name: b, replicas: 2, device: mp/3, workload: {arrivals: {process: closed, concurrency: 2}, request: {kernels: [{name: k, duration: 2ms, memory_bound: 0.8}]}}}
  - {name: c, device: mp/0, workload: {arrivals: {process: constant, rate: 100/s}, request: {kernels: [{name: k, duration: 300us}]}}}
faults:
  - {tenant: b-0, at: 1s, kind: fatal, recovery: 300ms}
)",
                                                                        "queues.yaml"));
  RunOptions heap_options;
  heap_options.queue = QueueKind::heap;
  const RunResult h = simulate(resolved, heap_options);
  for (const QueueKind kind : {QueueKind::calendar, QueueKind::ladder}) {
    RunOptions options;
    options.queue = kind;
    const RunResult c = simulate(resolved, options);
    ASSERT_EQ(h.requests.size(), c.requests.size());
    for (std::size_t i = 0; i < h.requests.size(); ++i) {
      ASSERT_EQ(h.requests[i].finish_ns, c.requests[i].finish_ns) << i;
    }
    EXPECT_EQ(h.events, c.events);
    for (std::size_t t = 0; t < h.tenants.size(); ++t) {
      EXPECT_EQ(h.tenants[t].latency.p99, c.tenants[t].latency.p99);
      EXPECT_EQ(h.tenants[t].failed, c.tenants[t].failed);
    }
  }
  EXPECT_GT(h.tenants[3].failed, 0);  // the fault hit b's MPS server
}

}  // namespace
}  // namespace gpumux
