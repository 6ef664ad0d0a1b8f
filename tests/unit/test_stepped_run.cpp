// SteppedRun (models/run/runner.hpp): a scenario judged over growing windows, one simulation
// continued from window to window (a fork per window) instead of a fresh run per window, as
// `gpumux plan` grows an inconclusive unit's window. Its contract: at(w) gives, for every
// tenant, exactly what simulate() gives for the scenario with `duration: w`. Checked on random
// scenarios (tests/support/random_scenario.hpp: every registered strategy, MIG, faults,
// warm-up, closed loops, traces, active windows, ...) at three windows each: the per-tenant
// summary (latencies, percentiles and their intervals, SLO verdicts, counts, memory, cost) is
// equal to a fresh run's, both where the run continues (one component, no faults, no tenant on
// the direct path; half the scenarios run as one queue without the direct path, so that most of
// those continue) and where it falls back to fresh runs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "models/output/result_io.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/random_scenario.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

// The per-tenant part of the summary: what a window's verdicts are made from.
std::string tenants_of(const RunResult& r) { return summary_json(r).at("tenants").dump(); }

TEST(SteppedRun, EachWindowEqualsAFreshRunOfThatDuration) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-stepped-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = testing::write_arrival_trace(dir);
  int continued = 0, fresh = 0;
  for (std::uint32_t seed = 1; seed <= 80; ++seed) {
    testing::ScenarioMaker maker(seed, trace);
    const std::string yaml = maker.make();
    ResolvedScenario resolved;
    try {
      resolved = resolve_scenario(load_scenario_text(yaml, (dir / "s.yaml").string()));
    } catch (const std::exception& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << yaml;
    }
    const Nanos longest = resolved.scenario.duration;
    RunOptions options;
    options.record_requests = false;
    // Every other scenario as one event queue with every event queued (one component, no
    // direct path): most of those continue.
    options.partition = options.direct_path = seed % 2 == 1;
    SteppedRun stepped(resolved, options);
    (stepped.continues() ? continued : fresh)++;
    // Windows before, around and after the warm-up's end, and the scenario's own duration.
    for (const Nanos w : {longest / 5, longest / 2, longest - 1, longest}) {
      if (w <= 0) continue;
      ResolvedScenario shorter = resolved;
      shorter.scenario.duration = w;
      const std::string expected = tenants_of(simulate(shorter, options));
      const std::string got = stepped.at(w, tenants_of);
      ASSERT_EQ(got, expected) << "seed " << seed << ", window " << w << " ns of " << longest
                               << (stepped.continues() ? " (continued)" : " (fresh)") << "\n"
                               << yaml;
    }
  }
  // Both paths ran.
  EXPECT_GE(continued, 25);
  EXPECT_GE(fresh, 25);
  std::printf("%d of 80 scenarios continued one simulation, %d ran fresh windows\n", continued,
              fresh);
  fs::remove_all(dir);
}

// `gpumux plan`'s shared units: tenants that could take the direct path alone (open arrivals,
// one request in flight, a fixed memory_per_request) but share a time-sliced device (and a
// neighbouring MIG instance holds one alone, exclusive) never go inline, so the run continues
// from window to window, each window a fresh run's numbers, the last one included (the run
// itself, to its end).
TEST(SteppedRun, ATimeSlicedUnitOfDirectWorkloadsContinues) {
  const std::string yaml = R"(name: time-sliced-unit
seed: 3
duration: 4s
warmup: 500ms
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    mig: [3g.40gb]
    sharing: {mode: time-slicing, replicas: 3}
tenants:
  - name: a
    device: gpu0/0
    memory: 3GiB
    workload:
      arrivals: {process: poisson, rate: 200/s}
      memory_per_request: 2MiB
      request:
        kernels:
          - {name: gemm, duration: 60us, sm_fraction: 0.6, memory_bound: 0.3, repeat: 5}
  - name: b
    device: gpu0/0
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 2/s}
      memory_per_request: 30MiB
      request:
        kernels:
          - {name: step, duration: 30us, sm_fraction: 0.3, memory_bound: 0.5, repeat: 300}
    slo: {p90: 1s}
)";
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(yaml, "ts.yaml"));
  RunOptions options;
  options.record_requests = false;
  options.device_statistics = false;  // (as the planner's units)
  SteppedRun stepped(resolved, options);
  EXPECT_TRUE(stepped.continues());
  const Nanos longest = resolved.scenario.duration;
  for (const Nanos w : {longest / 4, longest / 2, longest}) {
    ResolvedScenario shorter = resolved;
    shorter.scenario.duration = w;
    EXPECT_EQ(stepped.at(w, tenants_of), tenants_of(simulate(shorter, options))) << w;
  }
}

