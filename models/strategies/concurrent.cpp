#include "models/strategies/concurrent.hpp"

#include <algorithm>
#include <vector>

namespace gpumux {

ConcurrentDevice::ConcurrentDevice(Simulator& sim, DeviceGeometry geometry, SharingSpec sharing,
                                   int max_clients, double interference)
    : Device(sim, std::move(geometry), std::move(sharing)),
      max_clients_(max_clients),
      interference_(interference) {}

bool ConcurrentDevice::attach_client(int tenant, std::string& reason) {
  if (static_cast<int>(clients().size()) >= max_clients_) {
    if (sharing().mode == SharingMode::mps) {
      reason = "MPS server on " + geometry().name + " already has " +
               std::to_string(clients().size()) + " clients (limit " +
               std::to_string(max_clients_) + "; 48 up to CUDA 13.0, 60 from CUDA 13.1)";
    } else {
      reason = geometry().name + " is exclusive and already has a client";
    }
    return false;
  }
  return Device::attach_client(tenant, reason);
}

double ConcurrentDevice::thread_share() const {
  if (sharing().mode != SharingMode::mps) return 1.0;
  return sharing().active_thread_percentage.value_or(100.0) / 100.0;
}

void ConcurrentDevice::submit(KernelRun& kernel) {
  start_running(kernel);
  recompute_soon();
}

void ConcurrentDevice::remove_client_kernels(int tenant) {
  remove_running_of(tenant);
  recompute_soon();
}

void ConcurrentDevice::prepare_recompute() {
  std::vector<int> memory_clients;
  for (const KernelRun* k : running()) {
    if (k->memory_bound > 0 &&
        std::find(memory_clients.begin(), memory_clients.end(), k->tenant) == memory_clients.end()) {
      memory_clients.push_back(k->tenant);
    }
  }
  memory_clients_running_ = static_cast<int>(memory_clients.size());
}

void ConcurrentDevice::add_constraints(MaxMinProblem& problem) {
  const double share = thread_share();
  if (share >= 1.0) return;
  // One SM constraint per client that has running kernels.
  std::vector<int> seen;
  for (const KernelRun* k : running()) {
    if (std::find(seen.begin(), seen.end(), k->tenant) != seen.end()) continue;
    seen.push_back(k->tenant);
    const int c = problem.add_constraint(share * geometry().sms);
    for (std::size_t i = 0; i < running().size(); ++i) {
      const KernelRun* other = running()[i];
      if (other->tenant == k->tenant) {
        problem.add_consumption(static_cast<int>(i), c,
                                (1.0 - other->memory_bound) * other->sm_fraction *
                                    geometry().gpu_sms);
      }
    }
  }
}

double ConcurrentDevice::sm_cap_for(const KernelRun& /*kernel*/) const {
  return thread_share() * geometry().sms;
}

double ConcurrentDevice::bandwidth_inflation(const KernelRun& /*kernel*/) const {
  if (memory_clients_running_ <= 1) return 1.0;
  return 1.0 + interference_ * (memory_clients_running_ - 1);
}

}  // namespace gpumux
