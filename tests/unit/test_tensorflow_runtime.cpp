// The tensorflow and tensorflow-xla runtimes (kernel-families.yaml; docs/workloads.md,
// "Runtimes"): XLA's loop fusion of elementwise chains in closed form (catalog_model.hpp
// fuse_elementwise_chains), fewer kernels under XLA than under the plain graph executor for the
// same model, per-operator dispatch counted once per operator (per kernel under XLA), the
// host-bound request's latency as the launch law says, and bad runtime names as located errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "models/app/application.hpp"
#include "models/config/input_error.hpp"
#include "tests/support/kernel_families_errors.hpp"
#include "models/config/profile_loader.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/workload/host_time.hpp"
#include "models/workload/workload_catalog.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

LayerWork elementwise(const std::string& name, std::int64_t elements, double bytes, double l2_input,
                      double flops) {
  LayerWork w;
  w.kind = LayerWork::Kind::elementwise;
  w.name = name;
  w.elements = elements;
  w.bytes = bytes;
  w.l2_input_bytes = l2_input;
  w.flops = flops;
  w.host_ops = 2;
  return w;
}

LayerWork gemm(const std::string& name) {
  LayerWork w;
  w.kind = LayerWork::Kind::gemm;
  w.name = name;
  w.m = w.n = w.k = 64;
  w.bytes = 3 * 64 * 64 * 2;
  w.host_ops = 3;
  return w;
}

// Closed form: gemm, a -> b -> c (a chain over one grid), d (another grid), gemm, e (a backward
// kernel: no L2 input) -> [gemm, a+b+c, d, gemm, e]; the fused kernel's traffic is the three
// kernels' less the two intermediates, each written once and read once.
TEST(XlaFusion, ChainsOfOneGridBecomeOneKernel) {
  std::vector<LayerWork> layers{gemm("g1"),
                                elementwise("a", 1000, 4000, 2000, 1000),
                                elementwise("b", 1000, 6000, 2000, 3000),
                                elementwise("c", 1000, 4000, 1500, 500),
                                elementwise("d", 10, 2040, 2000, 1000),
                                gemm("g2"),
                                elementwise("e", 64 * 64, 16384, 0, 4096)};
  const double flops = 1000 + 3000 + 500;
  const double bytes = 4000 + 6000 + 4000 - 2 * 2000 - 2 * 1500;
  EXPECT_EQ(fuse_elementwise_chains(layers), 2u);
  ASSERT_EQ(layers.size(), 5u);
  EXPECT_EQ(layers[1].name, "a+b+c");
  EXPECT_DOUBLE_EQ(layers[1].flops, flops);
  EXPECT_DOUBLE_EQ(layers[1].bytes, bytes);
  EXPECT_DOUBLE_EQ(layers[1].l2_input_bytes, 2000);            // a's input
  EXPECT_EQ(layers[2].name, "d");                              // a different grid starts a kernel
  EXPECT_DOUBLE_EQ(layers[2].l2_input_producer_bytes, bytes);  // its producer: the fused kernel
  EXPECT_EQ(layers[4].name, "e");                              // no L2 input: not a consumer of g2
  for (const LayerWork& w : layers) EXPECT_EQ(w.host_ops, 1) << w.name;  // one launch each
  // Fusing again changes nothing (a fixed point).
  EXPECT_EQ(fuse_elementwise_chains(layers), 0u);
}

// `w` reading `input_bytes` of tensors, with `reductions` row reductions before its output.
LayerWork reading(LayerWork w, double input_bytes, int reductions = 0) {
  w.input_bytes = input_bytes;
  w.row_reductions = reductions;
  return w;
}

