#pragma once
// Test helper: random scenarios for property tests (test_direct_path: the direct path equals the
// queued one; test_tenant_order: the order of the tenant list is not physics). A few GPUs, each
// under a registered strategy drawn from the registry (every one of them; a strategy that refuses
// several clients on a device gets one) or MIG with exclusive instances beside each other; a few
// tenants on each with random arrivals (poisson, constant: exact ties, a trace, closed loops),
// kernels, windows, memory and faults.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/strategies/registry.hpp"

namespace gpumux::testing {

class ScenarioMaker {
 public:
  /// The scenarios' shape. The default is the original generator (its scenarios are unchanged).
  struct Shape {
    int max_gpus = 3;
    /// With some chance, a data-parallel tenant on two more exclusive GPUs of its own (a
    /// collective kernel joins their events), and sometimes a second such pair.
    bool multi_gpu_tenants = false;
  };
  ScenarioMaker(std::uint32_t seed, const std::filesystem::path& trace)
      : ScenarioMaker(seed, trace, Shape{}) {}
  ScenarioMaker(std::uint32_t seed, const std::filesystem::path& trace, Shape shape)
      : rng_(seed), trace_(trace), shape_(shape) {}

  /// The scenario's YAML. With `permutation` != 0, the same scenario (every number drawn the same)
  /// with its tenant list in an order drawn from `permutation`.
  std::string make(std::uint32_t permutation = 0) {
    std::ostringstream y;
    const int gpus = pick(1, shape_.max_gpus);
    y << "name: direct-" << pick(0, 1 << 20) << "\nseed: " << pick(1, 1000) << "\n";
    const int duration_ms = pick(50, 400);
    y << "duration: " << duration_ms << "ms\n";
    if (chance(0.4)) y << "warmup: " << pick(1, duration_ms / 2) << "ms\n";
    const char* samples[] = {"1ms", "7ms", "50ms", "1s"};
    y << "output: {sample: " << samples[pick(0, 3)] << ", kernels: true"
      << (chance(0.3) ? ", percentiles: sketch" : "") << "}\n";
    y << "gpus:\n";
    std::vector<std::pair<std::string, int>> devices;  // device, tenants on it
    const std::vector<const Strategy*>& all = strategies();
    const int registered = static_cast<int>(all.size());
    for (int g = 0; g < gpus; ++g) {
      const std::string name = fmt::format("g{}", g);
      // Half the GPUs exclusive by default (the direct path's case), then each registered
      // strategy named, then MIG.
      const int kind = pick(0, registered + 4);
      y << "  - {name: " << name << ", model: h100-sxm-80gb";
      if (kind <= 3) {
        y << "}\n";  // exclusive (the default)
        devices.emplace_back(name, 1);
        used_.insert(default_strategy().name());
      } else if (kind - 4 < registered) {
        const Strategy& s = *all[static_cast<std::size_t>(kind - 4)];
        y << ", sharing: {mode: " << s.name();
        const std::vector<std::string> keys = s.keys();
        if (std::find(keys.begin(), keys.end(), "active_thread_percentage") != keys.end() &&
            chance(0.5)) {
          y << ", active_thread_percentage: 40";
        }
        if (std::find(keys.begin(), keys.end(), "client_order") != keys.end() && chance(0.3)) {
          y << ", client_order: launch_order";
        }
        y << "}}\n";
        int clients = pick(1, 3);  // one client is eligible for the direct path too
        if (!s.placement_error(name, clients).empty()) clients = 1;
        devices.emplace_back(name, clients);
        used_.insert(s.name());
      } else {
        y << ", mig: [3g.40gb, 2g.20gb]}\n";
        devices.emplace_back(name + "/0", 1);
        devices.emplace_back(name + "/1", 1);
        used_.insert("mig");
      }
    }
    const int pairs = shape_.multi_gpu_tenants ? (chance(0.5) ? pick(1, 2) : 0) : 0;
    for (int p = 0; p < pairs; ++p) {
      y << "  - {name: dp" << p << ", model: h100-sxm-80gb, count: 2}\n";  // dpP-0, dpP-1
    }
    y << "tenants:\n";
    std::vector<std::string> names, tenants;
    int t = 0;
    for (const auto& [device, count] : devices) {
      for (int i = 0; i < count; ++i, ++t) {
        const std::string name = fmt::format("t{}", t);
        names.push_back(name);
        tenants.push_back(tenant(name, device, duration_ms));
      }
    }
    for (int p = 0; p < pairs; ++p, ++t) {
      const std::string name = fmt::format("t{}", t);
      names.push_back(name);
      tenants.push_back(data_parallel(name, fmt::format("[dp{0}-0, dp{0}-1]", p)));
    }
    std::string faults;
    if (chance(0.35)) {
      faults = "faults:\n  - {tenant: " +
               names[static_cast<std::size_t>(pick(0, static_cast<int>(names.size()) - 1))] +
               ", at: " + std::to_string(pick(1, duration_ms - 1)) +
               "ms, kind: fatal, recovery: " + std::to_string(pick(1, 40)) + "ms}\n";
    }
    if (permutation != 0) {
      std::mt19937 order(permutation);
      std::shuffle(tenants.begin(), tenants.end(), order);
    }
    for (const std::string& block : tenants) y << block;
    y << faults;
    return y.str();
  }

