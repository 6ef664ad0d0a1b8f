#include "models/device.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/scenario/units.hpp"

namespace gpumux {

Device::Device(Simulator& sim, DeviceGeometry geometry, SharingSpec sharing)
    : sim_(sim), geometry_(std::move(geometry)), sharing_(std::move(sharing)) {}

bool Device::attach_client(int tenant, std::string& /*reason*/) {
  clients_.push_back(tenant);
  client_memory_.push_back(0);
  client_sm_.emplace_back();
  return true;
}

bool Device::has_client(int tenant) const {
  return std::find(clients_.begin(), clients_.end(), tenant) != clients_.end();
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
  if (sharing_.pinned_memory_limit && client_memory_[slot] + bytes > *sharing_.pinned_memory_limit) {
    why = "allocation of " + units::format_size(bytes) + " exceeds the MPS pinned memory limit of " +
          units::format_size(*sharing_.pinned_memory_limit) + " (client holds " +
          units::format_size(client_memory_[slot]) + ")";
    return false;
  }
  if (memory_used_ + bytes > geometry_.memory) {
    why = "allocation of " + units::format_size(bytes) + " does not fit on " + geometry_.name +
          ": " + units::format_size(memory_used_) + " of " + units::format_size(geometry_.memory) +
          " already in use";
    return false;
  }
  client_memory_[slot] += bytes;
  memory_used_ += bytes;
  memory_peak_ = std::max(memory_peak_, memory_used_);
  memory_tw_.set(sim_.now(), static_cast<double>(memory_used_));
  return true;
}

void Device::release(int tenant, std::int64_t bytes) {
  const std::size_t slot = client_slot(clients_, tenant);
  bytes = std::min(bytes, client_memory_[slot]);
  client_memory_[slot] -= bytes;
  memory_used_ -= bytes;
  memory_tw_.set(sim_.now(), static_cast<double>(memory_used_));
}

double Device::client_sm_integral(int tenant, Nanos now) const {
  return client_sm_[client_slot(clients_, tenant)].integral(now);
}

double Device::rate_bound(const KernelRun& kernel, double sm_cap) const {
  const double f = kernel.sm_fraction;
  const double m = kernel.memory_bound;
  const double sigma = std::min(1.0, sm_cap / (f * geometry_.gpu_sms));
  const double beta = std::min(1.0, geometry_.bandwidth);
  if (sigma <= 0 || beta <= 0) return 0.0;
  return 1.0 / ((1.0 - m) / sigma + m / beta);
}

double Device::sm_cap_for(const KernelRun& /*kernel*/) const { return geometry_.sms; }
double Device::bandwidth_inflation(const KernelRun& /*kernel*/) const { return 1.0; }
void Device::add_constraints(MaxMinProblem& /*problem*/) {}
void Device::on_strategy_event(std::uint64_t /*tag*/) {}

void Device::start_running(KernelRun& kernel) {
  if (kernel.first_start < 0) kernel.first_start = sim_.now();
  kernel.rate = 0;
  running_.push_back(&kernel);
}

void Device::stop_running(KernelRun& kernel) {
  advance();
  const auto it = std::find(running_.begin(), running_.end(), &kernel);
  if (it != running_.end()) running_.erase(it);
  kernel.rate = 0;
  kernel.occupancy = 0;
}

void Device::remove_running_of(int tenant) {
  advance();
  std::erase_if(running_, [tenant](const KernelRun* k) { return k->tenant == tenant; });
}

void Device::advance() {
  const Nanos now = sim_.now();
  const double dt = static_cast<double>(now - last_advance_);
  last_advance_ = now;
  if (dt <= 0) return;
  for (KernelRun* k : running_) k->remaining = std::max(0.0, k->remaining - k->rate * dt);
}

void Device::recompute() {
  advance();
  prepare_recompute();
  if (running_.size() == 1 && !has_client_constraints()) {
    // One kernel: no sharing, it runs at its solo bound on this device.
    KernelRun* k = running_.front();
    k->rate_max = rate_bound(*k, sm_cap_for(*k));
    k->rate = k->rate_max;
    k->occupancy = std::min(k->sm_fraction * geometry_.gpu_sms, sm_cap_for(*k));
    finish_recompute();
    return;
  }
  problem_.clear();
  const int sm_constraint = problem_.add_constraint(geometry_.sms);
  const int bw_constraint = problem_.add_constraint(geometry_.bandwidth);
  for (KernelRun* k : running_) {
    const double cap = sm_cap_for(*k);
    k->rate_max = rate_bound(*k, cap);
    const int v = problem_.add_variable(1.0, k->rate_max);
    problem_.add_consumption(v, sm_constraint,
                             (1.0 - k->memory_bound) * k->sm_fraction * geometry_.gpu_sms);
    problem_.add_consumption(v, bw_constraint, k->memory_bound * bandwidth_inflation(*k));
  }
  add_constraints(problem_);
  problem_.solve();

  for (std::size_t i = 0; i < running_.size(); ++i) {
    KernelRun* k = running_[i];
    k->rate = problem_.rate(static_cast<int>(i));
    const double width = std::min(k->sm_fraction * geometry_.gpu_sms, sm_cap_for(*k));
    k->occupancy = k->rate_max > 0 ? (k->rate / k->rate_max) * width : 0.0;
  }
  finish_recompute();
}

void Device::finish_recompute() {
  Nanos next = kNever;
  const Nanos now = sim_.now();
  for (const KernelRun* k : running_) {
    if (k->rate > 0) {
      const double wait = std::ceil(k->remaining / k->rate);
      next = std::min(next, now + static_cast<Nanos>(wait));
    }
  }
  update_busy();
  sim_.cancel(completion_event_);
  completion_event_ = next == kNever ? EventId{}
                                     : sim_.schedule_at(next, *this, kTagCompletion,
                                                        kPriorityCompletion);
}

void Device::set_overhead(bool in_overhead) {
  in_overhead_ = in_overhead;
  update_busy();
}

void Device::update_busy() {
  const Nanos now = sim_.now();
  double occupied = 0;
  std::vector<double>& per_client = client_occupancy_scratch_;
  per_client.assign(clients_.size(), 0.0);
  for (const KernelRun* k : running_) {
    occupied += k->occupancy;
    const auto it = std::find(clients_.begin(), clients_.end(), k->tenant);
    if (it != clients_.end()) per_client[static_cast<std::size_t>(it - clients_.begin())] += k->occupancy;
  }
  const double sms = std::max(1, geometry_.sms);
  const double fraction = std::min(1.0, occupied / sms);
  busy_.set(now, in_overhead_ ? 1.0 : fraction);
  useful_.set(now, in_overhead_ ? 0.0 : fraction);
  for (std::size_t c = 0; c < clients_.size(); ++c) client_sm_[c].set(now, per_client[c]);
}

void Device::complete_finished() {
  advance();
  std::vector<KernelRun*>& finished = finished_scratch_;
  finished.clear();
  for (KernelRun* k : running_) {
    const double tolerance = 1e-9 * k->work + 1e-3;
    if (k->remaining <= tolerance) finished.push_back(k);
  }
  std::erase_if(running_, [&](KernelRun* k) {
    return std::find(finished.begin(), finished.end(), k) != finished.end();
  });
  batching_ = true;
  for (KernelRun* k : finished) {
    k->rate = 0;
    k->occupancy = 0;
    k->owner->on_kernel_finished(*k, sim_.now());
  }
  batching_ = false;
  after_completions();
  recompute();
}

void Device::on_event(std::uint64_t tag) {
  if (tag == kTagCompletion) {
    completion_event_ = EventId{};
    complete_finished();
  } else {
    on_strategy_event(tag);
  }
}

}  // namespace gpumux
