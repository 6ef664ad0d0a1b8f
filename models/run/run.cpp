// The run: builds the devices and tenants of a resolved scenario (a device may refuse a client:
// the tenant is rejected and never runs), starts the tenants, arms the warm-up mark, the faults
// and the sampler, runs the simulator while polling for interruption and progress, and ends the
// run when the last request completed or failed after `duration` (the drain).
#include "models/run/run.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <optional>
#include <stdexcept>

#include <poll.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/power.hpp"
#include "models/run/power_pilot.hpp"
#include "models/workload/arrival_process.hpp"
#include "models/scenario/emit.hpp"
#include "models/strategies/registry.hpp"
#include "sim/util/write_all.hpp"

namespace gpumux {
namespace run {
Run::Run(const ResolvedScenario& r, const RunOptions& options)
    : resolved(r),
      scenario(r.scenario),
      streams(r.scenario.seed),
      options_(options),
      stats_(r.scenario.tenants, r.scenario.output.percentiles),
      observers_(options.observers) {
  for (Recorder* o : observers_) {
    if (o->wants_arrivals()) arrival_observers_.push_back(o);
    if (o->wants_kernels()) kernel_observers_.push_back(o);
    if (o->wants_outcomes()) outcome_observers_.push_back(o);
  }
  record_kernels = scenario.output.kernels && options.record_kernels;
  record_requests = options.record_requests;
  direct_path = options.direct_path;
  build_components();
  for (std::size_t d = 0; d < resolved.devices.size(); ++d) {
    const ResolvedDevice& rd = resolved.devices[d];
    Simulator& sim = *components_[component_of_device_[d]].sim;
    devices.push_back(rd.sharing.strategy().make_device(sim, rd.geometry, rd.sharing.params()));
    devices.back()->set_index(static_cast<int>(devices.size() - 1));
    devices.back()->set_eager(options.eager_device);
    devices.back()->set_statistics(options.device_statistics);
  }
  // Order in the file is not physics: what happens to tenants at the same instant (their
  // start-up events, their clients' places on a device: the MPS client limit, time-slicing's
  // runlist) follows their names, so permuting the tenant list changes no result.
  std::vector<std::size_t> by_name(scenario.tenants.size());
  for (std::size_t t = 0; t < by_name.size(); ++t) by_name[t] = t;
  std::sort(by_name.begin(), by_name.end(), [this](std::size_t a, std::size_t b) {
    return scenario.tenants[a].name < scenario.tenants[b].name;
  });
  start_order_ = by_name;
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    const ResolvedDevice& first =
        resolved.devices[static_cast<std::size_t>(resolved.tenant_device[t])];
    const DeviceProfile& gpu = *resolved.gpu_profiles[static_cast<std::size_t>(first.gpu)];
    std::vector<Device*> tenant_devices;
    for (int d : resolved.tenant_devices[t])
      tenant_devices.push_back(devices[static_cast<std::size_t>(d)].get());
    Simulator& sim = *components_[component_of_device_[static_cast<std::size_t>(
                                      resolved.tenant_devices[t].front())]]
                          .sim;
    tenants.push_back(std::make_unique<Tenant>(
        *this, sim, static_cast<int>(t), scenario.tenants[t], tenant_devices,
        stream_launch_overhead(scenario.tenants[t].workload, gpu)));
  }
  for (const std::size_t t : by_name) {
    Tenant& tenant = *tenants[t];
    for (Device* device : tenant.devices()) {
      std::string reason;
      if (!device->attach_client(static_cast<int>(t), reason) && !tenant.dead()) {
        tenant.mark_rejected();
        record_event(EventKind::reject, static_cast<int>(t), device->index(),
                     scenario.tenants[t].name + " rejected: " + reason);
      }
    }
  }
  for (auto& device : devices) {
    RandomStream rng = streams.stream("device/" + device->geometry().name + "/round-robin");
    device->seed_round_robin(rng);
  }
}

RunResult Run::execute() {
  start();
  run_to_end();
  return finish();
}

bool Run::steppable() const {
  if (components_.size() != 1 || !scenario.faults.empty()) return false;
  return std::none_of(tenants.begin(), tenants.end(), [](const auto& t) { return t->direct(); });
}

bool Run::advance_before(Nanos t) {
  Component& c = components_.front();
  current_ = &c;
  c.sim->set_poll([this] { poll(); }, 4096);
  c.sim->run_until(t - 1);
  return !interrupted_;
}

void Run::end_arrivals_at(Nanos t) {
  for (const auto& tenant : tenants) tenant->end_arrivals_at(t);
}

void Run::start() {
  wall_start_ = std::chrono::steady_clock::now();
  const std::size_t n = devices.size();
  sample_busy_.assign(n, std::vector<double>{0.0});
  sample_dram_.assign(n, std::vector<double>{0.0});
  warm_busy_.assign(n, 0.0);
  warm_useful_.assign(n, 0.0);
  warm_dram_.assign(n, 0.0);
  warm_client_sm_.assign(n, {});
  for (std::size_t d = 0; d < n; ++d) warm_client_sm_[d].assign(devices[d]->clients().size(), 0.0);
  // In each component, in this order (the order one queue for the whole run gives them): the
  // tenants' start-up events by name, the warm-up mark, the faults.
  for (const std::size_t t : start_order_) tenants[t]->start();
  for (std::size_t c = 0; c < components_.size(); ++c) {
    Component& component = components_[c];
    if (scenario.warmup > 0) {
      component.sim->schedule_at(scenario.warmup, make_event<&Run::on_warmup>(*this, c),
                                 kPriorityControl);
    }
    // The sampler observes the clock; it is not an event, so it neither extends the run nor
    // counts in `events` (results are identical whatever output.sample is).
    component.sample_every = scenario.output.sample;
    component.sim->ticker().set([this, c](Nanos t) { sample(c, t); }, scenario.output.sample,
                                scenario.output.sample);
  }
  for (std::size_t f = 0; f < scenario.faults.size(); ++f) {
    if (scenario.faults[f].at >= scenario.duration) continue;
    int origin = 0;
    for (const auto& t : tenants) {
      if (t->spec().name == scenario.faults[f].tenant) origin = t->index();
    }
    const std::size_t device =
        static_cast<std::size_t>(resolved.tenant_devices[static_cast<std::size_t>(origin)].front());
    components_[component_of_device_[device]].sim->schedule_at(
        scenario.faults[f].at, make_event<&Run::on_fault>(*this, f), kPriorityControl);
  }
}

RunResult Run::finish() {
  const bool interrupted = interrupted_;
  // The run ends when the last request has completed or failed after `duration` (drain), not
  // when the last pending event ran (a restart scheduled after the drain changes nothing).
  Nanos stopped_at = 0;
  for (const Component& c : components_) stopped_at = std::max(stopped_at, c.sim->now());
  const Nanos end = interrupted ? stopped_at : std::max(scenario.duration, last_finish_);
  current_ = &components_.front();
  result.status = interrupted ? "interrupted" : "complete";
  finish_timeseries(end);
  fill_results(end);
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  result.scenario_yaml = emit_scenario_yaml(scenario);
  return std::move(result);
}

}  // namespace run

