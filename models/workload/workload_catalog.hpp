#pragma once
// The workload catalog's data (docs/workloads.md): one file per model,
// calibration/workloads/NAME.yaml (embedded into the binary at build time, as the device profiles
// are), holding the model's architecture as published (layer counts, widths, heads, ...) with
// its `source:`, the phases it offers and its request defaults; and
// calibration/workloads/kernel-families.yaml, the kernel-implementation assumptions shared by
// every entry (GEMM tile shape and block resources, elementwise block shape, the efficiency of a
// large GEMM, the collective's bus bandwidth), each `{value, source}` or `{value, assumption}`.
// This layer only reads and checks the files; models/workload/catalog_model.hpp turns an entry
// into kernels on a device profile. Cost: each file is parsed once per process (cached).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpumux {

/// One catalog entry (calibration/workloads/NAME.yaml).
struct CatalogEntry {
  std::string name;          ///< file stem, e.g. "resnet50": what `workload.model:` names
  std::string display_name;  ///< e.g. "ResNet-50 v1.5"
  /// How the architecture becomes layers (catalog_model.hpp): "resnet" (bottleneck CNN),
  /// "encoder" (BERT-style / ViT transformer encoder), "decoder" (GPT-style, causal).
  std::string family;
  std::string source;  ///< where the architecture numbers come from (papers, model cards)
  std::vector<std::string> phases;  ///< "inference", "training"
  /// Architecture dimensions by key ("layers", "hidden", "stage_blocks", ...); a scalar is a
  /// one-element list. Which keys a family needs: catalog_model.hpp.
  std::map<std::string, std::vector<std::int64_t>> dims;
  int default_batch = 1;
  int default_seq_len = 0;  ///< 0 = the family's own (vision models: fixed by the image)
  std::string default_dtype = "fp16";
  std::string source_path;                         ///< "embedded:NAME" or the file
  std::int64_t dim(const std::string& key) const;  ///< the first value; 0 when absent
};

/// A number of kernel-families.yaml with its provenance.
struct CatalogParameter {
  double value = 0;
  std::string provenance;  ///< the source or assumption text
  bool assumed = false;
};

/// One GEMM tile shape of kernel-families.yaml (`gemm.tiles`) with its block resources.
struct GemmTile {
  int m = 0, n = 0;                ///< output rows and columns one block computes
  int k = 32;                      ///< depth of K one main-loop iteration consumes (k-slice)
  int stages = 3;                  ///< pipeline stages (k-slices buffered in shared memory)
  int threads = 0;                 ///< threads per block
  int registers = 0;               ///< registers per thread
  std::int64_t shared_memory = 0;  ///< bytes of shared memory per block
};

/// Unloaded memory latency of one device profile (kernel-families.yaml `memory_latency:`): what
/// the critical path of a kernel's block waits for (catalog_model.hpp, "Latency floor").
struct MemoryLatency {
  CatalogParameter dram;  ///< seconds, a load that misses L2
  CatalogParameter l2;    ///< seconds, an L2 hit (and a store retiring into L2)
};

