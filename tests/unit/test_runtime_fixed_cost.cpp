// A runtime's device time per kernel (models/workload/runtime_fixed_cost.hpp): every kernel the
// runtime launches outside a CUDA graph waits g = launch_overhead + kernel_fixed_cost (profile)
// + kernel_fixed_cost (runtime) in its stream.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "models/config/input_error.hpp"
#include "tests/support/kernel_families_errors.hpp"
#include "models/workload/workload_catalog.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/workload/runtime_fixed_cost.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

ResolvedScenario resolve_bert(const std::string& keys) {
  return resolve_scenario(load_scenario_text(
      "name: t\nduration: 1s\ngpus: [{name: g, model: a100-sxm4-40gb}]\n"
      "tenants:\n  - name: a\n    device: g\n    workload:\n"
      "      arrivals: {process: closed, concurrency: 1}\n      model: bert-base\n" +
          keys,
      "test.yaml"));
}

std::string families_text() {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/calibration/workloads/kernel-families.yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RuntimeFixedCost, EveryKernelOfTheRuntimeCarriesTheGapOthersDoNot) {
  const CatalogRuntime* ort = load_kernel_families().runtime("onnxruntime");
  ASSERT_NE(ort, nullptr);
  ASSERT_GT(ort->kernel_fixed_cost.value, 0);  // the shipped fit (calibration/fit/ORT-KERNEL.md)
  const ResolvedScenario r = resolve_bert("      runtime: onnxruntime\n");
  const DeviceProfile& gpu = *r.gpu_profiles[0];
  const Nanos g = gpu.launch_overhead + gpu.kernel_fixed_cost +
                  std::llround(ort->kernel_fixed_cost.value * 1e9);
  EXPECT_EQ(runtime_stream_gap(runtime_kernel_fixed_ns(*ort, std::nullopt), gpu), g);
  const WorkloadSpec& w = r.scenario.tenants[0].workload;
  ASSERT_FALSE(w.kernels.empty());
  for (const KernelSpec& k : w.kernels) EXPECT_EQ(k.launch_overhead, g) << k.name;
  // TensorRT has no such term, and a CUDA graph launches without the runtime's dispatch.
  for (const std::string keys :
       {"      runtime: tensorrt\n", "      runtime: onnxruntime\n      cuda_graph: true\n"}) {
    const ResolvedScenario other = resolve_bert(keys);
    for (const KernelSpec& k : other.scenario.tenants[0].workload.kernels) {
      EXPECT_EQ(k.launch_overhead, -1) << keys << k.name;
    }
  }
}

TEST(RuntimeFixedCost, AGpuBoundRequestAloneTakesItsKernelsPlusOneGapEach) {
  // Batch 32 x 128 tokens: the device runs each kernel far longer than the host takes to issue
  // it (GPU-bound), so issue_k = finish_{k-1} and the request alone lasts
  // host_before + sum over kernels of (g + duration): the law's closed form.
  const std::string keys = "      runtime: onnxruntime\n      batch: 32\n      seq_len: 128\n";
  const ResolvedScenario r = resolve_bert(keys);
  const WorkloadSpec& w = r.scenario.tenants[0].workload;
  double expected = static_cast<double>(w.kernels.front().host_before);
  double host = static_cast<double>(w.kernels.front().host_before);
  double device = expected;
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    const KernelSpec& spec = w.kernels[k];
    ASSERT_EQ(spec.duration.kind, DurationDistribution::Kind::fixed);
    expected += static_cast<double>(spec.launch_overhead + spec.duration.value) * spec.repeat;
    // GPU-bound: the host's pacing never holds a kernel back.
    host = static_cast<double>(w.kernels.front().host_before) +
           static_cast<double>(k) * static_cast<double>(w.host_gap);
    ASSERT_LE(host, device) << spec.name;
    device += static_cast<double>(spec.launch_overhead + spec.duration.value) * spec.repeat;
  }
  // At boost (`power: none`): back to back, the FP16 GEMMs would cap the board's clock through
  // the power law's tensor term (models/gpu/power.hpp), which this closed form leaves out.
  const RunResult run = testing::run_yaml(
      "name: t\nduration: 1s\ngpus: [{name: g, model: a100-sxm4-40gb, power: none}]\ntenants:\n"
      "  - name: a\n    device: g\n    workload:\n"
      "      arrivals: {process: closed, concurrency: 1}\n      model: bert-base\n" +
      keys);
  const double p50 = static_cast<double>(testing::tenant(run, "a").latency.p50);
  EXPECT_NEAR(p50, expected, 1e-6 * expected + static_cast<double>(w.kernels.size()));
}

TEST(RuntimeFixedCost, ATenantsOwnValueReplacesTheRuntimesInTheSameGapAndSurvivesEmit) {
  // `runtime_kernel_fixed_cost:` is F_runtime for this tenant: g = L + F_profile + F, for a
  // runtime with a value (onnxruntime) and one without (tensorrt) alike; 0 leaves the profile's
  // gap, and the key is written back as given.
  for (const std::string runtime : {"onnxruntime", "tensorrt"}) {
    const std::string keys =
        "      runtime: " + runtime + "\n      runtime_kernel_fixed_cost: 2500ns\n";
    const ResolvedScenario r = resolve_bert(keys);
    const DeviceProfile& gpu = *r.gpu_profiles[0];
    const WorkloadSpec& w = r.scenario.tenants[0].workload;
    ASSERT_FALSE(w.kernels.empty());
    for (const KernelSpec& k : w.kernels) {
      EXPECT_EQ(k.launch_overhead, gpu.launch_overhead + gpu.kernel_fixed_cost + 2500) << k.name;
    }
    const Scenario again = load_scenario_text(emit_scenario_yaml(r.scenario), "again.yaml");
    ASSERT_TRUE(again.tenants[0].workload.catalog.has_value());
    EXPECT_EQ(again.tenants[0].workload.catalog->runtime_kernel_fixed_cost, Nanos{2500});
  }
  const ResolvedScenario zero =
      resolve_bert("      runtime: onnxruntime\n      runtime_kernel_fixed_cost: 0ns\n");
  for (const KernelSpec& k : zero.scenario.tenants[0].workload.kernels) {
    EXPECT_EQ(k.launch_overhead, -1) << k.name;  // the profile's gap, L + F_profile
  }
}

TEST(RuntimeFixedCost, TheKeyNeedsOneProvenanceAndANonNegativeValue) {
  const std::string base = families_text();
  const std::string anchor = "  onnxruntime:\n";
  ASSERT_NE(base.find(anchor), std::string::npos);
  const std::regex line("    kernel_fixed_cost:[^\n]*\n(      [^\n]*\n)*");
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{
            "    kernel_fixed_cost: {value: 3us, source: a, fitted: b}\n",
            "give exactly one of source, assumption or fitted"},
        {"    kernel_fixed_cost: {value: -3us, assumption: a}\n", "kernel_fixed_cost"},
        {"    kernel_fixed_cost: {value: 3us, measured: a}\n", "measured"}}) {
    std::string text = std::regex_replace(base, line, "");
    text.insert(text.find(anchor) + anchor.size(), entry);
    testing::expect_kernel_families_refused(text, "runtimes.onnxruntime", why);
  }
}

}  // namespace
}  // namespace gpumux
