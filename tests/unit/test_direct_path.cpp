// The direct path (models/run/direct.cpp): a tenant alone on an exclusive device runs its own
// events inline, and so do the kernels of a time-sliced device's holder. It is an optimisation
// only, so a run with it must equal the run without it (RunOptions::direct_path = false: every
// event through the queue) bit for bit: the summary, the event count, every request, kernel and
// event record and every timeseries sample. Checked on random scenarios
// (tests/support/random_scenario.hpp: every registered strategy) that mix eligible tenants with
// every reason a tenant or device is not (several clients, time-slicing, MIG neighbours, faults,
// warm-up, active windows, two requests in flight, per-request memory, per-token memory, ties from
// constant arrivals; the test counts that every workload key appears), on random batched LLM
// servers (every scheduler, preemption, max_tokens_in_batch, model cards, bursts of simultaneous
// arrivals), on the shipped scenarios, and for a run interrupted part-way (it stops after the same
// event).
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
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/output/result_io.hpp"
#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/identical_runs.hpp"
#include "tests/support/random_scenario.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;
using testing::ScenarioMaker;
using testing::write_arrival_trace;

RunResult simulate_with(const ResolvedScenario& resolved, bool direct) {
  RunOptions options;
  options.direct_path = direct;
  return simulate(resolved, options);
}

TEST(DirectPath, RandomScenariosGiveIdenticalResultsWithAndWithoutIt) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-direct-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = write_arrival_trace(dir);
  int checked = 0;
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
  std::int64_t events = 0, inline_events = 0;
  int some_inline = 0, mostly_inline = 0, none_inline = 0;
  std::set<std::string> used;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    ScenarioMaker maker(seed, trace);
    // Every third scenario under the second contention law (the paths share the law's code).
    const std::string yaml = (seed % 3 == 0 ? "contention_law: fluid\n" : "") + maker.make();
    for (std::size_t k = 0; k < workload_keys.size(); ++k) {
      scenarios_with[k] += yaml.find(workload_keys[k]) != std::string::npos;
    }
    used.insert(maker.strategies_used().begin(), maker.strategies_used().end());
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
  // Every registered strategy ran (and MIG).
  for (const std::string& name : strategy_names()) EXPECT_TRUE(used.count(name)) << name;
  EXPECT_TRUE(used.count("mig"));
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

// A random batched LLM server (continuous batching: docs/llm-serving.md) for the batched
// direct loop (direct.cpp, run_direct_batched): each scheduler (vllm, sarathi with chunks,
// orca), with and without max_tokens_in_batch, a KV cache that runs out (preemption) or not,
// hand-written kernels with drawn durations or a model card's roofline, poisson, constant and
// trace arrivals, a warm-up, the sampler's ticks, and the cases where it is not eligible
// (time-slicing; an MPS neighbour) or shares the run with another part (a second GPU).
struct BatchedCase {
  std::string yaml;
  std::string scheduler;
  bool eligible = true;  // alone on an exclusive or MPS device
};

