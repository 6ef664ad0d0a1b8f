#include "models/scenario/resolve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "models/config/mig_names.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/contention_law.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/scenario/kernel_trace.hpp"
#include "models/workload/engine_cpu.hpp"
#include "models/workload/kernel_trace_model.hpp"
#include "models/workload/llm_card.hpp"
#include "sim/util/units.hpp"
#include "models/scenario/work_estimate.hpp"
#include "models/strategies/strategy.hpp"

namespace gpumux {
namespace {

std::string base_dir_of(const Scenario& scenario) {
  if (scenario.source_file.empty()) return "";
  return std::filesystem::path(scenario.source_file).parent_path().string();
}

// The smallest real grid is one thread block, which occupies one SM: a kernel's one wave spans
// f x S_gpu >= 1 SM on every GPU it runs on (S_gpu: the SMs of that whole GPU). A narrower
// `sm_fraction` is no grid at all; the residency law would never grant it a block (it would never
// run). Kernel traces cannot be narrower: their conversion keeps at least one block.
void check_grid_widths(const Scenario& scenario, const TenantSpec& tenant,
                       const std::vector<int>& devices, const ResolvedScenario& out) {
  for (const int d : devices) {
    const DeviceProfile& gpu =
        *out.gpu_profiles[static_cast<std::size_t>(out.devices[static_cast<std::size_t>(d)].gpu)];
    for (std::size_t k = 0; k < tenant.workload.kernels.size(); ++k) {
      const double f = tenant.workload.kernels[k].sm_fraction;
      if (f * gpu.sms >= 1.0 - 1e-9) continue;
      std::ostringstream message;
      message << "sm_fraction " << f << " is " << f * gpu.sms << " of the " << gpu.sms << " SMs of "
              << gpu.name << ": a grid is at least one thread block on one SM, so sm_fraction >= 1/"
              << gpu.sms << " = " << 1.0 / gpu.sms;
      throw InputError(scenario.locate(tenant.where.key_path + ".workload.request.kernels." +
                                       std::to_string(k) + ".sm_fraction"),
                       message.str());
    }
  }
}

}  // namespace

// `block:` without `blocks_per_sm:`: the occupancy calculator's blocks per SM of the footprint on
// the tenant's GPU (contention law 1c's fit with nothing else resident).
static void derive_blocks_per_sm(const Scenario& scenario, TenantSpec& tenant,
                                 const DeviceProfile& gpu) {
  for (std::size_t i = 0; i < tenant.workload.kernels.size(); ++i) {
    KernelSpec& k = tenant.workload.kernels[i];
    if (!k.derive_blocks_per_sm) continue;
    const std::string key =
        tenant.where.key_path + ".workload.request.kernels." + std::to_string(i) + ".block";
    if (!gpu.sm_limits.known()) {
      throw InputError(scenario.locate(key), "the " + gpu.name +
                                                 " profile has no sm_limits: give blocks_per_sm "
                                                 "beside block");
    }
    const int fit = contention::blocks_fitting(gpu.sm_limits, contention::SmUse{}, k.block);
    if (fit < 1) {
      throw InputError(scenario.locate(key),
                       "one block of " + std::to_string(k.block.threads) + " threads, " +
                           std::to_string(k.block.registers) + " registers per thread and " +
                           std::to_string(k.block.shared_memory) +
                           " B of shared memory does not fit an SM of " + gpu.name);
    }
    k.blocks_per_sm = fit;
  }
}

// `request: {kernel_trace: ...}`: reads the trace (once per file), converts the selected kernels
// for the tenant's GPU model (rescaled when it was recorded on another), and takes the tenant's
// memory from the trace's allocations when the scenario does not set `memory:`.
static void replay_kernel_trace(const Scenario& scenario, TenantSpec& tenant,
                                const DeviceProfile& target, const std::string& base_dir,
                                std::map<std::string, KernelTrace>& cache) {
  const KernelTraceSpec& spec = *tenant.workload.kernel_trace;
  auto found = cache.find(spec.path);
  if (found == cache.end()) {
    found = cache.emplace(spec.path, read_kernel_trace(spec.path, spec.format)).first;
  }
  const DeviceProfile* recorded = &target;
  if (!spec.recorded_on.empty()) {
    SourceLocation where = spec.where;
    where.key_path = tenant.where.key_path + ".workload.request.recorded_on";
    where = scenario.locate(where.key_path);
    try {
      recorded = &load_device_profile(spec.recorded_on, base_dir);
    } catch (const InputError& e) {
      throw InputError(where, e.what());
    }
  }
  std::map<std::string, NcuMetrics> ncu;
  if (!spec.ncu_path.empty()) ncu = read_ncu_metrics(spec.ncu_path);
  KernelTraceSelect select;
  select.stream = spec.stream;
  select.device = spec.device;
  select.window_start = spec.window_start;
  select.window_end = spec.window_end;
  ConvertedTrace converted = convert_kernel_trace(found->second, select, *recorded, target,
                                                  spec.ncu_path.empty() ? nullptr : &ncu);
  tenant.workload.kernels = std::move(converted.kernels);
  tenant.workload.kernel_origins = std::move(converted.origins);
  if (converted.peak_memory && tenant.memory_origin != ParamOrigin::user) {
    tenant.memory = *converted.peak_memory;
    tenant.memory_origin = ParamOrigin::trace;
  }
}

// The most tokens a synthetic request can have of D: a fixed count, a uniform one's upper
// bound, an empirical one's largest point, an unbounded distribution's mean (its tail is not
// checked).
static double largest_tokens(const DurationDistribution& d) {
  if (d.kind == DurationDistribution::Kind::fixed) return static_cast<double>(d.value);
  if (d.kind == DurationDistribution::Kind::uniform ||
      d.kind == DurationDistribution::Kind::empirical) {
    return static_cast<double>(d.upper);
  }
  return d.mean();
}

// `tokens:` of an LLM tenant: at least one token per request, and input + output within the
// model's positions (when the card gives them).
static void check_llm_tokens(const Scenario& scenario, const TenantSpec& tenant,
                             const LlmCard& card) {
  const WorkloadSpec& w = tenant.workload;
  if (!w.has_tokens) return;
  const std::string path = tenant.where.key_path + ".workload.tokens";
  const double longest = largest_tokens(w.input_tokens) + largest_tokens(w.output_tokens);
  if (!(longest >= 1)) {
    throw InputError(scenario.locate(path),
                     "a request of an LLM needs at least one token (input + output >= 1)");
  }
  const std::int64_t positions = llm_card_positions(card);
  if (positions > 0 && longest > static_cast<double>(positions)) {
    throw InputError(
        scenario.locate(scenario.locations.count(path + ".input") ? path + ".input" : path),
        fmt::format("{} input + output tokens per request exceed {}'s {} positions "
                    "(its context length)",
                    longest, card.model, positions));
  }
}

// `workload: {llm: ...}`: the card's kernels on the tenant's GPU model, its KV bytes per token
// as memory_per_token and, unless `memory:` is written, the weights and activation reserve as
// the tenant's memory (llm_card.hpp).
static void serve_llm_card(const Scenario& scenario, TenantSpec& tenant, const DeviceProfile& gpu,
                           std::int64_t device_memory, const std::string& device_name) {
  WorkloadSpec& w = tenant.workload;
  LlmCard& card = *w.llm;
  if (card.tp != static_cast<int>(tenant.devices.size())) {
    throw InputError(scenario.locate(tenant.where.key_path + ".workload.llm.tp"),
                     "tp " + std::to_string(card.tp) + " needs the tenant on " +
                         std::to_string(card.tp) + " GPUs (device: [...]), it has " +
                         std::to_string(tenant.devices.size()));
  }
  const std::string llm_path = tenant.where.key_path + ".workload.llm";
  card.where = scenario.locate(llm_path);
  // Every number the card's arithmetic takes, named by the key the user wrote (a catalog
  // card's own are in range).
  check_llm_card(card, [&](const std::string& key) {
    const std::string path = llm_path + "." + key;
    return scenario.locations.count(path) ? scenario.locate(path) : card.where;
  });
  check_llm_tokens(scenario, tenant, card);
  w.kernels = llm_kernels(card, catalog_timing_profile(scenario, gpu));
  KernelOrigins origin;  // every kernel parameter from the card's roofline (docs/llm-serving.md)
  origin.duration = origin.sm_fraction = origin.memory_bound = origin.busy_share = origin.waves =
      origin.working_set = origin.repeat = ParamOrigin::catalog;
  w.kernel_origins.assign(w.kernels.size(), origin);
  w.memory_per_token = llm_kv_bytes_per_token(card);
  w.attention_window = card.sliding_window;  // 0: full attention
  const std::int64_t tokens =
      w.max_tokens_in_batch > 0 ? w.max_tokens_in_batch
      : w.scheduler == BatchScheduler::sarathi
          ? w.chunk_size
          : std::max<std::int64_t>(2048, std::llround(w.input_tokens.mean()));
  const std::int64_t reserve = llm_activation_reserve(card, tokens, w.max_batch);
  const std::int64_t weights = llm_weight_bytes(card);
  if (weights + reserve > device_memory) {
    throw InputError(card.where, "the weights (" + units::format_size(weights) + " per GPU at tp " +
                                     std::to_string(card.tp) + ") and activation reserve (" +
                                     units::format_size(reserve) + ") do not fit " + device_name +
                                     "'s " + units::format_size(device_memory) +
                                     ": raise tp or use a smaller dtype");
  }
  if (scenario.locations.count(tenant.where.key_path + ".memory")) {
    tenant.memory_origin = ParamOrigin::user;
  } else {
    tenant.memory = weights + reserve;
    tenant.memory_origin = ParamOrigin::catalog;
  }
}

// The tenant's host CPU (models/gpu/host_cpu.hpp): its `host: {cpu_speed: ...}`, else the
// profile of its first GPU. Idempotent.
static void resolve_host_cpu(TenantSpec& tenant, const DeviceProfile& gpu) {
  WorkloadSpec& w = tenant.workload;
  if (w.host_cpu_origin == ParamOrigin::user) return;
  w.host_cpu = gpu.host_cpu;
  w.host_cpu_speed = gpu.host_cpu_speed;
}

// A batched tenant's engine CPU time (models/workload/engine_cpu.hpp): a named engine's numbers
// at the tenant's tensor-parallel degree (its card's tp, else its GPUs), fitted on the reference
// host, scaled to the tenant's host CPU (t / s, host_cpu.hpp); none unless the tenant names
// one; the user's own terms as given. Idempotent.
static void resolve_engine_cpu(TenantSpec& tenant, int gpus) {
  WorkloadSpec& w = tenant.workload;
  if (w.max_batch == 0) return;
  EngineCpu& e = w.engine_cpu;
  const int tp = w.llm ? w.llm->tp : gpus;
  if (e.origin == ParamOrigin::user && e.name != "custom") {
    e = named_engine_cpu(e.name, tp);
    e.per_iteration = host_cpu_time(e.per_iteration, 1.0, w.host_cpu_speed);
    e.per_sequence = host_cpu_time(e.per_sequence, 1.0, w.host_cpu_speed);
    e.origin = ParamOrigin::user;
  }
}

ResolvedScenario resolve_scenario(Scenario scenario) {
  if (scenario.has_cluster && scenario.gpus.empty() && scenario.tenants.empty()) {
    // Only the `cluster:` section: models/cluster replays it (the front end routes it there).
    throw InputError(scenario.locate("cluster"),
                     "this scenario has a cluster: section and no gpus or tenants: it is replayed "
                     "as a cluster (gpumux run), not resolved as GPUs and tenants");
  }
  ResolvedScenario out;
  const std::string base_dir = base_dir_of(scenario);
  const ContentionLaw* named_law = contention_law_or_default(scenario.contention_law);
  if (named_law == nullptr) {
    throw InputError(scenario.locate("contention_law"),
                     "unknown contention law '" + scenario.contention_law + "'");
  }
  const ContentionLaw& law = *named_law;
  std::map<std::string, int> device_by_name;
  std::map<std::string, int> mig_gpu_by_name;      // GPUs that have MIG instances
  std::map<std::string, KernelTrace> trace_cache;  // kernel traces by path (replicas share one)
  std::map<std::size_t, int> compute_slices;       // of each MIG instance, by device index

  for (std::size_t g = 0; g < scenario.gpus.size(); ++g) {
    GpuSpec& gpu = scenario.gpus[g];
    const std::string key = gpu.where.key_path;
    const DeviceProfile* profile = nullptr;
    try {
      profile = &load_device_profile(gpu.model, base_dir);
    } catch (const InputError& e) {
      throw InputError(scenario.locate(key + ".model"), e.what());
    }
    out.gpu_profiles.push_back(profile);
    // The scenario's power terms over the profile's: an idle draw at or above the TDP leaves the
    // cap law no room (every kernel at the base clock, silently); the profile loader refuses it
    // in a profile alone.
    if (const PowerParams power = gpu.power.apply(profile->power);
        gpu.power.any() && power.tdp_w > 0 && power.idle_w >= power.tdp_w) {
      std::ostringstream message;
      message << "the board's idle draw " << power.idle_w << "W reaches its tdp " << power.tdp_w
              << "W: it could not run (tdp must exceed idle)";
      throw InputError(scenario.locate(key + ".power"), message.str());
    }
    const std::vector<std::string> defaults =
        gpu.sharing.strategy().fill_defaults(gpu.sharing.params(), gpu.sharing.replicas, *profile);

    std::vector<std::string> layout = gpu.mig;
    if (!gpu.mig_layout_name.empty()) {
      try {
        layout = expand_mig_layout(*profile, {gpu.mig_layout_name});
      } catch (const InputError& e) {
        throw InputError(scenario.locate(key + ".mig"), e.what());
      }
    }
    if (layout.empty()) {
      ResolvedDevice device;
      device.geometry = make_geometry(gpu.name, profile->name, *profile, profile->sms, 1.0,
                                      profile->memory, 1.0, law);
      device.sharing = gpu.sharing;
      device.gpu = static_cast<int>(g);
      device.cost_per_hour = gpu.cost_per_hour;
      device.profile_defaults = defaults;
      device_by_name[gpu.name] = static_cast<int>(out.devices.size());
      out.devices.push_back(device);
      continue;
    }
    if (profile->mig_profiles.empty()) {
      throw InputError(scenario.locate(key + ".mig"), profile->name + " does not support MIG");
    }
    const MigFitResult fit = fit_mig_layout(*profile, layout);
    if (!fit.fits) {
      throw InputError(scenario.locate(key + ".mig"),
                       "MIG layout does not fit " + profile->name + ": " + fit.reason);
    }
    gpu.mig = layout;
    mig_gpu_by_name[gpu.name] = static_cast<int>(g);
    for (const MigInstancePlacement& placement : fit.placements) {
      const MigProfileSpec& mig = *placement.profile;
      ResolvedDevice device;
      const double slice_fraction =
          static_cast<double>(mig.memory_slices) / std::max(1, profile->memory_slices);
      // The instance's share of the GPU for cost: its GPU slices (the `Ng` of the profile) of
      // the GPU's compute slices, 2/7 for 2g.20gb on an A100 -- the rule of the cluster layer
      // (docs/cluster.md, "Cost shares of MIG instances").
      const double cost_fraction = mig_cost_fraction(mig.compute_slices, profile->compute_slices);
      device.geometry =
          make_geometry(gpu.name + "/" + std::to_string(placement.index), mig.name, *profile,
                        mig.sms, slice_fraction, mig.memory, cost_fraction, law);
      device.sharing = gpu.sharing;
      compute_slices[out.devices.size()] = mig.compute_slices;
      device.gpu = static_cast<int>(g);
      device.profile_defaults = defaults;
      device.mig_instance = placement.index;
      device.cost_per_hour = gpu.cost_per_hour * cost_fraction;
      device_by_name[device.geometry.name] = static_cast<int>(out.devices.size());
      out.devices.push_back(device);
    }
  }

  // Each seq_len distribution's lengths are built and kept per tenant: their sum is bounded.
  check_catalog_length_budget(scenario);
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    const TenantSpec& tenant = scenario.tenants[t];
    const SourceLocation where = scenario.locate(tenant.where.key_path + ".device");
    if (tenant.devices.empty() && tenant.device.empty()) {
      throw InputError(scenario.locate(tenant.where.key_path),
                       "tenant '" + tenant.name +
                           "' has no device: this is a planning scenario (plan:); run `gpumux "
                           "plan FILE -o best.yaml`, then `gpumux run best.yaml`");
    }
    const std::vector<std::string> names =
        tenant.devices.empty() ? std::vector<std::string>{tenant.device} : tenant.devices;
    std::vector<int> indices;
    for (const std::string& name : names) {
      const auto found = device_by_name.find(name);
      if (found == device_by_name.end()) {
        if (mig_gpu_by_name.count(name)) {
          throw InputError(
              where,
              "'" + name + "' is partitioned with MIG: name an instance, e.g. '" + name + "/0'");
        }
        std::string known;
        for (const auto& [n, index] : device_by_name) known += (known.empty() ? "" : ", ") + n;
        throw InputError(where, "no device '" + name + "' (devices: " + known + ")");
      }
      ResolvedDevice& device = out.devices[static_cast<std::size_t>(found->second)];
      if (names.size() > 1 && device.mig_instance >= 0) {
        // MIG User Guide, "Application Considerations": "NCCL is currently not supported with
        // MIG", "CUDA IPC across GPU instances is not supported", and (R570+) "Only P2P between
        // MIG instances on the same GPU is supported": a data-parallel job's collectives have no
        // GPU path between instances. gpumux refuses rather than modelling host-staged copies
        // (docs/strategies.md, "Data-parallel tenants and MIG").
        throw InputError(where, "tenant '" + tenant.name + "' is data-parallel over " +
                                    std::to_string(names.size()) + " devices but '" + name +
                                    "' is a MIG instance: NCCL does not support MIG and MIG "
                                    "instances have no GPU peer-to-peer path between processes "
                                    "(MIG User Guide); give each replica a whole GPU");
      }
      const std::string refused = device.sharing.strategy().multi_gpu_error(tenant.gpus);
      if (!refused.empty()) {
        std::string message = "tenant '";
        message += tenant.name;
        message += "' ";
        message += refused;
        throw InputError(scenario.locate(tenant.where.key_path + ".gpus"), message);
      }
      device.tenants.push_back(static_cast<int>(t));
      indices.push_back(found->second);
    }
    if (tenant.gpus > static_cast<int>(indices.size())) {
      throw InputError(scenario.locate(tenant.where.key_path + ".gpus"),
                       "tenant '" + tenant.name + "' asks for " + std::to_string(tenant.gpus) +
                           " GPUs: list them, e.g. device: [gpu0-0, gpu0-1]");
    }
    out.tenant_device.push_back(indices.front());
    out.tenant_devices.push_back(indices);
    if (scenario.locations.count(tenant.where.key_path + ".memory")) {
      scenario.tenants[t].memory_origin = ParamOrigin::user;
    }
    resolve_host_cpu(scenario.tenants[t],
                     *out.gpu_profiles[static_cast<std::size_t>(
                         out.devices[static_cast<std::size_t>(indices.front())].gpu)]);
    if (tenant.workload.kernel_trace || tenant.workload.catalog) {
      const DeviceProfile& target = *out.gpu_profiles[static_cast<std::size_t>(
          out.devices[static_cast<std::size_t>(indices.front())].gpu)];
      if (tenant.workload.kernel_trace) {
        replay_kernel_trace(scenario, scenario.tenants[t], target, base_dir, trace_cache);
      } else {
        // The library's heuristics see the device's SMs, its kernels the device's L2 (a MIG
        // instance's own).
        const ResolvedDevice& device = out.devices[static_cast<std::size_t>(indices.front())];
        apply_catalog(scenario, scenario.tenants[t], target, device.geometry.sms,
                      device.geometry.l2_bytes);
      }
    }
    if (tenant.workload.llm) {
      const ResolvedDevice& device = out.devices[static_cast<std::size_t>(indices.front())];
      serve_llm_card(scenario, scenario.tenants[t],
                     *out.gpu_profiles[static_cast<std::size_t>(device.gpu)],
                     device.geometry.memory, device.geometry.name);
    }
    resolve_engine_cpu(scenario.tenants[t], static_cast<int>(indices.size()));
    derive_blocks_per_sm(scenario, scenario.tenants[t],
                         *out.gpu_profiles[static_cast<std::size_t>(
                             out.devices[static_cast<std::size_t>(indices.front())].gpu)]);
    check_grid_widths(scenario, scenario.tenants[t], indices, out);
    const ArrivalSpec& arrivals = tenant.workload.arrivals;
    out.traces.emplace_back();
    if (arrivals.process == ArrivalProcess::trace) {
      out.traces.back() =
          scan_trace(arrivals.trace_file, arrivals.trace_format, arrivals.time_scale);
    }
  }

