#include "models/workload/catalog_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/workload/catalog_layer_builder.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
using namespace catalog_detail;
namespace {

// Attention of `count` = batch x heads products, lq query rows against lk keys, head dim d.
// Fused: one kernel. Unfused (PyTorch eager): scores GEMM, scale, mask, softmax, dropout
// (training), context GEMM, and the permute back to (tokens, hidden) (a copy kernel).
// `host_views`: the view/permute operators eager code runs around it (no kernels).
// `copy_heads`: Q, K and V are strided views of separate projections ([batch, tokens, heads, d]
// permuted); torch.matmul flattens batch and heads with reshape, a copy kernel (launched inside
// the matmul operator) for each when batch > 1, as the two dimensions then do not merge into one
// strided batch dimension; at batch 1 a view the batched GEMM reads in place.
void attention(LayerBuilder& b, const std::string& prefix, std::int64_t batch, std::int64_t heads,
               std::int64_t lq, std::int64_t lk, std::int64_t d, bool causal, double host_views,
               bool copy_heads = false) {
  const std::int64_t count = batch * heads;
  const double bh = static_cast<double>(count);
  // `attention_seq_len: bucket`: the kernel the variable-length plugin picks for this length.
  const std::int64_t built = b.fusion().attention_key_rows > 0 ? b.fusion().attention_key_rows
                             : b.fusion().attention_bucket
                                 ? varseqlen_kernel_length(std::max(lq, lk), b.dt() == 1)
                                 : 0;
  if (built > 0) {
    // A kernel built for N tokens (`attention_seq_len:`, catalog_model.hpp "Attention grid"):
    // the sequence padded to N, its rows and keys; TensorRT's noloop grid at small batch.
    lq = std::max(lq, built);
    lk = std::max(lk, built);
    if (b.fusion().fused_attention) {
      const bool int8 = b.dt() == 1;
      const std::int64_t rows = int8 && built <= 128 ? 16 : 32;
      const std::int64_t max_batch = !int8 ? 4 : built <= 128 ? 4 : built <= 192 ? 16 : 8;
      b.fused_attention(prefix + "attention", count, lq, lk, d, causal, 1 + host_views,
                        batch <= max_batch ? rows : lq);
      return;
    }
  }
  if (b.fusion().fused_attention) {
    b.fused_attention(prefix + "attention", count, lq, lk, d, causal, 1 + host_views);
    return;
  }
  const double scores = bh * static_cast<double>(lq * lk);
  const double q = bh * static_cast<double>(lq * d);
  const double kv = bh * static_cast<double>(lk * d);
  const bool copies = copy_heads && batch > 1;
  if (copies) {
    b.elementwise(prefix + "q_split_heads", q, 1, 1, 0, 0, true, -1, 0);
    b.elementwise(prefix + "k_split_heads", kv, 1, 1, 0, 0, true, -1, 0);
  }
  b.gemm(prefix + "attention_scores", lq, lk, d, count, q, kv, scores, false, true, 1 + host_views);
  b.elementwise(prefix + "attention_scale", scores, 1, 1, 1, 0, true);
  b.elementwise(prefix + "attention_mask", scores, 1, 1, 1, 0, true);
  b.fp32_op(prefix + "softmax", scores, 1, 1, 5);
  b.mark_softmax();
  b.dropout(prefix + "attention_dropout", scores);
  if (copies) b.elementwise(prefix + "v_split_heads", kv, 1, 1, 0, 0, true, -1, 0);
  b.gemm(prefix + "attention_context", lq, d, lk, count, scores, kv, q, false);
  // permute + contiguous + view: one copy kernel, three operators.
  b.elementwise(prefix + "attention_merge_heads", q, 1, 1, 0, 0, true, -1, 3);
}

// The attention block, the residual and the norm of one transformer sublayer; `pre_ln`: the
// norm comes first (GPT-2, ViT, Whisper), else after the residual add (BERT).
// `next_norm_fused` (pre-LN): the residual add and the next sublayer's norm are one kernel
// (kernel-families `pre_ln_residual_norm: fused`), which the next sublayer then skips.
void attention_sublayer(LayerBuilder& b, const std::string& prefix, std::int64_t batch,
                        std::int64_t lq, std::int64_t lk, std::int64_t h, std::int64_t heads,
                        bool causal, bool pre_ln, bool cross, std::int64_t kv_tokens_projected,
                        bool one_qkv_gemm = false, bool next_norm_fused = false) {
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
  } else if (b.fusion().qkv_head_views && !one_qkv_gemm) {
    // PyTorch eager (HF transformers BertSelfAttention / ViTSelfAttention, DeepLearningExamples'
    // PyTorch BERT; kernel-families `qkv_projection: separate_views`): three nn.Linear named
    // query, key and value (addmm each, the bias in it), then transpose_for_scores of each: a
    // view and a permute, no kernel (attention() copies them where the batched matmul must).
    for (const char* projection : {"q", "k", "v"}) {
      b.dense(prefix + projection, t, h, h, th, hd * hd, th, true, 3);
    }
  } else if (b.fusion().separate_qkv_projections && !one_qkv_gemm) {
    // TensorFlow's BERT graph (kernel-families `qkv_projection: separate`): three dense layers
    // (MatMul + BiasAdd each), and transpose_for_scores of each (Reshape + Transpose to
    // [batch, heads, tokens, head_dim]): a copy kernel, the bias add in it unless the runtime's
    // dense_bias gives the bias a kernel of its own (dense()). Interleaved so
    // that each transpose reads the GEMM just before it.
    // The bias add rides in the transpose unless a kernel of its own adds it (dense_bias).
    const double bias_flops =
        b.fusion().dense_bias_broadcast || b.fusion().dense_bias_kernel ? 0 : 1;
    for (const char* projection : {"q", "k", "v"}) {
      b.dense(prefix + projection, t, h, h, th, hd * hd, th, true, 2);
      b.elementwise(prefix + projection + "_split_heads", th, 1, 1, bias_flops, 0, true, -1, 2);
    }
  } else {
    // The QKV projection: one GEMM of N = 3 h (GPT-2's Conv1D c_attn, `one_qkv_gemm`, or a
    // runtime that merges the three, `qkv_projection: fused`) and the view/permute of Q, K, V.
    b.gemm(prefix + "qkv", t, 3 * h, h, 1, th, hd * 3 * hd, 3 * th, true, true, 9);
    b.add_params(3 * h);
    // FasterTransformer (kernel-families `qkv_bias: kernel`): the GEMM has no bias; a kernel
    // adds it and rewrites Q, K and V in the fused attention's layout (reads and writes 3 t h).
    if (b.fusion().qkv_bias_kernel) {
      b.elementwise(prefix + "qkv_bias_transpose", 3 * th, 1, 1, 1, 0, false);
    }
  }
  // Eager code views and transposes K for the scores GEMM (one more operator); TensorFlow's
  // tf.matmul(q, k, transpose_b=True) is one.
  const bool separate = !cross && !one_qkv_gemm && b.fusion().separate_qkv_projections;
  const bool views = separate && b.fusion().qkv_head_views;
  attention(b, prefix, batch, heads, lq, lk, h / heads, causal, separate && !views ? 0 : 1, views);
  b.dense(prefix + "attention_out", t, h, h, th, hd * hd, th);
  b.dropout(prefix + "attention_out_dropout", th);
  if (pre_ln && next_norm_fused) {
    // The residual sum and the next norm in one kernel: reads both, writes the sum (the next
    // residual) and its norm (FasterTransformer's invokeGeneralAddBiasResidualPreLayerNorm).
    b.elementwise(prefix + "residual1_norm2", th, 2, 2, 9, 2 * h, false);
  } else if (pre_ln) {
    b.elementwise(prefix + "residual1", th, 2, 1, 1, 0, false);  // identity gradient
  } else {
    b.residual_norm(prefix + "add_layernorm1", th, 2 * h);
  }
}

