// Device's lazy path (device.hpp, "Cost per event"): while every kernel holds its SM demand and
// runs at its bound with its lone L2 factor (the law's shortcut predicates, contention_law.hpp),
// an event touches only the kernels that started or finished.
#include <algorithm>

#include "models/gpu/device.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

inline void Device::advance_kernel(KernelRun& k, Nanos now) {
  // advance()'s step for one kernel from its own last advance (the lazy state only).
  const double dt = static_cast<double>(now - k.since);
  k.since = now;
  if (dt <= 0) return;
  const double step = std::min(k.remaining, k.rate * dt);
  k.remaining -= step;
  work_progressed_ += step;
}

void Device::push_finish(Nanos at, KernelRun* kernel) {
  // Binary min-heap by time, the hole moved up (ties in any order: a completion takes every
  // kernel due and orders them by run_seq).
  std::size_t i = finish_heap_.size();
  finish_heap_.push_back(Finish{at, kernel});
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(at < finish_heap_[parent].at)) break;
    finish_heap_[i] = finish_heap_[parent];
    i = parent;
  }
  finish_heap_[i] = Finish{at, kernel};
}

void Device::pop_finish() {
  const Finish last = finish_heap_.back();
  finish_heap_.pop_back();
  const std::size_t n = finish_heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && finish_heap_[child + 1].at < finish_heap_[child].at) ++child;
    if (!(finish_heap_[child].at < last.at)) break;
    finish_heap_[i] = finish_heap_[child];
    i = child;
  }
  finish_heap_[i] = last;
}

void Device::enter_lazy(bool at_bounds) {
  if (!at_bounds) return;
  const double sms = geometry_.sms;
  const double epsilon = 1e-9 * sms;
  for (KernelRun* k : running_) {
    if (client_position(k->tenant) < 0) return;
    if (co_resident(*k)) return;  // law 1c: its bound depends on its neighbour
    if (k->sm_demand < 0) {
      k->sm_demand = sm_demand_of(*k);
    }
    // A kernel short of its demand may take freed SMs at any event (share_sms): full path.
    if (k->occupancy < k->sm_demand - epsilon) return;
  }
  const Nanos now = sim_.now();
  occupied_sum_ = 0;
  bandwidth_sum_ = 0;
  active_ = memory_kernels_ = reuse_kernels_ = 0;
  finish_heap_.clear();
  for (const KernelRun* k : running_) {
    const auto c = static_cast<std::size_t>(client_position(k->tenant));
    client_held_[c] += k->occupancy;
    ++client_kernels_[c];
    occupied_sum_ += k->occupancy;
    bandwidth_sum_ += contention::hbm_use(*k, k->rate, geometry_);
    if (k->rate_max > 0) {
      ++active_;
      if (k->memory_bound > 0) {
        ++memory_kernels_;
        if (k->working_set > 0) ++reuse_kernels_;
      }
    }
  }
  for (KernelRun* k : running_) {
    k->since = now;  // the full recompute advanced every kernel to now
    k->run_seq = next_run_seq_++;
    // The finish_recompute loop's times.
    if (k->rate > 0) {
      const Nanos wait = checked::ceil_nanos_saturating(k->remaining / k->rate);
      if (wait < kNever - now) push_finish(now + wait, k);
    }
  }
  for (const std::uint32_t c : busy_clients_) client_listed_[c] = 1;
  touched_.clear();
  lazy_ = true;
}

void Device::leave_lazy() {
  if (!lazy_) return;
  lazy_ = false;
  // Every kernel to now, so that advance() steps them all from last_advance_ again.
  const Nanos now = sim_.now();
  for (KernelRun* k : running_) advance_kernel(*k, now);
  last_advance_ = now;
  // busy_clients_ back to exactly the clients whose integral's value is not 0.
  std::size_t kept = 0;
  for (const std::uint32_t c : busy_clients_) {
    client_listed_[c] = 0;
    if (client_sm_[c].value() != 0.0) busy_clients_[kept++] = c;
  }
  busy_clients_.resize(kept);
  for (const KernelRun* k : running_) {
    const int c = client_position(k->tenant);
    if (c < 0) continue;
    client_held_[static_cast<std::size_t>(c)] = 0.0;
    client_kernels_[static_cast<std::size_t>(c)] = 0;
  }
  finish_heap_.clear();
  touched_.clear();
  started_.clear();
}

