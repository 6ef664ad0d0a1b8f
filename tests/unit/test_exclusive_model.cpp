// Dedicated-GPU model against closed forms: queueing theory and the fluid sharing rules.
#include <gtest/gtest.h>

#include <cmath>

#include "models/config/profile_loader.hpp"
#include "models/scenario/trace_reader.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

using testing::run_yaml;
using testing::tenant;

double launch_overhead_ns() {
  return static_cast<double>(load_device_profile("h100-sxm-80gb").launch_overhead);
}

std::string single_kernel_scenario(const std::string& arrivals, const std::string& duration,
                                   const std::string& extra_kernel_fields, const std::string& run) {
  return R"(
name: closed-form
seed: 11
)" + run +
         R"(
gpus:
  - {name: gpu0, model: h100-sxm-80gb}
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: )" +
         arrivals + R"(
      request:
        kernels:
          - {name: k, duration: )" +
         duration + extra_kernel_fields + R"(}
)";
}

TEST(ExclusiveClosedForm, MD1MeanLatencyMatchesPollaczekKhinchine) {
  // M/D/1: W = S + lambda S^2 / (2 (1 - rho)), S = kernel + launch overhead.
  const double lambda = 700.0;  // per second
  const double service_ns = 1e6 + launch_overhead_ns();
  const RunResult r = run_yaml(single_kernel_scenario("{process: poisson, rate: 700/s}", "1ms", "",
                                                      "duration: 400s\nwarmup: 10s"));
  const TenantResult& t = tenant(r, "t");
  ASSERT_GE(t.completed, 200000);
  const double s = service_ns * 1e-9;
  const double rho = lambda * s;
  const double expected_ns = (s + lambda * s * s / (2 * (1 - rho))) * 1e9;
  EXPECT_NEAR(t.latency.mean, expected_ns, 0.02 * expected_ns);
  // Slowdown: latency / solo latency = W / S.
  EXPECT_NEAR(t.slowdown_mean, expected_ns / service_ns, 0.02 * expected_ns / service_ns);
  // Utilization: rho (the kernel occupies all SMs while it runs; launch gaps leave it idle).
  EXPECT_NEAR(r.devices[0].sm_busy, lambda * 1e-3, 0.01);
}

TEST(ExclusiveClosedForm, MG1WithExponentialKernelsMatchesPollaczekKhinchine) {
  // Service S = L + X, X ~ Exp(mean D): E[S] = L + D, E[S^2] = D^2 + (L + D)^2.
  // W = E[S] + lambda E[S^2] / (2 (1 - rho)). (M/M/1 when L = 0.)
  const double lambda = 500.0, d = 1e-3, l = launch_overhead_ns() * 1e-9;
  const RunResult r = run_yaml(single_kernel_scenario(
      "{process: poisson, rate: 500/s}", "{exponential: 1ms}", "", "duration: 500s\nwarmup: 10s"));
  const TenantResult& t = tenant(r, "t");
  ASSERT_GE(t.completed, 200000);
  const double es = l + d, es2 = d * d + es * es, rho = lambda * es;
  const double expected_ns = (es + lambda * es2 / (2 * (1 - rho))) * 1e9;
  EXPECT_NEAR(t.latency.mean, expected_ns, 0.02 * expected_ns);
}

TEST(ExclusiveFluid, TwoConcurrentMemoryBoundKernelsEachRunAtHalfSpeed) {
  // Closed loop, 2 requests in flight, full-grid memory-bound kernels: each kernel's blocks hold
  // every SM (residency), so the two run one after the other, each at full bandwidth. A request
  // waits for the other's kernel and then runs its own: 2D, its launch hidden behind the other;
  // the very first one also pays L.
  const RunResult r = run_yaml(single_kernel_scenario("{process: closed, concurrency: 2}", "1ms",
                                                      ", memory_bound: 1.0", "duration: 1s"));
  const TenantResult& t = tenant(r, "t");
  ASSERT_GT(t.completed, 100);
  EXPECT_NEAR(t.latency.p50, 2e6, 2.0);
  EXPECT_NEAR(t.latency.max, launch_overhead_ns() + 2e6, 2.0);
}

