#include "models/gpu/concurrent.hpp"

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"

namespace gpumux {

ConcurrentDevice::ConcurrentDevice(Simulator& sim, DeviceGeometry geometry, SharingLimits limits)
    : Device(sim, std::move(geometry), std::move(limits)) {}

bool ConcurrentDevice::attach_client(int tenant, std::string& reason) {
  const int max_clients = limits().max_clients;
  if (max_clients > 0 && static_cast<int>(clients().size()) >= max_clients) {
    if (limits().shared_server) {
      reason = fmt::format(
          "MPS server on {} already has {} clients (limit {}; {} up to CUDA 13.0, {} from CUDA "
          "13.1, scaled down by compute-instance size inside MIG)",
          geometry().name, clients().size(), max_clients, kMpsMaxClients,
          kMpsMaxClientsFromCuda13_1);
    } else {
      reason = geometry().name + " is exclusive and already has a client";
    }
    return false;
  }
  return Device::attach_client(tenant, reason);
}

void ConcurrentDevice::submit(KernelRun& kernel) {
  start_running(kernel);
  recompute_soon();
}

void ConcurrentDevice::remove_client_kernels(int tenant) {
  remove_running_of(tenant);
  recompute_soon();
}

double ConcurrentDevice::client_sm_cap() const {
  return gpumux::client_sm_cap(limits(), geometry().sms);
}

}  // namespace gpumux
