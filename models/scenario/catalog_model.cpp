#include "models/scenario/catalog_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/scenario/kernel_trace_model.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Resident blocks per SM of a kernel family's block (kernel_trace_model.hpp's occupancy law).
int family_blocks_per_sm(const SmLimits& limits, double threads, double registers, double shared) {
  TraceKernel k;
  k.block[0] = static_cast<std::int64_t>(threads);
  k.registers_per_thread = static_cast<int>(registers);
  k.shared_memory = static_cast<std::int64_t>(shared);
  return blocks_per_sm(k, limits);
}

// Builds the layer list of one request. `dt` = bytes per element.
class LayerBuilder {
 public:
  LayerBuilder(double dt, bool training) : dt_(dt), training_(training) {}

  // out[M x N] = A[M x K] B[K x N], count times. a/b/c: elements of each operand as stored
  // (a convolution's A is its input feature map, not the im2col matrix). `weights`: B is a
  // parameter tensor (counted in params, gets a weight gradient); `input_grad`: A needs a
  // gradient in training (false for the first layer).
  void gemm(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
            std::int64_t count, double a, double b, double c, bool weights,
            bool input_grad = true) {
    LayerWork w;
    w.kind = LayerWork::Kind::gemm;
    w.name = name;
    w.m = m;
    w.n = n;
    w.k = k;
    w.count = count;
    w.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
              static_cast<double>(count);
    w.bytes = (a + b + c) * dt_;
    w.working_set = (a + b) * dt_;
    forward_.push_back(w);
    backward_.push_back({w, input_grad, weights});
    if (weights) params_ += static_cast<std::int64_t>(b);
    output(c);
  }

  // An elementwise / normalisation / pooling kernel over `elements`, reading `reads` and writing
  // `writes` tensors of that size, `flops` operations per element. `params`: its parameters
  // (norm scale and shift). `backward`: it has a backward kernel in training.
  void elementwise(const std::string& name, double elements, double reads, double writes,
                   double flops, std::int64_t params = 0, bool backward = true,
                   double out_elements = -1) {
    LayerWork w;
    w.kind = LayerWork::Kind::elementwise;
    w.name = name;
    w.elements = static_cast<std::int64_t>(elements);
    w.flops = elements * flops;
    w.bytes = elements * (reads + writes) * dt_;
    if (out_elements >= 0) w.bytes = (elements * reads + out_elements * writes) * dt_;
    forward_.push_back(w);
    if (backward) backward_.push_back({w, true, false});
    params_ += params;
    output(out_elements >= 0 ? out_elements : elements * writes);
  }

  void add_params(std::int64_t n) { params_ += n; }

  CatalogLayers finish(const std::string& optimizer) {
    CatalogLayers out;
    out.layers = forward_;
    if (training_) {
      for (auto it = backward_.rbegin(); it != backward_.rend(); ++it) {
        const LayerWork& f = it->forward;
        if (f.kind == LayerWork::Kind::gemm) {
          // dA = dC B^T (M x K, inner N); dB = A^T dC (K x N, inner M): the same FLOPs, and
          // each reads two of the three operands and writes the third.
          if (it->input_grad) {
            LayerWork d = f;
            d.name = f.name + ".dgrad";
            d.n = f.k;
            d.k = f.n;
            out.layers.push_back(d);
          }
          LayerWork g = f;
          g.name = f.name + (it->weights ? ".wgrad" : ".dgrad2");
          g.m = f.k;
          g.n = f.n;
          g.k = f.m;
          out.layers.push_back(g);
        } else {
          LayerWork b = f;
          b.name = f.name + ".backward";
          b.bytes = f.bytes + static_cast<double>(f.elements) * dt_;  // + the saved input
          out.layers.push_back(b);
        }
      }
      // The optimizer step over every parameter, fp32 master weights (one fused multi-tensor
      // kernel): SGD-momentum reads p, g, m and writes p, m (20 B); Adam reads p, g, m, v and
      // writes p, m, v (28 B).
      const bool adam = optimizer == "adam";
      LayerWork opt;
      opt.kind = LayerWork::Kind::elementwise;
      opt.name = adam ? "optimizer.adam" : "optimizer.sgd";
      opt.elements = params_;
      opt.flops = static_cast<double>(params_) * (adam ? 12 : 4);
      opt.bytes = static_cast<double>(params_) * (adam ? 28 : 20);
      out.layers.push_back(opt);
    }
    out.params = params_;
    out.weight_bytes = static_cast<std::int64_t>(static_cast<double>(params_) * dt_);
    out.activation_peak = static_cast<std::int64_t>((largest_[0] + largest_[1]) * dt_);
    out.activation_saved = static_cast<std::int64_t>(saved_ * dt_);
    return out;
  }

