#pragma once
// A small RunResult with every table filled (tenants, devices, requests, kernels, events, SLOs,
// timeseries), for the result writers' tests (tests/unit/test_result_io.cpp,
// test_summary_text.cpp).
#include <string>
#include <vector>

#include "models/run/result.hpp"
#include "models/run/slo.hpp"

namespace gpumux::testing {

inline RunResult sample_result() {
  RunResult r;
  r.scenario_name = "hybrid-h100";
  r.seed = 7;
  r.sim_time_ns = 120'000'000'000;
  r.events = 123'456'789;
  r.wall_s = 3.2;
  r.scenario_yaml = "name: hybrid-h100\nseed: 7\n";
  r.calibration = {{"h100-sxm-80gb", "sha256:abc"}};

  TenantResult chat;  // deliberately not in alphabetical order: order must be kept
  chat.name = "zchat";
  chat.device = "gpu0/1";
  chat.requests = 5900;
  chat.completed = 5898;
  chat.failed = 2;
  chat.latency = {5898, 1.5e6, 1'230'000, 2'000'000, 4'560'000, 7'000'000, 12'000'000};
  chat.queueing = {5898, 2.5e5, 100'000, 200'000, 300'000, 400'000, 500'000};
  // The percentiles' confidence intervals; the p99.9 of 5898 samples has no upper bound.
  chat.latency.intervals = {{{1'200'000, 1'260'000, true, true, 1.0},
                             {1'900'000, 2'100'000, true, true, 1.0},
                             {4'400'000, 4'700'000, true, true, 1.0},
                             {6'500'000, 0, true, false, 1.0}}};
  chat.slowdown_mean = 1.7;
  chat.throughput_per_s = 49.2;
  chat.slo_violations = 3;
  chat.oom_events = 1;
  chat.gpu_seconds = 12.5;
  chat.cost = 0.25;
  TenantResult batch;
  batch.name = "batch";
  batch.device = "gpu1";
  batch.requests = 10;
  batch.completed = 10;
  batch.latency = {10,           2e9, 1'500'000'000, 2'000'000'000, 2'500'000'000, 2'600'000'000,
                   2'700'000'000};
  batch.slowdown_mean = 1.05;
  batch.throughput_per_s = 0.083;
  r.tenants = {chat, batch};

  DeviceResult mig;
  mig.name = "gpu0/1";
  mig.profile = "1g.10gb";
  mig.sharing = "exclusive";
  mig.sms = 16;
  mig.memory_bytes = 10LL << 30;
  mig.sm_busy = 0.61;
  mig.useful_fraction = 0.58;
  mig.memory_peak_bytes = 9LL << 30;
  DeviceResult whole;
  whole.name = "gpu1";
  whole.profile = "h100-sxm-80gb";
  whole.sharing = "time-slicing";
  whole.sms = 132;
  whole.memory_bytes = 80LL << 30;
  whole.sm_busy = 0.25;
  whole.useful_fraction = 0.2;
  whole.context_switches = 4000;
  whole.switch_overhead_ns = 100'000'000;
  r.devices = {mig, whole};

  for (std::uint64_t i = 0; i < 1000; ++i) {
    const auto arrival = static_cast<std::int64_t>(i) * 1000;
    const bool failed = i % 100 == 99;
    r.requests.push_back({static_cast<std::uint32_t>(i % 2), i, arrival, failed ? -1 : arrival + 10,
                          failed ? -1 : arrival + 500 + static_cast<std::int64_t>(i),
                          failed ? RequestStatus::failed : RequestStatus::completed});
  }
  r.events_log = {
      {5000, EventKind::oom, 0, 0, "zchat: out of memory on gpu0/1 (10.2 GiB > 10 GiB)"},
      {9000, EventKind::restart, 0, 0, "zchat restarted"}};
  r.timeseries["gpu0/1"] = {
      {.time_ns = 0, .sm_busy = 0.5, .dram_busy = 0.1, .memory_used_bytes = 1 << 30},
      {.time_ns = 100'000'000, .sm_busy = 0.7, .dram_busy = 0.2, .memory_used_bytes = 2LL << 30}};
  r.timeseries["gpu1"] = {{.time_ns = 0, .sm_busy = 0.2, .dram_busy = 0, .memory_used_bytes = 0}};
  return r;
}

// A fresh directory per test, removed afterwards.

}  // namespace gpumux::testing
