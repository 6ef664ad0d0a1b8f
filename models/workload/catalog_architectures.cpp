#include "models/workload/catalog_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/config/yaml_reader.hpp"
#include "models/gpu/sharing_law.hpp"
#include "models/workload/kernel_trace_model.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Resident blocks per SM of a block shape (kernel_trace_model.hpp's occupancy law); 0 when the
// profile has no sm_limits.
int shape_blocks_per_sm(const SmLimits& limits, double threads, double registers, double shared) {
  TraceKernel k;
  k.block[0] = static_cast<std::int64_t>(threads);
  k.registers_per_thread = static_cast<int>(registers);
  k.shared_memory = static_cast<std::int64_t>(shared);
  return blocks_per_sm(k, limits);
}

double hbm_bandwidth(const DeviceProfile& gpu) { return achievable_hbm_bandwidth(gpu); }

// The HBM bandwidth (bytes/s) a grid of `blocks` blocks draws alone from `bandwidth` on `sms`
// SMs: every byte passes through the port of the SM that asked for it, so at most
// min(blocks, sms) x s with s the profile's per-SM ceiling `sm_bandwidth` (contention law 2's,
// the same product models/gpu/contention_law.hpp's hbm_draw takes as a kernel's solo draw);
// `bandwidth` where the profile has no ceiling (or the run's law none: catalog_timing_profile).
double grid_bandwidth(double bandwidth, std::int64_t blocks, int sms, const DeviceProfile& gpu) {
  if (sms <= 0) return bandwidth;
  const double held =
      static_cast<double>(std::min<std::int64_t>(std::max<std::int64_t>(1, blocks), sms));
  return contention::sm_port_limit(bandwidth, held, gpu.sm_bandwidth);
}

// How a layer builder emits kernels: the runtime's fusions, training or not, dropout.
struct BuildOptions {
  LayerFusion fusion;
  bool training = false;
  bool dropout = false;  // the model trains with dropout (the entry's `dropout: 1`)
  // Activation (gradient) checkpointing per transformer layer in training (HF
  // `gradient_checkpointing=True`, torch.utils.checkpoint): see LayerBuilder::begin_checkpoint.
  bool checkpointing = false;
};

// Builds the layer list of one request. `dt` = bytes per element.
class LayerBuilder {
 public:
  LayerBuilder(double dt, const BuildOptions& options) : dt_(dt), options_(options) {}

  const BuildOptions& options() const { return options_; }
  const LayerFusion& fusion() const { return options_.fusion; }
  bool training() const { return options_.training; }
  double dt() const { return dt_; }

  // out[M x N] = A[M x K] B[K x N], count times. a/b/c: elements of each operand as stored
  // (a convolution's A is its input feature map, not the im2col matrix). `weights`: B is a
  // parameter tensor (counted in params, gets a weight gradient); `input_grad`: A needs a
  // gradient in training (false for the first layer).
  void gemm(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
            std::int64_t count, double a, double b, double c, bool weights, bool input_grad = true,
            double host_ops = 1) {
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
    w.a_bytes = a * dt_;
    w.b_bytes = b * dt_;
    chain(w, (a + (weights ? 0.0 : b)) * dt_);
    w.element_bytes = dt_;
    w.host_ops = host_ops;
    push(w, input_grad, weights);
    if (weights) params_ += static_cast<std::int64_t>(b);
    output(c);
  }

  // A fused attention kernel (FlashAttention-2 / fused MHA): count = batch x heads products of
  // lq query rows against lk key rows of head dimension d.
  void fused_attention(const std::string& name, std::int64_t count, std::int64_t lq,
                       std::int64_t lk, std::int64_t d, bool causal, double host_ops = 1) {
    LayerWork w;
    w.kind = LayerWork::Kind::attention;
    w.name = name;
    w.count = count;
    w.m = lq;
    w.n = lk;
    w.k = d;
    w.causal = causal;
    const double c = static_cast<double>(count);
    w.flops = 4.0 * c * static_cast<double>(lq) * static_cast<double>(lk) * static_cast<double>(d) *
              (causal ? 0.5 : 1.0);
    w.bytes = c * static_cast<double>(2 * lq * d + 2 * lk * d) * dt_;
    chain(w, c * static_cast<double>(lq * d + 2 * lk * d) * dt_);
    w.element_bytes = dt_;
    w.host_ops = host_ops;
    push(w, true, false);
    output(c * static_cast<double>(lq * d));
  }

  // An elementwise / normalisation / pooling kernel over `elements`, reading `reads` and writing
  // `writes` tensors of that size, `flops` operations per element. `params`: its parameters
  // (norm scale and shift). `backward`: it has a backward kernel in training.
  void elementwise(const std::string& name, double elements, double reads, double writes,
                   double flops, std::int64_t params = 0, bool backward = true,
                   double out_elements = -1, double host_ops = 1, double backward_passes = 1) {
    elementwise_sized(name, elements, reads, writes, flops, params, backward, out_elements,
                      host_ops, backward_passes, dt_);
  }

  // An operator PyTorch's autocast runs in fp32 (softmax, log_softmax, layer_norm: the CUDA
  // autocast op reference's "ops that can autocast to float32") when the runtime autocasts a
  // half-precision request: a cast of its inputs to fp32 (read half, write fp32), the operator
  // on fp32 tensors, and a cast of its output back for the next GEMM (read fp32, write half);
  // each cast is an operator of its own. Otherwise the plain elementwise kernel.
  void fp32_op(const std::string& name, double elements, double reads, double writes, double flops,
               std::int64_t params = 0, double out_elements = -1, double host_ops = 1,
               double backward_passes = 1) {
    if (!fusion().autocast_fp32_ops) {
      elementwise(name, elements, reads, writes, flops, params, true, out_elements, host_ops,
                  backward_passes);
      return;
    }
    const double out = out_elements >= 0 ? out_elements : elements * writes;
    // Saved for backward: one fp32 tensor (layer norm's input, softmax's output) and the half
    // copy the next GEMM reads; the cast-in's output is counted as the operator's.
    const double saved = saved_;
    elementwise_sized(name + ".to_fp32", elements, 1, 1, 0, 0, true, -1, 1, 0, -1);
    saved_ = saved;
    elementwise_sized(name, elements, reads, writes, flops, params, true, out_elements, host_ops,
                      backward_passes, 4);
    elementwise_sized(name + ".to_half", out, 1, 1, 0, 0, true, -1, 1, 0, -2);
  }

  // elementwise() at `size` bytes per element (-1: a cast half -> fp32, reading dt and
  // writing 4 bytes; -2: fp32 -> half).
  void elementwise_sized(const std::string& name, double elements, double reads, double writes,
                         double flops, std::int64_t params, bool backward, double out_elements,
                         double host_ops, double backward_passes, double size) {
    LayerWork w;
    w.backward_passes = backward_passes;
    w.kind = LayerWork::Kind::elementwise;
    w.name = name;
    w.elements = static_cast<std::int64_t>(elements);
    w.flops = elements * flops;
    const double read_size = size == -1 ? dt_ : size == -2 ? 4 : size;
    const double write_size = size == -1 ? 4 : size == -2 ? dt_ : size;
    w.bytes = elements * (reads * read_size + writes * write_size);
    if (out_elements >= 0)
      w.bytes = elements * reads * read_size + out_elements * writes * write_size;
    w.element_bytes = std::max(read_size, write_size);
    chain(w, elements * reads * read_size);
    w.host_ops = host_ops;
    forward_.push_back(w);
    if (backward) backward_.push_back({w, true, false});
    params_ += params;
    output((out_elements >= 0 ? out_elements : elements * writes) * write_size / dt_);
  }

  // Dropout in training (nn.Dropout: reads the tensor, writes it and a 1-byte mask); nothing
  // at inference or when the model trains without it.
  void dropout(const std::string& name, double elements) {
    if (!options_.training || !options_.dropout) return;
    elementwise(name, elements, 1, 1 + 1.0 / dt_, 2);
  }

