// Kernel traces (models/scenario/kernel_trace*.cpp): the nsys, torch and csv readers on files
// written in each tool's real schema, ncu metrics, occupancy, the trace -> kernel conversion, and
// replay timing through the simulator (recorded GPU: exact; another GPU: the rescale rule).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include <unistd.h>

#include "models/config/profile_loader.hpp"
#include "models/scenario/kernel_trace.hpp"
#include "models/workload/kernel_trace_model.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path dir =
      fs::temp_directory_path() / ("gpumux_kernel_trace_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : "?";
    sqlite3_free(error);
    throw std::runtime_error(message + " in " + sql);
  }
}

struct NsysKernel {
  Nanos start, end;
  int stream;
  int grid, block, regs, static_smem, dynamic_smem;
  std::string name;
};

// The tables and columns of an `nsys export --type sqlite` database (Nsight Systems 2023-2024
// schema; only the columns gpumux reads must match, the others make it a realistic file).
void write_nsys(const fs::path& path, const std::vector<NsysKernel>& kernels,
                bool with_copies = true, bool with_memory = true) {
  fs::remove(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
       "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
       "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
       "shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, "
       "registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
       "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, "
       "blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, "
       "dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, "
       "localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, "
       "sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER)");
  int next_string = 1;
  std::map<std::string, int> ids;
  const auto id_of = [&](const std::string& s) {
    auto [it, fresh] = ids.emplace(s, next_string);
    if (fresh) {
      exec(db, "INSERT INTO StringIds VALUES (" + std::to_string(next_string) + ", '" + s + "')");
      ++next_string;
    }
    return it->second;
  };
  int correlation = 100;
  exec(db, "BEGIN");
  for (const NsysKernel& k : kernels) {
    const int short_id = id_of(k.name);
    const int long_id = id_of("void " + k.name + "<128>(float*, int)");
    std::ostringstream sql;
    sql << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" << k.start << ", " << k.end
        << ", 0, 1, " << k.stream << ", " << correlation++ << ", 281474976710656, " << long_id
        << ", " << short_id << ", NULL, 0, 0, " << k.regs << ", " << k.grid << ", 1, 1, " << k.block
        << ", 1, 1, " << k.static_smem << ", " << k.dynamic_smem << ", 0, 0, 1, 0, NULL, 0)";
    exec(db, sql.str());
  }
  exec(db, "COMMIT");
  if (with_copies) {
    exec(db,
         "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
         "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
         "correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
         "copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, "
         "srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, "
         "migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER)");
    const Nanos at = kernels.empty() ? 0 : kernels.front().start;
    exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" + std::to_string(at + 10) + ", " +
                 std::to_string(at + 20) +
                 ", 0, 1, 7, 1, 2, 4096, 1, NULL, 0, 2, 0, 1, 0, 1, 0, NULL, 0)");
  }
  if (with_memory) {
    exec(db,
         "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, "
         "globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
         "address INTEGER NOT NULL, pc INTEGER NOT NULL, bytes INTEGER NOT NULL, "
         "memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT, "
         "correlationId INTEGER, localMemoryPoolAddress INTEGER, "
         "localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER, "
         "localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER, "
         "importedMemoryPoolProcessId INTEGER)");
    // 3 GiB + 1 GiB device allocations, 1 GiB freed, 2 GiB more: peak 5 GiB. Pinned host memory
    // (memKind 1) is not counted.
    const char* rows[] = {
        "1, 1, 0, 1, 4096, 0, 3221225472, 2, 0", "2, 1, 0, 1, 8192, 0, 1073741824, 2, 0",
        "3, 1, 0, 1, 8192, 0, 1073741824, 2, 1", "4, 1, 0, 1, 9999, 0, 2147483648, 2, 0",
        "5, 1, 0, 1, 7777, 0, 99999999999, 1, 0"};
    for (const char* r : rows) {
      exec(db, std::string("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (") + r +
                   ", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL)");
    }
  }
  sqlite3_close(db);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// ---- readers ------------------------------------------------------------------------------

