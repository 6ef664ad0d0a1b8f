// Contention physics (models/gpu/device.hpp): SM residency, HBM bandwidth with the aggregate
// conserved, per-kernel launch cost, and the invariants that tie the strategies together
// (one MPS client == exclusive, one time-sliced context == exclusive, max-min optimality).
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

namespace gpumux {
namespace {

using testing::device;
using testing::run_yaml;
using testing::tenant;

std::string closed_client(const std::string& name, const std::string& kernel,
                          const std::string& extra = "") {
  return "  - {name: " + name +
         ", device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, " + extra +
         "request: {kernels: [" + kernel + "]}}}\n";
}

// `law`: the scenario's contention_law ("" = the default).
std::string gpu(const std::string& sharing, const std::string& law = "") {
  return (law.empty() ? "" : "contention_law: " + law + "\n") +
         "name: t\nduration: 2s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, sharing: " +
         sharing + "}\ntenants:\n";
}

// The whole GPU as the contention law `law` sees it.
DeviceGeometry whole_gpu(const std::string& law, const std::string& model = "h100-sxm-80gb") {
  const DeviceProfile& p = load_device_profile(model);
  DeviceGeometry g;
  g.gpu_sms = g.sms = p.sms;
  set_law_terms(g, p, 1.0, *find_contention_law(law));
  return g;
}

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

// ------------------------------------------------------------------------------ discrete waves
// Issue 23, probe 4: a kernel whose grid is known takes whole waves, ceil(G / h) on h SMs.

double mig_latency(const std::string& profile, const std::string& kernel, const std::string& law) {
  const RunResult r = run_yaml(
      (law.empty() ? std::string() : "contention_law: " + law + "\n") +
      "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, mig: [" + profile +
      "]}\ntenants:\n  - {name: a, device: gpu0/0, workload: {arrivals: {process: closed, "
      "concurrency: 1}, request: {kernels: [" +
      kernel + "]}}}\n");
  return tenant(r, "a").latency.p50 - launch_ns();
}

TEST(DiscreteWaves, AOneWaveFullGridOnA60SmSliceTakesThreeWaves) {
  // 132 blocks, one per SM: one wave alone; ceil(132 / 60) = 3 on a 3g.40gb and
  // ceil(132 / 64) = 3 on a 4g.40gb (the fluid law: 132/60 = 2.2x and 132/64 = 2.06x).
  const std::string kernel =
      "{name: k, duration: 100us, sm_fraction: 1.0, memory_bound: 0.0, blocks: 132}";
  EXPECT_NEAR(mig_latency("3g.40gb", kernel, ""), 3 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("4g.40gb", kernel, ""), 3 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("3g.40gb", kernel, "fluid"), 132.0 / 60 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("4g.40gb", kernel, "fluid"), 132.0 / 64 * 100e3, 2.0);
  // Without a grid the fluid sigma stays (docs/strategies.md: where no grid is known).
  EXPECT_NEAR(mig_latency("3g.40gb", "{name: k, duration: 100us, sm_fraction: 1.0}", ""),
              132.0 / 60 * 100e3, 2.0);
}

TEST(DiscreteWaves, TwoBlocksPerSmAndSeveralWavesAlone) {
  // 528 blocks, 2 per SM: G = 264, 2 waves alone on 132 SMs; on 60 SMs ceil(264 / 60) = 5:
  // 2.5x; on 16 SMs (1g.10gb) ceil(264 / 16) = 17: 8.5x.
  const std::string kernel =
      "{name: k, duration: 100us, sm_fraction: 1.0, blocks: 528, "
      "blocks_per_sm: 2}";
  EXPECT_NEAR(mig_latency("3g.40gb", kernel, ""), 2.5 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("1g.10gb", kernel, ""), 8.5 * 100e3, 2.0);
}

TEST(DiscreteWaves, TheComputeSpeedNeverBeatsAloneAndTheSmTimeBoundHolds) {
  DeviceGeometry g = whole_gpu("residency");
  boost::random::mt19937 rng(23);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    const double grid = std::floor(1 + u(rng) * 2000) / (1 + std::floor(u(rng) * 4));
    const double f = std::min(1.0, std::max(1.0 / g.gpu_sms, grid / g.gpu_sms));
    const double held = 0.01 + u(rng) * f * g.gpu_sms;
    const double sigma = contention::compute_speed(f, grid, held, g);
    ASSERT_GT(sigma, 0.0);
    ASSERT_LE(sigma, 1.0);
    // SM-ns per solo-ns of compute, held / sigma, never below the planner's bound.
    ASSERT_GE(held / sigma, contention::min_sms_per_compute(f, grid, g) * (1 - 1e-12))
        << grid << " " << held;
  }
}

// ------------------------------------------------------------------------------ planner bounds
// The planner's latency floor (models/plan/bounds.cpp) is the contention law's lone-kernel time:
// on random devices (whole GPU, MIG slices, MPS caps), kernels (grids known or not) and both
// laws, a request alone takes exactly the floor (no neighbour, no queue), never less.

// A kernel's phases for instance `i` and share `m`: serial (memory_bound m) in two instances of
// three, overlapped in the third (contention law 2), its memory or its SM phase the longer.
std::string phases(int i, double m) {
  if (i % 3 != 2) return fmt::format("memory_bound: {}", m);
  return (i / 3) % 2 ? fmt::format("memory_bound: 1, busy_share: {}", m)
                     : fmt::format("memory_bound: {}, busy_share: 1", m);
}

TEST(PlannerBounds, TheLatencyFloorIsTheSimulatedLoneRequestUnderEveryLaw) {
  boost::random::mt19937 rng(2323);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const DeviceProfile& profile = load_device_profile("h100-sxm-80gb");
  const char* slices[] = {"", "1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb"};
  for (int i = 0; i < 60; ++i) {
    const std::string law = i % 2 ? "fluid" : "residency";
    const std::string slice = slices[static_cast<int>(u(rng) * 5) % 5];
    const int percent = slice.empty() && u(rng) < 0.5 ? 1 + static_cast<int>(u(rng) * 60) : 0;
    const double f = std::max(0.02, std::floor(u(rng) * 100) / 100);
    const double m = std::floor(u(rng) * 100) / 100;
    const int blocks = u(rng) < 0.5 ? 1 + static_cast<int>(u(rng) * 600) : 0;
    const std::string kernel = fmt::format(
        "{{name: k, duration: {}us, sm_fraction: {}, {}{}}}", 20 + static_cast<int>(u(rng) * 500),
        f, phases(i, m), blocks > 0 ? fmt::format(", blocks: {}", blocks) : std::string());
    const std::string sharing =
        percent > 0 ? fmt::format(", sharing: {{mode: mps, active_thread_percentage: {}}}", percent)
                    : std::string();
    const std::string yaml = fmt::format(
        "contention_law: {}\nname: t\nduration: 400ms\ngpus:\n  - {{name: gpu0, model: "
        "h100-sxm-80gb{}{}}}\ntenants:\n  - {{name: a, device: {}, workload: {{arrivals: "
        "{{process: constant, rate: 5/s}}, request: {{kernels: [{}]}}}}}}\n",
        law, slice.empty() ? "" : ", mig: [" + slice + "]", sharing,
        slice.empty() ? "gpu0" : "gpu0/0", kernel);
    const Scenario scenario = load_scenario_text(yaml, "bounds.yaml");
    DeviceCapacity cap = capacity_of(profile, slice, find_contention_law(law));
    if (percent > 0) cap.client_sms = cap.sms * percent / 100.0;
    const double floor = latency_floor_ns(demand_of(scenario.tenants.front()), cap);
    const RunResult r = run_yaml(yaml);
    const double p50 = tenant(r, "a").latency.p50;
    EXPECT_GE(p50, floor - 1.0) << yaml;   // safe: never prunes what runs
    EXPECT_NEAR(p50, floor, 2.0) << yaml;  // and exact for a lone request
  }
}

// The same bounds on random requests whose kernel durations follow every distribution the
// scenario format has (fixed, exponential, lognormal, uniform), one to three kernels repeated one
// to three times: the planner prunes a setup when an SLO target (less headroom) is below the
// latency floor, or when the offered load reaches a load bound (models/plan/planner_prune.cpp).
// A setup the simulation finds feasible must survive both. Each tenant here is alone on its
// device, so:
//  - the floor is at most the simulated p50 (a p50 target there is met, so never pruned): the
//    floor takes each distribution's minimum; its mean would exceed the median of a lognormal;
//  - the mean service bound is at most the simulated mean latency, to 4 standard errors of the
//    sample mean (sd / mean of a sum of independent launches <= the largest part's
//    coefficient of variation);
//  - when the run sustains the load, the offered rate is below the solo capacity, and the SM and
//    HBM loads below the device's.
struct RandomDuration {
  std::string yaml;
  double cv;  ///< coefficient of variation (sd / mean)
};

// `base_us`: fixed: the value; exponential: the mean; lognormal: the median; uniform: the min.
RandomDuration random_duration(int kind, double base_us, double u1, double u2) {
  switch (kind) {
    case 0:
      return {fmt::format("{}us", base_us), 0.0};
    case 1:
      return {fmt::format("{{exponential: {}us}}", base_us), 1.0};
    case 2: {
      const double sigma = (2 + std::floor(u1 * 9)) / 10;  // 0.2 .. 1.0
      return {fmt::format("{{lognormal: {{median: {}us, sigma: {}}}}}", base_us, sigma),
              std::sqrt(std::exp(sigma * sigma) - 1)};
    }
    default: {
      const double low = base_us, high = base_us * (1.5 + std::floor(u2 * 4));
      return {fmt::format("{{uniform: {{min: {}us, max: {}us}}}}", low, high),
              (high - low) / std::sqrt(12.0) / ((low + high) / 2)};
    }
  }
}

TEST(PlannerBounds, NoBoundPrunesASimulatedFeasibleSetupUnderEveryDurationDistribution) {
  boost::random::mt19937 rng(2525);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const DeviceProfile& profile = load_device_profile("h100-sxm-80gb");
  const char* slices[] = {"", "1g.10gb", "3g.40gb"};
  const double rate = 200;  // per s: 5 ms between requests
  int lognormal_instances = 0, sustained = 0;
  for (int i = 0; i < 48; ++i) {
    const std::string law = i % 2 ? "fluid" : "residency";
    const std::string slice = slices[static_cast<int>(u(rng) * 3) % 3];
    const int kernels = 1 + static_cast<int>(u(rng) * 3);
    std::string list;
    double cv = 0;
    for (int k = 0; k < kernels; ++k) {
      // Kernel 0 cycles through the four kinds, so each appears in a quarter of the instances.
      const int kind = k == 0 ? (i / 2) % 4 : static_cast<int>(u(rng) * 4) % 4;
      lognormal_instances += kind == 2 && k == 0;
      const RandomDuration d = random_duration(kind, 10 + std::floor(u(rng) * 60), u(rng), u(rng));
      cv = std::max(cv, d.cv);
      const double f = std::max(0.05, std::floor(u(rng) * 100) / 100);
      const double m = std::floor(u(rng) * 100) / 100;
      const int blocks = u(rng) < 0.5 ? 1 + static_cast<int>(u(rng) * 600) : 0;
      list += fmt::format(
          "{}{{name: k{}, duration: {}, sm_fraction: {}, {}, "
          "repeat: {}{}}}",
          k ? ", " : "", k, d.yaml, f, phases(i + k, m), 1 + static_cast<int>(u(rng) * 3),
          blocks > 0 ? fmt::format(", blocks: {}", blocks) : std::string());
    }
    const std::string yaml = fmt::format(
        "contention_law: {}\nname: t\nduration: 1s\nseed: {}\ngpus:\n  - {{name: gpu0, model: "
        "h100-sxm-80gb{}}}\ntenants:\n  - {{name: a, device: {}, workload: {{arrivals: "
        "{{process: constant, rate: {}/s}}, request: {{kernels: [{}]}}}}}}\n",
        law, i + 1, slice.empty() ? "" : ", mig: [" + slice + "]",
        slice.empty() ? "gpu0" : "gpu0/0", rate, list);
    const Scenario scenario = load_scenario_text(yaml, "bounds.yaml");
    const DeviceCapacity cap = capacity_of(profile, slice, find_contention_law(law));
    const TenantDemand demand = demand_of(scenario.tenants.front());
    const RunResult run = run_yaml(yaml);
    const TenantResult& a = tenant(run, "a");
    ASSERT_GT(a.completed, 150) << yaml;
    // Waiting only lengthens latencies: the floor and the mean service bound hold whatever the
    // load.
    EXPECT_LE(latency_floor_ns(demand, cap), static_cast<double>(a.latency.p50) + 1.0) << yaml;
    const double standard_error = cv / std::sqrt(static_cast<double>(a.completed));
    EXPECT_LE(service_ns(demand, cap), a.latency.mean * (1 + 4 * standard_error) + 1.0) << yaml;
    // Feasible and sustained: every request done, 99 % waited less than one arrival interval (an
    // overloaded queue grows without bound). Then no load bound may prune it.
    if (a.completed != a.requests || static_cast<double>(a.queueing.p99) >= 1e9 / rate) continue;
    ++sustained;
    EXPECT_LT(rate, solo_capacity_per_s(demand, cap)) << yaml;
    EXPECT_LT(sm_load_per_s(demand, cap), cap.sms) << yaml;
    EXPECT_LT(hbm_load_per_s(demand, cap), cap.bandwidth) << yaml;
  }
  EXPECT_GE(sustained, 36);  // most instances exercise the load bounds too
  EXPECT_EQ(lognormal_instances, 12);
}

// ------------------------------------------------------------------------------ launch cost

TEST(LaunchCost, EveryKernelPaysTheLaunchOverheadOfItsStream) {
  auto scenario = [](const std::string& graph) {
    return "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: h200-141gb}\ntenants:\n"
           "  - {name: a, device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, "
           "request: {" +
           graph + "kernels: [{name: tiny, duration: 1us, repeat: 1000}]}}}\n";
  };
  const DeviceProfile& h200 = load_device_profile("h200-141gb");
  // 1000 x (launch + 1 us): 3.37 ms with a stream launch (gpu-benches: 2.4 us per tiny kernel;
  // the old model paid the overhead once per request: 1.0 ms).
  const RunResult stream = run_yaml(scenario(""));
  EXPECT_NEAR(tenant(stream, "a").latency.p50,
              1000 * (static_cast<double>(h200.launch_overhead) + 1e3), 1.0);
  const RunResult graph = run_yaml(scenario("cuda_graph: true, "));
  EXPECT_NEAR(tenant(graph, "a").latency.p50,
              1000 * (static_cast<double>(h200.graph_launch_overhead) + 1e3), 1.0);
}

TEST(LaunchCost, ATimeSlicedContextKeepsTheGpuWhileItsNextKernelLaunches) {
  // A request of 10 back-to-back 60 us kernels beside a saturating time-sliced neighbour
  // (slices of 1 ms). Between two of its kernels only the launch overhead passes, with the next
  // kernel already in its channel, so its context does not yield: once it holds the GPU the
  // burst runs through (10 x (L + 60 us) = 0.62 ms, within one slice). Yielding at every launch
  // gap would cost a neighbour's slice per kernel (> 10 ms).
  const RunResult r = run_yaml(
      gpu("{mode: time-slicing, timeslice: 1ms}") +
      closed_client("neighbour", "{name: n, duration: 5ms}") +
      "  - {name: burst, device: gpu0, workload: {arrivals: {process: constant, rate: 50/s}, "
      "request: {kernels: [{name: k, duration: 60us, repeat: 10}]}}}\n");
  // Worst case: wait for the rest of a slice plus switches, then a slice of its own.
  EXPECT_LT(tenant(r, "burst").latency.max, 2.5e6);
  EXPECT_GT(tenant(r, "burst").latency.mean, 10 * (launch_ns() + 60e3));
}

// ------------------------------------------------------------------------------ invariants

std::string mixed_tenant(const std::string& mode) {
  return gpu(mode) +
         "  - {name: a, device: gpu0, workload: {max_in_flight: 3, arrivals: {process: poisson, "
         "rate: 400/s}, request: {host_gap: 5us, kernels: [{name: g, duration: {exponential: "
         "600us}, sm_fraction: 0.7, memory_bound: 0.4, working_set: 20MB, repeat: 3, blocks: 93, "
         "block: {threads: 256, registers: 64}}, {name: s, duration: 300us, memory_bound: 0.9, "
         "blocks: 400, block: {threads: 128}}]}}}\n";
}

void expect_same_numbers(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.tenants.size(), b.tenants.size());
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    EXPECT_EQ(a.tenants[i].completed, b.tenants[i].completed);
    EXPECT_EQ(a.tenants[i].latency.mean, b.tenants[i].latency.mean);
    EXPECT_EQ(a.tenants[i].latency.p99, b.tenants[i].latency.p99);
    EXPECT_EQ(a.tenants[i].gpu_seconds, b.tenants[i].gpu_seconds);
  }
  EXPECT_EQ(a.devices[0].sm_busy, b.devices[0].sm_busy);
}

