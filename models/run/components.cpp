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
// Cost: O(components) per window plus the merge of the window's records, O(records x log
// components) (a tournament tree: log2(components) comparisons per record); no change to the
// cost per event.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "models/run/run.hpp"
#include "models/scenario/work_estimate.hpp"

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
    options_.progress(current_->sim->now(), scenario.duration, events_processed());
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
  } buffering(buffering_);
  const Nanos duration = scenario.duration;
  const WorkEstimate work = estimate_work(scenario, resolved.traces);
  const double per_ns =
      (work.requests + work.launches) / std::max(1.0, static_cast<double>(duration));
  const bool keeps_records = record_requests || wants_kernels() || !observers_.empty();
  const double window_work =
      keeps_records ? std::clamp(kWindowWorkPerComponent * static_cast<double>(components_.size()),
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
      c.sim->run_until(horizon);
      unpolled_events_ += c.sim->events_processed() - before;
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

/// From this many components with records in a window, the window's records are put in order by
/// sorting rather than merging (sort_in_time_order).
constexpr std::size_t kSortFromSources = 16;

// The order merge_in_time_order gives, by a stable sort on time of every element of SOURCES
// taken source by source (so ties stay by source, then position): a least-significant-digit
// radix sort of (time - earliest, element) pairs, 11 bits a pass over the window's span of time
// (3 passes for a window of a second), about 15 instructions per element against the tournament
// tree's log2(sources) matches of 128-bit keys and their branches (9 at 512 components:
// Run::flush_records was 18 % of a 512-GPU `run -o`, perf, 2026-12-06). The same order only if
// every source is already in time order (a merge never reorders a source, a sort would): false,
// with nothing emitted, when one is not. Clears the sources when done.
template <class T, class TimeOf, class Emit>
bool sort_in_time_order(std::vector<std::vector<T>*>& sources, TimeOf time_of, Emit emit) {
  struct Entry {
    std::uint64_t key;  // time - earliest
    T* element;
  };
  constexpr int kDigitBits = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;
  // The span from the sources' ends (a source out of order is caught below, before any use of
  // a key), then one pass over the elements that both checks each source's order and takes the
  // keys: the elements are read once here and once when emitted (a separate check pass was a
  // third read of a window's records, most of them out of the caches by then).
  Nanos earliest = time_of(sources.front()->front()), latest = earliest;
  std::size_t total = 0;
  for (std::vector<T>* source : sources) {
    earliest = std::min(earliest, time_of(source->front()));
    latest = std::max(latest, time_of(source->back()));
    total += source->size();
  }
  // The thread's buffers, reused from window to window (fresh ones were megabytes of new pages
  // per window at 512 components).
  thread_local std::vector<Entry> from, to;
  from.resize(total);
  to.resize(total);
  {
    Entry* at = from.data();
    for (std::vector<T>* source : sources) {
      Nanos previous = earliest;
      for (T& x : *source) {
        const Nanos time = time_of(x);
        if (time < previous) return false;
        previous = time;
        *at++ = {static_cast<std::uint64_t>(time) - static_cast<std::uint64_t>(earliest), &x};
      }
    }
  }
  const std::uint64_t span =
      static_cast<std::uint64_t>(latest) - static_cast<std::uint64_t>(earliest);
  std::vector<std::size_t> start(kDigits);
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += kDigitBits) {
    std::fill(start.begin(), start.end(), std::size_t{0});
    for (const Entry& e : from) ++start[(e.key >> shift) & (kDigits - 1)];
    std::size_t at = 0;
    for (std::size_t& d : start) {
      const std::size_t count = d;
      d = at;
      at += count;
    }
    for (const Entry& e : from) to[start[(e.key >> shift) & (kDigits - 1)]++] = e;
    from.swap(to);
  }
  // The elements were written while the window ran and have left the caches since: each is
  // fetched a few ahead of its turn (half of this function's time was that miss, perf).
  // Both lines of an element that straddles two (a request's outcome is 80 bytes).
  constexpr std::size_t kAhead = 16;
  for (std::size_t i = 0; i < total; ++i) {
    if (i + kAhead < total) {
      const T* ahead = from[i + kAhead].element;
      __builtin_prefetch(ahead);
      __builtin_prefetch(reinterpret_cast<const char*>(ahead) + sizeof(T) - 1);
    }
    emit(*from[i].element);
  }
  for (std::vector<T>* source : sources) source->clear();
  return true;
}

