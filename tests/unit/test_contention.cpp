// Contention physics (models/gpu/device.hpp), one story per file. This one: SM residency and
// co-residency, HBM bandwidth with the aggregate conserved, per-SM bandwidth, a MIG slice's L2.
// The others: test_contention_runs.cpp (discrete waves, planner bounds, launch cost, the
// invariants that tie the strategies together, max-min optimality), test_contention_device.cpp
// (device-level property tests, the lazy path against the eager oracle), test_contention_laws.cpp
// (overlapped roofline phases, a third law).
#include <gtest/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "models/config/profile_loader.hpp"
#include "models/gpu/device.hpp"
#include "models/plan/bounds.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/strategies/exclusive/strategy.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/strategies/time_slicing/strategy.hpp"
#include "sim/core/max_min.hpp"
#include "tests/support/run_yaml.hpp"
#include "tests/support/launch.hpp"
#include "tests/support/contention_scenarios.hpp"

namespace gpumux {
namespace {

using testing::closed_client;
using testing::device;
using testing::expect_same_numbers;
using testing::gpu;
using testing::mig_latency;
using testing::run_yaml;
using testing::tenant;
using testing::whole_gpu;

double completed_per_s(const RunResult& r) {
  double sum = 0;
  for (const TenantResult& t : r.tenants) sum += t.throughput_per_s;
  return sum;
}

// ------------------------------------------------------------------------------ SM residency

TEST(Residency, TwoFullGridKernelsAreNotDoubleBooked) {
  // Each kernel's blocks fill every SM for its whole run (f = 1), so a second one waits: the
  // pair completes no more kernels per second than one client alone (the old fluid model
  // charged (1 - m) f S SMs and ran the pair at 2.0x).
  const std::string kernel = "{name: k, duration: 1ms, sm_fraction: 1.0, memory_bound: 0.5}";
  const RunResult solo = run_yaml(gpu("{mode: mps}") + closed_client("a", kernel));
  const RunResult pair =
      run_yaml(gpu("{mode: mps}") + closed_client("a", kernel) + closed_client("b", kernel));
  EXPECT_LE(completed_per_s(pair), completed_per_s(solo) * 1.01);
  // The launch gaps of one stream are filled by the other, so the pair is not slower either.
  EXPECT_GE(completed_per_s(pair), completed_per_s(solo) * 0.99);
  // The same for two concurrent requests of one tenant on an exclusive GPU.
  const RunResult streams = run_yaml(
      gpu("{mode: exclusive}") +
      "  - {name: a, device: gpu0, workload: {arrivals: {process: closed, concurrency: 2}, "
      "request: {kernels: [" +
      kernel + "]}}}\n");
  EXPECT_LE(completed_per_s(streams), completed_per_s(solo) * 1.01);
  // No SM is held twice: occupancy never exceeds the device.
  EXPECT_LE(device(pair, "gpu0").sm_busy, 1.0 + 1e-9);
}

TEST(Residency, ComputeAndStreamingFullGridKernelsDoNotBothRunAtFullSpeed) {
  const RunResult r =
      run_yaml(gpu("{mode: mps}") + closed_client("compute", "{name: c, duration: 1ms}") +
               closed_client("stream", "{name: s, duration: 1ms, memory_bound: 1.0}"));
  // Each waits for the other's kernel: about 2 ms per request instead of 1 ms.
  EXPECT_NEAR(tenant(r, "compute").latency.mean, 2e6, 0.05e6);
  EXPECT_NEAR(tenant(r, "stream").latency.mean, 2e6, 0.05e6);
}

TEST(Residency, HalfGridKernelsShareTheGpuSideBySide) {
  const std::string kernel = "{name: k, duration: 1ms, sm_fraction: 0.5}";
  const RunResult pair =
      run_yaml(gpu("{mode: mps}") + closed_client("a", kernel) + closed_client("b", kernel));
  EXPECT_NEAR(tenant(pair, "a").latency.p50, launch_ns() + 1e6, 2.0);
  EXPECT_NEAR(tenant(pair, "b").latency.p50, launch_ns() + 1e6, 2.0);
}

TEST(Residency, ShortKernelWaitsForTheResidualOfAFullGridNeighbour) {
  // Training runs 10 ms full-grid kernels back to back; an inference kernel arriving at a random
  // phase finds every SM held and gets SMs only when the running training kernel ends: on
  // average the renewal residual D^2 / 2(D + L) (D = 10 ms, SMs free during the launch gap L),
  // then its own 100 us. Arrivals 1/7 s apart never queue behind each other, and their phases
  // spread evenly over the training period. The fluid model without residency gave 1.14x the
  // solo latency.
  std::string yaml = gpu("{mode: mps}") +
                     closed_client("train", "{name: step, duration: 10ms, memory_bound: 0.3}") +
                     "  - {name: infer, device: gpu0, workload: {arrivals: {process: constant, "
                     "rate: 7/s}, request: {kernels: [{name: k, duration: 100us, sm_fraction: "
                     "0.2}]}}}\n";
  yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
  const RunResult r = run_yaml(yaml);
  const double d = 10e6, l = launch_ns();
  const double expected = l + d * d / (2 * (d + l)) + 100e3;
  EXPECT_NEAR(tenant(r, "infer").latency.mean, expected, 0.03 * expected);
  EXPECT_GT(tenant(r, "infer").slowdown_mean, 20.0);
}

TEST(Residency, FreedSmsGoToTheMoreUrgentStreamFirst) {
  // Both inference tenants arrive together while training holds the GPU; when its kernel ends,
  // the freed SMs go to the more urgent stream (CUDA: lower priority number), which runs its
  // full-grid 100 us kernel first. Without priorities, launch order decides.
  auto scenario = [](int urgent_priority) {
    return gpu("{mode: mps}") + closed_client("train", "{name: step, duration: 10ms}") +
           "  - {name: late, device: gpu0, workload: {arrivals: {process: constant, rate: "
           "10/s}, request: {kernels: [{name: k, duration: 100us}]}}}\n"
           "  - {name: urgent, device: gpu0, workload: {priority: " +
           std::to_string(urgent_priority) +
           ", arrivals: {process: constant, rate: 10/s}, request: {kernels: [{name: k, "
           "duration: 100us}]}}}\n";
  };
  const RunResult with = run_yaml(scenario(-1));
  EXPECT_NEAR(tenant(with, "late").latency.mean - tenant(with, "urgent").latency.mean, 100e3, 5e3);
  const RunResult without = run_yaml(scenario(0));
  EXPECT_NEAR(tenant(without, "urgent").latency.mean - tenant(without, "late").latency.mean, 100e3,
              5e3);
}

TEST(Residency, AnUrgentKernelWaitsAtMostOneRoundBehindAMultiWaveKernel) {
  // Law 1b. Training runs 10 ms full-grid kernels of 100 waves (100 us rounds) back to back; an
  // urgent stream (priority -5) arrives at a random phase. (MPS clients in launch order: at equal
  // priority the newcomer waits as a second stream of one process would.) Its blocks are dispatched
  // first when the training kernel's resident round retires, so it waits at most one round, 50 us
  // on average (the phase is uniform), then runs its own 100 us full-grid kernel: mean about L + 50
  // us + 100 us. At equal priority it waits for the training kernel's last round, the renewal
  // residual D^2 / 2(D + L) as in ShortKernelWaitsForTheResidualOfAFullGridNeighbour; the fluid law
  // (no block retirement) keeps that wait whatever the priority.
  const auto scenario = [](int priority, const std::string& law) {
    std::string yaml =
        gpu("{mode: mps, client_order: launch_order}", law) +
        closed_client("train", "{name: step, duration: 10ms, waves: 100}") +
        "  - {name: infer, device: gpu0, workload: {priority: " + std::to_string(priority) +
        ", arrivals: {process: constant, rate: 7/s}, request: {kernels: [{name: "
        "k, duration: 100us}]}}}\n";
    yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
    return run_yaml(yaml);
  };
  const double d = 10e6, l = launch_ns();
  const RunResult urgent = scenario(-5, "");
  EXPECT_LE(tenant(urgent, "infer").latency.max, l + 100e3 + 100e3 + 1e3);
  EXPECT_NEAR(tenant(urgent, "infer").latency.mean, l + 50e3 + 100e3, 12e3);
  // (The constant arrivals sample the training phase evenly but not exactly uniformly, and each
  // full-grid inference kernel shifts the training period by 100 us: within 8 %.)
  const double residual = l + d * d / (2 * (d + l)) + 100e3;
  const RunResult equal = scenario(0, "");
  EXPECT_NEAR(tenant(equal, "infer").latency.mean, residual, 0.08 * residual);
  EXPECT_GT(tenant(equal, "infer").latency.mean, 25 * tenant(urgent, "infer").latency.mean);
  // Without block retirement nothing frees SMs before the training kernel ends, so priority
  // changes nothing here: the fluid law's urgent run is the equal-priority run, exactly.
  const RunResult fluid = scenario(-5, "fluid");
  EXPECT_EQ(tenant(fluid, "infer").latency.mean, tenant(equal, "infer").latency.mean);
  // The training tenant loses at most the urgent work: 7 x 100 us per second of its own.
  EXPECT_GE(tenant(urgent, "train").throughput_per_s,
            0.99 * tenant(equal, "train").throughput_per_s);
}

// ------------------------------------------------------ staggered retirement (law "staggered")

// Law 1b with a spread s = 1 (contention_law.hpp, "Staggered retirement"): a round's blocks end
// uniformly over the round. A kernel wanting the share q of a holder's SMs gets them at round
// progress q in the holder's last round (SMs its blocks freed before stay free), and at p + 2q
// (p: progress when the wait began, capped at the round's end) beside an interleaved peer client
// that still dispatches (the freed SMs alternate between the two clients' pending blocks).

TEST(StaggeredRetirement, ANarrowKernelWaitsForItsShareOfALastRoundNotForItsEnd) {
  // Training runs 10 ms one-wave full-grid kernels back to back (every round is a last round);
  // an inference kernel of 20 % of the SMs (q = 0.2) arrives at a uniform phase. Lock-step
  // (residency) it waits for the kernel's end, the residual D^2 / 2(D + L); staggered, only when
  // it arrives before progress q, for (q - p) D: on average D^2 q^2 / 2(D + L), then its own
  // 100 us on its 20 %. The training kernel keeps its time (its last blocks end at the round's
  // end), so its throughput drops only by what its next kernel loses on the 20 % still held.
  const auto scenario = [](const std::string& law) {
    std::string yaml =
        gpu("{mode: mps, client_order: launch_order}", law) +
        closed_client("train", "{name: step, duration: 10ms, memory_bound: 0.3}") +
        "  - {name: infer, device: gpu0, workload: {arrivals: {process: constant, rate: 7/s}, "
        "request: {kernels: [{name: k, duration: 100us, sm_fraction: 0.2}]}}}\n";
    yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
    return run_yaml(yaml);
  };
  const double d = 10e6, l = launch_ns(), q = 0.2;
  const RunResult lockstep = scenario("residency");
  const RunResult staggered = scenario("staggered");
  const double lockstep_mean = l + d * d / (2 * (d + l)) + 100e3;
  const double staggered_mean = l + d * d * q * q / (2 * (d + l)) + 100e3;
  EXPECT_NEAR(tenant(lockstep, "infer").latency.mean, lockstep_mean, 0.08 * lockstep_mean);
  // (the same sampling of the phase as the lock-step run: within 8 % of the wait, plus 1 us)
  EXPECT_NEAR(tenant(staggered, "infer").latency.mean, staggered_mean,
              0.08 * (staggered_mean - l - 100e3) + 1e3);
  // Never longer than lock-step: at most q D, where lock-step waits up to D.
  EXPECT_LE(tenant(staggered, "infer").latency.max, l + q * d + 100e3 + 1e3);
  EXPECT_LE(tenant(staggered, "infer").latency.max, tenant(lockstep, "infer").latency.max);
  EXPECT_GE(tenant(staggered, "train").throughput_per_s,
            0.99 * tenant(lockstep, "train").throughput_per_s);
}

TEST(StaggeredRetirement, BesideAnInterleavedPeerTheWaitIsTwiceItsShareOfARound) {
  // Training runs 10 ms full-grid kernels of 100 waves (100 us rounds); interleaved MPS clients.
  // Lock-step, the inference kernel (q = 0.2 of the SMs) waits for the resident round's end,
  // 50 us on average; staggered, min(2 q, 1 - p) of a round: E = 2q - (2q)^2 / 2 = 0.32 round.
  const auto scenario = [](const std::string& law) {
    std::string yaml =
        gpu("{mode: mps}", law) +
        closed_client("train", "{name: step, duration: 10ms, waves: 100}") +
        "  - {name: infer, device: gpu0, workload: {arrivals: {process: constant, rate: 7/s}, "
        "request: {kernels: [{name: k, duration: 100us, sm_fraction: 0.2}]}}}\n";
    yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
    return run_yaml(yaml);
  };
  const double round = 100e3, l = launch_ns(), q = 0.2;
  const RunResult lockstep = scenario("residency");
  const RunResult staggered = scenario("staggered");
  const double lockstep_wait = tenant(lockstep, "infer").latency.mean - l - 100e3;
  const double staggered_wait = tenant(staggered, "infer").latency.mean - l - 100e3;
  EXPECT_NEAR(lockstep_wait, 0.5 * round, 0.1 * 0.5 * round);
  EXPECT_NEAR(staggered_wait, (2 * q - 2 * q * q) * round, 0.1 * (2 * q - 2 * q * q) * round);
  EXPECT_LE(tenant(staggered, "infer").latency.max, tenant(lockstep, "infer").latency.max);
}

TEST(StaggeredRetirement, ALoneClientAndOneClientMpsAreBitIdenticalToLockStep) {
  // The spread moves only when SMs are handed to a waiting kernel: with nobody waiting (one
  // client, whatever its kernels: multi-wave, one-wave, narrow, co-residency footprints) every
  // number is the residency law's, and one MPS client is the exclusive GPU.
  const std::string client = closed_client(
      "a",
      "{name: k1, duration: 3ms, waves: 7, memory_bound: 0.4}, {name: k2, duration: 40us, "
      "sm_fraction: 0.3}, {name: k3, duration: 200us, memory_bound: 0.8, blocks: 500, block: "
      "{threads: 256, registers: 64}}");
  const RunResult lockstep = run_yaml(gpu("{mode: exclusive}") + client);
  expect_same_numbers(lockstep, run_yaml(gpu("{mode: exclusive}", "staggered") + client));
  expect_same_numbers(lockstep, run_yaml(gpu("{mode: mps}", "staggered") + client));
  expect_same_numbers(
      lockstep, run_yaml(gpu("{mode: mps, active_thread_percentage: 100}", "staggered") + client));
}

// ------------------------------------------------------------------------------ co-residency

// A client whose request is one kernel of `blocks` blocks with the per-block footprint `block`.
std::string footprint_client(const std::string& name, const std::string& duration, double m,
                             int blocks, const std::string& block, const std::string& extra = "") {
  return closed_client(name,
                       fmt::format("{{name: k, duration: {}, memory_bound: {}, blocks: {}, "
                                   "block: {}}}",
                                   duration, m, blocks, block),
                       extra);
}

TEST(CoResidency, TheFitIsTheOccupancyCalculatorsAndCountsWhatIsAlreadyResident) {
  const SmLimits h100 = load_device_profile("h100-sxm-80gb").sm_limits;
  // 512 threads, 32 registers: 4 per SM by threads (2048), 4 by registers (64K / 16K).
  const BlockFootprint small{512, 32, 0};
  EXPECT_EQ(contention::blocks_fitting(h100, {}, small), 4);
  // Beside one such block: 3; beside a block holding 100 KiB of shared memory (plus the 1 KiB
  // reserve) the 228 KiB leave room for a second one only.
  EXPECT_EQ(contention::blocks_fitting(h100, contention::block_use(small, h100, 1), small), 3);
  const BlockFootprint big{256, 0, 100 * 1024};
  EXPECT_EQ(contention::blocks_fitting(h100, {}, big), 2);
  EXPECT_EQ(contention::blocks_fitting(h100, contention::block_use(big, h100, 2), big), 0);
  EXPECT_EQ(contention::blocks_fitting(h100, contention::block_use(big, h100, 2), small), 3);
  // Registers are allocated per warp in units of 256: 33 per thread take 40 x 32 per warp.
  EXPECT_EQ(contention::blocks_fitting(h100, {}, BlockFootprint{1024, 33, 0}), 1);
  // Issue slots: in proportion to warps, each bounded by its demand.
  const contention::IssueShares both = contention::issue_shares(16, 1.0, 32, 1.0);
  EXPECT_DOUBLE_EQ(both.host, 1.0 / 3);
  EXPECT_DOUBLE_EQ(both.guest, 2.0 / 3);
  const contention::IssueShares light = contention::issue_shares(16, 1.0, 32, 0.1);
  EXPECT_DOUBLE_EQ(light.host, 0.9);
  EXPECT_DOUBLE_EQ(light.guest, 0.1);
}

TEST(CoResidency, BlocksPerSmFollowFromTheFootprintOnTheTenantsGpu) {
  // `block:` without `blocks_per_sm:`: the occupancy calculator on the profile's sm_limits
  // (H100: 228 KiB of shared memory, so two 100 KiB blocks); a block that fits no SM is an
  // error naming the key.
  const std::string client =
      "{name: k, duration: 1ms, blocks: 264, waves: 1, block: {threads: "
      "256, shared_memory: ";
  const Scenario s =
      resolve_scenario(load_scenario_text(
                           gpu("{mode: mps}") + closed_client("a", client + "100KiB}}"), "fp.yaml"))
          .scenario;
  EXPECT_EQ(s.tenants[0].workload.kernels[0].blocks_per_sm, 2);
  try {
    (void)resolve_scenario(load_scenario_text(
        gpu("{mode: mps}") + closed_client("a", client + "300KiB}}"), "fp.yaml"));
    ADD_FAILURE() << "a 300 KiB block fitted an SM";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit an SM of h100-sxm-80gb"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("fp.yaml:"), std::string::npos) << e.what();
  }
}

TEST(CoResidency, AComputeAndAStreamingKernelThatFitOneSmRunSideBySideAtFullSpeed) {
  // Each kernel puts one 512-thread block on every SM (132 blocks on 132 SMs), so each SM keeps
  // room for three more: the second kernel's blocks join the first's on the same SMs (law 1c).
  // The compute kernel draws every issue slot, the streaming one none, so neither slows: each
  // request takes L + 1 ms. Without footprints (whole SMs) they alternate: about 2 ms each.
  const std::string block = "{threads: 512, registers: 32}";
  const RunResult shared =
      run_yaml(gpu("{mode: mps}") + footprint_client("compute", "1ms", 0.0, 132, block) +
               footprint_client("stream", "1ms", 1.0, 132, block));
  EXPECT_NEAR(tenant(shared, "compute").latency.p50, launch_ns() + 1e6, 1e3);
  EXPECT_NEAR(tenant(shared, "stream").latency.p50, launch_ns() + 1e6, 1e3);
  const RunResult whole =
      run_yaml(gpu("{mode: mps}") +
               closed_client("compute", "{name: k, duration: 1ms, memory_bound: 0, blocks: 132}") +
               closed_client("stream", "{name: k, duration: 1ms, memory_bound: 1, blocks: 132}"));
  EXPECT_NEAR(tenant(whole, "compute").latency.mean, 2e6, 0.05e6);
  // The fluid law keeps whole-SM residency.
  const RunResult fluid =
      run_yaml(gpu("{mode: mps}", "fluid") + footprint_client("compute", "1ms", 0.0, 132, block) +
               footprint_client("stream", "1ms", 1.0, 132, block));
  EXPECT_NEAR(tenant(fluid, "compute").latency.mean, 2e6, 0.05e6);
  // SM_ACTIVE counts an SM once, whatever it hosts.
  EXPECT_LE(device(shared, "gpu0").sm_busy, 1.0 + 1e-9);
}

TEST(CoResidency, TwoComputeKernelsSharingSmsCreateNoCompute) {
  // Both kernels compute all the time (m = 0): co-resident, they split each SM's issue slots by
  // resident warps (16 against 32 here), so the pair completes no more kernels per second than
  // one client alone (within the launch gaps the other fills), and the wider one gets more.
  const RunResult solo =
      run_yaml(gpu("{mode: mps}") + footprint_client("a", "1ms", 0.0, 132, "{threads: 512}"));
  const RunResult pair =
      run_yaml(gpu("{mode: mps}") + footprint_client("a", "1ms", 0.0, 132, "{threads: 512}") +
               footprint_client("b", "1ms", 0.0, 132, "{threads: 1024}"));
  EXPECT_LE(completed_per_s(pair), completed_per_s(solo) * 1.01);
  EXPECT_GE(completed_per_s(pair), completed_per_s(solo) * 0.99);
  EXPECT_GT(tenant(pair, "b").throughput_per_s, 1.2 * tenant(pair, "a").throughput_per_s);
}

TEST(CoResidency, TwoStreamingKernelsSharingSmsShareTheirPorts) {
  // A filler holds 124 of the H100's 132 SMs (no footprint: whole SMs), so two streaming
  // kernels of 8 one-per-SM blocks meet on the same 8 SMs, one the other's guest (law 1c). Each
  // alone moves 8 SMs' worth of the per-SM ceiling s (8 s is 18 % of the HBM bandwidth: the port
  // binds, not HBM). Every byte passes through its SM's port, so together they move no more:
  // the pair completes what one client alone completes, up to the launch gaps one fills while
  // the other is between kernels ((d + L) / d). Counting each its own ports gave 2x.
  const std::string k =
      "{name: k, duration: 100us, memory_bound: 1.0, sm_fraction: 0.06060606060606061, "
      "blocks: 8, block: {threads: 512, registers: 32}}";
  const std::string filler =
      closed_client("filler", "{name: f, duration: 10s, sm_fraction: 0.9393939393939394}");
  const RunResult solo = run_yaml(gpu("{mode: mps}") + closed_client("a", k) + filler);
  const RunResult pair =
      run_yaml(gpu("{mode: mps}") + closed_client("a", k) + closed_client("b", k) + filler);
  const double d = 100e3;
  EXPECT_GT(completed_per_s(solo), 0.9e9 / (d + launch_ns()));
  EXPECT_LE(completed_per_s(pair), completed_per_s(solo) * (d + launch_ns()) / d * 1.001);
  EXPECT_GE(completed_per_s(pair), completed_per_s(solo) * 0.99);
  EXPECT_NEAR(tenant(pair, "a").throughput_per_s, tenant(pair, "b").throughput_per_s,
              0.01 * tenant(pair, "a").throughput_per_s);
  EXPECT_LE(device(pair, "gpu0").dram_busy,
            device(solo, "gpu0").dram_busy * (d + launch_ns()) / d * 1.001);
}

TEST(CoResidency, KernelsThatDoNotFitBesideEachOtherSerialiseAsWholeSms) {
  // 1024-thread blocks, two per SM (264 blocks): each kernel fills every SM's threads, so there
  // is no leftover; the footprint changes nothing against whole-SM residency.
  const auto run = [](const std::string& block) {
    const std::string extra = block.empty() ? "" : ", block: " + block;
    return run_yaml(gpu("{mode: mps}") +
                    closed_client("a",
                                  "{name: k, duration: 1ms, memory_bound: 0.5, blocks: 264, "
                                  "blocks_per_sm: 2" +
                                      extra + "}") +
                    closed_client("b",
                                  "{name: k, duration: 1ms, memory_bound: 0.2, blocks: 264, "
                                  "blocks_per_sm: 2" +
                                      extra + "}"));
  };
  const RunResult with = run("{threads: 1024}");
  const RunResult without = run("");
  EXPECT_EQ(tenant(with, "a").latency.mean, tenant(without, "a").latency.mean);
  EXPECT_EQ(tenant(with, "b").latency.mean, tenant(without, "b").latency.mean);
  EXPECT_NEAR(tenant(with, "a").latency.mean, 2e6, 0.05e6);
}

TEST(CoResidency, LaunchOrderHoldsANewcomerUntilTheHostsLastRoundInterleavedClientsDoNot) {
  // Training runs 10 ms kernels of 10 waves whose blocks fill each SM's shared memory (2 x 101
  // KiB of 228) but only a quarter of its threads; an inference kernel (one 256-thread block per
  // SM, streaming) fits beside them. In launch order (the streams of one process, or MPS clients
  // under client_order: launch_order) its blocks are dispatched only after every training block
  // is: it waits for the training kernel's last round (the last 1 ms), on average
  // (0.9 D)^2 / 2(D + L) over a uniform phase, then runs beside it. With interleaved MPS clients
  // (the default) it joins at once: latency L + 100 us.
  const auto scenario = [](const std::string& order) {
    std::string yaml =
        gpu("{mode: mps" + order + "}") +
        closed_client("train",
                      "{name: k, duration: 10ms, waves: 10, blocks: 2640, block: "
                      "{threads: 256, shared_memory: 100KiB}}") +
        "  - {name: infer, device: gpu0, workload: {arrivals: {process: constant, rate: 7/s}, "
        "request: {kernels: [{name: k, duration: 100us, memory_bound: 1, blocks: 132, block: "
        "{threads: 256}}]}}}\n";
    yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
    return run_yaml(yaml);
  };
  const double d = 10e6, l = launch_ns();
  const RunResult fifo = scenario(", client_order: launch_order");
  const double expected = l + 0.81 * d * d / (2 * (d + l)) + 100e3;
  EXPECT_NEAR(tenant(fifo, "infer").latency.mean, expected, 0.08 * expected);
  const RunResult interleaved = scenario("");
  EXPECT_NEAR(tenant(interleaved, "infer").latency.mean, l + 100e3, 2e3);
  EXPECT_LE(tenant(interleaved, "infer").latency.max, l + 100e3 + 2e3);
  // The training kernels lose nothing: the streaming guest draws no issue slots.
  EXPECT_GE(tenant(interleaved, "train").throughput_per_s,
            0.99 * tenant(fifo, "train").throughput_per_s);
}

TEST(CoResidency, InterleavedClientsSplitTheSmsOfTwoWideMultiWaveKernels) {
  // Two clients' full-width 100-wave kernels (no footprint). In launch order the second waits
  // for the first's last round; interleaved, at the first's next round end it takes half the SMs
  // (an equal split), so both progress side by side: the pair's throughput is unchanged.
  const auto scenario = [](const std::string& order) {
    return run_yaml(gpu("{mode: mps" + order + "}") +
                    closed_client("a", "{name: k, duration: 10ms, waves: 100}") +
                    closed_client("b", "{name: k, duration: 10ms, waves: 100}"));
  };
  const RunResult fifo = scenario(", client_order: launch_order");
  const RunResult interleaved = scenario("");
  EXPECT_NEAR(completed_per_s(interleaved), completed_per_s(fifo), 0.02 * completed_per_s(fifo));
  // Each kernel now runs on half the GPU for twice as long: about 20 ms per request.
  EXPECT_NEAR(tenant(interleaved, "a").latency.p50, 20e6, 0.5e6);
  EXPECT_NEAR(tenant(fifo, "a").latency.p50, 20e6, 0.5e6);  // (10 ms wait + 10 ms run)
}

// ------------------------------------------------------------------------------ HBM bandwidth

TEST(Bandwidth, AggregateHbmThroughputIsConservedFor1To48StreamingClients) {
  // n streaming clients (m = 1) under MPS move exactly the HBM bandwidth one moves alone
  // (the old interference factor left 14 % at n = 16). Grids of 1/n of the GPU run side by
  // side, so this is the bandwidth law, not residency, at work. HBM moved per solo-ns of a
  // kernel of width f: u(f) (the per-SM ceiling's draw; 1 under the fluid law).
  for (const std::string law : {"residency", "fluid"}) {
    const DeviceGeometry g = whole_gpu(law);
    const std::string one_kernel = "{name: s, duration: 200us, memory_bound: 1.0, sm_fraction: ";
    const RunResult solo =
        run_yaml(gpu("{mode: mps}", law) + closed_client("c0", one_kernel + "1.0}"));
    const double solo_hbm = completed_per_s(solo) * 200e3;  // HBM-ns moved per second (u = 1)
    for (int n : {2, 4, 8, 16, 48}) {
      std::string yaml = gpu("{mode: mps}", law);
      const std::string kernel = one_kernel + std::to_string(1.0 / n) + "}";
      for (int c = 0; c < n; ++c) {
        std::string name = "c";
        name += std::to_string(c);
        yaml += closed_client(name, kernel);
      }
      const RunResult r = run_yaml(yaml);
      const double draw = contention::hbm_draw(1.0 / n, g);
      const double hbm = completed_per_s(r) * 200e3 * draw;
      if (n * draw >= 1.0) {  // together they can saturate HBM
        EXPECT_GE(hbm, 0.98 * solo_hbm) << law << ", " << n << " clients";
      } else {  // each at its own per-SM ceiling
        EXPECT_NEAR(hbm, n * draw * solo_hbm, 0.02 * solo_hbm) << law << ", " << n;
      }
      // Never more than the HBM can move (1e9 HBM-ns per second), up to the requests that
      // complete in the drain after `duration` (n x 200 us over 2 s).
      EXPECT_LE(hbm, 1e9 * (1 + n * 200e-6 / 2)) << law << ", " << n << " clients";
    }
  }
}

TEST(Bandwidth, AStreamingNeighbourOnlyCostsACacheSensitiveKernelItsL2Share) {
  // A kernel without a working set is not slowed beyond fair bandwidth sharing, however little
  // its neighbour touches memory (the old law added a step of +41 % at m = 0 -> 0.01).
  const std::string victim = "{name: v, duration: 1ms, memory_bound: 1.0, sm_fraction: 0.5}";
  const RunResult r = run_yaml(
      gpu("{mode: mps}") + closed_client("victim", victim) +
      closed_client("light", "{name: l, duration: 1ms, memory_bound: 0.01, sm_fraction: 0.5}"));
  // Bandwidth, max-min with equal weights: r_v + 0.01 r_l <= 1, both rise together to 1/1.01.
  EXPECT_NEAR(tenant(r, "victim").latency.p50, launch_ns() + 1.01e6, 3.0);
}

// ------------------------------------------------------------------------------ per-SM bandwidth
// Issue 23, probe 1: a kernel's HBM throughput is at most the SMs it holds x one SM's bandwidth.

TEST(PerSmBandwidth, AStreamingKernelOnOnePercentOfTheThreadsIsFarSlowerThanSolo) {
  // MPS active_thread_percentage 1: 1.32 of 132 SMs. A streaming kernel (m = 1, f = 1) moves
  // 1.32 s of the HBM bandwidth where alone it moved u = min(1, 132 s) = 1, so its time is
  // D / (1.32 s) (34x at s = 74 GB/s / 3.35 TB/s); the fluid law lets it pull the whole HBM
  // through 1.32 SMs (1.0x).
  const std::string kernel = "{name: s, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0}";
  for (const std::string law : {"residency", "fluid"}) {
    const DeviceGeometry g = whole_gpu(law);
    const double held = 0.01 * g.sms;
    const double expected = law == "fluid" ? 100e3 : 100e3 / (held * g.sm_bandwidth);
    const RunResult r =
        run_yaml(gpu("{mode: mps, active_thread_percentage: 1}", law) + closed_client("a", kernel));
    EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + expected, 2.0) << law;
    if (law == "residency") {
      EXPECT_GT(expected, 20 * 100e3);
    }
  }
}

TEST(PerSmBandwidth, ANarrowKernelsDramBusyIsItsSmsShareOfTheBandwidth) {
  // A streaming kernel on 5 % of the SMs alone, back to back (launch gaps aside): its HBM use is
  // u = min(1, 0.05 x 132 x s) of the bandwidth (0.146 at s = 0.0222), not 1.
  const std::string kernel = "{name: s, duration: 10ms, memory_bound: 1.0, sm_fraction: 0.05}";
  for (const std::string law : {"residency", "fluid"}) {
    const DeviceGeometry g = whole_gpu(law);
    const RunResult r = run_yaml(gpu("{mode: exclusive}", law) + closed_client("a", kernel));
    const double busy_share = 10e6 / (10e6 + launch_ns());  // time a kernel runs
    EXPECT_NEAR(device(r, "gpu0").dram_busy, contention::hbm_draw(0.05, g) * busy_share, 2e-3)
        << law;
  }
  EXPECT_LT(contention::hbm_draw(0.05, whole_gpu("residency")), 0.2);
}

TEST(PerSmBandwidth, MpsPartitionsOfTwelvePercentSlowAStreamingKernelByOneOverTheirCeiling) {
  // replicas: 8 -> 12 % of the threads each: 15.84 SMs x s of the bandwidth per client alone.
  const std::string kernel = "{name: s, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0}";
  const DeviceGeometry g = whole_gpu("residency");
  const double held = 0.12 * g.sms;
  const RunResult r =
      run_yaml(gpu("{mode: mps, active_thread_percentage: 12}") + closed_client("a", kernel));
  EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + 100e3 / (held * g.sm_bandwidth), 2.0);
  EXPECT_GT(100e3 / (held * g.sm_bandwidth), 2.0 * 100e3);
}

