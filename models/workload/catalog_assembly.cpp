// The workload catalog's assembly (catalog_model.hpp, "Host", "Memory"): a request of a catalog
// entry becomes its layers (catalog_architectures.cpp), their kernels on the GPU
// (catalog_timing.cpp), its host time and its memory. A scenario's tenants:
// models/scenario/catalog_tenant.cpp.
#include "models/workload/catalog_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "models/config/yaml_reader.hpp"
#include "models/gpu/sharing_law.hpp"
#include "models/workload/host_time.hpp"
#include "models/workload/runtime_fixed_cost.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

std::string default_runtime(bool training) { return training ? "pytorch" : "tensorrt"; }

RequestIo request_io_bytes(const CatalogEntry& e, int batch, int seq_len, int element_bytes) {
  const double b = batch, s = seq_len, dt = element_bytes;
  RequestIo io;
  if (e.dim("image_size") > 0) {
    const double side = static_cast<double>(e.dim("image_size"));
    io.input = b * 3 * side * side * dt;
    io.output = b * static_cast<double>(std::max<std::int64_t>(1, e.dim("classes"))) * dt;
  } else if (e.family == "pointnet") {
    io.input = b * static_cast<double>(e.dim("points")) * 3 * 4;
    io.output = b * static_cast<double>(e.dim("classes")) * 4;
  } else if (e.family == "encoder-decoder") {
    io.input = b * static_cast<double>(e.dim("mel_bins") * e.dim("audio_frames")) * 4;
    io.output = b * s * 4;
  } else if (e.family == "decoder") {
    io.input = b * s * 4;
    io.output = b * static_cast<double>(e.dim("vocab")) * dt;
  } else {
    io.input = b * s * 3 * 4;
    io.output = b * s * 2 * 4;
  }
  return io;
}

namespace {

[[noreturn]] void fail_at(const KeyLocator& locate, const std::string& path,
                          const std::string& message) {
  throw InputError(locate(path), message);
}

}  // namespace