  // The activation after a GEMM (GELU, ReLU): its own kernel unless the runtime fuses it into
  // the GEMM's epilogue.
  void activation(const std::string& name, double elements, double flops) {
    if (!fusion().fused_activation) {
      elementwise(name, elements, 1, 1, flops);
    } else if (!forward_.empty() && forward_.back().kind == LayerWork::Kind::gemm) {
      forward_.back().epilogue_flops += flops;  // computed in the GEMM's epilogue
    }
  }

  // A tensor that feeds two consumers (a residual connection's input): in training autograd sums
  // its two gradients, one add kernel (reads 2, writes 1) after both branches' backward.
  void gradient_fork(const std::string& name, double elements) {
    if (!options_.training) return;
    LayerWork w;
    w.kind = LayerWork::Kind::elementwise;
    w.name = name + ".grad_accumulate";
    w.elements = static_cast<std::int64_t>(elements);
    w.flops = elements;
    w.bytes = elements * 3 * dt_;
    w.element_bytes = dt_;
    w.host_ops = 1;
    Backward marker{w, false, false};
    marker.accumulate = true;
    backward_.push_back(marker);
  }

  // x + sublayer(x) then a norm: one skip-norm kernel, or an add and a norm.
  void residual_norm(const std::string& name, double elements, std::int64_t norm_params) {
    if (fusion().fused_residual_norm) {
      elementwise(name, elements, 2, 1, 10, norm_params, true, -1, 1, 2);
    } else {
      elementwise(name + ".add", elements, 2, 1, 1, 0, false);  // identity gradient
      fp32_op(name + ".norm", elements, 1, 1, 8, norm_params, -1, 1, 3);
    }
  }

  void add_params(std::int64_t n) { params_ += n; }

  // Activation checkpointing of one layer (torch.utils.checkpoint, as HF's
  // gradient_checkpointing wraps each encoder / decoder layer): the forward between
  // begin_checkpoint() and end_checkpoint() keeps only the layer's input (`input_elements`, the
  // hidden states entering it); the backward recomputes the layer's forward, then runs its
  // backward. So a checkpointed layer costs one forward more per step, and its saved
  // activations are held for one layer at a time (the one being recomputed), not for all.
  // Without `checkpointing` (or at inference) both calls do nothing.
  void begin_checkpoint() {
    if (!options_.training || !options_.checkpointing) return;
    open_ = Segment{forward_.size(), 0, backward_.size(), 0, saved_};
  }
  void end_checkpoint(double input_elements) {
    if (!options_.training || !options_.checkpointing) return;
    Segment s = open_;
    s.forward_end = forward_.size();
    s.backward_end = backward_.size();
    largest_segment_ = std::max(largest_segment_, saved_ - s.saved_before);
    saved_ = s.saved_before + input_elements;
    segments_.push_back(s);
  }