/// A runtime of kernel-families.yaml (`runtimes.NAME`): what launches the kernels and which
/// layers it fuses (catalog_model.hpp, "Runtimes").
struct CatalogRuntime {
  std::string name;              ///< "pytorch", "onnxruntime", "tensorrt"
  CatalogParameter host_per_op;  ///< seconds of CPU per dispatched operator (may be 0)
  /// Seconds of device time per kernel the runtime launches outside a CUDA graph, beyond the
  /// profile's launch_overhead and kernel_fixed_cost (`kernel_fixed_cost:`, optional, default 0;
  /// usually `fitted:`): the stream holds its context (a time slice is spent) but no SM
  /// (catalog_model.hpp, "Fixed"). assumed is false for a source or a fit.
  CatalogParameter kernel_fixed_cost;
  bool fused_attention = false;  ///< one attention kernel (else scores materialised)
  /// `attention_grid: per_head` (optional, default tiled): the fused attention kernel launches
  /// one block per (batch, head) that computes every query row of the sequence (TensorRT's
  /// fixed-length fused MHA), instead of one block per `attention.block_rows` query rows
  /// (FlashAttention) (catalog_model.hpp, "Attention grid").
  bool attention_per_head = false;
  bool fused_activation = false;     ///< activation in the GEMM epilogue (else its own kernel)
  bool fused_residual_norm = false;  ///< one skip-layer-norm kernel (else add, then norm)
  bool folded_batchnorm = false;     ///< inference BN folded into the convolution (else BN + ReLU)
  /// `conv_residual: fused` (optional, default separate): at inference a residual block's
  /// shortcut sum and its ReLU run in the epilogue of the block's last convolution, which reads
  /// the shortcut map (TensorRT's convolution + elementwise-sum fusion), instead of an add (+
  /// ReLU) kernel after it.
  bool fused_conv_residual = false;
  /// `elementwise_fusion: chains` (optional, default none): a compiler (XLA) fuses each chain of
  /// elementwise kernels into one kernel and launches every kernel of the request from one
  /// compiled executable, one host dispatch per kernel (catalog_model.hpp,
  /// fuse_elementwise_chains).
  bool fused_elementwise_chains = false;
  /// `softmax: one_kernel` (optional, default row_reductions; meaningful under `elementwise_fusion:
  /// chains`, the only lowering that splits a softmax): the attention's softmax is one kernel of
  /// its own that reads the scores once and writes the probabilities once, its max and sum
  /// computed inside it (TensorRT's SoftMax layer), instead of two row-reduction kernels and an
  /// elementwise pass into which the pointwise layers before it fuse (XLA; catalog_model.hpp,
  /// fuse_elementwise_chains).
  bool softmax_one_kernel = false;
  /// `qkv_projection: separate` (optional, default fused): a self-attention's Q, K and V are
  /// three GEMMs of N = hidden (three dense layers, none merged), each followed by its own
  /// head-split transpose kernel, instead of one QKV GEMM of N = 3 x hidden whose heads the
  /// attention reads in place (catalog_model.hpp, "Runtime").
  bool separate_qkv_projections = false;
  /// `qkv_projection: separate_views`: three GEMMs as `separate`, but each head split is a view
  /// (PyTorch's view + permute, no kernel); an unfused attention's batched matmuls copy Q, K
  /// and V only when the batch exceeds 1, as batch and heads then do not merge into one strided
  /// batch dimension (catalog_model.hpp, "Runtime").
  bool qkv_head_views = false;
  /// `dense_bias:` (optional, default fused: the bias add costs nothing of its own, an epilogue
  /// or the next elementwise kernel): `separate`, a bias-add kernel after the GEMM (reads and
  /// writes its output); `broadcast`, a kernel writes the bias into the GEMM's output before it
  /// and the GEMM reads it as its C operand (beta 1) (catalog_model.hpp, "Runtime").
  bool dense_bias_kernel = false;
  bool dense_bias_broadcast = false;
  /// `attention_lengths:` (optional, default none): the sequence lengths, ascending, for which
  /// the runtime's fused attention kernels exist (FasterTransformer's fp16 fused MHA: 64, 96,
  /// 128, 256, 384 tokens). An encoder's fp16 self-attention of L tokens runs the kernel of the
  /// smallest length N >= L, padded to N (as `attention_seq_len: N`, catalog_model.hpp
  /// "Attention grid"); L beyond the largest runs at its own length. Empty: every length runs
  /// at its own.
  std::vector<std::int64_t> attention_lengths;
  /// `qkv_bias: kernel` (optional, default fused): the QKV projection's bias is added by a
  /// kernel of its own after the GEMM, which reads Q, K and V and writes them back in the fused
  /// attention's layout (FasterTransformer's add-QKV-bias transpose), instead of costing nothing
  /// (catalog_model.hpp, "Runtime").
  bool qkv_bias_kernel = false;
  /// `pre_ln_residual_norm: fused` (optional, default separate): in a pre-LN layer (ViT, GPT-2)
  /// the attention sublayer's residual add and the FFN's layer norm are one kernel that writes
  /// both the sum and its norm (FasterTransformer's add-bias-residual pre-layer-norm), instead
  /// of an add kernel and a norm kernel.
  bool fused_pre_ln_residual_norm = false;
  /// fp16/bf16 through autocast (softmax, log_softmax, layer norm in fp32 between casts) rather
  /// than a model converted to half ahead of time.
  bool autocast = false;
  /// Provenance of each choice: attention, activation, residual_norm, batchnorm.
  std::string attention_source, activation_source, residual_norm_source, batchnorm_source;
  std::string half_precision_source;
  std::string elementwise_fusion_source;    ///< empty when the key is absent
  std::string softmax_source;               ///< empty when the key is absent
  std::string attention_grid_source;        ///< empty when the key is absent
  std::string conv_residual_source;         ///< empty when the key is absent
  std::string qkv_projection_source;        ///< empty when the key is absent
  std::string dense_bias_source;            ///< empty when the key is absent
  std::string attention_lengths_source;     ///< empty when the key is absent
  std::string qkv_bias_source;              ///< empty when the key is absent
  std::string pre_ln_residual_norm_source;  ///< empty when the key is absent
};