TEST(ExclusiveFluid, TwoHalfWidthComputeKernelsRunUnslowed) {
  // sm_fraction 0.5: each grid spans 66 of 132 SMs, so two fit side by side at full speed.
  const RunResult r = run_yaml(single_kernel_scenario("{process: closed, concurrency: 2}", "1ms",
                                                      ", sm_fraction: 0.5", "duration: 1s"));
  EXPECT_NEAR(tenant(r, "t").latency.p50, launch_overhead_ns() + 1e6, 2.0);
  // ... while two full-width compute kernels run one after the other (each waits for the other).
  const RunResult full = run_yaml(single_kernel_scenario("{process: closed, concurrency: 2}", "1ms",
                                                         ", sm_fraction: 1.0", "duration: 1s"));
  EXPECT_NEAR(tenant(full, "t").latency.p50, 2e6, 2.0);
}

TEST(ExclusiveStreams, AsynchronousLaunchesHideHostGapsShorterThanKernels) {
  // ready_k = max(finish_{k-1}, k * host_gap) + L. 4 kernels of 1 ms with host_gap 100 us: the
  // CPU runs ahead, so every kernel follows its predecessor after L: latency = 4 (L + 1 ms).
  // With host_gap 3 ms the CPU is the bottleneck: latency = 3 * 3ms + L + 1ms.
  auto scenario = [](const std::string& gap) {
    return R"(
name: streams
duration: 1s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: closed, concurrency: 1}
      request:
        kernels: [{name: k, duration: 1ms, repeat: 4}]
        host_gap: )" +
           gap + "\n";
  };
  const double l = launch_overhead_ns();
  EXPECT_NEAR(tenant(run_yaml(scenario("100us")), "t").latency.p50, 4 * (l + 1e6), 2.0);
  EXPECT_NEAR(tenant(run_yaml(scenario("3ms")), "t").latency.p50, 9e6 + l + 1e6, 2.0);
  EXPECT_NEAR(tenant(run_yaml(scenario("3ms")), "t").slowdown_mean, 1.0, 1e-9);
}

TEST(TokenScaledKernels, PrefillPerInputTokenAndOneDecodeStepPerOutputToken) {
  // 100 input tokens x 10 us prefill + 10 decode steps x 100 us, back to back, each of the 11
  // kernels after its launch overhead: latency = 11 L + 1 ms + 1 ms; memory = 1 MiB per token
  // held while the request runs.
  const RunResult r = run_yaml(R"(
name: llm
duration: 1s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: closed, concurrency: 1}
      tokens: {input: 100, output: 10}
      memory_per_token: 1MiB
      request:
        kernels:
          - {name: prefill, duration: 10us, per_token: input}
          - {name: decode, duration: 100us, memory_bound: 0.9, repeat: output_tokens}
)");
  const TenantResult& t = tenant(r, "t");
  ASSERT_GT(t.completed, 100);
  EXPECT_NEAR(t.latency.p50, 11 * launch_overhead_ns() + 2e6, 2.0);
  EXPECT_EQ(r.devices[0].memory_peak_bytes, 110LL << 20);
  // First token: after the prefill and the first decode step.
  EXPECT_NEAR(t.time_to_first_token.p50, 2 * launch_overhead_ns() + 1e6 + 100e3, 2.0);
}

TEST(TokenScaledKernels, TokenCountsComeFromTheTrace) {
  // tests/data/traces/small.csv carries input/output tokens per request; a kernel per output
  // token makes latency proportional to them (one request at a time, far apart).
  const std::string trace = std::string(GPUMUX_SOURCE_DIR) + "/tests/data/traces/small.csv";
  const RunResult r = run_yaml(R"(
name: llm-trace
duration: 100s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: trace, file: )" +
                               trace + R"(, format: csv, time_scale: 1000}
      request:
        kernels: [{name: decode, duration: 1us, repeat: output_tokens}]
)");
  const std::vector<TraceRequest> requests = read_trace(trace, TraceFormat::csv, 1000);
  std::int64_t tokens = 0;
  for (const TraceRequest& q : requests) tokens += q.output_tokens;
  ASSERT_GT(tokens, 0);
  // Every request's kernels: output_tokens x 1 us; total busy SM-time = tokens x 1 us.
  const double busy_ns = r.devices[0].sm_busy * static_cast<double>(r.sim_time_ns);
  EXPECT_NEAR(busy_ns, static_cast<double>(tokens) * 1e3, 1.0 + 1e-6 * tokens * 1e3);
}

