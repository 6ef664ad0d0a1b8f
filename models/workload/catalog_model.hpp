#pragma once
// The workload catalog's model: a catalog entry (models/workload/workload_catalog.hpp) and a
// request (batch, sequence length, dtype, phase, runtime) become the request's kernels on a GPU
// model, by first principles (docs/workloads.md has the derivation and every layer table). In
// short:
//
//   Layers    the family's layer list from the architecture (He et al. 2016 Table 1; Devlin et
//             al. 2019; Dosovitskiy et al. 2021; Radford et al. 2019; Qi et al. 2017; Radford et
//             al. 2023 (Whisper)): each layer is a GEMM (count x M x N x K; a convolution as the
//             implicit GEMM M = batch x H_out x W_out, N = C_out, K = C_in x k x k), a fused
//             attention kernel, or an elementwise/normalisation kernel over E elements. Training
//             adds, per GEMM, the data-gradient and weight-gradient GEMMs (same FLOPs, same
//             operand bytes), per elementwise kernel its backward (one more tensor read), per
//             fused attention its backward (backward_flops x the FLOPs), the optimizer step over
//             the parameters and, data-parallel, the gradient all-reduce.
//   Runtime   kernel-families.yaml `runtimes:` (`workload.runtime:`, default tensorrt for
//             inference and pytorch for training) decides which layers are separate kernels:
//             unfused attention = scores GEMM, scale, mask, softmax, (training) dropout, context
//             GEMM; fused = one kernel. A separate activation, residual add, BN or ReLU is its own
//             elementwise kernel. A self-attention's projection is one QKV GEMM (M = tokens,
//             N = 3 h, K = h; its heads read in place) unless `qkv_projection: separate`: three
//             GEMMs (M = tokens, N = K = h), each followed by its head-split transpose, a copy
//             kernel reading and writing tokens x h elements with the bias add in it (1 FLOP an
//             element). The two cost the same FLOPs; the separate GEMMs have a third of the
//             blocks each, so at small batch, where one QKV GEMM's blocks do not fill the GPU,
//             they take up to three times as long. `qkv_projection: separate_views` (PyTorch): the
//             three GEMMs with no head-split kernel (a view + permute), but an unfused attention at
//             batch > 1 copies Q and K before its scores GEMM and V before its context GEMM
//             (torch.matmul's reshape: batch and heads do not merge into one stride), each
//             tokens x h elements read and written. A model whose own weights are one QKV
//             matrix (GPT-2's c_attn) keeps one GEMM. A dense layer's bias (BERT's Q, K, V,
//             attention output and FFN GEMMs, the pooler) costs nothing of its own unless
//             `dense_bias: separate` (a kernel after the GEMM reads its M x N output and writes
//             M x N, 1 FLOP an element) or `broadcast` (a kernel before it writes the bias
//             broadcast to the output's M x N elements, reading none, and the GEMM reads them
//             as C, beta 1: M x N more bytes); either takes the bias add out of the transpose. Each
//             kernel counts the framework operators that dispatch it (views and permutes included);
//             the tenant's host_gap = ops x host_per_op / kernels paces the launches
//             (models/run/launch.cpp: issue_k >= start + k host_gap), unless the request is a CUDA
//             graph.
//   FLOPs     F = 2 M N K count (multiply-add = 2); fused attention 4 count L_q L_k d (half when
//             causal); elementwise F = E x flops per element.
//   Bytes     compulsory HBM traffic at the dtype's size s: GEMM (|A| + |B| + |C|) s (+ the
//             split-K partials, 2 split |C| x 4 B, serial), attention (Q + K + V + O) s,
//             elementwise E (reads + writes) s (each tile's re-reads hit L2: `working_set`),
//             less the part of its input still in L2: I = min(the output of the kernel
//             before it in the stream, this kernel's activation inputs), of which L2 holds
//             I x min(1, L_dev / T_prev), L_dev the device's L2 and T_prev the bytes that
//             kernel moved (assumption: L2 keeps the most recent L_dev bytes of traffic, LRU,
//             and the producer's output is spread evenly through its traffic; A100 whitepaper,
//             "L2 cache": write-back, so written lines stay until evicted). Every write still
//             counts (evicted to HBM in the end). Forward kernels only; the backward's inputs
//             are read as HBM bytes.
//   GEMM selection  for each tile (m x n, k-slice depth k, pipeline stages, block resources) of
//             kernel-families `gemm.tiles` and split factor s of `gemm.split_k` (K / s >=
//             split_k_min_depth):
//                 G = count ceil(M / m) ceil(N / n) s blocks, each 2 m n ceil(K / s) FLOPs
//                 (padded: tile quantization);
//                 tile efficiency e = min(1, I B_L2 / P), I = 2 m n / ((m + n) s_dtype) the
//                 FLOPs per byte a block draws from L2, B_L2 the profile's L2 bandwidth;
//                 t_c = ceil(G / S_lib) x 2 m n ceil(K / s) / (eta e P / S) (the busiest SM
//                 computes ceil(G / S_lib) blocks at its share of the peak: wave quantization);
//                 t_lat = the busiest SM's critical path (Latency floor below), >= t_c;
//                 t_m = (bytes + s_split count M N (4 B - s_dtype)) / B_grid (a split writes
//                 fp32 partials instead of C), B_grid = min(B_HBM S_lib / S, min(G, S_lib) s_SM):
//                 every byte passes through the port of the SM that asked for it, at most the
//                 profile's per-SM ceiling s_SM (`sm_bandwidth`, contention law 2's), so a grid
//                 narrower than B_HBM / s_SM SMs cannot draw the whole HBM bandwidth;
//                 split-K adds a reduction kernel (reads the s partials, writes C): its launch
//                 (the profile's launch_overhead) and t_r = max(count M N (4 s + s_dtype) /
//                 B_grid of its own grid, its elementwise floor); t = max(t_lat, t_m) + [s > 1]
//                 (launch + t_r).
//                 Serial split-K (kernel-families `gemm.split_k_serial`; cuBLASLt
//                 CUBLASLT_REDUCTION_SCHEME_INPLACE, CUTLASS SplitKSerial), offered where the
//                 unsplit grid has fewer output tiles than S_lib (count ceil(M / m) ceil(N / n) <
//                 S_lib: CUTLASS's "too few threadblocks to ... occupy the entire GPU"): no
//                 reduction kernel
//                 and no fp32 partials; split k of a tile waits on the tile's semaphore for
//                 split k - 1, reads the output tile it left, adds its accumulators and writes
//                 the tile in the output type, then releases (CUTLASS kernel/gemm.h,
//                 semaphore.h). The splits of a tile end their main loops together, so the last
//                 finishes s - 1 steps after the first, each step
//                     c = 2 L_2 + 2 m n s_out / (B_L2 / S)
//                 (the release seen by the waiting block's poll and the tile's read each an L2
//                 round trip; the tile read and written through the SM's L2 share):
//                 t_lat += (s - 1) c, the epilogue stores s_out, t_m counts C once (the
//                 intermediate tiles stay in L2), t = max(t_lat, t_m).
//             The choice of least t on the S_lib SMs the library sees (the device's: a MIG
//             instance's own) wins; ties keep the earlier tile, the smaller split and the
//             reduction kernel. A reduction kernel is emitted as its own kernel,
//             NAME.splitk_reduce.
//             (NVIDIA Matrix Multiplication Background guide: tile and wave quantization.)
//   GEMM library  a workload with `gemm_library: NAME` (kernel-families `gemm_libraries:`) runs
//             every GEMM as that library's one implementation instead of the least-time choice
//             above: tile T (T_fp32 for fp32 operands when given) and split
//                 s = ceil(K / d) if count = 1, ceil(M / m) ceil(N / n) < N_split and K >= d,
//                 else 1,
//             timed by the same law (blocks, wave and tile quantization, fp32 partials, the
//             reduction kernel). tally-cutlass is Tally's cuBLAS replacement (REPLACE_CUBLAS,
//             tally src/tally/cutlass/cutlass.cu: 128x128x16 tensor-op tile in 4 stages for
//             fp16, 128x128x8 SIMT for fp32, d = 128, N_split = 60).
//   Native convolution  a workload with `conv_library: native` (PyTorch built without cuDNN,
//             USE_CUDNN=0) runs each convolution as aten's slow_conv2d (pytorch v2.2.0
//             aten/src/ATen/native/cuda/ConvolutionMM2d.cu), a loop over the N samples of the
//             batch instead of one implicit GEMM. Per convolution of C_in -> C_out channels,
//             window w = k x k, P_in input and P_out output positions per sample, unfold u = 1
//             unless k = 1, stride 1 and no padding:
//               forward   one fill of the output (zero_ or the bias copy, N C_out P_out), then
//                         per sample [u] im2col (C_in P_out threads, reads C_in P_in, writes
//                         the columns C_in w P_out) and one GEMM M = P_out, N = C_out,
//                         K = C_in w accumulating onto the output (beta 1: reads it too);
//               backward  (input gradient) per sample one GEMM M = P_out, N = C_in w,
//                         K = C_out into the columns, then col2im (C_in P_in threads, reads the
//                         columns, writes the input gradient; run whatever u); a fill of the
//                         weight gradient (C_out C_in w); per sample [u] im2col and one GEMM
//                         M = C_in w, N = C_out, K = P_out accumulating onto it (beta 1); with
//                         a bias, one sum of the output gradient over N and P_out.
//             So a convolution costs N (1 + u) forward and N (3 + u) backward launches (N (1 +
//             u) for the first layer, which has no input gradient) plus the fills, the bias sum
//             and any split-K reductions (one per GEMM launch), and its GEMM FLOPs are the
//             implicit GEMM's: N x 2 P_out C_out C_in w per pass. Each per-sample kernel is
//             one KernelSpec with repeat = N (the loop's launches grouped by kernel: the same
//             kernels and sums, in another order within the loop), timed by the laws above at
//             its own shape (a per-sample GEMM of few tiles takes the library's split-K), its
//             bytes per launch (the weights counted by every launch; assumption: no reuse
//             across launches is modelled, and no per-sample input from L2). The loop is
//             C++ inside the operator: the operator's host_ops are unchanged and spread
//             over every launch (host_gap = ops x host_per_op / launches).
//   Latency floor  kernel-families `memory_latency:` gives per GPU the unloaded DRAM load
//             latency L_D and L2 latency L_2 (pointer chase, te42kyfo/gpu-benches). The busiest
//             SM runs its P = ceil(G / S) blocks at most r = min(B_sm, P) at a time; a round of
//             b blocks lasts
//                 L_D + b F_b + I max(b C / I, L_D / (stages - 1)) + L_2 + b E_b
//             with I main-loop iterations (GEMM ceil(ceil(K / s) / k); fused attention
//             ceil(L_k / block_cols); elementwise 1), C one block's compute alone on the SM,
//             F_b its first operand tile over the SM's L2 share B_L2 / S (GEMM (m + n) k
//             s_dtype, attention (rows + 2 cols) d s_dtype, elementwise 0) and E_b its store
//             (GEMM m n s_out / (B_L2 / S) + m n epilogue_flops / (P_fp32 / S), attention
//             rows d s_dtype / (B_L2 / S)); t_lat = the sum over floor(P / r) full rounds and
//             one of P mod r blocks.
//             Its throughput share (KernelSpec::sm_throughput_share, contention law 2's tau):
//             the round read as affine in its blocks through b = 1 and b = r, round(b) = L + b
//             C_b with C_b = (round(r) - round(1)) / (r - 1) (the blocks' work and L2 traffic,
//             which resident blocks share) and L = round(1) - C_b (latencies, per round), so
//             tau = P C_b / (ceil(P / r) L + P C_b) (r = 1: tau = 1; a kernel whose tensor or
//             fp32 work t_c exceeds t_lat: tau = 1). On fewer SMs the device physics stretches
//             the per-round part by rounds and the per-block part by blocks per SM.
//   Attention grid  a fused attention kernel runs count = batch x heads products of L_q query
//             rows. Tiled (FlashAttention-2, the default): count ceil(L_q / block_rows) blocks.
//             Per head (kernel-families runtime `attention_grid: per_head`, TensorRT's
//             fixed-length fused MHA): count blocks, each computing all L_q rows (4 L_q L_k d
//             FLOPs at its SM's share of the attention peak over ceil(L_k / block_cols) key
//             tiles), holding K, V and a block_rows-row Q tile in shared memory: (2 L_k +
//             block_rows) d s bytes (TensorRT's sm80 table: 48 KiB at L = 128, 112 KiB at 384
//             for fp16; 24 and 56 KiB for int8). A GPU whose blocks cannot hold that (the
//             profile's shared memory per SM less the per-block reservation) runs the plugin's
//             compact variant of (L_k + block_rows) d s bytes where that fits, on the same grid:
//             TensorRT's GA10x table keeps "only kernels whose sharedMemBytes < 100KiB", its
//             fp16 S = 384 kernel at 65536 B = (384 + 128) 64 x 2, and an sm_89 (Ada) device
//             loads that table before the sm80 one (TensorRT v10.7.0 plugin/
//             bertQKVToContextPlugin/fused_multihead_attention/include/
//             fused_multihead_attention.h, sMhaKernelMetaInfos and loadXMMAKernels: "sm_89 will
//             reuse sm_80 and sm_86 kernels"; the sm80 384 kernel's 114688 B exceed the 99 KiB
//             a 100 KiB SM grants a block, and the loader skips it). Where neither fits there is
//             no such kernel: the attention runs over the tiled grid (assumption: the plugin's
//             unfused fallback, cuBLAS batched GEMMs over all query rows, parallel as the tiled
//             kernel). Every
//             length a seq_len distribution draws is timed as that fixed length (the variable-
//             length plugin, whose v2 kernels split the rows over S / 32-48 blocks at small
//             batch, is not modelled).
//             A kernel built for N tokens (workload `attention_seq_len: N`, encoder models:
//             TensorRT's variable-length BERT plugin): a sequence of L <= N tokens runs padded to
//             N, L_q = L_k = N (4 N^2 d FLOPs a head; the rows and keys past its end masked,
//             not skipped: assumption, the kernels are closed binaries; MLPerf's Triton - LWIS
//             deltas, 9-10 SM-ms a query on the A100 and the A30 (docs/workloads.md), are a
//             384^2 kernel's full work over the bucket's), on the plugin's noloop grid at small
//             batch: heads x batch x N / r blocks of r query rows, r = 32 (16 for one-byte elements
//             at N <= 128), each holding all N keys, when batch <= 8 (one-byte; 4 at N <= 128,
//             16 at N <= 192) or 4 (fp16); else the per-head loop kernel. source: the plugin
//             picks its kernel from the shape of the max_seqlen input (int8: 128, 192, 256 or
//             384; github.com/NVIDIA/TensorRT plugin/bertQKVToContextPlugin/
//             qkvToContextPlugin.cpp, QKVToContextVarSeqlenPlugin::enqueue) and launches the
//             v2 kernel's noloop variant on (h, b, S / unroll) with unroll 32 (16 for int8
//             S = 128) for b up to the sm80 unroll list's batch (fused_multihead_attention_v2.h,
//             FusedMultiHeadAttentionXMMAKernelV2::run; the same table in
//             github.com/NVIDIA/FasterTransformer). MLPerf's NVIDIA Triton harness captures its
//             CUDA graphs with max_seqlen of shape 384 at every total length
//             (mlcommons/inference_results_v1.0, v1.1, v2.1 closed/NVIDIA/code/common/
//             server_harness.py, set_bert_cuda_graph_specs; Triton runs a graph for any shape
//             between graph_lower_bound and it), so each query runs the 384 kernel; NVIDIA's own
//             BERT harness captures a graph every 4 tokens at that length's max_seqlen
//             (code/harness/harness_bert/bert_core_vs.cc, InitializeGraphSpecs), so each query
//             runs the kernel of its own length's bucket: `attention_seq_len: bucket` takes N =
//             varseqlen_kernel_length(L) per drawn length L (int8 128, 192, 256, 384; fp16 64,
//             96, 128, 256, 384), the same padded noloop grid.
//   Grid      blocks per SM B_sm from the profile's sm_limits and the kernel's block resources
//             (kernel_trace_model.hpp blocks_per_sm); sm_fraction f = min(1, G / S), waves
//             W = max(1, G / (B_sm S)) (grid_shape); the kernel carries blocks and blocks_per_sm
//             (KernelSpec), so the device physics counts whole waves on a slice.
//   Roofline  on the whole GPU of S SMs: compute t_c and t_lat as above with S_lib = S (fused
//             attention: F / (eta_att P) x S ceil(G / S) / G; elementwise: F / P_fp32 x S
//             ceil(G / S) / G), memory t_m = bytes / min(B_HBM, min(G, S) s_SM) (B_HBM the
//             measured bandwidth when the profile has it; s_SM the per-SM ceiling, none under
//             a law without it: catalog_timing_profile), duration t = max(t_lat, t_c, t_m).
//             The device physics stretches t_m on a slice relative to that same solo draw
//             (contention_law.hpp hbm_draw), so bytes move at min(B_slice, held s_SM) there.
//   Boundedness  overlapped phases (Williams et al., "Roofline", CACM 2009): memory_bound
//             m = t_m / t and busy_share c = max(t_lat, t_c) / t, the larger 1; the device
//             physics stretches each (by 1/sigma and 1/beta) and runs the longer
//             (models/gpu/contention_law.hpp, law 2); the latency phase stretches like compute
//             (whole rounds on fewer SMs).
//   Collective  NCCL ring all-reduce of n GPUs, alpha-beta: t = latency + 2 (n - 1)
//             latency_per_hop + 2 (n - 1) / n x bytes / bus_bandwidth (NCCL's tuning model,
//             src/graph/tuning.cc), m = 1, blocks = NCCL channels.
//   Host      inference only: before its first kernel a request spends host time (its
//             host_before) = the profile's host_per_request of its runtime (pre/post-processing,
//             the framework's call and synchronisations; fitted, `gpumux calibrate`) + (input +
//             output bytes) / pcie_bandwidth (H2D and D2H on the host link, request_io_bytes;
//             post-processing and the output copy are moved before the kernels: the request's
//             latency and the GPU's idle time are the same sums). Under sharing another tenant's
//             kernels fill it. The link is not shared between tenants (not modelled).
//   Fixed     every kernel pays the profile's kernel_fixed_cost in its stream beyond the launch
//             overhead (no SM held: launch to first block, drain, flush; workload_spec.hpp
//             stream_launch_overhead) and every round of blocks on the busiest SM its
//             block_round_cost (in the round's fill, so on fewer SMs it is paid more often).
//   Memory    inference: weights (params x s) at start, two largest activations per request
//             (ping-pong buffers); training: params x (4 master + 4 gradient + optimizer state:
//             SGD-momentum 4, Adam 8) + every saved activation, all at start.
// Cost: O(layers x tiles x split factors) per tenant at resolve time; nothing at run time.
// Where: Layers, FLOPs, Bytes, Memory in catalog_layer_builder.hpp and catalog_architectures.cpp;
// GEMM selection, Latency floor, Grid, Roofline, Collective, Fixed in catalog_timing.cpp (one
// function per layer kind); Host and the request's assembly in catalog_assembly.cpp; a
// scenario's tenants in models/scenario/catalog_tenant.hpp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"
#include "models/workload/workload_catalog.hpp"
#include "models/workload/workload_spec.hpp"

