#include "models/app/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gpumux {

ProgressBar::ProgressBar()
    : enabled_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void ProgressBar::update(Nanos now, Nanos horizon, std::uint64_t events) {
  if (!enabled_) return;
  const auto t = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(t - start_).count();
  if (elapsed < 1.0 || std::chrono::duration<double>(t - last_draw_).count() < 0.2) return;
  last_draw_ = t;
  const double fraction = horizon > 0 ? std::min(1.0, static_cast<double>(now) / horizon) : 1.0;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = '\0';
  std::fprintf(stderr, "\r[%s] %5.1f%%  sim %.3fs / %.3fs  %.2fM events/s ", bar, 100 * fraction,
               to_seconds(now), to_seconds(horizon), static_cast<double>(events) / elapsed / 1e6);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%80s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gpumux
