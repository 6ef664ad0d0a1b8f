// Writing result files: BM_WriteRequests/N writes an HDF5 file with N request records (the
// /requests table dominates large files). Was a wall-clock assertion in test_result_io.cpp
// (10^6 rows under 20 s) and a disabled 10^7-row test; a unit test now checks the round trip,
// and speed is measured here: build/bench/bench_result_io --benchmark_filter=WriteRequests.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "models/output/result_io.hpp"
#include "models/run/result.hpp"

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
