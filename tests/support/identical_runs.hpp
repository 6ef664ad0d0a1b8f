#pragma once
// Test helper: two runs that must be the same run (an optimisation on and off, a trace streamed
// and held in memory) compared exactly: status, summary (less wall_s), every request, kernel and
// event record and every timeseries sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "models/output/result_io.hpp"
#include "models/run/result.hpp"

namespace gpumux::testing {

inline std::string summary_without_wall_time(const RunResult& r) {
  nlohmann::ordered_json j = summary_json(r);
  j.erase("wall_s");
  return j.dump();
}

inline bool same_record(const RequestRecord& x, const RequestRecord& y) {
  return x.tenant == y.tenant && x.request_id == y.request_id && x.arrival_ns == y.arrival_ns &&
         x.start_ns == y.start_ns && x.finish_ns == y.finish_ns && x.status == y.status;
}
inline bool same_record(const KernelRecord& x, const KernelRecord& y) {
  return x.tenant == y.tenant && x.request_id == y.request_id && x.kernel_index == y.kernel_index &&
         x.device == y.device && x.start_ns == y.start_ns && x.finish_ns == y.finish_ns;
}
// Two runs' request (or kernel) records, field by field; the first difference names its index.
template <class Record>
void expect_same_records(const std::vector<Record>& a, const std::vector<Record>& b,
                         const char* kind, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what << ": " << kind << " records";
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(same_record(a[i], b[i]))
        << what << ": " << kind << " record " << i << " differs (tenant " << a[i].tenant << "/"
        << b[i].tenant << ", id " << a[i].request_id << "/" << b[i].request_id << ", finish "
        << a[i].finish_ns << "/" << b[i].finish_ns << ")";
  }
}

// Everything a run reports, compared exactly; WHAT names the case in failures.
inline void expect_identical_runs(const RunResult& a, const RunResult& b, const std::string& what) {
  EXPECT_EQ(a.status, b.status) << what;
  EXPECT_EQ(summary_without_wall_time(a), summary_without_wall_time(b)) << what;
  expect_same_records(a.requests, b.requests, "request", what);
  expect_same_records(a.kernels, b.kernels, "kernel", what);
  ASSERT_EQ(a.events_log.size(), b.events_log.size()) << what;
  for (std::size_t i = 0; i < a.events_log.size(); ++i) {
    EXPECT_EQ(a.events_log[i].time_ns, b.events_log[i].time_ns) << what;
    EXPECT_EQ(a.events_log[i].detail, b.events_log[i].detail) << what;
  }
  ASSERT_EQ(a.timeseries.size(), b.timeseries.size()) << what;
  for (const auto& [device, series] : a.timeseries) {
    const auto& other = b.timeseries.at(device);
    ASSERT_EQ(series.size(), other.size()) << what << " " << device;
    for (std::size_t i = 0; i < series.size(); ++i) {
      ASSERT_TRUE(series[i].time_ns == other[i].time_ns && series[i].sm_busy == other[i].sm_busy &&
                  series[i].dram_busy == other[i].dram_busy &&
                  series[i].memory_used_bytes == other[i].memory_used_bytes)
          << what << ": sample " << i << " of " << device << " differs";
    }
  }
}

// The same run but for the order of records that happen at the same nanosecond in independent
// parts of the run (RunOptions::partition: one event queue, or one per component): everything
// as expect_identical_runs, the records compared after sorting them by (time, tenant, request,
// kernel / detail). Each tenant's own records keep their order (checked: the sort is stable and
// a tenant's records at one time keep the order of their ids and kernel indices).
inline void expect_same_run_in_time_order(RunResult a, RunResult b, const std::string& what) {
  const auto by_finish = [](const RequestRecord& x, const RequestRecord& y) {
    return std::tie(x.finish_ns, x.tenant, x.request_id) <
           std::tie(y.finish_ns, y.tenant, y.request_id);
  };
  const auto kernel_order = [](const KernelRecord& x, const KernelRecord& y) {
    return std::tie(x.finish_ns, x.tenant, x.request_id, x.kernel_index, x.device) <
           std::tie(y.finish_ns, y.tenant, y.request_id, y.kernel_index, y.device);
  };
  const auto event_order = [](const EventRecord& x, const EventRecord& y) {
    return std::tie(x.time_ns, x.tenant, x.device, x.detail) <
           std::tie(y.time_ns, y.tenant, y.device, y.detail);
  };
  // Both are in time order already (the contract of the records).
  for (const RunResult* r : {&a, &b}) {
    EXPECT_TRUE(std::is_sorted(r->requests.begin(), r->requests.end(),
                               [](const RequestRecord& x, const RequestRecord& y) {
                                 return x.status != RequestStatus::unfinished &&
                                        y.status != RequestStatus::unfinished &&
                                        x.finish_ns < y.finish_ns;
                               }))
        << what << ": request records out of time order";
    EXPECT_TRUE(std::is_sorted(
        r->kernels.begin(), r->kernels.end(),
        [](const KernelRecord& x, const KernelRecord& y) { return x.finish_ns < y.finish_ns; }))
        << what << ": kernel records out of time order";
  }
  std::stable_sort(a.requests.begin(), a.requests.end(), by_finish);
  std::stable_sort(b.requests.begin(), b.requests.end(), by_finish);
  std::stable_sort(a.kernels.begin(), a.kernels.end(), kernel_order);
  std::stable_sort(b.kernels.begin(), b.kernels.end(), kernel_order);
  std::stable_sort(a.events_log.begin(), a.events_log.end(), event_order);
  std::stable_sort(b.events_log.begin(), b.events_log.end(), event_order);
  expect_identical_runs(a, b, what);
}

}  // namespace gpumux::testing
