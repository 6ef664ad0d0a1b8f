#pragma once
// Device::SoloSession: a tenant that is a device's only client runs the device's events itself,
// without the event queue (models/run/direct.cpp, direct_single.cpp): the same state changes, in
// the same order, by the same functions as the queued path, with each completion time handed
// back instead of scheduled. Each operation costs what the queued path costs minus the queue
// operations.
//
//   if (Device::SoloSession::available(device, tenant)) {
//     Device::SoloSession session(device);  // the device runs nothing and schedules nothing
//     Nanos completion = session.submit(kernel);  // (the caller runs the events up to it)
//     ...
//   }  // back to queued operation: the device's next completion, if any, is a queued event
//
// The holder of a device that does not submit at once (time-slicing's context running its slice:
// Device::holds_device) runs its kernels the same way, in the holder mode (available_to_holder;
// holder_*): each submission and completion is the device's own code (its submit(), the
// completion event's handler), whose next completion is handed back instead of scheduled.
//
// Two ways to drive it, not to be mixed in one session:
//  - kernels through the device's own code (submit, complete, submit_deferred, end_completions):
//    any kernel, one at a time (the device's running set holds it);
//  - one kernel shape at a time (lone_*: direct_single.cpp's single-launch loop): the caller
//    keeps the one kernel's state itself (remaining work, its finish time) and the session makes
//    the device's own changes for it, exactly those of submit() / complete() / end_completions();
//    lone_adopt() hands the kernel back with its fields as they would be.
#include "models/gpu/device.hpp"

namespace gpumux {

class Device::SoloSession {
 public:
  /// True when `tenant` may open a session on `device` now: the strategy submits every ready
  /// kernel at once (no time-slicing), `tenant` is the only client, and nothing is running or
  /// scheduled. O(1).
  static bool available(const Device& device, int tenant) {
    return device.submits_at_once() && device.clients_.size() == 1 &&
           device.clients_.front() == tenant && device.running_.empty() && !device.batching_ &&
           !device.in_overhead_ && !device.lazy_ && !device.completion_event_.valid();
  }
  /// True when `tenant`, the holder of a device that does not submit at once, may open a session
  /// in the holder mode now: Device::holds_device(tenant), nothing running, no completion
  /// scheduled, no overhead period. O(1).
  static bool available_to_holder(const Device& device, int tenant) {
    return !device.submits_at_once() && device.running_.empty() && !device.batching_ &&
           !device.in_overhead_ && !device.lazy_ && !device.completion_event_.valid() &&
           device.holds_device(tenant);
  }
  /// Opens the session (precondition: available() or available_to_holder() for the caller's
  /// tenant).
  explicit SoloSession(Device& device);
  /// Back to queued operation: the device's next completion (the last one an operation below
  /// returned or lone_adopt() was given; none while an exception unwinds) becomes a queued event.
  ~SoloSession();
  SoloSession(const SoloSession&) = delete;
  SoloSession& operator=(const SoloSession&) = delete;

  // --- kernels through the device's own code (direct.cpp) ------------------------------------
  /// submit(kernel) at now (ConcurrentDevice's: it joins the running set, then the recompute);
  /// returns when it finishes (kNever: never).
  Nanos submit(KernelRun& kernel);
  /// The completion event at now: advances the running kernel; true when it finished (it left
  /// the device; the caller tells its owner, may submit_deferred() the next kernel, then calls
  /// end_completions()), false when it runs on (`next` is its new finish time).
  bool complete(KernelRun& kernel, Nanos& next);
  /// A kernel submitted by the owner while its finished kernel is being delivered (submit()
  /// inside on_kernel_finished: the recompute waits for end_completions()).
  void submit_deferred(KernelRun& kernel) { device_.start_running(kernel); }
  /// The end of the completion: returns the next finish time (kNever: nothing runs).
  Nanos end_completions();

