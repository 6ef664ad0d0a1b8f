#include "models/plan/planner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "models/plan/bounds.hpp"
#include "models/plan/slo_check.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/scenario/resolve.hpp"
#include "models/run/runner.hpp"
#include "models/run/slo.hpp"
#include "models/scenario/emit.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux {
namespace {

using Mask = std::uint32_t;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxTenants = 14;

enum class Mode : int { exclusive = 0, time_slicing = 1, mps = 2 };

// Strategy families, in the order the search tries them on one GPU (cheap checks first).
enum Family : int { kDedicated = 0, kTimeSlicing, kMps, kMig, kMigTs, kMigMps, kFamilies };
const char* const kFamilyNames[kFamilies] = {"dedicated", "time-slicing",     "mps",
                                             "mig",       "mig+time-slicing", "mig+mps"};

int family_of(const std::string& name) {
  for (int f = 0; f < kFamilies; ++f) {
    if (name == kFamilyNames[f]) return f;
  }
  return -1;
}

int popcount(Mask m) { return __builtin_popcount(m); }
int lowest(Mask m) { return __builtin_ctz(m); }

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

std::string join_names(const std::vector<TenantSpec>& tenants, Mask mask) {
  std::string out;
  for (int t = 0; mask >> t; ++t) {
    if (!(mask >> t & 1u)) continue;
    if (!out.empty()) out += ',';
    out += tenants[static_cast<std::size_t>(t)].name;
  }
  return out;
}

std::string format_ms(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  return fmt::format("{:.3g} us", ns / 1e3);
}

std::string format_gib(double bytes) { return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024)); }

/// Per-tenant numbers of a simulation (from a RunResult or a summary JSON).
struct Numbers {
  std::string name, device;
  std::int64_t failed = 0, oom = 0;
  std::vector<PlanSloTarget> targets;  // the run's SLO verdicts (models/run/slo.hpp)
};

class Planner {
 public:
  Planner(const Scenario& scenario, const PlanOptions& options)
      : scenario_(scenario), options_(options), plan_(*scenario.plan) {
    n_ = static_cast<int>(scenario_.tenants.size());
    if (n_ == 0) throw InputError(scenario_.locate("tenants"), "no tenants to plan");
    if (n_ > kMaxTenants) {
      throw InputError(scenario_.locate("tenants"),
                       fmt::format("gpumux plan handles up to {} tenants, the scenario has {}",
                                   kMaxTenants, n_));
    }
    for (const TenantSpec& t : scenario_.tenants) {
      if (t.gpus > 1 || t.devices.size() > 1) {
        throw InputError(scenario_.locate(t.where.key_path + ".gpus"),
                         "tenant '" + t.name + "': gpumux plan places single-GPU tenants only");
      }
      demands_.push_back(demand_of(t));
    }
    for (const std::string& name : plan_.strategies) {
      const int f = family_of(name);
      if (f < 0) throw InputError(plan_.where, "unknown strategy '" + name + "'");
      allowed_[f] = true;
    }
    const std::string base_dir =
        scenario_.source_file.empty()
            ? std::string()
            : std::string(scenario_.source_file.substr(0, scenario_.source_file.rfind('/') ==
                                                                  std::string::npos
                                                              ? 0
                                                              : scenario_.source_file.rfind('/')));
    for (std::size_t i = 0; i < plan_.gpus.size(); ++i) {
      ModelInfo m;
      m.spec = plan_.gpus[i];
      try {
        m.profile = &load_device_profile(m.spec.model, base_dir);
      } catch (const InputError& e) {
        throw InputError(scenario_.locate(m.spec.where.key_path + ".model"), e.what());
      }
      build_layouts(m);
      models_.push_back(std::move(m));
    }
    std::sort(models_.begin(), models_.end(), [](const ModelInfo& a, const ModelInfo& b) {
      return a.spec.cost_per_hour < b.spec.cost_per_hour;
    });
    jobs_ = options_.jobs > 0 ? options_.jobs
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    faults_of_.assign(static_cast<std::size_t>(n_), false);
    for (const FaultSpec& f : scenario_.faults) {
      for (int t = 0; t < n_; ++t) {
        if (scenario_.tenants[static_cast<std::size_t>(t)].name == f.tenant) {
          faults_of_[static_cast<std::size_t>(t)] = true;
        }
      }
    }
  }

  PlanResult run();

 private:
  // --- the space -----------------------------------------------------------------------------
  void build_layouts(ModelInfo& m);
  std::vector<Variant> variants(Mask group, const std::vector<bool>& families) const;
  Mode mode_of(const Variant& v) const;
  int unit_replicas(const Variant& v, Mask block) const;
  bool is_mig(const Variant& v) const { return v.family >= kMig; }

  // --- units ---------------------------------------------------------------------------------
  std::optional<std::string> constraint_violation(const UnitKey& u) const;
  std::optional<std::string> physical_violation(const UnitKey& u) const;
  std::string device_label(const UnitKey& u) const;
  DeviceCapacity capacity(const UnitKey& u) const;
  const UnitInfo& unit(const UnitKey& u);  // pruned or cached (unknown if never simulated)
  void simulate_units(const std::vector<UnitKey>& units);
  Scenario unit_scenario(const Config& config) const;
  std::vector<PlanTenantOutcome> judge(const std::vector<Numbers>& numbers, Mask tenants,
                                       double& worst, std::string& reason) const;

  // --- groups --------------------------------------------------------------------------------
  struct GroupState {
    enum Status { unknown, feasible, infeasible } status = unknown;
    Config config;                  // the candidate (unknown) or the feasible configuration
    std::vector<UnitKey> pending;   // units of the candidate not simulated yet
    std::string reason;             // why infeasible (or the last failure seen)
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
  int reason_rank_ = -1;  // search_mig: rank of the failure kept as the reason
  bool layout_full_ = false;        // search_mig: a layout had no room left for a block
  bool simulated_failure_ = false;  // search_mig: the kept reason comes from a simulation