// The feed-forward sublayer: two GEMMs around the activation, dropout, residual (+ norm).
// `norm_fused` (pre-LN): the norm ran inside the previous sublayer's residual kernel.
void ffn_sublayer(LayerBuilder& b, const std::string& prefix, std::int64_t t, std::int64_t h,
                  std::int64_t ffn, bool pre_ln, const std::string& norm_name,
                  bool norm_fused = false) {
  const double tokens = static_cast<double>(t);
  const double th = tokens * static_cast<double>(h);
  const double hd = static_cast<double>(h);
  const double tf = tokens * static_cast<double>(ffn);
  b.gradient_fork(prefix + "input2", th);
  if (pre_ln && !norm_fused) b.fp32_op(prefix + norm_name, th, 1, 1, 8, 2 * h, -1, 1, 3);
  b.dense(prefix + "ffn1", t, ffn, h, th, hd * static_cast<double>(ffn), tf);
  b.activation(prefix + "gelu", tf, 8);
  b.dense(prefix + "ffn2", t, h, ffn, tf, hd * static_cast<double>(ffn), th);
  b.dropout(prefix + "ffn_dropout", th);
  if (pre_ln) {
    b.elementwise(prefix + "residual2", th, 2, 1, 1, 0, false);  // identity gradient
  } else {
    b.residual_norm(prefix + "add_layernorm2", th, 2 * h);
  }
}

