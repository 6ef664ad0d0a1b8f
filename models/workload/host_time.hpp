#pragma once
// Host time of a catalog request: what the CPU and the host link spend around its kernels
// (issue 33 item 2; docs/calibration.md, "The time-alone parameters"). The law:
//
//   host_before = T_req + (B_in + B_out) / W_link        (inference; training: 0)
//   host_gap    = N_ops x t_op / K                       (0 under a CUDA graph)
//
// T_req is the profile's host_per_request of the runtime (fitted, `gpumux calibrate`), B_in and
// B_out the request's input and output bytes (catalog_model.hpp request_io_bytes), W_link the
// profile's pcie_bandwidth (0 = copies not modelled), N_ops the framework operators of one
// request, t_op the runtime's host_per_op (kernel-families.yaml `runtimes:`) and K the kernels of
// one request. host_before is spent once per request before its first kernel (post-processing
// and the output copy are moved there: the request's latency and the GPU's idle time are the
// same sums); host_gap paces each launch (models/run/launch.cpp).
//
// A tenant's `workload.host:` block (HostOverrides) replaces any of T_req, B_in, B_out, W_link
// and t_op with the user's own measurement; a term it leaves out keeps the model's value.
// Cost: O(1).
#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/time.hpp"

namespace gpumux {

struct DeviceProfile;

/// `workload.host: {per_request, input_bytes, output_bytes, link_bandwidth, per_op}` of a
/// catalog tenant: each given term replaces the model's (nullopt = the model's value).
struct HostOverrides {
  std::optional<Nanos> per_request;      ///< T_req, ns per request
  std::optional<double> input_bytes;     ///< B_in, bytes host to device per request
  std::optional<double> output_bytes;    ///< B_out, bytes device to host per request
  std::optional<double> link_bandwidth;  ///< W_link, bytes/s per direction (> 0)
  std::optional<Nanos> per_op;           ///< t_op, ns per framework operator
  /// True when any term is given.
  bool any() const {
    return per_request || input_bytes || output_bytes || link_bandwidth || per_op;
  }
  /// True when a term of the per-request host time (all but per_op) is given.
  bool any_request_term() const {
    return per_request || input_bytes || output_bytes || link_bandwidth;
  }
};

/// The host terms of one catalog request and where each came from.
struct HostTerms {
  Nanos per_request = 0;      ///< T_req
  double input_bytes = 0;     ///< B_in
  double output_bytes = 0;    ///< B_out
  double link_bandwidth = 0;  ///< W_link, bytes/s; 0 = copies not modelled
  Nanos copy_time = 0;        ///< (B_in + B_out) / W_link, rounded to ns
  double per_op_s = 0;        ///< t_op, seconds
  /// "user" when the tenant's host: block gave the term, else "profile" / "catalog" / "runtime".
  std::string per_request_origin, bytes_origin, link_origin, per_op_origin;
  /// host_before = per_request + copy_time.
  Nanos before_first_kernel() const { return per_request + copy_time; }
};

/// The host terms of an inference request of `runtime` on `gpu` moving `input_bytes` and
/// `output_bytes`, dispatched at `runtime_per_op_s` seconds per operator, with `overrides`
/// applied. O(1).
HostTerms request_host_terms(const DeviceProfile& gpu, const std::string& runtime,
                             double runtime_per_op_s, double input_bytes, double output_bytes,
                             const HostOverrides& overrides);

/// host_gap = ops x per_op_s / kernels, rounded to ns; 0 for a CUDA graph or no kernels.
Nanos host_gap_per_launch(double ops, double per_op_s, std::size_t kernels, bool cuda_graph);

}  // namespace gpumux
