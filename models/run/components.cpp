// Components: the independent parts of a run, and the loop that runs several of them.
//
// Law. Devices interact only through tenants: a tenant's kernels run on its devices, its
// memory is allocated there, a fault's blast radius is a device's clients, a collective spans a
// multi-GPU tenant's devices. So the devices split into components, the connected parts of the
// graph "device -- tenant on it": no event of one component reads or changes anything of another
// (the run's statistics are per tenant and per device). Each component gets its own Simulator
// (its own pending events, ticks and warm-up mark), scheduled in the order one queue for the
// whole run would schedule them; its events then run in exactly the order that queue would run
// them (time, class, order of scheduling: the order of scheduling restricted to one component is
// the component's own), so every tenant's and device's history is the same, bit for bit, with or
// without the split (RunOptions::partition; tests/unit/test_direct_path.cpp).
//
// The loop. One component runs its simulator to the end. Several run in windows of simulated
// time [t, t + W): each component with an event in the window runs up to its end (its events
// and its sampler's ticks), one after the other, so one device's and tenant's state stays in the
// caches for a window's worth of events instead of one event (and a tenant alone on its device
// runs inline across the whole window: models/run/direct.cpp). W is chosen so that a window
// holds about kWindowWork requests and kernel launches of the work estimate (more with many
// components: kWindowWorkPerComponent). What the
// components record in a window (request, kernel and event records, arrivals for observers)
// waits in the component and is handed on in time order at the window's end (ties: component
// order), so the result's records and the observers' calls stay in simulated-time order and
// memory stays bounded by a window. After `duration` the windows are the sampler's ticks: the
// timeseries stops at the first tick after `duration` at which every tenant is idle, a rule over
// all components (sampling.cpp). The event count is the components' less the extra warm-up
// marks (one queue holds one). An interrupted run stops after the event at which the poll sees
// the flag (every 4096 events of a component's window, and between components every 4096 events
// of the run); its end is the latest clock of a component.
//
// Cost: O(components) per window plus the merge of the window's records (sim/core/time_merge.hpp:
// O(records x log components) below 16 components with records, O(records) from 16 on); no
// change to the cost per event. A request waits as a 40-byte row (RequestRow, run.hpp) unless
// a recorder takes outcomes (80 bytes).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "models/run/run.hpp"
#include "models/scenario/work_estimate.hpp"
#include "sim/core/time_merge.hpp"