  std::mutex mutex_;
  std::map<UnitKey, UnitInfo> units_;
  std::map<GroupKey, GroupState> groups_;
  std::map<std::string, bool> whole_configs_;  // exhaustive: config text -> feasible
  std::map<std::tuple<Mask, int, int, int, int, bool>, double> count_memo_;
  PlanStats stats_;
};

// ---------------------------------------------------------------------------------------------
// The space

void Planner::build_layouts(ModelInfo& m) {
  const DeviceProfile& p = *m.profile;
  for (std::size_t i = 0; i < p.mig_profiles.size(); ++i) {
    if (p.mig_profiles[i].name.find('+') == std::string::npos) m.mig.push_back(static_cast<int>(i));
  }
  std::sort(m.mig.begin(), m.mig.end(), [&p](int a, int b) {
    const MigProfileSpec& x = p.mig_profiles[static_cast<std::size_t>(a)];
    const MigProfileSpec& y = p.mig_profiles[static_cast<std::size_t>(b)];
    return std::tie(x.sms, x.memory) > std::tie(y.sms, y.memory);
  });
  std::map<std::vector<int>, int> id;
  m.layouts.push_back({});
  id[{}] = 0;
  for (std::size_t l = 0; l < m.layouts.size(); ++l) {
    m.next.emplace_back(m.mig.size(), -1);
    for (std::size_t k = 0; k < m.mig.size(); ++k) {
      std::vector<int> grown = m.layouts[l];
      grown.push_back(static_cast<int>(k));
      std::sort(grown.begin(), grown.end());
      const auto found = id.find(grown);
      if (found != id.end()) {
        m.next[l][k] = found->second;
        continue;
      }
      std::vector<std::string> names;
      for (int g : grown) names.push_back(p.mig_profiles[static_cast<std::size_t>(m.mig[static_cast<std::size_t>(g)])].name);
      if (!fit_mig_layout(p, names).fits) continue;
      const int new_id = static_cast<int>(m.layouts.size());
      id[grown] = new_id;
      m.layouts.push_back(grown);
      m.next[l][k] = new_id;
    }
  }
}

std::vector<Variant> Planner::variants(Mask group, const std::vector<bool>& families) const {
  std::vector<Variant> out;
  const int size = popcount(group);
  if (size == 1) {
    out.push_back({kDedicated, 0});
    return out;
  }
  if (families[kTimeSlicing]) out.push_back({kTimeSlicing, size});
  if (families[kMps]) {
    out.push_back({kMps, 0});
    out.push_back({kMps, size});
  }
  if (families[kMig] && size <= 7) out.push_back({kMig, 0});
  if (families[kMigTs]) out.push_back({kMigTs, 0});
  if (families[kMigMps]) {
    out.push_back({kMigMps, 0});
    for (int r = 2; r <= std::min(size, 7); ++r) out.push_back({kMigMps, r});
  }
  return out;
}

Mode Planner::mode_of(const Variant& v) const {
  switch (v.family) {
    case kTimeSlicing:
    case kMigTs:
      return Mode::time_slicing;
    case kMps:
    case kMigMps:
      return Mode::mps;
    default:
      return Mode::exclusive;
  }
}

int Planner::unit_replicas(const Variant& v, Mask block) const {
  if (mode_of(v) == Mode::time_slicing) return popcount(block);
  if (mode_of(v) == Mode::mps) return v.replicas;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Units: bounds

DeviceCapacity Planner::capacity(const UnitKey& u) const {
  const DeviceProfile& gpu = *models_[static_cast<std::size_t>(u.model)].profile;
  DeviceCapacity c = capacity_of(
      gpu, u.profile < 0 ? std::string() : gpu.mig_profiles[static_cast<std::size_t>(u.profile)].name);
  // MPS with replicas R: each client gets 100/R % of the threads (integer percent, >= 1).
  if (u.mode == Mode::mps && u.replicas > 0) c.client_sms = c.sms * std::max(1, 100 / u.replicas) / 100.0;
  return c;
}

std::string Planner::device_label(const UnitKey& u) const {
  const ModelInfo& m = models_[static_cast<std::size_t>(u.model)];
  if (u.profile < 0) return m.profile->name;
  return m.profile->mig_profiles[static_cast<std::size_t>(u.profile)].name;
}

// Constraints that define feasibility beyond the simulated percentiles: isolation, and a
// sustainable load (a setup whose SLO tenants offer more SM time or HBM time per second than the
// device has is overloaded: its queues grow without bound, whatever a finite run shows).
std::optional<std::string> Planner::constraint_violation(const UnitKey& u) const {
  const int count = popcount(u.tenants);
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u) || count < 2) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    if (spec.isolation.memory && (u.mode == Mode::time_slicing ||
                                  (u.mode == Mode::mps && u.replicas == 0))) {
      return spec.name + " needs memory isolation: " +
             (u.mode == Mode::mps ? "MPS without pinned limits" : "time-slicing") +
             " shares memory";
    }
    if (spec.isolation.fault && u.mode == Mode::mps) {
      return spec.name + " needs fault isolation: one MPS server is shared";
    }
  }
  const DeviceCapacity cap = capacity(u);
  double sm_load = 0, bw_load = 0;
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    const TenantDemand& demand = demands_[static_cast<std::size_t>(t)];
    if (spec.best_effort || !demand.open_loop) continue;
    const double sm = sm_load_per_s(demand, cap);
    if (sm > cap.client_sms && cap.client_sms < cap.sms) {
      return fmt::format("{} offers {:.2f}x the SMs its MPS share ({:.0f} % of {}) has",
                         spec.name, sm / cap.client_sms, 100.0 * cap.client_sms / cap.sms,
                         device_label(u));
    }
    const double most = solo_capacity_per_s(demand, cap);
    if (demand.rate_per_s >= most) {
      return fmt::format("{} offers {:.2f}x what {} can serve ({} request(s) at a time, each >= {})",
                         spec.name, demand.rate_per_s / most, device_label(u),
                         demand.max_in_flight, format_ms(service_ns(demand, cap)));
    }
    sm_load += sm;
    bw_load += hbm_load_per_s(demand, cap);
  }
  const double sm_dev = cap.sms, bw_dev = cap.bandwidth;
  if (sm_load >= sm_dev) {
    return fmt::format("offered load needs {:.2f}x the SM time of {}", sm_load / sm_dev,
                       device_label(u));
  }
  if (bw_load >= bw_dev) {
    return fmt::format("offered load needs {:.2f}x the HBM bandwidth of {}", bw_load / bw_dev,
                       device_label(u));
  }
  return std::nullopt;
}

// Physical necessary conditions (what a simulation would also show): memory, the MPS client
// limit, and the latency floor (every request takes at least its kernels alone on the device).
std::optional<std::string> Planner::physical_violation(const UnitKey& u) const {
  const ModelInfo& model = models_[static_cast<std::size_t>(u.model)];
  const DeviceProfile& gpu = *model.profile;
  std::int64_t memory = gpu.memory;
  int max_clients = gpu.mps_max_clients;
  if (u.profile >= 0) {
    const MigProfileSpec& p = gpu.mig_profiles[static_cast<std::size_t>(u.profile)];
    memory = p.memory;
    if (gpu.compute_slices > 0) {
      max_clients = std::max(1, max_clients * p.compute_slices / gpu.compute_slices);
    }
  }
  const int count = popcount(u.tenants);
  if (u.mode == Mode::mps && count > max_clients) {
    return fmt::format("{} MPS clients > the limit of {} on {}", count, max_clients, device_label(u));
  }
  std::int64_t total = 0;
  constexpr std::int64_t mib = 1024 * 1024;
  const std::int64_t pinned =
      (u.mode == Mode::mps && u.replicas > 0) ? memory / u.replicas / mib * mib : memory;
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    if (spec.memory > pinned) {
      return fmt::format("{} needs {} > {}{} of {}", spec.name,
                         format_gib(static_cast<double>(spec.memory)),
                         format_gib(static_cast<double>(pinned)),
                         pinned < memory ? " (MPS pinned limit)" : "", device_label(u));
    }
    total += spec.memory;
  }
  if (total > memory) {
    return fmt::format("memory {} > {} of {}", format_gib(static_cast<double>(total)),
                       format_gib(static_cast<double>(memory)), device_label(u));
  }
  const DeviceCapacity cap = capacity(u);
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    if (spec.best_effort || !spec.slo.any()) continue;
    const double floor = latency_floor_ns(demands_[static_cast<std::size_t>(t)], cap);
    const double allowed = 1.0 - plan_.headroom;
    for (const auto& [q, target] : {std::pair{"p50", spec.slo.p50}, std::pair{"p90", spec.slo.p90},
                                    std::pair{"p99", spec.slo.p99}, std::pair{"p999", spec.slo.p999}}) {
      if (target && static_cast<double>(*target) * allowed < floor) {
        return fmt::format("{} {} target {} < {}, its kernels alone on {}", spec.name, q,
                           format_ms(static_cast<double>(*target) * allowed), format_ms(floor),
                           device_label(u));
      }
    }
  }
  return std::nullopt;
}

