#include "models/app/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpumux {

std::string progress_eta(double elapsed_s, double fraction) {
  if (!(fraction > 0) || !(elapsed_s >= 0)) return "eta --";
  const double left = elapsed_s * (1.0 - std::min(1.0, fraction)) / std::min(1.0, fraction);
  if (left >= 100.0 * 3600) return "eta >100h";
  const long seconds = std::lround(left);
  char text[64];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "eta %lds", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "eta %ldm%02lds", seconds / 60, seconds % 60);
  } else {
    std::snprintf(text, sizeof text, "eta %ldh%02ldm", seconds / 3600, seconds % 3600 / 60);
  }
  return text;
}

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
  std::fprintf(stderr, "\r[%s] %5.1f%%  sim %.3fs / %.3fs  %.2fM events/s  %s ", bar,
               100 * fraction, to_seconds(now), to_seconds(horizon),
               static_cast<double>(events) / elapsed / 1e6,
               progress_eta(elapsed, fraction).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%100s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gpumux
