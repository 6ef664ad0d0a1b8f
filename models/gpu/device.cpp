#include "models/gpu/device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "sim/util/checked.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

namespace {

// The sharing of a geometry built without a law (make_geometry sets one): whole-SM residency,
// the law terms it carries as they are.
const ContentionLaw& law_of(const DeviceGeometry& g) {
  static const FluidLaw whole_sms;
  return g.law != nullptr ? *g.law : whole_sms;
}

}  // namespace

Device::Device(Simulator& sim, DeviceGeometry geometry, SharingLimits limits)
    : sim_(sim),
      geometry_(std::move(geometry)),
      law_(&law_of(geometry_)),
      limits_(std::move(limits)) {}

bool Device::attach_client(int tenant, std::string& /*reason*/) {
  if (tenant >= 0) {
    if (static_cast<std::size_t>(tenant) >= client_of_tenant_.size()) {
      client_of_tenant_.resize(static_cast<std::size_t>(tenant) + 1, -1);
    }
    if (client_of_tenant_[static_cast<std::size_t>(tenant)] < 0) {
      client_of_tenant_[static_cast<std::size_t>(tenant)] = static_cast<int>(clients_.size());
    }
  }
  if (clients_.empty()) first_client_tenant_ = tenant;
  clients_.push_back(tenant);
  client_memory_.push_back(0);
  client_sm_.emplace_back();
  client_occupancy_scratch_.push_back(0.0);
  client_touched_scratch_.push_back(0);
  client_held_.push_back(0.0);
  client_kernels_.push_back(0);
  client_listed_.push_back(0);
  return true;
}

static std::size_t client_slot(const std::vector<int>& clients, int tenant) {
  const auto it = std::find(clients.begin(), clients.end(), tenant);
  if (it == clients.end()) throw std::logic_error("Device: tenant is not a client");
  return static_cast<std::size_t>(it - clients.begin());
}

std::int64_t Device::client_memory(int tenant) const {
  return client_memory_[client_slot(clients_, tenant)];
}

Device::MemoryRefusal Device::refusal(int tenant, std::int64_t bytes) const {
  const std::size_t slot = client_slot(clients_, tenant);
  if (limits_.client_memory_limit && bytes > *limits_.client_memory_limit - client_memory_[slot]) {
    return MemoryRefusal::client_limit;
  }
  if (bytes > geometry_.memory - memory_used_) return MemoryRefusal::device_full;  // (no overflow)
  return MemoryRefusal::none;
}

bool Device::allocate(int tenant, std::int64_t bytes, std::string& why) {
  const std::size_t slot = client_slot(clients_, tenant);
  const MemoryRefusal refused = refusal(tenant, bytes);
  if (refused == MemoryRefusal::client_limit) {
    why = "allocation of " + units::format_size(bytes) +
          " exceeds the MPS pinned memory limit of " +
          units::format_size(*limits_.client_memory_limit) + " (client holds " +
          units::format_size(client_memory_[slot]) + ")";
    return false;
  }
  if (refused == MemoryRefusal::device_full) {
    why = "allocation of " + units::format_size(bytes) + " does not fit on " + geometry_.name +
          ": " + units::format_size(memory_used_) + " of " + units::format_size(geometry_.memory) +
          " already in use";
    return false;
  }
  client_memory_[slot] += bytes;
  memory_used_ += bytes;
  memory_peak_ = std::max(memory_peak_, memory_used_);
  return true;
}

void Device::release(int tenant, std::int64_t bytes) {
  const std::size_t slot = client_slot(clients_, tenant);
  bytes = std::min(bytes, client_memory_[slot]);
  client_memory_[slot] -= bytes;
  memory_used_ -= bytes;
}

double Device::client_sm_integral(int tenant, Nanos now) const {
  return statistics_ ? client_sm_[client_slot(clients_, tenant)].integral(now) : 0.0;
}

double Device::client_sm_cap() const { return geometry_.sms; }

void Device::start_running(KernelRun& kernel) {
  contention::apply_law_phases(kernel, geometry_);  // (law 2: serial under a law without overlap)
  kernel.rate = 0;
  kernel.sm_demand = -1;  // computed by the first grant pass
  kernel.solo_bound_occupancy = -1;
  kernel.wave_origin = kernel.work - kernel.remaining;
  kernel.yield_wanted = false;
  kernel.yield_share = kernel.retired_sms = 0;
  kernel.leftover_wanted = false;
  kernel.retire_at = kNever;
  kernel.host = nullptr;
  kernel.guest_sms = kernel.guest_blocks = kernel.co_sms = kernel.hosted_sms = 0;
  running_.push_back(&kernel);
  if (lazy_) {
    kernel.since = sim_.now();
    kernel.run_seq = next_run_seq_++;
    started_.push_back(&kernel);
  }
}

void Device::stop_running(KernelRun& kernel) {
  if (lazy_) leave_lazy();
  advance();
  const auto it = std::find(running_.begin(), running_.end(), &kernel);
  if (it != running_.end()) {
    law_->leave(kernel, running_);
    running_.erase(it);
  }
  kernel.rate = 0;
  kernel.occupancy = 0;
  kernel.retired_sms = 0;
}

