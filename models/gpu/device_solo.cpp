// Device::SoloSession (device_solo.hpp): the device's events for its only client without the
// event queue (models/run/direct.cpp), the same state changes in the same order as the queued
// path.
#include "models/gpu/device_solo.hpp"

#include <cassert>
#include <exception>

#include "sim/util/checked.hpp"

namespace gpumux {

Device::SoloSession::SoloSession(Device& device)
    : device_(device), exceptions_at_open_(std::uncaught_exceptions()) {
  // (inline_: no event is pending, none is scheduled; finish_recompute hands the next
  // completion to inline_next_)
  device.inline_ = true;
}

Device::SoloSession::~SoloSession() {
  Device& d = device_;
  d.inline_ = false;
  if (completion_ != kNever && std::uncaught_exceptions() == exceptions_at_open_) {
    d.completion_event_ =
        d.sim_.schedule_at(completion_, make_event<&Device::on_completion>(d), kPriorityCompletion);
  }
}

Nanos Device::SoloSession::submit(KernelRun& kernel) {
  device_.start_running(
      kernel);  // submit(): ConcurrentDevice's, the one submits_at_once() strategy
  completion_ = device_.inline_recompute_solo();
  return completion_;
}

// complete_finished() for the one running kernel, up to the owner's notification.
bool Device::SoloSession::complete(KernelRun& kernel, Nanos& next) {
  Device& d = device_;
  d.advance();
  const double tolerance = completion_tolerance(kernel.work);
  if (kernel.remaining <= tolerance) {
    d.running_.clear();
    d.work_completed_ += kernel.work - kernel.remaining;
    kernel.rate = 0;
    kernel.occupancy = 0;
    d.batching_ = true;
    completion_ = kNever;
    return true;
  }
  // Runs on: complete_finished() with nothing finished, recomputed in full (inline_: the next
  // completion in inline_next_).
  d.after_completions();
  d.recompute();
  next = d.inline_next_;
  completion_ = next;
  return false;
}

Nanos Device::SoloSession::end_completions() {
  device_.batching_ = false;
  device_.after_completions();
  completion_ = device_.inline_recompute_solo();
  return completion_;
}

double Device::SoloSession::lone_rate(KernelRun& probe) {
  Device& d = device_;
  contention::apply_law_phases(probe, d.geometry_);  // as start_running()
  if (const SoloCache* cached = d.find_solo(contention::solo_key(probe))) {
    lone_ = *cached;
  } else {
    // share_sms()' one-kernel branch on the probe alone, then its bound with its lone
    // l2_factor (what inline_recompute_solo() computes for a new kernel).
    probe.occupancy = 0;
    probe.l2_factor = contention::lone_l2_factor(probe, d.geometry_);
    d.running_.push_back(&probe);
    SharingState s = d.sharing_state();
    d.law_->share_sms(s);
    d.running_.pop_back();
    lone_ = d.remember_solo(d.solo_of(probe));
  }
  rate_ = lone_.occupancy > 0 ? lone_.bound : 0.0;
  running_ = d.solo_levels(lone_.occupancy, lone_.bandwidth);
  idle_ = d.solo_levels(0.0, 0.0);
  return rate_;
}

void Device::SoloSession::lone_adopt(KernelRun& kernel, Nanos completion) {
  assert(rate_ > 0);
  kernel.occupancy = lone_.occupancy;
  kernel.l2_factor = lone_.l2_factor;
  kernel.solo_bound = lone_.bound;
  kernel.solo_bound_occupancy = lone_.occupancy;
  kernel.rate_max = rate_;
  kernel.rate = rate_;
  kernel.sm_demand = -1;
  contention::apply_law_phases(kernel, device_.geometry_);  // as start_running()
  device_.running_.push_back(&kernel);
  completion_ = completion;
}

// recompute() when the device runs nothing or one kernel that holds no SMs yet (just submitted),
// for the only client, inline. Step by step the same arithmetic:
//  - advance(): nothing progresses (an empty device, or a kernel at rate 0), the clock moves;
//  - the law's share_sms() one-kernel branch gives a new kernel law 1's grant (0 held, all SMs
//  free), a
//    function of its grid width f alone (the client's cap is fixed), and rate_bound() with
//    its lone l2_factor a function of f, m, its working set and that grant: both kept in the
//    solo cache (kSoloCacheEntries slots by contention::solo_key), so a repeated kernel skips
//    them (each is exactly the value computed again);
//  - one kernel holds SMs at most: rate = rate_max, no L2 or HBM sharing;
//  - finish_recompute(): the finish time and update_busy().
Nanos Device::inline_recompute_solo() {
  const Nanos now = sim_.now();
  last_advance_ = now;
  prepare_recompute();
  Nanos next = kNever;
  double bandwidth = 0;  // the running kernel's HBM use (its cache entry's)
  if (!running_.empty()) {
    KernelRun& k = *running_.front();
    const SoloCache* cached = find_solo(contention::solo_key(k));
    if (cached == nullptr) {
      SharingState s = sharing_state();
      law_->share_sms(s);  // (law 1's grant for one kernel)
      k.l2_factor = contention::lone_l2_factor(k, geometry_);
      cached = &remember_solo(solo_of(k));
    }
    const SoloCache& solo = *cached;
    bandwidth = solo.bandwidth;
    k.occupancy = solo.occupancy;
    k.l2_factor = solo.l2_factor;
    if (k.occupancy > 0) {
      if (k.first_start < 0) k.first_start = now;  // the grant's record, the grant from the cache
      k.solo_bound = solo.bound;
      k.solo_bound_occupancy = k.occupancy;
      k.rate_max = k.solo_bound;
    } else {
      k.rate_max = 0.0;
    }
    k.rate = k.rate_max;
    if (k.rate > 0) {
      const Nanos wait = checked::ceil_nanos_saturating(k.remaining / k.rate);
      if (wait < kNever - now) next = now + wait;
    }
  }
  if (running_.empty()) {
    set_solo_idle(now, solo_levels(0.0, 0.0));
  } else {
    const KernelRun& k = *running_.front();
    set_solo_running(now, solo_levels(k.occupancy, bandwidth));
  }
  return next;
}

Device::SoloCache Device::solo_of(const KernelRun& k) const {
  // (k holds its grant and its lone l2_factor)
  const double bound = k.occupancy > 0 ? rate_bound(k, k.occupancy) : 0.0;
  return SoloCache{contention::solo_key(k), k.occupancy, bound, k.l2_factor,
                   k.occupancy > 0 ? contention::hbm_use(k, bound, geometry_) : 0.0};
}

}  // namespace gpumux
