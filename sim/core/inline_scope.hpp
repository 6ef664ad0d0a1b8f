#pragma once
// Simulator::InlineScope: a model runs some of its own events without the queue (the direct
// path, models/run/direct.cpp: a tenant alone on its device), as long as each runs exactly where
// the queue would have run it: strictly before horizon(), nothing else scheduled meanwhile. Such
// events count in events_processed() (and events_inline()) and call the poll like queued ones,
// so results (and the event count) are the same as if they had been queued.
//
//   // inside the handler of a queued event
//   Simulator::InlineScope scope(sim, Simulator::InlineScope::Ticks::stop);
//   ... the handler's own work ...
//   bool running = scope.end_queued_event();
//   while (running && next event t < scope.horizon()) {
//     scope.begin_event(t);  // now() == t
//     ... the event's work ...
//     running = scope.end_event();
//   }
//   ... what is still pending goes back to the queue (schedule_at) ...
//
// Every operation is O(1) (deliver_ticks_before: O(1) per tick delivered) and inline: the scope
// is a view of the simulator, with nothing of its own to restore.
#include <algorithm>
#include <cstdint>

#include "sim/core/simulator.hpp"

namespace gpumux {

class Simulator::InlineScope {
 public:
  /// Whether the model stops at the simulator's ticks (stop) or delivers them itself between its
  /// events (deliver, deliver_ticks_before(): only for a model whose state, as far as the ticker
  /// reads it, is current after each inline event).
  enum class Ticks { stop, deliver };

  /// Opened inside a queued event's handler, before the handler changes anything: the horizon is
  /// the earliest of the next queued event, the end of the current run_until() call (an event at
  /// the horizon itself still belongs to that call) and, with Ticks::stop, the next tick.
  InlineScope(Simulator& sim, Ticks ticks) : sim_(sim) {
    const Nanos until = sim.until_ < kNever ? sim.until_ + 1 : kNever;
    horizon_ = std::min(sim.queue_.next_time(), until);
    if (ticks == Ticks::stop) horizon_ = std::min(horizon_, sim.ticker_.next());
  }
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;

  /// The first time an inline event may not run at (the constructor's; kNever: none).
  Nanos horizon() const { return horizon_; }
  /// The next tick not yet delivered (kNever: none).
  Nanos next_tick() const { return sim_.ticker_.next(); }
  /// Ticks::deliver, before the model runs its event at `t`: every tick before `t` now, as
  /// run_until() would deliver it between that event and the one before (a tick sees every
  /// event at or before it). Returns next_tick().
  Nanos deliver_ticks_before(Nanos t) {
    Ticker& ticker = sim_.ticker_;
    while (ticker.tick_ && ticker.next_ < t) ticker.advance();
    return ticker.next();
  }

  /// The queued event whose handler opened the scope has done its work and the model goes on
  /// inline: it is counted (and the poll called when due) now, before the inline events, not
  /// when it returns. False when the poll stopped the run.
  bool end_queued_event() {
    sim_.current_counted_ = true;
    return sim_.count_event();
  }
  /// The clock moves to `t` (>= now(), < horizon(); past next_tick() only with Ticks::deliver
  /// once deliver_ticks_before(t) ran) for an event the model runs inline now.
  void begin_event(Nanos t) { sim_.now_ = t; }
  /// That event has run: counted, and the poll called when due (it may stop the run; then the
  /// model stops running events inline and returns). False when the run was stopped.
  bool end_event() {
    ++sim_.events_inline_;
    return sim_.count_event();
  }
  /// For a model that counts its events in bulk: how many end_event() calls from now on return
  /// true whatever happens (the poll is not due before the last of them); the largest count when
  /// no poll is set.
  std::uint64_t events_before_poll() const {
    return sim_.poll_every_ != 0 ? sim_.until_poll_ : ~std::uint64_t{0};
  }
  /// `n` (<= events_before_poll()) inline events have run: counted as n calls of end_event()
  /// would count them, so the poll runs when the n-th makes it due. False when it stopped the
  /// run.
  bool end_events(std::uint64_t n) {
    Simulator& sim = sim_;
    sim.events_ += n;
    sim.events_inline_ += n;
    if (sim.poll_every_ != 0 && (sim.until_poll_ -= n) == 0) {
      sim.until_poll_ = sim.poll_every_;
      sim.poll_();
    }
    return !sim.stopped_;
  }

 private:
  Simulator& sim_;
  Nanos horizon_;
};

}  // namespace gpumux
