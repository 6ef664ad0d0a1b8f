#pragma once
// The workload catalog's model: a catalog entry (models/config/workload_catalog.hpp) and a
// request (batch, sequence length, dtype, phase) become the request's kernels on a GPU model, by
// first principles (docs/workloads.md has the derivation and every layer table). In short:
//
//   Layers    the family's layer list from the architecture (He et al. 2016 Table 1; Devlin et
//             al. 2019; Dosovitskiy et al. 2021; Radford et al. 2019): each layer is a GEMM
//             (count x M x N x K; a convolution as the implicit GEMM M = batch x H_out x W_out,
//             N = C_out, K = C_in x k x k) or an elementwise/normalisation kernel over E elements.
//             Training adds, per GEMM, the data-gradient and weight-gradient GEMMs (same FLOPs,
//             same operand bytes), per elementwise kernel its backward (one more tensor read),
//             the optimizer step over the parameters and, data-parallel, the gradient
//             all-reduce.
//   FLOPs     F = 2 M N K count (multiply-add = 2); elementwise F = E x flops per element.
//   Bytes     compulsory HBM traffic at the dtype's size s: GEMM (|A| + |B| + |C|) s,
//             elementwise E (reads + writes) s (each tile's re-reads hit L2: `working_set`).
//   Grid      GEMM blocks G = count ceil(M / tile_m) ceil(N / tile_n); elementwise
//             G = ceil(E / (threads x items)); blocks per SM B_sm from the profile's sm_limits
//             and the family's threads/registers/shared memory (kernel_trace_model.hpp
//             blocks_per_sm); sm_fraction f = min(1, G / S), waves W = max(1, G / (B_sm S))
//             (kernel_trace_model.hpp grid_shape).
//   Roofline  on the whole GPU of S SMs: compute t_c = F / (eta P) x S ceil(G / S) / G (the
//             busiest SM computes ceil(G / S) blocks at P / S: a grid narrower than the GPU
//             uses only its SMs' tensor cores), memory t_m = bytes / B_HBM (the measured
//             bandwidth when the profile has it, else the datasheet's), duration
//             t = max(t_c, t_m); P = the profile's compute_throughput of the dtype (tensor
//             cores for GEMMs, fp32 for elementwise), eta = kernel-families' gemm efficiency
//             (1 for elementwise).
//   Boundedness  m = t_m / (t_c + t_m): the memory share of the serial compute and memory
//             phases models/gpu/kernel_run.hpp stretches (by 1/sigma and 1/beta).
//   Collective  all-reduce of the fp32 gradients over n GPUs, NCCL ring:
//             t = 2 (n - 1) / n x 4 x params / bus_bandwidth, m = 1, blocks = NCCL channels.
//   Memory    inference: weights (params x s) at start, two largest activations per request
//             (ping-pong buffers); training: params x (4 master + 4 gradient + optimizer state:
//             SGD-momentum 4, Adam 8) + every saved activation, all at start.
// Cost: O(layers) per tenant at resolve time; nothing at run time.
#include <cstdint>
#include <string>
#include <vector>

#include "models/config/workload_catalog.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/scenario/scenario.hpp"

namespace gpumux {

/// One layer's work before it meets a GPU.
struct LayerWork {
  enum class Kind { gemm, elementwise, collective };
  Kind kind = Kind::gemm;
  std::string name;
  // gemm: count independent M x N x K products (count > 1: a batched GEMM, e.g. attention)
  std::int64_t m = 0, n = 0, k = 0, count = 1;
  // elementwise: elements of its grid
  std::int64_t elements = 0;
  double flops = 0;        ///< total floating-point (or integer) operations
  double bytes = 0;        ///< compulsory HBM bytes
  double working_set = 0;  ///< bytes re-read through L2 (GEMM operands)
};

/// The roofline of one layer on `gpu` (whole GPU) at tensor peak `peak` (FLOP/s; the fp32 peak
/// for elementwise kernels comes from the profile). Throws std::invalid_argument when a peak the
/// layer needs is 0.
KernelSpec roofline_kernel(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth = 0,
                           int collective_gpus = 1);

/// The layers of one request (forward, and backward + optimizer in training) without the GPU.
struct CatalogLayers {
  std::vector<LayerWork> layers;
  std::int64_t params = 0;            ///< parameters
  std::int64_t weight_bytes = 0;      ///< params x dtype size
  std::int64_t activation_peak = 0;   ///< inference: two largest layer outputs, bytes
  std::int64_t activation_saved = 0;  ///< training: every forward output, bytes
  int seq_len = 0;                    ///< tokens per sequence used (0 for CNNs)
};
CatalogLayers catalog_layers(const CatalogEntry& entry, int batch, int seq_len,
                             const std::string& dtype, bool training);

/// A tenant's catalog workload on a GPU model.
struct CatalogWorkload {
  std::vector<KernelSpec> kernels;      ///< one request, in launch order (x steps)
  std::int64_t memory = 0;              ///< tenant start-up memory (weights / training state)
  std::int64_t memory_per_request = 0;  ///< inference activations
  CatalogLayers layers;
};

/// Builds `request` for `gpu`; `data_parallel` GPUs > 1 add the gradient all-reduce (training).
/// Throws InputError at `request.where` (or its dtype/phase/seq_len/batch key) for an unknown
/// model, a phase the entry lacks, a bad dtype, a sequence longer than the model's positions,
/// or a profile without the dtype's compute_throughput.
CatalogWorkload build_catalog_workload(const Scenario& scenario, const CatalogRequestSpec& request,
                                       const std::string& tenant_path, const DeviceProfile& gpu,
                                       int data_parallel);

/// A catalog tenant (`workload.model`) on `gpu`: its kernels and their origins (`catalog`), and
/// its memory (start-up and per request) unless the scenario sets `memory:` /
/// `workload.memory_per_request:`. resolve_scenario() calls it with the tenant's GPU model.
/// Throws InputError as build_catalog_workload.
void apply_catalog(const Scenario& scenario, TenantSpec& tenant, const DeviceProfile& gpu);

/// The scenario with apply_catalog on `gpu` for every catalog tenant: for callers that need
/// kernels and memory before tenants are placed (`gpumux plan`'s bounds and memory checks).
Scenario with_catalog_kernels(Scenario scenario, const DeviceProfile& gpu);

/// Bytes per element of a dtype name (fp16 2, fp32 4, fp8 1, ...); 0 for an unknown name.
int dtype_bytes(const std::string& dtype);
/// The profile's dense peak for GEMMs of `dtype` (0 = unknown).
double tensor_peak(const DeviceProfile& gpu, const std::string& dtype);

}  // namespace gpumux