namespace {

// Power and clocks (models/gpu/power.hpp), quasi-static: one clock per board for the whole run.
// A board whose draw at boost may exceed its TDP (every SM of its devices busy, their whole HBM
// bandwidth in use, its tensor FLOP rate at most its tenants' offered rates: power_pilot.hpp)
// gets a pilot run at boost; its measured busy SM fraction and HBM traffic
// give the capped clock x, and the run is made again with every device of the board at x.
// Boards that cannot reach their TDP run once, exactly as without a power model.

// The power terms of each gpus[] entry: its profile's with the scenario's `power:` applied.
std::vector<PowerParams> board_power_params(const ResolvedScenario& r) {
  std::vector<PowerParams> out;
  for (std::size_t g = 0; g < r.gpu_profiles.size(); ++g) {
    out.push_back(r.scenario.gpus[g].power.apply(r.gpu_profiles[g]->power));
  }
  return out;
}

struct BoardLoad {
  double activity = 0;            // busy SMs / the board's SMs
  double hbm_bytes_per_s = 0;     // HBM traffic
  double tensor_flops_per_s = 0;  // FP16/BF16 tensor FLOP rate (R_t, models/gpu/power.hpp)
};

// FP16/BF16 tensor FLOPs of one request of a workload: its kernels' tensor_flops x repeat (the
// catalog's; 0 for LLM cards, traces and hand-written kernels: the tensor term sees none).
double tensor_flops_per_request(const WorkloadSpec& w) {
  double flops = 0;
  for (const KernelSpec& k : w.kernels) flops += k.tensor_flops * k.repeat;
  return flops;
}

// Per gpus[] entry: its devices' load, each scaled by `busy` and `dram` of the device (indices
// of r.devices), and its tensor FLOP rate: each tenant's FLOPs per request times
// `requests_per_s(i)` (tenant index), on every device the tenant runs on (a data-parallel
// tenant runs each request's kernels on each).
template <typename Busy, typename Dram, typename Rate>
std::vector<BoardLoad> board_loads(const ResolvedScenario& r, Busy busy, Dram dram,
                                   Rate requests_per_s) {
  std::vector<BoardLoad> out(r.gpu_profiles.size());
  for (std::size_t d = 0; d < r.devices.size(); ++d) {
    const ResolvedDevice& device = r.devices[d];
    const DeviceProfile& gpu = *r.gpu_profiles[static_cast<std::size_t>(device.gpu)];
    BoardLoad& load = out[static_cast<std::size_t>(device.gpu)];
    load.activity += busy(d) * device.geometry.sms / std::max(1, gpu.sms);
    load.hbm_bytes_per_s += dram(d) * device.geometry.bandwidth * achievable_hbm_bandwidth(gpu);
  }
  for (std::size_t i = 0; i < r.scenario.tenants.size() && i < r.tenant_devices.size(); ++i) {
    const double flops = tensor_flops_per_request(r.scenario.tenants[i].workload);
    if (!(flops > 0)) continue;
    for (const int d : r.tenant_devices[i]) {
      out[static_cast<std::size_t>(r.devices[static_cast<std::size_t>(d)].gpu)]
          .tensor_flops_per_s += flops * requests_per_s(i);
    }
  }
  return out;
}

// A run's loads: its devices' sm_busy and dram_busy, its tenants' completed requests per second.
std::vector<BoardLoad> measured_loads(const ResolvedScenario& r, const RunResult& result) {
  return board_loads(
      r, [&](std::size_t d) { return d < result.devices.size() ? result.devices[d].sm_busy : 0; },
      [&](std::size_t d) { return d < result.devices.size() ? result.devices[d].dram_busy : 0; },
      [&](std::size_t i) {
        return i < result.tenants.size() ? result.tenants[i].throughput_per_s : 0.0;
      });
}

// Writes each device's board clock and mean board draw into `result`.
void report_power(const ResolvedScenario& r, const std::vector<PowerParams>& params,
                  const std::vector<double>& clock_ratio, RunResult& result) {
  const std::vector<BoardLoad> loads = measured_loads(r, result);
  for (std::size_t d = 0; d < r.devices.size() && d < result.devices.size(); ++d) {
    const auto g = static_cast<std::size_t>(r.devices[d].gpu);
    if (!params[g].modelled()) continue;
    result.devices[d].clock_mhz = clock_ratio[g] * params[g].boost_clock_mhz;
    // The run's FLOP rate is at clock x; the law's R_t is the rate at boost, R_t x = measured.
    result.devices[d].board_power_w =
        board_power(params[g], loads[g].activity, loads[g].hbm_bytes_per_s, clock_ratio[g],
                    loads[g].tensor_flops_per_s / clock_ratio[g]);
  }
}

RunResult run_once(const ResolvedScenario& scenario, const RunOptions& options) {
  run::Run run(scenario, options);
  return run.execute();
}

}  // namespace

