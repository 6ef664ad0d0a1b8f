#pragma once
// A one-line progress bar on stderr: simulated time / horizon, events per second and the time
// left (ETA: the wall time so far times the simulated time still to go over the simulated time
// done, i.e. assuming the rest runs at the average speed so far). Shown only
// when stderr is a terminal and the run has lasted longer than a second; redrawn at most 5 times
// a second. Cost: one clock read per call (the simulator calls it every few thousand events).
#include <chrono>
#include <cstdint>
#include <string>

#include "sim/core/time.hpp"

namespace gpumux {

/// The wall time left, as "eta 45s", "eta 3m05s" or "eta 2h10m", when ELAPSED_S wall seconds
/// simulated FRACTION (0..1] of the horizon at the same speed; "eta --" when FRACTION is 0.
std::string progress_eta(double elapsed_s, double fraction);

class ProgressBar {
 public:
  ProgressBar();
  void update(Nanos now, Nanos horizon, std::uint64_t events);
  /// Erases the bar if it was drawn.
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace gpumux
