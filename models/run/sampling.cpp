// The utilization timeseries (`output.sample`): every period, each device's SM busy and DRAM
// busy fractions over the period and its memory in use. The sampler is the simulator's ticker —
// it observes the clock, schedules nothing and changes nothing the simulation reads — and the
// series is closed at the run's end (a partial last period, nothing past the end).
#include "models/run/run.hpp"

namespace gpumux::run {

// Called by the simulator's ticker (not an event): reads the device integrals at `now`, after
// every event at or before `now` ran.
void Run::sample(Nanos now) {
  const double period = static_cast<double>(now - last_sample_);
  for (std::size_t d = 0; d < devices.size(); ++d) {
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
  last_sample_ = now;
}

// The timeseries ends at `end`: ticks the simulator did not deliver (the queue ran dry before
// `end`) are taken now, ticks after `end` (events that outlive the run, e.g. a restart after the
// drain) are dropped, and a last sample at `end` covers a final partial period.
void Run::finish_timeseries(Nanos end) {
  for (Nanos t = sim.next_tick(); t <= end; t += scenario.output.sample) sample(t);
  last_sample_ = 0;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto& series = result.timeseries[devices[d]->geometry().name];
    while (!series.empty() && series.back().time_ns > end) {
      series.pop_back();
      sample_busy_[d].pop_back();
      sample_dram_[d].pop_back();
    }
    if (!series.empty()) last_sample_ = series.back().time_ns;
  }
  if (!devices.empty() && last_sample_ < end) sample(end);
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
