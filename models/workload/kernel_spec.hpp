#pragma once
// A GPU kernel of a request as the simulator sees it (KernelSpec): its solo time on the whole GPU
// of the tenant's model, its grid and its boundedness, whoever derived them (written by hand,
// the workload catalog, an LLM card or a recorded trace), and where each parameter came from
// (KernelOrigins). Units: durations integer ns, sizes bytes, shares in [0, 1].
#include <cstdint>
#include <string>
#include <vector>

#include "models/gpu/kernel_run.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// The most tokens (input or output) one request may have, in the scenario (token counts and
/// distributions) and in traces: 1e9, three orders of magnitude beyond any model's context, and
/// small enough that tokens x memory_per_token or x a per-token duration stays far from int64.
inline constexpr std::int64_t kMaxTokens = 1'000'000'000;

// Stated maxima of the counts that multiply work before anything is simulated (issue 13).
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
/// models/workload/llm_card.hpp): for a launch over n tokens, s sequences and c context tokens,
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
  /// FP16/BF16 tensor-core FLOPs of one launch (the catalog's GEMMs and fused attention at a
  /// 2-byte dtype; 0 elsewhere: other dtypes, LLM cards, traces, hand-written kernels): what the
  /// power law's tensor term counts (models/gpu/power.hpp).
  double tensor_flops = 0;
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
  /// The share tau in [0, 1] of its SM phase alone on the whole GPU that its busiest SM spends
  /// on per-block work (issue throughput: the blocks' tensor/CUDA-core work and their operand
  /// and result transfers through the SM's L2 port), the rest (1 - tau) being per round of
  /// resident blocks (memory latencies, fill and drain). Resident blocks share one SM's
  /// throughput, so on fewer SMs the per-block part grows with blocks per SM, not rounds
  /// (models/gpu/contention_law.hpp, law 2, "Throughput-shared rounds"). Set by the workload
  /// catalog from its critical path (catalog_model.hpp, "Latency floor"); 0 = rounds only (the
  /// law for traces and hand-written kernels).
  double sm_throughput_share = 0;
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

}  // namespace gpumux
