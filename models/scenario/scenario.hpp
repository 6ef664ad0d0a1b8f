#pragma once
// The typed, validated scenario: what a YAML scenario file (docs/reference/scenarios.md; every
// key in tests/data/scenarios/full.yaml) becomes before anything is simulated. Units are already
// resolved: durations are integer nanoseconds, sizes bytes, rates per second. No text parsing
// happens past this point.
//
// Lifecycle: load_scenario_file() / load_scenario_text() (loader.hpp) parse and check syntax,
// units and schema and fill the defaults that need no device knowledge; resolve_scenario()
// (resolve.hpp) then checks the scenario against the device profiles (models exist, MIG layouts
// fit, tenants reference real devices, capacities) and fills the profile-derived defaults
// (timeslice, context switch, ...).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/gpu/kernel_run.hpp"
#include "models/strategies/sharing_spec.hpp"
#include "sim/core/statistics.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// The most tokens (input or output) one request may have, in the scenario (token counts and
/// distributions) and in traces: 1e9, three orders of magnitude beyond any model's context, and
/// small enough that tokens x memory_per_token or x a per-token duration stays far from int64.
inline constexpr std::int64_t kMaxTokens = 1'000'000'000;

// Stated maxima of the counts that multiply work or memory before anything is simulated
// (issue 13: `count: 1000000000` exhausted memory inside `validate`). Each is far beyond any
// real use and small enough that the expanded scenario fits in memory at once.
/// gpus[].count: GPUs per entry (a node has 8-16; 4096 is a large cluster).
inline constexpr int kMaxGpuCount = 4096;
/// tenants[].replicas: copies of one tenant (each is a full tenant with its own state).
inline constexpr int kMaxTenantReplicas = 100'000;
/// A kernel's `repeat`: launches per request (each drawn duration is stored per request in
/// flight; a million is ~8 MB per request).
inline constexpr int kMaxRepeat = 1'000'000;
/// lognormal `sigma`. The mean is median x exp(sigma^2/2) and one draw in a billion exceeds
/// median x exp(6 sigma): at sigma 3 that is 90x and 6.6e7x the median. Beyond, the mean (which
/// sets the load) comes from draws a run almost never makes, so results do not converge, and the
/// tail overflows integer nanoseconds (sigma 8: the mean is 8e13x the median, one draw in a
/// thousand 5e10x). Measured kernel and token spreads are 0.1-1.5.
inline constexpr double kMaxLognormalSigma = 3.0;

/// A duration (or count) that is fixed or drawn per use from a distribution.
struct DurationDistribution {
  enum class Kind { fixed, exponential, lognormal, uniform, empirical };
  Kind kind = Kind::fixed;
  Nanos value = 0;     ///< fixed: the value; exponential: the mean; lognormal: the median;
                       ///< uniform: the lower bound; empirical: the smallest point
  double sigma = 0.0;  ///< lognormal only: sigma of the underlying normal
  Nanos upper = 0;     ///< uniform: the upper bound; empirical: the largest point
  /// empirical only (`{empirical: {values: [...], weights: [...]}}`): the points as written and
  /// the cumulative share of the weights up to each (ascending, the last exactly 1). A draw
  /// takes the first point whose cumulative share exceeds a uniform u in [0, 1).
  std::vector<Nanos> points;
  std::vector<double> cumulative;
  /// Expected value in ns (used for solo-latency and load estimates).
  double mean() const;
};

/// Which token count of a request scales a kernel (LLM workloads). `batch` (batched serving
/// only): every token an iteration processes, its prompt chunks plus one per decoding sequence.
enum class TokenCount { none, input, output, batch };