 private:
  struct Backward {
    LayerWork forward;
    bool input_grad = true;
    bool weights = false;
  };

  void output(double elements) {
    saved_ += elements;
    if (elements > largest_[0]) {
      largest_[1] = largest_[0];
      largest_[0] = elements;
    } else if (elements > largest_[1]) {
      largest_[1] = elements;
    }
  }

  double dt_;
  bool training_;
  std::vector<LayerWork> forward_;
  std::vector<Backward> backward_;
  std::int64_t params_ = 0;
  double saved_ = 0;
  double largest_[2] = {0, 0};
};

// He et al. 2016 Table 1 (50-layer), v1.5: stride in the 3x3; BN folded into the convolution's
// epilogue at inference (TensorRT / cuDNN fusion), a BN + ReLU kernel per convolution in
// training.
void resnet_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch, bool training) {
  const std::int64_t image = e.dim("image_size");
  const std::int64_t stem = e.dim("stem_width");
  const std::int64_t expansion = e.dim("expansion");
  const std::int64_t classes = e.dim("classes");
  const std::vector<std::int64_t>& blocks = e.dims.at("stage_blocks");
  const double n = static_cast<double>(batch);
  // conv k x k / stride on an H x H x c_in map -> ceil(H / stride) x ... x c_out.
  const auto conv = [&](const std::string& name, std::int64_t h_in, std::int64_t c_in,
                        std::int64_t c_out, std::int64_t k, std::int64_t stride, bool first) {
    const std::int64_t h_out = ceil_div(h_in, stride);
    const std::int64_t m = batch * h_out * h_out;
    const double in = n * static_cast<double>(h_in * h_in * c_in);
    const double out = static_cast<double>(m * c_out);
    b.gemm(name, m, c_out, c_in * k * k, 1, in, static_cast<double>(c_in * k * k * c_out), out,
           true, !first);
    if (training) {
      // BN statistics pass + normalise/ReLU pass: reads the map twice, writes it once.
      b.elementwise(name + ".bn_relu", out, 2, 1, 8, 2 * c_out);
    } else {
      b.add_params(2 * c_out);  // the folded BN's scale and shift
    }
    return h_out;
  };
  std::int64_t h = conv("conv1", image, 3, stem, 7, 2, true);
  const double pooled = n * static_cast<double>(ceil_div(h, 2) * ceil_div(h, 2) * stem);
  b.elementwise("maxpool", n * static_cast<double>(h * h * stem), 1, 1, 9, 0, true, pooled);
  h = ceil_div(h, 2);
  std::int64_t c_in = stem;
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    const std::int64_t width = stem << s;
    const std::int64_t c_out = width * expansion;
    for (std::int64_t j = 0; j < blocks[s]; ++j) {
      // Blocks after the first of a stage have the same shapes: one kernel name for them.
      const std::string stage = "conv" + std::to_string(s + 2);
      const std::string name = stage + (j == 0 ? "_1" : "_x");
      const std::int64_t stride = (j == 0 && s > 0) ? 2 : 1;
      conv(name + ".conv1", h, c_in, width, 1, 1, false);
      const std::int64_t h_out = conv(name + ".conv2", h, width, width, 3, stride, false);
      conv(name + ".conv3", h_out, width, c_out, 1, 1, false);
      if (j == 0) conv(name + ".downsample", h, c_in, c_out, 1, stride, false);
      b.elementwise(name + ".add_relu", n * static_cast<double>(h_out * h_out * c_out), 2, 1, 2);
      h = h_out;
      c_in = c_out;
    }
  }
  b.elementwise("avgpool", n * static_cast<double>(h * h * c_in), 1, 1, 1, 0, true,
                n * static_cast<double>(c_in));
  b.gemm("fc", batch, classes, c_in, 1, n * static_cast<double>(c_in),
         static_cast<double>(c_in * classes), n * static_cast<double>(classes), true);
  b.add_params(classes);  // fc bias
  if (training) b.elementwise("loss.softmax_xent", n * static_cast<double>(classes), 1, 1, 5);
}

