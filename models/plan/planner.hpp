#pragma once
// gpumux plan: the cheapest GPU setup in which every tenant meets its SLO (docs/plan.md).
//
// Input: a scenario whose tenants need no `device:` and a search space (`plan:` — GPU models
// with prices, max_gpus, strategy families, headroom). Output: ranked setups (the cheapest
// overall, then the cheapest of each strategy family), each a Scenario `gpumux run` reproduces.
//
// The space. A setup is a set partition of the tenants into at most max_gpus groups, one GPU
// per group, and per GPU a model and a configuration of one family:
//   dedicated          a group of one tenant on a whole GPU (the only choice for one tenant)
//   time-slicing       a group of >= 2 on a whole GPU, replicas = group size
//   mps                a group of >= 2 on a whole GPU: no limits, or replicas = group size
//                      (equal thread share, pinned memory limit = memory / size)
//   mig                >= 2 tenants, each alone in a MIG instance; any layout that fits
//   mig+time-slicing   the group split into blocks, one instance per block, time-sliced inside
//   mig+mps            the same with MPS inside: no limits, or replicas R (blocks <= R tenants)
// Layouts come from the placement checker (mig_layout.hpp): every multiset of profiles that
// fits, every assignment of blocks to them.
//
// The search. Tenants on different GPUs, or in different MIG instances, never interact (same
// seed, per-tenant random streams, isolated devices), so a setup is feasible iff each of its
// "units" (tenants, device, sharing mode) is, and a unit is simulated once (a one-GPU
// scenario) and cached. Before simulating, analytical necessary conditions prune a unit:
// memory (static memory within the device / pinned limit), the MPS client limit, isolation,
// sustainable load (the SLO tenants' SM-time and HBM-time per second of arrivals below the
// device's, derived from the residency and bandwidth laws of device.hpp), and a latency floor
// (every request takes at least its kernels alone on the device plus launch overheads, so a
// target below it cannot be met). The partition search is a lazy dynamic programme over tenant
// subsets: optimistic group costs (bounds only) until the cheapest partition consists of
// groups whose feasibility is proven by simulation; it stops there (the optimum is proven).
// Unknown units are simulated in batches on `jobs` threads, or by `batch_runner` (Dask).
// Cost: O(3^n max_gpus) per DP round for n tenants, plus the simulations.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/run/result.hpp"
#include "models/scenario/scenario.hpp"