BatchedCase make_batched(std::uint32_t seed, const fs::path& trace) {
  std::mt19937 rng(seed);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  BatchedCase c;
  const char* schedulers[] = {"vllm", "sarathi", "orca"};
  c.scheduler = schedulers[seed % 3];
  const int sharing = pick(10);  // 0: time-slicing, 1: an MPS neighbour, 2: MPS, else exclusive
  const char* mode = sharing == 0 ? "time-slicing" : sharing <= 2 ? "mps" : "exclusive";
  c.eligible = sharing != 0 && sharing != 1;
  const bool second_gpu = pick(5) == 0;
  const bool card = pick(4) == 0;
  const bool preempting = !card && pick(3) == 0;
  std::ostringstream y;
  y << "name: batched-" << seed << "\nseed: " << seed << "\nduration: 4s\n";
  if (pick(3) == 0) y << "warmup: 1s\n";
  y << "output: {sample: " << (pick(2) == 0 ? "50ms" : "1s") << ", kernels: true}\n";
  // Preempting: 79.25 GiB - 78.25 GiB = 1 GiB of KV cache on the A100 at 16 MiB per token, 64
  // tokens, for a few short requests at a time.
  y << "gpus:\n  - {name: gpu0, model: "
    << (preempting || pick(2) == 0 ? "a100-80gb" : "h100-sxm-80gb") << ", sharing: {mode: " << mode
    << "}}\n";
  if (second_gpu) y << "  - {name: gpu1, model: a100-80gb, sharing: {mode: exclusive}}\n";
  y << "tenants:\n  - name: llm\n    device: gpu0\n";
  if (!card) y << "    memory: " << (preempting ? "78.25GiB" : "1GiB") << "\n";
  y << "    workload:\n";
  const int arrivals = pick(4);
  if (arrivals == 0) {
    y << "      arrivals: {process: trace, file: " << trace.string() << ", format: csv}\n";
  } else {
    const char* rates[] = {"2/s", "10/s", "40/s", "120/s"};
    y << "      arrivals: {process: " << (arrivals == 1 ? "constant" : "poisson")
      << ", rate: " << (preempting ? "40/s" : rates[pick(4)]) << "}\n";
    if (preempting) {
      y << "      tokens: {input: " << 8 + pick(16) << ", output: " << 16 + pick(24) << "}\n";
    } else if (pick(2) == 0) {
      y << "      tokens: {input: " << 16 + pick(600) << ", output: " << 1 + pick(40) << "}\n";
    } else {
      y << "      tokens: {input: {lognormal: {median: " << 32 + pick(400)
        << ", sigma: 0.6}}, output: {uniform: {min: 1, max: " << 2 + pick(60) << "}}}\n";
    }
  }
  const int batch[] = {2, 8, 32, 128};
  y << "      batching: {max_batch: " << batch[pick(4)] << ", scheduler: " << c.scheduler;
  if (c.scheduler == "sarathi") y << ", chunk_size: " << (pick(2) == 0 ? 64 : 256);
  if (pick(2) == 0) y << ", max_tokens_in_batch: " << (pick(2) == 0 ? 300 : 2048);
  if (c.scheduler != "orca") y << ", kv_block: " << (pick(2) == 0 ? 4 : 16);
  y << "}\n";
  if (card) {
    y << "      llm: {model: llama-2-7b, dtype: fp16, tp: 1}\n";
  } else {
    y << "      memory_per_token: " << (preempting ? "16MiB" : "512KiB") << "\n";
    y << "      request:\n";
    if (pick(3) == 0) y << "        host_gap: 20us\n";
    y << "        kernels:\n";
    if (pick(2) == 0) {
      y << "          - {name: iteration, duration: {lognormal: {median: 2ms, sigma: 0.3}}}\n";
    } else {
      y << "          - {name: iteration, duration: 3794812ns, sm_fraction: 0.8}\n";
    }
    y << "          - {name: prefill, duration: 64195ns, per_token: input, "
         "per_context_token: 13963.189ps, memory_bound: 0.15}\n"
      << "          - {name: decode, duration: {exponential: 5ms}, per_sequence: 37736ns, "
         "per_context_token: 355767.910ps, repeat: output_tokens, memory_bound: 0.85}\n";
  }
  if (sharing == 1) {
    y << "  - name: neighbour\n    device: gpu0\n    workload:\n"
         "      arrivals: {process: poisson, rate: 50/s}\n"
         "      request: {kernels: [{name: k, duration: 300us, sm_fraction: 0.3}]}\n";
  }
  if (second_gpu) {
    y << "  - name: other\n    device: gpu1\n    workload:\n"
         "      arrivals: {process: poisson, rate: 200/s}\n"
         "      request: {kernels: [{name: k, duration: 1ms}]}\n";
  }
  c.yaml = y.str();
  return c;
}

// An arrival trace of bursts: 600 requests, each burst of 1-4 at one nanosecond (ties between
// arrivals, and with the iteration due they start), 5-60 ms apart.
fs::path write_burst_trace(const fs::path& dir) {
  const fs::path path = dir / "bursts.csv";
  std::ofstream out(path);
  out << "arrival,input_tokens,output_tokens\n";
  std::mt19937 rng(5);
  long long t_us = 0;
  for (int i = 0; i < 600;) {
    t_us += 5000 + static_cast<long long>(rng() % 55000);
    for (int b = 1 + static_cast<int>(rng() % 4); b > 0 && i < 600; --b, ++i) {
      out << t_us << "us," << 1 + rng() % 200 << "," << 1 + rng() % 20 << "\n";
    }
  }
  return path;
}

