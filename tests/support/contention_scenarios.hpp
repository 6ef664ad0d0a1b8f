#pragma once
// Scenario text and checks shared by the contention tests (tests/unit/test_contention*.cpp):
// one H100 with a given sharing block, a closed-loop client, a whole GPU as a law sees it, a lone
// kernel's latency on a MIG slice, and two runs' headline numbers compared exactly.
#include <gtest/gtest.h>

#include <string>

#include "models/config/profile_loader.hpp"
#include "models/gpu/contention_law.hpp"
#include "models/gpu/device.hpp"
#include "models/run/result.hpp"
#include "tests/support/launch.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux::testing {

/// A closed-loop tenant NAME (concurrency 1) on gpu0 whose request is KERNEL (YAML flow text).
inline std::string closed_client(const std::string& name, const std::string& kernel,
                                 const std::string& extra = "") {
  return "  - {name: " + name +
         ", device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, " + extra +
         "request: {kernels: [" + kernel + "]}}}\n";
}

/// A scenario's head: one H100 named gpu0 with SHARING, under contention law LAW ("" = the
/// default), 2 s; the tenants follow.
inline std::string gpu(const std::string& sharing, const std::string& law = "") {
  return (law.empty() ? "" : "contention_law: " + law + "\n") +
         "name: t\nduration: 2s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, sharing: " +
         sharing + "}\ntenants:\n";
}

/// The whole GPU as the contention law `law` sees it.
inline DeviceGeometry whole_gpu(const std::string& law,
                                const std::string& model = "h100-sxm-80gb") {
  const DeviceProfile& p = load_device_profile(model);
  DeviceGeometry g;
  g.gpu_sms = g.sms = p.sms;
  set_law_terms(g, p, 1.0, *find_contention_law(law));
  return g;
}

/// The median latency, less the launch overhead, of KERNEL run alone (closed loop) on an H100's
/// MIG instance PROFILE under law LAW ("" = the default), ns.
inline double mig_latency(const std::string& profile, const std::string& kernel,
                          const std::string& law) {
  const RunResult r = run_yaml(
      (law.empty() ? std::string() : "contention_law: " + law + "\n") +
      "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb, mig: [" + profile +
      "]}\ntenants:\n  - {name: a, device: gpu0/0, workload: {arrivals: {process: closed, "
      "concurrency: 1}, request: {kernels: [" +
      kernel + "]}}}\n");
  return tenant(r, "a").latency.p50 - launch_ns();
}

/// The two runs' completions, mean and p99 latencies, GPU seconds and SM busy are equal, bit for
/// bit.
inline void expect_same_numbers(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.tenants.size(), b.tenants.size());
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    EXPECT_EQ(a.tenants[i].completed, b.tenants[i].completed);
    EXPECT_EQ(a.tenants[i].latency.mean, b.tenants[i].latency.mean);
    EXPECT_EQ(a.tenants[i].latency.p99, b.tenants[i].latency.p99);
    EXPECT_EQ(a.tenants[i].gpu_seconds, b.tenants[i].gpu_seconds);
  }
  EXPECT_EQ(a.devices[0].sm_busy, b.devices[0].sm_busy);
}

}  // namespace gpumux::testing
