// A result file streamed during the run (StreamedResultFile, `gpumux run -o`) holds exactly what
// write_result_h5 writes from the in-memory result: every table's rows, in order, byte for byte
// (requests across chunk boundaries, kernels, failed and unfinished requests, an interrupted
// run), while the streamed run keeps no records in memory; and a streamed file that is not
// finished leaves nothing behind. The same for a compare file (StreamedCompareFile, `gpumux
// compare -o`): each strategy's group holds the tables of its run written from memory.
#include <unistd.h>

// gpumux_sim_io may keep HDF5's include directory to itself; Debian puts the serial headers here.
#if __has_include(<hdf5.h>)
#include <hdf5.h>
#else
#include <hdf5/serial/hdf5.h>
#endif

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/app/application.hpp"
#include "models/output/result_io.hpp"
#include "sim/io/output_target.hpp"
#include "sim/io/table_stream.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

// Two MPS tenants with kernel records, a fault (failed requests) and enough requests for
// several chunks of /requests and /kernels.
const char* kScenario = R"(
name: streamed
seed: 5
duration: 6s
warmup: 1s
output: {kernels: true, sample: 50ms}
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    sharing: {mode: mps}
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 900/s}
      request:
        kernels:
          - {name: k1, duration: 150us, sm_fraction: 0.6, memory_bound: 0.3}
          - {name: k2, duration: {lognormal: {median: 80us, sigma: 0.4}}, sm_fraction: 0.5}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 500/s}
      request: {kernels: [{name: k, duration: 300us, sm_fraction: 0.7, memory_bound: 0.5}]}
faults:
  - {tenant: b, at: 3s, kind: fatal, recovery: 500ms}
)";

ResolvedScenario resolved_scenario(const std::vector<std::string>& overrides = {}) {
  ScenarioRequest request;
  request.scenario = kScenario;
  request.is_path = false;
  request.overrides = overrides;
  return resolve_request(request);
}

class StreamedResultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_output_test_faults("");
    dir_ = fs::temp_directory_path() /
           ("gpumux_streamed_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }
  fs::path dir_;
};

// The rows of a table as stored (the file's type converted to the native one): bytes.
std::vector<unsigned char> table_bytes(hid_t file, const std::string& name) {
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) throw std::runtime_error("no dataset " + name);
  const hid_t stored = H5Dget_type(dataset);
  const hid_t native = H5Tget_native_type(stored, H5T_DIR_ASCEND);
  const hid_t space = H5Dget_space(dataset);
  const auto rows = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  std::vector<unsigned char> bytes(rows * H5Tget_size(native));
  if (rows > 0) H5Dread(dataset, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
  H5Sclose(space);
  H5Tclose(native);
  H5Tclose(stored);
  H5Dclose(dataset);
  return bytes;
}

std::size_t rows_of(hid_t file, const std::string& name) {
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(dataset);
  const auto rows = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  H5Sclose(space);
  H5Dclose(dataset);
  return rows;
}

bool has(hid_t file, const std::string& name) {
  return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
}