std::optional<double> measured_throughput_bound(const ResolvedScenario& r, std::size_t tenant) {
  const TenantSpec& spec = r.scenario.tenants.at(tenant);
  const ArrivalSpec& a = spec.workload.arrivals;
  const Nanos warmup = r.scenario.warmup;
  // Tenant: arrivals stop at min(duration, active.until); a request is measured when it
  // arrives at or after warmup; throughput_per_s = completed measured / (duration - warmup).
  const Nanos arrivals_end =
      std::min(r.scenario.duration, spec.active_until.value_or(r.scenario.duration));
  const double measured_s = to_seconds(r.scenario.duration - r.scenario.warmup);
  if (!(measured_s > 0)) return 0.0;
  std::int64_t arrivals = 0;
  switch (a.process) {
    case ArrivalProcess::closed:
      return std::nullopt;
    case ArrivalProcess::trace:
      if (tenant >= r.traces.size()) return std::nullopt;
      arrivals = r.traces[tenant].rows;
      break;
    case ArrivalProcess::poisson:
    case ArrivalProcess::constant: {
      if (!(a.rate_per_s > 0) ||
          a.rate_per_s * to_seconds(arrivals_end - spec.active_from) > kMaxReplayedArrivals)
        return std::nullopt;
      if (a.process == ArrivalProcess::constant) {
        // Tenant::next_open_arrival: arrival n at constant_arrival(active.from, n, rate).
        for (std::uint64_t n = 0;; ++n) {
          const Nanos t = constant_arrival(spec.active_from, n, a.rate_per_s);
          if (t >= arrivals_end) break;
          if (t >= warmup) ++arrivals;
        }
      } else {
        // The same stream and draws as Tenant (tenant.cpp, arrivals.cpp): the first arrival
        // drawn at active.from, each next one from the last.
        RandomStream rng =
            RandomStreams(r.scenario.seed).stream("tenant/" + spec.name + "/arrivals");
        const double rate_per_ns = poisson_rate_per_ns(a.rate_per_s);
        for (Nanos t = next_poisson_arrival(rng, rate_per_ns, spec.active_from); t < arrivals_end;
             t = next_poisson_arrival(rng, rate_per_ns, t)) {
          if (t >= warmup) ++arrivals;
        }
      }
      break;
    }
  }
  return static_cast<double>(arrivals) / measured_s;
}

