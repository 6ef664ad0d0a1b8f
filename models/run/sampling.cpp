// The utilization timeseries (`output.sample`): every period, each device's SM busy and DRAM
// busy fractions over the period and its memory in use. The sampler is the simulator's ticker —
// it observes the clock, schedules nothing and changes nothing the simulation reads — and the
// series is closed at the run's end (a partial last period, nothing past the end).
#include "models/run/run.hpp"

#include <algorithm>

namespace gpumux::run {

// Called by the component's ticker (not an event): reads its devices' integrals at `now`, after
// every event of the component at or before `now` ran. Once the run is over (after `duration`,
// nothing queued or running) the ticker stops: late events (a restart long after the drain) get
// no ticks. With several components that rule is the partitioned loop's (components.cpp): it
// needs every tenant, and runs at each tick after `duration` once all components reached it.
void Run::sample(std::size_t component, Nanos now, bool force) {
  Component& c = components_[component];
  if (!force) {
    if (components_.size() == 1 && now > scenario.duration &&
        std::all_of(tenants.begin(), tenants.end(), [](const auto& t) { return t->idle(); })) {
      c.sim->ticker().stop();
    }
    if (now - c.last_sample < c.sample_every) return;  // a decimated series: not due yet
  }
  const double period = static_cast<double>(now - c.last_sample);
  for (const std::size_t d : c.devices) {
    const double busy = devices[d]->busy_integral(now);
    const double dram = devices[d]->dram_integral(now);
    TimeseriesSample s;
    s.time_ns = now;
    s.sm_busy = period > 0 ? (busy - sample_busy_[d].back()) / period : 0.0;
    s.dram_busy = period > 0 ? (dram - sample_dram_[d].back()) / period : 0.0;
    s.memory_used_bytes = devices[d]->memory_used();
    result.timeseries[devices[d]->geometry().name].push_back(s);
    sample_busy_[d].push_back(busy);
    sample_dram_[d].push_back(dram);
  }
  c.last_sample = now;
  if (!c.devices.empty() && result.timeseries[devices[c.devices.front()]->geometry().name].size() >=
                                options_.max_samples_per_series) {
    decimate_timeseries(component);
  }
}

// Keeps every second sample (the 2nd, 4th, ...: the end of each merged pair), recomputes its
// busy fractions over the doubled period from the integrals (exact, not an average of
// averages), and keeps its memory reading (the memory in use at its time). Series stay aligned
// with their integrals (index i of a series <-> index i + 1 of the integrals; index 0 is time 0).
void Run::decimate_timeseries(std::size_t component) {
  Component& c = components_[component];
  for (const std::size_t d : c.devices) {
    auto& series = result.timeseries[devices[d]->geometry().name];
    std::vector<double>& busy = sample_busy_[d];
    std::vector<double>& dram = sample_dram_[d];
    std::size_t kept = 0;
    Nanos previous_time = 0;
    for (std::size_t i = 1; i < series.size(); i += 2) {
      TimeseriesSample s = series[i];
      const double period = static_cast<double>(s.time_ns - previous_time);
      s.sm_busy = period > 0 ? (busy[i + 1] - busy[2 * kept]) / period : 0.0;
      s.dram_busy = period > 0 ? (dram[i + 1] - dram[2 * kept]) / period : 0.0;
      previous_time = s.time_ns;
      series[kept] = s;
      ++kept;
    }
    // The integral at the end of kept sample k is the old one at index 2k + 2.
    for (std::size_t k = 0; k < kept; ++k) {
      busy[k + 1] = busy[2 * k + 2];
      dram[k + 1] = dram[2 * k + 2];
    }
    // An odd last sample stays as the newest one (its period is not doubled).
    if (series.size() % 2 == 1) {
      const std::size_t last = series.size() - 1;
      TimeseriesSample s = series[last];
      const double period = static_cast<double>(s.time_ns - previous_time);
      s.sm_busy = period > 0 ? (busy[last + 1] - busy[kept]) / period : 0.0;
      s.dram_busy = period > 0 ? (dram[last + 1] - dram[kept]) / period : 0.0;
      busy[kept + 1] = busy[last + 1];
      dram[kept + 1] = dram[last + 1];
      series[kept] = s;
      ++kept;
    }
    series.resize(kept);
    busy.resize(kept + 1);
    dram.resize(kept + 1);
  }
  c.sample_every = c.sample_every > kNever / 4 ? kNever / 2 : 2 * c.sample_every;
  // Ticks every doubled period, on the grid of the kept samples: a run of any length costs
  // O(max_samples_per_series x log(length / output.sample)) ticks.
  c.sim->ticker().retime(
      c.last_sample > kNever - c.sample_every ? kNever : c.last_sample + c.sample_every,
      c.sample_every);
}

// The timeseries ends at `end`: ticks the simulator did not deliver (the queue ran dry before
// `end`) are taken now, ticks after `end` (events that outlive the run, e.g. a restart after the
// drain) are dropped, and a last sample at `end` covers a final partial period.
void Run::finish_timeseries(Nanos end) {
  for (std::size_t ci = 0; ci < components_.size(); ++ci) {
    Component& c = components_[ci];
    for (Nanos t = c.sim->ticker().next(); t <= end; t += c.sample_every) {
      sample(ci, t);
      if (t > kNever - c.sample_every) break;
    }
    c.last_sample = 0;
    for (const std::size_t d : c.devices) {
      auto& series = result.timeseries[devices[d]->geometry().name];
      while (!series.empty() && series.back().time_ns > end) {
        series.pop_back();
        sample_busy_[d].pop_back();
        sample_dram_[d].pop_back();
      }
      if (!series.empty()) c.last_sample = series.back().time_ns;
    }
    if (!c.devices.empty() && c.last_sample < end) sample(ci, end, true);
  }
  // Observers get the samples now that the end is known: exactly the series of the result.
  for (Recorder* o : observers_) {
    for (std::size_t d = 0; d < devices.size(); ++d) {
      for (const TimeseriesSample& s : result.timeseries[devices[d]->geometry().name]) {
        o->on_sample(d, s);
      }
    }
  }
}

}  // namespace gpumux::run