void Device::remove_running_of(int tenant) {
  if (lazy_) leave_lazy();
  advance();
  for (KernelRun* k : running_) {
    if (k->tenant == tenant) law_->leave(*k, running_);
  }
  std::erase_if(running_, [this, tenant](const KernelRun* k) {
    if (k->tenant != tenant) return false;
    work_discarded_ += k->work - k->remaining;
    return true;
  });
}

void Device::advance() {
  // Outside the lazy state every kernel was last advanced at last_advance_ (leave_lazy brings
  // them all to one time).
  const Nanos now = sim_.now();
  const double dt = static_cast<double>(now - last_advance_);
  last_advance_ = now;
  if (dt <= 0) return;
  for (KernelRun* k : running_) {
    const double step = std::min(k->remaining, k->rate * dt);
    k->remaining -= step;
    work_progressed_ += step;
  }
}

SharingState Device::sharing_state() {
  return SharingState{geometry_,  running_,       client_sm_cap(),      limits_.interleave_clients,
                      sim_.now(), order_scratch_, client_held_scratch_, problem_};
}

void Device::recompute() {
  if (lazy_) {
    if (recompute_lazy()) return;
    leave_lazy();  // (also empties started_: kernels join it only in the lazy state)
  }
  advance();
  prepare_recompute();
  // Nothing running (a completion that emptied the device: every other kernel of a time-sliced
  // device's holder ran one at a time): the law's passes grant nothing (share_sms returns at
  // once), find no active kernel (share_rates: at its bounds, true) and want no event
  // (next_event: kNever), so only their result is left.
  if (running_.empty()) {
    finish_recompute(true, kNever);
    return;
  }
  // One kernel that holds nothing yet (just submitted or resumed; a time-sliced context's
  // kernels run one at a time): the law's passes reduce to law 1's grant of its width and
  // rate = its bound on what it got with its lone l2_factor, no law event. Those values are a
  // function of contention::solo_key and this device alone (SoloCache, the direct path's cache),
  // so a repeated kernel takes them from the cache and sets every field the passes set, the same
  // values: ContentionLaw's share_sms one-kernel branch (flags, sm_demand, the grant, first_start,
  // wave_origin), share_rates (set_lone_bound; one active kernel: rate = rate_max) and next_event
  // (retire_at). A miss runs the passes and fills the cache. Not with the eager oracle. (These
  // are the base ContentionLaw passes, which no law overrides; one that did would have to skip
  // this path.) The shipped scenarios' results are unchanged bit for bit (docs/performance.md).
  KernelRun* lone = nullptr;
  if (running_.size() == 1 && !eager_) {
    KernelRun& k = *running_.front();
    if (k.tenant >= 0 && k.occupancy == 0 && k.co_sms == 0 && k.retired_sms == 0 &&
        !co_resident(k)) {
      lone = &k;
      if (const SoloCache* solo = find_solo(contention::solo_key(k))) {
        k.yield_wanted = false;
        k.leftover_wanted = false;
        k.sm_demand = sm_demand_of(k);
        if (solo->occupancy > 0) {
          k.occupancy = solo->occupancy;
          if (k.first_start < 0) k.first_start = sim_.now();
          k.wave_origin = k.work - k.remaining;
          k.solo_bound = solo->bound;
          k.solo_bound_occupancy = k.occupancy;
          k.rate_max = k.solo_bound;
        } else {
          k.rate_max = 0.0;
        }
        k.l2_factor = solo->l2_factor;
        k.rate = k.rate_max;
        k.retire_at = kNever;
        finish_recompute(true, kNever);
        return;
      }
    }
  }
  SharingState s = sharing_state();
  law_->share_sms(s);
  const bool at_bounds = law_->share_rates(s);
  if (lone != nullptr) {
    // (share_rates' set_lone_bound left the lone l2_factor and, with SMs, the bound on them)
    const KernelRun& k = *lone;
    const double bound = k.occupancy > 0 ? k.solo_bound : 0.0;
    remember_solo(SoloCache{contention::solo_key(k), k.occupancy, bound, k.l2_factor,
                            k.occupancy > 0 ? contention::hbm_use(k, bound, geometry_) : 0.0});
  }
  finish_recompute(at_bounds, law_->next_event(s));
}

void Device::finish_recompute(bool at_bounds, Nanos law_event) {
  Nanos next = law_event;
  const Nanos now = sim_.now();
  for (const KernelRun* k : running_) {
    if (k->rate > 0) {
      // A finish beyond the int64 horizon (a huge draw, a tiny share) is "never", not a wrapped
      // time in the past.
      const Nanos wait = checked::ceil_nanos_saturating(k->remaining / k->rate);
      if (wait < kNever - now) next = std::min(next, now + wait);
    }
  }
  if (statistics_) update_busy();
  if (inline_) {  // inline operation: no event is pending (inline_ready_for), none is scheduled
    inline_next_ = next;
    return;
  }
  sim_.cancel(completion_event_);
  completion_event_ =
      next == kNever
          ? EventId{}
          : sim_.schedule_at(next, make_event<&Device::on_completion>(*this), kPriorityCompletion);
  if (running_.size() >= 2 && at_bounds && !eager_) enter_lazy(at_bounds);
}