std::vector<double> board_clock_bounds(const ResolvedScenario& scenario, TensorRateBound bound) {
  if (bound == TensorRateBound::offered) {
    // The offered bound is at most the peak one: where the peak cannot cap, nothing to replay.
    std::vector<double> peak_bounds = board_clock_bounds(scenario, TensorRateBound::peak);
    if (std::all_of(peak_bounds.begin(), peak_bounds.end(), [](double x) { return x >= 1.0; }))
      return peak_bounds;
  }
  const std::vector<PowerParams> params = board_power_params(scenario);
  // Every SM busy, the whole HBM bandwidth in use.
  std::vector<BoardLoad> full = board_loads(
      scenario, [](std::size_t) { return 1.0; }, [](std::size_t) { return 1.0; },
      [](std::size_t) { return 0.0; });
  // The peak bound: each device with a tensor tenant at its share of the FP16 tensor peak.
  // `unbounded`: devices with a tensor tenant whose rate has no bound short of the peak.
  std::vector<bool> tensor_device(scenario.devices.size(), false);
  std::vector<bool> unbounded(scenario.devices.size(), false);
  std::vector<std::optional<double>> rate_bound(scenario.scenario.tenants.size());
  for (std::size_t i = 0;
       i < scenario.scenario.tenants.size() && i < scenario.tenant_devices.size(); ++i) {
    if (!(tensor_flops_per_request(scenario.scenario.tenants[i].workload) > 0)) continue;
    if (bound == TensorRateBound::offered) rate_bound[i] = measured_throughput_bound(scenario, i);
    for (const int d : scenario.tenant_devices[i]) {
      tensor_device[static_cast<std::size_t>(d)] = true;
      if (!rate_bound[i]) unbounded[static_cast<std::size_t>(d)] = true;
    }
  }
  const auto peak_share = [&](std::size_t d) {
    const ResolvedDevice& device = scenario.devices[d];
    const DeviceProfile& gpu = *scenario.gpu_profiles[static_cast<std::size_t>(device.gpu)];
    return std::max(gpu.compute.fp16_tensor, gpu.compute.bf16_tensor) * device.geometry.sms /
           std::max(1, gpu.sms);
  };
  std::vector<double> peak(params.size(), 0.0);
  for (std::size_t d = 0; d < scenario.devices.size(); ++d) {
    if (tensor_device[d]) peak[static_cast<std::size_t>(scenario.devices[d].gpu)] += peak_share(d);
  }
  std::vector<double> tensor = peak;
  if (bound == TensorRateBound::offered) {
    // The open-loop tenants' bounded rates, summed as measured_loads sums their measured ones
    // (the same order, so every partial sum is at least the measured one), plus the peak share
    // of each device where a tenant is unbounded.
    std::vector<BoardLoad> offered = board_loads(
        scenario, [](std::size_t) { return 0.0; }, [](std::size_t) { return 0.0; },
        [&](std::size_t i) { return rate_bound[i].value_or(0.0); });
    for (std::size_t d = 0; d < scenario.devices.size(); ++d) {
      if (unbounded[d]) {
        offered[static_cast<std::size_t>(scenario.devices[d].gpu)].tensor_flops_per_s +=
            peak_share(d);
      }
    }
    for (std::size_t g = 0; g < params.size(); ++g) {
      tensor[g] = std::min(peak[g], offered[g].tensor_flops_per_s);
    }
  }
  std::vector<double> out;
  for (std::size_t g = 0; g < params.size(); ++g) {
    out.push_back(
        capped_clock_ratio(params[g], full[g].activity, full[g].hbm_bytes_per_s, tensor[g]));
  }
  return out;
}

