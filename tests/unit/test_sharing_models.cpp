// The sharing strategies end to end: MIG, time-slicing and MPS on whole runs. Faults,
// data-parallel tenants, hybrid layouts and determinism: test_sharing_tenants.cpp.
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

// ---------------------------------------------------------------------------------------- MIG

std::string mig_scenario(const std::string& kernel_fields) {
  return R"(
name: mig
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [1g.10gb, 3g.40gb]}
tenants:
  - name: small
    device: gpu0/0
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: k, duration: 1ms, )" +
         kernel_fields + R"(}]}
  - name: noisy
    device: gpu0/1
    workload:
      arrivals: {process: closed, concurrency: 4}
      request: {kernels: [{name: k, duration: 1ms, memory_bound: 1.0}]}
)";
}

TEST(MigClosedForm, ComputeBoundKernelOn1gTakes132Over16OfSoloTime) {
  const RunResult r = run_yaml(mig_scenario("memory_bound: 0.0"));
  // H100 1g.10gb has 16 of 132 SMs (real nvidia-smi -lgip); the neighbour in 3g.40gb is
  // isolated and changes nothing.
  EXPECT_NEAR(tenant(r, "small").latency.p50, launch_ns() + 1e6 * 132.0 / 16.0, 2.0);
  EXPECT_EQ(device(r, "gpu0/0").sms, 16);
  EXPECT_EQ(device(r, "gpu0/1").sms, 60);
}

TEST(MigClosedForm, MemoryBoundKernelOn1gTakes8xForOneOfEightMemorySlices) {
  const RunResult r = run_yaml(mig_scenario("memory_bound: 1.0"));
  EXPECT_NEAR(tenant(r, "small").latency.p50, launch_ns() + 8e6, 2.0);
  // The 3g.40gb instance holds 4 of 8 memory slices: a full-grid memory-bound kernel runs at
  // half speed (2 ms). Each of the 4 concurrent requests' kernel fills all 60 SMs, so they run
  // one after another (SM residency) and each request waits for the 3 others: 8 ms, the
  // launch overhead hidden behind its predecessors.
  EXPECT_NEAR(tenant(r, "noisy").latency.p50, 8e6, 2.0);
}

TEST(MigMemory, OverAllocatingTenantIsKilledAloneAndNeighboursAreUnaffected) {
  const RunResult r = run_yaml(R"(
name: mig-oom
duration: 2s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [1g.10gb, 1g.10gb]}
tenants:
  - name: hog
    device: gpu0/0
    memory: 12GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 1ms}]}
  - name: good
    device: gpu0/1
    memory: 8GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 1ms}]}
)");
  const TenantResult& hog = tenant(r, "hog");
  const TenantResult& good = tenant(r, "good");
  EXPECT_EQ(hog.oom_events, 1);
  EXPECT_EQ(hog.completed, 0);
  EXPECT_EQ(hog.failed, hog.requests);
  EXPECT_GT(hog.requests, 100);
  EXPECT_EQ(good.oom_events, 0);
  EXPECT_EQ(good.failed, 0);
  EXPECT_EQ(good.completed, good.requests);
  bool saw_oom = false, saw_kill = false;
  for (const EventRecord& e : r.events_log) {
    saw_oom |= e.kind == EventKind::oom && e.tenant == 0;
    saw_kill |= e.kind == EventKind::kill && e.tenant == 0;
    EXPECT_NE(e.tenant, 1) << e.detail;
  }
  EXPECT_TRUE(saw_oom);
  EXPECT_TRUE(saw_kill);
}

TEST(MigLayout, ImpossibleLayoutIsRejectedWithLocationAndReason) {
  try {
    run_yaml(R"(
name: bad
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [4g.40gb, 4g.40gb]}
tenants:
  - {name: t, device: gpu0/0, workload: {arrivals: {process: poisson, rate: 1/s}, request: {kernels: [{name: k, duration: 1ms}]}}}
)");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.yaml:5"), std::string::npos) << what;
    EXPECT_NE(what.find("gpus.0.mig"), std::string::npos) << what;
    EXPECT_NE(what.find("4g.40gb"), std::string::npos) << what;
  }
}

// ------------------------------------------------------------------------------- time-slicing

