// The progress bar's ETA (models/app/progress.hpp): the wall time so far scaled by the simulated
// time still to go over the simulated time done, printed in h/m/s.
#include <gtest/gtest.h>

#include "models/app/progress.hpp"

namespace gpumux {
namespace {

TEST(ProgressEta, ScalesTheElapsedTimeByWhatIsLeft) {
  EXPECT_EQ(progress_eta(10.0, 0.5), "eta 10s");   // half done in 10 s: 10 s to go
  EXPECT_EQ(progress_eta(10.0, 0.25), "eta 30s");  // a quarter in 10 s: three quarters left
  EXPECT_EQ(progress_eta(30.0, 0.25), "eta 1m30s");
  EXPECT_EQ(progress_eta(60.0, 0.01), "eta 1h39m");  // 5,940 s
  EXPECT_EQ(progress_eta(5.0, 1.0), "eta 0s");
}

TEST(ProgressEta, MinutesAndSecondsRoundToTheNearestSecond) {
  EXPECT_EQ(progress_eta(59.6, 0.5), "eta 1m00s");
  EXPECT_EQ(progress_eta(59.4, 0.5), "eta 59s");
  EXPECT_EQ(progress_eta(3599.6, 0.5), "eta 1h00m");
}

TEST(ProgressEta, NothingDoneYetOrTooFarToSay) {
  EXPECT_EQ(progress_eta(3.0, 0.0), "eta --");
  EXPECT_EQ(progress_eta(3.0, -0.1), "eta --");
  EXPECT_EQ(progress_eta(3600.0, 0.001), "eta >100h");
  EXPECT_EQ(progress_eta(1.0, 2.0), "eta 0s");  // a clock past the horizon counts as done
}

}  // namespace
}  // namespace gpumux