  // --- the holder mode (available_to_holder; direct.cpp's run_holder) ----------------------
  /// Whether `tenant` still holds the device (Device::holds_device; before each inline
  /// submission).
  bool held(int tenant) const { return device_.holds_device(tenant); }
  /// The device's submit(kernel) at now (at most one kernel runs: the holder's one stream);
  /// returns when the running kernel finishes (kNever: never).
  Nanos holder_submit(KernelRun& kernel) {
    device_.submit(kernel);
    completion_ = device_.inline_next_;
    return completion_;
  }
  /// The device's submit(kernel) inside holder_complete() (the owner's on_kernel_finished): it
  /// joins the running set; the completion's recompute follows.
  void holder_submit_deferred(KernelRun& kernel) { device_.submit(kernel); }
  /// The device's completion event at now (Device::on_completion: the finished kernel's owner
  /// told, the strategy's hook, the recompute); returns the next finish time (kNever: none).
  Nanos holder_complete() {
    device_.complete_finished();
    completion_ = device_.inline_next_;
    return completion_;
  }

  // --- one kernel shape at a time (direct_single.cpp) ----------------------------------------
  /// Sets the session up for kernels of the only client shaped like `probe` (its fields as
  /// submitted: tenant, sm_fraction, memory_bound, busy_share, waves, working_set, grid): what
  /// one gets alone on this device (the occupancy grant_sms() gives it, its rate bound with its
  /// lone l2_factor, its HBM use at that rate; cached for the device's last few
  /// contention::solo_keys) and the integrals' levels while it runs and while the device is
  /// idle. Returns the rate such a kernel runs at (0: it gets no SMs; the lone_* operations
  /// below must then not be used).
  double lone_rate(KernelRun& probe);
  /// The kernel is submitted now: it joins at rate 0 (advance() moves nothing but the clock),
  /// then holds its grant and its HBM use (update_busy_single()'s sets).
  void lone_started(Nanos now) {
    Device& d = device_;
    d.last_advance_ = now;
    if (!running_set_) {
      d.set_solo_running(now, running_);
      running_set_ = true;
      return;
    }
    // The same sets as set_solo_running() (their peaks counted then; between them only these
    // lone_* calls): the same integrals, fewer operations.
    d.busy_.set_under_peak(now, running_.busy);
    d.useful_.set_under_peak(now, running_.useful);
    d.dram_.set_under_peak(now, running_.dram);
    d.client_sm_.front().set_under_peak(now, running_.client);
    // busy_clients_ is {} or {0} here (set_solo_running and set_solo_idle leave no other).
    if (running_.client == 0.0) {
      d.busy_clients_.clear();
    } else if (d.busy_clients_.empty()) {
      d.busy_clients_.push_back(0);
    }
  }
  /// advance() for the kernel running at lone_rate(): its remaining work now.
  double lone_advance(Nanos now, double remaining) {
    Device& d = device_;
    const double dt = static_cast<double>(now - d.last_advance_);
    d.last_advance_ = now;
    if (dt <= 0) return remaining;
    const double step = std::min(remaining, rate_ * dt);
    d.work_progressed_ += step;
    return remaining - step;
  }
  /// The kernel of `work` finished with `remaining` left (<= the completion tolerance).
  void lone_finished(double work, double remaining) { device_.work_completed_ += work - remaining; }
  /// The device is empty now (the completion's recompute with nothing left).
  void lone_idle(Nanos now) {
    Device& d = device_;
    d.last_advance_ = now;
    if (!idle_set_) {
      d.set_solo_idle(now, idle_);
      idle_set_ = true;
      return;
    }
    d.busy_.set_under_peak(now, idle_.busy);  // (as in lone_started)
    d.useful_.set_under_peak(now, idle_.useful);
    d.dram_.set_under_peak(now, idle_.dram);
    if (!d.busy_clients_.empty()) {
      d.client_sm_.front().set_under_peak(now, 0.0);
      d.busy_clients_.clear();
    }
  }
  /// The caller's running kernel back in the device's running set, finishing at `completion`:
  /// `kernel` (prepared for submission, with its remaining work and first start) gets the grant,
  /// bounds and rate the device would have given it.
  void lone_adopt(KernelRun& kernel, Nanos completion);

 private:
  Device& device_;
  Nanos completion_ = kNever;  // the device's next completion, for the destructor
  int exceptions_at_open_;     // std::uncaught_exceptions() when opened
  // lone_*: the kernel's rate, what it gets alone, the integrals' levels and whether they were
  // set to each already in this session.
  double rate_ = 0;
  SoloCache lone_{};
  SoloLevels running_{}, idle_{};
  bool running_set_ = false, idle_set_ = false;
};

}  // namespace gpumux