// One transformer layer (Vaswani et al. 2017 as used by BERT, ViT and GPT-2): fused QKV
// projection, attention as two batched GEMMs around a softmax, output projection, residual add
// + layer norm (one kernel per sublayer), two FFN GEMMs (activation in the first's epilogue).
void transformer_layer(LayerBuilder& b, std::int64_t batch, std::int64_t seq, std::int64_t h,
                       std::int64_t heads, std::int64_t ffn) {
  const std::int64_t t = batch * seq;
  const std::int64_t d = h / heads;
  const double tokens = static_cast<double>(t);
  const double th = tokens * static_cast<double>(h);
  const double bh = static_cast<double>(batch * heads);
  const double ll = static_cast<double>(seq * seq);
  const double ld = static_cast<double>(seq * d);
  const double hd = static_cast<double>(h);
  b.gemm("layer.qkv", t, 3 * h, h, 1, th, hd * 3 * hd, 3 * th, true);
  b.add_params(3 * h);
  b.gemm("layer.attention_scores", seq, seq, d, batch * heads, bh * ld, bh * ld, bh * ll, false);
  b.elementwise("layer.softmax", bh * ll, 1, 1, 5);
  b.gemm("layer.attention_context", seq, d, seq, batch * heads, bh * ll, bh * ld, bh * ld, false);
  b.gemm("layer.attention_out", t, h, h, 1, th, hd * hd, th, true);
  b.add_params(h);
  b.elementwise("layer.add_layernorm1", th, 2, 1, 10, 2 * h);
  const double tf = tokens * static_cast<double>(ffn);
  b.gemm("layer.ffn1", t, ffn, h, 1, th, hd * static_cast<double>(ffn), tf, true);
  b.gemm("layer.ffn2", t, h, ffn, 1, tf, hd * static_cast<double>(ffn), th, true);
  b.add_params(ffn + h);
  b.elementwise("layer.add_layernorm2", th, 2, 1, 10, 2 * h);
}

// BERT (Devlin et al. 2019), sentence encoders (mean pooling) and ViT (Dosovitskiy et al. 2021).
void encoder_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch, std::int64_t seq,
                    bool training) {
  const std::int64_t h = e.dim("hidden");
  const std::int64_t vocab = e.dim("vocab");
  const double n = static_cast<double>(batch);
  const double th = n * static_cast<double>(seq * h);
  if (e.dim("patch") > 0) {
    // Patch embedding: a patch x patch / patch convolution = GEMM (B x patches) x h x (3 p^2).
    const std::int64_t p = e.dim("patch");
    const std::int64_t image = e.dim("image_size");
    const std::int64_t patches = (image / p) * (image / p);
    b.gemm("patch_embedding", batch * patches, h, 3 * p * p, 1,
           n * static_cast<double>(3 * image * image), static_cast<double>(3 * p * p * h),
           n * static_cast<double>(patches * h), true, false);
    b.add_params(h + (patches + 1) * h + h);  // bias, position embeddings, class token
    b.elementwise("embedding.add_position", th, 2, 1, 1, 0);
  } else {
    // Word + position + type embedding gather, sum and layer norm.
    b.elementwise("embedding.gather_layernorm", th, 3, 1, 12, 2 * h);
    b.add_params((vocab + e.dim("max_positions") + 2) * h);
  }
  for (std::int64_t l = 0; l < e.dim("layers"); ++l) {
    transformer_layer(b, batch, seq, h, e.dim("heads"), e.dim("ffn"));
  }
  if (e.dim("patch") > 0) {
    b.elementwise("final_layernorm", th, 1, 1, 8, 2 * h);
    const std::int64_t classes = e.dim("classes");
    b.gemm("head", batch, classes, h, 1, n * static_cast<double>(h),
           static_cast<double>(h * classes), n * static_cast<double>(classes), true);
    b.add_params(classes);
  } else if (e.dim("pooling") > 0) {
    b.elementwise("mean_pooling", th, 1, 1, 1, 0, true, n * static_cast<double>(h));
  } else if (training) {
    // Masked-LM head on the 15 % masked positions (Devlin et al. 2019, section 3.1), decoder
    // tied to the word embedding.
    const std::int64_t masked = std::max<std::int64_t>(1, (batch * seq * 15 + 50) / 100);
    const double mh = static_cast<double>(masked * h);
    b.gemm("mlm.transform", masked, h, h, 1, mh, static_cast<double>(h * h), mh, true);
    b.elementwise("mlm.layernorm", mh, 1, 1, 8, 2 * h);
    const double mv = static_cast<double>(masked * vocab);
    b.gemm("mlm.decoder", masked, vocab, h, 1, mh, static_cast<double>(h * vocab), mv, false);
    b.elementwise("loss.softmax_xent", mv, 1, 1, 5);
  } else {
    b.gemm("pooler", batch, h, h, 1, n * static_cast<double>(h), static_cast<double>(h * h),
           n * static_cast<double>(h), true);
  }
}

