// The direct path (models/run/direct.cpp): a tenant alone on an exclusive device runs its own
// events inline. It is an optimisation only, so a run with it must equal the run without it
// (RunOptions::direct_path = false: every event through the queue) bit for bit: the summary, the
// event count, every request, kernel and event record and every timeseries sample. Checked on
// random scenarios that mix eligible tenants with every reason a tenant or device is not
// (several clients, time-slicing, MIG neighbours, faults, warm-up, active windows, two requests
// in flight, per-request and per-token memory, ties from constant arrivals; the test counts that
// every workload key appears) and on the shipped scenarios, and
// for a run interrupted part-way (it stops after the same event).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/output/result_io.hpp"
#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/identical_runs.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

RunResult simulate_with(const ResolvedScenario& resolved, bool direct) {
  RunOptions options;
  options.direct_path = direct;
  return simulate(resolved, options);
}

// A random scenario: a few GPUs, each exclusive (one tenant: the direct path's case), MPS or
// time-sliced (several tenants: not), or MIG with exclusive instances beside each other.
class ScenarioMaker {
 public:
  ScenarioMaker(std::uint32_t seed, const fs::path& trace) : rng_(seed), trace_(trace) {}

  std::string make() {
    std::ostringstream y;
    const int gpus = pick(1, 3);
    y << "name: direct-" << pick(0, 1 << 20) << "\nseed: " << pick(1, 1000) << "\n";
    const int duration_ms = pick(50, 400);
    y << "duration: " << duration_ms << "ms\n";
    if (chance(0.4)) y << "warmup: " << pick(1, duration_ms / 2) << "ms\n";
    const char* samples[] = {"1ms", "7ms", "50ms", "1s"};
    y << "output: {sample: " << samples[pick(0, 3)] << ", kernels: true"
      << (chance(0.3) ? ", percentiles: sketch" : "") << "}\n";
    y << "gpus:\n";
    std::vector<std::pair<std::string, int>> devices;  // device, tenants on it
    for (int g = 0; g < gpus; ++g) {
      const std::string name = fmt::format("g{}", g);
      const int kind = pick(0, 5);
      y << "  - {name: " << name << ", model: h100-sxm-80gb";
      if (kind <= 2) {
        y << "}\n";  // exclusive (the default)
        devices.emplace_back(name, 1);
      } else if (kind == 3) {
        y << ", sharing: {mode: mps" << (chance(0.5) ? ", active_thread_percentage: 40" : "")
          << "}}\n";
        devices.emplace_back(name, pick(1, 3));  // MPS with one client is eligible too
      } else if (kind == 4) {
        y << ", sharing: {mode: time-slicing, replicas: 2}}\n";
        devices.emplace_back(name, pick(1, 2));
      } else {
        y << ", mig: [3g.40gb, 2g.20gb]}\n";
        devices.emplace_back(name + "/0", 1);
        devices.emplace_back(name + "/1", 1);
      }
    }
    y << "tenants:\n";
    std::vector<std::string> names;
    int t = 0;
    for (const auto& [device, count] : devices) {
      for (int i = 0; i < count; ++i, ++t) {
        const std::string name = fmt::format("t{}", t);
        names.push_back(name);
        y << tenant(name, device, duration_ms);
      }
    }
    if (chance(0.35)) {
      y << "faults:\n  - {tenant: "
        << names[static_cast<std::size_t>(pick(0, static_cast<int>(names.size()) - 1))]
        << ", at: " << pick(1, duration_ms - 1) << "ms, kind: fatal, recovery: " << pick(1, 40)
        << "ms}\n";
    }
    return y.str();
  }

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
        << ", sm_fraction: " << fractions[pick(0, 2)] << ", memory_bound: " << bounds[pick(0, 2)];
      if (single) {
        if (chance(0.2)) y << ", per_sequence: " << pick(1, 20) << "us";
      } else if (tokens && chance(0.5)) {
        y << ", repeat: output_tokens";
      } else {
        y << ", repeat: " << pick(1, 2);
      }
      if (!single && tokens && chance(0.3)) y << ", per_token: input";
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

  std::mt19937 rng_;
  fs::path trace_;
};

