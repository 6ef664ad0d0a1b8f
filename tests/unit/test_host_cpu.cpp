// The host CPU's speed (models/gpu/host_cpu.hpp): the named hosts and the profiles that carry
// them, the law t_host = t_ref x s_fit / s in closed form on every term it scales (a catalog
// request's T_req, t_op and T_fe; an eager LLM card's dispatch floor; a named engine's CPU per
// iteration), speed 1 giving the unscaled numbers bit for bit, the user's measured times left
// as given, the scenario's `host: {cpu_speed: ...}` and its refusals, the emit round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/app/application.hpp"
#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/host_cpu.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/workload/engine_cpu.hpp"
#include "models/workload/host_time.hpp"
#include "models/workload/llm_card.hpp"
#include "tests/support/llm_cards.hpp"

namespace gpumux {
namespace {

using testing::card;
using testing::kernel_named;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

// One tenant alone on PROFILE; WORKLOAD the keys under `workload:` (6 spaces indented).
std::string scenario_text(const std::string& profile, const std::string& workload) {
  return "name: t\nseed: 1\nduration: 100ms\nwarmup: 0s\n"
         "gpus:\n  - {name: gpu0, model: " +
         profile +
         ", sharing: {mode: exclusive}}\n"
         "tenants:\n  - name: w\n    device: gpu0\n    workload:\n" +
         workload;
}

ResolvedScenario resolved(const std::string& profile, const std::string& workload) {
  return resolve_scenario(load_scenario_text(scenario_text(profile, workload), "host.yaml"));
}

std::string error_of(const std::string& profile, const std::string& workload) {
  try {
    (void)resolved(profile, workload);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kLlm =
    "      arrivals: {process: closed, concurrency: 1, think: 1ms}\n"
    "      tokens: {input: 128, output: 16}\n"
    "      batching: {max_batch: 4, engine_cpu: vllm-v0}\n"
    "      llm: {model: llama-2-7b, dtype: fp16, tp: 1, host_per_op: vllm-v0}\n";

const std::string kCatalog =
    "      arrivals: {process: closed, concurrency: 1, think: 1ms}\n"
    "      model: bert-base\n      batch: 1\n      runtime: pytorch\n";

TEST(HostCpu, NamedHostsAndProfiles) {
  const NamedHostCpu* a100 = named_host_cpu("dgx-a100");
  const NamedHostCpu* h100 = named_host_cpu("dgx-h100");
  ASSERT_NE(a100, nullptr);
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(a100->speed, 1.0);  // the reference
  // (3.8 GHz / 3.4 GHz) x 1.19 (Zen 2 -> Zen 3) x 1.19 (Cypress Cove -> Golden Cove).
  EXPECT_DOUBLE_EQ(h100->speed, 3.8 / 3.4 * 1.19 * 1.19);
  EXPECT_EQ(named_host_cpu("generic")->speed, 1.0);
  EXPECT_EQ(named_host_cpu("epyc"), nullptr);
  EXPECT_EQ(load_device_profile("a100-80gb").host_cpu, "dgx-a100");
  EXPECT_EQ(load_device_profile("a100-sxm4-40gb").host_cpu, "dgx-a100");
  EXPECT_EQ(load_device_profile("h100-sxm-80gb").host_cpu, "dgx-h100");
  EXPECT_DOUBLE_EQ(load_device_profile("h100-sxm-80gb").host_cpu_speed, h100->speed);
  EXPECT_EQ(load_device_profile("a30-24gb").host_cpu, "generic");
  EXPECT_EQ(load_device_profile("a30-24gb").host_cpu_speed, 1.0);
}

// Catalog terms: T_req x s_profile / s, t_op / s, T_fe / s, each rounded once; the copy is the
// link's. Speed equal to the fitted one: every term bit for bit the unscaled one.
TEST(HostCpu, CatalogTermsScaleInClosedForm) {
  DeviceProfile gpu = load_device_profile("a100-80gb");
  gpu.host_per_request["tensorrt"] = 40'000;
  gpu.pcie_bandwidth = 20e9;
  const ServingFrontEnd grpc{"triton-grpc", 1'300'000, 1.1e9, "test"};
  const HostTerms base = request_host_terms(gpu, "tensorrt", 10e-6, 3e6, 1e6, {}, grpc);
  HostOverrides same;
  same.cpu_speed = 1.0;
  const HostTerms one = request_host_terms(gpu, "tensorrt", 10e-6, 3e6, 1e6, same, grpc);
  EXPECT_EQ(one.per_request, base.per_request);
  EXPECT_EQ(one.front_end_time, base.front_end_time);
  EXPECT_EQ(one.per_op_s, base.per_op_s);
  EXPECT_EQ(one.cpu_origin, "user");
  EXPECT_EQ(base.cpu_origin, "profile");
  EXPECT_EQ(base.cpu, "dgx-a100");
  for (const double s : {0.5, 1.583, 2.0, 3.7}) {
    HostOverrides user;
    user.cpu_speed = s;
    const HostTerms t = request_host_terms(gpu, "tensorrt", 10e-6, 3e6, 1e6, user, grpc);
    EXPECT_EQ(t.per_request, std::llround(40'000 / s)) << s;
    EXPECT_DOUBLE_EQ(t.per_op_s, 10e-6 / s);
    EXPECT_EQ(t.copy_time, base.copy_time);  // the link's, not the CPU's
    EXPECT_EQ(t.front_end_time, std::llround(1'300'000 / s) + std::llround(4e6 / 1.1e9 / s * 1e9));
  }
  // A profile whose own host is faster: its fitted T_req is that host's (s_fit = its speed).
  DeviceProfile fast = gpu;
  fast.host_cpu_speed = 2.0;
  EXPECT_EQ(request_host_terms(fast, "tensorrt", 0, 0, 0, {}).per_request, 40'000);
  EXPECT_DOUBLE_EQ(request_host_terms(fast, "tensorrt", 10e-6, 0, 0, {}).per_op_s, 5e-6);
  HostOverrides ref;
  ref.cpu_speed = 1.0;
  EXPECT_EQ(request_host_terms(fast, "tensorrt", 0, 0, 0, ref).per_request, 80'000);
  // The user's measured terms are their host's: never scaled.
  HostOverrides mine;
  mine.cpu_speed = 2.0;
  mine.per_request = 7'000;
  mine.per_op = 3'000;
  mine.front_end_latency = 500'000;
  mine.front_end_bandwidth = 1e9;
  const HostTerms m = request_host_terms(gpu, "tensorrt", 10e-6, 3e6, 1e6, mine, grpc);
  EXPECT_EQ(m.per_request, 7'000);
  EXPECT_DOUBLE_EQ(m.per_op_s, 3e-6);
  EXPECT_EQ(m.front_end_time, 500'000 + 4'000'000);
}

// A catalog tenant end to end: host gap and the time before its first kernel on a host twice as
// fast are the unscaled ones halved (pytorch has no fitted T_req on the A100; copies stay).
TEST(HostCpu, CatalogTenantOnAFasterHost) {
  const ResolvedScenario base = resolved("a100-80gb", kCatalog);
  const ResolvedScenario one = resolved("a100-80gb", kCatalog + "      host: {cpu_speed: 1}\n");
  const ResolvedScenario two = resolved("a100-80gb", kCatalog + "      host: {cpu_speed: 2}\n");
  const WorkloadSpec& b = base.scenario.tenants.front().workload;
  const WorkloadSpec& o = one.scenario.tenants.front().workload;
  const WorkloadSpec& t = two.scenario.tenants.front().workload;
  ASSERT_GT(b.host_gap, 0);
  EXPECT_EQ(o.host_gap, b.host_gap);
  EXPECT_EQ(o.kernels.front().host_before, b.kernels.front().host_before);
  EXPECT_NEAR(static_cast<double>(t.host_gap), b.host_gap / 2.0, 1.0);
  EXPECT_EQ(t.kernels.front().host_before, b.kernels.front().host_before);  // copies only
  EXPECT_EQ(b.host_cpu, "dgx-a100");
  EXPECT_EQ(b.host_cpu_origin, ParamOrigin::fallback);
  EXPECT_EQ(t.host_cpu_origin, ParamOrigin::user);
  EXPECT_EQ(t.host_cpu_speed, 2.0);
}

// An eager LLM card: the dispatch floor of every launch is n x host_per_op / s for the named
// engine and the generic runtime, the user's duration as given; speed 1 bit for bit.
TEST(HostCpu, LlmDispatchFloorScales) {
  const DeviceProfile a100 = load_device_profile("a100-80gb");
  LlmCard c = card("llama-2-7b");
  c.host_per_op = static_cast<double>(kVllmV0HostPerOp) * 1e-9;
  c.host_per_op_named = true;
  const double base = kernel_named(llm_kernels(c, a100), "gemm").roofline.floor_ns;
  EXPECT_DOUBLE_EQ(base, 8 * 32 * static_cast<double>(kVllmV0HostPerOp));
  c.host_cpu_speed = 1.0;
  EXPECT_EQ(kernel_named(llm_kernels(c, a100), "gemm").roofline.floor_ns, base);
  for (const double s : {0.5, 1.583, 2.5}) {
    c.host_cpu_speed = s;
    EXPECT_NEAR(kernel_named(llm_kernels(c, a100), "gemm").roofline.floor_ns, base / s,
                1e-9 * base);
  }
  // The GPU profile's host when the tenant names none: the H100's DGX host.
  c.host_cpu_speed = 0;
  const DeviceProfile h100 = load_device_profile("h100-sxm-80gb");
  EXPECT_NEAR(kernel_named(llm_kernels(c, h100), "gemm").roofline.floor_ns,
              base / h100.host_cpu_speed, 1e-9 * base);
  // A measured duration is the user's host's.
  c.host_per_op_named = false;
  c.host_cpu_speed = 2.0;
  EXPECT_EQ(kernel_named(llm_kernels(c, a100), "gemm").roofline.floor_ns, base);
}

// The named engine's CPU per iteration: its fitted terms / s, whole ns; the scenario's host
// block and the profile's host both reach it.
TEST(HostCpu, EngineCpuScales) {
  const WorkloadSpec a100 = resolved("a100-80gb", kLlm).scenario.tenants.front().workload;
  EXPECT_EQ(a100.engine_cpu.per_iteration, kVllmV0PerIterationTp1);
  EXPECT_EQ(a100.engine_cpu.per_sequence, kVllmV0PerSequenceTp1);
  const WorkloadSpec fast = resolved("a100-80gb", kLlm + "      host: {cpu_speed: 2.5}\n")
                                .scenario.tenants.front()
                                .workload;
  EXPECT_EQ(fast.engine_cpu.per_iteration, std::llround(kVllmV0PerIterationTp1 / 2.5));
  EXPECT_EQ(fast.engine_cpu.per_sequence, std::llround(kVllmV0PerSequenceTp1 / 2.5));
  const WorkloadSpec h100 = resolved("h100-sxm-80gb", kLlm).scenario.tenants.front().workload;
  const double s = named_host_cpu("dgx-h100")->speed;
  EXPECT_EQ(h100.host_cpu, "dgx-h100");
  EXPECT_EQ(h100.engine_cpu.per_iteration, std::llround(kVllmV0PerIterationTp1 / s));
  // Back on the reference host by name: the fitted numbers exactly.
  const WorkloadSpec back = resolved("h100-sxm-80gb", kLlm + "      host: {cpu_speed: dgx-a100}\n")
                                .scenario.tenants.front()
                                .workload;
  EXPECT_EQ(back.engine_cpu.per_iteration, kVllmV0PerIterationTp1);
  EXPECT_EQ(back.host_cpu, "dgx-a100");
  // A user's engine terms stay as written.
  const std::string custom =
      "      arrivals: {process: closed, concurrency: 1, think: 1ms}\n"
      "      tokens: {input: 128, output: 16}\n"
      "      batching: {max_batch: 4, engine_cpu: {per_iteration: 1ms, per_sequence: 10us}}\n"
      "      llm: {model: llama-2-7b, dtype: fp16, tp: 1}\n      host: {cpu_speed: 3}\n";
  const WorkloadSpec mine = resolved("a100-80gb", custom).scenario.tenants.front().workload;
  EXPECT_EQ(mine.engine_cpu.per_iteration, 1'000'000);
  EXPECT_EQ(mine.engine_cpu.per_sequence, 10'000);
}

// One line naming the file, line and key for each bad value.
TEST(HostCpu, BadSpeedsAreRefused) {
  for (const char* bad : {"0", "-1", "25", "fast", "\"\"", "[1]"}) {
    const std::string e =
        error_of("a100-80gb", kCatalog + "      host: {cpu_speed: " + bad + "}\n");
    EXPECT_CONTAINS(e, "host.yaml:15");
    EXPECT_CONTAINS(e, "cpu_speed");
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_CONTAINS(error_of("a100-80gb", kCatalog + "      host: {cpu_speed: epyc}\n"),
                  "unknown host CPU 'epyc'; use one of: dgx-a100, dgx-h100, generic");
  // An llm: card's host block takes the speed only.
  EXPECT_CONTAINS(error_of("a100-80gb", kLlm + "      host: {per_request: 1ms}\n"), "per_request");
  EXPECT_CONTAINS(error_of("a100-80gb", kLlm + "      host: {}\n"), "cpu_speed");
}

// A profile's `host_cpu:` is a named host with its provenance, else one line naming the key.
TEST(HostCpu, ProfileRefusesAnUnknownOrUnsourcedHost) {
  const std::string base = device_profile_text("a30-24gb");
  const auto error = [&](const std::string& line) {
    try {
      (void)parse_device_profile(base + line, "p.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(parse_device_profile(base + "host_cpu: {value: dgx-h100, source: x}\n", "p.yaml")
                .host_cpu_speed,
            named_host_cpu("dgx-h100")->speed);
  const std::string unknown = error("host_cpu: {value: epyc-9654, source: x}\n");
  EXPECT_CONTAINS(unknown, "p.yaml:");
  EXPECT_CONTAINS(unknown, "host_cpu");
  EXPECT_CONTAINS(unknown, "unknown host CPU 'epyc-9654'");
  EXPECT_CONTAINS(error("host_cpu: {value: dgx-h100}\n"), "host_cpu");
  EXPECT_CONTAINS(error("host_cpu: dgx-h100\n"), "host_cpu");
}

// emit -> load gives the same host CPU (by name or number) and the same named dispatch.
TEST(HostCpu, EmitRoundTrip) {
  for (const std::string& extra : {std::string("      host: {cpu_speed: dgx-h100}\n"),
                                   std::string("      host: {cpu_speed: 1.25}\n")}) {
    for (const std::string& workload : {kLlm + extra, kCatalog + extra}) {
      const ResolvedScenario first = resolved("a100-80gb", workload);
      const std::string text = emit_scenario_yaml(first.scenario);
      const ResolvedScenario again = resolve_scenario(load_scenario_text(text, "again.yaml"));
      const WorkloadSpec& a = first.scenario.tenants.front().workload;
      const WorkloadSpec& b = again.scenario.tenants.front().workload;
      EXPECT_EQ(a.host_cpu, b.host_cpu) << text;
      EXPECT_EQ(a.host_cpu_speed, b.host_cpu_speed) << text;
      EXPECT_EQ(a.host_gap, b.host_gap);
      EXPECT_EQ(a.engine_cpu.per_iteration, b.engine_cpu.per_iteration);
      if (a.llm) {
        EXPECT_TRUE(b.llm->host_per_op_named);
      }
    }
  }
}

}  // namespace
}  // namespace gpumux
