#pragma once
// The cluster scheduler tests' builders (tests/unit/test_cluster_*.cpp): a node pool, a pod, and
// the record of a pod by name in a replay's result.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/cluster/cluster_run.hpp"
#include "models/cluster/cluster_spec.hpp"

namespace gpumux::cluster::testing {

inline NodePoolSpec pool(const std::string& name, int count, int gpus,
                         const std::string& model = "") {
  NodePoolSpec p;
  p.name = name;
  p.count = count;
  p.gpus_per_node = gpus;
  p.gpu_model = model;
  p.cpu_milli = 64000;
  p.memory_bytes = std::int64_t{256} << 30;
  p.cost_per_hour = 10.0;
  p.network_bytes_per_s = 25e9;
  return p;
}

inline PodSpec pod(const std::string& name, Nanos arrival, Nanos duration,
                   std::map<std::string, std::int64_t> gpu, int gpu_milli = 0) {
  PodSpec p;
  p.name = name;
  p.arrival = arrival;
  p.cpu_milli = 1000;
  p.memory_bytes = std::int64_t{1} << 30;
  p.gpu_resources = std::move(gpu);
  p.gpu_milli = gpu_milli;
  p.workload.duration = duration;
  return p;
}

inline const PodRecord& find(const ClusterResult& r, const std::string& name) {
  for (const PodRecord& p : r.pods) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pod " + name);
}

}  // namespace gpumux::cluster::testing
