// Engine and end-to-end throughput benchmarks (Google Benchmark).
//   BM_EventHold<Kind>/N   classic "hold" model: N pending events; each event reschedules
//                          itself at now + a pseudo-random delay. Reports events/s at queue size N
//                          for each queue kind (heap, calendar, ladder); N = 8 stands for the
//                          tiny queues of end-to-end runs.
//   BM_CancelHeavy<Kind>   half of the scheduled events are cancelled before they run.
//   BM_KernelsEndToEnd  a closed-loop tenant issuing back-to-back kernels on a dedicated GPU
//                       through loader -> resolver -> runner; reports simulated kernels/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "sim/core/random.hpp"
#include "sim/core/simulator.hpp"

namespace gpumux {
namespace {

struct Hold {
  Simulator* sim = nullptr;
  std::vector<Nanos> delays;
  std::size_t next = 0;
  void on_event(std::uint64_t tag) {
    sim->schedule_in(delays[next++ & (delays.size() - 1)], make_event<&Hold::on_event>(*this, tag));
  }
};

template <QueueKind kKind>
void BM_EventHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  Simulator sim(kKind);
  Hold hold;
  hold.sim = &sim;
  RandomStream rng(1);
  hold.delays.resize(1 << 16);
  for (Nanos& d : hold.delays) d = 1 + static_cast<Nanos>(rng.exponential(1000.0 * pending));
  for (std::size_t i = 0; i < pending; ++i) {
    sim.schedule_at(static_cast<Nanos>(rng.next_u64() % (1000 * pending)),
                    make_event<&Hold::on_event>(hold, std::uint64_t{i}));
  }
  // Each iteration runs about max(N, 1024) / 8 events (rate N / mean delay = 1 per 1000 ns).
  const Nanos step = 1000 * static_cast<Nanos>(std::max<std::size_t>(pending, 1024)) / 8;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const std::uint64_t before = sim.events_processed();
    sim.run_until(sim.now() + step);
    events += sim.events_processed() - before;
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["pending"] = static_cast<double>(sim.pending());
}
void hold_sizes(benchmark::internal::Benchmark* b) {
  for (const int pending : {8, 1000, 10000, 100000, 1000000}) b->Arg(pending);
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK_TEMPLATE(BM_EventHold, QueueKind::heap)->Apply(hold_sizes);
BENCHMARK_TEMPLATE(BM_EventHold, QueueKind::calendar)->Apply(hold_sizes);
BENCHMARK_TEMPLATE(BM_EventHold, QueueKind::ladder)->Apply(hold_sizes);

template <QueueKind kKind>
void BM_CancelHeavy(benchmark::State& state) {
  Simulator sim(kKind);
  std::uint64_t events = 0;
  struct Noop {
    void on_event() {}
  } noop;
  RandomStream rng(2);
  for (auto _ : state) {
    std::vector<EventId> ids;
    ids.reserve(100000);
    const Nanos base = sim.now();
    for (int i = 0; i < 100000; ++i) {
      ids.push_back(sim.schedule_at(base + 1 + static_cast<Nanos>(rng.next_u64() % 1000000),
                                    make_event<&Noop::on_event>(noop)));
    }
    for (std::size_t i = 0; i < ids.size(); i += 2) sim.cancel(ids[i]);
    const std::uint64_t before = sim.events_processed();
    sim.run();
    events += sim.events_processed() - before;
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK_TEMPLATE(BM_CancelHeavy, QueueKind::heap)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_CancelHeavy, QueueKind::calendar)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_CancelHeavy, QueueKind::ladder)->Unit(benchmark::kMillisecond);

void BM_KernelsEndToEnd(benchmark::State& state) {
  const std::string yaml = R"(
name: bench
duration: 10s
output: {sample: 1s}
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: k, duration: 20us, memory_bound: 0.3, repeat: 16}]}
)";
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(yaml, "bench.yaml"));
  double kernels = 0;
  for (auto _ : state) {
    const RunResult r = simulate(resolved);
    kernels += static_cast<double>(r.tenants[0].completed) * 16;
  }
  state.counters["kernels/s"] = benchmark::Counter(kernels, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_KernelsEndToEnd)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpumux

BENCHMARK_MAIN();
