#pragma once
// Private to models/plan/planner*.cpp: the Planner behind plan_scenario() (planner.hpp) and the
// types its parts share. Which file owns what:
//   planner.cpp            construction (checks the input, loads the GPU models), plan_scenario,
//                          small text helpers
//   planner_space.cpp      the search space: MIG layouts, variants per group, space counting
//   planner_prune.cpp      analytic bounds: isolation, sustainable load, memory, latency floor
//   planner_simulate.cpp   unit scenarios, the unit cache, the parallel/batch runner, judging
//   planner_search.cpp     groups (candidates, MIG block search) and the partition DP
//   planner_rank.cpp       run(): setups per family, refinement, ranking, verification
//   planner_nodes.cpp      node platforms (gke, device-plugin, mig-parted): machine types, the
//                          variants of a node, the balanced split of a group over its devices
//   planner_exhaustive.cpp brute force for tests (every configuration simulated whole)
//   planner_output.cpp     PlanGpu::describe, plan_table, plan_json
//   plan_deploy.cpp        what `plan -o DIR` writes (node pools, configs, pod manifests)
#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/plan/bounds.hpp"
#include "models/plan/planner.hpp"
#include "models/scenario/plan_limits.hpp"
#include "models/plan/slo_check.hpp"
#include "models/strategies/exclusive/strategy.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/strategies/registry.hpp"
#include "models/strategies/time_slicing/strategy.hpp"