TEST(DirectPath, RandomBatchedServersGiveIdenticalResultsWithAndWithoutIt) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-batched-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = write_burst_trace(dir);
  int mostly_inline = 0, ineligible_inline = 0, with_preemptions = 0, with_ooms = 0;
  std::set<std::string> schedulers;
  for (std::uint32_t seed = 1; seed <= 90; ++seed) {
    const BatchedCase c = make_batched(seed, trace);
    ResolvedScenario resolved;
    try {
      resolved = resolve_scenario(load_scenario_text(c.yaml, (dir / "s.yaml").string()));
    } catch (const std::exception& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << c.yaml;
    }
    const RunResult queued = simulate_with(resolved, false);
    const RunResult direct = simulate_with(resolved, true);
    testing::expect_identical_runs(queued, direct,
                                   std::string("seed ") + std::to_string(seed) + "\n" + c.yaml);
    if (HasFatalFailure()) return;
    EXPECT_EQ(queued.events_inline, 0U);
    // The server's events run inline when it is alone on a device that submits at once.
    if (c.eligible && direct.events_inline * 2 > direct.events) {
      ++mostly_inline;
      schedulers.insert(c.scheduler);
    }
    ineligible_inline +=
        !c.eligible && direct.events_inline > 0 && c.yaml.find("name: other") == std::string::npos;
    bool preempted = false, oom = false;
    for (const EventRecord& e : direct.events_log) {
      preempted = preempted || e.kind == EventKind::preempt;
      oom = oom || e.kind == EventKind::oom || e.kind == EventKind::reject;
    }
    with_preemptions += preempted;
    with_ooms += oom;
  }
  // The loop ran most of the events of many servers, under every scheduler; never one that is
  // not alone on a device that submits at once; preemption and rejections were exercised.
  EXPECT_GE(mostly_inline, 30);
  EXPECT_EQ(schedulers.size(), 3U);
  EXPECT_EQ(ineligible_inline, 0);
  EXPECT_GE(with_preemptions, 5);
  EXPECT_GE(with_ooms, 1);
  std::printf("%d of 90 batched servers ran mostly inline; %d preempted, %d rejected or OOM\n",
              mostly_inline, with_preemptions, with_ooms);
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
  EXPECT_GE(direct.timeseries.at("gpu0").size(), 50U);  // a tick every 100 ms, all delivered
  // Every event but the tenant's start and its first arrival ran inline: the single-launch loop
  // delivers the sampler's 50 ticks itself (it left the loop at each before, and the busy
  // period in progress then ran through the queue).
  EXPECT_EQ(direct.events - direct.events_inline, 2U);
}

