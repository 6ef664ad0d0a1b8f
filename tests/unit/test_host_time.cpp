// Host time of a catalog request (models/workload/host_time.hpp) and the tenant's `host:` block:
// the law in closed form, each override replacing exactly its term, the block's errors, and the
// emit -> load round trip. A serving front end (`workload.serving:`): T_fe = L_fe + (B_in +
// B_out) / W_fe, host time before the request's first kernel: the law, the user's overrides, the
// kernel-families table, a request's latency moving by exactly T_fe, errors, round trip; the
// payload's element type (`workload.io_dtype:`). A benchmark harness (`workload.harness:`): T_h,
// the profile's harness_per_request, beside T_req.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "models/app/application.hpp"
#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/workload/workload_catalog.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/scenario/emit.hpp"
#include "models/workload/host_time.hpp"
#include "models/scenario/loader.hpp"

namespace gpumux {
namespace {

// One catalog tenant alone on an A100-80GB (`workload:` is line 10, its keys from line 12).
std::string scenario_text(const std::string& workload_keys) {
  return "name: t\nseed: 1\nduration: 100ms\nwarmup: 0s\n"
         "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n"
         "tenants:\n  - name: w\n    device: gpu0\n    workload:\n"
         "      arrivals: {process: closed, concurrency: 1, think: 1us}\n" +
         workload_keys;
}

ResolvedScenario resolved(const std::string& workload_keys) {
  ScenarioRequest request;
  request.is_path = false;
  request.scenario = scenario_text(workload_keys);
  return resolve_request(request);
}

double mean_latency_ns(const ResolvedScenario& r) {
  RunControl control;
  control.record_requests = false;
  return simulate_resolved(r, control).tenants.front().latency.mean;
}

std::string error_of(const std::string& workload_keys) {
  try {
    (void)resolved(workload_keys);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

TEST(HostTime, LawInClosedForm) {
  DeviceProfile gpu = load_device_profile("a100-80gb");
  gpu.host_per_request["tensorrt"] = 40'000;
  gpu.pcie_bandwidth = 20e9;
  // No override: T_req of the runtime + (B_in + B_out) / W_link.
  const HostTerms model = request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, HostOverrides{});
  EXPECT_EQ(model.per_request, 40'000);
  EXPECT_EQ(model.copy_time, 200'000);  // 4 MB at 20 GB/s
  EXPECT_EQ(model.before_first_kernel(), 240'000);
  EXPECT_EQ(model.per_request_origin, "profile");
  // A runtime the profile has no term for spends none.
  EXPECT_EQ(request_host_terms(gpu, "pytorch", 0, 0, 0, HostOverrides{}).per_request, 0);
  // Each override replaces its own term only.
  HostOverrides user;
  user.per_request = 7'000;
  user.output_bytes = 3e6;
  const HostTerms mine = request_host_terms(gpu, "tensorrt", 10e-6, 3e6, 1e6, user);
  EXPECT_EQ(mine.per_request, 7'000);
  EXPECT_EQ(mine.copy_time, 300'000);  // (3 + 3) MB at 20 GB/s
  EXPECT_DOUBLE_EQ(mine.per_op_s, 10e-6);
  EXPECT_EQ(mine.per_request_origin, "user");
  EXPECT_EQ(mine.bytes_origin, "user");
  EXPECT_EQ(mine.link_origin, "profile");
  user.link_bandwidth = 1e9;
  user.per_op = 2'000;
  const HostTerms slow = request_host_terms(gpu, "tensorrt", 10e-6, 3e6, 1e6, user);
  EXPECT_EQ(slow.copy_time, 6'000'000);
  EXPECT_DOUBLE_EQ(slow.per_op_s, 2e-6);
  // host_gap = ops x t_op / kernels, none under a CUDA graph.
  EXPECT_EQ(host_gap_per_launch(30, 2e-6, 10, false), 6'000);
  EXPECT_EQ(host_gap_per_launch(30, 2e-6, 10, true), 0);
  EXPECT_EQ(host_gap_per_launch(30, 2e-6, 0, false), 0);
}

// The block's per_request is spent exactly once per request, before its first kernel, in place
// of the profile's: the mean latency of a request alone moves by (user - profile) exactly.
TEST(HostTime, PerRequestOverrideIsPaidOncePerRequest) {
  const std::string base = "      model: resnet50\n      batch: 1\n";
  const ResolvedScenario plain = resolved(base);
  const ResolvedScenario user =
      resolved(base + "      host: {per_request: 700us, input_bytes: 0B, output_bytes: 0B}\n");
  const WorkloadSpec& p = plain.scenario.tenants.front().workload;
  const WorkloadSpec& u = user.scenario.tenants.front().workload;
  ASSERT_EQ(p.kernels.size(), u.kernels.size());
  EXPECT_EQ(u.kernels.front().host_before, 700'000);  // no bytes: no copies
  for (std::size_t i = 1; i < u.kernels.size(); ++i) {
    EXPECT_EQ(u.kernels[i].host_before, 0) << i;
    EXPECT_EQ(u.kernels[i].duration.value, p.kernels[i].duration.value) << i;
  }
  const double shift = static_cast<double>(u.kernels.front().host_before) -
                       static_cast<double>(p.kernels.front().host_before);
  EXPECT_NE(shift, 0);
  EXPECT_NEAR(mean_latency_ns(user) - mean_latency_ns(plain), shift, 1.0);
  // Zero under the override: per_request 0 and no bytes leave no host time at all.
  const ResolvedScenario none = resolved(base +
                                         "      host: {per_request: 0s, input_bytes: 0B, "
                                         "output_bytes: 0B}\n");
  EXPECT_EQ(none.scenario.tenants.front().workload.kernels.front().host_before, 0);
}

TEST(HostTime, CopiesFollowTheUserLink) {
  const ResolvedScenario r = resolved(
      "      model: bert-base\n      batch: 1\n      host: {per_request: 10us, input_bytes: 1MB, "
      "output_bytes: 1MB, link_bandwidth: 1GB/s}\n");
  // 10 us + 2 MB / 1 GB/s = 2.01 ms before the first kernel.
  EXPECT_EQ(r.scenario.tenants.front().workload.kernels.front().host_before, 2'010'000);
}

// per_op replaces the runtime's dispatch cost: an eager request's host gap scales with it.
TEST(HostTime, PerOpOverridePacesLaunches) {
  const std::string base = "      model: bert-base\n      batch: 1\n      runtime: pytorch\n";
  const WorkloadSpec a = resolved(base).scenario.tenants.front().workload;
  const WorkloadSpec b =
      resolved(base + "      host: {per_op: 20us}\n").scenario.tenants.front().workload;
  ASSERT_GT(a.host_gap, 0);
  // kernel-families' pytorch host_per_op is 10 us: twice the cost per operator, twice the gap.
  EXPECT_NEAR(static_cast<double>(b.host_gap), 2.0 * static_cast<double>(a.host_gap), 1.0);
  // and the per-request terms are untouched by per_op alone.
  EXPECT_EQ(a.kernels.front().host_before, b.kernels.front().host_before);
}

// The fastertransformer runtime (kernel-families.yaml): TensorRT's kernels plus the activations
// FasterTransformer runs after its GEMMs (bias + GELU per layer, the pooler's tanh) and its QKV
// bias kernel per layer (`qkv_bias: kernel`), no per-op dispatch, and the profile's fitted host
// time per request, spent once before the first kernel.
TEST(HostTime, FasterTransformerRuntime) {
  const std::string base = "      model: bert-base\n      batch: 1\n      seq_len: 128\n";
  const WorkloadSpec trt =
      resolved(base + "      runtime: tensorrt\n").scenario.tenants.front().workload;
  const WorkloadSpec ft =
      resolved(base + "      runtime: fastertransformer\n").scenario.tenants.front().workload;
  const int layers = static_cast<int>(load_catalog_entry("bert-base").dim("layers"));
  ASSERT_GT(layers, 0);
  std::size_t gelu = 0, qkv_bias = 0;
  for (const KernelSpec& k : ft.kernels) {
    gelu += k.name.find("gelu") != std::string::npos;
    qkv_bias += k.name.find("qkv_bias_transpose") != std::string::npos;
  }
  EXPECT_EQ(gelu, static_cast<std::size_t>(layers));
  EXPECT_EQ(qkv_bias, static_cast<std::size_t>(layers));
  EXPECT_EQ(ft.kernels.size(), trt.kernels.size() + 2 * static_cast<std::size_t>(layers) + 1);
  EXPECT_EQ(ft.host_gap, 0);
  const DeviceProfile& gpu = load_device_profile("a100-80gb");
  const Nanos t_req = gpu.host_per_request.at("fastertransformer");
  EXPECT_GT(t_req, 0);  // fitted: calibration/fit/REPORT-FT.md
  EXPECT_EQ(ft.kernels.front().host_before - trt.kernels.front().host_before,
            t_req - gpu.host_per_request.at("tensorrt"));
  for (std::size_t i = 1; i < ft.kernels.size(); ++i) EXPECT_EQ(ft.kernels[i].host_before, 0);
}

TEST(HostTime, BlockErrorsNameTheKey) {
  const std::string m = "      model: resnet50\n";
  EXPECT_CONTAINS(error_of(m + "      host: {}\n"), "give at least one of");
  EXPECT_CONTAINS(error_of(m + "      host: {per_requests: 1ms}\n"), "per_request");
  EXPECT_CONTAINS(error_of(m + "      host: {per_request: -1ms}\n"), "host.per_request");
  EXPECT_CONTAINS(error_of(m + "      host: {link_bandwidth: 0B/s}\n"), "at least 1MB/s");
  EXPECT_CONTAINS(error_of(m + "      host: {input_bytes: lots}\n"), "host.input_bytes");
  EXPECT_CONTAINS(error_of(m + "      host: {per_request: 1ms}\n      phase: training\n"),
                  "inference request's host terms");
  EXPECT_CONTAINS(error_of("      request: {kernels: [{name: k, duration: 1ms}]}\n"
                           "      host: {per_request: 1ms}\n"),
                  "belongs to a catalog workload");
  // Errors carry the file's line: `host:` is on line 13 of these scenarios.
  EXPECT_CONTAINS(error_of(m + "      host: {per_request: -1ms}\n"), ":13");
}

TEST(HostTime, BlockRoundTripsThroughEmit) {
  const Scenario s = load_scenario_text(
      scenario_text("      model: resnet50\n      host: {per_request: 1.25ms, input_bytes: "
                    "602112B, output_bytes: 4KB, link_bandwidth: 12.5GB/s, per_op: 3us, "
                    "front_end_latency: 250us, front_end_bandwidth: 2.5GB/s}\n"
                    "      serving: triton-grpc\n"),
      "x.yaml");
  const std::string yaml = emit_scenario_yaml(s);
  const Scenario again = load_scenario_text(yaml, "again.yaml");
  const HostOverrides& a = s.tenants.front().workload.catalog->host;
  const HostOverrides& b = again.tenants.front().workload.catalog->host;
  EXPECT_EQ(a.per_request, 1'250'000);
  EXPECT_EQ(b.per_request, a.per_request);
  EXPECT_EQ(b.input_bytes, a.input_bytes);
  EXPECT_EQ(b.output_bytes, 4000.0);
  EXPECT_EQ(b.link_bandwidth, a.link_bandwidth);
  EXPECT_EQ(b.per_op, a.per_op);
  EXPECT_EQ(b.front_end_latency, 250'000);
  EXPECT_EQ(b.front_end_bandwidth, 2.5e9);
  EXPECT_EQ(again.tenants.front().workload.catalog->serving, "triton-grpc");
  EXPECT_EQ(emit_scenario_yaml(again), yaml);  // a fixed point
}

TEST(ServingFrontEnd, LawInClosedForm) {
  DeviceProfile gpu = load_device_profile("a100-80gb");
  gpu.host_per_request["tensorrt"] = 40'000;
  gpu.pcie_bandwidth = 20e9;
  const ServingFrontEnd grpc{"grpc-like", 500'000, 2e9, "test"};
  // T_fe = 500 us + (3 + 1) MB / 2 GB/s = 2.5 ms, beside T_req and the copies.
  const HostTerms t = request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, HostOverrides{}, grpc);
  EXPECT_EQ(t.serving, "grpc-like");
  EXPECT_EQ(t.front_end_time, 2'500'000);
  EXPECT_EQ(t.copy_time, 200'000);
  EXPECT_EQ(t.before_first_kernel(), 40'000 + 200'000 + 2'500'000);
  EXPECT_EQ(t.front_end_latency_origin, "serving");
  EXPECT_EQ(t.front_end_bandwidth_origin, "serving");
  // Bandwidth 0: the payload is free (shared memory), the latency stays.
  const HostTerms shm = request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, HostOverrides{},
                                           ServingFrontEnd{"shm-like", 200'000, 0, "test"});
  EXPECT_EQ(shm.front_end_time, 200'000);
  // No front end: no term, whatever the bytes.
  const HostTerms none = request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, HostOverrides{});
  EXPECT_EQ(none.front_end_time, 0);
  EXPECT_EQ(none.before_first_kernel(), 240'000);
  // The user's terms replace the front end's, each its own; the user's bytes are the payload.
  HostOverrides user;
  user.front_end_bandwidth = 1e9;
  user.input_bytes = 1e6;
  const HostTerms mine = request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, user, grpc);
  EXPECT_EQ(mine.front_end_time, 500'000 + 2'000'000);  // (1 + 1) MB at 1 GB/s
  EXPECT_EQ(mine.front_end_latency_origin, "serving");
  EXPECT_EQ(mine.front_end_bandwidth_origin, "user");
  user.front_end_latency = 0;
  EXPECT_EQ(request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, user, grpc).front_end_time, 2'000'000);
}

// Property: over random payloads and laws, T_fe is affine in the payload with slope 1 / W_fe.
TEST(ServingFrontEnd, AffineInThePayload) {
  const DeviceProfile gpu = load_device_profile("a100-80gb");
  std::uint64_t state = 12345;
  const auto uniform = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  for (int i = 0; i < 200; ++i) {
    const ServingFrontEnd f{"f", static_cast<Nanos>(uniform() * 5e6), 1e8 + uniform() * 1e10, ""};
    const double in = uniform() * 1e8, out = uniform() * 1e6;
    const HostTerms t = request_host_terms(gpu, "tensorrt", 0, in, out, HostOverrides{}, f);
    const double expected = static_cast<double>(f.latency) + (in + out) / f.bandwidth * 1e9;
    EXPECT_NEAR(static_cast<double>(t.front_end_time), expected, 0.5 + 1e-12 * expected) << i;
  }
}

// The shipped table: every front end has a latency and a provenance; triton-grpc pays for its
// payload, triton-shm does not.
TEST(ServingFrontEnd, KernelFamiliesTable) {
  const KernelFamilies& k = load_kernel_families();
  const CatalogServing* grpc = k.serving_front_end("triton-grpc");
  const CatalogServing* shm = k.serving_front_end("triton-shm");
  ASSERT_NE(grpc, nullptr);
  ASSERT_NE(shm, nullptr);
  EXPECT_GT(grpc->latency.value, 0);
  EXPECT_GT(grpc->bandwidth.value, 0);
  EXPECT_FALSE(grpc->latency.provenance.empty());
  EXPECT_GT(shm->latency.value, 0);
  EXPECT_EQ(shm->bandwidth.value, 0);
  EXPECT_EQ(k.serving_front_end("none"), nullptr);
  // Triton's TensorFlow backend: the same protocol (bandwidth) plus a fixed input stage of its
  // own, so its latency is triton-grpc's and then some (calibration/fit/TRITON-FRONTEND.md).
  const CatalogServing* tf = k.serving_front_end("triton-grpc-tensorflow");
  ASSERT_NE(tf, nullptr);
  EXPECT_EQ(tf->bandwidth.value, grpc->bandwidth.value);
  EXPECT_GT(tf->latency.value, grpc->latency.value);
  EXPECT_FALSE(tf->latency.provenance.empty());
}

// A bad `serving:` entry in kernel-families.yaml names its key (the shipped file with one
// front end replaced).
TEST(ServingFrontEnd, TableErrorsNameTheKey) {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/calibration/workloads/kernel-families.yaml");
  ASSERT_TRUE(in) << "kernel-families.yaml";
  std::stringstream text;
  text << in.rdbuf();
  const std::string shipped = text.str();
  const std::size_t at = shipped.find("\nserving:\n");
  ASSERT_NE(at, std::string::npos);
  const auto error = [&](const std::string& serving_block) {
    try {
      (void)parse_kernel_families(shipped.substr(0, at) + "\nserving:\n" + serving_block,
                                  "families.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("  x:\n    latency: {value: 1ms, fitted: here}\n"), "(no error)");
  EXPECT_CONTAINS(error("  x:\n    latency: {value: 1ms}\n"), "serving.x.latency");
  EXPECT_CONTAINS(error("  x:\n    latency: {value: 1ms}\n"), "exactly one of source");
  EXPECT_CONTAINS(error("  x:\n    latency: {value: 0ms, source: s}\n"), "greater than zero");
  EXPECT_CONTAINS(error("  x:\n    bandwidth: {value: 1GB/s, source: s}\n"), "latency");
  EXPECT_CONTAINS(error("  none:\n    latency: {value: 1ms, source: s}\n"), "reserved");
  EXPECT_CONTAINS(error("  x:\n    latency: {value: 1ms, source: s}\n    delay: 1\n"), "delay");
}

// A request through a front end waits T_fe more, exactly, and every kernel is unchanged: the
// front end is host time before the first kernel.
TEST(ServingFrontEnd, LatencyMovesByTheFrontEndTime) {
  const std::string base = "      model: resnet50\n      batch: 4\n";
  const ResolvedScenario plain = resolved(base);
  const ResolvedScenario served = resolved(base + "      serving: triton-grpc\n");
  const WorkloadSpec& p = plain.scenario.tenants.front().workload;
  const WorkloadSpec& s = served.scenario.tenants.front().workload;
  ASSERT_EQ(p.kernels.size(), s.kernels.size());
  const CatalogServing& grpc = *load_kernel_families().serving_front_end("triton-grpc");
  const Nanos t_fe = s.catalog->front_end_time;
  EXPECT_GT(t_fe, std::llround(grpc.latency.value * 1e9));  // the payload costs time too
  EXPECT_EQ(s.kernels.front().host_before - p.kernels.front().host_before, t_fe);
  for (std::size_t i = 1; i < s.kernels.size(); ++i) {
    EXPECT_EQ(s.kernels[i].host_before, p.kernels[i].host_before) << i;
    EXPECT_EQ(s.kernels[i].duration.value, p.kernels[i].duration.value) << i;
  }
  // `serving: none` is no front end.
  EXPECT_EQ(resolved(base + "      serving: none\n")
                .scenario.tenants.front()
                .workload.kernels.front()
                .host_before,
            p.kernels.front().host_before);
  // The user's latency and bandwidth replace the table's: 1 ms + payload / 1 GB/s.
  const ResolvedScenario mine =
      resolved(base +
               "      serving: triton-grpc\n      host: {front_end_latency: 1ms, "
               "front_end_bandwidth: 1GB/s, input_bytes: 2MB, output_bytes: 0B}\n");
  EXPECT_EQ(mine.scenario.tenants.front().workload.catalog->front_end_time, 3'000'000);
}

// `io_dtype:` sets the element size of the request's tensors (images in, class scores out),
// so B_in + B_out, which both the host link and the front end move, follow it exactly: probed
// with L_fe = 0 and W_fe = W_link = 1 GB/s, T_fe and the copy in ns are the bytes.
TEST(ServingFrontEnd, IoDtypeSetsThePayload) {
  const auto probe = [](const std::string& io) {
    const ResolvedScenario r =
        resolved("      model: resnet50\n      batch: 4\n      dtype: fp16\n" + io +
                 "      serving: triton-grpc\n      host: {front_end_latency: 0ns, "
                 "front_end_bandwidth: 1GB/s, link_bandwidth: 1GB/s, per_request: 0ns}\n");
    const WorkloadSpec& w = r.scenario.tenants.front().workload;
    EXPECT_EQ(w.kernels.front().host_before, 2 * w.catalog->front_end_time);  // copy = T_fe
    return w.catalog->front_end_time;
  };
  const Nanos pixels = 4 * 3 * 224 * 224, scores = 4 * 1000;
  EXPECT_EQ(probe(""), 2 * (pixels + scores));  // the compute dtype, fp16
  EXPECT_EQ(probe("      io_dtype: fp16\n"), 2 * (pixels + scores));
  EXPECT_EQ(probe("      io_dtype: fp32\n"), 4 * (pixels + scores));
  EXPECT_EQ(probe("      io_dtype: float32\n"), 4 * (pixels + scores));
  EXPECT_EQ(probe("      io_dtype: uint8\n"), pixels + scores);
  EXPECT_EQ(probe("      io_dtype: int8\n"), pixels + scores);
  // The kernels do not move: the GPU computes in the compute dtype whatever the client sends.
  const auto kernels = [](const std::string& io) {
    return resolved("      model: resnet50\n      batch: 4\n" + io)
        .scenario.tenants.front()
        .workload.kernels;
  };
  const auto a = kernels(""), b = kernels("      io_dtype: fp32\n");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].duration.value, b[i].duration.value);
  EXPECT_GT(b.front().host_before, a.front().host_before);  // twice the bytes over the link
  // Errors name the key and its line; the key round-trips through emit.
  const std::string m = "      model: resnet50\n";
  EXPECT_CONTAINS(error_of(m + "      io_dtype: tf32\n"), "io_dtype");
  EXPECT_CONTAINS(error_of(m + "      io_dtype: tf32\n"), ":13");
  EXPECT_CONTAINS(error_of(m + "      io_dtype: fp32\n      phase: training\n"),
                  "inference request");
  EXPECT_CONTAINS(error_of("      request: {kernels: [{name: k, duration: 1ms}]}\n"
                           "      io_dtype: fp32\n"),
                  "belongs to a catalog workload");
  const Scenario s = load_scenario_text(scenario_text(m + "      io_dtype: uint8\n"), "x.yaml");
  const std::string yaml = emit_scenario_yaml(s);
  EXPECT_EQ(load_scenario_text(yaml, "again.yaml").tenants.front().workload.catalog->io_dtype,
            "uint8");
}

TEST(ServingFrontEnd, ErrorsNameTheKey) {
  const std::string m = "      model: resnet50\n";
  EXPECT_CONTAINS(error_of(m + "      serving: triton-grcp\n"),
                  "unknown serving front end 'triton-grcp'");
  EXPECT_CONTAINS(error_of(m + "      serving: triton-grcp\n"), "triton-grpc");
  EXPECT_CONTAINS(error_of(m + "      serving: triton-grcp\n"), ":13");
  EXPECT_CONTAINS(error_of(m + "      serving: triton-grpc\n      phase: training\n"),
                  "serves inference requests");
  EXPECT_CONTAINS(error_of(m + "      host: {front_end_latency: 1ms}\n"), "give workload.serving");
  EXPECT_CONTAINS(
      error_of(m + "      serving: triton-grpc\n      host: {front_end_latency: -1ms}\n"),
      "host.front_end_latency");
  EXPECT_CONTAINS(
      error_of(m + "      serving: triton-grpc\n      host: {front_end_bandwidth: 0B/s}\n"),
      "at least 1MB/s");
  EXPECT_CONTAINS(error_of("      request: {kernels: [{name: k, duration: 1ms}]}\n"
                           "      serving: triton-grpc\n"),
                  "belongs to a catalog workload");
}

// T_h: the profile's harness_per_request of the named harness, added to the runtime's T_req (not
// replacing it), scaled like T_req by s_profile / s; no harness or none named: 0.
TEST(BenchmarkHarness, LawInClosedForm) {
  DeviceProfile gpu = load_device_profile("a100-80gb");
  gpu.host_per_request["tensorrt"] = 40'000;
  gpu.harness_per_request = {{"loadgen", 150'000}};
  gpu.pcie_bandwidth = 20e9;
  gpu.host_cpu_speed = 1.0;
  const HostTerms plain = request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, HostOverrides{});
  const HostTerms timed =
      request_host_terms(gpu, "tensorrt", 0, 3e6, 1e6, HostOverrides{}, {}, "loadgen");
  EXPECT_EQ(plain.harness_time, 0);
  EXPECT_EQ(timed.harness, "loadgen");
  EXPECT_EQ(timed.harness_time, 150'000);
  EXPECT_EQ(timed.per_request, 40'000);  // the runtime's own term stays
  EXPECT_EQ(timed.before_first_kernel(), 40'000 + 150'000 + 200'000);
  EXPECT_EQ(timed.before_first_kernel() - plain.before_first_kernel(), 150'000);
  // The user's per_request replaces the runtime's term only: the harness is not the runtime.
  HostOverrides user;
  user.per_request = 7'000;
  EXPECT_EQ(request_host_terms(gpu, "tensorrt", 0, 0, 0, user, {}, "loadgen").before_first_kernel(),
            7'000 + 150'000);
  // A host twice as fast as the profile's halves both fitted CPU terms.
  HostOverrides fast;
  fast.cpu_speed = 2.0;
  const HostTerms quick = request_host_terms(gpu, "tensorrt", 0, 0, 0, fast, {}, "loadgen");
  EXPECT_EQ(quick.harness_time, 75'000);
  EXPECT_EQ(quick.per_request, 20'000);
  EXPECT_EQ(profile_harness_names(gpu), std::vector<std::string>{"loadgen"});
}

// A request alone timed by the shipped profile's MLPerf harness: its first kernel starts exactly
// T_h later, every other kernel is unchanged, and the mean latency moves by T_h.
TEST(BenchmarkHarness, LatencyMovesByTheHarnessTime) {
  const std::string base = "      model: resnet50\n      batch: 1\n      dtype: int8\n";
  const ResolvedScenario plain = resolved(base);
  const ResolvedScenario timed = resolved(base + "      harness: mlperf-loadgen\n");
  const WorkloadSpec& p = plain.scenario.tenants.front().workload;
  const WorkloadSpec& t = timed.scenario.tenants.front().workload;
  const Nanos t_h = load_device_profile("a100-80gb").harness_per_request.at("mlperf-loadgen");
  ASSERT_GT(t_h, 0);
  ASSERT_EQ(p.kernels.size(), t.kernels.size());
  EXPECT_EQ(t.kernels.front().host_before - p.kernels.front().host_before, t_h);
  for (std::size_t i = 1; i < t.kernels.size(); ++i) {
    EXPECT_EQ(t.kernels[i].host_before, p.kernels[i].host_before) << i;
    EXPECT_EQ(t.kernels[i].duration.value, p.kernels[i].duration.value) << i;
  }
  EXPECT_NEAR(mean_latency_ns(timed) - mean_latency_ns(plain), static_cast<double>(t_h), 1.0);
  // `harness: none` is no harness.
  EXPECT_EQ(resolved(base + "      harness: none\n")
                .scenario.tenants.front()
                .workload.kernels.front()
                .host_before,
            p.kernels.front().host_before);
}

TEST(BenchmarkHarness, ErrorsNameTheKey) {
  const std::string m = "      model: resnet50\n";
  // A harness the GPU's profile has no time for: the profile and the names it has.
  const std::string unknown = error_of(m + "      harness: mlperf-lodgen\n");
  EXPECT_CONTAINS(unknown, "harness 'mlperf-lodgen'");
  EXPECT_CONTAINS(unknown, "a100-80gb");
  EXPECT_CONTAINS(unknown, "mlperf-loadgen");
  EXPECT_CONTAINS(unknown, "harness");
  EXPECT_CONTAINS(unknown, ":13");
  EXPECT_CONTAINS(error_of(m + "      harness: tensorrt\n"), "is a runtime");
  EXPECT_CONTAINS(error_of(m + "      harness: \"\"\n"), "harness");
  EXPECT_CONTAINS(error_of(m + "      harness: mlperf-loadgen\n      phase: training\n"),
                  "times inference requests");
  EXPECT_CONTAINS(error_of("      request: {kernels: [{name: k, duration: 1ms}]}\n"
                           "      harness: mlperf-loadgen\n"),
                  "belongs to a catalog workload");
  // The profile key's own errors name it.
  std::istringstream shipped(device_profile_text("a100-80gb"));
  std::string line, bad;
  bool skipping = false;
  while (std::getline(shipped, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') {
      skipping = line.rfind("harness_per_request:", 0) == 0;
    }
    if (!skipping) bad += line + "\n";
  }
  bad += "harness_per_request: 5us\n";
  try {
    (void)parse_device_profile(bad, "bad.yaml");
    FAIL() << "a harness_per_request that is not a mapping was accepted";
  } catch (const InputError& e) {
    EXPECT_CONTAINS(e.what(), "harness_per_request");
  }
}

TEST(BenchmarkHarness, RoundTripsThroughEmit) {
  const Scenario s = load_scenario_text(
      scenario_text("      model: resnet50\n      harness: mlperf-loadgen\n"), "x.yaml");
  const std::string yaml = emit_scenario_yaml(s);
  const Scenario again = load_scenario_text(yaml, "again.yaml");
  EXPECT_EQ(again.tenants.front().workload.catalog->harness, "mlperf-loadgen");
  EXPECT_EQ(emit_scenario_yaml(again), yaml);
}

}  // namespace
}  // namespace gpumux