fs::path write_trace(const fs::path& dir) {
  const fs::path path = dir / "arrivals.csv";
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

TEST(DirectPath, RandomScenariosGiveIdenticalResultsWithAndWithoutIt) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-direct-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = write_trace(dir);
  int checked = 0;
  std::int64_t events = 0, inline_events = 0;
  int some_inline = 0, mostly_inline = 0, none_inline = 0;
  // Every workload key that can change what a request does, each in some of the scenarios (a
  // key the generator never writes is a key whose eligibility nothing checks).
  const std::vector<std::string> workload_keys = {
      "arrivals:",      "process: poisson",    "process: constant",
      "process: trace", "process: closed",     "tokens:",
      "kernels:",       "host_gap:",           "cuda_graph:",
      "max_in_flight:", "memory_per_request:", "memory_per_token:",
      "repeat:",        "per_token:",          "per_sequence:",
      "active:"};
  std::vector<int> scenarios_with(workload_keys.size(), 0);
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    const std::string yaml = ScenarioMaker(seed, trace).make();
    for (std::size_t k = 0; k < workload_keys.size(); ++k) {
      scenarios_with[k] += yaml.find(workload_keys[k]) != std::string::npos;
    }
    ResolvedScenario resolved;
    try {
      resolved = resolve_scenario(load_scenario_text(yaml, (dir / "s.yaml").string()));
    } catch (const std::exception& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << yaml;
    }
    const RunResult queued = simulate_with(resolved, false);
    const RunResult direct = simulate_with(resolved, true);
    testing::expect_identical_runs(queued, direct,
                                   std::string("seed ") + std::to_string(seed) + "\n" + yaml);
    if (HasFatalFailure()) return;
    ++checked;
    events += static_cast<std::int64_t>(queued.events);
    inline_events += static_cast<std::int64_t>(direct.events_inline);
    EXPECT_EQ(queued.events_inline, 0U);
    some_inline += direct.events_inline > 0;
    mostly_inline += direct.events_inline * 2 > direct.events;
    none_inline += direct.events_inline == 0;
  }
  EXPECT_EQ(checked, 300);
  for (std::size_t k = 0; k < workload_keys.size(); ++k) {
    EXPECT_GE(scenarios_with[k], 10) << workload_keys[k];
  }
  EXPECT_GT(events, 100000);  // the instances are not trivially small
  // Both paths were exercised: many scenarios ran some events inline, many ran most of them so,
  // others none.
  EXPECT_GT(inline_events, 10000);
  EXPECT_GE(some_inline, 100);
  EXPECT_GE(mostly_inline, 10);
  EXPECT_GE(none_inline, 30);
  std::printf("%d of 300 scenarios ran events inline (%d mostly), %d none; %lld of %lld events\n",
              some_inline, mostly_inline, none_inline, static_cast<long long>(inline_events),
              static_cast<long long>(events));
  fs::remove_all(dir);
}

// An M/D/1 on an exclusive GPU (the benchmark's case) runs almost entirely inline; the summary
// and every record are the queued run's.
const char* kMd1 = R"(
name: md1
seed: 1
duration: 5s
output: {sample: 100ms, kernels: true}
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 700/s}
      request: {kernels: [{name: k, duration: 1000us}]}
)";

TEST(DirectPath, MD1IsIdentical) {
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(kMd1, "md1.yaml"));
  const RunResult queued = simulate_with(resolved, false);
  const RunResult direct = simulate_with(resolved, true);
  testing::expect_identical_runs(queued, direct, "md1");
  EXPECT_GT(queued.events, 4000);
  // All but the arrivals after each tick (every 100 ms) and their busy periods ran inline.
  EXPECT_GT(direct.events_inline, queued.events * 9 / 10);
}

// Interrupted at the second poll (the first sets the flag, the second sees it: 8192 events):
// both stop after the same event, so even the unfinished records and the end time agree.
TEST(DirectPath, AnInterruptedRunStopsAfterTheSameEvent) {
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(kMd1, "md1.yaml"));
  std::vector<RunResult> results;
  for (bool direct : {false, true}) {
    std::atomic<bool> stop{false};
    RunOptions options;
    options.direct_path = direct;
    options.interrupt = &stop;
    options.progress = [&stop](Nanos, Nanos, std::uint64_t) { stop = true; };
    results.push_back(simulate(resolved, options));
  }
  EXPECT_EQ(results[0].status, "interrupted");
  EXPECT_EQ(results[0].events, 8192U);
  EXPECT_GT(results[1].events_inline, 0U);
  testing::expect_identical_runs(results[0], results[1], "interrupted md1");
}

TEST(DirectPath, ShippedScenariosAreIdentical) {
  const fs::path dir = fs::path{GPUMUX_SOURCE_DIR} / "scenarios";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const ResolvedScenario resolved = resolve_scenario(load_scenario_file(entry.path().string()));
    testing::expect_identical_runs(simulate_with(resolved, false), simulate_with(resolved, true),
                                   entry.path().filename().string());
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
}  // namespace gpumux
