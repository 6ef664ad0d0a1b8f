#include "models/gpu/device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "sim/util/checked.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

Device::Device(Simulator& sim, DeviceGeometry geometry, SharingLimits limits)
    : sim_(sim), geometry_(std::move(geometry)), limits_(std::move(limits)) {
  const char* eager = std::getenv("GPUMUX_DEVICE_EAGER");
  eager_ = eager != nullptr && std::strcmp(eager, "1") == 0;
}

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

bool Device::allocate(int tenant, std::int64_t bytes, std::string& why) {
  const std::size_t slot = client_slot(clients_, tenant);
  if (limits_.client_memory_limit && bytes > *limits_.client_memory_limit - client_memory_[slot]) {
    why = "allocation of " + units::format_size(bytes) +
          " exceeds the MPS pinned memory limit of " +
          units::format_size(*limits_.client_memory_limit) + " (client holds " +
          units::format_size(client_memory_[slot]) + ")";
    return false;
  }
  if (bytes > geometry_.memory - memory_used_) {  // (no overflow for huge `bytes`)
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
  return client_sm_[client_slot(clients_, tenant)].integral(now);
}

double Device::client_sm_cap(int /*tenant*/) const { return geometry_.sms; }

void Device::start_running(KernelRun& kernel) {
  contention::apply_law_phases(kernel, geometry_);  // (law 2: serial under a law without overlap)
  kernel.rate = 0;
  kernel.sm_demand = -1;  // computed by the first grant pass
  kernel.solo_bound_occupancy = -1;
  kernel.wave_origin = kernel.work - kernel.remaining;
  kernel.yield_wanted = false;
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
    leave_co_residency(kernel);
    running_.erase(it);
  }
  kernel.rate = 0;
  kernel.occupancy = 0;
}

void Device::leave_co_residency(KernelRun& k) {
  if (k.host != nullptr) {
    k.host->hosted_sms = std::max(0.0, k.host->hosted_sms - k.guest_sms);
    k.host = nullptr;
    k.guest_sms = k.guest_blocks = k.co_sms = 0;
  }
  if (k.hosted_sms > 0) {
    for (KernelRun* guest : running_) {
      if (guest->host != &k) continue;
      guest->occupancy += guest->co_sms;  // its blocks stay where they are
      guest->host = nullptr;
      guest->guest_sms = guest->guest_blocks = guest->co_sms = 0;
    }
    k.hosted_sms = 0;
  }
}

double Device::co_resident_bound(const KernelRun& k) const {
  double whole = k.occupancy;
  double compute = k.occupancy;
  double memory = k.occupancy;
  if (k.host != nullptr) {
    const contention::IssueShares p =
        contention::co_resident_progress(*k.host, k, k.guest_blocks, geometry_);
    whole += k.guest_sms;
    compute += k.guest_sms * p.guest;
    memory += k.co_sms;
  }
  if (k.hosted_sms > 0) {
    for (const KernelRun* guest : running_) {
      if (guest->host != &k) continue;
      const contention::IssueShares p =
          contention::co_resident_progress(k, *guest, guest->guest_blocks, geometry_);
      compute -= guest->guest_sms * (1.0 - p.host);
    }
  }
  return contention::co_resident_bound(k.sm_fraction, k.memory_bound, k.busy_share, k.l2_factor,
                                       whole, std::max(0.0, compute), memory, geometry_, k.grid);
}

void Device::remove_running_of(int tenant) {
  if (lazy_) leave_lazy();
  advance();
  for (KernelRun* k : running_) {
    if (k->tenant == tenant) leave_co_residency(*k);
  }
  std::erase_if(running_, [this, tenant](const KernelRun* k) {
    if (k->tenant != tenant) return false;
    work_discarded_ += k->work - k->remaining;
    return true;
  });
}