namespace gpumux {

struct DeviceProfile;
class SteppedRun;

namespace planner_detail {

using Mask = std::uint64_t;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr int kMaxTenants = kMaxPlanTenants;  // models/scenario/plan_limits.hpp
/// Up to this many tenants the search is exact (the subset DP, planner_search.cpp); above it
/// the scalable search of planner_large.cpp (a constructed setup and a lower bound).
inline constexpr int kMaxExactTenants = kPlanExactTenants;

// Strategy families, in the order the search tries them on one GPU (cheap checks first).
enum Family : int { kDedicated = 0, kTimeSlicing, kMps, kMig, kMigTs, kMigMps, kFamilies };
inline const char* const kFamilyNames[kFamilies] = {"dedicated", "time-slicing",     "mps",
                                                    "mig",       "mig+time-slicing", "mig+mps"};

int family_of(const std::string& name);

/// The ranking rule of the rows (PlanResult::ranking).
extern const char* const kRankingRule;

inline int popcount(Mask m) { return __builtin_popcountll(m); }
inline int lowest(Mask m) { return __builtin_ctzll(m); }

/// What runs the GPUs (PlanSpec::platform): bare prices GPUs one by one; the others buy nodes of
/// machine types with one configuration per node.
enum class Platform { bare, gke, device_plugin, mig_parted };

/// source: GKE's max-shared-clients-per-gpu takes 2-48 (ComputeClass gpuSharing
/// maxSharedClientsPerGPU, https://cloud.google.com/kubernetes-engine/docs/reference/crds/
/// computeclass): the most clients a GKE node's device takes, time-sharing or MPS.
inline constexpr int kGkeMaxSharedClients = 48;

/// A way to configure one GPU of one model for a group: a family and its replica parameter
/// (MPS: 0 = no limits, R = replicas). On a node platform a variant configures every GPU of a
/// node: `replicas` is then the clients per device (max-shared-clients-per-gpu, MPS replicas;
/// 0 for exclusive families) and `profile` the one MIG partition size (-1 = whole GPUs).
struct Variant {
  int family = kDedicated;
  int replicas = 0;
  int profile = -1;
  bool operator==(const Variant&) const = default;
};

/// (tenants, device, strategy): what one simulation decides.
struct UnitKey {
  Mask tenants = 0;
  int model = 0;
  int profile = -1;  // index into DeviceProfile::mig_profiles; -1 = the whole GPU
  const Strategy* strategy = &exclusive_strategy();  // the registry's descriptor
  int replicas = 0;  // MPS: 0 = no limits; time-slicing: the group size (a limit only)
  bool operator==(const UnitKey&) const = default;
  /// Strategies compare in registration order (strategy_rank), never by address, so maps of
  /// units iterate the same way in every build.
  std::strong_ordering operator<=>(const UnitKey& o) const {
    if (const auto c = tenants <=> o.tenants; c != 0) return c;
    if (const auto c = model <=> o.model; c != 0) return c;
    if (const auto c = profile <=> o.profile; c != 0) return c;
    if (strategy != o.strategy) return strategy_rank(*strategy) <=> strategy_rank(*o.strategy);
    return replicas <=> o.replicas;
  }
};

enum class Verdict { unknown, pruned, feasible, infeasible };

struct UnitInfo {
  Verdict verdict = Verdict::unknown;
  double worst_ratio = 0;
  std::string reason;
  std::vector<PlanTenantOutcome> outcomes;
  /// The scenario duration the verdict comes from (the input's, or a longer one when a shorter
  /// window left a verdict inconclusive: Planner::simulate_units).
  Nanos duration = 0;
  bool inconclusive = false;  ///< infeasible because a verdict stayed inconclusive at the bound
  /// An unknown unit whose verdict was inconclusive over `duration` and that stopped growing
  /// because no candidate needing it was still open (Planner::simulate_units): the window it
  /// resumes at when a candidate needs it again (0: the input's duration).
  Nanos resume = 0;
};

/// One block of a GPU configuration: tenants and the MIG profile of their instance (-1 whole).
struct Block {
  Mask tenants = 0;
  int profile = -1;
  int gpu = 0;  ///< node platforms: the GPU of the node it is on (device j: GPU j / instances)
};

struct Config {
  int model = 0;
  Variant variant;
  std::vector<Block> blocks;
  int machine = -1;  ///< node platforms: index into Planner::machines_ (-1 = one bare GPU)
};

/// A machine type the plan may buy (node platforms), priced: host + gpus x GPU price.
struct Machine {
  std::string name;
  int model = 0;  ///< index into Planner::models_
  int gpus = 1;
  double price = 0;
};

struct ModelInfo {
  PlanGpuSpec spec;
  const DeviceProfile* profile = nullptr;
  std::vector<int> mig;  // usable MIG profiles (no +me/+gfx variants), largest first
  // Fitting layouts: sorted multisets of mig[] positions; next[layout][k] = layout after adding
  // mig[k], or -1 when it no longer fits. Layout 0 is the empty one.
  std::vector<std::vector<int>> layouts;
  std::vector<std::vector<int>> next;
};

std::string join_names(const std::vector<TenantSpec>& tenants, Mask mask);
std::string format_ms(double ns);
std::string format_gib(double bytes);

/// Per-tenant numbers of a simulation (from a RunResult or a summary JSON).
struct Numbers {
  std::string name, device;
  std::int64_t failed = 0, oom = 0;
  std::vector<PlanSloTarget> targets;  // the run's SLO verdicts (models/run/slo.hpp)
};

std::vector<Numbers> numbers_of(const RunResult& r);
std::vector<Numbers> numbers_of(const std::string& summary_text);

class UnitWorkers;  // planner_simulate.cpp

class Planner {
 public:
  Planner(const Scenario& scenario, const PlanOptions& options);

  PlanResult run();