RunResult simulate(const ResolvedScenario& scenario, const RunOptions& options) {
  return simulate_with_clock_bounds(scenario, options, board_clock_bounds(scenario));
}

RunResult simulate_with_clock_bounds(const ResolvedScenario& scenario, const RunOptions& options,
                                     const std::vector<double>& worst) {
  const std::vector<PowerParams> params = board_power_params(scenario);
  std::vector<double> clock_ratio(params.size(), 1.0);
  const bool may_cap = std::any_of(worst.begin(), worst.end(), [](double x) { return x < 1.0; });
  if (!may_cap) {
    RunResult result = run_once(scenario, options);
    report_power(scenario, params, clock_ratio, result);
    return result;
  }
  // The pilot: at boost, observed by nobody (its records are not the run's).
  RunOptions pilot_options = options;
  pilot_options.observers.clear();
  pilot_options.progress = nullptr;
  pilot_options.record_requests = options.observers.empty() && options.record_requests;
  // The clocks come from the pilot's utilization: it keeps its devices' statistics whatever the
  // caller asked (RunOptions::device_statistics).
  pilot_options.device_statistics = true;
  RunResult pilot = run_once(scenario, pilot_options);
  const std::vector<BoardLoad> loads = measured_loads(scenario, pilot);
  bool capped = false;
  for (std::size_t g = 0; g < params.size(); ++g) {
    clock_ratio[g] = capped_clock_ratio(params[g], loads[g].activity, loads[g].hbm_bytes_per_s,
                                        loads[g].tensor_flops_per_s);
    capped = capped || clock_ratio[g] < 1.0;
  }
  if (pilot.status != "complete" || (!capped && options.observers.empty())) {
    std::fill(clock_ratio.begin(), clock_ratio.end(), 1.0);
    report_power(scenario, params, clock_ratio, pilot);
    return pilot;
  }
  ResolvedScenario clocked = scenario;
  for (ResolvedDevice& device : clocked.devices) {
    device.geometry.clock_ratio = clock_ratio[static_cast<std::size_t>(device.gpu)];
  }
  RunResult result = run_once(clocked, options);
  report_power(clocked, params, clock_ratio, result);
  for (std::size_t g = 0; g < params.size(); ++g) {
    if (!(clock_ratio[g] < 1.0)) continue;
    const PowerParams& p = params[g];
    result.notes.push_back(fmt::format(
        "{}: power cap: the board draws {:.0f} W at boost (pilot run: {:.0f}% of its SMs busy, "
        "{:.0f} GB/s of HBM, {:.0f} TFLOP/s of FP16/BF16 tensor math), above its {:.0f} W TDP; SM "
        "clock {:.0f} MHz of {:.0f} MHz boost for the whole run (docs/strategies.md, \"Power and "
        "clocks\"; `power: none` to turn off)",
        scenario.scenario.gpus[g].name,
        board_power(p, loads[g].activity, loads[g].hbm_bytes_per_s, 1.0,
                    loads[g].tensor_flops_per_s),
        100.0 * loads[g].activity, loads[g].hbm_bytes_per_s / 1e9,
        loads[g].tensor_flops_per_s / 1e12, p.tdp_w, clock_ratio[g] * p.boost_clock_mhz,
        p.boost_clock_mhz));
  }
  return result;
}