  CatalogLayers finish(const std::string& optimizer, const KernelFamilies& families) {
    CatalogLayers out;
    out.layers = forward_;
    if (options_.training) {
      // Checkpointed layers: before the first backward entry of a layer (in reverse order, its
      // last), its forward runs again.
      std::vector<const Segment*> recompute_at(backward_.size(), nullptr);
      for (const Segment& seg : segments_) {
        if (seg.backward_end > seg.backward_begin) recompute_at[seg.backward_end - 1] = &seg;
      }
      for (auto it = backward_.rbegin(); it != backward_.rend(); ++it) {
        const std::size_t index = static_cast<std::size_t>(backward_.rend() - it) - 1;
        if (const Segment* seg = recompute_at[index]) {
          for (std::size_t i = seg->forward_begin; i < seg->forward_end; ++i) {
            LayerWork r = forward_[i];
            r.name += ".recompute";
            if (i == seg->forward_begin) r.l2_input_bytes = 0;  // after a backward kernel
            out.layers.push_back(r);
          }
        }
        // The backward's inputs (saved activations, gradients) are read as HBM bytes.
        LayerWork f = it->forward;
        f.l2_input_bytes = 0;
        if (it->accumulate) {
          out.layers.push_back(f);
        } else if (f.kind == LayerWork::Kind::gemm) {
          // dA = dC B^T (M x K, inner N); dB = A^T dC (K x N, inner M): the same FLOPs, and
          // each reads two of the three operands and writes the third. One autograd node
          // dispatches both.
          // Their operands: dA reads dC (M x N, stored as C) and B; dB reads A and dC.
          const double c_bytes = std::max(0.0, f.bytes - f.a_bytes - f.b_bytes);
          if (it->input_grad) {
            LayerWork d = f;
            d.name = f.name + ".dgrad";
            d.n = f.k;
            d.k = f.n;
            d.host_ops = 1;
            d.a_bytes = c_bytes;
            d.working_set = d.a_bytes + d.b_bytes;
            out.layers.push_back(d);
          }
          LayerWork g = f;
          g.name = f.name + (it->weights ? ".wgrad" : ".dgrad2");
          g.m = f.k;
          g.n = f.n;
          g.k = f.m;
          g.host_ops = it->input_grad ? 0 : 1;
          g.b_bytes = c_bytes;
          g.working_set = g.a_bytes + g.b_bytes;
          out.layers.push_back(g);
        } else if (f.kind == LayerWork::Kind::attention) {
          // FlashAttention-2 backward: Q, K, V, O, dO read, dQ, dK, dV written.
          LayerWork b = f;
          b.name = f.name + ".backward";
          b.backward = true;
          b.flops = f.flops * families.attention_backward_flops.value;
          const double c = static_cast<double>(f.count);
          b.bytes = c * static_cast<double>(4 * f.m * f.k + 4 * f.n * f.k) * dt_;
          b.host_ops = 1;
          out.layers.push_back(b);
        } else {
          // The forward's passes plus the saved input read again (a norm's two kernels, the
          // statistics and the input gradient, read the input and the gradient twice).
          LayerWork b = f;
          b.name = f.name + ".backward";
          b.bytes = f.bytes + f.backward_passes * static_cast<double>(f.elements) * f.element_bytes;
          b.epilogue_flops = 0;
          b.host_ops = 1;
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
      opt.element_bytes = 4;
      out.layers.push_back(opt);
    }
    out.params = params_;
    out.weight_bytes = static_cast<std::int64_t>(static_cast<double>(params_) * dt_);
    out.activation_peak = static_cast<std::int64_t>((largest_[0] + largest_[1]) * dt_);
    // Checkpointing: the layers' inputs, the rest of the model, and one layer's activations
    // while it is recomputed.
    out.activation_saved = static_cast<std::int64_t>((saved_ + largest_segment_) * dt_);
    return out;
  }

  // Moves the layers emitted since `mark` out of the request (an encoder-decoder's decode
  // step): they are neither saved activations nor trained.
  std::vector<LayerWork> take_since(std::size_t mark) {
    std::vector<LayerWork> out(forward_.begin() + static_cast<std::ptrdiff_t>(mark),
                               forward_.end());
    forward_.resize(mark);
    return out;
  }
  std::size_t mark() const { return forward_.size(); }

 private:
  // A checkpointed layer: its forward_ and backward_ entries, and saved_ before it.
  struct Segment {
    std::size_t forward_begin = 0, forward_end = 0, backward_begin = 0, backward_end = 0;
    double saved_before = 0;
  };
  struct Backward {
    LayerWork forward;
    bool input_grad = true;
    bool weights = false;
    bool accumulate = false;  ///< a gradient accumulation (gradient_fork), emitted as it is
  };

  void push(const LayerWork& w, bool input_grad, bool weights) {
    forward_.push_back(w);
    backward_.push_back({w, input_grad, weights});
  }

  void output(double elements) {
    last_output_bytes_ = elements * dt_;
    saved_ += elements;
    if (elements > largest_[0]) {
      largest_[1] = largest_[0];
      largest_[0] = elements;
    } else if (elements > largest_[1]) {
      largest_[1] = elements;
    }
  }

  // Sets the part of w's activation inputs (`input_bytes`) that the kernel before it wrote (its
  // output, the last output() call: at most that), then w becomes "the kernel before" for the
  // next one (its traffic; its output is set by output()).
  void chain(LayerWork& w, double input_bytes) {
    w.l2_input_bytes = std::max(0.0, std::min(last_output_bytes_, input_bytes));
    w.l2_input_producer_bytes = w.l2_input_bytes > 0 ? last_kernel_bytes_ : 0;
    last_kernel_bytes_ = w.bytes;
  }

  double dt_;
  BuildOptions options_;
  double last_output_bytes_ = 0;  // what the last kernel pushed wrote (0: none yet)
  double last_kernel_bytes_ = 0;  // the bytes it moved in all
  std::vector<LayerWork> forward_;
  std::vector<Backward> backward_;
  std::int64_t params_ = 0;
  double saved_ = 0;
  double largest_[2] = {0, 0};
  Segment open_;
  std::vector<Segment> segments_;
  double largest_segment_ = 0;  // elements one checkpointed layer saves while recomputed
};

// Attention of `count` = batch x heads products, lq query rows against lk keys, head dim d.
// Fused: one kernel. Unfused (PyTorch eager): scores GEMM, scale, mask, softmax, dropout
// (training), context GEMM, and the permute back to (tokens, hidden) (a copy kernel).
// `host_views`: the view/permute operators eager code runs around it (no kernels).
void attention(LayerBuilder& b, const std::string& prefix, std::int64_t batch, std::int64_t heads,
               std::int64_t lq, std::int64_t lk, std::int64_t d, bool causal, double host_views) {
  const std::int64_t count = batch * heads;
  const double bh = static_cast<double>(count);
  if (b.fusion().fused_attention) {
    b.fused_attention(prefix + "attention", count, lq, lk, d, causal, 1 + host_views);
    return;
  }
  const double scores = bh * static_cast<double>(lq * lk);
  const double q = bh * static_cast<double>(lq * d);
  const double kv = bh * static_cast<double>(lk * d);
  b.gemm(prefix + "attention_scores", lq, lk, d, count, q, kv, scores, false, true, 1 + host_views);
  b.elementwise(prefix + "attention_scale", scores, 1, 1, 1, 0, true);
  b.elementwise(prefix + "attention_mask", scores, 1, 1, 1, 0, true);
  b.fp32_op(prefix + "softmax", scores, 1, 1, 5);
  b.dropout(prefix + "attention_dropout", scores);
  b.gemm(prefix + "attention_context", lq, d, lk, count, scores, kv, q, false);
  // permute + contiguous + view: one copy kernel, three operators.
  b.elementwise(prefix + "attention_merge_heads", q, 1, 1, 0, 0, true, -1, 3);
}

// The attention block, the residual and the norm of one transformer sublayer; `pre_ln`: the
// norm comes first (GPT-2, ViT, Whisper), else after the residual add (BERT).
void attention_sublayer(LayerBuilder& b, const std::string& prefix, std::int64_t batch,
                        std::int64_t lq, std::int64_t lk, std::int64_t h, std::int64_t heads,
                        bool causal, bool pre_ln, bool cross, std::int64_t kv_tokens_projected) {
  const std::int64_t t = batch * lq;
  const double tokens = static_cast<double>(t);
  const double th = tokens * static_cast<double>(h);
  const double hd = static_cast<double>(h);
  b.gradient_fork(prefix + "input1", th);
  if (pre_ln) b.fp32_op(prefix + "norm1", th, 1, 1, 8, 2 * h, -1, 1, 3);
  if (cross) {
    // Cross-attention: Q from the decoder, K and V projected from the encoder's output
    // (kv_tokens_projected rows; 0 when a decode step reuses the cached projections).
    b.gemm(prefix + "q", t, h, h, 1, th, hd * hd, th, true, true, 3);
    b.add_params(h);
    if (kv_tokens_projected > 0) {
      const double kt = static_cast<double>(kv_tokens_projected);
      b.gemm(prefix + "kv", kv_tokens_projected, 2 * h, h, 1, kt * hd, 2 * hd * hd, 2 * kt * hd,
             true, true, 6);
    } else {
      b.add_params(2 * h * h);
    }
    b.add_params(2 * h);
  } else {
    // The QKV projection (three nn.Linear in HF code, one fused GEMM here: the same FLOPs) and
    // the view/permute of Q, K and V.
    b.gemm(prefix + "qkv", t, 3 * h, h, 1, th, hd * 3 * hd, 3 * th, true, true, 9);
    b.add_params(3 * h);
  }
  attention(b, prefix, batch, heads, lq, lk, h / heads, causal, 1);
  b.gemm(prefix + "attention_out", t, h, h, 1, th, hd * hd, th, true);
  b.add_params(h);
  b.dropout(prefix + "attention_out_dropout", th);
  if (pre_ln) {
    b.elementwise(prefix + "residual1", th, 2, 1, 1, 0, false);  // identity gradient
  } else {
    b.residual_norm(prefix + "add_layernorm1", th, 2 * h);
  }
}

// The feed-forward sublayer: two GEMMs around the activation, dropout, residual (+ norm).
void ffn_sublayer(LayerBuilder& b, const std::string& prefix, std::int64_t t, std::int64_t h,
                  std::int64_t ffn, bool pre_ln, const std::string& norm_name) {
  const double tokens = static_cast<double>(t);
  const double th = tokens * static_cast<double>(h);
  const double hd = static_cast<double>(h);
  const double tf = tokens * static_cast<double>(ffn);
  b.gradient_fork(prefix + "input2", th);
  if (pre_ln) b.fp32_op(prefix + norm_name, th, 1, 1, 8, 2 * h, -1, 1, 3);
  b.gemm(prefix + "ffn1", t, ffn, h, 1, th, hd * static_cast<double>(ffn), tf, true);
  b.activation(prefix + "gelu", tf, 8);
  b.gemm(prefix + "ffn2", t, h, ffn, 1, tf, hd * static_cast<double>(ffn), th, true);
  b.add_params(ffn + h);
  b.dropout(prefix + "ffn_dropout", th);
  if (pre_ln) {
    b.elementwise(prefix + "residual2", th, 2, 1, 1, 0, false);  // identity gradient
  } else {
    b.residual_norm(prefix + "add_layernorm2", th, 2 * h);
  }
}

// One transformer layer (Vaswani et al. 2017 as used by BERT, ViT and GPT-2): QKV projection,
// attention, output projection, residual + norm, FFN; pre-LN for GPT-2 / ViT.
void transformer_layer(LayerBuilder& b, std::int64_t batch, std::int64_t seq, std::int64_t h,
                       std::int64_t heads, std::int64_t ffn, bool causal, bool pre_ln) {
  b.begin_checkpoint();
  attention_sublayer(b, "layer.", batch, seq, seq, h, heads, causal, pre_ln, false, 0);
  ffn_sublayer(b, "layer.", batch * seq, h, ffn, pre_ln, "norm2");
  b.end_checkpoint(static_cast<double>(batch * seq) * static_cast<double>(h));
}

// A convolution / linear layer followed by batch norm (+ ReLU). Inference: BN folded into the
// convolution by TensorRT / ONNX Runtime, else a BN and a ReLU kernel (PyTorch eager).
// Training: BN (statistics and normalise: reads the map twice, writes it once), then ReLU; a
// fused runtime would do both in one pass, PyTorch eager in two kernels.
void batchnorm_relu(LayerBuilder& b, const std::string& name, double elements,
                    std::int64_t channels, bool relu) {
  const bool separate = !b.fusion().folded_batchnorm;
  if (b.training()) {
    if (separate) {
      b.elementwise(name + ".bn", elements, 2, 1, 6, 2 * channels, true, -1, 1, 2);
      if (relu) b.elementwise(name + ".relu", elements, 1, 1, 1);
    } else {
      b.elementwise(name + ".bn_relu", elements, 2, 1, 8, 2 * channels, true, -1, 1, 2);
    }
  } else if (separate) {
    b.elementwise(name + ".bn", elements, 1, 1, 2, 2 * channels);
    if (relu) b.elementwise(name + ".relu", elements, 1, 1, 1);
  } else {
    b.add_params(2 * channels);  // the folded BN's scale and shift
  }
}

// He et al. 2016 Table 1 (50-layer), v1.5: stride in the 3x3; BN folded into the convolution's
// epilogue at inference by TensorRT / ONNX Runtime; a BN (+ ReLU) kernel otherwise.
void resnet_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch) {
  const std::int64_t image = e.dim("image_size");
  const std::int64_t stem = e.dim("stem_width");
  const std::int64_t expansion = e.dim("expansion");
  const std::int64_t classes = e.dim("classes");
  const std::vector<std::int64_t>& blocks = e.dims.at("stage_blocks");
  const double n = static_cast<double>(batch);
  const bool separate = !b.fusion().folded_batchnorm;
  // conv k x k / stride on an H x H x c_in map -> ceil(H / stride) x ... x c_out.
  const auto conv = [&](const std::string& name, std::int64_t h_in, std::int64_t c_in,
                        std::int64_t c_out, std::int64_t k, std::int64_t stride, bool first,
                        bool relu) {
    const std::int64_t h_out = ceil_div(h_in, stride);
    const std::int64_t m = batch * h_out * h_out;
    const double in = n * static_cast<double>(h_in * h_in * c_in);
    const double out = static_cast<double>(m * c_out);
    // NCHW under an eager runtime: cuDNN transposes the input to NHWC and the output back
    // (launched inside the convolution's operator: no host operator of their own); their
    // backward is the transposed gradient (2 passes, as the forward).
    const bool transposes = b.fusion().nchw_transposes;
    if (transposes) b.elementwise(name + ".to_nhwc", in, 1, 1, 0, 0, true, -1, 0, 0);
    b.gemm(name, m, c_out, c_in * k * k, 1, in, static_cast<double>(c_in * k * k * c_out), out,
           true, !first);
    if (transposes) b.elementwise(name + ".to_nchw", out, 1, 1, 0, 0, true, -1, 0, 0);
    batchnorm_relu(b, name, out, c_out, relu);
    return h_out;
  };
  std::int64_t h = conv("conv1", image, 3, stem, 7, 2, true, true);
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
      // The block's input feeds conv1 and the shortcut (identity or downsample).
      b.gradient_fork(name + ".input", n * static_cast<double>(h * h * c_in));
      conv(name + ".conv1", h, c_in, width, 1, 1, false, true);
      const std::int64_t h_out = conv(name + ".conv2", h, width, width, 3, stride, false, true);
      conv(name + ".conv3", h_out, width, c_out, 1, 1, false, false);
      if (j == 0) conv(name + ".downsample", h, c_in, c_out, 1, stride, false, false);
      const double map = n * static_cast<double>(h_out * h_out * c_out);
      // x + shortcut, then ReLU (eager: two operators, `out += identity; out = relu(out)`).
      // The add's gradient is the identity to both inputs (no backward kernel); ReLU's backward
      // reads the gradient and its output and writes the input gradient (3 passes).
      if (separate) {
        b.elementwise(name + ".add", map, 2, 1, 1, 0, false);
        b.elementwise(name + ".relu", map, 1, 1, 1);
      } else {
        b.elementwise(name + ".add_relu", map, 2, 1, 2, 0, true, -1, 1, 0);
      }
      h = h_out;
      c_in = c_out;
    }
  }
  b.elementwise("avgpool", n * static_cast<double>(h * h * c_in), 1, 1, 1, 0, true,
                n * static_cast<double>(c_in), 2);
  b.gemm("fc", batch, classes, c_in, 1, n * static_cast<double>(c_in),
         static_cast<double>(c_in * classes), n * static_cast<double>(classes), true);
  b.add_params(classes);  // fc bias
  if (b.training()) {
    b.fp32_op("loss.softmax_xent", n * static_cast<double>(classes), 1, 1, 5);
  }
}

