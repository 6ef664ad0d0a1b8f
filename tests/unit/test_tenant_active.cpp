// Tenants active for part of the run (`active: {from, until}`): arrivals only inside the window,
// start-up memory held only inside it, neighbours affected only while it is active, and the
// loader's checks. Cluster replays use it to run a pod's workload from its start to its end.
#include <gtest/gtest.h>

#include <string>

#include "models/scenario/emit.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

using testing::run_yaml;

RunResult run_with_records(const std::string& yaml) {
  RunOptions options;
  options.record_requests = true;
  return simulate(resolve_scenario(load_scenario_text(yaml, "test.yaml")), options);
}

// One tenant with constant arrivals every 100 ms and a 1 ms kernel on an exclusive H100.
std::string constant_tenant(const std::string& active) {
  return R"(
name: window
duration: 10s
gpus: [{name: g, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: g
    memory: 1GiB
)" + active +
         R"(
    workload:
      arrivals: {process: constant, rate: 10/s}
      request: {kernels: [{duration: 1ms}]}
)";
}

TEST(TenantActiveWindow, ConstantArrivalsStartAtFromAndStopBeforeUntil) {
  const RunResult r = run_with_records(constant_tenant("    active: {from: 2s, until: 5s}"));
  // A grid of 100 ms from 2 s: 2.0, 2.1, ..., 4.9 s -> 30 arrivals.
  ASSERT_EQ(r.requests.size(), 30u);
  for (std::size_t i = 0; i < r.requests.size(); ++i) {
    EXPECT_EQ(r.requests[i].arrival_ns, 2 * kSecond + static_cast<Nanos>(i) * 100 * kMillisecond);
  }
  // The same requests, shifted, as a tenant active for the whole run's first 3 s.
  const RunResult whole = run_with_records(constant_tenant("    active: {until: 3s}"));
  ASSERT_EQ(whole.requests.size(), r.requests.size());
  for (std::size_t i = 0; i < r.requests.size(); ++i) {
    EXPECT_EQ(r.requests[i].finish_ns - r.requests[i].arrival_ns,
              whole.requests[i].finish_ns - whole.requests[i].arrival_ns);
  }
}

TEST(TenantActiveWindow, WholeRunWindowChangesNothing) {
  const RunResult plain = run_with_records(constant_tenant(""));
  const RunResult windowed =
      run_with_records(constant_tenant("    active: {from: 0s, until: 10s}"));
  ASSERT_EQ(plain.requests.size(), windowed.requests.size());
  for (std::size_t i = 0; i < plain.requests.size(); ++i) {
    EXPECT_EQ(plain.requests[i].arrival_ns, windowed.requests[i].arrival_ns);
    EXPECT_EQ(plain.requests[i].finish_ns, windowed.requests[i].finish_ns);
  }
}

// A latency-sensitive tenant on a time-sliced GPU and a closed-loop neighbour present only in
// [4 s, 6 s): requests before 4 s and after the neighbour's drain run at solo latency; inside
// the window they wait for the neighbour's slices.
TEST(TenantActiveWindow, NeighbourSlowsOthersOnlyWhileActive) {
  const RunResult r = run_with_records(R"(
name: neighbour
duration: 10s
gpus: [{name: g, model: h100-sxm-80gb, sharing: {mode: time-slicing}}]
tenants:
  - name: probe
    device: g
    workload:
      arrivals: {process: constant, rate: 20/s}
      request: {kernels: [{duration: 1ms}]}
  - name: hog
    device: g
    active: {from: 4s, until: 6s}
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{duration: 20ms}]}
)");
  Nanos solo = -1, worst_before = 0, worst_inside = 0, worst_after = 0;
  Nanos hog_first = kNever, hog_last = 0;
  for (const RequestRecord& q : r.requests) {
    if (q.tenant == 1) {
      hog_first = std::min(hog_first, q.arrival_ns);
      hog_last = std::max(hog_last, q.arrival_ns);
      continue;
    }
    const Nanos latency = q.finish_ns - q.arrival_ns;
    if (solo < 0) solo = latency;
    if (q.arrival_ns < 4 * kSecond) worst_before = std::max(worst_before, latency);
    if (q.arrival_ns >= 4 * kSecond && q.arrival_ns < 6 * kSecond)
      worst_inside = std::max(worst_inside, latency);
    if (q.arrival_ns >= 6 * kSecond + 100 * kMillisecond)
      worst_after = std::max(worst_after, latency);
  }
  EXPECT_EQ(hog_first, 4 * kSecond);
  EXPECT_LT(hog_last, 6 * kSecond);
  EXPECT_EQ(worst_before, solo);
  EXPECT_EQ(worst_after, solo);
  EXPECT_GT(worst_inside, solo + kMillisecond);  // waited at least part of a slice
}

// 50 GiB + 40 GiB exceed an 80 GB H100; the two 40 GiB tenants fit one after the other only
// because the first frees its memory at `until`.
std::string sequential_memory(const std::string& second_from) {
  return R"(
name: memory-window
duration: 4s
gpus: [{name: g, model: h100-sxm-80gb, sharing: {mode: time-slicing}}]
tenants:
  - name: first
    device: g
    memory: 40GiB
    active: {until: 2s}
    workload:
      arrivals: {process: constant, rate: 10/s}
      request: {kernels: [{duration: 1ms}]}
  - name: second
    device: g
    memory: 40GiB
    active: {from: )" +
         second_from + R"(}
    workload:
      arrivals: {process: constant, rate: 10/s}
      request: {kernels: [{duration: 1ms}]}
)";
}

TEST(TenantActiveWindow, StartUpMemoryIsHeldOnlyInsideTheWindow) {
  const RunResult after = run_yaml(sequential_memory("2001ms"));
  EXPECT_TRUE(after.events_log.empty()) << after.events_log.front().detail;
  const RunResult overlapping = run_yaml(sequential_memory("1s"));
  ASSERT_FALSE(overlapping.events_log.empty());
  EXPECT_EQ(overlapping.events_log.front().kind, EventKind::oom);
  EXPECT_EQ(overlapping.events_log.front().time_ns, kSecond);
}

std::string load_error(const std::string& active, const std::string& duration = "10s") {
  std::string yaml = constant_tenant(active);
  yaml.replace(yaml.find("duration: 10s"), 13, "duration: " + duration);
  try {
    load_scenario_text(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TenantActiveWindow, LoaderRefusesEmptyOrLateWindows) {
  EXPECT_NE(load_error("    active: {from: 3s, until: 3s}").find("must be after from"),
            std::string::npos);
  EXPECT_NE(load_error("    active: {from: 12s}").find("never runs"), std::string::npos);
  EXPECT_NE(load_error("    active: {from: 1s, to: 2s}").find("to"), std::string::npos);
  EXPECT_NE(load_error("    active: {until: -1s}"), "");
  EXPECT_EQ(load_error("    active: {from: 1s, until: 20s}"), "");  // until may pass duration
}

TEST(TenantActiveWindow, EmitWritesTheWindowBack) {
  const Scenario s =
      load_scenario_text(constant_tenant("    active: {from: 2s, until: 5s}"), "test.yaml");
  const Scenario again = load_scenario_text(emit_scenario_yaml(s), "again.yaml");
  ASSERT_EQ(again.tenants.size(), 1u);
  EXPECT_EQ(again.tenants[0].active_from, 2 * kSecond);
  ASSERT_TRUE(again.tenants[0].active_until.has_value());
  EXPECT_EQ(*again.tenants[0].active_until, 5 * kSecond);
}

}  // namespace
}  // namespace gpumux
