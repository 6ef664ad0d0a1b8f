// Metrics are observers (issue 6, item 6): the sampling interval, whether requests are recorded
// (HDF5 written or not) and the event queue change no number of the summary; the run ends when
// the last request has completed or failed after `duration`, never on a sampling tick.
// Also the per-GPU occupancy invariant: the tenants of one physical GPU cannot be attributed
// more GPU time than the measured window.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/output/result_io.hpp"
#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/run/tenant_stats.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const fs::path kScenarioDir = fs::path{GPUMUX_SOURCE_DIR} / "scenarios";

// Shipped scenarios that cover every strategy, batching, faults with restarts and MIG hybrids.
const std::vector<std::string> kStems = {"antipattern-training-plus-inference-timesliced",
                                         "antipattern-mps-fault-blast-radius",
                                         "quickstart",
                                         "hybrid-h100",
                                         "mps-in-mig-h200",
                                         "pattern-llm-serving",
                                         "pattern-training"};

Scenario load(const std::string& stem, const std::vector<Override>& overrides = {}) {
  return load_scenario_file((kScenarioDir / (stem + ".yaml")).string(), overrides);
}

RunResult run(const std::string& stem, const std::vector<Override>& overrides = {},
              RunOptions options = {}) {
  return simulate(resolve_scenario(load(stem, overrides)), options);
}

/// The summary (what `run --json` prints) without the host time.
std::string summary_of(const RunResult& r) {
  ordered_json j = summary_json(r);
  j.erase("wall_s");
  return j.dump();
}

Override sample(const std::string& period) {
  return Override{"output", "{sample: " + period + "}"};
}

TEST(MetricsAreObservers, SummaryIsIdenticalWhateverTheSampleInterval) {
  for (const std::string& stem : kStems) {
    const RunResult reference = run(stem, {sample("100ms")});
    ASSERT_EQ(reference.status, "complete") << stem;
    for (const char* period : {"1ms", "1s", "7s"}) {
      const RunResult other = run(stem, {sample(period)});
      EXPECT_EQ(summary_of(reference), summary_of(other))
          << stem << ": output.sample " << period << " changes the summary";
      // The timeseries follows the interval, and ends at the end of the run.
      const auto& series = other.timeseries.begin()->second;
      ASSERT_FALSE(series.empty()) << stem;
      EXPECT_EQ(series.back().time_ns, other.sim_time_ns) << stem << " " << period;
    }
  }
}

TEST(MetricsAreObservers, TrainingPlusInferenceSmBusyDoesNotDependOnSampling) {
  // The issue's probe: SM busy was 0.995 / 0.968 / 0.851 at 100 ms / 1 s / 7 s.
  const std::string stem = "antipattern-training-plus-inference-timesliced";
  std::vector<double> busy;
  std::vector<std::int64_t> end, events;
  for (const char* period : {"1ms", "100ms", "1s", "7s"}) {
    const RunResult r = run(stem, {sample(period)});
    busy.push_back(r.devices.at(0).sm_busy);
    end.push_back(r.sim_time_ns);
    events.push_back(static_cast<std::int64_t>(r.events));
  }
  for (std::size_t i = 1; i < busy.size(); ++i) {
    EXPECT_EQ(busy[i], busy[0]);
    EXPECT_EQ(end[i], end[0]);
    EXPECT_EQ(events[i], events[0]);
  }
}

TEST(MetricsAreObservers, SummaryIsIdenticalWithoutRequestRecordsAndUnderEveryQueue) {
  for (const std::string& stem : kStems) {
    RunOptions base;
    base.queue = QueueKind::heap;
    const std::string reference = summary_of(run(stem, {}, base));
    RunOptions no_records = base;
    no_records.record_requests = false;  // what `gpumux run` does without -o
    EXPECT_EQ(reference, summary_of(run(stem, {}, no_records))) << stem << ": records";
    for (QueueKind kind : {QueueKind::calendar, QueueKind::ladder}) {
      RunOptions options;
      options.queue = kind;
      EXPECT_EQ(reference, summary_of(run(stem, {sample("1s")}, options)))
          << stem << ": queue " << to_string(kind);
    }
  }
}