// Hands every element of the components' vectors FIELD to EMIT in order of time_of(element),
// ties by component, then by position; clears them.
template <class T, class TimeOf, class Emit>
void merge_in_time_order(std::vector<Component>& components, std::vector<T> Component::*field,
                         TimeOf time_of, Emit emit) {
  std::vector<std::vector<T>*> sources;
  for (Component& c : components) {
    if (!(c.*field).empty()) sources.push_back(&(c.*field));
  }
  if (sources.empty()) return;
  if (sources.size() == 1) {
    for (T& x : *sources.front()) emit(x);
    sources.front()->clear();
    return;
  }
  if (sources.size() >= kSortFromSources && sort_in_time_order(sources, time_of, emit)) return;
  // A tournament (loser) tree over the sources' next elements: leaves k..2k-1 are the sources,
  // internal node i (1..k-1) holds the loser of the match between its children's winners,
  // node 0 the overall winner. A node is the element's key, (time, source) in one 128-bit
  // number (the time's bits offset to unsigned order above the source), so a match is one
  // comparison and the source is the key's low half; an exhausted source is all ones, after
  // every element. Each element: emitted, then its source's next key replays its matches up
  // to the root, log2(k) comparisons (a binary heap's pop and push make about twice that).
  __extension__ typedef unsigned __int128 Key;
  const std::size_t k = sources.size();
  const Key exhausted = ~Key{0};
  auto key_of = [](Nanos time, std::size_t source) {
    const std::uint64_t ordered = static_cast<std::uint64_t>(time) ^ (std::uint64_t{1} << 63);
    return (static_cast<Key>(ordered) << 64) | source;
  };
  std::vector<Key> node(k), winner(2 * k);
  std::vector<std::size_t> position(k, 0);
  std::size_t total = 0;
  for (std::size_t s = 0; s < k; ++s) {
    winner[k + s] = key_of(time_of((*sources[s])[0]), s);
    total += sources[s]->size();
  }
  for (std::size_t i = k - 1; i >= 1; --i) {
    const Key a = winner[2 * i], b = winner[2 * i + 1];
    winner[i] = std::min(a, b);
    node[i] = std::max(a, b);
  }
  node[0] = winner[1];
  for (; total > 0; --total) {
    const auto s = static_cast<std::size_t>(static_cast<std::uint64_t>(node[0]));
    std::vector<T>& source = *sources[s];
    emit(source[position[s]]);
    Key w = ++position[s] < source.size() ? key_of(time_of(source[position[s]]), s) : exhausted;
    for (std::size_t i = (k + s) / 2; i >= 1; i /= 2) {
      if (node[i] < w) std::swap(node[i], w);
    }
    node[0] = w;
  }
  for (std::vector<T>* source : sources) source->clear();
}

}  // namespace

void Run::flush_records() {
  merge_in_time_order(
      components_, &Component::arrivals, [](const Component::Arrival& a) { return a.arrival; },
      [this](const Component::Arrival& a) {
        for (Recorder* o : arrival_observers_) {
          o->on_request_arrived(a.tenant, a.arrival, a.measured);
        }
      });
  merge_in_time_order(
      components_, &Component::requests, [](const RequestOutcome& r) { return r.record.finish_ns; },
      [this](const RequestOutcome& r) { emit_request(r); });
  merge_in_time_order(
      components_, &Component::kernels, [](const KernelRecord& k) { return k.finish_ns; },
      [this](const KernelRecord& k) { emit_kernel(k); });
  merge_in_time_order(
      components_, &Component::events, [](const EventRecord& e) { return e.time_ns; },
      [this](EventRecord& e) { emit_event(std::move(e)); });
}

}  // namespace gpumux::run
