// Output layer (docs/metrics.md), the HDF5 file: layout, round trip, atomic write, errors on
// files that are not results. The summary JSON and text tables: test_summary_text.cpp.
#include <unistd.h>

// gpumux_sim_io may keep HDF5's include directory to itself; Debian puts the serial headers here.
#if __has_include(<hdf5.h>)
#include <hdf5.h>
#else
#include <hdf5/serial/hdf5.h>
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/output/result_io.hpp"
#include "models/output/metric_table.hpp"
#include "models/output/text_format.hpp"
#include "tests/support/sample_result.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;
using testing::sample_result;

class ResultIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gpumux_test_result_io_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

// Small HDF5 C API helpers for checking the layout independently of the writer's wrapper.
hsize_t row_count(hid_t file, const char* dataset_path) {
  const hid_t dataset = H5Dopen2(file, dataset_path, H5P_DEFAULT);
  EXPECT_GE(dataset, 0) << dataset_path;
  const hid_t space = H5Dget_space(dataset);
  hsize_t dims[1] = {0};
  hsize_t max_dims[1] = {0};
  EXPECT_EQ(H5Sget_simple_extent_ndims(space), 1);
  H5Sget_simple_extent_dims(space, dims, max_dims);
  EXPECT_EQ(max_dims[0], H5S_UNLIMITED) << dataset_path;
  H5Sclose(space);
  H5Dclose(dataset);
  return dims[0];
}

// Reads one int64 column (by name) of a compound table.
std::vector<std::int64_t> int64_column(hid_t file, const char* dataset_path, const char* column) {
  const hsize_t rows = row_count(file, dataset_path);
  const hid_t dataset = H5Dopen2(file, dataset_path, H5P_DEFAULT);
  const hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(std::int64_t));
  H5Tinsert(type, column, 0, H5T_NATIVE_INT64);
  std::vector<std::int64_t> values(rows);
  EXPECT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Tclose(type);
  H5Dclose(dataset);
  return values;
}

// Reads a 1-D variable-length string dataset as strings.
std::vector<std::string> string_dataset(hid_t file, const char* dataset_path) {
  const hsize_t rows = row_count(file, dataset_path);
  const hid_t dataset = H5Dopen2(file, dataset_path, H5P_DEFAULT);
  const hid_t file_type = H5Dget_type(dataset);
  EXPECT_EQ(H5Tget_class(file_type), H5T_STRING);
  EXPECT_GT(H5Tis_variable_str(file_type), 0);
  EXPECT_EQ(H5Tget_cset(file_type), H5T_CSET_UTF8);
  H5Tclose(file_type);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  std::vector<char*> raw(rows, nullptr);
  std::vector<std::string> values;
  if (rows > 0) {
    EXPECT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  }
  for (char* value : raw) {
    values.emplace_back(value != nullptr ? value : "");
    H5free_memory(value);
  }
  H5Tclose(type);
  H5Dclose(dataset);
  return values;
}

std::string string_attribute(hid_t object, const char* name) {
  const hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  EXPECT_GE(attribute, 0) << name;
  // Read with the stored type (a variable-length UTF-8 string): HDF5 has no UTF-8 -> ASCII
  // conversion path, so a plain H5T_C_S1 memory type only works once one has been registered.
  const hid_t type = H5Aget_type(attribute);
  EXPECT_TRUE(H5Tis_variable_str(type) > 0) << name;
  char* value = nullptr;
  EXPECT_GE(H5Aread(attribute, type, &value), 0);
  std::string text = value != nullptr ? value : "";
  H5free_memory(value);
  H5Tclose(type);
  H5Aclose(attribute);
  return text;
}

std::int64_t int_attribute(hid_t object, const char* name) {
  const hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  std::int64_t value = -1;
  EXPECT_GE(H5Aread(attribute, H5T_NATIVE_INT64, &value), 0);
  H5Aclose(attribute);
  return value;
}

bool link_exists(hid_t file, const char* path) { return H5Lexists(file, path, H5P_DEFAULT) > 0; }