TEST(KernelTraceNsys, ReadsKernelsCopiesAndPeakMemory) {
  const fs::path path = temp_dir() / "a.sqlite";
  write_nsys(path, {{1000, 51000, 7, 216, 256, 32, 1024, 2048, "ampere_sgemm_128x64_tn"},
                    {53000, 60000, 7, 80, 128, 16, 0, 0, "vectorized_elementwise_kernel"},
                    {55000, 58000, 13, 4, 64, 20, 0, 0, "reduce_kernel"}});
  const KernelTrace t = read_kernel_trace(path.string(), KernelTraceFormat::nsys);
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[0].name, "ampere_sgemm_128x64_tn");
  EXPECT_EQ(t.kernels[0].start, 1000);
  EXPECT_EQ(t.kernels[0].duration(), 50000);
  EXPECT_EQ(t.kernels[0].stream, 7);
  EXPECT_EQ(t.kernels[0].blocks(), 216);
  EXPECT_EQ(t.kernels[0].threads_per_block(), 256);
  EXPECT_EQ(t.kernels[0].registers_per_thread, 32);
  EXPECT_EQ(t.kernels[0].shared_memory, 3072);
  EXPECT_EQ(t.kernels[2].stream, 13);
  ASSERT_EQ(t.copies.size(), 1u);
  EXPECT_EQ(t.copies[0].kind, "HtoD");
  EXPECT_EQ(t.copies[0].bytes, 4096);
  ASSERT_TRUE(t.peak_memory.has_value());
  EXPECT_EQ(*t.peak_memory, 5LL << 30);
}

TEST(KernelTraceNsys, RefusesTruncatedOrForeignFiles) {
  const fs::path dir = temp_dir();
  std::vector<NsysKernel> many;
  for (int i = 0; i < 3000; ++i) {
    many.push_back({i * 10000LL, i * 10000LL + 5000, 7, 108, 256, 32, 0, 0,
                    "kernel_with_a_long_name_" + std::to_string(i)});
  }
  const fs::path full = dir / "full.sqlite";
  write_nsys(full, many);
  const fs::path cut = dir / "cut.sqlite";
  fs::copy_file(full, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, fs::file_size(full) / 2);
  const std::string truncated =
      error_of([&] { read_kernel_trace(cut.string(), KernelTraceFormat::nsys); });
  EXPECT_NE(truncated.find(cut.string()), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("truncated SQLite file"), std::string::npos) << truncated;

  const fs::path text = dir / "text.sqlite";
  std::ofstream(text) << "name,duration_ns\n";
  EXPECT_NE(error_of([&] {
              read_kernel_trace(text.string(), KernelTraceFormat::nsys);
            }).find("not a SQLite database"),
            std::string::npos);

  const fs::path empty_db = dir / "nokernels.sqlite";
  fs::remove(empty_db);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(empty_db.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)");
  sqlite3_close(db);
  const std::string missing =
      error_of([&] { read_kernel_trace(empty_db.string(), KernelTraceFormat::nsys); });
  EXPECT_NE(missing.find("CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos) << missing;

  EXPECT_NE(error_of([&] {
              read_kernel_trace((dir / "absent.sqlite").string(), KernelTraceFormat::nsys);
            }).find("not found"),
            std::string::npos);
}

const char* kTorchTrace = R"JSON({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,
                        "totalGlobalMem": 85031714816, "numSms": 108}],
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1000.0, "dur": 30.0, "args": {}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1005.0, "dur": 4.0,
     "args": {"correlation": 11, "external id": 5}},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7,
     "ts": 1010.0, "dur": 50.0,
     "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 11,
              "registers per thread": 122, "shared memory": 49152, "blocks per SM": 2.0,
              "warps per SM": 16.0, "grid": [216, 1, 1], "block": [256, 1, 1],
              "est. achieved occupancy %": 12}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7,
     "ts": 1061.0, "dur": 1.5, "args": {"device": 0, "stream": 7, "bytes": 4096, "memory bandwidth (GB/s)": 2.7}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>(int)", "pid": 0, "tid": 7,
     "ts": 1064.5, "dur": 6.25,
     "args": {"stream": 7, "registers per thread": 16, "shared memory": 0, "blocks per SM": 0.74,
              "grid": [80, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 100}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1001.0,
     "args": {"Addr": 1, "Bytes": 1048576, "Total Allocated": 1048576, "Total Reserved": 2097152,
              "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1002.0,
     "args": {"Addr": 2, "Bytes": 4194304, "Total Allocated": 5242880, "Total Reserved": 6291456,
              "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1003.0,
     "args": {"Addr": 3, "Bytes": 999999999, "Total Allocated": 999999999, "Total Reserved": 0,
              "Device Type": 0, "Device Id": -1}}
  ]
})JSON";

