#pragma once
// Strategies where every ready kernel is submitted to the device at once and the device's
// residency and bandwidth laws (models/gpu/device.hpp) decide how they share it: `exclusive` (one
// client: a dedicated GPU or MIG instance; its own concurrent requests share SMs by residency
// and HBM by max-min) and `mps` (many clients' kernels on one device).
//
// MPS (per device, clients c with active-thread percentage p_c):
//   SMs all kernels of client c may hold together:  sum_{k in c} h_k <= p_c/100 * S_dev
//   (enforced when SMs are granted, so a capped client never takes more SMs than its share;
//   the block scheduler is otherwise first-come, first-served across clients).
// MPS adds no interference term of its own: co-running clients slow each other through SM
// residency (a newcomer waits for SMs), fair HBM sharing and L2 capacity (device.hpp).
// With two streaming kernels (m = 1) of grid f = 0.5 each runs 2x slower (half the bandwidth
// each); two compute kernels of grid f = 0.5 each run unslowed (66 + 66 of 132 SMs); two
// full-grid kernels run one after the other.
// Client limit: attach_client refuses client number max_clients + 1 (MPS: 48; 60 from CUDA 13.1;
// exclusive: 1).
#include "models/gpu/device.hpp"

namespace gpumux {

class ConcurrentDevice : public Device {
 public:
  ConcurrentDevice(Simulator& sim, DeviceGeometry geometry, SharingLimits limits);

  bool attach_client(int tenant, std::string& reason) override;
  void submit(KernelRun& kernel) override;
  void remove_client_kernels(int tenant) override;

 protected:
  double client_sm_cap() const override;
  bool submits_at_once() const override { return true; }

 private:
};

}  // namespace gpumux