namespace gpumux {

/// Up to this many tenants the search is exact (a DP over tenant subsets); above it, the
/// scalable search (docs/plan.md, "Many tenants").
inline constexpr int kPlanExactTenants = 10;

/// Runs scenarios (YAML text each) and returns each one's summary JSON text (summary_json), in
/// order. Lets Python spread the simulations over a Dask cluster.
using PlanBatchRunner = std::function<std::vector<std::string>(const std::vector<std::string>&)>;

struct PlanOptions {
  int jobs = 0;  ///< simulation threads; 0 = the machine's cores
  /// Brute force (tests): no bounds, no early stop; every configuration of every group is
  /// simulated as a whole GPU. Only for small instances.
  bool exhaustive = false;
  bool refine = true;  ///< at the optimum's cost, prefer configurations with more headroom
  /// Above this many tenants the scalable search runs instead of the exact one (tests lower it
  /// to compare the two on small instances); at most 20 (the exact search's 2^n tables).
  int exact_tenants = kPlanExactTenants;
  bool verify = true;  ///< simulate the winning setup whole (the numbers of the table)
  /// The search's shortcuts (docs/plan.md, "The window"; each keeps every answer): simulate a
  /// unit only while a candidate holding it is open, decide a unit by its tenants' alone units,
  /// continue a simulation when its window grows. Off only to compare answers with and without
  /// them (tests; the CLI's GPUMUX_PLAN_LAZY=0, GPUMUX_PLAN_DOMINANCE=0, GPUMUX_PLAN_CONTINUE=0,
  /// read once at start-up).
  bool lazy_windows = true, dominance = true, continue_windows = true;
  /// With more than one job, simulate units in `jobs` single-threaded worker processes forked
  /// before any simulation thread exists (docs/plan.md, "The window"): a continued window forks,
  /// and a fork of a multi-threaded process can copy a lock another thread holds. The same
  /// answer either way; false: threads (tests; the CLI's GPUMUX_PLAN_PROCESSES=0). Where the
  /// process already has other threads (or is not on Linux), threads.
  bool unit_processes = true;
  /// The futility rule (docs/plan.md, "Stopping a unit that cannot be met"): a unit whose
  /// verdict is inconclusive stops growing its window once the projection bounds the
  /// probability that a longer window up to plan.max_duration finds it met by
  /// kPlanFutilityProbability (models/plan/slo_check.hpp): infeasible, inconclusive at the
  /// bound, never ranked, as a unit whose ladder ended undecided.
  /// Off (the CLI's GPUMUX_PLAN_FUTILITY=0) to compare answers with and without it.
  bool futility = true;
  PlanBatchRunner batch_runner;  ///< unset = in-process threads
  /// Polled by every simulation and after each batch: once true, plan_scenario throws
  /// PlanInterrupted (the CLI's SIGINT/SIGTERM: nothing is written).
  const std::atomic<bool>* interrupt = nullptr;
  /// Called after each batch of simulations with the number simulated so far (the CLI's
  /// progress line on a terminal).
  std::function<void(std::uint64_t simulations)> progress;
};

/// The search stopped by PlanOptions::interrupt before it finished: no result.
class PlanInterrupted : public std::runtime_error {
 public:
  PlanInterrupted() : std::runtime_error("plan interrupted") {}
};

/// One tenant's outcome in a setup.
struct PlanTenantOutcome {
  std::string name;
  std::string device;  ///< "gpu0" or "gpu0/1"
  bool met = true;
  double worst_ratio = 0;  ///< max value / target over its SLO percentiles (0 without SLO)
  /// max CI upper bound / target over them (PlanSloVerdict::worst_bound_ratio): the printed
  /// headroom is 1 - this, what the interval leaves, not the point estimate
  double worst_bound_ratio = 0;
  std::string reason;  ///< first miss, e.g. "embed p99 11.6 ms > 10 ms"
  /// Its percentile closest to target with the samples behind it, e.g. "p99 4.2 ms / 10 ms
  /// (2991 samples, CI [4.0 ms, 4.5 ms])" (models/plan/slo_check.hpp).
  std::string worst;
  std::int64_t samples = 0;   ///< samples behind worst_ratio
  bool inconclusive = false;  ///< not met only because a verdict is inconclusive
};

/// One GPU of a setup.
struct PlanGpu {
  std::string name;  ///< its name in the setup's scenario ("gpu0", or "node0-gpu0" on nodes)
  std::string model;
  double cost_per_hour = 0;
  std::string family;  ///< dedicated | time-slicing | mps | mig | mig+time-slicing | mig+mps
  int replicas = 0;    ///< sharing.replicas (0 = none)
  /// Whole GPU: one block with every tenant. MIG: one block per instance, profile in `mig`.
  std::vector<std::vector<int>> blocks;
  std::vector<std::string> mig;
  std::string describe(const std::vector<TenantSpec>& tenants) const;
};

/// One node of a setup on a node platform (gke, device-plugin, mig-parted): a machine type with
/// one GPU configuration for all its GPUs (`gpus` indices into PlanSetup::gpus).
struct PlanNode {
  std::string name;     ///< "node0"
  std::string machine;  ///< machine type, e.g. "a3-highgpu-8g"
  std::string model;    ///< GPU model (device profile)
  double cost_per_hour = 0;
  std::string family;     ///< as PlanGpu::family
  std::string partition;  ///< MIG partition size ("" = whole GPUs)
  int instances = 0;      ///< MIG partitions per GPU (0 = whole GPUs)
  int clients = 0;        ///< max clients per device (time-sharing / MPS), 0 = exclusive
  std::vector<int> gpus;  ///< the node's GPUs in PlanSetup::gpus
  /// Tenants (indices) in the order their pods are created: the device plugin's placement law
  /// (models/cluster/scheduler.hpp: replicas go to the device with the most free slots, ties to
  /// the lowest index; exclusive devices in index order) then puts each on its planned device.
  std::vector<int> pod_order;
};

struct PlanSetup {
  std::string label;  ///< "best" or the family ("mig", ...)
  bool feasible = false;
  double cost_per_hour = 0;
  std::vector<PlanGpu> gpus;
  std::vector<PlanNode> nodes;  ///< node platforms only
  double worst_ratio = 0;       ///< max over SLO tenants (< 1 - headroom when feasible), from
                                ///< the per-GPU runs the ranking compared
  /// The winner only (verify): the same maximum from the whole setup simulated at once over
  /// the longest window its units needed; it may differ from worst_ratio (other windows, other
  /// samples) and is reported beside it, never ranked on.
  std::optional<double> verified_worst_ratio;
  int memory_isolated = 0, fault_isolated = 0, tenants = 0;
  std::string reason;  ///< why the family has no setup, or why its cheaper setups failed
  std::vector<PlanTenantOutcome> outcomes;
  Scenario scenario;  ///< the setup as a runnable scenario (gpus + devices, no plan:)
};

struct PlanStats {
  double setups = 0;            ///< size of the space (set partitions x per-GPU configurations)
  double setups_surviving = 0;  ///< setups none of whose units the bounds rule out
  std::int64_t units = 0;       ///< distinct (tenants, device, mode) units considered
  std::int64_t units_pruned = 0;
  std::int64_t simulations = 0;
  /// Of the simulations, those over a longer window because a verdict was inconclusive.
  std::int64_t longer_windows = 0;
  /// Units left unranked because a verdict was still inconclusive at plan.max_duration (a
  /// longer bound could find them feasible: the answer may then be cheaper).
  std::int64_t inconclusive_at_bound = 0;
  /// Of those, the units the futility rule stopped early (projected not to be met there).
  std::int64_t projected_at_bound = 0;
  /// Batches the simulations ran in, one after the other (each batch's simulations at once, on
  /// `jobs` threads or a Dask client's workers): the search's critical path, in simulations.
  std::int64_t batches = 0;
  int dp_rounds = 0;
  int jobs = 1;
  /// The unit worker processes the simulations ran in (PlanOptions::unit_processes; 0: threads).
  /// Not in the JSON (how the work ran, not what it found).
  int worker_processes = 0;
  double wall_s = 0;
};

struct PlanResult {
  std::string scenario_name;
  std::string currency = "USD";
  double headroom = 0;
  int max_gpus = 0;
  std::vector<std::string> strategies;
  std::string platform = "bare";
  /// Node platforms: the host price table's one-line summary (PriceTable::summary); empty on bare.
  std::string prices;
  std::vector<std::string> tenant_names;  ///< the planned tenants, in scenario order
  /// The rule the rows are ranked by (shown in the table's header and the JSON).
  std::string ranking;
  /// The tenants that fail even alone on the largest GPU (the infeasible answer's reason came
  /// from these alone checks, without a search).
  std::vector<std::string> infeasible_alone;
  std::vector<std::string> notes;  ///< e.g. families the platform cannot run, left out
  /// More tenants than the exact search takes (planner_large.cpp): the answer is the cheapest
  /// packing found, `lower_bound` what no setup can cost less than.
  bool large = false;
  double lower_bound = 0;         ///< per hour; = the best cost when the exact search proved it
  std::vector<PlanSetup> ranked;  ///< ranked[0]: the cheapest feasible setup (if any)
  PlanStats stats;
  std::optional<RunResult> best_run;  ///< the winning setup simulated whole (verify)
  std::string best_yaml;              ///< the winning setup as a scenario file
  bool found() const { return !ranked.empty() && ranked.front().feasible; }
};

/// Plans `scenario` (which must have `plan:`). Throws InputError for bad input.
PlanResult plan_scenario(const Scenario& scenario, const PlanOptions& options = {});

/// The ranked table (text), the stats line and the reasons.
std::string plan_table(const PlanResult& result);
/// Everything as one JSON object.
nlohmann::ordered_json plan_json(const PlanResult& result);

}  // namespace gpumux
