// Device's inline operation and solo session (device.hpp, "inline operation"): the device's
// events for its only client without the event queue (models/run/direct.cpp), the same state
// changes in the same order as the queued path.
#include "models/gpu/device.hpp"

#include "sim/util/checked.hpp"

namespace gpumux {

Nanos Device::inline_submit(KernelRun& kernel) {
  start_running(kernel);  // submit(): ConcurrentDevice's, the one submits_at_once() strategy
  return inline_recompute_solo();
}

// complete_finished() for the one running kernel, up to the owner's notification.
bool Device::inline_complete(KernelRun& kernel, Nanos& next) {
  advance();
  const double tolerance = completion_tolerance(kernel.work);
  if (kernel.remaining <= tolerance) {
    running_.clear();
    work_completed_ += kernel.work - kernel.remaining;
    kernel.rate = 0;
    kernel.occupancy = 0;
    batching_ = true;
    return true;
  }
  // Runs on: complete_finished() with nothing finished, recomputed in full.
  after_completions();
  inline_ = true;
  recompute();
  inline_ = false;
  next = inline_next_;
  return false;
}

Nanos Device::inline_end_completions() {
  batching_ = false;
  after_completions();
  return inline_recompute_solo();
}

// recompute() when the device runs nothing or one kernel that holds no SMs yet (just submitted),
// for the only client, inline. Step by step the same arithmetic:
//  - advance(): nothing progresses (an empty device, or a kernel at rate 0), the clock moves;
//  - the law's share_sms() one-kernel branch gives a new kernel law 1's grant (0 held, all SMs
//  free), a
//    function of its grid width f alone (the client's cap is fixed), and rate_bound() with
//    its lone l2_factor a function of f, m, its working set and that grant: both kept for the
//    last kSoloCacheEntries contention::solo_keys seen, so a repeated kernel skips them (each is
//    exactly the value computed again);
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

Device::SoloCache Device::solo_rates(KernelRun& probe) {
  contention::apply_law_phases(probe, geometry_);  // as start_running()
  if (const SoloCache* cached = find_solo(contention::solo_key(probe))) return *cached;
  // share_sms()' one-kernel branch on the probe alone, then its bound with its lone l2_factor
  // (what inline_recompute_solo() computes for a new kernel).
  probe.occupancy = 0;
  probe.l2_factor = contention::lone_l2_factor(probe, geometry_);
  running_.push_back(&probe);
  SharingState s = sharing_state();
  law_->share_sms(s);
  running_.pop_back();
  return remember_solo(solo_of(probe));
}

void Device::adopt_solo_kernel(KernelRun& kernel) {
  contention::apply_law_phases(kernel, geometry_);  // as start_running()
  running_.push_back(&kernel);
}

void Device::schedule_inline_completion(Nanos at) {
  if (at != kNever) {
    completion_event_ =
        sim_.schedule_at(at, make_event<&Device::on_completion>(*this), kPriorityCompletion);
  }
}

}  // namespace gpumux