/// A kernel whose time is a roofline of its work (LLM serving from a model card,
/// models/scenario/llm_card.hpp): for a launch over n tokens, s sequences and c context tokens,
///   F = flops_per_token n + flops_per_sequence s + flops_per_context c          [FLOP]
///   B = bytes_fixed + bytes_per_token n + bytes_per_sequence s + bytes_per_context c  [bytes]
///   t = max(F / flop_rate, B / byte_rate)                                         [s]
/// Rates are the attainable ones (peak x efficiency). All zero = no roofline term.
struct KernelRoofline {
  double flops_per_token = 0, flops_per_sequence = 0, flops_per_context = 0;
  double bytes_fixed = 0, bytes_per_token = 0, bytes_per_sequence = 0, bytes_per_context = 0;
  double flop_rate = 0;  ///< FLOP/s
  double byte_rate = 0;  ///< bytes/s
  /// ns added to every launch outside the roofline (the launch gaps of the real kernels this
  /// one stands for, a collective's latency), and the launch's floor (ns: the host's dispatch
  /// time of those kernels when it is longer than the GPU's).
  double fixed_ns = 0, floor_ns = 0;
  // The grid of a launch: ceil(rows / tile_rows) x column_blocks blocks, rows = n tokens (or s
  // sequences when rows_are_sequences), on `sms` SMs holding blocks_per_sm each.
  double tile_rows = 128, column_blocks = 0, sms = 0, blocks_per_sm = 1;
  bool rows_are_sequences = false;
  /// A time per launch over its rows (n tokens, or s sequences when rows_are_sequences), ns at
  /// `table_rows` (ascending, same size): when given it replaces max(F / flop_rate, B /
  /// byte_rate), linear between the points and along the last segment beyond them (an LLM
  /// card's GEMMs take it from the workload catalog's GEMM selection and latency floor).
  std::vector<double> table_rows, table_ns;
  bool any() const { return flop_rate > 0 || byte_rate > 0 || !table_rows.empty(); }
  /// t in ns for n tokens, s sequences, c context tokens:
  /// max(max(F / flop_rate, B / byte_rate) + fixed_ns, floor_ns) (the table's time in place of
  /// the roofline when there is one).
  double nanos(double n, double s, double c) const;
  /// The launch's sm_fraction, waves, memory_bound and busy_share: its roofline phases overlap
  /// (contention law 2), t_memory / max(t_compute, t_memory) and t_compute / that max.
  void shape(double n, double s, double c, double& sm_fraction, double& waves, double& memory_bound,
             double& busy_share) const;
};

/// One GPU kernel of a request (`request: {kernels: [...]}`).
struct KernelSpec {
  std::string name;
  DurationDistribution duration;  ///< solo time on the whole GPU of the tenant's model
  double sm_fraction = 1.0;       ///< (0,1]: share of the GPU's SMs the grid can occupy
  double memory_bound = 0.0;      ///< [0,1]: share of solo time bound by HBM bandwidth
  /// `busy_share:` [0,1], the share of solo time its SMs are busy (compute, or the busiest SM's
  /// latency-bound path) when that phase overlaps its memory phase (a roofline kernel: duration =
  /// max(busy, memory time), busy_share = busy / duration, memory_bound = memory time / duration,
  /// the larger 1; the catalog's kernels). -1 (not given): serial phases, busy 1 - memory_bound
  /// (models/gpu/contention_law.hpp, law 2).
  double busy_share = -1.0;
  int repeat = 1;  ///< >= 1: the kernel is launched this many times in a row
  /// `repeat: output_tokens` (or input_tokens): launched once per token of the request instead
  /// (e.g. one decode step per generated token).
  TokenCount repeat_per_token = TokenCount::none;
  /// `per_token: input` (or output): `duration` is per token; the launch lasts duration x tokens
  /// (e.g. prefill over the prompt).
  TokenCount duration_per_token = TokenCount::none;
  /// A collective (e.g. allreduce) of a multi-GPU tenant: it starts on every GPU of the tenant
  /// only when each GPU's stream has reached it (a barrier), as NCCL collectives do.
  bool collective = false;
  /// Batched serving only: extra time per sequence in the batch (attention over each
  /// sequence's KV cache); the launch lasts duration (x tokens) + per_sequence x batch size.
  Nanos per_sequence = 0;
  /// `per_context_token:` extra time per cached token the launch's attention reads, ns (may be
  /// fractional: 10 ps per token is typical): on a `repeat: output_tokens` kernel the KV tokens
  /// of every decoding sequence (sum of prompt + generated tokens); on a `per_token: input`
  /// kernel the causal (query, key) pairs of the prompt tokens it computes (a whole prompt of P
  /// tokens: P (P + 1) / 2); on other kernels the KV tokens of every sequence in the launch.
  double per_context_token = 0;
  /// A roofline time added to the launch (generated from an `llm:` model card).
  KernelRoofline roofline;
  /// Waves of its grid when alone on the whole GPU (>= 1; `waves:`, or duration / `block_time`).
  /// A kernel still dispatching blocks takes SMs freed by others; default 1 (every block resident
  /// at launch: an assumption, as a kernel list has no grid sizes).
  double waves = 1.0;
  /// Bytes the kernel re-reads through L2 (`working_set:`); 0 = it streams (no L2 reuse), so
  /// neighbours cannot raise its HBM traffic (models/gpu/device.hpp, L2 capacity law).
  std::int64_t working_set = 0;
  /// Thread blocks of its grid (`blocks:`; kernel traces) and how many fit on one SM at once
  /// (`blocks_per_sm:`, default 1). 0 = grid unknown. Known, its time on h SMs follows
  /// ceil(blocks / (h x blocks_per_sm)) waves (models/gpu/contention_law.hpp, law 2).
  int blocks = 0;
  int blocks_per_sm = 1;
  /// Per-block resources (`block: {threads, registers, shared_memory}`; catalog and traces):
  /// blocks of different kernels then share an SM while its resources allow (contention law
  /// 1c). Unknown (0 threads): the kernel's blocks hold whole SMs.
  BlockFootprint block;
  /// `block:` given without `blocks_per_sm:`: resolve_scenario() sets blocks_per_sm from the
  /// footprint on the tenant's GPU (CUDA occupancy rules, contention::blocks_fitting).
  bool derive_blocks_per_sm = false;
  /// G = blocks / blocks_per_sm (0 = unknown): KernelRun::grid.
  double grid() const { return blocks > 0 ? static_cast<double>(blocks) / blocks_per_sm : 0.0; }
  /// Kernel traces (`request: {kernel_trace: ...}`, docs/traces.md): CPU time between the end of
  /// the previous kernel of its lane (or the request's start) and this kernel's issue: the
  /// recorded idle gap less the launch overhead.
  Nanos host_before = 0;
  /// Kernel traces: this kernel's launch overhead when the trace recorded a shorter gap than the
  /// profile's launch_overhead (kernels already queued on the GPU); -1 = the profile's.
  Nanos launch_overhead = -1;
  /// Kernel traces: the recorded CUDA stream as a lane of the request, 0..lanes-1. Kernels of one
  /// lane run in order; lanes run side by side. Hand-written kernels are all on lane 0.
  int lane = 0;
};

