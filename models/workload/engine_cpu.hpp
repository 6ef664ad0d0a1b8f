#pragma once
// The CPU time a batched LLM serving engine spends per iteration (`batching: {engine_cpu: ...}`,
// docs/llm-serving.md "Engine CPU time"). A synchronous engine loop (vLLM v0, Sarathi-Serve)
// schedules, builds the iteration's inputs, launches the model, samples and processes the
// outputs one after the other, so the GPU waits for the CPU steps. Per iteration of s sequences
// (prompt chunks and decoding sequences together):
//
//   t_cpu(s) = per_iteration + per_sequence x s                                    [ns]
//
// charged before the iteration's first kernel (models/run/batching.cpp): the tenant's GPU is
// idle meanwhile, and a neighbour's kernels fill it under MPS and time-slicing. The real engine
// spends its sampling and output processing after the kernels; charging them before moves each
// request's completion and first token earlier by that part of its last iteration (about half of
// t_cpu), but neither the time between iterations nor the throughput.
//
// Both terms, and the eager dispatch below, are host CPU time fitted on the A100 DGX's host, the
// reference of models/gpu/host_cpu.hpp: on a host of speed s each is divided by s (resolve.cpp
// and llm_card.cpp apply it; a user's own terms are their host's and stay as written).
//
// Named engines (the law's two parameters each):
//   vllm-v0  fitted: calibration/data/vidur/cpu_overheads__a100.csv (Vidur, MIT; the Sarathi-
//            Serve LLMEngine with the vLLM scheduler, on the A100 DGX's host), columns
//            schedule + prepare_inputs_e2e + sampler_e2e + process_model_outputs (medians), by
//            least squares on batch size, by script calibration/fit/engine_cpu.py (report
//            calibration/fit/ENGINE-CPU.md): tp 1: 0.813 ms + 42.3 us per sequence (26 rows,
//            Llama-2-7B and phi-2; median error 0.8 % in sample, 0.8 % leaving one model out);
//            tp > 1: 1.736 ms + 41.4 us per sequence (52 rows, 4 models; 6.6 %, 8.8 %). Held
//            out: the same engine on the A40 server's host CPU is 34 % (tp 1) and 69 % (tp > 1)
//            slower than the fit (its own: 1.28 ms + 62.9 us at tp 1): the fit is a host's, not
//            a GPU's. Vidur's `ray_comm_time` (about 6 ms per iteration at tp > 1, Ray worker
//            messaging) is left out: assumption: engines of today drive
//            their TP workers with shared-memory broadcast, not Ray RPCs.
//   none     an engine whose CPU work overlaps the GPU's (TensorRT-LLM's C++ executor, SGLang's
//            overlap scheduler, vLLM V1's async scheduling): assumption: fully hidden, 0 + 0.
// A user who measured their own engine writes `engine_cpu: {per_iteration: ..., per_sequence:
// ...}`. Default: none (docs/llm-serving.md says why it is not yet vllm-v0 for `llm:` cards).
//
// The same engine's eager dispatch (`llm: {host_per_op: vllm-v0}`, models/workload/llm_card.hpp):
// run without CUDA graphs (vLLM before CUDA-graph decode, or `--enforce-eager`), its Python host
// dispatches every kernel of a step in turn (the model's modules, the views and allocations
// between kernels, torch.distributed's all-reduce calls, per tensor-parallel worker) while the
// GPU runs the kernels already queued, so a launch of n real kernels lasts at least n x
// host_per_op, at every tensor-parallel degree: a decode step whose weights' read per GPU is
// shorter than its dispatch costs the dispatch (Llama-2-70B: 966 kernels per step).
//   vllm-v0  fitted: 46.382 us per kernel on the reference host (the DGX A100's), on
//            calibration/fit/llm/eager-dispatch.csv (Splitwise's Llama-2-70B TPOT at TP 8 on the
//            DGX A100 and the DGX H100, where the measured TPOT no longer falls with TP), each
//            point's host at its profile's host CPU speed (models/gpu/host_cpu.hpp: the DGX
//            H100's 1.583, sourced), by script calibration/fit/llm_eager_dispatch.py (report
//            calibration/fit/LLM-DISPATCH.md): median error 3.2 % in sample, 6.6 % leaving one
//            host out (18.9 % and 39.3 % when one number served both hosts; each host's own fit
//            in reference units: 44.9 us A100, 47.9 us H100). Out of sample (the 20 other
//            Splitwise points, TP 2 and 4 and every TTFT): catalog_published.py.
//            Assumption: Splitwise's engine is such an eager vLLM (its prototype is built on
//            vLLM; the perf model does not name the version).
#include <string>

#include "models/workload/workload_spec.hpp"

namespace gpumux {

inline constexpr Nanos kVllmV0PerIterationTp1 = 813'126;   ///< ns, fitted (above)
inline constexpr Nanos kVllmV0PerIterationTp = 1'735'759;  ///< ns at tp > 1, fitted (above)
inline constexpr Nanos kVllmV0PerSequenceTp1 = 42'314;     ///< ns per sequence, fitted (above)
inline constexpr Nanos kVllmV0PerSequenceTp = 41'357;      ///< ns per sequence at tp > 1, fitted
inline constexpr Nanos kVllmV0HostPerOp = 46'382;  ///< ns per eager kernel, reference host, fitted

/// The named engines `engine_cpu:` accepts.
inline const char* const kEngineCpuNames[] = {"vllm-v0", "none"};

/// The parameters of engine `name` ("vllm-v0" or "none") at tensor-parallel degree `tp`
/// (origin left to the caller). Precondition: name is one of kEngineCpuNames. O(1).
inline EngineCpu named_engine_cpu(const std::string& name, int tp) {
  EngineCpu e;
  e.name = name;
  if (name == "vllm-v0") {
    e.per_iteration = tp > 1 ? kVllmV0PerIterationTp : kVllmV0PerIterationTp1;
    e.per_sequence = tp > 1 ? kVllmV0PerSequenceTp : kVllmV0PerSequenceTp1;
  }
  return e;
}

}  // namespace gpumux
