// Benchmark: the Alibaba openb replay (FGD's setup: pods never deleted, the cluster fills) with
// each scheduling policy. Prints wall time, the final GPU allocation ratio, FGD fragmentation and
// the number of pods that failed to schedule.
//
//   build/bench/bench_cluster_openb [POD_CSV] [NODE_CSV] [REPEATS] [SAMPLE_S] [SHUFFLE_SEED]
//
// Defaults: scenarios/traces/alibaba-openb/openb_pod_list_default.csv and
// openb_node_list_gpu_node.csv (falls back to ../shared/traces/alibaba-gpu-v2023/). The CSVs are
// read by a minimal reader here (the columns FGD's simulator uses), not the scenario loader, so the
// figure is the replay alone.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/cluster/cluster_run.hpp"

using namespace gpumux;
using namespace gpumux::cluster;

namespace {

std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ',')) header.push_back(f);
  }
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream ss(line);
    std::string f;
    for (const std::string& h : header) {
      if (!std::getline(ss, f, ',')) f.clear();
      row[h] = f;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string first_existing(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (std::ifstream(p)) return p;
  }
  return paths.front();
}

ClusterSpec openb(const std::string& pods_csv, const std::string& nodes_csv) {
  ClusterSpec spec;
  std::map<std::string, int> pool_of;
  for (const auto& n : read_csv(nodes_csv)) {
    const std::string key =
        n.at("model") + "/" + n.at("gpu") + "/" + n.at("cpu_milli") + "/" + n.at("memory_mib");
    auto it = pool_of.find(key);
    if (it == pool_of.end()) {
      NodePoolSpec p;
      p.name = key;
      p.count = 0;
      p.gpu_model = n.at("model");
      p.gpus_per_node = std::stoi(n.at("gpu"));
      p.cpu_milli = std::stoll(n.at("cpu_milli"));
      p.memory_bytes = std::stoll(n.at("memory_mib")) << 20;
      p.sharing.sharing = SharingKind::fractional;
      spec.pools.push_back(p);
      it = pool_of.emplace(key, static_cast<int>(spec.pools.size() - 1)).first;
    }
    NodePoolSpec& p = spec.pools[static_cast<std::size_t>(it->second)];
    p.count += 1;
    p.node_names.push_back(n.at("sn"));
  }
  for (const auto& r : read_csv(pods_csv)) {
    PodSpec p;
    p.name = r.at("name");
    p.cpu_milli = std::stoll(r.at("cpu_milli"));
    p.memory_bytes = std::stoll(r.at("memory_mib")) << 20;
    const int num = std::stoi(r.at("num_gpu"));
    const int milli = std::stoi(r.at("gpu_milli"));
    if (num > 0) p.gpu_resources["nvidia.com/gpu"] = num;
    if (num == 1 && milli < 1000) p.gpu_milli = milli;
    std::string spec_s = r.at("gpu_spec");
    std::stringstream ss(spec_s);
    std::string m;
    while (std::getline(ss, m, '|')) {
      if (!m.empty()) p.gpu_models.push_back(m);
    }
    p.arrival = std::stoll(r.at("creation_time")) * kSecond;
    p.workload.duration =
        (std::stoll(r.at("deletion_time")) - std::stoll(r.at("creation_time"))) * kSecond;
    p.pod_class = num == 0 ? "cpu" : (p.gpu_milli > 0 ? "share" : std::to_string(num) + "-gpu");
    spec.pods.push_back(p);
  }
  std::stable_sort(spec.pods.begin(), spec.pods.end(),
                   [](const PodSpec& a, const PodSpec& b) { return a.arrival < b.arrival; });
  spec.scheduler.ignore_deletions = true;
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = GPUMUX_SOURCE_DIR;
  const std::string pods =
      argc > 1
          ? argv[1]
          : first_existing({dir + "/scenarios/traces/alibaba-openb/openb_pod_list_default.csv",
                            dir + "/../shared/traces/alibaba-gpu-v2023/"
                                  "openb_pod_list_default.csv",
                            "/work/shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv"});
  const std::string nodes =
      argc > 2
          ? argv[2]
          : first_existing({dir + "/scenarios/traces/alibaba-openb/openb_node_list_gpu_node.csv",
                            dir + "/../shared/traces/alibaba-gpu-v2023/"
                                  "openb_node_list_gpu_node.csv",
                            "/work/shared/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"});
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  ClusterSpec spec = openb(pods, nodes);
  // Optional: a sample period in seconds (0 = every event instant), and a seed that shuffles
  // the arrival order as FGD's experiments do (--shuffle-pod), keeping the arrival times.
  if (argc > 4) spec.sample = std::stoll(argv[4]) * kSecond;
  if (argc > 5) {
    std::mt19937_64 rng(std::stoull(argv[5]));
    std::vector<Nanos> times;
    for (const PodSpec& p : spec.pods) times.push_back(p.arrival);
    std::shuffle(spec.pods.begin(), spec.pods.end(), rng);
    for (std::size_t i = 0; i < times.size(); ++i) spec.pods[i].arrival = times[i];
    spec.scheduler.tie_seed = std::stoull(argv[5]);
  }
  if (spec.pods.empty() || spec.pools.empty()) {
    std::fprintf(stderr, "bench_cluster_openb: cannot read %s / %s\n", pods.c_str(), nodes.c_str());
    return 2;
  }
  int node_count = 0;
  for (const NodePoolSpec& p : spec.pools) node_count += p.count;
  std::printf("openb: %zu pods, %d nodes in %zu pools (%s)\n", spec.pods.size(), node_count,
              spec.pools.size(), pods.c_str());
  std::printf("%-10s %10s %10s %12s %12s %10s %10s %8s\n", "policy", "wall_s", "best_s",
              "alloc_milli", "alloc_gpus", "frag_ratio", "failed", "states");
  for (SchedulingPolicy policy : {SchedulingPolicy::fgd, SchedulingPolicy::best_fit,
                                  SchedulingPolicy::worst_fit, SchedulingPolicy::first_fit}) {
    spec.scheduler.policy = policy;
    double best = 1e9, sum = 0;
    ClusterResult r;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      r = run_cluster(spec);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
      sum += s;
    }
    const ClusterSample& last = r.samples.back();
    const double free = static_cast<double>(last.gpu_milli_total - last.gpu_milli_allocated);
    int failed = 0;
    for (const PodRecord& p : r.pods) failed += p.failed_at >= 0 ? 1 : 0;
    std::printf("%-10s %10.3f %10.3f %11.2f%% %11.2f%% %9.2f%% %10d %8zu\n", policy_name(policy),
                sum / repeats, best,
                100.0 * static_cast<double>(last.gpu_milli_allocated) / last.gpu_milli_total,
                100.0 * last.gpus_allocated / last.gpus_total,
                free > 0 ? 100.0 * last.fragmentation_milli / free : 0.0, failed,
                r.fragmentation_states);
    if (std::getenv("OPENB_DEBUG")) {
      std::map<std::string, int> by_class;
      for (const PodRecord& p : r.pods)
        if (p.failed_at >= 0) by_class[p.pod_class + " " + p.pending_reason]++;
      for (auto& [k, v] : by_class) std::printf("   %s: %d\n", k.c_str(), v);
      int shown = 0;
      for (const PodRecord& p : r.pods) {
        if (p.failed_at >= 0 && shown++ < 6) {
          const PodSpec& ps = spec.pods[p.spec_index];
          std::printf("   fail %s cpu %lld mem %lld milli %d models %zu %s | %s\n", p.name.c_str(),
                      (long long)ps.cpu_milli, (long long)(ps.memory_bytes >> 20), ps.gpu_milli,
                      ps.gpu_models.size(), ps.gpu_models.empty() ? "" : ps.gpu_models[0].c_str(),
                      p.pending_message.c_str());
        }
      }
      double next = 0.5;
      for (const ClusterSample& s : r.samples) {
        const double arrived = s.arrived_gpu_milli / s.gpu_milli_total;
        if (arrived >= next) {
          std::printf("   arrived %.2f alloc %.4f frag %.0f pending %d\n", arrived,
                      double(s.gpu_milli_allocated) / s.gpu_milli_total, s.fragmentation_milli,
                      s.pending);
          next += 0.05;
        }
      }
    }
  }
  return 0;
}