namespace {

/// This thread's CPU time, in seconds (0 where the clock is missing).
double thread_cpu_seconds() {
  timespec t{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// A continued window's child stalls when its CPU time advances less than kChildStallCpu in
/// kChildStall of wall time: the drain is pure computation, so a child that stops computing is
/// blocked for ever (a lock, or a function-local static being initialised, that another thread
/// of the parent held at the fork: the copy's owner does not exist). A false alarm (a child
/// starved of CPU for 2 s) costs a fresh run of the window, never a different answer.
constexpr auto kChildStall = std::chrono::seconds(2);
constexpr double kChildStallCpu = 1e-3;  // s
constexpr int kChildPollMs = 250;

/// The child's CPU time in seconds; nullopt where it cannot be read (no per-process clock, or the
/// child already exited).
std::optional<double> child_cpu_seconds(pid_t child) {
#if defined(__linux__)
  clockid_t clock{};
  timespec t{};
  if (::clock_getcpuclockid(child, &clock) != 0 || ::clock_gettime(clock, &t) != 0) {
    return std::nullopt;
  }
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
#else
  (void)child;
  return std::nullopt;
#endif
}

/// Reads CHILD's message from FD (an 8-byte length, then the text) and reaps it. nullopt when it
/// failed: exited without a whole message, or stalled (killed: SIGKILL). Where the child's CPU
/// clock cannot be read, a stall is a wall time above max(60 s, 20 x PARENT_CPU_S), the parent's
/// CPU time on the simulation so far (the drain runs a part of the same events).
std::optional<std::string> child_report(pid_t child, int fd, double parent_cpu_s) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  const auto blind_limit = std::chrono::duration<double>(std::max(60.0, 20.0 * parent_cpu_s));
  Clock::time_point progressed = started;
  std::optional<double> cpu = child_cpu_seconds(child);
  std::string message;
  std::uint64_t size = 0;
  bool whole = false, reaped = false;
  int status = 0;
  char buffer[1 << 16];
  // Whether `message` holds the frame's length and at least that much text (length_framed).
  const auto holds_whole_frame = [&] {
    if (message.size() < sizeof size) return false;
    std::memcpy(&size, message.data(), sizeof size);
    return message.size() - sizeof size >= size;
  };
  while (!whole) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, kChildPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // end of file: every writer is gone
      message.append(buffer, static_cast<std::size_t>(n));
      progressed = Clock::now();
      whole = holds_whole_frame();
      continue;
    }
    // Nothing to read for kChildPollMs: gone without a whole message, computing, or stalled.
    if (::waitpid(child, &status, WNOHANG) == child) {
      reaped = true;
      // What it wrote before it exited is in the pipe: read it without blocking.
      for (;;) {
        pollfd q{fd, POLLIN, 0};
        if (::poll(&q, 1, 0) <= 0) break;
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n <= 0) break;
        message.append(buffer, static_cast<std::size_t>(n));
      }
      whole = holds_whole_frame();
      break;
    }
    const Clock::time_point now = Clock::now();
    const std::optional<double> cpu_now = child_cpu_seconds(child);
    if (cpu && cpu_now) {
      if (*cpu_now - *cpu >= kChildStallCpu) {
        cpu = cpu_now;
        progressed = now;
      } else if (now - progressed >= kChildStall) {
        break;  // stalled
      }
    } else if (now - started >= blind_limit) {
      break;
    }
  }
  if (!reaped) {
    if (!whole) ::kill(child, SIGKILL);
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!whole || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return message.substr(sizeof size, size);
}

}  // namespace