// A random time-sliced device (a whole GPU or a MIG instance; instruction or kernel-boundary
// preemption; a random timeslice, switch and refill) shared by 2-5 tenants, most of them
// eligible for the holder's loop (direct.cpp, run_holder: one request in flight, open
// arrivals), others not (two requests in flight, a closed loop), with host gaps (a kernel not
// issued yet ends the loop), CUDA graphs, per-request memory, a catalog model's activations,
// warm-up, active windows and the sampler's ticks.
std::string make_time_sliced(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&rng](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  auto chance = [&rng](double p) { return static_cast<double>(rng() % 1000) < p * 1000; };
  const int tenants = pick(2, 5);
  const bool mig = chance(0.4);
  std::ostringstream y;
  y << "name: ts-" << seed << "\nseed: " << seed << "\nduration: " << pick(1, 3) << "s\n";
  if (chance(0.5)) y << "warmup: " << pick(50, 500) << "ms\n";
  if (chance(0.5)) y << "output: {sample: " << pick(5, 200) << "ms}\n";
  y << "gpus:\n  - name: gpu0\n    model: " << (chance(0.5) ? "h100-sxm-80gb" : "a100-80gb")
    << "\n";
  if (mig) y << "    mig: [3g.40gb, 2g.20gb]\n";
  y << "    sharing:\n      mode: time-slicing\n      replicas: " << tenants << "\n";
  if (chance(0.5)) y << "      timeslice: " << pick(50, 2000) << "us\n";
  if (chance(0.4)) y << "      context_switch: " << pick(5, 60) << "us\n";
  if (chance(0.5)) y << "      preemption: kernel-boundary\n";
  y << "tenants:\n";
  for (int t = 0; t < tenants; ++t) {
    y << "  - name: t" << t << "\n    device: gpu0" << (mig ? "/0" : "")
      << "\n    memory: " << pick(1, 4) << "GiB\n";
    if (chance(0.15)) y << "    active: {from: " << pick(0, 300) << "ms, until: 900ms}\n";
    y << "    workload:\n";
    if (chance(0.1)) {
      y << "      arrivals: {process: closed, concurrency: " << pick(1, 2) << "}\n";
    } else {
      y << "      arrivals: {process: " << (chance(0.2) ? "constant" : "poisson")
        << ", rate: " << pick(5, 400) << "/s}\n";
    }
    if (chance(0.15)) {
      y << "      model: " << (chance(0.5) ? "minilm-l6" : "bert-base") << "\n";
      continue;
    }
    if (chance(0.15)) y << "      max_in_flight: 2\n";
    if (chance(0.2)) y << "      memory_per_request: " << pick(1, 300) << "MiB\n";
    y << "      request:\n";
    if (chance(0.3)) y << "        host_gap: " << pick(1, 300) << "us\n";
    if (chance(0.2)) y << "        cuda_graph: true\n";
    y << "        kernels:\n";
    for (int k = pick(1, 3); k > 0; --k) {
      y << "          - {name: k" << k << ", duration: ";
      if (chance(0.5)) {
        y << pick(3, 400) << "us";
      } else {
        y << "{lognormal: {median: " << pick(5, 200) << "us, sigma: 0.5}}";
      }
      y << ", sm_fraction: " << pick(1, 10) / 10.0 << ", memory_bound: " << pick(0, 9) / 10.0
        << ", repeat: " << pick(1, 12) << "}\n";
    }
  }
  return y.str();
}

// The holder's loop is exact: random time-sliced devices give the queued path's results bit for
// bit (every record, sample and the event count), and the loop runs many of their events.
TEST(DirectPath, TimeSlicedHoldersGiveIdenticalResultsWithAndWithoutIt) {
  std::int64_t events = 0, inline_events = 0;
  int some_inline = 0, mostly_inline = 0;
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    const std::string yaml = make_time_sliced(seed);
    ResolvedScenario resolved;
    try {
      resolved = resolve_scenario(load_scenario_text(yaml, "ts.yaml"));
    } catch (const std::exception& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << yaml;
    }
    RunOptions options;
    options.record_kernels = seed % 2 == 0;
    options.direct_path = false;
    const RunResult queued = simulate(resolved, options);
    options.direct_path = true;
    const RunResult direct = simulate(resolved, options);
    testing::expect_identical_runs(queued, direct,
                                   std::string("seed ") + std::to_string(seed) + "\n" + yaml);
    if (HasFatalFailure()) return;
    EXPECT_EQ(queued.events_inline, 0U);
    events += static_cast<std::int64_t>(queued.events);
    inline_events += static_cast<std::int64_t>(direct.events_inline);
    some_inline += direct.events_inline > 0;
    mostly_inline += direct.events_inline * 2 > direct.events;
  }
  EXPECT_GT(events, 200000);
  EXPECT_GE(some_inline, 80);
  EXPECT_GE(mostly_inline, 20);
  EXPECT_GT(inline_events * 4, events);
  std::printf("%d of 120 time-sliced scenarios ran events inline (%d mostly); %lld of %lld\n",
              some_inline, mostly_inline, static_cast<long long>(inline_events),
              static_cast<long long>(events));
}