namespace gpumux::run {
namespace {

// The heap is fastest while a handful of events is pending (a single service: 20% faster on
// the quickstart); the calendar queue wins from a few dozen on (40 tenants on 10 GPUs: 9%
// faster; 1200 tenants: 27%). A run keeps about one arrival and one kernel event per request in
// flight pending, so the estimate is the tenants' possible requests in flight; a batched tenant
// runs one iteration at a time whatever its batch (one arrival, one iteration-due and one
// kernel event per stream pending: batching.cpp), so it counts one (Llama-2-7B at max_batch
// 128 alone on an A100, bench/vidur: the heap takes 15 % fewer instructions than the calendar
// queue it was given). Every kind gives the same event order, so the choice never changes
// results. Chosen per component.
QueueKind choose_queue(const ResolvedScenario& resolved, const Component& component,
                       const RunOptions& options) {
  if (options.queue) return *options.queue;
  std::int64_t pending = static_cast<std::int64_t>(component.devices.size());
  for (const std::size_t t : component.tenants) {
    const TenantSpec& spec = resolved.scenario.tenants[t];
    const int in_flight = spec.workload.max_batch > 0 ? 1 : spec.workload.max_in_flight;
    pending +=
        1 + static_cast<std::int64_t>(in_flight) * static_cast<std::int64_t>(spec.devices.size());
  }
  return pending > 64 ? QueueKind::calendar : QueueKind::heap;
}

/// Requests and kernel launches (work estimate) per window of a partitioned run: long enough
/// that a component's state is reused over many events, short enough that the records held
/// until the window ends stay few (2^14: ~1 MB of request outcomes) and reach a streamed result
/// file while the run goes on (its encoder thread works beside the simulation; one flush at the
/// end of a long window would leave it idle, then make the run wait for it: a 2-GPU `run -o`
/// took 3x the one-queue run's wall time with 2^18). A run that keeps no records (the CLI
/// without -o, a cluster's workload pods) holds only its events (OOM, kill, fault: rare) and
/// takes windows of 2^22.
constexpr double kWindowWork = 1 << 14;
constexpr double kWindowWorkWithoutRecords = 1 << 22;
/// With records kept, a window also gives every component about this much work (up to
/// kWindowWorkMax in all): a visit reads the component's state (simulator, queue, tenant,
/// device, statistics) from memory, and with 2^14 over 512 one-GPU components a visit ran ~16
/// requests, so those misses came back every few kernels (cachegrind, docs/performance.md).
/// The cap keeps what a window holds within ~10 MB (2^18: ~130k request outcomes).
constexpr double kWindowWorkPerComponent = 1 << 8;
/// The same when the window holds 40-byte request rows instead of 80-byte outcomes (no recorder
/// takes outcomes: `run -o`, `compare -o`): twice the work in the same bytes, so a visit runs
/// ~256 requests instead of ~128 (512 Poisson GPUs with -o, 10.24M kernels: process CPU -4 to
/// -9 %, docs/performance.md; 2^9 with outcomes was no faster, and 40-byte rows with 2^8).
constexpr double kWindowWorkPerComponentRows = 1 << 9;
constexpr double kWindowWorkMax = 1 << 18;

// Union-find over device indices.
std::size_t find_root(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

}  // namespace

void Run::build_components() {
  const std::size_t n = resolved.devices.size();
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  for (std::size_t t = 0; t < resolved.tenant_devices.size(); ++t) {
    const std::vector<int>& on = resolved.tenant_devices[t];
    for (std::size_t i = 0; i < on.size(); ++i) {
      const std::size_t a = find_root(parent, static_cast<std::size_t>(on.front()));
      const std::size_t b = find_root(parent, static_cast<std::size_t>(on[i]));
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  // Components in the order of their first device; everything in one unless partitioned.
  component_of_device_.assign(n, 0);
  std::vector<std::size_t> index_of_root(n, n);
  for (std::size_t d = 0; d < n; ++d) {
    const std::size_t root = options_.partition ? find_root(parent, d) : 0;
    if (index_of_root[root] == n) {
      index_of_root[root] = components_.size();
      components_.emplace_back();
    }
    component_of_device_[d] = index_of_root[root];
    components_[index_of_root[root]].devices.push_back(d);
  }
  if (components_.empty()) components_.emplace_back();  // no device (nothing to run)
  for (std::size_t t = 0; t < resolved.tenant_devices.size(); ++t) {
    const std::vector<int>& on = resolved.tenant_devices[t];
    if (on.empty()) continue;
    components_[component_of_device_[static_cast<std::size_t>(on.front())]].tenants.push_back(t);
  }
  for (Component& c : components_) {
    c.sim = std::make_unique<Simulator>(choose_queue(resolved, c, options_));
  }
  current_ = &components_.front();
}

std::uint64_t Run::events_processed() const {
  // One warm-up event in the run, however many components marked it.
  std::uint64_t events = 0, warmups = 0;
  for (const Component& c : components_) {
    events += c.sim->events_processed();
    warmups += c.warmup_ran ? 1 : 0;
  }
  return warmups > 1 ? events - (warmups - 1) : events;
}

std::uint64_t Run::events_inline() const {
  std::uint64_t events = 0;
  for (const Component& c : components_) events += c.sim->events_inline();
  return events;
}

void Run::poll() {
  if (options_.interrupt != nullptr && options_.interrupt->load()) {
    interrupted_ = true;
    current_->sim->stop();
  }
  if (options_.progress) {
    // A partitioned run's count from its running total (events_processed() reads every
    // component's simulator: 512 cold reads per poll, 0.6 % of a 512-GPU run, perf).
    std::uint64_t events = events_processed_by_visits_;
    if (counting_visits_) {
      events += current_->sim->events_processed() - visit_start_events_;
      if (warmups_ran_ > 1) events -= warmups_ran_ - 1;
    } else {
      events = events_processed();
    }
    options_.progress(current_->sim->now(), scenario.duration, events);
  }
}

bool Run::run_components() {
  for (Component& c : components_) c.sim->set_poll([this] { poll(); }, 4096);
  if (components_.size() == 1) {
    current_ = &components_.front();
    current_->sim->run();
    return interrupted_;
  }
  return run_partitioned();
}

bool Run::run_partitioned() {
  // Records wait in their component while the windows run (and only then: the end's unfinished
  // records and the set-up's rejections go straight through).
  struct Buffering {
    bool& on;
    explicit Buffering(bool& flag) : on(flag) { on = true; }
    ~Buffering() { on = false; }
  } buffering(buffering_), counting(counting_visits_);
  // The events of every component so far, kept up to date visit by visit (for poll()).
  events_processed_by_visits_ = 0;
  for (const Component& c : components_) {
    events_processed_by_visits_ += c.sim->events_processed();
  }
  const Nanos duration = scenario.duration;
  const WorkEstimate work = estimate_work(scenario, resolved.traces);
  const double per_ns =
      (work.requests + work.launches) / std::max(1.0, static_cast<double>(duration));
  const bool keeps_records = record_requests || wants_kernels() || !observers_.empty();
  const double window_work =
      keeps_records ? std::clamp((outcome_observers_.empty() ? kWindowWorkPerComponentRows
                                                             : kWindowWorkPerComponent) *
                                     static_cast<double>(components_.size()),
                                 kWindowWork, kWindowWorkMax)
                    : kWindowWorkWithoutRecords;
  const double span = std::max(static_cast<double>(duration), 1.0);
  const Nanos window = std::max<Nanos>(
      kMicrosecond, static_cast<Nanos>(per_ns > 0 ? std::min(window_work / per_ns, span) : span));
  const auto dry = [this] {
    for (const Component& c : components_) {
      if (c.sim->next_event_time() != kNever) return false;
    }
    return true;
  };
  // Runs the components up to `horizon` (every one when `all`: their ticks up to it delivered;
  // else those with an event by then). False when interrupted.
  const auto run_window = [&](Nanos horizon, bool all) {
    for (Component& c : components_) {
      if (!all && c.sim->next_event_time() > horizon) continue;
      current_ = &c;
      const std::uint64_t before = c.sim->events_processed();
      visit_start_events_ = before;
      c.sim->run_until(horizon);
      const std::uint64_t after = c.sim->events_processed();
      events_processed_by_visits_ += after - before;
      visit_start_events_ = after;
      unpolled_events_ += after - before;
      if (!interrupted_ && unpolled_events_ >= 4096) {
        unpolled_events_ = 0;
        poll();
      }
      if (interrupted_) break;
    }
    current_ = &components_.front();
    flush_records();
    return !interrupted_;
  };
  // Up to `duration`: windows of `window`.
  Nanos t = 0;
  while (t < duration && !dry()) {
    t = duration - t > window ? t + window : duration;
    if (!run_window(t, false)) return true;
  }
  // After it (the drain): tick by tick, every component, until every tenant is idle at a tick.
  if (!dry() && !run_window(t, true)) return true;
  while (!dry()) {
    const Nanos tick = components_.front().sim->ticker().next();
    if (tick == kNever) break;
    if (!run_window(tick, true)) return true;
    if (std::all_of(tenants.begin(), tenants.end(), [](const auto& x) { return x->idle(); })) {
      for (Component& c : components_) c.sim->ticker().stop();
      break;
    }
  }
  // Events after the last tick (a restart after the drain): windows again.
  while (!dry()) {
    Nanos next = kNever;
    for (const Component& c : components_) next = std::min(next, c.sim->next_event_time());
    const Nanos horizon = next > kNever - window ? kNever - 1 : next + window;
    if (!run_window(horizon, false)) return true;
  }
  return false;
}

namespace {

// The components' vectors FIELD, for merge_in_time_order (sim/core/time_merge.hpp): ties by
// component, then by position.
template <class T>
std::vector<std::vector<T>*> sources_of(std::vector<Component>& components,
                                        std::vector<T> Component::*field) {
  std::vector<std::vector<T>*> sources;
  for (Component& c : components) {
    if (!(c.*field).empty()) sources.push_back(&(c.*field));
  }
  return sources;
}

}  // namespace

void Run::flush_records() {
  merge_in_time_order(
      sources_of(components_, &Component::arrivals),
      [](const Component::Arrival& a) { return a.arrival; },
      [this](const Component::Arrival& a) {
        for (Recorder* o : arrival_observers_) {
          o->on_request_arrived(a.tenant, a.arrival, a.measured);
        }
      });
  merge_in_time_order(
      sources_of(components_, &Component::requests),
      [](const RequestOutcome& r) { return r.record.finish_ns; },
      [this](const RequestOutcome& r) { emit_request(r); });
  merge_in_time_order(
      sources_of(components_, &Component::request_rows),
      [](const RequestRow& r) { return r.finish_ns; },
      [this](const RequestRow& r) { emit_request_record(r.record()); });
  merge_in_time_order(
      sources_of(components_, &Component::kernels),
      [](const KernelRecord& k) { return k.finish_ns; },
      [this](const KernelRecord& k) { emit_kernel(k); });
  merge_in_time_order(
      sources_of(components_, &Component::events), [](const EventRecord& e) { return e.time_ns; },
      [this](EventRecord& e) { emit_event(std::move(e)); });
}

}  // namespace gpumux::run