// BERT (Devlin et al. 2019), sentence encoders (mean pooling) and ViT (Dosovitskiy et al. 2021).
void encoder_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch, std::int64_t seq) {
  const std::int64_t h = e.dim("hidden");
  const std::int64_t vocab = e.dim("vocab");
  const double n = static_cast<double>(batch);
  const double th = n * static_cast<double>(seq * h);
  const bool vit = e.dim("patch") > 0;
  if (vit) {
    // Patch embedding: a patch x patch / patch convolution = GEMM (B x patches) x h x (3 p^2).
    const std::int64_t p = e.dim("patch");
    const std::int64_t image = e.dim("image_size");
    const std::int64_t patches = (image / p) * (image / p);
    b.gemm("patch_embedding", batch * patches, h, 3 * p * p, 1,
           n * static_cast<double>(3 * image * image), static_cast<double>(3 * p * p * h),
           n * static_cast<double>(patches * h), true, false);
    b.add_params(h + (patches + 1) * h + h);  // bias, position embeddings, class token
    b.elementwise("embedding.add_position", th, 2, 1, 1, 0, true, -1, 3);
  } else {
    // Word + position + type embedding gather, sum and layer norm.
    b.fp32_op("embedding.gather_layernorm", th, 3, 1, 12, 2 * h, -1, 6, 3);
    b.add_params((vocab + e.dim("max_positions") + 2) * h);
  }
  for (std::int64_t l = 0; l < e.dim("layers"); ++l) {
    transformer_layer(b, batch, seq, h, e.dim("heads"), e.dim("ffn"), false, vit);
  }
  if (vit) {
    b.fp32_op("final_layernorm", th, 1, 1, 8, 2 * h, -1, 1, 3);
    const std::int64_t classes = e.dim("classes");
    b.gemm("head", batch, classes, h, 1, n * static_cast<double>(h),
           static_cast<double>(h * classes), n * static_cast<double>(classes), true);
    b.add_params(classes);
  } else if (e.dim("pooling") > 0) {
    b.elementwise("mean_pooling", th, 1, 1, 1, 0, true, n * static_cast<double>(h), 3);
  } else if (b.training()) {
    // Masked-LM head on the 15 % masked positions (Devlin et al. 2019, section 3.1), decoder
    // tied to the word embedding.
    const std::int64_t masked = std::max<std::int64_t>(1, (batch * seq * 15 + 50) / 100);
    const double mh = static_cast<double>(masked * h);
    b.gemm("mlm.transform", masked, h, h, 1, mh, static_cast<double>(h * h), mh, true, true, 2);
    b.activation("mlm.gelu", mh, 8);
    b.fp32_op("mlm.layernorm", mh, 1, 1, 8, 2 * h, -1, 1, 3);
    const double mv = static_cast<double>(masked * vocab);
    b.gemm("mlm.decoder", masked, vocab, h, 1, mh, static_cast<double>(h * vocab), mv, false);
    b.fp32_op("loss.softmax_xent", mv, 1, 1, 5, 0, -1, 3);
  } else {
    b.gemm("pooler", batch, h, h, 1, n * static_cast<double>(h), static_cast<double>(h * h),
           n * static_cast<double>(h), true, true, 2);
    b.activation("pooler.tanh", n * static_cast<double>(h), 8);
  }
}

// GPT-2 (Radford et al. 2019): token + position embedding, pre-LN layers with causal attention,
// final layer norm, LM head tied to the token embedding, cross-entropy.
void decoder_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch, std::int64_t seq) {
  const std::int64_t h = e.dim("hidden");
  const std::int64_t vocab = e.dim("vocab");
  const double th = static_cast<double>(batch * seq * h);
  b.elementwise("embedding.gather", th, 2, 1, 1, 0, true, -1, 4);
  b.add_params((vocab + e.dim("max_positions")) * h);
  b.dropout("embedding.dropout", th);
  for (std::int64_t l = 0; l < e.dim("layers"); ++l) {
    transformer_layer(b, batch, seq, h, e.dim("heads"), e.dim("ffn"), true, true);
  }
  b.fp32_op("final_layernorm", th, 1, 1, 8, 2 * h, -1, 1, 3);
  const double tv = static_cast<double>(batch * seq * vocab);
  b.gemm("lm_head", batch * seq, vocab, h, 1, th, static_cast<double>(h * vocab), tv, false);
  if (b.training()) b.fp32_op("loss.softmax_xent", tv, 1, 1, 5, 0, -1, 3);
}

