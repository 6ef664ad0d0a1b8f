#pragma once
// Host time of a catalog request: what the CPU and the host link spend around its kernels
// (issue 33 item 2; docs/calibration.md, "The time-alone parameters"). The law:
//
//   host_before = T_req + T_h + (B_in + B_out) / W_link + T_fe  (inference; training: 0)
//   T_fe        = L_fe + (B_in + B_out) / W_fe            (0 without `serving:`)
//   host_gap    = N_ops x t_op / K                        (0 under a CUDA graph)
//
// T_req is the profile's host_per_request of the runtime (fitted, `gpumux calibrate`): the
// runtime's own call, enqueue and synchronisation. T_h is the profile's harness_per_request of the
// benchmark harness the workload names (`workload.harness:`, e.g. mlperf-loadgen; 0 without
// one): what the harness around the runtime spends per request, its load generator's issue and
// completion of a query and the harness's own path to and from the runtime (fitted, `gpumux
// calibrate`, on the points whose harness column names it). B_in and
// B_out the request's input and output bytes (catalog_model.hpp request_io_bytes: the tensors'
// element count times the size of `workload.io_dtype`, the type the client sends, which is the
// compute dtype unless given; a TF-TRT SavedModel keeps an fp32 signature around its fp16
// engines, so its images travel as 4 bytes per element), W_link the
// profile's pcie_bandwidth (0 = copies not modelled), N_ops the framework operators of one
// request, t_op the runtime's host_per_op (kernel-families.yaml `runtimes:`) and K the kernels of
// one request. host_before is spent once per request before its first kernel (post-processing
// and the output copy are moved there: the request's latency and the GPU's idle time are the
// same sums); host_gap paces each launch (models/run/launch.cpp).
//
// T_fe is the serving front end's time (`workload.serving:`, e.g. triton-grpc): what a client
// of an inference server waits beyond the backend's own work. L_fe is its fixed time per request
// (client send and receive, the protocol round trip, the server's request handling), W_fe the
// rate at which it moves the request's payload through serialization and the socket (0 = the
// payload costs no front-end time: system shared memory). Both come from kernel-families.yaml
// `serving:` (fitted on calibration/fit/triton-frontend.csv by calibration/fit/triton_frontend.py).
// Like T_req it is host time: it delays the request, it holds no GPU and no time slice.
//
// Host CPU speed (models/gpu/host_cpu.hpp): T_req, t_op, L_fe and the payload's front-end time
// are single-thread CPU work fitted on a host of speed s_fit, so on the tenant's host (speed s)
//
//   T_req = T_req,profile x s_profile / s,   T_h = T_h,profile x s_profile / s,
//   t_op = t_op,runtime / s,
//   T_fe  = (L_fe + (B_in + B_out) / W_fe) / s
//
// (the runtimes' and front ends' values are the reference host's, s_fit = 1; the profile's
// host_per_request its own host's). s is the GPU profile's `host_cpu:` speed unless the tenant
// writes `host: {cpu_speed: ...}`; the copy (B_in + B_out) / W_link is the link's, not scaled.
// With s equal to the fitted speed every term is the unscaled one, bit for bit.
//
// A tenant's `workload.host:` block (HostOverrides) replaces any of T_req, B_in, B_out, W_link,
// t_op, L_fe and W_fe with the user's own measurement (their host's: not scaled); a term it
// leaves out keeps the model's value. Cost: O(1).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

struct DeviceProfile;

/// `workload.host: {per_request, input_bytes, output_bytes, link_bandwidth, per_op}` of a
/// catalog tenant: each given term replaces the model's (nullopt = the model's value).
struct HostOverrides {
  std::optional<Nanos> per_request;           ///< T_req, ns per request
  std::optional<double> input_bytes;          ///< B_in, bytes host to device per request
  std::optional<double> output_bytes;         ///< B_out, bytes device to host per request
  std::optional<double> link_bandwidth;       ///< W_link, bytes/s per direction (> 0)
  std::optional<Nanos> per_op;                ///< t_op, ns per framework operator
  std::optional<Nanos> front_end_latency;     ///< L_fe, ns per request (needs `serving:`)
  std::optional<double> front_end_bandwidth;  ///< W_fe, bytes/s (needs `serving:`; > 0)
  /// s, the host CPU's single-thread speed relative to the reference host (host_cpu.hpp), from
  /// `cpu_speed: 1.3` or `cpu_speed: dgx-h100`; cpu_name is the name given ("" for a number).
  std::optional<double> cpu_speed;
  std::string cpu_name;
  /// True when any term is given.
  bool any() const { return any_request_term() || per_op || cpu_speed; }
  /// True when a term of the per-request host time (all but per_op) is given.
  bool any_request_term() const {
    return per_request || input_bytes || output_bytes || link_bandwidth || front_end_latency ||
           front_end_bandwidth;
  }
};

