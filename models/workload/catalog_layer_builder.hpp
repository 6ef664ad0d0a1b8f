#pragma once
// Internal to the workload catalog's model (catalog_architectures.cpp, catalog_timing.cpp): the
// layer builder that turns an architecture's layers into LayerWork (FLOPs, compulsory bytes, L2
// inputs, saved activations, host operators; the laws are catalog_model.hpp's "Layers",
// "Runtime", "FLOPs", "Bytes" and "Memory"). Not a public header: include catalog_model.hpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/catalog_model.hpp"

namespace gpumux::catalog_detail {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

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

  // A dense layer with a bias: out[M x N] = A[M x K] W[K x N] + bias. Under
  // fusion().dense_bias_broadcast (XLA's GemmRewriter folds the BiasAdd into the GEMM's C
  // operand, beta 1) a broadcast kernel first writes the bias to the output's M x N elements and
  // the GEMM reads them back: one kernel more, M x N written and read. Else the GEMM alone (the
  // bias in its epilogue or the next elementwise kernel, no cost of its own). Under
  // fusion().dense_bias_kernel (TensorFlow's BiasAdd node on the GPU) the GEMM, then a bias-add
  // kernel reading and writing its M x N output, dispatched by one operator of its own (taken
  // from `host_ops` when the caller counted it there). `bias_params`: count the bias's N
  // parameters (the catalog's pooler never has).
  void dense(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k, double a,
             double b, double c, bool input_grad = true, double host_ops = 1,
             bool bias_params = true) {
    if (fusion().dense_bias_broadcast) {
      elementwise(name + ".bias_broadcast", c, 0, 1, 0, 0, false);
    }
    const double gemm_ops = fusion().dense_bias_kernel && host_ops > 1 ? host_ops - 1 : host_ops;
    gemm(name, m, n, k, 1, a, b, c, true, input_grad, gemm_ops);
    if (fusion().dense_bias_broadcast) forward_.back().bytes += c * dt_;  // C, read (beta 1)
    if (fusion().dense_bias_kernel) elementwise(name + ".bias_add", c, 1, 1, 1, 0, false);
    if (bias_params) add_params(n);
  }

  // A convolution of C_in -> C_out channels, window w = k x k, over N samples of P_in input and
  // P_out output positions each; `unfold`: not a 1x1, stride-1, unpadded one (im2col needed);
  // `bias`: it has a bias (its parameters the caller adds). cuDNN (the default): one implicit GEMM
  // M = N P_out, N = C_out, K = C_in w over the batch. fusion().native_convolution: PyTorch's
  // slow_conv2d loop (catalog_model.hpp, "Native convolution"): a fill of the output, then per
  // sample [im2col] and a GEMM (repeat = N); finish() derives the per-sample backward.
  void convolution(const std::string& name, std::int64_t samples, std::int64_t c_in,
                   std::int64_t in_positions, std::int64_t c_out, std::int64_t window,
                   std::int64_t out_positions, bool unfold, bool bias, bool input_grad) {
    const double n = static_cast<double>(samples);
    const double in = static_cast<double>(c_in * in_positions);     // per sample
    const double out = static_cast<double>(c_out * out_positions);  // per sample
    const double weights = static_cast<double>(c_in * window * c_out);
    if (!fusion().native_convolution) {
      gemm(name, samples * out_positions, c_out, c_in * window, 1, n * in, weights, n * out, true,
           input_grad);
      return;
    }
    LayerWork::NativeConvolution geometry;
    geometry.samples = samples;
    geometry.c_in = c_in;
    geometry.c_out = c_out;
    geometry.window = window;
    geometry.in_positions = in_positions;
    geometry.out_positions = out_positions;
    geometry.unfold = unfold;
    geometry.bias = bias;
    // output.zero_() (no bias) or output.copy_(bias): one fill over the batch's output; the
    // operator's one host dispatch.
    forward_.push_back(fill(name + (bias ? ".bias_copy" : ".zero"), n * out, 1));
    if (unfold) forward_.push_back(im2col(name + ".im2col", geometry));
    LayerWork w;
    w.kind = LayerWork::Kind::gemm;
    w.name = name;
    w.m = out_positions;
    w.n = c_out;
    w.k = c_in * window;
    w.count = 1;
    w.repeat = samples;
    w.flops = 2.0 * static_cast<double>(w.m) * static_cast<double>(w.n) * static_cast<double>(w.k);
    const double a = unfold ? geometry.columns() : in;
    // beta = 1: the GEMM reads the output it accumulates onto and writes it.
    w.bytes = (a + weights + 2 * out) * dt_;
    w.a_bytes = a * dt_;
    w.b_bytes = weights * dt_;
    w.working_set = w.a_bytes + w.b_bytes;
    w.element_bytes = dt_;
    w.host_ops = 0;
    w.native_conv = geometry;
    last_kernel_bytes_ = w.bytes * n;
    push(w, input_grad, true);
    params_ += static_cast<std::int64_t>(weights);
    output(n * out);
  }