// ------------------------------------------------------------------------------ a MIG slice's L2
// Issue 23, probe 3: solo durations are defined on the whole GPU's L2 (50 MB on H100); a lone
// kernel on a 1g.10gb keeps 1/8 of it, so a working set above 6.25 MB misses more.

TEST(MigL2, ALoneKernelWithAWorkingSetAboveTheSlicesL2PaysTheMisses) {
  const DeviceProfile& p = load_device_profile("h100-sxm-80gb");
  for (const std::string law : {"residency", "fluid"}) {
    DeviceGeometry slice;
    slice.gpu_sms = p.sms;
    slice.sms = 16;
    slice.bandwidth = 1.0 / 8;
    set_law_terms(slice, p, 1.0 / 8, *find_contention_law(law));
    for (const double mb : {10.0, 40.0}) {
      const std::string kernel =
          "{name: k, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0, "
          "working_set: " +
          std::to_string(static_cast<int>(mb)) + "MB}";
      const RunResult r = run_yaml(
          (law == "residency" ? std::string() : "contention_law: " + law + "\n") +
          "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, mig: "
          "[1g.10gb]}\ntenants:\n  - {name: a, device: gpu0/0, workload: {arrivals: {process: "
          "closed, concurrency: 1}, request: {kernels: [" +
          kernel + "]}}}\n");
      // phi = c(L_slice) / c(L_gpu), c(L) = (1 - hit) + rho hit, hit = min(1, L / WS).
      const double rho = slice.l2_cost_ratio;
      const double ws = mb * 1e6;
      const double phi = law == "fluid"
                             ? 1.0
                             : contention::l2_cost(static_cast<double>(p.l2_cache) / 8, ws, rho) /
                                   contention::l2_cost(static_cast<double>(p.l2_cache), ws, rho);
      const double slowdown = 8.0 * phi;  // memory phase at 1/8 of the bandwidth, phi its misses
      EXPECT_NEAR(tenant(r, "a").latency.p50, launch_ns() + 100e3 * slowdown, 2.0)
          << law << ", " << mb << " MB";
      if (law == "residency") {
        EXPECT_GT(slowdown, mb < 20 ? 13.0 : 20.0) << mb;
      }
    }
  }
}

TEST(MigL2, AWorkingSetThatFitsTheSliceOrTheWholeGpuIsUnchanged) {
  // 4 MB fits a 1g.10gb's 6.25 MB; on the whole GPU the slice is the reference: phi = 1.
  const std::string kernel =
      "{name: k, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0, "
      "working_set: 4MB}";
  const RunResult slice = run_yaml(
      "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, mig: [1g.10gb]}\n"
      "tenants:\n  - {name: a, device: gpu0/0, workload: {arrivals: {process: closed, "
      "concurrency: 1}, request: {kernels: [" +
      kernel + "]}}}\n");
  EXPECT_NEAR(tenant(slice, "a").latency.p50, launch_ns() + 8 * 100e3, 2.0);
  const std::string big =
      "{name: k, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0, "
      "working_set: 40MB}";
  const RunResult whole = run_yaml(gpu("{mode: exclusive}") + closed_client("a", big));
  EXPECT_NEAR(tenant(whole, "a").latency.p50, launch_ns() + 100e3, 2.0);
}

}  // namespace
}  // namespace gpumux