// PointNet classification (Qi, Su, Mo and Guibas, CVPR 2017, figure 2; the fxia22/pointnet.pytorch
// PointNetCls the Tally benchmark trains): per-point shared MLPs are 1x1 convolutions, i.e.
// GEMMs over batch x points rows; each is followed by batch norm and ReLU. Input transform
// (T-Net 3x3), conv 3 -> 64, feature transform (T-Net 64x64), conv 64 -> 128 -> 1024, max pool
// over the points, FC 1024 -> 512 -> 256 -> classes.
void pointnet_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch) {
  const std::int64_t points = e.dim("points");
  const std::int64_t classes = e.dim("classes");
  const std::int64_t rows = batch * points;
  const double n = static_cast<double>(batch);
  const auto conv = [&](const std::string& name, std::int64_t c_in, std::int64_t c_out, bool relu,
                        bool first = false) {
    const double r = static_cast<double>(rows);
    b.gemm(name, rows, c_out, c_in, 1, r * static_cast<double>(c_in),
           static_cast<double>(c_in * c_out), r * static_cast<double>(c_out), true, !first);
    b.add_params(c_out);  // conv bias
    batchnorm_relu(b, name, r * static_cast<double>(c_out), c_out, relu);
  };
  const auto fc = [&](const std::string& name, std::int64_t c_in, std::int64_t c_out, bool bn) {
    b.gemm(name, batch, c_out, c_in, 1, n * static_cast<double>(c_in),
           static_cast<double>(c_in * c_out), n * static_cast<double>(c_out), true);
    b.add_params(c_out);
    if (bn) batchnorm_relu(b, name, n * static_cast<double>(c_out), c_out, true);
  };
  const auto max_pool = [&](const std::string& name, std::int64_t channels) {
    b.elementwise(name, static_cast<double>(rows * channels), 1, 1, 1, 0, true,
                  n * static_cast<double>(channels), 2);
  };
  // T-Net of k x k: conv k -> 64 -> 128 -> 1024, max, FC 1024 -> 512 -> 256 -> k^2, + identity,
  // then the batched transform of the points (batch products points x k x k).
  const auto tnet = [&](const std::string& name, std::int64_t k, bool first) {
    conv(name + ".conv1", k, 64, true, first);
    conv(name + ".conv2", 64, 128, true);
    conv(name + ".conv3", 128, 1024, true);
    max_pool(name + ".max", 1024);
    fc(name + ".fc1", 1024, 512, true);
    fc(name + ".fc2", 512, 256, true);
    fc(name + ".fc3", 256, k * k, false);
    b.elementwise(name + ".add_identity", n * static_cast<double>(k * k), 1, 1, 1, 0, true, -1, 3);
    const double pk = static_cast<double>(points * k);
    b.gemm(name + ".transform", points, k, k, batch, n * pk, n * static_cast<double>(k * k), n * pk,
           false, true, 2);
  };
  tnet("input_tnet", 3, true);
  conv("conv1", 3, 64, true);
  if (e.dim("feature_transform") > 0) tnet("feature_tnet", 64, false);
  conv("conv2", 64, 128, true);
  conv("conv3", 128, 1024, false);
  max_pool("max_pool", 1024);
  fc("fc1", 1024, 512, true);
  b.dropout("fc2.dropout", n * 256);
  fc("fc2", 512, 256, true);
  fc("fc3", 256, classes, false);
  if (b.training()) {
    b.elementwise("loss.log_softmax_nll", n * static_cast<double>(classes), 1, 1, 5, 0, true, -1,
                  3);
    if (e.dim("feature_transform") > 0) {
      // ||I - A A^T||: a batched 64 x 64 x 64 product and a norm (feature_transform_regularizer).
      b.gemm("feature_regularizer", 64, 64, 64, batch, n * 4096, n * 4096, n * 4096, false, true,
             4);
    }
  }
}

// Whisper (Radford et al., Robust Speech Recognition via Large-Scale Weak Supervision, ICML
// 2023, section 2.2 and table 1): log-Mel frames -> two 1-D convolutions (k 3, the second
// stride 2) with GELU -> pre-LN transformer encoder over frames / 2 positions; a pre-LN decoder
// over the text tokens with causal self-attention, cross-attention to the encoder output and an
// FFN; LM head tied to the token embedding. Training: `seq_len` label tokens per sample;
// inference: the encoder once, the cross-attention K/V once per layer, then one decoder pass
// per generated token (`decode_step`, seq_len times; self-attention over the tokens so far,
// their mean taken: seq_len / 2).
void whisper_layers(LayerBuilder& b, const CatalogEntry& e, std::int64_t batch, std::int64_t seq,
                    std::vector<LayerWork>* decode_step) {
  const std::int64_t h = e.dim("hidden");
  const std::int64_t heads = e.dim("heads");
  const std::int64_t ffn = e.dim("ffn");
  const std::int64_t mels = e.dim("mel_bins");
  const std::int64_t frames = e.dim("audio_frames");
  const std::int64_t positions = frames / 2;
  const std::int64_t vocab = e.dim("vocab");
  const double n = static_cast<double>(batch);
  const double hd = static_cast<double>(h);
  // conv1: k 3, mels -> h over every frame; conv2: k 3, h -> h, stride 2.
  const double f1 = n * static_cast<double>(frames);
  b.gemm("encoder.conv1", batch * frames, h, mels * 3, 1, f1 * static_cast<double>(mels),
         static_cast<double>(mels * 3 * h), f1 * hd, true, false);
  b.activation("encoder.conv1.gelu", f1 * hd, 8);
  const double f2 = n * static_cast<double>(positions);
  b.gemm("encoder.conv2", batch * positions, h, h * 3, 1, f1 * hd, static_cast<double>(h * 3 * h),
         f2 * hd, true);
  b.activation("encoder.conv2.gelu", f2 * hd, 8);
  b.add_params(2 * h + positions * h);  // conv biases, encoder position embeddings
  b.elementwise("encoder.add_position", f2 * hd, 2, 1, 1, 0, true, -1, 2);
  for (std::int64_t l = 0; l < e.dim("encoder_layers"); ++l) {
    b.begin_checkpoint();
    attention_sublayer(b, "encoder.layer.", batch, positions, positions, h, heads, false, true,
                       false, 0);
    ffn_sublayer(b, "encoder.layer.", batch * positions, h, ffn, true, "norm2");
    b.end_checkpoint(f2 * hd);
  }
  b.fp32_op("encoder.final_layernorm", f2 * hd, 1, 1, 8, 2 * h, -1, 1, 3);
  b.add_params(2 * h);
  b.add_params((vocab + e.dim("max_positions")) * h);  // token + position embeddings
  const std::int64_t dec_layers = e.dim("decoder_layers");
  const auto decoder_layer = [&](std::int64_t q_tokens, std::int64_t self_context,
                                 std::int64_t kv_projected) {
    attention_sublayer(b, "decoder.layer.", batch, q_tokens, self_context, h, heads, true, true,
                       false, 0);
    attention_sublayer(b, "decoder.layer.cross_", batch, q_tokens, positions, h, heads, false, true,
                       true, kv_projected);
    ffn_sublayer(b, "decoder.layer.", batch * q_tokens, h, ffn, true, "norm3");
  };
  const auto head = [&](std::int64_t q_tokens) {
    const double tq = n * static_cast<double>(q_tokens);
    b.fp32_op("decoder.final_layernorm", tq * hd, 1, 1, 8, 0, -1, 1, 3);
    b.gemm("decoder.lm_head", batch * q_tokens, vocab, h, 1, tq * hd,
           static_cast<double>(h * vocab), tq * static_cast<double>(vocab), false);
  };
  if (b.training() || decode_step == nullptr) {
    const double ts = n * static_cast<double>(seq);
    b.elementwise("decoder.embedding", ts * hd, 2, 1, 1, 0, true, -1, 4);
    for (std::int64_t l = 0; l < dec_layers; ++l) {
      b.begin_checkpoint();
      decoder_layer(seq, seq, batch * positions);
      b.end_checkpoint(ts * hd);  // (the encoder output it reads is saved once, above)
    }
    head(seq);
    b.add_params(2 * h);
    if (b.training()) {
      b.fp32_op("loss.softmax_xent", ts * static_cast<double>(vocab), 1, 1, 5, 0, -1, 3);
    }
    return;
  }
  // Inference: the cross-attention K/V of every layer once, then the decode step.
  const double kt = n * static_cast<double>(positions);
  for (std::int64_t l = 0; l < dec_layers; ++l) {
    // weights: false, the decode step below counts these parameters.
    b.gemm("decoder.layer.cross_kv", batch * positions, 2 * h, h, 1, kt * hd, 2 * hd * hd,
           2 * kt * hd, false, true, 6);
  }
  const std::size_t mark = b.mark();
  b.elementwise("decoder.embedding", n * hd, 2, 1, 1, 0, true, -1, 4);
  for (std::int64_t l = 0; l < dec_layers; ++l) {
    decoder_layer(1, std::max<std::int64_t>(1, seq / 2), 0);
  }
  head(1);
  *decode_step = b.take_since(mark);
}