TEST(Invariants, OneMpsClientAtFullThreadsIsExclusive) {
  expect_same_numbers(run_yaml(mixed_tenant("{mode: exclusive}")),
                      run_yaml(mixed_tenant("{mode: mps, active_thread_percentage: 100}")));
}

TEST(Invariants, OneTimeSlicedContextIsExclusive) {
  expect_same_numbers(run_yaml(mixed_tenant("{mode: exclusive}")),
                      run_yaml(mixed_tenant("{mode: time-slicing}")));
}

TEST(Invariants, HeldSmsNeverExceedTheDeviceUnderAnyStrategy) {
  for (const std::string mode : {"{mode: exclusive}", "{mode: mps}", "{mode: time-slicing}"}) {
    std::string yaml =
        mode == "{mode: exclusive}"
            ? mixed_tenant(mode)
            : mixed_tenant(mode) +
                  "  - {name: b, device: gpu0, workload: {arrivals: {process: closed, concurrency: "
                  "2}, "
                  "request: {kernels: [{name: t, duration: 2ms, memory_bound: 0.3}]}}}\n";
    const RunResult r = run_yaml(yaml);
    const DeviceResult& d = device(r, "gpu0");
    EXPECT_LE(d.sm_busy, 1.0 + 1e-9) << mode;
    double gpu_seconds = 0;
    for (const TenantResult& t : r.tenants) gpu_seconds += t.gpu_seconds;
    // Attributed GPU time never exceeds the window the device existed for (2 s measured).
    EXPECT_LE(gpu_seconds, static_cast<double>(r.sim_time_ns) * 1e-9 + 1e-9) << mode;
  }
}