struct SteppedRun::State {
  ResolvedScenario scenario;  // its duration: the longest window (the child sets its own)
  RunOptions options;
  std::unique_ptr<run::Run> run;  // the continued simulation; null: fresh runs
  Nanos reached = 0;              // the last window asked for
  double cpu_s = 0;               // this thread's CPU time in the continued simulation
  int children_failed = 0;        // windows whose child failed or stalled (run afresh)
};

SteppedRun::SteppedRun(const ResolvedScenario& scenario, const RunOptions& options)
    : state_(std::make_unique<State>()) {
  const double cpu_before = thread_cpu_seconds();
  state_->scenario = scenario;
  state_->options = options;
  // The peak bound, not the offered one: a continued run answers every window up to
  // `duration`, and a shorter window's arrivals may come faster than the whole run's
  // (power_pilot.hpp); where the peak cannot cap, no window's pilot can.
  const std::vector<double> worst = board_clock_bounds(state_->scenario, TensorRateBound::peak);
  const bool may_cap = std::any_of(worst.begin(), worst.end(), [](double x) { return x < 1.0; });
  if (may_cap || !options.observers.empty()) return;
  auto run = std::make_unique<run::Run>(state_->scenario, state_->options);
  if (!run->steppable()) return;
  run->start();
  state_->run = std::move(run);
  state_->cpu_s = thread_cpu_seconds() - cpu_before;
}

SteppedRun::~SteppedRun() = default;

int SteppedRun::children_failed() const { return state_->children_failed; }

bool SteppedRun::continues() const { return state_->run != nullptr; }

std::string SteppedRun::at(Nanos w, const Report& report) {
  State& s = *state_;
  if (w <= s.reached || w > s.scenario.scenario.duration) {
    throw std::logic_error("SteppedRun::at: windows must grow, up to the scenario's duration");
  }
  s.reached = w;
  const auto fresh = [&] {
    ResolvedScenario shorter = s.scenario;
    shorter.scenario.duration = w;
    return report(simulate(shorter, s.options));
  };
  if (!s.run) return fresh();
  if (w == s.scenario.scenario.duration) {
    // The longest window: the run itself, to its end.
    std::unique_ptr<run::Run> run = std::move(s.run);
    run->run_to_end();
    return report(run->finish());
  }
  const double cpu_before = thread_cpu_seconds();
  const bool advanced = s.run->advance_before(w);
  s.cpu_s += thread_cpu_seconds() - cpu_before;
  if (!advanced) return fresh();  // interrupted: the caller sees the flag
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return fresh();
  [[maybe_unused]] const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return fresh();
  }
  if (child == 0) {
    // The child: this process's copy of the run ends as a run of duration w. Its message: the
    // text's length (8 bytes) and the text, so that the parent needs no end of file (a child
    // forked meanwhile by another thread holds a copy of this pipe's write end).
    ::close(pipe_fds[0]);
#if defined(__linux__)
    // Killed with its parent (a plan's worker ended mid-window): no orphan drains on.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(3);
#endif
    int status = 3;
    try {
      s.scenario.scenario.duration = w;
      s.run->end_arrivals_at(w);
      s.run->run_to_end();
      if (write_all(pipe_fds[1], length_framed(report(s.run->finish())))) status = 0;
    } catch (...) {
    }
    ::_exit(status);  // no atexit handlers, no stdio flush: the parent's
  }
  ::close(pipe_fds[1]);
  std::optional<std::string> text = child_report(child, pipe_fds[0], s.cpu_s);
  ::close(pipe_fds[0]);
  if (!text) ++s.children_failed;
  return text ? std::move(*text) : fresh();
}

}  // namespace gpumux
