// Benchmark: the Alibaba openb replay (FGD's setup: pods never deleted, the cluster fills) with
// each scheduling policy, through the cluster loader. Prints the load time, the replay's wall
// time per policy (mean and best of REPEATS), the final GPU allocation, FGD fragmentation as a
// share of the free capacity, and the pods that failed to schedule on arrival.
//
//   build/bench/bench_cluster_openb [SCENARIO] [REPEATS] [SHUFFLE_SEED] [--set KEY=VALUE ...]
//
// SCENARIO defaults to scenarios/cluster/openb-default.yaml; another openb variant with
// --set cluster.openb.pods=scenarios/traces/alibaba-openb/openb_pod_list_gpushare40.csv (a --set
// path is relative to the working directory).
// SHUFFLE_SEED (optional, > 0) shuffles the arrival order as FGD's experiments do
// (--shuffle-pod), keeping the arrival times, and seeds the tie-break.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/cluster_run.hpp"

using namespace gpumux;
using namespace gpumux::cluster;

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  std::vector<Override> overrides;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--set" && i + 1 < argc) {
      overrides.push_back(parse_override(argv[++i]));
    } else {
      positional.push_back(a);
    }
  }
  const std::string scenario = positional.size() > 0 ? positional[0]
                                                     : std::string(GPUMUX_SOURCE_DIR) +
                                                           "/scenarios/cluster/openb-default.yaml";
  const int repeats = positional.size() > 1 ? std::stoi(positional[1]) : 3;
  const std::uint64_t shuffle = positional.size() > 2 ? std::stoull(positional[2]) : 0;
  try {
    const auto l0 = std::chrono::steady_clock::now();
    ClusterSpec spec = load_cluster(scenario, overrides);
    const double load_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
    if (shuffle > 0) {
      std::mt19937_64 rng(shuffle);
      std::vector<Nanos> times;
      for (const PodSpec& p : spec.pods) times.push_back(p.arrival);
      std::shuffle(spec.pods.begin(), spec.pods.end(), rng);
      for (std::size_t i = 0; i < times.size(); ++i) spec.pods[i].arrival = times[i];
      spec.scheduler.tie_seed = shuffle;
    }
    int nodes = 0;
    for (const NodePoolSpec& p : spec.pools) nodes += p.count;
    std::printf("%s: %zu pods, %d nodes in %zu pools; loaded in %.3f s%s\n", scenario.c_str(),
                spec.pods.size(), nodes, spec.pools.size(), load_s,
                shuffle > 0 ? " (arrival order shuffled)" : "");
    std::printf("%-10s %8s %8s %12s %11s %11s %8s %8s\n", "policy", "mean_s", "best_s",
                "alloc_milli", "alloc_gpus", "frag/free", "failed", "states");
    for (SchedulingPolicy policy : {SchedulingPolicy::fgd, SchedulingPolicy::best_fit,
                                    SchedulingPolicy::worst_fit, SchedulingPolicy::first_fit}) {
      spec.scheduler.policy = policy;
      double best = 1e9, sum = 0;
      ClusterResult r;
      for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        r = run_cluster(spec);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, s);
        sum += s;
      }
      const ClusterSample& last = r.samples.back();
      const double free = static_cast<double>(last.gpu_milli_total - last.gpu_milli_allocated);
      int failed = 0;
      for (const PodRecord& p : r.pods) failed += p.failed_at >= 0 ? 1 : 0;
      std::printf("%-10s %8.3f %8.3f %11.2f%% %10.2f%% %10.2f%% %8d %8zu\n", policy_name(policy),
                  sum / repeats, best,
                  100.0 * static_cast<double>(last.gpu_milli_allocated) /
                      static_cast<double>(last.gpu_milli_total),
                  100.0 * last.gpus_allocated / last.gpus_total,
                  free > 0 ? 100.0 * last.fragmentation_milli / free : 0.0, failed,
                  r.fragmentation_states);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cluster_openb: %s\n", e.what());
    return 2;
  }
  return 0;
}
