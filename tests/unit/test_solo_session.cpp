// Device::SoloSession (models/gpu/device_solo.hpp): a device's only client runs the device's
// events itself. Closed forms for one kernel alone, the lone_* operations against the queued
// path, and what closing the session leaves behind. (Random scenarios through the whole direct
// path: test_direct_path.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/gpu/device_solo.hpp"
#include "models/strategies/exclusive/strategy.hpp"
#include "sim/core/simulator.hpp"

namespace gpumux {
namespace {

constexpr double kWork = 1e6;  // solo-ns
constexpr Nanos kStart = 100;

struct FinishRecorder : KernelOwner {
  void on_kernel_finished(KernelRun&, Nanos now) override { finish = now; }
  Nanos finish = -1;
};

// An exclusive whole H100-like GPU (132 SMs, no L2 law in play) with tenant 0 attached.
std::unique_ptr<Device> exclusive_gpu(Simulator& sim) {
  const DeviceGeometry geometry{"gpu0", "test", 132, 132, 1.0, 80LL << 30, 1.0, 50e6, 0.34};
  std::unique_ptr<StrategyParams> params = exclusive_strategy().make_params();
  std::unique_ptr<Device> device = exclusive_strategy().make_device(sim, geometry, *params);
  std::string reason;
  EXPECT_TRUE(device->attach_client(0, reason)) << reason;
  return device;
}

// Half the GPU's SMs, 30 % of the time on HBM, nothing re-read from L2: alone it holds 66 SMs
// and runs at its solo rate, 1 solo-ns per ns.
KernelRun half_gpu_kernel(KernelOwner* owner) {
  KernelRun k;
  k.owner = owner;
  k.tenant = 0;
  k.work = kWork;
  k.remaining = kWork;
  k.sm_fraction = 0.5;
  k.memory_bound = 0.3;
  k.waves = 1.0;
  return k;
}

TEST(SoloSession, ClosingQueuesTheDevicesNextCompletion) {
  Simulator sim;
  std::unique_ptr<Device> device = exclusive_gpu(sim);
  FinishRecorder owner;
  KernelRun kernel = half_gpu_kernel(&owner);
  EXPECT_TRUE(Device::SoloSession::available(*device, 0));
  EXPECT_FALSE(Device::SoloSession::available(*device, 1));  // not its client
  Nanos finish = -1;
  sim.schedule_at(kStart, [&] {
    Device::SoloSession session(*device);
    finish = session.submit(kernel);
    EXPECT_EQ(sim.pending(), 0u);  // nothing queued while the session is open
  });
  sim.run_until(kStart);
  EXPECT_EQ(finish, kStart + static_cast<Nanos>(kWork));  // rate 1: W solo-ns take W ns
  EXPECT_EQ(sim.pending(), 1u);                           // the completion, queued at close
  EXPECT_FALSE(Device::SoloSession::available(*device, 0));
  sim.run();
  EXPECT_EQ(owner.finish, finish);
  EXPECT_TRUE(Device::SoloSession::available(*device, 0));
  // Half the SMs and 30 % of the HBM bandwidth for W ns, nothing before or after.
  const Nanos later = finish + 1000;
  EXPECT_DOUBLE_EQ(device->busy_integral(later), 0.5 * kWork);
  EXPECT_DOUBLE_EQ(device->dram_integral(later), 0.3 * kWork);
  EXPECT_DOUBLE_EQ(device->client_sm_integral(0, later), 66.0 * kWork);
  EXPECT_NEAR(device->work_completed(), kWork, completion_tolerance(kWork));
}

// The one-kernel-shape operations make the device's changes of the queued path for its kernel:
// the same finish, integrals and work accounts, bit for bit.
TEST(SoloSession, LoneOperationsMakeTheQueuedPathsChanges) {
  Simulator queued_sim;
  std::unique_ptr<Device> queued = exclusive_gpu(queued_sim);
  FinishRecorder owner;
  KernelRun kernel = half_gpu_kernel(&owner);
  queued_sim.schedule_at(kStart, [&] { queued->submit(kernel); });
  queued_sim.run();

  Simulator sim;
  std::unique_ptr<Device> device = exclusive_gpu(sim);
  Nanos finish = -1;
  {
    Device::SoloSession session(*device);
    KernelRun probe = half_gpu_kernel(nullptr);
    const double rate = session.lone_rate(probe);
    EXPECT_EQ(rate, 1.0);
    session.lone_started(kStart);
    finish = kStart + static_cast<Nanos>(std::ceil(kWork / rate));
    const double remaining = session.lone_advance(finish, kWork);
    EXPECT_LE(remaining, completion_tolerance(kWork));
    session.lone_finished(kWork, remaining);
    session.lone_idle(finish);
  }
  EXPECT_EQ(sim.pending(), 0u);  // nothing left running: nothing queued at close
  EXPECT_EQ(finish, owner.finish);
  const Nanos later = finish + 1000;
  EXPECT_EQ(device->busy_integral(later), queued->busy_integral(later));
  EXPECT_EQ(device->useful_integral(later), queued->useful_integral(later));
  EXPECT_EQ(device->dram_integral(later), queued->dram_integral(later));
  EXPECT_EQ(device->client_sm_integral(0, later), queued->client_sm_integral(0, later));
  EXPECT_EQ(device->work_progressed(), queued->work_progressed());
  EXPECT_EQ(device->work_completed(), queued->work_completed());
}

// A session left by an exception queues nothing, and the device is back to queued operation.
TEST(SoloSession, AnExceptionClosesTheSessionWithoutQueueing) {
  Simulator sim;
  std::unique_ptr<Device> device = exclusive_gpu(sim);
  FinishRecorder owner;
  KernelRun kernel = half_gpu_kernel(&owner);
  EXPECT_THROW(
      {
        Device::SoloSession session(*device);
        session.submit(kernel);
        throw std::runtime_error("the caller failed");
      },
      std::runtime_error);
  EXPECT_EQ(sim.pending(), 0u);
  KernelRun next = half_gpu_kernel(&owner);
  device->submit(next);  // queued operation: its completion is scheduled
  EXPECT_EQ(sim.pending(), 1u);
}

}  // namespace
}  // namespace gpumux