TEST(MaxMinProperty, RandomInstancesRespectEveryConstraintAndAreMaxMinFair) {
  boost::random::mt19937 rng(12345);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int instance = 0; instance < 500; ++instance) {
    MaxMinProblem p;
    const int constraints = 1 + static_cast<int>(u(rng) * 4);
    const int variables = 1 + static_cast<int>(u(rng) * 8);
    std::vector<double> capacity(static_cast<std::size_t>(constraints));
    for (double& c : capacity) c = 0.1 + 2 * u(rng);
    for (double c : capacity) p.add_constraint(c);
    std::vector<std::vector<double>> a(static_cast<std::size_t>(variables),
                                       std::vector<double>(capacity.size(), 0.0));
    std::vector<double> bound(static_cast<std::size_t>(variables));
    for (int i = 0; i < variables; ++i) {
      bound[static_cast<std::size_t>(i)] = u(rng) < 0.3 ? 0.05 + u(rng) : 1e9;
      p.add_variable(1.0, bound[static_cast<std::size_t>(i)]);
      for (int j = 0; j < constraints; ++j) {
        if (u(rng) < 0.6) {
          a[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = 0.1 + u(rng);
          p.add_consumption(i, j, a[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
        }
      }
    }
    p.solve();
    std::vector<double> load(capacity.size(), 0.0);
    for (int i = 0; i < variables; ++i) {
      for (std::size_t j = 0; j < capacity.size(); ++j) {
        load[j] += a[static_cast<std::size_t>(i)][j] * p.rate(i);
      }
    }
    for (std::size_t j = 0; j < capacity.size(); ++j) {
      EXPECT_LE(load[j], capacity[j] * (1 + 1e-9)) << "instance " << instance;
    }
    for (int i = 0; i < variables; ++i) {
      const double r = p.rate(i);
      EXPECT_LE(r, bound[static_cast<std::size_t>(i)] * (1 + 1e-9));
      // Max-min: a variable below its bound touches a saturated constraint on which it has the
      // largest rate (equal weights), so it cannot grow without lowering a smaller one.
      if (r >= bound[static_cast<std::size_t>(i)] * (1 - 1e-9)) continue;
      bool blocked = false;
      for (std::size_t j = 0; j < capacity.size(); ++j) {
        if (a[static_cast<std::size_t>(i)][j] <= 0 || load[j] < capacity[j] * (1 - 1e-9)) continue;
        bool largest = true;
        for (int k = 0; k < variables; ++k) {
          if (a[static_cast<std::size_t>(k)][j] > 0 && p.rate(k) > r * (1 + 1e-9)) largest = false;
        }
        blocked |= largest;
      }
      EXPECT_TRUE(blocked) << "instance " << instance << " variable " << i;
    }
  }
}

// ------------------------------------------------------------ device-level property tests

/// Submits kernels at given times and records when each finishes; checks at every completion
/// that the kernels on the device never hold more SMs than it has.
class KernelDriver : public KernelOwner {
 public:
  KernelDriver(Device& device, std::vector<KernelRun>& kernels, double sms)
      : device_(device), kernels_(kernels), sms_(sms), finish_(kernels.size(), -1) {}
  void submit(std::size_t index) {
    submitted_.push_back(index);
    device_.submit(kernels_[index]);
  }
  void on_kernel_finished(KernelRun& kernel, Nanos now) override {
    finish_[kernel.request_id] = now;
    double held = 0;
    for (std::uint64_t i : submitted_) {
      if (finish_[i] < 0) held += kernels_[i].occupancy;
    }
    max_held_ = std::max(max_held_, held);
  }
  const std::vector<Nanos>& finish() const { return finish_; }
  double max_held() const { return max_held_; }

 private:
  Device& device_;
  std::vector<KernelRun>& kernels_;
  double sms_;
  std::vector<Nanos> finish_;
  std::vector<std::uint64_t> submitted_;
  double max_held_ = 0;
};

// Law 1b without law 1c: the residency law with guest placement left out (a law is a class: one
// overridden rule).
class RetirementOnlyLaw final : public ResidencyLaw {
 public:
  std::string_view name() const override { return "test-retirement-only"; }

 protected:
  void place_guests(SharingState&, const std::vector<KernelRun*>&, const DispatchFacts&,
                    double) const override {}
};
const ContentionLaw& retirement_only_law() {
  static const RetirementOnlyLaw law;
  return law;
}

TEST(DeviceProperty, RandomKernelsConserveWorkNeverShareAnSmAndNeverBeatSolo) {
  // (With co-residency a guest's blocks sit on a host's SMs; held SMs, the sum of occupancies,
  // still never exceed the device.)
  boost::random::mt19937 rng(2026);
  boost::random::mt19937 footprint_rng(77);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const Strategy* modes[] = {&exclusive_strategy(), &mps_strategy(), &time_slicing_strategy()};
  for (int instance = 0; instance < 60; ++instance) {
    const Strategy& mode = *modes[instance % 3];
    Simulator sim;
    std::unique_ptr<StrategyParams> sharing = mode.make_params();
    if (&mode == &time_slicing_strategy()) {
      auto& ts = params_as<TimeSlicingParams>(*sharing);
      ts.timeslice = 200'000;
      ts.context_switch = 20'000;
      ts.preemption_latency = 10'000;
      ts.cache_refill = 5'000;
    }
    if (&mode == &mps_strategy() && instance % 2 == 0) {
      params_as<MpsParams>(*sharing).active_thread_percentage = 60.0;
    }
    DeviceGeometry geometry{"gpu0", "test", 132, 132, 1.0, 80LL << 30, 1.0, 50e6, 0.34};
    // Law 1c (co-residency) on the H100's SM resources; every third instance without it (block
    // retirement only: a law of this test, one class overriding one rule).
    geometry.law = instance % 3 != 2 ? find_contention_law("residency") : &retirement_only_law();
    geometry.sm_limits = load_device_profile("h100-sxm-80gb").sm_limits;
    if (&mode == &mps_strategy() && instance % 4 == 1) {
      params_as<MpsParams>(*sharing).interleaved_clients = false;
    }
    std::unique_ptr<Device> device = mode.make_device(sim, geometry, *sharing);
    const int clients = &mode == &exclusive_strategy() ? 1 : 4;
    for (int c = 0; c < clients; ++c) {
      std::string reason;
      ASSERT_TRUE(device->attach_client(c, reason)) << reason;
    }
    std::vector<KernelRun> kernels(80);
    KernelDriver driver(*device, kernels, 132);
    double total_work = 0;
    std::vector<Nanos> submit(kernels.size());
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      KernelRun& k = kernels[i];
      k.owner = &driver;
      k.tenant = static_cast<int>(u(rng) * clients);
      k.request_id = i;
      k.work = std::round(1e3 + u(rng) * 1e6);
      k.remaining = k.work;
      k.sm_fraction = 0.05 + 0.95 * u(rng);
      k.memory_bound = u(rng) < 0.2 ? 0.0 : u(rng);
      k.waves = u(rng) < 0.5 ? 1.0 : 1.0 + 3 * u(rng);
      k.working_set = u(rng) < 0.5 ? 0.0 : 1e6 + 1e8 * u(rng);
      k.priority = u(rng) < 0.2 ? 1 : 0;
      // Half the kernels with a grid and a per-block footprint (their own draws).
      if (footprint_rng() % 2 == 0) {
        const int threads[] = {64, 128, 256, 512, 1024};
        k.footprint.threads = threads[footprint_rng() % 5];
        k.footprint.registers = static_cast<int>(16 + footprint_rng() % 49);
        k.footprint.shared_memory = static_cast<std::int64_t>(footprint_rng() % 64) * 1024;
        k.blocks = std::ceil(k.sm_fraction * 132 * k.waves) * (1 + footprint_rng() % 3);
      }
      total_work += k.work;
      submit[i] = static_cast<Nanos>(u(rng) * 5e6);
      sim.schedule_at(submit[i], make_event<&KernelDriver::submit>(driver, i), kPriorityArrival);
    }
    sim.run();
    const double tolerance = static_cast<double>(kernels.size()) * (1e-9 * 1e6 + 1e-3);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      ASSERT_GE(driver.finish()[i], 0) << "instance " << instance << " kernel " << i;
      // Nothing runs faster than alone on the whole GPU (rate <= 1).
      EXPECT_GE(static_cast<double>(driver.finish()[i] - submit[i]), kernels[i].work - 1.0);
    }
    EXPECT_NEAR(device->work_progressed(), total_work, tolerance) << "instance " << instance;
    EXPECT_NEAR(device->work_completed(), total_work, tolerance) << "instance " << instance;
    EXPECT_EQ(device->work_discarded(), 0.0);
    EXPECT_LE(driver.max_held(), 132.0 * (1 + 1e-9)) << "instance " << instance;
  }
}

}  // namespace
}  // namespace gpumux