// The busiest of `sms` SMs computes ceil(blocks / sms) of the blocks.
double busiest_share(std::int64_t blocks, int sms) {
  const double g = static_cast<double>(std::max<std::int64_t>(1, blocks));
  return static_cast<double>(sms) * static_cast<double>(ceil_div(blocks, sms)) / g;
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

// Latency floor (catalog_model.hpp): the critical path of the busiest SM. It runs `per_sm` blocks,
// at most `resident` at a time, in rounds; in a round of b blocks each waits for its first
// operands (`path.fill` + b `path.fill_per_block`: a latency, then the resident blocks' first
// tiles through the SM's share of L2), runs `path.iterations` main-loop iterations of which each
// takes the longer of its compute (`path.block_compute` seconds for one block alone on the SM, b
// blocks sharing it) and `path.iteration_latency` (a memory latency over the loads in flight),
// then stores (`path.epilogue` + b `path.epilogue_per_block`).
struct BlockPath {
  double iterations = 1;
  double block_compute = 0;
  double iteration_latency = 0;
  double fill = 0, fill_per_block = 0;
  double epilogue = 0, epilogue_per_block = 0;
};
double critical_path(std::int64_t per_sm, int resident, const BlockPath& path) {
  if (per_sm <= 0) return 0;
  const std::int64_t r = std::max<std::int64_t>(1, std::min<std::int64_t>(resident, per_sm));
  const double iterations = std::max(1.0, path.iterations);
  const auto round = [&](std::int64_t blocks) {
    const double b = static_cast<double>(blocks);
    const double per_iteration = b * path.block_compute / iterations;
    return path.fill + b * path.fill_per_block +
           iterations * std::max(per_iteration, path.iteration_latency) + path.epilogue +
           b * path.epilogue_per_block;
  };
  const std::int64_t full = per_sm / r;
  const std::int64_t rest = per_sm % r;
  return static_cast<double>(full) * round(r) + (rest > 0 ? round(rest) : 0.0);
}

// The profile's per-round block cost (block dispatch, prologue, the epilogue's barrier), s: paid
// once per round of resident blocks on the busiest SM, as part of the round's fill.
double block_round_seconds(const DeviceProfile& gpu) {
  return static_cast<double>(gpu.block_round_cost) * 1e-9;
}

// One SM's share of the L2 bandwidth (bytes/s): what a wave of blocks that all load or store at
// once gets each (the HBM's share on a profile without an L2 figure).
double sm_l2_bandwidth(const DeviceProfile& gpu) {
  const double l2 = gpu.l2_bandwidth > 0 ? gpu.l2_bandwidth : hbm_bandwidth(gpu);
  return l2 / gpu.sms;
}

// The floor of an elementwise kernel of `blocks` blocks (`resident` per SM) on `sms` SMs: per
// round of resident blocks one DRAM load, the per-block compute, one store into L2.
double elementwise_floor(std::int64_t blocks, int resident, int sms, double block_compute,
                         const MemoryLatency& latency, double round_cost) {
  BlockPath path;
  path.block_compute = block_compute;
  path.fill = latency.dram.value + round_cost;
  path.epilogue = latency.l2.value;
  return critical_path(ceil_div(std::max<std::int64_t>(1, blocks), sms), resident, path);
}

// The split-K reduction kernel of `split` fp32 partials of `outputs` elements written at
// `element_bytes` each: an elementwise kernel (blocks of kernel-families `elementwise`), its
// duration the longer of its HBM traffic and its floor, on `sms` SMs of `bandwidth`.
struct Reduction {
  std::int64_t blocks = 0;
  int blocks_per_sm = 0;
  double t_memory = 0, t_floor = 0;
  double duration() const { return std::max(t_memory, t_floor); }
};
Reduction split_k_reduction(double outputs, int split, double element_bytes,
                            const KernelFamilies& families, const DeviceProfile& gpu, int sms,
                            double bandwidth) {
  Reduction r;
  const auto per_block = static_cast<std::int64_t>(families.elementwise_threads.value *
                                                   families.elementwise_items.value);
  r.blocks = std::max<std::int64_t>(1, ceil_div(static_cast<std::int64_t>(outputs), per_block));
  r.blocks_per_sm = shape_blocks_per_sm(gpu.sm_limits, families.elementwise_threads.value,
                                        families.elementwise_registers.value, 0);
  r.t_memory =
      outputs * (4.0 * split + element_bytes) / grid_bandwidth(bandwidth, r.blocks, sms, gpu);
  r.t_floor = elementwise_floor(r.blocks, r.blocks_per_sm, sms, 0, families.latency(gpu.name),
                                block_round_seconds(gpu));
  return r;
}

}  // namespace

static GemmChoice time_gemm(const LayerWork& layer, const GemmTile& tile, int split,
                            const KernelFamilies& families, const DeviceProfile& gpu, double peak,
                            int library_sms) {
  const int sms = gpu.sms;
  const int lib = library_sms > 0 ? std::min(library_sms, sms) : sms;
  const double bandwidth = hbm_bandwidth(gpu) * static_cast<double>(lib) / sms;
  const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
  const MemoryLatency& latency = families.latency(gpu.name);
  // Operand bytes a block draws from L2 per FLOP: a tile of m x n outputs reads (m + n)
  // elements per k for 2 m n FLOPs; the SM's share of the L2 bandwidth must feed its share of
  // the peak.
  const double intensity = 2.0 * tile.m * tile.n / ((tile.m + tile.n) * dt);
  const double tile_eff =
      gpu.l2_bandwidth > 0 ? std::min(1.0, intensity * gpu.l2_bandwidth / peak) : 1.0;
  GemmChoice c;
  c.tile = tile;
  c.split = split;
  c.blocks = layer.count * ceil_div(layer.m, tile.m) * ceil_div(layer.n, tile.n) * split;
  c.blocks_per_sm = shape_blocks_per_sm(gpu.sm_limits, tile.threads, tile.registers,
                                        static_cast<double>(tile.shared_memory));
  const std::int64_t depth = ceil_div(layer.k, split);
  const double block_flops = 2.0 * tile.m * tile.n * static_cast<double>(depth);
  const double sm_rate = families.gemm_efficiency.value * tile_eff * peak / sms;
  const std::int64_t per_sm = ceil_div(c.blocks, lib);
  c.t_compute = static_cast<double>(per_sm) * block_flops / sm_rate;
  // The busiest SM's critical path: ceil(depth / k) iterations, each at least the DRAM latency
  // over the stages - 1 k-slices in flight; before them the first k-slice's load (a DRAM latency,
  // then (m + n) k elements through the SM's share of L2), after them the epilogue: the fused
  // activation on the CUDA cores and the tile's store (an L2 latency, then m n outputs, or fp32
  // partials under split-K, through the same share).
  c.iterations = static_cast<int>(ceil_div(depth, tile.k));
  const double l2_share = sm_l2_bandwidth(gpu);
  BlockPath path;
  path.iterations = c.iterations;
  path.block_compute = block_flops / sm_rate;
  path.iteration_latency = latency.dram.value / std::max(1, tile.stages - 1);
  path.fill = latency.dram.value + block_round_seconds(gpu);
  path.fill_per_block = static_cast<double>(tile.m + tile.n) * tile.k * dt / l2_share;
  path.epilogue = latency.l2.value;
  const double outputs_per_block = static_cast<double>(tile.m) * tile.n;
  path.epilogue_per_block = outputs_per_block * (split > 1 ? 4.0 : dt) / l2_share +
                            outputs_per_block * layer.epilogue_flops / (gpu.compute.fp32 / sms);
  c.t_latency = critical_path(per_sm, c.blocks_per_sm, path);
  // Split-K: each split writes its fp32 partial tile instead of the output; a reduction kernel
  // reads them back and writes the output (kernel-families `elementwise` blocks).
  const double outputs = static_cast<double>(layer.count) * static_cast<double>(layer.m) *
                         static_cast<double>(layer.n);
  const double partials = split > 1 ? outputs * (4.0 * split - dt) : 0.0;
  c.t_memory = (layer.bytes + partials) / grid_bandwidth(bandwidth, c.blocks, lib, gpu);
  if (split > 1) {
    const Reduction r = split_k_reduction(outputs, split, dt, families, gpu, lib, bandwidth);
    c.t_reduce = r.duration();
    c.reduce_blocks = r.blocks;
  }
  return c;
}