TEST(KernelTraceTorch, ReadsKernelsCopiesAndMemory) {
  std::istringstream in(kTorchTrace);
  const KernelTrace t = parse_torch_trace(in, "t.json");
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[0].start, 1'010'000);
  EXPECT_EQ(t.kernels[0].duration(), 50'000);
  EXPECT_EQ(t.kernels[0].stream, 7);
  EXPECT_EQ(t.kernels[0].blocks(), 216);
  EXPECT_EQ(t.kernels[0].registers_per_thread, 122);
  EXPECT_EQ(t.kernels[0].shared_memory, 49152);
  EXPECT_EQ(t.kernels[1].duration(), 6'250);
  ASSERT_EQ(t.copies.size(), 1u);
  EXPECT_EQ(t.copies[0].bytes, 4096);
  ASSERT_TRUE(t.peak_memory);
  EXPECT_EQ(*t.peak_memory, 6291456);  // Total Reserved of the CUDA events; CPU events ignored
}

TEST(KernelTraceTorch, RefusesJsonWithoutTraceEvents) {
  std::istringstream in(R"({"schemaVersion": 1, "events": []})");
  const std::string e = error_of([&] { parse_torch_trace(in, "t.json"); });
  EXPECT_NE(e.find("t.json"), std::string::npos) << e;
  EXPECT_NE(e.find("traceEvents"), std::string::npos) << e;
  std::istringstream bad("{not json");
  EXPECT_NE(error_of([&] { parse_torch_trace(bad, "t.json"); }).find("not a JSON file"),
            std::string::npos);
}

TEST(KernelTraceCsv, ReadsTheOrionColumnsUnchanged) {
  std::istringstream in(
      "Name,Profile,Memory_footprint,SM_usage,Duration\n"
      "void at::native::(anonymous namespace)::indexSelectLargeIndex,-1,0,40,10112\n"
      "void at::native::vectorized_elementwise_kernel,0,0,48,5152\n"
      "volta_sgemm_128x64_nn,1,0,80,93760\n");
  const KernelTrace t = parse_csv_kernel_trace(in, "orion.csv");
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_FALSE(t.timed);
  EXPECT_EQ(t.kernels[0].sm_usage, 40);
  EXPECT_EQ(t.kernels[0].duration(), 10112);
  EXPECT_DOUBLE_EQ(t.kernels[0].memory_bound, kNeitherMemoryShare);
  EXPECT_DOUBLE_EQ(t.kernels[1].memory_bound, kMemoryBoundMemoryShare);
  EXPECT_DOUBLE_EQ(t.kernels[2].memory_bound, kComputeBoundMemoryShare);
  EXPECT_EQ(t.kernels[1].start, t.kernels[0].end);  // back to back
}

TEST(KernelTraceCsv, DocumentedColumnsAndErrors) {
  std::istringstream in(
      "name,duration_ns,grid,block,registers_per_thread,shared_memory_bytes,gap_ns,stream\n"
      "gemm,50000,216x1x1,256,32,3072,0,7\n"
      "\"add, fused\",7000,80,128x1x1,16,0,2000,7\n");
  const KernelTrace t = parse_csv_kernel_trace(in, "k.csv");
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_TRUE(t.timed);
  EXPECT_EQ(t.kernels[1].name, "add, fused");
  EXPECT_EQ(t.kernels[1].start, 52000);
  EXPECT_EQ(t.kernels[0].blocks(), 216);
  EXPECT_EQ(t.kernels[1].threads_per_block(), 128);

  std::istringstream missing("name,grid,block\nk,1,1\n");
  const std::string e = error_of([&] { parse_csv_kernel_trace(missing, "k.csv"); });
  EXPECT_NE(e.find("k.csv:1"), std::string::npos) << e;
  EXPECT_NE(e.find("missing column 'duration_ns'"), std::string::npos) << e;
  std::istringstream bad_row("name,duration_ns\nk,12\nj,abc\n");
  const std::string row = error_of([&] { parse_csv_kernel_trace(bad_row, "k.csv"); });
  EXPECT_NE(row.find("k.csv:3"), std::string::npos) << row;
}

TEST(KernelTraceNcu, LongAndWideLayouts) {
  std::istringstream long_layout(
      "==PROF== Connected to process 1\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
      "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
      "\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"python\",\"h\",\"void at::native::vectorized_elementwise_kernel<4>(int)\","
      "\"1\",\"7\",\"(128, 1, 1)\",\"(80, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\","
      "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"81.5\"\n"
      "\"0\",\"1\",\"python\",\"h\",\"void at::native::vectorized_elementwise_kernel<4>(int)\","
      "\"1\",\"7\",\"(128, 1, 1)\",\"(80, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\","
      "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"9.5\"\n");
  const auto m = parse_ncu_metrics(long_layout, "n.csv");
  ASSERT_TRUE(m.count("vectorized_elementwise_kernel"));
  EXPECT_DOUBLE_EQ(m.at("vectorized_elementwise_kernel").dram_pct, 81.5);
  EXPECT_DOUBLE_EQ(m.at("vectorized_elementwise_kernel").sm_pct, 9.5);

  std::istringstream wide(
      "\"Kernel Name\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
      "\"\",\"%\",\"%\"\n"
      "\"ampere_sgemm_128x64_tn\",\"12.0\",\"88.0\"\n");
  const auto w = parse_ncu_metrics(wide, "w.csv");
  EXPECT_DOUBLE_EQ(w.at("ampere_sgemm_128x64_tn").sm_pct, 88.0);

  std::istringstream wrong("\"Kernel Name\",\"gpu__time_duration.sum\"\n\"k\",\"1\"\n");
  EXPECT_NE(error_of([&] { parse_ncu_metrics(wrong, "x.csv"); }).find("missing column"),
            std::string::npos);
}

// ---- occupancy and conversion ---------------------------------------------------------------

TEST(KernelTraceModel, BlocksPerSmFromTheArchitectureLimits) {
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  const DeviceProfile& h100 = load_device_profile("h100-sxm-80gb");
  TraceKernel k;
  k.grid[0] = 1000;
  k.block[0] = 256;
  k.registers_per_thread = 32;
  EXPECT_EQ(blocks_per_sm(k, a100.sm_limits), 8);  // 2048 threads / 256
  k.registers_per_thread = 128;                    // 4096 registers per warp: 16 warps
  EXPECT_EQ(blocks_per_sm(k, a100.sm_limits), 2);
  k.registers_per_thread = 32;
  k.shared_memory = 48 * 1024;  // + 1 KiB reserved: 164/49 = 3 on sm_80, 228/49 = 4 on sm_90
  EXPECT_EQ(blocks_per_sm(k, a100.sm_limits), 3);
  EXPECT_EQ(blocks_per_sm(k, h100.sm_limits), 4);
  k.block[0] = 32;  // tiny blocks: the 32-block limit
  k.shared_memory = 0;
  EXPECT_EQ(blocks_per_sm(k, a100.sm_limits), 32);
}

// Dimensions, registers and shared memory come from the file: values beyond int / int64 are
// refused with the key (torch) or saturate (products, sums), never converted with undefined
// behaviour (issue 13, checked arithmetic; UBSan-clean in scripts/ci-sanitize.sh).
TEST(KernelTraceTorch, DimensionsOutOfRangeAreKeyErrors) {
  const auto trace = [](const std::string& grid, const std::string& extra = "") {
    return R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,
                "args": {"grid": )" +
           grid + R"(, "block": [128, 1, 1])" + extra + "}}]}";
  };
  for (const std::string grid : {"[1e30, 1, 1]", "[-1, 1, 1]", "[2147483648, 1, 1]", "[1.5, 1, 1]",
                                 "[1, 18446744073709551615, 1]"}) {
    std::istringstream in(trace(grid));
    const std::string e = error_of([&] { parse_torch_trace(in, "t.json"); });
    EXPECT_NE(e.find("t.json"), std::string::npos) << grid << ": " << e;
    EXPECT_NE(e.find("traceEvents.0.args.grid."), std::string::npos) << grid << ": " << e;
    EXPECT_NE(e.find("expected a whole number in 0..2147483647"), std::string::npos) << e;
  }
  std::istringstream largest(trace("[2147483647, 65535, 65535]",
                                   R"(, "registers per thread": 1e30, "shared memory": 1e300)"));
  const KernelTrace t = parse_torch_trace(largest, "t.json");
  ASSERT_EQ(t.kernels.size(), 1u);
  // The largest accepted dimensions still multiply exactly within int64 (9.22309e18).
  EXPECT_EQ(t.kernels[0].blocks(), std::int64_t{2147483647} * 65535 * 65535);
  EXPECT_EQ(t.kernels[0].registers_per_thread, 65536);
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  EXPECT_EQ(blocks_per_sm(t.kernels[0], a100.sm_limits), 0);  // cannot be resident
}

TEST(KernelTraceModel, HugeCsvDimensionsAndSharedMemorySaturate) {
  std::istringstream in(
      "name,duration_ns,grid,block,registers_per_thread,shared_memory_bytes\n"
      "k,1000,9000000000000000000x9000000000000000000x2,9000000000000000000x3,"
      "9000000000000000000,9000000000000000000\n");
  const KernelTrace t = parse_csv_kernel_trace(in, "k.csv");
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].blocks(), INT64_MAX);
  EXPECT_EQ(t.kernels[0].threads_per_block(), INT64_MAX);
  EXPECT_EQ(t.kernels[0].registers_per_thread, 65536);
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  TraceKernel k;
  k.grid[0] = 1;
  k.block[0] = 32;
  k.shared_memory = INT64_MAX;  // + the reserved KiB: saturates instead of wrapping negative
  EXPECT_EQ(blocks_per_sm(k, a100.sm_limits), 0);
  k.shared_memory = 0;
  k.registers_per_thread = 65536;  // x 32 threads: beyond int, computed in int64
  EXPECT_EQ(blocks_per_sm(k, a100.sm_limits), 0);
}