std::string batched_scenario(const std::string& batching, const std::string& memory) {
  return R"(
name: batched
duration: 20s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: llm
    device: gpu0
    memory: )" +
         memory + R"(
    workload:
      arrivals: {process: closed, concurrency: 8}
      tokens: {input: 0, output: 10}
      memory_per_token: 512MiB
      )" +
         batching + R"(
      request:
        kernels:
          - {name: decode, duration: 10ms, memory_bound: 0.9, per_sequence: 1ms, repeat: output_tokens}
)";
}

TEST(ContinuousBatching, EightSequencesShareEachDecodeIteration) {
  // 8 requests admitted together; each iteration = L + 10 ms + 8 x 1 ms; 10 tokens each:
  // latency = 10 (L + 18 ms). Solo (batch of one) = 10 (L + 11 ms).
  const double l = launch_overhead_ns();
  const RunResult r = run_yaml(batched_scenario("batching: {max_batch: 8}", "0GiB"));
  const TenantResult& t = tenant(r, "llm");
  ASSERT_GT(t.completed, 500);
  EXPECT_NEAR(t.latency.p50, 10 * (l + 18e6), 2.0);
  EXPECT_NEAR(t.latency.max, 10 * (l + 18e6), 2.0);
  EXPECT_NEAR(t.slowdown_mean, (l + 18e6) / (l + 11e6), 1e-6);
  EXPECT_NEAR(t.time_to_first_token.p50, l + 18e6, 2.0);  // the end of the first iteration
  // Without batching the 8 streams each re-read the weights: 8 concurrent memory-bound decode
  // steps of 11 ms share the GPU's bandwidth, so a token takes far longer than in a shared
  // iteration.
  const RunResult u = run_yaml(batched_scenario("max_in_flight: 8", "0GiB"));
  EXPECT_GT(tenant(u, "llm").latency.p50, 3 * t.latency.p50);
}

TEST(ContinuousBatching, KvMemoryLimitsTheBatch) {
  // 5 GiB of KV per request (10 tokens x 512 MiB); the 79.25 GiB device minus 55 GiB held at
  // start leaves room for 4: two waves of 4 per 8 requests.
  const RunResult r = run_yaml(batched_scenario("batching: {max_batch: 8}", "55GiB"));
  const TenantResult& t = tenant(r, "llm");
  const double l = launch_overhead_ns();
  const double wave = 10 * (l + 14e6);
  // Steady state: each group of 4 waits for the other group's wave, then runs its own.
  EXPECT_NEAR(t.latency.p50, 2 * wave, 2.0);
  EXPECT_NEAR(t.queueing.p50, wave, 2.0);
  EXPECT_NEAR(t.throughput_per_s, 4 / (wave * 1e-9), 0.05 * 4 / (wave * 1e-9));
  EXPECT_EQ(t.oom_events, 0);
  EXPECT_LE(r.devices[0].memory_peak_bytes, r.devices[0].memory_bytes);
}

TEST(Determinism, SameSeedGivesIdenticalResultsAndAnotherSeedDiffers) {
  const std::string yaml = single_kernel_scenario("{process: poisson, rate: 800/s}",
                                                  "{lognormal: {median: 1ms, sigma: 0.5}}",
                                                  ", memory_bound: 0.4", "duration: 20s");
  const RunResult a = run_yaml(yaml), b = run_yaml(yaml);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    ASSERT_EQ(a.requests[i].arrival_ns, b.requests[i].arrival_ns);
    ASSERT_EQ(a.requests[i].finish_ns, b.requests[i].finish_ns);
  }
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.tenants[0].latency.p99, b.tenants[0].latency.p99);
  std::string other = yaml;
  other.replace(other.find("seed: 11"), 8, "seed: 12");
  const RunResult c = run_yaml(other);
  EXPECT_NE(a.tenants[0].latency.p99, c.tenants[0].latency.p99);
}

}  // namespace
}  // namespace gpumux