TEST_F(ResultIoTest, WriteThenReadBack) {
  RunResult r = sample_result();
  r.kernels = {{0, 1, 0, 0, 100, 200}, {0, 1, 1, 0, 200, 300}};
  const std::string file_path = path("out.h5");
  write_result_h5(file_path, r);
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});  // no temporary left behind

  const auto summaries = read_summaries_h5(file_path);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0], summary_json(r));  // ordered: also checks tenant order survives
  EXPECT_EQ(summary_table_from_json(summaries[0]), summary_table(r));

  const hid_t file = H5Fopen(file_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* name : {"gpumux_version", "schema_version", "scenario_yaml", "seed",
                           "calibration", "status", "sim_time_ns", "events", "wall_s"}) {
    EXPECT_GT(H5Aexists(file, name), 0) << name;
  }
  EXPECT_EQ(int_attribute(file, "schema_version"), 1);
  EXPECT_EQ(int_attribute(file, "seed"), 7);
  EXPECT_EQ(int_attribute(file, "sim_time_ns"), 120'000'000'000);
  EXPECT_EQ(string_attribute(file, "scenario_yaml"), r.scenario_yaml);
  EXPECT_EQ(string_attribute(file, "status"), "complete");
  EXPECT_EQ(nlohmann::json::parse(string_attribute(file, "calibration"))["h100-sxm-80gb"],
            "sha256:abc");

  EXPECT_EQ(row_count(file, "/requests"), 1000u);
  const auto finish = int64_column(file, "/requests", "finish_ns");
  EXPECT_EQ(finish[5], 5 * 1000 + 500 + 5);
  EXPECT_EQ(finish[99], -1);
  EXPECT_EQ(int64_column(file, "/requests", "arrival_ns")[999], 999'000);
  EXPECT_EQ(row_count(file, "/tenants"), 2u);
  EXPECT_EQ(int64_column(file, "/tenants", "latency_p99_ns")[0], 4'560'000);
  // The tenant-name table: element i names tenant index i (vector order, as /tenants).
  EXPECT_EQ(string_dataset(file, "/tenant_names"), (std::vector<std::string>{"zchat", "batch"}));
  {
    const hid_t names = H5Dopen2(file, "/tenant_names", H5P_DEFAULT);
    EXPECT_EQ(nlohmann::json::parse(string_attribute(names, "units")),
              (nlohmann::json{{"name", ""}}));
    EXPECT_NE(string_attribute(names, "description").find("tenant index"), std::string::npos);
    H5Dclose(names);
  }
  EXPECT_EQ(row_count(file, "/devices"), 2u);
  EXPECT_EQ(int64_column(file, "/devices", "context_switches")[1], 4000);
  EXPECT_EQ(row_count(file, "/events"), 2u);
  EXPECT_EQ(int64_column(file, "/events", "time_ns")[1], 9000);
  EXPECT_EQ(row_count(file, "/kernels"), 2u);

  // '/' in a device name cannot be in an HDF5 path: encoded, real name kept as an attribute.
  ASSERT_TRUE(link_exists(file, "/timeseries"));
  ASSERT_TRUE(link_exists(file, "/timeseries/gpu0_1"));
  EXPECT_EQ(row_count(file, "/timeseries/gpu0_1"), 2u);
  EXPECT_EQ(int64_column(file, "/timeseries/gpu0_1", "memory_used_bytes")[1], 2LL << 30);
  const hid_t series = H5Dopen2(file, "/timeseries/gpu0_1", H5P_DEFAULT);
  EXPECT_EQ(string_attribute(series, "device"), "gpu0/1");
  H5Dclose(series);
  EXPECT_EQ(row_count(file, "/timeseries/gpu1"), 1u);

  // The big tables are chunked and deflate-compressed.
  const hid_t requests = H5Dopen2(file, "/requests", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(requests);
  EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);
  EXPECT_GE(H5Pget_nfilters(dcpl), 2);
  H5Pclose(dcpl);
  H5Dclose(requests);
  H5Fclose(file);
}

TEST_F(ResultIoTest, EmptyResultGivesValidEmptyTablesAndNoKernels) {
  RunResult r;
  r.scenario_name = "empty";
  const std::string file_path = path("empty.h5");
  write_result_h5(file_path, r);
  const hid_t file = H5Fopen(file_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* table : {"/requests", "/tenants", "/tenant_names", "/devices", "/events"}) {
    EXPECT_EQ(row_count(file, table), 0u) << table;
  }
  EXPECT_TRUE(link_exists(file, "/timeseries"));
  EXPECT_FALSE(link_exists(file, "/kernels"));
  H5Fclose(file);
  EXPECT_EQ(read_summaries_h5(file_path).at(0), summary_json(r));
}

TEST_F(ResultIoTest, OverwritesAnExistingFile) {
  RunResult r = sample_result();
  const std::string file_path = path("out.h5");
  write_result_h5(file_path, r);
  r.seed = 9;
  write_result_h5(file_path, r);
  EXPECT_EQ(read_summaries_h5(file_path).at(0)["seed"], 9);
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});
}