namespace gpumux {

/// One layer's work before it meets a GPU.
struct LayerWork {
  enum class Kind { gemm, attention, elementwise, collective };
  Kind kind = Kind::gemm;
  std::string name;
  // gemm: count independent M x N x K products (count > 1: a batched GEMM, e.g. attention);
  // attention (fused): count = batch x heads, m query rows, n key rows, k head dimension.
  std::int64_t m = 0, n = 0, k = 0, count = 1;
  // elementwise: elements of its grid
  std::int64_t elements = 0;
  double flops = 0;        ///< total floating-point (or integer) operations
  double bytes = 0;        ///< compulsory HBM bytes
  double working_set = 0;  ///< bytes re-read through L2 (GEMM operands)
  /// GEMM: bytes of the left (M x K) and right (K x N) operands as stored (a convolution's left
  /// operand is its input map, not the im2col matrix); 0 = unknown (then `working_set` whole).
  /// The kernel's working set is the part of them its tiles re-read (gemm_reread_bytes).
  double a_bytes = 0, b_bytes = 0;
  /// Bytes of its input that the kernel just before it in the same stream wrote (its output,
  /// what this kernel reads first): read from L2 rather than HBM when they fit the L2 of the
  /// device the request runs on (build_catalog_workload). 0 for the first kernel, a weight
  /// operand, and every backward kernel.
  double l2_input_bytes = 0;
  /// Bytes that kernel before it moved in all (reads and writes; >= l2_input_bytes when set).
  double l2_input_producer_bytes = 0;
  double element_bytes = 2;  ///< bytes per element of the dtype (GEMM tile intensity)
  bool causal = false;       ///< attention: causal mask (a fused kernel skips masked tiles)
  /// Fused attention: query rows one block computes (0 = kernel-families attention.block_rows;
  /// the whole sequence m under `attention_grid: per_head`).
  std::int64_t block_rows = 0;
  bool backward = false;  ///< attention: the fused backward kernel
  /// GEMM: operations per output element its epilogue computes on the CUDA cores (a fused
  /// activation, e.g. TensorRT's bias + GELU), after its main loop.
  double epilogue_flops = 0;
  /// Elementwise, training: full passes over `elements` its backward makes beyond the forward's
  /// (a plain op reads the saved input once more: 1; a norm's statistics and input gradient
  /// read the input and the output gradient twice: 2).
  double backward_passes = 1;
  /// Framework operators that dispatch this kernel (eager runtimes: views, permutes and the
  /// op itself); the request's host time is their sum x the runtime's host_per_op.
  double host_ops = 1;
  /// Elementwise: bytes of the tensors it reads (its inputs as stored, before any L2 reuse).
  double input_bytes = 0;
  /// Elementwise: reductions along each row it computes before it writes its output, each
  /// depending on the one before (softmax: the row's max, then the sum of exponentials, 2; a
  /// layer norm: the mean, then the variance, 2); 0 for a plain elementwise op.
  int row_reductions = 0;
  /// A compiler's row-reduction kernel (fuse_elementwise_chains): no consumer fuses into it.
  bool reduction_root = false;
  /// The attention's softmax over the scores (row_reductions 2: the row's max, then the sum of
  /// exponentials); fuse_elementwise_chains lowers it by the runtime's `softmax:` choice.
  bool softmax = false;
  /// Launches of this kernel in a row (a per-sample loop, "Native convolution"); every other
  /// field is one launch's work.
  std::int64_t repeat = 1;
  /// A convolution's geometry under `conv_library: native` (its per-sample forward GEMM);
  /// samples 0 = not one. finish() derives its per-sample backward from it.
  struct NativeConvolution {
    std::int64_t samples = 0;  ///< N: the loop's trip count
    std::int64_t c_in = 0, c_out = 0, window = 1, in_positions = 0, out_positions = 0;
    bool unfold = true;  ///< im2col runs (not a 1x1, stride-1, unpadded convolution)
    bool bias = false;   ///< the backward sums the output gradient for the bias
    /// Elements of one sample's columns matrix C_in w P_out.
    double columns() const {
      return static_cast<double>(c_in * window) * static_cast<double>(out_positions);
    }
  } native_conv;
};

/// How a GEMM is implemented on a device: the tile and split-K factor of least predicted time
/// (catalog_model.hpp, "GEMM selection").
struct GemmChoice {
  GemmTile tile;
  int split = 1;
  /// With split > 1: true when the splits reduce in the kernel (serial split-K: each adds its
  /// partial into the output tile after the previous one, behind a semaphore), false when they
  /// write fp32 partials for a separate reduction kernel.
  bool serial = false;
  std::int64_t blocks = 0;  ///< count x ceil(M / m) x ceil(N / n) x split
  int blocks_per_sm = 0;    ///< resident blocks per SM (0: the profile has no sm_limits)
  int iterations = 0;       ///< main-loop iterations of a block: ceil(ceil(K / split) / k)
  double t_compute = 0;  ///< seconds of the busiest SM's tensor work on the SMs it was chosen for
  double t_latency = 0;  ///< seconds of the busiest SM's critical path (>= t_compute)
  /// The critical path's per-block share tau (KernelSpec::sm_throughput_share), in [0, 1].
  double throughput_share = 0;
  double t_memory = 0;  ///< seconds of its HBM traffic (operands, output or split partials)
  double t_reduce = 0;  ///< seconds of the split-K reduction kernel (0 without one)
  /// Seconds of a serial split-K's in-kernel chain, part of t_latency: (split - 1) steps, each
  /// 2 L_2 + 2 m n s_out / (B_L2 / S) (0 unless serial).
  double t_serial_chain = 0;
  std::int64_t reduce_blocks = 0;  ///< blocks of the reduction kernel
  /// The predicted time the selection minimises: max(t_latency, t_memory), plus, with split-K
  /// and a reduction kernel, that kernel's launch (the profile's launch_overhead) and t_reduce.
  double time(const DeviceProfile& gpu) const;
};

/// `gpu` as the catalog times kernels on it under the contention law named `contention_law`
/// ("" = the default): a law without the per-SM HBM ceiling (`contention_law: fluid`) gets
/// sm_bandwidth 0, so each kernel's memory phase keeps the device's whole bandwidth whatever its
/// grid, as that law's stretch on a slice assumes. A copy of the profile: O(1).
DeviceProfile catalog_timing_profile(const std::string& contention_law, const DeviceProfile& gpu);

/// The (tile, split) of least predicted time for `layer` (a GEMM) on `library_sms` SMs of `gpu`
/// (0 = all of them) at tensor peak `peak` (FLOP/s). O(tiles x split factors).
GemmChoice choose_gemm(const LayerWork& layer, const KernelFamilies& families,
                       const DeviceProfile& gpu, double peak, int library_sms = 0);

/// The operand bytes of GEMM `layer` that the blocks of tile `tile` re-read through L2: the left
/// operand when ceil(N / n) > 1 column tiles each read it, or when it is a convolution's input
/// map (stored smaller than M x K: the filter window reads each element several times); the
/// right operand when ceil(M / m) > 1 row tiles each read it. An operand one block alone reads
/// streams once: L2 capacity cannot change its traffic (contention law 3 gives it phi = 1).
/// `layer.working_set` when the operands are unknown (a_bytes = b_bytes = 0). O(1).
double gemm_reread_bytes(const LayerWork& layer, const GemmTile& tile);

/// The kernels of one layer on `gpu` (whole GPU): one, or a GEMM and its split-K reduction;
/// `details[i]` says how kernel i is implemented ("gemm 64x64 split-K 4", ...).
struct LayerKernels {
  std::vector<KernelSpec> kernels;
  std::vector<std::string> details;
};
LayerKernels layer_kernels(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth = 0,
                           int collective_gpus = 1, int library_sms = 0);

/// The first kernel of layer_kernels() (the layer's own; a split-K GEMM's reduction is the
/// second). The roofline of one layer on `gpu` (whole GPU) at tensor peak `peak` (FLOP/s; the fp32
/// peak for elementwise kernels comes from the profile); a GEMM's implementation is chosen for
/// `library_sms` SMs (0 = the whole GPU). `detail`, when given, receives how the kernel is
/// implemented ("gemm 64x64 split-K 4", ...). Throws std::invalid_argument when a peak the
/// layer needs is 0.
KernelSpec roofline_kernel(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth = 0,
                           int collective_gpus = 1, int library_sms = 0,
                           std::string* detail = nullptr);

/// Which layers the runtime launches as separate kernels (kernel-families.yaml `runtimes:`).
struct LayerFusion {
  bool fused_attention = true;
  /// The fused attention kernel computes every query row of a (batch, head) in one block
  /// (kernel-families `attention_grid: per_head`; "Attention grid").
  bool attention_per_head = false;
  /// The length a self-attention's kernel is built for, N > 0: the sequence runs padded to N on
  /// TensorRT's variable-length grid (workload `attention_seq_len:`, "Attention grid"); 0 = the
  /// sequence's own length on the runtime's grid.
  std::int64_t attention_key_rows = 0;
  /// With attention_key_rows 0: a self-attention's kernel is the variable-length plugin's bucket
  /// of the sequence's own length (varseqlen_kernel_length), padded to it on the same grid
  /// (workload `attention_seq_len: bucket`, "Attention grid").
  bool attention_bucket = false;
  bool fused_activation = true;
  bool fused_residual_norm = true;
  bool folded_batchnorm = true;
  /// Inference: a residual block's shortcut sum and ReLU in its last convolution's epilogue
  /// (kernel-families `conv_residual: fused`, TensorRT), not an add_relu kernel after it.
  bool fused_conv_residual = false;
  /// A self-attention's Q, K and V as three GEMMs of N = hidden, each followed by a head-split
  /// transpose kernel (kernel-families `qkv_projection: separate`: TensorFlow's BERT graph),
  /// instead of one QKV GEMM of N = 3 x hidden ("Runtime").
  bool separate_qkv_projections = false;
  /// With separate_qkv_projections: each head split is a view, not a kernel (kernel-families
  /// `qkv_projection: separate_views`: PyTorch eager); an unfused attention copies Q, K and V
  /// before its batched GEMMs when batch > 1 ("Runtime").
  bool qkv_head_views = false;
  /// A dense layer's bias written into the GEMM's output by a broadcast kernel before it, the
  /// GEMM reading it back as C (kernel-families `dense_bias: broadcast`: XLA's GemmRewriter),
  /// or added by a kernel of its own after it (`dense_bias: separate`: TensorFlow's BiasAdd);
  /// else the bias add costs nothing of its own ("Runtime").
  bool dense_bias_broadcast = false;
  bool dense_bias_kernel = false;
  /// The QKV projection's bias added by a kernel of its own after the GEMM that reads Q, K and V
  /// and writes them in the fused attention's layout (kernel-families `qkv_bias: kernel`:
  /// FasterTransformer's add-QKV-bias transpose), else it costs nothing ("Runtime").
  bool qkv_bias_kernel = false;
  /// In a pre-LN layer, the attention sublayer's residual add and the FFN's norm are one kernel
  /// (kernel-families `pre_ln_residual_norm: fused`: FasterTransformer's add-bias-residual
  /// pre-layer-norm), reading the residual and the sublayer's output and writing the sum and
  /// its norm ("Runtime").
  bool fused_pre_ln_residual_norm = false;
  /// CNN activations stored NCHW (`memory_format: contiguous`) under an eager runtime: cuDNN's
  /// tensor-core convolutions transpose the input to NHWC and the output back, two copy
  /// kernels around each convolution (and their transposed gradients in training).
  bool nchw_transposes = false;
  /// `conv_library: native`: convolutions run as PyTorch's per-sample im2col + GEMM loop
  /// (catalog_model.hpp, "Native convolution"), not one implicit GEMM over the batch.
  bool native_convolution = false;
  /// A half-precision request under PyTorch's autocast: softmax, log_softmax and layer norm run
  /// in fp32 between two casts (catalog_layer_builder.hpp, fp32_op).
  bool autocast_fp32_ops = false;
};

/// A compiler's loop fusion (XLA; kernel-families.yaml `elementwise_fusion: chains`), the law:
/// an elementwise layer B that reads the output of the elementwise layer A just before it in
/// launch order (B.l2_input_bytes > 0) over the same grid (B.elements == A.elements) joins A's
/// kernel: one kernel of A.flops + B.flops, whose HBM traffic is A.bytes + B.bytes - 2 x
/// B.l2_input_bytes (the intermediate tensor is neither written by A nor read by B), the larger
/// element size, A's L2 input, one host dispatch (host_ops = 1). Repeated along the chain, so a
/// run of n such layers becomes one kernel. A GEMM, convolution, attention or collective (a
/// library call the compiler does not fuse) ends a chain, as does a change of grid (a reduction
/// that shrinks its tensor: pooling). Every layer, fused or not, keeps one host dispatch: the
/// compiled executable launches its kernels itself (views and reshapes are free). A backward
/// layer (l2_input_bytes 0) is never fused. Source: XLA fuses a producer into its consumer so
/// that "the addition, multiplication and reduction" of `reduce_sum(x + y * z)` run as a single
/// GPU kernel without materialising the intermediates (tensorflow.org/xla, "XLA: Optimizing
/// Compiler for Machine Learning"; openxla.org/xla, GPU instruction fusion).
///
/// Row reductions: a layer with r = row_reductions > 0 (softmax, layer norm) joins its chain as
/// above, then is lowered into r + 1 kernels: r reduction kernels, launched before the chain's
/// kernel, each re-reading the chain's inputs (the chain's elementwise producers fused into it:
/// bytes = G.input_bytes, the inputs of the chain's first layer plus each joiner's inputs other
/// than its producer's output, with the chain's L2 input) and computing one reduction per
/// element (flops = elements, taken from the chain's), and the chain's kernel, the elementwise
/// pass that reads the inputs and the r row statistics and writes the output, into which later
/// elementwise consumers still fuse. A reduction kernel is a chain's end: nothing fuses into it
/// (reduction_root). So XLA's softmax reads the scores three times and writes them once, its
/// layer norm after a residual add reads both tensors three times. Source: XLA's GPU fusion
/// fuses a producer only if it is loop-fusible, and a reduction along or to the contiguous
/// dimensions (a row reduction) is not (IsLoopFusible: kReduce only when
/// !IsReductionFromOrToContiguousDimensions; IsProducerConsumerFusible: "the producer is not
/// loop-fusible"; tensorflow/compiler/xla/service/gpu/gpu_fusible.cc, the TensorFlow 1.15 / 2.x
/// GPU pipeline, before the optional reduction epilogue fusion of 2023); the softmax TensorFlow
/// lowers to XLA computes the max, then exp(x - max) and its sum, then the quotient
/// (tensorflow/compiler/tf2xla/kernels/softmax_op.cc), and BERT's layer norm
/// (tf.contrib.layers.layer_norm: nn.moments) the mean, then the mean squared difference from
/// it.
///
/// Softmax as one kernel (`softmax_one_kernel`, kernel-families `softmax: one_kernel`): the
/// attention's softmax layer (LayerWork::softmax) joins no chain and is not lowered: it stays
/// one kernel that reads the scores once (from L2 when its producer, the chain before it, wrote
/// them and they fit) and writes the probabilities once, its two row reductions inside it
/// (flops and bytes as built: 5 operations per element, one read, one write), and nothing fuses
/// into it (reduction_root). The pointwise layers before it (scale, mask) stay a chain of their
/// own. So per unfused attention the chain rule's 3 kernels after the scores GEMM (two
/// reductions, then scale + mask + softmax's pass) become 2 (scale + mask, softmax): one launch
/// fewer, and the same four passes over the scores (two reads and two writes, where the chain
/// rule's reductions re-read them: three reads and one write). Source: TensorRT's ONNX parser turns
/// the ONNX Softmax node into one ISoftMaxLayer (onnx-tensorrt builtin_op_importers.cpp, Softmax
/// importer: addSoftMax), and TensorRT's PointWise fusion merges adjacent PointWise layers only
/// (Activation, ElementWise, Unary, Scale, ...); no fusion of TensorRT 8's Developer Guide ("Types
/// of Fusions") merges a PointWise or ElementWise layer into a SoftMax layer (its softmax fusions:
/// Softmax and Log, Softmax and TopK). Other runtimes (false) keep the row-reduction lowering
/// above.
///
/// Returns the number of layers fused away (layers before - after, the inserted reduction
/// kernels counted; 0 if they outnumber the layers fused away). O(layers).
std::size_t fuse_elementwise_chains(std::vector<LayerWork>& layers,
                                    bool softmax_one_kernel = false);

/// The layers of one request (forward, and backward + optimizer in training) without the GPU.
struct CatalogLayers {
  std::vector<LayerWork> layers;
  std::int64_t params = 0;            ///< parameters
  std::int64_t weight_bytes = 0;      ///< params x dtype size
  std::int64_t activation_peak = 0;   ///< inference: two largest layer outputs, bytes
  std::int64_t activation_saved = 0;  ///< training: every forward output (checkpointed layers:
                                      ///< their inputs and one layer's outputs), bytes
  int seq_len = 0;                    ///< tokens per sequence used (0 for CNNs)
  /// Encoder-decoder inference: the decoder's kernels of one generated token (repeated
  /// seq_len times after `layers`, the encoder and the cross-attention K/V projections).
  std::vector<LayerWork> decode_step;
};
/// `gradient_checkpointing` (training): every transformer layer keeps only its input and runs
/// its forward again before its backward (torch.utils.checkpoint per layer, HF's
/// `gradient_checkpointing=True`): one more forward of those layers per step, their saved
/// activations held for one layer at a time.
CatalogLayers catalog_layers(const CatalogEntry& entry, int batch, int seq_len,
                             const std::string& dtype, bool training,
                             const LayerFusion& fusion = LayerFusion{},
                             bool gradient_checkpointing = false);

/// The fused attention kernel TensorRT's variable-length BERT plugin runs for a max_seqlen
/// shape of `max_seqlen` tokens: the smallest length it has a kernel for that holds it, int8
/// (`one_byte`) 128, 192, 256 or 384; fp16 64, 96, 128, 256 or 384 (192 is int8 only); 0 above
/// 384, where it has none. source: github.com/NVIDIA/TensorRT
/// plugin/bertQKVToContextPlugin/qkvToContextPlugin.cpp, QKVToContextVarSeqlenPlugin::enqueue,
/// the same in release/7.2 and 8.0.1 (the TensorRT of MLPerf Inference v1.0 and v1.1). O(1).
std::int64_t varseqlen_kernel_length(std::int64_t max_seqlen, bool one_byte);

/// A tenant's catalog workload on a GPU model.
struct CatalogWorkload {
  std::vector<KernelSpec> kernels;      ///< one request, in launch order (x steps)
  std::vector<std::string> details;     ///< per kernel: how it is implemented
  std::int64_t memory = 0;              ///< tenant start-up memory (weights / training state)
  std::int64_t memory_per_request = 0;  ///< inference activations
  std::string runtime;                  ///< the runtime used (kernel-families `runtimes:`)
  bool runtime_from_user = false;       ///< `runtime:` written (else the phase's default)
  Nanos host_gap = 0;                   ///< host time per kernel launch (0 under a CUDA graph)
  /// Inference: host time before the first kernel (its host_before) = host_per_request +
  /// copy_time; training: 0 (the data loader is not modelled).
  Nanos host_per_request = 0;  ///< the profile's host_per_request of the runtime
  Nanos copy_time = 0;         ///< (input_bytes + output_bytes) / the profile's pcie_bandwidth
  Nanos front_end_time = 0;    ///< T_fe of `serving:` (host_time.hpp); 0 without one
  double input_bytes = 0, output_bytes = 0;  ///< a request's H2D input and D2H output
  double host_ops = 0;                       ///< framework operators per request
  CatalogLayers layers;
};

/// What an inference request moves between host and GPU, bytes (catalog_model.hpp, "Host").
struct RequestIo {
  double input = 0, output = 0;
};
/// `element_bytes` is the size of the request's io dtype (`workload.io_dtype`, default the compute
/// dtype): images: batch x 3 x side^2 of it in, one score per class out; PointNet: batch x
/// points x 3 fp32 in, classes out; Whisper: the log-Mel input (fp32), seq_len token ids out;
/// a decoder LM: seq_len int32 ids in, one token's logits out; an encoder: three int32 tensors
/// of seq_len (ids, types, mask) in, two fp32 per token (span logits) out. O(1).
RequestIo request_io_bytes(const CatalogEntry& entry, int batch, int seq_len, int element_bytes);

/// The runtime a request without `runtime:` uses: tensorrt for inference, pytorch for training.
std::string default_runtime(bool training);

/// Where a key of the input was written (the location of a dotted key path such as
/// "tenants.0.workload.dtype"), for the InputError a bad request throws.
using KeyLocator = std::function<SourceLocation(const std::string& key_path)>;

/// Builds `request` for `gpu` under the contention law named `contention_law`
/// (catalog_timing_profile); `data_parallel` GPUs > 1 add the gradient all-reduce (training);
/// GEMMs are chosen for `library_sms` SMs (0 = the whole GPU: the device the tenant runs on),
/// and a kernel's input the kernel before it wrote is an L2 read when it fits `device_l2` bytes
/// (the device's L2: a MIG instance's slices' share; 0 = the whole GPU's).
/// Throws InputError at locate(`tenant_path`.workload.KEY) (its model/dtype/phase/seq_len/
/// runtime key) for an unknown model, a phase the entry lacks, a bad dtype, a sequence longer
/// than the model's positions, an unknown runtime, or a profile without the dtype's
/// compute_throughput. A scenario's tenants: models/scenario/catalog_tenant.hpp.
CatalogWorkload build_catalog_workload(const std::string& contention_law, const KeyLocator& locate,
                                       const CatalogRequestSpec& request,
                                       const std::string& tenant_path, const DeviceProfile& gpu,
                                       int data_parallel, bool cuda_graph = false,
                                       int library_sms = 0, double device_l2 = 0);

/// Shared memory (bytes) of one block of a per-head fused attention kernel (catalog_model.hpp,
/// "Attention grid"): K and V of all `key_rows` keys and a `q_tile_rows`-row Q tile, each row
/// `head_dim` elements of `element_bytes`: (2 key_rows + q_tile_rows) head_dim element_bytes.
/// O(1).
double per_head_attention_shared_memory(std::int64_t key_rows, std::int64_t head_dim,
                                        double element_bytes, double q_tile_rows);
/// Whether a block of `shared_bytes` fits an SM of `limits` (its shared memory less the
/// per-block reservation); true for a profile without sm_limits. O(1).
bool per_head_attention_fits(const SmLimits& limits, double shared_bytes);
/// Shared memory (bytes) of the compact per-head variant TensorRT ships for SMs of 100 KiB
/// (GA10x, and Ada, which loads the GA10x table first): K of all `key_rows` keys and the
/// `q_tile_rows`-row Q tile, (key_rows + q_tile_rows) head_dim element_bytes (the sm86 fp16
/// S = 384 kernel's 65536 B; catalog_model.hpp "Attention grid"). O(1).
double per_head_attention_compact_shared_memory(std::int64_t key_rows, std::int64_t head_dim,
                                                double element_bytes, double q_tile_rows);
/// The shared memory of the per-head block a GPU of `limits` runs: the full footprint where it
/// fits, else the compact one where that fits, else 0 (no per-head kernel: the tiled grid). O(1).
double per_head_attention_block_shared_memory(const SmLimits& limits, std::int64_t key_rows,
                                              std::int64_t head_dim, double element_bytes,
                                              double q_tile_rows);

/// Bytes per element of a dtype name (fp16 2, fp32 4, fp8 1, ...); 0 for an unknown name.
int dtype_bytes(const std::string& dtype);
/// The profile's dense peak for GEMMs of `dtype` (0 = unknown).
double tensor_peak(const DeviceProfile& gpu, const std::string& dtype);

}  // namespace gpumux