TEST(MetricsAreObservers, RunEndsWhenTheLastRequestDrainsAfterDuration) {
  for (const std::string& stem : kStems) {
    const Scenario s = load(stem);
    const RunResult r = run(stem, {sample("7s")});
    std::int64_t last = 0;
    for (const RequestRecord& q : r.requests) last = std::max(last, q.finish_ns);
    EXPECT_EQ(r.sim_time_ns, std::max<std::int64_t>(s.duration, last)) << stem;
  }
}

TEST(MetricsAreObservers, AnIdleEndIsDurationNotTheNextTick) {
  // One request at t = 0 that takes 1 ms; nothing runs after. The run lasts `duration`
  // (not the next 7 s tick), and the timeseries has a final partial sample at 2.5 s.
  const std::string yaml = R"(
name: idle-end
duration: 2500ms
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: constant, rate: 1/s}
      request: {kernels: [{name: k, duration: 1ms}]}
output: {sample: 7s}
)";
  const RunResult r = simulate(resolve_scenario(load_scenario_text(yaml, "idle-end.yaml")));
  EXPECT_EQ(r.sim_time_ns, 2'500'000'000);
  const auto& series = r.timeseries.at("gpu0");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].time_ns, 2'500'000'000);
  // Three 1 ms kernels (t = 0, 1 s, 2 s) in 2.5 s of sampled time.
  EXPECT_NEAR(series[0].sm_busy, r.devices[0].sm_busy, 1e-12);
  EXPECT_GT(r.devices[0].sm_busy, 0.0);
}

// The sampler keeps at most max_samples_per_series samples per device: on reaching it, pairs of
// samples merge (from the exact integrals) and the period doubles. What is kept is a coarser
// view of the same run: same end, same busy integral, the same memory readings at kept times.
TEST(Timeseries, LongSeriesAreDecimatedKeepingTheIntegral) {
  const std::vector<Override> fine = {sample("10ms"), Override{"duration", "20s"}};
  const RunResult full = run("quickstart", fine);
  RunOptions options;
  options.max_samples_per_series = 64;
  const RunResult coarse = run("quickstart", fine, options);
  EXPECT_EQ(summary_of(full), summary_of(coarse));
  for (const auto& [device, series] : full.timeseries) {
    const auto& kept = coarse.timeseries.at(device);
    ASSERT_GT(series.size(), 1000u) << device;  // 20 s every 10 ms (plus the drain)
    EXPECT_LT(kept.size(), 64u) << device;
    EXPECT_GE(kept.size(), 32u) << device;
    EXPECT_EQ(kept.back().time_ns, series.back().time_ns) << device;
    std::map<std::int64_t, const TimeseriesSample*> by_time;
    for (const TimeseriesSample& s : series) by_time[s.time_ns] = &s;
    double busy_full = 0, busy_kept = 0, dram_full = 0, dram_kept = 0;
    std::int64_t previous = 0;
    for (const TimeseriesSample& s : series) {
      busy_full += s.sm_busy * static_cast<double>(s.time_ns - previous);
      dram_full += s.dram_busy * static_cast<double>(s.time_ns - previous);
      previous = s.time_ns;
    }
    previous = 0;
    for (const TimeseriesSample& s : kept) {
      ASSERT_GT(s.time_ns, previous) << device;
      ASSERT_TRUE(by_time.count(s.time_ns)) << device << " " << s.time_ns;
      EXPECT_EQ(s.memory_used_bytes, by_time[s.time_ns]->memory_used_bytes);
      busy_kept += s.sm_busy * static_cast<double>(s.time_ns - previous);
      dram_kept += s.dram_busy * static_cast<double>(s.time_ns - previous);
      previous = s.time_ns;
    }
    EXPECT_GT(busy_full, 0.0) << device;
    EXPECT_NEAR(busy_kept, busy_full, 1e-9 * busy_full) << device;
    EXPECT_NEAR(dram_kept, dram_full, 1e-9 * std::max(1.0, dram_full)) << device;
    // Before the last (partial) sample, the kept samples are evenly spaced, a power-of-two
    // multiple of 10 ms.
    const std::int64_t step = kept[1].time_ns - kept[0].time_ns;
    EXPECT_EQ(step % 10'000'000, 0) << device;
    EXPECT_EQ((step / 10'000'000) & (step / 10'000'000 - 1), 0) << device << " step " << step;
    for (std::size_t i = 1; i + 1 < kept.size(); ++i) {
      EXPECT_EQ(kept[i].time_ns - kept[i - 1].time_ns, step) << device << " at " << i;
    }
  }
}