/// A serving front end of kernel-families.yaml (`serving.NAME`, `workload.serving: NAME`):
/// T_fe = latency + (B_in + B_out) / bandwidth per request (host_time.hpp).
struct CatalogServing {
  std::string name;            ///< "triton-grpc", ...
  CatalogParameter latency;    ///< seconds per request (> 0)
  CatalogParameter bandwidth;  ///< bytes/s of payload; value 0 = the payload costs nothing
};

/// A GEMM library that replaces the runtime's own GEMMs with one fixed implementation
/// (kernel-families.yaml `gemm_libraries.NAME`, `workload.gemm_library: NAME`; catalog_model.hpp,
/// "GEMM library"): every GEMM of count 1 whose output has fewer than `split_below_tiles` tiles
/// and K >= `split_depth` splits K into ceil(K / split_depth) parallel slices (fp32 partials and
/// a reduction kernel); a batched GEMM (count > 1) never splits. 4-byte operands (fp32) use
/// `tile_fp32` when the library gives one.
struct GemmLibrary {
  std::string name;
  GemmTile tile;                      ///< half-precision (tensor-core) GEMMs
  std::optional<GemmTile> tile_fp32;  ///< fp32 GEMMs (CUDA cores); empty = `tile`
  CatalogParameter tile_provenance, tile_fp32_provenance;
  CatalogParameter split_below_tiles;  ///< output tiles below which K is split
  CatalogParameter split_depth;        ///< K per slice of a split
};

