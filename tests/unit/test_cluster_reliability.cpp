// Issue 27, the cluster layer's input reliability: every case of the issue's list gives a located
// InputError (file:line:column: key) or a correct, finite answer; never a wrapped time, a
// truncated count or an unbounded load.
//   - times: a drawn arrival beyond int64 ns, arrival + duration beyond it, gang_steps x step and
//     an all-reduce of petabytes over a bit per second (saturate: the pod never completes);
//   - counts: a GPU request beyond int (never fits, never truncated to one GPU);
//   - the work budget: pods summed over entries, cluster.sample, openb rows, workload pods;
//   - openb: non-UTF-8 bytes refused at their line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/openb_reader.hpp"
#include "models/cluster/scheduler.hpp"
#include "models/scenario/work_estimate.hpp"

namespace gpumux::cluster {
namespace {

// One pool of `gpus` GPUs per node, `nodes` nodes, and the given pods entries.
std::string scenario(const std::string& pods, int gpus = 2, int nodes = 1,
                     const std::string& extra = "") {
  return fmt::format(R"(name: issue-27
{}cluster:
  pools:
    - name: h100
      count: {}
      gpu: h100-sxm-80gb
      gpus_per_node: {}
      cpu: "64"
      memory: 256Gi
      network: 1bit/s
  pods:
{})",
                     extra, nodes, gpus, pods);
}

// The InputError's message, or "" when none is thrown.
std::string error_of(const std::string& text) {
  try {
    load_cluster_text(text, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterReliability, DrawnArrivalBeyondInt64IsRefusedAtArrivals) {
  // 3.2e-10 pods/s: one every 3.125e9 s; the fourth would be at 9.4e18 ns, beyond int64 (it
  // saturated at INT64_MAX, and arrival + duration wrapped).
  const std::string e = error_of(scenario(R"(    - name: slow
      arrivals: {process: constant, rate: 3.2e-10/s, count: 4}
      requests: {nvidia.com/gpu: 1}
      duration: 1s
)"));
  EXPECT_NE(e.find("s.yaml:13:17: cluster.pods.0.arrivals"), std::string::npos) << e;
  EXPECT_NE(e.find("arrival 4 of 4"), std::string::npos) << e;
}

TEST(ClusterReliability, ArrivalPlusDurationBeyondInt64IsRefusedAtDuration) {
  // The third arrival is at 6.25e9 s; + 4e9 s is beyond int64 ns.
  const std::string e = error_of(scenario(R"(    - name: late
      arrivals: {process: constant, rate: 3.2e-10/s, count: 3}
      requests: {nvidia.com/gpu: 1}
      duration: 4000000000s
)"));
  EXPECT_NE(e.find("s.yaml:15:17: cluster.pods.0.duration: pod late-2: arrival (6250000000 s) + "
                   "duration (4000000000 s) is beyond 9223372036 s"),
            std::string::npos)
      << e;
}

TEST(ClusterReliability, QueuedPodWhoseEndWouldWrapNeverCompletes) {
  // Each pod alone fits int64 (4e18 + 4e18 ns); the second waits for the first's GPU and would
  // end at 1.2e19 ns: it never completes (saturated), the end time stays the last real event.
  const ClusterSpec spec = load_cluster_text(scenario(R"(    - name: big
      count: 2
      arrival: 4000000000s
      requests: {nvidia.com/gpu: 1}
      duration: 4000000000s
)",
                                                      1),
                                             "s.yaml");
  const ClusterResult r = run_cluster(spec);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].start, 4'000'000'000 * kSecond);
  EXPECT_EQ(r.pods[0].end, 8'000'000'000 * kSecond);
  EXPECT_EQ(r.pods[1].start, 8'000'000'000 * kSecond);
  EXPECT_EQ(r.pods[1].end, -1);  // beyond int64 ns: still running when the replay ends
  EXPECT_EQ(r.end_time, 8'000'000'000 * kSecond);
  for (const PoolRecord& p : r.pools) EXPECT_GE(p.node_seconds, 0);
}

TEST(ClusterReliability, AllReduceOfPetabytesOverABitPerSecondSaturates) {
  // 4000 PB per step over 1 bit/s: 6.4e28 ns, beyond int64: the step saturates (llround gave
  // LLONG_MIN), and so does gang_steps x step.
  EXPECT_EQ(ring_allreduce_time(4'000'000'000'000'000'000, 2, 1.0 / 8), INT64_MAX);
  const ClusterSpec spec = load_cluster_text(scenario(R"(    - name: dp
      count: 2
      gang: 2
      gang_bytes_per_step: 4000PB
      gang_steps: 1000000
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1h
)",
                                                      1, 2),
                                             "s.yaml");
  const ClusterResult r = run_cluster(spec);
  ASSERT_EQ(r.pods.size(), 2u);
  for (const PodRecord& p : r.pods) {
    EXPECT_EQ(p.start, 0);
    EXPECT_EQ(p.allreduce_step_ns, INT64_MAX);
    EXPECT_EQ(p.end, -1);
  }
  EXPECT_GE(r.end_time, 0);
}

TEST(ClusterReliability, GpuCountBeyondIntNeverFitsAndIsNotTruncated) {
  // 2^32 + 1 GPUs: truncated to int it was 1 GPU, and ran on a 2-GPU node.
  for (const char* count : {"4294967297", "3000000", "3"}) {
    const ClusterSpec spec = load_cluster_text(scenario(fmt::format(R"(    - name: huge
      arrival: 0s
      requests: {{nvidia.com/gpu: {}}}
      duration: 1s
)",
                                                                    count)),
                                               "s.yaml");
    const ClusterResult r = run_cluster(spec);
    ASSERT_EQ(r.pods.size(), 1u);
    EXPECT_EQ(r.pods[0].start, -1) << count;
    EXPECT_EQ(r.pods[0].pending_reason, "Insufficient nvidia.com/gpu") << count;
  }
}

TEST(ClusterReliability, DemandIs64BitAndSaturates) {
  ResourceNames names;
  NodePoolSpec pool;
  pool.name = "p";
  pool.gpu_model = "h100-sxm-80gb";
  pool.gpus_per_node = 2;
  const PoolTemplate t = advertise(pool, 0, names);
  PodSpec pod;
  pod.gpu_resources["nvidia.com/gpu"] = 4'294'967'297;
  Demand d = demand_on(pod, pool, t, names);
  ASSERT_EQ(d.needs.size(), 1u);
  EXPECT_EQ(d.needs[0].count, 4'294'967'297);
  EXPECT_EQ(d.gpu_milli_total, 4'294'967'297'000);
  pod.gpu_resources["nvidia.com/gpu"] = INT64_MAX / 10;
  d = demand_on(pod, pool, t, names);
  EXPECT_EQ(d.gpu_milli_total, INT64_MAX);  // saturated, not wrapped
}

TEST(ClusterReliability, PodsAreBudgetedOverAllEntries) {
  // Three entries of 900,000 pods each: each under the per-entry cap, together over the budget;
  // refused before any pod is expanded, at the largest entry's count.
  std::string pods;
  for (int i = 0; i < 3; ++i) {
    pods += fmt::format(R"(    - name: p{}
      count: {}
      arrival: 0s
      requests: {{nvidia.com/gpu: 1}}
      duration: 1s
)",
                        i, i == 1 ? 950000 : 900000);
  }
  const std::string e = error_of(scenario(pods));
  EXPECT_NE(e.find("s.yaml:18:14: cluster.pods.1.count:"), std::string::npos) << e;
  EXPECT_NE(e.find("2.75e+06 pods over 3 pods[] entries"), std::string::npos) << e;
  EXPECT_NE(e.find("allow_large"), std::string::npos) << e;
}

TEST(ClusterReliability, SampleIsBudgeted) {
  const std::string pods = R"(    - name: p
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1s
)";
  const std::string text = scenario(pods) + "  duration: 1h\n  sample: 1us\n";
  const std::string e = error_of(text);
  EXPECT_NE(e.find("cluster.sample"), std::string::npos) << e;
  EXPECT_NE(e.find("3.6e+09 samples"), std::string::npos) << e;
  // allow_large: true lets it load (the replay then queues one sample at a time).
  EXPECT_EQ(
      error_of(scenario(pods, 2, 1, "allow_large: true\n") + "  duration: 1h\n  sample: 1us\n"),
      "");
  EXPECT_EQ(error_of(scenario(pods) + "  duration: 1h\n  sample: 1ms\n"), "");
}

TEST(ClusterReliability, SampledReplayMatchesThePeriod) {
  const ClusterSpec spec = load_cluster_text(scenario(R"(    - name: p
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1s
)") + "  duration: 10s\n  sample: 1s\n",
                                             "s.yaml");
  const ClusterResult r = run_cluster(spec);
  ASSERT_EQ(r.samples.size(), 11u);  // 0, 1, ..., 10 s
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    EXPECT_EQ(r.samples[i].time, static_cast<Nanos>(i) * kSecond);
  }
}

TEST(ClusterReliability, OpenbRowsAreBudgetedBeforeParsing) {
  std::string csv = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
  for (int i = 0; i < 11; ++i) csv += fmt::format("p{},1000,1024,1,1000\n", i);
  EXPECT_EQ(parse_openb_pods(csv, "pods.csv", 11).size(), 11u);
  try {
    parse_openb_pods(csv, "pods.csv", 10, SourceLocation{"s.yaml", 7, 11, "cluster.openb.pods"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("s.yaml:7:11: cluster.openb.pods: pods.csv: 11 pods", 0), 0u) << m;
  }
}

TEST(ClusterReliability, OpenbNonUtf8IsRefusedAtItsLine) {
  const std::string nodes =
      "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,V100\nn1,1000,1024,1,P\x95\x31\x30\x30\n";
  try {
    parse_openb_nodes(nodes, "nodes.csv");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("nodes.csv:3:17: not UTF-8 text (byte 0x95", 0), 0u) << m;
  }
}

TEST(ClusterReliability, WorkloadPodsAreBudgetedAtValidate) {
  // 100 pods, each a 1e6/s service, for 1 h: 3.6e11 requests, refused at load at the entry.
  const std::string e = error_of(scenario(R"(    - name: svc
      count: 100
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      workload:
        workload:
          arrivals: {process: poisson, rate: 1000000/s}
          request:
            kernels: [{name: k, duration: 10us}]
)") + "  duration: 1h\n");
  EXPECT_NE(e.find("s.yaml:12:7: cluster.pods.0.workload:"), std::string::npos) << e;
  EXPECT_NE(e.find("3.6e+11 requests"), std::string::npos) << e;
}

TEST(ClusterReliability, CatalogWorkloadPodsAreBudgetedOnTheirKernels) {
  // A closed-loop catalog pod (ResNet-50 at batch 256: milliseconds a request on an H100). Its
  // kernels are built where it lands; the budget builds them on the pools' GPUs. Without them
  // the closed loop was estimated at a request per microsecond: 2 x 578 s = 1.16e9 requests,
  // refused, where the replay serves a few hundred thousand (the plan's cluster.yaml hit it).
  const std::string pod = R"(    - name: scorer
      count: {}
      arrival: 0s
      requests: {{nvidia.com/gpu: 1}}
      workload:
        workload:
          arrivals: {{process: closed, concurrency: 2}}
          model: resnet50
          batch: 256
)";
  EXPECT_EQ(error_of(scenario(fmt::format(fmt::runtime(pod), 1)) + "  duration: 578s\n"), "");
  // The budget still holds on the built kernels: 20,000 such pods for a day are refused.
  const std::string e =
      error_of(scenario(fmt::format(fmt::runtime(pod), 20000)) + "  duration: 24h\n");
  EXPECT_NE(e.find("s.yaml:12:7: cluster.pods.0.workload: the workload pods ask for"),
            std::string::npos)
      << e;
}

TEST(ClusterReliability, CostPerHourIsBoundedSoCostsStayFinite) {
  const std::string pods = R"(    - name: p
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1s
)";
  std::string text = scenario(pods);
  text.replace(text.find("      network: 1bit/s"), 0, "      cost_per_hour: 1e308\n");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("s.yaml:10:22: cluster.pools.0.cost_per_hour: at most 1e+08"), std::string::npos)
      << e;
}

TEST(ClusterReliability, DevicePluginDeviceSubsetIsRefusedNotIgnored) {
  const std::string pods = R"(    - name: p
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      duration: 1s
)";
  const std::string plugin = R"(      sharing:
        device_plugin:
          version: v1
          sharing:
            timeSlicing:
              resources:
                - {name: nvidia.com/gpu, replicas: 2, devices: DEVICES}
)";
  const auto with_devices = [&](const std::string& devices) {
    std::string text = scenario(pods);
    std::string block = plugin;
    block.replace(block.find("DEVICES"), 7, devices);
    text.replace(text.find("      network: 1bit/s\n"), 0, block);
    return text;
  };
  const std::string e = error_of(with_devices("[99]"));
  EXPECT_NE(e.find("s.yaml:16:"), std::string::npos) << e;
  EXPECT_NE(e.find("resources.0.devices: sharing only some devices of nvidia.com/gpu is not "
                   "modelled"),
            std::string::npos)
      << e;
  EXPECT_EQ(error_of(with_devices("all")), "");
}

}  // namespace
}  // namespace gpumux::cluster