const char* kLateRestart = R"(
name: late-restart
duration: 1s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: constant, rate: 10/s}
      request: {kernels: [{name: k, duration: 1ms}]}
faults:
  - {tenant: t, at: 500ms, kind: fatal, recovery: 20000h}
output: {sample: 1ms}
)";

TEST(Timeseries, TheSamplerStopsWithTheRun) {
  // The restart comes 20000 h after the fault, long after the run ended (at 1 s: nothing runs
  // after the fault). The sampler used to tick every 1 ms up to it: 7e13 ticks and samples.
  const RunResult r =
      simulate(resolve_scenario(load_scenario_text(kLateRestart, "late-restart.yaml")));
  EXPECT_EQ(r.sim_time_ns, 1'000'000'000);
  const auto& series = r.timeseries.at("gpu0");
  EXPECT_EQ(series.size(), 1000u);
  EXPECT_EQ(series.back().time_ns, 1'000'000'000);
}

TEST(Timeseries, AKernelDrawBeyondTheInt64HorizonSaturates) {
  // 1e8 input tokens x 10000 h per token: 3.6e24 ns, beyond int64 nanoseconds (9.2e18). The
  // device's finish time used to wrap (exit 3, "event scheduled in the past"); now the draw
  // saturates at 2^62 ns (about 146 years) and the request finishes then.
  const std::string yaml = R"(
name: huge-draw
duration: 1s
allow_large: true
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: constant, rate: 1/s}
      tokens: {input: 100000000, output: 1}
      request: {kernels: [{name: k, duration: 10000h, per_token: input}]}
)";
  RunOptions options;
  options.max_samples_per_series = 64;
  const RunResult r =
      simulate(resolve_scenario(load_scenario_text(yaml, "huge-draw.yaml")), options);
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].status, RequestStatus::completed);
  EXPECT_GE(r.requests[0].finish_ns, std::int64_t{1} << 62);
  EXPECT_EQ(r.sim_time_ns, r.requests[0].finish_ns);
  const auto& series = r.timeseries.at("gpu0");
  EXPECT_LT(series.size(), 64u);
  EXPECT_EQ(series.back().time_ns, r.sim_time_ns);
  EXPECT_NEAR(series.back().sm_busy, 1.0, 1e-9);  // the one kernel holds the GPU throughout
}

// Per physical GPU: the GPU time attributed to its tenants (occupancy integral) cannot exceed
// the measured window. A tenant spanning several GPUs (data parallel) is checked against the sum
// of their windows. Fails while kernels can be double-booked on SMs (issue 6, item 1: passes
// once kernels hold SMs by residency).
// A recorder that counts what it is shown (models/run/recorder.hpp).
struct CountingObserver : Recorder {
  std::int64_t completed = 0, failed = 0, measured_completed = 0, kernels = 0, events = 0,
               samples = 0, arrivals = 0;
  void on_request_arrived(std::uint32_t, Nanos, bool) override { ++arrivals; }
  void on_request_completed(const RequestOutcome& r) override {
    ++completed;
    measured_completed += r.measured;
  }
  void on_request_failed(const RequestOutcome&) override { ++failed; }
  void on_kernel_completed(const KernelRecord&) override { ++kernels; }
  void on_event(const EventRecord&) override { ++events; }
  void on_sample(std::size_t, const TimeseriesSample&) override { ++samples; }
};

