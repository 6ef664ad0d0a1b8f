#include "models/strategies/concurrent.hpp"

namespace gpumux {

ConcurrentDevice::ConcurrentDevice(Simulator& sim, DeviceGeometry geometry, SharingSpec sharing,
                                   int max_clients)
    : Device(sim, std::move(geometry), std::move(sharing)), max_clients_(max_clients) {}

bool ConcurrentDevice::attach_client(int tenant, std::string& reason) {
  if (static_cast<int>(clients().size()) >= max_clients_) {
    if (sharing().mode == SharingMode::mps) {
      reason = "MPS server on " + geometry().name + " already has " +
               std::to_string(clients().size()) + " clients (limit " +
               std::to_string(max_clients_) +
               "; 48 up to CUDA 13.0, 60 from CUDA 13.1, scaled down by compute-instance size "
               "inside MIG)";
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

double ConcurrentDevice::client_sm_cap(int /*tenant*/) const {
  return thread_share() * geometry().sms;
}

}  // namespace gpumux