TEST_F(ResultIoTest, MissingDirectoryThrowsAndLeavesNoFile) {
  const std::string file_path = path("no/such/dir/out.h5");
  try {
    write_result_h5(file_path, sample_result());
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file_path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(file_path));
  EXPECT_TRUE(listing().empty());
}

TEST_F(ResultIoTest, FailedRenameRemovesTheTemporaryFile) {
  // The target is a non-empty directory: the HDF5 file is written, the rename fails.
  const std::string target = path("out.h5");
  fs::create_directories(fs::path(target) / "keep");
  EXPECT_THROW(write_result_h5(target, sample_result()), std::runtime_error);
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});
  EXPECT_TRUE(fs::is_directory(target));
}

TEST_F(ResultIoTest, NonResultFilesGiveInputError) {
  const std::string text_file = path("notes.txt");
  std::ofstream(text_file) << "hello\n";
  const std::string bare_h5 = path("bare.h5");
  const hid_t file = H5Fcreate(bare_h5.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  for (const std::string& p : {text_file, bare_h5, path("missing.h5"), dir_.string()}) {
    try {
      read_summaries_h5(p);
      ADD_FAILURE() << "expected InputError for " << p;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(p + ": not a gpumux result file (", 0), 0u) << message;
    }
  }
}

TEST_F(ResultIoTest, CompareFileRoundTrip) {
  RunResult mig = sample_result();
  mig.strategy = "mig";
  RunResult slicing = sample_result();
  slicing.strategy = "mps/50";  // '/' must be encoded in the group name
  slicing.requests.resize(10);
  const std::string file_path = path("compare.h5");
  write_results_h5(file_path, {mig, slicing});
  EXPECT_EQ(listing(), std::vector<std::string>{"compare.h5"});

  const auto summaries = read_summaries_h5(file_path);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0], summary_json(mig));
  EXPECT_EQ(summaries[1], summary_json(slicing));
  EXPECT_EQ(compare_table_from_json(summaries), compare_table({mig, slicing}));

  const hid_t file = H5Fopen(file_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(int_attribute(file, "schema_version"), 1);
  EXPECT_EQ(string_attribute(file, "strategy"), "mig");  // root attributes from the first
  EXPECT_EQ(row_count(file, "/strategies/mig/requests"), 1000u);
  EXPECT_EQ(row_count(file, "/strategies/mps_50/requests"), 10u);
  EXPECT_EQ(string_dataset(file, "/strategies/mps_50/tenant_names"),
            (std::vector<std::string>{"zchat", "batch"}));
  EXPECT_TRUE(link_exists(file, "/strategies/mps_50/timeseries/gpu0_1"));
  const hid_t group = H5Gopen2(file, "/strategies/mps_50", H5P_DEFAULT);
  EXPECT_EQ(string_attribute(group, "strategy"), "mps/50");
  H5Gclose(group);
  H5Fclose(file);
}

// The metric table drives every output: the HDF5 /tenants and /devices columns are its h5
// entries in order, every entry's JSON key is in the summary (when it applies), each column has
// the entry's unit, and SLO verdicts land in /slos.
std::vector<std::string> column_names(hid_t file, const char* dataset_path) {
  const hid_t dataset = H5Dopen2(file, dataset_path, H5P_DEFAULT);
  const hid_t type = H5Dget_type(dataset);
  std::vector<std::string> names;
  for (int i = 0; i < H5Tget_nmembers(type); ++i) {
    char* raw = H5Tget_member_name(type, static_cast<unsigned>(i));
    names.emplace_back(raw);
    H5free_memory(raw);
  }
  H5Tclose(type);
  H5Dclose(dataset);
  return names;
}