const UnitInfo& Planner::unit(const UnitKey& u) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = units_.try_emplace(u);
  if (inserted) {
    ++stats_.units;
    std::optional<std::string> why = constraint_violation(u);
    if (!why) why = physical_violation(u);
    if (why) {
      ++stats_.units_pruned;
      it->second.verdict = Verdict::pruned;
      it->second.reason = *why;
    }
  }
  return it->second;
}

// ---------------------------------------------------------------------------------------------
// Units: simulation

Scenario Planner::unit_scenario(const Config& config) const {
  const ModelInfo& model = models_[static_cast<std::size_t>(config.model)];
  Scenario s;
  s.name = scenario_.name;
  s.description = scenario_.description;
  s.seed = scenario_.seed;
  s.duration = scenario_.duration;
  s.warmup = scenario_.warmup;
  s.output = scenario_.output;
  s.source_file = scenario_.source_file;
  GpuSpec gpu;
  gpu.name = "gpu0";
  gpu.model = model.profile->name;
  gpu.cost_per_hour = model.spec.cost_per_hour;
  gpu.where.key_path = "gpus.0";
  // The strategy by its registry name (models/strategies/registry.hpp).
  const Mode mode = mode_of(config.variant);
  const char* mode_name = mode == Mode::time_slicing ? "time-slicing"
                          : mode == Mode::mps        ? "mps"
                                                     : "exclusive";
  const Strategy* strategy = find_strategy(mode_name);
  if (strategy == nullptr) throw std::logic_error(std::string("no strategy ") + mode_name);
  gpu.sharing = SharingSpec(*strategy);
  int max_block = 0;
  for (const Block& b : config.blocks) max_block = std::max(max_block, popcount(b.tenants));
  if (mode == Mode::time_slicing) gpu.sharing.replicas = max_block;
  if (mode == Mode::mps) gpu.sharing.replicas = config.variant.replicas;
  const bool mig = config.blocks.front().profile >= 0;
  for (const Block& b : config.blocks) {
    if (mig) gpu.mig.push_back(model.profile->mig_profiles[static_cast<std::size_t>(b.profile)].name);
  }
  s.gpus.push_back(gpu);
  for (int t = 0; t < n_; ++t) {
    for (std::size_t b = 0; b < config.blocks.size(); ++b) {
      if (!(config.blocks[b].tenants >> t & 1u)) continue;
      TenantSpec spec = scenario_.tenants[static_cast<std::size_t>(t)];
      spec.device = mig ? "gpu0/" + std::to_string(b) : std::string("gpu0");
      spec.devices = {spec.device};
      spec.gpus = 1;
      s.tenants.push_back(spec);
    }
  }
  for (const FaultSpec& f : scenario_.faults) {
    for (const TenantSpec& t : s.tenants) {
      if (t.name == f.tenant) s.faults.push_back(f);
    }
  }
  return s;
}

std::vector<Numbers> numbers_of(const RunResult& r) {
  std::vector<Numbers> out;
  for (const TenantResult& t : r.tenants) {
    Numbers n;
    n.name = t.name;
    n.device = t.device;
    n.failed = t.failed;
    n.oom = t.oom_events;
    for (const SloCheck& c : evaluate_slo(t).checks) {
      PlanSloTarget target{c.key, c.label, static_cast<double>(c.target_ns), std::nullopt};
      if (c.value_ns) target.value_ns = static_cast<double>(*c.value_ns);
      n.targets.push_back(target);
    }
    out.push_back(n);
  }
  return out;
}

std::vector<Numbers> numbers_of(const std::string& summary_text) {
  const nlohmann::json summary = nlohmann::json::parse(summary_text);
  std::vector<Numbers> out;
  for (const auto& [name, t] : summary.at("tenants").items()) {
    Numbers n;
    n.name = name;
    n.device = t.value("device", "");
    n.failed = t.value("failed", std::int64_t{0});
    n.oom = t.value("oom_events", std::int64_t{0});
    if (const auto slo = t.find("slo"); slo != t.end() && slo->is_object()) {
      for (const auto& [key, check] : slo->items()) {
        PlanSloTarget target{key, slo_label(key), check.value("target_ns", 0.0), std::nullopt};
        if (check.contains("value_ns") && check["value_ns"].is_number()) {
          target.value_ns = check["value_ns"].get<double>();
        }
        n.targets.push_back(target);
      }
    }
    out.push_back(n);
  }
  return out;
}