TEST(MetricsAreObservers, ExtraObserversChangeNothingAndSeeEveryRecord) {
  for (const std::string& stem : kStems) {
    RunOptions plain;
    plain.record_requests = true;
    const RunResult reference = run(stem, {Override{"output", "{kernels: true}"}}, plain);
    CountingObserver a, b;
    RunOptions observed = plain;
    observed.observers = {&a, &b};
    const RunResult other = run(stem, {Override{"output", "{kernels: true}"}}, observed);
    // Bit-identical: the summary, every record and every sample.
    EXPECT_EQ(summary_of(reference), summary_of(other)) << stem;
    EXPECT_EQ(reference.requests.size(), other.requests.size()) << stem;
    EXPECT_EQ(reference.kernels.size(), other.kernels.size()) << stem;
    EXPECT_EQ(reference.events_log.size(), other.events_log.size()) << stem;
    EXPECT_EQ(reference.timeseries.size(), other.timeseries.size()) << stem;
    for (const auto& [device, series] : reference.timeseries) {
      const auto& again = other.timeseries.at(device);
      ASSERT_EQ(series.size(), again.size()) << stem << " " << device;
      for (std::size_t i = 0; i < series.size(); ++i) {
        EXPECT_EQ(series[i].sm_busy, again[i].sm_busy) << stem << " " << device << " " << i;
        EXPECT_EQ(series[i].memory_used_bytes, again[i].memory_used_bytes) << stem;
      }
    }
    // The observers saw exactly what the result records.
    std::int64_t completed = 0, failed = 0, measured = 0, samples = 0;
    for (const RequestRecord& r : other.requests) {
      completed += r.status == RequestStatus::completed;
      failed += r.status == RequestStatus::failed;
    }
    for (const TenantResult& t : other.tenants) measured += t.completed;
    for (const auto& [device, series] : other.timeseries) {
      samples += static_cast<std::int64_t>(series.size());
    }
    for (const CountingObserver* o : {&a, &b}) {
      EXPECT_EQ(o->completed, completed) << stem;
      EXPECT_EQ(o->failed, failed) << stem;
      EXPECT_EQ(o->measured_completed, measured) << stem;
      EXPECT_EQ(o->kernels, static_cast<std::int64_t>(other.kernels.size())) << stem;
      EXPECT_EQ(o->events, static_cast<std::int64_t>(other.events_log.size())) << stem;
      EXPECT_EQ(o->samples, samples) << stem;
    }
  }
}

// A recorder may say it does not use arrivals or kernels (a result file without output.kernels):
// it is shown none, one beside it that uses them sees every one (as many as when it is alone),
// and the result is the same, whether or not the run splits into components.
struct SelectiveObserver : CountingObserver {
  bool arrivals_wanted = true, kernels_wanted = true;
  bool wants_arrivals() const override { return arrivals_wanted; }
  bool wants_kernels() const override { return kernels_wanted; }
};

TEST(MetricsAreObservers, ARecorderThatDeclinesArrivalsAndKernelsIsShownNone) {
  for (const std::string& stem : kStems) {
    for (const bool partition : {true, false}) {
      RunOptions plain;
      plain.partition = partition;
      CountingObserver alone;
      RunOptions one = plain;
      one.observers = {&alone};
      const RunResult reference = run(stem, {Override{"output", "{kernels: true}"}}, one);
      CountingObserver all;
      SelectiveObserver declines;
      declines.arrivals_wanted = declines.kernels_wanted = false;
      RunOptions both = plain;
      both.observers = {&declines, &all};
      const RunResult other = run(stem, {Override{"output", "{kernels: true}"}}, both);
      EXPECT_EQ(summary_of(reference), summary_of(other)) << stem;
      EXPECT_GT(alone.arrivals, 0) << stem;
      EXPECT_EQ(all.arrivals, alone.arrivals) << stem;
      EXPECT_EQ(all.kernels, alone.kernels) << stem;
      EXPECT_EQ(all.completed, alone.completed) << stem;
      EXPECT_EQ(declines.arrivals, 0) << stem;
      EXPECT_EQ(declines.kernels, 0) << stem;
      EXPECT_EQ(declines.completed, alone.completed) << stem;  // the rest it is shown
      EXPECT_EQ(declines.events, alone.events) << stem;
    }
  }
}