TEST(KernelTraceModel, NameClasses) {
  EXPECT_STREQ(kernel_name_class("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_tn"), "compute");
  EXPECT_STREQ(kernel_name_class("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>"), "compute");
  EXPECT_STREQ(kernel_name_class("flash_fwd_kernel"), "compute");
  EXPECT_STREQ(kernel_name_class("void gemv2T_kernel_val<int, int, float>"), "memory");
  EXPECT_STREQ(kernel_name_class("vectorized_elementwise_kernel"), "memory");
  EXPECT_STREQ(kernel_name_class("void at::native::reduce_kernel<512, 1>"), "memory");
  EXPECT_STREQ(kernel_name_class("my_custom_op"), "other");
}

KernelTrace synthetic_trace(int kernels, int streams, unsigned seed) {
  KernelTrace t;
  t.source = "synthetic";
  std::mt19937 rng(seed);
  std::uniform_int_distribution<Nanos> duration(2'000, 400'000), gap(0, 30'000);
  std::vector<Nanos> clock(static_cast<std::size_t>(streams), 5'000'000);
  for (int i = 0; i < kernels; ++i) {
    const int s = i % streams;
    TraceKernel k;
    k.name = (i % 3 == 0) ? "ampere_sgemm_128x64_tn" : "vectorized_elementwise_kernel";
    k.stream = 7 + 6 * s;
    // Some gaps shorter than the launch overhead (queued kernels), some idle.
    const Nanos g = (i % 4 == 1) ? 700 : gap(rng);
    k.start = clock[static_cast<std::size_t>(s)] + g;
    k.end = k.start + duration(rng);
    clock[static_cast<std::size_t>(s)] = k.end;
    k.grid[0] = (i % 3 == 0) ? 864 : 40 + (i % 50);
    k.block[0] = (i % 3 == 0) ? 256 : 128;
    k.registers_per_thread = (i % 3 == 0) ? 122 : 16;
    k.shared_memory = (i % 3 == 0) ? 49152 : 0;
    if (streams > 1) {
      // Kernels of different streams overlap: narrow compute-bound grids that fit side by side
      // (a recording of full-GPU kernels overlapping would contradict SM residency).
      k.grid[0] = 40 + (i % 8);
      k.memory_bound = 0.05;
    }
    t.kernels.push_back(k);
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start < b.start; });
  return t;
}

