#pragma once
// SharingLimits: what the physics of one device needs to know about how it is shared — client
// caps, the SM share of a client, per-client memory limits, and the time-slicing scheduler's
// timings. Plain numbers, no configuration vocabulary: the strategy registry
// (models/strategies/registry.cpp) fills it from a scenario's `sharing:` block.
#include <cstdint>
#include <optional>

#include "sim/core/time.hpp"

namespace gpumux {

/// How a time-sliced context gives the device up at the end of its slice (time_slicing.hpp).
enum class PreemptionMode { instruction, kernel_boundary };

struct SharingLimits {
  /// Clients (CUDA contexts) the device accepts; attach_client refuses the next one.
  /// 0 = no limit.
  int max_clients = 0;
  /// The clients are clients of one MPS server: they share its fault domain (a fatal fault in
  /// one kills all) and the client limit is the server's.
  bool shared_server = false;
  /// SMs all kernels of one client may hold together, as a share of the device's (MPS active
  /// thread percentage / 100); 1 = the whole device.
  double thread_share = 1.0;
  /// Bytes one client may allocate (MPS pinned memory limit); unset = only the device's memory.
  std::optional<std::int64_t> client_memory_limit;
  /// Block dispatch between clients (MPS `client_order`): true = interleaved, a kernel of one
  /// client does not wait for an equally urgent kernel of another client to dispatch all its
  /// blocks (it takes SMs at that kernel's round ends and leftover room on its SMs, up to an equal
  /// split; contention_law.hpp, laws 1b and 1c); false = launch order across clients, as for the
  /// streams of one process.
  bool interleave_clients = false;

  // Time-slicing scheduler (used by TimeSlicingDevice only).
  Nanos timeslice = 1'024'000;
  Nanos context_switch = 0;
  Nanos preemption_latency = 0;
  Nanos cache_refill = 0;
  PreemptionMode preemption = PreemptionMode::instruction;
};

/// SMs all kernels of one client may hold together on a device of `device_sms` SMs: its thread
/// share of them (MPS: active thread percentage / 100 x S_dev). The one rule the device's grant
/// (ConcurrentDevice::client_sm_cap) and validate's capacity check both ask. O(1).
inline double client_sm_cap(const SharingLimits& limits, double device_sms) {
  return limits.thread_share * device_sms;
}

}  // namespace gpumux