namespace gpumux {
namespace {

// ------------------------------------------------ lazy path vs the eager oracle (issue 12)

/// MPS clients each running a chain of kernels: the next kernel of a client is submitted when
/// its previous one finishes, either at once from inside the completion (the device's batching
/// path) or after a gap; a client may be killed (its kernels removed) at a given time.
class ChainDriver : public KernelOwner {
 public:
  ChainDriver(Simulator& sim, Device& device, std::vector<KernelRun>& kernels,
              std::vector<std::vector<std::size_t>> chains, std::vector<Nanos> gaps)
      : sim_(sim),
        device_(device),
        kernels_(kernels),
        chains_(std::move(chains)),
        gaps_(std::move(gaps)),
        next_(chains_.size(), 0),
        killed_(chains_.size(), 0),
        finish_(kernels.size(), -1) {}
  void start(std::size_t client) { submit_next(client); }
  void kill(std::size_t client) {
    killed_[client] = 1;
    device_.remove_client_kernels(static_cast<int>(client));
  }
  void on_kernel_finished(KernelRun& kernel, Nanos now) override {
    finish_[kernel.request_id] = now;
    const auto client = static_cast<std::size_t>(kernel.tenant);
    const Nanos gap = gaps_[kernel.request_id];
    if (gap == 0) {
      submit_next(client);
    } else {
      sim_.schedule_at(now + gap, make_event<&ChainDriver::submit_next>(*this, client),
                       kPriorityArrival);
    }
  }
  const std::vector<Nanos>& finish() const { return finish_; }