// A catalog model's activations (a fixed memory_per_request) alone on an exclusive device: the
// requests run inline, each allocating and freeing its bytes where the queued path does (the
// same memory peak, timeseries and records); when a request's bytes do not fit beside the
// tenant's memory, every arrival stays queued (the allocation OOM-kills it, as queued).
TEST(DirectPath, PerRequestMemoryRunsInlineWhenItFits) {
  for (const char* per_request : {"768KiB", "30MiB", "79GiB"}) {
    const std::string yaml = fmt::format(R"(name: per-request-memory
seed: 5
duration: 2s
warmup: 200ms
output: {{sample: 100ms}}
gpus:
  - {{name: gpu0, model: h100-sxm-80gb, mig: [1g.10gb, 3g.40gb]}}
tenants:
  - name: embed
    device: gpu0/0
    memory: 3GiB
    workload:
      arrivals: {{process: poisson, rate: 300/s}}
      memory_per_request: {}
      request:
        kernels:
          - {{name: gemm, duration: 40us, sm_fraction: 0.5, memory_bound: 0.3, repeat: 6}}
          - {{name: softmax, duration: 15us, sm_fraction: 0.2, memory_bound: 0.8}}
  - name: other
    device: gpu0/1
    memory: 2GiB
    workload:
      arrivals: {{process: poisson, rate: 50/s}}
      memory_per_request: 2MiB
      request:
        kernels:
          - {{name: conv, duration: 200us, sm_fraction: 1.0, memory_bound: 0.2}}
)",
                                         per_request);
    SCOPED_TRACE(per_request);
    const ResolvedScenario resolved = resolve_scenario(load_scenario_text(yaml, "m.yaml"));
    const RunResult queued = simulate_with(resolved, false);
    const RunResult direct = simulate_with(resolved, true);
    testing::expect_identical_runs(queued, direct, yaml);
    ASSERT_EQ(direct.tenants.size(), 2U);
    EXPECT_EQ(queued.events_inline, 0U);
    if (std::string(per_request) == "79GiB") {
      // Never fits a 10 GB instance: the first request OOM-kills embed; the other still runs
      // inline.
      EXPECT_GT(direct.tenants[0].oom_events, 0);
      EXPECT_GT(direct.events_inline, 0U);
      continue;
    }
    EXPECT_EQ(direct.tenants[0].oom_events, 0);
    EXPECT_GT(direct.tenants[0].completed, 400);
    // The memory peak holds one request's bytes beside the tenant's memory.
    ASSERT_EQ(direct.devices.size(), 2U);
    EXPECT_EQ(direct.devices[0].memory_peak_bytes,
              (std::int64_t{3} << 30) + resolved.scenario.tenants[0].workload.memory_per_request);
    // Most events ran inline (each tenant leaves its loop only at the other's events and ticks).
    EXPECT_GT(direct.events_inline * 2, direct.events);
  }
}

// Interrupted at the second poll (the first sets the flag, the second sees it: 8192 events):
// both stop after the same event, so even the unfinished records and the end time agree.

// `resolved` run without and with the direct path, each interrupted at its first progress poll.
std::vector<RunResult> interrupted_without_and_with(const ResolvedScenario& resolved) {
  std::vector<RunResult> results;
  for (bool direct : {false, true}) {
    std::atomic<bool> stop{false};
    RunOptions options;
    options.direct_path = direct;
    options.interrupt = &stop;
    options.progress = [&stop](Nanos, Nanos, std::uint64_t) { stop = true; };
    results.push_back(simulate(resolved, options));
  }
  return results;
}

TEST(DirectPath, AnInterruptedRunStopsAfterTheSameEvent) {
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(kMd1, "md1.yaml"));
  const std::vector<RunResult> results = interrupted_without_and_with(resolved);
  EXPECT_EQ(results[0].status, "interrupted");
  EXPECT_EQ(results[0].events, 8192U);
  EXPECT_GT(results[1].events_inline, 0U);
  testing::expect_identical_runs(results[0], results[1], "interrupted md1");
}

// A batched server interrupted at the second poll stops after the same event with and without
// the batched loop: the iteration, requests and memory it leaves are the queued run's.
TEST(DirectPath, AnInterruptedBatchedRunStopsAfterTheSameEvent) {
  const char* text = R"(
name: batched-interrupted
seed: 4
duration: 60s
output: {sample: 100ms, kernels: true}
gpus: [{name: gpu0, model: a100-80gb}]
tenants:
  - name: llm
    device: gpu0
    memory: 13.5GB
    workload:
      arrivals: {process: poisson, rate: 10/s}
      tokens: {input: 512, output: 128}
      batching: {max_batch: 128, scheduler: vllm, max_tokens_in_batch: 4096, kv_block: 16}
      memory_per_token: 512KiB
      request:
        kernels:
          - {name: iteration, duration: 3794812ns}
          - {name: prefill, duration: 64195ns, per_token: input, per_context_token: 13963.189ps}
          - {name: decode, duration: 5465344ns, per_sequence: 37736ns,
             per_context_token: 355767.910ps, repeat: output_tokens}
)";
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(text, "b.yaml"));
  const std::vector<RunResult> results = interrupted_without_and_with(resolved);
  EXPECT_EQ(results[0].status, "interrupted");
  EXPECT_EQ(results[0].events, 8192U);
  EXPECT_GT(results[1].events_inline, 8000U);
  testing::expect_identical_runs(results[0], results[1], "interrupted batched server");
}