// Closed form of the row-reduction law: gemm, scale -> softmax (2 row reductions), gemm ->
// [gemm, softmax.reduce1, softmax.reduce2, scale+softmax, gemm]. Each reduction kernel re-reads
// the chain's input (scale's, 2000 B, from its producer's L2) and takes one operation per element
// from the chain; the chain's kernel keeps the elementwise pass. Without the law the list is
// [gemm, scale+softmax, gemm] and XLA's softmax reads its scores once.
TEST(XlaFusion, RowReductionsAreKernelsOfTheirOwnThatReReadTheChainsInputs) {
  std::vector<LayerWork> layers{
      gemm("g1"), reading(elementwise("scale", 1000, 4000, 2000, 1000), 2000),
      reading(elementwise("softmax", 1000, 4000, 2000, 5000), 2000, 2), gemm("g2")};
  ASSERT_EQ(fuse_elementwise_chains(layers), 0u);  // 2 layers fused away, 2 reductions added
  ASSERT_EQ(layers.size(), 5u);
  for (const int r : {1, 2}) {
    const LayerWork& red = layers[static_cast<std::size_t>(r)];
    EXPECT_EQ(red.name, "softmax.reduce" + std::to_string(r));
    EXPECT_TRUE(red.reduction_root);
    EXPECT_DOUBLE_EQ(red.bytes, 2000);           // the chain's input, read again
    EXPECT_DOUBLE_EQ(red.l2_input_bytes, 2000);  // still the GEMM's output
    EXPECT_DOUBLE_EQ(red.flops, 1000);           // one reduction step per element
    EXPECT_EQ(red.host_ops, 1);
  }
  EXPECT_EQ(layers[3].name, "scale+softmax");
  EXPECT_DOUBLE_EQ(layers[3].bytes, 4000 + 4000 - 2 * 2000);
  EXPECT_DOUBLE_EQ(layers[3].flops, 1000 + 5000 - 2 * 1000);
  EXPECT_EQ(layers[3].row_reductions, 0);
  EXPECT_EQ(layers[4].name, "g2");
  // Fusing again changes nothing: a reduction kernel ends its chain.
  const std::vector<LayerWork> once = layers;
  EXPECT_EQ(fuse_elementwise_chains(layers), 0u);
  ASSERT_EQ(layers.size(), once.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(layers[i].name, once[i].name);
    EXPECT_DOUBLE_EQ(layers[i].bytes, once[i].bytes);
  }
}

// A residual add before a layer norm: the add reads two tensors (its producer's output and the
// residual), so each of the norm's reductions reads both (the add is recomputed in each).
TEST(XlaFusion, ReductionsAfterAResidualAddReadBothOfItsInputs) {
  std::vector<LayerWork> layers{gemm("g"), reading(elementwise("add", 500, 3000, 1000, 500), 2000),
                                reading(elementwise("norm", 500, 2000, 1000, 4000), 1000, 2)};
  fuse_elementwise_chains(layers);
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_DOUBLE_EQ(layers[1].bytes, 2000);
  EXPECT_DOUBLE_EQ(layers[2].bytes, 2000);
  EXPECT_DOUBLE_EQ(layers[3].bytes, 3000 + 2000 - 2 * 1000);
  EXPECT_DOUBLE_EQ(layers[1].l2_input_bytes, 1000);
}

// Property over the catalog: the fused list has exactly (before - returned) layers, keeps every
// GEMM and attention layer in order, keeps the FLOPs, lowers every softmax and norm into its two
// reduction kernels, and moves fewer bytes than before outside those reduction kernels (the
// loop fusion never adds traffic; the reductions' re-reads are what it adds).
TEST(XlaFusion, KeepsLibraryCallsFlopsAndNeverAddsTraffic) {
  LayerFusion tf;
  tf.fused_attention = tf.fused_activation = tf.fused_residual_norm = tf.folded_batchnorm = false;
  tf.autocast_fp32_ops = true;
  for (const std::string model : {"resnet50", "bert-base", "bert-large", "gpt2", "vit-b16"}) {
    const CatalogEntry& e = load_catalog_entry(model);
    for (const int batch : {1, 8}) {
      std::vector<LayerWork> layers =
          catalog_layers(e, batch, e.default_seq_len, "fp16", false, tf).layers;
      const std::vector<LayerWork> before = layers;
      const std::size_t fused = fuse_elementwise_chains(layers);
      EXPECT_GT(fused, 0u) << model;
      ASSERT_EQ(layers.size() + fused, before.size()) << model;
      const auto sum = [](const std::vector<LayerWork>& l, double LayerWork::*field) {
        return std::accumulate(l.begin(), l.end(), 0.0,
                               [&](double s, const LayerWork& w) { return s + w.*field; });
      };
      EXPECT_NEAR(sum(layers, &LayerWork::flops), sum(before, &LayerWork::flops),
                  1e-9 * sum(before, &LayerWork::flops))
          << model;
      double reduction_bytes = 0;
      int reductions_before = 0, reduction_kernels = 0;
      for (const LayerWork& w : before) reductions_before += w.row_reductions;
      for (const LayerWork& w : layers) {
        if (!w.reduction_root) continue;
        ++reduction_kernels;
        reduction_bytes += w.bytes;
      }
      EXPECT_EQ(reduction_kernels, reductions_before) << model;
      EXPECT_EQ(reductions_before > 0, model != "resnet50") << model;  // norms and softmaxes
      EXPECT_LT(sum(layers, &LayerWork::bytes) - reduction_bytes, sum(before, &LayerWork::bytes))
          << model;
      std::vector<std::string> calls_before, calls_after;
      for (const LayerWork& w : before)
        if (w.kind != LayerWork::Kind::elementwise) calls_before.push_back(w.name);
      for (const LayerWork& w : layers)
        if (w.kind != LayerWork::Kind::elementwise) calls_after.push_back(w.name);
      EXPECT_EQ(calls_before, calls_after) << model;
    }
  }
}