std::string ts_pair(const std::string& sharing, const std::string& a_workload,
                    const std::string& b_workload, const std::string& duration) {
  return R"(
name: ts
duration: )" +
         duration + R"(
seed: 5
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    sharing: )" +
         sharing + R"(
tenants:
  - name: a
    device: gpu0
    workload: )" +
         a_workload + R"(
  - name: b
    device: gpu0
    workload: )" +
         b_workload + "\n";
}

const char* kSaturating =
    "{arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: long, duration: "
    "200ms}]}}";

TEST(TimeSlicingClosedForm, TwoSaturatingContextsEachGetTOver2TPlusPPlusC) {
  const double t = 1024e3, p = 20e3, c = 50e3;
  const RunResult r = run_yaml(ts_pair(
      "{mode: time-slicing, timeslice: 1024us, context_switch: 50us, preemption_latency: 20us, "
      "cache_refill: 0us}",
      kSaturating, kSaturating, "20s"));
  const double share = t / (2 * (t + p + c));
  for (const char* name : {"a", "b"}) {
    // Work done per second = completed requests x 200 ms of solo work / 20 s.
    const TenantResult& tr = tenant(r, name);
    const double achieved = tr.throughput_per_s * 0.2;
    EXPECT_NEAR(achieved, share, 0.02 * share) << name;
  }
  const DeviceResult& d = device(r, "gpu0");
  EXPECT_NEAR(d.useful_fraction, 2 * share, 0.01);
  EXPECT_NEAR(d.sm_busy, 1.0, 0.01);  // overhead counts as busy
  EXPECT_GT(d.context_switches, 15000);
}

// The probe's requests may overlap (max_in_flight), so each one's wait is its own residual,
// not queueing behind an earlier probe.
const char* kProbe =
    "{arrivals: {process: poisson, rate: 20/s}, max_in_flight: 1000, "
    "request: {kernels: [{name: short, duration: 10us}]}}";

TEST(TimeSlicingClosedForm,
     ShortKernelBesideSaturatingNeighbourWaitsHalfASliceWithInstructionPreemption) {
  // E[latency] = L + T/2 + P + (C - P) + D_probe (arrivals uniform over the neighbour's slice
  // grid; the probe's own context had nothing preempted, so nothing to restore).
  const RunResult r = run_yaml(ts_pair(
      "{mode: time-slicing, timeslice: 2ms, context_switch: 50us, preemption_latency: 20us, "
      "cache_refill: 0us, preemption: instruction}",
      kSaturating, kProbe, "300s"));
  const TenantResult& probe = tenant(r, "b");
  ASSERT_GT(probe.completed, 5000);
  const double expected = launch_ns() + 1e6 + 20e3 + 30e3 + 10e3;
  EXPECT_NEAR(probe.latency.mean, expected, 0.03 * expected);
  // The worst case: arriving just as the device starts switching back to the (preempted)
  // neighbour (C), then a whole slice (T), then P + (C - P).
  EXPECT_LE(probe.latency.max, launch_ns() + 50e3 + 2e6 + 50e3 + 10e3 + 2);
}

