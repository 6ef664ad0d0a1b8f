// Output layer (docs/metrics.md), the summary: its JSON, the text tables and duration format,
// the compare table. The HDF5 file: test_result_io.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/output/result_io.hpp"
#include "models/output/metric_table.hpp"
#include "models/output/slo_tally.hpp"
#include "models/output/text_format.hpp"
#include "tests/support/sample_result.hpp"

namespace gpumux {
namespace {

using testing::sample_result;

TEST(SummaryJson, HasTheSpecShapeAndValues) {
  const RunResult r = sample_result();
  const auto j = summary_json(r);
  EXPECT_EQ(j["scenario"], "hybrid-h100");
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["status"], "complete");
  EXPECT_EQ(j["sim_time_ns"], 120'000'000'000);
  EXPECT_EQ(j["events"], 123'456'789);
  EXPECT_DOUBLE_EQ(j["wall_s"].get<double>(), 3.2);
  EXPECT_FALSE(j.contains("strategy"));

  ASSERT_EQ(j["tenants"].size(), 2u);
  EXPECT_EQ(j["tenants"].begin().key(), "zchat");  // vector order, not alphabetical
  const auto& chat = j["tenants"]["zchat"];
  EXPECT_EQ(chat["device"], "gpu0/1");
  EXPECT_EQ(chat["requests"], 5900);
  EXPECT_EQ(chat["completed"], 5898);
  EXPECT_EQ(chat["failed"], 2);
  EXPECT_DOUBLE_EQ(chat["latency_ns"]["mean"].get<double>(), 1.5e6);
  EXPECT_EQ(chat["latency_ns"]["p50"], 1'230'000);
  EXPECT_EQ(chat["latency_ns"]["p90"], 2'000'000);
  EXPECT_EQ(chat["latency_ns"]["p99"], 4'560'000);
  EXPECT_EQ(chat["latency_ns"]["p999"], 7'000'000);
  EXPECT_EQ(chat["latency_ns"]["max"], 12'000'000);
  EXPECT_DOUBLE_EQ(chat["queueing_ns"]["mean"].get<double>(), 2.5e5);
  EXPECT_EQ(chat["queueing_ns"]["p99"], 300'000);
  EXPECT_EQ(chat["queueing_ns"].size(), 4u);  // mean, p99 and its bounds (none given: null)
  EXPECT_TRUE(chat["queueing_ns"]["p99_low"].is_null());
  EXPECT_EQ(chat["latency_ns"]["p99_low"], 4'400'000);
  EXPECT_EQ(chat["latency_ns"]["p99_high"], 4'700'000);
  EXPECT_TRUE(chat["latency_ns"]["p999_high"].is_null());
  EXPECT_DOUBLE_EQ(chat["slowdown_mean"].get<double>(), 1.7);
  EXPECT_DOUBLE_EQ(chat["throughput_per_s"].get<double>(), 49.2);
  EXPECT_EQ(chat["slo_violations"], 3);
  EXPECT_EQ(chat["oom_events"], 1);
  EXPECT_DOUBLE_EQ(chat["gpu_seconds"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(chat["cost"].get<double>(), 0.25);

  ASSERT_EQ(j["devices"].size(), 2u);
  const auto& mig = j["devices"]["gpu0/1"];
  EXPECT_EQ(mig["profile"], "1g.10gb");
  EXPECT_EQ(mig["sharing"], "exclusive");
  EXPECT_EQ(mig["sms"], 16);
  EXPECT_EQ(mig["memory_bytes"], 10LL << 30);
  EXPECT_DOUBLE_EQ(mig["sm_busy"].get<double>(), 0.61);
  EXPECT_DOUBLE_EQ(mig["useful_fraction"].get<double>(), 0.58);
  EXPECT_EQ(mig["memory_peak_bytes"], 9LL << 30);
  EXPECT_EQ(j["devices"]["gpu1"]["context_switches"], 4000);
  EXPECT_EQ(j["devices"]["gpu1"]["switch_overhead_ns"], 100'000'000);

  RunResult labelled = r;
  labelled.strategy = "mig";
  EXPECT_EQ(summary_json(labelled)["strategy"], "mig");
}

TEST(SummaryTable, ShowsTenantsDevicesAndAdaptiveUnits) {
  const RunResult r = sample_result();
  const std::string table = summary_table(r);
  for (const char* expected :
       {"hybrid-h100", "seed: 7",  "complete", "2m",      "123456789", "3.20 s",
        "38.6M",  // header
        "zchat",       "batch",    "gpu0/1",   "1.23 ms", "4.56 ms",   "7.00 ms",
        "12.0 ms",     "1.50 s",   "49.2/s",   "1.70x",   "1g.10gb",   "time-slicing",
        "10.0 GiB",    "80.0 GiB", "61.0%",    "58.0%",   "4000",      "100 ms"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << "missing " << expected << "\n" << table;
  }
  EXPECT_LT(table.find("zchat"), table.find("batch"));
  EXPECT_EQ(table, summary_table_from_json(summary_json(r)));
}

// The tables' one duration format: three significant digits below a minute, then a clock
// reading rounded to its last unit; machine units stay in the JSON (checked above).
TEST(DurationFormat, SecondsBelowAMinuteThenAClockReading) {
  EXPECT_EQ(format_duration_ns(420), "420 ns");
  EXPECT_EQ(format_duration_ns(420e3), "420 us");
  EXPECT_EQ(format_duration_ns(1.5e6), "1.50 ms");
  EXPECT_EQ(format_duration_ns(1.5e9), "1.50 s");
  EXPECT_EQ(format_duration_ns(59.9e9), "59.9 s");
  EXPECT_EQ(format_duration_ns(59.96e9), "1m");  // 59.96 s rounds to a whole minute
  EXPECT_EQ(format_duration_ns(90e9), "1m30s");
  EXPECT_EQ(format_duration_ns(1800e9), "30m");
  EXPECT_EQ(format_duration_ns(3599e9), "59m59s");
  EXPECT_EQ(format_duration_ns(3600e9), "1h");
  EXPECT_EQ(format_duration_ns(7529e9), "2h05m");  // 125.48 minutes -> 125
  EXPECT_EQ(format_duration_ns(86399e9), "1d");    // 1,440 minutes: a day
  EXPECT_EQ(format_duration_ns(3 * 86400e9 + 4 * 3600e9), "3d4h");
  EXPECT_EQ(format_duration_ns(-120e9), "-2m");
  EXPECT_EQ(format_duration_ns(std::nan("")), "-");
}

TEST(SummaryTable, MissingAndNullFieldsPrintAsDash) {
  nlohmann::ordered_json summary = {{"scenario", "x"},
                                    {"tenants", {{"t", {{"slowdown_mean", nullptr}}}}}};
  const std::string table = summary_table_from_json(summary);
  EXPECT_NE(table.find("t "), std::string::npos);
  EXPECT_NE(table.find(" -"), std::string::npos);
}

// A damaged result file may hold any number where a time belongs (the results fuzzer found
// duration_ns 1e300 converted to nanoseconds out of range): the table clamps such times and
// still renders, its SLO line included.
TEST(SummaryTable, TimesOutOfRangeAreClampedNotConverted) {
  nlohmann::ordered_json summary = summary_json(sample_result());
  summary["duration_ns"] = 1e300;
  summary["warmup_ns"] = -1e300;
  const std::string tenant = summary["tenants"].begin().key();
  summary["tenants"][tenant]["slo"] = {{"p99",
                                        {{"target_ns", 1e300},
                                         {"value_ns", 2e300},
                                         {"samples", 1e300},
                                         {"low_ns", -1e308},
                                         {"high_ns", 1e308},
                                         {"verdict", "inconclusive"}}}};
  const std::string table = summary_table_from_json(summary);
  EXPECT_NE(table.find(tenant), std::string::npos) << table;
  EXPECT_NE(table.find("1 inconclusive (run longer: --set duration="), std::string::npos) << table;
  const std::vector<TenantSlo> slos = slos_of_summary(summary);
  ASSERT_FALSE(slos.empty());
  bool found = false;
  for (const TenantSlo& t : slos) {
    if (t.tenant != tenant) continue;
    ASSERT_EQ(t.checks.size(), 1U);
    EXPECT_EQ(t.checks[0].target_ns, std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(*t.checks[0].low_ns, 0);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(CompareTable, OneColumnPerStrategy) {
  RunResult mig = sample_result();
  mig.strategy = "mig";
  RunResult slicing = sample_result();
  slicing.strategy = "time-slicing";
  slicing.tenants[0].latency.p99 = 9'870'000;
  slicing.tenants[0].oom_events = 42;
  const std::string table = compare_table({mig, slicing});
  for (const char* expected :
       {"mig", "time-slicing", "tenant zchat", "tenant batch", "p50", "p99", "throughput",
        "slowdown", "failed", "OOMs", "4.56 ms", "9.87 ms", "42", "SM busy", "61.0%"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << "missing " << expected << "\n" << table;
  }
}

}  // namespace
}  // namespace gpumux