CatalogWorkload build(const std::string& model, int batch, int seq, const std::string& runtime,
                      const std::string& dtype = "fp16") {
  CatalogRequestSpec request;
  request.model = model;
  request.batch = batch;
  request.seq_len = seq;
  request.dtype = dtype;
  request.phase = "inference";
  request.runtime = runtime;
  request.runtime_from_user = true;
  return build_catalog_workload(Scenario{}, request, "t", load_device_profile("a100-sxm4-40gb"), 1);
}

// XLA emits fewer kernels than the graph executor for the same model, by exactly the layers its
// fusion removes (the same layers before fusion: both runtimes take the same graph choices),
// except for a dense layer's bias: the graph executor's BiasAdd kernel after the GEMM (into which
// XLA's loop fusion would fuse the next elementwise kernels) is, under NGC 20.06's XLA, a
// broadcast kernel before the GEMM (dense_bias: broadcast): one kernel more per dense layer.
TEST(TensorflowRuntime, XlaLaunchesFewerKernelsThanTheGraphExecutor) {
  for (const auto& [model, seq] : std::vector<std::pair<std::string, int>>{
           {"resnet50", 0}, {"bert-base", 128}, {"bert-large", 384}}) {
    const CatalogWorkload tf = build(model, 1, seq, "tensorflow");
    const CatalogWorkload xla = build(model, 1, seq, "tensorflow-xla");
    std::vector<LayerWork> layers = tf.layers.layers;
    const std::size_t fused = fuse_elementwise_chains(layers);
    EXPECT_GT(fused, 0u) << model;
    std::size_t bias_adds = 0, broadcasts = 0;
    for (const LayerWork& w : tf.layers.layers) bias_adds += w.name.ends_with(".bias_add");
    for (const LayerWork& w : xla.layers.layers) broadcasts += w.name.ends_with(".bias_broadcast");
    EXPECT_EQ(broadcasts, bias_adds) << model;
    EXPECT_EQ(xla.layers.layers.size(), tf.layers.layers.size() - fused + bias_adds) << model;
    EXPECT_LT(xla.kernels.size(), tf.kernels.size()) << model;
    if (model == "resnet50") {
      // Each convolution's batch norm and ReLU (or the residual add + ReLU) become one kernel:
      // at least one kernel fewer per ReLU.
      std::size_t relu = 0;
      for (const LayerWork& w : tf.layers.layers) relu += w.name.find("relu") != std::string::npos;
      EXPECT_GE(fused, relu) << model;
    }
  }
}