TEST(KernelTraceModel, SameGpuKeepsDurationsAndTurnsGapsIntoHostTime) {
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  const KernelTrace t = synthetic_trace(40, 1, 3);
  const ConvertedTrace c = convert_kernel_trace(t, {}, a100, a100);
  ASSERT_EQ(c.kernels.size(), 40u);
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(c.kernels[i].duration.value, t.kernels[i].duration());
    if (i == 0) continue;
    const Nanos gap = t.kernels[i].start - t.kernels[i - 1].end;
    const Nanos launch =
        c.kernels[i].launch_overhead >= 0 ? c.kernels[i].launch_overhead : a100.launch_overhead;
    EXPECT_EQ(c.kernels[i].host_before + launch, gap) << i;
  }
  // Grid 864 x 256 threads, 122 registers (2 blocks/SM on sm_80): 864 / (2 x 108) = 4 waves.
  EXPECT_DOUBLE_EQ(c.kernels[0].waves, 4.0);
  EXPECT_DOUBLE_EQ(c.kernels[0].sm_fraction, 1.0);
  EXPECT_DOUBLE_EQ(c.kernels[1].sm_fraction, 41.0 / 108);
  EXPECT_EQ(c.recorded_span, t.kernels.back().end - t.kernels.front().start);
}

TEST(KernelTraceModel, RescaleRule) {
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  const DeviceProfile& h100 = load_device_profile("h100-sxm-80gb");
  KernelTrace t;
  t.source = "x";
  TraceKernel stream_kernel;  // memory-bound, one wave on both: bandwidth ratio only
  stream_kernel.name = "copy";
  stream_kernel.start = 0;
  stream_kernel.end = 1'000'000;
  stream_kernel.memory_bound = 1.0;
  stream_kernel.grid[0] = 100;
  stream_kernel.block[0] = 256;
  TraceKernel gemm = stream_kernel;  // compute-bound, 10 waves on the A100
  gemm.name = "gemm";
  gemm.start = 2'000'000;
  gemm.end = 3'000'000;
  gemm.memory_bound = 0.0;
  gemm.grid[0] = 1080 * 8;
  t.kernels = {stream_kernel, gemm};
  const ConvertedTrace c = convert_kernel_trace(t, {}, a100, h100);
  EXPECT_NEAR(static_cast<double>(c.kernels[0].duration.value), 1e6 * 2039.0 / 3350.0, 1.0);
  // 8640 blocks, 8/SM: 10 waves on 108 SMs, 8640/(8 x 132) = 8.18 on 132; clock 1410/1980.
  const double expected = 1e6 * (1410.0 / 1980.0) * (8640.0 / (8 * 132)) / 10.0;
  EXPECT_NEAR(static_cast<double>(c.kernels[1].duration.value), expected, 1.0);
}

