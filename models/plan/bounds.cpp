#include "models/plan/bounds.hpp"

#include <algorithm>
#include <limits>

#include "models/gpu/device_profile.hpp"

namespace gpumux {
namespace {

double min_of(const DurationDistribution& d) {
  switch (d.kind) {
    case DurationDistribution::Kind::fixed:
    case DurationDistribution::Kind::uniform:
    case DurationDistribution::Kind::empirical:  // value: its smallest point
      return static_cast<double>(d.value);
    default:
      return 0.0;  // exponential, lognormal: arbitrarily small
  }
}

// The law's slowdown of a lone kernel on the SMs its client may hold (l2_factor 1: L2 sharing
// only slows a kernel further).
// The kernel's (m, c) as a device of `c` reads them (contention::apply_law_phases).
TenantDemand::Kernel as_read(TenantDemand::Kernel k, const DeviceCapacity& c) {
  if (!c.geometry.overlapped_phases) contention::serial_phases(k.m, k.c);
  return k;
}

double slowdown(const TenantDemand::Kernel& given, const DeviceCapacity& c) {
  const TenantDemand::Kernel k = as_read(given, c);
  const double held = contention::sm_demand(k.f, c.geometry, c.client_sms);
  return contention::slowdown(k.f, k.m, k.c, 1.0, held, c.geometry, k.grid, k.blocks, k.tau);
}

}  // namespace

DeviceCapacity capacity_of(const DeviceProfile& gpu, const std::string& mig_profile,
                           const ContentionLaw* law) {
  DeviceCapacity c;
  c.gpu_sms = gpu.sms;
  c.sms = gpu.sms;
  c.bandwidth = 1.0;
  c.memory = gpu.memory;
  c.launch_overhead = static_cast<double>(gpu.launch_overhead);
  c.graph_launch_overhead = static_cast<double>(gpu.graph_launch_overhead);
  c.kernel_fixed_cost = static_cast<double>(gpu.kernel_fixed_cost);
  if (!mig_profile.empty()) {
    if (const MigProfileSpec* p = gpu.find_mig_profile(mig_profile)) {
      c.sms = p->sms;
      c.bandwidth = static_cast<double>(p->memory_slices) / std::max(1, gpu.memory_slices);
      c.memory = p->memory;
    }
  }
  c.client_sms = c.sms;
  c.geometry = make_geometry("", mig_profile, gpu, static_cast<int>(c.sms), c.bandwidth, c.memory,
                             1.0, law != nullptr ? *law : default_contention_law());
  return c;
}

TenantDemand demand_of(const TenantSpec& t) {
  TenantDemand d;
  const WorkloadSpec& w = t.workload;
  const bool trace = w.arrivals.process == ArrivalProcess::trace;
  d.open_loop = (w.arrivals.process == ArrivalProcess::poisson ||
                 w.arrivals.process == ArrivalProcess::constant) &&
                w.max_batch == 0;
  d.floor_known = w.max_batch == 0 && !trace;
  d.rate_per_s = d.open_loop ? w.arrivals.rate_per_s : 0.0;
  d.max_in_flight = std::max(1, w.max_in_flight);
  d.graph = w.cuda_graph;
  d.modelled = w.catalog || w.llm;
  auto tokens = [&](TokenCount count, bool minimum) {
    const DurationDistribution& dist =
        count == TokenCount::input ? w.input_tokens : w.output_tokens;
    if (!w.has_tokens) return minimum ? 0.0 : 1.0;
    return minimum ? min_of(dist) : dist.mean();
  };
  for (const KernelSpec& k : w.kernels) {
    TenantDemand::Kernel kernel;
    kernel.f = k.sm_fraction;
    kernel.m = k.memory_bound;
    kernel.c = k.busy_share;
    kernel.grid = k.grid();
    kernel.blocks = k.blocks;
    kernel.tau = k.sm_throughput_share;
    double launches = k.repeat, min_launches = k.repeat;
    if (k.repeat_per_token != TokenCount::none) {
      launches = tokens(k.repeat_per_token, false);
      min_launches = tokens(k.repeat_per_token, true);
    }
    double per_launch = k.duration.mean(), min_per_launch = min_of(k.duration);
    if (k.duration_per_token != TokenCount::none) {
      per_launch *= tokens(k.duration_per_token, false);
      min_per_launch *= tokens(k.duration_per_token, true);
    }
    kernel.mean_launches = launches;
    kernel.min_launches = min_launches;
    kernel.mean_work = launches * per_launch;
    kernel.min_duration = min_per_launch;
    d.kernels.push_back(kernel);
  }
  return d;
}

double sm_load_per_s(const TenantDemand& d, const DeviceCapacity& c) {
  if (!d.open_loop) return 0;
  double sm_ns = 0;
  for (const TenantDemand::Kernel& given : d.kernels) {
    const TenantDemand::Kernel k = as_read(given, c);
    sm_ns += contention::busy_share(k.m, k.c) *
             contention::min_sms_per_compute(k.f, k.grid, c.geometry, k.blocks, k.tau) *
             k.mean_work;
  }
  return sm_ns * d.rate_per_s / 1e9;
}

double hbm_load_per_s(const TenantDemand& d, const DeviceCapacity& c) {
  if (!d.open_loop) return 0;
  double ns = 0;
  for (const TenantDemand::Kernel& given : d.kernels) {
    const TenantDemand::Kernel k = as_read(given, c);
    ns += k.m * contention::hbm_draw(k.f, c.geometry) * k.mean_work;  // (phi >= 1 omitted)
  }
  return ns * d.rate_per_s / 1e9;
}

static double stream_gap_ns(const TenantDemand& d, const DeviceCapacity& c) {
  return (d.graph ? c.graph_launch_overhead : c.launch_overhead) +
         (d.modelled ? c.kernel_fixed_cost : 0.0);
}

double service_ns(const TenantDemand& d, const DeviceCapacity& c) {
  const double overhead = stream_gap_ns(d, c);
  double service = 0;
  for (const TenantDemand::Kernel& k : d.kernels) {
    service += k.mean_launches * overhead + k.mean_work * slowdown(k, c);
  }
  return service;
}

double solo_capacity_per_s(const TenantDemand& d, const DeviceCapacity& c) {
  const double service = service_ns(d, c);
  if (!(service > 0)) return std::numeric_limits<double>::infinity();
  return d.max_in_flight * 1e9 / service;
}

double latency_floor_ns(const TenantDemand& d, const DeviceCapacity& c) {
  if (!d.floor_known) return 0;
  const double overhead = stream_gap_ns(d, c);
  double floor = 0;
  for (const TenantDemand::Kernel& k : d.kernels) {
    floor += k.min_launches * (overhead + k.min_duration * slowdown(k, c));
  }
  return floor;
}

}  // namespace gpumux
