#include "models/gpu/time_slicing.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpumux {

TimeSlicingDevice::TimeSlicingDevice(Simulator& sim, DeviceGeometry geometry, SharingLimits limits)
    : Device(sim, std::move(geometry), std::move(limits)),
      timeslice_(this->limits().timeslice),
      context_switch_(this->limits().context_switch),
      preemption_latency_(this->limits().preemption_latency),
      cache_refill_(this->limits().cache_refill) {
  if (timeslice_ <= 0) throw std::invalid_argument("time-slicing needs a positive timeslice");
}

bool TimeSlicingDevice::attach_client(int tenant, std::string& reason) {
  if (!Device::attach_client(tenant, reason)) return false;
  contexts_.push_back(Context{tenant, {}, 0});
  return true;
}

TimeSlicingDevice::Context& TimeSlicingDevice::find_context(int tenant) {
  for (Context& c : contexts_) {
    if (c.tenant == tenant) return c;
  }
  throw std::logic_error("TimeSlicingDevice: unknown context");
}

int TimeSlicingDevice::next_context_with_work(int after) const {
  const int n = static_cast<int>(contexts_.size());
  for (int step = 1; step < n + 1; ++step) {
    const int c = ((after < 0 ? -1 : after) + step + n) % n;
    if (c != after && contexts_[static_cast<std::size_t>(c)].has_work()) return c;
  }
  return -1;
}

void TimeSlicingDevice::launch_waiting() {
  Context& ctx = contexts_[static_cast<std::size_t>(holder_)];
  while (!ctx.waiting.empty()) {
    KernelRun* k = ctx.waiting.front();
    ctx.waiting.pop_front();
    start_running(*k);
    count_running(ctx);
  }
}

Nanos TimeSlicingDevice::switch_cost(int next) const {
  // Restoring saved SM state moves the same bytes the save did (preemption_latency); a context
  // with nothing preempted only pays the rest of the switch.
  if (contexts_[static_cast<std::size_t>(next)].preempted) return context_switch_;
  return std::max<Nanos>(0, context_switch_ - preemption_latency_);
}

void TimeSlicingDevice::begin_slice() {
  state_ = State::running;
  contexts_[static_cast<std::size_t>(holder_)].preempted = false;
  last_ran_ = holder_;
  slice_start_ = sim_.now();
  set_overhead(false);
  launch_waiting();
  sim_.cancel(slice_event_);
  slice_event_ = EventId{};
  arm_slice_end();
  recompute_soon();
}

void TimeSlicingDevice::arm_slice_end() {
  if (state_ != State::running || slice_event_.valid() || next_context_with_work(holder_) < 0) {
    return;
  }
  // Slices run back to back from slice_start_; the holder is told to yield at the next boundary.
  const Nanos elapsed = sim_.now() - slice_start_;
  const Nanos slices = std::max<Nanos>(1, (elapsed + timeslice_ - 1) / timeslice_);
  slice_event_ =
      sim_.schedule_at(slice_start_ + slices * timeslice_,
                       make_event<&TimeSlicingDevice::on_slice_end>(*this), kPriorityControl);
}

void TimeSlicingDevice::begin_switch(int next, Nanos overhead) {
  if (next != last_ran_ && last_ran_ >= 0) overhead += cache_refill_;
  sim_.cancel(slice_event_);
  slice_event_ = EventId{};
  holder_ = next;
  if (last_ran_ < 0 || (overhead <= 0 && next == last_ran_)) {  // first load, or no change
    begin_slice();
    return;
  }
  state_ = State::switching;
  count_switch(overhead);
  set_overhead(true);
  switch_event_ = sim_.schedule_in(overhead, make_event<&TimeSlicingDevice::on_switch_done>(*this),
                                   kPriorityControl);
  recompute_soon();
}

void TimeSlicingDevice::submit(KernelRun& kernel) {
  Context& ctx = context_of(kernel.tenant);
  const int index = static_cast<int>(&ctx - contexts_.data());
  if (state_ == State::running && index == holder_) {
    start_running(kernel);
    count_running(ctx);
    recompute_soon();
    return;
  }
  ctx.waiting.push_back(&kernel);
  if (state_ == State::idle) {
    // The device was idle: the scheduler picks among every context that submits at this instant
    // (on_idle_pick, after this instant's completions, launches and arrivals).
    if (!pick_event_.valid()) {
      pick_event_ = sim_.schedule_at(
          sim_.now(), make_event<&TimeSlicingDevice::on_idle_pick>(*this), kPriorityDefault);
    }
  } else {
    arm_slice_end();
  }
}

int TimeSlicingDevice::next_context_waiting(int after) const {
  const int n = static_cast<int>(contexts_.size());
  for (int step = 1; step < n + 1; ++step) {
    const int c = (after + step) % n;  // (after >= -1) ... after itself last
    if (!contexts_[static_cast<std::size_t>(c)].waiting.empty()) return c;
  }
  return -1;
}