// A time-sliced device interrupted at the second poll stops after the same event with and
// without the holder's loop (the poll is called from inside the loop).
TEST(DirectPath, AnInterruptedTimeSlicedRunStopsAfterTheSameEvent) {
  const char* text = R"(
name: time-sliced-interrupted
seed: 3
duration: 20s
output: {sample: 100ms, kernels: true}
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing, replicas: 2}}
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 300/s}
      request: {kernels: [{name: k, duration: 20us, sm_fraction: 0.5, repeat: 20}]}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 50us, sm_fraction: 0.8, repeat: 10}]}
)";
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(text, "ts.yaml"));
  const std::vector<RunResult> results = interrupted_without_and_with(resolved);
  EXPECT_EQ(results[0].status, "interrupted");
  EXPECT_EQ(results[0].events, 8192U);
  EXPECT_GT(results[1].events_inline, 4000U);
  testing::expect_identical_runs(results[0], results[1], "interrupted time-sliced run");
}

RunResult simulate_with(const ResolvedScenario& resolved, bool direct, bool partition,
                        std::size_t max_samples = kMaxSamplesPerSeries) {
  RunOptions options;
  options.direct_path = direct;
  options.partition = partition;
  options.max_samples_per_series = max_samples;
  return simulate(resolved, options);
}

// Independent parts of a run (components: devices and the tenants on them, no tenant on two
// parts) run with one event queue each, in windows (models/run/components.cpp). Against one
// queue for everything, with no inline events (the oracle): the same summary, timeseries and
// records, the records of different parts at the same nanosecond aside (compared sorted). The
// partitioned run with and without the direct path: bit for bit, record order included. On
// random scenarios of up to 8 GPUs with data-parallel tenants spanning two (their collective
// joins two devices into one part).
TEST(Partition, RandomMultiDeviceScenariosMatchOneQueue) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-partition-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = write_arrival_trace(dir);
  int several = 0, many = 0, joined = 0, inline_runs = 0;
  for (std::uint32_t seed = 1; seed <= 150; ++seed) {
    ScenarioMaker maker(seed, trace, ScenarioMaker::Shape{8, true});
    const std::string yaml = (seed % 3 == 0 ? "contention_law: fluid\n" : "") + maker.make();
    ResolvedScenario resolved;
    try {
      resolved = resolve_scenario(load_scenario_text(yaml, (dir / "s.yaml").string()));
    } catch (const std::exception& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << yaml;
    }
    // Every other scenario with short timeseries, so decimations happen (at the same ticks in
    // every part as in one queue, the drain's included).
    const std::size_t samples = seed % 2 == 0 ? 6 : kMaxSamplesPerSeries;
    const RunResult one = simulate_with(resolved, false, false, samples);
    const RunResult queued = simulate_with(resolved, false, true, samples);
    const RunResult direct = simulate_with(resolved, true, true, samples);
    const std::string what = "seed " + std::to_string(seed) + "\n" + yaml;
    EXPECT_EQ(one.components, 1U);
    testing::expect_same_run_in_time_order(one, direct, what);
    testing::expect_identical_runs(queued, direct, what);
    if (HasFatalFailure()) return;
    several += direct.components >= 2;
    many += direct.components >= 5;
    joined += yaml.find("collective: true") != std::string::npos && direct.components >= 2;
    inline_runs += direct.events_inline > 0 && direct.components >= 2;
  }
  // The instances cover several parts, many parts, parts joined by a multi-GPU tenant, and
  // inline runs inside a part.
  EXPECT_GE(several, 80);
  EXPECT_GE(many, 20);
  EXPECT_GE(joined, 20);
  EXPECT_GE(inline_runs, 40);
  std::printf(
      "%d of 150 scenarios in >= 2 parts (%d in >= 5, %d with a multi-GPU tenant), %d "
      "with inline events\n",
      several, many, joined, inline_runs);
  fs::remove_all(dir);
}