// TensorFlow's BERT graph projects Q, K and V with three dense layers and transposes each to
// [batch, heads, tokens, head_dim] (modeling.py attention_layer; kernel-families
// `qkv_projection: separate`), and NGC 20.06's XLA merges none of them (no DotMerger) and keeps
// each transpose a copy (a batched dot's operands in the default layout). Each dense layer's bias
// is a kernel of its own: the graph executor's BiasAdd after the GEMM (reads and writes its
// output), XLA's broadcast before it, which the GEMM reads as C (`dense_bias`). So each encoder
// layer launches, in order, for P = q, k, v: [broadcast,] GEMM P, [bias add,] P's transpose; then
// the scores GEMM. Each GEMM is tokens x hidden x hidden, each transpose and bias kernel a kernel
// of its own over tokens x hidden elements, not fused into a neighbour; the three GEMMs do the
// fused QKV GEMM's FLOPs (ONNX Runtime's graph of the same model), no more; XLA's GEMM moves the
// graph executor's bytes plus C.
TEST(TensorflowRuntime, BertProjectsQueryKeyAndValueAsThreeGemmsEachWithItsTranspose) {
  const int batch = 1, seq = 384;
  const CatalogEntry& entry = load_catalog_entry("bert-large");
  const std::int64_t h = entry.dim("hidden");
  const std::int64_t layers = entry.dim("layers");
  const std::int64_t tokens = static_cast<std::int64_t>(batch) * seq;
  const double elements = static_cast<double>(tokens * h);
  const double fp16 = 2;
  const CatalogWorkload ort = build("bert-large", batch, seq, "onnxruntime");
  double qkv_flops = 0;
  std::int64_t qkv = 0;
  for (const LayerWork& g : ort.layers.layers) {
    if (g.name != "layer.qkv") continue;
    EXPECT_EQ(g.n, 3 * h);
    qkv_flops += g.flops;
    ++qkv;
  }
  EXPECT_EQ(qkv, layers);
  std::vector<double> graph_gemm_bytes;
  for (const std::string runtime : {"tensorflow", "tensorflow-xla"}) {
    const bool xla = runtime == "tensorflow-xla";
    const CatalogWorkload w = build("bert-large", batch, seq, runtime);
    std::vector<std::string> order;
    for (const std::string p : {"q", "k", "v"}) {
      if (xla) order.push_back("layer." + p + ".bias_broadcast");
      order.push_back("layer." + p);
      if (!xla) order.push_back("layer." + p + ".bias_add");
      order.push_back("layer." + p + "_split_heads");
    }
    order.push_back("layer.attention_scores");
    std::int64_t projections = 0, transposes = 0, biases = 0, fused_qkv = 0;
    double projection_flops = 0;
    std::size_t gemm_index = 0;
    const std::vector<LayerWork>& l = w.layers.layers;
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (l[i].name == "layer.qkv") ++fused_qkv;
      if (l[i].name != order.front()) continue;
      ASSERT_LE(i + order.size(), l.size()) << runtime;
      for (std::size_t j = 0; j < order.size(); ++j) {
        const LayerWork& k = l[i + j];
        ASSERT_EQ(k.name, order[j]) << runtime << " " << i;
        if (j + 1 == order.size()) break;
        if (k.kind == LayerWork::Kind::gemm) {
          EXPECT_EQ(k.m, tokens) << k.name;
          EXPECT_EQ(k.n, h) << k.name;
          EXPECT_EQ(k.k, h) << k.name;
          EXPECT_EQ(k.count, 1) << k.name;
          projection_flops += k.flops;
          ++projections;
          if (!xla) graph_gemm_bytes.push_back(k.bytes);
          if (xla && gemm_index < graph_gemm_bytes.size()) {
            // C, read once more: the broadcast bias it adds (beta 1).
            EXPECT_DOUBLE_EQ(k.bytes - graph_gemm_bytes[gemm_index], fp16 * elements) << k.name;
          }
          ++gemm_index;
          continue;
        }
        EXPECT_EQ(k.kind, LayerWork::Kind::elementwise) << k.name;
        EXPECT_EQ(k.elements, tokens * h) << k.name;
        if (k.name.ends_with("_split_heads")) {
          // A copy: one read and one write of each element, the bias added elsewhere.
          EXPECT_DOUBLE_EQ(k.bytes, 2 * fp16 * elements) << k.name;
          EXPECT_DOUBLE_EQ(k.flops, 0) << k.name;
          ++transposes;
        } else if (xla) {
          EXPECT_DOUBLE_EQ(k.bytes, fp16 * elements) << k.name;  // written, nothing read
          EXPECT_DOUBLE_EQ(k.flops, 0) << k.name;
          ++biases;
        } else {
          EXPECT_DOUBLE_EQ(k.bytes, 2 * fp16 * elements) << k.name;
          EXPECT_DOUBLE_EQ(k.flops, elements) << k.name;
          ++biases;
        }
      }
    }
    EXPECT_EQ(fused_qkv, 0) << runtime;
    EXPECT_EQ(projections, 3 * layers) << runtime;
    EXPECT_EQ(transposes, 3 * layers) << runtime;
    EXPECT_EQ(biases, 3 * layers) << runtime;
    EXPECT_DOUBLE_EQ(projection_flops, qkv_flops) << runtime;
  }
}

