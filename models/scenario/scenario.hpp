#pragma once
// The typed, validated scenario: what a YAML scenario file (docs/reference/scenarios.md; every
// key in tests/data/scenarios/full.yaml) becomes before anything is simulated. Units are already
// resolved: durations are integer nanoseconds, sizes bytes, rates per second. No text parsing
// happens past this point.
//
// Lifecycle: load_scenario_file() / load_scenario_text() (loader.hpp) parse and check syntax,
// units and schema and fill the defaults that need no device knowledge; resolve_scenario()
// (resolve.hpp) then checks the scenario against the device profiles (models exist, MIG layouts
// fit, tenants reference real devices, capacities) and fills the profile-derived defaults
// (timeslice, context switch, ...). What each tenant runs (WorkloadSpec, KernelSpec) is
// models/workload/workload_spec.hpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/gpu/kernel_run.hpp"
#include "models/strategies/sharing_spec.hpp"
#include "models/workload/workload_spec.hpp"
#include "sim/core/statistics.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

// Stated maxima of the counts that multiply work or memory before anything is simulated
// (issue 13: `count: 1000000000` exhausted memory inside `validate`). Each is far beyond any
// real use and small enough that the expanded scenario fits in memory at once.
/// gpus[].count: GPUs per entry (a node has 8-16; 4096 is a large cluster).
inline constexpr int kMaxGpuCount = 4096;
/// The most a GPU may cost per hour (a scenario's gpus.cost_per_hour, plan.gpus.cost_per_hour),
/// in any currency: the cluster pools' bound per node-hour (cluster_loader_nodes.cpp).
/// assumption: far above any cloud price (an 8-GPU node is ~$100/h), and low enough that a
/// plan's summed cost stays finite (1e308 overflowed it to infinity).
inline constexpr double kMaxGpuCostPerHour = 1e8;
/// tenants[].replicas: copies of one tenant (each is a full tenant with its own state).
inline constexpr int kMaxTenantReplicas = 100'000;

struct GpuSpec {
  std::string name;   ///< as written; after expansion of count>1: name-0 .. name-(count-1)
  std::string model;  ///< device profile name (calibration/profiles/NAME.yaml) or a path
  int count = 1;      ///< as written (the expanded list has one entry per device)
  std::vector<std::string> mig;  ///< MIG profile names in instance order, empty = no MIG
  std::string mig_layout_name;   ///< set when `mig:` named a layout (e.g. all-balanced)
  SharingSpec sharing;
  double cost_per_hour = 0.0;  ///< optional price of this GPU (currency/hour) for cost reports
  /// `power:`: `none`, or values replacing the profile's power terms (models/gpu/power.hpp).
  PowerOverrides power;
  SourceLocation where;  ///< location of this gpus[] entry
};

/// Targets on the quantiles of one per-request measure (unset = no target).
struct SloQuantiles {
  std::optional<Nanos> p50, p90, p99, p999;
  bool any() const { return p50 || p90 || p99 || p999; }
};

/// A tenant's `slo:` block: latency targets (`p50`..`p999`, the inherited fields), and for LLM
/// tenants `ttft: {p99: ...}` (time to first token) and `tpot: {p99: ...}` (time per output
/// token). Verdicts: models/run/slo.hpp.
struct SloSpec : SloQuantiles {
  SloQuantiles ttft, tpot;
  bool any() const { return SloQuantiles::any() || ttft.any() || tpot.any(); }
};

/// What a tenant may not share (`isolation:` memory | fault | none, or a list): `gpumux plan`
/// honours it; `run` ignores it (the placement is the scenario's).
struct IsolationSpec {
  bool memory =
      false;  ///< no neighbour may take its memory: MIG, dedicated, or MPS with pinned limits
  bool fault = false;  ///< no neighbour's fault may kill it: no shared MPS server
  bool any() const { return memory || fault; }
};

struct TenantSpec {
  std::string name;    ///< after expansion of replicas>1: name-0 .. name-(n-1)
  std::string device;  ///< "GPU" or "GPU/INSTANCE" (MIG instance index in `mig:` order); the
                       ///< first of `devices`
  /// Every device the tenant runs on: one, or a list for a data-parallel tenant (`device:
  /// [gpu0-0, gpu0-1]`, one replica of each request per device, kernels marked `collective`
  /// synchronise them). Always non-empty after loading.
  std::vector<std::string> devices;
  int replicas = 1;                                   ///< as written
  std::int64_t memory = 0;                            ///< bytes allocated at start
  ParamOrigin memory_origin = ParamOrigin::fallback;  ///< inspect: where `memory` came from
  int gpus = 1;  ///< GPUs the tenant asks for (time-slicing rejects > 1); = devices
  WorkloadSpec workload;
  SloSpec slo;
  IsolationSpec isolation;   ///< `isolation:` (plan constraint)
  bool best_effort = false;  ///< `best_effort: true`: `gpumux plan` places it without an SLO
  /// `active: {from, until}`: the tenant starts at `active_from` (its memory allocated, its
  /// first arrival drawn from then; a trace's times and a constant rate's grid are shifted to
  /// start there) and takes no arrival at or after `active_until` (unset = the scenario's
  /// `duration`), when its start-up memory is freed; requests already queued or running drain
  /// (a pod's graceful termination). Defaults: the whole run. Used by cluster replays for pods
  /// that start and end inside the run.
  Nanos active_from = 0;
  std::optional<Nanos> active_until;
  SourceLocation where;
};

/// One GPU model `gpumux plan` may buy (`plan.gpus[]`).
struct PlanGpuSpec {
  std::string model;           ///< device profile name or nvidia-smi name
  double cost_per_hour = 0.0;  ///< price of one GPU per hour
  std::string currency = "USD";
  SourceLocation where;
};