// The result's per-tenant statistics are a recorder: a second TenantStatsRecorder attached from
// outside, fed only through the Recorder calls, arrives at exactly the run's counts and
// percentiles for every tenant (arrivals, completions, failures, OOM events, latencies).
TEST(MetricsAreObservers, TenantStatisticsAreWhatAnAttachedStatsRecorderSees) {
  for (const std::string& stem : kStems) {
    const Scenario scenario = load(stem);
    run::TenantStatsRecorder outside(scenario.tenants);
    RunOptions options;
    options.observers.push_back(&outside);
    const RunResult result = simulate(resolve_scenario(scenario), options);
    ASSERT_EQ(result.tenants.size(), scenario.tenants.size());
    for (std::size_t t = 0; t < result.tenants.size(); ++t) {
      run::TenantStats seen = outside.tenant(t);  // a copy (quantile() is not const)
      const TenantResult& tr = result.tenants[t];
      EXPECT_EQ(seen.requests, tr.requests) << stem << " " << tr.name;
      EXPECT_EQ(seen.completed, tr.completed) << stem << " " << tr.name;
      EXPECT_EQ(seen.failed, tr.failed) << stem << " " << tr.name;
      EXPECT_EQ(seen.oom_events, tr.oom_events) << stem << " " << tr.name;
      EXPECT_EQ(seen.slo_violations, tr.slo_violations) << stem << " " << tr.name;
      EXPECT_EQ(static_cast<std::int64_t>(seen.latency.count()), tr.latency.count)
          << stem << " " << tr.name;
      if (tr.latency.count > 0) {
        EXPECT_EQ(seen.latency.quantile(0.99), tr.latency.p99) << stem << " " << tr.name;
      }
      if (tr.time_per_output_token.count > 0) {
        EXPECT_EQ(seen.time_per_output_token.quantile(0.5), tr.time_per_output_token.p50)
            << stem << " " << tr.name;
      }
    }
  }
}

TEST(OccupancyInvariant, GpuSecondsOfOneGpuAtMostTheWindow) {
  std::vector<std::string> stems;
  for (const auto& entry : fs::directory_iterator(kScenarioDir)) {
    if (entry.path().extension() == ".yaml") stems.push_back(entry.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  for (const std::string& stem : stems) {
    const Scenario s = load(stem);
    const RunResult r = run(stem);
    const double window_s = static_cast<double>(r.sim_time_ns - s.warmup) * 1e-9;
    std::map<std::string, double> per_gpu;
    double total = 0;
    std::size_t gpus_used = 0;
    std::map<std::string, bool> seen;
    for (const TenantResult& t : r.tenants) {
      // "gpu0/1" -> gpu0; "gpu0-0,gpu0-1" -> two GPUs.
      std::vector<std::string> gpus;
      std::string rest = t.device;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string one = rest.substr(0, comma);
        const std::string gpu = one.substr(0, one.find('/'));
        if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      }
      for (const std::string& g : gpus) {
        if (!seen[g]) ++gpus_used;
        seen[g] = true;
      }
      if (gpus.size() == 1) per_gpu[gpus[0]] += t.gpu_seconds;
      total += t.gpu_seconds;
    }
    for (const auto& [gpu, seconds] : per_gpu) {
      EXPECT_LE(seconds, window_s * (1 + 1e-9))
          << stem << "/" << gpu << ": tenants hold more GPU time than the window";
    }
    EXPECT_LE(total, window_s * static_cast<double>(gpus_used) * (1 + 1e-9)) << stem;
  }
}

TEST(DramBusy, IsAFractionAndFollowsMemoryBoundWork) {
  // A purely memory-bound kernel keeps the DRAM busy; a compute-bound one does not.
  auto busy = [](const std::string& memory_bound) {
    const std::string yaml = R"(
name: dram
duration: 1s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: closed, concurrency: 1, think: 0ms}
      request: {kernels: [{name: k, duration: 1ms, sm_fraction: 1.0, memory_bound: )" +
                             memory_bound + R"(}]}
)";
    const RunResult r = simulate(resolve_scenario(load_scenario_text(yaml, "dram.yaml")));
    return r.devices.at(0);
  };
  const DeviceResult streaming = busy("1.0");
  const DeviceResult compute = busy("0.0");
  EXPECT_GT(streaming.dram_busy, 0.9);
  EXPECT_LE(streaming.dram_busy, 1.0 + 1e-9);
  EXPECT_LT(compute.dram_busy, 0.01);
  EXPECT_GE(compute.dram_busy, 0.0);
}

}  // namespace
}  // namespace gpumux