// Interrupted part-way, a partitioned run stops after the same event with and without the
// direct path (the poll sees the flag at the same event count).
TEST(Partition, AnInterruptedRunStopsAfterTheSameEvent) {
  std::string yaml = kMd1;
  yaml.replace(yaml.find("gpus: [{name: gpu0, model: h100-sxm-80gb}]"),
               std::string("gpus: [{name: gpu0, model: h100-sxm-80gb}]").size(),
               "gpus: [{name: gpu0, model: h100-sxm-80gb, count: 4}]");
  yaml.replace(yaml.find("device: gpu0"), std::string("device: gpu0").size(), "device: gpu0-0");
  yaml += R"(  - {name: u, device: gpu0-1, workload: {arrivals: {process: poisson, rate: 500/s},
       request: {kernels: [{name: k, duration: 900us}]}}}
  - {name: v, device: gpu0-2, workload: {arrivals: {process: closed, concurrency: 2},
       request: {kernels: [{name: k, duration: 300us}, {name: l, duration: 50us}]}}}
)";
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(yaml, "md1x4.yaml"));
  const std::vector<RunResult> results = interrupted_without_and_with(resolved);
  EXPECT_EQ(results[0].status, "interrupted");
  EXPECT_GE(results[0].components, 3U);
  EXPECT_GT(results[1].events_inline, 0U);
  EXPECT_LT(results[0].events, simulate_with(resolved, true).events);
  testing::expect_identical_runs(results[0], results[1], "interrupted md1 on 4 GPUs");
}

// Many parts with their records kept: a window then gives every part ~2^8 of work, so it is
// longer than 2^14 in all (components.cpp, kWindowWorkPerComponent). The window's length moves
// nothing: one-GPU parts with Poisson and closed-loop tenants of random rates give one queue's
// records, summary and timeseries, at 16 parts (windows of 2^14) and at 160 (windows of
// 160 x 2^8).
TEST(Partition, ManyPartsWithRecordsMatchOneQueue) {
  std::mt19937_64 rng(37);
  for (const int gpus : {16, 160}) {
    std::string yaml = "name: many-parts\nseed: 3\nduration: 300ms\noutput: {sample: 10ms}\n";
    yaml += fmt::format("gpus: [{{name: gpu, model: h100-sxm-80gb, count: {}}}]\ntenants:\n", gpus);
    for (int i = 0; i < gpus; ++i) {
      const double rate = 100.0 + static_cast<double>(rng() % 700);
      const int kernel_us = 200 + static_cast<int>(rng() % 900);
      yaml += i % 3 == 2 ? fmt::format(
                               "  - {{name: t{}, device: gpu-{}, workload: {{arrivals: {{process: "
                               "closed, concurrency: 2}}, request: {{kernels: [{{name: k, "
                               "duration: {}us}}]}}}}}}\n",
                               i, i, kernel_us)
                         : fmt::format(
                               "  - {{name: t{}, device: gpu-{}, workload: {{arrivals: {{process: "
                               "poisson, rate: {}/s}}, request: {{kernels: [{{name: k, "
                               "duration: {}us}}]}}}}}}\n",
                               i, i, rate, kernel_us);
    }
    const ResolvedScenario resolved = resolve_scenario(load_scenario_text(yaml, "many.yaml"));
    const RunResult split = simulate_with(resolved, true, true);
    EXPECT_EQ(split.components, static_cast<std::size_t>(gpus));
    EXPECT_GT(split.requests.size(), static_cast<std::size_t>(gpus) * 20);
    testing::expect_same_run_in_time_order(simulate_with(resolved, false, false), split,
                                           std::to_string(gpus) + " parts");
  }
}