 private:
  // --- the space -----------------------------------------------------------------------------
  void build_layouts(ModelInfo& m);
  std::vector<Variant> variants(Mask group, const std::vector<bool>& families) const;
  // "Options" are what a group is bought as: a GPU model (bare) or a machine type (nodes).
  bool node_mode() const { return platform_ != Platform::bare; }
  int options() const { return static_cast<int>(node_mode() ? machines_.size() : models_.size()); }
  double option_price(int o) const;
  int option_model(int o) const;
  int option_gpus(int o) const {
    return node_mode() ? machines_[static_cast<std::size_t>(o)].gpus : 1;
  }
  std::vector<Variant> variants_for(Mask group, int option,
                                    const std::vector<bool>& families) const;
  // --- node platforms (planner_nodes.cpp) ------------------------------------------------------
  void build_machines();
  /// Instances of MIG profile `profile` (index into mig_profiles) one GPU of `model` holds.
  int instances_per_gpu(int model, int profile) const;
  int devices_of(int machine, const Variant& v) const;
  std::vector<Variant> node_variants(Mask group, int machine,
                                     const std::vector<bool>& families) const;
  bool search_split(Mask remaining, int big_left, int big, int small, int machine, const Variant& v,
                    bool optimistic, std::vector<Block>& blocks, std::vector<UnitKey>& pending,
                    std::string& reason, std::set<std::pair<Mask, int>>& failed);
  /// Node platforms, shared variants (time-sharing, MPS, MIG + time-sharing): every set of
  /// GROUP's pods the kubelet may put on one device of MACHINE. Kubernetes guarantees no device
  /// order (the kubelet takes any free slot, and a restarted pod can move), so a node is correct
  /// only if each of these is: for s pods, D devices and c clients per device, the subsets of
  /// size max(1, s - (D - 1) c) .. c. Empty for exclusive variants (each device holds one pod
  /// alone, and the devices are alike: every assignment is the same). Cost: O(2^s).
  std::vector<Mask> assignable_blocks(Mask group, int machine, const Variant& v) const;
  /// Devices in order for the blocks of a node (largest first; device j: GPU j / instances).
  void place_blocks(Config& config) const;
  /// A node configuration as a scenario: every GPU of the machine (named PREFIX-gpuK, MIG
  /// partitions of the one size), the node's tenants on their devices.
  Scenario node_scenario(const Config& config, const std::string& prefix) const;
  /// The order to create the node's pods in (see PlanNode::pod_order).
  std::vector<int> pod_order(const Config& config) const;
  int tenant_index(const std::string& name) const;
  double count_node_configs(Mask group, int machine, const Variant& v, bool surviving);
  void enumerate_node_configs(Mask group, int machine, const Variant& v, std::vector<Config>& out);
  /// The registry strategy of V's family on each device (MIG families: inside each instance).
  const Strategy& strategy_of(const Variant& v) const;
  int unit_replicas(const Variant& v, Mask block) const;
  bool is_mig(const Variant& v) const { return v.family >= kMig; }
  /// The unit of TENANTS in one instance (PROFILE, -1 = the whole GPU) of MODEL under V.
  UnitKey unit_key(Mask tenants, int model, int profile, const Variant& v) const {
    return {tenants, model, profile, &strategy_of(v), unit_replicas(v, tenants)};
  }
  /// An empty scenario with the input's run settings (name, seed, duration, output, ...).
  Scenario run_settings() const;
  /// More tenants than the exact search takes: the packing search (planner_large.cpp).
  bool packing_search() const { return n_ > std::min(options_.exact_tenants, 20); }
  /// The longest scenario duration a unit is simulated for (plan.max_duration; default 16 x
  /// duration for the exact search, 4 x for the packing search, whose first-fit tries many
  /// near-full devices: each would grow its window), and the next window after DURATION (the
  /// measured window doubled) or nullopt past the bound.
  Nanos max_duration() const;
  std::optional<Nanos> longer_window(Nanos duration) const;
  /// A note in RESULT when units stayed inconclusive at max_duration (stats_).
  void note_undecided_units(PlanResult& result) const;

