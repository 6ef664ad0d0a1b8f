#include "models/scenario/inspect.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "models/workload/host_time.hpp"

namespace gpumux {
namespace {

std::string repeat_text(const KernelSpec& k) {
  if (k.repeat_per_token == TokenCount::input) return "input_tokens";
  if (k.repeat_per_token == TokenCount::output) return "output_tokens";
  return std::to_string(k.repeat);
}

std::string distribution_text(const DurationDistribution& d) {
  using Kind = DurationDistribution::Kind;
  switch (d.kind) {
    case Kind::fixed:
      return std::to_string(d.value);
    case Kind::exponential:
      return "exponential mean " + std::to_string(d.value);
    case Kind::lognormal:
      return fmt::format("lognormal median {} sigma {}", d.value, d.sigma);
    case Kind::uniform:
      return fmt::format("uniform {}..{}", d.value, d.upper);
    case Kind::empirical: {
      std::string out = "empirical";
      double below = 0;
      for (std::size_t i = 0; i < d.points.size(); ++i) {
        out +=
            fmt::format("{} {} ({:.3g})", i == 0 ? "" : ",", d.points[i], d.cumulative[i] - below);
        below = d.cumulative[i];
      }
      return out;
    }
  }
  return "";
}

std::string lengths_text(const WorkloadSpec& w) {
  const DurationDistribution& d = w.catalog->seq_len_distribution;
  return fmt::format(
      "seq_len {} (mean {:.4g}), drawn per request: kernels built at {} lengths {}..{}, the rows "
      "below at {}, memory per request at {}",
      distribution_text(d), d.mean(), w.length_values.size(), w.length_values.front(),
      w.length_values.back(), w.catalog->seq_len, w.length_values.back());
}

}  // namespace

std::string origin_label(ParamOrigin origin, const WorkloadSpec& workload) {
  switch (origin) {
    case ParamOrigin::fallback:
      return "default";
    case ParamOrigin::user:
      return "user";
    case ParamOrigin::catalog:
      return "catalog:" + (workload.catalog ? workload.catalog->model : std::string("?"));
    case ParamOrigin::trace:
      return "trace";
    case ParamOrigin::ncu:
      return "ncu";
  }
  return "default";
}

namespace {

// The tenant's time-alone terms (docs/calibration.md) on the GPU of its first device.
void set_time_alone(InspectRow& row, const ResolvedScenario& resolved, std::size_t t) {
  const WorkloadSpec& w = resolved.scenario.tenants[t].workload;
  const int device = resolved.tenant_device[t];
  if (device < 0 || static_cast<std::size_t>(device) >= resolved.devices.size()) return;
  const DeviceProfile& gpu =
      *resolved.gpu_profiles[static_cast<std::size_t>(resolved.devices[device].gpu)];
  const bool modelled = w.catalog || w.llm;
  if (w.max_batch > 0) {
    row.engine_cpu = w.engine_cpu.name;
    row.engine_cpu_iteration_ns = static_cast<double>(w.engine_cpu.per_iteration);
    row.engine_cpu_sequence_ns = static_cast<double>(w.engine_cpu.per_sequence);
    row.engine_cpu_origin = origin_label(w.engine_cpu.origin, w);
  }
  if (modelled) {
    row.host_cpu = w.host_cpu;
    row.host_cpu_speed = w.host_cpu_speed;
    row.host_cpu_origin =
        w.host_cpu_origin == ParamOrigin::user ? std::string("user") : "profile " + gpu.name;
  }
  row.launch_gap_ns = static_cast<double>(stream_launch_overhead(w, gpu));
  row.kernel_fixed_ns = modelled ? static_cast<double>(gpu.kernel_fixed_cost) : 0.0;
  row.block_round_ns = w.catalog ? static_cast<double>(gpu.block_round_cost) : 0.0;
  // A runtime with its own device time per kernel (runtime_fixed_cost.hpp) gives every catalog
  // kernel its gap: shown as the gap and as kernel_fixed_cost (the profile's plus the runtime's).
  const bool runtime_gap =
      w.catalog && !w.kernels.empty() && w.kernels.front().launch_overhead >= 0;
  if (runtime_gap) {
    const double own = static_cast<double>(w.kernels.front().launch_overhead);
    row.kernel_fixed_ns += own - row.launch_gap_ns;
    row.launch_gap_ns = own;
  }
  if (w.catalog && !w.kernels.empty()) {
    // The same terms the catalog used (host_time.hpp), with their origins; per_op is the
    // runtime's unless the host: block gives it (the host gap shows its value).
    const HostOverrides& user = w.catalog->host;
    const HostTerms host =
        request_host_terms(gpu, w.catalog->runtime, 0, 0, 0, user, {}, w.catalog->harness);
    row.host_request_ns = static_cast<double>(host.per_request);
    row.harness_ns = static_cast<double>(host.harness_time);
    row.harness = w.catalog->harness;
    row.front_end_ns = static_cast<double>(w.catalog->front_end_time);
    row.serving = w.catalog->serving;
    row.copy_ns = std::max(0.0, static_cast<double>(w.kernels.front().host_before) -
                                    row.host_request_ns - row.harness_ns - row.front_end_ns);
    row.host_origin =
        "per_request " + host.per_request_origin + ", bytes " + host.bytes_origin +
        (w.catalog->io_dtype.empty() ? std::string() : " (io_dtype " + w.catalog->io_dtype + ")") +
        ", link " + host.link_origin + ", per_op " + host.per_op_origin;
    if (!row.harness.empty()) {
      row.host_origin += ", harness " + row.harness + " (profile " + gpu.name +
                         " harness_per_request." + row.harness + ")";
    }
    if (!row.serving.empty()) {
      // Where the front end's two terms come from: kernel-families.yaml `serving:` or the user.
      const auto origin = [&](const bool user) {
        return user ? std::string("user") : "kernel-families serving." + row.serving;
      };
      row.host_origin += ", front_end " + row.serving + " (latency " +
                         origin(user.front_end_latency.has_value()) + ", bandwidth " +
                         origin(user.front_end_bandwidth.has_value()) + ")";
    }
  }
  if (!modelled) {
    row.time_alone_origin = "none";
    return;
  }
  const auto has = [](const std::vector<std::string>& keys, const std::string& prefix) {
    return std::any_of(keys.begin(), keys.end(),
                       [&](const std::string& k) { return k.rfind(prefix, 0) == 0; });
  };
  const bool fitted = has(gpu.fitted, "kernel_fixed_cost") || has(gpu.fitted, "block_round_cost") ||
                      has(gpu.fitted, "host_per_request") || has(gpu.fitted, "harness_per_request");
  row.time_alone_origin = "profile " + gpu.name + (fitted ? " (fitted)" : " (none fitted)");
  if (runtime_gap) {
    row.time_alone_origin +=
        " + runtime " + w.catalog->runtime + " kernel_fixed_cost" +
        (w.catalog->runtime_kernel_fixed_cost ? std::string(" (user: runtime_kernel_fixed_cost)")
                                              : std::string());
  }
}

}  // namespace

std::vector<InspectRow> inspect_kernels(const ResolvedScenario& resolved) {
  std::vector<InspectRow> rows;
  const Scenario& s = resolved.scenario;
  for (std::size_t t = 0; t < s.tenants.size(); ++t) {
    const TenantSpec& tenant = s.tenants[t];
    const WorkloadSpec& w = tenant.workload;
    const auto label = [&](ParamOrigin o) { return origin_label(o, w); };
    const std::size_t first = rows.size();
    for (std::size_t i = 0; i < w.kernels.size(); ++i) {
      const KernelSpec& k = w.kernels[i];
      const KernelOrigins o = i < w.kernel_origins.size() ? w.kernel_origins[i] : KernelOrigins{};
      InspectRow row;
      row.tenant = tenant.name;
      row.device = tenant.device;
      row.kernel = k.name;
      row.count = 1;
      row.duration_ns = k.duration.mean();
      row.sm_fraction = k.sm_fraction;
      row.waves = k.waves;
      row.memory_bound = k.memory_bound;
      row.busy_share = k.busy_share;
      row.working_set = k.working_set;
      row.repeat = repeat_text(k);
      row.launch = w.cuda_graph ? "graph" : "stream";
      row.memory = tenant.memory;
      row.memory_per_request = w.memory_per_request;
      row.duration_origin = label(o.duration);
      row.sm_fraction_origin = label(o.sm_fraction);
      row.waves_origin = label(o.waves);
      row.memory_bound_origin = label(o.memory_bound);
      row.busy_share_origin = label(o.busy_share);
      row.working_set_origin = label(o.working_set);
      row.repeat_origin = label(o.repeat);
      row.launch_origin = label(w.cuda_graph_origin);
      row.memory_origin = label(tenant.memory_origin);
      row.memory_per_request_origin = label(w.memory_per_request_origin);
      row.blocks = k.blocks;
      row.blocks_per_sm = k.blocks > 0 ? k.blocks_per_sm : 0;
      row.implementation = o.detail;
      if (w.catalog) {
        row.runtime = w.catalog->runtime;
        row.runtime_origin = w.catalog->runtime_from_user ? "user" : "default";
        if (!w.length_values.empty()) row.lengths = lengths_text(w);
      }
      row.host_gap_ns = static_cast<double>(w.host_gap);
      row.host_gap_origin = label(w.host_gap_origin);
      set_time_alone(row, resolved, t);
      const auto key = [](const InspectRow& r) {
        return std::tie(r.kernel, r.duration_ns, r.sm_fraction, r.waves, r.memory_bound,
                        r.busy_share, r.working_set, r.repeat, r.duration_origin,
                        r.sm_fraction_origin, r.waves_origin, r.memory_bound_origin,
                        r.busy_share_origin, r.working_set_origin, r.repeat_origin, r.blocks,
                        r.blocks_per_sm, r.implementation);
      };
      bool merged = false;
      for (std::size_t r = first; r < rows.size(); ++r) {
        if (key(rows[r]) == key(row)) {
          ++rows[r].count;
          merged = true;
          break;
        }
      }
      if (!merged) rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<std::string> default_warnings(const Scenario& scenario) {
  std::vector<std::string> out;
  std::vector<std::string> seen;  // replicas of one written tenant warn once
  for (const TenantSpec& tenant : scenario.tenants) {
    if (std::find(seen.begin(), seen.end(), tenant.where.key_path) != seen.end()) continue;
    seen.push_back(tenant.where.key_path);
    const WorkloadSpec& w = tenant.workload;
    int sm = 0, bound = 0;
    for (std::size_t i = 0; i < w.kernels.size(); ++i) {
      const KernelOrigins o = i < w.kernel_origins.size() ? w.kernel_origins[i] : KernelOrigins{};
      if (o.sm_fraction == ParamOrigin::fallback) ++sm;
      if (o.memory_bound == ParamOrigin::fallback) ++bound;
    }
    if (sm == 0 && bound == 0) continue;
    const auto kernels = [](int n) {
      return std::to_string(n) + (n == 1 ? " kernel" : " kernels");
    };
    std::string line = tenant.name + ": ";
    if (sm > 0) line += "sm_fraction not given for " + kernels(sm) + ": assumed full grid";
    if (sm > 0 && bound > 0) line += "; ";
    if (bound > 0) {
      line +=
          "memory_bound not given for " + kernels(bound) +
          (w.kernel_trace ? ": assumed from the kernel name's class" : ": assumed compute-bound");
    }
    out.push_back(line + " (see gpumux inspect)");
  }
  return out;
}

}  // namespace gpumux