TEST_F(ResultIoTest, MetricTableDrivesJsonAndHdf5Columns) {
  RunResult r = sample_result();
  r.tenants[0].slo_ns = {{"p99", 5'000'000}, {"p50", 1'000'000}};  // p99 4.56 ms met, p50 missed
  write_result_h5(path("m.h5"), r);
  const hid_t file = H5Fopen(path("m.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  std::vector<std::string> expected;
  for (const TenantMetric& m : tenant_metrics()) {
    if (m.h5) expected.push_back(m.column);
  }
  EXPECT_EQ(column_names(file, "/tenants"), expected);
  expected.clear();
  for (const DeviceMetric& m : device_metrics()) {
    if (m.h5) expected.push_back(m.column);
  }
  EXPECT_EQ(column_names(file, "/devices"), expected);
  const hid_t tenants = H5Dopen2(file, "/tenants", H5P_DEFAULT);
  const auto units = nlohmann::json::parse(string_attribute(tenants, "units"));
  H5Dclose(tenants);
  for (const TenantMetric& m : tenant_metrics()) {
    if (m.h5) {
      EXPECT_EQ(units.at(m.column), m.unit) << m.column;
    }
  }
  // /slos: one row per target in key order (p50 then p99), with the verdicts.
  EXPECT_EQ(row_count(file, "/slos"), 2u);
  EXPECT_EQ(int64_column(file, "/slos", "value_ns"),
            (std::vector<std::int64_t>{1'230'000, 4'560'000}));
  EXPECT_EQ(int64_column(file, "/slos", "met"), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(int64_column(file, "/slos", "samples"), (std::vector<std::int64_t>{5898, 5898}));
  EXPECT_EQ(int64_column(file, "/slos", "low_ns"),
            (std::vector<std::int64_t>{1'200'000, 4'400'000}));
  EXPECT_EQ(int64_column(file, "/slos", "high_ns"),
            (std::vector<std::int64_t>{1'260'000, 4'700'000}));
  // verdict: p50 missed (its interval is above 1 ms), p99 met (below 5 ms).
  EXPECT_EQ(int64_column(file, "/slos", "verdict"), (std::vector<std::int64_t>{1, 0}));
  // A bound the samples do not give is -1 in /tenants.
  EXPECT_EQ(int64_column(file, "/tenants", "latency_p999_high_ns"),
            (std::vector<std::int64_t>{-1, -1}));
  H5Fclose(file);

  const auto summary = summary_json(r);
  for (const TenantResult& t : r.tenants) {
    for (const TenantMetric& m : tenant_metrics()) {
      if (m.json.empty()) continue;
      const bool applies = !m.in_summary || m.in_summary(t);
      EXPECT_EQ(json_at(summary["tenants"][t.name], m.json) != nullptr, applies)
          << t.name << " " << m.json;
    }
  }
  EXPECT_EQ(summary["tenants"]["zchat"]["slo_met"], false);
  EXPECT_EQ(summary["tenants"]["zchat"]["slo_verdict"], "missed");
  EXPECT_EQ(summary["tenants"]["zchat"]["slo"]["p99"]["met"], true);
  EXPECT_EQ(summary["tenants"]["zchat"]["slo"]["p99"]["verdict"], "met");
  EXPECT_EQ(summary["tenants"]["zchat"]["slo"]["p99"]["samples"], 5898);
  EXPECT_FALSE(summary["tenants"]["batch"].contains("slo_met"));
}

// 10^6 request records written in chunk-sized batches and read back unchanged: every row, in
// order, with its status. (How fast: bench/bench_result_io.cpp, BM_WriteRequests, which also
// covers 10^7 rows; a wall-clock bound does not belong in a unit test.)
RunResult many_requests(std::size_t n) {
  RunResult r = sample_result();
  r.requests.resize(n);
  std::uint64_t state = 42;  // an LCG: realistic entropy in arrivals and latencies
  std::int64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    t += static_cast<std::int64_t>((state >> 33) % 20'000);
    const auto queueing = static_cast<std::int64_t>((state >> 13) % 100'000);
    const auto service = 1'000'000 + static_cast<std::int64_t>((state >> 40) % 5'000'000);
    r.requests[i] = {static_cast<std::uint32_t>(state % 8),
                     i,
                     t,
                     t + queueing,
                     t + queueing + service,
                     i % 97 == 0 ? RequestStatus::failed : RequestStatus::completed};
  }
  return r;
}

TEST_F(ResultIoTest, MillionRequestsRoundTrip) {
  constexpr std::size_t n = 1'000'000;
  const RunResult r = many_requests(n);
  write_result_h5(path("big.h5"), r);
  const hid_t file = H5Fopen(path("big.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(row_count(file, "/requests"), n);
  const std::vector<std::int64_t> arrival = int64_column(file, "/requests", "arrival_ns");
  const std::vector<std::int64_t> finish = int64_column(file, "/requests", "finish_ns");
  ASSERT_EQ(arrival.size(), n);
  ASSERT_EQ(finish.size(), n);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mismatches += arrival[i] != r.requests[i].arrival_ns || finish[i] != r.requests[i].finish_ns;
  }
  EXPECT_EQ(mismatches, 0u);
  H5Fclose(file);
}

}  // namespace
}  // namespace gpumux