TEST(KernelTraceModel, SelectionByStreamAndWindow) {
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  const KernelTrace t = synthetic_trace(30, 2, 5);
  KernelTraceSelect by_stream;
  by_stream.stream = 13;
  const ConvertedTrace c = convert_kernel_trace(t, by_stream, a100, a100);
  EXPECT_EQ(c.kernels.size(), 15u);
  EXPECT_EQ(c.streams, std::vector<std::int64_t>{13});
  KernelTraceSelect none;
  none.stream = 99;
  const std::string e = error_of([&] { convert_kernel_trace(t, none, a100, a100); });
  EXPECT_NE(e.find("no kernels in the selection (stream 99)"), std::string::npos) << e;
  EXPECT_NE(e.find("stream(s) 7, 13"), std::string::npos) << e;
  KernelTraceSelect window;
  window.window_start = 1'000'000'000;
  EXPECT_NE(error_of([&] { convert_kernel_trace(t, window, a100, a100); }).find("window"),
            std::string::npos);
}

TEST(KernelTraceModel, SeveralGpusNeedSelectDevice) {
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  KernelTrace t = synthetic_trace(20, 1, 9);
  for (std::size_t i = 0; i < t.kernels.size(); i += 2) t.kernels[i].device = 1;
  const std::string e = error_of([&] { convert_kernel_trace(t, {}, a100, a100); });
  EXPECT_NE(e.find("kernels of 2 GPUs (device 0, 1): choose one with select: {device: N}"),
            std::string::npos)
      << e;
  KernelTraceSelect one;
  one.device = 1;
  EXPECT_EQ(convert_kernel_trace(t, one, a100, a100).kernels.size(), 10u);
}