// One transformer layer (Vaswani et al. 2017 as used by BERT, ViT and GPT-2): QKV projection,
// attention, output projection, residual + norm, FFN; pre-LN for GPT-2 / ViT.
// `one_qkv_gemm`: the model's own weights are one QKV matrix (GPT-2's Conv1D c_attn), one GEMM
// whatever the runtime's qkv_projection.
void transformer_layer(LayerBuilder& b, std::int64_t batch, std::int64_t seq, std::int64_t h,
                       std::int64_t heads, std::int64_t ffn, bool causal, bool pre_ln,
                       bool one_qkv_gemm = false) {
  b.begin_checkpoint();
  const bool fused_norm = pre_ln && b.fusion().fused_pre_ln_residual_norm && !b.training();
  attention_sublayer(b, "layer.", batch, seq, seq, h, heads, causal, pre_ln, false, 0, one_qkv_gemm,
                     fused_norm);
  ffn_sublayer(b, "layer.", batch * seq, h, ffn, pre_ln, "norm2", fused_norm);
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
    // Padding k / 2 (torchvision): only a 1x1 of stride 1 needs no im2col.
    b.convolution(name, batch, c_in, h_in * h_in, c_out, k * k, h_out * h_out,
                  k != 1 || stride != 1, false, !first);
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
      // TensorRT (conv_residual: fused) runs the sum and ReLU in the epilogue of the block's
      // last convolution (conv3, or the downsample after it), reading the shortcut map.
      if (separate) {
        b.elementwise(name + ".add", map, 2, 1, 1, 0, false);
        b.elementwise(name + ".relu", map, 1, 1, 1);
      } else if (b.fusion().fused_conv_residual && !b.training()) {
        b.residual_into_epilogue(map);
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
    b.convolution("patch_embedding", batch, 3, image * image, h, p * p, patches, true, true, false);
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
    b.dense("pooler", batch, h, h, n * static_cast<double>(h), static_cast<double>(h * h),
            n * static_cast<double>(h), true, 2, false);
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
    // HF GPT2Attention: c_attn is one Conv1D of 3 x hidden outputs (torch.addmm), split after.
    transformer_layer(b, batch, seq, h, e.dim("heads"), e.dim("ffn"), true, true, true);
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
    // Conv1d(c_in, c_out, 1): 1x1, stride 1, no padding (no im2col), with a bias.
    b.convolution(name, batch, c_in, points, c_out, 1, points, false, true, !first);
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
  // (Conv1d padding 1: both need im2col under conv_library: native)
  b.convolution("encoder.conv1", batch, mels, frames, h, 3, frames, true, true, false);
  b.activation("encoder.conv1.gelu", f1 * hd, 8);
  const double f2 = n * static_cast<double>(positions);
  b.convolution("encoder.conv2", batch, h, frames, h, 3, positions, true, true, true);
  b.activation("encoder.conv2.gelu", f2 * hd, 8);
  b.add_params(2 * h + positions * h);  // conv biases, encoder position embeddings
  b.elementwise("encoder.add_position", f2 * hd, 2, 1, 1, 0, true, -1, 2);
  const bool whisper_one_qkv = b.fusion().qkv_head_views;
  for (std::int64_t l = 0; l < e.dim("encoder_layers"); ++l) {
    b.begin_checkpoint();
    // HF WhisperAttention projects q_proj, k_proj and v_proj separately, but its _shape copies
    // each head split (.contiguous()) at any batch, which `separate_views` does not say: under
    // that runtime key Whisper keeps one QKV GEMM (not modelled, docs/strategies.md).
    attention_sublayer(b, "encoder.layer.", batch, positions, positions, h, heads, false, true,
                       false, 0, whisper_one_qkv);
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
                       false, 0, whisper_one_qkv);
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

}  // namespace

std::int64_t varseqlen_kernel_length(std::int64_t max_seqlen, bool one_byte) {
  if (!one_byte && max_seqlen <= 64) return 64;
  if (!one_byte && max_seqlen <= 96) return 96;
  if (max_seqlen <= 128) return 128;
  if (one_byte && max_seqlen <= 192) return 192;
  if (max_seqlen <= 256) return 256;
  return max_seqlen <= 384 ? 384 : 0;
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

}  // namespace gpumux