inline void Device::advance_kernel(KernelRun& k, Nanos now) {
  // advance()'s step for one kernel from its own last advance (the lazy state only).
  const double dt = static_cast<double>(now - k.since);
  k.since = now;
  if (dt <= 0) return;
  const double step = std::min(k.remaining, k.rate * dt);
  k.remaining -= step;
  work_progressed_ += step;
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

void Device::grant_sms() {
  if (running_.empty()) return;  // an emptied device: nothing to grant
  const double sms = geometry_.sms;
  const double epsilon = 1e-9 * sms;
  if (running_.size() == 1 && running_.front()->tenant >= 0) {
    // One kernel (the usual exclusive device): the same arithmetic as below without the
    // per-client table (its client holds exactly what the kernel holds).
    KernelRun& k = *running_.front();
    k.yield_wanted = false;         // (law 1b: nobody to yield to)
    k.leftover_wanted = false;      // (law 1c: no guest)
    k.sm_demand = sm_demand_of(k);  // (a session's kernel may carry another kernel's)
    double free = sms;
    free -= k.occupancy;
    if (free <= epsilon) return;
    double held_by_client = 0.0;
    held_by_client += k.occupancy;
    grant_to(k, epsilon, free, held_by_client);
    return;
  }
  double free = sms;
  bool mixed_priorities = false;
  bool mixed_clients = false;
  bool wanting = false;        // some kernel holds less than its full width (grant_to's first test)
  bool guest_wanting = false;  // ... of them one with a known footprint (law 1c)
  int max_tenant = -1;
  for (KernelRun* k : running_) {
    free -= k->occupancy;
    k->yield_wanted = false;     // set again below while a more urgent kernel waits (law 1b)
    k->leftover_wanted = false;  // set again below while a guest waits for its leftover (1c)
    mixed_priorities |= k->priority != running_.front()->priority;
    mixed_clients |= k->tenant != running_.front()->tenant;
    if (k->sm_demand < 0) {
      // The same three numbers grant_to() takes the minimum of, once per start of the kernel.
      k->sm_demand = sm_demand_of(*k);
    }
    const bool wants = k->occupancy + k->co_sms < k->sm_demand - epsilon;
    wanting |= wants;
    guest_wanting |= wants && contention::co_resident_capable(*k, geometry_);
    max_tenant = std::max(max_tenant, k->tenant);
  }
  // Nothing to grant: grant_to would refuse every kernel at its first test (co-running clients
  // that all hold their width, the usual state between arrivals), so skip the client table.
  // Law 1b retires SMs for more urgent kernels, and with interleaved clients for equally urgent
  // kernels of other clients; law 1c places guests without free SMs.
  const bool retire = geometry_.block_retirement &&
                      (mixed_priorities || (mixed_clients && limits_.interleave_clients));
  if (!wanting || (free <= epsilon && !retire && !guest_wanting)) return;
  const std::vector<KernelRun*>* order = &running_;
  if (mixed_priorities) {
    order_scratch_.assign(running_.begin(), running_.end());
    std::stable_sort(
        order_scratch_.begin(), order_scratch_.end(),
        [](const KernelRun* a, const KernelRun* b) { return a->priority > b->priority; });
    order = &order_scratch_;
  }
  std::vector<double>& client_held = client_held_scratch_;
  client_held.assign(static_cast<std::size_t>(max_tenant + 1), 0.0);
  for (const KernelRun* k : running_)
    client_held[static_cast<std::size_t>(k->tenant)] += k->occupancy + k->co_sms;
  for (KernelRun* k : *order) {
    if (free <= epsilon) break;
    if (k->occupancy + k->co_sms >= k->sm_demand - epsilon) continue;  // grant_to's refusal
    double& held_by_client = client_held[static_cast<std::size_t>(k->tenant)];
    grant_to(*k, epsilon, free, held_by_client);
  }
  if (guest_wanting) place_guests(*order, epsilon, client_held);
  if (retire) retire_for_urgent(*order, epsilon, free, client_held);
}

void Device::place_guests(const std::vector<KernelRun*>& order, double epsilon,
                          std::vector<double>& client_held) {
  // Law 1c (contention_law.hpp), in dispatch order.
  const bool interleave = limits_.interleave_clients;
  const auto wants_sms = [&](const KernelRun& k) {
    const double held = k.occupancy + k.co_sms;
    return held < k.sm_demand - epsilon &&
           (held <= 0 || contention::dispatching(k, geometry_, epsilon));
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    KernelRun& guest = *order[i];
    if (guest.host != nullptr || !wants_sms(guest) ||
        !contention::co_resident_capable(guest, geometry_))
      continue;
    // Leftover policy: an earlier kernel (as urgent, of its own client or, in launch order, of
    // any) that still wants SMs is dispatched first.
    bool blocked = false;
    for (std::size_t j = 0; j < i && !blocked; ++j) {
      const KernelRun& ahead = *order[j];
      if (ahead.priority < guest.priority || (interleave && ahead.tenant != guest.tenant)) continue;
      blocked = wants_sms(ahead);
    }
    if (blocked) continue;
    KernelRun* host = nullptr;
    double room = 0;
    double usable = 0;  // the host's SMs the guest may take
    for (KernelRun* h : running_) {
      if (h == &guest || h->host != nullptr || h->occupancy - h->hosted_sms <= epsilon ||
          !contention::co_resident_capable(*h, geometry_))
        continue;
      const contention::GuestRoom fit = contention::guest_room(*h, guest, geometry_);
      const double free_sms = h->occupancy * fit.share - h->hosted_sms;
      if (!(fit.blocks >= 1) || free_sms <= epsilon || fit.blocks <= room) continue;
      const bool yields =
          h->priority < guest.priority ||
          (interleave && h->priority == guest.priority && h->tenant != guest.tenant);
      if (!yields && contention::dispatching(*h, geometry_, epsilon)) {
        h->leftover_wanted = true;  // its last round is the guest's chance (an event then)
        continue;
      }
      host = h;
      room = fit.blocks;
      usable = free_sms;
    }
    if (host == nullptr) continue;
    const double per_sm = room / contention::blocks_per_held_sm(guest, geometry_);
    double& held_by_client = client_held[static_cast<std::size_t>(guest.tenant)];
    const double held = guest.occupancy + guest.co_sms;
    const double want =
        std::min(guest.sm_demand - held, client_sm_cap(guest.tenant) - held_by_client);
    const double sms = std::min(usable, want / per_sm);
    if (sms <= epsilon) continue;
    if (held <= 0) guest.wave_origin = guest.work - guest.remaining;  // (as grant_to)
    if (guest.first_start < 0) guest.first_start = sim_.now();
    guest.host = host;
    guest.guest_sms = sms;
    guest.guest_blocks = room;
    guest.co_sms = sms * per_sm;
    host->hosted_sms += sms;
    held_by_client += guest.co_sms;
  }
}

void Device::retire_for_urgent(const std::vector<KernelRun*>& order, double epsilon, double& free,
                               std::vector<double>& client_held) {
  // Law 1b (contention_law.hpp). `order` is by priority, most urgent first; a kernel that still
  // wants SMs takes those of less urgent kernels whose resident round retires now, least urgent
  // first, and marks the others so that their next round's end is an event. With interleaved
  // clients an equally urgent kernel of another client that holds more SMs yields too, up to an
  // equal split (the block scheduler alternates between the clients' pending blocks).
  const Nanos now = sim_.now();
  const bool interleave = limits_.interleave_clients;
  for (std::size_t i = 0; i < order.size(); ++i) {
    KernelRun& urgent = *order[i];
    if (urgent.occupancy + urgent.co_sms >= urgent.sm_demand - epsilon) continue;
    if (urgent.occupancy + urgent.co_sms > 0 &&
        !contention::dispatching(urgent, geometry_, epsilon))
      continue;
    for (std::size_t j = order.size(); j-- > 0;) {
      if (j == i) continue;
      KernelRun& holder = *order[j];
      const bool peer =
          interleave && holder.priority == urgent.priority && holder.tenant != urgent.tenant;
      if ((holder.priority >= urgent.priority && !peer) || holder.occupancy <= epsilon) continue;
      const double urgent_held = urgent.occupancy + urgent.co_sms;
      if (holder.hosted_sms > 0 || (peer && holder.occupancy <= urgent_held + epsilon)) continue;
      if (holder.retire_at > now) {
        // Its round retires later: an event then, unless this round is its last (it keeps its
        // SMs until it ends).
        if (contention::dispatching(holder, geometry_, epsilon)) holder.yield_wanted = true;
        continue;
      }
      // Its round has just retired: every block it has left is pending, behind the urgent ones.
      const double wanted = urgent.sm_demand - urgent_held - std::max(0.0, free);
      if (wanted <= epsilon) break;
      double taken = std::min(wanted, holder.occupancy);
      if (peer) taken = std::min(taken, 0.5 * (holder.occupancy - urgent_held));
      holder.occupancy -= taken;
      client_held[static_cast<std::size_t>(holder.tenant)] -= taken;
      free += taken;
      holder.wave_origin = holder.work - holder.remaining;  // its next round starts later
      holder.retire_at = kNever;
    }
    if (free > epsilon) {
      grant_to(urgent, epsilon, free, client_held[static_cast<std::size_t>(urgent.tenant)]);
    }
  }
}

bool Device::apply_l2_factors(double traffic, int memory_kernels, bool any_reuse) {
  if (!contention::l2_law_applies(geometry_, memory_kernels, any_reuse)) return false;
  for (KernelRun* k : running_) {
    if (k->memory_bound <= 0 || k->rate_max <= 0 || k->working_set <= 0) continue;
    k->l2_factor = contention::l2_factor(contention::hbm_use(*k, k->rate_max, geometry_), traffic,
                                         k->working_set, geometry_);
    k->rate_max = co_resident(*k) ? co_resident_bound(*k) : rate_bound(*k, k->occupancy);
  }
  return true;
}

void Device::set_unshared_bound(KernelRun& k) const {
  k.l2_factor = contention::lone_l2_factor(k, geometry_);
  if (co_resident(k)) {
    k.rate_max = co_resident_bound(k);  // (law 1c: depends on its neighbour; not cached)
    return;
  }
  if (k.occupancy > 0) {
    // rate_bound with the lone l2_factor depends only on the occupancy (the kernel's f, m and
    // working set and the geometry are fixed while it runs): computed again only when its SMs
    // changed.
    if (k.solo_bound_occupancy != k.occupancy) {
      k.solo_bound = rate_bound(k, k.occupancy);
      k.solo_bound_occupancy = k.occupancy;
    }
    k.rate_max = k.solo_bound;
  } else {
    k.rate_max = 0.0;
  }
}

void Device::recompute() {
  if (lazy_) {
    if (recompute_lazy()) return;
    leave_lazy();  // (also empties started_: kernels join it only in the lazy state)
  }
  advance();
  prepare_recompute();
  grant_sms();
  int active = 0;
  // The L2 law's inputs (apply_l2_factors), summed in the same pass and order.
  double traffic = 0;
  int memory_kernels = 0;
  bool any_reuse = false;
  for (KernelRun* k : running_) {
    set_unshared_bound(*k);
    if (k->rate_max > 0) {
      ++active;
      if (k->memory_bound > 0) {
        traffic += contention::hbm_use(*k, k->rate_max, geometry_);  // (lone l2_factor here)
        ++memory_kernels;
        any_reuse |= k->working_set > 0;
      }
    }
  }
  const bool l2_applied = active > 1 && apply_l2_factors(traffic, memory_kernels, any_reuse);
  if (active <= 1) {
    // At most one kernel holds SMs: no sharing, it runs at its bound on what it holds.
    for (KernelRun* k : running_) k->rate = k->rate_max;
    finish_recompute(true);
    return;
  }
  // HBM not saturated: the max-min solution is every kernel at its bound (the solver's own
  // result without the O(k x steps) solve; contention::hbm_room_at_bounds).
  if (geometry_.bandwidth > 0) {
    double demand = 0;
    for (const KernelRun* k : running_) demand += contention::hbm_use(*k, k->rate_max, geometry_);
    if (contention::hbm_room_at_bounds(demand, geometry_)) {
      for (KernelRun* k : running_) k->rate = k->rate_max;
      finish_recompute(!l2_applied);
      return;
    }
  }
  problem_.clear();
  const int bw_constraint = problem_.add_constraint(geometry_.bandwidth);
  for (KernelRun* k : running_) {
    const int v = problem_.add_variable(1.0, k->rate_max);
    problem_.add_consumption(v, bw_constraint, contention::hbm_use(*k, 1.0, geometry_));
  }
  problem_.solve();
  for (std::size_t i = 0; i < running_.size(); ++i) {
    running_[i]->rate = problem_.rate(static_cast<int>(i));
  }
  finish_recompute(false);
}

void Device::finish_recompute(bool at_bounds) {
  Nanos next = kNever;
  const Nanos now = sim_.now();
  for (const KernelRun* k : running_) {
    if (k->rate > 0) {
      // A finish beyond the int64 horizon (a huge draw, a tiny share) is "never", not a wrapped
      // time in the past.
      const Nanos wait = checked::ceil_nanos_saturating(k->remaining / k->rate);
      if (wait < kNever - now) next = std::min(next, now + wait);
    }
  }
  for (const KernelRun* k : running_) {
    // Law 1c: a guest waits for the leftover of this kernel's last round: its start is an event.
    if (!k->leftover_wanted || !(k->rate > 0) || !(k->work > 0)) continue;
    const double last_round = (k->occupancy + k->co_sms) * k->work /
                              std::max(1e-12, k->waves * k->sm_fraction * geometry_.gpu_sms);
    const double to_go = k->remaining - last_round;
    if (!(to_go > 0)) continue;
    const Nanos wait = std::max<Nanos>(1, checked::ceil_nanos_saturating(to_go / k->rate));
    if (wait < kNever - now) next = std::min(next, now + wait);
  }
  for (KernelRun* k : running_) {
    // Law 1b: the end of the resident round of a kernel a more urgent one waits for.
    if (!k->yield_wanted) {
      k->retire_at = kNever;
      continue;
    }
    if (k->rate <= 0) continue;
    const double round = contention::round_work(*k, geometry_);
    if (round <= 0) continue;
    const double done = std::max(0.0, (k->work - k->remaining) - k->wave_origin);
    const double to_go = round - std::fmod(done, round);
    const Nanos wait = checked::ceil_nanos_saturating(to_go / k->rate);
    if (wait < kNever - now) {
      k->retire_at = now + wait;
      next = std::min(next, k->retire_at);
    }
  }
  update_busy();
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
  update_busy();
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
    if (co_resident(*k)) leave_co_residency(*k);
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
//  - grant_sms()'s one-kernel branch gives a new kernel grant_to(0 held, all SMs free), a
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
      grant_sms();
      k.l2_factor = contention::lone_l2_factor(k, geometry_);
      cached = &remember_solo(solo_of(k));
    }
    const SoloCache& solo = *cached;
    bandwidth = solo.bandwidth;
    k.occupancy = solo.occupancy;
    k.l2_factor = solo.l2_factor;
    if (k.occupancy > 0) {
      if (k.first_start < 0) k.first_start = now;  // grant_to's record, the grant from the cache
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
  // grant_sms()'s one-kernel branch on the probe alone, then its bound with its lone l2_factor
  // (what inline_recompute_solo() computes for a new kernel).
  probe.occupancy = 0;
  probe.l2_factor = contention::lone_l2_factor(probe, geometry_);
  running_.push_back(&probe);
  grant_sms();
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

// ------------------------------------------------------------------------------ lazy path

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
    // A kernel short of its demand may take freed SMs at any event (grant_sms): full path.
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
  // Grants: every other kernel holds its demand, so only the kernels that joined want SMs; in
  // block-dispatch order (priority, then launch order), as grant_sms.
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
      grant_to(*k, epsilon, free, client_held_[c]);
    }
    occupied_sum_ += k->occupancy;
    touched_.push_back(static_cast<std::uint32_t>(c));
  }
  bool short_of_demand = false;
  for (KernelRun* k : started_) {
    set_unshared_bound(*k);
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
