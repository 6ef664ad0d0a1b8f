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
//   planner_exhaustive.cpp brute force for tests (every configuration simulated whole)
//   planner_output.cpp     PlanGpu::describe, plan_table, plan_json
#include <cstdint>
#include <limits>
#include <map>
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

namespace gpumux {

struct DeviceProfile;

namespace planner_detail {

using Mask = std::uint32_t;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr int kMaxTenants = kMaxPlanTenants;  // models/scenario/scenario.hpp

enum class Mode : int { exclusive = 0, time_slicing = 1, mps = 2 };

// Strategy families, in the order the search tries them on one GPU (cheap checks first).
enum Family : int { kDedicated = 0, kTimeSlicing, kMps, kMig, kMigTs, kMigMps, kFamilies };
inline const char* const kFamilyNames[kFamilies] = {"dedicated", "time-slicing",     "mps",
                                                    "mig",       "mig+time-slicing", "mig+mps"};

int family_of(const std::string& name);

inline int popcount(Mask m) { return __builtin_popcount(m); }
inline int lowest(Mask m) { return __builtin_ctz(m); }

/// A way to configure one GPU of one model for a group: a family and its replica parameter
/// (MPS: 0 = no limits, R = replicas).
struct Variant {
  int family = kDedicated;
  int replicas = 0;
  bool operator==(const Variant&) const = default;
};

/// (tenants, device, mode): what one simulation decides.
struct UnitKey {
  Mask tenants = 0;
  int model = 0;
  int profile = -1;  // index into DeviceProfile::mig_profiles; -1 = the whole GPU
  Mode mode = Mode::exclusive;
  int replicas = 0;  // MPS: 0 = no limits; time-slicing: the group size (a limit only)
  auto operator<=>(const UnitKey&) const = default;
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
};

/// One block of a GPU configuration: tenants and the MIG profile of their instance (-1 whole).
struct Block {
  Mask tenants = 0;
  int profile = -1;
};

struct Config {
  int model = 0;
  Variant variant;
  std::vector<Block> blocks;
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

class Planner {
 public:
  Planner(const Scenario& scenario, const PlanOptions& options);

  PlanResult run();

 private:
  // --- the space -----------------------------------------------------------------------------
  void build_layouts(ModelInfo& m);
  std::vector<Variant> variants(Mask group, const std::vector<bool>& families) const;
  Mode mode_of(const Variant& v) const;
  int unit_replicas(const Variant& v, Mask block) const;
  bool is_mig(const Variant& v) const { return v.family >= kMig; }
  /// The unit of TENANTS in one instance (PROFILE, -1 = the whole GPU) of MODEL under V.
  UnitKey unit_key(Mask tenants, int model, int profile, const Variant& v) const {
    return {tenants, model, profile, mode_of(v), unit_replicas(v, tenants)};
  }
  /// An empty scenario with the input's run settings (name, seed, duration, output, ...).
  Scenario run_settings() const;
  /// The longest scenario duration a unit is simulated for (plan.max_duration, default 16 x
  /// duration), and the next window after DURATION (the measured window doubled) or nullopt
  /// past the bound.
  Nanos max_duration() const;
  std::optional<Nanos> longer_window(Nanos duration) const;

  // --- units ---------------------------------------------------------------------------------
  std::optional<std::string> constraint_violation(const UnitKey& u) const;
  std::optional<std::string> physical_violation(const UnitKey& u) const;
  std::string device_label(const UnitKey& u) const;
  DeviceCapacity capacity(const UnitKey& u) const;
  const UnitInfo& unit(const UnitKey& u);  // pruned or cached (unknown if never simulated)
  void simulate_units(const std::vector<UnitKey>& units);
  /// The one-GPU scenario of CONFIG over DURATION (0: the input's).
  Scenario unit_scenario(const Config& config, Nanos duration = 0) const;
  /// The outcome of each of TENANTS; WORST the worst SLO ratio, REASON the first failure, and
  /// INCONCLUSIVE set when every failure is an inconclusive verdict (a longer window decides).
  std::vector<PlanTenantOutcome> judge(const std::vector<Numbers>& numbers, Mask tenants,
                                       double& worst, std::string& reason,
                                       bool* inconclusive = nullptr) const;
  /// The longest duration among the units of CONFIG (the window its scenario must run).
  Nanos config_duration(const Config& config);

  // --- groups --------------------------------------------------------------------------------
  struct GroupState {
    enum Status { unknown, feasible, infeasible } status = unknown;
    Config config;                 // the candidate (unknown) or the feasible configuration
    std::vector<UnitKey> pending;  // units of the candidate not simulated yet
    std::string reason;            // why infeasible (or the last failure seen)
  };
  using GroupKey = std::tuple<Mask, int, int, int>;  // group, model, family, replicas
  GroupState& group_state(Mask group, int model, const Variant& v);
  void refresh(GroupState& state, Mask group, int model, const Variant& v);
  bool search_mig(Mask remaining, int layout, int model, const Variant& v, bool optimistic,
                  std::vector<Block>& blocks, std::vector<UnitKey>& pending, std::string& reason,
                  std::set<std::pair<Mask, int>>& failed);
  /// Cheapest GPU for GROUP within FAMILIES: (price, proven), price = inf when none can work.
  std::pair<double, bool> group_cost(Mask group, const std::vector<bool>& families);
  std::optional<std::pair<int, Config>> group_choice(Mask group, const std::vector<bool>& families,
                                                     bool best_headroom);
  double config_ratio(const Config& config);

  // --- partitions ----------------------------------------------------------------------------
  struct Partition {
    double cost = kInf;
    std::vector<Mask> groups;
  };
  Partition cheapest_partition(const std::vector<double>& cost) const;
  std::optional<Partition> solve(const std::vector<bool>& families, std::vector<Mask>* first,
                                 bool drive);
  double count_setups(bool surviving);
  double count_configs(Mask group, int model, const Variant& v, bool surviving);

  PlanSetup make_setup(const std::string& label, const Partition& p,
                       const std::vector<bool>& families, bool refine);

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
  bool allowed_[kFamilies] = {};
  std::vector<bool> faults_of_;
  int reason_rank_ = -1;            // search_mig: rank of the failure kept as the reason
  bool layout_full_ = false;        // search_mig: a layout had no room left for a block
  bool simulated_failure_ = false;  // search_mig: the kept reason comes from a simulation

  std::mutex mutex_;
  std::map<UnitKey, UnitInfo> units_;
  std::map<GroupKey, GroupState> groups_;
  std::map<std::string, bool> whole_configs_;  // exhaustive: config text -> feasible
  std::map<std::tuple<Mask, int, int, int, int, bool>, double> count_memo_;
  PlanStats stats_;
};

}  // namespace planner_detail
}  // namespace gpumux
