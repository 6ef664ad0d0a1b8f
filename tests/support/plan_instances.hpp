#pragma once
// The planner tests' instances (tests/unit/test_plan*.cpp): random small planning instances and
// a node-sized one (kNode).
#include <fmt/format.h>

#include <random>
#include <string>

namespace gpumux::testing {

/// A random planning instance: a few inference tenants with memory, load and SLOs that make
/// some packings work and others fail.
inline std::string random_instance(std::mt19937& rng, int tenants, int max_gpus) {
  std::uniform_int_distribution<int> memory_gib(2, 45);
  std::uniform_int_distribution<int> rate(20, 400);
  std::uniform_int_distribution<int> kernel_us(100, 3000);
  std::uniform_real_distribution<double> fraction(0.2, 1.0);
  std::uniform_real_distribution<double> bound(0.0, 0.9);
  std::uniform_int_distribution<int> slo_x(2, 30);
  std::uniform_int_distribution<int> coin(0, 5);
  std::string yaml = fmt::format(
      "name: random\nseed: {}\nduration: 2s\nwarmup: 200ms\n"
      "plan:\n  gpus: [{{model: h100-sxm-80gb, cost_per_hour: 4.0}}, "
      "{{model: a100-sxm4-40gb, cost_per_hour: 1.5}}]\n  max_gpus: {}\n"
      "tenants:\n",
      rng() % 1000, max_gpus);
  for (int t = 0; t < tenants; ++t) {
    const int us = kernel_us(rng);
    const int r = rate(rng) * 1000 / std::max(us, 1000) + 5;  // keep solo load moderate
    yaml += fmt::format("  - name: t{}\n    memory: {}GiB\n", t, memory_gib(rng));
    const int kind = coin(rng);
    if (kind == 0) yaml += "    isolation: memory\n";
    if (kind == 1) yaml += "    isolation: fault\n";
    yaml += fmt::format(
        "    workload:\n      arrivals: {{process: poisson, rate: {}/s}}\n      request:\n"
        "        kernels:\n          - {{name: k, duration: {}us, sm_fraction: {:.2f}, "
        "memory_bound: {:.2f}}}\n",
        r, us, fraction(rng), bound(rng));
    if (kind == 2) {
      yaml += "    best_effort: true\n";
    } else {
      yaml += fmt::format("    slo: {{p99: {}us}}\n", us * slo_x(rng));
    }
  }
  return yaml;
}

inline const char* kNode = R"(
name: node
seed: 5
duration: 4s
warmup: 500ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0, currency: EUR}]
  max_gpus: 4
tenants:
  - name: embed
    memory: 4GiB
    isolation: fault
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request:
        kernels:
          - {name: enc, duration: 300us, sm_fraction: 0.5, memory_bound: 0.5, repeat: 2}
    slo: {p99: 10ms}
  - name: rerank
    memory: 6GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: score, duration: 1ms, sm_fraction: 0.6, memory_bound: 0.3}
    slo: {p99: 20ms}
  - name: big
    memory: 60GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request:
        kernels:
          - {name: gemm, duration: 8ms, sm_fraction: 1.0, memory_bound: 0.3}
    slo: {p99: 60ms}
  - name: batch
    memory: 30GiB
    best_effort: true
    workload:
      arrivals: {process: closed, concurrency: 2}
      request:
        kernels:
          - {name: step, duration: 20ms, sm_fraction: 1.0, memory_bound: 0.4}
)";

}  // namespace gpumux::testing