void Device::set_overhead(bool in_overhead) {
  if (lazy_) leave_lazy();
  in_overhead_ = in_overhead;
  if (statistics_) update_busy();
}

void Device::update_busy_single() {
  // The same values as update_busy's loops for zero or one running kernel, set in the same
  // way (each integral is its own object, so the order of the client sets does not matter).
  const Nanos now = sim_.now();
  double occupied = 0;
  double bandwidth = 0;
  double client_value = 0.0;
  std::uint32_t position = ~std::uint32_t{0};  // the running kernel's client position, if any
  if (!running_.empty()) {
    const KernelRun* k = running_.front();
    occupied += k->occupancy;
    bandwidth += contention::hbm_use(*k, k->rate, geometry_);
    const auto tenant = static_cast<std::size_t>(k->tenant);
    if (k->tenant >= 0 && k->tenant == first_client_tenant_) {
      position = 0;  // (the usual one client: no lookup in client_of_tenant_)
      client_value += k->occupancy;
    } else if (k->tenant >= 0 && tenant < client_of_tenant_.size() &&
               client_of_tenant_[tenant] >= 0) {
      position = static_cast<std::uint32_t>(client_of_tenant_[tenant]);
      client_value += k->occupancy;
    }
  }
  set_device_integrals(now, occupied, bandwidth);
  // Clients that held SMs at the last update go back to 0 unless the kernel's.
  for (const std::uint32_t c : busy_clients_) {
    if (c != position) client_sm_[c].set(now, 0.0);
  }
  busy_clients_.clear();
  if (position != ~std::uint32_t{0}) {
    client_sm_[position].set(now, client_value);
    if (client_value != 0.0) busy_clients_.push_back(position);
  }
}

void Device::update_busy() {
  if (running_.size() <= 1) {
    update_busy_single();
    return;
  }
  const Nanos now = sim_.now();
  double occupied = 0;
  double bandwidth = 0;
  std::vector<double>& per_client = client_occupancy_scratch_;
  std::vector<char>& touched = client_touched_scratch_;
  std::vector<std::uint32_t>& to_set = touched_scratch_;
  to_set.clear();
  for (const KernelRun* k : running_) {
    occupied += k->occupancy;
    bandwidth += contention::hbm_use(*k, k->rate, geometry_);
    const auto tenant = static_cast<std::size_t>(k->tenant);
    if (k->tenant < 0 || tenant >= client_of_tenant_.size()) continue;
    const int position = client_of_tenant_[tenant];
    if (position < 0) continue;
    const auto c = static_cast<std::size_t>(position);
    per_client[c] += k->occupancy;  // the first add to 0.0 is exact: the same sum as before
    if (!touched[c]) {
      touched[c] = 1;
      to_set.push_back(static_cast<std::uint32_t>(c));
    }
  }
  set_device_integrals(now, occupied, bandwidth);
  // Clients that held SMs at the last update go back to 0 unless touched again.
  for (const std::uint32_t c : busy_clients_) {
    if (!touched[c]) {
      touched[c] = 1;
      to_set.push_back(c);
    }
  }
  busy_clients_.clear();
  for (const std::uint32_t c : to_set) {
    client_sm_[c].set(now, per_client[c]);
    if (per_client[c] != 0.0) busy_clients_.push_back(c);
    per_client[c] = 0.0;
    touched[c] = 0;
  }
}

void Device::complete_finished() {
  if (lazy_) {
    complete_finished_lazy();
    return;
  }
  advance();
  std::vector<KernelRun*>& finished = finished_scratch_;
  finished.clear();
  for (KernelRun* k : running_) {
    const double tolerance = completion_tolerance(k->work);
    if (k->remaining <= tolerance) finished.push_back(k);
  }
  for (KernelRun* k : finished) {
    if (co_resident(*k)) law_->leave(*k, running_);
  }
  if (finished.size() == running_.size()) {
    running_.clear();  // all finished (the usual single kernel)
  } else if (!finished.empty()) {
    std::erase_if(running_, [&](KernelRun* k) {
      return std::find(finished.begin(), finished.end(), k) != finished.end();
    });
  }
  deliver_finished(finished);
}

void Device::deliver_finished(const std::vector<KernelRun*>& finished) {
  batching_ = true;
  for (KernelRun* k : finished) {
    work_completed_ += k->work - k->remaining;
    k->rate = 0;
    k->occupancy = 0;
    k->owner->on_kernel_finished(*k, sim_.now());
  }
  batching_ = false;
  after_completions();
  recompute();
}

void Device::on_completion() {
  completion_event_ = EventId{};
  complete_finished();
}

}  // namespace gpumux