bool Device::recompute_lazy() {
  if (running_.size() < 2) return false;
  for (const KernelRun* k : started_) {
    if (client_position(k->tenant) < 0) return false;
  }
  prepare_recompute();
  const Nanos now = sim_.now();
  const double sms = geometry_.sms;
  const double epsilon = 1e-9 * sms;
  const SharingState s = sharing_state();
  // Grants: every other kernel holds its demand, so only the kernels that joined want SMs; in
  // block-dispatch order (priority, then launch order), as the law's share_sms.
  if (started_.size() > 1) {
    std::stable_sort(started_.begin(), started_.end(), [](const KernelRun* a, const KernelRun* b) {
      return a->priority > b->priority;
    });
  }
  double free = sms - occupied_sum_;
  for (KernelRun* k : started_) {
    const auto c = static_cast<std::size_t>(client_position(k->tenant));
    if (k->sm_demand < 0) {
      k->sm_demand = sm_demand_of(*k);
    }
    const double before = k->occupancy;
    client_held_[c] += before;
    ++client_kernels_[c];
    if (free > epsilon && k->occupancy < k->sm_demand - epsilon) {
      law_->grant(*k, s, epsilon, free, client_held_[c]);
    }
    occupied_sum_ += k->occupancy;
    touched_.push_back(static_cast<std::uint32_t>(c));
  }
  bool short_of_demand = false;
  for (KernelRun* k : started_) {
    law_->set_lone_bound(*k, s);
    short_of_demand |= k->occupancy < k->sm_demand - epsilon;
    if (k->rate_max > 0) {
      ++active_;
      if (k->memory_bound > 0) {
        ++memory_kernels_;
        if (k->working_set > 0) ++reuse_kernels_;
      }
    }
    bandwidth_sum_ += contention::hbm_use(*k, k->rate_max, geometry_);
  }
  // The full recompute's early exits: at most one kernel holding SMs, or HBM with room at every
  // bound and the L2 law not in play; else (or with a kernel short of SMs) the full path.
  if (short_of_demand) return false;
  if (active_ > 1) {
    if (contention::l2_law_applies(geometry_, memory_kernels_, reuse_kernels_ > 0) ||
        !contention::hbm_room_at_bounds(bandwidth_sum_, geometry_))
      return false;
  }
  for (KernelRun* k : started_) {
    k->rate = k->rate_max;
    k->since = now;
    if (k->rate > 0) {
      const Nanos wait = checked::ceil_nanos_saturating(k->remaining / k->rate);
      if (wait < kNever - now) push_finish(now + wait, k);
    }
  }
  started_.clear();
  // Utilization: the device's integrals from the sums, the clients that changed.
  set_device_integrals(now, occupied_sum_, bandwidth_sum_);
  for (const std::uint32_t c : touched_) {
    const double held = client_held_[c];
    client_sm_[c].set(now, held);
    if (held != 0.0 && !client_listed_[c]) {
      client_listed_[c] = 1;
      busy_clients_.push_back(c);
    }
  }
  touched_.clear();
  ++lazy_recomputes_;
  const Nanos next = finish_heap_.empty() ? kNever : finish_heap_.front().at;
  sim_.cancel(completion_event_);
  completion_event_ =
      next == kNever
          ? EventId{}
          : sim_.schedule_at(next, make_event<&Device::on_completion>(*this), kPriorityCompletion);
  return true;
}

void Device::complete_finished_lazy() {
  const Nanos now = sim_.now();
  std::vector<KernelRun*>& finished = finished_scratch_;
  finished.clear();
  while (!finish_heap_.empty() && finish_heap_.front().at <= now) {
    KernelRun* k = finish_heap_.front().kernel;
    pop_finish();
    advance_kernel(*k, now);
    finished.push_back(k);
  }
  // Its projected time leaves it within the completion tolerance (remaining - r ceil(remaining
  // / r) <= 0 up to rounding); should rounding say otherwise, it waits for its next ns.
  std::size_t done = 0;
  for (KernelRun* k : finished) {
    const double tolerance = completion_tolerance(k->work);
    if (k->remaining <= tolerance) {
      finished[done++] = k;
    } else {
      const Nanos wait = std::max<Nanos>(1, checked::ceil_nanos_saturating(k->remaining / k->rate));
      if (wait < kNever - now) push_finish(now + wait, k);
    }
  }
  finished.resize(done);
  if (finished.size() > 1) {
    std::sort(finished.begin(), finished.end(),
              [](const KernelRun* a, const KernelRun* b) { return a->run_seq < b->run_seq; });
  }
  if (finished.size() == 1) {
    running_.erase(std::find(running_.begin(), running_.end(), finished.front()));
  } else if (!finished.empty()) {
    std::erase_if(running_, [&](KernelRun* k) {
      return std::binary_search(
          finished.begin(), finished.end(), k,
          [](const KernelRun* a, const KernelRun* b) { return a->run_seq < b->run_seq; });
    });
  }
  for (KernelRun* k : finished) {
    const auto c = static_cast<std::size_t>(client_position(k->tenant));
    occupied_sum_ -= k->occupancy;
    bandwidth_sum_ -= contention::hbm_use(*k, k->rate, geometry_);
    if (--client_kernels_[c] == 0) {
      client_held_[c] = 0.0;  // exactly, whatever the rounding of the sums
    } else {
      client_held_[c] -= k->occupancy;
    }
    touched_.push_back(static_cast<std::uint32_t>(c));
    if (k->rate_max > 0) {
      --active_;
      if (k->memory_bound > 0) {
        --memory_kernels_;
        if (k->working_set > 0) --reuse_kernels_;
      }
    }
  }
  deliver_finished(finished);
}

}  // namespace gpumux