  // --- units ---------------------------------------------------------------------------------
  std::optional<std::string> constraint_violation(const UnitKey& u) const;
  /// plan.shared_tenant_memory's rule for unit `u` on a device of capacity `cap`: why a tenant
  /// above the limit may not share memory with an SLO tenant there, or nullopt. O(tenants^2).
  std::optional<std::string> large_tenant_beside_slos(const UnitKey& u,
                                                      const DeviceCapacity& cap) const;
  std::optional<std::string> physical_violation(const UnitKey& u) const;
  std::string device_label(const UnitKey& u) const;
  DeviceCapacity capacity(const UnitKey& u) const;
  /// What the unit's strategy allows on its device (Strategy::limits via default_limits). O(1).
  DeviceLimits limits(const UnitKey& u) const;
  const UnitInfo& unit(const UnitKey& u);  // pruned or cached (unknown if never simulated)
  /// Simulates UNITS, growing the window of an inconclusive one (longer_window) until it is
  /// decided. CANDIDATES (optional) are the sets of UNITS that are needed together (a group's
  /// candidate configuration): a unit stops growing once every candidate holding it has a unit
  /// decided infeasible, and stays unknown, resuming at its next window when a candidate needs
  /// it again. Each simulation is a fresh run of its window, so a unit's verdict is the same
  /// whichever candidate decides it. Without CANDIDATES every unit grows until decided.
  void simulate_units(const std::vector<UnitKey>& units,
                      const std::vector<std::vector<UnitKey>>& candidates = {});
  /// The one-GPU scenario of CONFIG over DURATION (0: the input's).
  Scenario unit_scenario(const Config& config, Nanos duration = 0) const;
  /// The one-GPU configuration that simulates unit U.
  Config unit_config(const UnitKey& u) const;
  /// Unit U simulated over WINDOW in this thread: its tenants' numbers. STEPPED (not null): the
  /// unit's continued simulation (SteppedRun), made over LONGEST when it is null.
  std::vector<Numbers> simulate_unit(const UnitKey& u, Nanos window,
                                     std::shared_ptr<SteppedRun>* stepped, Nanos longest) const;
  /// The unit workers (planner_simulate.cpp): jobs_ single-threaded processes forked from this
  /// one while it has no other thread, so that a continued window's fork (SteppedRun::at) copies
  /// no lock another thread holds. Started by the first batch of a plan with jobs_ > 1; none
  /// where this process already has other threads (then the units run on threads).
  void start_workers();
  /// A worker's loop: reads units from FD, simulates them, writes their numbers back; exits the
  /// process when FD closes.
  [[noreturn]] void serve_units(int fd);
  /// One batch on the workers: RESULTS[i] or ERRORS[i] of ROUND[i] over WINDOWS[i], continued
  /// (LONGEST[i] > 0) on the worker that holds the unit's simulation.
  void simulate_on_workers(const std::vector<UnitKey>& round, const std::vector<Nanos>& windows,
                           const std::vector<Nanos>& longest,
                           std::vector<std::vector<Numbers>>& results,
                           std::vector<std::string>& errors);
  /// Unit U needs no continued simulation any more: dropped here and on its worker.
  void drop_stepped(const UnitKey& u);
  /// The outcome of each of TENANTS; WORST the worst SLO ratio, REASON the first failure, and
  /// INCONCLUSIVE set when every failure is an inconclusive verdict (a longer window decides).
  std::vector<PlanTenantOutcome> judge(const std::vector<Numbers>& numbers, Mask tenants,
                                       double& worst, std::string& reason,
                                       bool* inconclusive = nullptr) const;
  /// The verdict inputs (models/plan/slo_check.hpp) of each of TENANTS in NUMBERS: what judge
  /// checks, and what the futility projection reads.
  std::vector<PlanSloInput> slo_inputs(const std::vector<Numbers>& numbers, Mask tenants) const;
  /// Whether a unit judged inconclusive over WINDOW with NUMBERS is projected not to be met
  /// over any longer window of its ladder up to max_duration (the futility rule,
  /// PlanOptions::futility; docs/plan.md "Stopping a unit that cannot be met").
  bool projected_not_met(const std::vector<Numbers>& numbers, Mask tenants, Nanos window) const;
  /// The longest duration among the units of CONFIG (the window its scenario must run).
  Nanos config_duration(const Config& config);

  // --- groups --------------------------------------------------------------------------------
  struct GroupState {
    enum Status { unknown, feasible, infeasible } status = unknown;
    Config config;                 // the candidate (unknown) or the feasible configuration
    std::vector<UnitKey> pending;  // units of the candidate not simulated yet
    std::string reason;            // why infeasible (or the last failure seen)
  };
  using GroupKey =
      std::tuple<Mask, int, int, int, int>;  // group, option, family, replicas, profile
  GroupState& group_state(Mask group, int option, const Variant& v);
  void refresh(GroupState& state, Mask group, int option, const Variant& v);
  bool search_mig(Mask remaining, int layout, int model, const Variant& v, bool optimistic,
                  std::vector<Block>& blocks, std::vector<UnitKey>& pending, std::string& reason,
                  std::set<std::pair<Mask, int>>& failed);
  /// Cheapest GPU for GROUP within FAMILIES: (price, proven), price = inf when none can work.
  std::pair<double, bool> group_cost(Mask group, const std::vector<bool>& families,
                                     int* option = nullptr);
  std::optional<std::pair<int, Config>> group_choice(Mask group, const std::vector<bool>& families,
                                                     bool best_headroom);
  double config_ratio(const Config& config);