double GemmChoice::time(const DeviceProfile& gpu) const {
  const double gemm = std::max(t_latency, t_memory);
  // The reduction is a second kernel: its own launch (the stream rate: a library chooses
  // without knowing whether it is captured in a graph) and duration.
  return split > 1 ? gemm + static_cast<double>(gpu.modelled_launch(false)) * 1e-9 + t_reduce
                   : gemm;
}

double gemm_reread_bytes(const LayerWork& layer, const GemmTile& tile) {
  if (!(layer.a_bytes > 0) && !(layer.b_bytes > 0)) return layer.working_set;
  const std::int64_t row_tiles = ceil_div(layer.m, std::max<std::int64_t>(1, tile.m));
  const std::int64_t column_tiles = ceil_div(layer.n, std::max<std::int64_t>(1, tile.n));
  const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
  const double left_matrix = static_cast<double>(layer.count) * static_cast<double>(layer.m) *
                             static_cast<double>(layer.k) * dt;
  const bool left_reread = column_tiles > 1 || layer.a_bytes < left_matrix;
  return (left_reread ? layer.a_bytes : 0.0) + (row_tiles > 1 ? layer.b_bytes : 0.0);
}

DeviceProfile catalog_timing_profile(const std::string& contention_law, const DeviceProfile& gpu) {
  const ContentionLaw* law = contention_law_or_default(contention_law);
  DeviceProfile timed = gpu;
  if (law != nullptr && !law->per_sm_bandwidth()) timed.sm_bandwidth = 0;
  return timed;
}

GemmChoice choose_gemm(const LayerWork& layer, const KernelFamilies& families,
                       const DeviceProfile& gpu, double peak, int library_sms) {
  GemmChoice best;
  double best_time = -1;
  for (const GemmTile& tile : families.gemm_tiles) {
    for (const int split : families.gemm_split_k) {
      if (split > 1 &&
          static_cast<double>(layer.k) / split < families.gemm_split_k_min_depth.value) {
        break;
      }
      const GemmChoice c = time_gemm(layer, tile, split, families, gpu, peak, library_sms);
      const double t = c.time(gpu);
      // Strictly better by more than rounding: ties keep the earlier tile and smaller split.
      if (best_time < 0 || t < best_time * (1 - 1e-9)) {
        best_time = t;
        best = c;
      }
    }
  }
  if (best_time < 0) throw std::invalid_argument("kernel-families lists no GEMM tile");
  return best;
}

namespace {

// A roofline kernel: its SMs busy for t_busy and its HBM traffic taking t_memory, overlapped
// (contention law 2): memory_bound = t_memory / max and busy_share = t_busy / max, the larger 1.
KernelSpec fixed_kernel(const std::string& name, double seconds, double t_busy, double t_memory) {
  KernelSpec spec;
  spec.name = name;
  const double longer = std::max(t_busy, t_memory);
  spec.memory_bound = longer > 0 ? t_memory / longer : 0;
  spec.busy_share = longer > 0 ? t_busy / longer : 1;
  spec.duration.kind = DurationDistribution::Kind::fixed;
  spec.duration.value = std::max<Nanos>(1, std::llround(seconds * 1e9));
  return spec;
}

// The grid and the block footprint (contention law 1c: co-residency; law 2: whole waves). A grid
// beyond int or without an occupancy keeps only its shape (whole-SM residency, fluid waves).
void set_grid(KernelSpec& spec, std::int64_t blocks, int bps, int sms,
              const BlockFootprint& footprint) {
  const GridShape grid = grid_shape(blocks, bps, sms);
  spec.sm_fraction = grid.sm_fraction;
  spec.waves = grid.waves;
  if (bps > 0 && blocks <= 2'000'000'000) {
    spec.blocks = static_cast<int>(blocks);
    spec.blocks_per_sm = bps;
    spec.block = footprint;
  }
}

BlockFootprint footprint(double threads, double registers, double shared_memory) {
  return {static_cast<int>(threads), static_cast<int>(registers),
          static_cast<std::int64_t>(shared_memory)};
}

BlockFootprint elementwise_footprint(const KernelFamilies& families) {
  return footprint(families.elementwise_threads.value, families.elementwise_registers.value, 0);
}

}  // namespace

