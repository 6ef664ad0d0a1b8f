#pragma once
// A one-line progress bar on stderr: simulated time / horizon and events per second. Shown only
// when stderr is a terminal and the run has lasted longer than a second; redrawn at most 5 times
// a second. Cost: one clock read per call (the simulator calls it every few thousand events).
#include <chrono>
#include <cstdint>

#include "sim/core/time.hpp"

namespace gpumux {

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
