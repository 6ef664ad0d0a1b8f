// Percentile memory and cost per sample (issue 12 item 3), Google Benchmark:
//   BM_Percentiles<method>/N  adds N lognormal latency samples (median 2 ms in ns, sigma 1) to one
//                             series (Percentiles, sim/core/statistics.hpp) and asks p50..p999.
// Counters: bytes_per_series (memory the series holds after N samples: exact 8 B x N, sketch
// flat in N, auto exact up to 2^20 then the sketch) and ns per sample (time / N, adds and the
// quantiles together). Run: build/bench/bench_percentiles  (--benchmark_filter=Sketch ...)
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/core/statistics.hpp"

namespace gpumux {
namespace {

// The samples, drawn once per size (outside the timed loop).
const std::vector<std::int64_t>& samples(std::size_t n) {
  static std::vector<std::int64_t> all;
  if (all.size() < n) {
    std::mt19937_64 rng(1);
    std::lognormal_distribution<double> latency(std::log(2e6), 1.0);
    all.reserve(n);
    while (all.size() < n) all.push_back(static_cast<std::int64_t>(latency(rng)));
  }
  return all;
}

template <PercentileMethod kMethod>
void BM_Percentiles(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<std::int64_t>& values = samples(n);
  std::size_t bytes = 0;
  std::int64_t sink = 0;
  for (auto _ : state) {
    Percentiles series(kMethod);
    for (std::size_t i = 0; i < n; ++i) series.add(values[i]);
    bytes = series.memory_bytes();
    for (double q : {0.5, 0.9, 0.99, 0.999}) sink += series.quantile(q);
    benchmark::DoNotOptimize(sink);
  }
  state.counters["bytes_per_series"] = static_cast<double>(bytes);
  state.counters["samples"] = static_cast<double>(n);
  state.counters["ns_per_sample"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {1'000, 100'000, 1'000'000, 4'000'000, 16'000'000}) b->Arg(n);
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK_TEMPLATE(BM_Percentiles, PercentileMethod::exact)
    ->Name("Percentiles/Exact")
    ->Apply(sizes);
BENCHMARK_TEMPLATE(BM_Percentiles, PercentileMethod::sketch)
    ->Name("Percentiles/Sketch")
    ->Apply(sizes);
BENCHMARK_TEMPLATE(BM_Percentiles, PercentileMethod::automatic)
    ->Name("Percentiles/Auto")
    ->Apply(sizes);

}  // namespace
}  // namespace gpumux

BENCHMARK_MAIN();