/// Where a kernel parameter came from (`gpumux inspect`): written in the scenario (`user`), the
/// loader's default (`default`), the workload catalog (`catalog`, docs/workloads.md), a recorded
/// trace (`trace`) or Nsight Compute metrics joined to it (`ncu`).
enum class ParamOrigin : std::uint8_t { fallback, user, catalog, trace, ncu };

/// The origin of each derived parameter of one KernelSpec (WorkloadSpec::kernel_origins, index
/// for index). Read only by `inspect` and the defaults warning, never by the runner.
struct KernelOrigins {
  ParamOrigin duration = ParamOrigin::user;
  ParamOrigin sm_fraction = ParamOrigin::fallback;
  ParamOrigin memory_bound = ParamOrigin::fallback;
  ParamOrigin busy_share = ParamOrigin::fallback;  ///< fallback: serial phases
  ParamOrigin waves = ParamOrigin::fallback;
  ParamOrigin working_set = ParamOrigin::fallback;
  ParamOrigin repeat = ParamOrigin::fallback;
  /// How the kernel is implemented, when the catalog chose it (e.g. "gemm 64x64 split-K 4",
  /// "fused attention", "elementwise"); empty otherwise.
  std::string detail;
};

/// `workload: {model: NAME, batch: N, seq_len: L, dtype: D, phase: P, steps: K, ...}`: the
/// request's kernels and the tenant's memory come from the workload catalog
/// (models/scenario/catalog_model.hpp, docs/workloads.md), built by resolve_scenario() on the
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
/// models/run/batching.cpp, docs/llm-serving.md "Schedulers").
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
/// engines and their provenance: models/scenario/engine_cpu.hpp):
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

/// An LLM served from a model card (`workload: {llm: {...}}`, models/scenario/llm_card.hpp):
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
  double host_per_op = -1;     ///< s of CPU per kernel launched eagerly; -1 = runtimes.pytorch
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