// Dispatch is counted once per operator: the graph executor's request pays t_op for every
// operator of its layers, spread over its kernels as the launch pacing (host_time.hpp); under
// XLA every kernel is one launch of the compiled executable, none of them a framework operator.
TEST(TensorflowRuntime, PerOperatorDispatchIsCountedOncePerOperator) {
  const KernelFamilies& f = load_kernel_families();
  const double t_op = f.runtime("tensorflow")->host_per_op.value;
  ASSERT_GT(t_op, 0);
  const CatalogWorkload tf = build("bert-base", 1, 128, "tensorflow");
  double ops = 0;
  for (const LayerWork& w : tf.layers.layers) ops += w.host_ops;
  EXPECT_DOUBLE_EQ(tf.host_ops, ops);
  EXPECT_EQ(tf.host_gap, host_gap_per_launch(ops, t_op, tf.kernels.size(), false));
  EXPECT_GT(tf.host_gap, 0);
  const CatalogWorkload xla = build("bert-base", 1, 128, "tensorflow-xla");
  EXPECT_DOUBLE_EQ(xla.host_ops, static_cast<double>(xla.layers.layers.size()));
  EXPECT_EQ(xla.host_gap,
            host_gap_per_launch(xla.host_ops, f.runtime("tensorflow-xla")->host_per_op.value,
                                xla.kernels.size(), false));
}

ResolvedScenario resolve_tf(const std::string& keys) {
  return resolve_scenario(
      load_scenario_text("name: t\nseed: 1\nduration: 200ms\nwarmup: 0s\n"
                         "gpus: [{name: g, model: a100-sxm4-40gb, sharing: {mode: exclusive}}]\n"
                         "tenants:\n  - name: a\n    device: g\n    workload:\n"
                         "      arrivals: {process: closed, concurrency: 1, think: 1us}\n" +
                             keys,
                         "test.yaml"));
}

// Closed form of a host-bound request (launch.cpp: issue_k = max(finish_{k-1}, start +
// host_before_0 + k x host_gap), ready_k = issue_k + L): when the host's gap per launch exceeds
// every kernel's launch overhead and duration, kernel k is issued at start + host_before_0 +
// k x gap and the request ends with the last kernel:
//     latency = T_req + copy + (K - 1) x gap + L + D_last,
// T_req the profile's fitted host_per_request.tensorflow, gap = ops x t_op / K.
TEST(TensorflowRuntime, HostBoundBatchOneLatencyIsTheHostTermsPlusTheLastKernel) {
  const ResolvedScenario r = resolve_tf(
      "      model: resnet50\n      batch: 1\n      dtype: fp16\n      runtime: tensorflow\n"
      "      host: {per_op: 200us}\n");
  const WorkloadSpec& w = r.scenario.tenants.front().workload;
  const DeviceProfile& gpu = load_device_profile("a100-sxm4-40gb");
  const Nanos t_req = gpu.host_per_request.at("tensorflow");
  EXPECT_GT(t_req, 0);                              // fitted: calibration/fit/REPORT-TF.md
  EXPECT_GE(w.kernels.front().host_before, t_req);  // + the copies over PCIe
  const double launch = static_cast<double>(stream_launch_overhead(w, gpu));
  for (const KernelSpec& k : w.kernels) {
    ASSERT_LT(static_cast<double>(k.duration.value) + launch, static_cast<double>(w.host_gap));
  }
  const double expected =
      static_cast<double>(w.kernels.front().host_before) +
      static_cast<double>(w.kernels.size() - 1) * static_cast<double>(w.host_gap) + launch +
      static_cast<double>(w.kernels.back().duration.value);
  RunControl control;
  control.record_requests = false;
  const double latency = simulate_resolved(r, control).tenants.front().latency.mean;
  EXPECT_NEAR(latency, expected, 1.0);
}