  for (std::size_t d = 0; d < out.devices.size(); ++d) {
    ResolvedDevice& device = out.devices[d];
    const int count = static_cast<int>(device.tenants.size());
    const GpuSpec& gpu = scenario.gpus[static_cast<std::size_t>(device.gpu)];
    const SourceLocation where = scenario.locate(gpu.where.key_path + ".sharing");
    const Strategy& strategy = device.sharing.strategy();
    const std::string crowded = strategy.placement_error(device.geometry.name, count);
    if (!crowded.empty()) throw InputError(where, crowded);
    if (device.sharing.replicas > 0 && count > device.sharing.replicas) {
      throw InputError(scenario.locate(gpu.where.key_path + ".sharing.replicas"),
                       device.geometry.name + " allows " + std::to_string(device.sharing.replicas) +
                           " clients (replicas) but " + std::to_string(count) +
                           " tenants are placed on it");
    }
    DeviceFit fit;
    fit.memory = device.geometry.memory;
    fit.compute_slices = compute_slices[d];
    fit.gpu_compute_slices = out.gpu_profiles[static_cast<std::size_t>(device.gpu)]->compute_slices;
    fit.clients = count;
    fit.replicas = device.sharing.replicas;
    fit.profile_defaults = &device.profile_defaults;
    strategy.fit_device(device.sharing.params(), fit);
  }

  std::map<std::string, int> tenant_by_name;
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    tenant_by_name[scenario.tenants[t].name] = static_cast<int>(t);
  }
  for (const FaultSpec& fault : scenario.faults) {
    if (!tenant_by_name.count(fault.tenant)) {
      throw InputError(scenario.locate(fault.where.key_path + ".tenant"),
                       "no tenant '" + fault.tenant + "'");
    }
  }
  out.scenario = std::move(scenario);
  check_work_budget(out.scenario, out.traces);
  return out;
}

}  // namespace gpumux
