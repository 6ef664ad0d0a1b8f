#pragma once
// Strategies where every ready kernel holds the device at once and shares it through the fluid
// model: `exclusive` (one client: a dedicated GPU or MIG instance; its own concurrent requests
// share SMs and bandwidth) and `mps` (many clients' kernels run concurrently).
//
// MPS maths (per device, clients c with active-thread percentage p_c, interference alpha):
//   SM cap of client c:      sum_{k in c} (1 - m_k) f_k S_gpu r_k <= p_c/100 * S_dev
//   a kernel's solo bound:   rate_max with S_cap = p_c/100 * S_dev (kernel_run.hpp)
//   bandwidth use of k:      m_k * (1 + alpha * (n_mem - 1)) per unit rate, where n_mem is the
//                            number of distinct clients with a memory-touching (m > 0) kernel
//                            running — co-running memory-bound streams thrash L2 and DRAM rows.
// With alpha = 0 two memory-bound kernels (m = 1) each run 2x slower (half the bandwidth each),
// and two compute kernels of grid f = 0.5 each run unslowed (66 + 66 of 132 SMs).
// Client limit: attach_client refuses client number max_clients + 1 (48; 60 from CUDA 13.1).
#include "models/device.hpp"

namespace gpumux {

class ConcurrentDevice : public Device {
 public:
  ConcurrentDevice(Simulator& sim, DeviceGeometry geometry, SharingSpec sharing, int max_clients,
                   double interference);

  bool attach_client(int tenant, std::string& reason) override;
  void submit(KernelRun& kernel) override;
  void remove_client_kernels(int tenant) override;

 protected:
  void prepare_recompute() override;
  void add_constraints(MaxMinProblem& problem) override;
  bool has_client_constraints() const override { return thread_share() < 1.0; }
  double sm_cap_for(const KernelRun& kernel) const override;
  double bandwidth_inflation(const KernelRun& kernel) const override;

 private:
  double thread_share() const;  // p/100

  int max_clients_;
  double interference_;
  int memory_clients_running_ = 0;
};

}  // namespace gpumux