// GPT-2 (Radford et al. 2019): token + position embedding, pre-LN layers (causal attention
// computed dense, as PyTorch's non-flash path does), final layer norm, LM head tied to the
// token embedding, cross-entropy.
void decoder_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch, std::int64_t seq,
                    bool training) {
  const std::int64_t h = e.dim("hidden");
  const std::int64_t vocab = e.dim("vocab");
  const double th = static_cast<double>(batch * seq * h);
  b.elementwise("embedding.gather", th, 2, 1, 1, 0);
  b.add_params((vocab + e.dim("max_positions")) * h);
  for (std::int64_t l = 0; l < e.dim("layers"); ++l) {
    transformer_layer(b, batch, seq, h, e.dim("heads"), e.dim("ffn"));
  }
  b.elementwise("final_layernorm", th, 1, 1, 8, 2 * h);
  const double tv = static_cast<double>(batch * seq * vocab);
  b.gemm("lm_head", batch * seq, vocab, h, 1, th, static_cast<double>(h * vocab), tv, false);
  if (training) b.elementwise("loss.softmax_xent", tv, 1, 1, 5);
}

[[noreturn]] void fail_at(const Scenario& scenario, const std::string& path,
                          const std::string& message) {
  throw InputError(scenario.locate(path), message);
}

}  // namespace

int dtype_bytes(const std::string& dtype) {
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "fp8" || dtype == "int8") return 1;
  if (dtype == "tf32" || dtype == "fp32") return 4;
  return 0;
}

double tensor_peak(const DeviceProfile& gpu, const std::string& dtype) {
  const ComputeThroughput& c = gpu.compute;
  if (dtype == "fp16") return c.fp16_tensor;
  if (dtype == "bf16") return c.bf16_tensor;
  if (dtype == "fp8") return c.fp8_tensor;
  if (dtype == "int8") return c.int8_tensor;
  if (dtype == "tf32") return c.tf32_tensor;
  if (dtype == "fp32") return c.fp32;
  return 0;
}

