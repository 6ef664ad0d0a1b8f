#pragma once
// Internal to the direct path (models/run/direct.cpp, direct_single.cpp): the events a tenant
// running inline has pending, at most one of each class, in queue order; and an arrival's
// first half, which both of its loops run.
#include "models/run/run.hpp"
#include "models/run/tenant.hpp"

namespace gpumux::run {

struct Tenant::DirectEvents {
  Nanos arrival = kNever;          // the next open arrival
  Nanos ready = kNever;            // the in-flight kernel's launch overhead ends
  Stream* ready_stream = nullptr;  // whose
  Nanos completion = kNever;       // the device's running kernel finishes
  Nanos iteration = kNever;        // a batched engine's on_iteration_due (iteration_pending_)
  /// The request in flight (in_flight_list_'s one entry), or nullptr. While the inline run
  /// lasts, the next waiting request reuses its storage when it finishes, and waiting requests
  /// are kept as direct_waiting_ rows: real Requests of queue_ only when the run is queued again.
  Request* serving = nullptr;
  /// The device's solo session the loop runs under (its completion: `completion`).
  Device::SoloSession* session = nullptr;
  /// The session is in its holder mode (run_holder: submissions through the device's submit()).
  bool holder = false;

  /// The earliest pending event in queue order (time, then class): its time in `t` (kNever
  /// when nothing is pending) and which: 0 the completion, 1 the launch end, 2 the arrival,
  /// 3 the iteration due.
  int earliest(Nanos& t) const {
    t = completion;
    int which = 0;
    if (ready < t) {
      t = ready;
      which = 1;
    }
    if (arrival < t) {
      t = arrival;
      which = 2;
    }
    if (iteration < t) {
      t = iteration;
      which = 3;
    }
    return which;
  }
};

// arrive()'s first half: the request arriving now (id, measured, tokens), recorded; false after
// the end of arrivals.
// (Nothing written to `a` when false.) Inline here: both loops call it once per arrival.
inline bool Tenant::direct_arrival(Nanos now, DirectArrival& a) {
  if (now >= arrivals_end_) return false;
  a.id = next_id_++;
  a.arrival = now;
  a.measured = now >= run_.scenario.warmup;
  draw_tokens(a.input_tokens, a.output_tokens);
  run_.record_arrival(index_, a.arrival, a.measured);
  return true;
}

}  // namespace gpumux::run
