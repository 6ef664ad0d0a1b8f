// gpumux calibrate on calibration/microbench output (models/app/microbench_fit.hpp): the
// percentile, the time-slice and short-kernel laws on schedules built with known T, S and C_out
// (exact, random instances), leave one run out, the profile entries the loader reads back, and
// the refusals of bad files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "models/app/microbench_fit.hpp"
#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"

namespace gpumux {
namespace {

TEST(PercentileLinear, IsNumpysLinearInterpolation) {
  EXPECT_DOUBLE_EQ(percentile_linear({3, 1, 2}, 50), 2);
  EXPECT_DOUBLE_EQ(percentile_linear({4, 1, 3, 2}, 50), 2.5);
  // index 0.9 * 4 = 3.6 between 40 and 50: 40 + 0.6 * 10
  EXPECT_DOUBLE_EQ(percentile_linear({50, 10, 30, 20, 40}, 90), 46);
  EXPECT_DOUBLE_EQ(percentile_linear({50, 10, 30, 20, 40}, 10), 14);
  EXPECT_DOUBLE_EQ(percentile_linear({7}, 50), 7);
  EXPECT_TRUE(std::isnan(percentile_linear({}, 50)));
}

// N spinners in round robin from t0: each runs T, then S of idle before the next one runs;
// `cycles` turns each. A stall of `stall` ns is cut into the middle of process 0's runs.
struct Schedule {
  std::vector<SpinnerBlock> meta;
  std::vector<SpinnerGap> gaps;
};
Schedule round_robin(int n, std::int64_t T, std::int64_t S, int cycles, std::int64_t stall = 0) {
  const std::int64_t t0 = 1'763'000'000'000'000'000;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> runs(n);
  std::int64_t t = t0;
  for (int c = 0; c < cycles; ++c) {
    for (int p = 0; p < n; ++p) {
      if (p == 0 && stall > 0) {
        runs[0].push_back({t, t + T / 2});
        runs[0].push_back({t + T / 2 + stall, t + T});
      } else {
        runs[p].push_back({t, t + T});
      }
      t += T + S;
    }
  }
  Schedule s;
  for (int p = 0; p < n; ++p) {
    s.meta.push_back({p, 0, "spin", runs[p].front().first, runs[p].back().second});
    s.meta.push_back({p, 1, "spin", runs[p].front().first + 7, runs[p].back().second + 7});
    for (std::size_t i = 0; i + 1 < runs[p].size(); ++i) {
      s.gaps.push_back({p, 0, runs[p][i].second, runs[p][i + 1].first});
      s.gaps.push_back({p, 1, runs[p][i].second + 7, runs[p][i + 1].first + 7});  // ignored
    }
  }
  return s;
}

TEST(TimesliceRun, ExactRoundRobinGivesTAndSAndTheWaitLaw) {
  for (const std::int64_t stall : {0, 3000}) {
    const Schedule s = round_robin(3, 1'024'000, 25'000, 40, stall);
    const TimesliceSamples r = analyze_timeslice_run(s.meta, s.gaps);
    EXPECT_EQ(r.spinners, 3);
    ASSERT_FALSE(r.slices.empty());
    for (const auto v : r.slices) EXPECT_EQ(v, 1'024'000);  // the stall is inside a slice
    for (const auto v : r.switches) EXPECT_EQ(v, 25'000);
    for (const auto v : r.waits) EXPECT_EQ(v, 2 * (1'024'000 + 25'000) + 25'000);  // (N-1)(T+S)+S
    // the window: all 3 alive; every switch inside it is counted
    EXPECT_GE(r.switches.size(), static_cast<std::size_t>(3 * 38));
  }
}

TEST(TimesliceRun, RandomInstancesRecoverTAndSExactly) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 3);
    const std::int64_t T = 100'000 + static_cast<std::int64_t>(rng() % 4'000'000);
    const std::int64_t S = 1'000 + static_cast<std::int64_t>(rng() % 100'000);
    const Schedule s = round_robin(n, T, S, 10 + static_cast<int>(rng() % 10));
    const TimesliceSamples r = analyze_timeslice_run(s.meta, s.gaps);
    ASSERT_EQ(r.spinners, n);
    std::vector<double> slices(r.slices.begin(), r.slices.end());
    std::vector<double> switches(r.switches.begin(), r.switches.end());
    EXPECT_EQ(percentile_linear(slices, 50), static_cast<double>(T));
    EXPECT_EQ(percentile_linear(switches, 50), static_cast<double>(S));
  }
}

TEST(TimesliceRun, ALoneSpinnerHasNoSliceAndStallsAreNotSwitches) {
  const Schedule s = round_robin(1, 1'000'000, 25'000, 20, 3000);
  const TimesliceSamples r = analyze_timeslice_run(s.meta, s.gaps);
  EXPECT_EQ(r.spinners, 1);
  EXPECT_TRUE(r.slices.empty());
  EXPECT_TRUE(r.switches.empty());
  EXPECT_TRUE(r.waits.empty());
}

TEST(ShortKernelRun, SwitchOutIsGapEndLessTheLastKernelEnd) {
  // A spinner's gaps every 2 ms; in each, kernels from gap start + 20 us, 5 us long; the gap
  // ends C_out = 9 us after the last one. One kernel lies outside every gap: not counted.
  std::vector<SpinnerBlock> meta{{0, 0, "spin", 0, 100'000'000}, {1, 0, "short", 0, 1}};
  std::vector<SpinnerGap> gaps;
  std::vector<ShortKernel> kernels;
  for (int i = 0; i < 20; ++i) {
    const std::int64_t gs = 1'000'000 + i * 2'000'000;
    const std::int64_t k0 = gs + 20'000;
    const int count = 1 + i % 2;  // one or two kernels in a gap
    std::int64_t end = k0;
    for (int k = 0; k < count; ++k) {
      kernels.push_back({static_cast<std::int64_t>(kernels.size()), end, end + 5'000});
      end += 5'000;
    }
    gaps.push_back({0, 0, gs, end + 9'000});
  }
  kernels.push_back({999, 500, 900});  // before the first gap
  const ShortKernelSamples r = analyze_short_kernel_run(meta, gaps, kernels);
  EXPECT_TRUE(r.synchronous);
  EXPECT_EQ(r.spinners, 1);
  ASSERT_EQ(r.switch_out.size(), 20u);
  for (const auto v : r.switch_out) EXPECT_EQ(v, 9'000);
  for (const auto v : r.switch_in) EXPECT_EQ(v, 20'000);
  kernels.push_back({0, 1, 2});  // a batch of two: queued, not synchronous
  EXPECT_FALSE(analyze_short_kernel_run(meta, gaps, kernels).synchronous);
}

std::string temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gpumux-test-microbench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A schedule as the probe's CSVs.
std::vector<std::string> write_run(const std::string& stem, const Schedule& s) {
  std::string meta = "process_id,role,pid,block,kernel_start_ns,kernel_end_ns\n";
  for (const auto& b : s.meta) {
    meta += std::to_string(b.process_id) + ",spin,1," + std::to_string(b.block) + "," +
            std::to_string(b.kernel_start_ns) + "," + std::to_string(b.kernel_end_ns) + "\n";
  }
  std::string gaps = "process_id,block,gap_start_ns,gap_end_ns\n";
  for (const auto& g : s.gaps) {
    gaps += std::to_string(g.process_id) + "," + std::to_string(g.block) + "," +
            std::to_string(g.start_ns) + "," + std::to_string(g.end_ns) + "\n";
  }
  return {write(stem + "_meta.csv", meta), write(stem + "_gaps.csv", gaps)};
}

TEST(FitMicrobench, PoolsRunsLeavesEachOutAndWritesAProfileTheLoaderReads) {
  // Two runs with different slices: pooled median between them; each fold is the other run.
  auto files = write_run("ts_n2", round_robin(2, 1'000'000, 20'000, 31));
  const auto more = write_run("ts_n3", round_robin(3, 1'200'000, 30'000, 20));
  files.insert(files.end(), more.begin(), more.end());
  files.push_back(write("launch.csv",
                        "metric,param,value,unit\nlaunch_stream_us,n=1,3.25,us\n"
                        "bw_read_GBps,bytes=1,2000.5,GB/s\n"));
  files.push_back(write("run-info.csv", "key,value\ndate_utc,2026-03-04T05:06:07Z\n"));
  files.push_back(write("device.csv", "key,value\nname,Test GPU\n"));
  const MicrobenchFit fit = fit_microbench(files);
  EXPECT_EQ(fit.date, "2026-03-04");
  EXPECT_EQ(fit.gpu, "Test GPU");
  const MicrobenchValue* t = fit.find("timeslice");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->folds, 2);
  EXPECT_DOUBLE_EQ(t->fold_min, 1000);  // leaving the N = 3 run out
  EXPECT_DOUBLE_EQ(t->fold_max, 1200);
  EXPECT_GE(t->value, 1000);
  EXPECT_LE(t->value, 1200);
  // No short-kernel run: context_switch is all of S, no preemption_latency.
  ASSERT_NE(fit.find("context_switch"), nullptr);
  EXPECT_EQ(fit.find("preemption_latency"), nullptr);
  // Out of sample, each run's wait is predicted from the other's T and S.
  ASSERT_EQ(fit.waits.size(), 2u);
  EXPECT_DOUBLE_EQ(fit.waits[0].out_of_sample_us, 1 * (1200 + 30) + 30.0);
  EXPECT_DOUBLE_EQ(fit.waits[1].out_of_sample_us, 2 * (1000 + 20) + 20.0);
  EXPECT_DOUBLE_EQ(fit.find("launch_overhead")->value, 3.25);
  EXPECT_EQ(fit.find("graph_launch_overhead"), nullptr);  // not in the file

  const std::string text = with_microbench_values(device_profile_text("h200-141gb"), fit, {}, "d");
  const std::string path = write("fitted-h200.yaml", text);
  const DeviceProfile& gpu = load_device_profile(path);
  EXPECT_EQ(gpu.timeslice, std::llround(t->value * 1000));
  EXPECT_EQ(gpu.context_switch, std::llround(fit.find("context_switch")->value * 1000));
  EXPECT_EQ(gpu.launch_overhead, 3250);
  EXPECT_DOUBLE_EQ(gpu.hbm_bandwidth_measured, 2000.5e9);
  // only the keys asked for
  const std::string some =
      with_microbench_values(device_profile_text("h200-141gb"), fit, {"launch_overhead"}, "d");
  EXPECT_EQ(load_device_profile(write("some-h200.yaml", some)).timeslice,
            load_device_profile("h200-141gb").timeslice);
}

std::string error_of(const std::vector<std::string>& files) {
  try {
    (void)fit_microbench(files);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(FitMicrobench, BadFilesNameFileLineAndColumn) {
  const std::string meta =
      write("x_meta.csv", "process_id,role,block,kernel_start_ns,kernel_end_ns\n0,spin,0,10,99\n");
  const std::string neg =
      write("x_gaps.csv", "process_id,block,gap_start_ns,gap_end_ns\n0,0,-4,5\n");
  EXPECT_NE(error_of({meta, neg}).find(neg + ":2: gap_start_ns:"), std::string::npos);
  const std::string back =
      write("x_gaps.csv", "process_id,block,gap_start_ns,gap_end_ns\n0,0,9,5\n");
  EXPECT_NE(error_of({meta, back}).find(back + ":2: gap_end_ns:"), std::string::npos);
  const std::string text =
      write("x_gaps.csv", "process_id,block,gap_start_ns,gap_end_ns\n0,a,1,5\n");
  EXPECT_NE(error_of({meta, text}).find(text + ":2: block:"), std::string::npos);
  const std::string missing = write("x_gaps.csv", "process_id,block,gap_start_ns\n0,0,1\n");
  EXPECT_NE(error_of({meta, missing}).find(missing + ":1: gap_end_ns: missing column"),
            std::string::npos);
  EXPECT_NE(error_of({meta}).find("x_gaps.csv"), std::string::npos);  // its pair is missing
  const std::string empty = write("empty.csv", "\n# nothing\n");
  EXPECT_NE(error_of({empty}).find(empty + ":2: header: empty file"), std::string::npos);
  const std::string odd = write("odd.csv", "x,y\n1,2\n");
  EXPECT_NE(error_of({odd}).find(odd + ":1: header:"), std::string::npos);
}

}  // namespace
}  // namespace gpumux