/// calibration/workloads/kernel-families.yaml: how kernels are implemented (assumptions about
/// cuBLAS/cuDNN/CUTLASS, fused attention and PyTorch elementwise kernels; numbers in plain
/// units) and the runtimes that launch them.
struct KernelFamilies {
  // Tensor-core GEMM and implicit-GEMM convolution: the tiles and split-K factors a library
  // chooses from, the shallowest split, and the share of the dense peak an efficient tile reaches.
  std::vector<GemmTile> gemm_tiles;
  CatalogParameter gemm_tiles_provenance;    ///< value = number of tiles
  std::vector<int> gemm_split_k;             ///< ascending, starting at 1
  CatalogParameter gemm_split_k_provenance;  ///< value = number of factors
  CatalogParameter gemm_split_k_min_depth;   ///< K per split at least this
  /// Whether a split-K GEMM may reduce its partials in the kernel (`split_k_serial:`, cuBLASLt's
  /// CUBLASLT_REDUCTION_SCHEME_INPLACE, CUTLASS's SplitKSerial): the splits of an output tile
  /// add into the output in turn behind a semaphore instead of writing fp32 partials for a
  /// reduction kernel (catalog_model.hpp, "GEMM selection"). Absent: false, value 0.
  bool gemm_split_k_serial = false;
  CatalogParameter gemm_split_k_serial_provenance;  ///< value = 1 when given
  CatalogParameter gemm_efficiency;                 ///< share of the dense peak a full wave reaches
  // Fused attention (FlashAttention-2 / fused MHA): query rows per block, block resources, share
  // of the tensor peak, and backward FLOPs per forward FLOP.
  CatalogParameter attention_block_rows, attention_threads, attention_registers;
  CatalogParameter attention_block_cols;     ///< key rows one main-loop iteration consumes
  CatalogParameter attention_stages;         ///< K/V tiles buffered (2: the next one prefetched)
  CatalogParameter attention_shared_memory;  ///< bytes
  CatalogParameter attention_efficiency, attention_backward_flops;
  // Elementwise, normalisation, softmax, pooling, optimizer kernels.
  CatalogParameter elementwise_threads;
  CatalogParameter elementwise_items;  ///< elements per thread
  CatalogParameter elementwise_registers;
  // NCCL ring all-reduce (alpha-beta).
  CatalogParameter collective_bus_bandwidth;    ///< bytes/s (nccl-tests "busbw")
  CatalogParameter collective_latency;          ///< seconds per all-reduce (NCCL base latency)
  CatalogParameter collective_latency_per_hop;  ///< seconds per ring step (2 (n - 1) steps)
  CatalogParameter collective_blocks;           ///< NCCL channels = blocks it holds
  CatalogParameter collective_threads;
  std::vector<CatalogRuntime> runtimes;     ///< in file order
  std::vector<CatalogServing> serving;      ///< serving front ends, in file order
  std::vector<GemmLibrary> gemm_libraries;  ///< `gemm_libraries:`, in file order
  /// Set on a request's copy when its workload names `gemm_library:`: choose_gemm then takes
  /// this library's fixed tile and split instead of the least-time choice.
  std::optional<GemmLibrary> fixed_gemm;
  /// Memory latency per device profile name; "default" for a profile not listed.
  std::map<std::string, MemoryLatency> memory_latency;
  std::string source_path;
  /// The memory latency of the profile named `profile` (its own entry, else "default").
  const MemoryLatency& latency(const std::string& profile) const;
  /// The runtime named `name`, or nullptr.
  const CatalogRuntime* runtime(const std::string& name) const;
  /// Names of the runtimes, in file order.
  std::vector<std::string> runtime_names() const;
  /// The serving front end named `name`, or nullptr.
  const CatalogServing* serving_front_end(const std::string& name) const;
  /// Names of the serving front ends, in file order.
  std::vector<std::string> serving_names() const;
  /// The GEMM library named `name`, or nullptr.
  const GemmLibrary* gemm_library(const std::string& name) const;
  /// Names of the GEMM libraries, in file order.
  std::vector<std::string> gemm_library_names() const;
};

/// Names of the catalog entries compiled into the binary, sorted (kernel-families excluded).
std::vector<std::string> catalog_model_names();

/// The entry named `name`. Throws InputError("unknown workload model 'X' (did you mean ...);
/// known: ...") for an unknown name, or naming file:line:column and key of a bad entry.
const CatalogEntry& load_catalog_entry(const std::string& name);

/// The shared kernel-family assumptions (cached).
const KernelFamilies& load_kernel_families();

/// Parses an entry document (tests and tools). Throws InputError.
CatalogEntry parse_catalog_entry(const std::string& yaml_text, const std::string& source_name);
/// Parses a kernel-families document (tests and tools). Throws InputError.
KernelFamilies parse_kernel_families(const std::string& yaml_text, const std::string& source_name);

}  // namespace gpumux