/// The search space of `gpumux plan` (`plan:` in a scenario). A scenario with `plan:` may leave
/// out `gpus:` and the tenants' `device:`.
struct PlanSpec {
  std::vector<PlanGpuSpec> gpus;  ///< GPU models with prices (non-empty)
  int max_gpus = 8;               ///< at most this many GPUs in a setup
  /// Strategy families searched: dedicated, mig, time-slicing, mps, mig+time-slicing, mig+mps.
  std::vector<std::string> strategies;
  /// Required margin below every SLO target, a fraction: 0.1 = each percentile at most 90 % of
  /// its target.
  double headroom = 0.0;
  /// `shared_tenant_memory`: the largest fraction of a device's memory a tenant may hold and
  /// still share that device, time-sliced or under MPS without pinned limits, with a tenant that
  /// has SLOs (the guide's anti-pattern: a memory-hungry job beside latency-bound services,
  /// whose growth or leak takes the memory they need). 1 = no limit. assumption: 0.25, a
  /// quarter of the GPU (or MIG instance): above it a tenant is placed alone, in its own MIG
  /// instance, beside best-effort tenants only, or under pinned MPS limits.
  double shared_tenant_memory = 0.25;
  /// `max_duration`: the longest window a setup is simulated over (duration included). A unit
  /// whose SLO verdict is inconclusive (models/plan/slo_check.hpp) is simulated again with the
  /// measured window doubled until every verdict is conclusive or the next doubling would pass
  /// this; unset = 16 x duration (four doublings).
  std::optional<Nanos> max_duration;
  /// `platform:` what runs the GPUs, which bounds the search (docs/plan.md, "Platforms"):
  /// bare (GPUs priced one by one, every family), gke (GKE node pools: one partition size and
  /// one sharing strategy per pool, no MPS inside MIG), device-plugin (Kubernetes with the NVIDIA
  /// device plugin: no MPS inside MIG), mig-parted (hosts partitioned by nvidia-mig-parted,
  /// MPS inside MIG allowed). Every platform but bare buys nodes of machine types.
  std::string platform = "bare";
  /// `machines:` machine types to buy nodes of (models/plan/machine_types.hpp); empty = every
  /// catalog machine type of a model in `gpus`.
  std::vector<std::string> machines;
  /// `prices:` a price table file (models/plan/machine_types.hpp: machine types, host prices,
  /// region, date), resolved against the scenario's directory; empty = the built-in table.
  std::string prices;
  SourceLocation where;
  SourceLocation platform_where, machines_where, prices_where;
};

enum class FaultKind { fatal };

struct FaultSpec {
  std::string tenant;
  Nanos at = 0;
  FaultKind kind = FaultKind::fatal;
  std::optional<Nanos> recovery;  ///< affected clients restart after this long; unset = never
  SourceLocation where;
};

/// The most samples one device's utilization timeseries keeps (RunOptions can lower it): when a
/// series reaches it, neighbouring samples are merged pairwise and the period doubles
/// (docs/metrics.md). 1e6 samples are 32 MB per device (plus 16 MB of integrals); a day at the
/// default 100 ms period is 864,000.
inline constexpr std::size_t kMaxSamplesPerSeries = 1'000'000;

struct OutputSpec {
  Nanos sample = 100'000'000;  ///< timeseries sampling period (default 100 ms)
  bool kernels = false;        ///< write /kernels
  /// `percentiles: exact | sketch | auto`: how per-tenant latency, queueing, TTFT and TPOT
  /// percentiles are computed (sim/core/statistics.hpp: PercentileMethod; docs/metrics.md).
  /// Default auto: exact up to 2^20 samples per series, then a sketch (relative error 1/256).
  PercentileMethod percentiles = PercentileMethod::automatic;
  /// `confidence: 0.95`: the level of every percentile's confidence interval and so of the SLO
  /// verdicts (met / missed / inconclusive; sim/core/quantile_interval.hpp, docs/metrics.md).
  double confidence = kDefaultConfidence;
};

struct Scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  Nanos duration = 0;  ///< arrivals stop here; in-flight work then drains
  Nanos warmup = 0;    ///< requests arriving earlier are excluded from statistics
  /// `allow_large: true`: skip the work budget (work_estimate.hpp) that refuses scenarios whose
  /// estimated requests, kernel launches or timeseries samples exceed what runs in minutes.
  bool allow_large = false;
  /// `contention_law: NAME`: the contention law every device runs (models/gpu/contention_law.hpp;
  /// docs/strategies.md, "Contention laws"); "" = the default, "residency".
  std::string contention_law;
  std::vector<GpuSpec> gpus;        ///< expanded: one entry per physical GPU
  std::vector<TenantSpec> tenants;  ///< expanded: one entry per tenant replica
  std::vector<FaultSpec> faults;
  OutputSpec output;
  std::optional<PlanSpec> plan;  ///< `plan:` (gpumux plan); gpus/devices optional when set
  /// The file has a `cluster:` section (issue 8), read by models/cluster/cluster_loader.hpp, not
  /// here; duration, gpus and tenants are then optional (and usually absent).
  bool has_cluster = false;

  std::string source_file;  ///< path it was loaded from ("" for an in-memory document)
  /// Where each key of the document was written, by dotted key path ("tenants.1.memory"),
  /// so later checks can report file:line:column.
  std::map<std::string, SourceLocation> locations;

  /// The location of a key path, or of its nearest written ancestor, or just the file.
  SourceLocation locate(const std::string& key_path) const;
};

}  // namespace gpumux