  /// The strategies (canonical names, and "mig") the scenarios made so far use.
  const std::set<std::string>& strategies_used() const { return used_; }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  std::string duration() {
    switch (pick(0, 3)) {
      case 0:
        return std::to_string(pick(20, 900)) + "us";
      case 1:
        return std::string("{exponential: ") + std::to_string(pick(20, 900)) + "us}";
      case 2:
        return std::string("{lognormal: {median: ") + std::to_string(pick(20, 500)) +
               "us, sigma: 0.6}}";
      default:
        return std::string("{uniform: {min: 10us, max: ") + std::to_string(pick(20, 900)) + "us}}";
    }
  }

  std::string tenant(const std::string& name, const std::string& device, int duration_ms) {
    std::ostringstream y;
    y << "  - name: " << name << "\n    device: " << device << "\n";
    if (chance(0.2)) {
      const int from = pick(0, duration_ms / 3);
      y << "    active: {from: " << from << "ms, until: " << pick(from + 1, duration_ms) << "ms}\n";
    }
    y << "    workload:\n";
    const int process = pick(0, 5);
    if (process <= 2) {
      y << "      arrivals: {process: poisson, rate: " << pick(100, 4000) << "/s}\n";
    } else if (process == 3) {
      // Constant arrivals and fixed kernels make exact ties (arrival = completion).
      y << "      arrivals: {process: constant, rate: " << (chance(0.5) ? 1000 : pick(200, 3000))
        << "/s}\n";
    } else if (process == 4) {
      y << "      arrivals: {process: trace, file: " << trace_.string() << ", format: csv}\n";
    } else {
      y << "      arrivals: {process: closed, concurrency: " << pick(1, 3)
        << ", think: " << pick(0, 300) << "us}\n";
    }
    const bool tokens = chance(0.3);
    if (tokens) {
      y << "      tokens: {input: {uniform: {min: 1, max: 64}}, output: {uniform: {min: 0, max: "
           "4}}}\n";
    }
    y << "      request:\n        kernels:\n";
    // Half the workloads launch one kernel once per request (the direct path's single-launch
    // loop), the others several (its general loop).
    const bool single = chance(0.5);
    const int kernels = single ? 1 : pick(1, 3);
    for (int k = 0; k < kernels; ++k) {
      const double fractions[] = {0.25, 0.5, 1.0};
      const double bounds[] = {0.0, 0.4, 1.0};
      y << "          - {name: k" << k << ", duration: " << duration()
        << ", sm_fraction: " << fractions[pick(0, 2)];
      if (chance(0.4)) {
        // Overlapped phases (contention law 2): the longer phase is 1, the other a share.
        const double shares[] = {0.0, 0.125, 0.5, 0.9, 1.0};
        const double other = shares[pick(0, 4)];
        const bool memory_longer = chance(0.5);
        y << ", memory_bound: " << (memory_longer ? 1.0 : other)
          << ", busy_share: " << (memory_longer ? other : 1.0);
      } else {
        y << ", memory_bound: " << bounds[pick(0, 2)];
      }
      if (single) {
        if (chance(0.2)) y << ", per_sequence: " << pick(1, 20) << "us";
      } else if (tokens && chance(0.5)) {
        y << ", repeat: output_tokens";
      } else {
        y << ", repeat: " << pick(1, 2);
      }
      if (!single && tokens && chance(0.3)) y << ", per_token: input";
      if (chance(0.2)) y << ", waves: " << pick(1, 20);
      if (chance(0.4)) {
        // The grid and, for most, the per-block footprint (co-residency, contention law 1c).
        y << ", blocks: " << pick(8, 600);
        if (chance(0.6)) {
          const int threads[] = {64, 128, 256, 512, 1024};
          y << ", block: {threads: " << threads[pick(0, 4)];
          if (chance(0.5)) y << ", registers: " << pick(16, 64);
          if (chance(0.4)) y << ", shared_memory: " << pick(0, 96) << "KiB";
          y << "}";
        } else if (chance(0.5)) {
          y << ", blocks_per_sm: " << pick(1, 4);
        }
      }
      y << "}\n";
    }
    if (chance(0.3)) y << "        host_gap: " << pick(1, 30) << "us\n";
    if (chance(0.2)) y << "        cuda_graph: true\n";
    if (chance(0.15)) y << "      max_in_flight: 2\n";
    if (chance(0.1)) y << "      memory_per_request: 1GiB\n";
    // Per-token memory (a KV cache growing with the request's tokens): not direct-path eligible.
    if (tokens && chance(0.3)) y << "      memory_per_token: " << pick(1, 64) << "KiB\n";
    return y.str();
  }