  // --- partitions ----------------------------------------------------------------------------
  struct Partition {
    double cost = kInf;
    std::vector<Mask> groups;
  };
  /// Cheapest set partition under `cost` with at most max_gpus GPUs, a group weighing
  /// `weight[g]` GPUs (nullptr: 1 each).
  Partition cheapest_partition(const std::vector<double>& cost,
                               const std::vector<int>* weight = nullptr) const;
  std::optional<Partition> solve(const std::vector<bool>& families, std::vector<Mask>* first,
                                 bool drive);
  double count_setups(bool surviving);
  double count_configs(Mask group, int model, const Variant& v, bool surviving);

  PlanSetup make_setup(const std::string& label, const Partition& p,
                       const std::vector<bool>& families, bool refine);
  /// The setup of these configurations (one per GPU, or per node on a node platform).
  PlanSetup setup_of(const std::string& label, const std::vector<Config>& configs);
  void add_configs(PlanSetup& setup, const std::vector<Config>& configs);
  /// Node platforms: appends the node of configuration C to SETUP (GPUs, devices, outcomes).
  void add_node(PlanSetup& setup, const Config& c);
  // --- many tenants (planner_large.cpp) ------------------------------------------------------
  /// run() above kMaxExactTenants: first-fit decreasing per family, the best's bins re-packed,
  /// and a lower bound.
  void run_large(PlanResult& result);
  /// run() up to kMaxExactTenants: the lazy subset DP, refinement and the family rows.
  void exact_search(PlanResult& result);
  /// Packs TENANTS into bins of OPTION under variant V (first-fit decreasing, each placement
  /// decided by simulating its unit); false when they do not fit in MAX_GPUS GPUs or the bins
  /// would cost more than STOP_AT.
  bool pack(int option, const Variant& v, Mask tenants, int max_gpus, double stop_at,
            std::vector<Config>& bins);
  /// The variants of FAMILY that pack() tries for TENANTS on OPTION within MAX_GPUS: the MIG
  /// partition sizes (largest first, dominated ones left out) and the MPS replicas.
  std::vector<Variant> packing_variants(int family, int option, Mask tenants, int max_gpus) const;
  double config_price(const Config& c) const;  ///< per hour: the machine's, or the GPU's
  int config_gpus(const Config& c) const;      ///< GPUs it holds: the machine's, or 1
  double lower_bound_cost() const;
  /// The alone checks: every tenant alone on a whole GPU of each model; the names of the
  /// tenants that fail on every model (a plan without a setup, known before any search).
  std::vector<std::string> alone_checks(std::string& reason);

  // exhaustive (brute force) --------------------------------------------------------------------
  std::optional<Partition> solve_exhaustive(const std::vector<bool>& families);
  void enumerate_configs(Mask group, int model, const Variant& v, std::vector<Config>& out);
  bool config_feasible_whole(const Config& c);

  const Scenario& scenario_;
  PlanOptions options_;
  const PlanSpec& plan_;
  int n_ = 0;
  int jobs_ = 1;
  std::vector<TenantDemand> demands_;
  std::vector<ModelInfo> models_;
  Platform platform_ = Platform::bare;
  std::vector<Machine> machines_;            // node platforms, by price
  std::vector<std::string> platform_notes_;  // what the platform left out of the search
  bool allowed_[kFamilies] = {};
  std::vector<bool> faults_of_;
  int reason_rank_ = -1;            // search_mig: rank of the failure kept as the reason
  bool layout_full_ = false;        // search_mig: a layout had no room left for a block
  bool simulated_failure_ = false;  // search_mig: the kept reason comes from a simulation

  std::mutex mutex_;
  std::map<UnitKey, UnitInfo> units_;
  /// Units whose window grows, each one simulation continued from window to window
  /// (simulate_units; models/run/runner.hpp SteppedRun), until decided or stopped.
  std::map<UnitKey, std::shared_ptr<SteppedRun>> stepped_;
  /// The worker processes (start_workers; null: none) and, per unit whose continued simulation
  /// a worker holds, that worker's index (stepped_ then holds null for the unit).
  std::shared_ptr<UnitWorkers> workers_;
  bool workers_tried_ = false;
  std::map<UnitKey, std::size_t> worker_of_;
  std::map<GroupKey, GroupState> groups_;
  std::map<std::string, bool> whole_configs_;  // exhaustive: config text -> feasible
  std::map<std::tuple<Mask, int, int, int, int, bool>, double> count_memo_;
  PlanStats stats_;
};

}  // namespace planner_detail
}  // namespace gpumux