std::vector<PlanTenantOutcome> Planner::judge(const std::vector<Numbers>& numbers, Mask tenants,
                                              double& worst, std::string& reason) const {
  std::vector<PlanTenantOutcome> out;
  worst = 0;
  reason.clear();
  for (const Numbers& n : numbers) {
    int t = -1;
    for (int i = 0; i < n_; ++i) {
      if (scenario_.tenants[static_cast<std::size_t>(i)].name == n.name) t = i;
    }
    if (t < 0 || !(tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    PlanSloInput in;
    in.name = spec.name;
    in.best_effort = spec.best_effort;
    in.failed = faults_of_[static_cast<std::size_t>(t)] ? 0 : n.failed;
    in.oom_events = n.oom;
    in.targets = n.targets;
    in.headroom = plan_.headroom;
    const PlanSloVerdict check = check_plan_slo(in);
    PlanTenantOutcome o;
    o.name = spec.name;
    o.device = n.device;
    o.met = check.met;
    o.worst_ratio = check.worst_ratio;
    o.reason = check.reason;
    o.worst = check.worst;
    worst = std::max(worst, check.worst_ratio);
    if (!check.met && reason.empty()) reason = check.reason;
    out.push_back(o);
  }
  return out;
}

void Planner::simulate_units(const std::vector<UnitKey>& batch) {
  if (batch.empty()) return;
  std::vector<Config> configs;
  for (const UnitKey& u : batch) {
    Config c;
    c.model = u.model;
    c.variant.family = u.profile >= 0 ? (u.mode == Mode::exclusive ? kMig
                                         : u.mode == Mode::time_slicing ? kMigTs
                                                                        : kMigMps)
                                      : (u.mode == Mode::exclusive ? kDedicated
                                         : u.mode == Mode::time_slicing ? kTimeSlicing
                                                                        : kMps);
    c.variant.replicas = u.mode == Mode::mps ? u.replicas : 0;
    c.blocks.push_back({u.tenants, u.profile});
    configs.push_back(c);
  }
  std::vector<std::vector<Numbers>> results(batch.size());
  std::vector<std::string> errors(batch.size());
  if (options_.batch_runner) {
    std::vector<std::string> texts;
    for (const Config& c : configs) texts.push_back(emit_scenario_yaml(unit_scenario(c)));
    const std::vector<std::string> summaries = options_.batch_runner(texts);
    for (std::size_t i = 0; i < batch.size() && i < summaries.size(); ++i) {
      try {
        results[i] = numbers_of(summaries[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  } else {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < batch.size(); i = next++) {
        try {
          RunOptions run;
          run.record_requests = false;
          results[i] = numbers_of(simulate(resolve_scenario(unit_scenario(configs[i])), run));
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      }
    };
    const int threads = std::min<int>(jobs_, static_cast<int>(batch.size()));
    std::vector<std::thread> pool;
    for (int k = 1; k < threads; ++k) pool.emplace_back(work);
    work();
    for (std::thread& th : pool) th.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    UnitInfo& info = units_[batch[i]];
    ++stats_.simulations;
    if (!errors[i].empty()) {
      info.verdict = Verdict::infeasible;
      info.reason = errors[i];
      continue;
    }
    info.outcomes = judge(results[i], batch[i].tenants, info.worst_ratio, info.reason);
    info.verdict = info.reason.empty() ? Verdict::feasible : Verdict::infeasible;
  }
}

// ---------------------------------------------------------------------------------------------
// Groups

Planner::GroupState& Planner::group_state(Mask group, int model, const Variant& v) {
  GroupState& state = groups_[GroupKey{group, model, v.family, v.replicas}];
  refresh(state, group, model, v);
  return state;
}

void Planner::refresh(GroupState& state, Mask group, int model, const Variant& v) {
  if (state.status != GroupState::unknown) return;
  if (!state.config.blocks.empty()) {
    // Re-check the candidate: still open while every unit is feasible or unknown.
    bool open = true, all_known = true;
    for (const Block& b : state.config.blocks) {
      const UnitInfo& info = unit({b.tenants, model, b.profile, mode_of(v), unit_replicas(v, b.tenants)});
      if (info.verdict == Verdict::infeasible || info.verdict == Verdict::pruned) {
        open = false;
        state.reason = info.reason;
      }
      if (info.verdict == Verdict::unknown) all_known = false;
    }
    if (open && all_known) {
      state.status = GroupState::feasible;
      state.pending.clear();
      return;
    }
    if (open) {
      state.pending.clear();
      for (const Block& b : state.config.blocks) {
        const UnitKey key{b.tenants, model, b.profile, mode_of(v), unit_replicas(v, b.tenants)};
        if (unit(key).verdict == Verdict::unknown) state.pending.push_back(key);
      }
      return;
    }
  }
  // A new optimistic candidate: every unit passes the bounds and none is known to fail.
  state.config = Config{model, v, {}};
  state.pending.clear();
  if (!is_mig(v)) {
    const UnitKey key{group, model, -1, mode_of(v), unit_replicas(v, group)};
    const UnitInfo& info = unit(key);
    if (info.verdict == Verdict::pruned || info.verdict == Verdict::infeasible) {
      state.status = GroupState::infeasible;
      state.reason = info.reason;
      return;
    }
    state.config.blocks.push_back({group, -1});
    if (info.verdict == Verdict::feasible) {
      state.status = GroupState::feasible;
    } else {
      state.pending.push_back(key);
    }
    return;
  }
  std::vector<Block> blocks;
  std::set<std::pair<Mask, int>> failed;
  std::string reason;
  reason_rank_ = -1;
  layout_full_ = false;
  simulated_failure_ = false;
  if (!search_mig(group, 0, model, v, true, blocks, state.pending, reason, failed)) {
    state.status = GroupState::infeasible;
    if (reason.empty()) {
      state.reason = fmt::format("no MIG layout of {} gives each of {} tenants an instance",
                                 models_[static_cast<std::size_t>(model)].profile->name,
                                 popcount(group));
    } else if (layout_full_ && !simulated_failure_) {
      state.reason = fmt::format("{} {{{}}}: no MIG layout fits every block (e.g. {})",
                                 kFamilyNames[v.family], join_names(scenario_.tenants, group),
                                 reason);
    } else {
      state.reason = reason;
    }
    state.config.blocks.clear();
    return;
  }
  state.config.blocks = blocks;
  if (state.pending.empty()) state.status = GroupState::feasible;
}

bool Planner::search_mig(Mask remaining, int layout, int model, const Variant& v, bool optimistic,
                         std::vector<Block>& blocks, std::vector<UnitKey>& pending,
                         std::string& reason, std::set<std::pair<Mask, int>>& failed) {
  if (remaining == 0) return true;
  if (failed.count({remaining, layout})) return false;
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  const int first = lowest(remaining);
  const Mask rest = remaining & ~(Mask{1} << first);
  // Blocks containing `first`: subsets of the rest, largest first (fewer, larger instances).
  std::vector<Mask> subsets;
  if (v.family == kMig) {
    subsets.push_back(0);
  } else {
    for (Mask s = rest;; s = (s - 1) & rest) {
      subsets.push_back(s);
      if (s == 0) break;
    }
    std::stable_sort(subsets.begin(), subsets.end(),
                     [](Mask a, Mask b) { return popcount(a) > popcount(b); });
  }
  for (const Mask s : subsets) {
    const Mask block = s | (Mask{1} << first);
    if (v.replicas > 0 && popcount(block) > v.replicas) continue;
    for (std::size_t k = 0; k < m.mig.size(); ++k) {
      const int grown = m.next[static_cast<std::size_t>(layout)][k];
      if (grown < 0) {
        layout_full_ = true;
        continue;
      }
      const UnitKey key{block, model, m.mig[k], mode_of(v), unit_replicas(v, block)};
      const UnitInfo& info = unit(key);
      if (info.verdict == Verdict::pruned || info.verdict == Verdict::infeasible) {
        // Keep the most telling failure: of the largest instance, a simulated one first.
        const int rank = m.profile->mig_profiles[static_cast<std::size_t>(m.mig[k])].sms * 2 +
                         (info.verdict == Verdict::infeasible ? 1 : 0);
        if (rank > reason_rank_) {
          reason_rank_ = rank;
          simulated_failure_ = info.verdict == Verdict::infeasible;
          reason = std::string(kFamilyNames[v.family]) + " " + device_label(key) + "{" +
                   join_names(scenario_.tenants, block) + "}: " + info.reason;
        }
        continue;
      }
      if (info.verdict == Verdict::unknown && !optimistic) continue;
      blocks.push_back({block, m.mig[k]});
      const std::size_t pending_size = pending.size();
      if (info.verdict == Verdict::unknown) pending.push_back(key);
      if (search_mig(remaining & ~block, grown, model, v, optimistic, blocks, pending, reason,
                     failed)) {
        return true;
      }
      blocks.pop_back();
      pending.resize(pending_size);
    }
  }
  failed.insert({remaining, layout});
  return false;
}

std::pair<double, bool> Planner::group_cost(Mask group, const std::vector<bool>& families) {
  const std::vector<Variant> vs = variants(group, families);
  for (std::size_t m = 0; m < models_.size(); ++m) {
    bool unknown = false;
    for (const Variant& v : vs) {
      const GroupState& s = group_state(group, static_cast<int>(m), v);
      if (s.status == GroupState::feasible) return {models_[m].spec.cost_per_hour, true};
      if (s.status == GroupState::unknown) unknown = true;
    }
    if (unknown) return {models_[m].spec.cost_per_hour, false};
  }
  return {kInf, true};
}

double Planner::config_ratio(const Config& c) {
  double worst = 0;
  for (const Block& b : c.blocks) {
    worst = std::max(worst, unit({b.tenants, c.model, b.profile, mode_of(c.variant),
                                  unit_replicas(c.variant, b.tenants)})
                                .worst_ratio);
  }
  return worst;
}

std::optional<std::pair<int, Config>> Planner::group_choice(Mask group,
                                                            const std::vector<bool>& families,
                                                            bool best_headroom) {
  const std::vector<Variant> vs = variants(group, families);
  for (std::size_t m = 0; m < models_.size(); ++m) {
    std::optional<Config> best;
    double best_ratio = kInf;
    for (const Variant& v : vs) {
      GroupState* s = &group_state(group, static_cast<int>(m), v);
      if (best_headroom) {
        // Refinement: decide this variant too (simulate its candidates) to compare headroom.
        while (s->status == GroupState::unknown) {
          simulate_units(s->pending);
          s = &group_state(group, static_cast<int>(m), v);
        }
      }
      if (s->status != GroupState::feasible) continue;
      const double ratio = config_ratio(s->config);
      if (!best || ratio < best_ratio) {
        best = s->config;
        best_ratio = ratio;
      }
      if (!best_headroom) break;
    }
    if (best) return std::pair{static_cast<int>(m), *best};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Partitions

Planner::Partition Planner::cheapest_partition(const std::vector<double>& cost) const {
  const Mask full = (Mask{1} << n_) - 1;
  const std::size_t size = std::size_t{1} << n_;
  const int kmax = std::min(plan_.max_gpus, n_);
  // f[k][mask]: cheapest way to place `mask` on exactly k GPUs; choice for reconstruction.
  std::vector<std::vector<double>> f(static_cast<std::size_t>(kmax) + 1,
                                     std::vector<double>(size, kInf));
  std::vector<std::vector<Mask>> choice(static_cast<std::size_t>(kmax) + 1,
                                        std::vector<Mask>(size, 0));
  f[0][0] = 0;
  for (int k = 1; k <= kmax; ++k) {
    for (Mask mask = 1; mask <= full; ++mask) {
      const Mask low = mask & (~mask + 1);
      const Mask rest = mask & ~low;
      double best = kInf;
      Mask pick = 0;
      for (Mask s = rest;; s = (s - 1) & rest) {
        const Mask g = s | low;
        const double c = cost[g] + f[static_cast<std::size_t>(k) - 1][mask & ~g];
        if (c < best) {
          best = c;
          pick = g;
        }
        if (s == 0) break;
      }
      f[static_cast<std::size_t>(k)][mask] = best;
      choice[static_cast<std::size_t>(k)][mask] = pick;
    }
  }
  Partition p;
  int best_k = -1;
  for (int k = 1; k <= kmax; ++k) {
    // Fewer GPUs win ties (cost equal only when prices make it so).
    if (f[static_cast<std::size_t>(k)][full] < p.cost - 1e-9) {
      p.cost = f[static_cast<std::size_t>(k)][full];
      best_k = k;
    }
  }
  if (best_k < 0) return p;
  Mask mask = full;
  for (int k = best_k; k > 0; --k) {
    const Mask g = choice[static_cast<std::size_t>(k)][mask];
    p.groups.push_back(g);
    mask &= ~g;
  }
  return p;
}

std::optional<Planner::Partition> Planner::solve(const std::vector<bool>& families,
                                                 std::vector<Mask>* first, bool drive) {
  const std::size_t size = std::size_t{1} << n_;
  for (;;) {
    ++stats_.dp_rounds;
    std::vector<double> cost(size, kInf);
    std::vector<bool> proven(size, false);
    for (Mask g = 1; g < size; ++g) {
      const auto [c, known] = group_cost(g, families);
      cost[g] = c;
      proven[g] = known;
    }
    const Partition p = cheapest_partition(cost);
    if (first != nullptr && first->empty()) *first = p.groups;
    if (!(p.cost < kInf)) return std::nullopt;
    std::vector<UnitKey> batch;
    for (const Mask g : p.groups) {
      if (proven[g]) continue;
      // The cheapest model where the group may still work: its first open variant.
      const std::vector<Variant> vs = variants(g, families);
      bool taken = false;
      for (std::size_t m = 0; m < models_.size() && !taken; ++m) {
        for (const Variant& v : vs) {
          const GroupState& s = group_state(g, static_cast<int>(m), v);
          if (s.status != GroupState::unknown) continue;
          for (const UnitKey& u : s.pending) {
            if (std::find(batch.begin(), batch.end(), u) == batch.end()) batch.push_back(u);
          }
          taken = true;
          break;
        }
      }
    }
    if (batch.empty()) return p;
    if (!drive) return p;
    // Fill idle workers with the next open variants of the same groups (speculative).
    for (const Mask g : p.groups) {
      if (static_cast<int>(batch.size()) >= jobs_) break;
      if (proven[g]) continue;
      for (const Variant& v : variants(g, families)) {
        const GroupState& s = group_state(g, 0, v);
        if (s.status != GroupState::unknown) continue;
        for (const UnitKey& u : s.pending) {
          if (static_cast<int>(batch.size()) < jobs_ &&
              std::find(batch.begin(), batch.end(), u) == batch.end()) {
            batch.push_back(u);
          }
        }
      }
    }
    simulate_units(batch);
  }
}

double Planner::count_configs(Mask group, int model, const Variant& v, bool surviving) {
  if (!is_mig(v)) {
    if (!surviving) return 1;
    const UnitInfo& info = unit({group, model, -1, mode_of(v), unit_replicas(v, group)});
    return info.verdict == Verdict::pruned ? 0 : 1;
  }
  // Assignments of blocks to instances whose layout fits: recursion over (remaining, layout).
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  std::map<std::pair<Mask, int>, double> memo;
  std::function<double(Mask, int)> count = [&](Mask remaining, int layout) -> double {
    if (remaining == 0) return 1;
    const auto key = std::pair{remaining, layout};
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    const int f = lowest(remaining);
    const Mask rest = remaining & ~(Mask{1} << f);
    double total = 0;
    for (Mask s = rest;; s = (s - 1) & rest) {
      const Mask block = s | (Mask{1} << f);
      const bool ok_size = (v.family != kMig || s == 0) &&
                           (v.replicas == 0 || popcount(block) <= v.replicas);
      if (ok_size) {
        for (std::size_t k = 0; k < m.mig.size(); ++k) {
          const int grown = m.next[static_cast<std::size_t>(layout)][k];
          if (grown < 0) continue;
          if (surviving && unit({block, model, m.mig[k], mode_of(v), unit_replicas(v, block)})
                                   .verdict == Verdict::pruned) {
            continue;
          }
          total += count(remaining & ~block, grown);
        }
      }
      if (s == 0) break;
    }
    memo[key] = total;
    return total;
  };
  return count(group, 0);
}

double Planner::count_setups(bool surviving) {
  std::vector<bool> families(kFamilies, false);
  for (int f = 0; f < kFamilies; ++f) families[static_cast<std::size_t>(f)] = allowed_[f];
  const std::size_t size = std::size_t{1} << n_;
  std::vector<double> c(size, 0);
  for (Mask g = 1; g < size; ++g) {
    for (std::size_t m = 0; m < models_.size(); ++m) {
      for (const Variant& v : variants(g, families)) {
        c[g] += count_configs(g, static_cast<int>(m), v, surviving);
      }
    }
  }
  const Mask full = (Mask{1} << n_) - 1;
  const int kmax = std::min(plan_.max_gpus, n_);
  std::vector<double> prev(size, 0), cur(size, 0);
  prev[0] = 1;
  double total = 0;
  for (int k = 1; k <= kmax; ++k) {
    std::fill(cur.begin(), cur.end(), 0.0);
    for (Mask mask = 1; mask <= full; ++mask) {
      const Mask low = mask & (~mask + 1);
      const Mask rest = mask & ~low;
      double sum = 0;
      for (Mask s = rest;; s = (s - 1) & rest) {
        const Mask g = s | low;
        if (c[g] > 0 && prev[mask & ~g] > 0) sum += c[g] * prev[mask & ~g];
        if (s == 0) break;
      }
      cur[mask] = sum;
    }
    total += cur[full];
    std::swap(prev, cur);
  }
  return total;
}

PlanSetup Planner::make_setup(const std::string& label, const Partition& p,
                              const std::vector<bool>& families, bool refine) {
  PlanSetup setup;
  setup.label = label;
  setup.feasible = true;
  setup.tenants = n_;
  Scenario& s = setup.scenario;
  s.name = scenario_.name;
  s.description = scenario_.description;
  s.seed = scenario_.seed;
  s.duration = scenario_.duration;
  s.warmup = scenario_.warmup;
  s.output = scenario_.output;
  s.faults = scenario_.faults;
  s.source_file = scenario_.source_file;
  s.tenants = scenario_.tenants;
  std::vector<Mask> groups = p.groups;
  std::sort(groups.begin(), groups.end(), [](Mask a, Mask b) { return lowest(a) < lowest(b); });
  for (const Mask g : groups) {
    auto choice = group_choice(g, families, refine);
    if (!choice) {
      setup.feasible = false;
      continue;
    }
    const Config& c = choice->second;
    const ModelInfo& model = models_[static_cast<std::size_t>(c.model)];
    PlanGpu gpu;
    gpu.model = model.profile->name;
    gpu.cost_per_hour = model.spec.cost_per_hour;
    gpu.family = kFamilyNames[c.variant.family];
    const Scenario one = unit_scenario(c);
    gpu.replicas = one.gpus.front().sharing.replicas;
    gpu.mig = one.gpus.front().mig;
    const std::string name = "gpu" + std::to_string(s.gpus.size());
    for (const Block& b : c.blocks) {
      std::vector<int> members;
      for (int t = 0; t < n_; ++t) {
        if (b.tenants >> t & 1u) members.push_back(t);
      }
      gpu.blocks.push_back(members);
      const UnitInfo& info = unit({b.tenants, c.model, b.profile, mode_of(c.variant),
                                   unit_replicas(c.variant, b.tenants)});
      for (const PlanTenantOutcome& o : info.outcomes) setup.outcomes.push_back(o);
      setup.worst_ratio = std::max(setup.worst_ratio, info.worst_ratio);
    }
    GpuSpec spec = one.gpus.front();
    spec.name = name;
    spec.where.key_path = "gpus." + std::to_string(s.gpus.size());
    for (std::size_t b = 0; b < c.blocks.size(); ++b) {
      for (int t = 0; t < n_; ++t) {
        if (!(c.blocks[b].tenants >> t & 1u)) continue;
        TenantSpec& tenant = s.tenants[static_cast<std::size_t>(t)];
        tenant.device = gpu.mig.empty() ? name : name + "/" + std::to_string(b);
        tenant.devices = {tenant.device};
        tenant.gpus = 1;
        const bool alone = c.blocks[b].tenants == (Mask{1} << t);
        const Mode mode = mode_of(c.variant);
        if (alone || (mode == Mode::mps && c.variant.replicas > 0)) ++setup.memory_isolated;
        if (alone || mode != Mode::mps) ++setup.fault_isolated;
      }
    }
    for (PlanTenantOutcome& o : setup.outcomes) {
      for (const TenantSpec& t : s.tenants) {
        if (t.name == o.name) o.device = t.device;
      }
    }
    s.gpus.push_back(spec);
    setup.cost_per_hour += gpu.cost_per_hour;
    setup.gpus.push_back(gpu);
  }
  // Outcomes in the scenario's tenant order.
  std::vector<PlanTenantOutcome> ordered;
  for (const TenantSpec& t : scenario_.tenants) {
    for (const PlanTenantOutcome& o : setup.outcomes) {
      if (o.name == t.name) ordered.push_back(o);
    }
  }
  setup.outcomes = ordered;
  return setup;
}

// ---------------------------------------------------------------------------------------------
// Brute force (tests): every configuration of every group simulated as a whole GPU.

void Planner::enumerate_configs(Mask group, int model, const Variant& v, std::vector<Config>& out) {
  if (!is_mig(v)) {
    out.push_back(Config{model, v, {{group, -1}}});
    return;
  }
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  std::vector<Block> blocks;
  std::function<void(Mask, int)> rec = [&](Mask remaining, int layout) {
    if (remaining == 0) {
      out.push_back(Config{model, v, blocks});
      return;
    }
    const int f = lowest(remaining);
    const Mask rest = remaining & ~(Mask{1} << f);
    for (Mask s = rest;; s = (s - 1) & rest) {
      const Mask block = s | (Mask{1} << f);
      if ((v.family != kMig || s == 0) && (v.replicas == 0 || popcount(block) <= v.replicas)) {
        for (std::size_t k = 0; k < m.mig.size(); ++k) {
          const int grown = m.next[static_cast<std::size_t>(layout)][k];
          if (grown < 0) continue;
          blocks.push_back({block, m.mig[k]});
          rec(remaining & ~block, grown);
          blocks.pop_back();
        }
      }
      if (s == 0) break;
    }
  };
  rec(group, 0);
}

bool Planner::config_feasible_whole(const Config& c) {
  // Isolation and sustainability are part of the definition of feasible (not bounds): checked
  // per block analytically, then the whole GPU is simulated.
  for (const Block& b : c.blocks) {
    if (constraint_violation({b.tenants, c.model, b.profile, mode_of(c.variant),
                              unit_replicas(c.variant, b.tenants)})) {
      return false;
    }
  }
  ++stats_.simulations;
  try {
    RunOptions run;
    run.record_requests = false;
    const RunResult r = simulate(resolve_scenario(unit_scenario(c)), run);
    Mask all = 0;
    for (const Block& b : c.blocks) all |= b.tenants;
    double worst = 0;
    std::string reason;
    judge(numbers_of(r), all, worst, reason);
    return reason.empty();
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<Planner::Partition> Planner::solve_exhaustive(const std::vector<bool>& families) {
  const std::size_t size = std::size_t{1} << n_;
  std::vector<double> cost(size, kInf);
  for (Mask g = 1; g < size; ++g) {
    for (std::size_t m = 0; m < models_.size() && !(cost[g] < kInf); ++m) {
      for (const Variant& v : variants(g, families)) {
        std::vector<Config> configs;
        enumerate_configs(g, static_cast<int>(m), v, configs);
        bool feasible = false;
        for (const Config& c : configs) {
          // Every configuration is simulated (no early exit): brute force.
          feasible = config_feasible_whole(c) || feasible;
        }
        if (feasible) cost[g] = std::min(cost[g], models_[m].spec.cost_per_hour);
      }
    }
  }
  const Partition p = cheapest_partition(cost);
  if (!(p.cost < kInf)) return std::nullopt;
  return p;
}

PlanResult Planner::run() {
  const auto start = std::chrono::steady_clock::now();
  PlanResult result;
  result.scenario_name = scenario_.name;
  result.currency = plan_.gpus.front().currency;
  result.headroom = plan_.headroom;
  result.max_gpus = plan_.max_gpus;
  result.strategies = plan_.strategies;
  stats_.jobs = jobs_;
  std::vector<bool> all(kFamilies, false);
  for (int f = 0; f < kFamilies; ++f) all[static_cast<std::size_t>(f)] = allowed_[f];

  if (options_.exhaustive) {
    const auto p = solve_exhaustive(all);
    PlanSetup setup;
    setup.label = "best";
    if (p) {
      setup.feasible = true;
      setup.cost_per_hour = p->cost;
      for (const Mask g : p->groups) {
        PlanGpu gpu;
        for (int t = 0; t < n_; ++t) {
          if (g >> t & 1u) gpu.blocks.push_back({t});
        }
        setup.gpus.push_back(gpu);
      }
    } else {
      setup.reason = "no feasible setup";
    }
    result.ranked.push_back(setup);
    stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.stats = stats_;
    return result;
  }

  stats_.setups = count_setups(false);
  stats_.setups_surviving = count_setups(true);

  std::vector<Mask> best_first;
  const auto best = solve(all, &best_first, true);
  if (best) {
    result.ranked.push_back(make_setup("best", *best, all, options_.refine));
  } else {
    PlanSetup none;
    none.label = "best";
    // Name the tenants that cannot meet their SLO even alone on the largest GPU.
    for (int t = 0; t < n_; ++t) {
      const Mask g = Mask{1} << t;
      if (group_cost(g, all).first < kInf) continue;
      const GroupState& s = group_state(g, static_cast<int>(models_.size()) - 1, {kDedicated, 0});
      if (!none.reason.empty()) none.reason += "; ";
      none.reason += "alone on " + models_.back().profile->name + ": " + s.reason;
    }
    if (none.reason.empty()) {
      none.reason = fmt::format("no setup within {} GPUs meets every SLO", plan_.max_gpus);
    }
    result.ranked.push_back(none);
  }

  // The cheapest setup of each family (a group of one is always a dedicated GPU).
  for (int f = 0; f < kFamilies; ++f) {
    if (!allowed_[f]) continue;
    std::vector<bool> only(kFamilies, false);
    only[static_cast<std::size_t>(f)] = true;
    std::vector<Mask> first;
    const auto p = solve(only, &first, true);
    PlanSetup setup;
    if (p) {
      setup = make_setup(kFamilyNames[f], *p, only, false);
    } else {
      setup.label = kFamilyNames[f];
      setup.tenants = n_;
    }
    // Why cheaper setups of this family failed: the groups of its first (optimistic) partition
    // that turned out infeasible, with the failure of each.
    const double best_cost = result.found() ? result.ranked.front().cost_per_hour : kInf;
    if (!p || p->cost > best_cost + 1e-9) {
      std::vector<Mask> probe = first;
      if (result.found() && f != kDedicated) {
        // With the winner's packing, what goes wrong in this family?
        probe.clear();
        for (const PlanGpu& g : result.ranked.front().gpus) {
          Mask m = 0;
          for (const auto& b : g.blocks) {
            for (int t : b) m |= Mask{1} << t;
          }
          probe.push_back(m);
        }
      }
      for (const Mask g : probe) {
        if (popcount(g) < 2) continue;
        for (std::size_t m = 0; m < models_.size(); ++m) {
          std::string why;
          bool open = false;
          for (const Variant& v : variants(g, only)) {
            GroupState* s = &group_state(g, static_cast<int>(m), v);
            while (s->status == GroupState::unknown) {  // decide it: the reason must be real
              simulate_units(s->pending);
              s = &group_state(g, static_cast<int>(m), v);
            }
            if (s->status == GroupState::feasible) open = true;
            if (s->status == GroupState::infeasible && why.empty()) why = s->reason;
          }
          if (!open && !why.empty()) {
            if (!setup.reason.empty()) setup.reason += "; ";
            if (why.rfind(kFamilyNames[f], 0) != 0) {
              why = std::string(kFamilyNames[f]) + " {" + join_names(scenario_.tenants, g) +
                    "}: " + why;
            }
            setup.reason += why;
            break;
          }
        }
      }
      if (!p && setup.reason.empty()) {
        setup.reason = fmt::format("no setup within {} GPUs", plan_.max_gpus);
      }
    }
    result.ranked.push_back(setup);
  }
  // Rank: feasible setups by cost, then worst SLO ratio; infeasible families last.
  std::stable_sort(result.ranked.begin() + 1, result.ranked.end(),
                   [](const PlanSetup& a, const PlanSetup& b) {
                     if (a.feasible != b.feasible) return a.feasible;
                     if (!a.feasible) return false;
                     if (std::abs(a.cost_per_hour - b.cost_per_hour) > 1e-9) {
                       return a.cost_per_hour < b.cost_per_hour;
                     }
                     return a.worst_ratio < b.worst_ratio;
                   });

  if (result.found()) {
    PlanSetup& winner = result.ranked.front();
    result.best_yaml = emit_scenario_yaml(winner.scenario);
    if (options_.verify) {
      RunOptions run;
      run.record_requests = false;
      result.best_run = simulate(resolve_scenario(winner.scenario), run);
      Mask all_tenants = (Mask{1} << n_) - 1;
      double worst = 0;
      std::string reason;
      std::vector<PlanTenantOutcome> outcomes =
          judge(numbers_of(*result.best_run), all_tenants, worst, reason);
      winner.outcomes = outcomes;
      winner.worst_ratio = worst;
      if (!reason.empty()) {
        winner.reason = "verification run differs from the per-GPU runs: " + reason;
      }
    }
  }
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats = stats_;
  return result;
}

}  // namespace

std::string PlanGpu::describe(const std::vector<TenantSpec>& tenants) const {
  std::string out = model + " " + family;
  if (replicas > 0 && family.find("mps") != std::string::npos) out += fmt::format(" (replicas {})", replicas);
  out += " ";
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b) out += '+';
    if (!mig.empty()) out += mig[b];
    out += '{';
    for (std::size_t i = 0; i < blocks[b].size(); ++i) {
      if (i) out += ',';
      out += tenants[static_cast<std::size_t>(blocks[b][i])].name;
    }
    out += '}';
  }
  return out;
}

PlanResult plan_scenario(const Scenario& scenario, const PlanOptions& options) {
  if (!scenario.plan) {
    throw InputError(SourceLocation{scenario.source_file, 0, 0, "plan"},
                     "no search space: add `plan: {gpus: [{model: h100-sxm-80gb, cost_per_hour: "
                     "4.0}], max_gpus: 8}` or give --gpus MODEL=PRICE");
  }
  if (scenario.plan->gpus.empty()) {
    throw InputError(scenario.plan->where, "plan.gpus: no GPU model to buy");
  }
  Planner planner(scenario, options);
  return planner.run();
}

std::string plan_table(const PlanResult& r) {
  std::string out;
  const Scenario* s = r.ranked.empty() ? nullptr : &r.ranked.front().scenario;
  std::vector<TenantSpec> tenants;
  for (const PlanSetup& setup : r.ranked) {
    if (!setup.scenario.tenants.empty()) {
      tenants = setup.scenario.tenants;
      break;
    }
  }
  (void)s;
  out += fmt::format("plan: {}  {} tenant(s), up to {} GPU(s), headroom {:.0f} %\n",
                     r.scenario_name, tenants.size(), r.max_gpus, r.headroom * 100);
  out += fmt::format("{:<4} {:<17} {:>12} {:>4} {:>9} {:>9} {:>9}  {}\n", "rank", "setup",
                     "cost/h", "GPUs", "worst SLO", "mem iso", "fault iso", "configuration");
  int rank = 0;
  for (const PlanSetup& setup : r.ranked) {
    if (!setup.feasible) {
      out += fmt::format("{:<4} {:<17} {:>12} {:>4} {:>9} {:>9} {:>9}  {}\n", "-", setup.label,
                         "-", "-", "-", "-", "-",
                         setup.reason.empty() ? std::string("no feasible setup") : setup.reason);
      continue;
    }
    std::string config;
    for (std::size_t g = 0; g < setup.gpus.size(); ++g) {
      if (g) config += "; ";
      config += fmt::format("gpu{} {}", g, setup.gpus[g].describe(setup.scenario.tenants));
    }
    out += fmt::format("{:<4} {:<17} {:>8.2f} {:<3} {:>4} {:>9.2f} {:>9} {:>9}  {}\n", ++rank,
                       setup.label, setup.cost_per_hour, r.currency, setup.gpus.size(),
                       setup.worst_ratio,
                       fmt::format("{}/{}", setup.memory_isolated, setup.tenants),
                       fmt::format("{}/{}", setup.fault_isolated, setup.tenants), config);
    if (!setup.reason.empty()) out += fmt::format("{:<4} {:<17} cheaper failed: {}\n", "", "", setup.reason);
  }
  if (r.found()) {
    const PlanSetup& best = r.ranked.front();
    out += fmt::format("\nbest: {:.2f} {}/h on {} GPU(s); headroom {:.0f} % (worst SLO ratio "
                       "{:.2f})\n",
                       best.cost_per_hour, r.currency, best.gpus.size(),
                       (1.0 - best.worst_ratio) * 100, best.worst_ratio);
    out += fmt::format("  {:<20} {:<10} {:>9}  {}\n", "tenant", "device", "SLO ratio",
                       "closest target");
    for (const PlanTenantOutcome& o : best.outcomes) {
      out += fmt::format("  {:<20} {:<10} {:>9}  {}\n", o.name, o.device,
                         o.worst_ratio > 0 ? fmt::format("{:.2f}", o.worst_ratio) : "-",
                         o.met ? (o.worst.empty() ? std::string("best effort") : o.worst)
                               : o.reason);
    }
  }
  const PlanStats& st = r.stats;
  out += fmt::format(
      "\nsearch: {:.4g} setups in the space, {:.4g} left after the bounds ({:.2f} % pruned); "
      "{} units ({} pruned), {} simulations on {} worker(s), {} DP rounds, {:.2f} s\n",
      st.setups, st.setups_surviving,
      st.setups > 0 ? 100.0 * (1.0 - st.setups_surviving / st.setups) : 0.0, st.units,
      st.units_pruned, st.simulations, st.jobs, st.dp_rounds, st.wall_s);
  return out;
}

nlohmann::ordered_json plan_json(const PlanResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario_name;
  j["currency"] = r.currency;
  j["headroom"] = r.headroom;
  j["max_gpus"] = r.max_gpus;
  j["strategies"] = r.strategies;
  j["found"] = r.found();
  nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
  for (const PlanSetup& s : r.ranked) {
    nlohmann::ordered_json e;
    e["setup"] = s.label;
    e["feasible"] = s.feasible;
    if (s.feasible) {
      e["cost_per_hour"] = s.cost_per_hour;
      e["gpus"] = s.gpus.size();
      e["worst_slo_ratio"] = s.worst_ratio;
      e["memory_isolated"] = s.memory_isolated;
      e["fault_isolated"] = s.fault_isolated;
      nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
      for (std::size_t g = 0; g < s.gpus.size(); ++g) {
        const PlanGpu& gpu = s.gpus[g];
        nlohmann::ordered_json jg;
        jg["name"] = "gpu" + std::to_string(g);
        jg["model"] = gpu.model;
        jg["family"] = gpu.family;
        jg["cost_per_hour"] = gpu.cost_per_hour;
        jg["replicas"] = gpu.replicas;
        jg["mig"] = gpu.mig;
        nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
        for (const auto& b : gpu.blocks) {
          nlohmann::ordered_json names = nlohmann::ordered_json::array();
          for (int t : b) names.push_back(s.scenario.tenants[static_cast<std::size_t>(t)].name);
          blocks.push_back(names);
        }
        jg["tenants"] = blocks;
        jg["describe"] = gpu.describe(s.scenario.tenants);
        gpus.push_back(jg);
      }
      e["configuration"] = gpus;
      nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
      for (const PlanTenantOutcome& o : s.outcomes) {
        tenants.push_back({{"tenant", o.name},
                           {"device", o.device},
                           {"met", o.met},
                           {"worst_slo_ratio", o.worst_ratio},
                           {"closest", o.worst},
                           {"reason", o.reason}});
      }
      e["tenants"] = tenants;
    }
    e["reason"] = s.reason;
    ranked.push_back(e);
  }
  j["ranked"] = ranked;
  const PlanStats& st = r.stats;
  j["search"] = {{"setups", st.setups},
                 {"setups_after_bounds", st.setups_surviving},
                 {"pruned_fraction", st.setups > 0 ? 1.0 - st.setups_surviving / st.setups : 0.0},
                 {"units", st.units},
                 {"units_pruned", st.units_pruned},
                 {"simulations", st.simulations},
                 {"dp_rounds", st.dp_rounds},
                 {"jobs", st.jobs},
                 {"wall_s", st.wall_s}};
  if (r.found()) j["best_yaml"] = r.best_yaml;
  return j;
}

}  // namespace gpumux
