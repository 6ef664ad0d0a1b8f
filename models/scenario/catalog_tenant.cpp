#include "models/scenario/catalog_tenant.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "models/workload/workload_catalog.hpp"

namespace gpumux {
namespace {

[[noreturn]] void fail_at(const Scenario& scenario, const std::string& path,
                          const std::string& message) {
  throw InputError(scenario.locate(path), message);
}

}  // namespace

DeviceProfile catalog_timing_profile(const Scenario& scenario, const DeviceProfile& gpu) {
  return catalog_timing_profile(scenario.contention_law, gpu);
}

CatalogWorkload build_catalog_workload(const Scenario& scenario, const CatalogRequestSpec& request,
                                       const std::string& tenant_path, const DeviceProfile& gpu,
                                       int data_parallel, bool cuda_graph, int library_sms,
                                       double device_l2) {
  return build_catalog_workload(
      scenario.contention_law, [&scenario](const std::string& key) { return scenario.locate(key); },
      request, tenant_path, gpu, data_parallel, cuda_graph, library_sms, device_l2);
}

namespace {

// kMaxCatalogLengths (catalog_tenant.hpp): the most distinct lengths a seq_len distribution may
// span (each one's kernels are built at resolve time): above every catalog entry's positions
// (Whisper's 448, BERT's 512, GPT-2's 1024).

// The lengths a tenant's seq_len distribution can draw, ascending: an empirical one's points, a
// uniform one's integers from max(1, min) to max, an unbounded one's from 1 to the entry's
// positions (draws beyond them are clamped, models/workload/arrival_process.hpp). Empty for a fixed
// length.
std::vector<std::int64_t> catalog_lengths(const Scenario& scenario, const TenantSpec& tenant) {
  const CatalogRequestSpec& request = *tenant.workload.catalog;
  const DurationDistribution& d = request.seq_len_distribution;
  using Kind = DurationDistribution::Kind;
  const std::string key = tenant.where.key_path + ".workload.seq_len";
  if (d.kind == Kind::fixed) return {};
  if (tenant.workload.max_batch > 0) {
    fail_at(scenario, key,
            "a seq_len distribution draws one length per request; it cannot be combined with "
            "batching: (an llm: card batches requests of their own tokens)");
  }
  std::vector<std::int64_t> lengths;
  if (d.kind == Kind::empirical) {
    lengths = d.points;
  } else {
    std::int64_t upper = d.upper;
    if (d.kind != Kind::uniform) {  // unbounded: up to the model's positions
      const std::int64_t positions = load_catalog_entry(request.model).dim("max_positions");
      if (positions <= 0) {
        fail_at(scenario, key,
                request.model +
                    " states no largest sequence (max_positions): give a bounded "
                    "distribution ({uniform: ...} or {empirical: ...})");
      }
      upper = positions;
    }
    // A uniform one from its min; an unbounded one (its `value` is a median or a mean) from 1.
    const std::int64_t lower =
        d.kind == Kind::uniform ? std::max<std::int64_t>(1, d.value) : std::int64_t{1};
    if (upper - lower + 1 > kMaxCatalogLengths) {
      fail_at(scenario, key,
              std::to_string(upper - lower + 1) + " distinct lengths (" + std::to_string(lower) +
                  " to " + std::to_string(upper) + "); at most " +
                  std::to_string(kMaxCatalogLengths) +
                  " (each is built): narrow the range or give {empirical: ...} points");
    }
    for (std::int64_t l = lower; l <= upper; ++l) lengths.push_back(l);
  }
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  return lengths;
}

}  // namespace

std::int64_t catalog_length_count(const Scenario& scenario, const TenantSpec& tenant) {
  return tenant.workload.catalog
             ? static_cast<std::int64_t>(catalog_lengths(scenario, tenant).size())
             : 0;
}

void check_catalog_length_budget(const Scenario& scenario) {
  // 40 replicas of BERT-base over 1..512 took 17 s and 3.8 GB to validate (about 0.2 MB and 1 ms
  // per length); 1000 of them would exhaust the memory; a plan of 10 failed after 103 s.
  if (scenario.allow_large) return;
  std::int64_t lengths = 0;
  for (const TenantSpec& tenant : scenario.tenants) {
    const std::int64_t own = catalog_length_count(scenario, tenant);
    lengths += own;
    if (own > 0 && lengths > kMaxCatalogLengths) {
      fail_at(scenario, tenant.where.key_path + ".workload.seq_len",
              "the catalog tenants' seq_len distributions span " + std::to_string(lengths) +
                  " lengths so far (this one " + std::to_string(own) +
                  ", each replica its own); at most " + std::to_string(kMaxCatalogLengths) +
                  " in all are built (about 0.2 MB and 1 ms each): narrow the ranges, give "
                  "{empirical: ...} points, or set allow_large: true to build them anyway");
    }
  }
}

void apply_catalog(const Scenario& scenario, TenantSpec& tenant, const DeviceProfile& gpu,
                   int library_sms, double device_l2) {
  CatalogRequestSpec& request = *tenant.workload.catalog;
  WorkloadSpec& w = tenant.workload;
  const auto build = [&](const CatalogRequestSpec& r) {
    return build_catalog_workload(scenario, r, tenant.where.key_path, gpu,
                                  static_cast<int>(tenant.devices.size()), w.cuda_graph,
                                  library_sms, device_l2);
  };
  // A seq_len distribution: the kernels at every length it can draw; `kernels` (estimates,
  // inspect) at the length nearest its mean, the activations at the largest.
  w.length_values = catalog_lengths(scenario, tenant);
  w.kernels_by_length.clear();
  std::int64_t largest_activations = 0;
  std::size_t nearest_mean = 0;
  for (std::size_t i = 0; i < w.length_values.size(); ++i) {
    CatalogRequestSpec at = request;
    at.seq_len = static_cast<int>(w.length_values[i]);
    CatalogWorkload variant = build(at);
    largest_activations = std::max(largest_activations, variant.memory_per_request);
    w.kernels_by_length.push_back(std::move(variant.kernels));
    const double mean = request.seq_len_distribution.mean();
    if (std::abs(static_cast<double>(w.length_values[i]) - mean) <
        std::abs(static_cast<double>(w.length_values[nearest_mean]) - mean)) {
      nearest_mean = i;
    }
  }
  CatalogRequestSpec chosen = request;
  if (!w.length_values.empty()) {
    chosen.seq_len = static_cast<int>(w.length_values[nearest_mean]);
    request.seq_len = chosen.seq_len;  // the length `kernels` are at (inspect)
  }
  CatalogWorkload built = build(chosen);
  request.front_end_time = built.front_end_time;  // (inspect)
  if (!w.length_values.empty()) built.memory_per_request = largest_activations;
  w.kernels = std::move(built.kernels);
  KernelOrigins origin;
  origin.duration = origin.sm_fraction = origin.memory_bound = origin.busy_share = origin.waves =
      origin.working_set = origin.repeat = ParamOrigin::catalog;
  w.kernel_origins.assign(w.kernels.size(), origin);
  for (std::size_t i = 0; i < w.kernel_origins.size() && i < built.details.size(); ++i) {
    w.kernel_origins[i].detail = built.details[i];
  }
  request.runtime = built.runtime;
  request.runtime_from_user = built.runtime_from_user;
  w.host_gap = built.host_gap;
  w.host_gap_origin = request.host.per_op ? ParamOrigin::user : ParamOrigin::catalog;
  // Origins, not locations: scenarios built in code (gpumux plan's candidates) have none.
  if (tenant.memory_origin == ParamOrigin::user ||
      scenario.locations.count(tenant.where.key_path + ".memory")) {
    tenant.memory_origin = ParamOrigin::user;
  } else {
    tenant.memory = built.memory;
    tenant.memory_origin = ParamOrigin::catalog;
  }
  if (w.memory_per_request_origin != ParamOrigin::user) {
    w.memory_per_request = built.memory_per_request;
    w.memory_per_request_origin = ParamOrigin::catalog;
  }
}

Scenario with_catalog_kernels(Scenario scenario, const DeviceProfile& gpu) {
  check_catalog_length_budget(scenario);
  for (TenantSpec& tenant : scenario.tenants) {
    if (tenant.workload.catalog) apply_catalog(scenario, tenant, gpu);
  }
  return scenario;
}

}  // namespace gpumux