LayerKernels layer_kernels(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth,
                           int collective_gpus, int library_sms) {
  LayerKernels out;
  const int sms = gpu.sms;
  const double bandwidth = hbm_bandwidth(gpu);
  const MemoryLatency& latency = families.latency(gpu.name);
  std::int64_t blocks = 1;
  int bps = 0;
  BlockFootprint block;  // what one block holds of an SM (0 = unknown: whole-SM residency)
  double t_compute = 0;
  double t_latency = 0;  // the busiest SM's critical path (>= t_compute where computed)
  double t_memory = 0;   // the HBM traffic's time, on the grid's SMs (set below)
  double fixed = 0;      // seconds outside the roofline (a collective's latency)
  std::string what;
  switch (layer.kind) {
    case LayerWork::Kind::gemm: {
      if (!(peak > 0)) throw std::invalid_argument("no tensor throughput");
      // Chosen for the device the library runs on, timed on the whole GPU.
      const GemmChoice chosen = choose_gemm(layer, families, gpu, peak, library_sms);
      const GemmChoice whole =
          time_gemm(layer, chosen.tile, chosen.split, families, gpu, peak, gpu.sms);
      what = "gemm " + std::to_string(chosen.tile.m) + "x" + std::to_string(chosen.tile.n) +
             (chosen.split > 1 ? " split-K " + std::to_string(chosen.split) : "");
      KernelSpec spec = fixed_kernel(layer.name, std::max(whole.t_latency, whole.t_memory),
                                     whole.t_latency, whole.t_memory);
      spec.working_set = static_cast<std::int64_t>(gemm_reread_bytes(layer, chosen.tile));
      set_grid(spec, whole.blocks, whole.blocks_per_sm, sms,
               footprint(chosen.tile.threads, chosen.tile.registers,
                         static_cast<double>(chosen.tile.shared_memory)));
      out.kernels.push_back(spec);
      out.details.push_back(what);
      if (chosen.split > 1) {
        const double outputs = static_cast<double>(layer.count) * static_cast<double>(layer.m) *
                               static_cast<double>(layer.n);
        const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
        const Reduction r =
            split_k_reduction(outputs, chosen.split, dt, families, gpu, sms, bandwidth);
        KernelSpec reduce =
            fixed_kernel(layer.name + ".splitk_reduce", r.duration(), r.t_floor, r.t_memory);
        set_grid(reduce, r.blocks, r.blocks_per_sm, sms, elementwise_footprint(families));
        out.kernels.push_back(reduce);
        out.details.push_back("split-K reduction of " + std::to_string(chosen.split) + " partials");
      }
      return out;
    }
    case LayerWork::Kind::attention: {
      if (!(peak > 0)) throw std::invalid_argument("no tensor throughput");
      blocks = layer.count *
               ceil_div(layer.m, static_cast<std::int64_t>(families.attention_block_rows.value));
      bps = shape_blocks_per_sm(gpu.sm_limits, families.attention_threads.value,
                                families.attention_registers.value,
                                families.attention_shared_memory.value);
      block = footprint(families.attention_threads.value, families.attention_registers.value,
                        families.attention_shared_memory.value);
      const double rate = families.attention_efficiency.value * peak;
      t_compute = layer.flops / rate * busiest_share(blocks, sms);
      // Each block iterates over the keys, block_cols at a time, the next K/V tile in flight.
      const double iterations = static_cast<double>(
          ceil_div(layer.n, static_cast<std::int64_t>(families.attention_block_cols.value)));
      const double block_compute = layer.flops / static_cast<double>(blocks) / (rate / sms);
      // Before the loop the Q tile and the first K and V tiles, after it the O tile (through
      // the SM's share of L2, as a GEMM's fill and epilogue).
      const double rows = families.attention_block_rows.value;
      const double cols = families.attention_block_cols.value;
      const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
      BlockPath path;
      path.iterations = iterations;
      path.block_compute = block_compute;
      path.iteration_latency = latency.dram.value / (families.attention_stages.value - 1);
      path.fill = latency.dram.value + block_round_seconds(gpu);
      path.fill_per_block =
          (rows + 2 * cols) * static_cast<double>(layer.k) * dt / sm_l2_bandwidth(gpu);
      path.epilogue = latency.l2.value;
      path.epilogue_per_block = rows * static_cast<double>(layer.k) * dt / sm_l2_bandwidth(gpu);
      t_latency = critical_path(ceil_div(blocks, sms), bps, path);
      t_memory = layer.bytes / grid_bandwidth(bandwidth, blocks, sms, gpu);
      what = layer.backward ? "fused attention backward" : "fused attention";
      break;
    }
    case LayerWork::Kind::elementwise: {
      if (!(gpu.compute.fp32 > 0)) throw std::invalid_argument("no fp32 throughput");
      const auto per_block = static_cast<std::int64_t>(families.elementwise_threads.value *
                                                       families.elementwise_items.value);
      blocks = std::max<std::int64_t>(1, ceil_div(layer.elements, per_block));
      bps = shape_blocks_per_sm(gpu.sm_limits, families.elementwise_threads.value,
                                families.elementwise_registers.value, 0);
      block = elementwise_footprint(families);
      t_compute = layer.flops / gpu.compute.fp32 * busiest_share(blocks, sms);
      const double block_compute =
          layer.flops / static_cast<double>(blocks) / (gpu.compute.fp32 / sms);
      t_latency =
          elementwise_floor(blocks, bps, sms, block_compute, latency, block_round_seconds(gpu));
      t_memory = layer.bytes / grid_bandwidth(bandwidth, blocks, sms, gpu);
      what = "elementwise";
      break;
    }
    case LayerWork::Kind::collective: {
      const double bus =
          bus_bandwidth > 0 ? bus_bandwidth : families.collective_bus_bandwidth.value;
      const double n = std::max(1, collective_gpus);
      t_memory = 2.0 * (n - 1) / n * layer.bytes / bus;
      fixed = families.collective_latency.value +
              2.0 * (n - 1) * families.collective_latency_per_hop.value;
      blocks = static_cast<std::int64_t>(families.collective_blocks.value);
      bps = shape_blocks_per_sm(gpu.sm_limits, families.collective_threads.value, 0, 0);
      what = "nccl ring all-reduce";
      break;
    }
  }
  const double busy = std::max(t_compute, t_latency);
  KernelSpec spec =
      fixed_kernel(layer.name, std::max(busy, t_memory) + fixed, busy, t_memory + fixed);
  if (layer.kind == LayerWork::Kind::attention) {
    spec.working_set = static_cast<std::int64_t>(layer.bytes);
  }
  if (layer.kind == LayerWork::Kind::collective) {
    spec.collective = true;
    const GridShape grid = grid_shape(blocks, bps, sms);
    spec.sm_fraction = grid.sm_fraction;
    spec.waves = grid.waves;
  } else {
    set_grid(spec, blocks, bps, sms, block);
  }
  out.kernels.push_back(spec);
  out.details.push_back(what);
  return out;
}

KernelSpec roofline_kernel(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth,
                           int collective_gpus, int library_sms, std::string* detail) {
  LayerKernels k =
      layer_kernels(layer, families, gpu, peak, bus_bandwidth, collective_gpus, library_sms);
  if (detail != nullptr) *detail = k.details.front();
  return k.kernels.front();
}

CatalogLayers catalog_layers(const CatalogEntry& entry, int batch, int seq_len,
                             const std::string& dtype, bool training, const LayerFusion& fusion,
                             bool gradient_checkpointing) {
  BuildOptions options;
  options.fusion = fusion;
  options.training = training;
  options.checkpointing = gradient_checkpointing;
  options.dropout = entry.dim("dropout") > 0;
  LayerBuilder b(dtype_bytes(dtype), options);
  int seq = 0;
  std::string optimizer = "adam";
  std::vector<LayerWork> decode_step;
  if (entry.family == "resnet") {
    resnet_layers(b, entry, batch);
    optimizer = "sgd";
  } else if (entry.family == "pointnet") {
    pointnet_layers(b, entry, batch);
  } else if (entry.family == "encoder") {
    seq = entry.dim("patch") > 0
              ? static_cast<int>((entry.dim("image_size") / entry.dim("patch")) *
                                     (entry.dim("image_size") / entry.dim("patch")) +
                                 1)
              : seq_len;
    encoder_layers(b, entry, batch, seq);
  } else if (entry.family == "encoder-decoder") {
    seq = seq_len;
    whisper_layers(b, entry, batch, seq, training ? nullptr : &decode_step);
  } else {
    seq = seq_len;
    decoder_layers(b, entry, batch, seq);
  }
  CatalogLayers out = b.finish(optimizer, load_kernel_families());
  out.seq_len = seq;
  out.decode_step = std::move(decode_step);
  return out;
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
  if (training && runtime->name == "tensorrt") {
    fail_at(locate, path + ".runtime",
            "tensorrt runs inference only; a training step needs runtime: pytorch");
  }
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
  const int batch = request.batch > 0 ? request.batch : entry->default_batch;
  LayerFusion fusion;
  fusion.fused_attention = runtime->fused_attention;
  fusion.fused_activation = runtime->fused_activation;
  fusion.fused_residual_norm = runtime->fused_residual_norm;
  fusion.folded_batchnorm = runtime->folded_batchnorm;
  fusion.autocast_fp32_ops = runtime->autocast && (dtype == "fp16" || dtype == "bf16");
  // Only an eager runtime keeps the framework's NCHW tensors; TensorRT and ONNX Runtime choose
  // their own layouts (converted once at the input).
  fusion.nchw_transposes = request.memory_format == "contiguous" && !runtime->folded_batchnorm;
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
    LayerKernels built =
        layer_kernels(hbm, families, gpu, peak, request.bus_bandwidth, data_parallel, library_sms);
    if (from_l2 > 0 && !built.details.empty()) {
      built.details.front() += ", input " + units::format_size(std::llround(from_l2)) + " from L2";
    }
    return built;
  };
  for (const LayerWork& layer : layers) {
    // A split-K GEMM's reduction kernel is launched by the library inside the same operator.
    LayerKernels built = build(layer);
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
    const double host = cuda_graph ? 0.0 : step_ops * runtime->host_per_op.value * 1e9;
    k.duration.value = std::max<Nanos>(1, std::llround(std::max(total, host)));
    k.sm_fraction = std::max(1e-6, width / total);
    k.memory_bound = bound / total;
    k.working_set = working_set;
    k.repeat = std::max(1, seq);
    step.push_back(k);
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
    const RequestIo io = request_io_bytes(*entry, batch, seq, dtype_bytes(dtype));
    out.input_bytes = io.input;
    out.output_bytes = io.output;
    const auto fixed = gpu.host_per_request.find(runtime->name);
    out.host_per_request = fixed != gpu.host_per_request.end() ? fixed->second : 0;
    out.copy_time = gpu.pcie_bandwidth > 0
                        ? std::llround((io.input + io.output) / gpu.pcie_bandwidth * 1e9)
                        : 0;
    out.kernels.front().host_before = out.host_per_request + out.copy_time;
  }
  if (!cuda_graph && !step.empty()) {
    out.host_gap =
        std::llround(ops * runtime->host_per_op.value * 1e9 / static_cast<double>(step.size()));
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