TEST(TimeSlicingClosedForm, AServerThatWaitsForEachQueryYieldsTheDeviceAtEveryQueryEnd) {
  // A server (closed loop: it issues a query when the previous one has returned, after `think`
  // of host time) of three 500 us kernels beside a saturating trainer; T = 1 ms, C = 50 us,
  // P = 20 us. At a query's end its context has nothing pending (the next query is not issued
  // yet), so the device switches at once to the trainer (cost C: the trainer restores its
  // state), which keeps it for a whole slice: the next query, issued `think` later, waits for
  // that slice's end, (C + T - think), and the switch back (P to save the trainer + C - P: the
  // server has nothing to restore). It then runs T, is preempted (P + C), waits a slice T, comes
  // back (P + C) and finishes its last W - T. So the latency is the same whatever the neighbour
  // runs, and host time between queries only shortens the wait (Tally's 2.7x beside every
  // trainer); the queries' launch overheads L add a few us.
  const double t = 1e6, c = 50e3, p = 20e3, w = 1.5e6, l = launch_ns();
  const std::string sharing =
      "{mode: time-slicing, timeslice: 1ms, context_switch: 50us, preemption_latency: 20us, "
      "cache_refill: 0us}";
  const auto server = [](const std::string& think) {
    return "{arrivals: {process: closed, concurrency: 1, think: " + think +
           "}, request: {kernels: [{name: k, duration: 500us, repeat: 3}]}}";
  };
  const auto latency = [&](double think) {
    return (c + t - think) + c + t + (p + c) + t + (p + c) + (w - t) + 3 * l;
  };
  const RunResult none = run_yaml(ts_pair(sharing, kSaturating, server("0us"), "20s"));
  EXPECT_NEAR(tenant(none, "b").latency.mean, latency(0), 0.005 * latency(0));
  const RunResult host = run_yaml(ts_pair(sharing, kSaturating, server("200us"), "20s"));
  EXPECT_NEAR(tenant(host, "b").latency.mean, latency(200e3), 0.005 * latency(200e3));
  // Against the solo W + 3 L, beside any trainer: about 2.5x here.
  EXPECT_GT(tenant(none, "b").latency.mean, 2.4 * (w + 3 * l));
}

TEST(TimeSlicingClosedForm, KernelBoundaryPreemptionMakesTheProbeWaitForTheNeighboursKernel) {
  // Neighbour kernels of K = 20 ms back to back, short timeslice: the probe waits for the
  // residual of the running kernel, K/2 on average, then the switch: nothing is ever preempted,
  // so it costs C - P (P = the profile's 20 us): E[latency] = L + K/2 + (C - P) + D.
  const RunResult r = run_yaml(
      ts_pair("{mode: time-slicing, timeslice: 10us, context_switch: 50us, cache_refill: 0us, "
              "preemption: kernel-boundary}",
              "{arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: long, "
              "duration: 20ms}]}}",
              kProbe, "300s"));
  const TenantResult& probe = tenant(r, "b");
  ASSERT_GT(probe.completed, 5000);
  const double expected = launch_ns() + 10e6 + 30e3 + 10e3;
  EXPECT_NEAR(probe.latency.mean, expected, 0.03 * expected);
  EXPECT_GT(probe.latency.max, 19e6);  // some probes wait almost a whole kernel
}

TEST(TimeSlicingMemory, NoIsolationTheHogsAllocationMakesTheSiblingOOM) {
  // The trainer starts first (the inference service 1 ms later) and takes 60 of 80 GiB.
  const RunResult r = run_yaml(R"(
name: hog
duration: 2s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing}}
tenants:
  - name: trainer
    device: gpu0
    memory: 60GiB
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: step, duration: 50ms}]}
  - name: inference
    device: gpu0
    active: {from: 1ms}
    memory: 30GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request: {kernels: [{name: k, duration: 1ms}]}
)");
  EXPECT_EQ(tenant(r, "trainer").oom_events, 0);
  EXPECT_GT(tenant(r, "trainer").completed, 10);
  EXPECT_EQ(tenant(r, "inference").oom_events, 1);
  EXPECT_EQ(tenant(r, "inference").completed, 0);
  EXPECT_EQ(device(r, "gpu0").memory_peak_bytes, 60LL << 30);
}