/// A serving front end between the client and the runtime (`workload.serving:`,
/// kernel-families.yaml `serving:`): T_fe = latency + payload bytes / bandwidth.
struct ServingFrontEnd {
  std::string name;        ///< "triton-grpc", ...; "" = none (T_fe = 0)
  Nanos latency = 0;       ///< L_fe, ns per request
  double bandwidth = 0;    ///< W_fe, bytes/s; 0 = the payload costs no front-end time
  std::string provenance;  ///< where L_fe and W_fe come from (kernel-families.yaml)
};

/// The host terms of one catalog request and where each came from.
struct HostTerms {
  Nanos per_request = 0;           ///< T_req
  double input_bytes = 0;          ///< B_in
  double output_bytes = 0;         ///< B_out
  double link_bandwidth = 0;       ///< W_link, bytes/s; 0 = copies not modelled
  Nanos copy_time = 0;             ///< (B_in + B_out) / W_link, rounded to ns
  double per_op_s = 0;             ///< t_op, seconds
  std::string serving;             ///< the front end's name; "" = none
  Nanos front_end_latency = 0;     ///< L_fe
  double front_end_bandwidth = 0;  ///< W_fe, bytes/s; 0 = payload free
  Nanos front_end_time = 0;        ///< T_fe = L_fe + (B_in + B_out) / W_fe, rounded to ns
  std::string harness;             ///< the benchmark harness's name; "" = none
  Nanos harness_time = 0;          ///< T_h, the profile's harness_per_request scaled to s
  double cpu_speed = 1;            ///< s, the host CPU's relative speed the terms are scaled to
  std::string cpu;                 ///< its name (host_cpu.hpp) or "" for a user's number
  /// "user" when the tenant's host: block gave the term, else "profile" / "catalog" / "runtime"
  /// / "serving" (kernel-families.yaml `serving:`).
  std::string per_request_origin, bytes_origin, link_origin, per_op_origin;
  std::string front_end_latency_origin, front_end_bandwidth_origin, cpu_origin;
  /// host_before = per_request + harness_time + copy_time + front_end_time.
  Nanos before_first_kernel() const {
    return per_request + harness_time + copy_time + front_end_time;
  }
};

/// The host terms of an inference request of `runtime` on `gpu` moving `input_bytes` and
/// `output_bytes`, dispatched at `runtime_per_op_s` seconds per operator on the reference host,
/// served through `front_end` (name "" = none), timed by the benchmark `harness` ("" = none; a
/// name the profile's harness_per_request lacks counts 0: the caller checks it,
/// profile_harness_names), with `overrides` applied and the model's CPU terms scaled to the
/// host's speed (law above). O(1).
HostTerms request_host_terms(const DeviceProfile& gpu, const std::string& runtime,
                             double runtime_per_op_s, double input_bytes, double output_bytes,
                             const HostOverrides& overrides, const ServingFrontEnd& front_end = {},
                             const std::string& harness = "");

/// The benchmark harnesses `gpu` has a host time for (its harness_per_request keys), sorted.
std::vector<std::string> profile_harness_names(const DeviceProfile& gpu);

/// The host CPU speed s of a tenant on `gpu`: `overrides.cpu_speed`, else the profile's. O(1).
double tenant_host_cpu_speed(const DeviceProfile& gpu, const HostOverrides& overrides);

/// t_op on the tenant's host: the user's `per_op` as given, else runtime_per_op_s / s. O(1).
double host_per_op_seconds(const DeviceProfile& gpu, double runtime_per_op_s,
                           const HostOverrides& overrides);

/// host_gap = ops x per_op_s / kernels, rounded to ns; 0 for a CUDA graph or no kernels.
Nanos host_gap_per_launch(double ops, double per_op_s, std::size_t kernels, bool cuda_graph);

}  // namespace gpumux