// XLA's dispatch per kernel is fitted (calibration/fit/tf_runtime.py, TF-RUNTIME.md stage 1; the
// chain rerun of 2026-12-07 puts it at 0, the kernels' own stream gap alone reaching its rows), and
// a batch-1 BERT-base request with no harness time (FasterTransformer's bare session.run loop:
// `host: {per_request: 0ns}`, no copies) is paced by a dispatch that exceeds the GPU's pace:
// gap = N_ops x t_op / K with N_ops the XLA layers (one dispatch each; K counts their kernels),
// here a stated t_op of 10 us (`host: {per_op}`; the fit gave 10.7 us before TensorFlow's Q, K
// and V became three GEMMs): 354 kernels, about 3.4 ms against about 0.7 ms of GPU work, each
// kernel's own stream gap (launch_overhead + kernel_fixed_cost) below the dispatch gap. The
// launch law (launch.cpp) alone on the GPU:
//     issue_k = max(finish_{k-1}, start + k x gap), finish_k = issue_k + L + D_k,
// so latency = finish_{K-1} - start; a kernel longer than the gap (the Q, K and V GEMMs at
// 128 tokens) delays the next issue, most kernels wait for the host.
TEST(TensorflowRuntime, XlaDispatchPerKernelIsFittedAndPacesABatchOneRequest) {
  const CatalogRuntime& xla = *load_kernel_families().runtime("tensorflow-xla");
  EXPECT_GE(xla.host_per_op.value, 0);
  EXPECT_FALSE(xla.host_per_op.assumed);
  EXPECT_NE(xla.host_per_op.provenance.find("TF-RUNTIME.md"), std::string::npos);
  const double t_op_s = 10e-6;
  const ResolvedScenario r = resolve_tf(
      "      model: bert-base\n      batch: 1\n      seq_len: 128\n      dtype: fp16\n"
      "      runtime: tensorflow-xla\n"
      "      host: {per_request: 0ns, input_bytes: 0B, output_bytes: 0B, per_op: 10us}\n");
  const WorkloadSpec& w = r.scenario.tenants.front().workload;
  EXPECT_EQ(w.kernels.front().host_before, 0);
  const CatalogWorkload catalog = build("bert-base", 1, 128, "tensorflow-xla");
  EXPECT_EQ(w.host_gap,
            host_gap_per_launch(catalog.host_ops, t_op_s, catalog.kernels.size(), false));
  EXPECT_GT(static_cast<double>(w.kernels.size() - 1) * static_cast<double>(w.host_gap), 2e6);
  const DeviceProfile& gpu = load_device_profile("a100-sxm4-40gb");
  const double launch = static_cast<double>(stream_launch_overhead(w, gpu));
  double finish = 0, gpu_time = 0;
  std::size_t host_paced = 0;
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    const double paced = static_cast<double>(k) * static_cast<double>(w.host_gap);
    host_paced += paced >= finish;
    const double d = static_cast<double>(w.kernels[k].duration.value);
    finish = std::max(finish, paced) + launch + d;
    gpu_time += d;
  }
  EXPECT_GT(2 * host_paced, w.kernels.size());  // the host sets most issues
  EXPECT_GT(finish, 2 * gpu_time);
  RunControl control;
  control.record_requests = false;
  EXPECT_NEAR(simulate_resolved(r, control).tenants.front().latency.mean, finish, 1.0);
}

// host_per_op takes exactly one provenance (source, assumption or fitted) and no negative value.
TEST(TensorflowRuntime, HostPerOpNeedsOneProvenanceAndANonNegativeValue) {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/calibration/workloads/kernel-families.yaml");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string base = buf.str();
  const std::string anchor = "  tensorflow-xla:\n";
  ASSERT_NE(base.find(anchor), std::string::npos);
  const std::size_t from = base.find("    host_per_op:", base.find(anchor));
  const std::size_t to = base.find("\n    attention:", from);
  ASSERT_NE(to, std::string::npos);
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{"    host_per_op: {value: 3us, source: a, fitted: b}",
                                            "give exactly one of source, assumption or fitted"},
        {"    host_per_op: {value: 3us}", "give exactly one of source, assumption or fitted"},
        {"    host_per_op: {value: -3us, fitted: a}", "host_per_op"}}) {
    const std::string text = base.substr(0, from) + entry + base.substr(to);
    testing::expect_kernel_families_refused(text, "runtimes.tensorflow-xla", why);
  }
  // The same entry with one provenance, `fitted` included, loads.
  const std::string ok =
      base.substr(0, from) + "    host_per_op: {value: 3us, fitted: a}" + base.substr(to);
  EXPECT_DOUBLE_EQ(parse_kernel_families(ok, "k.yaml").runtime("tensorflow-xla")->host_per_op.value,
                   3e-6);
}

TEST(TensorflowRuntime, AnUnknownRuntimeIsALocatedErrorNamingTheTensorflowRuntimes) {
  try {
    (void)resolve_tf("      model: resnet50\n      runtime: tensorflow-jit\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.yaml:12:16: tenants.0.workload.runtime: unknown runtime "
                        "'tensorflow-jit'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("tensorflow-xla"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gpumux