 private:
  void submit_next(std::size_t client) {
    if (killed_[client] || next_[client] >= chains_[client].size()) return;
    device_.submit(kernels_[chains_[client][next_[client]++]]);
  }
  Simulator& sim_;
  Device& device_;
  std::vector<KernelRun>& kernels_;
  std::vector<std::vector<std::size_t>> chains_;
  std::vector<Nanos> gaps_;
  std::vector<std::size_t> next_;
  std::vector<char> killed_;
  std::vector<Nanos> finish_;
};

struct ChainOutcome {
  std::vector<Nanos> finish;
  double progressed = 0, completed = 0, discarded = 0;
  double busy = 0, useful = 0, dram = 0;
  std::vector<double> client_sm;
  std::int64_t lazy = 0;
};

/// One random MPS instance (seeded), run eagerly or lazily.
ChainOutcome run_chain_instance(std::uint32_t seed, bool eager) {
  boost::random::mt19937 rng(seed);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  Simulator sim;
  std::unique_ptr<StrategyParams> sharing = mps_strategy().make_params();
  const int clients = 2 + static_cast<int>(u(rng) * 11);  // 2..12
  const double share_choice = u(rng);
  // Capped so that every client fits (the lazy path's usual state), or loosely/not capped (SMs
  // re-granted: the full path), in equal parts.
  params_as<MpsParams>(*sharing).active_thread_percentage = share_choice < 0.5
                                                                ? std::floor(100.0 / clients)
                                                            : share_choice < 0.8 ? 30.0
                                                                                 : 100.0;
  // HBM: plenty (rarely saturated at the bounds), or a tenth of it (often saturated).
  const double bandwidth = u(rng) < 0.7 ? 1.0 : 0.1;
  DeviceGeometry geometry{"gpu0", "test", 132, 132, bandwidth, 80LL << 30, 1.0, 50e6, 0.34};
  // Half the instances under law 1b/1c with footprints on half their kernels (own draws): the
  // lazy path must leave co-resident states to the full recompute.
  boost::random::mt19937 footprint_rng(seed + 1);
  const bool co_residency = seed % 2 == 0;
  if (co_residency) geometry.law = find_contention_law("residency");  // (else whole SMs only)
  // Overlapped phases (law 2) on a third of the kernels (own draws), read as such in two
  // instances of three and as serial phases (the fluid law's reading) in the third.
  boost::random::mt19937 phase_rng(seed + 2);
  geometry.overlapped_phases = seed % 3 != 0;
  geometry.sm_limits = load_device_profile("h100-sxm-80gb").sm_limits;
  std::unique_ptr<Device> device = mps_strategy().make_device(sim, geometry, *sharing);
  device->set_eager(eager);
  for (int c = 0; c < clients; ++c) {
    std::string reason;
    EXPECT_TRUE(device->attach_client(c, reason)) << reason;
  }
  const bool reuse = u(rng) < 0.3;  // some kernels re-read a working set (the L2 law)
  std::vector<KernelRun> kernels;
  std::vector<std::vector<std::size_t>> chains(static_cast<std::size_t>(clients));
  std::vector<Nanos> gaps;
  for (int c = 0; c < clients; ++c) {
    const int length = 5 + static_cast<int>(u(rng) * 20);
    for (int j = 0; j < length; ++j) {
      KernelRun k;
      k.tenant = c;
      k.request_id = kernels.size();
      k.work = std::round(1e3 + u(rng) * 2e5);
      k.remaining = k.work;
      k.sm_fraction = u(rng) < 0.5 ? 1.0 : 0.02 + 0.98 * u(rng);
      k.memory_bound = u(rng) < 0.2 ? 0.0 : u(rng);
      if (phase_rng() % 3 == 0) {  // the longer phase 1, the other the drawn share
        if (phase_rng() % 2 == 0) {
          k.busy_share = k.memory_bound;
          k.memory_bound = 1.0;
        } else {
          k.busy_share = 1.0;
        }
      }
      k.waves = u(rng) < 0.5 ? 1.0 : 1.0 + 3 * u(rng);
      k.working_set = reuse && u(rng) < 0.5 ? 1e6 + 1e8 * u(rng) : 0.0;
      k.priority = u(rng) < 0.15 ? 1 : 0;
      if (co_residency && footprint_rng() % 2 == 0) {
        k.footprint = BlockFootprint{static_cast<int>(64 << (footprint_rng() % 5)),
                                     static_cast<int>(16 + footprint_rng() % 49),
                                     static_cast<std::int64_t>(footprint_rng() % 64) * 1024};
        k.blocks = std::ceil(k.sm_fraction * 132 * k.waves) * (1 + footprint_rng() % 3);
      }
      chains[static_cast<std::size_t>(c)].push_back(kernels.size());
      gaps.push_back(u(rng) < 0.5 ? 0 : static_cast<Nanos>(1 + u(rng) * 2e4));
      kernels.push_back(k);
    }
  }
  ChainDriver driver(sim, *device, kernels, chains, gaps);
  for (KernelRun& k : kernels) k.owner = &driver;
  for (int c = 0; c < clients; ++c) {
    sim.schedule_at(static_cast<Nanos>(u(rng) * 1e5),
                    make_event<&ChainDriver::start>(driver, static_cast<std::size_t>(c)),
                    kPriorityArrival);
  }
  if (u(rng) < 0.3) {  // kill one client part-way
    const auto victim = static_cast<std::size_t>(u(rng) * clients);
    sim.schedule_at(static_cast<Nanos>(2e5 + u(rng) * 1e6),
                    make_event<&ChainDriver::kill>(driver, victim), kPriorityArrival);
  }
  sim.run();
  ChainOutcome out;
  out.finish = driver.finish();
  out.progressed = device->work_progressed();
  out.completed = device->work_completed();
  out.discarded = device->work_discarded();
  const Nanos end = sim.now();
  out.busy = device->busy_integral(end);
  out.useful = device->useful_integral(end);
  out.dram = device->dram_integral(end);
  for (int c = 0; c < clients; ++c) out.client_sm.push_back(device->client_sm_integral(c, end));
  out.lazy = device->lazy_recomputes();
  return out;
}

TEST(DeviceLazy, RandomMpsInstancesAgreeWithTheEagerOracleAndConserveWork) {
  // The lazy path (device.hpp, "Cost per event") against the full recompute at every event,
  // which is the arithmetic before it: the same kernels finish, each within 5 ns (a projected
  // finish time rounded up to the ns once instead of at every event can move by 1 ns, and the
  // next kernel of its chain starts that much later; 2 ns at most on these instances), the
  // utilization integrals within 1e-6 relative (1.6e-7 at most here: those 1 ns shifts), and
  // work is conserved as the eager path conserves it (progressed = completed + discarded).
  std::int64_t lazy_total = 0;
  int lazy_instances = 0;
  for (std::uint32_t seed = 1; seed <= 80; ++seed) {
    const ChainOutcome eager = run_chain_instance(seed, true);
    const ChainOutcome lazy = run_chain_instance(seed, false);
    EXPECT_EQ(eager.lazy, 0);
    lazy_total += lazy.lazy;
    lazy_instances += lazy.lazy > 0;
    ASSERT_EQ(eager.finish.size(), lazy.finish.size());
    Nanos shift = 0, shifted = 0, shift_sum = 0;  // the largest, how many moved, their sum
    for (std::size_t i = 0; i < eager.finish.size(); ++i) {
      ASSERT_EQ(eager.finish[i] < 0, lazy.finish[i] < 0) << "seed " << seed << " kernel " << i;
      EXPECT_LE(std::abs(eager.finish[i] - lazy.finish[i]), 5)
          << "seed " << seed << " kernel " << i;
      shift = std::max(shift, std::abs(eager.finish[i] - lazy.finish[i]));
      shifted += eager.finish[i] != lazy.finish[i];
      shift_sum += std::abs(eager.finish[i] - lazy.finish[i]);
    }
    for (const ChainOutcome* o : {&eager, &lazy}) {
      const double tolerance = static_cast<double>(o->finish.size()) * (1e-9 * 2e5 + 1e-3);
      EXPECT_NEAR(o->progressed, o->completed + o->discarded, tolerance) << "seed " << seed;
    }
    auto near = [](double a, double b) {
      return std::abs(a - b) <= 1e-6 * std::max({std::abs(a), std::abs(b), 1.0});
    };
    EXPECT_PRED2(near, eager.progressed, lazy.progressed) << "seed " << seed;
    EXPECT_PRED2(near, eager.discarded, lazy.discarded) << "seed " << seed;
    EXPECT_PRED2(near, eager.busy, lazy.busy) << "seed " << seed;
    EXPECT_PRED2(near, eager.useful, lazy.useful) << "seed " << seed;
    EXPECT_PRED2(near, eager.dram, lazy.dram) << "seed " << seed;
    ASSERT_EQ(eager.client_sm.size(), lazy.client_sm.size());
    // A client's SM-ns: each finish shift moves the end of what one kernel holds (at most the
    // device's 132 SMs) by that many ns, so beyond 1e-6 relative the integrals may differ by
    // the shifts' sum x 132 (seed 80: 64 kernels shifted by up to 2 ns, 3e-6 relative).
    for (std::size_t c = 0; c < eager.client_sm.size(); ++c) {
      const double a = eager.client_sm[c], b = lazy.client_sm[c];
      EXPECT_LE(std::abs(a - b), std::max(1e-6 * std::max({std::abs(a), std::abs(b), 1.0}),
                                          132.0 * static_cast<double>(shift_sum)))
          << "seed " << seed << " c " << c << ": " << shifted << " kernels finished up to " << shift
          << " ns apart";
    }
  }
  // The instances exercise the lazy path (55 of the 80 take it), not only the full one.
  EXPECT_GE(lazy_instances, 20);
  EXPECT_GT(lazy_total, 1000);
}

}  // namespace
}  // namespace gpumux