// ---- replay through the simulator -----------------------------------------------------------

// One closed-loop request at a time on a dedicated GPU of `model`, running the converted kernels.
RunResult replay(const ConvertedTrace& c, const std::string& model) {
  Scenario s = load_scenario_text(
      "name: replay\nseed: 1\nduration: 10s\n"
      "gpus: [{name: gpu0, model: " +
          model +
          ", sharing: {mode: exclusive}}]\n"
          "tenants:\n"
          "  - name: app\n    device: gpu0\n    workload:\n"
          "      arrivals: {process: closed, concurrency: 1, think: 0ms}\n"
          "      request: {kernels: [{name: k, duration: 1ms}]}\n",
      "replay.yaml");
  s.tenants[0].workload.kernels = c.kernels;
  s.duration = 20 * (c.recorded_span + 1'000'000);
  return simulate(resolve_scenario(std::move(s)));
}

TEST(KernelTraceReplay, RecordedGpuReproducesTheRecordedTime) {
  for (const std::string model : {"a100-80gb", "h100-sxm-80gb"}) {
    const DeviceProfile& gpu = load_device_profile(model);
    for (const int streams : {1, 2}) {
      const KernelTrace t = synthetic_trace(60, streams, 11);
      const ConvertedTrace c = convert_kernel_trace(t, {}, gpu, gpu);
      const RunResult r = replay(c, model);
      const TenantResult& app = testing::tenant(r, "app");
      ASSERT_GT(app.completed, 5);
      // Every request: the recorded span plus the first kernel's launch overhead.
      const double expected = static_cast<double>(c.recorded_span + gpu.launch_overhead);
      EXPECT_NEAR(static_cast<double>(app.latency.p50), expected, expected * 0.02)
          << model << " streams " << streams;
      EXPECT_NEAR(static_cast<double>(app.latency.max), expected, 2.0)
          << model << " streams " << streams;
    }
  }
}

TEST(KernelTraceReplay, AnotherGpuFollowsTheRescaleRule) {
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  const DeviceProfile& h100 = load_device_profile("h100-sxm-80gb");
  const KernelTrace t = synthetic_trace(50, 1, 17);
  const ConvertedTrace on_h100 = convert_kernel_trace(t, {}, a100, h100);
  // Expected: the rescaled durations back to back with the recorded host time between them.
  double expected = 0;
  for (const KernelSpec& k : on_h100.kernels) {
    expected +=
        static_cast<double>(k.host_before) +
        static_cast<double>(k.launch_overhead >= 0 ? k.launch_overhead : h100.launch_overhead) +
        static_cast<double>(k.duration.value);
  }
  const RunResult r = replay(on_h100, "h100-sxm-80gb");
  EXPECT_NEAR(static_cast<double>(testing::tenant(r, "app").latency.p50), expected, 2.0);
  EXPECT_LT(expected, static_cast<double>(on_h100.recorded_span));  // the H100 is faster
}

}  // namespace
}  // namespace gpumux