KernelSpec roofline_kernel(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth,
                           int collective_gpus) {
  KernelSpec spec;
  spec.name = layer.name;
  const int sms = gpu.sms;
  const double bandwidth =
      gpu.hbm_bandwidth_measured > 0 ? gpu.hbm_bandwidth_measured : gpu.hbm_bandwidth;
  std::int64_t blocks = 1;
  int bps = 0;
  double t_compute = 0;
  double t_memory = layer.bytes / bandwidth;
  switch (layer.kind) {
    case LayerWork::Kind::gemm: {
      if (!(peak > 0)) throw std::invalid_argument("no tensor throughput");
      const auto tm = static_cast<std::int64_t>(families.gemm_tile_m.value);
      const auto tn = static_cast<std::int64_t>(families.gemm_tile_n.value);
      blocks = layer.count * ceil_div(layer.m, tm) * ceil_div(layer.n, tn);
      bps = family_blocks_per_sm(gpu.sm_limits, families.gemm_threads.value,
                                 families.gemm_registers.value, families.gemm_shared_memory.value);
      spec.block = {static_cast<int>(families.gemm_threads.value),
                    static_cast<int>(families.gemm_registers.value),
                    static_cast<std::int64_t>(families.gemm_shared_memory.value)};
      t_compute = layer.flops / (families.gemm_efficiency.value * peak);
      spec.working_set = static_cast<std::int64_t>(layer.working_set);
      break;
    }
    case LayerWork::Kind::elementwise: {
      if (!(gpu.compute.fp32 > 0)) throw std::invalid_argument("no fp32 throughput");
      const auto per_block = static_cast<std::int64_t>(families.elementwise_threads.value *
                                                       families.elementwise_items.value);
      blocks = std::max<std::int64_t>(1, ceil_div(layer.elements, per_block));
      bps = family_blocks_per_sm(gpu.sm_limits, families.elementwise_threads.value,
                                 families.elementwise_registers.value, 0);
      spec.block = {static_cast<int>(families.elementwise_threads.value),
                    static_cast<int>(families.elementwise_registers.value), 0};
      t_compute = layer.flops / gpu.compute.fp32;
      break;
    }
    case LayerWork::Kind::collective: {
      const double bus =
          bus_bandwidth > 0 ? bus_bandwidth : families.collective_bus_bandwidth.value;
      const double n = std::max(1, collective_gpus);
      t_memory = 2.0 * (n - 1) / n * layer.bytes / bus;
      blocks = static_cast<std::int64_t>(families.collective_blocks.value);
      bps = family_blocks_per_sm(gpu.sm_limits, families.collective_threads.value, 0, 0);
      spec.block = {static_cast<int>(families.collective_threads.value), 0, 0};
      spec.collective = true;
      break;
    }
  }
  // The busiest SM computes ceil(G / S) of the G blocks at P / S.
  const double g = static_cast<double>(blocks);
  t_compute *= static_cast<double>(sms) * static_cast<double>(ceil_div(blocks, sms)) / g;
  const GridShape grid = grid_shape(blocks, bps, sms);
  spec.sm_fraction = grid.sm_fraction;
  spec.waves = grid.waves;
  // The grid and the block footprint (contention law 1c: co-residency; law 2: whole waves).
  if (bps > 0 && blocks <= 2'000'000'000) {
    spec.blocks = static_cast<int>(blocks);
    spec.blocks_per_sm = bps;
  } else {
    spec.block = BlockFootprint{};
  }
  const double seconds = std::max(t_compute, t_memory);
  spec.memory_bound = t_compute + t_memory > 0 ? t_memory / (t_compute + t_memory) : 0;
  spec.duration.kind = DurationDistribution::Kind::fixed;
  spec.duration.value = std::max<Nanos>(1, std::llround(seconds * 1e9));
  return spec;
}

CatalogLayers catalog_layers(const CatalogEntry& entry, int batch, int seq_len,
                             const std::string& dtype, bool training) {
  LayerBuilder b(dtype_bytes(dtype), training);
  int seq = 0;
  std::string optimizer = "adam";
  if (entry.family == "resnet") {
    resnet_layers(b, entry, batch, training);
    optimizer = "sgd";
  } else if (entry.family == "encoder") {
    seq = entry.dim("patch") > 0
              ? static_cast<int>((entry.dim("image_size") / entry.dim("patch")) *
                                     (entry.dim("image_size") / entry.dim("patch")) +
                                 1)
              : seq_len;
    encoder_layers(b, entry, batch, seq, training);
  } else {
    seq = seq_len;
    decoder_layers(b, entry, batch, seq, training);
  }
  CatalogLayers out = b.finish(optimizer);
  out.seq_len = seq;
  return out;
}