TEST(TimeSlicingValidation, MultiGpuTenantAndTooManyReplicasAreRejected) {
  const std::string base = R"(
name: v
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing, replicas: 1}}
tenants:
  - {name: a, device: gpu0, GPUS workload: {arrivals: {process: poisson, rate: 1/s}, request: {kernels: [{name: k, duration: 1ms}]}}}
)";
  std::string multi = base;
  multi.replace(multi.find("GPUS"), 4, "gpus: 2,");
  EXPECT_THROW(run_yaml(multi), InputError);
  std::string two = base;
  two.replace(two.find("GPUS"), 4, "replicas: 2,");
  try {
    run_yaml(two);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("replicas"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------- MPS

std::string mps_pair(const std::string& kernel, const std::string& sharing_extra) {
  return R"(
name: mps
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps)" +
         sharing_extra +
         R"(}}
tenants:
  - {name: a, device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [)" +
         kernel + R"(]}}}
  - {name: b, device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [)" +
         kernel + R"(]}}}
)";
}

TEST(MpsClosedForm, TwoMemoryBoundClientsEachRunTwiceAsSlow) {
  // Grids of half the GPU sit side by side (66 + 66 SMs); HBM is shared fairly: half each.
  const RunResult r =
      run_yaml(mps_pair("{name: k, duration: 1ms, memory_bound: 1.0, sm_fraction: 0.5}", ""));
  EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + 2e6, 2.0);
  EXPECT_NEAR(tenant(r, "b").latency.p50, launch_ns() + 2e6, 2.0);
}

TEST(MpsClosedForm, TwoComputeClientsOnHalfTheSmsRunUnslowed) {
  // active_thread_percentage 50: each client may use 66 SMs; grids of sm_fraction 0.5 fit.
  const RunResult r = run_yaml(
      mps_pair("{name: k, duration: 1ms, sm_fraction: 0.5}", ", active_thread_percentage: 50"));
  EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + 1e6, 2.0);
  EXPECT_NEAR(tenant(r, "b").latency.p50, launch_ns() + 1e6, 2.0);
  // A full-width grid capped at 50% of the SMs runs at half speed even alone.
  const RunResult capped = run_yaml(
      mps_pair("{name: k, duration: 1ms, sm_fraction: 1.0}", ", active_thread_percentage: 50"));
  EXPECT_NEAR(tenant(capped, "a").latency.p50, launch_ns() + 2e6, 2.0);
}

TEST(MpsClosedForm, L2CapacityInterferenceIsBoundedAndConservesBandwidth) {
  // Client a re-reads a 50 MB working set (the H100's whole L2: alone every access hits, cost
  // rho = 3.35/9.8 of a miss); client b streams. Equal traffic weights give a 25 MB of L2:
  // hit 1/2, so phi_a = (1/2 + rho/2) / rho. HBM is shared max-min: phi_a r + r = 1, so both
  // run at 1 / (1 + phi_a) and a 1 ms kernel takes (1 + phi_a) ms.
  std::string yaml = mps_pair("{name: k, duration: 1ms, memory_bound: 1.0, sm_fraction: 0.5}", "");
  yaml.replace(yaml.find("sm_fraction: 0.5}"), 17, "sm_fraction: 0.5, working_set: 50MB}");
  const RunResult r = run_yaml(yaml);
  const double rho = 3.35 / 9.8;
  const double phi = (0.5 + 0.5 * rho) / rho;
  EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + (1 + phi) * 1e6, 3.0);
  EXPECT_NEAR(tenant(r, "b").latency.p50, launch_ns() + (1 + phi) * 1e6, 3.0);
  EXPECT_LT(phi, 1 / rho);  // bounded by the L2/HBM cost ratio
}

TEST(MpsLimits, ClientsBeyondTheServerLimitAreRejected) {
  std::string yaml = R"(
name: many
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps, max_clients: 3}}
tenants:
  - name: c
    replicas: 5
    device: gpu0
    workload: {arrivals: {process: poisson, rate: 10/s}, request: {kernels: [{name: k, duration: 100us}]}}
)";
  const RunResult r = run_yaml(yaml);
  int rejected = 0;
  for (const EventRecord& e : r.events_log) rejected += e.kind == EventKind::reject;
  EXPECT_EQ(rejected, 2);
  EXPECT_EQ(tenant(r, "c-3").completed, 0);
  EXPECT_GT(tenant(r, "c-3").failed, 0);
  EXPECT_EQ(tenant(r, "c-0").failed, 0);
}

TEST(MpsLimits, SixtyClientsFromCuda13_1FortyEightBefore) {
  auto scenario = [](const std::string& cuda) {
    return R"(
name: many
duration: 200ms
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps, cuda_version: )" +
           cuda + R"(}}
tenants:
  - name: c
    replicas: 60
    device: gpu0
    workload: {arrivals: {process: poisson, rate: 10/s}, request: {kernels: [{name: k, duration: 10us}]}}
)";
  };
  auto rejected = [](const RunResult& r) {
    int n = 0;
    for (const EventRecord& e : r.events_log) n += e.kind == EventKind::reject;
    return n;
  };
  EXPECT_EQ(rejected(run_yaml(scenario("13.0"))), 12);
  EXPECT_EQ(rejected(run_yaml(scenario("13.1"))), 0);
  EXPECT_THROW(run_yaml(scenario("thirteen")), InputError);
}

