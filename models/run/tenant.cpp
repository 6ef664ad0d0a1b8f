// Tenant lifecycle: construction (random streams, trace, reserved sample space), start-up at
// t = 0, kill (an OOM or a fault: every request fails, memory and kernels are freed, neighbours
// untouched), restart after `recovery`, and the records of requests an interrupted run leaves.
#include "models/run/tenant.hpp"

#include <algorithm>

#include "models/run/run.hpp"

namespace gpumux::run {

Tenant::Tenant(Run& run, Simulator& sim, int index, const TenantSpec& spec,
               std::vector<Device*> devices, Nanos launch_overhead)
    : run_(run),
      sim_(sim),
      index_(index),
      spec_(spec),
      devices_(std::move(devices)),
      launch_overhead_(launch_overhead),
      kernels_rng_(run.streams.stream("tenant/" + spec.name + "/kernels")),
      arrivals_rng_(run.streams.stream("tenant/" + spec.name + "/arrivals")),
      tokens_rng_(run.streams.stream("tenant/" + spec.name + "/tokens")) {
  const TraceSummary& trace = run.resolved.traces[static_cast<std::size_t>(index)];
  if (spec.workload.arrivals.process == ArrivalProcess::trace) trace_ = TraceCursor(trace);
  arrivals_end_ =
      std::min(run.scenario.duration, spec.active_until.value_or(run.scenario.duration));
  const auto scan = [this](const std::vector<KernelSpec>& kernels) {
    for (const KernelSpec& k : kernels) {
      lanes_ = std::max(lanes_, k.lane + 1);
      output_token_kernels_ = output_token_kernels_ || k.repeat_per_token == TokenCount::output;
      shaped_launches_ = shaped_launches_ || k.roofline.any();
      fixed_durations_ = fixed_durations_ && k.duration.kind == DurationDistribution::Kind::fixed;
    }
  };
  fixed_durations_ = true;  // (scan clears it at the first kernel with a drawn duration)
  scan(spec.workload.kernels);
  for (const std::vector<KernelSpec>& kernels : spec.workload.kernels_by_length) scan(kernels);
  direct_ = run.direct_path && direct_workload();
  direct_holder_ = run.direct_path && holder_workload();
  host_gap_ = spec.workload.host_gap;
  kernel_priority_ = -spec.workload.priority;
  if (spec.workload.arrivals.process == ArrivalProcess::poisson) {
    arrival_rate_ = poisson_rate_per_ns(spec.workload.arrivals.rate_per_s);
  }
  if (spec.workload.kernels.size() == 1 && spec.workload.kernels_by_length.empty()) {
    const KernelSpec& k = spec.workload.kernels.front();
    if (k.repeat == 1 && k.repeat_per_token == TokenCount::none &&
        k.duration_per_token == TokenCount::none && k.per_context_token == 0 && !k.roofline.any()) {
      single_launch_ = &k;
    }
  }
  // Reserve the expected number of measured latencies (avoids regrowing large vectors).
  const ArrivalSpec& a = spec.workload.arrivals;
  const double window_s = to_seconds(run.scenario.duration - run.scenario.warmup);
  double expected = 0;
  if (a.process == ArrivalProcess::poisson || a.process == ArrivalProcess::constant) {
    expected = a.rate_per_s * window_s * 1.02 + 64;
  } else if (a.process == ArrivalProcess::trace) {
    expected = static_cast<double>(trace.rows);
  }
  if (expected > 0 && expected < 5e8) {
    run.stats_recorder().reserve(static_cast<std::size_t>(index),
                                 static_cast<std::size_t>(expected));
  }
}

const TenantStats& Tenant::stats() const { return run_.tenant_stats(index_); }

void Tenant::start() {
  sim_.schedule_at(spec_.active_from, make_event<&Tenant::on_start>(*this), kPriorityControl);
  if (spec_.active_until) {
    sim_.schedule_at(*spec_.active_until, make_event<&Tenant::on_stop>(*this), kPriorityControl);
  }
}

void Tenant::on_stop() {
  recycle_graveyard();
  stopped_ = true;
  // Requests queued or running drain (graceful termination); their own memory is freed as each
  // finishes. A dead tenant holds nothing.
  if (!dead_) release(spec_.memory);
}

void Tenant::on_start() {
  recycle_graveyard();
  if (rejected_) {
    dead_ = true;
  } else {
    allocate(spec_.memory, "start-up allocation:");
  }
  const ArrivalSpec& a = spec_.workload.arrivals;
  if (a.process == ArrivalProcess::closed) {
    for (int i = 0; i < a.concurrency; ++i) arrive();
  } else {
    schedule_next_open_arrival();
  }
}

void Tenant::schedule_restart(Nanos delay) {
  sim_.schedule_in(delay, make_event<&Tenant::on_restart>(*this), kPriorityControl);
}

void Tenant::on_restart() {
  recycle_graveyard();
  if (!dead_ || rejected_ || stopped_) return;
  dead_ = false;
  run_.record_event(EventKind::restart, index_, devices_.front()->index(),
                    spec_.name + " restarted");
  if (allocate(spec_.memory, "start-up allocation:")) dispatch();
}

void Tenant::kill(EventKind kind, const std::string& detail) {
  if (dead_) return;
  dead_ = true;
  run_.record_event(kind, index_, devices_.front()->index(), detail);
  for (Device* d : devices_) d->remove_client_kernels(index_);
  if (iteration_running_) {
    for (Stream& stream : iteration_.streams) sim_.cancel(stream.ready_event);
    iteration_.dead = true;
    iteration_running_ = false;
  }
  while (!in_flight_list_.empty()) {
    Request& r = *in_flight_list_.front();
    for (Stream& stream : r.streams) sim_.cancel(stream.ready_event);
    finish_request(r, RequestStatus::failed);
  }
  while (!queue_.empty()) {
    std::unique_ptr<Request> r = std::move(queue_.front());
    queue_.pop_front();
    fail_waiting(std::move(r));
  }
  release_all();
}

void Tenant::record_unfinished() {
  for (const auto& r : in_flight_list_) run_.record_request(index_, *r);
  for (const auto& r : queue_) run_.record_request(index_, *r);
}

}  // namespace gpumux::run
