// Writing result files: BM_WriteRequests/N writes an HDF5 file with N request records (the
// /requests table dominates large files). Was a wall-clock assertion in test_result_io.cpp
// (10^6 rows under 20 s) and a disabled 10^7-row test; a unit test now checks the round trip,
// and speed is measured here: build/bench/bench_result_io --benchmark_filter=WriteRequests.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "models/output/result_io.hpp"
#include "models/run/result.hpp"
#include "sim/io/table_stream.hpp"

namespace gpumux {
namespace {

RunResult requests_result(std::size_t n) {
  RunResult r;
  r.scenario_name = "bench";
  r.tenants.resize(8);
  for (std::size_t i = 0; i < r.tenants.size(); ++i) {
    r.tenants[i].name = std::to_string(i);
  }
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
                     RequestStatus::completed};
  }
  return r;
}

void BM_WriteRequests(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const RunResult r = requests_result(n);
  std::string file = "gpumux-bench-";
  file += std::to_string(getpid());
  file += ".h5";
  const std::string path = (std::filesystem::temp_directory_path() / file).string();
  for (auto _ : state) write_result_h5(path, r);
  state.counters["MiB"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n));
  std::filesystem::remove(path);
}
BENCHMARK(BM_WriteRequests)
    ->Arg(1'000'000)
    ->Arg(10'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// One chunk of request rows (16,384 x 37 B) as the streamed tables encode it: the shuffle alone,
// then shuffle + deflate with zlib's run-length strategy (what gpumux writes) or its default
// strategy at level 1 (what H5Pset_deflate(1) would do). Counters: ns and stored bytes per row.
std::vector<std::byte> request_chunk() {
  const RunResult r = requests_result(h5::kStreamChunkRows);
  std::vector<std::byte> rows(h5::kStreamChunkRows * 37);
  for (std::size_t i = 0; i < r.requests.size(); ++i) {
    const RequestRecord& q = r.requests[i];
    std::byte* row = rows.data() + i * 37;
    h5::put(row, 0, q.tenant);
    h5::put(row, 4, q.request_id);
    h5::put(row, 12, q.arrival_ns);
    h5::put(row, 20, q.start_ns);
    h5::put(row, 28, q.finish_ns);
    h5::put(row, 36, static_cast<std::uint8_t>(q.status));
  }
  return rows;
}

void BM_EncodeChunk(benchmark::State& state) {
  const std::vector<std::byte> rows = request_chunk();
  const auto deflate = static_cast<h5::Deflate>(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = h5::encode_chunk(rows.data(), 37, h5::kStreamChunkRows, deflate).size();
  }
  state.SetLabel(deflate == h5::Deflate::planes ? "shuffle+planes (gpumux)"
                 : deflate == h5::Deflate::rle  ? "shuffle+zlib Z_RLE"
                                                : "shuffle+zlib level 1");
  state.counters["B/row"] = static_cast<double>(bytes) / h5::kStreamChunkRows;
  state.counters["ns/row"] = benchmark::Counter(
      static_cast<double>(h5::kStreamChunkRows) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeChunk)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// One chunk of request rows as `gpumux run -o` writes them for N exclusive GPUs with one Poisson
// tenant each (bench/bench_scaling.py's poisson case: 400 requests/s, one 1 ms kernel, no
// queueing): the N tenants' rows interleaved in time order, each tenant's request ids counting
// up from 0. At N = 1 the tenant and id planes are runs; at N = 512 they are literals, which is
// where the encoder's cost per row grows with N (docs/performance.md, issue 37 item 4).
std::vector<std::byte> interleaved_chunk(std::uint32_t tenants) {
  std::vector<std::byte> rows(h5::kStreamChunkRows * 37);
  std::vector<std::uint64_t> next_id(tenants, 0);
  std::uint64_t state = 7;
  std::int64_t t = 0;
  const double gap_ns = 1e9 / (400.0 * tenants);  // the fleet's mean inter-arrival
  for (std::size_t i = 0; i < h5::kStreamChunkRows; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double uniform = (static_cast<double>(state >> 11) + 0.5) * 0x1.0p-53;
    t += static_cast<std::int64_t>(-gap_ns * std::log(uniform));  // exponential gaps
    const auto tenant = static_cast<std::uint32_t>((state >> 17) % tenants);
    std::byte* row = rows.data() + i * 37;
    h5::put(row, 0, tenant);
    h5::put(row, 4, next_id[tenant]++);
    h5::put(row, 12, t);
    h5::put(row, 20, t);
    h5::put(row, 28, t + std::int64_t{1'000'000});
    h5::put(row, 36, static_cast<std::uint8_t>(RequestStatus::completed));
  }
  return rows;
}

void BM_EncodeInterleaved(benchmark::State& state) {
  const std::vector<std::byte> rows = interleaved_chunk(static_cast<std::uint32_t>(state.range(0)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = h5::encode_chunk(rows.data(), 37, h5::kStreamChunkRows, h5::Deflate::planes).size();
  }
  state.counters["B/row"] = static_cast<double>(bytes) / h5::kStreamChunkRows;
  state.counters["ns/row"] = benchmark::Counter(
      static_cast<double>(h5::kStreamChunkRows) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeInterleaved)->Arg(1)->Arg(512)->Unit(benchmark::kMicrosecond);

void BM_SummaryJson(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  RunResult r;
  r.scenario_name = "bench";
  r.tenants.resize(n);
  r.devices.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    r.tenants[i].name = "tenant-" + std::to_string(i);
    r.tenants[i].device = "gpu-" + std::to_string(i);
    r.devices[i].name = "gpu-" + std::to_string(i);
  }
  for (auto _ : state) benchmark::DoNotOptimize(summary_json(r));
  state.SetComplexityN(static_cast<std::int64_t>(n));
}
BENCHMARK(BM_SummaryJson)
    ->RangeMultiplier(4)
    ->Range(64, 4096)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace
}  // namespace gpumux

BENCHMARK_MAIN();