TEST(MpsMemory, PinnedMemoryLimitIsEnforcedPerClient) {
  const RunResult r = run_yaml(R"(
name: pinned
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps, pinned_memory_limit: 10GiB}}
tenants:
  - {name: fits, device: gpu0, memory: 8GiB, workload: {arrivals: {process: poisson, rate: 10/s}, request: {kernels: [{name: k, duration: 100us}]}}}
  - {name: over, device: gpu0, memory: 12GiB, workload: {arrivals: {process: poisson, rate: 10/s}, request: {kernels: [{name: k, duration: 100us}]}}}
)");
  EXPECT_EQ(tenant(r, "fits").oom_events, 0);
  EXPECT_EQ(tenant(r, "over").oom_events, 1);
}

// --------------------------------------------------------------------------- closed forms

TEST(MpsClosedForm, AQueuedKernelStartsAtItsFirstSmGrantNotItsSubmission) {
  // Under MPS, a's full-grid 10 ms kernel holds every SM from L; b's, submitted at 1 ms + L,
  // gets no SM until a's ends: its /kernels start_ns is a's finish_ns, and it ends 10 ms later.
  const RunResult r = run_yaml(R"(
name: grant
duration: 50ms
output: {kernels: true}
gpus: [{name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps}}]
tenants:
  - {name: a, device: gpu0, workload: {arrivals: {process: constant, rate: 10/s}, request: {kernels: [{name: k, duration: 10ms}]}}}
  - {name: b, device: gpu0, active: {from: 1ms}, workload: {arrivals: {process: constant, rate: 10/s}, request: {kernels: [{name: k, duration: 10ms}]}}}
)");
  ASSERT_EQ(r.kernels.size(), 2U);
  const KernelRecord& a = r.kernels[0].tenant == 0 ? r.kernels[0] : r.kernels[1];
  const KernelRecord& b = r.kernels[0].tenant == 0 ? r.kernels[1] : r.kernels[0];
  const auto l = static_cast<std::int64_t>(launch_ns());
  EXPECT_EQ(a.start_ns, l);
  EXPECT_EQ(a.finish_ns, l + 10'000'000);
  EXPECT_EQ(b.start_ns, a.finish_ns);  // not its submission at 1 ms + L
  EXPECT_EQ(b.finish_ns, a.finish_ns + 10'000'000);
}

TEST(TimeSlicingClosedForm, NoPreemptionLatencyWhenNothingIsResident) {
  // Context a's kernels last T - L/2, issued back to back (1000 per request: each next one is
  // in its launch overhead L when the previous ends, so a never runs out of work), so every
  // slice of a ends while its next kernel is still launching: nothing is
  // resident, nothing to save, the switch to b costs C (b was preempted) and not P + C. b's
  // 10 s kernel (longer than the run: it never ends while a has work) is resident at each of
  // its slice ends: P + (C - P) = C (a has nothing to
  // restore). With R = 0 every switch costs C, but possibly the very first (C - P, if a was
  // served first and b had nothing preempted yet).
  const auto l = static_cast<std::int64_t>(launch_ns());
  const std::int64_t t = 1024000, c = 50000, p = 20000;
  const std::string a =
      "{arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: "
      "k, duration: " +
      std::to_string(t - l / 2) + "ns, repeat: 1000}]}}";
  const RunResult r = run_yaml(ts_pair(
      "{mode: time-slicing, timeslice: 1024us, context_switch: 50us, preemption_latency: 20us, "
      "cache_refill: 0us, preemption: instruction}",
      a,
      "{arrivals: {process: closed, concurrency: 1}, request: {kernels: [{name: long, duration: "
      "10s}]}}",
      "2s"));
  const DeviceResult& d = device(r, "gpu0");
  ASSERT_GT(d.context_switches, 1000);
  EXPECT_LE(d.switch_overhead_ns, d.context_switches * c);
  EXPECT_GE(d.switch_overhead_ns, d.context_switches * c - p);
}

}  // namespace
}  // namespace gpumux