struct GpuSpec {
  std::string name;   ///< as written; after expansion of count>1: name-0 .. name-(count-1)
  std::string model;  ///< device profile name (calibration/profiles/NAME.yaml) or a path
  int count = 1;      ///< as written (the expanded list has one entry per device)
  std::vector<std::string> mig;  ///< MIG profile names in instance order, empty = no MIG
  std::string mig_layout_name;   ///< set when `mig:` named a layout (e.g. all-balanced)
  SharingSpec sharing;
  double cost_per_hour = 0.0;  ///< optional price of this GPU (currency/hour) for cost reports
  /// `power:`: `none`, or values replacing the profile's power terms (models/gpu/power.hpp).
  PowerOverrides power;
  SourceLocation where;  ///< location of this gpus[] entry
};

/// Targets on the quantiles of one per-request measure (unset = no target).
struct SloQuantiles {
  std::optional<Nanos> p50, p90, p99, p999;
  bool any() const { return p50 || p90 || p99 || p999; }
};

/// A tenant's `slo:` block: latency targets (`p50`..`p999`, the inherited fields), and for LLM
/// tenants `ttft: {p99: ...}` (time to first token) and `tpot: {p99: ...}` (time per output
/// token). Verdicts: models/run/slo.hpp.
struct SloSpec : SloQuantiles {
  SloQuantiles ttft, tpot;
  bool any() const { return SloQuantiles::any() || ttft.any() || tpot.any(); }
};

/// What a tenant may not share (`isolation:` memory | fault | none, or a list): `gpumux plan`
/// honours it; `run` ignores it (the placement is the scenario's).
struct IsolationSpec {
  bool memory =
      false;  ///< no neighbour may take its memory: MIG, dedicated, or MPS with pinned limits
  bool fault = false;  ///< no neighbour's fault may kill it: no shared MPS server
  bool any() const { return memory || fault; }
};

struct TenantSpec {
  std::string name;    ///< after expansion of replicas>1: name-0 .. name-(n-1)
  std::string device;  ///< "GPU" or "GPU/INSTANCE" (MIG instance index in `mig:` order); the
                       ///< first of `devices`
  /// Every device the tenant runs on: one, or a list for a data-parallel tenant (`device:
  /// [gpu0-0, gpu0-1]`, one replica of each request per device, kernels marked `collective`
  /// synchronise them). Always non-empty after loading.
  std::vector<std::string> devices;
  int replicas = 1;                                   ///< as written
  std::int64_t memory = 0;                            ///< bytes allocated at start
  ParamOrigin memory_origin = ParamOrigin::fallback;  ///< inspect: where `memory` came from
  int gpus = 1;  ///< GPUs the tenant asks for (time-slicing rejects > 1); = devices
  WorkloadSpec workload;
  SloSpec slo;
  IsolationSpec isolation;   ///< `isolation:` (plan constraint)
  bool best_effort = false;  ///< `best_effort: true`: `gpumux plan` places it without an SLO
  /// `active: {from, until}`: the tenant starts at `active_from` (its memory allocated, its
  /// first arrival drawn from then; a trace's times and a constant rate's grid are shifted to
  /// start there) and takes no arrival at or after `active_until` (unset = the scenario's
  /// `duration`), when its start-up memory is freed; requests already queued or running drain
  /// (a pod's graceful termination). Defaults: the whole run. Used by cluster replays for pods
  /// that start and end inside the run.
  Nanos active_from = 0;
  std::optional<Nanos> active_until;
  SourceLocation where;
};

/// One GPU model `gpumux plan` may buy (`plan.gpus[]`).
struct PlanGpuSpec {
  std::string model;           ///< device profile name or nvidia-smi name
  double cost_per_hour = 0.0;  ///< price of one GPU per hour
  std::string currency = "USD";
  SourceLocation where;
};