// Every fixed-size table of A equals B's (the string-valued /tenant_names and /summary hold
// wall_s-independent text checked elsewhere); GROUP_A, GROUP_B: where the run's tables are
// ("" for the root, "strategies/mps/" in a compare file).
void expect_same_tables(const std::string& a, const std::string& b, const std::string& group_a = "",
                        const std::string& group_b = "") {
  const hid_t fa = H5Fopen(a.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t fb = H5Fopen(b.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(fa, 0);
  ASSERT_GE(fb, 0);
  for (const std::string table :
       {"requests", "kernels", "tenants", "devices", "slos", "events", "timeseries/gpu0"}) {
    const std::string name = group_a + table, other = group_b + table;
    ASSERT_EQ(has(fa, name), has(fb, other)) << name;
    if (!has(fa, name)) continue;
    EXPECT_EQ(rows_of(fa, name), rows_of(fb, other)) << name;
    EXPECT_TRUE(table_bytes(fa, name) == table_bytes(fb, other)) << name << " differs";
  }
  H5Fclose(fa);
  H5Fclose(fb);
}

// The run twice: records in memory then write_result_h5, and streamed (nothing kept).
struct Pair {
  RunResult in_memory, streamed;
};
Pair run_both(const ResolvedScenario& resolved, const std::string& memory_file,
              const std::string& streamed_file, std::uint64_t stop_after_events = 0) {
  std::atomic<bool> stop{false};
  RunControl control;
  control.interrupt = &stop;
  if (stop_after_events > 0) {
    control.progress = [&](Nanos, Nanos, std::uint64_t events) {
      if (events >= stop_after_events) stop = true;
    };
  }
  Pair pair;
  pair.in_memory = simulate_resolved(resolved, control);
  write_result_h5(memory_file, pair.in_memory);
  stop = false;
  StreamedResultFile file(streamed_file, resolved.scenario.output.kernels);
  control.record_requests = false;
  control.record_kernels = false;
  control.observers.push_back(&file);
  pair.streamed = simulate_resolved(resolved, control);
  EXPECT_EQ(file.requests_written(), pair.in_memory.requests.size());
  file.finish(pair.streamed);
  return pair;
}

TEST_F(StreamedResultTest, StreamedFileEqualsTheInMemoryOne) {
  const Pair pair = run_both(resolved_scenario(), path("memory.h5"), path("streamed.h5"));
  // The streamed run kept no record; the in-memory one spans several chunks of both tables.
  EXPECT_TRUE(pair.streamed.requests.empty());
  EXPECT_TRUE(pair.streamed.kernels.empty());
  EXPECT_GT(pair.in_memory.requests.size(), 2 * h5::kStreamChunkRows);
  EXPECT_GT(pair.in_memory.kernels.size(), 2 * h5::kStreamChunkRows);
  std::size_t failed = 0;
  for (const RequestRecord& r : pair.in_memory.requests)
    failed += r.status == RequestStatus::failed;
  EXPECT_GT(failed, 0u) << "the fault should fail requests";
  // Observers change no number: the summaries agree but for the host's wall time.
  auto streamed = read_summaries_h5(path("streamed.h5")).at(0);
  auto memory = read_summaries_h5(path("memory.h5")).at(0);
  streamed.erase("wall_s");
  memory.erase("wall_s");
  EXPECT_EQ(streamed, memory);
  expect_same_tables(path("memory.h5"), path("streamed.h5"));
  EXPECT_EQ(listing().size(), 2u);  // no temporary file left
}

TEST_F(StreamedResultTest, InterruptedRunStreamsItsUnfinishedRequestsToo) {
  // b overloaded (1.5x its device time): a queue to leave unfinished when the run stops.
  const Pair pair = run_both(resolved_scenario({"tenants.1.workload.arrivals.rate=5000/s"}),
                             path("memory.h5"), path("streamed.h5"), 20'000);
  ASSERT_EQ(pair.in_memory.status, "interrupted");
  ASSERT_EQ(pair.streamed.status, "interrupted");
  std::size_t unfinished = 0;
  for (const RequestRecord& r : pair.in_memory.requests) {
    unfinished += r.status == RequestStatus::unfinished;
  }
  EXPECT_GT(unfinished, 0u);
  expect_same_tables(path("memory.h5"), path("streamed.h5"));
}

// Synthetic records straight into the observer: 0, chunk - 1, chunk, chunk + 1 and more rows
// give the same /requests as the in-memory writer, and no /kernels when there are none.
TEST_F(StreamedResultTest, ChunkBoundaries) {
  const std::size_t chunk = h5::kStreamChunkRows;
  for (const std::size_t n : {std::size_t{0}, chunk - 1, chunk, chunk + 1, 3 * chunk + 7}) {
    RunResult result;
    result.scenario_name = "boundaries";
    result.tenants.resize(2);
    // Moved in, not assigned from a literal: GCC 12's -Wrestrict false positive (bug 105329)
    // on basic_string::assign inlined here.
    result.tenants[0].name = std::string(1, 'a');
    result.tenants[1].name = std::string(1, 'b');
    for (std::size_t i = 0; i < n; ++i) {
      const auto t = static_cast<std::int64_t>(i) * 1'000'003;
      result.requests.push_back(
          {static_cast<std::uint32_t>(i % 2), i / 2, t, t + 17, i % 5 == 0 ? -1 : t + 900'000,
           i % 5 == 0 ? RequestStatus::unfinished : RequestStatus::completed});
    }
    write_result_h5(path("memory.h5"), result);
    StreamedResultFile file(path("streamed.h5"), true);
    for (const RequestRecord& r : result.requests) file.on_request_record(r);
    RunResult rest = result;
    rest.requests.clear();
    file.finish(rest);
    expect_same_tables(path("memory.h5"), path("streamed.h5"));
    const hid_t f = H5Fopen(path("streamed.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT_EQ(rows_of(f, "requests"), n);
    EXPECT_FALSE(has(f, "kernels"));  // kernels on, but none recorded: omitted as in memory
    H5Fclose(f);
  }
}

TEST_F(StreamedResultTest, AnUnfinishedFileLeavesNothingAndKeepsThePreviousOne) {
  const std::string target = path("out.h5");
  {
    std::ofstream previous(target);
    previous << "previous result";
  }
  {
    StreamedResultFile file(target, false);
    const std::string temp = temp_output_name(target);
    EXPECT_TRUE(fs::exists(temp));
    for (std::size_t i = 0; i < 3 * h5::kStreamChunkRows; ++i) {
      file.on_request_record({0, i, 1, 2, 3, RequestStatus::completed});
    }
    // destroyed without finish(): a run that threw
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "previous result");
}

TEST_F(StreamedResultTest, RefusedTargetIsAnOutputErrorBeforeAnythingRuns) {
  EXPECT_THROW(StreamedResultFile(path("no/such/dir/out.h5"), false), OutputError);
  fs::create_directories(path("dir.h5"));
  EXPECT_THROW(StreamedResultFile(path("dir.h5"), false), OutputError);
  EXPECT_EQ(listing(), std::vector<std::string>{"dir.h5"});
}

TEST_F(StreamedResultTest, AFailedCommitRemovesTheTemporaryFile) {
  set_output_test_faults("rename:EXDEV");
  RunResult result;
  result.tenants.resize(1);
  result.tenants[0].name = "a";
  StreamedResultFile file(path("out.h5"), false);
  file.on_request_record({0, 0, 1, 2, 3, RequestStatus::completed});
  try {
    file.finish(result);
    ADD_FAILURE() << "finish should fail";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("Invalid cross-device link"), std::string::npos)
        << e.what();
  }
  set_output_test_faults("");
  EXPECT_TRUE(listing().empty());
}

// `gpumux compare -o`: each strategy's records streamed into its group while it runs (nothing
// kept), through the front door's variant hooks, give the tables that write_result_h5 writes
// from each in-memory result; RUN_LIMIT_EVENTS > 0 stops the second strategy (interrupted).
struct CompareFiles {
  std::vector<RunResult> in_memory, streamed;
};
CompareFiles compare_both(const std::vector<ResolvedScenario>& variants,
                          const std::vector<std::string>& strategies,
                          const std::string& streamed_file, std::uint64_t stop_after_events = 0) {
  std::atomic<bool> stop{false};
  RunControl control;
  control.interrupt = &stop;
  std::size_t variant = 0;
  control.started = [&] { ++variant; };
  if (stop_after_events > 0) {
    control.progress = [&](Nanos, Nanos, std::uint64_t events) {
      if (variant == 2 && events >= stop_after_events) stop = true;
    };
  }
  CompareFiles files;
  files.in_memory = simulate_variants(variants, strategies, control);
  stop = false;
  variant = 0;
  StreamedCompareFile file(streamed_file, variants.front().scenario.output.kernels);
  control.record_requests = false;
  control.record_kernels = false;
  control.observers.push_back(&file);
  std::vector<std::uint64_t> written;
  control.variant_started = [&](const std::string& label) { file.begin_run(label); };
  control.variant_finished = [&](const RunResult& result) {
    file.end_run(result);
    written.push_back(file.requests_written());
  };
  files.streamed = simulate_variants(variants, strategies, control);
  EXPECT_EQ(written.size(), files.in_memory.size());
  for (std::size_t i = 0; i < written.size() && i < files.in_memory.size(); ++i) {
    EXPECT_EQ(written[i], files.in_memory[i].requests.size());
  }
  file.finish(files.streamed);
  return files;
}

TEST_F(StreamedResultTest, StreamedCompareFileEqualsEachRunsInMemoryTables) {
  const Scenario scenario = load_request([] {
    ScenarioRequest request;
    request.scenario = kScenario;
    request.is_path = false;
    return request;
  }());
  const std::vector<std::string> strategies = {"mps", "time-slicing"};
  const std::vector<ResolvedScenario> variants = resolve_variants(scenario, strategies);
  const CompareFiles files = compare_both(variants, strategies, path("compare.h5"));
  ASSERT_EQ(files.streamed.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(files.streamed[i].requests.empty());
    EXPECT_TRUE(files.streamed[i].kernels.empty());
    EXPECT_GT(files.in_memory[i].requests.size(), 2 * h5::kStreamChunkRows);
    const std::string single = path(strategies[i] + ".h5");
    write_result_h5(single, files.in_memory[i]);
    expect_same_tables(single, path("compare.h5"), "", "strategies/" + strategies[i] + "/");
  }
  // The same file as write_results_h5 from the in-memory results, summaries aside from wall_s.
  write_results_h5(path("memory.h5"), files.in_memory);
  for (const std::string& strategy : strategies) {
    expect_same_tables(path("memory.h5"), path("compare.h5"), "strategies/" + strategy + "/",
                       "strategies/" + strategy + "/");
  }
  auto streamed = read_summaries_h5(path("compare.h5"));
  auto memory = read_summaries_h5(path("memory.h5"));
  ASSERT_EQ(streamed.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(streamed[i]["strategy"], strategies[i]);
    streamed[i].erase("wall_s");
    memory[i].erase("wall_s");
    EXPECT_EQ(streamed[i], memory[i]);
  }
  EXPECT_EQ(listing().size(), 4u);  // compare, mps, time-slicing, memory: no temporary file
}

TEST_F(StreamedResultTest, InterruptedCompareStreamsTheStrategiesRunSoFar) {
  const std::vector<std::string> strategies = {"mps", "time-slicing", "mps-static-partition"};
  const std::vector<ResolvedScenario> variants = resolve_variants(
      resolved_scenario({"tenants.1.workload.arrivals.rate=5000/s"}).scenario, strategies);
  const CompareFiles files = compare_both(variants, strategies, path("compare.h5"), 20'000);
  ASSERT_EQ(files.in_memory.size(), 2u);  // stopped during time-slicing: the third never ran
  ASSERT_EQ(files.streamed.size(), 2u);
  EXPECT_EQ(files.streamed[1].status, "interrupted");
  const hid_t f = H5Fopen(path("compare.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_TRUE(has(f, "strategies/time-slicing"));
  EXPECT_FALSE(has(f, "strategies/mps-static-partition"));
  H5Fclose(f);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string single = path(strategies[i] + ".h5");
    write_result_h5(single, files.in_memory[i]);
    expect_same_tables(single, path("compare.h5"), "", "strategies/" + strategies[i] + "/");
  }
}

TEST_F(StreamedResultTest, AnUnfinishedCompareFileLeavesNothing) {
  {
    StreamedCompareFile file(path("cmp.h5"), false);
    EXPECT_TRUE(fs::exists(temp_output_name(path("cmp.h5"))));
    file.begin_run("mps");
    for (std::size_t i = 0; i < 3 * h5::kStreamChunkRows; ++i) {
      file.on_request_record({0, i, 1, 2, 3, RequestStatus::completed});
    }
    // destroyed without end_run or finish(): a run that threw
  }
  EXPECT_TRUE(listing().empty());
  EXPECT_THROW(StreamedCompareFile(path("no/such/dir/out.h5"), false), OutputError);
  EXPECT_TRUE(listing().empty());
}

TEST_F(StreamedResultTest, AFailedCompareCommitRemovesTheTemporaryFile) {
  set_output_test_faults("rename:EXDEV");
  RunResult result;
  result.strategy = "mps";
  result.tenants.resize(1);
  result.tenants[0].name = "a";
  StreamedCompareFile file(path("cmp.h5"), false);
  file.begin_run("mps");
  file.on_request_record({0, 0, 1, 2, 3, RequestStatus::completed});
  file.end_run(result);
  EXPECT_THROW(file.finish({result}), OutputError);
  set_output_test_faults("");
  EXPECT_TRUE(listing().empty());
}

}  // namespace
}  // namespace gpumux