// A recorder of the request rows it is shown, in order, that may decline outcomes
// (Recorder::wants_outcomes): a partitioned run whose recorders all decline them holds a
// window's requests as 40-byte rows, else as outcomes (models/run/run.hpp).
struct RowRecorder : Recorder {
  bool outcomes_wanted = true;
  std::vector<RequestRecord> rows;
  std::int64_t outcomes = 0;
  void on_request_completed(const RequestOutcome&) override { ++outcomes; }
  void on_request_failed(const RequestOutcome&) override { ++outcomes; }
  void on_request_record(const RequestRecord& r) override { rows.push_back(r); }
  bool wants_outcomes() const override { return outcomes_wanted; }
};

bool same_rows(const std::vector<RequestRecord>& a, const std::vector<RequestRecord>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const RequestRecord& x, const RequestRecord& y) {
                      return x.tenant == y.tenant && x.request_id == y.request_id &&
                             x.arrival_ns == y.arrival_ns && x.start_ns == y.start_ns &&
                             x.finish_ns == y.finish_ns && x.status == y.status;
                    });
}

// Rows or outcomes held through a window: the same rows in the same order to every recorder
// and in the result, the same summary; a recorder that declines outcomes is shown none. On 16
// and 160 one-GPU parts of random Poisson and closed-loop tenants (ties across parts at the same
// nanosecond kept in part order by both) and on the shipped fault scenario (failed requests).
TEST(Partition, RequestRowsAndOutcomesGiveTheSameRecords) {
  std::mt19937_64 rng(41);
  std::vector<std::pair<std::string, ResolvedScenario>> cases;
  for (const int gpus : {16, 160}) {
    std::string yaml = "name: rows\nseed: 5\nduration: 200ms\n";
    yaml += fmt::format("gpus: [{{name: gpu, model: h100-sxm-80gb, count: {}}}]\ntenants:\n", gpus);
    for (int i = 0; i < gpus; ++i) {
      const double rate = 100.0 + static_cast<double>(rng() % 900);
      const int kernel_us = 100 + static_cast<int>(rng() % 900);
      yaml += fmt::format(
          "  - {{name: t{}, device: gpu-{}, workload: {{arrivals: {{process: {}}}, request: "
          "{{kernels: [{{name: k, duration: {}us}}]}}}}}}\n",
          i, i, i % 4 == 3 ? "closed, concurrency: 2" : fmt::format("poisson, rate: {}/s", rate),
          kernel_us);
    }
    cases.emplace_back(std::to_string(gpus) + " parts",
                       resolve_scenario(load_scenario_text(yaml, "rows.yaml")));
  }
  const fs::path faults =
      fs::path{GPUMUX_SOURCE_DIR} / "scenarios" / "antipattern-mps-fault-blast-radius.yaml";
  cases.emplace_back("fault blast radius", resolve_scenario(load_scenario_file(faults.string())));
  for (const auto& [name, resolved] : cases) {
    RunResult results[2];
    RowRecorder recorders[2];
    for (const bool outcomes : {true, false}) {
      RowRecorder& recorder = recorders[outcomes ? 1 : 0];
      recorder.outcomes_wanted = outcomes;
      RunOptions options;
      options.partition = true;
      options.record_requests = true;
      options.observers = {&recorder};
      results[outcomes ? 1 : 0] = simulate(resolved, options);
    }
    EXPECT_GE(results[0].components, 2U) << name;
    EXPECT_GT(results[0].requests.size(), 100U) << name;
    EXPECT_EQ(recorders[0].outcomes, 0) << name;
    EXPECT_GT(recorders[1].outcomes, 0) << name;
    EXPECT_TRUE(same_rows(recorders[0].rows, recorders[1].rows)) << name;
    EXPECT_TRUE(same_rows(recorders[0].rows, results[0].requests)) << name;
    EXPECT_TRUE(same_rows(results[0].requests, results[1].requests)) << name;
    testing::expect_identical_runs(results[1], results[0], name);
  }
}

TEST(Partition, ShippedScenariosMatchOneQueue) {
  const fs::path dir = fs::path{GPUMUX_SOURCE_DIR} / "scenarios";
  int checked = 0, several = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const ResolvedScenario resolved = resolve_scenario(load_scenario_file(entry.path().string()));
    const RunResult split = simulate_with(resolved, true, true);
    testing::expect_same_run_in_time_order(simulate_with(resolved, false, false), split,
                                           entry.path().filename().string());
    several += split.components >= 2;
    ++checked;
  }
  EXPECT_GE(checked, 10);
  EXPECT_GE(several, 5);
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