/// The search space of `gpumux plan` (`plan:` in a scenario). A scenario with `plan:` may leave
/// out `gpus:` and the tenants' `device:`.
struct PlanSpec {
  std::vector<PlanGpuSpec> gpus;  ///< GPU models with prices (non-empty)
  int max_gpus = 8;               ///< at most this many GPUs in a setup
  /// Strategy families searched: dedicated, mig, time-slicing, mps, mig+time-slicing, mig+mps.
  std::vector<std::string> strategies;
  /// Required margin below every SLO target, a fraction: 0.1 = each percentile at most 90 % of
  /// its target.
  double headroom = 0.0;
  /// `shared_tenant_memory`: the largest fraction of a device's memory a tenant may hold and
  /// still share that device, time-sliced or under MPS without pinned limits, with a tenant that
  /// has SLOs (the guide's anti-pattern: a memory-hungry job beside latency-bound services,
  /// whose growth or leak takes the memory they need). 1 = no limit. assumption: 0.25, a
  /// quarter of the GPU (or MIG instance): above it a tenant is placed alone, in its own MIG
  /// instance, beside best-effort tenants only, or under pinned MPS limits.
  double shared_tenant_memory = 0.25;
  /// `max_duration`: the longest window a setup is simulated over (duration included). A unit
  /// whose SLO verdict is inconclusive (models/plan/slo_check.hpp) is simulated again with the
  /// measured window doubled until every verdict is conclusive or the next doubling would pass
  /// this; unset = 16 x duration (four doublings).
  std::optional<Nanos> max_duration;
  /// `platform:` what runs the GPUs, which bounds the search (docs/plan.md, "Platforms"):
  /// bare (GPUs priced one by one, every family), gke (GKE node pools: one partition size and
  /// one sharing strategy per pool, no MPS inside MIG), device-plugin (Kubernetes with the NVIDIA
  /// device plugin: no MPS inside MIG), mig-parted (hosts partitioned by nvidia-mig-parted,
  /// MPS inside MIG allowed). Every platform but bare buys nodes of machine types.
  std::string platform = "bare";
  /// `machines:` machine types to buy nodes of (models/plan/machine_types.hpp); empty = every
  /// catalog machine type of a model in `gpus`.
  std::vector<std::string> machines;
  SourceLocation where;
  SourceLocation platform_where, machines_where;
};

enum class FaultKind { fatal };

struct FaultSpec {
  std::string tenant;
  Nanos at = 0;
  FaultKind kind = FaultKind::fatal;
  std::optional<Nanos> recovery;  ///< affected clients restart after this long; unset = never
  SourceLocation where;
};

/// The most samples one device's utilization timeseries keeps (RunOptions can lower it): when a
/// series reaches it, neighbouring samples are merged pairwise and the period doubles
/// (docs/metrics.md). 1e6 samples are 32 MB per device (plus 16 MB of integrals); a day at the
/// default 100 ms period is 864,000.
inline constexpr std::size_t kMaxSamplesPerSeries = 1'000'000;

struct OutputSpec {
  Nanos sample = 100'000'000;  ///< timeseries sampling period (default 100 ms)
  bool kernels = false;        ///< write /kernels
  /// `percentiles: exact | sketch | auto`: how per-tenant latency, queueing, TTFT and TPOT
  /// percentiles are computed (sim/core/statistics.hpp: PercentileMethod; docs/metrics.md).
  /// Default auto: exact up to 2^20 samples per series, then a sketch (relative error 1/256).
  PercentileMethod percentiles = PercentileMethod::automatic;
  /// `confidence: 0.95`: the level of every percentile's confidence interval and so of the SLO
  /// verdicts (met / missed / inconclusive; sim/core/quantile_interval.hpp, docs/metrics.md).
  double confidence = kDefaultConfidence;
};

struct Scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  Nanos duration = 0;  ///< arrivals stop here; in-flight work then drains
  Nanos warmup = 0;    ///< requests arriving earlier are excluded from statistics
  /// `allow_large: true`: skip the work budget (work_estimate.hpp) that refuses scenarios whose
  /// estimated requests, kernel launches or timeseries samples exceed what runs in minutes.
  bool allow_large = false;
  /// `contention_law: NAME`: the contention law every device runs (models/gpu/contention_law.hpp;
  /// docs/strategies.md, "Contention laws"); "" = the default, "residency".
  std::string contention_law;
  std::vector<GpuSpec> gpus;        ///< expanded: one entry per physical GPU
  std::vector<TenantSpec> tenants;  ///< expanded: one entry per tenant replica
  std::vector<FaultSpec> faults;
  OutputSpec output;
  std::optional<PlanSpec> plan;  ///< `plan:` (gpumux plan); gpus/devices optional when set
  /// The file has a `cluster:` section (issue 8), read by models/cluster/cluster_loader.hpp, not
  /// here; duration, gpus and tenants are then optional (and usually absent).
  bool has_cluster = false;

  std::string source_file;  ///< path it was loaded from ("" for an in-memory document)
  /// Where each key of the document was written, by dotted key path ("tenants.1.memory"),
  /// so later checks can report file:line:column.
  std::map<std::string, SourceLocation> locations;

  /// The location of a key path, or of its nearest written ancestor, or just the file.
  SourceLocation locate(const std::string& key_path) const;
};

}  // namespace gpumux