  // A fused attention kernel (FlashAttention-2 / fused MHA): count = batch x heads products of
  // lq query rows against lk key rows of head dimension d.
  // `block_rows` > 0: the query rows one block computes (a kernel's own grid, e.g. TensorRT's
  // variable-length noloop kernels); 0 = the runtime's attention grid.
  void fused_attention(const std::string& name, std::int64_t count, std::int64_t lq,
                       std::int64_t lk, std::int64_t d, bool causal, double host_ops = 1,
                       std::int64_t block_rows = 0) {
    LayerWork w;
    w.kind = LayerWork::Kind::attention;
    w.name = name;
    w.count = count;
    w.m = lq;
    w.n = lk;
    w.k = d;
    w.causal = causal;
    if (fusion().attention_per_head) w.block_rows = lq;
    if (block_rows > 0) w.block_rows = block_rows;
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
      forward_.back().row_reductions = kRowReductions;
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
    forward_.back().row_reductions = kRowReductions;
    elementwise_sized(name + ".to_half", out, 1, 1, 0, 0, true, -1, 1, 0, -2);
  }
  // The fp32_op just built is the attention's softmax (LayerWork::softmax): marks its row-wise
  // layer (the last forward layer with row reductions; under autocast the cast after it is not).
  void mark_softmax() {
    for (auto it = forward_.rbegin(); it != forward_.rend(); ++it) {
      if (it->row_reductions <= 0) continue;
      it->softmax = true;
      return;
    }
  }
  // Every fp32_op is a row-wise softmax or norm: two dependent reductions along each row
  // (softmax: max, then the sum of exponentials; layer norm: mean, then variance), which a
  // compiler cannot fuse into their consumers (catalog_model.hpp, fuse_elementwise_chains).
  static constexpr int kRowReductions = 2;

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
    w.input_bytes = elements * reads * read_size;
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

  // x + shortcut, then ReLU, computed in the epilogue of the GEMM just pushed (a convolution
  // of `elements` outputs): it reads the shortcut map (`elements` values more input) and does an
  // add and a max per output element (epilogue_flops counts per output element); no kernel of
  // its own. Inference only (a training step keeps the sum for the ReLU's backward).
  void residual_into_epilogue(double elements) {
    LayerWork& conv = forward_.back();
    conv.bytes += elements * dt_;
    conv.epilogue_flops += 2;
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
        } else if (f.native_conv.samples > 0) {
          native_convolution_backward(f, it->input_grad, out.layers);
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

  // A fill kernel (zero_, a bias copy) writing `elements`, dispatched by `host_ops` operators.
  LayerWork fill(const std::string& name, double elements, double host_ops) const {
    return loop_kernel(name, elements, 0, elements * dt_, 1, host_ops);
  }

  // An elementwise kernel of a native convolution: a grid of `elements` threads doing `flops`
  // in all, moving `bytes`, launched `repeat` times, dispatched by `host_ops` operators.
  LayerWork loop_kernel(const std::string& name, double elements, double flops, double bytes,
                        std::int64_t repeat, double host_ops) const {
    LayerWork w;
    w.kind = LayerWork::Kind::elementwise;
    w.name = name;
    w.elements = static_cast<std::int64_t>(elements);
    w.flops = flops;
    w.bytes = bytes;
    w.element_bytes = dt_;
    w.host_ops = host_ops;
    w.repeat = repeat;
    return w;
  }

  // aten's im2col of one sample (repeat = N): a thread per input channel and output position
  // copies its window: reads the sample's map, writes its columns.
  LayerWork im2col(const std::string& name, const LayerWork::NativeConvolution& g) const {
    return loop_kernel(name, static_cast<double>(g.c_in * g.out_positions), 0,
                       (static_cast<double>(g.c_in * g.in_positions) + g.columns()) * dt_,
                       g.samples, 0);
  }

  // The backward of a native convolution (catalog_model.hpp, "Native convolution"), after its
  // per-sample forward GEMM `f`: [per sample: the columns' GEMM, col2im], the weight gradient's
  // fill, [per sample: im2col], per sample the weight-gradient GEMM, [the bias gradient's sum].
  void native_convolution_backward(const LayerWork& f, bool input_grad,
                                   std::vector<LayerWork>& out) const {
    const LayerWork::NativeConvolution& g = f.native_conv;
    const double in = static_cast<double>(g.c_in * g.in_positions);
    const double grad_out = static_cast<double>(g.c_out * g.out_positions);
    const double weights = static_cast<double>(g.c_in * g.window * g.c_out);
    const double columns = g.columns();
    LayerWork base = f;
    base.native_conv = {};
    if (input_grad) {
      // grad_columns = W^T dY_n (beta 0), then col2im sums the columns into dX_n.
      LayerWork d = base;
      d.name = f.name + ".dgrad";
      d.n = f.k;
      d.k = f.n;
      d.a_bytes = grad_out * dt_;
      d.bytes = (grad_out + weights + columns) * dt_;
      d.working_set = d.a_bytes + d.b_bytes;
      d.host_ops = 1;
      out.push_back(d);
      // (one add per column element)
      out.push_back(
          loop_kernel(f.name + ".col2im", in, columns, (columns + in) * dt_, g.samples, 0));
    }
    out.push_back(fill(f.name + ".wgrad_zero", weights, input_grad ? 0 : 1));
    if (g.unfold) out.push_back(im2col(f.name + ".wgrad_im2col", g));
    // dW += dY_n X_n^T (beta 1: reads and writes dW).
    LayerWork w = base;
    w.name = f.name + ".wgrad";
    w.m = f.k;
    w.n = f.n;
    w.k = f.m;
    w.a_bytes = (g.unfold ? columns : in) * dt_;
    w.b_bytes = grad_out * dt_;
    w.bytes = w.a_bytes + w.b_bytes + 2 * weights * dt_;
    w.working_set = w.a_bytes + w.b_bytes;
    w.host_ops = 0;
    out.push_back(w);
    if (g.bias) {
      const double dy = static_cast<double>(g.samples) * grad_out;
      out.push_back(loop_kernel(f.name + ".grad_bias", dy, dy,
                                (dy + static_cast<double>(g.c_out)) * dt_, 1, 0));
    }
  }

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

}  // namespace gpumux::catalog_detail