  // A data-parallel step on DEVICES: two kernels per GPU, the second a collective.
  std::string data_parallel(const std::string& name, const std::string& devices) {
    std::ostringstream y;
    y << "  - name: " << name << "\n    device: " << devices << "\n    workload:\n";
    if (chance(0.5)) {
      y << "      arrivals: {process: closed, concurrency: 1, think: " << pick(0, 300) << "us}\n";
    } else {
      y << "      arrivals: {process: poisson, rate: " << pick(100, 2000) << "/s}\n";
    }
    y << "      request:\n        kernels:\n";
    y << "          - {name: step, duration: " << duration() << ", sm_fraction: 1.0}\n";
    y << "          - {name: allreduce, duration: " << pick(5, 200)
      << "us, sm_fraction: 0.25, memory_bound: 1.0, collective: true}\n";
    return y.str();
  }

  std::mt19937 rng_;
  std::filesystem::path trace_;
  Shape shape_;
  std::set<std::string> used_;
};

/// An arrival trace (csv: arrival, input_tokens, output_tokens) of 800 requests, some sharing an
/// arrival time (bursts), written to DIR/arrivals.csv.
inline std::filesystem::path write_arrival_trace(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "arrivals.csv";
  std::ofstream out(path);
  out << "arrival,input_tokens,output_tokens\n";
  std::mt19937 rng(3);
  double t_us = 0;
  for (int i = 0; i < 800; ++i) {
    t_us += std::exponential_distribution<double>(1.0 / 400.0)(rng);
    // Some rows share an arrival time (a burst).
    if (i % 17 == 0) t_us = std::floor(t_us);
    out << static_cast<long long>(t_us) << "us," << 1 + i % 50 << "," << i % 5 << "\n";
  }
  return path;
}

}  // namespace gpumux::testing