CatalogWorkload build_catalog_workload(const Scenario& scenario, const CatalogRequestSpec& request,
                                       const std::string& tenant_path, const DeviceProfile& gpu,
                                       int data_parallel) {
  const std::string path = tenant_path + ".workload";
  const CatalogEntry* entry = nullptr;
  try {
    entry = &load_catalog_entry(request.model);
  } catch (const InputError& e) {
    fail_at(scenario, path + ".model", e.what());
  }
  const std::string phase = request.phase.empty() ? entry->phases.front() : request.phase;
  if (std::find(entry->phases.begin(), entry->phases.end(), phase) == entry->phases.end()) {
    fail_at(scenario, path + ".phase",
            request.model + " has no " + phase + " phase; it offers " + join(entry->phases));
  }
  const bool training = phase == "training";
  const std::string dtype = request.dtype.empty() ? entry->default_dtype : request.dtype;
  const double peak = tensor_peak(gpu, dtype);
  if (!(peak > 0) || !(gpu.compute.fp32 > 0)) {
    fail_at(scenario, request.dtype.empty() ? path + ".model" : path + ".dtype",
            "the " + gpu.name + " profile has no compute_throughput." +
                (peak > 0 ? std::string("fp32") : dtype + (dtype == "fp32" ? "" : "_tensor")) +
                ": the catalog's roofline needs it (give another dtype or GPU)");
  }
  const bool vision = entry->family == "resnet" || entry->dim("patch") > 0;
  if (vision && request.seq_len > 0) {
    fail_at(scenario, path + ".seq_len",
            request.model + " is a vision model: its sequence is fixed by the image");
  }
  const int seq = request.seq_len > 0 ? request.seq_len : entry->default_seq_len;
  if (!vision && entry->dim("max_positions") > 0 && seq > entry->dim("max_positions")) {
    fail_at(scenario, path + ".seq_len",
            request.model + " has " + std::to_string(entry->dim("max_positions")) +
                " positions; seq_len " + std::to_string(seq) + " does not fit");
  }
  const int batch = request.batch > 0 ? request.batch : entry->default_batch;
  const KernelFamilies& families = load_kernel_families();
  CatalogWorkload out;
  out.layers = catalog_layers(*entry, batch, seq, dtype, training);
  std::vector<LayerWork> layers = out.layers.layers;
  if (training && data_parallel > 1) {
    LayerWork reduce;
    reduce.kind = LayerWork::Kind::collective;
    reduce.name = "allreduce.gradients";
    reduce.bytes = 4.0 * static_cast<double>(out.layers.params);  // fp32 gradients
    layers.push_back(reduce);
  }
  std::vector<KernelSpec> step;
  step.reserve(layers.size());
  for (const LayerWork& layer : layers) {
    step.push_back(
        roofline_kernel(layer, families, gpu, peak, request.bus_bandwidth, data_parallel));
  }
  out.kernels.reserve(step.size() * static_cast<std::size_t>(request.steps));
  for (int s = 0; s < request.steps; ++s) {
    out.kernels.insert(out.kernels.end(), step.begin(), step.end());
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

void apply_catalog(const Scenario& scenario, TenantSpec& tenant, const DeviceProfile& gpu) {
  const CatalogRequestSpec& request = *tenant.workload.catalog;
  CatalogWorkload built = build_catalog_workload(scenario, request, tenant.where.key_path, gpu,
                                                 static_cast<int>(tenant.devices.size()));
  WorkloadSpec& w = tenant.workload;
  w.kernels = std::move(built.kernels);
  KernelOrigins origin;
  origin.duration = origin.sm_fraction = origin.memory_bound = origin.waves = origin.working_set =
      origin.repeat = ParamOrigin::catalog;
  w.kernel_origins.assign(w.kernels.size(), origin);
  // Origins, not locations: scenarios built in code (gpumux plan's candidates) have none.
  if (tenant.memory_origin == ParamOrigin::user ||
      scenario.locations.count(tenant.where.key_path + ".memory")) {
    tenant.memory_origin = ParamOrigin::user;
  } else {
    tenant.memory = built.memory;
    tenant.memory_origin = ParamOrigin::catalog;
  }
  if (w.memory_per_request_origin != ParamOrigin::user) {
    w.memory_per_request = built.memory_per_request;
    w.memory_per_request_origin = ParamOrigin::catalog;
  }
}

Scenario with_catalog_kernels(Scenario scenario, const DeviceProfile& gpu) {
  for (TenantSpec& tenant : scenario.tenants) {
    if (tenant.workload.catalog) apply_catalog(scenario, tenant, gpu);
  }
  return scenario;
}

}  // namespace gpumux