void TimeSlicingDevice::on_idle_pick() {
  pick_event_ = EventId{};
  if (state_ != State::idle) return;
  // Round robin from the last context that ran (before any ran: the seeded start), that one last.
  const int next = next_context_waiting(last_ran_ >= 0 ? last_ran_ : round_robin_start_);
  if (next < 0) return;  // its kernels went away (the client was removed)
  // Load it: a switch only if another context was loaded.
  begin_switch(next, next == last_ran_ || last_ran_ < 0 ? 0 : switch_cost(next));
}

void TimeSlicingDevice::seed_round_robin(RandomStream& rng) {
  const int n = static_cast<int>(contexts_.size());
  if (n == 0) return;
  round_robin_start_ = std::min(n - 1, static_cast<int>(rng.uniform01() * n));
}

void TimeSlicingDevice::on_holder_idle() {
  // The holder has nothing running and nothing waiting.
  const int next = next_context_with_work(holder_);
  if (next >= 0) {
    begin_switch(next, switch_cost(next));
  } else {
    state_ = State::idle;
    sim_.cancel(slice_event_);
    slice_event_ = EventId{};
  }
}

void TimeSlicingDevice::after_completions() {
  // Recount the running kernels per context (completions removed some). Only contexts in
  // counted_ can hold a nonzero count, so this is O(running kernels), not O(contexts).
  for (const int c : counted_) contexts_[static_cast<std::size_t>(c)].running = 0;
  counted_.clear();
  for (const KernelRun* k : running()) count_running(context_of(k->tenant));
  if (state_ == State::running) {
    if (!contexts_[static_cast<std::size_t>(holder_)].has_work()) on_holder_idle();
  } else if (state_ == State::draining) {
    Context& holder = contexts_[static_cast<std::size_t>(holder_)];
    if (holder.running == 0) {
      const int next = next_context_with_work(holder_);
      if (next >= 0) {
        begin_switch(next, switch_cost(next));
      } else if (!holder.waiting.empty()) {
        begin_slice();  // the waiter went away: keep going
      } else {
        state_ = State::idle;
      }
    }
  }
}

void TimeSlicingDevice::on_slice_end() {
  slice_event_ = EventId{};
  if (state_ != State::running) return;
  const int next = next_context_with_work(holder_);
  if (next < 0) return;  // the waiter went away; the next submit re-arms

  Context& holder = contexts_[static_cast<std::size_t>(holder_)];
  if (limits().preemption == PreemptionMode::instruction) {
    // Stop every running kernel of the holder, keeping its progress, in launch order.
    std::vector<KernelRun*> preempted(running().begin(), running().end());
    for (auto it = preempted.rbegin(); it != preempted.rend(); ++it) {
      stop_running(**it);
      holder.waiting.push_front(*it);
    }
    holder.running = 0;
    holder.preempted = !preempted.empty();
    // P saves the state of resident blocks: nothing resident (the holder only launching), no P.
    begin_switch(next, (holder.preempted ? preemption_latency_ : 0) + switch_cost(next));
  } else {
    state_ = State::draining;
    if (holder.running == 0) begin_switch(next, switch_cost(next));
  }
}

void TimeSlicingDevice::on_switch_done() {
  switch_event_ = EventId{};
  if (!contexts_[static_cast<std::size_t>(holder_)].has_work()) {
    // Its work went away during the switch (killed): move on or go idle.
    last_ran_ = holder_;
    set_overhead(false);
    state_ = State::running;
    on_holder_idle();
    recompute_soon();
    return;
  }
  begin_slice();
}

void TimeSlicingDevice::kernel_launching(int tenant, bool on) {
  Context& ctx = context_of(tenant);
  ctx.launching += on ? 1 : -1;  // submit() follows every decrement and moves the state on
  if (on && state_ == State::running && &ctx != &contexts_[static_cast<std::size_t>(holder_)]) {
    arm_slice_end();  // someone else now has work queued: the holder yields at its slice end
  }
}

bool TimeSlicingDevice::holds_device(int tenant) const {
  return state_ == State::running && !switch_event_.valid() && !pick_event_.valid() &&
         holder_ >= 0 && contexts_[static_cast<std::size_t>(holder_)].tenant == tenant;
}

void TimeSlicingDevice::remove_client_kernels(int tenant) {
  Context& ctx = context_of(tenant);
  ctx.waiting.clear();
  ctx.launching = 0;
  remove_running_of(tenant);
  ctx.running = 0;
  const int index = static_cast<int>(&ctx - contexts_.data());
  if (index == holder_ && (state_ == State::running || state_ == State::draining)) {
    on_holder_idle();
  }
  recompute_soon();
}

}  // namespace gpumux