// The hang a multi-threaded parent's fork can give (a plan hung for ever: the child waited on a
// function-local static another thread was initialising at the fork), made deterministic:
// another thread holds a mutex for the whole of at(), and the report needs that mutex in the
// child. The child blocks for ever on its copy (no thread of its own holds it); at() must see it
// stall, kill it and give a fresh run's answer. Before the safety net, at() never returned.
TEST(SteppedRun, AChildBlockedOnALockHeldAtTheForkIsReplacedByAFreshRun) {
  const std::string yaml = R"(name: stalled-child
seed: 5
duration: 2s
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    sharing: {mode: time-slicing, replicas: 2}
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: gemm, duration: 50us, sm_fraction: 0.6, memory_bound: 0.3, repeat: 4}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 20/s}
      request:
        kernels:
          - {name: step, duration: 40us, sm_fraction: 0.3, memory_bound: 0.5, repeat: 20}
)";
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(yaml, "stall.yaml"));
  RunOptions options;
  options.record_requests = false;
  SteppedRun stepped(resolved, options);
  ASSERT_TRUE(stepped.continues());
  const pid_t parent = ::getpid();
  std::mutex lock;  // what the child's report needs
  const SteppedRun::Report report = [&](const RunResult& r) {
    if (::getpid() != parent) std::lock_guard<std::mutex> hold(lock);
    return tenants_of(r);
  };
  std::mutex gate;
  std::condition_variable changed;
  bool held = false, done = false;
  std::thread holder([&] {
    std::unique_lock<std::mutex> g(gate);
    std::lock_guard<std::mutex> hold(lock);
    held = true;
    changed.notify_all();
    changed.wait(g, [&] { return done; });
  });
  {
    std::unique_lock<std::mutex> g(gate);
    changed.wait(g, [&] { return held; });
  }
  const Nanos w = resolved.scenario.duration / 2;
  const auto started = std::chrono::steady_clock::now();
  const std::string got = stepped.at(w, report);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  {
    std::lock_guard<std::mutex> g(gate);
    done = true;
  }
  changed.notify_all();
  holder.join();
  ResolvedScenario shorter = resolved;
  shorter.scenario.duration = w;
  EXPECT_EQ(got, tenants_of(simulate(shorter, options)));
  EXPECT_EQ(stepped.children_failed(), 1);
  EXPECT_GE(waited, 2.0);  // the stall limit
  // The next window's child takes no lock: it continues as before.
  EXPECT_EQ(stepped.at(resolved.scenario.duration - 1, report), [&] {
    ResolvedScenario s = resolved;
    s.scenario.duration = resolved.scenario.duration - 1;
    return tenants_of(simulate(s, options));
  }());
  EXPECT_EQ(stepped.children_failed(), 1);
}

TEST(SteppedRun, WindowsMustGrow) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-stepped-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  testing::ScenarioMaker maker(7, testing::write_arrival_trace(dir));
  const ResolvedScenario resolved =
      resolve_scenario(load_scenario_text(maker.make(), (dir / "s.yaml").string()));
  SteppedRun stepped(resolved, RunOptions{});
  const Nanos d = resolved.scenario.duration;
  EXPECT_FALSE(stepped.at(d / 2, tenants_of).empty());
  EXPECT_THROW(stepped.at(d / 2, tenants_of), std::logic_error);  // not longer
  EXPECT_THROW(stepped.at(d + 1, tenants_of), std::logic_error);  // past the duration
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpumux
