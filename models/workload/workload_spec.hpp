#pragma once
// What a tenant runs (WorkloadSpec, `workload:` of a scenario tenant): its arrivals, its
// request's kernels (written, from the workload catalog, an LLM card or a recorded trace), its
// tokens, its batching and its memory per request. The scenario (models/scenario/scenario.hpp)
// holds one per tenant; resolve_scenario() fills the derived parts on the tenant's GPU model.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/workload/host_time.hpp"
#include "models/workload/kernel_spec.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// `workload: {model: NAME, batch: N, seq_len: L, dtype: D, phase: P, steps: K, ...}`: the
/// request's kernels and the tenant's memory come from the workload catalog
/// (models/workload/catalog_model.hpp, docs/workloads.md), built by resolve_scenario() on the
/// tenant's GPU model. Unset values take the catalog entry's defaults.
struct CatalogRequestSpec {
  std::string model;  ///< catalog entry name (calibration/workloads/NAME.yaml)
  int batch = 0;      ///< 0 = the entry's default
  int seq_len = 0;    ///< tokens per sequence; 0 = the entry's default (vision: from the image)
  /// `seq_len:` written as a distribution (`{uniform: {min: 64, max: 384}}`, ...): each request
  /// draws its length (resolve_scenario() builds the kernels of every length it can draw into
  /// WorkloadSpec::kernels_by_length). kind fixed = one length for all (seq_len).
  DurationDistribution seq_len_distribution;
  std::string dtype;         ///< fp16 | bf16 | fp8 | int8 | tf32 | fp32; "" = the entry's default
  std::string phase;         ///< inference | training; "" = the entry's first phase
  int steps = 1;             ///< forward (and backward) passes per request, back to back
  double bus_bandwidth = 0;  ///< bytes/s of the data-parallel all-reduce; 0 = kernel-families'
  /// What launches the kernels (kernel-families.yaml `runtimes:`: pytorch, onnxruntime,
  /// tensorrt); "" = the phase's default (tensorrt for inference, pytorch for training), which
  /// resolve_scenario() writes here (runtime_from_user false).
  std::string runtime;
  bool runtime_from_user = false;
  /// CNN activations in memory: "channels_last" (NHWC, what tensor-core convolutions read) or
  /// "contiguous" (NCHW, PyTorch's default: an eager runtime transposes around each
  /// convolution); "" = channels_last.
  std::string memory_format;
  /// Training with activation checkpointing per transformer layer (HF
  /// `gradient_checkpointing=True`): a recomputed forward per layer, less saved memory.
  bool gradient_checkpointing = false;
  /// `host: {per_request, input_bytes, output_bytes, link_bandwidth, per_op}`: the user's own
  /// measurement of the request's host terms, each replacing the model's (host_time.hpp).
  HostOverrides host;
  /// `io_dtype:` the element type of the request's input and output tensors as the client sends
  /// and receives them (fp32 | fp16 | bf16 | fp8 | int8 | uint8): the bytes B_in and B_out the
  /// host link copies and a serving front end moves (host_time.hpp); "" = the compute `dtype`.
  /// A model whose serving signature keeps fp32 while it computes in fp16 (a TF-TRT SavedModel)
  /// moves twice the bytes of its fp16 computation.
  std::string io_dtype;
  /// `serving:` the front end a client's request goes through (kernel-families.yaml `serving:`,
  /// e.g. triton-grpc); "" = none (`serving: none`): the client calls the runtime in-process.
  std::string serving;
  /// `harness:` the benchmark harness that issues the requests and times them (the GPU
  /// profile's `harness_per_request:`, e.g. mlperf-loadgen: its host time per request, T_h of
  /// host_time.hpp); "" = none (`harness: none`): the runtime's own host time only.
  std::string harness;
  /// `gemm_library:` a library that replaces the runtime's GEMMs with one fixed implementation
  /// (kernel-families.yaml `gemm_libraries:`, e.g. tally-cutlass); "" = the runtime's own.
  std::string gemm_library;
  /// `conv_library:` how convolutions run: "" or "cudnn" = one implicit GEMM over the batch;
  /// "native" = PyTorch's own per-sample im2col + GEMM (a build without cuDNN;
  /// catalog_model.hpp, "Native convolution").
  std::string conv_library;
  /// `gemm_workspace:` false = the runtime's cuBLASLt GEMMs are called with no workspace (0
  /// bytes), so none splits K: every cuBLASLt split-K reduction scheme keeps its partials, or
  /// its in-place scheme's counters, in the workspace (cuBLAS docs, cublasLtReductionScheme_t;
  /// FasterTransformer's C++ ViT example builds its cublasMMWrapper without an allocator).
  /// true (the default) = the library may split K (kernel-families `gemm.split_k`).
  bool gemm_workspace = true;
  /// `attention_seq_len:` the length N an encoder's (BERT's) fused attention kernel is built for:
  /// a request of L <= N tokens runs its attention padded to N, on TensorRT's variable-length
  /// grid (catalog_model.hpp, "Attention grid"); 0 = the request's own length. TensorRT's
  /// variable-length BERT plugin picks its kernel from the shape of the engine's max_seqlen
  /// input; MLPerf's Triton harness captures that input at 384.
  int attention_seq_len = 0;
  /// `attention_seq_len: bucket`: the kernel TensorRT's variable-length BERT plugin picks for the
  /// request's own length, the smallest it has that holds it (int8: 128, 192, 256, 384; fp16:
  /// 64, 96, 128, 256, 384), the sequence padded to it on the variable-length grid
  /// (catalog_model.hpp, "Attention grid"): NVIDIA's MLPerf BERT harness, whose CUDA graphs
  /// carry each query's own length as the max_seqlen shape. Excludes attention_seq_len > 0.
  bool attention_bucket = false;
  /// `runtime_kernel_fixed_cost:` the runtime's device time per kernel launched outside a CUDA
  /// graph (F_runtime of runtime_fixed_cost.hpp), replacing kernel-families.yaml's
  /// `runtimes.NAME.kernel_fixed_cost` for this tenant: a user who measured their own runtime,
  /// and the fit of that value (calibration/fit/ort_kernel_cost.py), which scans the very term
  /// the product applies. ns, 0 to 1 s; unset = the runtime's.
  std::optional<Nanos> runtime_kernel_fixed_cost;
  /// Resolved (resolve_scenario): T_fe of the request `kernels` are at (host_time.hpp), ns.
  Nanos front_end_time = 0;
  SourceLocation where;  ///< the `model:` key
};

/// Formats of kernel traces recorded by profilers (models/scenario/kernel_trace.hpp).
enum class KernelTraceFormat { nsys, torch, csv };

/// `request: {kernel_trace: PATH, format: ..., recorded_on: MODEL, select: {...}, ncu: PATH}`:
/// the request's kernels come from a recorded trace (docs/traces.md). resolve_scenario() reads
/// it and fills WorkloadSpec::kernels for the tenant's GPU model.
struct KernelTraceSpec {
  std::string path;  ///< resolved relative to the scenario file
  KernelTraceFormat format = KernelTraceFormat::nsys;
  std::string recorded_on;  ///< device profile of the GPU it was recorded on; "" = the tenant's
  std::optional<std::int64_t> stream;             ///< select.stream
  std::optional<std::int64_t> device;             ///< select.device (a recording of several GPUs)
  std::optional<Nanos> window_start, window_end;  ///< select.window, after the first kernel
  std::string ncu_path;  ///< `ncu:` Nsight Compute metrics (--csv), "" = none
  SourceLocation where;  ///< the `kernel_trace:` key
};

enum class ArrivalProcess { poisson, constant, closed, trace };
enum class TraceFormat { csv, azure_llm, mooncake };

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::poisson;
  double rate_per_s = 0.0;  ///< poisson / constant: mean arrivals per second (> 0)
  int concurrency = 1;      ///< closed: requests in flight (>= 1)
  Nanos think = 0;          ///< closed: mean delay between a completion and the next request
  /// closed: the think time's distribution (`think: {exponential: 30s}`; fixed = `think`).
  DurationDistribution think_dist;
  /// closed, `sessions: {cells: N, away: D}` (a notebook's on/off use): after every N-th request
  /// a client's next one waits an extra `away` (drawn), the gap between working sessions.
  int session_cells = 0;
  DurationDistribution away;
  std::string trace_file;  ///< trace: path, resolved relative to the scenario file
  TraceFormat trace_format = TraceFormat::csv;
  double time_scale = 1.0;  ///< trace: arrival times are multiplied by this (> 0)
};

/// The iteration scheduler of a batched-serving engine (`batching: {scheduler: ...}`,
/// models/workload/batching_policy.hpp, docs/llm-serving.md "Schedulers").
enum class BatchScheduler {
  /// Orca-style mixing: each iteration runs the whole prompts of the requests admitted now with
  /// one decode step of the batch; a request's KV memory is reserved in full at admission.
  orca,
  /// vLLM (v0) prefill-first: an iteration prefills the queued requests that fit, or else
  /// decodes every running request; KV memory grows by blocks and the most recently admitted
  /// request is preempted (recomputed later) when a block is not free.
  vllm,
  /// Sarathi-Serve chunked prefill: each iteration decodes the running requests and fills the
  /// rest of a `chunk_size` token budget with prompt chunks; KV memory as vllm.
  sarathi
};

/// A batched engine's CPU time per iteration (`batching: {engine_cpu: ...}`; the law, the named
/// engines and their provenance: models/workload/engine_cpu.hpp):
/// per_iteration + per_sequence x the iteration's sequences, ns, before its kernels.
struct EngineCpu {
  std::string name = "none";  ///< "vllm-v0", "none", or "custom" (written as two durations)
  Nanos per_iteration = 0;    ///< ns per iteration
  Nanos per_sequence = 0;     ///< ns per sequence (prompt chunk or decode) in the iteration
  ParamOrigin origin = ParamOrigin::fallback;  ///< user when written, catalog when the card's
  /// The iteration's CPU time with `sequences` sequences, ns (both terms are at most 10 s,
  /// checked at load, so it stays far below 2^62). O(1).
  double time(double sequences) const {
    return static_cast<double>(per_iteration) + static_cast<double>(per_sequence) * sequences;
  }
};

/// An LLM served from a model card (`workload: {llm: {...}}`, models/workload/llm_card.hpp):
/// resolve_scenario() turns it into the workload's kernels on the tenant's GPU.
struct LlmCard {
  std::string model;  ///< catalog name (calibration/workloads/llm/NAME.yaml), "" = inline card
  int layers = 0;
  std::int64_t hidden = 0;  ///< model dimension d
  int heads = 0;            ///< attention (query) heads
  int kv_heads = 0;         ///< key/value heads (GQA; = heads for multi-head attention)
  /// Width of one attention head (`head_dim:`); 0 = hidden / heads. Models such as Qwen3 set it
  /// apart from hidden / heads: the query is heads x head_dim wide, K and V kv_heads x head_dim.
  std::int64_t head_dim = 0;
  std::int64_t ffn = 0;  ///< FFN intermediate size (dense layers; MoE: 0 allowed)
  /// Mixture of experts (llm_card.hpp states the law): `experts` routed FFN experts per layer
  /// (0 = a dense FFN of width ffn), each token routed to `experts_per_token` of them (top-k), each
  /// expert an FFN of width `expert_ffn`; `shared_experts` more of that width every token uses.
  int experts = 0;
  int experts_per_token = 0;
  std::int64_t expert_ffn = 0;
  int shared_experts = 0;
  /// Sliding-window attention (`sliding_window:` tokens, 0 = full attention): a token attends to
  /// at most this many past tokens, and each sequence keeps at most this many tokens' K and V.
  std::int64_t sliding_window = 0;
  std::int64_t vocabulary = 0;  ///< vocabulary (embedding and LM head rows)
  bool gated_ffn = true;        ///< SwiGLU (gate, up, down: 3 matrices) or 2 matrices
  /// Decode and prefill iterations launched as CUDA graphs (`cuda_graph:`): no host floor, the
  /// profile's graph launch overhead per kernel. false = eager (vLLM --enforce-eager).
  bool cuda_graph = false;
  double host_per_op = -1;  ///< s of CPU per kernel launched eagerly; -1 = runtimes.pytorch
  /// host_per_op is a model's value at the reference host (`host_per_op: vllm-v0`, or the
  /// runtimes.pytorch default), scaled to the tenant's host CPU (host_cpu.hpp); false: the
  /// user's own measured duration, used as given.
  bool host_per_op_named = false;
  /// The host CPU's speed the named host_per_op is scaled to (host_cpu.hpp): the tenant's
  /// `host: {cpu_speed: ...}`; 0 = the GPU profile's `host_cpu:`.
  double host_cpu_speed = 0;
  std::string dtype = "fp16";  ///< fp16 | bf16 | fp8 | int8
  int tp = 1;                  ///< tensor-parallel degree (the tenant's GPUs)
  /// `assumption:` parameters (llm_card.hpp states each default and why).
  double gemm_efficiency = 0.7;         ///< attainable / peak tensor FLOP/s of the GEMMs
  double attention_efficiency = 0.5;    ///< attainable / peak tensor FLOP/s of attention
  double memory_efficiency = 0.8;       ///< attainable / datasheet HBM bandwidth
  double interconnect = 0;              ///< bytes/s per GPU for the TP all-reduce (0: default)
  std::int64_t activation_reserve = 0;  ///< bytes per GPU kept for activations (0: default)
  std::string source;                   ///< the card's `source:` (catalog) or "inline"
  SourceLocation where;                 ///< the `llm:` key
};

struct WorkloadSpec {
  ArrivalSpec arrivals;
  /// `llm:` model card; its kernels replace `request:` (filled in by resolve_scenario()).
  std::optional<LlmCard> llm;
  std::vector<KernelSpec> kernels;  ///< run in order, one stream per request (non-empty)
  /// A catalog tenant whose `seq_len:` is a distribution (filled in by resolve_scenario()): the
  /// lengths it can draw, ascending, and the request's kernels at each (same index). A request
  /// draws its length as its input_tokens and runs kernels_by_length at it; `kernels` are those at
  /// the length nearest the mean (estimates, inspect). Empty otherwise.
  std::vector<std::int64_t> length_values;
  std::vector<std::vector<KernelSpec>> kernels_by_length;
  /// Where each kernel's parameters came from (same length as `kernels` once resolved).
  std::vector<KernelOrigins> kernel_origins;
  /// Set when the kernels come from the workload catalog (filled in by resolve_scenario()).
  std::optional<CatalogRequestSpec> catalog;
  /// Set when the kernels come from a recorded trace (filled in by resolve_scenario()).
  std::optional<KernelTraceSpec> kernel_trace;
  Nanos host_gap = 0;  ///< CPU time between consecutive kernel launches of a request
  ParamOrigin host_gap_origin = ParamOrigin::fallback;  ///< inspect: user, catalog or default
  /// The host CPU the tenant's modelled host terms run on (models/gpu/host_cpu.hpp): name ("" =
  /// a speed the user wrote as a number) and single-thread speed relative to the reference host.
  /// `host: {cpu_speed: ...}` sets it (origin user; a catalog tenant's is also in
  /// catalog->host); else resolve_scenario() copies its first GPU's profile `host_cpu:`
  /// (origin profile). speed 0 = not resolved yet.
  std::string host_cpu;
  double host_cpu_speed = 0;
  ParamOrigin host_cpu_origin = ParamOrigin::fallback;
  /// Requests of this tenant that may be on the GPU at once. Open-loop default 1 (FIFO single
  /// server); closed loop: = concurrency.
  int max_in_flight = 1;
  std::int64_t memory_per_request = 0;  ///< bytes allocated while a request runs (e.g. KV cache)
  ParamOrigin memory_per_request_origin = ParamOrigin::fallback;  ///< user when written
  std::int64_t memory_per_token = 0;  ///< bytes per (input + output) token while it runs
  /// Sliding-window attention (an llm: card's `sliding_window:`; 0 = none): a sequence's
  /// attention reads, and its KV cache holds, at most this many tokens (its latest ones).
  std::int64_t attention_window = 0;
  /// Token counts of synthetic requests (`tokens: {input: 512, output: {lognormal: ...}}`);
  /// DurationDistribution reused with unitless values. Trace arrivals carry their own counts.
  DurationDistribution input_tokens, output_tokens;
  bool has_tokens = false;  ///< `tokens:` given
  /// Continuous (iteration-level) batching, as LLM servers do (`batching: {max_batch: 32}`);
  /// 0 = off. See models/run/runner.hpp.
  int max_batch = 0;
  BatchScheduler scheduler = BatchScheduler::orca;  ///< `batching: {scheduler: ...}`
  /// sarathi: tokens per iteration (decodes count one each; the rest goes to prompt chunks).
  std::int64_t chunk_size = 512;
  /// `max_tokens_in_batch:` at most this many tokens (prompt tokens + one per decoding
  /// sequence) in one iteration; 0 = no cap. A prompt longer than the cap fails (a reject event).
  std::int64_t max_tokens_in_batch = 0;
  /// vllm / sarathi: KV memory is allocated in blocks of this many tokens (`kv_block:`; vLLM's
  /// default block_size 16, docs.vllm.ai engine arguments).
  std::int64_t kv_block = 16;
  /// The engine's CPU time per iteration (`batching: {engine_cpu: ...}`): the tenant's GPU
  /// waits for it before each iteration's kernels (models/run/batching.cpp).
  EngineCpu engine_cpu;
  /// `request: {cuda_graph: true}`: the request's kernels are launched as one CUDA graph, so
  /// each pays the profile's graph_launch_overhead instead of launch_overhead.
  bool cuda_graph = false;
  ParamOrigin cuda_graph_origin = ParamOrigin::fallback;  ///< inspect: where `cuda_graph` came from
  /// Block-dispatch priority of the tenant's kernels in CUDA's convention (`priority:`; lower is
  /// more urgent, as cudaStreamCreateWithPriority; 0 = default). Stands for a stream priority or
  /// CUDA_MPS_CLIENT_PRIORITY; the block scheduler gives freed SMs to more urgent kernels first
  /// but never evicts resident blocks.
  int priority = 0;
};

/// The stream gap each kernel of `w` pays before it starts on `gpu`, unless the kernel carries
/// its own (KernelSpec::launch_overhead, kernel traces): the profile's launch overhead (graph or
/// stream) plus, for the modelled workloads (catalog, LLM card), its kernel_fixed_cost (launch to
/// first block, drain and flush: device_profile.hpp). Hand-written and trace kernels get none of
/// the fixed cost: their durations and recorded gaps are measured. O(1).
inline Nanos stream_launch_overhead(const WorkloadSpec& w, const DeviceProfile& gpu) {
  if (w.catalog || w.llm) return gpu.modelled_launch(w.cuda_graph);
  return w.cuda_graph ? gpu.graph_launch_overhead : gpu.launch_overhead;
}

}  // namespace gpumux