CatalogWorkload build_catalog_workload(const std::string& contention_law, const KeyLocator& locate,
                                       const CatalogRequestSpec& request,
                                       const std::string& tenant_path, const DeviceProfile& device,
                                       int data_parallel, bool cuda_graph, int library_sms,
                                       double device_l2) {
  const DeviceProfile gpu = catalog_timing_profile(contention_law, device);
  const double l2 = device_l2 > 0 ? device_l2 : static_cast<double>(gpu.l2_cache);
  const std::string path = tenant_path + ".workload";
  const CatalogEntry* entry = nullptr;
  try {
    entry = &load_catalog_entry(request.model);
  } catch (const InputError& e) {
    fail_at(locate, path + ".model", e.what());
  }
  const std::string phase = request.phase.empty() ? entry->phases.front() : request.phase;
  if (std::find(entry->phases.begin(), entry->phases.end(), phase) == entry->phases.end()) {
    fail_at(locate, path + ".phase",
            request.model + " has no " + phase + " phase; it offers " + join(entry->phases));
  }
  const bool training = phase == "training";
  const std::string dtype = request.dtype.empty() ? entry->default_dtype : request.dtype;
  const double peak = tensor_peak(gpu, dtype);
  if (!(peak > 0) || !(gpu.compute.fp32 > 0)) {
    fail_at(locate, request.dtype.empty() ? path + ".model" : path + ".dtype",
            "the " + gpu.name + " profile has no compute_throughput." +
                (peak > 0 ? std::string("fp32") : dtype + (dtype == "fp32" ? "" : "_tensor")) +
                ": the catalog's roofline needs it (give another dtype or GPU)");
  }
  const KernelFamilies& families = load_kernel_families();
  const bool user_runtime = request.runtime_from_user && !request.runtime.empty();
  const std::string runtime_name = user_runtime ? request.runtime : default_runtime(training);
  const CatalogRuntime* runtime = families.runtime(runtime_name);
  if (runtime == nullptr) {
    fail_at(locate, path + ".runtime",
            "unknown runtime '" + runtime_name + "'" +
                yaml::hint(runtime_name, families.runtime_names()) +
                "; use one of: " + join(families.runtime_names()));
  }
  // A named GEMM library replaces the runtime's GEMMs (catalog_model.hpp, "GEMM library"): the
  // request's copy of the families carries it; without one the shared families are used as they
  // are.
  std::optional<KernelFamilies> with_library;
  if (!request.gemm_library.empty()) {
    const GemmLibrary* lib = families.gemm_library(request.gemm_library);
    if (lib == nullptr) {
      fail_at(locate, path + ".gemm_library",
              "unknown GEMM library '" + request.gemm_library + "'" +
                  yaml::hint(request.gemm_library, families.gemm_library_names()) +
                  "; use one of: " + join(families.gemm_library_names()));
    }
    with_library = families;
    with_library->fixed_gemm = *lib;
  }
  if (!request.gemm_workspace) {
    // No workspace: cuBLASLt splits no GEMM's K (workload_spec.hpp, gemm_workspace).
    if (!with_library) with_library = families;
    with_library->gemm_split_k = {1};
  }
  const KernelFamilies& gemm_families = with_library ? *with_library : families;
  // Inference engines: TensorRT (from its own plugins or an ONNX export) and FasterTransformer
  // build no backward pass (tensorrt-onnx and fastertransformer training steps were simulated).
  if (training && (runtime->name == "tensorrt" || runtime->name == "tensorrt-onnx" ||
                   runtime->name == "fastertransformer")) {
    fail_at(locate, path + ".runtime",
            runtime->name + " runs inference only; a training step needs runtime: pytorch");
  }
  if (training && request.host.any_request_term()) {
    fail_at(locate, path + ".host",
            "per_request, input_bytes, output_bytes and link_bandwidth are an inference "
            "request's host terms; a training step takes per_op only");
  }
  // host_time.hpp: the runtime's t_op on the tenant's host unless host.per_op replaces it.
  const double per_op_s = host_per_op_seconds(gpu, runtime->host_per_op.value, request.host);
  const bool vision =
      entry->family == "resnet" || entry->family == "pointnet" || entry->dim("patch") > 0;
  if (vision && request.seq_len > 0) {
    fail_at(locate, path + ".seq_len",
            request.model + " has no sequence length: its input size is fixed by the entry");
  }
  const int seq = request.seq_len > 0 ? request.seq_len : entry->default_seq_len;
  if (!vision && entry->dim("max_positions") > 0 && seq > entry->dim("max_positions")) {
    fail_at(locate, path + ".seq_len",
            request.model + " has " + std::to_string(entry->dim("max_positions")) +
                " positions; seq_len " + std::to_string(seq) + " does not fit");
  }
  if (request.attention_seq_len > 0) {
    // catalog_model.hpp "Attention grid": an encoder's fused kernel built for N keys.
    if (entry->family != "encoder" || vision) {
      fail_at(locate, path + ".attention_seq_len",
              request.model + " is not a text encoder: attention_seq_len is the length an " +
                  "encoder's (BERT's) fused attention kernel is built for");
    }
    if (entry->dim("max_positions") > 0 &&
        request.attention_seq_len > entry->dim("max_positions")) {
      fail_at(locate, path + ".attention_seq_len",
              request.model + " has " + std::to_string(entry->dim("max_positions")) +
                  " positions; attention_seq_len " + std::to_string(request.attention_seq_len) +
                  " does not fit");
    }
    if (seq > request.attention_seq_len) {
      fail_at(locate, path + ".attention_seq_len",
              "attention_seq_len " + std::to_string(request.attention_seq_len) +
                  " is shorter than seq_len " + std::to_string(seq) +
                  ": the kernel is built for at least the longest sequence it runs");
    }
  }
  if (request.attention_bucket) {
    // catalog_model.hpp "Attention grid": the variable-length plugin's kernel of each length.
    if (entry->family != "encoder" || vision) {
      fail_at(locate, path + ".attention_seq_len",
              request.model + " is not a text encoder: attention_seq_len: bucket is the " +
                  "variable-length kernel of an encoder's (BERT's) fused attention");
    }
    if (varseqlen_kernel_length(seq, dtype == "int8" || dtype == "fp8") == 0) {
      fail_at(locate, path + ".attention_seq_len",
              "attention_seq_len: bucket: TensorRT's variable-length attention kernels hold at "
              "most 384 tokens; seq_len " +
                  std::to_string(seq) + " does not fit");
    }
  }
  const int batch = request.batch > 0 ? request.batch : entry->default_batch;
  LayerFusion fusion;
  fusion.attention_key_rows = request.attention_seq_len;
  fusion.attention_bucket = request.attention_bucket;
  fusion.fused_attention = runtime->fused_attention;
  fusion.attention_per_head = runtime->attention_per_head;
  fusion.fused_activation = runtime->fused_activation;
  fusion.fused_residual_norm = runtime->fused_residual_norm;
  fusion.folded_batchnorm = runtime->folded_batchnorm;
  fusion.fused_conv_residual = runtime->fused_conv_residual;
  fusion.separate_qkv_projections = runtime->separate_qkv_projections;
  fusion.qkv_head_views = runtime->qkv_head_views;
  fusion.dense_bias_broadcast = runtime->dense_bias_broadcast;
  fusion.dense_bias_kernel = runtime->dense_bias_kernel;
  fusion.qkv_bias_kernel = runtime->qkv_bias_kernel;
  fusion.fused_pre_ln_residual_norm = runtime->fused_pre_ln_residual_norm;
  if (fusion.attention_key_rows == 0 && !runtime->attention_lengths.empty() &&
      runtime->fused_attention && entry->family == "encoder" && dtype == "fp16" &&
      entry->dim("heads") > 0 && entry->dim("hidden") / entry->dim("heads") == 64) {
    // kernel-families `attention_lengths:`: the runtime's fused attention exists for these
    // lengths only; L tokens run the smallest kernel of N >= L, padded to N ("Attention grid").
    const std::int64_t tokens = vision ? (entry->dim("image_size") / entry->dim("patch")) *
                                                 (entry->dim("image_size") / entry->dim("patch")) +
                                             1
                                       : seq;
    for (const std::int64_t n : runtime->attention_lengths) {
      if (n >= tokens) {
        fusion.attention_key_rows = n;
        break;
      }
    }
  }
  fusion.autocast_fp32_ops = runtime->autocast && (dtype == "fp16" || dtype == "bf16");
  // Only an eager runtime keeps the framework's NCHW tensors; TensorRT and ONNX Runtime choose
  // their own layouts (converted once at the input).
  // PyTorch's native convolution (`conv_library: native`, catalog_model.hpp "Native
  // convolution") works on NCHW itself: no cuDNN layout transposes then.
  fusion.native_convolution = request.conv_library == "native";
  fusion.nchw_transposes = request.memory_format == "contiguous" && !runtime->folded_batchnorm &&
                           !fusion.native_convolution;
  CatalogWorkload out;
  out.runtime = runtime->name;
  out.runtime_from_user = user_runtime;
  if (request.gradient_checkpointing) {
    if (!training) {
      fail_at(locate, path + ".gradient_checkpointing",
              "gradient_checkpointing applies to a training step (phase: training)");
    }
    if (entry->family == "resnet" || entry->family == "pointnet") {
      fail_at(locate, path + ".gradient_checkpointing",
              request.model +
                  " has no transformer layers to checkpoint (the catalog checkpoints "
                  "each encoder / decoder layer, as HF gradient_checkpointing does)");
    }
  }
  out.layers =
      catalog_layers(*entry, batch, seq, dtype, training, fusion, request.gradient_checkpointing);
  if (runtime->fused_elementwise_chains) {
    // A compiler's loop fusion (XLA): each elementwise chain becomes one kernel.
    fuse_elementwise_chains(out.layers.layers, runtime->softmax_one_kernel);
    fuse_elementwise_chains(out.layers.decode_step, runtime->softmax_one_kernel);
  }
  std::vector<LayerWork> layers = out.layers.layers;
  if (training && data_parallel > 1) {
    LayerWork reduce;
    reduce.kind = LayerWork::Kind::collective;
    reduce.name = "allreduce.gradients";
    reduce.bytes = 4.0 * static_cast<double>(out.layers.params);  // fp32 gradients
    layers.push_back(reduce);
  }
  std::vector<KernelSpec> step;
  std::vector<std::string> details;
  step.reserve(layers.size() + 1);
  double ops = 0;
  std::size_t launches = 0;  // a kernel of repeat r is r launches
  const auto build = [&](const LayerWork& layer) {
    // The input the kernel before it wrote, as much of it as the device's L2 still holds, is
    // not HBM traffic.
    double from_l2 = 0;
    if (layer.l2_input_bytes > 0 && l2 > 0) {
      const double traffic = std::max(layer.l2_input_producer_bytes, layer.l2_input_bytes);
      from_l2 = layer.l2_input_bytes * std::min(1.0, l2 / traffic);
    }
    LayerWork hbm = layer;
    hbm.bytes = std::max(0.0, layer.bytes - from_l2);
    LayerKernels built = layer_kernels(hbm, gemm_families, gpu, peak, request.bus_bandwidth,
                                       data_parallel, library_sms);
    if (from_l2 > 0 && !built.details.empty()) {
      built.details.front() += ", input " + units::format_size(std::llround(from_l2)) + " from L2";
    }
    return built;
  };
  for (const LayerWork& layer : layers) {
    // A split-K GEMM's reduction kernel is launched by the library inside the same operator.
    LayerKernels built = build(layer);
    if (layer.repeat > 1) {
      // A per-sample loop (catalog_model.hpp, "Native convolution"): each of its kernels
      // (a GEMM's split-K reduction too) launched once per sample.
      for (KernelSpec& k : built.kernels) k.repeat = static_cast<int>(layer.repeat);
      for (std::string& d : built.details) {
        d += ", x" + std::to_string(layer.repeat) + " per sample (native convolution)";
      }
    }
    launches += built.kernels.size() * static_cast<std::size_t>(layer.repeat);
    step.insert(step.end(), built.kernels.begin(), built.kernels.end());
    details.insert(details.end(), built.details.begin(), built.details.end());
    ops += layer.host_ops;
  }
  if (!out.layers.decode_step.empty()) {
    // One decoder pass per generated token, as one kernel repeated seq_len times: the step's
    // kernels back to back (their solo times and launch gaps summed), its width and
    // memory-boundness weighted by time.
    double total = 0, width = 0, bound = 0, step_ops = 0;
    std::int64_t working_set = 0;
    std::size_t step_kernels = 0;
    for (const LayerWork& layer : out.layers.decode_step) {
      for (const KernelSpec& k : build(layer).kernels) {
        const double t = static_cast<double>(k.duration.value) +
                         static_cast<double>(gpu.modelled_launch(cuda_graph));
        total += t;
        width += t * k.sm_fraction;
        // (the step is a sequence of kernels, not one roofline: serial phases, each kernel's
        // memory time over its phases' sum, contention::serial_phases)
        double m = k.memory_bound, c = k.busy_share;
        contention::serial_phases(m, c);
        bound += t * m;
        working_set = std::max(working_set, k.working_set);
        ++step_kernels;
      }
      step_ops += layer.host_ops;
    }
    KernelSpec k;
    k.name = "decoder.step";
    k.duration.kind = DurationDistribution::Kind::fixed;
    // Host-bound when the runtime dispatches slower than the GPU computes.
    const double host = cuda_graph ? 0.0 : step_ops * per_op_s * 1e9;
    k.duration.value = std::max<Nanos>(1, std::llround(std::max(total, host)));
    k.sm_fraction = std::max(1e-6, width / total);
    k.memory_bound = bound / total;
    k.working_set = working_set;
    k.repeat = std::max(1, seq);
    step.push_back(k);
    ++launches;  // (one host dispatch pace for the step, as before: not per token)
    details.push_back("decode step: " + std::to_string(step_kernels) +
                      " kernels summed, repeated per generated token");
    ops += 1;
  }
  out.kernels.reserve(step.size() * static_cast<std::size_t>(request.steps));
  for (int s = 0; s < request.steps; ++s) {
    out.kernels.insert(out.kernels.end(), step.begin(), step.end());
    out.details.insert(out.details.end(), details.begin(), details.end());
  }
  out.host_ops = ops;
  if (!training && !out.kernels.empty()) {
    // Host time per inference request (catalog_model.hpp, "Host"): the runtime's fitted
    // per-request time and the input and output over the host link, before the first kernel.
    // (host_time.hpp; a tenant's host: block replaces any term)
    // The tensors travel as `io_dtype` (uint8 images: 1 byte), else as the compute dtype.
    const int io_bytes = request.io_dtype.empty()      ? dtype_bytes(dtype)
                         : request.io_dtype == "uint8" ? 1
                                                       : dtype_bytes(request.io_dtype);
    const RequestIo io = request_io_bytes(*entry, batch, seq, io_bytes);
    ServingFrontEnd front_end;
    if (!request.serving.empty()) {
      const CatalogServing* serving = load_kernel_families().serving_front_end(request.serving);
      if (serving == nullptr) {
        fail_at(locate, path + ".serving", "unknown serving front end '" + request.serving + "'");
      }
      front_end = {serving->name, std::llround(serving->latency.value * 1e9),
                   serving->bandwidth.value, serving->latency.provenance};
    }
    if (!request.harness.empty() && gpu.harness_per_request.count(request.harness) == 0) {
      const std::vector<std::string> names = profile_harness_names(gpu);
      fail_at(locate, path + ".harness",
              "profile " + gpu.name + " has no host time for the harness '" + request.harness +
                  "' (its harness_per_request: " + (names.empty() ? "none" : join(names, ", ")) +
                  "; or harness: none; docs/workloads.md \"Benchmark harness\")");
    }
    const HostTerms host =
        request_host_terms(gpu, runtime->name, runtime->host_per_op.value, io.input, io.output,
                           request.host, front_end, request.harness);
    out.input_bytes = host.input_bytes;
    out.output_bytes = host.output_bytes;
    out.host_per_request = host.per_request;
    out.copy_time = host.copy_time;
    out.front_end_time = host.front_end_time;
    out.kernels.front().host_before = host.before_first_kernel();
  }
  // Every launch, a per-sample loop's repeats included, shares the operators' host time
  // (launches = step.size() when no kernel repeats).
  out.host_gap = host_gap_per_launch(ops, per_op_s, launches, cuda_graph);
  if (request.runtime_kernel_fixed_cost && cuda_graph) {
    fail_at(locate, path + ".runtime_kernel_fixed_cost",
            "a runtime's device time per kernel is paid by kernels launched outside a CUDA "
            "graph; this tenant runs cuda_graph: true (drop one of the two)");
  }
  if (!cuda_graph) {
    apply_runtime_kernel_fixed_cost(
        runtime_kernel_fixed_ns(*runtime, request.runtime_kernel_fixed_cost), gpu, out.kernels);
  }
  const std::int64_t params = out.layers.params;
  if (training) {
    const std::int64_t optimizer = entry->family == "resnet" ? 4 : 8;
    out.memory = params * (4 + 4 + optimizer) + out.layers.activation_saved;
  } else {
    out.memory = out.layers.weight_bytes;
    out.memory_per_request = out.layers.activation_peak;
  }
  return out;
}

}  // namespace gpumux