namespace gpumux {
namespace {

// ------------------------------------------------------- overlapped roofline phases (law 2)

// A 1g.10gb-like slice of an A100 (14 of 108 SMs, 1/8 of the bandwidth) without the per-SM
// ceiling, so that sigma and beta are the closed forms of the header.
DeviceGeometry plain_slice() {
  DeviceGeometry g;
  g.gpu_sms = 108;
  g.sms = 14;
  g.bandwidth = 1.0 / 8;
  g.overlapped_phases = true;
  return g;
}

TEST(OverlappedPhases, ClosedFormsOnAOneEighthSlice) {
  const DeviceGeometry g = plain_slice();
  const double f = 12.0 / 108;  // 12 SMs: fits the slice, sigma = 1; beta = 1/8
  // Compute-bound with t_memory = D / 8: the memory phase stretches to D and hides under the
  // compute phase, D; the serial reading of the same kernel (m_s = 1/9) adds them: 16/9 D.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0 / 8, 1.0, 1.0, 12, g), 1.0);
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0 / 9, -1, 1.0, 12, g), 16.0 / 9);
  // Balanced (t_compute = t_memory = D): the bytes need 8 D; the serial reading gives 4.5 D.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0, 1.0, 1.0, 12, g), 8.0);
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 0.5, -1, 1.0, 12, g), 4.5);
  // Memory-bound with half its time computing: 8 either way of reading the SM phase.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0, 0.5, 1.0, 12, g), 8.0);
  // A full-width compute-bound grid on 14 SMs: the compute phase is the longer, 108/14.
  EXPECT_DOUBLE_EQ(contention::slowdown(1.0, 1.0 / 8, 1.0, 1.0, 14, g), 108.0 / 14);
  // The L2 factor multiplies the memory phase only: phi = 2 makes it the longer, 2.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0 / 8, 1.0, 2.0, 12, g), 2.0);
  EXPECT_DOUBLE_EQ(contention::rate_bound(f, 1.0 / 8, 1.0, 2.0, 12, g), 0.5);
  // Alone on the whole GPU every roofline kernel takes its solo time.
  DeviceGeometry whole = g;
  whole.sms = 108;
  whole.bandwidth = 1.0;
  for (const double other : {0.0, 0.125, 0.5, 1.0}) {
    EXPECT_DOUBLE_EQ(contention::slowdown(f, other, 1.0, 1.0, 12, whole), 1.0);
    EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0, other, 1.0, 12, whole), 1.0);
  }
  // The co-resident bound with its full residency is the lone bound.
  EXPECT_DOUBLE_EQ(contention::co_resident_bound(f, 1.0, 1.0, 1.0, 12, 12, 12, g), 1.0 / 8);
  // The busy share: c overlapped, 1 - m serial.
  EXPECT_EQ(contention::busy_share(0.25, 0.5), 0.5);
  EXPECT_EQ(contention::busy_share(0.25, -1), 0.75);
}

TEST(OverlappedPhases, SerialKernelsKeepTheSerialSumBitForBit) {
  // The law before overlapped phases, written out: (1 - m) / sigma + m phi / beta, and the
  // co-resident one with its m < 1 guard. A kernel without a busy share gets exactly it.
  boost::random::mt19937 rng(777);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const DeviceProfile& p = load_device_profile("a100-80gb");
  for (int i = 0; i < 2000; ++i) {
    DeviceGeometry g;
    g.gpu_sms = p.sms;
    g.sms = i % 2 ? p.sms : 14;
    g.bandwidth = i % 2 ? 1.0 : 1.0 / 8;
    set_law_terms(g, p, g.bandwidth, *find_contention_law(i % 4 < 2 ? "residency" : "fluid"));
    const double f = std::max(0.01, u(rng));
    const double m = u(rng) < 0.2 ? (u(rng) < 0.5 ? 0.0 : 1.0) : u(rng);
    const double phi = 1 + 2 * u(rng);
    const double held = std::max(0.3, u(rng) * g.sms);
    const double grid = u(rng) < 0.5 ? std::ceil(u(rng) * 400) : 0.0;
    const double sigma = contention::compute_speed(f, grid, held, g);
    const double beta = contention::memory_speed(f, held, g);
    const double serial = (1.0 - m) / sigma + m * phi / beta;
    EXPECT_EQ(contention::slowdown(f, m, -1, phi, held, g, grid), serial);
    EXPECT_EQ(contention::rate_bound(f, m, -1, phi, held, g, grid), 1.0 / serial);
    const double h_compute = held * u(rng);
    const double sigma_co = sigma * (h_compute / held);
    const double slow_co = (m < 1.0 ? (1.0 - m) / sigma_co : 0.0) + m * phi / beta;
    EXPECT_EQ(contention::co_resident_bound(f, m, -1, phi, held, h_compute, held, g, grid),
              slow_co > 0 ? 1.0 / slow_co : 0.0);
    // The fluid reading leaves a serial kernel as it is.
    double m_read = m, c_read = -1;
    contention::serial_phases(m_read, c_read);
    EXPECT_EQ(m_read, m);
    EXPECT_EQ(c_read, -1);
  }
}

TEST(OverlappedPhases, TheFluidLawReadsAnOverlappedKernelAsItsSerialPhases) {
  // m_s = m / (c + m): the catalog's m before overlapped phases, t_memory / (busy + t_memory).
  double m = 0.125, c = 1.0;
  contention::serial_phases(m, c);
  EXPECT_DOUBLE_EQ(m, 1.0 / 9);
  EXPECT_EQ(c, -1);
  contention::serial_phases(m, c);  // idempotent
  EXPECT_DOUBLE_EQ(m, 1.0 / 9);
}

std::string a100(const std::string& layout, const std::string& law) {
  return (law.empty() ? std::string() : "contention_law: " + law + "\n") +
         "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: a100-80gb" + layout +
         "}\ntenants:\n";
}

double a100_latency(const std::string& layout, const std::string& device, const std::string& kernel,
                    const std::string& law) {
  const RunResult r =
      run_yaml(a100(layout, law) + "  - {name: a, device: " + device +
               ", workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [" +
               kernel + "]}}}\n");
  return tenant(r, "a").latency.p50 - launch_ns("a100-80gb");
}

TEST(OverlappedPhases, AComputeBoundRooflineKernelKeepsItsTimeOnAnA1gSlice) {
  // 12 blocks, one wave on the whole A100 and on the 14 SMs of a 1g.10gb (sigma = 1); its
  // memory phase, an eighth of its time, stretches at most 8x (beta >= 1/8): 100 us on both.
  // The fluid law reads it serially (m_s = 1/9, beta = 1/8): 8/9 + 8/9 = 16/9 on the slice.
  const std::string kernel =
      "{name: k, duration: 100us, sm_fraction: 0.12, memory_bound: 0.125, busy_share: 1, "
      "blocks: 12}";
  const std::string slice = ", mig: \"1g.10gb:1\"";
  EXPECT_NEAR(a100_latency("", "gpu0", kernel, ""), 100e3, 2.0);
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", kernel, ""), 100e3, 2.0);
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", kernel, "fluid"), 16.0 / 9 * 100e3, 2.0);
  // The same phases written serially (m = 1/9, no busy share) keep the serial sum.
  const std::string serial =
      "{name: k, duration: 100us, sm_fraction: 0.12, memory_bound: 0.1111111111111111, "
      "blocks: 12}";
  const DeviceProfile& p = load_device_profile("a100-80gb");
  DeviceGeometry g;
  g.gpu_sms = p.sms;
  g.sms = 14;
  g.bandwidth = 1.0 / 8;
  set_law_terms(g, p, 1.0 / 8, default_contention_law());
  const double beta = contention::memory_speed(0.12, 0.12 * p.sms, g);
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", serial, ""),
              (8.0 / 9 + 0.1111111111111111 / beta) * 100e3, 2.0);
  // Balanced (both phases the whole solo time): the memory phase's stretch, 1 / beta.
  const std::string balanced =
      "{name: k, duration: 100us, sm_fraction: 0.12, memory_bound: 1, busy_share: 1, blocks: 12}";
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", balanced, ""), 100e3 / beta, 2.0);
  EXPECT_GT(1.0 / beta, 1.0);
}

std::string overlapped_tenant(const std::string& mode) {
  return gpu(mode) +
         "  - {name: a, device: gpu0, workload: {max_in_flight: 3, arrivals: {process: poisson, "
         "rate: 400/s}, request: {host_gap: 5us, kernels: [{name: g, duration: {exponential: "
         "600us}, sm_fraction: 0.7, memory_bound: 0.4, busy_share: 1, working_set: 20MB, repeat: "
         "3, blocks: 93, block: {threads: 256, registers: 64}}, {name: s, duration: 300us, "
         "memory_bound: 1, busy_share: 0.3, blocks: 400, block: {threads: 128}}]}}}\n";
}

TEST(OverlappedPhases, OneClientOfASharingStrategyIsExclusive) {
  const RunResult exclusive = run_yaml(overlapped_tenant("{mode: exclusive}"));
  expect_same_numbers(exclusive,
                      run_yaml(overlapped_tenant("{mode: mps, active_thread_percentage: 100}")));
  expect_same_numbers(exclusive, run_yaml(overlapped_tenant("{mode: time-slicing}")));
}

// ------------------------------------------------------------ a third law, one file's worth

// "roofline-whole-sm": the residency law's terms (per-SM HBM ceiling, whole waves, overlapped
// phases, the whole GPU's L2) with whole-SM residency only: no block retirement, no
// co-residency. One class and one registration, nothing in Device or the registry's callers.
class RooflineWholeSmLaw final : public ContentionLaw {
 public:
  std::string_view name() const override { return "roofline-whole-sm"; }
  std::string_view summary() const override { return "residency's terms, whole SMs only"; }
  void set_terms(DeviceGeometry& g, const DeviceProfile& p, double slice) const override {
    static const ResidencyLaw residency;
    residency.set_terms(g, p, slice);
  }
  bool per_sm_bandwidth() const override { return true; }
};

void register_third_law() {
  static const RooflineWholeSmLaw law;
  static const bool registered = register_contention_law(law);
  ASSERT_TRUE(registered);
}

TEST(ThirdLaw, IsFoundByNameAndListedAfterTheBuiltInLaws) {
  register_third_law();
  const ContentionLaw* law = find_contention_law("roofline-whole-sm");
  ASSERT_NE(law, nullptr);
  EXPECT_EQ(contention_law_names(),
            (std::vector<std::string>{"residency", "fluid", "roofline-whole-sm"}));
  EXPECT_EQ(&default_contention_law(), find_contention_law("residency"));
  EXPECT_FALSE(register_contention_law(*law));  // a name is registered once
  // Its scenario loads and runs; an unknown law is one line listing the three.
  EXPECT_NO_THROW(run_yaml(gpu("{mode: mps}", "roofline-whole-sm") +
                           closed_client("a", "{name: k, duration: 10us}")));
  try {
    run_yaml(gpu("{mode: mps}", "nope") + closed_client("a", "{name: k, duration: 10us}"));
    FAIL() << "accepted an unknown law";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("residency, fluid, roofline-whole-sm"), std::string::npos)
        << e.what();
  }
}

TEST(ThirdLaw, RunsTheProbesWithTheClosedFormsOfItsTerms) {
  register_third_law();
  // Probe 1 (per-SM ceiling): 1 % of the threads, 1.32 SMs: a streaming kernel takes
  // D / (1.32 s), s = the H100 profile's per-SM bandwidth over its HBM bandwidth (34x solo).
  const DeviceGeometry g = whole_gpu("roofline-whole-sm");
  ASSERT_GT(g.sm_bandwidth, 0.0);
  const std::string kernel = "{name: s, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0}";
  const RunResult narrow =
      run_yaml(gpu("{mode: mps, active_thread_percentage: 1}", "roofline-whole-sm") +
               closed_client("a", kernel));
  EXPECT_NEAR(tenant(narrow, "a").latency.p50, launch_ns() + 100e3 / (1.32 * g.sm_bandwidth), 2.0);
  // Probe 4 (whole waves): 132 one-per-SM blocks on 60 SMs take 3 waves, 300 us.
  EXPECT_NEAR(mig_latency("3g.40gb",
                          "{name: k, duration: 100us, sm_fraction: 1.0, memory_bound: 0.0, "
                          "blocks: 132}",
                          "roofline-whole-sm"),
              3 * 100e3, 2.0);
  // Probe 3 (the whole GPU's L2): a lone 40 MB working set on a 1g.10gb (1/8 of 50 MB) pays its
  // misses as under residency, not as under fluid (which keeps the slice's own L2 as reference).
  // phi = c(L / 8) / c(L), c(L) = (1 - hit) + rho hit, hit = min(1, L / WS): 8 phi solo times.
  const std::string cached =
      "{name: c, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0, working_set: 40MB}";
  const DeviceProfile& p = load_device_profile("h100-sxm-80gb");
  const double l2 = static_cast<double>(p.l2_cache);
  const double rho = g.l2_cost_ratio;
  const auto cost = [rho](double cache) {
    const double hit = std::min(1.0, cache / 40e6);
    return (1.0 - hit) + rho * hit;
  };
  const double third = mig_latency("1g.10gb", cached, "roofline-whole-sm");
  EXPECT_NEAR(third, 8 * cost(l2 / 8) / cost(l2) * 100e3, 2.0);
  EXPECT_GT(third, 20 * 100e3);
  EXPECT_NEAR(mig_latency("1g.10gb", cached, "fluid"), 8 * 100e3, 2.0);
}

TEST(ThirdLaw, WithoutRetirementAnUrgentKernelWaitsForTheTrainingKernelsResidual) {
  register_third_law();
  // Residency.AnUrgentKernelWaitsAtMostOneRoundBehindAMultiWaveKernel's scenario: 10 ms
  // full-grid training kernels of 100 waves back to back, an urgent (priority -5) 100 us
  // full-grid kernel at 7/s. Under residency it waits at most one 100 us round (mean about
  // L + 50 us + 100 us); this law has no block retirement, so it waits for the training
  // kernel's residual, D^2 / 2(D + L) + 100 us on average, exactly as under fluid (compute
  // kernels without a grid: the two laws' terms give the same rates).
  const auto infer = [](const std::string& law) {
    std::string yaml = gpu("{mode: mps, client_order: launch_order}", law) +
                       closed_client("train", "{name: step, duration: 10ms, waves: 100}") +
                       "  - {name: infer, device: gpu0, workload: {priority: -5, arrivals: "
                       "{process: constant, rate: 7/s}, request: {kernels: [{name: k, "
                       "duration: 100us}]}}}\n";
    yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
    return tenant(run_yaml(yaml), "infer").latency.mean;
  };
  const double d = 10e6, l = launch_ns();
  const double residual = l + d * d / (2 * (d + l)) + 100e3;
  const double third = infer("roofline-whole-sm");
  EXPECT_NEAR(third, residual, 0.08 * residual);
  EXPECT_EQ(third, infer("fluid"));
  EXPECT_NEAR(infer("residency"), l + 50e3 + 100e3, 12e3);
}

}  // namespace
}  // namespace gpumux
